//! Bad rules files, and bad analyses of good ones, are refused with an error that names
//! the file, the line, the field and what to write instead.
//!
//! Each file under `tests/data/rules_bad/` is a rules file with one mistake; each under
//! `tests/data/rules_bad/analyses/` an analysis (`system = "rules"`) with one mistake, its
//! rules files in `analyses/rules/` (good ones, each checked to read). A file's first line
//! states the error it must give: `# error: line 12: field `tables.crt.cells.1:1`:
//! column "1:1" has 5 results` — the text from "line" on, which the error must contain
//! whole after the file's path (`<path>, line 12: field `…`: …`). Every stated error
//! names a line and a field (TOML's own syntax errors, such as a key given twice: a line
//! and a column), so a message that loses either fails here.
//!
//! The last tests hold the guide (`docs/rules-files.md`) to the format. Every ```toml
//! block in it begins with a marker line:
//! - `# rules file` — a whole rules file; it must read. `# rules file rules/<name>.toml`
//!   also names it, so the guide's analyses can use it;
//! - `# analysis` — a whole analysis; it must read, as if it sat in `analyses/` beside a
//!   `rules/` holding the shipped rules files and the guide's named ones;
//! - `# from rules/<file>.toml` — an excerpt: each of its lines is a line of that shipped
//!   file, which itself must read.
//!
//! A block without a marker fails the test, so no example goes unchecked.

use std::path::{Path, PathBuf};

use battlelab_core::systems::rules_file::game::Game;
use battlelab_core::systems::rules_file::RulesStudy;

fn data(under: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(under)
}

fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// The error a file's first line states: `# error: line N: field `F`: …`, and the file
/// it is in: this one, or (`# error in rules/x.toml: line N: …`, an analysis whose
/// settings make its rules file's battle wrong) that one, beside it.
fn stated_error(path: &Path, text: &str) -> (PathBuf, String) {
    let first = text.lines().next().unwrap_or("");
    let (at, stated) = match first.strip_prefix("# error in ") {
        Some(rest) => {
            let (file, stated) = rest.split_once(": ").unwrap_or(("", ""));
            (path.parent().unwrap().join(file), Some(stated))
        }
        None => (path.to_path_buf(), first.strip_prefix("# error: ")),
    };
    let stated = stated
        .map(str::trim_end)
        .unwrap_or_else(|| panic!("{}: the first line must be `# error: …`", path.display()));
    let (line, rest) = stated.split_once(": ").unwrap_or(("", ""));
    let numbered = |n: &str| n.parse::<usize>().is_ok_and(|n| n > 1);
    // TOML's own syntax errors (a key given twice) name the line and column, no field.
    let syntax = line
        .strip_prefix("at line ")
        .and_then(|l| l.split_once(", column "))
        .is_some_and(|(l, c)| numbered(l) && c.parse::<usize>().is_ok());
    assert!(
        syntax
            || line.strip_prefix("line ").is_some_and(numbered)
                && rest.starts_with("field `")
                && rest.len() > "field ``: ".len() + 8,
        "{}: the stated error names a line, a field and a message: `# error: line N: field `F`: message`; got {stated:?}",
        path.display()
    );
    (at, stated.to_string())
}

fn assert_refused_as_stated(path: &Path, text: &str, error: String) {
    let (at, stated) = stated_error(path, text);
    let separator = if stated.starts_with("at line ") {
        ": "
    } else {
        ", "
    };
    let whole = format!("{}{separator}{stated}", at.display());
    assert!(
        error.contains(&whole),
        "{}:\n  expected: …{whole}…\n  got:      {error}",
        path.display()
    );
}

#[test]
fn every_bad_rules_file_is_refused_with_its_line_field_and_fix() {
    let files = toml_files(&data("rules_bad"));
    assert!(files.len() >= 24, "only {} bad rules files", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        match Game::parse(&path, &text) {
            Ok(_) => panic!("{}: read without an error", path.display()),
            Err(e) => assert_refused_as_stated(&path, &text, e.to_string()),
        }
    }
}

#[test]
fn every_bad_analysis_of_a_rules_file_is_refused_with_its_line_field_and_fix() {
    let files = toml_files(&data("rules_bad/analyses"));
    assert!(files.len() >= 4, "only {} bad analyses", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        match RulesStudy::parse(&path, &text) {
            Ok(_) => panic!("{}: read without an error", path.display()),
            Err(e) => assert_refused_as_stated(&path, &text, e.to_string()),
        }
    }
}

/// The bad analyses' rules files are good: each mistake is the analysis's own.
#[test]
fn the_bad_analyses_rules_files_read() {
    let files = toml_files(&data("rules_bad/analyses/rules"));
    assert!(!files.is_empty());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        if let Err(e) = Game::parse(&path, &text) {
            panic!("{e}");
        }
    }
}

/// The repository's root (two folders above this crate).
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The ```toml blocks of a Markdown text, each with the line it starts on.
fn toml_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match open.take() {
            Some(block) if fence => out.push(block),
            Some((at, mut text)) => {
                text.push_str(line);
                text.push('\n');
                open = Some((at, text));
            }
            None if fence && line.trim() == "```toml" => open = Some((i + 1, String::new())),
            None => {}
        }
    }
    assert!(open.is_none(), "a ```toml block is not closed");
    out
}

/// Copies the shipped rules files and the guide's named ones (`# rules file rules/x.toml`)
/// into `dir/rules/`, as the guide's analyses expect to find them beside `dir/analyses/`.
fn lay_out_the_guides_rules(dir: &Path, blocks: &[(usize, String)]) {
    std::fs::create_dir_all(dir.join("rules")).unwrap();
    std::fs::create_dir_all(dir.join("analyses")).unwrap();
    for shipped in toml_files(&repository().join("rules")) {
        std::fs::copy(
            &shipped,
            dir.join("rules").join(shipped.file_name().unwrap()),
        )
        .unwrap();
    }
    for (_, block) in blocks {
        let marker = block.lines().next().unwrap_or_default().trim();
        if let Some(name) = marker.strip_prefix("# rules file rules/") {
            std::fs::write(dir.join("rules").join(name), block).unwrap();
        }
    }
}

#[test]
fn every_toml_example_in_the_rules_file_guide_reads() {
    let guide = std::fs::read_to_string(repository().join("docs/rules-files.md"))
        .expect("docs/rules-files.md");
    let blocks = toml_blocks(&guide);
    let dir = tempfile::tempdir().unwrap();
    lay_out_the_guides_rules(dir.path(), &blocks);
    let (mut rules, mut analyses, mut excerpts) = (0, 0, 0);
    for (line, block) in &blocks {
        let marker = block.lines().next().unwrap_or_default().trim();
        let at = format!("docs/rules-files.md, the ```toml block at line {line}");
        if let Some(named) = marker.strip_prefix("# rules file") {
            rules += 1;
            let name = named
                .trim()
                .strip_prefix("rules/")
                .unwrap_or("guide_example.toml");
            let path = dir.path().join("rules").join(name);
            if let Err(e) = Game::parse(&path, block) {
                panic!("{at} does not read: {e}\n{block}");
            }
        } else if marker == "# analysis" {
            analyses += 1;
            let path = dir.path().join("analyses/guide_example.toml");
            if let Err(e) = RulesStudy::parse(&path, block) {
                panic!("{at} does not read: {e}\n{block}");
            }
        } else if let Some(file) = marker.strip_prefix("# from ") {
            excerpts += 1;
            let path = repository().join(file);
            let shipped =
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{at} names {file}: {e}"));
            if let Err(e) = Game::parse(&path, &shipped) {
                panic!("{at} quotes {file}, which does not read: {e}");
            }
            let lines: Vec<&str> = shipped.lines().map(str::trim_end).collect();
            for quoted in block.lines().skip(1) {
                assert!(
                    lines.contains(&quoted.trim_end()),
                    "{at} quotes a line {file} does not hold: {quoted:?}"
                );
            }
        } else {
            panic!("{at} begins with neither `# rules file`, `# analysis` nor `# from rules/<file>.toml`: {marker:?}");
        }
    }
    assert!(
        rules >= 4 && analyses >= 2 && excerpts >= 8,
        "the guide's examples: {rules} rules files, {analyses} analyses, {excerpts} excerpts"
    );
}

/// The guide's step 6 works three cells of the classic CRT by hand: at 6 against 3 with
/// an attacker's leader of 1, DR 1/3, AR 1/2, EX 1/6 in clear; AR 2/3, AE 1/3 in woods;
/// AR 1/3, AE 2/3 in a city. Its first analysis must give exactly those.
#[test]
fn the_guides_hand_worked_crt_cells_are_what_its_first_analysis_gives() {
    use battlelab_core::engine::System;
    use num_rational::BigRational;
    let guide = std::fs::read_to_string(repository().join("docs/rules-files.md")).unwrap();
    let blocks = toml_blocks(&guide);
    let first = &blocks
        .iter()
        .find(|(_, b)| b.starts_with("# analysis"))
        .expect("an analysis in the guide")
        .1;
    assert!(
        guide.contains("DR 1/3, AR 1/2, EX 1/6 in clear terrain")
            && guide.contains("in woods (one column left, 1:1) AR 2/3, AE 1/3")
            && guide.contains("in a city (1:2) AR 1/3, AE 2/3"),
        "the guide's step 6 no longer states the cells this test holds"
    );
    let dir = tempfile::tempdir().unwrap();
    lay_out_the_guides_rules(dir.path(), &blocks);
    let study = RulesStudy::parse(&dir.path().join("analyses/guide_example.toml"), first)
        .unwrap_or_else(|e| panic!("{e}"));
    let fraction = |n: i64, d: i64| BigRational::new(n.into(), d.into());
    let expected = [
        (0, [("DR", (1, 3)), ("AR", (1, 2)), ("EX", (1, 6))]),
        (1, [("AR", (2, 3)), ("AE", (1, 3)), ("DR", (0, 1))]),
        (2, [("AR", (1, 3)), ("AE", (2, 3)), ("EX", (0, 1))]),
    ];
    for (terrain, cells) in expected {
        let run = study
            .runs
            .iter()
            .position(|r| {
                r.settings.contains(&("attacker.strength".into(), 6))
                    && r.settings.contains(&("terrain".into(), terrain))
                    && r.settings.contains(&("attacker.leader".into(), 1))
            })
            .expect("the run at 6 against 3");
        let exact = study.exact(run).expect("a one-roll CRT is exact");
        let outcomes = &study.game(run).outcomes;
        for (code, (n, d)) in cells {
            let i = outcomes.iter().position(|o| o.0 == code).unwrap();
            assert_eq!(
                exact.fractions.as_ref().expect("fractions").outcomes[i],
                fraction(n, d),
                "{code} in terrain {terrain}"
            );
        }
    }
}
