//! Frontier quick battles (seed 002 rule 19): a whole battle of six stacks a side (three or four
//! rounds of fire, movement, melee and recovery) beside the bare xoshiro loop.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab::rules::frontier::{Terrain, UnitType};
use battlelab::rules::frontier_battle::{
    CrtLoss, FrontierBattle, FrontierCombat, MeleeCrt, MovePolicy, Side, Stack, Unit, VictoryRule,
};

use super::{bare_xoshiro, BATCH};

/// Six stacks a side in wilderness: warriors against regulars with militia, leaders on
/// two stacks each, an illustrative CRT (not the game's).
pub fn six_stacks() -> FrontierBattle {
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

fn frontier(c: &mut Criterion) {
    let combat = FrontierCombat::new(six_stacks()).unwrap();
    let mut group = c.benchmark_group("frontier");
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("bare xoshiro256++ next_u64", |b| {
        b.iter(|| black_box(bare_xoshiro(&mut dice, BATCH)))
    });
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function(
        "battle, 6 stacks a side (battles/s, histogram as run)",
        |b| {
            let mut histogram = combat.empty_histogram();
            b.iter(|| {
                combat.battle_block(black_box(&mut dice), BATCH, &mut histogram);
                black_box(histogram.result[0])
            })
        },
    );
    group.finish();
}

criterion_group!(benches, frontier);
