//! `index.html` in a real browser: every shipped analysis's report and a compare report,
//! opened from the file system in headless Chromium.
//!
//! Why this test exists: the page promises to open with no server and no network, to
//! show every chart, and to read on a phone. Only a browser can tell whether an image
//! loaded or a table pushes the page sideways, so the page carries a self-test (run when
//! its URL ends in `#selftest`, see `src/report/index.rs`) and this test reads its
//! verdict from the DOM Chromium dumps, and the console from Chromium's log.
//!
//! Chromium is required, and the tests provision it: when `chromium` is missing they
//! install it (`apt-get update`, `apt-get install -y chromium`, once per test process and
//! one process at a time; see `tests/common/provision.rs`) when run as root, and otherwise
//! fail with the command to run, never pass silently. `CHROMIUM=/path/to/chromium` picks
//! another binary.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::pages::{
    assert_live_equals, assert_shown_equals, cli_error, edited_copy, encode, file_url, report_of,
    PageClient, FIELD_12_V_8, PHONE,
};

/// Trials per run: the page, not the numbers, is under test.
const TRIALS: &str = "2000";
/// Longest one browser run may take.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// The Chromium binary: `CHROMIUM`, else `chromium` on `PATH`, installed first if it is
/// missing (`common::provision`; a failure says what to run by hand).
fn chromium() -> PathBuf {
    common::provision::CHROMIUM.ensure();
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(path);
    }
    common::provision::on_path("chromium").expect("provisioned: chromium is on PATH")
}

/// Runs headless Chromium on `url` with `extra` arguments: (stdout, stderr).
fn headless(extra: &[String], url: &str) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium())
        .args(common::HEADLESS_CHROMIUM)
        .args(["--hide-scrollbars", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium().display()));
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("Chromium took more than {BROWSER_TIMEOUT:?} on {url}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (out.join().unwrap(), err.join().unwrap())
}

/// Writes a report with `battlelab args…`.
fn battlelab(args: &[&str]) {
    let (code, _, stderr) = common::battlelab(Path::new(env!("CARGO_MANIFEST_DIR")), args);
    assert_eq!(code, Some(0), "{args:?}: {stderr}");
}

/// The reports under test: every shipped analysis and one compare report, in `root`.
fn reports(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for file in common::shipped_analyses() {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let report = root.join(&stem);
        battlelab(&[
            "run",
            file.to_str().unwrap(),
            "--trials",
            TRIALS,
            "--quiet",
            "--out",
            report.to_str().unwrap(),
        ]);
        out.push(report);
    }
    let compare = root.join("compare_field_combat");
    battlelab(&[
        "compare",
        common::shipped("field_combat.toml").to_str().unwrap(),
        "--variants",
        "printed,DRM cap 3",
        "--trials",
        TRIALS,
        "--quiet",
        "--out",
        compare.to_str().unwrap(),
    ]);
    out.push(compare);
    out
}

/// What the page's self-test wrote into the DOM Chromium dumped.
fn selftest_verdict(dom: &str) -> Option<String> {
    let start = dom.find("<pre id=\"selftest\">")? + "<pre id=\"selftest\">".len();
    let end = dom[start..].find("</pre>")? + start;
    Some(
        dom[start..end]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}

/// The console lines in Chromium's log.
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

/// Checks on the page's text that need no browser: it is listed in the manifest, every
/// chart is on it, nothing on it points outside the folder.
fn check_text(report: &Path) -> usize {
    let name = report.file_name().unwrap().to_string_lossy().into_owned();
    let html = fs::read_to_string(report.join("index.html"))
        .unwrap_or_else(|e| panic!("{name}: no index.html: {e}"));
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(report.join("manifest.json")).unwrap()).unwrap();
    assert!(
        manifest["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "index.html"),
        "{name}: index.html is not in the manifest's files"
    );
    for url in ["http://", "https://", "ftp://", "//cdn", "@import", "url("] {
        assert!(!html.contains(url), "{name}: the page holds {url:?}");
    }
    let root = report.parent().unwrap().to_str().unwrap();
    assert!(
        !html.contains(root),
        "{name}: the page holds the absolute path {root}"
    );
    let svgs: Vec<String> = fs::read_dir(report)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    for svg in &svgs {
        assert!(
            html.contains(&format!("<img src=\"{svg}\"")),
            "{name}: {svg} is not on the page"
        );
    }
    assert_eq!(html.matches("<img ").count(), svgs.len(), "{name}");
    for section in ["id=\"run\"", "id=\"files\""] {
        assert!(html.contains(section), "{name}: no {section}");
    }
    if manifest.get("kind").is_none() {
        for section in ["id=\"expectations\"", "id=\"analysis\"", "id=\"tables\""] {
            assert!(html.contains(section), "{name}: no {section}");
        }
    }
    svgs.len()
}

/// Opens `report`'s page with `#<fragment>` at `size` and returns the self-test's verdict,
/// failing on any other console message.
fn selftest(report: &Path, fragment: &str, size: (u32, u32)) -> String {
    let name = report.file_name().unwrap().to_string_lossy().into_owned();
    let url = format!("{}#{fragment}", file_url(&report.join("index.html")));
    let (dom, stderr) = headless(
        &[
            format!("--window-size={},{}", size.0, size.1),
            "--virtual-time-budget=3000".into(),
            "--dump-dom".into(),
        ],
        &url,
    );
    let verdict = selftest_verdict(&dom).unwrap_or_else(|| {
        panic!(
            "{name}: the page's self-test wrote no verdict at {url}\n{}",
            stderr.lines().rev().take(20).collect::<Vec<_>>().join("\n")
        )
    });
    assert!(verdict.starts_with("SELFTEST OK"), "{name}: {verdict}");
    let console = console_lines(&stderr);
    assert!(
        console.len() == 1 && console[0].contains("SELFTEST OK"),
        "{name}: the console holds more than the self-test's line:\n{}",
        console.join("\n")
    );
    verdict
}

/// Writes the files the page's "download" gave (`verdict["downloaded"]`, name → text) into
/// a new folder `to`, side by side, and returns it.
fn save_downloaded(verdict: &serde_json::Value, to: &Path) -> PathBuf {
    fs::create_dir(to).unwrap();
    for (name, text) in verdict["downloaded"].as_object().expect("downloaded files") {
        fs::write(to.join(name), text.as_str().unwrap()).unwrap();
    }
    to.to_path_buf()
}

#[test]
fn every_report_page_passes_its_self_test_at_phone_width_in_chromium() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    for report in reports(dir.path()) {
        let name = report.file_name().unwrap().to_string_lossy().into_owned();
        let charts = check_text(&report);
        // Headless Chromium's window is at least 500 px wide; the page narrows itself to
        // the phone's width and checks nothing reaches past it.
        let verdict = selftest(&report, &format!("selftest-{}", PHONE.0), PHONE);
        assert!(
            verdict.contains(&format!("images={charts} ")),
            "{name}: {verdict}"
        );
        assert!(
            verdict.contains(&format!("width={} ", PHONE.0)),
            "{name}: {verdict}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(240),
        "the browser test took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_report_page_renders_at_phone_width_and_passes_its_self_test_on_a_desktop() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("field");
    battlelab(&[
        "run",
        common::shipped("field_combat.toml").to_str().unwrap(),
        "--trials",
        TRIALS,
        "--quiet",
        "--out",
        report.to_str().unwrap(),
    ]);
    // A desktop window: the page's own width.
    let verdict = selftest(&report, "selftest", (1280, 900));
    assert!(verdict.contains("width=1280 "), "{verdict}");
    // A screenshot at phone width.
    let shot = dir.path().join("phone.png");
    let (_, stderr) = headless(
        &[
            format!("--window-size={},{}", PHONE.0, PHONE.1),
            "--virtual-time-budget=3000".into(),
            format!("--screenshot={}", shot.display()),
        ],
        &file_url(&report.join("index.html")),
    );
    let png = fs::read(&shot).unwrap_or_else(|e| {
        panic!(
            "no screenshot at {}: {e}\n{}",
            shot.display(),
            stderr.lines().rev().take(20).collect::<Vec<_>>().join("\n")
        )
    });
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), PHONE, "screenshot size");
    assert!(
        png.len() > 10_000,
        "a blank screenshot? {} bytes",
        png.len()
    );
}

// The "try it" panel and the playground, driven over the DevTools pipe (the panel computes
// in a Web Worker, which `--virtual-time-budget` does not wait for).

#[path = "common/devtools.rs"]
mod devtools;

use devtools::Browser;

/// How long a page may take to write its verdict.
const VERDICT_TIMEOUT: Duration = Duration::from_secs(120);

/// Opens `page#<fragment>` at phone width and returns the JSON verdict its self-test
/// wrote into `#<id>` after `prefix `, failing on any console message and on any request
/// outside `page`'s folder (a Blob URL is the page's own Worker).
fn page_verdict(page: &Path, fragment: &str, id: &str, prefix: &str) -> serde_json::Value {
    let mut browser = Browser::launch(&chromium());
    let url = format!("{}#{fragment}", file_url(page));
    let session = browser.open(&url, PHONE.0, PHONE.1);
    let text = browser.wait_for_text(&session, id, VERDICT_TIMEOUT);
    let json = text
        .strip_prefix(&format!("{prefix} "))
        .unwrap_or_else(|| panic!("{url}: not a verdict: {text}"));
    let verdict: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(verdict["ok"], true, "{url}: {verdict:#}");
    let console = browser.console();
    assert!(
        console.is_empty(),
        "{url}: console:\n{}",
        console.join("\n")
    );
    let folder = file_url(page.parent().unwrap()) + "/";
    for request in browser.requests() {
        assert!(
            request.starts_with(&folder) || request.starts_with("blob:"),
            "{url}: requested {request}"
        );
    }
    verdict
}

/// The try-it self-test's verdict on a report page.
fn tryit(report: &Path, payload: serde_json::Value) -> serde_json::Value {
    page_verdict(
        &report.join("index.html"),
        &format!("tryit-selftest={}", encode(&payload.to_string())),
        "tryit-selftest",
        "TRYIT",
    )
}

#[test]
fn the_try_it_panel_shows_the_command_lines_exact_odds_shares_its_edits_and_refuses_as_it_does() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The shipped CRT analysis and its rules file, as a designer has them.
    let as_shipped = edited_copy(
        &dir.path().join("shipped"),
        "classic_crt.toml",
        ("", ""),
        Some(("classic_crt.toml", ("", ""))),
    );
    let report = report_of(&as_shipped, TRIALS, &dir.path().join("report"));
    // The attacker's leader 1 → 2, typed into its field; then "download".
    let verdict = tryit(
        &report,
        serde_json::json!({"type": {"sides.attacker.leader": "2"}, "download": true}),
    );
    assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
    assert_eq!(verdict["kind"], "exact", "{verdict:#}");
    let edited = edited_copy(
        &dir.path().join("edited"),
        "classic_crt.toml",
        ("leader = 1", "leader = 2"),
        Some(("classic_crt.toml", ("", ""))),
    );
    let cli = report_of(&edited, TRIALS, &dir.path().join("cli"));
    let compared = assert_shown_equals(&verdict["shown"], &cli, "fraction");
    assert_eq!(compared, 36 * 5, "every run × outcome of the sweep");
    // The page's own rulebook table of outcomes now prints what the CLI prints for the
    // edited file, cell for cell; the charts section opens with the panel's chart.
    assert_eq!(assert_live_equals(&verdict["live"], &cli, true), 36 * 5);
    assert!(verdict["live_chart"].as_u64().unwrap() > 0, "{verdict:#}");
    // The files "download" saves, side by side, run as they are: the same numbers.
    let saved = dir.path().join("downloaded");
    fs::create_dir(&saved).unwrap();
    let files = verdict["downloaded"].as_object().expect("downloaded files");
    assert_eq!(files.len(), 2, "the analysis and its rules file: {files:?}");
    for (name, text) in files {
        assert!(!name.contains('/'), "saved side by side: {name}");
        fs::write(saved.join(name), text.as_str().unwrap()).unwrap();
    }
    let again = report_of(
        &saved.join("classic_crt.toml"),
        TRIALS,
        &dir.path().join("again"),
    );
    assert_eq!(
        assert_shown_equals(&verdict["shown"], &again, "fraction"),
        36 * 5
    );
    // …and the edit moved the odds: the file as written differs somewhere.
    let plain = tryit(&report, serde_json::json!({}));
    assert_ne!(plain["shown"], verdict["shown"]);
    assert_shown_equals(&plain["shown"], &report, "fraction");
    // With no edits the tables are the file's, unmarked, and no edited chart is shown.
    assert_eq!(assert_live_equals(&plain["live"], &report, false), 36 * 5);
    assert_eq!(plain["live_chart"], 0);
    // The link reproduces the edit.
    let hash = verdict["hash"].as_str().unwrap();
    assert!(hash.starts_with("#tryit="), "{hash}");
    let shared = tryit(&report, serde_json::json!({"open": hash}));
    assert_eq!(shared["shown"], verdict["shown"]);
    assert_eq!(shared["hash"], verdict["hash"]);
    // A value out of the rules file's range: the command line's own error, at its field.
    let bad = tryit(
        &report,
        serde_json::json!({"type": {"sides.attacker.leader": "7"}}),
    );
    let refused = edited_copy(
        &dir.path().join("bad"),
        "classic_crt.toml",
        ("leader = 1", "leader = 7"),
        Some(("classic_crt.toml", ("", ""))),
    );
    assert_eq!(
        bad["errors"],
        serde_json::json!([{"path": "sides.attacker.leader", "message": cli_error(&refused)}]),
        "{bad:#}"
    );
    assert_eq!(
        bad["shown"],
        serde_json::json!([]),
        "no numbers for a refused file"
    );
    let _ = repo;
}

/// The rows of the tables a value page shows (the self-test's `prices`), flattened.
fn prices_rows(prices: &serde_json::Value) -> Vec<Vec<String>> {
    prices
        .as_array()
        .expect("the page's price tables")
        .iter()
        .flat_map(|t| t.as_array().unwrap().clone())
        .map(|r| serde_json::from_value(r).unwrap())
        .collect()
}

/// A compare, value or equilibrium report `args` writes into `out`, with its scope line.
fn other_report(args: &[&str], out: &Path) -> PathBuf {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--quiet", "--out", out.to_str().unwrap()]);
    battlelab(&all);
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("<p id=\"tryit-scope\">This panel recomputes the runs of "),
        "{}: no scope line",
        out.display()
    );
    out.to_path_buf()
}

#[test]
fn compare_value_and_equilibrium_pages_recompute_their_analysis_as_the_command_line_runs_it() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    // A compare of one file's two variants: an edit typed into the panel recomputes every
    // variant's runs, equal to `battlelab run` on the file edited the same way.
    let file = edited_copy(
        &dir.path().join("a"),
        "ratio_min_score.toml",
        ("", ""),
        None,
    );
    let compare = other_report(
        &[
            "compare",
            file.to_str().unwrap(),
            "--variants",
            "floor 1 (printed),floor 2",
            "--trials",
            TRIALS,
        ],
        &dir.path().join("compare"),
    );
    let verdict = tryit(
        &compare,
        serde_json::json!({"type": {"side.b.argument": "0"}}),
    );
    assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
    assert_eq!(verdict["kind"], "exact", "{verdict:#}");
    let edited = edited_copy(
        &dir.path().join("b"),
        "ratio_min_score.toml",
        ("argument = -1", "argument = 0"),
        None,
    );
    let cli = report_of(&edited, TRIALS, &dir.path().join("cli"));
    // Three variants, three qualities, three sizes: every run's every outcome.
    let compared = assert_shown_equals(&verdict["shown"], &cli, "fraction");
    assert!(compared >= 27 * 2, "{compared}");
    let unedited = report_of(&file, TRIALS, &dir.path().join("unedited"));
    let plain = tryit(&compare, serde_json::json!({}));
    assert_ne!(plain["shown"], verdict["shown"], "the edit moved nothing");
    assert_eq!(
        assert_shown_equals(&plain["shown"], &unedited, "fraction"),
        compared
    );
    // A field battle's runs are exact in floating point: the same doubles as the command
    // line's, to the last bit, after an edit.
    let file = edited_copy(&dir.path().join("e"), "field_combat.toml", ("", ""), None);
    let compare = other_report(
        &[
            "compare",
            file.to_str().unwrap(),
            "--variants",
            "printed,DRM cap 3",
            "--trials",
            TRIALS,
        ],
        &dir.path().join("field_compare"),
    );
    let verdict = tryit(
        &compare,
        serde_json::json!({"type": {"side.a.leader": "2"}}),
    );
    assert_eq!(verdict["kind"], "exact", "{verdict:#}");
    let edited = edited_copy(
        &dir.path().join("f"),
        "field_combat.toml",
        ("leader = 1 ", "leader = 2 "),
        None,
    );
    let cli = report_of(&edited, TRIALS, &dir.path().join("field_cli"));
    assert_eq!(
        assert_shown_equals(&verdict["shown"], &cli, "exact"),
        56 * 8
    );
    // A value report: the file as written, every run exact as `battlelab run` has it.
    let file = edited_copy(
        &dir.path().join("c"),
        "ratio_value_of_plus_one.toml",
        ("", ""),
        None,
    );
    let value = other_report(
        &["value", file.to_str().unwrap(), "--trials", TRIALS],
        &dir.path().join("value"),
    );
    let cli = report_of(&file, TRIALS, &dir.path().join("value_cli"));
    let verdict = tryit(&value, serde_json::json!({}));
    assert_eq!(verdict["kind"], "exact", "{verdict:#}");
    assert!(assert_shown_equals(&verdict["shown"], &cli, "fraction") > 0);
    // Without edits the prices are the page's own (the file's), unmarked.
    let plain_prices = verdict["prices"].clone();
    assert_eq!(verdict["prices_marked"], 0, "{verdict:#}");
    assert_eq!(
        prices_rows(&plain_prices),
        common::markdown_rows(&fs::read_to_string(value.join("tables.md")).unwrap())
    );
    // A DRM edited in the panel (B's argument, the modifier on every die of B): the page
    // reprices, and its prices are `battlelab value`'s on the file it downloads, cell for
    // cell.
    for (page, name, field, typed) in [
        (
            &value,
            "ratio_value_of_plus_one.toml",
            "side.b.argument",
            "1",
        ),
        (
            &other_report(
                &[
                    "value",
                    edited_copy(&dir.path().join("g"), "field_combat.toml", ("", ""), None)
                        .to_str()
                        .unwrap(),
                    "--trials",
                    TRIALS,
                ],
                &dir.path().join("field_value"),
            ),
            "field_combat.toml",
            "side.a.leader",
            "2",
        ),
    ] {
        let verdict = tryit(
            page,
            serde_json::json!({"type": {field: typed}, "download": true}),
        );
        assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
        assert_eq!(verdict["pricing"]["kind"], "exact", "{verdict:#}");
        eprintln!("{name}: repriced {}", verdict["pricing"]);
        let saved = save_downloaded(&verdict, &dir.path().join(format!("priced_{name}")));
        let (code, md, stderr) = common::battlelab(
            &saved,
            &[
                "value", name, "--trials", TRIALS, "--format", "md", "--quiet",
            ],
        );
        assert_eq!(code, Some(0), "{stderr}");
        let shown = prices_rows(&verdict["prices"]);
        assert_eq!(
            shown,
            common::markdown_rows(&md),
            "{name}: the page's prices are the CLI's"
        );
        assert!(shown.len() >= 8, "{name}: {}", shown.len());
        assert!(
            verdict["prices_marked"].as_u64().unwrap() > 0,
            "{verdict:#}"
        );
        let before = prices_rows(&tryit(page, serde_json::json!({}))["prices"]);
        assert_eq!(before.len(), shown.len(), "{name}");
        assert_ne!(before, shown, "{name}: the edit moved no price");
    }
    // An equilibrium report (exact in floating point, no fractions): simulated counts for
    // the same seed and trials typed into the panel, as `battlelab run` counts them.
    let file = edited_copy(
        &dir.path().join("d"),
        "field_equilibrium.toml",
        ("system = \"field\"", "system = \"field\"\nexact = false"),
        None,
    );
    let equilibrium = other_report(
        &["equilibrium", file.to_str().unwrap()],
        &dir.path().join("equilibrium"),
    );
    let verdict = tryit(
        &equilibrium,
        serde_json::json!({"type": {"run:trials": TRIALS}}),
    );
    assert_eq!(verdict["kind"], "simulated", "{verdict:#}");
    let cli = report_of(&file, TRIALS, &dir.path().join("equilibrium_cli"));
    assert!(assert_shown_equals(&verdict["shown"], &cli, "count") > 0);
}

/// What a compare or equilibrium page shows as its answer (the self-test's `answer`):
/// every table row and every paragraph of its `tables.md` sections, in order.
fn answer_shown(answer: &serde_json::Value) -> (Vec<Vec<String>>, Vec<String>) {
    let (mut rows, mut paragraphs) = (Vec::new(), Vec::new());
    for section in answer.as_array().expect("the page's answer") {
        for block in section["blocks"].as_array().unwrap() {
            if let Some(p) = block["p"].as_str() {
                paragraphs.push(p.to_string());
            } else if let Some(r) = block["rows"].as_array() {
                rows.extend(r.iter().map(|r| serde_json::from_value(r.clone()).unwrap()));
            }
        }
    }
    (rows, paragraphs)
}

/// `tables.md`'s sections (from its first `##` heading: what the page's answer holds), as
/// the page shows them.
fn md_sections_shown(md: &str) -> (Vec<Vec<String>>, Vec<String>) {
    let from = md.find("## ").expect("a section");
    common::markdown_shown(&md[from..])
}

#[test]
fn compare_and_equilibrium_pages_recompute_their_answer_as_the_command_line_gives_it() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    // (analysis, the command and its arguments after the file, the field typed, the value)
    let cases: [(&str, &[&str], &str, &str); 3] = [
        (
            "ratio_min_score.toml",
            &[
                "compare",
                "--variants",
                "floor 1 (printed),floor 2",
                "--trials",
                TRIALS,
            ],
            "side.b.argument",
            "0",
        ),
        (
            "field_combat.toml",
            &[
                "compare",
                "--variants",
                "printed,DRM cap 3",
                "--trials",
                TRIALS,
                "--fdr",
            ],
            "side.a.leader",
            "2",
        ),
        (
            "field_equilibrium.toml",
            &["equilibrium"],
            "side.b.leader",
            "2",
        ),
    ];
    for (k, (name, command, field, typed)) in cases.into_iter().enumerate() {
        let file = edited_copy(&dir.path().join(format!("in{k}")), name, ("", ""), None);
        let mut args: Vec<&str> = vec![command[0], file.to_str().unwrap()];
        args.extend_from_slice(&command[1..]);
        let page = other_report(&args, &dir.path().join(format!("page{k}")));
        // Without edits: the file's answer, unmarked, as tables.md has it.
        let plain = tryit(&page, serde_json::json!({}));
        assert_eq!(plain["answer_marked"], 0, "{plain:#}");
        let md = fs::read_to_string(page.join("tables.md")).unwrap();
        assert_eq!(
            answer_shown(&plain["answer"]),
            md_sections_shown(&md),
            "{name}"
        );
        // A value typed into the panel: the page answers again, and shows what the
        // command line prints for the file the page downloads, cell for cell.
        let verdict = tryit(
            &page,
            serde_json::json!({"type": {field: typed}, "download": true}),
        );
        assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
        let kind = if command[0] == "compare" {
            "simulated"
        } else {
            "solved"
        };
        assert_eq!(verdict["answering"]["kind"], kind, "{verdict:#}");
        if command[0] == "compare" {
            // The progress bar was told every battle the comparison simulated.
            assert_eq!(
                verdict["answering"]["progress"]["done"], verdict["answering"]["battles"],
                "{verdict:#}"
            );
        }
        eprintln!(
            "{name}: {} answered again {}",
            command[0], verdict["answering"]
        );
        let saved = save_downloaded(&verdict, &dir.path().join(format!("saved{k}")));
        let mut cli_args: Vec<&str> = vec![command[0], name];
        cli_args.extend_from_slice(&command[1..]);
        cli_args.extend(["--format", "md", "--quiet"]);
        let (code, cli_md, stderr) = common::battlelab(&saved, &cli_args);
        assert_eq!(code, Some(0), "{stderr}");
        let shown = answer_shown(&verdict["answer"]);
        assert_eq!(
            shown,
            md_sections_shown(&cli_md),
            "{name}: the page's answer is the CLI's"
        );
        assert!(shown.0.len() >= 20, "{name}: {}", shown.0.len());
        assert!(
            verdict["answer_marked"].as_u64().unwrap() > 0,
            "{verdict:#}"
        );
        assert_ne!(
            answer_shown(&plain["answer"]).0,
            shown.0,
            "{name}: the edit moved no cell"
        );
    }
    // A value page repriced by Monte Carlo (exact results turned off in the panel): the
    // progress bar is told every battle, and the prices are `battlelab value`'s on the
    // downloaded file.
    let file = edited_copy(&dir.path().join("v"), "field_combat.toml", ("", ""), None);
    let page = other_report(
        &["value", file.to_str().unwrap(), "--trials", TRIALS],
        &dir.path().join("value_page"),
    );
    let verdict = tryit(
        &page,
        serde_json::json!({"type": {"exact": "false"}, "download": true}),
    );
    assert_eq!(verdict["pricing"]["kind"], "simulated", "{verdict:#}");
    let battles = verdict["pricing"]["arms"].as_u64().unwrap()
        * verdict["pricing"]["trials"].as_u64().unwrap();
    assert_eq!(
        verdict["pricing"]["progress"]["done"], battles,
        "{verdict:#}"
    );
    eprintln!("field_combat.toml: value repriced {}", verdict["pricing"]);
    let saved = save_downloaded(&verdict, &dir.path().join("saved_value"));
    let (code, md, stderr) = common::battlelab(
        &saved,
        &[
            "value",
            "field_combat.toml",
            "--trials",
            TRIALS,
            "--format",
            "md",
            "--quiet",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(prices_rows(&verdict["prices"]), common::markdown_rows(&md));
}

#[test]
fn the_try_it_panel_simulates_the_command_lines_counts_for_the_same_seed_and_trials() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    let file = edited_copy(&dir.path().join("a"), "field_combat.toml", ("", ""), None);
    let report = report_of(&file, TRIALS, &dir.path().join("report"));
    // Exact results off, so the page simulates; seed and trials typed into their fields.
    let payload = serde_json::json!({"open": format!("#tryit={}", encode(&serde_json::json!({"edits": {"exact": false}}).to_string())),
        "type": {"run:seed": "5", "run:trials": "3000"}});
    let verdict = tryit(&report, payload);
    assert_eq!(verdict["kind"], "simulated", "{verdict:#}");
    assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
    let edited = edited_copy(
        &dir.path().join("b"),
        "field_combat.toml",
        ("system = \"field\"", "system = \"field\"\nexact = false"),
        None,
    );
    let out = dir.path().join("cli");
    battlelab(&[
        "run",
        edited.to_str().unwrap(),
        "--seed",
        "5",
        "--trials",
        "3000",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let compared = assert_shown_equals(&verdict["shown"], &out, "count");
    assert!(compared >= 56 * 2, "{compared}");
    // "Who loses": P(smaller loses), each side's win, SP lost per side and the source,
    // and "Battle outcomes": each result some run reaches (the columns after the two
    // axes), for all 56 runs, as the CLI prints them for the same seed and trials.
    let reached = common::pages::tables_md(&out)[3][0].len() - 2;
    assert!(reached >= 3, "{reached}");
    assert_eq!(
        assert_live_equals(&verdict["live"], &out, true),
        56 * 6 + 56 * reached
    );
    assert!(
        verdict["shown"][0]["trials"]
            .as_str()
            .unwrap()
            .starts_with("3000"),
        "{verdict:#}"
    );
}

#[test]
fn the_playground_checks_and_runs_a_rules_file_as_the_command_line_does() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("playground.html");
    battlelab(&["playground", "--out", page.to_str().unwrap(), "--quiet"]);
    let verdict_of = |edit: (&str, &str)| {
        let payload = serde_json::json!({"edit": [{"file": 1, "from": edit.0, "to": edit.1}]});
        page_verdict(
            &page,
            &format!("playground-selftest={}", encode(&payload.to_string())),
            "playground-selftest",
            "PLAYGROUND",
        )
    };
    // One CRT cell changed: at 3:1 a roll of 1 eliminates the defender.
    let cell = (
        "\"3:1\" = \"DR DR DR EX AR AR\"",
        "\"3:1\" = \"DE DR DR EX AR AR\"",
    );
    let verdict = verdict_of(cell);
    assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
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
    // A result code the file does not define: the command line's message, under the
    // rules file's editor, with its line.
    let bad_cell = (
        "\"3:1\" = \"DR DR DR EX AR AR\"",
        "\"3:1\" = \"DR DR DR EX AR XX\"",
    );
    let bad = verdict_of(bad_cell);
    let refused = edited_copy(
        &dir.path().join("bad"),
        "classic_crt.toml",
        ("", ""),
        Some(("classic_crt.toml", bad_cell)),
    );
    let message = cli_error(&refused);
    let errors = bad["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{bad:#}");
    assert_eq!(errors[0]["file"], 1, "{bad:#}");
    let shown = errors[0]["message"].as_str().unwrap();
    assert_eq!(shown.lines().next(), Some(message.as_str()), "{bad:#}");
    assert!(
        shown.contains("line 34: \"3:1\" = \"DR DR DR EX AR XX\""),
        "{shown}"
    );
}

#[test]
fn try_it_budgets_are_measured_and_printed() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    // An exact field battle of 12 SP against 8.
    let file = dir.path().join("field_12v8.toml");
    fs::write(&file, FIELD_12_V_8).unwrap();
    let report = report_of(&file, "1000", &dir.path().join("report"));
    let html = fs::read_to_string(report.join("index.html")).unwrap();
    let module = html
        .split(battlelab::report::tryit::MODULE_ELEMENT)
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .map_or(0, str::len);
    let exact = tryit(&report, serde_json::json!({}));
    assert_eq!(exact["kind"], "exact", "{exact:#}");
    let simulated = tryit(
        &report,
        serde_json::json!({"open": format!("#tryit={}", encode(&serde_json::json!({"edits": {"exact": false}}).to_string()))}),
    );
    assert_eq!(simulated["kind"], "simulated", "{simulated:#}");
    assert_eq!(simulated["shown"][0]["trials"], "1000000", "{simulated:#}");
    let ms = |v: &serde_json::Value, k: &str| v["timing"][k].as_f64().unwrap_or(f64::NAN);
    println!(
        "try-it budgets (headless Chromium): page growth {:.2} MB (module {:.2} MB of base64; page {:.2} MB); first result {:.0} ms after navigation (load event {:.0} ms, module ready in {:.0} ms); exact field 12 v 8 recomputed in {:.0} ms ({:.0} ms in the Worker); 10^6 simulated field battles in {:.0} ms ({:.0} ms in the Worker)",
        (module + battlelab::report::tryit::CLIENT_JS.len() + battlelab::report::tryit::PANEL_JS.len()) as f64 / 1e6,
        module as f64 / 1e6,
        html.len() as f64 / 1e6,
        ms(&exact, "first_result_ms"),
        exact["load_ms"].as_f64().unwrap_or(f64::NAN),
        ms(&exact, "module_ms"),
        ms(&exact, "last_ms"),
        ms(&exact, "worker_ms"),
        ms(&simulated, "last_ms"),
        ms(&simulated, "worker_ms"),
    );
}

/// A d6 table's report, its table edited in the panel: every chance and expected value of
/// "Outcomes per grid point" equals what `battlelab run` prints in `tables.md` for the
/// file the panel downloads — in the file's `[tables]` format, † marks included.
fn d6_table_edited_in_the_panel(
    dir: &Path,
    analysis: &str,
    tables: &str,
    cell: (&str, &str, &str),
    cells: usize,
) -> serde_json::Value {
    let root = dir.join(analysis.trim_end_matches(".toml"));
    // The `[tables]` section before the first other section, as a designer writes it.
    let file = edited_copy(
        &root.join("file"),
        analysis,
        ("\n[", &format!("\n{tables}[")),
        None,
    );
    let report = report_of(&file, TRIALS, &root.join("report"));
    let (column, roll, code) = cell;
    let edits =
        serde_json::json!({"edits": {format!("rules.cells.\"{column}\".\"{roll}\""): code}});
    let verdict = tryit(
        &report,
        serde_json::json!({"open": format!("#tryit={}", encode(&edits.to_string())), "download": true}),
    );
    assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
    assert_eq!(verdict["kind"], "exact", "{verdict:#}");
    // The downloaded file, run by the command line.
    let saved = root.join("downloaded");
    fs::create_dir_all(&saved).unwrap();
    let files = verdict["downloaded"].as_object().expect("downloaded files");
    let text = files[analysis].as_str().unwrap();
    assert!(text.contains(code), "the edit is in the file: {text}");
    fs::write(saved.join(analysis), text).unwrap();
    let cli = report_of(&saved.join(analysis), TRIALS, &root.join("cli"));
    assert_eq!(assert_live_equals(&verdict["live"], &cli, true), cells);
    // The edit moved some printed chance: the page is not showing the file's numbers.
    let before = common::pages::tables_md(&report);
    let moved = verdict["live"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            let at = |k: &str| c[k].as_u64().unwrap() as usize;
            c["text"].as_str() != Some(before[at("table")][at("row")][at("column")].as_str())
        })
        .count();
    assert!(moved > 0, "{analysis}: the edit changed no cell");
    // The printed table of each variant (the d6 table as the file gives it, with the
    // edited cell) is reprinted as the command line prints it for the downloaded file,
    // and the edit moved one of its cells.
    let printed = assert_printed_equals(&verdict, &cli, true);
    assert!(printed > 0, "{verdict:#}");
    assert!(
        printed_rows(&verdict)
            .iter()
            .any(|(table, rows)| *rows != before[*table]),
        "{analysis}: the edit changed no printed cell"
    );
    // Every other table the panel does not recompute says so while the edit is in
    // force, and only then.
    let recomputed: std::collections::BTreeSet<u64> = verdict["live"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["table"].as_u64().unwrap())
        .collect();
    assert_eq!(
        verdict["static_marked"].as_u64().unwrap() as usize,
        before.len() - recomputed.len() - printed,
        "{verdict:#}"
    );
    // Reset: the file's numbers and tables again, unmarked.
    let plain = tryit(&report, serde_json::json!({}));
    assert_eq!(assert_live_equals(&plain["live"], &report, false), cells);
    assert_eq!(assert_printed_equals(&plain, &report, false), printed);
    assert_eq!(plain["static_marked"], 0, "{plain:#}");
    let ms = |k: &str| verdict["timing"][k].as_f64().unwrap_or(f64::NAN);
    println!(
        "{analysis} ({}): {cells} live cells shown {:.0} ms after the edit ({:.0} ms in the Worker); first result {:.0} ms after navigation",
        if tables.is_empty() {
            "as shipped".to_string()
        } else {
            tables.trim().replace('\n', " ")
        },
        ms("last_ms"),
        ms("worker_ms"),
        ms("first_result_ms"),
    );
    verdict
}

#[test]
fn the_d6_tables_outcomes_are_recomputed_in_the_files_format_after_a_cell_edit() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    // Storm as shipped: percentages, a † where a row of thirds rounds to 100.0 (DRM −1,
    // where the 6 is out of reach). A 6 that damages moves both variants' chances
    // (printed: 4 DRMs × 3 outcomes; "a 1 only damages", which never sinks: 4 × 2).
    let storm = d6_table_edited_in_the_panel(dir.path(), "storm.toml", "", ("d6", "6", "D"), 20);
    let texts: Vec<&str> = storm["live"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect();
    assert!(texts.iter().any(|t| t.ends_with('†')), "{texts:?}");
    // A 3 that sinks brings "S" into "a 1 only damages": the command line prints that
    // table with another column, so the page prints none of its old columns' cells
    // (table 2), and the printed variant's (table 0) as ever.
    let report = dir.path().join("storm/report");
    let edits = serde_json::json!({"edits": {"rules.cells.d6.\"3\"": "S"}});
    let verdict = tryit(
        &report,
        serde_json::json!({"open": format!("#tryit={}", encode(&edits.to_string()))}),
    );
    for cell in verdict["live"].as_array().unwrap() {
        let text = cell["text"].as_str().unwrap();
        match cell["table"].as_u64() {
            Some(0) => assert!(text != "—" && !text.is_empty(), "{cell}"),
            Some(2) => assert_eq!(text, "—", "{cell}"),
            _ => panic!("a live cell outside the outcomes tables: {cell}"),
        }
    }
    // March printing fractions: 18 rows × (6 outcomes + 2 expected values), and the best
    // request per DRM (6 DRMs × 3 requests).
    let march = d6_table_edited_in_the_panel(
        dir.path(),
        "march.toml",
        "[tables]\nformat = \"fraction\"\n\n",
        ("2", "4", "2"),
        18 * 8 + 6 * 3,
    );
    assert!(march["live"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["text"].as_str().unwrap().contains('/')));
    // Naval printing chances in 6: 21 rows × (outcomes + 4 expected values).
    let naval = d6_table_edited_in_the_panel(
        dir.path(),
        "naval.toml",
        "[tables]\nformat = \"in6\"\n\n",
        ("3-2", "2", "SS"),
        21 * 14,
    );
    assert!(naval["live"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["text"].as_str().unwrap().ends_with(" in 6")));
}

/// A shipped analysis's report, `edits` opened in the panel (with the command line's
/// trials typed in where the page simulates): every live cell of its rulebook tables
/// equals the same cell of `tables.md` that `battlelab run` prints for the file the panel
/// downloads; some cell moved; every other table says it is the file's. Returns the
/// verdict and the number of live cells.
fn live_tables_after_an_edit(
    dir: &Path,
    analysis: &str,
    edits: serde_json::Value,
    kind: &str,
) -> (serde_json::Value, usize) {
    let root = dir.join(analysis.trim_end_matches(".toml"));
    let file = edited_copy(&root.join("file"), analysis, ("", ""), None);
    let report = report_of(&file, TRIALS, &root.join("report"));
    let open = format!(
        "#tryit={}",
        encode(&serde_json::json!({ "edits": edits }).to_string())
    );
    let mut payload = serde_json::json!({"open": open, "download": true});
    if kind == "simulated" {
        payload["type"] = serde_json::json!({"run:trials": TRIALS});
    }
    let verdict = tryit(&report, payload);
    assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
    assert_eq!(verdict["kind"], kind, "{verdict:#}");
    let saved = root.join("downloaded");
    fs::create_dir_all(&saved).unwrap();
    let text = verdict["downloaded"][analysis]
        .as_str()
        .expect("the downloaded analysis");
    assert_ne!(
        text,
        fs::read_to_string(&file).unwrap(),
        "the edit is in the file"
    );
    fs::write(saved.join(analysis), text).unwrap();
    let cli = report_of(&saved.join(analysis), TRIALS, &root.join("cli"));
    let cells = assert_live_equals(&verdict["live"], &cli, true);
    let before = common::pages::tables_md(&report);
    let live = verdict["live"].as_array().unwrap();
    let moved = live
        .iter()
        .filter(|c| {
            let at = |k: &str| c[k].as_u64().unwrap() as usize;
            c["text"].as_str() != Some(before[at("table")][at("row")][at("column")].as_str())
        })
        .count();
    assert!(moved > 0, "{analysis}: the edit changed no live cell");
    let recomputed: std::collections::BTreeSet<u64> =
        live.iter().map(|c| c["table"].as_u64().unwrap()).collect();
    // Tables printed from the rules as read are reprinted as the command line prints
    // them for the downloaded file; every other table says it is the file's.
    let printed = assert_printed_equals(&verdict, &cli, true);
    assert_eq!(
        verdict["static_marked"].as_u64().unwrap() as usize,
        before.len() - recomputed.len() - printed,
        "{verdict:#}"
    );
    let ms = |k: &str| verdict["timing"][k].as_f64().unwrap_or(f64::NAN);
    let moved_tables: Vec<u64> = live
        .iter()
        .filter(|c| {
            let at = |k: &str| c[k].as_u64().unwrap() as usize;
            c["text"].as_str() != Some(before[at("table")][at("row")][at("column")].as_str())
        })
        .map(|c| c["table"].as_u64().unwrap())
        .collect::<std::collections::BTreeSet<u64>>()
        .into_iter()
        .collect();
    println!(
        "{analysis}: {cells} live cells ({moved} moved) shown {:.0} ms after the edit ({:.0} ms in the Worker, {kind})",
        ms("last_ms"),
        ms("worker_ms"),
    );
    let mut verdict = verdict;
    verdict["moved_tables"] = serde_json::json!(moved_tables);
    (verdict, cells)
}

/// The live cells of table `table` in a verdict, and whether the edit moved one of them
/// (`moved_tables`, recorded by [`live_tables_after_an_edit`]).
fn live_in(verdict: &serde_json::Value, table: u64) -> (usize, bool) {
    let cells = verdict["live"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["table"] == table)
        .count();
    let moved = verdict["moved_tables"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == table);
    (cells, moved)
}

/// A shipped analysis, an edit, how the page runs it ("exact" or "simulated"), and each
/// derived table it must recompute (its index in tables.md, its live cells).
type DerivedCase = (
    &'static str,
    serde_json::Value,
    &'static str,
    &'static [(u64, usize)],
);

#[test]
fn the_derived_tables_are_recomputed_after_an_edit() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    // Each (analysis, edit, table, its live cells): a table the system derives from
    // several runs, a search or a whole distribution; the edit must move one of its cells
    // and every cell must read as `battlelab run` prints it for the edited file.
    let cases: [DerivedCase; 8] = [
        // Field battles: "Battle outcomes" of each variant (tables 3 and 5), 28 runs × the
        // 3 results some run reaches, each row rounded to add up to 100 with its †.
        (
            "field_combat.toml",
            serde_json::json!({"battle.terrain_drm": -1}),
            "exact",
            &[(3, 28 * 3), (5, 28 * 3)],
        ),
        // March: the best request per DRM (table 1), 6 DRMs × 3 requests; a 4 on the
        // "extra 1" column, which never cost an SP (∞, the best), now costs one.
        (
            "march.toml",
            serde_json::json!({"rules.cells.\"1\".\"4\"": "1*"}),
            "exact",
            &[(1, 6 * 3)],
        ),
        // Attrition: the turns study of each variant (tables 2 and 5), 6 turns × 3.
        (
            "attrition.toml",
            serde_json::json!({"turns.drm": 1}),
            "exact",
            &[(2, 6 * 3), (5, 6 * 3)],
        ),
        // Ratio: "Expectations" (table 2: P(min-score decides) with the rest, 8 per grid
        // point) and "Value of reserves" (table 3: 4 policies × 2 per grid point).
        (
            "ratio_line.toml",
            serde_json::json!({"battle.min_score": 2}),
            "exact",
            &[(2, 9 * 8), (3, 9 * 4 * 2)],
        ),
        // Ratio, simulated: the same from the simulated counts.
        (
            "ratio_line.toml",
            serde_json::json!({"exact": false, "battle.min_score": 2}),
            "simulated",
            &[(2, 9 * 8), (3, 9 * 4 * 2)],
        ),
        // Melee: the first phase's exact odds beside each run's ends (table 1).
        (
            "melee_engagement.toml",
            serde_json::json!({"profiles.spearmen.defense": 5}),
            "exact",
            &[(1, 4 * 8)],
        ),
        // A round robin: the score matrix (table 0, 5 profiles × 5, mirror matches
        // included) and the point-value hints (table 1, 5 profiles × 6).
        (
            "melee_round_robin.toml",
            serde_json::json!({"profiles.militia.skill": 4}),
            "exact",
            &[(0, 5 * 5), (1, 5 * 6)],
        ),
        // Setup: Gray a minor: the coalitions' spread (table 0), the coalitions compared
        // (table 1, 3 × 2) and the states' expected forces (table 2, 13 × 4).
        (
            "setup.toml",
            serde_json::json!({"state.1.kind": "minor"}),
            "exact",
            &[(0, 3 * 7), (1, 3 * 2), (2, 13 * 4)],
        ),
    ];
    for (k, (analysis, edits, kind, tables)) in cases.into_iter().enumerate() {
        let (verdict, _) =
            live_tables_after_an_edit(&dir.path().join(k.to_string()), analysis, edits, kind);
        for &(table, cells) in tables {
            let (live, moved) = live_in(&verdict, table);
            assert_eq!(live, cells, "{analysis}: live cells of table {table}");
            assert!(moved, "{analysis}: the edit moved no cell of table {table}");
        }
    }
}

#[test]
fn the_ratio_melee_setup_and_frontier_tables_are_recomputed_after_an_edit() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    // Ratio, exact, comparing policies: a floor of 2 on every modified total. 9 grid
    // points × ("Who wins": 3 chances, 2 CP means, source; "Expectations": 3 chances,
    // 2 CP means, exhaustion, reserves used) and every battle outcome's percentage.
    let (_, cells) = live_tables_after_an_edit(
        dir.path(),
        "ratio_line.toml",
        serde_json::json!({"battle.min_score": 2}),
        "exact",
    );
    assert!(cells > 9 * 13, "{cells}");
    // The same, simulated with the command line's seed and trials: the means are the
    // engine's (an integer sum divided once).
    let (verdict, _) = live_tables_after_an_edit(
        &dir.path().join("simulated"),
        "ratio_line.toml",
        serde_json::json!({"exact": false, "battle.min_score": 2}),
        "simulated",
    );
    assert!(verdict["live"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["text"] == "simulated"));
    // A skirmish in two variants, the column one unit short: escalation columns too.
    let (_, cells) = live_tables_after_an_edit(
        dir.path(),
        "ratio_skirmish.toml",
        serde_json::json!({"side.b.units": 3}),
        "exact",
    );
    assert!(cells > 2 * 3 * 14, "{cells}");
    // Without the ambushers' reserves, outcomes the file's battles reach are out of reach:
    // the command line prints "Battle outcomes" (tables 2 and 4) with fewer columns, so
    // the page prints none of its old columns' cells; the other tables as ever.
    let report = dir.path().join("ratio_skirmish/report");
    let edits = serde_json::json!({"edits": {"skirmish.a.reserves": 0}});
    let verdict = tryit(
        &report,
        serde_json::json!({"open": format!("#tryit={}", encode(&edits.to_string()))}),
    );
    assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
    let mut dashes = 0;
    for cell in verdict["live"].as_array().unwrap() {
        let text = cell["text"].as_str().unwrap();
        if matches!(cell["table"].as_u64(), Some(2 | 4)) {
            assert_eq!(text, "—", "{cell}");
            dashes += 1;
        } else {
            assert!(text != "—" && !text.is_empty(), "{cell}");
        }
    }
    assert_eq!(dashes, 2 * 3 * 15);
    // Melee: 4 runs × ("Who wins": 6; "How the engagement ends": 6 ends, the source and
    // the first phase).
    let (_, cells) = live_tables_after_an_edit(
        dir.path(),
        "melee_engagement.toml",
        serde_json::json!({"profiles.spearmen.defense": 5}),
        "exact",
    );
    assert_eq!(cells, 4 * (6 + 8));
    let (_, cells) = live_tables_after_an_edit(
        &dir.path().join("simulated"),
        "melee_engagement.toml",
        serde_json::json!({"exact": false, "profiles.spearmen.defense": 5}),
        "simulated",
    );
    assert_eq!(cells, 4 * (6 + 8));
    // Setup: a major changes coalition; each coalition's land SP (North, South and the
    // neutral minors: states, mean, quantiles, least and most), the coalitions compared
    // (3 × 2) and each state's expected forces (13 × 4).
    let (_, cells) = live_tables_after_an_edit(
        dir.path(),
        "setup.toml",
        serde_json::json!({"state.1.coalition": "South"}),
        "exact",
    );
    assert_eq!(cells, 3 * 7 + 3 * 2 + 13 * 4);
    // Frontier, simulated with the command line's seed and trials: every row's three
    // percentages and both means of units eliminated.
    let (verdict, cells) = live_tables_after_an_edit(
        dir.path(),
        "frontier_illustrative_crt.toml",
        serde_json::json!({"side.a.level": 4}),
        "simulated",
    );
    assert_eq!(
        cells,
        5 * verdict["live"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["column"] == 2)
            .count()
    );
}

/// The page's reprinted rules tables (the self-test's `printed`): each `(table, rows)`.
fn printed_rows(verdict: &serde_json::Value) -> Vec<(usize, Vec<Vec<String>>)> {
    verdict["printed"]
        .as_array()
        .expect("printed tables")
        .iter()
        .map(|p| {
            (
                p["table"].as_u64().unwrap() as usize,
                serde_json::from_value(p["rows"].clone()).unwrap(),
            )
        })
        .collect()
}

/// Holds every reprinted rules table of the page equal, cell for cell, to the same table
/// of `report`'s `tables.md` (and the paragraph under it to a line of it), each marked
/// as recomputed or not as `marked` says; returns the tables compared.
fn assert_printed_equals(verdict: &serde_json::Value, report: &Path, marked: bool) -> usize {
    let tables = common::pages::tables_md(report);
    let md = fs::read_to_string(report.join("tables.md")).unwrap();
    for (p, (table, rows)) in verdict["printed"]
        .as_array()
        .unwrap()
        .iter()
        .zip(printed_rows(verdict))
    {
        assert_eq!(rows, tables[table], "table {table} of {}", report.display());
        assert_eq!(p["marked"], marked, "{p}");
        assert_eq!(p["differs"], false, "{p}");
        if let Some(note) = p["note"].as_str() {
            assert!(
                md.lines().any(|l| l == note),
                "{note:?} in {}",
                report.display()
            );
        }
    }
    printed_rows(verdict).len()
}

#[test]
fn the_printed_rules_tables_are_reprinted_after_a_cell_and_a_drm_edit() {
    chromium();
    let dir = tempfile::tempdir().unwrap();
    let file = edited_copy(
        &dir.path().join("file"),
        "classic_crt.toml",
        ("", ""),
        Some(("classic_crt.toml", ("", ""))),
    );
    let report = report_of(&file, TRIALS, &dir.path().join("report"));
    // Typed into the panel: the CRT's 1:1 column at roll 3 (AR → EX), and the attacker's
    // leader (a DRM: 1 → 2); then "download".
    let cell = "rules:tables.crt.cells.\"1:1\"";
    let verdict = tryit(
        &report,
        serde_json::json!({"type": {cell: [null, null, "EX"], "sides.attacker.leader": "2"}, "download": true}),
    );
    assert_eq!(verdict["errors"], serde_json::json!([]), "{verdict:#}");
    assert_eq!(verdict["kind"], "exact", "{verdict:#}");
    let saved = save_downloaded(&verdict, &dir.path().join("downloaded"));
    let cli = report_of(
        &saved.join("classic_crt.toml"),
        TRIALS,
        &dir.path().join("cli"),
    );
    // The CRT as printed, as modified, and its result codes: each the command line's for
    // the downloaded files, marked; no table of the page says it is the file's.
    assert_eq!(
        assert_printed_equals(&verdict, &cli, true),
        3,
        "{verdict:#}"
    );
    assert_eq!(verdict["static_marked"], 0, "{verdict:#}");
    assert_eq!(verdict["printing"]["reprinted"], 3, "{verdict:#}");
    assert_eq!(verdict["printing"]["extra"], 0, "{verdict:#}");
    assert_eq!(assert_live_equals(&verdict["live"], &cli, true), 36 * 5);
    // The edits moved the page's tables: the printed cell, and the ‡ marks.
    let before = common::pages::tables_md(&report);
    let after = printed_rows(&verdict);
    assert_eq!(
        (before[0][2][2].as_str(), after[0].1[2][2].as_str()),
        ("AR", "EX")
    );
    let marks = |rows: &[Vec<String>]| -> Vec<(usize, usize)> {
        let mut at = Vec::new();
        for (r, row) in rows.iter().enumerate() {
            for (c, text) in row.iter().enumerate() {
                if text.ends_with('‡') {
                    at.push((r, c));
                }
            }
        }
        at
    };
    assert_ne!(marks(&before[1]), marks(&after[1].1), "the ‡ moved");
    // The paragraph under the table as modified names the runs as the edited file's.
    let runs = verdict["printed"][1]["note"].as_str().unwrap();
    assert!(runs.starts_with("Runs: "), "{runs}");
    let ms = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
    println!(
        "classic_crt: 3 rules tables reprinted {:.0} ms after the recompute began (the panel waits 250 ms after a keystroke first); runs recomputed in {:.0} ms ({:.0} ms in the Worker)",
        ms(&verdict["printing"]["edit_to_tables_ms"]),
        ms(&verdict["timing"]["last_ms"]),
        ms(&verdict["timing"]["worker_ms"]),
    );
    // Reset: the file's tables, unmarked.
    let plain = tryit(
        &report,
        serde_json::json!({"type": {"sides.attacker.leader": "2"}, "reset": true}),
    );
    assert_eq!(assert_printed_equals(&plain, &report, false), 3);
    // A refused edit: the file's tables, unmarked.
    let bad = tryit(
        &report,
        serde_json::json!({"type": {"sides.attacker.leader": "7"}}),
    );
    assert_eq!(bad["errors"].as_array().unwrap().len(), 1, "{bad:#}");
    assert_eq!(assert_printed_equals(&bad, &report, false), 3);
    // The leader swept over 0 and 2: the runs read the rolls two ways, so the command line
    // prints two tables as modified where the page has one. That one keeps the file's
    // rows under a note saying the edited file prints it differently; the others are
    // reprinted.
    let open = format!(
        "#tryit={}",
        encode(&serde_json::json!({"edits": {"sweep.\"attacker.leader\"": [0, 2]}}).to_string())
    );
    let split = tryit(&report, serde_json::json!({ "open": open }));
    assert_eq!(split["errors"], serde_json::json!([]), "{split:#}");
    let printed = split["printed"].as_array().unwrap();
    let differs: Vec<bool> = printed.iter().map(|p| p["differs"] == true).collect();
    assert_eq!(differs, [false, true, false], "{split:#}");
    assert_eq!(printed[1]["marked"], false);
    assert_eq!(printed_rows(&split)[1].1, before[1], "the file's rows");
    assert_eq!(split["printing"]["extra"], 2, "{split:#}");
}
