//! One roll of any table a system declares: its parameters as data, its exact
//! distribution, and its simulation through the engine's driver.
//!
//! Why this module exists: `battlelab table …` answers "what does one roll on this table
//! do?" for every table of every system through one path. A system declares each of its
//! one-roll tables beside its own code (`systems::<name>::one_roll`) as a
//! [`OneRollTable`]: the subcommand's name and about line, its parameters ([`Param`]: the
//! analysis file's word, type, range, default, help) and a function from validated values
//! to a [`PreparedTable`] — a [`System`] of one or two runs. The command line builds its
//! subcommands from those declarations, and every table is then computed the same way:
//! the exact results, and with `--trials` a simulation by the engine's driver
//! ([`driver::run`]: the blocks, seeds and counts of `battlelab run`), into one
//! [`TableReport`] that one exporter per format prints. No command knows any table.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{json, Value};

use crate::dice::DiceStream;
use crate::engine::{driver, Header, Outcome, Plan, RunKey, System};
use crate::exact::{ExactDistribution, Fraction};
use crate::sim::{Interrupted, RunControl};
use crate::stats::{wilson_interval, Z95};

/// Why a table could not be computed. Every variant but `Interrupted` is input to fix,
/// and names the flag it came from.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error(
        "--odds {given}: not odds L:S with L ≥ S; the CRT's columns are {allowed}, and a ratio between or past them is read as the rules' odds rounding reads it (write L:S, e.g. 5:2)"
    )]
    UnknownOdds { given: String, allowed: String },
    #[error("--smaller-sp {0}: the smaller force's strength must be 1 to {max}", max = crate::systems::field::battle::MAX_SP)]
    SmallerSp(u32),
    #[error("--trials 0: give at least 1 trial, or leave --trials out for the exact table only")]
    ZeroTrials,
    #[error("{option}: {message}")]
    Invalid { option: String, message: String },
    #[error("--variant {given}: no such variant in the analysis file; allowed: {allowed}")]
    UnknownVariant { given: String, allowed: String },
    #[error(transparent)]
    Analysis(#[from] crate::analysis::AnalysisError),
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
}

/// `option: message`, the error of one flag.
pub fn invalid(option: impl Into<String>, message: impl Into<String>) -> TableError {
    TableError::Invalid {
        option: option.into(),
        message: message.into(),
    }
}

/// `--trials` and `--seed`, as every table takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    /// Trials to simulate besides the exact results; `None` for the exact table only.
    pub trials: Option<u64>,
    pub seed: u64,
}

/// Who refuses a whole number outside its declared range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// Refused as the value is read, in the command line's words ("0 is not in 1..=999").
    OnRead,
    /// Refused by the table's own validator, in the rule's words ("the printed fire CF is
    /// 1 to 10"); read as any number of its sign (`0..=u32::MAX`, or the `i32` range). A
    /// test holds every validator to its declared range.
    ByTable,
}

/// What a parameter's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A switch: given or not.
    Flag,
    /// A whole number in `min..=max`.
    Int {
        min: i64,
        max: i64,
        checked: Checked,
    },
    /// One of these words, each with what it means.
    Choice(&'static [(&'static str, &'static str)]),
    /// Text in a form the table reads (its validator names the flag and the form).
    Text,
    /// Text that may be given several times.
    TextList,
    /// A file's path.
    File,
}

impl ParamKind {
    /// The numbers a value of this kind is read as: its range, or for a range the table
    /// checks, every number of its sign.
    pub fn read_bounds(&self) -> Option<(i64, i64)> {
        match *self {
            ParamKind::Int {
                min,
                max,
                checked: Checked::OnRead,
            } => Some((min, max)),
            ParamKind::Int {
                min,
                checked: Checked::ByTable,
                ..
            } => Some(if min < 0 {
                (i64::from(i32::MIN), i64::from(i32::MAX))
            } else {
                (0, i64::from(u32::MAX))
            }),
            _ => None,
        }
    }
}

/// One parameter of a table, in the analysis file's words.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// The analysis file's word for it (`smaller_sp`, `break_dice`): the name values are
    /// kept under and echoed by.
    pub name: &'static str,
    /// The command line's flag: the name with `-` for `_` (`--smaller-sp`).
    pub flag: &'static str,
    /// What `--help` shows after the flag (`<ODDS>`).
    pub value_name: &'static str,
    pub kind: ParamKind,
    /// The value when none is given, as it would be written.
    pub default: Option<&'static str>,
    /// Whether the table cannot do without it.
    pub required: bool,
    /// A parameter this one needs (`--variant` needs `--rules`).
    pub requires: Option<&'static str>,
    /// What it means, one or two sentences without a final period.
    pub help: &'static str,
}

impl Param {
    /// A parameter with nothing set but what a declaration always names; declarations
    /// fill in the rest (`..Param::BASE`).
    pub const BASE: Param = Param {
        name: "",
        flag: "",
        value_name: "",
        kind: ParamKind::Text,
        default: None,
        required: false,
        requires: None,
        help: "",
    };

    /// The range as `--help` prints it, for a whole number.
    pub fn range(&self) -> Option<String> {
        match self.kind {
            ParamKind::Int { min, max, .. } => Some(format!("{min} to {max}")),
            _ => None,
        }
    }

    /// Reads one value given as text; the error says what is allowed.
    pub fn read(&self, text: &str) -> Result<ParamValue, String> {
        match self.kind {
            ParamKind::Flag => match text {
                "true" => Ok(ParamValue::Flag(true)),
                "false" => Ok(ParamValue::Flag(false)),
                _ => Err(format!("a switch is true or false, got \"{text}\"")),
            },
            ParamKind::Int { .. } => {
                let (lo, hi) = self.kind.read_bounds().unwrap_or((i64::MIN, i64::MAX));
                let value: i64 = text
                    .parse()
                    .map_err(|_| format!("not a whole number: \"{text}\""))?;
                if (lo..=hi).contains(&value) {
                    Ok(ParamValue::Int(value))
                } else {
                    Err(format!("{value} is not in {lo}..={hi}"))
                }
            }
            ParamKind::Choice(words) => {
                if words.iter().any(|(w, _)| *w == text) {
                    Ok(ParamValue::Text(text.to_string()))
                } else {
                    Err(format!(
                        "invalid value \"{text}\"; allowed: {}",
                        words.iter().map(|(w, _)| *w).collect::<Vec<_>>().join(", ")
                    ))
                }
            }
            ParamKind::Text => Ok(ParamValue::Text(text.to_string())),
            ParamKind::TextList => Ok(ParamValue::TextList(vec![text.to_string()])),
            ParamKind::File => Ok(ParamValue::File(PathBuf::from(text))),
        }
    }
}

/// One parameter's value, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamValue {
    Flag(bool),
    Int(i64),
    Text(String),
    TextList(Vec<String>),
    File(PathBuf),
}

/// Every parameter of one table, read and with its defaults: what a table's validator
/// gets. Parameters not given and without a default are absent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamValues {
    values: Vec<(&'static str, ParamValue)>,
}

impl ParamValues {
    fn get(&self, name: &str) -> Option<&ParamValue> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Whether the switch `name` was given.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some(ParamValue::Flag(true)))
    }

    /// The whole number `name`, if given (or defaulted).
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name) {
            Some(ParamValue::Int(v)) => Some(*v),
            _ => None,
        }
    }

    /// The text (or word) `name`, if given (or defaulted).
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.get(name) {
            Some(ParamValue::Text(v)) => Some(v),
            _ => None,
        }
    }

    /// Every text given for `name`, in order (none when not given).
    pub fn texts(&self, name: &str) -> &[String] {
        match self.get(name) {
            Some(ParamValue::TextList(v)) => v,
            _ => &[],
        }
    }

    /// The file `name`, if given.
    pub fn file(&self, name: &str) -> Option<&std::path::Path> {
        match self.get(name) {
            Some(ParamValue::File(v)) => Some(v),
            _ => None,
        }
    }

    /// The whole number `name`, which the table cannot do without (a required parameter,
    /// or one with a default: always there once read by [`OneRollTable::values`]).
    pub fn need_int(&self, name: &str) -> Result<i64, TableError> {
        self.int(name).ok_or_else(|| missing(name))
    }

    /// The text `name`, which the table cannot do without.
    pub fn need_text(&self, name: &str) -> Result<&str, TableError> {
        self.text(name).ok_or_else(|| missing(name))
    }
}

fn missing(name: &str) -> TableError {
    invalid(
        format!("--{}", name.replace('_', "-")),
        "required: give it a value",
    )
}

/// Builds a table from its validated values and `--trials`/`--seed`.
pub type Prepare = fn(&ParamValues, Sampling) -> Result<Box<dyn PreparedTable>, TableError>;

/// A table a system declares: everything `battlelab table <name>` needs.
#[derive(Clone, Copy)]
pub struct OneRollTable {
    /// The subcommand (`crt`, `attrition`, `frontier-fire`); also the report's `system`.
    pub name: &'static str,
    /// One line for `battlelab table --help`, without a final period.
    pub about: &'static str,
    /// Text after the table's own `--help` (the profile keys of `table melee`).
    pub after_help: Option<&'static str>,
    /// What one trial is, for `--trials`' help: rolls, resolutions, battles, engagements.
    pub trial_unit: &'static str,
    pub params: &'static [Param],
    /// A valid command line, as (parameter, value) pairs (`"true"` for a switch): shown
    /// by `--help` and run by the tests.
    pub example: &'static [(&'static str, &'static str)],
    pub prepare: Prepare,
}

impl std::fmt::Debug for OneRollTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneRollTable")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl OneRollTable {
    /// The parameter `name`.
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Reads the values given as (parameter, text) pairs — a switch as `"true"`, a
    /// repeated text once a pair — and adds the defaults. Errors name the flag and what is
    /// allowed.
    pub fn values<'a>(
        &self,
        given: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<ParamValues, TableError> {
        let mut values: Vec<(&'static str, ParamValue)> = Vec::new();
        for (name, text) in given {
            let param = self.param(name).ok_or_else(|| {
                invalid(
                    format!("--{name}"),
                    format!(
                        "table {} has no such parameter; allowed: {}",
                        self.name,
                        self.params
                            .iter()
                            .map(|p| format!("--{}", p.flag))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
            let value = param
                .read(text)
                .map_err(|m| invalid(format!("--{} {text}", param.flag), m))?;
            match (values.iter_mut().find(|(n, _)| *n == param.name), value) {
                (Some((_, ParamValue::TextList(list))), ParamValue::TextList(more)) => {
                    list.extend(more)
                }
                (Some(_), _) => {
                    return Err(invalid(
                        format!("--{}", param.flag),
                        "given more than once; give it once",
                    ))
                }
                (None, value) => values.push((param.name, value)),
            }
        }
        let given: BTreeSet<&str> = values.iter().map(|(n, _)| *n).collect();
        for param in self.params {
            if given.contains(param.name) {
                if let Some(needed) = param.requires.filter(|r| !given.contains(r)) {
                    return Err(invalid(
                        format!("--{}", param.flag),
                        format!("needs --{}", needed.replace('_', "-")),
                    ));
                }
                continue;
            }
            match param.default {
                Some(text) => values.push((
                    param.name,
                    param
                        .read(text)
                        .map_err(|m| invalid(format!("--{}", param.flag), m))?,
                )),
                None if param.required => {
                    return Err(invalid(
                        format!("--{}", param.flag),
                        "required: give it a value",
                    ))
                }
                None => {}
            }
        }
        Ok(ParamValues { values })
    }

    /// The table for these values: validated by the table's own rules, ready to compute.
    pub fn prepare(
        &self,
        values: &ParamValues,
        sampling: Sampling,
    ) -> Result<Box<dyn PreparedTable>, TableError> {
        if sampling.trials == Some(0) {
            return Err(TableError::ZeroTrials);
        }
        (self.prepare)(values, sampling)
    }
}

/// A table ready to compute, whatever its system: what the command runs.
pub trait PreparedTable: Send + Sync {
    /// Runs its simulation has: `--trials` trials each (for the progress bar).
    fn runs(&self) -> usize;
    /// The exact results and, with trials, the simulation through the engine's driver,
    /// as one report.
    fn tabulate(&self, control: &RunControl) -> Result<TableReport, TableError>;
}

/// A table as a [`System`]: its runs are simulated, and its exact results computed, by the
/// engine's driver; it turns them into its report.
pub trait TableSystem: System + Send {
    fn sampling(&self) -> Sampling;
    /// The report from every run's exact result and, when simulated, its finished counts
    /// (in plan order). The seed is added to `params` by the caller.
    fn report(
        &self,
        exact: Vec<Option<Self::Exact>>,
        counts: Option<Vec<Self::Counts>>,
    ) -> Result<TableReport, TableError>;
}

impl<T: TableSystem> PreparedTable for T {
    fn runs(&self) -> usize {
        self.plan().runs.len()
    }

    fn tabulate(&self, control: &RunControl) -> Result<TableReport, TableError> {
        let Sampling { trials, seed } = self.sampling();
        let (exact, counts) = match trials {
            Some(n) => {
                let results = driver::run(self, n, seed, control)?;
                (results.exact, Some(results.counts))
            }
            None => (driver::exact(self, self.runs(), control)?, None),
        };
        let mut report = self.report(exact, counts)?;
        if trials.is_some() {
            report.params["seed"] = json!(seed);
        }
        Ok(report)
    }
}

/// The plan of a table's simulation: one run per name, with no axes.
pub fn plan(runs: &[&str], unit: &'static str) -> Plan {
    Plan {
        axes: Vec::new(),
        runs: runs
            .iter()
            .map(|name| RunKey {
                variant: name.to_string(),
                coordinates: Vec::new(),
            })
            .collect(),
        unit,
    }
}

/// One outcome of a single-roll table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutcomeRow {
    pub outcome: String,
    /// The exact probability where known, else the estimate.
    pub probability: f64,
    /// The exact probability as a reduced fraction; `null` when not exact.
    pub fraction: Option<String>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// The Monte Carlo estimate and its count, when trials were run.
    pub estimate: Option<f64>,
    pub count: Option<u64>,
}

/// An expectation over one roll (e.g. SP lost by L), exact.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpectationRow {
    pub name: String,
    pub value: f64,
    pub fraction: String,
}

impl ExpectationRow {
    pub fn of(name: impl Into<String>, value: Fraction) -> Self {
        Self {
            name: name.into(),
            value: value.to_f64(),
            fraction: value.to_string(),
        }
    }
}

/// Everything a `table` command prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableReport {
    /// The table's name (`crt`, `attrition`, `melee`, `frontier-fire`).
    pub system: String,
    pub title: String,
    pub params: Value,
    pub trials: Option<u64>,
    pub outcomes: Vec<OutcomeRow>,
    /// What the expectations are per, as text prints above them ("expected per roll").
    #[serde(skip)]
    pub expectations_heading: String,
    pub expectations: Vec<ExpectationRow>,
    /// Further groups of rows after the expectations (e.g. a whole melee engagement).
    pub sections: Vec<TableSection>,
}

/// A titled group of outcome rows. When `partition` is set the rows are disjoint and
/// sum to 1 (the Markdown percentages then sum to 100). Exact values here may be `f64`
/// from an exact enumeration too large for fractions; `fraction` is then `None`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableSection {
    pub title: String,
    pub partition: bool,
    /// Whether `probability` is exact (by enumeration) rather than the estimate.
    pub exact: bool,
    pub rows: Vec<OutcomeRow>,
}

/// A DRM as printed: `+1`, `0`, `-2`.
pub fn signed(v: i32) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

/// One row of a table from an exact value (fraction or `f64`) and, when simulated, its
/// count of `n` trials.
pub fn outcome_row(
    outcome: String,
    exact: Option<f64>,
    fraction: Option<String>,
    counts: Option<(u64, u64)>,
) -> OutcomeRow {
    let estimate = counts.map(|(k, n)| k as f64 / n as f64);
    let ci = counts.map(|(k, n)| wilson_interval(k, n, Z95));
    OutcomeRow {
        outcome,
        probability: exact.or(estimate).unwrap_or(0.0),
        fraction,
        ci_low: ci.map(|c| c.0),
        ci_high: ci.map(|c| c.1),
        estimate,
        count: counts.map(|c| c.0),
    }
}

/// A run's named outcomes ([`System::outcomes`]) as rows, with their counts of `trials`
/// when simulated.
pub fn outcome_rows(outcomes: Vec<Outcome>, trials: Option<u64>) -> Vec<OutcomeRow> {
    outcomes
        .into_iter()
        .map(|o| outcome_row(o.name, o.exact, o.fraction, trials.map(|n| (o.count, n))))
        .collect()
}

/// The heading of expectations taken over one roll.
pub const PER_ROLL: &str = "expected per roll";

/// A table read off one roll of one die (a d6, or 2d6 as one face of 36): each outcome's
/// exact share of the faces, what is printed with it worked out when it is prepared, and
/// the kernel its system rolls it with, `kernel(dice, n, counts)` adding `n` rolls.
pub struct FaceRoll<K> {
    /// The report but its outcome rows and trials.
    pub page: TableReport,
    pub unit: &'static str,
    pub outcomes: Vec<String>,
    pub exact: ExactDistribution,
    pub kernel: K,
    pub sampling: Sampling,
}

impl<K> System for FaceRoll<K>
where
    K: Fn(&mut DiceStream, u64, &mut [u64]) + Send + Sync,
{
    type Counts = Vec<u64>;
    type Exact = ExactDistribution;

    fn header(&self) -> Header<'_> {
        Header {
            name: &self.page.system,
            system: &self.page.system,
            seed: self.sampling.seed,
            trials: self.sampling.trials.unwrap_or(0),
            precision: None,
            tables: crate::analysis::TablesOptions::default(),
        }
    }

    fn plan(&self) -> Plan {
        plan(&[&self.page.system], self.unit)
    }

    fn empty(&self, _run: usize) -> Vec<u64> {
        vec![0; self.outcomes.len()]
    }

    fn simulate(&self, _run: usize, dice: &mut DiceStream, n: u64, counts: &mut Vec<u64>) {
        (self.kernel)(dice, n, counts);
    }

    fn exact(&self, _run: usize) -> Option<ExactDistribution> {
        Some(self.exact.clone())
    }

    fn outcomes(
        &self,
        _run: usize,
        counts: &Vec<u64>,
        exact: Option<&ExactDistribution>,
    ) -> Vec<Outcome> {
        self.outcomes
            .iter()
            .enumerate()
            .map(|(i, name)| Outcome {
                name: name.clone(),
                count: counts[i],
                exact: exact.map(|e| e.probability(i)),
                fraction: exact.map(|e| e.fraction(i).to_string()),
            })
            .collect()
    }

    fn distributions(
        &self,
        _run: usize,
        _counts: &Vec<u64>,
        _exact: Option<&ExactDistribution>,
    ) -> Vec<crate::engine::Distribution> {
        Vec::new()
    }

    fn rules(&self) -> Value {
        json!({"table": self.page.system, "params": self.page.params})
    }

    fn trials_counted(&self, _run: usize, counts: &Vec<u64>) -> u128 {
        crate::sim::total(counts)
    }
}

impl<K> TableSystem for FaceRoll<K>
where
    K: Fn(&mut DiceStream, u64, &mut [u64]) + Send + Sync,
{
    fn sampling(&self) -> Sampling {
        self.sampling
    }

    fn report(
        &self,
        exact: Vec<Option<ExactDistribution>>,
        counts: Option<Vec<Vec<u64>>>,
    ) -> Result<TableReport, TableError> {
        let counts = counts
            .and_then(|c| c.into_iter().next())
            .unwrap_or_else(|| self.empty(0));
        let outcomes = self.outcomes(0, &counts, exact[0].as_ref());
        Ok(TableReport {
            outcomes: outcome_rows(outcomes, self.sampling.trials),
            trials: self.sampling.trials,
            ..self.page.clone()
        })
    }
}
