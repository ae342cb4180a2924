//! The field battle as a two-player zero-sum stochastic game (docs/systems/field.md, the
//! tactical matrix), solved by backward induction, and the state-dependent tactic tables
//! that let the kernel and the exact enumeration play its solution.
//!
//! Why this module exists: every round of a field battle both sides choose a tactic at
//! once, so "what should a side do?" has no single best tactic — the answer is a mixed
//! strategy that depends on the state (SP and morale of each side) and on the rounds left.
//! The battle is a finite-horizon stochastic game over those states, and this module
//! solves it exactly (up to f64): for each round from the last to the first and each
//! state reachable from the start, the 7 × 7 stage game — each tactic pair's payoff being
//! this round's result plus the already solved value of the state it leads to — is solved
//! by linear programming ([`super::matrix_game`]). The round is stepped with the same
//! shared functions the kernel and the enumeration use ([`FieldCombat::round_setup`],
//! [`FieldCombat::tactic_cell`], [`FieldCombat::apply_round`], [`FieldCombat::battle_end`]),
//! so the game cannot drift from the rules.
//!
//! Payoffs ([`Payoff`]), side A maximising and side B minimising:
//! - `win`: P(A wins), where "A wins" is the field system's outcome of that name
//!   ([`BattleResult::AWins`]: B broken, A not; withdrawals and the round limit are not
//!   wins);
//! - `sp`: the expected SP-loss difference over the battle, B's SP lost minus A's.
//!
//! States: a round (1 to the round limit) and `(SP, morale)` of each side. The solver lays
//! them out densely (every SP and morale from 0 to the start's), so a game has
//! `round_limit × (SP_A+1)(SP_B+1)(morale_A+1)(morale_B+1)` slots; above
//! [`MAX_GAME_STATES`] it is not solved ([`GameError::TooLarge`]) and callers fall back
//! to the one-round game at the start ([`one_round_game`]). Only states reachable from
//! the start under some play are solved.
//!
//! Playing the solution: a [`StatePolicy`] holds, per side, a table of cumulative
//! thresholds in units of 2^-32 per (round, state) — a plain mix is a table of one row
//! with zero strides — so the kernel ([`FieldCombat::fight_with`]) picks a tactic
//! branch-free by counting the thresholds a 32-bit uniform reaches, and the exact
//! enumeration ([`FieldCombat::battle_distribution_with`]) weights each tactic pair by
//! the very probabilities those thresholds give.

use std::sync::Arc;

use crate::dice::DiceStream;
use crate::rules::crt::{
    BattleDistribution, BattleOutcome, BattleResult, BattleState, FieldCombat, PreparedBattle,
    TacticMix, TWO_D6_FACES,
};
use crate::rules::matrix_game::{self, GameSolution};

/// Most state slots (rounds × the dense SP/morale box) a game may have to be solved.
/// A slot costs 5 bytes while solving and 4 in a played policy's index (values, mixes and
/// thresholds are kept for reachable states only, which are far fewer: CLC losses jump),
/// so 4·10^6 slots stay under 20 MB.
pub const MAX_GAME_STATES: usize = 4_000_000;

/// A probability at or below this counts as "not played".
pub const PLAYED: f64 = 1e-12;

/// What side A maximises and side B minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Payoff {
    /// P(A wins the battle), "A wins" as the field outcome of that name.
    #[default]
    Win,
    /// Expected SP lost by B minus SP lost by A.
    Sp,
}

impl Payoff {
    pub const NAMES: [&'static str; 2] = ["win", "sp"];

    pub fn parse(name: &str) -> Option<Self> {
        match name.trim() {
            "win" => Some(Self::Win),
            "sp" => Some(Self::Sp),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Why a game was not solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("the game has {slots} state slots (rounds × SP and morale of each side); at most {cap} are solved")]
    TooLarge { slots: u64, cap: usize },
    #[error("stopped on request")]
    Interrupted,
}

/// The dense layout of a game's (round, state) slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameShape {
    /// Strides of (round − 1, SP A, SP B, morale A, morale B).
    pub strides: [usize; 5],
    pub rounds: u32,
    /// Slots per round.
    pub per_round: usize,
}

impl GameShape {
    /// The layout for a battle's start, or the number of slots when it is over `cap`.
    pub fn new(start: &BattleState, rounds: u32, cap: usize) -> Result<Self, GameError> {
        let dims =
            [start.sp[0], start.sp[1], start.morale[0], start.morale[1]].map(|d| u64::from(d) + 1);
        let per_round: u64 = dims.iter().product();
        let slots = per_round.saturating_mul(u64::from(rounds));
        if slots > cap as u64 {
            return Err(GameError::TooLarge { slots, cap });
        }
        let d = dims.map(|d| d as usize);
        Ok(Self {
            strides: [per_round as usize, d[1] * d[2] * d[3], d[2] * d[3], d[3], 1],
            rounds,
            per_round: per_round as usize,
        })
    }

    pub fn slots(&self) -> usize {
        self.per_round * self.rounds as usize
    }

    #[inline(always)]
    pub fn index(&self, round: u32, state: &BattleState) -> usize {
        index(&self.strides, round, state)
    }
}

#[inline(always)]
fn index(strides: &[usize; 5], round: u32, s: &BattleState) -> usize {
    (round as usize - 1) * strides[0]
        + s.sp[0] as usize * strides[1]
        + s.sp[1] as usize * strides[2]
        + s.morale[0] as usize * strides[3]
        + s.morale[1] as usize * strides[4]
}

/// A solved battle: the value and both sides' optimal mixes at every reachable state.
#[derive(Clone, Debug)]
pub struct FieldGame {
    pub payoff: Payoff,
    pub shape: GameShape,
    /// The value at the start (round 1).
    pub value: f64,
    /// Live (round, state) pairs reachable from the start under some play, round by
    /// round, states sorted.
    pub reachable: Vec<(u32, BattleState)>,
    /// Per slot: its index in `reachable`, or `reachable.len()` where not reachable (the
    /// row a played table keeps for those).
    compact: Arc<Vec<u32>>,
    /// Per reachable state: its value.
    values: Vec<f64>,
    /// Per reachable state: A's and B's optimal mixes.
    mixes: Vec<[[f64; 7]; 2]>,
}

impl FieldGame {
    /// The value of the game from `state` at the start of `round`, if reachable.
    pub fn value_at(&self, round: u32, state: &BattleState) -> Option<f64> {
        self.reachable_index(round, state).map(|i| self.values[i])
    }

    /// A's and B's optimal mixes at `state` at the start of `round`, if reachable.
    pub fn mix_at(&self, round: u32, state: &BattleState) -> Option<[[f64; 7]; 2]> {
        self.reachable_index(round, state).map(|i| self.mixes[i])
    }

    fn reachable_index(&self, round: u32, state: &BattleState) -> Option<usize> {
        let inside = (1..=self.shape.rounds).contains(&round)
            && (0..2).all(|s| {
                (state.sp[s] as usize) * self.shape.strides[1 + s] < self.shape.strides[s]
                    && (state.morale[s] as usize) * self.shape.strides[3 + s]
                        < self.shape.strides[2 + s]
            });
        inside
            .then(|| self.compact[self.shape.index(round, state)])
            .map(|i| i as usize)
            .filter(|&i| i < self.reachable.len())
    }

    /// Tactics a side plays with probability above [`PLAYED`] at no reachable state.
    pub fn never_played(&self) -> [Vec<usize>; 2] {
        [0, 1].map(|side| {
            (0..7)
                .filter(|&t| self.mixes.iter().all(|mix| mix[side][t] <= PLAYED))
                .collect()
        })
    }
}

/// One round's payoff matrix at a state (rows A's tactic, columns B's), the battle after
/// this round valued by `next` where it goes on.
pub fn stage_matrix(
    field: &FieldCombat,
    battle: &PreparedBattle,
    payoff: Payoff,
    round: u32,
    state: &BattleState,
    next: &dyn Fn(&BattleState) -> f64,
) -> Vec<Vec<f64>> {
    let setup = field.round_setup(battle, state);
    (0..7)
        .map(|ta| {
            (0..7)
                .map(|tb| {
                    let tactic = [ta, tb];
                    let cell = field.tactic_cell(&setup, tactic);
                    let mut counts = [0u32; 16];
                    for &pair in field.faces(setup.odds, setup.base_drm + cell.drm) {
                        counts[usize::from(pair) & 15] += 1;
                    }
                    let mut total = 0.0;
                    for (pair, &count) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
                        let after = field.apply_round(state, &setup, cell, pair);
                        let end = field.battle_end(&after, cell, tactic, round);
                        let v = match payoff {
                            Payoff::Win => match end {
                                Some(result) => f64::from(u8::from(result == BattleResult::AWins)),
                                None => next(&after),
                            },
                            Payoff::Sp => {
                                let lost = |side: usize| f64::from(state.sp[side] - after.sp[side]);
                                lost(1) - lost(0) + end.map_or_else(|| next(&after), |_| 0.0)
                            }
                        };
                        total += f64::from(count) * v;
                    }
                    total / f64::from(TWO_D6_FACES)
                })
                .collect()
        })
        .collect()
}

/// Solves the whole battle by backward induction over the states reachable from the
/// start. Polls the stop flag at every state.
pub fn solve(
    field: &FieldCombat,
    battle: &PreparedBattle,
    payoff: Payoff,
    max_slots: usize,
) -> Result<FieldGame, GameError> {
    let rounds = field.rules().round_limit;
    let shape = GameShape::new(&battle.start, rounds, max_slots)?;
    // Forward: the live states each round can start in, under any play.
    let mut live = vec![false; shape.slots()];
    live[shape.index(1, &battle.start)] = true;
    let mut by_round: Vec<Vec<BattleState>> = vec![vec![battle.start]];
    for round in 1..rounds {
        let mut next = Vec::new();
        for state in &by_round[round as usize - 1] {
            if crate::interrupt::requested() {
                return Err(GameError::Interrupted);
            }
            let setup = field.round_setup(battle, state);
            for ta in 0..7 {
                for tb in 0..7 {
                    let cell = field.tactic_cell(&setup, [ta, tb]);
                    let mut seen = 0u16;
                    for &pair in field.faces(setup.odds, setup.base_drm + cell.drm) {
                        seen |= 1 << (pair & 15);
                    }
                    for pair in (0..16).filter(|p| seen & (1 << p) != 0) {
                        let after = field.apply_round(state, &setup, cell, pair);
                        if field.battle_end(&after, cell, [ta, tb], round).is_none() {
                            let slot = shape.index(round + 1, &after);
                            if !live[slot] {
                                live[slot] = true;
                                next.push(after);
                            }
                        }
                    }
                }
            }
        }
        next.sort_by_key(|s| (s.sp, s.morale));
        by_round.push(next);
    }
    drop(live);
    let reachable: Vec<(u32, BattleState)> = by_round
        .iter()
        .enumerate()
        .flat_map(|(r, states)| states.iter().map(move |s| (r as u32 + 1, *s)))
        .collect();
    let mut compact = vec![reachable.len() as u32; shape.slots()];
    for (i, (round, state)) in reachable.iter().enumerate() {
        compact[shape.index(*round, state)] = i as u32;
    }
    // Backward: each round's stage games, valued with the next round's solution.
    let mut values = vec![f64::NAN; reachable.len()];
    let mut mixes = vec![[[0.0; 7]; 2]; reachable.len()];
    for (i, (round, state)) in reachable.iter().enumerate().rev() {
        if crate::interrupt::requested() {
            return Err(GameError::Interrupted);
        }
        let round = *round;
        let next = |after: &BattleState| values[compact[shape.index(round + 1, after)] as usize];
        let matrix = stage_matrix(field, battle, payoff, round, state, &next);
        let solution = matrix_game::solve(&matrix);
        values[i] = solution.value;
        mixes[i] = [to_array(&solution.row), to_array(&solution.column)];
    }
    Ok(FieldGame {
        payoff,
        shape,
        value: values[0],
        reachable,
        compact: Arc::new(compact),
        values,
        mixes,
    })
}

fn to_array(mix: &[f64]) -> [f64; 7] {
    std::array::from_fn(|i| mix.get(i).copied().unwrap_or(0.0))
}

/// The one-round game at the start, used where the whole game is too large: each tactic
/// pair is valued by one round only. `win`: P(A wins in this round, or the battle goes on
/// with B having lost more SP than A) — "A ahead after one round"; `sp`: the round's
/// expected SP-loss difference (B's minus A's).
pub fn one_round_game(
    field: &FieldCombat,
    battle: &PreparedBattle,
    payoff: Payoff,
) -> Vec<Vec<f64>> {
    let start = battle.start;
    let ahead = |after: &BattleState| {
        let lost = |side: usize| start.sp[side] - after.sp[side];
        f64::from(u8::from(lost(1) > lost(0)))
    };
    let after_one = |_: &BattleState| 0.0;
    match payoff {
        Payoff::Win => stage_matrix(field, battle, payoff, 1, &start, &ahead),
        Payoff::Sp => stage_matrix(field, battle, payoff, 1, &start, &after_one),
    }
}

/// What the `equilibrium` command reports for one battle.
#[derive(Clone, Debug, PartialEq)]
pub struct Equilibrium {
    pub value: f64,
    /// A's and B's optimal mixes at the start.
    pub mix: [[f64; 7]; 2],
    /// Tactics strictly dominated by another pure tactic in the start's stage game.
    pub dominated: [Vec<usize>; 2],
    /// Tactics played at no reachable state (at the start only, for a one-round game).
    pub never_played: [Vec<usize>; 2],
    /// Per pure tactic, how much worse than the value it does against the other side's
    /// optimal mix at the start (≥ 0, in the payoff's units).
    pub shortfall: [[f64; 7]; 2],
    /// Whether the whole battle was solved (false: the one-round game at the start).
    pub exact: bool,
    /// Reachable (round, state) pairs solved (1 for a one-round game).
    pub states: usize,
}

/// Solves a battle for the command: the whole game where it has at most `max_slots`
/// slots, else the one-round game at the start.
pub fn equilibrium(
    field: &FieldCombat,
    battle: &PreparedBattle,
    payoff: Payoff,
    max_slots: usize,
) -> Result<Equilibrium, GameError> {
    let (matrix, exact, never, states) = match solve(field, battle, payoff, max_slots) {
        Ok(game) => {
            let next = |after: &BattleState| {
                game.value_at(2, after)
                    .expect("successors of the start are solved")
            };
            let matrix = stage_matrix(field, battle, payoff, 1, &battle.start, &next);
            (
                matrix,
                true,
                Some(game.never_played()),
                game.reachable.len(),
            )
        }
        Err(GameError::TooLarge { .. }) => (one_round_game(field, battle, payoff), false, None, 1),
        Err(e) => return Err(e),
    };
    let solution = matrix_game::solve(&matrix);
    Ok(summary(&matrix, &solution, exact, never, states))
}

fn summary(
    matrix: &[Vec<f64>],
    solution: &GameSolution,
    exact: bool,
    never: Option<[Vec<usize>; 2]>,
    states: usize,
) -> Equilibrium {
    let mix = [to_array(&solution.row), to_array(&solution.column)];
    let rows = matrix_game::row_payoffs(matrix, &solution.column);
    let columns = matrix_game::column_payoffs(matrix, &solution.row);
    let shortfall = [
        std::array::from_fn(|t| (solution.value - rows[t]).max(0.0)),
        std::array::from_fn(|t| (columns[t] - solution.value).max(0.0)),
    ];
    let never = never.unwrap_or_else(|| mix.map(|m| (0..7).filter(|&t| m[t] <= PLAYED).collect()));
    Equilibrium {
        value: solution.value,
        mix,
        dominated: [
            matrix_game::dominated_rows(matrix, PLAYED),
            matrix_game::dominated_columns(matrix, PLAYED),
        ],
        never_played: never,
        shortfall,
        exact,
        states,
    }
}

/// One side's tactic choice per (round, state): cumulative thresholds in units of 2^-32,
/// the tactic being the number of thresholds a 32-bit uniform reaches.
#[derive(Clone, Debug, PartialEq)]
pub struct TacticTable {
    /// Cumulative probability through tactics 0..6 (the seventh is 2^32, never reached);
    /// per reachable state, then one row for every other state (the first tactic).
    thresholds: Vec<[u64; 6]>,
    /// Per slot: its row in `thresholds` (one slot, row 0, for a plain mix).
    rows: Arc<Vec<u32>>,
    /// Strides of (round − 1, SP A, SP B, morale A, morale B); all zero for a plain mix.
    strides: [usize; 5],
}

/// 2^32: the whole of a 32-bit uniform.
const ONE: f64 = 4_294_967_296.0;

fn thresholds(p: &[f64; 7]) -> [u64; 6] {
    let mut running = 0.0;
    std::array::from_fn(|t| {
        running += p[t];
        ((running * ONE).round() as u64).min(1 << 32)
    })
}

impl TacticTable {
    /// A fixed mix: one row, the same at every state.
    pub fn mix(mix: &TacticMix) -> Self {
        let total: u64 = mix.weights.iter().map(|&w| u64::from(w)).sum();
        let mut running = 0u64;
        let row = std::array::from_fn(|t| {
            running += u64::from(mix.weights[t]);
            (running << 32) / total
        });
        Self {
            thresholds: vec![row],
            rows: Arc::new(vec![0]),
            strides: [0; 5],
        }
    }

    /// A side's optimal mixes in a solved game; unreachable slots play the first tactic.
    pub fn solved(game: &FieldGame, side: usize) -> Self {
        let mut table: Vec<[u64; 6]> = game.mixes.iter().map(|m| thresholds(&m[side])).collect();
        // The row unreachable slots read; the slot map is shared with the game (and so
        // between both sides' tables).
        table.push([1u64 << 32; 6]);
        Self {
            thresholds: table,
            rows: Arc::clone(&game.compact),
            strides: game.shape.strides,
        }
    }

    /// The tactic a 32-bit uniform `u` picks at this state.
    #[inline(always)]
    pub fn pick(&self, round: u32, state: &BattleState, u: u32) -> usize {
        let row = &self.thresholds[self.rows[index(&self.strides, round, state)] as usize];
        // PERF: the tactic is the number of cumulative thresholds ≤ u, summed as integers.
        row.iter().map(|&c| usize::from(u64::from(u) >= c)).sum()
    }

    /// The probabilities [`Self::pick`] samples at this state (multiples of 2^-32).
    pub fn probabilities(&self, round: u32, state: &BattleState) -> [f64; 7] {
        let row = &self.thresholds[self.rows[index(&self.strides, round, state)] as usize];
        let mut previous = 0u64;
        std::array::from_fn(|t| {
            let upto = if t < 6 { row[t] } else { 1 << 32 };
            let p = (upto - previous) as f64 / ONE;
            previous = upto;
            p
        })
    }
}

/// Both sides' tactic tables: what a battle with an `equilibrium` side plays.
#[derive(Clone, Debug, PartialEq)]
pub struct StatePolicy {
    pub sides: [TacticTable; 2],
}

impl FieldCombat {
    /// Fights one battle with state-dependent tactics. The Monte Carlo kernel for battles
    /// with an `equilibrium` side: no allocation, no I/O; each round takes one word for
    /// both tactic picks (its high and low 32 bits) and one for the 2d6.
    #[inline]
    pub fn fight_with(
        &self,
        battle: &PreparedBattle,
        policy: &StatePolicy,
        dice: &mut DiceStream,
    ) -> BattleOutcome {
        let mut state = battle.start;
        // PERF: the fixed DRMs once per battle, not once per round.
        let constants = self.battle_constants(battle);
        let mut round = 0;
        loop {
            round += 1;
            let setup = self.round_setup_with(&constants, &state);
            let word = dice.word().0;
            let tactic = [
                policy.sides[0].pick(round, &state, (word >> 32) as u32),
                policy.sides[1].pick(round, &state, word as u32),
            ];
            let face = dice.word().take(TWO_D6_FACES);
            let cell = self.tactic_cell(&setup, tactic);
            let pair = self.resolve_face(setup.odds, setup.base_drm + cell.drm, face);
            state = self.apply_round(&state, &setup, cell, pair);
            if let Some(result) = self.battle_end(&state, cell, tactic, round) {
                return BattleOutcome::new(result, round, &battle.start, &state);
            }
        }
    }

    /// The exact distribution of a battle played with `policy`: every tactic pair
    /// weighted by both sides' probabilities at the state.
    pub fn battle_distribution_with(
        &self,
        battle: &PreparedBattle,
        policy: &StatePolicy,
        max_states: usize,
    ) -> Option<BattleDistribution> {
        self.battle_distribution_by(battle, max_states, &|round, state| {
            [
                policy.sides[0].probabilities(round, state),
                policy.sides[1].probabilities(round, state),
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::crt::{FieldBattle, FieldRules, Force};

    fn battle(
        a_sp: u32,
        b_sp: u32,
        morale: u32,
        round_limit: u32,
    ) -> (FieldCombat, PreparedBattle) {
        let mut rules = FieldRules::printed();
        rules.round_limit = round_limit;
        let force = |sp| Force {
            name: String::new(),
            sp,
            morale,
            leader: 0,
            drm: 0,
            tactics: TacticMix::uniform(&[0, 1, 2, 3, 4, 5, 6]).unwrap().into(),
        };
        let battle = FieldBattle {
            a: force(a_sp),
            b: force(b_sp),
            terrain_drm: 0,
        };
        (FieldCombat::new(rules).unwrap(), battle.prepare().unwrap())
    }

    /// At every reachable state, against the other side's optimal mix, no pure tactic
    /// does better than the state's value (to 1e-9), with the stage game rebuilt from the
    /// stored values of the next round.
    fn assert_equilibrium_everywhere(field: &FieldCombat, b: &PreparedBattle, game: &FieldGame) {
        for (round, state) in &game.reachable {
            let next = |after: &BattleState| game.value_at(round + 1, after).unwrap();
            let m = stage_matrix(field, b, game.payoff, *round, state, &next);
            let [x, y] = game.mix_at(*round, state).unwrap();
            let v = game.value_at(*round, state).unwrap();
            for p in matrix_game::row_payoffs(&m, &y) {
                assert!(p <= v + 1e-9, "round {round} {state:?}: A's pure {p} > {v}");
            }
            for p in matrix_game::column_payoffs(&m, &x) {
                assert!(p >= v - 1e-9, "round {round} {state:?}: B's pure {p} < {v}");
            }
            for side in [x, y] {
                assert!((side.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn equilibrium_conditions_hold_at_every_state() {
        for limit in [1, 6] {
            for payoff in [Payoff::Win, Payoff::Sp] {
                for (a, b, morale) in [(6, 4, 2), (5, 5, 1), (9, 3, 3)] {
                    let (field, battle) = battle(a, b, morale, limit);
                    let game = solve(&field, &battle, payoff, MAX_GAME_STATES).unwrap();
                    assert!(!game.reachable.is_empty());
                    assert_equilibrium_everywhere(&field, &battle, &game);
                    let e = equilibrium(&field, &battle, payoff, MAX_GAME_STATES).unwrap();
                    assert!(e.exact);
                    assert!((e.value - game.value).abs() < 1e-12);
                    assert!(e.shortfall.iter().flatten().all(|s| *s >= 0.0));
                    // A tactic played at the start has no shortfall.
                    for side in 0..2 {
                        for t in 0..7 {
                            if e.mix[side][t] > PLAYED {
                                assert!(e.shortfall[side][t] < 1e-9);
                                assert!(!e.never_played[side].contains(&t));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Both sides playing the solved tables: the exact enumeration's P(A wins) (or mean
    /// SP difference) is the game value.
    #[test]
    fn both_sides_at_equilibrium_realise_the_value() {
        for limit in [1, 6] {
            let (field, battle) = battle(8, 5, 2, limit);
            let game = solve(&field, &battle, Payoff::Win, MAX_GAME_STATES).unwrap();
            let policy = StatePolicy {
                sides: [TacticTable::solved(&game, 0), TacticTable::solved(&game, 1)],
            };
            let d = field
                .battle_distribution_with(&battle, &policy, 1_000_000)
                .unwrap();
            let p = d.result[BattleResult::AWins.index()];
            assert!((p - game.value).abs() < 1e-9, "{p} vs {}", game.value);
            let game = solve(&field, &battle, Payoff::Sp, MAX_GAME_STATES).unwrap();
            let policy = StatePolicy {
                sides: [TacticTable::solved(&game, 0), TacticTable::solved(&game, 1)],
            };
            let d = field
                .battle_distribution_with(&battle, &policy, 1_000_000)
                .unwrap();
            let mean = |v: &[f64]| v.iter().enumerate().map(|(k, p)| k as f64 * p).sum::<f64>();
            let diff = mean(&d.sp_lost[1]) - mean(&d.sp_lost[0]);
            assert!((diff - game.value).abs() < 1e-9, "{diff} vs {}", game.value);
        }
    }

    /// The kernel against the enumeration (both sides at equilibrium, and A at
    /// equilibrium against a uniform B): every outcome within 4 standard errors.
    #[test]
    fn monte_carlo_agrees_with_the_enumeration() {
        let (field, battle) = battle(10, 6, 2, 6);
        let game = solve(&field, &battle, Payoff::Win, MAX_GAME_STATES).unwrap();
        let uniform = TacticMix::uniform(&[0, 1, 2, 3, 4, 5, 6]).unwrap();
        for b_table in [TacticTable::solved(&game, 1), TacticTable::mix(&uniform)] {
            let policy = StatePolicy {
                sides: [TacticTable::solved(&game, 0), b_table],
            };
            let exact = field
                .battle_distribution_with(&battle, &policy, 1_000_000)
                .unwrap();
            let n = 1_000_000u64;
            let mut dice = DiceStream::for_block(20_240_601, 0);
            let mut counts = [0u64; BattleResult::COUNT];
            for _ in 0..n {
                counts[field.fight_with(&battle, &policy, &mut dice).result.index()] += 1;
            }
            for (i, &count) in counts.iter().enumerate() {
                let p = exact.result[i];
                let se = (p * (1.0 - p) / n as f64).sqrt().max(1e-9);
                let observed = count as f64 / n as f64;
                assert!(
                    (observed - p).abs() <= 4.0 * se,
                    "{}: simulated {observed} vs exact {p}",
                    BattleResult::ALL[i].label()
                );
            }
        }
    }

    #[test]
    fn a_mix_table_samples_its_weights() {
        let mix = TacticMix::new([3, 1, 0, 0, 0, 0, 4]).unwrap();
        let table = TacticTable::mix(&mix);
        let start = BattleState {
            sp: [3, 3],
            morale: [1, 1],
        };
        assert_eq!(
            table.probabilities(1, &start),
            [0.375, 0.125, 0.0, 0.0, 0.0, 0.0, 0.5]
        );
        assert_eq!(table.pick(1, &start, 0), 0);
        assert_eq!(table.pick(1, &start, (3 << 29) - 1), 0);
        assert_eq!(table.pick(1, &start, 3 << 29), 1);
        assert_eq!(table.pick(1, &start, 1 << 31), 6);
        assert_eq!(table.pick(1, &start, u32::MAX), 6);
    }

    #[test]
    fn too_large_games_fall_back_to_one_round() {
        let (field, battle) = battle(400, 300, 9, 6);
        assert!(matches!(
            solve(&field, &battle, Payoff::Win, MAX_GAME_STATES),
            Err(GameError::TooLarge { .. })
        ));
        let e = equilibrium(&field, &battle, Payoff::Sp, MAX_GAME_STATES).unwrap();
        assert!(!e.exact);
        assert_eq!(e.states, 1);
        assert!((e.mix[0].iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
