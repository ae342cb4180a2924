//! Frontier quick battles, whole (rule 19, docs/systems/frontier.md): rounds of fire combat,
//! movement, melee and recovery over two arrays of stacks, units going normal →
//! disrupted → routed → eliminated, leaders lost, and the victory reading.
//!
//! Why this module exists: the single rolls live in [`crate::systems::frontier::rolls`]; this is
//! the battle loop that strings them together. A [`FrontierBattle`] is plain data,
//! validated once by [`FrontierCombat::new`] (stacking limits of 19.1, the array of rows,
//! the melee CRT's shape, ratings and levels); after that [`FrontierCombat::fight_with`] cannot
//! fail and does not allocate. The readings of what rule 19 leaves open are in
//! `docs/systems/frontier.md`.

use crate::dice::{DiceStream, DiceWord};
use crate::rules::RulesError;
use crate::systems::frontier::rolls::{
    melee_multiplier, FireRoll, MoveRoll, RecoveryRoll, Terrain, UnitType, MAX_FIRE_CF, MAX_LEADER,
    MAX_LEVEL,
};

/// Most lanes (stacks of the side that sets up first).
pub const MAX_LANES: usize = 8;
/// Most rows of stacks a side may array in one lane.
pub const MAX_ROWS: usize = 4;
/// Most units a side may field (leaders are not units).
pub const MAX_UNITS: usize = 32;
/// Most stacks a side may field.
pub const MAX_STACKS: usize = MAX_LANES * MAX_ROWS;
// The kernel keeps indices in range with `& (N - 1)` masks.
const _: () = assert!(
    MAX_LANES.is_power_of_two()
        && MAX_ROWS.is_power_of_two()
        && MAX_UNITS.is_power_of_two()
        && MAX_STACKS.is_power_of_two()
);

/// The largest printed melee CF accepted.
pub const MAX_MELEE_CF: u32 = 20;

/// One side's loss on the melee CRT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CrtLoss {
    /// No effect.
    None,
    /// This many of the side's engaged units are eliminated.
    Eliminate(u8),
    /// Every engaged unit of the side is routed.
    Rout,
}

/// The melee CRT the analysis file supplies (the game's own is not published with rule 19):
/// odds columns in ascending order, one row per modified die roll from `first_roll` up.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MeleeCrt {
    /// (attacker, defender) ratios, e.g. (1, 2), (1, 1), (2, 1), (3, 1).
    pub columns: Vec<(u32, u32)>,
    /// The modified roll of the first row; rows are consecutive.
    pub first_roll: i32,
    /// `cells[row][column]` = (attacker's loss, defender's loss).
    pub cells: Vec<Vec<(CrtLoss, CrtLoss)>>,
}

impl MeleeCrt {
    pub fn validate(&self) -> Result<(), RulesError> {
        if self.columns.is_empty() || self.cells.is_empty() {
            return Err(RulesError::new(
                "crt",
                "the melee CRT needs at least one odds column and one row",
            ));
        }
        for (i, &(a, d)) in self.columns.iter().enumerate() {
            if a == 0 || d == 0 {
                return Err(RulesError::new(
                    format!("crt.columns[{i}]"),
                    format!("odds {a}:{d}: both sides of a ratio are at least 1"),
                ));
            }
            if i > 0 {
                let (pa, pd) = self.columns[i - 1];
                // a/d must exceed pa/pd: compare cross-products.
                if u64::from(a) * u64::from(pd) <= u64::from(pa) * u64::from(d) {
                    return Err(RulesError::new(
                        format!("crt.columns[{i}]"),
                        format!(
                            "odds {a}:{d} after {pa}:{pd}: columns go from the lowest odds to the highest, each above the one before"
                        ),
                    ));
                }
            }
        }
        for (r, row) in self.cells.iter().enumerate() {
            if row.len() != self.columns.len() {
                return Err(RulesError::new(
                    format!("crt.rows[{r}]"),
                    format!(
                        "row for roll {} has {} cells; the CRT has {} odds columns, one cell each",
                        self.first_roll + r as i32,
                        row.len(),
                        self.columns.len()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The highest column whose odds the attacker reaches (`att/def ≥ a/d`); odds below
    /// the first column use the first.
    ///
    /// PERF: the columns reached are counted without a branch (they rise, so the ones
    /// reached are a prefix) instead of searched from the right.
    pub fn column_for(&self, attacker: u32, defender: u32) -> usize {
        let reached: usize = self
            .columns
            .iter()
            .map(|&(a, d)| {
                usize::from(
                    u64::from(attacker) * u64::from(d) >= u64::from(defender) * u64::from(a),
                )
            })
            .sum();
        reached.saturating_sub(1)
    }

    /// The cell for a modified roll (clamped to the printed rows) in a column.
    pub fn cell(&self, roll: i32, column: usize) -> (CrtLoss, CrtLoss) {
        let row = (roll - self.first_roll).clamp(0, self.cells.len() as i32 - 1) as usize;
        self.cells[row][column]
    }
}

/// A combat unit: its type and printed fire and melee CFs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Unit {
    pub kind: UnitType,
    pub fire_cf: u32,
    pub melee_cf: u32,
}

/// A stack: its units and the command rating of a leader with it (0: none).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stack {
    pub units: Vec<Unit>,
    pub leader: u32,
}

/// Whether a side's stacks try to move atop the enemy (a policy of docs/systems/frontier.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MovePolicy {
    /// Every eligible front stack tries to melee.
    Aggressive,
    /// Never move.
    FireOnly,
}

/// How victory is read at the end (docs/systems/frontier.md, \[option\]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VictoryRule {
    /// Fewer units lost (eliminated + still routed) wins; equal is a draw.
    FewerLost,
    /// A smaller share of the side's units lost wins; equal is a draw.
    FewerLostShare,
}

/// One side: commitment level, primary leader, and its stacks lane by lane, front to back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Side {
    pub level: u32,
    pub primary_leader: u32,
    /// `lanes[lane][row]`.
    pub lanes: Vec<Vec<Stack>>,
    pub move_policy: MovePolicy,
    /// A front stack the enemy has moved atop tries to move away (+1 DRM) before the
    /// melee instead of standing (not for `FireOnly`, which never moves).
    pub avoid_melee: bool,
}

/// A whole quick battle, as the designer describes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FrontierBattle {
    pub terrain: Terrain,
    pub severe_weather: bool,
    /// The initiative side: 0 (A) or 1 (B).
    pub initiative: usize,
    /// The side that won surprise (the other was taken by surprise), if any.
    pub surprise: Option<usize>,
    pub sides: [Side; 2],
    pub crt: MeleeCrt,
    /// P(a leader is lost) per event (9.5.9, 9.5.12) as numerator / denominator.
    pub leader_loss: (u32, u32),
    /// Whether the non-initiative side tries for the extra round (19.1).
    pub extra_round: bool,
    pub victory: VictoryRule,
}

/// Stacking limit of 19.1 for one type in one terrain (units that count).
fn stacking_limit(kind: UnitType, terrain: Terrain) -> u32 {
    use Terrain::*;
    use UnitType::*;
    match (kind, terrain) {
        (Warrior, Rough) => 2,
        (Warrior, _) => 3,
        (Regular, Settled) => 3,
        (Regular, _) => 1,
        (Militia, Settled) => 3,
        (Militia, _) => 2,
        (Rifle, _) => u32::MAX,
    }
}

/// Checks one stack against 19.1: rifles and leaders do not count; every counting type
/// present caps the stack's counting units at its limit; a regular in rough terrain may not
/// stack, and in wilderness only with one militia.
pub fn check_stacking(stack: &Stack, terrain: Terrain) -> Result<(), String> {
    let counting: Vec<UnitType> = stack
        .units
        .iter()
        .map(|u| u.kind)
        .filter(|&k| k != UnitType::Rifle)
        .collect();
    let total = counting.len() as u32;
    let regular_special = terrain != Terrain::Settled;
    for &kind in &counting {
        if kind == UnitType::Regular && regular_special {
            continue; // the regular's own rules below
        }
        let limit = stacking_limit(kind, terrain);
        if total > limit {
            return Err(format!(
                "{total} units that count for stacking with a {} in {} terrain: the limit is {limit} (rifles and leaders do not count)",
                kind.name(),
                terrain.name()
            ));
        }
    }
    let regulars = counting.iter().filter(|&&k| k == UnitType::Regular).count();
    if regulars > 1 && regular_special {
        return Err(format!(
            "{regulars} regulars in one stack in {} terrain: the limit is 1",
            terrain.name()
        ));
    }
    if regulars > 0 {
        let others: Vec<UnitType> = counting
            .iter()
            .copied()
            .filter(|&k| k != UnitType::Regular)
            .collect();
        match terrain {
            Terrain::Rough if !others.is_empty() => {
                return Err("a regular in rough terrain may not stack with other units (rifles and leaders excepted)".into())
            }
            Terrain::Wilderness
                if others.iter().any(|&k| k != UnitType::Militia) || others.len() > 1 =>
            {
                return Err("a regular in wilderness may stack only with one militia".into())
            }
            _ => {}
        }
    }
    Ok(())
}

/// One unit of the compiled battle.
#[derive(Clone, Copy, Debug)]
struct CompiledUnit {
    /// Faces 1–6 that hit when it fires: bit `f − 1`.
    fire_faces: u8,
    melee_strength: u32,
    kind: UnitType,
    stack: usize,
    lane: usize,
}

/// One stack of the compiled battle.
#[derive(Clone, Copy, Debug)]
struct CompiledStack {
    lane: usize,
    leader: u32,
    first_unit: usize,
    unit_count: usize,
}

/// A validated battle, ready for the kernel.
#[derive(Clone, Debug)]
pub struct FrontierCombat {
    battle: FrontierBattle,
    units: [Vec<CompiledUnit>; 2],
    stacks: [Vec<CompiledStack>; 2],
    lanes: usize,
    /// The kernel's bit masks and roll tables, per side.
    masks: [SideMasks; 2],
    /// The melee CRT as loss codes by attacker, column and die face:
    /// `melee_cells[(attacker · columns + column) · 6 + face]` = (attacker's, defender's).
    melee_cells: Vec<[u8; 2]>,
    /// `nearest_lane[firer_lane][lanes]`: of the lanes in the bit set `lanes`, the one
    /// nearest `firer_lane`, the lower-numbered at equal distance.
    nearest_lane: [[u8; 1 << MAX_LANES]; MAX_LANES],
    /// The odds column for every pair of melee strengths a stack can bring, when they
    /// are few: `odds_columns[attacker · strengths + defender]` (`strengths` = the
    /// largest stack strength + 1; empty when the table would pass [`ODDS_TABLE`]).
    odds_columns: Vec<u8>,
    strengths: usize,
    /// The tables of the kernel in lanes, where the battle suits it (`lockstep`).
    lane_tables: Option<lockstep::LaneTables>,
    /// The tables of the bit-sliced kernel, where the battle suits it (`sliced`).
    sliced: Option<sliced::SlicedTables>,
}

/// Sides of at most this many units get a table of the stacks holding any set of their
/// units (`2^12` entries of 2 bytes).
const STACK_TABLE_UNITS: usize = 12;

/// The most entries of [`FrontierCombat`]'s odds-column table.
const ODDS_TABLE: usize = 1 << 14;

/// A melee loss as a code: no loss (or `Eliminate(0)`), `n` eliminated, or this.
const LOSS_ROUT: u8 = u8::MAX;

fn loss_code(loss: CrtLoss) -> u8 {
    match loss {
        CrtLoss::None => 0,
        CrtLoss::Rout => LOSS_ROUT,
        // No side has more than MAX_UNITS units to lose.
        CrtLoss::Eliminate(n) => n.min(MAX_UNITS as u8),
    }
}

/// A side whose every stack has at most this many units takes its melees' strengths and
/// losses from tables ([`SideMasks::melee_losses`], [`SideMasks::stack_strength`]).
const SMALL_STACK_UNITS: usize = 4;
/// A small stack's units, as bits from its first unit.
const SMALL_STACK_MASK: u32 = (1 << SMALL_STACK_UNITS) - 1;
/// The sets of a small stack's units: the keys of its tables.
const SMALL_STACK_KEYS: usize = 1 << SMALL_STACK_UNITS;
// A `melee_losses` entry holds a stack's losses to 1..=SMALL_STACK_UNITS eliminations.
const _: () = assert!(SMALL_STACK_UNITS * SMALL_STACK_UNITS <= 16);

/// The units of `fights` that an elimination of `code` units takes: the owner loses its
/// weakest first, disrupted before undisrupted, then the lowest melee strength, then the
/// last listed (docs/systems/frontier.md). The kernel reads it from
/// [`SideMasks::melee_losses`], built with this, for sides whose every stack has at most
/// [`SMALL_STACK_UNITS`] units, and runs it for the other sides.
fn melee_victims(fights: u32, disrupted: u32, code: u32, strengths: &[u32; MAX_UNITS]) -> u32 {
    let mut left = fights;
    let mut lost = 0;
    for _ in 0..code {
        if left == 0 {
            break;
        }
        // Taking a unit changes neither which of the others are disrupted nor their order.
        let weak = left & disrupted;
        let mut pool = if weak != 0 { weak } else { left };
        let mut victim = pool.trailing_zeros() as usize;
        while pool != 0 {
            let u = pool.trailing_zeros() as usize;
            pool &= pool - 1;
            if strengths[u] <= strengths[victim] {
                victim = u;
            }
        }
        lost |= 1 << victim;
        left &= !(1 << victim);
    }
    lost
}

/// How one battle ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BattleOutcome {
    /// `Some(side)` won, `None` a draw.
    pub winner: Option<usize>,
    pub rounds: u32,
    pub eliminated: [u32; 2],
    pub routed: [u32; 2],
    pub disrupted: [u32; 2],
    pub leaders_lost: [u32; 2],
    /// Units lost (eliminated or routed) by each side at the end of rounds 1–4 (rounds
    /// not fought repeat the last).
    pub lost_after_round: [[u8; 2]; 4],
}

impl BattleOutcome {
    /// A battle of `rounds` rounds with nothing counted yet.
    fn after(rounds: u32) -> Self {
        Self {
            winner: None,
            rounds,
            eliminated: [0; 2],
            routed: [0; 2],
            disrupted: [0; 2],
            leaders_lost: [0; 2],
            lost_after_round: [[0; 2]; 4],
        }
    }
}

impl FrontierCombat {
    /// Validates the battle; errors name the field (`a.lanes[0][1]`, `crt.rows[2]` …).
    pub fn new(battle: FrontierBattle) -> Result<Self, RulesError> {
        battle.crt.validate()?;
        if battle.initiative > 1 || battle.surprise.is_some_and(|s| s > 1) {
            return Err(RulesError::new("initiative", "sides are a and b"));
        }
        let (num, den) = battle.leader_loss;
        if den == 0 || num > den {
            return Err(RulesError::new(
                "leader_loss",
                format!("leader loss {num}/{den}: a probability from 0 to 1, e.g. 1/6"),
            ));
        }
        let names = ["a", "b"];
        for (s, side) in battle.sides.iter().enumerate() {
            let name = names[s];
            if !(1..=MAX_LEVEL).contains(&side.level) {
                return Err(RulesError::new(
                    format!("{name}.level"),
                    format!(
                        "commitment level {}: the game's levels are 1 to {MAX_LEVEL}",
                        side.level
                    ),
                ));
            }
            if !(1..=MAX_LEADER).contains(&side.primary_leader) {
                return Err(RulesError::new(
                    format!("{name}.primary_leader"),
                    format!(
                        "primary leader rating {}: command ratings are 1 to {MAX_LEADER}",
                        side.primary_leader
                    ),
                ));
            }
            if side.lanes.is_empty() || side.lanes.len() > MAX_LANES {
                return Err(RulesError::new(
                    format!("{name}.lanes"),
                    format!(
                        "{} lanes: a battle has 1 to {MAX_LANES} lanes of stacks",
                        side.lanes.len()
                    ),
                ));
            }
            for (l, lane) in side.lanes.iter().enumerate() {
                if lane.len() > MAX_ROWS {
                    return Err(RulesError::new(
                        format!("{name}.lanes[{l}]"),
                        format!("{} rows: at most {MAX_ROWS}", lane.len()),
                    ));
                }
                for (r, stack) in lane.iter().enumerate() {
                    let field = format!("{name}.lanes[{l}][{r}]");
                    if stack.units.is_empty() {
                        return Err(RulesError::new(field, "a stack needs at least one unit"));
                    }
                    if stack.leader > MAX_LEADER {
                        return Err(RulesError::new(
                            format!("{field}.leader"),
                            format!("leader rating {}: command ratings are 1 to {MAX_LEADER} (0 for none)", stack.leader),
                        ));
                    }
                    for (u, unit) in stack.units.iter().enumerate() {
                        if !(1..=MAX_FIRE_CF).contains(&unit.fire_cf)
                            || !(1..=MAX_MELEE_CF).contains(&unit.melee_cf)
                        {
                            return Err(RulesError::new(
                                format!("{field}.units[{u}]"),
                                format!("fire CF {} / melee CF {}: fire CF is 1 to {MAX_FIRE_CF}, melee CF 1 to {MAX_MELEE_CF}", unit.fire_cf, unit.melee_cf),
                            ));
                        }
                    }
                    check_stacking(stack, battle.terrain).map_err(|m| RulesError::new(field, m))?;
                }
            }
            let units: usize = side.lanes.iter().flatten().map(|s| s.units.len()).sum();
            if units > MAX_UNITS {
                return Err(RulesError::new(
                    format!("{name}.lanes"),
                    format!("{units} units: at most {MAX_UNITS} a side"),
                ));
            }
        }
        // The array (19.1): the side that sets up first (the non-initiative side, or the side
        // taken by surprise) puts one stack per lane; the other at least one opposite each,
        // and a row k + 1 only when every lane has k.
        let first = match battle.surprise {
            Some(winner) => 1 - winner,
            None => 1 - battle.initiative,
        };
        let second = 1 - first;
        let lanes = battle.sides[first].lanes.len();
        if battle.sides[second].lanes.len() != lanes {
            return Err(RulesError::new(
                format!("{}.lanes", names[second]),
                format!(
                    "side {} sets up first in {lanes} lane(s); side {} must place stacks opposite each of them and in no other lane (it has {} lanes)",
                    names[first].to_uppercase(),
                    names[second].to_uppercase(),
                    battle.sides[second].lanes.len()
                ),
            ));
        }
        for (l, lane) in battle.sides[first].lanes.iter().enumerate() {
            if lane.len() != 1 {
                return Err(RulesError::new(
                    format!("{}.lanes[{l}]", names[first]),
                    format!(
                        "side {} sets up first, in one row: one stack per lane, got {}",
                        names[first].to_uppercase(),
                        lane.len()
                    ),
                ));
            }
        }
        let depths: Vec<usize> = battle.sides[second].lanes.iter().map(Vec::len).collect();
        for (l, &depth) in depths.iter().enumerate() {
            if depth == 0 {
                return Err(RulesError::new(
                    format!("{}.lanes[{l}]", names[second]),
                    format!(
                        "side {} must place at least one stack opposite each enemy stack; lane {} is empty",
                        names[second].to_uppercase(),
                        l + 1
                    ),
                ));
            }
            let shallowest = *depths.iter().min().unwrap_or(&0);
            if depth > shallowest + 1 {
                return Err(RulesError::new(
                    format!("{}.lanes[{l}][{}]", names[second], shallowest + 1),
                    format!(
                        "lanes[{l}] has {depth} rows while another lane has only {shallowest}: a further row may not be arrayed until every enemy stack has as many against it"
                    ),
                ));
            }
        }
        let mut units: [Vec<CompiledUnit>; 2] = [Vec::new(), Vec::new()];
        let mut stacks: [Vec<CompiledStack>; 2] = [Vec::new(), Vec::new()];
        for s in 0..2 {
            for (l, lane) in battle.sides[s].lanes.iter().enumerate() {
                for stack in lane {
                    let index = stacks[s].len();
                    stacks[s].push(CompiledStack {
                        lane: l,
                        leader: stack.leader,
                        first_unit: units[s].len(),
                        unit_count: stack.units.len(),
                    });
                    for unit in &stack.units {
                        let fire = FireRoll {
                            unit: unit.kind,
                            cf: unit.fire_cf,
                            terrain: battle.terrain,
                            severe_weather: battle.severe_weather,
                        };
                        let fire_faces = (1..=6u32)
                            .filter(|&f| fire.hits(f))
                            .fold(0u8, |mask, f| mask | 1 << (f - 1));
                        units[s].push(CompiledUnit {
                            fire_faces,
                            melee_strength: unit.melee_cf
                                * melee_multiplier(unit.kind, battle.terrain),
                            kind: unit.kind,
                            stack: index,
                            lane: l,
                        });
                    }
                }
            }
        }
        let masks = [0, 1].map(|s| Self::side_masks(&battle, s, &units[s], &stacks[s]));
        let crt = &battle.crt;
        let mut melee_cells = Vec::with_capacity(2 * crt.columns.len() * 6);
        for attacker in 0..2 {
            let drm = (battle.sides[attacker].level as i32
                - battle.sides[1 - attacker].level as i32)
                .clamp(-3, 3);
            for column in 0..crt.columns.len() {
                for face in 1..=6 {
                    let (a, d) = crt.cell(face + drm, column);
                    melee_cells.push([loss_code(a), loss_code(d)]);
                }
            }
        }
        // Nearest first, the lower-numbered at equal distance (docs/systems/frontier.md).
        // The first kernel sorted by `(distance, lane < firer's lane)`, which put the higher
        // lane first, against the reading and the oracle (no oracle case had a firer with
        // enemy lanes at equal distance on both sides).
        let nearest_lane = std::array::from_fn(|firer_lane| {
            std::array::from_fn(|set: usize| {
                (0..MAX_LANES)
                    .filter(|&l| set >> l & 1 == 1)
                    .min_by_key(|&l| (l.abs_diff(firer_lane), l))
                    .unwrap_or(0) as u8
            })
        });
        // Strengths in a melee are sums over one stack's units.
        let mut largest = 0;
        for s in 0..2 {
            for stack in &stacks[s] {
                let units = &units[s][stack.first_unit..stack.first_unit + stack.unit_count];
                largest = largest.max(units.iter().map(|u| u.melee_strength as usize).sum());
            }
        }
        let strengths = largest + 1;
        let mut odds_columns = Vec::new();
        if strengths * strengths <= ODDS_TABLE && battle.crt.columns.len() <= 256 {
            for a in 0..strengths as u32 {
                for d in 0..strengths as u32 {
                    odds_columns.push(battle.crt.column_for(a, d) as u8);
                }
            }
        }
        let mut combat = Self {
            battle,
            units,
            stacks,
            lanes,
            masks,
            melee_cells,
            nearest_lane,
            odds_columns,
            strengths,
            lane_tables: None,
            sliced: None,
        };
        combat.lane_tables = lockstep::LaneTables::new(&combat);
        combat.sliced = sliced::SlicedTables::new(&combat);
        Ok(combat)
    }

    pub fn battle(&self) -> &FrontierBattle {
        &self.battle
    }

    /// The most d6 one battle can roll, where both sides stand in one row a lane: a face
    /// for the extra round, then in each of the most rounds a fire die and a leader roll
    /// a unit, a move die a side a lane, a CRT die and a leader roll a side a lane, and a
    /// recovery die a unit. The lanes kernel's window holds this many faces a battle; the
    /// bit-sliced kernel draws at most this many.
    pub fn most_faces(&self) -> usize {
        let b = &self.battle;
        let units = self.units[0].len() + self.units[1].len();
        let rounds = (b.sides[b.initiative].primary_leader + u32::from(b.extra_round)) as usize;
        1 + rounds * (3 * units + 5 * self.lanes)
    }

    /// Whether runs fight this battle bit-sliced, 256 a sweep (`frontier_battle/sliced.rs`:
    /// both sides in one row a lane, stacks of at most four units, every pair of stack
    /// strengths in the odds table, leader loss on a d6, a CRT of at most 24 columns);
    /// otherwise they fight it in lanes.
    pub fn bit_sliced(&self) -> bool {
        self.sliced.is_some()
    }
}

/// Where a battle's dice come from: a face of a d6 (`0..6`, face − 1) and a uniform value
/// in `0..n` (the leader-loss roll).
///
/// The kernel is generic over it (no `dyn`): battles take their dice from [`PackedDice`];
/// the tests run the same kernel on one word per die, the order the reference kernel of
/// the tests draws, and compare the two battle by battle.
pub trait BattleDice {
    /// A d6 face less one, uniform in `0..6`.
    fn face(&mut self) -> u32;
    /// A uniform value in `0..n`, `n ≥ 1`.
    fn below(&mut self, n: u32) -> u32;
}

/// One word per die: every die is a fresh `next_u64`.
impl BattleDice for DiceStream {
    #[inline(always)]
    fn face(&mut self) -> u32 {
        DiceStream::below(self, 6)
    }
    #[inline(always)]
    fn below(&mut self, n: u32) -> u32 {
        DiceStream::below(self, n)
    }
}

/// d6 faces cut twelve from a word (the product of the sides, 6^12 < 2^32, keeps each
/// face's bias under 2^-32 of its probability: the bound of [`crate::dice`]); any other
/// die (a leader-loss roll out of a denominator other than 6) takes a whole word.
///
/// PERF: a battle of six stacks a side rolls about 96 dice; one word each was 96 words,
/// twelve to a word about 8.
pub struct PackedDice<'a> {
    dice: &'a mut DiceStream,
    word: DiceWord,
    left: u32,
    /// Words drawn so far.
    words: u64,
}

/// d6 faces one word yields.
const FACES_PER_WORD: u32 = 12;

impl<'a> PackedDice<'a> {
    pub fn new(dice: &'a mut DiceStream) -> Self {
        Self {
            dice,
            word: DiceWord(0),
            left: 0,
            words: 0,
        }
    }

    /// Words drawn so far: for faces, and one for each `below` of other than 6.
    pub fn words(&self) -> u64 {
        self.words
    }
}

impl BattleDice for PackedDice<'_> {
    #[inline(always)]
    fn face(&mut self) -> u32 {
        if self.left == 0 {
            self.word = self.dice.word();
            self.left = FACES_PER_WORD;
            self.words += 1;
        }
        self.left -= 1;
        self.word.take(6)
    }
    #[inline(always)]
    fn below(&mut self, n: u32) -> u32 {
        if n == 6 {
            self.face()
        } else {
            self.words += 1;
            self.dice.below(n)
        }
    }
}

/// Bit `i` set when `groups[i]` (a stack's or a lane's units) has a unit in `units`.
#[inline(always)]
fn holding(groups: &[u32], units: u32) -> u32 {
    groups.iter().enumerate().fold(0, |bits, (i, &group)| {
        bits | u32::from(group & units != 0) << i
    })
}

/// One side of the compiled battle as bit masks: bit `u` is the side's unit `u` in listed
/// order (lane by lane, front row first), bit `s` of a stack mask its stack `s`.
///
/// PERF: the first kernel kept a state byte per unit and found front stacks, targets,
/// fighting units and victims by scanning them (`perf`: the time spread over every line
/// of the round, the dice ~3% of it). With masks each of those is a few AND/OR and a
/// `trailing_zeros`, and every roll's successful faces are read from a table built here.
#[derive(Clone, Debug)]
struct SideMasks {
    /// Every unit of the side.
    all: u32,
    stack_units: [u32; MAX_STACKS],
    /// Stacks of the side. Stacks are numbered lane by lane, front row first, so the
    /// stack at row `r` of a lane is `lane_first[lane] + r`, and `lane_row_bits[lane]`
    /// has a bit per row.
    stack_count: usize,
    lane_first: [u8; MAX_LANES],
    lane_row_bits: [u32; MAX_LANES],
    /// Every lane holds one row: the front rank is every unit in play. Validation gives
    /// every lane at least one stack of each side, so then stack `l` is lane `l`.
    single_row: bool,
    /// `stacks_holding[units]`: bit `s` set when stack `s` has a unit in `units`, for
    /// sides of at most [`STACK_TABLE_UNITS`] units (empty otherwise).
    stacks_holding: Vec<u16>,
    /// `lane_units[lane]`: the side's units in that lane.
    lane_units: [u32; MAX_LANES],
    unit_stack: [u8; MAX_UNITS],
    unit_lane: [u8; MAX_UNITS],
    /// Faces 0–5 (face − 1) that hit when the unit fires.
    fire_faces: [u8; MAX_UNITS],
    melee_strength: [u32; MAX_UNITS],
    regular: u32,
    non_warrior: u32,
    /// Leader rating per stack (0: none), and the stacks that have one.
    leader: [u32; MAX_STACKS],
    leader_stacks: u32,
    /// Faces 0–5 that move, by `[any mover not a warrior][leader][with a regular][enemy
    /// atop][surprise bonus]`.
    move_faces: [[[[[u8; 2]; 2]; 2]; MAX_LEADER as usize + 1]; 2],
    /// Faces 0–5 that recover a unit, by the rating of the leader stacked with it.
    recover_faces: [u8; MAX_LEADER as usize + 1],
    /// Every stack of the side has at most [`SMALL_STACK_UNITS`] units: its melees read
    /// the two tables below (empty otherwise), a stack's units as bits from its first.
    small_stacks: bool,
    /// `melee_losses[(stack · KEYS + disrupted) · KEYS + fighting]`, `KEYS` =
    /// [`SMALL_STACK_KEYS`], `disrupted` within `fighting` (the other entries are never
    /// read): bits `SMALL_STACK_UNITS · (k − 1) ..` hold the units [`melee_victims`] takes
    /// from the stack's fighting units to an elimination of `k`, 1 to
    /// [`SMALL_STACK_UNITS`] (of more: all of them).
    melee_losses: Vec<u16>,
    /// `stack_strength[stack · KEYS + units]`: the melee strength of those units of the
    /// stack.
    stack_strength: Vec<u32>,
}

/// One side's state: two bit planes of the unit states (`hi·2 + lo`: normal 0, disrupted
/// 1, routed 2, eliminated 3), the units off the array (routed in melee), and the stacks
/// whose leader is still with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SideState {
    lo: u32,
    hi: u32,
    removed: u32,
    leaders: u32,
}

impl SideState {
    #[inline(always)]
    fn eliminated(&self) -> u32 {
        self.lo & self.hi
    }
    #[inline(always)]
    fn routed(&self) -> u32 {
        self.hi & !self.lo
    }
    #[inline(always)]
    fn disrupted(&self) -> u32 {
        self.lo & !self.hi
    }
    /// Units neither eliminated nor off the array.
    #[inline(always)]
    fn in_play(&self, all: u32) -> u32 {
        all & !(self.lo & self.hi) & !self.removed
    }
    /// One level worse (normal → disrupted → routed → eliminated) for the units of `m`,
    /// none of them eliminated: adding 1 to `hi·2 + lo`.
    #[inline(always)]
    fn worsen(&mut self, m: u32) {
        self.hi ^= self.lo & m;
        self.lo ^= m;
    }
    /// One level better for the units of `m` (disrupted or routed), back on the array.
    #[inline(always)]
    fn recover(&mut self, m: u32) {
        self.hi ^= !self.lo & m;
        self.lo ^= m;
        self.removed &= !m;
    }
}

impl FrontierCombat {
    fn side_masks(
        battle: &FrontierBattle,
        side: usize,
        units: &[CompiledUnit],
        stacks: &[CompiledStack],
    ) -> SideMasks {
        let mut m = SideMasks {
            all: if units.len() == 32 {
                u32::MAX
            } else {
                (1u32 << units.len()) - 1
            },
            stack_units: [0; MAX_STACKS],
            stack_count: stacks.len(),
            lane_first: [0; MAX_LANES],
            lane_row_bits: [0; MAX_LANES],
            single_row: true,
            stacks_holding: Vec::new(),
            lane_units: [0; MAX_LANES],
            unit_stack: [0; MAX_UNITS],
            unit_lane: [0; MAX_UNITS],
            fire_faces: [0; MAX_UNITS],
            melee_strength: [0; MAX_UNITS],
            regular: 0,
            non_warrior: 0,
            leader: [0; MAX_STACKS],
            leader_stacks: 0,
            move_faces: [[[[[0; 2]; 2]; 2]; MAX_LEADER as usize + 1]; 2],
            recover_faces: [0; MAX_LEADER as usize + 1],
            small_stacks: stacks
                .iter()
                .all(|stack| stack.unit_count <= SMALL_STACK_UNITS),
            melee_losses: Vec::new(),
            stack_strength: Vec::new(),
        };
        let mut lane_units = [0u32; MAX_LANES];
        for (u, unit) in units.iter().enumerate() {
            let bit = 1u32 << u;
            lane_units[unit.lane] |= bit;
            m.unit_stack[u] = unit.stack as u8;
            m.unit_lane[u] = unit.lane as u8;
            // `CompiledUnit::fire_faces` has bit f − 1 for face f: bit `face` of a 0–5 face.
            m.fire_faces[u] = unit.fire_faces;
            m.melee_strength[u] = unit.melee_strength;
            if unit.kind == UnitType::Regular {
                m.regular |= bit;
            }
            if unit.kind != UnitType::Warrior {
                m.non_warrior |= bit;
            }
        }
        for (s, stack) in stacks.iter().enumerate() {
            m.stack_units[s] = (((1u64 << stack.unit_count) - 1) << stack.first_unit) as u32;
            // Stacks are compiled lane by lane, front row first.
            let rows = &mut m.lane_row_bits[stack.lane];
            if *rows == 0 {
                m.lane_first[stack.lane] = s as u8;
            }
            m.single_row &= *rows == 0;
            *rows = (*rows << 1) | 1;
            m.leader[s] = stack.leader;
            if stack.leader > 0 {
                m.leader_stacks |= 1 << s;
            }
        }
        m.lane_units = lane_units;
        if m.small_stacks {
            (m.melee_losses, m.stack_strength) =
                Self::small_stack_tables(&m.stack_units[..stacks.len()], &m.melee_strength);
        }
        // Every stack has a unit, so at most 12 stacks: a `u16` holds any stack set.
        if units.len() <= STACK_TABLE_UNITS {
            m.stacks_holding = (0..1u32 << units.len())
                .map(|set| holding(&m.stack_units[..m.stack_count], set) as u16)
                .collect();
        }
        let b = battle;
        let faces = |hits: &dyn Fn(u32) -> bool| {
            (1..=6u32)
                .filter(|&f| hits(f))
                .fold(0u8, |mask, f| mask | 1 << (f - 1))
        };
        for (nw, by_leader) in m.move_faces.iter_mut().enumerate() {
            for (leader, by_regular) in by_leader.iter_mut().enumerate() {
                for (with_regular, by_atop) in by_regular.iter_mut().enumerate() {
                    for (enemy_atop, by_surprise) in by_atop.iter_mut().enumerate() {
                        for (surprise_bonus, cell) in by_surprise.iter_mut().enumerate() {
                            let roll = MoveRoll {
                                level: b.sides[side].level,
                                unit: if nw == 1 {
                                    UnitType::Militia
                                } else {
                                    UnitType::Warrior
                                },
                                terrain: b.terrain,
                                leader: leader as u32,
                                severe_weather: b.severe_weather,
                                with_regular: with_regular == 1,
                                enemy_atop: enemy_atop == 1,
                                surprise_bonus: surprise_bonus == 1,
                            };
                            *cell = faces(&|f| roll.moves(f));
                        }
                    }
                }
            }
        }
        for (leader, cell) in m.recover_faces.iter_mut().enumerate() {
            let roll = RecoveryRoll {
                level: b.sides[side].level,
                leader: leader as u32,
            };
            *cell = faces(&|f| roll.recovers(f));
        }
        m
    }

    /// [`SideMasks::melee_losses`] and [`SideMasks::stack_strength`] of a side whose every
    /// stack (`stack_units`, each at most [`SMALL_STACK_UNITS`] units) is small, from
    /// [`melee_victims`] and the units' melee strengths.
    fn small_stack_tables(
        stack_units: &[u32],
        strengths: &[u32; MAX_UNITS],
    ) -> (Vec<u16>, Vec<u32>) {
        const KEYS: usize = SMALL_STACK_KEYS;
        let mut losses = vec![0; stack_units.len() * KEYS * KEYS];
        let mut strength = vec![0; stack_units.len() * KEYS];
        for (s, &units) in stack_units.iter().enumerate() {
            let first = units.trailing_zeros();
            let local = units >> first;
            for fighting in (0..KEYS as u32).filter(|&f| f & !local == 0) {
                let fights = fighting << first;
                strength[s * KEYS + fighting as usize] = (0..MAX_UNITS)
                    .filter(|&u| fights >> u & 1 == 1)
                    .map(|u| strengths[u])
                    .sum();
                for disrupted in (0..KEYS as u32).filter(|&d| d & !fighting == 0) {
                    losses[(s * KEYS + disrupted as usize) * KEYS + fighting as usize] =
                        (1..=SMALL_STACK_UNITS as u32).fold(0, |entry, k| {
                            let lost = melee_victims(fights, disrupted << first, k, strengths);
                            entry | ((lost >> first) as u16) << (SMALL_STACK_UNITS as u32 * (k - 1))
                        });
                }
            }
        }
        (losses, strength)
    }

    /// Units each side fields.
    pub fn unit_count(&self, side: usize) -> usize {
        self.units[side].len()
    }

    fn fresh(&self) -> [SideState; 2] {
        [0, 1].map(|s| SideState {
            lo: 0,
            hi: 0,
            removed: 0,
            leaders: self.masks[s].leader_stacks,
        })
    }

    #[inline(always)]
    fn leader_of(&self, st: &[SideState; 2], side: usize, stack: usize) -> u32 {
        // PERF: a select, not a branch (leaders are lost at random; a plain mask compiled
        // to a branch around the load).
        std::hint::select_unpredictable(
            st[side].leaders >> stack & 1 == 1,
            self.masks[side].leader[stack & (MAX_STACKS - 1)],
            0,
        )
    }

    /// A leader-loss event (9.5.9, 9.5.12) at a stack: a roll only if its leader is there.
    #[inline(always)]
    fn lose_leader<D: BattleDice>(
        &self,
        st: &mut [SideState; 2],
        side: usize,
        stack: usize,
        dice: &mut D,
    ) {
        if st[side].leaders >> stack & 1 == 1 {
            let (num, den) = self.battle.leader_loss;
            let lost = u32::from(dice.below(den) < num);
            st[side].leaders &= !(lost << stack);
        }
    }

    /// Bit `s` set when the side's stack `s` has a unit in `in_play`.
    ///
    /// PERF: one AND per stack, once a phase; a lane's rows in play are then a shift and
    /// a mask of it ([`Self::rows_in_play`]), instead of four ANDs per lane each time.
    /// A side of at most [`STACK_TABLE_UNITS`] units reads it from `stacks_holding` in one
    /// load: so do the movement phase's held and movable lanes and, one row a lane, the
    /// fire phase's lanes left in a rank once a firer's own lane is used up (callgrind:
    /// 208.4 → 192.9 M instructions for 20,000 bench battles, −7.4%; the profile loop
    /// 1.09 → 1.16 M battles/s, six runs of each built alternately, same dice).
    #[inline(always)]
    fn stacks_in_play(m: &SideMasks, in_play: u32) -> u32 {
        match m.stacks_holding.get(in_play as usize) {
            Some(&stacks) => u32::from(stacks),
            None => holding(&m.stack_units[..m.stack_count], in_play),
        }
    }

    /// Bit `r` set when the lane's stack at row `r` is in `stacks_in_play`.
    #[inline(always)]
    fn rows_in_play(m: &SideMasks, lane: usize, stacks_in_play: u32) -> u32 {
        stacks_in_play >> m.lane_first[lane] & m.lane_row_bits[lane]
    }

    /// Fire combat of one side (19.2.1). Every undisrupted unit in play fires, in listed
    /// order (lane by lane, front row first). Targets are assigned before any die is
    /// rolled: each firer takes, among the enemy's units in play, one targeted the fewest
    /// times so far, then one in the enemy's front row (the first stack of its lane with
    /// a unit in play) before any behind, then the nearest lane to the firer's (its own
    /// first, the lower-numbered at equal distance), then the first listed. So every
    /// enemy front-row unit, in any lane, is targeted before any second-row unit, and
    /// every unit once before any twice. Every fire die is rolled first, in firer order;
    /// then one leader roll for each hit that landed on a stack with its leader, in the
    /// same order.
    ///
    /// PERF: "targeted the fewest times so far" only ever means "not yet targeted at the
    /// current count", a mask that refills when empty; depth is one mask per rank; the rest
    /// is the firer's own lane, else the nearest lane holding a target, read from
    /// `nearest_lane`. Choosing a target rolls no die, so each firer's die is rolled as
    /// soon as its target is chosen (the same dice in the same order as choosing every
    /// target first): the targets come from the masks at the start of the volley.
    #[inline(always)]
    fn fire_phase<D: BattleDice>(&self, st: &mut [SideState; 2], side: usize, dice: &mut D) {
        let enemy = 1 - side;
        let e = &self.masks[enemy];
        let f = &self.masks[side];
        let in_play = st[enemy].in_play(e.all);
        let mut firers = f.all & !(st[side].lo | st[side].hi) & !st[side].removed;
        if in_play == 0 || firers == 0 {
            return;
        }
        let mut rank_mask = [0u32; MAX_ROWS];
        if e.single_row {
            rank_mask[0] = in_play;
        } else {
            let stacks = Self::stacks_in_play(e, in_play);
            for lane in 0..self.lanes {
                let mut rows = Self::rows_in_play(e, lane, stacks);
                let mut rank = 0;
                while rows != 0 {
                    let stack = usize::from(e.lane_first[lane]) + rows.trailing_zeros() as usize;
                    rank_mask[rank] |= e.stack_units[stack & (MAX_STACKS - 1)] & in_play;
                    rows &= rows - 1;
                    rank += 1;
                }
            }
        }
        // The enemy units whose stack still has its leader: a hit that lands on one of them
        // is a leader-loss event.
        let mut led = 0u32;
        let mut stacks = st[enemy].leaders;
        while stacks != 0 {
            led |= e.stack_units[stacks.trailing_zeros() as usize];
            stacks &= stacks - 1;
        }
        // PERF: the volley goes in passes. Within a pass every firer takes a different
        // target (the fewest-targeted rule), so a pass's hits land at once, as one mask,
        // and a hit is wasted only on a unit eliminated in an earlier pass (`gone`).
        // Within a pass the targets come rank by rank, each rank whole before the next
        // (so no mask of the units left to target is needed: only the rank's), and the
        // pass ends when the last rank is used up. The leader rolls come after the
        // volley's fire dice, from a list of events appended without a branch (the old
        // kernel branched on every hit, half the dice, to roll for the leader at once, and
        // mispredicted half of those).
        //
        // The lanes holding units of `set` (one row a lane: stack `l` is lane `l`, so they
        // are the stacks holding them).
        let lanes_of = |set: u32| {
            if e.single_row {
                Self::stacks_in_play(e, set) as usize
            } else {
                holding(&e.lane_units[..self.lanes], set) as usize
            }
        };
        let mut rank = 0;
        // The units of the current rank not yet targeted in this pass.
        let mut set = rank_mask[0];
        let mut pass_hits = 0u32;
        let mut gone = st[enemy].eliminated();
        let mut events = [0u8; MAX_UNITS];
        let mut event_count = 0;
        while firers != 0 {
            let shooter = firers.trailing_zeros() as usize;
            firers &= firers - 1;
            if set == 0 {
                // The rank is used up: the next one, or (none left) a new pass from the
                // front. Ranks in play are consecutive from 0.
                rank += 1;
                if rank == MAX_ROWS || rank_mask[rank & (MAX_ROWS - 1)] == 0 {
                    st[enemy].worsen(pass_hits);
                    pass_hits = 0;
                    gone = st[enemy].eliminated();
                    rank = 0;
                }
                set = rank_mask[rank & (MAX_ROWS - 1)];
            }
            // PERF: the firer's own lane is the nearest, so while it holds a unit of `set`
            // the target is that lane's first: an AND and a lowest set bit on the chain from
            // one firer to the next, with the lane's units loaded off it. Only when the own
            // lane is used up are the lanes holding units of `set` found (one load where
            // every lane holds one row and the side has at most `STACK_TABLE_UNITS` units)
            // and the nearest read from `nearest_lane` (one load; the old scan of the lanes
            // in the firer's order mispredicted its exit about once a volley). Taking that
            // chain for every firer, as the kernel did, kept the loop waiting on two
            // dependent loads a shot: the profile loop 1.08 → 1.14 M battles/s (medians of
            // five runs of each, built alternately; same dice).
            // The masks (`& (N - 1)`, all sizes powers of two) only keep in range what is
            // in range already, and let the compiler drop the bounds checks.
            let firer_lane = usize::from(f.unit_lane[shooter & (MAX_UNITS - 1)]);
            let own = set & e.lane_units[firer_lane & (MAX_LANES - 1)];
            let pick = if own != 0 {
                own
            } else {
                let lanes = lanes_of(set);
                let lane = usize::from(
                    self.nearest_lane[firer_lane & (MAX_LANES - 1)][lanes & ((1 << MAX_LANES) - 1)],
                ) & (MAX_LANES - 1);
                set & e.lane_units[lane]
            };
            let bit = pick & pick.wrapping_neg();
            let target = bit.trailing_zeros();
            set &= !bit;
            let hit = u32::from(f.fire_faces[shooter & (MAX_UNITS - 1)]) >> dice.face() & 1;
            let landed = hit << target & !gone;
            pass_hits |= landed;
            // The slot is written for every shot and kept only for an event: at most
            // MAX_UNITS firers, so `event_count` stays in range.
            events[event_count & (MAX_UNITS - 1)] = e.unit_stack[target as usize & (MAX_UNITS - 1)];
            event_count += usize::from(landed & led != 0);
        }
        st[enemy].worsen(pass_hits);
        for &stack in &events[..event_count] {
            self.lose_leader(st, enemy, usize::from(stack), dice);
        }
    }

    /// Movement (19.2.2) and melee (19.2.3) of one round.
    ///
    /// PERF: lanes are bit masks (the lanes both sides hold, the lanes with a melee, the
    /// lanes the enemy moved into) and a lane's melee is four plain arrays, so a side's
    /// loop visits only the lanes where it rolls, and a roll's success is stored without a
    /// branch (a move succeeds about half the time: the old `if` on it mispredicted often).
    #[inline(always)]
    fn movement_and_melee<D: BattleDice>(&self, st: &mut [SideState; 2], round: u32, dice: &mut D) {
        let b = &self.battle;
        // Each lane's front stacks, found once. Moving changes no unit's state, and a melee
        // changes only its own lane's stacks, so they hold for the whole phase.
        let mut front = [[0u8; MAX_LANES]; 2];
        let mut holding = [0u32; 2];
        // The lanes whose front stack has an undisrupted unit to move.
        let mut can_move = [0u32; 2];
        for side in 0..2 {
            let m = &self.masks[side];
            let in_play = st[side].in_play(m.all);
            let movers = in_play & !(st[side].lo | st[side].hi);
            if m.single_row {
                // PERF: one stack a lane (always so for the side that sets up first), so
                // stack `l` is lane `l`'s front stack, and the lane masks are stack masks,
                // both from one pass over the stacks.
                front[side] = std::array::from_fn(|lane| lane as u8);
                holding[side] = Self::stacks_in_play(m, in_play);
                can_move[side] = Self::stacks_in_play(m, movers);
                continue;
            }
            let stacks = Self::stacks_in_play(m, in_play);
            for (lane, f) in front[side].iter_mut().enumerate().take(self.lanes) {
                let rows = Self::rows_in_play(m, lane, stacks);
                // No row in play: row 0 stands in (the mask turns the 32 of an empty
                // `trailing_zeros` into 0), and `holding` and `can_move` leave the lane out.
                *f = m.lane_first[lane] + (rows.trailing_zeros() as u8 & (MAX_ROWS as u8 - 1));
                holding[side] |= u32::from(rows != 0) << lane;
                let units = m.stack_units[usize::from(*f) & (MAX_STACKS - 1)];
                can_move[side] |= u32::from(units & movers != 0) << lane;
            }
        }
        let contested = holding[0] & holding[1];
        // Per lane with a melee: the attacking side and stack, which of its units moved in,
        // and which defending units moved away (avoided the melee).
        // `started[side]`: the lanes where `side` moved atop the enemy.
        let mut started = [0u32; 2];
        let mut attacker = [0u8; MAX_LANES];
        let mut attacking_stack = [0u8; MAX_LANES];
        let mut moved = [0u32; MAX_LANES];
        let mut avoided = [0u32; MAX_LANES];
        for side in [b.initiative, 1 - b.initiative] {
            if b.sides[side].move_policy == MovePolicy::FireOnly {
                continue;
            }
            let m = &self.masks[side];
            let surprised = round == 1 && b.surprise == Some(1 - side);
            let won_surprise = round == 1 && b.surprise == Some(side);
            // The lanes the enemy moved into (only the side that moves second meets them;
            // it rolls there to move away, with `avoid_melee`).
            let atop = started[1 - side];
            let mut rolling = contested & !(started[0] | started[1]);
            if b.sides[side].avoid_melee {
                rolling |= atop;
            }
            rolling &= can_move[side];
            let in_play = st[side].in_play(m.all);
            let normal = !(st[side].lo | st[side].hi);
            while rolling != 0 {
                let lane = rolling.trailing_zeros() as usize;
                rolling &= rolling - 1;
                let enemy_atop = atop >> lane & 1;
                let own = usize::from(front[side][lane]);
                // The undisrupted units move; disrupted and routed ones may not. Settled
                // terrain's −1 goes to any unit stacked with a regular at the time of
                // movement (moving or not); rough terrain's +1 when a mover is no warrior.
                let here = m.stack_units[own] & in_play;
                let movers = here & normal;
                let leader = self.leader_of(st, side, own);
                if surprised && leader == 0 {
                    continue;
                }
                let faces = m.move_faces[usize::from(movers & m.non_warrior != 0)][leader as usize]
                    [usize::from(here & m.regular != 0)][enemy_atop as usize]
                    [usize::from(won_surprise && leader > 0)];
                let success = u32::from(faces) >> dice.face() & 1;
                // Units that move away from an enemy atop them avoid the melee; the ones
                // left behind (disrupted or routed) still fight it. Otherwise the movers
                // go atop the enemy.
                let all_if = |bit: u32| 0u32.wrapping_sub(bit);
                avoided[lane] |= movers & all_if(success & enemy_atop);
                if enemy_atop == 0 {
                    attacker[lane] = side as u8;
                    attacking_stack[lane] = own as u8;
                    moved[lane] = movers;
                    started[side] |= success << lane;
                }
            }
        }
        let mut melees = started[0] | started[1];
        while melees != 0 {
            let lane = melees.trailing_zeros() as usize;
            melees &= melees - 1;
            let side = usize::from(attacker[lane]);
            self.close_combat(
                st,
                side,
                usize::from(attacking_stack[lane]),
                usize::from(front[1 - side][lane]),
                moved[lane],
                avoided[lane],
                round,
                dice,
            );
        }
    }

    /// The melee in one lane: `movers` of the attacker's stack against the defender's
    /// front stack (`defending_stack`) less the units that moved away (`avoided`).
    #[allow(clippy::too_many_arguments)]
    fn close_combat<D: BattleDice>(
        &self,
        st: &mut [SideState; 2],
        attacker: usize,
        attacking_stack: usize,
        defending_stack: usize,
        movers: u32,
        avoided: u32,
        round: u32,
        dice: &mut D,
    ) {
        let b = &self.battle;
        let defender = 1 - attacker;
        let (am, dm) = (&self.masks[attacker], &self.masks[defender]);
        let stayed = dm.stack_units[defending_stack] & !avoided;
        // The units that fight: in play and not routed. A side's loss changes only its
        // own, so each side's set is found once.
        let fights = |pool: u32, side: usize| {
            let s = &st[side];
            pool & s.in_play(self.masks[side].all) & !s.routed()
        };
        let mut fighting = [0; 2];
        fighting[attacker] = fights(movers, attacker);
        fighting[defender] = fights(stayed, defender);
        // PERF: a small stack's strength is one load. A larger one's sum runs over the
        // whole stack, each unit masked in or out, so the loop runs as many times as the
        // stack has units (the same every melee when stacks are alike) instead of once per
        // fighting unit, a count that mispredicts.
        let strength = |mask: u32, m: &SideMasks, stack: usize| {
            if m.small_stacks {
                debug_assert_eq!(mask & !m.stack_units[stack], 0);
                let units = mask >> m.stack_units[stack & (MAX_STACKS - 1)].trailing_zeros();
                return m.stack_strength[stack * SMALL_STACK_KEYS + units as usize];
            }
            let mut rest = m.stack_units[stack];
            let mut total = 0;
            while rest != 0 {
                let u = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                total += std::hint::select_unpredictable(
                    mask >> u & 1 == 1,
                    m.melee_strength[u & (MAX_UNITS - 1)],
                    0,
                );
            }
            total
        };
        let strength_a = strength(fighting[attacker], am, attacking_stack);
        let strength_d = strength(fighting[defender], dm, defending_stack);
        if strength_a == 0 {
            return;
        }
        if strength_d == 0 {
            // Every defender left in play is routed: all are eliminated (none left: the
            // whole stack moved away, and there is no melee).
            let doomed = stayed & st[defender].in_play(dm.all);
            st[defender].lo |= doomed;
            st[defender].hi |= doomed;
            return;
        }
        let disrupted = fighting[defender] & st[defender].disrupted() != 0;
        let shift = self.leader_of(st, attacker, attacking_stack) as i32
            - self.leader_of(st, defender, defending_stack) as i32
            + i32::from(disrupted)
            + i32::from(round == 1 && b.surprise == Some(attacker));
        let columns = b.crt.columns.len();
        // PERF: the odds column from a table of strength pairs where it is small (the
        // search multiplies and compares at every column).
        let odds = match self
            .odds_columns
            .get(strength_a as usize * self.strengths + strength_d as usize)
        {
            Some(&column) if strength_d < self.strengths as u32 => usize::from(column),
            _ => b.crt.column_for(strength_a, strength_d),
        };
        let column = (odds as i32 + shift).clamp(0, columns as i32 - 1) as usize;
        // PERF: the cell, with the level DRM and the row clamp, is one load from a table
        // built once.
        let codes = self.melee_cells[(attacker * columns + column) * 6 + dice.face() as usize];
        for (side, stack, code) in [
            (attacker, attacking_stack, codes[0]),
            (defender, defending_stack, codes[1]),
        ] {
            // (Without this branch, a loss of none going through the table too: no faster,
            // five alternate runs, for about 250 more instructions a battle.)
            if code == 0 {
                continue;
            }
            let m = &self.masks[side];
            let fights = fighting[side];
            let s = &mut st[side];
            // PERF: a small stack's losses are one load, keyed by its fighting and
            // disrupted units, and land without a branch, where the search for the
            // weakest (a loop, and a comparison a unit for each unit lost) mispredicted.
            // With the strengths from a table too: +9.9% battles/s in the profile loop,
            // 73 → 69 simulated mispredictions a battle (docs/performance.md).
            // Both sides' fighting units are drawn from the stack's (its movers, or the
            // defending stack less those that moved away), so the key stays in its table.
            debug_assert_eq!(fights & !m.stack_units[stack], 0);
            let eliminated = if m.small_stacks {
                let first = m.stack_units[stack & (MAX_STACKS - 1)].trailing_zeros();
                let key = ((s.disrupted() & fights) >> first) as usize * SMALL_STACK_KEYS
                    + (fights >> first) as usize;
                let losses = m.melee_losses[stack * SMALL_STACK_KEYS * SMALL_STACK_KEYS + key];
                // `code` is not 0 here; a Rout reads the entry for all of them, which its
                // routed units override below.
                let lost = u32::from(code).min(SMALL_STACK_UNITS as u32) - 1;
                (u32::from(losses) >> (SMALL_STACK_UNITS as u32 * lost) & SMALL_STACK_MASK) << first
            } else if code == LOSS_ROUT {
                0
            } else {
                melee_victims(fights, s.disrupted(), u32::from(code), &m.melee_strength)
            };
            // The losses lie within `fights`, so a Rout's routed units override them.
            let routed = if code == LOSS_ROUT { fights } else { 0 };
            s.lo = (s.lo | eliminated) & !routed;
            s.hi |= eliminated | routed;
            s.removed |= routed;
            self.lose_leader(st, side, stack, dice);
        }
    }

    /// Recovery (19.2.4): every disrupted or routed unit rolls; success is one level up (a
    /// routed unit off the array comes back to its stack disrupted).
    #[inline(always)]
    fn recovery<D: BattleDice>(&self, st: &mut [SideState; 2], dice: &mut D) {
        for side in 0..2 {
            let m = &self.masks[side];
            // Disrupted (lo only) or routed (hi only).
            let mut rolling = (st[side].lo ^ st[side].hi) & m.all;
            // PERF: no branch on a roll (it succeeds or fails about evenly), and the
            // successes land together (units recover independently; leaders do not move).
            let mut recovered = 0u32;
            while rolling != 0 {
                let u = rolling.trailing_zeros() as usize;
                rolling &= rolling - 1;
                let leader =
                    self.leader_of(st, side, usize::from(m.unit_stack[u & (MAX_UNITS - 1)]));
                let faces = m.recover_faces[(leader as usize).min(MAX_LEADER as usize)];
                recovered |= u32::from(faces >> dice.face() & 1) << u;
            }
            st[side].recover(recovered);
        }
    }

    /// Rounds of 19.1: the initiative side's primary leader rating, plus one when the
    /// non-initiative side tries and rolls under its primary leader's rating.
    fn rounds<D: BattleDice>(&self, dice: &mut D) -> u32 {
        let b = &self.battle;
        let other = 1 - b.initiative;
        let extra = b.extra_round && dice.face() + 1 < b.sides[other].primary_leader;
        b.sides[b.initiative].primary_leader + u32::from(extra)
    }

    /// One round of 19.2: fire (the initiative side first, a surprised side not in round
    /// 1), movement and melee, recovery.
    #[inline(always)]
    fn round<D: BattleDice>(&self, st: &mut [SideState; 2], round: u32, dice: &mut D) {
        let b = &self.battle;
        for side in [b.initiative, 1 - b.initiative] {
            let surprised = round == 1 && b.surprise == Some(1 - side);
            if !surprised {
                self.fire_phase(st, side, dice);
            }
        }
        self.movement_and_melee(st, round, dice);
        self.recovery(st, dice);
    }

    /// One whole battle on any source of dice (runs use [`PackedDice`], through
    /// [`Self::battle_block`]).
    #[inline]
    pub fn fight_with<D: BattleDice>(&self, dice: &mut D) -> BattleOutcome {
        let mut st = self.fresh();
        let rounds = self.rounds(dice);
        let mut lost_after_round = [[0u8; 2]; 4];
        for round in 1..=rounds {
            self.round(&mut st, round, dice);
            lost_after_round[round as usize - 1] =
                [0, 1].map(|side| (st[side].hi & self.masks[side].all).count_ones() as u8);
        }
        for round in rounds as usize..4 {
            lost_after_round[round] = lost_after_round[round - 1];
        }
        let mut out = self.outcome(&st, rounds);
        out.lost_after_round = lost_after_round;
        out
    }

    /// Counts and the victory reading at the end of the last round.
    fn outcome(&self, st: &[SideState; 2], rounds: u32) -> BattleOutcome {
        let mut out = BattleOutcome::after(rounds);
        for (side, (s, m)) in st.iter().zip(&self.masks).enumerate() {
            let all = m.all;
            out.eliminated[side] = (s.eliminated() & all).count_ones();
            out.routed[side] = (s.routed() & all).count_ones();
            out.disrupted[side] = (s.disrupted() & all).count_ones();
            out.leaders_lost[side] = (m.leader_stacks & !s.leaders).count_ones();
        }
        out.winner = self.winner(&out);
        out
    }

    /// The victory reading (9.6, docs/systems/frontier.md) of a battle's final counts:
    /// fewer units lost (eliminated or routed) wins, or a smaller share of the side's
    /// units.
    fn winner(&self, out: &BattleOutcome) -> Option<usize> {
        let lost = [0, 1].map(|s| u64::from(out.eliminated[s] + out.routed[s]));
        let (a, b) = match self.battle.victory {
            VictoryRule::FewerLost => (lost[0], lost[1]),
            // lost_a / n_a against lost_b / n_b, by cross-multiplying.
            VictoryRule::FewerLostShare => (
                lost[0] * self.units[1].len() as u64,
                lost[1] * self.units[0].len() as u64,
            ),
        };
        match a.cmp(&b) {
            std::cmp::Ordering::Less => Some(0),
            std::cmp::Ordering::Greater => Some(1),
            std::cmp::Ordering::Equal => None,
        }
    }
}

/// Counts of many simulated battles.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FrontierHistogram {
    /// A wins, draw, B wins.
    pub result: [u64; 3],
    /// `rounds[r]`: battles fought over `r` rounds (0–4).
    pub rounds: [u64; 5],
    /// `result_by_rounds[r][i]`: battles of `r` rounds with result `i` (A, draw, B).
    pub result_by_rounds: [[u64; 3]; 5],
    /// `eliminated[side][k]`, `routed[side][k]`, `disrupted[side][k]`: battles that ended
    /// with exactly `k` of the side's units in that state; `leaders_lost[side][k]` likewise.
    pub eliminated: [Vec<u64>; 2],
    pub routed: [Vec<u64>; 2],
    pub disrupted: [Vec<u64>; 2],
    pub leaders_lost: [Vec<u64>; 2],
    /// `lost_by_round[r][side][k]`: battles in which the side had lost exactly `k` units
    /// (eliminated or routed) at the end of round `r + 1` (a battle of fewer rounds counts
    /// its final state).
    pub lost_by_round: [[Vec<u64>; 2]; 4],
}

impl crate::sim::Histogram for FrontierHistogram {
    fn merge(&mut self, other: Self) {
        let add = |mine: &mut [u64], theirs: &[u64]| {
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m += t;
            }
        };
        add(&mut self.result, &other.result);
        add(&mut self.rounds, &other.rounds);
        for (mine, theirs) in self
            .result_by_rounds
            .iter_mut()
            .zip(&other.result_by_rounds)
        {
            add(mine, theirs);
        }
        for side in 0..2 {
            add(&mut self.eliminated[side], &other.eliminated[side]);
            add(&mut self.routed[side], &other.routed[side]);
            add(&mut self.disrupted[side], &other.disrupted[side]);
            add(&mut self.leaders_lost[side], &other.leaders_lost[side]);
            for round in 0..4 {
                add(
                    &mut self.lost_by_round[round][side],
                    &other.lost_by_round[round][side],
                );
            }
        }
    }
}

impl FrontierCombat {
    pub fn empty_histogram(&self) -> FrontierHistogram {
        let sized = |side: usize| vec![0u64; self.units[side].len() + 1];
        let leaders = |side: usize| vec![0u64; self.stacks[side].len() + 1];
        FrontierHistogram {
            result: [0; 3],
            rounds: [0; 5],
            result_by_rounds: [[0; 3]; 5],
            eliminated: [sized(0), sized(1)],
            routed: [sized(0), sized(1)],
            disrupted: [sized(0), sized(1)],
            leaders_lost: [leaders(0), leaders(1)],
            lost_by_round: std::array::from_fn(|_| [sized(0), sized(1)]),
        }
    }

    /// Adds `n` simulated battles into `histogram`, and returns the words they drew from
    /// all streams.
    ///
    /// Where the battle suits it ([`Self::bit_sliced`]), the block's battles are fought
    /// bit-sliced, 256 a sweep, on every CPU; otherwise in lanes (`lanes_block`).
    pub fn battle_block(
        &self,
        dice: &mut DiceStream,
        n: u64,
        histogram: &mut FrontierHistogram,
    ) -> u64 {
        match &self.sliced {
            Some(tables) => sliced::battle_block(self, tables, dice, n, histogram),
            None => self.lanes_block(dice, n, histogram),
        }
    }

    /// The block's battles in [`LANES`](crate::dice::lanes::LANES) lanes, each on its own
    /// stream (`dice::lanes::fight_lanes`): a lane's battles cut their d6 from one
    /// [`PackedDice`], so a word's faces left over at the end of a battle start the lane's
    /// next. Where the CPU has AVX2 and the battle suits them
    /// (`frontier_battle/lockstep.rs`), all lanes are fought at once; otherwise lane by
    /// lane, the same battles.
    pub(crate) fn lanes_block(
        &self,
        dice: &mut DiceStream,
        n: u64,
        histogram: &mut FrontierHistogram,
    ) -> u64 {
        crate::dice::lanes::fight_lanes(
            dice,
            n,
            histogram,
            |lanes, histogram| lockstep::all_at_once(self, lanes, n, histogram),
            |dice, battles, histogram| self.fight_lane(dice, battles, histogram),
        )
    }

    /// A lane's `battles` battles one after another on its stream, from one
    /// [`PackedDice`], counted into `histogram`; returns the words drawn.
    pub(crate) fn fight_lane(
        &self,
        dice: &mut DiceStream,
        battles: u64,
        histogram: &mut FrontierHistogram,
    ) -> u64 {
        let mut dice = PackedDice::new(dice);
        for _ in 0..battles {
            histogram.record(&self.fight_with(&mut dice));
        }
        dice.words()
    }
}

impl FrontierHistogram {
    /// Counts one battle.
    #[inline(always)]
    fn record(&mut self, o: &BattleOutcome) {
        let result = match o.winner {
            Some(0) => 0,
            None => 1,
            Some(_) => 2,
        };
        self.result[result] += 1;
        self.rounds[o.rounds as usize] += 1;
        self.result_by_rounds[o.rounds as usize][result] += 1;
        for side in 0..2 {
            self.eliminated[side][o.eliminated[side] as usize] += 1;
            self.routed[side][o.routed[side] as usize] += 1;
            self.disrupted[side][o.disrupted[side] as usize] += 1;
            self.leaders_lost[side][o.leaders_lost[side] as usize] += 1;
            for round in 0..4 {
                self.lost_by_round[round][side][o.lost_after_round[round][side] as usize] += 1;
            }
        }
    }
}

/// Simulates `trials` battles, reproducibly on any thread count.
pub fn simulate_battles(
    combat: &FrontierCombat,
    seed: u64,
    trials: u64,
    control: &crate::sim::RunControl,
) -> Result<FrontierHistogram, crate::sim::Interrupted> {
    crate::sim::run_blocks(
        seed,
        trials,
        || combat.empty_histogram(),
        |dice, n, h| {
            combat.battle_block(dice, n, h);
        },
        control,
    )
}

mod lockstep;
#[cfg(test)]
mod reference;
mod sliced;

#[cfg(test)]
mod tests {
    use super::reference::Reference;
    use super::*;
    use crate::systems::frontier::rolls::Terrain;

    fn unit(kind: UnitType, fire_cf: u32, melee_cf: u32) -> Unit {
        Unit {
            kind,
            fire_cf,
            melee_cf,
        }
    }

    /// Battles that exercise every part of the round: surprise either way, avoiding,
    /// rows behind the front, leaders, every terrain, both victory readings.
    fn battles() -> Vec<FrontierBattle> {
        let mut out = vec![crate::systems::frontier::scenarios::frontier_six_stacks()];
        let base = crate::systems::frontier::scenarios::frontier_six_stacks();
        for (k, terrain) in [Terrain::Settled, Terrain::Wilderness, Terrain::Rough]
            .into_iter()
            .enumerate()
        {
            let mut b = base.clone();
            b.terrain = terrain;
            b.severe_weather = k == 1;
            b.surprise = Some(k % 2);
            b.initiative = (k + 1) % 2;
            b.sides[0].avoid_melee = true;
            b.victory = if k == 2 {
                VictoryRule::FewerLostShare
            } else {
                VictoryRule::FewerLost
            };
            // The side that sets up second gets a second row in every lane, and a rifle.
            let second = match b.surprise {
                Some(winner) => winner,
                None => b.initiative,
            };
            for (l, lane) in b.sides[second].lanes.iter_mut().enumerate() {
                let units = if terrain == Terrain::Rough {
                    vec![unit(UnitType::Warrior, 2, 3), unit(UnitType::Rifle, 4, 1)]
                } else {
                    vec![unit(UnitType::Militia, 2, 2), unit(UnitType::Rifle, 4, 1)]
                };
                lane.truncate(1);
                lane.push(Stack {
                    units,
                    leader: (l % 4) as u32,
                });
            }
            for lane in b.sides[1 - second].lanes.iter_mut() {
                lane.truncate(1);
                if terrain == Terrain::Rough {
                    lane[0].units = vec![unit(UnitType::Warrior, 3, 2); 2];
                } else if terrain == Terrain::Settled {
                    lane[0].units.push(unit(UnitType::Militia, 1, 1));
                }
            }
            for side in &mut b.sides {
                for lane in &mut side.lanes {
                    for stack in lane.iter_mut() {
                        if terrain == Terrain::Rough {
                            stack.units.retain(|u| u.kind != UnitType::Regular);
                            if stack.units.is_empty() {
                                stack.units.push(unit(UnitType::Militia, 2, 1));
                            }
                        }
                    }
                }
            }
            b.sides[1].move_policy = if k == 1 {
                MovePolicy::FireOnly
            } else {
                MovePolicy::Aggressive
            };
            b.leader_loss = if k == 0 { (1, 6) } else { (2, 7) };
            out.push(b);
        }
        out.push(deep_and_wide());
        out.push(strong_melee());
        out
    }

    /// Melee strengths too large for the odds-column table (stacks of 160 in rough
    /// terrain: 161² entries), so the kernel searches the columns.
    fn strong_melee() -> FrontierBattle {
        let mut b = crate::systems::frontier::scenarios::frontier_six_stacks();
        b.terrain = Terrain::Rough;
        for stack in b.sides[0].lanes.iter_mut().flatten() {
            stack.units = vec![
                unit(UnitType::Warrior, 3, 20),
                unit(UnitType::Warrior, 3, 20),
                unit(UnitType::Rifle, 4, 20),
                unit(UnitType::Rifle, 4, 20),
            ];
        }
        for stack in b.sides[1].lanes.iter_mut().flatten() {
            stack.units = vec![
                unit(UnitType::Militia, 2, 20),
                unit(UnitType::Militia, 2, 7),
            ];
        }
        b
    }

    /// The array at its limits: eight lanes, A four rows deep with 32 single-unit stacks
    /// (B's 32 firers go through all four ranks in one pass; later volleys take several
    /// passes), B one row of 32 units; every hit on a leader's stack loses it (two events
    /// on one stack in a volley), levels 5 v 1 (the DRM capped at +3, rows clamped), and
    /// a CRT with `Eliminate(0)` and eliminations past any stack's size.
    fn deep_and_wide() -> FrontierBattle {
        use CrtLoss::{Eliminate as E, None as N, Rout as R};
        let mut b = crate::systems::frontier::scenarios::frontier_six_stacks();
        b.terrain = Terrain::Settled;
        b.initiative = 0;
        b.surprise = Some(0);
        b.leader_loss = (1, 1);
        b.sides[0].level = 5;
        b.sides[1].level = 1;
        b.sides[0].avoid_melee = true;
        b.sides[1].avoid_melee = true;
        b.sides[0].lanes = (0..8)
            .map(|l| {
                (0..4)
                    .map(|r| Stack {
                        units: vec![unit(UnitType::Militia, 3, 2)],
                        leader: ((l + r) % 4) as u32,
                    })
                    .collect()
            })
            .collect();
        b.sides[1].lanes = (0..8)
            .map(|l| {
                vec![Stack {
                    units: vec![
                        unit(UnitType::Militia, 2, 2),
                        unit(UnitType::Militia, 2, 1),
                        unit(UnitType::Regular, 3, 3),
                        unit(UnitType::Rifle, 4, 1),
                    ],
                    leader: (l % 4) as u32,
                }]
            })
            .collect();
        b.crt = MeleeCrt {
            columns: vec![(1, 2), (1, 1), (2, 1)],
            first_roll: 2,
            cells: vec![
                vec![(E(0), E(200)), (R, E(0)), (E(2), R)],
                vec![(N, E(3)), (E(200), N), (R, R)],
            ],
        };
        b
    }

    /// A random battle for the differential test, or `None` when it breaks a rule of
    /// 19.1 that [`FrontierCombat::new`] refuses (stacking, too many units).
    fn random_battle(g: &mut DiceStream) -> Option<FrontierBattle> {
        use CrtLoss::{Eliminate as E, None as N, Rout as R};
        let pick = |g: &mut DiceStream, n: usize| g.below(n as u32) as usize;
        let terrain = [Terrain::Rough, Terrain::Wilderness, Terrain::Settled][pick(g, 3)];
        let lanes = 1 + pick(g, MAX_LANES);
        let initiative = pick(g, 2);
        let surprise = [None, Some(0), Some(1)][pick(g, 3)];
        let first = 1 - surprise.unwrap_or(initiative);
        let stack = |g: &mut DiceStream| {
            let kind = [UnitType::Warrior, UnitType::Militia, UnitType::Regular][pick(g, 3)];
            let mut units = Vec::new();
            // Rifles do not count for stacking: one stack in six takes up to three more,
            // past SMALL_STACK_UNITS.
            let rifles = if pick(g, 6) == 0 { 1 + pick(g, 3) } else { 0 };
            for k in 0..1 + pick(g, 2) + pick(g, 3) + rifles {
                units.push(Unit {
                    kind: if k < 2 { kind } else { UnitType::Rifle },
                    fire_cf: 1 + pick(g, 10) as u32,
                    melee_cf: 1 + pick(g, 20) as u32,
                });
            }
            let leader = [0, 0, 0, 1, 2, 3][pick(g, 6)] as u32;
            Stack { units, leader }
        };
        let depth = 1 + pick(g, MAX_ROWS);
        let mut arrays: [Vec<Vec<Stack>>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..lanes {
            arrays[first].push(vec![stack(g)]);
            let rows = (depth - pick(g, 2)).max(1);
            arrays[1 - first].push((0..rows).map(|_| stack(g)).collect());
        }
        let loss = |g: &mut DiceStream| match pick(g, 6) {
            0 | 1 => N,
            2 => R,
            3 => E(0),
            4 => E(1 + pick(g, 3) as u8),
            _ => E([5, 31, 32, 33, 200, 255][pick(g, 6)]),
        };
        // Up to seven columns: past five, a CRT has more than 64 cells (the sweeps read
        // those by a gather, fewer by permutes).
        let columns = 1 + pick(g, 7);
        let crt = MeleeCrt {
            columns: (0..columns as u32)
                .map(|c| if c == 0 { (1, 2) } else { (c, 1) })
                .collect(),
            first_roll: pick(g, 6) as i32 - 2,
            cells: (0..1 + pick(g, 8))
                .map(|_| (0..columns).map(|_| (loss(g), loss(g))).collect())
                .collect(),
        };
        let [a, b] = arrays.map(|lanes| Side {
            level: 1 + pick(g, 5) as u32,
            primary_leader: 1 + pick(g, 3) as u32,
            lanes,
            move_policy: [MovePolicy::Aggressive, MovePolicy::FireOnly]
                [usize::from(pick(g, 4) == 0)],
            avoid_melee: pick(g, 2) == 0,
        });
        let battle = FrontierBattle {
            terrain,
            severe_weather: pick(g, 2) == 0,
            initiative,
            surprise,
            sides: [a, b],
            crt,
            leader_loss: [(1, 6), (2, 7), (1, 1), (0, 1)][pick(g, 4)],
            extra_round: pick(g, 2) == 0,
            victory: [VictoryRule::FewerLost, VictoryRule::FewerLostShare][pick(g, 2)],
        };
        FrontierCombat::new(battle.clone())
            .is_ok()
            .then_some(battle)
    }

    #[test]
    fn random_battles_are_fought_as_the_reference_fights_them_die_for_die() {
        let mut g = DiceStream::for_block(77, 0);
        let (mut checked, mut deep, mut wide, mut several_passes) = (0, 0, 0, 0);
        // Battles whose sides all read melee losses from tables, and those with a side
        // that searches for them (a stack past SMALL_STACK_UNITS).
        let (mut small, mut large) = (0, 0);
        while checked < 400 {
            let Some(battle) = random_battle(&mut g) else {
                continue;
            };
            let combat = FrontierCombat::new(battle).unwrap();
            checked += 1;
            deep += usize::from(
                combat
                    .masks
                    .iter()
                    .any(|m| m.lane_row_bits.contains(&0b1111)),
            );
            wide += usize::from(combat.lanes == MAX_LANES);
            let tables = combat.masks.iter().filter(|m| m.small_stacks).count();
            small += usize::from(tables == 2);
            large += usize::from(tables < 2);
            several_passes += usize::from(
                combat.units[0].len() > 2 * combat.units[1].len()
                    || combat.units[1].len() > 2 * combat.units[0].len(),
            );
            let reference = Reference::new(&combat);
            let mut fast = DiceStream::for_block(16, checked);
            let mut slow = fast.clone();
            for n in 0..300 {
                let a = combat.fight_with(&mut fast);
                let b = reference.fight(&mut slow);
                assert_eq!(a, b, "random battle {checked}, trial {n}");
                assert_eq!(
                    fast, slow,
                    "random battle {checked}, trial {n}: dice drawn differ"
                );
            }
        }
        // The draw reaches the limits the fixed battles do not all reach.
        assert!(
            deep > 10 && wide > 10 && several_passes > 10 && small > 10 && large > 10,
            "{deep} {wide} {several_passes} {small} {large}"
        );
    }

    /// A random battle made to suit the kernel in lanes where it can be: the side that
    /// sets up second in one row, stacks of at most `SMALL_STACK_UNITS`, leader loss on
    /// a d6.
    pub(super) fn random_battle_in_one_row(g: &mut DiceStream) -> Option<FrontierBattle> {
        let mut battle = random_battle(g)?;
        // One battle in three with stacks of at most two units (the sweeps read their
        // odds columns by permutes).
        let most_units = if g.below(3) == 0 {
            2
        } else {
            SMALL_STACK_UNITS
        };
        for side in &mut battle.sides {
            for lane in &mut side.lanes {
                lane.truncate(1);
                lane[0].units.truncate(most_units);
            }
        }
        battle.leader_loss = [(1, 6), (2, 6), (0, 6), (6, 6)][g.below(4) as usize];
        FrontierCombat::new(battle.clone())
            .is_ok()
            .then_some(battle)
    }

    /// A block of `n` battles fought lane by lane, as where the CPU has no AVX2.
    fn lane_by_lane(
        combat: &FrontierCombat,
        dice: &mut DiceStream,
        n: u64,
    ) -> (FrontierHistogram, u64) {
        let mut h = combat.empty_histogram();
        let words = crate::dice::lanes::fight_lanes(
            dice,
            n,
            &mut h,
            |_, _| None,
            |d, k, h| combat.fight_lane(d, k, h),
        );
        (h, words)
    }

    #[test]
    fn lanes_fight_at_once_the_battles_each_lane_fights_on_its_own() {
        if !crate::dice::lanes::VectorForm::Avx2.available() {
            eprintln!("this machine has no AVX2: the frontier sweeps are not used");
            return;
        }
        use crate::dice::lanes::LANES;
        let mut g = DiceStream::for_block(78, 0);
        let (mut swept, mut others, mut surprised, mut wide, mut fire_only) = (0, 0, 0, 0, 0);
        // Sweeps with the odds and the CRT's cells read by permutes, and by gathers.
        let (mut pair_odds, mut cells64) = ([0; 2], [0; 2]);
        let mut battles: Vec<FrontierBattle> = battles();
        battles.push(crate::systems::frontier::scenarios::frontier_six_stacks());
        while battles.len() < 300 {
            let pick = if battles.len().is_multiple_of(5) {
                random_battle(&mut g)
            } else {
                random_battle_in_one_row(&mut g)
            };
            battles.extend(pick);
        }
        for (i, battle) in battles.into_iter().enumerate() {
            let combat = FrontierCombat::new(battle).unwrap();
            let Some(tables) = &combat.lane_tables else {
                others += 1;
                let dice = DiceStream::for_block(5, i as u64);
                let mut h = combat.empty_histogram();
                assert_eq!(
                    lockstep::all_at_once(&combat, &dice.clone().lane_states(), 40, &mut h),
                    None
                );
                continue;
            };
            swept += 1;
            let (by_pairs, by_cells) = tables.read_by_permutes();
            pair_odds[usize::from(by_pairs)] += 1;
            cells64[usize::from(by_cells)] += 1;
            surprised += usize::from(combat.battle.surprise.is_some());
            wide += usize::from(combat.lanes == MAX_LANES);
            fire_only += usize::from(
                combat
                    .battle
                    .sides
                    .iter()
                    .any(|s| s.move_policy == MovePolicy::FireOnly),
            );
            for n in [
                1,
                7,
                31,
                32,
                33,
                100,
                if i < 5 || i % 20 == 0 { 3_000 } else { 70 },
            ] {
                let start = DiceStream::for_block(5, i as u64);
                let (expected, expected_words) = lane_by_lane(&combat, &mut start.clone(), n);
                let mut h = combat.empty_histogram();
                let mut dice = start.clone();
                let words = combat.lanes_block(&mut dice, n, &mut h);
                assert_eq!(h, expected, "battle {i}, {n} battles");
                assert_eq!(words, expected_words, "battle {i}, {n} battles: words");
                assert_eq!(start.words_until(&dice, 100), Some(LANES as u64));
                assert_eq!(h.result.iter().sum::<u64>(), n);
            }
        }
        // Both ways a sweep fights a round ran: all lanes at once, and lane by lane where
        // few lanes fight it.
        let [at_once, one_by_one] = lockstep::ROUNDS_FOUGHT.with(std::cell::Cell::get);
        assert!(
            at_once > 2_000 && one_by_one > 2_000,
            "{at_once} {one_by_one}"
        );
        assert!(
            swept > 150 && others > 30 && surprised > 40 && wide > 10 && fire_only > 20,
            "{swept} {others} {surprised} {wide} {fire_only}"
        );
        assert!(
            pair_odds.iter().chain(&cells64).all(|&n| n > 20),
            "{pair_odds:?} {cells64:?}"
        );
    }

    /// Faces drawn, on top of a `PackedDice`.
    struct CountingDice<'a> {
        dice: PackedDice<'a>,
        faces: usize,
    }

    impl BattleDice for CountingDice<'_> {
        fn face(&mut self) -> u32 {
            self.faces += 1;
            self.dice.face()
        }
        fn below(&mut self, n: u32) -> u32 {
            assert_eq!(n, 6, "the sweeps take only leader loss on a d6");
            self.face()
        }
    }

    /// The sweeps' windows hold `faces_bound` faces a battle: each phase of each round
    /// draws within its own share of it (fire a face a firer and a leader roll each, both
    /// sides; movement a face a side a lane; melee a face a lane and a leader roll a
    /// side; recovery a face a unit), and the extra round one face.
    #[test]
    fn each_phase_draws_within_its_share_of_the_sweeps_faces_bound() {
        let mut g = DiceStream::for_block(80, 0);
        let mut battles = vec![crate::systems::frontier::scenarios::frontier_six_stacks()];
        // The most draws a phase can take: one lane, leaders everywhere and never lost,
        // every fire die a hit.
        let mut tight = crate::systems::frontier::scenarios::frontier_six_stacks();
        for side in &mut tight.sides {
            side.lanes.truncate(1);
            side.lanes[0][0].leader = 3;
            side.lanes[0][0].units = vec![
                Unit {
                    kind: UnitType::Militia,
                    fire_cf: 10,
                    melee_cf: 1,
                };
                2
            ];
            side.move_policy = MovePolicy::Aggressive;
        }
        tight.leader_loss = (0, 6);
        battles.push(tight);
        while battles.len() < 200 {
            battles.extend(random_battle_in_one_row(&mut g));
        }
        let (mut checked, mut fullest) = (0, [0usize; 5]);
        for (i, battle) in battles.into_iter().enumerate() {
            let combat = FrontierCombat::new(battle).unwrap();
            let Some(tables) = &combat.lane_tables else {
                continue;
            };
            checked += 1;
            // The window's bound is the battle's most faces (the bit-sliced kernel draws at
            // most these).
            assert_eq!(tables.faces_bound(), combat.most_faces(), "battle {i}");
            let units = combat.units[0].len() + combat.units[1].len();
            let lanes = combat.lanes;
            let b = &combat.battle;
            let sides = [b.initiative, 1 - b.initiative];
            let shares = [
                2 * combat.units[sides[0]].len(),
                2 * combat.units[sides[1]].len(),
                2 * lanes + 3 * lanes,
                units,
            ];
            let mut stream = DiceStream::for_block(81, i as u64);
            let mut dice = CountingDice {
                dice: PackedDice::new(&mut stream),
                faces: 0,
            };
            for _ in 0..500 {
                dice.faces = 0;
                let mut st = combat.fresh();
                let rounds = combat.rounds(&mut dice);
                assert!(dice.faces <= 1);
                let mut battle_faces = dice.faces;
                for round in 1..=rounds {
                    let mut phase = |f: &mut dyn FnMut(&mut CountingDice), which: usize| {
                        let before = dice.faces;
                        f(&mut dice);
                        let drawn = dice.faces - before;
                        assert!(drawn <= shares[which], "battle {i}, phase {which}: {drawn}");
                        fullest[which] = fullest[which].max(drawn * 100 / shares[which]);
                        battle_faces += drawn;
                    };
                    for (which, side) in sides.into_iter().enumerate() {
                        if !(round == 1 && b.surprise == Some(1 - side)) {
                            phase(&mut |d| combat.fire_phase(&mut st, side, d), which);
                        }
                    }
                    phase(&mut |d| combat.movement_and_melee(&mut st, round, d), 2);
                    phase(&mut |d| combat.recovery(&mut st, d), 3);
                }
                assert!(battle_faces <= tables.faces_bound(), "battle {i}");
                fullest[4] = fullest[4].max(battle_faces * 100 / tables.faces_bound());
            }
        }
        assert!(checked > 150, "{checked}");
        // Each phase's share is reached by some battle.
        assert!(fullest[..4].iter().all(|&f| f == 100), "{fullest:?}");
    }

    #[test]
    fn a_words_faces_are_the_twelve_packed_dice_cut_from_it() {
        let mut g = DiceStream::for_block(79, 0);
        let mut words: Vec<u64> = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1];
        // Words at the edges of a face: 2^64 · k / 6^j for small j.
        for j in 1..=12u32 {
            let step = u128::from(u64::MAX) / 6u128.pow(j);
            for k in [1u128, 2, 3, 5] {
                let w = (step * k) as u64;
                words.extend([w.wrapping_sub(1), w, w.wrapping_add(1)]);
            }
        }
        words.extend((0..100_000).map(|_| g.next_u64()));
        for w in words {
            let mut word = DiceWord(w);
            let packed: Vec<u8> = (0..FACES_PER_WORD).map(|_| word.take(6) as u8).collect();
            assert_eq!(lockstep::cut_word(w).to_vec(), packed, "{w:#x}");
        }
    }

    #[test]
    fn the_mask_kernel_fights_the_reference_battle_die_for_die() {
        let mut searched = 0;
        for (i, battle) in battles().into_iter().enumerate() {
            let combat = FrontierCombat::new(battle)
                .unwrap_or_else(|e| panic!("test battle {i}: {}", e.message));
            searched += usize::from(combat.odds_columns.is_empty());
            let reference = Reference::new(&combat);
            let mut fast = DiceStream::for_block(16, i as u64);
            let mut slow = fast.clone();
            let mut rounds = [0u32; 5];
            for n in 0..20_000 {
                let a = combat.fight_with(&mut fast);
                let b = reference.fight(&mut slow);
                assert_eq!(a, b, "battle {i}, trial {n}");
                assert_eq!(fast, slow, "battle {i}, trial {n}: dice drawn differ");
                rounds[a.rounds as usize] += 1;
            }
            assert!(
                rounds.iter().filter(|&&r| r > 0).count() >= 2,
                "battle {i}: {rounds:?}"
            );
        }
        // One battle's strengths are too large for the odds-column table: both ways of
        // finding the column are checked.
        assert_eq!(searched, 1);
    }

    #[test]
    fn fire_prefers_the_nearest_lane_then_the_lower_numbered() {
        let combat =
            FrontierCombat::new(crate::systems::frontier::scenarios::frontier_six_stacks())
                .unwrap();
        let nearest = |firer: usize, lanes: &[usize]| {
            let set: usize = lanes.iter().map(|&l| 1 << l).sum();
            usize::from(combat.nearest_lane[firer][set])
        };
        assert_eq!(nearest(2, &[0, 1, 2, 3, 4, 5]), 2, "its own lane first");
        assert_eq!(
            nearest(2, &[1, 3]),
            1,
            "the lower-numbered at equal distance"
        );
        assert_eq!(
            nearest(2, &[0, 4]),
            0,
            "the lower-numbered at equal distance"
        );
        assert_eq!(nearest(2, &[0, 3]), 3, "the nearer");
        assert_eq!(nearest(2, &[5]), 5);
        assert_eq!(nearest(5, &[0, 1, 2, 3, 4]), 4);
        assert_eq!(nearest(0, &[1, 2, 3, 4, 5]), 1);
        // Every firer lane and every set of lanes: the nearest, the lower at equal distance.
        for firer in 0..MAX_LANES {
            for set in 1..1usize << MAX_LANES {
                let got = usize::from(combat.nearest_lane[firer][set]);
                assert_eq!(set >> got & 1, 1, "firer {firer}, lanes {set:b}");
                for l in (0..MAX_LANES).filter(|&l| set >> l & 1 == 1) {
                    let (d, g) = (l.abs_diff(firer), got.abs_diff(firer));
                    assert!(
                        d > g || (d == g && l >= got),
                        "firer {firer}, lanes {set:b}"
                    );
                }
            }
        }
    }

    #[test]
    fn packed_dice_take_twelve_faces_a_word_and_whole_words_otherwise() {
        let mut stream = DiceStream::for_block(3, 0);
        let mut copy = stream.clone();
        let mut word = copy.word();
        let mut packed = PackedDice::new(&mut stream);
        for _ in 0..12 {
            assert_eq!(packed.face(), word.take(6));
        }
        let mut word = copy.word();
        assert_eq!(packed.below(6), word.take(6));
        assert_eq!(packed.below(7), copy.below(7));
        assert_eq!(packed.face(), word.take(6));
    }
}
