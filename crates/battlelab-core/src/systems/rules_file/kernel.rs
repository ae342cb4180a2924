//! Monte Carlo for rules files: a walk through the compiled chain (one draw per round,
//! read from the state's cumulative weights), or, where the chain is too large to build,
//! the step interpreter (the round step drawing its dice).
//!
//! Why this module exists: it is the hot loop of a rules-file run. The walk touches only
//! flat arrays built once per run — no expression is evaluated per battle — so a battle
//! from a rules file costs a few table reads a round, like the built-in lanes kernels.

use serde::{Deserialize, Serialize};

use crate::dice::DiceStream;
use crate::sim::Histogram;
use crate::systems::rules_file::chain::{self, below, Chain, CompareCache, Stepper};
use crate::systems::rules_file::game::Game;

/// Counts of one run: battles by outcome, by each metric's value (from the metric's
/// lowest), and by rounds fought.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesCounts {
    pub outcomes: Vec<u64>,
    pub metrics: Vec<Vec<u64>>,
    pub rounds: Vec<u64>,
}

impl Histogram for RulesCounts {
    fn merge(&mut self, other: Self) {
        add(&mut self.outcomes, &other.outcomes);
        if self.metrics.len() < other.metrics.len() {
            self.metrics.resize(other.metrics.len(), Vec::new());
        }
        for (mine, theirs) in self.metrics.iter_mut().zip(&other.metrics) {
            add(mine, theirs);
        }
        add(&mut self.rounds, &other.rounds);
    }
}

fn add(mine: &mut Vec<u64>, theirs: &[u64]) {
    if mine.len() < theirs.len() {
        mine.resize(theirs.len(), 0);
    }
    for (m, t) in mine.iter_mut().zip(theirs) {
        *m += t;
    }
}

impl RulesCounts {
    /// Zeroed counts for `game`.
    pub fn new(game: &Game) -> Self {
        Self {
            outcomes: vec![0; game.outcomes.len()],
            metrics: game
                .metrics
                .iter()
                .map(|(_, _, (lo, hi))| vec![0; (hi - lo + 1) as usize])
                .collect(),
            rounds: vec![0; rounds_bins(game)],
        }
    }

    pub fn trials(&self) -> u64 {
        self.outcomes.iter().sum()
    }

    fn record_rounds(&mut self, rounds: usize) {
        let last = self.rounds.len() - 1;
        self.rounds[rounds.min(last)] += 1;
    }
}

/// The most rounds counted one by one where a battle has no round limit: longer battles
/// are counted in the last bin ("this many or more").
pub const ROUNDS_COUNTED: usize = 1000;

/// Bins of the rounds histogram: one per round count up to the round limit (or
/// [`ROUNDS_COUNTED`]), so that every shard's counts of a run have one shape.
pub fn rounds_bins(game: &Game) -> usize {
    game.round_limit.map_or(ROUNDS_COUNTED, |l| l as usize) + 1
}

/// What a battle that ends in a state is: its outcome and its metrics' bins.
#[derive(Clone, Debug)]
pub struct Ending {
    pub outcome: u32,
    pub bins: Vec<u32>,
}

/// The outcome and metric bins of the battle ending with `frame`.
pub fn ending(game: &Game, frame: &[i64]) -> Ending {
    // An outcome an effect named; else the first whose condition holds; else the last.
    let named = frame[game.layout.outcome];
    let outcome = if named > 0 {
        (named - 1) as u32
    } else {
        game.outcomes
            .iter()
            .position(|(_, when)| when.as_ref().is_some_and(|w| w.eval(frame) != 0))
            .unwrap_or(game.outcomes.len() - 1) as u32
    };
    let bins = game
        .metrics
        .iter()
        .map(|(_, value, (lo, hi))| (value.eval(frame).clamp(*lo, *hi) - lo) as u32)
        .collect();
    Ending { outcome, bins }
}

/// The most equally likely outcomes a state's round may have to be read from a direct
/// table (one entry per outcome) rather than searched.
const DIRECT_TOTAL: u128 = 256;

/// The chain laid out for the walk: per state, where its round's draw leads.
#[derive(Clone, Debug)]
pub struct Walk {
    /// Per state: its round's outcomes in all, where they fit 32 bits (0: they do not,
    /// the 128-bit search is used).
    totals32: Vec<u32>,
    /// Per state with at most [`DIRECT_TOTAL`] outcomes: where its direct table starts
    /// (`u32::MAX`: searched).
    direct_at: Vec<u32>,
    /// Direct tables: draw → next state.
    direct: Vec<u32>,
    offsets: Vec<u32>,
    next: Vec<u32>,
    cumulative: Vec<u128>,
    totals: Vec<u128>,
    /// Per state: its ending, where it ends the battle.
    endings: Vec<Option<Ending>>,
}

/// Uniform draws from a block's stream, 32 bits at a time (two a word).
struct Halves<'d> {
    dice: &'d mut DiceStream,
    word: u64,
    have: bool,
}

impl Halves<'_> {
    fn next_u32(&mut self) -> u32 {
        if self.have {
            self.have = false;
            (self.word >> 32) as u32
        } else {
            self.word = self.dice.next_u64();
            self.have = true;
            self.word as u32
        }
    }

    /// A uniform draw below `total` (1 ≤ total < 2^32), exactly: Lemire's multiply and
    /// shift, redrawn in the rare zone that would bias it.
    fn below(&mut self, total: u32) -> u32 {
        let mut m = u64::from(self.next_u32()) * u64::from(total);
        if (m as u32) < total {
            let threshold = total.wrapping_neg() % total;
            while (m as u32) < threshold {
                m = u64::from(self.next_u32()) * u64::from(total);
            }
        }
        (m >> 32) as u32
    }
}

impl Walk {
    pub fn new(game: &Game, base: &[i64], chain: &Chain) -> Self {
        let n = chain.states.len();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut next = Vec::with_capacity(chain.edges.len());
        let mut cumulative = Vec::with_capacity(chain.edges.len());
        let mut totals32 = Vec::with_capacity(n);
        let mut direct_at = Vec::with_capacity(n);
        let mut direct = Vec::new();
        offsets.push(0);
        for s in 0..n {
            let mut acc = 0u128;
            let total = chain.totals[s];
            let small = total <= DIRECT_TOTAL && !chain.terminal[s];
            direct_at.push(if small { direct.len() as u32 } else { u32::MAX });
            for (t, w) in chain.transitions(s) {
                acc += w;
                next.push(*t);
                cumulative.push(acc);
                if small {
                    direct.extend(std::iter::repeat_n(*t, *w as usize));
                }
            }
            totals32.push(u32::try_from(total).unwrap_or(0));
            offsets.push(next.len() as u32);
        }
        let endings = (0..n)
            .map(|s| {
                chain.terminal[s]
                    .then(|| ending(game, &chain::frame_of(game, base, &chain.states[s])))
            })
            .collect();
        Self {
            totals32,
            direct_at,
            direct,
            offsets,
            next,
            cumulative,
            totals: chain.totals.clone(),
            endings,
        }
    }

    /// Adds `n` battles drawn from `dice`: each round one uniform draw below the state's
    /// outcomes in all, read from its direct table or its cumulative weights.
    pub fn record_many(&self, dice: &mut DiceStream, n: u64, counts: &mut RulesCounts) {
        let mut draws = Halves {
            dice,
            word: 0,
            have: false,
        };
        for _ in 0..n {
            // The chain's first state is the start (`Chain::build`).
            let mut s = 0;
            let mut rounds = 0usize;
            loop {
                if let Some(end) = &self.endings[s] {
                    counts.outcomes[end.outcome as usize] += 1;
                    for (m, b) in end.bins.iter().enumerate() {
                        counts.metrics[m][*b as usize] += 1;
                    }
                    counts.record_rounds(rounds);
                    break;
                }
                let total = self.totals32[s];
                let at = self.direct_at[s];
                s = if at != u32::MAX {
                    self.direct[(at + draws.below(total)) as usize] as usize
                } else {
                    let r = if total != 0 {
                        u128::from(draws.below(total))
                    } else {
                        below(draws.dice, self.totals[s])
                    };
                    let (lo, hi) = (self.offsets[s] as usize, self.offsets[s + 1] as usize);
                    // The first transition whose cumulative weight passes the draw.
                    let k = self.cumulative[lo..hi].partition_point(|c| *c <= r);
                    self.next[lo + k] as usize
                };
                rounds += 1;
            }
        }
    }
}

/// Adds `n` battles played round by round with the round step drawing its dice (for
/// battles whose chain is too large to build; they have a round limit, so each ends).
pub fn interpret_many(
    game: &Game,
    compare: &CompareCache,
    base: &[i64],
    dice: &mut DiceStream,
    n: u64,
    counts: &mut RulesCounts,
) {
    let state = game.layout.state.clone();
    for _ in 0..n {
        let mut frame = base.to_vec();
        let mut ended = chain::over(game, &frame, false);
        let mut rounds = 0usize;
        while !ended {
            let mut stepper = Stepper::drawing(game, compare, dice);
            let next = stepper.round(&frame);
            let (values, effect_ended, _, _) = &next[0];
            frame[state.clone()].copy_from_slice(values);
            rounds += 1;
            ended = chain::over(game, &frame, *effect_ended);
        }
        let end = ending(game, &frame);
        counts.outcomes[end.outcome as usize] += 1;
        for (m, b) in end.bins.iter().enumerate() {
            counts.metrics[m][*b as usize] += 1;
        }
        counts.record_rounds(rounds);
    }
}
