//! Miniatures melee (docs/systems/melee.md): whole engagements of a 20-model unit against a
//! 20-model unit (about 2.6 phases each, 10 attack dice a side per phase; as run, 32 at
//! once: `systems/melee/engagement/lockstep.rs`), and the same with a flanker and a rear charge (as
//! run, 32 at once too), beside the bare xoshiro loop; one engagement at a time; one phase
//! alone; the exact first phase (binomial counts in big integers) and the exact
//! engagement chain.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab_core::scenarios;

use super::{bare_xoshiro, print_lane_words, print_words, BATCH};

fn melee(c: &mut Criterion) {
    let duel = scenarios::melee_duel();
    let surrounded = scenarios::melee_surrounded();
    print_words("melee engagement 20 v 20, one at a time", |d| {
        black_box(duel.engage(d));
    });
    print_words(
        "melee engagement 20 v 20 + flank + rear, one at a time",
        |d| {
            black_box(surrounded.engage(d));
        },
    );
    // The words `engagement_block` reports, as runs call it: the lanes' keys, and each
    // lane's words (the duel's: three a lane every sweep until the block's last lane is
    // done; with several side-B units: each lane's own engagements' words).
    for (name, combat) in [("20 v 20", &duel), ("20 v 20 + flank + rear", &surrounded)] {
        let mut h = combat.empty_engagement_histogram();
        print_lane_words(&format!("melee engagements {name} as run"), |d, n| {
            combat.engagement_block(d, n, &mut h)
        });
    }

    let mut group = c.benchmark_group("melee");
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("bare xoshiro256++ next_u64", |b| {
        b.iter(|| black_box(bare_xoshiro(&mut dice, BATCH)))
    });
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function(
        "engagement 20 v 20 (engagements/s, histogram as run)",
        |b| {
            let mut histogram = duel.empty_engagement_histogram();
            b.iter(|| {
                duel.engagement_block(black_box(&mut dice), BATCH, &mut histogram);
                black_box(histogram.ends[0])
            })
        },
    );
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function(
        "engagement 20 v 20, one at a time (engagements/s, counted)",
        |b| {
            let mut histogram = duel.empty_engagement_histogram();
            b.iter(|| {
                for _ in 0..BATCH {
                    histogram.record(&duel.engage(black_box(&mut dice)));
                }
                black_box(histogram.ends[0])
            })
        },
    );
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("engagement 20 v 20 + flank + rear (engagements/s)", |b| {
        let mut histogram = surrounded.empty_engagement_histogram();
        b.iter(|| {
            surrounded.engagement_block(black_box(&mut dice), BATCH, &mut histogram);
            black_box(histogram.ends[0])
        })
    });
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("one phase 20 v 20 (phases/s, full phase histogram)", |b| {
        let mut histogram = duel.empty_phase_histogram();
        b.iter(|| {
            duel.phase_block(black_box(&mut dice), BATCH, &mut histogram);
            black_box(histogram.result[0])
        })
    });
    group.finish();

    let mut exact = c.benchmark_group("melee exact");
    // One enumeration per iteration, as in the other exact groups.
    exact.throughput(Throughput::Elements(1));
    exact.sample_size(10);
    exact.bench_function("first phase 20 v 20, exact fractions", |b| {
        b.iter(|| black_box(duel.phase_odds(&duel.fresh_state())))
    });
    exact.bench_function("whole engagement 20 v 20, exact chain (f64)", |b| {
        b.iter(|| black_box(duel.engagement_odds()))
    });
    exact.finish();
}

criterion_group!(benches, melee);
