//! `battlelab equilibrium FILE`: solve the zero-sum game of a system whose sides choose at
//! once each round, at every run of the plan, and say what each side should play.
//!
//! Why this command exists: where both sides pick at once, a designer asking "is this
//! choice too strong?" needs the game's optimal mixes, not one more fixed-policy run. What
//! the choices are, what they are called, which payoffs there are and how a run's game is
//! solved belong to the system, which declares them (`SimultaneousChoices`, through
//! `Study::simultaneous_choices`). This file loads any analysis, refuses one whose system
//! declares no choice (naming those that do, from the registry), solves every run on the
//! worker pool, and prints or writes the results from the plan and the generic
//! [`ChoiceEquilibrium`] alone. A run whose game is too large for the system to solve
//! whole is marked `exact: false`, with how it was solved instead.
//!
//! The payoff is the file's own (`SimultaneousChoices::default_payoff`) or `--payoff`,
//! read by the system; every output says which side maximises it at each run. A side's
//! choices may be limited: the outputs mark a choice a side may not make.

use std::path::Path;

use anyhow::{bail, Result};
use polars::prelude::*;
use rayon::prelude::*;
use serde_json::{json, Map, Value};

use battlelab::analysis::{AxisValue, SweepAxis};
use battlelab::engine::choices::{ChoiceEquilibrium, ChoicePayoff};
use battlelab::engine::Plan;
use battlelab::report::{self, ReportError};

use super::{emit, note, pool, usage, writing_report};
use crate::cli::{EquilibriumArgs, Format};

/// Everything the outputs are made from.
struct Solved<'a> {
    /// The analysis file as the user named it.
    path: &'a Path,
    /// The analysis's name (its report's).
    name: &'a str,
    /// The analysis file as written (copied into the report).
    text: &'a str,
    plan: Plan,
    /// The plan's variants, in order; `variant[i]` is run `i`'s index among them.
    variants: Vec<String>,
    variant: Vec<usize>,
    /// The word for a choice ("what each side picks") and every choice's name.
    word: String,
    choices: Vec<String>,
    payoff: &'a dyn ChoicePayoff,
    /// One per run of the plan, in its order.
    points: Vec<ChoiceEquilibrium>,
}

const SIDES: [&str; 2] = ["a", "b"];

pub fn equilibrium(args: EquilibriumArgs) -> Result<()> {
    let loaded = battlelab::systems::load(&args.file)?;
    let study = &*loaded.study;
    let header = study.header();
    let Some(choices) = study.simultaneous_choices() else {
        bail!(usage(format!(
            "{}: system \"{}\" has no simultaneous choice to solve; equilibrium solves systems whose sides choose at once ({})",
            args.file.display(),
            header.system,
            systems_that_choose()
        )));
    };
    let payoff = match &args.payoff {
        Some(text) => choices.read_payoff(text).map_err(|message| {
            usage(format!(
                "invalid value '{text}' for '--payoff <PAYOFF>': {message}\n\nFor more information, try '--help'."
            ))
        })?,
        None => choices.default_payoff(),
    };
    if let Some(out) = &args.out {
        // Before any work, and never over the analysis itself.
        battlelab::output::check_target(
            out,
            &[&args.file],
            &battlelab::output::Identity::new("equilibrium", header.name),
            args.replace,
        )?;
    }
    let plan = study.plan();
    let (pool, _) = pool(args.threads)?;
    let points = pool.install(|| {
        (0..plan.runs.len())
            .into_par_iter()
            .map(|run| payoff.solve(run))
            .collect::<Result<Vec<_>, _>>()
    })?;
    battlelab::interrupt::check()?;
    let variants: Vec<String> = plan.variants().into_iter().map(String::from).collect();
    let variant = plan
        .runs
        .iter()
        .map(|run| {
            variants
                .iter()
                .position(|v| *v == run.variant)
                .expect("every run's variant is one of the plan's")
        })
        .collect();
    let solved = Solved {
        path: &loaded.analysis.path,
        name: header.name,
        text: &loaded.analysis.text,
        variants,
        variant,
        plan,
        word: choices.choice_word().to_string(),
        choices: choices.choice_names(),
        payoff: &*payoff,
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

/// The systems that declare simultaneous choices, from the registry: each system's
/// starting file (`battlelab new`) parsed and asked. Each is named by what its summary
/// opens with and its `system` name.
fn systems_that_choose() -> String {
    battlelab_core::systems::docs()
        .into_iter()
        .filter(|doc| {
            let path = format!("{}.toml", doc.name);
            battlelab::systems::parse(Path::new(&path), doc.starter)
                .is_ok_and(|study| study.simultaneous_choices().is_some())
        })
        .map(|doc| {
            // A summary opens with what the system's battles are: "… battles (docs/…): …".
            let what = doc.summary.split(" (").next().unwrap_or(doc.summary);
            format!("{what}: system = \"{}\"", doc.name)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The names of the choices `flags` marks, in printed order.
fn marked<'a>(s: &'a Solved, flags: &[bool]) -> Vec<&'a str> {
    s.choices
        .iter()
        .zip(flags)
        .filter(|(_, &flag)| flag)
        .map(|(name, _)| name.as_str())
        .collect()
}

fn axis_json(value: &AxisValue) -> Value {
    match value {
        AxisValue::Int(v) => json!(v),
        AxisValue::Unset => Value::Null,
        other => json!(other.to_string()),
    }
}

fn per_choice<T: serde::Serialize>(s: &Solved, values: &[T]) -> Value {
    Value::Object(
        s.choices
            .iter()
            .zip(values)
            .map(|(name, v)| (name.clone(), json!(v)))
            .collect(),
    )
}

fn to_json(s: &Solved) -> Value {
    let points: Vec<Value> = s
        .points
        .iter()
        .zip(&s.plan.runs)
        .map(|(e, key)| {
            let mut run = Map::new();
            for (axis, value) in s.plan.axes.iter().zip(&key.coordinates) {
                run.insert(axis.clone(), axis_json(value));
            }
            run.insert("variant".into(), json!(key.variant));
            let sides = |of: &dyn Fn(usize) -> Value| json!({"a": of(0), "b": of(1)});
            json!({
                "run": run,
                "value": e.value,
                "of": e.of,
                "maximiser": SIDES[e.maximiser],
                "a": per_choice(s, &e.mix[0]),
                "b": per_choice(s, &e.mix[1]),
                "allowed": sides(&|side| json!(marked(s, &e.allowed[side]))),
                "dominated": sides(&|side| json!(marked(s, &e.dominated[side]))),
                "never_played": sides(&|side| json!(marked(s, &e.never_played[side]))),
                "shortfall": sides(&|side| per_choice(s, &e.shortfall[side])),
                "exact": e.exact,
            })
        })
        .collect();
    json!({"payoff": s.payoff.as_written(), "points": points})
}

/// `odds = 3:2, variant = base`.
fn point_label(s: &Solved, run: usize) -> String {
    let key = &s.plan.runs[run];
    let mut parts: Vec<String> = s
        .plan
        .axes
        .iter()
        .zip(&key.coordinates)
        .map(|(a, v)| format!("{a} = {v}"))
        .collect();
    if s.variants.len() > 1 || parts.is_empty() {
        parts.push(format!("variant = {}", key.variant));
    }
    parts.join(", ")
}

/// `P(A wins or B withdraws) = 0.250000, A maximising it, B minimising`.
fn value_line(e: &ChoiceEquilibrium) -> String {
    format!(
        "{} = {:.6}, {} maximising it, {} minimising",
        e.of,
        e.value,
        ["A", "B"][e.maximiser],
        ["A", "B"][1 - e.maximiser]
    )
}

fn four(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.4}"))
}

/// A side's mix entry: "–" for a choice it may not make.
fn plays(e: &ChoiceEquilibrium, side: usize, choice: usize) -> Option<f64> {
    e.allowed[side][choice].then_some(e.mix[side][choice])
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

fn limited(s: &Solved, e: &ChoiceEquilibrium, side: usize) -> String {
    if e.allowed[side].iter().all(|&a| a) {
        String::new()
    } else {
        format!(
            "; may choose only {}",
            marked(s, &e.allowed[side]).join(", ")
        )
    }
}

/// `  A: dominated at the start: none; never played: withdraw`, per side.
fn side_lines(s: &Solved, e: &ChoiceEquilibrium, lead: &str) -> String {
    ["A", "B"]
        .iter()
        .enumerate()
        .map(|(side, label)| {
            format!(
                "{lead}{label}: dominated at the start: {}; never played: {}{}\n",
                list(&marked(s, &e.dominated[side])),
                list(&marked(s, &e.never_played[side])),
                limited(s, e, side)
            )
        })
        .collect()
}

fn text_output(s: &Solved) -> String {
    let mut t = format!(
        "equilibrium of {}: payoff {} ({})\n",
        s.path.display(),
        s.payoff.name(),
        s.payoff.meaning()
    );
    // The names' column: ten characters, or the longest name's.
    let width = s
        .choices
        .iter()
        .chain([&s.word])
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(10);
    for (run, e) in s.points.iter().enumerate() {
        t += &format!(
            "\n{}\n  {}\n  ({})\n",
            point_label(s, run),
            value_line(e),
            e.how
        );
        t += &format!(
            "  {:<width$} {:>8} {:>11} {:>8} {:>11}\n",
            s.word, "A plays", "A shortfall", "B plays", "B shortfall"
        );
        for (k, name) in s.choices.iter().enumerate() {
            t += &format!(
                "  {:<width$} {:>8} {:>11} {:>8} {:>11}\n",
                name,
                four(plays(e, 0, k)),
                four(e.shortfall[0][k]),
                four(plays(e, 1, k)),
                four(e.shortfall[1][k])
            );
        }
        t += &side_lines(s, e, "  ");
    }
    t
}

fn markdown(s: &Solved) -> String {
    let word = &s.word;
    let mut t = format!(
        "# {} — equilibrium\n\nPayoff **{}** ({}). A {word}'s shortfall is how much worse than the value it does for its side, played purely against the other side's optimal mix (0 for every {word} in the mix); – marks a {word} the side may not choose.\n",
        s.name,
        s.payoff.name(),
        s.payoff.meaning()
    );
    for (run, e) in s.points.iter().enumerate() {
        t += &format!(
            "\n## {}\n\n{} ({}).\n\n| {word} | A plays | A shortfall | B plays | B shortfall |\n|---|---:|---:|---:|---:|\n",
            point_label(s, run),
            value_line(e),
            e.how
        );
        for (k, name) in s.choices.iter().enumerate() {
            t += &format!(
                "| {name} | {} | {} | {} | {} |\n",
                four(plays(e, 0, k)),
                four(e.shortfall[0][k]),
                four(plays(e, 1, k)),
                four(e.shortfall[1][k])
            );
        }
        t += "\n";
        t += &side_lines(s, e, "- ");
    }
    t
}

fn yes_no(flag: bool) -> &'static str {
    if flag {
        "true"
    } else {
        "false"
    }
}

/// The long frame: one row per run, side and choice.
fn frame(s: &Solved) -> PolarsResult<DataFrame> {
    let axes: Vec<&str> = s.plan.axes.iter().map(String::as_str).collect();
    let runs: Vec<&[AxisValue]> = s.plan.runs.iter().map(|r| &r.coordinates[..]).collect();
    let mut frame = battlelab::frame::LongFrame::new(&axes).typed_by(&runs);
    for (e, key) in s.points.iter().zip(&s.plan.runs) {
        for (side, side_name) in SIDES.iter().enumerate() {
            for (k, name) in s.choices.iter().enumerate() {
                frame
                    .row(&key.variant, &key.coordinates)
                    .text("side", side_name)
                    .text(&s.word, name)
                    .text("allowed", yes_no(e.allowed[side][k]))
                    .float("probability", Some(e.mix[side][k]))
                    .float("shortfall", e.shortfall[side][k])
                    .float("value", Some(e.value))
                    .text("maximiser", SIDES[e.maximiser])
                    .text("exact", yes_no(e.exact))
                    .text("dominated", yes_no(e.dominated[side][k]))
                    .text("never_played", yes_no(e.never_played[side][k]))
                    .finish();
            }
        }
    }
    // The frame's system column says nothing here (one analysis): dropped.
    let mut df = frame.build("")?;
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
/// first axis per variant, `tables.md`, the analysis, a manifest and `index.html`.
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
                "name": s.name,
                "analysis": s.path.display().to_string(),
                "payoff": s.payoff.as_written(),
            }),
        )?;
        let source = report::tryit::Source::of_report(s.path, s.text, "equilibrium", "equilibrium");
        report::index::write_index_with(dir, None, None, Some(&source))
    })
}

/// The plan's axes with the values its runs take, in the order they first appear (what
/// a chart's slice holds an axis it does not draw at).
fn axes_of(plan: &Plan) -> Vec<SweepAxis> {
    plan.axes
        .iter()
        .enumerate()
        .map(|(i, parameter)| {
            let mut values: Vec<AxisValue> = Vec::new();
            for run in &plan.runs {
                if !values.contains(&run.coordinates[i]) {
                    values.push(run.coordinates[i].clone());
                }
            }
            SweepAxis {
                parameter: parameter.clone(),
                values,
            }
        })
        .collect()
}

/// Per variant and side, the optimal mix at the start as grouped bars: one group per value
/// of the first axis (other axes at their fixed value), one bar per choice.
fn draw_charts(s: &Solved, dir: &Path) -> Result<(), ReportError> {
    let axes = axes_of(&s.plan);
    for (v, variant) in s.variants.iter().enumerate() {
        let free: Vec<usize> = if axes.is_empty() { vec![] } else { vec![0] };
        let indices = report::slice_points(
            &axes,
            s.variant
                .iter()
                .zip(&s.plan.runs)
                .map(|(&v, run)| (v, &run.coordinates[..])),
            v,
            &free,
        );
        let x_label = axes.first().map_or("start", |a| a.parameter.as_str());
        for (side, side_name) in SIDES.iter().enumerate() {
            let groups: Vec<battlelab::chart::BarGroup> = indices
                .iter()
                .map(|&i| battlelab::chart::BarGroup {
                    label: s.plan.runs[i]
                        .coordinates
                        .first()
                        .map_or_else(|| "start".to_string(), ToString::to_string),
                    values: s.points[i].mix[side].clone(),
                })
                .collect();
            let stem = dir.join(format!(
                "mix_{}{}",
                side_name,
                report::variant_suffix(variant, s.variants.len())
            ));
            battlelab::chart::grouped_bars(
                &stem,
                &format!(
                    "Side {}'s optimal mix at the start ({}) — {}",
                    side_name.to_uppercase(),
                    s.payoff.name(),
                    variant
                ),
                x_label,
                "probability",
                &s.choices,
                &groups,
            )?;
        }
    }
    Ok(())
}
