//! The one-roll tables the systems declare, as data: every table the command line has
//! always had is declared, every declaration is well formed (flags in the analysis file's
//! words, defaults that read, examples that run), and every validator that checks a
//! whole number itself holds to the range its declaration shows in `--help`.

use std::collections::BTreeSet;

use battlelab_core::one_roll::{Checked, OneRollTable, ParamKind, Sampling};
use battlelab_core::sim::RunControl;
use battlelab_core::systems::{one_roll_table, one_roll_tables};

const EXACT_ONLY: Sampling = Sampling {
    trials: None,
    seed: 1,
};

#[test]
fn every_table_the_command_line_has_had_is_declared_once_in_help_order() {
    let names: Vec<&str> = one_roll_tables().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "crt",
            "attrition",
            "march",
            "naval",
            "blockade",
            "pursuit",
            "transport",
            "storm",
            "setup",
            "ratio",
            "melee",
            "frontier-fire",
            "frontier-move",
            "frontier-recovery",
            "rules",
        ]
    );
    for name in &names {
        assert_eq!(one_roll_table(name).map(|t| t.name), Some(*name));
    }
    assert!(one_roll_table("field").is_none());
}

/// The options every table shares on the command line; no parameter may take their names.
const SHARED: [&str; 4] = ["trials", "seed", "threads", "format"];

#[test]
fn declarations_are_well_formed() {
    for table in one_roll_tables() {
        let t = table.name;
        assert!(
            !table.about.is_empty() && !table.about.ends_with('.'),
            "{t}"
        );
        assert!(!table.trial_unit.is_empty(), "{t}");
        let mut seen = BTreeSet::new();
        for p in table.params {
            let n = p.name;
            assert!(seen.insert(n), "{t} declares {n} twice");
            assert!(!SHARED.contains(&n), "{t}: {n} is a shared option");
            assert_eq!(
                p.flag,
                n.replace('_', "-"),
                "{t}: the flag is the file's word"
            );
            assert!(!p.help.is_empty() && !p.help.ends_with('.'), "{t} {n}");
            if let Some(default) = p.default {
                assert!(!p.required, "{t} {n}: required with a default");
                p.read(default)
                    .unwrap_or_else(|e| panic!("{t} {n}: default {default}: {e}"));
            }
            if let Some(needed) = p.requires {
                assert!(table.param(needed).is_some(), "{t} {n} needs {needed}");
            }
            if let ParamKind::Int { min, max, .. } = p.kind {
                let (low, high) = p.kind.read_bounds().unwrap();
                assert!(low <= min && min <= max && max <= high, "{t} {n}");
                assert_eq!(p.range(), Some(format!("{min} to {max}")));
            }
        }
        for (name, _) in table.example {
            assert!(table.param(name).is_some(), "{t}: example names {name}");
        }
        for p in table.params.iter().filter(|p| p.required) {
            assert!(
                table.example.iter().any(|(name, _)| *name == p.name),
                "{t}: the example leaves out the required {}",
                p.name
            );
        }
    }
}

#[test]
fn every_example_prepares_and_tabulates_exactly() {
    for table in one_roll_tables() {
        let values = table
            .values(table.example.iter().copied())
            .unwrap_or_else(|e| panic!("{}: {e}", table.name));
        let prepared = table
            .prepare(&values, EXACT_ONLY)
            .unwrap_or_else(|e| panic!("{}: {e}", table.name));
        let report = prepared
            .tabulate(&RunControl::default())
            .unwrap_or_else(|e| panic!("{}: {e}", table.name));
        assert_eq!(report.system, table.name);
        assert_eq!(report.trials, None);
        assert!(!report.outcomes.is_empty(), "{}", table.name);
        for row in &report.outcomes {
            assert!(
                row.fraction.is_some(),
                "{}: {} not exact",
                table.name,
                row.outcome
            );
            assert_eq!(row.count, None, "{}: counted without trials", table.name);
        }
    }
}

/// The values a table is tried with when one parameter is set to `value`: its example,
/// but where the example would refuse the parameter for another reason (side B keeps a
/// reserve only when it has more units, and then A keeps none).
fn trial_values(table: &OneRollTable, name: &str, value: &str) -> Vec<(&'static str, String)> {
    let base: Vec<(&str, &str)> = match (table.name, name) {
        ("ratio", "reserve_b") => vec![("line", "1v1,1v2")],
        _ => table.example.to_vec(),
    };
    let param = table.param(name).unwrap();
    base.into_iter()
        .filter(|(n, _)| *n != name)
        .map(|(n, v)| (table.param(n).unwrap().name, v.to_string()))
        .chain([(param.name, value.to_string())])
        .collect()
}

#[test]
fn every_validator_holds_to_its_declared_range() {
    let mut checked_by_tables = 0;
    for table in one_roll_tables() {
        for param in table.params {
            let ParamKind::Int { min, max, checked } = param.kind else {
                continue;
            };
            let (low, high) = param.kind.read_bounds().unwrap();
            let flag = format!("--{}", param.flag);
            let t = table.name;
            for inside in [min, max] {
                let given = trial_values(table, param.name, &inside.to_string());
                let values = table
                    .values(given.iter().map(|(n, v)| (*n, v.as_str())))
                    .unwrap_or_else(|e| panic!("{t} {flag} {inside}: {e}"));
                if let Err(e) = table.prepare(&values, EXACT_ONLY) {
                    panic!("{t} {flag} {inside} is in its declared range but refused: {e}");
                }
            }
            for outside in [min - 1, max + 1] {
                let given = trial_values(table, param.name, &outside.to_string());
                let read = table.values(given.iter().map(|(n, v)| (*n, v.as_str())));
                let refusal = match (checked, read) {
                    (Checked::OnRead, Ok(_)) => panic!("{t} {flag} {outside} was read"),
                    (Checked::OnRead, Err(e)) => e.to_string(),
                    (Checked::ByTable, Err(e)) => {
                        // Only a number its sign cannot hold is refused as it is read.
                        assert!(
                            !(low..=high).contains(&outside),
                            "{t} {flag} {outside}: {e}"
                        );
                        continue;
                    }
                    (Checked::ByTable, Ok(values)) => match table.prepare(&values, EXACT_ONLY) {
                        Ok(_) => panic!("{t} {flag} {outside} is outside {min}..={max} but taken"),
                        Err(e) => {
                            checked_by_tables += 1;
                            e.to_string()
                        }
                    },
                };
                assert!(
                    refusal.contains(&flag),
                    "{t} {flag} {outside}: the error does not name the flag: {refusal}"
                );
            }
        }
    }
    // smaller_sp 0 and 1000, extra 0 and 4, each reserve past 8, each modifier past ±6
    // both ways, round_limit 0 and 51, cf 0 and 11, level 0 and 6 and leader past 3 (for
    // movement and recovery each).
    assert_eq!(checked_by_tables, 20);
}

#[test]
fn read_values_name_the_flag_and_what_is_allowed() {
    let attrition = one_roll_table("attrition").unwrap();
    let refusal = |given: &[(&str, &str)]| {
        attrition
            .values(given.iter().copied())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refusal(&[("sp", "ten")]),
        "--sp ten: not a whole number: \"ten\""
    );
    assert_eq!(
        refusal(&[("sp", "4"), ("small_stack", "some")]),
        "--small-stack some: invalid value \"some\"; allowed: none, column"
    );
    assert_eq!(refusal(&[]), "--sp: required: give it a value");
    assert_eq!(
        refusal(&[("sp", "4"), ("sp", "5")]),
        "--sp: given more than once; give it once"
    );
    let values = attrition.values([("sp", "4")]).unwrap();
    assert_eq!(values.int("drm"), Some(0), "the default DRM");
    assert_eq!(values.text("small_stack"), Some("none"));
    assert!(!values.flag("winter"));
    let crt = one_roll_table("crt").unwrap();
    assert_eq!(
        crt.values([("odds", "1:1"), ("variant", "x")])
            .unwrap_err()
            .to_string(),
        "--variant: needs --rules"
    );
}
