//! The setup system's one-roll table (`battlelab table setup`): one state's initial-forces
//! roll, declared beside the setup system.
//!
//! Why this module exists: a designer asks what one state's roll gives before a whole map
//! of states is studied; the declaration names the state's kind and port as the analysis
//! file's states do, and every row is shown with its exact share and every quantity's
//! exact expectation.

use serde_json::json;

use crate::dice::DiceStream;
use crate::exact::ExactDistribution;
use crate::one_roll::{
    invalid, ExpectationRow, FaceRoll, OneRollTable, Param, ParamKind, ParamValues, PreparedTable,
    Sampling, TableError, TableReport, PER_ROLL,
};
use crate::systems::d6_tables::lookup as d6table;
use crate::systems::setup::map::{self as setup, StateKind};

/// Every one-roll table of the setup system.
pub const TABLES: &[OneRollTable] = &[SETUP];

const SETUP: OneRollTable = OneRollTable {
    name: "setup",
    about: "One initial-forces roll for a state (docs/systems/setup.md): every row, and expected forces",
    after_help: None,
    trial_unit: "rolls",
    params: &[
        Param {
            name: "state",
            flag: "state",
            value_name: "STATE",
            kind: ParamKind::Choice(&[("major", ""), ("minor", "")]),
            required: true,
            help: "Major or minor state",
            ..Param::BASE
        },
        Param {
            name: "no_port",
            flag: "no-port",
            kind: ParamKind::Flag,
            help: "[option] a minor state without a port gets no NSP or transports",
            ..Param::BASE
        },
    ],
    example: &[("state", "minor"), ("no_port", "true")],
    prepare,
};

fn prepare(values: &ParamValues, sampling: Sampling) -> Result<Box<dyn PreparedTable>, TableError> {
    let major = values.need_text("state")? == "major";
    let no_port = values.flag("no_port");
    if major && no_port {
        return Err(invalid(
            "--no-port",
            "only a minor state's naval forces depend on a port (the * entries)",
        ));
    }
    let kind = if major {
        StateKind::Major
    } else {
        StateKind::Minor
    };
    let port = !no_port;
    let rows = setup::rows(kind, port);
    let labels: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            format!(
                "row {}: leaders 3/2/1/0 {}/{}/{}/{}, Inf {}, Cav {}, Gds {}, NSP {}, T {}",
                i + 1,
                r.leaders[0],
                r.leaders[1],
                r.leaders[2],
                r.leaders[3],
                r.infantry,
                r.cavalry,
                r.guards,
                r.nsp,
                r.transports
            )
        })
        .collect();
    let exact = ExactDistribution::enumerate(6, 6, |face| face as usize);
    let expectations = setup::Quantity::ALL
        .iter()
        .map(|&q| {
            ExpectationRow::of(
                q.name(),
                exact.expectation(|i| u64::from(rows[i].quantity(q))),
            )
        })
        .collect();
    let state = if major { "major" } else { "minor" };
    let title = format!(
        "Initial forces — {state} state{}",
        if kind == StateKind::Minor && !port {
            " without a port"
        } else {
            ""
        }
    );
    // Each face its own row, eight dice a word.
    let faces: [u8; 6] = [0, 1, 2, 3, 4, 5];
    let kernel = move |dice: &mut DiceStream, n: u64, counts: &mut [u64]| {
        d6table::roll_many(&faces, dice, n, counts)
    };
    Ok(Box::new(FaceRoll {
        page: TableReport {
            system: "setup".into(),
            title,
            params: json!({"state": state, "port": port}),
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
