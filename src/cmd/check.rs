//! `battlelab check FILE|DIR...`: decide every `[[expect]]` of the analyses — exactly
//! where a run is exact, else by the sequential test of `battlelab_core::engine::expect`
//! — and print PASS / FAIL / UNDECIDED per expectation. Exit 0 when all pass, 1 when any
//! fails or is undecided, 2 on bad input.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Result};

use battlelab::engine::driver::blocks_per_run;
use battlelab::engine::expect::{self, Expectation, RunVerdict, Status, Target};
use battlelab::engine::Plan;
use battlelab::progress::ProgressWatcher;
use battlelab::sim::BLOCK_TRIALS;

use super::{emit, interruptible, pool, usage};
use crate::cli::CheckArgs;

/// The analysis files named: files as given, folders' `.toml` files in name order.
fn files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(|e| usage(format!("cannot list {}: {e}", input.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.is_file())
                .collect();
            if found.is_empty() {
                bail!(usage(format!(
                    "{} holds no analysis files (*.toml)",
                    input.display()
                )));
            }
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

fn describe_run(plan: &Plan, run: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    if plan.variants().len() > 1 {
        parts.push(format!("variant={}", plan.runs[run].variant));
    }
    parts.extend(plan.describe(run).iter().map(|(a, v)| format!("{a}={v}")));
    if parts.is_empty() {
        "the run".into()
    } else {
        parts.join(", ")
    }
}

fn detail(plan: &Plan, e: &Expectation, v: &RunVerdict, runs: usize) -> String {
    let what = match &e.target {
        Target::Outcome(o) => format!("P({o})"),
        Target::Metric(m) => format!("mean {m}"),
    };
    let at = describe_run(plan, v.run);
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
    // Before any work: the JUnit file must be one battlelab may write, and every file
    // must be valid.
    if let Some(path) = &args.junit {
        battlelab::output::check_owned_file(path, JUNIT_MARK)?;
    }
    let loaded = files(&args.inputs)?
        .into_iter()
        .map(|file| Ok((battlelab::systems::load(&file)?, file)))
        .collect::<Result<Vec<_>>>()?;
    let (pool, _) = pool(args.threads)?;
    let max_blocks = blocks_per_run(args.max_trials).max(1);
    let trials = max_blocks * BLOCK_TRIALS;
    let mut decided: Vec<Decided> = Vec::new();
    let mut text = String::new();
    for (loaded, file) in loaded {
        let study = &*loaded.study;
        if loaded.expectations.is_empty() {
            text += &format!("{}: no expectations\n", file.display());
            continue;
        }
        let plan = study.plan();
        let seed = args.seed.unwrap_or(study.header().seed);
        for e in loaded.expectations {
            let control = interruptible();
            let watcher = ProgressWatcher::start(
                Arc::clone(&control),
                trials * e.runs.len() as u64,
                args.quiet,
            );
            let verdicts = pool.install(|| {
                expect::decide(&e, max_blocks, &mut |run, blocks, with_exact| {
                    study.arm_blocks(run, blocks, trials, seed, with_exact, &control)
                })
            });
            watcher.finish();
            let verdicts = verdicts?;
            let (status, v) = expect::overall(&verdicts);
            let detail = detail(&plan, &e, v, e.runs.len());
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

/// `text` as XML character data: markup escaped, and the control characters XML 1.0
/// forbids replaced.
fn xml(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if c < ' ' => '\u{FFFD}',
            c => c,
        })
        .collect::<String>()
        .replace('&', "&amp;")
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
