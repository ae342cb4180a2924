//! The first frontier kernel, kept for the tests: a state byte per unit, targets, front
//! stacks and victims found by scanning. The bit-mask kernel of the parent module must
//! give the same battle as this one on the same dice (one word per die), battle by
//! battle; `fight_with` on a [`DiceStream`] draws in this kernel's order.

use super::*;

/// The reference kernel's dice, each roll named by the event it is for: a
/// [`DiceStream`] draws them in the order they are asked for (the mask kernel's order),
/// and the bit-sliced kernel's tests read each battle's from its slot.
pub(super) trait RefDice {
    /// The extra round's d6 (1–6).
    fn extra(&mut self) -> u32;
    /// A fire die of `side`'s unit `unit` (0–5).
    fn fire(&mut self, round: u32, side: usize, unit: usize) -> u32;
    /// The leader roll for a hit by `side`'s unit `unit` (below `den`).
    fn fire_leader(&mut self, round: u32, side: usize, unit: usize, den: u32) -> u32;
    /// `side`'s move d6 in `lane` (1–6).
    fn move_roll(&mut self, round: u32, side: usize, lane: usize) -> u32;
    /// The CRT d6 of the melee in `lane` (1–6).
    fn crt(&mut self, round: u32, lane: usize) -> u32;
    /// `side`'s leader roll after its loss in the melee in `lane` (below `den`).
    fn melee_leader(&mut self, round: u32, side: usize, lane: usize, den: u32) -> u32;
    /// The recovery d6 of `side`'s unit `unit` (1–6).
    fn recover(&mut self, round: u32, side: usize, unit: usize) -> u32;
}

impl RefDice for DiceStream {
    fn extra(&mut self) -> u32 {
        self.d6()
    }
    fn fire(&mut self, _: u32, _: usize, _: usize) -> u32 {
        self.below(6)
    }
    fn fire_leader(&mut self, _: u32, _: usize, _: usize, den: u32) -> u32 {
        self.below(den)
    }
    fn move_roll(&mut self, _: u32, _: usize, _: usize) -> u32 {
        self.d6()
    }
    fn crt(&mut self, _: u32, _: usize) -> u32 {
        self.d6()
    }
    fn melee_leader(&mut self, _: u32, _: usize, _: usize, den: u32) -> u32 {
        self.below(den)
    }
    fn recover(&mut self, _: u32, _: usize, _: usize) -> u32 {
        self.d6()
    }
}

/// The reference kernel's view of a compiled battle, with the orders it scans.
pub(super) struct Reference<'a> {
    c: &'a FrontierCombat,
    /// `lane_stacks[side][lane]`: the side's stacks in that lane, front row first.
    lane_stacks: [Vec<Vec<usize>>; 2],
    /// `fire_order[side][lane]`: the side's units in the order a firer in `lane` prefers
    /// them at equal count and depth: nearest lane (the lower-numbered at equal distance),
    /// then the first listed.
    fire_order: [[[u8; MAX_UNITS]; MAX_LANES]; 2],
}

impl<'a> Reference<'a> {
    pub(super) fn new(c: &'a FrontierCombat) -> Self {
        let (units, stacks) = (&c.units, &c.stacks);
        let lane_stacks = [0, 1].map(|s| {
            (0..c.lanes)
                .map(|l| {
                    (0..stacks[s].len())
                        .filter(|&i| stacks[s][i].lane == l)
                        .collect()
                })
                .collect::<Vec<_>>()
        });
        let fire_order = [0, 1].map(|s| {
            std::array::from_fn(|lane| {
                let mut order: Vec<usize> = (0..units[s].len()).collect();
                order.sort_by_key(|&t| {
                    let l = units[s][t].lane;
                    (l.abs_diff(lane), l, t)
                });
                let mut out = [0u8; MAX_UNITS];
                for (o, t) in out.iter_mut().zip(order) {
                    *o = t as u8;
                }
                out
            })
        });
        Self {
            c,
            lane_stacks,
            fire_order,
        }
    }
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

impl Reference<'_> {
    fn fresh_state(&self) -> BattleState {
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
            self.c.stacks[side][stack].leader
        } else {
            0
        }
    }

    /// A leader-loss event: `roll(den)` is drawn only where the stack's leader is there.
    fn lose_leader(
        &self,
        state: &mut BattleState,
        side: usize,
        stack: usize,
        roll: impl FnOnce(u32) -> u32,
    ) {
        if self.c.stacks[side][stack].leader > 0 && state.leader_alive[side][stack] {
            let (num, den) = self.c.battle.leader_loss;
            if roll(den) < num {
                state.leader_alive[side][stack] = false;
            }
        }
    }

    /// The front stack of a lane: the first, by row, with a unit in play.
    fn front_stack(&self, state: &BattleState, side: usize, lane: usize) -> Option<usize> {
        self.lane_stacks[side][lane].iter().copied().find(|&i| {
            let s = &self.c.stacks[side][i];
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
    fn fire_phase<D: RefDice>(
        &self,
        state: &mut BattleState,
        side: usize,
        round: u32,
        dice: &mut D,
    ) {
        let enemy = 1 - side;
        // Each enemy unit's depth: the rank of its stack among its lane's stacks in play.
        let mut depth = [u8::MAX; MAX_UNITS];
        let mut any_target = false;
        for lane in 0..self.c.lanes {
            let mut rank = 0u8;
            for &st in &self.lane_stacks[enemy][lane] {
                let stack = &self.c.stacks[enemy][st];
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
        for (t, &d) in depth.iter().enumerate().take(self.c.units[enemy].len()) {
            if d != u8::MAX {
                rank_mask[usize::from(d).min(MAX_ROWS)] |= 1 << t;
                in_play_mask |= 1 << t;
            }
        }
        let mut available = in_play_mask;
        let mut shots = [(0u8, 0u8); MAX_UNITS];
        let mut shot_count = 0;
        for (i, unit) in self.c.units[side].iter().enumerate() {
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
        // Every fire die of the volley first, in firer order; then one leader roll for
        // each hit that landed on a stack with a leader, in the same order.
        let mut leader_events = [(0usize, 0usize); MAX_UNITS];
        let mut events = 0;
        for &(shooter, target) in &shots[..shot_count] {
            let face = dice.fire(round, side, usize::from(shooter));
            let t = target as usize;
            // A hit on a unit already eliminated earlier in this volley is wasted.
            if self.c.units[side][shooter as usize].fire_faces >> face & 1 == 1
                && state.unit_state[enemy][t] != ELIMINATED
            {
                state.unit_state[enemy][t] += 1;
                leader_events[events] = (self.c.units[enemy][t].stack, usize::from(shooter));
                events += 1;
            }
        }
        for &(stack, shooter) in &leader_events[..events] {
            self.lose_leader(state, enemy, stack, |den| {
                dice.fire_leader(round, side, shooter, den)
            });
        }
    }

    /// Movement (19.2.2) and melee (19.2.3) of one round.
    fn movement_and_melee<D: RefDice>(&self, state: &mut BattleState, round: u32, dice: &mut D) {
        let b = &self.c.battle;
        // Per lane: the attacking side and stack, which of its units moved in, and which
        // defending units moved away (avoided the melee).
        let mut melee: [Option<(usize, usize, u32, u32)>; MAX_LANES] = [None; MAX_LANES];
        for side in [b.initiative, 1 - b.initiative] {
            if b.sides[side].move_policy == MovePolicy::FireOnly {
                continue;
            }
            let surprised = round == 1 && b.surprise == Some(1 - side);
            let won_surprise = round == 1 && b.surprise == Some(side);
            for (lane, engaged) in melee.iter_mut().enumerate().take(self.c.lanes) {
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
                let stack = self.c.stacks[side][own];
                // The undisrupted units move; disrupted and routed ones may not. Settled
                // terrain's −1 goes to any unit stacked with a regular at the time of
                // movement (moving or not); rough terrain's +1 when a mover is no warrior.
                let mut movers = 0u32;
                let (mut any_regular, mut any_non_warrior) = (false, false);
                for u in stack.first_unit..stack.first_unit + stack.unit_count {
                    if !Self::in_play(state, side, u) {
                        continue;
                    }
                    any_regular |= self.c.units[side][u].kind == UnitType::Regular;
                    if state.unit_state[side][u] == NORMAL {
                        movers |= 1 << (u - stack.first_unit);
                        any_non_warrior |= self.c.units[side][u].kind != UnitType::Warrior;
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
                if roll.moves(dice.move_roll(round, side, lane)) {
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
        for (lane, engaged) in melee.iter().enumerate().take(self.c.lanes) {
            if let Some((side, stack, movers, avoided)) = *engaged {
                self.close_combat(state, lane, side, stack, movers, avoided, round, dice);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn close_combat<D: RefDice>(
        &self,
        state: &mut BattleState,
        lane: usize,
        attacker: usize,
        attacking_stack: usize,
        movers: u32,
        avoided: u32,
        round: u32,
        dice: &mut D,
    ) {
        let b = &self.c.battle;
        let defender = 1 - attacker;
        let Some(defending_stack) = self.front_stack(state, defender, lane) else {
            return;
        };
        let a_stack = self.c.stacks[attacker][attacking_stack];
        let d_stack = self.c.stacks[defender][defending_stack];
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
            .map(|u| self.c.units[attacker][u].melee_strength)
            .sum();
        let strength_d: u32 = d_units
            .clone()
            .filter(|&u| fighting_d(u, state))
            .map(|u| self.c.units[defender][u].melee_strength)
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
        let (loss_a, loss_d) = b.crt.cell(dice.crt(round, lane) as i32 + drm, column);
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
                                    self.c.units[side][u].melee_strength,
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
                self.lose_leader(state, side, stack, |den| {
                    dice.melee_leader(round, side, lane, den)
                });
            }
        }
    }

    /// Recovery (19.2.4): every disrupted or routed unit rolls; success is one level up (a
    /// routed unit off the array comes back to its stack disrupted).
    fn recovery<D: RefDice>(&self, state: &mut BattleState, round: u32, dice: &mut D) {
        for side in 0..2 {
            for (u, unit) in self.c.units[side].iter().enumerate() {
                let s = state.unit_state[side][u];
                if s != DISRUPTED && s != ROUTED {
                    continue;
                }
                let roll = RecoveryRoll {
                    level: self.c.battle.sides[side].level,
                    leader: self.leader_of(state, side, unit.stack),
                };
                if roll.recovers(dice.recover(round, side, u)) {
                    state.unit_state[side][u] = s - 1;
                    state.removed[side][u] = false;
                }
            }
        }
    }

    /// Rounds of 19.1: the initiative side's primary leader rating, plus one when the
    /// non-initiative side tries and rolls under its primary leader's rating.
    fn rounds<D: RefDice>(&self, dice: &mut D) -> u32 {
        let b = &self.c.battle;
        let other = 1 - b.initiative;
        let extra = b.extra_round && dice.extra() < b.sides[other].primary_leader;
        b.sides[b.initiative].primary_leader + u32::from(extra)
    }

    /// One whole battle.
    pub fn fight<D: RefDice>(&self, dice: &mut D) -> BattleOutcome {
        let b = &self.c.battle;
        let mut state = self.fresh_state();
        let rounds = self.rounds(dice);
        let mut lost_after_round = [[0u8; 2]; 4];
        for round in 1..=rounds {
            for side in [b.initiative, 1 - b.initiative] {
                let surprised = round == 1 && b.surprise == Some(1 - side);
                if !surprised {
                    self.fire_phase(&mut state, side, round, dice);
                }
            }
            self.movement_and_melee(&mut state, round, dice);
            self.recovery(&mut state, round, dice);
            lost_after_round[round as usize - 1] = [0, 1].map(|side| {
                state.unit_state[side][..self.c.units[side].len()]
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
    fn outcome(&self, state: &BattleState, rounds: u32) -> BattleOutcome {
        let mut out = BattleOutcome::after(rounds);
        for side in 0..2 {
            for u in 0..self.c.units[side].len() {
                match state.unit_state[side][u] {
                    ELIMINATED => out.eliminated[side] += 1,
                    ROUTED => out.routed[side] += 1,
                    DISRUPTED => out.disrupted[side] += 1,
                    _ => {}
                }
            }
            out.leaders_lost[side] = self.c.stacks[side]
                .iter()
                .enumerate()
                .filter(|(i, s)| s.leader > 0 && !state.leader_alive[side][*i])
                .count() as u32;
        }
        out.winner = self.c.winner(&out);
        out
    }
}
