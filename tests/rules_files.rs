//! Rules files through the command line (issue 42): a designer's own combat system run by
//! every command — run (exact fractions beside counts), validate (notices), value (one
//! side's setting), solve, compare, check, table, keys and new — and bad input refused
//! with exit 2 and nothing written.

use std::path::Path;

mod common;

use common::{battlelab, shipped};

fn csv_row<'a>(text: &'a str, starts: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(starts))
        .unwrap_or_else(|| panic!("no row {starts} in\n{text}"))
}

#[test]
fn a_rules_analysis_runs_with_exact_fractions_beside_its_counts() {
    let dir = tempfile::tempdir().unwrap();
    let risk = shipped("risk.toml");
    let (code, _, stderr) = battlelab(
        dir.path(),
        &[
            "run",
            risk.to_str().unwrap(),
            "--trials",
            "20000",
            "--out",
            "risk",
            "-q",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let results = std::fs::read_to_string(dir.path().join("risk/results.csv")).unwrap();
    // 2 armies (one die) against 1: the attacker wins on a higher die, 15/36 = 5/12.
    let row = csv_row(&results, "rules,base,2,1,attacker wins,");
    assert!(row.ends_with(",5/12"), "{row}");
    let tables = std::fs::read_to_string(dir.path().join("risk/tables.md")).unwrap();
    assert!(tables.contains("How the battle ends"), "{tables}");
    assert!(dir.path().join("risk/index.html").is_file());
}

#[test]
fn a_chain_too_large_for_exact_is_said_and_simulated_by_the_step_interpreter() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("long.rules.toml"),
        "name = \"Long risk\"\nsides = [\"attacker\", \"defender\"]\n[counters]\narmies = { min = 0, max = 2000 }\n[battle]\nend = \"attacker.armies <= 1 or defender.armies == 0\"\nround_limit = 1000\n[[phases]]\nname = \"battle\"\ncompare = { dice = { attacker = \"min(3, attacker.armies - 1)\", defender = \"min(2, defender.armies)\" }, sides = 6, ties = \"defender\" }\neffects = [\"attacker.armies -= won.defender\", \"defender.armies -= won.attacker\"]\n[[outcomes]]\nname = \"attacker wins\"\nwhen = \"defender.armies == 0\"\n[[outcomes]]\nname = \"defender holds\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("long.toml"),
        "system = \"rules\"\nrules = \"long.rules.toml\"\ntrials = 500\n[sides.attacker]\narmies = 600\n[sides.defender]\narmies = 600\n",
    )
    .unwrap();
    let (code, stdout, stderr) = battlelab(dir.path(), &["validate", "long.toml"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("exact results are off and the step interpreter plays each battle"),
        "{stdout}"
    );
    let (code, _, stderr) = battlelab(dir.path(), &["run", "long.toml", "--out", "long"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("step interpreter"), "{stderr}");
    let results = std::fs::read_to_string(dir.path().join("long/results.csv")).unwrap();
    let row = csv_row(&results, "rules,base,attacker wins,500,");
    assert!(
        row.ends_with(",,"),
        "no exact value where exact is off: {row}"
    );
}

#[test]
fn value_moves_one_sides_setting_only_and_prices_it_exactly() {
    let dir = tempfile::tempdir().unwrap();
    // 6 against 3 (the 2:1 column), clear: modified roll = die − (attacker − defender
    // leader). Attacker leader 1 → 2 turns rolls 1..6 into rows 1,1,1,2,3,4: DR 1/3 → 1/2.
    // Defender leader 0 → 1 turns them into 1..6 as printed: DR 1/3 → 1/6.
    std::fs::write(
        dir.path().join("crt.toml"),
        "system = \"rules\"\nrules = \"classic_crt\"\ntrials = 2000\n[sides.attacker]\nstrength = 6\nleader = 1\n[sides.defender]\nstrength = 3\n",
    )
    .unwrap();
    let (code, stdout, stderr) = battlelab(
        dir.path(),
        &[
            "value",
            "crt.toml",
            "--modifier",
            "attacker.leader+1",
            "--modifier",
            "defender.leader+1",
            "--headline",
            "dr",
            "--quiet",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("0.333333 -> 0.500000  delta 0.166667"),
        "{stdout}"
    );
    assert!(
        stdout.contains("0.333333 -> 0.166667  delta -0.166667"),
        "{stdout}"
    );
}

#[test]
fn solve_finds_the_armies_that_win_half_the_time() {
    let (code, stdout, stderr) = battlelab(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[
            "solve",
            "analyses/risk.toml",
            "--vary",
            "attacker.armies",
            "--where",
            "defender.armies=5",
            "--target",
            "attacker wins >= 0.5",
            "--from",
            "2",
            "--to",
            "12",
            "--trials",
            "1000",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    // Exact: 5 armies (4 attacking) against 5 win under 1/2; 6 against 5 win 0.506
    // (Osborne's table, attacker 5 v defender 5: 0.506).
    assert!(
        stdout.contains("starts holding at 6 (between 5 and 6)"),
        "{stdout}"
    );
    assert!(stdout.contains("6 = 0.506203 (exact)"), "{stdout}");
}

/// --from and --to at i64's extremes: 2^64 candidates, refused at once (their count once
/// wrapped to 0 and the search stepped through them all).
#[test]
fn solve_refuses_a_range_of_i64s_extremes_at_once() {
    let output = assert_cmd::Command::cargo_bin("battlelab")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "solve",
            "analyses/risk.toml",
            "--vary",
            "attacker.armies",
            "--target",
            "attacker wins >= 0.5",
            "--from",
            &i64::MIN.to_string(),
            "--to",
            &i64::MAX.to_string(),
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("18446744073709551616 candidates from -9223372036854775808 to 9223372036854775807; at most 1001"),
        "{stderr}"
    );
}

#[test]
fn compare_and_check_read_rules_analyses() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("terrain.toml"),
        "system = \"rules\"\nrules = \"classic_crt\"\ntrials = 4000\n[sides.attacker]\nstrength = 6\n[sides.defender]\nstrength = 3\n[[variant]]\nname = \"clear\"\n[[variant]]\nname = \"city\"\nparameters = { terrain = 2 }\n[[expect]]\nwhere = { variant = \"city\" }\noutcome = \"AE\"\nbetween = [0.33, 0.34]\n",
    )
    .unwrap();
    let (code, stdout, stderr) = battlelab(
        dir.path(),
        &[
            "compare",
            "terrain.toml",
            "--variants",
            "clear,city",
            "--quiet",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("AE"), "{stdout}");
    // 6:3 shifted two columns left is 1:2 → AE on 2..6 = 5/6, not 1/3: the check fails.
    let (code, stdout, _) = battlelab(dir.path(), &["check", "terrain.toml", "--quiet"]);
    assert_eq!(code, Some(1), "{stdout}");
}

#[test]
fn table_rules_rolls_once_on_a_declared_table_exactly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, stdout, stderr) = battlelab(
        root,
        &[
            "table",
            "rules",
            "--rules",
            "rules/classic_crt.toml",
            "--set",
            "attacker.strength=6",
            "--set",
            "defender.strength=3",
            "--set",
            "attacker.leader=1",
            "--format",
            "csv",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    for row in [
        "AR,0.5,1/2",
        "DR,0.3333333333333333,1/3",
        "EX,0.16666666666666666,1/6",
    ] {
        assert!(stdout.contains(row), "{row} in\n{stdout}");
    }
    let (code, _, stderr) = battlelab(
        root,
        &[
            "table",
            "rules",
            "--rules",
            "rules/classic_crt.toml",
            "--set",
            "attacker.strength=6",
        ],
    );
    assert_eq!(code, Some(2));
    assert!(stderr.contains("defender.strength"), "{stderr}");
}

#[test]
fn new_rules_writes_an_analysis_and_its_rules_file_that_run() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = battlelab(dir.path(), &["new", "rules", "my_game"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("my_game.rules.toml"), "{stdout}");
    let (code, _, stderr) = battlelab(
        dir.path(),
        &["run", "my_game.toml", "--trials", "500", "-q"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stdout, _) = battlelab(dir.path(), &["keys", "my_game.rules.toml"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("sides.attacker.leader"), "{stdout}");
    // Never overwritten.
    let (code, _, stderr) = battlelab(dir.path(), &["new", "rules", "my_game"]);
    assert_eq!(code, Some(2), "{stderr}");
}

#[test]
fn a_bad_rules_analysis_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.toml"),
        "system = \"rules\"\nrules = \"classic_crt\"\n[sides.attacker]\nstrength = 6\nleadr = 1\n[sides.defender]\nstrength = 3\n",
    )
    .unwrap();
    let (code, _, stderr) = battlelab(dir.path(), &["run", "bad.toml", "--out", "out"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("line 3")
            && stderr.contains("sides.attacker.leadr")
            && stderr.contains("did you mean attacker.leader"),
        "{stderr}"
    );
    assert!(!dir.path().join("out").exists());
    std::fs::write(
        dir.path().join("missing.toml"),
        "system = \"rules\"\nrules = \"nowhere.toml\"\n",
    )
    .unwrap();
    let (code, _, stderr) = battlelab(dir.path(), &["run", "missing.toml", "--out", "out"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read the rules file \"nowhere.toml\""),
        "{stderr}"
    );
    assert!(!dir.path().join("out").exists());
}

#[test]
fn equilibrium_of_the_field_rules_file_is_the_built_in_fields() {
    let dir = tempfile::tempdir().unwrap();
    // The built-in field_equilibrium analysis at 1:1 (6 v 6 SP, morale 2, leaders 1,
    // round limit 6), as the shipped field rules file.
    std::fs::write(
        dir.path().join("f.toml"),
        "system = \"rules\"\nrules = \"field\"\ntrials = 1000\n[sides.a]\nsp = 6\nmorale = 2\nleader = 1\n[sides.b]\nsp = 6\nmorale = 2\nleader = 1\n",
    )
    .unwrap();
    let (code, mine, stderr) = battlelab(
        dir.path(),
        &[
            "equilibrium",
            "f.toml",
            "--payoff",
            "a: A wins or B withdraws",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let (code, built_in, stderr) = battlelab(
        dir.path(),
        &[
            "equilibrium",
            shipped("field_equilibrium.toml").to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    // The value, then each tactic's mix and shortfall for both sides, line for line.
    let block = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.contains("P(A wins or B withdraws) = "))
            .filter(|l| !l.contains("exact: the whole battle"))
            .take(11)
            .map(str::to_string)
            .collect()
    };
    assert_eq!(block(&mine).len(), 11, "{mine}");
    assert_eq!(block(&mine), block(&built_in), "{mine}\n{built_in}");
    assert!(mine.contains("= 0.424735"), "{mine}");
}

/// The exact fraction column of every row of `results.csv` for `run` (the run's
/// coordinate cells as the row starts them), outcome by outcome.
fn exact_fractions(results: &str, starts: &str) -> Vec<String> {
    results
        .lines()
        .filter(|l| l.starts_with(starts))
        .map(|l| l.rsplit(',').next().unwrap().to_string())
        .collect()
}

#[test]
fn a_sides_policy_sweeps_and_each_run_is_that_policy_set_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let field = std::fs::canonicalize(shipped("../rules/field.toml")).unwrap();
    let analysis = |extra_a: &str, sweep: &str| {
        format!(
            "system = \"rules\"\nrules = {:?}\ntrials = 1000\n[sides.a]\nsp = 9\nmorale = 2\nleader = 1\n{extra_a}\n[sides.b]\nsp = 6\nmorale = 2\ntactic = {{ skirmish = 2, square = 1 }}\n[parameters]\nround_limit = 3\n{sweep}",
            field.to_str().unwrap()
        )
    };
    std::fs::write(
        dir.path().join("swept.toml"),
        analysis(
            "",
            "[sweep]\n\"a.tactic\" = [\"charge\", \"envelop\", \"uniform\"]\n",
        ),
    )
    .unwrap();
    let (code, _, stderr) = battlelab(dir.path(), &["run", "swept.toml", "--out", "swept", "-q"]);
    assert_eq!(code, Some(0), "{stderr}");
    let swept = std::fs::read_to_string(dir.path().join("swept/results.csv")).unwrap();
    let mut seen = Vec::new();
    for policy in ["charge", "envelop", "uniform"] {
        let name = format!("{policy}.toml");
        std::fs::write(
            dir.path().join(&name),
            analysis(&format!("tactic = \"{policy}\""), ""),
        )
        .unwrap();
        let (code, _, stderr) = battlelab(dir.path(), &["run", &name, "--out", policy, "-q"]);
        assert_eq!(code, Some(0), "{stderr}");
        let own = std::fs::read_to_string(dir.path().join(policy).join("results.csv")).unwrap();
        let by_hand = exact_fractions(&own, "rules,base,");
        let in_sweep = exact_fractions(&swept, &format!("rules,base,{policy},"));
        assert_eq!(by_hand.len(), 8, "{own}");
        assert_eq!(in_sweep, by_hand, "{policy}");
        seen.push(by_hand);
    }
    // The policies differ, so a sweep that ignored its values would be caught above.
    assert_ne!(seen[0], seen[1]);
    assert_ne!(seen[1], seen[2]);
}

#[test]
fn tables_md_prints_each_rolled_table_as_modified_for_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let crt = shipped("classic_crt.toml");
    let (code, _, stderr) = battlelab(
        dir.path(),
        &[
            "run",
            crt.to_str().unwrap(),
            "--trials",
            "1000",
            "--out",
            "crt",
            "-q",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let tables = std::fs::read_to_string(dir.path().join("crt/tables.md")).unwrap();
    let section = &tables[tables
        .find("### Combat Results Table as modified")
        .expect(&tables)..];
    // Attacker leader 1, defender 0: net DRM +1, the modified roll is the die − 1 held to
    // 1…6. A 1 reads row 1 (as printed); a 2 reads row 1 too: in column 1:2 AR where the
    // page prints AE, 2:1 DR for AR, 4:1 DE for DR (marked ‡); a 6 reads row 5.
    assert!(
        section.contains("| 1 | AR | AR | DR | DR | DE | DE | DE |"),
        "{section}"
    );
    assert!(
        section.contains("| 2 | AR‡ | AR | DR‡ | DR | DE‡ | DE | DE |"),
        "{section}"
    );
    assert!(
        section.contains("| 6 | AE | AE | AR‡ | AR | EX‡ | DR‡ | DR |"),
        "{section}"
    );
    // Each run with the column it reads, or its result with no roll.
    assert!(
        section.contains("terrain 0, attacker.strength 1 (AE with no roll)"),
        "{section}"
    );
    assert!(
        section.contains("terrain 0, attacker.strength 6 (column 2:1)"),
        "{section}"
    );
}
