//! The rules systems, one folder each, and [`REGISTRY`], the one list of them.
//!
//! A system's folder holds its rules (the printed tables and their kernels, exact
//! enumerations and fast forms), its analysis keys (parsed and validated once into plain
//! data, documented once in its key table — the levers `value` and `solve` turn are the
//! keys marked priced), its [`crate::engine::System`] implementation — the plan of runs,
//! the kernel per block, exact results, outcomes and distributions — its one-roll tables
//! and the battles its benches time.
//!
//! Why the registry exists: every list of systems the tool shows — `system = "…"` names,
//! `battlelab keys`/`new`/`schema`, the levers of `value` and `solve`, the `table`
//! subcommands, the benches — is read from [`REGISTRY`], so adding a system is one row
//! here (and one in the report crate's list, which a test holds to this one).
//!
//! The reports built on them (frames beyond the shared ones, charts, rulebook tables) are
//! in the `battlelab` crate's `systems` modules of the same names.

pub mod d6_tables;
pub mod field;
pub mod frontier;
pub mod melee;
pub mod naval_engagement;
pub mod ratio;
pub mod rules_file;
pub mod setup;

use std::path::Path;
use std::sync::Arc;

use crate::engine::dynamic::AnyStudy;
use crate::files::Files;
use crate::keys::SystemDoc;
use crate::one_roll::OneRollTable;
use crate::toml_input::AnalysisError;

/// Validates analysis text of one system (`path` names it in errors), reading the files
/// it names from the given [`Files`].
pub type Parse = fn(&Path, &str, &dyn Files) -> Result<Arc<dyn AnyStudy>, AnalysisError>;

/// Everything the engine and the commands read of one system besides its
/// [`crate::engine::System`] implementation.
#[derive(Clone, Copy, Debug)]
pub struct Registration {
    /// Its folder, `systems/<folder>/` here and in the report crate.
    pub folder: &'static str,
    /// Its analysis files: one documentation per `system = "…"` name it answers to (the
    /// d6 tables answer to seven) — keys, `new`'s starter file, `schema`, and, from the
    /// keys marked priced, the levers `value` and `solve` turn.
    pub docs: &'static [SystemDoc],
    /// Its files under `benches/benchmarks/`, where its kernels are timed beside the bare
    /// xoshiro loop on the battles of its `scenarios`.
    pub benches: &'static [&'static str],
    /// The one-roll tables it declares in its `one_roll` module: the `battlelab table`
    /// subcommands (none for a system without single rolls of its own).
    pub one_roll: &'static [OneRollTable],
    /// Its parser, behind [`AnyStudy`]: what a front end without the report crate (the
    /// WebAssembly module) runs.
    pub parse: Parse,
}

/// A parsed study behind [`AnyStudy`] (what each registration's `parse` returns).
pub fn study<S: AnyStudy + 'static>(
    study: Result<S, AnalysisError>,
) -> Result<Arc<dyn AnyStudy>, AnalysisError> {
    study.map(|s| Arc::new(s) as Arc<dyn AnyStudy>)
}

/// The index in [`REGISTRY`] of the system an analysis text names (`system = "…"`). A
/// file naming no system, or one no registration answers to, goes to the first (field
/// battles), whose parser names the fault and the systems there are.
pub fn registered(text: &str) -> usize {
    #[derive(serde::Deserialize)]
    struct SystemOnly {
        system: Option<String>,
    }
    let system = toml::from_str::<SystemOnly>(text)
        .ok()
        .and_then(|s| s.system);
    REGISTRY
        .iter()
        .position(|registration| {
            system
                .as_deref()
                .is_some_and(|s| registration.docs.iter().any(|d| d.name == s))
        })
        .unwrap_or(0)
}

/// Validates analysis text of any registered system, reading the files it names from
/// `files`: the parser the command line runs, behind [`AnyStudy`].
pub fn parse(
    path: &Path,
    text: &str,
    files: &dyn Files,
) -> Result<Arc<dyn AnyStudy>, AnalysisError> {
    (REGISTRY[registered(text)].parse)(path, text, files)
}

/// Every system, once. Field battles come first: a file that names no system is read
/// as one (and told what to name).
pub const REGISTRY: [Registration; 8] = [
    field::REGISTRATION,
    d6_tables::REGISTRATION,
    setup::REGISTRATION,
    naval_engagement::REGISTRATION,
    ratio::REGISTRATION,
    melee::REGISTRATION,
    frontier::REGISTRATION,
    rules_file::REGISTRATION,
];

/// Every system's documentation, in registry order.
pub fn docs() -> Vec<SystemDoc> {
    REGISTRY
        .iter()
        .flat_map(|r| r.docs.iter().copied())
        .collect()
}

/// The documentation of the system named `name`.
pub fn doc(name: &str) -> Option<SystemDoc> {
    docs().into_iter().find(|d| d.name == name)
}

/// Every name an analysis file's `system = "…"` may give.
pub fn names() -> Vec<&'static str> {
    docs().iter().map(|d| d.name).collect()
}

/// Every one-roll table every system declares, in registry order — the order
/// `battlelab table --help` lists them: the subcommands of `table` are built from this.
pub fn one_roll_tables() -> impl Iterator<Item = &'static OneRollTable> {
    REGISTRY.iter().flat_map(|r| r.one_roll.iter())
}

/// The one-roll table `name` (`crt`, `attrition`, `frontier-fire` …).
pub fn one_roll_table(name: &str) -> Option<&'static OneRollTable> {
    one_roll_tables().find(|t| t.name == name)
}

/// Every key a file of some system may hold at its top level, in documentation order
/// (what a file without `system` is checked against).
pub fn top_level_keys() -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for doc in docs() {
        for (segment, _) in doc.tree().children {
            if !segment.is_placeholder() && !keys.contains(&segment.name) {
                keys.push(segment.name);
            }
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_system_is_registered_with_its_parts_once() {
        let names = names();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[..i].contains(name), "{name} is registered twice");
        }
        assert_eq!(
            names[0], "field",
            "a file without `system` is read as a field battle"
        );
        for r in REGISTRY {
            assert!(!r.docs.is_empty(), "a registration without documentation");
            assert!(!r.benches.is_empty(), "{} has no bench", r.docs[0].name);
            for doc in r.docs {
                assert!(
                    !doc.summary.is_empty() && !doc.starter.is_empty(),
                    "{}",
                    doc.name
                );
                assert!(
                    doc.keys().any(|k| k.path == "system"),
                    "{}: no header",
                    doc.name
                );
            }
        }
    }
}
