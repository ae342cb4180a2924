//! Whole field battles (up to six rounds of tactics, CRT and CLC) against the bare loop,
//! and the exact enumeration of one battle.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab::rules::crt::{FieldBattle, FieldCombat, FieldRules, Force, TacticMix};

use super::{bare_xoshiro, BATCH};

pub fn battle() -> FieldBattle {
    let force = |sp, tactics| Force {
        name: String::new(),
        sp,
        morale: 2,
        leader: 1,
        drm: 0,
        tactics: TacticMix::into(tactics),
    };
    FieldBattle {
        a: force(12, TacticMix::new([2, 1, 0, 1, 0, 0, 0]).unwrap()),
        b: force(8, TacticMix::new([0, 0, 2, 0, 1, 1, 0]).unwrap()),
        terrain_drm: 0,
    }
}

fn field(c: &mut Criterion) {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let prepared = battle().prepare().unwrap();
    let mut group = c.benchmark_group("field");
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("bare xoshiro256++ next_u64", |b| {
        b.iter(|| black_box(bare_xoshiro(&mut dice, BATCH)))
    });
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("battle (12 vs 8 SP, mixed tactics)", |b| {
        b.iter(|| {
            let mut rounds = 0u64;
            for _ in 0..BATCH {
                rounds += u64::from(field.fight(black_box(&prepared), &mut dice).rounds);
            }
            black_box(rounds)
        })
    });
    group.finish();

    let mut group = c.benchmark_group("field exact");
    group.throughput(Throughput::Elements(1));
    group.bench_function("enumerate one battle (12 vs 8 SP)", |b| {
        b.iter(|| black_box(field.battle_distribution(black_box(&prepared), 1_000_000)))
    });
    group.finish();
}

criterion_group!(benches, field);
