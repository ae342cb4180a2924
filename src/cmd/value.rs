//! `battlelab value FILE`: what is a +1 worth? Every modifier priced at every run of the
//! plan — the headline without and with it, the paired difference with its 95% interval
//! (exact where the runs are exact), and its equivalent in the system's own currency.
//!
//! The pricing itself is the core's (`battlelab_core::pricing`: the report page's module
//! reprices with the same code); this command loads the file, runs the arms on the thread
//! pool with a progress bar, prints the answer and writes the report folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use battlelab::analysis::{AnalysisError, AxisValue};
use battlelab::engine::compare::Arm;
use battlelab::engine::headline::Estimate;
use battlelab::engine::Plan;
use battlelab::levers::{self, SystemLevers};
use battlelab::pricing::{self, run_label, Equivalent, Priceable, Valuation, ValueError};
use battlelab::progress::ProgressWatcher;
use battlelab::report;
use battlelab::sim::RunControl;
use serde_json::json;

use super::{emit, interruptible, pool, usage, writing_report};
use crate::cli::Format;

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
        let doc: toml::Table = loaded.analysis.text.parse().unwrap_or_default();
        let levers = levers::for_file(&battlelab_core::files::Disk, path, &doc, &system)
            .ok_or_else(|| {
                usage(format!(
                "{}: {system} analyses have no settings to price or vary; value and solve serve {}",
                path.display(),
                levers::served().join(", ")
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
                pricing::strip_file(&e.to_string())
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
    let spec = levers::value_settings(
        &battlelab_core::files::Disk,
        &args.file,
        &text,
        &document.system,
        &plan,
    )?;
    let parse = |text: &str| -> Result<Box<dyn Priceable>, AnalysisError> {
        battlelab::systems::parse(&document.path, text).map(|s| Box::new(s) as Box<dyn Priceable>)
    };
    let analysis = pricing::Analysis {
        path: &args.file,
        name: &name,
        doc: &document.doc,
        system: &document.system,
        levers: document.levers,
        trials: document.trials,
        seed: document.seed,
        study: &document.study,
        parse: &parse,
    };
    let asked = pricing::Asked {
        modifiers: args.modifiers.clone(),
        headline: args.headline.clone(),
    };
    let prepared = pricing::prepare(analysis, plan, &asked, &spec).map_err(|e| match e {
        ValueError::Refused(message) => anyhow::Error::from(usage(message)),
        ValueError::Interrupted(e) => e.into(),
    })?;
    if !matches!(args.format, Format::Text) {
        for (name, why) in &prepared.skipped {
            super::note(&format!("not priced: {name}: {why}"));
        }
    }
    if let Some(why) = prepared.nothing_priced() {
        bail!(usage(why));
    }
    let watcher = ProgressWatcher::start(
        Arc::clone(&control),
        prepared.arms() * document.trials,
        args.quiet,
    );
    let valuation = pool.install(|| prepared.evaluate(true, &control));
    watcher.finish();
    let valuation = valuation?;
    if let Some(out) = &args.out {
        // What the page's panel reprices an edited file with: this command's question.
        let asked = json!({
            "modifiers": args.modifiers,
            "headline": args.headline,
            "trials": document.trials,
            "seed": document.seed,
        });
        writing_report(out, || write_report(&valuation, out, &text, asked))?;
    }
    emit(&match args.format {
        Format::Text => pricing::text_output(&valuation),
        Format::Csv => csv(&valuation),
        Format::Json => {
            serde_json::to_string_pretty(&pricing::to_json(&valuation)).expect("JSON") + "\n"
        }
        Format::Md => pricing::markdown(&valuation),
    })
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
            "note",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    header
}

fn csv(v: &Valuation) -> String {
    let field = battlelab::table::csv_field;
    let number = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
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
                    AxisValue::Unset => String::new(),
                    x => x.to_string(),
                }));
                row.extend([
                    c.base.best().to_string(),
                    number(c.with().map(Estimate::best)),
                    number(c.delta().map(Estimate::best)),
                    number(c.delta().map(|d| d.ci_low)),
                    number(c.delta().map(|d| d.ci_high)),
                    number(c.delta().and_then(|d| d.exact)),
                    number(c.equivalent().and_then(Equivalent::steps)),
                    v.currency.map_or(String::new(), |(_, u)| u.to_string()),
                    c.note(v),
                ]);
                out.push_str(&row.iter().map(|s| field(s)).collect::<Vec<_>>().join(","));
                out.push('\n');
            }
        }
    }
    out
}

fn write_report(v: &Valuation, out: &Path, analysis: &str, asked: serde_json::Value) -> Result<()> {
    use battlelab::report::frame::{ColumnKind, LongFrame};
    report::write_atomically(out, |dir| {
        let axes: Vec<&str> = v.plan.axes.iter().map(String::as_str).collect();
        let runs: Vec<&[AxisValue]> = v
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
            ("note", ColumnKind::Text),
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
                        .float("with", c.with().map(Estimate::best))
                        .float("delta", c.delta().map(Estimate::best))
                        .float("ci_low", c.delta().map(|d| d.ci_low))
                        .float("ci_high", c.delta().map(|d| d.ci_high))
                        .float("exact_delta", c.delta().and_then(|d| d.exact))
                        .float("equivalent", c.equivalent().and_then(Equivalent::steps))
                        .text("equivalent_unit", v.currency.map_or("", |(_, u)| u))
                        .text("note", &c.note(v))
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
                    let delta = c.delta()?;
                    Some(battlelab::chart::TornadoBar {
                        label: m.name(),
                        value: delta.best(),
                        ci_low: delta.ci_low,
                        ci_high: delta.ci_high,
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
        report::write_text(dir, "tables.md", &pricing::markdown(v))?;
        report::write_text(
            dir,
            "value.json",
            &(serde_json::to_string_pretty(&pricing::to_json(v)).expect("JSON") + "\n"),
        )?;
        report::write_text(dir, "analysis.toml", analysis)?;
        report::write_manifest(
            dir,
            &json!({"tool": "battlelab", "kind": "value", "name": v.name, "analysis": v.file, "system": v.system, "seed": v.seed, "trials": v.trials}),
        )?;
        // The panel recomputes the analysis's runs and reprices the edited file.
        let source =
            report::tryit::Source::of_value_report(Path::new(&v.file), analysis, asked.clone());
        report::index::write_index_with(dir, None, None, Some(&source))
    })?;
    Ok(())
}
