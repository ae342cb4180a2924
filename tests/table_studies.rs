//! Table studies (attrition, forced march, naval …) end to end: the attrition turns
//! study against a hand computation and against simulation, byte-identical reports on
//! any thread count, and the rulebook tables pinned.

use std::path::Path;

mod common;

use assert_cmd::Command;
use battlelab::sim::{thread_pool, RunControl};
use battlelab::stats::{chi_square, chi_square_critical};
use battlelab_core::systems::d6_tables as study;
use common::shipped;

/// Reads and validates a shipped analysis as a system of type `S`.
fn load<S>(
    name: &str,
    parse: fn(&Path, &str) -> Result<S, battlelab::analysis::AnalysisError>,
) -> S {
    let path = shipped(name);
    let text = battlelab::toml_input::read_analysis_file(&path).unwrap();
    parse(&path, &text).unwrap()
}

fn table_study(name: &str) -> study::D6TableStudy {
    load(name, study::D6TableStudy::parse)
}

/// 12 SP, DRM +2, column 11-15: d6+2 reads rows 3,4,5,6,6,6 → 1, 2*, 2*, 3*, 3*, 3*.
/// After one turn: 11 SP (1/6), 10 SP (2/6), 9 SP (3/6).
#[test]
fn attrition_turns_first_turn_by_hand() {
    let study = table_study("attrition.toml");
    let results = study::execute(&study, 10_000, 1, &RunControl::default()).unwrap();
    let first = &results.turns[0].exact[1];
    let expected = [(11, 1.0 / 6.0), (10, 2.0 / 6.0), (9, 3.0 / 6.0)];
    for (sp, p) in expected {
        assert!((first[sp] - p).abs() < 1e-12, "SP {sp}: {}", first[sp]);
    }
    assert!((first.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}

/// The simulated SP left after the last turn passes a chi-square test (99.99%) against
/// the exact Markov chain, for every variant.
#[test]
fn attrition_turns_simulation_agrees_with_the_markov_chain() {
    let study = table_study("attrition.toml");
    let results = study::execute(&study, 2_000_000, 9, &RunControl::default()).unwrap();
    for (variant, turns) in results.turns.iter().enumerate() {
        let last = turns.exact.last().unwrap();
        let (statistic, df) = chi_square(&turns.counts, last);
        assert!(
            statistic < chi_square_critical(df, 3.719),
            "variant {variant}: {statistic} (df {df})"
        );
    }
}

#[test]
fn table_study_points_hold_to_exact_within_four_standard_errors() {
    for name in ["attrition.toml", "march.toml", "naval.toml"] {
        let study = table_study(name);
        let n = 1_000_000u64;
        let results = thread_pool(2)
            .unwrap()
            .install(|| study::execute(&study, n, 5, &RunControl::default()).unwrap());
        for (point, result) in study.points.iter().zip(&results.points) {
            for (i, &count) in result.counts.iter().enumerate() {
                let p = result.exact.probability(i);
                if p == 0.0 || p == 1.0 {
                    assert_eq!(
                        count,
                        (p * n as f64) as u64,
                        "{name} {:?}",
                        point.coordinates
                    );
                    continue;
                }
                let z = (count as f64 / n as f64 - p).abs() / (p * (1.0 - p) / n as f64).sqrt();
                assert!(
                    z < 4.0,
                    "{name} {:?} outcome {i}: {z:.2} SE",
                    point.coordinates
                );
            }
        }
    }
}

#[test]
fn table_study_reports_are_identical_on_one_and_eight_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for threads in ["1", "8"] {
        let out = dir.path().join(threads);
        Command::cargo_bin("battlelab")
            .unwrap()
            .args([
                "run",
                "--quiet",
                "--trials",
                "200000",
                "--threads",
                threads,
                "--out",
            ])
            .arg(&out)
            .arg(shipped("attrition.toml"))
            .assert()
            .success();
        let read = |f: &str| std::fs::read(out.join(f)).unwrap();
        files.push((
            read("results.csv"),
            read("results.parquet"),
            read("survival.parquet"),
            read("expectations.csv"),
        ));
        for chart in [
            "outcomes_printed.png",
            "survival_printed.svg",
            "expected_sp_eliminated_printed.png",
        ] {
            assert!(out.join(chart).is_file(), "missing {chart}");
        }
    }
    assert!(files[0] == files[1], "1 and 8 threads differ");
}

/// The march study's rulebook tables (exact numbers only) are pinned whole.
#[test]
fn march_rulebook_tables_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("march");
    Command::cargo_bin("battlelab")
        .unwrap()
        .args(["run", "--quiet", "--trials", "1000", "--out"])
        .arg(&out)
        .arg(shipped("march.toml"))
        .assert()
        .success();
    insta::assert_snapshot!(std::fs::read_to_string(out.join("tables.md")).unwrap());
}

/// Whole maps: the simulated coalition totals pass a chi-square test (99.99%) against the
/// exact convolution, for every coalition and quantity.
#[test]
fn setup_maps_agree_with_exact_convolution() {
    let study = load("setup.toml", battlelab::systems::setup::SetupStudy::parse);
    assert_eq!(study.states.len(), 13);
    let results =
        battlelab::systems::setup::execute(&study, 1_000_000, 4, &RunControl::default()).unwrap();
    for (c, coalition) in study.coalitions.iter().enumerate() {
        for q in 0..7 {
            let (statistic, df) = chi_square(&results.counts[c][q], &results.exact[c][q]);
            assert!(
                statistic < chi_square_critical(df, 3.719),
                "{coalition} quantity {q}: {statistic} (df {df})"
            );
        }
    }
    // A major state's expected land SP by hand: (53 + 46 + 46 + 39 + 39 + 33) / 6 = 128/3;
    // three majors: 128.
    let north = study.coalitions.iter().position(|c| c == "North").unwrap();
    let mean: f64 = results.exact[north][0]
        .iter()
        .enumerate()
        .map(|(v, p)| v as f64 * p)
        .sum();
    assert!((mean - 128.0).abs() < 1e-9, "{mean}");
}

/// Naval engagements: simulated results, lengths and NSP lost pass a chi-square test
/// (99.99%) against the exact enumeration of the battle → pursuit chain.
#[test]
fn naval_engagements_agree_with_exact_enumeration() {
    let study = load(
        "naval_engagement.toml",
        battlelab::systems::naval_engagement::NavalEngagementStudy::parse,
    );
    let results =
        battlelab::systems::naval_engagement::execute(&study, 400_000, 12, &RunControl::default())
            .unwrap();
    for ((_, coordinates, _), (h, exact)) in study.runs.iter().zip(&results.runs) {
        assert!((exact.result.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        for (name, observed, expected) in [
            ("result", &h.result[..], &exact.result[..]),
            ("rounds", &h.rounds[..], &exact.rounds[..]),
            ("nsp lost A", &h.nsp_lost[0][..], &exact.nsp_lost[0][..]),
            ("nsp lost B", &h.nsp_lost[1][..], &exact.nsp_lost[1][..]),
        ] {
            let (statistic, df) = chi_square(observed, expected);
            assert!(
                statistic < chi_square_critical(df, 3.719),
                "{coordinates:?} {name}: {statistic} (df {df})"
            );
        }
    }
}

#[test]
fn naval_and_setup_reports_are_identical_on_one_and_eight_threads() {
    for analysis in ["naval_engagement.toml", "setup.toml"] {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for threads in ["1", "8"] {
            let out = dir.path().join(threads);
            Command::cargo_bin("battlelab")
                .unwrap()
                .args([
                    "run",
                    "--quiet",
                    "--trials",
                    "100000",
                    "--threads",
                    threads,
                    "--out",
                ])
                .arg(&out)
                .arg(shipped(analysis))
                .assert()
                .success();
            files.push((
                std::fs::read(out.join("results.csv")).unwrap(),
                std::fs::read(out.join("results.parquet")).unwrap(),
            ));
            assert!(out.join("tables.md").is_file() && out.join("manifest.json").is_file());
        }
        assert!(files[0] == files[1], "{analysis}: 1 and 8 threads differ");
    }
}

/// The attrition rulebook table with `[tables] format = "in6"`: every cell is the count
/// of d6 faces that reach that code, counted here by hand from the printed table in the
/// same file (die + DRM clamped to the printed rolls 1–6); rows are labelled by the
/// printed SP column, and stack sizes that reach one column share a row.
#[test]
fn attrition_in6_rulebook_table_is_the_exact_counts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("attrition_in6.toml");
    let text = std::fs::read_to_string(shipped("attrition.toml")).unwrap();
    std::fs::write(&file, format!("{text}\n[tables]\nformat = \"in6\"\n")).unwrap();
    let out = dir.path().join("r");
    let output = Command::cargo_bin("battlelab")
        .unwrap()
        .args(["run", "--quiet", "--trials", "1000", "--out"])
        .arg(&out)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let md = std::fs::read_to_string(out.join("tables.md")).unwrap();
    let section = |heading: &str| -> Vec<Vec<String>> {
        md.lines()
            .skip_while(|l| !l.starts_with(heading))
            .skip(1)
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .filter(|l| !l.starts_with("|---"))
            .map(|l| {
                l.trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_string())
                    .collect()
            })
            .collect()
    };
    let printed = section("## The attrition table — printed");
    let columns = &printed[0][1..];
    let outcomes = section("## Outcomes per grid point — printed");
    let header = &outcomes[0];
    assert_eq!(&header[..2], ["SP column", "drm"]);
    let codes = &header[2..8];
    assert_eq!(codes, ["0", "1", "2*", "3*", "4*", "5*"]);
    let mut labels = Vec::new();
    for row in &outcomes[1..] {
        let column = row[0].split(' ').next().unwrap();
        let drm: i32 = row[1].parse().unwrap();
        labels.push(row[0].clone());
        let expected: Vec<String> = codes
            .iter()
            .map(|code| {
                let faces = match columns.iter().position(|c| c == column) {
                    // No column: a hex under 3 SP does not roll ("0" every time).
                    None => {
                        assert_eq!(column, "none");
                        if code == "0" {
                            6
                        } else {
                            0
                        }
                    }
                    Some(c) => (1..=6)
                        .filter(|die| {
                            let roll = (die + drm).clamp(1, 6) as usize;
                            printed[roll][c + 1] == *code
                        })
                        .count(),
                };
                format!("{faces} in 6")
            })
            .collect();
        assert_eq!(&row[2..8], expected.as_slice(), "{row:?}");
    }
    // 12 and 14 SP both read the 11-15 column: one row per DRM, naming both.
    assert!(labels.iter().any(|l| l == "11-15 (12, 14 SP)"));
    assert!(labels.iter().any(|l| l == "6-10"));
    assert_eq!(
        outcomes.len() - 1,
        6 * 6,
        "six columns (none … 21+) × six DRMs"
    );
}

/// `[tables] format = "in36"` is refused for a single-d6 table, naming the key, the
/// line and the formats allowed; so is a decimals count out of range.
#[test]
fn table_formats_that_do_not_apply_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (body, needles) in [
        (
            "[tables]\nformat = \"in36\"\n",
            &[
                "line 7",
                "tables.format",
                "\"percent\", \"fraction\", \"in6\"",
            ][..],
        ),
        (
            "[tables]\ndecimals = 5\n",
            &["line 7", "tables.decimals", "0 to 4"][..],
        ),
    ] {
        let file = dir.path().join("a.toml");
        std::fs::write(
            &file,
            format!("system = \"attrition\"\ntrials = 100\n[roll]\nsp = 8\n\n{body}"),
        )
        .unwrap();
        let output = Command::cargo_bin("battlelab")
            .unwrap()
            .arg("validate")
            .arg(&file)
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        for needle in needles {
            assert!(stderr.contains(needle), "{needle}: {stderr}");
        }
    }
}
