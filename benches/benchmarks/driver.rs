//! The parallel driver end to end: seeded blocks on a rayon pool of 1 and 2 threads,
//! for reading the scaling ratio — one long run, and a plan of 32 one-block runs (the
//! engine schedules every (run, block) of the plan, so many small runs scale like one
//! big one).

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab::engine::driver;
use battlelab::sim::{thread_pool, RunControl, BLOCK_TRIALS};
use battlelab::systems::field::FieldStudy;
use battlelab_core::systems::field::battle::{simulate_resolutions, FieldCombat, FieldRules};
use battlelab_core::systems::field::transitions::simulate_battles;

/// A field analysis of 32 runs (4 odds × 8 DRMs), simulated only.
fn plan_of_32_runs() -> FieldStudy {
    let text = r#"
system = "field"
exact = false
[side.a]
sp = 12
morale = 2
tactic = "uniform"
[side.b]
sp = 8
morale = 2
tactic = "uniform"
[sweep]
odds = ["1:1", "3:2", "2:1", "3:1"]
drm = { from = -3, to = 4 }
"#;
    FieldStudy::parse(std::path::Path::new("bench.toml"), text).unwrap()
}

fn driver(c: &mut Criterion) {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let prepared = battlelab_core::scenarios::field_battle().prepare().unwrap();
    let control = RunControl::default();
    let resolutions: u64 = 1 << 24;
    let battles: u64 = 1 << 20;
    let mut group = c.benchmark_group("driver");
    group.sample_size(10);
    let plan = plan_of_32_runs();
    assert_eq!(plan.runs.len(), 32);
    group.throughput(Throughput::Elements(resolutions));
    group.bench_function("bare xoshiro next_u64", |b| {
        let mut dice = DiceStream::for_block(1, 0);
        b.iter(|| black_box(super::bare_xoshiro(&mut dice, resolutions)))
    });
    for threads in [1, 2] {
        let pool = thread_pool(threads).unwrap();
        group.throughput(Throughput::Elements(32 * BLOCK_TRIALS));
        group.bench_function(
            format!("plan of 32 one-block runs, {threads} thread(s)"),
            |b| {
                b.iter(|| {
                    pool.install(|| {
                        black_box(driver::run(&plan, BLOCK_TRIALS, 1, &control).unwrap())
                    })
                })
            },
        );
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
