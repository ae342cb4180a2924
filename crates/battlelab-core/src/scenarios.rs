//! The battles the benches time, shared with the `dice_count` example (which counts the
//! words and dice one battle draws) so both measure the very same thing. Not part of
//! the analysis API.
//!
//! Each system's bench battles live in its folder (`systems/<name>/scenarios.rs`); this
//! module lists them under one path, with the word counters the benches and examples
//! share and the test that holds every battle's draws to the hand-counted ones.

use crate::dice::DiceStream;
pub use crate::systems::field::scenarios::field_battle;
pub use crate::systems::frontier::scenarios::{
    frontier, frontier_dice_floor, frontier_six_stacks, FRONTIER_DICE,
};
pub use crate::systems::melee::scenarios::{melee_duel, melee_surrounded};
pub use crate::systems::naval_engagement::scenarios::naval;
pub use crate::systems::ratio::scenarios::{ratio_line, RATIO_LINE};
pub use crate::systems::setup::scenarios::setup_map;

/// Words (64-bit `next_u64` draws) per call of `battle`, averaged over `n` calls on
/// block 0 of seed 1: counted by stepping a copy of the stream, outside any timing.
pub fn words_per_battle(n: u64, battle: impl FnMut(&mut DiceStream)) -> f64 {
    words_drawn(n, battle) as f64 / n as f64
}

/// Words `n` calls of `battle` draw in all, on block 0 of seed 1 (see [`words_per_battle`]).
pub fn words_drawn(n: u64, mut battle: impl FnMut(&mut DiceStream)) -> u64 {
    let start = DiceStream::for_block(1, 0);
    let mut dice = start.clone();
    for _ in 0..n {
        battle(&mut dice);
    }
    start
        .words_until(&dice, 1 << 32)
        .expect("a battle draws fewer than 2^32 / n words")
}

/// The dice floor of a bit-sliced kernel (frontier, ratio): `battles` battles, 256 a sweep, each
/// drawing `faces` d6 as bit planes ([`crate::dice::planes`]), folded so that none is
/// dropped, and no rule applied. Returns the words drawn (the lanes' keys and the planes').
pub fn sliced_dice_floor(dice: &mut DiceStream, battles: u64, faces: u64) -> u64 {
    use crate::dice::planes::{fold_faces, PLANE_BATTLES};
    let (words, folded) = fold_faces(dice, battles.div_ceil(PLANE_BATTLES as u64), faces);
    std::hint::black_box(folded);
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::ratio::battle::{RatioCombat, ReservePolicy};
    use crate::systems::setup::map::{CoalitionMap, CompiledMap};

    /// The words column of the issue-16 table, where it is known by hand: the count
    /// itself, a 13-state map (8 d6 a word: 2 words, whole or one coalition), and a
    /// 5-combat ratio line whose reserves never commit (its line dice fit one word).
    #[test]
    fn words_per_battle_are_the_hand_counted_ones() {
        assert_eq!(
            words_per_battle(100, |d| {
                d.word();
                d.word();
                d.word();
            }),
            3.0
        );
        let states = setup_map();
        let map = CompiledMap::new(&states);
        let mut totals = [[0u32; 7]; 3];
        assert_eq!(
            words_per_battle(1000, |d| map.roll_totals(d, &mut totals)),
            2.0
        );
        let one = CoalitionMap::new(&states, 0);
        assert_eq!(
            words_per_battle(1000, |d| {
                one.roll(d);
            }),
            2.0
        );
        let line = RatioCombat::new(ratio_line(RATIO_LINE, 2, 0, ReservePolicy::None)).unwrap();
        assert_eq!(
            words_per_battle(1000, |d| {
                line.fight(d);
            }),
            1.0
        );
    }

    /// Words and draws of `n` calls of `battle` in total: words by [`words_drawn`], draws by
    /// this thread's counters (which this crate's unit tests have, as `count-dice` builds
    /// do; no call here runs on another thread).
    fn words_and_draws(n: u64, battle: impl FnMut(&mut DiceStream)) -> (u64, u64) {
        let before = crate::dice::counting::counts().1;
        let words = words_drawn(n, battle);
        (words, crate::dice::counting::counts().1 - before)
    }

    /// The words of a bit-sliced block that drew `faces` faces a sweep in all, after the
    /// lanes' `keys`: each face 10.835 planes of four words on average (the variance of a
    /// face's planes 4 · 0.934), within five standard deviations.
    fn assert_plane_words(words: u64, keys: u64, faces: u64) {
        let (mean, sd) = (
            keys as f64 + 4.0 * 10.835 * faces as f64,
            4.0 * (4.0 * 0.934 * faces as f64).sqrt(),
        );
        assert!(
            (words as f64 - mean).abs() <= 5.0 * sd,
            "{words} words: {mean} ± {sd}"
        );
    }

    /// The draws column of the issue-16 table (`dice_count`), where it is known by hand:
    /// values taken from a word, a combined face or a sampled count being one.
    #[test]
    fn draws_per_battle_are_the_hand_counted_ones() {
        const N: u64 = 1000;
        // Five combats, each one combined face of its dice: one word, five draws.
        let line = RatioCombat::new(ratio_line(RATIO_LINE, 2, 0, ReservePolicy::None)).unwrap();
        assert_eq!(
            words_and_draws(N, |d| {
                let _ = line.fight(d);
            }),
            (N, 5 * N)
        );
        // With reserves the table kernel also peeks the reserve dice as one value in every
        // battle (drawing their word only when a reserve commits): six draws a battle.
        let rescue = RatioCombat::new(ratio_line(RATIO_LINE, 2, 0, ReservePolicy::Rescue)).unwrap();
        let (words, draws) = words_and_draws(N, |d| {
            let _ = rescue.fight(d);
        });
        assert_eq!(draws, 6 * N);
        assert!((N..=2 * N).contains(&words), "{words} words");
        // Bit-sliced, as runs fight it: 13 faces a battle (11 line dice, one a reserve),
        // each 10.835 planes of four words on average, after the lanes' keys (as frontier's
        // below).
        let mut h = crate::systems::ratio::battle::RatioHistogram::new(&rescue);
        let mut words = 0;
        let (keys, draws) = words_and_draws(1, |d| {
            words = rescue.sliced_block(d, N, &mut h).unwrap();
        });
        assert_eq!(keys, crate::dice::lanes::LANES as u64);
        assert_eq!(draws, 13 * N);
        assert_plane_words(words, keys, 13 * N.div_ceil(256));
        // The whole 13-state map, eight d6 a word taken two at a time as one number: four
        // values from the first word, two pairs and a single from the second.
        let states = setup_map();
        let map = CompiledMap::new(&states);
        let mut totals = [[0u32; 7]; 3];
        assert_eq!(
            words_and_draws(N, |d| map.roll_totals(d, &mut totals)),
            (2 * N, 7 * N)
        );
        // One coalition: one value for each of its five states (0, 3, 6, 9, 12), with
        // the skipped states' dice inside it.
        let one = CoalitionMap::new(&states, 0);
        assert_eq!(
            words_and_draws(N, |d| {
                let _ = one.roll(d);
            }),
            (2 * N, 5 * N)
        );
        // The frontier dice floor: 96 faces a battle, twelve to a word.
        assert_eq!(
            words_and_draws(N, |d| {
                let _ = frontier_dice_floor(d, 1);
            }),
            (8 * N, FRONTIER_DICE * N)
        );
        // A frontier battle rolls only d6 (its leader loss is 1 in 6), twelve to a word. A
        // block's battles are fought in lanes, each on its own stream: lane by lane, each
        // lane's draws are twelve a word less the faces left in its last word; all lanes
        // at once, the same words and draws.
        let frontier = frontier();
        let lanes = crate::dice::lanes::LANES as u64;
        let mut h = frontier.empty_histogram();
        let mut lane_words = 0;
        let (words, draws) = words_and_draws(1, |d| {
            lane_words = crate::dice::lanes::fight_lanes(
                d,
                N,
                &mut h,
                |_, _| None,
                |d, k, h| frontier.fight_lane(d, k, h),
            );
        });
        assert_eq!(words, lanes);
        let faces = 12 * (lane_words - lanes);
        assert!(
            (faces - 11 * lanes..=faces).contains(&draws),
            "{lane_words} words, {draws} draws"
        );
        let mut at_once = frontier.empty_histogram();
        let mut block_words = 0;
        let (_, block_draws) = words_and_draws(1, |d| {
            block_words = frontier.lanes_block(d, N, &mut at_once);
        });
        assert_eq!((block_words, block_draws), (lane_words, draws));
        assert_eq!(at_once, h);
        // Bit-sliced, as runs fight it: every battle draws a face for every event that
        // could happen to it (409, where every lane sees a melee in every round of a
        // sweep, as here), each 10.835 planes of four words on average (variance of a
        // face's planes 4 · 0.934): the words within five standard deviations, after the
        // lanes' keys.
        let mut words = 0;
        let (keys, draws) = words_and_draws(1, |d| {
            words = frontier.battle_block(d, N, &mut at_once);
        });
        // The block's stream gives the lanes' keys; the planes' words are the kernel's own
        // (its streams are stepped in registers, not by `next_u64`).
        assert_eq!(keys, lanes);
        assert_eq!(draws, frontier.most_faces() as u64 * N);
        assert_plane_words(words, keys, frontier.most_faces() as u64 * N.div_ceil(256));
        // One value from each word drawn: a naval round takes both its dice as one value
        // of its own word; the melee duel samples each wound count from a table by a whole
        // word, and takes its phase's one break roll from the phase's break word.
        let (naval, engagement) = naval();
        let naval = naval.kernel(&engagement);
        let (words, draws) = words_and_draws(N, |d| {
            let _ = naval.engage(d);
        });
        assert_eq!(draws, words);
        // Thirty-two at once, each lane on its own stream: the block's stream gives the
        // lanes' keys, one word a lane, and the lanes at least a word a round (more where
        // the lanes advance together and a lane with nothing left draws its words too).
        let (_, engagement) = self::naval();
        let mut h =
            crate::systems::naval_engagement::engagement::EngagementHistogram::new(&engagement);
        let mut lane_words = 0;
        let (words, _) = words_and_draws(1, |d| lane_words = naval.record_many(d, N, &mut h));
        assert_eq!(words, crate::dice::lanes::LANES as u64);
        assert_eq!(h.trials(), N);
        let rounds: u64 = h.rounds.iter().zip(0..).map(|(c, r)| c * r).sum();
        assert!(
            lane_words >= words + rounds,
            "{lane_words} words, {rounds} rounds"
        );
        let duel = melee_duel();
        let (words, draws) = words_and_draws(N, |d| {
            let _ = duel.engage(d);
        });
        assert_eq!(draws, words);
        // In lanes, as runs fight them: the lanes' keys, then three words a phase.
        let mut h = duel.empty_engagement_histogram();
        let mut lane_words = 0;
        let (words, _) = words_and_draws(1, |d| lane_words = duel.engagement_block(d, N, &mut h));
        assert_eq!(words, crate::dice::lanes::LANES as u64);
        assert_eq!(h.trials(), N);
        let phases: u64 = h
            .ends
            .iter()
            .zip(0..)
            .map(|(c, i)| c * (1 + i / crate::systems::melee::engagement::END_COUNT as u64))
            .sum();
        assert!(
            lane_words >= words + 3 * phases,
            "{lane_words} words, {phases} phases"
        );
    }
}
