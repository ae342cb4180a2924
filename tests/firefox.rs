//! The report page's "try it" panel and `battlelab playground`'s page in headless Firefox,
//! opened from the file system at a phone's width.
//!
//! Why this test exists: issue 43 asks that both pages work "from file:// with no network,
//! in Chromium and Firefox, and at phone width"; `tests/browser.rs` holds them in
//! Chromium. Firefox differs where these pages lean on the platform — a Worker made from
//! a Blob URL on a `file://` page (an opaque origin in Firefox), `DecompressionStream`,
//! `'wasm-unsafe-eval'` and `worker-src` in a meta Content-Security-Policy, layout at
//! 390 px — so the same self-tests run here and are held to the same command-line
//! numbers (`common::pages`). Firefox is driven over WebDriver BiDi (`common/bidi.rs`).
//!
//! Firefox is required, and the tests provision it: when it is missing they install
//! Debian's `firefox-esr` (`apt-get update`, `apt-get install -y firefox-esr`, once per
//! test process and one process at a time; see `tests/common/provision.rs`) when run as
//! root, and otherwise fail with the command to run, never pass silently.
//! `FIREFOX=/path/to/firefox` picks another binary.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;

#[path = "common/bidi.rs"]
mod bidi;

use bidi::Browser;
use common::pages::{
    assert_live_equals, assert_shown_equals, edited_copy, encode, file_url, report_of, PageClient,
    FIELD_12_V_8, PHONE,
};

/// Trials per run of the reports under test (the shipped CRT analysis is exact anyway).
const TRIALS: &str = "2000";
/// How long a page may take to write its verdict.
const VERDICT_TIMEOUT: Duration = Duration::from_secs(120);

/// The Firefox binary: `FIREFOX`, else `firefox-esr` or `firefox` on `PATH`, installed
/// first if it is missing (`common::provision`; a failure says what to run by hand).
fn firefox() -> PathBuf {
    common::provision::FIREFOX.ensure();
    if let Some(path) = std::env::var_os("FIREFOX") {
        return PathBuf::from(path);
    }
    common::provision::on_path("firefox-esr")
        .or_else(|| common::provision::on_path("firefox"))
        .expect("provisioned: firefox-esr is on PATH")
}

/// Opens `page#<fragment>` in Firefox at phone width and returns the JSON verdict its
/// self-test wrote into `#<id>` after `prefix `, failing on any console message or script
/// error (a Worker's included), on a window not the phone's width, and on any request
/// outside `page`'s folder.
fn page_verdict(page: &Path, fragment: &str, id: &str, prefix: &str) -> serde_json::Value {
    // One Firefox at a time: three started at once on a two-core machine once left one
    // page with no verdict after two minutes (not reproduced since, alone or together).
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut browser = Browser::launch(&firefox());
    let url = format!("{}#{fragment}", file_url(page));
    let tab = browser.open(&url, PHONE.0, PHONE.1);
    let text = browser.wait_for_text(&tab, id, VERDICT_TIMEOUT);
    let json = text
        .strip_prefix(&format!("{prefix} "))
        .unwrap_or_else(|| panic!("{url}: not a verdict: {text}"));
    let mut verdict: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(
        verdict["ok"], true,
        "Firefox {}, {url}: {verdict:#}",
        browser.version
    );
    // The page's own width, as Firefox laid it out (the verdict's overflow check holds
    // every element within `selftest.width`; this holds the window to the phone's).
    let inner = browser.evaluate(&tab, "String(window.innerWidth)");
    assert_eq!(inner, PHONE.0.to_string(), "{url}: innerWidth");
    let console = browser.console();
    assert!(
        console.is_empty(),
        "Firefox {}, {url}: console:\n{}",
        browser.version,
        console.join("\n")
    );
    // A Blob URL is the page's own Worker; a `data:` URL carries its bytes and reaches
    // nothing (Firefox's own stylesheet asks for its list-bullet font as one).
    let folder = file_url(page.parent().unwrap()) + "/";
    for request in browser.requests() {
        assert!(
            request.starts_with(&folder)
                || request.starts_with("blob:")
                || request.starts_with("data:"),
            "{url}: requested {request}"
        );
    }
    verdict["firefox"] = serde_json::json!(browser.version);
    verdict
}

/// The try-it self-test's verdict on a report page, laid out at the phone's width.
fn tryit(report: &Path, mut payload: serde_json::Value) -> serde_json::Value {
    payload["width"] = serde_json::json!(PHONE.0);
    page_verdict(
        &report.join("index.html"),
        &format!("tryit-selftest={}", encode(&payload.to_string())),
        "tryit-selftest",
        "TRYIT",
    )
}

/// Timings a verdict carries, for the budgets of issue 43 (printed, not asserted:
/// machines differ).
fn budgets(page: &str, verdict: &serde_json::Value) {
    let ms = |k: &str| verdict["timing"][k].as_f64().unwrap_or(f64::NAN);
    // The playground's verdict has no load event; the panel's has.
    let load = verdict["load_ms"]
        .as_f64()
        .map_or(String::new(), |t| format!(" (load event {t:.0} ms)"));
    println!(
        "{page} budgets (headless Firefox {}): module ready in {:.0} ms; first result {:.0} ms after navigation{load}; last recompute {:.0} ms ({:.0} ms in the Worker)",
        verdict["firefox"].as_str().unwrap_or("?"),
        ms("module_ms"),
        ms("first_result_ms"),
        ms("last_ms"),
        ms("worker_ms"),
    );
}

#[test]
fn the_try_it_panel_shows_the_command_lines_exact_odds_in_firefox_at_phone_width() {
    firefox();
    let dir = tempfile::tempdir().unwrap();
    // The shipped CRT analysis and its rules file, as a designer has them.
    let as_shipped = edited_copy(
        &dir.path().join("shipped"),
        "classic_crt.toml",
        ("", ""),
        Some(("classic_crt.toml", ("", ""))),
    );
    let report = report_of(&as_shipped, TRIALS, &dir.path().join("report"));
    // The attacker's leader 1 → 2, typed into its field.
    let verdict = tryit(
        &report,
        serde_json::json!({"type": {"sides.attacker.leader": "2"}}),
    );
    assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
    assert_eq!(verdict["fails"], serde_json::json!([]), "{verdict:#}");
    assert_eq!(verdict["kind"], "exact", "{verdict:#}");
    let edited = edited_copy(
        &dir.path().join("edited"),
        "classic_crt.toml",
        ("leader = 1", "leader = 2"),
        Some(("classic_crt.toml", ("", ""))),
    );
    let cli = report_of(&edited, TRIALS, &dir.path().join("cli"));
    assert_eq!(
        assert_shown_equals(&verdict["shown"], &cli, "fraction"),
        36 * 5,
        "every run × outcome of the sweep"
    );
    // The page's rulebook cells, recomputed and marked, are the edited run's tables.md.
    assert_eq!(assert_live_equals(&verdict["live"], &cli, true), 36 * 5);
    assert!(verdict["live_chart"].as_u64().unwrap() > 0, "{verdict:#}");
    assert!(verdict["chart"].as_u64().unwrap() > 0, "{verdict:#}");
    // The edit is in the link.
    let hash = verdict["hash"].as_str().unwrap();
    assert!(hash.starts_with("#tryit="), "{hash}");
    // The edit moved the odds: the file as written shows its own report's numbers.
    let plain = tryit(&report, serde_json::json!({}));
    assert_ne!(plain["shown"], verdict["shown"]);
    assert_eq!(
        assert_shown_equals(&plain["shown"], &report, "fraction"),
        36 * 5
    );
    assert_eq!(assert_live_equals(&plain["live"], &report, false), 36 * 5);
    budgets("try-it (classic CRT, exact)", &verdict);
}

#[test]
fn the_playground_runs_an_edited_rules_file_as_the_command_line_does_in_firefox() {
    firefox();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("playground.html");
    let (code, _, stderr) = common::battlelab(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["playground", "--out", page.to_str().unwrap(), "--quiet"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    // One CRT cell changed: at 3:1 a roll of 1 eliminates the defender.
    let cell = (
        "\"3:1\" = \"DR DR DR EX AR AR\"",
        "\"3:1\" = \"DE DR DR EX AR AR\"",
    );
    let payload =
        serde_json::json!({"edit": [{"file": 1, "from": cell.0, "to": cell.1}], "width": PHONE.0});
    let verdict = page_verdict(
        &page,
        &format!("playground-selftest={}", encode(&payload.to_string())),
        "playground-selftest",
        "PLAYGROUND",
    );
    assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
    assert_eq!(verdict["fails"], serde_json::json!([]), "{verdict:#}");
    assert_eq!(verdict["kind"], "exact", "{verdict:#}");
    assert!(verdict["chart"].as_u64().unwrap() > 0, "{verdict:#}");
    let edited = edited_copy(
        &dir.path().join("edited"),
        "classic_crt.toml",
        ("", ""),
        Some(("classic_crt.toml", cell)),
    );
    let cli = report_of(&edited, TRIALS, &dir.path().join("cli"));
    assert_eq!(
        assert_shown_equals(&verdict["shown"], &cli, "fraction"),
        36 * 5
    );
    budgets("playground (classic CRT, exact)", &verdict);
}

#[test]
fn try_it_budgets_are_measured_and_printed_in_firefox() {
    firefox();
    let dir = tempfile::tempdir().unwrap();
    // The field battle of tests/browser.rs's budgets: 12 SP against 8, exact, then 10^6
    // simulated battles.
    let file = dir.path().join("field_12v8.toml");
    fs::write(&file, FIELD_12_V_8).unwrap();
    let report = report_of(&file, "1000", &dir.path().join("report"));
    let exact = tryit(&report, serde_json::json!({}));
    assert_eq!(exact["kind"], "exact", "{exact:#}");
    let simulated = tryit(
        &report,
        serde_json::json!({"open": format!("#tryit={}", encode(&serde_json::json!({"edits": {"exact": false}}).to_string()))}),
    );
    assert_eq!(simulated["kind"], "simulated", "{simulated:#}");
    assert_eq!(simulated["shown"][0]["trials"], "1000000", "{simulated:#}");
    budgets("try-it (field 12 v 8, exact)", &exact);
    budgets("try-it (field 12 v 8, 10^6 simulated)", &simulated);
}
