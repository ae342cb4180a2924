//! The setup map the benches time, shared with the `dice_count` and `profile` examples and
//! the tests that count the dice a battle draws (re-exported by
//! [`crate::scenarios`]). Not part of the analysis API.

use crate::systems::setup::map::{rows, MapState, StateKind};

/// Thirteen states: six majors and seven minors, all with ports, in three coalitions.
pub fn setup_map() -> Vec<MapState> {
    (0..13)
        .map(|i| {
            let kind = if i < 6 {
                StateKind::Major
            } else {
                StateKind::Minor
            };
            MapState {
                name: i.to_string(),
                kind,
                port: true,
                coalition: i % 3,
                rows: rows(kind, true),
            }
        })
        .collect()
}
