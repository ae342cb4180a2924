//! Melee engagements thirty-two at once, one to a lane, with masks in place of branches.
//!
//! Why this module exists: [`MeleeCombat::engage`] fights one engagement at a time, and
//! how many phases it lasts is the dice's: the loop's exit, the casualty cap and the break
//! tests are branches or chains no predictor can learn, and every engagement pays for
//! them in scalar instructions. Here a block's engagements are fought in [`LANES`] lanes,
//! each on its own stream split from the block's (`dice::lanes`): lane `l` fights
//! [`lane_battles`]`(n, l)` engagements one after another on its stream, so the
//! engagements are the same whichever form fights them: the vector sweeps (x86-64 with
//! AVX2, detected at run time; with several side-B units, AVX-512F's where the CPU has
//! it), where the lanes advance together, one phase each a sweep, and a lane whose
//! engagement ends counts it and starts its next in the next sweep; or
//! [`MeleeCombat::engage`] lane by lane, on any machine, for engagements the
//! sweeps do not take (an attack group too large for a table, count tables past
//! [`Keys::MAX_SLOTS`]), and for calls of fewer engagements than
//! a quarter of the count table's slots (which are zeroed and read once a call). There
//! are two sweeps: a duel's (one side-B unit, [`Duel`]), and one for two to
//! [`MAX_B_UNITS`] side-B units ([`Several`]), where a lane samples a unit's group only
//! while the unit is present and the group has dice, so lanes draw different numbers of
//! words a phase. The tests
//! hold both to the rules' own phase step lane by lane. It is how runs fight melee
//! engagements (`systems::melee`).
//!
//! The dice: a phase of a duel takes three words from its lane's stream, as
//! [`MeleeCombat::engage`] does: B's attack group on A (one draw from its alias table),
//! A's on B, then the break word (one roll of the break dice, `take(6^dice)`); in the
//! duel's sweep a lane with no engagement left draws its words and does not use them,
//! until the block's last lane is done. With several side-B units a phase takes, for
//! each unit present in turn, a word for its group on A and one for A's on it (each only
//! where the group has dice), then the break word, whose successive rolls go to the
//! testers in unit order; each lane steps its own stream for its own draws. Whether an
//! engagement is counted is decided before its first die (each lane fights its share), so
//! the counts keep the rules' distribution.
//!
//! PERF (issue 16): see `docs/performance.md` ("Many battles at once: lanes") for the
//! bench figures. A duel's phase is a fixed sequence of table reads (each side's unit after
//! its wounds, the alias columns of two samples, the break sum) with no branch but a sample's
//! test for a tie with its cut, taken about once in 2^19 samples of eight lanes (the
//! several-units sweep also branches to skip a group no lane of a register samples); an ended
//! engagement is counted by one key, (phase, end, wounds taken by each side), which fixes
//! the whole outcome, one increment an engagement, folded into the histogram at the end
//! of the call. With several side-B units the key is (phase, end, models lost by each
//! side); each unit's entry holds its group, margin and models lost, so one read after
//! its wounds gives its break margin, its models lost and its next group; a group no
//! lane of a register samples is skipped (`profile melee-surrounded`, the bench's flank
//! and rear: 24.2 M engagements/s lane by lane, 38.0 M in the sweeps). On the AMD EPYC
//! (Zen 3) gathers held the sweeps' throughput, so the tables of at most 32 entries (a
//! unit's entries after its wounds where no unit takes more than 31, the units present's
//! entries) are read by permutes from registers ([`crate::dice::lanes::avx2::lookup32`]):
//! 37.1 → 40.9 M engagements/s with several side-B units, 59.2 → 60.6 M for the duel. A
//! sample then gathered each lane's cut and outcomes as two 64-bit words; it gathers one
//! 32-bit word a lane now, the cut's prefix and both outcomes' wounds ([`sample_wounds8`]),
//! and a unit's two samples are no longer looped over an array the compiler kept on the
//! stack: callgrind 195 → 162 instructions an engagement with several side-B units, 121 →
//! 104 for the duel; 26% and 34% more engagements a second (median of 20 paired runs of
//! `profile melee-surrounded` and `melee-duel`, 1e7 each, against the binary before).
//! With several side-B units, A's group on each unit is read by permutes too (where A has
//! at most 32 entries and the units present give the unit at most two blocks of A's
//! groups), and a break test compares its roll's rank with the first rank whose sum
//! reaches the margin less the difference (a table of 32 by permutes), where gathers read
//! them: in the bench's engagement a phase's only gathers are now its samples'
//! (`profile melee-surrounded` 65.6 → 71.4 M engagements/s, the builds beside each other
//! on the AMD EPYC Zen 4; docs/performance.md). On that CPU the several-units sweep then
//! runs in AVX-512 registers ([`MeleeCombat::several_avx512`]): sixteen lanes to a
//! register, a sample one gather of sixteen (about 1.35 gathers of eight's cost), each
//! table of 32 one `vpermt2d` (AVX2: four permutes and three blends), the lanes' flags in
//! mask registers, and the sweep's values in 32 registers where AVX2's sixteen spilled:
//! 72 → 101 M engagements/s (three runs of each build, alternated, same checksums).

// The vector form is x86-64's; elsewhere its tables and helpers go unused.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

use super::{
    AliasColumn, EngagementHistogram, GroupRef, MeleeCombat, PresentAt, END_BY_FLAGS, END_COUNT,
    MAX_B_UNITS, PRESENT_AT_WORDS,
};
use crate::dice::lanes::{lane_battles, shares_fit_32_bits, LaneCounts, VectorForm, LANES};

/// What the AVX2 sweeps read of a duel (one side-B unit), built once a call.
struct Duel<'a> {
    /// `sides[0][taken]`: A after `taken` wounds (0 to its total): its attack group on B
    /// (a [`GroupRef`] naming a table) in bits 0–23 and its break margin from bit 24;
    /// `sides[1][taken]` likewise for B (its group on A). A side taken to its total is
    /// destroyed: its margin is never read (it takes no test) and its group, set to the
    /// fresh unit's, never sampled (its engagement has ended).
    sides: [Vec<u32>; 2],
    /// Wounds each unit can take.
    total: [u32; 2],
    /// B's flank and rear bonus (0 for a unit in front).
    bonus: u32,
    /// `break_sum[v]` of the combat (`EngageTables::break_sum`).
    break_sum: &'a [u32],
    break_faces: u32,
    /// The count table, keyed by wounds taken (A's, then B's).
    keys: Keys,
    /// `lost[side][taken]`: models lost after `taken` wounds.
    lost: [Vec<u32>; 2],
}

/// The count table of a sweep: an ended engagement counts at `((phase − 1) · END_COUNT +
/// end) · per_end + a · b_values + b`, phases 1 to the round limit, where `a` and `b` name
/// what each side lost (a duel's wounds taken, which fix its models lost; several units'
/// models lost), and each table ends in [`LANES`] spare slots, one a lane, where a lane that
/// did not end a counted engagement counts (so that every lane counts every sweep).
#[derive(Clone, Copy, Debug)]
struct Keys {
    round_limit: u32,
    a_values: usize,
    b_values: usize,
}

impl Keys {
    /// Most slots of a count table (2 MiB of counts).
    const MAX_SLOTS: usize = 1 << 18;

    /// Most slots an engagement of the call: the counts are zeroed and read once a call,
    /// so a call of few engagements with a large table fights lane by lane (the bench
    /// duel's table takes 3,969 engagements; a block is 65,536).
    const SLOTS_PER_ENGAGEMENT: usize = 4;

    /// Whether the table is within [`Self::MAX_SLOTS`] (and has a phase).
    fn fit(self) -> Option<Self> {
        (self.round_limit >= 1 && self.slots() <= Self::MAX_SLOTS).then_some(self)
    }

    /// Outcomes by what each side lost.
    fn per_end(self) -> usize {
        self.a_values * self.b_values
    }

    /// Count slots, the spare ones aside.
    fn slots(self) -> usize {
        self.round_limit as usize * END_COUNT * self.per_end()
    }

    /// Whether a call of `n` engagements is worth the table: at most
    /// [`Self::SLOTS_PER_ENGAGEMENT`] slots an engagement (and each lane's share within
    /// the sweeps' 32-bit count of engagements left; a run's block is 65,536).
    fn worth(self, n: u64) -> bool {
        (self.slots() as u64).div_ceil(Self::SLOTS_PER_ENGAGEMENT as u64) <= n
            && shares_fit_32_bits(n)
    }

    /// Adds the counts (the spare slots aside) into `h`: a key's first part is the
    /// histogram's `ends` index; `models_lost(a, b)` the models each side lost.
    fn add_to(
        self,
        counts: &LaneCounts,
        h: &mut EngagementHistogram,
        models_lost: impl Fn(usize, usize) -> [u32; 2],
    ) {
        let per_end = self.per_end();
        for (key, count) in counts.counted() {
            let lost = key % per_end;
            h.ends[key / per_end] += count;
            let [a, b] = models_lost(lost / self.b_values, lost % self.b_values);
            h.models_lost[0][a as usize] += count;
            h.models_lost[1][b as usize] += count;
        }
    }
}

/// A [`Keys`] table's parts as the AVX2 sweeps add them.
#[cfg(target_arch = "x86_64")]
struct KeyVectors {
    /// A key's phase part, `(phase − 1) · END_COUNT · per_end`, is kept as it stands: it
    /// steps by `phase_step` a phase, and the last phase's is `last_phase`.
    phase_step: std::arch::x86_64::__m256i,
    last_phase: std::arch::x86_64::__m256i,
    /// `b_values`, what `a` is multiplied by.
    b_values: std::arch::x86_64::__m256i,
    /// A key's end part, `end · per_end`, by flags (`END_BY_FLAGS`), 0–7 and 8–15.
    ends_low: std::arch::x86_64::__m256i,
    ends_high: std::arch::x86_64::__m256i,
    /// Each lane's spare slot.
    spare: [std::arch::x86_64::__m256i; crate::dice::lanes::avx2::GROUPS32],
}

#[cfg(target_arch = "x86_64")]
impl KeyVectors {
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn new(keys: Keys) -> Self {
        use crate::dice::lanes::avx2::group32;
        use std::arch::x86_64::*;
        let phase_step = (END_COUNT * keys.per_end()) as u32;
        let ends: [i32; 16] =
            std::array::from_fn(|f| (END_BY_FLAGS[f].index() * keys.per_end()) as i32);
        Self {
            phase_step: _mm256_set1_epi32(phase_step as i32),
            last_phase: _mm256_set1_epi32(((keys.round_limit - 1) * phase_step) as i32),
            b_values: _mm256_set1_epi32(keys.b_values as i32),
            ends_low: _mm256_loadu_si256(ends.as_ptr().cast()),
            ends_high: _mm256_loadu_si256(ends.as_ptr().add(8).cast()),
            spare: std::array::from_fn(|g| group32(g, |l| (keys.slots() + l) as u32)),
        }
    }

    /// Which lanes of register `h` ended their engagement this phase, and the slot each
    /// lane counts in: its key where it ended a counted engagement (`busy`), else its
    /// spare slot. An engagement ends where A is gone or side B is (`gone`, as masks), or
    /// at the phase limit; its end is `END_BY_FLAGS` of `a_gone | b_gone << 1 |
    /// a_destroyed << 2 | b_fled << 3`, as the scalar kernel indexes it; `lost` is what
    /// each side lost (`a`, `b` of the key). Returns `(ended, counted, slot)`.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn slot(
        &self,
        h: usize,
        phase_key: std::arch::x86_64::__m256i,
        gone: [std::arch::x86_64::__m256i; 2],
        destroyed_a: std::arch::x86_64::__m256i,
        b_fled: std::arch::x86_64::__m256i,
        lost: [std::arch::x86_64::__m256i; 2],
        busy: std::arch::x86_64::__m256i,
    ) -> [std::arch::x86_64::__m256i; 3] {
        use std::arch::x86_64::*;
        let [a_gone, b_gone] = gone;
        let at_limit = _mm256_cmpeq_epi32(phase_key, self.last_phase);
        let ended = _mm256_or_si256(_mm256_or_si256(a_gone, b_gone), at_limit);
        let flags = _mm256_or_si256(
            _mm256_or_si256(
                _mm256_and_si256(a_gone, _mm256_set1_epi32(1)),
                _mm256_and_si256(b_gone, _mm256_set1_epi32(2)),
            ),
            _mm256_and_si256(destroyed_a, _mm256_set1_epi32(4)),
        );
        let end_key = _mm256_blendv_epi8(
            _mm256_permutevar8x32_epi32(self.ends_low, flags),
            _mm256_permutevar8x32_epi32(self.ends_high, flags),
            b_fled,
        );
        let key = _mm256_add_epi32(
            _mm256_add_epi32(phase_key, end_key),
            _mm256_add_epi32(_mm256_mullo_epi32(lost[0], self.b_values), lost[1]),
        );
        let counted = _mm256_and_si256(busy, ended);
        [
            ended,
            counted,
            _mm256_blendv_epi8(self.spare[h], key, counted),
        ]
    }

    /// The next phase's key part: the next phase's, or the first's where the lane's
    /// engagement `ended`.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn next_phase(
        &self,
        phase_key: std::arch::x86_64::__m256i,
        ended: std::arch::x86_64::__m256i,
    ) -> std::arch::x86_64::__m256i {
        use std::arch::x86_64::*;
        _mm256_andnot_si256(ended, _mm256_add_epi32(phase_key, self.phase_step))
    }
}

/// [`KeyVectors`] in sixteen lanes of AVX-512 registers, with masks for the lanes' flags.
#[cfg(target_arch = "x86_64")]
struct KeyVectors512 {
    phase_step: std::arch::x86_64::__m512i,
    last_phase: std::arch::x86_64::__m512i,
    b_values: std::arch::x86_64::__m512i,
    /// A key's end part, `end · per_end`, by flags (`END_BY_FLAGS`): one register.
    ends: std::arch::x86_64::__m512i,
    /// Each lane's spare slot.
    spare: [std::arch::x86_64::__m512i; crate::dice::lanes::avx512::HALVES],
}

#[cfg(target_arch = "x86_64")]
impl KeyVectors512 {
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    unsafe fn new(keys: Keys) -> Self {
        use crate::dice::lanes::avx512::halves;
        use std::arch::x86_64::*;
        let phase_step = (END_COUNT * keys.per_end()) as u32;
        let ends: [u32; 16] =
            std::array::from_fn(|f| (END_BY_FLAGS[f].index() * keys.per_end()) as u32);
        Self {
            phase_step: _mm512_set1_epi32(phase_step as i32),
            last_phase: _mm512_set1_epi32(((keys.round_limit - 1) * phase_step) as i32),
            b_values: _mm512_set1_epi32(keys.b_values as i32),
            ends: _mm512_loadu_si512(ends.as_ptr().cast()),
            spare: halves(|l| (keys.slots() + l) as u32),
        }
    }

    /// [`KeyVectors::slot`] for register `h` of sixteen lanes, the lanes' flags as masks:
    /// returns `(ended, counted, slot)`.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn slot(
        &self,
        h: usize,
        phase_key: std::arch::x86_64::__m512i,
        [a_gone, b_gone]: [std::arch::x86_64::__mmask16; 2],
        destroyed_a: std::arch::x86_64::__mmask16,
        b_fled: std::arch::x86_64::__mmask16,
        lost: [std::arch::x86_64::__m512i; 2],
        busy: std::arch::x86_64::__mmask16,
    ) -> (
        std::arch::x86_64::__mmask16,
        std::arch::x86_64::__mmask16,
        std::arch::x86_64::__m512i,
    ) {
        use std::arch::x86_64::*;
        let at_limit = _mm512_cmpeq_epi32_mask(phase_key, self.last_phase);
        let ended = a_gone | b_gone | at_limit;
        let flag = |mask: __mmask16, bit: i32| _mm512_maskz_mov_epi32(mask, _mm512_set1_epi32(bit));
        let flags = _mm512_or_si512(
            _mm512_or_si512(flag(a_gone, 1), flag(b_gone, 2)),
            _mm512_or_si512(flag(destroyed_a, 4), flag(b_fled, 8)),
        );
        let key = _mm512_add_epi32(
            _mm512_add_epi32(phase_key, _mm512_permutexvar_epi32(flags, self.ends)),
            _mm512_add_epi32(_mm512_mullo_epi32(lost[0], self.b_values), lost[1]),
        );
        let counted = busy & ended;
        (
            ended,
            counted,
            _mm512_mask_blend_epi32(counted, self.spare[h], key),
        )
    }

    /// The next phase's key part: the next phase's, or the first's where the lane's
    /// engagement `ended`.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn next_phase(
        &self,
        phase_key: std::arch::x86_64::__m512i,
        ended: std::arch::x86_64::__mmask16,
    ) -> std::arch::x86_64::__m512i {
        use std::arch::x86_64::*;
        _mm512_maskz_add_epi32(!ended, phase_key, self.phase_step)
    }
}

/// Bits of a [`Duel`] side entry that hold the group.
const GROUP_BITS: u32 = 24;

/// Bits of a [`Several`] unit entry that hold the group, and that hold the margin.
const SEVERAL_GROUP_BITS: u32 = 16;
const SEVERAL_MARGIN_BITS: u32 = 8;

impl<'a> Duel<'a> {
    /// Whether the sweep reads each side's entry after its wounds by permutes (both have
    /// at most 32 entries), not by gathers.
    fn wounds_by_permutes(&self) -> bool {
        self.total.iter().all(|&total| total < 32)
    }

    /// The sweeps' tables, where the sweeps can fight `combat`: one side-B unit; every
    /// attack group of a unit not yet destroyed sampled from a table (no group of no dice,
    /// none rolled die by die: then a phase is always three words); groups and margins
    /// within their bits; at most [`Keys::MAX_SLOTS`] count slots (the bench duel's are
    /// 15,876).
    fn new(combat: &'a MeleeCombat) -> Option<Self> {
        if combat.units.len() != 2 {
            return None;
        }
        let t = &combat.fast;
        let full = combat.fresh_state().present;
        let at = t.at_present.get(usize::from(full))?;
        let total = [t.total_wounds[0], t.total_wounds[1]];
        let base = [0, t.unit_base[1]];
        let groups: [Vec<GroupRef>; 2] = [
            (0..total[0])
                .map(|taken| t.a_groups[at.a_base[0] as usize + taken as usize])
                .collect(),
            (0..total[1])
                .map(|taken| t.unit_at[base[1] + taken as usize].group)
                .collect(),
        ];
        let tabled = |g: GroupRef| g & 15 != 0 && g < 1 << GROUP_BITS;
        if !groups.iter().flatten().all(|&g| tabled(g)) {
            return None;
        }
        let mut sides = [Vec::new(), Vec::new()];
        let mut lost = [Vec::new(), Vec::new()];
        for side in 0..2 {
            for taken in 0..=total[side] {
                let at = t.unit_at[base[side] + taken as usize];
                let margin = u32::from(at.break_margin);
                if margin >= 1 << (32 - GROUP_BITS) {
                    return None;
                }
                let group = groups[side]
                    .get(taken as usize)
                    .copied()
                    .unwrap_or(groups[side][0]);
                sides[side].push(group | margin << GROUP_BITS);
                lost[side].push(u32::from(at.lost));
            }
        }
        let keys = Keys {
            round_limit: combat.engagement.round_limit,
            a_values: total[0] as usize + 1,
            b_values: total[1] as usize + 1,
        }
        .fit()?;
        Some(Self {
            sides,
            total,
            bonus: at.bonus,
            break_sum: &t.break_sum,
            break_faces: t.break_faces,
            keys,
            lost,
        })
    }

    /// Adds the counts into `h`: the wounds taken fix the models lost.
    fn add_to(&self, counts: &LaneCounts, h: &mut EngagementHistogram) {
        self.keys
            .add_to(counts, h, |a, b| [self.lost[0][a], self.lost[1][b]]);
    }
}

/// What the vector sweeps read of an engagement with several side-B units (2 to
/// [`MAX_B_UNITS`]), built once a call. A phase's words differ from lane to lane (a unit
/// not present, or a group of no dice, draws none), so each lane steps its own stream
/// only for the groups it samples.
struct Several<'a> {
    /// Side-B units.
    b: usize,
    /// `units[base[u] + taken]`: unit `u` (0: A) after `taken` wounds (0 to its total):
    /// its attack group on A (a [`GroupRef`]: 0, no dice, or a table; 0 for A) in bits
    /// 0–15, its break margin in bits 16–23 and the models it lost from bit 24.
    units: Vec<u32>,
    base: [u32; 1 + MAX_B_UNITS],
    total: [u32; 1 + MAX_B_UNITS],
    /// `at_present[present]` (`EngageTables::at_present`), read by permutes as 32-bit
    /// words.
    at_present: &'a [PresentAt],
    a_groups: &'a [GroupRef],
    break_faces: u32,
    /// The count table, keyed by models lost (A's, then side B's).
    keys: Keys,
}

impl<'a> Several<'a> {
    /// Whether the sweep reads each unit's entry after its wounds by permutes (every unit
    /// has at most 32 entries), not by gathers.
    fn wounds_by_permutes(&self) -> bool {
        self.total[..=self.b].iter().all(|&total| total < 32)
    }

    /// The sweeps' tables, where the sweeps can fight `combat`: two or more side-B units;
    /// every attack group of no dice or from a table (none rolled die by die); groups,
    /// margins and models lost within their bits; at most [`Keys::MAX_SLOTS`] count
    /// slots.
    fn new(combat: &'a MeleeCombat) -> Option<Self> {
        let b = combat.units.len().checked_sub(1)?;
        if !(2..=MAX_B_UNITS).contains(&b) {
            return None;
        }
        let t = &combat.fast;
        let fits = |g: GroupRef| g == 0 || (g & 15 != 0 && g < 1 << SEVERAL_GROUP_BITS);
        if t.columns.is_empty() || !t.a_groups.iter().all(|&g| fits(g)) {
            return None;
        }
        let mut base = [0u32; 1 + MAX_B_UNITS];
        let mut total = [0u32; 1 + MAX_B_UNITS];
        let mut units = Vec::new();
        let mut most_lost = [0u32; 2];
        for u in 0..=b {
            base[u] = units.len() as u32;
            total[u] = t.total_wounds[u];
            for taken in 0..=total[u] {
                let at = t.unit_at[t.unit_base[u] + taken as usize];
                let (margin, lost) = (u32::from(at.break_margin), u32::from(at.lost));
                let lost_bits = 32 - SEVERAL_GROUP_BITS - SEVERAL_MARGIN_BITS;
                if !fits(at.group) || margin >= 1 << SEVERAL_MARGIN_BITS || lost >= 1 << lost_bits {
                    return None;
                }
                units.push(
                    at.group
                        | margin << SEVERAL_GROUP_BITS
                        | lost << (SEVERAL_GROUP_BITS + SEVERAL_MARGIN_BITS),
                );
                if taken == total[u] {
                    most_lost[usize::from(u > 0)] += lost;
                }
            }
        }
        let keys = Keys {
            round_limit: combat.engagement.round_limit,
            a_values: most_lost[0] as usize + 1,
            b_values: most_lost[1] as usize + 1,
        }
        .fit()?;
        Some(Self {
            b,
            units,
            base,
            total,
            at_present: &t.at_present,
            a_groups: &t.a_groups,
            break_faces: t.break_faces,
            keys,
        })
    }

    /// Word `w` of `at_present[present]` as the sweeps read it by permutes: A's base in
    /// `a_groups` against side-B unit `w` (`w` below [`MAX_B_UNITS`]), else B's bonus; 0
    /// past the table.
    fn present_word(&self, w: usize, present: usize) -> u32 {
        self.at_present.get(present).map_or(0, |at| {
            if w < MAX_B_UNITS {
                at.a_base[w]
            } else {
                at.bonus
            }
        })
    }

    /// Unit `u`'s entry after `taken` wounds (`units[base[u] + taken]`), 0 past its total
    /// or past the engagement's units.
    fn unit_entry(&self, u: usize, taken: usize) -> u32 {
        if u <= self.b && taken as u32 <= self.total[u] {
            self.units[self.base[u] as usize + taken]
        } else {
            0
        }
    }

    /// A's group after `taken` wounds in the block of `a_groups` at `base`, 0 past A's
    /// total.
    fn a_group(&self, base: u32, taken: usize) -> u32 {
        if taken as u32 <= self.total[0] {
            self.a_groups[base as usize + taken]
        } else {
            0
        }
    }

    /// How the sweeps read A's group on side-B unit `j`: the blocks of A's groups the
    /// units present can give it (by their bases), by permutes where A has at most 32
    /// entries and there are at most two blocks.
    fn a_groups_for(&self, j: usize) -> AGroups<u32> {
        if j >= self.b || self.total[0] >= 32 {
            return AGroups::Gathered;
        }
        let mut bases: Vec<u32> = self.at_present.iter().map(|at| at.a_base[j]).collect();
        bases.sort_unstable();
        bases.dedup();
        let empty = |base: u32| (0..=self.total[0] as usize).all(|t| self.a_group(base, t) == 0);
        match bases[..] {
            [base] if empty(base) => AGroups::NoDice,
            [base] => AGroups::One(base),
            [first, second] => AGroups::Two(first, second),
            _ => AGroups::Gathered,
        }
    }
}

impl MeleeCombat {
    /// `fail_from[m]` of the several-units sweeps' break tests: the rolls whose sum is
    /// below `m`, `break_at_most[m − 1]` (the counts `failing_rolls` reads; `break_sum`
    /// rises with the rank), for `m` of 0 to 31.
    fn fail_from(&self, m: usize) -> u32 {
        let at_most = &self.break_at_most;
        debug_assert!(at_most.len() <= 31, "sums of at most 3d6 are below 31");
        m.checked_sub(1)
            .map_or(0, |k| at_most[k.min(at_most.len() - 1)] as u32)
    }
}

/// The wounds of one lane's alias table `group` for its word, read from the whole column
/// ([`AliasColumn::pick`]), as `MeleeCombat::sample_table` gives them (a group of 0 picks
/// column 0): the samplers' path where a word's prefix ties its cut's.
fn wounds_from_whole_column(columns: &[AliasColumn], group: u32, word: u64) -> u32 {
    // `checked_shr` by 64 is `None`.
    let within = word.checked_shr(64 - (group & 15)).unwrap_or(0);
    let column = (group >> 4) as usize + within as usize;
    columns[column].pick(word) & 0xffff
}

/// The wounds of eight lanes' alias tables `group` ([`GroupRef`]s naming tables) for their
/// words `u` (the low four lanes' in `u[0]`, the high four's in `u[1]`), as
/// `MeleeCombat::sample_table` gives them: the column from the word's top bits, read as
/// its 32-bit lane word (the cut's prefix within the column and both outcomes' wounds,
/// [`super::AliasColumn::lane_word`]). The word is below the cut where its prefix is below
/// the cut's. Where some lane's prefix equals the cut's (one word in 2^22), all eight lanes
/// are read from their whole columns instead. (A group of 0 reads column 0 and its outcome
/// is not used.)
///
/// PERF: one gather of a 32-bit word a lane, where two gathers of 64-bit words read a
/// lane's cut and outcomes (the module's PERF note).
///
/// # Safety
/// The CPU must have AVX2, each group must name a table of `columns` (or be 0, with
/// `columns` not empty), and `lane_columns` must be `columns` as lane words.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn sample_wounds8(
    (lane_columns, columns): (&[u32], &[AliasColumn]),
    group: std::arch::x86_64::__m256i,
    u: [std::arch::x86_64::__m256i; 2],
) -> std::arch::x86_64::__m256i {
    use super::LANE_CUT_BITS;
    use std::arch::x86_64::*;
    // The words' high halves, eight lanes: the column and the prefix are in them (a table
    // has at most `MAX_TABLE_BITS` bits, and `MAX_TABLE_BITS + LANE_CUT_BITS <= 32`).
    let odd = _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7);
    let high = _mm256_blend_epi32::<0xF0>(
        _mm256_permutevar8x32_epi32(u[0], odd),
        _mm256_permutevar8x32_epi32(u[1], odd),
    );
    let bits = _mm256_and_si256(group, _mm256_set1_epi32(15));
    // A shift by 32 (a group of 0) leaves 0.
    let column = _mm256_add_epi32(
        _mm256_srli_epi32::<4>(group),
        _mm256_srlv_epi32(high, _mm256_sub_epi32(_mm256_set1_epi32(32), bits)),
    );
    let word = _mm256_i32gather_epi32::<4>(lane_columns.as_ptr().cast(), column);
    const SHIFT: i32 = 32 - LANE_CUT_BITS as i32;
    // Both prefixes are below 2^22: a signed compare orders them.
    let (cut, prefix) = (
        _mm256_srli_epi32::<SHIFT>(word),
        _mm256_srli_epi32::<SHIFT>(_mm256_sllv_epi32(high, bits)),
    );
    let tie = _mm256_cmpeq_epi32(cut, prefix);
    if _mm256_testz_si256(tie, tie) == 0 {
        return wounds_by_whole_columns(columns, group, u);
    }
    // The wounds below the cut are bits 0–4 of the lane word, above it bits 5–9.
    let below = _mm256_cmpgt_epi32(cut, prefix);
    let shift = _mm256_andnot_si256(below, _mm256_set1_epi32(5));
    _mm256_and_si256(_mm256_srlv_epi32(word, shift), _mm256_set1_epi32(31))
}

/// [`sample_wounds8`] lane by lane from the whole columns ([`AliasColumn::pick`]): where
/// a word's prefix ties its cut's.
///
/// # Safety
/// As for [`sample_wounds8`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[cold]
#[inline(never)]
unsafe fn wounds_by_whole_columns(
    columns: &[AliasColumn],
    group: std::arch::x86_64::__m256i,
    u: [std::arch::x86_64::__m256i; 2],
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let (mut groups, mut words, mut wounds) = ([0u32; 8], [0u64; 8], [0u32; 8]);
    _mm256_storeu_si256(groups.as_mut_ptr().cast(), group);
    _mm256_storeu_si256(words.as_mut_ptr().cast(), u[0]);
    _mm256_storeu_si256(words[4..].as_mut_ptr().cast(), u[1]);
    for ((wounds, group), word) in wounds.iter_mut().zip(groups).zip(words) {
        *wounds = wounds_from_whole_column(columns, group, word);
    }
    _mm256_loadu_si256(wounds.as_ptr().cast())
}

/// [`sample_wounds8`] in sixteen lanes of an AVX-512 register: the wounds of the lanes'
/// alias tables `group` for their words `u` (lanes 0–7's in `u[0]`, 8–15's in `u[1]`),
/// from one gather of the lanes' 32-bit lane words; where some lane's prefix ties its
/// cut's, all sixteen from their whole columns.
///
/// # Safety
/// The CPU must have AVX-512F, each group must name a table of `columns` (or be 0, with
/// `columns` not empty), and `lane_columns` must be `columns` as lane words.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn sample_wounds16(
    (lane_columns, columns): (&[u32], &[AliasColumn]),
    group: std::arch::x86_64::__m512i,
    u: [std::arch::x86_64::__m512i; 2],
) -> std::arch::x86_64::__m512i {
    use super::LANE_CUT_BITS;
    use std::arch::x86_64::*;
    // The words' high halves, sixteen lanes (as in `sample_wounds8`).
    let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    let high = _mm512_permutex2var_epi32(u[0], odd, u[1]);
    let bits = _mm512_and_si512(group, _mm512_set1_epi32(15));
    // A shift by 32 (a group of 0) leaves 0.
    let column = _mm512_add_epi32(
        _mm512_srli_epi32::<4>(group),
        _mm512_srlv_epi32(high, _mm512_sub_epi32(_mm512_set1_epi32(32), bits)),
    );
    let word = _mm512_i32gather_epi32::<4>(column, lane_columns.as_ptr().cast());
    const SHIFT: u32 = 32 - LANE_CUT_BITS;
    let (cut, prefix) = (
        _mm512_srli_epi32::<SHIFT>(word),
        _mm512_srli_epi32::<SHIFT>(_mm512_sllv_epi32(high, bits)),
    );
    if _mm512_cmpeq_epi32_mask(cut, prefix) != 0 {
        return wounds_by_whole_columns16(columns, group, u);
    }
    // The wounds below the cut are bits 0–4 of the lane word, above it bits 5–9.
    let shift = _mm512_maskz_mov_epi32(_mm512_cmple_epu32_mask(cut, prefix), _mm512_set1_epi32(5));
    _mm512_and_si512(_mm512_srlv_epi32(word, shift), _mm512_set1_epi32(31))
}

/// [`sample_wounds16`] lane by lane from the whole columns: where a word's prefix ties
/// its cut's.
///
/// # Safety
/// As for [`sample_wounds16`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[cold]
#[inline(never)]
unsafe fn wounds_by_whole_columns16(
    columns: &[AliasColumn],
    group: std::arch::x86_64::__m512i,
    u: [std::arch::x86_64::__m512i; 2],
) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    let (mut groups, mut words, mut wounds) = ([0u32; 16], [0u64; 16], [0u32; 16]);
    _mm512_storeu_si512(groups.as_mut_ptr().cast(), group);
    _mm512_storeu_si512(words.as_mut_ptr().cast(), u[0]);
    _mm512_storeu_si512(words[8..].as_mut_ptr().cast(), u[1]);
    for ((wounds, group), word) in wounds.iter_mut().zip(groups).zip(words) {
        *wounds = wounds_from_whole_column(columns, group, word);
    }
    _mm512_loadu_si512(wounds.as_ptr().cast())
}

/// How the several-units sweeps read A's group on a side-B unit after A's wounds
/// ([`Several::a_groups`]): `T` is a block of A's groups, by its base in `a_groups` as
/// [`Several::a_groups_for`] gives it, then as the form's registers (the block's table for
/// the permutes and its base in every lane, which the units present pick by).
#[derive(Clone, Copy, Debug)]
enum AGroups<T> {
    /// Every block the unit can take has no dice (A does not attack a rear unit).
    NoDice,
    /// One block, by permutes.
    One(T),
    /// Two blocks by permutes: the units present pick one by its base.
    Two(T, T),
    /// Gathered from `a_groups` (more blocks, or A with more than 32 entries).
    Gathered,
}

impl<T> AGroups<T> {
    /// The same reads with each block `f` of its base.
    fn map<U>(self, f: impl Fn(T) -> U) -> AGroups<U> {
        match self {
            Self::NoDice => AGroups::NoDice,
            Self::One(block) => AGroups::One(f(block)),
            Self::Two(first, second) => AGroups::Two(f(first), f(second)),
            Self::Gathered => AGroups::Gathered,
        }
    }
}

impl MeleeCombat {
    /// The vector sweeps for a block's `n` engagements on the lanes' streams `lanes`, in
    /// the widest form the CPU has ([`VectorForm::detect`]), counted into `h`; see
    /// [`Self::all_at_once_in`].
    pub(super) fn all_at_once(
        &self,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        h: &mut EngagementHistogram,
    ) -> Option<u64> {
        self.all_at_once_in(VectorForm::detect()?, lanes, n, h)
    }

    /// The sweeps in the form `form`, which the tests run in turn, returning the words the
    /// lanes drew, all lanes together (a duel's three a phase in every lane to the block's
    /// last sweep; with several side-B units, each lane's engagements' words); `None`
    /// (nothing fought) where the CPU has not the form, the sweeps do not take the
    /// engagement ([`Duel::new`], [`Several::new`]) or the call is too small for its
    /// table ([`Keys::worth`]). Several side-B units are swept in either form; a duel has
    /// one sweep, AVX2's, which either form runs (a CPU with AVX-512F has AVX2).
    fn all_at_once_in(
        &self,
        form: VectorForm,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        h: &mut EngagementHistogram,
    ) -> Option<u64> {
        if !form.available() {
            return None;
        }
        if let Some(several) = Several::new(self).filter(|several| several.keys.worth(n)) {
            #[cfg(target_arch = "x86_64")]
            {
                let mut counts = LaneCounts::new(several.keys.slots(), 1);
                // SAFETY: the form's features are detected above, and `several` is
                // `Several::new(self)`'s, `counts` of its slots (and the spare ones).
                let words = unsafe {
                    match (form, several.b) {
                        (VectorForm::Avx512, 2) => {
                            self.several_avx512::<2>(&several, lanes, n, &mut counts)
                        }
                        (VectorForm::Avx512, 3) => {
                            self.several_avx512::<3>(&several, lanes, n, &mut counts)
                        }
                        (VectorForm::Avx512, _) => {
                            self.several_avx512::<MAX_B_UNITS>(&several, lanes, n, &mut counts)
                        }
                        (VectorForm::Avx2, 2) => {
                            self.several_avx2::<2>(&several, lanes, n, &mut counts)
                        }
                        (VectorForm::Avx2, 3) => {
                            self.several_avx2::<3>(&several, lanes, n, &mut counts)
                        }
                        (VectorForm::Avx2, _) => {
                            self.several_avx2::<MAX_B_UNITS>(&several, lanes, n, &mut counts)
                        }
                    }
                };
                several.keys.add_to(&counts, h, |a, b| [a as u32, b as u32]);
                return Some(words);
            }
        }
        let duel = Duel::new(self).filter(|duel| duel.keys.worth(n))?;
        #[cfg(target_arch = "x86_64")]
        if VectorForm::Avx2.available() {
            let mut counts = LaneCounts::new(duel.keys.slots(), 1);
            // SAFETY: the feature is detected above, and `duel` is `Duel::new(self)`'s,
            // `counts` of its slots (and the spare ones).
            let sweeps = unsafe { self.sweeps_avx2(&duel, lanes, n, &mut counts) };
            duel.add_to(&counts, h);
            return Some(3 * sweeps * LANES as u64);
        }
        let _ = (lanes, n, h);
        None
    }

    /// The lanes' engagements with the lanes' streams in eight AVX2 registers of four and
    /// the engagements in four of eight. Returns the sweeps (each draws three words in
    /// every lane).
    ///
    /// # Safety
    /// The CPU must have AVX2, `duel` must be `Duel::new(self)`'s and `counts` have
    /// `duel.keys.slots()` keys (the gathers' and the counts' bounds rest on them).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn sweeps_avx2(
        &self,
        duel: &Duel<'_>,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        counts: &mut LaneCounts,
    ) -> u64 {
        use crate::dice::lanes::avx2::{
            group32, join, lookup32, narrow, table32, take, Streams, GROUPS32,
        };
        use std::arch::x86_64::*;
        debug_assert_eq!(counts.keys(), duel.keys.slots());
        // Every 32-bit value below is under 2^31 (wounds, margins and sums of at most a few
        // thousand, keys below `Keys::MAX_SLOTS + LANES`), so AVX2's signed compares order
        // them as unsigned.
        let splat = |v: u32| _mm256_set1_epi32(v as i32);
        let columns = (&self.fast.lane_columns[..], &self.fast.columns[..]);
        let side_a: *const i32 = duel.sides[0].as_ptr().cast();
        let side_b: *const i32 = duel.sides[1].as_ptr().cast();
        let break_sum: *const i32 = duel.break_sum.as_ptr().cast();
        let (v_zero, v_all) = (splat(0), splat(u32::MAX));
        let v_group = splat((1 << GROUP_BITS) - 1);
        let (v_total_a, v_total_b) = (splat(duel.total[0]), splat(duel.total[1]));
        let v_bonus = splat(duel.bonus);
        let v_faces = _mm256_set1_epi64x(i64::from(duel.break_faces));
        let kv = KeyVectors::new(duel.keys);
        let (fresh_a, fresh_b) = (splat(duel.sides[0][0]), splat(duel.sides[1][0]));
        // PERF: each side's entry after its wounds read by permutes from registers where
        // both have at most 32 entries (wounds 0 to 31), not gathered (`profile
        // melee-duel`: gathers held the sweep's throughput on the AMD EPYC).
        let by_wounds: Option<[[__m256i; 4]; 2]> = duel.wounds_by_permutes().then(|| {
            [0, 1].map(|s| table32(|taken| duel.sides[s].get(taken).copied().unwrap_or(0)))
        });
        let mut streams = Streams::new(lanes);
        let mut taken_a = [v_zero; GROUPS32];
        let mut taken_b = [v_zero; GROUPS32];
        let mut at_a = [fresh_a; GROUPS32];
        let mut at_b = [fresh_b; GROUPS32];
        let mut phase_key = [v_zero; GROUPS32];
        let mut left: [__m256i; GROUPS32] =
            std::array::from_fn(|g| group32(g, |l| lane_battles(n, l) as u32));
        let mut keys = [0u32; LANES];
        let mut sweeps = 0;
        while left.iter().any(|&l| _mm256_testz_si256(l, l) == 0) {
            sweeps += 1;
            for h in 0..GROUPS32 {
                // Each lane's three words in order (groups 2h and 2h + 1 of the streams
                // hold this register's low and high four lanes).
                let on_a_words = [streams.next(2 * h), streams.next(2 * h + 1)];
                let on_b_words = [streams.next(2 * h), streams.next(2 * h + 1)];
                let break_words = [streams.next(2 * h), streams.next(2 * h + 1)];
                let idle = _mm256_cmpeq_epi32(left[h], v_zero);
                let group_b = _mm256_and_si256(at_b[h], v_group);
                let group_a = _mm256_and_si256(at_a[h], v_group);
                let on_a = sample_wounds8(columns, group_b, on_a_words);
                let on_b = sample_wounds8(columns, group_a, on_b_words);
                // Casualties, capped at the wounds each unit has left.
                let left_a = _mm256_sub_epi32(v_total_a, taken_a[h]);
                let left_b = _mm256_sub_epi32(v_total_b, taken_b[h]);
                let suffered_a = _mm256_min_epu32(on_a, left_a);
                let suffered_b = _mm256_min_epu32(on_b, left_b);
                let alive_a = _mm256_cmpgt_epi32(left_a, suffered_a);
                let alive_b = _mm256_cmpgt_epi32(left_b, suffered_b);
                let now_a = _mm256_add_epi32(taken_a[h], suffered_a);
                let now_b = _mm256_add_epi32(taken_b[h], suffered_b);
                let score_a = suffered_b;
                let score_b = _mm256_add_epi32(suffered_a, v_bonus);
                let a_wins = _mm256_cmpgt_epi32(score_a, score_b);
                let b_wins = _mm256_cmpgt_epi32(score_b, score_a);
                let difference = _mm256_sub_epi32(
                    _mm256_max_epu32(score_a, score_b),
                    _mm256_min_epu32(score_a, score_b),
                );
                // The break test: one roll from the break word, its sum from the table;
                // the loser's unit, if still there, flees at its margin after the phase.
                let roll = join(
                    narrow(take(break_words[0], v_faces)),
                    narrow(take(break_words[1], v_faces)),
                );
                let sum =
                    _mm256_add_epi32(_mm256_i32gather_epi32::<4>(break_sum, roll), difference);
                let (next_a, next_b) = match &by_wounds {
                    Some([a, b]) => (lookup32(a, now_a), lookup32(b, now_b)),
                    None => (
                        _mm256_i32gather_epi32::<4>(side_a, now_a),
                        _mm256_i32gather_epi32::<4>(side_b, now_b),
                    ),
                };
                // `sum ≥ margin`: not `margin > sum`.
                let holds_a =
                    _mm256_cmpgt_epi32(_mm256_srli_epi32::<{ GROUP_BITS as i32 }>(next_a), sum);
                let holds_b =
                    _mm256_cmpgt_epi32(_mm256_srli_epi32::<{ GROUP_BITS as i32 }>(next_b), sum);
                let fled_a = _mm256_andnot_si256(holds_a, _mm256_and_si256(alive_a, b_wins));
                let fled_b = _mm256_andnot_si256(holds_b, _mm256_and_si256(alive_b, a_wins));
                let destroyed_a = _mm256_xor_si256(alive_a, v_all);
                let a_gone = _mm256_or_si256(destroyed_a, fled_a);
                let b_gone = _mm256_or_si256(_mm256_xor_si256(alive_b, v_all), fled_b);
                let busy = _mm256_xor_si256(idle, v_all);
                let [ended, counted, slot] = kv.slot(
                    h,
                    phase_key[h],
                    [a_gone, b_gone],
                    destroyed_a,
                    fled_b,
                    [now_a, now_b],
                    busy,
                );
                _mm256_storeu_si256(keys.as_mut_ptr().add(8 * h).cast(), slot);
                taken_a[h] = _mm256_blendv_epi8(now_a, v_zero, ended);
                taken_b[h] = _mm256_blendv_epi8(now_b, v_zero, ended);
                at_a[h] = _mm256_blendv_epi8(next_a, fresh_a, ended);
                at_b[h] = _mm256_blendv_epi8(next_b, fresh_b, ended);
                phase_key[h] = kv.next_phase(phase_key[h], ended);
                // `counted` is −1 where set.
                left[h] = _mm256_add_epi32(left[h], counted);
            }
            // SAFETY: a lane's phase runs from 1 to the round limit (it ends there, where
            // its phase key is the last phase's), its end is one of END_COUNT, and its
            // wounds taken at most each unit's total, so a key is below `Duel::slots`; a
            // spare slot is one of the `LANES` after them (`LaneCounts`: one copy, its
            // PERF note says why).
            for (lane, &slot) in keys.iter().enumerate() {
                counts.add(lane, slot);
            }
        }
        sweeps
    }

    /// The lanes' engagements against `B` side-B units, the lanes' streams in eight AVX2
    /// registers of four and the engagements in four of eight, a phase each a sweep, as
    /// [`MeleeCombat::engage`] fights them: for each side-B unit present, its group on A
    /// and A's on it, each sampled from its own word where it has dice (a lane that
    /// samples steps its stream, the others' stay put), then the break word in every
    /// lane. Returns the words the lanes' engagements drew.
    ///
    /// # Safety
    /// The CPU must have AVX2, `several` must be `Several::new(self)`'s with `B` side-B
    /// units, and `counts` have `several.keys.slots()` keys (the gathers' and the counts'
    /// bounds rest on them).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn several_avx2<const B: usize>(
        &self,
        several: &Several<'_>,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        counts: &mut LaneCounts,
    ) -> u64 {
        use crate::dice::lanes::avx2::{
            group32, join, lookup32, narrow, table32, take_with_rest, Streams, GROUPS32,
        };
        use std::arch::x86_64::*;
        debug_assert_eq!((several.b, counts.keys()), (B, several.keys.slots()));
        // Every 32-bit value below is under 2^31 (wounds, margins, sums, masks of units
        // present, keys below `Keys::MAX_SLOTS + LANES`), so AVX2's signed compares
        // order them as unsigned.
        let splat = |v: u32| _mm256_set1_epi32(v as i32);
        let columns = (&self.fast.lane_columns[..], &self.fast.columns[..]);
        let units: *const i32 = several.units.as_ptr().cast();
        let a_groups: *const i32 = several.a_groups.as_ptr().cast();
        let (v_zero, v_one, v_all) = (splat(0), splat(1), splat(u32::MAX));
        let v_group = splat((1 << SEVERAL_GROUP_BITS) - 1);
        let v_margin = splat((1 << SEVERAL_MARGIN_BITS) - 1);
        let v_total: [__m256i; 1 + MAX_B_UNITS] = std::array::from_fn(|u| splat(several.total[u]));
        let v_base: [__m256i; 1 + MAX_B_UNITS] = std::array::from_fn(|u| splat(several.base[u]));
        let v_bit: [__m256i; MAX_B_UNITS] = std::array::from_fn(|j| splat(2 << j));
        let v_rank: [__m256i; MAX_B_UNITS] = std::array::from_fn(|k| splat(k as u32));
        let v_faces = _mm256_set1_epi64x(i64::from(several.break_faces));
        let v_full = splat((1 << (B + 1)) - 1);
        let kv = KeyVectors::new(several.keys);
        // PERF: the entries read by the units present and by a unit's wounds are read by
        // permutes from registers, not gathered (gathers held the sweep's throughput on
        // the AMD EPYC: `profile melee-surrounded` 37.1 -> 40.9 M/s). `at_present`'s word
        // `w` by units present (masks below 2^(B + 1) <= 32) ...
        let by_present: [[__m256i; 4]; PRESENT_AT_WORDS] =
            std::array::from_fn(|w| table32(|p| several.present_word(w, p)));
        // ... and each unit's entry after `taken` wounds, where every unit has at most 32
        // (wounds 0 to 31).
        let by_wounds: Option<[[__m256i; 4]; 1 + MAX_B_UNITS]> = several
            .wounds_by_permutes()
            .then(|| std::array::from_fn(|u| table32(|taken| several.unit_entry(u, taken))));
        // PERF: A's group on each side-B unit by permutes too, where A has at most 32
        // entries and the units present give the unit at most two blocks of A's groups
        // (`MeleeCombat`'s blocks by attack kind): a gather a unit a phase was 10% of
        // `profile melee-surrounded`'s samples (`perf record`); 65.6 -> 67.7 M
        // engagements/s, mean of ten runs beside each other (best 69.9 -> 77.0). A block of
        // no dice (a rear unit) is 0, read by nothing.
        let a_by_wounds: [AGroups<([__m256i; 4], __m256i)>; MAX_B_UNITS] =
            std::array::from_fn(|j| {
                several
                    .a_groups_for(j)
                    .map(|base| (table32(|taken| several.a_group(base, taken)), splat(base)))
            });
        // PERF: a break test compares the roll's rank with the first rank whose sum
        // reaches the margin less the difference, read by permutes (sums of at most 3d6
        // are below 31), where a gather read each roll's sum (three gathers a phase):
        // `profile melee-surrounded` 67.7 -> 71.4 M engagements/s, mean of ten runs
        // beside each other (callgrind 161.6 -> 173.4 instructions an engagement).
        let fail_from = table32(|m| self.fail_from(m));
        let v_31 = splat(31);
        let unit_at = |u: usize, taken: __m256i| match &by_wounds {
            Some(tables) => lookup32(&tables[u], taken),
            None => _mm256_i32gather_epi32::<4>(units, _mm256_add_epi32(v_base[u], taken)),
        };
        // The 64-bit masks of a 32-bit mask's low and high four lanes.
        let wide = |mask: __m256i| {
            [
                _mm256_cvtepi32_epi64(_mm256_castsi256_si128(mask)),
                _mm256_cvtepi32_epi64(_mm256_extracti128_si256::<1>(mask)),
            ]
        };
        let lanes_in = |mask: __m256i| _mm256_movemask_ps(_mm256_castsi256_ps(mask)).count_ones();
        let mut streams = Streams::new(lanes);
        let mut taken_a = [v_zero; GROUPS32];
        let mut taken_b = [[v_zero; MAX_B_UNITS]; GROUPS32];
        // Each side-B unit's entry after its wounds (`units[base + taken]`), carried from
        // a phase's break test, which reads its margin, to the next phase's group.
        let fresh_b: [__m256i; MAX_B_UNITS] =
            std::array::from_fn(|j| splat(several.unit_entry(1 + j, 0)));
        let mut unit_b = [fresh_b; GROUPS32];
        let mut present = [v_full; GROUPS32];
        let mut b_fled = [v_zero; GROUPS32];
        let mut phase_key = [v_zero; GROUPS32];
        let mut left: [__m256i; GROUPS32] =
            std::array::from_fn(|g| group32(g, |l| lane_battles(n, l) as u32));
        let mut keys = [0u32; LANES];
        let mut words = 0u64;
        while left.iter().any(|&l| _mm256_testz_si256(l, l) == 0) {
            for h in 0..GROUPS32 {
                let busy = _mm256_xor_si256(_mm256_cmpeq_epi32(left[h], v_zero), v_all);
                let pair = [2 * h, 2 * h + 1];
                // B's bonus for the units present.
                let bonus = lookup32(&by_present[MAX_B_UNITS], present[h]);
                // The groups of each side-B unit present, on A and from A, each from its
                // own word where it has dice.
                let mut on_a = v_zero;
                let mut on_b = [v_zero; MAX_B_UNITS];
                let mut here = [v_zero; MAX_B_UNITS];
                for j in 0..B {
                    here[j] = _mm256_cmpeq_epi32(_mm256_and_si256(present[h], v_bit[j]), v_bit[j]);
                    let group_b = _mm256_and_si256(unit_b[h][j], v_group);
                    let group_a = match &a_by_wounds[j] {
                        AGroups::NoDice => v_zero,
                        AGroups::One((block, _)) => lookup32(block, taken_a[h]),
                        AGroups::Two((first, _), (second, second_base)) => {
                            let a_base = lookup32(&by_present[j], present[h]);
                            _mm256_blendv_epi8(
                                lookup32(first, taken_a[h]),
                                lookup32(second, taken_a[h]),
                                _mm256_cmpeq_epi32(a_base, *second_base),
                            )
                        }
                        AGroups::Gathered => {
                            let a_base = lookup32(&by_present[j], present[h]);
                            _mm256_i32gather_epi32::<4>(
                                a_groups,
                                _mm256_add_epi32(a_base, taken_a[h]),
                            )
                        }
                    };
                    // The wounds of `group` where it has dice, from a word of each lane that
                    // samples it. (PERF: called twice, not looped over an array of the two
                    // groups and their sums, which the compiler kept on the stack.)
                    let mut sample = |group: __m256i| {
                        let draws = _mm256_andnot_si256(_mm256_cmpeq_epi32(group, v_zero), here[j]);
                        // PERF: a group no lane of the eight samples (a unit fled or gone,
                        // A's group on a rear unit, of no dice) is skipped: no step, no gathers.
                        if _mm256_testz_si256(draws, draws) != 0 {
                            return v_zero;
                        }
                        words += u64::from(lanes_in(_mm256_and_si256(draws, busy)));
                        let masks = wide(draws);
                        let u = [
                            streams.next_where(pair[0], masks[0]),
                            streams.next_where(pair[1], masks[1]),
                        ];
                        _mm256_and_si256(sample_wounds8(columns, group, u), draws)
                    };
                    on_a = _mm256_add_epi32(on_a, sample(group_b));
                    on_b[j] = sample(group_a);
                }
                // Casualties, capped at the wounds each unit has left; who still has
                // models (a unit not present suffered nothing and is masked out).
                let left_a = _mm256_sub_epi32(v_total[0], taken_a[h]);
                let suffered_a = _mm256_min_epu32(on_a, left_a);
                let alive_a = _mm256_cmpgt_epi32(left_a, suffered_a);
                let now_a = _mm256_add_epi32(taken_a[h], suffered_a);
                let score_b = _mm256_add_epi32(suffered_a, bonus);
                let mut score_a = v_zero;
                let mut alive_b = [v_zero; MAX_B_UNITS];
                let mut now_b = [v_zero; MAX_B_UNITS];
                for j in 0..B {
                    let left = _mm256_sub_epi32(v_total[1 + j], taken_b[h][j]);
                    let suffered = _mm256_min_epu32(on_b[j], left);
                    alive_b[j] = _mm256_and_si256(_mm256_cmpgt_epi32(left, suffered), here[j]);
                    now_b[j] = _mm256_add_epi32(taken_b[h][j], suffered);
                    score_a = _mm256_add_epi32(score_a, suffered);
                }
                let a_wins = _mm256_cmpgt_epi32(score_a, score_b);
                let b_wins = _mm256_cmpgt_epi32(score_b, score_a);
                let difference = _mm256_sub_epi32(
                    _mm256_max_epu32(score_a, score_b),
                    _mm256_min_epu32(score_a, score_b),
                );
                // Break tests: the k-th tester in unit order takes the k-th roll of the
                // phase's break word (A never tests beside a side-B unit: it takes the
                // first); a tester flees when the roll's sum + the difference reaches its
                // margin after the phase.
                words += u64::from(lanes_in(busy));
                let mut word = [streams.next(pair[0]), streams.next(pair[1])];
                let mut rolls = [v_zero; MAX_B_UNITS];
                for at in rolls.iter_mut().take(B) {
                    let mut roll = [v_zero; 2];
                    for i in 0..2 {
                        (roll[i], word[i]) = take_with_rest(word[i], v_faces);
                    }
                    *at = join(narrow(roll[0]), narrow(roll[1]));
                }
                // A tester with margin `m` flees on a roll at or past `fail_from[m −
                // difference]` (a roll's rank orders its sum).
                let flees_from = |margin: __m256i| {
                    let m = _mm256_min_epi32(
                        _mm256_max_epi32(_mm256_sub_epi32(margin, difference), v_zero),
                        v_31,
                    );
                    lookup32(&fail_from, m)
                };
                let margin = |entry: __m256i| {
                    _mm256_and_si256(
                        _mm256_srli_epi32::<{ SEVERAL_GROUP_BITS as i32 }>(entry),
                        v_margin,
                    )
                };
                let lost = |entry: __m256i| {
                    _mm256_srli_epi32::<{ (SEVERAL_GROUP_BITS + SEVERAL_MARGIN_BITS) as i32 }>(
                        entry,
                    )
                };
                let unit_a = unit_at(0, now_a);
                // `roll ≥ from`: not `from > roll`.
                let flees_a = _mm256_andnot_si256(
                    _mm256_cmpgt_epi32(flees_from(margin(unit_a)), rolls[0]),
                    _mm256_and_si256(alive_a, b_wins),
                );
                let mut still = _mm256_and_si256(_mm256_andnot_si256(flees_a, alive_a), v_one);
                let mut fled = v_zero;
                // The testers before unit `j`, as a count (−1 a tester).
                let mut rank = v_zero;
                let mut lost_b = v_zero;
                let mut next_b = [v_zero; MAX_B_UNITS];
                for j in 0..B {
                    next_b[j] = unit_at(1 + j, now_b[j]);
                }
                for j in 0..B {
                    let tests = _mm256_and_si256(alive_b[j], a_wins);
                    let mut roll = rolls[0];
                    for k in 1..B {
                        roll = _mm256_blendv_epi8(
                            roll,
                            rolls[k],
                            _mm256_cmpeq_epi32(_mm256_sub_epi32(v_zero, rank), v_rank[k]),
                        );
                    }
                    rank = _mm256_add_epi32(rank, tests);
                    let flees = _mm256_andnot_si256(
                        _mm256_cmpgt_epi32(flees_from(margin(next_b[j])), roll),
                        tests,
                    );
                    fled = _mm256_or_si256(fled, flees);
                    still = _mm256_or_si256(
                        still,
                        _mm256_and_si256(_mm256_andnot_si256(flees, alive_b[j]), v_bit[j]),
                    );
                    lost_b = _mm256_add_epi32(lost_b, lost(next_b[j]));
                }
                let fled_b = _mm256_or_si256(b_fled[h], fled);
                let a_gone = _mm256_cmpeq_epi32(_mm256_and_si256(still, v_one), v_zero);
                let b_gone = _mm256_cmpeq_epi32(_mm256_andnot_si256(v_one, still), v_zero);
                let destroyed_a = _mm256_xor_si256(alive_a, v_all);
                let [ended, counted, slot] = kv.slot(
                    h,
                    phase_key[h],
                    [a_gone, b_gone],
                    destroyed_a,
                    fled_b,
                    [lost(unit_a), lost_b],
                    busy,
                );
                _mm256_storeu_si256(keys.as_mut_ptr().add(8 * h).cast(), slot);
                taken_a[h] = _mm256_blendv_epi8(now_a, v_zero, ended);
                for j in 0..B {
                    taken_b[h][j] = _mm256_blendv_epi8(now_b[j], v_zero, ended);
                    unit_b[h][j] = _mm256_blendv_epi8(next_b[j], fresh_b[j], ended);
                }
                present[h] = _mm256_blendv_epi8(still, v_full, ended);
                b_fled[h] = _mm256_andnot_si256(ended, fled_b);
                phase_key[h] = kv.next_phase(phase_key[h], ended);
                // `counted` is −1 where set.
                left[h] = _mm256_add_epi32(left[h], counted);
            }
            // SAFETY: as in `sweeps_avx2`: a key is below `Several::slots` (models lost at
            // most each side's most), a spare slot one of the `LANES` after them.
            for (lane, &slot) in keys.iter().enumerate() {
                counts.add(lane, slot);
            }
        }
        words
    }

    /// [`Self::several_avx2`] in AVX-512 registers: the lanes' streams in four registers
    /// of eight, the engagements in two of sixteen, the lanes' flags in masks. The same
    /// engagements on the same words, lane by lane.
    ///
    /// PERF: on the AMD EPYC (Zen 4) a gather of sixteen costs what about 1.35 of eight
    /// do (docs/performance.md, "Naval and field at the gathers' cost"), a table of 32 is
    /// one permute (`vpermt2d`, where AVX2 takes four and three blends), and 32 registers
    /// hold what AVX2's sixteen spilled to the stack.
    ///
    /// # Safety
    /// As for [`Self::several_avx2`], with AVX-512F for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn several_avx512<const B: usize>(
        &self,
        several: &Several<'_>,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        counts: &mut LaneCounts,
    ) -> u64 {
        use crate::dice::lanes::avx512::{
            halves, join, lookup32, table32, take_with_rest, Streams, HALVES,
        };
        use std::arch::x86_64::*;
        debug_assert_eq!((several.b, counts.keys()), (B, several.keys.slots()));
        // Every 32-bit value below is under 2^31, as in `several_avx2`: unsigned and
        // signed compares agree.
        let splat = |v: u32| _mm512_set1_epi32(v as i32);
        let columns = (&self.fast.lane_columns[..], &self.fast.columns[..]);
        let units: *const i32 = several.units.as_ptr().cast();
        let a_groups: *const i32 = several.a_groups.as_ptr().cast();
        let (v_zero, v_one) = (splat(0), splat(1));
        let v_group = splat((1 << SEVERAL_GROUP_BITS) - 1);
        let v_margin = splat((1 << SEVERAL_MARGIN_BITS) - 1);
        let v_total: [__m512i; 1 + MAX_B_UNITS] = std::array::from_fn(|u| splat(several.total[u]));
        let v_base: [__m512i; 1 + MAX_B_UNITS] = std::array::from_fn(|u| splat(several.base[u]));
        let v_bit: [__m512i; MAX_B_UNITS] = std::array::from_fn(|j| splat(2 << j));
        let v_rank: [__m512i; MAX_B_UNITS] = std::array::from_fn(|k| splat(k as u32));
        let v_faces = _mm512_set1_epi64(i64::from(several.break_faces));
        let v_full = splat((1 << (B + 1)) - 1);
        let (v_a_bit, v_b_bits) = (v_one, splat(!1));
        let kv = KeyVectors512::new(several.keys);
        // The tables `several_avx2` reads by permutes, each one register pair here.
        let by_present: [[__m512i; 2]; PRESENT_AT_WORDS] =
            std::array::from_fn(|w| table32(|p| several.present_word(w, p)));
        let by_wounds: Option<[[__m512i; 2]; 1 + MAX_B_UNITS]> = several
            .wounds_by_permutes()
            .then(|| std::array::from_fn(|u| table32(|taken| several.unit_entry(u, taken))));
        let a_by_wounds: [AGroups<([__m512i; 2], __m512i)>; MAX_B_UNITS] =
            std::array::from_fn(|j| {
                several
                    .a_groups_for(j)
                    .map(|base| (table32(|taken| several.a_group(base, taken)), splat(base)))
            });
        let fail_from = table32(|m| self.fail_from(m));
        let v_31 = splat(31);
        let unit_at = |u: usize, taken: __m512i| match &by_wounds {
            Some(tables) => lookup32(&tables[u], taken),
            None => _mm512_i32gather_epi32::<4>(_mm512_add_epi32(v_base[u], taken), units),
        };
        let mut streams = Streams::new(lanes);
        let mut taken_a = [v_zero; HALVES];
        let mut taken_b = [[v_zero; MAX_B_UNITS]; HALVES];
        let fresh_b: [__m512i; MAX_B_UNITS] =
            std::array::from_fn(|j| splat(several.unit_entry(1 + j, 0)));
        let mut unit_b = [fresh_b; HALVES];
        let mut present = [v_full; HALVES];
        let mut b_fled: [__mmask16; HALVES] = [0; HALVES];
        let mut phase_key = [v_zero; HALVES];
        let mut left = halves(|l| lane_battles(n, l) as u32);
        let mut keys = [0u32; LANES];
        let mut words = 0u64;
        while left.iter().any(|&l| _mm512_test_epi32_mask(l, l) != 0) {
            for h in 0..HALVES {
                let busy = _mm512_test_epi32_mask(left[h], left[h]);
                let pair = [2 * h, 2 * h + 1];
                let bonus = lookup32(&by_present[MAX_B_UNITS], present[h]);
                let mut on_a = v_zero;
                let mut on_b = [v_zero; MAX_B_UNITS];
                let mut here: [__mmask16; MAX_B_UNITS] = [0; MAX_B_UNITS];
                for j in 0..B {
                    here[j] = _mm512_test_epi32_mask(present[h], v_bit[j]);
                    let group_b = _mm512_and_si512(unit_b[h][j], v_group);
                    let group_a = match &a_by_wounds[j] {
                        AGroups::NoDice => v_zero,
                        AGroups::One((block, _)) => lookup32(block, taken_a[h]),
                        AGroups::Two((first, _), (second, second_base)) => {
                            let a_base = lookup32(&by_present[j], present[h]);
                            _mm512_mask_blend_epi32(
                                _mm512_cmpeq_epi32_mask(a_base, *second_base),
                                lookup32(first, taken_a[h]),
                                lookup32(second, taken_a[h]),
                            )
                        }
                        AGroups::Gathered => {
                            let a_base = lookup32(&by_present[j], present[h]);
                            _mm512_i32gather_epi32::<4>(
                                _mm512_add_epi32(a_base, taken_a[h]),
                                a_groups,
                            )
                        }
                    };
                    let mut sample = |group: __m512i| {
                        let draws = _mm512_mask_test_epi32_mask(here[j], group, group);
                        // PERF: a group no lane of the sixteen samples is skipped.
                        if draws == 0 {
                            return v_zero;
                        }
                        words += u64::from((draws & busy).count_ones());
                        let u = [
                            streams.next_where(pair[0], draws as __mmask8),
                            streams.next_where(pair[1], (draws >> 8) as __mmask8),
                        ];
                        _mm512_maskz_mov_epi32(draws, sample_wounds16(columns, group, u))
                    };
                    on_a = _mm512_add_epi32(on_a, sample(group_b));
                    on_b[j] = sample(group_a);
                }
                // Casualties, capped at the wounds each unit has left; who still has
                // models (a unit not present suffered nothing and is masked out).
                let left_a = _mm512_sub_epi32(v_total[0], taken_a[h]);
                let suffered_a = _mm512_min_epu32(on_a, left_a);
                let alive_a = _mm512_cmpgt_epu32_mask(left_a, suffered_a);
                let now_a = _mm512_add_epi32(taken_a[h], suffered_a);
                let score_b = _mm512_add_epi32(suffered_a, bonus);
                let mut score_a = v_zero;
                let mut alive_b: [__mmask16; MAX_B_UNITS] = [0; MAX_B_UNITS];
                let mut now_b = [v_zero; MAX_B_UNITS];
                for j in 0..B {
                    let left = _mm512_sub_epi32(v_total[1 + j], taken_b[h][j]);
                    let suffered = _mm512_min_epu32(on_b[j], left);
                    alive_b[j] = _mm512_mask_cmpgt_epu32_mask(here[j], left, suffered);
                    now_b[j] = _mm512_add_epi32(taken_b[h][j], suffered);
                    score_a = _mm512_add_epi32(score_a, suffered);
                }
                let a_wins = _mm512_cmpgt_epu32_mask(score_a, score_b);
                let b_wins = _mm512_cmpgt_epu32_mask(score_b, score_a);
                let difference = _mm512_sub_epi32(
                    _mm512_max_epu32(score_a, score_b),
                    _mm512_min_epu32(score_a, score_b),
                );
                // Break tests, as in `several_avx2`: the k-th tester in unit order takes
                // the k-th roll of the phase's break word.
                words += u64::from(busy.count_ones());
                let mut word = [streams.next(pair[0]), streams.next(pair[1])];
                let mut rolls = [v_zero; MAX_B_UNITS];
                for at in rolls.iter_mut().take(B) {
                    let mut roll = [v_zero; 2];
                    for i in 0..2 {
                        (roll[i], word[i]) = take_with_rest(word[i], v_faces);
                    }
                    *at = join(roll[0], roll[1]);
                }
                // A tester with margin `m` flees on a roll at or past `fail_from[m −
                // difference]`.
                let flees_from = |margin: __m512i| {
                    let m = _mm512_min_epi32(
                        _mm512_max_epi32(_mm512_sub_epi32(margin, difference), v_zero),
                        v_31,
                    );
                    lookup32(&fail_from, m)
                };
                let margin = |entry: __m512i| {
                    _mm512_and_si512(_mm512_srli_epi32::<{ SEVERAL_GROUP_BITS }>(entry), v_margin)
                };
                let lost = |entry: __m512i| {
                    _mm512_srli_epi32::<{ SEVERAL_GROUP_BITS + SEVERAL_MARGIN_BITS }>(entry)
                };
                let unit_a = unit_at(0, now_a);
                let flees_a = _mm512_mask_cmpge_epu32_mask(
                    alive_a & b_wins,
                    rolls[0],
                    flees_from(margin(unit_a)),
                );
                // Bit 0: A still there; bit `j + 1`: side-B unit `j`.
                let mut still = _mm512_maskz_mov_epi32(alive_a & !flees_a, v_a_bit);
                let mut fled: __mmask16 = 0;
                // The testers before unit `j`.
                let mut rank = v_zero;
                let mut lost_b = v_zero;
                let mut next_b = [v_zero; MAX_B_UNITS];
                for j in 0..B {
                    next_b[j] = unit_at(1 + j, now_b[j]);
                }
                for j in 0..B {
                    let tests = alive_b[j] & a_wins;
                    let mut roll = rolls[0];
                    for k in 1..B {
                        roll = _mm512_mask_blend_epi32(
                            _mm512_cmpeq_epi32_mask(rank, v_rank[k]),
                            roll,
                            rolls[k],
                        );
                    }
                    rank = _mm512_mask_add_epi32(rank, tests, rank, v_one);
                    let flees =
                        _mm512_mask_cmpge_epu32_mask(tests, roll, flees_from(margin(next_b[j])));
                    fled |= flees;
                    still = _mm512_mask_or_epi32(still, alive_b[j] & !flees, still, v_bit[j]);
                    lost_b = _mm512_add_epi32(lost_b, lost(next_b[j]));
                }
                let fled_b = b_fled[h] | fled;
                let a_gone = _mm512_testn_epi32_mask(still, v_a_bit);
                let b_gone = _mm512_testn_epi32_mask(still, v_b_bits);
                let (ended, counted, slot) = kv.slot(
                    h,
                    phase_key[h],
                    [a_gone, b_gone],
                    !alive_a,
                    fled_b,
                    [lost(unit_a), lost_b],
                    busy,
                );
                _mm512_storeu_si512(keys.as_mut_ptr().add(16 * h).cast(), slot);
                taken_a[h] = _mm512_maskz_mov_epi32(!ended, now_a);
                for j in 0..B {
                    taken_b[h][j] = _mm512_maskz_mov_epi32(!ended, now_b[j]);
                    unit_b[h][j] = _mm512_mask_blend_epi32(ended, next_b[j], fresh_b[j]);
                }
                present[h] = _mm512_mask_blend_epi32(ended, still, v_full);
                b_fled[h] = fled_b & !ended;
                phase_key[h] = kv.next_phase(phase_key[h], ended);
                left[h] = _mm512_mask_sub_epi32(left[h], counted, left[h], v_one);
            }
            // SAFETY: as in `several_avx2`.
            for (lane, &slot) in keys.iter().enumerate() {
                counts.add(lane, slot);
            }
        }
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dice::DiceStream;
    use crate::systems::melee::engagement::tests::{engagement_cases, steady, unit};
    use crate::systems::melee::engagement::{BreakDice, Engagement, EngagementEnd, UnitProfile};

    /// What a block's `n` engagements must count, from the rules' own phase step: lane
    /// `l`'s share fought one after another on its own stream. Returns the counts and the
    /// words each lane drew.
    fn reference(
        combat: &MeleeCombat,
        lanes: &[[u64; 4]; LANES],
        n: u64,
    ) -> (EngagementHistogram, [u64; LANES], [u64; LANES]) {
        let mut h = combat.empty_engagement_histogram();
        let mut words = [0; LANES];
        let mut phases = [0; LANES];
        for (lane, &state) in lanes.iter().enumerate() {
            let start = DiceStream::from_state(state);
            let mut dice = start.clone();
            for _ in 0..lane_battles(n, lane) {
                let outcome = combat.engage_by_phases(&mut dice);
                phases[lane] += u64::from(outcome.phases);
                h.record(&outcome);
            }
            words[lane] = start.words_until(&dice, 1 << 24).expect("within the limit");
        }
        (h, words, phases)
    }

    /// Duels the sweeps take: one-on-one fights of many shapes, every break-dice option,
    /// multi-wound models, a flanker alone, round limits of 1 to 50. (A rear unit alone is
    /// not one: A does not attack it, a group of no dice and no word.)
    fn duels() -> Vec<Engagement> {
        let mut cases = vec![
            Engagement::one_on_one(unit(20, 5, 4, 3, 3), unit(20, 5, 3, 4, 3)),
            Engagement::one_on_one(unit(8, 4, 3, 3, 3), unit(30, 6, 4, 4, 5)),
        ];
        let mut short = Engagement::one_on_one(unit(12, 4, 4, 4, 4), unit(10, 5, 3, 3, 3));
        short.round_limit = 1;
        cases.push(short);
        let mut three = Engagement::one_on_one(
            UnitProfile {
                wounds: 3,
                attacks: 2,
                ..unit(5, 5, 4, 4, 4)
            },
            UnitProfile {
                discipline: 2,
                ..unit(24, 6, 3, 3, 3)
            },
        );
        three.break_dice = BreakDice::ThreeD6;
        three.round_limit = 50;
        cases.push(three);
        // A side of 40 wounds: its entries after its wounds are gathered, not permuted.
        let mut forty = Engagement::one_on_one(unit(40, 8, 3, 3, 3), unit(12, 4, 4, 3, 3));
        forty.round_limit = 6;
        cases.push(forty);
        // A side B of 40 wounds that holds (`steady`) until it has taken 32 and more,
        // beside an A of fewer than 32: a read past 31 would be wrong where only A's
        // wounds decided the read.
        let mut past_31 =
            Engagement::one_on_one(steady(unit(30, 10, 5, 6, 3)), steady(unit(40, 10, 3, 3, 1)));
        past_31.round_limit = 12;
        cases.push(past_31);
        let mut one_die = Engagement::one_on_one(unit(6, 3, 3, 3, 3), unit(6, 3, 3, 3, 3));
        one_die.break_dice = BreakDice::OneD6;
        one_die.round_limit = 9;
        cases.push(one_die);
        let mut flank = Engagement::one_on_one(unit(10, 5, 3, 3, 3), unit(6, 3, 4, 3, 3));
        flank.b[0].0 = super::super::Facing::Flank;
        cases.push(flank);
        cases
    }

    /// As run, and all at once called directly, against [`reference`]: the same counts,
    /// the same words drawn from the block's stream (the lanes' keys, none for no
    /// engagement) and the words each reports, for fewer engagements than lanes, exactly
    /// the lanes, one more, and many (the lanes restart, and the last sweeps run with lanes
    /// idle). Duels and engagements of several side-B units are swept; engagements the
    /// sweeps do not take (groups too large for a table, calls too small for their tables)
    /// are fought lane by lane, the same engagements.
    #[test]
    fn lanes_count_what_each_lane_fights_on_its_own_stream() {
        let avx2 = VectorForm::Avx2.available();
        let mut swept = 0;
        let mut lane_by_lane = 0;
        let mut every_end = [0u64; END_COUNT];
        let mut several_ends = [0u64; END_COUNT];
        let duels = duels();
        let mut swept_several = 0;
        // Calls of several side-B units swept directly, by vector form.
        let mut several_by_form = [0; 2];
        // Swept calls whose entries after wounds were gathered and permuted: duels,
        // several units.
        let mut by_permutes = [[0; 2]; 2];
        let mut rear = Engagement::one_on_one(unit(10, 5, 3, 3, 3), unit(6, 3, 4, 3, 3));
        rear.b[0].0 = super::super::Facing::Rear;
        // Two side-B units, one a rear unit (on which A rolls no dice while the front one
        // stands), with a round limit of 1.
        let mut two = Engagement::one_on_one(unit(9, 3, 3, 3, 3), unit(7, 4, 4, 3, 3));
        two.b
            .push((super::super::Facing::Rear, unit(5, 5, 3, 3, 3)));
        let mut two_short = two.clone();
        two_short.round_limit = 1;
        // Small side-B units against a strong A, one steady (it is destroyed, never
        // flees) and one that may flee: engagements end with B destroyed and with B fled,
        // one after another in each lane (whether a unit fled is the lane's, engagement
        // by engagement).
        let mut outmatched = Engagement::one_on_one(
            UnitProfile {
                attacks: 3,
                ..unit(20, 5, 3, 3, 3)
            },
            steady(unit(3, 3, 3, 3, 3)),
        );
        outmatched
            .b
            .push((super::super::Facing::Flank, unit(2, 2, 3, 3, 3)));
        // An A of 40 wounds beside two side-B units: entries gathered, not permuted.
        let mut forty = Engagement::one_on_one(unit(40, 8, 3, 3, 3), unit(12, 4, 4, 3, 3));
        forty
            .b
            .push((super::super::Facing::Flank, unit(5, 5, 3, 3, 3)));
        forty.round_limit = 6;
        // Units that hold (`steady`) until they have taken 32 wounds and more: a side-B
        // unit of 40 beside an A of fewer than 32, and an A of exactly 32 (destroyed now
        // and then, its entry at 32 read).
        let mut b_past_31 =
            Engagement::one_on_one(steady(unit(24, 6, 5, 5, 3)), steady(unit(40, 5, 3, 3, 1)));
        b_past_31
            .b
            .push((super::super::Facing::Flank, steady(unit(2, 2, 3, 3, 1))));
        b_past_31.round_limit = 24;
        let mut a_at_32 =
            Engagement::one_on_one(steady(unit(32, 4, 3, 3, 1)), steady(unit(20, 6, 5, 5, 3)));
        a_at_32
            .b
            .push((super::super::Facing::Flank, steady(unit(10, 4, 5, 5, 3))));
        a_at_32.round_limit = 24;
        let cases: Vec<(bool, Engagement)> = duels
            .iter()
            .map(|e| (true, e.clone()))
            .chain(engagement_cases().into_iter().map(|e| (false, e)))
            .chain(
                [rear, two, two_short, outmatched, forty, b_past_31, a_at_32].map(|e| (false, e)),
            )
            .chain([(
                false,
                crate::systems::melee::scenarios::melee_surrounded()
                    .engagement
                    .clone(),
            )])
            .collect();
        for (case, (is_duel, engagement)) in cases.iter().enumerate() {
            let combat = MeleeCombat::new(engagement.clone()).unwrap();
            let duel = Duel::new(&combat);
            let several = Several::new(&combat);
            if *is_duel {
                assert!(duel.is_some(), "case {case}: a duel the sweeps take");
            }
            for (k, n) in [0u64, 1, 31, 32, 33, 3_001, 60_000].into_iter().enumerate() {
                let block = DiceStream::for_block(70 + case as u64, k as u64);
                let lanes = block.clone().lane_states();
                let (expected, lane_words, phases) = reference(&combat, &lanes, n);
                let keys = if n == 0 { 0 } else { LANES as u64 };
                // As run.
                let mut dice = block.clone();
                let mut h = combat.empty_engagement_histogram();
                let words = combat.engagement_block(&mut dice, n, &mut h);
                assert_eq!(h, expected, "case {case}, n = {n}: as run");
                assert_eq!(
                    block.words_until(&dice, 100),
                    Some(keys),
                    "case {case}, n = {n}"
                );
                let sweeps = phases.iter().max().copied().unwrap_or(0);
                let duel_swept = duel.as_ref().is_some_and(|d| d.keys.worth(n));
                let several_swept = several.as_ref().is_some_and(|s| s.keys.worth(n));
                let goes_at_once = avx2 && (duel_swept || several_swept) && n > 0;
                let all_at_once_words = keys + LANES as u64 * 3 * sweeps;
                let lane_by_lane_words = keys + lane_words.iter().sum::<u64>();
                if goes_at_once && duel_swept {
                    swept += 1;
                    let permuted = duel.as_ref().is_some_and(|d| d.wounds_by_permutes());
                    by_permutes[0][usize::from(permuted)] += 1;
                    assert_eq!(words, all_at_once_words, "case {case}, n = {n}: words");
                } else if goes_at_once {
                    // Several side-B units: each lane's own words, as lane by lane.
                    swept_several += 1;
                    let permuted = several.as_ref().is_some_and(|s| s.wounds_by_permutes());
                    by_permutes[1][usize::from(permuted)] += 1;
                    assert_eq!(words, lane_by_lane_words, "case {case}, n = {n}: words");
                } else {
                    lane_by_lane += 1;
                    assert_eq!(words, lane_by_lane_words, "case {case}, n = {n}: words");
                }
                // All at once, called directly in each vector form, wherever the CPU and
                // the engagement allow it (however small the call).
                for form in VectorForm::ALL {
                    if !(duel.is_some() || several.is_some()) || n == 0 {
                        break;
                    }
                    let mut h = combat.empty_engagement_histogram();
                    let words = combat.all_at_once_in(form, &lanes, n, &mut h);
                    if !form.available() {
                        assert_eq!(words, None, "case {case}, n = {n}: {form:?}");
                        continue;
                    }
                    if several_swept {
                        several_by_form[form as usize] += 1;
                    }
                    let what = format!("case {case}, n = {n}, {form:?}");
                    if duel_swept {
                        assert_eq!(words, Some(3 * sweeps * LANES as u64), "{what}");
                        assert_eq!(h, expected, "{what}: all at once");
                    } else if several_swept {
                        assert_eq!(words, Some(lane_by_lane_words - keys), "{what}");
                        assert_eq!(h, expected, "{what}: all at once");
                    } else {
                        assert_eq!(words, None, "{what}: too small a call");
                    }
                }
                if let (true, Some(_)) = (avx2, &duel) {
                    // A lane's words, three a phase, are what the rules' step drew.
                    for (lane, &w) in lane_words.iter().enumerate() {
                        assert_eq!(w, 3 * phases[lane], "case {case}, n = {n}, lane {lane}");
                    }
                }
                for (end, count) in every_end.iter_mut().enumerate() {
                    let ended = (1..=engagement.round_limit)
                        .map(|p| expected.ends[(p as usize - 1) * END_COUNT + end])
                        .sum::<u64>();
                    *count += ended;
                    if several.is_some() {
                        several_ends[end] += ended;
                    }
                }
            }
        }
        // The check is not vacuous: both ways ran (and each vector form the CPU has),
        // and every end happened.
        VectorForm::assert_ran_where_available(several_by_form);
        if avx2 {
            // At least the 60,000-engagement call of every duel, and of every engagement of
            // several side-B units.
            assert!(swept >= duels.len(), "{swept} calls all at once");
            assert!(
                swept_several >= 7,
                "{swept_several} calls of several units at once"
            );
            // Both reads of the entries after wounds ran, in both sweeps.
            assert!(
                by_permutes.iter().flatten().all(|&calls| calls > 0),
                "{by_permutes:?}"
            );
        }
        assert!(lane_by_lane >= 20, "{lane_by_lane} calls lane by lane");
        assert!(every_end.iter().all(|&c| c > 0), "{every_end:?}");
        // Engagements of several side-B units end every way side B can go.
        for end in [EngagementEnd::BFlees, EngagementEnd::BDestroyed] {
            assert!(several_ends[end.index()] > 1_000, "{several_ends:?}");
        }
    }

    /// The one-gather sampler gives every column's wounds as the whole column does
    /// (`AliasColumn::pick`), for the words at the column's start and end, about its cut,
    /// and at the ends of the cut's prefix: words whose prefix ties the cut's (below it, at
    /// it, above it: the whole columns' path) beside words whose prefix decides, eight
    /// lanes at a time in every mix (and sixteen in AVX-512), for every table of the bench's combats and of a fight
    /// of fronts of 24 and 22 models (tables of 1 to 24 dice: 2 to 512 columns).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn one_gather_samples_wounds_as_the_whole_column_does() {
        use super::super::LANE_CUT_BITS;
        use std::arch::x86_64::*;
        if !VectorForm::Avx2.available() {
            return;
        }
        let (mut ties, mut cases) = (0, 0);
        let (mut wide_ties, mut wide_cases) = (0, 0);
        let mut bits_seen = [false; 1 + super::super::MAX_TABLE_BITS as usize];
        let wide = Engagement::one_on_one(unit(30, 24, 3, 3, 3), unit(30, 22, 4, 3, 3));
        for combat in [
            crate::systems::melee::scenarios::melee_duel(),
            crate::systems::melee::scenarios::melee_surrounded(),
            MeleeCombat::new(wide).expect("a valid engagement"),
        ] {
            let t = &combat.fast;
            // (group, word) of every column's words to try, and whether its prefix ties.
            let mut words = vec![];
            for &group in t.table_refs.iter().flatten().filter(|&&g| g & 15 != 0) {
                let (offset, bits) = ((group >> 4) as usize, group & 15);
                bits_seen[bits as usize] = true;
                let below_prefix = 64 - bits - LANE_CUT_BITS;
                for j in 0..1u64 << bits {
                    let cut = t.columns[offset + j as usize].cut;
                    let start = j << (64 - bits);
                    let end = ((j + 1) << (64 - bits)).wrapping_sub(1);
                    let prefix = cut >> below_prefix << below_prefix;
                    for u in [
                        start,
                        end,
                        cut.wrapping_sub(1),
                        cut,
                        cut.wrapping_add(1),
                        prefix,
                        prefix | ((1 << below_prefix) - 1),
                        prefix.wrapping_sub(1),
                        prefix.wrapping_add(1 << below_prefix),
                    ] {
                        if u >> (64 - bits) == j {
                            let tie = (u - start) >> below_prefix == (cut - start) >> below_prefix;
                            words.push((group, u, tie));
                        }
                    }
                }
            }
            assert!(words.len() > 1_000, "{}", words.len());
            let tables = (&t.lane_columns[..], &t.columns[..]);
            let (tied, plain): (Vec<_>, Vec<_>) = words.into_iter().partition(|w| w.2);
            // Eight lanes at a time: eight words that do not tie, from every start, and in
            // every other register one of them replaced by a tie (in each lane in turn);
            // then ties only.
            let registers = (0..2 * plain.len())
                .map(|k| {
                    let mut lanes: [_; 8] =
                        std::array::from_fn(|i| plain[(k / 2 + i) % plain.len()]);
                    if k % 2 == 1 {
                        lanes[k / 2 % 8] = tied[k / 2 % tied.len()];
                    }
                    lanes
                })
                .chain(
                    (0..tied.len())
                        .step_by(8)
                        .map(|k| std::array::from_fn(|i| tied[(k + i) % tied.len()])),
                );
            let registers: Vec<[_; 8]> = registers.collect();
            // The wounds each lane's column gives for its word.
            let check = |lanes: &[(u32, u64, bool)], got: &[u32]| {
                for (&(group, u, _), &got) in lanes.iter().zip(got) {
                    let column = (group >> 4) as usize + (u >> (64 - (group & 15))) as usize;
                    assert_eq!(
                        got,
                        t.columns[column].pick(u) & 0xffff,
                        "group {group:#x}, word {u:#x}"
                    );
                }
            };
            for lanes in &registers {
                let groups = lanes.map(|lane| lane.0);
                let u: [[u64; 4]; 2] =
                    std::array::from_fn(|h| std::array::from_fn(|i| lanes[4 * h + i].1));
                let mut got = [0u32; 8];
                // SAFETY: AVX2 is there; every group names a table of `columns`, and
                // `lane_columns` is `columns` as lane words.
                unsafe {
                    let wounds = sample_wounds8(
                        tables,
                        _mm256_loadu_si256(groups.as_ptr().cast()),
                        u.map(|u| _mm256_loadu_si256(u.as_ptr().cast())),
                    );
                    _mm256_storeu_si256(got.as_mut_ptr().cast(), wounds);
                }
                check(lanes, &got);
                ties += usize::from(lanes.iter().any(|lane| lane.2));
                cases += 1;
            }
            // Sixteen lanes at a time in AVX-512: two of the registers above side by side,
            // each next to the one after it (a tie in the low half or the high half: both
            // go to the whole columns) and the even ones next to the even ones two on (no
            // tie, but in the tied-only tail).
            if !VectorForm::Avx512.available() {
                continue;
            }
            let pairs = (0..registers.len().saturating_sub(2))
                .flat_map(|i| [(i, i + 1), (i, i + 2)])
                .filter(|&(i, j)| j == i + 1 || i % 2 == 0);
            for (i, j) in pairs {
                let lanes: Vec<_> = registers[i].iter().chain(&registers[j]).copied().collect();
                let groups: [u32; 16] = std::array::from_fn(|i| lanes[i].0);
                let u: [[u64; 8]; 2] =
                    std::array::from_fn(|h| std::array::from_fn(|i| lanes[8 * h + i].1));
                let mut got = [0u32; 16];
                // SAFETY: AVX-512F is there; the groups and tables are as above.
                unsafe {
                    let wounds = sample_wounds16(
                        tables,
                        _mm512_loadu_si512(groups.as_ptr().cast()),
                        u.map(|u| _mm512_loadu_si512(u.as_ptr().cast())),
                    );
                    _mm512_storeu_si512(got.as_mut_ptr().cast(), wounds);
                }
                check(&lanes, &got);
                wide_ties += usize::from(lanes.iter().any(|lane| lane.2));
                wide_cases += 1;
            }
        }
        // Both paths ran, many times, on tables of every size.
        assert!(ties > 1_000 && cases - ties > 1_000, "{ties} of {cases}");
        if VectorForm::Avx512.available() {
            assert!(
                wide_ties > 500 && wide_cases - wide_ties > 500,
                "{wide_ties} of {wide_cases}"
            );
        }
        assert!(bits_seen[1..].iter().all(|&seen| seen), "{bits_seen:?}");
    }

    /// The bench duel goes all at once, and its table is what the docs say.
    #[test]
    fn the_bench_duel_is_swept() {
        let combat = crate::systems::melee::scenarios::melee_duel();
        let duel = Duel::new(&combat).expect("a duel the sweeps take");
        assert_eq!(duel.keys.slots(), 15_876);
        assert!(duel.keys.worth(65_536) && !duel.keys.worth(3_968) && duel.keys.worth(3_969));
        let surrounded = crate::systems::melee::scenarios::melee_surrounded();
        assert!(Duel::new(&surrounded).is_none());
        let several = Several::new(&surrounded).expect("several units the sweeps take");
        assert!(several.keys.worth(65_536));
    }
}
