//! `battlelab merge DIR...`: add up the shards of one run and write its report, byte for
//! byte the report one machine would have written.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};

use battlelab::engine::shard::{self, ShardError, ShardIdentity};
use battlelab::output::MANIFEST;
use battlelab::pipeline::{RunInfo, ANALYSIS_COPY};
use battlelab::systems::{AnalysisText, ShardFolder};

use super::{interruptible, note, pool, print_written, stop_note, writing_report, NO_REPORT};
use crate::cli::MergeArgs;

/// Why a shard folder cannot be read.
fn unreadable(dir: &Path, message: String) -> ShardError {
    ShardError::Unreadable {
        shard: dir.display().to_string(),
        message,
    }
}

/// Reads the file `name` of a shard folder, at most `cap` bytes.
fn read_part(dir: &Path, name: &str, cap: u64) -> Result<String, ShardError> {
    battlelab::output::read_capped(&dir.join(name), cap).map_err(|e| {
        unreadable(
            dir,
            format!("cannot read its {name}: {e} (is this a shard folder from `battlelab run --shard`?)"),
        )
    })
}

/// Reads one shard folder: its identity, counts and analysis (the merge proves each
/// against the hashes its manifest records).
fn read_shard(dir: &Path) -> Result<ShardFolder, ShardError> {
    let manifest = read_part(dir, MANIFEST, battlelab::output::MAX_MANIFEST_BYTES)?;
    let identity: ShardIdentity = serde_json::from_str(&manifest)
        .map_err(|e| unreadable(dir, format!("its {MANIFEST} is not a shard's: {e}")))?;
    let counts = read_part(
        dir,
        shard::COUNTS_FILE,
        battlelab::output::MAX_READ_BACK_BYTES,
    )?;
    let analysis = read_part(dir, ANALYSIS_COPY, battlelab::limits::MAX_FILE_BYTES)?;
    Ok(ShardFolder {
        label: dir.display().to_string(),
        identity,
        counts,
        analysis,
    })
}

pub fn merge(args: MergeArgs) -> Result<()> {
    let started = Instant::now();
    stop_note(NO_REPORT);
    let shards = args
        .shards
        .iter()
        .map(|dir| read_shard(dir))
        .collect::<Result<Vec<_>, _>>()?;
    let first = &shards[0].identity;
    // The analysis as the shards ran it, under the name its user gave it (the merge
    // checks that every shard ran this text).
    // Where the analysis was when the shards ran: files it names by a relative path (a
    // rules file) are found from there.
    let path = if first.analysis_dir.is_empty() {
        PathBuf::from(&first.analysis_file)
    } else {
        PathBuf::from(&first.analysis_dir).join(&first.analysis_file)
    };
    let analysis = AnalysisText {
        path,
        text: shards[0].analysis.clone(),
    };
    let study = battlelab::systems::parse(&analysis.path, &analysis.text)
        .with_context(|| format!("the analysis carried by {}", shards[0].label))?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(study.header().name));
    // Before any work, and never over a shard being merged.
    let inputs: Vec<&Path> = args.shards.iter().map(PathBuf::as_path).collect();
    // A merge writes the run's report, made from its shards.
    battlelab::output::check_target(
        &out,
        &inputs,
        &battlelab::output::Identity::new("run", study.header().name),
        args.replace,
    )?;
    let (pool, threads) = pool(args.threads)?;
    let control = interruptible();
    if !args.quiet {
        note(&format!(
            "merging {} shard(s) of {} ({} runs of {} {} each, seed {})",
            shards.len(),
            battlelab::limits::echo(&first.analysis_file),
            first.runs,
            first.trials,
            study.plan().unit,
            first.seed
        ));
    }
    let info = RunInfo {
        // Where the shards ran it: the page finds the rules file it names from there.
        analysis_path: analysis.path.clone(),
        threads,
        started,
        how: format!("{} shards merged", shards.len()),
    };
    let files = writing_report(&out, || {
        pool.install(|| study.merge(&analysis, &shards, &control, &out, &info))
            .with_context(|| format!("no report was written at {}", out.display()))
    })?;
    if !args.quiet {
        print_written(&out, &files, started.elapsed().as_secs_f64());
    }
    Ok(())
}
