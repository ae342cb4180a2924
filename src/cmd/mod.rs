//! The subcommands, one module each, and what they share: output that survives a closed
//! pipe, exit codes, the worker pool.

mod check;
mod compare;
mod equilibrium;
mod keys;
mod merge;
mod run;
mod solve;
mod table;
mod validate;
mod value;

use std::sync::Arc;

use anyhow::{Context, Result};

use battlelab::report::ReportError;
use battlelab::sim::{Interrupted, RunControl};
use battlelab::systems::RunError;
use battlelab::table::TableError;

use crate::cli::{Cli, Command};

/// A command line or input that cannot work as given (exit 2): the message says what to
/// change.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A [`UsageError`] with `message`.
pub fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

/// Exit code for input the user must fix (also clap's usage errors).
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code after Ctrl-C, SIGTERM or SIGHUP, as shells expect after Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = battlelab::interrupt::EXIT_INTERRUPTED as u8;

/// Runs the command the user typed.
pub fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Validate { file } => validate::validate(&file),
        Command::Merge(args) => merge::merge(args),
        Command::Compare(args) => compare::compare(args),
        Command::Check(args) => check::check(args),
        Command::Value(args) => value::value(args),
        Command::Solve(args) => solve::solve(args),
        Command::Table(command) => table::table(command),
        Command::Equilibrium(args) => equilibrium::equilibrium(args),
        Command::Keys(args) => keys::keys(args),
        Command::New(args) => keys::new(args),
        Command::Schema { system } => keys::schema(&system),
    }
}

/// The exit code an error ends the process with: 130 after a stop request, 2 for input
/// to fix, 1 for anything else (a failure to write).
pub fn exit_code(error: &anyhow::Error) -> u8 {
    let interrupted = battlelab::interrupt::requested()
        || error.chain().any(|e| {
            e.downcast_ref::<Interrupted>().is_some()
                || matches!(
                    e.downcast_ref::<ReportError>(),
                    Some(ReportError::Interrupted(_))
                )
                || matches!(e.downcast_ref::<RunError>(), Some(RunError::Interrupted(_)))
                || matches!(
                    e.downcast_ref::<TableError>(),
                    Some(TableError::Interrupted(_))
                )
        });
    if interrupted {
        return EXIT_INTERRUPTED;
    }
    let bad_input = error.chain().any(|e| {
        e.downcast_ref::<battlelab::analysis::AnalysisError>()
            .is_some()
            || e.downcast_ref::<UsageError>().is_some()
            || e.downcast_ref::<battlelab::output::OutputError>().is_some()
            || e.downcast_ref::<battlelab::engine::shard::ShardError>()
                .is_some()
            || matches!(
                e.downcast_ref::<RunError>(),
                Some(RunError::Shard(_) | RunError::Report(ReportError::Refused(_)))
            )
            || matches!(
                e.downcast_ref::<ReportError>(),
                Some(ReportError::Refused(_))
            )
            || e.downcast_ref::<TableError>()
                .is_some_and(|t| !matches!(t, TableError::Interrupted(_)))
    });
    if bad_input {
        EXIT_BAD_INPUT
    } else {
        1
    }
}

/// Writes a line to stderr. A closed or full stderr is not worth failing over.
pub fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Writes a command's output to stdout, unless a stop was requested first (then nothing
/// is printed and the command ends as interrupted).
pub fn emit(text: &str) -> Result<()> {
    if battlelab::interrupt::requested() {
        return Err(Interrupted.into());
    }
    print_out(text)
}

/// Writes to stdout. A closed pipe (`battlelab … | head`) is not an error: the reader has
/// what it wanted. Any other failure (a full disk) is.
pub fn print_out(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("could not write to standard output")
        }
        _ => Ok(()),
    }
}

/// A run control for one command; signals reach it through `battlelab::interrupt`.
pub fn interruptible() -> Arc<RunControl> {
    Arc::new(RunControl::default())
}

/// The worker pool: `threads`, or one per core.
pub fn pool(threads: Option<u64>) -> Result<(rayon::ThreadPool, usize)> {
    let threads = threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| t as usize,
    );
    let pool = battlelab::sim::thread_pool(threads).context("could not start worker threads")?;
    Ok((pool, threads))
}

/// The summary a command prints after writing a folder.
pub fn print_written(
    out: &std::path::Path,
    files: &[std::path::PathBuf],
    seconds: f64,
) -> Result<()> {
    let mut summary = format!(
        "wrote {} ({} files) in {seconds:.1} s\n",
        out.display(),
        files.len()
    );
    for file in files {
        summary += &format!("  {}\n", file.display());
    }
    // The folder is in place: a stop request now changes nothing.
    print_out(&summary)
}
