//! Analysis files as test data. Every file in `tests/data/bad/` must be refused: exit code
//! 2, the error its first line states (`# error: …`), the file named, and nothing written.
//! Every file in `tests/data/good/` must check and run.

use std::path::{Path, PathBuf};

mod common;

use assert_cmd::Command;
use battlelab::systems::field::FieldStudy;
use battlelab_core::systems::field::battle::{ClcRow, OddsRounding, ResultPair};

fn data(kind: &str) -> Vec<PathBuf> {
    common::toml_files(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(kind),
    )
}

fn expected_error(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let first = text.lines().next().unwrap_or_default();
    first
        .strip_prefix("# error: ")
        .map(str::trim_end)
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| {
            panic!(
                "{}: the first line must be `# error: <message>` with a non-empty message",
                path.display()
            )
        })
        .to_string()
}

#[test]
fn bad_files_are_refused_with_their_stated_error_and_nothing_written() {
    let files = data("bad");
    assert!(files.len() >= 12, "only {} bad files", files.len());
    for file in files {
        let expected = expected_error(&file);
        // The working directory and the parent of `--out`: a refused file must leave it
        // empty (no report, no hidden `.report.partial-*` staging folder).
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report");
        let run: Vec<&std::ffi::OsStr> = vec![
            "--trials".as_ref(),
            "1000".as_ref(),
            "--out".as_ref(),
            report.as_os_str(),
        ];
        for (command, options) in [("run", run), ("validate", Vec::new())] {
            let output = Command::cargo_bin("battlelab")
                .unwrap()
                .current_dir(dir.path())
                .arg(command)
                .arg(&file)
                .args(&options)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let name = file.display();
            assert_eq!(
                output.status.code(),
                Some(2),
                "{name} ({command}): {stderr}"
            );
            assert!(
                stderr.contains(&expected),
                "{name}: expected `{expected}` in: {stderr}"
            );
            assert!(
                stderr.contains(&file.display().to_string()),
                "{name}: the message must name the file: {stderr}"
            );
            assert!(!stderr.contains("panicked"), "{name}: {stderr}");
            assert!(
                output.stdout.is_empty(),
                "{name}: printed {:?}",
                String::from_utf8_lossy(&output.stdout)
            );
            assert!(
                !report.exists(),
                "{name} ({command}): wrote {}",
                report.display()
            );
            let left: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert!(left.is_empty(), "{name} ({command}): left {left:?} behind");
        }
    }
}

#[test]
fn bad_files_name_a_line_where_there_is_one() {
    for file in data("bad") {
        let error = battlelab::systems::load(&file)
            .err()
            .expect("refused")
            .to_string();
        // These errors concern the file as a whole (a missing key), not one line.
        let whole_file = [
            "missing_system",
            "attrition_without_sp",
            "setup_no_states",
            "table_grid_too_large",
            // Neither [engagement] nor [round_robin]: there is no line to name.
            "melee_no_engagement",
            // Two sweep lines are in conflict; the error names neither.
            "odds_and_a_sp_both_swept",
        ]
        .iter()
        .any(|n| file.file_stem().unwrap() == *n);
        // "…toml, line 7: …" from battlelab, "parse error at line 7" from the TOML parser;
        // the word "line" elsewhere in a message does not count.
        let names_a_line = [", line ", "at line "].iter().any(|marker| {
            error.match_indices(marker).any(|(at, m)| {
                error[at + m.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit())
            })
        });
        if !whole_file {
            assert!(names_a_line, "{}: no line in `{error}`", file.display());
        }
    }
}

#[test]
fn good_files_check_and_run() {
    let files = data("good");
    assert!(files.len() >= 3);
    for file in files {
        let name = file.display();
        Command::cargo_bin("battlelab")
            .unwrap()
            .arg("validate")
            .arg(&file)
            .assert()
            .success();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r");
        let output = Command::cargo_bin("battlelab")
            .unwrap()
            .args(["run", "--quiet", "--trials", "2000", "--out"])
            .arg(&out)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        for written in [
            "results.csv",
            "results.parquet",
            "tables.md",
            "manifest.json",
        ] {
            assert!(out.join(written).is_file(), "{name}: no {written}");
        }
    }
}

/// The overrides of `every_override.toml` reach the effective rules of each variant.
#[test]
fn overrides_reach_the_rules() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/good/every_override.toml");
    let analysis = FieldStudy::load(&path).unwrap();
    let base = &analysis.variants[0].rules;
    assert_eq!(base.drm_cap, 3);
    assert_eq!((base.roll_min, base.roll_max), (3, 11));
    assert_eq!(base.odds_rounding, OddsRounding::Nearest);
    assert_eq!(base.round_limit, 4);
    assert_eq!(base.crt.columns[7], ResultPair::parse("1/1").unwrap());
    assert_eq!(base.odds_labels(), ["1:1", "3:2", "2:1", "3:1", "4:1"]);
    assert_eq!(base.odds_columns[4].roll_two_column, 5);
    assert_eq!(base.clc.value(ClcRow::D1, 5), 5);
    assert_eq!(base.clc.value(ClcRow::One, 2), 2);
    assert!(base.tactics.cells[4][4].ends_battle && base.tactics.cells[4][4].no_combat);
    assert_eq!(base.tactics.cells[4][0].drm, -3);
    let harsher = &analysis.variants[1].rules;
    assert_eq!(harsher.clc.value(ClcRow::D2OrD3, 2), 4);
    assert_eq!(harsher.clc.value(ClcRow::D2OrD3, 3), 6);
    assert_eq!(harsher.round_limit, 8);
    assert_eq!(harsher.drm_cap, 3, "variants build on [rules]");
    // The odds sweep sets A's SP from B's 9 SP: 9, 18, 36.
    let a_sp: Vec<u32> = analysis
        .runs
        .iter()
        .take(3)
        .map(|r| r.battle.a.sp)
        .collect();
    assert_eq!(a_sp, [9, 18, 36]);
}

/// Every analysis shipped under `analyses/` checks and runs, and writes data, tables and
/// a manifest: the command README gives each of them (`battlelab run analyses/<file>`) works.
#[test]
fn shipped_analyses_run() {
    let files = common::shipped_analyses();
    assert!(
        files.len() >= 10,
        "expected the shipped analyses, found {files:?}"
    );
    for file in files {
        let out = tempfile::tempdir().unwrap();
        let report = out.path().join("report");
        let output = Command::cargo_bin("battlelab")
            .unwrap()
            .args(["run", "--quiet", "--trials", "5000", "--out"])
            .arg(&report)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        for written in [
            "results.csv",
            "results.parquet",
            "tables.md",
            "manifest.json",
        ] {
            assert!(
                report.join(written).is_file(),
                "{}: no {written}",
                file.display()
            );
        }
        let charts = std::fs::read_dir(&report)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "png")
            })
            .count();
        assert!(charts >= 1, "{}: no chart", file.display());
    }
}

/// Rows of a printed CRT: (odds label, cells by modified roll).
type CrtRows = Vec<(String, Vec<String>)>;

/// The CRT sections of a `tables.md`: variant name → rows of (odds label, cells by roll),
/// with the lines that follow each table up to the next section.
fn crt_sections(md: &str) -> Vec<(String, CrtRows, String)> {
    md.split("## ")
        .filter_map(|section| {
            let (title, body) = section.split_once('\n')?;
            let variant = title.strip_prefix("Combat Results Table — ")?;
            let rows: CrtRows = body
                .lines()
                .filter(|l| l.starts_with("| ") && !l.starts_with("| odds"))
                .map(|l| {
                    let cells: Vec<String> = l
                        .trim_matches('|')
                        .split('|')
                        .map(|c| c.trim().to_string())
                        .collect();
                    (cells[0].clone(), cells[1..].to_vec())
                })
                .collect();
            let after = body.lines().filter(|l| !l.starts_with('|')).collect();
            Some((variant.to_string(), rows, after))
        })
        .collect()
}

/// `tables.md` of `crt_cells.toml` prints the CRT by odds row × modified roll, marks the
/// cells `[rules.crt_cells]` edited and nothing else, and the `crt` column form still
/// changes the four cells that read its column.
#[test]
fn tables_md_marks_edited_cells() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/good/crt_cells.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let output = Command::cargo_bin("battlelab")
        .unwrap()
        .args(["run", "--quiet", "--trials", "2000", "--out"])
        .arg(&out)
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let md = std::fs::read_to_string(out.join("tables.md")).unwrap();
    let sections = crt_sections(&md);
    let names: Vec<&str> = sections.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        names,
        ["printed", "one cell", "column 8", "2:1 sevens and eights"]
    );
    let printed = &sections[0].1;
    assert_eq!(printed.len(), 4);
    // (odds, roll, cell as printed in tables.md) wherever a variant differs from printed.
    let changes = |rows: &[(String, Vec<String>)]| -> Vec<(String, usize, String)> {
        let mut changed = Vec::new();
        for ((odds, cells), (printed_odds, printed_cells)) in rows.iter().zip(printed) {
            assert_eq!(odds, printed_odds);
            assert_eq!(cells.len(), 11, "one cell per modified roll 2…12");
            for (i, (cell, was)) in cells.iter().zip(printed_cells).enumerate() {
                if cell != was {
                    changed.push((odds.clone(), i + 2, cell.clone()));
                }
            }
        }
        changed
    };
    let note = "`*` edited by rules.crt_cells";
    assert!(!sections[0].2.contains(note));
    assert!(printed
        .iter()
        .all(|(_, cells)| cells.iter().all(|c| !c.contains('*'))));
    assert_eq!(
        changes(&sections[1].1),
        [("3:2".to_string(), 8, "1/1*".to_string())]
    );
    assert!(sections[1].2.contains(note), "{}", sections[1].2);
    assert_eq!(
        changes(&sections[2].1),
        [
            ("1:1".to_string(), 9, "1/1".to_string()),
            ("3:2".to_string(), 8, "1/1".to_string()),
            ("2:1".to_string(), 7, "1/1".to_string()),
            ("3:1".to_string(), 6, "1/1".to_string()),
        ]
    );
    assert!(!sections[2].2.contains(note));
    assert_eq!(
        changes(&sections[3].1),
        [
            ("2:1".to_string(), 7, "D1/D1*".to_string()),
            ("2:1".to_string(), 8, "D1/D2*".to_string()),
        ]
    );
    assert!(sections[3].2.contains(note));
}

/// A sweep of four parameters (odds, drm, a.leader, b.morale): every chart draws one or
/// two of them, small multiples take the next and one file per value the rest. Every
/// chart's title names the slice it holds fixed, each file name says it in a short slug,
/// and no two charts share a name.
#[test]
fn four_axes_charts_name_their_slice() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/good/four_axes.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let output = Command::cargo_bin("battlelab")
        .unwrap()
        .args(["run", "--quiet", "--trials", "2000", "--out"])
        .arg(&out)
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut svgs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    svgs.sort();
    // The charts expected, each once: bars and lines over odds (panels per drm) for every
    // b.morale × a.leader; heatmaps over odds × drm (panels per b.morale) per a.leader.
    let mut expected = Vec::new();
    for base in ["battle_length", "outcomes", "sp_lost_a", "sp_lost_b"] {
        for morale in [1, 3] {
            for leader in [1, 2, 3] {
                expected.push(format!("{base}_b-morale-{morale}_a-leader-{leader}.svg"));
            }
        }
    }
    for leader in [1, 2, 3] {
        expected.push(format!("heatmap_smaller_loses_a-leader-{leader}.svg"));
    }
    expected.sort();
    assert_eq!(svgs, expected);
    for name in &svgs {
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-.".contains(c))
                && !name.contains("__")
                && !name.contains("--"),
            "{name}"
        );
        assert!(
            out.join(name.replace(".svg", ".png")).is_file(),
            "{name}: no png"
        );
        let svg = std::fs::read_to_string(out.join(name)).unwrap();
        // A whole <text> element's content (plotters writes it on a line of its own).
        let text = |needle: &str| {
            svg.contains(&format!(">{needle}</text>"))
                || svg.contains(&format!(">\n{needle}\n</text>"))
        };
        let leader = name.split("a-leader-").nth(1).unwrap().replace(".svg", "");
        if name.starts_with("heatmap") {
            // The file's slice in the title; the panels name b.morale.
            assert!(text(&format!("a.leader = {leader}")), "{name}");
            assert!(text("b.morale = 1") && text("b.morale = 3"), "{name}");
        } else {
            let morale = &name.split("b-morale-").nth(1).unwrap()[..1];
            assert!(
                text(&format!("b.morale = {morale}, a.leader = {leader}")),
                "{name}: title lacks its slice"
            );
            assert!(text("drm = 0") && text("drm = 1"), "{name}: panels");
        }
    }
    // tables.md at two decimals: every outcome row adds up to exactly 100.00.
    let tables = std::fs::read_to_string(out.join("tables.md")).unwrap();
    let rows: Vec<&str> = tables
        .lines()
        .skip_while(|l| !l.starts_with("## Battle outcomes"))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| odds"))
        .collect();
    assert_eq!(rows.len(), 24);
    for row in rows {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let hundredths: u64 = cells[4..]
            .iter()
            .map(|c| {
                let c = c.trim_end_matches('†');
                assert_eq!(c.split('.').nth(1).map(str::len), Some(2), "{row}");
                c.replace('.', "").parse::<u64>().unwrap()
            })
            .sum();
        assert_eq!(hundredths, 10_000, "{row}");
    }
}
