//! Dice from one seeded stream per block of trials.
//!
//! Why this module exists: every kernel needs fair dice, fast, and every run must be
//! reproducible on any thread count. A [`DiceStream`] is a xoshiro256++ generator whose
//! state is derived from `(seed, block index)` alone, so block `i` draws the same dice
//! whichever thread runs it and whatever else runs beside it.
//!
//! Dice are cut from 64-bit words by multiply-high (Lemire's method without the
//! rejection step). For an `n`-sided die the probability of each face differs from `1/n`
//! by at most `n / 2^64` (about `3e-19` for a d6): no run of 10^10 draws, nor of 10^15,
//! could see it. [`DiceWord`] takes several dice from one word: after taking dice with
//! sides `n1 … nk` the bias is at most `n1·…·nk / 2^64`, so a word safely yields up to
//! eight d6 (`6^8 / 2^64 < 1e-13`), which is how multi-die kernels save random bits.
//! Kernels keep the product under 2^32 (bias < 2^-32 of a probability): the melee kernel
//! takes six 36-sided (hit die, save die) draws per word, `36^6 / 2^64 ≈ 1.2e-10`.

pub mod lanes;
pub mod planes;

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The SplitMix64 output function: a bijective 64-bit mixer used to derive stream keys.
#[inline]
pub const fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A fair, seeded source of dice for one block of trials.
///
/// ```
/// use battlelab_core::dice::DiceStream;
/// let mut dice = DiceStream::for_block(1815, 0);
/// let roll = dice.two_d6();
/// assert!((2..=12).contains(&roll));
/// // The same seed and block give the same dice.
/// assert_eq!(DiceStream::for_block(7, 3).next_u64(), DiceStream::for_block(7, 3).next_u64());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiceStream {
    rng: Xoshiro256PlusPlus,
}

impl DiceStream {
    /// The stream for block `block` of a run seeded with `seed`.
    ///
    /// The 256-bit state is four successive SplitMix64 outputs from a key that mixes the
    /// seed and the block index, the seeding xoshiro's authors recommend. It depends on
    /// nothing else: not the thread, not the number of threads, not the grid point.
    pub fn for_block(seed: u64, block: u64) -> Self {
        let key = splitmix64(seed) ^ splitmix64(block ^ 0xD1B5_4A32_D192_ED03).rotate_left(17);
        Self::from_state(Self::state_for_key(key))
    }

    /// The xoshiro256++ state a key seeds: four successive SplitMix64 outputs.
    pub(crate) fn state_for_key(key: u64) -> [u64; 4] {
        let mut counter = key;
        [(); 4].map(|()| {
            counter = counter.wrapping_add(0x9E37_79B9_7F4A_7C15);
            splitmix64(counter)
        })
    }

    /// The stream whose xoshiro256++ state is `state`, which must not be all zero
    /// (`state_for_key`'s never is: SplitMix64 is a bijection, so four successive outputs
    /// are never all zero; `rand_xoshiro` would replace an all-zero state, the lanes' vector
    /// streams would not).
    pub(crate) fn from_state(state: [u64; 4]) -> Self {
        let mut bytes = [0u8; 32];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(state) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        Self {
            rng: Xoshiro256PlusPlus::from_seed(bytes),
        }
    }

    /// The next raw 64-bit output of xoshiro256++.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        #[cfg(any(test, feature = "count-dice"))]
        counting::WORDS.with(|c| c.set(c.get() + 1));
        self.rng.next_u64()
    }

    /// How many words (`next_u64` calls) lead from `self` to `later`, if at most `limit`.
    ///
    /// For benches and tests only: it steps a copy of the stream until it equals `later`,
    /// so it costs nothing in the kernels and needs no instrumented build. Run N battles on
    /// a stream, then `start.words_until(&stream, limit) / N` is the words per battle.
    pub fn words_until(&self, later: &DiceStream, limit: u64) -> Option<u64> {
        let mut probe = self.rng.clone();
        for n in 0..=limit {
            if probe == later.rng {
                return Some(n);
            }
            probe.next_u64();
        }
        None
    }

    /// A uniform value in `0..n` (n ≥ 1), by multiply-high.
    #[inline(always)]
    pub fn below(&mut self, n: u32) -> u32 {
        DiceWord(self.next_u64()).take(n)
    }

    /// One d6, `1..=6`.
    #[inline(always)]
    pub fn d6(&mut self) -> u32 {
        self.below(6) + 1
    }

    /// One dN, `1..=n`.
    #[inline(always)]
    pub fn d(&mut self, n: u32) -> u32 {
        self.below(n) + 1
    }

    /// The sum of two d6, `2..=12`, with the correct triangular distribution.
    #[inline(always)]
    pub fn two_d6(&mut self) -> u32 {
        let mut word = self.word();
        word.take(6) + word.take(6) + 2
    }

    /// A fresh word to cut several dice from.
    #[inline(always)]
    pub fn word(&mut self) -> DiceWord {
        DiceWord(self.next_u64())
    }
}

/// A 64-bit uniform word from which several dice are taken in turn.
///
/// PERF: `take(n)` multiplies the word by `n`; the high 64 bits are the die (uniform in
/// `0..n`), the low 64 bits are the unused fraction and become the next word. This spends
/// about log2(n) bits per die instead of a whole `next_u64`. See the module docs for the
/// bias bound; callers take at most eight d6 (or the equivalent product of sides) per word.
#[derive(Clone, Copy, Debug)]
pub struct DiceWord(pub u64);

impl DiceWord {
    /// A uniform value in `0..n`.
    #[inline(always)]
    pub fn take(&mut self, n: u32) -> u32 {
        #[cfg(any(test, feature = "count-dice"))]
        counting::DRAWS.with(|c| c.set(c.get() + 1));
        let product = u128::from(self.0) * u128::from(n);
        self.0 = product as u64;
        (product >> 64) as u32
    }
}

/// Draw counters for the dice-count table (`--features count-dice` and the `dice_count`
/// example): every `next_u64` and every value taken from a word (a die,
/// or a count sampled from a table) on this thread. This crate's own unit tests have them
/// too, so the draws of docs/performance.md's table are checked in CI (`scenarios`' tests); normal
/// builds, the benches and every other crate's tests have no counters.
#[cfg(any(test, feature = "count-dice"))]
pub mod counting {
    use std::cell::Cell;
    thread_local! {
        pub(crate) static WORDS: Cell<u64> = const { Cell::new(0) };
        pub(crate) static DRAWS: Cell<u64> = const { Cell::new(0) };
    }

    /// (words, draws) so far on this thread.
    pub fn counts() -> (u64, u64) {
        (WORDS.with(Cell::get), DRAWS.with(Cell::get))
    }

    /// Counts `n` draws taken outside `DiceWord::take` (frontier's sweeps cut a word's
    /// faces at once and count those their battles drew).
    pub(crate) fn add_draws(n: u64) {
        DRAWS.with(|c| c.set(c.get() + n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_depend_on_seed_and_block_only() {
        let mut a = DiceStream::for_block(7, 3);
        let mut b = DiceStream::for_block(7, 3);
        let mut c = DiceStream::for_block(7, 4);
        let mut d = DiceStream::for_block(8, 3);
        let (xa, xb, xc, xd) = (a.next_u64(), b.next_u64(), c.next_u64(), d.next_u64());
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        assert_ne!(xa, xd);
    }

    #[test]
    fn take_covers_every_face_in_order() {
        // The word's top bits pick the face: 0 → face 0, just under 2^64 → face n−1,
        // and the boundaries sit at k·2^64/n.
        for n in [2u32, 6, 36, 100] {
            assert_eq!(DiceWord(0).take(n), 0);
            assert_eq!(DiceWord(u64::MAX).take(n), n - 1);
            for k in 1..n {
                let boundary = ((u128::from(k) << 64).div_ceil(u128::from(n))) as u64;
                assert_eq!(DiceWord(boundary).take(n), k, "n={n} k={k}");
                assert_eq!(DiceWord(boundary - 1).take(n), k - 1, "n={n} k={k}");
            }
        }
    }
}
