//! Any registered system behind one object-safe trait, run block by block: what a front
//! end without the report crate (the WebAssembly module) runs.
//!
//! Why this module exists: the command line runs a study through the report crate's
//! `Study`, which writes a report folder. The page's module has no folder to write and
//! must run in steps (a progress bar between them), yet its numbers must be the command
//! line's. [`AnyStudy`] gives any [`System`] a [`Job`] that runs the plan's work units —
//! run by run, block by block, the numbering of [`super::driver::Share`] — in steps of
//! any size, each block drawn from `DiceStream::for_block(seed, block)` through
//! [`crate::sim::run_block_range`], the driver's own block loop. Counts are integer sums
//! of blocks, so any steps give the driver's counts; finished counts and exact results
//! go through the system's own `outcomes` and `distributions`, as the report's frames do.

use std::sync::Arc;

use super::driver::{self, blocks_per_run};
use super::expect::RunNames;
use super::{Distribution, Header, Outcome, Plan, System};
use crate::sim::{run_block_range, Histogram, Interrupted, RunControl};

/// Any validated analysis, as a front end without reports runs it.
pub trait AnyStudy: Send + Sync {
    fn header(&self) -> Header<'_>;
    /// The system and its form, as `validate` prints it.
    fn kind(&self) -> String;
    fn plan(&self) -> Plan;
    /// What the user should know about how the runs are made ([`System::notices`]).
    fn notices(&self) -> Vec<String>;
    /// What run `run` can be asked about (for `[[expect]]`).
    fn run_names(&self, run: usize) -> RunNames;
    /// A job running every run of the plan with `trials` trials (0: exact results only)
    /// from `seed`.
    fn start(self: Arc<Self>, trials: u64, seed: u64) -> Box<dyn Job>;
    /// Blocks `blocks` of `run` as `battlelab value` and `compare` read them (each block's
    /// counts and metric sums, and with `with_exact` the run's exact results).
    fn arm_blocks(
        &self,
        run: usize,
        blocks: std::ops::Range<u64>,
        trials: u64,
        seed: u64,
        with_exact: bool,
        control: &RunControl,
    ) -> Result<super::compare::Arm, Interrupted>;
    /// The choices both sides make at once each round, where the system has them
    /// ([`System::simultaneous_choices`]): what `equilibrium` solves.
    fn simultaneous_choices(&self) -> Option<&dyn super::choices::SimultaneousChoices>;
    /// The tables the report prints from the rules as read ([`System::printed`]).
    fn printed(&self) -> super::printed::Printed;
}

/// A plan being run in steps.
pub trait Job: Send {
    /// Work units in all: blocks of every run.
    fn blocks(&self) -> u64;
    /// Work units done.
    fn done(&self) -> u64;
    /// Runs the next `units` work units (fewer where fewer are left); returns the units
    /// done so far.
    fn step(&mut self, units: u64) -> Result<u64, Interrupted>;
    /// Runs what is left, computes the exact results and gives every run's results, in
    /// plan order, with the numbers the report's tables derive from them.
    fn finish(self: Box<Self>) -> Result<Finished, Interrupted>;
}

/// A finished job: every run's results, in plan order, and the numbers the report's
/// rulebook tables derive from them ([`System::derived`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    pub runs: Vec<RunResult>,
    pub derived: Vec<super::derived::Derived>,
}

/// One run's results: what the report's `results` and `distributions` frames hold.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// Trials simulated (0 when only the exact results were asked for).
    pub trials: u64,
    /// Whether the run's exact results were computed (every outcome's exact chance).
    pub exact: bool,
    pub outcomes: Vec<Outcome>,
    pub distributions: Vec<Distribution>,
}

impl<S: System + Send + 'static> AnyStudy for S {
    fn header(&self) -> Header<'_> {
        System::header(self)
    }

    fn kind(&self) -> String {
        System::kind(self)
    }

    fn plan(&self) -> Plan {
        System::plan(self)
    }

    fn notices(&self) -> Vec<String> {
        System::notices(self)
    }

    fn run_names(&self, run: usize) -> RunNames {
        RunNames::of(self, run)
    }

    fn arm_blocks(
        &self,
        run: usize,
        blocks: std::ops::Range<u64>,
        trials: u64,
        seed: u64,
        with_exact: bool,
        control: &RunControl,
    ) -> Result<super::compare::Arm, Interrupted> {
        super::compare::arm_blocks(self, run, blocks, trials, seed, with_exact, control)
    }

    fn simultaneous_choices(&self) -> Option<&dyn super::choices::SimultaneousChoices> {
        System::simultaneous_choices(self)
    }

    fn printed(&self) -> super::printed::Printed {
        System::printed(self)
    }

    fn start(self: Arc<Self>, trials: u64, seed: u64) -> Box<dyn Job> {
        let runs = System::plan(&*self).runs.len();
        let counts = (0..runs).map(|run| self.empty(run)).collect();
        Box::new(BlockJob {
            system: self,
            runs,
            trials,
            seed,
            counts,
            done: 0,
            control: RunControl::default(),
        })
    }
}

/// A [`Job`] over one system's plan: counts per run, merged block range by block range,
/// finished when the run's last block is in.
struct BlockJob<S: System> {
    system: Arc<S>,
    runs: usize,
    trials: u64,
    seed: u64,
    counts: Vec<S::Counts>,
    done: u64,
    control: RunControl,
}

impl<S: System> BlockJob<S> {
    fn blocks_per_run(&self) -> u64 {
        blocks_per_run(self.trials)
    }
}

impl<S: System + Send + 'static> Job for BlockJob<S> {
    fn blocks(&self) -> u64 {
        self.blocks_per_run() * self.runs as u64
    }

    fn done(&self) -> u64 {
        self.done
    }

    fn step(&mut self, units: u64) -> Result<u64, Interrupted> {
        let per_run = self.blocks_per_run();
        let end = self.done.saturating_add(units).min(self.blocks());
        while self.done < end {
            let run = (self.done / per_run) as usize;
            let first = self.done % per_run;
            let last = (first + (end - self.done)).min(per_run);
            let system = &*self.system;
            let more = run_block_range(
                self.seed,
                self.trials,
                first..last,
                || system.empty(run),
                |dice, n, counts| system.simulate(run, dice, n, counts),
                &self.control,
            )?;
            self.counts[run].merge(more);
            if last == per_run {
                system.finish(run, &mut self.counts[run]);
            }
            self.done += last - first;
        }
        Ok(self.done)
    }

    fn finish(mut self: Box<Self>) -> Result<Finished, Interrupted> {
        self.step(u64::MAX)?;
        if self.trials == 0 {
            // No block ran, so none finished the counts: finish them empty.
            for run in 0..self.runs {
                self.system.finish(run, &mut self.counts[run]);
            }
        }
        let system = &*self.system;
        let exact = driver::exact(system, self.runs, &self.control)?;
        let derived = system.derived(&self.counts, &exact);
        let runs = self
            .counts
            .iter()
            .zip(&exact)
            .enumerate()
            .map(|(run, (counts, exact))| {
                let outcomes = system.outcomes(run, counts, exact.as_ref());
                RunResult {
                    trials: self.trials,
                    // Exact where every outcome's exact chance is known: a melee run
                    // whose phase odds are exact but whose engagement has too many
                    // states to enumerate is simulated, as its report says.
                    exact: exact.is_some() && outcomes.iter().all(|o| o.exact.is_some()),
                    outcomes,
                    distributions: system.distributions(run, counts, exact.as_ref()),
                }
            })
            .collect();
        Ok(Finished { runs, derived })
    }
}
