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

/// `name  sha256` for every data file and `tables.md` of a report, sorted by name.
fn hashes(report: &Path) -> String {
    let mut names: Vec<String> = fs::read_dir(report)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv") || n.ends_with(".parquet") || n == "tables.md")
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

#[test]
fn every_shipped_analysis_writes_its_pinned_bytes_on_1_and_4_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut all = String::new();
    for file in common::shipped_analyses() {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let one = run(&file, "1", &dir.path().join(format!("{stem}_1")));
        let four = run(&file, "4", &dir.path().join(format!("{stem}_4")));
        assert_eq!(one, four, "{stem}: 1 and 4 threads differ");
        assert!(!one.is_empty(), "{stem}: no data files");
        all += &format!("# {stem}\n{one}");
    }
    insta::assert_snapshot!(all);
}
