//! `battlelab value` and `battlelab solve` against answers found another way: the exact
//! results of plain runs (`battlelab run`), hand-computed single-d6 odds, and the bad
//! inputs each command must refuse with exit 2. Each case issue 40's designers found has
//! its test here: a side's modifier changing both sides (melee, ratio), odds equivalents
//! read past the table or not at all leftward, solve answering the end of the range on a
//! falling curve, and settings the plan itself sets priced as "0".

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

/// `battlelab solve FILE --target T --vary V [extra…] --format json --quiet`.
fn solve_json(file: &Path, target: &str, vary: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "solve",
        file.to_str().unwrap(),
        "--target",
        target,
        "--vary",
        vary,
        "--format",
        "json",
        "--quiet",
    ];
    args.extend(extra);
    json_of(&args)
}

/// The cell of `modifier` (by position in the answer) at the run whose `axis` is `value`.
fn cell<'a>(v: &'a Value, modifier: usize, axis: &str, value: &str) -> &'a Value {
    v["modifiers"][modifier]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run"][axis] == value)
        .unwrap_or_else(|| panic!("no run {axis}={value} in {v}"))
}

/// P(A wins), exact, by the value of `axis` (e.g. a.skill/a.defense pairs joined by ","),
/// from a plain run's results.csv.
fn exact_by(
    file: &Path,
    outcome_matches: &dyn Fn(&str) -> bool,
    axes: &[&str],
) -> HashMap<String, f64> {
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
    let (outcome, exact) = (col("outcome"), col("exact"));
    let mut totals: HashMap<String, f64> = HashMap::new();
    for fields in lines.map(csv_fields) {
        if outcome_matches(&fields[outcome]) {
            let key = axes
                .iter()
                .map(|a| fields[col(a)].as_str())
                .collect::<Vec<_>>()
                .join(",");
            *totals.entry(key).or_default() += fields[exact].parse::<f64>().unwrap();
        }
    }
    totals
}

/// One CSV line's fields ("A wins, B holds" quoted; no quotes inside fields here).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for ch in line.chars() {
        match ch {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[test]
fn a_melee_sides_modifier_changes_that_side_only_when_both_sides_field_one_profile() {
    // Both sides field "militia". The plain runs sweep side A's own skill and defense (a
    // sweep sets side A's unit alone); value's a.skill+1 and a.defense+1 must be those
    // runs exactly, and each helps A. (Moving the shared profile moved both sides: a.skill+1
    // priced exactly 0 and a.defense+1 lowered A's chance.)
    let plain = exact_by(
        &designer("melee_shared_profile_swept.toml"),
        &|o| o == "B destroyed" || o == "B flees",
        &["a_skill", "a_defense"],
    );
    let v = value_json(
        "melee_shared_profile.toml",
        &["a.skill+1", "a.defense+1", "b.skill+1"],
    );
    // (results.csv prints the exact values as decimals: equal to 1e-12.)
    let close = |a: &Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-12;
    let skill = &v["modifiers"][0]["runs"][0];
    let defense = &v["modifiers"][1]["runs"][0];
    assert!(close(&skill["base"], plain["3,3"]), "{skill}");
    assert!(close(&skill["with"], plain["4,3"]), "{skill}");
    assert!(close(&defense["with"], plain["3,4"]), "{defense}");
    for cell in [skill, defense] {
        assert!(cell["exact_delta"].as_f64().unwrap() > 0.0, "{cell}");
    }
    // B's skill+1 hurts A; a.skill is the currency, so a.skill+1 is one point of skill.
    let b = &v["modifiers"][2]["runs"][0];
    assert!(b["exact_delta"].as_f64().unwrap() < 0.0, "{b}");
    assert_eq!(skill["equivalent"]["value"].as_f64(), Some(1.0));
}

#[test]
fn a_ratio_sides_modifier_moves_the_units_that_set_their_own() {
    // Side A: argument 0, units [{ argument = 1 }, {}]. a.argument+1 is every A unit one
    // better: the plain file with argument 1 and units [{ argument = 2 }, {}].
    let plain = exact_by(
        &designer("ratio_listed_units_plus_one.toml"),
        &|o| o.contains("A wins"),
        &["variant"],
    );
    let v = value_json("ratio_listed_units.toml", &["a.argument+1"]);
    let cell = &v["modifiers"][0]["runs"][0];
    assert!(
        (cell["with"].as_f64().unwrap() - plain["base"]).abs() < 1e-12,
        "{cell} vs {}",
        plain["base"]
    );
    // The currency (a.units) is a list here: said, not "beyond".
    assert!(
        cell["equivalent"]["note"]
            .as_str()
            .unwrap()
            .contains("a.units cannot be moved in this file"),
        "{cell}"
    );
}

#[test]
fn odds_steps_and_equivalents_run_along_the_columns_the_rules_have() {
    let v = value_json(
        "field_odds.toml",
        &["odds+1", "odds-1", "a.drm-1", "a.drm+1"],
    );
    let base = |odds: &str| cell(&v, 0, "odds", odds)["base"].as_f64().unwrap();
    // Past the last printed column (3:1) and before the first (1:1): beyond the table,
    // no price (there is no 4:1 row to read; 4:1 battles read the 3:1 row).
    for (m, odds) in [(0, "3:1"), (1, "1:1")] {
        let c = cell(&v, m, "odds", odds);
        assert!(c["with"].is_null() && c["delta"].is_null(), "{c}");
        assert!(
            c["not_priced"]
                .as_str()
                .unwrap()
                .starts_with("beyond the table"),
            "{c}"
        );
    }
    // A step that exists is worth exactly one column, either way.
    assert_eq!(
        cell(&v, 0, "odds", "2:1")["with"].as_f64(),
        Some(base("3:1"))
    );
    assert_eq!(
        cell(&v, 1, "odds", "3:2")["with"].as_f64(),
        Some(base("1:1"))
    );
    assert_eq!(
        cell(&v, 1, "odds", "3:2")["equivalent"]["value"].as_f64(),
        Some(-1.0)
    );
    // a.drm-1 at 3:2 lands between 1:1 and 3:2: a negative fraction of a column, x, with
    // P(1:1) + (x + 1)(P(3:2) − P(1:1)) = P(with).
    let c = cell(&v, 2, "odds", "3:2");
    let x = c["equivalent"]["value"].as_f64().expect("converted");
    assert!((-1.0..0.0).contains(&x), "{c}");
    let (p0, p1, with) = (base("1:1"), base("3:2"), c["with"].as_f64().unwrap());
    assert!(p0 < with && with < p1, "{c}");
    assert!((p0 + (x + 1.0) * (p1 - p0) - with).abs() < 1e-12, "{c}");
    // Below every column's P(A wins) (a.drm-1 at 1:1), above every one (a.drm+1 at 3:1):
    // beyond the table, said so.
    for (m, odds) in [(2, "1:1"), (3, "3:1")] {
        let c = cell(&v, m, "odds", odds);
        assert!(c["equivalent"]["value"].is_null(), "{c}");
        assert_eq!(
            c["equivalent"]["note"].as_str(),
            Some("beyond the table (1:1 … 3:1)"),
            "{c}"
        );
    }

    // The file adds a 4:1 column: 3:1 now steps to it, and the 4:1 row is its own.
    let added = value_json("field_odds_added.toml", &["odds+1", "a.drm+1"]);
    let base_added = |odds: &str| cell(&added, 0, "odds", odds)["base"].as_f64().unwrap();
    let up = cell(&added, 0, "odds", "3:1");
    assert_eq!(up["with"].as_f64(), Some(base_added("4:1")), "{up}");
    assert_eq!(up["equivalent"]["value"].as_f64(), Some(1.0), "{up}");
    assert_ne!(base_added("4:1"), base_added("3:1"));
    assert!(cell(&added, 0, "odds", "4:1")["not_priced"]
        .as_str()
        .unwrap()
        .contains("past its last column (1:1, 3:2, 2:1, 3:1, 4:1)"));
    // a.drm+1 at 3:1 reaches into the added column, or past it: never read off a
    // column the rules do not have.
    let c = cell(&added, 1, "odds", "3:1");
    match c["equivalent"]["value"].as_f64() {
        Some(x) => {
            assert!((0.0..=1.0).contains(&x), "{c}");
            let (p0, p1) = (base_added("3:1"), base_added("4:1"));
            assert!((p0 + x * (p1 - p0) - c["with"].as_f64().unwrap()).abs() < 1e-12);
        }
        None => assert_eq!(
            c["equivalent"]["note"].as_str(),
            Some("beyond the table (1:1 … 4:1)"),
            "{c}"
        ),
    }

    // A naval engagement's table stops at 2-1.
    let naval = common::shipped("naval_engagement.toml");
    let v = json_of(&[
        "value",
        naval.to_str().unwrap(),
        "--modifier",
        "odds+1",
        "--format",
        "json",
        "--quiet",
    ]);
    for run in v["modifiers"][0]["runs"].as_array().unwrap() {
        let priced = run["with"].is_f64();
        assert_eq!(priced, run["run"]["odds"] != "2:1", "{run}");
        if !priced {
            assert!(run["not_priced"]
                .as_str()
                .unwrap()
                .contains("(1-1, 3-2, 2-1)"));
        }
    }
}

#[test]
fn solve_finds_the_threshold_of_a_falling_curve_exactly() {
    // P(no SP lost) = (1 − drm)/6, clamped: 1 at drm −6 … −5, then 5/6, 4/6, 3/6 at −2,
    // 2/6 … It holds ">= 0.5" from −6 to −2 and stops holding after −2, where P = 1/2
    // exactly. (The smallest value meeting the target was −6, the end of the range.)
    let file = designer("attrition_falling.toml");
    let v = solve_json(&file, "no_loss >= 0.5", "drm", &[]);
    assert_eq!(v["best"][0]["value"], -2, "{v}");
    assert_eq!(v["best"].as_array().unwrap().len(), 1);
    assert_eq!(v["holds"], serde_json::json!([-6, -5, -4, -3, -2]));
    assert_eq!(v["holds_in"], serde_json::json!(["-6..-2"]));
    assert_eq!(v["edges"][0]["between"], serde_json::json!([-2, -1]));
    assert_eq!(v["edges"][0]["kind"], "stops holding");
    assert_eq!(v["curve"][4]["fraction"], "1/2");
    for point in v["curve"].as_array().unwrap() {
        let d = point["value"].as_i64().unwrap();
        let hand = (1 - d).clamp(0, 6) as f64 / 6.0;
        assert_eq!(point["probability"].as_f64(), Some(hand), "{point}");
    }
    // Decided on fractions: 1/3 is above 0.3333333333333333, so "<=" starts holding at 0
    // (1/6), not at −1 (1/3), though 1/3 and that decimal are one float.
    let v = solve_json(&file, "no_loss <= 0.3333333333333333", "drm", &[]);
    assert_eq!(v["best"][0]["value"], 0, "{v}");
    assert_eq!(v["edges"][0]["kind"], "starts holding");
    // Everywhere and nowhere in the range are said so.
    let v = solve_json(&file, "no_loss >= 0", "drm", &["--from", "-1", "--to", "2"]);
    assert_eq!(
        v["verdict"],
        "holds everywhere in -1..2: no edge in this range"
    );
    assert!(v["best"].as_array().unwrap().is_empty());
    let v = solve_json(
        &file,
        "no_loss >= 0.9",
        "drm",
        &["--from", "-1", "--to", "2"],
    );
    assert_eq!(v["verdict"], "holds nowhere in -1..2");
}

#[test]
fn a_setting_the_plan_sets_is_refused_or_left_out_naming_what_sets_it() {
    // A frontier file's sensitivity runs set side A's level themselves: a.level+1 is not
    // priced there (it was priced "0"), and is priced where the file's level is in force.
    let frontier = common::shipped("frontier_illustrative_crt.toml");
    let v = json_of(&[
        "value",
        frontier.to_str().unwrap(),
        "--modifier",
        "a.level+1",
        "--trials",
        "2000",
        "--format",
        "json",
        "--quiet",
    ]);
    let runs = v["modifiers"][0]["runs"].as_array().unwrap();
    let levels: Vec<&Value> = runs
        .iter()
        .filter(|r| r["run"]["sensitivity"] == "levels")
        .collect();
    assert_eq!(levels.len(), 5);
    for r in levels {
        assert!(r["delta"].is_null(), "{r}");
        assert!(r["not_priced"]
            .as_str()
            .unwrap()
            .contains("sensitivity.levels"));
    }
    let written = runs
        .iter()
        .find(|r| r["run"]["sensitivity"] == "as written")
        .unwrap();
    assert!(written["delta"].as_f64().unwrap() > 0.0, "{written}");
    // The attrition turns study's runs end in SP left, not SP lost: "P(no SP lost)" is
    // not theirs, so they are not listed (they were, at 0 → 0).
    let attrition = common::shipped("attrition.toml");
    let v = json_of(&[
        "value",
        attrition.to_str().unwrap(),
        "--format",
        "json",
        "--quiet",
    ]);
    let runs = v["modifiers"][0]["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    assert!(runs.iter().all(|r| r["run"].get("turns").is_none()), "{v}");
}

#[test]
fn bad_input_is_named_with_exit_2() {
    let field = designer("field_small.toml");
    let field = field.to_str().unwrap();
    let field_odds = designer("field_odds.toml");
    let field_odds = field_odds.to_str().unwrap();
    let ratio_size = designer("ratio_size.toml");
    let ratio_size = ratio_size.to_str().unwrap();
    let ratio_listed = designer("ratio_listed_units.toml");
    let ratio_listed = ratio_listed.to_str().unwrap();
    let naval = common::shipped("naval_engagement.toml");
    let frontier = common::shipped("frontier_illustrative_crt.toml");
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
            "no setting \"luck\"; the settings are: terrain_drm, a.sp, b.sp",
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
            "3 runs match; hold the others with --where (columns: variant, odds)",
        ),
        // The selection is checked before any candidate is built: a.leader=4 would be
        // refused too, but the missing --where is said first.
        (
            vec![
                "solve", field, "--target", "A wins = 0.5", "--vary", "a.leader", "--to", "9",
            ],
            "15 runs match; hold the others with --where (columns: variant, odds, drm)",
        ),
        (
            vec![
                "solve", field, "--target", "A wins = 0.5", "--vary", "drm", "--where",
                "drm=0", "--where", "odds=1:1",
            ],
            "--where drm: drm is the setting --vary sets",
        ),
        (
            vec![
                "solve", field, "--target", "A wins >= half", "--vary", "drm", "--where",
                "odds=1:1",
            ],
            "--target: \"half\" is not a number",
        ),
        // Settings the plan sets at every run: refused, naming what sets them and what to
        // price instead (they were priced "0" and "+0.00 odds columns").
        (
            vec!["value", field_odds, "--modifier", "a.sp+5"],
            "a.sp+5: a.sp is set by [sweep] odds, which sets A's SP to ⌈B's SP × L/S⌉ here, so changing it changes nothing; price odds±N",
        ),
        (
            vec![
                "solve", field_odds, "--target", "A wins >= 0.5", "--vary", "a.sp", "--where",
                "odds=3:2",
            ],
            "--vary a.sp: a.sp is set by [sweep] odds",
        ),
        (
            vec!["value", naval.to_str().unwrap(), "--modifier", "a.nsp+1"],
            "a.nsp is set by [sweep] odds, which sets A's NSP",
        ),
        (
            vec!["value", ratio_size, "--modifier", "a.units+1"],
            "a.units is set by [sweep] size, which sets both sides' unit counts here, so changing it changes nothing; sweep a.units and b.units in place of size",
        ),
        (
            vec![
                "solve", ratio_listed, "--target", "a_wins >= 0.5", "--vary", "a.argument",
            ],
            "--vary a.argument: side.a.units[0] sets its own argument",
        ),
        (
            vec![
                "solve", frontier.to_str().unwrap(), "--target", "A victory >= 0.5", "--vary",
                "a.level", "--where", "sensitivity=levels", "--where", "setting=+1",
            ],
            "a.level is set by sensitivity.levels",
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
    assert!(
        text.contains("a.drm+1 (side A: a DRM in this side's favour)"),
        "{text}"
    );
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
