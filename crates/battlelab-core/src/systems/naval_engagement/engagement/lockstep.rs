//! Naval engagements thirty-two at once, one to a lane, with masks in place of branches.
//!
//! Why this module exists: [`EngagementKernel::engage`] fights one engagement at a time,
//! and the number of rounds is the dice's: the loop's exit is a branch no predictor can
//! learn, and every engagement pays for it, and for its bookkeeping, in scalar
//! instructions. Here a block's engagements are fought in [`LANES`] lanes, each on its own
//! stream split from the block's (`dice::lanes`): lane `l` fights
//! [`lane_battles`]`(n, l)` engagements one after another on its stream, so the engagements
//! are the same whichever form fights them: the vector sweeps (x86-64 with AVX-512F or AVX2,
//! detected at run time), where the lanes advance together, one round each a sweep, and a
//! lane whose engagement ends counts it and starts its next in the same sweep; or
//! [`EngagementKernel::engage`] lane by lane, on any machine, for engagements too large
//! for the count tables, and for calls of fewer engagements than a quarter of the tables'
//! slots (which are zeroed and read once a call). The tests hold both to the rules' own round step lane by lane. It
//! is how runs fight naval engagements (`systems::naval_engagement`).
//!
//! The dice: an engagement takes one fresh word a round (the battle die and the pursuit
//! die, `take(36)` as in the one-at-a-time kernel), from its lane's stream; in the vector
//! sweeps a lane with no engagement left draws its word and does not use it, until the
//! block's last lane is done. Whether an engagement is counted is decided before its first
//! die (each lane fights its share), so the counts keep the rules' distribution.
//!
//! PERF (issue 16; `docs/performance.md` has the steps): in the bench (0b47591), a counted
//! engagement costs 2.1 `next_u64` here, for 1.54 words, and 10.8 one at a time. What helped: the
//! lanes' streams stepped in the registers (`dice::lanes::avx512`), where drawing 32 words
//! from one stream was a serial chain that took half the time; two registers of sixteen for
//! the engagements (one's chain of gathers, effect then next row, runs while the other's
//! waits), a row table with a shift where `row_of` needs a multiply, counting every lane
//! every sweep with no branch (a lane that did not end counts in a spare slot, where a loop
//! over the ended lanes mispredicted its exit), the counts' keys by shifts, and one joint
//! key (one increment an engagement) where its table is small. Both forms read a round as
//! one gather from a [`StateTable`] where it is small (the row, then its effect, were two
//! gathers in a chain), and gather every register's rounds before stepping any: on the AMD
//! EPYC Zen 4 that took `profile naval-lockstep` from 280 to 475 M engagements/s (the AVX2
//! form, on the Zen 3, was 2.5 `next_u64` an engagement at 42805da).
//!
//! Engagements that do not validate ([`super::Engagement::validate`]): a round limit of 0
//! is refused (a panic, as the one-at-a-time count's was); fleets or round limits so large
//! that the count tables would pass [`Tally::MAX_SLOTS`] slots are fought lane by lane.

// The vector form is x86-64's; elsewhere its tables and helpers go unused.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

use super::{EngagementHistogram, EngagementKernel, EngagementResult, CONTINUES};
use crate::dice::lanes::{self, lane_battles, shares_fit_32_bits, LaneCounts, VectorForm, LANES};
use crate::dice::DiceStream;

/// One round's effect in 32 bits, for a gather: `lost[0]` (bits 0–1), `lost[1]` (2–3),
/// the code if a fleet is gone (5–7), the code otherwise (8–10; [`CONTINUES`] is 7).
/// Whether the pursuit intercepts needs no bit: the code otherwise is [`CONTINUES`] only
/// when it does (`RoundEffect::new`), so "not intercepted" is within "an ending code".
fn pack(kernel: &EngagementKernel) -> Vec<u32> {
    kernel
        .rounds
        .iter()
        .enumerate()
        .map(|(i, e)| {
            debug_assert!(kernel.intercepted[i % 36] || e.otherwise != CONTINUES);
            u32::from(e.lost[0])
                | u32::from(e.lost[1]) << 2
                | u32::from(e.destroyed) << 5
                | u32::from(e.otherwise) << 8
        })
        .collect()
}

/// Counts of ended engagements, added into the histogram at the end. Where the table is
/// small enough ([`Self::MAX_JOINT_SLOTS`]), one key holds the whole outcome: rounds,
/// result and the NSP each fleet lost, `(rounds · 8 + result) << joint_shift | losses`,
/// one increment an engagement. Otherwise two keys: (rounds, result) as
/// `rounds · 8 + result`, and (NSP lost by A, NSP lost by B) as
/// `lost_a << loss_shift | lost_b`. Keys are made by shifts. Each table ends in [`LANES`]
/// spare slots, one a lane, where a lane that did not end a counted engagement counts (so
/// that every lane counts every sweep). The vector sweeps' counts: the lane-by-lane form
/// records each engagement in the histogram.
struct Tally {
    /// The joint counts, or the (rounds, result) counts.
    by_result: LaneCounts,
    /// The (losses) counts; no keys where the key is joint.
    by_losses: LaneCounts,
    loss_shift: u32,
    /// Bits of the losses key in the joint key, where the key is joint.
    joint_shift: Option<u32>,
}

impl Tally {
    /// Most slots in both count tables together (2 MiB; the row table is then at most
    /// 1 MiB): 13,608 (109 KB) at the largest engagement that validates, 99 against 99
    /// NSP and 100 rounds.
    const MAX_SLOTS: usize = 1 << 18;

    /// Most slots in a joint table (2 MiB); larger engagements count by two keys.
    const MAX_JOINT_SLOTS: usize = 1 << 18;

    /// Whether the lanes can fight `kernel`'s engagements: count tables of at most
    /// [`Self::MAX_SLOTS`] (which also keeps every index of the vector sweeps, and the
    /// [`RowTable`], far within `i32`).
    fn fits(kernel: &EngagementKernel) -> bool {
        kernel.nsp.iter().all(|&s| s < 1 << 16)
            && kernel.round_limit < 1 << 16
            && Self::result_keys(kernel) + RowTable::len_for(kernel.nsp) <= Self::MAX_SLOTS
    }

    /// Most slots an engagement of the call: the counts are zeroed and read once a call,
    /// so a call of few engagements with large tables fights lane by lane (the bench
    /// engagement's joint table, 10 752 slots, takes 2 688 engagements; a block is 65 536).
    const SLOTS_PER_ENGAGEMENT: usize = 4;

    /// The tables' lengths (spare slots aside), and the joint key's shift where the key is
    /// joint.
    fn layout(kernel: &EngagementKernel) -> (usize, usize, Option<u32>) {
        let losses = RowTable::len_for(kernel.nsp);
        let joint_shift = losses.next_power_of_two().trailing_zeros();
        let joint_keys = Self::result_keys(kernel) << joint_shift;
        if joint_keys <= Self::MAX_JOINT_SLOTS {
            (joint_keys, 0, Some(joint_shift))
        } else {
            (Self::result_keys(kernel), losses, None)
        }
    }

    /// Whether a call of `n` engagements is worth the tables: at most
    /// [`Self::SLOTS_PER_ENGAGEMENT`] slots an engagement.
    fn worth(kernel: &EngagementKernel, n: u64) -> bool {
        let (by_result, by_losses, _) = Self::layout(kernel);
        ((by_result + by_losses) as u64).div_ceil(Self::SLOTS_PER_ENGAGEMENT as u64) <= n
    }

    fn new(kernel: &EngagementKernel) -> Self {
        let (by_result, by_losses, joint_shift) = Self::layout(kernel);
        Self {
            // In four copies: `LaneCounts`' PERF note.
            by_result: LaneCounts::new(by_result, 4),
            by_losses: LaneCounts::new(by_losses, 4),
            loss_shift: RowTable::shift_for(kernel.nsp),
            joint_shift,
        }
    }

    /// Result keys: eight a round, rounds 0 to the limit.
    fn result_keys(kernel: &EngagementKernel) -> usize {
        8 * (kernel.round_limit as usize + 1)
    }

    fn add_to(&self, h: &mut EngagementHistogram) {
        let mut add_losses = |key: usize, count| {
            h.nsp_lost[0][key >> self.loss_shift] += count;
            h.nsp_lost[1][key & ((1 << self.loss_shift) - 1)] += count;
        };
        for (key, count) in self.by_losses.counted() {
            add_losses(key, count);
        }
        for (key, count) in self.by_result.counted() {
            let key = match self.joint_shift {
                Some(shift) => {
                    add_losses(key & ((1 << shift) - 1), count);
                    key >> shift
                }
                None => key,
            };
            h.result[key % 8] += count;
            h.rounds[key / 8] += count;
        }
    }
}

impl EngagementKernel {
    /// `n` engagements in [`LANES`] lanes on the lanes' streams split from `dice`, counted
    /// into `h` (see the module docs): what a run's block does. The vector sweeps' tables
    /// (the packed effects, the rows, the counts, and for the AVX2 form the rounds by state,
    /// at most 64 KB) are built once a call: at most about 3 MiB (2 of them counts), about
    /// 0.16 MB at the largest engagement that validates.
    ///
    /// Returns the words drawn from all streams, the block's and the lanes' (for the
    /// benches' and `dice_count`'s words per engagement): the lanes' keys ([`LANES`] from
    /// `dice`, none where `n` is 0), and one word a round of each lane's engagements, or,
    /// in the vector sweeps, one word a lane every sweep until the last lane is done.
    ///
    /// # Panics
    /// On a round limit of 0, which no engagement that validates has.
    pub fn record_many(&self, dice: &mut DiceStream, n: u64, h: &mut EngagementHistogram) -> u64 {
        assert!(
            self.round_limit >= 1,
            "a naval engagement needs a round limit of at least 1 (Engagement::validate)"
        );
        lanes::fight_block(
            dice,
            n,
            h,
            |lanes, h| {
                (Tally::fits(self) && Tally::worth(self, n))
                    .then(|| self.all_at_once(lanes, n, h))
                    .flatten()
                    .map(|words| words * LANES as u64)
            },
            |dice, h| {
                let outcome = self.engage(dice);
                h.record(&outcome);
                u64::from(outcome.rounds)
            },
        )
    }

    /// The vector sweeps the CPU has ([`VectorForm::detect`]: AVX-512F, else AVX2),
    /// returning the sweeps; `None` (nothing fought) where it has neither.
    ///
    /// # Panics
    /// Where [`Tally::fits`] does not hold, or the round limit is 0.
    fn all_at_once(
        &self,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        h: &mut EngagementHistogram,
    ) -> Option<u64> {
        self.all_at_once_in(VectorForm::detect()?, lanes, n, h)
    }

    /// [`Self::all_at_once`] in the form `form`, which the tests run in turn where the
    /// CPU has it: `None` (nothing fought) where it has not, or where a lane's share passes
    /// 2^32 − 1 engagements.
    ///
    /// # Panics
    /// Where [`Tally::fits`] does not hold, or the round limit is 0.
    fn all_at_once_in(
        &self,
        form: VectorForm,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        h: &mut EngagementHistogram,
    ) -> Option<u64> {
        assert!(Tally::fits(self) && self.round_limit >= 1);
        // The sweeps count each lane's engagements left in 32 bits (a run's block is
        // 65,536).
        if !form.available() || !shares_fit_32_bits(n) {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        {
            let mut tally = Tally::new(self);
            // SAFETY: the form's feature is detected above, `Tally::fits` holds, the
            // round limit is at least 1 and the tally is `Tally::new(self)`'s.
            let sweeps = unsafe {
                match (form, tally.joint_shift.is_some()) {
                    (VectorForm::Avx512, true) => self.sweeps_avx512::<true>(lanes, n, &mut tally),
                    (VectorForm::Avx512, false) => {
                        self.sweeps_avx512::<false>(lanes, n, &mut tally)
                    }
                    (VectorForm::Avx2, true) => self.sweeps_avx2::<true>(lanes, n, &mut tally),
                    (VectorForm::Avx2, false) => self.sweeps_avx2::<false>(lanes, n, &mut tally),
                }
            };
            tally.add_to(h);
            Some(sweeps)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (lanes, n, h);
            None
        }
    }

    /// The lanes' engagements with the lanes' streams in eight AVX2 registers of four and
    /// the engagements in four of eight, for CPUs without AVX-512: [`Self::sweeps_avx512`]'s
    /// engagements, a lane's state its strengths as `a << shift | b` and a round a
    /// [`StateTable`] entry (one gather where the table is small, else built from the row's
    /// effect). Returns the sweeps (each draws a word in every lane).
    ///
    /// # Safety
    /// The CPU must have AVX2, the round limit must be at least 1, [`Tally::fits`] must
    /// hold, and `tally` must be `Tally::new(self)`'s (the counts' bounds rest on its
    /// lengths and shifts).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn sweeps_avx2<const JOINT: bool>(
        &self,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        tally: &mut Tally,
    ) -> u64 {
        use crate::dice::lanes::avx2::{group32, join, narrow, take, Streams, GROUPS32};
        use std::arch::x86_64::*;
        // Every 32-bit value below is under 2^31 (strengths and rounds below 2^16, states
        // below `Tally::MAX_SLOTS` in `StateTable::STATE_BITS` bits, keys
        // below `Tally::MAX_SLOTS + LANES`, entries below `StateTable::MAX_ENTRIES`), so
        // AVX2's signed compares order them as unsigned.
        let packed = pack(self);
        let rows = RowTable::new(self);
        let by_states = StateTable::new(&packed, &rows, self.nsp);
        #[cfg(test)]
        StateTable::ran(VectorForm::Avx2, by_states.is_some());
        let [init_a, init_b] = self.nsp;
        let splat = |v: u32| _mm256_set1_epi32(v as i32);
        // A lane's state: its fleets' strengths as `a << shift | b`.
        let init_ab = init_a << rows.shift | init_b;
        let v_init_ab = splat(init_ab);
        let (v_zero, v_one, v_three, v_seven, v_all) =
            (splat(0), splat(1), splat(3), splat(7), splat(u32::MAX));
        let v_low_b = splat((1 << rows.shift) - 1);
        let (v_36, v_state, v_byte, v_ends) = (
            splat(36),
            splat((1 << StateTable::STATE_BITS) - 1),
            splat(0xFF),
            splat(StateTable::ENDS),
        );
        let v_limit = splat(self.round_limit);
        let v_last_result = splat(EngagementResult::COUNT as u32 - 1);
        let v_shift = _mm_cvtsi32_si128(rows.shift as i32);
        debug_assert_eq!(JOINT, tally.joint_shift.is_some());
        let v_joint_shift = _mm_cvtsi32_si128(tally.joint_shift.unwrap_or(0) as i32);
        let v_faces = _mm256_set1_epi64x(36);
        let mut streams = Streams::new(lanes);
        let mut ab = [v_init_ab; GROUPS32];
        let mut round = [v_one; GROUPS32];
        let mut left: [__m256i; GROUPS32] =
            std::array::from_fn(|g| group32(g, |l| lane_battles(n, l) as u32));
        // A lane that did not end a counted engagement counts in its own spare slot past
        // the table's end; one that did, at its key.
        let spare = |table: &LaneCounts| -> [__m256i; GROUPS32] {
            std::array::from_fn(|g| group32(g, |l| table.spare(l)))
        };
        let spare_result = spare(&tally.by_result);
        let spare_losses = spare(&tally.by_losses);
        let mut keys_result = [0u32; LANES];
        let mut keys_losses = [0u32; LANES];
        let mut sweeps = 0;
        while left.iter().any(|&l| _mm256_testz_si256(l, l) == 0) {
            sweeps += 1;
            // PERF: every register's rounds are looked up first, then the registers step:
            // the gathers (a chain state → round → next state in each register) overlap.
            // Each round is a `StateTable` entry: one gather where the table is small (the
            // bench's 6 v 4), else built from the row's effect (two gathers).
            let mut entries = [v_zero; GROUPS32];
            for (h, entry) in entries.iter_mut().enumerate() {
                // The round's dice, `take(36)` of each lane's next word: the four lanes of
                // group `2h` and of group `2h + 1`, narrowed to 32 bits.
                // (No closure here: one would not inherit the target features.)
                let f = join(
                    narrow(take(streams.next(2 * h), v_faces)),
                    narrow(take(streams.next(2 * h + 1), v_faces)),
                );
                *entry = match &by_states {
                    Some(table) => _mm256_i32gather_epi32::<4>(
                        table.entries.as_ptr().cast(),
                        _mm256_add_epi32(_mm256_mullo_epi32(ab[h], v_36), f),
                    ),
                    None => {
                        // `StateTable::entry`, in the registers.
                        let row = _mm256_i32gather_epi32::<4>(rows.rows.as_ptr().cast(), ab[h]);
                        let e = _mm256_i32gather_epi32::<4>(
                            packed.as_ptr().cast(),
                            _mm256_add_epi32(row, f),
                        );
                        let (a, b) = (
                            _mm256_srl_epi32(ab[h], v_shift),
                            _mm256_and_si256(ab[h], v_low_b),
                        );
                        let lost_a = _mm256_and_si256(e, v_three);
                        let lost_b = _mm256_and_si256(_mm256_srli_epi32::<2>(e), v_three);
                        let a = _mm256_sub_epi32(a, _mm256_min_epu32(lost_a, a));
                        let b = _mm256_sub_epi32(b, _mm256_min_epu32(lost_b, b));
                        let gone = _mm256_or_si256(
                            _mm256_cmpeq_epi32(a, v_zero),
                            _mm256_cmpeq_epi32(b, v_zero),
                        );
                        let otherwise = _mm256_and_si256(_mm256_srli_epi32::<8>(e), v_seven);
                        let destroyed = _mm256_and_si256(_mm256_srli_epi32::<5>(e), v_seven);
                        let code = _mm256_blendv_epi8(otherwise, destroyed, gone);
                        let ends = _mm256_or_si256(
                            gone,
                            _mm256_xor_si256(_mm256_cmpeq_epi32(otherwise, v_seven), v_all),
                        );
                        _mm256_or_si256(
                            _mm256_or_si256(_mm256_sll_epi32(a, v_shift), b),
                            _mm256_or_si256(
                                _mm256_slli_epi32::<{ StateTable::STATE_BITS as i32 }>(code),
                                _mm256_and_si256(ends, v_ends),
                            ),
                        )
                    }
                };
            }
            for h in 0..GROUPS32 {
                let idle = _mm256_cmpeq_epi32(left[h], v_zero);
                let e = entries[h];
                let next_ab = _mm256_and_si256(e, v_state);
                let code = _mm256_and_si256(
                    _mm256_srli_epi32::<{ StateTable::STATE_BITS as i32 }>(e),
                    v_byte,
                );
                let ends = _mm256_cmpeq_epi32(_mm256_and_si256(e, v_ends), v_ends);
                let d = _mm256_or_si256(
                    ends,
                    _mm256_xor_si256(_mm256_cmpgt_epi32(v_limit, round[h]), v_all),
                );
                let counted = _mm256_andnot_si256(idle, d);
                let result = _mm256_min_epu32(code, v_last_result);
                let key_result = _mm256_or_si256(_mm256_slli_epi32::<3>(round[h]), result);
                // `(init_a − a) << shift | (init_b − b)`: no borrow, `b ≤ init_b`.
                let key_losses = _mm256_sub_epi32(v_init_ab, next_ab);
                let key_result = if JOINT {
                    _mm256_or_si256(_mm256_sll_epi32(key_result, v_joint_shift), key_losses)
                } else {
                    key_result
                };
                let slot_result = _mm256_blendv_epi8(spare_result[h], key_result, counted);
                _mm256_storeu_si256(keys_result.as_mut_ptr().add(8 * h).cast(), slot_result);
                if !JOINT {
                    let slot_losses = _mm256_blendv_epi8(spare_losses[h], key_losses, counted);
                    _mm256_storeu_si256(keys_losses.as_mut_ptr().add(8 * h).cast(), slot_losses);
                }
                ab[h] = _mm256_blendv_epi8(next_ab, v_init_ab, d);
                round[h] = _mm256_blendv_epi8(_mm256_add_epi32(round[h], v_one), v_one, d);
                // `counted` is −1 where set.
                left[h] = _mm256_add_epi32(left[h], counted);
            }
            // SAFETY: as in `sweeps_avx512`: every key is below its table's keys, and a
            // spare slot is one of the `LANES` after them.
            for i in 0..LANES {
                tally.by_result.add(i, keys_result[i]);
                if !JOINT {
                    tally.by_losses.add(i, keys_losses[i]);
                }
            }
        }
        sweeps
    }

    /// The lanes' engagements with the lanes' streams in four AVX-512 registers of eight
    /// and the engagements in two of sixteen, a lane's state its strengths as
    /// `a << shift | b` and a round a [`StateTable`] entry, as in [`Self::sweeps_avx2`]:
    /// one gather where the table is small, else built from the row's effect (two).
    /// Returns the sweeps (each draws a word in every lane).
    ///
    /// # Safety
    /// The CPU must have AVX-512F, the round limit must be at least 1, [`Tally::fits`]
    /// must hold, and `tally` must be `Tally::new(self)`'s (the counts' bounds rest on its
    /// lengths and shifts).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn sweeps_avx512<const JOINT: bool>(
        &self,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        tally: &mut Tally,
    ) -> u64 {
        use crate::dice::lanes::avx512::{halves, join, take, Streams, HALVES};
        use std::arch::x86_64::*;
        let packed = pack(self);
        let rows = RowTable::new(self);
        let by_states = StateTable::new(&packed, &rows, self.nsp);
        #[cfg(test)]
        StateTable::ran(VectorForm::Avx512, by_states.is_some());
        let [init_a, init_b] = self.nsp;
        let splat = |v: u32| _mm512_set1_epi32(v as i32);
        // A lane's state: its fleets' strengths as `a << shift | b`.
        let v_init_ab = splat(init_a << rows.shift | init_b);
        let (v_zero, v_one, v_three, v_seven) = (splat(0), splat(1), splat(3), splat(7));
        let v_low_b = splat((1 << rows.shift) - 1);
        let (v_36, v_state, v_byte, v_ends) = (
            splat(36),
            splat((1 << StateTable::STATE_BITS) - 1),
            splat(0xFF),
            splat(StateTable::ENDS),
        );
        let v_limit = splat(self.round_limit);
        let v_last_result = splat(EngagementResult::COUNT as u32 - 1);
        let v_shift = _mm_cvtsi32_si128(rows.shift as i32);
        debug_assert_eq!(JOINT, tally.joint_shift.is_some());
        let v_joint_shift = _mm_cvtsi32_si128(tally.joint_shift.unwrap_or(0) as i32);
        let v_faces = _mm512_set1_epi64(36);
        let mut streams = Streams::new(lanes);
        let mut ab = [v_init_ab; HALVES];
        let mut round = [v_one; HALVES];
        let mut left = halves(|l| lane_battles(n, l) as u32);
        let mut active = left.map(|l| _mm512_cmpneq_epu32_mask(l, v_zero));
        // A lane that did not end a counted engagement counts in its own spare slot past
        // the table's end; one that did, at its key. (Four copies of each count, taken in
        // turn by lane, were 3% faster on the Xeon while the lanes' words came from one
        // stream, and 2–4% slower since the lanes' streams step in the registers; on the
        // AMD EPYC Zen 4 they double the sweeps' speed: `LaneCounts`.)
        let spare_result = halves(|l| tally.by_result.spare(l));
        let spare_losses = halves(|l| tally.by_losses.spare(l));
        let mut keys_result = [0u32; LANES];
        let mut keys_losses = [0u32; LANES];
        let mut sweeps = 0;
        while active.iter().any(|&a| a != 0) {
            sweeps += 1;
            // PERF: both registers' rounds are looked up first, then the registers step:
            // the gathers (a chain state → round → next state in each register) overlap.
            // A round from a `StateTable` is one gather where the rows' effects are two
            // in a chain: on the AMD EPYC Zen 4 a gather of sixteen takes about 48 cycles
            // to its result (docs/performance.md).
            let mut entries = [v_zero; HALVES];
            for (h, entry) in entries.iter_mut().enumerate() {
                // The round's dice, `take(36)` of each lane's next word (below 2^32: the
                // high halves are 0): the eight lanes of group `2h`, then of `2h + 1`.
                // (No closure here: one would not inherit the target features, and its
                // calls were not inlined, 13% of the time.)
                let f = join(
                    take(streams.next(2 * h), v_faces),
                    take(streams.next(2 * h + 1), v_faces),
                );
                *entry = match &by_states {
                    Some(table) => _mm512_i32gather_epi32::<4>(
                        _mm512_add_epi32(_mm512_mullo_epi32(ab[h], v_36), f),
                        table.entries.as_ptr().cast(),
                    ),
                    None => {
                        // `StateTable::entry`, in the registers.
                        let row = _mm512_i32gather_epi32::<4>(ab[h], rows.rows.as_ptr().cast());
                        let e = _mm512_i32gather_epi32::<4>(
                            _mm512_add_epi32(row, f),
                            packed.as_ptr().cast(),
                        );
                        let (a, b) = (
                            _mm512_srl_epi32(ab[h], v_shift),
                            _mm512_and_si512(ab[h], v_low_b),
                        );
                        let lost_a = _mm512_and_si512(e, v_three);
                        let lost_b = _mm512_and_si512(_mm512_srli_epi32::<2>(e), v_three);
                        let a = _mm512_sub_epi32(a, _mm512_min_epu32(lost_a, a));
                        let b = _mm512_sub_epi32(b, _mm512_min_epu32(lost_b, b));
                        let gone =
                            _mm512_cmpeq_epi32_mask(a, v_zero) | _mm512_cmpeq_epi32_mask(b, v_zero);
                        let otherwise = _mm512_and_si512(_mm512_srli_epi32::<8>(e), v_seven);
                        let destroyed = _mm512_and_si512(_mm512_srli_epi32::<5>(e), v_seven);
                        let code = _mm512_mask_blend_epi32(gone, otherwise, destroyed);
                        let ends = gone | _mm512_cmpneq_epi32_mask(otherwise, v_seven);
                        let entry = _mm512_or_si512(
                            _mm512_or_si512(_mm512_sll_epi32(a, v_shift), b),
                            _mm512_slli_epi32::<{ StateTable::STATE_BITS }>(code),
                        );
                        _mm512_mask_or_epi32(entry, ends, entry, v_ends)
                    }
                };
            }
            for h in 0..HALVES {
                let e = entries[h];
                let next_ab = _mm512_and_si512(e, v_state);
                let code =
                    _mm512_and_si512(_mm512_srli_epi32::<{ StateTable::STATE_BITS }>(e), v_byte);
                let d =
                    _mm512_test_epi32_mask(e, v_ends) | _mm512_cmpge_epu32_mask(round[h], v_limit);
                let counted = d & active[h];
                let result = _mm512_min_epu32(code, v_last_result);
                let key_result = _mm512_or_si512(_mm512_slli_epi32::<3>(round[h]), result);
                // `(init_a − a) << shift | (init_b − b)`: no borrow, `b ≤ init_b`.
                let key_losses = _mm512_sub_epi32(v_init_ab, next_ab);
                let key_result = if JOINT {
                    _mm512_or_si512(_mm512_sll_epi32(key_result, v_joint_shift), key_losses)
                } else {
                    key_result
                };
                let slot_result = _mm512_mask_blend_epi32(counted, spare_result[h], key_result);
                _mm512_storeu_si512(keys_result.as_mut_ptr().add(16 * h).cast(), slot_result);
                if !JOINT {
                    let slot_losses = _mm512_mask_blend_epi32(counted, spare_losses[h], key_losses);
                    _mm512_storeu_si512(keys_losses.as_mut_ptr().add(16 * h).cast(), slot_losses);
                }
                ab[h] = _mm512_mask_blend_epi32(d, next_ab, v_init_ab);
                round[h] = _mm512_mask_blend_epi32(d, _mm512_add_epi32(round[h], v_one), v_one);
                left[h] = _mm512_mask_sub_epi32(left[h], counted, left[h], v_one);
                active[h] = _mm512_cmpneq_epu32_mask(left[h], v_zero);
            }
            // SAFETY: every slot is within its table. A round is 1 to the round limit
            // (a lane's round starts at 1 and ends at the limit), a result 0 to 6, so a
            // result key, `round << 3 | result`, is below `8 · (limit + 1)`
            // (`Tally::result_keys`); losses are capped at what a fleet has, so a losses
            // key, `lost_a << shift | lost_b`, is below `(A's NSP + 1) << shift`
            // (`RowTable::len_for`), and a joint key, `result key << joint_shift | losses
            // key`, below `8 · (limit + 1) << joint_shift`; a key is its slot, and a spare
            // slot is one of the `LANES` after the keys (`LaneCounts`, which counts lane by
            // lane in copies: the PERF note there).
            // (Without the check, 5–9% faster in the `profile` example.)
            for i in 0..LANES {
                tally.by_result.add(i, keys_result[i]);
                if !JOINT {
                    tally.by_losses.add(i, keys_losses[i]);
                }
            }
        }
        sweeps
    }
}

/// Every row the lanes can reach, `rows[(a << shift) + b]` for strengths `a ≤` A's and
/// `b ≤` B's at the start: a shift in place of `row_of`'s multiply, on the chain from
/// one round's loads to the next's.
struct RowTable {
    rows: Vec<u32>,
    shift: u32,
}

impl RowTable {
    /// The shift: bits enough for B's strengths 0 to B's NSP.
    fn shift_for(nsp: [u32; 2]) -> u32 {
        (nsp[1] + 1).next_power_of_two().trailing_zeros()
    }

    fn len_for(nsp: [u32; 2]) -> usize {
        (nsp[0] as usize + 1) << Self::shift_for(nsp)
    }

    fn new(kernel: &EngagementKernel) -> Self {
        let shift = Self::shift_for(kernel.nsp);
        let mut rows = vec![0; Self::len_for(kernel.nsp)];
        for a in 0..=kernel.nsp[0] {
            for b in 0..=kernel.nsp[1] {
                rows[((a << shift) + b) as usize] = kernel.row_for([a, b]) as u32;
            }
        }
        Self { rows, shift }
    }
}

#[cfg(test)]
thread_local! {
    /// Sweeps of each form (`VectorForm as usize`) run with each round from the rows'
    /// effects (two gathers) and from a [`StateTable`] (one), for the tests, which check
    /// that both ran.
    static BY_STATES: std::cell::Cell<[[u64; 2]; 2]> =
        const { std::cell::Cell::new([[0; 2]; 2]) };
    /// Set by the tests to run the vector sweeps from the rows' effects whatever the
    /// table's size.
    static NO_STATE_TABLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A round's outcome from each state of the fleets, for the vector sweeps: entry
/// `(a << shift | b) · 36 + faces` holds the strengths after the round (`a' << shift | b'`,
/// the low [`Self::STATE_BITS`] bits), the result code (the next eight: destroyed where a
/// fleet is gone, else the result otherwise) and whether the engagement ends
/// ([`Self::ENDS`]: a fleet gone or a result otherwise), so a round is one gather, not two
/// (the row, then its effect). Where the table would be large the sweep builds the same
/// entry in the registers from the two gathers, so a state has `STATE_BITS` there too.
struct StateTable {
    entries: Vec<u32>,
}

impl StateTable {
    /// The bits of an entry's state: every state is below `Tally::MAX_SLOTS` (`Tally::fits`
    /// bounds the row table by it).
    const STATE_BITS: u32 = 20;
    /// The bit of an entry whose engagement ends (below bit 31: AVX2's compares are
    /// signed).
    const ENDS: u32 = 1 << (Self::STATE_BITS + 8);
    /// Most entries (64 KB: the bench's 6 v 4 has 2,016).
    const MAX_ENTRIES: usize = 1 << 14;

    /// The table, where it has at most [`Self::MAX_ENTRIES`] entries.
    fn new(packed: &[u32], rows: &RowTable, nsp: [u32; 2]) -> Option<Self> {
        let states = rows.rows.len();
        #[cfg(test)]
        if NO_STATE_TABLE.with(std::cell::Cell::get) {
            return None;
        }
        if states * 36 > Self::MAX_ENTRIES {
            return None;
        }
        let mut entries = vec![0; states * 36];
        for a in 0..=nsp[0] {
            for b in 0..=nsp[1] {
                let state = (a << rows.shift | b) as usize;
                let row = rows.rows[state] as usize;
                for f in 0..36 {
                    entries[state * 36 + f] = Self::entry(packed[row + f], a, b, rows.shift);
                }
            }
        }
        Some(Self { entries })
    }

    /// The entry for a round of packed effect `e` (`pack`) between fleets of `a` and `b`.
    fn entry(e: u32, a: u32, b: u32, shift: u32) -> u32 {
        let (lost_a, lost_b) = (e & 3, e >> 2 & 3);
        let (a, b) = (a - lost_a.min(a), b - lost_b.min(b));
        let gone = a == 0 || b == 0;
        let (destroyed, otherwise) = (e >> 5 & 7, e >> 8 & 7);
        let code = if gone { destroyed } else { otherwise };
        let ends = gone || otherwise != u32::from(CONTINUES);
        (a << shift | b) | code << Self::STATE_BITS | if ends { Self::ENDS } else { 0 }
    }
}

#[cfg(test)]
impl StateTable {
    /// Notes for the tests that a sweep of `form` ran, by states or not.
    fn ran(form: VectorForm, by_states: bool) {
        BY_STATES.with(|c| {
            let mut ran = c.get();
            ran[form as usize][usize::from(by_states)] += 1;
            c.set(ran);
        });
    }
}

const _: () = assert!(Tally::MAX_SLOTS <= 1 << StateTable::STATE_BITS);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::d6_tables::lookup::D6Table;
    use crate::systems::naval_engagement::engagement::tests::{at_sea, engagement_cases, fleet};
    use crate::systems::naval_engagement::engagement::{Engagement, NavalCombat};

    /// What a block's `n` engagements must count, from the rules' own round step: lane
    /// `l`'s share fought one after another on its own stream. Returns the counts and the
    /// rounds of each lane.
    fn reference(
        naval: &NavalCombat,
        engagement: &Engagement,
        lanes: &[[u64; 4]; LANES],
        n: u64,
    ) -> (EngagementHistogram, [u64; LANES]) {
        let mut h = EngagementHistogram::new(engagement);
        let mut rounds = [0; LANES];
        for (lane, &state) in lanes.iter().enumerate() {
            let mut dice = DiceStream::from_state(state);
            for _ in 0..lane_battles(n, lane) {
                let outcome = naval.engage_by_rounds(engagement, &mut dice);
                rounds[lane] += u64::from(outcome.rounds);
                h.record(&outcome);
            }
        }
        (h, rounds)
    }

    /// Both forms against [`reference`]: the same counts, the same words drawn from the
    /// block's stream (the lanes' keys, none for no engagement) and the words each reports,
    /// for fewer engagements than lanes, exactly the lanes, one more, and many (the lanes
    /// restart, and the last sweeps run with lanes idle).
    #[test]
    fn lanes_count_what_each_lane_fights_on_its_own_stream() {
        let naval = NavalCombat::new(D6Table::naval()).unwrap();
        let mut results = [0u64; EngagementResult::COUNT];
        let mut longest = 0;
        let mut joint_keys = [0; 2];
        let mut at_once = [0; 2];
        let mut as_run_at_once = 0;
        let mut out_of_step = 0;
        for (case, engagement) in engagement_cases().iter().enumerate() {
            let kernel = naval.kernel(engagement);
            assert!(Tally::fits(&kernel), "case {case}");
            joint_keys[usize::from(Tally::new(&kernel).joint_shift.is_some())] += 1;
            for n in [0, 1, 5, 31, 32, 33, 3_001, 60_000] {
                let start = DiceStream::for_block(90 + case as u64, n);
                let lanes = start.clone().lane_states();
                let (expected, rounds) = reference(&naval, engagement, &lanes, n);
                let keys = if n == 0 { 0 } else { LANES as u64 };
                // As run.
                let mut dice = start.clone();
                let mut h = EngagementHistogram::new(engagement);
                let words = kernel.record_many(&mut dice, n, &mut h);
                assert_eq!(h, expected, "case {case}, {n} engagements");
                assert_eq!(start.words_until(&dice, LANES as u64), Some(keys));
                let sweeps = rounds.iter().copied().max().unwrap_or(0);
                if n == 3_001 && rounds.iter().any(|&r| r != rounds[0]) {
                    out_of_step += 1;
                }
                // As run, all at once where the CPU can and the call has an engagement for
                // every `SLOTS_PER_ENGAGEMENT` slots of the counts, else lane by lane.
                if n > 0 && VectorForm::detect().is_some() && Tally::worth(&kernel, n) {
                    assert_eq!(words, keys + LANES as u64 * sweeps, "case {case}, n {n}");
                    as_run_at_once += 1;
                } else {
                    assert_eq!(
                        words,
                        keys + rounds.iter().sum::<u64>(),
                        "case {case}, n {n}"
                    );
                }
                if n > 0 {
                    // Lane by lane, whatever the CPU.
                    let mut h = EngagementHistogram::new(engagement);
                    let never_at_once = |_: &[[u64; 4]; LANES], _: &mut EngagementHistogram| None;
                    let words =
                        lanes::fight_block(&mut start.clone(), n, &mut h, never_at_once, |d, h| {
                            let outcome = kernel.engage(d);
                            h.record(&outcome);
                            u64::from(outcome.rounds)
                        });
                    assert_eq!(h, expected, "case {case}, {n} engagements, lane by lane");
                    assert_eq!(words, keys + rounds.iter().sum::<u64>());
                    // All at once, whatever `n`, in every form the CPU has (with its rounds
                    // from a `StateTable` where it is small, and without).
                    for (form, no_table) in VectorForm::ALL
                        .into_iter()
                        .flat_map(|form| [(form, false), (form, true)])
                    {
                        NO_STATE_TABLE.with(|c| c.set(no_table));
                        let mut h = EngagementHistogram::new(engagement);
                        let swept = kernel.all_at_once_in(form, &lanes, n, &mut h);
                        NO_STATE_TABLE.with(|c| c.set(false));
                        if let Some(swept) = swept {
                            assert_eq!(h, expected, "case {case}, {n} engagements, {form:?}");
                            assert_eq!(swept, sweeps, "case {case}, n {n}, {form:?}");
                            at_once[form as usize] += 1;
                        }
                    }
                }
                for (r, c) in results.iter_mut().zip(&expected.result) {
                    *r += c;
                }
                longest = longest.max(expected.rounds.iter().rposition(|&c| c > 0).unwrap_or(0));
            }
        }
        // Not vacuous: every kind of result, engagements of many rounds, lanes that restart
        // out of step (their shares took different rounds in all), and both forms of the
        // counts: two keys, and one joint key.
        assert!(results.iter().all(|&r| r > 0), "{results:?}");
        assert!(longest >= 5, "longest engagement {longest} rounds");
        assert!(out_of_step > 0);
        assert!(joint_keys.iter().all(|&k| k > 0), "{joint_keys:?}");
        VectorForm::assert_ran_where_available(at_once);
        assert_eq!(as_run_at_once > 0, VectorForm::detect().is_some());
        for form in VectorForm::ALL.into_iter().filter(|form| form.available()) {
            let [by_rows, by_states] = BY_STATES.with(std::cell::Cell::get)[form as usize];
            assert!(
                by_rows > 0 && by_states > 0,
                "{form:?}: {by_rows} {by_states}"
            );
        }
    }

    /// Fleets whose state (`a << shift | b`) passes 16 bits (300 v 300, never validated,
    /// within the count tables): all at once, in every form the CPU has, as lane by lane.
    /// (A state cut to 16 bits in the AVX2 sweep's entry gave wrong counts here.)
    #[test]
    fn states_past_sixteen_bits_are_fought_as_lane_by_lane() {
        let naval = NavalCombat::new(D6Table::naval()).unwrap();
        for (a, b) in [(300, 300), (130, 300)] {
            let engagement = at_sea(fleet(a, 2), fleet(b, 1), 20);
            let kernel = naval.kernel(&engagement);
            assert!(Tally::fits(&kernel));
            assert!(RowTable::len_for(kernel.nsp) > 1 << 16);
            let n = 65_536;
            let lanes = DiceStream::for_block(7, n).lane_states();
            let (expected, _) = reference(&naval, &engagement, &lanes, n);
            let mut ran = 0;
            for form in VectorForm::ALL {
                let mut h = EngagementHistogram::new(&engagement);
                if kernel.all_at_once_in(form, &lanes, n, &mut h).is_some() {
                    assert_eq!(h, expected, "{a} v {b}, {form:?}");
                    ran += 1;
                }
            }
            assert_eq!(ran > 0, VectorForm::detect().is_some());
        }
    }

    /// Count tables too large for the lanes (an engagement that does not validate): fought
    /// lane by lane, as [`EngagementKernel::engage`] fights them.
    #[test]
    fn engagements_beyond_the_count_tables_are_fought_lane_by_lane() {
        let naval = NavalCombat::new(D6Table::naval()).unwrap();
        let engagement = at_sea(fleet(3_000, 2), fleet(2_000, 1), 20);
        let kernel = naval.kernel(&engagement);
        assert!(!Tally::fits(&kernel));
        let start = DiceStream::for_block(5, 0);
        let mut dice = start.clone();
        let mut h = EngagementHistogram::new(&engagement);
        kernel.record_many(&mut dice, 500, &mut h);
        let (expected, _) = reference(&naval, &engagement, &start.clone().lane_states(), 500);
        assert_eq!(h, expected);
        assert_eq!(start.words_until(&dice, LANES as u64), Some(LANES as u64));
    }

    #[test]
    #[should_panic(expected = "round limit of at least 1")]
    fn a_round_limit_of_zero_is_refused() {
        let naval = NavalCombat::new(D6Table::naval()).unwrap();
        let engagement = at_sea(fleet(6, 2), fleet(4, 2), 0);
        let mut h = EngagementHistogram::new(&engagement);
        let mut dice = DiceStream::for_block(5, 0);
        naval.kernel(&engagement).record_many(&mut dice, 10, &mut h);
    }
}
