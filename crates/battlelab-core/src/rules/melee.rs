//! Miniatures melee (seed 004, RULES.md part D): attack rolls by Skill, damage saves by
//! Power against Defense, supporting attacks, combat score with flank and rear bonuses,
//! break tests, repeated combat phases.
//!
//! Why this module exists: it is the one place the melee rules live. An [`Engagement`] is
//! plain data (one unit, side A, engaged by up to four units of side B from front, flanks
//! and rear); [`MeleeCombat::new`] validates it once, and after that three things read the
//! same compiled rules and the same geometry ([`Formation`], [`MeleeCombat::attack_groups`]):
//! - the Monte Carlo kernels ([`MeleeCombat::fight_phase`] for one phase,
//!   [`MeleeCombat::engage`] for a whole engagement), which cannot fail;
//! - [`MeleeCombat::phase_odds`], the exact distributions of one phase as reduced
//!   fractions (binomial counts over `36^dice`, times the break dice);
//! - [`MeleeCombat::engagement_odds`], the whole engagement by exact enumeration of the
//!   Markov chain over (wounds taken, units present), in `f64`, where the state space is
//!   small enough.
//!
//! The readings of the ambiguous geometry are in `docs/melee-readings.md`.

use std::collections::BTreeMap;

use num_bigint::BigUint;
use num_traits::{One, Zero};

use crate::dice::DiceStream;
use crate::exact::{BigFraction, Fraction};
use crate::rules::crt::RulesError;
use crate::sim::{run_blocks, Histogram, Interrupted, RunControl};

/// Every stat of a profile except models is 1–10.
pub const STAT_MAX: u32 = 10;
/// The largest unit, in models.
pub const MAX_MODELS: u32 = 500;
/// Side B has at most this many units (front, two flanks, rear).
pub const MAX_B_UNITS: usize = 4;
/// The longest engagement, in combat phases.
pub const MAX_ROUND_LIMIT: u32 = 50;
/// Most attack dice (both sides, first phase) for [`MeleeCombat::phase_odds`]: its big
/// integers grow with the dice and its break-test sums with their cube; at this size it
/// takes about a second.
pub const MAX_EXACT_PHASE_DICE: u32 = 600;
/// Results of a whole engagement, in [`EngagementEnd::index`] order.
pub const END_COUNT: usize = 6;

/// How a unit's rank bonus is counted (RULES.md D: option, default ranks behind the front).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RankBonusRule {
    /// Every rank behind the front rank, even a partial one.
    Ranks,
    /// Only complete ranks behind the front rank.
    FullRanks,
    /// No rank bonus.
    None,
}

impl RankBonusRule {
    pub const NAMES: &'static str = "ranks, full-ranks, none";

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "ranks" => Some(Self::Ranks),
            "full-ranks" => Some(Self::FullRanks),
            "none" => Some(Self::None),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Ranks => "ranks",
            Self::FullRanks => "full-ranks",
            Self::None => "none",
        }
    }
}

/// Where a side-B unit engages side A's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Facing {
    Front,
    Flank,
    Rear,
}

impl Facing {
    pub const NAMES: &'static str = "front, flank, rear";

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "front" => Some(Self::Front),
            "flank" => Some(Self::Flank),
            "rear" => Some(Self::Rear),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Front => "front",
            Self::Flank => "flank",
            Self::Rear => "rear",
        }
    }
}

/// The dice of a break test (RULES.md D: option, default 2d6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BreakDice {
    OneD6,
    TwoD6,
    ThreeD6,
}

impl BreakDice {
    pub const NAMES: &'static str = "1d6, 2d6, 3d6";

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "1d6" => Some(Self::OneD6),
            "2d6" => Some(Self::TwoD6),
            "3d6" => Some(Self::ThreeD6),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::OneD6 => "1d6",
            Self::TwoD6 => "2d6",
            Self::ThreeD6 => "3d6",
        }
    }

    pub fn dice(self) -> u32 {
        match self {
            Self::OneD6 => 1,
            Self::TwoD6 => 2,
            Self::ThreeD6 => 3,
        }
    }

    /// `ways[k]`: how many of the `6^dice` rolls sum to exactly `k`.
    fn ways(self) -> Vec<u64> {
        let mut ways = vec![1u64];
        for _ in 0..self.dice() {
            let mut next = vec![0u64; ways.len() + 6];
            for (sum, &count) in ways.iter().enumerate() {
                for face in 1..=6 {
                    next[sum + face] += count;
                }
            }
            ways = next;
        }
        ways
    }
}

/// A unit's profile, as the designer writes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UnitProfile {
    pub models: u32,
    /// Models wide.
    pub frontage: u32,
    pub attacks: u32,
    pub skill: u32,
    pub power: u32,
    pub defense: u32,
    pub discipline: u32,
    /// Wounds per model.
    pub wounds: u32,
    pub rank_bonus: RankBonusRule,
    pub rank_bonus_cap: u32,
}

impl Default for UnitProfile {
    /// A default unit: 20 models five wide with 1 Attack (the frontage and Attacks of the
    /// seed's example), Skill, Power and Defense 3, Discipline 7. The other numbers are
    /// battlelab's choice, not the seed's.
    fn default() -> Self {
        Self {
            models: 20,
            frontage: 5,
            attacks: 1,
            skill: 3,
            power: 3,
            defense: 3,
            discipline: 7,
            wounds: 1,
            rank_bonus: RankBonusRule::Ranks,
            rank_bonus_cap: 3,
        }
    }
}

impl UnitProfile {
    /// Checks every stat; `field` prefixes the field names in errors (e.g. `b.flank`).
    pub fn validate(&self, field: &str) -> Result<(), RulesError> {
        let at = |name: &str| format!("{field}.{name}");
        if self.models == 0 || self.models > MAX_MODELS {
            return Err(RulesError::new(
                at("models"),
                format!(
                    "{} models: a unit has 1 to {MAX_MODELS} models",
                    self.models
                ),
            ));
        }
        if self.frontage == 0 || self.frontage > self.models {
            return Err(RulesError::new(
                at("frontage"),
                format!(
                    "frontage {} with {} models: the frontage (models wide) must be 1 to the number of models",
                    self.frontage, self.models
                ),
            ));
        }
        for (name, value) in [
            ("attacks", self.attacks),
            ("skill", self.skill),
            ("power", self.power),
            ("defense", self.defense),
            ("discipline", self.discipline),
            ("wounds", self.wounds),
        ] {
            if !(1..=STAT_MAX).contains(&value) {
                return Err(RulesError::new(
                    at(name),
                    format!("{name} {value}: stats are 1 to {STAT_MAX}"),
                ));
            }
        }
        if self.rank_bonus_cap > STAT_MAX {
            return Err(RulesError::new(
                at("rank_bonus_cap"),
                format!(
                    "rank bonus cap {}: allowed 0 to {STAT_MAX}",
                    self.rank_bonus_cap
                ),
            ));
        }
        Ok(())
    }

    /// The unit's whole wound pool.
    pub fn total_wounds(&self) -> u32 {
        self.models * self.wounds
    }

    /// The unit's formation after taking `taken` wounds.
    pub fn formation(&self, taken: u32) -> Formation {
        let alive = self.models - (taken / self.wounds).min(self.models);
        let frontage = self.frontage;
        let front = alive.min(frontage);
        let second = alive.saturating_sub(frontage).min(frontage);
        let ranks = alive.div_ceil(frontage);
        let behind = match self.rank_bonus {
            RankBonusRule::Ranks => ranks.saturating_sub(1),
            RankBonusRule::FullRanks => (alive / frontage).saturating_sub(1),
            RankBonusRule::None => 0,
        };
        Formation {
            alive,
            front,
            second,
            ranks,
            last_rank: alive - ranks.saturating_sub(1) * frontage,
            rank_bonus: behind.min(self.rank_bonus_cap),
            wounds_left: self.total_wounds().saturating_sub(taken),
        }
    }

    /// Dice the unit rolls when it fights with its front: the front rank's Attacks and
    /// one supporting die per second-rank model.
    pub fn front_dice(&self, formation: &Formation) -> u32 {
        formation.front * self.attacks + formation.second
    }

    /// How many of the unit's models can attack a unit on its flank: the end model of
    /// every rank not already fighting to the front (ranks 1 and 2 when the front is
    /// engaged). `second_flank`: the other end, which a one-model rank does not have.
    pub fn flank_attackers(
        &self,
        formation: &Formation,
        front_engaged: bool,
        second_flank: bool,
    ) -> u32 {
        let busy = if front_engaged { 2 } else { 0 };
        let eligible = formation.ranks.saturating_sub(busy);
        if !second_flank {
            eligible
        } else if self.frontage == 1 {
            0
        } else {
            eligible - u32::from(eligible > 0 && formation.last_rank == 1)
        }
    }
}

/// A unit's shape at the start of a phase (see `docs/melee-readings.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Formation {
    pub alive: u32,
    pub front: u32,
    pub second: u32,
    pub ranks: u32,
    /// Models in the last rank.
    pub last_rank: u32,
    pub rank_bonus: u32,
    pub wounds_left: u32,
}

/// One engagement: side A's unit, side B's units with their facings, and the options.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Engagement {
    pub a: UnitProfile,
    pub b: Vec<(Facing, UnitProfile)>,
    pub break_dice: BreakDice,
    pub round_limit: u32,
}

impl Engagement {
    /// A fresh one-against-one engagement, front to front, with the default options.
    pub fn one_on_one(a: UnitProfile, b: UnitProfile) -> Self {
        Self {
            a,
            b: vec![(Facing::Front, b)],
            break_dice: BreakDice::TwoD6,
            round_limit: 6,
        }
    }
}

/// The d6 roll needed to hit: 3+ against a lower Skill, else 4+.
pub fn hit_target(attacker_skill: u32, target_skill: u32) -> u32 {
    if attacker_skill > target_skill {
        3
    } else {
        4
    }
}

/// The d6 roll the target needs to save: by the attacker's Power against its Defense.
pub fn save_target(attacker_power: u32, target_defense: u32) -> u32 {
    let difference = attacker_power as i64 - target_defense as i64;
    match difference {
        d if d > 2 => 6,
        d if d > 0 => 5,
        0 => 4,
        d if d >= -2 => 3,
        _ => 2,
    }
}

/// One attacker's dice against one target, with the per-die odds out of 36 (the hit die
/// times the save die).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttackGroup {
    /// Unit index: 0 is side A's unit, 1… side B's in listed order.
    pub attacker: usize,
    pub target: usize,
    pub dice: u32,
    /// Of the 36 (hit die, save die) pairs, how many hit.
    pub hit_weight: u32,
    /// … and how many hit and fail the save (a wound).
    pub wound_weight: u32,
}

/// The odds between two units, in both directions, precomputed.
#[derive(Clone, Copy, Debug)]
struct PairOdds {
    hit_weight: u32,
    wound_weight: u32,
}

fn pair_odds(attacker: &UnitProfile, target: &UnitProfile) -> PairOdds {
    let hits = 7 - hit_target(attacker.skill, target.skill);
    let fails = save_target(attacker.power, target.defense) - 1;
    PairOdds {
        hit_weight: hits * 6,
        wound_weight: hits * fails,
    }
}

/// Units present and wounds taken, at the start of a phase. Index 0 is side A's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EngagementState {
    pub taken: [u32; 1 + MAX_B_UNITS],
    /// Bit `i` set: unit `i` is still in the engagement.
    pub present: u8,
    /// Some side-B unit has fled (decides "B flees" against "B destroyed").
    pub b_fled: bool,
}

/// What one phase did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseResult {
    /// Hits and wounds (failed saves, before the cap) caused by side A and by side B.
    pub hits: [u32; 2],
    pub wounds: [u32; 2],
    /// Combat scores of A and B.
    pub score: [u32; 2],
    /// Bit `i`: unit `i` failed its break test this phase.
    pub fled: u8,
    /// Bit `i`: unit `i` lost its last model this phase.
    pub destroyed: u8,
}

/// How an engagement ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngagementEnd {
    AFlees,
    ADestroyed,
    BFlees,
    BDestroyed,
    BothOut,
    RoundLimit,
}

impl EngagementEnd {
    pub const ALL: [EngagementEnd; END_COUNT] = [
        Self::AFlees,
        Self::ADestroyed,
        Self::BFlees,
        Self::BDestroyed,
        Self::BothOut,
        Self::RoundLimit,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::AFlees => "A flees",
            Self::ADestroyed => "A destroyed",
            Self::BFlees => "B flees",
            Self::BDestroyed => "B destroyed",
            Self::BothOut => "both out",
            Self::RoundLimit => "round limit",
        }
    }

    /// Which side won: `Some(0)` A, `Some(1)` B, `None` neither.
    pub fn winner(self) -> Option<usize> {
        match self {
            Self::BFlees | Self::BDestroyed => Some(0),
            Self::AFlees | Self::ADestroyed => Some(1),
            Self::BothOut | Self::RoundLimit => None,
        }
    }
}

/// How one engagement ended, and what it cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngagementOutcome {
    pub end: EngagementEnd,
    /// The phase it ended in, 1…round limit.
    pub phases: u32,
    /// Models lost by side A and by side B (all its units).
    pub models_lost: [u32; 2],
}

/// A validated engagement, ready for the kernels and the exact enumerations.
#[derive(Clone, Debug)]
pub struct MeleeCombat {
    engagement: Engagement,
    /// Units: 0 = A, 1.. = B.
    units: Vec<UnitProfile>,
    facings: Vec<Facing>,
    /// `odds_on_a[i]`: B unit `i` (1-based index) attacking A; `odds_on_b[i]`: A attacking it.
    odds_on_a: [PairOdds; 1 + MAX_B_UNITS],
    odds_on_b: [PairOdds; 1 + MAX_B_UNITS],
    /// `break_at_most[k]`: rolls of the break dice that sum to at most `k` (k ≥ 0).
    break_at_most: Vec<u64>,
    break_faces: u64,
    /// `formations[unit][taken]`: the unit's formation after `taken` wounds (see
    /// [`MeleeCombat::formation_of`]).
    formations: Vec<Vec<Formation>>,
    /// `group_tables[slot][dice]`: (hits, wounds) of a whole attack group in one draw;
    /// slot `i` (1–4) is B unit `i` attacking A, slot `MAX_B_UNITS + i` A attacking B unit
    /// `i`. Groups of more dice than a slot's table roll die by die.
    group_tables: Vec<Vec<GroupTable>>,
}

/// Attack groups of at most this many dice are sampled whole from a [`GroupTable`]
/// (`(n + 1)(n + 2) / 2` outcomes; `36^n` fits in a `u128` for the exact counts).
pub const MAX_TABLE_DICE: u32 = 24;

/// PERF: the joint law of (hits, wounds) of `n` identical attack dice, sampled by exact
/// inverse CDF from one 64-bit uniform. Rolling the group cost one chained multiply and
/// two compares per die (10 dice a side a phase in the bench: the largest share of a
/// phase, ~40 cycles of latency per group); here it is one word, a guide-table jump on its
/// top byte and a scan of one or two thresholds. Each die is (hit and wound) with weight
/// `wound_weight`, (hit, saved) with `hit_weight − wound_weight`, a miss with
/// `36 − hit_weight`, so P(h, w) = n! / (w! (h − w)! (n − h)!) · W^w (H − W)^(h − w)
/// (36 − H)^(n − h) / 36^n, counted exactly in integers; the thresholds are
/// ⌊cumulative · 2^64 / 36^n⌋, so each outcome's probability is exact to 2^-64 (the dice
/// it replaces were exact to 36^6 / 2^64). Construction checks that the counts sum to
/// 36^n and the thresholds never decrease.
#[derive(Clone, Debug)]
pub struct GroupTable {
    /// Upper threshold of each outcome (the last is never compared).
    upper: Vec<u64>,
    /// (hits, wounds) of each outcome.
    outcome: Vec<(u32, u32)>,
    /// `guide[b]`: the first outcome whose upper threshold exceeds `b · 2^56`.
    guide: [u16; 256],
}

impl GroupTable {
    /// The table for `n` dice with these weights (of 36).
    pub fn new(n: u32, hit_weight: u32, wound_weight: u32) -> Self {
        assert!(n <= MAX_TABLE_DICE && wound_weight <= hit_weight && hit_weight <= 36);
        let binomial = |n: u32, k: u32| -> u128 {
            (0..k).fold(1u128, |acc, i| acc * u128::from(n - i) / u128::from(i + 1))
        };
        let (w, s, m) = (
            u128::from(wound_weight),
            u128::from(hit_weight - wound_weight),
            u128::from(36 - hit_weight),
        );
        let total = 36u128.pow(n);
        let mut upper = Vec::new();
        let mut outcome = Vec::new();
        let mut counts = Vec::new();
        let mut cumulative = 0u128;
        for hits in 0..=n {
            for wounds in 0..=hits {
                let count = binomial(n, hits)
                    * binomial(hits, wounds)
                    * w.pow(wounds)
                    * s.pow(hits - wounds)
                    * m.pow(n - hits);
                cumulative += count;
                upper.push(scaled(cumulative, total));
                outcome.push((hits, wounds));
                counts.push(count);
            }
        }
        assert_eq!(cumulative, total, "the outcomes' counts sum to 36^n");
        // Impossible outcomes at the end are dropped, so the last one left is possible
        // and the scan never passes it.
        while counts.last() == Some(&0) {
            counts.pop();
            upper.pop();
            outcome.pop();
        }
        assert!(upper.windows(2).all(|p| p[0] <= p[1]));
        let mut guide = [0u16; 256];
        let mut j = 0usize;
        for (b, g) in guide.iter_mut().enumerate() {
            let floor = (b as u64) << 56;
            while j + 1 < upper.len() && upper[j] <= floor {
                j += 1;
            }
            *g = j as u16;
        }
        Self {
            upper,
            outcome,
            guide,
        }
    }

    /// (hits, wounds) for a uniform 64-bit draw: the outcome whose interval holds it.
    #[inline(always)]
    pub fn sample(&self, u: u64) -> (u32, u32) {
        let last = self.upper.len() - 1;
        let mut j = usize::from(self.guide[(u >> 56) as usize]);
        while j < last && u >= self.upper[j] {
            j += 1;
        }
        self.outcome[j]
    }

    /// Each outcome's share of 2^64 (the last takes the rest), for the tests.
    pub fn shares(&self) -> Vec<((u32, u32), u128)> {
        let mut below = 0u128;
        let last = self.upper.len() - 1;
        self.outcome
            .iter()
            .enumerate()
            .map(|(j, &o)| {
                let up = if j == last {
                    1u128 << 64
                } else {
                    u128::from(self.upper[j])
                };
                let share = up - below;
                below = up;
                (o, share)
            })
            .collect()
    }
}

/// ⌊count · 2^64 / total⌋ for count ≤ total < 2^126, by binary long division (64 bits;
/// `count = total` gives 2^64, which saturates to `u64::MAX`, the top of the range).
fn scaled(count: u128, total: u128) -> u64 {
    if count >= total {
        return u64::MAX;
    }
    let mut rest = count;
    let mut q = 0u64;
    for _ in 0..64 {
        rest <<= 1;
        q <<= 1;
        if rest >= total {
            rest -= total;
            q |= 1;
        }
    }
    q
}

impl MeleeCombat {
    /// PERF: a unit's formation after `taken` wounds, from a table built once. Computing
    /// it took three or four integer divisions (models lost, ranks, full ranks), and the
    /// kernel needs it for every unit in every phase (geometry, break tests, losses): with
    /// the dice, the largest share of a phase. Same values as [`UnitProfile::formation`].
    #[inline(always)]
    pub fn formation_of(&self, unit: usize, taken: u32) -> Formation {
        self.formations[unit][taken as usize]
    }

    /// Validates the engagement. Errors name the field (`a.skill`, `b.2.facing` …).
    pub fn new(engagement: Engagement) -> Result<Self, RulesError> {
        engagement.a.validate("a")?;
        if engagement.b.is_empty() {
            return Err(RulesError::new(
                "b",
                "side B has no unit: engage side A's unit with at least one unit (front, flank or rear)",
            ));
        }
        if engagement.b.len() > MAX_B_UNITS {
            return Err(RulesError::new(
                "b",
                format!(
                    "{} units on side B: at most {MAX_B_UNITS} (one front, two flanks, one rear)",
                    engagement.b.len()
                ),
            ));
        }
        for (facing, limit) in [(Facing::Front, 1), (Facing::Flank, 2), (Facing::Rear, 1)] {
            let count = engagement.b.iter().filter(|(f, _)| *f == facing).count();
            if count > limit {
                return Err(RulesError::new(
                    "b",
                    format!(
                        "{count} side-B units engage the {}: a unit has one front, two flanks and one rear, so at most {limit}",
                        facing.name()
                    ),
                ));
            }
        }
        let flanks = engagement
            .b
            .iter()
            .filter(|(f, _)| *f == Facing::Flank)
            .count();
        let mut flank = 0;
        for (facing, unit) in &engagement.b {
            let name = if engagement.b.len() == 1 {
                "b".to_string()
            } else if *facing == Facing::Flank && flanks > 1 {
                flank += 1;
                format!("b.flank.{flank}")
            } else {
                format!("b.{}", facing.name())
            };
            unit.validate(&name)?;
        }
        if !(1..=MAX_ROUND_LIMIT).contains(&engagement.round_limit) {
            return Err(RulesError::new(
                "round_limit",
                format!(
                    "round limit {}: allowed 1 to {MAX_ROUND_LIMIT} combat phases",
                    engagement.round_limit
                ),
            ));
        }
        let mut units = vec![engagement.a.clone()];
        let mut facings = vec![Facing::Front];
        let mut odds_on_a = [PairOdds {
            hit_weight: 0,
            wound_weight: 0,
        }; 1 + MAX_B_UNITS];
        let mut odds_on_b = odds_on_a;
        for (index, (facing, unit)) in engagement.b.iter().enumerate() {
            units.push(unit.clone());
            facings.push(*facing);
            odds_on_a[index + 1] = pair_odds(unit, &engagement.a);
            odds_on_b[index + 1] = pair_odds(&engagement.a, unit);
        }
        let ways = engagement.break_dice.ways();
        let mut break_at_most = Vec::with_capacity(ways.len());
        let mut running = 0;
        for count in &ways {
            running += count;
            break_at_most.push(running);
        }
        let formations: Vec<Vec<Formation>> = units
            .iter()
            .map(|u| (0..=u.total_wounds()).map(|t| u.formation(t)).collect())
            .collect();
        // The most dice each attack group can roll: at full strength (formations only
        // shrink), whatever A's front is doing.
        let group_tables = (0..=2 * MAX_B_UNITS)
            .map(|slot| {
                let (max_dice, odds) = if slot == 0 || slot > units.len() - 1 + MAX_B_UNITS {
                    (
                        0,
                        PairOdds {
                            hit_weight: 0,
                            wound_weight: 0,
                        },
                    )
                } else if slot <= MAX_B_UNITS {
                    if slot >= units.len() {
                        (0, odds_on_a[0])
                    } else {
                        let u = &units[slot];
                        (u.front_dice(&u.formation(0)), odds_on_a[slot])
                    }
                } else {
                    let i = slot - MAX_B_UNITS;
                    let a = &units[0];
                    let form = a.formation(0);
                    let flank = (0..2)
                        .flat_map(|e| (0..2).map(move |s| (e == 1, s == 1)))
                        .map(|(e, s)| a.flank_attackers(&form, e, s) * a.attacks)
                        .max()
                        .unwrap_or(0);
                    (a.front_dice(&form).max(flank), odds_on_b[i])
                };
                (0..=max_dice.min(MAX_TABLE_DICE))
                    .map(|n| GroupTable::new(n, odds.hit_weight, odds.wound_weight))
                    .collect()
            })
            .collect();
        Ok(Self {
            break_faces: running,
            formations,
            group_tables,
            engagement,
            units,
            facings,
            odds_on_a,
            odds_on_b,
            break_at_most,
        })
    }

    pub fn engagement(&self) -> &Engagement {
        &self.engagement
    }

    /// Units in index order: 0 is side A's, then side B's in listed order.
    pub fn units(&self) -> &[UnitProfile] {
        &self.units
    }

    pub fn unit_count(&self) -> usize {
        self.units.len()
    }

    /// The state at the start of the engagement: everyone present, no wounds.
    pub fn fresh_state(&self) -> EngagementState {
        EngagementState {
            taken: [0; 1 + MAX_B_UNITS],
            present: ((1u16 << self.units.len()) - 1) as u8,
            b_fled: false,
        }
    }

    /// Side-A dice against each present B unit, and each present B unit's dice against
    /// A, from the formations at the start of the phase. Returns how many groups were
    /// written into `groups` (at most `2 × MAX_B_UNITS`).
    pub fn attack_groups(
        &self,
        state: &EngagementState,
        groups: &mut [AttackGroup; 2 * MAX_B_UNITS],
    ) -> usize {
        let mut count = 0;
        let a = &self.units[0];
        let a_form = self.formation_of(0, state.taken[0]);
        let present = |i: usize| state.present & (1 << i) != 0;
        let front_engaged =
            (1..self.units.len()).any(|i| present(i) && self.facings[i] == Facing::Front);
        let mut flanks_seen = 0;
        for i in 1..self.units.len() {
            if !present(i) {
                continue;
            }
            let unit = &self.units[i];
            let form = self.formation_of(i, state.taken[i]);
            let on_a = self.odds_on_a[i];
            groups[count] = AttackGroup {
                attacker: i,
                target: 0,
                dice: unit.front_dice(&form),
                hit_weight: on_a.hit_weight,
                wound_weight: on_a.wound_weight,
            };
            count += 1;
            if present(0) {
                let a_dice = match self.facings[i] {
                    Facing::Front => a.front_dice(&a_form),
                    Facing::Flank => {
                        let second = flanks_seen > 0;
                        flanks_seen += 1;
                        a.flank_attackers(&a_form, front_engaged, second) * a.attacks
                    }
                    Facing::Rear => 0,
                };
                if a_dice > 0 {
                    let on_b = self.odds_on_b[i];
                    groups[count] = AttackGroup {
                        attacker: 0,
                        target: i,
                        dice: a_dice,
                        hit_weight: on_b.hit_weight,
                        wound_weight: on_b.wound_weight,
                    };
                    count += 1;
                }
            }
        }
        count
    }

    /// Flank and rear bonus of side B: one per present B unit on A's flank or rear.
    fn b_bonus(&self, present: u8) -> u32 {
        (1..self.units.len())
            .filter(|&i| present & (1 << i) != 0 && self.facings[i] != Facing::Front)
            .count() as u32
    }

    /// The highest roll of the break dice with which unit `unit` passes after a phase that
    /// left it with `taken_after` wounds taken and lost by `difference`: Discipline + Rank
    /// Bonus (after casualties) − difference. The kernel and the exact counts both use it.
    #[inline(always)]
    fn passes_up_to(&self, unit: usize, taken_after: u32, difference: u32) -> i64 {
        let profile = &self.units[unit];
        let bonus = self.formation_of(unit, taken_after).rank_bonus;
        i64::from(profile.discipline + bonus) - i64::from(difference)
    }

    /// Rolls the break dice.
    #[inline(always)]
    fn roll_break(&self, dice: &mut DiceStream) -> u32 {
        let mut word = dice.word();
        let mut sum = 0;
        for _ in 0..self.engagement.break_dice.dice() {
            sum += word.take(6) + 1;
        }
        sum
    }

    /// Scores and casualties of a phase from the wounds each unit suffered (before the
    /// cap), and who must take a break test.
    pub fn score_phase(
        &self,
        state: &EngagementState,
        wounds_on: &[u32; 1 + MAX_B_UNITS],
    ) -> PhaseScore {
        let mut taken_after = state.taken;
        let mut caused = [0u32; 2];
        let mut alive_after = 0u8;
        for (i, unit) in self.units.iter().enumerate() {
            if state.present & (1 << i) == 0 {
                continue;
            }
            let left = unit.total_wounds() - state.taken[i];
            let suffered = wounds_on[i].min(left);
            taken_after[i] += suffered;
            caused[usize::from(i == 0)] += suffered;
            alive_after |= u8::from(suffered < left) << i;
        }
        let score = [caused[0], caused[1] + self.b_bonus(state.present)];
        let b_mask = state.present & !1;
        let testers = if score[0] > score[1] {
            alive_after & b_mask
        } else if score[1] > score[0] {
            alive_after & 1
        } else {
            0
        };
        PhaseScore {
            score,
            taken_after,
            alive_after,
            testers,
            difference: score[0].abs_diff(score[1]),
        }
    }

    /// Of the `break_faces()` rolls of the break dice, how many make unit `unit` flee
    /// after a phase that left it with `taken_after` wounds taken and lost by
    /// `difference` (it rolls above Discipline + Rank Bonus − difference).
    pub fn failing_rolls(&self, unit: usize, taken_after: u32, difference: u32) -> u64 {
        let index = self
            .passes_up_to(unit, taken_after, difference)
            .clamp(-1, self.break_at_most.len() as i64 - 1);
        let passing = if index < 0 {
            0
        } else {
            self.break_at_most[index as usize]
        };
        self.break_faces - passing
    }

    /// How many equally likely rolls the break dice have (`6^dice`).
    pub fn break_faces(&self) -> u64 {
        self.break_faces
    }

    /// The state after the phase, once the units in `fled` have left.
    pub fn after_phase(
        &self,
        state: &EngagementState,
        score: &PhaseScore,
        fled: u8,
    ) -> EngagementState {
        EngagementState {
            taken: score.taken_after,
            present: score.alive_after & !fled,
            b_fled: state.b_fled || fled & !1 != 0,
        }
    }

    /// How the engagement ends after phase `phase` (1-based) leaves it in `state`, if it does.
    pub fn end_of(&self, state: &EngagementState, phase: u32) -> Option<EngagementEnd> {
        let a_gone = state.present & 1 == 0;
        let b_gone = state.present & !1 == 0;
        match (a_gone, b_gone) {
            (true, true) => Some(EngagementEnd::BothOut),
            (true, false) => Some(if state.taken[0] >= self.units[0].total_wounds() {
                EngagementEnd::ADestroyed
            } else {
                EngagementEnd::AFlees
            }),
            (false, true) => Some(if state.b_fled {
                EngagementEnd::BFlees
            } else {
                EngagementEnd::BDestroyed
            }),
            (false, false) if phase >= self.engagement.round_limit => {
                Some(EngagementEnd::RoundLimit)
            }
            (false, false) => None,
        }
    }

    /// Models lost so far by side A and by side B.
    pub fn models_lost(&self, state: &EngagementState) -> [u32; 2] {
        let mut lost = [0u32; 2];
        for (i, unit) in self.units.iter().enumerate() {
            lost[usize::from(i != 0)] += unit.models - self.formation_of(i, state.taken[i]).alive;
        }
        lost
    }

    /// One combat phase from `state`, updating it (wounds, units present). The kernel of
    /// both the one-phase and the whole-engagement Monte Carlo; it cannot fail.
    #[inline]
    pub fn fight_phase(&self, state: &mut EngagementState, dice: &mut DiceStream) -> PhaseResult {
        let mut groups = [AttackGroup::EMPTY; 2 * MAX_B_UNITS];
        let group_count = self.attack_groups(state, &mut groups);
        let mut wounds_on = [0u32; 1 + MAX_B_UNITS];
        let mut result = PhaseResult::default();
        for group in &groups[..group_count] {
            let slot = if group.attacker != 0 {
                group.attacker
            } else {
                MAX_B_UNITS + group.target
            };
            let (hits, wounds) = match self.group_tables[slot].get(group.dice as usize) {
                Some(table) => table.sample(dice.next_u64()),
                None => roll_group(group, dice),
            };
            let side = usize::from(group.attacker != 0);
            result.hits[side] += hits;
            result.wounds[side] += wounds;
            wounds_on[group.target] += wounds;
        }
        let score = self.score_phase(state, &wounds_on);
        let mut fled = 0u8;
        let mut testers = score.testers;
        while testers != 0 {
            let unit = testers.trailing_zeros() as usize;
            testers &= testers - 1;
            let roll = i64::from(self.roll_break(dice));
            let passes_up_to = self.passes_up_to(unit, score.taken_after[unit], score.difference);
            fled |= u8::from(roll > passes_up_to) << unit;
        }
        result.score = score.score;
        result.fled = fled;
        result.destroyed = state.present & !score.alive_after;
        *state = self.after_phase(state, &score, fled);
        result
    }

    /// A whole engagement: phases until one side is gone or the round limit.
    #[inline]
    pub fn engage(&self, dice: &mut DiceStream) -> EngagementOutcome {
        let mut state = self.fresh_state();
        let mut phase = 1;
        loop {
            self.fight_phase(&mut state, dice);
            if let Some(end) = self.end_of(&state, phase) {
                return EngagementOutcome {
                    end,
                    phases: phase,
                    models_lost: self.models_lost(&state),
                };
            }
            phase += 1;
        }
    }
}

/// Scores and casualties of one phase, before the break tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseScore {
    /// Combat scores of side A and side B.
    pub score: [u32; 2],
    /// Wounds taken by each unit after the phase's casualties.
    pub taken_after: [u32; 1 + MAX_B_UNITS],
    /// Bit `i`: unit `i` was present and still has models.
    pub alive_after: u8,
    /// Bit `i`: unit `i` lost the phase, has models, and must test.
    pub testers: u8,
    pub difference: u32,
}

impl AttackGroup {
    const EMPTY: AttackGroup = AttackGroup {
        attacker: 0,
        target: 0,
        dice: 0,
        hit_weight: 0,
        wound_weight: 0,
    };
}

/// Rolls `group.dice` attack dice, each one (hit die, save die) pair taken as one draw out
/// of 36. Returns (hits, wounds).
///
/// PERF: a draw `v` in `0..36` hits when `v < hit_weight` and wounds when
/// `v < wound_weight` (the wounding pairs are a subset of the hitting pairs, so the two
/// comparisons give the joint law of hit then save); comparisons are summed as integers.
/// Six draws come from one 64-bit word (`36^6 < 2^32`, bias below `2^-32` per draw).
#[inline(always)]
fn roll_group(group: &AttackGroup, dice: &mut DiceStream) -> (u32, u32) {
    let mut hits = 0;
    let mut wounds = 0;
    let mut left = group.dice;
    while left > 0 {
        let mut word = dice.word();
        let take = left.min(6);
        for _ in 0..take {
            let v = word.take(36);
            hits += u32::from(v < group.hit_weight);
            wounds += u32::from(v < group.wound_weight);
        }
        left -= take;
    }
    (hits, wounds)
}

/// Exact odds of one combat phase, as reduced fractions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseOdds {
    /// `hits[side][k]`: P(side scores exactly k hits); side 0 is A, 1 is B.
    pub hits: [Vec<BigFraction>; 2],
    /// `wounds[side][k]`: P(side causes exactly k wounds), saves failed, before the cap.
    pub wounds: [Vec<BigFraction>; 2],
    /// `score[side][k]`: P(side's combat score is k).
    pub score: [Vec<BigFraction>; 2],
    pub a_wins: BigFraction,
    pub draw: BigFraction,
    pub b_wins: BigFraction,
    /// Per unit (0 = A, then B's): P(it loses the phase and fails its break test).
    pub flees: Vec<BigFraction>,
    /// Per unit: P(it loses its last model this phase).
    pub destroyed: Vec<BigFraction>,
    /// Expected hits and wounds (before the cap) of each side.
    pub expected_hits: [BigFraction; 2],
    pub expected_wounds: [BigFraction; 2],
}

/// Integer counts of a distribution over `36^dice` (or another common denominator).
type Counts = Vec<BigUint>;

fn convolve(left: &Counts, right: &Counts) -> Counts {
    let mut out = vec![BigUint::zero(); left.len() + right.len() - 1];
    for (i, l) in left.iter().enumerate() {
        if l.is_zero() {
            continue;
        }
        for (j, r) in right.iter().enumerate() {
            if !r.is_zero() {
                out[i + j] += l * r;
            }
        }
    }
    out
}

/// Lumps every value ≥ `cap` into `cap`.
fn capped(counts: &Counts, cap: u32) -> Counts {
    let cap = cap as usize;
    if counts.len() <= cap + 1 {
        return counts.clone();
    }
    let mut out: Counts = counts[..cap].to_vec();
    out.push(counts[cap..].iter().sum());
    out
}

fn binomial_row(n: u32) -> Vec<BigUint> {
    let mut row = vec![BigUint::one()];
    for k in 0..n {
        let next = &row[k as usize] * BigUint::from(n - k) / BigUint::from(k + 1);
        row.push(next);
    }
    row
}

/// (hits, wounds) marginal counts of one attack group over `36^dice`.
fn group_counts(group: &AttackGroup) -> (Counts, Counts) {
    let n = group.dice;
    let miss = BigUint::from(36 - group.hit_weight);
    let saved = BigUint::from(group.hit_weight - group.wound_weight);
    let wound = BigUint::from(group.wound_weight);
    let hit = BigUint::from(group.hit_weight);
    let choose_n = binomial_row(n);
    // Hits ~ Binomial(n, hit/36); wounds ~ Binomial(n, wound/36): both counted over 36^n.
    let hits = (0..=n)
        .map(|k| &choose_n[k as usize] * hit.pow(k) * miss.pow(n - k))
        .collect();
    let not_wound = &miss + &saved;
    let wounds = (0..=n)
        .map(|k| &choose_n[k as usize] * wound.pow(k) * not_wound.pow(n - k))
        .collect();
    (hits, wounds)
}

fn fractions(counts: &Counts, denominator: &BigUint) -> Vec<BigFraction> {
    counts
        .iter()
        .map(|c| BigFraction::new(c.clone(), denominator.clone()))
        .collect()
}

fn expectation(counts: &Counts, denominator: &BigUint) -> BigFraction {
    let sum: BigUint = counts
        .iter()
        .enumerate()
        .map(|(k, c)| c * BigUint::from(k))
        .sum();
    BigFraction::new(sum, denominator.clone())
}

impl MeleeCombat {
    /// Whether the first phase is small enough for [`Self::phase_odds`]
    /// ([`MAX_EXACT_PHASE_DICE`] attack dice in all).
    pub fn exact_phase_fits(&self) -> bool {
        let dice = self.first_phase_dice();
        dice[0] + dice[1] <= MAX_EXACT_PHASE_DICE
    }

    /// The exact odds of one combat phase from `state` (use [`Self::fresh_state`] for the
    /// first): binomial counts over `36^dice` for every attack group, convolved per side
    /// and per target, capped at the wounds each unit has left, then every break test
    /// counted over the `6^k` rolls of the break dice.
    pub fn phase_odds(&self, state: &EngagementState) -> PhaseOdds {
        let mut groups = [AttackGroup::EMPTY; 2 * MAX_B_UNITS];
        let group_count = self.attack_groups(state, &mut groups);
        let groups = &groups[..group_count];
        let units = self.units.len();
        let one = || vec![BigUint::one()];
        let mut side_hits = [one(), one()];
        let mut side_wounds = [one(), one()];
        let mut dice = [0u32; 2];
        // Uncapped wound counts suffered by each unit, over 36^(dice aimed at it).
        let mut suffered: Vec<Counts> = vec![one(); units];
        let mut suffered_dice = vec![0u32; units];
        for group in groups {
            let (hits, wounds) = group_counts(group);
            let side = usize::from(group.attacker != 0);
            side_hits[side] = convolve(&side_hits[side], &hits);
            side_wounds[side] = convolve(&side_wounds[side], &wounds);
            dice[side] += group.dice;
            suffered[group.target] = convolve(&suffered[group.target], &wounds);
            suffered_dice[group.target] += group.dice;
        }
        let thirty_six = BigUint::from(36u32);
        let denominator_of = |d: u32| thirty_six.pow(d);
        let side_denominator = [denominator_of(dice[0]), denominator_of(dice[1])];
        let present = |i: usize| state.present & (1 << i) != 0;
        let left: Vec<u32> = (0..units)
            .map(|i| {
                if present(i) {
                    self.units[i].total_wounds() - state.taken[i]
                } else {
                    0
                }
            })
            .collect();
        let capped_suffered: Vec<Counts> =
            (0..units).map(|i| capped(&suffered[i], left[i])).collect();
        // Side A's score: capped wounds summed over B units (over 36^dice[0]).
        let mut a_score = one();
        for counts in &capped_suffered[1..] {
            a_score = convolve(&a_score, counts);
        }
        // Side B's score: capped wounds on A, shifted by the flank and rear bonus.
        let bonus = self.b_bonus(state.present) as usize;
        let mut b_score = vec![BigUint::zero(); bonus];
        b_score.extend(capped_suffered[0].iter().cloned());
        let (mut a_wins, mut draw, mut b_wins) =
            (BigUint::zero(), BigUint::zero(), BigUint::zero());
        for (sa, ca) in a_score.iter().enumerate() {
            for (sb, cb) in b_score.iter().enumerate() {
                let product = ca * cb;
                match sa.cmp(&sb) {
                    std::cmp::Ordering::Greater => a_wins += product,
                    std::cmp::Ordering::Equal => draw += product,
                    std::cmp::Ordering::Less => b_wins += product,
                }
            }
        }
        let phase_denominator = &side_denominator[0] * &side_denominator[1];
        let faces = BigUint::from(self.break_faces);
        let flee_denominator = &phase_denominator * &faces;
        let mut flees = vec![BigFraction::zero(); units];
        // A flees: B's score beats A's; A still has models after its casualties.
        if present(0) {
            let mut count = BigUint::zero();
            for (on_a, cb) in capped_suffered[0].iter().enumerate() {
                let on_a = on_a as u32;
                if on_a >= left[0] || cb.is_zero() {
                    continue;
                }
                let sb = on_a as usize + bonus;
                let taken_after = state.taken[0] + on_a;
                for (sa, ca) in a_score.iter().enumerate().take(sb) {
                    let difference = (sb - sa) as u32;
                    let failing = self.failing_rolls(0, taken_after, difference);
                    count += cb * ca * BigUint::from(failing);
                }
            }
            flees[0] = BigFraction::new(count, flee_denominator.clone());
        }
        // Each B unit flees: A's score beats B's; that unit still has models.
        for i in 1..units {
            if !present(i) {
                continue;
            }
            let mut rest = one();
            for (j, counts) in capped_suffered.iter().enumerate().skip(1) {
                if j != i {
                    rest = convolve(&rest, counts);
                }
            }
            let mut count = BigUint::zero();
            for (own, co) in capped_suffered[i].iter().enumerate() {
                if own as u32 >= left[i] || co.is_zero() {
                    continue;
                }
                let taken_after = state.taken[i] + own as u32;
                for (others, cr) in rest.iter().enumerate() {
                    if cr.is_zero() {
                        continue;
                    }
                    let sa = own + others;
                    let weight = co * cr;
                    for (sb, cb) in b_score.iter().enumerate().take(sa) {
                        if cb.is_zero() {
                            continue;
                        }
                        let failing = self.failing_rolls(i, taken_after, (sa - sb) as u32);
                        count += &weight * cb * BigUint::from(failing);
                    }
                }
            }
            flees[i] = BigFraction::new(count, flee_denominator.clone());
        }
        let destroyed = (0..units)
            .map(|i| {
                if !present(i) {
                    return BigFraction::zero();
                }
                let counts = &capped_suffered[i];
                let last = counts.get(left[i] as usize).cloned().unwrap_or_default();
                BigFraction::new(last, denominator_of(suffered_dice[i]))
            })
            .collect();
        PhaseOdds {
            expected_hits: [
                expectation(&side_hits[0], &side_denominator[0]),
                expectation(&side_hits[1], &side_denominator[1]),
            ],
            expected_wounds: [
                expectation(&side_wounds[0], &side_denominator[0]),
                expectation(&side_wounds[1], &side_denominator[1]),
            ],
            hits: [
                fractions(&side_hits[0], &side_denominator[0]),
                fractions(&side_hits[1], &side_denominator[1]),
            ],
            wounds: [
                fractions(&side_wounds[0], &side_denominator[0]),
                fractions(&side_wounds[1], &side_denominator[1]),
            ],
            score: [
                fractions(&a_score, &side_denominator[0]),
                fractions(&b_score, &side_denominator[1]),
            ],
            a_wins: BigFraction::new(a_wins, phase_denominator.clone()),
            draw: BigFraction::new(draw, phase_denominator.clone()),
            b_wins: BigFraction::new(b_wins, phase_denominator),
            flees,
            destroyed,
        }
    }
}

/// Exact odds of a whole engagement (in `f64`).
#[derive(Clone, Debug, PartialEq)]
pub struct EngagementOdds {
    /// `ends[p][e]`: P(the engagement ends in phase `p + 1` with end `e`).
    pub ends: Vec<[f64; END_COUNT]>,
    /// `models_lost[side][k]`: P(the side has lost exactly `k` models when it ends).
    pub models_lost: [Vec<f64>; 2],
}

/// Binomial probabilities `P(k of n)` with success probability `p`, in `f64`.
fn binomial_f64(n: u32, p: f64) -> Vec<f64> {
    let mut row = vec![0.0; n as usize + 1];
    // Built by repeated convolution with one die (n² steps): every term is a sum of
    // non-negative products, so nothing cancels; relative error stays near n ulps.
    row[0] = 1.0;
    for die in 0..n as usize {
        for k in (0..=die + 1).rev() {
            let stay = row[k] * (1.0 - p);
            let moved = if k > 0 { row[k - 1] * p } else { 0.0 };
            row[k] = stay + moved;
        }
    }
    row
}

fn convolve_f64(left: &[f64], right: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; left.len() + right.len() - 1];
    for (i, l) in left.iter().enumerate() {
        for (j, r) in right.iter().enumerate() {
            out[i + j] += l * r;
        }
    }
    out
}

fn capped_f64(dist: &[f64], cap: u32) -> Vec<f64> {
    let cap = cap as usize;
    if dist.len() <= cap + 1 {
        return dist.to_vec();
    }
    let mut out = dist[..cap].to_vec();
    out.push(dist[cap..].iter().sum());
    out
}

/// The work budget of [`MeleeCombat::engagement_odds`]: (state, outcome) pairs visited.
pub const ENGAGEMENT_ODDS_BUDGET: u64 = 40_000_000;

impl MeleeCombat {
    /// The whole engagement by exact enumeration of its Markov chain over states (wounds
    /// taken by every unit, units present), in `f64`. `None` when it would visit more
    /// than [`ENGAGEMENT_ODDS_BUDGET`] (state, outcome) pairs; the Monte Carlo answers then.
    pub fn engagement_odds(&self) -> Option<EngagementOdds> {
        let units = self.units.len();
        let limit = self.engagement.round_limit;
        let mut ends = vec![[0.0; END_COUNT]; limit as usize];
        let b_models: u32 = self.units[1..].iter().map(|u| u.models).sum();
        let mut models_lost = [
            vec![0.0; self.units[0].models as usize + 1],
            vec![0.0; b_models as usize + 1],
        ];
        let mut current = BTreeMap::new();
        current.insert(self.fresh_state(), 1.0f64);
        let mut work = 0u64;
        let faces = self.break_faces as f64;
        for phase in 1..=limit {
            let mut next: BTreeMap<EngagementState, f64> = BTreeMap::new();
            for (state, probability) in &current {
                // A stop request ends the enumeration as if over budget; the caller sees
                // the request and reports the run as interrupted.
                if crate::interrupt::requested() {
                    return None;
                }
                let mut groups = [AttackGroup::EMPTY; 2 * MAX_B_UNITS];
                let count = self.attack_groups(state, &mut groups);
                // The binomials below cost dice² each: counted before they are built.
                let binomial_work: u64 = groups[..count]
                    .iter()
                    .map(|g| u64::from(g.dice) * u64::from(g.dice))
                    .sum();
                work = work.saturating_add(binomial_work);
                if work > ENGAGEMENT_ODDS_BUDGET {
                    return None;
                }
                let mut suffered: Vec<Vec<f64>> = vec![vec![1.0]; units];
                for group in &groups[..count] {
                    let dist = binomial_f64(group.dice, f64::from(group.wound_weight) / 36.0);
                    suffered[group.target] = convolve_f64(&suffered[group.target], &dist);
                }
                let dists: Vec<Vec<f64>> = (0..units)
                    .map(|i| {
                        let left = if state.present & (1 << i) != 0 {
                            self.units[i].total_wounds() - state.taken[i]
                        } else {
                            0
                        };
                        capped_f64(&suffered[i], left)
                    })
                    .collect();
                let combos: u64 = dists.iter().map(|d| d.len() as u64).product();
                work = work
                    .saturating_add(combos.saturating_mul(1 << state.present.count_ones().min(4)));
                if work > ENGAGEMENT_ODDS_BUDGET {
                    return None;
                }
                // Odometer over every unit's capped wounds.
                let mut index = vec![0usize; units];
                loop {
                    let mut weight = *probability;
                    let mut wounds_on = [0u32; 1 + MAX_B_UNITS];
                    for i in 0..units {
                        weight *= dists[i][index[i]];
                        wounds_on[i] = index[i] as u32;
                    }
                    if weight > 0.0 {
                        let score = self.score_phase(state, &wounds_on);
                        // Every subset of the testers flees with its probability.
                        let testers = score.testers;
                        let mut subset: u8 = 0;
                        loop {
                            let mut branch = weight;
                            let mut bits = testers;
                            while bits != 0 {
                                let unit = bits.trailing_zeros() as usize;
                                bits &= bits - 1;
                                let fail = self.failing_rolls(
                                    unit,
                                    score.taken_after[unit],
                                    score.difference,
                                ) as f64
                                    / faces;
                                branch *= if subset & (1 << unit) != 0 {
                                    fail
                                } else {
                                    1.0 - fail
                                };
                            }
                            if branch > 0.0 {
                                let after = self.after_phase(state, &score, subset);
                                match self.end_of(&after, phase) {
                                    Some(end) => {
                                        ends[phase as usize - 1][end.index()] += branch;
                                        let lost = self.models_lost(&after);
                                        models_lost[0][lost[0] as usize] += branch;
                                        models_lost[1][lost[1] as usize] += branch;
                                    }
                                    None => *next.entry(after).or_insert(0.0) += branch,
                                }
                            }
                            // Next subset of `testers` (Gosper-free: count up within the mask).
                            subset = subset.wrapping_sub(testers) & testers;
                            if subset == 0 {
                                break;
                            }
                        }
                    }
                    // Advance the odometer.
                    let mut digit = 0;
                    loop {
                        if digit == units {
                            break;
                        }
                        index[digit] += 1;
                        if index[digit] < dists[digit].len() {
                            break;
                        }
                        index[digit] = 0;
                        digit += 1;
                    }
                    if digit == units {
                        break;
                    }
                }
            }
            current = next;
        }
        Some(EngagementOdds { ends, models_lost })
    }
}

/// Counts of many simulated single phases from the fresh state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseHistogram {
    /// A wins, draw, B wins.
    pub result: [u64; 3],
    /// Per unit: failed its break test / lost its last model.
    pub flees: [u64; 1 + MAX_B_UNITS],
    pub destroyed: [u64; 1 + MAX_B_UNITS],
    /// `hits[side][k]`, `wounds[side][k]`: phases in which the side scored exactly k.
    pub hits: [Vec<u64>; 2],
    pub wounds: [Vec<u64>; 2],
    /// `score[side][k]`: phases in which the side's combat score was k.
    pub score: [Vec<u64>; 2],
}

impl Histogram for PhaseHistogram {
    fn merge(&mut self, other: Self) {
        add_into(&mut self.result, &other.result);
        add_into(&mut self.flees, &other.flees);
        add_into(&mut self.destroyed, &other.destroyed);
        for side in 0..2 {
            add_into(&mut self.hits[side], &other.hits[side]);
            add_into(&mut self.wounds[side], &other.wounds[side]);
            add_into(&mut self.score[side], &other.score[side]);
        }
    }
}

fn add_into(mine: &mut [u64], theirs: &[u64]) {
    for (m, t) in mine.iter_mut().zip(theirs) {
        *m += t;
    }
}

/// Counts of many simulated engagements.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EngagementHistogram {
    /// `ends[(phase − 1) · END_COUNT + end]`.
    pub ends: Vec<u64>,
    /// `models_lost[side][k]`.
    pub models_lost: [Vec<u64>; 2],
}

impl EngagementHistogram {
    pub fn trials(&self) -> u64 {
        self.ends.iter().sum()
    }

    /// Engagements that ended in phase `phase` (1-based) with `end`.
    pub fn ended(&self, phase: u32, end: EngagementEnd) -> u64 {
        self.ends[(phase as usize - 1) * END_COUNT + end.index()]
    }

    /// Engagements that ended with `end`, in any phase.
    pub fn total(&self, end: EngagementEnd) -> u64 {
        self.ends.iter().skip(end.index()).step_by(END_COUNT).sum()
    }
}

impl Histogram for EngagementHistogram {
    fn merge(&mut self, other: Self) {
        add_into(&mut self.ends, &other.ends);
        for side in 0..2 {
            add_into(&mut self.models_lost[side], &other.models_lost[side]);
        }
    }
}

impl MeleeCombat {
    /// Attack dice of side A and side B in the first phase (the most they ever roll).
    pub fn first_phase_dice(&self) -> [u32; 2] {
        let mut groups = [AttackGroup::EMPTY; 2 * MAX_B_UNITS];
        let count = self.attack_groups(&self.fresh_state(), &mut groups);
        let mut dice = [0u32; 2];
        for g in &groups[..count] {
            dice[usize::from(g.attacker != 0)] += g.dice;
        }
        dice
    }

    /// Expected hits and wounds (before the cap) of side A and side B in the first
    /// phase: `Σ dice × weight / 36` over the attack groups, exact at any size.
    pub fn expected_first_phase(&self) -> ([Fraction; 2], [Fraction; 2]) {
        let mut groups = [AttackGroup::EMPTY; 2 * MAX_B_UNITS];
        let count = self.attack_groups(&self.fresh_state(), &mut groups);
        let (mut hits, mut wounds) = ([0u128; 2], [0u128; 2]);
        for g in &groups[..count] {
            let side = usize::from(g.attacker != 0);
            hits[side] += u128::from(g.dice) * u128::from(g.hit_weight);
            wounds[side] += u128::from(g.dice) * u128::from(g.wound_weight);
        }
        (
            hits.map(|h| Fraction::new(h, 36)),
            wounds.map(|w| Fraction::new(w, 36)),
        )
    }

    pub fn empty_phase_histogram(&self) -> PhaseHistogram {
        let dice = self.first_phase_dice();
        let sized = |side: usize| vec![0u64; dice[side] as usize + 1];
        PhaseHistogram {
            result: [0; 3],
            flees: [0; 1 + MAX_B_UNITS],
            destroyed: [0; 1 + MAX_B_UNITS],
            hits: [sized(0), sized(1)],
            wounds: [sized(0), sized(1)],
            score: [sized(0), vec![0u64; dice[1] as usize + 1 + MAX_B_UNITS]],
        }
    }

    pub fn empty_engagement_histogram(&self) -> EngagementHistogram {
        let b_models: u32 = self.units[1..].iter().map(|u| u.models).sum();
        EngagementHistogram {
            ends: vec![0; self.engagement.round_limit as usize * END_COUNT],
            models_lost: [
                vec![0; self.units[0].models as usize + 1],
                vec![0; b_models as usize + 1],
            ],
        }
    }

    /// Adds `n` simulated first phases into `histogram`.
    pub fn phase_block(&self, dice: &mut DiceStream, n: u64, histogram: &mut PhaseHistogram) {
        let fresh = self.fresh_state();
        for _ in 0..n {
            let mut state = fresh;
            let r = self.fight_phase(&mut state, dice);
            let result =
                1 + usize::from(r.score[1] > r.score[0]) - usize::from(r.score[0] > r.score[1]);
            histogram.result[result] += 1;
            for side in 0..2 {
                histogram.hits[side][r.hits[side] as usize] += 1;
                histogram.wounds[side][r.wounds[side] as usize] += 1;
                histogram.score[side][r.score[side] as usize] += 1;
            }
            for unit in 0..self.units.len() {
                histogram.flees[unit] += u64::from(r.fled >> unit & 1);
                histogram.destroyed[unit] += u64::from(r.destroyed >> unit & 1);
            }
        }
    }

    /// Adds `n` simulated engagements into `histogram`.
    pub fn engagement_block(
        &self,
        dice: &mut DiceStream,
        n: u64,
        histogram: &mut EngagementHistogram,
    ) {
        for _ in 0..n {
            let outcome = self.engage(dice);
            histogram.ends[(outcome.phases as usize - 1) * END_COUNT + outcome.end.index()] += 1;
            histogram.models_lost[0][outcome.models_lost[0] as usize] += 1;
            histogram.models_lost[1][outcome.models_lost[1] as usize] += 1;
        }
    }
}

/// Simulates `trials` first phases, reproducibly on any thread count.
pub fn simulate_phases(
    combat: &MeleeCombat,
    seed: u64,
    trials: u64,
    control: &RunControl,
) -> Result<PhaseHistogram, Interrupted> {
    run_blocks(
        seed,
        trials,
        || combat.empty_phase_histogram(),
        |dice, n, h| combat.phase_block(dice, n, h),
        control,
    )
}

/// Simulates `trials` whole engagements, reproducibly on any thread count.
pub fn simulate_engagements(
    combat: &MeleeCombat,
    seed: u64,
    trials: u64,
    control: &RunControl,
) -> Result<EngagementHistogram, Interrupted> {
    run_blocks(
        seed,
        trials,
        || combat.empty_engagement_histogram(),
        |dice, n, h| combat.engagement_block(dice, n, h),
        control,
    )
}

impl UnitProfile {
    /// Keys of the quick profile form, e.g. `"models=20 wide=5 attacks=1 skill=3"`.
    pub const QUICK_KEYS: &'static str = "models, frontage, attacks, skill, power, defense, discipline, wounds, rank_bonus (ranks, full-ranks, none), rank_bonus_cap (the analysis file's words; wide, rank-bonus and rank-cap are accepted too)";

    /// Parses the quick form: `key=value` pairs separated by spaces or commas; keys left
    /// out keep [`UnitProfile::default`]. The result is not validated yet.
    pub fn parse_quick(text: &str) -> Result<UnitProfile, String> {
        let mut unit = UnitProfile::default();
        let mut seen: Vec<&str> = Vec::new();
        for pair in text.split([' ', ',']).filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').ok_or_else(|| {
                format!("\"{pair}\" is not key=value; keys: {}", Self::QUICK_KEYS)
            })?;
            if seen.contains(&key) {
                return Err(format!("{key} is given twice; give each key once"));
            }
            seen.push(key);
            if key == "ranks" {
                return Err(format!(
                    "ranks follow from models and frontage (models ÷ frontage, rounded up); give models and frontage instead. Keys: {}",
                    Self::QUICK_KEYS
                ));
            }
            if matches!(key, "rank_bonus" | "rank-bonus") {
                unit.rank_bonus = RankBonusRule::parse(value).ok_or_else(|| {
                    format!("rank-bonus={value}: allowed {}", RankBonusRule::NAMES)
                })?;
                continue;
            }
            let number: u32 = value
                .parse()
                .map_err(|_| format!("{key}={value}: not a whole number"))?;
            match key {
                "models" => unit.models = number,
                "frontage" | "wide" => unit.frontage = number,
                "attacks" => unit.attacks = number,
                "skill" => unit.skill = number,
                "power" => unit.power = number,
                "defense" | "defence" => unit.defense = number,
                "discipline" => unit.discipline = number,
                "wounds" => unit.wounds = number,
                // The file's words first; the older command-line spellings still work.
                "rank_bonus_cap" | "rank-bonus-cap" | "rank-cap" => unit.rank_bonus_cap = number,
                _ => return Err(format!("unknown key \"{key}\"; keys: {}", Self::QUICK_KEYS)),
            }
        }
        Ok(unit)
    }

    /// The quick form of this profile (every key), the inverse of [`Self::parse_quick`].
    pub fn quick(&self) -> String {
        format!(
            "models={} wide={} attacks={} skill={} power={} defense={} discipline={} wounds={} rank-bonus={} rank-cap={}",
            self.models,
            self.frontage,
            self.attacks,
            self.skill,
            self.power,
            self.defense,
            self.discipline,
            self.wounds,
            self.rank_bonus.name(),
            self.rank_bonus_cap
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(models: u32, frontage: u32, skill: u32, power: u32, defense: u32) -> UnitProfile {
        UnitProfile {
            models,
            frontage,
            skill,
            power,
            defense,
            ..UnitProfile::default()
        }
    }

    #[test]
    fn thresholds_at_every_edge() {
        // Skill: higher hits on 3+, equal or lower on 4+.
        assert_eq!(hit_target(4, 3), 3);
        assert_eq!(hit_target(3, 3), 4);
        assert_eq!(hit_target(2, 3), 4);
        // Power − Defense: 3+ → 6+, 1..2 → 5+, 0 → 4+, −1..−2 → 3+, ≤ −3 → 2+.
        let saves: Vec<u32> = (-4..=4)
            .map(|d: i32| save_target((5 + d) as u32, 5))
            .collect();
        assert_eq!(saves, vec![2, 2, 3, 3, 4, 5, 5, 6, 6]);
    }

    #[test]
    fn group_tables_are_the_exact_law_to_two_to_the_minus_64() {
        for (hit, wound) in [
            (0, 0),
            (6, 0),
            (18, 9),
            (30, 20),
            (36, 36),
            (36, 0),
            (24, 24),
        ] {
            for n in [0, 1, 2, 5, 10, MAX_TABLE_DICE] {
                let table = GroupTable::new(n, hit, wound);
                let total = 36u128.pow(n);
                let mut seen = 0u128;
                for ((h, w), share) in table.shares() {
                    // The exact count of (h, w) by brute force over one die's three faces.
                    let (wh, sv, ms) = (
                        u128::from(wound),
                        u128::from(hit - wound),
                        u128::from(36 - hit),
                    );
                    let choose = |n: u32, k: u32| -> u128 {
                        (0..k).fold(1u128, |a, i| a * u128::from(n - i) / u128::from(i + 1))
                    };
                    let count =
                        choose(n, h) * choose(h, w) * wh.pow(w) * sv.pow(h - w) * ms.pow(n - h);
                    seen += count;
                    // share / 2^64 against count / total: off by less than 2 / 2^64.
                    let big = num_bigint::BigUint::from;
                    let exact: u128 = ((big(count) << 64u32) / big(total)).try_into().unwrap();
                    assert!(
                        share.abs_diff(exact) <= 2,
                        "n={n} ({hit},{wound}) ({h},{w})"
                    );
                }
                assert_eq!(seen, total, "every possible outcome is in the table");
                // The sampler returns the outcome whose interval holds the draw.
                for u in [0u64, 1, 1 << 63, u64::MAX - 1, u64::MAX] {
                    let (h, w) = table.sample(u);
                    assert!(w <= h && h <= n);
                }
            }
        }
    }

    #[test]
    fn formation_shrinks_from_the_back() {
        let u = unit(12, 5, 3, 3, 3);
        let f = u.formation(0);
        assert_eq!(
            (
                f.alive,
                f.front,
                f.second,
                f.ranks,
                f.last_rank,
                f.rank_bonus
            ),
            (12, 5, 5, 3, 2, 2)
        );
        let f = u.formation(8);
        assert_eq!(
            (f.alive, f.front, f.second, f.ranks, f.rank_bonus),
            (4, 4, 0, 1, 0)
        );
        let full = UnitProfile {
            rank_bonus: RankBonusRule::FullRanks,
            ..u.clone()
        };
        assert_eq!(full.formation(0).rank_bonus, 1);
        let capped = unit(40, 5, 3, 3, 3);
        assert_eq!(capped.formation(0).rank_bonus, 3);
        let multi = UnitProfile {
            wounds: 3,
            ..unit(4, 2, 3, 3, 3)
        };
        assert_eq!(multi.formation(5).alive, 3);
        assert_eq!(multi.formation(5).wounds_left, 7);
    }

    #[test]
    fn flank_attackers_follow_the_readings() {
        let u = unit(13, 4, 3, 3, 3); // ranks of 4, 4, 4, 1
        let f = u.formation(0);
        assert_eq!(u.flank_attackers(&f, false, false), 4);
        assert_eq!(u.flank_attackers(&f, false, true), 3);
        assert_eq!(u.flank_attackers(&f, true, false), 2);
        assert_eq!(u.flank_attackers(&f, true, true), 1);
        let column = unit(5, 1, 3, 3, 3);
        assert_eq!(column.flank_attackers(&column.formation(0), false, true), 0);
    }

    #[test]
    fn one_model_each_by_hand() {
        // A: Skill 4 > 3 hits on 3+ (4/6); Power 3 = Defense 3 saves on 4+ (fails 3/6):
        // P(wound) = 1/3. B: hits on 4+ (3/6), fails 3/6: 1/4.
        let a = unit(1, 1, 4, 3, 3);
        let b = unit(1, 1, 3, 3, 3);
        let combat = MeleeCombat::new(Engagement::one_on_one(a, b)).unwrap();
        let odds = combat.phase_odds(&combat.fresh_state());
        assert_eq!(odds.a_wins.to_string(), "1/4"); // 1/3 · 3/4
        assert_eq!(odds.b_wins.to_string(), "1/6"); // 2/3 · 1/4
        assert_eq!(odds.draw.to_string(), "7/12");
        assert_eq!(odds.hits[0][1].to_string(), "2/3");
        // The loser of a one-model fight is always dead: nobody tests.
        assert_eq!(odds.flees[0].to_string(), "0");
        assert_eq!(odds.destroyed[0].to_string(), "1/4");
        assert_eq!(odds.destroyed[1].to_string(), "1/3");
    }

    #[test]
    fn validation_names_the_field() {
        let bad = |e: Engagement| MeleeCombat::new(e).unwrap_err().field;
        let ok = Engagement::one_on_one(UnitProfile::default(), UnitProfile::default());
        let mut e = ok.clone();
        e.a.models = 0;
        assert_eq!(bad(e), "a.models");
        let mut e = ok.clone();
        e.b[0].1.frontage = 21;
        assert_eq!(bad(e), "b.frontage");
        let mut e = ok.clone();
        e.a.skill = 11;
        assert_eq!(bad(e), "a.skill");
        let mut e = ok.clone();
        e.b.push((Facing::Front, UnitProfile::default()));
        assert_eq!(bad(e), "b");
        let mut e = ok;
        e.round_limit = 0;
        assert_eq!(bad(e), "round_limit");
    }

    #[test]
    fn engagement_odds_sum_to_one_and_match_the_phase() {
        // B's units are too large to be destroyed in one phase, so "A flees in phase 1"
        // is exactly the phase's P(A flees), and "B destroyed in phase 1" cannot happen.
        let mut e = Engagement::one_on_one(unit(6, 3, 3, 3, 3), unit(12, 3, 4, 4, 3));
        e.b.push((Facing::Flank, unit(9, 3, 3, 3, 3)));
        let combat = MeleeCombat::new(e).unwrap();
        let odds = combat.engagement_odds().unwrap();
        let total: f64 = odds.ends.iter().flatten().sum();
        assert!((total - 1.0).abs() < 1e-12, "{total}");
        let phase = combat.phase_odds(&combat.fresh_state());
        let a_flees = odds.ends[0][EngagementEnd::AFlees.index()];
        assert!((a_flees - phase.flees[0].to_f64()).abs() < 1e-12);
        assert_eq!(odds.ends[0][EngagementEnd::BDestroyed.index()], 0.0);
    }
}
