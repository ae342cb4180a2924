//! The field battle the benches time, shared with the `dice_count` and `profile` examples and
//! the tests that count the dice a battle draws (re-exported by
//! [`crate::scenarios`]). Not part of the analysis API.

use crate::systems::field::battle::{FieldBattle, Force, TacticMix};

/// A field battle of 12 against 8 SP, morale 2 and leader 1 on both sides, mixed
/// tactics (A: charge 2, envelop 1, bombard 1; B: skirmish 2, square 1, refuse 1).
pub fn field_battle() -> FieldBattle {
    let force = |sp, weights| Force {
        name: String::new(),
        sp,
        morale: 2,
        leader: 1,
        drm: 0,
        tactics: TacticMix::new(weights)
            .expect("the bench mixes are valid")
            .into(),
    };
    FieldBattle {
        a: force(12, [2, 1, 0, 1, 0, 0, 0]),
        b: force(8, [0, 0, 2, 0, 1, 1, 0]),
        terrain_drm: 0,
    }
}
