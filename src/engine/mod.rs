//! The one engine every rules system plugs into.
//!
//! Why this module exists: every system answers the same questions the same way — a plan
//! of runs, Monte Carlo counts per run, exact results where tractable — so each system
//! implements [`System`] once and everything above it (running on all cores, progress,
//! stopping, shards and merge, reports) is written once, here and in [`driver`].
//!
//! A system's `simulate` is called once per block and is monomorphised: the hot loops are
//! the kernels in [`crate::rules`], unchanged.

pub mod driver;

use crate::analysis::AxisValue;
use crate::dice::DiceStream;
use crate::sim::Histogram;

/// One run of a plan: a variant at a grid point, or one of the extra runs a system needs
/// (a reserve policy compared, the attrition turns study, a frontier sensitivity run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunKey {
    /// The variant's name ("base" when the file has none).
    pub variant: String,
    /// One value per swept parameter of the plan, in [`Plan::axes`] order.
    pub coordinates: Vec<AxisValue>,
    /// What sets an extra run apart from the grid (`None` for a grid point).
    pub part: Option<String>,
}

/// Every run an analysis will make, in a fixed order: the order of counts in a report, a
/// shard and a merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The swept parameters (columns of the grid).
    pub axes: Vec<String>,
    pub runs: Vec<RunKey>,
    /// What one trial is ("battles", "rolls", "engagements", "maps").
    pub unit: &'static str,
}

/// The parts of an analysis every system has.
#[derive(Clone, Debug)]
pub struct Header<'a> {
    pub name: &'a str,
    /// The system as the file names it ("field", "attrition", "ratio", …).
    pub system: &'a str,
    pub seed: u64,
    pub trials: u64,
}

/// A rules system as the engine sees it: validated once (its parser), then a plan of
/// runs, each simulated block by block into integer counts, with exact results where
/// tractable.
pub trait System: Sync {
    /// Integer counts of one run; merged by addition, so any split of its blocks (threads,
    /// shards) gives the same counts.
    type Counts: Histogram + Send;
    /// A run's exact result, where it is computed.
    type Exact: Send;

    fn header(&self) -> Header<'_>;

    fn plan(&self) -> Plan;

    /// Zeroed counts for `run`.
    fn empty(&self, run: usize) -> Self::Counts;

    /// Adds `n` trials of `run`, drawn from `dice`, into `counts`. Never fails: the
    /// system was validated when it was parsed.
    fn simulate(&self, run: usize, dice: &mut DiceStream, n: u64, counts: &mut Self::Counts);

    /// Turns merged counts into their final form (e.g. folds the ratio kernel's
    /// signature bins). Called once per run, after every block is merged.
    fn finish(&self, _run: usize, _counts: &mut Self::Counts) {}

    /// The exact result of `run`, or `None` where it is not computed (too large, turned
    /// off, or no enumeration exists). An enumeration cut short by a stop request may
    /// return `None`; the driver then reports the run as interrupted.
    fn exact(&self, run: usize) -> Option<Self::Exact>;
}
