//! A process-wide stop request: Ctrl-C (SIGINT), SIGTERM and SIGHUP.
//!
//! Why this module exists: `timeout`, systemd, `docker stop` and a closed terminal send
//! one signal and expect the process to end, whatever it is doing — computing, writing a
//! report, or blocked reading an analysis file from a FIFO or a pipe that never closes.
//! Most phases can simply end: they have written nothing. A phase that has something to
//! clean up (a staging folder, a temporary file) must not be cut short, so it holds a
//! [`Deferral`]: while one is held a signal only raises the flag ([`requested`]) that the
//! phase polls — it removes what it made and returns [`Interrupted`] — and
//! the process ends as soon as the last deferral is dropped. Outside any deferral the
//! first signal ends the process at once, through the hook given to [`install`] (which
//! says what was stopped), with the shell's code for the signal: 130 for SIGINT, 143 for
//! SIGTERM, 129 for SIGHUP. A second signal ends it at once in any phase; a staging
//! folder left then is unlocked and is removed by the next run.
//!
//! Library code and tests that never call [`install`] are never stopped by it; the Monte
//! Carlo driver's own [`crate::sim::RunControl::stop`] stays for them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// A signal that asks the process to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: Ctrl-C.
    Interrupt,
    /// SIGTERM: `timeout`, `kill`, systemd, `docker stop`, a cluster scheduler.
    Terminate,
    /// SIGHUP: the terminal closed.
    Hangup,
}

impl Signal {
    /// The signal's number (the same on every Unix).
    pub fn number(self) -> i32 {
        match self {
            Signal::Interrupt => 2,
            Signal::Terminate => 15,
            Signal::Hangup => 1,
        }
    }

    /// The exit code shells give a process ended by this signal: 128 + its number (130
    /// for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
    pub fn exit_code(self) -> i32 {
        128 + self.number()
    }

    fn from_number(number: i32) -> Option<Self> {
        [Signal::Interrupt, Signal::Terminate, Signal::Hangup]
            .into_iter()
            .find(|s| s.number() == number)
    }
}

/// Exit code of a process stopped by Ctrl-C (SIGINT), as shells expect.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Polled by every long loop: one relaxed load.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// The signal received and the deferrals held, decided under one lock: a signal never
/// ends the process between a phase's deferral and the work it guards.
struct State {
    signal: Option<Signal>,
    deferrals: usize,
}

static STATE: Mutex<State> = Mutex::new(State {
    signal: None,
    deferrals: 0,
});

/// What ends the process on a stop: the binary's hook (it says what was stopped).
static ON_STOP: OnceLock<fn(Signal)> = OnceLock::new();

fn state() -> MutexGuard<'static, State> {
    // A panic while holding the lock leaves plain data behind; go on with it.
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Ends the process for `signal`: the hook, then the signal's exit code should the hook
/// return. Called with the state lock held, so no deferral starts meanwhile.
fn end(signal: Signal) -> ! {
    if let Some(hook) = ON_STOP.get() {
        hook(signal);
    }
    std::process::exit(signal.exit_code())
}

/// Whether a stop has been requested (by a signal).
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// The signal that requested the stop, if one did.
pub fn signal() -> Option<Signal> {
    state().signal
}

/// The exit code for the stop requested: the signal's (143 for SIGTERM, …), or 130 for
/// a stop without one.
pub fn exit_code() -> i32 {
    signal().map_or(EXIT_INTERRUPTED, Signal::exit_code)
}

/// Makes SIGINT, SIGTERM and SIGHUP stop the process (see the module docs): `on_stop`
/// is called with the signal when the process is to end now, and should say what was
/// stopped and exit (with [`Signal::exit_code`]; the process exits so if it returns).
/// Installing twice in one process fails (the first stays).
#[cfg(unix)]
pub fn install(on_stop: fn(Signal)) -> std::io::Result<()> {
    ON_STOP
        .set(on_stop)
        .map_err(|_| std::io::Error::other("the stop handler is installed already"))?;
    let mut signals = signal_hook::iterator::Signals::new([
        Signal::Interrupt.number(),
        Signal::Terminate.number(),
        Signal::Hangup.number(),
    ])?;
    std::thread::Builder::new()
        .name("battlelab-signals".into())
        .spawn(move || {
            for number in signals.forever() {
                if let Some(signal) = Signal::from_number(number) {
                    receive(signal);
                }
            }
        })?;
    Ok(())
}

/// Without Unix signals there is nothing to install: the system's default ends the
/// process (and leaves no report: it is never swapped in).
#[cfg(not(unix))]
pub fn install(_on_stop: fn(Signal)) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "stop signals are handled on Unix only",
    ))
}

/// One signal arrives: the first asks (or ends the process outside any deferral), a
/// second ends it at once.
#[cfg_attr(not(unix), allow(dead_code))]
fn receive(signal: Signal) {
    let mut state = state();
    if let Some(first) = state.signal {
        // The user asked twice: do not wait for the phase to notice.
        end(first);
    }
    state.signal = Some(signal);
    REQUESTED.store(true, Ordering::SeqCst);
    if state.deferrals == 0 {
        end(signal);
    }
}

/// A phase that cleans up after itself on a stop (see the module docs). While any is
/// held, a first signal only raises the flag; dropping the last one with a stop pending
/// ends the process.
#[must_use = "a deferral guards the phase only while it is held"]
pub struct Deferral(());

/// Holds off the end of the process until the returned [`Deferral`] is dropped. The
/// phase it guards must poll [`requested`] and give up promptly, or be short.
pub fn defer() -> Deferral {
    state().deferrals += 1;
    Deferral(())
}

impl Drop for Deferral {
    fn drop(&mut self) {
        let mut state = state();
        state.deferrals -= 1;
        if state.deferrals == 0 {
            if let Some(signal) = state.signal {
                if ON_STOP.get().is_some() {
                    end(signal);
                }
            }
        }
    }
}

/// The run was stopped through [`RunControl::stop`](crate::sim::RunControl::stop) before
/// it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the run was interrupted before it finished")]
pub struct Interrupted;

/// The stop flag as an error, for `?` in loops that return `Result`.
#[inline]
pub fn check() -> Result<(), Interrupted> {
    if requested() {
        Err(Interrupted)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signal_exits_with_the_shells_code() {
        assert_eq!(Signal::Interrupt.exit_code(), 130);
        assert_eq!(Signal::Terminate.exit_code(), 143);
        assert_eq!(Signal::Hangup.exit_code(), 129);
        for s in [Signal::Interrupt, Signal::Terminate, Signal::Hangup] {
            assert_eq!(Signal::from_number(s.number()), Some(s));
        }
        assert_eq!(Signal::from_number(9), None);
    }
}
