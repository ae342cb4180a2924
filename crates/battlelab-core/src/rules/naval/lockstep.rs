//! Naval engagements thirty-two at once, one to a lane, with masks in place of branches.
//!
//! Why this module exists: [`EngagementKernel::engage`] fights one engagement at a time,
//! and the number of rounds is the dice's: the loop's exit is a branch no predictor can
//! learn, and every engagement pays for it, and for its bookkeeping, in scalar
//! instructions. Here [`LANES`] engagements advance together, one round each a sweep; a
//! lane whose engagement ends counts it and is reset in the same sweep, and fights the
//! next from the following sweep, so no lane idles until the last engagements are
//! started. In the AVX-512 sweep no branch per lane or round depends on the dice. It is how runs fight naval
//! engagements (`systems::naval`).
//!
//! The dice: each sweep draws [`LANES`] words from the block's stream, one a lane in lane
//! order, whatever lanes are still fighting (in the last sweeps of a block, the words of a
//! lane with nothing left to fight are drawn and not used). An engagement still takes one
//! fresh word a round (the battle die and the pursuit die, `take(36)` as in the
//! one-at-a-time kernel). A lane's engagements are fought back to back on its own words,
//! each from a start its earlier ones decide, so each takes independent uniform dice and
//! the outcomes have the rules' distribution; but which words an engagement gets differs,
//! so fixed-seed counts differ from the one-at-a-time kernel's. The engagements counted
//! are the first `n` to start (in sweep order, then lane order), each to its end: whether
//! one is counted is decided before its first die (counting the first `n` to end would
//! favour short engagements).
//!
//! Two forms count the same from the same stream: a scalar sweep (any machine) and an
//! AVX-512 sweep (x86-64 with AVX-512F and BMI2, detected at run time),
//! its lanes in two registers of sixteen. The tests hold both to the rules' own round step
//! ([`super::NavalCombat`]'s reference engagement) on each lane's share of the stream.
//!
//! PERF (issue 16; `docs/performance.md` has the steps): in the bench (31b3893), a
//! counted engagement costs 3.3 `next_u64` here and 11.0 one at a time, for 1.5 words
//! (overhead 2.2); in the `profile` example, `naval-lockstep` counts 288–306 M
//! engagements/s where `naval-record` (one at a time, each counted) counts 100–107 M,
//! beside a bare loop of 1.01–1.09 G words/s. What helped:
//! two registers of sixteen (one's chain of gathers, effect then next row, runs while the
//! other's waits: 185 → 240 M/s under load), a row table with a shift where `row_of` needs
//! a multiply, counting every lane every sweep with no branch (a lane that did not end
//! counts in a spare slot: 240 → 275 M/s, where a loop over the ended lanes mispredicted
//! its exit), and the counts' keys by shifts (+10%). What did not: cutting the dice in the
//! vector registers.
//!
//! Engagements that do not validate ([`super::Engagement::validate`]): a round limit of 0
//! is refused (a panic, as the one-at-a-time count's was); fleets or round limits so large
//! that the count
//! tables would pass [`Tally::MAX_SLOTS`] slots are fought and counted one at a time
//! ([`EngagementKernel::engage`]).

use super::{EngagementHistogram, EngagementKernel, EngagementResult, CONTINUES};
use crate::dice::DiceStream;

/// Engagements fought at once.
pub(super) const LANES: usize = 32;

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

/// Copies of each count, taken in turn by lane, so that lanes with the same outcome in
/// one sweep do not wait on each other's stores (3% in the `profile` example). A slot is
/// `key · COPIES + lane % COPIES`.
const COPIES: usize = 1 << COPIES_SHIFT;
const COPIES_SHIFT: u32 = 2;

/// Counts of ended engagements, added into the histogram at the end. Where the table is
/// small enough ([`Self::MAX_JOINT_SLOTS`]), one key holds the whole outcome: rounds,
/// result and the NSP each fleet lost, `(rounds · 8 + result) << joint_shift | losses`,
/// one increment an engagement. Otherwise two keys: (rounds, result) as
/// `rounds · 8 + result`, and (NSP lost by A, NSP lost by B) as
/// `lost_a << loss_shift | lost_b`. Keys are made by shifts. Each table ends in [`LANES`]
/// spare slots, one a lane, where a lane whose engagement did not end counts (so that
/// every lane counts every sweep, in the AVX-512 sweep; the scalar sweep branches
/// instead).
struct Tally {
    /// The joint counts, or the (rounds, result) counts.
    by_result: Vec<u64>,
    /// The (losses) counts; empty where the key is joint.
    by_losses: Vec<u64>,
    loss_shift: u32,
    /// Bits of the losses key in the joint key, where the key is joint.
    joint_shift: Option<u32>,
}

impl Tally {
    /// Most slots in both count tables together (8 MiB): 54,432 (435 KB) at the largest
    /// engagement that validates, 99 against 99 NSP and 100 rounds.
    const MAX_SLOTS: usize = 1 << 20;

    /// Most slots in a joint table (2 MiB); larger engagements count by two keys.
    const MAX_JOINT_SLOTS: usize = 1 << 18;

    /// Whether the lanes can fight `kernel`'s engagements: count tables of at most
    /// [`Self::MAX_SLOTS`] (which also keeps every index of the AVX-512 sweep, and the
    /// [`RowTable`], far within `i32`).
    fn fits(kernel: &EngagementKernel) -> bool {
        kernel.nsp.iter().all(|&s| s < 1 << 16)
            && kernel.round_limit < 1 << 16
            && COPIES * (Self::result_keys(kernel) + RowTable::len_for(kernel.nsp))
                <= Self::MAX_SLOTS
    }

    fn new(kernel: &EngagementKernel) -> Self {
        let losses = RowTable::len_for(kernel.nsp);
        let joint_shift = losses.next_power_of_two().trailing_zeros();
        let joint_keys = Self::result_keys(kernel) << joint_shift;
        let loss_shift = RowTable::shift_for(kernel.nsp);
        if COPIES * joint_keys <= Self::MAX_JOINT_SLOTS {
            Self {
                by_result: vec![0; COPIES * joint_keys + LANES],
                by_losses: Vec::new(),
                loss_shift,
                joint_shift: Some(joint_shift),
            }
        } else {
            Self {
                by_result: vec![0; COPIES * Self::result_keys(kernel) + LANES],
                by_losses: vec![0; COPIES * losses + LANES],
                loss_shift,
                joint_shift: None,
            }
        }
    }

    /// Result keys: eight a round, rounds 0 to the limit.
    fn result_keys(kernel: &EngagementKernel) -> usize {
        8 * (kernel.round_limit as usize + 1)
    }

    /// Each key with its count (its copies summed), where the count is not 0.
    fn counted(table: &[u64]) -> impl Iterator<Item = (usize, u64)> + '_ {
        (0..(table.len().saturating_sub(LANES)) / COPIES)
            .map(move |key| (key, table[key * COPIES..][..COPIES].iter().sum::<u64>()))
            .filter(|&(_, count)| count > 0)
    }

    fn add_to(&self, h: &mut EngagementHistogram) {
        let mut add_losses = |key: usize, count| {
            h.nsp_lost[0][key >> self.loss_shift] += count;
            h.nsp_lost[1][key & ((1 << self.loss_shift) - 1)] += count;
        };
        for (key, count) in Self::counted(&self.by_losses) {
            add_losses(key, count);
        }
        for (key, count) in Self::counted(&self.by_result) {
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

/// Which lanes are fighting, and how many engagements have started: the same for both
/// sweeps, which differ only in how they pick the lanes that restart.
struct Starts {
    n: u64,
    started: u64,
    /// Lanes with an engagement to fight, bit per lane.
    active: u32,
}

impl Starts {
    /// The first `min(n, LANES)` lanes start.
    fn new(n: u64) -> Self {
        let started = n.min(LANES as u64);
        Self {
            n,
            started,
            active: ((1u64 << started) - 1) as u32,
        }
    }

    /// How many lanes may restart: engagements not yet started, at most [`LANES`].
    fn left(&self) -> u32 {
        self.n.saturating_sub(self.started).min(LANES as u64) as u32
    }

    /// The end of a sweep: the lanes in `ended` stop, those in `restart` (the lowest
    /// [`Self::left`] of them) start their next engagement.
    fn end_sweep(&mut self, ended: u32, restart: u32) {
        self.started += u64::from(restart.count_ones());
        self.active = (self.active & !ended) | restart;
    }
}

/// The lowest `k` set bits of `mask` (what the AVX-512 sweep takes by `_pdep_u32`).
fn lowest_bits(mask: u32, k: u32) -> u32 {
    let mut left = mask;
    let mut kept = 0;
    for _ in 0..k.min(mask.count_ones()) {
        let bit = left & left.wrapping_neg();
        kept |= bit;
        left ^= bit;
    }
    kept
}

impl EngagementKernel {
    /// `n` engagements, [`LANES`] at once, counted into `h` (see the module docs): what a
    /// run's block does, on the block's stream. Its tables (the packed effects, the rows,
    /// the counts) are built once a call: at most about 9 MiB (8 of them counts), about
    /// 0.5 MB at the largest engagement that validates.
    ///
    /// # Panics
    /// On a round limit of 0, which no engagement that validates has.
    pub fn record_many(&self, dice: &mut DiceStream, n: u64, h: &mut EngagementHistogram) {
        assert!(
            self.round_limit >= 1,
            "a naval engagement needs a round limit of at least 1 (Engagement::validate)"
        );
        if !Tally::fits(self) {
            for _ in 0..n {
                h.record(&self.engage(dice));
            }
            return;
        }
        let mut tally = Tally::new(self);
        #[cfg(target_arch = "x86_64")]
        if avx512_available() {
            // SAFETY: the features are detected above, `Tally::fits` holds and the tally
            // is `Tally::new(self)`'s.
            unsafe {
                if tally.joint_shift.is_some() {
                    self.sweeps_avx512::<true>(dice, n, &mut tally);
                } else {
                    self.sweeps_avx512::<false>(dice, n, &mut tally);
                }
            }
            tally.add_to(h);
            return;
        }
        self.sweeps_scalar(dice, n, &mut tally);
        tally.add_to(h);
    }

    /// The scalar sweeps alone (the tests compare them with the AVX-512 sweeps).
    #[cfg(test)]
    fn record_many_scalar(&self, dice: &mut DiceStream, n: u64, h: &mut EngagementHistogram) {
        let mut tally = Tally::new(self);
        self.sweeps_scalar(dice, n, &mut tally);
        tally.add_to(h);
    }

    fn sweeps_scalar(&self, dice: &mut DiceStream, n: u64, tally: &mut Tally) {
        let packed = pack(self);
        let [init_a, init_b] = self.nsp;
        let first_row = self.first_row as u32;
        let mut nsp_a = [init_a; LANES];
        let mut nsp_b = [init_b; LANES];
        let mut round = [1u32; LANES];
        let mut row = [first_row; LANES];
        let mut starts = Starts::new(n);
        let mut faces = [0u32; LANES];
        while starts.active != 0 {
            for f in faces.iter_mut() {
                *f = dice.word().take(36);
            }
            let mut ended = 0u32;
            for lane in 0..LANES {
                let e = packed[(row[lane] + faces[lane]) as usize];
                let a = nsp_a[lane] - (e & 3).min(nsp_a[lane]);
                let b = nsp_b[lane] - ((e >> 2) & 3).min(nsp_b[lane]);
                let gone = a == 0 || b == 0;
                let otherwise = (e >> 8) & 7;
                let done =
                    gone || otherwise != u32::from(CONTINUES) || round[lane] >= self.round_limit;
                if done && starts.active >> lane & 1 == 1 {
                    ended |= 1 << lane;
                    let code = if gone { (e >> 5) & 7 } else { otherwise };
                    let result = code.min(EngagementResult::COUNT as u32 - 1);
                    let key_result = (round[lane] as usize) << 3 | result as usize;
                    let key_losses =
                        ((init_a - a) as usize) << tally.loss_shift | (init_b - b) as usize;
                    let copy = lane % COPIES;
                    match tally.joint_shift {
                        Some(shift) => {
                            tally.by_result[(key_result << shift | key_losses) * COPIES + copy] +=
                                1;
                        }
                        None => {
                            tally.by_result[key_result * COPIES + copy] += 1;
                            tally.by_losses[key_losses * COPIES + copy] += 1;
                        }
                    }
                }
                if done {
                    nsp_a[lane] = init_a;
                    nsp_b[lane] = init_b;
                    round[lane] = 1;
                    row[lane] = first_row;
                } else {
                    nsp_a[lane] = a;
                    nsp_b[lane] = b;
                    round[lane] += 1;
                    row[lane] = self.row_for([a, b]) as u32;
                }
            }
            starts.end_sweep(ended, lowest_bits(ended, starts.left()));
        }
    }

    /// [`Self::sweeps_scalar`] with the lanes in two AVX-512 registers of sixteen, so
    /// that one register's chain of loads (a round's effect, then the next round's row)
    /// runs while the other's waits.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and BMI2, the round limit must be at least 1,
    /// [`Tally::fits`] must hold, and `tally` must be `Tally::new(self)`'s (the counts'
    /// bounds rest on its lengths and shift).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,bmi2")]
    unsafe fn sweeps_avx512<const JOINT: bool>(
        &self,
        dice: &mut DiceStream,
        n: u64,
        tally: &mut Tally,
    ) {
        use std::arch::x86_64::*;
        let packed = pack(self);
        let rows = RowTable::new(self);
        let [init_a, init_b] = self.nsp;
        let splat = |v: u32| _mm512_set1_epi32(v as i32);
        let (v_init_a, v_init_b) = (splat(init_a), splat(init_b));
        let v_first_row = splat(self.first_row as u32);
        let (v_zero, v_one, v_three, v_seven) = (splat(0), splat(1), splat(3), splat(7));
        let v_limit = splat(self.round_limit);
        let v_last_result = splat(EngagementResult::COUNT as u32 - 1);
        let v_shift = _mm512_set1_epi64(i64::from(rows.shift));
        debug_assert_eq!(JOINT, tally.joint_shift.is_some());
        let v_joint_shift = _mm512_set1_epi64(i64::from(tally.joint_shift.unwrap_or(0)));
        let mut nsp_a = [v_init_a; 2];
        let mut nsp_b = [v_init_b; 2];
        let mut round = [v_one; 2];
        let mut row = [v_first_row; 2];
        // A lane that did not end counts in its own spare slot past the table's end; one
        // that did, in copy `lane % COPIES` of its key.
        let lane_ids = [0, 16].map(|first| {
            _mm512_add_epi32(
                _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                splat(first),
            )
        });
        let copy = lane_ids.map(|ids| _mm512_and_si512(ids, splat(COPIES as u32 - 1)));
        let spare_result = lane_ids
            .map(|ids| _mm512_add_epi32(splat((tally.by_result.len() - LANES) as u32), ids));
        let spare_losses = lane_ids
            .map(|ids| _mm512_add_epi32(splat((tally.by_losses.len() - LANES) as u32), ids));
        let mut starts = Starts::new(n);
        let mut faces = [0u32; LANES];
        let mut keys_result = [0u32; LANES];
        let mut keys_losses = [0u32; LANES];
        if starts.active != 0 {
            for f in faces.iter_mut() {
                *f = dice.word().take(36);
            }
        }
        while starts.active != 0 {
            let mut ended = 0u32;
            for h in 0..2 {
                let f = _mm512_loadu_si512(faces.as_ptr().add(16 * h).cast());
                let e = _mm512_i32gather_epi32::<4>(
                    _mm512_add_epi32(row[h], f),
                    packed.as_ptr().cast(),
                );
                let lost_a = _mm512_and_si512(e, v_three);
                let lost_b = _mm512_and_si512(_mm512_srli_epi32::<2>(e), v_three);
                let a = _mm512_sub_epi32(nsp_a[h], _mm512_min_epu32(lost_a, nsp_a[h]));
                let b = _mm512_sub_epi32(nsp_b[h], _mm512_min_epu32(lost_b, nsp_b[h]));
                let gone = _mm512_cmpeq_epi32_mask(a, v_zero) | _mm512_cmpeq_epi32_mask(b, v_zero);
                let otherwise = _mm512_and_si512(_mm512_srli_epi32::<8>(e), v_seven);
                let d = gone
                    | _mm512_cmpneq_epi32_mask(otherwise, v_seven)
                    | _mm512_cmpge_epu32_mask(round[h], v_limit);
                let ended_here = d & (starts.active >> (16 * h)) as u16;
                let destroyed = _mm512_and_si512(_mm512_srli_epi32::<5>(e), v_seven);
                let code = _mm512_mask_blend_epi32(gone, otherwise, destroyed);
                let result = _mm512_min_epu32(code, v_last_result);
                let key_result = _mm512_or_si512(_mm512_slli_epi32::<3>(round[h]), result);
                let key_losses = _mm512_or_si512(
                    _mm512_sll_epi32(
                        _mm512_sub_epi32(v_init_a, a),
                        _mm512_castsi512_si128(v_shift),
                    ),
                    _mm512_sub_epi32(v_init_b, b),
                );
                let key_result = if JOINT {
                    _mm512_or_si512(
                        _mm512_sll_epi32(key_result, _mm512_castsi512_si128(v_joint_shift)),
                        key_losses,
                    )
                } else {
                    key_result
                };
                let slot_result = _mm512_mask_blend_epi32(
                    ended_here,
                    spare_result[h],
                    _mm512_add_epi32(_mm512_slli_epi32::<COPIES_SHIFT>(key_result), copy[h]),
                );
                let slot_losses = _mm512_mask_blend_epi32(
                    ended_here,
                    spare_losses[h],
                    _mm512_add_epi32(_mm512_slli_epi32::<COPIES_SHIFT>(key_losses), copy[h]),
                );
                _mm512_storeu_si512(keys_result.as_mut_ptr().add(16 * h).cast(), slot_result);
                if !JOINT {
                    _mm512_storeu_si512(keys_losses.as_mut_ptr().add(16 * h).cast(), slot_losses);
                }
                ended |= u32::from(ended_here) << (16 * h);
                let next_row = _mm512_i32gather_epi32::<4>(
                    _mm512_add_epi32(_mm512_sll_epi32(a, _mm512_castsi512_si128(v_shift)), b),
                    rows.rows.as_ptr().cast(),
                );
                nsp_a[h] = _mm512_mask_blend_epi32(d, a, v_init_a);
                nsp_b[h] = _mm512_mask_blend_epi32(d, b, v_init_b);
                round[h] = _mm512_mask_blend_epi32(d, _mm512_add_epi32(round[h], v_one), v_one);
                row[h] = _mm512_mask_blend_epi32(d, next_row, v_first_row);
            }
            // SAFETY: every slot is within its table. A round is 1 to the round limit
            // (a lane's round starts at 1 and ends at the limit), a result 0 to 6, so a
            // result key, `round << 3 | result`, is below `8 · (limit + 1)`
            // (`Tally::result_keys`); losses are capped at what a fleet has, so a losses
            // key, `lost_a << shift | lost_b`, is below `(A's NSP + 1) << shift`
            // (`RowTable::len_for`); a key's slot is
            // `key · COPIES + lane % COPIES`, and a spare slot is one of the last `LANES`.
            // (Without the check, 5–9% faster in the `profile` example.)
            let restart = _pdep_u32(((1u64 << starts.left()) - 1) as u32, ended);
            starts.end_sweep(ended, restart);
            // The next sweep's words, drawn while the counts are stored (the same words in
            // the same order as drawing them at the top of the next sweep: they are drawn
            // only if there is a next sweep).
            let more = starts.active != 0;
            for i in 0..LANES {
                *tally.by_result.get_unchecked_mut(keys_result[i] as usize) += 1;
                if !JOINT {
                    *tally.by_losses.get_unchecked_mut(keys_losses[i] as usize) += 1;
                }
                if more {
                    faces[i] = dice.word().take(36);
                }
            }
        }
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

#[cfg(target_arch = "x86_64")]
fn avx512_available() -> bool {
    is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("bmi2")
}

#[cfg(all(test, not(target_arch = "x86_64")))]
fn avx512_available() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dice::DiceWord;
    use crate::rules::d6table::D6Table;
    use crate::rules::naval::tests::{at_sea, engagement_cases, fleet};
    use crate::rules::naval::{Engagement, NavalCombat};

    /// What the sweeps must count, from the rules' own round step: lane `l`'s `k`-th word
    /// is the stream's word `LANES · k + l`; each lane fights its engagements one after
    /// another on its own words; the engagements counted are the first `n` to start,
    /// ordered by the sweep they start in and then by lane. Returns the counts and the
    /// words the sweeps draw (every lane's word of every sweep until the last ends).
    fn reference(
        naval: &NavalCombat,
        engagement: &Engagement,
        dice: &DiceStream,
        n: u64,
    ) -> (EngagementHistogram, u64) {
        let mut stream = dice.clone();
        let mut words: Vec<u64> = Vec::new();
        let mut h = EngagementHistogram::new(engagement);
        let mut next_sweep = [0u64; LANES];
        let mut sweeps = 0;
        for _ in 0..n {
            let lane = (0..LANES).min_by_key(|&l| (next_sweep[l], l)).unwrap();
            let mut sweep = next_sweep[lane];
            let outcome = naval.engage_by_rounds_on(engagement, &mut || {
                let at = (sweep * LANES as u64) as usize + lane;
                while words.len() <= at {
                    words.push(stream.next_u64());
                }
                sweep += 1;
                DiceWord(words[at])
            });
            h.record(&outcome);
            next_sweep[lane] = sweep;
            sweeps = sweeps.max(sweep);
        }
        (h, sweeps * LANES as u64)
    }

    /// Both sweeps against [`reference`]: the same counts and the same words drawn, for
    /// fewer engagements than lanes, exactly the lanes, one more, and many (the lanes
    /// restart, and the last sweeps run with lanes idle).
    #[test]
    fn sweeps_count_what_each_lane_fights_on_its_own_words() {
        let naval = NavalCombat::new(D6Table::naval()).unwrap();
        let mut results = [0u64; EngagementResult::COUNT];
        let mut longest = 0;
        let mut joint_keys = [0; 2];
        for (case, engagement) in engagement_cases().iter().enumerate() {
            let kernel = naval.kernel(engagement);
            assert!(Tally::fits(&kernel), "case {case}");
            joint_keys[usize::from(Tally::new(&kernel).joint_shift.is_some())] += 1;
            for n in [0, 1, 5, 31, 32, 33, 3_001] {
                let start = DiceStream::for_block(90 + case as u64, n);
                let (expected, words) = reference(&naval, engagement, &start, n);
                for name in ["scalar", "AVX-512", "as run"] {
                    let mut dice = start.clone();
                    let mut h = EngagementHistogram::new(engagement);
                    match name {
                        "scalar" => kernel.record_many_scalar(&mut dice, n, &mut h),
                        #[cfg(target_arch = "x86_64")]
                        "AVX-512" if avx512_available() => {
                            let mut tally = Tally::new(&kernel);
                            // SAFETY: detected; these engagements fit (asserted above).
                            unsafe {
                                if tally.joint_shift.is_some() {
                                    kernel.sweeps_avx512::<true>(&mut dice, n, &mut tally);
                                } else {
                                    kernel.sweeps_avx512::<false>(&mut dice, n, &mut tally);
                                }
                            };
                            tally.add_to(&mut h);
                        }
                        "AVX-512" => continue,
                        _ => kernel.record_many(&mut dice, n, &mut h),
                    }
                    assert_eq!(h, expected, "case {case}, {n} engagements, {name}");
                    assert_eq!(
                        start.words_until(&dice, words),
                        Some(words),
                        "case {case}, {n} engagements, {name}: words drawn"
                    );
                }
                for (r, c) in results.iter_mut().zip(&expected.result) {
                    *r += c;
                }
                longest = longest.max(expected.rounds.iter().rposition(|&c| c > 0).unwrap_or(0));
            }
        }
        // Not vacuous: every kind of result, and engagements long enough to restart lanes
        // many rounds apart.
        assert!(results.iter().all(|&r| r > 0), "{results:?}");
        assert!(longest >= 10, "longest engagement {longest} rounds");
        // Both forms of the counts: two keys, and one joint key.
        assert!(joint_keys.iter().all(|&k| k > 0), "{joint_keys:?}");
        if !avx512_available() {
            eprintln!("this machine has no AVX-512F and BMI2: only the scalar sweeps ran");
        }
    }

    /// Count tables too large for the lanes (an engagement that does not validate):
    /// fought and counted one at a time, as [`EngagementKernel::engage`] fights them.
    #[test]
    fn engagements_beyond_the_count_tables_are_fought_one_at_a_time() {
        let naval = NavalCombat::new(D6Table::naval()).unwrap();
        let engagement = at_sea(fleet(3_000, 2), fleet(2_000, 1), 20);
        let kernel = naval.kernel(&engagement);
        assert!(!Tally::fits(&kernel));
        let mut dice = DiceStream::for_block(5, 0);
        let mut one_by_one = dice.clone();
        let mut h = EngagementHistogram::new(&engagement);
        kernel.record_many(&mut dice, 500, &mut h);
        let mut expected = EngagementHistogram::new(&engagement);
        for _ in 0..500 {
            expected.record(&kernel.engage(&mut one_by_one));
        }
        assert_eq!(h, expected);
        assert_eq!(dice, one_by_one);
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
