//! Whole field battles (up to six rounds of tactics, CRT and CLC) against the bare loop —
//! from the battle's compiled transition table (what runs fight) and round by round (the
//! reference kernel, the fallback for battles too large for a table) — and the exact
//! enumeration of one battle.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab::rules::crt::{FieldCombat, FieldRules};
use battlelab::rules::field_table::{BattleTable, MAX_TABLE_ENTRIES};
use battlelab_core::scenarios;

use super::{bare_xoshiro, print_words, BATCH};

fn field(c: &mut Criterion) {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let prepared = scenarios::field_battle().prepare().unwrap();
    let table = BattleTable::compile(&field, &prepared, MAX_TABLE_ENTRIES).unwrap();
    print_words("field battle 12 v 8", |d| {
        black_box(table.fight(d));
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
