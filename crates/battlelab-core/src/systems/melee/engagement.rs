//! Miniatures melee (docs/systems/melee.md): attack rolls by Skill, damage saves by
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
//! The readings of the ambiguous geometry are in `docs/systems/melee.md`.

use std::collections::BTreeMap;

use num_bigint::BigUint;
use num_traits::{One, Zero};

use crate::dice::DiceStream;
use crate::exact::{BigFraction, Fraction};
use crate::rules::RulesError;
use crate::sim::{all_blocks, run_block_range, Histogram, Interrupted, RunControl};

mod lockstep;

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

/// How a unit's rank bonus is counted (an option of docs/systems/melee.md, default ranks
/// behind the front).
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

/// The dice of a break test (an option of docs/systems/melee.md, default 2d6).
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
    /// battlelab's choice, not the rules text's.
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

/// A unit's shape at the start of a phase (see `docs/systems/melee.md`).
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
    /// `formations[unit][taken]`: the unit's formation after `taken` wounds (see
    /// [`MeleeCombat::formation_of`]).
    formations: Vec<Vec<Formation>>,
    /// The attack groups' tables and the engagement kernel's (see [`EngageTables`]).
    fast: EngageTables,
}

/// How unit A attacks a side-B unit, given its facing and the units present.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum AttackKind {
    Front,
    /// A flank unit, first or second in listed order of those present, with A's front
    /// engaged or free.
    Flank {
        second: bool,
        front_engaged: bool,
    },
    /// A rear unit: A does not attack it.
    None,
}

impl AttackKind {
    /// How A attacks each side-B unit (`kinds[i - 1]` for unit `i`) when the units of
    /// `present` (bit `i`: unit `i`) are there: the reading of docs/systems/melee.md. A
    /// flank unit is the first or second of those present in listed order; A's front is
    /// engaged when a front unit is present. The kernel's tables and
    /// [`MeleeCombat::attack_groups`] both read it.
    fn for_present(facings: &[Facing], present: usize) -> [AttackKind; MAX_B_UNITS] {
        let here = |i: usize| present & (1 << i) != 0;
        let front_engaged = (1..facings.len()).any(|i| here(i) && facings[i] == Facing::Front);
        let mut flanks_seen = 0;
        let mut kinds = [AttackKind::None; MAX_B_UNITS];
        for (i, kind) in (1..facings.len()).zip(kinds.iter_mut()) {
            *kind = match facings[i] {
                Facing::Front => AttackKind::Front,
                Facing::Flank => {
                    let second = flanks_seen > 0;
                    flanks_seen += usize::from(here(i));
                    AttackKind::Flank {
                        second,
                        front_engaged,
                    }
                }
                Facing::Rear => AttackKind::None,
            };
        }
        kinds
    }

    /// The dice A rolls this way, in formation `form`.
    fn a_dice(self, a: &UnitProfile, form: &Formation) -> u32 {
        match self {
            AttackKind::Front => a.front_dice(form),
            AttackKind::Flank {
                second,
                front_engaged,
            } => a.flank_attackers(form, front_engaged, second) * a.attacks,
            AttackKind::None => 0,
        }
    }
}

/// Side B's flank and rear bonus when the units of `present` are there: one per present B
/// unit on A's flank or rear.
fn flank_rear_bonus(facings: &[Facing], present: usize) -> u32 {
    (1..facings.len())
        .filter(|&i| present & (1 << i) != 0 && facings[i] != Facing::Front)
        .count() as u32
}

/// PERF: everything [`MeleeCombat::engage`] reads, laid out so that a phase is a few
/// loads. The general phase ([`MeleeCombat::fight_phase`]) builds attack groups as
/// records (facings, flank order, front engaged, formations, odds), finds each group's
/// table through two vectors, and scores the phase through structs kept in memory: an
/// engagement of the 20 v 20 bench (about 2.6 phases, 7.3 words) cost about 105 words'
/// time that way, nine in ten of it outside the dice (profile of the bench).
/// Here the attack groups are resolved once per (unit, wounds taken) and per set of units
/// present, every group table's alias columns sit in one array, and a group is named by
/// one `u32` ([`GroupRef`]).
#[derive(Clone, Debug)]
struct EngageTables {
    /// Every group table's alias columns, one table after another.
    columns: Vec<AliasColumn>,
    /// `columns` as the lanes' AVX2 sweeps read them first, a 32-bit word a column
    /// ([`AliasColumn::lane_word`]).
    lane_columns: Vec<u32>,
    /// `table_refs[slot][dice]`: the [`GroupTable`] of (hits, wounds) of a whole attack
    /// group in one draw, as a [`GroupRef`] into `columns`; slot `i` (1–4) is B unit `i`
    /// attacking A, slot `MAX_B_UNITS + i` A attacking B unit `i`. Groups of more dice
    /// than a slot's tables roll die by die.
    table_refs: Vec<Vec<GroupRef>>,
    /// `unit_at[unit_base[unit] + taken]`: the unit after `taken` wounds.
    unit_at: Vec<UnitAt>,
    unit_base: [usize; 1 + MAX_B_UNITS],
    /// `a_groups[base + taken]`: A's attack group, after `taken` wounds, on a side-B unit;
    /// `base` from [`PresentAt::a_base`] names the unit and how A attacks it.
    a_groups: Vec<GroupRef>,
    /// `at_present[present]`, for every set of units present (bit `i`: unit `i`).
    at_present: Vec<PresentAt>,
    total_wounds: [u32; 1 + MAX_B_UNITS],
    /// `break_sum[v]`: the sum of the break dice on roll `v` of their `6^dice` equally
    /// likely rolls ranked from the lowest sum (see [`MeleeCombat::break_roll_from`]).
    /// PERF: a unit flees when `break_sum[v] + difference ≥ break_margin`, the same
    /// verdict as `v ≥` (rolls that pass), with the table lookup on the dice alone, off
    /// the path from the phase's casualties to the verdict.
    break_sum: Vec<u32>,
    break_faces: u32,
}

/// An attack group as the engagement kernel names it: `0` no dice; `offset << 4 | b`
/// with `b` in 1..=9 an alias table of `2^b` columns at `columns[offset..]`; `dice << 4`
/// a group of more than [`MAX_TABLE_DICE`] dice, rolled die by die.
type GroupRef = u32;

/// One unit after some number of wounds taken, as [`MeleeCombat::engage`] reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct UnitAt {
    /// The dice a side-B unit rolls at A (its front), as a [`GroupRef`]; 0 for A.
    group: GroupRef,
    /// 1 + Discipline + Rank Bonus: the unit passes a break test lost by `d` on rolls up
    /// to `break_margin − d − 1`, so it flees when the roll's sum + `d` ≥ `break_margin`.
    break_margin: u16,
    /// Models lost.
    lost: u16,
}

/// One set of units present at the start of a phase, as [`MeleeCombat::engage`] reads it.
/// (`repr(C)`, [`PRESENT_AT_WORDS`] 32-bit words an entry: the several-units sweep of
/// `melee/lockstep.rs` reads `a_base` and `bonus` field by field into its tables by units
/// present; the layout keeps an entry at 20 bytes.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
struct PresentAt {
    /// `a_base[i − 1]`: where A's groups on side-B unit `i` start in `a_groups`.
    a_base: [u32; MAX_B_UNITS],
    /// Side B's flank and rear bonus.
    bonus: u32,
}

/// 32-bit words in a [`PresentAt`], `bonus` the last.
const PRESENT_AT_WORDS: usize = MAX_B_UNITS + 1;
const _: () = assert!(
    std::mem::size_of::<PresentAt>() == 4 * PRESENT_AT_WORDS
        && std::mem::offset_of!(PresentAt, bonus) == 4 * MAX_B_UNITS
);

impl EngageTables {
    fn new(
        units: &[UnitProfile],
        facings: &[Facing],
        formations: &[Vec<Formation>],
        group_tables: Vec<Vec<GroupTable>>,
        break_at_most: &[u64],
        break_faces: u64,
    ) -> Self {
        // Every table's columns in one array; `table_refs[slot][n]` names table n of slot.
        let mut columns = Vec::new();
        let mut lane_columns = Vec::new();
        let table_refs: Vec<Vec<GroupRef>> = group_tables
            .into_iter()
            .map(|tables| {
                tables
                    .into_iter()
                    .map(|table| {
                        let bits = table.columns.len().trailing_zeros();
                        // At most 9 slots of 25 tables of 512 columns.
                        let offset = u32::try_from(columns.len()).expect("a few tables");
                        lane_columns
                            .extend((0..).zip(&table.columns).map(|(j, c)| c.lane_word(bits, j)));
                        columns.extend(table.columns);
                        offset << 4 | bits
                    })
                    .collect()
            })
            .collect();
        let group_ref = |slot: usize, dice: u32| -> GroupRef {
            match table_refs[slot].get(dice as usize) {
                _ if dice == 0 => 0,
                Some(&table) => table,
                None => dice << 4,
            }
        };
        let mut unit_base = [0usize; 1 + MAX_B_UNITS];
        let mut unit_at = Vec::new();
        for (index, unit) in units.iter().enumerate() {
            unit_base[index] = unit_at.len();
            for form in &formations[index] {
                // Validation bounds both: Discipline and Rank Bonus at most 10, at most
                // 500 models.
                let small = |v: u32| u16::try_from(v).expect("validated sizes fit");
                unit_at.push(UnitAt {
                    group: if index == 0 {
                        0
                    } else {
                        group_ref(index, unit.front_dice(form))
                    },
                    break_margin: small(1 + unit.discipline + form.rank_bonus),
                    lost: small(unit.models - form.alive),
                });
            }
        }
        let kinds: Vec<[AttackKind; MAX_B_UNITS]> = (0..1usize << units.len())
            .map(|present| AttackKind::for_present(facings, present))
            .collect();
        // One block of A's groups per (B unit, kind) that some set of units present uses.
        let a = &units[0];
        let mut a_groups = Vec::new();
        let mut blocks: BTreeMap<(usize, AttackKind), u32> = BTreeMap::new();
        for by_unit in &kinds {
            for (j, &kind) in by_unit.iter().enumerate().take(units.len() - 1) {
                blocks.entry((j, kind)).or_insert_with(|| {
                    let base = u32::try_from(a_groups.len()).expect("at most 10 blocks");
                    for form in &formations[0] {
                        a_groups.push(group_ref(MAX_B_UNITS + 1 + j, kind.a_dice(a, form)));
                    }
                    base
                });
            }
        }
        let at_present = (0..1usize << units.len())
            .map(|present| {
                let mut a_base = [0u32; MAX_B_UNITS];
                for (j, &kind) in kinds[present].iter().enumerate().take(units.len() - 1) {
                    a_base[j] = blocks[&(j, kind)];
                }
                PresentAt {
                    a_base,
                    bonus: flank_rear_bonus(facings, present),
                }
            })
            .collect();
        let mut total_wounds = [0u32; 1 + MAX_B_UNITS];
        for (total, unit) in total_wounds.iter_mut().zip(units) {
            *total = unit.total_wounds();
        }
        // Roll v (0-based, by rank) has the smallest sum k with more than v rolls at most k.
        let break_sum = (0..break_faces)
            .map(|v| {
                break_at_most
                    .iter()
                    .position(|&at_most| at_most > v)
                    .unwrap_or(0) as u32
            })
            .collect();
        Self {
            lane_columns,
            columns,
            table_refs,
            unit_at,
            unit_base,
            a_groups,
            at_present,
            total_wounds,
            break_sum,
            break_faces: u32::try_from(break_faces).expect("at most 6^3 rolls"),
        }
    }
}

/// Attack groups of at most this many dice are sampled whole from a [`GroupTable`]
/// (`(n + 1)(n + 2) / 2` outcomes; `36^n` fits in a `u128` for the exact counts).
pub const MAX_TABLE_DICE: u32 = 24;

/// The most bits that pick a [`GroupTable`]'s column: `(n + 1)(n + 2) / 2` outcomes of at
/// most [`MAX_TABLE_DICE`] dice take at most 512 columns.
const MAX_TABLE_BITS: u32 = 9;
const _: () = assert!((MAX_TABLE_DICE + 1) * (MAX_TABLE_DICE + 2) / 2 <= 1 << MAX_TABLE_BITS);

/// The bits of a column's cut, after those that pick the column, in its lane word
/// ([`AliasColumn::lane_word`]).
const LANE_CUT_BITS: u32 = 22;

/// PERF: the joint law of (hits, wounds) of `n` identical attack dice, sampled from one
/// 64-bit uniform. Rolling the group cost one chained multiply and two compares per die
/// (10 dice a side a phase in the bench: the largest share of a phase); a table replaces
/// it. Each die is (hit and wound) with weight `wound_weight`, (hit, saved) with
/// `hit_weight − wound_weight`, a miss with `36 − hit_weight`, so P(h, w) = n! / (w!
/// (h − w)! (n − h)!) · W^w (H − W)^(h − w) (36 − H)^(n − h) / 36^n, counted exactly in
/// integers. Outcome `j` gets the share ⌊C_j · 2^64 / 36^n⌋ − ⌊C_{j−1} · 2^64 / 36^n⌋ of
/// the 2^64 words (`C_j`: the cumulative count), so each probability is exact to 2^-64
/// (the dice it replaces were exact to 36^6 / 2^64). Construction checks that the counts
/// sum to 36^n.
///
/// PERF: the shares are laid out as Walker's alias table in integers (Vose's
/// construction): `2^b` columns of `2^(64 − b)` words each, column `c` holds its own
/// outcome below a cut and one alias above it. A sample is one load and one compare, with
/// no branch on the word: the inverse-CDF scan it replaces (a guide byte, then a loop of
/// one or two compares) cost a mispredicted branch in most samples, the largest single
/// cost of a combat phase in the profile. The alias columns hold exactly the shares
/// above (every step of the construction is integer arithmetic on them; a unit test adds
/// them up again).
#[derive(Clone, Debug)]
pub struct GroupTable {
    dice: u32,
    columns: Vec<AliasColumn>,
    /// `64 − b`: the word's top `b` bits pick the column.
    shift: u32,
}

/// One column of a [`GroupTable`]: words below `cut` give `below`, the rest `above`.
/// Outcomes are packed `hits << 16 | wounds`. (The lanes' AVX2 sweeps read a column as
/// its [`AliasColumn::lane_word`].)
#[derive(Clone, Copy, Debug)]
struct AliasColumn {
    cut: u64,
    below: u32,
    above: u32,
}

impl AliasColumn {
    /// The outcome for word `u` of this column, without a branch on the word (the
    /// compiler makes it a load indexed by the comparison: the two outcomes sit side by
    /// side).
    #[inline(always)]
    fn pick(self, u: u64) -> u32 {
        let below = 0u32.wrapping_sub(u32::from(u < self.cut));
        self.above ^ ((self.above ^ self.below) & below)
    }

    /// Column `j` of a table of `2^bits` columns in one 32-bit word, as the lanes' AVX2
    /// sweeps gather it: the cut's [`LANE_CUT_BITS`]-bit prefix within the column (the bits
    /// of `cut − start` after the `bits` that pick the column) in bits 10–31, and the wounds
    /// above the cut in bits 5–9 and below it in bits 0–4 (at most [`MAX_TABLE_DICE`]). A
    /// word of the column whose prefix differs from the cut's is ordered against the cut
    /// by the prefixes alone; one whose prefix equals it (one word in 2^22) needs the whole
    /// cut.
    fn lane_word(self, bits: u32, j: u64) -> u32 {
        // The prefix above the two 5-bit wounds, and within the word's high half.
        const { assert!(MAX_TABLE_DICE < 32 && LANE_CUT_BITS + 10 <= 32) };
        const { assert!(MAX_TABLE_BITS + LANE_CUT_BITS <= 32) };
        debug_assert!((1..=MAX_TABLE_BITS).contains(&bits));
        let start = j << (64 - bits);
        let prefix = (self.cut - start) >> (64 - bits - LANE_CUT_BITS);
        let wounds = |packed: u32| unpack_outcome(packed).1;
        (prefix as u32) << 10 | wounds(self.above) << 5 | wounds(self.below)
    }
}

/// `hits << 16 | wounds`: the packed outcome of an attack group (at most
/// [`MAX_TABLE_DICE`] hits).
#[inline(always)]
fn pack_outcome(hits: u32, wounds: u32) -> u32 {
    hits << 16 | wounds
}

#[inline(always)]
fn unpack_outcome(packed: u32) -> (u32, u32) {
    (packed >> 16, packed & 0xffff)
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
        let mut outcomes = Vec::new();
        let mut shares = Vec::new();
        let mut cumulative = 0u128;
        let mut below = 0u128;
        for hits in 0..=n {
            for wounds in 0..=hits {
                let count = binomial(n, hits)
                    * binomial(hits, wounds)
                    * w.pow(wounds)
                    * s.pow(hits - wounds)
                    * m.pow(n - hits);
                cumulative += count;
                let upper = scaled(cumulative, total);
                outcomes.push(pack_outcome(hits, wounds));
                shares.push(upper - below);
                below = upper;
            }
        }
        assert_eq!(cumulative, total, "the outcomes' counts sum to 36^n");
        assert_eq!(below, 1u128 << 64, "the shares fill the 2^64 words");
        // At least two columns, so that a column's width 2^(64 − b) fits in a u64.
        let bits = outcomes.len().next_power_of_two().trailing_zeros().max(1);
        let width = 1u128 << (64 - bits);
        outcomes.resize(1 << bits, pack_outcome(0, 0));
        shares.resize(1 << bits, 0);
        // Vose: pair each column short of its width with one that has more than it.
        // Both lists hold outcome indices; the shares left always sum to `width` times
        // the columns not yet filled, so a short column always finds a long one, and
        // when none is short every one left is exactly full.
        let mut left = shares;
        let mut short: Vec<usize> = (0..left.len()).filter(|&j| left[j] < width).collect();
        let mut long: Vec<usize> = (0..left.len()).filter(|&j| left[j] >= width).collect();
        let mut columns = vec![
            AliasColumn {
                cut: 0,
                below: 0,
                above: 0,
            };
            left.len()
        ];
        while let Some(j) = short.pop() {
            let donor = long.pop().expect("a short column has a long partner");
            let base = (j as u128) * width;
            columns[j] = AliasColumn {
                cut: (base + left[j]) as u64,
                below: outcomes[j],
                above: outcomes[donor],
            };
            left[donor] -= width - left[j];
            if left[donor] < width {
                short.push(donor);
            } else {
                long.push(donor);
            }
        }
        for j in long {
            assert_eq!(left[j], width, "columns left over are exactly full");
            columns[j] = AliasColumn {
                cut: (j as u128 * width) as u64,
                below: outcomes[j],
                above: outcomes[j],
            };
        }
        Self {
            dice: n,
            columns,
            shift: 64 - bits,
        }
    }

    /// The packed outcome (`hits << 16 | wounds`) for a uniform 64-bit draw.
    #[inline(always)]
    fn sample_packed(&self, u: u64) -> u32 {
        self.columns[(u >> self.shift) as usize].pick(u)
    }

    /// (hits, wounds) for a uniform 64-bit draw.
    #[inline(always)]
    pub fn sample(&self, u: u64) -> (u32, u32) {
        unpack_outcome(self.sample_packed(u))
    }

    /// Each outcome's share of 2^64, in (hits, wounds) order, every outcome of the group
    /// once (impossible ones with share 0), added up from the alias columns: for the tests.
    pub fn shares(&self) -> Vec<((u32, u32), u128)> {
        let width = 1u128 << self.shift;
        let mut by_outcome = BTreeMap::new();
        for (c, column) in self.columns.iter().enumerate() {
            let below = u128::from(column.cut).saturating_sub(c as u128 * width);
            *by_outcome.entry(column.below).or_insert(0u128) += below;
            *by_outcome.entry(column.above).or_insert(0u128) += width - below;
        }
        let mut out = Vec::new();
        for hits in 0..=self.dice {
            for wounds in 0..=hits {
                let share = by_outcome
                    .get(&pack_outcome(hits, wounds))
                    .copied()
                    .unwrap_or(0);
                out.push(((hits, wounds), share));
            }
        }
        out
    }
}

/// ⌊count · 2^64 / total⌋ for count ≤ total < 2^126, by binary long division
/// (`count = total` gives exactly 2^64).
fn scaled(count: u128, total: u128) -> u128 {
    if count >= total {
        return 1u128 << 64;
    }
    let mut rest = count;
    let mut q = 0u128;
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
        let group_tables: Vec<Vec<GroupTable>> = (0..=2 * MAX_B_UNITS)
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
                        (u.front_dice(&formations[slot][0]), odds_on_a[slot])
                    }
                } else {
                    let i = slot - MAX_B_UNITS;
                    let a = &units[0];
                    let form = formations[0][0];
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
        let fast = EngageTables::new(
            &units,
            &facings,
            &formations,
            group_tables,
            &break_at_most,
            running,
        );
        Ok(Self {
            formations,
            fast,
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
        let kinds = AttackKind::for_present(&self.facings, usize::from(state.present));
        let present = |i: usize| state.present & (1 << i) != 0;
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
                let a_dice = kinds[i - 1].a_dice(a, &a_form);
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
        flank_rear_bonus(&self.facings, usize::from(present))
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

    /// One roll of the break dice as a value in `0..break_faces` (its rank among the
    /// `6^dice` equally likely rolls, lowest sums first), taken from the phase's break word.
    ///
    /// PERF: one multiply-high per test instead of one per die, and the phase's break
    /// tests share one word: at most four testers with at most 216 faces each take
    /// `216^4 < 2^32` of it, so each test's odds are exact to 2^-32 (the bound of
    /// [`DiceWord`](crate::dice::DiceWord)). The test passes when the value is below the
    /// count of passing rolls, which is the exact law of the dice's sum against the
    /// threshold.
    #[inline(always)]
    fn break_roll_from(&self, word: &mut crate::dice::DiceWord) -> u32 {
        word.take(self.fast.break_faces)
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
        self.break_faces() - passing
    }

    /// How many equally likely rolls the break dice have (`6^dice`).
    pub fn break_faces(&self) -> u64 {
        u64::from(self.fast.break_faces)
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
        if !a_gone && !b_gone {
            return (phase >= self.engagement.round_limit).then_some(EngagementEnd::RoundLimit);
        }
        let a_destroyed = state.taken[0] >= self.units[0].total_wounds();
        Some(end_by(a_gone, b_gone, a_destroyed, state.b_fled))
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
    /// the one-phase Monte Carlo and the reference for [`MeleeCombat::engage`] (which
    /// draws the same dice for the same phase); it cannot fail.
    ///
    /// Dice, in order: one word per attack group in [`MeleeCombat::attack_groups`] order
    /// (a group of more than [`MAX_TABLE_DICE`] dice takes one word per six dice), then
    /// one word for the phase's break tests, in unit order, drawn whether or not anyone
    /// tests (PERF: the engagement kernel draws it without a branch on the testers, an
    /// unpredictable branch that cost more than the word).
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
            let (hits, wounds) = match self.fast.table_refs[slot].get(group.dice as usize) {
                Some(&table) => unpack_outcome(self.sample_table(table, dice.next_u64())),
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
        let mut word = dice.word();
        while testers != 0 {
            let unit = testers.trailing_zeros() as usize;
            testers &= testers - 1;
            let failing = self.failing_rolls(unit, score.taken_after[unit], score.difference);
            let passing = self.break_faces() - failing;
            fled |= u8::from(u64::from(self.break_roll_from(&mut word)) >= passing) << unit;
        }
        result.score = score.score;
        result.fled = fled;
        result.destroyed = state.present & !score.alive_after;
        *state = self.after_phase(state, &score, fled);
        result
    }

    /// A whole engagement, phase after phase through [`MeleeCombat::fight_phase`]: the
    /// reference [`MeleeCombat::engage`] is tested against, engagement by engagement.
    #[cfg(test)]
    fn engage_by_phases(&self, dice: &mut DiceStream) -> EngagementOutcome {
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

    /// The packed outcome of the group table `table` (a [`GroupRef`] naming a table) for
    /// the word `u`.
    #[inline(always)]
    fn sample_table(&self, table: GroupRef, u: u64) -> u32 {
        // A count sampled from a table is one draw (the dice-count table's definition).
        #[cfg(any(test, feature = "count-dice"))]
        crate::dice::counting::DRAWS.with(|c| c.set(c.get() + 1));
        let column = (table >> 4) as usize + (u >> (64 - (table & 15))) as usize;
        self.fast.columns[column].pick(u)
    }

    /// The wounds of the attack group `group` (a [`GroupRef`]) in slot `slot` (as in
    /// `table_refs`), from `rng`, and the words drawn: one for a group sampled from a table,
    /// one for every six dice of a group rolled die by die ([`roll_group`]).
    #[inline(always)]
    fn group_wounds(&self, slot: usize, group: GroupRef, rng: &mut DiceStream) -> (u32, u64) {
        if group & 15 != 0 {
            (self.sample_table(group, rng.next_u64()) & 0xffff, 1)
        } else {
            // The stream goes in and out by value, so the kernel's copy of it never has
            // its address taken and can live in registers.
            let dice = group >> 4;
            let (wounds, after) = self.roll_large_group(slot, dice, rng.clone());
            *rng = after;
            (wounds, u64::from(dice.div_ceil(6)))
        }
    }

    /// A group too large for a table, die by die (kept out of the kernel's loop).
    #[cold]
    #[inline(never)]
    fn roll_large_group(&self, slot: usize, n: u32, mut dice: DiceStream) -> (u32, DiceStream) {
        let odds = if slot > MAX_B_UNITS {
            self.odds_on_b[slot - MAX_B_UNITS]
        } else {
            self.odds_on_a[slot]
        };
        let group = AttackGroup {
            attacker: 0,
            target: 0,
            dice: n,
            hit_weight: odds.hit_weight,
            wound_weight: odds.wound_weight,
        };
        let (_, wounds) = roll_group(&group, &mut dice);
        (wounds, dice)
    }

    /// A whole engagement: phases until one side is gone or the round limit.
    ///
    /// PERF: the same phases as [`MeleeCombat::fight_phase`], with the same dice in the
    /// same order (a unit test compares them engagement by engagement), read from
    /// `EngageTables`. Compiled once per number of side-B units, so that every unit's
    /// wounds taken is a register, not an array slot in memory; the stream is copied in
    /// and out for the same reason.
    #[inline]
    pub fn engage(&self, dice: &mut DiceStream) -> EngagementOutcome {
        self.engage_counting_words(dice).0
    }

    /// [`MeleeCombat::engage`], and the words it drew: one a group sampled from a table,
    /// one for every six dice of a group rolled die by die, and the break word of each
    /// phase (for the lanes' words, `melee/lockstep.rs`).
    #[inline]
    fn engage_counting_words(&self, dice: &mut DiceStream) -> (EngagementOutcome, u64) {
        match self.units.len() - 1 {
            1 => self.engage_against::<1>(dice),
            2 => self.engage_against::<2>(dice),
            3 => self.engage_against::<3>(dice),
            _ => self.engage_against::<MAX_B_UNITS>(dice),
        }
    }

    /// [`MeleeCombat::engage_counting_words`] against `B` side-B units.
    #[inline(always)]
    fn engage_against<const B: usize>(&self, dice: &mut DiceStream) -> (EngagementOutcome, u64) {
        let t = &self.fast;
        let mut rng = dice.clone();
        let mut words = 0u64;
        let mut taken_a = 0u32;
        let mut taken_b = [0u32; B];
        let mut present = self.fresh_state().present;
        let mut b_fled = 0u8;
        let mut phase = 1;
        // With one side-B unit, both units are present at the start of every phase.
        let full = present;
        let outcome = loop {
            let present_now = if B == 1 { full } else { present };
            // A is present at the start of every phase (else the engagement has ended).
            let at = t.at_present[usize::from(present_now)];
            let mut on_a = 0u32;
            let mut on_b = [0u32; B];
            for j in 0..B {
                if present_now & (2 << j) != 0 {
                    let b_at = t.unit_at[t.unit_base[1 + j] + taken_b[j] as usize];
                    let (wounds, drawn) = self.group_wounds(1 + j, b_at.group, &mut rng);
                    on_a += wounds;
                    words += drawn;
                    let a_group = t.a_groups[at.a_base[j] as usize + taken_a as usize];
                    if a_group != 0 {
                        let (wounds, drawn) =
                            self.group_wounds(MAX_B_UNITS + 1 + j, a_group, &mut rng);
                        on_b[j] = wounds;
                        words += drawn;
                    }
                }
            }
            // Casualties, capped at the wounds each unit has left; who still has models.
            // Units not present suffered nothing and are masked out.
            let left = t.total_wounds[0] - taken_a;
            let suffered = on_a.min(left);
            taken_a += suffered;
            let mut alive = u8::from(suffered < left);
            let score_b = suffered + at.bonus;
            let mut score_a = 0;
            for j in 0..B {
                let left = t.total_wounds[1 + j] - taken_b[j];
                let suffered = on_b[j].min(left);
                taken_b[j] += suffered;
                alive |= u8::from(suffered < left) << (1 + j);
                score_a += suffered;
            }
            alive &= present_now;
            let a_wins = 0u8.wrapping_sub(u8::from(score_a > score_b));
            let b_wins = 0u8.wrapping_sub(u8::from(score_b > score_a));
            let testers = alive & ((!1 & a_wins) | (1 & b_wins));
            let difference = score_a.abs_diff(score_b);
            // Break tests: every unit's verdict is worked out, the testers' kept. The k-th
            // tester (in unit order) takes the k-th roll from the phase's break word; A
            // never tests beside a side-B unit, so it takes the first.
            let fled = {
                words += 1;
                let mut word = rng.word();
                let mut sums = [0u32; B];
                for sum in &mut sums {
                    *sum = t.break_sum[self.break_roll_from(&mut word) as usize] + difference;
                }
                let margin = |base: usize, taken: u32| {
                    u32::from(t.unit_at[base + taken as usize].break_margin)
                };
                let mut flees = u8::from(sums[0] >= margin(0, taken_a));
                for (j, &taken) in taken_b.iter().enumerate() {
                    let rank = (testers & ((2 << j) - 2)).count_ones() as usize;
                    let margin = margin(t.unit_base[1 + j], taken);
                    flees |= u8::from(sums[rank.min(B - 1)] >= margin) << (1 + j);
                }
                testers & flees
            };
            present = alive & !fled;
            b_fled |= fled & !1;
            let a_gone = present & 1 == 0;
            let b_gone = present & !1 == 0;
            if a_gone | b_gone | (phase >= self.engagement.round_limit) {
                let a_destroyed = taken_a >= t.total_wounds[0];
                let flags = usize::from(a_gone)
                    | usize::from(b_gone) << 1
                    | usize::from(a_destroyed) << 2
                    | usize::from(b_fled != 0) << 3;
                let mut models_lost = [u32::from(t.unit_at[taken_a as usize].lost), 0];
                for (j, &taken) in taken_b.iter().enumerate() {
                    models_lost[1] +=
                        u32::from(t.unit_at[t.unit_base[1 + j] + taken as usize].lost);
                }
                break EngagementOutcome {
                    end: END_BY_FLAGS[flags],
                    phases: phase,
                    models_lost,
                };
            }
            phase += 1;
        };
        *dice = rng;
        (outcome, words)
    }
}

/// How an engagement ends when A is gone (`a_gone`: fled or destroyed, `a_destroyed`
/// telling which) or B is (`b_gone`: every B unit, `b_fled` when any fled); neither gone:
/// the round limit. [`MeleeCombat::end_of`] and the kernel's [`END_BY_FLAGS`] both read it.
const fn end_by(a_gone: bool, b_gone: bool, a_destroyed: bool, b_fled: bool) -> EngagementEnd {
    match (a_gone, b_gone) {
        (true, true) => EngagementEnd::BothOut,
        (true, false) if a_destroyed => EngagementEnd::ADestroyed,
        (true, false) => EngagementEnd::AFlees,
        (false, true) if b_fled => EngagementEnd::BFlees,
        (false, true) => EngagementEnd::BDestroyed,
        (false, false) => EngagementEnd::RoundLimit,
    }
}

/// [`end_by`] for every `a_gone | b_gone << 1 | a_destroyed << 2 | b_fled << 3`, as the
/// kernel indexes it.
const END_BY_FLAGS: [EngagementEnd; 16] = {
    let mut ends = [EngagementEnd::RoundLimit; 16];
    let mut flags = 0;
    while flags < 16 {
        ends[flags] = end_by(
            flags & 1 != 0,
            flags & 2 != 0,
            flags & 4 != 0,
            flags & 8 != 0,
        );
        flags += 1;
    }
    ends
};

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
        let faces = BigUint::from(self.break_faces());
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
        let faces = self.break_faces() as f64;
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
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// Counts one engagement.
    pub fn record(&mut self, outcome: &EngagementOutcome) {
        self.ends[(outcome.phases as usize - 1) * END_COUNT + outcome.end.index()] += 1;
        self.models_lost[0][outcome.models_lost[0] as usize] += 1;
        self.models_lost[1][outcome.models_lost[1] as usize] += 1;
    }

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

    /// Adds `n` simulated engagements into `histogram`, fought in [`LANES`] lanes, each on
    /// its own stream split from `dice` (`systems/melee/engagement/lockstep.rs`): what a run's block
    /// does. Returns the words drawn from all streams (the lanes' keys and the lanes'
    /// words), for the benches' and `dice_count`'s words per engagement.
    ///
    /// [`LANES`]: crate::dice::lanes::LANES
    pub fn engagement_block(
        &self,
        dice: &mut DiceStream,
        n: u64,
        histogram: &mut EngagementHistogram,
    ) -> u64 {
        crate::dice::lanes::fight_block(
            dice,
            n,
            histogram,
            |lanes, h| self.all_at_once(lanes, n, h),
            |dice, h| {
                let (outcome, words) = self.engage_counting_words(dice);
                h.record(&outcome);
                words
            },
        )
    }
}

/// Simulates `trials` first phases, reproducibly on any thread count.
pub fn simulate_phases(
    combat: &MeleeCombat,
    seed: u64,
    trials: u64,
    control: &RunControl,
) -> Result<PhaseHistogram, Interrupted> {
    run_block_range(
        seed,
        trials,
        all_blocks(trials),
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
    run_block_range(
        seed,
        trials,
        all_blocks(trials),
        || combat.empty_engagement_histogram(),
        |dice, n, h| {
            combat.engagement_block(dice, n, h);
        },
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

    pub(super) fn unit(
        models: u32,
        frontage: u32,
        skill: u32,
        power: u32,
        defense: u32,
    ) -> UnitProfile {
        UnitProfile {
            models,
            frontage,
            skill,
            power,
            defense,
            ..UnitProfile::default()
        }
    }

    /// `u` with discipline 10: it never flees, so it fights until destroyed.
    pub(super) fn steady(u: UnitProfile) -> UnitProfile {
        UnitProfile {
            discipline: 10,
            ..u
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
    fn group_tables_sample_their_shares() {
        // Every alias column's two parts, found by sampling at their edges, add up to the
        // shares the table reports, and those are the inverse CDF's shares.
        let table = GroupTable::new(10, 24, 12);
        let width = 1u128 << table.shift;
        let mut seen = BTreeMap::new();
        for (c, column) in table.columns.iter().enumerate() {
            let base = c as u128 * width;
            let cut = u128::from(column.cut).max(base);
            if cut > base {
                assert_eq!(table.sample_packed(base as u64), column.below);
                assert_eq!(table.sample_packed((cut - 1) as u64), column.below);
                *seen.entry(column.below).or_insert(0u128) += cut - base;
            }
            if cut < base + width {
                assert_eq!(table.sample_packed(cut as u64), column.above);
                assert_eq!(table.sample_packed((base + width - 1) as u64), column.above);
                *seen.entry(column.above).or_insert(0u128) += base + width - cut;
            }
        }
        let total = 36u128.pow(10);
        let mut cumulative = 0u128;
        let mut below = 0u128;
        for ((h, w), share) in table.shares() {
            let count = {
                let choose = |n: u32, k: u32| -> u128 {
                    (0..k).fold(1u128, |a, i| a * u128::from(n - i) / u128::from(i + 1))
                };
                choose(10, h)
                    * choose(h, w)
                    * 12u128.pow(w)
                    * 12u128.pow(h - w)
                    * 12u128.pow(10 - h)
            };
            cumulative += count;
            let upper = scaled(cumulative, total);
            assert_eq!(share, upper - below, "({h},{w})");
            below = upper;
            assert_eq!(seen.get(&pack_outcome(h, w)).copied().unwrap_or(0), share);
        }
    }

    /// Engagements of every shape: front, flanks (both orders, with and without a front),
    /// rear, multi-wound models, every break-dice option, groups too large for a table,
    /// and the round limit.
    pub(super) fn engagement_cases() -> Vec<Engagement> {
        let mut cases = vec![Engagement::one_on_one(
            unit(20, 5, 4, 3, 3),
            unit(20, 5, 3, 4, 3),
        )];
        let mut e = Engagement::one_on_one(unit(16, 4, 3, 3, 4), unit(12, 4, 4, 3, 3));
        e.b.push((Facing::Flank, unit(5, 5, 3, 4, 3)));
        e.b.push((Facing::Rear, unit(4, 4, 3, 3, 3)));
        e.b.push((Facing::Flank, unit(3, 1, 4, 3, 3)));
        e.break_dice = BreakDice::ThreeD6;
        cases.push(e);
        cases.push(Engagement {
            a: unit(13, 4, 3, 3, 3),
            b: vec![
                (Facing::Flank, unit(2, 2, 3, 3, 3)),
                (Facing::Flank, unit(3, 3, 4, 4, 3)),
                (Facing::Rear, unit(6, 3, 3, 3, 3)),
            ],
            break_dice: BreakDice::OneD6,
            round_limit: 9,
        });
        let mut big = Engagement::one_on_one(
            UnitProfile {
                attacks: 3,
                wounds: 2,
                ..unit(60, 12, 3, 5, 3)
            },
            steady(unit(40, 20, 3, 3, 3)),
        );
        big.round_limit = 50;
        cases.push(big);
        let steady_unit = steady(unit(8, 2, 3, 3, 6));
        let mut steady = Engagement::one_on_one(steady_unit.clone(), steady_unit);
        steady.round_limit = 3;
        cases.push(steady);
        cases
    }

    /// The engagement kernel draws the same dice as phase after phase of `fight_phase`
    /// and ends every engagement the same way, in every case of [`engagement_cases`], and
    /// reports the words it drew.
    #[test]
    fn engage_equals_phase_by_phase_engagement_by_engagement() {
        let cases = engagement_cases();
        for (case, engagement) in cases.into_iter().enumerate() {
            let combat = MeleeCombat::new(engagement).unwrap();
            let mut fast = DiceStream::for_block(40 + case as u64, 0);
            let mut reference = fast.clone();
            let mut ends = [0u32; END_COUNT];
            for n in 0..20_000 {
                let before = fast.clone();
                let (mine, words) = combat.engage_counting_words(&mut fast);
                let theirs = combat.engage_by_phases(&mut reference);
                assert_eq!(mine, theirs, "case {case}, engagement {n}");
                assert_eq!(fast, reference, "case {case}, engagement {n}: same dice");
                assert_eq!(
                    before.words_until(&fast, 10_000),
                    Some(words),
                    "case {case}, engagement {n}: the words it reports"
                );
                ends[mine.end.index()] += 1;
            }
            // The check is not vacuous: several different ends happen in every case.
            assert!(
                ends.iter().filter(|&&e| e > 0).count() >= 2,
                "case {case}: {ends:?}"
            );
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
