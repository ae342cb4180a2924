//! Ratio battles with reserves thirty-two at once, one to a lane, with masks in place of
//! branches: runs fight here the lines with a reserve table that `ratio/sliced.rs` does
//! not (those whose policy reads the casualty points so far: `optimal` for the chance of
//! winning).
//!
//! Why this module exists: a line with a reserve table ([`ReserveTable`]) is fought one
//! battle at a time by [`RatioCombat::table_battle`], a chain through its combats (each
//! combat's dice cut from the word after the last one's, its code found from the reserves
//! used so far) that waits on one multiply and one load after another; on the AMD EPYC
//! (Zen 3) this project is measured on, the bench line cost 22 `next_u64` a battle that
//! way, past the ≤ 20 goal. Here a block's battles are fought in [`LANES`] lanes, each on
//! its own stream split from the block's (`dice::lanes`): lane `l` fights
//! [`lane_battles`]`(n, l)` battles one after another, so the battles, and so the counts,
//! are those [`RatioCombat::table_battle`] fights lane by lane (on CPUs without AVX2, and
//! the tests' reference). In the AVX2 sweeps every lane fights one battle a sweep, its
//! combats in step with the other lanes' (every battle of a line has the same combats and
//! words of line dice), eight lanes to a register and four registers in flight, so that one
//! register's chain of loads runs while the others wait.
//!
//! The dice, as [`RatioCombat::table_battle`] draws them: a word of line dice a segment
//! (the combats that share a word), and the word after the segment in which the battle's
//! first reserve commits, whose dice are every reserve's; while no reserve has committed,
//! each segment peeks the word after its own. Each lane holds its next word (`ahead`), so
//! that the peek is a read; a lane whose first reserve commits steps its stream (the other
//! lanes' streams stay put), so lanes draw different numbers of words, all their own.
//!
//! PERF (issue 16): `docs/performance.md` ("Ratio lines in lanes") has what was measured:
//! the bench line 22 → about 15.5 `next_u64` a battle on the AMD EPYC.
//!
//! [`RatioCombat::table_battle`]: super::RatioCombat::table_battle

// The vector form is x86-64's; elsewhere its helpers go unused.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

use super::{
    reserve_block, RatioCombat, ReserveTable, CODE_TAKEN, MAX_TABLE_RESERVES, POW6, STATES_JOINT,
    STATES_SIGNATURE,
};
use crate::dice::lanes::{lane_battles, VectorForm, LANES};

/// What a battle hands its count: its packed tallies, the reserves it used, and its states
/// as `STATES` sums them ([`super::RatioCombat::table_battle`]'s three results).
pub(super) trait CountBattle: FnMut(u64, usize, u64) {}
impl<F: FnMut(u64, usize, u64)> CountBattle for F {}

/// Fights the lanes' battles in the AVX2 sweeps, where the CPU has AVX2, handing each to
/// `count`, and returns the words the lanes' battles drew (all lanes together); `None`
/// (nothing fought) where it has not, or where `STATES` is not one the sweeps sum.
pub(super) fn all_at_once<
    const R: usize,
    const BLOCK: usize,
    const DIFF: bool,
    const STATES: u8,
>(
    t: &ReserveTable,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    count: &mut impl CountBattle,
) -> Option<u64> {
    const { assert!(R >= 1 && R <= MAX_TABLE_RESERVES && BLOCK.is_power_of_two()) };
    // The gathers' bounds rest on these (`with_reserve_table!` picks them from `t`).
    assert_eq!(
        (t.reserves, BLOCK, t.diff_len > 1),
        (R, reserve_block(R), DIFF),
        "a reserve table's sweeps with its own reserves, block and difference"
    );
    #[cfg(target_arch = "x86_64")]
    if VectorForm::Avx2.available() && (STATES == STATES_JOINT || STATES == STATES_SIGNATURE) {
        // SAFETY: the feature is detected above; `t` is a table `build_reserve_table`
        // built (the only one there is), with `R` reserves, blocks of `BLOCK` codes and a
        // difference range where `DIFF` (asserted above).
        return Some(unsafe { sweeps_avx2::<R, BLOCK, DIFF, STATES>(t, lanes, n, count) });
    }
    let _ = (t, lanes, n, count);
    None
}

/// `x mod 6^k` for `x < 6^MAX_TABLE_RESERVES`, by `x − 6^k · ⌊x · M / 2^21⌋` with `M =
/// ⌈2^21 / 6^k⌉` (checked for every such `x` and `k` below).
const REM_SHIFT: u32 = 21;
const fn rem_magic(k: usize) -> u32 {
    (1u32 << REM_SHIFT).div_ceil(POW6[k])
}
const _: () = {
    let mut k = 0;
    while k <= MAX_TABLE_RESERVES {
        let mut x = 0;
        while x < POW6[MAX_TABLE_RESERVES] {
            // (Within 32 bits: x · M < 1296 · 2^21.)
            assert!(x - POW6[k] * ((x * rem_magic(k)) >> REM_SHIFT) == x % POW6[k]);
            x += 1;
        }
        k += 1;
    }
};

/// The sweeps: one battle in every lane each, [`LANES`] lanes in four registers of eight
/// (64-bit values, the words, the tallies and the states, in two registers of four
/// each). Returns the words the active lanes' battles drew.
///
/// # Safety
/// The CPU must have AVX2, and `t` must be a table `RatioCombat::build_reserve_table` built
/// with `R` reserves, blocks of `BLOCK` codes, and a difference range when `DIFF` (the
/// gathers' bounds rest on its blocks, steps and padding).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sweeps_avx2<const R: usize, const BLOCK: usize, const DIFF: bool, const STATES: u8>(
    t: &ReserveTable,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    count: &mut impl CountBattle,
) -> u64 {
    use crate::dice::lanes::avx2::{join, narrow, take, take_with_rest, Streams, GROUPS, GROUPS32};
    use std::arch::x86_64::*;
    // Every 32-bit value compared below is under 2^31 (reserves used), so AVX2's signed
    // compares order them as unsigned; the casualty-point difference may be negative, and
    // is clamped by signed min and max. Codes' indices are below 2^19.
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let zero = _mm256_setzero_si256();
    let (v_byte, v_seven) = (splat(0xff), splat(7));
    let v_dice = _mm256_set1_epi64x(i64::from(POW6[R]));
    let v_offsets: [__m256i; MAX_TABLE_RESERVES + 1] =
        std::array::from_fn(|u| splat(t.used_offsets[u]));
    let v_used: [__m256i; MAX_TABLE_RESERVES + 1] = std::array::from_fn(|u| splat(u as u32));
    let v_block_shift = _mm_cvtsi32_si128(BLOCK.trailing_zeros() as i32);
    let (v_diff_lo, v_diff_last) = (
        _mm256_set1_epi32(t.diff_lo),
        splat(t.diff_len.saturating_sub(1) as u32),
    );
    // The codes from the 64-byte boundary the blocks start at; a gather reads four bytes
    // at a code's index (the table has three bytes of padding past its last block).
    let codes = t.codes.as_ptr().add(t.skip);
    debug_assert!(t.steps.last().is_some_and(|last| {
        let blocks = last.first_block as usize + t.diff_len * last.faces as usize;
        t.codes.len() >= t.skip + blocks * BLOCK + 3
    }));
    let mut streams = Streams::new(lanes);
    // Each lane's next word: what a battle peeks for its reserve dice, and draws next.
    let mut ahead: [__m256i; GROUPS] = std::array::from_fn(|g| streams.next(g));
    // Where the policy does not read the casualty-point difference, each combat's code in
    // each lane (`codes_out[c][lane]`), summed into tallies and states combat by combat once
    // the sweep is done: a few loads where two 64-bit gathers for eight lanes took a third
    // of the sweeps' time (with the count left out, the profile loop ran 116 M battles/s
    // without those gathers, 81 M with them).
    let mut codes_out = [[0u32; LANES]; super::MAX_COMBATS];
    let (mut out_packed, mut out_used, mut out_states) =
        ([0u64; LANES], [0u32; LANES], [0u64; LANES]);
    let segments = t.segments.len() as u64;
    let sweeps = n.div_ceil(LANES as u64);
    let mut words = 0;
    for sweep in 0..sweeps {
        // The lanes with a battle left: the first `active`.
        let active = (0..LANES)
            .take_while(|&l| lane_battles(n, l) > sweep)
            .count();
        let active_bits = (1u64 << active) - 1;
        let mut reserve_words = 0u32;
        // The four registers of eight lanes, combat by combat: one register's chain of
        // gathers runs while the others' wait. (One register through a whole battle, then
        // the next, was slower: 52 M battles/s against 55 in the profile loop.)
        let mut used = [zero; GROUPS32];
        let mut drawn = [zero; GROUPS32];
        let mut at = [[zero; MAX_TABLE_RESERVES + 1]; GROUPS32];
        let mut packed = [zero; GROUPS];
        let mut states = [zero; GROUPS];
        for &(first, end) in &t.segments {
            let mut word = ahead;
            for (g, next) in ahead.iter_mut().enumerate() {
                *next = streams.next(g);
            }
            // Where the code for each number of reserves used lies in a block, from the
            // next word's reserve dice, in the lanes that have used none.
            for h in 0..GROUPS32 {
                let fresh = _mm256_cmpeq_epi32(used[h], zero);
                let all = join(
                    narrow(take(ahead[2 * h], v_dice)),
                    narrow(take(ahead[2 * h + 1], v_dice)),
                );
                for u in 0..=R {
                    // `all mod 6^(R − u)`: `all` itself for none used, 0 for all of them.
                    let k = R - u;
                    let rest = match k {
                        0 => zero,
                        _ if k == R => all,
                        _ => {
                            let quotient = _mm256_srli_epi32::<{ REM_SHIFT as i32 }>(
                                _mm256_mullo_epi32(all, splat(rem_magic(k))),
                            );
                            _mm256_sub_epi32(all, _mm256_mullo_epi32(quotient, splat(POW6[k])))
                        }
                    };
                    let place = _mm256_add_epi32(v_offsets[u], rest);
                    at[h][u] = _mm256_blendv_epi8(at[h][u], place, fresh);
                }
            }
            for (c, step) in t.steps.iter().enumerate().take(end).skip(first) {
                let faces = _mm256_set1_epi64x(i64::from(step.faces));
                let mut face = [zero; GROUPS];
                for g in 0..GROUPS {
                    (face[g], word[g]) = take_with_rest(word[g], faces);
                }
                let v_first_block = splat(step.first_block);
                // A state's term of the joint key, `state × joint_place`: `state × 7^(c mod
                // 3)`, shifted to its group's bits.
                let joint_shift = step.joint_place.trailing_zeros();
                let v_joint_multiple = splat((step.joint_place >> joint_shift) as u32);
                let v_joint_shift = _mm_cvtsi32_si128(joint_shift as i32);
                for h in 0..GROUPS32 {
                    let f = join(narrow(face[2 * h]), narrow(face[2 * h + 1]));
                    let mut at_used = at[h][0];
                    for u in 1..=R {
                        at_used = _mm256_blendv_epi8(
                            at_used,
                            at[h][u],
                            _mm256_cmpeq_epi32(used[h], v_used[u]),
                        );
                    }
                    let mut block = _mm256_add_epi32(v_first_block, f);
                    if DIFF {
                        // The casualty-point difference (enemy − own) so far, from the
                        // tallies' low bytes, within the table's range.
                        let cp = join(narrow(packed[2 * h]), narrow(packed[2 * h + 1]));
                        let a = _mm256_and_si256(cp, v_byte);
                        let b = _mm256_and_si256(_mm256_srli_epi32::<8>(cp), v_byte);
                        let diff = if t.side == 0 {
                            _mm256_sub_epi32(b, a)
                        } else {
                            _mm256_sub_epi32(a, b)
                        };
                        let d = _mm256_min_epi32(
                            _mm256_max_epi32(_mm256_sub_epi32(diff, v_diff_lo), zero),
                            v_diff_last,
                        );
                        block = _mm256_add_epi32(block, _mm256_mullo_epi32(d, splat(step.faces)));
                    }
                    let index = _mm256_add_epi32(_mm256_sll_epi32(block, v_block_shift), at_used);
                    let code =
                        _mm256_and_si256(_mm256_i32gather_epi32::<1>(codes.cast(), index), v_byte);
                    used[h] = _mm256_add_epi32(
                        used[h],
                        _mm256_and_si256(_mm256_srli_epi32::<{ CODE_TAKEN as i32 }>(code), v_seven),
                    );
                    if !DIFF {
                        _mm256_storeu_si256(codes_out[c].as_mut_ptr().add(8 * h).cast(), code);
                        continue;
                    }
                    let halves = [
                        _mm256_castsi256_si128(code),
                        _mm256_extracti128_si256::<1>(code),
                    ];
                    let states_now = if STATES == STATES_JOINT {
                        let term =
                            _mm256_mullo_epi32(_mm256_and_si256(code, v_seven), v_joint_multiple);
                        [
                            _mm256_cvtepu32_epi64(_mm256_castsi256_si128(term)),
                            _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(term)),
                        ]
                        .map(|wide| _mm256_sll_epi64(wide, v_joint_shift))
                    } else {
                        halves.map(|half| {
                            _mm256_i32gather_epi64::<8>(step.signature_terms.as_ptr().cast(), half)
                        })
                    };
                    for (i, half) in halves.into_iter().enumerate() {
                        let g = 2 * h + i;
                        packed[g] = _mm256_add_epi64(
                            packed[g],
                            _mm256_i32gather_epi64::<8>(step.tallies.as_ptr().cast(), half),
                        );
                        states[g] = _mm256_add_epi64(states[g], states_now[i]);
                    }
                }
            }
            // The lanes whose first reserve committed in this segment draw the reserve word.
            for h in 0..GROUPS32 {
                let draw = _mm256_andnot_si256(drawn[h], _mm256_cmpgt_epi32(used[h], zero));
                drawn[h] = _mm256_or_si256(drawn[h], draw);
                let lanes_drawing = _mm256_movemask_ps(_mm256_castsi256_ps(draw)) as u32;
                reserve_words += (u64::from(lanes_drawing) << (8 * h) & active_bits).count_ones();
                for (i, half) in [
                    _mm256_castsi256_si128(draw),
                    _mm256_extracti128_si256::<1>(draw),
                ]
                .into_iter()
                .enumerate()
                {
                    let g = 2 * h + i;
                    let mask = _mm256_cvtepi32_epi64(half);
                    ahead[g] = _mm256_blendv_epi8(ahead[g], streams.next_where(g, mask), mask);
                }
            }
        }
        if DIFF {
            for g in 0..GROUPS {
                _mm256_storeu_si256(out_packed.as_mut_ptr().add(4 * g).cast(), packed[g]);
                _mm256_storeu_si256(out_states.as_mut_ptr().add(4 * g).cast(), states[g]);
            }
        }
        for (h, used) in used.into_iter().enumerate() {
            _mm256_storeu_si256(out_used.as_mut_ptr().add(8 * h).cast(), used);
        }
        words += segments * active as u64 + u64::from(reserve_words);
        if !DIFF {
            // Combat by combat over the lanes (every lane's codes are codes of the table,
            // those of lanes with no battle left too).
            let (mut tallies, mut states) = ([0u64; LANES], [0u64; LANES]);
            for (c, (step, codes)) in t.steps.iter().zip(&codes_out).enumerate() {
                for l in 0..LANES {
                    let code = codes[l] as u8;
                    tallies[l] += step.tallies[usize::from(code)];
                    states[l] += RatioCombat::state_term::<STATES>(code, step, c);
                }
            }
            for l in 0..active {
                count(tallies[l], out_used[l] as usize, states[l]);
            }
        } else {
            for l in 0..active {
                count(out_packed[l], out_used[l] as usize, out_states[l]);
            }
        }
    }
    words
}
