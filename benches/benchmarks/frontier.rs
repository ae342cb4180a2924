//! Frontier quick battles (rule 19, docs/systems/frontier.md): a whole battle of six stacks
//! a side (three or four rounds of fire, movement, melee and recovery) beside the bare
//! xoshiro loop.

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab_core::scenarios;

use super::{bare_xoshiro, print_lane_words, BATCH};

fn frontier(c: &mut Criterion) {
    let combat = scenarios::frontier();
    let mut histogram = combat.empty_histogram();
    // The words `battle_block` reports, as runs call it: the lanes' keys, and each lane's
    // words (a lane's battle starting on the faces its last one left).
    print_lane_words("frontier battle, 6 stacks a side, as run", |d, n| {
        combat.battle_block(d, n, &mut histogram)
    });
    println!(
        "words/battle {:.3}: 96 d6 cut twelve to a word",
        scenarios::FRONTIER_DICE as f64 / 12.0
    );
    print_lane_words(
        "frontier bit-sliced dice floor, every event's d6 as bit planes",
        |d, n| scenarios::sliced_dice_floor(d, n, combat.most_faces() as u64),
    );
    let mut group = c.benchmark_group("frontier");
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("bare xoshiro256++ next_u64", |b| {
        b.iter(|| black_box(bare_xoshiro(&mut dice, BATCH)))
    });
    // The dice floor: a battle's 96 faces (96.4 on average) cut as `PackedDice` cuts them,
    // and no rules.
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("96 d6 cut twelve to a word, no rules (dice floor)", |b| {
        b.iter(|| black_box(scenarios::frontier_dice_floor(&mut dice, BATCH)))
    });
    // The dice floor of the bit-sliced kernel the battle runs on: every battle draws a face
    // at every event that could happen to it, 256 battles to a plane of bits.
    let faces = combat.most_faces() as u64;
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function(
        format!("{faces} d6 a battle as bit planes, 256 battles a plane, no rules (bit-sliced dice floor)"),
        |b| b.iter(|| black_box(scenarios::sliced_dice_floor(&mut dice, BATCH, faces))),
    );
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function(
        "battle, 6 stacks a side (battles/s, histogram as run)",
        |b| {
            let mut histogram = combat.empty_histogram();
            b.iter(|| {
                black_box(combat.battle_block(black_box(&mut dice), BATCH, &mut histogram));
                black_box(histogram.result[0])
            })
        },
    );
    group.finish();
}

criterion_group!(benches, frontier);
