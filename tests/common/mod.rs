//! Helpers shared by the integration tests (each test binary uses some of them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub mod pages;
pub mod provision;

/// How every test starts headless Chromium: no sandbox (tests run as root), no GPU, no
/// first-run or default-browser prompts, no extensions, nothing fetched in the background.
pub const HEADLESS_CHROMIUM: [&str; 7] = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
];

/// The `.toml` files directly in `dir`, sorted.
pub fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Every shipped analysis under `analyses/`, sorted.
pub fn shipped_analyses() -> Vec<PathBuf> {
    toml_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("analyses"))
}

/// The shipped analysis `analyses/<name>`.
pub fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("analyses")
        .join(name)
}

/// Runs `battlelab args…` in `cwd`: (exit code, stdout, stderr). No run may panic.
pub fn battlelab(cwd: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::cargo_bin("battlelab")
        .unwrap()
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr,
    )
}

/// The standard output of `battlelab args…`, which must succeed.
pub fn stdout(args: &[&str]) -> String {
    let output = Command::cargo_bin("battlelab")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The body rows of every table in a Markdown text (`tables.md`, `value --format md`):
/// header and rule left out, cells trimmed.
pub fn markdown_rows(md: &str) -> Vec<Vec<String>> {
    md.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| run |"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// What a Markdown text (`tables.md`, `--format md`) shows, as the report page lays it
/// out: each table's body rows (its head and rule left out, cells trimmed) and each
/// paragraph's text (its lines joined by a space, `**` and backticks dropped), in order.
pub fn markdown_shown(md: &str) -> (Vec<Vec<String>>, Vec<String>) {
    let (mut rows, mut paragraphs) = (Vec::new(), Vec::new());
    let (mut in_table, mut paragraph) = (0usize, Vec::<&str>::new());
    let flush = |paragraph: &mut Vec<&str>, paragraphs: &mut Vec<String>| {
        if !paragraph.is_empty() {
            paragraphs.push(paragraph.join(" ").replace("**", "").replace('`', ""));
            paragraph.clear();
        }
    };
    for line in md.lines().map(str::trim) {
        if line.starts_with('|') {
            flush(&mut paragraph, &mut paragraphs);
            in_table += 1;
            if in_table > 2 {
                rows.push(
                    line.trim_matches('|')
                        .split(" | ")
                        .map(|c| c.trim().replace("\\|", "|"))
                        .collect(),
                );
            }
            continue;
        }
        in_table = 0;
        if line.is_empty() || line.starts_with('#') {
            flush(&mut paragraph, &mut paragraphs);
        } else {
            paragraph.push(line);
        }
    }
    flush(&mut paragraph, &mut paragraphs);
    (rows, paragraphs)
}

/// Fields of one CSV line, honouring RFC 4180 quotes.
pub fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}
