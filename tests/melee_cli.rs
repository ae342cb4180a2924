//! Melee from the command line: `table melee` in every format, its refusals, and `run` on
//! the shipped melee analyses, byte for byte on any thread count.

mod common;

use assert_cmd::Command;
use common::{csv_fields, stdout};
use serde_json::Value;

fn battlelab() -> Command {
    Command::cargo_bin("battlelab").unwrap()
}

/// A small engagement: 6 v 6 three wide, with a two-model flanker.
const SMALL: [&str; 8] = [
    "table",
    "melee",
    "--a",
    "models=6 wide=3 skill=4 defense=4",
    "--b",
    "models=6 wide=3 power=4",
    "--b-flank",
    "models=2 wide=2 attacks=2",
];

#[test]
fn table_melee_markdown_snapshot() {
    let mut args = SMALL.to_vec();
    args.extend(["--format", "md"]);
    insta::assert_snapshot!(stdout(&args));
}

/// The JSON has the shape of every `table` command plus sections; the phase outcomes
/// are exact fractions summing to 1, the engagement ends are exact and sum to 1.
#[test]
fn table_melee_json_is_exact_and_consistent() {
    let mut args = SMALL.to_vec();
    args.extend(["--format", "json"]);
    let json: Value = serde_json::from_str(&stdout(&args)).unwrap();
    assert_eq!(json["system"], "melee");
    assert_eq!(json["params"]["b"][1]["facing"], "flank");
    let outcomes = json["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 3);
    let sum: f64 = outcomes
        .iter()
        .map(|o| o["probability"].as_f64().unwrap())
        .sum();
    assert!((sum - 1.0).abs() < 1e-12);
    assert!(outcomes.iter().all(|o| o["fraction"].is_string()));
    let sections = json["sections"].as_array().unwrap();
    let engagement = sections
        .iter()
        .find(|s| s["title"].as_str().unwrap().starts_with("whole engagement"))
        .unwrap();
    assert_eq!(engagement["exact"], true);
    let total: f64 = engagement["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["probability"].as_f64().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-12);
}

/// With --trials every estimate (phase and engagement) is within 4 SE of the exact value.
#[test]
fn table_melee_with_trials_agrees_with_exact() {
    let n = 1_000_000f64;
    let mut args = SMALL.to_vec();
    args.extend(["--trials", "1000000", "--seed", "3", "--format", "json"]);
    let json: Value = serde_json::from_str(&stdout(&args)).unwrap();
    let mut rows: Vec<&Value> = json["outcomes"].as_array().unwrap().iter().collect();
    for s in json["sections"].as_array().unwrap() {
        if s["exact"] == true {
            rows.extend(s["rows"].as_array().unwrap());
        }
    }
    assert!(rows.len() > 40);
    for o in rows {
        let exact = o["probability"].as_f64().unwrap();
        let se = (exact * (1.0 - exact) / n).sqrt();
        assert!(
            (o["estimate"].as_f64().unwrap() - exact).abs() <= 4.0 * se + 1e-12,
            "{o}"
        );
    }
}

#[test]
fn table_melee_refuses_bad_input() {
    for (args, expected) in [
        (
            vec!["--a", "models=0", "--b", "models=5"],
            "a unit has 1 to 500 models",
        ),
        (
            vec!["--a", "models=4 wide=5", "--b", "models=5"],
            "frontage 5 with 4 models",
        ),
        (
            vec!["--a", "skill=11", "--b", "models=5"],
            "stats are 1 to 10",
        ),
        (vec!["--a", "models=5", "--b", "defense=0"], "defense 0"),
        (
            vec!["--a", "moral=3", "--b", "models=5"],
            "unknown key \"moral\"",
        ),
        (vec!["--a", "models=5"], "side B has no unit"),
        (
            vec!["--a", "models=5", "--b", "models=5", "--break-dice", "4d6"],
            "allowed: 1d6, 2d6, 3d6",
        ),
        (
            vec![
                "--a",
                "models=5",
                "--b-flank",
                "models=5",
                "--b-flank",
                "models=5",
                "--b-flank",
                "models=5",
            ],
            "at most 2",
        ),
        (
            vec!["--a", "models=5", "--b", "models=5", "--round-limit", "0"],
            "round limit 0",
        ),
        (
            vec!["--a", "models=5", "--b", "models=5", "--trials", "0"],
            "0 is not in 1..=1000000000000",
        ),
    ] {
        let output = battlelab()
            .args(["table", "melee"])
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(!stderr.contains("panicked"));
    }
}

/// Every shipped melee analysis writes identical data files on 1 and 8 threads.
#[test]
fn melee_runs_are_byte_identical_on_one_and_eight_threads() {
    let dir = tempfile::tempdir().unwrap();
    for (name, files) in [
        (
            "melee_engagement",
            &[
                "results.csv",
                "results.parquet",
                "expectations.csv",
                "survival.csv",
                "phase.csv",
                "tables.md",
            ][..],
        ),
        (
            "melee_round_robin",
            &[
                "results.csv",
                "matchups.csv",
                "ratings.csv",
                "ratings.parquet",
                "tables.md",
            ][..],
        ),
        (
            "melee_skill_vs_defense",
            &[
                "results.csv",
                "expectations.parquet",
                "survival.parquet",
                "distributions.csv",
                "phase.csv",
                "tables.md",
            ][..],
        ),
        (
            "melee_power_vs_defense",
            &[
                "results.parquet",
                "expectations.csv",
                "distributions.parquet",
                "tables.md",
            ][..],
        ),
    ] {
        let analysis = format!("{}/analyses/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        let mut outputs = Vec::new();
        for threads in ["1", "8"] {
            let out = dir.path().join(format!("{name}_{threads}"));
            let output = battlelab()
                .args([
                    "run",
                    &analysis,
                    "--trials",
                    "100000",
                    "--threads",
                    threads,
                    "--quiet",
                    "--out",
                ])
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            outputs.push(
                files
                    .iter()
                    .map(|f| std::fs::read(out.join(f)).unwrap())
                    .collect::<Vec<_>>(),
            );
        }
        assert!(outputs[0] == outputs[1], "{name}: 1 vs 8 threads differ");
    }
    let grid = dir.path().join("melee_skill_vs_defense_1");
    assert!(grid.join("p_a_wins.png").exists());
    assert!(grid.join("wounds_by_a.svg").exists());
    assert!(grid.join("survival.png").exists());
    let rr = dir.path().join("melee_round_robin_1");
    assert!(rr.join("matchups.png").exists());
    let tables = std::fs::read_to_string(rr.join("tables.md")).unwrap();
    assert!(tables.contains("Point-value hints"));
}

/// A reader that stops early (`battlelab table melee … | head`) ends the command
/// quietly: exit 0, no panic about a broken pipe.
#[test]
fn a_closed_pipe_is_not_an_error() {
    use std::io::Read;
    use std::process::{Command as Process, Stdio};
    let mut child = Process::new(assert_cmd::cargo::cargo_bin("battlelab"))
        .args([
            "table",
            "melee",
            "--a",
            "models=200 wide=50 attacks=4",
            "--b",
            "models=200 wide=50 attacks=4",
            "--format",
            "csv",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Outcome names with commas ("A wins, B holds", section titles) are quoted, so every
/// CSV row has the header's seven fields.
#[test]
fn csv_tables_keep_seven_fields_per_row() {
    for args in [
        vec!["table", "ratio", "--line", "1v1,2v1", "--format", "csv"],
        SMALL.iter().copied().chain(["--format", "csv"]).collect(),
    ] {
        let text = stdout(&args);
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "outcome,probability,fraction,estimate,count,ci_low,ci_high"
        );
        for line in lines {
            assert_eq!(csv_fields(line).len(), 7, "{args:?}: {line}");
        }
    }
    let ratio = stdout(&["table", "ratio", "--line", "1v1", "--format", "csv"]);
    assert_eq!(
        csv_fields(ratio.lines().nth(1).unwrap())[0],
        "A wins, B holds"
    );
}
