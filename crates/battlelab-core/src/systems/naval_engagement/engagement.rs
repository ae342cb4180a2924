//! Naval engagements of the strategic game (docs/systems/naval.md): the naval combat
//! table chained with pursuit until one fleet escapes, retreats unpursued or is destroyed.
//!
//! Why this module exists: one roll on the naval table says little about who holds the
//! sea; the chain does. A round rolls on the naval table (odds of the current NSP, DRM of
//! morale difference, leaders and scenario); the fleet the result names loses what it says
//! (S sunk, C captured, R nothing) and breaks off; the other fleet may pursue, and on a
//! pursuit roll of I (intercept) another round is fought. The kernel ([`NavalCombat::engage`])
//! and the exact enumeration ([`NavalCombat::distribution`]) share the round step.

use std::sync::Arc;

use serde::Serialize;

use crate::dice::DiceStream;
use crate::rules::RulesError;
use crate::systems::d6_tables::lookup::{CompiledD6Table, D6Table};

mod lockstep;

/// Largest fleet.
pub const MAX_NSP: u32 = 99;

/// One fleet.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Fleet {
    pub name: String,
    pub nsp: u32,
    /// Naval morale: Major 2, Minor 1.
    pub morale: u32,
    pub leader: i32,
    /// Other DRMs in this fleet's favour.
    pub drm: i32,
    /// Whether this fleet pursues when the other breaks off.
    pub pursues: bool,
}

/// An engagement between fleet A and fleet B.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Engagement {
    pub a: Fleet,
    pub b: Fleet,
    /// −1 to pursuit rolls: the pursuers are in a coastal hex or port.
    pub coastal: bool,
    /// The chain stops after this many battle rounds.
    pub round_limit: u32,
}

impl Engagement {
    /// Checks the fleets; errors name the field and what is allowed.
    pub fn validate(&self) -> Result<(), RulesError> {
        for (key, fleet) in [("a", &self.a), ("b", &self.b)] {
            if !(1..=MAX_NSP).contains(&fleet.nsp) {
                return Err(RulesError::new(
                    format!("fleet.{key}.nsp"),
                    format!("a fleet needs 1 to {MAX_NSP} NSP, got {}", fleet.nsp),
                ));
            }
            if !(1..=2).contains(&fleet.morale) {
                return Err(RulesError::new(
                    format!("fleet.{key}.morale"),
                    format!(
                        "naval morale is 1 (Minor) or 2 (Major), got {}",
                        fleet.morale
                    ),
                ));
            }
            if !(0..=3).contains(&fleet.leader) {
                return Err(RulesError::new(
                    format!("fleet.{key}.leader"),
                    format!("a leader rating must be 0 to 3, got {}", fleet.leader),
                ));
            }
            if !(-6..=6).contains(&fleet.drm) {
                return Err(RulesError::new(
                    format!("fleet.{key}.drm"),
                    format!("a fleet's DRM must be -6 to +6, got {}", fleet.drm),
                ));
            }
        }
        if !(1..=100).contains(&self.round_limit) {
            return Err(RulesError::new(
                "engagement.round_limit",
                format!("the round limit must be 1 to 100, got {}", self.round_limit),
            ));
        }
        Ok(())
    }
}

/// How an engagement ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngagementResult {
    ADestroyed,
    BDestroyed,
    AEscapes,
    BEscapes,
    ARetreatsUnpursued,
    BRetreatsUnpursued,
    RoundLimit,
}

impl EngagementResult {
    pub const COUNT: usize = 7;
    pub const ALL: [Self; 7] = [
        Self::ADestroyed,
        Self::BDestroyed,
        Self::AEscapes,
        Self::BEscapes,
        Self::ARetreatsUnpursued,
        Self::BRetreatsUnpursued,
        Self::RoundLimit,
    ];
    pub const LABELS: [&'static str; 7] = [
        "A destroyed",
        "B destroyed",
        "A escapes",
        "B escapes",
        "A retreats unpursued",
        "B retreats unpursued",
        "round limit",
    ];

    pub fn label(self) -> &'static str {
        Self::LABELS[self as usize]
    }

    /// The side left in control of the sea (0 = A, 1 = B), if any: the one that did not
    /// break off.
    pub fn control(self) -> Option<usize> {
        match self {
            Self::BDestroyed | Self::BEscapes | Self::BRetreatsUnpursued => Some(0),
            Self::ADestroyed | Self::AEscapes | Self::ARetreatsUnpursued => Some(1),
            Self::RoundLimit => None,
        }
    }
}

/// What one naval-table code does: which force (0 = larger, 1 = smaller) and how many NSP
/// sunk and captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Effect {
    smaller_affected: bool,
    sunk: u32,
    captured: u32,
}

fn effect(code: &str) -> Option<Effect> {
    let count = if code.starts_with('2') { 2 } else { 1 };
    let mut chars = code.trim_start_matches('2').chars();
    let side = chars.next()?;
    let kind = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    let smaller_affected = match side {
        'L' => false,
        'S' => true,
        _ => return None,
    };
    let (sunk, captured) = match kind {
        'S' => (count, 0),
        'C' => (0, count),
        'R' => (0, 0),
        _ => return None,
    };
    Some(Effect {
        smaller_affected,
        sunk,
        captured,
    })
}

/// Fleet strength and losses during an engagement (index 0 = A, 1 = B).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NavalState {
    pub nsp: [u32; 2],
    pub captured: [u32; 2],
}

/// One engagement's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngagementOutcome {
    pub result: EngagementResult,
    pub rounds: u32,
    pub nsp_lost: [u32; 2],
    pub captured: [u32; 2],
}

/// The naval table compiled with the engagement rules.
#[derive(Clone, Debug)]
pub struct NavalCombat {
    table: CompiledD6Table,
    effects: Vec<Effect>,
    /// Ratios `(larger, smaller)` of the odds columns after the first, ascending.
    thresholds: Vec<(u64, u64)>,
    /// PERF: `row_of[nsp_a * ROW_STRIDE + nsp_b]`: `(larger * columns + column) * 36`,
    /// where a round's effects start in an [`EngagementKernel`]'s table, for every pair
    /// of strengths (built once here, shared by every kernel; it replaces the ratio tests
    /// of the odds column on every round).
    row_of: Arc<[u32]>,
}

/// Strengths 0..=[`MAX_NSP`] per fleet in `row_of`.
const ROW_STRIDE: usize = MAX_NSP as usize + 1;

/// What a round does before the pursuit roll.
#[derive(Clone, Copy, Debug)]
struct RoundStep {
    after: NavalState,
    /// The side that breaks off.
    affected: usize,
}

/// The odds column of fleets `larger ≥ smaller` (1-1, 3-2, 2-1, rounded down): the
/// thresholds `(n, d)` (odds n-d, ascending) the ratio reaches.
///
/// PERF: thresholds reached, summed as integers (columns ascend: 1-1, 3-2, 2-1).
fn odds_column(thresholds: &[(u64, u64)], larger: u32, smaller: u32) -> usize {
    thresholds
        .iter()
        .map(|&(n, d)| usize::from(u64::from(larger) * d >= u64::from(smaller) * n))
        .sum()
}

impl NavalCombat {
    /// Validates that every cell of the (possibly overridden) naval table is a code of the
    /// form `[2]{L|S}{R|S|C}` and compiles it.
    pub fn new(table: D6Table) -> Result<Self, RulesError> {
        let compiled = CompiledD6Table::new(table)?;
        let effects = compiled
            .outcomes()
            .iter()
            .map(|code| {
                effect(code).ok_or_else(|| {
                    RulesError::new(
                        "rules.cells",
                        format!("a naval cell is [2] + L or S + R, S or C (e.g. \"LR\", \"2SC\"), got \"{code}\""),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let thresholds = compiled
            .table()
            .column_labels
            .iter()
            .skip(1)
            .filter_map(|l| crate::rules::parse_odds_ratio(l))
            .map(|(n, d)| (u64::from(n), u64::from(d)))
            .collect();
        let mut combat = Self {
            table: compiled,
            effects,
            thresholds,
            row_of: Arc::new([]),
        };
        let columns = combat.thresholds.len() + 1;
        let mut row_of = Vec::with_capacity(ROW_STRIDE * ROW_STRIDE);
        for a in 0..=MAX_NSP {
            for b in 0..=MAX_NSP {
                let larger = usize::from(b > a);
                let column = odds_column(&combat.thresholds, a.max(b), a.min(b));
                let row = (larger * columns + column) * 36;
                row_of.push(u32::try_from(row).map_err(|_| {
                    RulesError::new(
                        "rules.columns",
                        "a naval table has at most a few thousand columns",
                    )
                })?);
            }
        }
        combat.row_of = row_of.into();
        Ok(combat)
    }

    pub fn table(&self) -> &CompiledD6Table {
        &self.table
    }

    /// The battle step of a round for one face of the d6.
    fn step(&self, engagement: &Engagement, state: &NavalState, face: u32) -> RoundStep {
        let larger = usize::from(state.nsp[1] > state.nsp[0]);
        let smaller = 1 - larger;
        let fleets = [&engagement.a, &engagement.b];
        let drm = (fleets[larger].morale as i32 - fleets[smaller].morale as i32)
            + (fleets[larger].leader - fleets[smaller].leader)
            + (fleets[larger].drm - fleets[smaller].drm);
        let column = odds_column(&self.thresholds, state.nsp[larger], state.nsp[smaller]);
        let outcome = self.table.faces(column, drm)[face as usize];
        let effect = self.effects[usize::from(outcome)];
        let affected = if effect.smaller_affected {
            smaller
        } else {
            larger
        };
        let mut after = *state;
        let sunk = effect.sunk.min(after.nsp[affected]);
        after.nsp[affected] -= sunk;
        let captured = effect.captured.min(after.nsp[affected]);
        after.nsp[affected] -= captured;
        after.captured[affected] += captured;
        RoundStep { after, affected }
    }

    /// The pursuit roll's chance of interception, in sixths: I on 5–6, one less when coastal.
    fn intercepts(engagement: &Engagement, face: u32) -> bool {
        let roll = (face as i32 + 1 - i32::from(engagement.coastal)).clamp(1, 6);
        roll >= 5
    }

    fn end(
        &self,
        engagement: &Engagement,
        step: &RoundStep,
        intercepted: bool,
        round: u32,
    ) -> Option<EngagementResult> {
        use EngagementResult::*;
        let a = step.affected == 0;
        if step.after.nsp[step.affected] == 0 {
            return Some(if a { ADestroyed } else { BDestroyed });
        }
        Self::breaks_off(engagement, step.affected, intercepted)
            .or((round >= engagement.round_limit).then_some(RoundLimit))
    }

    /// How a round in which `affected` breaks off ends when it keeps ships: it retreats
    /// unpursued, or escapes a pursuit that did not intercept; `None` when the pursuit
    /// intercepts (the engagement goes on). [`Self::end`] and the kernel's
    /// [`RoundEffect`]s both read it.
    fn breaks_off(
        engagement: &Engagement,
        affected: usize,
        intercepted: bool,
    ) -> Option<EngagementResult> {
        use EngagementResult::*;
        let a = affected == 0;
        let pursuer = [&engagement.a, &engagement.b][1 - affected];
        if !pursuer.pursues {
            Some(if a {
                ARetreatsUnpursued
            } else {
                BRetreatsUnpursued
            })
        } else if !intercepted {
            Some(if a { AEscapes } else { BEscapes })
        } else {
            None
        }
    }

    /// One whole engagement: the Monte Carlo kernel ([`EngagementKernel::engage`], compiled
    /// for this engagement; compile once with [`NavalCombat::kernel`] to run many).
    pub fn engage(&self, engagement: &Engagement, dice: &mut DiceStream) -> EngagementOutcome {
        self.kernel(engagement).engage(dice)
    }

    /// The engagement compiled for the kernel: for every (larger fleet, odds column) and
    /// every (battle face, pursuit face), the losses and how the round ends.
    pub fn kernel(&self, engagement: &Engagement) -> EngagementKernel {
        let columns = self.thresholds.len() + 1;
        let mut rounds = Vec::with_capacity(2 * columns * 36);
        let fleets = [&engagement.a, &engagement.b];
        for larger in 0..2 {
            // Any strengths with this larger side: only the DRM and the column matter here.
            let smaller = 1 - larger;
            let drm = (fleets[larger].morale as i32 - fleets[smaller].morale as i32)
                + (fleets[larger].leader - fleets[smaller].leader)
                + (fleets[larger].drm - fleets[smaller].drm);
            for column in 0..columns {
                for &outcome in self.table.faces(column, drm) {
                    let e = self.effects[usize::from(outcome)];
                    let affected = if e.smaller_affected { smaller } else { larger };
                    for pursuit in 0..6u32 {
                        rounds.push(RoundEffect::new(engagement, affected, e, pursuit));
                    }
                }
            }
        }
        let mut kernel = EngagementKernel {
            rounds,
            first_row: 0,
            row_of: Arc::clone(&self.row_of),
            thresholds: self.thresholds.clone(),
            intercepted: std::array::from_fn(|faces| {
                Self::intercepts(engagement, faces as u32 % 6)
            }),
            round_limit: engagement.round_limit,
            nsp: [engagement.a.nsp, engagement.b.nsp],
        };
        kernel.first_row = kernel.row_for(kernel.nsp);
        kernel
    }

    /// One whole engagement round by round through the rules' own step ([`Self::step`],
    /// [`Self::intercepts`], [`Self::end`]), the battle die and then the pursuit die from
    /// one word: the reference the kernel is tested against, engagement by engagement.
    #[cfg(test)]
    fn engage_by_rounds(
        &self,
        engagement: &Engagement,
        dice: &mut DiceStream,
    ) -> EngagementOutcome {
        let start = NavalState {
            nsp: [engagement.a.nsp, engagement.b.nsp],
            captured: [0, 0],
        };
        let mut state = start;
        let mut round = 0;
        loop {
            round += 1;
            let mut word = dice.word();
            let battle = word.take(6);
            let pursuit = word.take(6);
            let step = self.step(engagement, &state, battle);
            let intercepted = Self::intercepts(engagement, pursuit);
            state = step.after;
            if let Some(result) = self.end(engagement, &step, intercepted, round) {
                return EngagementOutcome {
                    result,
                    rounds: round,
                    nsp_lost: [start.nsp[0] - state.nsp[0], start.nsp[1] - state.nsp[1]],
                    captured: state.captured,
                };
            }
        }
    }

    /// The exact distribution of an engagement: every battle and pursuit face, round by
    /// round (probabilities in f64).
    pub fn distribution(&self, engagement: &Engagement) -> EngagementDistribution {
        use std::collections::BTreeMap;
        let start = NavalState {
            nsp: [engagement.a.nsp, engagement.b.nsp],
            captured: [0, 0],
        };
        let mut d = EngagementDistribution::new(engagement);
        let mut live: BTreeMap<NavalState, f64> = BTreeMap::from([(start, 1.0)]);
        for round in 1..=engagement.round_limit {
            let mut next: BTreeMap<NavalState, f64> = BTreeMap::new();
            for (state, p) in live {
                for battle in 0..6 {
                    let step = self.step(engagement, &state, battle);
                    for pursuit in 0..6 {
                        let q = p / 36.0;
                        let intercepted = Self::intercepts(engagement, pursuit);
                        match self.end(engagement, &step, intercepted, round) {
                            Some(result) => d.add(result, round, &start, &step.after, q),
                            None => *next.entry(step.after).or_insert(0.0) += q,
                        }
                    }
                }
            }
            live = next;
        }
        d
    }
}

/// What one round does for one (larger fleet, odds column, battle face, pursuit face):
/// NSP lost per side (sunk or captured, before the cap at what the fleet has), whether
/// they are captured, and how the round ends if the fleet that breaks off survives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(8))]
struct RoundEffect {
    lost: [u8; 2],
    /// `0xff` for the side whose losses are captured, else 0 (a mask on its losses).
    captured: [u8; 2],
    /// The result when a fleet is left with no NSP: the affected one is destroyed.
    destroyed: u8,
    /// The result otherwise: retreats unpursued, escapes, or [`CONTINUES`].
    otherwise: u8,
}

/// A round code meaning "no result: fight another round (if under the limit)".
const CONTINUES: u8 = EngagementResult::COUNT as u8;

impl RoundEffect {
    /// The round when `affected` breaks off with `effect`, the pursuit die showing `pursuit`.
    /// The same rules as [`NavalCombat::end`] ([`NavalCombat::breaks_off`]).
    fn new(engagement: &Engagement, affected: usize, effect: Effect, pursuit: u32) -> Self {
        use EngagementResult::*;
        let a = affected == 0;
        let mut lost = [0u8; 2];
        let mut captured = [0u8; 2];
        // A code sinks or captures, never both, at most two NSP.
        lost[affected] = (effect.sunk + effect.captured) as u8;
        captured[affected] = if effect.captured > 0 { 0xff } else { 0 };
        let intercepted = NavalCombat::intercepts(engagement, pursuit);
        Self {
            lost,
            captured,
            destroyed: if a { ADestroyed } else { BDestroyed } as u8,
            otherwise: NavalCombat::breaks_off(engagement, affected, intercepted)
                .map_or(CONTINUES, |end| end as u8),
        }
    }
}

/// PERF: an engagement compiled for the Monte Carlo kernel. `engage` used to rebuild the
/// DRM, find the table row and decode the cell's code into an effect every round (~18
/// `next_u64` a round for one word of dice); the DRM, rows and effects were then resolved
/// once per engagement (~13), and now the pursuit and the odds column are folded in too:
/// a round is one multiply-high for both dice (`take(36)` is exactly `6 · battle +
/// pursuit` of two `take(6)`, the same dice), one `RoundEffect` lookup at the row of the
/// fleets' strengths (a table of every strength pair they can reach, instead of the
/// column's ratio tests on every round), the capped losses without a branch, and an exit
/// on the pursuit die alone (a chain of unpredictable branches before: destroyed,
/// pursued, intercepted).
#[derive(Clone, Debug)]
pub struct EngagementKernel {
    /// `rounds[((larger * columns + column) * 6 + battle face) * 6 + pursuit face]`.
    rounds: Vec<RoundEffect>,
    /// [`NavalCombat`]'s `row_of`: where a round's effects start in `rounds`.
    row_of: Arc<[u32]>,
    /// The row of the first round (the fleets' starting strengths), so that the first
    /// round's lookup waits on no other load.
    first_row: usize,
    /// [`NavalCombat`]'s odds-column ratios, for strengths beyond `row_of` (an engagement
    /// that was never validated).
    thresholds: Vec<(u64, u64)>,
    /// `intercepted[6 · battle face + pursuit face]`: the pursuit intercepts.
    intercepted: [bool; 36],
    round_limit: u32,
    nsp: [u32; 2],
}

impl EngagementKernel {
    /// One whole engagement. One word per round gives the battle die and the pursuit die.
    ///
    /// PERF: `inline(always)`: with a second caller in a crate (the lanes' lane-by-lane
    /// form, or a bench group that times it counted and not counted), LLVM stopped inlining
    /// it into the caller's loop, and the one-at-a-time bench line went from 8.3–8.9 to 11.3
    /// `next_u64` an engagement with no change to this code.
    #[inline(always)]
    pub fn engage(&self, dice: &mut DiceStream) -> EngagementOutcome {
        let mut nsp = self.nsp;
        let mut captured = [0u32; 2];
        let mut round = 1;
        let mut row = self.first_row;
        loop {
            let faces = dice.word().take(36) as usize;
            let intercepted = self.intercepted[faces];
            let effect = self.rounds[row + faces];
            for side in 0..2 {
                let lost = u32::from(effect.lost[side]).min(nsp[side]);
                nsp[side] -= lost;
                captured[side] += lost & u32::from(effect.captured[side]);
            }
            // Two exits: the first on the dice alone (not intercepted), which resolves as
            // soon as the word is drawn, however it is mispredicted; the second (a fleet
            // gone, no pursuit, the limit) rarely taken.
            if !intercepted {
                return self.outcome(nsp, captured, round, &effect);
            }
            if nsp[0] == 0 || nsp[1] == 0 || effect.otherwise != CONTINUES {
                return self.outcome(nsp, captured, round, &effect);
            }
            if round >= self.round_limit {
                return self.outcome(nsp, captured, round, &effect);
            }
            round += 1;
            row = self.row_for(nsp);
        }
    }

    /// Where the effects of a round between fleets of these strengths start in `rounds`.
    #[inline(always)]
    fn row_for(&self, nsp: [u32; 2]) -> usize {
        if nsp[0] <= MAX_NSP && nsp[1] <= MAX_NSP {
            self.row_of[nsp[0] as usize * ROW_STRIDE + nsp[1] as usize] as usize
        } else {
            self.row_beyond_table(nsp)
        }
    }

    /// [`Self::row_for`] for strengths above [`MAX_NSP`], by the odds column's ratios.
    #[cold]
    #[inline(never)]
    fn row_beyond_table(&self, nsp: [u32; 2]) -> usize {
        let larger = usize::from(nsp[1] > nsp[0]);
        let column = odds_column(&self.thresholds, nsp[larger], nsp[1 - larger]);
        (larger * (self.thresholds.len() + 1) + column) * 36
    }

    /// The outcome of an engagement that ended in round `round` with `effect`.
    #[inline(always)]
    fn outcome(
        &self,
        nsp: [u32; 2],
        captured: [u32; 2],
        round: u32,
        effect: &RoundEffect,
    ) -> EngagementOutcome {
        let code = if nsp[0] == 0 || nsp[1] == 0 {
            effect.destroyed
        } else {
            effect.otherwise
        };
        let result = EngagementResult::ALL
            .get(usize::from(code))
            .copied()
            .unwrap_or(EngagementResult::RoundLimit);
        EngagementOutcome {
            result,
            rounds: round,
            nsp_lost: [self.nsp[0] - nsp[0], self.nsp[1] - nsp[1]],
            captured,
        }
    }
}

/// Probabilities of an engagement's outcome: the result, its length, NSP lost per side.
#[derive(Clone, Debug, PartialEq)]
pub struct EngagementDistribution {
    pub result: [f64; EngagementResult::COUNT],
    pub rounds: Vec<f64>,
    pub nsp_lost: [Vec<f64>; 2],
}

impl EngagementDistribution {
    fn new(engagement: &Engagement) -> Self {
        Self {
            result: [0.0; EngagementResult::COUNT],
            rounds: vec![0.0; engagement.round_limit as usize + 1],
            nsp_lost: [
                vec![0.0; engagement.a.nsp as usize + 1],
                vec![0.0; engagement.b.nsp as usize + 1],
            ],
        }
    }

    fn add(
        &mut self,
        result: EngagementResult,
        round: u32,
        start: &NavalState,
        end: &NavalState,
        p: f64,
    ) {
        self.result[result as usize] += p;
        self.rounds[round as usize] += p;
        for side in 0..2 {
            self.nsp_lost[side][(start.nsp[side] - end.nsp[side]) as usize] += p;
        }
    }
}

/// Counts of simulated engagements.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngagementHistogram {
    pub result: [u64; EngagementResult::COUNT],
    pub rounds: Vec<u64>,
    pub nsp_lost: [Vec<u64>; 2],
}

impl EngagementHistogram {
    pub fn new(engagement: &Engagement) -> Self {
        Self {
            result: [0; EngagementResult::COUNT],
            rounds: vec![0; engagement.round_limit as usize + 1],
            nsp_lost: [
                vec![0; engagement.a.nsp as usize + 1],
                vec![0; engagement.b.nsp as usize + 1],
            ],
        }
    }

    pub fn trials(&self) -> u64 {
        self.result.iter().sum()
    }

    /// Counts one engagement.
    #[inline]
    pub fn record(&mut self, o: &EngagementOutcome) {
        self.result[o.result as usize] += 1;
        self.rounds[o.rounds as usize] += 1;
        self.nsp_lost[0][o.nsp_lost[0] as usize] += 1;
        self.nsp_lost[1][o.nsp_lost[1] as usize] += 1;
    }
}

impl crate::sim::Histogram for EngagementHistogram {
    fn merge(&mut self, other: Self) {
        let add = |m: &mut [u64], t: &[u64]| m.iter_mut().zip(t).for_each(|(a, b)| *a += b);
        add(&mut self.result, &other.result);
        add(&mut self.rounds, &other.rounds);
        add(&mut self.nsp_lost[0], &other.nsp_lost[0]);
        add(&mut self.nsp_lost[1], &other.nsp_lost[1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two fleets at sea (not coastal), both pursuing.
    pub(super) fn at_sea(a: Fleet, b: Fleet, round_limit: u32) -> Engagement {
        Engagement {
            a,
            b,
            coastal: false,
            round_limit,
        }
    }

    pub(super) fn fleet(nsp: u32, morale: u32) -> Fleet {
        Fleet {
            name: String::new(),
            nsp,
            morale,
            leader: 0,
            drm: 0,
            pursues: true,
        }
    }

    #[test]
    fn codes_mean_what_they_print() {
        assert_eq!(
            effect("2LS"),
            Some(Effect {
                smaller_affected: false,
                sunk: 2,
                captured: 0
            })
        );
        assert_eq!(
            effect("SC"),
            Some(Effect {
                smaller_affected: true,
                sunk: 0,
                captured: 1
            })
        );
        assert_eq!(
            effect("LR"),
            Some(Effect {
                smaller_affected: false,
                sunk: 0,
                captured: 0
            })
        );
        assert_eq!(effect("XR"), None);
    }

    /// One round by hand: A 2 NSP vs B 2 NSP, morale 2 each → 1-1, DRM 0, A is L (tie).
    /// Die 1 LS: A loses 1 and breaks off; 2–3 LR: A breaks off; 4–5 SR: B breaks off;
    /// 6 SS: B loses 1. With a round limit of 1, pursuit I (1/3) ends at the limit.
    #[test]
    fn one_round_by_hand() {
        let naval = NavalCombat::new(D6Table::naval()).unwrap();
        let engagement = at_sea(fleet(2, 2), fleet(2, 2), 1);
        let d = naval.distribution(&engagement);
        let p = |r: EngagementResult| d.result[r as usize];
        // A breaks off on dice 1–3 (1/2) and escapes unless intercepted (2/3): 1/3.
        assert!((p(EngagementResult::AEscapes) - 1.0 / 3.0).abs() < 1e-12);
        assert!((p(EngagementResult::BEscapes) - 1.0 / 3.0).abs() < 1e-12);
        assert!((p(EngagementResult::RoundLimit) - 1.0 / 3.0).abs() < 1e-12);
        // A loses an NSP only on die 1.
        assert!((d.nsp_lost[0][1] - 1.0 / 6.0).abs() < 1e-12);
        let unpursued = Engagement {
            b: Fleet {
                pursues: false,
                ..fleet(2, 2)
            },
            ..engagement
        };
        let d = naval.distribution(&unpursued);
        assert!((d.result[EngagementResult::ARetreatsUnpursued as usize] - 0.5).abs() < 1e-12);
    }

    /// The kernel against the rules' own round step, engagement by engagement on the same
    /// dice, over [`engagement_cases`].
    #[test]
    fn kernel_equals_the_round_step_engagement_by_engagement() {
        let naval = NavalCombat::new(D6Table::naval()).unwrap();
        let cases = engagement_cases();
        let mut results = [0u64; EngagementResult::COUNT];
        for (case, engagement) in cases.iter().enumerate() {
            let kernel = naval.kernel(engagement);
            let mut fast = DiceStream::for_block(60 + case as u64, 0);
            let mut reference = fast.clone();
            for n in 0..5_000 {
                let mine = kernel.engage(&mut fast);
                let theirs = naval.engage_by_rounds(engagement, &mut reference);
                assert_eq!(mine, theirs, "case {case}, engagement {n}");
                assert_eq!(fast, reference, "case {case}, engagement {n}: same dice");
                results[mine.result as usize] += 1;
            }
        }
        // The check is not vacuous: every kind of result happens.
        assert!(results.iter().all(|&r| r > 0), "{results:?}");
    }

    /// Engagements for the kernels' tests against the round step: fleets of every size
    /// relation, DRMs, coastal pursuit, fleets that do not pursue, captures down to the
    /// last NSP, and short and long round limits.
    pub(super) fn engagement_cases() -> Vec<Engagement> {
        let mut cases = Vec::new();
        // 150 v 120: beyond the shared strength table (never validated), same rules.
        for (a, b) in [(6, 4), (1, 1), (2, 5), (12, 7), (3, 3), (40, 9), (150, 120)] {
            for (coastal, pursues, drm, limit) in [
                (false, [true, true], 0, 20),
                (true, [true, false], 2, 3),
                (false, [false, true], -3, 1),
                (true, [true, true], -6, 100),
            ] {
                cases.push(Engagement {
                    a: Fleet {
                        drm,
                        pursues: pursues[0],
                        ..fleet(a, 2)
                    },
                    b: Fleet {
                        leader: 2,
                        pursues: pursues[1],
                        ..fleet(b, 1)
                    },
                    coastal,
                    round_limit: limit,
                });
            }
        }
        cases
    }

    #[test]
    fn a_lone_ship_sunk_is_destroyed() {
        let naval = NavalCombat::new(D6Table::naval()).unwrap();
        // A 1 NSP vs B 2 NSP: B is L at 2-1. A's DRM −6 is +6 to L's roll, so the roll is
        // 7 (SC) or 8 (2SC): A's one NSP is captured every time.
        let a = Fleet {
            drm: -6,
            ..fleet(1, 2)
        };
        let engagement = at_sea(a, fleet(2, 2), 5);
        let d = naval.distribution(&engagement);
        assert!((d.result[EngagementResult::ADestroyed as usize] - 1.0).abs() < 1e-12);
        let mut dice = DiceStream::for_block(3, 0);
        let o = naval.engage(&engagement, &mut dice);
        assert_eq!(o.result, EngagementResult::ADestroyed);
        assert_eq!(o.captured, [1, 0]);
    }
}
