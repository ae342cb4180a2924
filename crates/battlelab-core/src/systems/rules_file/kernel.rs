//! Monte Carlo for rules files: a walk through the compiled chain (one word a round, read
//! through a direct table or an exact alias table, see [`Walk`]; thirty-two battles at
//! once in `kernel/lockstep.rs`), or, where the chain is too large to build, the step
//! interpreter (the round step drawing its dice).
//!
//! Why this module exists: it is the hot loop of a rules-file run. The walk touches only
//! flat arrays built once per run — no expression is evaluated per battle — so a battle
//! from a rules file costs a few table reads a round, like the built-in lanes kernels.

mod lockstep;

use serde::{Deserialize, Serialize};

use crate::dice::{lanes, DiceStream, DiceWord};
use crate::sim::Histogram;
use crate::systems::rules_file::chain::{self, below, Chain, Prepared, Stepper};
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

/// Where a node of the walk has this bit, the battle has ended: in the terminal state
/// numbered by the other bits (an index into [`Walk::endings`]).
const ENDED: u32 = 1 << 31;

/// A state's header whose column count is 0: its weights pass 32 bits, and its round is
/// drawn by [`below`] and a search of its cumulative weights ([`Wide`]).
const WIDE: u32 = 0;

/// The most sides a direct walk's round may have ([`Walk`]).
const DIRECT_SIDES: u128 = 1 << 12;

/// The most entries a direct walk's table may hold (4 bytes each: 16 MiB).
const DIRECT_ENTRIES: u128 = 1 << 22;

/// The chain laid out for the walk: a round is one word from the battle's stream.
///
/// - **Direct**, where every state's round has `M` equally likely sides or a divisor of
///   `M` (once its weights' common divisor is taken out), `M` small: `next[node · M +
///   take(M)]` is the node the round leads to. One read a round.
/// - **Alias** otherwise: each state an exact alias table (Walker's, in integers), so
///   that a column `take(k)`, then `take(W)` against the column's threshold, picks the
///   column's own next state or its alias. `table[at]` is a state's header, `k | W << 32`
///   (its columns, and its weights' sum once their common divisor is taken out);
///   `table[at + 1 + c]` is column `c`, `T | A << 32` (its threshold out of `W`, the node
///   it keeps), and `aliases[at + 1 + c]` the node it gives where the draw passes the
///   threshold. Column `c` is drawn with chance `1/k`, kept with `T/W`, and Walker's
///   construction gives each next state its weight's share of the whole.
///
/// A node is a state's number (direct) or place (alias), or `ENDED` with a terminal's
/// number. Both are exact up to the `2^-64` of a word cut by [`DiceWord::take`], as every
/// kernel cuts its dice.
#[derive(Clone, Debug)]
pub struct Walk {
    layout: Layout,
    /// The start's node.
    start: u32,
    /// Per terminal state (in the chain's order): its ending.
    endings: Vec<Ending>,
    rounds_bins: usize,
}

#[derive(Clone, Debug)]
enum Layout {
    Direct {
        sides: u32,
        next: Vec<u32>,
    },
    /// [`Layout::Direct`] in half the memory, where every playing state's number and
    /// every terminal's fit 15 bits: a terminal is `1 << 15` with its number (read as
    /// [`ENDED`] with it, [`from16`]); one entry more past the rows, for the gathers.
    Direct16 {
        sides: u32,
        next: Vec<u16>,
    },
    Alias {
        table: Vec<u64>,
        aliases: Vec<u32>,
        /// States whose weights pass 32 bits, by the index their header's `W` holds.
        wide: Vec<Wide>,
    },
}

/// A node of 31 bits in 16 ([`Layout::Direct16`]): a terminal's flag moves to bit 15.
fn to16(node: u32) -> u16 {
    (node & 0x7FFF | (node & ENDED) >> 16) as u16
}

/// A node of [`Layout::Direct16`] as the walk reads it.
#[inline(always)]
fn from16(entry: u16) -> u32 {
    let entry = u32::from(entry);
    entry & 0x7FFF | (entry & 0x8000) << 16
}

/// A state whose round's weights pass 32 bits: drawn by [`below`] over its total, then
/// its cumulative weights searched.
#[derive(Clone, Debug)]
struct Wide {
    total: u128,
    cumulative: Vec<u128>,
    next: Vec<u32>,
}

/// Walker's alias table of integer weights: per column, its threshold out of the weights'
/// sum and the two items it gives (kept, alias). Exact: item `i` is given with chance
/// `w_i / W` where a column is drawn uniformly and kept with chance `T / W`.
fn alias_columns(weights: &[u128]) -> (u128, Vec<(u128, usize, usize)>) {
    let k = weights.len();
    let total: u128 = weights.iter().sum();
    // Scaled to `k · w_i`, each column holds `total`.
    let mut scaled: Vec<u128> = weights.iter().map(|w| w * k as u128).collect();
    let mut columns: Vec<(u128, usize, usize)> = (0..k).map(|i| (total, i, i)).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..k).partition(|&i| scaled[i] < total);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        columns[s] = (scaled[s], s, l);
        scaled[l] -= total - scaled[s];
        if scaled[l] < total {
            large.pop();
            small.push(l);
        }
    }
    (total, columns)
}

/// Which layout a walk takes: the one that fits ([`Walk::new`]), or one a test names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pick {
    Fits,
    #[cfg(test)]
    Direct32,
    #[cfg(test)]
    Alias,
}

impl Walk {
    pub fn new(game: &Game, base: &[i64], chain: &Chain) -> Self {
        Self::laid_out(game, base, chain, Pick::Fits)
    }

    fn laid_out(game: &Game, base: &[i64], chain: &Chain, pick: Pick) -> Self {
        let n = chain.states.len();
        let mut endings = Vec::new();
        let mut terminal_node = vec![0u32; n];
        for s in (0..n).filter(|&s| chain.terminal[s]) {
            terminal_node[s] = ENDED | endings.len() as u32;
            endings.push(ending(game, &chain::frame_of(game, base, &chain.states[s])));
        }
        let playing: Vec<usize> = (0..n).filter(|&s| !chain.terminal[s]).collect();
        // Each playing state's weights over their common divisor.
        let reduced: Vec<(u128, Vec<u128>)> = playing
            .iter()
            .map(|&s| {
                let edges = chain.transitions(s);
                let divisor = edges.iter().fold(0, |g, (_, w)| chain::gcd(g, *w));
                let weights: Vec<u128> = edges.iter().map(|(_, w)| w / divisor).collect();
                (weights.iter().sum(), weights)
            })
            .collect();
        let sides = reduced.iter().try_fold(1u128, |m, (total, _)| {
            let lcm = m / chain::gcd(m, *total) * total;
            (lcm <= DIRECT_SIDES).then_some(lcm)
        });
        let sides = sides.filter(|m| m * playing.len() as u128 <= DIRECT_ENTRIES);
        let layout = match (sides, pick) {
            (Some(sides), Pick::Fits) => Self::direct(
                chain,
                &playing,
                &reduced,
                &terminal_node,
                sides as u32,
                true,
            ),
            #[cfg(test)]
            (Some(sides), Pick::Direct32) => Self::direct(
                chain,
                &playing,
                &reduced,
                &terminal_node,
                sides as u32,
                false,
            ),
            _ => Self::alias(chain, &playing, &reduced, &terminal_node),
        };
        // The chain's first state is the start (`Chain::build`): the first playing state
        // (number and place 0) where it is not over before any round.
        let start = if chain.terminal[0] {
            terminal_node[0]
        } else {
            0
        };
        Self {
            layout,
            start,
            endings,
            rounds_bins: rounds_bins(game),
        }
    }

    /// The direct layout: playing state `i`'s row of `sides` entries, each of its
    /// transitions `sides / total · weight` entries in a row.
    fn direct(
        chain: &Chain,
        playing: &[usize],
        reduced: &[(u128, Vec<u128>)],
        terminal_node: &[u32],
        sides: u32,
        narrow: bool,
    ) -> Layout {
        let mut node = terminal_node.to_vec();
        for (i, &s) in playing.iter().enumerate() {
            node[s] = i as u32;
        }
        let mut next = Vec::with_capacity(playing.len() * sides as usize);
        for (&s, (total, weights)) in playing.iter().zip(reduced) {
            let per = u128::from(sides) / total;
            for ((t, _), w) in chain.transitions(s).iter().zip(weights) {
                next.extend(std::iter::repeat_n(node[*t as usize], (per * w) as usize));
            }
        }
        if narrow
            && playing.len() < 1 << 15
            && terminal_node.iter().filter(|t| **t & ENDED != 0).count() < 1 << 15
        {
            let mut narrow: Vec<u16> = next.iter().map(|&v| to16(v)).collect();
            narrow.push(0);
            return Layout::Direct16 {
                sides,
                next: narrow,
            };
        }
        Layout::Direct { sides, next }
    }

    /// The alias layout: see [`Walk`].
    fn alias(
        chain: &Chain,
        playing: &[usize],
        reduced: &[(u128, Vec<u128>)],
        terminal_node: &[u32],
    ) -> Layout {
        let mut node = terminal_node.to_vec();
        let mut at = 0usize;
        for &s in playing {
            node[s] = at as u32;
            at += 1 + chain.transitions(s).len();
        }
        let mut table = Vec::with_capacity(at);
        let mut aliases = Vec::with_capacity(at);
        let mut wide = Vec::new();
        for (&s, (total, weights)) in playing.iter().zip(reduced) {
            let edges = chain.transitions(s);
            match u32::try_from(*total) {
                Ok(total32) => {
                    let (_, columns) = alias_columns(weights);
                    table.push(columns.len() as u64 | u64::from(total32) << 32);
                    aliases.push(0);
                    for (threshold, kept, alias) in columns {
                        let kept = node[edges[kept].0 as usize];
                        table.push(threshold as u64 | u64::from(kept) << 32);
                        aliases.push(node[edges[alias].0 as usize]);
                    }
                }
                Err(_) => {
                    table.push(u64::from(WIDE) | (wide.len() as u64) << 32);
                    aliases.push(0);
                    let mut acc = 0;
                    wide.push(Wide {
                        total: *total,
                        cumulative: weights
                            .iter()
                            .map(|w| {
                                acc += w;
                                acc
                            })
                            .collect(),
                        next: edges.iter().map(|(t, _)| node[*t as usize]).collect(),
                    });
                    // Unread columns, so that every state's place is as counted above.
                    table.extend(std::iter::repeat_n(0, edges.len()));
                    aliases.extend(std::iter::repeat_n(0, edges.len()));
                }
            }
        }
        debug_assert_eq!(table.len(), at);
        Layout::Alias {
            table,
            aliases,
            wide,
        }
    }

    /// The node one round from `at` leads to, drawn from `dice`, in the alias layout.
    #[inline(always)]
    fn alias_step(
        table: &[u64],
        aliases: &[u32],
        wide: &[Wide],
        at: u32,
        dice: &mut DiceStream,
    ) -> u32 {
        let header = table[at as usize];
        let k = header as u32;
        if k == WIDE {
            let wide = &wide[(header >> 32) as usize];
            let r = below(dice, wide.total);
            return wide.next[wide.cumulative.partition_point(|c| *c <= r)];
        }
        let mut word = DiceWord(dice.next_u64());
        let column = word.take(k);
        let u = word.take((header >> 32) as u32);
        let i = at as usize + 1 + column as usize;
        let entry = table[i];
        if u < entry as u32 {
            (entry >> 32) as u32
        } else {
            aliases[i]
        }
    }

    /// One battle on `dice`: its terminal's number and its rounds.
    #[inline]
    fn battle(&self, dice: &mut DiceStream) -> (u32, usize) {
        let mut node = self.start;
        let mut rounds = 0usize;
        match &self.layout {
            Layout::Direct { sides, next } => {
                while node & ENDED == 0 {
                    let face = DiceWord(dice.next_u64()).take(*sides);
                    node = next[(node * sides + face) as usize];
                    rounds += 1;
                }
            }
            Layout::Direct16 { sides, next } => {
                while node & ENDED == 0 {
                    let face = DiceWord(dice.next_u64()).take(*sides);
                    node = from16(next[(node * sides + face) as usize]);
                    rounds += 1;
                }
            }
            Layout::Alias {
                table,
                aliases,
                wide,
            } => {
                while node & ENDED == 0 {
                    node = Self::alias_step(table, aliases, wide, node, dice);
                    rounds += 1;
                }
            }
        }
        (node & !ENDED, rounds)
    }

    /// Adds `n` battles drawn from `dice`, fought in [`lanes::LANES`] lanes each on its
    /// own stream (`dice::lanes`): all lanes at once where the CPU has AVX-512F
    /// (`kernel/lockstep.rs`), else lane by lane — the same battles either way.
    pub fn record_many(&self, dice: &mut DiceStream, n: u64, counts: &mut RulesCounts) {
        let mut ends = vec![0u64; self.endings.len()];
        let mut rounds = vec![0u64; self.rounds_bins];
        if self.start & ENDED != 0 {
            // Over before any round: no dice.
            ends[(self.start & !ENDED) as usize] += n;
            rounds[0] += n;
        } else {
            let mut tally = (ends, rounds);
            lanes::fight_block(
                dice,
                n,
                &mut tally,
                |lanes, tally| self.all_at_once(lanes, n, tally),
                |dice, (ends, rounds)| {
                    let (end, r) = self.battle(dice);
                    ends[end as usize] += 1;
                    rounds[r.min(self.rounds_bins - 1)] += 1;
                    0
                },
            );
            (ends, rounds) = tally;
        }
        self.fold(&ends, &rounds, counts);
    }

    /// Adds counts by terminal and by rounds to `counts`.
    fn fold(&self, ends: &[u64], rounds: &[u64], counts: &mut RulesCounts) {
        for (end, &c) in self.endings.iter().zip(ends) {
            if c == 0 {
                continue;
            }
            counts.outcomes[end.outcome as usize] += c;
            for (m, b) in end.bins.iter().enumerate() {
                counts.metrics[m][*b as usize] += c;
            }
        }
        for (r, &c) in rounds.iter().enumerate() {
            counts.rounds[r] += c;
        }
    }
}

/// Adds `n` battles played round by round with the round step drawing its dice (for
/// battles whose chain is too large to build; they have a round limit, so each ends).
pub fn interpret_many(
    game: &Game,
    compare: &Prepared,
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
