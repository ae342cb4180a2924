//! A variant that edits a rules file's table cells (`[variant.cells]`): "what if the 3:1
//! column's roll of 2 read DE?" without a copy of the rules file. A one-cell edit moves
//! exactly the weight of the rolls that read that cell from one result to another; a
//! whole-column edit is the rules file edited by hand, result for result; `run`,
//! `compare` and `tables.md` read such a variant with no code of their own.

use std::path::Path;

mod common;

use battlelab_core::engine::System;
use battlelab_core::systems::rules_file::RulesStudy;
use common::battlelab;
use num_rational::BigRational;

fn fraction(n: i64, d: i64) -> BigRational {
    BigRational::new(n.into(), d.into())
}

/// Each run's exact outcome probabilities as fractions, with the variant and the
/// attacker's leader it was run with.
fn exact_outcomes(study: &RulesStudy) -> Vec<(String, i64, Vec<BigRational>)> {
    (0..study.runs.len())
        .map(|run| {
            let r = &study.runs[run];
            let leader = r
                .settings
                .iter()
                .find(|s| s.0 == "attacker.leader")
                .expect("the leader is a setting")
                .1;
            let fractions = study
                .exact(run)
                .and_then(|e| e.fractions)
                .expect("the classic CRT is exact as fractions");
            (
                study.variants[r.variant].name.clone(),
                leader,
                fractions.outcomes,
            )
        })
        .collect()
}

#[test]
fn a_one_cell_edit_moves_exactly_the_weight_of_the_rolls_that_read_it() {
    // 9 against 3: the 3:1 column, "DR DR DR EX AR AR" for modified rolls 1 to 6; the
    // modified roll is the die minus the leader's DRM, held to 1..6.
    let text = r#"system = "rules"
rules = "classic_crt"
[sides.attacker]
strength = 9
[sides.defender]
strength = 3
[sweep]
"attacker.leader" = [0, 1]
[[variant]]
name = "printed"
[[variant]]
name = "row 2 reads DE"
cells = { "crt.3:1.2" = "DE" }
[[variant]]
name = "row 1 reads DE"
cells = { "crt.3:1.1" = "DE" }
"#;
    let study = RulesStudy::parse(Path::new("cells.toml"), text).unwrap_or_else(|e| panic!("{e}"));
    let outcomes: Vec<&str> = study.variants[0]
        .game
        .outcomes
        .iter()
        .map(|o| o.0.as_str())
        .collect();
    assert_eq!(outcomes, ["AE", "AR", "DR", "DE", "EX"]);
    let runs = exact_outcomes(&study);
    let printed = |leader: i64| {
        runs.iter()
            .find(|r| r.0 == "printed" && r.1 == leader)
            .unwrap()
            .2
            .clone()
    };
    // As printed: leader 0 reads rows 1..6 once each; leader 1 reads row 1 on a 1 or 2.
    let zero = fraction(0, 1);
    assert_eq!(
        printed(0),
        [
            zero.clone(),
            fraction(1, 3),
            fraction(1, 2),
            zero.clone(),
            fraction(1, 6)
        ]
    );
    assert_eq!(
        printed(1),
        [
            zero.clone(),
            fraction(1, 6),
            fraction(2, 3),
            zero.clone(),
            fraction(1, 6)
        ]
    );
    // (variant, leader, the weight of the rolls that read the edited row): DR → DE.
    let cases = [
        ("row 2 reads DE", 0, fraction(1, 6)),
        ("row 2 reads DE", 1, fraction(1, 6)),
        ("row 1 reads DE", 0, fraction(1, 6)),
        ("row 1 reads DE", 1, fraction(1, 3)),
    ];
    for (variant, leader, weight) in cases {
        let edited = &runs
            .iter()
            .find(|r| r.0 == variant && r.1 == leader)
            .unwrap()
            .2;
        let mut expected = printed(leader);
        expected[2] -= &weight;
        expected[3] += &weight;
        assert_eq!(edited, &expected, "{variant}, leader {leader}");
    }
}

#[test]
fn a_column_edit_gives_the_results_of_the_rules_file_edited_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let printed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/classic_crt.toml"),
    )
    .unwrap();
    let line = "\"3:1\" = \"DR DR DR EX AR AR\"";
    assert!(printed.contains(line));
    let by_hand = printed.replace(line, "\"3:1\" = \"DE EX DR EX AE AR\"");
    std::fs::write(dir.path().join("by_hand.toml"), &by_hand).unwrap();
    let analysis = dir.path().join("column.toml");
    let text = r#"system = "rules"
rules = "classic_crt"
[sides.defender]
strength = 3
[sweep]
"attacker.strength" = { from = 1, to = 20 }
terrain = [0, 1, 2]
"attacker.leader" = [0, 2]
[[variant]]
name = "printed"
[[variant]]
name = "by hand"
rules = "by_hand.toml"
[[variant]]
name = "by cells"
[variant.cells]
"crt.3:1" = "DE EX DR EX AE AR"
"#;
    std::fs::write(&analysis, text).unwrap();
    let study = RulesStudy::parse(&analysis, text).unwrap_or_else(|e| panic!("{e}"));
    // The edited game's text is the hand-edited file, byte for byte (so the rules hash
    // and tables.md cannot tell them apart, nor the file as printed from either).
    assert_eq!(study.variants[2].game.text, by_hand);
    assert_ne!(study.variants[2].game.text, study.variants[0].game.text);
    let per_variant = study.runs.len() / 3;
    assert_eq!(per_variant, 20 * 3 * 2);
    let mut differ_from_printed = 0;
    for k in 0..per_variant {
        let [printed, hand, cells] = [0, 1, 2].map(|v| {
            let run = v * per_variant + k;
            assert_eq!(study.runs[run].variant, v);
            let exact = study.exact(run).and_then(|e| e.fractions).expect("exact");
            (study.runs[run].settings.clone(), exact)
        });
        assert_eq!(hand.0, cells.0);
        assert_eq!(hand.1.outcomes, cells.1.outcomes, "{:?}", cells.0);
        assert_eq!(hand.1.metrics, cells.1.metrics, "{:?}", cells.0);
        if printed.1.outcomes != cells.1.outcomes {
            differ_from_printed += 1;
        }
    }
    // The 3:1 column is read at 9..11 against 3 in clear terrain, and at 12..20 one or
    // two columns left of 4:1..6:1 in woods and city: the edit reaches many runs.
    assert!(differ_from_printed >= 10, "{differ_from_printed}");
}

fn csv_row<'a>(text: &'a str, starts: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(starts))
        .unwrap_or_else(|| panic!("no row {starts} in\n{text}"))
}

#[test]
fn run_and_compare_read_a_variant_with_edited_cells_and_tables_md_marks_them() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/good/rules_cells.toml");
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = battlelab(
        dir.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--trials",
            "6000",
            "--out",
            "r",
            "-q",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let results = std::fs::read_to_string(dir.path().join("r/results.csv")).unwrap();
    // Leader 0 reads row 2 on a 2 only: DE 1/6 where the printed table never gives it.
    assert!(csv_row(&results, "rules,bloodier 3:1,0,DE,").ends_with(",1/6"));
    assert!(csv_row(&results, "rules,bloodier 3:1,0,DR,").ends_with(",1/3"));
    assert!(csv_row(&results, "rules,printed,0,DE,").ends_with(",0"));
    assert!(csv_row(&results, "rules,printed,0,DR,").ends_with(",1/2"));
    // In a city 9:3 reads 1:1, "AR AR AR AE AE AE" with its row 6 edited to DR.
    assert!(csv_row(&results, "rules,redrawn 3:1 in a city,0,DR,").ends_with(",1/6"));
    assert!(csv_row(&results, "rules,redrawn 3:1 in a city,0,AE,").ends_with(",1/3"));

    let md = std::fs::read_to_string(dir.path().join("r/tables.md")).unwrap();
    let headings: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("## ") && l.contains("the tables"))
        .collect();
    assert_eq!(
        headings,
        [
            "## Classic odds CRT — the tables as printed",
            "## Classic odds CRT — the tables as variant \"bloodier 3:1\" edits them",
            "## Classic odds CRT — the tables as variant \"redrawn 3:1 in a city\" edits them",
        ]
    );
    let section = |heading: &str| -> String {
        let start = md.find(heading).unwrap() + heading.len();
        let rest = &md[start..];
        rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
    };
    // Table rows "| roll | 1:2 | 1:1 | 2:1 | 3:1 | …": the starred cells, as (roll, column).
    let starred = |section: &str| -> Vec<(String, usize, String)> {
        let mut out = Vec::new();
        for row in section.lines().filter(|l| l.starts_with("| ")) {
            let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
            for (c, cell) in cells.iter().enumerate().skip(1) {
                if cell.ends_with('*') {
                    out.push((cells[0].to_string(), c, cell.to_string()));
                }
            }
        }
        out
    };
    assert!(starred(&section(headings[0])).is_empty());
    assert_eq!(
        starred(&section(headings[1])),
        [("2".to_string(), 4, "DE*".to_string())]
    );
    // The whole column given: only the cells that differ from the file are marked.
    assert_eq!(
        starred(&section(headings[2])),
        [
            ("1".to_string(), 4, "DE*".to_string()),
            ("6".to_string(), 2, "DR*".to_string()),
        ]
    );
    assert!(section(headings[1]).contains("`*` edited by variant.cells"));

    let (code, stdout, stderr) = battlelab(
        dir.path(),
        &[
            "compare",
            file.to_str().unwrap(),
            "--variants",
            "printed,bloodier 3:1",
            "--quiet",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    // Exactly 1/6 moved from DR to DE at either leader, nothing else.
    let moved: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.contains("moved, largest first"))
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(moved.len(), 4, "{stdout}");
    for (leader, outcome, by) in [
        (0, "DR", "-"),
        (0, "DE", "+"),
        (1, "DR", "-"),
        (1, "DE", "+"),
    ] {
        let line = format!("attacker.leader={leader}: {outcome} {by}0.1667 exactly");
        assert!(
            moved.iter().any(|l| l.starts_with(&line)),
            "{line}: {stdout}"
        );
    }
}
