//! The single-d6 tables of the strategic game (attrition, forced march, naval …): one
//! roll against a bare xoshiro256++ loop in the same group.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab::rules::d6table::{roll_many, CompiledD6Table, D6Table};

use super::{bare_xoshiro, BATCH};

fn strategic(c: &mut Criterion) {
    let mut group = c.benchmark_group("d6 tables");
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("bare xoshiro256++ next_u64", |b| {
        b.iter(|| black_box(bare_xoshiro(&mut dice, BATCH)))
    });
    for (name, column, drm) in [
        ("attrition", 2, 1),
        ("march", 1, 0),
        ("naval", 1, -1),
        ("pursuit", 0, -1),
    ] {
        let table = CompiledD6Table::new(D6Table::printed(name).unwrap()).unwrap();
        let faces = *table.faces(column, drm);
        let mut dice = DiceStream::for_block(1, 0);
        group.bench_function(format!("{name} roll"), |b| {
            b.iter(|| {
                let mut histogram = [0u64; 16];
                roll_many(black_box(&faces), &mut dice, BATCH, &mut histogram);
                black_box(histogram)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, strategic);
