//! Ratio lines with reserves bit-sliced: 256 battles to a register, one bit each.
//!
//! Why this module exists: a ratio battle draws two words of dice, so overhead ≤ 2
//! (issue 16) leaves it about four `next_u64` of work. Fought one battle a lane
//! (`ratio/lockstep.rs`), its table lookups and sums cost about 10 ns a battle and its
//! count into the run's several histograms about 7 ns more (docs/performance.md), some
//! 15 `next_u64` in all. Here every quantity of a battle is a few bit planes — bit `i` of
//! each plane is battle `i`'s — and the rules are the same boolean operations for 256
//! battles at once: the sides' totals and the casualty points are binary numbers in
//! planes (ripple adds, compares by borrow chains), a combat's state is six planes, and a
//! run's histograms are popcounts of planes, never one battle counted at a time.
//!
//! Which lines: an open battle whose one committing side holds 1 to
//! [`MAX_SLICED_RESERVES`] reserves and whose policy does not read the casualty points so
//! far (`optimal` for the chance of winning does: it stays in lanes). Compiling the line
//! ([`SlicedLine::new`]) asks [`RatioCombat::commits`] at every totals a combat can reach,
//! for each (reserves used, reserves fed in here). Where each decision is a function of
//! the combat's state (`rescue` and `press` always: their rules read the state), a
//! commitment is a few operations on the state's planes. Where it is not (`optimal`
//! reads both totals: in the bench line's first combat it commits at 4 against 5 but not
//! at 3 or 5 against 5), the decisions are kept by both raw totals: for each enemy total,
//! runs of own totals (merged over totals that never meet there), each run one or two
//! operations on the planes `own ≥ v` (built a bit at a time for every `v`), ANDed with
//! the enemy totals' minterms. Totals and counters must also fit the planes' widths, and
//! each total's range at a decision 64 values.
//!
//! The dice: every battle draws, a sweep, one face for each of the line's dice and one
//! for each reserve, from the bit planes of `dice/planes.rs` (exactly uniform faces); the
//! `k`-th reserve committed rolls the `k`-th reserve face, as [`RatioCombat::fight`]'s
//! reserve word gives the `k`-th reserve the `k`-th die. Faces of reserves that never
//! commit are drawn and not read. So a battle is the rules' battle on its faces: the tests
//! replay every battle of a sweep through [`RatioCombat::commits`] and
//! [`RatioCombat::resolve`] with its faces and require the same outcome.

// Bit-sliced arithmetic reads several numbers' planes at one index (bit `i` of each).
#![allow(clippy::needless_range_loop)]

use super::{ArmyResult, MinScore, RatioCombat, RatioHistogram, ReservePolicy};
use crate::dice::lanes::LANES;
use crate::dice::planes::{
    d6, increment, live_plane, minterms, popcount, tally, Bits, LanePlanes, Plane, PLANE_BATTLES,
};
use crate::dice::DiceStream;

/// Most reserves a bit-sliced line holds.
pub const MAX_SLICED_RESERVES: usize = 4;
/// Bits of a total (two's complement): 6 where totals, their differences and the floor
/// are within ±31, else 8 (±127).
const NARROW: usize = 6;
const WIDE: usize = 8;
/// Bits of a counter (casualty points, routed and beaten units): 5 where every side's
/// casualty points stay below 32, else 7 (below 128).
const FEW: usize = 5;
const MANY: usize = 7;
/// Most (face, reserve path) cases [`SlicedLine::new`] asks the policy about.
const MAX_POLICY_CASES: usize = 1 << 22;

/// A number in planes: bit `k` of battle `i`'s value is bit `i` of plane `k`.
type Num<B, const N: usize> = [B; N];

/// One combat as the sweep fights it.
#[derive(Clone, Debug)]
struct SlicedCombat {
    /// Line dice of A and of B.
    dice: [u32; 2],
    /// Each side's total when every die shows 1.
    base: [i32; 2],
    /// When the reserve side commits its next reserve here.
    decide: Decide,
}

/// A combat's commitment rule, `used` reserves gone and `here` of them into the combat.
/// States are sets, bit `s` for state `s` (0 even, 1–3 A repulsed, beaten, routed, 4–6 B
/// likewise).
#[derive(Clone, Debug)]
enum Decide {
    /// The same states for every `used` below the reserves and every `here`: one test of
    /// the state and of a reserve left.
    Uniform(u8),
    /// `[used][here]`: the states in which it commits.
    States([[u8; MAX_SLICED_RESERVES + 1]; MAX_SLICED_RESERVES + 1]),
    /// Where the decisions are not a function of the state (`optimal`'s read the totals):
    /// by both raw totals.
    Totals(ByTotals),
}

/// A combat's decisions by the reserve side's raw total (`own`) and the enemy's (`opp`).
#[derive(Clone, Debug)]
struct ByTotals {
    opp_lo: i32,
    opp_bits: usize,
    /// The enemy totals (`opp − opp_lo`) of each set of two or more the runs read: the
    /// `k`-th is plane `2^MAX_TOTAL_BITS + k` of [`Scratch::opp`], the union of those
    /// totals' minterms (planes `o`).
    opp_unions: Vec<Vec<u8>>,
    /// `steps[s]`: what commit step `s` asks.
    steps: Vec<TotalsStep>,
}

/// The decisions of a commit step (`s` reserves fed in by the battles still committing).
#[derive(Clone, Debug)]
struct TotalsStep {
    /// The least own total the step's decisions meet, and the bits of the own totals from
    /// it (PERF: fewer than the combat's: the first step's totals are the line dice's).
    own_lo: i32,
    own_bits: usize,
    /// The battles the step asks are those still committing (`s` reserves here); for
    /// each number of reserves used (from `s`) at which the side may commit, the runs
    /// at which it does.
    keys: Vec<(usize, StepRuns)>,
}

/// The runs of one (used, here): those from the least own total (`lo` 0: one operation
/// fewer), and the rest.
#[derive(Clone, Debug, Default)]
struct StepRuns {
    prefixes: Vec<TotalsRun>,
    inner: Vec<TotalsRun>,
}

/// Where the side commits: the enemy total in plane `set` of [`Scratch::opp`] (a
/// minterm, or a union of them: [`ByTotals::opp_unions`]) and `own − own_lo` from
/// `lo` to `end − 1` (a run may cover totals that never meet those enemy totals there, to
/// be one run: it reaches 0 and `2^own_bits` where no total it meets lies beyond it).
#[derive(Clone, Copy, Debug, PartialEq)]
struct TotalsRun {
    set: u8,
    lo: u8,
    end: u8,
}

impl ByTotals {
    /// Where the reserve side commits at commit step `step`: `own` its raw total,
    /// `opp` the planes of the enemy total's minterms and unions ([`Scratch::opp`]), `used` the
    /// one-hot planes of the reserves used, `here` where `step` reserves are fed in here
    /// (the battles still committing); `ge` is scratch.
    ///
    /// PERF: a run is one or two operations on the planes `own − own_lo ≥ v`, every `v`
    /// built a bit at a time ([`at_least_each`]: 10 operations for 3 bits, 22 for 4; no
    /// branch, no chain longer than the bits), over the step's own range (the first
    /// step's totals are the line dice's: 3 bits for a d6). The first form, a prefix OR
    /// over the own total's minterms (a chain through memory), held 36% of the sweep's
    /// samples (`perf record`, `profile ratio-optimal`). With the rest (only the battles
    /// still committing asked, scratch kept across sweeps, unions of enemy totals in
    /// registers) the bench line's optimal sweep went from 75.6 to 60.0 instructions a
    /// battle (callgrind) and from 123 M to 273 M battles/s (best of four runs of the
    /// profile beside each other; the bench's figures are in docs/performance.md).
    #[inline(always)]
    unsafe fn commits<B: Bits, const W: usize>(
        &self,
        own: &Num<B, W>,
        opp: &[B; OPP_PLANES],
        ge: &mut [B; (1 << MAX_TOTAL_BITS) + 1],
        used: &[B],
        here: B,
        step: usize,
    ) -> B {
        let s = &self.steps[step];
        let x = add_const(own, -i64::from(s.own_lo));
        at_least_each(&x, s.own_bits, ge);
        let mut c = B::zero();
        for (u, runs) in &s.keys {
            let mut decided = B::zero();
            for run in &runs.prefixes {
                decided = decided.or(opp[usize::from(run.set)].and_not(ge[usize::from(run.end)]));
            }
            for run in &runs.inner {
                let at = opp[usize::from(run.set)]
                    .and(ge[usize::from(run.lo)])
                    .and_not(ge[usize::from(run.end)]);
                decided = decided.or(at);
            }
            c = c.or(used[*u].and(decided));
        }
        c.and(here)
    }

    /// The planes of [`Self::opp_unions`] in `opp`, from the minterms there.
    #[inline(always)]
    unsafe fn opp_unions<B: Bits>(&self, opp: &mut [B; OPP_PLANES]) {
        // PERF: each union in a register (a flat loop of ORs into memory, chains through
        // the stores, took 3.6% of `profile ratio-optimal`'s samples).
        for (k, members) in self.opp_unions.iter().enumerate() {
            let mut at = B::zero();
            for &o in members {
                at = at.or(opp[usize::from(o)]);
            }
            opp[(1 << MAX_TOTAL_BITS) + k] = at;
        }
    }
}

/// `ge[v]`: where `x ≥ v`, for `v` from 0 (every battle) to `2^bits` (none), `x`
/// unsigned in its low `bits` planes. A bit at a time from the lowest: with the top bit
/// `t` and the rest `r` (of `h` values), `x ≥ v` is `t ∨ (r ≥ v)` for `v ≤ h` and `t ∧ (r
/// ≥ v − h)` above.
#[inline(always)]
unsafe fn at_least_each<B: Bits, const W: usize>(
    x: &Num<B, W>,
    bits: usize,
    ge: &mut [B; (1 << MAX_TOTAL_BITS) + 1],
) {
    // PERF: the loops unrolled for each width (their bounds, known, cost more than the
    // operations at 3 or 4 bits).
    #[inline(always)]
    unsafe fn build<B: Bits, const BITS: usize>(x: &[B], ge: &mut [B; (1 << MAX_TOTAL_BITS) + 1]) {
        ge[0] = B::ones();
        ge[1] = B::zero();
        for k in 0..BITS {
            let (top, h) = (x[k], 1 << k);
            for v in (1..h).rev() {
                ge[v + h] = top.and(ge[v]);
            }
            ge[2 * h] = B::zero();
            ge[h] = top;
            for v in 1..h {
                ge[v] = top.or(ge[v]);
            }
        }
    }
    const { assert!(MAX_TOTAL_BITS == 6) };
    match bits {
        1 => build::<B, 1>(x, ge),
        2 => build::<B, 2>(x, ge),
        3 => build::<B, 3>(x, ge),
        4 => build::<B, 4>(x, ge),
        5 => build::<B, 5>(x, ge),
        _ => build::<B, 6>(x, ge),
    }
}

/// Most bits of `own − own_lo` and of `opp − opp_lo` in [`ByTotals`].
const MAX_TOTAL_BITS: usize = 6;
/// Most unions of enemy totals a combat's runs read ([`ByTotals::opp_unions`]).
const MAX_OPP_SETS: usize = 64;
/// Planes of [`Scratch::opp`]: the enemy total's minterms, then the unions.
const OPP_PLANES: usize = (1 << MAX_TOTAL_BITS) + MAX_OPP_SETS;

/// A line compiled for the bit-sliced sweeps.
#[derive(Clone, Debug)]
pub(super) struct SlicedLine {
    /// The side that commits reserves, and its reserves' modifiers in commitment order.
    side: usize,
    reserve_mods: Vec<i32>,
    combats: Vec<SlicedCombat>,
    /// The min-score floor, where some total can fall below it.
    floor: Option<i32>,
    /// Whether a total after the floor can be 0 or less (then any higher total routs it).
    low_routs: bool,
    line_units: [u32; 2],
    /// Bits of the totals ([`NARROW`] or [`WIDE`]) and of the counters ([`FEW`] or
    /// [`MANY`]): the sweeps are compiled for each.
    width: usize,
    count_bits: usize,
}

impl SlicedLine {
    /// The line compiled for the sweeps, or `None` where they do not fight it (see the
    /// module's doc).
    pub(super) fn new(c: &RatioCombat) -> Option<Self> {
        if c.battle.skirmish || c.committing.len() != 1 {
            return None;
        }
        let side = c.committing[0];
        let reserve_mods = c.reserve_mods[side].clone();
        let reserves = reserve_mods.len();
        if reserves == 0 || reserves > MAX_SLICED_RESERVES {
            return None;
        }
        // A policy reading the casualty-point difference is asked at difference 0 only:
        // leave it to the lanes.
        if c.battle.policy[side] == ReservePolicy::Optimal
            && c.optimal.as_ref().is_some_and(|o| o.diff_len > 1)
        {
            return None;
        }
        let cases: usize = c
            .pairings
            .iter()
            .map(|p| p.faces as usize * (reserves + 1) * 6usize.pow(reserves as u32))
            .sum();
        if cases > MAX_POLICY_CASES {
            return None;
        }
        let (add_lo, add_hi) = reserve_mods
            .iter()
            .fold((0, 0), |(lo, hi), &m| (lo + m.min(0), hi + (5 + m).max(0)));
        let (mut t_lo, mut t_hi) = (i32::MAX, i32::MIN);
        let mut combats = Vec::with_capacity(c.pairings.len());
        for (index, p) in c.pairings.iter().enumerate() {
            for s in 0..2 {
                let (lo, hi) = p.totals.iter().fold((i32::MAX, i32::MIN), |(lo, hi), t| {
                    (lo.min(t[s]), hi.max(t[s]))
                });
                let (lo, hi) = if s == side {
                    (lo + add_lo, hi + add_hi)
                } else {
                    (lo, hi)
                };
                (t_lo, t_hi) = (t_lo.min(lo), t_hi.max(hi));
            }
            let decide = Self::commitments(c, index, side, reserves)?;
            combats.push(SlicedCombat {
                dice: p.units,
                base: p.totals[0],
                decide,
            });
        }
        let floor = match c.battle.min_score {
            MinScore::Floor(m) if t_lo < m => Some(m),
            _ => None,
        };
        let low = match c.battle.min_score {
            MinScore::Floor(m) => t_lo.max(m),
            MinScore::None => t_lo,
        };
        let low_routs = low <= 0;
        // Totals, their differences and the floor within the planes' signed range; a
        // lower total doubled (compared as unsigned) then fits too.
        let floor_value = floor.unwrap_or(0);
        let reach = [
            t_lo.abs(),
            t_hi.abs(),
            t_hi - t_lo,
            floor_value.abs(),
            floor_value - t_lo,
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        let width = match reach {
            r if r < 1 << (NARROW - 1) => NARROW,
            r if r < 1 << (WIDE - 1) => WIDE,
            _ => return None,
        };
        let count_bits = match c.max_cp().into_iter().max().unwrap_or(0) {
            m if m < 1 << FEW => FEW,
            m if m < 1 << MANY => MANY,
            _ => return None,
        };
        Some(Self {
            side,
            reserve_mods,
            combats,
            floor,
            low_routs,
            line_units: c.line_units,
            width,
            count_bits,
        })
    }

    /// The states in which `side` commits in combat `c`, for each (used, here), found by
    /// asking [`RatioCombat::commits`] along every commit loop the combat's faces and
    /// reserve dice can take; where a decision differs between totals of one state, the
    /// decisions by both raw totals instead (`None` where their ranges are too wide).
    fn commitments(c: &RatioCombat, index: usize, side: usize, reserves: usize) -> Option<Decide> {
        let p = &c.pairings[index];
        let mut commit = [[0u8; MAX_SLICED_RESERVES + 1]; MAX_SLICED_RESERVES + 1];
        let mut seen = [[0u8; MAX_SLICED_RESERVES + 1]; MAX_SLICED_RESERVES + 1];
        let mut by_state = true;
        // Every decision: (used, here, own, opp, commits).
        let mut decisions = Vec::new();
        for first in 0..=reserves {
            let paths = 6usize.pow((reserves - first) as u32);
            for face in 0..p.faces as usize {
                for path in 0..paths {
                    let mut totals = p.totals[face];
                    let (mut used, mut here) = (first, 0);
                    let mut rest = path;
                    loop {
                        let state = c.state_of(totals);
                        let yes = c.commits(side, index, totals, used, here, 0);
                        decisions.push((used, here, totals[side], totals[1 - side], yes));
                        let bit = 1u8 << state;
                        if seen[used][here] & bit != 0 && (commit[used][here] & bit != 0) != yes {
                            by_state = false;
                        }
                        seen[used][here] |= bit;
                        if !yes {
                            break;
                        }
                        commit[used][here] |= bit;
                        totals[side] += (rest % 6) as i32 + c.reserve_mods[side][used];
                        rest /= 6;
                        used += 1;
                        here += 1;
                    }
                }
            }
        }
        if !by_state {
            let range = |pick: fn(&(usize, usize, i32, i32, bool)) -> i32| {
                let lo = decisions.iter().map(pick).min().unwrap_or(0);
                let hi = decisions.iter().map(pick).max().unwrap_or(0);
                let bits = (32 - ((hi - lo) as u32).leading_zeros()) as usize;
                (lo, bits.max(1))
            };
            let (own_lo, own_bits) = range(|d| d.2);
            let (opp_lo, opp_bits) = range(|d| d.3);
            if own_bits > MAX_TOTAL_BITS || opp_bits > MAX_TOTAL_BITS {
                return None;
            }
            // Per (used, here, opp): the own totals that commit, and those that do not.
            let keys = ((reserves + 1) * (reserves + 1)) << opp_bits;
            let (mut yes_at, mut no_at) = (vec![0u64; keys], vec![0u64; keys]);
            for &(used, here, own, opp, yes) in &decisions {
                let at = ((used * (reserves + 1) + here) << opp_bits) + (opp - opp_lo) as usize;
                let bit = 1u64 << (own - own_lo);
                if yes {
                    yes_at[at] |= bit;
                } else {
                    no_at[at] |= bit;
                }
            }
            // Per (used, here): runs between the own totals that must not commit, each
            // holding one that must, for each enemy total; runs of the same own totals
            // are one run of a set of enemy totals.
            let mut opp_sets: Vec<u64> = Vec::new();
            let mut key_runs = |used: usize, here: usize| {
                let key = used * (reserves + 1) + here;
                let mut runs: Vec<(u64, u8, u8)> = Vec::new();
                for o in 0..1usize << opp_bits {
                    let (yes, no) = (yes_at[(key << opp_bits) + o], no_at[(key << opp_bits) + o]);
                    let seen = yes | no;
                    if seen == 0 {
                        continue;
                    }
                    let (least, most) = (
                        seen.trailing_zeros() as usize,
                        63 - seen.leading_zeros() as usize,
                    );
                    let mut first = 0;
                    for v in 0..=1usize << own_bits {
                        if v == 1 << own_bits || no >> v & 1 == 1 {
                            if v > first && yes >> first & (u64::MAX >> (64 - (v - first))) != 0 {
                                // Bounds no total met lies beyond are the planes' ends.
                                let lo = if first <= least { 0 } else { first };
                                let end = if v > most { 1 << own_bits } else { v };
                                let (lo, end) = (lo as u8, end as u8);
                                match runs.iter_mut().find(|r| (r.1, r.2) == (lo, end)) {
                                    Some(run) => run.0 |= 1 << o,
                                    None => runs.push((1 << o, lo, end)),
                                }
                            }
                            first = v + 1;
                        }
                    }
                }
                runs.into_iter()
                    .map(|(set, lo, end)| {
                        let at = opp_sets.iter().position(|&s| s == set).unwrap_or_else(|| {
                            opp_sets.push(set);
                            opp_sets.len() - 1
                        });
                        TotalsRun {
                            set: at as u8,
                            lo,
                            end,
                        }
                    })
                    .collect::<Vec<_>>()
            };
            // Step `s` asks (used, `s`) for used from `s` below the reserves; its own
            // totals from the least it meets.
            let mut steps = Vec::with_capacity(reserves);
            for step in 0..reserves {
                let mut keys = Vec::new();
                let mut seen = 0u64;
                for used in step..reserves {
                    let runs = key_runs(used, step);
                    if !runs.is_empty() {
                        let key = (used * (reserves + 1) + step) << opp_bits;
                        for o in 0..1usize << opp_bits {
                            seen |= yes_at[key + o] | no_at[key + o];
                        }
                        keys.push((used, runs));
                    }
                }
                // (A step where the side never commits reads nothing: no runs.)
                let (shift, most) = match seen {
                    0 => (0, 0),
                    _ => (
                        seen.trailing_zeros() as usize,
                        63 - seen.leading_zeros() as usize,
                    ),
                };
                let bits = ((usize::BITS - (most - shift).leading_zeros()) as usize).max(1);
                let keys = keys
                    .into_iter()
                    .map(|(used, runs)| {
                        let mut split = StepRuns::default();
                        for mut run in runs {
                            // A bound past 0 lies above the least total its runs meet.
                            run.lo = run.lo.saturating_sub(shift as u8);
                            run.end = if usize::from(run.end) == 1 << own_bits {
                                1 << bits
                            } else {
                                run.end - shift as u8
                            };
                            match run.lo {
                                0 => split.prefixes.push(run),
                                _ => split.inner.push(run),
                            }
                        }
                        (used, split)
                    })
                    .collect();
                steps.push(TotalsStep {
                    own_lo: own_lo + shift as i32,
                    own_bits: bits,
                    keys,
                });
            }
            // A set of one total is its minterm's plane; the others, unions after them.
            let mut opp_unions: Vec<Vec<u8>> = Vec::new();
            let planes: Vec<u8> = opp_sets
                .iter()
                .map(|&set| {
                    if set.count_ones() == 1 {
                        set.trailing_zeros() as u8
                    } else {
                        opp_unions.push((0..64u8).filter(|&o| set >> o & 1 == 1).collect());
                        ((1 << MAX_TOTAL_BITS) + opp_unions.len() - 1) as u8
                    }
                })
                .collect();
            for step in &mut steps {
                for (_, runs) in &mut step.keys {
                    for run in runs.prefixes.iter_mut().chain(&mut runs.inner) {
                        run.set = planes[usize::from(run.set)];
                    }
                }
            }
            if opp_unions.len() > MAX_OPP_SETS {
                return None;
            }
            let by_totals = ByTotals {
                opp_lo,
                opp_bits,
                opp_unions,
                steps,
            };
            return Some(Decide::Totals(by_totals));
        }
        // One set of states for every (used, here) with a reserve left, where the
        // decisions seen agree with it.
        let all = (0..reserves)
            .flat_map(|u| (0..=u).map(move |h| (u, h)))
            .fold(0u8, |m, (u, h)| m | commit[u][h]);
        let uniform = (0..reserves)
            .flat_map(|u| (0..=u).map(move |h| (u, h)))
            .all(|(u, h)| commit[u][h] & seen[u][h] == all & seen[u][h]);
        Some(if uniform {
            Decide::Uniform(all)
        } else {
            Decide::States(commit)
        })
    }

    /// Faces a battle draws: its line dice and one a reserve.
    pub(super) fn faces(&self) -> u64 {
        let line: u32 = self.combats.iter().map(|c| c.dice[0] + c.dice[1]).sum();
        u64::from(line) + self.reserve_mods.len() as u64
    }
}

/// Each battle's face, named by what rolls it (the tests replay battles by slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Slot {
    /// The `k`-th reserve committed.
    Reserve(usize),
    /// Combat `c`'s die `k`: A's dice first, in the order the pairing lists its units.
    Line(usize, usize),
}

/// What a sweep shows the tests; nothing (`()`) in runs.
pub(super) trait Record {
    const ON: bool = false;
    fn face(&mut self, _slot: Slot, _planes: [Plane; 3]) {}
    /// A combat's state planes (one-hot, states 0–6).
    fn state(&mut self, _combat: usize, _states: [Plane; 7]) {}
    /// The battle's end: result planes (one-hot, slots 0–8), casualty points, reserves
    /// used (one-hot) and combats the floor decided.
    fn end(
        &mut self,
        _result: [Plane; 9],
        _cp: [Vec<Plane>; 2],
        _used: Vec<Plane>,
        _floors: [Plane; 5],
    ) {
    }
}

impl Record for () {}

/// `k` in two's complement, as constant planes.
#[inline(always)]
unsafe fn constant<B: Bits, const N: usize>(k: i64) -> Num<B, N> {
    let mut out = [B::zero(); N];
    for (i, bit) in out.iter_mut().enumerate() {
        if k >> i & 1 == 1 {
            *bit = B::ones();
        }
    }
    out
}

/// `x + y` (wrapping).
#[inline(always)]
unsafe fn add<B: Bits, const N: usize>(x: &Num<B, N>, y: &Num<B, N>) -> Num<B, N> {
    add_with_carry(x, y, B::zero())
}

/// `x + y + carry` (wrapping): a ripple of full adds.
#[inline(always)]
unsafe fn add_with_carry<B: Bits, const N: usize>(
    x: &Num<B, N>,
    y: &Num<B, N>,
    mut carry: B,
) -> Num<B, N> {
    let mut out = [B::zero(); N];
    for i in 0..N {
        let half = x[i].xor(y[i]);
        out[i] = half.xor(carry);
        carry = x[i].and(y[i]).or(carry.and(half));
    }
    out
}

/// Bits of a combat's units on one side: the line's 1 or 2 and the reserves fed in.
const UNIT_BITS: usize = 3;

/// `x + y`, `y` a number of [`UNIT_BITS`] (a combat's units): full adds on its bits, the
/// carry's half adds above them.
#[inline(always)]
unsafe fn add_small<B: Bits, const N: usize>(x: &Num<B, N>, y: &Num<B, UNIT_BITS>) -> Num<B, N> {
    let mut carry = B::zero();
    let mut out = *x;
    for i in 0..N {
        if i < UNIT_BITS {
            let half = x[i].xor(y[i]);
            out[i] = half.xor(carry);
            carry = x[i].and(y[i]).or(carry.and(half));
        } else {
            out[i] = x[i].xor(carry);
            carry = x[i].and(carry);
        }
    }
    out
}

/// `x + k` (wrapping), `k` known: two operations a bit.
#[inline(always)]
unsafe fn add_const<B: Bits, const N: usize>(x: &Num<B, N>, k: i64) -> Num<B, N> {
    let mut carry: Option<B> = None;
    let mut out = *x;
    for i in 0..N {
        let one = k >> i & 1 == 1;
        out[i] = match (carry, one) {
            (None, false) => x[i],
            (None, true) => {
                carry = Some(x[i]);
                x[i].not()
            }
            (Some(c), false) => {
                carry = Some(x[i].and(c));
                x[i].xor(c)
            }
            (Some(c), true) => {
                carry = Some(x[i].or(c));
                x[i].xor(c).not()
            }
        };
    }
    out
}

/// `x − y` (wrapping): `x + !y + 1`.
#[inline(always)]
unsafe fn sub<B: Bits, const N: usize>(x: &Num<B, N>, y: &Num<B, N>) -> Num<B, N> {
    let mut not_y = *y;
    for bit in &mut not_y {
        *bit = bit.not();
    }
    add_with_carry(x, &not_y, B::ones())
}

/// Where `x < y`, both read as unsigned: the borrow out of `x − y`.
#[inline(always)]
unsafe fn below<B: Bits, const N: usize>(x: &Num<B, N>, y: &Num<B, N>) -> B {
    let mut borrow = B::zero();
    for i in 0..N {
        let differ = x[i].xor(y[i]);
        borrow = y[i].and_not(x[i]).or(borrow.and_not(differ));
    }
    borrow
}

/// Where `x ≥ k`, `x` unsigned, `k` known.
#[inline(always)]
unsafe fn at_least<B: Bits, const N: usize>(x: &Num<B, N>, k: u32) -> B {
    if k == 0 {
        return B::ones();
    }
    if k >= 1 << N {
        return B::zero();
    }
    // x ≥ k: scanning from the top, the first bit where they differ is set in x.
    let mut ge = B::ones(); // equal so far counts as ≥ (the bits below decide)
    for i in 0..N {
        // From the least significant bit up: ge_i = x_i > k_i, or equal and ge below.
        ge = if k >> i & 1 == 1 {
            x[i].and(ge)
        } else {
            x[i].or(ge)
        };
    }
    ge
}

/// Where `x` is zero.
#[inline(always)]
unsafe fn zero<B: Bits, const N: usize>(x: &Num<B, N>) -> B {
    let mut any = x[0];
    for p in &x[1..] {
        any = any.or(*p);
    }
    any.not()
}

/// `a` where `s` is set, `b` elsewhere.
#[inline(always)]
unsafe fn select<B: Bits, const N: usize>(s: B, a: &Num<B, N>, b: &Num<B, N>) -> Num<B, N> {
    let mut out = *b;
    for i in 0..N {
        out[i] = s.select(a[i], b[i]);
    }
    out
}

/// A combat's state in planes: `even`, who lost, and the severity (under `!even`).
#[derive(Clone, Copy)]
struct State<B> {
    even: B,
    a_lost: B,
    b_lost: B,
    repulsed: B,
    beaten: B,
    routed: B,
}

impl<B: Bits> State<B> {
    /// No state yet (decisions by the totals read none).
    #[inline(always)]
    unsafe fn none() -> Self {
        let zero = B::zero();
        State {
            even: zero,
            a_lost: zero,
            b_lost: zero,
            repulsed: zero,
            beaten: zero,
            routed: zero,
        }
    }

    /// Where the state is in `set` (bit `s` for state `s`).
    #[inline(always)]
    unsafe fn is_in(&self, set: u8) -> B {
        let mut r = B::zero();
        if set & 1 == 1 {
            r = self.even;
        }
        if set >> 1 & 7 != 0 {
            r = r.or(self.a_lost.and(self.severity_in(set >> 1)));
        }
        if set >> 4 & 7 != 0 {
            r = r.or(self.b_lost.and(self.severity_in(set >> 4)));
        }
        r
    }

    /// Where the severity is in `set` (bit 0 repulsed, 1 beaten, 2 routed).
    #[inline(always)]
    unsafe fn severity_in(&self, set: u8) -> B {
        match set & 7 {
            0 => B::zero(),
            7 => B::ones(),
            bits => {
                let mut r = B::zero();
                for (k, plane) in [self.repulsed, self.beaten, self.routed].iter().enumerate() {
                    if bits >> k & 1 == 1 {
                        r = r.or(*plane);
                    }
                }
                r
            }
        }
    }

    /// The seven states one-hot.
    #[inline(always)]
    unsafe fn one_hot(&self) -> [B; 7] {
        [
            self.even,
            self.a_lost.and(self.repulsed),
            self.a_lost.and(self.beaten),
            self.a_lost.and(self.routed),
            self.b_lost.and(self.repulsed),
            self.b_lost.and(self.beaten),
            self.b_lost.and(self.routed),
        ]
    }
}

/// The state of totals `a` and `b` (as `classify` has it): the lower loses, repulsed
/// below twice, beaten below three times, else routed; a lower total of 0 or less (only
/// where `low_routs`) is routed.
#[inline(always)]
unsafe fn classify<B: Bits, const W: usize>(
    a: &Num<B, W>,
    b: &Num<B, W>,
    low_routs: bool,
) -> State<B> {
    let (diff, sides) = sides(a, b);
    with_severity(a, b, &diff, sides, low_routs)
}

/// Who lost at totals `a` and `b` (`State`'s severity planes left clear: for sets of
/// states that do not read them, [`reads_severity`]), and `a − b`.
#[inline(always)]
unsafe fn sides<B: Bits, const W: usize>(a: &Num<B, W>, b: &Num<B, W>) -> (Num<B, W>, State<B>) {
    let diff = sub(a, b);
    let a_lost = diff[W - 1];
    let even = zero(&diff);
    let b_lost = even.or(a_lost).not();
    let zero = B::zero();
    let state = State {
        even,
        a_lost,
        b_lost,
        repulsed: zero,
        beaten: zero,
        routed: zero,
    };
    (diff, state)
}

/// Whether a set of states (bit `s` for state `s`) tells a side's severities apart.
fn reads_severity(set: u8) -> bool {
    let a = set >> 1 & 7;
    let b = set >> 4 & 7;
    !(a == 0 || a == 7) || !(b == 0 || b == 7)
}

/// [`sides`]' state with its severity: the lower total's ratio to the higher.
#[inline(always)]
unsafe fn with_severity<B: Bits, const W: usize>(
    a: &Num<B, W>,
    b: &Num<B, W>,
    diff: &Num<B, W>,
    sides: State<B>,
    low_routs: bool,
) -> State<B> {
    let a_lost = sides.a_lost;
    // |a − b| and the lower total; both below 2^(W − 1), so twice the lower fits.
    let mut flipped = *diff;
    let mut carry_in = [B::zero(); W];
    for bit in &mut flipped {
        *bit = bit.xor(a_lost);
    }
    carry_in[0] = a_lost;
    let d = add(&flipped, &carry_in);
    let lo = select(a_lost, a, b);
    let mut twice = [B::zero(); W];
    twice[1..].copy_from_slice(&lo[..W - 1]);
    // hi ≥ 2·lo ⇔ d ≥ lo; hi ≥ 3·lo ⇔ d ≥ 2·lo.
    let two = below(&d, &lo).not();
    let three = below(&d, &twice).not();
    let (routed, beaten, repulsed) = if low_routs {
        // lo ≤ 0: negative, or zero.
        let low = lo[W - 1].or(zero(&lo));
        let routed = three.or(low);
        (routed, two.and_not(routed), two.or(low).not())
    } else {
        (three, two.and_not(three), two.not())
    };
    State {
        repulsed,
        beaten,
        routed,
        ..sides
    }
}

/// `x`, or `m` where `x < m` (signed), and where it was.
#[inline(always)]
unsafe fn floored<B: Bits, const W: usize>(x: &Num<B, W>, m: i32) -> (Num<B, W>, B) {
    let lower = add_const(x, -i64::from(m))[W - 1];
    let mut out = *x;
    for (i, bit) in out.iter_mut().enumerate() {
        *bit = if i64::from(m) >> i & 1 == 1 {
            bit.or(lower)
        } else {
            bit.and_not(lower)
        };
    }
    (out, lower)
}

/// A face's three planes as a number.
#[inline(always)]
unsafe fn widen<B: Bits, const N: usize>(face: [B; 3]) -> Num<B, N> {
    let mut out = [B::zero(); N];
    out[..3].copy_from_slice(&face);
    out
}

/// `out[v]` where `x − lo` is `v`, for `v` below `2^bits` (`x − lo` known to be below it
/// and not negative: its low `bits` bits' minterms).
#[inline(always)]
unsafe fn minterms_from<B: Bits, const N: usize>(
    x: &Num<B, N>,
    lo: i32,
    bits: usize,
    out: &mut [B; 1 << MAX_TOTAL_BITS],
) {
    let offset = add_const(x, -i64::from(lo));
    // PERF: `minterms` written out over the number's array (through its slices, 81
    // instructions a battle of the bench's optimal line against 75; callgrind).
    out[0] = B::ones();
    for (i, &bit) in offset.iter().enumerate().take(bits) {
        for k in (0..1 << i).rev() {
            out[k | 1 << i] = out[k].and(bit);
            out[k] = out[k].and_not(bit);
        }
    }
}

/// Bits of a counter's low minterms in [`count_values`].
const LOW_BITS: usize = 4;

/// Adds to `counts[v]` the battles of `live` where `x` is `v`: the minterms of `x`'s low
/// [`LOW_BITS`] bits and of the rest, two operations a value each, then one AND a value.
#[inline(always)]
unsafe fn count_values<B: Bits, const N: usize>(x: &Num<B, N>, live: B, counts: &mut [u64]) {
    const { assert!(N > LOW_BITS && N - LOW_BITS <= 3) };
    let mut low = [B::zero(); 1 << LOW_BITS];
    minterms(&x[..LOW_BITS], &mut low);
    let mut high = [B::zero(); 8];
    minterms(&x[LOW_BITS..], &mut high);
    for plane in &mut high {
        *plane = plane.and(live);
    }
    for (v, count) in counts.iter_mut().enumerate() {
        *count += popcount(low[v % (1 << LOW_BITS)].and(high[v >> LOW_BITS]));
    }
}

/// A sweep: the line, the dice, and what to record.
struct Sweep<'a, B, R> {
    line: &'a SlicedLine,
    dice: LanePlanes<B>,
    record: &'a mut R,
    scratch: Scratch<B>,
}

/// The planes decisions by the totals ([`ByTotals`]) work in, kept from sweep to sweep
/// (PERF: zeroing them each sweep, 6 KiB, was 5% of `profile ratio-optimal`'s samples).
struct Scratch<B> {
    /// `own − own_lo ≥ v`.
    ge: [B; (1 << MAX_TOTAL_BITS) + 1],
    /// The enemy total's minterms, then the unions of them the runs read.
    opp: [B; OPP_PLANES],
}

impl<'a, B: Bits, R: Record> Sweep<'a, B, R> {
    /// # Safety
    /// As [`Bits`]'.
    #[inline(always)]
    unsafe fn new(line: &'a SlicedLine, lanes: &[[u64; 4]; LANES], record: &'a mut R) -> Self {
        Self {
            line,
            dice: LanePlanes::new(lanes),
            record,
            scratch: Scratch {
                ge: [B::zero(); (1 << MAX_TOTAL_BITS) + 1],
                opp: [B::zero(); OPP_PLANES],
            },
        }
    }

    #[inline(always)]
    unsafe fn draw(&mut self, slot: Slot) -> [B; 3] {
        let planes = d6(&mut self.dice);
        if R::ON {
            self.record.face(slot, planes.map(|p| p.to_plane()));
        }
        planes
    }

    /// A battle each bit of `live`, counted into `h`.
    #[inline(always)]
    unsafe fn battles<const W: usize, const C: usize>(&mut self, live: B, h: &mut RatioHistogram) {
        let line = self.line;
        let side = line.side;
        let reserves = line.reserve_mods.len();
        // What the k-th reserve committed adds: its face + its modifier (d6 − 1 + modifier).
        let mut adds = [[B::zero(); W]; MAX_SLICED_RESERVES];
        for (k, &m) in line.reserve_mods.iter().enumerate() {
            let face = self.draw(Slot::Reserve(k));
            adds[k] = add_const(&widen(face), i64::from(m));
        }
        // Reserves used, one-hot.
        let mut used = [B::zero(); MAX_SLICED_RESERVES + 1];
        used[0] = B::ones();
        // Each side's units repulsed, beaten and routed.
        let mut counts = [[[B::zero(); C]; 3]; 2];
        let mut floors = [B::zero(); 5];
        for (index, combat) in line.combats.iter().enumerate() {
            let mut totals = [[B::zero(); W]; 2];
            let mut k = 0;
            for (s, total) in totals.iter_mut().enumerate() {
                let face = self.draw(Slot::Line(index, k));
                let mut sum = add_const(&widen(face), i64::from(combat.base[s]));
                for k in k + 1..k + combat.dice[s] as usize {
                    let face = self.draw(Slot::Line(index, k));
                    sum = add(&sum, &widen(face));
                }
                k += combat.dice[s] as usize;
                *total = sum;
            }
            // PERF: where the decisions do not read the severity (`rescue`: lost or even),
            // the states between commitments are only who lost; the severity once, at the
            // end.
            // Decisions by the totals read no state between commitments.
            let by_totals = match &combat.decide {
                Decide::Totals(t) => Some(t),
                _ => None,
            };
            let cheap = matches!(combat.decide, Decide::Uniform(set) if !reads_severity(set));
            let mut st = if by_totals.is_some() {
                State::none()
            } else if cheap {
                line.sides(&totals)
            } else {
                line.state(&totals)
            };
            if let Some(t) = by_totals {
                let scratch = &mut self.scratch;
                let (minterms, _) = scratch.opp.split_first_chunk_mut().expect("64 planes");
                minterms_from(&totals[1 - side], t.opp_lo, t.opp_bits, minterms);
                t.opp_unions(&mut scratch.opp);
            }
            let mut here = [B::zero(); MAX_SLICED_RESERVES + 1];
            here[0] = B::ones();
            for step in 0..reserves {
                // Battles still committing have `step` of their reserves here; only they
                // are asked (a battle that stopped would be asked what it was asked, with
                // the same totals, and say no again).
                let (asked, at_here) = (&used[step..reserves], here[step]);
                let commit = match &combat.decide {
                    Decide::Totals(t) => {
                        let scratch = &mut self.scratch;
                        t.commits(
                            &totals[side],
                            &scratch.opp,
                            &mut scratch.ge,
                            &used,
                            at_here,
                            step,
                        )
                    }
                    &Decide::Uniform(set) => st.is_in(set).and_not(used[reserves]),
                    Decide::States(sets) => {
                        let mut c = B::zero();
                        for (u, &at_used) in (step..).zip(asked) {
                            if sets[u][step] != 0 {
                                c = c.or(at_used.and(st.is_in(sets[u][step])));
                            }
                        }
                        c.and(at_here)
                    }
                };
                if !commit.any() {
                    break;
                }
                // The reserve's add by the reserves used before it.
                let mut add_now = [B::zero(); W];
                for u in 0..reserves {
                    let at = used[u].and(commit);
                    for (bit, plane) in add_now.iter_mut().zip(&adds[u]) {
                        *bit = bit.or(at.and(*plane));
                    }
                }
                totals[side] = add(&totals[side], &add_now);
                for u in (1..=reserves).rev() {
                    used[u] = commit.select(used[u - 1], used[u]);
                }
                used[0] = used[0].and_not(commit);
                for h in (1..=step + 1).rev() {
                    here[h] = commit.select(here[h - 1], here[h]);
                }
                here[0] = here[0].and_not(commit);
                if by_totals.is_none() {
                    st = if cheap {
                        line.sides(&totals)
                    } else {
                        line.state(&totals)
                    };
                }
            }
            if cheap || by_totals.is_some() {
                st = line.state(&totals);
            }
            if let Some(m) = line.floor {
                // The floor decided the combat where it raised a total and the state
                // without it differs.
                let (_, low_a) = floored(&totals[0], m);
                let (_, low_b) = floored(&totals[1], m);
                let raised = low_a.or(low_b);
                if raised.any() {
                    let raw = classify(&totals[0], &totals[1], true).one_hot();
                    let mut differs = B::zero();
                    for (x, y) in raw.iter().zip(st.one_hot()) {
                        differs = differs.or(x.xor(y));
                    }
                    increment(&mut floors, raised.and(differs));
                }
            }
            let states = st.one_hot();
            for (count, &plane) in h.combat_states[index].iter_mut().zip(&states) {
                *count += popcount(plane.and(live));
            }
            if R::ON {
                self.record.state(index, states.map(|p| p.to_plane()));
            }
            // Tallies: the losing side's units by severity, each side's units a number
            // (the line's, and on the reserve side the reserves fed in here).
            let mut here_count = [B::zero(); UNIT_BITS];
            for (h, &plane) in here.iter().enumerate().take(reserves + 1).skip(1) {
                for (k, bit) in here_count.iter_mut().enumerate() {
                    if h >> k & 1 == 1 {
                        *bit = bit.or(plane);
                    }
                }
            }
            for (s, lost) in [st.a_lost, st.b_lost].into_iter().enumerate() {
                let n = i64::from(combat.dice[s]);
                let units = if s == side {
                    add_const(&here_count, n)
                } else {
                    constant::<B, UNIT_BITS>(n)
                };
                for (counter, severity) in
                    counts[s]
                        .iter_mut()
                        .zip([st.repulsed, st.beaten, st.routed])
                {
                    let at = lost.and(severity);
                    let mut masked = units;
                    for bit in &mut masked {
                        *bit = bit.and(at);
                    }
                    *counter = add_small(counter, &masked);
                }
            }
        }
        // Casualty points: 1, 2 and 3 a unit repulsed, beaten and routed.
        let mut cp = [[B::zero(); C]; 2];
        for (points, [repulsed, beaten, routed]) in cp.iter_mut().zip(&counts) {
            let twice = add(beaten, routed);
            let mut doubled = [B::zero(); C];
            doubled[1..].copy_from_slice(&twice[..C - 1]);
            *points = add(&add(repulsed, routed), &doubled);
        }
        let routed = [counts[0][2], counts[1][2]];
        let beaten = [counts[0][1], counts[1][1]];
        // The army result, by the losing side's units (line units, and the reserve
        // side's reserves used where it lost).
        let a_loses = below(&cp[1], &cp[0]);
        let b_loses = below(&cp[0], &cp[1]);
        let draw = a_loses.or(b_loses).not();
        let [mut disperses, mut beaten_half] = [B::zero(); 2];
        for (s, loses) in [a_loses, b_loses].into_iter().enumerate() {
            let heres = if s == side { reserves + 1 } else { 1 };
            for u in 0..heres {
                let n = line.line_units[s] + u as u32;
                let at = if s == side { loses.and(used[u]) } else { loses };
                // 2·x > n ⇔ x ≥ ⌊n/2⌋ + 1.
                disperses = disperses.or(at.and(at_least(&routed[s], n / 2 + 1)));
                beaten_half = beaten_half.or(at.and(at_least(&beaten[s], n / 2 + 1)));
            }
        }
        let loser_routed = select(a_loses, &routed[0], &routed[1]);
        let loser_beaten = select(a_loses, &beaten[0], &beaten[1]);
        let retreats = zero(&loser_routed).not().or(beaten_half);
        let retires = zero(&loser_beaten).not();
        // Severity of the army result: 3 disperses, 2 retreats, 1 retires, 0 holds.
        let severity = [
            retreats.or(retires).not(),
            retires.and_not(retreats),
            retreats.and_not(disperses),
            disperses,
        ];
        let mut result = [B::zero(); 9];
        for (k, &plane) in severity.iter().enumerate() {
            result[k] = b_loses.and(plane);
            result[4 + k] = a_loses.and(plane);
        }
        result[ArmyResult::DRAW] = draw;
        for (count, &plane) in h.result.iter_mut().zip(&result) {
            *count += popcount(plane.and(live));
        }
        for (counts, points) in h.cp.iter_mut().zip(&cp) {
            count_values(points, live, counts);
        }
        for (count, &plane) in h.reserves_used.iter_mut().zip(&used[..=reserves]) {
            *count += popcount(plane.and(live));
        }
        if line.floor.is_some() {
            tally(&mut h.floor_decided, &floors, live);
        } else {
            h.floor_decided[0] += popcount(live);
        }
        if R::ON {
            self.record.end(
                result.map(|p| p.to_plane()),
                cp.map(|c| c.iter().map(|p| p.to_plane()).collect()),
                used[..=reserves].iter().map(|p| p.to_plane()).collect(),
                floors.map(|p| p.to_plane()),
            );
        }
    }
}

impl SlicedLine {
    /// The state of a combat at these raw totals, after the floor.
    #[inline(always)]
    unsafe fn state<B: Bits, const W: usize>(&self, totals: &[Num<B, W>; 2]) -> State<B> {
        match self.floor {
            Some(m) => {
                let (a, _) = floored(&totals[0], m);
                let (b, _) = floored(&totals[1], m);
                classify(&a, &b, self.low_routs)
            }
            None => classify(&totals[0], &totals[1], self.low_routs),
        }
    }

    /// Who lost a combat at these raw totals, after the floor, without the severity
    /// (for a set of states that does not read it).
    #[inline(always)]
    unsafe fn sides<B: Bits, const W: usize>(&self, totals: &[Num<B, W>; 2]) -> State<B> {
        match self.floor {
            Some(m) => {
                let (a, _) = floored(&totals[0], m);
                let (b, _) = floored(&totals[1], m);
                sides(&a, &b).1
            }
            None => sides(&totals[0], &totals[1]).1,
        }
    }
}

/// `n` battles in sweeps of [`PLANE_BATTLES`], from the lanes' streams split from `dice`,
/// counted into `h`; returns the words drawn (the lanes' keys and the planes').
pub(super) fn battle_block(
    line: &SlicedLine,
    dice: &mut DiceStream,
    n: u64,
    h: &mut RatioHistogram,
) -> u64 {
    if n == 0 {
        return 0;
    }
    let lanes = dice.lane_states();
    #[cfg(target_arch = "x86_64")]
    if has_avx512vl() {
        // SAFETY: the CPU has AVX2 and AVX-512F and VL.
        return LANES as u64 + unsafe { sweeps_avx512vl(line, &lanes, n, h) };
    }
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return LANES as u64 + unsafe { sweeps_avx2(line, &lanes, n, h) };
    }
    // SAFETY: plain words need nothing of the CPU.
    LANES as u64 + unsafe { widths::<Plane, ()>(line, &lanes, n, h, &mut ()) }
}

/// The sweeps compiled for the line's widths of totals and counters.
#[inline(always)]
unsafe fn widths<B: Bits, R: Record>(
    line: &SlicedLine,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    h: &mut RatioHistogram,
    record: &mut R,
) -> u64 {
    match (line.width, line.count_bits) {
        (NARROW, FEW) => sweeps::<B, R, NARROW, FEW>(line, lanes, n, h, record),
        (NARROW, _) => sweeps::<B, R, NARROW, MANY>(line, lanes, n, h, record),
        (_, FEW) => sweeps::<B, R, WIDE, FEW>(line, lanes, n, h, record),
        _ => sweeps::<B, R, WIDE, MANY>(line, lanes, n, h, record),
    }
}

/// The sweeps in AVX2 registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sweeps_avx2(
    line: &SlicedLine,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    h: &mut RatioHistogram,
) -> u64 {
    widths::<crate::dice::planes::Avx2, ()>(line, lanes, n, h, &mut ())
}

/// Whether the CPU has AVX2 and AVX-512F and VL, for [`sweeps_avx512vl`].
#[cfg(target_arch = "x86_64")]
fn has_avx512vl() -> bool {
    is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512vl")
}

/// The sweeps in AVX2 registers as [`sweeps_avx2`], compiled with AVX-512F and VL: the
/// same operations on the same 256-bit planes, so the same battles, but the compiler may
/// fuse two or three of a plane's and/or/xor into one `vpternlogq` and keep planes in 32
/// registers, not 16. PERF: `profile ratio-rescue` / `press` / `optimal`, seven runs of
/// each build beside each other on the AMD EPYC Zen 4, medians 302 -> 330, 288 -> 314
/// and 251 -> 260 M battles/s (frontier's sweep gained 2%, so it stays AVX2's).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512vl")]
unsafe fn sweeps_avx512vl(
    line: &SlicedLine,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    h: &mut RatioHistogram,
) -> u64 {
    widths::<crate::dice::planes::Avx2, ()>(line, lanes, n, h, &mut ())
}

/// The sweeps of `n` battles, counted into `h`; returns the planes' words.
#[inline(always)]
unsafe fn sweeps<B: Bits, R: Record, const W: usize, const C: usize>(
    line: &SlicedLine,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    h: &mut RatioHistogram,
    record: &mut R,
) -> u64 {
    let mut sweep = Sweep::new(line, lanes, record);
    let mut left = n;
    while left > 0 {
        let battles = left.min(PLANE_BATTLES as u64) as usize;
        left -= battles as u64;
        sweep.battles::<W, C>(B::from_plane(live_plane(battles)), h);
    }
    // Every battle draws every face of its sweep.
    #[cfg(any(test, feature = "count-dice"))]
    crate::dice::counting::add_draws(n * line.faces());
    sweep.dice.words()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::super::{
        cp_diff, MinScore, Objective, Pairing, RatioBattle, RatioCombat, RatioHistogram,
        RatioOutcome, ReservePolicy, Unit,
    };
    use super::*;
    use crate::dice::planes::face;
    use crate::systems::ratio::scenarios::{ratio_line, RATIO_LINE};

    /// A sweep's faces by slot, its combats' states and its battles' ends.
    #[derive(Default)]
    struct Recorded {
        faces: HashMap<Slot, [Plane; 3]>,
        states: Vec<[Plane; 7]>,
        result: Vec<Plane>,
        cp: Vec<Vec<Plane>>,
        used: Vec<Plane>,
        floors: Vec<Plane>,
    }

    impl Record for Recorded {
        const ON: bool = true;
        fn face(&mut self, slot: Slot, planes: [Plane; 3]) {
            assert!(
                self.faces.insert(slot, planes).is_none(),
                "{slot:?} drawn twice"
            );
        }
        fn state(&mut self, combat: usize, states: [Plane; 7]) {
            assert_eq!(combat, self.states.len());
            self.states.push(states);
        }
        fn end(
            &mut self,
            result: [Plane; 9],
            cp: [Vec<Plane>; 2],
            used: Vec<Plane>,
            floors: [Plane; 5],
        ) {
            self.result = result.to_vec();
            self.cp = cp.to_vec();
            self.used = used;
            self.floors = floors.to_vec();
        }
    }

    fn bit(p: &Plane, i: usize) -> bool {
        p[i / 64] >> (i % 64) & 1 == 1
    }

    /// The one set plane of one-hot `planes` for battle `i`.
    fn hot(planes: &[Plane], i: usize) -> usize {
        let set: Vec<usize> = (0..planes.len()).filter(|&k| bit(&planes[k], i)).collect();
        assert_eq!(set.len(), 1, "battle {i}: one-hot planes set at {set:?}");
        set[0]
    }

    fn number(planes: &[Plane], i: usize) -> u32 {
        planes
            .iter()
            .enumerate()
            .map(|(k, p)| u32::from(bit(p, i)) << k)
            .sum()
    }

    /// Battle `i` of a sweep fought by the rules' own steps (the commit loop the reserve
    /// table is built with, `RatioCombat::commit_reserves`, and [`RatioCombat::resolve`])
    /// on its slots' faces.
    fn reference(c: &RatioCombat, faces: &HashMap<Slot, [Plane; 3]>, i: usize) -> RatioOutcome {
        let line = c.sliced.as_ref().unwrap();
        let side = line.side;
        let mut packed = 0u64;
        let mut states = 0u64;
        let mut used = 0usize;
        for (index, p) in c.pairings.iter().enumerate() {
            let dice = p.units[0] + p.units[1];
            let combined: u32 = (0..dice as usize)
                .map(|k| face(&faces[&Slot::Line(index, k)], i) * 6u32.pow(k as u32))
                .sum();
            // The k-th reserve committed rolls the k-th reserve face.
            let mut next = used;
            let die = || {
                next += 1;
                face(&faces[&Slot::Reserve(next - 1)], i)
            };
            let diff = cp_diff(packed, side);
            let (totals, units, here) =
                c.commit_reserves(index, p, combined as usize, used, side, diff, die);
            used += here;
            let o = c.resolve(totals[0], totals[1], units);
            packed += o.packed;
            states |= (o.state as u64) << (4 * index);
        }
        let units = c.units_after(side, used);
        c.outcome(packed, units, used as u32, states)
    }

    /// One sweep of `live` battles of `c` (plain words) must be, battle by battle, the
    /// reference battle on its faces, and its counts those battles' counts.
    fn sweep_is_the_reference(c: &RatioCombat, seed: u64, live: Plane) {
        let line = c.sliced.as_ref().expect("a bit-sliced line");
        let mut dice = DiceStream::for_block(seed, 0);
        let lanes = dice.lane_states();
        let mut recorded = Recorded::default();
        let mut h = RatioHistogram::new(c);
        // SAFETY: plain words need nothing of the CPU.
        unsafe {
            let mut sweep = Sweep::<Plane, _>::new(line, &lanes, &mut recorded);
            match (line.width, line.count_bits) {
                (NARROW, FEW) => sweep.battles::<NARROW, FEW>(live, &mut h),
                (NARROW, _) => sweep.battles::<NARROW, MANY>(live, &mut h),
                (_, FEW) => sweep.battles::<WIDE, FEW>(live, &mut h),
                _ => sweep.battles::<WIDE, MANY>(live, &mut h),
            }
        }
        assert_eq!(recorded.faces.len() as u64, line.faces());
        let mut expected = RatioHistogram::new(c);
        for i in (0..PLANE_BATTLES).filter(|&i| bit(&live, i)) {
            let want = reference(c, &recorded.faces, i);
            expected.record(&want);
            let got_states: u64 = recorded
                .states
                .iter()
                .enumerate()
                .map(|(k, s)| (hot(s, i) as u64) << (4 * k))
                .sum();
            let got = RatioOutcome {
                result: hot(&recorded.result, i),
                cp: [number(&recorded.cp[0], i), number(&recorded.cp[1], i)],
                reserves_used: hot(&recorded.used, i) as u32,
                floor_decided: number(&recorded.floors, i),
                states: got_states,
            };
            assert_eq!(got, want, "battle {i} of {:?}", c.battle);
        }
        assert_eq!(h, expected, "the sweep's counts, {:?}", c.battle);
    }

    fn units(prefix: &str, mods: &[i32]) -> Vec<Unit> {
        mods.iter()
            .enumerate()
            .map(|(i, &m)| Unit {
                name: format!("{prefix}{i}"),
                modifier: m,
            })
            .collect()
    }

    /// A random open battle: the larger side holds 1 to [`MAX_SLICED_RESERVES`] reserves
    /// and may double up; `None` where it is not bit-sliced.
    fn random_line(g: &mut DiceStream) -> Option<RatioCombat> {
        let combats = 1 + g.word().take(6) as usize;
        let side = g.word().take(2) as usize;
        let mut next = [0usize; 2];
        let mut line = Vec::new();
        for _ in 0..combats {
            let mut n = [1, 1];
            n[side] += g.word().take(3) as usize / 2;
            line.push(Pairing {
                a: (next[0]..next[0] + n[0]).collect(),
                b: (next[1]..next[1] + n[1]).collect(),
            });
            next[0] += n[0];
            next[1] += n[1];
        }
        let reserves = 1 + g.word().take(MAX_SLICED_RESERVES as u32) as usize;
        // Modifiers over the whole allowed range, most lines near zero, some at the ends.
        let spread = [1, 3, 6][g.word().take(3) as usize];
        let mut modifier = || g.word().take(2 * spread + 1) as i32 - spread as i32;
        let mut mods: [Vec<i32>; 2] = [
            (0..next[0]).map(|_| modifier()).collect(),
            (0..next[1]).map(|_| modifier()).collect(),
        ];
        let mut reserve_units = [vec![], vec![]];
        reserve_units[side] = (next[side]..next[side] + reserves).collect();
        for _ in 0..reserves {
            let m = modifier();
            mods[side].push(m);
        }
        let policy = [
            ReservePolicy::Rescue,
            ReservePolicy::Press,
            ReservePolicy::Optimal,
        ][g.word().take(3) as usize];
        let min_score = match g.word().take(8) {
            0 => MinScore::None,
            k @ 1..=6 => MinScore::Floor(k as i32),
            _ => MinScore::Floor(1),
        };
        let battle = RatioBattle {
            units: [units("A", &mods[0]), units("B", &mods[1])],
            line,
            reserves: reserve_units,
            policy: [policy; 2],
            objective: Objective::CpDifference,
            min_score,
            skirmish: false,
            escalation: None,
        };
        let c = RatioCombat::new(battle).expect("a valid line");
        c.bit_sliced().then_some(c)
    }

    /// The sweeps in AVX2 registers, as compiled for AVX2 and for AVX-512VL, count what
    /// they count in four plain words, and draw the same words (where the CPU has each).
    #[test]
    fn avx2_registers_and_plain_words_fight_the_same_battles() {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") {
            if !has_avx512vl() {
                eprintln!("this machine has no AVX-512VL: that copy of the sweeps did not run");
            }
            let mut g = DiceStream::for_block(7, 7);
            let mut lines =
                vec![RatioCombat::new(ratio_line(RATIO_LINE, 2, 0, ReservePolicy::Press)).unwrap()];
            while lines.len() < 40 {
                lines.extend(random_line(&mut g));
            }
            for (k, c) in lines.iter().enumerate() {
                let line = c.sliced.as_ref().unwrap();
                let n = [1, 255, 256, 700][k % 4];
                let lanes = DiceStream::for_block(k as u64, 3).lane_states();
                let (mut plain, mut avx2) = (RatioHistogram::new(c), RatioHistogram::new(c));
                // SAFETY: plain words need nothing of the CPU; the CPU has AVX2.
                let words = unsafe {
                    (
                        widths::<Plane, ()>(line, &lanes, n, &mut plain, &mut ()),
                        sweeps_avx2(line, &lanes, n, &mut avx2),
                    )
                };
                assert_eq!(words.0, words.1, "{:?}", c.battle);
                assert_eq!(plain, avx2, "{:?}", c.battle);
                assert_eq!(plain.trials(), n);
                if has_avx512vl() {
                    let mut vl = RatioHistogram::new(c);
                    // SAFETY: the CPU has AVX2 and AVX-512F and VL.
                    let vl_words = unsafe { sweeps_avx512vl(line, &lanes, n, &mut vl) };
                    assert_eq!((words.0, &plain), (vl_words, &vl), "{:?}", c.battle);
                }
            }
        }
    }

    #[test]
    fn the_bench_lines_are_bit_sliced() {
        for policy in [
            ReservePolicy::Rescue,
            ReservePolicy::Press,
            ReservePolicy::Optimal,
        ] {
            let c = RatioCombat::new(ratio_line(RATIO_LINE, 2, 0, policy)).unwrap();
            assert!(c.bit_sliced(), "{policy:?}");
            assert_eq!(c.sliced_faces(), Some(13));
            // Optimal's decisions read the totals in some combats (in the first, with two
            // reserves left, it commits at 4 against 5 but not at 3 or 5 against 5).
            let by_totals = c
                .sliced
                .as_ref()
                .unwrap()
                .combats
                .iter()
                .filter(|k| matches!(k.decide, Decide::Totals(_)))
                .count();
            assert_eq!(
                by_totals > 0,
                policy == ReservePolicy::Optimal,
                "{policy:?}"
            );
        }
        let none = RatioCombat::new(ratio_line(RATIO_LINE, 2, 0, ReservePolicy::None)).unwrap();
        assert!(
            !none.bit_sliced(),
            "no reserve commits: the signature kernel's"
        );
    }

    /// A line whose every total lies below the floor: the floor minus the lowest total
    /// (35), not any total (29 at most), sets the width of the totals (a review's case).
    #[test]
    fn totals_far_below_the_floor_fit_their_width() {
        let battle = RatioBattle {
            units: [units("A", &[-6]), units("B", &[-6, -6, -6, -6, -6])],
            line: vec![Pairing {
                a: vec![0],
                b: vec![0],
            }],
            reserves: [vec![], vec![1, 2, 3, 4]],
            policy: [ReservePolicy::Rescue; 2],
            objective: Objective::CpDifference,
            min_score: MinScore::Floor(6),
            skirmish: false,
            escalation: None,
        };
        let c = RatioCombat::new(battle).unwrap();
        assert_eq!(c.sliced.as_ref().map(|l| l.width), Some(WIDE));
        for seed in 0..4 {
            sweep_is_the_reference(&c, seed, live_plane(PLANE_BATTLES));
        }
    }

    #[test]
    fn every_battle_is_the_reference_battle_on_its_slots_faces() {
        let all = live_plane(PLANE_BATTLES);
        for policy in [
            ReservePolicy::Rescue,
            ReservePolicy::Press,
            ReservePolicy::Optimal,
        ] {
            let c = RatioCombat::new(ratio_line(RATIO_LINE, 2, 0, policy)).unwrap();
            if c.bit_sliced() {
                sweep_is_the_reference(&c, 3, all);
            }
        }
        let mut g = DiceStream::for_block(2026, 11);
        let (mut fought, mut by_policy) = (0, [0; 4]);
        let mut floors_decided = 0;
        let mut widths = HashMap::new();
        let mut by_totals = 0;
        for case in 0..3000u64 {
            let Some(c) = random_line(&mut g) else {
                continue;
            };
            let live = if case % 3 == 0 {
                live_plane(1 + (case as usize * 37) % PLANE_BATTLES)
            } else {
                all
            };
            sweep_is_the_reference(&c, case, live);
            let mut h = RatioHistogram::new(&c);
            let mut dice = DiceStream::for_block(case, 1);
            c.sliced_block(&mut dice, 256, &mut h).unwrap();
            floors_decided += h.floor_decided[1..].iter().sum::<u64>();
            fought += 1;
            by_policy[c.battle.policy[0] as usize] += 1;
            let line = c.sliced.as_ref().unwrap();
            *widths.entry((line.width, line.count_bits)).or_insert(0) += 1;
            by_totals += usize::from(
                line.combats
                    .iter()
                    .any(|k| matches!(k.decide, Decide::Totals(_))),
            );
            if fought == 300 {
                break;
            }
        }
        assert_eq!(fought, 300, "random bit-sliced lines");
        // Rescue, press and optimal, whose decisions read the totals in most lines.
        assert!(
            by_policy[1] > 50 && by_policy[2] > 50 && by_policy[3] > 50,
            "{by_policy:?}"
        );
        assert!(by_totals > 40, "{by_totals} lines decide by the totals");
        // Every width of totals and counters the sweeps are compiled for.
        assert!(
            widths.len() == 4 && widths.values().all(|&n| n >= 5),
            "{widths:?}"
        );
        assert!(floors_decided > 0, "some battles' floor decides a combat");
    }
}
