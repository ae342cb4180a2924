//! A rules file's battle as a Markov chain over its bounded state: one round's outcomes
//! from a state, enumerated with exact weights or drawn from the dice; the chain of every
//! state reachable from the start, built once per run; and its exact solution.
//!
//! Why this module exists: every capability reads a rules file through one round step
//! ([`Stepper::round`]), written once for both uses — enumerating every outcome with its
//! weight (what the chain and the exact results are built from) and drawing one outcome
//! from the dice (the step interpreter, for battles whose chain is too large). The Monte
//! Carlo kernel walks the compiled chain (`kernel.rs`), so a simulated battle and the exact
//! distribution are two readings of the same transitions.

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// The most transitions a chain may have to be summed in fractions (above it, in floating
/// point: the same enumeration, each probability rounded once).
pub const MAX_FRACTION_TRANSITIONS: usize = 40_000;

use crate::dice::DiceStream;
use crate::systems::rules_file::expr::Statement;
use crate::systems::rules_file::game::{ColumnPick, Edge, Game, PhaseKind, Table};

/// The most states a chain may hold before the step interpreter runs instead.
pub const MAX_STATES: usize = 250_000;
/// The most transitions a chain may hold.
pub const MAX_TRANSITIONS: usize = 8_000_000;
/// The ways and states a chain's buffers have room for before they grow.
const ROOM: usize = 1024;

/// One way a round can go so far: the frame, its weight `num / den`, and whether an
/// effect ended the battle.
#[derive(Clone, Debug)]
struct Branch {
    frame: Vec<i64>,
    num: u128,
    den: u128,
    ended: bool,
}

/// The greatest common divisor (binary: shifts and subtractions, no 128-bit division,
/// which was a twentieth of building a chain).
pub(crate) fn gcd(a: u128, b: u128) -> u128 {
    if a == 0 || b == 0 {
        return a | b;
    }
    // PERF: weights mostly fit in 64 bits, where each step is one word.
    if (a | b) >> 64 == 0 {
        return u128::from(gcd_u64(a as u64, b as u64));
    }
    let shift = (a | b).trailing_zeros();
    let (mut a, mut b) = (a >> a.trailing_zeros(), b);
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

/// [`gcd`] of two nonzero 64-bit numbers.
fn gcd_u64(a: u64, b: u64) -> u64 {
    let shift = (a | b).trailing_zeros();
    let (mut a, mut b) = (a >> a.trailing_zeros(), b);
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

/// The least common multiple of two nonzero numbers; `None` past 128 bits.
fn lcm(a: u128, b: u128) -> Option<u128> {
    exact_div(a, gcd(a, b)).checked_mul(b)
}

/// `a / b` for `b` dividing `a` (a gcd), in one word where `a` fits in one (PERF: a
/// 128-bit division is a library call).
fn exact_div(a: u128, b: u128) -> u128 {
    if a >> 64 == 0 {
        u128::from(a as u64 / b as u64)
    } else {
        a / b
    }
}

/// A uniform draw below `total` (≥ 1) from `dice`: whole words masked to the bits of
/// `total − 1` and redrawn when over (exact; at most two words per try).
pub fn below(dice: &mut DiceStream, total: u128) -> u128 {
    if total <= 1 {
        return 0;
    }
    let top = total - 1;
    let bits = 128 - top.leading_zeros();
    let mask = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    loop {
        let r = if bits <= 64 {
            u128::from(dice.next_u64())
        } else {
            (u128::from(dice.next_u64()) << 64) | u128::from(dice.next_u64())
        } & mask;
        if r < total {
            return r;
        }
    }
}

/// Reads one round of a game: every way it can go (enumeration) or one way, drawn.
pub struct Stepper<'g, 'd> {
    game: &'g Game,
    /// Drawing one outcome; `None`: enumerating all.
    dice: Option<&'d mut DiceStream>,
    /// Set when a weight no longer fits in 128 bits (the chain is then not built).
    pub overflow: bool,
    /// What the game's chains are built with ([`Prepared`]): here, the compare phases'
    /// outcome lists, by (phase, dice of each side).
    compare: &'g Prepared,
    /// How each phase and table is played ([`Plan`]): the prepared game's where
    /// enumerating, one that reads every roll where drawing.
    plan: std::borrow::Cow<'g, Plan>,
    /// A grouped table's results by `(table, column, modifier)`: `(result, first sum,
    /// ways)` in the order the rolls first give each result.
    read_rows: FxHashMap<(usize, usize, i64), Vec<Grouped>>,
    /// [`merge`]'s index, reused.
    index: MergeIndex,
    /// Frames of branches merged away or finished, reused by forks (PERF: allocating a
    /// frame per fork was a fifth of building a chain).
    spare: Vec<Vec<i64>>,
    /// A remembered phase's ways, by `[phase, column, modifier, its key's values…]`: the
    /// id of what it leaves (in [`Stepper::afters`]) and the weight.
    memo: FxHashMap<Vec<i64>, Vec<(u32, u128, u128)>>,
    /// The values of a remembered phase's `after` slots, and whether it ended the
    /// battle, by id ([`Stepper::memo`]'s entries name them so).
    afters: Vec<(Vec<i64>, bool)>,
    after_ids: FxHashMap<(Vec<i64>, bool), u32>,
    /// Reused by a remembered phase: the groups of branches by hash, and the sums of
    /// their pieces by (group, what the piece leaves).
    sum_index: (FxHashMap<u64, u32>, FxHashMap<(u32, u32), usize>),
    /// Reused by a remembered phase (PERF: a few allocations a phase were a tenth of a
    /// field battle's chain).
    buffers: MemoBuffers,
    /// Each branch's column, reused by [`Stepper::look_up_in_place`].
    columns: Vec<Result<usize, usize>>,
    /// Lists of branches emptied, reused by the phases (PERF: a list or two allocated
    /// per phase and a vector per state of the chain ([`States`]) were together a
    /// twenty-eighth of the instructions building a field battle's chain took).
    lists: Vec<Vec<Branch>>,
    /// Enumerating where only which way leads where matters ([`Chain::build_unweighted`]):
    /// every way that can happen weighs 1 (so no weight outgrows 128 bits).
    unit: bool,
}

/// How enumerating plays each phase and table of a game: what it groups, remembers,
/// clears and looks up in place. Worked out once per game ([`Prepared`]; PERF: working
/// it out for every chain built was a twentieth of building a field battle's). It is
/// read from the game as written, not from a run's folded one ([`Game::folded`]), with
/// the parameters and policies (the frame below the state) read as the constants they
/// are in a run: folding only takes reads away, so a plan of the written game is a plan
/// of every run's (for the shipped analyses and the field and naval scenarios, the
/// same plan either way: held by a test).
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Per table: whether its rolls may be grouped by result before any effect runs
    /// (see [`groupable`]).
    pub(crate) grouped: Vec<bool>,
    /// Per result: whether its effects roll on another table (and so may branch); the
    /// others are applied to a branch in place.
    rolls: Vec<bool>,
    /// Per phase: the scratch slots no later phase reads ([`unread_after`]),
    /// cleared before the phase's branches are merged.
    unread: Vec<Vec<usize>>,
    /// Per table: whether its row reads nothing but the roll and the
    /// modifier, so a grouped roll's results follow from the column and the modifier
    /// alone (and are kept in `read_rows`).
    row_free: Vec<bool>,
    /// The phase before which the options are chosen: the first phase that reads an option where no phase before it can split a branch (so
    /// the branches come out in the same order), else 0; the number of phases when no
    /// phase reads one (the split would change nothing).
    pub(crate) choices_at: usize,
    /// Per phase: what its ways follow from, where they can be remembered
    /// (PERF: the field battle's tactical matrix, read with each pair of tactics, is
    /// worked out once per larger side instead of once a round; its CRT once per column
    /// and modifier).
    pub(crate) memo_plan: Vec<Option<Remembered>>,
    /// Per table: whether it is looked up in place
    /// ([`Stepper::look_up_in_place`]): no dice, and no result that rolls on a table.
    pub(crate) in_place: Vec<bool>,
    /// Per table: whether its column (or shift) reads the modifier, and so is read
    /// again once the modifier is set.
    column_reads_modifier: Vec<bool>,
}

impl Plan {
    /// The plan of `game` for enumerating.
    pub fn of(game: &Game) -> Plan {
        let rolls = rolls_of(game);
        let constant = game.layout.state.start;
        Plan {
            grouped: game.tables.iter().map(|t| groupable(game, t)).collect(),
            unread: unread_after(game),
            row_free: game
                .tables
                .iter()
                .map(|t| {
                    let mut read = Vec::new();
                    if let Some(r) = &t.row {
                        r.slots(&mut read);
                    }
                    read.iter().all(|s| {
                        *s < constant || *s == game.layout.roll || *s == game.layout.modifier
                    })
                })
                .collect(),
            choices_at: choices_at(game),
            memo_plan: remembered(game),
            in_place: game
                .tables
                .iter()
                .map(|t| t.dice == 0 && table_results(t).iter().all(|r| !rolls[*r]))
                .collect(),
            column_reads_modifier: game
                .tables
                .iter()
                .map(|t| {
                    let mut read = Vec::new();
                    t.column_slots(&mut read);
                    read.contains(&game.layout.modifier)
                })
                .collect(),
            rolls,
        }
    }

    /// Drawing: every phase played as written, the options chosen first, each column
    /// read again once the modifier is set.
    fn drawing(game: &Game) -> Plan {
        Plan {
            grouped: vec![false; game.tables.len()],
            rolls: rolls_of(game),
            unread: vec![Vec::new(); game.phases.len()],
            row_free: vec![false; game.tables.len()],
            choices_at: 0,
            memo_plan: vec![None; game.phases.len()],
            in_place: vec![false; game.tables.len()],
            column_reads_modifier: vec![true; game.tables.len()],
        }
    }
}

/// What a remembered phase works in, kept between phases ([`Stepper::phase`]).
#[derive(Default)]
struct MemoBuffers {
    /// Every live branch's memo key, one after another.
    keys: Vec<i64>,
    /// Each live branch's group, and each group's first branch.
    group_of: Vec<u32>,
    firsts: Vec<usize>,
    /// The sums of the pieces: (group, what the piece leaves, weight).
    sums: Vec<(u32, u32, u128, u128)>,
}

/// Where a round from a state can end: the next state, whether an effect ended the
/// battle, and the weight `num / den` ([`Stepper::round`]).
type Next = (Vec<i64>, bool, u128, u128);

/// A weight `(n, d)` as a round keeps it: as it is while both fit in 64 bits (so that
/// the product of two such fits in 128), else in lowest terms.
///
/// PERF: reducing every product and sum by its greatest common divisor was a tenth of
/// building a field battle's chain; the weights are reduced once, where a round ends
/// ([`Stepper::round`]). Every weight stands for the same fraction either way, and where
/// a product or sum of unreduced weights would pass 128 bits it is taken again from their
/// lowest terms, so a weight is past 128 bits exactly where the reduced one would be.
fn settle(n: u128, d: u128) -> (u128, u128) {
    if (n | d) >> 64 == 0 {
        (n, d)
    } else {
        lowest((n, d))
    }
}

/// `(n, d)` in lowest terms.
fn lowest((n, d): (u128, u128)) -> (u128, u128) {
    let g = gcd(n, d);
    (exact_div(n, g), exact_div(d, g))
}

/// The weight `w` times `ways / total` (unreduced, as they come: a split's ways over its
/// total); `None` past 128 bits.
fn scaled(w: (u128, u128), ways: u128, total: u128) -> Option<(u128, u128)> {
    if let (Some(n), Some(d)) = (w.0.checked_mul(ways), w.1.checked_mul(total)) {
        return Some(settle(n, d));
    }
    let w = lowest(w);
    Some(lowest((w.0.checked_mul(ways)?, w.1.checked_mul(total)?)))
}

/// `b` with its weight times `ways / total` ([`scaled`]); `None` past 128 bits. The
/// frame is copied into one of `spare`'s where there is one.
fn fork(b: &Branch, ways: u128, total: u128, spare: &mut Vec<Vec<i64>>) -> Option<Branch> {
    let (num, den) = scaled((b.num, b.den), ways, total)?;
    let frame = match spare.pop() {
        Some(mut frame) => {
            frame.clear();
            frame.extend_from_slice(&b.frame);
            frame
        }
        None => b.frame.clone(),
    };
    Some(Branch {
        frame,
        num,
        den,
        ended: b.ended,
    })
}

/// `a × b` ([`settle`]); `None` past 128 bits.
fn times(a: (u128, u128), b: (u128, u128)) -> Option<(u128, u128)> {
    if let (Some(n), Some(d)) = (a.0.checked_mul(b.0), a.1.checked_mul(b.1)) {
        return Some(settle(n, d));
    }
    let (a, b) = (lowest(a), lowest(b));
    Some(lowest((a.0.checked_mul(b.0)?, a.1.checked_mul(b.1)?)))
}

/// `a + b` ([`settle`]); `None` past 128 bits.
fn plus(a: (u128, u128), b: (u128, u128)) -> Option<(u128, u128)> {
    if a.1 == b.1 && (a.0 | b.0 | a.1) >> 64 == 0 {
        return Some(settle(a.0 + b.0, a.1));
    }
    plus_lowest(a, b).or_else(|| plus_lowest(lowest(a), lowest(b)))
}

/// `a + b` in lowest terms; `None` past 128 bits.
fn plus_lowest(a: (u128, u128), b: (u128, u128)) -> Option<(u128, u128)> {
    if a.1 == b.1 {
        let num = a.0.checked_add(b.0)?;
        let g = gcd(num, a.1);
        return Some((exact_div(num, g), exact_div(a.1, g)));
    }
    let den = exact_div(a.1, gcd(a.1, b.1)).checked_mul(b.1)?;
    let num =
        a.0.checked_mul(exact_div(den, a.1))?
            .checked_add(b.0.checked_mul(exact_div(den, b.1))?)?;
    let g = gcd(num, den);
    Some((exact_div(num, g), exact_div(den, g)))
}

/// The branches that play a phase (`plays`), and those that skip it, each in order.
/// PERF: most phases are played by every branch; no partition is built then.
fn partition_playing(
    mut branches: Vec<Branch>,
    plays: impl Fn(&Branch) -> bool,
    lists: &mut Vec<Vec<Branch>>,
) -> (Vec<Branch>, Vec<Branch>) {
    if branches.iter().all(&plays) {
        (branches, Vec::new())
    } else {
        let n = branches.len();
        let (mut live, mut done) = (take_list(lists, n), take_list(lists, n));
        for b in branches.drain(..) {
            if plays(&b) {
                live.push(b);
            } else {
                done.push(b);
            }
        }
        give_list(lists, branches);
        (live, done)
    }
}

/// The most lists of branches a stepper keeps for reuse.
const SPARE_LISTS: usize = 64;

/// An empty list of branches with room for `n`: one kept, where it has the room (else a
/// new one: growing a kept list would copy its old room).
fn take_list(lists: &mut Vec<Vec<Branch>>, n: usize) -> Vec<Branch> {
    match lists.pop() {
        Some(list) if list.capacity() >= n => list,
        _ => Vec::with_capacity(n.max(8)),
    }
}

/// Keeps the emptied `list` for reuse, up to [`SPARE_LISTS`].
fn give_list(lists: &mut Vec<Vec<Branch>>, list: Vec<Branch>) {
    debug_assert!(list.is_empty());
    if list.capacity() > 0 && lists.len() < SPARE_LISTS {
        lists.push(list);
    }
}

/// The most frames a stepper keeps for reuse.
const SPARE_FRAMES: usize = 1024;

/// Keeps `frame` for a later fork, up to [`SPARE_FRAMES`].
fn keep(spare: &mut Vec<Vec<i64>>, frame: Vec<i64>) {
    if spare.len() < SPARE_FRAMES {
        spare.push(frame);
    }
}

/// Whether enumerating table `t` may sum the ways of the rolls that give the same result
/// and run each result's effects once: neither its modifier nor its column reads the
/// roll, and no effect in the file reads the roll or the modifier (so the branches of one
/// result would hold the same frame once the phase's temporaries are cleared). The
/// branches come out in the order the rolls first give each result, so the chain's
/// states are found in the same order as roll by roll.
fn groupable(game: &Game, t: &Table) -> bool {
    let (roll, modifier) = (game.layout.roll, game.layout.modifier);
    let mut read = Vec::new();
    picks_reads(t, &mut read);
    !read.contains(&roll) && !effects_read(game, roll) && !effects_read(game, modifier)
}

/// The slots rolling on table `t` reads: its modifier, row, column and shift, and the
/// effects of every result it can give (through the tables those roll on in turn).
fn table_reads(game: &Game, t: usize, out: &mut Vec<usize>, seen: &mut [bool]) {
    if std::mem::replace(&mut seen[t], true) {
        return;
    }
    let table = &game.tables[t];
    picks_reads(table, out);
    if let Some(row) = &table.row {
        row.slots(out);
    }
    for r in table_results(table) {
        statements_reads(game, &game.results[r].effects, out, seen);
    }
}

/// The slots `statements` read, the tables they roll on included.
fn statements_reads(
    game: &Game,
    statements: &[Statement],
    out: &mut Vec<usize>,
    seen: &mut [bool],
) {
    for s in statements {
        match s {
            Statement::Set { value, .. } => value.slots(out),
            // A loss reads what it takes from.
            Statement::Lose { amount, order } => {
                amount.slots(out);
                out.extend(order.iter().copied());
            }
            Statement::Roll(name) => {
                if let Some(t) = game.tables.iter().position(|t| t.name == *name) {
                    table_reads(game, t, out, seen);
                }
            }
            Statement::End | Statement::Outcome(_) => {}
        }
    }
}

/// Per phase: the round's scratch slots (the options chosen and the scratch values) that
/// no later phase of the round reads. Enumerating clears them before the branches are
/// merged, so branches that differ only in what the rest of the round never reads are
/// one. A round ends with the state alone (scratch is 0 at the start of the next), so
/// after the last phase every scratch slot is unread.
fn unread_after(game: &Game) -> Vec<Vec<usize>> {
    let mut later: Vec<usize> = Vec::new();
    let mut out = vec![Vec::new(); game.phases.len()];
    for p in (0..game.phases.len()).rev() {
        out[p] = game
            .layout
            .scratch
            .clone()
            .filter(|s| !later.contains(s))
            .collect();
        later.extend(phase_reads(game, p));
    }
    out
}

/// The slots phase `p` reads: its condition, its dice and tables, its effects.
fn phase_reads(game: &Game, p: usize) -> Vec<usize> {
    let phase = &game.phases[p];
    let mut read = Vec::new();
    let mut seen = vec![false; game.tables.len()];
    if let Some(w) = &phase.when {
        w.slots(&mut read);
    }
    match &phase.kind {
        PhaseKind::Table(t) => table_reads(game, *t, &mut read, &mut seen),
        PhaseKind::Count(pools) => pools.iter().for_each(|pool| {
            pool.dice.slots(&mut read);
            pool.hits_at_most.slots(&mut read);
            read.push(pool.into);
        }),
        PhaseKind::Compare { dice, .. } => dice.iter().for_each(|d| d.slots(&mut read)),
        PhaseKind::Effects => {}
    }
    statements_reads(game, &phase.effects, &mut read, &mut seen);
    read.sort_unstable();
    read.dedup();
    read
}

/// The slots `statements` may write, through the tables they roll on.
fn statements_writes(
    game: &Game,
    statements: &[Statement],
    out: &mut Vec<usize>,
    seen: &mut [bool],
) {
    for s in statements {
        match s {
            Statement::Set { target, .. } => out.push(*target),
            Statement::Lose { order, .. } => out.extend(order.iter().copied()),
            Statement::Outcome(_) => out.push(game.layout.outcome),
            Statement::End => {}
            Statement::Roll(name) => {
                let Some(t) = game.tables.iter().position(|t| t.name == *name) else {
                    continue;
                };
                if std::mem::replace(&mut seen[t], true) {
                    continue;
                }
                out.extend([game.layout.roll, game.layout.modifier]);
                for r in table_results(&game.tables[t]) {
                    statements_writes(game, &game.results[r].effects, out, seen);
                }
            }
        }
    }
}

/// The slots phase `p` may write (temporaries included).
fn phase_writes(game: &Game, p: usize) -> Vec<usize> {
    let phase = &game.phases[p];
    let mut out = Vec::new();
    let mut seen = vec![false; game.tables.len()];
    match &phase.kind {
        PhaseKind::Table(t) => {
            let name = game.tables[*t].name.clone();
            statements_writes(game, &[Statement::Roll(name)], &mut out, &mut seen);
        }
        PhaseKind::Count(pools) => out.extend(pools.iter().map(|pool| pool.into)),
        PhaseKind::Compare { won, .. } => out.extend(won.iter().copied()),
        PhaseKind::Effects => {}
    }
    statements_writes(game, &phase.effects, &mut out, &mut seen);
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether phase `p` can split a branch: it rolls dice or reads a table (a table with
/// no dice can still give a result beyond its columns, which reorders branches).
fn splits(game: &Game, p: usize) -> bool {
    let phase = &game.phases[p];
    !matches!(phase.kind, PhaseKind::Effects)
        || phase
            .effects
            .iter()
            .any(|s| matches!(s, Statement::Roll(_)))
}

/// [`Stepper::choices_at`] for enumerating `game`.
fn choices_at(game: &Game) -> usize {
    let chosen: Vec<usize> = game.choices.iter().flat_map(|c| c.chosen).collect();
    let first = (0..game.phases.len())
        .find(|p| phase_reads(game, *p).iter().any(|s| chosen.contains(s)))
        .unwrap_or(game.phases.len());
    if first == game.phases.len() || (0..first).all(|q| !splits(game, q)) {
        first
    } else {
        0
    }
}

/// How a phase's ways are remembered ([`Stepper::memo`]): a phase whose ways follow from
/// its scratch values (and, `by_roll`, from its table's column and modifier, which may
/// read the state), that writes nothing of the state.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Remembered {
    /// The scratch slots the phase reads or writes (besides its condition, and the
    /// table's column and modifier where `by_roll`).
    key: Vec<usize>,
    /// Whether the key holds the table's column and modifier.
    by_roll: bool,
    /// The slots whose values after the phase are remembered: what it writes, the
    /// options chosen before it, what is cleared after it, the temporaries, the key.
    after: Vec<usize>,
    /// Whether only a lone branch may take its ways from the memo (a table rolled in its
    /// effects would order many differently).
    lone: bool,
    /// The slots not in `after`, in order: branches alike in these (from the state on)
    /// are alike after the phase wherever they take the same way.
    rest: Vec<usize>,
}

/// [`Stepper::memo_plan`] for enumerating `game`: every phase that reads a table or
/// rolls, or before which the options are chosen, and whose ways follow from a few
/// values, none of them the state's (but the column and modifier it reads a table in).
fn remembered(game: &Game) -> Vec<Option<Remembered>> {
    let layout = &game.layout;
    let at = choices_at(game);
    let unread = unread_after(game);
    let chosen: Vec<usize> = game.choices.iter().flat_map(|c| c.chosen).collect();
    (0..game.phases.len())
        .map(|p| {
            let phase = &game.phases[p];
            if !(splits(game, p) || (p == at && p > 0)) {
                return None;
            }
            let writes = phase_writes(game, p);
            // The reads besides the condition, and besides the table's column and
            // modifier where those read the state.
            let mut rest = Vec::new();
            let mut seen = vec![false; game.tables.len()];
            let mut by_roll = false;
            match &phase.kind {
                PhaseKind::Table(t) => {
                    let table = &game.tables[*t];
                    let mut picked = Vec::new();
                    let mut shift_seen = vec![false; game.tables.len()];
                    shift_seen[*t] = true;
                    picks_reads(table, &mut picked);
                    by_roll = picked.iter().any(|s| layout.state.contains(s)) && p != at;
                    if !by_roll {
                        rest.extend(picked);
                    }
                    if let Some(r) = &table.row {
                        r.slots(&mut rest);
                    }
                    seen[*t] = true;
                    for r in table_results(table) {
                        statements_reads(game, &game.results[r].effects, &mut rest, &mut seen);
                    }
                }
                PhaseKind::Count(pools) => pools.iter().for_each(|pool| {
                    pool.dice.slots(&mut rest);
                    pool.hits_at_most.slots(&mut rest);
                    rest.push(pool.into);
                }),
                PhaseKind::Compare { dice, .. } => dice.iter().for_each(|d| d.slots(&mut rest)),
                PhaseKind::Effects => {}
            }
            statements_reads(game, &phase.effects, &mut rest, &mut seen);
            rest.extend(writes.iter().copied());
            rest.sort_unstable();
            rest.dedup();
            if rest.iter().any(|s| layout.state.contains(s)) {
                return None;
            }
            let key: Vec<usize> = rest.iter().copied().filter(|s| layout.scratch.contains(s)).collect();
            let mut after: Vec<usize> = writes.iter().copied().filter(|s| !layout.state.contains(s)).collect();
            after.extend(unread[p].iter().copied());
            after.extend(layout.temps.clone());
            after.extend(key.iter().copied());
            if p == at {
                after.extend(chosen.iter().copied());
            }
            after.sort_unstable();
            after.dedup();
            let rolls_inside = phase.effects.iter().any(|s| matches!(s, Statement::Roll(_)))
                || matches!(&phase.kind, PhaseKind::Table(t) if table_results(&game.tables[*t])
                    .iter()
                    .any(|r| game.results[*r].effects.iter().any(|s| matches!(s, Statement::Roll(_)))));
            let rest = (0..layout.names.len()).filter(|s| after.binary_search(s).is_err()).collect();
            Some(Remembered {
                key,
                by_roll,
                after,
                lone: rolls_inside || (p == at && p > 0),
                rest,
            })
        })
        .collect()
}

/// The slots a table's column, modifier and shift read.
fn picks_reads(table: &Table, out: &mut Vec<usize>) {
    if let Some(modifier) = &table.modifier {
        modifier.slots(out);
    }
    table.column_slots(out);
}

/// Every result table `t` can give.
fn table_results(table: &Table) -> Vec<usize> {
    let mut results: Vec<usize> = table.cells.iter().flatten().copied().collect();
    results.extend(table.natural.iter().map(|n| n.1));
    for edge in [
        &table.below,
        &table.above,
        &table.below_rows,
        &table.above_rows,
    ] {
        if let Edge::Result(r) = edge {
            results.push(*r);
        }
    }
    results.sort_unstable();
    results.dedup();
    results
}

/// Per result: whether its effects roll on a table.
fn rolls_of(game: &Game) -> Vec<bool> {
    game.results
        .iter()
        .map(|r| r.effects.iter().any(|s| matches!(s, Statement::Roll(_))))
        .collect()
}

/// Whether any effect reads `slot`.
fn effects_read(game: &Game, slot: usize) -> bool {
    let mut read = Vec::new();
    for s in game
        .results
        .iter()
        .flat_map(|r| r.effects.iter())
        .chain(game.phases.iter().flat_map(|p| p.effects.iter()))
    {
        match s {
            Statement::Set { value, .. } => value.slots(&mut read),
            Statement::Lose { amount, .. } => amount.slots(&mut read),
            _ => {}
        }
    }
    read.contains(&slot)
}

/// What building a game's chains reads of the game, worked out once per game: for each
/// compare phase, the distribution of pairs won for every count of dice (`(won by side
/// 0, won by side 1) → ways`, over `faces^(n0 + n1)`), and how enumerating plays each
/// phase and table ([`Plan`]).
#[derive(Clone, Debug)]
pub struct Prepared {
    lists: HashMap<(usize, i64, i64), PairsWon>,
    pub plan: Plan,
}

/// Pairs won by each side with their ways, and the ways in all.
type PairsWon = (Vec<((i64, i64), u128)>, u128);

impl Prepared {
    /// Every compare phase's lists, for every count of dice its expressions can give,
    /// and the plan.
    pub fn of(game: &Game) -> Self {
        let mut lists = HashMap::new();
        let scope = RangeOf(game);
        for (p, phase) in game.phases.iter().enumerate() {
            if let PhaseKind::Compare {
                dice, faces, ties, ..
            } = &phase.kind
            {
                let tops = [0, 1].map(|k| dice[k].range(&scope).1.max(0));
                for n0 in 0..=tops[0] {
                    for n1 in 0..=tops[1] {
                        lists.insert((p, n0, n1), compare_list(n0, n1, *faces, *ties));
                    }
                }
            }
        }
        Self {
            lists,
            plan: Plan::of(game),
        }
    }
}

struct RangeOf<'g>(&'g Game);

impl crate::systems::rules_file::expr::Scope for RangeOf<'_> {
    fn slot(&self, _: &str) -> Option<(usize, (i64, i64))> {
        None
    }
    fn names(&self) -> Vec<String> {
        Vec::new()
    }
    fn range(&self, slot: usize) -> (i64, i64) {
        self.0.layout.names[slot].2
    }
}

/// Both sides roll, sort high to low and compare pair by pair (as many pairs as the
/// fewer dice); `ties` wins a tie.
fn compare_list(n0: i64, n1: i64, faces: u32, ties: usize) -> PairsWon {
    let total_dice = (n0 + n1) as u32;
    let f = u128::from(faces);
    let total = f.pow(total_dice);
    let mut ways: HashMap<(i64, i64), u128> = HashMap::new();
    let mut roll = vec![1u32; total_dice as usize];
    let pairs = n0.min(n1) as usize;
    loop {
        let mut a: Vec<u32> = roll[..n0 as usize].to_vec();
        let mut b: Vec<u32> = roll[n0 as usize..].to_vec();
        a.sort_unstable_by(|x, y| y.cmp(x));
        b.sort_unstable_by(|x, y| y.cmp(x));
        let (mut w0, mut w1) = (0, 0);
        for k in 0..pairs {
            let zero_wins = a[k] > b[k] || (a[k] == b[k] && ties == 0);
            if zero_wins {
                w0 += 1;
            } else {
                w1 += 1;
            }
        }
        *ways.entry((w0, w1)).or_default() += 1;
        // next roll, as an odometer
        let mut i = 0;
        loop {
            if i == roll.len() {
                let mut list: Vec<_> = ways.into_iter().collect();
                list.sort_unstable();
                return (list, total);
            }
            if roll[i] < faces {
                roll[i] += 1;
                break;
            }
            roll[i] = 1;
            i += 1;
        }
    }
}

/// Ways to roll exactly `k` hits with `n` dice of `faces` faces hitting on `at_most` or
/// under, for every `k`; over `faces^n`.
fn hit_ways(n: i64, faces: u32, at_most: i64) -> Option<(Vec<u128>, u128)> {
    let f = u128::from(faces);
    let hit = at_most.clamp(0, i64::from(faces)) as u128;
    let miss = f - hit;
    let n = n.max(0) as u32;
    let mut ways = Vec::with_capacity(n as usize + 1);
    let mut choose: u128 = 1;
    for k in 0..=n {
        if k > 0 {
            choose = choose * u128::from(n - k + 1) / u128::from(k);
        }
        let w = choose
            .checked_mul(hit.checked_pow(k)?)?
            .checked_mul(miss.checked_pow(n - k)?)?;
        ways.push(w);
    }
    Some((ways, f.checked_pow(n)?))
}

/// The hit counts `n` dice of `faces` faces can give, hitting at or under `at_most`, each
/// weighing 1 (one way over 1: [`Chain::build_unweighted`]).
fn hit_counts(n: i64, faces: u32, at_most: i64) -> (Vec<u128>, u128) {
    let n = n.max(0) as usize;
    let counts = if at_most <= 0 {
        0..=0
    } else if at_most >= i64::from(faces) {
        n..=n
    } else {
        0..=n
    };
    let mut ways = vec![0; n + 1];
    ways[counts].iter_mut().for_each(|w| *w = 1);
    (ways, 1)
}

impl<'g, 'd> Stepper<'g, 'd> {
    pub fn enumerating(game: &'g Game, prepared: &'g Prepared) -> Self {
        Self {
            game,
            dice: None,
            overflow: false,
            compare: prepared,
            plan: std::borrow::Cow::Borrowed(&prepared.plan),
            read_rows: FxHashMap::default(),
            index: MergeIndex::default(),
            spare: Vec::new(),
            memo: FxHashMap::default(),
            afters: Vec::new(),
            after_ids: FxHashMap::default(),
            sum_index: Default::default(),
            buffers: MemoBuffers::default(),
            columns: Vec::new(),
            lists: Vec::new(),
            unit: false,
        }
    }

    pub fn drawing(game: &'g Game, prepared: &'g Prepared, dice: &'d mut DiceStream) -> Self {
        Self {
            game,
            dice: Some(dice),
            overflow: false,
            compare: prepared,
            plan: std::borrow::Cow::Owned(Plan::drawing(game)),
            read_rows: FxHashMap::default(),
            index: MergeIndex::default(),
            spare: Vec::new(),
            memo: FxHashMap::default(),
            afters: Vec::new(),
            after_ids: FxHashMap::default(),
            sum_index: Default::default(),
            buffers: MemoBuffers::default(),
            columns: Vec::new(),
            lists: Vec::new(),
            unit: false,
        }
    }

    /// Splits every branch by the outcomes `list` gives it (`(assignments, ways)` over
    /// `total`), or, drawing, follows one outcome.
    fn split<F>(&mut self, branches: Vec<Branch>, list: F) -> Vec<Branch>
    where
        F: Fn(&Branch) -> (Vec<(Vec<(usize, i64)>, u128)>, u128),
    {
        let mut out = Vec::with_capacity(branches.len());
        for b in branches {
            let (outcomes, total) = list(&b);
            if let Some(dice) = self.dice.as_deref_mut() {
                let mut r = below(dice, total);
                for (assign, ways) in &outcomes {
                    if r < *ways {
                        let mut next = b.clone();
                        for (slot, v) in assign {
                            next.frame[*slot] = *v;
                        }
                        out.push(next);
                        break;
                    }
                    r -= ways;
                }
                continue;
            }
            for (assign, ways) in &outcomes {
                if *ways == 0 {
                    continue;
                }
                let mut next = b.clone();
                for (slot, v) in assign {
                    next.frame[*slot] = *v;
                }
                let (ways, total) = if self.unit { (&1, 1) } else { (ways, total) };
                match scaled((b.num, b.den), *ways, total) {
                    Some((num, den)) => (next.num, next.den) = (num, den),
                    None => {
                        self.overflow = true;
                        return Vec::new();
                    }
                }
                out.push(next);
            }
        }
        out
    }

    /// The state slots of `frame` held to their counters' ranges.
    fn clamp_to_range(&self, slot: usize, value: i64) -> i64 {
        let (lo, hi) = self.game.layout.names[slot].2;
        value.clamp(lo, hi)
    }

    /// Applies one statement that rolls no table to `b`, in place.
    fn effect(&self, s: &Statement, b: &mut Branch) {
        match s {
            Statement::Set { target, value } => {
                let v = value.eval(&b.frame);
                b.frame[*target] = self.clamp_to_range(*target, v);
            }
            Statement::Lose { amount, order } => {
                let mut left = amount.eval(&b.frame).max(0);
                for slot in order {
                    let (lo, _) = self.game.layout.names[*slot].2;
                    let take = left.min(b.frame[*slot] - lo).max(0);
                    b.frame[*slot] -= take;
                    left -= take;
                }
            }
            Statement::End => b.ended = true,
            Statement::Outcome(k) => b.frame[self.game.layout.outcome] = *k as i64 + 1,
            Statement::Roll(_) => unreachable!("a roll branches: Stepper::statements"),
        }
    }

    /// Applies result `r`'s effects to `b`, and appends what comes of it to `out`.
    fn apply(&mut self, r: usize, mut b: Branch, out: &mut Vec<Branch>) {
        let game = self.game;
        if self.plan.rolls[r] {
            let applied = self.statements(&game.results[r].effects, vec![b]);
            out.extend(applied);
        } else {
            for s in &game.results[r].effects {
                self.effect(s, &mut b);
            }
            out.push(b);
        }
    }

    fn statements(&mut self, statements: &[Statement], mut branches: Vec<Branch>) -> Vec<Branch> {
        for s in statements {
            match s {
                Statement::Roll(name) => {
                    let t = self
                        .game
                        .tables
                        .iter()
                        .position(|t| t.name == *name)
                        .expect("checked when the file was read");
                    if !(self.plan.in_place[t] && self.look_up_in_place(t, &mut branches)) {
                        branches = self.table(t, branches);
                    }
                }
                // PERF: the commonest statement, read once for every branch.
                Statement::Set { target, value } => {
                    let (lo, hi) = self.game.layout.names[*target].2;
                    for b in branches.iter_mut() {
                        b.frame[*target] = value.eval(&b.frame).clamp(lo, hi);
                    }
                }
                other => branches.iter_mut().for_each(|b| self.effect(other, b)),
            }
            if self.overflow {
                return Vec::new();
            }
        }
        branches
    }

    /// PERF: table `t` (no dice, no result that rolls on a table) looked up by each
    /// branch in place, where every branch reads a column or every one is beyond the
    /// columns: the results [`Stepper::table_enumerated`] gives, in its order, with no
    /// branch made or moved (it puts the branches beyond the columns first). `false`, and
    /// nothing changed, where some are beyond and some are not.
    fn look_up_in_place(&mut self, t: usize, branches: &mut [Branch]) -> bool {
        let game = self.game;
        let table = &game.tables[t];
        let mut columns = std::mem::take(&mut self.columns);
        columns.clear();
        columns.extend(branches.iter().map(|b| column_of(table, &b.frame)));
        let beyond = columns.iter().filter(|c| c.is_err()).count();
        if beyond == 0 || beyond == columns.len() {
            let sum = table.sums[0].0;
            for (b, column) in branches.iter_mut().zip(&columns) {
                let result = match *column {
                    Err(result) => result,
                    Ok(_) => {
                        let modifier = table.modifier.as_ref().map_or(0, |m| m.eval(&b.frame));
                        b.frame[game.layout.modifier] = modifier;
                        b.frame[game.layout.roll] = sum;
                        result_in(game, table, &b.frame, modifier, *column)
                    }
                };
                for s in &game.results[result].effects {
                    self.effect(s, b);
                }
            }
        }
        self.columns = columns;
        beyond == 0 || beyond == branches.len()
    }

    /// Rolls on table `t` and applies the result, branch by branch: each branch's roll
    /// drawn here, every roll enumerated in [`Stepper::table_enumerated`].
    fn table(&mut self, t: usize, branches: Vec<Branch>) -> Vec<Branch> {
        if self.dice.is_none() {
            return self.table_enumerated(t, branches);
        }
        let game = self.game;
        let table = &game.tables[t];
        let roll_slot = game.layout.roll;
        let mut out = Vec::new();
        // Branches with an automatic result (beyond the columns) take it without a roll.
        let mut rolled = Vec::new();
        for b in branches {
            match column_of(table, &b.frame) {
                Err(result) => {
                    let applied = self.statements(&game.results[result].effects, vec![b]);
                    out.extend(applied);
                }
                Ok(_) => rolled.push(b),
            }
        }
        let sums = &table.sums;
        let total: u128 = sums.iter().map(|s| s.1).sum();
        let rolled = self.split(rolled, |_| {
            (
                sums.iter()
                    .map(|(s, w)| (vec![(roll_slot, *s)], *w))
                    .collect(),
                total,
            )
        });
        // Each branch's drawn roll, read and applied.
        for b in rolled {
            let mut b = b;
            let result = result_of(game, table, &mut b.frame);
            let applied = self.statements(&game.results[result].effects, vec![b]);
            out.extend(applied);
        }
        out
    }

    /// [`Stepper::table`] enumerating: every branch split by the rolls (grouped by result
    /// where the table allows), in the order the drawing path would meet them —
    /// branches beyond the columns first, then each rolled branch's pieces in turn.
    /// PERF: no list of outcomes is built per branch, and results that roll on no
    /// other table are applied in place.
    fn table_enumerated(&mut self, t: usize, branches: Vec<Branch>) -> Vec<Branch> {
        let game = self.game;
        let table = &game.tables[t];
        let roll_slot = game.layout.roll;
        let modifier_slot = game.layout.modifier;
        let mut out = Vec::with_capacity(branches.len() * 2);
        let mut rolled = Vec::with_capacity(branches.len());
        for b in branches {
            match column_of(table, &b.frame) {
                Err(result) => self.apply(result, b, &mut out),
                Ok(column) => rolled.push((b, column)),
            }
        }
        let sums = &table.sums;
        let total: u128 = sums.iter().map(|s| s.1).sum();
        let mut ways: Vec<Grouped> = Vec::with_capacity(sums.len());
        for (mut b, column) in rolled {
            if self.plan.grouped[t] {
                let modifier = table.modifier.as_ref().map_or(0, |m| m.eval(&b.frame));
                b.frame[modifier_slot] = modifier;
                let column = if self.plan.column_reads_modifier[t] {
                    column_of(table, &b.frame)
                } else {
                    Ok(column)
                };
                let key = (t, column.unwrap_or(usize::MAX), modifier);
                match self.read_rows.get(&key).filter(|_| self.plan.row_free[t]) {
                    Some(known) => {
                        ways.clear();
                        ways.extend_from_slice(known);
                    }
                    None => {
                        ways.clear();
                        for (sum, w) in sums {
                            b.frame[roll_slot] = *sum;
                            let result = result_in(game, table, &b.frame, modifier, column);
                            match ways.iter_mut().find(|x| x.0 == result) {
                                Some(x) => x.2 += w,
                                None => ways.push((result, *sum, *w)),
                            }
                        }
                        if self.plan.row_free[t] {
                            self.read_rows.insert(key, ways.clone());
                        }
                    }
                }
            } else {
                ways.clear();
                ways.extend(sums.iter().map(|(sum, w)| (usize::MAX, *sum, *w)));
            }
            // PERF: one outcome for certain (a table with no dice, or every roll giving
            // the same result) is applied to the branch itself.
            if let [(result, sum, w)] = ways[..] {
                if w == total {
                    self.take(t, b, result, sum, &mut out);
                    if self.overflow {
                        return Vec::new();
                    }
                    continue;
                }
            }
            for &(result, sum, w) in &ways {
                let (w, total) = if self.unit { (1, 1) } else { (w, total) };
                let Some(piece) = fork(&b, w, total, &mut self.spare) else {
                    self.overflow = true;
                    return Vec::new();
                };
                self.take(t, piece, result, sum, &mut out);
                if self.overflow {
                    return Vec::new();
                }
            }
        }
        out
    }

    /// One roll of table `t` on branch `b`: the natural `sum` set, its `result` read
    /// (`usize::MAX`: read here) and applied, into `out`.
    fn take(&mut self, t: usize, mut b: Branch, result: usize, sum: i64, out: &mut Vec<Branch>) {
        let game = self.game;
        b.frame[game.layout.roll] = sum;
        let result = if result == usize::MAX {
            result_of(game, &game.tables[t], &mut b.frame)
        } else {
            result
        };
        self.apply(result, b, out);
    }

    /// Every branch split by each side's option of every choice (enumerating, with the
    /// policy's exact weight), or one option drawn.
    fn choose(&mut self, mut branches: Vec<Branch>) -> Vec<Branch> {
        let game = self.game;
        for choice in &game.choices {
            for side in 0..2 {
                let (chosen, weights) = (choice.chosen[side], choice.weights[side].clone());
                if self.dice.is_none() {
                    // PERF: each option of the policy, its weight read from the frame.
                    let mut next = Vec::with_capacity(branches.len() * weights.len());
                    for b in &branches {
                        let w = &b.frame[weights.clone()];
                        let total: u128 = w.iter().map(|x| *x as u128).sum::<u128>().max(1);
                        for (k, x) in w.iter().enumerate() {
                            if *x == 0 {
                                continue;
                            }
                            let (x, total) = if self.unit {
                                (1, 1)
                            } else {
                                (*x as u128, total)
                            };
                            let Some(mut piece) = fork(b, x, total, &mut self.spare) else {
                                self.overflow = true;
                                return Vec::new();
                            };
                            piece.frame[chosen] = k as i64;
                            next.push(piece);
                        }
                    }
                    branches = next;
                    continue;
                }
                branches = self.split(branches, |b| {
                    let w = &b.frame[weights.clone()];
                    let total: u128 = w.iter().map(|x| *x as u128).sum();
                    (
                        w.iter()
                            .enumerate()
                            .map(|(k, x)| (vec![(chosen, k as i64)], *x as u128))
                            .collect(),
                        total.max(1),
                    )
                });
                if self.overflow {
                    return Vec::new();
                }
            }
        }
        branches
    }

    /// Phase `p` played on `branches` (the options chosen first where the phase is the
    /// first to read them); enumerating, what the rest of the round never reads is then
    /// cleared and the branches merged. Where the phase's ways follow from a few values
    /// ([`Remembered`]), they are worked out once and taken from [`Stepper::memo`].
    fn phase(&mut self, p: usize, branches: Vec<Branch>) -> Vec<Branch> {
        if self.plan.memo_plan[p].is_none() {
            return self.phase_played(p, branches);
        }
        let game = self.game;
        let phase = &game.phases[p];
        let plan = self.plan.memo_plan[p].as_ref().expect("checked");
        // The options chosen in this phase: a lone branch only (more would come out
        // branch by branch, where playing them puts those that skip the phase last).
        if p == self.plan.choices_at && p > 0 && !matches!(&branches[..], [b] if !b.ended) {
            return self.phase_played(p, branches);
        }
        let plays =
            |b: &Branch| !b.ended && phase.when.as_ref().is_none_or(|w| w.eval(&b.frame) != 0);
        let (mut live, mut done) = partition_playing(branches, plays, &mut self.lists);
        // Each live branch's key: the column and modifier where the table reads the state.
        let mut buffers = std::mem::take(&mut self.buffers);
        let keys = &mut buffers.keys;
        keys.clear();
        let mut beyond = 0;
        for b in &mut live {
            b.frame[game.layout.temps.clone()]
                .iter_mut()
                .for_each(|v| *v = 0);
            let key = &mut *keys;
            key.push(p as i64);
            if let PhaseKind::Table(t) = &phase.kind {
                let table = &game.tables[*t];
                let column = column_of(table, &b.frame);
                beyond += usize::from(column.is_err());
                if plan.by_roll {
                    let modifier = table.modifier.as_ref().map_or(0, |m| m.eval(&b.frame));
                    key.push(match column {
                        Ok(c) => c as i64,
                        Err(r) => -1 - r as i64,
                    });
                    key.push(modifier);
                }
            }
            key.extend(plan.key.iter().map(|s| b.frame[*s]));
        }
        // Every key has the same length (none where no branch plays the phase).
        let stride = (keys.len() / live.len().max(1)).max(1);
        // Played branch by branch, branches beyond a table's columns come first, and a
        // table rolled in the effects reorders them so too: there the phase is played
        // unless one branch plays it.
        if live.len() > 1 && (plan.lone || (beyond > 0 && beyond < live.len())) {
            self.buffers = buffers;
            live.extend(done);
            return self.phase_played(p, live);
        }
        // Every live branch's ways, worked out where the memo has none yet.
        for (b, key) in live.iter().zip(keys.chunks_exact(stride)) {
            if self.memo.contains_key(key) {
                continue;
            }
            let unit = Branch {
                frame: b.frame.clone(),
                num: 1,
                den: 1,
                ended: false,
            };
            let ways = self.phase_played(p, vec![unit]);
            if self.overflow {
                // The chain is not built: nothing is kept.
                return Vec::new();
            }
            let plan = self.plan.memo_plan[p].as_ref().expect("checked");
            let mut entries = Vec::with_capacity(ways.len());
            for w in ways {
                let after: Vec<i64> = plan.after.iter().map(|s| w.frame[*s]).collect();
                let next = self.afters.len() as u32;
                let id = *self
                    .after_ids
                    .entry((after.clone(), w.ended))
                    .or_insert(next);
                if id == next {
                    self.afters.push((after, w.ended));
                }
                entries.push((id, w.num, w.den));
                keep(&mut self.spare, w.frame);
            }
            self.memo.insert(key.to_vec(), entries);
        }
        // PERF: the pieces are summed before any is made. Branches alike but for what the
        // phase sets (its `after` slots) are one group; a group's pieces with the same
        // values after the phase are one branch, in the order the pieces first come —
        // as playing the phase and merging would give them, without a frame per piece.
        let plan = self.plan.memo_plan[p].as_ref().expect("checked");
        let varying = game.layout.state.start;
        let (groups, at) = &mut self.sum_index;
        groups.clear();
        at.clear();
        let MemoBuffers {
            keys,
            group_of,
            firsts,
            sums,
        } = &mut buffers;
        group_of.clear();
        firsts.clear();
        sums.clear();
        for (i, b) in live.iter().enumerate() {
            let hash = {
                use std::hash::Hasher;
                let mut h = rustc_hash::FxHasher::default();
                plan.rest[varying..]
                    .iter()
                    .for_each(|s| h.write_i64(b.frame[*s]));
                h.finish()
            };
            let next = firsts.len() as u32;
            let g = *groups.entry(hash).or_insert(next);
            if g == next {
                firsts.push(i);
            } else if plan.rest[varying..]
                .iter()
                .any(|s| b.frame[*s] != live[firsts[g as usize]].frame[*s])
            {
                // Two groups with one hash (not met in practice): played instead.
                self.buffers = buffers;
                live.extend(done);
                return self.phase_played(p, live);
            }
            group_of.push(g);
        }
        for ((b, key), g) in live
            .iter()
            .zip(keys.chunks_exact(stride))
            .zip(group_of.iter())
        {
            for &(id, num, den) in &self.memo[key] {
                let Some(w) = times((b.num, b.den), (num, den)) else {
                    self.overflow = true;
                    return Vec::new();
                };
                match at.get(&(*g, id)) {
                    Some(&k) => {
                        let Some(sum) = plus((sums[k].2, sums[k].3), w) else {
                            self.overflow = true;
                            return Vec::new();
                        };
                        (sums[k].2, sums[k].3) = sum;
                    }
                    None => {
                        at.insert((*g, id), sums.len());
                        sums.push((*g, id, w.0, w.1));
                    }
                }
            }
        }
        let mut out = take_list(&mut self.lists, sums.len() + done.len());
        for &(g, id, num, den) in sums.iter() {
            let first = &live[firsts[g as usize]];
            let mut frame = self.spare.pop().unwrap_or_default();
            frame.clear();
            frame.extend_from_slice(&first.frame);
            let (after, ended) = &self.afters[id as usize];
            for (s, v) in plan.after.iter().zip(after) {
                frame[*s] = *v;
            }
            out.push(Branch {
                frame,
                num,
                den,
                ended: *ended,
            });
        }
        self.buffers = buffers;
        for b in live.drain(..) {
            keep(&mut self.spare, b.frame);
        }
        give_list(&mut self.lists, live);
        if done.is_empty() {
            return out;
        }
        // What the rest of the round never reads is cleared (the live branches' already
        // is), and the branches merged.
        for b in &mut done {
            for s in &self.plan.unread[p] {
                b.frame[*s] = 0;
            }
        }
        out.append(&mut done);
        give_list(&mut self.lists, done);
        merge(
            out,
            Some(&game.layout.temps),
            game.layout.state.start,
            &mut self.index,
            &mut self.spare,
            &mut self.lists,
            &mut self.overflow,
        )
    }

    /// [`Stepper::phase`], played branch by branch.
    fn phase_played(&mut self, p: usize, mut branches: Vec<Branch>) -> Vec<Branch> {
        let game = self.game;
        let phase = &game.phases[p];
        let temps = game.layout.temps.clone();
        if p == self.plan.choices_at && p > 0 {
            branches = self.choose(branches);
            if self.overflow {
                return Vec::new();
            }
        }
        let before = branches.len();
        for b in &mut branches {
            b.frame[temps.clone()].iter_mut().for_each(|v| *v = 0);
        }
        // Branches already ended skip the rest of the round.
        let plays =
            |b: &Branch| !b.ended && phase.when.as_ref().is_none_or(|w| w.eval(&b.frame) != 0);
        let (mut live, mut done) = partition_playing(branches, plays, &mut self.lists);
        live = match &phase.kind {
            PhaseKind::Table(t) => self.table(*t, live),
            PhaseKind::Count(pools) => {
                let unit = self.unit;
                for pool in pools {
                    let faces = pool.faces;
                    let overflow = std::cell::Cell::new(false);
                    live = self.split(live, |b| {
                        let n = pool
                            .dice
                            .eval(&b.frame)
                            .clamp(0, crate::systems::rules_file::game::MAX_POOL_DICE);
                        let at_most = pool.hits_at_most.eval(&b.frame);
                        let base = b.frame[pool.into];
                        let counted = if unit {
                            Some(hit_counts(n, faces, at_most))
                        } else {
                            hit_ways(n, faces, at_most)
                        };
                        match counted {
                            Some((ways, total)) => (
                                ways.iter()
                                    .enumerate()
                                    .map(|(k, w)| (vec![(pool.into, base + k as i64)], *w))
                                    .collect(),
                                total,
                            ),
                            None => {
                                overflow.set(true);
                                (vec![(Vec::new(), 1)], 1)
                            }
                        }
                    });
                    if overflow.get() {
                        self.overflow = true;
                    }
                    if self.dice.is_none() {
                        // Hits counted so far: equal counts are one branch.
                        live = merge(
                            live,
                            None,
                            game.layout.state.start,
                            &mut self.index,
                            &mut self.spare,
                            &mut self.lists,
                            &mut self.overflow,
                        );
                    }
                }
                live
            }
            PhaseKind::Compare { dice, won, .. } => {
                let cache = self.compare;
                self.split(live, |b| {
                    let n0 = dice[0].eval(&b.frame).max(0);
                    let n1 = dice[1].eval(&b.frame).max(0);
                    let (list, total) = &cache.lists[&(p, n0, n1)];
                    (
                        list.iter()
                            .map(|((w0, w1), ways)| (vec![(won[0], *w0), (won[1], *w1)], *ways))
                            .collect(),
                        *total,
                    )
                })
            }
            PhaseKind::Effects => live,
        };
        if self.overflow {
            return Vec::new();
        }
        live = self.statements(&phase.effects, live);
        if self.overflow {
            return Vec::new();
        }
        branches = live;
        branches.append(&mut done);
        give_list(&mut self.lists, done);
        if self.dice.is_none() {
            // PERF: what the rest of the round never reads cleared, so more merge.
            let mut cleared = false;
            for b in &mut branches {
                for s in &self.plan.unread[p] {
                    cleared |= b.frame[*s] != 0;
                    b.frame[*s] = 0;
                }
            }
            // Distinct branches that neither split nor lost a value stay distinct
            // (as far as merging can tell cheaply): the merge is skipped. Merging is
            // only a saving — the chain sums equal next states itself — and after the
            // last phase none (PERF: a tenth of building a field battle's chain): the
            // round's ways go to the chain as they are, where each is summed into its
            // next state's transition (each state first met where the merged way would
            // be), and [`Stepper::round`] merges them.
            let last = p + 1 == game.phases.len();
            if (cleared || branches.len() > before) && !last {
                branches = merge(
                    branches,
                    Some(&temps),
                    game.layout.state.start,
                    &mut self.index,
                    &mut self.spare,
                    &mut self.lists,
                    &mut self.overflow,
                );
            } else {
                for b in &mut branches {
                    b.frame[temps.clone()].iter_mut().for_each(|v| *v = 0);
                }
            }
        }
        branches
    }

    /// Every way one round from `state` (the state slots' values) can go, merged by the
    /// state it ends in: `(next state, ended, num, den)`, each weight in lowest terms.
    /// Drawing: one way.
    pub fn round(&mut self, start_frame: &[i64]) -> Vec<Next> {
        let mut ways = Ways::default();
        self.round_into(start_frame, &mut ways);
        let width = self.game.layout.state.len();
        let mut out: Vec<Next> = Vec::with_capacity(ways.ends.len());
        for (i, &(ended, num, den)) in ways.ends.iter().enumerate() {
            let state = &ways.states[i * width..(i + 1) * width];
            match out.iter_mut().find(|n| n.1 == ended && n.0 == state) {
                Some(n) => match plus_lowest((n.2, n.3), (num, den)) {
                    Some(sum) => (n.2, n.3) = sum,
                    None => {
                        self.overflow = true;
                        return Vec::new();
                    }
                },
                None => out.push((state.to_vec(), ended, num, den)),
            }
        }
        out
    }

    /// [`Stepper::round`] unmerged (two ways may lead to one state), the ways appended to
    /// `out` (nothing where a weight is past 128 bits: [`Stepper::overflow`]).
    pub fn round_into(&mut self, start_frame: &[i64], out: &mut Ways) {
        let game = self.game;
        let temps = game.layout.temps.clone();
        let mut frame = self.spare.pop().unwrap_or_default();
        frame.clear();
        frame.extend_from_slice(start_frame);
        let mut branches = take_list(&mut self.lists, 1);
        branches.push(Branch {
            frame,
            num: 1,
            den: 1,
            ended: false,
        });
        // What the round works with starts at 0 (a frame may carry a finished round's).
        branches[0].frame[game.layout.scratch.clone()]
            .iter_mut()
            .for_each(|v| *v = 0);
        // Each side chooses: one branch per option its policy weighs (enumerating, with
        // the policy's exact weight), or one option drawn. Enumerating, the split waits
        // for the first phase that reads a choice ([`choices_at`]).
        if self.plan.choices_at == 0 {
            branches = self.choose(branches);
            if self.overflow {
                return;
            }
        }
        for p in 0..game.phases.len() {
            branches = self.phase(p, branches);
            if self.overflow {
                return;
            }
        }
        // The round ends: the round number advances, the temporaries are cleared.
        let state = game.layout.state.clone();
        let round = game.layout.round;
        for mut b in branches.drain(..) {
            b.frame[temps.clone()].iter_mut().for_each(|v| *v = 0);
            let cap = b.frame[game.layout.cap];
            if cap > 0 {
                b.frame[round] = (b.frame[round] + 1).min(cap);
            }
            let (num, den) = lowest((b.num, b.den));
            out.states.extend_from_slice(&b.frame[state.clone()]);
            out.ends.push((b.ended, num, den));
            keep(&mut self.spare, b.frame);
        }
        give_list(&mut self.lists, branches);
    }
}

/// Where rounds can end ([`Stepper::round_into`]), one way after another: each next
/// state's values (as many as the state slots, one state after another in `states`), and
/// in `ends` whether an effect ended the battle and the weight `num / den`, in lowest
/// terms. PERF: one buffer for every way of every round stepped (a vector per way was a
/// twentieth of building a field battle's chain).
#[derive(Default)]
pub struct Ways {
    pub states: Vec<i64>,
    pub ends: Vec<(bool, u128, u128)>,
}

/// A grouped roll's result: `(result, the first sum giving it, ways)`.
type Grouped = (usize, i64, u128);

/// [`merge`]'s index, kept by the stepper so that each merge reuses its memory.
type MergeIndex = (FxHashMap<u64, usize>, Vec<usize>);

/// Merges branches that hold the same frame (temporaries cleared) and end flag (none,
/// and `overflow` set, where a sum is past 128 bits). Only the
/// frame from `varying` on can differ (parameters and policies stay as the run set them),
/// so only that part is compared.
fn merge(
    mut branches: Vec<Branch>,
    clear: Option<&std::ops::Range<usize>>,
    varying: usize,
    (heads, same): &mut MergeIndex,
    spare: &mut Vec<Vec<i64>>,
    lists: &mut Vec<Vec<Branch>>,
    overflow: &mut bool,
) -> Vec<Branch> {
    // PERF: hashing whole frames with SipHash was a quarter of building a field battle's
    // chain; the varying part with FxHash is a few words. The map holds the hash only
    // (no key copied per branch): `same[i]` links the branches kept with equal hashes.
    // The map and links are reused from merge to merge.
    const NONE: usize = usize::MAX;
    if let ([b], Some(temps)) = (&mut branches[..], clear) {
        b.frame[temps.clone()].iter_mut().for_each(|v| *v = 0);
    }
    if branches.len() < 2 {
        return branches;
    }
    heads.clear();
    same.clear();
    let mut out: Vec<Branch> = take_list(lists, branches.len());
    for mut b in branches.drain(..) {
        if let Some(temps) = clear {
            b.frame[temps.clone()].iter_mut().for_each(|v| *v = 0);
        }
        let hash = {
            use std::hash::{Hash, Hasher};
            let mut h = rustc_hash::FxHasher::default();
            b.frame[varying..].hash(&mut h);
            b.ended.hash(&mut h);
            h.finish()
        };
        let mut at = heads.get(&hash).copied().unwrap_or(NONE);
        while at != NONE
            && (out[at].ended != b.ended || out[at].frame[varying..] != b.frame[varying..])
        {
            at = same[at];
        }
        match (at != NONE).then_some(at) {
            Some(i) => {
                let o = &mut out[i];
                match plus((o.num, o.den), (b.num, b.den)) {
                    Some(sum) => (o.num, o.den) = sum,
                    None => {
                        *overflow = true;
                        return Vec::new();
                    }
                }
                keep(spare, b.frame);
            }
            None => {
                same.push(heads.insert(hash, out.len()).unwrap_or(NONE));
                out.push(b);
            }
        }
    }
    give_list(lists, branches);
    out
}

/// The column table `t` is read in, or the result it gives with no roll (beyond its
/// columns' edges).
pub fn column_of(t: &Table, frame: &[i64]) -> Result<usize, usize> {
    let n = t.labels.len() as i64;
    let base: i64 = match &t.columns {
        ColumnPick::Odds {
            attacker,
            defender,
            ratios,
            round_up,
            nearest,
        } => {
            let (a, d) = (
                i128::from(attacker.eval(frame).max(0)),
                i128::from(defender.eval(frame).max(0)),
            );
            // a : d against p : q, compared as a·q against p·d. A defender of 0 (0 against
            // 0 too) is above every column, whatever the rounding: rounding down reads
            // the last, up or to the nearest reads beyond it.
            let at_or_over = |&(p, q): &(u32, u32)| a * i128::from(q) >= i128::from(p) * d;
            if d == 0 && (*nearest || *round_up) {
                n
            } else if *nearest {
                // Under the first ratio or over the last: the edges. Between: one column
                // up for each midpoint of two neighbours reached (halfway reads higher).
                let (p0, q0) = ratios[0];
                let (pn, qn) = ratios[ratios.len() - 1];
                if a * i128::from(q0) < i128::from(p0) * d {
                    -1
                } else if a * i128::from(qn) > i128::from(pn) * d {
                    n
                } else {
                    ratios
                        .windows(2)
                        .filter(|w| {
                            let ((p1, q1), (p2, q2)) = (
                                (i128::from(w[0].0), i128::from(w[0].1)),
                                (i128::from(w[1].0), i128::from(w[1].1)),
                            );
                            // a/d ≥ (p1/q1 + p2/q2) / 2
                            a * 2 * q1 * q2 >= d * (p1 * q2 + p2 * q1)
                        })
                        .count() as i64
                }
            } else if *round_up {
                let at_or_under = |&(p, q): &(u32, u32)| a * i128::from(q) <= i128::from(p) * d;
                ratios.iter().position(at_or_under).map_or(n, |i| i as i64)
            } else {
                ratios.iter().rposition(at_or_over).map_or(-1, |i| i as i64)
            }
        }
        ColumnPick::AtLeast { value, bounds } => {
            let v = value.eval(frame);
            bounds
                .iter()
                .rposition(|b| v >= *b)
                .map_or(-1, |i| i as i64)
        }
        ColumnPick::Index { value } => value.eval(frame),
    };
    let shifted = base.saturating_add(t.shift.as_ref().map_or(0, |s| s.eval(frame)));
    if shifted < 0 {
        match t.below {
            Edge::Result(r) => Err(r),
            Edge::Clamp => Ok(0),
        }
    } else if shifted >= n {
        match t.above {
            Edge::Result(r) => Err(r),
            Edge::Clamp => Ok(n as usize - 1),
        }
    } else {
        Ok(shifted as usize)
    }
}

/// The result of table `t` with the natural roll in the frame's `roll` slot: natural
/// results first, then the modified roll's row in the column. Sets `modifier`.
pub fn result_of(game: &Game, t: &Table, frame: &mut [i64]) -> usize {
    let modifier = t.modifier.as_ref().map_or(0, |m| m.eval(frame));
    frame[game.layout.modifier] = modifier;
    result_in(game, t, frame, modifier, column_of(t, frame))
}

/// What a natural roll reads on a table once modified: a natural result (whatever the
/// column), a row of every column, or a result beyond the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowRead {
    Natural(usize),
    Row(usize),
    Beyond(usize),
}

/// Table `t` as modified in `frame` (the modifier and row formulas read there): for each
/// natural sum, what it reads. `tables.md` prints a table "as modified" from this.
pub fn rows_read(game: &Game, t: &Table, frame: &[i64]) -> Vec<(i64, RowRead)> {
    let mut frame = frame.to_vec();
    let modifier = t.modifier.as_ref().map_or(0, |m| m.eval(&frame));
    frame[game.layout.modifier] = modifier;
    t.sums
        .iter()
        .map(|(sum, _)| {
            frame[game.layout.roll] = *sum;
            (*sum, row_read(game, t, &frame, modifier))
        })
        .collect()
}

/// What the natural roll in the frame's `roll` slot reads on table `t` with `modifier`.
fn row_read(game: &Game, t: &Table, frame: &[i64], modifier: i64) -> RowRead {
    let roll = frame[game.layout.roll];
    if let Some((_, r)) = t.natural.iter().find(|(n, _)| *n == roll) {
        return RowRead::Natural(*r);
    }
    let row = t
        .row
        .as_ref()
        .map_or_else(|| roll.saturating_add(modifier), |r| r.eval(frame));
    let (from, to) = t.rows;
    if row < from {
        match t.below_rows {
            Edge::Result(r) => RowRead::Beyond(r),
            Edge::Clamp => RowRead::Row(0),
        }
    } else if row > to {
        match t.above_rows {
            Edge::Result(r) => RowRead::Beyond(r),
            Edge::Clamp => RowRead::Row((to - from) as usize),
        }
    } else {
        RowRead::Row((row - from) as usize)
    }
}

/// [`result_of`] with the modifier (set in the frame) and the column already read.
fn result_in(
    game: &Game,
    t: &Table,
    frame: &[i64],
    modifier: i64,
    column: Result<usize, usize>,
) -> usize {
    match (row_read(game, t, frame, modifier), column) {
        (RowRead::Natural(r), _) | (_, Err(r)) | (RowRead::Beyond(r), _) => r,
        (RowRead::Row(index), Ok(c)) => t.cells[c][index],
    }
}

/// The battle's chain from one start: every reachable state, its transitions with
/// integer weights, and which states end the battle.
#[derive(Clone, Debug)]
pub struct Chain {
    /// State slots' values of each state.
    pub states: States,
    pub terminal: Vec<bool>,
    /// Transitions of state `s`: `edges[offsets[s]..offsets[s + 1]]` as (next, ways), ways
    /// over `totals[s]`.
    pub offsets: Vec<usize>,
    pub edges: Vec<(u32, u128)>,
    pub totals: Vec<u128>,
}

/// The values of a chain's states, one state after another in one buffer (PERF: a
/// vector per state, allocated and freed, with the stepper's lists of branches
/// ([`Stepper`]) a twenty-eighth of building a field battle's chain). `states[s]` is
/// state `s`'s values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct States {
    values: Vec<i64>,
    width: usize,
    len: usize,
}

impl States {
    /// No states, each of `width` values.
    pub fn new(width: usize) -> Self {
        Self {
            values: Vec::new(),
            width,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a state (`values` as many as the width).
    pub fn push(&mut self, values: &[i64]) {
        debug_assert_eq!(values.len(), self.width);
        self.values.extend_from_slice(values);
        self.len += 1;
    }

    /// Each state's values, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[i64]> {
        (0..self.len).map(move |s| &self[s])
    }
}

impl std::ops::Index<usize> for States {
    type Output = [i64];

    fn index(&self, s: usize) -> &[i64] {
        &self.values[s * self.width..(s + 1) * self.width]
    }
}

/// The chain's states found by their values and end flag, with no copy of either kept
/// (PERF: a copy per state was a twentieth of building a field battle's chain): the map
/// holds a hash's latest state, and `same[id]` the state before it with the same hash.
#[derive(Default)]
struct StateIndex {
    heads: FxHashMap<u64, u32>,
    same: Vec<u32>,
}

impl StateIndex {
    const NONE: u32 = u32::MAX;

    fn hash(state: &[i64], terminal: bool) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        state.hash(&mut h);
        terminal.hash(&mut h);
        h.finish()
    }

    /// The state of `chain` with these values and end flag, if it has one.
    fn find(&self, chain: &Chain, hash: u64, state: &[i64], terminal: bool) -> Option<u32> {
        let mut at = self.heads.get(&hash).copied().unwrap_or(Self::NONE);
        while at != Self::NONE {
            let i = at as usize;
            if chain.terminal[i] == terminal && &chain.states[i] == state {
                return Some(at);
            }
            at = self.same[i];
        }
        None
    }

    /// Adds state `id` (the next one), of hash `hash`.
    fn insert(&mut self, hash: u64, id: u32) {
        debug_assert_eq!(id as usize, self.same.len());
        self.same
            .push(self.heads.insert(hash, id).unwrap_or(Self::NONE));
    }
}

/// Why a chain was not built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TooLarge {
    States,
    Transitions,
    Weights,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TooLarge::States => write!(f, "more than {MAX_STATES} reachable states"),
            TooLarge::Transitions => write!(f, "more than {MAX_TRANSITIONS} transitions"),
            TooLarge::Weights => f.write_str("a round whose dice give weights beyond 128 bits"),
        }
    }
}

/// The frame of a state: the run's parameters with the state's slots.
pub fn frame_of(game: &Game, base: &[i64], state: &[i64]) -> Vec<i64> {
    let mut frame = base.to_vec();
    frame[game.layout.state.clone()].copy_from_slice(state);
    frame
}

/// Whether the battle is over in `frame` but for the round limit: an effect ended it
/// (`ended`), or `battle.end` holds.
fn ends(game: &Game, frame: &[i64], ended: bool) -> bool {
    ended || game.end.as_ref().is_some_and(|e| e.eval(frame) != 0)
}

/// Whether the battle is over in `frame` after a round (or at the start).
pub fn over(game: &Game, frame: &[i64], ended: bool) -> bool {
    ends(game, frame, ended)
        || game
            .round_limit_of(frame)
            .is_some_and(|l| frame[game.layout.round] >= l)
}

impl Chain {
    /// Builds the chain from the frame `base` (parameters and start counters).
    pub fn build(game: &Game, compare: &Prepared, base: &[i64]) -> Result<Chain, TooLarge> {
        Self::build_with(game, compare, base, true, true, false)
    }

    /// The chain's states and which way leads where, every way that can happen weighing
    /// 1 — whether the battle always ends ([`Chain::endless`]) where its weights would
    /// outgrow 128 bits ([`TooLarge::Weights`]) and [`Chain::build`] gives up. Its
    /// weights are no probabilities.
    pub fn build_unweighted(
        game: &Game,
        compare: &Prepared,
        base: &[i64],
    ) -> Result<Chain, TooLarge> {
        Self::build_with(game, compare, base, true, true, true)
    }

    /// [`Chain::build`], with a table's rolls grouped by result where they can be
    /// (`group`) or taken roll by roll, and phases remembered and the options chosen late
    /// where they can be (`remember`) or every phase played as written: the same chain,
    /// state for state, either way (held by a test).
    fn build_with(
        game: &Game,
        compare: &Prepared,
        base: &[i64],
        group: bool,
        remember: bool,
        unit: bool,
    ) -> Result<Chain, TooLarge> {
        // PERF: the run's parameters and policies folded into the rules' expressions.
        let folded = game.folded(base);
        let game = &folded;
        let start: Vec<i64> = base[game.layout.state.clone()].to_vec();
        // A state's values, then 1 where the battle is over in it.
        let mut index = StateIndex::default();
        let start_over = over(game, base, false);
        let mut chain = Chain {
            states: States::new(start.len()),
            terminal: vec![start_over],
            offsets: vec![0],
            edges: Vec::new(),
            totals: Vec::new(),
        };
        chain.states.push(&start);
        index.insert(StateIndex::hash(&chain.states[0], start_over), 0);
        let mut stepper = Stepper::enumerating(game, compare);
        stepper.unit = unit;
        if !group {
            stepper
                .plan
                .to_mut()
                .grouped
                .iter_mut()
                .for_each(|g| *g = false);
            stepper
                .plan
                .to_mut()
                .in_place
                .iter_mut()
                .for_each(|x| *x = false);
        }
        if !remember {
            stepper
                .plan
                .to_mut()
                .memo_plan
                .iter_mut()
                .for_each(|m| *m = None);
            stepper.plan.to_mut().choices_at = 0;
        }
        // Where no rule reads the round, a round from a state goes the same way whatever
        // its round (but the round it leads to): it is stepped once per state with the
        // round set to 0, and the rounds filled in (`round + 1`, held to the cap).
        let round_at = (!game.round_read && game.layout.state.contains(&game.layout.round))
            .then(|| game.layout.round - game.layout.state.start);
        let cap = base[game.layout.cap];
        // PERF: one frame and one state buffer reused for every state (allocating them
        // per state and per next state was a fifth of building a field battle's chain).
        // The ways of every round stepped are kept in one buffer (`stepped` holds each
        // stepped state's range of it) where rounds are stepped once per state; else the
        // buffer holds one round's.
        let mut stepped: FxHashMap<Vec<i64>, (usize, usize)> = FxHashMap::default();
        let width = game.layout.state.len();
        // PERF: room from the start for the ways of a few hundred rounds and the states
        // and transitions they find (grown by doubling from nothing, the buffers were
        // copied over and over: with kept lists of branches grown in place, a thirtieth of
        // the instructions building a field battle's chain took).
        let mut ways = Ways::default();
        ways.states.reserve(ROOM * width);
        ways.ends.reserve(ROOM);
        chain.states.values.reserve(ROOM * width);
        chain.edges.reserve(ROOM);
        // Where neither the rounds nor the end read the round, whether a way ends the
        // battle but for the round limit is read once per way kept (`None`: not yet).
        let end_reads_round = game.end.as_ref().is_some_and(|e| {
            let mut read = Vec::new();
            e.slots(&mut read);
            read.contains(&game.layout.round)
        });
        let mut ends_now: Vec<Option<bool>> = Vec::new();
        let limit = game.round_limit_of(base);
        let mut frame = base.to_vec();
        let mut key: Vec<i64> = Vec::new();
        let mut edges: Vec<(u32, u128)> = Vec::new();
        let mut sums: Vec<(u32, (u128, u128))> = Vec::new();
        let states = game.layout.state.clone();
        let mut s = 0;
        while s < chain.states.len() {
            if chain.terminal[s] {
                chain.totals.push(1);
                chain.offsets.push(chain.edges.len());
                s += 1;
                continue;
            }
            key.clear();
            key.extend_from_slice(&chain.states[s]);
            // The round it leads to, where the round is filled in.
            let mut next_round = None;
            if let Some(r) = round_at {
                let round = key[r];
                key[r] = 0;
                next_round = (cap > 0).then(|| (r, (round + 1).min(cap)));
            }
            let (from, to) = match (round_at, stepped.get(&key)) {
                (Some(_), Some(&range)) => range,
                _ => {
                    if round_at.is_none() {
                        ways.states.clear();
                        ways.ends.clear();
                        ends_now.clear();
                    }
                    let from = ways.ends.len();
                    frame[states.clone()].copy_from_slice(&key);
                    stepper.round_into(&frame, &mut ways);
                    if stepper.overflow {
                        return Err(TooLarge::Weights);
                    }
                    ends_now.resize(ways.ends.len(), None);
                    if round_at.is_some() {
                        stepped.insert(key.clone(), (from, ways.ends.len()));
                    }
                    (from, ways.ends.len())
                }
            };
            // The ways over one denominator, where one fits 128 bits; else each next
            // state's weight is summed as a fraction first (the same transitions: in
            // lowest terms they are the same whatever the denominator).
            let common = ways.ends[from..to]
                .iter()
                .try_fold(1u128, |acc, n| lcm(acc, n.2));
            edges.clear();
            sums.clear();
            let known = ends_now[from..to].iter_mut();
            for (w, (&(ended, num, d), known)) in
                (from..).zip(ways.ends[from..to].iter().zip(known))
            {
                key.clear();
                key.extend_from_slice(&ways.states[w * width..(w + 1) * width]);
                if let Some((r, round)) = next_round {
                    key[r] = round;
                }
                frame[states.clone()].copy_from_slice(&key);
                let terminal = if round_at.is_some() && !end_reads_round {
                    // The same whatever the round, but for the limit.
                    let now = *known.get_or_insert_with(|| ends(game, &frame, ended));
                    now || limit.is_some_and(|l| frame[game.layout.round] >= l)
                } else {
                    over(game, &frame, ended)
                };
                let hash = StateIndex::hash(&key, terminal);
                let id = match index.find(&chain, hash, &key, terminal) {
                    Some(id) => id,
                    None => {
                        if chain.states.len() >= MAX_STATES {
                            return Err(TooLarge::States);
                        }
                        let id = chain.states.len() as u32;
                        chain.states.push(&key);
                        chain.terminal.push(terminal);
                        index.insert(hash, id);
                        id
                    }
                };
                if let Some(den) = common {
                    let weight = num
                        .checked_mul(exact_div(den, d))
                        .ok_or(TooLarge::Weights)?;
                    match edges.iter_mut().find(|e| e.0 == id) {
                        Some(e) => e.1 += weight,
                        None => edges.push((id, weight)),
                    }
                    continue;
                }
                match sums.iter_mut().find(|e| e.0 == id) {
                    Some(e) => e.1 = plus(e.1, (num, d)).ok_or(TooLarge::Weights)?,
                    None => sums.push((id, (num, d))),
                }
            }
            let den = match common {
                Some(den) => den,
                None => {
                    // Over the sums' least common denominator.
                    sums.iter_mut().for_each(|e| e.1 = lowest(e.1));
                    let den = sums
                        .iter()
                        .try_fold(1u128, |acc, e| lcm(acc, e.1 .1))
                        .ok_or(TooLarge::Weights)?;
                    for &(id, (num, d)) in &sums {
                        let weight = num
                            .checked_mul(exact_div(den, d))
                            .ok_or(TooLarge::Weights)?;
                        edges.push((id, weight));
                    }
                    den
                }
            };
            // Lowest terms, so draws use the fewest bits.
            let g = edges.iter().fold(den, |g, e| gcd(g, e.1));
            edges.iter_mut().for_each(|e| e.1 = exact_div(e.1, g));
            edges.sort_unstable_by_key(|e| e.0);
            chain.totals.push(exact_div(den, g));
            chain.edges.extend_from_slice(&edges);
            if chain.edges.len() > MAX_TRANSITIONS {
                return Err(TooLarge::Transitions);
            }
            chain.offsets.push(chain.edges.len());
            s += 1;
        }
        Ok(chain)
    }

    pub fn transitions(&self, s: usize) -> &[(u32, u128)] {
        &self.edges[self.offsets[s]..self.offsets[s + 1]]
    }

    /// A state from which no end can be reached, if any (a battle that could go on
    /// for ever).
    pub fn endless(&self) -> Option<usize> {
        let n = self.states.len();
        let mut reaches = self.terminal.clone();
        let mut into: Vec<Vec<u32>> = vec![Vec::new(); n];
        for s in 0..n {
            for (t, _) in self.transitions(s) {
                into[*t as usize].push(s as u32);
            }
        }
        let mut stack: Vec<usize> = (0..n).filter(|s| reaches[*s]).collect();
        while let Some(t) = stack.pop() {
            for s in &into[t] {
                if !reaches[*s as usize] {
                    reaches[*s as usize] = true;
                    stack.push(*s as usize);
                }
            }
        }
        reaches.iter().position(|r| !r)
    }

    /// The states in an order where every transition (but a state's repeat of itself)
    /// goes forward; `None` where the chain has a longer cycle.
    pub fn order(&self) -> Option<Vec<usize>> {
        let n = self.states.len();
        let mut indegree = vec![0usize; n];
        for s in 0..n {
            for (t, _) in self.transitions(s) {
                if *t as usize != s {
                    indegree[*t as usize] += 1;
                }
            }
        }
        let mut order = Vec::with_capacity(n);
        let mut ready: Vec<usize> = (0..n).filter(|s| indegree[*s] == 0).collect();
        while let Some(s) = ready.pop() {
            order.push(s);
            for (t, _) in self.transitions(s) {
                let t = *t as usize;
                if t != s {
                    indegree[t] -= 1;
                    if indegree[t] == 0 {
                        ready.push(t);
                    }
                }
            }
        }
        (order.len() == n).then_some(order)
    }

    /// A state's weight of repeating itself, and of leaving.
    fn stay_leave(&self, s: usize) -> (u128, u128) {
        let stay: u128 = self
            .transitions(s)
            .iter()
            .filter(|(t, _)| *t as usize == s)
            .map(|e| e.1)
            .sum();
        (stay, self.totals[s] - stay)
    }

    /// The exact probability of ending in each state (zero for states that do not end
    /// the battle), as fractions: where the chain has no cycle besides a round that
    /// changes nothing (that repeat is summed exactly: its weight is divided out).
    /// `None` where it has longer cycles.
    pub fn absorption(&self, order: &[usize]) -> Vec<BigRational> {
        // PERF: most chains' masses fit 128-bit fractions; BigRational only where one
        // does not (the same sums in the same order, so the same values either way).
        if let Some(mass) = self.absorption_u128(order) {
            return mass
                .into_iter()
                .map(|(n, d)| BigRational::new_raw(BigInt::from(n), BigInt::from(d)))
                .collect();
        }
        let n = self.states.len();
        let mut mass: Vec<BigRational> = vec![BigRational::zero(); n];
        mass[0] = BigRational::one();
        for &s in order {
            if self.terminal[s] || mass[s].is_zero() {
                continue;
            }
            let (_, leave) = self.stay_leave(s);
            let m = std::mem::replace(&mut mass[s], BigRational::zero());
            let per = m / BigRational::from_integer(BigInt::from(leave));
            for (t, w) in self.transitions(s) {
                if *t as usize != s {
                    // PERF: the product is left unreduced; the sum reduces it once.
                    let add =
                        BigRational::new_raw(per.numer() * BigInt::from(*w), per.denom().clone());
                    mass[*t as usize] += add;
                }
            }
        }
        mass
    }

    /// [`Chain::absorption`] in 128-bit fractions, each in lowest terms; `None` where a
    /// numerator or denominator would pass 128 bits.
    fn absorption_u128(&self, order: &[usize]) -> Option<Vec<(u128, u128)>> {
        /// `a/b + c/d` in lowest terms.
        fn add((a, b): (u128, u128), (c, d): (u128, u128)) -> Option<(u128, u128)> {
            if a == 0 {
                return Some((c, d));
            }
            let g = gcd(b, d);
            let den = (b / g).checked_mul(d)?;
            let num = a.checked_mul(d / g)?.checked_add(c.checked_mul(b / g)?)?;
            let h = gcd(num, den);
            Some((num / h, den / h))
        }
        /// `(a/b) · (w/l)` in lowest terms.
        fn scale((a, b): (u128, u128), w: u128, l: u128) -> Option<(u128, u128)> {
            let (g1, g2) = (gcd(a, l), gcd(w, b));
            let num = (a / g1).checked_mul(w / g2)?;
            let den = (b / g2).checked_mul(l / g1)?;
            Some((num, den))
        }
        let n = self.states.len();
        let mut mass: Vec<(u128, u128)> = vec![(0, 1); n];
        mass[0] = (1, 1);
        for &s in order {
            if self.terminal[s] || mass[s].0 == 0 {
                continue;
            }
            let (_, leave) = self.stay_leave(s);
            let m = std::mem::replace(&mut mass[s], (0, 1));
            for (t, w) in self.transitions(s) {
                if *t as usize != s {
                    let t = *t as usize;
                    mass[t] = add(mass[t], scale(m, *w, leave)?)?;
                }
            }
        }
        Some(mass)
    }

    /// [`Chain::absorption`] in floating point: the same sums in the same order, each
    /// transition's probability `w / leave` rounded once (for chains too large to sum in
    /// fractions quickly).
    pub fn absorption_f64(&self, order: &[usize]) -> Vec<f64> {
        let n = self.states.len();
        let mut mass = vec![0.0f64; n];
        mass[0] = 1.0;
        for &s in order {
            if self.terminal[s] || mass[s] == 0.0 {
                continue;
            }
            let (_, leave) = self.stay_leave(s);
            let m = std::mem::replace(&mut mass[s], 0.0);
            for (t, w) in self.transitions(s) {
                if *t as usize != s {
                    mass[*t as usize] += m * (*w as f64 / leave as f64);
                }
            }
        }
        mass
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Matching pennies with weighted policies: each side picks heads or tails; a match
    /// scores one for `a`, read from a table with no dice.
    const PENNIES: &str = r#"
name = "pennies"
sides = ["a", "b"]
[parameters]
rounds = { min = 1, max = 5, default = 2 }
[counters]
score = { per_side = false, min = 0, max = 5, start = 0 }
[choices.coin]
options = ["heads", "tails"]
[scratch]
point = { min = 0, max = 1 }
[tables.pay]
row = "a.coin"
rows = { from = 0, to = 1 }
columns = { index = "b.coin", labels = ["heads", "tails"] }
[tables.pay.cells]
heads = "match miss"
tails = "miss match"
[results]
match = { effects = ["point = 1"] }
miss = { effects = [] }
[battle]
round_limit = "rounds + 1"
[[phases]]
name = "pick"
table = "pay"
[[phases]]
name = "score"
effects = ["score += point + (a.coin == coin.tails and b.coin == coin.tails)"]
[[outcomes]]
name = "two or more"
when = "score >= 2"
[[outcomes]]
name = "fewer"
"#;

    fn game(text: &str) -> Game {
        Game::parse(Path::new("pennies.toml"), text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_binary_gcd_is_euclids() {
        fn euclid(mut a: u128, mut b: u128) -> u128 {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        }
        let mut x: u128 = 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C834;
        let mut values = vec![0, 1, 2, 6, 36, 46_656, u128::from(u64::MAX), u128::MAX];
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Small, 64-bit and 128-bit values, with shared powers of two.
            values.push(x >> (x % 120) << (x % 7));
        }
        for a in &values {
            for b in &values {
                assert_eq!(gcd(*a, *b), euclid(*a, *b), "gcd({a}, {b})");
            }
        }
    }

    #[test]
    fn weights_left_unreduced_are_the_same_fractions_and_overflow_as_reduced_ones_would() {
        // The arithmetic every weight took before weights were left unreduced: operands
        // in lowest terms, the result reduced.
        let times_reduced = |a, b| {
            let (a, b) = (lowest(a), lowest(b));
            Some(lowest((a.0.checked_mul(b.0)?, a.1.checked_mul(b.1)?)))
        };
        let scaled_reduced = |w, ways: u128, total: u128| {
            let w = lowest(w);
            Some(lowest((w.0.checked_mul(ways)?, w.1.checked_mul(total)?)))
        };
        let plus_reduced = |a, b| plus_lowest(lowest(a), lowest(b));
        let mut x: u128 = 0x2545_F491_4F6C_DD1D_9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Weights at most 1, small, near 64 bits and past them, each in lowest terms and,
        // where both parts stay below 2^64, times a common factor (as kept unreduced).
        let mut weights = Vec::new();
        for _ in 0..120 {
            let bits = [6, 20, 40, 63, 64, 90, 127][(next() % 7) as usize];
            let d = (next() >> (128 - bits)).max(1);
            let w = lowest((next() % (d + 1), d));
            weights.push(w);
            let k = next() % 1000 + 2;
            if let (Some(n), Some(d)) = (w.0.checked_mul(k), w.1.checked_mul(k)) {
                if (n | d) >> 64 == 0 {
                    weights.push((n, d));
                }
            }
        }
        let (mut overflowed, mut unreduced) = (0, 0);
        for a in &weights {
            for b in &weights {
                let same = |got: Option<(u128, u128)>, want: Option<(u128, u128)>, what: &str| {
                    assert_eq!(got.map(lowest), want, "{what} of {a:?} and {b:?}");
                };
                same(times(*a, *b), times_reduced(*a, *b), "times");
                same(plus(*a, *b), plus_reduced(*a, *b), "plus");
                same(
                    scaled(*a, b.0.max(1), b.1),
                    scaled_reduced(*a, b.0.max(1), b.1),
                    "scaled",
                );
                overflowed += usize::from(times_reduced(*a, *b).is_none());
                unreduced += usize::from(times(*a, *b).is_some_and(|w| w != lowest(w)));
            }
        }
        // Both ways are met: products past 128 bits, and products left unreduced.
        assert!(overflowed > 0 && unreduced > 0, "{overflowed} {unreduced}");
    }

    #[test]
    fn what_the_rest_of_a_round_never_reads_is_cleared_after_each_phase() {
        let (_, text) = crate::systems::rules_file::BUILT_IN
            .iter()
            .find(|(n, _)| *n == "field")
            .expect("shipped");
        let g = Game::parse(Path::new("field.toml"), text).unwrap_or_else(|e| panic!("{e}"));
        let unread = unread_after(&g);
        let names = |p: usize| -> Vec<&str> {
            unread[p]
                .iter()
                .map(|s| g.layout.names[*s].0.as_str())
                .collect()
        };
        // After "tactics", the options chosen and the cell's `ends` are read no more (the
        // tactics were read into `ending`), so tactic pairs that gave the same cell merge;
        // what the CRT and the losses read stays.
        let after_tactics = names(1);
        for gone in ["a.tactic", "b.tactic", "ends"] {
            assert!(after_tactics.contains(&gone), "{gone}: {after_tactics:?}");
        }
        for kept in ["b_larger", "tactic_drm", "no_combat", "ending"] {
            assert!(!after_tactics.contains(&kept), "{kept}: {after_tactics:?}");
        }
        // After the CRT the tactical cell is read no more; the rows it gave are.
        let after_combat = names(2);
        assert!(after_combat.contains(&"tactic_drm") && after_combat.contains(&"no_combat"));
        for kept in [
            "larger_row",
            "smaller_row",
            "larger_morale",
            "smaller_morale",
        ] {
            assert!(!after_combat.contains(&kept), "{kept}: {after_combat:?}");
        }
        // After the last phase, nothing of the round's scratch is read.
        assert_eq!(unread[3].len(), g.layout.scratch.len());
    }

    /// A run's frame: parameters as declared, counters at their start, `weights` per side.
    fn frame(game: &Game, weights: [&[i64]; 2]) -> Vec<i64> {
        let mut base = vec![0i64; game.frame_len()];
        for (name, decl, _) in game.settings() {
            base[game.slot(&name).unwrap()] = decl.default.unwrap_or(0);
        }
        for (side, w) in weights.iter().enumerate() {
            base[game.choices[0].weights[side].clone()].copy_from_slice(w);
        }
        base[game.layout.cap] = game.cap_of(&base);
        base
    }

    #[test]
    fn choices_scratch_and_lookups_with_no_dice_are_laid_out_and_read() {
        let g = game(PENNIES);
        let coin = &g.choices[0];
        assert_eq!(coin.options, ["heads", "tails"]);
        // What a round forgets is never state; the chosen options are not settable.
        for slot in g.layout.scratch.clone() {
            assert!(!g.layout.state.contains(&slot));
        }
        assert!(g.layout.scratch.contains(&coin.chosen[0]));
        assert!(!g.layout.scratch_values.contains(&coin.chosen[1]));
        assert_eq!(g.tables[0].dice, 0);
        assert_eq!(g.tables[0].sums, vec![(0, 1)]);
        // The round limit is the parameters' expression, per run.
        let mut base = frame(&g, [&[1, 1], &[1, 1]]);
        assert_eq!(g.round_limit, Some(6));
        assert_eq!(g.cap_of(&base), 3);
        base[g.slot("rounds").unwrap()] = 5;
        assert_eq!(g.cap_of(&base), 6);
    }

    #[test]
    fn a_round_weighs_each_sides_options_exactly_and_draws_them() {
        let g = game(PENNIES);
        let compare = Prepared::of(&g);
        // a: heads 3, tails 1; b: heads 1, tails 4.
        let base = frame(&g, [&[3, 1], &[1, 4]]);
        let mut stepper = Stepper::enumerating(&g, &compare);
        let next = stepper.round(&base);
        let score = g.slot("score").unwrap() - g.layout.state.start;
        let p = |k: i64| -> (u128, u128) {
            next.iter()
                .filter(|n| n.0[score] == k)
                .map(|n| (n.2, n.3))
                .fold((0, 1), |(a, b), (c, d)| (a * d + c * b, b * d))
        };
        // Score 1: heads-heads (3·1) + tails-tails scores 2 (1·4); 0: the rest (3·4 + 1·1).
        let reduce = |(n, d): (u128, u128)| (n / gcd(n, d), d / gcd(n, d));
        assert_eq!(reduce(p(1)), (3, 20));
        assert_eq!(reduce(p(2)), (1, 5));
        assert_eq!(reduce(p(0)), (13, 20));
        // The chain over two rounds: P(score ≥ 2) exactly.
        let chain = Chain::build(&g, &compare, &base).unwrap();
        let order = chain.order().unwrap();
        let mass = chain.absorption(&order);
        let two_or_more: BigRational = (0..chain.states.len())
            .filter(|s| chain.terminal[*s] && chain.states[*s][score] >= 2)
            .map(|s| mass[s].clone())
            .sum();
        // Per round: 0 w.p. 13/20, 1 w.p. 3/20, 2 w.p. 4/20; three rounds (limit 2 + 1).
        let per = [(0, 13), (1, 3), (2, 4)];
        let mut want = 0u64;
        for x in per {
            for y in per {
                for z in per {
                    if x.0 + y.0 + z.0 >= 2 {
                        want += x.1 * y.1 * z.1;
                    }
                }
            }
        }
        assert_eq!(
            two_or_more,
            BigRational::new(BigInt::from(want), BigInt::from(8000))
        );
        // Drawing: the same options, as often as their weights say (a fixed seed).
        let mut dice = DiceStream::for_block(7, 0);
        let mut ones = 0;
        let n = 20_000;
        for _ in 0..n {
            let mut drawing = Stepper::drawing(&g, &compare, &mut dice);
            let next = drawing.round(&base);
            assert_eq!(next.len(), 1);
            ones += u32::from(next[0].0[score] == 1);
        }
        // 3/20 of 20 000 = 3000; sd = sqrt(n p (1 - p)) ≈ 50.5; 4.5 sd.
        assert!((f64::from(ones) - 3000.0).abs() < 4.5 * 50.5, "{ones}");
    }

    #[test]
    fn a_fixed_policy_is_one_branch_and_a_weightless_option_none() {
        let g = game(PENNIES);
        let compare = Prepared::of(&g);
        let base = frame(&g, [&[0, 1], &[0, 7]]);
        let next = Stepper::enumerating(&g, &compare).round(&base);
        assert_eq!(next.len(), 1);
        let score = g.slot("score").unwrap() - g.layout.state.start;
        assert_eq!(next[0].0[score], 2);
        assert_eq!((next[0].2, next[0].3), (1, 1));
    }

    #[test]
    fn odds_read_to_the_nearest_column_halfway_up_with_the_edges_outside() {
        let text = PENNIES.replace(
            "columns = { index = \"b.coin\", labels = [\"heads\", \"tails\"] }",
            "columns = { odds = [\"rounds\", \"2\"], round = \"nearest\", labels = [\"1:1\", \"3:2\"], below = \"miss\" }",
        )
        .replace("heads = \"match miss\"\ntails = \"miss match\"", "\"1:1\" = \"match miss\"\n\"3:2\" = \"miss match\"");
        let g = game(&text);
        let t = &g.tables[0];
        let mut f = frame(&g, [&[1, 0], &[1, 0]]);
        let rounds = g.slot("rounds").unwrap();
        // 1:2 is under the first column: the edge (an automatic `miss`); 2:2 is 1:1;
        // 3:2 is 3:2; 5:2 is over the last: the last (clamped).
        for (value, want) in [(1, Err(1)), (2, Ok(0)), (3, Ok(1)), (5, Ok(1))] {
            f[rounds] = value;
            assert_eq!(column_of(t, &f), want, "{value}:2");
        }
        // The midpoint of 1:1 and 3:2 is 5:4, reached: 3:2 (here 2.5:2 = 5:4 exactly).
        let text = text.replace("[\"rounds\", \"2\"]", "[\"rounds * 2 + 1\", \"4\"]");
        let g = game(&text);
        let mut f = frame(&g, [&[1, 0], &[1, 0]]);
        f[g.slot("rounds").unwrap()] = 2; // 5:4
        assert_eq!(column_of(&g.tables[0], &f), Ok(1));
    }

    #[test]
    fn a_defender_of_0_is_above_every_column_whatever_the_rounding() {
        // Rounding down reads the last column; up or to the nearest, beyond it (here an
        // automatic `match`) — 0 against 0 as much as 3 against 0.
        for (round, beyond) in [("down", Ok(1)), ("up", Err(0)), ("nearest", Err(0))] {
            let text = PENNIES.replace(
                "columns = { index = \"b.coin\", labels = [\"heads\", \"tails\"] }",
                &format!("columns = {{ odds = [\"rounds\", \"rounds - a.coin\"], round = \"{round}\", labels = [\"1:1\", \"3:2\"], above = \"match\" }}"),
            )
            .replace("heads = \"match miss\"\ntails = \"miss match\"", "\"1:1\" = \"match miss\"\n\"3:2\" = \"miss match\"");
            let g = game(&text);
            let t = &g.tables[0];
            let (rounds, coin) = (g.slot("rounds").unwrap(), g.slot("a.coin").unwrap());
            let mut f = frame(&g, [&[1, 0], &[1, 0]]);
            for attacker in [0, 3] {
                f[rounds] = attacker;
                f[coin] = attacker;
                assert_eq!(column_of(t, &f), beyond, "{attacker}:0, rounding {round}");
            }
            // And 3:3 reads 1:1 in each.
            f[rounds] = 3;
            f[coin] = 0;
            assert_eq!(column_of(t, &f), Ok(0), "3:3, rounding {round}");
        }
    }

    #[test]
    fn grouping_rolls_and_remembering_phases_build_the_same_chain_state_for_state() {
        // Every shipped rules analysis: the same states in the same order, the same
        // transitions (so the walk, and every simulated count, is unchanged), whether
        // rolls are grouped by result and phases remembered or not.
        let same = |g: &Game, compare: &Prepared, base: &[i64], what: &str| {
            let a = Chain::build_with(g, compare, base, true, true, false).unwrap();
            for (group, remember) in [(false, false), (true, false), (false, true)] {
                let b = Chain::build_with(g, compare, base, group, remember, false).unwrap();
                let how = format!("{what}, grouped {group}, remembered {remember}");
                assert_eq!(a.states, b.states, "{how}");
                assert_eq!(a.terminal, b.terminal, "{how}");
                assert_eq!(a.edges, b.edges, "{how}");
                assert_eq!(a.totals, b.totals, "{how}");
            }
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let (mut grouped_tables, mut remembered_phases, mut in_place) = (0, 0, 0);
        let mut studies: Vec<(String, crate::systems::rules_file::RulesStudy)> = Vec::new();
        for name in ["classic_crt", "risk", "dice_pool"] {
            let path = root.join(format!("analyses/{name}.toml"));
            let text = std::fs::read_to_string(&path).unwrap();
            let study = crate::systems::rules_file::RulesStudy::parse(&path, &text).unwrap();
            studies.push((name.into(), study));
        }
        use crate::systems::rules_file::scenarios;
        studies.push(("naval 6 v 4".into(), scenarios::naval_engagement_6_v_4()));
        studies.push(("field 12 v 8".into(), scenarios::field_12_v_8()));
        for (name, study) in &studies {
            for (r, run) in study.runs.iter().enumerate() {
                let variant = &study.variants[run.variant];
                let (g, compare) = (&variant.game, &variant.compare);
                let stepper = Stepper::enumerating(g, compare);
                grouped_tables += stepper.plan.grouped.iter().filter(|x| **x).count();
                remembered_phases += stepper.plan.memo_plan.iter().flatten().count();
                in_place += stepper.plan.in_place.iter().filter(|x| **x).count();
                same(g, compare, &run.base, &format!("{name} run {r}"));
                // The plan of the file as written is the run's (nothing is lost by
                // working it out once per game).
                assert_eq!(
                    compare.plan,
                    Plan::of(&g.folded(&run.base)),
                    "{name} run {r}: the plan of the folded game"
                );
            }
        }
        assert!(grouped_tables > 0, "some shipped table is grouped");
        assert!(remembered_phases > 0, "some shipped phase is remembered");
        assert!(in_place > 0, "some shipped table is looked up in place");
        // And field battles, whose tables all group, whose tactics are chosen late and
        // whose tactical matrix and CRT are remembered; some policies give a tactic no
        // weight, one side withdraws (a round in parentheses ends the battle).
        let path = root.join("analyses/field_grouping.toml");
        for (a, b) in [
            ("\"uniform\"", "{ charge = 1, withdraw = 1 }"),
            (
                "{ charge = 2, envelop = 1, bombard = 1 }",
                "{ skirmish = 2, square = 1, refuse = 1 }",
            ),
            ("\"withdraw\"", "\"square\""),
        ] {
            let text = format!("system = \"rules\"\nrules = \"../rules/field.toml\"\n[sides.a]\nsp = 9\nmorale = 2\ntactic = {a}\n[sides.b]\nsp = 6\nmorale = 3\ntactic = {b}\n");
            let study = crate::systems::rules_file::RulesStudy::parse(&path, &text).unwrap();
            let variant = &study.variants[0];
            let stepper = Stepper::enumerating(&variant.game, &variant.compare);
            assert!(stepper.plan.grouped.iter().all(|g| *g));
            assert!(
                stepper.plan.choices_at > 0,
                "the tactics are chosen at the matrix"
            );
            assert!(stepper.plan.memo_plan[1].is_some() && stepper.plan.memo_plan[2].is_some());
            assert!(
                stepper.plan.memo_plan[2].as_ref().unwrap().by_roll,
                "the CRT by column and modifier"
            );
            same(&variant.game, &variant.compare, &study.runs[0].base, &text);
        }
    }

    #[test]
    fn new_keys_refuse_what_they_cannot_mean() {
        let err = |from: &str, to: &str| {
            let text = PENNIES.replace(from, to);
            assert_ne!(text, PENNIES, "{from}");
            Game::parse(Path::new("pennies.toml"), &text)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        assert!(err(
            "point = { min = 0, max = 1 }",
            "point = { min = 0, max = 1, start = 0 }"
        )
        .contains("0 at the start of every round"));
        assert!(err(
            "point = { min = 0, max = 1 }",
            "point = { min = 1, max = 2 }"
        )
        .contains("must hold 0"));
        assert!(err(
            "[\"heads\", \"tails\"]\n[scratch]",
            "[\"heads\", \"uniform\"]\n[scratch]"
        )
        .contains("not \"uniform\""));
        assert!(err("row = \"a.coin\"\n", "").contains("a table with no dice is read by its row"));
        assert!(err(
            "round_limit = \"rounds + 1\"",
            "round_limit = \"rounds - 1\""
        )
        .contains("1 to 1000 rounds"));
        assert!(err(
            "round_limit = \"rounds + 1\"",
            "round_limit = \"score + 1\""
        )
        .contains("read once, at the start"));
        // Scratch values and chosen options are gone between rounds.
        assert!(err("when = \"score >= 2\"", "when = \"point >= 1\"").contains("unknown name"));
        assert!(err("when = \"score >= 2\"", "when = \"a.coin == 1\"").contains("unknown name"));
        // A chosen option is read, never set.
        assert!(
            err("effects = [\"point = 1\"]", "effects = [\"a.coin = 1\"]")
                .contains("not a counter")
        );
        assert!(err("[scratch]\npoint", "[scratch]\nscore").contains("declared under both"));
    }
}
