//! `battlelab table …`: one roll (or one battle) of any table a system declares, exactly,
//! and simulated with `--trials` through the engine's driver; printed as text, CSV, JSON
//! or Markdown. Nothing here knows a table: the declaration reads and validates the
//! values, the prepared table computes itself, one exporter per format prints it.

use std::sync::Arc;

use anyhow::Result;

use battlelab::one_roll::Sampling;
use battlelab::progress::ProgressWatcher;
use battlelab::table;

use super::{emit, interruptible, pool};
use crate::cli::TableCommand;

/// Runs one `table` subcommand.
pub fn table(command: TableCommand) -> Result<()> {
    let TableCommand {
        table,
        given,
        common,
    } = command;
    let values = table.values(given.iter().map(|(name, value)| (*name, value.as_str())))?;
    let sampling = Sampling {
        trials: common.trials,
        seed: common.seed,
    };
    let prepared = table.prepare(&values, sampling)?;
    let (pool, _) = pool(common.threads)?;
    let control = interruptible();
    // Every run of the table's plan simulates `--trials` trials.
    let watcher = ProgressWatcher::start(
        Arc::clone(&control),
        common
            .trials
            .unwrap_or(0)
            .saturating_mul(prepared.runs() as u64),
        common.trials.is_none(),
    );
    let report = pool.install(|| prepared.tabulate(&control));
    watcher.finish();
    let exporter = table::exporter(common.format.name()).expect("every Format has an exporter");
    emit(&exporter.export(&report?))
}
