//! README's two commands share one build of their dependencies: `cargo run --release` (the
//! binary's dependencies) and `cargo test --release` (the same plus the dev-dependencies,
//! for the whole workspace) must turn on the same features of every crate both use, or the
//! test build compiles Polars a second time. A dev-dependency that turns on a new feature
//! of a shared crate fails this test; turn that feature on in `[dependencies]` too (see the
//! comment there).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Every package of the build and the union of its features, from `cargo tree`.
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--offline", "--prefix", "none", "-f", "{p}|{f}"])
        .args(args)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let line = line.trim_end_matches(" (*)");
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        let entry = map.entry(package.trim().to_string()).or_default();
        entry.extend(
            features
                .split(',')
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(str::to_string),
        );
    }
    map
}

#[test]
fn the_test_build_turns_on_no_feature_the_binary_build_lacks() {
    let binary = features(&["-p", "battlelab", "-e", "normal,build"]);
    let tests = features(&["--workspace", "-e", "normal,build,dev"]);
    assert!(
        binary.keys().any(|p| p.starts_with("polars ")),
        "{binary:?}"
    );
    let differing: Vec<String> = binary
        .iter()
        .filter_map(|(package, mine)| {
            let theirs = tests.get(package)?;
            (mine != theirs).then(|| {
                format!(
                    "{package}: binary {:?}, tests add {:?}",
                    mine,
                    theirs.difference(mine).collect::<Vec<_>>()
                )
            })
        })
        .collect();
    assert!(
        differing.is_empty(),
        "the test build would compile these again:\n{}",
        differing.join("\n")
    );
}
