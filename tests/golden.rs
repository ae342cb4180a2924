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

/// `index.html` with the base64 of the WebAssembly module it embeds replaced by a
/// marker, and the module's bytes as embedded: the page is pinned without the module
/// (which moves with every change to the core), and the module is held to the build's.
fn page_and_module(html: &str) -> (String, Vec<u8>) {
    use base64::Engine as _;
    let start = battlelab::report::tryit::MODULE_ELEMENT;
    let Some((before, rest)) = html.split_once(start) else {
        return (html.to_string(), Vec::new());
    };
    let (encoded, after) = rest
        .split_once("</script>")
        .expect("the module's element ends");
    let module = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .expect("the page embeds the module as base64");
    (format!("{before}{start}MODULE</script>{after}"), module)
}

/// `name  sha256` for every data file, `tables.md`, `tables.xlsx` and `index.html` (its
/// embedded module left out, [`page_and_module`]) of a report, sorted by name.
fn hashes(report: &Path) -> String {
    let mut names: Vec<String> = fs::read_dir(report)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.ends_with(".csv")
                || n.ends_with(".parquet")
                || n == "tables.md"
                || n == "tables.xlsx"
                || n == "index.html"
        })
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| {
            let mut bytes = fs::read(report.join(n)).unwrap();
            if n == "index.html" {
                let (page, module) = page_and_module(&String::from_utf8(bytes).unwrap());
                assert!(
                    module == battlelab::report::wasm::MODULE_GZ,
                    "{}: the page embeds {} bytes of module, not the build's {}",
                    report.display(),
                    module.len(),
                    battlelab::report::wasm::MODULE_GZ.len()
                );
                bytes = page.into_bytes();
            }
            let digest = Sha256::digest(&bytes);
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

/// Every system's `results`, `metrics` and `distributions` share their columns: `system,
/// variant`, the run's axes, then the same fixed tail; odds columns are numbers that sort
/// beside their printed label.
fn one_schema(stem: &str, report: &Path) {
    let header = |name: &str| -> Vec<String> {
        let text = fs::read_to_string(report.join(name)).unwrap();
        text.lines()
            .next()
            .unwrap()
            .split(',')
            .map(str::to_string)
            .collect()
    };
    for (file, tail) in [
        (
            "results.csv",
            &[
                "outcome",
                "trials",
                "count",
                "probability",
                "ci_low",
                "ci_high",
                "exact",
                "exact_fraction",
            ][..],
        ),
        (
            "metrics.csv",
            &["metric", "trials", "mean", "exact_mean"][..],
        ),
        (
            "distributions.csv",
            &["metric", "value", "count", "probability", "exact"][..],
        ),
    ] {
        let columns = header(file);
        assert_eq!(
            &columns[..2],
            ["system", "variant"],
            "{stem} {file}: {columns:?}"
        );
        assert_eq!(
            &columns[columns.len() - tail.len()..],
            tail,
            "{stem} {file}: {columns:?}"
        );
        for axis in &columns[2..columns.len() - tail.len()] {
            assert!(
                axis.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{stem} {file}: column {axis} is not snake case"
            );
        }
        if let Some(at) = columns.iter().position(|c| c == "odds") {
            assert_eq!(columns[at + 1], "odds_label", "{stem} {file}");
            let text = fs::read_to_string(report.join(file)).unwrap();
            let mut odds: Vec<(f64, String)> = text
                .lines()
                .skip(1)
                .map(|l| {
                    // Axis columns come before any quoted outcome name.
                    let cells: Vec<&str> = l.split(',').collect();
                    (cells[at].parse::<f64>().unwrap(), cells[at + 1].to_string())
                })
                .collect();
            odds.sort_by(|a, b| a.0.total_cmp(&b.0));
            odds.dedup();
            let labels: Vec<&str> = odds.iter().map(|(_, l)| l.as_str()).collect();
            if labels.len() == 4 && labels[0].contains(':') {
                assert_eq!(labels, ["1:1", "3:2", "2:1", "3:1"], "{stem}");
            }
        }
    }
}

/// The cells of the rulebook tables the page's panel recomputes (`tryit-data`'s `live`)
/// name tables, rows and columns that `tables.md` has and that the page shows as as many
/// `<table>`s, each a number or the run's source, and runs of the plan.
fn live_cells_stand_in_the_tables(stem: &str, report: &Path) {
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    let start =
        html.find("id=\"tryit-data\">").expect("the panel's data") + "id=\"tryit-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    let live = &data["live"];
    assert!(live.is_object(), "{stem}: no live cells recorded");
    let md = fs::read_to_string(report.join("tables.md")).unwrap();
    let mut tables: Vec<Vec<Vec<String>>> = Vec::new();
    let mut in_table = false;
    for line in md.lines() {
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        if !in_table {
            tables.push(Vec::new());
            in_table = true;
        } else if !cells.iter().all(|c| c.chars().all(|ch| ch == '-')) {
            tables.last_mut().unwrap().push(cells);
        }
    }
    assert_eq!(live["tables"], tables.len(), "{stem}: tables in tables.md");
    let section = &html[html.find("<section id=\"tables\"").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert_eq!(
        section.matches("<table>").count(),
        tables.len(),
        "{stem}: tables on the page"
    );
    let runs = live["runs"].as_array().unwrap().len();
    for cell in live["cells"].as_array().unwrap() {
        let at = |k: &str| cell[k].as_u64().unwrap() as usize;
        let text = &tables[at("table")][at("row")][at("column")];
        assert!(at("run") < runs, "{stem}: {cell}");
        let number = |t: &str| t.trim_end_matches('%').parse::<f64>().is_ok();
        let fraction = |t: &str| -> Option<f64> {
            let (n, d) = t.split_once('/').unwrap_or((t, "1"));
            Some(n.parse::<u64>().ok()? as f64 / d.parse::<u64>().ok()? as f64)
        };
        let fits = if cell["source"] == true {
            text == "exact" || text == "simulated"
        } else if cell["chance"].is_string() {
            // A chance as `[tables]` prints it: a percentage (marked † where moved), a
            // fraction, or a count of faces.
            let faces = text
                .split_once(" in ")
                .is_some_and(|(k, n)| k.parse::<u64>().is_ok() && (n == "6" || n == "36"));
            number(text.trim_end_matches('†')) || fraction(text).is_some() || faces
        } else if cell["derived"].is_string() {
            // A number derived from several runs: in its format ("0.53", "12.3%",
            // "+0.125"), "∞" where infinite, in bold where the best of its row.
            let plain = text
                .strip_prefix("**")
                .and_then(|t| t.strip_suffix("**"))
                .unwrap_or(text);
            let digits = |t: &str| {
                t.split_once('.')
                    .map_or(0, |(_, d)| d.trim_end_matches('%').len())
            };
            if cell["format"] == "text" {
                // Printed by the system itself: three percentages, a verdict, "–".
                !plain.is_empty()
            } else {
                plain == "∞"
                    || (number(plain)
                        && digits(plain) == at("decimals")
                        && (cell["format"] == "percent") == plain.ends_with('%')
                        && if cell["format"] == "signed" {
                            plain.starts_with(['+', '-'])
                        } else {
                            !plain.starts_with('+')
                        })
            }
        } else if cell["expected"].is_string() {
            // "7/6 (1.167)": the exact value and the same value at the cell's decimals.
            let decimals = at("decimals");
            text.strip_suffix(')')
                .and_then(|t| t.split_once(" ("))
                .is_some_and(|(exact, shown)| {
                    fraction(exact).is_some_and(|v| format!("{v:.decimals$}") == shown)
                })
        } else {
            number(text)
        };
        assert!(fits, "{stem}: {cell} is {text:?}");
    }
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
        // index.html is pinned without the module it embeds (checked to be the build's
        // in `hashes`), and is the same bytes whatever the threads and wherever the
        // folder is.
        let page = |n: &str| fs::read(dir.path().join(format!("{stem}_{n}/index.html"))).unwrap();
        assert_eq!(page("1"), page("4"), "{stem}: index.html differs");
        one_schema(&stem, &dir.path().join(format!("{stem}_1")));
        live_cells_stand_in_the_tables(&stem, &dir.path().join(format!("{stem}_1")));
        assert!(!one.is_empty(), "{stem}: no data files");
        all += &format!("# {stem}\n{one}");
    }
    insta::assert_snapshot!(all);
}
