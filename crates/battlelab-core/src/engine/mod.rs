//! The one engine every rules system plugs into.
//!
//! Why this module exists: every system answers the same questions the same way — a plan
//! of runs, Monte Carlo counts per run, exact results where tractable — so each system
//! implements [`System`] once and everything above it (running on all cores, progress,
//! stopping, shards and merge, reports) is written once, here and in [`driver`].
//!
//! A system's `simulate` is called once per block and is monomorphised: the hot loops are
//! the kernels in [`crate::rules`], unchanged.

pub mod choices;
pub mod compare;
pub mod derived;
pub mod driver;
pub mod dynamic;
pub mod expect;
pub mod headline;
pub mod printed;
pub mod shard;

use crate::analysis::AxisValue;
use crate::dice::DiceStream;
use crate::sim::Histogram;

/// One run of a plan: a variant at a grid point, or one of the extra runs a system needs
/// (a reserve policy compared, the attrition turns study, a frontier sensitivity run),
/// told apart by the values of extra axes ([`AxisValue::Unset`] where a run has none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunKey {
    /// The variant's name ("base" when the file has none).
    pub variant: String,
    /// One value per axis of the plan, in [`Plan::axes`] order.
    pub coordinates: Vec<AxisValue>,
}

/// Every run an analysis will make, in a fixed order: the order of counts in a report, a
/// shard and a merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The columns that tell runs apart besides the variant: the swept parameters as the
    /// file names them (`a.morale`), then any extra axes (`policy`, `turns`, …).
    pub axes: Vec<String>,
    pub runs: Vec<RunKey>,
    /// What one trial is ("battles", "rolls", "engagements", "maps").
    pub unit: &'static str,
}

impl Plan {
    /// The variants in the order they first appear.
    pub fn variants(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for run in &self.runs {
            if !names.contains(&run.variant.as_str()) {
                names.push(&run.variant);
            }
        }
        names
    }

    /// The distinct values of axis `axis`, in the order they first appear.
    pub fn axis_values(&self, axis: usize) -> Vec<String> {
        let mut values: Vec<String> = Vec::new();
        for run in &self.runs {
            let value = run.coordinates[axis].to_string();
            if !values.contains(&value) {
                values.push(value);
            }
        }
        values
    }

    /// What tells run `run` apart: its axes with their values (unset axes left out).
    pub fn describe(&self, run: usize) -> Vec<(String, String)> {
        self.axes
            .iter()
            .zip(&self.runs[run].coordinates)
            .filter(|(_, v)| !matches!(v, AxisValue::Unset))
            .map(|(a, v)| (a.clone(), v.to_string()))
            .collect()
    }
}

/// One named outcome of a run: how many trials ended so, and its exact probability where
/// the run is exact (with the fraction where the system counts exactly in integers).
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub name: String,
    pub count: u64,
    pub exact: Option<f64>,
    pub fraction: Option<String>,
}

/// The distribution of one per-trial quantity of a run (battle length, SP lost …): counts
/// by value from `first` on, and the exact probabilities where the run is exact.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution {
    pub metric: String,
    pub first: u64,
    pub counts: Vec<u64>,
    pub exact: Option<Vec<f64>>,
}

impl Distribution {
    /// A distribution whose values start at 0.
    pub fn new(metric: &str, counts: &[u64], exact: Option<&[f64]>) -> Self {
        Self {
            metric: metric.to_string(),
            first: 0,
            counts: counts.to_vec(),
            exact: exact.map(<[f64]>::to_vec),
        }
    }

    /// Trials counted.
    pub fn trials(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The sum of the quantity over every trial counted, in integers.
    pub fn sum(&self) -> u128 {
        crate::stats::count_sum(&self.counts, self.first)
    }

    /// The simulated mean: an integer sum divided once, so it prints as the number it is
    /// (1.8875, not 1.8875000000000002).
    pub fn mean(&self) -> f64 {
        self.sum() as f64 / self.trials().max(1) as f64
    }

    /// The exact mean, where the distribution is exact.
    pub fn exact_mean(&self) -> Option<f64> {
        self.exact.as_ref().map(|p| {
            p.iter()
                .enumerate()
                .map(|(i, p)| (self.first + i as u64) as f64 * p)
                .sum()
        })
    }
}

/// The parts of an analysis every system has, as the engine and the commands read them
/// (a view of the study's [`crate::header::AnalysisHeader`]).
#[derive(Clone, Debug)]
pub struct Header<'a> {
    pub name: &'a str,
    /// The system as the file names it ("field", "attrition", "ratio", …).
    pub system: &'a str,
    pub seed: u64,
    pub trials: u64,
    /// `precision = …`, where the file runs until precise.
    pub precision: Option<f64>,
    /// `[tables]`: how its rulebook tables print chances (what the report page's
    /// recomputed cells print too).
    pub tables: crate::analysis::TablesOptions,
}

/// A rules system as the engine sees it: validated once (its parser), then a plan of
/// runs, each simulated block by block into integer counts, with exact results where
/// tractable.
pub trait System: Sync {
    /// Integer counts of one run; merged by addition, so any split of its blocks (threads,
    /// shards) gives the same counts.
    type Counts: Histogram + Send + Clone + serde::Serialize + serde::de::DeserializeOwned;
    /// A run's exact result, where it is computed.
    type Exact: Send;

    fn header(&self) -> Header<'_>;

    /// The system and its form, as `validate` prints it ("ratio (skirmish)").
    fn kind(&self) -> String {
        self.header().system.to_string()
    }

    fn plan(&self) -> Plan;

    /// Zeroed counts for `run`.
    fn empty(&self, run: usize) -> Self::Counts;

    /// Zeroed counts in finished form: what finished counts (the driver's, a shard's) are
    /// merged into.
    fn empty_finished(&self, run: usize) -> Self::Counts {
        let mut counts = self.empty(run);
        self.finish(run, &mut counts);
        counts
    }

    /// Zeroed counts for one block of `run` that is finished on its own (a paired
    /// comparison's block): a system whose counts are folded from bins too many to fold
    /// every block returns lean counts here.
    fn empty_block(&self, run: usize) -> Self::Counts {
        self.empty(run)
    }

    /// Adds `n` trials of `run`, drawn from `dice`, into `counts`. Never fails: the
    /// system was validated when it was parsed.
    fn simulate(&self, run: usize, dice: &mut DiceStream, n: u64, counts: &mut Self::Counts);

    /// Turns merged counts into their final form (e.g. folds the ratio kernel's
    /// signature bins into its marginals). The driver calls it as soon as a run's blocks
    /// are merged (so that no bulky bins wait for the whole plan); a paired comparison on
    /// each block. Finished counts merged with finished counts are finished (merge, shards
    /// and the precision driver's doublings rely on it), and finishing, merging more and
    /// finishing again gives what one finish of everything gives.
    fn finish(&self, _run: usize, _counts: &mut Self::Counts) {}

    /// The exact result of `run`, or `None` where it is not computed (too large, turned
    /// off, or no enumeration exists). An enumeration cut short by a stop request may
    /// return `None`; the driver then reports the run as interrupted.
    fn exact(&self, run: usize) -> Option<Self::Exact>;

    /// The run's named outcomes (the rows of `results`), from its finished counts.
    fn outcomes(
        &self,
        run: usize,
        counts: &Self::Counts,
        exact: Option<&Self::Exact>,
    ) -> Vec<Outcome>;

    /// The run's per-trial distributions (the rows of `distributions`; their means are
    /// `metrics`).
    fn distributions(
        &self,
        run: usize,
        counts: &Self::Counts,
        exact: Option<&Self::Exact>,
    ) -> Vec<Distribution>;

    /// The validated rules and scenario every run draws from, as JSON: what the
    /// manifest's rules hash is taken of (so reformatting the file changes nothing).
    fn rules(&self) -> serde_json::Value;

    /// How many trials finished counts of `run` hold (each trial ends in exactly one of
    /// the outcomes this sums): what a shard's counts must total, the trials its blocks
    /// cover. Summed in `u128`, so that no count, however large, wraps the total.
    fn trials_counted(&self, run: usize, counts: &Self::Counts) -> u128;

    /// The choices both sides make at once each round, where the system has them: what
    /// `battlelab equilibrium` solves. `None` (the default): no simultaneous choice.
    fn simultaneous_choices(&self) -> Option<&dyn choices::SimultaneousChoices> {
        None
    }

    /// What the user should know about how the runs are made, decided when the file was
    /// read (exact results turned off, a slower form used): printed by `run` and
    /// `validate` and written into the report.
    fn notices(&self) -> Vec<String> {
        Vec::new()
    }

    /// The numbers the report's rulebook tables derive from the plan's results (a best
    /// choice, a survival curve, a difference of means: [`derived::Derived`]), from every
    /// run's finished counts and exact results in plan order. The report prints them and
    /// the WebAssembly module hands them to the page, so both show the same numbers.
    /// Empty by default: the system's tables print only runs' results as they are.
    fn derived(
        &self,
        _counts: &[Self::Counts],
        _exact: &[Option<Self::Exact>],
    ) -> Vec<derived::Derived> {
        Vec::new()
    }

    /// The tables the report prints from the rules as the analysis reads them, not from
    /// results (a rules file's tables as printed and as modified: [`printed::Printed`]),
    /// with the text around them. The report writes them into `tables.md` and the
    /// WebAssembly module hands them to the page, so an edit in the panel reprints them
    /// as the command line does. Empty by default.
    fn printed(&self) -> printed::Printed {
        printed::Printed::default()
    }
}
