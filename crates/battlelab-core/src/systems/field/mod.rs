//! Field battles (docs/systems/field.md): the analysis file's keys, validated once,
//! and the system the engine runs.
//!
//! Why this module exists: it is where a field-battle file becomes plain data — every
//! override parsed and applied to the printed rules, every variant compiled, every grid
//! point of every sweep prepared — and where the engine learns what a run of it is (a
//! whole battle through the CRT, the Combat Loss Chart and the tactical matrix, simulated,
//! and enumerated exactly where small). Its report is `battlelab::systems::field`.
//!
//! ```toml
//! name = "field_combat"        # report folder name (default: the file's stem)
//! system = "field"             # field battles (docs/systems/field.md)
//! seed = 1815
//! trials = 1_000_000           # per grid point and variant
//!
//! [battle]
//! terrain_drm = 0              # DRM in side A's favour (A is the attacker)
//!
//! [side.a]
//! name = "French"
//! sp = 12
//! morale = 2
//! leader = 2
//! tactic = { mix = { charge = 3, envelop = 1 } }
//!
//! [side.b]
//! sp = 8
//! morale = 2
//! tactic = "uniform"           # or "equilibrium": the solved game's optimal mix
//! allowed_tactics = ["skirmish", "square", "refuse", "withdraw"]  # [option] the only
//!                              # tactics B may choose ("uniform" is uniform over them)
//!
//! [equilibrium]
//! payoff = "win"               # the game "equilibrium" sides play: win = P(B loses:
//!                              # broken, or withdrawing alone), sp = B's SP lost minus
//!                              # A's, or outcomes the report names: "smaller loses",
//!                              # "A wins", ["B wins", "A withdraws"] (the side a set
//!                              # is bad for minimises it)
//!
//! [sweep]
//! odds = ["1:1", "3:2", "2:1", "3:1"]   # sets A's SP from B's
//! drm = { from = -3, to = 3 }           # extra DRM in A's favour
//! # a.tactic = ["charge", "envelop", "uniform", "equilibrium"]   # policies by name
//!
//! [rules]                      # overrides for every variant
//! round_limit = 6
//! caps = { leader = 2, tactic = 2 }   # [option] a source's DRM held to ±cap before the
//!                                     # net clamp; sources: leader, morale, terrain,
//!                                     # tactic, drm (the sides' own DRMs)
//!
//! [[variant]]
//! name = "printed"
//!
//! [[variant]]
//! name = "cap 3"
//! rules = { drm_cap = 3 }
//!
//! [[variant]]
//! name = "square defender"
//! tactic = { b = "square" }    # any policy a side takes, for a and/or b
//! ```
//!
//! The CRT can be changed two ways, in `[rules]` or in a variant's `rules`:
//!
//! ```toml
//! [rules.crt]                  # a whole result column (1–11) = "L/S": every odds row
//! "8" = "1/1"                  # that reaches column 8 changes (1:1 roll 9, 3:2 roll 8,
//!                              # 2:1 roll 7, 3:1 roll 6)
//!
//! [rules.crt_cells."3:2"]      # one printed cell: this odds row (one of the rules' odds
//! "8" = "1/1"                  # columns) and this modified roll (2–12), nothing else
//! ```
//!
//! A variant writes `rules = { crt_cells = { "3:2" = { "8" = "1/1" } } }` or
//! `[variant.rules.crt_cells."3:2"]`. Column edits apply first, then cell edits on top of
//! the column reading, and a variant's cell edit replaces `[rules]`'s for the same cell;
//! odds rows added under `[rules.odds]` can be edited too. `tables.md` prints the CRT by
//! odds row × modified roll and marks each edited cell `*`. A table under `crt`
//! (`[rules.crt."3:2"]`) is refused with a pointer to `crt_cells`.
//!
//! Tactic policies: a tactic name, `"uniform"`, `{ uniform = [...] }`, `{ mix = {...} }`,
//! or `"equilibrium"`. A side's `allowed_tactics` limits every policy it takes (its own,
//! a variant's, a swept one): `"uniform"` is uniform over the allowed tactics, a policy
//! naming another tactic is refused, and its equilibrium is solved over them. An
//! `equilibrium` side plays, at every round and state, its optimal
//! mix in the battle's zero-sum game for `[equilibrium] payoff` (`systems::field::game`),
//! solved here once per run (both sides' strategies are solved; a side with its own
//! policy keeps it). A run whose game has more than `game::MAX_GAME_STATES` slots,
//! or an analysis whose equilibrium runs hold more than [`MAX_ANALYSIS_GAME_STATES`] in
//! all, is refused. The side's own `tactic`, then a variant's `tactic = { a, b }`, then a
//! swept `a.tactic`/`b.tactic` decide a run's policy, the later winning.
//!
//! How `tables.md` prints chances:
//!
//! ```toml
//! [tables]                     # [option]
//! format = "in36"              # "percent" (default) or "in36": the CRT gains a row of
//!                              # each modified roll's chance in 36 at net DRM 0
//! decimals = 1                 # digits after the point of a percentage, 0–4 (default 1)
//! ```
//!
//! Battle outcomes are fought over rounds and enumerated in floating point, so they
//! always print as percentages, each row adding up to exactly 100 and moving as little as
//! possible from the exact values (a value moved from its own nearest rounding is marked
//! `†`); "fraction" and "in6" are refused.

pub mod battle;
pub mod choices;
pub mod derived;
pub mod game;
pub mod one_roll;
#[doc(hidden)]
pub mod scenarios;
pub mod transitions;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use toml::Spanned;

use crate::analysis::{
    check_grid_size, grid, sweep_axes, AnalysisError, AxisValue, Source, SweepAxis, TableFormat,
};
use crate::engine::headline::{Headline, Match};
use crate::header::{analysis_file, variant_table, AnalysisHeader, TableFormats};
use crate::keys::{self, key, KeyDoc, PricedAt, SetBy, SystemDoc, Ty, ValueDoc, REQUIRED};
use crate::systems::field::battle::{BattleDistribution, BattleHistogram, TacticPolicy, TacticSet};
use crate::systems::field::battle::{
    ClcRow, FieldBattle, FieldCombat, FieldRules, Force, OddsColumn, OddsRounding, PreparedBattle,
    ResultPair, TacticCell, TacticMix, CRT_COLUMNS, TACTIC_NAMES,
};
use crate::systems::field::game::{PayoffSpec, StatePolicy, TacticTable, MAX_GAME_STATES};
use crate::systems::field::transitions::{FieldKernel, TransitionTable};

/// Parameters a field analysis can sweep, in the order axes are laid out (the first is
/// the x of charts, the second the y of heatmaps).
pub const FIELD_PARAMETERS: [&str; 14] = [
    "odds",
    "drm",
    "a.sp",
    "b.sp",
    "a.morale",
    "b.morale",
    "a.leader",
    "b.leader",
    "a.drm",
    "b.drm",
    "terrain_drm",
    "round_limit",
    "a.tactic",
    "b.tactic",
];

/// A named set of overrides, compiled.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub rules: FieldRules,
    /// `tactic = { a = …, b = … }`: policies replacing the sides' own.
    pub tactics: [Option<TacticPolicy>; 2],
}

/// One grid point of one variant, ready to run.
#[derive(Clone, Debug)]
pub struct Run {
    pub variant: usize,
    /// One value per axis.
    pub coordinates: Vec<AxisValue>,
    pub battle: FieldBattle,
    pub prepared: PreparedBattle,
    pub field: FieldCombat,
    /// Where a side plays `equilibrium`: both sides' tactic tables (the solved game's
    /// mixes for that side, the plain mix for the other).
    pub policy: Option<Arc<StatePolicy>>,
    /// A run without an `equilibrium` side fights from its battle compiled into a
    /// state-transition table (`systems::field::transitions`), built on the run's first block and
    /// kept for the others; it holds `None` where the table would be too large or the
    /// analysis's budget ([`MAX_ANALYSIS_TABLE_ENTRIES`]) is spent, and the run is fought
    /// round by round. Both give the same battles from the same dice, so which runs get a
    /// table (it can depend on the order threads reach them) changes no count.
    pub table: OnceLock<Option<TransitionTable>>,
}

/// A validated analysis.
#[derive(Clone, Debug)]
pub struct FieldStudy {
    /// The shared keys: `header.exact` computes exact battle distributions where the
    /// state space is small, `header.tables` is how `tables.md` prints chances.
    pub header: AnalysisHeader,
    /// `[equilibrium] payoff`: what an `equilibrium` side's game is played for (the side
    /// it favours maximising it), and the default of `battlelab equilibrium`.
    pub payoff: PayoffSpec,
    /// `[side.x] allowed_tactics`: the tactics each side may choose from.
    pub allowed: [TacticSet; 2],
    pub base_battle: FieldBattle,
    pub variants: Vec<Variant>,
    pub axes: Vec<SweepAxis>,
    /// Variant-major, then grid points with the last axis varying fastest.
    pub runs: Vec<Run>,
    /// Table entries the runs' battle tables may still take ([`Run::table`]).
    pub table_entries_left: Arc<AtomicUsize>,
}

#[derive(Deserialize)]
struct SystemOnly {
    system: Option<Spanned<String>>,
}

analysis_file! {
    struct FieldFile {
        exact,
        #[serde(default)]
        battle: BattleSpec,
        side: SidesSpec,
        sweep: Option<BTreeMap<String, Spanned<toml::Value>>>,
        rules: Option<OverridesSpec>,
        variant: Option<Vec<VariantSpec>>,
        equilibrium: Option<EquilibriumSpec>,
        /// Read by [`AnalysisHeader::parse`] against [`TABLE_FORMATS`].
        #[allow(dead_code)]
        tables: Option<crate::analysis::TablesSpec>,
    }
}

/// What `[tables]` may ask for: battle outcomes are fought over rounds, so they print as
/// percentages; "in36" adds the rolls' chances to the CRT.
const TABLE_FORMATS: TableFormats = TableFormats {
    allowed: &[TableFormat::Percent, TableFormat::In36],
    why: "field battles are fought over rounds (outcomes print as percentages); \"in36\" adds each modified 2d6 roll's chance to the CRT",
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EquilibriumSpec {
    payoff: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantTactics {
    a: Option<Spanned<toml::Value>>,
    b: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct BattleSpec {
    terrain_drm: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SidesSpec {
    a: SideSpec,
    b: SideSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SideSpec {
    name: Option<Spanned<String>>,
    sp: Spanned<i64>,
    morale: Spanned<i64>,
    leader: Option<Spanned<i64>>,
    drm: Option<Spanned<i64>>,
    tactic: Option<Spanned<toml::Value>>,
    allowed_tactics: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OverridesSpec {
    drm_cap: Option<Spanned<i64>>,
    roll: Option<RollSpec>,
    odds_rounding: Option<Spanned<String>>,
    round_limit: Option<Spanned<i64>>,
    /// Values are read as any TOML value so that a table here (`[rules.crt."3:2"]`) gets
    /// an error that points at `crt_cells`, not a type error.
    crt: Option<BTreeMap<String, Spanned<toml::Value>>>,
    crt_cells: Option<BTreeMap<String, BTreeMap<String, Spanned<toml::Value>>>>,
    odds: Option<BTreeMap<String, Spanned<i64>>>,
    clc: Option<BTreeMap<String, BTreeMap<String, Spanned<i64>>>>,
    tactics: Option<BTreeMap<String, BTreeMap<String, Spanned<toml::Value>>>>,
    caps: Option<BTreeMap<String, Spanned<i64>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RollSpec {
    min: Option<Spanned<i64>>,
    max: Option<Spanned<i64>>,
}

variant_table! {
    struct VariantSpec {
        rules: Option<OverridesSpec>,
        tactic: Option<VariantTactics>,
    }
}

/// Every key of a field-battle file (`battlelab keys field`), beside the structs above
/// that parse them; tests hold the two against each other.
pub const KEYS: &[&[KeyDoc]] = &[keys::HEADER, keys::EXACT, FIELD_KEYS, keys::EXPECT_VALUE];

const DRM: Ty = Ty::Int(battle::DRM_RANGE.0 as i64, battle::DRM_RANGE.1 as i64);

const FIELD_KEYS: &[KeyDoc] = &[
    key("battle.terrain_drm", DRM, "0", "terrain DRM in side A's favour (A is the attacker)", "-1").sweep("terrain_drm").priced(),
    key("side.{a,b}.name", Ty::Text, "\"A\" / \"B\"", "the side's name in reports", "\"French\""),
    key("side.{a,b}.sp", Ty::Int(1, battle::MAX_SP as i64), REQUIRED, "strength in SP", "8").sweep("{a,b}.sp").priced().searched(1, 40).set_by(ODDS_SET_A_SP),
    key("side.{a,b}.morale", Ty::Int(1, battle::MAX_MORALE as i64), REQUIRED, "morale (Guards 3, Major 2, Minor 1)", "2").sweep("{a,b}.morale").priced(),
    key("side.{a,b}.leader", Ty::Int(battle::LEADER_RANGE.0 as i64, battle::LEADER_RANGE.1 as i64), "0", "leader rating; the leader DRM is the larger force's minus the smaller's", "1").sweep("{a,b}.leader").priced(),
    key("side.{a,b}.drm", DRM, "0", "a DRM in this side's favour", "1").sweep("{a,b}.drm").priced(),
    key("side.{a,b}.allowed_tactics", Ty::ListOf(&TACTIC_NAMES), "all seven", "[option] the only tactics this side may choose: \"uniform\" is uniform over them, the equilibrium is solved over them, and a policy naming another is refused", "[\"charge\", \"envelop\", \"skirmish\"]"),
    key("side.{a,b}.tactic", Ty::Tactic, "\"uniform\"", "tactic policy: a tactic, \"uniform\", { uniform = [..] }, { mix = { charge = 3, envelop = 1 } } or \"equilibrium\"", "{ mix = { charge = 2, envelop = 1 } }").sweep("{a,b}.tactic"),
    key("tables.format", Ty::OneOf(&["percent", "in36"]), "\"percent\"", "how tables.md prints chances: percent, or in36 (the CRT gains each modified roll's chance in 36)", "\"in36\""),
    key("tables.decimals", Ty::Int(0, 4), "1", "digits after the point of a percentage", "2"),
    key("equilibrium.payoff", Ty::OneOrList(&PAYOFF_WORDS, &PAYOFF_LIST_WORDS), "\"win\"", "what an \"equilibrium\" side's game is played for: win = P(B loses: broken, or withdrawing alone), sp = B's SP lost minus A's, or P(an outcome or a list of them, as the report names them: \"smaller loses\", \"A wins\", [\"B wins\", \"A withdraws\"]); the side the outcomes are bad for minimises, the other maximises", "\"smaller loses\""),
    key("[[variant]].tactic.{a,b}", Ty::Tactic, "the side's own", "a policy replacing the side's own in this variant", "\"charge\""),
    key("rules.caps.{leader,morale,terrain,tactic,drm}", Ty::Int(0, 12), "none (uncapped)", "[option] that source's DRM held to ± this before the net DRM cap", "2").in_variant().priced_as("cap.{leader,morale,terrain,tactic,drm}", PricedAt::Key).searched(0, 6),
    key("sweep.odds", Ty::OddsList, "none", "odds L:S; sets A's SP to B's SP × L/S, rounded up", "[\"1:1\", \"3:2\", \"2:1\"]").sweep("odds").priced_as("odds", PricedAt::OddsColumns),
    key("sweep.drm", Ty::Sweep, "none", "an extra DRM in A's favour", "{ from = -2, to = 2 }").sweep("drm").priced_as("drm", PricedAt::SweepOnly { default: 0 }).searched(-6, 6),
    key("rules.drm_cap", Ty::Int(0, 12), "4", "the net DRM is capped at ± this", "3").in_variant(),
    key("rules.roll.min", Ty::Int(2, 12), "2", "the lowest modified roll", "3").in_variant(),
    key("rules.roll.max", Ty::Int(2, 12), "12", "the highest modified roll", "11").in_variant(),
    key("rules.odds_rounding", Ty::OneOf(&OddsRounding::NAMES), "\"down\"", "how a ratio between printed odds columns is read", "\"nearest\"").in_variant(),
    key("rules.round_limit", Ty::Int(battle::ROUND_LIMIT_RANGE.0 as i64, battle::ROUND_LIMIT_RANGE.1 as i64), "6", "rounds before the battle is called off", "6").sweep("round_limit").in_variant().priced().searched(1, 12),
    key("rules.crt.<column>", Ty::Text, "as printed", "a whole CRT result column (\"1\" to \"11\") = \"L/S\" (each 0, 1, D1, D2, D3)", "\"1/1\"").in_variant(),
    key("rules.crt_cells.<odds>.<roll>", Ty::Text, "as printed", "one printed cell: odds row (\"3:2\") × modified roll (\"2\" to \"12\") = \"L/S\"", "\"1/1\"").in_variant(),
    key("rules.odds.<odds>", Ty::Int(1, CRT_COLUMNS as i64), "as printed", "an odds column (\"4:1\", new or printed) = the result column a modified 2 reaches", "5").in_variant(),
    key("rules.clc.<row>.<band>", Ty::Int(battle::CLC_VALUE_RANGE.0 as i64, battle::CLC_VALUE_RANGE.1 as i64), "as printed", "Combat Loss Chart: row (\"1\", \"D1\", \"D2\") × SP band (\"6-10\") = SP lost", "2").in_variant(),
    key("rules.tactics.<tactic>.<tactic>", Ty::Any, "as printed", "tactical matrix cell, larger's tactic × smaller's: a DRM (-2), \"NC\", or either in parentheses to end the battle", "\"(NC)\"").in_variant(),
    key("[[variant]].name", Ty::Text, REQUIRED, "the variant's name (reports, --variants)", "\"printed\""),
    key("[[variant]].description", Ty::Text, "none", "what the variant changes", "\"as printed\""),
];

/// The single names `[equilibrium] payoff` takes: `game::PAYOFF_NAMES`, then the
/// report's outcomes (`BattleResult::LABELS`).
const PAYOFF_WORDS: [&str; 13] = [
    "win",
    "sp",
    "A loses",
    "B loses",
    "smaller loses",
    "A wins",
    "B wins",
    "both broken",
    "A withdraws",
    "B withdraws",
    "both withdraw",
    "broken off",
    "round limit",
];
/// What a list of outcomes for `[equilibrium] payoff` may hold: every single name but
/// `sp`.
const PAYOFF_LIST_WORDS: [&str; 12] = [
    "win",
    "A loses",
    "B loses",
    "smaller loses",
    "A wins",
    "B wins",
    "both broken",
    "A withdraws",
    "B withdraws",
    "both withdraw",
    "broken off",
    "round limit",
];

/// This system in [`crate::systems::REGISTRY`].
pub const REGISTRATION: crate::systems::Registration = crate::systems::Registration {
    folder: "field",
    docs: &[DOC],
    benches: &["crt", "field"],
    one_roll: one_roll::TABLES,
    parse: |path, text, _| crate::systems::study(FieldStudy::parse(path, text)),
};

/// `battlelab keys` and `battlelab new` for field battles.
pub const DOC: SystemDoc = SystemDoc {
    companion: None,
    name: "field",
    summary: "field battles (docs/systems/field.md): CRT, Combat Loss Chart and tactical matrix, round by round",
    keys: KEYS,
    starter: STARTER,
    value: ValueDoc {
        headlines,
        default_modifiers: &["drm+1", "a.leader+1", "a.morale+1", "odds+1"],
        currency: Some(("odds", "odds columns")),
        odds_columns: Some(odds_columns),
    },
};

/// The odds columns a run of `variant` fights by: the printed ones and any the file
/// adds under `[rules.odds]` or the variant's `rules.odds`, printed first (the caller
/// sorts them and keeps the first of equal ratios: a ratio that reduces to a printed one
/// is the printed one).
fn odds_columns(doc: &toml::Table, variant: &str) -> Vec<(u32, u32)> {
    let mut columns: Vec<(u32, u32)> = FieldRules::printed()
        .odds_columns
        .iter()
        .map(|c| (c.larger, c.smaller))
        .collect();
    let variant_rules = doc
        .get("variant")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v.get("name").and_then(toml::Value::as_str) == Some(variant))
        .filter_map(|v| v.get("rules"));
    for rules in doc.get("rules").into_iter().chain(variant_rules) {
        let added = rules.get("odds").and_then(toml::Value::as_table);
        for label in added.into_iter().flat_map(|t| t.keys()) {
            if let Some(column) = OddsColumn::parse_ratio(label).filter(|(l, s)| l >= s) {
                columns.push(column);
            }
        }
    }
    columns
}

/// What `value` reads first: P(A wins), then each side's SP lost.
fn headlines() -> Vec<Headline> {
    vec![
        Headline::outcomes("a_wins", "P(A wins)", Match::Is(vec!["A wins".into()])),
        Headline::metric("sp_lost_b"),
        Headline::metric("sp_lost_a"),
    ]
}

const ODDS_SET_A_SP: &[SetBy] = &[SetBy {
    only: "a",
    axis: "odds",
    prefix: "",
    what: "[sweep] odds, which sets A's SP to ⌈B's SP × L/S⌉",
    instead: "price odds±N (a step along the table's odds columns) or b.sp, or drop the odds sweep",
}];

const STARTER: &str = r#"system = "field"
trials = 10_000

[battle]
terrain_drm = 0              # DRM in side A's favour (A is the attacker)

[side.a]
sp = 12
morale = 2                   # Guards 3, Major 2, Minor 1
leader = 1
tactic = { mix = { charge = 2, envelop = 1, bombard = 1 } }

[side.b]
sp = 8
morale = 2
tactic = "uniform"

[sweep]
odds = ["1:1", "3:2", "2:1"]     # sets A's SP from B's

[rules]                      # overrides of the printed rules, for every variant
round_limit = 6

[[variant]]
name = "printed"

[[variant]]
name = "cap 3"
rules = { drm_cap = 3 }
"#;

/// The first top-level key of a file without `system` that no system's file has, as an
/// error naming it, its line, the keys allowed and the closest of them.
fn unknown_top_level_key(source: &Source) -> Option<AnalysisError> {
    let document = toml::de::DeTable::parse(source.text).ok()?;
    let allowed = crate::systems::top_level_keys();
    let (key, _) = document
        .get_ref()
        .iter()
        .find(|(key, _)| !allowed.iter().any(|a| a == key.get_ref().as_ref()))?;
    let name = key.get_ref().as_ref();
    let suggestion = crate::toml_input::closest(name, allowed.iter().map(String::as_str))
        .map_or(String::new(), |close| format!(" (did you mean `{close}`?)"));
    Some(source.error_at(
        Some(source.line_of(key.span())),
        name,
        format!(
            "unknown key `{name}`{suggestion}; the file names no `system`, so it is read against every system's keys: {}",
            allowed.join(", ")
        ),
    ))
}

impl FieldStudy {
    /// Reads and validates an analysis file.
    pub fn load(path: &Path) -> Result<Self, AnalysisError> {
        let text = crate::toml_input::read_analysis_file(path)?;
        Self::parse(path, &text)
    }

    /// Validates analysis text; `path` names it in errors and gives the default name.
    pub fn parse(path: &Path, text: &str) -> Result<Self, AnalysisError> {
        let source = Source::new(path, text);
        let syntax = |e: toml::de::Error| crate::toml_input::describe_error(&source.file, text, &e);
        crate::toml_input::check_shape(&source.file, text)?;
        let system: SystemOnly = toml::from_str(text).map_err(syntax)?;
        let Some(system) = system.system else {
            // A misspelt `system` (or any key no system has) is the likelier fault: name it.
            if let Some(error) = unknown_top_level_key(&source) {
                return Err(error);
            }
            return Err(source.error_at(
                None,
                "system",
                format!(
                    "missing; say which rules system to run, one of: {}",
                    crate::systems::names().join(", ")
                ),
            ));
        };
        match system.get_ref().as_str() {
            "field" => {}
            other if crate::systems::names().contains(&other) => {
                return Err(source.error(
                    &system,
                    "system",
                    format!("\"{other}\" is not a field-battle system; read the file with battlelab::systems::load, which picks the system"),
                ))
            }
            other => {
                return Err(source.error(
                    &system,
                    "system",
                    format!(
                        "unknown system \"{other}\"; allowed: {}",
                        crate::systems::names().join(", ")
                    ),
                ))
            }
        }
        let spec: FieldFile = toml::from_str(text).map_err(syntax)?;
        Self::field(path, &source, spec)
    }

    fn field(path: &Path, source: &Source, spec: FieldFile) -> Result<Self, AnalysisError> {
        let header = AnalysisHeader::parse(path, source, Some(&TABLE_FORMATS))?;
        let terrain_drm = match &spec.battle.terrain_drm {
            Some(v) => source.int_in(
                v,
                "battle.terrain_drm",
                battle::DRM_RANGE.0.into(),
                battle::DRM_RANGE.1.into(),
                "terrain DRM",
            )? as i32,
            None => 0,
        };
        let (a, allowed_a) = side(source, "a", &spec.side.a)?;
        let (b, allowed_b) = side(source, "b", &spec.side.b)?;
        let allowed = [allowed_a, allowed_b];
        let base_battle = FieldBattle { a, b, terrain_drm };

        let mut base_rules = FieldRules::printed();
        if let Some(overrides) = &spec.rules {
            apply_overrides(source, "rules", overrides, &mut base_rules)?;
        }
        let variants = variants(source, &spec, &header, base_rules, allowed)?;
        let payoff = match spec.equilibrium.as_ref().and_then(|e| e.payoff.as_ref()) {
            Some(value) => payoff_spec(value.get_ref())
                .map_err(|e| source.error(value, "equilibrium.payoff", e))?,
            None => PayoffSpec::default(),
        };

        let (axes, axis_lines) = sweep_axes(source, spec.sweep.as_ref(), &FIELD_PARAMETERS)?;
        check_swept_tactics(source, &axes, &axis_lines, allowed)?;
        check_grid_size(source, &axes, variants.len())?;
        let field_grid = FieldGrid {
            source,
            axes: &axes,
            axis_lines: &axis_lines,
            base_battle: &base_battle,
            allowed,
            payoff: &payoff,
            named_variants: variants.len() > 1,
        };
        let mut game_slots = 0usize;
        let points = grid(&axes);
        let mut runs = Vec::with_capacity(points.len() * variants.len());
        for (variant_index, variant) in variants.iter().enumerate() {
            for coordinates in &points {
                runs.push(field_grid.run(variant_index, variant, coordinates, &mut game_slots)?);
            }
        }
        Ok(Self {
            header,
            payoff,
            allowed,
            base_battle,
            variants,
            axes,
            runs,
            table_entries_left: Arc::new(AtomicUsize::new(MAX_ANALYSIS_TABLE_ENTRIES)),
        })
    }
}

/// Each `[[variant]]`'s rules (the base rules with its own overrides, valid together) and
/// tactic policies (within the side's allowed tactics); the one variant "base", with the
/// base rules, where the file has none.
fn variants(
    source: &Source,
    spec: &FieldFile,
    header: &AnalysisHeader,
    base_rules: FieldRules,
    allowed: [TacticSet; 2],
) -> Result<Vec<Variant>, AnalysisError> {
    let mut variants = Vec::new();
    for (index, (variant, heading)) in spec
        .variant
        .iter()
        .flatten()
        .zip(&header.variants)
        .enumerate()
    {
        let field = format!("variant[{index}]");
        let mut rules = base_rules.clone();
        if let Some(overrides) = &variant.rules {
            apply_overrides(source, &format!("{field}.rules"), overrides, &mut rules)?;
        }
        let line = Some(heading.line);
        FieldCombat::new(rules.clone())
            .map_err(|e| source.error_at(line, format!("{field}.{}", e.field), e.message))?;
        let mut tactics = [None, None];
        if let Some(spec) = &variant.tactic {
            for (side, value) in [&spec.a, &spec.b].into_iter().enumerate() {
                if let Some(value) = value {
                    let key = format!("{field}.tactic.{}", ["a", "b"][side]);
                    let policy = tactic_policy(source, &key, value)?;
                    tactics[side] = Some(
                        within(policy, allowed[side], side)
                            .map_err(|e| source.error(value, &key, e))?,
                    );
                }
            }
        }
        variants.push(Variant {
            name: heading.name.clone(),
            rules,
            tactics,
        });
    }
    if variants.is_empty() {
        FieldCombat::new(base_rules.clone())
            .map_err(|e| source.error_at(None, e.field, e.message))?;
        variants.push(Variant {
            name: "base".into(),
            rules: base_rules,
            tactics: [None, None],
        });
    }
    Ok(variants)
}

/// Every swept tactic names a policy within its side's allowed tactics.
fn check_swept_tactics(
    source: &Source,
    axes: &[SweepAxis],
    axis_lines: &[Option<usize>],
    allowed: [TacticSet; 2],
) -> Result<(), AnalysisError> {
    for (axis, line) in axes.iter().zip(axis_lines) {
        for value in &axis.values {
            if let AxisValue::Text(name) = value {
                let Some(policy) = named_policy(name) else {
                    return Err(source.error_at(
                        *line,
                        format!("sweep.{}", axis.parameter),
                        unknown_policy(&crate::limits::echo(name)),
                    ));
                };
                let side = usize::from(axis.parameter == "b.tactic");
                within(policy, allowed[side], side)
                    .map_err(|e| source.error_at(*line, format!("sweep.{}", axis.parameter), e))?;
            }
        }
    }
    Ok(())
}

/// What a field file's runs are built from, once its sides, rules, variants and sweep
/// are read.
struct FieldGrid<'a> {
    source: &'a Source<'a>,
    axes: &'a [SweepAxis],
    /// The line of each axis's `[sweep]` entry.
    axis_lines: &'a [Option<usize>],
    base_battle: &'a FieldBattle,
    allowed: [TacticSet; 2],
    payoff: &'a PayoffSpec,
    /// Whether a point's description names its variant (there are several).
    named_variants: bool,
}

impl FieldGrid<'_> {
    /// One variant at one grid point: the battle and rules with the point's values, both
    /// checked, and where a side plays `equilibrium` the battle's game solved (its state
    /// slots added to `game_slots`, the analysis's running total).
    fn run(
        &self,
        variant_index: usize,
        variant: &Variant,
        coordinates: &[AxisValue],
        game_slots: &mut usize,
    ) -> Result<Run, AnalysisError> {
        let (battle, rules) = self.swept_battle(variant, coordinates);
        let field = self.combat(rules, coordinates)?;
        let mut prepared = self.prepared(&battle, coordinates)?;
        prepared.allowed = self.allowed;
        let policy = if prepared.equilibrium.contains(&true) {
            Some(self.equilibrium_policy(&field, &prepared, variant, coordinates, game_slots)?)
        } else {
            None
        };
        Ok(Run {
            variant: variant_index,
            coordinates: coordinates.to_vec(),
            battle,
            prepared,
            field,
            policy,
            table: OnceLock::new(),
        })
    }

    /// The variant's battle and rules with the point's values set.
    fn swept_battle(
        &self,
        variant: &Variant,
        coordinates: &[AxisValue],
    ) -> (FieldBattle, FieldRules) {
        let mut battle = self.base_battle.clone();
        for (side, policy) in variant.tactics.iter().enumerate() {
            if let Some(policy) = policy {
                [&mut battle.a, &mut battle.b][side].tactics = *policy;
            }
        }
        let mut rules = variant.rules.clone();
        let mut extra_drm = 0;
        // Odds go last: they set A's SP from B's SP, which another axis may set.
        let mut ordered: Vec<(&SweepAxis, &AxisValue)> =
            self.axes.iter().zip(coordinates).collect();
        ordered.sort_by_key(|(axis, _)| axis.parameter == "odds");
        for (axis, value) in ordered {
            apply_coordinate(
                &axis.parameter,
                value,
                &mut battle,
                &mut rules,
                &mut extra_drm,
                self.allowed,
            );
        }
        battle.a.drm += extra_drm;
        (battle, rules)
    }

    /// The point's rules, compiled; an error points at the sweep that broke them.
    fn combat(
        &self,
        rules: FieldRules,
        coordinates: &[AxisValue],
    ) -> Result<FieldCombat, AnalysisError> {
        let (source, axes, axis_lines) = (self.source, self.axes, self.axis_lines);
        FieldCombat::new(rules).map_err(|e| {
            // Only the round limit is a swept rule; point at its sweep line.
            let swept = axes
                .iter()
                .position(|a| e.field == format!("rules.{}", a.parameter));
            match swept {
                Some(i) => source.error_at(
                    axis_lines[i],
                    format!("sweep.{}", axes[i].parameter),
                    format!(
                        "{}{}",
                        e.message,
                        crate::analysis::describe_point(axes, coordinates, None)
                    ),
                ),
                None => source.error_at(
                    axis_lines.first().copied().flatten(),
                    format!("sweep ({})", crate::analysis::grid_point(axes, coordinates)),
                    format!("{}: {}", e.field, e.message),
                ),
            }
        })
    }

    /// The point's battle, checked and prepared; an error points at the sweep that set
    /// the value at fault.
    fn prepared(
        &self,
        battle: &FieldBattle,
        coordinates: &[AxisValue],
    ) -> Result<PreparedBattle, AnalysisError> {
        let (source, axes) = (self.source, self.axes);
        battle.prepare().map_err(|e| {
            let line = axes
                .iter()
                .position(|a| {
                    e.field.ends_with(a.parameter.as_str())
                        || (a.parameter == "odds" && e.field == "side.a.sp")
                        || (a.parameter == "drm" && e.field == "side.a.drm")
                })
                .and_then(|i| self.axis_lines[i]);
            source.error_at(
                line,
                e.field.clone(),
                format!(
                    "{}{}",
                    e.message,
                    crate::analysis::describe_point(axes, coordinates, None)
                ),
            )
        })
    }

    /// Both sides' tactic tables where a side plays `equilibrium`: the battle's game
    /// solved for that side, the plain mix for the other; the game's state slots are
    /// added to `game_slots`, which may not pass [`MAX_ANALYSIS_GAME_STATES`].
    fn equilibrium_policy(
        &self,
        field: &FieldCombat,
        prepared: &PreparedBattle,
        variant: &Variant,
        coordinates: &[AxisValue],
        game_slots: &mut usize,
    ) -> Result<Arc<StatePolicy>, AnalysisError> {
        let source = self.source;
        let at = || {
            crate::analysis::describe_point(
                self.axes,
                coordinates,
                self.named_variants.then_some(variant.name.as_str()),
            )
        };
        let side = usize::from(!prepared.equilibrium[0]);
        let key = format!("side.{}.tactic", ["a", "b"][side]);
        let game = game::solve(field, prepared, self.payoff.resolve(&prepared.start), MAX_GAME_STATES)
            .map_err(|e| match e {
                game::GameError::TooLarge { .. } => source.error_at(
                    None,
                    key.clone(),
                    format!("\"equilibrium\" play needs the battle's game solved, but {e}{}; use fewer SP, morale or rounds, or a fixed mix", at()),
                ),
                game::GameError::Interrupted => source.error_at(None, key.clone(), "stopped on request while solving the battle's game"),
            })?;
        *game_slots += game.shape.slots();
        if *game_slots > MAX_ANALYSIS_GAME_STATES {
            return Err(source.error_at(
                None,
                key,
                format!("\"equilibrium\" play needs one solved game per run, and these hold more than {MAX_ANALYSIS_GAME_STATES} state slots in all{}; sweep fewer points or use smaller battles", at()),
            ));
        }
        let table = |side: usize| {
            if prepared.equilibrium[side] {
                TacticTable::solved(&game, side)
            } else {
                TacticTable::mix(&prepared.mix[side])
            }
        };
        Ok(Arc::new(StatePolicy {
            sides: [table(0), table(1)],
        }))
    }
}

fn side(source: &Source, key: &str, spec: &SideSpec) -> Result<(Force, TacticSet), AnalysisError> {
    let field = |f: &str| format!("side.{key}.{f}");
    let allowed = match &spec.allowed_tactics {
        Some(value) => allowed_tactics(source, &field("allowed_tactics"), value)?,
        None => TacticSet::ALL,
    };
    let sp = source.int_in(
        &spec.sp,
        &field("sp"),
        1,
        battle::MAX_SP.into(),
        "strength (SP)",
    )? as u32;
    let morale = source.int_in(
        &spec.morale,
        &field("morale"),
        1,
        battle::MAX_MORALE.into(),
        "morale (Guards 3, Major 2, Minor 1)",
    )? as u32;
    let leader = match &spec.leader {
        Some(v) => source.int_in(
            v,
            &field("leader"),
            battle::LEADER_RANGE.0.into(),
            battle::LEADER_RANGE.1.into(),
            "a leader rating",
        )? as i32,
        None => 0,
    };
    let drm = match &spec.drm {
        Some(v) => source.int_in(
            v,
            &field("drm"),
            battle::DRM_RANGE.0.into(),
            battle::DRM_RANGE.1.into(),
            "a side's DRM",
        )? as i32,
        None => 0,
    };
    let tactics = match &spec.tactic {
        Some(value) => {
            let policy = tactic_policy(source, &field("tactic"), value)?;
            within(policy, allowed, usize::from(key == "b"))
                .map_err(|e| source.error(value, field("tactic"), e))?
        }
        None => allowed.uniform().into(),
    };
    let name = match &spec.name {
        Some(name) => crate::analysis::report_text(
            source,
            name,
            &field("name"),
            "a side name",
            crate::analysis::Lines::One,
        )?,
        None => key.to_ascii_uppercase(),
    };
    Ok((
        Force {
            name,
            sp,
            morale,
            leader,
            drm,
            tactics,
        },
        allowed,
    ))
}

/// `[side.x] allowed_tactics`: a non-empty list of tactic names.
fn allowed_tactics(
    source: &Source,
    field: &str,
    value: &Spanned<toml::Value>,
) -> Result<TacticSet, AnalysisError> {
    let names = TACTIC_NAMES.join(", ");
    let fail = |message: String| source.error(value, field, message);
    let toml::Value::Array(items) = value.get_ref() else {
        return Err(fail(format!(
            "a list of the tactics this side may choose, e.g. [\"charge\", \"envelop\"]; the tactical matrix has: {names}"
        )));
    };
    let mut tactics = Vec::new();
    for item in items {
        let name = item.as_str().ok_or_else(|| {
            fail(format!(
                "list tactic names in quotes; got {}; the tactical matrix has: {names}",
                crate::limits::echo(&item.to_string())
            ))
        })?;
        tactics.push(
            battle::tactic_index(name)
                .ok_or_else(|| fail(unknown_tactic(&crate::limits::echo(name))))?,
        );
    }
    TacticSet::of(&tactics).ok_or_else(|| {
        fail(format!(
            "an empty list leaves this side no tactic to choose; list at least one of: {names} (leave the key out for all seven)"
        ))
    })
}

/// A policy as a side limited to `allowed` plays it: uniform over all seven tactics
/// (`"uniform"`) is uniform over the allowed ones; a mix that gives weight to another
/// tactic is refused (the message names it and the allowed ones).
fn within(policy: TacticPolicy, allowed: TacticSet, side: usize) -> Result<TacticPolicy, String> {
    let TacticPolicy::Mix(mix) = policy else {
        return Ok(policy);
    };
    if allowed.is_all() {
        return Ok(policy);
    }
    if mix.weights.iter().all(|&w| w > 0 && w == mix.weights[0]) {
        return Ok(allowed.uniform().into());
    }
    let outside: Vec<&str> = (0..TACTIC_NAMES.len())
        .filter(|&t| mix.weights[t] > 0 && !allowed.contains(t))
        .map(|t| TACTIC_NAMES[t])
        .collect();
    if outside.is_empty() {
        return Ok(policy);
    }
    Err(format!(
        "this policy plays {} but side.{}.allowed_tactics allows only {}; choose among those (\"uniform\" is uniform over them)",
        outside.join(", "),
        ["a", "b"][side],
        allowed.names().join(", ")
    ))
}

/// `[equilibrium] payoff`: one name or a list of them.
fn payoff_spec(value: &toml::Value) -> Result<PayoffSpec, String> {
    let allowed = PayoffSpec::allowed();
    match value {
        toml::Value::String(name) => {
            PayoffSpec::parse(name).map_err(|e| format!("{e}; allowed: {allowed}"))
        }
        toml::Value::Array(items) => {
            let names = items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()
                .ok_or_else(|| format!("a list of outcome names in quotes; allowed: {allowed}"))?;
            PayoffSpec::parse_list(&names).map_err(|e| format!("{e}; allowed: {allowed}"))
        }
        other => Err(format!(
            "a name or a list of names, got {}; allowed: {allowed}",
            crate::limits::echo(&other.to_string())
        )),
    }
}

fn unknown_tactic(name: &str) -> String {
    format!(
        "unknown tactic \"{name}\"; the tactical matrix has: {}",
        TACTIC_NAMES.join(", ")
    )
}

fn unknown_policy(name: &str) -> String {
    format!(
        "unknown tactic \"{name}\"; the tactical matrix has: {}; policies: uniform, equilibrium",
        TACTIC_NAMES.join(", ")
    )
}

/// A policy written as one word, as sweeps give it: a tactic name, `uniform` or
/// `equilibrium`.
pub fn named_policy(name: &str) -> Option<TacticPolicy> {
    match name.trim() {
        "uniform" => Some(TacticMix::uniform(&[0, 1, 2, 3, 4, 5, 6]).ok()?.into()),
        "equilibrium" => Some(TacticPolicy::Equilibrium),
        name => battle::tactic_index(name).map(|t| TacticMix::fixed(t).into()),
    }
}

/// `"charge"`, `"uniform"`, `"equilibrium"`, `{ uniform = ["charge", "envelop"] }` or
/// `{ mix = { charge = 3, envelop = 1 } }`.
fn tactic_policy(
    source: &Source,
    field: &str,
    value: &Spanned<toml::Value>,
) -> Result<TacticPolicy, AnalysisError> {
    let fail = |message: String| source.error(value, field, message);
    let lookup = |name: &str| battle::tactic_index(name).ok_or_else(|| fail(unknown_tactic(name)));
    let usage = "write a tactic name (\"charge\"), \"uniform\", \"equilibrium\", { uniform = [\"charge\", \"envelop\"] } or { mix = { charge = 3, envelop = 1 } }";
    let mix = match value.get_ref() {
        toml::Value::String(name) => {
            return named_policy(name).ok_or_else(|| fail(unknown_policy(name)))
        }
        toml::Value::Table(table) if table.len() == 1 => {
            let (kind, inner) = table.iter().next().expect("one entry");
            match (kind.as_str(), inner) {
                ("uniform", toml::Value::Array(names)) => {
                    let mut tactics = Vec::new();
                    for name in names {
                        let name = name
                            .as_str()
                            .ok_or_else(|| fail(format!("uniform lists tactic names; {usage}")))?;
                        tactics.push(lookup(name)?);
                    }
                    TacticMix::uniform(&tactics).map_err(fail)
                }
                ("mix", toml::Value::Table(weights)) => {
                    let mut mix = [0u32; 7];
                    for (name, weight) in weights {
                        let tactic = lookup(name)?;
                        let weight = weight
                            .as_integer()
                            .filter(|w| (0..=i64::from(battle::MAX_MIX_WEIGHT)).contains(w))
                            .ok_or_else(|| {
                                fail(format!(
                                    "the weight of {name} must be a whole number 0 to {} (relative: charge = 3, envelop = 1 is 75%/25%), got {weight}",
                                    battle::MAX_MIX_WEIGHT
                                ))
                            })?;
                        mix[tactic] = weight as u32;
                    }
                    TacticMix::new(mix).map_err(fail)
                }
                _ => Err(fail(usage.to_string())),
            }
        }
        _ => Err(fail(usage.to_string())),
    };
    mix.map(TacticPolicy::Mix)
}

/// `[rules]` (or a variant's `rules`) over `rules`: the dice (caps, roll range,
/// rounding, round limit), then the CRT's columns, its odds rows and its cells, the
/// Combat Loss Chart and the tactical matrix, in that order; `prefix` names the table
/// in errors.
fn apply_overrides(
    source: &Source,
    prefix: &str,
    spec: &OverridesSpec,
    rules: &mut FieldRules,
) -> Result<(), AnalysisError> {
    apply_caps(source, prefix, spec, rules)?;
    apply_roll_range(source, prefix, spec, rules)?;
    if let Some(rounding) = &spec.odds_rounding {
        rules.odds_rounding = OddsRounding::parse(rounding.get_ref()).ok_or_else(|| {
            source.error(
                rounding,
                format!("{prefix}.odds_rounding"),
                format!(
                    "unknown rounding \"{}\"; allowed: {}",
                    rounding.get_ref(),
                    OddsRounding::NAMES.join(", ")
                ),
            )
        })?;
    }
    if let Some(limit) = &spec.round_limit {
        rules.round_limit = source.int_in(
            limit,
            &format!("{prefix}.round_limit"),
            battle::ROUND_LIMIT_RANGE.0.into(),
            battle::ROUND_LIMIT_RANGE.1.into(),
            "the round limit",
        )? as u32;
    }
    apply_crt_columns(source, prefix, spec, rules)?;
    apply_odds_rows(source, prefix, spec, rules)?;
    // After [rules.odds], so a cell may be edited in an odds row added there.
    apply_crt_cells(source, prefix, spec, rules)?;
    apply_clc(source, prefix, spec, rules)?;
    apply_tactical_matrix(source, prefix, spec, rules)
}

/// `drm_cap`, the net DRM's cap, and `caps`, each DRM source's own.
fn apply_caps(
    source: &Source,
    prefix: &str,
    spec: &OverridesSpec,
    rules: &mut FieldRules,
) -> Result<(), AnalysisError> {
    if let Some(cap) = &spec.drm_cap {
        rules.drm_cap =
            source.int_in(cap, &format!("{prefix}.drm_cap"), 0, 12, "the DRM cap")? as i32;
    }
    for (name, cap) in spec.caps.iter().flatten() {
        let field = format!("{prefix}.caps.{name}");
        let slot = rules.caps.get_mut(name).ok_or_else(|| {
            source.error(
                cap,
                &field,
                format!(
                    "no DRM source \"{}\"; a cap is set per source: {}",
                    crate::limits::echo(name),
                    battle::DrmCaps::SOURCES.join(", ")
                ),
            )
        })?;
        *slot = Some(source.int_in(cap, &field, 0, 12, "a source's cap")? as i32);
    }
    Ok(())
}

/// `roll.min` and `roll.max`, the modified roll's range (min not above max).
fn apply_roll_range(
    source: &Source,
    prefix: &str,
    spec: &OverridesSpec,
    rules: &mut FieldRules,
) -> Result<(), AnalysisError> {
    if let Some(roll) = &spec.roll {
        if let Some(min) = &roll.min {
            rules.roll_min = source.int_in(
                min,
                &format!("{prefix}.roll.min"),
                2,
                12,
                "the lowest modified roll",
            )? as i32;
        }
        if let Some(max) = &roll.max {
            rules.roll_max = source.int_in(
                max,
                &format!("{prefix}.roll.max"),
                2,
                12,
                "the highest modified roll",
            )? as i32;
        }
        if rules.roll_min > rules.roll_max {
            let at = roll
                .min
                .as_ref()
                .or(roll.max.as_ref())
                .expect("one of them was given");
            return Err(source.error(
                at,
                format!("{prefix}.roll"),
                format!(
                    "min ({}) must not exceed max ({})",
                    rules.roll_min, rules.roll_max
                ),
            ));
        }
    }
    Ok(())
}

/// `crt."<column>"`: whole CRT result columns.
fn apply_crt_columns(
    source: &Source,
    prefix: &str,
    spec: &OverridesSpec,
    rules: &mut FieldRules,
) -> Result<(), AnalysisError> {
    for (column, cell) in spec.crt.iter().flatten() {
        let field = format!("{prefix}.crt.\"{column}\"");
        if cell.get_ref().is_table() {
            return Err(source.error(
                cell,
                &field,
                format!(
                    "[rules.crt] edits whole result columns (\"1\" to \"{CRT_COLUMNS}\" = \"L/S\"), which changes every odds row reaching that column; to edit one printed cell, write it under crt_cells: [rules.crt_cells.\"{column}\"] with \"<modified roll>\" = \"L/S\""
                ),
            ));
        }
        let index: usize = column
            .trim()
            .parse()
            .ok()
            .filter(|c| (1..=CRT_COLUMNS).contains(c))
            .ok_or_else(|| {
                source.error(
                    cell,
                    &field,
                    format!("the CRT has result columns 1 to {CRT_COLUMNS}, not \"{column}\""),
                )
            })?;
        rules.crt.columns[index - 1] = result_pair(source, &field, cell)?;
    }
    Ok(())
}

/// `odds."<L:S>"`: an odds row's column at a modified 2, printed or new (rows kept in
/// odds order).
fn apply_odds_rows(
    source: &Source,
    prefix: &str,
    spec: &OverridesSpec,
    rules: &mut FieldRules,
) -> Result<(), AnalysisError> {
    for (odds, column) in spec.odds.iter().flatten() {
        let field = format!("{prefix}.odds.\"{odds}\"");
        let (larger, smaller) = OddsColumn::parse_ratio(odds)
            .filter(|(l, s)| l >= s)
            .ok_or_else(|| {
                source.error(
                    column,
                    &field,
                    format!("odds are written L:S with L ≥ S, e.g. \"3:2\"; got \"{odds}\""),
                )
            })?;
        let roll_two_column = source.int_in(
            column,
            &field,
            1,
            CRT_COLUMNS as i64,
            "the result column a modified roll of 2 reaches",
        )? as u32;
        match rules.odds_column_index(larger, smaller) {
            Some(i) => rules.odds_columns[i].roll_two_column = roll_two_column,
            None => {
                rules.odds_columns.push(OddsColumn {
                    larger,
                    smaller,
                    roll_two_column,
                });
                rules.odds_columns.sort_by(|a, b| {
                    (u64::from(a.larger) * u64::from(b.smaller))
                        .cmp(&(u64::from(b.larger) * u64::from(a.smaller)))
                });
            }
        }
    }
    Ok(())
}

/// `crt_cells."<L:S>"."<roll>"`: single CRT cells, in rows printed or added by
/// `odds`.
fn apply_crt_cells(
    source: &Source,
    prefix: &str,
    spec: &OverridesSpec,
    rules: &mut FieldRules,
) -> Result<(), AnalysisError> {
    for (odds, cells) in spec.crt_cells.iter().flatten() {
        for (roll, cell) in cells {
            let field = format!("{prefix}.crt_cells.\"{odds}\".\"{roll}\"");
            let labels = rules.odds_labels().join(", ");
            let (larger, smaller) = OddsColumn::parse_ratio(odds)
                .filter(|(l, s)| rules.odds_column_index(*l, *s).is_some())
                .ok_or_else(|| {
                    source.error(
                        cell,
                        &field,
                        format!("the CRT has odds rows {labels}; got \"{odds}\""),
                    )
                })?;
            let (lo, hi) = battle::CRT_ROLLS;
            let roll_value: i32 = roll
                .trim()
                .parse()
                .ok()
                .filter(|r| (lo..=hi).contains(r))
                .ok_or_else(|| {
                    source.error(
                        cell,
                        &field,
                        format!(
                            "the CRT is printed for modified rolls {lo} to {hi}, a whole number as the key (\"8\" = \"1/1\"); got \"{roll}\""
                        ),
                    )
                })?;
            let pair = result_pair(source, &field, cell)?;
            rules.edit_crt_cell(larger, smaller, roll_value, pair);
        }
    }
    Ok(())
}

/// `clc."<row>"."<band>"`: Combat Loss Chart values.
fn apply_clc(
    source: &Source,
    prefix: &str,
    spec: &OverridesSpec,
    rules: &mut FieldRules,
) -> Result<(), AnalysisError> {
    for (row_name, bands) in spec.clc.iter().flatten() {
        let row = ClcRow::parse(row_name);
        let labels = rules.clc.band_labels();
        for (band_name, value) in bands {
            let field = format!("{prefix}.clc.\"{row_name}\".\"{band_name}\"");
            let row = row.ok_or_else(|| {
                source.error(
                    value,
                    &field,
                    format!(
                        "the CLC has rows {}; got \"{row_name}\"",
                        ClcRow::NAMES.join(", ")
                    ),
                )
            })?;
            let band = labels
                .iter()
                .position(|l| l == band_name.trim())
                .ok_or_else(|| {
                    source.error(
                        value,
                        &field,
                        format!(
                            "the CLC has SP bands {}; got \"{band_name}\"",
                            labels.join(", ")
                        ),
                    )
                })?;
            rules.clc.values[row as usize][band] = source.int_in(
                value,
                &field,
                battle::CLC_VALUE_RANGE.0.into(),
                battle::CLC_VALUE_RANGE.1.into(),
                "SP lost",
            )? as u32;
        }
    }
    Ok(())
}

/// `tactics.<tactic>.<tactic>`: tactical matrix cells, the larger force's tactic by
/// the smaller's.
fn apply_tactical_matrix(
    source: &Source,
    prefix: &str,
    spec: &OverridesSpec,
    rules: &mut FieldRules,
) -> Result<(), AnalysisError> {
    for (row_name, columns) in spec.tactics.iter().flatten() {
        for (column_name, value) in columns {
            let field = format!("{prefix}.tactics.{row_name}.{column_name}");
            let l = battle::tactic_index(row_name)
                .ok_or_else(|| source.error(value, &field, unknown_tactic(row_name)))?;
            let s = battle::tactic_index(column_name)
                .ok_or_else(|| source.error(value, &field, unknown_tactic(column_name)))?;
            let text = match value.get_ref() {
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let cell = TacticCell::parse(&text).ok_or_else(|| {
                source.error(
                    value,
                    &field,
                    format!("a matrix cell is a DRM (\"+1\", \"-2\", \"0\"), \"NC\", or either in parentheses to end the battle (\"(-2)\", \"(NC)\"); got {text}"),
                )
            })?;
            if !(battle::DRM_RANGE.0..=battle::DRM_RANGE.1).contains(&cell.drm) {
                return Err(source.error(
                    value,
                    &field,
                    format!(
                        "a tactic DRM must be {} to +{}, got {}",
                        battle::DRM_RANGE.0,
                        battle::DRM_RANGE.1,
                        cell.drm
                    ),
                ));
            }
            rules.tactics.cells[l][s] = cell;
        }
    }
    Ok(())
}

/// A CRT cell's text, `"L/S"`: L's result, then S's.
fn result_pair(
    source: &Source,
    field: &str,
    cell: &Spanned<toml::Value>,
) -> Result<ResultPair, AnalysisError> {
    cell.get_ref()
        .as_str()
        .and_then(ResultPair::parse)
        .ok_or_else(|| {
            let got = match cell.get_ref() {
                toml::Value::String(s) => format!("\"{s}\""),
                other => other.to_string(),
            };
            source.error(
                cell,
                field,
                format!(
                    "a CRT cell is L's result / S's result in quotes, each one of {}, e.g. \"1/D1\"; got {got}",
                    battle::CrtResult::CODES.join(", ")
                ),
            )
        })
}

/// Sets one swept parameter. Values are range-checked afterwards by
/// [`FieldBattle::prepare`] and [`FieldCombat::new`]; out-of-range integers saturate so
/// that the check sees them.
fn apply_coordinate(
    parameter: &str,
    value: &AxisValue,
    battle: &mut FieldBattle,
    rules: &mut FieldRules,
    extra_drm: &mut i32,
    allowed: [TacticSet; 2],
) {
    let int = match value {
        AxisValue::Int(v) => *v,
        AxisValue::Odds { larger, smaller } => {
            // A's SP = ⌈B's SP × L / S⌉: the smallest force reaching these odds.
            let sp = (u64::from(battle.b.sp) * u64::from(*larger)).div_ceil(u64::from(*smaller));
            battle.a.sp = sp.min(u64::from(u32::MAX)) as u32;
            return;
        }
        AxisValue::Text(name) => {
            // Names were checked against `named_policy` and the allowed tactics when the
            // sweep was read.
            if let Some(policy) = named_policy(name) {
                match parameter {
                    "a.tactic" => {
                        battle.a.tactics = within(policy, allowed[0], 0).unwrap_or(policy)
                    }
                    "b.tactic" => {
                        battle.b.tactics = within(policy, allowed[1], 1).unwrap_or(policy)
                    }
                    _ => {}
                }
            }
            return;
        }
        AxisValue::Unset => return,
    };
    let as_u32 = int.clamp(0, i64::from(u32::MAX)) as u32;
    let as_i32 = int.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    match parameter {
        "drm" => *extra_drm = as_i32,
        "a.sp" => battle.a.sp = as_u32,
        "b.sp" => battle.b.sp = as_u32,
        "a.morale" => battle.a.morale = as_u32,
        "b.morale" => battle.b.morale = as_u32,
        "a.leader" => battle.a.leader = as_i32,
        "b.leader" => battle.b.leader = as_i32,
        "a.drm" => battle.a.drm = as_i32,
        "b.drm" => battle.b.drm = as_i32,
        "terrain_drm" => battle.terrain_drm = as_i32,
        "round_limit" => rules.round_limit = as_u32,
        _ => unreachable!("parameters are checked against FIELD_PARAMETERS"),
    }
}

/// Most (round, state) pairs a field battle's exact enumeration may visit.
pub const MAX_EXACT_STATES: usize = 100_000;

/// Most entries (2 bytes each) the battle tables of one analysis's runs may hold in all
/// (each is capped at [`crate::systems::field::transitions::MAX_TABLE_ENTRIES`]): 64 MiB. Runs past it are fought
/// round by round, with the same results.
pub const MAX_ANALYSIS_TABLE_ENTRIES: usize = 1 << 25;

impl FieldStudy {
    /// The run's battle table ([`Run::table`]), compiled on first use.
    fn battle_table<'a>(&self, run: &'a Run) -> Option<&'a TransitionTable> {
        run.table
            .get_or_init(|| {
                if run.policy.is_some() {
                    return None;
                }
                let left = self.table_entries_left.load(Ordering::Relaxed);
                let table = TransitionTable::compile(&run.field, &run.prepared, left)?;
                self.table_entries_left
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                        left.checked_sub(table.entries())
                    })
                    .ok()?;
                Some(table)
            })
            .as_ref()
    }
}

/// Most state slots the solved games of one analysis's `equilibrium` runs may hold in
/// all (each run's game is capped at [`MAX_GAME_STATES`]): bounds the time `parse` takes
/// and the memory the tables keep (a 4-byte slot map per run, shared by both sides, plus
/// 48 bytes per reachable state and equilibrium side): 64 MB of maps at most.
pub const MAX_ANALYSIS_GAME_STATES: usize = 16_000_000;

impl crate::engine::System for FieldStudy {
    type Counts = battle::BattleHistogram;
    type Exact = battle::BattleDistribution;

    /// Each variant's effective CRT as `tables.md` prints it ("Combat Results Table — `<variant>`"):
    /// a row per odds column, a column per modified roll, `L/S` results, `*`
    /// where `rules.crt_cells` edited a cell; in the `in36` format a last row of the
    /// chance of each modified roll at net DRM 0.
    fn printed(&self) -> crate::engine::printed::Printed {
        let mut printed = crate::engine::printed::Printed::default();
        for variant in &self.variants {
            let rules = &variant.rules;
            let rolls: Vec<i32> = (rules.roll_min..=rules.roll_max).collect();
            let header: Vec<String> = std::iter::once("odds".to_string())
                .chain(rolls.iter().map(ToString::to_string))
                .collect();
            let mut rows: Vec<Vec<String>> = rules
                .odds_columns
                .iter()
                .enumerate()
                .map(|(odds, column)| {
                    std::iter::once(column.label())
                        .chain(rolls.iter().map(|&roll| {
                            let mark = if rules.cell_edit(odds, roll).is_some() {
                                "*"
                            } else {
                                ""
                            };
                            format!("{}{mark}", rules.cell(odds, roll))
                        }))
                        .collect()
                })
                .collect();
            if self.header.tables.format == TableFormat::In36 {
                let ways = roll_ways(rules.roll_min, rules.roll_max);
                rows.push(
                    std::iter::once("chance at net DRM 0".to_string())
                        .chain(self.header.tables.print_chances(&ways, 36).texts)
                        .collect(),
                );
            }
            printed.table(
                format!("Combat Results Table — {}", variant.name),
                header,
                rows,
            );
        }
        printed
    }

    fn derived(
        &self,
        counts: &[battle::BattleHistogram],
        exact: &[Option<battle::BattleDistribution>],
    ) -> Vec<crate::engine::derived::Derived> {
        derived::derived(self, counts, exact)
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
                .map(|r| crate::engine::RunKey {
                    variant: self.variants[r.variant].name.clone(),
                    coordinates: r.coordinates.clone(),
                })
                .collect(),
            unit: "battles",
        }
    }

    fn empty(&self, run: usize) -> battle::BattleHistogram {
        let r = &self.runs[run];
        battle::BattleHistogram::new(&r.prepared, r.field.rules().round_limit)
    }

    fn simulate(
        &self,
        run: usize,
        dice: &mut crate::dice::DiceStream,
        n: u64,
        counts: &mut battle::BattleHistogram,
    ) {
        let r = &self.runs[run];
        match &r.policy {
            None => {
                FieldKernel::new(self.battle_table(r), &r.field, &r.prepared)
                    .fight_block(dice, n, counts);
            }
            Some(policy) => {
                for _ in 0..n {
                    counts.record(&r.field.fight_with(&r.prepared, policy, dice));
                }
            }
        }
    }

    fn exact(&self, run: usize) -> Option<battle::BattleDistribution> {
        let r = &self.runs[run];
        self.header
            .exact
            .then(|| match &r.policy {
                None => r.field.battle_distribution(&r.prepared, MAX_EXACT_STATES),
                Some(policy) => {
                    r.field
                        .battle_distribution_with(&r.prepared, policy, MAX_EXACT_STATES)
                }
            })
            .flatten()
    }

    fn outcomes(
        &self,
        _run: usize,
        h: &battle::BattleHistogram,
        exact: Option<&battle::BattleDistribution>,
    ) -> Vec<crate::engine::Outcome> {
        battle::BattleResult::ALL
            .iter()
            .map(|r| crate::engine::Outcome {
                name: r.label().to_string(),
                count: h.result[r.index()],
                exact: exact.map(|e| e.result[r.index()]),
                fraction: None,
            })
            .collect()
    }

    fn distributions(
        &self,
        _run: usize,
        h: &battle::BattleHistogram,
        exact: Option<&battle::BattleDistribution>,
    ) -> Vec<crate::engine::Distribution> {
        use crate::engine::Distribution;
        // Battles last at least one round.
        let rounds = Distribution {
            metric: "rounds".into(),
            first: 1,
            counts: h.rounds[1..].to_vec(),
            exact: exact.map(|e| e.rounds[1..].to_vec()),
        };
        vec![
            rounds,
            Distribution::new("sp_lost_a", &h.sp_lost[0], exact.map(|e| &e.sp_lost[0][..])),
            Distribution::new("sp_lost_b", &h.sp_lost[1], exact.map(|e| &e.sp_lost[1][..])),
            Distribution::new(
                "morale_lost_a",
                &h.morale_lost[0],
                exact.map(|e| &e.morale_lost[0][..]),
            ),
            Distribution::new(
                "morale_lost_b",
                &h.morale_lost[1],
                exact.map(|e| &e.morale_lost[1][..]),
            ),
        ]
    }

    /// Trials counted: every battle ends with one result.
    fn trials_counted(&self, _run: usize, counts: &Self::Counts) -> u128 {
        crate::sim::total(&counts.result)
    }

    /// Both sides pick a tactic at once each round ([`choices`]).
    fn simultaneous_choices(&self) -> Option<&dyn crate::engine::choices::SimultaneousChoices> {
        Some(self)
    }

    fn rules(&self) -> serde_json::Value {
        let rules: Vec<_> = self
            .variants
            .iter()
            .map(|v| {
                let mut variant = serde_json::json!({"name": v.name, "rules": v.rules});
                // Only variants that set tactics say so (older reports' bytes stay).
                if v.tactics.iter().any(Option::is_some) {
                    variant["tactics"] = serde_json::json!({"a": v.tactics[0], "b": v.tactics[1]});
                }
                variant
            })
            .collect();
        let axes: Vec<_> = self
            .axes
            .iter()
            .map(|a| serde_json::json!({"parameter": a.parameter, "values": a.values.iter().map(ToString::to_string).collect::<Vec<_>>()}))
            .collect();
        let mut rules = serde_json::json!({"system": self.header.system, "variants": rules, "battle": self.base_battle, "sweep": axes});
        // Only where a side plays the equilibrium does the payoff change a run.
        if self.runs.iter().any(|r| r.policy.is_some()) {
            rules["payoff"] = serde_json::json!(self.payoff);
        }
        // Only files that limit a side's tactics say so (other reports' bytes stay).
        if self.allowed.iter().any(|a| !a.is_all()) {
            rules["allowed_tactics"] =
                serde_json::json!({"a": self.allowed[0], "b": self.allowed[1]});
        }
        rules
    }
}

/// One run's simulated counts and, where computed, its exact distribution.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub histogram: BattleHistogram,
    pub exact: Option<BattleDistribution>,
}

/// Every run of an analysis, in [`FieldStudy::runs`] order.
#[derive(Debug, Clone)]
pub struct FieldResults {
    pub trials: u64,
    pub seed: u64,
    pub runs: Vec<RunResult>,
}

impl FieldResults {
    /// The engine's results of a field analysis, run by run.
    pub fn of(results: &crate::engine::driver::PlanResults<FieldStudy>) -> Self {
        Self {
            trials: results.trials,
            seed: results.seed,
            runs: results
                .counts
                .iter()
                .zip(&results.exact)
                .map(|(histogram, exact)| RunResult {
                    histogram: histogram.clone(),
                    exact: exact.clone(),
                })
                .collect(),
        }
    }
}

/// The ways (in 36) each modified roll of `roll_min..=roll_max` is read at net DRM 0:
/// 2d6 clamped to the printed rows.
pub fn roll_ways(roll_min: i32, roll_max: i32) -> Vec<u64> {
    let mut ways = vec![0u64; (roll_max - roll_min + 1).max(0) as usize];
    for first in 1..=6 {
        for second in 1..=6 {
            let roll = (first + second).clamp(roll_min, roll_max);
            if let Some(w) = ways.get_mut((roll - roll_min) as usize) {
                *w += 1;
            }
        }
    }
    ways
}
