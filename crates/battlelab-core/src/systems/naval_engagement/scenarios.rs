//! The naval engagement the benches time, shared with the `dice_count` and `profile` examples and
//! the tests that count the dice a battle draws (re-exported by
//! [`crate::scenarios`]). Not part of the analysis API.

use crate::systems::d6_tables::lookup::D6Table;
use crate::systems::naval_engagement::engagement::{self, Fleet, NavalCombat};

/// The printed naval table and an engagement of 6 against 4 NSP, both pursuing.
pub fn naval() -> (NavalCombat, engagement::Engagement) {
    let combat = NavalCombat::new(D6Table::naval()).expect("the printed table is valid");
    let fleet = |nsp| Fleet {
        name: String::new(),
        nsp,
        morale: 2,
        leader: 1,
        drm: 0,
        pursues: true,
    };
    let engagement = engagement::Engagement {
        a: fleet(6),
        b: fleet(4),
        coastal: false,
        round_limit: 20,
    };
    (combat, engagement)
}
