//! The parallel driver end to end: seeded blocks on a rayon pool of 1 and 2 threads,
//! for reading the scaling ratio.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::rules::crt::{simulate_battles, simulate_resolutions, FieldCombat, FieldRules};
use battlelab::sim::{thread_pool, RunControl};

fn driver(c: &mut Criterion) {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let prepared = super::field::battle().prepare().unwrap();
    let control = RunControl::default();
    let resolutions: u64 = 1 << 24;
    let battles: u64 = 1 << 20;
    let mut group = c.benchmark_group("driver");
    group.sample_size(10);
    for threads in [1, 2] {
        let pool = thread_pool(threads).unwrap();
        group.throughput(Throughput::Elements(resolutions));
        group.bench_function(format!("resolutions, {threads} thread(s)"), |b| {
            b.iter(|| {
                pool.install(|| {
                    black_box(simulate_resolutions(&field, 0, 0, 1, resolutions, &control).unwrap())
                })
            })
        });
        group.throughput(Throughput::Elements(battles));
        group.bench_function(format!("battles, {threads} thread(s)"), |b| {
            b.iter(|| {
                pool.install(|| {
                    black_box(simulate_battles(&field, &prepared, 1, battles, &control).unwrap())
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, driver);
