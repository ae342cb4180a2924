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

/// Trials per run: the page, not the numbers, is under test.
const TRIALS: &str = "2000";
/// The phone the page must fit (an iPhone 12–15 in CSS pixels).
const PHONE: (u32, u32) = (390, 844);
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

/// `path` as a `file://` URL.
fn file_url(path: &Path) -> String {
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

/// Runs headless Chromium on `url` with `extra` arguments: (stdout, stderr).
fn headless(extra: &[String], url: &str) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium())
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
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
