//! A rules file's battles thirty-two at once, one to a lane, with masks in place of
//! branches: the walk of [`Walk`] in AVX-512 registers.
//!
//! Why this module exists: one battle at a time, the walk's loop exits after a number of
//! rounds only the dice know, a branch no predictor learns, and each round waits on the
//! one before it. Here a block's battles are fought in [`LANES`] lanes, each on its own
//! stream split from the block's (`dice::lanes`): lane `l` fights
//! [`lane_battles`]`(n, l)` battles one after another, as [`Walk::battle`] fights them
//! lane by lane, so the counts are the same whichever form runs. Every sweep, each lane
//! draws one word and plays one round from its node:
//! - a direct walk (sixteen lanes to a register): `take(M)` of the word and one gather of
//!   the next node (of 16 bits or 32);
//! - an alias walk (eight to a register): the header's gather, the column's `take(k)` and
//!   the threshold's `take(W)`, the column's gather, and the alias's gather where the draw
//!   passed the threshold.
//!
//! A lane whose battle ended counts it (its terminal, its rounds) and starts its next at
//! the start's node in the next sweep; a lane with no battle left draws its word and counts
//! in its spare slot until the block's last lane is done.
//!
//! Used where the CPU has AVX-512F and every state's weights fit 32 bits; elsewhere (and
//! for blocks smaller than a quarter of the count tables) the lanes are fought one after
//! another by [`Walk::battle`]. PERF (`profile rules-naval`, `rules-field`, beside
//! `naval-lockstep` and `field-lanes`, alternated): the walk one battle at a time took the
//! naval engagement 6 v 4 at 73 M/s against the built-in's 425; in these lanes, 350 against
//! 390. The field battle 12 v 8 (576 sides a round, 2,225 states): 100 M/s with a 32-bit
//! table, 150 with the 16-bit one, against the built-in's 150–240.

// The vector form is x86-64's; elsewhere its helpers go unused.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

use super::{Layout, Walk, ENDED, WIDE};
use crate::dice::lanes::{lane_battles, shares_fit_32_bits, LaneCounts, VectorForm, LANES};

/// Copies of a count table of at most this many keys (`LaneCounts`: a sweep's increments
/// of one key wait on each other in one copy).
const COPIED_KEYS: usize = 4096;

impl Walk {
    /// Whether the vector form can fight this walk: every state's weights fit 32 bits.
    fn narrow(&self) -> bool {
        match &self.layout {
            Layout::Direct { .. } | Layout::Direct16 { .. } => true,
            Layout::Alias { wide, .. } => wide.is_empty(),
        }
    }

    /// Fights the block's `n` battles in the lanes all at once, where the CPU and the walk
    /// allow, and adds them to `tally` (by terminal, by rounds); `None` having fought
    /// nothing otherwise.
    pub(super) fn all_at_once(
        &self,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        tally: &mut (Vec<u64>, Vec<u64>),
    ) -> Option<u64> {
        // Zeroing and reading the count tables costs about one battle a key: not worth it
        // for a block of fewer battles than keys.
        let keys = self.endings.len() + self.rounds_bins;
        if !self.narrow() || (n as usize) < keys / 4 {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        if VectorForm::Avx512.available() {
            let copies = |keys: usize| if keys <= COPIED_KEYS { 4 } else { 1 };
            let mut ends = LaneCounts::new(self.endings.len(), copies(self.endings.len()));
            let mut rounds = LaneCounts::new(self.rounds_bins, copies(self.rounds_bins));
            // SAFETY: the CPU has AVX-512F (checked above), the walk is narrow, and a
            // direct walk's shares fit its 32-bit lanes.
            let sweeps = unsafe {
                match &self.layout {
                    Layout::Direct { sides, next } if shares_fit_32_bits(n) => self
                        .direct_avx512::<false>(
                            *sides,
                            next.as_ptr().cast(),
                            lanes,
                            n,
                            &mut ends,
                            &mut rounds,
                        ),
                    Layout::Direct16 { sides, next } if shares_fit_32_bits(n) => self
                        .direct_avx512::<true>(
                            *sides,
                            next.as_ptr().cast(),
                            lanes,
                            n,
                            &mut ends,
                            &mut rounds,
                        ),
                    Layout::Direct { .. } | Layout::Direct16 { .. } => return None,
                    Layout::Alias { table, aliases, .. } => {
                        self.alias_avx512(table, aliases, lanes, n, &mut ends, &mut rounds)
                    }
                }
            };
            for (key, count) in ends.counted() {
                tally.0[key] += count;
            }
            for (key, count) in rounds.counted() {
                tally.1[key] += count;
            }
            return Some(sweeps * LANES as u64);
        }
        let _ = (lanes, tally);
        None
    }

    /// The sweeps of a direct walk (see [`Walk`]), sixteen lanes to a register: a round
    /// is `take(M)` of the lane's word and one gather. Returns how many sweeps.
    ///
    /// `NARROW`: the table is [`Layout::Direct16`]'s (a gather of 32 bits at each entry's
    /// two bytes, cut to them; the entry past the rows keeps the last one's read inside).
    ///
    /// # Safety
    /// The CPU must have AVX-512F; every lane's share of `n` fits 32 bits; `next_of` is
    /// the layout's table (`u32`, or `u16` where `NARROW`).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn direct_avx512<const NARROW: bool>(
        &self,
        sides: u32,
        next_of: *const u8,
        lanes: &[[u64; 4]; LANES],
        n: u64,
        ends: &mut LaneCounts,
        rounds_counts: &mut LaneCounts,
    ) -> u64 {
        use crate::dice::lanes::avx512::{halves, join, take, Streams, HALVES};
        use std::arch::x86_64::*;
        let splat = |v: u32| _mm512_set1_epi32(v as i32);
        let (v_zero, v_one) = (splat(0), splat(1));
        let v_ended = splat(ENDED);
        let v_start = splat(self.start);
        let v_sides = splat(sides);
        let v_sides64 = _mm512_set1_epi64(i64::from(sides));
        let v_last_bin = splat(self.rounds_bins as u32 - 1);
        let (v_low15, v_flag15) = (splat(0x7FFF), splat(0x8000));
        let mut streams = Streams::new(lanes);
        let mut node = [v_start; HALVES];
        let mut rounds = [v_zero; HALVES];
        let mut left = halves(|l| lane_battles(n, l) as u32);
        let mut active = left.map(|l| _mm512_cmpneq_epu32_mask(l, v_zero));
        let spare_end = halves(|l| ends.spare(l));
        let spare_rounds = halves(|l| rounds_counts.spare(l));
        let mut keys_end = [0u32; LANES];
        let mut keys_rounds = [0u32; LANES];
        let mut sweeps = 0;
        while active.iter().any(|&a| a != 0) {
            sweeps += 1;
            // PERF: both registers' rounds are gathered before either steps.
            let mut next = [v_zero; HALVES];
            for (h, next) in next.iter_mut().enumerate() {
                let face = join(
                    take(streams.next(2 * h), v_sides64),
                    take(streams.next(2 * h + 1), v_sides64),
                );
                let at = _mm512_add_epi32(_mm512_mullo_epi32(node[h], v_sides), face);
                *next = if NARROW {
                    // `from16` in the registers.
                    let entry = _mm512_i32gather_epi32::<2>(at, next_of.cast());
                    _mm512_or_si512(
                        _mm512_and_si512(entry, v_low15),
                        _mm512_slli_epi32::<16>(_mm512_and_si512(entry, v_flag15)),
                    )
                } else {
                    _mm512_i32gather_epi32::<4>(at, next_of.cast())
                };
            }
            for h in 0..HALVES {
                let ended = _mm512_test_epi32_mask(next[h], v_ended);
                let counted = ended & active[h];
                let played = _mm512_add_epi32(rounds[h], v_one);
                let key_end = _mm512_andnot_si512(v_ended, next[h]);
                let key_rounds = _mm512_min_epu32(played, v_last_bin);
                _mm512_storeu_si512(
                    keys_end.as_mut_ptr().add(16 * h).cast(),
                    _mm512_mask_blend_epi32(counted, spare_end[h], key_end),
                );
                _mm512_storeu_si512(
                    keys_rounds.as_mut_ptr().add(16 * h).cast(),
                    _mm512_mask_blend_epi32(counted, spare_rounds[h], key_rounds),
                );
                node[h] = _mm512_mask_blend_epi32(ended, next[h], v_start);
                rounds[h] = _mm512_mask_blend_epi32(ended, played, v_zero);
                left[h] = _mm512_mask_sub_epi32(left[h], counted, left[h], v_one);
                active[h] = _mm512_cmpneq_epu32_mask(left[h], v_zero);
            }
            // SAFETY: as in `alias_avx512`.
            for i in 0..LANES {
                ends.add(i, keys_end[i]);
                rounds_counts.add(i, keys_rounds[i]);
            }
        }
        sweeps
    }

    /// The sweeps of an alias walk: see the module docs. Returns how many.
    ///
    /// # Safety
    /// The CPU must have AVX-512F, and no state's header may be [`WIDE`]
    /// ([`Self::narrow`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn alias_avx512(
        &self,
        table: &[u64],
        aliases: &[u32],
        lanes: &[[u64; 4]; LANES],
        n: u64,
        ends: &mut LaneCounts,
        rounds_counts: &mut LaneCounts,
    ) -> u64 {
        use crate::dice::lanes::avx512::{group, take, take_with_rest, Streams, GROUPS};
        use std::arch::x86_64::*;
        debug_assert!(self.narrow() && WIDE == 0);
        let splat = |v: u64| _mm512_set1_epi64(v as i64);
        let (v_zero, v_one) = (splat(0), splat(1));
        let v_low = splat(u64::from(u32::MAX));
        let v_ended = splat(u64::from(ENDED));
        let v_start = splat(u64::from(self.start));
        let v_last_bin = splat(self.rounds_bins as u64 - 1);
        let table: *const i64 = table.as_ptr().cast();
        let aliases: *const i32 = aliases.as_ptr().cast();
        let mut streams = Streams::new(lanes);
        let mut node = [v_start; GROUPS];
        let mut rounds = [v_zero; GROUPS];
        let mut left: [__m512i; GROUPS] = std::array::from_fn(|g| group(g, |l| lane_battles(n, l)));
        let mut active = left.map(|l| _mm512_cmpneq_epu64_mask(l, v_zero));
        let spare_end: [__m512i; GROUPS] =
            std::array::from_fn(|g| group(g, |l| u64::from(ends.spare(l))));
        let spare_rounds: [__m512i; GROUPS] =
            std::array::from_fn(|g| group(g, |l| u64::from(rounds_counts.spare(l))));
        let mut keys_end = [0u64; LANES];
        let mut keys_rounds = [0u64; LANES];
        let mut sweeps = 0;
        while active.iter().any(|&a| a != 0) {
            sweeps += 1;
            // PERF: every group's round is gathered before any group steps, so that the
            // groups' chains of gathers (header, column, alias) overlap.
            let mut next = [v_zero; GROUPS];
            for (g, next) in next.iter_mut().enumerate() {
                let word = streams.next(g);
                let header = _mm512_i64gather_epi64::<8>(node[g], table);
                let (column, rest) = take_with_rest(word, header);
                let u = take(rest, _mm512_srli_epi64::<32>(header));
                let at = _mm512_add_epi64(_mm512_add_epi64(node[g], v_one), column);
                let entry = _mm512_i64gather_epi64::<8>(at, table);
                let kept = _mm512_cmplt_epu64_mask(u, _mm512_and_si512(entry, v_low));
                let alias = _mm512_cvtepu32_epi64(_mm512_mask_i64gather_epi32::<4>(
                    _mm256_setzero_si256(),
                    !kept,
                    at,
                    aliases,
                ));
                *next = _mm512_mask_blend_epi64(kept, alias, _mm512_srli_epi64::<32>(entry));
            }
            for g in 0..GROUPS {
                let ended = _mm512_test_epi64_mask(next[g], v_ended);
                let counted = ended & active[g];
                let played = _mm512_add_epi64(rounds[g], v_one);
                let key_end = _mm512_andnot_si512(v_ended, next[g]);
                let key_rounds = _mm512_min_epu64(played, v_last_bin);
                _mm512_storeu_si512(
                    keys_end.as_mut_ptr().add(8 * g).cast(),
                    _mm512_mask_blend_epi64(counted, spare_end[g], key_end),
                );
                _mm512_storeu_si512(
                    keys_rounds.as_mut_ptr().add(8 * g).cast(),
                    _mm512_mask_blend_epi64(counted, spare_rounds[g], key_rounds),
                );
                node[g] = _mm512_mask_blend_epi64(ended, next[g], v_start);
                rounds[g] = _mm512_mask_blend_epi64(ended, played, v_zero);
                left[g] = _mm512_mask_sub_epi64(left[g], counted, left[g], v_one);
                active[g] = _mm512_cmpneq_epu64_mask(left[g], v_zero);
            }
            // SAFETY: a terminal's number is below the endings (the keys of `ends`), a
            // rounds key is capped at the last bin, and a spare slot is one of the `LANES`
            // past the keys (`LaneCounts`).
            for i in 0..LANES {
                ends.add(i, keys_end[i] as u32);
                rounds_counts.add(i, keys_rounds[i] as u32);
            }
        }
        sweeps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dice::DiceStream;
    use crate::systems::rules_file::kernel::RulesCounts;
    use crate::systems::rules_file::scenarios;

    /// The block's battles lane by lane, as `Walk::battle` fights them.
    fn lane_by_lane(walk: &Walk, seed: u64, n: u64) -> (Vec<u64>, Vec<u64>) {
        let mut dice = DiceStream::for_block(seed, 0);
        let lanes = dice.lane_states();
        let mut ends = vec![0u64; walk.endings.len()];
        let mut rounds = vec![0u64; walk.rounds_bins];
        for (l, state) in lanes.iter().enumerate() {
            let mut lane = DiceStream::from_state(*state);
            for _ in 0..lane_battles(n, l) {
                let (end, r) = walk.battle(&mut lane);
                ends[end as usize] += 1;
                rounds[r.min(walk.rounds_bins - 1)] += 1;
            }
        }
        (ends, rounds)
    }

    use crate::systems::rules_file::kernel::{Pick, Wide};
    use crate::systems::rules_file::{Form, RulesStudy};
    use num_rational::BigRational;
    use num_traits::{One, Zero};
    use std::collections::BTreeMap;

    /// The dice pool with twelve infantry a side: a round's 24 dice weigh past 32 bits,
    /// once their common divisor is out (`3^24 · 2^12` in all).
    fn wide_pool() -> RulesStudy {
        RulesStudy::parse(
            std::path::Path::new("wide.toml"),
            "system = \"rules\"\nrules = \"dice_pool\"\n[sides.attacker]\ninfantry = 12\n[sides.defender]\ninfantry = 12\n",
        )
        .expect("a valid analysis")
    }

    /// A run's walk laid out as `pick` says.
    fn walk_as(study: &RulesStudy, pick: Pick) -> Walk {
        let run = &study.runs[0];
        let Form::Chain { chain, .. } = &run.form else {
            panic!("a chain")
        };
        Walk::laid_out(study.game(0), &run.base, chain, pick)
    }

    fn layout_name(walk: &Walk) -> &'static str {
        match &walk.layout {
            Layout::Direct { .. } => "direct",
            Layout::Direct16 { .. } => "direct16",
            Layout::Alias { wide, .. } if wide.is_empty() => "alias",
            Layout::Alias { .. } => "alias with wide states",
        }
    }

    /// What one round from playing state number `i` (its node `node`) gives each next
    /// node, exactly, as the layout reads it.
    fn read_round(walk: &Walk, node: u32) -> BTreeMap<u32, BigRational> {
        let mut p: BTreeMap<u32, BigRational> = BTreeMap::new();
        let mut add = |to: u32, num: u128, den: u128| {
            let q = BigRational::new(num.into(), den.into());
            let e = p.entry(to).or_insert_with(BigRational::zero);
            *e += q;
        };
        match &walk.layout {
            Layout::Direct { sides, next } => {
                for f in 0..*sides {
                    add(next[(node * sides + f) as usize], 1, u128::from(*sides));
                }
            }
            Layout::Direct16 { sides, next } => {
                for f in 0..*sides {
                    add(
                        super::super::from16(next[(node * sides + f) as usize]),
                        1,
                        u128::from(*sides),
                    );
                }
            }
            Layout::Alias {
                table,
                aliases,
                wide,
            } => {
                let header = table[node as usize];
                let k = header as u32;
                if k == WIDE {
                    let Wide {
                        total,
                        cumulative,
                        next,
                    } = &wide[(header >> 32) as usize];
                    let mut before = 0;
                    for (c, to) in cumulative.iter().zip(next) {
                        add(*to, c - before, *total);
                        before = *c;
                    }
                } else {
                    let w = u128::from(header >> 32);
                    for c in 0..k as usize {
                        let i = node as usize + 1 + c;
                        let t = u128::from(table[i] as u32);
                        add((table[i] >> 32) as u32, t, w * u128::from(k));
                        add(aliases[i], w - t, w * u128::from(k));
                    }
                }
            }
        }
        p.retain(|_, q| !q.is_zero());
        p
    }

    /// Every layout gives each state's round exactly the chain's chances: read back from
    /// the layout's tables, as fractions, state by state.
    #[test]
    fn every_layout_reads_each_round_as_the_chain_weighs_it() {
        let mut seen = Vec::new();
        for study in [
            scenarios::naval_engagement_6_v_4(),
            scenarios::classic_crt(),
            scenarios::field_12_v_8(),
            scenarios::dice_pool_10_v_10(),
            wide_pool(),
        ] {
            let run = &study.runs[0];
            let Form::Chain { chain, .. } = &run.form else {
                panic!("a chain")
            };
            for pick in [Pick::Fits, Pick::Direct32, Pick::Alias] {
                let walk = walk_as(&study, pick);
                seen.push(layout_name(&walk));
                // The chain's states as the walk numbers them.
                let mut node_of = vec![0u32; chain.states.len()];
                let (mut playing, mut terminals, mut place) = (0u32, 0u32, 0u32);
                for (s, node) in node_of.iter_mut().enumerate() {
                    *node = if chain.terminal[s] {
                        terminals += 1;
                        ENDED | (terminals - 1)
                    } else if let Layout::Alias { .. } = walk.layout {
                        let at = place;
                        place += 1 + chain.transitions(s).len() as u32;
                        at
                    } else {
                        playing += 1;
                        playing - 1
                    };
                }
                for s in (0..chain.states.len()).filter(|&s| !chain.terminal[s]) {
                    let mut expected: BTreeMap<u32, BigRational> = BTreeMap::new();
                    for (t, w) in chain.transitions(s) {
                        *expected
                            .entry(node_of[*t as usize])
                            .or_insert_with(BigRational::zero) +=
                            BigRational::new((*w).into(), chain.totals[s].into());
                    }
                    assert_eq!(
                        read_round(&walk, node_of[s]),
                        expected,
                        "{}",
                        layout_name(&walk)
                    );
                    let sum: BigRational = expected.values().cloned().sum();
                    assert!(sum.is_one());
                }
            }
        }
        for layout in ["direct", "direct16", "alias", "alias with wide states"] {
            assert!(
                seen.contains(&layout),
                "no test walk is laid out {layout}: {seen:?}"
            );
        }
    }

    #[test]
    fn lanes_count_what_each_lane_fights_on_its_own_stream() {
        let mut ran = BTreeMap::new();
        for (study, picks) in [
            (
                scenarios::naval_engagement_6_v_4(),
                &[Pick::Fits, Pick::Direct32, Pick::Alias][..],
            ),
            (scenarios::classic_crt(), &[Pick::Fits][..]),
            (scenarios::field_12_v_8(), &[Pick::Fits][..]),
            (scenarios::risk_30_v_30(), &[Pick::Fits][..]),
            (scenarios::dice_pool_10_v_10(), &[Pick::Fits][..]),
            (wide_pool(), &[Pick::Fits][..]),
        ] {
            for &pick in picks {
                let walk = walk_as(&study, pick);
                for (seed, n) in [(1, 0), (2, 1), (3, 31), (4, 33), (5, 5_000), (6, 65_536)] {
                    let expected = lane_by_lane(&walk, seed, n);
                    let mut got = (vec![0; walk.endings.len()], vec![0; walk.rounds_bins]);
                    let mut dice = DiceStream::for_block(seed, 0);
                    let lanes = dice.lane_states();
                    if n > 0 && walk.all_at_once(&lanes, n, &mut got).is_some() {
                        *ran.entry(layout_name(&walk)).or_insert(0) += 1;
                        assert_eq!(got, expected, "seed {seed}, {n} battles");
                    }
                    // And through `record_many`, whichever form it takes.
                    let mut counts = RulesCounts::new(study.game(0));
                    walk.record_many(&mut DiceStream::for_block(seed, 0), n, &mut counts);
                    let mut folded = RulesCounts::new(study.game(0));
                    walk.fold(&expected.0, &expected.1, &mut folded);
                    assert_eq!(counts, folded, "seed {seed}, {n} battles");
                }
            }
        }
        // Each narrow layout's sweep ran where the CPU has AVX-512F, and none where not.
        for layout in ["direct", "direct16", "alias"] {
            assert_eq!(
                ran.contains_key(layout),
                VectorForm::Avx512.available(),
                "the vector form of the {layout} layout: {ran:?}"
            );
        }
        assert!(!ran.contains_key("alias with wide states"), "{ran:?}");
    }

    #[test]
    fn alias_columns_give_each_weight_its_share() {
        for weights in [
            vec![1u128],
            vec![1, 1],
            vec![3, 1, 2],
            vec![25, 10, 1],
            vec![7, 0, 5, 11],
        ] {
            let (total, columns) = super::super::alias_columns(&weights);
            let k = weights.len() as u128;
            // Item i's mass over the columns, in units of 1/(k·total).
            let mut mass = vec![0u128; weights.len()];
            for (threshold, kept, alias) in &columns {
                assert!(*threshold <= total);
                mass[*kept] += threshold;
                mass[*alias] += total - threshold;
            }
            let expected: Vec<u128> = weights.iter().map(|w| w * k).collect();
            assert_eq!(mass, expected, "{weights:?}");
        }
    }
}
