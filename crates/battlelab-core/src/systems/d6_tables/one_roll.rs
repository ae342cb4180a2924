//! The d6 tables' one-roll tables (`battlelab table attrition | march | naval | blockade |
//! pursuit | transport | storm`), declared beside the d6 tables' system.
//!
//! Why this module exists: each table of the strategic game is one d6 roll on a printed
//! column; its declaration names its flags in the analysis file's words (`sp`, `drm`,
//! `extra`, `odds`, `small_stack`) and the named DRMs a designer would otherwise add up by
//! hand. Rolled with the kernel the d6 system's runs use (`d6table::roll_many`), so `table
//! attrition --trials N --seed S` counts what `run` counts for the same roll and seed.

use serde_json::{json, Value};

use crate::dice::DiceStream;
use crate::exact::ExactDistribution;
use crate::limits::{MAX_DRM_ARG, MAX_SP};
use crate::one_roll::{
    invalid, signed, Checked, ExpectationRow, FaceRoll, OneRollTable, Param, ParamKind,
    ParamValues, PreparedTable, Sampling, TableError, TableReport, PER_ROLL,
};
use crate::rules::parse_odds_ratio;
use crate::systems::d6_tables::lookup::{self as d6table, CompiledD6Table, D6Table};

/// Every one-roll table of the d6 tables' system, in the order `table --help` lists them.
pub const TABLES: &[OneRollTable] = &[ATTRITION, MARCH, NAVAL, BLOCKADE, PURSUIT, TRANSPORT, STORM];

/// A switch that adds a named DRM.
const fn switch(name: &'static str, flag: &'static str, help: &'static str) -> Param {
    Param {
        name,
        flag,
        kind: ParamKind::Flag,
        help,
        ..Param::BASE
    }
}

/// `--drm`: further DRM by number.
const fn drm(help: &'static str) -> Param {
    Param {
        name: "drm",
        flag: "drm",
        value_name: "DRM",
        kind: ParamKind::Int {
            min: -MAX_DRM_ARG,
            max: MAX_DRM_ARG,
            checked: Checked::OnRead,
        },
        default: Some("0"),
        help,
        ..Param::BASE
    }
}

const ATTRITION: OneRollTable = OneRollTable {
    name: "attrition",
    about: "One attrition roll (docs/systems/tables.md): SP eliminated, `*` = one of them cavalry",
    after_help: None,
    trial_unit: "rolls",
    params: &[
        Param {
            name: "sp",
            flag: "sp",
            value_name: "SP",
            kind: ParamKind::Int {
                min: 1,
                max: MAX_SP as i64,
                checked: Checked::OnRead,
            },
            required: true,
            help: "Total SP in the hex (picks the column: 3-5, 6-10, 11-15, 16-20, 21+)",
            ..Param::BASE
        },
        drm("Further DRM by number, added to the named ones (e.g. +1, -2)"),
        switch(
            "major_only",
            "major-only",
            "−1: only Major-state units in the hex",
        ),
        switch("home", "home", "−1: all units in their home country"),
        switch("unsupplied", "unsupplied", "+1: unsupplied"),
        switch("winter", "winter", "+1: winter turn"),
        switch("swamp", "swamp", "+1: in a swamp hex"),
        Param {
            name: "small_stack",
            flag: "small-stack",
            value_name: "SMALL_STACK",
            kind: ParamKind::Choice(&[
                ("none", "A hex with fewer than 3 SP takes no attrition"),
                ("column", "Such a hex rolls on the 3–5 column"),
            ]),
            default: Some("none"),
            help: "[option] a hex under 3 SP: no attrition, or the 3–5 column",
            ..Param::BASE
        },
    ],
    example: &[("sp", "14"), ("unsupplied", "true"), ("winter", "true")],
    prepare: attrition,
};

const MARCH: OneRollTable = OneRollTable {
    name: "march",
    about:
        "One forced-march roll (docs/systems/tables.md): extra MP gained, `*` = one SP eliminated",
    after_help: None,
    trial_unit: "rolls",
    params: &[
        Param {
            name: "extra",
            flag: "extra",
            value_name: "EXTRA",
            kind: ParamKind::Int {
                min: 1,
                max: 3,
                checked: Checked::ByTable,
            },
            required: true,
            help: "Extra MP asked for",
            ..Param::BASE
        },
        drm("Further DRM by number, added to the named ones"),
        switch("guards", "guards", "−1: all Guards"),
        switch("major", "major", "−1: all Major state"),
        switch("unsupplied", "unsupplied", "+1: unsupplied units"),
        switch("winter", "winter", "+1: winter turn"),
        switch("swamp", "swamp", "+1: any swamp hexes"),
    ],
    example: &[("extra", "2"), ("guards", "true")],
    prepare: march,
};

const NAVAL: OneRollTable = OneRollTable {
    name: "naval",
    about: "One naval combat roll (docs/systems/tables.md): 2LS, LC, LR, SR, SS, SC, 2SC …",
    after_help: None,
    trial_unit: "rolls",
    params: &[
        Param {
            name: "odds",
            flag: "odds",
            value_name: "ODDS",
            kind: ParamKind::Text,
            required: true,
            help: "Odds column, larger-smaller: 1-1, 3-2 or 2-1",
            ..Param::BASE
        },
        drm("Net DRM (morale difference, leaders, scenario); the roll is clamped to −1…8"),
    ],
    example: &[("odds", "3-2"), ("drm", "-1")],
    prepare: naval,
};

const BLOCKADE: OneRollTable = OneRollTable {
    name: "blockade",
    about: "One blockade roll (docs/systems/tables.md): F* (blockader may attack), F (blockaded must attack or retreat), E (escape)",
    after_help: None,
    trial_unit: "rolls",
    params: &[],
    example: &[],
    prepare: |_, sampling| plain("blockade", "Blockade", sampling),
};

const PURSUIT: OneRollTable = OneRollTable {
    name: "pursuit",
    about: "One pursuit roll (docs/systems/tables.md): F (fail), I (intercept)",
    after_help: None,
    trial_unit: "rolls",
    params: &[switch(
        "coastal",
        "coastal",
        "−1: the pursuing units are in a coastal hex or port",
    )],
    example: &[("coastal", "true")],
    prepare: pursuit,
};

const TRANSPORT: OneRollTable = OneRollTable {
    name: "transport",
    about: "One naval transport roll (docs/systems/tables.md): C (captured), S (sunk), E (escape)",
    after_help: None,
    trial_unit: "rolls",
    params: &[],
    example: &[],
    prepare: |_, sampling| plain("transport", "Naval transport", sampling),
};

const STORM: OneRollTable = OneRollTable {
    name: "storm",
    about: "One storm/ice roll (docs/systems/tables.md): S (sunk), D (damaged), E (escape)",
    after_help: None,
    trial_unit: "rolls",
    params: &[],
    example: &[],
    prepare: |_, sampling| plain("storm", "Storm / ice", sampling),
};

/// `drm` when the switch is on, else 0.
fn named(values: &ParamValues, name: &str, drm: i32) -> i32 {
    if values.flag(name) {
        drm
    } else {
        0
    }
}

/// The DRM by number (bounded by `MAX_DRM_ARG` as it was read, so sums cannot wrap).
fn drm_of(values: &ParamValues) -> Result<i32, TableError> {
    Ok(values.need_int("drm")? as i32)
}

fn attrition(
    values: &ParamValues,
    sampling: Sampling,
) -> Result<Box<dyn PreparedTable>, TableError> {
    let sp = values.need_int("sp")? as u32;
    let drm = drm_of(values)?
        + named(values, "major_only", -1)
        + named(values, "home", -1)
        + named(values, "unsupplied", 1)
        + named(values, "winter", 1)
        + named(values, "swamp", 1);
    let small_stack_column = values.need_text("small_stack")? == "column";
    let column = d6table::attrition_column(sp).or(small_stack_column.then_some(0));
    let table = D6Table::attrition();
    let label = column.map_or("none: no attrition under 3 SP".to_string(), |c| {
        table.column_labels[c].clone()
    });
    let small = if small_stack_column { "column" } else { "none" };
    let params = json!({"sp": sp, "column": label, "drm": drm, "small_stack": small});
    let title = format!("Attrition — {sp} SP (column {label}), DRM {}", signed(drm));
    roll("attrition", column, drm, params, title, sampling)
}

fn march(values: &ParamValues, sampling: Sampling) -> Result<Box<dyn PreparedTable>, TableError> {
    let extra = values.need_int("extra")?;
    if !(1..=3).contains(&extra) {
        return Err(invalid(
            format!("--extra {extra}"),
            "extra MP asked for must be 1, 2 or 3",
        ));
    }
    let drm = drm_of(values)?
        + named(values, "guards", -1)
        + named(values, "major", -1)
        + named(values, "unsupplied", 1)
        + named(values, "winter", 1)
        + named(values, "swamp", 1);
    let params = json!({"extra": extra, "drm": drm});
    let title = format!("Forced march — {extra} extra MP asked, DRM {}", signed(drm));
    roll(
        "march",
        Some(extra as usize - 1),
        drm,
        params,
        title,
        sampling,
    )
}

fn naval(values: &ParamValues, sampling: Sampling) -> Result<Box<dyn PreparedTable>, TableError> {
    let odds = values.need_text("odds")?;
    let drm = drm_of(values)?;
    let table = D6Table::naval();
    let column = parse_odds_ratio(odds)
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
    let title = format!("Naval combat — odds {label}, DRM {}", signed(drm));
    roll("naval", Some(column), drm, params, title, sampling)
}

fn pursuit(values: &ParamValues, sampling: Sampling) -> Result<Box<dyn PreparedTable>, TableError> {
    let coastal = values.flag("coastal");
    let drm = named(values, "coastal", -1);
    let params = json!({"coastal": coastal, "drm": drm});
    let title = format!(
        "Pursuit{}",
        if coastal {
            " — pursuers in a coastal hex or port (−1)"
        } else {
            ""
        }
    );
    roll("pursuit", Some(0), drm, params, title, sampling)
}

/// A table of one column and no modifiers.
fn plain(
    name: &'static str,
    title: &str,
    sampling: Sampling,
) -> Result<Box<dyn PreparedTable>, TableError> {
    roll(name, Some(0), 0, json!({}), title.to_string(), sampling)
}

/// One roll on column `column` of the printed table `name` with `drm`: the exact
/// distribution, the expectations its printed codes carry (SP eliminated and cavalry
/// losses for attrition, MP gained and SP lost for forced march, NSP lost per side for
/// naval combat), and the d6 system's kernel. No column means the roll cannot happen (a
/// hex under 3 SP takes no attrition): the first outcome, no loss, is certain.
fn roll(
    name: &'static str,
    column: Option<usize>,
    drm: i32,
    params: Value,
    title: String,
    sampling: Sampling,
) -> Result<Box<dyn PreparedTable>, TableError> {
    let table = CompiledD6Table::new(D6Table::printed(name).expect("a printed table"))
        .expect("the printed tables are valid");
    let labels = table.outcomes().to_vec();
    let (exact, faces) = match column {
        Some(column) => (
            table.distribution(column, drm),
            Some(*table.faces(column, drm)),
        ),
        None => {
            let mut certain = vec![0u64; labels.len()];
            certain[0] = 6;
            (
                ExactDistribution {
                    counts: certain,
                    total: 6,
                },
                None,
            )
        }
    };
    let expectations = d6table::outcome_values(name, &labels)
        .into_iter()
        .map(|(what, values)| ExpectationRow::of(what, exact.expectation(|i| values[i])))
        .collect();
    // As the d6 system's runs roll (`systems::d6_tables`): eight dice a word, or nothing to
    // roll below the table.
    let kernel = move |dice: &mut DiceStream, n: u64, counts: &mut [u64]| match &faces {
        Some(faces) => d6table::roll_many(faces, dice, n, counts),
        None => counts[0] += n,
    };
    Ok(Box::new(FaceRoll {
        page: TableReport {
            system: name.to_string(),
            title,
            params,
            trials: None,
            outcomes: Vec::new(),
            expectations_heading: PER_ROLL.to_string(),
            expectations,
            sections: Vec::new(),
        },
        unit: "rolls",
        outcomes: labels,
        exact,
        kernel,
        sampling,
    }))
}
