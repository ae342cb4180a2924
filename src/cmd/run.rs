//! `battlelab run FILE`: run an analysis (or one shard of it) and write its folder.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};

use battlelab::engine::driver::Share;
use battlelab::pipeline::RunInfo;
use battlelab::progress::ProgressWatcher;

use battlelab::report::short_number;
use battlelab::systems::Written;

use super::{
    interruptible, note, pool, print_written, stop_note, usage, writing_report, NO_REPORT,
};
use crate::cli::RunArgs;

pub fn run(args: RunArgs) -> Result<()> {
    stop_note(NO_REPORT);
    let battlelab::systems::Loaded {
        study,
        analysis,
        precision: file_precision,
        ..
    } = battlelab::systems::load(&args.file)?;
    let header = study.header();
    let plan = study.plan();
    let trials = args.trials.unwrap_or(header.trials);
    let seed = args.seed.unwrap_or(header.seed);
    let precision = args.precision.or(file_precision);
    if precision.is_some() && args.shard.is_some() {
        let fix = if args.precision.is_some() {
            "leave out --precision".to_string()
        } else {
            format!(
                "remove `precision` from {} (its `trials` then fix the run's size)",
                args.file.display()
            )
        };
        anyhow::bail!(usage(format!(
            "--shard: a run to a precision decides its trials as it goes, so it cannot be split into shards; to shard it, {fix}"
        )));
    }
    let out = args.out.clone().unwrap_or_else(|| match args.shard {
        Some((k, n)) => PathBuf::from("shards")
            .join(header.name)
            .join(format!("shard-{k}-of-{n}")),
        None => PathBuf::from("reports").join(header.name),
    });
    // Before any work: a run that cannot write its folder safely must not start.
    let kind = if args.shard.is_some() { "shard" } else { "run" };
    battlelab::output::check_target(
        &out,
        &[&args.file],
        &battlelab::output::Identity::new(kind, header.name),
        args.replace,
    )?;
    let (pool, threads) = pool(args.threads)?;
    let control = interruptible();
    let share = args.shard.map_or(Share::ALL, |(k, n)| Share {
        index: k - 1,
        count: n,
    });
    if !args.quiet {
        let variants = plan.variants().len();
        let runs = plan.runs.len();
        let shard = args
            .shard
            .map_or(String::new(), |(k, n)| format!(", shard {k} of {n}"));
        let shard = match precision {
            Some(p) => {
                format!("{shard}, each until its 95% intervals are ±{p} (at most {trials} trials)")
            }
            None => shard,
        };
        note(&format!(
            "running {}: {variants} variant(s), {runs} run(s) of {trials} {} each{shard}, seed {seed}, {threads} thread(s)",
            args.file.display(),
            plan.unit,
        ));
        for notice in study.notices() {
            note(&format!("note: {notice}"));
        }
    }
    let started = Instant::now();
    let total = share.trials(plan.runs.len(), trials);
    // The run and its report: a stop meanwhile ends both, and the process ends saying
    // whether the report was written.
    let written = writing_report(&out, || {
        let watcher = ProgressWatcher::start(Arc::clone(&control), total, args.quiet);
        let written = pool.install(|| match args.shard {
            Some(shard) => study
                .run_shard(&analysis, trials, seed, shard, &control, &out)
                .map(|files| Written {
                    files,
                    precision: None,
                }),
            None => {
                let info = RunInfo {
                    analysis_path: args.file.clone(),
                    threads,
                    started,
                    how: "one machine".into(),
                };
                study.run(&analysis, trials, seed, precision, &control, &out, &info)
            }
        });
        watcher.finish();
        written.with_context(|| format!("no folder was written at {}", out.display()))
    })?;
    if let Some(p) = written.precision.filter(|p| !p.reached_target()) {
        // Not an error: the report holds what the cap allowed, and says so too.
        note(&format!(
            "warning: precision target ±{} not reached at the cap of {} trials: {} of {} run(s) stopped short; the widest 95% interval left is ±{:.1e} (raise --trials or loosen --precision)",
            short_number(p.target),
            p.cap,
            p.short_runs,
            plan.runs.len(),
            p.reached
        ));
    }
    if !args.quiet {
        print_written(&out, &written.files, started.elapsed().as_secs_f64());
    }
    Ok(())
}
