//! Words and dice one whole battle of each bench scenario draws on average (the
//! dice-count columns of the kernel table in docs/performance.md).
//!
//! ```text
//! cargo run -p battlelab-core --release --features count-dice --example dice_count
//! ```
//!
//! Words (64-bit `next_u64` draws) are counted by stepping a copy of the stream, so they
//! need no feature; draws (values taken from a word: a die, or a count sampled from a
//! binomial table) need `count-dice`, which puts thread-local counters in `DiceStream`.
//! Benches never enable it.

use battlelab_core::dice::DiceStream;
use battlelab_core::scenarios::{self, words_per_battle};
use battlelab_core::systems::field::battle::{BattleHistogram, FieldCombat, FieldRules};
use battlelab_core::systems::field::transitions::{
    FieldKernel, TransitionTable, MAX_TABLE_ENTRIES,
};
use battlelab_core::systems::ratio::battle::{RatioCombat, RatioHistogram, ReservePolicy};
use battlelab_core::systems::setup::map::{CoalitionCounts, CoalitionMap, CompiledMap};

const N: u64 = 1 << 18;

/// Prints one battle's words and draws, and returns the draws (`None` without
/// `count-dice`).
fn count(name: &str, battle: impl FnMut(&mut DiceStream)) -> Option<f64> {
    #[cfg(feature = "count-dice")]
    let before = battlelab_core::dice::counting::counts();
    let words = words_per_battle(N, battle);
    #[cfg(feature = "count-dice")]
    {
        let after = battlelab_core::dice::counting::counts();
        let draws = (after.1 - before.1) as f64 / N as f64;
        println!("{name:<44} words/battle {words:>8.3}   draws/battle {draws:>8.3}");
        Some(draws)
    }
    #[cfg(not(feature = "count-dice"))]
    {
        println!(
            "{name:<44} words/battle {words:>8.3}   draws/battle (needs --features count-dice)"
        );
        None
    }
}

/// Battles a call of a kernel in lanes fights: a block, as runs fight them.
const LANES_BLOCK: u64 = 1 << 16;

/// How [`count_lanes`] reads a kernel's draws a battle.
enum LaneDraws {
    /// Vector sweeps, whose cuts `count-dice` does not see: one value a word (naval's and
    /// field's rounds, the melee duel's wound counts and break rolls).
    OnePerWord,
    /// Vector sweeps: a battle's draws by hand (setup's members' dice, one value each as
    /// `roll` takes them).
    Each(f64),
    /// Vector sweeps: a battle's draws as the one-at-a-time kernel's battles draw them
    /// (the same rules), where `count-dice` counted those (melee with several side-B
    /// units: a value a group sampled, and a break roll a side-B unit each phase).
    AsOneAtATime(Option<f64>),
    /// Sweeps that count their draws themselves (frontier's bit-sliced: the faces each
    /// battle drew, read or not), read from `count-dice`'s counters.
    Counted,
}

/// A kernel in lanes (naval's, field's, setup's and melee's), each lane on its own stream
/// split from the block's: `block` fights [`LANES_BLOCK`] battles and returns the words it
/// drew (the lanes' keys, and the lanes' words: to the block's last sweep for naval,
/// field, setup and the melee duel, to each lane's last battle for melee with several
/// side-B units); `draws` says how its draws are read.
fn count_lanes(name: &str, draws: LaneDraws, mut block: impl FnMut(&mut DiceStream) -> u64) {
    #[cfg(feature = "count-dice")]
    let before = battlelab_core::dice::counting::counts().1;
    let mut dice = DiceStream::for_block(1, 0);
    let words: u64 = (0..N / LANES_BLOCK).map(|_| block(&mut dice)).sum();
    let per_battle = words as f64 / N as f64;
    #[cfg(feature = "count-dice")]
    let counted = Some((battlelab_core::dice::counting::counts().1 - before) as f64 / N as f64);
    #[cfg(not(feature = "count-dice"))]
    let counted = None;
    let draws = match (draws, counted) {
        (LaneDraws::OnePerWord, _) => per_battle,
        (LaneDraws::Each(draws) | LaneDraws::AsOneAtATime(Some(draws)), _)
        | (LaneDraws::Counted, Some(draws)) => draws,
        (LaneDraws::AsOneAtATime(None), _) | (LaneDraws::Counted, None) => {
            println!("{name:<44} words/battle {per_battle:>8.3}   draws/battle (needs --features count-dice)");
            return;
        }
    };
    println!("{name:<44} words/battle {per_battle:>8.3}   draws/battle {draws:>8.3}");
}

fn main() {
    let frontier = scenarios::frontier();
    let mut h = frontier.empty_histogram();
    // In blocks, as runs fight them: bit-sliced, 256 battles a sweep, every battle drawing
    // a face for every event that could happen to it (`frontier_battle/sliced.rs`).
    count_lanes(
        "frontier, 6 stacks a side (as run)",
        LaneDraws::Counted,
        |d| frontier.battle_block(d, LANES_BLOCK, &mut h),
    );

    for policy in ReservePolicy::ALL {
        let combat = RatioCombat::new(scenarios::ratio_line(scenarios::RATIO_LINE, 2, 0, policy))
            .expect("valid");
        let name = format!("ratio, 5 combats, 2 reserves, {}", policy.name());
        if combat.bit_sliced() {
            // Bit-sliced: every battle draws its line dice and a face a reserve
            // (`ratio/sliced.rs`), counted by the sweeps.
            let mut h = RatioHistogram::new(&combat);
            count_lanes(&format!("{name} (as run)"), LaneDraws::Counted, |d| {
                combat
                    .sliced_block(d, LANES_BLOCK, &mut h)
                    .expect("a bit-sliced line")
            });
        } else {
            count(&name, |d| {
                std::hint::black_box(combat.fight(d));
            });
        }
    }

    let duel = scenarios::melee_duel();
    count("melee engagement 20 v 20, one at a time", |d| {
        std::hint::black_box(duel.engage(d));
    });
    let mut h = duel.empty_engagement_histogram();
    count_lanes(
        "melee 20 v 20, 32 at once (as run)",
        LaneDraws::OnePerWord,
        |d| duel.engagement_block(d, LANES_BLOCK, &mut h),
    );
    let surrounded = scenarios::melee_surrounded();
    let draws = count("melee engagement 20 v 20 + flank + rear", |d| {
        std::hint::black_box(surrounded.engage(d));
    });
    let mut h = surrounded.empty_engagement_histogram();
    count_lanes(
        "melee + flank + rear, 32 at once (as run)",
        LaneDraws::AsOneAtATime(draws),
        |d| surrounded.engagement_block(d, LANES_BLOCK, &mut h),
    );

    let states = scenarios::setup_map();
    let map = CompiledMap::new(&states);
    let mut totals = [[0u32; 7]; 3];
    count("setup, 13-state map", |d| map.roll_totals(d, &mut totals));
    let one = CoalitionMap::new(&states, 0);
    count("setup, 13-state map, one coalition", |d| {
        std::hint::black_box(one.roll(d));
    });
    let offsets = [0, 400, 800, 1200, 1600, 2000, 2400];
    let mut counts = CoalitionCounts::new(2800);
    count_lanes(
        "setup, one coalition, 32 at once (as run)",
        LaneDraws::Each(5.0),
        |d| one.count(d, LANES_BLOCK, &offsets, &mut counts),
    );

    let field = FieldCombat::new(FieldRules::printed()).expect("the printed rules are valid");
    let prepared = scenarios::field_battle()
        .prepare()
        .expect("the bench battle is valid");
    let table =
        TransitionTable::compile(&field, &prepared, MAX_TABLE_ENTRIES).expect("a small battle");
    count("field battle 12 v 8, mixed tactics", |d| {
        std::hint::black_box(table.fight(d));
    });
    count("field battle 12 v 8, round by round", |d| {
        std::hint::black_box(field.fight(&prepared, d));
    });
    let kernel = FieldKernel::Table(&table);
    let mut h = BattleHistogram::new(&prepared, field.rules().round_limit);
    count_lanes(
        "field battle 12 v 8, 32 at once (as run)",
        LaneDraws::OnePerWord,
        |d| kernel.fight_block(d, LANES_BLOCK, &mut h),
    );

    let (naval, engagement) = scenarios::naval();
    let naval = naval.kernel(&engagement);
    count("naval engagement 6 v 4, one at a time", |d| {
        std::hint::black_box(naval.engage(d));
    });
    let (_, engagement) = scenarios::naval();
    let mut h = battlelab_core::systems::naval_engagement::engagement::EngagementHistogram::new(
        &engagement,
    );
    count_lanes(
        "naval engagement 6 v 4, 32 at once (as run)",
        LaneDraws::OnePerWord,
        |d| naval.record_many(d, LANES_BLOCK, &mut h),
    );
}
