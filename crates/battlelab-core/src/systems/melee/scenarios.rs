//! The melee engagements the benches time, shared with the `dice_count` and `profile` examples and
//! the tests that count the dice a battle draws (re-exported by
//! [`crate::scenarios`]). Not part of the analysis API.

use crate::systems::melee::engagement::{Engagement, Facing, MeleeCombat, UnitProfile};

fn line_unit(skill: u32, power: u32) -> UnitProfile {
    UnitProfile {
        models: 20,
        frontage: 5,
        skill,
        power,
        ..UnitProfile::default()
    }
}

/// A 20-model unit against a 20-model unit.
pub fn melee_duel() -> MeleeCombat {
    MeleeCombat::new(Engagement::one_on_one(line_unit(4, 3), line_unit(3, 4)))
        .expect("the bench duel is valid")
}

/// The same with a flanker and a rear charge.
pub fn melee_surrounded() -> MeleeCombat {
    let mut surrounded = Engagement::one_on_one(line_unit(3, 3), line_unit(3, 3));
    surrounded.b.push((
        Facing::Flank,
        UnitProfile {
            models: 5,
            frontage: 5,
            attacks: 2,
            ..UnitProfile::default()
        },
    ));
    surrounded.b.push((
        Facing::Rear,
        UnitProfile {
            models: 10,
            ..UnitProfile::default()
        },
    ));
    MeleeCombat::new(surrounded).expect("the bench engagement is valid")
}
