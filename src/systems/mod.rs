//! Every rules system, by the name an analysis file gives it, and what the commands do
//! with any of them.
//!
//! Why this module exists: the commands (`run`, `validate`, shards and `merge`) are
//! written once, against [`Study`] — an object-safe view of any [`System`] with a report
//! — and the systems are the core's [`battlelab_core::systems::REGISTRY`], each paired
//! here with its study type in [`REPORTS`] (a test holds the two lists row for row).
//! Adding a system is its folder (core and report), one registration row in each list
//! and no command change. Dynamic dispatch
//! happens once per command, never in a hot loop: the blanket implementation below calls
//! the engine's generic driver, which is monomorphised for each system.

pub mod d6_tables;
pub mod field;
pub mod frontier;
pub mod melee;
pub mod naval_engagement;
pub mod ratio;
pub mod rules_file;
pub mod setup;

use std::path::{Path, PathBuf};

use crate::analysis::AnalysisError;
use crate::engine::choices::SimultaneousChoices;
use crate::engine::driver::{self, PlanResults, Share};
use crate::engine::shard::{self, ShardError, ShardIdentity};
use crate::engine::{Header, Plan, System};
use crate::pipeline::{self, RunInfo, SystemReport};
use crate::report::{self, ReportError};
use crate::sim::{Histogram, Interrupted, RunControl, BLOCK_TRIALS};
use battlelab_core::systems::{self as core_systems, Registration};
use d6_tables::D6TableStudy;
use field::FieldStudy;
use frontier::FrontierStudy;
use melee::MeleeStudy;
use naval_engagement::NavalEngagementStudy;
use ratio::RatioStudy;
use rules_file::RulesStudy;
use setup::SetupStudy;

/// Why a run, a shard or a merge did not write its folder.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Shard(#[from] ShardError),
}

/// An analysis file's text and the name the user gave it.
#[derive(Clone, Debug)]
pub struct AnalysisText {
    /// The path as given on the command line (it names the file in errors, and its stem
    /// is the report's name when the file names none).
    pub path: PathBuf,
    pub text: String,
}

impl AnalysisText {
    /// The file name alone: what a shard records, so that a merge elsewhere parses the
    /// same text under the same name.
    pub fn file_name(&self) -> String {
        self.path.file_name().map_or_else(
            || "analysis.toml".into(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// A shard folder read back for a merge.
#[derive(Clone, Debug)]
pub struct ShardFolder {
    /// How the user named it (for messages).
    pub label: String,
    pub identity: ShardIdentity,
    /// The counts file's text.
    pub counts: String,
    /// The analysis text the shard carries (its `analysis.toml`).
    pub analysis: String,
}

/// What a run wrote: its report's files, and, for a run to a precision, what it reached.
#[derive(Clone, Debug)]
pub struct Written {
    pub files: Vec<PathBuf>,
    pub precision: Option<driver::Precision>,
}

/// Any validated analysis, as the commands use it.
pub trait Study: Send + Sync {
    fn header(&self) -> Header<'_>;
    /// The system and its form, for `validate` ("ratio (skirmish)").
    fn kind(&self) -> String;
    fn plan(&self) -> Plan;
    /// Runs every block of every run — or, with `precision`, each run until its
    /// probabilities' 95% intervals are that narrow (at most `trials`) — and writes the
    /// report folder at `out`.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        analysis: &AnalysisText,
        trials: u64,
        seed: u64,
        precision: Option<f64>,
        control: &RunControl,
        out: &Path,
        info: &RunInfo,
    ) -> Result<Written, RunError>;
    /// Runs share `shard` of `shards` (1-based) and writes a shard folder at `out`.
    fn run_shard(
        &self,
        analysis: &AnalysisText,
        trials: u64,
        seed: u64,
        shard: (u64, u64),
        control: &RunControl,
        out: &Path,
    ) -> Result<Vec<PathBuf>, RunError>;
    /// What run `run` can be asked about: its outcomes and metrics (for `[[expect]]`).
    fn run_names(&self, run: usize) -> crate::engine::expect::RunNames;
    /// Blocks `blocks` of `run` (of a run of `trials` trials), each block's outcome counts
    /// and metric sums, and with `with_exact` the run's exact results (for `check` and
    /// `compare`).
    fn arm_blocks(
        &self,
        run: usize,
        blocks: std::ops::Range<u64>,
        trials: u64,
        seed: u64,
        with_exact: bool,
        control: &RunControl,
    ) -> Result<crate::engine::compare::Arm, Interrupted>;
    /// Adds up complete, checked shards and writes the report folder at `out`.
    fn merge(
        &self,
        analysis: &AnalysisText,
        shards: &[ShardFolder],
        control: &RunControl,
        out: &Path,
        info: &RunInfo,
    ) -> Result<Vec<PathBuf>, RunError>;
    /// The choices both sides make at once each round, where the system declares them
    /// ([`System::simultaneous_choices`]; `None` by default): what `equilibrium` solves.
    fn simultaneous_choices(&self) -> Option<&dyn SimultaneousChoices>;
    /// What the user should know about how the runs are made ([`System::notices`]).
    fn notices(&self) -> Vec<String>;
}

impl<S: SystemReport + Send + Sync> Study for S {
    fn header(&self) -> Header<'_> {
        System::header(self)
    }

    fn kind(&self) -> String {
        System::kind(self)
    }

    fn plan(&self) -> Plan {
        System::plan(self)
    }

    fn simultaneous_choices(&self) -> Option<&dyn SimultaneousChoices> {
        System::simultaneous_choices(self)
    }

    fn notices(&self) -> Vec<String> {
        System::notices(self)
    }

    fn run(
        &self,
        analysis: &AnalysisText,
        trials: u64,
        seed: u64,
        precision: Option<f64>,
        control: &RunControl,
        out: &Path,
        info: &RunInfo,
    ) -> Result<Written, RunError> {
        let results = match precision {
            Some(p) => driver::run_to_precision(self, p, trials, seed, control)?,
            None => driver::run(self, trials, seed, control)?,
        };
        let files = pipeline::write_report(self, &analysis.text, &results, out, info)?;
        Ok(Written {
            files,
            precision: results.precision,
        })
    }

    fn run_names(&self, run: usize) -> crate::engine::expect::RunNames {
        crate::engine::expect::RunNames::of(self, run)
    }

    fn arm_blocks(
        &self,
        run: usize,
        blocks: std::ops::Range<u64>,
        trials: u64,
        seed: u64,
        with_exact: bool,
        control: &RunControl,
    ) -> Result<crate::engine::compare::Arm, Interrupted> {
        crate::engine::compare::arm_blocks(self, run, blocks, trials, seed, with_exact, control)
    }

    fn run_shard(
        &self,
        analysis: &AnalysisText,
        trials: u64,
        seed: u64,
        (index, count): (u64, u64),
        control: &RunControl,
        out: &Path,
    ) -> Result<Vec<PathBuf>, RunError> {
        let runs = System::plan(self).runs.len();
        let share = Share {
            index: index - 1,
            count,
        };
        let counts = driver::simulate(self, runs, trials, seed, share, control)?;
        let counts_text = serde_json::to_string(&counts).expect("counts serialise") + "\n";
        let mut identity = identity(self, analysis, trials, seed, index, count);
        identity.counts_sha256 = pipeline::sha256(counts_text.as_bytes());
        let mut manifest = serde_json::to_value(&identity).expect("identities serialise");
        manifest["tool"] = "battlelab".into();
        Ok(report::write_atomically(out, |dir| {
            report::write_text(dir, shard::COUNTS_FILE, &counts_text)?;
            report::write_text(dir, pipeline::ANALYSIS_COPY, &analysis.text)?;
            report::write_manifest(dir, &manifest)
        })?)
    }

    fn merge(
        &self,
        analysis: &AnalysisText,
        shards: &[ShardFolder],
        control: &RunControl,
        out: &Path,
        info: &RunInfo,
    ) -> Result<Vec<PathBuf>, RunError> {
        let first = &shards.first().ok_or(ShardError::Empty)?.identity;
        let expected = identity(self, analysis, first.trials, first.seed, 1, first.shards);
        let labelled: Vec<(String, ShardIdentity)> = shards
            .iter()
            .map(|s| (s.label.clone(), s.identity.clone()))
            .collect();
        shard::check_complete(&labelled)?;
        // The shards agree with each other; they must also be of this analysis, as this
        // battlelab reads it (the rules hash is of the validated rules).
        let mut ours = expected.clone();
        ours.shard = first.shard;
        ours.counts_sha256 = first.counts_sha256.clone();
        if *first != ours {
            return Err(ShardError::Unreadable {
                shard: shards[0].label.clone(),
                message: "its rules do not match its own analysis file as this battlelab validates it; re-run the shards with this version".into(),
            }
            .into());
        }
        let runs = System::plan(self).runs.len();
        // Each shard on its own first (so a refusal names the shard that is wrong), then
        // the sums of all.
        let mut counted = Vec::with_capacity(shards.len());
        for folder in shards {
            let (counts, values) = proven_counts(self, folder, runs)?;
            let share = Share {
                index: folder.identity.shard - 1,
                count: folder.identity.shards,
            };
            for (run, counts) in counts.iter().enumerate() {
                let covered = share.run_trials(run, runs, first.trials);
                check_totals(self, &folder.label, run, counts, covered)?;
            }
            counted.push((counts, values));
        }
        check_sums(shards, &counted)?;
        // Shards write finished counts (the driver finishes each run's blocks): start
        // from finished empty ones, the shape every shard's counts must have.
        let mut counts: Vec<S::Counts> = (0..runs).map(|run| self.empty_finished(run)).collect();
        for (theirs, _) in counted {
            for (mine, theirs) in counts.iter_mut().zip(theirs) {
                mine.merge(theirs);
            }
        }
        let exact = driver::exact(self, runs, control)?;
        let results = PlanResults {
            trials: first.trials,
            seed: first.seed,
            counts,
            exact,
            run_trials: vec![first.trials; runs],
            precision: None,
        };
        Ok(pipeline::write_report(
            self,
            &analysis.text,
            &results,
            out,
            info,
        )?)
    }
}

/// A study as `battlelab value` prices it (`battlelab_core::pricing`): its plan and its
/// runs' blocks, through [`Study`].
impl battlelab_core::pricing::Priceable for Box<dyn Study> {
    fn plan(&self) -> Plan {
        Study::plan(&**self)
    }

    fn arm_blocks(
        &self,
        run: usize,
        blocks: std::ops::Range<u64>,
        trials: u64,
        seed: u64,
        with_exact: bool,
        control: &RunControl,
    ) -> Result<crate::engine::compare::Arm, Interrupted> {
        Study::arm_blocks(&**self, run, blocks, trials, seed, with_exact, control)
    }
}

/// A shard folder's counts, once its files are proven to be the ones its manifest
/// describes: its analysis text and counts file hash to what the manifest records, and
/// each run's counts have the shape of this plan's run. Returns the counts and their
/// JSON (for the sums across shards).
#[allow(clippy::type_complexity)]
fn proven_counts<S: System>(
    system: &S,
    folder: &ShardFolder,
    runs: usize,
) -> Result<(Vec<S::Counts>, Vec<serde_json::Value>), ShardError> {
    let refuse = |message: String| ShardError::Unreadable {
        shard: folder.label.clone(),
        message,
    };
    let identity = &folder.identity;
    if pipeline::sha256(folder.analysis.as_bytes()) != identity.analysis_sha256 {
        return Err(refuse(format!(
            "its {} is not the analysis its {} records (its SHA-256 differs: edited after the run?); run the shard again",
            pipeline::ANALYSIS_COPY,
            crate::output::MANIFEST
        )));
    }
    if pipeline::sha256(folder.counts.as_bytes()) != identity.counts_sha256 {
        return Err(refuse(format!(
            "its {} is not the file its {} records (its SHA-256 differs: edited or damaged after the run); run the shard again",
            shard::COUNTS_FILE,
            crate::output::MANIFEST
        )));
    }
    let values: Vec<serde_json::Value> = serde_json::from_str(&folder.counts)
        .map_err(|e| refuse(format!("its {} cannot be read: {e}", shard::COUNTS_FILE)))?;
    if values.len() != runs {
        return Err(refuse(format!(
            "it holds {} runs, the plan {runs}",
            values.len()
        )));
    }
    let mut counts = Vec::with_capacity(runs);
    for (run, value) in values.iter().enumerate() {
        // Counts of another shape (a tampered or foreign file) would be cut short or
        // overflow when added: refuse them.
        let shape = || {
            refuse(format!(
                "its counts of run {} do not have the shape this plan's run has",
                run + 1
            ))
        };
        if !same_shape(&to_json(&system.empty_finished(run)), value) {
            return Err(shape());
        }
        counts.push(serde::Deserialize::deserialize(value).map_err(|_| shape())?);
    }
    Ok((counts, values))
}

/// Refuses a set of shards whose counts, added up, would pass 2^64 − 1 anywhere (a
/// count that wrapped would print as a small or negative one), naming the shard whose
/// counts carry the sum past it.
fn check_sums<C>(
    shards: &[ShardFolder],
    counted: &[(Vec<C>, Vec<serde_json::Value>)],
) -> Result<(), ShardError> {
    let Some((_, first)) = counted.first() else {
        return Ok(());
    };
    let mut sums: Vec<serde_json::Value> = first.clone();
    for (folder, (_, values)) in shards.iter().zip(counted).skip(1) {
        for (run, (sum, value)) in sums.iter_mut().zip(values).enumerate() {
            if !add_counts(sum, value) {
                return Err(ShardError::Unreadable {
                    shard: folder.label.clone(),
                    message: format!(
                        "its counts of run {} carry a sum of the shards' counts past 2^64 − 1; no run counts that many trials: its {} is not a run's",
                        run + 1,
                        shard::COUNTS_FILE
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Adds every count of `value` into `sum` (of the same shape); false if one overflows.
fn add_counts(sum: &mut serde_json::Value, value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (sum, value) {
        (Value::Array(sum), Value::Array(value)) => sum
            .iter_mut()
            .zip(value)
            .all(|(sum, value)| add_counts(sum, value)),
        (Value::Object(sum), Value::Object(value)) => sum
            .iter_mut()
            .all(|(key, sum)| value.get(key).is_none_or(|v| add_counts(sum, v))),
        (Value::Number(a), Value::Number(b)) => {
            match a
                .as_u64()
                .zip(b.as_u64())
                .and_then(|(a, b)| a.checked_add(b))
            {
                Some(total) => {
                    *a = total.into();
                    true
                }
                None => false,
            }
        }
        _ => true,
    }
}

/// Refuses a shard's counts of `run` unless they total the trials its blocks of the run
/// cover, and no outcome or distribution counts more trials than that.
fn check_totals<S: System>(
    system: &S,
    label: &str,
    run: usize,
    counts: &S::Counts,
    covered: u64,
) -> Result<(), ShardError> {
    let unit = System::plan(system).unit;
    let refuse = |message: String| ShardError::Unreadable {
        shard: label.to_string(),
        message,
    };
    let total = system.trials_counted(run, counts);
    if total != u128::from(covered) {
        return Err(refuse(format!(
            "its counts of run {} total {total} {unit}, but its blocks of that run hold {covered}; its {} is not the run's",
            run + 1,
            shard::COUNTS_FILE
        )));
    }
    for outcome in system.outcomes(run, counts, None) {
        if outcome.count > covered {
            return Err(refuse(format!(
                "its counts of run {} give \"{}\" {} {unit} of {covered}; its {} is not the run's",
                run + 1,
                crate::limits::echo(&outcome.name),
                outcome.count,
                shard::COUNTS_FILE
            )));
        }
    }
    for distribution in system.distributions(run, counts, None) {
        let counted = crate::sim::total(&distribution.counts);
        if counted > u128::from(covered) {
            return Err(refuse(format!(
                "its counts of run {} give {} over {counted} {unit} of {covered}; its {} is not the run's",
                run + 1,
                crate::limits::echo(&distribution.metric),
                shard::COUNTS_FILE
            )));
        }
    }
    Ok(())
}

fn to_json<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).expect("counts serialise")
}

/// Whether two counts have the same fields and the same list lengths (values aside).
fn same_shape(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_shape(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_shape(v, w)))
        }
        (Value::Number(_), Value::Number(y)) => y.is_u64(),
        _ => false,
    }
}

/// What a shard of this analysis, seed and trials is.
fn identity<S: System>(
    system: &S,
    analysis: &AnalysisText,
    trials: u64,
    seed: u64,
    shard: u64,
    shards: u64,
) -> ShardIdentity {
    let header = system.header();
    ShardIdentity {
        format: shard::FORMAT.into(),
        format_version: shard::FORMAT_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        name: header.name.to_string(),
        system: header.system.to_string(),
        analysis_file: analysis.file_name(),
        analysis_dir: analysis
            .path
            .parent()
            .and_then(|d| {
                let d = if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                };
                std::fs::canonicalize(d).ok()
            })
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        analysis_sha256: pipeline::sha256(analysis.text.as_bytes()),
        // Set once the counts are written (a shard), or taken from the first (a merge).
        counts_sha256: String::new(),
        rules_hash: pipeline::sha256(system.rules().to_string().as_bytes()),
        seed,
        trials,
        block_trials: BLOCK_TRIALS,
        runs: system.plan().runs.len(),
        shard,
        shards,
    }
}

/// The one-roll tables every system declares beside its core (`systems::<name>::one_roll`
/// in the core crate): the subcommands of `battlelab table`.
pub use battlelab_core::systems::{one_roll_table, one_roll_tables};

/// Parses an analysis of one system.
type Parse = fn(&Path, &str) -> Result<Box<dyn Study>, AnalysisError>;

fn boxed<S: Study + 'static>(
    study: Result<S, AnalysisError>,
) -> Result<Box<dyn Study>, AnalysisError> {
    study.map(|s| Box::new(s) as Box<dyn Study>)
}

/// Each registered system's study type, in the order of
/// [`battlelab_core::systems::REGISTRY`]: the core registration and the parser that
/// makes a [`Study`] of it (the type that pairs its `System` with its `SystemReport`).
/// A test holds this list to the core's, row for row.
pub const REPORTS: [(&Registration, Parse); 8] = [
    (&core_systems::field::REGISTRATION, |p, t| {
        boxed(FieldStudy::parse(p, t))
    }),
    (&core_systems::d6_tables::REGISTRATION, |p, t| {
        boxed(D6TableStudy::parse(p, t))
    }),
    (&core_systems::setup::REGISTRATION, |p, t| {
        boxed(SetupStudy::parse(p, t))
    }),
    (&core_systems::naval_engagement::REGISTRATION, |p, t| {
        boxed(NavalEngagementStudy::parse(p, t))
    }),
    (&core_systems::ratio::REGISTRATION, |p, t| {
        boxed(RatioStudy::parse(p, t))
    }),
    (&core_systems::melee::REGISTRATION, |p, t| {
        boxed(MeleeStudy::parse(p, t))
    }),
    (&core_systems::frontier::REGISTRATION, |p, t| {
        boxed(FrontierStudy::parse(p, t))
    }),
    (&core_systems::rules_file::REGISTRATION, |p, t| {
        boxed(RulesStudy::parse(p, t))
    }),
];

/// Validates analysis text of any system; `path` names it in errors. A file naming no
/// system, or one no registration answers to, goes to the first (field battles), whose
/// parser names the fault and the systems there are.
pub fn parse(path: &Path, text: &str) -> Result<Box<dyn Study>, AnalysisError> {
    // The core decides which registration a text names, for this parser and the
    // WebAssembly module's alike.
    let (_, parse) = &REPORTS[core_systems::registered(text)];
    parse(path, text)
}

/// The `[[expect]]` entries of an analysis, validated against its plan.
pub fn expectations(
    study: &dyn Study,
    path: &Path,
    text: &str,
) -> Result<Vec<crate::engine::expect::Expectation>, AnalysisError> {
    crate::engine::expect::parse(&path.display().to_string(), text, &study.plan(), &|run| {
        study.run_names(run)
    })
}

/// An analysis file read and validated, with what the engine reads from any file.
pub struct Loaded {
    pub study: Box<dyn Study>,
    pub analysis: AnalysisText,
    /// Its `[[expect]]` entries, validated against its plan.
    pub expectations: Vec<crate::engine::expect::Expectation>,
    /// Its `precision = …`, if it runs until precise.
    pub precision: Option<f64>,
}

/// Reads and validates an analysis file of any system, its expectations and precision
/// included.
pub fn load(path: &Path) -> Result<Loaded, AnalysisError> {
    let text = crate::toml_input::read_analysis_file(path)?;
    let study = parse(path, &text)?;
    let expectations = expectations(&*study, path, &text)?;
    let precision = study.header().precision;
    // `[value]` is read by `battlelab value`; checked here so `validate` and `run` refuse
    // a bad one too.
    crate::levers::value_settings(
        &battlelab_core::files::Disk,
        path,
        &text,
        study.header().system,
        &study.plan(),
    )?;
    Ok(Loaded {
        study,
        analysis: AnalysisText {
            path: path.to_path_buf(),
            text,
        },
        expectations,
        precision,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_added_until_one_would_pass_u64() {
        let mut sum = serde_json::json!({"result": [1, 2], "rounds": [[3], [4]]});
        assert!(add_counts(
            &mut sum,
            &serde_json::json!({"result": [10, 20], "rounds": [[30], [40]]})
        ));
        assert_eq!(
            sum,
            serde_json::json!({"result": [11, 22], "rounds": [[33], [44]]})
        );
        let mut sum = serde_json::json!({"result": [1u64 << 63, 0]});
        assert!(add_counts(
            &mut sum,
            &serde_json::json!({"result": [(1u64 << 63) - 1, 0]})
        ));
        assert!(!add_counts(
            &mut sum,
            &serde_json::json!({"result": [1, 0]})
        ));
    }

    #[test]
    fn the_shard_whose_counts_pass_u64_is_named() {
        let shard = |label: &str| ShardFolder {
            label: label.into(),
            identity: ShardIdentity {
                format: shard::FORMAT.into(),
                format_version: shard::FORMAT_VERSION,
                tool_version: String::new(),
                name: String::new(),
                system: String::new(),
                analysis_file: String::new(),
                analysis_dir: String::new(),
                analysis_sha256: String::new(),
                counts_sha256: String::new(),
                rules_hash: String::new(),
                seed: 0,
                trials: 0,
                block_trials: 0,
                runs: 1,
                shard: 1,
                shards: 3,
            },
            counts: String::new(),
            analysis: String::new(),
        };
        let shards = [shard("s1"), shard("s2"), shard("s3")];
        let counted = |values: [u64; 3]| -> Vec<(Vec<()>, Vec<serde_json::Value>)> {
            values
                .iter()
                .map(|&v| (vec![], vec![serde_json::json!([v, 1])]))
                .collect()
        };
        check_sums(&shards, &counted([u64::MAX - 2, 1, 1])).unwrap();
        let e = check_sums(&shards, &counted([u64::MAX - 2, 1, 2])).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s3: its counts of run 1 carry a sum"),
            "{e}"
        );
    }

    #[test]
    fn every_registered_system_has_its_report_and_reads_its_own_starter_file() {
        assert_eq!(REPORTS.len(), core_systems::REGISTRY.len());
        for ((registration, _), core) in REPORTS.iter().zip(&core_systems::REGISTRY) {
            assert_eq!(
                registration.folder, core.folder,
                "REPORTS is in REGISTRY's order"
            );
            for doc in registration.docs {
                let study = parse(Path::new("starter.toml"), doc.starter)
                    .unwrap_or_else(|e| panic!("{}: its starter file: {e}", doc.name));
                assert_eq!(study.header().system, doc.name);
            }
        }
    }
}
