//! The frontier battle the benches time, shared with the `dice_count` and `profile` examples and
//! the tests that count the dice a battle draws (re-exported by
//! [`crate::scenarios`]). Not part of the analysis API.

use crate::dice::DiceStream;
use crate::systems::frontier::battle::{
    CrtLoss, FrontierBattle, FrontierCombat, MeleeCrt, MovePolicy, Side, Stack, Unit, VictoryRule,
};
use crate::systems::frontier::rolls::{Terrain, UnitType};

/// Six stacks a side in wilderness: warriors against regulars with militia, leaders on
/// two stacks each, an illustrative CRT (not the game's).
pub fn frontier_six_stacks() -> FrontierBattle {
    let unit = |kind, fire_cf, melee_cf| Unit {
        kind,
        fire_cf,
        melee_cf,
    };
    let lane = |units: Vec<Unit>, leader| vec![Stack { units, leader }];
    let warriors = (0..6)
        .map(|i| {
            lane(
                vec![unit(UnitType::Warrior, 3, 2); 2],
                u32::from(i % 3 == 0) * 2,
            )
        })
        .collect();
    let regulars = (0..6)
        .map(|i| {
            lane(
                vec![unit(UnitType::Regular, 2, 3), unit(UnitType::Militia, 2, 1)],
                u32::from(i % 3 == 1),
            )
        })
        .collect();
    let r = |a: CrtLoss, d: CrtLoss| (a, d);
    use CrtLoss::{Eliminate as E, None as N, Rout as R};
    let rows = vec![
        vec![r(E(1), N), r(R, N), r(E(1), E(1))],
        vec![r(R, N), r(E(1), E(1)), r(N, E(1))],
        vec![r(E(1), E(1)), r(N, E(1)), r(N, R)],
        vec![r(N, E(1)), r(N, R), r(N, E(2))],
        vec![r(N, R), r(N, E(2)), r(N, E(2))],
        vec![r(N, E(2)), r(N, E(2)), r(N, R)],
    ];
    FrontierBattle {
        terrain: Terrain::Wilderness,
        severe_weather: false,
        initiative: 0,
        surprise: None,
        sides: [
            Side {
                level: 3,
                primary_leader: 3,
                lanes: warriors,
                move_policy: MovePolicy::Aggressive,
                avoid_melee: false,
            },
            Side {
                level: 2,
                primary_leader: 2,
                lanes: regulars,
                move_policy: MovePolicy::Aggressive,
                avoid_melee: true,
            },
        ],
        crt: MeleeCrt {
            columns: vec![(1, 2), (1, 1), (2, 1)],
            first_roll: 1,
            cells: rows,
        },
        leader_loss: (1, 6),
        extra_round: true,
        victory: VictoryRule::FewerLost,
    }
}

/// The compiled six-stack battle.
pub fn frontier() -> FrontierCombat {
    FrontierCombat::new(frontier_six_stacks()).expect("the bench battle is valid")
}

/// d6 a frontier bench battle rolls, rounded down (96.4 on average: `dice_count`).
pub const FRONTIER_DICE: u64 = 96;

/// The dice floor of the frontier bench battle: `battles` × [`FRONTIER_DICE`] faces cut
/// from `dice` as the kernel's [`PackedDice`](crate::systems::frontier::battle::PackedDice)
/// cuts them (successive `take(6)`, twelve a word), folded into a value so that none is
/// dropped, and no rule applied. The bench and the `profile` example time it beside the
/// battle: no kernel that cuts its dice this way costs less.
pub fn frontier_dice_floor(dice: &mut DiceStream, battles: u64) -> u64 {
    use crate::systems::frontier::battle::{BattleDice, PackedDice};
    let mut packed = PackedDice::new(dice);
    let mut acc = 0u64;
    for _ in 0..battles * FRONTIER_DICE {
        acc = acc.rotate_left(3) ^ u64::from(packed.face());
    }
    acc
}
