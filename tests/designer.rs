//! `battlelab value` and `battlelab solve` against answers found another way: the exact
//! results of plain runs (`battlelab run`), hand-computed single-d6 odds, and the bad
//! inputs each command must refuse with exit 2.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::battlelab;
use serde_json::Value;

fn designer(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/designer")
        .join(name)
}

fn json_of(args: &[&str]) -> Value {
    let (code, out, err) = battlelab(Path::new(env!("CARGO_MANIFEST_DIR")), args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// `battlelab value FILE --modifier M… --format json --quiet`.
fn value_json(file: &str, modifiers: &[&str]) -> Value {
    let path = designer(file);
    let mut args = vec![
        "value",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--quiet",
    ];
    for m in modifiers {
        args.extend(["--modifier", m]);
    }
    json_of(&args)
}

/// P(A wins), exact, by (odds, drm) from a plain run's results.csv.
fn exact_a_wins(file: &Path) -> HashMap<(String, i64), f64> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let (code, _, err) = battlelab(
        dir.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (odds, drm, outcome, exact) = (col("odds_label"), col("drm"), col("outcome"), col("exact"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[outcome] == "A wins")
        .map(|f| {
            (
                (f[odds].to_string(), f[drm].parse().unwrap()),
                f[exact].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_drm_plus_one_is_the_exact_difference_of_two_plain_runs() {
    // a.drm+1 moves side A's own DRM; the plain runs move the swept extra DRM. Both add
    // one to the net DRM, so every delta must equal P(d+1) − P(d) of the plain runs.
    let plain = exact_a_wins(&designer("field_small_wide.toml"));
    let v = value_json("field_small.toml", &["a.drm+1"]);
    let runs = v["modifiers"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 15, "3 odds × 5 DRMs");
    for run in runs {
        let odds = run["run"]["odds"].as_str().unwrap().to_string();
        let drm: i64 = run["run"]["drm"].as_str().unwrap().parse().unwrap();
        let expected = plain[&(odds.clone(), drm + 1)] - plain[&(odds.clone(), drm)];
        let delta = run["exact_delta"]
            .as_f64()
            .expect("exact runs give exact deltas");
        assert!(
            (delta - expected).abs() < 1e-9,
            "{odds} drm {drm}: {delta} vs {expected}"
        );
        assert_eq!(run["delta"].as_f64(), Some(delta));
        assert!((run["base"].as_f64().unwrap() - plain[&(odds.clone(), drm)]).abs() < 1e-12);
    }
}

#[test]
fn an_odds_column_is_worth_one_odds_column_and_equivalents_lie_on_the_curve() {
    let v = value_json("field_small.toml", &["odds+1", "a.drm+1"]);
    let plain = exact_a_wins(&designer("field_small_wide.toml"));
    for run in v["modifiers"][0]["runs"].as_array().unwrap() {
        if let Some(e) = run["equivalent"]["value"].as_f64() {
            assert!((e - 1.0).abs() < 1e-9, "odds+1 is one column: {run}");
        }
        assert_eq!(run["equivalent"]["unit"], "odds columns");
    }
    // a.drm+1 at 1:1: the equivalent x puts P(with) on the odds curve between 1:1 and 3:2.
    for run in v["modifiers"][1]["runs"].as_array().unwrap() {
        if run["run"]["odds"] != "1:1" {
            continue;
        }
        let drm: i64 = run["run"]["drm"].as_str().unwrap().parse().unwrap();
        let Some(x) = run["equivalent"]["value"].as_f64() else {
            continue;
        };
        if !(0.0..=1.0).contains(&x) {
            continue;
        }
        let (p0, p1) = (plain[&("1:1".into(), drm)], plain[&("3:2".into(), drm)]);
        let with = run["with"].as_f64().unwrap();
        assert!((p0 + x * (p1 - p0) - with).abs() < 1e-9, "{run}");
    }
}

#[test]
fn simulated_deltas_hold_the_exact_ones_within_their_intervals() {
    // The same battles simulated (exact = false), 2,000,000 per arm, seed 7: each paired
    // delta within four of its standard errors (the 95% half-width / t) of the exact one.
    // The standard error is estimated from the blocks' differences: with 31 blocks (t with
    // 30 df) a miss of four is about 4e-4 each, 0.6% over the 15 runs. (At 200,000, 4
    // blocks, t with 3 df has tails so heavy that a miss of four was 2.8% each, about a
    // third over the 15.)
    let exact = value_json("field_small.toml", &["a.drm+1"]);
    let simulated = value_json("field_small_simulated.toml", &["a.drm+1"]);
    let (e, s) = (
        exact["modifiers"][0]["runs"].as_array().unwrap(),
        simulated["modifiers"][0]["runs"].as_array().unwrap(),
    );
    assert_eq!(e.len(), s.len());
    for (e, s) in e.iter().zip(s) {
        assert!(s["exact_delta"].is_null());
        let (lo, hi, d) = (
            s["ci_low"].as_f64().unwrap(),
            s["ci_high"].as_f64().unwrap(),
            s["delta"].as_f64().unwrap(),
        );
        // 31 blocks → t(0.975, 30) = 2.042.
        let se = (hi - lo) / 2.0 / 2.042_272_456;
        let truth = e["exact_delta"].as_f64().unwrap();
        assert!((d - truth).abs() <= 4.0 * se + 1e-12, "{s} vs {truth}");
        assert!(hi > lo, "a simulated delta has a real interval");
    }
}

#[test]
fn solve_finds_the_hand_computed_drm_on_a_single_d6_table() {
    // Blockade: E on a modified 6 or more, so P(E) = (1 + drm)/6 for drm 0 … 5.
    let v = json_of(&[
        "solve",
        common::shipped("blockade.toml").to_str().unwrap(),
        "--target",
        "E = 0.5",
        "--vary",
        "drm",
        "--format",
        "json",
        "--quiet",
    ]);
    assert_eq!(v["best"][0]["value"], 2);
    assert_eq!(v["best"][0]["exact"], true);
    for point in v["curve"].as_array().unwrap() {
        let d = point["value"].as_i64().unwrap();
        let hand = ((1 + d).clamp(0, 6)) as f64 / 6.0;
        assert!(
            (point["probability"].as_f64().unwrap() - hand).abs() < 1e-15,
            "{point}"
        );
    }
    let at_least = json_of(&[
        "solve",
        common::shipped("blockade.toml").to_str().unwrap(),
        "--target",
        "E >= 0.6",
        "--vary",
        "drm",
        "--format",
        "json",
        "--quiet",
    ]);
    assert_eq!(
        at_least["best"][0]["value"], 3,
        "4/6 is the first at or above 0.6"
    );
}

#[test]
fn solve_finds_the_smallest_drm_reaching_even_odds_in_a_field_battle() {
    let plain = exact_a_wins(&designer("field_small_wide.toml"));
    for odds in ["1:1", "3:2"] {
        let v = json_of(&[
            "solve",
            designer("field_small.toml").to_str().unwrap(),
            "--target",
            "A wins >= 0.5",
            "--vary",
            "drm",
            "--where",
            &format!("odds={odds}"),
            "--from",
            "-2",
            "--to",
            "3",
            "--format",
            "json",
            "--quiet",
        ]);
        let expected = (-2..=3)
            .find(|&d| plain[&(odds.to_string(), d)] >= 0.5)
            .unwrap();
        assert_eq!(v["best"][0]["value"], expected, "{odds}");
        assert_eq!(v["parameter"], "drm");
        assert_eq!(v["curve"].as_array().unwrap().len(), 6);
    }
}

#[test]
fn bad_input_is_named_with_exit_2() {
    let field = designer("field_small.toml");
    let field = field.to_str().unwrap();
    let setup = common::shipped("setup.toml");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "solve",
                field,
                "--target",
                "A wins >= 0.5",
                "--vary",
                "luck",
                "--where",
                "odds=1:1",
            ],
            "no setting \"luck\"; the settings are: odds, drm",
        ),
        (
            vec![
                "solve",
                field,
                "--target",
                "A wins >= 1.5",
                "--vary",
                "drm",
                "--where",
                "odds=1:1",
            ],
            "must be 0 to 1",
        ),
        (
            vec![
                "solve",
                field,
                "--target",
                "A triumphs = 0.5",
                "--vary",
                "drm",
                "--where",
                "odds=1:1",
            ],
            "no outcome or metric \"A triumphs\"; outcomes: A wins",
        ),
        (
            vec!["solve", field, "--target", "A wins = 0.5", "--vary", "drm"],
            "3 runs match; hold the others with --where",
        ),
        (
            vec![
                "solve",
                field,
                "--target",
                "A wins = 0.5",
                "--vary",
                "a.leader",
                "--where",
                "odds=1:1",
                "--where",
                "drm=0",
                "--to",
                "9",
            ],
            "a.leader=4 cannot be applied",
        ),
        (vec!["value", field, "--modifier", "a.drm"], "a signed step"),
        (
            vec!["value", field, "--modifier", "a.morale+9"],
            "a.morale+9 cannot be applied",
        ),
        (
            vec!["value", field, "--headline", "glory"],
            "no headline \"glory\"",
        ),
        (
            vec!["value", setup.to_str().unwrap()],
            "no settings to price or vary",
        ),
    ];
    for (args, expected) in cases {
        let (code, out, err) = battlelab(Path::new(env!("CARGO_MANIFEST_DIR")), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
    }
}

#[test]
fn value_writes_a_report_with_a_tornado_per_headline() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("worth");
    let (code, text, err) = battlelab(
        dir.path(),
        &[
            "value",
            designer("field_small.toml").to_str().unwrap(),
            "--headline",
            "all",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("a.drm+1 (side A's own DRM)"), "{text}");
    for file in [
        "value.csv",
        "value.parquet",
        "value.json",
        "tables.md",
        "manifest.json",
        "tornado_a_wins.png",
        "tornado_sp_lost_b.svg",
        "index.html",
    ] {
        assert!(out.join(file).is_file(), "{file}");
    }
    let csv = std::fs::read_to_string(out.join("value.csv")).unwrap();
    // 3 headlines × 3 modifiers (from [value]) × 15 runs, and a header.
    assert_eq!(csv.lines().count(), 1 + 3 * 3 * 15, "{csv}");
    // A second run may replace the report; a folder of the user's may not be.
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep").unwrap();
    let (code, _, err) = battlelab(
        dir.path(),
        &[
            "value",
            designer("field_small.toml").to_str().unwrap(),
            "--out",
            mine.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        std::fs::read_to_string(mine.join("notes.txt")).unwrap(),
        "keep"
    );
}
