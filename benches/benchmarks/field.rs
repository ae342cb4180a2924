//! Whole field battles (up to six rounds of tactics, CRT and CLC) against the bare loop —
//! from the battle's compiled transition table, one at a time and 32 at once (what runs
//! fight), and round by round (the reference kernel, the fallback for battles too large for
//! a table) — and the exact enumeration of one battle.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab_core::scenarios;
use battlelab_core::systems::field::battle::{BattleHistogram, FieldCombat, FieldRules};
use battlelab_core::systems::field::transitions::{
    FieldKernel, TransitionTable, MAX_TABLE_ENTRIES,
};

use super::{bare_xoshiro, print_lane_words, print_words, BATCH};

fn field(c: &mut Criterion) {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let prepared = scenarios::field_battle().prepare().unwrap();
    let table = TransitionTable::compile(&field, &prepared, MAX_TABLE_ENTRIES).unwrap();
    print_words("field battle 12 v 8", |d| {
        black_box(table.fight(d));
    });
    // As runs fight them, 32 lanes at once on their own streams: the words `fight_block`
    // reports (the lanes' keys, and a word a lane every sweep until the last lane is done).
    let mut h = BattleHistogram::new(&prepared, field.rules().round_limit);
    print_lane_words("field battles 12 v 8, 32 at once", |d, n| {
        FieldKernel::Table(&table).fight_block(d, n, &mut h)
    });
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
                rounds += u64::from(black_box(&table).fight(&mut dice).rounds);
            }
            black_box(rounds)
        })
    });
    let mut dice = DiceStream::for_block(1, 0);
    let mut h = BattleHistogram::new(&prepared, field.rules().round_limit);
    group.bench_function("battles, counted (one at a time)", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                h.record(&black_box(&table).fight(&mut dice));
            }
        })
    });
    black_box(&h);
    let mut dice = DiceStream::for_block(1, 0);
    let mut h = BattleHistogram::new(&prepared, field.rules().round_limit);
    group.bench_function("battles, counted (32 at once, as run)", |b| {
        b.iter(|| black_box(FieldKernel::Table(&table)).fight_block(&mut dice, BATCH, &mut h))
    });
    black_box(&h);
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("battle round by round (12 vs 8 SP, mixed tactics)", |b| {
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
