//! The driver: every (run, block) work unit of a whole plan on all cores.
//!
//! Why this module exists: a designer's grid may be 2,000 runs of a few blocks each, or
//! one run of 15 million blocks; either way every core should work. Runs and their blocks
//! are both handed to rayon (nested parallel iterators share one work-stealing pool), so
//! 21 runs of 2 blocks keep 16 cores busy as well as one long run does.
//!
//! Determinism is the driver's promise, not the kernels': block `b` of every run draws
//! from [`DiceStream::for_block`]`(seed, b)` whatever thread runs it (common random
//! numbers across runs), and a run's counts are the integer sum of its blocks' counts, so
//! any thread count and any split into [`Share`]s give the same counts.

use std::ops::Range;
use std::sync::atomic::Ordering;

use rayon::prelude::*;

use super::System;
use crate::dice::DiceStream;
use crate::sim::{Histogram, Interrupted, RunControl, BLOCK_TRIALS};

/// Blocks of one run of `trials` trials.
pub fn blocks_per_run(trials: u64) -> u64 {
    trials.div_ceil(BLOCK_TRIALS)
}

/// A share of a plan's work units: shard `index` (0-based) of `count`. Units are numbered
/// run by run, block by block; a share is a contiguous range of them, so any count of
/// shards (even more than units) splits the plan exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub index: u64,
    pub count: u64,
}

impl Share {
    /// The whole plan.
    pub const ALL: Share = Share { index: 0, count: 1 };

    /// The units `[start, end)` of this share among `units`.
    pub fn units(self, units: u64) -> Range<u64> {
        // In u128: units × count cannot overflow there.
        let at = |k: u64| (u128::from(units) * u128::from(k) / u128::from(self.count)) as u64;
        at(self.index)..at(self.index + 1)
    }

    /// The blocks of `run` that fall in this share.
    pub fn blocks_of(self, run: usize, runs: usize, blocks: u64) -> Range<u64> {
        let units = self.units(blocks.saturating_mul(runs as u64));
        let first = run as u64 * blocks;
        let start = units.start.clamp(first, first + blocks) - first;
        let end = units.end.clamp(first, first + blocks) - first;
        start..end
    }

    /// Trials of the plan in this share: for progress bars.
    pub fn trials(self, runs: usize, trials: u64) -> u64 {
        let blocks = blocks_per_run(trials);
        (0..runs)
            .map(|run| {
                let b = self.blocks_of(run, runs, blocks);
                (b.start..b.end)
                    .map(|block| BLOCK_TRIALS.min(trials - block * BLOCK_TRIALS))
                    .sum::<u64>()
            })
            .sum()
    }
}

/// Simulates this share of every run of `system`'s plan with `trials` trials per run.
/// Returns each run's merged counts, in plan order, before [`System::finish`] (counts of
/// shards are added first, then finished once).
pub fn simulate<S: System>(
    system: &S,
    runs: usize,
    trials: u64,
    seed: u64,
    share: Share,
    control: &RunControl,
) -> Result<Vec<S::Counts>, Interrupted> {
    let blocks = blocks_per_run(trials);
    (0..runs)
        .into_par_iter()
        .map(|run| {
            share
                .blocks_of(run, runs, blocks)
                .into_par_iter()
                .try_fold(
                    || system.empty(run),
                    |mut counts, block| {
                        // Checked per block, so a stop is prompt at any trial count: no
                        // further block is even visited.
                        if control.stopped() {
                            return Err(Interrupted);
                        }
                        let n = BLOCK_TRIALS.min(trials - block * BLOCK_TRIALS);
                        let mut dice = DiceStream::for_block(seed, block);
                        system.simulate(run, &mut dice, n, &mut counts);
                        control.trials_done.fetch_add(n, Ordering::Relaxed);
                        Ok(counts)
                    },
                )
                .try_reduce(
                    || system.empty(run),
                    |mut left, right| {
                        left.merge(right);
                        Ok(left)
                    },
                )
        })
        .collect::<Result<Vec<_>, _>>()
        .and_then(|counts| {
            if control.stopped() {
                Err(Interrupted)
            } else {
                Ok(counts)
            }
        })
}

/// The exact result of every run, computed in parallel and collected in plan order (each
/// depends on its run alone, so the bytes are the same on any thread count).
pub fn exact<S: System>(
    system: &S,
    runs: usize,
    control: &RunControl,
) -> Result<Vec<Option<S::Exact>>, Interrupted> {
    let exact: Vec<Option<S::Exact>> = (0..runs)
        .into_par_iter()
        .map(|run| {
            if control.stopped() {
                None
            } else {
                system.exact(run)
            }
        })
        .collect();
    // An enumeration cut short by a stop reads as "not exact": never report it.
    if control.stopped() {
        Err(Interrupted)
    } else {
        Ok(exact)
    }
}

/// Counts and exact results of a whole plan, finished: what a report is written from.
pub struct PlanResults<S: System> {
    pub trials: u64,
    pub seed: u64,
    pub counts: Vec<S::Counts>,
    pub exact: Vec<Option<S::Exact>>,
}

/// Runs a whole plan on one machine: every block of every run, then the exact results.
pub fn run<S: System>(
    system: &S,
    trials: u64,
    seed: u64,
    control: &RunControl,
) -> Result<PlanResults<S>, Interrupted> {
    let runs = system.plan().runs.len();
    // The exact results and the simulation share the pool: a core idle in one takes
    // work from the other (neither depends on the other; both are deterministic).
    let (counts, exact) = rayon::join(
        || simulate(system, runs, trials, seed, Share::ALL, control),
        || exact(system, runs, control),
    );
    let (mut counts, exact) = (counts?, exact?);
    for (run, c) in counts.iter_mut().enumerate() {
        system.finish(run, c);
    }
    Ok(PlanResults {
        trials,
        seed,
        counts,
        exact,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_unit_exactly_once() {
        for runs in [1usize, 3, 21] {
            for blocks in [1u64, 2, 7] {
                for count in [1u64, 3, 7, 100] {
                    let mut seen = vec![0u32; runs * blocks as usize];
                    for index in 0..count {
                        let share = Share { index, count };
                        for run in 0..runs {
                            for b in share.blocks_of(run, runs, blocks) {
                                seen[run * blocks as usize + b as usize] += 1;
                            }
                        }
                    }
                    assert!(
                        seen.iter().all(|&s| s == 1),
                        "{runs} runs × {blocks} blocks, {count} shares"
                    );
                }
            }
        }
    }

    #[test]
    fn share_trials_add_up() {
        let trials = 3 * BLOCK_TRIALS + 5;
        let total: u64 = (0..4)
            .map(|index| Share { index, count: 4 }.trials(5, trials))
            .sum();
        assert_eq!(total, 5 * trials);
    }
}
