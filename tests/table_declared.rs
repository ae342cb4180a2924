//! `battlelab table` built from the tables the systems declare: its help lists every
//! declared table and each one's parameters with their ranges and defaults, every
//! declared example runs in every format, and `--trials` runs through the engine's driver
//! — the same blocks, seeds and counts as `battlelab run`, so `table` and `run` count the
//! same rolls for the same seed.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use battlelab::one_roll::{OneRollTable, ParamKind};
use battlelab::systems::one_roll_tables;
use common::{battlelab, csv_fields, stdout};
use serde_json::Value;

/// Text with every run of whitespace as one space, so wrapped help reads as written.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `table <name>` with the declaration's example values.
fn example_args(table: &OneRollTable) -> Vec<String> {
    let mut args = vec!["table".to_string(), table.name.to_string()];
    for (name, value) in table.example {
        let param = table.param(name).unwrap();
        args.push(format!("--{}", param.flag));
        if param.kind != ParamKind::Flag {
            args.push(value.to_string());
        }
    }
    args
}

fn json(args: &[String]) -> Value {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    serde_json::from_str(&stdout(&args)).unwrap()
}

#[test]
fn table_help_lists_every_declared_table_with_its_about_line() {
    let help = flat(&stdout(&["table", "--help"]));
    for table in one_roll_tables() {
        assert!(
            help.contains(&format!("{} {}", table.name, flat(table.about))),
            "{} is not listed with its about line:\n{help}",
            table.name
        );
    }
}

#[test]
fn each_table_help_lists_its_parameters_with_ranges_and_defaults() {
    for table in one_roll_tables() {
        let help = flat(&stdout(&["table", table.name, "--help"]));
        assert!(help.contains(&flat(table.about)), "{}", table.name);
        for p in table.params {
            let flag = format!("--{}", p.flag);
            assert!(
                help.contains(&flag),
                "{}: {flag} missing:\n{help}",
                table.name
            );
            if let ParamKind::Int { min, max, .. } = p.kind {
                let range = format!("[range: {min} to {max}]");
                assert!(help.contains(&range), "{} {flag}: {range}", table.name);
            }
            if let Some(default) = p.default {
                let shown = format!("[default: {default}]");
                assert!(help.contains(&shown), "{} {flag}: {shown}", table.name);
            }
        }
        for shared in ["--trials", "--seed", "--threads", "--format"] {
            assert!(help.contains(shared), "{}: {shared}", table.name);
        }
    }
}

#[test]
fn every_declared_example_runs_in_every_format() {
    for table in one_roll_tables() {
        let args = example_args(table);
        let with = |format: &str| {
            let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
            all.extend(["--format", format]);
            stdout(&all)
        };
        assert!(!with("text").is_empty(), "{}", table.name);
        assert!(with("md").starts_with("**"), "{}", table.name);
        assert!(
            with("csv").starts_with("outcome,probability,fraction,estimate,count,ci_low,ci_high\n"),
            "{}",
            table.name
        );
        let report: Value = serde_json::from_str(&with("json")).unwrap();
        assert_eq!(report["system"], table.name);
        assert_eq!(report["trials"], Value::Null);
    }
}

#[test]
fn every_declared_table_counts_each_trial_once_with_trials() {
    for table in one_roll_tables() {
        let mut args = example_args(table);
        args.extend(["--trials", "70000", "--seed", "3", "--format", "json"].map(String::from));
        let report = json(&args);
        assert_eq!(report["trials"], 70000, "{}", table.name);
        let counted: u64 = report["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["count"].as_u64().unwrap())
            .sum();
        // Two blocks, the second partial: every trial counted once, in one outcome.
        assert_eq!(counted, 70000, "{}", table.name);
    }
}

/// Each outcome's count in a report folder's `results.csv` (the runs of the plan with no
/// policy column, or an empty one: the battle as written).
fn run_counts(report: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(report.join("results.csv")).unwrap();
    let mut lines = text.lines();
    let header = csv_fields(lines.next().unwrap());
    let column = |name: &str| header.iter().position(|h| h == name);
    let (outcome, count) = (column("outcome").unwrap(), column("count").unwrap());
    let policy = column("policy");
    lines
        .map(csv_fields)
        .filter(|row| policy.is_none_or(|p| row[p].is_empty()))
        .map(|row| (row[outcome].clone(), row[count].parse().unwrap()))
        .collect()
}

/// Each row's count of a `table` JSON report's rows.
fn table_counts(rows: &Value) -> BTreeMap<String, u64> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["outcome"].as_str().unwrap().to_string(),
                o["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

const MELEE: &str = r#"
name = "agree_melee"
system = "melee"
seed = 7
trials = 100_000
[options]
break_dice = "2d6"
round_limit = 6
[profiles.spear]
models = 20
frontage = 5
attacks = 1
skill = 4
power = 3
defense = 3
discipline = 7
[profiles.sword]
models = 15
frontage = 5
attacks = 1
skill = 3
power = 3
defense = 4
discipline = 7
[engagement]
a = "spear"
b = [{ unit = "sword", facing = "front" }]
[[variant]]
name = "as written"
"#;

const RATIO: &str = r#"
name = "agree_ratio"
system = "ratio"
seed = 7
trials = 100_000
[battle]
line = ["A1 vs B1", "A2 vs B2", "A3+A4 vs B3"]
reserve = ["A5"]
[side.a]
units = 5
policy = "rescue"
[side.b]
units = 3
[[variant]]
name = "as written"
"#;

const ATTRITION: &str = r#"
name = "agree_attrition"
system = "attrition"
seed = 7
trials = 100_000
[roll]
small_stack = "none"
[sweep]
sp = [14]
drm = [2]
[[variant]]
name = "printed"
"#;

#[test]
fn table_and_run_count_the_same_trials_for_the_same_seed() {
    let dir = tempfile::tempdir().unwrap();
    let trials = ["--trials", "100000", "--seed", "7", "--format", "json"];
    // (analysis, the same roll or battle as a table command, where its rows are)
    let cases: [(&str, &str, Vec<&str>, Option<&str>); 3] = [
        (
            "attrition",
            ATTRITION,
            vec!["table", "attrition", "--sp", "14", "--drm", "2"],
            None,
        ),
        (
            "ratio",
            RATIO,
            vec![
                "table",
                "ratio",
                "--line",
                "1v1,1v1,2v1",
                "--reserve-a",
                "1",
            ],
            None,
        ),
        (
            "melee",
            MELEE,
            vec![
                "table",
                "melee",
                "--a",
                "models=20 frontage=5 skill=4",
                "--b",
                "models=15 frontage=5 defense=4",
            ],
            Some("whole engagement"),
        ),
    ];
    for (name, analysis, table, section) in cases {
        let file = dir.path().join(format!("{name}.toml"));
        std::fs::write(&file, analysis).unwrap();
        let out = dir.path().join(name);
        let (code, _, stderr) = battlelab(
            dir.path(),
            &[
                "run",
                file.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "-q",
            ],
        );
        assert_eq!(code, Some(0), "{name}: {stderr}");
        let ran = run_counts(&out);
        let args: Vec<&str> = table.iter().chain(&trials).copied().collect();
        let report: Value = serde_json::from_str(&stdout(&args)).unwrap();
        let rows = match section {
            None => &report["outcomes"],
            Some(title) => &report["sections"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["title"].as_str().unwrap().starts_with(title))
                .unwrap()["rows"],
        };
        let tabled = table_counts(rows);
        assert_eq!(tabled.values().sum::<u64>(), 100_000, "{name}");
        assert_eq!(tabled, ran, "{name}: table and run count differently");
    }
}

#[test]
fn table_trials_are_the_same_bytes_on_one_and_three_threads() {
    let args = |threads: &'static str| {
        [
            "table",
            "melee",
            "--a",
            "models=20 frontage=5 skill=4",
            "--b",
            "models=15 frontage=5 defense=4",
            "--trials",
            "140000",
            "--seed",
            "11",
            "--threads",
            threads,
            "--format",
            "csv",
        ]
    };
    assert_eq!(stdout(&args("1")), stdout(&args("3")));
}
