//! The one report pipeline: a plan's counts become the same folder for every system.
//!
//! Why this module exists: every system's report has the same spine — results with
//! Wilson intervals beside the exact values, metrics, distributions, the analysis file
//! itself, a manifest and a run-info file — so it is written once, here, from
//! [`System::outcomes`] and [`System::distributions`]. A system adds only what is its
//! own (an expectations frame, charts, rulebook tables) through [`SystemReport::extras`].
//!
//! Last, `index.html` (`report::index`) shows the folder on one page.
//!
//! Same seed, same bytes: nothing in the data files, `tables.md`, `manifest.json` or
//! `index.html` depends on the machine, the thread count or the shard split; wall time, threads and
//! the path the analysis was read from go in `run_info.json` alone.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::engine::driver::PlanResults;
use crate::engine::{Plan, System};
use crate::frame::LongFrame;
use crate::report::{self, ReportError};
use crate::sim::BLOCK_TRIALS;
use crate::stats::{wilson_interval, Z95};

// Named beside the manifest (the index reads it too), used here under its old path.
pub use crate::output::ANALYSIS_COPY;
/// What differs between two runs of the same plan: never in the manifest.
pub const RUN_INFO: &str = "run_info.json";

/// A system's own part of its report.
pub trait SystemReport: System + Sized {
    /// Writes the system's own frames, charts (each drawn at a path from `charts`, which
    /// records the variant it shows) and rulebook tables (`tables.md`, `tables.xlsx`)
    /// into `dir`.
    fn extras(
        &self,
        results: &PlanResults<Self>,
        dir: &Path,
        charts: &report::Charts,
    ) -> Result<(), ReportError>;
}

/// Where and how a run went: the contents of `run_info.json`.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// The analysis file as the user named it.
    pub analysis_path: PathBuf,
    pub threads: usize,
    /// When the command started; the wall time is taken when the folder is written.
    pub started: Instant,
    /// How the counts were made: "one machine", or the shards merged.
    pub how: String,
}

/// Hex SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes the whole report folder of `system` at `out`, atomically.
pub fn write_report<S: SystemReport>(
    system: &S,
    analysis_text: &str,
    results: &PlanResults<S>,
    out: &Path,
    info: &RunInfo,
) -> Result<Vec<PathBuf>, ReportError> {
    let plan = system.plan();
    report::write_atomically(out, |dir| {
        write_frames(system, &plan, results, dir)?;
        let charts = report::Charts::new(dir);
        system.extras(results, dir, &charts)?;
        report::write_text(dir, ANALYSIS_COPY, analysis_text)?;
        report::write_manifest(dir, &manifest(system, &plan, analysis_text, results))?;
        let run_info = json!({
            "analysis_path": info.analysis_path.display().to_string(),
            "threads": info.threads,
            "wall_time_seconds": (info.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            "made_by": info.how,
        });
        report::write_text(
            dir,
            RUN_INFO,
            &(serde_json::to_string_pretty(&run_info).expect("JSON values serialise") + "\n"),
        )?;
        // Last: the page shows every file written above.
        let checks = crate::report::index::expectations(system, analysis_text, results);
        let mut tryit = crate::report::tryit::Source::of(&info.analysis_path, analysis_text);
        tryit.live = charts.live_cells().map(|mut live| {
            // The runs the cells read, as the panel's results name them.
            live["runs"] = plan
                .runs
                .iter()
                .map(|key| {
                    json!({
                        "variant": key.variant.as_str(),
                        "coordinates": key.coordinates.iter().map(crate::analysis::AxisValue::to_json).collect::<Vec<_>>(),
                    })
                })
                .collect();
            live
        });
        crate::report::index::write_index_with(
            dir,
            Some(&checks),
            Some(&charts.drawn()),
            Some(&tryit),
        )
    })
}

/// The manifest: what the report is of, and nothing that varies between machines.
fn manifest<S: System>(
    system: &S,
    plan: &Plan,
    analysis_text: &str,
    results: &PlanResults<S>,
) -> serde_json::Value {
    let header = system.header();
    let mut manifest = json!({
        "tool": "battlelab",
        "version": env!("CARGO_PKG_VERSION"),
        "name": header.name,
        "system": header.system,
        "analysis": ANALYSIS_COPY,
        "analysis_sha256": sha256(analysis_text.as_bytes()),
        "rules_hash": sha256(system.rules().to_string().as_bytes()),
        "seed": results.seed,
        "trials": results.trials,
        "block_trials": BLOCK_TRIALS,
        "variants": plan.variants(),
        "axes": plan.axes,
        "runs": plan.runs.len(),
        "exact_runs": results.exact.iter().filter(|e| e.is_some()).count(),
    });
    if let Some(precision) = results.precision {
        // Runs taken to a precision: what each took (trials is the cap then), and what
        // they reached — decided on the counts alone, so the same on every machine.
        manifest["precision"] = json!(precision.target);
        manifest["run_trials"] = json!(results.run_trials);
        manifest["precision_reached"] = json!(precision.reached);
        manifest["runs_short_of_precision"] = json!(precision.short_runs);
    }
    manifest
}

/// `results`, `metrics` and `distributions`, in the schema every system shares.
fn write_frames<S: System>(
    system: &S,
    plan: &Plan,
    results: &PlanResults<S>,
    dir: &Path,
) -> Result<(), ReportError> {
    let axes: Vec<&str> = plan.axes.iter().map(String::as_str).collect();
    use crate::frame::ColumnKind::{Float, Int, OptText, Text};
    let runs: Vec<&[crate::analysis::AxisValue]> =
        plan.runs.iter().map(|r| r.coordinates.as_slice()).collect();
    let mut outcomes = LongFrame::new(&axes).typed_by(&runs).with_columns(&[
        ("outcome", Text),
        ("trials", Int),
        ("count", Int),
        ("probability", Float),
        ("ci_low", Float),
        ("ci_high", Float),
        ("exact", Float),
        ("exact_fraction", OptText),
    ]);
    let mut metrics = LongFrame::new(&axes).typed_by(&runs).with_columns(&[
        ("metric", Text),
        ("trials", Int),
        ("mean", Float),
        ("exact_mean", Float),
    ]);
    let mut distributions = LongFrame::new(&axes).typed_by(&runs).with_columns(&[
        ("metric", Text),
        ("value", Int),
        ("count", Int),
        ("probability", Float),
        ("exact", Float),
    ]);
    for (run, key) in plan.runs.iter().enumerate() {
        let n = results.run_trials[run];
        let counts = &results.counts[run];
        let exact = results.exact[run].as_ref();
        for o in system.outcomes(run, counts, exact) {
            let (lo, hi) = wilson_interval(o.count, n, Z95);
            outcomes
                .row(&key.variant, &key.coordinates)
                .text("outcome", &o.name)
                .int("trials", n as i64)
                .int("count", o.count as i64)
                .float("probability", Some(o.count as f64 / n as f64))
                .float("ci_low", Some(lo))
                .float("ci_high", Some(hi))
                .float("exact", o.exact)
                .text_opt("exact_fraction", o.fraction.as_deref())
                .finish();
        }
        for d in system.distributions(run, counts, exact) {
            metrics
                .row(&key.variant, &key.coordinates)
                .text("metric", &d.metric)
                .int("trials", d.trials() as i64)
                .float("mean", Some(d.mean()))
                .float("exact_mean", d.exact_mean())
                .finish();
            for (i, &count) in d.counts.iter().enumerate() {
                distributions
                    .row(&key.variant, &key.coordinates)
                    .text("metric", &d.metric)
                    .int("value", (d.first + i as u64) as i64)
                    .int("count", count as i64)
                    .float("probability", Some(count as f64 / n as f64))
                    .float("exact", d.exact.as_ref().and_then(|e| e.get(i).copied()))
                    .finish();
            }
        }
    }
    let name = system.header().system;
    let error = report::frame_error(dir);
    report::write_frame(dir, "results", &mut outcomes.build(name).map_err(error)?)?;
    report::write_frame(dir, "metrics", &mut metrics.build(name).map_err(error)?)?;
    report::write_frame(
        dir,
        "distributions",
        &mut distributions.build(name).map_err(error)?,
    )
}
