//! `battlelab table rules --rules FILE [--table NAME] [--set name=value …]`: one roll on
//! any table a rules file declares — its exact distribution of result codes (fractions)
//! and, with `--trials`, a simulation through the engine's driver.
//!
//! Why this module exists: a designer checks a table as printed before running whole
//! battles with it ("with these DRMs, what does one roll on my CRT give?"). The lookup is
//! the one every run makes (`chain::result_of`), so the table and the battles read each
//! cell the same way.

use std::sync::Arc;

use serde_json::json;

use crate::dice::DiceStream;
use crate::exact::ExactDistribution;
use crate::one_roll::{
    invalid, FaceRoll, OneRollTable, Param, ParamKind, ParamValues, PreparedTable, Sampling,
    TableError, TableReport,
};
use crate::systems::rules_file::chain::{column_of, result_of};
use crate::systems::rules_file::game::Game;

/// The most equally likely faces a table's dice may have to be enumerated here.
const MAX_FACES: u64 = 1 << 20;

/// The rules file's tables, one roll.
pub const RULES_TABLE: OneRollTable = OneRollTable {
    name: "rules",
    about: "One roll on a table of your own rules file (docs/rules-files.md): its result codes, exactly",
    after_help: Some("The values a table reads (its columns' odds or values, its modifier) come from the rules file's parameters and counters: each at its default or start unless set with --set name=value (attacker.strength=6, terrain=1)."),
    trial_unit: "rolls",
    params: &[
        Param {
            name: "rules",
            flag: "rules",
            value_name: "FILE",
            kind: ParamKind::File,
            required: true,
            help: "The rules file: a path, or the name of one shipped with the tool (classic_crt, risk, field …)",
            ..Param::BASE
        },
        Param {
            name: "table",
            flag: "table",
            value_name: "NAME",
            kind: ParamKind::Text,
            help: "The table rolled on (default: the file's first)",
            ..Param::BASE
        },
        Param {
            name: "set",
            flag: "set",
            value_name: "NAME=VALUE",
            kind: ParamKind::TextList,
            help: "A parameter or counter's value, as the analysis file names it (attacker.strength=6); may be given several times",
            ..Param::BASE
        },
    ],
    example: &[("rules", "classic_crt"), ("set", "attacker.strength=6"), ("set", "defender.strength=3")],
    prepare,
};

fn prepare(values: &ParamValues, sampling: Sampling) -> Result<Box<dyn PreparedTable>, TableError> {
    let path = values
        .file("rules")
        .ok_or_else(|| invalid("--rules", "required: give the rules file"))?;
    // A path, or the name of a rules file shipped with the tool (`--rules risk`).
    let (path, text) =
        crate::systems::rules_file::read_rules(std::path::Path::new(""), &path.to_string_lossy())
            .map_err(|m| {
            invalid(
                "--rules",
                m.replace(" (a path relative to this analysis file: ", " (")
                    .replace("this file", "the current folder"),
            )
        })?;
    let game = Arc::new(Game::parse(&path, &text)?);
    let table_names: Vec<&str> = game.tables.iter().map(|t| t.name.as_str()).collect();
    let t = match values.text("table") {
        Some(name) => game
            .tables
            .iter()
            .position(|t| t.name == name)
            .ok_or_else(|| {
                invalid(
                    format!("--table {name}"),
                    format!(
                        "the rules file has no such table; its tables: {}",
                        table_names.join(", ")
                    ),
                )
            })?,
        None if game.tables.is_empty() => {
            return Err(invalid("--rules", "the rules file declares no table"))
        }
        None => 0,
    };
    let mut frame = vec![0i64; game.frame_len()];
    let mut given: Vec<(String, i64)> = Vec::new();
    for pair in values.texts("set") {
        let (name, value) = pair.split_once('=').ok_or_else(|| {
            invalid(
                format!("--set {pair}"),
                "write name=value, e.g. attacker.strength=6",
            )
        })?;
        let value: i64 = value
            .trim()
            .parse()
            .map_err(|_| invalid(format!("--set {pair}"), "the value is a whole number"))?;
        given.push((name.trim().to_string(), value));
    }
    let settings = game.settings();
    for (name, _) in &given {
        if !settings.iter().any(|s| s.0 == *name) {
            let names: Vec<&str> = settings.iter().map(|s| s.0.as_str()).collect();
            return Err(invalid(
                format!("--set {name}"),
                format!(
                    "the rules file has no such parameter or counter; allowed: {}",
                    names.join(", ")
                ),
            ));
        }
    }
    let mut shown = serde_json::Map::new();
    for (name, decl, _) in &settings {
        let value = match given.iter().rev().find(|g| g.0 == *name) {
            Some((_, v)) => *v,
            None => decl.default.ok_or_else(|| {
                invalid(
                    format!("--set {name}=…"),
                    "required: the rules file gives it no default or start",
                )
            })?,
        };
        if value < decl.min || value > decl.max {
            return Err(invalid(
                format!("--set {name}={value}"),
                format!("{name} is {} to {}", decl.min, decl.max),
            ));
        }
        frame[game.slot(name).expect("declared")] = value;
        shown.insert(name.clone(), json!(value));
    }
    frame[game.layout.cap] = game.cap_of(&frame);
    let table = &game.tables[t];
    // The codes this table can give, in the rules file's order.
    let mut codes: Vec<usize> = table.cells.iter().flatten().copied().collect();
    codes.extend(table.natural.iter().map(|n| n.1));
    for e in [table.below, table.above, table.below_rows, table.above_rows] {
        if let crate::systems::rules_file::game::Edge::Result(r) = e {
            codes.push(r);
        }
    }
    codes.sort_unstable();
    codes.dedup();
    let labels: Vec<String> = codes
        .iter()
        .map(|r| game.results[*r].code.clone())
        .collect();
    let faces = u64::from(table.faces).checked_pow(table.dice).filter(|f| *f <= MAX_FACES).ok_or_else(|| {
        invalid("--table", format!("{}d{} has too many faces to count one by one here; run it in an analysis instead", table.dice, table.faces))
    })?;
    let (dice_n, dice_faces) = (table.dice, table.faces);
    let lookup = {
        let game = Arc::clone(&game);
        let frame = frame.clone();
        let codes = codes.clone();
        move |sum: i64| -> usize {
            let mut f = frame.clone();
            f[game.layout.roll] = sum;
            let r = result_of(&game, &game.tables[t], &mut f);
            codes.iter().position(|c| *c == r).expect("listed above")
        }
    };
    let exact = ExactDistribution::enumerate(faces as u32, labels.len(), |face| {
        let (mut rest, mut sum) = (face, 0i64);
        for _ in 0..dice_n {
            sum += i64::from(rest % dice_faces) + 1;
            rest /= dice_faces;
        }
        lookup(sum)
    });
    let automatic = column_of(table, &frame).err();
    let kernel = move |dice: &mut DiceStream, n: u64, counts: &mut [u64]| {
        for _ in 0..n {
            let sum: i64 = (0..dice_n).map(|_| i64::from(dice.d(dice_faces))).sum();
            counts[lookup(sum)] += 1;
        }
    };
    let title = format!(
        "{} — {}{}",
        game.name,
        if table.means.is_empty() {
            &table.name
        } else {
            &table.means
        },
        automatic.map_or(String::new(), |r| format!(
            " (beyond the columns: {} without a roll)",
            game.results[r].code
        ))
    );
    shown.insert("table".into(), json!(table.name));
    Ok(Box::new(FaceRoll {
        page: TableReport {
            system: "rules".to_string(),
            title,
            params: serde_json::Value::Object(shown),
            trials: None,
            outcomes: Vec::new(),
            expectations_heading: String::new(),
            expectations: Vec::new(),
            sections: Vec::new(),
        },
        unit: "rolls",
        outcomes: labels,
        exact,
        kernel,
        sampling,
    }))
}
