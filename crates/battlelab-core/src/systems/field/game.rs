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
//! by linear programming ([`crate::matrix_game`]). The round is stepped with the same
//! shared functions the kernel and the enumeration use ([`FieldCombat::round_setup`],
//! [`FieldCombat::tactic_cell`], [`FieldCombat::apply_round`], [`FieldCombat::battle_end`]),
//! so the game cannot drift from the rules.
//!
//! Payoffs: what the file's `[equilibrium] payoff` (or `--payoff`) names
//! ([`PayoffSpec`]), read per battle as a [`Payoff`]:
//! - `sp`: the expected SP-loss difference over the battle, B's SP lost minus A's (A
//!   maximises);
//! - an **outcome set**: the probability that the battle ends in one of the field
//!   report's outcomes ([`BattleResult`], by the labels the report prints: "A wins",
//!   "B withdraws", …), or in "A loses", "B loses", "smaller loses" as the report defines
//!   losing — broken by the other side, or withdrawing alone. `win` is "B loses": A wins
//!   the battle when B is broken or B withdraws alone (the outcome row "A wins" alone —
//!   B broken — is the payoff `"A wins"`). The side the set is bad for minimises it and
//!   the other maximises ("smaller loses": the larger side maximises); a set that mixes
//!   both sides' losses, or holds neither's, is maximised by A.
//!
//! States: a round (1 to the round limit) and `(SP, morale)` of each side. The solver lays
//! them out densely (every SP and morale from 0 to the start's), so a game has
//! `round_limit × (SP_A+1)(SP_B+1)(morale_A+1)(morale_B+1)` slots; above
//! [`MAX_GAME_STATES`] it is not solved ([`GameError::TooLarge`]) and callers fall back
//! to the one-round game at the start ([`one_round_game`]). Only states reachable from
//! the start under some play are solved. Each side chooses among its allowed tactics
//! ([`PreparedBattle::allowed`]), so a stage game has at most 7 × 7 strategies.
//!
//! Playing the solution: a [`StatePolicy`] holds, per side, a table of cumulative
//! thresholds in units of 2^-32 per (round, state) — a plain mix is a table of one row
//! with zero strides — so the kernel ([`FieldCombat::fight_with`]) picks a tactic
//! branch-free by counting the thresholds a 32-bit uniform reaches, and the exact
//! enumeration ([`FieldCombat::battle_distribution_with`]) weights each tactic pair by
//! the very probabilities those thresholds give.
//!
//! Exactly: [`solve_exact`] is the same backward induction in fractions
//! ([`matrix_game::solve_exact`]), and [`FieldCombat::result_probabilities_exact`] the
//! report's forward enumeration of outcomes in fractions under given mixes; a game's
//! value is the probability of its outcome set under its own mixes, fraction for
//! fraction (tested).

use std::sync::Arc;

use num_rational::BigRational;
use num_traits::{One, Zero};

use crate::dice::DiceStream;
use crate::matrix_game::{self, GameNumber, GameSolution};
use crate::systems::field::battle::{
    smaller_side, BattleDistribution, BattleOutcome, BattleResult, BattleState, FieldCombat,
    PreparedBattle, TacticMix, TacticSet, TWO_D6_FACES,
};

/// Most state slots (rounds × the dense SP/morale box) a game may have to be solved.
/// A slot costs 5 bytes while solving and 4 in a played policy's index (values, mixes and
/// thresholds are kept for reachable states only, which are far fewer: CLC losses jump),
/// so 4·10^6 slots stay under 20 MB.
pub const MAX_GAME_STATES: usize = 4_000_000;

/// A probability at or below this counts as "not played".
pub const PLAYED: f64 = 1e-12;

/// The names a payoff may be given besides the outcome labels.
pub const PAYOFF_NAMES: [&str; 5] = ["win", "sp", "A loses", "B loses", "smaller loses"];

/// The results in which `side` (0 = A, 1 = B) loses, as bits of [`BattleResult`] indices.
fn losses_of(side: usize) -> u8 {
    BattleResult::ALL
        .iter()
        .filter(|r| r.loses(side))
        .fold(0, |bits, r| bits | 1 << r.index())
}

/// What a file's `[equilibrium] payoff` or `--payoff` names: `sp`, or an outcome set,
/// which may depend on the battle ("smaller loses"); [`PayoffSpec::resolve`] reads it for
/// one battle.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PayoffSpec {
    kind: SpecKind,
    /// The names as written, canonical spelling (`win`, `A wins`, `smaller loses`).
    words: Vec<String>,
    /// Written as a list (`["B wins", "A withdraws"]`).
    listed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum SpecKind {
    Sp,
    /// These results (bits of [`BattleResult`] indices), and, with `smaller_loses`, the
    /// results in which the battle's smaller side loses.
    Outcomes {
        results: u8,
        smaller_loses: bool,
    },
}

impl Default for PayoffSpec {
    /// `win`: B loses.
    fn default() -> Self {
        Self::parse("win").expect("win is a payoff")
    }
}

impl PayoffSpec {
    /// The allowed values, in words, for error messages and help.
    pub fn allowed() -> String {
        format!(
            "\"win\" (A wins the battle: B broken or B withdrawing alone), \"sp\" (B's SP lost minus A's), \"A loses\", \"B loses\", \"smaller loses\", or an outcome of the report ({}), or a list of outcomes and losers such as [\"A wins\", \"B withdraws\"]",
            BattleResult::LABELS.map(|l| format!("\"{l}\"")).join(", ")
        )
    }

    /// One name: `win`, `sp`, `A loses`, `B loses`, `smaller loses` or an outcome label
    /// (case and spacing aside). The error says what was wrong, not what is allowed.
    pub fn parse(name: &str) -> Result<Self, String> {
        let (kind, word) = Self::word(name, false)?;
        Ok(Self {
            kind,
            words: vec![word],
            listed: false,
        })
    }

    /// A list of outcome labels and losers (`A loses`, `B loses`, `smaller loses`,
    /// `win`), their union.
    pub fn parse_list<S: AsRef<str>>(names: &[S]) -> Result<Self, String> {
        if names.is_empty() {
            return Err("an empty list names no outcome".into());
        }
        let (mut results, mut smaller) = (0u8, false);
        let mut words = Vec::new();
        for name in names {
            let (kind, word) = Self::word(name.as_ref(), true)?;
            if let SpecKind::Outcomes {
                results: r,
                smaller_loses: s,
            } = kind
            {
                results |= r;
                smaller |= s;
            }
            if !words.contains(&word) {
                words.push(word);
            }
        }
        Ok(Self {
            kind: SpecKind::Outcomes {
                results,
                smaller_loses: smaller,
            },
            words,
            listed: true,
        })
    }

    fn word(name: &str, in_list: bool) -> Result<(SpecKind, String), String> {
        let spaced = name.split_whitespace().collect::<Vec<_>>().join(" ");
        let outcomes = |results, smaller_loses| SpecKind::Outcomes {
            results,
            smaller_loses,
        };
        let found = match spaced.to_ascii_lowercase().as_str() {
            "sp" if in_list => {
                return Err(
                    "\"sp\" is an SP difference, not an outcome; it cannot be part of a list"
                        .into(),
                )
            }
            "sp" => (SpecKind::Sp, "sp".to_string()),
            "win" => (outcomes(losses_of(1), false), "win".to_string()),
            "a loses" => (outcomes(losses_of(0), false), "A loses".to_string()),
            "b loses" => (outcomes(losses_of(1), false), "B loses".to_string()),
            "smaller loses" => (outcomes(0, true), "smaller loses".to_string()),
            _ => match BattleResult::from_label(&spaced) {
                Some(r) => (outcomes(1 << r.index(), false), r.label().to_string()),
                None => return Err(format!("unknown payoff \"{}\"", crate::limits::echo(name))),
            },
        };
        Ok(found)
    }

    /// The payoff's name as written: `win`, `sp`, `smaller loses`, or the list's names
    /// joined by " or ".
    pub fn name(&self) -> String {
        self.words.join(" or ")
    }

    /// Whether this is `sp` (not an outcome set).
    pub fn is_sp(&self) -> bool {
        self.kind == SpecKind::Sp
    }

    /// This payoff for one battle.
    pub fn resolve(&self, start: &BattleState) -> Payoff {
        match self.kind {
            SpecKind::Sp => Payoff::Sp,
            SpecKind::Outcomes {
                results,
                smaller_loses,
            } => {
                let mut set = results;
                let mut maximiser = None;
                if smaller_loses {
                    let smaller = smaller_side(start);
                    set |= losses_of(smaller);
                    if results & !losses_of(smaller) == 0 {
                        maximiser = Some(1 - smaller);
                    }
                }
                Payoff::Outcomes(match maximiser {
                    Some(side) => OutcomeSet {
                        results: set,
                        maximiser: side,
                    },
                    None => OutcomeSet::new(set),
                })
            }
        }
    }
}

/// A payoff serialises as written: one name as a string, a list as a list.
impl serde::Serialize for PayoffSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.listed {
            self.words.serialize(serializer)
        } else {
            self.words[0].serialize(serializer)
        }
    }
}

/// A set of battle results, and the side that wants the battle to end in one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OutcomeSet {
    /// Bits of [`BattleResult`] indices.
    results: u8,
    /// 0 = A, 1 = B.
    maximiser: usize,
}

impl OutcomeSet {
    /// The set of these results (bits of [`BattleResult`] indices), maximised by the side
    /// it is good for: B where every result in it is a loss of A, else A.
    pub fn new(results: u8) -> Self {
        let only_a_loses = results != 0 && results & !losses_of(0) == 0;
        Self {
            results,
            maximiser: usize::from(only_a_loses),
        }
    }

    pub fn contains(&self, result: BattleResult) -> bool {
        self.results & (1 << result.index()) != 0
    }

    /// The results, in the report's order.
    pub fn results(&self) -> Vec<BattleResult> {
        BattleResult::ALL
            .into_iter()
            .filter(|r| self.contains(*r))
            .collect()
    }

    /// The report's labels joined by " or ": `A wins or B withdraws`.
    pub fn label(&self) -> String {
        let labels: Vec<&str> = self.results().iter().map(|r| r.label()).collect();
        if labels.is_empty() {
            "no outcome".into()
        } else {
            labels.join(" or ")
        }
    }
}

/// What side A's payoff is in one battle's game: `sp`, or ± the indicator of an outcome
/// set (+ where A maximises the set's probability, − where B does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Payoff {
    /// Expected SP lost by B minus SP lost by A (A maximises).
    Sp,
    /// The probability of the battle ending in the set.
    Outcomes(OutcomeSet),
}

impl Payoff {
    /// The side (0 = A, 1 = B) that maximises the payoff; the other minimises it.
    pub fn maximiser(self) -> usize {
        match self {
            Payoff::Sp => 0,
            Payoff::Outcomes(set) => set.maximiser,
        }
    }

    /// What the payoff measures, in words: `P(A wins or B withdraws)`.
    pub fn describe(self) -> String {
        match self {
            Payoff::Sp => "expected SP lost by B minus SP lost by A".into(),
            Payoff::Outcomes(set) => format!("P({})", set.label()),
        }
    }

    /// A's payoff when the battle ends in `result`.
    fn terminal<T: GameNumber>(self, result: BattleResult) -> T {
        match self {
            Payoff::Outcomes(set) if set.contains(result) => self.to_a(T::whole(1)),
            _ => T::whole(0),
        }
    }

    /// A value to A (what the solver maximises for A) as the payoff reads it (the set's
    /// probability, or the SP difference), or back: the map is its own inverse.
    pub fn to_a<T: GameNumber>(self, value: T) -> T {
        if self.maximiser() == 1 {
            // 0 − v, not −v: no negative zero.
            T::whole(0) - value
        } else {
            value
        }
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
    /// The value at the start (round 1), to A (see [`Payoff::to_a`]).
    pub value: f64,
    /// Live (round, state) pairs reachable from the start under some play, round by
    /// round, states sorted.
    pub reachable: Vec<(u32, BattleState)>,
    /// Per slot: its index in `reachable`, or `reachable.len()` where not reachable (the
    /// row a played table keeps for those).
    compact: Arc<Vec<u32>>,
    /// Per reachable state: its value to A.
    values: Vec<f64>,
    /// Per reachable state: A's and B's optimal mixes (0 for tactics a side may not
    /// choose).
    mixes: Vec<[[f64; 7]; 2]>,
    /// The tactics each side chose from.
    pub allowed: [TacticSet; 2],
}

/// Where `state` at the start of `round` is in a game's reachable states.
fn reachable_index(
    shape: &GameShape,
    compact: &[u32],
    reachable: usize,
    round: u32,
    state: &BattleState,
) -> Option<usize> {
    let inside = (1..=shape.rounds).contains(&round)
        && (0..2).all(|s| {
            (state.sp[s] as usize) * shape.strides[1 + s] < shape.strides[s]
                && (state.morale[s] as usize) * shape.strides[3 + s] < shape.strides[2 + s]
        });
    inside
        .then(|| compact[shape.index(round, state)])
        .map(|i| i as usize)
        .filter(|&i| i < reachable)
}

impl FieldGame {
    /// The value (to A) of the game from `state` at the start of `round`, if reachable.
    pub fn value_at(&self, round: u32, state: &BattleState) -> Option<f64> {
        self.reachable_index(round, state).map(|i| self.values[i])
    }

    /// A's and B's optimal mixes at `state` at the start of `round`, if reachable.
    pub fn mix_at(&self, round: u32, state: &BattleState) -> Option<[[f64; 7]; 2]> {
        self.reachable_index(round, state).map(|i| self.mixes[i])
    }

    fn reachable_index(&self, round: u32, state: &BattleState) -> Option<usize> {
        reachable_index(
            &self.shape,
            &self.compact,
            self.reachable.len(),
            round,
            state,
        )
    }

    /// Allowed tactics a side plays with probability above [`PLAYED`] at no reachable
    /// state.
    pub fn never_played(&self) -> [Vec<usize>; 2] {
        [0, 1].map(|side| {
            self.allowed[side]
                .tactics()
                .into_iter()
                .filter(|&t| self.mixes.iter().all(|mix| mix[side][t] <= PLAYED))
                .collect()
        })
    }
}

/// One round's payoff matrix at a state, to A (rows A's allowed tactics, columns B's, in
/// printed order), the battle after this round valued by `next` where it goes on.
pub fn stage_matrix(
    field: &FieldCombat,
    battle: &PreparedBattle,
    payoff: Payoff,
    round: u32,
    state: &BattleState,
    next: &dyn Fn(&BattleState) -> f64,
) -> Vec<Vec<f64>> {
    stage_matrix_in(field, battle, payoff, round, state, next)
}

/// [`stage_matrix`] in any [`GameNumber`]: f64 for the solver, fractions for
/// [`solve_exact`].
fn stage_matrix_in<T: GameNumber>(
    field: &FieldCombat,
    battle: &PreparedBattle,
    payoff: Payoff,
    round: u32,
    state: &BattleState,
    next: &dyn Fn(&BattleState) -> T,
) -> Vec<Vec<T>> {
    let setup = field.round_setup(battle, state);
    let [rows, columns] = battle.allowed.map(TacticSet::tactics);
    rows.iter()
        .map(|&ta| {
            columns
                .iter()
                .map(|&tb| {
                    let tactic = [ta, tb];
                    let cell = field.tactic_cell(&setup, tactic);
                    let mut counts = [0u32; 16];
                    for &pair in field.faces(setup.odds, setup.base_drm + cell.drm) {
                        counts[usize::from(pair) & 15] += 1;
                    }
                    let mut total = T::whole(0);
                    for (pair, &count) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
                        let after = field.apply_round(state, &setup, cell, pair);
                        let end = field.battle_end(&after, cell, tactic, round);
                        let v = match payoff {
                            Payoff::Outcomes(_) => match end {
                                Some(result) => payoff.terminal(result),
                                None => next(&after),
                            },
                            Payoff::Sp => {
                                let lost = |side: usize| {
                                    T::whole(i64::from(state.sp[side] - after.sp[side]))
                                };
                                lost(1) - lost(0)
                                    + match end {
                                        None => next(&after),
                                        Some(_) => T::whole(0),
                                    }
                            }
                        };
                        total = total + T::whole(i64::from(count)) * v;
                    }
                    total / T::whole(i64::from(TWO_D6_FACES))
                })
                .collect()
        })
        .collect()
}

/// A game's reachable (round, state) pairs, and per slot its index among them.
type Reachable = (Vec<(u32, BattleState)>, Vec<u32>);

/// The (round, state) pairs of a battle reachable from its start under any play of the
/// allowed tactics, round by round, states sorted; and per slot of `shape`, its index
/// among them (their number where not reachable).
fn reachable_states(
    field: &FieldCombat,
    battle: &PreparedBattle,
    shape: &GameShape,
) -> Result<Reachable, GameError> {
    let rounds = shape.rounds;
    let [rows, columns] = battle.allowed.map(TacticSet::tactics);
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
            for &ta in &rows {
                for &tb in &columns {
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
    Ok((reachable, compact))
}

/// A stage game's solution spread over the seven tactics (0 where not allowed).
fn spread<T: Clone>(mix: &[T], tactics: &[usize], zero: T) -> Vec<T> {
    let mut all = vec![zero; 7];
    for (p, &t) in mix.iter().zip(tactics) {
        all[t] = p.clone();
    }
    all
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
    let (reachable, compact) = reachable_states(field, battle, &shape)?;
    let [rows, columns] = battle.allowed.map(TacticSet::tactics);
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
        mixes[i] = [
            to_array(&spread(&solution.row, &rows, 0.0)),
            to_array(&spread(&solution.column, &columns, 0.0)),
        ];
    }
    Ok(FieldGame {
        payoff,
        shape,
        value: values[0],
        reachable,
        compact: Arc::new(compact),
        values,
        mixes,
        allowed: battle.allowed,
    })
}

fn to_array(mix: &[f64]) -> [f64; 7] {
    std::array::from_fn(|i| mix.get(i).copied().unwrap_or(0.0))
}

/// A battle's game solved in fractions ([`solve_exact`]).
#[derive(Clone, Debug)]
pub struct ExactGame {
    pub payoff: Payoff,
    /// The value at the start as the payoff reads it: the outcome set's probability (or
    /// the SP difference), not to A.
    pub value: BigRational,
    pub reachable: Vec<(u32, BattleState)>,
    shape: GameShape,
    compact: Vec<u32>,
    /// Per reachable state: A's and B's optimal mixes over the seven tactics.
    mixes: Vec<[Vec<BigRational>; 2]>,
}

impl ExactGame {
    /// A's and B's optimal mixes at `state` at the start of `round`, if reachable.
    pub fn mix_at(&self, round: u32, state: &BattleState) -> Option<&[Vec<BigRational>; 2]> {
        reachable_index(
            &self.shape,
            &self.compact,
            self.reachable.len(),
            round,
            state,
        )
        .map(|i| &self.mixes[i])
    }
}

/// [`solve`] in exact fractions: the same reachable states and stage games, each solved
/// by [`matrix_game::solve_exact`]. Fractions grow with the rounds, so this is for small
/// battles (tests hold the solver and the report against it).
pub fn solve_exact(
    field: &FieldCombat,
    battle: &PreparedBattle,
    payoff: Payoff,
    max_slots: usize,
) -> Result<ExactGame, GameError> {
    let rounds = field.rules().round_limit;
    let shape = GameShape::new(&battle.start, rounds, max_slots)?;
    let (reachable, compact) = reachable_states(field, battle, &shape)?;
    let [rows, columns] = battle.allowed.map(TacticSet::tactics);
    let mut values = vec![BigRational::zero(); reachable.len()];
    let mut mixes = vec![[Vec::new(), Vec::new()]; reachable.len()];
    for (i, (round, state)) in reachable.iter().enumerate().rev() {
        if crate::interrupt::requested() {
            return Err(GameError::Interrupted);
        }
        let round = *round;
        let next =
            |after: &BattleState| values[compact[shape.index(round + 1, after)] as usize].clone();
        let matrix = stage_matrix_in(field, battle, payoff, round, state, &next);
        let solution = matrix_game::solve_exact(&matrix);
        values[i] = solution.value;
        mixes[i] = [
            spread(&solution.row, &rows, BigRational::zero()),
            spread(&solution.column, &columns, BigRational::zero()),
        ];
    }
    Ok(ExactGame {
        payoff,
        value: payoff.to_a(values[0].clone()),
        reachable,
        shape,
        compact,
        mixes,
    })
}

/// The one-round game at the start, used where the whole game is too large: each tactic
/// pair is valued by one round only. An outcome set: the battle ending in the set in this
/// round, or, where it goes on, the maximising side ahead — its enemy having lost more SP
/// than it ("A ahead after one round" for `win`); `sp`: the round's expected SP-loss
/// difference (B's minus A's).
pub fn one_round_game(
    field: &FieldCombat,
    battle: &PreparedBattle,
    payoff: Payoff,
) -> Vec<Vec<f64>> {
    let start = battle.start;
    let maximiser = payoff.maximiser();
    let ahead = |after: &BattleState| {
        let lost = |side: usize| start.sp[side] - after.sp[side];
        payoff.to_a(f64::from(u8::from(lost(1 - maximiser) > lost(maximiser))))
    };
    let after_one = |_: &BattleState| 0.0;
    match payoff {
        Payoff::Outcomes(_) => stage_matrix(field, battle, payoff, 1, &start, &ahead),
        Payoff::Sp => stage_matrix(field, battle, payoff, 1, &start, &after_one),
    }
}

/// What the `equilibrium` command reports for one battle.
#[derive(Clone, Debug, PartialEq)]
pub struct Equilibrium {
    /// The payoff this battle's game was solved for.
    pub payoff: Payoff,
    /// The value as the payoff reads it: the outcome set's probability (or the SP
    /// difference) under both sides' optimal play, the maximiser
    /// ([`Payoff::maximiser`]) pushing it up and the other side down.
    pub value: f64,
    /// A's and B's optimal mixes at the start (0 for tactics a side may not choose).
    pub mix: [[f64; 7]; 2],
    /// Allowed tactics strictly dominated by another pure tactic in the start's stage
    /// game.
    pub dominated: [Vec<usize>; 2],
    /// Allowed tactics played at no reachable state (at the start only, for a one-round
    /// game).
    pub never_played: [Vec<usize>; 2],
    /// Per pure tactic, how much worse than the value it does for its side against the
    /// other side's optimal mix at the start (≥ 0, in the payoff's units); `None` for a
    /// tactic the side may not choose.
    pub shortfall: [[Option<f64>; 7]; 2],
    /// The tactics each side chose from.
    pub allowed: [TacticSet; 2],
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
    Ok(summary(
        &matrix,
        &solution,
        payoff,
        battle.allowed,
        exact,
        never,
        states,
    ))
}

fn summary(
    matrix: &[Vec<f64>],
    solution: &GameSolution,
    payoff: Payoff,
    allowed: [TacticSet; 2],
    exact: bool,
    never: Option<[Vec<usize>; 2]>,
    states: usize,
) -> Equilibrium {
    let tactics = allowed.map(TacticSet::tactics);
    let mix = [
        to_array(&spread(&solution.row, &tactics[0], 0.0)),
        to_array(&spread(&solution.column, &tactics[1], 0.0)),
    ];
    let rows = matrix_game::row_payoffs(matrix, &solution.column);
    let columns = matrix_game::column_payoffs(matrix, &solution.row);
    let mut shortfall = [[None; 7]; 2];
    for (k, &t) in tactics[0].iter().enumerate() {
        shortfall[0][t] = Some((solution.value - rows[k]).max(0.0));
    }
    for (k, &t) in tactics[1].iter().enumerate() {
        shortfall[1][t] = Some((columns[k] - solution.value).max(0.0));
    }
    let never = never.unwrap_or_else(|| {
        [0, 1].map(|side| {
            tactics[side]
                .iter()
                .copied()
                .filter(|&t| mix[side][t] <= PLAYED)
                .collect()
        })
    });
    let named = |indices: Vec<usize>, side: usize| -> Vec<usize> {
        indices.into_iter().map(|k| tactics[side][k]).collect()
    };
    Equilibrium {
        payoff,
        value: payoff.to_a(solution.value),
        mix,
        dominated: [
            named(matrix_game::dominated_rows(matrix, PLAYED), 0),
            named(matrix_game::dominated_columns(matrix, PLAYED), 1),
        ],
        never_played: never,
        shortfall,
        allowed,
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

impl FieldCombat {
    /// The probability of each battle result ([`BattleResult::ALL`] order) in exact
    /// fractions, both sides choosing by `mixes` (A's, then B's, over the seven tactics)
    /// at each round and state: the walk of [`FieldCombat::battle_distribution_by`] (every
    /// live state round by round, every tactic pair, every face of the 2d6, through the
    /// shared round step) with fractions for probabilities. `None` past `max_states`
    /// (round, state) pairs, or on a stop request.
    pub fn result_probabilities_exact(
        &self,
        battle: &PreparedBattle,
        max_states: usize,
        mixes: &dyn Fn(u32, &BattleState) -> [Vec<BigRational>; 2],
    ) -> Option<[BigRational; BattleResult::COUNT]> {
        use std::collections::BTreeMap;
        let mut result: [BigRational; BattleResult::COUNT] =
            std::array::from_fn(|_| BigRational::zero());
        let key = |s: &BattleState| (s.sp, s.morale);
        let mut live: BTreeMap<([u32; 2], [u32; 2]), (BattleState, BigRational)> =
            BTreeMap::from([(key(&battle.start), (battle.start, BigRational::one()))]);
        let faces = BigRational::whole(i64::from(TWO_D6_FACES));
        let mut visited = 0usize;
        for round in 1..=self.rules().round_limit {
            visited += live.len();
            if visited > max_states || crate::interrupt::requested() {
                return None;
            }
            let mut next_live = BTreeMap::new();
            for (state, p_state) in live.into_values() {
                let setup = self.round_setup(battle, &state);
                let mix = mixes(round, &state);
                for (ta, pa) in mix[0].iter().enumerate().filter(|(_, p)| !p.is_zero()) {
                    for (tb, pb) in mix[1].iter().enumerate().filter(|(_, p)| !p.is_zero()) {
                        let tactic = [ta, tb];
                        let cell = self.tactic_cell(&setup, tactic);
                        let resolution =
                            self.resolution_distribution(setup.odds, setup.base_drm + cell.drm);
                        let pair_weight = &p_state * pa * pb / &faces;
                        for (pair, &count) in resolution
                            .counts
                            .iter()
                            .enumerate()
                            .filter(|(_, c)| **c > 0)
                        {
                            let p = &pair_weight * BigRational::whole(count as i64);
                            let after = self.apply_round(&state, &setup, cell, pair);
                            match self.battle_end(&after, cell, tactic, round) {
                                Some(end) => {
                                    result[end.index()] = &result[end.index()] + p;
                                }
                                None => {
                                    let entry = next_live
                                        .entry(key(&after))
                                        .or_insert_with(|| (after, BigRational::zero()));
                                    entry.1 = &entry.1 + p;
                                }
                            }
                        }
                    }
                }
            }
            live = next_live;
        }
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::field::battle::{FieldBattle, FieldRules, Force};

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

    fn payoff(name: &str, start: &BattleState) -> Payoff {
        PayoffSpec::parse(name).unwrap().resolve(start)
    }

    /// A side's mix over its allowed tactics (the stage game's strategies).
    fn on(mix: &[f64; 7], allowed: TacticSet) -> Vec<f64> {
        allowed.tactics().iter().map(|&t| mix[t]).collect()
    }

    /// At every reachable state, against the other side's optimal mix, no pure tactic
    /// does better than the state's value (to 1e-9), with the stage game rebuilt from the
    /// stored values of the next round; no tactic outside a side's set is played.
    fn assert_equilibrium_everywhere(field: &FieldCombat, b: &PreparedBattle, game: &FieldGame) {
        for (round, state) in &game.reachable {
            let next = |after: &BattleState| game.value_at(round + 1, after).unwrap();
            let m = stage_matrix(field, b, game.payoff, *round, state, &next);
            let [x, y] = game.mix_at(*round, state).unwrap();
            let v = game.value_at(*round, state).unwrap();
            for p in matrix_game::row_payoffs(&m, &on(&y, b.allowed[1])) {
                assert!(p <= v + 1e-9, "round {round} {state:?}: A's pure {p} > {v}");
            }
            for p in matrix_game::column_payoffs(&m, &on(&x, b.allowed[0])) {
                assert!(p >= v - 1e-9, "round {round} {state:?}: B's pure {p} < {v}");
            }
            for (side, mix) in [x, y].iter().enumerate() {
                assert!((mix.iter().sum::<f64>() - 1.0).abs() < 1e-12);
                for (t, p) in mix.iter().enumerate() {
                    assert!(b.allowed[side].contains(t) || *p == 0.0, "{t} played");
                }
            }
        }
    }

    #[test]
    fn equilibrium_conditions_hold_at_every_state() {
        for limit in [1, 6] {
            for name in [
                "win",
                "sp",
                "A wins",
                "B wins",
                "smaller loses",
                "round limit",
            ] {
                for (a, b, morale) in [(6, 4, 2), (5, 5, 1), (9, 3, 3)] {
                    let (field, battle) = battle(a, b, morale, limit);
                    let payoff = payoff(name, &battle.start);
                    let game = solve(&field, &battle, payoff, MAX_GAME_STATES).unwrap();
                    assert!(!game.reachable.is_empty());
                    assert_equilibrium_everywhere(&field, &battle, &game);
                    let e = equilibrium(&field, &battle, payoff, MAX_GAME_STATES).unwrap();
                    assert!(e.exact);
                    assert!((e.value - payoff.to_a(game.value)).abs() < 1e-12);
                    // A tactic played at the start has no shortfall.
                    for side in 0..2 {
                        for t in 0..7 {
                            let shortfall = e.shortfall[side][t].unwrap();
                            assert!(shortfall >= 0.0);
                            if e.mix[side][t] > PLAYED {
                                assert!(shortfall < 1e-9);
                                assert!(!e.never_played[side].contains(&t));
                            }
                        }
                    }
                }
            }
        }
    }

    /// Who maximises: the side an outcome set is good for.
    #[test]
    fn the_side_an_outcome_set_is_good_for_maximises_it() {
        let start = BattleState {
            sp: [6, 4],
            morale: [2, 2],
        };
        let maximiser = |name: &str| payoff(name, &start).maximiser();
        for (name, side) in [
            ("win", 0),
            ("sp", 0),
            ("B loses", 0),
            ("A wins", 0),
            ("B withdraws", 0),
            ("A loses", 1),
            ("B wins", 1),
            ("A withdraws", 1),
            ("smaller loses", 0),
            ("round limit", 0),
            ("both broken", 0),
        ] {
            assert_eq!(maximiser(name), side, "{name}");
        }
        // The smaller side is B here, A where A has fewer SP; on equal SP, B.
        let a_smaller = BattleState {
            sp: [3, 4],
            morale: [2, 2],
        };
        assert_eq!(payoff("smaller loses", &a_smaller).maximiser(), 1);
        assert_eq!(
            payoff("smaller loses", &a_smaller),
            payoff("A loses", &a_smaller)
        );
        let even = BattleState {
            sp: [4, 4],
            morale: [2, 2],
        };
        assert_eq!(payoff("smaller loses", &even), payoff("B loses", &even));
        // win is B loses: broken, or withdrawing alone.
        let Payoff::Outcomes(set) = payoff("win", &start) else {
            panic!("win is an outcome set")
        };
        assert_eq!(
            set.results(),
            [BattleResult::AWins, BattleResult::BWithdraws]
        );
        // A list: its union; mixed sides: A maximises.
        let list = PayoffSpec::parse_list(&["b WINS", "A  withdraws"]).unwrap();
        assert_eq!(list.resolve(&start), payoff("A loses", &start));
        assert_eq!(
            serde_json::to_string(&list).unwrap(),
            r#"["B wins","A withdraws"]"#
        );
        let mixed = PayoffSpec::parse_list(&["A wins", "B wins"]).unwrap();
        assert_eq!(mixed.resolve(&start).maximiser(), 0);
        assert!(PayoffSpec::parse("glory").is_err());
        assert!(PayoffSpec::parse_list(&["sp"]).is_err());
        assert!(PayoffSpec::parse_list::<&str>(&[]).is_err());
        assert_eq!(
            serde_json::to_string(&PayoffSpec::default()).unwrap(),
            "\"win\""
        );
    }

    /// Both sides playing the solved tables: the exact enumeration's P(outcome set) (or
    /// mean SP difference) is the game value.
    #[test]
    fn both_sides_at_equilibrium_realise_the_value() {
        for limit in [1, 6] {
            let (field, battle) = battle(8, 5, 2, limit);
            for name in ["win", "A wins", "A loses"] {
                let payoff = payoff(name, &battle.start);
                let game = solve(&field, &battle, payoff, MAX_GAME_STATES).unwrap();
                let policy = StatePolicy {
                    sides: [TacticTable::solved(&game, 0), TacticTable::solved(&game, 1)],
                };
                let d = field
                    .battle_distribution_with(&battle, &policy, 1_000_000)
                    .unwrap();
                let Payoff::Outcomes(set) = payoff else {
                    unreachable!()
                };
                let p: f64 = set.results().iter().map(|r| d.result[r.index()]).sum();
                let value = payoff.to_a(game.value);
                assert!((p - value).abs() < 1e-9, "{name}: {p} vs {value}");
            }
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

    /// A side limited to some tactics: the game is solved over those only, and the
    /// exact game's value is P(set) under its own mixes, fraction for fraction.
    #[test]
    fn allowed_tactics_limit_the_game_and_the_exact_value_is_realised() {
        let (field, mut battle) = battle(6, 4, 2, 3);
        battle.allowed = [
            TacticSet::of(&[0, 1, 3]).unwrap(),
            TacticSet::of(&[2, 4, 6]).unwrap(),
        ];
        let payoff = payoff("win", &battle.start);
        let game = solve(&field, &battle, payoff, MAX_GAME_STATES).unwrap();
        assert_equilibrium_everywhere(&field, &battle, &game);
        let exact = solve_exact(&field, &battle, payoff, MAX_GAME_STATES).unwrap();
        let mixes = |round: u32, state: &BattleState| {
            exact
                .mix_at(round, state)
                .cloned()
                .expect("states played into are reachable")
        };
        let p = field
            .result_probabilities_exact(&battle, 1_000_000, &mixes)
            .unwrap();
        let Payoff::Outcomes(set) = payoff else {
            unreachable!()
        };
        let in_set: BigRational = set.results().iter().map(|r| p[r.index()].clone()).sum();
        assert_eq!(in_set, exact.value);
        use num_traits::ToPrimitive;
        assert!((exact.value.to_f64().unwrap() - payoff.to_a(game.value)).abs() < 1e-12);
        for (round, state) in &exact.reachable {
            for side in 0..2 {
                for (t, q) in exact.mix_at(*round, state).unwrap()[side]
                    .iter()
                    .enumerate()
                {
                    assert!(battle.allowed[side].contains(t) || q.is_zero());
                }
            }
        }
    }

    /// The kernel against the enumeration (both sides at equilibrium, and A at
    /// equilibrium against a uniform B): every outcome within 4 standard errors.
    #[test]
    fn monte_carlo_agrees_with_the_enumeration() {
        let (field, battle) = battle(10, 6, 2, 6);
        let game = solve(
            &field,
            &battle,
            payoff("win", &battle.start),
            MAX_GAME_STATES,
        )
        .unwrap();
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
            solve(
                &field,
                &battle,
                payoff("win", &battle.start),
                MAX_GAME_STATES
            ),
            Err(GameError::TooLarge { .. })
        ));
        for name in ["sp", "win", "A loses"] {
            let payoff = payoff(name, &battle.start);
            let e = equilibrium(&field, &battle, payoff, MAX_GAME_STATES).unwrap();
            assert!(!e.exact);
            assert_eq!(e.states, 1);
            assert!((e.mix[0].iter().sum::<f64>() - 1.0).abs() < 1e-12);
            if name != "sp" {
                assert!((0.0..=1.0).contains(&e.value), "{name}: {}", e.value);
            }
        }
    }
}
