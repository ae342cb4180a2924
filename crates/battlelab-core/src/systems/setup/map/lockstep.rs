//! One coalition's setup maps thirty-two at once, one to a lane, counted by the members'
//! faces.
//!
//! Why this module exists: a run counts seven totals a map (seven increments, scattered
//! over the histogram), and one map's dice are a short chain of multiplies on one word,
//! so a map at a time spends most of its time on bookkeeping. Here the [`LANES`] lanes of
//! [`CoalitionMap::count`] each roll a map a sweep, in four AVX-512 registers of eight (or,
//! on CPUs without AVX-512, eight AVX2 registers of four): the lanes' streams step in the
//! registers (`dice::lanes::avx512`, `dice::lanes::avx2`), each member's die is
//! cut there as [`CoalitionMap::roll`] cuts it, and a map is counted once, by its members'
//! faces as one number; the seven totals are added once a run per number that came up
//! ([`CoalitionMap::fold`], from the system's `finish`).
//! The maps are those [`CoalitionMap::roll`] rolls lane by lane on the lanes' streams (the
//! tests hold the two to the same counts), so which form runs changes no count.

// The vector form is x86-64's; elsewhere its helpers go unused.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

use super::CoalitionMap;
use crate::dice::lanes::{VectorForm, LANES};

/// Most joint values of a coalition's members' faces counted at once (6^5: five members;
/// 62 KB of counts).
const MAX_FACE_KEYS: usize = 7_776;

/// Maps a call must have for every joint value: the counts are zeroed and folded at most
/// once a call (once a run's parallel split, or a block where a paired comparison finishes
/// each block; a block is 65 536 maps), and a call may be all its counts see.
const MAPS_PER_FACE_KEY: u64 = 8;

/// Whether a call of `n` maps is worth counting by the members' faces: at most
/// [`MAX_FACE_KEYS`] joint values (five members), and [`MAPS_PER_FACE_KEY`] maps a value.
pub(super) fn worth(map: &CoalitionMap, n: u64) -> bool {
    map.face_keys()
        .is_some_and(|keys| keys <= MAX_FACE_KEYS && keys as u64 * MAPS_PER_FACE_KEY <= n)
}

/// Rolls [`CoalitionMap::count`]'s `n` maps on the lanes' streams (`lanes`) all lanes at
/// once, in the widest vector form the CPU has, and counts them by their members' faces
/// into `by_faces` (see [`all_at_once_in`]), returning the words each lane drew; or rolls
/// nothing and returns `None` where [`all_at_once_in`] does.
pub(super) fn all_at_once(
    map: &CoalitionMap,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    by_faces: &mut Vec<u64>,
) -> Option<u64> {
    all_at_once_in(VectorForm::detect()?, map, lanes, n, by_faces)
}

/// [`all_at_once`] in the form `form`, which the tests run in turn: each map adds one at
/// its members' faces as a number in `by_faces`, which holds every faces and then a spare
/// slot a lane (made so where it is empty; [`CoalitionMap::fold`] adds the faces' counts
/// to the totals). `None` (nothing rolled) where the CPU lacks the form or the map has
/// more than [`MAX_FACE_KEYS`] joint values (whatever `n`: see [`worth`]).
///
/// # Panics
/// Where `by_faces` is neither empty nor of the map's faces and the lanes' slots.
pub(super) fn all_at_once_in(
    form: VectorForm,
    map: &CoalitionMap,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    by_faces: &mut Vec<u64>,
) -> Option<u64> {
    let keys = map.face_keys().filter(|&k| k <= MAX_FACE_KEYS)?;
    #[cfg(target_arch = "x86_64")]
    if form.available() {
        if by_faces.is_empty() {
            *by_faces = vec![0; keys + LANES];
        }
        // The sweeps' unchecked counts rest on it.
        assert_eq!(by_faces.len(), keys + LANES, "a table of this map's faces");
        // SAFETY: the form's feature is detected; `by_faces` has a slot for every joint
        // value and a spare slot a lane.
        let sweeps = unsafe {
            match form {
                VectorForm::Avx512 => sweeps_avx512(map, lanes, n, by_faces),
                VectorForm::Avx2 => sweeps_avx2(map, lanes, n, by_faces),
            }
        };
        return Some(sweeps * map.words_per_map());
    }
    let _ = (form, keys, lanes, n, by_faces);
    None
}

/// Each step of `map` as the sweeps take it: whether it starts a word, its sides (1 for a
/// word with no member), and the member's weight in the faces' number, `6^k` for the
/// `k`-th member (0 for a step with none).
fn face_steps(map: &CoalitionMap) -> impl Iterator<Item = (bool, u64, u64)> + '_ {
    let mut weight = 1;
    map.steps.iter().map(move |step| {
        let w = if step.is_member() { weight } else { 0 };
        if step.is_member() {
            weight *= 6;
        }
        (step.new_word, u64::from(step.sides), w)
    })
}

/// The lanes in eight AVX2 registers of four 64-bit lanes: [`sweeps_avx512`]'s sweep, for
/// CPUs without AVX-512.
///
/// # Safety
/// As for [`sweeps_avx512`], with AVX2 for AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sweeps_avx2(
    map: &CoalitionMap,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    by_faces: &mut [u64],
) -> u64 {
    use crate::dice::lanes::avx2::{group, narrow, take_with_rest, Streams, GROUPS};
    use crate::dice::lanes::lane_battles;
    use std::arch::x86_64::*;
    let splat = |v: u64| _mm256_set1_epi64x(v as i64);
    let mut streams = Streams::new(lanes);
    let (zero, six, all) = (splat(0), splat(6), splat(u64::MAX));
    // `v / 6` for `v` below 2^32: `v · ⌈2^34 / 6⌉ >> 34`.
    let sixth = splat(0xAAAA_AAAB);
    let steps: Vec<(bool, __m256i, __m256i)> = face_steps(map)
        .map(|(new_word, sides, weight)| (new_word, splat(sides), splat(weight)))
        .collect();
    let mut left: [__m256i; GROUPS] = std::array::from_fn(|g| group(g, |l| lane_battles(n, l)));
    let spare: [__m256i; GROUPS] =
        std::array::from_fn(|g| group(g, |l| (by_faces.len() - LANES + l) as u64));
    let sweeps = lane_battles(n, 0);
    let mut keys = [0u32; LANES];
    for _ in 0..sweeps {
        for g in 0..GROUPS {
            let mut word = zero;
            let mut key = zero;
            for &(new_word, sides, weight) in &steps {
                if new_word {
                    word = streams.next(g);
                }
                let (value, rest) = take_with_rest(word, sides);
                word = rest;
                let quotient = _mm256_srli_epi64::<34>(_mm256_mul_epu32(value, sixth));
                let face = _mm256_sub_epi64(value, _mm256_mul_epu32(quotient, six));
                key = _mm256_add_epi64(key, _mm256_mul_epu32(face, weight));
            }
            let active = _mm256_xor_si256(_mm256_cmpeq_epi64(left[g], zero), all);
            // `active` is −1 where set.
            left[g] = _mm256_add_epi64(left[g], active);
            let slot = _mm256_blendv_epi8(spare[g], key, active);
            _mm_storeu_si128(keys.as_mut_ptr().add(4 * g).cast(), narrow(slot));
        }
        // SAFETY: as in `sweeps_avx512`.
        for &key in &keys {
            *by_faces.get_unchecked_mut(key as usize) += 1;
        }
    }
    sweeps
}

/// The lanes in four registers of eight 64-bit lanes, a map a lane each sweep; returns the
/// sweeps.
///
/// # Safety
/// The CPU must have AVX-512F, and `by_faces` must have `map.face_keys()` slots and then
/// [`LANES`] more.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sweeps_avx512(
    map: &CoalitionMap,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    by_faces: &mut [u64],
) -> u64 {
    use crate::dice::lanes::avx512::{group, take_with_rest, Streams, GROUPS};
    use crate::dice::lanes::lane_battles;
    use std::arch::x86_64::*;
    let splat = |v: u64| _mm512_set1_epi64(v as i64);
    let mut streams = Streams::new(lanes);
    let mut left: [__m512i; GROUPS] = std::array::from_fn(|g| group(g, |l| lane_battles(n, l)));
    let spare: [__m512i; GROUPS] =
        std::array::from_fn(|g| group(g, |l| (by_faces.len() - LANES + l) as u64));
    let (zero, one, six) = (splat(0), splat(1), splat(6));
    // `v / 6` for `v` below 2^32: `v · ⌈2^34 / 6⌉ >> 34`.
    let sixth = splat(0xAAAA_AAAB);
    let steps: Vec<(bool, __m512i, __m512i)> = face_steps(map)
        .map(|(new_word, sides, weight)| (new_word, splat(sides), splat(weight)))
        .collect();
    let sweeps = lane_battles(n, 0);
    let mut keys = [0u32; LANES];
    for _ in 0..sweeps {
        for g in 0..GROUPS {
            let mut word = zero;
            let mut key = zero;
            for &(new_word, sides, weight) in &steps {
                if new_word {
                    word = streams.next(g);
                }
                let (value, rest) = take_with_rest(word, sides);
                word = rest;
                let quotient = _mm512_srli_epi64::<34>(_mm512_mul_epu32(value, sixth));
                let face = _mm512_sub_epi64(value, _mm512_mul_epu32(quotient, six));
                key = _mm512_add_epi64(key, _mm512_mul_epu32(face, weight));
            }
            let active = _mm512_cmpneq_epu64_mask(left[g], zero);
            left[g] = _mm512_mask_sub_epi64(left[g], active, left[g], one);
            let slot = _mm512_mask_blend_epi64(active, spare[g], key);
            _mm256_storeu_si256(
                keys.as_mut_ptr().add(8 * g).cast(),
                _mm512_cvtepi64_epi32(slot),
            );
        }
        // SAFETY: an active lane's key is its members' faces as a number below
        // `6^members`, the table's values; any other lane's slot is its spare, one of the
        // last `LANES`.
        for &key in &keys {
            *by_faces.get_unchecked_mut(key as usize) += 1;
        }
    }
    sweeps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dice::lanes;
    use crate::dice::DiceStream;
    use crate::systems::setup::map::tests::test_map;
    use crate::systems::setup::map::{CoalitionCounts, CompiledMap};

    /// All at once counts what [`CoalitionMap::roll`] rolls lane by lane on the lanes'
    /// streams, for coalitions of one to five members (and words with no member), as run
    /// and called directly whatever `n`.
    #[test]
    fn lanes_at_once_count_the_maps_each_lane_rolls_on_its_own_stream() {
        let mut at_once = [0; 2];
        let mut sizes_at_once = [false; 14];
        let vector_cpu = VectorForm::detect().is_some();
        for (states, coalitions) in [
            (13, 3),
            (5, 1),
            (13, 13),
            (9, 2),
            (20, 4),
            (3, 3),
            (13, 1),
            (7, 1),
            (2, 4),
            (6, 3),
            (9, 3),
        ] {
            let states = test_map(states, |i| i % coalitions);
            for coalition in 0..coalitions {
                let one = CoalitionMap::new(&states, coalition);
                let offsets = [0, 400, 800, 1200, 1600, 2000, 2400];
                for n in [0, 1, 33, 3_001, 65_536] {
                    let start = DiceStream::for_block(coalition as u64, n);
                    let mut expected = vec![0u64; 2800];
                    let never = |_: &[[u64; 4]; LANES], _: &mut [u64]| None;
                    let words = lanes::fight_block(
                        &mut start.clone(),
                        n,
                        &mut expected[..],
                        never,
                        |d, h| {
                            let packed = one.roll(d);
                            for (q, &offset) in offsets.iter().enumerate() {
                                h[offset + CompiledMap::total(packed, q) as usize] += 1;
                            }
                            one.words_per_map()
                        },
                    );
                    assert_eq!(expected.iter().sum::<u64>(), 7 * n);
                    let mut counts = CoalitionCounts::new(2800);
                    let mut dice = start.clone();
                    let as_run = one.count(&mut dice, n, &offsets, &mut counts);
                    one.fold(&offsets, &mut counts);
                    assert!(counts.folded());
                    assert_eq!(counts.totals, expected, "coalition {coalition}, n {n}");
                    assert_eq!(
                        start.words_until(&dice, LANES as u64),
                        Some(if n == 0 { 0 } else { LANES as u64 })
                    );
                    if n > 0 {
                        let lane_states = start.clone().lane_states();
                        for form in VectorForm::ALL {
                            let mut by_faces = Vec::new();
                            if let Some(lane_words) =
                                all_at_once_in(form, &one, &lane_states, n, &mut by_faces)
                            {
                                let mut counts = CoalitionCounts {
                                    totals: vec![0; 2800],
                                    by_faces,
                                };
                                one.fold(&offsets, &mut counts);
                                let totals = counts.totals;
                                assert_eq!(
                                    totals, expected,
                                    "coalition {coalition}, n {n}, {form:?}"
                                );
                                assert_eq!(
                                    lane_words,
                                    lanes::lane_battles(n, 0) * one.words_per_map()
                                );
                                at_once[form as usize] += 1;
                            }
                        }
                        // Lane by lane the words are the maps'; at once (where the CPU can
                        // and the call is worth it), the first lane's share of maps in
                        // every lane.
                        let at_once_as_run = vector_cpu && worth(&one, n);
                        let expected_words = if at_once_as_run {
                            (lanes::lane_battles(n, 0) * one.words_per_map() + 1) * LANES as u64
                        } else {
                            words
                        };
                        assert_eq!(as_run, expected_words, "coalition {coalition}, n {n}");
                        sizes_at_once[one.face_keys().unwrap().ilog(6) as usize] |= at_once_as_run;
                    }
                }
            }
        }
        VectorForm::assert_ran_where_available(at_once);
        // As run, all at once for coalitions of every size up to five members.
        assert_eq!(sizes_at_once[..6], [vector_cpu; 6], "{sizes_at_once:?}");
    }
}
