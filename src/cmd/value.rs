//! `battlelab value FILE`: what is a +1 worth? Every modifier priced at every run of the
//! plan — the headline without and with it, the paired difference with its 95% interval
//! (exact where the runs are exact), and its equivalent in the system's own currency.
//!
//! A modifier is an ordinary change to the analysis file (`levers::shifted`), run with
//! the same seed and block sizes as the file itself, so both arms of a run draw the same
//! dice block by block and the difference is a paired one (`engine::headline`).
//!
//! The equivalent: the currency setting (odds columns for field and naval battles, units
//! for ratio battles, …) is moved by −3 … +3 and the headline read at each step of that
//! run's own curve; the equivalent is where, interpolated linearly between neighbouring
//! steps, the curve reaches the headline with the modifier (the crossing nearest 0).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use battlelab::engine::compare::Arm;
use battlelab::engine::headline::{self, Estimate, Headline};
use battlelab::engine::Plan;
use battlelab::levers::{self, Modifier, SystemLevers};
use battlelab::progress::ProgressWatcher;
use battlelab::report;
use battlelab::sim::RunControl;
use serde_json::{json, Value};

use super::{emit, interruptible, pool, usage};
use crate::cli::Format;

/// The method, as every output states it.
pub const METHOD: &str = "paired difference of the two arms (same seed and blocks: common random numbers), 95% interval by Student's t on per-block differences (ratio-estimator standard error); exact where both arms are exact. Equivalent: the currency setting moved -3..+3 on the same run, interpolated linearly to the headline with the modifier (nearest crossing)";

/// How far the currency curve reaches each way.
const CURRENCY_REACH: i64 = 3;

/// A document evaluated: every run's arm (or the runs asked for), in order.
pub struct Evaluated {
    pub arms: Vec<Arm>,
}

/// The analysis file as a TOML document, with the system's levers.
pub struct Document {
    pub path: PathBuf,
    /// The file as written.
    pub text: String,
    /// The file as validated.
    pub study: Box<dyn battlelab::systems::Study>,
    pub doc: toml::Table,
    pub system: String,
    pub levers: &'static SystemLevers,
    pub trials: u64,
    pub seed: u64,
}

impl Document {
    /// Loads and validates `path` (exit 2 on a bad file), with `--trials`/`--seed`.
    pub fn load(path: &Path, trials: Option<u64>, seed: Option<u64>) -> Result<(Self, Plan)> {
        let loaded = battlelab::systems::load(path)?;
        let header = loaded.study.header();
        let system = header.system.to_string();
        let levers = levers::of(&system).ok_or_else(|| {
            usage(format!(
                "{}: {system} analyses have no settings to price or vary; value and solve serve {}",
                path.display(),
                levers::CATALOG
                    .iter()
                    .flat_map(|s| s.systems.iter().copied())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        let doc: toml::Table = loaded
            .analysis
            .text
            .parse()
            .with_context(|| format!("{} is not TOML", path.display()))?;
        let plan = loaded.study.plan();
        let (trials, seed) = (trials.unwrap_or(header.trials), seed.unwrap_or(header.seed));
        Ok((
            Self {
                path: path.to_path_buf(),
                text: loaded.analysis.text,
                study: loaded.study,
                doc,
                system,
                levers,
                trials,
                seed,
            },
            plan,
        ))
    }

    /// Parses a changed document (`what` names the change in errors).
    pub fn study(
        &self,
        doc: &toml::Table,
        what: &str,
    ) -> Result<Box<dyn battlelab::systems::Study>> {
        let text = toml::to_string(doc).context("writing the changed analysis")?;
        battlelab::systems::parse(&self.path, &text).map_err(|e| {
            usage(format!(
                "{what} cannot be applied to {}: {}",
                self.path.display(),
                strip_file(&e.to_string())
            ))
            .into()
        })
    }

    /// Every run of `study` (or only `runs`), every block, exact where the run is exact.
    pub fn evaluate(
        &self,
        study: &dyn battlelab::systems::Study,
        runs: Option<&[usize]>,
        control: &RunControl,
    ) -> Result<Evaluated> {
        let all: Vec<usize> = (0..study.plan().runs.len()).collect();
        let runs = runs.unwrap_or(&all);
        let blocks = battlelab::engine::driver::blocks_per_run(self.trials);
        let arms = runs
            .iter()
            .map(|&r| study.arm_blocks(r, 0..blocks, self.trials, self.seed, true, control))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Evaluated { arms })
    }
}

/// An error from the changed file without its (misleading) file and line prefix.
fn strip_file(message: &str) -> String {
    match message.split_once(": field `") {
        Some((_, rest)) => format!("field `{rest}"),
        None => message.to_string(),
    }
}

/// A run's headline without a change, and its currency curve (step, headline).
type Unchanged = (headline::Measured, Vec<(i64, f64)>);

/// One priced cell: a modifier at a run, for one headline.
struct Priced {
    run: usize,
    base: Estimate,
    with: Estimate,
    delta: Estimate,
    equivalent: Option<f64>,
}

struct HeadlineResult {
    headline: Headline,
    /// Per modifier: its cells, run by run.
    modifiers: Vec<(Modifier, Vec<Priced>)>,
}

struct Valuation {
    /// The analysis's name (the report's identity).
    name: String,
    file: String,
    system: String,
    plan: Plan,
    trials: u64,
    seed: u64,
    currency: Option<(&'static str, &'static str)>,
    headlines: Vec<HeadlineResult>,
    reference: usize,
    /// Modifiers of the system's own list this file cannot take, and why.
    skipped: Vec<(String, String)>,
}

pub fn value(args: crate::cli::ValueArgs) -> Result<()> {
    let (document, plan) = Document::load(&args.file, args.trials, args.seed)?;
    let name = document.study.header().name.to_string();
    if let Some(out) = &args.out {
        // Before any work.
        battlelab::output::check_target(
            out,
            &[args.file.as_path()],
            &battlelab::output::Identity::new("value", &name),
            args.replace,
        )?;
    }
    let (pool, _) = pool(args.threads)?;
    let control = interruptible();
    let text = document.text.clone();
    // `[value]`, checked when the file was loaded; read again for its parts.
    let spec = levers::value_settings(&args.file, &text, &document.system, &plan)?;
    let system = document.system.clone();
    let levers = document.levers;

    // The modifiers: the command line, else [value], else the system's own list.
    let modifiers: Vec<Modifier> = if !args.modifiers.is_empty() {
        args.modifiers
            .iter()
            .map(|m| {
                Modifier::parse(m, levers, &system).map_err(|e| usage(format!("--modifier: {e}")))
            })
            .collect::<Result<_, _>>()?
    } else if let Some(list) = &spec.modifiers {
        list.clone()
    } else {
        levers
            .default_modifiers
            .iter()
            .map(|m| Modifier::parse(m, levers, &system).expect("the catalog's own modifiers"))
            .collect()
    };

    // The headlines.
    let all = (levers.headlines)();
    if all.is_empty() {
        bail!(usage(format!(
            "{system} tables have no headline to price; use `battlelab solve` with an outcome, or `battlelab compare`"
        )));
    }
    let wanted = args.headline.clone().or_else(|| spec.headline.clone());
    let headlines: Vec<Headline> = match wanted.as_deref() {
        None => vec![all[0].clone()],
        Some("all") => all.clone(),
        Some(key) => vec![all.iter().find(|h| h.key == key).cloned().ok_or_else(|| {
            usage(format!(
                "no headline \"{}\" for {system}; headlines: {}, or all",
                battlelab::limits::echo(key),
                all.iter()
                    .map(|h| h.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?],
    };

    // The reference run of the tornado charts.
    let reference = spec.reference;

    // Every changed document is checked before any dice are rolled. A modifier the user
    // named must apply; one of the system's own list that this file cannot take (a morale
    // already at its top) is skipped, and said so.
    let chosen = !args.modifiers.is_empty() || spec.modifiers.is_some();
    let mut studies = Vec::new();
    let mut priced = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    for m in &modifiers {
        let study = levers::shifted(&document.doc, m.lever, m.step)
            .map_err(|e| anyhow::Error::from(usage(format!("{} cannot be applied: {e}", m.name()))))
            .and_then(|doc| document.study(&doc, &m.name()));
        let study = match study {
            Ok(study) => study,
            Err(e) if !chosen => {
                skipped.push((m.name(), e.to_string()));
                continue;
            }
            Err(e) => return Err(e),
        };
        if study.plan().runs.len() != plan.runs.len() {
            bail!(usage(format!(
                "{} changes the analysis's runs ({} instead of {}); price it on a file where it moves a setting, not the grid",
                m.name(),
                study.plan().runs.len(),
                plan.runs.len()
            )));
        }
        studies.push(study);
        priced.push(*m);
    }
    if !matches!(args.format, Format::Text) {
        for (name, why) in &skipped {
            super::note(&format!("not priced: {name}: {why}"));
        }
    }
    if priced.is_empty() {
        bail!(usage(format!(
            "none of the modifiers applies to {}; name some with --modifier",
            args.file.display()
        )));
    }
    let modifiers = priced;
    let mut currency_studies: Vec<(i64, Box<dyn battlelab::systems::Study>)> = Vec::new();
    if let Some((name, _)) = levers.currency {
        let lever = levers
            .lever(name, &system)
            .expect("the catalog's own currency");
        for k in (-CURRENCY_REACH..=CURRENCY_REACH).filter(|&k| k != 0) {
            // A step the file cannot take (off the odds ladder, below 1 unit) is left out.
            if let Ok(doc) = levers::shifted(&document.doc, lever, k) {
                if let Ok(study) = document.study(&doc, name) {
                    if study.plan().runs.len() == plan.runs.len() {
                        currency_studies.push((k, study));
                    }
                }
            }
        }
    }

    let documents = 1 + studies.len() + currency_studies.len();
    let total = documents as u64 * plan.runs.len() as u64 * document.trials;
    let watcher = ProgressWatcher::start(Arc::clone(&control), total, args.quiet);
    let evaluated = pool.install(|| -> Result<_> {
        let base = document.evaluate(&*document.study, None, &control)?;
        let with = studies
            .iter()
            .map(|s| document.evaluate(&**s, None, &control))
            .collect::<Result<Vec<_>>>()?;
        let curve = currency_studies
            .iter()
            .map(|(k, s)| Ok((*k, document.evaluate(&**s, None, &control)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok((base, with, curve))
    });
    watcher.finish();
    let (base, with, curve) = evaluated?;

    let results = headlines
        .into_iter()
        .map(|headline| {
            // Per run, measured once for every modifier: the headline without a change,
            // and the currency curve through it.
            let unchanged: Vec<Option<Unchanged>> = (0..plan.runs.len())
                .map(|r| {
                    let without = headline::measure(&base.arms[r], &headline)?;
                    let points = std::iter::once((0, without.estimate().best()))
                        .chain(curve.iter().filter_map(|(k, e)| {
                            headline::measure(&e.arms[r], &headline)
                                .map(|m| (*k, m.estimate().best()))
                        }))
                        .collect();
                    Some((without, points))
                })
                .collect();
            let modifiers = modifiers
                .iter()
                .zip(&with)
                .map(|(m, w)| {
                    let cells = (0..plan.runs.len())
                        .filter_map(|r| {
                            let (without, points) = unchanged[r].as_ref()?;
                            let changed = headline::measure(&w.arms[r], &headline)?;
                            let c = changed.estimate();
                            Some(Priced {
                                run: r,
                                base: without.estimate(),
                                with: c,
                                delta: headline::paired_difference(without, &changed),
                                equivalent: levers
                                    .currency
                                    .and_then(|_| equivalent(points, c.best())),
                            })
                        })
                        .collect();
                    (*m, cells)
                })
                .collect();
            HeadlineResult {
                headline,
                modifiers,
            }
        })
        .collect();
    let valuation = Valuation {
        name,
        file: args.file.display().to_string(),
        system,
        plan,
        trials: document.trials,
        seed: document.seed,
        currency: levers.currency,
        headlines: results,
        reference,
        skipped,
    };
    if let Some(out) = &args.out {
        write_report(&valuation, out, &text)?;
    }
    emit(&match args.format {
        Format::Text => text_output(&valuation),
        Format::Csv => csv(&valuation),
        Format::Json => serde_json::to_string_pretty(&to_json(&valuation)).expect("JSON") + "\n",
        Format::Md => markdown(&valuation),
    })
}

/// Where the curve `points` (step, headline) reaches `target`: linear between neighbouring
/// steps, the crossing nearest step 0; `None` where it is not reached within the steps.
pub fn equivalent(points: &[(i64, f64)], target: f64) -> Option<f64> {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.0);
    let zero = sorted.iter().position(|p| p.0 == 0)?;
    if sorted[zero].1 == target {
        return Some(0.0);
    }
    let mut best: Option<f64> = None;
    let mut consider = |a: (i64, f64), b: (i64, f64)| {
        let (lo, hi) = (a.1.min(b.1), a.1.max(b.1));
        if a.1 != b.1 && (lo..=hi).contains(&target) && (b.0 - a.0).abs() == 1 {
            let x = a.0 as f64 + (target - a.1) / (b.1 - a.1) * (b.0 - a.0) as f64;
            if best.is_none_or(|y| x.abs() < y.abs()) {
                best = Some(x);
            }
        }
    };
    // Outward from 0 each way, along unbroken steps.
    for i in zero..sorted.len().saturating_sub(1) {
        consider(sorted[i], sorted[i + 1]);
    }
    for i in (1..=zero).rev() {
        consider(sorted[i], sorted[i - 1]);
    }
    best
}

fn run_pairs(plan: &Plan, run: usize) -> Vec<(String, String)> {
    let mut pairs = vec![("variant".to_string(), plan.runs[run].variant.clone())];
    pairs.extend(plan.describe(run));
    pairs
}

fn run_label(plan: &Plan, run: usize) -> String {
    run_pairs(plan, run)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn num(v: f64) -> String {
    let s = format!("{v:.6}");
    if s == "-0.000000" {
        "0.000000".into()
    } else {
        s
    }
}

fn equivalent_text(v: Option<f64>) -> String {
    v.map_or("not reached within ±3".into(), |x| format!("{x:+.2}"))
}

fn text_output(v: &Valuation) -> String {
    let mut out = format!(
        "value: {} ({}), {} trials per run and arm, seed {}\nmethod: {METHOD}\n",
        v.file, v.system, v.trials, v.seed
    );
    for (m, why) in &v.skipped {
        out.push_str(&format!("not priced: {m}: {why}\n"));
    }
    for h in &v.headlines {
        out.push_str(&format!("\n{}\n", h.headline.name));
        for (m, cells) in &h.modifiers {
            out.push_str(&format!("  {} ({})\n", m.name(), m.lever.meaning));
            for c in cells {
                let exact = if c.delta.exact.is_some() {
                    " exact"
                } else {
                    ""
                };
                let equivalent = v
                    .currency
                    .map(|(_, unit)| format!("  = {} {unit}", equivalent_text(c.equivalent)))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "    {:<40} {} -> {}  delta {} [{}, {}]{exact}{equivalent}\n",
                    run_label(&v.plan, c.run),
                    num(c.base.best()),
                    num(c.with.best()),
                    num(c.delta.best()),
                    num(c.delta.ci_low),
                    num(c.delta.ci_high),
                ));
            }
        }
    }
    out
}

fn csv_header(v: &Valuation) -> Vec<String> {
    let mut header: Vec<String> = ["headline", "modifier", "side", "variant"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.extend(v.plan.axes.iter().cloned());
    header.extend(
        [
            "base",
            "with",
            "delta",
            "ci_low",
            "ci_high",
            "exact_delta",
            "equivalent",
            "equivalent_unit",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    header
}

fn csv(v: &Valuation) -> String {
    let field = battlelab::table::csv_field;
    let mut out = csv_header(v)
        .iter()
        .map(|s| field(s))
        .collect::<Vec<_>>()
        .join(",")
        + "\n";
    for h in &v.headlines {
        for (m, cells) in &h.modifiers {
            for c in cells {
                let mut row = vec![
                    h.headline.key.clone(),
                    m.name(),
                    m.side().to_string(),
                    v.plan.runs[c.run].variant.clone(),
                ];
                row.extend(v.plan.runs[c.run].coordinates.iter().map(|x| match x {
                    battlelab::analysis::AxisValue::Unset => String::new(),
                    x => x.to_string(),
                }));
                row.extend([
                    c.base.best().to_string(),
                    c.with.best().to_string(),
                    c.delta.best().to_string(),
                    c.delta.ci_low.to_string(),
                    c.delta.ci_high.to_string(),
                    c.delta.exact.map_or(String::new(), |e| e.to_string()),
                    c.equivalent.map_or(String::new(), |e| e.to_string()),
                    v.currency.map_or(String::new(), |(_, u)| u.to_string()),
                ]);
                out.push_str(&row.iter().map(|s| field(s)).collect::<Vec<_>>().join(","));
                out.push('\n');
            }
        }
    }
    out
}

fn headline_json(v: &Valuation, h: &HeadlineResult) -> Value {
    json!({
        "headline": h.headline.name,
        "key": h.headline.key,
        "modifiers": h.modifiers.iter().map(|(m, cells)| json!({
            "name": m.name(),
            "side": m.side(),
            "meaning": m.lever.meaning,
            "runs": cells.iter().map(|c| json!({
                "run": run_pairs(&v.plan, c.run).into_iter().map(|(k, s)| (k, Value::String(s))).collect::<serde_json::Map<_, _>>(),
                "base": c.base.best(),
                "with": c.with.best(),
                "delta": c.delta.best(),
                "ci_low": c.delta.ci_low,
                "ci_high": c.delta.ci_high,
                "exact_delta": c.delta.exact,
                "equivalent": v.currency.map(|(_, unit)| json!({"unit": unit, "value": c.equivalent})),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn to_json(v: &Valuation) -> Value {
    let mut object = match v.headlines.as_slice() {
        [one] => headline_json(v, one),
        many => json!({"headlines": many.iter().map(|h| headline_json(v, h)).collect::<Vec<_>>()}),
    };
    let map = object.as_object_mut().expect("an object");
    map.insert("file".into(), json!(v.file));
    map.insert("system".into(), json!(v.system));
    map.insert("trials".into(), json!(v.trials));
    map.insert("seed".into(), json!(v.seed));
    map.insert("method".into(), json!(METHOD));
    map.insert(
        "skipped".into(),
        json!(v
            .skipped
            .iter()
            .map(|(m, why)| json!({"name": m, "why": why}))
            .collect::<Vec<_>>()),
    );
    object
}

fn markdown(v: &Valuation) -> String {
    let mut out = format!(
        "## What is it worth?\n\n{} ({}), {} trials per run and arm, seed {}.\n\nMethod: {METHOD}.\n",
        v.file, v.system, v.trials, v.seed
    );
    for h in &v.headlines {
        out.push_str(&format!(
            "\n### {}\n\n| run | modifier | without | with | difference | 95% interval | {} |\n|---|---|---|---|---|---|---|\n",
            h.headline.name,
            v.currency.map_or("equivalent".to_string(), |(_, u)| format!("in {u}"))
        ));
        for (m, cells) in &h.modifiers {
            for c in cells {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {}{} | [{}, {}] | {} |\n",
                    run_label(&v.plan, c.run),
                    m.name(),
                    num(c.base.best()),
                    num(c.with.best()),
                    num(c.delta.best()),
                    if c.delta.exact.is_some() {
                        " (exact)"
                    } else {
                        ""
                    },
                    num(c.delta.ci_low),
                    num(c.delta.ci_high),
                    v.currency
                        .map_or("—".to_string(), |_| equivalent_text(c.equivalent)),
                ));
            }
        }
    }
    out
}

fn write_report(v: &Valuation, out: &Path, analysis: &str) -> Result<()> {
    use battlelab::report::frame::{ColumnKind, LongFrame};
    report::write_atomically(out, |dir| {
        let axes: Vec<&str> = v.plan.axes.iter().map(String::as_str).collect();
        let runs: Vec<&[battlelab::analysis::AxisValue]> = v
            .plan
            .runs
            .iter()
            .map(|r| r.coordinates.as_slice())
            .collect();
        let mut frame = LongFrame::new(&axes).typed_by(&runs).with_columns(&[
            ("headline", ColumnKind::Text),
            ("modifier", ColumnKind::Text),
            ("side", ColumnKind::Text),
            ("base", ColumnKind::Float),
            ("with", ColumnKind::Float),
            ("delta", ColumnKind::Float),
            ("ci_low", ColumnKind::Float),
            ("ci_high", ColumnKind::Float),
            ("exact_delta", ColumnKind::Float),
            ("equivalent", ColumnKind::Float),
            ("equivalent_unit", ColumnKind::Text),
        ]);
        for h in &v.headlines {
            for (m, cells) in &h.modifiers {
                for c in cells {
                    let run = &v.plan.runs[c.run];
                    frame
                        .row(&run.variant, &run.coordinates)
                        .text("headline", &h.headline.key)
                        .text("modifier", &m.name())
                        .text("side", m.side())
                        .float("base", Some(c.base.best()))
                        .float("with", Some(c.with.best()))
                        .float("delta", Some(c.delta.best()))
                        .float("ci_low", Some(c.delta.ci_low))
                        .float("ci_high", Some(c.delta.ci_high))
                        .float("exact_delta", c.delta.exact)
                        .float("equivalent", c.equivalent)
                        .text("equivalent_unit", v.currency.map_or("", |(_, u)| u))
                        .finish();
                }
            }
        }
        let mut df = frame.build(&v.system).map_err(report::frame_error(dir))?;
        report::write_frame(dir, "value", &mut df)?;
        for h in &v.headlines {
            let bars: Vec<battlelab::chart::TornadoBar> = h
                .modifiers
                .iter()
                .filter_map(|(m, cells)| {
                    let c = cells.iter().find(|c| c.run == v.reference)?;
                    Some(battlelab::chart::TornadoBar {
                        label: m.name(),
                        value: c.delta.best(),
                        ci_low: c.delta.ci_low,
                        ci_high: c.delta.ci_high,
                    })
                })
                .collect();
            battlelab::chart::tornado(
                &dir.join(format!(
                    "tornado_{}",
                    battlelab::analysis::slug(&h.headline.key)
                )),
                &format!("{} at {}", h.headline.name, run_label(&v.plan, v.reference)),
                &format!("change in {}", h.headline.name),
                &bars,
            )?;
        }
        report::write_text(dir, "tables.md", &markdown(v))?;
        report::write_text(
            dir,
            "value.json",
            &(serde_json::to_string_pretty(&to_json(v)).expect("JSON") + "\n"),
        )?;
        report::write_text(dir, "analysis.toml", analysis)?;
        report::write_manifest(
            dir,
            &json!({"tool": "battlelab", "kind": "value", "name": v.name, "analysis": v.file, "system": v.system, "seed": v.seed, "trials": v.trials}),
        )?;
        report::index::write_index(dir, None)
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::equivalent;

    #[test]
    fn the_equivalent_is_the_nearest_crossing_of_the_curve() {
        let curve = [(-1, 0.1), (0, 0.2), (1, 0.4), (2, 0.5)];
        assert_eq!(equivalent(&curve, 0.2), Some(0.0));
        assert!((equivalent(&curve, 0.3).unwrap() - 0.5).abs() < 1e-12);
        assert!((equivalent(&curve, 0.45).unwrap() - 1.5).abs() < 1e-12);
        assert!((equivalent(&curve, 0.15).unwrap() + 0.5).abs() < 1e-12);
        assert_eq!(equivalent(&curve, 0.9), None);
        // A gap in the steps is not bridged.
        assert_eq!(equivalent(&[(0, 0.2), (2, 0.6)], 0.4), None);
    }
}
