//! The rules systems, one module each: its analysis keys (parsed and validated once into
//! plain data) and its [`crate::engine::System`] implementation — the plan of runs, the
//! kernel per block, exact results, outcomes and distributions.
//!
//! Each system also declares its one-roll tables (`battlelab table …`) in a module of its
//! own beside it, `<name>_one_roll`; [`one_roll_tables`] lists them all.
//!
//! The reports built on them (frames beyond the shared ones, charts, rulebook tables) are
//! in the `battlelab` crate's `systems` modules of the same names.

pub mod field;
pub mod field_one_roll;
pub mod frontier;
pub mod frontier_one_roll;
pub mod melee;
pub mod melee_one_roll;
pub mod naval;
pub mod ratio;
pub mod ratio_one_roll;
pub mod setup;
pub mod setup_one_roll;
pub mod tables;
pub mod tables_one_roll;

use crate::one_roll::OneRollTable;

/// Every one-roll table every system declares, in the order `battlelab table --help`
/// lists them: the subcommands of `table` are built from this list.
pub fn one_roll_tables() -> impl Iterator<Item = &'static OneRollTable> {
    [
        field_one_roll::TABLES,
        tables_one_roll::TABLES,
        setup_one_roll::TABLES,
        ratio_one_roll::TABLES,
        melee_one_roll::TABLES,
        frontier_one_roll::TABLES,
    ]
    .into_iter()
    .flatten()
}

/// The one-roll table `name` (`crt`, `attrition`, `frontier-fire` …).
pub fn one_roll_table(name: &str) -> Option<&'static OneRollTable> {
    one_roll_tables().find(|t| t.name == name)
}
