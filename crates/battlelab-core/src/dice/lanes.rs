//! A block's battles in [`LANES`] lanes, each lane on its own stream.
//!
//! Why this module exists: kernels that fight many battles at once (one to a SIMD lane,
//! with masks in place of branches: `systems/field/transitions/lockstep.rs`,
//! `systems/naval_engagement/engagement/lockstep.rs`, `systems/setup/map/lockstep.rs`, `systems/melee/engagement/lockstep.rs`) must
//! fight the same battles as their one-at-a-time forms, whatever lanes they advance
//! together, so that which form runs (the CPU's features, a table's size) changes no
//! count. So a block's stream gives each lane a stream of its own
//! ([`DiceStream::lane_states`]), and lane `l` fights [`lane_battles`]`(n, l)` of the
//! block's `n` battles one after another on it: a lane's battles are decided before any
//! die is cast (no battle is counted or dropped for how it went), and are the battles a
//! scalar loop over the lanes fights. The AVX-512 and AVX2 helpers here (`VectorForm`
//! names the two) step the lanes' streams, eight or four lanes to a register (each state
//! word of those lanes in one; their next words in one), and cut their dice as
//! [`DiceWord::take`] does.
//!
//! [`DiceWord::take`]: super::DiceWord::take

use super::DiceStream;

/// Lanes a block's battles are fought in.
pub const LANES: usize = 32;

/// How many of a block's `n` battles lane `lane` fights: `n / LANES`, and one more in the
/// first `n % LANES` lanes.
pub fn lane_battles(n: u64, lane: usize) -> u64 {
    n / LANES as u64 + u64::from((lane as u64) < n % LANES as u64)
}

/// Whether every lane's share of a block's `n` battles ([`lane_battles`]; lane 0's is the
/// largest) fits the 32 bits in which the vector sweeps count a lane's battles left (a
/// run's block is 65,536).
pub fn shares_fit_32_bits(n: u64) -> bool {
    lane_battles(n, 0) <= u64::from(u32::MAX)
}

/// The count table a sweep of the lanes adds to, one count a lane a sweep: each lane at
/// its key, or at its own spare slot past the keys where it ended no counted battle (so
/// that every lane counts every sweep, with no branch). The table may be held in copies
/// (a power of two), lane `l` counting in copy `l % copies`, and is read as their sums.
///
/// PERF: a sweep's increments hit few keys (most battles end alike), and an increment of
/// a slot the one before it wrote waits for that store: on the AMD EPYC Zen 4 those
/// chains held `profile naval-lockstep` to 98–125 M engagements/s; in four copies, 222–280
/// M (eight: 160–180 M, their zeroing and folding cost more than they save). Melee's
/// tables, up to 2^18 keys a call, cost more to zero in copies than the chains do
/// (`melee-surrounded` 69.7 → 60.3 M/s): one copy.
pub(crate) struct LaneCounts {
    slots: Vec<u64>,
    /// Slots of a copy: the keys, then [`LANES`] spare slots.
    stride: usize,
    /// Copies less one.
    copy_mask: usize,
}

impl LaneCounts {
    /// A zeroed table of `keys` keys in `copies` copies (a power of two).
    pub(crate) fn new(keys: usize, copies: usize) -> Self {
        assert!(
            copies.is_power_of_two(),
            "copies of a count table: a power of two"
        );
        let stride = keys + LANES;
        Self {
            slots: vec![0; stride * copies],
            stride,
            copy_mask: copies - 1,
        }
    }

    /// The keys.
    pub(crate) fn keys(&self) -> usize {
        self.stride - LANES
    }

    /// Lane `lane`'s spare slot, counted where it ended no counted battle.
    pub(crate) fn spare(&self, lane: usize) -> u32 {
        (self.keys() + lane) as u32
    }

    /// Adds one to `slot` (a key, or `lane`'s spare slot) for lane `lane`.
    ///
    /// # Safety
    /// `slot` must be below `keys() + LANES`.
    #[inline(always)]
    pub(crate) unsafe fn add(&mut self, lane: usize, slot: u32) {
        debug_assert!((slot as usize) < self.stride);
        let at = (lane & self.copy_mask) * self.stride + slot as usize;
        *self.slots.get_unchecked_mut(at) += 1;
    }

    /// Each key with its count over the copies, where the count is not 0.
    pub(crate) fn counted(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        (0..self.keys())
            .map(|key| {
                let count = (0..=self.copy_mask)
                    .map(|c| self.slots[c * self.stride + key])
                    .sum();
                (key, count)
            })
            .filter(|&(_, count)| count > 0)
    }
}

/// A block's `n` battles in [`LANES`] lanes, counted into `counts`: the lanes' streams are
/// split from `dice` ([`DiceStream::lane_states`]; none where `n` is 0), then `at_once`
/// fights all lanes together and returns the words the lanes drew, all lanes together, or
/// returns `None` having fought nothing. (Naval, field, melee and setup return every
/// lane's words to the block's last sweep, a lane with no battle left drawing its word
/// with the rest: a word a lane a sweep for naval and field, three for melee, a map's for
/// setup. Ratio returns its battles' words: a lane's words of line dice and its reserve
/// words.) Then the lanes are fought one after another, `battle` fighting one battle on a
/// lane's stream and returning the words it drew: lane `l`'s [`lane_battles`]`(n, l)`
/// battles, the very battles `at_once` fights. Returns the words drawn from all streams:
/// the lanes' keys, and the lanes' words.
pub fn fight_block<C: ?Sized>(
    dice: &mut DiceStream,
    n: u64,
    counts: &mut C,
    at_once: impl FnOnce(&[[u64; 4]; LANES], &mut C) -> Option<u64>,
    mut battle: impl FnMut(&mut DiceStream, &mut C) -> u64,
) -> u64 {
    fight_lanes(dice, n, counts, at_once, |dice, battles, counts| {
        (0..battles).map(|_| battle(dice, counts)).sum()
    })
}

/// [`fight_block`] for kernels whose lane carries something from one battle to the next
/// (frontier's faces left over in a word): `lane(dice, battles, counts)` fights a whole
/// lane's `battles` battles one after another on its stream and returns the words it drew.
pub fn fight_lanes<C: ?Sized>(
    dice: &mut DiceStream,
    n: u64,
    counts: &mut C,
    at_once: impl FnOnce(&[[u64; 4]; LANES], &mut C) -> Option<u64>,
    mut lane: impl FnMut(&mut DiceStream, u64, &mut C) -> u64,
) -> u64 {
    if n == 0 {
        return 0;
    }
    let lanes = dice.lane_states();
    if let Some(words) = at_once(&lanes, counts) {
        return words + LANES as u64;
    }
    let mut words = LANES as u64;
    for (l, &state) in lanes.iter().enumerate() {
        words += lane(
            &mut DiceStream::from_state(state),
            lane_battles(n, l),
            counts,
        );
    }
    words
}

impl DiceStream {
    /// The xoshiro256++ states of [`LANES`] lane streams split from this one: lane `l`'s is
    /// seeded, as a block's stream is, from a key, here this stream's `l`-th next word (so
    /// [`LANES`] words are drawn).
    pub fn lane_states(&mut self) -> [[u64; 4]; LANES] {
        [(); LANES].map(|()| Self::state_for_key(self.next_u64()))
    }
}

/// The vector forms of the lanes kernels' sweeps: AVX-512F's, or AVX2's for CPUs without
/// AVX-512 (AMD's before Zen 4, Intel's desktop parts). A kernel runs the widest the CPU
/// has ([`VectorForm::detect`]); its tests run each the CPU has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VectorForm {
    Avx512,
    Avx2,
}

impl VectorForm {
    pub(crate) const ALL: [Self; 2] = [Self::Avx512, Self::Avx2];

    /// Whether this CPU has the form's features.
    pub(crate) fn available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                Self::Avx512 => is_x86_feature_detected!("avx512f"),
                Self::Avx2 => is_x86_feature_detected!("avx2"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// The widest form this CPU has.
    pub(crate) fn detect() -> Option<Self> {
        Self::ALL.into_iter().find(|form| form.available())
    }
}

#[cfg(test)]
impl VectorForm {
    /// Asserts that each form ran (`ran[form as usize]` calls of it) exactly where the CPU
    /// has it: a test that ran none where it could, or one it cannot, fails.
    pub(crate) fn assert_ran_where_available(ran: [usize; 2]) {
        for form in Self::ALL {
            assert_eq!(
                ran[form as usize] > 0,
                form.available(),
                "{form:?}: {ran:?}"
            );
            if !form.available() {
                eprintln!("this machine has no {form:?}: that form did not run");
            }
        }
    }
}

/// Eight lanes at once in AVX-512 registers (x86-64 with AVX-512F, which callers detect).
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use std::arch::x86_64::*;

    use super::LANES;

    /// Registers of eight 64-bit lanes that hold [`LANES`] lanes.
    pub const GROUPS: usize = LANES / 8;

    /// `value(lane)` for the eight lanes of group `g`, lane `8g + i` in element `i`.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn group(g: usize, value: impl Fn(usize) -> u64) -> __m512i {
        let values: [u64; 8] = std::array::from_fn(|i| value(8 * g + i));
        _mm512_loadu_si512(values.as_ptr().cast())
    }

    /// The [`LANES`] lanes' xoshiro256++ streams, eight to a register: `s[g][k]` is state
    /// word `k` of group `g`'s lanes.
    pub struct Streams {
        s: [[__m512i; 4]; GROUPS],
    }

    impl Streams {
        /// PERF: each state word of a group is one gather from `lanes`, no closure: built
        /// from closures, this was inlined into the naval sweep (as the compiler chose
        /// once the melee sweep also called it) as calls whose results went through the
        /// stack, and that sweep's loop then kept stream registers on the stack
        /// (`profile naval-lockstep` 474 -> 360 M/s, the same naval source).
        ///
        /// # Safety
        /// The CPU must have AVX-512F.
        #[target_feature(enable = "avx512f")]
        #[inline]
        pub unsafe fn new(lanes: &[[u64; 4]; LANES]) -> Self {
            // Lane `8g + i`'s word `k` is `u64` number `4(8g + i) + k` of `lanes`.
            let lane = _mm512_setr_epi64(0, 4, 8, 12, 16, 20, 24, 28);
            let base: *const i64 = lanes.as_ptr().cast();
            let mut s = [[_mm512_setzero_si512(); 4]; GROUPS];
            for (g, words) in s.iter_mut().enumerate() {
                for (k, word) in words.iter_mut().enumerate() {
                    let index = _mm512_add_epi64(lane, _mm512_set1_epi64((32 * g + k) as i64));
                    *word = _mm512_i64gather_epi64::<8>(index, base);
                }
            }
            Self { s }
        }

        /// The next word of each of group `g`'s streams: xoshiro256++'s `next_u64`, as
        /// `rand_xoshiro` computes it, in each lane.
        ///
        /// # Safety
        /// The CPU must have AVX-512F.
        #[target_feature(enable = "avx512f")]
        #[inline]
        pub unsafe fn next(&mut self, g: usize) -> __m512i {
            let [s0, s1, s2, s3] = self.s[g];
            let word = _mm512_add_epi64(_mm512_rol_epi64::<23>(_mm512_add_epi64(s0, s3)), s0);
            let t = _mm512_slli_epi64::<17>(s1);
            let s2 = _mm512_xor_si512(s2, s0);
            let s3 = _mm512_xor_si512(s3, s1);
            let s1 = _mm512_xor_si512(s1, s2);
            let s0 = _mm512_xor_si512(s0, s3);
            let s2 = _mm512_xor_si512(s2, t);
            let s3 = _mm512_rol_epi64::<45>(s3);
            self.s[g] = [s0, s1, s2, s3];
            word
        }

        /// [`Self::next`] in the lanes of group `g` whose bit of `mask` is set (lane
        /// `8g + i`, bit `i`); the other lanes' streams stay where they are (their elements
        /// of the result are words they did not draw).
        ///
        /// # Safety
        /// The CPU must have AVX-512F.
        #[target_feature(enable = "avx512f")]
        #[inline]
        pub unsafe fn next_where(&mut self, g: usize, mask: __mmask8) -> __m512i {
            let before = self.s[g];
            let word = self.next(g);
            for (now, was) in self.s[g].iter_mut().zip(before) {
                *now = _mm512_mask_mov_epi64(was, mask, *now);
            }
            word
        }
    }

    /// A table of up to 32 `u32`s as two registers, `value(i)` at `i`, for [`lookup32`].
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn table32(value: impl Fn(usize) -> u32) -> [__m512i; 2] {
        // The lanes' registers of sixteen are such a table: 32 values in two.
        const { assert!(LANES == 32) };
        halves(value)
    }

    /// `table[index]` in each 32-bit lane, every `index` below 32: one two-register
    /// permute (`vpermt2d`) where a gather would read sixteen times. An index past 31
    /// would read `table[index & 31]`, a wrong value, not memory out of bounds: callers
    /// keep every index below 32 (checked in debug builds).
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub unsafe fn lookup32(table: &[__m512i; 2], index: __m512i) -> __m512i {
        debug_assert!(_mm512_cmpgt_epu32_mask(index, _mm512_set1_epi32(31)) == 0);
        _mm512_permutex2var_epi32(table[0], index, table[1])
    }

    /// Registers of sixteen 32-bit lanes that hold [`LANES`] lanes: register `h` holds
    /// lanes `16h` to `16h + 15`, whose words are stream groups `2h` and `2h + 1`'s.
    pub const HALVES: usize = LANES / 16;

    /// `value(lane)` for the lanes of each register of sixteen 32-bit lanes, lane
    /// `16h + i` in element `i` of register `h`.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn halves(value: impl Fn(usize) -> u32) -> [__m512i; HALVES] {
        let values: [u32; LANES] = std::array::from_fn(value);
        std::array::from_fn(|h| _mm512_loadu_si512(values[16 * h..].as_ptr().cast()))
    }

    /// Two groups' values in one register of sixteen 32-bit lanes: the low halves of
    /// `low`'s 64-bit lanes, then of `high`'s (one permute; the values must be below 2^32,
    /// as [`take`]'s are for sides below 2^32).
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub unsafe fn join(low: __m512i, high: __m512i) -> __m512i {
        let evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        _mm512_permutex2var_epi32(low, evens, high)
    }

    /// `DiceWord::take(sides)` in each 64-bit lane: the high 64 bits of `word · sides`, for
    /// sides below 2^32, as `(hi · sides + (lo · sides >> 32)) >> 32`, where `hi` and `lo`
    /// are the word's 32-bit halves. Exact: `⌊(hi·s·2^32 + lo·s) / 2^64⌋ = ⌊(hi·s +
    /// ⌊lo·s / 2^32⌋) / 2^32⌋`, and the sum is below 2^64 (`hi·s ≤ (2^32 − 1)²`,
    /// `⌊lo·s / 2^32⌋ < s`).
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub unsafe fn take(word: __m512i, sides: __m512i) -> __m512i {
        take_with_rest(word, sides).0
    }

    /// [`take`], and what `DiceWord::take` leaves of the word for the next die: the low 64
    /// bits of `word · sides`, `lo · sides + (hi · sides << 32)` (mod 2^64).
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub unsafe fn take_with_rest(word: __m512i, sides: __m512i) -> (__m512i, __m512i) {
        let high = _mm512_mul_epu32(_mm512_srli_epi64::<32>(word), sides);
        let low = _mm512_mul_epu32(word, sides);
        let die = _mm512_srli_epi64::<32>(_mm512_add_epi64(high, _mm512_srli_epi64::<32>(low)));
        let rest = _mm512_add_epi64(low, _mm512_slli_epi64::<32>(high));
        (die, rest)
    }
}

/// Four lanes at once in AVX2 registers (x86-64 with AVX2, which callers detect): what
/// [`avx512`] does eight lanes to a register, for CPUs without AVX-512 (AMD's before Zen 4,
/// Intel's desktop parts).
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use std::arch::x86_64::*;

    use super::LANES;

    /// Registers of four 64-bit lanes that hold [`LANES`] lanes.
    pub const GROUPS: usize = LANES / 4;

    /// Registers of eight 32-bit lanes that hold [`LANES`] lanes.
    pub const GROUPS32: usize = LANES / 8;

    /// `value(lane)` for the four lanes of group `g`, lane `4g + i` in element `i`.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn group(g: usize, value: impl Fn(usize) -> u64) -> __m256i {
        let values: [u64; 4] = std::array::from_fn(|i| value(4 * g + i));
        _mm256_loadu_si256(values.as_ptr().cast())
    }

    /// `value(lane)` for the eight 32-bit lanes of group `g`, lane `8g + i` in element
    /// `i` (lanes `8g` to `8g + 3` are the words of stream group `2g`, the rest of
    /// `2g + 1`).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn group32(g: usize, value: impl Fn(usize) -> u32) -> __m256i {
        let values: [u32; 8] = std::array::from_fn(|i| value(8 * g + i));
        _mm256_loadu_si256(values.as_ptr().cast())
    }

    /// The [`LANES`] lanes' xoshiro256++ streams, four to a register: `s[g][k]` is state
    /// word `k` of group `g`'s lanes.
    pub struct Streams {
        s: [[__m256i; 4]; GROUPS],
    }

    /// `x` rotated left by `L` bits in each 64-bit lane (`R` = 64 − `L`; AVX2 has no
    /// rotate).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn rotate_left<const L: i32, const R: i32>(x: __m256i) -> __m256i {
        const { assert!(L + R == 64) };
        _mm256_or_si256(_mm256_slli_epi64::<L>(x), _mm256_srli_epi64::<R>(x))
    }

    impl Streams {
        /// # Safety
        /// The CPU must have AVX2.
        #[target_feature(enable = "avx2")]
        pub unsafe fn new(lanes: &[[u64; 4]; LANES]) -> Self {
            Self {
                s: std::array::from_fn(|g| std::array::from_fn(|k| group(g, |l| lanes[l][k]))),
            }
        }

        /// The next word of each of group `g`'s streams: xoshiro256++'s `next_u64`, as
        /// `rand_xoshiro` computes it, in each lane.
        ///
        /// # Safety
        /// The CPU must have AVX2.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub unsafe fn next(&mut self, g: usize) -> __m256i {
            let [s0, s1, s2, s3] = self.s[g];
            let word = _mm256_add_epi64(rotate_left::<23, 41>(_mm256_add_epi64(s0, s3)), s0);
            let t = _mm256_slli_epi64::<17>(s1);
            let s2 = _mm256_xor_si256(s2, s0);
            let s3 = _mm256_xor_si256(s3, s1);
            let s1 = _mm256_xor_si256(s1, s2);
            let s0 = _mm256_xor_si256(s0, s3);
            let s2 = _mm256_xor_si256(s2, t);
            let s3 = rotate_left::<45, 19>(s3);
            self.s[g] = [s0, s1, s2, s3];
            word
        }

        /// [`Self::next`] in the lanes of group `g` whose 64-bit lane of `mask` is all
        /// ones; the other lanes' streams stay where they are (their elements of the
        /// result are words they did not draw).
        ///
        /// # Safety
        /// The CPU must have AVX2.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub unsafe fn next_where(&mut self, g: usize, mask: __m256i) -> __m256i {
            let before = self.s[g];
            let word = self.next(g);
            for (now, was) in self.s[g].iter_mut().zip(before) {
                *now = _mm256_blendv_epi8(was, *now, mask);
            }
            word
        }
    }

    /// The low halves of four 64-bit lanes as four 32-bit lanes (AVX2 has no narrowing
    /// move: one permute of the even 32-bit elements).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn narrow(v: __m256i) -> __m128i {
        _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
            v,
            _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
        ))
    }

    /// Two registers of four 32-bit lanes as one of eight, `low`'s first.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn join(low: __m128i, high: __m128i) -> __m256i {
        _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(low), high)
    }

    /// A table of up to 32 `u32`s as four registers, `value(i)` at `i`, for [`lookup32`].
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn table32(value: impl Fn(usize) -> u32) -> [__m256i; 4] {
        std::array::from_fn(|r| group32(r, &value))
    }

    /// `table[index]` in each 32-bit lane, every `index` below 32: four permutes where a
    /// gather would read eight times (gathers were most of the melee sweeps' time on the
    /// AMD EPYC). An index past 31 would read `table[index & 31]`, a wrong value, not
    /// memory out of bounds: callers keep every index below 32 (checked in debug builds).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn lookup32(table: &[__m256i; 4], index: __m256i) -> __m256i {
        debug_assert!({
            let mut lanes = [0u32; 8];
            _mm256_storeu_si256(lanes.as_mut_ptr().cast(), index);
            lanes.iter().all(|&i| i < 32)
        });
        let (seven, fifteen) = (_mm256_set1_epi32(7), _mm256_set1_epi32(15));
        let pick = |low: __m256i, high: __m256i| {
            _mm256_blendv_epi8(
                _mm256_permutevar8x32_epi32(low, index),
                _mm256_permutevar8x32_epi32(high, index),
                _mm256_cmpgt_epi32(_mm256_and_si256(index, fifteen), seven),
            )
        };
        _mm256_blendv_epi8(
            pick(table[0], table[1]),
            pick(table[2], table[3]),
            _mm256_cmpgt_epi32(index, fifteen),
        )
    }

    /// `DiceWord::take(sides)` in each 64-bit lane, for sides below 2^32, as
    /// [`super::avx512::take`] computes it (see there for why it is exact).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn take(word: __m256i, sides: __m256i) -> __m256i {
        take_with_rest(word, sides).0
    }

    /// [`take`], and what `DiceWord::take` leaves of the word for the next die, as
    /// [`super::avx512::take_with_rest`] computes them.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn take_with_rest(word: __m256i, sides: __m256i) -> (__m256i, __m256i) {
        let high = _mm256_mul_epu32(_mm256_srli_epi64::<32>(word), sides);
        let low = _mm256_mul_epu32(word, sides);
        let die = _mm256_srli_epi64::<32>(_mm256_add_epi64(high, _mm256_srli_epi64::<32>(low)));
        let rest = _mm256_add_epi64(low, _mm256_slli_epi64::<32>(high));
        (die, rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest block whose shares fit 32 bits: 2^32 − 1 battles in every lane.
    #[test]
    fn shares_fit_32_bits_up_to_u32_max_a_lane() {
        let most = u64::from(u32::MAX) * LANES as u64;
        assert!(shares_fit_32_bits(0) && shares_fit_32_bits(65_536));
        assert!(shares_fit_32_bits(most));
        assert!(!shares_fit_32_bits(most + 1));
    }

    #[test]
    fn lanes_share_out_a_block_and_each_has_its_own_stream() {
        for n in [0, 1, 31, 32, 33, 65_536, 65_537] {
            let shares: Vec<u64> = (0..LANES).map(|l| lane_battles(n, l)).collect();
            assert_eq!(shares.iter().sum::<u64>(), n);
            assert!(shares.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
        }
        let start = DiceStream::for_block(5, 6);
        let mut block = start.clone();
        let mut lanes = block.lane_states().map(DiceStream::from_state);
        assert_eq!(start.words_until(&block, 100), Some(LANES as u64));
        let firsts: std::collections::HashSet<u64> =
            lanes.iter_mut().map(DiceStream::next_u64).collect();
        assert_eq!(firsts.len(), LANES);
        // Each lane is seeded as a block is: its key, the block stream's next word, expanded
        // by SplitMix64 (`for_block`'s expansion, pinned here on its own inputs).
        let mut keys = start.clone();
        for (lane, state) in start.clone().lane_states().iter().enumerate() {
            let key = keys.next_u64();
            let mut counter = key;
            let expected = [(); 4].map(|()| {
                counter = counter.wrapping_add(0x9E37_79B9_7F4A_7C15);
                super::super::splitmix64(counter)
            });
            assert_eq!(*state, expected, "lane {lane}");
            assert_eq!(
                DiceStream::from_state(*state),
                DiceStream::from_state(DiceStream::state_for_key(key))
            );
        }
        assert_eq!(
            DiceStream::state_for_key(0)[0],
            super::super::splitmix64(0x9E37_79B9_7F4A_7C15)
        );
    }

    /// Words to cut with `sides`: the extremes, words whose high half's product with
    /// `sides` comes just short of a multiple of 2^32 (so that the low half's carry
    /// decides the die), and 4,000 words of `block`.
    #[cfg(target_arch = "x86_64")]
    fn words_to_cut(sides: u32, block: &mut DiceStream) -> Vec<u64> {
        let s = u64::from(sides);
        let mut words: Vec<u64> = vec![0, 1, u64::MAX, 1 << 32, (1 << 32) - 1, u64::MAX << 32];
        for hi in [0xFFFF_FFFF / s, 0xFFFF_FFFF / s + 1, (1 << 31) / s + 1] {
            for lo in [0, 1, 0xFFFF_FFFF, 0xFFFF_FFFF - 0xFFFF_FFFF / s] {
                words.push((hi & 0xFFFF_FFFF) << 32 | lo);
            }
        }
        words.extend((0..4_000).map(|_| block.next_u64()));
        words
    }

    /// A vector form's streams and cut against the scalar ones, `W` lanes to a register:
    /// `next(g)` steps group `g` of `groups` (lane `W·g + i` in element `i`) from the lane
    /// states of `DiceStream::for_block(8, 9)`, which the test passes in; `take` and
    /// `take_with_rest` cut `W` words. The streams must give each lane's scalar stream
    /// for 1,000 words; the cut, `DiceWord::take` on [`words_to_cut`] for sides 1 to
    /// 2^32 − 1, and three dice in turn from each word.
    #[cfg(target_arch = "x86_64")]
    fn check_form<const W: usize>(
        groups: usize,
        mut next: impl FnMut(usize) -> [u64; W],
        take: impl Fn([u64; W], u32) -> [u64; W],
        take_with_rest: impl Fn([u64; W], u32) -> ([u64; W], [u64; W]),
    ) {
        use crate::dice::DiceWord;
        let mut block = DiceStream::for_block(8, 9);
        let mut scalar = block.lane_states().map(DiceStream::from_state);
        for _ in 0..1_000 {
            for g in 0..groups {
                for (i, w) in next(g).iter().enumerate() {
                    assert_eq!(*w, scalar[W * g + i].next_u64());
                }
            }
        }
        for sides in [
            1u32,
            2,
            6,
            36,
            216,
            1_296,
            46_656,
            1 << 20,
            999_983,
            u32::MAX,
        ] {
            for chunk in words_to_cut(sides, &mut block).chunks(W) {
                let mut lanes = [0u64; W];
                lanes[..chunk.len()].copy_from_slice(chunk);
                for (w, c) in lanes.iter().zip(take(lanes, sides)) {
                    assert_eq!(c, u64::from(DiceWord(*w).take(sides)), "{w:#x} of {sides}");
                }
                let (mut words, mut scalar) = (lanes, lanes.map(DiceWord));
                for _ in 0..3 {
                    let (dies, rest) = take_with_rest(words, sides);
                    for (w, d) in scalar.iter_mut().zip(dies) {
                        assert_eq!(d, u64::from(w.take(sides)), "of {sides}");
                    }
                    words = rest;
                }
            }
        }
    }

    /// The AVX2 streams are the scalar streams, and the AVX2 cut is `DiceWord::take`.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_streams_and_cut_are_the_scalar_ones() {
        use super::avx2::{take, take_with_rest, Streams, GROUPS};
        use std::arch::x86_64::*;
        if !VectorForm::Avx2.available() {
            eprintln!("this machine has no AVX2: the AVX2 forms are not used");
            return;
        }
        // SAFETY (every block below): AVX2 is detected above.
        let load = |w: [u64; 4]| unsafe { _mm256_loadu_si256(w.as_ptr().cast()) };
        let store = |v: __m256i| {
            let mut w = [0u64; 4];
            unsafe { _mm256_storeu_si256(w.as_mut_ptr().cast(), v) };
            w
        };
        let sides = |s: u32| unsafe { _mm256_set1_epi64x(i64::from(s)) };
        let mut streams = unsafe { Streams::new(&DiceStream::for_block(8, 9).lane_states()) };
        check_form(
            GROUPS,
            |g| store(unsafe { streams.next(g) }),
            |w, s| store(unsafe { take(load(w), sides(s)) }),
            |w, s| {
                let (die, rest) = unsafe { take_with_rest(load(w), sides(s)) };
                (store(die), store(rest))
            },
        );
    }

    /// The AVX-512 streams are the scalar streams, and the AVX-512 cut is `DiceWord::take`.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx512_streams_and_cut_are_the_scalar_ones() {
        use super::avx512::{take, take_with_rest, Streams, GROUPS};
        use std::arch::x86_64::*;
        if !VectorForm::Avx512.available() {
            eprintln!("this machine has no AVX-512F: the AVX-512 forms are not used");
            return;
        }
        // SAFETY (every block below): AVX-512F is detected above.
        let load = |w: [u64; 8]| unsafe { _mm512_loadu_si512(w.as_ptr().cast()) };
        let store = |v: __m512i| {
            let mut w = [0u64; 8];
            unsafe { _mm512_storeu_si512(w.as_mut_ptr().cast(), v) };
            w
        };
        let sides = |s: u32| unsafe { _mm512_set1_epi64(i64::from(s)) };
        let mut streams = unsafe { Streams::new(&DiceStream::for_block(8, 9).lane_states()) };
        check_form(
            GROUPS,
            |g| store(unsafe { streams.next(g) }),
            |w, s| store(unsafe { take(load(w), sides(s)) }),
            |w, s| {
                let (die, rest) = unsafe { take_with_rest(load(w), sides(s)) };
                (store(die), store(rest))
            },
        );
    }
}
