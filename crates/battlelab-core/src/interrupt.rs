//! A process-wide stop request: Ctrl-C (SIGINT), SIGTERM and SIGHUP.
//!
//! Why this module exists: a run has phases that do not go through the Monte Carlo
//! driver — parsing, exact enumeration, the `optimal` reserve solver, writing the report —
//! and every one of them must stop within about a second when the user (or a closed
//! terminal, `timeout`, a cluster scheduler) asks. Signals are process-wide, so the
//! request is one atomic flag: long loops poll [`requested`] (a relaxed load, cheap enough
//! to check every few thousand steps) and give up early; the binary then exits 130 and
//! the report folder is never swapped in (see the `battlelab` crate's `output`). A second signal ends
//! the process at once, for a user who does not want to wait.
//!
//! Library code and tests that never call [`install`] are never stopped by it; the Monte
//! Carlo driver's own [`crate::sim::RunControl::stop`] stays for them.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Exit code of a process stopped by a signal, as shells expect after Ctrl-C.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Whether a stop has been requested (by a signal).
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Makes SIGINT, SIGTERM and SIGHUP request a stop; a second one exits at once with
/// [`EXIT_INTERRUPTED`]. Installing twice in one process fails (the first stays).
pub fn install() -> Result<(), ctrlc::Error> {
    ctrlc::set_handler(|| {
        if REQUESTED.swap(true, Ordering::Relaxed) {
            // The user asked twice: do not wait for the phase to notice. A staging
            // folder left behind is unlocked now and is removed by the next run.
            std::process::exit(EXIT_INTERRUPTED);
        }
    })
}

/// The stop flag as an error, for `?` in loops that return `Result`.
#[inline]
pub fn check() -> Result<(), crate::sim::Interrupted> {
    if requested() {
        Err(crate::sim::Interrupted)
    } else {
        Ok(())
    }
}
