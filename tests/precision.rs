//! Run until precise (issue 13): `precision = …` or `--precision` adds whole blocks, run by
//! run, until every simulated probability's 95% interval is that narrow — the same blocks
//! on any thread count — and the manifest records what each run took.

use std::fs;
use std::path::Path;

mod common;

use common::battlelab;

/// `(ci_high − ci_low, trials)` of every row of a results.csv (axis values never hold
/// commas in this analysis; outcome names come before the numbers).
fn widths(path: &Path) -> Vec<(f64, u64)> {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (lo, hi, trials) = (at("ci_low"), at("ci_high"), at("trials"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let shift = f.len() - header.len();
            (
                f[hi + shift].parse::<f64>().unwrap() - f[lo + shift].parse::<f64>().unwrap(),
                f[trials + shift].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_interval_reaches_the_precision_with_the_same_bytes_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::shipped("frontier_illustrative_crt.toml");
    // Frontier battles are simulated only: every run must be taken to the precision.
    let text = fs::read_to_string(&file).unwrap();
    assert!(text.contains("trials = 100_000"), "{}", file.display());
    let text = text.replace("trials = 100_000", "trials = 10_000_000\nprecision = 0.003");
    fs::write(dir.path().join("f.toml"), text).unwrap();
    for threads in ["1", "2"] {
        let (code, _, stderr) = battlelab(
            dir.path(),
            &[
                "run",
                "f.toml",
                "--threads",
                threads,
                "--out",
                &format!("t{threads}"),
                "-q",
            ],
        );
        assert_eq!(code, Some(0), "{stderr}");
    }
    let rows = widths(&dir.path().join("t1/results.csv"));
    assert!(!rows.is_empty());
    for (width, trials) in &rows {
        assert!(
            *width <= 2.0 * 0.003 + 1e-12,
            "an interval {width} wide at {trials} trials"
        );
        assert_eq!(trials % 65_536, 0, "whole blocks");
    }
    // Runs stop when they are precise: far below the cap, and not all alike.
    let mut trials: Vec<u64> = rows.iter().map(|r| r.1).collect();
    trials.sort_unstable();
    trials.dedup();
    assert!(
        trials.len() > 1 && *trials.last().unwrap() < 10_000_000,
        "{trials:?}"
    );
    for f in [
        "results.csv",
        "results.parquet",
        "metrics.csv",
        "distributions.csv",
        "manifest.json",
    ] {
        assert_eq!(
            fs::read(dir.path().join("t1").join(f)).unwrap(),
            fs::read(dir.path().join("t2").join(f)).unwrap(),
            "{f} differs between 1 and 2 threads"
        );
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("t1/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["precision"], 0.003);
    assert_eq!(
        manifest["run_trials"].as_array().unwrap().len(),
        manifest["runs"].as_u64().unwrap() as usize
    );
    // The flag overrides the file; a precision cannot be sharded.
    let (code, _, stderr) = battlelab(
        dir.path(),
        &[
            "run",
            "f.toml",
            "--precision",
            "0.01",
            "--out",
            "flag",
            "-q",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let coarse = widths(&dir.path().join("flag/results.csv"));
    assert!(coarse.iter().map(|r| r.1).sum::<u64>() < rows.iter().map(|r| r.1).sum::<u64>());
    let (code, _, stderr) = battlelab(
        dir.path(),
        &["run", "f.toml", "--shard", "1/2", "--out", "s", "-q"],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("cannot be split into shards"), "{stderr}");
}
