//! `battlelab compare` (issue 13): paired tests where the arms share their dice, the
//! independent test where they do not, exact differences where both arms are exact, the
//! multiple-comparison correction, and the JSON shape scripts read.

use std::fs;
use std::path::Path;

mod common;

use common::battlelab;
use serde_json::Value;

/// A field analysis over odds × DRM (28 grid points, simulated only) with a variant.
fn field(variant_rules: &str, seed: u64) -> String {
    format!(
        r#"name = "cmp"
system = "field"
seed = {seed}
trials = 200_000
exact = false
[side.a]
sp = 12
morale = 2
tactic = "uniform"
[side.b]
sp = 8
morale = 2
tactic = "uniform"
[sweep]
odds = ["1:1", "3:2", "2:1", "3:1"]
drm = {{ from = -3, to = 3 }}
[[variant]]
name = "printed"
[[variant]]
name = "changed"
rules = {{ {variant_rules} }}
"#
    )
}

fn json(cwd: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json", "-q"]);
    let (code, stdout, stderr) = battlelab(cwd, &all);
    assert_eq!(code, Some(0), "{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn identical_variants_never_differ_and_the_json_has_its_shape() {
    let dir = tempfile::tempdir().unwrap();
    // The same rules under two names: the same dice, so every difference is 0.
    fs::write(dir.path().join("a.toml"), field("round_limit = 6", 3)).unwrap();
    let out = json(
        dir.path(),
        &["compare", "a.toml", "--variants", "printed,changed"],
    );
    assert_eq!(out["a"], "printed");
    assert_eq!(out["b"], "changed");
    assert_eq!(out["method"]["paired"], true);
    assert_eq!(out["method"]["alpha"], 0.05);
    assert!(out["method"]["correction"]
        .as_str()
        .unwrap()
        .contains("Holm"));
    let cells = out["cells"].as_array().unwrap();
    let runs: std::collections::HashSet<String> =
        cells.iter().map(|c| c["run"].to_string()).collect();
    assert_eq!(runs.len(), 28, "every grid point compared");
    for cell in cells {
        for key in [
            "run",
            "outcome",
            "p_a",
            "p_b",
            "diff",
            "ci_low",
            "ci_high",
            "exact_diff",
            "p_value",
            "significant",
            "variance_ratio",
        ] {
            assert!(cell.get(key).is_some(), "{key} missing: {cell}");
        }
        assert_eq!(cell["diff"], 0.0);
        assert_eq!(cell["significant"], false);
        assert!(cell["run"]["odds"].is_string() && cell["run"]["drm"].is_string());
    }
    assert!(out["summary"]
        .as_str()
        .unwrap()
        .starts_with("no significant change"));
}

#[test]
fn a_changed_crt_cell_is_found_with_the_pairing_and_only_where_it_is_exactly() {
    let dir = tempfile::tempdir().unwrap();
    // Modified roll 8 reads 1/1 instead of the printed result.
    let text = field(r#"crt = { "8" = "1/1" }"#, 11);
    fs::write(dir.path().join("sim.toml"), &text).unwrap();
    fs::write(
        dir.path().join("exact.toml"),
        text.replace("exact = false", "exact = true"),
    )
    .unwrap();
    let sim = json(
        dir.path(),
        &["compare", "sim.toml", "--variants", "printed,changed"],
    );
    let exact = json(
        dir.path(),
        &["compare", "exact.toml", "--variants", "printed,changed"],
    );
    let key = |c: &Value| format!("{}|{}|{}", c["run"]["odds"], c["run"]["drm"], c["outcome"]);
    let moved_exactly: std::collections::HashSet<String> = exact["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["exact_diff"].as_f64().unwrap().abs() > 1e-9)
        .map(key)
        .collect();
    let flagged: Vec<&Value> = sim["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["significant"] == true)
        .collect();
    assert!(flagged.len() > 20, "only {} cells flagged", flagged.len());
    // A flagged cell is one the change moves (a false discovery would break this; Holm
    // holds their chance under 5% for the whole family).
    for c in &flagged {
        assert!(
            moved_exactly.contains(&key(c)),
            "flagged a cell the change does not move: {c}"
        );
    }
    // Every flagged cell's sign is the exact one.
    let exact_by_key: std::collections::HashMap<String, f64> = exact["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (key(c), c["exact_diff"].as_f64().unwrap()))
        .collect();
    for c in &flagged {
        assert_eq!(
            c["diff"].as_f64().unwrap().signum(),
            exact_by_key[&key(c)].signum(),
            "{c}"
        );
    }
    // The pairing's gain: paired variance far below independent arms' for moved cells.
    let ratios: Vec<f64> = flagged
        .iter()
        .filter_map(|c| c["variance_ratio"].as_f64())
        .collect();
    let median = {
        let mut r = ratios.clone();
        r.sort_by(f64::total_cmp);
        r[r.len() / 2]
    };
    assert!(median < 0.2, "median variance ratio {median}");
}

#[test]
fn independent_arms_hold_the_family_wise_rate() {
    // Two simulated runs of the same rules with different seeds: no true difference, and
    // the dice are not shared, so every cell takes the independent test; with Holm's
    // correction a family (one comparison) is flagged at most 5% of the time. The 40
    // families are independent, so the number flagged is at most Binomial(40, 0.05):
    // P(X > 7) = 1 − Σ_{x≤7} C(40, x)·0.05^x·0.95^(40−x) ≈ 0.0007 < 1%.
    let dir = tempfile::tempdir().unwrap();
    // The field analysis without its variants: 28 simulated runs (exact = false).
    let analysis = |seed: u64| {
        let text = field("round_limit = 6", seed);
        let cut = text.find("[[variant]]").unwrap();
        text[..cut].to_string()
    };
    let mut flagged_families = 0;
    for k in 0..40u64 {
        for (file, seed) in [("a.toml", 1000 + 2 * k), ("b.toml", 1001 + 2 * k)] {
            fs::write(dir.path().join(file), analysis(seed)).unwrap();
        }
        let out = json(
            dir.path(),
            &["compare", "a.toml", "b.toml", "--trials", "20000"],
        );
        assert_eq!(out["method"]["paired"], false);
        let cells = out["cells"].as_array().unwrap();
        assert!(!cells.is_empty());
        for c in cells {
            assert!(c["p_value"].is_number(), "no p-value: {c}");
            assert_eq!(c["test"], "independent", "{c}");
            assert!(c["exact_diff"].is_null(), "{c}");
        }
        if cells.iter().any(|c| c["significant"] == true) {
            flagged_families += 1;
        }
    }
    assert!(
        flagged_families <= 7,
        "{flagged_families} of 40 families flagged"
    );
}

#[test]
fn reports_are_compared_paired_when_they_share_their_dice_else_by_totals() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.toml"), field("round_limit = 6", 5)).unwrap();
    fs::write(
        dir.path().join("b.toml"),
        field(r#"crt = { "8" = "1/1" }"#, 5),
    )
    .unwrap();
    for (file, out) in [("a.toml", "ra"), ("b.toml", "rb")] {
        let (code, _, stderr) = battlelab(
            dir.path(),
            &["run", file, "--trials", "131072", "--out", out, "-q"],
        );
        assert_eq!(code, Some(0), "{stderr}");
    }
    let out = json(dir.path(), &["compare", "ra", "rb"]);
    assert_eq!(out["method"]["paired"], true, "{}", out["method"]);
    assert!(out["cells"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["significant"] == true));
    // Another seed for one report: only totals can be compared.
    let (code, _, stderr) = battlelab(
        dir.path(),
        &[
            "run", "b.toml", "--trials", "131072", "--seed", "6", "--out", "rc", "-q",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let out = json(dir.path(), &["compare", "ra", "rc"]);
    assert_eq!(out["method"]["paired"], false);
    assert!(out["method"]["pairing"]
        .as_str()
        .unwrap()
        .contains("independent"));
}

#[test]
fn bad_comparisons_are_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.toml"), field("round_limit = 6", 5)).unwrap();
    let storm = common::shipped("storm.toml");
    for (args, needle) in [
        (vec!["compare", "a.toml"], "--variants A,B"),
        (
            vec!["compare", "a.toml", "--variants", "printed"],
            "two names",
        ),
        (
            vec!["compare", "a.toml", "--variants", "printed,nope"],
            "no variant \"nope\"",
        ),
        (
            vec!["compare", "a.toml", storm.to_str().unwrap()],
            "do not have the same plan",
        ),
        (
            vec![
                "compare",
                "a.toml",
                "--variants",
                "printed,changed",
                "--alpha",
                "2",
            ],
            "between 0 and 1",
        ),
    ] {
        let (code, stdout, stderr) = battlelab(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(needle),
            "{args:?}: `{needle}` not in {stderr}"
        );
        assert!(stdout.is_empty());
    }
}

#[test]
fn a_compare_report_folder_holds_frames_heatmaps_and_tables() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("a.toml"),
        field(r#"crt = { "8" = "1/1" }"#, 5),
    )
    .unwrap();
    let (code, _, stderr) = battlelab(
        dir.path(),
        &[
            "compare",
            "a.toml",
            "--variants",
            "printed,changed",
            "--trials",
            "65536",
            "--out",
            "cmp",
            "--fdr",
            "-q",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let files: Vec<String> = fs::read_dir(dir.path().join("cmp"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for f in [
        "compare.csv",
        "compare.json",
        "tables.md",
        "manifest.json",
        "diff_a_wins.png",
        "diff_a_wins.svg",
    ] {
        assert!(files.iter().any(|n| n == f), "{f} missing from {files:?}");
    }
    let md = fs::read_to_string(dir.path().join("cmp/tables.md")).unwrap();
    assert!(md.contains("Benjamini-Hochberg"), "{md}");
}

/// A small comparison whose text table is pinned: two odds, two rounds, the arms named
/// by their variants (not P(A)/P(B), which read as the sides), outcomes that neither arm
/// reached left out and counted.
const SMALL: &str = r#"name = "small"
system = "field"
seed = 21
trials = 4000
exact = false
[side.a]
sp = 6
morale = 2
tactic = "uniform"
[side.b]
sp = 4
morale = 2
tactic = { mix = { skirmish = 1, square = 1 } }
[sweep]
odds = ["1:1", "2:1"]
[rules]
round_limit = 2
[[variant]]
name = "printed"
[[variant]]
name = "cap 1"
rules = { drm_cap = 1 }
"#;

#[test]
fn the_text_table_names_the_arms_and_leaves_out_what_neither_reached() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("small.toml"), SMALL).unwrap();
    let args = ["compare", "small.toml", "--variants", "printed,cap 1", "-q"];
    let (code, text, stderr) = battlelab(dir.path(), &args);
    assert_eq!(code, Some(0), "{stderr}");
    insta::assert_snapshot!("compare_text_table", text);
    // The same names and the same cells in every format.
    let header = text.lines().nth(4).unwrap();
    assert!(
        header.contains("P(printed)")
            && header.contains("P(cap 1)")
            && header.contains("cap 1 − printed"),
        "{header}"
    );
    assert!(!text.contains("P(A)") && !text.contains("P(B)"), "{text}");
    let json = json(dir.path(), &args[..4]);
    let cells = json["cells"].as_array().unwrap();
    let left_out = json["left_out"].as_u64().unwrap();
    assert!(
        left_out > 0,
        "B never withdraws here, so some outcomes are 0 in both arms"
    );
    assert!(
        text.contains(&format!("{left_out} cell(s) left out")),
        "{text}"
    );
    // 2 runs × 8 outcomes, less those left out.
    assert_eq!(cells.len() as u64 + left_out, 16);
    for c in cells {
        assert!(
            c["p_a"].as_f64().unwrap() > 0.0 || c["p_b"].as_f64().unwrap() > 0.0,
            "{c}"
        );
        assert_ne!(c["outcome"], "B withdraws", "{c}");
    }
    let (code, csv, _) = battlelab(dir.path(), &[&args[..4], &["--format", "csv"]].concat());
    assert_eq!(code, Some(0));
    assert!(
        csv.starts_with("odds,outcome,P(printed),P(cap 1),cap 1 − printed,ci_low"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + cells.len());
    let (code, md, _) = battlelab(dir.path(), &[&args[..4], &["--format", "md"]].concat());
    assert_eq!(code, Some(0));
    assert!(
        md.contains("| run | outcome | P(printed) | P(cap 1) | cap 1 − printed |"),
        "{md}"
    );
    assert!(md.contains(&format!("{left_out} cell(s) left out")), "{md}");
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| odds=")).count(),
        cells.len()
    );
}

/// Identical arms: every difference is exactly 0, so every p-value is 1 and nothing is
/// significant, whatever α and correction; exact arms the same, exactly.
#[test]
fn a_difference_of_exactly_zero_is_never_significant() {
    let dir = tempfile::tempdir().unwrap();
    let same = SMALL.replace("rules = { drm_cap = 1 }", "rules = { drm_cap = 4 }");
    fs::write(dir.path().join("same.toml"), &same).unwrap();
    fs::write(
        dir.path().join("exact.toml"),
        same.replace("exact = false", "exact = true"),
    )
    .unwrap();
    for file in ["same.toml", "exact.toml"] {
        let out = json(
            dir.path(),
            &[
                "compare",
                file,
                "--variants",
                "printed,cap 1",
                "--fdr",
                "--alpha",
                "0.999",
            ],
        );
        let cells = out["cells"].as_array().unwrap();
        assert!(!cells.is_empty());
        for c in cells {
            assert_eq!(c["diff"], 0.0, "{c}");
            assert_eq!(c["significant"], false, "{c}");
            if file == "same.toml" {
                assert_eq!(c["p_value"], 1.0, "{c}");
            } else {
                assert_eq!(c["test"], "exact", "{c}");
            }
        }
        assert!(out["summary"]
            .as_str()
            .unwrap()
            .starts_with("no significant change"));
    }
}
