//! The parallel Monte Carlo driver.
//!
//! Why this module exists: it is the one place that decides how trials are cut up, so
//! that every kernel gets reproducibility for free. Trials are split into fixed blocks of
//! [`BLOCK_TRIALS`]; block `i` draws from [`DiceStream::for_block`]`(seed, i)` whatever
//! thread runs it; each block adds into a histogram of integer counts, and histograms are
//! merged by integer addition, which is associative and commutative. So any thread count
//! gives the same counts, and memory holds one histogram per rayon split, never a row
//! per trial.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::dice::DiceStream;

/// Trials per block. Fixed: changing it changes every result for a given seed.
pub const BLOCK_TRIALS: u64 = 1 << 16;

/// Integer counts that can be merged; what every kernel fills.
pub trait Histogram: Send {
    /// Adds `other`'s counts into `self`.
    fn merge(&mut self, other: Self);
}

/// Shared run controls: a counter of finished trials (for progress bars) and a stop flag.
/// Both are checked once per block, never per trial. A signal stops every run through
/// [`crate::interrupt`]; `stop` lets a caller stop one run on its own.
#[derive(Debug, Default)]
pub struct RunControl {
    pub trials_done: AtomicU64,
    pub stop: AtomicBool,
    /// While running to a precision: the widest interval half-width still open (f64
    /// bits; 0 for none), for the progress bar.
    pub widest: AtomicU64,
    /// Told the trials done so far after every block a run counts ([`RunControl::add_done`]):
    /// the report page's progress bar, where no watcher thread can read `trials_done`
    /// while the module computes. `None` on the command line.
    pub on_progress: Option<fn(u64)>,
}

impl RunControl {
    /// Counts `trials` more trials done, and tells [`RunControl::on_progress`].
    #[inline]
    pub fn add_done(&self, trials: u64) {
        let done = self.trials_done.fetch_add(trials, Ordering::Relaxed) + trials;
        if let Some(tell) = self.on_progress {
            tell(done);
        }
    }

    /// Records the widest half-width still open (see [`RunControl::widest`]).
    pub fn set_widest(&self, half_width: f64) {
        self.widest.store(half_width.to_bits(), Ordering::Relaxed);
    }

    /// The widest half-width still open, if a precision run reported one.
    pub fn widest(&self) -> Option<f64> {
        let w = f64::from_bits(self.widest.load(Ordering::Relaxed));
        (w > 0.0).then_some(w)
    }

    /// Whether this run should stop: its own flag, or a signal to the process.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || crate::interrupt::requested()
    }
}

// Defined beside the stop flag it reports, used here under its old path.
pub use crate::interrupt::Interrupted;

/// Trials in block `block` of a run of `trials` trials: [`BLOCK_TRIALS`], but the last
/// block may be short.
#[inline]
pub fn block_trials(trials: u64, block: u64) -> u64 {
    BLOCK_TRIALS.min(trials - block * BLOCK_TRIALS)
}

/// Every block of a run of `trials` trials: `0..⌈trials / BLOCK_TRIALS⌉`.
pub fn all_blocks(trials: u64) -> std::ops::Range<u64> {
    0..trials.div_ceil(BLOCK_TRIALS)
}

/// Runs the blocks `blocks` of a run of `trials` trials in parallel on the current rayon
/// pool, merged: the one block loop. The engine's driver runs every system's runs through
/// it (all of a run's blocks, a shard's share of them, a precision run's next doubling),
/// and the kernels' own helpers (`simulate_battles` …, for their tests and benches) all of
/// one kernel's blocks ([`all_blocks`]).
///
/// `empty` makes a zeroed histogram; `block(dice, n, histogram)` runs `n` trials drawing
/// from `dice` and adds them into `histogram`.
pub fn run_block_range<H, E, B>(
    seed: u64,
    trials: u64,
    blocks: std::ops::Range<u64>,
    empty: E,
    block: B,
    control: &RunControl,
) -> Result<H, Interrupted>
where
    H: Histogram,
    E: Fn() -> H + Sync + Send,
    B: Fn(&mut DiceStream, u64, &mut H) + Sync + Send,
{
    // `try_fold`/`try_reduce` short-circuit: once the run is stopped no further block is
    // even visited, so a stop is prompt at any trial count (2^64 − 1 trials are 2^48
    // blocks). Without a stop the result is the same integer sum as a plain fold.
    blocks
        .into_par_iter()
        .try_fold(&empty, |mut histogram, index| {
            if control.stopped() {
                return Err(Interrupted);
            }
            let n = block_trials(trials, index);
            let mut dice = DiceStream::for_block(seed, index);
            block(&mut dice, n, &mut histogram);
            control.add_done(n);
            Ok(histogram)
        })
        .try_reduce(&empty, |mut left, right| {
            left.merge(right);
            Ok(left)
        })
        .and_then(|histogram| {
            if control.stopped() {
                Err(Interrupted)
            } else {
                Ok(histogram)
            }
        })
}

/// The sum of `counts` in `u128`: a total no count can wrap (for
/// [`crate::engine::System::trials_counted`]).
pub fn total(counts: &[u64]) -> u128 {
    counts.iter().map(|&c| u128::from(c)).sum()
}

/// A plain vector of counts, the histogram of single-roll tables.
impl Histogram for Vec<u64> {
    fn merge(&mut self, other: Self) {
        for (mine, theirs) in self.iter_mut().zip(other) {
            *mine += theirs;
        }
    }
}

/// Builds a rayon pool with `threads` threads (0 = one per core).
pub fn thread_pool(threads: usize) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum_of_dice(threads: usize, trials: u64) -> Vec<u64> {
        let pool = thread_pool(threads).unwrap();
        pool.install(|| {
            run_block_range(
                42,
                trials,
                all_blocks(trials),
                || vec![0u64; 6],
                |dice, n, h: &mut Vec<u64>| {
                    for _ in 0..n {
                        h[dice.below(6) as usize] += 1;
                    }
                },
                &RunControl::default(),
            )
            .unwrap()
        })
    }

    #[test]
    fn counts_are_identical_on_any_thread_count() {
        let trials = 5 * BLOCK_TRIALS + 123;
        let one = sum_of_dice(1, trials);
        assert_eq!(one.iter().sum::<u64>(), trials);
        assert_eq!(one, sum_of_dice(2, trials));
        assert_eq!(one, sum_of_dice(8, trials));
    }

    #[test]
    fn a_stopped_run_reports_interruption() {
        let control = RunControl::default();
        control.stop.store(true, Ordering::Relaxed);
        let result = run_block_range(
            1,
            10,
            all_blocks(10),
            || vec![0u64; 1],
            |_, _, _| {},
            &control,
        );
        assert_eq!(result, Err(Interrupted));
    }
}
