//! A rules file, read and validated once into a [`Game`]: sides, parameters, counters,
//! tables as printed, result codes and their effects, the phases of a round, the end,
//! outcomes and metrics — every name resolved to a slot, every cell to a result, every
//! table checked against its dice and columns.
//!
//! Why this module exists: a designer's own combat system arrives as text; after
//! [`Game::parse`] nothing about it can fail (the chain builder, the kernel and the step
//! interpreter read only this plain data), and every mistake in the file is reported
//! here with its file, line, key and what is allowed (the guide is
//! `docs/rules-files.md`; every key is listed by `battlelab keys rules`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::analysis::{AnalysisError, Source};
use crate::systems::rules_file::expr::{self, EffectScope, Expr, Scope, Statement};

/// The most dice one table rolls, summed (`dice = "NdS"`).
pub const MAX_TABLE_DICE: u32 = 6;
/// The most faces a die may have.
pub const MAX_FACES: u32 = 100;
/// The most dice one pool rolls in a round.
pub const MAX_POOL_DICE: i64 = 40;
/// The most dice-outcome combinations a compare phase enumerates (faces^dice).
pub const MAX_COMPARE_COMBINATIONS: u64 = 1_000_000;
/// The widest range a counter, parameter or metric may span.
pub const MAX_SPAN: i64 = 100_000;
/// The most options one choice may list.
pub const MAX_OPTIONS: usize = 100;
/// The largest total weight of a side's mix over a choice's options (as the built-in
/// field battles' tactic mixes): weights are whole numbers, so the exact results use the
/// very probabilities the simulation draws.
pub const MAX_MIX_WEIGHT: i64 = 10_000;

/// A choice each side makes every round, before the phases (a tactic from a list): the
/// analysis gives each side a policy over the options (one option, a weighted mix, or
/// uniform), which the round enumerates with exact weights or draws from the dice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub name: String,
    pub means: String,
    pub options: Vec<String>,
    /// Per side: the slot holding the option chosen this round (0 for the first), which
    /// phases read as `<side>.<choice>`.
    pub chosen: [usize; 2],
    /// Per side: the slots of the policy's weights, one per option, set per run.
    pub weights: [std::ops::Range<usize>; 2],
}

/// A parameter or counter: one value, or one per side.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Declared {
    pub name: String,
    pub per_side: bool,
    pub min: i64,
    pub max: i64,
    /// A parameter's default, a counter's start (the analysis file may set either).
    pub default: Option<i64>,
    pub means: String,
}

/// How a table's column is picked.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnPick {
    /// The odds `attacker : defender`, read to the highest printed ratio at or under them
    /// (`round_up`: the lowest at or over them).
    Odds {
        attacker: Expr,
        defender: Expr,
        ratios: Vec<(u32, u32)>,
        round_up: bool,
        /// `round = "nearest"`: the column whose ratio is nearest (halfway reads the
        /// higher); odds under the first column or over the last meet the table's edges.
        /// `round_up` is then false.
        nearest: bool,
    },
    /// A value read to the column whose lower bound is the highest at or under it
    /// (differentials, bands).
    AtLeast { value: Expr, bounds: Vec<i64> },
    /// A value that is the column's position, 0 for the first (terrain by name).
    Index { value: Expr },
}

/// What happens beyond a table's edge (a row or a column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge {
    /// Read the nearest row or column.
    Clamp,
    /// This result, with no lookup (an automatic AE below the first column).
    Result(usize),
}

/// A table as printed, compiled.
#[derive(Clone, Debug)]
pub struct Table {
    pub name: String,
    pub means: String,
    /// Dice summed; 0 for a table read with no dice (a lookup by `row` and column, like
    /// a tactical matrix or a loss chart), whose one "roll" is 0.
    pub dice: u32,
    pub faces: u32,
    /// Each natural sum with its weight (ways), over `faces^dice`.
    pub sums: Vec<(i64, u128)>,
    pub modifier: Option<Expr>,
    /// The row read: `roll + modifier` unless the file says.
    pub row: Option<Expr>,
    pub rows: (i64, i64),
    pub below_rows: Edge,
    pub above_rows: Edge,
    pub columns: ColumnPick,
    pub labels: Vec<String>,
    pub shift: Option<Expr>,
    pub below: Edge,
    pub above: Edge,
    /// Natural rolls that give a result whatever the modifiers: (sum, result).
    pub natural: Vec<(i64, usize)>,
    /// `cells[column][row]`: a result's index.
    pub cells: Vec<Vec<usize>>,
    /// The cells an analysis's variant changed from the rules file (`[variant.cells]`,
    /// [`Game::with_cells`]), as `(column, row index)` in order: marked `*` in `tables.md`.
    /// Empty for the rules file as written.
    pub edited: Vec<(usize, usize)>,
}

impl Table {
    /// Every slot its column is picked by: the shift and the column's values.
    pub fn column_slots(&self, out: &mut Vec<usize>) {
        if let Some(shift) = &self.shift {
            shift.slots(out);
        }
        match &self.columns {
            ColumnPick::Odds {
                attacker, defender, ..
            } => {
                attacker.slots(out);
                defender.slots(out);
            }
            ColumnPick::AtLeast { value, .. } | ColumnPick::Index { value } => value.slots(out),
        }
    }
}

/// A result code and its effects.
#[derive(Clone, Debug)]
pub struct ResultCode {
    pub code: String,
    pub means: String,
    pub effects: Vec<Statement>,
}

/// A pool of dice counted at or under a target.
#[derive(Clone, Debug)]
pub struct Pool {
    pub into: usize,
    pub dice: Expr,
    pub faces: u32,
    pub hits_at_most: Expr,
}

/// What a phase rolls.
#[derive(Clone, Debug)]
pub enum PhaseKind {
    /// Roll on a table and apply the result.
    Table(usize),
    /// Roll pools and count hits into temporaries, then apply the phase's effects.
    Count(Vec<Pool>),
    /// Each side rolls dice; both sorted high to low, compared pair by pair.
    Compare {
        dice: [Expr; 2],
        faces: u32,
        /// The side that wins ties.
        ties: usize,
        won: [usize; 2],
    },
    /// No dice: only the phase's effects.
    Effects,
}

#[derive(Clone, Debug)]
pub struct Phase {
    pub name: String,
    pub when: Option<Expr>,
    pub kind: PhaseKind,
    pub effects: Vec<Statement>,
}

/// Where each name lives in the evaluation frame.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// (name, slot, range), in frame order.
    pub names: Vec<(String, usize, (i64, i64))>,
    /// The state: counters, then the round where it is remembered.
    pub state: std::ops::Range<usize>,
    /// What a round works with and forgets when it ends (never part of the state): the
    /// options chosen this round, then the scratch values; 0 at the start of every round.
    pub scratch: std::ops::Range<usize>,
    /// The scratch values alone (the end of `scratch`): what effects may set.
    pub scratch_values: std::ops::Range<usize>,
    /// The round slot.
    pub round: usize,
    /// The highest round number the state remembers in this run (a parameter-like slot
    /// set at the start: the run's round limit, `battle.rounds_remembered`, or 0).
    pub cap: usize,
    /// The outcome an `outcome` effect named (its position + 1; 0: none yet).
    pub outcome: usize,
    /// Temporaries of a phase (roll, modifier, counted hits, pairs won), reset each phase.
    pub temps: std::ops::Range<usize>,
    pub roll: usize,
    pub modifier: usize,
}

/// A validated rules file.
#[derive(Clone, Debug)]
pub struct Game {
    pub name: String,
    pub description: String,
    pub sides: [String; 2],
    pub parameters: Vec<Declared>,
    pub counters: Vec<Declared>,
    pub tables: Vec<Table>,
    pub results: Vec<ResultCode>,
    pub phases: Vec<Phase>,
    /// The choices each side makes every round, in file order.
    pub choices: Vec<Choice>,
    /// Scratch values: set by effects, read by phases, forgotten at the round's end.
    pub scratch: Vec<Declared>,
    /// The round limit; where the file gives it as an expression of the parameters
    /// (`round_limit_by`), the highest it can be (each run's own is in `layout.cap`).
    pub round_limit: Option<u32>,
    /// `battle.round_limit` as an expression of the parameters, read per run.
    pub round_limit_by: Option<Expr>,
    /// The highest round number the state can remember (0 where no rule reads `round`).
    pub rounds_remembered: u32,
    /// `battle.rounds_remembered` as an expression of the parameters, read per run.
    pub remembered_by: Option<Expr>,
    /// Whether any rule of a round (a phase, a table, a result's effects) reads `round`:
    /// where none does, a round from two states that differ only in their round goes the
    /// same way (the chain steps it once: `chain::Chain::build`).
    pub round_read: bool,
    pub end: Option<Expr>,
    /// The line of `battle.end` in the file (else of `[battle]`, else 1), where a battle
    /// that can go on for ever is reported.
    pub end_line: usize,
    /// (name, condition; `None` for the last, which takes the rest).
    pub outcomes: Vec<(String, Option<Expr>)>,
    /// (name, value, range).
    pub metrics: Vec<(String, Expr, (i64, i64))>,
    pub layout: Layout,
    /// The file's text, for the manifest's rules hash and `tables.md`.
    pub text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    name: Spanned<String>,
    description: Option<Spanned<String>>,
    sides: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    parameters: BTreeMap<String, Spanned<DeclSpec>>,
    #[serde(default)]
    counters: BTreeMap<String, Spanned<DeclSpec>>,
    #[serde(default)]
    scratch: BTreeMap<String, Spanned<DeclSpec>>,
    #[serde(default)]
    choices: BTreeMap<String, Spanned<ChoiceSpec>>,
    #[serde(default)]
    tables: BTreeMap<String, Spanned<TableSpec>>,
    #[serde(default)]
    results: BTreeMap<String, Spanned<ResultSpec>>,
    battle: Option<Spanned<BattleSpec>>,
    phases: Spanned<Vec<Spanned<PhaseSpec>>>,
    outcomes: Spanned<Vec<Spanned<OutcomeSpec>>>,
    #[serde(default)]
    metrics: Vec<Spanned<MetricSpec>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeclSpec {
    per_side: Option<bool>,
    min: Option<Spanned<i64>>,
    max: Option<Spanned<i64>>,
    default: Option<Spanned<i64>>,
    start: Option<Spanned<i64>>,
    means: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChoiceSpec {
    options: Spanned<Vec<String>>,
    means: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableSpec {
    means: Option<String>,
    dice: Option<Spanned<String>>,
    modifier: Option<Spanned<String>>,
    row: Option<Spanned<String>>,
    rows: Spanned<RangeSpec>,
    below_rows: Option<Spanned<String>>,
    above_rows: Option<Spanned<String>>,
    columns: Spanned<ColumnsSpec>,
    #[serde(default)]
    natural: BTreeMap<String, Spanned<String>>,
    cells: Spanned<BTreeMap<String, Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeSpec {
    from: i64,
    to: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ColumnsSpec {
    odds: Option<Vec<String>>,
    round: Option<String>,
    at_least: Option<String>,
    index: Option<String>,
    labels: Vec<String>,
    shift: Option<String>,
    below: Option<String>,
    above: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultSpec {
    means: Option<String>,
    #[serde(default)]
    effects: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BattleSpec {
    round_limit: Option<Spanned<toml::Value>>,
    rounds_remembered: Option<Spanned<toml::Value>>,
    end: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PhaseSpec {
    name: String,
    when: Option<String>,
    table: Option<String>,
    #[serde(default)]
    count: Vec<PoolSpec>,
    compare: Option<CompareSpec>,
    #[serde(default)]
    effects: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PoolSpec {
    into: String,
    dice: String,
    sides: Option<i64>,
    hits_at_most: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompareSpec {
    dice: BTreeMap<String, String>,
    sides: Option<i64>,
    ties: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OutcomeSpec {
    name: String,
    when: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricSpec {
    name: String,
    value: String,
}

/// The names an expression sees: the whole layout, or (for the end, outcomes and
/// metrics, read between rounds) everything but what a round forgets (a phase's
/// temporaries, the options chosen, scratch values). Policy weights (`#` in their names)
/// are never seen; each choice's options are constants (`tactic.withdraw`).
struct Names<'a> {
    layout: &'a Layout,
    temps: bool,
    counters: &'a [Declared],
    sides: &'a [String; 2],
    outcomes: &'a [String],
    /// Each choice's name and options.
    choices: &'a [(String, Vec<String>)],
}

impl Names<'_> {
    fn visible(&self) -> impl Iterator<Item = &(String, usize, (i64, i64))> {
        self.layout
            .names
            .iter()
            .filter(move |(name, slot, _)| {
                !name.contains('#')
                    && (self.temps
                        || !(self.layout.temps.contains(slot)
                            || self.layout.scratch.contains(slot)))
            })
            // The named outcome and the rounds remembered are the engine's own slots.
            .filter(move |(_, slot, _)| *slot != self.layout.outcome && *slot != self.layout.cap)
    }
}

impl Scope for Names<'_> {
    fn slot(&self, name: &str) -> Option<(usize, (i64, i64))> {
        self.visible()
            .find(|(n, _, _)| n == name)
            .map(|(_, s, r)| (*s, *r))
    }
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.visible().map(|(n, _, _)| n.clone()).collect();
        for (choice, options) in self.choices {
            names.extend(options.iter().map(|o| format!("{choice}.{o}")));
        }
        names
    }
    fn constant(&self, name: &str) -> Option<i64> {
        let (choice, option) = name.split_once('.')?;
        let (_, options) = self.choices.iter().find(|(c, _)| c == choice)?;
        options.iter().position(|o| o == option).map(|k| k as i64)
    }
    fn range(&self, slot: usize) -> (i64, i64) {
        self.layout
            .names
            .iter()
            .find(|(_, s, _)| *s == slot)
            .map_or((0, 0), |(_, _, r)| *r)
    }
}

impl Names<'_> {
    /// Whether effects may set slot `s`: a counter, or a scratch value (within a round).
    fn settable(&self, s: usize) -> bool {
        let layout = self.layout;
        (layout.state.contains(&s) && s != layout.round && s != layout.outcome)
            || (self.temps && layout.scratch_values.contains(&s))
    }
}

impl EffectScope for Names<'_> {
    fn counter(&self, name: &str) -> Option<usize> {
        self.slot(name)
            .map(|(s, _)| s)
            .filter(|s| self.settable(*s))
    }
    fn counters(&self) -> Vec<String> {
        self.layout
            .names
            .iter()
            .filter(|(_, s, _)| self.settable(*s))
            .map(|(n, _, _)| n.clone())
            .collect()
    }
    fn side_counter(&self, side: &str, counter: &str) -> Option<usize> {
        if !self
            .counters
            .iter()
            .any(|c| c.name == counter && c.per_side)
        {
            return None;
        }
        self.counter(&format!("{side}.{counter}"))
    }
    fn sides(&self) -> Vec<String> {
        self.sides.to_vec()
    }
    fn outcomes(&self) -> Vec<String> {
        self.outcomes.to_vec()
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

const RESERVED: [&str; 14] = [
    "round",
    "roll",
    "modifier",
    "won",
    "and",
    "or",
    "not",
    "true",
    "false",
    "end",
    "lose",
    "if",
    "outcome",
    "rounds_remembered",
];

/// The entries of a TOML table in file order (serde hands them over sorted by name).
fn in_file_order<T>(map: &BTreeMap<String, Spanned<T>>) -> Vec<(&String, &Spanned<T>)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by_key(|(_, v)| v.span().start);
    entries
}

/// Parses a dice text, `NdS` (`2d6`, `1d10`, `d6`).
pub fn parse_dice(text: &str) -> Option<(u32, u32)> {
    let (n, s) = text.trim().split_once(['d', 'D'])?;
    let n: u32 = if n.trim().is_empty() {
        1
    } else {
        n.trim().parse().ok()?
    };
    let s: u32 = s.trim().parse().ok()?;
    ((1..=MAX_TABLE_DICE).contains(&n) && (2..=MAX_FACES).contains(&s)).then_some((n, s))
}

/// Every sum of `n` dice of `faces` faces with its number of ways.
pub fn sums_of(n: u32, faces: u32) -> Vec<(i64, u128)> {
    let mut ways: Vec<u128> = vec![1];
    for _ in 0..n {
        let mut next = vec![0u128; ways.len() + faces as usize];
        for (total, w) in ways.iter().enumerate() {
            for f in 1..=faces as usize {
                next[total + f] += w;
            }
        }
        ways = next;
    }
    ways.iter()
        .enumerate()
        .filter(|(_, w)| **w > 0)
        .map(|(s, w)| (s as i64, *w))
        .collect()
}

impl Game {
    /// The game as one run plays it: every expression a round or the end reads, folded
    /// with the run's parameters and policies (`base` below the state; see
    /// [`Expr::folded`]). Steps the same chain, faster.
    pub fn folded(&self, base: &[i64]) -> Game {
        let fixed = self.layout.state.start;
        // PERF: an expression that reads no parameter or policy is left as it is.
        let fold = |e: &mut Expr| {
            if e.node().reads_below(fixed) {
                *e = e.folded(base, fixed)
            }
        };
        let statements = |list: &mut Vec<Statement>| {
            for st in list.iter_mut() {
                match st {
                    Statement::Set { value, .. } => fold(value),
                    Statement::Lose { amount, .. } => fold(amount),
                    Statement::End | Statement::Roll(_) | Statement::Outcome(_) => {}
                }
            }
        };
        let mut game = self.clone();
        for t in &mut game.tables {
            t.modifier.iter_mut().for_each(fold);
            t.row.iter_mut().for_each(fold);
            t.shift.iter_mut().for_each(fold);
            match &mut t.columns {
                ColumnPick::Odds {
                    attacker, defender, ..
                } => {
                    fold(attacker);
                    fold(defender);
                }
                ColumnPick::AtLeast { value, .. } | ColumnPick::Index { value } => fold(value),
            }
        }
        for r in &mut game.results {
            statements(&mut r.effects);
        }
        for p in &mut game.phases {
            p.when.iter_mut().for_each(fold);
            statements(&mut p.effects);
            match &mut p.kind {
                PhaseKind::Count(pools) => pools.iter_mut().for_each(|pool| {
                    fold(&mut pool.dice);
                    fold(&mut pool.hits_at_most);
                }),
                PhaseKind::Compare { dice, .. } => dice.iter_mut().for_each(fold),
                PhaseKind::Table(_) | PhaseKind::Effects => {}
            }
        }
        game.end.iter_mut().for_each(fold);
        game
    }
    /// Reads and validates a rules file.
    pub fn parse(path: &Path, text: &str) -> Result<Game, AnalysisError> {
        let source = Source::new(path, text);
        let spec: RulesFile = source.parse_toml()?;
        Builder {
            source: &source,
            spec: &spec,
        }
        .build(text)
    }

    /// The slots of a side's per-side counters and parameters: `(name, slot)`.
    pub fn side_slots(&self, side: usize) -> Vec<(String, usize)> {
        let prefix = format!("{}.", self.sides[side]);
        self.layout
            .names
            .iter()
            .filter_map(|(n, s, _)| n.strip_prefix(&prefix).map(|rest| (rest.to_string(), *s)))
            .collect()
    }

    /// The slot of `name` (`attacker.strength`, `terrain`).
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.layout
            .names
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, s, _)| *s)
    }

    /// The highest round number a run with the parameters of `frame` remembers: its
    /// round limit where the battle has one.
    pub fn cap_of(&self, frame: &[i64]) -> i64 {
        match (&self.remembered_by, self.round_limit) {
            (_, Some(limit)) => match &self.round_limit_by {
                Some(e) => e.eval(frame).clamp(1, i64::from(limit)),
                None => i64::from(limit),
            },
            (Some(e), None) => e.eval(frame).clamp(0, i64::from(self.rounds_remembered)),
            (None, None) => i64::from(self.rounds_remembered),
        }
    }

    /// The frame's length.
    pub fn frame_len(&self) -> usize {
        self.layout.temps.end
    }

    /// The round limit of a run whose frame is `frame` (its parameters and `cap` set).
    pub fn round_limit_of(&self, frame: &[i64]) -> Option<i64> {
        self.round_limit.map(|limit| match self.round_limit_by {
            Some(_) => frame[self.layout.cap],
            None => i64::from(limit),
        })
    }

    /// The choice named `name`.
    pub fn choice(&self, name: &str) -> Option<&Choice> {
        self.choices.iter().find(|c| c.name == name)
    }

    /// The parameters' and counters' names as the analysis file sets them
    /// (`attacker.strength`, `terrain`), with their declaration, in file order.
    pub fn settings(&self) -> Vec<(String, &Declared, bool)> {
        let mut out = Vec::new();
        for (list, counter) in [(&self.parameters, false), (&self.counters, true)] {
            for d in list {
                if d.per_side {
                    for side in &self.sides {
                        out.push((format!("{side}.{}", d.name), d, counter));
                    }
                } else {
                    out.push((d.name.clone(), d, counter));
                }
            }
        }
        out
    }
}

/// A variant's cell edits refused ([`Game::with_cells`]): the edit at fault and why, with
/// what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellEditError {
    /// The edit at fault, by its position in the edits given; `None` where the edits
    /// together are at fault (tables that now roll on each other in a cycle).
    pub edit: Option<usize>,
    pub message: String,
}

/// Where one cell edit lands: a table, a column, and one row or the whole column.
struct CellTarget {
    table: usize,
    column: usize,
    /// The row's index (from the first row printed); `None`: the whole column.
    row: Option<usize>,
}

impl Game {
    /// The game with cells of its tables replaced, as an analysis's `[variant.cells]`
    /// gives them: a "what if this cell read DE?" without a copy of the rules file.
    ///
    /// Each edit is `(key, results)`. The key names a table, a column label and
    /// optionally a row, as the rules file declares them: `"crt.3:1"` is the whole
    /// column (its results one per row, top to bottom, separated by spaces, as
    /// `[tables.crt.cells]` writes it), `"crt.3:1.2"` the one cell of row 2 (one result
    /// code). The table's name is everything before the first dot (table names have
    /// none); a key whose rest is a column label is that whole column, else the row is
    /// everything after the last dot and the column what lies between. Whole columns
    /// apply first, single cells on top of them.
    ///
    /// The new game's [`Game::text`] is the rules file with the changed columns
    /// rewritten (comments kept), so the manifest's rules hash and `tables.md` tell it
    /// from the file as written and re-reading it gives this game; [`Table::edited`]
    /// lists the cells that now differ from the rules file.
    pub fn with_cells(&self, edits: &[(&str, &str)]) -> Result<Game, CellEditError> {
        let refuse = |edit: usize, message: String| CellEditError {
            edit: Some(edit),
            message,
        };
        let codes: Vec<&str> = self.results.iter().map(|r| r.code.as_str()).collect();
        let code_of = |edit: usize, code: &str| {
            self.results
                .iter()
                .position(|r| r.code == code)
                .ok_or_else(|| {
                    refuse(
                        edit,
                        format!(
                            "unknown result code \"{code}\"; the rules file's codes: {}",
                            codes.join(", ")
                        ),
                    )
                })
        };
        let mut targets = Vec::with_capacity(edits.len());
        for (i, (key, _)) in edits.iter().enumerate() {
            targets.push(self.cell_target(key).map_err(|m| refuse(i, m))?);
        }
        let mut game = self.clone();
        // Whole columns first, then single cells on top of them.
        let mut order: Vec<usize> = (0..edits.len()).collect();
        order.sort_by_key(|&i| targets[i].row.is_some());
        let mut cells_set: Vec<(usize, usize, usize, usize)> = Vec::new();
        for i in order {
            let target = &targets[i];
            let table = &mut game.tables[target.table];
            let label = &table.labels[target.column];
            let given: Vec<&str> = edits[i].1.split_whitespace().collect();
            match target.row {
                None => {
                    let (from, to) = table.rows;
                    let need = table.cells[target.column].len();
                    if given.len() != need {
                        return Err(refuse(i, format!("column \"{label}\" of table {} has {} results here; rows {from} to {to} need {need}, one per row, top to bottom, separated by spaces (codes: {})", table.name, given.len(), codes.join(", "))));
                    }
                    for (row, code) in given.iter().enumerate() {
                        table.cells[target.column][row] = code_of(i, code)?;
                    }
                }
                Some(row) => {
                    let [code] = given[..] else {
                        return Err(refuse(i, format!("one cell takes one result code, got \"{}\" (codes: {}); to give the whole column, name it without a row: \"{}.{label}\"", edits[i].1.trim(), codes.join(", "), table.name)));
                    };
                    if let Some(&(_, _, _, first)) = cells_set
                        .iter()
                        .find(|c| (c.0, c.1, c.2) == (target.table, target.column, row))
                    {
                        return Err(refuse(
                            i,
                            format!(
                                "this cell is edited twice (also by \"{}\"); keep one",
                                edits[first].0
                            ),
                        ));
                    }
                    cells_set.push((target.table, target.column, row, i));
                    table.cells[target.column][row] = code_of(i, code)?;
                }
            }
        }
        if let Some(path) = table_cycle(&game.tables, &game.results) {
            let names: Vec<&str> = path.iter().map(|t| game.tables[*t].name.as_str()).collect();
            return Err(CellEditError {
                edit: None,
                message: format!("with these cells the tables roll on each other in a cycle ({}); a result may roll on another table, never back", names.join(" → ")),
            });
        }
        // The file's text with each changed column rewritten where it stands.
        #[derive(Deserialize)]
        struct CellsOnly {
            #[serde(default)]
            tables: BTreeMap<String, TableCellsOnly>,
        }
        #[derive(Deserialize)]
        struct TableCellsOnly {
            cells: BTreeMap<String, Spanned<String>>,
        }
        let written: Option<CellsOnly> = toml::from_str(&self.text).ok();
        let mut splices = Vec::new();
        for (new, old) in game.tables.iter_mut().zip(&self.tables) {
            for (c, (column, was)) in new.cells.iter().zip(&old.cells).enumerate() {
                if column == was {
                    continue;
                }
                new.edited.extend(
                    column
                        .iter()
                        .zip(was)
                        .enumerate()
                        .filter(|(_, (a, b))| a != b)
                        .map(|(row, _)| (c, row)),
                );
                let span = written
                    .as_ref()
                    .and_then(|w| w.tables.get(&new.name))
                    .and_then(|w| w.cells.get(&new.labels[c]))
                    .map(Spanned::span)
                    .ok_or_else(|| CellEditError {
                        edit: None,
                        message: format!("the rules file's text has no cells.\"{}\" under [tables.{}] to rewrite", new.labels[c], new.name),
                    })?;
                let results: Vec<&str> = column.iter().map(|r| codes[*r]).collect();
                splices.push((span, toml::Value::String(results.join(" ")).to_string()));
            }
            new.edited.sort_unstable();
            new.edited.dedup();
        }
        splices.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
        for (span, text) in splices {
            game.text.replace_range(span, &text);
        }
        Ok(game)
    }

    /// The table, column and row a cell edit's key names, or why it names none.
    fn cell_target(&self, key: &str) -> Result<CellTarget, String> {
        let tables: Vec<&str> = self.tables.iter().map(|t| t.name.as_str()).collect();
        let shape = "a cell edit's key is \"<table>.<column>\" (a whole column) or \"<table>.<column>.<row>\" (one cell)";
        let Some((name, rest)) = key.split_once('.') else {
            return Err(format!(
                "{shape}, e.g. \"{}\"; got \"{key}\"; tables: {}",
                self.example_cell_key(),
                tables.join(", ")
            ));
        };
        let Some(table) = self.tables.iter().position(|t| t.name == name) else {
            return Err(format!(
                "the rules file \"{}\" has no table \"{name}\"; tables: {}",
                self.name,
                tables.join(", ")
            ));
        };
        let t = &self.tables[table];
        if let Some(column) = t.labels.iter().position(|l| l == rest) {
            return Ok(CellTarget {
                table,
                column,
                row: None,
            });
        }
        let (from, to) = t.rows;
        let (label, row) = rest.rsplit_once('.').unwrap_or((rest, ""));
        let Some(column) = t.labels.iter().position(|l| l == label) else {
            return Err(format!(
                "table {name} has no column \"{label}\"; columns: {} ({shape})",
                t.labels.join(", ")
            ));
        };
        match row.trim().parse::<i64>() {
            Ok(r) if (from..=to).contains(&r) => Ok(CellTarget {
                table,
                column,
                row: Some((r - from) as usize),
            }),
            _ => Err(format!(
                "table {name} has no row \"{row}\"; rows: {from} to {to}"
            )),
        }
    }

    /// A cell edit's key for this game's first table, for messages.
    fn example_cell_key(&self) -> String {
        self.tables.first().map_or_else(
            || "crt.3:1".to_string(),
            |t| format!("{}.{}", t.name, t.labels.first().map_or("", String::as_str)),
        )
    }
}

struct Builder<'a> {
    source: &'a Source<'a>,
    spec: &'a RulesFile,
}

impl Builder<'_> {
    fn err<T>(
        &self,
        at: &Spanned<T>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> AnalysisError {
        self.source.error(at, field, message)
    }

    fn build(&self, text: &str) -> Result<Game, AnalysisError> {
        let spec = self.spec;
        let sides = self.sides()?;
        let parameters = self.declared(&spec.parameters, "parameters", false)?;
        let counters = self.declared(&spec.counters, "counters", true)?;
        let scratch = self.scratch()?;
        let choice_specs = self.choices()?;
        let mut taken: Vec<(&str, &str)> = Vec::new();
        for (what, list) in [
            ("parameters", &parameters),
            ("counters", &counters),
            ("scratch", &scratch),
        ] {
            taken.extend(list.iter().map(|d| (what, d.name.as_str())));
        }
        taken.extend(choice_specs.iter().map(|c| ("choices", c.0.as_str())));
        for (i, (what, n)) in taken.iter().enumerate() {
            if let Some((other, _)) = taken[..i].iter().find(|t| t.1 == *n) {
                let at = match *what {
                    "counters" => spec.counters.get(*n).map(|s| s.span()),
                    "scratch" => spec.scratch.get(*n).map(|s| s.span()),
                    _ => spec.choices.get(*n).map(|s| s.span()),
                };
                return Err(self.source.error_at(
                    Some(self.source.line_of(at.unwrap_or(0..0))),
                    format!("{what}.{n}"),
                    format!("`{n}` is declared under both {other} and {what}; give them different names"),
                ));
            }
        }
        let battle = spec.battle.as_ref();
        // `round_limit`: a number, or an expression of the parameters (read below, once
        // the names are laid out; the limit is then the highest it can be).
        let limit_spec = battle.and_then(|b| b.get_ref().round_limit.as_ref());
        let mut round_limit = match limit_spec.map(|v| (v, v.get_ref())) {
            Some((v, toml::Value::Integer(n))) => {
                let n = Spanned::new(v.span(), *n);
                Some(
                    self.source
                        .int_in(&n, "battle.round_limit", 1, 1000, "the round limit")?
                        as u32,
                )
            }
            Some((_, toml::Value::String(_))) => Some(1000),
            Some((v, _)) => return Err(self.err(v, "battle.round_limit", "the most rounds: a number (1 to 1000), or an expression of the parameters (\"round_limit\")")),
            None => None,
        };
        // `rounds_remembered`: a number, or an expression of the parameters (read below,
        // once the names are laid out).
        let remembered_spec = battle.and_then(|b| b.get_ref().rounds_remembered.as_ref());
        let remembered = match remembered_spec.map(|v| (v, v.get_ref())) {
            Some((v, toml::Value::Integer(n))) => {
                let n = Spanned::new(v.span(), *n);
                Some(self.source.int_in(&n, "battle.rounds_remembered", 1, 1000, "the rounds the state remembers")? as u32)
            }
            Some((_, toml::Value::String(_))) => Some(1000),
            Some((v, _)) => return Err(self.err(v, "battle.rounds_remembered", "a number of rounds (1 to 1000), or an expression of the parameters (\"retreat_from\")")),
            None => None,
        };
        // The layout: parameters, counters, round, then the phases' temporaries.
        let mut layout = Layout::default();
        let push = |layout: &mut Layout, name: String, range: (i64, i64)| {
            let slot = layout.names.len();
            layout.names.push((name, slot, range));
            slot
        };
        for d in &parameters {
            for name in qualified(d, &sides) {
                push(&mut layout, name, (d.min, d.max));
            }
        }
        layout.cap = push(&mut layout, "rounds_remembered".into(), (0, 1000));
        // Each side's policy over each choice's options: weights set per run.
        let mut weights = Vec::new();
        for (name, options, _) in &choice_specs {
            let per_side = [0, 1].map(|k| {
                let start = layout.names.len();
                for o in options {
                    push(
                        &mut layout,
                        format!("{}.{name}#{o}", sides[k]),
                        (0, MAX_MIX_WEIGHT),
                    );
                }
                start..layout.names.len()
            });
            weights.push(per_side);
        }
        let state_start = layout.names.len();
        for d in &counters {
            for name in qualified(d, &sides) {
                push(&mut layout, name, (d.min, d.max));
            }
        }
        let rounds_top = round_limit.or(remembered).unwrap_or(1000);
        layout.round = push(&mut layout, "round".into(), (0, i64::from(rounds_top)));
        let outcome_count = spec.outcomes.get_ref().len() as i64;
        layout.outcome = push(&mut layout, "outcome".into(), (0, outcome_count));
        layout.state = state_start..layout.outcome + 1;
        let scratch_start = layout.names.len();
        let mut choices = Vec::new();
        for ((name, options, means), weights) in choice_specs.iter().zip(weights) {
            let top = options.len() as i64 - 1;
            let chosen =
                [0, 1].map(|k| push(&mut layout, format!("{}.{name}", sides[k]), (0, top)));
            choices.push(Choice {
                name: name.clone(),
                means: means.clone(),
                options: options.clone(),
                chosen,
                weights,
            });
        }
        let values_start = layout.names.len();
        for d in &scratch {
            for name in qualified(d, &sides) {
                push(&mut layout, name, (d.min, d.max));
            }
        }
        layout.scratch = scratch_start..layout.names.len();
        layout.scratch_values = values_start..layout.names.len();
        let temps_start = layout.names.len();
        let biggest_sum = spec
            .tables
            .values()
            .filter_map(|t| parse_dice(t.get_ref().dice.as_ref()?.get_ref()))
            .map(|(n, s)| i64::from(n * s))
            .max()
            .unwrap_or(1);
        layout.roll = push(&mut layout, "roll".into(), (0, biggest_sum));
        layout.modifier = push(&mut layout, "modifier".into(), (-MAX_SPAN, MAX_SPAN));
        for side in &sides {
            push(&mut layout, format!("won.{side}"), (0, MAX_POOL_DICE));
        }
        let mut intos: Vec<String> = Vec::new();
        for phase in spec.phases.get_ref() {
            for pool in &phase.get_ref().count {
                if !intos.contains(&pool.into) {
                    intos.push(pool.into.clone());
                }
            }
        }
        for (i, phase) in spec.phases.get_ref().iter().enumerate() {
            for pool in &phase.get_ref().count {
                if !is_identifier(&pool.into)
                    || layout.names.iter().any(|(n, _, _)| *n == pool.into)
                        && !intos.contains(&pool.into)
                {
                    return Err(self.err(phase, format!("phases[{i}].count.into"), format!("`{}` cannot hold hits: give a new name of lowercase letters, digits and _ (not a side, parameter or counter)", pool.into)));
                }
            }
        }
        for name in &intos {
            if !layout.names.iter().any(|(n, _, _)| n == name) {
                push(&mut layout, name.clone(), (0, MAX_POOL_DICE * 8));
            }
        }
        layout.temps = temps_start..layout.names.len();

        let outcome_names: Vec<String> = spec
            .outcomes
            .get_ref()
            .iter()
            .map(|o| limited(o.get_ref().name.trim()))
            .collect();
        let choice_names: Vec<(String, Vec<String>)> = choice_specs
            .iter()
            .map(|(n, o, _)| (n.clone(), o.clone()))
            .collect();
        let phase_names = Names {
            layout: &layout,
            temps: true,
            counters: &counters,
            sides: &sides,
            outcomes: &outcome_names,
            choices: &choice_names,
        };
        let round_names = Names {
            layout: &layout,
            temps: false,
            counters: &counters,
            sides: &sides,
            outcomes: &outcome_names,
            choices: &choice_names,
        };

        let results = self.results(&phase_names)?;
        let tables = self.tables(&phase_names, &results)?;
        check_table_cycles(self, &tables, &results)?;
        let phases = self.phases(&phase_names, &tables, &sides)?;

        let end = match battle.and_then(|b| b.get_ref().end.as_ref()) {
            Some(text) => Some(
                expr::parse(text.get_ref(), &round_names)
                    .map_err(|e| self.err(text, "battle.end", e.0))?,
            ),
            None => None,
        };
        let end_line = match battle {
            Some(b) => self
                .source
                .line_of(b.get_ref().end.as_ref().map_or(b.span(), |e| e.span())),
            None => 1,
        };
        if end.is_none() && round_limit.is_none() {
            let at = battle.map(|b| b.span()).unwrap_or(0..0);
            return Err(self.source.error_at(Some(self.source.line_of(at)), "battle", "a battle needs an end: give battle.end (a condition checked before each round) or battle.round_limit (1 for a single roll)"));
        }
        let outcomes = self.outcomes(&round_names)?;
        let mut metrics = Vec::new();
        for (i, m) in spec.metrics.iter().enumerate() {
            let field = format!("metrics[{i}]");
            let name = m.get_ref().name.trim().to_string();
            if !is_identifier(&name)
                || metrics
                    .iter()
                    .any(|(n, _, _): &(String, Expr, (i64, i64))| *n == name)
                || name == "rounds"
            {
                return Err(self.err(m, format!("{field}.name"), format!("a metric's name is lowercase letters, digits and _, used once and not \"rounds\"; got \"{name}\"")));
            }
            let value = expr::parse(&m.get_ref().value, &round_names)
                .map_err(|e| self.err(m, format!("{field}.value"), e.0))?;
            let range = value.range(&round_names);
            if range.0 < 0 || range.1 > MAX_SPAN {
                return Err(self.err(m, format!("{field}.value"), format!("a metric counts something: its value must stay within 0 to {MAX_SPAN}, and `{}` can be {} to {}; bound it with max(0, …) or clamp(…)", m.get_ref().value, range.0, range.1)));
            }
            metrics.push((name, value, range));
        }
        // Does any rule read the round number? Then the state remembers it.
        let mut read = Vec::new();
        for e in end
            .iter()
            .chain(outcomes.iter().filter_map(|o| o.1.as_ref()))
            .chain(metrics.iter().map(|m| &m.1))
        {
            e.slots(&mut read);
        }
        for p in &phases {
            if let Some(w) = &p.when {
                w.slots(&mut read);
            }
            statement_slots(&p.effects, &mut read);
            if let PhaseKind::Count(pools) = &p.kind {
                for pool in pools {
                    pool.dice.slots(&mut read);
                    pool.hits_at_most.slots(&mut read);
                }
            }
            if let PhaseKind::Compare { dice, .. } = &p.kind {
                dice.iter().for_each(|d| d.slots(&mut read));
            }
        }
        for t in &tables {
            for e in [t.modifier.as_ref(), t.row.as_ref()].into_iter().flatten() {
                e.slots(&mut read);
            }
            t.column_slots(&mut read);
        }
        for r in &results {
            statement_slots(&r.effects, &mut read);
        }
        let reads_round = read.contains(&layout.round);
        let round_limit_by = match limit_spec.map(|v| (v, v.get_ref())) {
            Some((v, toml::Value::String(text))) => {
                let e = expr::parse(text, &round_names)
                    .map_err(|e| self.err(v, "battle.round_limit", e.0))?;
                let mut used = Vec::new();
                e.slots(&mut used);
                if used
                    .iter()
                    .any(|s| layout.state.contains(s) || *s == layout.cap)
                {
                    return Err(self.err(v, "battle.round_limit", "the round limit is read once, at the start: an expression of the parameters, not of counters or the round"));
                }
                let (lo, hi) = e.range(&round_names);
                if lo < 1 || hi > 1000 {
                    return Err(self.err(v, "battle.round_limit", format!("the round limit is 1 to 1000 rounds, and `{text}` can be {lo} to {hi}; bound it with clamp({text}, 1, 1000) or the parameters' ranges")));
                }
                round_limit = Some(hi as u32);
                Some(e)
            }
            _ => None,
        };
        let remembered_by = match remembered_spec.map(|v| (v, v.get_ref())) {
            Some((v, toml::Value::String(text))) => {
                let e = expr::parse(text, &round_names)
                    .map_err(|e| self.err(v, "battle.rounds_remembered", e.0))?;
                let mut used = Vec::new();
                e.slots(&mut used);
                if used.iter().any(|s| layout.state.contains(s)) {
                    return Err(self.err(v, "battle.rounds_remembered", "rounds_remembered is read once, at the start: an expression of the parameters, not of counters or the round"));
                }
                Some(e)
            }
            _ => None,
        };
        let rounds_remembered = match (reads_round, round_limit, remembered) {
            (_, Some(limit), _) => limit,
            (true, None, Some(_)) => match &remembered_by {
                Some(e) => e.range(&round_names).1.clamp(0, 1000) as u32,
                None => remembered.unwrap_or(0),
            },
            (true, None, None) => {
                let at = battle.map(|b| b.span()).unwrap_or(0..0);
                return Err(self.source.error_at(Some(self.source.line_of(at)), "battle.rounds_remembered", "a rule reads `round` but the battle has no round limit: set battle.rounds_remembered to the highest round number any rule tells apart (rounds after it count as it), or set battle.round_limit"));
            }
            (false, None, _) => 0,
        };
        layout.names[layout.round].2 = (0, i64::from(rounds_remembered));
        Ok(Game {
            name: limited(spec.name.get_ref()),
            description: spec
                .description
                .as_ref()
                .map(|d| limited(d.get_ref()))
                .unwrap_or_default(),
            sides,
            parameters,
            counters,
            tables,
            results,
            phases,
            choices,
            scratch,
            round_limit,
            round_limit_by,
            rounds_remembered,
            remembered_by,
            round_read: reads_round,
            end,
            end_line,
            outcomes,
            metrics,
            layout,
            text: text.to_string(),
        })
    }

    fn sides(&self) -> Result<[String; 2], AnalysisError> {
        let list = self.spec.sides.get_ref();
        if list.len() != 2 {
            return Err(self.err(
                &self.spec.sides,
                "sides",
                format!(
                    "a battle has two sides, e.g. sides = [\"attacker\", \"defender\"]; got {}",
                    list.len()
                ),
            ));
        }
        for s in list {
            if !is_identifier(s.get_ref()) || RESERVED.contains(&s.get_ref().as_str()) {
                return Err(self.err(s, "sides", format!("a side's key is lowercase letters, digits and _ (not a reserved word); got \"{}\"", s.get_ref())));
            }
        }
        if list[0].get_ref() == list[1].get_ref() {
            return Err(self.err(
                &self.spec.sides,
                "sides",
                "the two sides need different keys",
            ));
        }
        Ok([list[0].get_ref().clone(), list[1].get_ref().clone()])
    }

    fn declared(
        &self,
        map: &BTreeMap<String, Spanned<DeclSpec>>,
        what: &str,
        counter: bool,
    ) -> Result<Vec<Declared>, AnalysisError> {
        let mut out = Vec::new();
        for (name, spec) in in_file_order(map) {
            let field = format!("{what}.{name}");
            let s = spec.get_ref();
            if !is_identifier(name)
                || RESERVED.contains(&name.as_str())
                || self
                    .spec
                    .sides
                    .get_ref()
                    .iter()
                    .any(|x| x.get_ref() == name)
            {
                return Err(self.err(spec, &field, format!("a name is lowercase letters, digits and _, not a side's key or a reserved word ({}); got \"{name}\"", RESERVED.join(", "))));
            }
            let (Some(min), Some(max)) = (&s.min, &s.max) else {
                return Err(self.err(spec, &field, format!("give its bounds: min and max (every {} has a range, so the state stays finite)", if counter { "counter" } else { "parameter" })));
            };
            let (min, max) = (*min.get_ref(), *max.get_ref());
            if min > max || max - min > MAX_SPAN || min < -MAX_SPAN || max > MAX_SPAN {
                return Err(self.err(spec, &field, format!("min ({min}) to max ({max}) must be an ascending range within -{MAX_SPAN} to {MAX_SPAN}")));
            }
            let (default, wrong) = if counter {
                (&s.start, &s.default)
            } else {
                (&s.default, &s.start)
            };
            if wrong.is_some() {
                return Err(self.err(
                    spec,
                    &field,
                    if counter {
                        "a counter's first value is `start`, not `default`"
                    } else {
                        "a parameter's value is `default`, not `start` (counters have a start)"
                    },
                ));
            }
            if let Some(d) = default {
                self.source.int_in(
                    d,
                    &format!("{field}.{}", if counter { "start" } else { "default" }),
                    min,
                    max,
                    "the value",
                )?;
            }
            out.push(Declared {
                name: name.clone(),
                per_side: s.per_side.unwrap_or(counter),
                min,
                max,
                default: default.as_ref().map(|d| *d.get_ref()),
                means: s.means.clone().map(|m| limited(&m)).unwrap_or_default(),
            });
        }
        Ok(out)
    }

    /// `[scratch]`: values a round works with, 0 at its start; declared like parameters
    /// (`min`, `max`, `per_side`, `means`), with no start (every round starts them at 0).
    fn scratch(&self) -> Result<Vec<Declared>, AnalysisError> {
        for (name, spec) in &self.spec.scratch {
            let s = spec.get_ref();
            if s.start.is_some() || s.default.is_some() {
                return Err(self.err(spec, format!("scratch.{name}"), "a scratch value is 0 at the start of every round: drop `start`/`default` (set it in an effect)"));
            }
            if let (Some(min), Some(max)) = (&s.min, &s.max) {
                if *min.get_ref() > 0 || *max.get_ref() < 0 {
                    return Err(self.err(spec, format!("scratch.{name}"), format!("a scratch value starts every round at 0, so its range must hold 0; got {} to {}", min.get_ref(), max.get_ref())));
                }
            }
        }
        self.declared(&self.spec.scratch, "scratch", false)
    }

    /// `[choices.<name>]`: `(name, options, means)` in file order.
    fn choices(&self) -> Result<Vec<(String, Vec<String>, String)>, AnalysisError> {
        let mut out = Vec::new();
        for (name, spec) in in_file_order(&self.spec.choices) {
            let field = format!("choices.{name}");
            if !is_identifier(name)
                || RESERVED.contains(&name.as_str())
                || self
                    .spec
                    .sides
                    .get_ref()
                    .iter()
                    .any(|x| x.get_ref() == name)
            {
                return Err(self.err(spec, &field, format!("a choice's name is lowercase letters, digits and _, not a side's key or a reserved word; got \"{name}\"")));
            }
            let options_at = &spec.get_ref().options;
            let options = options_at.get_ref();
            if options.is_empty() || options.len() > MAX_OPTIONS {
                return Err(self.err(options_at, format!("{field}.options"), format!("a choice lists 1 to {MAX_OPTIONS} options, e.g. options = [\"charge\", \"withdraw\"]")));
            }
            for (i, o) in options.iter().enumerate() {
                if options[..i].contains(o) {
                    return Err(self.err(
                        options_at,
                        format!("{field}.options"),
                        format!("\"{o}\" is listed twice: each option once"),
                    ));
                }
                if !is_identifier(o) || o == "uniform" {
                    return Err(self.err(options_at, format!("{field}.options"), format!("each option is a name of lowercase letters, digits and _ (not \"uniform\": that is a policy); got \"{o}\"")));
                }
            }
            out.push((
                name.clone(),
                options.clone(),
                spec.get_ref()
                    .means
                    .clone()
                    .map(|m| limited(&m))
                    .unwrap_or_default(),
            ));
        }
        Ok(out)
    }

    fn results(&self, names: &Names) -> Result<Vec<ResultCode>, AnalysisError> {
        let mut out = Vec::new();
        for (code, spec) in in_file_order(&self.spec.results) {
            let field = format!("results.{code}");
            if code.is_empty()
                || code.len() > 12
                || code.chars().any(|c| c.is_whitespace() || c.is_control())
            {
                return Err(self.err(
                    spec,
                    &field,
                    "a result code is 1 to 12 characters without spaces (AE, DR, 1/2, -)",
                ));
            }
            let mut effects = Vec::new();
            for (i, e) in spec.get_ref().effects.iter().enumerate() {
                effects.push(
                    expr::statement(e, names)
                        .map_err(|err| self.err(spec, format!("{field}.effects[{i}]"), err.0))?,
                );
            }
            out.push(ResultCode {
                code: code.clone(),
                means: spec
                    .get_ref()
                    .means
                    .clone()
                    .map(|m| limited(&m))
                    .unwrap_or_default(),
                effects,
            });
        }
        Ok(out)
    }

    fn code(
        &self,
        results: &[ResultCode],
        code: &str,
        at: &Spanned<impl Sized>,
        field: &str,
    ) -> Result<usize, AnalysisError> {
        results.iter().position(|r| r.code == code).ok_or_else(|| {
            let known: Vec<&str> = results.iter().map(|r| r.code.as_str()).collect();
            self.err(at, field, format!("unknown result code \"{code}\"; define it under [results.\"{code}\"] or use one of: {}", known.join(", ")))
        })
    }

    fn edge(
        &self,
        text: Option<&str>,
        results: &[ResultCode],
        at: &Spanned<impl Sized>,
        field: &str,
        default: Edge,
    ) -> Result<Edge, AnalysisError> {
        match text.map(str::trim) {
            None => Ok(default),
            Some("clamp" | "first" | "last") => Ok(Edge::Clamp),
            Some(code) => self.code(results, code, at, field).map(Edge::Result),
        }
    }

    fn tables(&self, names: &Names, results: &[ResultCode]) -> Result<Vec<Table>, AnalysisError> {
        let mut out = Vec::new();
        for (name, spec) in in_file_order(&self.spec.tables) {
            let t = spec.get_ref();
            let field = |k: &str| format!("tables.{name}.{k}");
            if !is_identifier(name) {
                return Err(self.err(
                    spec,
                    format!("tables.{name}"),
                    "a table's name is lowercase letters, digits and _",
                ));
            }
            // No dice: a lookup, read by `row` (its one roll is 0).
            let (dice, faces) = match &t.dice {
                Some(d) => parse_dice(d.get_ref()).ok_or_else(|| self.err(d, field("dice"), format!("dice are written NdS: 1 to {MAX_TABLE_DICE} dice of 2 to {MAX_FACES} faces, summed (\"1d6\", \"2d6\", \"1d10\"); got \"{}\" (a table read with no dice leaves `dice` out and gives `row`)", d.get_ref())))?,
                None => {
                    if t.row.is_none() {
                        return Err(self.err(spec, field("row"), "a table with no dice is read by its row: give row = \"<expression>\" (e.g. the larger side's tactic), or give dice = \"NdS\""));
                    }
                    if !t.natural.is_empty() {
                        return Err(self.err(spec, field("natural"), "a table with no dice has no natural rolls: drop `natural`, or give dice = \"NdS\""));
                    }
                    (0, 1)
                }
            };
            let parse = |text: &Spanned<String>, key: &str| {
                expr::parse(text.get_ref(), names).map_err(|e| self.err(text, field(key), e.0))
            };
            let modifier = t
                .modifier
                .as_ref()
                .map(|m| parse(m, "modifier"))
                .transpose()?;
            let row = t.row.as_ref().map(|m| parse(m, "row")).transpose()?;
            let RangeSpec { from, to } = *t.rows.get_ref();
            if from > to || to - from > 1000 {
                return Err(self.err(&t.rows, field("rows"), format!("rows = {{ from, to }} counts the modified rolls printed, ascending (at most 1001); got {from} to {to}")));
            }
            let c = t.columns.get_ref();
            if c.labels.is_empty() || c.labels.len() > 100 {
                return Err(self.err(
                    &t.columns,
                    field("columns.labels"),
                    "give the columns' labels as printed, left to right (1 to 100)",
                ));
            }
            let picks = [c.odds.is_some(), c.at_least.is_some(), c.index.is_some()];
            if picks.iter().filter(|p| **p).count() != 1 {
                return Err(self.err(&t.columns, field("columns"), "pick columns one way: odds = [\"attacker.strength\", \"defender.strength\"], at_least = \"<value>\" (differentials, bands; labels are lower bounds) or index = \"<value>\" (0 = the first column)"));
            }
            let parse_text = |text: &str, key: &str| {
                expr::parse(text, names).map_err(|e| self.err(&t.columns, field(key), e.0))
            };
            let columns = if let Some(odds) = &c.odds {
                if odds.len() != 2 {
                    return Err(self.err(
                        &t.columns,
                        field("columns.odds"),
                        "odds = [\"<attacker's strength>\", \"<defender's strength>\"]: two values",
                    ));
                }
                let mut ratios = Vec::new();
                for label in &c.labels {
                    let r = crate::rules::parse_odds_ratio(label).ok_or_else(|| self.err(&t.columns, field("columns.labels"), format!("odds columns are labelled as ratios (\"1:2\", \"3:1\"); got \"{label}\"")))?;
                    if let Some(&(a, b)) = ratios.last() {
                        if u64::from(r.0) * u64::from(b) <= u64::from(a) * u64::from(r.1) {
                            return Err(self.err(&t.columns, field("columns.labels"), format!("odds columns ascend left to right; \"{label}\" is not above the column before it")));
                        }
                    }
                    ratios.push(r);
                }
                let (round_up, nearest) = match c.round.as_deref().map(str::trim) {
                    None | Some("down") => (false, false),
                    Some("up") => (true, false),
                    Some("nearest") => (false, true),
                    Some(other) => return Err(self.err(&t.columns, field("columns.round"), format!("odds round \"down\" (to the column at or under them: the defender's favour), \"up\" or \"nearest\" (halfway reads the higher); got \"{other}\""))),
                };
                ColumnPick::Odds {
                    attacker: parse_text(&odds[0], "columns.odds")?,
                    defender: parse_text(&odds[1], "columns.odds")?,
                    ratios,
                    round_up,
                    nearest,
                }
            } else if let Some(value) = &c.at_least {
                let mut bounds = Vec::new();
                for label in &c.labels {
                    let b = lower_bound(label).ok_or_else(|| self.err(&t.columns, field("columns.labels"), format!("at_least columns are labelled by their lowest value (\"-2\", \"+1\", \"3-4\", \"≤-3\" or \"7+\"); got \"{label}\"")))?;
                    if bounds.last().is_some_and(|l| *l >= b) {
                        return Err(self.err(
                            &t.columns,
                            field("columns.labels"),
                            format!("columns ascend left to right; \"{label}\" does not"),
                        ));
                    }
                    bounds.push(b);
                }
                ColumnPick::AtLeast {
                    value: parse_text(value, "columns.at_least")?,
                    bounds,
                }
            } else {
                ColumnPick::Index {
                    value: parse_text(c.index.as_deref().unwrap_or_default(), "columns.index")?,
                }
            };
            if c.round.is_some() && c.odds.is_none() {
                return Err(self.err(
                    &t.columns,
                    field("columns.round"),
                    "round applies to odds columns only",
                ));
            }
            let shift = c
                .shift
                .as_ref()
                .map(|s| parse_text(s, "columns.shift"))
                .transpose()?;
            let below = self.edge(
                c.below.as_deref(),
                results,
                &t.columns,
                &field("columns.below"),
                Edge::Clamp,
            )?;
            let above = self.edge(
                c.above.as_deref(),
                results,
                &t.columns,
                &field("columns.above"),
                Edge::Clamp,
            )?;
            let below_rows = self.edge(
                t.below_rows.as_ref().map(|s| s.get_ref().as_str()),
                results,
                spec,
                &field("below_rows"),
                Edge::Clamp,
            )?;
            let above_rows = self.edge(
                t.above_rows.as_ref().map(|s| s.get_ref().as_str()),
                results,
                spec,
                &field("above_rows"),
                Edge::Clamp,
            )?;
            let row_count = (to - from + 1) as usize;
            let mut cells = Vec::new();
            for label in &c.labels {
                let Some(column) = t.cells.get_ref().get(label) else {
                    return Err(self.err(&t.cells, field("cells"), format!("no cells for column \"{label}\": give cells.\"{label}\" = \"<one result per row, {from} to {to}>\"")));
                };
                let codes: Vec<&str> = column.get_ref().split_whitespace().collect();
                if codes.len() != row_count {
                    return Err(self.err(column, field(&format!("cells.{label}")), format!("column \"{label}\" has {} results; rows {from} to {to} need {row_count}", codes.len())));
                }
                let mut col = Vec::new();
                for code in codes {
                    col.push(self.code(
                        results,
                        code,
                        column,
                        &field(&format!("cells.{label}")),
                    )?);
                }
                cells.push(col);
            }
            for (label, at) in t.cells.get_ref() {
                if !c.labels.contains(label) {
                    return Err(self.err(
                        at,
                        field(&format!("cells.{label}")),
                        format!(
                            "\"{label}\" is not a column; columns: {}",
                            c.labels.join(", ")
                        ),
                    ));
                }
            }
            let sums = sums_of(dice, faces);
            let mut natural = Vec::new();
            for (roll, code) in &t.natural {
                let r: i64 = roll
                    .trim()
                    .parse()
                    .ok()
                    .filter(|r| sums.iter().any(|(s, _)| s == r))
                    .ok_or_else(|| {
                        self.err(
                            code,
                            field(&format!("natural.{roll}")),
                            format!(
                                "a natural roll of {dice}d{faces} is {} to {}; got \"{roll}\"",
                                dice,
                                dice * faces
                            ),
                        )
                    })?;
                natural.push((
                    r,
                    self.code(
                        results,
                        code.get_ref().trim(),
                        code,
                        &field(&format!("natural.{roll}")),
                    )?,
                ));
            }
            out.push(Table {
                name: name.clone(),
                means: t.means.clone().map(|m| limited(&m)).unwrap_or_default(),
                dice,
                faces,
                sums,
                modifier,
                row,
                rows: (from, to),
                below_rows,
                above_rows,
                columns,
                labels: c.labels.iter().map(|l| limited(l)).collect(),
                shift,
                below,
                above,
                natural,
                cells,
                edited: Vec::new(),
            });
        }
        // `roll <table>` in results names a table that exists.
        for (r, spec) in results.iter().zip(in_file_order(&self.spec.results)) {
            for s in &r.effects {
                if let Statement::Roll(t) = s {
                    if !out.iter().any(|x| x.name == *t) {
                        let known: Vec<&str> = out.iter().map(|x| x.name.as_str()).collect();
                        return Err(self.err(
                            spec.1,
                            format!("results.{}.effects", r.code),
                            format!("unknown table `{t}`; tables: {}", known.join(", ")),
                        ));
                    }
                }
            }
        }
        Ok(out)
    }

    fn phases(
        &self,
        names: &Names,
        tables: &[Table],
        sides: &[String; 2],
    ) -> Result<Vec<Phase>, AnalysisError> {
        let mut out = Vec::new();
        let list = self.spec.phases.get_ref();
        if list.is_empty() {
            return Err(self.err(
                &self.spec.phases,
                "phases",
                "a round has at least one phase: [[phases]] name = \"combat\", table = \"crt\"",
            ));
        }
        for (i, spec) in list.iter().enumerate() {
            let p = spec.get_ref();
            let field = |k: &str| format!("phases[{i}].{k}");
            let parse = |text: &str, key: &str| {
                expr::parse(text, names).map_err(|e| self.err(spec, field(key), e.0))
            };
            let when = p.when.as_deref().map(|w| parse(w, "when")).transpose()?;
            let mut effects = Vec::new();
            for (k, e) in p.effects.iter().enumerate() {
                effects.push(
                    expr::statement(e, names)
                        .map_err(|err| self.err(spec, field(&format!("effects[{k}]")), err.0))?,
                );
            }
            for s in &effects {
                if let Statement::Roll(t) = s {
                    if !tables.iter().any(|x| x.name == *t) {
                        return Err(self.err(
                            spec,
                            field("effects"),
                            format!(
                                "unknown table `{t}`; tables: {}",
                                tables
                                    .iter()
                                    .map(|x| x.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ));
                    }
                }
            }
            let kinds = [p.table.is_some(), !p.count.is_empty(), p.compare.is_some()];
            if kinds.iter().filter(|k| **k).count() > 1 {
                return Err(self.err(spec, field("table"), "a phase rolls one way: table = \"…\", [[phases.count]] pools, or [phases.compare]"));
            }
            let kind = if let Some(t) = &p.table {
                let idx = tables.iter().position(|x| x.name == *t).ok_or_else(|| {
                    self.err(
                        spec,
                        field("table"),
                        format!(
                            "unknown table `{t}`; tables: {}",
                            tables
                                .iter()
                                .map(|x| x.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })?;
                PhaseKind::Table(idx)
            } else if !p.count.is_empty() {
                let mut pools = Vec::new();
                for (k, pool) in p.count.iter().enumerate() {
                    let faces = pool.sides.unwrap_or(6);
                    if !(2..=i64::from(MAX_FACES)).contains(&faces) {
                        return Err(self.err(
                            spec,
                            field(&format!("count[{k}].sides")),
                            format!("a die has 2 to {MAX_FACES} faces; got {faces}"),
                        ));
                    }
                    let dice = parse(&pool.dice, &format!("count[{k}].dice"))?;
                    let top = dice.range(names).1;
                    if top > MAX_POOL_DICE {
                        return Err(self.err(spec, field(&format!("count[{k}].dice")), format!("a pool rolls at most {MAX_POOL_DICE} dice, and `{}` can reach {top}; cap it with min({MAX_POOL_DICE}, …) or lower the counters' max", pool.dice)));
                    }
                    pools.push(Pool {
                        into: names
                            .slot(&pool.into)
                            .map(|(s, _)| s)
                            .expect("declared in the layout"),
                        dice,
                        faces: faces as u32,
                        hits_at_most: parse(
                            &pool.hits_at_most,
                            &format!("count[{k}].hits_at_most"),
                        )?,
                    });
                }
                PhaseKind::Count(pools)
            } else if let Some(c) = &p.compare {
                let faces = c.sides.unwrap_or(6);
                if !(2..=i64::from(MAX_FACES)).contains(&faces) {
                    return Err(self.err(
                        spec,
                        field("compare.sides"),
                        format!("a die has 2 to {MAX_FACES} faces; got {faces}"),
                    ));
                }
                for k in c.dice.keys() {
                    if !sides.contains(k) {
                        return Err(self.err(
                            spec,
                            field("compare.dice"),
                            format!(
                                "compare.dice names each side: {}; got \"{k}\"",
                                sides.join(", ")
                            ),
                        ));
                    }
                }
                let mut dice = Vec::new();
                for side in sides {
                    let text = c.dice.get(side).ok_or_else(|| {
                        self.err(
                            spec,
                            field("compare.dice"),
                            format!("compare.dice.{side} is missing: how many dice {side} rolls"),
                        )
                    })?;
                    dice.push(parse(text, &format!("compare.dice.{side}"))?);
                }
                let tops: Vec<i64> = dice.iter().map(|d| d.range(names).1.max(0)).collect();
                let combos = (faces as f64).powf((tops[0] + tops[1]) as f64);
                if combos > MAX_COMPARE_COMBINATIONS as f64 {
                    return Err(self.err(spec, field("compare.dice"), format!("compared dice are enumerated: at most {MAX_COMPARE_COMBINATIONS} combinations, and {} + {} dice of {faces} faces give more; cap the dice with min(…)", tops[0], tops[1])));
                }
                let ties = sides
                    .iter()
                    .position(|s| *s == c.ties.trim())
                    .ok_or_else(|| {
                        self.err(
                            spec,
                            field("compare.ties"),
                            format!(
                                "ties go to a side: {}; got \"{}\"",
                                sides.join(" or "),
                                c.ties
                            ),
                        )
                    })?;
                let won = [0, 1].map(|k| {
                    names
                        .slot(&format!("won.{}", sides[k]))
                        .expect("declared")
                        .0
                });
                PhaseKind::Compare {
                    dice: [dice.remove(0), dice.remove(0)],
                    faces: faces as u32,
                    ties,
                    won,
                }
            } else {
                if effects.is_empty() {
                    return Err(self.err(spec, field("effects"), "a phase without dice needs effects (or give it table = …, [[phases.count]] or [phases.compare])"));
                }
                PhaseKind::Effects
            };
            out.push(Phase {
                name: limited(&p.name),
                when,
                kind,
                effects,
            });
        }
        Ok(out)
    }

    fn outcomes(&self, names: &Names) -> Result<Vec<(String, Option<Expr>)>, AnalysisError> {
        let list = self.spec.outcomes.get_ref();
        if list.is_empty() {
            return Err(self.err(&self.spec.outcomes, "outcomes", "name the ways a battle ends: [[outcomes]] name = \"attacker wins\", when = \"defender.strength == 0\"; the last takes the rest"));
        }
        let mut out: Vec<(String, Option<Expr>)> = Vec::new();
        for (i, o) in list.iter().enumerate() {
            let name = limited(o.get_ref().name.trim());
            if name.is_empty() || out.iter().any(|(n, _)| *n == name) {
                return Err(self.err(
                    o,
                    format!("outcomes[{i}].name"),
                    "each outcome has its own name",
                ));
            }
            let last = i + 1 == list.len();
            let when = match (&o.get_ref().when, last) {
                (Some(w), false) => Some(expr::parse(w, names).map_err(|e| self.err(o, format!("outcomes[{i}].when"), e.0))?),
                (None, false) => None,
                (Some(_), true) => return Err(self.err(o, format!("outcomes[{i}].when"), "the last outcome takes every battle the others do not: drop its `when` (so no battle goes unnamed)")),
                (None, true) => None,
            };
            out.push((name, when));
        }
        Ok(out)
    }
}

fn qualified(d: &Declared, sides: &[String; 2]) -> Vec<String> {
    if d.per_side {
        sides.iter().map(|s| format!("{s}.{}", d.name)).collect()
    } else {
        vec![d.name.clone()]
    }
}

fn statement_slots(statements: &[Statement], out: &mut Vec<usize>) {
    for s in statements {
        match s {
            Statement::Set { value, .. } => value.slots(out),
            Statement::Lose { amount, .. } => amount.slots(out),
            Statement::End | Statement::Roll(_) | Statement::Outcome(_) => {}
        }
    }
}

/// A text shown in reports, held to a sane length (it is escaped where shown).
fn limited(text: &str) -> String {
    text.chars().take(200).collect()
}

/// The lowest value a differential or band label covers: "-2", "+1", "3-4", "≤-3", "7+".
fn lower_bound(label: &str) -> Option<i64> {
    let t = label.trim();
    if let Some(rest) = t.strip_prefix('≤').or_else(|| t.strip_prefix("<=")) {
        return rest.trim().parse::<i64>().ok().map(|_| i64::MIN / 4);
    }
    let t = t.strip_suffix('+').unwrap_or(t);
    let first = if let Some(rest) = t.strip_prefix('-') {
        // "-3", "-3--1", "-3-0"
        let end = rest.find('-').unwrap_or(rest.len());
        format!("-{}", &rest[..end])
    } else {
        let t = t.strip_prefix('+').unwrap_or(t);
        t.split('-').next().unwrap_or(t).to_string()
    };
    first.trim().parse().ok()
}

fn check_table_cycles(
    b: &Builder,
    tables: &[Table],
    results: &[ResultCode],
) -> Result<(), AnalysisError> {
    let Some(path) = table_cycle(tables, results) else {
        return Ok(());
    };
    let start = path[0];
    let names: Vec<&str> = path.iter().map(|t| tables[*t].name.as_str()).collect();
    let at = b
        .spec
        .tables
        .get(&tables[start].name)
        .map_or(0..0, |t| t.span());
    Err(b.source.error_at(Some(b.source.line_of(at)), format!("tables.{}", tables[start].name), format!("the tables roll on each other in a cycle ({}); a result may roll on another table, never back", names.join(" → "))))
}

/// A cycle of tables whose results roll on each other (`roll <table>`), as the tables'
/// positions from the first back to it; `None` where there is none.
fn table_cycle(tables: &[Table], results: &[ResultCode]) -> Option<Vec<usize>> {
    // table → tables its results roll on
    let next = |t: &Table| -> Vec<usize> {
        let mut used: Vec<usize> = t.cells.iter().flatten().copied().collect();
        used.extend(t.natural.iter().map(|n| n.1));
        for e in [t.below, t.above, t.below_rows, t.above_rows] {
            if let Edge::Result(r) = e {
                used.push(r);
            }
        }
        used.sort_unstable();
        used.dedup();
        used.iter()
            .flat_map(|r| results[*r].effects.iter())
            .filter_map(|s| match s {
                Statement::Roll(name) => tables.iter().position(|x| x.name == *name),
                _ => None,
            })
            .collect()
    };
    let edges: Vec<Vec<usize>> = tables.iter().map(next).collect();
    for start in 0..tables.len() {
        let mut path = vec![start];
        let mut stack = vec![(start, 0usize)];
        while let Some((node, i)) = stack.pop() {
            if i < edges[node].len() {
                stack.push((node, i + 1));
                let to = edges[node][i];
                if to == start {
                    path.push(to);
                    return Some(path);
                }
                if !path.contains(&to) {
                    path.push(to);
                    stack.push((to, 0));
                }
            } else {
                path.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dice_read_as_written() {
        assert_eq!(parse_dice("2d6"), Some((2, 6)));
        assert_eq!(parse_dice("d10"), Some((1, 10)));
        assert_eq!(parse_dice("7d6"), None);
        assert_eq!(parse_dice("1d1"), None);
        let s = sums_of(2, 6);
        assert_eq!(s.first(), Some(&(2, 1)));
        assert_eq!(s.iter().find(|x| x.0 == 7), Some(&(7, 6)));
        assert_eq!(s.iter().map(|x| x.1).sum::<u128>(), 36);
    }

    #[test]
    fn band_labels_give_their_lowest_value() {
        assert_eq!(lower_bound("-2"), Some(-2));
        assert_eq!(lower_bound("+1"), Some(1));
        assert_eq!(lower_bound("3-4"), Some(3));
        assert_eq!(lower_bound("-3--1"), Some(-3));
        assert_eq!(lower_bound("7+"), Some(7));
        assert!(lower_bound("≤-3").unwrap() < -1000);
        assert_eq!(lower_bound("x"), None);
    }

    fn classic() -> Game {
        let text = crate::systems::rules_file::BUILT_IN
            .iter()
            .find(|b| b.0 == "classic_crt")
            .unwrap()
            .1;
        Game::parse(Path::new("classic_crt.toml"), text).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Each column of table `t` in codes, as the rules file writes them.
    fn columns(game: &Game, t: usize) -> Vec<String> {
        game.tables[t]
            .cells
            .iter()
            .map(|c| {
                c.iter()
                    .map(|r| game.results[*r].code.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    #[test]
    fn a_cell_edit_changes_that_cell_and_its_text_reads_back_as_the_edited_game() {
        let game = classic();
        let edited = game.with_cells(&[("crt.3:1.2", "DE")]).unwrap();
        let mut expected = columns(&game, 0);
        assert_eq!(expected[3], "DR DR DR EX AR AR");
        expected[3] = "DR DE DR EX AR AR".into();
        assert_eq!(columns(&edited, 0), expected);
        assert_eq!(edited.tables[0].edited, [(3, 1)]);
        assert!(game.tables[0].edited.is_empty());
        // The text is the rules file with that column rewritten, comments kept.
        assert_ne!(edited.text, game.text);
        assert!(edited.text.contains("\"3:1\" = \"DR DE DR EX AR AR\""));
        assert!(edited.text.contains("# Net DRM in the attacker's favour"));
        assert_eq!(edited.text.lines().count(), game.text.lines().count());
        let reread = Game::parse(Path::new("edited.toml"), &edited.text).unwrap();
        assert_eq!(columns(&reread, 0), expected);
    }

    #[test]
    fn a_column_edit_replaces_the_column_and_marks_only_the_cells_that_differ() {
        let game = classic();
        let edited = game
            .with_cells(&[("crt.3:1", "DE DR DR EX AR AR"), ("crt.1:2.6", "AR")])
            .unwrap();
        let mut expected = columns(&game, 0);
        expected[3] = "DE DR DR EX AR AR".into();
        expected[0] = "AR AE AE AE AE AR".into();
        assert_eq!(columns(&edited, 0), expected);
        assert_eq!(edited.tables[0].edited, [(0, 5), (3, 0)]);
        // Single cells apply on top of whole columns, whatever the order given.
        for edits in [
            [("crt.3:1.1", "AE"), ("crt.3:1", "DE DR DR EX AR AR")],
            [("crt.3:1", "DE DR DR EX AR AR"), ("crt.3:1.1", "AE")],
        ] {
            let e = game.with_cells(&edits).unwrap();
            assert_eq!(columns(&e, 0)[3], "AE DR DR EX AR AR");
            assert_eq!(e.tables[0].edited, [(3, 0)]);
        }
        // An edit that gives the printed results changes nothing, text included.
        let same = game
            .with_cells(&[("crt.2:1", "DR  AR EX AR AR AE"), ("crt.6:1.1", "DE")])
            .unwrap();
        assert_eq!(same.text, game.text);
        assert!(same.tables[0].edited.is_empty());
    }

    #[test]
    fn bad_cell_edits_are_refused_with_what_is_allowed() {
        let game = classic();
        let refused = |edits: &[(&str, &str)]| game.with_cells(edits).unwrap_err();
        let e = refused(&[("crt.3:1.2", "DE"), ("crs.3:1", "DE")]);
        assert_eq!(e.edit, Some(1));
        assert_eq!(
            e.message,
            "the rules file \"Classic odds CRT\" has no table \"crs\"; tables: crt"
        );
        let e = refused(&[("crt.7:1.2", "DE")]);
        assert_eq!(e.edit, Some(0));
        assert!(
            e.message.starts_with(
                "table crt has no column \"7:1\"; columns: 1:2, 1:1, 2:1, 3:1, 4:1, 5:1, 6:1"
            ),
            "{}",
            e.message
        );
        let e = refused(&[("crt.3:1.7", "DE")]);
        assert_eq!(e.message, "table crt has no row \"7\"; rows: 1 to 6");
        assert_eq!(
            refused(&[("crt.3:1.x", "DE")]).message,
            "table crt has no row \"x\"; rows: 1 to 6"
        );
        assert_eq!(
            refused(&[("crt.3:1.2", "DX")]).message,
            "unknown result code \"DX\"; the rules file's codes: AE, AR, DR, DE, EX"
        );
        assert_eq!(
            refused(&[("crt.3:1", "DE DR DR EX AR")]).message,
            "column \"3:1\" of table crt has 5 results here; rows 1 to 6 need 6, one per row, top to bottom, separated by spaces (codes: AE, AR, DR, DE, EX)"
        );
        assert!(refused(&[("crt.3:1", "DE DR DR EX AR XX")])
            .message
            .starts_with("unknown result code \"XX\""));
        assert!(refused(&[("crt.3:1.2", "DE DR")])
            .message
            .starts_with("one cell takes one result code, got \"DE DR\""));
        assert!(refused(&[("crt", "DE")])
            .message
            .starts_with("a cell edit's key is \"<table>.<column>\""));
        let e = refused(&[("crt.3:1.2", "DE"), ("crt.3:1.02", "AE")]);
        assert_eq!(e.edit, Some(1));
        assert_eq!(
            e.message,
            "this cell is edited twice (also by \"crt.3:1.2\"); keep one"
        );
    }

    /// Two tables read by position, one of whose labels has dots; `R` rolls on `second`,
    /// `Q` on `first`.
    const TWO_TABLES: &str = r#"
name = "two tables"
sides = ["a", "b"]
[parameters]
ground = { min = 0, max = 1, default = 0 }
[counters]
lost = { min = 0, max = 1, start = 0 }
[tables.first]
dice = "1d6"
rows = { from = 1, to = 6 }
columns = { index = "ground", labels = ["open", "v.1.2"] }
cells = { open = "R N N N N N", "v.1.2" = "N N N N N N" }
[tables.second]
dice = "1d6"
rows = { from = 1, to = 6 }
columns = { index = "0", labels = ["only"] }
cells = { only = "N N N N N L" }
[results]
R = { effects = ["roll second"] }
Q = { effects = ["roll first"] }
N = { effects = [] }
L = { effects = ["a.lost = 1"] }
[battle]
round_limit = 1
[[phases]]
name = "fire"
table = "first"
[[outcomes]]
name = "all"
"#;

    #[test]
    fn a_label_with_dots_is_a_whole_column_when_the_key_names_it_and_cycles_are_refused() {
        let game = Game::parse(Path::new("two.toml"), TWO_TABLES).unwrap_or_else(|e| panic!("{e}"));
        let whole = game.with_cells(&[("first.v.1.2", "L L L L L L")]).unwrap();
        assert_eq!(columns(&whole, 0)[1], "L L L L L L");
        let cell = game.with_cells(&[("first.v.1.2.3", "L")]).unwrap();
        assert_eq!(columns(&cell, 0)[1], "N N L N N N");
        assert_eq!(cell.tables[0].edited, [(1, 2)]);
        let reread = Game::parse(Path::new("edited.toml"), &cell.text).unwrap();
        assert_eq!(columns(&reread, 0), columns(&cell, 0));
        // `first` rolls `second` (R); a Q in `second` would roll `first` again.
        let e = game.with_cells(&[("second.only.2", "Q")]).unwrap_err();
        assert_eq!(e.edit, None);
        assert_eq!(e.message, "with these cells the tables roll on each other in a cycle (first → second → first); a result may roll on another table, never back");
    }
}
