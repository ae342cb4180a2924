//! `battlelab playground`: the page it writes, what it refuses to overwrite, and bad
//! input. (The page in a browser: `tests/browser.rs`.)
//!
//! Why this test exists: the playground writes a file where the user says; it must never
//! replace a file of the user's, must name a file it cannot read, and must carry every
//! text of the files it embeds as text a script cannot be smuggled through.

use std::fs;
use std::path::Path;

mod common;

fn playground(cwd: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["playground"];
    all.extend_from_slice(args);
    common::battlelab(cwd, &all)
}

#[test]
fn the_page_carries_the_analysis_and_its_rules_file_and_replaces_only_its_own_page() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = playground(dir.path(), &["--out", "pg.html"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("classic_crt.toml and ../rules/classic_crt.toml"),
        "{stdout}"
    );
    let page = fs::read_to_string(dir.path().join("pg.html")).unwrap();
    assert!(page.contains(battlelab::report::playground::MARKER));
    // The shipped files, as JSON in the page (a line of each).
    assert!(page.contains(r#"rules = \"../rules/classic_crt.toml\""#));
    assert!(page.contains(r#"\"3:1\" = \"DR DR DR EX AR AR\""#));
    if !battlelab::report::wasm::MODULE_GZ.is_empty() {
        assert!(page.contains(battlelab::report::tryit::MODULE_ELEMENT));
        assert!(page.contains("'wasm-unsafe-eval'"));
    }
    // Its own page is replaced; a file of the user's is refused and left as it was.
    let (code, _, stderr) = playground(dir.path(), &["--out", "pg.html", "--quiet"]);
    assert_eq!(code, Some(0), "{stderr}");
    fs::write(dir.path().join("mine.html"), "my notes").unwrap();
    let (code, stdout, stderr) = playground(dir.path(), &["--out", "mine.html"]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stderr.contains("mine.html") && stderr.contains("never replaces a file of yours"),
        "{stderr}"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("mine.html")).unwrap(),
        "my notes"
    );
}

#[test]
fn a_file_it_cannot_read_is_named_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = playground(dir.path(), &["missing.toml", "--out", "pg.html"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("missing.toml"), "{stderr}");
    assert!(!dir.path().join("pg.html").exists());
}

#[test]
fn text_from_a_file_cannot_close_the_pages_script() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    fs::create_dir(dir.path().join("rules")).unwrap();
    fs::copy(
        repo.join("rules/classic_crt.toml"),
        dir.path().join("rules/classic_crt.toml"),
    )
    .unwrap();
    fs::create_dir(dir.path().join("a")).unwrap();
    let text = fs::read_to_string(repo.join("analyses/classic_crt.toml"))
        .unwrap()
        .replace(
            "description = \"",
            "description = \"</script><script>alert(1)</script> & <b>",
        );
    fs::write(dir.path().join("a/x.toml"), text).unwrap();
    let (code, _, stderr) = playground(dir.path(), &["a/x.toml", "--out", "pg.html", "-q"]);
    assert_eq!(code, Some(0), "{stderr}");
    let page = fs::read_to_string(dir.path().join("pg.html")).unwrap();
    assert!(
        !page.contains("alert(1)</script>"),
        "a file's text closed the script"
    );
    assert!(!page.contains("<b>"));
    assert!(page.contains(r"\u003c/script\u003e\u003cscript\u003ealert(1)"));
    // The rules file the analysis names came along, under the name it gives.
    assert!(page.contains(r#"{"name":"../rules/classic_crt.toml","text":"#));
}
