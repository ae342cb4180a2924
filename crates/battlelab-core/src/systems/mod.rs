//! The rules systems, one folder each: its rules (the printed tables and their kernels,
//! exact enumerations and fast forms), its analysis keys (parsed and validated once into
//! plain data), its [`crate::engine::System`] implementation — the plan of runs, the
//! kernel per block, exact results, outcomes and distributions —, the battles its
//! benches time, and the one-roll tables it declares (`battlelab table …`: its `one_roll`
//! module; [`one_roll_tables`] lists them all).
//!
//! The reports built on them (frames beyond the shared ones, charts, rulebook tables) are
//! in the `battlelab` crate's `systems` modules of the same names.

pub mod d6_tables;
pub mod field;
pub mod frontier;
pub mod melee;
pub mod naval_engagement;
pub mod ratio;
pub mod setup;

use crate::one_roll::OneRollTable;

/// Every one-roll table every system declares, in the order `battlelab table --help`
/// lists them: the subcommands of `table` are built from this list.
pub fn one_roll_tables() -> impl Iterator<Item = &'static OneRollTable> {
    [
        field::one_roll::TABLES,
        d6_tables::one_roll::TABLES,
        setup::one_roll::TABLES,
        ratio::one_roll::TABLES,
        melee::one_roll::TABLES,
        frontier::one_roll::TABLES,
    ]
    .into_iter()
    .flatten()
}

/// The one-roll table `name` (`crt`, `attrition`, `frontier-fire` …).
pub fn one_roll_table(name: &str) -> Option<&'static OneRollTable> {
    one_roll_tables().find(|t| t.name == name)
}
