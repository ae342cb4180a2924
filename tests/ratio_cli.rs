//! Ratio battles from the command line: `table ratio` in every format, its refusals, and
//! `run` on the shipped ratio analyses, byte for byte on any thread count.

mod common;

use assert_cmd::Command;
use common::stdout;
use serde_json::Value;

fn battlelab() -> Command {
    Command::cargo_bin("battlelab").unwrap()
}

const ISSUE_EXAMPLE: [&str; 13] = [
    "table",
    "ratio",
    "--line",
    "1v1,1v1,2v1",
    "--reserve-a",
    "1",
    "--policy",
    "rescue",
    "--mod-a",
    "+1",
    "--mod-b",
    "-1",
    "--format",
];

#[test]
fn table_ratio_text_snapshot() {
    insta::assert_snapshot!(stdout(&ISSUE_EXAMPLE[..12]));
}

/// The quick form's JSON has the shape of every `table` command, with exact fractions
/// that add up to 1, and the value of reserves under each policy.
#[test]
fn table_ratio_json_has_the_stable_shape() {
    let mut args = ISSUE_EXAMPLE.to_vec();
    args.push("json");
    let json: Value = serde_json::from_str(&stdout(&args)).unwrap();
    assert_eq!(json["system"], "ratio");
    assert_eq!(json["params"]["line"], "1v1,1v1,2v1");
    assert_eq!(json["params"]["policy"], "rescue");
    assert!(json["trials"].is_null());
    let outcomes = json["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 9);
    assert_eq!(outcomes[0]["outcome"], "A wins, B holds");
    assert_eq!(outcomes[8]["outcome"], "draw");
    let sum: f64 = outcomes
        .iter()
        .map(|o| o["probability"].as_f64().unwrap())
        .sum();
    assert!((sum - 1.0).abs() < 1e-12);
    for o in outcomes {
        assert!(o["fraction"].is_string());
        assert!(o["ci_low"].is_null() && o["estimate"].is_null() && o["count"].is_null());
    }
    let names: Vec<&str> = json["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for policy in ["none", "rescue", "press", "optimal"] {
        assert!(
            names.contains(&format!("{policy}: P(A wins)").as_str()),
            "{names:?}"
        );
    }
}

#[test]
fn table_ratio_with_trials_adds_estimates_within_their_intervals() {
    let json: Value = serde_json::from_str(&stdout(&[
        "table", "ratio", "--line", "1v1,2v1", "--mod-b", "1", "--trials", "2000000", "--seed",
        "7", "--format", "json",
    ]))
    .unwrap();
    assert_eq!(json["trials"], 2_000_000);
    for o in json["outcomes"].as_array().unwrap() {
        let (lo, hi) = (
            o["ci_low"].as_f64().unwrap(),
            o["ci_high"].as_f64().unwrap(),
        );
        let exact = o["probability"].as_f64().unwrap();
        // 95% intervals: with 9 outcomes an occasional miss is expected, but never a
        // wide one; 4 SE is the hard bound.
        let se = (exact * (1.0 - exact) / 2e6).sqrt();
        assert!(
            (o["estimate"].as_f64().unwrap() - exact).abs() <= 4.0 * se + 1e-12,
            "{o}"
        );
        assert!(lo <= hi);
    }
}

#[test]
fn table_ratio_refuses_bad_input() {
    for (args, expected) in [
        (vec!["--line", "3v1"], "each side puts 1 or 2 units"),
        (
            vec!["--line", "1v1", "--policy", "hold"],
            "unknown reserve policy",
        ),
        (vec!["--line", "2v1,1v2"], "a double on the smaller side"),
        (
            vec!["--line", "1v1", "--reserve-a", "1", "--reserve-b", "1"],
            "both sides",
        ),
        (
            vec!["--line", "2v1", "--reserve-b", "1"],
            "only the side with more units",
        ),
        (vec!["--line", "1v1", "--min-score", "0"], "1 to 6, or none"),
        (vec!["--line", "1v1", "--mod-a", "9"], "-6 to +6"),
        (
            vec!["--line", "1v1", "--trials", "0"],
            "0 is not in 1..=1000000000000",
        ),
    ] {
        let output = battlelab()
            .args(["table", "ratio"])
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

/// Every shipped ratio analysis writes identical data files on 1 and 8 threads.
#[test]
fn ratio_runs_are_byte_identical_on_one_and_eight_threads() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["ratio_line", "ratio_skirmish", "ratio_double_up"] {
        let analysis = format!("{}/analyses/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        let mut outputs = Vec::new();
        for threads in ["1", "8"] {
            let out = dir.path().join(format!("{name}_{threads}"));
            let output = battlelab()
                .args([
                    "run",
                    &analysis,
                    "--trials",
                    "200000",
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
            let read = |f: &str| std::fs::read(out.join(f)).unwrap();
            outputs.push(
                [
                    "results.csv",
                    "results.parquet",
                    "expectations.csv",
                    "distributions.csv",
                    "combats.parquet",
                    "tables.md",
                ]
                .map(read),
            );
        }
        assert!(outputs[0] == outputs[1], "{name}: 1 vs 8 threads differ");
    }
    // The report of the issue's example line carries exact fractions and the policies frame.
    let out = dir.path().join("ratio_line_1");
    let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(results.lines().next().unwrap().contains("exact_fraction"));
    assert!(out.join("policies.csv").exists());
    assert!(out.join("heatmap_a_wins.png").exists());
}
