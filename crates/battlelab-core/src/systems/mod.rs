//! The rules systems, one folder each: its rules (the printed tables and their kernels,
//! exact enumerations and fast forms), its analysis keys (parsed and validated once into
//! plain data), its [`crate::engine::System`] implementation — the plan of runs, the
//! kernel per block, exact results, outcomes and distributions — and the battles its
//! benches time.
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
