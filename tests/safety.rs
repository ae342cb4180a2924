//! Never lose a designer's files (issue 11): what `--out` may replace, signals and closed
//! pipes in every phase, bounded input, limits that agree, errors in plain words.
//!
//! Each test replays one way the tool used to damage or lose data, as a user (or a
//! terminal, `timeout`, a scheduler) would, against the real binary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

mod common;

use assert_cmd::Command;
use common::shipped;

fn battlelab() -> Command {
    Command::cargo_bin("battlelab").unwrap()
}

fn binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin("battlelab")
}

fn slow(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/slow")
        .join(name)
}

/// Every entry of `dir`, recursively, with its bytes: a snapshot to compare.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let kind = fs::symlink_metadata(&path).unwrap().file_type();
            if kind.is_dir() {
                out.push((path.clone(), Vec::new()));
                stack.push(path);
            } else if kind.is_symlink() {
                out.push((
                    path.clone(),
                    fs::read_link(&path)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                ));
            } else {
                out.push((path.clone(), fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Names in `dir` (hidden ones included).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A refusal must come before the run: with 10^12 trials a run that started would take
/// hours, so a quick exit 2 shows nothing ran.
fn refused_before_running(cwd: &Path, file: &Path, out: &str) -> String {
    let started = Instant::now();
    let (code, _, stderr) = common::battlelab(
        cwd,
        &[
            "run",
            file.to_str().unwrap(),
            "--trials",
            "1000000000000",
            "--out",
            out,
        ],
    );
    assert_eq!(code, Some(2), "--out {out}: {stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "--out {out}: refused only after {:?}",
        started.elapsed()
    );
    stderr
}

fn copy_storm(dir: &Path) -> PathBuf {
    let file = dir.join("storm.toml");
    fs::copy(shipped("storm.toml"), &file).unwrap();
    file
}

// 1. `--out` may replace only an empty folder or a battlelab report.

#[test]
fn out_refuses_a_folder_of_the_users_own_and_leaves_it_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_storm(dir.path());
    let userdata = dir.path().join("userdata");
    fs::create_dir(&userdata).unwrap();
    fs::write(userdata.join("campaign.txt"), "my notes").unwrap();
    fs::create_dir(userdata.join("maps")).unwrap();
    let before = snapshot(dir.path());
    let stderr = refused_before_running(dir.path(), &file, "userdata");
    assert!(stderr.contains("not a battlelab report"), "{stderr}");
    assert!(
        stderr.contains("campaign.txt"),
        "says what is there: {stderr}"
    );
    assert!(stderr.contains("--out"), "says how to proceed: {stderr}");
    assert_eq!(snapshot(dir.path()), before, "something changed");
}

#[test]
fn out_refuses_the_folder_of_all_reports_and_the_folder_of_the_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_storm(dir.path());
    // Two real reports side by side, as under reports/.
    for name in ["one", "two"] {
        let (code, _, stderr) = common::battlelab(
            dir.path(),
            &[
                "run",
                "storm.toml",
                "--trials",
                "1000",
                "--out",
                &format!("reports/{name}"),
                "-q",
            ],
        );
        assert_eq!(code, Some(0), "{stderr}");
    }
    let before = snapshot(dir.path());
    refused_before_running(dir.path(), &file, "reports");
    refused_before_running(dir.path(), &file, "reports/");
    // The folder holding the analysis file itself.
    let stderr = refused_before_running(dir.path(), &file, dir.path().to_str().unwrap());
    assert!(stderr.contains("storm.toml"), "{stderr}");
    assert_eq!(snapshot(dir.path()), before, "something changed");
}

#[test]
fn out_writes_into_an_empty_folder_and_replaces_a_report_whole() {
    let dir = tempfile::tempdir().unwrap();
    copy_storm(dir.path());
    fs::create_dir(dir.path().join("empty")).unwrap();
    let run = |out: &str, seed: &str| {
        common::battlelab(
            dir.path(),
            &[
                "run",
                "storm.toml",
                "--trials",
                "1000",
                "--seed",
                seed,
                "--out",
                out,
                "-q",
            ],
        )
    };
    assert_eq!(run("empty", "1").0, Some(0));
    assert!(dir.path().join("empty/manifest.json").is_file());
    let first = fs::read(dir.path().join("empty/results.csv")).unwrap();
    assert_eq!(run("empty", "2").0, Some(0), "a report is replaced");
    let second = fs::read(dir.path().join("empty/results.csv")).unwrap();
    assert_ne!(first, second, "the new seed's report is in place");
    // The manifest lists every file of the folder, and nothing else is left beside it.
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("empty/manifest.json")).unwrap()).unwrap();
    let listed: Vec<String> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, names(&dir.path().join("empty")));
    assert_eq!(names(dir.path()), ["empty", "storm.toml"]);
}

#[test]
fn out_refuses_a_report_the_user_added_files_to_or_an_unlisted_old_report() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_storm(dir.path());
    let (code, _, _) = common::battlelab(
        dir.path(),
        &["run", "storm.toml", "--trials", "1000", "--out", "r", "-q"],
    );
    assert_eq!(code, Some(0));
    fs::write(dir.path().join("r/notes.md"), "what I concluded").unwrap();
    let before = snapshot(dir.path());
    let stderr = refused_before_running(dir.path(), &file, "r");
    assert!(stderr.contains("notes.md"), "{stderr}");
    assert_eq!(snapshot(dir.path()), before);
    // A manifest from before manifests listed their files cannot prove what is ours.
    fs::remove_file(dir.path().join("r/notes.md")).unwrap();
    let manifest = dir.path().join("r/manifest.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&fs::read(&manifest).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("files");
    fs::write(&manifest, json.to_string()).unwrap();
    let stderr = refused_before_running(dir.path(), &file, "r");
    assert!(stderr.contains("older battlelab"), "{stderr}");
}

// 1b. A battlelab report is replaced without asking only by a report of the same
// analysis and kind (issue 40).

/// `storm.toml` and a copy of it under another analysis name, for a comparison.
fn two_storms(dir: &Path) {
    copy_storm(dir);
    let text = fs::read_to_string(shipped("storm.toml"))
        .unwrap()
        .replace("name = \"storm\"", "name = \"gale\"");
    fs::write(dir.join("gale.toml"), text).unwrap();
}

#[test]
fn out_replaces_a_report_of_another_analysis_or_kind_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    two_storms(dir.path());
    let run = |file: &str, seed: &str, extra: &[&str]| {
        let mut args = vec![
            "run", file, "--trials", "1000", "--seed", seed, "--out", "report", "-q",
        ];
        args.extend_from_slice(extra);
        common::battlelab(dir.path(), &args)
    };
    assert_eq!(run("storm.toml", "1", &[]).0, Some(0));
    let before = snapshot(dir.path());
    // A comparison over the run report: refused before any work, the report untouched.
    let compare = |extra: &[&str]| {
        let mut args = vec![
            "compare",
            "storm.toml",
            "gale.toml",
            "--trials",
            "1000",
            "--out",
            "report",
            "-q",
        ];
        args.extend_from_slice(extra);
        common::battlelab(dir.path(), &args)
    };
    let (code, out, err) = compare(&[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("the run report of \"storm\"")
            && err.contains("the compare report of storm.toml against gale.toml")
            && err.contains("--replace"),
        "says what is there, what would be written and how to replace it: {err}"
    );
    assert_eq!(snapshot(dir.path()), before, "the run report changed");
    // Another analysis's run, refused the same way; its value report too.
    let (code, _, err) = run("gale.toml", "1", &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the run report of \"gale\""), "{err}");
    assert_eq!(snapshot(dir.path()), before, "the run report changed");
    // The same analysis again: replaced without a word.
    let (code, _, err) = run("storm.toml", "2", &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
    assert_ne!(
        snapshot(dir.path()),
        before,
        "the new seed's report is in place"
    );
    // Asked to, the comparison replaces the run report whole.
    let (code, _, err) = compare(&["--replace"]);
    assert_eq!(code, Some(0), "{err}");
    let mut listed: Vec<String> = serde_json::from_slice::<serde_json::Value>(
        &fs::read(dir.path().join("report/manifest.json")).unwrap(),
    )
    .unwrap()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, names(&dir.path().join("report")));
    assert!(listed.contains(&"compare.csv".to_string()));
    assert!(!listed.contains(&"results.csv".to_string()));
    assert_eq!(names(dir.path()), ["gale.toml", "report", "storm.toml"]);
    // The same comparison again replaces its own report.
    assert_eq!(compare(&[]).0, Some(0));
}

/// Makes `path` impossible to remove for this process (immutable as root, a read-only
/// folder otherwise) until the guard is dropped; `None` where the system offers neither.
/// When the pinned file's folder is renamed, [`Pinned::moved`] says where it went.
struct Pinned {
    path: PathBuf,
    immutable: bool,
}

impl Pinned {
    fn pin(file: &Path) -> Option<Self> {
        let chattr = |flag: &str, path: &Path| {
            Process::new("chattr")
                .arg(flag)
                .arg(path)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if chattr("+i", file) {
            return Some(Self {
                path: file.to_path_buf(),
                immutable: true,
            });
        }
        use std::os::unix::fs::PermissionsExt;
        let folder = file.parent()?;
        fs::set_permissions(folder, fs::Permissions::from_mode(0o555)).ok()?;
        // Root ignores the mode: then nothing here can pin a file.
        let probe = folder.join(".probe");
        if fs::write(&probe, "").is_ok() {
            let _ = fs::remove_file(&probe);
            let _ = fs::set_permissions(folder, fs::Permissions::from_mode(0o755));
            return None;
        }
        Some(Self {
            path: folder.to_path_buf(),
            immutable: false,
        })
    }
}

impl Pinned {
    /// The pinned file's folder is now `folder`.
    fn moved(&mut self, folder: &Path) {
        self.path = if self.immutable {
            folder.join(self.path.file_name().unwrap())
        } else {
            folder.to_path_buf()
        };
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if self.immutable {
            let _ = Process::new("chattr").arg("-i").arg(&self.path).status();
        } else {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(&self.path, fs::Permissions::from_mode(0o755));
        }
    }
}

/// After the swap, a replaced report whose files cannot be removed: the new report is
/// whole, the command succeeds (exit 0) and a warning names the folder left behind,
/// which stays a report and goes on the next run to the same place.
#[test]
fn a_replaced_report_left_behind_is_named_in_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    copy_storm(dir.path());
    let run = |seed: &str| {
        common::battlelab(
            dir.path(),
            &[
                "run",
                "storm.toml",
                "--trials",
                "1000",
                "--seed",
                seed,
                "--out",
                "report",
                "-q",
            ],
        )
    };
    assert_eq!(run("1").0, Some(0));
    let old = fs::read(dir.path().join("report/results.csv")).unwrap();
    let Some(mut pin) = Pinned::pin(&dir.path().join("report/results.csv")) else {
        eprintln!(
            "skipped: no way to make a file unremovable here (chattr, or a read-only folder)"
        );
        return;
    };
    let (code, _, err) = run("2");
    assert_eq!(code, Some(0), "the new report is whole: {err}");
    let leftover: Vec<String> = names(dir.path())
        .into_iter()
        .filter(|n| n.starts_with(".report.partial-"))
        .collect();
    // The old report, pinned file and all, was swapped out to the folder left behind:
    // follow it there first, so that the guard unpins it whatever fails below.
    if let [left] = &leftover[..] {
        pin.moved(&dir.path().join(left));
    }
    assert_eq!(leftover.len(), 1, "{:?}", names(dir.path()));
    assert!(
        err.contains("warning") && err.contains(&leftover[0]) && err.contains("left behind"),
        "names the folder left behind: {err}"
    );
    // The new report is in place, whole; the old one is still a report.
    let new = dir.path().join("report");
    assert_ne!(fs::read(new.join("results.csv")).unwrap(), old);
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(new.join("manifest.json")).unwrap()).unwrap();
    let mut listed: Vec<String> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, names(&new));
    let left = dir.path().join(&leftover[0]);
    assert!(left.join("manifest.json").is_file() && left.join("results.csv").is_file());
    assert_eq!(fs::read(left.join("results.csv")).unwrap(), old);
    // Once the system lets go, the next run to the same place removes it.
    drop(pin);
    let (code, _, err) = run("3");
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
    assert_eq!(names(dir.path()), ["report", "storm.toml"]);
}

// 2. `--out` naming an existing file or a link.

#[test]
fn out_refuses_an_existing_file_or_link_and_leaves_it_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_storm(dir.path());
    fs::write(dir.path().join("results.txt"), "keep me").unwrap();
    fs::create_dir(dir.path().join("folder")).unwrap();
    std::os::unix::fs::symlink("results.txt", dir.path().join("link_to_file")).unwrap();
    std::os::unix::fs::symlink("folder", dir.path().join("link_to_folder")).unwrap();
    let before = snapshot(dir.path());
    for out in [
        "storm.toml",
        "results.txt",
        "link_to_file",
        "link_to_folder",
    ] {
        let stderr = refused_before_running(dir.path(), &file, out);
        assert!(
            stderr.contains("is a file") || stderr.contains("symbolic link"),
            "{out}: {stderr}"
        );
    }
    assert_eq!(
        snapshot(dir.path()),
        before,
        "something changed or a .old folder appeared"
    );
}

// 3. A closed or full standard output.

/// A closed stdout is quiet for every command. A full one is an error where stdout is the
/// command's answer (`validate`, `table`: exit 1); where the answer is the report folder
/// and stdout only its summary (`run`), the report is complete, so the command warns and
/// exits 0 (issue 40: it exited 1, as if the report had failed).
#[test]
fn a_closed_stdout_ends_quietly_and_a_full_one_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    copy_storm(dir.path());
    for args in [
        vec!["run", "storm.toml", "--trials", "1000", "--out", "piped"],
        vec!["validate", "storm.toml"],
        vec!["table", "crt", "--odds", "1:1"],
    ] {
        // `battlelab … | head -0`: the reader is gone before anything is written.
        let mut child = Process::new(binary())
            .current_dir(dir.path())
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");

        // `battlelab … > /dev/full`.
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let output = Process::new(binary())
            .current_dir(dir.path())
            .args(&args)
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("could not write to standard output"),
            "{args:?}: {stderr}"
        );
        if args[0] == "run" {
            assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
            assert!(
                stderr.contains("warning: the report at piped is complete, but its summary could not be printed"),
                "{args:?}: {stderr}"
            );
        } else {
            assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
            assert!(stderr.contains("error: "), "{args:?}: {stderr}");
        }
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // The report itself was complete before stdout failed.
    assert!(dir.path().join("piped/manifest.json").is_file());
}

// 4–6. Signals in every phase.

fn spawn(cwd: &Path, args: &[&str]) -> Child {
    Process::new(binary())
        .current_dir(cwd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends `signal` to the child and returns its exit code and how long it took to exit.
fn stop(child: Child, signal: i32) -> (Option<i32>, Duration, String) {
    // SAFETY: kill(2) on the pid of a child we spawned and have not yet reaped.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(rc, 0, "the child ended before it was signalled");
    let sent = Instant::now();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        sent.elapsed(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// How long a stopped run may take to end: "about a second", with slack for a loaded
/// machine (a Monte Carlo block of the slowest kernel takes half a second).
const PROMPT: Duration = Duration::from_secs(2);

/// The exit code of a process a signal stopped, as shells give it: 128 + the signal (130
/// for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
fn stopped_by(signal: i32) -> Option<i32> {
    Some(128 + signal)
}

fn assert_stopped(
    dir: &Path,
    what: &str,
    signal: i32,
    result: (Option<i32>, Duration, String),
    keep: &[&str],
) {
    let (code, took, stderr) = result;
    assert_eq!(code, stopped_by(signal), "{what}: {stderr}");
    assert!(took < PROMPT, "{what}: took {took:?} to stop");
    assert!(stderr.contains("no report was written"), "{what}: {stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    let left = names(dir);
    assert_eq!(left, keep, "{what}: left {left:?}");
}

#[test]
fn ctrl_c_stops_the_exact_enumeration_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    // A run: 16 v 9 with seven reserves takes seconds per exact enumeration.
    let file = slow("ratio_exact_16v9.toml");
    let child = spawn(dir.path(), &["run", file.to_str().unwrap(), "--out", "r"]);
    std::thread::sleep(Duration::from_millis(1200));
    assert_stopped(
        dir.path(),
        "run, exact phase",
        libc::SIGINT,
        stop(child, libc::SIGINT),
        &[],
    );
    // The table command: four policies' exact enumerations, about ten seconds in all.
    let child = spawn(
        dir.path(),
        &[
            "table",
            "ratio",
            "--line",
            "1v1,1v1,1v1,1v1,1v1,1v1,1v1,1v1,1v1",
            "--reserve-a",
            "7",
            "--policy",
            "press",
        ],
    );
    std::thread::sleep(Duration::from_millis(1200));
    let (code, took, stderr) = stop(child, libc::SIGINT);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(took < PROMPT, "table ratio took {took:?} to stop");
    // `table` writes no report, so it does not speak of one.
    assert!(
        stderr.contains("stopped") && !stderr.contains("report"),
        "{stderr}"
    );
}

#[test]
fn every_stop_signal_ends_the_monte_carlo_phase_at_any_trial_count() {
    let dir = tempfile::tempdir().unwrap();
    copy_storm(dir.path());
    // 10^12 trials is 1.5·10^7 blocks: a stopped driver must not walk them all.
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let child = spawn(
            dir.path(),
            &[
                "run",
                "storm.toml",
                "--trials",
                "1000000000000",
                "--out",
                "r",
            ],
        );
        std::thread::sleep(Duration::from_millis(800));
        assert_stopped(
            dir.path(),
            &format!("signal {signal}"),
            signal,
            stop(child, signal),
            &["storm.toml"],
        );
    }
}

/// A field analysis with `variants` variants: its report has thousands of charts, so it
/// spends seconds writing them.
fn many_charts(dir: &Path, variants: usize) -> PathBuf {
    let mut text = String::from(
        "name = \"many_charts\"\nsystem = \"field\"\ntrials = 1000\nexact = false\n\
         [side.a]\nsp = 12\nmorale = 2\n[side.b]\nsp = 8\nmorale = 2\n",
    );
    for i in 0..variants {
        text += &format!("[[variant]]\nname = \"v{i}\"\n");
    }
    let file = dir.join("many_charts.toml");
    fs::write(&file, text).unwrap();
    file
}

/// Waits until a staging folder `.r.partial-*` appears in `dir`: the run is writing.
fn wait_for_staging(dir: &Path) {
    let started = Instant::now();
    while !names(dir).iter().any(|n| n.starts_with(".r.partial-")) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no staging folder appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn every_stop_signal_while_the_report_is_written_leaves_no_folder() {
    let dir = tempfile::tempdir().unwrap();
    many_charts(dir.path(), 1000);
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let child = spawn(dir.path(), &["run", "many_charts.toml", "--out", "r"]);
        wait_for_staging(dir.path());
        std::thread::sleep(Duration::from_millis(300));
        assert_stopped(
            dir.path(),
            &format!("signal {signal} while writing"),
            signal,
            stop(child, signal),
            &["many_charts.toml"],
        );
    }
}

#[test]
fn a_stopped_replacement_keeps_the_old_report_whole() {
    let dir = tempfile::tempdir().unwrap();
    many_charts(dir.path(), 1000);
    let (code, _, stderr) = common::battlelab(
        dir.path(),
        &[
            "run",
            "many_charts.toml",
            "--trials",
            "100",
            "--out",
            "r",
            "-q",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let before = snapshot(&dir.path().join("r"));
    let child = spawn(dir.path(), &["run", "many_charts.toml", "--out", "r"]);
    wait_for_staging(dir.path());
    std::thread::sleep(Duration::from_millis(300));
    let (code, _, stderr) = stop(child, libc::SIGTERM);
    assert_eq!(code, Some(143), "{stderr}");
    assert_eq!(
        snapshot(&dir.path().join("r")),
        before,
        "the old report changed"
    );
    assert_eq!(names(dir.path()), ["many_charts.toml", "r"]);
}

/// Issue 40: one SIGTERM was ignored while a command waited for input — `timeout 3
/// battlelab validate FIFO` never returned, nor `sleep 20 | battlelab validate
/// /dev/stdin` — since a blocked read never polls the stop flag. The first signal now
/// ends the process in that phase too, with the signal's code, and `validate` (which
/// writes no report) says "stopped".
#[test]
fn the_first_signal_ends_a_command_waiting_for_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("analysis.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path in our own temporary folder.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // Opening a FIFO no one writes to blocks.
        let child = spawn(dir.path(), &["validate", "analysis.fifo"]);
        std::thread::sleep(Duration::from_millis(400));
        let (code, took, stderr) = stop(child, signal);
        let what = format!("validate FIFO, signal {signal}");
        assert_eq!(code, stopped_by(signal), "{what}: {stderr}");
        assert!(took < Duration::from_secs(1), "{what}: took {took:?}");
        assert!(
            stderr.contains("stopped") && !stderr.contains("report"),
            "{what}: {stderr}"
        );
        // The same from a pipe whose writer stays open (`sleep 20 | battlelab …`), for
        // a command that would write a report.
        for args in [
            vec!["validate", "/dev/stdin"],
            vec!["run", "/dev/stdin", "--out", "r"],
        ] {
            let mut child = Process::new(binary())
                .current_dir(dir.path())
                .args(&args)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let writer = child.stdin.take();
            std::thread::sleep(Duration::from_millis(400));
            let (code, took, stderr) = stop(child, signal);
            drop(writer);
            let what = format!("{args:?} on an open pipe, signal {signal}");
            assert_eq!(code, stopped_by(signal), "{what}: {stderr}");
            assert!(took < Duration::from_secs(1), "{what}: took {took:?}");
            assert!(stderr.contains("stopped"), "{what}: {stderr}");
        }
    }
    assert_eq!(
        names(dir.path()),
        ["analysis.fifo"],
        "something was written"
    );
    // As the issue ran it: `timeout` sends one SIGTERM and reports 124.
    if Process::new("timeout").arg("--version").output().is_ok() {
        let started = Instant::now();
        let status = Process::new("timeout")
            .current_dir(dir.path())
            .args(["1"])
            .arg(binary())
            .args(["validate", "analysis.fifo"])
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(124));
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "timeout 1 took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn a_live_runs_staging_folder_is_never_removed_and_a_dead_runs_is() {
    let dir = tempfile::tempdir().unwrap();
    copy_storm(dir.path());
    // A live run's staging folder: marked, and locked by a process that is alive (this
    // test), as a run holds it while writing.
    let live = dir.path().join(".r.partial-999991");
    fs::create_dir(&live).unwrap();
    fs::write(live.join(".battlelab-staging"), "").unwrap();
    fs::write(live.join("results.csv"), "half written").unwrap();
    let lock = fs::File::open(&live).unwrap();
    lock.try_lock().unwrap();
    // A killed run's: marked, nobody holds it.
    let dead = dir.path().join(".r.partial-999992");
    fs::create_dir(&dead).unwrap();
    fs::write(dead.join(".battlelab-staging"), "").unwrap();
    // Not battlelab's at all, whatever its name: no mark, no manifest.
    let foreign = dir.path().join(".r.partial-999993");
    fs::create_dir(&foreign).unwrap();
    fs::write(foreign.join("mine.txt"), "a user's file").unwrap();
    // A run killed before it wrote anything: an empty folder (its PID may come again,
    // as in a container, and must be able to stage).
    let empty = dir.path().join(".r.partial-999994");
    fs::create_dir(&empty).unwrap();
    let (code, _, stderr) = common::battlelab(
        dir.path(),
        &["run", "storm.toml", "--trials", "1000", "--out", "r", "-q"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!empty.exists(), "an empty dead staging folder was left");
    assert!(
        live.join("results.csv").is_file(),
        "a live run's staging folder was removed"
    );
    assert!(!dead.exists(), "a dead run's staging folder was left");
    assert!(
        foreign.join("mine.txt").is_file(),
        "a folder that is not battlelab's was removed"
    );
    drop(lock);
}

// 6. One trial limit for the file and the command line.

#[test]
fn trials_and_seeds_have_one_limit_on_the_command_line_and_in_files() {
    let dir = tempfile::tempdir().unwrap();
    copy_storm(dir.path());
    for trials in ["1000000000001", "18446744073709551615"] {
        let (code, _, stderr) =
            common::battlelab(dir.path(), &["run", "storm.toml", "--trials", trials]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains("1..=1000000000000"), "{stderr}");
    }
    let text = fs::read_to_string(dir.path().join("storm.toml")).unwrap();
    let line = text.lines().find(|l| l.starts_with("trials")).unwrap();
    fs::write(
        dir.path().join("big.toml"),
        text.replace(line, "trials = 1_000_000_000_001"),
    )
    .unwrap();
    let (code, _, stderr) = common::battlelab(dir.path(), &["validate", "big.toml"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("1 to 1000000000000"), "{stderr}");
    let (code, _, stderr) = common::battlelab(
        dir.path(),
        &["run", "storm.toml", "--seed", "9223372036854775808"],
    );
    assert_eq!(code, Some(2), "{stderr}");
    // The seed's bound is 2^63 - 1 (`limits::MAX_SEED`), as for `seed` in a file.
    assert!(stderr.contains("0..=9223372036854775807"), "{stderr}");
    let (code, _, stderr) = common::battlelab(
        dir.path(),
        &[
            "table",
            "crt",
            "--odds",
            "1:1",
            "--trials",
            "100",
            "--seed",
            "9223372036854775808",
        ],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("0..=9223372036854775807"), "{stderr}");
    assert_eq!(names(dir.path()), ["big.toml", "storm.toml"]);
}

// 7. Names and output paths checked before the run.

#[test]
fn paths_and_names_that_cannot_be_written_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = copy_storm(dir.path());
    for out in [".", "/", "x/..", "..", "storm.toml/inside"] {
        refused_before_running(dir.path(), &file, out);
    }
    let text = fs::read_to_string(&file).unwrap();
    // A name over the cap.
    let long = dir.path().join("long.toml");
    fs::write(
        &long,
        text.replace(
            "name = \"storm\"",
            &format!("name = \"{}\"", "n".repeat(250)),
        ),
    )
    .unwrap();
    let (code, _, stderr) = common::battlelab(
        dir.path(),
        &["run", "long.toml", "--trials", "1000000000000"],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("at most 100"), "{stderr}");
    // `...toml` with no name: its stem must not become the folder `..`.
    let dots = dir.path().join("...toml");
    fs::write(&dots, text.replace("name = \"storm\"\n", "")).unwrap();
    let (code, _, stderr) =
        common::battlelab(dir.path(), &["run", "...toml", "--trials", "1000000000000"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("add name ="), "{stderr}");
    // A file name that is not a folder name becomes one.
    let odd = dir.path().join("my storm (v2).toml");
    fs::write(&odd, text.replace("name = \"storm\"\n", "")).unwrap();
    let (code, _, stderr) = common::battlelab(
        dir.path(),
        &["run", "my storm (v2).toml", "--trials", "1000", "-q"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(dir
        .path()
        .join("reports/my_storm_v2/manifest.json")
        .is_file());
    fs::remove_dir_all(dir.path().join("reports")).unwrap();
    assert_eq!(
        names(dir.path()),
        ["...toml", "long.toml", "my storm (v2).toml", "storm.toml"]
    );
}

#[test]
fn variant_names_that_would_share_chart_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.toml");
    for (a, b) in [
        ("printed", "Printed"),
        ("printed", "printed!"),
        ("cap 3", "cap_3"),
        // Different slugs ("1" and "plus1"), one chart file name (`plus1`).
        ("+1", "plus1"),
    ] {
        fs::write(
            &file,
            format!(
                "system = \"field\"\ntrials = 1000\n[side.a]\nsp = 12\nmorale = 2\n[side.b]\nsp = 8\nmorale = 2\n\
                 [[variant]]\nname = \"{a}\"\n[[variant]]\nname = \"{b}\"\n"
            ),
        )
        .unwrap();
        let (code, _, stderr) =
            common::battlelab(dir.path(), &["run", "v.toml", "--trials", "1000000000000"]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("same chart files") && stderr.contains(b),
            "{stderr}"
        );
    }
    assert_eq!(names(dir.path()), ["v.toml"]);
}

// 8. Numbers range-checked at the boundary.

#[test]
fn table_numbers_out_of_range_are_refused_not_wrapped() {
    for args in [
        vec![
            "table",
            "attrition",
            "--sp",
            "5",
            "--drm",
            "2147483647",
            "--unsupplied",
        ],
        vec![
            "table",
            "march",
            "--extra",
            "2",
            "--drm",
            "-2147483648",
            "--guards",
        ],
        vec!["table", "naval", "--odds", "1-1", "--drm", "100"],
        vec!["table", "crt", "--odds", "1:1", "--drm", "-100"],
        vec!["table", "ratio", "--line", "1v1", "--mod-a", "2147483647"],
        vec!["table", "attrition", "--sp", "4294967296"],
    ] {
        let output = battlelab().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    // At the bound the tables clamp as printed: attrition's roll tops out.
    let output = battlelab()
        .args([
            "table",
            "attrition",
            "--sp",
            "5",
            "--drm",
            "99",
            "--unsupplied",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["params"]["drm"], 100);
}

// 9. Bounded input.

#[test]
fn unbounded_input_is_refused_quickly_with_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (code, _, stderr) = common::battlelab(dir.path(), &["validate", "/dev/zero"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("larger than 1024 KiB"), "{stderr}");
    // A frontier CRT of 240,000 rows is far over the file cap; one of 20,000 rows fits
    // under it and is refused by the list cap, naming the key.
    let frontier = fs::read_to_string(shipped("frontier_illustrative_crt.toml")).unwrap();
    let start = frontier.find("rows = [").expect("the shipped CRT has rows") + "rows = [".len();
    for (rows, needle) in [(240_000, "larger than 1024 KiB"), (20_000, "crt.rows")] {
        let mut huge = frontier.clone();
        huge.insert_str(
            start,
            &"\n  [\"-\", \"-\", \"-\", \"-\", \"-\"],".repeat(rows),
        );
        fs::write(dir.path().join("crt.toml"), huge).unwrap();
        let (code, _, stderr) = common::battlelab(dir.path(), &["validate", "crt.toml"]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(needle), "{rows} rows: {stderr}");
    }
    // An explicit sweep list of 400,000 values (under the file cap: 1,000,000 bytes).
    let values = vec!["0"; 400_000].join(",");
    let field = fs::read_to_string(shipped("field_combat.toml")).unwrap();
    let text = field.replace("[sweep]", &format!("[sweep]\n\"a.leader\" = [{values}]"));
    fs::write(dir.path().join("sweep.toml"), text).unwrap();
    let (code, _, stderr) = common::battlelab(dir.path(), &["validate", "sweep.toml"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("at most 1001 items") && stderr.contains("sweep.a.leader"),
        "{stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(names(dir.path()), ["crt.toml", "sweep.toml"]);
}

// 10. Errors in a designer's words, never an echo of a whole value.

#[test]
fn errors_name_the_key_and_what_is_allowed_without_rust_or_long_echoes() {
    let dir = tempfile::tempdir().unwrap();
    let base = "system = \"field\"\ntrials = 1000\n[side.a]\nsp = 12\nmorale = 2\n[side.b]\nsp = 8\nmorale = 2\n";
    for (extra, needles) in [
        ("variant = 1\n", vec!["field `variant`", "expected a list"]),
        (
            "[[variant]]\nname = 3\n",
            vec![
                "field `variant[0].name`",
                "expected text in quotes, got the number 3",
            ],
        ),
        (
            "[battle]\nterrain_drm = 99999999999999999999\n",
            vec!["battle.terrain_drm", "out of range"],
        ),
        (
            "[battle]\nterrain_drm = true\n",
            vec!["battle.terrain_drm", "expected a whole number, got true"],
        ),
    ] {
        // A top-level key goes before the first table.
        let text = if extra.starts_with('[') {
            format!("{base}{extra}")
        } else {
            format!("{extra}{base}")
        };
        fs::write(dir.path().join("e.toml"), text).unwrap();
        let (code, _, stderr) = common::battlelab(dir.path(), &["validate", "e.toml"]);
        assert_eq!(code, Some(2), "{stderr}");
        for needle in needles {
            assert!(stderr.contains(needle), "`{needle}` not in: {stderr}");
        }
        for rust in ["struct", "i64", "u64", "i128", "VariantSpec", "sequence"] {
            assert!(!stderr.contains(rust), "`{rust}` leaks in: {stderr}");
        }
    }
    // A megabyte-long bad value is not echoed back.
    let long = "x".repeat(1_000_000 - base.len() - 100);
    fs::write(
        dir.path().join("e.toml"),
        format!("name = \"{long}\"\n{base}"),
    )
    .unwrap();
    let (code, _, stderr) = common::battlelab(dir.path(), &["validate", "e.toml"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.len() < 1000, "{} bytes on stderr", stderr.len());
    fs::write(
        dir.path().join("e.toml"),
        format!("{base}[side.c]\nsp = [{long}\n"),
    )
    .unwrap();
    let (code, _, stderr) = common::battlelab(dir.path(), &["validate", "e.toml"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.len() < 1000, "{} bytes on stderr", stderr.len());
}

#[test]
fn sp_is_capped_the_same_in_every_system() {
    let dir = tempfile::tempdir().unwrap();
    let text = "system = \"attrition\"\ntrials = 1000\n[sweep]\nsp = [5, 9200000000000000000]\n";
    fs::write(dir.path().join("a.toml"), text).unwrap();
    let (code, _, stderr) = common::battlelab(dir.path(), &["validate", "a.toml"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("at most 999 SP"), "{stderr}");
}

/// Issue 40: a variant named `=cmd|' /C calc'!A0` was written raw into results.csv and
/// the other CSVs, where a spreadsheet runs it. Every CSV cell of the user's text now
/// starts with `'` (OWASP), in the report's frames and in the CSV the commands print;
/// Parquet keeps the raw name; numbers (a DRM of -1) stay numbers.
#[test]
fn user_text_in_every_csv_is_safe_for_spreadsheets_and_raw_in_parquet() {
    const NAME: &str = "=cmd|' /C calc'!A0";
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("inject.toml"),
        format!(
            "system = \"field\"\ntrials = 1000\n[side.a]\nsp = 12\nmorale = 2\n\
             [side.b]\nsp = 8\nmorale = 2\n[sweep]\ndrm = [-1, 0]\n\
             [[variant]]\nname = \"{}\"\n[[variant]]\nname = \"plain\"\n",
            NAME.replace('\'', "\\u0027")
        ),
    )
    .unwrap();
    let (code, _, stderr) =
        common::battlelab(dir.path(), &["run", "inject.toml", "--out", "r", "-q"]);
    assert_eq!(code, Some(0), "{stderr}");
    // Cells with the name (it holds no comma or quote, so none is quoted).
    let cells_with_name = |what: &str, csv: &str| -> usize {
        let mut found = 0;
        for line in csv.lines() {
            for cell in line.split(',') {
                if cell.contains("=cmd") {
                    assert_eq!(cell, format!("'{NAME}"), "{what}: {line}");
                    found += 1;
                }
            }
        }
        found
    };
    let mut csvs = 0;
    for entry in fs::read_dir(dir.path().join("r")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "csv") {
            let text = fs::read_to_string(&path).unwrap();
            assert!(
                cells_with_name(&path.display().to_string(), &text) > 0,
                "{}: the variant is missing",
                path.display()
            );
            csvs += 1;
        }
    }
    assert!(csvs >= 4, "only {csvs} CSV files");
    // The DRM column is numbers, -1 among them, written as numbers.
    let results = fs::read_to_string(dir.path().join("r/results.csv")).unwrap();
    let header: Vec<&str> = results.lines().next().unwrap().split(',').collect();
    let drm = header.iter().position(|h| *h == "drm").unwrap();
    let drms: Vec<i64> = results
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(drm).unwrap().parse().unwrap())
        .collect();
    assert!(drms.contains(&-1) && drms.contains(&0), "{drms:?}");
    // Parquet is typed data: the name as written.
    use polars::prelude::*;
    let parquet = ParquetReader::new(fs::File::open(dir.path().join("r/results.parquet")).unwrap())
        .finish()
        .unwrap();
    let variants: Vec<&str> = parquet
        .column("variant")
        .unwrap()
        .str()
        .unwrap()
        .iter()
        .flatten()
        .collect();
    assert!(variants.contains(&NAME), "{variants:?}");
    // The CSV the commands print: value's and equilibrium's have a variant column.
    for args in [
        vec!["value", "inject.toml", "--format", "csv"],
        vec!["equilibrium", "inject.toml", "--format", "csv"],
    ] {
        let (code, stdout, stderr) = common::battlelab(dir.path(), &args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(
            cells_with_name(&args.join(" "), &stdout) > 0,
            "{args:?}: {stdout}"
        );
    }
}
