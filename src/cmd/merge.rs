//! `battlelab merge DIR...`: add up the shards of one run and write its report, byte for
//! byte the report one machine would have written.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};

use battlelab::engine::shard::{self, ShardError, ShardIdentity};
use battlelab::pipeline::{RunInfo, ANALYSIS_COPY};
use battlelab::systems::{AnalysisText, ShardFolder};

use super::{interruptible, note, pool, print_written};
use crate::cli::MergeArgs;

/// Reads one shard folder.
fn read_shard(dir: &Path) -> Result<(ShardFolder, String), ShardError> {
    let label = dir.display().to_string();
    let unreadable = |message: String| ShardError::Unreadable {
        shard: label.clone(),
        message,
    };
    let read = |name: &str| {
        let cap = if name == "manifest.json" {
            battlelab::output::MAX_MANIFEST_BYTES
        } else {
            battlelab::output::MAX_READ_BACK_BYTES
        };
        battlelab::output::read_capped(&dir.join(name), cap)
            .map_err(|e| unreadable(format!("cannot read its {name}: {e} (is this a shard folder from `battlelab run --shard`?)")))
    };
    let manifest = read("manifest.json")?;
    let identity: ShardIdentity = serde_json::from_str(&manifest)
        .map_err(|e| unreadable(format!("its manifest.json is not a shard's: {e}")))?;
    let counts = read(shard::COUNTS_FILE)?;
    let analysis = read(ANALYSIS_COPY)?;
    Ok((
        ShardFolder {
            label,
            identity,
            counts,
        },
        analysis,
    ))
}

pub fn merge(args: MergeArgs) -> Result<()> {
    let started = Instant::now();
    let mut shards = Vec::with_capacity(args.shards.len());
    let mut texts = Vec::with_capacity(args.shards.len());
    for dir in &args.shards {
        let (folder, text) = read_shard(dir)?;
        shards.push(folder);
        texts.push(text);
    }
    let labelled: Vec<(String, ShardIdentity)> = shards
        .iter()
        .map(|s| (s.label.clone(), s.identity.clone()))
        .collect();
    shard::check_complete(&labelled)?;
    let first = &shards[0].identity;
    // The analysis as the shards ran it, under the name its user gave it.
    let analysis = AnalysisText {
        path: PathBuf::from(&first.analysis_file),
        text: texts.swap_remove(0),
    };
    let study = battlelab::systems::parse(&analysis.path, &analysis.text)
        .with_context(|| format!("the analysis carried by {}", shards[0].label))?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(study.header().name));
    battlelab::output::check_target(&out, &[])?;
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
        analysis_path: PathBuf::from(&first.analysis_file),
        threads,
        started,
        how: format!("{} shards merged", shards.len()),
    };
    let files = pool
        .install(|| study.merge(&analysis, &shards, &control, &out, &info))
        .with_context(|| format!("no report was written at {}", out.display()))?;
    if !args.quiet {
        print_written(&out, &files, started.elapsed().as_secs_f64())?;
    }
    Ok(())
}
