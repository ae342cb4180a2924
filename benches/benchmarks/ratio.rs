//! Ratio battles (docs/systems/ratio.md): a five-combat line without reserves — one 64-bit
//! word per battle, every combat a table lookup on its combined dice — beside the bare
//! xoshiro loop; then lines with two reserves under each policy, `BATCH` battles an
//! iteration through `simulate_block` (what runs call: the bit-sliced sweeps, 256 battles
//! to a register, for every policy of these lines; for a line whose decisions read the
//! casualty points so far, `optimal` for the chance of winning, the reserve table's block
//! kernel, or its signature block for a line of at most `MAX_SIGNATURE_BINS` signatures, in
//! 32 lanes on their own streams, all at once where the CPU has AVX2), the bit-sliced
//! lines' dice floor, a whole run, and exact enumeration. Words a battle: the bit-sliced
//! lines' as `simulate_block` reports them (the lanes' keys and the planes), the others'
//! from `fight` one at a time (the same words a lane's battle draws; a block of `BATCH`
//! battles also draws 32 lane keys).

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{criterion_group, BenchmarkGroup, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab::sim::{thread_pool, RunControl};
use battlelab_core::systems::ratio::battle::{
    simulate_battles, Objective, RatioCombat, RatioHistogram, ReservePolicy,
};

use super::{bare_xoshiro, print_lane_words, print_words, BATCH};

use battlelab_core::scenarios;
use battlelab_core::scenarios::ratio_line as line;

/// Battles of the whole-run bench: 16 blocks, as a run of 10^6 has.
const RUN: u64 = 1 << 20;

/// `BATCH` battles an iteration through `simulate_block`, as a run's blocks do: into one
/// histogram of the run (signature bins where the line has them), which the run folds once
/// at its end (the whole-run bench times that).
fn bench_simulate_block(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    combat: &RatioCombat,
) {
    let mut dice = DiceStream::for_block(1, 0);
    let mut histogram = RatioHistogram::for_signatures(combat);
    group.bench_function(name, |b| {
        b.iter(|| {
            combat.simulate_block(black_box(&mut dice), BATCH, &mut histogram);
            black_box(&histogram);
        })
    });
}

fn ratio(c: &mut Criterion) {
    let five = RatioCombat::new(line("1v1,1v1,1v1,1v1,2v1", 0, 1, ReservePolicy::None)).unwrap();
    let mut group = c.benchmark_group("ratio");
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("bare xoshiro256++ next_u64", |b| {
        b.iter(|| black_box(bare_xoshiro(&mut dice, BATCH)))
    });
    bench_simulate_block(
        &mut group,
        "5-combat line, no reserves (signature kernel + joint histogram, as run)",
        &five,
    );
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function(
        "5-combat line, no reserves (fight + full outcome histogram)",
        |b| {
            let mut histogram = RatioHistogram::new(&five);
            b.iter(|| {
                for _ in 0..BATCH {
                    histogram.record(&five.fight(black_box(&mut dice)));
                }
                black_box(histogram.result[0])
            })
        },
    );
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("5-combat line, no reserves (kernel, result only)", |b| {
        b.iter(|| {
            let mut results = [0u64; 18];
            for _ in 0..BATCH {
                results[five.fight(black_box(&mut dice)).result] += 1;
            }
            black_box(results)
        })
    });
    for policy in ReservePolicy::ALL {
        let combat = RatioCombat::new(line("1v1,1v1,1v1,1v1,2v1", 2, 0, policy)).unwrap();
        let name = format!("ratio 5-combat line, 2 reserves, {}", policy.name());
        if combat.bit_sliced() {
            // The words `simulate_block` draws, as runs call it: the lanes' keys and the
            // planes of every battle's 13 faces.
            let mut h = RatioHistogram::new(&combat);
            print_lane_words(&format!("{name}, bit-sliced, as run"), |d, n| {
                combat.sliced_block(d, n, &mut h).unwrap()
            });
        } else {
            print_words(&name, |d| {
                black_box(combat.fight(d));
            });
        }
        bench_simulate_block(
            &mut group,
            &format!(
                "5-combat line, 2 reserves, {} (simulate_block)",
                policy.name()
            ),
            &combat,
        );
    }
    // The floor of the bit-sliced lines: the bench line's 13 faces a battle (11 line dice
    // and one a reserve) as bit planes, and no rule.
    let faces = RatioCombat::new(line("1v1,1v1,1v1,1v1,2v1", 2, 0, ReservePolicy::Rescue))
        .unwrap()
        .sliced_faces()
        .expect("the bench line is bit-sliced");
    print_lane_words(
        "ratio bit-sliced dice floor, 13 d6 as bit planes",
        |d, n| scenarios::sliced_dice_floor(d, n, faces),
    );
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function(
        format!("{faces} d6 a battle as bit planes, no rules (bit-sliced dice floor)"),
        |b| b.iter(|| black_box(scenarios::sliced_dice_floor(&mut dice, BATCH, faces))),
    );
    // The signature block of a line with a reserve table that is not bit-sliced:
    // `optimal` for the chance of winning, whose decisions read the casualty points so far
    // (a four-combat line with one reserve: its table and 12,005 signatures fit; with two
    // reserves its table would not).
    let mut win = line("1v1,1v1,1v1,2v1", 1, 0, ReservePolicy::Optimal);
    win.objective = Objective::WinProbability;
    let four = RatioCombat::new(win).unwrap();
    assert!(four.has_signature() && !four.bit_sliced());
    print_words("ratio 4-combat line, 1 reserve, optimal (win)", |d| {
        black_box(four.fight(d));
    });
    bench_simulate_block(
        &mut group,
        "4-combat line, 1 reserve, optimal for the win (simulate_block: signature block)",
        &four,
    );
    // A whole run, as `run` does it on one thread: its blocks, the merges of the parallel
    // fold's histograms and the fold of any signature bins at the end.
    let combat =
        RatioCombat::new(line("1v1,1v1,1v1,1v1,2v1", 2, 0, ReservePolicy::Rescue)).unwrap();
    let one_thread = thread_pool(1).unwrap();
    group.throughput(Throughput::Elements(RUN));
    group.bench_function(
        "5-combat line, 2 reserves, rescue (a run of 2^20 battles on one thread, fold included)",
        |b| {
            b.iter(|| {
                one_thread.install(|| {
                    let h = simulate_battles(&combat, 7, RUN, &RunControl::default()).unwrap();
                    black_box(h.result[0])
                })
            })
        },
    );
    group.finish();

    let mut group = c.benchmark_group("ratio exact");
    group.throughput(Throughput::Elements(1));
    let combat =
        RatioCombat::new(line("1v1,1v1,1v1,1v1,2v1", 2, 0, ReservePolicy::Rescue)).unwrap();
    group.bench_function("enumerate a 5-combat line with 2 reserves (rescue)", |b| {
        b.iter(|| black_box(combat.distribution(black_box(50_000_000))))
    });
    group.bench_function("solve optimal for a 5-combat line with 2 reserves", |b| {
        b.iter(|| {
            black_box(RatioCombat::new(line(
                "1v1,1v1,1v1,1v1,2v1",
                2,
                0,
                ReservePolicy::Optimal,
            )))
        })
    });
    group.finish();
}

criterion_group!(benches, ratio);
