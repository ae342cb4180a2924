//! `battlelab equilibrium FILE`: solve a field battle as a zero-sum game at every grid
//! point and say what each side should play.
//!
//! Why this command exists: the tactical matrix (docs/systems/field.md) makes each round a
//! simultaneous choice, so a designer asking "is Charge too strong?" needs the game's
//! optimal mixes, not one more fixed-policy run. The solver is
//! `battlelab_core::systems::field::game` (backward induction, a linear program per state);
//! this file validates the input, runs it per variant × grid point on the worker pool, and
//! prints or writes the results. Where a game is too large (`MAX_GAME_STATES`) the point
//! is solved as the one-round game at the start and marked `exact: false`.
//!
//! The payoff is the file's `[equilibrium] payoff` or `--payoff`: `sp`, or a set of the
//! report's own outcomes (`win` = B loses, "smaller loses", "A wins", …), read per grid
//! point; every output says which side maximises it. Each side chooses among its
//! `allowed_tactics`.

use std::path::Path;

use anyhow::{bail, Result};
use polars::prelude::*;
use rayon::prelude::*;
use serde_json::{json, Map, Value};

use battlelab::analysis::{AxisValue, SYSTEMS};
use battlelab::report::{self, ReportError};
use battlelab::sim::Interrupted;
use battlelab::systems::field::FieldStudy;
use battlelab_core::systems::field::battle::TACTIC_NAMES;
use battlelab_core::systems::field::game::{
    self, Equilibrium, GameError, PayoffSpec, MAX_GAME_STATES,
};

use super::{emit, note, pool, usage, writing_report};
use crate::cli::{EquilibriumArgs, Format};

/// One variant × grid point, solved.
struct Point {
    variant: usize,
    coordinates: Vec<AxisValue>,
    result: Equilibrium,
}

/// Everything the outputs are made from.
struct Solved<'a> {
    analysis: &'a FieldStudy,
    /// The analysis file as written (copied into the report).
    text: &'a str,
    payoff: PayoffSpec,
    points: Vec<Point>,
}

const SIDES: [&str; 2] = ["a", "b"];

pub fn equilibrium(args: EquilibriumArgs) -> Result<()> {
    let text = battlelab::toml_input::read_analysis_file(&args.file)?;
    #[derive(serde::Deserialize)]
    struct SystemOnly {
        system: Option<String>,
    }
    let system = toml::from_str::<SystemOnly>(&text)
        .ok()
        .and_then(|s| s.system);
    if let Some(system) = system.filter(|s| s != "field" && SYSTEMS.contains(&s.as_str())) {
        bail!(usage(format!(
            "{}: system \"{system}\" has no simultaneous tactic choice to solve; battlelab equilibrium is for field battles (system = \"field\", docs/systems/field.md)",
            args.file.display()
        )));
    }
    let analysis = FieldStudy::parse(&args.file, &text)?;
    if let Some(out) = &args.out {
        // Before any work, and never over the analysis itself.
        battlelab::output::check_target(
            out,
            &[&args.file],
            &battlelab::output::Identity::new("equilibrium", &analysis.header.name),
            args.replace,
        )?;
    }
    let payoff = args
        .payoff
        .clone()
        .unwrap_or_else(|| analysis.payoff.clone());
    let (pool, _) = pool(args.threads)?;
    let solved: Vec<Result<Equilibrium, GameError>> = pool.install(|| {
        analysis
            .runs
            .par_iter()
            .map(|run| {
                game::equilibrium(
                    &run.field,
                    &run.prepared,
                    payoff.resolve(&run.prepared.start),
                    MAX_GAME_STATES,
                )
            })
            .collect()
    });
    let mut points = Vec::with_capacity(solved.len());
    for (run, result) in analysis.runs.iter().zip(solved) {
        let result = result.map_err(|_| Interrupted)?;
        points.push(Point {
            variant: run.variant,
            coordinates: run.coordinates.clone(),
            result,
        });
    }
    battlelab::interrupt::check()?;
    let solved = Solved {
        analysis: &analysis,
        text: &text,
        payoff,
        points,
    };
    if let Some(out) = &args.out {
        let files = writing_report(out, || Ok(write_report(&solved, out)?))?;
        if !args.quiet {
            note(&format!("wrote {} ({} files)", out.display(), files.len()));
        }
    }
    emit(&match args.format {
        Format::Text => text_output(&solved),
        Format::Csv => csv_text(&solved)?,
        Format::Json => serde_json::to_string_pretty(&to_json(&solved)).expect("JSON") + "\n",
        Format::Md => markdown(&solved),
    })
}

fn names(tactics: &[usize]) -> Vec<&'static str> {
    tactics.iter().map(|&t| TACTIC_NAMES[t]).collect()
}

fn axis_json(value: &AxisValue) -> Value {
    match value {
        AxisValue::Int(v) => json!(v),
        AxisValue::Unset => Value::Null,
        other => json!(other.to_string()),
    }
}

fn per_tactic<T: serde::Serialize>(values: &[T; 7]) -> Value {
    Value::Object(
        TACTIC_NAMES
            .iter()
            .zip(values)
            .map(|(t, v)| (t.to_string(), json!(v)))
            .collect(),
    )
}

fn to_json(s: &Solved) -> Value {
    let points: Vec<Value> = s
        .points
        .iter()
        .map(|p| {
            let mut run = Map::new();
            for (axis, value) in s.analysis.axes.iter().zip(&p.coordinates) {
                run.insert(axis.parameter.clone(), axis_json(value));
            }
            run.insert("variant".into(), json!(s.analysis.variants[p.variant].name));
            let e = &p.result;
            json!({
                "run": run,
                "value": e.value,
                "of": e.payoff.describe(),
                "maximiser": SIDES[e.payoff.maximiser()],
                "a": per_tactic(&e.mix[0]),
                "b": per_tactic(&e.mix[1]),
                "allowed": {"a": e.allowed[0], "b": e.allowed[1]},
                "dominated": {"a": names(&e.dominated[0]), "b": names(&e.dominated[1])},
                "never_played": {"a": names(&e.never_played[0]), "b": names(&e.never_played[1])},
                "shortfall": {"a": per_tactic(&e.shortfall[0]), "b": per_tactic(&e.shortfall[1])},
                "exact": e.exact,
            })
        })
        .collect();
    json!({"payoff": s.payoff, "points": points})
}

/// `odds = 3:2, variant = base`.
fn point_label(s: &Solved, p: &Point) -> String {
    let mut parts: Vec<String> = s
        .analysis
        .axes
        .iter()
        .zip(&p.coordinates)
        .map(|(a, v)| format!("{} = {v}", a.parameter))
        .collect();
    if s.analysis.variants.len() > 1 || parts.is_empty() {
        parts.push(format!("variant = {}", s.analysis.variants[p.variant].name));
    }
    parts.join(", ")
}

/// `P(A wins or B withdraws) = 0.250000, A maximising it, B minimising`.
fn value_line(e: &Equilibrium) -> String {
    let maximiser = e.payoff.maximiser();
    format!(
        "{} = {:.6}, {} maximising it, {} minimising",
        e.payoff.describe(),
        e.value,
        ["A", "B"][maximiser],
        ["A", "B"][1 - maximiser]
    )
}

/// What the payoff's name means, for the header.
fn payoff_meaning(payoff: &PayoffSpec) -> &'static str {
    if payoff.is_sp() {
        "B's SP lost minus A's, A maximising"
    } else {
        "the chance of these outcomes of the report, the side they are bad for minimising it; a side loses when broken or withdrawing alone"
    }
}

fn four(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.4}"))
}

/// A side's mix entry: "–" for a tactic it may not choose.
fn plays(e: &Equilibrium, side: usize, tactic: usize) -> Option<f64> {
    e.allowed[side]
        .contains(tactic)
        .then_some(e.mix[side][tactic])
}

fn how(e: &Equilibrium) -> String {
    if e.exact {
        format!("exact: the whole battle, {} reachable states", e.states)
    } else {
        format!(
            "NOT exact: the game has more than {MAX_GAME_STATES} state slots, so this is the one-round game at the start"
        )
    }
}

fn list(tactics: &[usize]) -> String {
    if tactics.is_empty() {
        "none".into()
    } else {
        names(tactics).join(", ")
    }
}

fn limited(e: &Equilibrium, side: usize) -> String {
    if e.allowed[side].is_all() {
        String::new()
    } else {
        format!("; may choose only {}", e.allowed[side].names().join(", "))
    }
}

fn text_output(s: &Solved) -> String {
    let mut t = format!(
        "equilibrium of {}: payoff {} ({})\n",
        s.analysis.header.path.display(),
        s.payoff.name(),
        payoff_meaning(&s.payoff)
    );
    for p in &s.points {
        let e = &p.result;
        t += &format!(
            "\n{}\n  {}\n  ({})\n",
            point_label(s, p),
            value_line(e),
            how(e)
        );
        t += &format!(
            "  {:<10} {:>8} {:>11} {:>8} {:>11}\n",
            "tactic", "A plays", "A shortfall", "B plays", "B shortfall"
        );
        for (k, name) in TACTIC_NAMES.iter().enumerate() {
            t += &format!(
                "  {:<10} {:>8} {:>11} {:>8} {:>11}\n",
                name,
                four(plays(e, 0, k)),
                four(e.shortfall[0][k]),
                four(plays(e, 1, k)),
                four(e.shortfall[1][k])
            );
        }
        for (side, label) in ["A", "B"].iter().enumerate() {
            t += &format!(
                "  {label}: dominated at the start: {}; never played: {}{}\n",
                list(&e.dominated[side]),
                list(&e.never_played[side]),
                limited(e, side)
            );
        }
    }
    t
}

fn markdown(s: &Solved) -> String {
    let mut t = format!(
        "# {} — equilibrium\n\nPayoff **{}** ({}). A tactic's shortfall is how much worse than the value it does for its side, played purely against the other side's optimal mix (0 for every tactic in the mix); – marks a tactic the side may not choose.\n",
        s.analysis.header.name,
        s.payoff.name(),
        payoff_meaning(&s.payoff)
    );
    for p in &s.points {
        let e = &p.result;
        t += &format!(
            "\n## {}\n\n{} ({}).\n\n| tactic | A plays | A shortfall | B plays | B shortfall |\n|---|---:|---:|---:|---:|\n",
            point_label(s, p),
            value_line(e),
            how(e)
        );
        for (k, name) in TACTIC_NAMES.iter().enumerate() {
            t += &format!(
                "| {name} | {} | {} | {} | {} |\n",
                four(plays(e, 0, k)),
                four(e.shortfall[0][k]),
                four(plays(e, 1, k)),
                four(e.shortfall[1][k])
            );
        }
        t += "\n";
        for (side, label) in ["A", "B"].iter().enumerate() {
            t += &format!(
                "- {label}: dominated at the start: {}; never played: {}{}\n",
                list(&e.dominated[side]),
                list(&e.never_played[side]),
                limited(e, side)
            );
        }
    }
    t
}

/// The long frame: one row per grid point, side and tactic.
fn frame(s: &Solved) -> PolarsResult<DataFrame> {
    let axes: Vec<&str> = s
        .analysis
        .axes
        .iter()
        .map(|a| a.parameter.as_str())
        .collect();
    let runs: Vec<&[AxisValue]> = s.points.iter().map(|p| &p.coordinates[..]).collect();
    let mut frame = battlelab::frame::LongFrame::new(&axes).typed_by(&runs);
    for p in &s.points {
        let e = &p.result;
        for (side, side_name) in SIDES.iter().enumerate() {
            for (k, name) in TACTIC_NAMES.iter().enumerate() {
                frame
                    .row(&s.analysis.variants[p.variant].name, &p.coordinates)
                    .text("side", side_name)
                    .text("tactic", name)
                    .text(
                        "allowed",
                        if e.allowed[side].contains(k) {
                            "true"
                        } else {
                            "false"
                        },
                    )
                    .float("probability", Some(e.mix[side][k]))
                    .float("shortfall", e.shortfall[side][k])
                    .float("value", Some(e.value))
                    .text("maximiser", SIDES[e.payoff.maximiser()])
                    .text("exact", if e.exact { "true" } else { "false" })
                    .text(
                        "dominated",
                        if e.dominated[side].contains(&k) {
                            "true"
                        } else {
                            "false"
                        },
                    )
                    .text(
                        "never_played",
                        if e.never_played[side].contains(&k) {
                            "true"
                        } else {
                            "false"
                        },
                    )
                    .finish();
            }
        }
    }
    let mut df = frame.build("field")?;
    df.drop_in_place("system")?;
    Ok(df)
}

fn csv_text(s: &Solved) -> Result<String> {
    let df = frame(s)?;
    let mut bytes = Vec::new();
    battlelab::frame::write_csv_to(&df, &mut bytes)?;
    Ok(String::from_utf8(bytes).expect("CSV is UTF-8"))
}

/// The report folder: `equilibrium.csv`/`.parquet`, one chart of each side's mix over the
/// first swept axis per variant, `tables.md`, the analysis, a manifest and `index.html`.
fn write_report(s: &Solved, out: &Path) -> Result<Vec<std::path::PathBuf>, ReportError> {
    report::write_atomically(out, |dir| {
        let mut df = frame(s).map_err(|e| ReportError::Frame {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
        report::write_frame(dir, "equilibrium", &mut df)?;
        draw_charts(s, dir)?;
        report::write_text(dir, "tables.md", &markdown(s))?;
        report::write_text(dir, "analysis.toml", s.text)?;
        report::write_manifest(
            dir,
            &json!({
                "tool": "battlelab",
                "kind": "equilibrium",
                "name": s.analysis.header.name,
                "analysis": s.analysis.header.path.display().to_string(),
                "payoff": s.payoff,
            }),
        )?;
        report::index::write_index(dir, None)
    })
}

/// Per variant and side, the optimal mix at the start as grouped bars: one group per value
/// of the first swept axis (other axes at their fixed value), one bar per tactic.
fn draw_charts(s: &Solved, dir: &Path) -> Result<(), ReportError> {
    let axes = &s.analysis.axes;
    let variants = s.analysis.variants.len();
    let series: Vec<String> = TACTIC_NAMES.iter().map(|t| t.to_string()).collect();
    for (v, variant) in s.analysis.variants.iter().enumerate() {
        let free: Vec<usize> = if axes.is_empty() { vec![] } else { vec![0] };
        let indices = report::slice_points(
            axes,
            s.points.iter().map(|p| (p.variant, &p.coordinates[..])),
            v,
            &free,
        );
        let x_label = axes.first().map_or("start", |a| a.parameter.as_str());
        for (side, side_name) in SIDES.iter().enumerate() {
            let groups: Vec<battlelab::chart::BarGroup> = indices
                .iter()
                .map(|&i| {
                    let p = &s.points[i];
                    battlelab::chart::BarGroup {
                        label: p
                            .coordinates
                            .first()
                            .map_or_else(|| "start".to_string(), ToString::to_string),
                        values: p.result.mix[side].to_vec(),
                    }
                })
                .collect();
            let stem = dir.join(format!(
                "mix_{}{}",
                side_name,
                report::variant_suffix(&variant.name, variants)
            ));
            battlelab::chart::grouped_bars(
                &stem,
                &format!(
                    "Side {}'s optimal mix at the start ({}) — {}",
                    side_name.to_uppercase(),
                    s.payoff.name(),
                    variant.name
                ),
                x_label,
                "probability",
                &series,
                &groups,
            )?;
        }
    }
    Ok(())
}
