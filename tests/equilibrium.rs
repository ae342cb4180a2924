//! `battlelab equilibrium`: the JSON shape, mixes that add up to 1, refusals (exit 2) and
//! the report folder; tactic sweeps and `tactic = "equilibrium"` through `run`.

mod common;

use std::fs;

use common::{battlelab, shipped};
use serde_json::Value;

const TACTICS: [&str; 7] = [
    "charge", "envelop", "skirmish", "bombard", "square", "refuse", "withdraw",
];

fn json_of(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = battlelab(dir.path(), args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn json_has_the_documented_shape_and_mixes_add_up_to_one() {
    let file = shipped("field_equilibrium.toml");
    for payoff in ["win", "sp", "smaller loses", "A wins", "B wins,A withdraws"] {
        let json = json_of(&[
            "equilibrium",
            file.to_str().unwrap(),
            "--payoff",
            payoff,
            "--format",
            "json",
        ]);
        match payoff.split_once(',') {
            Some((first, second)) => assert_eq!(json["payoff"], serde_json::json!([first, second])),
            None => assert_eq!(json["payoff"], payoff),
        }
        // B is the smaller force at every odds: every payoff but "B wins or A withdraws"
        // (A's losses, which B maximises) is A's to maximise.
        let maximiser = if payoff.starts_with("B wins") {
            "b"
        } else {
            "a"
        };
        let points = json["points"].as_array().unwrap();
        // 4 odds × 2 variants.
        assert_eq!(points.len(), 8);
        for point in points {
            let run = point["run"].as_object().unwrap();
            assert!(
                run["odds"].is_string() && run["variant"].is_string(),
                "{run:?}"
            );
            assert!(point["value"].is_f64());
            assert_eq!(point["exact"], true);
            assert_eq!(point["maximiser"], maximiser, "{payoff}");
            assert!(point["of"]
                .as_str()
                .unwrap()
                .starts_with(if payoff == "sp" { "expected SP" } else { "P(" }));
            for side in ["a", "b"] {
                let mix = point[side].as_object().unwrap();
                assert_eq!(mix.len(), 7);
                let total: f64 = TACTICS.iter().map(|t| mix[*t].as_f64().unwrap()).sum();
                assert!((total - 1.0).abs() < 1e-9, "{side}: {total}");
                let shortfall = point["shortfall"][side].as_object().unwrap();
                for t in TACTICS {
                    let s = shortfall[t].as_f64().unwrap();
                    assert!(s >= 0.0);
                    if mix[t].as_f64().unwrap() > 1e-9 {
                        assert!(s < 1e-9, "{side} plays {t} but falls short by {s}");
                    }
                }
                for key in ["dominated", "never_played"] {
                    for t in point[key][side].as_array().unwrap() {
                        assert!(TACTICS.contains(&t.as_str().unwrap()), "{key}: {t}");
                    }
                }
            }
        }
        if payoff != "sp" {
            for point in points {
                let v = point["value"].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&v), "{v}");
            }
        }
    }
}

/// The value with both sides at equilibrium is what `run` finds exactly for P(B loses):
/// the report's rows "A wins" (B broken) and "B withdraws" (alone) added up.
#[test]
fn run_realises_the_value_exactly() {
    let file = shipped("field_equilibrium.toml");
    let json = json_of(&["equilibrium", file.to_str().unwrap(), "--format", "json"]);
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = battlelab(
        dir.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--trials",
            "2000",
            "--out",
            "r",
            "-q",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let results = fs::read_to_string(dir.path().join("r/results.csv")).unwrap();
    for point in json["points"].as_array().unwrap() {
        if point["run"]["variant"] != "both equilibrium" {
            continue;
        }
        let odds = point["run"]["odds"].as_str().unwrap();
        let exact_of = |outcome: &str| -> f64 {
            let line = results
                .lines()
                .find(|l| {
                    l.starts_with("field,both equilibrium,")
                        && l.contains(&format!(",{odds},{outcome},"))
                })
                .unwrap_or_else(|| panic!("no {outcome} row at {odds}"));
            line.split(',').nth(10).unwrap().parse().unwrap()
        };
        let exact = exact_of("A wins") + exact_of("B withdraws");
        let value = point["value"].as_f64().unwrap();
        assert!((exact - value).abs() < 1e-9, "{odds}: {exact} vs {value}");
        // The defender no longer walks away at every odds.
        let withdraw = point["b"]["withdraw"].as_f64().unwrap();
        assert!(withdraw < 1.0 - 1e-9, "{odds}: B withdraws {withdraw}");
    }
}

#[test]
fn bad_payoff_and_non_field_files_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = shipped("field_equilibrium.toml");
    let (code, _, err) = battlelab(
        dir.path(),
        &["equilibrium", file.to_str().unwrap(), "--payoff", "glory"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("glory") && err.contains("win") && err.contains("sp"),
        "{err}"
    );
    let ratio = shipped("ratio_line.toml");
    let (code, out, err) = battlelab(dir.path(), &["equilibrium", ratio.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("\"ratio\"") && err.contains("field battles"),
        "{err}"
    );
    // A bad payoff in the file names the file, the line and the allowed values.
    let text = fs::read_to_string(&file)
        .unwrap()
        .replace("payoff = \"win\"", "payoff = \"glory\"");
    fs::write(dir.path().join("bad.toml"), text).unwrap();
    let (code, _, err) = battlelab(dir.path(), &["equilibrium", "bad.toml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("bad.toml, line") && err.contains("equilibrium.payoff") && err.contains("win"),
        "{err}"
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "a refusal wrote something"
    );
}

#[test]
fn out_writes_a_report_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = shipped("field_equilibrium.toml");
    let (code, out, err) = battlelab(
        dir.path(),
        &[
            "equilibrium",
            file.to_str().unwrap(),
            "--format",
            "csv",
            "--out",
            "eq",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let report = dir.path().join("eq");
    for name in [
        "equilibrium.csv",
        "equilibrium.parquet",
        "tables.md",
        "manifest.json",
        "mix_a_both-equilibrium.png",
        "index.html",
        "analysis.toml",
        "mix_b_uniform-defender.svg",
    ] {
        assert!(report.join(name).is_file(), "no {name}");
    }
    let csv = fs::read_to_string(report.join("equilibrium.csv")).unwrap();
    assert_eq!(csv, out, "stdout CSV and the report's differ");
    assert_eq!(
        csv.lines().next().unwrap(),
        "variant,odds,odds_label,side,tactic,allowed,probability,shortfall,value,maximiser,exact,dominated,never_played"
    );
    // 8 points × 2 sides × 7 tactics.
    assert_eq!(csv.lines().count(), 1 + 8 * 14);
    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(report.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["tool"], "battlelab");
    assert_eq!(manifest["kind"], "equilibrium");
    assert!(manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "equilibrium.parquet"));
    assert_eq!(manifest["name"], "field_equilibrium");
    // Written again over itself (the same analysis's equilibrium report), refused over a
    // folder of the user's and over the run report of the same analysis (another kind)
    // unless asked.
    let (code, _, err) = battlelab(
        dir.path(),
        &["equilibrium", file.to_str().unwrap(), "--out", "eq", "-q"],
    );
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = battlelab(
        dir.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--trials",
            "100",
            "--out",
            "r",
            "-q",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let run_report = fs::read(dir.path().join("r/results.csv")).unwrap();
    let (code, _, err) = battlelab(
        dir.path(),
        &["equilibrium", file.to_str().unwrap(), "--out", "r", "-q"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("the run report of \"field_equilibrium\"") && err.contains("--replace"),
        "{err}"
    );
    assert_eq!(
        fs::read(dir.path().join("r/results.csv")).unwrap(),
        run_report
    );
    let (code, _, err) = battlelab(
        dir.path(),
        &[
            "equilibrium",
            file.to_str().unwrap(),
            "--out",
            "r",
            "--replace",
            "-q",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(dir.path().join("r/equilibrium.csv").is_file());
    assert!(!dir.path().join("r/results.csv").exists());
    fs::create_dir(dir.path().join("mine")).unwrap();
    fs::write(dir.path().join("mine/notes.txt"), "keep").unwrap();
    let (code, _, err) = battlelab(
        dir.path(),
        &["equilibrium", file.to_str().unwrap(), "--out", "mine"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        fs::read_to_string(dir.path().join("mine/notes.txt")).unwrap(),
        "keep"
    );
}

/// Tactics as a sweep axis and a variant override: "which tactic against a uniform
/// defender" is one file, and a bad name is refused at its line.
#[test]
fn tactic_sweeps_and_variants_run() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
system = "field"
seed = 3
trials = 5000

[side.a]
sp = 9
morale = 2

[side.b]
sp = 6
morale = 2
tactic = "uniform"

[sweep]
a.tactic = ["charge", "envelop", "uniform", "equilibrium"]

[[variant]]
name = "uniform defender"

[[variant]]
name = "square defender"
tactic = { b = "square" }
"#;
    fs::write(dir.path().join("which.toml"), text).unwrap();
    let (code, _, err) = battlelab(dir.path(), &["run", "which.toml", "--out", "r", "-q"]);
    assert_eq!(code, Some(0), "{err}");
    let results = fs::read_to_string(dir.path().join("r/results.csv")).unwrap();
    assert!(
        results.starts_with("system,variant,a_tactic,outcome"),
        "{results}"
    );
    for tactic in ["charge", "envelop", "uniform", "equilibrium"] {
        assert!(
            results.contains(&format!("field,square defender,{tactic},A wins")),
            "{tactic}"
        );
    }
    let (code, _, err) = battlelab(
        dir.path(),
        &["equilibrium", "which.toml", "--format", "json"],
    );
    assert_eq!(code, Some(0), "{err}");
    let bad = text.replace("\"envelop\", \"uniform\"", "\"envelop\", \"feint\"");
    fs::write(dir.path().join("bad.toml"), bad).unwrap();
    let (code, _, err) = battlelab(dir.path(), &["validate", "bad.toml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("line 16") && err.contains("sweep.a.tactic") && err.contains("feint"),
        "{err}"
    );
    let bad = text.replace("tactic = { b = \"square\" }", "tactic = { b = \"feint\" }");
    fs::write(dir.path().join("bad.toml"), bad).unwrap();
    let (code, _, err) = battlelab(dir.path(), &["validate", "bad.toml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("variant[1].tactic.b") && err.contains("equilibrium"),
        "{err}"
    );
}

/// A battle too large to solve: the command falls back to the one-round game and says
/// so; `tactic = "equilibrium"` is refused with the cap named.
#[test]
fn too_large_games_are_reported_as_not_exact() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
system = "field"

[side.a]
sp = 300
morale = 3

[side.b]
sp = 200
morale = 3
"#;
    fs::write(dir.path().join("big.toml"), text).unwrap();
    let (code, out, err) = battlelab(dir.path(), &["equilibrium", "big.toml"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("NOT exact") && out.contains("one-round game"),
        "{out}"
    );
    let json = json_of(&[
        "equilibrium",
        dir.path().join("big.toml").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(json["points"][0]["exact"], false);
    fs::write(
        dir.path().join("big.toml"),
        text.replace(
            "morale = 3\n\n[side.b]",
            "morale = 3\ntactic = \"equilibrium\"\n\n[side.b]",
        ),
    )
    .unwrap();
    let (code, _, err) = battlelab(dir.path(), &["validate", "big.toml"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("side.a.tactic") && err.contains("at most"),
        "{err}"
    );
}

/// `allowed_tactics` bounds a side everywhere: the game's mixes, `"uniform"` in a run
/// (uniform over the set, so a side held to withdrawing ends every battle in round 1),
/// and the outputs (– and null for a tactic the side may not choose).
#[test]
fn allowed_tactics_bound_the_game_uniform_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let text = |b_allowed: &str| {
        format!(
            r#"
system = "field"
seed = 5
trials = 3000

[side.a]
sp = 6
morale = 2

[side.b]
sp = 4
morale = 2
tactic = "uniform"
{b_allowed}
"#
        )
    };
    fs::write(dir.path().join("all.toml"), text("")).unwrap();
    fs::write(
        dir.path().join("held.toml"),
        text("allowed_tactics = [\"withdraw\"]"),
    )
    .unwrap();
    fs::write(
        dir.path().join("three.toml"),
        text("allowed_tactics = [\"skirmish\", \"square\", \"refuse\"]"),
    )
    .unwrap();
    let exact_row = |report: &str, outcome: &str| -> f64 {
        let results = fs::read_to_string(dir.path().join(report).join("results.csv")).unwrap();
        let line = results
            .lines()
            .find(|l| l.contains(&format!(",{outcome},")))
            .unwrap();
        // system, variant, outcome, trials, count, probability, ci_low, ci_high, exact
        line.split(',').nth(8).unwrap().parse().unwrap()
    };
    for (file, out) in [("all.toml", "all"), ("held.toml", "held")] {
        let (code, _, err) = battlelab(dir.path(), &["run", file, "--out", out, "-q"]);
        assert_eq!(code, Some(0), "{err}");
    }
    // Uniform over all seven reaches the round limit; held to withdrawing, never.
    assert!(exact_row("all", "round limit") > 0.0);
    assert_eq!(exact_row("held", "round limit"), 0.0);
    assert_eq!(exact_row("held", "A withdraws"), 0.0);
    assert!(exact_row("held", "B withdraws") > 0.5);
    let json = json_of(&[
        "equilibrium",
        dir.path().join("three.toml").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let point = &json["points"][0];
    assert_eq!(
        point["allowed"]["b"],
        serde_json::json!(["skirmish", "square", "refuse"])
    );
    assert_eq!(point["allowed"]["a"].as_array().unwrap().len(), 7);
    for t in ["charge", "envelop", "bombard", "withdraw"] {
        assert_eq!(point["b"][t], 0.0, "{t}");
        assert!(point["shortfall"]["b"][t].is_null(), "{t}");
    }
    let total: f64 = ["skirmish", "square", "refuse"]
        .iter()
        .map(|t| point["b"][*t].as_f64().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-9);
    let (code, out, err) = battlelab(dir.path(), &["equilibrium", "three.toml"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("B: dominated at the start:")
            && out.contains("may choose only skirmish, square, refuse"),
        "{out}"
    );
    assert!(out.contains("A maximising it, B minimising"), "{out}");
}

/// A system that declares no simultaneous choice is refused (exit 2, nothing written)
/// with the systems that do, as the registry and their own declarations say.
#[test]
fn a_system_without_simultaneous_choices_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let melee = shipped("melee_engagement.toml");
    let (code, out, err) = battlelab(
        dir.path(),
        &["equilibrium", melee.to_str().unwrap(), "--out", "eq"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(
        err,
        format!(
            "error: {}: system \"melee\" has no simultaneous choice to solve; equilibrium solves systems whose sides choose at once (field battles: system = \"field\")\n",
            melee.display()
        )
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "wrote something"
    );
}

/// The words of `source` as identifiers split them: `FieldStudy` → field, study;
/// `TACTIC_NAMES` → tactic, names; lower case.
fn words(source: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in source.chars() {
        let starts_word = c.is_ascii_uppercase() && previous_lower;
        if (!c.is_ascii_alphanumeric() || starts_word) && !word.is_empty() {
            words.push(std::mem::take(&mut word).to_ascii_lowercase());
        }
        if c.is_ascii_alphanumeric() {
            word.push(c);
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
    }
    if !word.is_empty() {
        words.push(word.to_ascii_lowercase());
    }
    words
}

/// What in `source` ties it to one system: a system's name (or a word of it), a field
/// battle's tactic, or a fixed count of seven choices.
fn system_ties(source: &str) -> Vec<String> {
    let mut names: Vec<&str> = battlelab_core::systems::names()
        .into_iter()
        .flat_map(|s| s.split('_'))
        .collect();
    names.extend(["tactic", "tactics"]);
    let mut ties: Vec<String> = words(source)
        .into_iter()
        .filter(|w| names.contains(&w.as_str()))
        .collect();
    ties.sort();
    ties.dedup();
    if source.contains("; 7]") {
        ties.push("[_; 7]".into());
    }
    ties
}

/// The command reaches systems through the trait alone: its source names no system, no
/// system's types and no fixed count of choices (issue 41: a command never matches on a
/// system).
#[test]
fn the_command_names_no_system() {
    // The check itself: the old command's lines are caught.
    assert_eq!(
        system_ties(
            "use battlelab::systems::field::FieldStudy;\nfn per_tactic(v: &[f64; 7]) { TACTIC_NAMES }\nif s != \"ratio\" {}"
        ),
        ["field", "ratio", "tactic", "[_; 7]"]
    );
    assert_eq!(
        system_ties("let durations = generation; // setups"),
        Vec::<String>::new()
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd/equilibrium.rs");
    let source = fs::read_to_string(&path).unwrap();
    assert_eq!(
        system_ties(&source),
        Vec::<String>::new(),
        "{} names a system",
        path.display()
    );
}

/// The text and Markdown a designer reads, pinned for a small analysis (a side limited
/// to three tactics): made from the generic result, they must stay what they were.
#[test]
fn text_and_markdown_keep_their_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
system = "field"
seed = 5
trials = 3000

[side.a]
sp = 6
morale = 2

[side.b]
sp = 4
morale = 2
tactic = "uniform"
allowed_tactics = ["skirmish", "square", "refuse"]
"#;
    fs::write(dir.path().join("three.toml"), text).unwrap();
    for format in ["text", "md"] {
        let (code, out, err) = battlelab(
            dir.path(),
            &["equilibrium", "three.toml", "--format", format],
        );
        assert_eq!(code, Some(0), "{err}");
        insta::assert_snapshot!(format!("three_{format}"), out);
    }
}
