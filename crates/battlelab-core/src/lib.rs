//! # battlelab-core
//!
//! What battlelab computes, without how it is shown: seeded dice streams ([`dice`]),
//! exact arithmetic ([`exact`], [`stats`]), the rules kernels over validated plain data
//! ([`rules`]), the analysis-file boundary ([`analysis`], [`header`], [`toml_input`],
//! [`limits`]), the engine every system plugs into ([`engine`], [`sim`], [`interrupt`]),
//! and one roll of any table a system declares ([`one_roll`]).
//!
//! Why a crate of its own: it depends on neither Polars, plotters nor clap, so "kernels
//! never see Polars" is a compiler fact, its tests build in seconds, and another front end
//! (a browser, Python) can reuse it. The `battlelab` crate adds the command line and the
//! reports on top.

pub mod analysis;
pub mod comparison;
pub mod dice;
pub mod engine;
pub mod equilibrium;
pub mod exact;
pub mod files;
pub mod header;
pub mod interrupt;
pub mod keys;
pub mod levers;
pub mod limits;
pub mod markdown;
pub mod matrix_game;
pub mod one_roll;
pub mod pricing;
pub mod rules;
#[doc(hidden)]
pub mod scenarios;
pub mod sim;
pub mod stats;
pub mod systems;
pub mod toml_input;
