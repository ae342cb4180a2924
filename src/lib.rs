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
//! Layers, from the bottom: [`dice`] (seeded streams), [`rules`] (pure kernels over
//! validated tables), [`exact`] and [`stats`] (fractions, intervals), [`sim`] (the
//! parallel driver), [`analysis`] (the TOML boundary), [`frame`], [`chart`], [`report`]
//! and [`table`] (outputs). `ARCHITECTURE.md` states the invariants.

pub mod analysis;
pub mod chart;
pub mod dice;
pub mod engine;
pub mod exact;
pub mod frame;
pub mod frontier_study;
pub mod interrupt;
pub mod limits;
pub mod melee_study;
pub mod naval_study;
pub mod output;
pub mod pipeline;
pub mod progress;
pub mod ratio_study;
pub mod report;
pub mod rules;
pub mod setup_study;
pub mod sim;
pub mod stats;
pub mod study;
pub mod systems;
pub mod table;
pub mod toml_input;
