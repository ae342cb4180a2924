//! The ratio-battle study (docs/systems/ratio.md): whole lines of units, pairings, doubles,
//! reserves and skirmishes, swept and compared across rule variants.
//!
//! Why this module exists: it is the analysis-file boundary and report for
//! [`crate::systems::ratio::battle`]. Every check happens here once — unknown keys, unit names,
//! pairings, reserve policies, every grid point — so a run cannot fail on input. Reports
//! have the shape of every other system: results with Wilson intervals beside the exact
//! enumeration, expectations, distributions, per-combat states, the value of reserves
//! under every policy side by side, charts, rulebook tables and a manifest.
//!
//! ```toml
//! system = "ratio"
//! seed = 1642
//! trials = 1_000_000
//! exact = true                  # enumerate exactly where the dice are few (default true)
//!
//! [battle]
//! min_score = 1                 # [option] floor of a modified total, 1–6, or "none"
//! auto_deploy = "double-first"  # [option] double-first | reserve-first
//! objective = "cp"              # what `optimal` maximises: cp (expected CP difference) | win
//! compare_policies = true       # also evaluate none/rescue/press/optimal side by side
//! line = ["A1+A2 vs B1", "A3 vs B2"]   # explicit pairings (omit for auto-deployment)
//! reserve = ["A4"]              # explicit reserves, with `line`
//! order = [2, 1]                # the attacker's order of resolution (positions in `line`)
//!
//! [side.a]
//! name = "Royalists"
//! units = 4                     # a count, or a list: [{ name = "Guards", quality = 1 }, {}]
//! argument = 1                  # +1 advantaged / −1 disadvantaged by the argument
//! quality = 0                   # troop quality, on every die
//! ambush = false                # +1
//! exhausted = false             # −1
//! reserves = 1                  # auto-deployment: units kept back (default per auto_deploy)
//! policy = "rescue"             # none | rescue | press | optimal
//!
//! [side.b]
//! units = 3
//!
//! [skirmish]                    # a skirmish: the first unit a side fights, the next ones wait
//! a = { reserves = 2, policy = "rescue" }
//! b = { reserves = 2, policy = "rescue" }
//!
//! [sweep]                       # size a.units b.units a.argument b.argument a.quality
//! size = { from = 1, to = 8 }   # b.quality a.reserves b.reserves min_score
//!
//! [[variant]]
//! name = "+1 argument"
//! a = { argument = 1 }          # side overrides: argument quality ambush exhausted
//!                               # extra_units reserves policy
//! [[variant]]
//! name = "no floor"
//! battle = { min_score = "none" }   # battle overrides: min_score auto_deploy objective
//! ```

pub mod battle;
pub mod one_roll;
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
use crate::keys::{self, key, KeyDoc, SetBy, SystemDoc, Ty, ValueDoc, REQUIRED};
use crate::systems::ratio::battle::{
    ArmyResult, MinScore, Objective, Pairing, RatioBattle, RatioCombat, RatioDistribution,
    RatioHistogram, ReservePolicy, Unit, MAX_RESERVES, MAX_UNITS,
};

/// What a ratio study can sweep.
pub const PARAMETERS: [&str; 10] = [
    "size",
    "a.units",
    "b.units",
    "a.argument",
    "b.argument",
    "a.quality",
    "b.quality",
    "a.reserves",
    "b.reserves",
    "min_score",
];

/// Most (state, face) steps one exact enumeration may take.
pub const MAX_EXACT_STEPS: usize = 20_000_000;

/// The auto-deployment reading (an **\[option\]** of docs/systems/ratio.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoDeploy {
    /// Pair one-to-one, double up from the left, the rest in reserve.
    DoubleFirst,
    /// Pair one-to-one, every extra unit in reserve.
    ReserveFirst,
}

impl AutoDeploy {
    pub fn name(self) -> &'static str {
        match self {
            Self::DoubleFirst => "double-first",
            Self::ReserveFirst => "reserve-first",
        }
    }
}

/// One grid point of one variant, compiled.
#[derive(Debug, Clone)]
pub struct RatioRun {
    pub variant: usize,
    pub coordinates: Vec<AxisValue>,
    pub combat: RatioCombat,
    /// When policies are compared, for the value-of-reserves frame: the side with
    /// reserves, and the same battle under every other reserve policy (in
    /// [`ReservePolicy::ALL`] order; the battle's own policy is `combat`).
    pub policies: Option<(usize, Vec<(ReservePolicy, RatioCombat)>)>,
}

/// A validated ratio study.
#[derive(Debug, Clone)]
pub struct RatioStudy {
    pub header: AnalysisHeader,
    pub skirmish: bool,
    pub side_names: [String; 2],
    pub variants: Vec<String>,
    pub axes: Vec<SweepAxis>,
    pub runs: Vec<RatioRun>,
    /// The engine's runs: (study run, `None` for its battle or `Some(k)` for its k-th
    /// compared policy), in plan order.
    engine_runs: Vec<(usize, Option<usize>)>,
}

analysis_file! {
    struct RatioFile {
        exact,
        #[serde(default)]
        battle: BattleSpec,
        side: SidesSpec,
        skirmish: Option<SkirmishSpec>,
        sweep: Option<BTreeMap<String, Spanned<toml::Value>>>,
        variant: Option<Vec<VariantSpec>>,
    }
}

#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct BattleSpec {
    min_score: Option<Spanned<toml::Value>>,
    auto_deploy: Option<Spanned<String>>,
    objective: Option<Spanned<String>>,
    compare_policies: Option<bool>,
    line: Option<Vec<Spanned<String>>>,
    reserve: Option<Vec<Spanned<String>>>,
    order: Option<Spanned<Vec<i64>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SidesSpec {
    a: SideSpec,
    b: SideSpec,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct SideSpec {
    name: Option<Spanned<String>>,
    units: Spanned<toml::Value>,
    argument: Option<Spanned<i64>>,
    quality: Option<Spanned<i64>>,
    ambush: Option<bool>,
    exhausted: Option<bool>,
    reserves: Option<Spanned<i64>>,
    policy: Option<Spanned<String>>,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(deny_unknown_fields)]
struct UnitSpec {
    name: Option<String>,
    argument: Option<i64>,
    quality: Option<i64>,
    ambush: Option<bool>,
    exhausted: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SkirmishSpec {
    a: Option<SkirmishSideSpec>,
    b: Option<SkirmishSideSpec>,
}

#[derive(Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
struct SkirmishSideSpec {
    reserves: Option<Spanned<i64>>,
    policy: Option<Spanned<String>>,
}

variant_table! {
    struct VariantSpec {
        a: Option<SideOverrides>,
        b: Option<SideOverrides>,
        battle: Option<BattleOverrides>,
    }
}

#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct SideOverrides {
    argument: Option<Spanned<i64>>,
    quality: Option<Spanned<i64>>,
    ambush: Option<bool>,
    exhausted: Option<bool>,
    extra_units: Option<Spanned<i64>>,
    reserves: Option<Spanned<i64>>,
    policy: Option<Spanned<String>>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct BattleOverrides {
    min_score: Option<Spanned<toml::Value>>,
    auto_deploy: Option<Spanned<String>>,
    objective: Option<Spanned<String>>,
}

/// Every key of a ratio-battle file (`battlelab keys ratio`), beside the structs above that
/// parse them.
pub const KEYS: &[&[KeyDoc]] = &[keys::HEADER, keys::EXACT, RATIO_KEYS, keys::EXPECT_VALUE];

const POLICIES: Ty = Ty::OneOf(&ReservePolicy::NAMES);
const MIN_SCORE: Ty = Ty::IntOr(1, 6, &["none"]);

const RATIO_KEYS: &[KeyDoc] = &[
    key(
        "battle.min_score",
        MIN_SCORE,
        "1",
        "[option] a modified total below this counts as this, or \"none\"",
        "\"none\"",
    )
    .sweep("min_score")
    .in_variant(),
    key(
        "battle.auto_deploy",
        Ty::OneOf(&["double-first", "reserve-first"]),
        "\"double-first\"",
        "[option] how units are paired when no line is given",
        "\"reserve-first\"",
    )
    .in_variant(),
    key(
        "battle.objective",
        Ty::OneOf(&crate::systems::ratio::battle::Objective::NAMES),
        "\"cp\"",
        "what `optimal` maximises: expected CP difference or P(win)",
        "\"win\"",
    )
    .in_variant(),
    key(
        "battle.compare_policies",
        Ty::Bool,
        "true",
        "also evaluate none/rescue/press/optimal side by side",
        "false",
    ),
    key(
        "battle.line",
        Ty::TextList,
        "auto-deployment",
        "explicit pairings, e.g. [\"A1+A2 vs B1\", \"A3 vs B2\"]",
        "[\"A1 vs B1\", \"A2 vs B2\"]",
    ),
    key(
        "battle.reserve",
        Ty::TextList,
        "none",
        "explicit reserves (unit names), with line",
        "[]",
    ),
    key(
        "battle.order",
        Ty::IntList,
        "as listed",
        "the attacker's order of resolution (positions in line)",
        "[2, 1]",
    ),
    key(
        "side.{a,b}.name",
        Ty::Text,
        "\"A\" / \"B\"",
        "the side's name in reports",
        "\"Royalists\"",
    ),
    key(
        "side.{a,b}.units",
        Ty::CountOrTables(1, MAX_UNITS as i64),
        REQUIRED,
        "a count of identical units, or a list of units",
        "2",
    )
    .sweep("{a,b}.units")
    .priced()
    .searched(1, 12)
    .set_by(SIZE_SETS_UNITS),
    key(
        "side.{a,b}.units[].name",
        Ty::Text,
        "A1, A2 …",
        "a listed unit's name",
        "\"Guards\"",
    ),
    key(
        "side.{a,b}.units[].argument",
        Ty::Int(-3, 3),
        "the side's",
        "a listed unit's argument modifier",
        "1",
    ),
    key(
        "side.{a,b}.units[].quality",
        Ty::Int(-3, 3),
        "the side's",
        "a listed unit's quality modifier",
        "1",
    ),
    key(
        "side.{a,b}.units[].ambush",
        Ty::Bool,
        "the side's",
        "a listed unit ambushes (+1)",
        "true",
    ),
    key(
        "side.{a,b}.units[].exhausted",
        Ty::Bool,
        "the side's",
        "a listed unit is exhausted (-1)",
        "true",
    ),
    key(
        "side.{a,b}.argument",
        Ty::Int(-3, 3),
        "0",
        "+1 advantaged / -1 disadvantaged by the argument",
        "1",
    )
    .sweep("{a,b}.argument")
    .variant("[[variant]].{a,b}.argument")
    .priced()
    .per_unit("side.{a,b}.units", "argument"),
    key(
        "side.{a,b}.quality",
        Ty::Int(-3, 3),
        "0",
        "troop quality, on every die",
        "1",
    )
    .sweep("{a,b}.quality")
    .variant("[[variant]].{a,b}.quality")
    .priced()
    .per_unit("side.{a,b}.units", "quality"),
    key(
        "side.{a,b}.ambush",
        Ty::Bool,
        "false",
        "ambush (+1)",
        "true",
    )
    .variant("[[variant]].{a,b}.ambush"),
    key(
        "side.{a,b}.exhausted",
        Ty::Bool,
        "false",
        "exhausted (-1)",
        "true",
    )
    .variant("[[variant]].{a,b}.exhausted"),
    key(
        "side.{a,b}.reserves",
        Ty::Int(0, MAX_RESERVES as i64),
        "per auto_deploy",
        "auto-deployment: units kept back",
        "0",
    )
    .sweep("{a,b}.reserves")
    .variant("[[variant]].{a,b}.reserves")
    .priced(),
    key(
        "side.{a,b}.policy",
        POLICIES,
        "\"rescue\"",
        "how the side commits its reserves",
        "\"press\"",
    )
    .variant("[[variant]].{a,b}.policy"),
    key(
        "[[variant]].{a,b}.extra_units",
        Ty::Int(-(MAX_UNITS as i64), MAX_UNITS as i64),
        "0",
        "units added to (or taken from) the side",
        "1",
    ),
    key(
        "skirmish.{a,b}.reserves",
        Ty::Int(0, 2),
        "2",
        "a skirmish: units waiting behind the first (up to two)",
        "1",
    ),
    key(
        "skirmish.{a,b}.policy",
        Ty::OneOf(&["none", "rescue", "press"]),
        "the side's policy",
        "a skirmish: how the waiting units commit",
        "\"rescue\"",
    ),
    key(
        "sweep.size",
        Ty::Sweep,
        "none",
        "both sides' unit counts at once",
        "{ from = 1, to = 4 }",
    )
    .sweep("size"),
    key(
        "[[variant]].name",
        Ty::Text,
        REQUIRED,
        "the variant's name",
        "\"printed\"",
    ),
    key(
        "[[variant]].description",
        Ty::Text,
        "none",
        "what the variant changes",
        "\"as printed\"",
    ),
];

/// This system in [`crate::systems::REGISTRY`].
pub const REGISTRATION: crate::systems::Registration = crate::systems::Registration {
    folder: "ratio",
    docs: &[DOC],
    benches: &["ratio"],
    one_roll: one_roll::TABLES,
    parse: |path, text, _| crate::systems::study(RatioStudy::parse(path, text)),
};

/// `battlelab keys` and `battlelab new` for ratio battles.
pub const DOC: SystemDoc = SystemDoc {
    companion: None,
    name: "ratio",
    summary: "ratio battles (docs/systems/ratio.md): lines of units, doubles, reserves and skirmishes",
    keys: KEYS,
    starter: "system = \"ratio\"\ntrials = 10_000\n\n[battle]\nmin_score = 1                 # [option] floor of a modified total, 1-6, or \"none\"\n\n[side.a]\nunits = 4\nargument = 1                  # +1 advantaged / -1 disadvantaged by the argument\npolicy = \"rescue\"             # none | rescue | press | optimal\n\n[side.b]\nunits = 3\n\n[sweep]\n\"a.quality\" = [0, 1]\n\n[[variant]]\nname = \"as written\"\n\n[[variant]]\nname = \"no floor\"\nbattle = { min_score = \"none\" }\n",
    value: ValueDoc {
        headlines,
        default_modifiers: &["a.argument+1", "a.quality+1", "a.units+1", "a.reserves+1"],
        currency: Some(("a.units", "units")),
        odds_columns: None,
    },
};

/// What `value` reads first: P(A wins, by any margin), then each side's CP.
fn headlines() -> Vec<Headline> {
    vec![
        Headline::outcomes("a_wins", "P(A wins)", Match::Contains("A wins".into())),
        Headline::metric("cp_a"),
        Headline::metric("cp_b"),
    ]
}

const SIZE_SETS_UNITS: &[SetBy] = &[SetBy {
    only: "",
    axis: "size",
    prefix: "",
    what: "[sweep] size, which sets both sides' unit counts",
    instead: "sweep a.units and b.units in place of size",
}];

/// One side as the grid sees it, before deployment.
#[derive(Clone, Debug)]
struct SideSetup {
    name: String,
    /// Explicit units (names and per-unit modifiers), or `None` for `count` identical ones.
    listed: Option<Vec<UnitSpec>>,
    count: i64,
    argument: i64,
    quality: i64,
    ambush: bool,
    exhausted: bool,
    reserves: Option<i64>,
    policy: ReservePolicy,
}

impl SideSetup {
    fn units(&self, prefix: &str) -> Vec<Unit> {
        let modifier = |u: Option<&UnitSpec>| {
            let argument = u.and_then(|u| u.argument).unwrap_or(self.argument);
            let quality = u.and_then(|u| u.quality).unwrap_or(self.quality);
            let ambush = u.and_then(|u| u.ambush).unwrap_or(self.ambush);
            let exhausted = u.and_then(|u| u.exhausted).unwrap_or(self.exhausted);
            (argument + quality + i64::from(ambush) - i64::from(exhausted)).clamp(-100, 100) as i32
        };
        match &self.listed {
            Some(list) => list
                .iter()
                .enumerate()
                .map(|(i, u)| Unit {
                    name: u
                        .name
                        .clone()
                        .unwrap_or_else(|| format!("{prefix}{}", i + 1)),
                    modifier: modifier(Some(u)),
                })
                .collect(),
            None => (0..self.count.clamp(0, 1000))
                .map(|i| Unit {
                    name: format!("{prefix}{}", i + 1),
                    modifier: modifier(None),
                })
                .collect(),
        }
    }
}

fn policy(
    source: &Source,
    v: &Spanned<String>,
    field: &str,
) -> Result<ReservePolicy, AnalysisError> {
    ReservePolicy::parse(v.get_ref()).ok_or_else(|| {
        source.error(
            v,
            field,
            format!(
                "unknown reserve policy \"{}\"; allowed: {}",
                v.get_ref(),
                ReservePolicy::NAMES.join(", ")
            ),
        )
    })
}

fn min_score(
    source: &Source,
    v: &Spanned<toml::Value>,
    field: &str,
) -> Result<MinScore, AnalysisError> {
    match v.get_ref() {
        toml::Value::String(s) if s == "none" => Ok(MinScore::None),
        toml::Value::Integer(m) if (1..=6).contains(m) => Ok(MinScore::Floor(*m as i32)),
        other => Err(source.error(
            v,
            field,
            format!(
                "the min-score floor is a whole number 1 to 6, or \"none\" (no floor); got {other}"
            ),
        )),
    }
}

fn auto_deploy(
    source: &Source,
    v: &Spanned<String>,
    field: &str,
) -> Result<AutoDeploy, AnalysisError> {
    match v.get_ref().as_str() {
        "double-first" => Ok(AutoDeploy::DoubleFirst),
        "reserve-first" => Ok(AutoDeploy::ReserveFirst),
        other => Err(source.error(
            v,
            field,
            format!("unknown auto-deployment \"{other}\"; allowed: double-first, reserve-first"),
        )),
    }
}

fn objective(
    source: &Source,
    v: &Spanned<String>,
    field: &str,
) -> Result<Objective, AnalysisError> {
    Objective::parse(v.get_ref()).ok_or_else(|| {
        source.error(
            v,
            field,
            format!(
                "unknown objective \"{}\"; allowed: cp (expected casualty-point difference), win (P(win))",
                v.get_ref()
            ),
        )
    })
}

fn side_setup(source: &Source, key: &str, spec: &SideSpec) -> Result<SideSetup, AnalysisError> {
    let field = |f: &str| format!("side.{key}.{f}");
    let key_side = |_: &str| key;
    let (listed, count) = match spec.units.get_ref() {
        toml::Value::Integer(n) => (None, *n),
        toml::Value::Array(list) => {
            let units = list
                .iter()
                .map(|v| v.clone().try_into::<UnitSpec>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| {
                    source.error(
                        &spec.units,
                        field("units"),
                        format!("each unit is a table with any of name, argument, quality, ambush, exhausted: {}", e.to_string().trim()),
                    )
                })?;
            for (i, u) in units.iter().enumerate() {
                for (key, value) in [("argument", u.argument), ("quality", u.quality)] {
                    if let Some(v) = value.filter(|v| !(-3..=3).contains(v)) {
                        return Err(source.error(
                            &spec.units,
                            format!("side.{key_side}.units[{i}].{key}", key_side = key_side(key)),
                            format!("{key} must be -3 to 3, got {v}"),
                        ));
                    }
                }
                if let Some(name) = &u.name {
                    analysis::report_text_at(
                        source,
                        &spec.units,
                        name,
                        &format!("side.{}.units[{i}].name", key_side("")),
                        "a unit's name",
                        analysis::Lines::One,
                    )?;
                    if units[..i].iter().any(|o| o.name.as_ref() == Some(name)) {
                        return Err(source.error(
                            &spec.units,
                            format!("side.{}.units[{i}].name", key_side("")),
                            format!("two units are named \"{name}\"; names must differ, since pairings name units"),
                        ));
                    }
                }
            }
            let n = units.len() as i64;
            (Some(units), n)
        }
        other => {
            return Err(source.error(
                &spec.units,
                field("units"),
                format!("units is a count (e.g. 4) or a list of unit tables (e.g. [{{ name = \"Guards\", quality = 1 }}, {{}}]); got {other}"),
            ))
        }
    };
    if !(1..=MAX_UNITS as i64).contains(&count) {
        return Err(source.error(
            &spec.units,
            field("units"),
            format!("a side fields 1 to {MAX_UNITS} units, got {count}"),
        ));
    }
    let small = |v: &Option<Spanned<i64>>, f: &str, what: &str| -> Result<i64, AnalysisError> {
        match v {
            Some(v) => source.int_in(v, &field(f), -3, 3, what),
            None => Ok(0),
        }
    };
    let name = match &spec.name {
        Some(name) => analysis::report_text(
            source,
            name,
            &field("name"),
            "a side name",
            analysis::Lines::One,
        )?,
        None => key.to_ascii_uppercase(),
    };
    Ok(SideSetup {
        name,
        listed,
        count,
        argument: small(
            &spec.argument,
            "argument",
            "an argument modifier (+1 advantaged, −1 disadvantaged)",
        )?,
        quality: small(&spec.quality, "quality", "troop quality")?,
        ambush: spec.ambush.unwrap_or(false),
        exhausted: spec.exhausted.unwrap_or(false),
        reserves: match &spec.reserves {
            Some(v) => Some(source.int_in(
                v,
                &field("reserves"),
                0,
                MAX_RESERVES as i64,
                "reserves kept back",
            )?),
            None => None,
        },
        policy: match &spec.policy {
            Some(v) => policy(source, v, &field("policy"))?,
            None => ReservePolicy::Rescue,
        },
    })
}

/// Battle-wide settings, after variant overrides.
#[derive(Clone, Debug)]
struct BattleSetup {
    min_score: MinScore,
    auto_deploy: AutoDeploy,
    objective: Objective,
}

/// A line and the reserves of each side.
type Deployment = (Vec<Pairing>, [Vec<usize>; 2]);

/// Auto-deployment (docs/systems/ratio.md): pair one-to-one in order, then double up from
/// the left (double-first) or keep every extra unit back (reserve-first); an explicit
/// reserve count keeps exactly that many back and doubles the rest. Returns the line and
/// reserves.
fn deploy(
    counts: [usize; 2],
    reserves: [Option<i64>; 2],
    mode: AutoDeploy,
) -> Result<Deployment, (usize, String)> {
    let sides = ["a", "b"];
    let larger = usize::from(counts[1] > counts[0]);
    let smaller = 1 - larger;
    let equal = counts[0] == counts[1];
    if let Some(k) = reserves[smaller].filter(|&k| k > 0).or(if equal {
        reserves[larger].filter(|&k| k > 0)
    } else {
        None
    }) {
        let s = if equal && reserves[larger].is_some_and(|k| k > 0) {
            larger
        } else {
            smaller
        };
        return Err((
            s,
            format!(
                "side {} keeps {k} in reserve, but only the side with more units may keep reserves (A {} units, B {})",
                sides[s].to_uppercase(),
                counts[0],
                counts[1]
            ),
        ));
    }
    let extra = counts[larger] - counts[smaller];
    let (doubles, kept) = match reserves[larger] {
        Some(k) => {
            let k = k as usize;
            if k > extra {
                return Err((
                    larger,
                    format!(
                        "side {} keeps {k} in reserve but has only {extra} more unit(s) than side {}, so it may keep 0 to {extra}; every enemy unit needs an opponent",
                        sides[larger].to_uppercase(),
                        sides[smaller].to_uppercase()
                    ),
                ));
            }
            (extra - k, k)
        }
        None => match mode {
            AutoDeploy::DoubleFirst => (
                extra.min(counts[smaller]),
                extra - extra.min(counts[smaller]),
            ),
            AutoDeploy::ReserveFirst => (0, extra),
        },
    };
    if doubles > counts[smaller] {
        return Err((
            larger,
            format!(
                "side {} has {extra} more units than side {}: {doubles} doubles but only {} enemy units to double against; keep more in reserve",
                sides[larger].to_uppercase(),
                sides[smaller].to_uppercase(),
                counts[smaller]
            ),
        ));
    }
    if kept > MAX_RESERVES {
        return Err((
            larger,
            format!("{kept} units would wait in reserve, more than {MAX_RESERVES}; set reserves, or use auto_deploy = \"double-first\""),
        ));
    }
    let n = counts[smaller];
    let mut line: Vec<Pairing> = (0..n)
        .map(|i| Pairing {
            a: vec![i],
            b: vec![i],
        })
        .collect();
    for (d, pairing) in line.iter_mut().enumerate().take(doubles) {
        let members = if larger == 0 {
            &mut pairing.a
        } else {
            &mut pairing.b
        };
        members.push(n + d);
    }
    let mut reserve = [Vec::new(), Vec::new()];
    reserve[larger] = (n + doubles..counts[larger]).collect();
    Ok((line, reserve))
}

/// Parses "A1+A2 vs B1" against unit names.
fn parse_pairing(text: &str, units: &[Vec<Unit>; 2]) -> Result<Pairing, String> {
    let (left, right) = text
        .split_once(" vs ")
        .ok_or_else(|| format!("write a pairing as \"A1+A2 vs B1\" (units of side A, \" vs \", units of side B); got \"{text}\""))?;
    let find = |side: usize, names: &str| -> Result<Vec<usize>, String> {
        names
            .split('+')
            .map(|n| {
                let n = n.trim();
                units[side].iter().position(|u| u.name == n).ok_or_else(|| {
                    format!(
                        "no unit \"{n}\" on side {}; its units are {}",
                        ["A", "B"][side],
                        units[side]
                            .iter()
                            .map(|u| u.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            })
            .collect()
    };
    Ok(Pairing {
        a: find(0, left)?,
        b: find(1, right)?,
    })
}

impl RatioStudy {
    pub fn parse(path: &Path, text: &str) -> Result<Self, AnalysisError> {
        let source = Source::new(path, text);
        let spec: RatioFile = source.parse_toml()?;
        let header = AnalysisHeader::parse(path, &source, None)?;
        let base_sides = [
            side_setup(&source, "a", &spec.side.a)?,
            side_setup(&source, "b", &spec.side.b)?,
        ];
        let base_battle = battle_setup(&source, &spec.battle)?;
        check_explicit_line_keys(&source, &spec, &base_sides)?;
        let skirmish = skirmish_sides(&source, &spec, &base_sides)?;

        // Variants.
        let mut variants: Vec<(String, [SideOverrides; 2], BattleOverrides)> = Vec::new();
        for (v, heading) in spec.variant.iter().flatten().zip(&header.variants) {
            variants.push((
                heading.name.clone(),
                [
                    v.a.clone().unwrap_or_default(),
                    v.b.clone().unwrap_or_default(),
                ],
                v.battle.clone().unwrap_or_default(),
            ));
        }
        if variants.is_empty() {
            variants.push(("base".into(), Default::default(), Default::default()));
        }

        let (axes, lines) = analysis::sweep_axes(&source, spec.sweep.as_ref(), &PARAMETERS)?;
        analysis::check_grid_size(&source, &axes, variants.len())?;
        let grid = RatioGrid {
            source: &source,
            spec: &spec,
            axes: &axes,
            lines: &lines,
            skirmish,
        };
        grid.check_swept_counts(&base_sides)?;
        let mut runs = Vec::new();
        for (vi, (vname, side_over, battle_over)) in variants.iter().enumerate() {
            let (sides0, extra_units) = grid.variant_sides(vi, &base_sides, side_over)?;
            let battle0 = grid.variant_battle(vi, &base_battle, battle_over)?;
            for coordinates in analysis::grid(&axes) {
                runs.push(grid.run(vi, vname, &sides0, extra_units, &battle0, coordinates)?);
            }
        }
        Ok(Self {
            header,
            skirmish: skirmish.is_some(),
            side_names: [base_sides[0].name.clone(), base_sides[1].name.clone()],
            variants: variants.into_iter().map(|v| v.0).collect(),
            axes,
            engine_runs: runs
                .iter()
                .enumerate()
                .flat_map(|(i, r)| {
                    let compared = r.policies.as_ref().map_or(0, |(_, p)| p.len());
                    std::iter::once((i, None)).chain((0..compared).map(move |k| (i, Some(k))))
                })
                .collect(),
            runs,
        })
    }
}

/// `[battle]`'s min-score, auto-deployment and objective, with their defaults.
fn battle_setup(source: &Source, b: &BattleSpec) -> Result<BattleSetup, AnalysisError> {
    Ok(BattleSetup {
        min_score: match &b.min_score {
            Some(v) => min_score(source, v, "battle.min_score")?,
            None => MinScore::Floor(1),
        },
        auto_deploy: match &b.auto_deploy {
            Some(v) => auto_deploy(source, v, "battle.auto_deploy")?,
            None => AutoDeploy::DoubleFirst,
        },
        objective: match &b.objective {
            Some(v) => objective(source, v, "battle.objective")?,
            None => Objective::CpDifference,
        },
    })
}

/// `battle.reserve` and `battle.order` go with an explicit `battle.line`, and a side's
/// `reserves` count does not.
fn check_explicit_line_keys(
    source: &Source,
    spec: &RatioFile,
    base_sides: &[SideSetup; 2],
) -> Result<(), AnalysisError> {
    let b = &spec.battle;
    if b.reserve.is_some() && b.line.is_none() {
        return Err(source.error_at(
            None,
            "battle.reserve",
            "explicit reserves go with an explicit line; give battle.line too, or use side.<a|b>.reserves with auto-deployment",
        ));
    }
    if let (Some(order), None) = (&b.order, &b.line) {
        return Err(source.error(
            order,
            "battle.order",
            "the order of resolution goes with an explicit line (positions in battle.line); auto-deployment resolves left to right",
        ));
    }
    if b.line.is_some() {
        for (s, side) in base_sides.iter().enumerate() {
            if let Some(v) = [&spec.side.a.reserves, &spec.side.b.reserves][s] {
                return Err(source.error(
                    v,
                    format!("side.{}.reserves", ["a", "b"][s]),
                    format!("with an explicit battle.line, name side {}'s reserves in battle.reserve instead", side.name),
                ));
            }
        }
    }
    Ok(())
}

/// Each side's skirmish reserve count and policy (`[skirmish]`).
type SkirmishSides = [(usize, ReservePolicy); 2];

/// `[skirmish]`: each side's reserve (0 to 2, at most one fewer than its units) and
/// policy (not optimal), or `None` for an open battle.
fn skirmish_sides(
    source: &Source,
    spec: &RatioFile,
    base_sides: &[SideSetup; 2],
) -> Result<Option<SkirmishSides>, AnalysisError> {
    let Some(s) = &spec.skirmish else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for (k, key) in ["a", "b"].iter().enumerate() {
        let side = [&s.a, &s.b][k].clone().unwrap_or_default();
        let reserves = match &side.reserves {
            Some(v) => source.int_in(
                v,
                &format!("skirmish.{key}.reserves"),
                0,
                2,
                "a skirmish reserve (up to two more units a side)",
            )?,
            None => 2,
        };
        let p = match &side.policy {
            Some(v) => {
                let p = policy(source, v, &format!("skirmish.{key}.policy"))?;
                if p == ReservePolicy::Optimal {
                    return Err(source.error(
                        v,
                        format!("skirmish.{key}.policy"),
                        "optimal is for open battles, where one side commits; in a skirmish both sides commit (allowed: none, rescue, press)",
                    ));
                }
                p
            }
            None => ReservePolicy::Rescue,
        };
        if reserves as usize + 1 > base_sides[k].count as usize {
            let given = if side.reserves.is_some() {
                ""
            } else {
                " (the default)"
            };
            return Err(source.error_at(
                Some(source.line_of(
                    side.reserves
                        .as_ref()
                        .map_or([&spec.side.a.units, &spec.side.b.units][k].span(), |v| v.span()),
                )),
                format!("skirmish.{key}.reserves"),
                format!(
                    "side {} has {} units: one to fight and at most {} in the skirmish's reserve, got {reserves}{given}; set skirmish.{key}.reserves lower",
                    key.to_uppercase(),
                    base_sides[k].count,
                    base_sides[k].count - 1
                ),
            ));
        }
        out.push((reserves as usize, p));
    }
    Ok(Some([out[0], out[1]]))
}

/// What every run of a ratio file is built from, once the sides, the battle, the
/// skirmish and the sweep are read: the file and its sweep.
struct RatioGrid<'a> {
    source: &'a Source<'a>,
    spec: &'a RatioFile,
    axes: &'a [SweepAxis],
    /// The line of each axis's `[sweep]` entry.
    lines: &'a [Option<usize>],
    skirmish: Option<SkirmishSides>,
}

impl RatioGrid<'_> {
    /// The line of `[sweep]`'s entry for `parameter`, where it is swept.
    fn axis_line(&self, parameter: &str) -> Option<usize> {
        self.axes
            .iter()
            .position(|a| a.parameter == parameter)
            .and_then(|i| self.lines[i])
    }

    /// A swept unit or reserve count needs auto-deployment, and a swept unit count
    /// identical units; `size` and `a.units` / `b.units` exclude each other.
    fn check_swept_counts(&self, base_sides: &[SideSetup; 2]) -> Result<(), AnalysisError> {
        let (source, axes, b) = (self.source, self.axes, &self.spec.battle);
        for p in ["size", "a.units", "b.units", "a.reserves", "b.reserves"] {
            if axes.iter().any(|a| a.parameter == p) {
                if b.line.is_some() {
                    return Err(source.error_at(
                        self.axis_line(p),
                        format!("sweep.{p}"),
                        "an explicit battle.line fixes the units; sweep unit counts with auto-deployment (remove battle.line)",
                    ));
                }
                for (s, side) in base_sides.iter().enumerate() {
                    let touches =
                        p == "size" || p.starts_with(["a", "b"][s]) && p.ends_with("units");
                    if touches && side.listed.is_some() {
                        return Err(source.error_at(
                            self.axis_line(p),
                            format!("sweep.{p}"),
                            format!("side.{}.units is a list; a swept unit count needs identical units (units = <count>)", ["a", "b"][s]),
                        ));
                    }
                }
            }
        }
        if axes.iter().any(|a| a.parameter == "size")
            && axes
                .iter()
                .any(|a| a.parameter == "a.units" || a.parameter == "b.units")
        {
            return Err(source.error_at(
                self.axis_line("size"),
                "sweep.size",
                "size sets both sides' unit counts; sweep either size or a.units / b.units",
            ));
        }
        Ok(())
    }

    /// Variant `vi`'s sides: the base sides with its `a` and `b` overrides, and the
    /// units each side adds (`extra_units`, applied at every grid point).
    fn variant_sides(
        &self,
        vi: usize,
        base_sides: &[SideSetup; 2],
        side_over: &[SideOverrides; 2],
    ) -> Result<([SideSetup; 2], [i64; 2]), AnalysisError> {
        let (source, b) = (self.source, &self.spec.battle);
        let vfield = |f: &str| format!("variant[{vi}].{f}");
        let mut sides0 = base_sides.clone();
        let mut extra_units = [0i64; 2];
        for s in 0..2 {
            let o = &side_over[s];
            let key = ["a", "b"][s];
            if let Some(v) = &o.argument {
                sides0[s].argument = source.int_in(
                    v,
                    &vfield(&format!("{key}.argument")),
                    -3,
                    3,
                    "an argument modifier",
                )?;
            }
            if let Some(v) = &o.quality {
                sides0[s].quality = source.int_in(
                    v,
                    &vfield(&format!("{key}.quality")),
                    -3,
                    3,
                    "troop quality",
                )?;
            }
            if let Some(v) = o.ambush {
                sides0[s].ambush = v;
            }
            if let Some(v) = o.exhausted {
                sides0[s].exhausted = v;
            }
            if let Some(v) = &o.extra_units {
                if sides0[s].listed.is_some() || b.line.is_some() {
                    return Err(source.error(v, vfield(&format!("{key}.extra_units")), "extra_units adds identical units to a side given as a count, with auto-deployment"));
                }
                extra_units[s] = source.int_in(
                    v,
                    &vfield(&format!("{key}.extra_units")),
                    -(MAX_UNITS as i64),
                    MAX_UNITS as i64,
                    "extra units",
                )?;
            }
            if let Some(v) = &o.reserves {
                if b.line.is_some() {
                    return Err(source.error(
                        v,
                        vfield(&format!("{key}.reserves")),
                        "with an explicit battle.line, reserves are named in battle.reserve",
                    ));
                }
                sides0[s].reserves = Some(source.int_in(
                    v,
                    &vfield(&format!("{key}.reserves")),
                    0,
                    MAX_RESERVES as i64,
                    "reserves kept back",
                )?);
            }
            if let Some(v) = &o.policy {
                sides0[s].policy = policy(source, v, &vfield(&format!("{key}.policy")))?;
            }
        }
        Ok((sides0, extra_units))
    }

    /// Variant `vi`'s battle: the base battle with its `battle` overrides.
    fn variant_battle(
        &self,
        vi: usize,
        base_battle: &BattleSetup,
        battle_over: &BattleOverrides,
    ) -> Result<BattleSetup, AnalysisError> {
        let source = self.source;
        let vfield = |f: &str| format!("variant[{vi}].{f}");
        let mut battle0 = base_battle.clone();
        if let Some(v) = &battle_over.min_score {
            battle0.min_score = min_score(source, v, &vfield("battle.min_score"))?;
        }
        if let Some(v) = &battle_over.auto_deploy {
            battle0.auto_deploy = auto_deploy(source, v, &vfield("battle.auto_deploy"))?;
        }
        if let Some(v) = &battle_over.objective {
            battle0.objective = objective(source, v, &vfield("battle.objective"))?;
        }
        Ok(battle0)
    }

    /// One grid point of one variant: its sides and battle, deployed and compiled, with
    /// the same battle under every other reserve policy where policies are compared.
    fn run(
        &self,
        vi: usize,
        vname: &str,
        sides0: &[SideSetup; 2],
        extra_units: [i64; 2],
        battle0: &BattleSetup,
        coordinates: Vec<AxisValue>,
    ) -> Result<RatioRun, AnalysisError> {
        let (source, spec) = (self.source, self.spec);
        let (sides, battle, swept_line) =
            self.swept_setup(sides0, extra_units, battle0, &coordinates)?;
        let at = analysis::describe_point(
            self.axes,
            &coordinates,
            spec.variant.is_some().then_some(vname),
        );
        self.check_point_sides(&sides, swept_line, &at)?;
        let units = [sides[0].units("A"), sides[1].units("B")];
        let (line, reserves) = self.deployment(&units, &sides, &battle, swept_line, &at)?;
        let open = RatioBattle {
            units: units.clone(),
            line,
            reserves,
            policy: [sides[0].policy, sides[1].policy],
            objective: battle.objective,
            min_score: battle.min_score,
            skirmish: false,
            escalation: None,
        };
        let compile = |battle: RatioBattle| {
            RatioCombat::new(battle).map_err(|e| {
                let (field, line) = self.file_field(&e.field, swept_line);
                source.error_at(line, field, format!("{}{at}", e.message))
            })
        };
        let combat = match self.skirmish {
            Some(sk) => {
                let skirmish_battle = RatioBattle {
                    units: [0, 1].map(|s| units[s][..=sk[s].0].to_vec()),
                    line: vec![Pairing {
                        a: vec![0],
                        b: vec![0],
                    }],
                    reserves: [0, 1].map(|s| (1..=sk[s].0).collect()),
                    policy: [sk[0].1, sk[1].1],
                    objective: battle.objective,
                    min_score: battle.min_score,
                    skirmish: true,
                    escalation: Some(Box::new(open.clone())),
                };
                compile(skirmish_battle)?
            }
            None => compile(open.clone())?,
        };
        let compare = spec.battle.compare_policies.unwrap_or(true);
        let policies = if compare && self.skirmish.is_none() {
            (0..2).find(|&s| !open.reserves[s].is_empty()).map(|side| {
                let others: Result<Vec<(ReservePolicy, RatioCombat)>, AnalysisError> =
                    ReservePolicy::ALL
                        .into_iter()
                        .filter(|&p| p != open.policy[side])
                        .map(|p| {
                            let mut bp = open.clone();
                            bp.policy[side] = p;
                            Ok((p, compile(bp)?))
                        })
                        .collect();
                others.map(|o| (side, o))
            })
        } else {
            None
        };
        let policies = policies.transpose()?;
        Ok(RatioRun {
            variant: vi,
            coordinates,
            combat,
            policies,
        })
    }

    /// The sides and battle at one grid point: each swept value checked and set, then
    /// the variant's extra units added; with the line of the first swept unit or
    /// reserve count, for errors about the counts.
    fn swept_setup(
        &self,
        sides0: &[SideSetup; 2],
        extra_units: [i64; 2],
        battle0: &BattleSetup,
        coordinates: &[AxisValue],
    ) -> Result<([SideSetup; 2], BattleSetup, Option<usize>), AnalysisError> {
        let source = self.source;
        let mut sides = sides0.clone();
        let mut battle = battle0.clone();
        let mut swept_line: Option<usize> = None;
        for (axis, value) in self.axes.iter().zip(coordinates) {
            let AxisValue::Int(x) = *value else { continue };
            let x = x.clamp(-1_000_000, 1_000_000);
            let line = self.axis_line(&axis.parameter);
            let check = |lo: i64, hi: i64, what: &str| -> Result<i64, AnalysisError> {
                if (lo..=hi).contains(&x) {
                    Ok(x)
                } else {
                    Err(source.error_at(
                        line,
                        format!("sweep.{}", axis.parameter),
                        format!("{what} must be {lo} to {hi}, got {x}"),
                    ))
                }
            };
            match axis.parameter.as_str() {
                "size" => {
                    let n = check(1, MAX_UNITS as i64, "a side's unit count")?;
                    sides[0].count = n;
                    sides[1].count = n;
                }
                "a.units" => sides[0].count = check(1, MAX_UNITS as i64, "a side's unit count")?,
                "b.units" => sides[1].count = check(1, MAX_UNITS as i64, "a side's unit count")?,
                "a.argument" => sides[0].argument = check(-3, 3, "an argument modifier")?,
                "b.argument" => sides[1].argument = check(-3, 3, "an argument modifier")?,
                "a.quality" => sides[0].quality = check(-3, 3, "troop quality")?,
                "b.quality" => sides[1].quality = check(-3, 3, "troop quality")?,
                "a.reserves" => {
                    sides[0].reserves = Some(check(0, MAX_RESERVES as i64, "reserves kept back")?)
                }
                "b.reserves" => {
                    sides[1].reserves = Some(check(0, MAX_RESERVES as i64, "reserves kept back")?)
                }
                _ => battle.min_score = MinScore::Floor(check(1, 6, "the min-score floor")? as i32),
            }
            if axis.parameter.ends_with("units")
                || axis.parameter == "size"
                || axis.parameter.ends_with("reserves")
            {
                swept_line = swept_line.or(line);
            }
        }
        for s in 0..2 {
            sides[s].count += extra_units[s];
        }
        Ok((sides, battle, swept_line))
    }

    /// Each side fields 1 to [`MAX_UNITS`] units at this grid point, and in a skirmish
    /// one more than its skirmish reserve (a sweep or variant may field fewer units than
    /// the base).
    fn check_point_sides(
        &self,
        sides: &[SideSetup; 2],
        swept_line: Option<usize>,
        at: &str,
    ) -> Result<(), AnalysisError> {
        let source = self.source;
        for (s, side) in sides.iter().enumerate() {
            if !(1..=MAX_UNITS as i64).contains(&side.count) {
                return Err(source.error_at(
                    swept_line,
                    format!("side.{}.units", ["a", "b"][s]),
                    format!(
                        "a side fields 1 to {MAX_UNITS} units, got {}{at}",
                        side.count
                    ),
                ));
            }
            if let Some(sk) = self.skirmish {
                let reserves = sk[s].0 as i64;
                if reserves >= side.count {
                    let key = ["a", "b"][s];
                    let line = self
                        .spec
                        .skirmish
                        .as_ref()
                        .and_then(|k| [&k.a, &k.b][s].as_ref())
                        .and_then(|k| k.reserves.as_ref())
                        .map(|v| source.line_of(v.span()));
                    return Err(source.error_at(
                        swept_line.or(line),
                        format!("skirmish.{key}.reserves"),
                        format!(
                            "side {} fields {} unit(s), so at most {} can wait in the skirmish's reserve, got {reserves}{at}; set skirmish.{key}.reserves lower or field more units",
                            key.to_uppercase(),
                            side.count,
                            side.count - 1
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The line and reserves at one grid point: `battle.line` (in `battle.order`) and
    /// `battle.reserve` as written, else auto-deployment.
    fn deployment(
        &self,
        units: &[Vec<Unit>; 2],
        sides: &[SideSetup; 2],
        battle: &BattleSetup,
        swept_line: Option<usize>,
        at: &str,
    ) -> Result<Deployment, AnalysisError> {
        let (source, spec) = (self.source, self.spec);
        match &spec.battle.line {
            Some(entries) => self.explicit_deployment(entries, units),
            None => deploy(
                [units[0].len(), units[1].len()],
                [sides[0].reserves, sides[1].reserves],
                battle.auto_deploy,
            )
            .map_err(|(s, m)| {
                let line = [&spec.side.a.reserves, &spec.side.b.reserves][s]
                    .as_ref()
                    .map(|v| source.line_of(v.span()))
                    .or(swept_line);
                source.error_at(
                    line,
                    format!("side.{}.reserves", ["a", "b"][s]),
                    format!("{m}{at}"),
                )
            }),
        }
    }

    /// `battle.line`'s pairings, put in `battle.order`, and `battle.reserve`'s units,
    /// found by name.
    fn explicit_deployment(
        &self,
        entries: &[Spanned<String>],
        units: &[Vec<Unit>; 2],
    ) -> Result<Deployment, AnalysisError> {
        let (source, b) = (self.source, &self.spec.battle);
        let mut line = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            line.push(
                parse_pairing(e.get_ref(), units)
                    .map_err(|m| source.error(e, format!("battle.line[{i}]"), m))?,
            );
        }
        if let Some(order) = &b.order {
            let positions = order.get_ref();
            let mut sorted: Vec<i64> = positions.clone();
            sorted.sort_unstable();
            if sorted != (1..=line.len() as i64).collect::<Vec<_>>() {
                return Err(source.error(order, "battle.order", format!("the order lists every combat of battle.line once, by position 1 to {}; got {positions:?}", line.len())));
            }
            line = positions
                .iter()
                .map(|&p| line[p as usize - 1].clone())
                .collect();
        }
        let mut reserves = [Vec::new(), Vec::new()];
        for (i, e) in b.reserve.iter().flatten().enumerate() {
            let name = e.get_ref().trim();
            let found =
                (0..2).find_map(|s| units[s].iter().position(|u| u.name == name).map(|u| (s, u)));
            match found {
                Some((s, u)) => reserves[s].push(u),
                None => {
                    return Err(source.error(
                        e,
                        format!("battle.reserve[{i}]"),
                        format!("no unit \"{name}\" on either side"),
                    ))
                }
            }
        }
        Ok((line, reserves))
    }

    /// The file's line for a field a rules error names: the first entry of
    /// `battle.line` or `battle.reserve`, the first side policy, else the swept line.
    fn line_of_field(&self, f: &str, swept_line: Option<usize>) -> Option<usize> {
        let (source, spec, b) = (self.source, self.spec, &self.spec.battle);
        if f.starts_with("line") {
            b.line
                .as_ref()
                .and_then(|l| l.first())
                .map(|e| source.line_of(e.span()))
        } else if f.starts_with("reserve") {
            b.reserve
                .as_ref()
                .and_then(|l| l.first())
                .map(|e| source.line_of(e.span()))
                .or(swept_line)
        } else if f.ends_with("policy") {
            [&spec.side.a.policy, &spec.side.b.policy]
                .into_iter()
                .flatten()
                .next()
                .map(|v| source.line_of(v.span()))
        } else {
            swept_line
        }
    }

    /// A rules error's field as the file names it, with its line. Rules errors name
    /// combats in resolution order (`line[c]`); the file's entries are named by their
    /// position in battle.line.
    fn file_field(&self, field: &str, swept_line: Option<usize>) -> (String, Option<usize>) {
        let (source, b) = (self.source, &self.spec.battle);
        let combat = field
            .strip_prefix("line[")
            .and_then(|r| r.strip_suffix(']'))
            .and_then(|c| c.parse::<usize>().ok());
        match (combat, &b.line) {
            (Some(c), Some(entries)) => {
                let position = b
                    .order
                    .as_ref()
                    .and_then(|o| o.get_ref().get(c).map(|&p| p as usize - 1))
                    .unwrap_or(c);
                (
                    format!("battle.line[{position}]"),
                    entries.get(position).map(|e| source.line_of(e.span())),
                )
            }
            _ if b.line.is_some() && field.starts_with("line") => {
                ("battle.line".into(), self.line_of_field(field, swept_line))
            }
            _ if b.line.is_some() && field.starts_with("reserve") => (
                "battle.reserve".into(),
                self.line_of_field(field, swept_line),
            ),
            _ => (field.to_string(), self.line_of_field(field, swept_line)),
        }
    }
}

/// One policy's value of reserves at one grid point: P(the reserve side wins), P(draw),
/// expected casualty points of its enemy minus its own; exact where enumerated.
#[derive(Debug, Clone)]
pub struct PolicyValue {
    pub policy: ReservePolicy,
    pub exact: bool,
    pub p_win: f64,
    pub p_draw: f64,
    pub cp_difference: f64,
}

/// Simulated counts, exact distribution where computed, and policy values per run.
#[derive(Debug, Clone)]
pub struct RatioRunResult {
    pub histogram: RatioHistogram,
    pub exact: Option<RatioDistribution>,
    pub policies: Vec<PolicyValue>,
}

#[derive(Debug, Clone)]
pub struct RatioResults {
    pub trials: u64,
    pub seed: u64,
    pub runs: Vec<RatioRunResult>,
}

/// P(win), P(draw) and the expected CP difference for `side`, from exact counts.
pub fn policy_value_exact(
    d: &RatioDistribution,
    side: usize,
    policy: ReservePolicy,
) -> PolicyValue {
    let t = d.total as f64;
    let own = RatioDistribution::weighted(&d.cp[side]) as f64;
    let enemy = RatioDistribution::weighted(&d.cp[1 - side]) as f64;
    PolicyValue {
        policy,
        exact: true,
        p_win: d.wins(side) as f64 / t,
        p_draw: (d.result[ArmyResult::DRAW] + d.result[9 + ArmyResult::DRAW]) as f64 / t,
        cp_difference: (enemy - own) / t,
    }
}

fn policy_value_simulated(h: &RatioHistogram, side: usize, policy: ReservePolicy) -> PolicyValue {
    let n = h.trials() as f64;
    let wins: u64 = (0..ArmyResult::COUNT)
        .filter(|&i| ArmyResult::winner(i) == Some(side))
        .map(|i| h.result[i])
        .sum();
    PolicyValue {
        policy,
        exact: false,
        p_win: wins as f64 / n,
        p_draw: (h.result[ArmyResult::DRAW] + h.result[9 + ArmyResult::DRAW]) as f64 / n,
        cp_difference: crate::stats::count_mean(&h.cp[1 - side])
            - crate::stats::count_mean(&h.cp[side]),
    }
}

impl RatioResults {
    /// The engine's results of a ratio study: each study run with its policy runs.
    pub fn of(
        study: &RatioStudy,
        results: &crate::engine::driver::PlanResults<RatioStudy>,
    ) -> Self {
        Self::of_runs(
            study,
            results.trials,
            results.seed,
            &results.counts,
            &results.exact,
        )
    }

    /// The same from every plan run's counts and exact results, in plan order.
    pub fn of_runs(
        study: &RatioStudy,
        trials: u64,
        seed: u64,
        counts: &[RatioHistogram],
        exact: &[Option<RatioDistribution>],
    ) -> Self {
        let mut counts = counts.iter();
        let mut exact = exact.iter();
        let mut runs = Vec::with_capacity(study.runs.len());
        for run in &study.runs {
            let histogram = counts.next().expect("one count per run");
            let main_exact = exact.next().expect("one exact per run");
            let mut policies = Vec::new();
            if let Some((side, _)) = &run.policies {
                let own = run.combat.battle().policy[*side];
                for policy in ReservePolicy::ALL {
                    // The battle's own policy is the battle's own run; the others follow
                    // it in `ALL` order.
                    let (h, e) = if policy == own {
                        (histogram, main_exact)
                    } else {
                        (
                            counts.next().expect("one count per policy run"),
                            exact.next().expect("one exact per policy run"),
                        )
                    };
                    policies.push(match e {
                        Some(d) => policy_value_exact(d, *side, policy),
                        None => policy_value_simulated(h, *side, policy),
                    });
                }
            }
            let (histogram, main_exact) = (histogram.clone(), main_exact.clone());
            runs.push(RatioRunResult {
                histogram,
                exact: main_exact,
                policies,
            });
        }
        Self { trials, seed, runs }
    }
}

impl RatioRunResult {
    /// The run's probabilities: exact where enumerated, else simulated.
    pub fn summary(&self) -> Summary {
        self.exact
            .as_ref()
            .map_or_else(|| summary_simulated(&self.histogram), summary_exact)
    }
}

/// The key of a run's "P(min-score decides)" cell: the study run's index in the plan.
pub fn min_score_key(plan_run: usize) -> String {
    format!("min_score_decides/{plan_run}")
}

/// The key of a "value of reserves" cell: the study run's index in the plan, the policy,
/// and `"p_win"` or `"cp_difference"`.
pub fn reserves_key(plan_run: usize, policy: ReservePolicy, what: &str) -> String {
    format!("value_of_reserves/{plan_run}/{}/{what}", policy.name())
}

impl RatioStudy {
    /// Each study run's index among the plan's runs (a run comparing policies is followed
    /// there by one run per other policy).
    pub fn plan_runs(&self) -> Vec<usize> {
        (0..self.runs.len())
            .map(|i| {
                self.engine_runs
                    .iter()
                    .position(|&(run, policy)| run == i && policy.is_none())
                    .expect("every study run is a plan run")
            })
            .collect()
    }

    /// What the rulebook tables derive from several runs or a distribution's tail, per
    /// study run: P(min-score decides) (1 − P(no combat decided by the floor)) and, where
    /// policies are compared, each policy's P(the reserve side wins) and expected CP
    /// difference.
    fn derived_values(
        &self,
        counts: &[RatioHistogram],
        exact: &[Option<RatioDistribution>],
    ) -> Vec<crate::engine::derived::Derived> {
        use crate::engine::derived::Derived;
        let results = RatioResults::of_runs(self, 0, 0, counts, exact);
        let mut out = Vec::new();
        for (plan_run, r) in self.plan_runs().into_iter().zip(&results.runs) {
            out.push(Derived::new(
                min_score_key(plan_run),
                1.0 - r.summary().floor_decided[0],
            ));
            for p in &r.policies {
                out.push(Derived::new(
                    reserves_key(plan_run, p.policy, "p_win"),
                    p.p_win,
                ));
                out.push(Derived::new(
                    reserves_key(plan_run, p.policy, "cp_difference"),
                    p.cp_difference,
                ));
            }
        }
        out
    }
}

impl RatioStudy {
    /// The battle of engine run `run`: each study run, then its policy comparisons.
    fn combat_of(&self, run: usize) -> &RatioCombat {
        let (study_run, policy) = self.engine_runs[run];
        let r = &self.runs[study_run];
        match (policy, &r.policies) {
            (Some(k), Some((_, others))) => &others[k].1,
            _ => &r.combat,
        }
    }
}

impl crate::engine::System for RatioStudy {
    type Counts = RatioHistogram;
    type Exact = RatioDistribution;

    fn derived(
        &self,
        counts: &[RatioHistogram],
        exact: &[Option<RatioDistribution>],
    ) -> Vec<crate::engine::derived::Derived> {
        self.derived_values(counts, exact)
    }

    fn kind(&self) -> String {
        if self.skirmish {
            "ratio (skirmish)"
        } else {
            "ratio"
        }
        .to_string()
    }

    fn header(&self) -> crate::engine::Header<'_> {
        self.header.view()
    }

    fn plan(&self) -> crate::engine::Plan {
        // Policy comparisons are runs of their own, told apart by a `policy` axis (unset
        // for the battle as the file gives it).
        let compared = self.runs.iter().any(|r| r.policies.is_some());
        let mut runs = Vec::new();
        for r in &self.runs {
            let key = |policy: Option<ReservePolicy>| {
                let mut coordinates = r.coordinates.clone();
                if compared {
                    coordinates.push(
                        policy.map_or(AxisValue::Unset, |p| AxisValue::Text(p.name().to_string())),
                    );
                }
                crate::engine::RunKey {
                    variant: self.variants[r.variant].clone(),
                    coordinates,
                }
            };
            runs.push(key(None));
            for (policy, _) in r.policies.iter().flat_map(|(_, others)| others) {
                runs.push(key(Some(*policy)));
            }
        }
        let mut axes: Vec<String> = self.axes.iter().map(|a| a.parameter.clone()).collect();
        if compared {
            axes.push("policy".into());
        }
        crate::engine::Plan {
            axes,
            runs,
            unit: "battles",
        }
    }

    fn empty(&self, run: usize) -> RatioHistogram {
        RatioHistogram::for_signatures(self.combat_of(run))
    }

    fn empty_block(&self, run: usize) -> RatioHistogram {
        RatioHistogram::for_block(self.combat_of(run))
    }

    fn simulate(
        &self,
        run: usize,
        dice: &mut crate::dice::DiceStream,
        n: u64,
        h: &mut RatioHistogram,
    ) {
        self.combat_of(run).simulate_block(dice, n, h);
    }

    fn finish(&self, run: usize, h: &mut RatioHistogram) {
        h.fold_signatures(self.combat_of(run));
    }

    fn exact(&self, run: usize) -> Option<RatioDistribution> {
        self.header
            .exact
            .then(|| self.combat_of(run).distribution(MAX_EXACT_STEPS))
            .flatten()
    }

    fn outcomes(
        &self,
        _run: usize,
        h: &RatioHistogram,
        exact: Option<&RatioDistribution>,
    ) -> Vec<crate::engine::Outcome> {
        let summary = exact.map(summary_exact);
        (0..slots(self))
            .map(|i| crate::engine::Outcome {
                name: ArmyResult::label(i),
                count: h.result[i],
                exact: summary.as_ref().map(|e| e.result[i]),
                fraction: exact
                    .map(|d| crate::exact::Fraction::new(d.result[i], d.total).to_string()),
            })
            .collect()
    }

    fn distributions(
        &self,
        _run: usize,
        h: &RatioHistogram,
        exact: Option<&RatioDistribution>,
    ) -> Vec<crate::engine::Distribution> {
        use crate::engine::Distribution;
        let e = exact.map(summary_exact);
        vec![
            Distribution::new("cp_a", &h.cp[0], e.as_ref().map(|e| &e.cp[0][..])),
            Distribution::new("cp_b", &h.cp[1], e.as_ref().map(|e| &e.cp[1][..])),
            Distribution::new(
                "reserves_used",
                &h.reserves_used,
                e.as_ref().map(|e| &e.reserves_used[..]),
            ),
            Distribution::new(
                "combats_decided_by_min_score",
                &h.floor_decided,
                e.as_ref().map(|e| &e.floor_decided[..]),
            ),
        ]
    }

    /// Trials counted: every battle ends with one army result.
    fn trials_counted(&self, _run: usize, counts: &Self::Counts) -> u128 {
        crate::sim::total(&counts.result)
    }

    fn rules(&self) -> serde_json::Value {
        json!({
            "variants": self.variants,
            "runs": self.runs.iter().map(|r| (r.variant, r.coordinates.iter().map(ToString::to_string).collect::<Vec<_>>(), r.combat.battle())).collect::<Vec<_>>(),
        })
    }
}

/// A distribution column: name, simulated counts, exact probabilities if computed.
/// Probabilities of a run's distribution, exact where enumerated, else simulated.
pub struct Summary {
    pub result: Vec<f64>,
    pub cp: [Vec<f64>; 2],
    pub reserves_used: Vec<f64>,
    pub floor_decided: Vec<f64>,
    pub combat_states: Vec<Vec<f64>>,
}

pub fn summary_exact(d: &RatioDistribution) -> Summary {
    let p = |c: &[u128]| {
        c.iter()
            .map(|&x| RatioDistribution::probability(x, d.total))
            .collect::<Vec<_>>()
    };
    Summary {
        result: p(&d.result),
        cp: [p(&d.cp[0]), p(&d.cp[1])],
        reserves_used: p(&d.reserves_used),
        floor_decided: p(&d.floor_decided),
        combat_states: d.combat_states.iter().map(|s| p(s)).collect(),
    }
}

pub fn summary_simulated(h: &RatioHistogram) -> Summary {
    let n = h.trials() as f64;
    let p = |c: &[u64]| c.iter().map(|&x| x as f64 / n).collect::<Vec<_>>();
    Summary {
        result: p(&h.result),
        cp: [p(&h.cp[0]), p(&h.cp[1])],
        reserves_used: p(&h.reserves_used),
        floor_decided: p(&h.floor_decided),
        combat_states: h.combat_states.iter().map(|s| p(s)).collect(),
    }
}

impl Summary {
    pub fn p_wins(&self, side: usize) -> f64 {
        (0..ArmyResult::COUNT)
            .filter(|&i| ArmyResult::winner(i) == Some(side))
            .map(|i| self.result[i])
            .sum()
    }

    pub fn p_draw(&self) -> f64 {
        self.result[ArmyResult::DRAW] + self.result[9 + ArmyResult::DRAW]
    }

    pub fn p_exhaustion(&self) -> f64 {
        (0..ArmyResult::COUNT)
            .filter(|&i| ArmyResult::exhausts(i))
            .map(|i| self.result[i])
            .sum()
    }

    pub fn p_escalation(&self) -> f64 {
        self.result[9..].iter().sum()
    }
}

/// Result slots shown for a study: 9 for open battles, 18 for skirmishes.
pub fn slots(study: &RatioStudy) -> usize {
    if study.skirmish {
        ArmyResult::COUNT
    } else {
        9
    }
}

/// "A1+A2 vs B1, A3 vs B2; reserve A4" for a battle.
pub fn describe_line(b: &RatioBattle) -> String {
    let names = |s: usize, list: &[usize]| {
        list.iter()
            .map(|&u| b.units[s][u].name.as_str())
            .collect::<Vec<_>>()
            .join("+")
    };
    let mut text = b
        .line
        .iter()
        .map(|p| format!("{} vs {}", names(0, &p.a), names(1, &p.b)))
        .collect::<Vec<_>>()
        .join(", ");
    for s in 0..2 {
        if !b.reserves[s].is_empty() {
            text.push_str(&format!(
                "; reserve {} ({})",
                names(s, &b.reserves[s]),
                b.policy[s].name()
            ));
        }
    }
    text
}
