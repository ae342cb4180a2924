#![allow(dead_code)]
//! Independent exact oracle for small frontier quick battles (rule 19,
//! `docs/systems/frontier.md`), written from the rules text and the readings doc only:
//! std only, no crate code, its own input types.
//!
//! [`solve`] propagates an exact probability distribution (f64) over whole battle states —
//! every unit's state (normal, disrupted, routed on the array, routed off the array,
//! eliminated) and every stack leader (present / lost) — phase by phase, round by round.
//! Every die is branched with its probability; nothing is sampled. Equal states are merged
//! after every roll. Meant for 1–2 lanes, 1–2 units per stack, at most 2 rows, up to 4
//! rounds (at most [`MAX_UNITS`] units and [`MAX_STACKS`] stacks a side).
//!
//! Readings implemented (those now in docs/systems/frontier.md, as they stood at commit
//! ca5cd81, taken literally).
//! Points the doc leaves open are marked CHOICE; each is a switch of [`Readings`] whose
//! default is the reading written here, so that a test can show a case tells the
//! readings apart.
//! - Single rolls. Fire: CF × terrain multiplier (regular ×2 in settled), DRM regular −1*
//!   in wilderness and settled, militia −1 in settled, rifle −1* in wilderness and −1 in
//!   settled; `*` DRMs are dropped in severe weather, the doubling is not; a hit when the
//!   modified roll ≤ modified CF, the natural 1 always hits, the natural 6 always misses.
//!   Movement: d6 − leader + (−1 settled if a regular is in the stack at the time of
//!   movement, moving or not — on the array, any state) + (+1 rough if any moving unit is
//!   not a warrior) + (+1 severe) + (+1 enemy atop, i.e. an avoid-melee move) + (−1 side
//!   that won surprise, round 1, stacked with a leader) ≤ level; natural 1 always moves,
//!   natural 6 never. Recovery: natural roll ≠ 6 and roll − stacked leader ≤ level.
//!   Melee multipliers: warrior ×3 rough, ×2 otherwise; regular ×1; militia ×2 rough, ×1
//!   wilderness, ×2 settled; rifle ×1.
//! - Rounds: the initiative side's primary leader rating; plus one with probability
//!   (rating − 1)/6 of the non-initiative side's primary leader ("rolls under") when
//!   `extra_round`. Every round is fought (no early end when a side has nothing left).
//! - Round = fire (initiative side, then the other, each side's hits applied before the
//!   other fires), movement (initiative side, then the other), melee (lane by lane),
//!   recovery.
//! - Fire: the surprised side does not fire in round 1. Every unit in state normal on the
//!   array fires, in listed order (lanes left to right, front stack first, units as
//!   listed). Targets are assigned before the side's dice: each firer takes, among the
//!   enemy units on the array, the one minimising (times targeted so far in this volley,
//!   behind the front row?, |lane − firer's lane|, lane, row, as listed), the front row
//!   of a lane being its first stack with a unit on the array.
//! - A hit moves the target one level (normal → disrupted → routed → eliminated). A hit
//!   on a unit already eliminated in the same volley is wasted and rolls nothing; any
//!   other hit on a unit of a stack whose leader is present rolls for the leader at once.
//! - Movement (`aggressive` only; `fire-only` never moves, nor avoids): side by side,
//!   lane by lane, the side's front stack, if its lane holds no melee yet, the enemy
//!   holds a front stack in the lane, and it has units in state normal on the array,
//!   rolls to move those units (with its leader) atop the enemy's front stack. CHOICE
//!   (seed 19.2.2, not restated in the readings doc): in round 1 a stack of the
//!   surprised side moves (or avoids) only with a present leader. With `avoid_melee`, the
//!   enemy front stack moved atop (if `aggressive` and with units in state normal) rolls
//!   at +1 to move away (CHOICE: even if it tried and failed its own move earlier this
//!   round — "a front stack the enemy has moved atop tries"). On a success its units in
//!   state normal leave the melee; the disrupted and routed units left on the array still
//!   fight it (all routed: eliminated). With none left behind the lane has no melee, and
//!   (CHOICE) the stack that avoided, having made its move, does not move again this
//!   round. CHOICE: units left behind keep their stack's leader (the defending stack's
//!   leader shifts the column and rolls for loss).
//! - Melee: attacker strength = Σ melee CF × multiplier of the moved units; defenders
//!   engaged = the defending front stack's units on the array (less any that avoided),
//!   not routed. If every such defender is routed, they are all eliminated (no roll, no
//!   leader roll). Odds → highest column with att/def ≥ a/d (cross-multiplied), else the
//!   first; shift + attacking stack's leader rating, − defending stack's leader rating,
//!   plus 1 if an engaged defender is disrupted, plus 1 if the attacker won surprise and it is
//!   round 1; the sum clamped to the table. Row = d6 + clamp(level_att − level_def, −3,
//!   3), clamped to the printed rows. A number n eliminates n engaged units of that side:
//!   disrupted before normal, then lowest melee strength, then the last listed; R routs
//!   every engaged unit of the side off the array. The present leader of the attacking
//!   stack (resp. defending stack) rolls for loss once when its side's cell is a number
//!   or R.
//! - Recovery: every disrupted or routed unit (on or off the array) rolls with its side's
//!   level and (CHOICE) the present leader of its own stack, also for a unit off the
//!   array; success: disrupted → normal, routed → disrupted (back on the array).
//! - End: lost = eliminated + routed (on or off the array); fewer lost wins, equal draws;
//!   or a smaller share lost/units (units counting every unit, rifles included).
//!   Leaders lost counts stack leaders lost. `lost_by_round[r]`: units lost at the end of
//!   round r + 1, or at the end of the battle if it was shorter.

use std::collections::HashMap;

pub const MAX_UNITS: usize = 8;
pub const MAX_STACKS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Warrior,
    Regular,
    Militia,
    Rifle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ground {
    Rough,
    Wilderness,
    Settled,
}

#[derive(Clone, Copy, Debug)]
pub struct OUnit {
    pub kind: Kind,
    pub fire_cf: u32,
    pub melee_cf: u32,
}

#[derive(Clone, Debug)]
pub struct OStack {
    pub units: Vec<OUnit>,
    /// 0: no leader.
    pub leader: u32,
}

#[derive(Clone, Debug)]
pub struct OSide {
    pub level: u32,
    pub primary_leader: u32,
    /// `lanes[lane][row]`.
    pub lanes: Vec<Vec<OStack>>,
    /// true: aggressive; false: fire-only.
    pub aggressive: bool,
    pub avoid_melee: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    None,
    Elim(u32),
    Rout,
}

#[derive(Clone, Debug)]
pub struct OCrt {
    pub columns: Vec<(u32, u32)>,
    pub first_roll: i32,
    /// `cells[row][col]` = (attacker loss, defender loss).
    pub cells: Vec<Vec<(Loss, Loss)>>,
}

#[derive(Clone, Debug)]
pub struct OBattle {
    pub ground: Ground,
    pub severe: bool,
    pub initiative: usize,
    pub surprise: Option<usize>,
    pub sides: [OSide; 2],
    pub crt: OCrt,
    pub leader_loss: (u32, u32),
    pub extra_round: bool,
    /// false: fewer lost; true: smaller share lost.
    pub share_victory: bool,
}

/// Exact distributions, laid out like the crate's histogram (as probabilities).
#[derive(Clone, Debug, Default)]
pub struct Exact {
    /// A wins, draw, B wins.
    pub result: [f64; 3],
    pub rounds: [f64; 5],
    pub result_by_rounds: [[f64; 3]; 5],
    pub eliminated: [Vec<f64>; 2],
    pub routed: [Vec<f64>; 2],
    pub disrupted: [Vec<f64>; 2],
    pub leaders_lost: [Vec<f64>; 2],
    /// `lost_by_round[r][side][k]`: P(the side has lost k units at the end of round r + 1,
    /// or at the end of the battle if it had fewer rounds).
    pub lost_by_round: [[Vec<f64>; 2]; 4],
}

/// How fire targets are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetRule {
    /// The readings doc: fewest times targeted, then front row, then nearest lane (own
    /// first, lower at equal distance), then listed order.
    FewestTimes,
    /// The earlier reading: a per-lane cursor over the own lane's units (front row
    /// first); a lane with no enemy left cycles, by its own cursor, over the enemy's
    /// front stacks of the other lanes, leftmost first.
    LaneCursor,
}

/// The readings, as switches. [`Readings::default`] is the oracle's reading (documented
/// at the top of the module); the alternatives exist so that a test can show a case
/// tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Readings {
    pub target_rule: TargetRule,
    /// A hit on a unit already eliminated earlier in the same volley still rolls for the
    /// stack's leader (default `false`: wasted).
    pub leader_roll_on_dead_hit: bool,
    /// Round 1: a stack of the surprised side moves (or avoids) only with a leader
    /// (seed 19.2.2; default `true`).
    pub surprised_needs_leader: bool,
    /// A stack that tried and failed its own move may still try to avoid a melee later
    /// in the round (default `false`: one movement roll per stack per round, 19.2.2's
    /// "only one such move can be made by a unit/stack per battle round").
    pub avoid_after_failed_move: bool,
    /// The recovery roll of a unit routed off the array uses its stack's leader
    /// (default `true`).
    pub off_array_recovery_uses_leader: bool,
    /// Ties in "weakest first" (same state, same melee strength): `true` (default) the
    /// last listed unit goes first; `false` the first listed.
    pub tie_last_listed: bool,
    /// Settled −1 to move when a regular is in the stack, moving or not (default `true`);
    /// `false`: only when a moving unit is a regular.
    pub settled_regular_in_stack: bool,
    /// After a successful avoid, disrupted and routed units left behind still fight the
    /// melee (default `true`); `false`: the lane has no melee.
    pub left_behind_fight: bool,
    /// Units left behind keep their stack's leader for the melee (default `true`);
    /// `false`: the leader went away with the avoiding units.
    pub left_behind_keep_leader: bool,
    /// A stack that avoided with nobody left behind may still try its own move atop the
    /// enemy later in the round (default `false`).
    pub avoided_stack_may_move: bool,
    /// Fire at equal lane distance: the higher-numbered lane first (default `false`: the
    /// lower-numbered, the readings doc).
    pub equal_distance_higher_lane: bool,
}

impl Default for Readings {
    fn default() -> Self {
        Readings {
            target_rule: TargetRule::FewestTimes,
            leader_roll_on_dead_hit: false,
            surprised_needs_leader: true,
            avoid_after_failed_move: false,
            off_array_recovery_uses_leader: true,
            tie_last_listed: true,
            settled_regular_in_stack: true,
            left_behind_fight: true,
            left_behind_keep_leader: true,
            avoided_stack_may_move: false,
            equal_distance_higher_lane: false,
        }
    }
}

// ---------------------------------------------------------------- single rolls

fn faces(pred: impl Fn(i32) -> bool) -> f64 {
    (1..=6).filter(|&f| pred(f)).count() as f64 / 6.0
}

/// (CF multiplier, DRM, DRM waived in severe weather) of 19.2.1.
fn fire_terrain(kind: Kind, g: Ground) -> (u32, i32, bool) {
    use Ground::*;
    use Kind::*;
    match (kind, g) {
        (Warrior, _) => (1, 0, false),
        (Regular, Rough) => (1, 0, false),
        (Regular, Wilderness) => (1, -1, true),
        (Regular, Settled) => (2, -1, true),
        (Militia, Settled) => (1, -1, false),
        (Militia, _) => (1, 0, false),
        (Rifle, Rough) => (1, 0, false),
        (Rifle, Wilderness) => (1, -1, true),
        (Rifle, Settled) => (1, -1, false),
    }
}

pub fn fire_hit_prob(kind: Kind, cf: u32, g: Ground, severe: bool) -> f64 {
    let (mult, drm, waived) = fire_terrain(kind, g);
    let drm = if waived && severe { 0 } else { drm };
    let cf = (cf * mult) as i32;
    faces(|f| f == 1 || (f != 6 && f + drm <= cf))
}

#[allow(clippy::too_many_arguments)]
pub fn move_prob(
    level: u32,
    leader: u32,
    g: Ground,
    severe: bool,
    any_regular: bool,
    any_non_warrior: bool,
    enemy_atop: bool,
    surprise_bonus: bool,
) -> f64 {
    let mut drm = -(leader as i32);
    if g == Ground::Settled && any_regular {
        drm -= 1;
    }
    if g == Ground::Rough && any_non_warrior {
        drm += 1;
    }
    if severe {
        drm += 1;
    }
    if enemy_atop {
        drm += 1;
    }
    if surprise_bonus {
        drm -= 1;
    }
    faces(|f| f == 1 || (f != 6 && f + drm <= level as i32))
}

pub fn recovery_prob(level: u32, leader: u32) -> f64 {
    faces(|f| f != 6 && f - leader as i32 <= level as i32)
}

pub fn melee_mult(kind: Kind, g: Ground) -> u32 {
    use Ground::*;
    use Kind::*;
    match (kind, g) {
        (Warrior, Rough) => 3,
        (Warrior, _) => 2,
        (Regular | Rifle, _) => 1,
        (Militia, Wilderness) => 1,
        (Militia, _) => 2,
    }
}

fn column_for(crt: &OCrt, att: u32, def: u32) -> usize {
    let mut col = 0;
    for (i, &(a, d)) in crt.columns.iter().enumerate() {
        if u64::from(att) * u64::from(d) >= u64::from(def) * u64::from(a) {
            col = i;
        }
    }
    col
}

// ---------------------------------------------------------------- the model

/// Unit codes.
const NORMAL: u8 = 0;
const DISRUPTED: u8 = 1;
const ROUTED: u8 = 2;
const ELIMINATED: u8 = 3;
/// Routed in melee: off the array until it recovers.
const OFF: u8 = 4;

fn on_array(code: u8) -> bool {
    code <= ROUTED
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct St {
    u: [[u8; MAX_UNITS]; 2],
    lost: [[bool; MAX_STACKS]; 2],
}

#[derive(Clone, Debug)]
struct CUnit {
    stack: usize,
    lane: usize,
    row: usize,
    kind: Kind,
    hit: f64,
    strength: u32,
}

#[derive(Clone, Debug)]
struct CStack {
    lane: usize,
    row: usize,
    leader: u32,
    units: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq)]
enum LanePlan {
    Open,
    /// No melee this round; no further move in the lane.
    Closed,
    Melee {
        att: usize,
        att_stack: usize,
        def_stack: usize,
        movers: Vec<usize>,
        /// Defending units that avoided the melee.
        avoided: Vec<usize>,
    },
}

type Dist = HashMap<St, f64>;

fn add(d: &mut Dist, s: St, p: f64) {
    if p > 0.0 {
        *d.entry(s).or_insert(0.0) += p;
    }
}

struct Model<'a> {
    b: &'a OBattle,
    /// Units of each side in listed order: lanes left to right, front row first, units
    /// as listed.
    units: [Vec<CUnit>; 2],
    stacks: [Vec<CStack>; 2],
    lanes: usize,
    /// `lane_stacks[side][lane]`: stack indices, front row first.
    lane_stacks: [Vec<Vec<usize>>; 2],
    p_leader: f64,
    rd: Readings,
}

impl<'a> Model<'a> {
    fn new(b: &'a OBattle, rd: Readings) -> Self {
        let lanes = b.sides[0].lanes.len();
        assert_eq!(lanes, b.sides[1].lanes.len(), "both sides hold every lane");
        let mut units: [Vec<CUnit>; 2] = [Vec::new(), Vec::new()];
        let mut stacks: [Vec<CStack>; 2] = [Vec::new(), Vec::new()];
        let mut lane_stacks: [Vec<Vec<usize>>; 2] = [Vec::new(), Vec::new()];
        for s in 0..2 {
            for (lane, rows) in b.sides[s].lanes.iter().enumerate() {
                let mut ls = Vec::new();
                for (row, st) in rows.iter().enumerate() {
                    let si = stacks[s].len();
                    let mut us = Vec::new();
                    for u in &st.units {
                        us.push(units[s].len());
                        units[s].push(CUnit {
                            stack: si,
                            lane,
                            row,
                            kind: u.kind,
                            hit: fire_hit_prob(u.kind, u.fire_cf, b.ground, b.severe),
                            strength: u.melee_cf * melee_mult(u.kind, b.ground),
                        });
                    }
                    stacks[s].push(CStack {
                        lane,
                        row,
                        leader: st.leader,
                        units: us,
                    });
                    ls.push(si);
                }
                lane_stacks[s].push(ls);
            }
            assert!(units[s].len() <= MAX_UNITS && stacks[s].len() <= MAX_STACKS);
        }
        let (n, d) = b.leader_loss;
        Model {
            b,
            units,
            stacks,
            lanes,
            lane_stacks,
            p_leader: f64::from(n) / f64::from(d),
            rd,
        }
    }

    fn initial(&self) -> St {
        St {
            u: [[NORMAL; MAX_UNITS]; 2],
            lost: [[false; MAX_STACKS]; 2],
        }
    }

    /// Rating of the stack's leader if present, else 0.
    fn leader(&self, st: &St, s: usize, k: usize) -> u32 {
        if st.lost[s][k] {
            0
        } else {
            self.stacks[s][k].leader
        }
    }

    fn front_stack(&self, st: &St, s: usize, lane: usize) -> Option<usize> {
        self.lane_stacks[s][lane].iter().copied().find(|&k| {
            self.stacks[s][k]
                .units
                .iter()
                .any(|&u| on_array(st.u[s][u]))
        })
    }

    fn stack_units_on_array(&self, st: &St, s: usize, k: usize) -> Vec<usize> {
        self.stacks[s][k]
            .units
            .iter()
            .copied()
            .filter(|&u| on_array(st.u[s][u]))
            .collect()
    }

    fn surprised(&self, s: usize) -> bool {
        self.b.surprise == Some(1 - s)
    }

    // ------------------------------------------------------------ fire

    /// Targets of side `s`'s volley, one per firer, in firing order.
    fn targets(&self, st: &St, s: usize) -> Vec<(f64, usize)> {
        let e = 1 - s;
        let firers: Vec<usize> = (0..self.units[s].len())
            .filter(|&f| st.u[s][f] == NORMAL)
            .collect();
        let fronts: Vec<Option<usize>> = (0..self.lanes)
            .map(|l| self.front_stack(st, e, l))
            .collect();
        let enemy: Vec<usize> = (0..self.units[e].len())
            .filter(|&u| on_array(st.u[e][u]))
            .collect();
        let mut shots = Vec::new();
        match self.rd.target_rule {
            TargetRule::FewestTimes => {
                let mut times = [0usize; MAX_UNITS];
                for &f in &firers {
                    let fl = self.units[s][f].lane;
                    let Some(&t) = enemy.iter().min_by_key(|&&u| {
                        let cu = &self.units[e][u];
                        let behind = fronts[cu.lane] != Some(cu.stack);
                        let side_of_firer = if self.rd.equal_distance_higher_lane {
                            cu.lane < fl
                        } else {
                            cu.lane > fl
                        };
                        let near = cu.lane.abs_diff(fl);
                        (times[u], behind, near, side_of_firer, cu.row, u)
                    }) else {
                        continue;
                    };
                    times[t] += 1;
                    shots.push((self.units[s][f].hit, t));
                }
            }
            TargetRule::LaneCursor => {
                let mut cursor = vec![0usize; self.lanes];
                let mut overflow = 0usize;
                // Firers front row first, then lane, then as listed.
                let mut order = firers.clone();
                order.sort_by_key(|&f| (self.units[s][f].row, self.units[s][f].lane, f));
                for f in order {
                    let fl = self.units[s][f].lane;
                    let own: Vec<usize> = enemy
                        .iter()
                        .copied()
                        .filter(|&u| self.units[e][u].lane == fl)
                        .collect();
                    let t = if !own.is_empty() {
                        let t = own[cursor[fl] % own.len()];
                        cursor[fl] += 1;
                        t
                    } else {
                        let others: Vec<usize> = (0..self.lanes)
                            .filter(|&l| l != fl)
                            .filter_map(|l| fronts[l])
                            .flat_map(|k| self.stack_units_on_array(st, e, k))
                            .collect();
                        if others.is_empty() {
                            continue;
                        }
                        let t = others[overflow % others.len()];
                        overflow += 1;
                        t
                    };
                    shots.push((self.units[s][f].hit, t));
                }
            }
        }
        shots
    }

    fn fire(&self, dist: Dist, s: usize, round: u32) -> Dist {
        if round == 1 && self.surprised(s) {
            return dist;
        }
        let e = 1 - s;
        let mut out = Dist::new();
        for (st, p) in dist {
            let shots = self.targets(&st, s);
            let mut work = Dist::new();
            work.insert(st, p);
            for (h, t) in shots {
                let mut next = Dist::new();
                for (x, q) in work {
                    add(&mut next, x, q * (1.0 - h));
                    let mut y = x;
                    let wasted = y.u[e][t] == ELIMINATED;
                    if !wasted {
                        y.u[e][t] += 1;
                    }
                    let k = self.units[e][t].stack;
                    let rolls = !wasted || self.rd.leader_roll_on_dead_hit;
                    if rolls && self.leader(&y, e, k) > 0 {
                        let mut z = y;
                        z.lost[e][k] = true;
                        add(&mut next, z, q * h * self.p_leader);
                        add(&mut next, y, q * h * (1.0 - self.p_leader));
                    } else {
                        add(&mut next, y, q * h);
                    }
                }
                work = next;
            }
            for (x, q) in work {
                add(&mut out, x, q);
            }
        }
        out
    }

    // ------------------------------------------------------------ movement

    fn move_p(&self, st: &St, s: usize, k: usize, movers: &[usize], atop: bool, round: u32) -> f64 {
        let b = self.b;
        let leader = self.leader(st, s, k);
        let regular_pool: Vec<usize> = if self.rd.settled_regular_in_stack {
            self.stack_units_on_array(st, s, k)
        } else {
            movers.to_vec()
        };
        let any_regular = regular_pool
            .iter()
            .any(|&u| self.units[s][u].kind == Kind::Regular);
        let any_non_warrior = movers
            .iter()
            .any(|&u| self.units[s][u].kind != Kind::Warrior);
        let bonus = round == 1 && b.surprise == Some(s) && leader > 0;
        move_prob(
            b.sides[s].level,
            leader,
            b.ground,
            b.severe,
            any_regular,
            any_non_warrior,
            atop,
            bonus,
        )
    }

    /// Units of stack `k` that may move (normal, on the array), or None when the stack
    /// may not try (none; or the surprised side without a leader in round 1).
    fn movers(&self, st: &St, s: usize, k: usize, round: u32) -> Option<Vec<usize>> {
        if self.rd.surprised_needs_leader
            && round == 1
            && self.surprised(s)
            && self.leader(st, s, k) == 0
        {
            return None;
        }
        let m: Vec<usize> = self.stacks[s][k]
            .units
            .iter()
            .copied()
            .filter(|&u| st.u[s][u] == NORMAL)
            .collect();
        if m.is_empty() {
            None
        } else {
            Some(m)
        }
    }

    fn movement(&self, st: &St, round: u32) -> Vec<(Vec<LanePlan>, f64)> {
        let init = self.b.initiative;
        let mut work: Vec<(Vec<LanePlan>, f64)> = vec![(vec![LanePlan::Open; self.lanes], 1.0)];
        for s in [init, 1 - init] {
            if !self.b.sides[s].aggressive {
                continue;
            }
            let e = 1 - s;
            for lane in 0..self.lanes {
                let mut next = Vec::new();
                for (plan, q) in work {
                    if plan[lane] != LanePlan::Open {
                        next.push((plan, q));
                        continue;
                    }
                    let (Some(fs), Some(es)) =
                        (self.front_stack(st, s, lane), self.front_stack(st, e, lane))
                    else {
                        next.push((plan, q));
                        continue;
                    };
                    let Some(movers) = self.movers(st, s, fs, round) else {
                        next.push((plan, q));
                        continue;
                    };
                    let pm = self.move_p(st, s, fs, &movers, false, round);
                    if pm < 1.0 {
                        next.push((plan.clone(), q * (1.0 - pm)));
                    }
                    if pm == 0.0 {
                        continue;
                    }
                    let mut melee = plan.clone();
                    melee[lane] = LanePlan::Melee {
                        att: s,
                        att_stack: fs,
                        def_stack: es,
                        movers: movers.clone(),
                        avoided: Vec::new(),
                    };
                    // The enemy stack tried (and, the lane being open, failed) its own
                    // move earlier this round: it moved first and had units to move.
                    let failed_before = e == init
                        && self.b.sides[e].aggressive
                        && self.movers(st, e, es, round).is_some();
                    let avoid = if self.b.sides[e].aggressive
                        && self.b.sides[e].avoid_melee
                        && (self.rd.avoid_after_failed_move || !failed_before)
                    {
                        self.movers(st, e, es, round)
                            .map(|dm| (self.move_p(st, e, es, &dm, true, round), dm))
                    } else {
                        None
                    };
                    match avoid {
                        Some((pa, away)) => {
                            let left: Vec<usize> = self
                                .stack_units_on_array(st, e, es)
                                .into_iter()
                                .filter(|u| !away.contains(u))
                                .collect();
                            let mut avoided = plan.clone();
                            avoided[lane] = if left.is_empty() || !self.rd.left_behind_fight {
                                if self.rd.avoided_stack_may_move {
                                    LanePlan::Open
                                } else {
                                    LanePlan::Closed
                                }
                            } else {
                                LanePlan::Melee {
                                    att: s,
                                    att_stack: fs,
                                    def_stack: es,
                                    movers,
                                    avoided: away,
                                }
                            };
                            next.push((avoided, q * pm * pa));
                            next.push((melee, q * pm * (1.0 - pa)));
                        }
                        None => next.push((melee, q * pm)),
                    }
                }
                work = next.into_iter().filter(|(_, q)| *q > 0.0).collect();
            }
        }
        work
    }

    // ------------------------------------------------------------ melee

    fn apply_loss(&self, y: &mut St, s: usize, loss: Loss, engaged: &[usize]) {
        match loss {
            Loss::None => {}
            Loss::Rout => {
                for &u in engaged {
                    y.u[s][u] = OFF;
                }
            }
            Loss::Elim(n) => {
                let mut order = engaged.to_vec();
                order.sort_by_key(|&u| {
                    (
                        if y.u[s][u] == DISRUPTED { 0 } else { 1 },
                        self.units[s][u].strength,
                        if self.rd.tie_last_listed {
                            usize::MAX - u
                        } else {
                            u
                        },
                    )
                });
                for &u in order.iter().take(n as usize) {
                    y.u[s][u] = ELIMINATED;
                }
            }
        }
    }

    fn leader_roll(&self, d: Dist, s: usize, k: usize) -> Dist {
        let mut out = Dist::new();
        for (x, q) in d {
            if self.leader(&x, s, k) > 0 {
                let mut z = x;
                z.lost[s][k] = true;
                add(&mut out, z, q * self.p_leader);
                add(&mut out, x, q * (1.0 - self.p_leader));
            } else {
                add(&mut out, x, q);
            }
        }
        out
    }

    fn melee(&self, st: St, plan: &[LanePlan], round: u32) -> Dist {
        let b = self.b;
        let crt = &b.crt;
        let mut work = Dist::new();
        work.insert(st, 1.0);
        for lp in plan {
            let LanePlan::Melee {
                att,
                att_stack,
                def_stack,
                movers,
                avoided,
            } = lp
            else {
                continue;
            };
            let (a, fs, es) = (*att, *att_stack, *def_stack);
            let d = 1 - a;
            let def_leader_here = avoided.is_empty() || self.rd.left_behind_keep_leader;
            let mut next = Dist::new();
            for (x, q) in work {
                let in_play: Vec<usize> = self
                    .stack_units_on_array(&x, d, es)
                    .into_iter()
                    .filter(|u| !avoided.contains(u))
                    .collect();
                let engaged: Vec<usize> = in_play
                    .iter()
                    .copied()
                    .filter(|&u| x.u[d][u] != ROUTED)
                    .collect();
                if engaged.is_empty() {
                    let mut y = x;
                    for &u in &in_play {
                        y.u[d][u] = ELIMINATED;
                    }
                    add(&mut next, y, q);
                    continue;
                }
                let def_leader = if def_leader_here {
                    self.leader(&x, d, es)
                } else {
                    0
                };
                let att_str: u32 = movers.iter().map(|&u| self.units[a][u].strength).sum();
                let def_str: u32 = engaged.iter().map(|&u| self.units[d][u].strength).sum();
                let mut col = column_for(crt, att_str, def_str) as i32;
                col += self.leader(&x, a, fs) as i32;
                col -= def_leader as i32;
                if engaged.iter().any(|&u| x.u[d][u] == DISRUPTED) {
                    col += 1;
                }
                if round == 1 && b.surprise == Some(a) {
                    col += 1;
                }
                let col = col.clamp(0, crt.columns.len() as i32 - 1) as usize;
                let drm = (b.sides[a].level as i32 - b.sides[d].level as i32).clamp(-3, 3);
                for face in 1..=6 {
                    let row =
                        (face + drm - crt.first_roll).clamp(0, crt.cells.len() as i32 - 1) as usize;
                    let (la, ld) = crt.cells[row][col];
                    let mut y = x;
                    self.apply_loss(&mut y, a, la, movers);
                    self.apply_loss(&mut y, d, ld, &engaged);
                    let mut br = Dist::new();
                    br.insert(y, q / 6.0);
                    if la != Loss::None {
                        br = self.leader_roll(br, a, fs);
                    }
                    if ld != Loss::None && def_leader_here {
                        br = self.leader_roll(br, d, es);
                    }
                    for (z, w) in br {
                        add(&mut next, z, w);
                    }
                }
            }
            work = next;
        }
        work
    }

    // ------------------------------------------------------------ recovery

    fn recovery(&self, dist: Dist) -> Dist {
        let mut out = Dist::new();
        for (st, p) in dist {
            let mut work = Dist::new();
            work.insert(st, p);
            for s in 0..2 {
                for u in 0..self.units[s].len() {
                    let code = st.u[s][u];
                    if !(code == DISRUPTED || code == ROUTED || code == OFF) {
                        continue;
                    }
                    let leader = if code == OFF && !self.rd.off_array_recovery_uses_leader {
                        0
                    } else {
                        self.leader(&st, s, self.units[s][u].stack)
                    };
                    let r = recovery_prob(self.b.sides[s].level, leader);
                    let up = if code == DISRUPTED { NORMAL } else { DISRUPTED };
                    let mut next = Dist::new();
                    for (x, q) in work {
                        let mut y = x;
                        y.u[s][u] = up;
                        add(&mut next, y, q * r);
                        add(&mut next, x, q * (1.0 - r));
                    }
                    work = next;
                }
            }
            for (x, q) in work {
                add(&mut out, x, q);
            }
        }
        out
    }

    fn round(&self, dist: Dist, round: u32) -> Dist {
        let init = self.b.initiative;
        let dist = self.fire(dist, init, round);
        let dist = self.fire(dist, 1 - init, round);
        let mut after = Dist::new();
        for (st, p) in dist {
            for (plan, q) in self.movement(&st, round) {
                for (x, w) in self.melee(st, &plan, round) {
                    add(&mut after, x, p * q * w);
                }
            }
        }
        self.recovery(after)
    }

    fn lost(&self, st: &St, s: usize) -> usize {
        st.u[s][..self.units[s].len()]
            .iter()
            .filter(|&&c| c == ELIMINATED || c == ROUTED || c == OFF)
            .count()
    }

    #[allow(clippy::needless_range_loop)] // s is a side, indexing several arrays
    fn record(&self, ex: &mut Exact, dist: &Dist, weight: f64, rounds: usize) {
        if weight == 0.0 {
            return;
        }
        for (st, &p) in dist {
            let p = p * weight;
            let mut lost = [0usize; 2];
            for s in 0..2 {
                let n = self.units[s].len();
                let codes = &st.u[s][..n];
                let elim = codes.iter().filter(|&&c| c == ELIMINATED).count();
                let routed = codes.iter().filter(|&&c| c == ROUTED || c == OFF).count();
                let disr = codes.iter().filter(|&&c| c == DISRUPTED).count();
                let leaders = (0..self.stacks[s].len())
                    .filter(|&k| self.stacks[s][k].leader > 0 && st.lost[s][k])
                    .count();
                ex.eliminated[s][elim] += p;
                ex.routed[s][routed] += p;
                ex.disrupted[s][disr] += p;
                ex.leaders_lost[s][leaders] += p;
                lost[s] = elim + routed;
            }
            let (na, nb) = (self.units[0].len(), self.units[1].len());
            let (ka, kb) = if self.b.share_victory {
                (lost[0] * nb, lost[1] * na)
            } else {
                (lost[0], lost[1])
            };
            let i = match ka.cmp(&kb) {
                std::cmp::Ordering::Less => 0,
                std::cmp::Ordering::Equal => 1,
                std::cmp::Ordering::Greater => 2,
            };
            ex.result[i] += p;
            ex.rounds[rounds] += p;
            ex.result_by_rounds[rounds][i] += p;
        }
    }

    fn record_lost(&self, ex: &mut Exact, r: usize, dist: &Dist, weight: f64) {
        if weight == 0.0 {
            return;
        }
        for (st, &p) in dist {
            for s in 0..2 {
                ex.lost_by_round[r][s][self.lost(st, s)] += p * weight;
            }
        }
    }
}

/// The exact distribution of a small battle's outcome.
pub fn solve(b: &OBattle) -> Exact {
    solve_with(b, Readings::default())
}

/// [`solve`] under other readings (for sensitivity checks).
pub fn solve_with(b: &OBattle, rd: Readings) -> Exact {
    let m = Model::new(b, rd);
    let mut ex = Exact::default();
    for s in 0..2 {
        let n = m.units[s].len() + 1;
        ex.eliminated[s] = vec![0.0; n];
        ex.routed[s] = vec![0.0; n];
        ex.disrupted[s] = vec![0.0; n];
        ex.leaders_lost[s] = vec![0.0; m.stacks[s].len() + 1];
        for r in 0..4 {
            ex.lost_by_round[r][s] = vec![0.0; n];
        }
    }
    let base = b.sides[b.initiative].primary_leader as usize;
    let q = if b.extra_round {
        f64::from(b.sides[1 - b.initiative].primary_leader.saturating_sub(1)) / 6.0
    } else {
        0.0
    };
    let last = if q > 0.0 { base + 1 } else { base };
    assert!(last <= 4, "at most 4 rounds");
    // after[r]: the distribution after r rounds (after[0]: the start).
    let mut after: Vec<Dist> = Vec::new();
    let mut dist = Dist::new();
    dist.insert(m.initial(), 1.0);
    after.push(dist.clone());
    for r in 1..=last {
        dist = m.round(dist, r as u32);
        after.push(dist.clone());
    }
    m.record(&mut ex, &after[base], 1.0 - q, base);
    if q > 0.0 {
        m.record(&mut ex, &after[base + 1], q, base + 1);
    }
    for r in 1..=4usize {
        // Battles of `base` rounds (1 − q) and of `base + 1` rounds (q), each at the end of
        // round r or at its end if shorter.
        m.record_lost(&mut ex, r - 1, &after[r.min(base)], 1.0 - q);
        if q > 0.0 {
            m.record_lost(&mut ex, r - 1, &after[r.min(base + 1)], q);
        }
    }
    ex
}
