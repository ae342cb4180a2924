//! A whole field battle compiled into one state-transition table, so that the Monte Carlo
//! kernel spends a round on one word and one table lookup (docs/systems/field.md).
//!
//! Why this module exists: [`FieldCombat::fight`] steps a round through a chain of
//! dependent lookups — the state gives the larger side and the odds column, those and the
//! tactic cell give the face row, the face gives the CRT pair, the pair and the CLC band
//! give the losses, the losses give the next state — and each round waits for the one
//! before it. Yet with fixed tactic mixes nothing a round draws depends on the state: both
//! tactic picks and the 2d6 face are cut from the round's word. So, once per prepared
//! battle, [`TransitionTable::compile`] enumerates the states the battle can reach and gives
//! each a row: for every value the round's word can yield, the node the round leads to —
//! a state the battle goes on from, or an ending (how it ended and the state it ended in).
//! A battle ([`TransitionTable::fight`]) is then, per round: draw the word, cut the round's
//! value from it, read the next node. The cut does not depend on the state, so it runs
//! ahead of the battle; what chains round to round is one multiply-add and one load.
//!
//! Same dice, same battles: a row is filled with the shared round step
//! ([`FieldCombat::round_setup_with`], [`FieldCombat::tactic_cell`], [`FieldCombat::faces`],
//! [`FieldCombat::apply_round`], [`FieldCombat::battle_end`]), and the value a row is
//! indexed by is the very (A's pick, B's pick, face) that [`FieldCombat::fight`] cuts from
//! the same word, so a table battle is the battle the round-by-round kernel fights from
//! the same stream — the same words, the same outcome — not merely one with the same
//! distribution. Tests hold the two to that, battle by battle. How the value is cut
//! (`Cut`):
//! - `Cut::Joint`: one draw of `N = total_A · total_B · 36` sides. Cutting `n` and then
//!   `m` sides from a word gives `hi·m + lo` where cutting `n·m` sides gives
//!   `⌊w·n·m / 2^64⌋` — the same number (`⌊w·n/2^64⌋·m + ⌊(w·n mod 2^64)·m / 2^64⌋`), so
//!   one multiply yields `(u_A · total_B + u_B) · 36 + face` exactly, and rows have `N`
//!   entries. Used when every row fits the cap at that width.
//! - `Cut::Sides`: the three cuts in turn, each side's value mapped to its played
//!   tactic's place by a small table; rows have one entry per played tactic pair and face.
//!
//! Memory: one `u16` per entry (row × value), and one more past the rows of a joint draw's
//! table (the lanes' gathers read it). A table is built only up to a cap (at most
//! [`MAX_TABLE_ENTRIES`] entries, the one past the rows aside) and names at most 2^16
//! nodes; beyond that [`TransitionTable::compile`] returns `None` and callers fight round by
//! round with [`FieldCombat::fight`], which gives the same battles. Callers build a table
//! once per prepared battle (a run of an analysis, a call of `simulate_battles`), never per
//! trial.

use std::collections::HashMap;

mod lockstep;

use crate::dice::lanes;
use crate::dice::{DiceStream, DiceWord};
use crate::systems::field::battle::{
    BattleHistogram, BattleOutcome, BattleResult, BattleState, FieldCombat, PreparedBattle,
    TacticMix, OUTCOME_LANES, TWO_D6_FACES,
};

/// Most entries (2 bytes each) one compiled battle may hold: 2 MiB.
pub const MAX_TABLE_ENTRIES: usize = 1 << 20;

/// Most nodes (states and endings) a table can name in a `u16`.
const MAX_NODES: usize = 1 << 16;

/// How a round's value is cut from its word (see the module docs).
#[derive(Clone, Debug)]
enum Cut {
    /// One draw of this many sides: `(u_A · total_B + u_B) · 36 + face`.
    Joint(u32),
    /// A's pick, B's pick and the face in turn; `offset[side][u]` is the row offset of
    /// the tactic value `u` picks (A's dense tactic times the played pairs of B's, times
    /// 36; B's dense tactic times 36).
    Sides {
        totals: [u32; 2],
        offset: [Box<[u16]>; 2],
    },
}

/// A prepared battle compiled into a state-transition table (see the module docs).
#[derive(Clone)]
pub struct TransitionTable {
    /// `next[node · stride + value]`: the node a round from `node` leads to.
    next: Box<[u16]>,
    stride: usize,
    cut: Cut,
    /// Nodes below this are states with a row; the rest are states first reached in the
    /// last round (they need none), then endings.
    with_rows: usize,
    /// The state of each node (where the battle stands after the round that reached it).
    states: Box<[BattleState]>,
    /// How the battle ends at each node: an ending's result, or the round limit for a
    /// state the battle stands in when the limit is reached.
    endings: Box<[BattleResult]>,
    start: BattleState,
    round_limit: u32,
}

/// The tactics a mix plays, in tactic order, and the dense place of each value of its
/// die (`0..total`): what [`TacticMix::pick`] picks, numbered among the played tactics.
fn played_tactics(mix: &TacticMix) -> (Vec<usize>, Vec<usize>) {
    let played: Vec<usize> = (0..7).filter(|&t| mix.weights[t] > 0).collect();
    let place = played
        .iter()
        .enumerate()
        .flat_map(|(place, &t)| std::iter::repeat_n(place, mix.weights[t] as usize))
        .collect();
    (played, place)
}

/// A summary: the tables are too long to print.
impl std::fmt::Debug for TransitionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransitionTable")
            .field("entries", &self.entries())
            .field("states_with_rows", &self.with_rows)
            .field("nodes", &self.states.len())
            .field("joint_draw", &self.joint_draw())
            .finish()
    }
}

impl TransitionTable {
    /// Compiles `battle` under `field`, or `None` when its table would hold more than
    /// `max_entries` entries (at most [`MAX_TABLE_ENTRIES`]) or name more than 2^16 nodes:
    /// the caller then fights round by round with [`FieldCombat::fight`], which gives the
    /// same battles. A side playing `equilibrium` is compiled with the uniform mix
    /// [`PreparedBattle::mix`] holds for it, as [`FieldCombat::fight`] plays it.
    pub fn compile(
        field: &FieldCombat,
        battle: &PreparedBattle,
        max_entries: usize,
    ) -> Option<Self> {
        let max_entries = max_entries.min(MAX_TABLE_ENTRIES);
        let faces = TWO_D6_FACES as usize;
        let [(played_a, place_a), (played_b, place_b)] = battle.mix.map(|m| played_tactics(&m));
        // Rows are built dense: one entry per played tactic pair and face.
        let a_step = played_b.len() * faces;
        let dense_stride = played_a.len() * a_step;
        let round_limit = field.rules().round_limit;
        let constants = field.battle_constants(battle);
        // Live states are numbered in breadth-first order of the round that first reaches
        // them, so every state with a row (first reached before the last round) comes
        // before every state first reached in the last round. Endings are numbered apart
        // and placed after all states once their count is known.
        let mut live: Vec<BattleState> = vec![battle.start];
        let mut first_round: Vec<u32> = vec![0];
        let mut live_id: HashMap<BattleState, u32> = HashMap::from([(battle.start, 0)]);
        let mut ended: Vec<(BattleResult, BattleState)> = Vec::new();
        let mut ended_id: HashMap<(BattleResult, BattleState), u32> = HashMap::new();
        // Provisional entries: a live state's id, or ENDED | an ending's id.
        const ENDED: u32 = 1 << 31;
        let mut dense: Vec<u32> = Vec::new();
        let mut node = 0;
        while node < live.len() && first_round[node] < round_limit {
            if dense.len() + dense_stride > max_entries {
                return None;
            }
            let state = live[node];
            let setup = field.round_setup_with(&constants, &state);
            for &tactic_a in &played_a {
                for &tactic_b in &played_b {
                    let tactic = [tactic_a, tactic_b];
                    let cell = field.tactic_cell(&setup, tactic);
                    // The node each CRT pair leads to, worked out once per pair, not per face.
                    let mut by_pair = [None; OUTCOME_LANES];
                    for &pair in field.faces(setup.odds, setup.base_drm + cell.drm) {
                        let entry = by_pair[usize::from(pair)].get_or_insert_with(|| {
                            let after = field.apply_round(&state, &setup, cell, usize::from(pair));
                            // Round 0 never reaches the round limit: the table records how a
                            // round ends the battle by itself; the kernel adds the limit.
                            match field.battle_end(&after, cell, tactic, 0) {
                                Some(result) => {
                                    ENDED
                                        | *ended_id.entry((result, after)).or_insert_with(|| {
                                            ended.push((result, after));
                                            (ended.len() - 1) as u32
                                        })
                                }
                                None => *live_id.entry(after).or_insert_with(|| {
                                    live.push(after);
                                    first_round.push(first_round[node] + 1);
                                    (live.len() - 1) as u32
                                }),
                            }
                        });
                        dense.push(*entry);
                    }
                }
            }
            if live.len() + ended.len() > MAX_NODES {
                return None;
            }
            node += 1;
        }
        let with_rows = node;
        let live_count = live.len() as u32;
        let id = |entry: u32| match entry & ENDED {
            0 => entry as u16,
            _ => (live_count + (entry & !ENDED)) as u16,
        };
        let totals = [place_a.len(), place_b.len()];
        let joint = totals[0] * totals[1] * faces;
        let (next, stride, cut): (Box<[u16]>, usize, Cut) = if with_rows * joint <= max_entries {
            // Spread each dense row over every value of the joint draw.
            let mut next = Vec::with_capacity(with_rows * joint);
            for row in dense.chunks_exact(dense_stride) {
                for &a in &place_a {
                    for &b in &place_b {
                        let pair_row = &row[a * a_step + b * faces..][..faces];
                        next.extend(pair_row.iter().map(|&entry| id(entry)));
                    }
                }
            }
            // One entry past the rows: the lanes' gathers read two bytes past the entry
            // they load (`lockstep`).
            next.push(0);
            (next.into(), joint, Cut::Joint(joint as u32))
        } else {
            let offset = [(&place_a, a_step), (&place_b, faces)]
                .map(|(place, step)| place.iter().map(|&p| (p * step) as u16).collect());
            let next = dense.into_iter().map(id).collect();
            let totals = totals.map(|t| t as u32);
            (next, dense_stride, Cut::Sides { totals, offset })
        };
        let states = live
            .iter()
            .copied()
            .chain(ended.iter().map(|&(_, state)| state))
            .collect();
        let endings = live
            .iter()
            .map(|_| BattleResult::RoundLimit)
            .chain(ended.iter().map(|&(result, _)| result))
            .collect();
        Some(Self {
            next,
            stride,
            cut,
            with_rows,
            states,
            endings,
            start: battle.start,
            round_limit,
        })
    }

    /// Entries in the table (2 bytes each).
    pub fn entries(&self) -> usize {
        self.with_rows * self.stride
    }

    /// States with a row (those reached before the last round).
    pub fn states_with_rows(&self) -> usize {
        self.with_rows
    }

    /// Whether a round's value is one joint draw (`Cut::Joint`) rather than three cuts.
    pub fn joint_draw(&self) -> bool {
        matches!(self.cut, Cut::Joint(_))
    }

    /// Fights one whole battle: the same battle [`FieldCombat::fight`] fights from the
    /// same stream. No allocation, no I/O; one word per round.
    #[inline]
    pub fn fight(&self, dice: &mut DiceStream) -> BattleOutcome {
        match &self.cut {
            Cut::Joint(sides) => self.fight_by(dice, |mut word| word.take(*sides) as usize),
            Cut::Sides { totals, offset } => self.fight_by(dice, |mut word| {
                // The dice are cut as in `FieldCombat::fight`: A's pick, B's pick, the face.
                let a = usize::from(offset[0][word.take(totals[0]) as usize]);
                let b = usize::from(offset[1][word.take(totals[1]) as usize]);
                a + b + word.take(TWO_D6_FACES) as usize
            }),
        }
    }

    /// The battle loop, with `value` giving a round's index into its node's row.
    #[inline(always)]
    fn fight_by(&self, dice: &mut DiceStream, value: impl Fn(DiceWord) -> usize) -> BattleOutcome {
        let mut node = 0;
        let mut round = 0;
        loop {
            round += 1;
            // PERF: the round step (setup, tactic cell, CRT face, CLC losses, end test)
            // was a chain of dependent lookups per round; it is one load here, indexed by
            // the node and a value cut from the word independently of the state.
            node = usize::from(self.next[node * self.stride + value(dice.word())]);
            if (node >= self.with_rows) | (round >= self.round_limit) {
                let end = &self.states[node];
                return BattleOutcome::new(self.endings[node], round, &self.start, end);
            }
        }
    }
}

/// The Monte Carlo kernel of one prepared field battle with fixed tactic mixes: its
/// state-transition table where one was built, else the round-by-round kernel. The two
/// fight the same battles from the same stream, so which one runs changes no count; this
/// is the one place that chooses (`simulate_battles` and the field system's runs both
/// fight through it).
#[derive(Clone, Copy, Debug)]
pub enum FieldKernel<'a> {
    Table(&'a TransitionTable),
    RoundByRound(&'a FieldCombat, &'a PreparedBattle),
}

impl<'a> FieldKernel<'a> {
    /// The table kernel where `table` was built, else round by round.
    pub fn new(
        table: Option<&'a TransitionTable>,
        field: &'a FieldCombat,
        battle: &'a PreparedBattle,
    ) -> Self {
        match table {
            Some(table) => Self::Table(table),
            None => Self::RoundByRound(field, battle),
        }
    }

    /// Adds `n` battles drawn from `dice` to `histogram`, in [`LANES`](crate::dice::lanes::LANES) lanes: lane `l`
    /// fights [`lanes::lane_battles`]`(n, l)` battles one after another on its own stream,
    /// split from `dice` ([`DiceStream::lane_states`]: `dice` gives [`LANES`](crate::dice::lanes::LANES) words, none
    /// where `n` is 0). So the battles are the same whichever kernel fights them and
    /// however many lanes it advances at once: the table's battles, lane by lane, where a
    /// table was built (all lanes together where the CPU has AVX-512F or AVX2, the round is
    /// one joint draw, and the call has a battle for every 4 count keys, at most 2^18 keys:
    /// `lockstep`), else the round-by-round kernel's, lane by lane.
    ///
    /// Returns the words drawn from all streams, the block's and the lanes' (for the
    /// benches' and `dice_count`'s words per battle): the lanes' keys, and one word a round
    /// of each lane's battles, or, all lanes at once, one word a lane every sweep until the
    /// last lane is done.
    pub fn fight_block(
        &self,
        dice: &mut DiceStream,
        n: u64,
        histogram: &mut BattleHistogram,
    ) -> u64 {
        lanes::fight_block(
            dice,
            n,
            histogram,
            |lanes, histogram| match *self {
                Self::Table(table) => lockstep::fight_lanes(table, lanes, n, histogram)
                    .map(|words| words * lanes::LANES as u64),
                Self::RoundByRound(..) => None,
            },
            |dice, histogram| {
                let outcome = match *self {
                    Self::Table(table) => table.fight(dice),
                    Self::RoundByRound(field, battle) => field.fight(battle, dice),
                };
                histogram.record(&outcome);
                u64::from(outcome.rounds)
            },
        )
    }
}

/// Simulates `trials` battles with the parallel driver.
pub fn simulate_battles(
    field: &FieldCombat,
    battle: &PreparedBattle,
    seed: u64,
    trials: u64,
    control: &crate::sim::RunControl,
) -> Result<BattleHistogram, crate::sim::Interrupted> {
    let limit = field.rules().round_limit;
    // The battle compiled once for all blocks; too large a battle is fought round by
    // round, which gives the same battles.
    let table = TransitionTable::compile(field, battle, MAX_TABLE_ENTRIES);
    let kernel = FieldKernel::new(table.as_ref(), field, battle);
    crate::sim::run_blocks(
        seed,
        trials,
        || BattleHistogram::new(battle, limit),
        |dice, n, histogram| {
            kernel.fight_block(dice, n, histogram);
        },
        control,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::field::battle::{FieldBattle, FieldRules, Force, ResultPair, TacticCell};

    pub(super) fn battle(sp: [u32; 2], morale: [u32; 2], weights: [[u32; 7]; 2]) -> FieldBattle {
        let force = |side: usize| Force {
            name: String::new(),
            sp: sp[side],
            morale: morale[side],
            leader: side as i32,
            drm: 0,
            tactics: TacticMix::new(weights[side]).unwrap().into(),
        };
        FieldBattle {
            a: force(0),
            b: force(1),
            terrain_drm: -1,
        }
    }

    pub(super) const UNIFORM: [u32; 7] = [1; 7];

    /// Rules that exercise every part of the round step: caps, a longer round limit,
    /// odds rounded to nearest, a cell edit, and a matrix where a parenthesised cell ends
    /// the battle with neither side withdrawing (broken off).
    pub(super) fn edited_rules() -> FieldRules {
        let mut rules = FieldRules::printed();
        rules.round_limit = 9;
        rules.caps.leader = Some(1);
        rules.caps.tactic = Some(1);
        rules.odds_rounding = crate::systems::field::battle::OddsRounding::Nearest;
        rules.edit_crt_cell(3, 2, 7, ResultPair::parse("D1/D2").unwrap());
        rules.tactics.cells[0][0] = TacticCell::parse("(+1)").unwrap();
        rules
    }

    /// The table fights, battle by battle, exactly the battles the round-by-round kernel
    /// fights from the same stream, and leaves the stream where it does.
    fn assert_same_battles(rules: FieldRules, battle: &FieldBattle, joint: bool) {
        let field = FieldCombat::new(rules).unwrap();
        let prepared = battle.prepare().unwrap();
        let table = TransitionTable::compile(&field, &prepared, MAX_TABLE_ENTRIES).unwrap();
        assert_eq!(table.joint_draw(), joint, "{battle:?}");
        let mut by_table = DiceStream::for_block(11, 3);
        let mut by_round = by_table.clone();
        let mut results = [0u32; BattleResult::COUNT];
        for n in 0..20_000 {
            let outcome = table.fight(&mut by_table);
            assert_eq!(outcome, field.fight(&prepared, &mut by_round), "battle {n}");
            assert_eq!(by_table, by_round, "battle {n}");
            results[outcome.result.index()] += 1;
        }
        // The battles were not all alike.
        assert!(
            results.iter().filter(|&&c| c > 0).count() >= 2,
            "{results:?}"
        );
    }

    #[test]
    fn table_battles_are_the_round_by_round_battles() {
        let mixed = [[2, 1, 0, 1, 0, 0, 0], [0, 0, 2, 0, 1, 1, 0]];
        for rules in [FieldRules::printed(), edited_rules()] {
            assert_same_battles(rules.clone(), &battle([12, 8], [2, 2], mixed), true);
            // B larger, withdrawals and no-combat cells, Guards against a minor state.
            assert_same_battles(rules.clone(), &battle([5, 9], [3, 1], [UNIFORM; 2]), true);
            assert_same_battles(
                rules.clone(),
                &battle(
                    [7, 7],
                    [1, 2],
                    [[0, 0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0, 0]],
                ),
                true,
            );
            // Percent weights: the joint draw's rows would be too wide, so three cuts.
            let percent = [[60, 25, 0, 15, 0, 0, 0], [0, 5, 50, 0, 20, 20, 5]];
            assert_same_battles(rules, &battle([30, 14], [2, 2], percent), false);
        }
        let mut one_round = FieldRules::printed();
        one_round.round_limit = 1;
        assert_same_battles(one_round, &battle([4, 3], [2, 2], [UNIFORM; 2]), true);
    }

    #[test]
    fn a_battle_over_the_cap_is_not_compiled() {
        let field = FieldCombat::new(FieldRules::printed()).unwrap();
        let prepared = battle([12, 8], [2, 2], [UNIFORM; 2]).prepare().unwrap();
        let table = TransitionTable::compile(&field, &prepared, MAX_TABLE_ENTRIES).unwrap();
        assert!(TransitionTable::compile(&field, &prepared, table.entries() - 1).is_none());
        assert!(TransitionTable::compile(&field, &prepared, table.entries()).is_some());
        // Big battles are left to the round-by-round kernel.
        let big = battle([400, 300], [9, 9], [UNIFORM; 2]).prepare().unwrap();
        assert!(TransitionTable::compile(&field, &big, usize::MAX).is_none());
    }
}
