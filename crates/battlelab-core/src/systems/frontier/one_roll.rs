//! The frontier system's one-roll tables (`battlelab table frontier-fire | frontier-move |
//! frontier-recovery`), declared beside the frontier system.
//!
//! Why this module exists: a quick battle's battles are simulated only, but its single
//! rolls are exact — fire (19.2.1), movement (19.2.2) and recovery (19.2.4) are each one
//! d6 against a target — so a designer can read each one, and its rulebook grid of every
//! other input, before studying whole battles. The flags use the analysis file's words
//! (`type`, `terrain`, `level`, `leader`, `severe_weather`).

use serde_json::json;

use crate::dice::DiceStream;
use crate::exact::{ExactDistribution, Fraction};
use crate::one_roll::{
    invalid, outcome_row, signed, Checked, FaceRoll, OneRollTable, OutcomeRow, Param, ParamKind,
    ParamValues, PreparedTable, Sampling, TableError, TableReport, TableSection, PER_ROLL,
};
use crate::rules::RulesError;
use crate::systems::frontier::rolls::{
    FireRoll, MoveRoll, RecoveryRoll, Terrain, UnitType, MAX_FIRE_CF, MAX_LEADER, MAX_LEVEL,
};

/// Every one-roll table of the frontier system, in the order `table --help` lists them.
pub const TABLES: &[OneRollTable] = &[FIRE, MOVE, RECOVERY];

const UNIT_HELP_REQUIRED: &str = "Unit type: warrior, regular, militia or rifle";

const TERRAIN_HELP: &str = "Terrain: rough, wilderness or settled";

const LEVEL: Param = Param {
    name: "level",
    flag: "level",
    value_name: "LEVEL",
    kind: ParamKind::Int {
        min: 1,
        max: MAX_LEVEL as i64,
        checked: Checked::ByTable,
    },
    required: true,
    help: "The side's commitment/mobilisation level",
    ..Param::BASE
};

const LEADER: Param = Param {
    name: "leader",
    flag: "leader",
    value_name: "LEADER",
    kind: ParamKind::Int {
        min: 0,
        max: MAX_LEADER as i64,
        checked: Checked::ByTable,
    },
    default: Some("0"),
    help: "Command rating of a leader stacked with the unit (0 = none)",
    ..Param::BASE
};

const fn switch(name: &'static str, flag: &'static str, help: &'static str) -> Param {
    Param {
        name,
        flag,
        kind: ParamKind::Flag,
        help,
        ..Param::BASE
    }
}

const FIRE: OneRollTable = OneRollTable {
    name: "frontier-fire",
    about: "One fire-combat roll of a frontier quick battle (rule 19.2.1, docs/systems/frontier.md): P(hit), and the rulebook table for every unit type × terrain × weather at that CF",
    after_help: None,
    trial_unit: "rolls",
    params: &[
        Param {
            name: "type",
            flag: "type",
            value_name: "TYPE",
            kind: ParamKind::Text,
            required: true,
            help: UNIT_HELP_REQUIRED,
            ..Param::BASE
        },
        Param {
            name: "terrain",
            flag: "terrain",
            value_name: "TERRAIN",
            kind: ParamKind::Text,
            required: true,
            help: TERRAIN_HELP,
            ..Param::BASE
        },
        Param {
            name: "cf",
            flag: "cf",
            value_name: "CF",
            kind: ParamKind::Int {
                min: 1,
                max: MAX_FIRE_CF as i64,
                checked: Checked::ByTable,
            },
            required: true,
            help: "The unit's printed fire CF",
            ..Param::BASE
        },
        switch(
            "severe_weather",
            "severe-weather",
            "Severe weather (the * DR modifiers do not apply)",
        ),
    ],
    example: &[("type", "regular"), ("terrain", "settled"), ("cf", "3")],
    prepare: fire,
};

const MOVE: OneRollTable = OneRollTable {
    name: "frontier-move",
    about: "One movement roll of a frontier quick battle (rule 19.2.2): P(the stack moves), and the table for every unit type × terrain × weather × leader rating",
    after_help: None,
    trial_unit: "rolls",
    params: &[
        LEVEL,
        Param {
            name: "type",
            flag: "type",
            value_name: "TYPE",
            kind: ParamKind::Text,
            default: Some("militia"),
            help: UNIT_HELP_REQUIRED,
            ..Param::BASE
        },
        Param {
            name: "terrain",
            flag: "terrain",
            value_name: "TERRAIN",
            kind: ParamKind::Text,
            default: Some("wilderness"),
            help: TERRAIN_HELP,
            ..Param::BASE
        },
        LEADER,
        switch("severe_weather", "severe-weather", "Severe weather (+1)"),
        switch(
            "with_regular",
            "with-regular",
            "Stacked with a regular unit (settled terrain: −1 for it too)",
        ),
        switch(
            "enemy_atop",
            "enemy-atop",
            "Enemy units have moved atop this stack (+1)",
        ),
        switch(
            "surprise",
            "surprise",
            "First round, the side that won surprise, stacked with a leader (−1)",
        ),
    ],
    example: &[
        ("level", "3"),
        ("type", "militia"),
        ("terrain", "rough"),
        ("leader", "1"),
        ("severe_weather", "true"),
    ],
    prepare: movement,
};

const RECOVERY: OneRollTable = OneRollTable {
    name: "frontier-recovery",
    about: "One recovery roll of a frontier quick battle (rule 19.2.4): P(the unit recovers a level), and the table for every commitment level × leader rating",
    after_help: None,
    trial_unit: "rolls",
    params: &[LEVEL, LEADER],
    example: &[("level", "2"), ("leader", "1")],
    prepare: recovery,
};

/// A rules error of a single roll, as the flag it came from.
fn flag_error(e: RulesError) -> TableError {
    invalid(format!("--{}", e.field), e.message)
}

fn unit_type(values: &ParamValues) -> Result<UnitType, TableError> {
    let text = values.need_text("type")?;
    UnitType::parse(text).ok_or_else(|| {
        invalid(
            format!("--type {text}"),
            format!("unknown unit type; allowed: {}", UnitType::NAMES),
        )
    })
}

fn terrain(values: &ParamValues) -> Result<Terrain, TableError> {
    let text = values.need_text("terrain")?;
    Terrain::parse(text).ok_or_else(|| {
        invalid(
            format!("--terrain {text}"),
            format!("unknown terrain; allowed: {}", Terrain::NAMES),
        )
    })
}

/// A number read as any `u32` (the rolls' own validators hold it to its range).
fn number(values: &ParamValues, name: &str) -> Result<u32, TableError> {
    Ok(values.need_int(name)? as u32)
}

const WEATHERS: [(bool, &str); 2] = [(false, "fair weather"), (true, "severe weather")];

fn fire(values: &ParamValues, sampling: Sampling) -> Result<Box<dyn PreparedTable>, TableError> {
    let roll = FireRoll {
        unit: unit_type(values)?,
        cf: number(values, "cf")?,
        terrain: terrain(values)?,
        severe_weather: values.flag("severe_weather"),
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
    let sections = WEATHERS
        .iter()
        .map(|&(severe, weather)| TableSection {
            title: format!("P(hit), printed fire CF {}, {weather}", roll.cf),
            partition: false,
            exact: true,
            rows: every_unit_and_terrain(|unit, terrain| {
                FireRoll {
                    unit,
                    terrain,
                    severe_weather: severe,
                    ..roll
                }
                .hitting_faces()
            }),
        })
        .collect();
    Ok(one_die(
        "frontier-fire",
        ["hit", "miss"],
        |face| roll.hits(face),
        title,
        params,
        sections,
        sampling,
    ))
}

fn movement(
    values: &ParamValues,
    sampling: Sampling,
) -> Result<Box<dyn PreparedTable>, TableError> {
    let roll = MoveRoll {
        level: number(values, "level")?,
        unit: unit_type(values)?,
        terrain: terrain(values)?,
        leader: number(values, "leader")?,
        severe_weather: values.flag("severe_weather"),
        with_regular: values.flag("with_regular"),
        enemy_atop: values.flag("enemy_atop"),
        surprise_bonus: values.flag("surprise"),
    };
    // Validated before the DRM is summed, so an out-of-range rating never reaches it.
    roll.validate().map_err(flag_error)?;
    let title = format!(
        "Frontier movement (19.2.2) — {} in {} terrain, commitment level {}, DRM {}",
        roll.unit.name(),
        roll.terrain.name(),
        roll.level,
        signed(roll.drm())
    );
    let params = json!({"type": roll.unit.name(), "terrain": roll.terrain.name(), "level": roll.level, "leader": roll.leader, "severe_weather": roll.severe_weather, "with_regular": roll.with_regular, "enemy_atop": roll.enemy_atop, "surprise": roll.surprise_bonus, "drm": roll.drm()});
    let mut sections = Vec::new();
    for (severe, weather) in WEATHERS {
        for leader in 0..=MAX_LEADER {
            if roll.surprise_bonus && leader == 0 {
                continue;
            }
            let leader_note = if leader == 0 {
                "no leader".to_string()
            } else {
                format!("leader {leader}")
            };
            sections.push(TableSection {
                title: format!("P(move), level {}, {leader_note}, {weather}", roll.level),
                partition: false,
                exact: true,
                rows: every_unit_and_terrain(|unit, terrain| {
                    MoveRoll {
                        unit,
                        terrain,
                        leader,
                        severe_weather: severe,
                        ..roll
                    }
                    .moving_faces()
                }),
            });
        }
    }
    Ok(one_die(
        "frontier-move",
        ["moves", "stays"],
        |face| roll.moves(face),
        title,
        params,
        sections,
        sampling,
    ))
}

fn recovery(
    values: &ParamValues,
    sampling: Sampling,
) -> Result<Box<dyn PreparedTable>, TableError> {
    let roll = RecoveryRoll {
        level: number(values, "level")?,
        leader: number(values, "leader")?,
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
    let rows = (1..=MAX_LEVEL)
        .flat_map(|level| (0..=MAX_LEADER).map(move |leader| (level, leader)))
        .map(|(level, leader)| {
            faces_row(
                format!("level {level}, leader {leader}"),
                RecoveryRoll { level, leader }.recovering_faces(),
            )
        })
        .collect();
    let sections = vec![TableSection {
        title: "P(recover), every commitment level × leader rating (0 = no leader)".into(),
        partition: false,
        exact: true,
        rows,
    }];
    Ok(one_die(
        "frontier-recovery",
        ["recovers one level", "does not recover"],
        |face| roll.recovers(face),
        title,
        params,
        sections,
        sampling,
    ))
}

/// An exact row of a frontier rulebook grid: `faces` of 6 succeed.
fn faces_row(label: String, faces: u32) -> OutcomeRow {
    let f = Fraction::new(u128::from(faces), 6);
    outcome_row(label, Some(f.to_f64()), Some(f.to_string()), None)
}

/// A grid's rows, one per unit type × terrain: the faces of 6 that succeed.
fn every_unit_and_terrain(faces: impl Fn(UnitType, Terrain) -> u32) -> Vec<OutcomeRow> {
    UnitType::ALL
        .iter()
        .flat_map(|&unit| Terrain::ALL.iter().map(move |&terrain| (unit, terrain)))
        .map(|(unit, terrain)| {
            faces_row(
                format!("{} in {}", unit.name(), terrain.name()),
                faces(unit, terrain),
            )
        })
        .collect()
}

/// One d6 that succeeds on the faces `succeeds` (1–6) accepts: success, then failure,
/// exactly and rolled one die a roll.
fn one_die(
    name: &'static str,
    labels: [&str; 2],
    succeeds: impl Fn(u32) -> bool,
    title: String,
    params: serde_json::Value,
    sections: Vec<TableSection>,
    sampling: Sampling,
) -> Box<dyn PreparedTable> {
    let face_ok: [bool; 6] = std::array::from_fn(|i| succeeds(i as u32 + 1));
    let exact = ExactDistribution::enumerate(6, 2, |face| usize::from(!face_ok[face as usize]));
    let kernel = move |dice: &mut DiceStream, n: u64, counts: &mut [u64]| {
        for _ in 0..n {
            counts[usize::from(!face_ok[dice.below(6) as usize])] += 1;
        }
    };
    Box::new(FaceRoll {
        page: TableReport {
            system: name.to_string(),
            title,
            params,
            trials: None,
            outcomes: Vec::new(),
            expectations_heading: PER_ROLL.to_string(),
            expectations: Vec::new(),
            sections,
        },
        unit: "rolls",
        outcomes: labels.map(String::from).to_vec(),
        exact,
        kernel,
        sampling,
    })
}
