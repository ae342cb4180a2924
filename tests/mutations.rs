//! Seeded mutations of every shipped analysis file (issue 11): whatever a user does to a
//! file — deletes a key, sets a number to 0, −1, 2^31, 2^63 or 1e308, gives a value of
//! the wrong type, an empty or huge list, a duplicated line, a long, unicode or
//! path-like name — battlelab never panics, a refusal is exit 2 with a short message
//! naming the file, and a refused file writes nothing anywhere.
//!
//! The cases are drawn from a fixed seed, so a failure replays exactly; set
//! `BATTLELAB_MUTATIONS=<cases per file>` and `BATTLELAB_MUTATION_SEED=<seed>` for a
//! longer campaign.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use rand_xoshiro::rand_core::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use toml::Value;

/// Cases per shipped file in a normal test run: a few hundred in all.
const CASES_PER_FILE: usize = 12;
/// A run still going after this is stopped with SIGTERM (and must end as interrupted).
const RUN_LIMIT: Duration = Duration::from_secs(20);

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Rng(Xoshiro256PlusPlus);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Paths to every value in a document: keys and list indices.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn paths(value: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        Value::Table(t) => {
            for (k, v) in t {
                prefix.push(Step::Key(k.clone()));
                out.push(prefix.clone());
                paths(v, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                prefix.push(Step::Index(i));
                out.push(prefix.clone());
                paths(v, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn parent_of<'a>(root: &'a mut Value, path: &[Step]) -> &'a mut Value {
    let mut v = root;
    for step in &path[..path.len() - 1] {
        v = match step {
            Step::Key(k) => v.get_mut(k.as_str()).unwrap(),
            Step::Index(i) => v.get_mut(*i).unwrap(),
        };
    }
    v
}

/// A hostile value.
fn hostile(rng: &mut Rng) -> Value {
    let long = "w".repeat(10_000);
    let huge: Vec<Value> = (0..1500).map(Value::Integer).collect();
    let choices: Vec<Value> = vec![
        Value::Integer(0),
        Value::Integer(-1),
        Value::Integer(1 << 31),
        Value::Integer(i64::MAX),
        Value::Integer(i64::MIN),
        Value::Float(1e308),
        Value::Float(-1e308),
        Value::Float(f64::NAN),
        Value::Float(0.5),
        Value::Boolean(true),
        Value::String(String::new()),
        Value::String("text".into()),
        Value::String(long),
        Value::String("Ελληνικά ⚔ 漢字".into()),
        Value::String("../../outside".into()),
        Value::String("a/b\\c".into()),
        Value::String("/".into()),
        Value::String("..".into()),
        Value::String("nul\u{0}byte".into()),
        Value::Array(Vec::new()),
        Value::Array(huge),
        Value::Array(vec![Value::String("x".into()); 3]),
        Value::Table(toml::Table::new()),
    ];
    rng.pick(&choices).clone()
}

/// One mutated version of `text`, and what was done (for the failure message).
fn mutate(text: &str, rng: &mut Rng) -> (String, String) {
    let mut doc: Value = Value::Table(toml::from_str(text).expect("shipped files parse"));
    let mut all = Vec::new();
    paths(&doc, &mut Vec::new(), &mut all);
    let kind = rng.below(8);
    match kind {
        // Text-level: duplicate, delete or cut a line.
        0 | 1 => {
            let lines: Vec<&str> = text.lines().collect();
            let i = rng.below(lines.len());
            let mut out: Vec<&str> = lines.clone();
            let what = if kind == 0 {
                out.insert(i, lines[i]);
                format!("duplicated line {}: {}", i + 1, lines[i])
            } else {
                out.remove(i);
                format!("deleted line {}: {}", i + 1, lines[i])
            };
            (out.join("\n") + "\n", what)
        }
        // The report name: long, unicode, a path.
        2 => {
            let names = [
                "n".repeat(300),
                "Ελληνικά".to_string(),
                "../escape".to_string(),
                "a/b".to_string(),
                "..".to_string(),
                ".".to_string(),
                String::new(),
                "CON".to_string(),
            ];
            let name = rng.pick(&names).clone();
            doc.as_table_mut()
                .unwrap()
                .insert("name".into(), Value::String(name.clone()));
            (
                toml::to_string(&doc).unwrap(),
                format!("name = {:?}", &name[..name.len().min(40)]),
            )
        }
        // Delete a key or an item.
        3 => {
            let path = rng.pick(&all).clone();
            match (parent_of(&mut doc, &path), path.last().unwrap()) {
                (Value::Table(t), Step::Key(k)) => {
                    t.remove(k);
                }
                (Value::Array(a), Step::Index(i)) => {
                    a.remove(*i);
                }
                _ => unreachable!(),
            }
            (toml::to_string(&doc).unwrap(), format!("deleted {path:?}"))
        }
        // Rename a key to one nobody knows.
        4 => {
            let keys: Vec<&Vec<Step>> = all
                .iter()
                .filter(|p| matches!(p.last(), Some(Step::Key(_))))
                .collect();
            let path = (*rng.pick(&keys)).clone();
            if let (Value::Table(t), Step::Key(k)) =
                (parent_of(&mut doc, &path), path.last().unwrap())
            {
                if let Some(v) = t.remove(k) {
                    t.insert(format!("{k}_typo"), v);
                }
            }
            (toml::to_string(&doc).unwrap(), format!("renamed {path:?}"))
        }
        // Replace any value with a hostile one.
        _ => {
            let path = rng.pick(&all).clone();
            let value = hostile(rng);
            let shown = format!("{value}");
            match (parent_of(&mut doc, &path), path.last().unwrap()) {
                (Value::Table(t), Step::Key(k)) => {
                    t.insert(k.clone(), value);
                }
                (Value::Array(a), Step::Index(i)) => a[*i] = value,
                _ => unreachable!(),
            }
            (
                toml::to_string(&doc).unwrap(),
                format!("{path:?} = {}", &shown[..shown.len().min(60)]),
            )
        }
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Runs the binary in `cwd`; a run past [`RUN_LIMIT`] is sent SIGTERM. Returns the exit
/// code, stderr, and whether it had to be stopped.
fn battlelab(cwd: &Path, args: &[&str]) -> (Option<i32>, String, bool) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("battlelab"))
        .current_dir(cwd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut stopped = false;
    while child.try_wait().unwrap().is_none() {
        if !stopped && started.elapsed() > RUN_LIMIT {
            // SAFETY: kill(2) on our own child, not yet reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            stopped = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        stopped,
    )
}

#[test]
fn mutated_shipped_analyses_never_panic_and_refusals_write_nothing() {
    let cases = env_or("BATTLELAB_MUTATIONS", CASES_PER_FILE);
    let seed = env_or("BATTLELAB_MUTATION_SEED", 11u64);
    let mut rng = Rng(Xoshiro256PlusPlus::seed_from_u64(seed));
    let (mut refused, mut accepted) = (0, 0);
    for file in common::shipped_analyses() {
        let text = fs::read_to_string(&file).unwrap();
        for case in 0..cases {
            let (mutated, what) = mutate(&text, &mut rng);
            let dir = tempfile::tempdir().unwrap();
            fs::write(dir.path().join("case.toml"), &mutated).unwrap();
            let label = format!("{} case {case} (seed {seed}): {what}", file.display());
            let (check, stderr, _) = battlelab(dir.path(), &["validate", "case.toml"]);
            assert!(
                !stderr.contains("panicked"),
                "{label}: check panicked: {stderr}"
            );
            assert!(
                matches!(check, Some(0 | 2)),
                "{label}: check exit {check:?}: {stderr}"
            );
            let (run, run_err, stopped) = battlelab(
                dir.path(),
                &["run", "case.toml", "--trials", "300", "--out", "out", "-q"],
            );
            assert!(
                !run_err.contains("panicked"),
                "{label}: run panicked: {run_err}"
            );
            if check == Some(2) {
                refused += 1;
                for (command, message) in [("validate", &stderr), ("run", &run_err)] {
                    assert!(
                        message.contains("case.toml"),
                        "{label}: {command} does not name the file: {message}"
                    );
                    assert!(
                        message.len() < 2000,
                        "{label}: {command} wrote {} bytes to stderr",
                        message.len()
                    );
                }
                assert_eq!(
                    run,
                    Some(2),
                    "{label}: check refused it but run gave {run:?}: {run_err}"
                );
                assert_eq!(
                    listing(dir.path()),
                    ["case.toml"],
                    "{label}: a refused file wrote something"
                );
            } else if stopped {
                accepted += 1;
                // 143: ended by SIGTERM, as shells report it.
                assert_eq!(run, Some(143), "{label}: a stopped run: {run_err}");
                assert_eq!(
                    listing(dir.path()),
                    ["case.toml"],
                    "{label}: a stopped run left something"
                );
            } else {
                accepted += 1;
                assert_eq!(
                    run,
                    Some(0),
                    "{label}: check accepted it but run gave {run:?}: {run_err}"
                );
                assert!(dir.path().join("out/manifest.json").is_file(), "{label}");
            }
        }
    }
    eprintln!("{refused} refused, {accepted} accepted (seed {seed})");
    // The campaign exercises both sides, or it tests little.
    assert!(
        refused > 20 && accepted > 20,
        "refused {refused}, accepted {accepted}"
    );
}
