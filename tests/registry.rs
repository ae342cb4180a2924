//! The one registry of systems holds every part of each system it lists: a folder in the
//! core and in the report crate, a guide under docs/systems/, benches that time its
//! kernels, and — where its keys are priced — the levers `value` and `solve` turn.
//! Adding a system without one of its parts fails here.

use std::path::Path;

use battlelab_core::systems::{docs, REGISTRY};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether a bench file times something of the system in `folder`: it names the
/// system's module, or a battle of the system's own `scenarios.rs`.
fn times_system(bench: &str, root: &Path, folder: &str) -> bool {
    if bench.contains(&format!("systems::{folder}::")) {
        return true;
    }
    let scenarios = root.join(format!(
        "crates/battlelab-core/src/systems/{folder}/scenarios.rs"
    ));
    let Ok(scenarios) = std::fs::read_to_string(scenarios) else {
        return false;
    };
    scenarios
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            l.strip_prefix("pub fn ")
                .or_else(|| l.strip_prefix("pub const "))
                .map(|rest| rest.split(['(', ':', '<']).next().unwrap_or_default())
        })
        .any(|name| !name.is_empty() && bench.contains(&format!("scenarios::{name}")))
}

#[test]
fn every_registered_system_has_its_folders_guide_and_benches() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bench_main = read(&root.join("benches/bench_main.rs"));
    let mut benched = Vec::new();
    for r in REGISTRY {
        for folder in [
            root.join("crates/battlelab-core/src/systems")
                .join(r.folder),
            root.join("src/systems").join(r.folder),
        ] {
            assert!(folder.join("mod.rs").is_file(), "{}", folder.display());
        }
        for doc in r.docs {
            let guide = doc
                .summary
                .split(['(', ')', ','])
                .find(|w| w.trim().starts_with("docs/systems/"))
                .unwrap_or_else(|| panic!("{}: its summary names no guide", doc.name));
            assert!(root.join(guide.trim()).is_file(), "{}: {guide}", doc.name);
        }
        for bench in r.benches {
            let file = read(&root.join(format!("benches/benchmarks/{bench}.rs")));
            assert!(
                bench_main.contains(&format!("benchmarks::{bench}::benches")),
                "{bench} is not in bench_main.rs"
            );
            assert!(
                times_system(&file, root, r.folder),
                "benches/benchmarks/{bench}.rs times nothing of {}",
                r.folder
            );
            assert!(
                file.contains("bare_xoshiro"),
                "{bench}: no bare loop beside it"
            );
            benched.push(*bench);
        }
    }
    // Every bench file but the engine's own driver belongs to a system.
    for entry in std::fs::read_dir(root.join("benches/benchmarks")).unwrap() {
        let name = entry
            .unwrap()
            .file_name()
            .to_string_lossy()
            .replace(".rs", "");
        if !["mod", "driver"].contains(&name.as_str()) {
            assert!(
                benched.contains(&name.as_str()),
                "{name} is no system's bench"
            );
        }
    }
}

#[test]
fn the_levers_are_the_priced_keys_of_the_registered_systems() {
    for doc in docs() {
        let priced: Vec<&str> = doc
            .keys()
            .filter(|k| k.lever.is_some())
            .map(|k| k.path)
            .collect();
        match battlelab::levers::of(doc.name) {
            None => assert!(priced.is_empty(), "{}: {priced:?}", doc.name),
            Some(levers) => {
                assert_eq!(levers.system, doc.name);
                for lever in levers.levers {
                    assert!(priced.contains(&lever.key.path), "{}", lever.name);
                }
            }
        }
    }
    let mut served = battlelab::levers::served();
    served.sort_unstable();
    let mut expected: Vec<&str> = docs()
        .iter()
        .filter(|d| d.keys().any(|k| k.lever.is_some()))
        .map(|d| d.name)
        .collect();
    expected.sort_unstable();
    assert_eq!(served, expected);
}

/// The code of `path` before its tests.
fn code_of(path: &Path) -> String {
    let text = read(path);
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[test]
fn no_command_names_a_system() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("crates/battlelab-core/src/levers.rs")];
    for dir in ["src/cmd", "src/table"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            files.push(entry.unwrap().path());
        }
    }
    let mut ties = Vec::new();
    for file in &files {
        let code = code_of(file);
        for r in REGISTRY {
            for needle in [format!("systems::{}", r.folder)]
                .into_iter()
                .chain(r.docs.iter().map(|d| format!("\"{}\"", d.name)))
            {
                if code.contains(&needle) {
                    ties.push(format!("{}: {needle}", file.display()));
                }
            }
        }
        for study in [
            "FieldStudy",
            "MeleeStudy",
            "RatioStudy",
            "FrontierStudy",
            "SetupStudy",
            "NavalEngagementStudy",
            "D6TableStudy",
        ] {
            if code.contains(study) {
                ties.push(format!("{}: {study}", file.display()));
            }
        }
    }
    assert!(
        ties.is_empty(),
        "commands that match on a system:\n{}",
        ties.join("\n")
    );
}
