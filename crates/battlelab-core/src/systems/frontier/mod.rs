//! The frontier quick-battle study (rule 19, docs/systems/frontier.md): one battle as the file
//! describes it, and the sensitivity runs a designer asks for — every terrain × weather,
//! the commitment-level difference, each side's primary leader, surprise.
//!
//! Why this module exists: it is the analysis-file boundary and report for
//! [`crate::systems::frontier::battle`]. Every check happens here once (19.1's stacking and
//! array rules, the melee CRT's shape, ratings, levels), for the base battle and for every
//! sensitivity run, so a run cannot fail on input.
//!
//! ```toml
//! system = "frontier"
//! seed = 1
//! trials = 100_000
//!
//! [battle]
//! terrain = "wilderness"     # rough | wilderness | settled
//! severe_weather = false
//! initiative = "a"           # a | b
//! surprise = "none"          # none | a | b: the side that won surprise
//! extra_round = true         # the non-initiative side tries for the extra round (19.1)
//! leader_loss = "1/6"        # [option] P(a leader is lost) per event
//! victory = "fewer-lost"     # [option] fewer-lost | fewer-lost-share
//!
//! [side.a]
//! level = 3                  # commitment/mobilisation level, 1–5
//! primary_leader = 2         # 1–3
//! movement = "aggressive"    # [option] aggressive | fire-only
//! avoid_melee = false        # [option] a stack the enemy moved atop tries to move away (+1)
//! # lanes, left to right; each a list of stacks, front row first; `primary = true` puts
//! # the primary leader (rating primary_leader) with a stack
//! lanes = [[{ units = ["warrior 3/2", "warrior 3/2"], primary = true }], …]
//!
//! [side.b]
//! …
//!
//! [crt]                      # the melee CRT: the game's own is not published with rule 19
//! columns = ["1:2", "1:1", "2:1", "3:1"]
//! first_roll = 1             # the modified roll of the first row
//! rows = [["1/-", "R/-", "1/1", "-/1"], …]   # attacker/defender: - | a number | R
//!
//! [sensitivity]              # extra runs beside the battle as written
//! terrain_weather = true     # every terrain × fair and severe weather
//! levels = true              # side A's level 1–5 against B's as written
//! leaders = true             # each side's primary leader 1–3
//! surprise = true            # none, A won surprise, B won surprise
//! ```

pub mod battle;
pub mod one_roll;
pub mod rolls;
#[doc(hidden)]
pub mod scenarios;

use std::path::Path;

use serde::Deserialize;
use serde_json::json;
use toml::Spanned;

use crate::analysis::{self, AnalysisError, AxisValue, Source};
use crate::engine::headline::{Headline, Match};
use crate::header::{analysis_file, AnalysisHeader};
use crate::keys::{self, key, KeyDoc, PricedAt, SetBy, SystemDoc, Ty, ValueDoc, REQUIRED};
use crate::systems::frontier::battle::{
    CrtLoss, FrontierBattle, FrontierCombat, FrontierHistogram, MeleeCrt, MovePolicy, Side, Stack,
    Unit, VictoryRule,
};
use crate::systems::frontier::rolls::{Terrain, UnitType, MAX_LEADER, MAX_LEVEL};

/// One battle of the study: which sensitivity group it belongs to and its label there.
#[derive(Debug, Clone)]
pub struct FrontierRun {
    /// "as written", "terrain × weather", "levels", "leaders", "surprise".
    pub group: String,
    pub label: String,
    pub combat: FrontierCombat,
}

/// A validated frontier study.
#[derive(Debug, Clone)]
pub struct FrontierStudy {
    pub header: AnalysisHeader,
    pub side_names: [String; 2],
    pub runs: Vec<FrontierRun>,
    /// Sensitivity runs left out because their battle breaks 19.1: (group, label, why).
    pub skipped: Vec<(String, String, String)>,
}

analysis_file! {
    struct FrontierFile {
        #[serde(default)]
        battle: BattleSpec,
        side: SidesSpec,
        crt: Spanned<CrtSpec>,
        #[serde(default)]
        sensitivity: SensitivitySpec,
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct BattleSpec {
    terrain: Option<Spanned<String>>,
    severe_weather: Option<bool>,
    initiative: Option<Spanned<String>>,
    surprise: Option<Spanned<String>>,
    extra_round: Option<bool>,
    leader_loss: Option<Spanned<String>>,
    victory: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SidesSpec {
    a: Spanned<SideSpec>,
    b: Spanned<SideSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SideSpec {
    name: Option<Spanned<String>>,
    level: Spanned<i64>,
    primary_leader: Spanned<i64>,
    movement: Option<Spanned<String>>,
    avoid_melee: Option<bool>,
    lanes: Spanned<Vec<Vec<Spanned<StackSpec>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StackSpec {
    units: Vec<Spanned<String>>,
    #[serde(default)]
    leader: i64,
    /// The side's primary leader is with this stack (its rating is `primary_leader`).
    #[serde(default)]
    primary: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CrtSpec {
    columns: Vec<Spanned<String>>,
    first_roll: Option<i64>,
    rows: Vec<Spanned<Vec<Spanned<String>>>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SensitivitySpec {
    #[serde(default)]
    terrain_weather: bool,
    #[serde(default)]
    levels: bool,
    #[serde(default)]
    leaders: bool,
    #[serde(default)]
    surprise: bool,
}

/// Every key of a frontier file (`battlelab keys frontier`), beside the structs above that
/// parse them.
pub const KEYS: &[&[KeyDoc]] = &[keys::HEADER, FRONTIER_KEYS, keys::EXPECT_VALUE];

const FRONTIER_KEYS: &[KeyDoc] = &[
    key("battle.terrain", Ty::OneOf(&["rough", "wilderness", "settled"]), "\"wilderness\"", "the battle's terrain", "\"rough\""),
    key("battle.severe_weather", Ty::Bool, "false", "severe weather", "true"),
    key("battle.initiative", Ty::OneOf(&["a", "b"]), "\"a\"", "the side with the initiative fires and moves first", "\"b\""),
    key("battle.surprise", Ty::OneOf(&["none", "a", "b"]), "\"none\"", "the side that won surprise", "\"a\""),
    key("battle.extra_round", Ty::Bool, "true", "the non-initiative side tries for the extra round (19.1)", "true"),
    key("battle.leader_loss", Ty::Text, "\"1/6\"", "[option] P(a leader is lost) per event, written n/d", "\"1/6\""),
    key("battle.victory", Ty::OneOf(&["fewer-lost", "fewer-lost-share"]), "\"fewer-lost\"", "[option] how the winner is read", "\"fewer-lost-share\""),
    key("side.{a,b}.name", Ty::Text, "\"A\" / \"B\"", "the side's name in reports", "\"Shawnee\""),
    key("side.{a,b}.level", Ty::Int(1, crate::systems::frontier::rolls::MAX_LEVEL as i64), REQUIRED, "commitment/mobilisation level", "3").priced_as("{a,b}.level", PricedAt::Key).set_by(LEVELS_SET_A_LEVEL),
    key("side.{a,b}.primary_leader", Ty::Int(1, crate::systems::frontier::rolls::MAX_LEADER as i64), REQUIRED, "the primary leader's rating", "2").priced_as("{a,b}.leader", PricedAt::Key).set_by(LEADERS_SET_LEADER),
    key("side.{a,b}.movement", Ty::OneOf(&["aggressive", "fire-only"]), "\"aggressive\"", "[option] whether front stacks try to melee", "\"fire-only\""),
    key("side.{a,b}.avoid_melee", Ty::Bool, "false", "[option] a stack the enemy moved atop tries to move away (+1)", "true"),
    key("side.{a,b}.lanes[][].units", Ty::TextList, REQUIRED, "lanes left to right, each a list of stacks, front row first: a stack's units, \"type fire/melee\" (\"warrior 3/2\")", "[\"warrior 3/2\"]"),
    key("side.{a,b}.lanes[][].leader", Ty::Int(0, crate::systems::frontier::rolls::MAX_LEADER as i64), "0", "a (secondary) leader's rating with the stack", "1"),
    key("side.{a,b}.lanes[][].primary", Ty::Bool, "false", "the primary leader is with this stack", "true"),
    key("crt.columns", Ty::TextList, REQUIRED, "the melee CRT's odds columns, e.g. [\"1:2\", \"1:1\", \"2:1\"]", "[\"1:1\", \"2:1\"]"),
    key("crt.first_roll", Ty::Int(-20, 20), "1", "the modified roll of the first row", "1"),
    key("crt.rows", Ty::TextRows, REQUIRED, "rows of attacker/defender results: - | a number | R", "[[\"1/-\", \"-/1\"]]"),
    key("sensitivity.terrain_weather", Ty::Bool, "false", "extra runs: every terrain × fair and severe weather", "true"),
    key("sensitivity.levels", Ty::Bool, "false", "extra runs: side A's level 1-5 against B's as written", "true"),
    key("sensitivity.leaders", Ty::Bool, "false", "extra runs: each side's primary leader 1-3", "true"),
    key("sensitivity.surprise", Ty::Bool, "false", "extra runs: none, A won surprise, B won surprise", "true"),
];

/// This system in [`crate::systems::REGISTRY`].
pub const REGISTRATION: crate::systems::Registration = crate::systems::Registration {
    folder: "frontier",
    docs: &[DOC],
    benches: &["frontier"],
    one_roll: one_roll::TABLES,
    parse: |path, text, _| crate::systems::study(FrontierStudy::parse(path, text)),
};

/// `battlelab keys` and `battlelab new` for frontier quick battles.
pub const DOC: SystemDoc = SystemDoc {
    companion: None,
    name: "frontier",
    summary: "frontier quick battles (rule 19, docs/systems/frontier.md): lanes of stacks, fire, movement, melee",
    value: ValueDoc {
        headlines,
        default_modifiers: &["a.leader+1", "a.level+1"],
        currency: Some(("a.leader", "leader rating")),
        odds_columns: None,
    },
    keys: KEYS,
    starter: "# ILLUSTRATIVE melee CRT: the game's own is not published with rule 19; replace it.\nsystem = \"frontier\"\ntrials = 10_000\n\n[battle]\nterrain = \"wilderness\"     # rough | wilderness | settled\ninitiative = \"a\"           # a | b\n\n[side.a]\nlevel = 3                  # commitment level, 1-5\nprimary_leader = 2         # 1-3\nlanes = [\n  [{ units = [\"warrior 3/2\", \"warrior 3/2\"], primary = true }],\n  [{ units = [\"warrior 3/2\", \"warrior 3/2\"] }],\n]\n\n[side.b]\nlevel = 3\nprimary_leader = 2\nlanes = [\n  [{ units = [\"militia 2/2\", \"militia 2/2\"], primary = true }],\n  [{ units = [\"militia 2/2\", \"militia 2/2\"] }],\n]\n\n[crt]                      # ILLUSTRATIVE, not the game's\ncolumns = [\"1:2\", \"1:1\", \"3:2\", \"2:1\", \"3:1\"]\nfirst_roll = -2\nrows = [\n  [\"R/-\", \"R/-\", \"1/-\", \"1/-\", \"1/1\"],\n  [\"R/-\", \"1/-\", \"1/-\", \"1/1\", \"-/1\"],\n  [\"1/-\", \"1/-\", \"1/1\", \"-/1\", \"-/1\"],\n  [\"1/-\", \"1/1\", \"-/1\", \"-/1\", \"-/R\"],\n  [\"1/1\", \"-/1\", \"-/1\", \"-/R\", \"-/R\"],\n  [\"1/1\", \"-/1\", \"-/R\", \"-/R\", \"-/2\"],\n  [\"-/1\", \"-/R\", \"-/R\", \"-/2\", \"-/2\"],\n  [\"-/1\", \"-/R\", \"-/2\", \"-/2\", \"-/R\"],\n  [\"-/R\", \"-/2\", \"-/2\", \"-/R\", \"-/R\"],\n  [\"-/R\", \"-/2\", \"-/R\", \"-/R\", \"-/R\"],\n  [\"-/2\", \"-/R\", \"-/R\", \"-/R\", \"-/R\"],\n  [\"-/2\", \"-/R\", \"-/R\", \"-/R\", \"-/R\"],\n]\n",
};

/// What `value` reads first: P(A victory), then each side's units eliminated.
fn headlines() -> Vec<Headline> {
    vec![
        Headline::outcomes(
            "a_victory",
            "P(A victory)",
            Match::Is(vec!["A victory".into()]),
        ),
        Headline::metric("eliminated_b"),
        Headline::metric("eliminated_a"),
    ]
}

const LEVELS_SET_A_LEVEL: &[SetBy] = &[SetBy {
    only: "a",
    axis: "sensitivity",
    prefix: "levels",
    what: "sensitivity.levels, whose runs set side A's level 1-5",
    instead: "read a run where it is in force, e.g. sensitivity=\"as written\"",
}];

const LEADERS_SET_LEADER: &[SetBy] = &[
    SetBy {
        only: "a",
        axis: "setting",
        prefix: "A primary leader",
        what: "sensitivity.leaders, whose runs set side A's primary leader 1-3",
        instead: "read a run where it is in force, e.g. sensitivity=\"as written\"",
    },
    SetBy {
        only: "b",
        axis: "setting",
        prefix: "B primary leader",
        what: "sensitivity.leaders, whose runs set side B's primary leader 1-3",
        instead: "read a run where it is in force, e.g. sensitivity=\"as written\"",
    },
];

fn side_index(
    source: &Source,
    value: &Spanned<String>,
    field: &str,
) -> Result<usize, AnalysisError> {
    match value.get_ref().as_str() {
        "a" => Ok(0),
        "b" => Ok(1),
        other => Err(source.error(
            value,
            field,
            format!("unknown side \"{other}\"; allowed: a, b"),
        )),
    }
}

/// "warrior 3/2" → a unit.
fn parse_unit(text: &str) -> Result<Unit, String> {
    let (kind, cfs) = text.trim().split_once(' ').ok_or(format!(
        "\"{text}\": write a unit as \"<type> <fire CF>/<melee CF>\", e.g. \"warrior 3/2\""
    ))?;
    let kind = UnitType::parse(kind.trim()).ok_or(format!(
        "unknown unit type \"{kind}\"; allowed: {}",
        UnitType::NAMES
    ))?;
    let (fire, melee) = cfs.trim().split_once('/').ok_or(format!(
        "\"{text}\": give both CFs as <fire>/<melee>, e.g. 3/2"
    ))?;
    let number = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("\"{text}\": CFs are whole numbers"))
    };
    Ok(Unit {
        kind,
        fire_cf: number(fire)?,
        melee_cf: number(melee)?,
    })
}

fn parse_loss(text: &str) -> Option<CrtLoss> {
    match text.trim() {
        "-" | "0" => Some(CrtLoss::None),
        "R" | "r" => Some(CrtLoss::Rout),
        n => n
            .parse::<u8>()
            .ok()
            .filter(|&n| n <= 9)
            .map(CrtLoss::Eliminate),
    }
}

fn parse_crt(source: &Source, crt: &Spanned<CrtSpec>) -> Result<MeleeCrt, AnalysisError> {
    let spec = crt.get_ref();
    let mut columns = Vec::new();
    for (i, c) in spec.columns.iter().enumerate() {
        let parsed = c
            .get_ref()
            .split_once(':')
            .and_then(|(a, d)| Some((a.trim().parse::<u32>().ok()?, d.trim().parse::<u32>().ok()?)))
            .ok_or_else(|| {
                source.error(
                    c,
                    format!("crt.columns[{i}]"),
                    format!(
                        "\"{}\": an odds column is written A:D, e.g. \"3:1\"",
                        c.get_ref()
                    ),
                )
            })?;
        columns.push(parsed);
    }
    let mut cells = Vec::new();
    for (r, row) in spec.rows.iter().enumerate() {
        let mut parsed = Vec::new();
        for (c, cell) in row.get_ref().iter().enumerate() {
            let text = cell.get_ref();
            let pair = text
                .split_once('/')
                .and_then(|(a, d)| Some((parse_loss(a)?, parse_loss(d)?)))
                .ok_or_else(|| {
                    source.error(
                        cell,
                        format!("crt.rows[{r}][{c}]"),
                        format!("\"{text}\": a cell is attacker/defender, each - (no effect), a number of units eliminated (0-9) or R (routed), e.g. \"-/1\""),
                    )
                })?;
            parsed.push(pair);
        }
        cells.push(parsed);
    }
    let table = MeleeCrt {
        columns,
        first_roll: match spec.first_roll {
            None => 1,
            Some(r) if (-20..=20).contains(&r) => r as i32,
            Some(r) => {
                return Err(source.error_at(
                    Some(source.line_of(crt.span())),
                    "crt.first_roll",
                    format!("first_roll {r}: the first row's modified roll is -20 to 20"),
                ))
            }
        },
        cells,
    };
    table.validate().map_err(|e| {
        let line = e
            .field
            .strip_prefix("crt.rows[")
            .and_then(|r| r.strip_suffix(']'))
            .and_then(|r| r.parse::<usize>().ok())
            .and_then(|r| spec.rows.get(r))
            .map(|row| source.line_of(row.span()))
            .or_else(|| {
                e.field
                    .strip_prefix("crt.columns[")
                    .and_then(|c| c.strip_suffix(']'))
                    .and_then(|c| c.parse::<usize>().ok())
                    .and_then(|c| spec.columns.get(c))
                    .map(|c| source.line_of(c.span()))
            })
            .unwrap_or_else(|| source.line_of(crt.span()));
        source.error_at(Some(line), e.field, e.message)
    })?;
    Ok(table)
}

/// A side and where its primary leader stands (lane, row), if on a stack.
fn parse_side(
    source: &Source,
    spec: &Spanned<SideSpec>,
    key: &str,
) -> Result<(Side, Option<(usize, usize)>), AnalysisError> {
    let s = spec.get_ref();
    let level = source.int_in(
        &s.level,
        &format!("side.{key}.level"),
        1,
        MAX_LEVEL.into(),
        "the commitment/mobilisation level",
    )? as u32;
    let primary_leader = source.int_in(
        &s.primary_leader,
        &format!("side.{key}.primary_leader"),
        1,
        MAX_LEADER.into(),
        "the primary leader's command rating",
    )? as u32;
    let move_policy = match &s.movement {
        None => MovePolicy::Aggressive,
        Some(v) => match v.get_ref().as_str() {
            "aggressive" => MovePolicy::Aggressive,
            "fire-only" => MovePolicy::FireOnly,
            other => {
                return Err(source.error(
                    v,
                    format!("side.{key}.movement"),
                    format!("unknown movement policy \"{other}\"; allowed: aggressive (every eligible front stack tries to melee), fire-only (never move)"),
                ))
            }
        },
    };
    let mut lanes = Vec::new();
    let mut primary_stack: Option<(usize, usize)> = None;
    for (l, lane) in s.lanes.get_ref().iter().enumerate() {
        let mut stacks = Vec::new();
        for (r, stack) in lane.iter().enumerate() {
            let field = format!("side.{key}.lanes[{l}][{r}]");
            let st = stack.get_ref();
            if st.primary {
                if primary_stack.is_some() {
                    return Err(source.error(
                        stack,
                        format!("{field}.primary"),
                        "the primary leader is with one stack only; mark a single stack primary = true",
                    ));
                }
                if st.leader != 0 && st.leader != i64::from(primary_leader) {
                    return Err(source.error(
                        stack,
                        format!("{field}.leader"),
                        format!(
                            "leader {} on the primary leader's stack, but primary_leader = {primary_leader}; give one of them (the stack's leader is the primary leader)",
                            st.leader
                        ),
                    ));
                }
                primary_stack = Some((l, r));
            }
            if !(0..=i64::from(MAX_LEADER)).contains(&st.leader) {
                return Err(source.error(
                    stack,
                    format!("{field}.leader"),
                    format!("leader rating {}: command ratings are 1 to {MAX_LEADER} (0 or leave out for no leader)", st.leader),
                ));
            }
            let mut units = Vec::new();
            for (u, text) in st.units.iter().enumerate() {
                units.push(
                    parse_unit(text.get_ref())
                        .map_err(|m| source.error(text, format!("{field}.units[{u}]"), m))?,
                );
            }
            stacks.push(Stack {
                units,
                leader: if st.primary {
                    primary_leader
                } else {
                    st.leader as u32
                },
            });
        }
        lanes.push(stacks);
    }
    Ok((
        Side {
            level,
            primary_leader,
            lanes,
            move_policy,
            avoid_melee: s.avoid_melee.unwrap_or(false),
        },
        primary_stack,
    ))
}

/// Where each side's primary leader stands: (lane, row) of its stack, if on one.
type PrimaryStacks = [Option<(usize, usize)>; 2];

impl FrontierStudy {
    pub fn parse(path: &Path, text: &str) -> Result<Self, AnalysisError> {
        let source = Source::new(path, text);
        let spec: FrontierFile = source.parse_toml()?;
        let header = AnalysisHeader::parse(path, &source, None)?;
        let (base, primary_stacks) = battle_as_written(&source, &spec)?;
        let mut runs = vec![FrontierRun {
            group: "as written".into(),
            label: "as written".into(),
            combat: compile_as_written(&source, &spec, base.clone())?,
        }];
        let skipped = sensitivity_runs(&spec.sensitivity, &base, primary_stacks, &mut runs);
        let side_name = |key: &str, side: &SideSpec| match &side.name {
            Some(name) => analysis::report_text(
                &source,
                name,
                &format!("side.{key}.name"),
                "a side name",
                analysis::Lines::One,
            ),
            None => Ok(key.to_ascii_uppercase()),
        };
        Ok(Self {
            skipped,
            header,
            side_names: [
                side_name("a", spec.side.a.get_ref())?,
                side_name("b", spec.side.b.get_ref())?,
            ],
            runs,
        })
    }
}

/// The battle as the file writes it: `[battle]`'s terrain, weather, initiative,
/// surprise, extra round, leader loss and victory reading, both sides and the CRT; with
/// where each side's primary leader stands.
fn battle_as_written(
    source: &Source,
    spec: &FrontierFile,
) -> Result<(FrontierBattle, PrimaryStacks), AnalysisError> {
    let b = &spec.battle;
    let terrain = match &b.terrain {
        Some(v) => Terrain::parse(v.get_ref()).ok_or_else(|| {
            source.error(
                v,
                "battle.terrain",
                format!(
                    "unknown terrain \"{}\"; allowed: {}",
                    v.get_ref(),
                    Terrain::NAMES
                ),
            )
        })?,
        None => Terrain::Wilderness,
    };
    let initiative = match &b.initiative {
        Some(v) => side_index(source, v, "battle.initiative")?,
        None => 0,
    };
    let surprise = match &b.surprise {
        Some(v) if v.get_ref() == "none" => None,
        Some(v) => Some(side_index(source, v, "battle.surprise").map_err(|_| {
            source.error(
                v,
                "battle.surprise",
                format!(
                    "unknown surprise \"{}\"; allowed: none, a, b (the side that won surprise)",
                    v.get_ref()
                ),
            )
        })?),
        None => None,
    };
    let leader_loss = leader_loss(source, b)?;
    let victory = match &b.victory {
        Some(v) => match v.get_ref().as_str() {
            "fewer-lost" => VictoryRule::FewerLost,
            "fewer-lost-share" => VictoryRule::FewerLostShare,
            other => {
                return Err(source.error(
                    v,
                    "battle.victory",
                    format!(
                    "unknown victory reading \"{other}\"; allowed: fewer-lost, fewer-lost-share"
                ),
                ))
            }
        },
        None => VictoryRule::FewerLost,
    };
    let (side_a, primary_a) = parse_side(source, &spec.side.a, "a")?;
    let (side_b, primary_b) = parse_side(source, &spec.side.b, "b")?;
    let crt = parse_crt(source, &spec.crt)?;
    let battle = FrontierBattle {
        terrain,
        severe_weather: b.severe_weather.unwrap_or(false),
        initiative,
        surprise,
        sides: [side_a, side_b],
        crt,
        leader_loss,
        extra_round: b.extra_round.unwrap_or(true),
        victory,
    };
    Ok((battle, [primary_a, primary_b]))
}

/// `battle.leader_loss`: P(a leader is lost) per event as (n, d), 1/6 unless given.
fn leader_loss(source: &Source, b: &BattleSpec) -> Result<(u32, u32), AnalysisError> {
    let Some(v) = &b.leader_loss else {
        return Ok((1, 6));
    };
    let parsed = v
        .get_ref()
        .split_once('/')
        .and_then(|(n, d)| Some((n.trim().parse::<u32>().ok()?, d.trim().parse::<u32>().ok()?)))
        .filter(|&(n, d)| d > 0 && d <= 1_000_000 && n <= d);
    parsed.ok_or_else(|| {
        source.error(
            v,
            "battle.leader_loss",
            format!(
                "\"{}\": a probability written n/d from 0/1 to 1/1, e.g. \"1/6\"",
                v.get_ref()
            ),
        )
    })
}

/// The battle as written, compiled; a rules error names "a.lanes[0][1]" or
/// "crt.rows[2]", so it is pointed at the file's line for that stack, lane or the CRT.
fn compile_as_written(
    source: &Source,
    spec: &FrontierFile,
    battle: FrontierBattle,
) -> Result<FrontierCombat, AnalysisError> {
    let side_specs = [&spec.side.a, &spec.side.b];
    FrontierCombat::new(battle).map_err(|e| {
        let mut parts = e.field.splitn(2, '.');
        let head = parts.next().unwrap_or("");
        let rest = parts.next().unwrap_or("");
        let (field, line) = match head {
            "a" | "b" => {
                let s = usize::from(head == "b");
                let side = side_specs[s];
                let lane_line = rest
                    .strip_prefix("lanes[")
                    .and_then(|r| r.split(']').next())
                    .and_then(|l| l.parse::<usize>().ok())
                    .and_then(|l| {
                        let row = rest
                            .split("][")
                            .nth(1)
                            .and_then(|r| r.split(']').next())
                            .and_then(|r| r.parse::<usize>().ok());
                        let lane = side.get_ref().lanes.get_ref().get(l)?;
                        match row.and_then(|r| lane.get(r)) {
                            Some(stack) => Some(source.line_of(stack.span())),
                            None => lane.first().map(|s| source.line_of(s.span())),
                        }
                    })
                    .unwrap_or_else(|| source.line_of(side.get_ref().lanes.span()));
                (format!("side.{head}.{rest}"), lane_line)
            }
            _ => (e.field.clone(), source.line_of(spec.crt.span())),
        };
        source.error_at(Some(line), field, e.message)
    })
}

/// `[sensitivity]`'s runs, added to `runs` after the battle as written. A sensitivity
/// run whose battle breaks 19.1 (a stack legal in wilderness but not in rough terrain, an
/// array set up by the other side under surprise) is skipped and returned as (group,
/// label, why) for the report, not an error: the battle as written is valid.
fn sensitivity_runs(
    sens: &SensitivitySpec,
    base: &FrontierBattle,
    primary_stacks: PrimaryStacks,
    runs: &mut Vec<FrontierRun>,
) -> Vec<(String, String, String)> {
    let mut skipped: Vec<(String, String, String)> = Vec::new();
    let mut add =
        |group: &str, label: String, battle: FrontierBattle| match FrontierCombat::new(battle) {
            Ok(combat) => runs.push(FrontierRun {
                group: group.into(),
                combat,
                label,
            }),
            Err(e) => skipped.push((group.into(), label, format!("{}: {}", e.field, e.message))),
        };
    if sens.terrain_weather {
        for terrain in Terrain::ALL {
            for severe in [false, true] {
                let mut battle = base.clone();
                battle.terrain = terrain;
                battle.severe_weather = severe;
                add(
                    "terrain × weather",
                    format!(
                        "{}, {}",
                        terrain.name(),
                        if severe { "severe" } else { "fair" }
                    ),
                    battle,
                );
            }
        }
    }
    if sens.levels {
        for level in 1..=MAX_LEVEL {
            let mut battle = base.clone();
            battle.sides[0].level = level;
            let difference = level as i32 - base.sides[1].level as i32;
            add("levels", format!("{difference:+}"), battle);
        }
    }
    if sens.leaders {
        for s in 0..2 {
            for rating in 1..=MAX_LEADER {
                let mut battle = base.clone();
                battle.sides[s].primary_leader = rating;
                // The primary leader's stack, if the file puts it on one, leads with
                // the same rating (movement, melee shifts, recovery).
                if let Some((l, r)) = primary_stacks[s] {
                    battle.sides[s].lanes[l][r].leader = rating;
                }
                add(
                    "leaders",
                    format!("{} primary leader {rating}", ["A", "B"][s]),
                    battle,
                );
            }
        }
    }
    if sens.surprise {
        for (label, surprise) in [
            ("no surprise", None),
            ("A won surprise", Some(0)),
            ("B won surprise", Some(1)),
        ] {
            let mut battle = base.clone();
            battle.surprise = surprise;
            add("surprise", label.to_string(), battle);
        }
    }
    skipped
}

#[derive(Debug, Clone)]
pub struct FrontierResults {
    pub trials: u64,
    pub seed: u64,
    pub runs: Vec<FrontierHistogram>,
}

impl crate::engine::System for FrontierStudy {
    type Counts = FrontierHistogram;
    /// Whole frontier battles have no exact enumeration (their single rolls do).
    type Exact = ();

    fn header(&self) -> crate::engine::Header<'_> {
        self.header.view()
    }

    fn plan(&self) -> crate::engine::Plan {
        crate::engine::Plan {
            axes: SENSITIVITY_AXES.iter().map(|a| a.to_string()).collect(),
            runs: self
                .runs
                .iter()
                .map(|r| crate::engine::RunKey {
                    variant: "base".into(),
                    coordinates: r.coordinates(),
                })
                .collect(),
            unit: "battles",
        }
    }

    fn empty(&self, run: usize) -> FrontierHistogram {
        self.runs[run].combat.empty_histogram()
    }

    fn simulate(
        &self,
        run: usize,
        dice: &mut crate::dice::DiceStream,
        n: u64,
        h: &mut FrontierHistogram,
    ) {
        self.runs[run].combat.battle_block(dice, n, h);
    }

    fn exact(&self, _run: usize) -> Option<()> {
        None
    }

    fn outcomes(
        &self,
        _run: usize,
        h: &FrontierHistogram,
        _exact: Option<&()>,
    ) -> Vec<crate::engine::Outcome> {
        RESULTS
            .iter()
            .enumerate()
            .map(|(i, label)| crate::engine::Outcome {
                name: label.to_string(),
                count: h.result[i],
                exact: None,
                fraction: None,
            })
            .collect()
    }

    fn distributions(
        &self,
        _run: usize,
        h: &FrontierHistogram,
        _exact: Option<&()>,
    ) -> Vec<crate::engine::Distribution> {
        use crate::engine::Distribution;
        let mut out = Vec::new();
        for (s, side) in ["a", "b"].iter().enumerate() {
            for (metric, counts) in [
                ("eliminated", &h.eliminated[s]),
                ("routed", &h.routed[s]),
                ("disrupted", &h.disrupted[s]),
                ("leaders_lost", &h.leaders_lost[s]),
            ] {
                out.push(Distribution::new(&format!("{metric}_{side}"), counts, None));
            }
        }
        for (round, by_side) in h.lost_by_round.iter().enumerate() {
            for (s, side) in ["a", "b"].iter().enumerate() {
                out.push(Distribution::new(
                    &format!("lost_{side}_after_round_{}", round + 1),
                    &by_side[s],
                    None,
                ));
            }
        }
        // Battles last at least one round.
        out.push(Distribution {
            metric: "rounds".into(),
            first: 1,
            counts: h.rounds[1..].to_vec(),
            exact: None,
        });
        // Rounds fought by the battles of each result: a share of the battles, so each
        // one's probabilities add up to P(that result) and its mean is the mean length
        // of such battles.
        for (i, label) in RESULTS.iter().enumerate() {
            out.push(Distribution {
                metric: format!("rounds_{}", label.replace(' ', "_").to_lowercase()),
                first: 1,
                counts: h.result_by_rounds[1..].iter().map(|r| r[i]).collect(),
                exact: None,
            });
        }
        out
    }

    /// Trials counted: every battle ends with one result.
    fn trials_counted(&self, _run: usize, counts: &Self::Counts) -> u128 {
        crate::sim::total(&counts.result)
    }

    fn rules(&self) -> serde_json::Value {
        json!(format!(
            "{:?}",
            self.runs
                .iter()
                .map(|r| (&r.group, &r.label, r.combat.battle()))
                .collect::<Vec<_>>()
        ))
    }
}

/// The extra axes of a frontier plan: which sensitivity group a run belongs to, and its
/// setting within the group ("as written" for the battle in the file).
pub const SENSITIVITY_AXES: [&str; 2] = ["sensitivity", "setting"];

impl FrontierRun {
    /// The run's values on [`SENSITIVITY_AXES`].
    pub fn coordinates(&self) -> Vec<AxisValue> {
        vec![
            AxisValue::Text(self.group.clone()),
            AxisValue::Text(self.label.clone()),
        ]
    }
}

pub const RESULTS: [&str; 3] = ["A victory", "draw", "B victory"];
