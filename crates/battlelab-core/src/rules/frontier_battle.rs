//! Frontier quick battles, whole (seed 002 rule 19, RULES.md C): rounds of fire combat,
//! movement, melee and recovery over two arrays of stacks, units going normal →
//! disrupted → routed → eliminated, leaders lost, and the victory reading.
//!
//! Why this module exists: the single rolls live in [`crate::rules::frontier`]; this is
//! the battle loop that strings them together. A [`FrontierBattle`] is plain data,
//! validated once by [`FrontierCombat::new`] (stacking limits of 19.1, the array of rows,
//! the melee CRT's shape, ratings and levels); after that [`FrontierCombat::fight`] cannot
//! fail and does not allocate. The readings of what the seed leaves open are in
//! `docs/frontier-readings.md`.

use crate::dice::DiceStream;
use crate::rules::crt::RulesError;
use crate::rules::frontier::{
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

/// The melee CRT the analysis file supplies (the game's own is not in the seed): odds
/// columns in ascending order, one row per modified die roll from `first_roll` up.
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
    pub fn column_for(&self, attacker: u32, defender: u32) -> usize {
        self.columns
            .iter()
            .rposition(|&(a, d)| {
                u64::from(attacker) * u64::from(d) >= u64::from(defender) * u64::from(a)
            })
            .unwrap_or(0)
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

/// Whether a side's stacks try to move atop the enemy (RULES.md C policies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MovePolicy {
    /// Every eligible front stack tries to melee.
    Aggressive,
    /// Never move.
    FireOnly,
}

/// How victory is read at the end (RULES.md C [option]).
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
    row: usize,
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
    /// `lane_stacks[side][lane]`: the side's stacks in that lane, front row first.
    lane_stacks: [Vec<Vec<usize>>; 2],
    /// `fire_order[side][lane]`: the side's units in the order a firer in `lane` prefers
    /// them at equal count and depth: nearest lane (its own first, then the lower lane at
    /// equal distance), then the first listed.
    fire_order: [[[u8; MAX_UNITS]; MAX_LANES]; 2],
}

/// Unit states.
pub const NORMAL: u8 = 0;
pub const DISRUPTED: u8 = 1;
pub const ROUTED: u8 = 2;
pub const ELIMINATED: u8 = 3;

/// The battle's state: every unit's state, whether it is off the array (routed in melee),
/// and every leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BattleState {
    pub unit_state: [[u8; MAX_UNITS]; 2],
    pub removed: [[bool; MAX_UNITS]; 2],
    pub leader_alive: [[bool; MAX_STACKS]; 2],
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
                for (r, stack) in lane.iter().enumerate() {
                    let index = stacks[s].len();
                    stacks[s].push(CompiledStack {
                        lane: l,
                        row: r,
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
        let lane_stacks = [0, 1].map(|s| {
            (0..lanes)
                .map(|l| {
                    let mut list: Vec<usize> = (0..stacks[s].len())
                        .filter(|&i| stacks[s][i].lane == l)
                        .collect();
                    list.sort_by_key(|&i| stacks[s][i].row);
                    list
                })
                .collect::<Vec<_>>()
        });
        let fire_order = [0, 1].map(|s| {
            std::array::from_fn(|lane| {
                let mut order: Vec<usize> = (0..units[s].len()).collect();
                order.sort_by_key(|&t| {
                    let l = units[s][t].lane;
                    (l.abs_diff(lane), l < lane, t)
                });
                let mut out = [0u8; MAX_UNITS];
                for (o, t) in out.iter_mut().zip(order) {
                    *o = t as u8;
                }
                out
            })
        });
        Ok(Self {
            battle,
            units,
            stacks,
            lanes,
            lane_stacks,
            fire_order,
        })
    }

    pub fn battle(&self) -> &FrontierBattle {
        &self.battle
    }

    /// Units each side fields.
    pub fn unit_count(&self, side: usize) -> usize {
        self.units[side].len()
    }

    pub fn fresh_state(&self) -> BattleState {
        BattleState {
            unit_state: [[NORMAL; MAX_UNITS]; 2],
            removed: [[false; MAX_UNITS]; 2],
            leader_alive: [[true; MAX_STACKS]; 2],
        }
    }

    fn in_play(state: &BattleState, side: usize, unit: usize) -> bool {
        state.unit_state[side][unit] != ELIMINATED && !state.removed[side][unit]
    }

    fn leader_of(&self, state: &BattleState, side: usize, stack: usize) -> u32 {
        if state.leader_alive[side][stack] {
            self.stacks[side][stack].leader
        } else {
            0
        }
    }

    fn lose_leader(
        &self,
        state: &mut BattleState,
        side: usize,
        stack: usize,
        dice: &mut DiceStream,
    ) {
        if self.stacks[side][stack].leader > 0 && state.leader_alive[side][stack] {
            let (num, den) = self.battle.leader_loss;
            if dice.below(den) < num {
                state.leader_alive[side][stack] = false;
            }
        }
    }

    /// The front stack of a lane: the first, by row, with a unit in play.
    fn front_stack(&self, state: &BattleState, side: usize, lane: usize) -> Option<usize> {
        self.lane_stacks[side][lane].iter().copied().find(|&i| {
            let s = &self.stacks[side][i];
            (s.first_unit..s.first_unit + s.unit_count).any(|u| Self::in_play(state, side, u))
        })
    }

    /// Fire combat of one side (19.2.1). Every undisrupted unit in play fires, in listed
    /// order (lane by lane, front row first). Targets are assigned before any die is
    /// rolled: each firer takes, among the enemy's units in play, one targeted the fewest
    /// times so far, then one in the enemy's front row (the first stack of its lane with
    /// a unit in play) before any behind, then the nearest lane to the firer's (its own
    /// first, then the lower lane at equal distance), then the first listed. So every
    /// enemy front-row unit, in any lane, is targeted before any second-row unit, and
    /// every unit once before any twice.
    fn fire_phase(&self, state: &mut BattleState, side: usize, dice: &mut DiceStream) {
        let enemy = 1 - side;
        // Each enemy unit's depth: the rank of its stack among its lane's stacks in play.
        let mut depth = [u8::MAX; MAX_UNITS];
        let mut any_target = false;
        for lane in 0..self.lanes {
            let mut rank = 0u8;
            for &st in &self.lane_stacks[enemy][lane] {
                let stack = &self.stacks[enemy][st];
                let mut in_play = false;
                let units = stack.first_unit..stack.first_unit + stack.unit_count;
                for (d, u) in depth[units.clone()].iter_mut().zip(units) {
                    if Self::in_play(state, enemy, u) {
                        *d = rank;
                        in_play = true;
                    }
                }
                rank += u8::from(in_play);
                any_target |= in_play;
            }
        }
        if !any_target {
            return;
        }
        // PERF: targets by bit masks. The old loop weighed every enemy unit for every
        // firer (a 5-part key over 12 × 12 pairs a volley, the largest share of a battle's
        // time). The key's first part, "targeted the fewest times", only ever means "not
        // yet targeted at the current count", a mask that refills when empty; depth is one
        // mask per rank; and the rest (lane distance, lower lane, index) is fixed per firer
        // lane, so it is a precomputed order (`fire_order`) scanned for the first unit in
        // the mask. Same targets as the key, in the same order.
        let mut rank_mask = [0u32; MAX_ROWS + 1];
        let mut in_play_mask = 0u32;
        for (t, &d) in depth.iter().enumerate().take(self.units[enemy].len()) {
            if d != u8::MAX {
                rank_mask[usize::from(d).min(MAX_ROWS)] |= 1 << t;
                in_play_mask |= 1 << t;
            }
        }
        let mut available = in_play_mask;
        let mut shots = [(0u8, 0u8); MAX_UNITS];
        let mut shot_count = 0;
        for (i, unit) in self.units[side].iter().enumerate() {
            if !Self::in_play(state, side, i) || state.unit_state[side][i] != NORMAL {
                continue;
            }
            if available == 0 {
                available = in_play_mask;
            }
            let set = rank_mask
                .iter()
                .map(|&m| m & available)
                .find(|&m| m != 0)
                .unwrap_or(available);
            let order = &self.fire_order[enemy][unit.lane];
            let target = order
                .iter()
                .copied()
                .find(|&t| set >> t & 1 == 1)
                .unwrap_or(0);
            available &= !(1 << target);
            shots[shot_count] = (i as u8, target);
            shot_count += 1;
        }
        for &(shooter, target) in &shots[..shot_count] {
            let face = dice.below(6);
            let t = target as usize;
            // A hit on a unit already eliminated earlier in this volley is wasted.
            if self.units[side][shooter as usize].fire_faces >> face & 1 == 1
                && state.unit_state[enemy][t] != ELIMINATED
            {
                state.unit_state[enemy][t] += 1;
                let stack = self.units[enemy][t].stack;
                self.lose_leader(state, enemy, stack, dice);
            }
        }
    }

    /// Movement (19.2.2) and melee (19.2.3) of one round.
    fn movement_and_melee(&self, state: &mut BattleState, round: u32, dice: &mut DiceStream) {
        let b = &self.battle;
        // Per lane: the attacking side and stack, which of its units moved in, and which
        // defending units moved away (avoided the melee).
        let mut melee: [Option<(usize, usize, u32, u32)>; MAX_LANES] = [None; MAX_LANES];
        for side in [b.initiative, 1 - b.initiative] {
            if b.sides[side].move_policy == MovePolicy::FireOnly {
                continue;
            }
            let surprised = round == 1 && b.surprise == Some(1 - side);
            let won_surprise = round == 1 && b.surprise == Some(side);
            for (lane, engaged) in melee.iter_mut().enumerate().take(self.lanes) {
                let enemy_atop = matches!(*engaged, Some((attacker, _, _, 0)) if attacker != side);
                if engaged.is_some() && !(enemy_atop && b.sides[side].avoid_melee) {
                    continue;
                }
                let (Some(own), Some(_)) = (
                    self.front_stack(state, side, lane),
                    self.front_stack(state, 1 - side, lane),
                ) else {
                    continue;
                };
                let stack = self.stacks[side][own];
                // The undisrupted units move; disrupted and routed ones may not. Settled
                // terrain's −1 goes to any unit stacked with a regular at the time of
                // movement (moving or not); rough terrain's +1 when a mover is no warrior.
                let mut movers = 0u32;
                let (mut any_regular, mut any_non_warrior) = (false, false);
                for u in stack.first_unit..stack.first_unit + stack.unit_count {
                    if !Self::in_play(state, side, u) {
                        continue;
                    }
                    any_regular |= self.units[side][u].kind == UnitType::Regular;
                    if state.unit_state[side][u] == NORMAL {
                        movers |= 1 << (u - stack.first_unit);
                        any_non_warrior |= self.units[side][u].kind != UnitType::Warrior;
                    }
                }
                let leader = self.leader_of(state, side, own);
                if movers == 0 || (surprised && leader == 0) {
                    continue;
                }
                let roll = MoveRoll {
                    level: b.sides[side].level,
                    // The type only decides rough terrain's +1 here (settled's −1 comes
                    // from `with_regular`).
                    unit: if any_non_warrior {
                        UnitType::Militia
                    } else {
                        UnitType::Warrior
                    },
                    terrain: b.terrain,
                    leader,
                    severe_weather: b.severe_weather,
                    with_regular: any_regular,
                    enemy_atop,
                    surprise_bonus: won_surprise && leader > 0,
                };
                if roll.moves(dice.d6()) {
                    // Units that move away from an enemy atop them avoid the melee; the
                    // ones left behind (disrupted or routed) still fight it. Otherwise the
                    // movers go atop the enemy.
                    *engaged = match *engaged {
                        Some((attacker, attacking, moved, _)) if enemy_atop => {
                            Some((attacker, attacking, moved, movers))
                        }
                        _ => Some((side, own, movers, 0)),
                    };
                }
            }
        }
        for (lane, engaged) in melee.iter().enumerate().take(self.lanes) {
            if let Some((side, stack, movers, avoided)) = *engaged {
                self.melee(state, lane, side, stack, movers, avoided, round, dice);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn melee(
        &self,
        state: &mut BattleState,
        lane: usize,
        attacker: usize,
        attacking_stack: usize,
        movers: u32,
        avoided: u32,
        round: u32,
        dice: &mut DiceStream,
    ) {
        let b = &self.battle;
        let defender = 1 - attacker;
        let Some(defending_stack) = self.front_stack(state, defender, lane) else {
            return;
        };
        let a_stack = self.stacks[attacker][attacking_stack];
        let d_stack = self.stacks[defender][defending_stack];
        let a_units = a_stack.first_unit..a_stack.first_unit + a_stack.unit_count;
        let d_units = d_stack.first_unit..d_stack.first_unit + d_stack.unit_count;
        let fighting_a = |u: usize, st: &BattleState| {
            movers >> (u - a_stack.first_unit) & 1 == 1
                && Self::in_play(st, attacker, u)
                && st.unit_state[attacker][u] != ROUTED
        };
        let stayed = |u: usize| avoided >> (u - d_stack.first_unit) & 1 == 0;
        let fighting_d = |u: usize, st: &BattleState| {
            stayed(u) && Self::in_play(st, defender, u) && st.unit_state[defender][u] != ROUTED
        };
        let strength_a: u32 = a_units
            .clone()
            .filter(|&u| fighting_a(u, state))
            .map(|u| self.units[attacker][u].melee_strength)
            .sum();
        let strength_d: u32 = d_units
            .clone()
            .filter(|&u| fighting_d(u, state))
            .map(|u| self.units[defender][u].melee_strength)
            .sum();
        if strength_a == 0 {
            return;
        }
        if strength_d == 0 {
            // Every defender left in play is routed: all are eliminated (none left: the
            // whole stack moved away, and there is no melee).
            for u in d_units {
                if stayed(u) && Self::in_play(state, defender, u) {
                    state.unit_state[defender][u] = ELIMINATED;
                }
            }
            return;
        }
        let disrupted = d_units
            .clone()
            .any(|u| fighting_d(u, state) && state.unit_state[defender][u] == DISRUPTED);
        let shift = self.leader_of(state, attacker, attacking_stack) as i32
            - self.leader_of(state, defender, defending_stack) as i32
            + i32::from(disrupted)
            + i32::from(round == 1 && b.surprise == Some(attacker));
        let column = (b.crt.column_for(strength_a, strength_d) as i32 + shift)
            .clamp(0, b.crt.columns.len() as i32 - 1) as usize;
        let drm = (b.sides[attacker].level as i32 - b.sides[defender].level as i32).clamp(-3, 3);
        let (loss_a, loss_d) = b.crt.cell(dice.d6() as i32 + drm, column);
        for (side, stack, loss, units) in [
            (attacker, attacking_stack, loss_a, a_units),
            (defender, defending_stack, loss_d, d_units),
        ] {
            let fights = |u: usize, st: &BattleState| {
                if side == attacker {
                    fighting_a(u, st)
                } else {
                    fighting_d(u, st)
                }
            };
            match loss {
                CrtLoss::None => {}
                CrtLoss::Rout => {
                    for u in units.clone() {
                        if fights(u, state) {
                            state.unit_state[side][u] = ROUTED;
                            state.removed[side][u] = true;
                        }
                    }
                }
                CrtLoss::Eliminate(n) => {
                    // The owner loses its weakest first: disrupted before undisrupted,
                    // then the lowest melee strength, then the last listed.
                    for _ in 0..n {
                        let victim = units
                            .clone()
                            .filter(|&u| fights(u, state))
                            .min_by_key(|&u| {
                                (
                                    state.unit_state[side][u] == NORMAL,
                                    self.units[side][u].melee_strength,
                                    std::cmp::Reverse(u),
                                )
                            });
                        match victim {
                            Some(u) => state.unit_state[side][u] = ELIMINATED,
                            None => break,
                        }
                    }
                }
            }
            if loss != CrtLoss::None && loss != CrtLoss::Eliminate(0) {
                self.lose_leader(state, side, stack, dice);
            }
        }
    }

    /// Recovery (19.2.4): every disrupted or routed unit rolls; success is one level up (a
    /// routed unit off the array comes back to its stack disrupted).
    fn recovery(&self, state: &mut BattleState, dice: &mut DiceStream) {
        for side in 0..2 {
            for (u, unit) in self.units[side].iter().enumerate() {
                let s = state.unit_state[side][u];
                if s != DISRUPTED && s != ROUTED {
                    continue;
                }
                let roll = RecoveryRoll {
                    level: self.battle.sides[side].level,
                    leader: self.leader_of(state, side, unit.stack),
                };
                if roll.recovers(dice.d6()) {
                    state.unit_state[side][u] = s - 1;
                    state.removed[side][u] = false;
                }
            }
        }
    }

    /// Rounds of 19.1: the initiative side's primary leader rating, plus one when the
    /// non-initiative side tries and rolls under its primary leader's rating.
    fn rounds(&self, dice: &mut DiceStream) -> u32 {
        let b = &self.battle;
        let other = 1 - b.initiative;
        let extra = b.extra_round && dice.d6() < b.sides[other].primary_leader;
        b.sides[b.initiative].primary_leader + u32::from(extra)
    }

    /// One whole battle.
    pub fn fight(&self, dice: &mut DiceStream) -> BattleOutcome {
        let b = &self.battle;
        let mut state = self.fresh_state();
        let rounds = self.rounds(dice);
        let mut lost_after_round = [[0u8; 2]; 4];
        for round in 1..=rounds {
            for side in [b.initiative, 1 - b.initiative] {
                let surprised = round == 1 && b.surprise == Some(1 - side);
                if !surprised {
                    self.fire_phase(&mut state, side, dice);
                }
            }
            self.movement_and_melee(&mut state, round, dice);
            self.recovery(&mut state, dice);
            lost_after_round[round as usize - 1] = [0, 1].map(|side| {
                state.unit_state[side][..self.units[side].len()]
                    .iter()
                    .filter(|&&s| s >= ROUTED)
                    .count() as u8
            });
        }
        for round in rounds as usize..4 {
            lost_after_round[round] = lost_after_round[round - 1];
        }
        let mut out = self.outcome(&state, rounds);
        out.lost_after_round = lost_after_round;
        out
    }

    /// Counts and the victory reading at the end of the last round.
    pub fn outcome(&self, state: &BattleState, rounds: u32) -> BattleOutcome {
        let mut out = BattleOutcome {
            winner: None,
            rounds,
            eliminated: [0; 2],
            routed: [0; 2],
            disrupted: [0; 2],
            leaders_lost: [0; 2],
            lost_after_round: [[0; 2]; 4],
        };
        for side in 0..2 {
            for u in 0..self.units[side].len() {
                match state.unit_state[side][u] {
                    ELIMINATED => out.eliminated[side] += 1,
                    ROUTED => out.routed[side] += 1,
                    DISRUPTED => out.disrupted[side] += 1,
                    _ => {}
                }
            }
            out.leaders_lost[side] = self.stacks[side]
                .iter()
                .enumerate()
                .filter(|(i, s)| s.leader > 0 && !state.leader_alive[side][*i])
                .count() as u32;
        }
        let lost = [0, 1].map(|s| u64::from(out.eliminated[s] + out.routed[s]));
        let (a, b) = match self.battle.victory {
            VictoryRule::FewerLost => (lost[0], lost[1]),
            // lost_a / n_a against lost_b / n_b, by cross-multiplying.
            VictoryRule::FewerLostShare => (
                lost[0] * self.units[1].len() as u64,
                lost[1] * self.units[0].len() as u64,
            ),
        };
        out.winner = match a.cmp(&b) {
            std::cmp::Ordering::Less => Some(0),
            std::cmp::Ordering::Greater => Some(1),
            std::cmp::Ordering::Equal => None,
        };
        out
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

    /// Adds `n` simulated battles into `histogram`.
    pub fn battle_block(&self, dice: &mut DiceStream, n: u64, histogram: &mut FrontierHistogram) {
        for _ in 0..n {
            let o = self.fight(dice);
            let result = match o.winner {
                Some(0) => 0,
                None => 1,
                Some(_) => 2,
            };
            histogram.result[result] += 1;
            histogram.rounds[o.rounds as usize] += 1;
            histogram.result_by_rounds[o.rounds as usize][result] += 1;
            for side in 0..2 {
                histogram.eliminated[side][o.eliminated[side] as usize] += 1;
                histogram.routed[side][o.routed[side] as usize] += 1;
                histogram.disrupted[side][o.disrupted[side] as usize] += 1;
                histogram.leaders_lost[side][o.leaders_lost[side] as usize] += 1;
                for round in 0..4 {
                    histogram.lost_by_round[round][side]
                        [o.lost_after_round[round][side] as usize] += 1;
                }
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
        |dice, n, h| combat.battle_block(dice, n, h),
        control,
    )
}
