//! `battlelab check FILE|DIR...`: decide every `[[expect]]` of the analyses — exactly
//! where a run is exact, else by the sequential test of `battlelab_core::engine::expect`
//! — and print PASS / FAIL / UNDECIDED per expectation. Exit 0 when all pass, 1 when any
//! fails or is undecided, 2 on bad input.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};

use battlelab::engine::expect::{self, Expectation, RunVerdict, Status, Target};
use battlelab::progress::ProgressWatcher;
use battlelab::sim::BLOCK_TRIALS;

use super::{emit, interruptible, pool};
use crate::cli::CheckArgs;

/// The analysis files named: files as given, folders' `.toml` files in name order.
fn files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)
                .with_context(|| format!("cannot list {}", input.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.is_file())
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(input.clone());
        }
    }
    Ok(out)
}

/// One decided expectation, for the text and JUnit outputs.
struct Decided {
    file: PathBuf,
    expectation: Expectation,
    status: Status,
    detail: String,
}

fn describe_run(study: &dyn battlelab::systems::Study, run: usize) -> String {
    let plan = study.plan();
    let key = &plan.runs[run];
    let mut parts: Vec<String> = Vec::new();
    if plan.variants().len() > 1 {
        parts.push(format!("variant={}", key.variant));
    }
    for (axis, value) in plan.axes.iter().zip(&key.coordinates) {
        if !matches!(value, battlelab::analysis::AxisValue::Unset) {
            parts.push(format!("{axis}={value}"));
        }
    }
    if parts.is_empty() {
        "the run".into()
    } else {
        parts.join(", ")
    }
}

fn detail(
    study: &dyn battlelab::systems::Study,
    e: &Expectation,
    v: &RunVerdict,
    runs: usize,
) -> String {
    let what = match &e.target {
        Target::Outcome(o) => format!("P({o})"),
        Target::Metric(m) => format!("mean {m}"),
    };
    let at = describe_run(study, v.run);
    let of = if runs > 1 {
        format!(" ({} runs)", runs)
    } else {
        String::new()
    };
    if v.exact {
        format!(
            "at {at}{of}: {what} = {} exactly{}, 0 trials",
            v.fraction
                .clone()
                .unwrap_or_else(|| format!("{:.6}", v.estimate)),
            if v.fraction.is_some() {
                format!(" ({:.6})", v.estimate)
            } else {
                String::new()
            }
        )
    } else {
        format!(
            "at {at}{of}: {what} ≈ {:.4}, {:.0}% interval [{:.4}, {:.4}], {} trials",
            v.estimate,
            e.confidence * 100.0,
            v.interval.0,
            v.interval.1,
            v.trials
        )
    }
}

pub fn check(args: CheckArgs) -> Result<()> {
    let (pool, _) = pool(args.threads)?;
    let max_blocks = args.max_trials.div_ceil(BLOCK_TRIALS).max(1);
    let mut decided: Vec<Decided> = Vec::new();
    let mut text = String::new();
    for file in files(&args.inputs)? {
        let (study, analysis) = battlelab::systems::load(&file)?;
        let expectations = battlelab::systems::expectations(&*study, &file, &analysis.text)?;
        if expectations.is_empty() {
            text += &format!("{}: no expectations\n", file.display());
            continue;
        }
        let seed = args.seed.unwrap_or(study.header().seed);
        for e in expectations {
            let control = interruptible();
            let watcher = ProgressWatcher::start(
                Arc::clone(&control),
                max_blocks * BLOCK_TRIALS * e.runs.len() as u64,
                args.quiet,
            );
            let trials = max_blocks * BLOCK_TRIALS;
            let verdicts = pool.install(|| {
                expect::decide(&e, max_blocks, &mut |run, blocks, with_exact| {
                    study.arm_blocks(run, blocks, trials, seed, with_exact, &control)
                })
            });
            watcher.finish();
            let verdicts = verdicts?;
            let (status, v) = expect::overall(&verdicts);
            let detail = detail(&*study, &e, v, e.runs.len());
            text += &format!(
                "{:<9} {}:{}  {}\n          {}\n",
                status.name(),
                file.display(),
                e.line,
                e.written,
                detail
            );
            decided.push(Decided {
                file: file.clone(),
                expectation: e,
                status,
                detail,
            });
        }
    }
    let count = |s: Status| decided.iter().filter(|d| d.status == s).count();
    text += &format!(
        "\n{} expectation(s): {} passed, {} failed, {} undecided\n",
        decided.len(),
        count(Status::Pass),
        count(Status::Fail),
        count(Status::Undecided)
    );
    if let Some(path) = &args.junit {
        battlelab::output::write_owned_file(path, &junit(&decided), JUNIT_MARK)?;
    }
    emit(&text)?;
    if count(Status::Fail) + count(Status::Undecided) > 0 {
        return Err(anyhow::Error::new(ExpectationsFailed {
            failed: count(Status::Fail),
            undecided: count(Status::Undecided),
        }));
    }
    Ok(())
}

/// Some expectation did not pass: exit 1.
#[derive(Debug, thiserror::Error)]
#[error("{failed} expectation(s) failed and {undecided} undecided")]
pub struct ExpectationsFailed {
    failed: usize,
    undecided: usize,
}

/// What marks a JUnit file as battlelab's (so a later `check` may replace it).
const JUNIT_MARK: &str = "<testsuites name=\"battlelab check\">";

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JUnit XML: one test suite per file, one test case per expectation.
fn junit(decided: &[Decided]) -> String {
    let mut files: Vec<&Path> = Vec::new();
    for d in decided {
        if !files.contains(&d.file.as_path()) {
            files.push(&d.file);
        }
    }
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"battlelab check\">\n",
    );
    for file in files {
        let cases: Vec<&Decided> = decided.iter().filter(|d| d.file == file).collect();
        let failures = cases.iter().filter(|d| d.status == Status::Fail).count();
        let errors = cases
            .iter()
            .filter(|d| d.status == Status::Undecided)
            .count();
        out += &format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">\n",
            xml(&file.display().to_string()),
            cases.len()
        );
        for d in cases {
            out += &format!(
                "    <testcase classname=\"{}\" name=\"line {}: {}\">",
                xml(&file.display().to_string()),
                d.expectation.line,
                xml(&d.expectation.written)
            );
            match d.status {
                Status::Pass => out += &format!("<system-out>{}</system-out>", xml(&d.detail)),
                Status::Fail => {
                    out += &format!("<failure message=\"{}\"/>", xml(&d.detail));
                }
                Status::Undecided => {
                    out += &format!(
                        "<error message=\"undecided at the trial cap: {}\"/>",
                        xml(&d.detail)
                    );
                }
            }
            out += "</testcase>\n";
        }
        out += "  </testsuite>\n";
    }
    out + "</testsuites>\n"
}
