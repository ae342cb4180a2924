//! What the browser tests hold a page's "try it" panel and playground to, whichever
//! browser drives them (`tests/browser.rs` in Chromium, `tests/firefox.rs` in Firefox):
//! the numbers a page shows against the command line's `results.csv`, its live rulebook
//! cells against `tables.md`, and its errors against `battlelab validate`; with the
//! helpers that make the reports and files to compare.
//!
//! Why it exists: the page must answer as the command line does in every browser it is
//! tested in, so both browsers' tests share one statement of "as the command line does".

use std::fs;
use std::path::{Path, PathBuf};

/// The phone the pages must fit (an iPhone 12–15 in CSS pixels).
pub const PHONE: (u32, u32) = (390, 844);

/// The field battle the budget tests time in each browser: 12 SP against 8, Major morale,
/// leaders 1, mixed tactics, at most 6 rounds; exact, then 10^6 simulated battles.
pub const FIELD_12_V_8: &str = "name = \"field_12v8\"\nsystem = \"field\"\nseed = 1815\ntrials = 1_000_000\n\n[side.a]\nsp = 12\nmorale = 2\nleader = 1\ntactic = { mix = { charge = 2, envelop = 1, bombard = 1 } }\n\n[side.b]\nsp = 8\nmorale = 2\nleader = 1\ntactic = { mix = { skirmish = 2, square = 1, refuse = 1 } }\n\n[rules]\nround_limit = 6\n";

/// `path` as a `file://` URL.
pub fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for b in path.to_str().expect("UTF-8 temp path").bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

/// What each browser's client (`tests/common/devtools.rs` for Chromium,
/// `tests/common/bidi.rs` for Firefox) answers, so that waiting for a page's verdict is
/// written once.
pub trait PageClient {
    /// The value of `expression` in the page `target` (a string, or null for anything
    /// else, and null while the document is being replaced).
    fn evaluate(&mut self, target: &str, expression: &str) -> serde_json::Value;
    /// The page's console and error log so far, one line each.
    fn console(&self) -> Vec<String>;

    /// The text of the element `id` once the page has written it (polled), or a panic
    /// with the page's text after `timeout`.
    fn wait_for_text(&mut self, target: &str, id: &str, timeout: std::time::Duration) -> String {
        let started = std::time::Instant::now();
        let expression = format!(
            "(function(){{var e=document.getElementById({id:?});return e?e.textContent:null;}})()"
        );
        loop {
            if let serde_json::Value::String(text) = self.evaluate(target, &expression) {
                return text;
            }
            if started.elapsed() > timeout {
                let body = self.evaluate(target, "document.body.innerText.slice(0,2000)");
                panic!(
                    "#{id} was not written within {timeout:?}; the page says:\n{body}\nconsole: {:?}",
                    self.console()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// `text` percent-encoded for a URL's fragment.
pub fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `results.csv` as rows of (outcome, count, exact_fraction, exact), run after run.
pub fn results_rows(report: &Path) -> Vec<(String, u64, String, String)> {
    let text = fs::read_to_string(report.join("results.csv")).unwrap();
    let mut lines = text.lines();
    let header = super::csv_fields(lines.next().unwrap());
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (outcome, count, fraction, exact) = (
        at("outcome"),
        at("count"),
        at("exact_fraction"),
        at("exact"),
    );
    lines
        .map(|l| {
            let mut cells = super::csv_fields(l);
            (
                std::mem::take(&mut cells[outcome]),
                cells[count].parse().unwrap(),
                std::mem::take(&mut cells[fraction]),
                std::mem::take(&mut cells[exact]),
            )
        })
        .collect()
}

/// Holds what a page shows (its runs, in order, each outcome's cell) equal to a CLI
/// report's `results.csv`: every exact fraction (`what` "fraction"), every exact double
/// ("exact"), or every simulated count ("count").
pub fn assert_shown_equals(shown: &serde_json::Value, cli: &Path, what: &str) -> usize {
    let rows = results_rows(cli);
    let shown = shown.as_array().unwrap();
    assert!(!shown.is_empty(), "nothing shown");
    assert_eq!(
        rows.len() % shown.len(),
        0,
        "{} rows, {} runs",
        rows.len(),
        shown.len()
    );
    let per_run = rows.len() / shown.len();
    let mut compared = 0;
    for (run, chunk) in shown.iter().zip(rows.chunks(per_run)) {
        let cells = run["cells"].as_array().unwrap();
        assert_eq!(cells.len(), per_run, "{run}");
        for cell in cells {
            let name = cell["outcome"].as_str().unwrap();
            let (_, count, fraction, exact) = chunk.iter().find(|(o, ..)| o == name).unwrap();
            match what {
                "fraction" => {
                    assert_eq!(cell["fraction"].as_str(), Some(fraction.as_str()), "{run}")
                }
                // Exact in floating point: the same double, to the last bit. The page's
                // text of it (JavaScript's shortest round trip) is read here, not the
                // JSON number, which serde_json may read one unit in the last place off.
                "exact" => assert_eq!(
                    cell["p_text"].as_str().map(|t| t.parse::<f64>().unwrap()),
                    Some(exact.parse::<f64>().unwrap()),
                    "{run}"
                ),
                _ => assert_eq!(cell["count"].as_u64(), Some(*count), "{run}"),
            }
            compared += 1;
        }
    }
    compared
}

/// The pipe tables of a report's `tables.md`, in order: each a list of rows (the header
/// and rule left out), each row its cells' text.
pub fn tables_md(report: &Path) -> Vec<Vec<Vec<String>>> {
    let text = fs::read_to_string(report.join("tables.md")).unwrap();
    let mut tables: Vec<Vec<Vec<String>>> = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let inner = line.trim().trim_start_matches('|');
        let inner = inner.strip_suffix('|').unwrap_or(inner);
        let cells: Vec<String> = inner.split('|').map(|c| c.trim().to_string()).collect();
        if !in_table {
            // The header: a new table starts.
            tables.push(Vec::new());
            in_table = true;
        } else if !cells.iter().all(|c| c.chars().all(|ch| ch == '-')) {
            tables.last_mut().unwrap().push(cells);
        }
    }
    tables
}

/// Holds the page's live rulebook cells (as the self-test read them back) equal to the
/// same cells of a CLI report's `tables.md`, each marked as recomputed or not as `marked`
/// says; returns how many were compared.
pub fn assert_live_equals(live: &serde_json::Value, cli: &Path, marked: bool) -> usize {
    let tables = tables_md(cli);
    let live = live.as_array().unwrap();
    for cell in live {
        let at = |k: &str| cell[k].as_u64().unwrap() as usize;
        let want = &tables[at("table")][at("row")][at("column")];
        assert_eq!(
            cell["text"].as_str(),
            Some(want.as_str()),
            "{cell} in {}",
            cli.display()
        );
        assert_eq!(cell["marked"], marked, "{cell}");
    }
    live.len()
}

/// Copies a shipped analysis and the rules file beside it into `root` (`analyses/`,
/// `rules/`), with `edit` applied to the analysis and `rules_edit` to the rules file.
pub fn edited_copy(
    root: &Path,
    analysis: &str,
    edit: (&str, &str),
    rules: Option<(&str, (&str, &str))>,
) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    fs::create_dir_all(root.join("analyses")).unwrap();
    fs::create_dir_all(root.join("rules")).unwrap();
    let text = fs::read_to_string(repo.join("analyses").join(analysis)).unwrap();
    assert!(text.contains(edit.0), "{analysis} has no {:?}", edit.0);
    let file = root.join("analyses").join(analysis);
    fs::write(&file, text.replacen(edit.0, edit.1, 1)).unwrap();
    if let Some((name, (from, to))) = rules {
        let text = fs::read_to_string(repo.join("rules").join(name)).unwrap();
        assert!(text.contains(from), "{name} has no {from:?}");
        fs::write(root.join("rules").join(name), text.replacen(from, to, 1)).unwrap();
    }
    file
}

/// What `battlelab validate FILE` says after `error: `, run in the file's folder.
pub fn cli_error(file: &Path) -> String {
    let (code, _, stderr) = super::battlelab(
        file.parent().unwrap(),
        &["validate", file.file_name().unwrap().to_str().unwrap()],
    );
    assert_eq!(code, Some(2), "{stderr}");
    stderr
        .lines()
        .next()
        .unwrap()
        .strip_prefix("error: ")
        .unwrap()
        .to_string()
}

/// A report of `file` at `trials` in `out`.
pub fn report_of(file: &Path, trials: &str, out: &Path) -> PathBuf {
    let args = [
        "run",
        file.to_str().unwrap(),
        "--trials",
        trials,
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    let (code, _, stderr) = super::battlelab(Path::new(env!("CARGO_MANIFEST_DIR")), &args);
    assert_eq!(code, Some(0), "{args:?}: {stderr}");
    out.to_path_buf()
}
