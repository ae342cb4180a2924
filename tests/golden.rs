//! Golden bytes: every shipped analysis, run at small trials, writes data files whose
//! SHA-256 is pinned here, on 1 and on 4 threads alike.
//!
//! Why this test exists: the report pipeline is shared by every system, and moving it
//! (issue 12) must not change a byte of what a designer gets unless a commit says so.
//! A change to a pinned hash is reviewed like a change to the data: update the snapshot
//! (`cargo insta review`, or `INSTA_UPDATE=always`) in a commit that says why.

use std::fs;
use std::path::Path;

mod common;

use assert_cmd::Command;
use sha2::{Digest, Sha256};

/// Trials per run: enough to fill every histogram, few enough for CI.
const TRIALS: &str = "3000";

/// `name  sha256` for every data file, `tables.md` and `tables.xlsx` of a report, sorted
/// by name.
fn hashes(report: &Path) -> String {
    let mut names: Vec<String> = fs::read_dir(report)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.ends_with(".csv") || n.ends_with(".parquet") || n == "tables.md" || n == "tables.xlsx"
        })
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| {
            let digest = Sha256::digest(fs::read(report.join(n)).unwrap());
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            format!("{n}  {hex}\n")
        })
        .collect()
}

fn run(file: &Path, threads: &str, out: &Path) -> String {
    let output = Command::cargo_bin("battlelab")
        .unwrap()
        .args([
            "run",
            file.to_str().unwrap(),
            "--trials",
            TRIALS,
            "--threads",
            threads,
        ])
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    hashes(out)
}

/// Every system's `results`, `metrics` and `distributions` share their columns: `system,
/// variant`, the run's axes, then the same fixed tail; odds columns are numbers that sort
/// beside their printed label.
fn one_schema(stem: &str, report: &Path) {
    let header = |name: &str| -> Vec<String> {
        let text = fs::read_to_string(report.join(name)).unwrap();
        text.lines()
            .next()
            .unwrap()
            .split(',')
            .map(str::to_string)
            .collect()
    };
    for (file, tail) in [
        (
            "results.csv",
            &[
                "outcome",
                "trials",
                "count",
                "probability",
                "ci_low",
                "ci_high",
                "exact",
                "exact_fraction",
            ][..],
        ),
        (
            "metrics.csv",
            &["metric", "trials", "mean", "exact_mean"][..],
        ),
        (
            "distributions.csv",
            &["metric", "value", "count", "probability", "exact"][..],
        ),
    ] {
        let columns = header(file);
        assert_eq!(
            &columns[..2],
            ["system", "variant"],
            "{stem} {file}: {columns:?}"
        );
        assert_eq!(
            &columns[columns.len() - tail.len()..],
            tail,
            "{stem} {file}: {columns:?}"
        );
        for axis in &columns[2..columns.len() - tail.len()] {
            assert!(
                axis.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{stem} {file}: column {axis} is not snake case"
            );
        }
        if let Some(at) = columns.iter().position(|c| c == "odds") {
            assert_eq!(columns[at + 1], "odds_label", "{stem} {file}");
            let text = fs::read_to_string(report.join(file)).unwrap();
            let mut odds: Vec<(f64, String)> = text
                .lines()
                .skip(1)
                .map(|l| {
                    // Axis columns come before any quoted outcome name.
                    let cells: Vec<&str> = l.split(',').collect();
                    (cells[at].parse::<f64>().unwrap(), cells[at + 1].to_string())
                })
                .collect();
            odds.sort_by(|a, b| a.0.total_cmp(&b.0));
            odds.dedup();
            let labels: Vec<&str> = odds.iter().map(|(_, l)| l.as_str()).collect();
            if labels.len() == 4 && labels[0].contains(':') {
                assert_eq!(labels, ["1:1", "3:2", "2:1", "3:1"], "{stem}");
            }
        }
    }
}

#[test]
fn every_shipped_analysis_writes_its_pinned_bytes_on_1_and_4_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = String::new();
    for file in common::shipped_analyses() {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let one = run(&file, "1", &dir.path().join(format!("{stem}_1")));
        let four = run(&file, "4", &dir.path().join(format!("{stem}_4")));
        assert_eq!(one, four, "{stem}: 1 and 4 threads differ");
        // index.html is not pinned (it names the charts and the version, which change
        // for reasons of their own), but it is the same bytes whatever the threads and
        // wherever the folder is.
        let page = |n: &str| fs::read(dir.path().join(format!("{stem}_{n}/index.html"))).unwrap();
        assert_eq!(page("1"), page("4"), "{stem}: index.html differs");
        one_schema(&stem, &dir.path().join(format!("{stem}_1")));
        assert!(!one.is_empty(), "{stem}: no data files");
        all += &format!("# {stem}\n{one}");
    }
    insta::assert_snapshot!(all);
}
