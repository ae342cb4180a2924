//! Fair d6 as bit planes: one bit a battle, [`PLANE_BATTLES`] battles to a plane.
//!
//! Why this module exists: a frontier battle fought one at a time, or eight to an AVX2
//! register, spends its time on rule work, not dice (docs/performance.md, "Not reached:
//! frontier"). A bit-sliced kernel turns the register around: each bit of a 256-bit
//! register is one battle, a unit's state is a few such planes, and every rule is the same
//! boolean operations for all 256 battles. Such a kernel cannot step a position in a
//! stream per battle, so every battle draws a face at every event that could happen to it
//! (a shot, a leader roll, a move, a melee, a recovery roll), whether it happens or not,
//! and the faces must come as planes too: three planes a face, bit `i` of plane `k` being
//! bit `k` of battle `i`'s face. This module draws them for the frontier kernel
//! (`systems/frontier/battle/sliced.rs`), and the bench times them with no rule as that
//! kernel's dice floor (`frontier/… as bit planes`).
//!
//! Exactness: a face is `d2 + 2·d3`. `d2` is one random bit. `d3` is `2a + b` from two
//! random bits, drawn again, in every battle at once, while any battle of the 256 has
//! both bits set (3): each battle's `d3` is the first of its own pairs that is not 3, so
//! it is exactly uniform on {0, 1, 2} and independent of `d2` and of every other battle's
//! face (how many redraws a face takes depends on all battles, but it chooses no battle's
//! value: a battle's pairs after its first good one are drawn and unread). So a face is
//! exactly uniform on 0–5, with no bias at all (the multiply-high cut has one of at most
//! 6 / 2^64). On average 4.92 pairs are drawn a face for 256 battles (the sum over `r` of
//! the chance that some battle is left at 3 after `r` pairs, 1 − (1 − 4^−r)^256), so a face
//! costs 10.84 planes of 256 bits: 0.17 words a battle.
//!
//! The planes come from [`LANES`] streams split from a block's, four words to a plane
//! (group `g`'s lanes `4g` to `4g + 3`, the groups in turn: `LanePlanes`), the same on
//! every CPU.

use super::lanes::LANES;
use super::DiceStream;

/// Battles to a plane: one bit each.
pub const PLANE_BATTLES: usize = 256;

/// A plane: bit `i % 64` of word `i / 64` is battle `i`'s.
pub type Plane = [u64; 4];

/// Four-word groups of lane streams the planes take turns on.
const GROUPS: usize = LANES / 4;

/// A plane's bits as a kernel holds them: [`Plane`] itself on any CPU, or [`Avx2`], one
/// register, where the CPU has AVX2. The operations are bitwise (and 64-bit shifts and
/// adds for the streams), so both give the same bits; a kernel is written once over
/// `Bits` and compiled for each (its AVX2 copy inside a function with AVX2 enabled, into
/// which these inline).
///
/// # Safety
/// Every method of [`Avx2`] needs a CPU with AVX2: callers run them only there.
pub(crate) trait Bits: Copy {
    /// Every bit clear.
    unsafe fn zero() -> Self;
    /// Every bit set.
    unsafe fn ones() -> Self;
    unsafe fn from_plane(p: Plane) -> Self;
    unsafe fn to_plane(self) -> Plane;
    unsafe fn and(self, o: Self) -> Self;
    unsafe fn or(self, o: Self) -> Self;
    unsafe fn xor(self, o: Self) -> Self;
    /// `self & !o`.
    unsafe fn and_not(self, o: Self) -> Self;
    /// Whether any bit is set.
    unsafe fn any(self) -> bool;
    /// Each 64-bit word plus `o`'s, wrapping.
    unsafe fn add64(self, o: Self) -> Self;
    /// Each 64-bit word rotated left by `L` bits (`R` = 64 − `L`).
    unsafe fn rotl64<const L: i32, const R: i32>(self) -> Self;
    /// Each 64-bit word shifted left by `L` bits.
    unsafe fn shl64<const L: i32>(self) -> Self;
    /// `a` where `self` is set, `b` elsewhere.
    #[inline(always)]
    unsafe fn select(self, a: Self, b: Self) -> Self {
        a.and(self).or(b.and_not(self))
    }
    /// Every bit flipped.
    #[inline(always)]
    unsafe fn not(self) -> Self {
        self.xor(Self::ones())
    }
}

impl Bits for Plane {
    #[inline(always)]
    unsafe fn zero() -> Self {
        [0; 4]
    }
    #[inline(always)]
    unsafe fn ones() -> Self {
        [u64::MAX; 4]
    }
    #[inline(always)]
    unsafe fn from_plane(p: Plane) -> Self {
        p
    }
    #[inline(always)]
    unsafe fn to_plane(self) -> Plane {
        self
    }
    #[inline(always)]
    unsafe fn and(self, o: Self) -> Self {
        std::array::from_fn(|i| self[i] & o[i])
    }
    #[inline(always)]
    unsafe fn or(self, o: Self) -> Self {
        std::array::from_fn(|i| self[i] | o[i])
    }
    #[inline(always)]
    unsafe fn xor(self, o: Self) -> Self {
        std::array::from_fn(|i| self[i] ^ o[i])
    }
    #[inline(always)]
    unsafe fn and_not(self, o: Self) -> Self {
        std::array::from_fn(|i| self[i] & !o[i])
    }
    #[inline(always)]
    unsafe fn any(self) -> bool {
        (self[0] | self[1] | self[2] | self[3]) != 0
    }
    #[inline(always)]
    unsafe fn add64(self, o: Self) -> Self {
        std::array::from_fn(|i| self[i].wrapping_add(o[i]))
    }
    #[inline(always)]
    unsafe fn rotl64<const L: i32, const R: i32>(self) -> Self {
        std::array::from_fn(|i| self[i].rotate_left(L as u32))
    }
    #[inline(always)]
    unsafe fn shl64<const L: i32>(self) -> Self {
        std::array::from_fn(|i| self[i] << L)
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use avx2::Avx2;

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{Bits, Plane};

    /// A plane in one AVX2 register.
    #[derive(Clone, Copy)]
    pub(crate) struct Avx2(__m256i);

    impl Bits for Avx2 {
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn zero() -> Self {
            Self(_mm256_setzero_si256())
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn ones() -> Self {
            Self(_mm256_set1_epi64x(-1))
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn from_plane(p: Plane) -> Self {
            Self(_mm256_loadu_si256(p.as_ptr().cast()))
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn to_plane(self) -> Plane {
            let mut p = [0u64; 4];
            _mm256_storeu_si256(p.as_mut_ptr().cast(), self.0);
            p
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn and(self, o: Self) -> Self {
            Self(_mm256_and_si256(self.0, o.0))
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn or(self, o: Self) -> Self {
            Self(_mm256_or_si256(self.0, o.0))
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn xor(self, o: Self) -> Self {
            Self(_mm256_xor_si256(self.0, o.0))
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn and_not(self, o: Self) -> Self {
            Self(_mm256_andnot_si256(o.0, self.0))
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn any(self) -> bool {
            _mm256_testz_si256(self.0, self.0) == 0
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn add64(self, o: Self) -> Self {
            Self(_mm256_add_epi64(self.0, o.0))
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn rotl64<const L: i32, const R: i32>(self) -> Self {
            const { assert!(L + R == 64) };
            Self(_mm256_or_si256(
                _mm256_slli_epi64::<L>(self.0),
                _mm256_srli_epi64::<R>(self.0),
            ))
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn shl64<const L: i32>(self) -> Self {
            Self(_mm256_slli_epi64::<L>(self.0))
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn select(self, a: Self, b: Self) -> Self {
            Self(_mm256_or_si256(
                _mm256_and_si256(self.0, a.0),
                _mm256_andnot_si256(self.0, b.0),
            ))
        }
    }
}

/// Where planes of random bits come from.
pub(crate) trait PlaneSource<B: Bits> {
    /// The next plane of random bits.
    ///
    /// # Safety
    /// As [`Bits`]'.
    unsafe fn plane(&mut self) -> B;
}

/// The planes of [`LANES`] lane streams: plane `k` is the next words of lanes `4g` to
/// `4g + 3`, `g = k mod 8`, each lane's xoshiro256++ as `rand_xoshiro` steps it.
#[derive(Clone)]
pub(crate) struct LanePlanes<B> {
    /// `s[g][k]`: state word `k` of group `g`'s four lanes.
    s: [[B; 4]; GROUPS],
    group: usize,
    planes: u64,
}

impl<B: Bits> LanePlanes<B> {
    /// Planes from the lanes' xoshiro256++ states ([`DiceStream::lane_states`]).
    ///
    /// # Safety
    /// As [`Bits`]'.
    #[inline(always)]
    pub(crate) unsafe fn new(lanes: &[[u64; 4]; LANES]) -> Self {
        Self {
            s: std::array::from_fn(|g| {
                std::array::from_fn(|k| B::from_plane(std::array::from_fn(|i| lanes[4 * g + i][k])))
            }),
            group: 0,
            planes: 0,
        }
    }

    /// The words drawn so far: four a plane.
    pub(crate) fn words(&self) -> u64 {
        4 * self.planes
    }
}

impl<B: Bits> PlaneSource<B> for LanePlanes<B> {
    #[inline(always)]
    unsafe fn plane(&mut self) -> B {
        let g = self.group;
        self.group = (g + 1) % GROUPS;
        self.planes += 1;
        let [s0, s1, s2, s3] = self.s[g];
        let word = s0.add64(s3).rotl64::<23, 41>().add64(s0);
        let t = s1.shl64::<17>();
        let s2 = s2.xor(s0);
        let s3 = s3.xor(s1);
        let s1 = s1.xor(s2);
        let s0 = s0.xor(s3);
        let s2 = s2.xor(t);
        let s3 = s3.rotl64::<45, 19>();
        self.s[g] = [s0, s1, s2, s3];
        word
    }
}

/// One face (0–5) for each of [`PLANE_BATTLES`] battles, as planes `[1s, 2s, 4s]`: `d2`
/// from one plane, then `d3`'s two bits, redrawn where both are set while any battle
/// has both (the module's doc says why each face is exactly uniform).
///
/// # Safety
/// As [`Bits`]'.
#[inline(always)]
pub(crate) unsafe fn d6<B: Bits, S: PlaneSource<B>>(source: &mut S) -> [B; 3] {
    let ones = source.plane();
    let (mut fours, mut twos) = (source.plane(), source.plane());
    let mut again = fours.and(twos);
    while again.any() {
        let (a, b) = (source.plane(), source.plane());
        fours = again.select(a, fours);
        twos = again.select(b, twos);
        again = again.and(a.and(b));
    }
    [ones, twos, fours]
}

/// Battles set in a plane.
///
/// # Safety
/// As [`Bits`]'.
#[inline(always)]
pub(crate) unsafe fn popcount<B: Bits>(p: B) -> u64 {
    p.to_plane().iter().map(|w| u64::from(w.count_ones())).sum()
}

/// The plane of a sweep's first `battles` battles (the live ones).
pub(crate) fn live_plane(battles: usize) -> Plane {
    std::array::from_fn(|w| {
        let bits = battles.saturating_sub(64 * w).min(64);
        if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        }
    })
}

/// Adds `bit` (0 or 1 a battle) to each battle's binary counter `counter` (bit `i` of
/// the count in plane `i`), wrapping past its width.
///
/// # Safety
/// As [`Bits`]'.
#[inline(always)]
pub(crate) unsafe fn increment<B: Bits>(counter: &mut [B], bit: B) {
    let mut carry = bit;
    for plane in counter {
        let next = plane.and(carry);
        *plane = plane.xor(carry);
        carry = next;
    }
}

/// Where a binary counter (bit `i` in plane `i`) equals `k`.
///
/// # Safety
/// As [`Bits`]'.
#[inline(always)]
pub(crate) unsafe fn equals<B: Bits>(counter: &[B], k: usize) -> B {
    let mut r = B::ones();
    for (i, &bit) in counter.iter().enumerate() {
        r = if k >> i & 1 == 1 {
            r.and(bit)
        } else {
            r.and_not(bit)
        };
    }
    r
}

/// Adds to `into[k]` the battles of `live` whose counter equals `k`.
///
/// # Safety
/// As [`Bits`]'.
#[inline(always)]
pub(crate) unsafe fn tally<B: Bits>(into: &mut [u64], counter: &[B], live: B) {
    for (k, slot) in into.iter_mut().enumerate() {
        *slot += popcount(equals(counter, k).and(live));
    }
}

/// The minterms of `bits` into `out`: `out[k]` where bit `i` of `bits` is bit `i` of `k`,
/// for `k` below `2^bits.len()` (two operations a minterm).
///
/// # Safety
/// As [`Bits`]'.
///
/// # Panics
/// Where `out` is shorter than `2^bits.len()`.
#[inline(always)]
pub(crate) unsafe fn minterms<B: Bits>(bits: &[B], out: &mut [B]) {
    assert!(bits.len() < usize::BITS as usize && out.len() >= 1 << bits.len());
    // PERF: unchecked, after the one check above: a bounds check on every write cost the
    // frontier sweep 54 instructions a battle (callgrind) when this became a function of
    // slices.
    *out.get_unchecked_mut(0) = B::ones();
    for (i, &bit) in bits.iter().enumerate() {
        for k in (0..1usize << i).rev() {
            // SAFETY: `k | 1 << i < 2^bits.len() <= out.len()`, asserted above.
            let low = *out.get_unchecked(k);
            *out.get_unchecked_mut(k | 1 << i) = low.and(bit);
            *out.get_unchecked_mut(k) = low.and_not(bit);
        }
    }
}

/// Battle `i`'s face in `planes` (the tests read faces back).
#[cfg(test)]
pub(crate) fn face(planes: &[Plane; 3], i: usize) -> u32 {
    let bit = |p: &Plane| (p[i / 64] >> (i % 64) & 1) as u32;
    bit(&planes[0]) | bit(&planes[1]) << 1 | bit(&planes[2]) << 2
}

/// The floor of a bit-sliced kernel's dice: `sweeps` sweeps of `faces` faces each for
/// [`PLANE_BATTLES`] battles, from the lane streams split from `dice`, folded into a
/// value so that none is dropped, and no rule applied. Returns the words drawn (the
/// lanes' keys and their planes' words) and the folded value: the same on every CPU,
/// in AVX2 registers where the CPU has it.
pub fn fold_faces(dice: &mut DiceStream, sweeps: u64, faces: u64) -> (u64, u64) {
    let lanes = dice.lane_states();
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        let (words, folded) = unsafe { fold_faces_avx2(&lanes, sweeps * faces) };
        return (LANES as u64 + words, folded);
    }
    // SAFETY: plain words need nothing of the CPU.
    let (words, folded) = unsafe { fold_faces_in::<Plane>(&lanes, sweeps * faces) };
    (LANES as u64 + words, folded)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fold_faces_avx2(lanes: &[[u64; 4]; LANES], faces: u64) -> (u64, u64) {
    fold_faces_in::<Avx2>(lanes, faces)
}

#[inline(always)]
unsafe fn fold_faces_in<B: Bits>(lanes: &[[u64; 4]; LANES], faces: u64) -> (u64, u64) {
    let mut source = LanePlanes::<B>::new(lanes);
    let mut folded = [B::zero(); 3];
    for _ in 0..faces {
        let planes = d6(&mut source);
        for (f, p) in folded.iter_mut().zip(planes) {
            *f = f.rotl64::<1, 63>().xor(p);
        }
    }
    let folded = folded
        .iter()
        .flat_map(|f| f.to_plane())
        .fold(0u64, |acc, w| acc.rotate_left(7) ^ w);
    (source.words(), folded)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Planes from a script: the known-answer source.
    struct Script(Vec<Plane>, usize);

    impl PlaneSource<Plane> for Script {
        unsafe fn plane(&mut self) -> Plane {
            self.1 += 1;
            self.0[self.1 - 1]
        }
    }

    /// A face's planes: `d2` as drawn; `d3`'s pair kept where it is not 3, and where it is,
    /// the next pair, until no battle is left at 3; nothing drawn past that.
    #[test]
    fn a_face_keeps_each_battles_first_pair_that_is_not_three() {
        let ones = [0b1010, 0, 0, 1 << 63];
        // Pairs (fours, twos) of battles 0–3 of word 0: first 3, 2, 1, 0; then battle 0
        // again 3 and battle 3 (bit 63 of word 3) 3; then battle 0 gets 1 and battle 3 2.
        let script = vec![
            ones,
            [0b0011, 0, 0, 1 << 63],
            [0b0101, 0, 0, 1 << 63],
            [0b1111, 0, 0, u64::MAX],
            [0b1111, 0, 0, u64::MAX],
            [0b0110, 0, 0, 1 << 63],
            [0b1111, 0, 0, 0],
            // Never drawn.
            [u64::MAX; 4],
        ];
        let mut source = Script(script, 0);
        // SAFETY: plain words.
        let planes = unsafe { d6(&mut source) };
        assert_eq!(source.1, 7, "two redraws, then none left at 3");
        // Battle 0: d2 0, d3 first 3, then 3, then 1 (twos set): face 2.
        // Battle 1: d2 1, d3 2 (fours): face 5. Battle 2: d2 0, d3 1: face 2.
        // Battle 3: d2 1, d3 0: face 1. Battle 255 (word 3, bit 63): d2 1, d3 3, 3, 2: 5.
        let faces: Vec<u32> = [0, 1, 2, 3, 255].map(|i| face(&planes, i)).to_vec();
        assert_eq!(faces, [2, 5, 2, 1, 5]);
        // Every other battle: d2 0 and its first pair (0, 0).
        assert!((4..255).all(|i| face(&planes, i) == 0));
    }

    /// Pearson's χ² of `counts` against equal shares.
    fn chi_square(counts: &[u64]) -> f64 {
        let n: u64 = counts.iter().sum();
        let expected = n as f64 / counts.len() as f64;
        counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum()
    }

    /// Over 4 000 faces for each of 256 battles (seed fixed), every face is 0–5, and the
    /// faces (5 degrees of freedom) and each battle's successive pairs (35) pass Pearson's
    /// χ² at the 10^−6 level (critical values 35.89 and 89.95): a face of 6 or 7, a
    /// battle's face that repeats or leans, or planes that repeat, would not.
    #[test]
    fn faces_are_uniform_and_each_battles_next_face_independent() {
        let mut dice = DiceStream::for_block(16, 0);
        // SAFETY (here and below): plain words.
        let mut source = unsafe { LanePlanes::<Plane>::new(&dice.lane_states()) };
        let (mut faces, mut pairs) = ([0u64; 6], [0u64; 36]);
        let mut last = unsafe { d6(&mut source) };
        for _ in 0..4_000 {
            let next = unsafe { d6(&mut source) };
            for i in 0..PLANE_BATTLES {
                let (a, b) = (face(&last, i), face(&next, i));
                assert!(b < 6, "battle {i}: face {b}");
                faces[b as usize] += 1;
                pairs[(6 * a + b) as usize] += 1;
            }
            last = next;
        }
        assert!(chi_square(&faces) < 35.89, "{faces:?}");
        assert!(chi_square(&pairs) < 89.95, "{pairs:?}");
        // 1 + 2 E[pairs] = 10.835 planes a face (E[pairs] = Σ_r P(a battle left at 3
        // after r pairs) = 4.918, variance 0.934): within five standard errors (0.031
        // each over 4 001 faces).
        let planes = source.words() as f64 / 4.0 / 4_001.0;
        assert!((planes - 10.835).abs() < 0.153, "{planes} planes a face");
    }

    /// A plane is the next words of four lane streams, the groups in turn, as
    /// `DiceStream` draws them; and `fold_faces` draws and folds the same on AVX2 and
    /// without it.
    #[test]
    fn planes_are_the_lane_streams_words_in_turn() {
        for seed in 0..4 {
            let lanes = DiceStream::for_block(seed, 3).lane_states();
            let mut streams = lanes.map(DiceStream::from_state);
            // SAFETY: plain words.
            let mut planes = unsafe { LanePlanes::<Plane>::new(&lanes) };
            for k in 0..100 {
                let g = k % GROUPS;
                let words: Plane = std::array::from_fn(|i| streams[4 * g + i].next_u64());
                assert_eq!(unsafe { planes.plane() }, words, "seed {seed}, plane {k}");
            }
            assert_eq!(planes.words(), 400);
        }
        let lanes = DiceStream::for_block(5, 0).lane_states();
        // SAFETY: plain words.
        let plain = unsafe { fold_faces_in::<Plane>(&lanes, 300) };
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            assert_eq!(unsafe { fold_faces_avx2(&lanes, 300) }, plain);
        } else {
            eprintln!("this machine has no AVX2: that form did not run");
        }
        let lanes = DiceStream::for_block(9, 1).lane_states();
        let (words, folded) = unsafe { fold_faces_in::<Plane>(&lanes, 300) };
        assert_eq!(
            fold_faces(&mut DiceStream::for_block(9, 1), 3, 100),
            (LANES as u64 + words, folded)
        );
    }
}
