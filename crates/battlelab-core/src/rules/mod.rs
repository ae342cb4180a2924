//! One module per rules system, each a pure kernel over plain, validated data.

pub mod crt;
pub mod d6table;
pub mod field_game;
pub mod field_table;
pub mod frontier;
pub mod frontier_battle;
pub mod matrix_game;
pub mod melee;
pub mod naval;
pub mod ratio;
pub mod setup;
