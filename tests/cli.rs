//! The binary as a designer runs it: the table command's formats and JSON shape, the
//! report folder, and byte-for-byte determinism across thread counts.

mod common;

use assert_cmd::Command;
use common::stdout;
use serde_json::Value;

fn battlelab() -> Command {
    Command::cargo_bin("battlelab").unwrap()
}

#[test]
fn table_crt_text_snapshot() {
    insta::assert_snapshot!(stdout(&[
        "table",
        "crt",
        "--odds",
        "3:2",
        "--drm",
        "+1",
        "--smaller-sp",
        "8"
    ]));
}

#[test]
fn table_crt_markdown_snapshot() {
    insta::assert_snapshot!(stdout(&[
        "table", "crt", "--odds", "1:1", "--drm", "-6", "--format", "md"
    ]));
}

#[test]
fn table_crt_json_has_the_stable_shape() {
    let json: Value = serde_json::from_str(&stdout(&[
        "table", "crt", "--odds", "3:2", "--drm", "0", "--format", "json",
    ]))
    .unwrap();
    assert_eq!(json["system"], "crt");
    assert_eq!(json["params"]["odds"], "3:2");
    assert!(json["trials"].is_null());
    let outcomes = json["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 9);
    let d1 = outcomes
        .iter()
        .find(|o| o["outcome"] == "L=1 S=D1")
        .unwrap();
    assert_eq!(d1["fraction"], "1/9");
    assert!((d1["probability"].as_f64().unwrap() - 1.0 / 9.0).abs() < 1e-15);
    assert!(d1["ci_low"].is_null() && d1["ci_high"].is_null());
    let total: f64 = outcomes
        .iter()
        .map(|o| o["probability"].as_f64().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-12);
}

#[test]
fn table_crt_with_trials_adds_estimates_and_intervals() {
    let json: Value = serde_json::from_str(&stdout(&[
        "table", "crt", "--odds", "2:1", "--drm", "-2", "--trials", "200000", "--format", "json",
    ]))
    .unwrap();
    assert_eq!(json["trials"], 200000);
    for o in json["outcomes"].as_array().unwrap() {
        let (lo, hi, p) = (
            o["ci_low"].as_f64().unwrap(),
            o["ci_high"].as_f64().unwrap(),
            o["probability"].as_f64().unwrap(),
        );
        assert!(lo <= hi && o["fraction"].is_string());
        // Exact inside a 95% interval is not guaranteed per outcome, but a 4-SE miss is.
        let se = (p * (1.0 - p) / 200000.0).sqrt();
        assert!(
            (o["estimate"].as_f64().unwrap() - p).abs() <= 4.0 * se + 1e-12,
            "{o}"
        );
    }
}

#[test]
fn table_crt_refuses_bad_input() {
    for (args, needle) in [
        // 4:1 is read as a file reads it (the 3:1 column); a smaller-first ratio is not.
        (
            vec!["--odds", "2:3"],
            "the CRT's columns are 1:1, 3:2, 2:1, 3:1",
        ),
        (vec!["--odds", "one"], "not odds L:S"),
        (vec!["--odds", "1:1", "--smaller-sp", "0"], "--smaller-sp 0"),
        (
            vec!["--odds", "1:1", "--trials", "0"],
            "0 is not in 1..=1000000000000",
        ),
    ] {
        let output = battlelab()
            .args(["table", "crt"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(needle),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn run_is_byte_identical_on_one_two_and_eight_threads() {
    let dir = tempfile::tempdir().unwrap();
    let analysis = concat!(env!("CARGO_MANIFEST_DIR"), "/analyses/field_combat.toml");
    let mut outputs = Vec::new();
    for threads in ["1", "2", "8"] {
        let out = dir.path().join(format!("t{threads}"));
        let output = battlelab()
            .args([
                "run",
                analysis,
                "--trials",
                "150000",
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
        let read = |name: &str| std::fs::read(out.join(name)).unwrap();
        outputs.push((
            read("results.csv"),
            read("results.parquet"),
            read("expectations.csv"),
            read("distributions.parquet"),
        ));
        for chart in [
            "outcomes_printed.png",
            "heatmap_smaller_loses_printed.svg",
            "battle_length_printed.png",
            "sp_lost_b_printed.svg",
        ] {
            assert!(out.join(chart).exists(), "missing {chart}");
        }
        let manifest: Value = serde_json::from_slice(&read("manifest.json")).unwrap();
        assert_eq!(manifest["seed"], 1815);
        assert_eq!(manifest["trials"], 150000);
        assert_eq!(manifest["rules_hash"].as_str().unwrap().len(), 64);
    }
    assert!(outputs[0] == outputs[1], "1 vs 2 threads differ");
    assert!(outputs[0] == outputs[2], "1 vs 8 threads differ");
    let tables = std::fs::read_to_string(dir.path().join("t1/tables.md")).unwrap();
    // Every outcome row of the rulebook table adds up to exactly 100.0.
    let mut rows = 0;
    let mut section = "";
    for line in tables.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading;
        }
        if !section.starts_with("Battle outcomes")
            || !(line.starts_with("| 1:1") || line.starts_with("| 3:1"))
        {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() > 3 && cells[1].parse::<i32>().is_ok() {
            let tenths: i64 = cells[2..]
                .iter()
                .map(|c| (c.trim_end_matches('†').parse::<f64>().unwrap() * 10.0).round() as i64)
                .sum();
            assert_eq!(tenths, 1000, "{line}");
            rows += 1;
        }
    }
    assert!(
        rows >= 14,
        "expected odds × DRM rows in tables.md, found {rows}"
    );
}

#[test]
fn a_different_seed_gives_different_counts() {
    let dir = tempfile::tempdir().unwrap();
    let analysis = concat!(env!("CARGO_MANIFEST_DIR"), "/analyses/field_combat.toml");
    let mut csvs = Vec::new();
    for seed in ["1", "2"] {
        let out = dir.path().join(seed);
        battlelab()
            .args([
                "run", analysis, "--trials", "20000", "--quiet", "--seed", seed, "--out",
            ])
            .arg(&out)
            .assert()
            .success();
        csvs.push(std::fs::read(out.join("results.csv")).unwrap());
    }
    assert_ne!(csvs[0], csvs[1]);
}

#[cfg(unix)]
#[test]
fn ctrl_c_leaves_no_report() {
    let dir = tempfile::tempdir().unwrap();
    let analysis = concat!(env!("CARGO_MANIFEST_DIR"), "/analyses/field_combat.toml");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("battlelab"))
        .args(["run", analysis, "--trials", "1000000000", "--quiet"])
        .current_dir(dir.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("no report was written"));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    let reports = dir.path().join("reports");
    let inside: Vec<_> = std::fs::read_dir(&reports)
        .map(|r| r.collect())
        .unwrap_or_default();
    assert!(inside.is_empty(), "left behind: {left:?} {inside:?}");
}

/// The rulebook tables of the shipped analysis come from exact enumeration, so they are
/// pinned whole: the effective CRT per variant and the odds × DRM outcome percentages.
#[test]
fn rulebook_tables_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let analysis = concat!(env!("CARGO_MANIFEST_DIR"), "/analyses/field_combat.toml");
    let out = dir.path().join("r");
    battlelab()
        .args(["run", analysis, "--trials", "1000", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    insta::assert_snapshot!(std::fs::read_to_string(out.join("tables.md")).unwrap());
}

#[test]
fn table_crt_reads_overridden_rules_from_an_analysis_file() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/good/every_override.toml"
    );
    // every_override adds a 4:1 column (roll 2 → column 5) and caps the DRM at ±3.
    let json: Value = serde_json::from_str(&stdout(&[
        "table", "crt", "--rules", file, "--odds", "4:1", "--drm", "+5", "--format", "json",
    ]))
    .unwrap();
    assert_eq!(json["params"]["net_drm"], 3);
    let outcomes = json["outcomes"].as_array().unwrap();
    // Roll clamped to 3–11: 2d6+3 ≥ 6, column = roll − 1 + 4 ≥ 9; column 11 ← roll ≥ 8 ← 2d6 ≥ 5: 30/36.
    let d3 = outcomes
        .iter()
        .find(|o| o["outcome"] == "L=1 S=D3")
        .unwrap();
    assert_eq!(d3["fraction"], "5/6");
    let output = battlelab()
        .args([
            "table",
            "crt",
            "--rules",
            file,
            "--variant",
            "nope",
            "--odds",
            "1:1",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("allowed: as overridden, harsher losses")
    );
}

#[test]
fn strategic_d6_tables_snapshot() {
    let mut all = String::new();
    for args in [
        vec!["table", "attrition", "--sp", "14", "--drm", "+1"],
        vec![
            "table",
            "attrition",
            "--sp",
            "22",
            "--major-only",
            "--home",
            "--winter",
        ],
        vec!["table", "attrition", "--sp", "2", "--small-stack", "column"],
        vec!["table", "march", "--extra", "3", "--guards", "--unsupplied"],
        vec!["table", "naval", "--odds", "3-2", "--drm", "-1"],
        vec!["table", "blockade"],
        vec!["table", "pursuit", "--coastal"],
        vec!["table", "transport", "--format", "md"],
        vec!["table", "storm", "--format", "csv"],
    ] {
        all.push_str(&format!("$ battlelab {}\n", args[1..].join(" ")));
        all.push_str(&stdout(&args));
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}

#[test]
fn strategic_tables_refuse_bad_input() {
    for (args, needle) in [
        (vec!["attrition", "--sp", "0"], "0 is not in 1..=999"),
        (vec!["attrition", "--sp", "1000"], "1000 is not in 1..=999"),
        (vec!["attrition", "--sp", "-3"], "unexpected argument '-3'"),
        (
            vec!["attrition", "--sp", "9", "--frozen"],
            "unexpected argument '--frozen'",
        ),
        (vec!["march", "--extra", "4"], "must be 1, 2 or 3"),
        (vec!["naval", "--odds", "3-1"], "allowed: 1-1, 3-2, 2-1"),
        (vec!["naval", "--odds", "2-3"], "not an odds column"),
        (
            vec!["storm", "--trials", "0"],
            "0 is not in 1..=1000000000000",
        ),
    ] {
        let output = battlelab().arg("table").args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn naval_json_with_trials() {
    let json: Value = serde_json::from_str(&stdout(&[
        "table", "naval", "--odds", "1:1", "--drm", "+2", "--trials", "600000", "--format", "json",
    ]))
    .unwrap();
    assert_eq!(json["system"], "naval");
    assert_eq!(json["params"]["odds"], "1-1");
    // 1-1, DRM +2: rolls 3..8 → LR, SR, SR, SS, SC, 2SS, one sixth each.
    for o in json["outcomes"].as_array().unwrap() {
        let expected = if ["LR", "SS", "SC", "2SS"].contains(&o["outcome"].as_str().unwrap()) {
            "1/6"
        } else if o["outcome"] == "SR" {
            "1/3"
        } else {
            "0"
        };
        assert_eq!(o["fraction"], expected, "{o}");
        assert!(o["ci_low"].as_f64().unwrap() <= o["ci_high"].as_f64().unwrap());
    }
}

#[test]
fn table_setup_snapshot() {
    let mut all = stdout(&["table", "setup", "--state", "major"]);
    all.push_str(&stdout(&[
        "table",
        "setup",
        "--state",
        "minor",
        "--no-port",
        "--format",
        "md",
    ]));
    insta::assert_snapshot!(all);
    let output = battlelab()
        .args(["table", "setup", "--state", "major", "--no-port"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}
