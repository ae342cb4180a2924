//! The naval-engagement study (docs/systems/naval.md): two fleets fight the naval table and
//! pursuit chain, swept over odds and DRM; who ends in control, and what does it cost?
//!
//! Why this module exists: it is the analysis-file boundary and report for
//! [`crate::systems::naval_engagement::engagement`], in the same shape as field battles: validated once, exact
//! enumeration beside simulation, Polars frames, charts, rulebook tables and a manifest.
//!
//! ```toml
//! system = "naval_engagement"
//! seed = 1805
//!
//! [engagement]
//! coastal = false      # −1 to pursuit rolls: pursuers in a coastal hex or port
//! round_limit = 20
//!
//! [fleet.a]
//! nsp = 6
//! morale = 2           # Major 2, Minor 1
//! leader = 1
//!
//! [fleet.b]
//! nsp = 4
//! morale = 2
//! pursue = true
//!
//! [sweep]
//! odds = ["1-1", "3-2", "2-1"]   # sets A's NSP from B's
//! drm = { from = -2, to = 2 }    # extra DRM in A's favour
//!
//! [rules.cells."1-1"]            # naval-table overrides: column → modified roll → code
//! "8" = "2SC"
//! ```

pub mod engagement;
#[doc(hidden)]
pub mod scenarios;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::json;
use toml::Spanned;

use crate::analysis::{self, AnalysisError, AxisValue, Source, SweepAxis};
use crate::engine::headline::{Headline, Match};
use crate::header::{analysis_file, variant_table, AnalysisHeader};
use crate::keys::{self, key, KeyDoc, PricedAt, SetBy, SystemDoc, Ty, ValueDoc, REQUIRED};
use crate::sim::{Interrupted, RunControl};
use crate::systems::d6_tables::lookup::D6Table;
use crate::systems::d6_tables::{apply_cells, CellOverrides};
use crate::systems::naval_engagement::engagement::{
    Engagement, EngagementDistribution, EngagementHistogram, EngagementResult, Fleet, NavalCombat,
};

/// What a naval-engagement study can sweep.
pub const PARAMETERS: [&str; 8] = [
    "odds", "drm", "a.nsp", "b.nsp", "a.morale", "b.morale", "a.leader", "b.leader",
];

/// A validated naval-engagement study.
#[derive(Debug, Clone)]
pub struct NavalEngagementStudy {
    pub header: AnalysisHeader,
    /// The fleets' names (`fleet.a.name`, `fleet.b.name`; "A" and "B" unless named).
    pub side_names: [String; 2],
    pub variants: Vec<(String, NavalCombat)>,
    pub axes: Vec<SweepAxis>,
    /// `(variant, coordinates, engagement)`, variant-major.
    pub runs: Vec<(usize, Vec<AxisValue>, Engagement)>,
}

analysis_file! {
    struct NavalFile {
        #[serde(default)]
        engagement: EngagementSpec,
        fleet: FleetsSpec,
        sweep: Option<BTreeMap<String, Spanned<toml::Value>>>,
        rules: Option<CellOverrides>,
        variant: Option<Vec<VariantSpec>>,
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct EngagementSpec {
    coastal: Option<bool>,
    round_limit: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FleetsSpec {
    a: FleetSpec,
    b: FleetSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FleetSpec {
    name: Option<Spanned<String>>,
    nsp: Spanned<i64>,
    morale: Spanned<i64>,
    leader: Option<Spanned<i64>>,
    drm: Option<Spanned<i64>>,
    pursue: Option<bool>,
}

variant_table! {
    struct VariantSpec {
        rules: Option<CellOverrides>,
    }
}

/// Every key of a naval-engagement file (`battlelab keys naval_engagement`), beside the
/// structs that parse them.
pub const KEYS: &[&[KeyDoc]] = &[keys::HEADER, NAVAL_KEYS, keys::EXPECT_VALUE];

const NAVAL_KEYS: &[KeyDoc] = &[
    key("engagement.coastal", Ty::Bool, "false", "-1 to pursuit rolls: pursuers in a coastal hex or port", "true"),
    key("engagement.round_limit", Ty::Int(1, 100), "20", "safety bound on the battle → pursuit → battle chain", "20"),
    key("fleet.{a,b}.name", Ty::Text, "\"A\" / \"B\"", "the fleet's name in reports", "\"Squadron\""),
    key("fleet.{a,b}.nsp", Ty::Int(1, crate::systems::naval_engagement::engagement::MAX_NSP as i64), REQUIRED, "naval strength points", "4").sweep("{a,b}.nsp").priced().searched(1, 30).set_by(ODDS_SET_A_NSP),
    key("fleet.{a,b}.morale", Ty::Int(1, 2), REQUIRED, "naval morale (Major 2, Minor 1)", "2").sweep("{a,b}.morale").priced(),
    key("fleet.{a,b}.leader", Ty::Int(0, 3), "0", "leader rating", "1").sweep("{a,b}.leader").priced(),
    key("fleet.{a,b}.drm", Ty::Int(-6, 6), "0", "a DRM in this fleet's favour", "1"),
    key("fleet.{a,b}.pursue", Ty::Bool, "true", "whether the fleet pursues one that breaks off", "false"),
    key("sweep.odds", Ty::OddsList, "none", "odds L-S (\"1-1\", \"3-2\", \"2-1\"); sets A's NSP from B's", "[\"1-1\", \"2-1\"]").sweep("odds").priced_as("odds", PricedAt::OddsColumns),
    key("sweep.drm", Ty::Sweep, "none", "an extra DRM in A's favour", "{ from = -2, to = 2 }").sweep("drm").priced_as("drm", PricedAt::SweepOnly { default: 0 }).searched(-6, 6),
    key("rules.cells.<column>.<roll>", Ty::Text, "as printed", "a naval-table cell: column (\"1-1\") × modified roll = code (2LS, LC, LR, SR, SS, SC, 2SC …)", "\"2SC\"").in_variant(),
    key("[[variant]].name", Ty::Text, REQUIRED, "the variant's name", "\"printed\""),
    key("[[variant]].description", Ty::Text, "none", "what the variant changes", "\"as printed\""),
];

/// This system in [`crate::systems::REGISTRY`].
pub const REGISTRATION: crate::systems::Registration = crate::systems::Registration {
    folder: "naval_engagement",
    docs: &[DOC],
    benches: &["strategic"],
    one_roll: &[],
    parse: |path, text, _| crate::systems::study(NavalEngagementStudy::parse(path, text)),
};

/// `battlelab keys` and `battlelab new` for naval engagements.
pub const DOC: SystemDoc = SystemDoc {
    companion: None,
    name: "naval_engagement",
    summary: "naval engagements (docs/systems/naval.md): the naval table and the pursuit chain, swept over odds and DRM",
    keys: KEYS,
    starter: "system = \"naval_engagement\"\ntrials = 10_000\n\n[engagement]\ncoastal = false      # -1 to pursuit rolls: pursuers in a coastal hex or port\nround_limit = 20\n\n[fleet.a]\nnsp = 6\nmorale = 2           # Major 2, Minor 1\nleader = 1\n\n[fleet.b]\nnsp = 4\nmorale = 2\n\n[sweep]\nodds = [\"1-1\", \"3-2\", \"2-1\"]   # sets A's NSP from B's\ndrm = { from = -1, to = 1 }    # extra DRM in A's favour\n",
    value: ValueDoc {
        headlines,
        default_modifiers: &["drm+1", "a.leader+1", "a.morale+1", "odds+1"],
        currency: Some(("odds", "odds columns")),
        odds_columns: Some(|_, _| {
            // The naval table's printed columns (1-1, 3-2, 2-1); a file cannot add one.
            crate::systems::d6_tables::lookup::D6Table::naval()
                .column_labels
                .iter()
                .filter_map(|l| crate::systems::field::battle::OddsColumn::parse_ratio(l))
                .collect()
        }),
    },
};

/// What `value` reads first: P(B destroyed), then each fleet's NSP lost.
fn headlines() -> Vec<Headline> {
    vec![
        Headline::outcomes(
            "b_destroyed",
            "P(B destroyed)",
            Match::Is(vec!["B destroyed".into()]),
        ),
        Headline::metric("nsp_lost_b"),
        Headline::metric("nsp_lost_a"),
    ]
}

const ODDS_SET_A_NSP: &[SetBy] = &[SetBy {
    only: "a",
    axis: "odds",
    prefix: "",
    what: "[sweep] odds, which sets A's NSP to ⌈B's NSP × L/S⌉",
    instead:
        "price odds±N (a step along the table's odds columns) or b.nsp, or drop the odds sweep",
}];

fn fleet(source: &Source, key: &str, spec: &FleetSpec) -> Result<Fleet, AnalysisError> {
    let field = |f: &str| format!("fleet.{key}.{f}");
    let name = match &spec.name {
        Some(name) => analysis::report_text(
            source,
            name,
            &field("name"),
            "a fleet's name",
            analysis::Lines::One,
        )?,
        None => key.to_ascii_uppercase(),
    };
    Ok(Fleet {
        name,
        nsp: source.int_in(
            &spec.nsp,
            &field("nsp"),
            1,
            crate::systems::naval_engagement::engagement::MAX_NSP.into(),
            "a fleet's NSP",
        )? as u32,
        morale: source.int_in(
            &spec.morale,
            &field("morale"),
            1,
            2,
            "naval morale (Major 2, Minor 1)",
        )? as u32,
        leader: match &spec.leader {
            Some(v) => source.int_in(v, &field("leader"), 0, 3, "a leader rating")? as i32,
            None => 0,
        },
        drm: match &spec.drm {
            Some(v) => source.int_in(v, &field("drm"), -6, 6, "a fleet's DRM")? as i32,
            None => 0,
        },
        pursues: spec.pursue.unwrap_or(true),
    })
}

impl NavalEngagementStudy {
    pub fn parse(path: &Path, text: &str) -> Result<Self, AnalysisError> {
        let source = Source::new(path, text);
        let spec: NavalFile = source.parse_toml()?;
        let header = AnalysisHeader::parse(path, &source, None)?;
        let round_limit = match &spec.engagement.round_limit {
            Some(v) => {
                source.int_in(v, "engagement.round_limit", 1, 100, "the round limit")? as u32
            }
            None => 20,
        };
        let base = Engagement {
            a: fleet(&source, "a", &spec.fleet.a)?,
            b: fleet(&source, "b", &spec.fleet.b)?,
            coastal: spec.engagement.coastal.unwrap_or(false),
            round_limit,
        };
        let compile = |table: D6Table, line: Option<usize>| {
            NavalCombat::new(table).map_err(|e| source.error_at(line, e.field, e.message))
        };
        let base_table = apply_cells(&source, "rules", spec.rules.as_ref(), D6Table::naval())?;
        let mut variants: Vec<(String, NavalCombat)> = Vec::new();
        for (i, (v, heading)) in spec
            .variant
            .iter()
            .flatten()
            .zip(&header.variants)
            .enumerate()
        {
            let table = apply_cells(
                &source,
                &format!("variant[{i}].rules"),
                v.rules.as_ref(),
                base_table.clone(),
            )?;
            variants.push((heading.name.clone(), compile(table, Some(heading.line))?));
        }
        if variants.is_empty() {
            variants.push(("base".into(), compile(base_table, None)?));
        }
        let (axes, lines) = analysis::sweep_axes(&source, spec.sweep.as_ref(), &PARAMETERS)?;
        analysis::check_grid_size(&source, &axes, variants.len())?;
        let mut runs = Vec::new();
        for (variant, (_, naval)) in variants.iter().enumerate() {
            for coordinates in analysis::grid(&axes) {
                let mut e = base.clone();
                let mut extra = 0i64;
                let mut odds = None;
                for (axis, value) in axes.iter().zip(&coordinates) {
                    let int = |v: &AxisValue| match v {
                        AxisValue::Int(x) => *x,
                        _ => 0,
                    };
                    let clamp = |v: i64| v.clamp(-1_000_000, 1_000_000);
                    match axis.parameter.as_str() {
                        "odds" => odds = Some(value.clone()),
                        "drm" => extra = clamp(int(value)),
                        "a.nsp" => e.a.nsp = clamp(int(value)).max(0) as u32,
                        "b.nsp" => e.b.nsp = clamp(int(value)).max(0) as u32,
                        "a.morale" => e.a.morale = clamp(int(value)).max(0) as u32,
                        "b.morale" => e.b.morale = clamp(int(value)).max(0) as u32,
                        "a.leader" => e.a.leader = clamp(int(value)) as i32,
                        _ => e.b.leader = clamp(int(value)) as i32,
                    }
                }
                if let Some(AxisValue::Odds { larger, smaller }) = &odds {
                    let label = format!("{larger}-{smaller}");
                    if naval.table().table().column_index(&label).is_none() {
                        let line = axes
                            .iter()
                            .position(|a| a.parameter == "odds")
                            .and_then(|i| lines[i]);
                        return Err(source.error_at(
                            line,
                            "sweep.odds",
                            format!("odds {label} are not on the naval table; allowed: 1-1, 3-2, 2-1 (odds above 2-1 use 2-1)"),
                        ));
                    }
                    e.a.nsp = (u64::from(e.b.nsp) * u64::from(*larger))
                        .div_ceil(u64::from(*smaller))
                        .min(1_000_000) as u32;
                }
                e.a.drm += extra as i32;
                e.validate().map_err(|err| {
                    let line = axes
                        .iter()
                        .position(|a| {
                            err.field.ends_with(&a.parameter)
                                || (a.parameter == "odds" && err.field == "fleet.a.nsp")
                                || (a.parameter == "drm" && err.field == "fleet.a.drm")
                        })
                        .and_then(|i| lines[i]);
                    let at = analysis::describe_point(&axes, &coordinates, None);
                    source.error_at(line, err.field.clone(), format!("{}{at}", err.message))
                })?;
                runs.push((variant, coordinates, e));
            }
        }
        Ok(Self {
            header,
            side_names: [base.a.name.clone(), base.b.name.clone()],
            variants,
            axes,
            runs,
        })
    }
}

/// Simulated counts and exact distribution per run.
#[derive(Debug, Clone)]
pub struct NavalEngagementResults {
    pub trials: u64,
    pub seed: u64,
    pub runs: Vec<(EngagementHistogram, EngagementDistribution)>,
}

/// Runs every engagement on the engine's driver (common random numbers: one seed).
pub fn execute(
    study: &NavalEngagementStudy,
    trials: u64,
    seed: u64,
    control: &RunControl,
) -> Result<NavalEngagementResults, Interrupted> {
    let results = crate::engine::driver::run(study, trials, seed, control)?;
    Ok(NavalEngagementResults::of(&results))
}

impl NavalEngagementResults {
    /// The engine's results of a naval study, run by run.
    pub fn of(results: &crate::engine::driver::PlanResults<NavalEngagementStudy>) -> Self {
        Self {
            trials: results.trials,
            seed: results.seed,
            runs: results
                .counts
                .iter()
                .zip(&results.exact)
                .map(|(h, exact)| {
                    (
                        h.clone(),
                        exact.clone().expect("naval engagements are always exact"),
                    )
                })
                .collect(),
        }
    }
}

impl crate::engine::System for NavalEngagementStudy {
    type Counts = EngagementHistogram;
    type Exact = EngagementDistribution;

    /// Each variant's naval combat table (its cells edited by `rules.cells`), as
    /// `tables.md` prints it: "Naval combat table — `<variant>`".
    fn printed(&self) -> crate::engine::printed::Printed {
        let mut printed = crate::engine::printed::Printed::default();
        for (name, naval) in &self.variants {
            printed.pipe_table(
                format!("Naval combat table — {name}"),
                &naval.table().table().markdown(),
            );
        }
        printed
    }

    fn header(&self) -> crate::engine::Header<'_> {
        self.header.view()
    }

    fn plan(&self) -> crate::engine::Plan {
        crate::engine::Plan {
            axes: self.axes.iter().map(|a| a.parameter.clone()).collect(),
            runs: self
                .runs
                .iter()
                .map(|(variant, coordinates, _)| crate::engine::RunKey {
                    variant: self.variants[*variant].0.clone(),
                    coordinates: coordinates.clone(),
                })
                .collect(),
            unit: "engagements",
        }
    }

    fn empty(&self, run: usize) -> EngagementHistogram {
        EngagementHistogram::new(&self.runs[run].2)
    }

    fn simulate(
        &self,
        run: usize,
        dice: &mut crate::dice::DiceStream,
        n: u64,
        h: &mut EngagementHistogram,
    ) {
        let (variant, _, engagement) = &self.runs[run];
        // In 32 lanes, each on its own stream, all at once where the CPU can
        // (`systems/naval_engagement/engagement/lockstep.rs`).
        self.variants[*variant]
            .1
            .kernel(engagement)
            .record_many(dice, n, h);
    }

    fn exact(&self, run: usize) -> Option<EngagementDistribution> {
        let (variant, _, engagement) = &self.runs[run];
        Some(self.variants[*variant].1.distribution(engagement))
    }

    fn outcomes(
        &self,
        _run: usize,
        h: &EngagementHistogram,
        exact: Option<&EngagementDistribution>,
    ) -> Vec<crate::engine::Outcome> {
        EngagementResult::ALL
            .iter()
            .map(|&r| crate::engine::Outcome {
                name: r.label().to_string(),
                count: h.result[r as usize],
                exact: exact.map(|e| e.result[r as usize]),
                fraction: None,
            })
            .collect()
    }

    fn distributions(
        &self,
        _run: usize,
        h: &EngagementHistogram,
        exact: Option<&EngagementDistribution>,
    ) -> Vec<crate::engine::Distribution> {
        use crate::engine::Distribution;
        vec![
            // Engagements last at least one round.
            Distribution {
                metric: "rounds".into(),
                first: 1,
                counts: h.rounds[1..].to_vec(),
                exact: exact.map(|e| e.rounds[1..].to_vec()),
            },
            Distribution::new(
                "nsp_lost_a",
                &h.nsp_lost[0],
                exact.map(|e| &e.nsp_lost[0][..]),
            ),
            Distribution::new(
                "nsp_lost_b",
                &h.nsp_lost[1],
                exact.map(|e| &e.nsp_lost[1][..]),
            ),
        ]
    }

    /// Trials counted: every engagement ends with one result.
    fn trials_counted(&self, _run: usize, counts: &Self::Counts) -> u128 {
        crate::sim::total(&counts.result)
    }

    fn rules(&self) -> serde_json::Value {
        json!({
            "variants": self.variants.iter().map(|(n, t)| json!({"name": n, "table": t.table().table()})).collect::<Vec<_>>(),
            "runs": self.runs.iter().map(|r| &r.2).collect::<Vec<_>>(),
        })
    }
}
