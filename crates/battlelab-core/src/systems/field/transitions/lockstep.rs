//! Field battles thirty-two at once from a battle's transition table, one to a lane, with
//! masks in place of branches.
//!
//! Why this module exists: a table battle ([`TransitionTable::fight`]) is a round of one word
//! and one load, but the rounds are the dice's, so the loop's exit is a branch no
//! predictor learns, and every battle pays for it, and for its counts, in scalar
//! instructions. Here the [`LANES`] lanes of [`FieldKernel::fight_block`] advance
//! together, a round each a sweep: the lanes' xoshiro256++ streams step in four AVX-512
//! registers of eight 64-bit lanes and their battles in two of sixteen 32-bit lanes (or,
//! on CPUs without AVX-512, the streams in eight AVX2 registers of four and the battles in
//! four of eight); the round's value is cut by two 32-bit multiplies
//! (`dice::lanes::avx512`, `dice::lanes::avx2`), and the next node is one gather. A lane
//! whose battle ends counts it by (rounds, node), which fix its whole outcome, and starts
//! its next battle in the same sweep, until it has fought its share ([`lane_battles`]); a
//! lane with none left runs on, counting into a spare slot.
//!
//! Same battles: lane `l` fights its battles one after another on its own stream, exactly
//! as [`FieldKernel::fight_block`]'s lane-by-lane form does (the tests hold the two to the
//! same counts), so which form runs changes no count.
//!
//! PERF (issue 16; `docs/performance.md`): see the module's section there.
//!
//! [`FieldKernel::fight_block`]: super::FieldKernel::fight_block
//! [`lane_battles`]: crate::dice::lanes::lane_battles

// The vector form is x86-64's; elsewhere its counts and helpers go unused.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

use super::{Cut, TransitionTable};
use crate::dice::lanes::{shares_fit_32_bits, LaneCounts, VectorForm, LANES};
use crate::systems::field::battle::{BattleHistogram, BattleOutcome};

/// Counts of ended battles by (rounds, node): key `rounds << node_bits | node`, then
/// [`LANES`] spare slots, one a lane, where a lane that did not end a counted battle in a
/// sweep counts (so that every lane counts every sweep, with no branch).
struct Counts {
    slots: LaneCounts,
    node_bits: u32,
}

impl Counts {
    /// Most keys (2 MiB of counts, allocated and read once a call); a battle with more is
    /// fought lane by lane.
    const MAX_KEYS: usize = 1 << 18;

    /// Most keys a battle of the call: the counts are zeroed and read once a call, so a
    /// call of few battles with a large table fights lane by lane (the table of the bench
    /// battle, 7 168 keys, takes 1 792 battles; a block is 65 536).
    const KEYS_PER_BATTLE: usize = 4;

    /// The keys of `table`'s counts, and their node bits, where the sweeps can fight it:
    /// [`Self::MAX_KEYS`] at most, and a table the gathers can read (a row for the start,
    /// a round limit of at least 1, and the entry past the rows that `compile` adds for a
    /// joint draw).
    fn keys(table: &TransitionTable) -> Option<(usize, u32)> {
        let node_bits = table.states.len().next_power_of_two().trailing_zeros();
        let keys = (table.round_limit as usize + 1) << node_bits;
        let readable = table.with_rows >= 1
            && table.round_limit >= 1
            && table.next.len() > table.with_rows * table.stride;
        (readable && keys <= Self::MAX_KEYS).then_some((keys, node_bits))
    }

    fn new(table: &TransitionTable) -> Option<Self> {
        Self::keys(table).map(|(keys, node_bits)| Self {
            // One copy: four were no faster here (`profile field-lanes`, Zen 4).
            slots: LaneCounts::new(keys, 1),
            node_bits,
        })
    }

    fn add_to(&self, table: &TransitionTable, histogram: &mut BattleHistogram) {
        for (key, count) in self.slots.counted() {
            let node = key & ((1 << self.node_bits) - 1);
            let rounds = (key >> self.node_bits) as u32;
            let end = &table.states[node];
            let outcome = BattleOutcome::new(table.endings[node], rounds, &table.start, end);
            histogram.record_count(&outcome, count);
        }
    }
}

/// Fights [`super::FieldKernel::fight_block`]'s `n` battles on the lanes' streams
/// (`lanes`, their xoshiro256++ states) all lanes at once, and returns the sweeps (each
/// draws a word in every lane); or fights nothing and returns `None` where it cannot or
/// should not: see [`all_at_once`], and fewer than a battle for every
/// [`Counts::KEYS_PER_BATTLE`] count keys.
pub(super) fn fight_lanes(
    table: &TransitionTable,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    histogram: &mut BattleHistogram,
) -> Option<u64> {
    let (keys, _) = Counts::keys(table)?;
    if (keys as u64).div_ceil(Counts::KEYS_PER_BATTLE as u64) > n {
        return None;
    }
    all_at_once(table, lanes, n, histogram)
}

/// [`fight_lanes`] whatever `n`, in the widest vector form the CPU has, or `None` where
/// the sweeps cannot run (see [`all_at_once_in`]).
fn all_at_once(
    table: &TransitionTable,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    histogram: &mut BattleHistogram,
) -> Option<u64> {
    all_at_once_in(VectorForm::detect()?, table, lanes, n, histogram)
}

/// [`all_at_once`] in the form `form`, which the tests run in turn, or `None` where the
/// sweeps cannot run: the CPU lacks the form, a lane's share passes 2^32 − 1 battles, a
/// round's value is cut in three ([`Cut::Sides`]), or [`Counts::keys`] refuses the table.
fn all_at_once_in(
    form: VectorForm,
    table: &TransitionTable,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    histogram: &mut BattleHistogram,
) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    if let Cut::Joint(sides) = table.cut {
        // Both forms count a lane's battles left in 32 bits.
        if form.available() && shares_fit_32_bits(n) {
            if let Some(mut counts) = Counts::new(table) {
                // SAFETY: the form's feature is detected, the cut is joint, the counts are
                // `Counts::new(table)`'s and a lane's battles fit 32 bits.
                let sweeps = unsafe {
                    match form {
                        VectorForm::Avx512 => sweeps_avx512(table, sides, lanes, n, &mut counts),
                        VectorForm::Avx2 => sweeps_avx2(table, sides, lanes, n, &mut counts),
                    }
                };
                counts.add_to(table, histogram);
                return Some(sweeps);
            }
        }
    }
    let _ = (form, table, lanes, n, histogram);
    None
}

/// [`sweeps_avx512`]'s sweep for CPUs without AVX-512: the lanes' streams in eight AVX2
/// registers of four 64-bit lanes, their battles in four of eight 32-bit lanes, as naval's
/// AVX2 sweep holds them.
///
/// # Safety
/// As for [`sweeps_avx512`], with AVX2 for AVX-512F; and a lane's battles must be at most
/// `u32::MAX` ([`all_at_once_in`] checks it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sweeps_avx2(
    table: &TransitionTable,
    sides: u32,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    counts: &mut Counts,
) -> u64 {
    use crate::dice::lanes::avx2::{group32, join, narrow, take, Streams, GROUPS32};
    use crate::dice::lanes::lane_battles;
    use std::arch::x86_64::*;
    // Every 32-bit value below is under 2^31 (nodes below 2^16, entries below
    // `MAX_TABLE_ENTRIES`, rounds and keys below `Counts::MAX_KEYS + LANES`, a lane's
    // battles checked), so AVX2's signed compares order them as unsigned.
    let splat = |v: u32| _mm256_set1_epi32(v as i32);
    let mut streams = Streams::new(lanes);
    let mut left: [__m256i; GROUPS32] =
        std::array::from_fn(|h| group32(h, |l| lane_battles(n, l) as u32));
    let spare: [__m256i; GROUPS32] = std::array::from_fn(|h| group32(h, |l| counts.slots.spare(l)));
    let (zero, one, all) = (splat(0), splat(1), splat(u32::MAX));
    let v_sides = _mm256_set1_epi64x(i64::from(sides));
    let v_stride = splat(table.stride as u32);
    let v_with_rows = splat(table.with_rows as u32);
    let v_limit = splat(table.round_limit);
    let v_node_bits = _mm_cvtsi32_si128(counts.node_bits as i32);
    let low16 = splat(0xFFFF);
    let mut node = [zero; GROUPS32];
    let mut round = [zero; GROUPS32];
    let mut keys = [0u32; LANES];
    let mut sweeps = 0;
    while left.iter().any(|&l| _mm256_testz_si256(l, l) == 0) {
        sweeps += 1;
        // PERF: every register's next nodes are gathered first, then the registers step:
        // the gathers (a chain node → gather → node in each register) overlap. With the
        // battles in registers of four 64-bit lanes, one after the other, 117–126 M
        // battles/s in the `profile` loop; gathered first, 134–140 M; in 32-bit lanes,
        // see docs/performance.md.
        let mut nexts = [zero; GROUPS32];
        for (h, next) in nexts.iter_mut().enumerate() {
            // The round's value in each lane: groups `2h` and `2h + 1` of the streams hold
            // this register's low and high four lanes.
            let value = join(
                narrow(take(streams.next(2 * h), v_sides)),
                narrow(take(streams.next(2 * h + 1), v_sides)),
            );
            // The next node, a `u16` read as the low half of the 32 bits at its address.
            // SAFETY: as in `sweeps_avx512`.
            let index = _mm256_add_epi32(_mm256_mullo_epi32(node[h], v_stride), value);
            *next = _mm256_i32gather_epi32::<2>(table.next.as_ptr().cast(), index);
        }
        for h in 0..GROUPS32 {
            let idle = _mm256_cmpeq_epi32(left[h], zero);
            let next = _mm256_and_si256(nexts[h], low16);
            let rounds = _mm256_add_epi32(round[h], one);
            // `next ≥ with_rows` or `rounds ≥ limit`: not below either.
            let ended = _mm256_xor_si256(
                _mm256_and_si256(
                    _mm256_cmpgt_epi32(v_with_rows, next),
                    _mm256_cmpgt_epi32(v_limit, rounds),
                ),
                all,
            );
            let counted = _mm256_andnot_si256(idle, ended);
            let key = _mm256_or_si256(_mm256_sll_epi32(rounds, v_node_bits), next);
            let slot = _mm256_blendv_epi8(spare[h], key, counted);
            _mm256_storeu_si256(keys.as_mut_ptr().add(8 * h).cast(), slot);
            node[h] = _mm256_blendv_epi8(next, zero, ended);
            round[h] = _mm256_blendv_epi8(rounds, zero, ended);
            // `counted` is −1 where set.
            left[h] = _mm256_add_epi32(left[h], counted);
        }
        // SAFETY: as in `sweeps_avx512`.
        for (lane, &key) in keys.iter().enumerate() {
            counts.slots.add(lane, key);
        }
    }
    sweeps
}

/// The lanes' streams in four AVX-512 registers of eight 64-bit lanes, their battles in
/// two of sixteen 32-bit lanes.
///
/// # Safety
/// The CPU must have AVX-512F, `table`'s cut must be [`Cut::Joint`]`(sides)`, `counts`
/// must be `Counts::new(table)`'s, which checks what the gathers' bounds rest on (a row for
/// the start, a round limit of at least 1, the entry past the rows) and sizes the counts,
/// and a lane's battles must be at most `u32::MAX` ([`all_at_once_in`] checks it).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sweeps_avx512(
    table: &TransitionTable,
    sides: u32,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    counts: &mut Counts,
) -> u64 {
    use crate::dice::lanes::avx512::{halves, join, take, Streams, HALVES};
    use crate::dice::lanes::lane_battles;
    use std::arch::x86_64::*;
    let splat = |v: u32| _mm512_set1_epi32(v as i32);
    let mut streams = Streams::new(lanes);
    let mut left = halves(|l| lane_battles(n, l) as u32);
    let spare = halves(|l| counts.slots.spare(l));
    let (zero, one) = (splat(0), splat(1));
    let v_sides = _mm512_set1_epi64(i64::from(sides));
    let v_stride = splat(table.stride as u32);
    let v_with_rows = splat(table.with_rows as u32);
    let v_limit = splat(table.round_limit);
    let v_node_bits = _mm_cvtsi32_si128(counts.node_bits as i32);
    let low16 = splat(0xFFFF);
    let mut node = [zero; HALVES];
    let mut round = [zero; HALVES];
    let mut active: [__mmask16; HALVES] =
        std::array::from_fn(|h| _mm512_cmpneq_epu32_mask(left[h], zero));
    let mut keys = [0u32; LANES];
    let mut sweeps = 0;
    while active.iter().any(|&a| a != 0) {
        sweeps += 1;
        // PERF: both registers' next nodes are gathered first, then the registers step,
        // so the two gathers overlap; in 32-bit lanes a sweep is two gathers of sixteen,
        // where in 64-bit lanes it was four of eight (on the Zen 4, a gather of eight
        // costs about what one of sixteen does: docs/performance.md).
        let mut nexts = [zero; HALVES];
        for (h, next) in nexts.iter_mut().enumerate() {
            // The round's value in each lane (below 2^32: the high halves are 0).
            let low = take(streams.next(2 * h), v_sides);
            let high = take(streams.next(2 * h + 1), v_sides);
            let value = join(low, high);
            // The next node, a `u16` read as the low half of the 32 bits at its address.
            // SAFETY: a lane starts every round on a node with a row (node 0, the start,
            // has one; a lane goes on only from a node below `with_rows`, and is reset to
            // 0 when its battle ends), and its value is below `sides`, the stride, so
            // `index` is below `with_rows · stride` (below 2^31: `MAX_TABLE_ENTRIES`),
            // and the 32 bits read end at most at the entry past the rows
            // (`Counts::keys` checks it is there).
            let index = _mm512_add_epi32(_mm512_mullo_epi32(node[h], v_stride), value);
            *next = _mm512_i32gather_epi32::<2>(index, table.next.as_ptr().cast());
        }
        for h in 0..HALVES {
            let next = _mm512_and_si512(nexts[h], low16);
            let rounds = _mm512_add_epi32(round[h], one);
            let ended = _mm512_cmpge_epu32_mask(next, v_with_rows)
                | _mm512_cmpge_epu32_mask(rounds, v_limit);
            let counted = ended & active[h];
            let key = _mm512_or_si512(_mm512_sll_epi32(rounds, v_node_bits), next);
            let slot = _mm512_mask_blend_epi32(counted, spare[h], key);
            _mm512_storeu_si512(keys.as_mut_ptr().add(16 * h).cast(), slot);
            node[h] = _mm512_maskz_mov_epi32(!ended, next);
            round[h] = _mm512_maskz_mov_epi32(!ended, rounds);
            left[h] = _mm512_mask_sub_epi32(left[h], counted, left[h], one);
            active[h] = _mm512_cmpneq_epu32_mask(left[h], zero);
        }
        // SAFETY: a counted lane's rounds are 1 to the round limit (it ends at the limit)
        // and its node is below the table's node count, so its key is below
        // `(limit + 1) << node_bits`; every other lane's slot is its spare, one of the
        // `LANES` after the keys (`LaneCounts`, which counts lane by lane in copies).
        for (lane, &key) in keys.iter().enumerate() {
            counts.slots.add(lane, key);
        }
    }
    sweeps
}

#[cfg(test)]
mod tests {
    use super::super::tests::{battle, edited_rules, UNIFORM};
    use super::super::{FieldKernel, MAX_TABLE_ENTRIES};
    use super::*;
    use crate::dice::lanes::{self, lane_battles};
    use crate::dice::DiceStream;
    use crate::systems::field::battle::{BattleResult, FieldBattle, FieldCombat, FieldRules};

    /// Every form fights the same battles: the table's lanes all at once (in each vector
    /// form the CPU has, AVX-512F or AVX2), the table lane by lane, and the round-by-round
    /// kernel lane by lane (the reference: no table involved), with the same counts and the
    /// same words drawn from the block's stream (the lanes' keys: `LANES`, or none for no
    /// battle).
    #[test]
    fn lanes_at_once_fight_the_battles_each_lane_fights_on_its_own_stream() {
        let mixed = [[2, 1, 0, 1, 0, 0, 0], [0, 0, 2, 0, 1, 1, 0]];
        let mut one_round = FieldRules::printed();
        one_round.round_limit = 1;
        let mut hundred_rounds = FieldRules::printed();
        hundred_rounds.round_limit = 100;
        let cases: Vec<(FieldRules, FieldBattle)> = vec![
            // 1 201 nodes: counts of 206 848 keys (11 node bits), lane by lane as run
            // below 51 712 battles a call.
            (hundred_rounds, battle([8, 6], [3, 3], [UNIFORM; 2])),
            (FieldRules::printed(), battle([12, 8], [2, 2], mixed)),
            (edited_rules(), battle([12, 8], [2, 2], mixed)),
            (FieldRules::printed(), battle([5, 9], [3, 1], [UNIFORM; 2])),
            (edited_rules(), battle([5, 9], [3, 1], [UNIFORM; 2])),
            (one_round, battle([4, 3], [2, 2], [UNIFORM; 2])),
        ];
        let mut at_once = [0; 2];
        let mut as_run_at_once = 0;
        let mut results = [0u64; BattleResult::COUNT];
        for (case, (rules, battle)) in cases.into_iter().enumerate() {
            let field = FieldCombat::new(rules).unwrap();
            let prepared = battle.prepare().unwrap();
            let table = TransitionTable::compile(&field, &prepared, MAX_TABLE_ENTRIES).unwrap();
            assert!(table.joint_draw(), "case {case}");
            // The entry past the rows that the gathers read.
            assert_eq!(table.next.len(), table.entries() + 1, "case {case}");
            let limit = field.rules().round_limit;
            for n in [0, 1, 5, 31, 32, 33, 3_001, 60_000] {
                let start = DiceStream::for_block(40 + case as u64, n);
                let fought = |how: &str| {
                    let mut dice = start.clone();
                    let mut h = BattleHistogram::new(&prepared, limit);
                    match how {
                        "round by round" => {
                            FieldKernel::RoundByRound(&field, &prepared)
                                .fight_block(&mut dice, n, &mut h);
                        }
                        "table, lane by lane" => {
                            let never_at_once =
                                |_: &[[u64; 4]; LANES], _: &mut BattleHistogram| None;
                            lanes::fight_block(&mut dice, n, &mut h, never_at_once, |d, h| {
                                let outcome = table.fight(d);
                                h.record(&outcome);
                                u64::from(outcome.rounds)
                            });
                        }
                        _ => {
                            FieldKernel::Table(&table).fight_block(&mut dice, n, &mut h);
                        }
                    }
                    let words = start.words_until(&dice, LANES as u64);
                    (h, words)
                };
                let (expected, words) = fought("round by round");
                assert_eq!(words, Some(if n == 0 { 0 } else { LANES as u64 }));
                assert_eq!(expected.trials(), n);
                for how in ["table, lane by lane", "table, as run"] {
                    assert_eq!(
                        fought(how),
                        (expected.clone(), words),
                        "case {case}, n {n}, {how}"
                    );
                }
                // The words each form reports: the lanes' keys and one a round lane by
                // lane; all at once, a word a lane every sweep, as many sweeps as the
                // lane with the most rounds.
                let mut lane_rounds = [0u64; LANES];
                let mut dice = start.clone();
                let lanes = if n > 0 {
                    dice.lane_states()
                } else {
                    [[1; 4]; LANES]
                };
                for (lane, &state) in lanes.iter().enumerate() {
                    let mut stream = DiceStream::from_state(state);
                    for _ in 0..lane_battles(n, lane) {
                        lane_rounds[lane] += u64::from(table.fight(&mut stream).rounds);
                    }
                }
                let rounds: u64 = expected.rounds.iter().zip(0..).map(|(c, r)| c * r).sum();
                assert_eq!(lane_rounds.iter().sum::<u64>(), rounds);
                let keys = if n > 0 { LANES as u64 } else { 0 };
                let mut h = BattleHistogram::new(&prepared, limit);
                let round_by_round = FieldKernel::RoundByRound(&field, &prepared);
                assert_eq!(
                    round_by_round.fight_block(&mut start.clone(), n, &mut h),
                    rounds + keys
                );
                for form in VectorForm::ALL.into_iter().filter(|_| n > 0) {
                    let mut h = BattleHistogram::new(&prepared, limit);
                    if let Some(sweeps) = all_at_once_in(form, &table, &lanes, n, &mut h) {
                        assert_eq!(h, expected, "case {case}, n {n}, all at once, {form:?}");
                        assert_eq!(sweeps, *lane_rounds.iter().max().unwrap(), "{form:?}");
                        at_once[form as usize] += 1;
                        if Some(form) != VectorForm::detect() {
                            continue;
                        }
                        // As run, all at once where the call has a battle for every
                        // `KEYS_PER_BATTLE` keys, else lane by lane.
                        let (keys_of_counts, _) = Counts::keys(&table).unwrap();
                        let as_run = if (keys_of_counts / Counts::KEYS_PER_BATTLE) as u64 <= n {
                            (sweeps + 1) * LANES as u64
                        } else {
                            rounds + keys
                        };
                        let mut h = BattleHistogram::new(&prepared, limit);
                        let words =
                            FieldKernel::Table(&table).fight_block(&mut start.clone(), n, &mut h);
                        assert_eq!(words, as_run, "case {case}, n {n}");
                        as_run_at_once += usize::from(as_run != rounds + keys);
                    }
                }
                for (r, c) in results.iter_mut().zip(&expected.result) {
                    *r += c;
                }
            }
        }
        // Not vacuous: battles that ended in several ways.
        assert!(
            results.iter().filter(|&&c| c > 0).count() >= 3,
            "{results:?}"
        );
        VectorForm::assert_ran_where_available(at_once);
        assert_eq!(as_run_at_once > 0, VectorForm::detect().is_some());
    }

    /// A round cut in three ([`Cut::Sides`]) is fought lane by lane.
    #[test]
    fn rounds_cut_in_three_are_fought_lane_by_lane() {
        let field = FieldCombat::new(FieldRules::printed()).unwrap();
        let percent = [[60, 25, 0, 15, 0, 0, 0], [0, 5, 50, 0, 20, 20, 5]];
        let prepared = battle([30, 14], [2, 2], percent).prepare().unwrap();
        let table = TransitionTable::compile(&field, &prepared, MAX_TABLE_ENTRIES).unwrap();
        assert!(!table.joint_draw());
        let lanes = DiceStream::for_block(1, 2).lane_states();
        let mut h = BattleHistogram::new(&prepared, field.rules().round_limit);
        assert!(fight_lanes(&table, &lanes, 100_000, &mut h).is_none());
        assert!(all_at_once(&table, &lanes, 100_000, &mut h).is_none());
        assert_eq!(h.trials(), 0);
    }
}
