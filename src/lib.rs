//! # battlelab
//!
//! Seeded Monte Carlo and exact odds for wargame combat rules. A designer hands it a
//! rules system, a scenario and a few "what if" changes; it answers "what happens, how
//! often?" exactly where the dice are few and by millions of seeded battles where they
//! are not, and writes Polars frames, Parquet/CSV, charts and rulebook tables.
//!
//! Quick start (from the repository root):
//!
//! ```text
//! cargo run --release -- table crt --odds 3:2 --drm +1          # one CRT roll, exact
//! cargo run --release -- run analyses/field_combat.toml         # a whole swept study
//! cargo run --release -- table ratio --line "1v1,2v1" --reserve-a 1   # a ratio battle
//! ```
//!
//! This crate shows what `battlelab-core` computes: [`systems`] (the registry of rules
//! systems and each one's own report), [`report`] (the report folder: safe writing, the
//! one pipeline, frames, charts), [`table`] (the exporters of single-roll tables) and
//! [`progress`]. The core's modules are re-exported under their usual paths ([`dice`],
//! [`keys`], [`engine`], [`analysis`], …). `ARCHITECTURE.md` states the invariants.

pub mod progress;
pub mod report;
pub mod systems;
pub mod table;

// The report folder's parts, under short paths.
pub use report::{chart, frame, output, pipeline};

// The core, under the paths the reports and the command line have always used.
pub use battlelab_core::{
    analysis, dice, engine, exact, interrupt, keys, levers, limits, matrix_game, one_roll, pricing,
    sim, stats, toml_input,
};
