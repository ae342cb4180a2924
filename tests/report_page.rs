//! The report a designer opens: the page answers first and files every chart under its
//! own variant; `tables.md` carries the numbers the question asks for, under the sides'
//! own names; `tables.xlsx` holds every rulebook table as numbers and text, read back
//! here with a spreadsheet reader.
//!
//! Why this test exists: issue 40 found charts of a variant named in several words
//! ("DRM cap 3") filed under "All variants together", a page that opened on its hashes,
//! field tables without P(smaller force loses), and side names from the file ignored.
//! Each check below fails on the report as it was then.

use std::fs;
use std::path::{Path, PathBuf};

mod common;

use calamine::{open_workbook, Data, Reader, Xlsx};

/// Trials per run: the page and the tables, not the numbers, are under test.
const TRIALS: &str = "3000";

fn run(analysis: &str, out: &Path) -> PathBuf {
    let report = out.join(analysis.trim_end_matches(".toml"));
    let (code, _, stderr) = common::battlelab(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[
            "run",
            common::shipped(analysis).to_str().unwrap(),
            "--trials",
            TRIALS,
            "--quiet",
            "--out",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{analysis}: {stderr}");
    report
}

/// The chart groups of a page: (group title, the stems of the figures in it).
fn chart_groups(html: &str) -> Vec<(String, Vec<String>)> {
    let Some(start) = html.find("<section id=\"charts\">") else {
        return Vec::new();
    };
    let end = start + html[start..].find("</section>").unwrap();
    let charts = &html[start..end];
    charts
        .split("<details id=\"charts-")
        .skip(1)
        .map(|group| {
            let summary = group.split("<summary>").nth(1).unwrap();
            let title = summary.split(" <span").next().unwrap().to_string();
            let stems = group
                .split("<figure id=\"chart-")
                .skip(1)
                .map(|f| f.split('"').next().unwrap().to_string())
                .collect();
            (title, stems)
        })
        .collect()
}

/// A variant's name as its charts' file names carry it (`report::file_slug`).
fn chart_slug(variant: &str) -> String {
    let mut s = String::new();
    let chars: Vec<char> = variant.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let word_start = s.is_empty() || s.ends_with('-');
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if c == '+' && word_start {
            s.push_str("plus");
        } else if c == '-' && word_start && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
            s.push_str("minus");
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

fn variants(report: &Path) -> Vec<String> {
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(report.join("manifest.json")).unwrap()).unwrap();
    manifest["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_chart_is_filed_under_its_own_variant_whatever_the_name() {
    let dir = tempfile::tempdir().unwrap();
    // field_combat: "printed", "DRM cap 3"; ratio_value_of_plus_one: "+1 argument",
    // "extra unit (double)", … and one chart over all variants.
    for analysis in ["field_combat.toml", "ratio_value_of_plus_one.toml"] {
        let report = run(analysis, dir.path());
        let html = fs::read_to_string(report.join("index.html")).unwrap();
        let variants = variants(&report);
        assert!(variants.len() > 1, "{analysis}: {variants:?}");
        let groups = chart_groups(&html);
        let mut filed = 0;
        for (title, stems) in &groups {
            match title.strip_prefix("Variant: ") {
                Some(variant) => {
                    let slug = chart_slug(&variant.replace("&amp;", "&"));
                    for stem in stems {
                        assert!(
                            stem.contains(&format!("_{slug}")),
                            "{analysis}: {stem} is filed under {title}"
                        );
                    }
                    filed += stems.len();
                }
                None => {
                    assert_eq!(title, "All variants together", "{analysis}");
                    for stem in stems {
                        assert!(
                            stem.contains("by_variant"),
                            "{analysis}: the chart {stem} of one variant is filed under all variants"
                        );
                    }
                }
            }
        }
        // Every variant has its own group, and every chart of one variant is in it.
        for v in &variants {
            assert!(
                groups
                    .iter()
                    .any(|(t, s)| t == &format!("Variant: {v}") && !s.is_empty()),
                "{analysis}: no charts filed under {v}: {:?}",
                groups.iter().map(|g| &g.0).collect::<Vec<_>>()
            );
        }
        let svgs = fs::read_dir(&report)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_string_lossy();
                name.ends_with(".svg") && !name.contains("by_variant")
            })
            .count();
        assert_eq!(filed, svgs, "{analysis}: charts filed under a variant");
    }
}

#[test]
fn the_page_opens_on_the_answer_and_every_chart_opens_full_size() {
    let dir = tempfile::tempdir().unwrap();
    let report = run("field_combat.toml", dir.path());
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    let at = |needle: &str| {
        html.find(needle)
            .unwrap_or_else(|| panic!("no {needle} on the page"))
    };
    // The question, then the answer (headline and rulebook tables), then the rest.
    assert!(at("id=\"question\"") < at("id=\"tables\""));
    for later in [
        "<nav class=\"toc\"",
        "id=\"expectations\"",
        "id=\"charts\"",
        "id=\"run\"",
        "Rules hash",
        "id=\"files\"",
    ] {
        assert!(
            at("id=\"tables\"") < at(later),
            "{later} comes before the answer"
        );
    }
    // The headline is the first section of the answer, and no table starts folded.
    let tables = &html[at("id=\"tables\"")..at("<nav class=\"toc\"")];
    let first = tables.find("<details").unwrap();
    assert!(
        tables[first..].starts_with("<details class=\"section\" id=\"tables-1\" open>"),
        "{}",
        &tables[first..first + 120]
    );
    assert!(tables[first..].contains("Who loses — printed"));
    let sections = tables.matches("<details class=\"section\"").count();
    assert!(sections >= 6, "{sections} sections");
    assert_eq!(
        tables
            .matches("<details class=\"section\" id=\"tables-")
            .count(),
        sections
    );
    assert_eq!(
        tables.matches("\" open><summary>").count(),
        sections,
        "a rulebook table starts folded"
    );
    // Every chart is a link to its own SVG, which opens full size.
    let figures = html.matches("<figure id=\"chart-").count();
    assert!(figures > 0);
    for figure in html.split("<figure id=\"chart-").skip(1) {
        let stem = figure.split('"').next().unwrap();
        assert!(
            figure.contains(&format!(
                "<a href=\"{stem}.svg\" title=\"open full size\"><img src=\"{stem}.svg\""
            )),
            "{stem}"
        );
    }
    // A chart of many panels spans the page.
    assert!(html.contains("<figure id=\"chart-outcomes_printed\" class=\"wide\">"));
}

#[test]
fn field_tables_carry_who_loses_and_the_sides_names() {
    let dir = tempfile::tempdir().unwrap();
    let report = run("field_combat.toml", dir.path());
    let md = fs::read_to_string(report.join("tables.md")).unwrap();
    // The answer first: who loses comes before the CRT.
    let who = md
        .find("## Who loses — printed")
        .expect("no who-loses table");
    assert!(who < md.find("## Combat Results Table — printed").unwrap());
    assert!(md.contains("## Who loses — DRM cap 3"));
    assert!(md.contains(
        "| odds | drm | smaller | P(smaller loses) | P(Attacker wins) | P(Defender wins) | SP lost by Attacker | SP lost by Defender | source |"
    ));
    // The outcome table's columns by the sides' names, not "A" and "B".
    assert!(
        md.contains("| odds | drm | Attacker wins | Defender wins |"),
        "{md}"
    );
    assert!(!md.contains("| A wins"), "{md}");
    // 1:1 at DRM 0 (A 8 SP, B 8 SP): on equal SP the smaller is B, the Defender; the
    // row carries the expectations' exact value.
    let row = md
        .lines()
        .find(|l| l.starts_with("| 1:1 | 0 | Defender | "))
        .expect("no 1:1, drm 0 row");
    let expectations = fs::read_to_string(report.join("expectations.csv")).unwrap();
    let exact = exact_p_smaller_loses(&expectations, "printed", "1:1", "0");
    assert!(
        row.contains(&format!("| {:.1}% |", exact * 100.0)),
        "{row} vs {exact}"
    );
    // The charts' titles and legends name the sides too.
    let svg = fs::read_to_string(report.join("sp_lost_a_printed.svg")).unwrap();
    assert!(svg.contains("SP lost by Attacker"), "title");
    let svg = fs::read_to_string(report.join("outcomes_printed.svg")).unwrap();
    assert!(svg.contains("Attacker wins"), "legend");
}

/// `exact_p_smaller_loses` of expectations.csv at (variant, odds label, drm).
fn exact_p_smaller_loses(csv: &str, variant: &str, odds: &str, drm: &str) -> f64 {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (v, o, d, e) = (
        column("variant"),
        column("odds_label"),
        column("drm"),
        column("exact_p_smaller_loses"),
    );
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|c| c[v] == variant && c[o] == odds && c[d] == drm)
        .map(|c| c[e].parse().unwrap())
        .expect("no such row in expectations.csv")
}

#[test]
fn tables_xlsx_holds_every_rulebook_table_as_numbers_and_text() {
    let dir = tempfile::tempdir().unwrap();
    let report = run("field_combat.toml", dir.path());
    let path = report.join("tables.xlsx");
    let manifest = fs::read_to_string(report.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"tables.xlsx\""), "not in the manifest");
    let mut book: Xlsx<_> = open_workbook(&path).unwrap();
    let sheets = book.sheet_names();
    let md = fs::read_to_string(report.join("tables.md")).unwrap();
    // One sheet per table of tables.md, in its order, named after its heading.
    let headings: Vec<&str> = md.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    assert_eq!(sheets.len(), headings.len(), "{sheets:?}");
    for (name, heading) in sheets.iter().zip(&headings) {
        assert!(name.encode_utf16().count() <= 31, "{name}");
        assert!(
            !name.contains([':', '/', '*', '?', '[', ']', '\\']),
            "{name}"
        );
        // The heading itself, or, where it is too long, shortened with its variant whole.
        let variant = heading.rsplit_once(" — ").unwrap().1;
        assert!(
            name == heading || (name.contains('…') && name.ends_with(&format!(" — {variant}"))),
            "{name} for {heading}"
        );
    }
    assert!(sheets.contains(&"Combat Results Tab… — DRM cap 3".to_string()));
    let who = book.worksheet_range("Who loses — printed").unwrap();
    // The title row names the run.
    assert_eq!(
        who.get_value((0, 0)),
        Some(&Data::String("field_combat — Who loses — printed".into()))
    );
    assert_eq!(
        who.get_value((1, 0)),
        Some(&Data::String(format!(
            "Seed 1815, {TRIALS} battles per grid point"
        )))
    );
    assert_eq!(
        who.get_value((3, 3)),
        Some(&Data::String("P(smaller loses)".into()))
    );
    // Odds are text (a spreadsheet would read 3:2 as a time), DRMs and chances numbers.
    let expectations = fs::read_to_string(report.join("expectations.csv")).unwrap();
    let mut rows = 0;
    for r in 4..who.height() as u32 {
        let Some(Data::String(odds)) = who.get_value((r, 0)) else {
            panic!("row {r}: odds not text: {:?}", who.get_value((r, 0)));
        };
        let Some(Data::String(drm)) = who.get_value((r, 1)) else {
            panic!("row {r}: drm label not text");
        };
        let exact = exact_p_smaller_loses(&expectations, "printed", odds, drm);
        assert_eq!(
            who.get_value((r, 3)),
            Some(&Data::Float(exact)),
            "P(smaller loses) at {odds}, drm {drm}"
        );
        assert_eq!(who.get_value((r, 8)), Some(&Data::String("exact".into())));
        rows += 1;
    }
    assert_eq!(rows, 4 * 7, "one row per grid point");
    // The CRT: odds labels and printed results text.
    let crt = book
        .worksheet_range("Combat Results Table — printed")
        .unwrap();
    assert_eq!(crt.get_value((4, 0)), Some(&Data::String("1:1".into())));
    assert_eq!(crt.get_value((5, 0)), Some(&Data::String("3:2".into())));
    // The outcome percentages are probabilities, summing to 1 on every row.
    let outcomes = book.worksheet_range("Battle outcomes — printed").unwrap();
    for r in 4..outcomes.height() as u32 {
        let total: f64 = (2..outcomes.width() as u32)
            .filter_map(|c| match outcomes.get_value((r, c)) {
                Some(Data::Float(p)) => Some(*p),
                _ => None,
            })
            .sum();
        assert!((total - 1.0).abs() < 1e-9, "row {r} sums to {total}");
    }
}

#[test]
fn tables_xlsx_counts_faces_where_the_file_asks_for_them() {
    // The attrition study printed "in 6": each chance cell is the count of faces, a
    // number under a `0" in 6"` format, as tables.md prints it.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("attrition_in6.toml");
    let text = fs::read_to_string(common::shipped("attrition.toml")).unwrap();
    fs::write(&file, format!("{text}\n[tables]\nformat = \"in6\"\n")).unwrap();
    let report = dir.path().join("r");
    let (code, _, stderr) = common::battlelab(
        dir.path(),
        &[
            "run",
            file.to_str().unwrap(),
            "--trials",
            "1000",
            "--quiet",
            "--out",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let md = fs::read_to_string(report.join("tables.md")).unwrap();
    let mut book: Xlsx<_> = open_workbook(report.join("tables.xlsx")).unwrap();
    let first = book.sheet_names()[0].clone();
    assert!(first.starts_with("Outcomes per grid"), "{first}");
    let sheet = book.worksheet_range(&first).unwrap();
    let rows: Vec<Vec<String>> = md
        .lines()
        .skip_while(|l| !l.starts_with("## Outcomes per grid point"))
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| !l.starts_with("|---"))
        .skip(1)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    assert!(!rows.is_empty());
    let mut faces = 0;
    for (r, row) in rows.iter().enumerate() {
        for (c, text) in row.iter().enumerate() {
            let cell = sheet.get_value((4 + r as u32, c as u32)).unwrap();
            if let Some(k) = text.strip_suffix(" in 6") {
                assert_eq!(cell, &Data::Float(k.parse().unwrap()), "{text}");
                faces += 1;
            } else if c < 2 {
                assert_eq!(cell, &Data::String(text.clone()), "labels are text");
            }
        }
    }
    assert!(faces >= rows.len() * 6, "{faces} cells in 6");
}
