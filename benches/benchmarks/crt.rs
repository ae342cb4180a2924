//! One CRT resolution (2d6 + DRM → odds column → result pair, histogrammed) against a
//! bare xoshiro256++ loop.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab_core::systems::field::battle::{resolve_many, FieldCombat, FieldRules};

use super::{bare_xoshiro, BATCH};

fn crt(c: &mut Criterion) {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let faces: [u8; 36] = *field.faces(1, 1);
    let mut group = c.benchmark_group("crt");
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("bare xoshiro256++ next_u64", |b| {
        b.iter(|| black_box(bare_xoshiro(&mut dice, BATCH)))
    });
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("resolution (3:2, DRM +1)", |b| {
        b.iter(|| {
            let mut histogram = [0u64; 11];
            resolve_many(black_box(&faces), &mut dice, BATCH, &mut histogram);
            black_box(histogram)
        })
    });
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("resolution, one next_u64 each", |b| {
        b.iter(|| {
            let mut histogram = [0u64; 11];
            for _ in 0..BATCH {
                histogram[field.resolve_face(1, black_box(1), dice.below(36))] += 1;
            }
            black_box(histogram)
        })
    });
    group.finish();
}

criterion_group!(benches, crt);
