//! The tests' own provisioning (`tests/common/provision.rs`): a tool that is there is left
//! alone, a missing one is installed by its commands once per process and once per
//! machine at a time, and where it cannot be installed the failure says what to run.
//!
//! The requirements here are stand-ins whose "tool" is a marker file under Cargo's
//! temporary directory for tests, so every path of the helper runs without touching the
//! machine; `tests/browser.rs` provisions the real one (Chromium).

use std::fs;
use std::path::Path;
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;

mod common;

use common::provision::{lock_path, provision, Requirement, CHROMIUM, FIREFOX};

/// Where the stand-ins keep their markers.
const DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/provision");

fn marker(name: &str) -> std::path::PathBuf {
    Path::new(DIR).join(name)
}

/// A stand-in with no commands of its own yet: present when `marker(name)` exists.
fn stand_in(
    name: &'static str,
    present: fn() -> bool,
    install: &'static [&'static [&'static str]],
    needs_root: bool,
) -> Requirement {
    Requirement {
        name,
        needed_by: "the stand-in tests",
        present,
        install,
        env: &[],
        needs_root,
        alternative: "or skip them",
        outcome: OnceLock::new(),
    }
}

fn fresh(names: &[&str]) {
    fs::create_dir_all(DIR).unwrap();
    for name in names {
        let _ = fs::remove_file(marker(name));
    }
}

#[test]
fn a_tool_already_there_runs_none_of_its_commands() {
    let there = stand_in(
        "provision-test-there",
        || true,
        &[&["sh", "-c", "exit 1"]],
        true,
    );
    assert_eq!(provision(&there, false), Ok(()));
    assert_eq!(provision(&there, true), Ok(()));
}

/// Installed by appending to a log and creating the marker: the log counts the installs.
static ONCE: Requirement = Requirement {
    name: "provision-test-once",
    needed_by: "the stand-in tests",
    present: || marker("once").exists(),
    install: &[&[
        "sh",
        "-c",
        concat!(
            "echo installed >> ",
            env!("CARGO_TARGET_TMPDIR"),
            "/provision/once.log && sleep 0.2 && touch ",
            env!("CARGO_TARGET_TMPDIR"),
            "/provision/once"
        ),
    ]],
    env: &[],
    needs_root: false,
    alternative: "or skip them",
    outcome: OnceLock::new(),
};

#[test]
fn a_missing_tool_is_installed_once_however_many_tests_ask_at_once() {
    fresh(&["once", "once.log"]);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| ONCE.ensure());
        }
    });
    assert!(marker("once").exists(), "the install did not run");
    let log = fs::read_to_string(marker("once.log")).unwrap();
    assert_eq!(log.lines().count(), 1, "installs: {log:?}");
}

#[test]
fn another_process_installing_it_is_waited_for_and_not_repeated() {
    fresh(&["waited"]);
    // The other process: holds the lock, installs (creates the marker), lets go.
    let (held, when_held) = mpsc::channel();
    let other = std::thread::spawn(move || {
        let lock = fs::File::create(lock_path("provision-test-waited")).unwrap();
        lock.lock().unwrap();
        held.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        fs::write(marker("waited"), "").unwrap();
        drop(lock);
    });
    when_held.recv().unwrap();
    // Missing when asked; its own command fails, so only waiting for the lock and
    // looking again can succeed.
    let waited = stand_in(
        "provision-test-waited",
        || marker("waited").exists(),
        &[&["sh", "-c", "exit 1"]],
        false,
    );
    assert_eq!(provision(&waited, true), Ok(()));
    other.join().unwrap();
}

#[test]
fn without_root_a_root_install_is_not_tried_and_the_failure_says_what_to_run() {
    let rootless = stand_in(
        "provision-test-rootless",
        || false,
        &[
            &["apt-get", "update"],
            &["apt-get", "install", "-y", "provision-test-rootless"],
        ],
        true,
    );
    let message = provision(&rootless, false).unwrap_err();
    assert!(
        message
            .contains("`sudo apt-get update && sudo apt-get install -y provision-test-rootless`"),
        "{message}"
    );
    assert!(message.contains("only when run as root"), "{message}");
    assert!(message.contains("or skip them"), "{message}");
}

#[test]
fn a_failing_install_names_the_command_its_error_and_what_to_run() {
    let failing = stand_in(
        "provision-test-failing",
        || false,
        &[&["sh", "-c", "echo no such package >&2; exit 3"]],
        false,
    );
    let message = provision(&failing, true).unwrap_err();
    assert!(message.contains("failed"), "{message}");
    assert!(message.contains("no such package"), "{message}");
    assert!(
        message.contains("Install it with `sh -c echo no such package >&2; exit 3`"),
        "{message}"
    );
}

#[test]
fn an_install_that_leaves_the_tool_missing_is_a_failure() {
    let hollow = stand_in(
        "provision-test-hollow",
        || false,
        &[&["sh", "-c", "exit 0"]],
        false,
    );
    let message = provision(&hollow, true).unwrap_err();
    assert!(message.contains("still missing"), "{message}");
}

#[test]
fn chromium_comes_from_apt_as_root_without_questions() {
    assert_eq!(
        CHROMIUM.commands(),
        "sudo apt-get update && sudo apt-get install -y chromium"
    );
    assert!(CHROMIUM
        .env
        .contains(&("DEBIAN_FRONTEND", "noninteractive")));
    assert!(CHROMIUM.needs_root);
}

#[test]
fn firefox_comes_from_apt_as_root_without_questions() {
    assert_eq!(
        FIREFOX.commands(),
        "sudo apt-get update && sudo apt-get install -y firefox-esr"
    );
    assert!(FIREFOX.env.contains(&("DEBIAN_FRONTEND", "noninteractive")));
    assert!(FIREFOX.needs_root);
}
