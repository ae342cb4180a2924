//! The rules systems, one module each: its analysis keys (parsed and validated once into
//! plain data) and its [`crate::engine::System`] implementation — the plan of runs, the
//! kernel per block, exact results, outcomes and distributions.
//!
//! The reports built on them (frames beyond the shared ones, charts, rulebook tables) are
//! in the `battlelab` crate's `systems` modules of the same names.

pub mod field;
pub mod frontier;
pub mod melee;
pub mod naval;
pub mod ratio;
pub mod setup;
pub mod tables;
