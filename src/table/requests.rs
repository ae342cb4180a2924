//! What `battlelab table …` asks for, as plain values, validated here: the binary only
//! copies its flags into these and prints what comes back.
//!
//! Why this module exists: a table command's checks are rules knowledge (which odds
//! columns the naval table has, that only a minor state's navy depends on a port, that a
//! ratio line doubles only on the side with more units), so they belong in the library
//! beside the tables, where tests and other front ends reach them too. Each `prepare`
//! returns everything the table needs — the compiled rules, the echoed parameters and the
//! title — or a [`TableError`] naming the flag and what is allowed.

use std::path::Path;

use serde_json::{json, Value};

use super::{signed, D6Request, FrontierStep, TableError};
use crate::systems::field::FieldStudy;
use battlelab_core::rules::RulesError;
use battlelab_core::systems::d6_tables::lookup::{self as d6table, CompiledD6Table, D6Table};
use battlelab_core::systems::field::battle::{FieldCombat, FieldRules, OddsColumn};
use battlelab_core::systems::frontier::rolls::{
    FireRoll, MoveRoll, RecoveryRoll, Terrain, UnitType,
};
use battlelab_core::systems::melee::engagement::{
    BreakDice, Engagement, Facing, MeleeCombat, UnitProfile,
};
use battlelab_core::systems::ratio::battle::{
    self as ratio, MinScore, Objective, RatioBattle, RatioCombat, ReservePolicy, Unit,
};
use battlelab_core::systems::setup::map::StateKind;

/// `--trials` and `--seed`, as every table takes them.
#[derive(Clone, Copy, Debug)]
pub struct Sampling {
    pub trials: Option<u64>,
    pub seed: u64,
}

impl Sampling {
    /// `params` with the seed added when the table is also simulated.
    fn echo(&self, mut params: Value) -> Value {
        if self.trials.is_some() {
            params["seed"] = json!(self.seed);
        }
        params
    }
}

fn invalid(option: impl Into<String>, message: impl Into<String>) -> TableError {
    TableError::Invalid {
        option: option.into(),
        message: message.into(),
    }
}

/// A rules error of a single roll, as the flag it came from.
fn flag_error(e: RulesError) -> TableError {
    invalid(format!("--{}", e.field), e.message)
}

/// The CRT of the printed rules, or of a variant of an analysis file (`--rules FILE
/// [--variant NAME]`, the first variant when none is named).
pub fn crt_combat(rules: Option<&Path>, variant: Option<&str>) -> Result<FieldCombat, TableError> {
    let rules = match rules {
        None => FieldRules::printed(),
        Some(file) => {
            let analysis = FieldStudy::load(file)?;
            let chosen = match variant {
                None => &analysis.variants[0],
                Some(name) => analysis
                    .variants
                    .iter()
                    .find(|v| v.name == name)
                    .ok_or_else(|| TableError::UnknownVariant {
                        given: name.to_string(),
                        allowed: analysis
                            .variants
                            .iter()
                            .map(|v| v.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })?,
            };
            chosen.rules.clone()
        }
    };
    FieldCombat::new(rules).map_err(|e| invalid("--rules", format!("{}: {}", e.field, e.message)))
}

/// One roll on a d6 table of the strategic game, with the named DRMs as flags.
#[derive(Clone, Debug)]
pub enum D6Query {
    Attrition {
        sp: u32,
        drm: i32,
        major_only: bool,
        home: bool,
        unsupplied: bool,
        winter: bool,
        swamp: bool,
        /// \[option\] a hex under 3 SP rolls on the 3–5 column (else it takes no attrition).
        small_stack_column: bool,
    },
    March {
        extra: u32,
        drm: i32,
        guards: bool,
        major: bool,
        unsupplied: bool,
        winter: bool,
        swamp: bool,
    },
    Naval {
        odds: String,
        drm: i32,
    },
    Pursuit {
        coastal: bool,
    },
    Blockade,
    Transport,
    Storm,
}

impl D6Query {
    /// The compiled printed table and what to roll on it.
    pub fn prepare(&self, sampling: Sampling) -> Result<(CompiledD6Table, D6Request), TableError> {
        let flag = |on: bool, drm: i32| if on { drm } else { 0 };
        let (name, column, drm, params, title) = match self {
            D6Query::Attrition {
                sp,
                drm,
                major_only,
                home,
                unsupplied,
                winter,
                swamp,
                small_stack_column,
            } => {
                let drm = drm
                    + flag(*major_only, -1)
                    + flag(*home, -1)
                    + flag(*unsupplied, 1)
                    + flag(*winter, 1)
                    + flag(*swamp, 1);
                let column = d6table::attrition_column(*sp).or(small_stack_column.then_some(0));
                let table = D6Table::attrition();
                let label = column.map_or("none: no attrition under 3 SP".to_string(), |c| {
                    table.column_labels[c].clone()
                });
                let small = if *small_stack_column {
                    "column"
                } else {
                    "none"
                };
                let params = json!({"sp": sp, "column": label, "drm": drm, "small_stack": small});
                let title = format!("Attrition — {sp} SP (column {label}), DRM {}", signed(drm));
                ("attrition", column, drm, params, title)
            }
            D6Query::March {
                extra,
                drm,
                guards,
                major,
                unsupplied,
                winter,
                swamp,
            } => {
                if !(1..=3).contains(extra) {
                    return Err(invalid(
                        format!("--extra {extra}"),
                        "extra MP asked for must be 1, 2 or 3",
                    ));
                }
                let drm = drm
                    + flag(*guards, -1)
                    + flag(*major, -1)
                    + flag(*unsupplied, 1)
                    + flag(*winter, 1)
                    + flag(*swamp, 1);
                let params = json!({"extra": extra, "drm": drm});
                let title = format!("Forced march — {extra} extra MP asked, DRM {}", signed(drm));
                ("march", Some(*extra as usize - 1), drm, params, title)
            }
            D6Query::Naval { odds, drm } => {
                let table = D6Table::naval();
                let column = OddsColumn::parse_ratio(odds)
                    .and_then(|(l, s)| table.column_index(&format!("{l}-{s}")))
                    .ok_or_else(|| {
                        invalid(
                            format!("--odds {odds}"),
                            format!(
                                "not an odds column of the naval table; allowed: {} (odds above 2-1 use 2-1)",
                                table.column_labels.join(", ")
                            ),
                        )
                    })?;
                let label = &table.column_labels[column];
                let params = json!({"odds": label, "drm": drm});
                let title = format!("Naval combat — odds {label}, DRM {}", signed(*drm));
                ("naval", Some(column), *drm, params, title)
            }
            D6Query::Pursuit { coastal } => {
                let drm = flag(*coastal, -1);
                let params = json!({"coastal": coastal, "drm": drm});
                let title = format!(
                    "Pursuit{}",
                    if *coastal {
                        " — pursuers in a coastal hex or port (−1)"
                    } else {
                        ""
                    }
                );
                ("pursuit", Some(0), drm, params, title)
            }
            D6Query::Blockade => ("blockade", Some(0), 0, json!({}), "Blockade".into()),
            D6Query::Transport => ("transport", Some(0), 0, json!({}), "Naval transport".into()),
            D6Query::Storm => ("storm", Some(0), 0, json!({}), "Storm / ice".into()),
        };
        let table = CompiledD6Table::new(D6Table::printed(name).expect("a printed table"))
            .expect("the printed tables are valid");
        let request = D6Request {
            column,
            drm,
            trials: sampling.trials,
            seed: sampling.seed,
            params: sampling.echo(params),
            title,
        };
        Ok((table, request))
    }
}

/// `table setup`: a state's kind, and whether a minor state has a port.
pub fn setup_state(major: bool, no_port: bool) -> Result<StateKind, TableError> {
    if major && no_port {
        return Err(invalid(
            "--no-port",
            "only a minor state's naval forces depend on a port (the * entries)",
        ));
    }
    Ok(if major {
        StateKind::Major
    } else {
        StateKind::Minor
    })
}

/// `table ratio`: a battle from a quick line.
#[derive(Clone, Debug)]
pub struct RatioQuery {
    pub line: String,
    pub reserve_a: u32,
    pub reserve_b: u32,
    pub policy: String,
    pub objective: String,
    pub mod_a: i32,
    pub mod_b: i32,
    pub min_score: String,
}

/// A ratio battle ready to tabulate: the battle, and for the side with reserves the same
/// battle under every policy.
pub struct RatioPrepared {
    pub combat: RatioCombat,
    /// The side with reserves and the battle under every other policy (its own is
    /// `combat`), in [`ReservePolicy::ALL`] order.
    pub policies: Option<(usize, Vec<(ReservePolicy, RatioCombat)>)>,
    pub params: Value,
    pub title: String,
}

impl RatioQuery {
    pub fn prepare(&self, sampling: Sampling) -> Result<RatioPrepared, TableError> {
        let (line, counts) = ratio::parse_line(&self.line)
            .map_err(|m| invalid(format!("--line {}", self.line), m))?;
        let policy = ReservePolicy::parse(&self.policy).ok_or_else(|| {
            invalid(
                format!("--policy {}", self.policy),
                format!(
                    "unknown reserve policy; allowed: {}",
                    ReservePolicy::NAMES.join(", ")
                ),
            )
        })?;
        let objective = Objective::parse(&self.objective).ok_or_else(|| {
            invalid(
                format!("--objective {}", self.objective),
                "allowed: cp (expected casualty-point difference), win (P(win))",
            )
        })?;
        let min_score = match self.min_score.as_str() {
            "none" => MinScore::None,
            text => MinScore::Floor(
                text.parse()
                    .ok()
                    .filter(|m| (1..=6).contains(m))
                    .ok_or_else(|| {
                        invalid(
                            format!("--min-score {text}"),
                            "the floor is a whole number 1 to 6, or none",
                        )
                    })?,
            ),
        };
        for (flag, m) in [("--mod-a", self.mod_a), ("--mod-b", self.mod_b)] {
            if !(-6..=6).contains(&m) {
                return Err(invalid(
                    format!("{flag} {m}"),
                    "a modifier must be -6 to +6",
                ));
            }
        }
        let reserves = [self.reserve_a as usize, self.reserve_b as usize];
        if reserves.iter().any(|&r| r > ratio::MAX_RESERVES) {
            return Err(invalid(
                "--reserve-a/--reserve-b",
                format!("at most {} reserves", ratio::MAX_RESERVES),
            ));
        }
        let mods = [self.mod_a, self.mod_b];
        let units = [0, 1].map(|s| {
            (0..counts[s] + reserves[s])
                .map(|i| Unit {
                    name: format!("{}{}", ["A", "B"][s], i + 1),
                    modifier: mods[s],
                })
                .collect::<Vec<_>>()
        });
        let battle = RatioBattle {
            units,
            line,
            reserves: [0, 1].map(|s| (counts[s]..counts[s] + reserves[s]).collect()),
            policy: [policy; 2],
            objective,
            min_score,
            skirmish: false,
            escalation: None,
        };
        let option_of = |field: &str| {
            if field.starts_with("reserve") {
                "--reserve-a/--reserve-b".to_string()
            } else if field.ends_with("policy") {
                format!("--policy {}", self.policy)
            } else {
                format!("--line {}", self.line)
            }
        };
        let compile = |b: RatioBattle| {
            RatioCombat::new(b).map_err(|e| invalid(option_of(&e.field), e.message))
        };
        let combat = compile(battle.clone())?;
        let reserve_side = (0..2).find(|&s| reserves[s] > 0);
        let policies = match reserve_side {
            Some(side) => Some((
                side,
                ReservePolicy::ALL
                    .into_iter()
                    .filter(|&p| p != battle.policy[side])
                    .map(|p| {
                        let mut b = battle.clone();
                        b.policy[side] = p;
                        Ok((p, compile(b)?))
                    })
                    .collect::<Result<Vec<_>, TableError>>()?,
            )),
            None => None,
        };
        let params = sampling.echo(json!({
            "line": self.line,
            "reserve_a": self.reserve_a,
            "reserve_b": self.reserve_b,
            "policy": policy.name(),
            "objective": objective.name(),
            "mod_a": self.mod_a,
            "mod_b": self.mod_b,
            "min_score": min_score.to_string(),
        }));
        let title = format!(
            "Ratio battle — line {}{}, A {} / B {} on every die, min score {}",
            self.line,
            reserve_side.map_or(String::new(), |s| format!(
                ", {} reserve(s) for {} ({})",
                reserves[s],
                ["A", "B"][s],
                policy.name()
            )),
            signed(self.mod_a),
            signed(self.mod_b),
            min_score
        );
        Ok(RatioPrepared {
            combat,
            policies,
            params,
            title,
        })
    }
}

/// `table melee`: an engagement from quick profiles.
#[derive(Clone, Debug)]
pub struct MeleeQuery {
    pub a: String,
    pub b: Option<String>,
    pub b_flank: Vec<String>,
    pub b_rear: Option<String>,
    pub break_dice: String,
    pub round_limit: u32,
}

impl MeleeQuery {
    /// The compiled engagement, the echoed parameters and the title.
    pub fn prepare(&self, sampling: Sampling) -> Result<(MeleeCombat, Value, String), TableError> {
        let parse = |flag: &str, text: &str| {
            UnitProfile::parse_quick(text).map_err(|m| invalid(format!("{flag} \"{text}\""), m))
        };
        let a = parse("--a", &self.a)?;
        let mut b = Vec::new();
        let mut flags = Vec::new();
        if let Some(text) = &self.b {
            b.push((Facing::Front, parse("--b", text)?));
            flags.push(format!("--b \"{text}\""));
        }
        for text in &self.b_flank {
            b.push((Facing::Flank, parse("--b-flank", text)?));
            flags.push(format!("--b-flank \"{text}\""));
        }
        if let Some(text) = &self.b_rear {
            b.push((Facing::Rear, parse("--b-rear", text)?));
            flags.push(format!("--b-rear \"{text}\""));
        }
        if b.is_empty() {
            return Err(invalid(
                "--b",
                "side B has no unit: give --b (front), --b-flank or --b-rear",
            ));
        }
        let break_dice = BreakDice::parse(&self.break_dice).ok_or_else(|| {
            invalid(
                format!("--break-dice {}", self.break_dice),
                format!("allowed: {}", BreakDice::NAMES),
            )
        })?;
        let engagement = Engagement {
            a,
            b,
            break_dice,
            round_limit: self.round_limit,
        };
        let combat = MeleeCombat::new(engagement.clone()).map_err(|e| {
            let option = match e.field.split('.').next() {
                Some("a") => format!("--a \"{}\"", self.a),
                Some("round_limit") => format!("--round-limit {}", self.round_limit),
                _ if flags.len() == 1 => flags[0].clone(),
                _ => "--b/--b-flank/--b-rear".to_string(),
            };
            let hint = if e.field.ends_with(".frontage") {
                " (frontage is 5 unless given)"
            } else {
                ""
            };
            invalid(option, format!("{}{hint} ({})", e.message, e.field))
        })?;
        let params = sampling.echo(json!({
            "a": engagement.a.quick(),
            "b": engagement.b.iter().map(|(f, u)| json!({"facing": f.name(), "unit": u.quick()})).collect::<Vec<_>>(),
            "break_dice": break_dice.name(),
            "round_limit": self.round_limit,
        }));
        let title = format!(
            "Melee — A [{}] engaged by {}; break test {}, up to {} phases",
            engagement.a.quick(),
            engagement
                .b
                .iter()
                .map(|(f, u)| format!("{} [{}]", f.name(), u.quick()))
                .collect::<Vec<_>>()
                .join(", "),
            break_dice.name(),
            self.round_limit
        );
        Ok((combat, params, title))
    }
}

fn frontier_unit(text: &str) -> Result<UnitType, TableError> {
    UnitType::parse(text).ok_or_else(|| {
        invalid(
            format!("--type {text}"),
            format!("unknown unit type; allowed: {}", UnitType::NAMES),
        )
    })
}

fn frontier_terrain(text: &str) -> Result<Terrain, TableError> {
    Terrain::parse(text).ok_or_else(|| {
        invalid(
            format!("--terrain {text}"),
            format!("unknown terrain; allowed: {}", Terrain::NAMES),
        )
    })
}

/// One single roll of a frontier quick battle.
#[derive(Clone, Debug)]
pub enum FrontierQuery {
    Fire {
        unit: String,
        terrain: String,
        cf: u32,
        severe_weather: bool,
    },
    Move {
        level: u32,
        unit: String,
        terrain: String,
        leader: u32,
        severe_weather: bool,
        with_regular: bool,
        enemy_atop: bool,
        surprise: bool,
    },
    Recovery {
        level: u32,
        leader: u32,
    },
}

impl FrontierQuery {
    /// The validated roll, the echoed parameters and the title.
    pub fn prepare(&self, sampling: Sampling) -> Result<(FrontierStep, Value, String), TableError> {
        let (step, params, title) = match self {
            FrontierQuery::Fire {
                unit,
                terrain,
                cf,
                severe_weather,
            } => {
                let roll = FireRoll {
                    unit: frontier_unit(unit)?,
                    cf: *cf,
                    terrain: frontier_terrain(terrain)?,
                    severe_weather: *severe_weather,
                };
                roll.validate().map_err(flag_error)?;
                let title = format!(
                    "Frontier fire combat (19.2.1) — {} with fire CF {} in {} terrain{}",
                    roll.unit.name(),
                    roll.cf,
                    roll.terrain.name(),
                    if roll.severe_weather {
                        ", severe weather"
                    } else {
                        ""
                    }
                );
                let params = json!({"type": roll.unit.name(), "cf": roll.cf, "terrain": roll.terrain.name(), "severe_weather": roll.severe_weather});
                (FrontierStep::Fire(roll), params, title)
            }
            FrontierQuery::Move {
                level,
                unit,
                terrain,
                leader,
                severe_weather,
                with_regular,
                enemy_atop,
                surprise,
            } => {
                let roll = MoveRoll {
                    level: *level,
                    unit: frontier_unit(unit)?,
                    terrain: frontier_terrain(terrain)?,
                    leader: *leader,
                    severe_weather: *severe_weather,
                    with_regular: *with_regular,
                    enemy_atop: *enemy_atop,
                    surprise_bonus: *surprise,
                };
                // Validated before the DRM is summed, so an out-of-range rating never
                // reaches it.
                roll.validate().map_err(flag_error)?;
                let title = format!(
                    "Frontier movement (19.2.2) — {} in {} terrain, commitment level {}, DRM {}",
                    roll.unit.name(),
                    roll.terrain.name(),
                    roll.level,
                    signed(roll.drm())
                );
                let params = json!({"type": roll.unit.name(), "terrain": roll.terrain.name(), "level": roll.level, "leader": roll.leader, "severe_weather": roll.severe_weather, "with_regular": roll.with_regular, "enemy_atop": roll.enemy_atop, "surprise": roll.surprise_bonus, "drm": roll.drm()});
                (FrontierStep::Move(roll), params, title)
            }
            FrontierQuery::Recovery { level, leader } => {
                let roll = RecoveryRoll {
                    level: *level,
                    leader: *leader,
                };
                roll.validate().map_err(flag_error)?;
                let title = format!(
                    "Frontier recovery (19.2.4) — commitment level {}, leader {}",
                    roll.level,
                    if roll.leader == 0 {
                        "none".to_string()
                    } else {
                        roll.leader.to_string()
                    }
                );
                let params = json!({"level": roll.level, "leader": roll.leader});
                (FrontierStep::Recovery(roll), params, title)
            }
        };
        Ok((step, sampling.echo(params), title))
    }
}
