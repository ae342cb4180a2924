//! The field system's one-roll table (`battlelab table crt`): one resolution on the CRT,
//! declared beside the field system.
//!
//! Why this module exists: before a designer studies whole battles, they read one roll of
//! the combat results table — at an odds column and DRM, with the Combat Loss Chart's
//! expected losses for a smaller force of some SP — from the printed rules or from a
//! variant of their own analysis file (`--rules FILE --variant NAME`). The odds are read
//! as a file's `odds` sweep reads them, through the same rounding.

use serde_json::json;

use crate::dice::DiceStream;
use crate::exact::Fraction;
use crate::limits::{MAX_DRM_ARG, MAX_SP};
use crate::one_roll::{
    invalid, signed, Checked, ExpectationRow, FaceRoll, OneRollTable, Param, ParamKind,
    ParamValues, PreparedTable, Sampling, TableError, TableReport, PER_ROLL,
};
use crate::systems::field::battle::{self as crt, FieldCombat, FieldRules, OddsColumn};
use crate::systems::field::FieldStudy;

/// Every one-roll table of the field system.
pub const TABLES: &[OneRollTable] = &[CRT];

const CRT: OneRollTable = OneRollTable {
    name: "crt",
    about: "One resolution on the field-combat CRT (docs/systems/field.md): result pairs L=… S=…",
    after_help: None,
    trial_unit: "resolutions",
    params: &[
        Param {
            name: "odds",
            flag: "odds",
            value_name: "ODDS",
            kind: ParamKind::Text,
            required: true,
            help: "Odds, larger:smaller, as an analysis file writes them: a printed column (1:1, 3:2, 2:1, 3:1) or any ratio L:S with L ≥ S, read as the file's battles read it (5:2 → 2:1 under the printed rounding down; `odds_rounding` of --rules applies)",
            ..Param::BASE
        },
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
            help: "Net DRM to the larger force's 2d6 (e.g. +1, -2); capped at ±4 as printed",
            ..Param::BASE
        },
        Param {
            name: "smaller_sp",
            flag: "smaller-sp",
            value_name: "SMALLER_SP",
            kind: ParamKind::Int {
                min: 1,
                max: MAX_SP as i64,
                checked: Checked::ByTable,
            },
            help: "Also show expected SP and morale lost per side through the Combat Loss Chart, for a smaller force of this many SP",
            ..Param::BASE
        },
        Param {
            name: "rules",
            flag: "rules",
            value_name: "FILE",
            kind: ParamKind::File,
            help: "Read the tables (with their overrides) from this analysis file instead of the printed rules",
            ..Param::BASE
        },
        Param {
            name: "variant",
            flag: "variant",
            value_name: "VARIANT",
            kind: ParamKind::Text,
            requires: Some("rules"),
            help: "With --rules: which variant's tables [default: the first]",
            ..Param::BASE
        },
    ],
    example: &[("odds", "3:2"), ("drm", "+1"), ("smaller_sp", "8")],
    prepare,
};

/// The CRT of the printed rules, or of a variant of an analysis file (`--rules FILE
/// [--variant NAME]`, the first variant when none is named).
fn combat(values: &ParamValues) -> Result<FieldCombat, TableError> {
    let rules = match values.file("rules") {
        None => FieldRules::printed(),
        Some(file) => {
            let analysis = FieldStudy::load(file)?;
            let chosen = match values.text("variant") {
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

/// One CRT resolution: the exact distribution over the result pairs and, with
/// `--smaller-sp`, the expected losses through the Combat Loss Chart.
fn prepare(values: &ParamValues, sampling: Sampling) -> Result<Box<dyn PreparedTable>, TableError> {
    let field = combat(values)?;
    let given = values.need_text("odds")?;
    let drm = values.need_int("drm")? as i32;
    let smaller_sp = values.int("smaller_sp");
    let rules = field.rules();
    let unknown = || TableError::UnknownOdds {
        given: given.to_string(),
        allowed: rules.odds_labels().join(", "),
    };
    // As a file's odds are read (`odds = ["5:2"]` in a sweep): any L:S with L ≥ S, and a
    // ratio between or past the printed columns falls to a column by the rules' own
    // rounding, through the same `odds_index` every battle of the file uses.
    let (larger, smaller) = OddsColumn::parse_ratio(given)
        .filter(|(l, s)| l >= s)
        .ok_or_else(unknown)?;
    let listed = rules.odds_column_index(larger, smaller);
    let odds = listed.unwrap_or_else(|| field.odds_index(larger, smaller));
    let read_as = listed.is_none().then(|| format!("{larger}:{smaller}"));
    let smaller_sp = match smaller_sp {
        Some(sp) if !(1..=i64::from(crt::MAX_SP)).contains(&sp) => {
            return Err(TableError::SmallerSp(sp as u32))
        }
        Some(sp) => Some(sp as u32),
        None => None,
    };
    let net_drm = drm.clamp(-rules.drm_cap, rules.drm_cap);
    let exact = field.resolution_distribution(odds, drm);
    let labels: Vec<String> = field.pairs().iter().map(|p| p.label()).collect();
    let mut expectations = Vec::new();
    if let Some(sp) = smaller_sp {
        let pairs = field.pairs();
        let mut add =
            |name: &str, value: Fraction| expectations.push(ExpectationRow::of(name, value));
        add(
            "SP lost by L",
            exact.expectation(|i| u64::from(field.clc_loss(pairs[i].larger, sp))),
        );
        add(
            "SP lost by S",
            exact.expectation(|i| u64::from(field.clc_loss(pairs[i].smaller, sp).min(sp))),
        );
        add(
            "morale lost by L",
            exact.expectation(|i| u64::from(pairs[i].larger.morale_loss())),
        );
        add(
            "morale lost by S",
            exact.expectation(|i| u64::from(pairs[i].smaller.morale_loss())),
        );
    }
    let column = rules.odds_columns[odds].label();
    let mut params = json!({
        "odds": column,
        "drm": drm,
        "net_drm": net_drm,
    });
    if let Some(given) = &read_as {
        params["odds_given"] = json!(given);
    }
    if let Some(sp) = smaller_sp {
        params["smaller_sp"] = json!(sp);
    }
    let capped = if net_drm == drm {
        String::new()
    } else {
        format!(
            " (net {} after the ±{} cap)",
            signed(net_drm),
            rules.drm_cap
        )
    };
    let title = format!(
        "CRT resolution — odds {column}{}, DRM {}{capped}",
        read_as.map_or_else(String::new, |given| format!(
            " ({given} read as {column} by the odds rounding)"
        )),
        signed(drm)
    );
    let heading = match smaller_sp {
        Some(sp) => format!("expected per resolution (Combat Loss Chart, smaller force {sp} SP)"),
        None => PER_ROLL.to_string(),
    };
    // Four faces of 36 a word, as the CRT's own kernel resolves them.
    let faces: [u8; 36] = *field.faces(odds, drm);
    let kernel = move |dice: &mut DiceStream, n: u64, counts: &mut [u64]| {
        crt::resolve_many(&faces, dice, n, counts)
    };
    Ok(Box::new(FaceRoll {
        page: TableReport {
            system: "crt".into(),
            title,
            params,
            trials: None,
            outcomes: Vec::new(),
            expectations_heading: heading,
            expectations,
            sections: Vec::new(),
        },
        unit: "resolutions",
        outcomes: labels,
        exact,
        kernel,
        sampling,
    }))
}
