//! A progress bar for long runs, shown only on a terminal and only after a second.
//!
//! Why this module exists: kernels must not do I/O, so progress is read from the
//! driver's shared trial counter by a watcher thread instead.

use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::sim::RunControl;

/// Whether a bar is on the terminal now (drawn and not yet cleared).
static SHOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Clears the line of a bar still on the terminal, for a process about to end on a stop
/// (its watcher gets no chance to clear it), so the last words are not drawn over.
pub fn clear_for_exit() {
    use std::io::Write;
    if SHOWN.load(Ordering::Relaxed) {
        let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
    }
}

/// Watches a [`RunControl`] and draws a bar on stderr once a run has taken a second.
pub struct ProgressWatcher {
    done: Arc<std::sync::atomic::AtomicBool>,
    handle: Option<thread::JoinHandle<()>>,
}

impl ProgressWatcher {
    /// Starts watching a run of `total` trials. Quiet when stderr is not a terminal or
    /// when `quiet` is set.
    pub fn start(control: Arc<RunControl>, total: u64, quiet: bool) -> Self {
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let show = !quiet && std::io::stderr().is_terminal();
        let flag = Arc::clone(&done);
        let handle = show.then(|| {
            thread::spawn(move || {
                let started = Instant::now();
                let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{elapsed_precise} [{wide_bar}] {human_pos}/{human_len} trials, eta {eta}{msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                let mut visible = false;
                while !flag.load(Ordering::Relaxed) {
                    if !visible && started.elapsed() >= Duration::from_secs(1) {
                        bar.set_draw_target(ProgressDrawTarget::stderr());
                        visible = true;
                        SHOWN.store(true, Ordering::Relaxed);
                    }
                    bar.set_position(control.trials_done.load(Ordering::Relaxed));
                    // Running to a precision: the widest interval still open.
                    if let Some(w) = control.widest() {
                        bar.set_message(format!(", widest interval left ±{w:.4}"));
                    }
                    thread::sleep(Duration::from_millis(100));
                }
                bar.finish_and_clear();
                SHOWN.store(false, Ordering::Relaxed);
            })
        });
        Self { done, handle }
    }

    /// Stops the watcher and clears the bar.
    pub fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}
