//! The single-d6 tables of the strategic game (attrition, forced march, naval …): one
//! roll against a bare xoshiro256++ loop in the same group.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab_core::scenarios;
use battlelab_core::systems::d6_tables::lookup::{roll_many, CompiledD6Table, D6Table};
use battlelab_core::systems::naval_engagement::engagement::EngagementHistogram;
use battlelab_core::systems::setup::map::{CoalitionCounts, CoalitionMap, CompiledMap};

use super::{bare_xoshiro, print_lane_words, print_words, BATCH};

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

    let (naval, engagement) = scenarios::naval();
    let naval = naval.kernel(&engagement);
    print_words("naval engagement 6 v 4", |d| {
        black_box(naval.engage(d));
    });
    let mut h = EngagementHistogram::new(&engagement);
    // The words `record_many` reports: the lanes' keys, and a word a lane every sweep until
    // the block's last lane is done.
    print_lane_words("naval engagements 6 v 4, 32 at once", |d, n| {
        naval.record_many(d, n, &mut h)
    });
    let mut group = c.benchmark_group("naval engagement");
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("bare xoshiro256++ next_u64", |b| {
        b.iter(|| black_box(bare_xoshiro(&mut dice, BATCH)))
    });
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("engagement (6 vs 4 NSP, both pursue)", |b| {
        b.iter(|| {
            let mut rounds = 0u64;
            for _ in 0..BATCH {
                rounds += u64::from(black_box(&naval).engage(&mut dice).rounds);
            }
            black_box(rounds)
        })
    });
    let mut dice = DiceStream::for_block(1, 0);
    let mut h = EngagementHistogram::new(&engagement);
    group.bench_function("engagement, counted (one at a time)", |b| {
        b.iter(|| {
            for _ in 0..BATCH {
                h.record(&black_box(&naval).engage(&mut dice));
            }
        })
    });
    black_box(&h);
    let mut dice = DiceStream::for_block(1, 0);
    let mut h = EngagementHistogram::new(&engagement);
    group.bench_function("engagements, counted (32 at once, as run)", |b| {
        b.iter(|| black_box(&naval).record_many(&mut dice, BATCH, &mut h))
    });
    black_box(&h);
    group.finish();

    let states = scenarios::setup_map();
    let map = CompiledMap::new(&states);
    let mut totals = [[0u32; 7]; 3];
    print_words("setup, 13-state map", |d| map.roll_totals(d, &mut totals));
    let mut group = c.benchmark_group("setup map");
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("bare xoshiro256++ next_u64", |b| {
        b.iter(|| black_box(bare_xoshiro(&mut dice, BATCH)))
    });
    // What a setup study's run does: one coalition's seven totals counted, its maps rolled
    // in 32 lanes on their own streams (the words `count` reports: the lanes' keys and the
    // maps' words) and counted by their members' faces, which the run's `finish` folds into
    // the totals once a run (the next line times a whole run, fold included).
    let one = CoalitionMap::new(&states, 0);
    let offsets = [0, 400, 800, 1200, 1600, 2000, 2400];
    let mut counts = CoalitionCounts::new(2800);
    print_lane_words("setup, one coalition, 32 at once", |d, n| {
        one.count(d, n, &offsets, &mut counts)
    });
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("one coalition counted, as run (2 majors, 3 minors)", |b| {
        let mut counts = CoalitionCounts::new(2800);
        b.iter(|| {
            black_box(&one).count(&mut dice, BATCH, &offsets, &mut counts);
            black_box(counts.totals[0])
        })
    });
    // A whole run of 2^20 maps on one thread (16 blocks), the fold included.
    let mut dice = DiceStream::for_block(1, 0);
    group.throughput(Throughput::Elements(16 * BATCH));
    group.bench_function(
        "one coalition, a run of 2^20 maps on one thread, fold included",
        |b| {
            b.iter(|| {
                let mut counts = CoalitionCounts::new(2800);
                for _ in 0..16 {
                    black_box(&one).count(&mut dice, BATCH, &offsets, &mut counts);
                }
                black_box(&one).fold(&offsets, &mut counts);
                black_box(counts.totals[0])
            })
        },
    );
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("whole map (6 majors, 7 minors, 3 coalitions)", |b| {
        b.iter(|| {
            let mut totals = [[0u32; 7]; 3];
            let mut sum = 0u64;
            for _ in 0..BATCH {
                black_box(&map).roll_totals(&mut dice, &mut totals);
                sum += u64::from(totals[0][0]);
            }
            black_box(sum)
        })
    });
    group.finish();
}

criterion_group!(benches, strategic);
