//! The driver: every (run, block) work unit of a whole plan on all cores.
//!
//! Why this module exists: a designer's grid may be 2,000 runs of a few blocks each, or
//! one run of 15 million blocks; either way every core should work. Runs and their blocks
//! are both handed to rayon (nested parallel iterators share one work-stealing pool), so
//! 21 runs of 2 blocks keep 16 cores busy as well as one long run does.
//!
//! Determinism is the driver's promise, not the kernels': block `b` of every run draws
//! from [`crate::dice::DiceStream::for_block`]`(seed, b)` whatever thread runs it (common random
//! numbers across runs), and a run's counts are the integer sum of its blocks' counts, so
//! any thread count and any split into [`Share`]s give the same counts.

use std::ops::Range;

use rayon::prelude::*;

use super::System;
use crate::sim::{block_trials, run_block_range, Histogram, Interrupted, RunControl, BLOCK_TRIALS};

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
        (0..runs)
            .map(|run| self.run_trials(run, runs, trials))
            .sum()
    }

    /// Trials of run `run` (of `runs`, each of `trials` trials) in this share: what the
    /// share's counts of that run must total.
    pub fn run_trials(self, run: usize, runs: usize, trials: u64) -> u64 {
        let b = self.blocks_of(run, runs, blocks_per_run(trials));
        // Whole blocks, but the last may be short.
        match b.end.checked_sub(1) {
            Some(last) if b.start <= last => {
                (last - b.start) * BLOCK_TRIALS + block_trials(trials, last)
            }
            _ => 0,
        }
    }
}

/// Simulates this share of every run of `system`'s plan with `trials` trials per run.
/// Returns each run's merged counts, in plan order, finished ([`System::finish`]; shards'
/// finished counts are added up, and finished again, by a merge).
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
            simulate_run_blocks(
                system,
                run,
                share.blocks_of(run, runs, blocks),
                trials,
                seed,
                control,
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
    /// Trials per run (the most any run took, when runs ran to a precision).
    pub trials: u64,
    pub seed: u64,
    pub counts: Vec<S::Counts>,
    pub exact: Vec<Option<S::Exact>>,
    /// Trials each run took.
    pub run_trials: Vec<u64>,
    /// The precision the runs were taken to, if they were, and what they reached.
    pub precision: Option<Precision>,
}

/// A plan run to a precision: the target, and what its runs reached by the cap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Precision {
    /// The 95% interval half-width every simulated probability was to reach.
    pub target: f64,
    /// The widest half-width left among every run's simulated probabilities (0 when all
    /// runs are exact): at most `target` unless some run reached the cap first.
    pub reached: f64,
    /// Runs that stopped at the cap of trials with an interval still wider than `target`.
    pub short_runs: usize,
    /// The cap: the trials asked for, rounded up to whole blocks.
    pub cap: u64,
}

impl Precision {
    /// Whether every run reached the target.
    pub fn reached_target(&self) -> bool {
        self.short_runs == 0
    }
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
    // Each run's counts are finished already (`simulate_run_blocks`).
    let (counts, exact) = (counts?, exact?);
    Ok(PlanResults {
        trials,
        seed,
        counts,
        exact,
        run_trials: vec![trials; runs],
        precision: None,
    })
}

/// Blocks `blocks` of `run` (of a run of `trials` trials), merged and finished
/// ([`System::finish`]: the ratio kernel's signature bins, up to 0.9 MiB for each parallel
/// split that counted battles, are folded here, not kept for every run of the plan). A
/// stop is checked per block, so it is prompt at any trial count.
fn simulate_run_blocks<S: System>(
    system: &S,
    run: usize,
    blocks: Range<u64>,
    trials: u64,
    seed: u64,
    control: &RunControl,
) -> Result<S::Counts, Interrupted> {
    let mut counts = run_block_range(
        seed,
        trials,
        blocks,
        || system.empty(run),
        |dice, n, counts| system.simulate(run, dice, n, counts),
        control,
    )?;
    system.finish(run, &mut counts);
    Ok(counts)
}

/// The widest 95% Wilson half-width among a run's simulated outcome probabilities (0
/// when the run is exact: its probabilities need no interval).
fn widest_half_width<S: System>(
    system: &S,
    run: usize,
    counts: &S::Counts,
    exact: Option<&S::Exact>,
    trials: u64,
) -> f64 {
    if exact.is_some() {
        return 0.0;
    }
    system
        .outcomes(run, counts, None)
        .iter()
        .map(|o| {
            let (lo, hi) = crate::stats::wilson_interval(o.count, trials, crate::stats::Z95);
            (hi - lo) / 2.0
        })
        .fold(0.0, f64::max)
}

/// Runs every run of the plan until each simulated probability's 95% interval has a
/// half-width of at most `precision`, or the run has `max_trials` (rounded up to whole
/// blocks). A run takes 1, 2, 4, … whole blocks, always blocks 0, 1, 2, … in order, and is
/// judged after each doubling, so the trials it takes — and its counts — are the same on
/// any thread count. Exact runs take one block (their probabilities need no interval).
/// `control.widest` shows the widest half-width still open.
pub fn run_to_precision<S: System>(
    system: &S,
    precision: f64,
    max_trials: u64,
    seed: u64,
    control: &RunControl,
) -> Result<PlanResults<S>, Interrupted> {
    let runs = system.plan().runs.len();
    let exact = exact(system, runs, control)?;
    let max_blocks = blocks_per_run(max_trials).max(1);
    let mut counts: Vec<S::Counts> = (0..runs).map(|run| system.empty_finished(run)).collect();
    let mut done = vec![0u64; runs];
    let mut target = vec![1u64; runs];
    // Each run's widest half-width at its last look.
    let mut widths = vec![0.0f64; runs];
    loop {
        let open: Vec<usize> = (0..runs).filter(|&r| done[r] < target[r]).collect();
        if open.is_empty() {
            break;
        }
        let more: Vec<(usize, S::Counts)> = open
            .par_iter()
            .map(|&run| {
                simulate_run_blocks(
                    system,
                    run,
                    done[run]..target[run],
                    max_blocks * BLOCK_TRIALS,
                    seed,
                    control,
                )
                .map(|c| (run, c))
            })
            .collect::<Result<_, _>>()?;
        let mut widest = 0.0f64;
        for (run, c) in more {
            counts[run].merge(c);
            done[run] = target[run];
            let width = widest_half_width(
                system,
                run,
                &counts[run],
                exact[run].as_ref(),
                done[run] * BLOCK_TRIALS,
            );
            widths[run] = width;
            if width > precision && done[run] < max_blocks {
                target[run] = (2 * done[run]).min(max_blocks);
                widest = widest.max(width);
            }
        }
        control.set_widest(widest);
    }
    let run_trials: Vec<u64> = done.iter().map(|b| b * BLOCK_TRIALS).collect();
    Ok(PlanResults {
        trials: run_trials.iter().copied().max().unwrap_or(0),
        seed,
        counts,
        exact,
        run_trials,
        precision: Some(Precision {
            target: precision,
            reached: widths.iter().copied().fold(0.0, f64::max),
            short_runs: widths.iter().filter(|&&w| w > precision).count(),
            cap: max_blocks * BLOCK_TRIALS,
        }),
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
