//! The subcommands, one module each, and what they share: output that survives a closed
//! pipe, exit codes, the worker pool.

mod check;
mod compare;
mod equilibrium;
mod keys;
mod merge;
mod playground;
mod run;
mod solve;
mod table;
mod validate;
mod value;

use std::path::Path;
use std::sync::{Arc, Mutex};

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

/// What the process says when a stop ends it: "stopped" unless the command writes a
/// report (then whether it was written). Read by [`on_stop`], which may run on the signal
/// thread at any moment, so it is kept here rather than passed along.
static STOP_NOTE: Mutex<String> = Mutex::new(String::new());

/// Sets what a stop from now on says.
pub fn stop_note(note: impl Into<String>) {
    *STOP_NOTE.lock().unwrap_or_else(|p| p.into_inner()) = note.into();
}

/// What a stop now says.
pub fn current_stop_note() -> String {
    let note = STOP_NOTE.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if note.is_empty() {
        "stopped".into()
    } else {
        note
    }
}

/// The stop hook ([`battlelab::interrupt::install`]): says what was stopped and ends the
/// process with the signal's exit code (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
pub fn on_stop(signal: battlelab::interrupt::Signal) {
    battlelab::progress::clear_for_exit();
    note(&current_stop_note());
    std::process::exit(signal.exit_code());
}

/// Runs `write`, which writes a report folder at `out` (and may run the whole study
/// first), as a phase that cleans up after itself on a stop: a signal meanwhile is left to
/// it (it polls, removes its staging folder and returns interrupted), and the process
/// ends as it returns, saying whether the report was written.
pub fn writing_report<T>(out: &Path, write: impl FnOnce() -> Result<T>) -> Result<T> {
    stop_note(NO_REPORT);
    let deferral = battlelab::interrupt::defer();
    let written = write();
    if written.is_ok() {
        stop_note(format!(
            "stopped after the report at {} was written",
            out.display()
        ));
    }
    drop(deferral);
    written
}

/// What a stop says while a command's report is not written.
pub const NO_REPORT: &str = "stopped; no report was written";

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
        Command::Playground(args) => playground::playground(args),
    }
}

/// The exit code an error ends the process with: the signal's after a stop request (130
/// SIGINT, 143 SIGTERM, 129 SIGHUP), 2 for input to fix, 1 for anything else (a failure
/// to write).
pub fn exit_code(error: &anyhow::Error) -> u8 {
    if battlelab::interrupt::requested() || is_interrupted(error) {
        return battlelab::interrupt::exit_code() as u8;
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

/// Whether `error` is a stop (a phase gave up on a stop request).
pub fn is_interrupted(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
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
    })
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

/// The summary a command prints after writing a folder. The folder is complete by then,
/// so a standard output that cannot take the summary (a full disk, EIO) is a warning on
/// stderr, not a failure: the command still exits 0.
pub fn print_written(out: &Path, files: &[std::path::PathBuf], seconds: f64) {
    let mut summary = format!(
        "wrote {} ({} files) in {seconds:.1} s\n",
        out.display(),
        files.len()
    );
    for file in files {
        summary += &format!("  {}\n", file.display());
    }
    // The folder is in place: a stop request now changes nothing.
    if let Err(error) = print_out(&summary) {
        note(&format!(
            "warning: the report at {} is complete, but its summary could not be printed: {:#}",
            out.display(),
            error
        ));
    }
}
