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
//! bit `k` of battle `i`'s face. This module draws them, and the bench times them with no
//! rule as the floor of such a kernel (`frontier/… as bit planes`). The kernel itself is
//! not built: docs/performance.md says what it would take.
//!
//! Exactness: a face is `d2 + 2·d3`. `d2` is one random bit. `d3` is `2a + b` from two
//! random bits, drawn again, in every battle at once, while any battle of the 256 has
//! both bits set (3): each battle's `d3` is the first of its own pairs that is not 3, so
//! it is exactly uniform on {0, 1, 2} and independent of `d2` and of every other battle's
//! face (how many redraws a face takes depends on all battles, but it chooses no battle's
//! value: a battle's pairs after its first good one are drawn and unread). So a face is
//! exactly uniform on 0–5, with no bias at all (the multiply-high cut has one of at most
//! 6 / 2^64). On average 4.92 pairs are drawn a face for 256 battles (the sum over `r` of
//! the chance that a battle is left at 3 after `r` pairs, 1 − (1 − 4^−r)^256), so a face
//! costs 10.84 planes of 256 bits: 0.17 words a battle.
//!
//! The planes come from [`LANES`] streams split from a block's, four words to a plane
//! (group `g`'s lanes `4g` to `4g + 3`, the groups in turn), so [`LanePlanes`] (any CPU)
//! and, where the CPU has AVX2, `avx2::D6Planes` draw the same planes (tested).

use super::lanes::LANES;
use super::DiceStream;

/// Battles to a plane: one bit each.
pub const PLANE_BATTLES: usize = 256;

/// A plane: bit `i % 64` of word `i / 64` is battle `i`'s.
pub type Plane = [u64; 4];

/// Four-word groups of lane streams the planes take turns on.
const GROUPS: usize = LANES / 4;

/// Where planes of random bits come from.
pub trait PlaneSource {
    /// The next plane of random bits.
    fn plane(&mut self) -> Plane;
}

/// The planes of [`LANES`] lane streams (any CPU): plane `k` is the next words of lanes
/// `4g` to `4g + 3`, `g = k mod 8`.
pub struct LanePlanes {
    streams: [DiceStream; LANES],
    group: usize,
    planes: u64,
}

impl LanePlanes {
    /// Planes from the lanes' xoshiro256++ states ([`DiceStream::lane_states`]).
    pub fn new(lanes: &[[u64; 4]; LANES]) -> Self {
        Self {
            streams: lanes.map(DiceStream::from_state),
            group: 0,
            planes: 0,
        }
    }

    /// The words drawn so far: four a plane.
    pub fn words(&self) -> u64 {
        4 * self.planes
    }
}

impl PlaneSource for LanePlanes {
    fn plane(&mut self) -> Plane {
        let g = self.group;
        self.group = (g + 1) % GROUPS;
        self.planes += 1;
        std::array::from_fn(|i| self.streams[4 * g + i].next_u64())
    }
}

/// One face (0–5) for each of [`PLANE_BATTLES`] battles, as planes `[1s, 2s, 4s]`: `d2`
/// from one plane, then `d3`'s two bits, redrawn where both are set while any battle
/// has both (the module's doc says why each face is exactly uniform).
pub fn d6<S: PlaneSource>(source: &mut S) -> [Plane; 3] {
    let ones = source.plane();
    let (mut fours, mut twos) = (source.plane(), source.plane());
    let mut again: Plane = std::array::from_fn(|i| fours[i] & twos[i]);
    while again.iter().any(|&w| w != 0) {
        let (a, b) = (source.plane(), source.plane());
        for i in 0..4 {
            fours[i] = fours[i] & !again[i] | a[i] & again[i];
            twos[i] = twos[i] & !again[i] | b[i] & again[i];
            again[i] &= a[i] & b[i];
        }
    }
    [ones, twos, fours]
}

/// Battle `i`'s face in `planes`.
pub fn face(planes: &[Plane; 3], i: usize) -> u32 {
    let bit = |p: &Plane| (p[i / 64] >> (i % 64) & 1) as u32;
    bit(&planes[0]) | bit(&planes[1]) << 1 | bit(&planes[2]) << 2
}

/// The floor of a bit-sliced kernel's dice: `sweeps` sweeps of `faces` faces each for
/// [`PLANE_BATTLES`] battles, from the lane streams split from `dice`, folded into a
/// value so that none is dropped, and no rule applied. Returns the words drawn (the
/// lanes' keys and their planes' words) and the folded value. AVX2's form where the CPU
/// has it, the same planes.
pub fn fold_faces(dice: &mut DiceStream, sweeps: u64, faces: u64) -> (u64, u64) {
    let lanes = dice.lane_states();
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        let (words, folded) = unsafe { avx2::fold_faces(&lanes, sweeps, faces) };
        return (LANES as u64 + words, folded);
    }
    let mut source = LanePlanes::new(&lanes);
    let mut folded = [[0u64; 4]; 3];
    for _ in 0..sweeps * faces {
        let planes = d6(&mut source);
        for (f, p) in folded.iter_mut().zip(planes) {
            for (f, p) in f.iter_mut().zip(p) {
                *f = f.rotate_left(1) ^ p;
            }
        }
    }
    (LANES as u64 + source.words(), fold(&folded))
}

/// The folded planes as one value.
fn fold(planes: &[[u64; 4]; 3]) -> u64 {
    planes
        .iter()
        .flatten()
        .fold(0u64, |acc, &w| acc.rotate_left(7) ^ w)
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    //! [`super::d6`] with the lanes' streams stepped in AVX2 registers, a plane a step.

    use std::arch::x86_64::*;

    use super::super::lanes::avx2::Streams;
    use super::{Plane, GROUPS, LANES};

    /// The planes of [`LANES`] lane streams, as [`super::LanePlanes`] draws them.
    pub struct D6Planes {
        streams: Streams,
        group: usize,
        planes: u64,
    }

    impl D6Planes {
        /// # Safety
        /// The CPU must have AVX2.
        #[target_feature(enable = "avx2")]
        pub unsafe fn new(lanes: &[[u64; 4]; LANES]) -> Self {
            Self {
                streams: Streams::new(lanes),
                group: 0,
                planes: 0,
            }
        }

        /// The words drawn so far: four a plane.
        pub fn words(&self) -> u64 {
            4 * self.planes
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn plane(&mut self) -> __m256i {
            let g = self.group;
            self.group = (g + 1) % GROUPS;
            self.planes += 1;
            self.streams.next(g)
        }

        /// [`super::d6`]: one face for each of 256 battles, as planes `[1s, 2s, 4s]`.
        ///
        /// # Safety
        /// The CPU must have AVX2.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub unsafe fn d6(&mut self) -> [__m256i; 3] {
            let ones = self.plane();
            let (mut fours, mut twos) = (self.plane(), self.plane());
            let mut again = _mm256_and_si256(fours, twos);
            while _mm256_testz_si256(again, again) == 0 {
                let (a, b) = (self.plane(), self.plane());
                // A select of bits (not `blendv`, which selects bytes).
                let pick = |was: __m256i, new: __m256i| {
                    _mm256_or_si256(_mm256_andnot_si256(again, was), _mm256_and_si256(again, new))
                };
                fours = pick(fours, a);
                twos = pick(twos, b);
                again = _mm256_and_si256(again, _mm256_and_si256(a, b));
            }
            [ones, twos, fours]
        }
    }

    /// A register as a [`Plane`].
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn plane(v: __m256i) -> Plane {
        let mut p = [0u64; 4];
        _mm256_storeu_si256(p.as_mut_ptr().cast(), v);
        p
    }

    /// [`super::fold_faces`] in registers: the planes' words and the folded value.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn fold_faces(lanes: &[[u64; 4]; LANES], sweeps: u64, faces: u64) -> (u64, u64) {
        let mut planes = D6Planes::new(lanes);
        let mut folded = [_mm256_setzero_si256(); 3];
        for _ in 0..sweeps * faces {
            let face = planes.d6();
            for (f, p) in folded.iter_mut().zip(face) {
                // A rotate of each word by one bit, as the scalar fold does.
                let rotated = _mm256_or_si256(_mm256_slli_epi64::<1>(*f), _mm256_srli_epi64::<63>(*f));
                *f = _mm256_xor_si256(rotated, p);
            }
        }
        (planes.words(), super::fold(&folded.map(|f| plane(f))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Planes from a script: the known-answer source.
    struct Script(Vec<Plane>, usize);

    impl PlaneSource for Script {
        fn plane(&mut self) -> Plane {
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
        let planes = d6(&mut source);
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
        let mut source = LanePlanes::new(&dice.lane_states());
        let (mut faces, mut pairs) = ([0u64; 6], [0u64; 36]);
        let mut last = d6(&mut source);
        for _ in 0..4_000 {
            let next = d6(&mut source);
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

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_planes_are_the_lanes_planes() {
        if !is_x86_feature_detected!("avx2") {
            eprintln!("this machine has no AVX2: that form did not run");
            return;
        }
        for seed in 0..4 {
            let lanes = DiceStream::for_block(seed, 3).lane_states();
            let mut scalar = LanePlanes::new(&lanes);
            // SAFETY: the CPU has AVX2.
            unsafe {
                let mut vector = avx2::D6Planes::new(&lanes);
                for _ in 0..1_000 {
                    let v = vector.d6().map(|p| avx2::plane(p));
                    assert_eq!(v, d6(&mut scalar));
                }
                assert_eq!(vector.words(), scalar.words());
            }
        }
        // And the fold: both forms draw and fold the same.
        let lanes = DiceStream::for_block(5, 0).lane_states();
        let mut source = LanePlanes::new(&lanes);
        let mut folded = [[0u64; 4]; 3];
        for _ in 0..300 {
            for (f, p) in folded.iter_mut().zip(d6(&mut source)) {
                for (f, p) in f.iter_mut().zip(p) {
                    *f = f.rotate_left(1) ^ p;
                }
            }
        }
        // SAFETY: the CPU has AVX2.
        let vector = unsafe { avx2::fold_faces(&lanes, 3, 100) };
        assert_eq!(vector, (source.words(), fold(&folded)));
    }
}
