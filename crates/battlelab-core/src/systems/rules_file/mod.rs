//! Rules files (docs/rules-files.md): a designer's own combat system, written as the
//! rulebook prints it in a TOML file, run by every capability with no code per file.
//!
//! Why this module exists: the built-in systems cover five published games; this one
//! covers the rest. A rules file declares sides, parameters, counters, tables (columns by
//! odds, differential, band or name; rows by the modified roll; cells are result codes),
//! result codes with their effects, the phases of a round, the end, outcomes and metrics
//! (`game.rs`). An analysis file (`system = "rules"`) names the rules file, sets its
//! parameters and counters per side, sweeps them and compares variants. Each run's
//! battle is compiled into a Markov chain over its bounded state (`chain.rs`): solved
//! exactly (fractions) where it has no cycle but a round that changes nothing, and
//! walked by the Monte Carlo kernel (`kernel.rs`); where the chain is too large, a step
//! interpreter plays the same rounds from the dice.
//!
//! ```toml
//! system = "rules"
//! rules = "../rules/classic_crt.toml"
//!
//! [sides.attacker]
//! strength = 6
//! leader = 1
//!
//! [sides.defender]
//! strength = 3
//!
//! [parameters]
//! terrain = 1
//!
//! [sweep]
//! attacker.strength = { from = 1, to = 12 }
//! ```

pub mod chain;
pub mod equilibrium;
pub mod expr;
pub mod game;
pub mod kernel;
pub mod one_roll;
pub mod printed;
#[doc(hidden)]
pub mod scenarios;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use num_rational::BigRational;
use num_traits::Zero;
use serde_json::json;
use toml::Spanned;

use crate::analysis::{self, AnalysisError, AxisValue, Source, SweepAxis};
use crate::engine::headline::{Headline, Match};
use crate::header::{analysis_file, variant_table, AnalysisHeader};
use crate::keys::{self, key, KeyDoc, SystemDoc, Ty, ValueDoc, REQUIRED};
use crate::systems::rules_file::chain::{Chain, Prepared, TooLarge};
use crate::systems::rules_file::game::Game;
use crate::systems::rules_file::kernel::{RulesCounts, Walk};

/// A validated rules-file study.
#[derive(Debug, Clone)]
pub struct RulesStudy {
    pub header: AnalysisHeader,
    /// The sides' names (`sides.<side>.name`; the rules file's keys unless named).
    pub side_names: [String; 2],
    pub variants: Vec<RulesVariant>,
    pub axes: Vec<SweepAxis>,
    pub runs: Vec<RulesRun>,
    /// What a designer should know about how the runs are made (exact turned off, the
    /// step interpreter used), once each.
    pub notices: Vec<String>,
}

/// A variant: its name and the rules it fights by.
#[derive(Debug, Clone)]
pub struct RulesVariant {
    pub name: String,
    /// The rules file as the analysis names it.
    pub rules_path: PathBuf,
    pub game: Arc<Game>,
    pub compare: Arc<Prepared>,
}

/// One run: a variant at a grid point, its start and how it is simulated.
#[derive(Debug, Clone)]
pub struct RulesRun {
    pub variant: usize,
    pub coordinates: Vec<AxisValue>,
    /// The evaluation frame at the start: parameters and counters set.
    pub base: Vec<i64>,
    /// The settings as run, `(name, value)`, in the rules file's order.
    pub settings: Vec<(String, i64)>,
    /// Each side's policy for each choice as run, `(side.choice, in words)`: `"charge"`,
    /// `"uniform"`, `"charge 2, envelop 1"`.
    pub policies: Vec<(String, String)>,
    pub form: Form,
}

/// How a run is simulated.
#[derive(Debug, Clone)]
pub enum Form {
    /// The compiled chain, walked (and solved exactly where it can be). The walk's tables
    /// are built the first time a battle is simulated (a run asked only for exact results
    /// never builds them).
    Chain {
        chain: Arc<Chain>,
        walk: Arc<std::sync::OnceLock<Walk>>,
    },
    /// The step interpreter: the chain would be too large (the reason).
    Steps(String),
}

analysis_file! {
    struct RulesAnalysis {
        exact,
        rules: Spanned<String>,
        sides: Option<BTreeMap<String, Spanned<toml::Table>>>,
        parameters: Option<Spanned<toml::Table>>,
        sweep: Option<BTreeMap<String, Spanned<toml::Value>>>,
        variant: Option<Vec<VariantSpec>>,
    }
}

variant_table! {
    struct VariantSpec {
        rules: Option<Spanned<String>>,
        sides: Option<BTreeMap<String, Spanned<toml::Table>>>,
        parameters: Option<Spanned<toml::Table>>,
        /// Cell edits of the rules' tables: `"<table>.<column>"` (a whole column) or
        /// `"<table>.<column>.<row>"` (one cell) = result codes ([`Game::with_cells`]).
        cells: Option<Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
    }
}

/// Every key of a rules analysis (`battlelab keys rules`); the rules file's own keys are
/// in [`RULES_FILE_KEYS`].
pub const KEYS: &[&[KeyDoc]] = &[keys::HEADER, keys::EXACT, ANALYSIS_KEYS, keys::EXPECT_VALUE];

const ANALYSIS_KEYS: &[KeyDoc] = &[
    key("rules", Ty::Text, REQUIRED, "the rules file: a path relative to this file, or the name of one shipped with the tool (classic_crt, risk, dice_pool, attrition, …: `battlelab keys rules-file` lists them)", "\"../rules/classic_crt.toml\""),
    key("sides.<side>.name", Ty::Text, "the side's key", "the side's name in reports", "\"Blue\""),
    key("sides.<side>.<setting>", Ty::Int(-game::MAX_SPAN, game::MAX_SPAN), "the rules file's default", "a per-side parameter's value or counter's start, as the rules file declares them (`battlelab keys <rules file>`); swept as [sweep] \"<side>.<setting>\" = …", "1").in_variant(),
    key("parameters.<setting>", Ty::Int(-game::MAX_SPAN, game::MAX_SPAN), "the rules file's default", "a parameter (or counter start) of the whole battle", "1").sweep("<setting>").in_variant(),
    key("sweep.<setting>", Ty::SweepOrOptions, "not swept", "a setting the runs step through: a parameter (`terrain`) or a per-side setting (\"attacker.strength\", quoted) as whole numbers, a side's policy (\"a.tactic\") as a list of options or \"uniform\"", "[1, 2]"),
    key("sides.<side>.<choice>", Ty::Any, "\"uniform\"", "the side's policy for a choice the rules file declares ([choices.<choice>]), every round: an option (\"charge\"), \"uniform\", or whole-number weights { charge = 2, envelop = 1 } adding up to 1 to 10000 (exact results use these very weights); swept as [sweep] \"<side>.<choice>\" = [\"charge\", \"uniform\"]", "{ charge = 2, envelop = 1 }").in_variant(),
    key("[[variant]].name", Ty::Text, REQUIRED, "the variant's name", "\"printed\""),
    key("[[variant]].description", Ty::Text, "none", "what the variant changes", "\"as printed\""),
    key("[[variant]].rules", Ty::Text, "the analysis's rules file", "another rules file this variant fights by (compare two versions of your rules)", "\"../rules/classic_crt.toml\""),
    key("[[variant]].cells.<cell>", Ty::Text, "as the rules file prints it", "a cell edit of this variant's rules: \"<table>.<column>\" = a whole column, one result code per row, separated by spaces, as [tables.<table>.cells] writes it; \"<table>.<column>.<row>\" = one cell's code (the table is what comes before the first dot, the row what follows the last; whole columns apply first; edited cells are marked * in tables.md)", "\"DE DR DR EX AR AR\""),
];

/// The rules file's own keys (`battlelab keys rules-file`): what docs/rules-files.md
/// explains step by step.
pub const RULES_FILE_KEYS: &[KeyDoc] = &[
    key("name", Ty::Text, REQUIRED, "the game's name", "\"Classic CRT\""),
    key("description", Ty::Text, "none", "one line on the game", "\"odds CRT, one roll\""),
    key("sides", Ty::TextList, REQUIRED, "the two sides' keys, used in names (attacker.strength)", "[\"attacker\", \"defender\"]"),
    key("parameters.<name>.min", Ty::Int(-game::MAX_SPAN, game::MAX_SPAN), REQUIRED, "a parameter's lowest value (parameters never change in a battle)", "0"),
    key("parameters.<name>.max", Ty::Int(-game::MAX_SPAN, game::MAX_SPAN), REQUIRED, "its highest value", "2"),
    key("parameters.<name>.default", Ty::Int(-game::MAX_SPAN, game::MAX_SPAN), "none: the analysis must set it", "its value when the analysis does not set it", "0"),
    key("parameters.<name>.per_side", Ty::Bool, "false", "true: each side has its own (attacker.leader, defender.leader)", "true"),
    key("parameters.<name>.means", Ty::Text, "none", "what it is, for keys and reports", "\"leader rating\""),
    key("counters.<name>.min", Ty::Int(-game::MAX_SPAN, game::MAX_SPAN), REQUIRED, "a counter's lowest value (counters change in battle; effects are held to the range)", "0"),
    key("counters.<name>.max", Ty::Int(-game::MAX_SPAN, game::MAX_SPAN), REQUIRED, "its highest value", "30"),
    key("counters.<name>.start", Ty::Int(-game::MAX_SPAN, game::MAX_SPAN), "none: the analysis must set it", "its value at the start", "0"),
    key("counters.<name>.per_side", Ty::Bool, "true", "false: one counter for the battle", "false"),
    key("counters.<name>.means", Ty::Text, "none", "what it counts", "\"strength points\""),
    key("scratch.<name>.min", Ty::Int(-game::MAX_SPAN, 0), REQUIRED, "a scratch value's lowest value: a number a round works with (set by effects, read by later phases), 0 at the start of every round and forgotten at its end, so never part of the state", "-6"),
    key("scratch.<name>.max", Ty::Int(0, game::MAX_SPAN), REQUIRED, "its highest value (effects are held to the range)", "6"),
    key("scratch.<name>.per_side", Ty::Bool, "false", "true: each side has its own (attacker.loss, defender.loss)", "true"),
    key("scratch.<name>.means", Ty::Text, "none", "what it holds", "\"the tactical matrix's DRM this round\""),
    key("choices.<name>.options", Ty::TextList, REQUIRED, "what each side picks from every round, before the phases (the analysis gives each side's policy: sides.<side>.<name>); phases read the pick as <side>.<name> (0 for the first option), and each option is the constant <name>.<option>", "[\"charge\", \"envelop\", \"withdraw\"]"),
    key("choices.<name>.means", Ty::Text, "none", "what the choice is", "\"the tactic each side picks\""),
    key("tables.<name>.dice", Ty::Text, "none: a lookup, read by row with no roll", "the dice rolled, summed: NdS (1 to 6 dice of 2 to 100 faces); leave it out for a table read with no dice (a tactical matrix, a loss chart), whose row is then given", "\"1d6\""),
    key("tables.<name>.modifier", Ty::Text, "0", "the net DRM (an expression; caps with clamp)", "\"clamp(attacker.leader - defender.leader, -2, 2)\""),
    key("tables.<name>.row", Ty::Text, "roll + modifier (required with no dice)", "the row read (an expression of roll and modifier, or of anything a phase sees)", "\"roll - modifier\""),
    key("tables.<name>.rows", Ty::Text, REQUIRED, "the rows printed: { from, to } modified rolls", "{ from = 1, to = 6 }"),
    key("tables.<name>.below_rows", Ty::Text, "clamp", "a modified roll under the first row: clamp (read the first) or a result code", "\"clamp\""),
    key("tables.<name>.above_rows", Ty::Text, "clamp", "a modified roll over the last row: clamp or a result code", "\"clamp\""),
    key("tables.<name>.columns.labels", Ty::TextList, REQUIRED, "the columns as printed, left to right", "[\"1:2\", \"1:1\", \"2:1\"]"),
    key("tables.<name>.columns.odds", Ty::TextList, "none", "columns by odds: [attacker's strength, defender's strength] (labels are ratios)", "[\"attacker.strength\", \"defender.strength\"]"),
    key("tables.<name>.columns.round", Ty::OneOf(&["down", "up", "nearest"]), "down", "odds between columns read down (the defender's favour), up, or to the nearest column (halfway reads the higher; odds under the first or over the last meet below/above)", "\"down\""),
    key("tables.<name>.columns.at_least", Ty::Text, "none", "columns by a value (differential, band): labels are each column's lowest value", "\"attacker.strength - defender.strength\""),
    key("tables.<name>.columns.index", Ty::Text, "none", "columns by position: the value 0 reads the first (terrain by name)", "\"terrain\""),
    key("tables.<name>.columns.shift", Ty::Text, "0", "columns to shift right (negative: left)", "\"-terrain\""),
    key("tables.<name>.columns.below", Ty::Text, "clamp", "left of the first column: clamp or a result code (an automatic result, no roll)", "\"AE\""),
    key("tables.<name>.columns.above", Ty::Text, "clamp", "right of the last column: clamp or a result code", "\"clamp\""),
    key("tables.<name>.natural.<roll>", Ty::Text, "none", "a natural roll's result whatever the modifiers", "\"DE\""),
    key("tables.<name>.cells.<column>", Ty::Text, REQUIRED, "a column's results, one per row, top to bottom, separated by spaces", "\"AR AE AE AE AE AE\""),
    key("tables.<name>.means", Ty::Text, "none", "the table's title", "\"Combat Results Table\""),
    key("results.<code>.effects", Ty::TextList, "none", "what the result does, in order: counter = value, +=, -= (a counter or a scratch value), lose(side, n, counter, …), roll <table>, outcome <name>, end", "[\"defender.lost = defender.strength\"]"),
    key("results.<code>.means", Ty::Text, "none", "what the code means", "\"defender eliminated\""),
    key("battle.round_limit", Ty::Text, "none", "the most rounds (1: a single roll): a number 1 to 1000, or an expression of the parameters read per run (\"round_limit\")", "1"),
    key("battle.end", Ty::Text, "none", "a condition checked at the start and after every round: the battle is over", "\"attacker.armies <= 1 or defender.armies == 0\""),
    key("battle.rounds_remembered", Ty::Text, "the round limit", "the highest round number a rule tells apart (needed when a rule reads round and there is no limit): a number, or an expression of the parameters", "\"retreat_from\""),
    key("[[phases]].name", Ty::Text, REQUIRED, "the phase's name", "\"combat\""),
    key("[[phases]].when", Ty::Text, "always", "a condition: the phase happens only when it holds", "\"round >= 1\""),
    key("[[phases]].table", Ty::Text, "none", "the table rolled on; its result's effects apply", "\"crt\""),
    key("[[phases]].count.into", Ty::Text, REQUIRED, "a pool of dice: the name its hits are counted into", "\"attacker_hits\""),
    key("[[phases]].count.dice", Ty::Text, REQUIRED, "how many dice (an expression)", "\"attacker.infantry\""),
    key("[[phases]].count.sides", Ty::Int(2, 100), "6", "the dice's faces", "6"),
    key("[[phases]].count.hits_at_most", Ty::Text, REQUIRED, "a die hits at or under this (an expression)", "\"2\""),
    key("[[phases]].compare.dice.<side>", Ty::Text, REQUIRED, "dice each side rolls, sorted high to low and compared pair by pair", "\"min(3, attacker.armies - 1)\""),
    key("[[phases]].compare.sides", Ty::Int(2, 100), "6", "the dice's faces", "6"),
    key("[[phases]].compare.ties", Ty::Text, REQUIRED, "the side that wins a tie; pairs won are won.<side>", "\"defender\""),
    key("[[phases]].effects", Ty::TextList, "none", "effects after the phase's roll (as results' effects)", "[\"attacker.armies -= won.defender\"]"),
    key("[[outcomes]].name", Ty::Text, REQUIRED, "a way the battle ends", "\"attacker wins\""),
    key("[[outcomes]].when", Ty::Text, "the last: the rest", "the condition, read at the end; the first that holds names the battle", "\"defender.armies == 0\""),
    key("[[metrics]].name", Ty::Text, REQUIRED, "a number counted at the end of each battle (a histogram; its mean in metrics)", "\"armies_left_attacker\""),
    key("[[metrics]].value", Ty::Text, REQUIRED, "its value: an expression of the final state (0 or more)", "\"attacker.armies\""),
];

/// This system in [`crate::systems::REGISTRY`].
pub const REGISTRATION: crate::systems::Registration = crate::systems::Registration {
    folder: "rules_file",
    docs: &[DOC],
    benches: &["rules_file"],
    one_roll: &[one_roll::RULES_TABLE],
    parse: |path, text, files| crate::systems::study(RulesStudy::parse_with(path, text, files)),
};

/// `battlelab keys rules` and `battlelab new rules`.
pub const DOC: SystemDoc = SystemDoc {
    name: "rules",
    summary: "your own rules (docs/systems/rules.md, docs/rules-files.md): a combat system written in a rules file, run exactly where its chain is small",
    keys: KEYS,
    starter: "system = \"rules\"\nrules = \"classic_crt\"   # a rules file: a path relative to this file, or a shipped one's name\ntrials = 10_000\n\n[sides.attacker]\nstrength = 6\nleader = 1\n\n[sides.defender]\nstrength = 3\n\n[parameters]\nterrain = 0\n\n[sweep]\nterrain = [0, 1, 2]\n",
    value: ValueDoc {
        headlines,
        default_modifiers: &[],
        currency: None,
        odds_columns: None,
    },
    companion: Some(&COMPANION),
};

/// The rules file an analysis names (`rules = …`): its format's documentation, and the
/// settings it declares — each a lever of `value` and `solve`.
pub const COMPANION: crate::keys::Companion = crate::keys::Companion {
    key: "rules",
    doc: &RULES_FILE_DOC,
    suffix: "rules",
    settings: |files, analysis, given| {
        let (path, text) = read_rules_from(files, analysis, given)?;
        let game = Game::parse(&path, &text).map_err(|e| e.to_string())?;
        Ok(file_settings(&game))
    },
    settings_of_file: |path| {
        let text = crate::toml_input::read_analysis_file(path)?;
        Ok(file_settings(&Game::parse(path, &text)?))
    },
};

/// A rules file's settings, and a headline per outcome and metric.
fn file_settings(game: &Game) -> crate::keys::FileSettings {
    let settings = game
        .settings()
        .into_iter()
        .map(|(name, d, counter)| crate::keys::FileSetting {
            key: match name.split_once('.') {
                Some((side, setting)) => format!("sides.{side}.{setting}"),
                None => format!("parameters.{name}"),
            },
            name,
            kind: if counter {
                "counter (its start)"
            } else {
                "parameter"
            }
            .to_string(),
            default: d.default,
            min: d.min,
            max: d.max,
            meaning: d.means.clone(),
        })
        .collect();
    let mut headlines: Vec<Headline> = game
        .outcomes
        .iter()
        .map(|(name, _)| {
            let key = column_name(name);
            Headline::outcomes(&key, &format!("P({name})"), Match::Is(vec![name.clone()]))
        })
        .collect();
    headlines.extend(
        game.metrics
            .iter()
            .map(|(name, _, _)| Headline::metric(name)),
    );
    crate::keys::FileSettings {
        title: game.name.clone(),
        settings,
        headlines,
    }
}

/// An outcome's name as a column or headline key: lowercase letters, digits and `_`
/// (`attacker wins` → `attacker_wins`), the one spelling `value`, `solve` and the
/// report's frames share.
pub fn column_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The rules file's own keys as a document of their own: `battlelab keys rules-file`,
/// `battlelab new rules-file` (a commented starting rules file) and
/// `battlelab schema rules-file`. Not a system: an analysis names a rules file with
/// `system = "rules"`.
pub const RULES_FILE_DOC: SystemDoc = SystemDoc {
    name: "rules-file",
    summary: "the rules file an analysis of system \"rules\" names (docs/rules-files.md): your combat system as data",
    keys: &[RULES_FILE_KEYS],
    starter: RULES_STARTER,
    value: ValueDoc {
        headlines,
        default_modifiers: &[],
        currency: None,
        odds_columns: None,
    },
    companion: None,
};

/// The starting rules file `battlelab new rules-file` (and `new rules`) writes: a small
/// odds CRT, every part commented, ready to run and to change.
pub const RULES_STARTER: &str = r#"# A rules file: your combat system as the rulebook prints it (docs/rules-files.md).
# Run it from an analysis file with system = "rules" and rules = "<this file>".

name = "My CRT"
description = "one roll on an odds CRT with a capped leader DRM"
sides = ["attacker", "defender"]          # the two sides' keys: attacker.strength, defender.leader

# Parameters never change during a battle; the analysis sets, sweeps and prices them.
[parameters]
leader = { per_side = true, min = 0, max = 2, default = 0, means = "leader rating" }
terrain = { min = 0, max = 2, default = 0, means = "0 clear, 1 woods, 2 city: columns to the left" }

# Counters are the state a battle changes (here: what each side loses). Every counter
# has bounds; start is its value at the start unless the analysis sets it.
[counters]
strength = { min = 0, max = 40, means = "combat strength" }
lost = { min = 0, max = 40, start = 0, means = "strength lost" }

# A table as printed: dice, how a column is picked, the modified roll's row, the cells.
[tables.crt]
means = "Combat Results Table"
dice = "1d6"
modifier = "clamp(attacker.leader - defender.leader, -1, 1)"   # the net DRM, capped at ±1
row = "roll + modifier"                                         # the row read; rows beyond the table read the nearest
rows = { from = 1, to = 6 }
columns = { odds = ["attacker.strength", "defender.strength"], round = "down", labels = ["1:1", "2:1", "3:1"], shift = "-terrain", below = "AR" }

[tables.crt.cells]                 # each column's results from the first row to the last
"1:1" = "AR AR AR EX EX DR"
"2:1" = "AR EX EX DR DR DE"
"3:1" = "EX EX DR DR DE DE"

# Each result code once, with what it does.
[results]
AR = { means = "attacker retreats", effects = ["outcome attacker retreats"] }
DR = { means = "defender retreats", effects = ["outcome defender retreats"] }
EX = { means = "exchange: both lose 1", effects = ["attacker.lost = 1", "defender.lost = 1", "outcome exchange"] }
DE = { means = "defender eliminated", effects = ["defender.lost = defender.strength", "outcome defender eliminated"] }

[battle]
round_limit = 1                    # one roll; for battles of rounds, give `end = "<condition>"`

[[phases]]
name = "combat"
table = "crt"

# The ways a battle ends: named by a result (`outcome …`), else the first whose `when`
# holds, else the last.
[[outcomes]]
name = "attacker retreats"

[[outcomes]]
name = "defender retreats"

[[outcomes]]
name = "exchange"

[[outcomes]]
name = "defender eliminated"

# Numbers counted at the end of every battle (their means and distributions).
[[metrics]]
name = "strength_lost_attacker"
value = "attacker.lost"

[[metrics]]
name = "strength_lost_defender"
value = "defender.lost"
"#;

/// What `value` reads first: the first outcome.
fn headlines() -> Vec<Headline> {
    vec![Headline::outcomes(
        "first_outcome",
        "P(first outcome)",
        Match::Contains(String::new()),
    )]
}

fn int_of(
    source: &Source,
    table: &Spanned<toml::Table>,
    key: &str,
    field: &str,
) -> Result<i64, AnalysisError> {
    match table.get_ref().get(key) {
        Some(toml::Value::Integer(v)) => Ok(*v),
        Some(other) => Err(source.error(
            table,
            field,
            format!("a setting is a whole number, got {other}"),
        )),
        None => unreachable!("read from the table's own keys"),
    }
}

/// What an analysis sets for one name: a whole number (a parameter or a counter's start),
/// or a side's policy over a choice's options.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Setting {
    Int(i64),
    /// Weights, one per option (whole numbers, total 1 to [`game::MAX_MIX_WEIGHT`]).
    Policy(Vec<i64>),
}

/// A side's policy for `choice` as the analysis writes it: an option (`"charge"`),
/// `"uniform"`, or whole-number weights (`{ charge = 2, envelop = 1 }`).
fn policy_of(value: &toml::Value, choice: &game::Choice) -> Result<Vec<i64>, String> {
    let n = choice.options.len();
    let wanted = || {
        format!(
            "a policy for {} is an option (\"{}\"), \"uniform\", or whole-number weights ({{ {} = 2, … }}, adding up to 1 to {}); options: {}",
            choice.name,
            choice.options[0],
            choice.options[0],
            game::MAX_MIX_WEIGHT,
            choice.options.join(", ")
        )
    };
    match value {
        toml::Value::String(s) if s.trim() == "uniform" => Ok(vec![1; n]),
        toml::Value::String(s) => match choice.options.iter().position(|o| o == s.trim()) {
            Some(k) => {
                let mut w = vec![0; n];
                w[k] = 1;
                Ok(w)
            }
            None => Err(format!("unknown option \"{s}\"; {}", wanted())),
        },
        toml::Value::Table(t) => {
            let mut w = vec![0i64; n];
            for (option, weight) in t {
                let k = choice
                    .options
                    .iter()
                    .position(|o| o == option)
                    .ok_or_else(|| format!("unknown option \"{option}\"; {}", wanted()))?;
                w[k] = weight
                    .as_integer()
                    .filter(|x| (0..=game::MAX_MIX_WEIGHT).contains(x))
                    .ok_or_else(|| {
                        format!(
                            "the weight of {option} is a whole number 0 to {}, got {weight}; {}",
                            game::MAX_MIX_WEIGHT,
                            wanted()
                        )
                    })?;
            }
            let total: i64 = w.iter().sum();
            if !(1..=game::MAX_MIX_WEIGHT).contains(&total) {
                return Err(format!("the weights add up to {total}; {}", wanted()));
            }
            Ok(w)
        }
        _ => Err(wanted()),
    }
}

/// A policy in words: `charge`, `uniform`, or `charge 2, envelop 1`.
fn describe_policy(choice: &game::Choice, weights: &[i64]) -> String {
    let used: Vec<usize> = (0..weights.len()).filter(|k| weights[*k] > 0).collect();
    if used.len() == 1 {
        return choice.options[used[0]].clone();
    }
    if used.len() == weights.len() && weights.iter().all(|w| *w == weights[0]) {
        return "uniform".into();
    }
    used.iter()
        .map(|k| format!("{} {}", choice.options[*k], weights[*k]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The settings a file (or a variant) gives: `(name as in a sweep, value)`.
fn settings_of(
    source: &Source,
    sides: Option<&BTreeMap<String, Spanned<toml::Table>>>,
    parameters: Option<&Spanned<toml::Table>>,
    prefix: &str,
    game: &Game,
) -> Result<Vec<(String, Setting)>, AnalysisError> {
    let known = game.settings();
    let names: Vec<String> = known.iter().map(|s| s.0.clone()).collect();
    let mut out = Vec::new();
    for (side, table) in sides.into_iter().flatten() {
        if !game.sides.contains(side) {
            return Err(source.error(
                table,
                format!("{prefix}sides.{side}"),
                format!(
                    "the rules file's sides are {}; \"{side}\" is not one of them",
                    game.sides.join(" and ")
                ),
            ));
        }
        for key in table.get_ref().keys() {
            if key == "name" {
                continue;
            }
            let name = format!("{side}.{key}");
            let field = format!("{prefix}sides.{name}");
            if let Some(choice) = game.choice(key) {
                let value = &table.get_ref()[key];
                let weights =
                    policy_of(value, choice).map_err(|m| source.error(table, &field, m))?;
                out.push((name, Setting::Policy(weights)));
                continue;
            }
            if !names.contains(&name) {
                let hint = crate::toml_input::closest(&name, names.iter().map(String::as_str))
                    .map(|c| format!(" (did you mean {c}?)"))
                    .unwrap_or_default();
                let choices: Vec<&str> = game.choices.iter().map(|c| c.name.as_str()).collect();
                let choices = if choices.is_empty() {
                    String::new()
                } else {
                    format!("; choices (a policy per side): {}", choices.join(", "))
                };
                return Err(source.error(table, &field, format!("the rules file \"{}\" declares no per-side setting \"{key}\"{hint}; settings: {}{choices}", game.name, names.join(", "))));
            }
            let value = int_of(source, table, key, &field)?;
            within_declared_range(source, table, &field, &known, &name, value)?;
            out.push((name, Setting::Int(value)));
        }
    }
    if let Some(table) = parameters {
        for key in table.get_ref().keys() {
            let field = format!("{prefix}parameters.{key}");
            if !names.contains(key) {
                let hint = crate::toml_input::closest(key, names.iter().map(String::as_str))
                    .map(|c| format!(" (did you mean {c}?)"))
                    .unwrap_or_default();
                return Err(source.error(table, &field, format!("the rules file \"{}\" declares no battle-wide setting \"{key}\"{hint}; settings: {}", game.name, names.join(", "))));
            }
            let value = int_of(source, table, key, &field)?;
            within_declared_range(source, table, &field, &known, key, value)?;
            out.push((key.clone(), Setting::Int(value)));
        }
    }
    Ok(out)
}

/// A setting the analysis gives is within the range its rules file declares.
fn within_declared_range(
    source: &Source,
    table: &Spanned<toml::Table>,
    field: &str,
    known: &[(String, &game::Declared, bool)],
    name: &str,
    value: i64,
) -> Result<(), AnalysisError> {
    let Some((_, decl, _)) = known.iter().find(|s| s.0 == name) else {
        return Ok(());
    };
    if value < decl.min || value > decl.max {
        return Err(source.error(
            table,
            field,
            format!(
                "{name} must be {} to {} (the rules file's range), got {value}",
                decl.min, decl.max
            ),
        ));
    }
    Ok(())
}

/// The rules files shipped with the tool (the files in the repository's `rules/`), by the
/// name an analysis may give instead of a path (`rules = "risk"`).
pub const BUILT_IN: &[(&str, &str)] = &[
    (
        "classic_crt",
        include_str!("../../../../../rules/classic_crt.toml"),
    ),
    ("risk", include_str!("../../../../../rules/risk.toml")),
    (
        "dice_pool",
        include_str!("../../../../../rules/dice_pool.toml"),
    ),
    (
        "attrition",
        include_str!("../../../../../rules/attrition.toml"),
    ),
    ("march", include_str!("../../../../../rules/march.toml")),
    ("naval", include_str!("../../../../../rules/naval.toml")),
    (
        "blockade",
        include_str!("../../../../../rules/blockade.toml"),
    ),
    ("pursuit", include_str!("../../../../../rules/pursuit.toml")),
    (
        "transport",
        include_str!("../../../../../rules/transport.toml"),
    ),
    ("storm", include_str!("../../../../../rules/storm.toml")),
    (
        "naval_engagement",
        include_str!("../../../../../rules/naval_engagement.toml"),
    ),
    ("field", include_str!("../../../../../rules/field.toml")),
];

/// The rules file an analysis at `analysis` names with `given`: a path relative to the
/// analysis, or a shipped one's name (a name without `/`, `\` or `.`). Returns the path
/// errors name and the text; the message of an error says what was looked for.
pub fn read_rules(analysis: &Path, given: &str) -> Result<(PathBuf, String), String> {
    read_rules_from(&crate::files::Disk, analysis, given)
}

/// [`read_rules`], reading a path from `files` (the disk, or files handed over in memory).
pub fn read_rules_from(
    files: &dyn crate::files::Files,
    analysis: &Path,
    given: &str,
) -> Result<(PathBuf, String), String> {
    let given = given.trim();
    if given.is_empty() {
        return Err(
            "name the rules file: a path relative to this file, or a shipped one's name".into(),
        );
    }
    if !given.contains(['/', '\\', '.']) {
        let names: Vec<&str> = BUILT_IN.iter().map(|b| b.0).collect();
        return BUILT_IN
            .iter()
            .find(|b| b.0 == given)
            .map(|b| (PathBuf::from(format!("{given} (shipped rules)")), b.1.to_string()))
            .ok_or_else(|| format!("no shipped rules file is called \"{given}\"; give a path (rules/{given}.toml) or one of: {}", names.join(", ")));
    }
    let path = analysis
        .parent()
        .map_or_else(|| PathBuf::from(given), |dir| dir.join(given));
    match files.read(&path) {
        Ok(text) => Ok((path, text)),
        Err(AnalysisError::Read { source: io, .. }) => Err(format!(
            "cannot read the rules file \"{given}\" (a path relative to this analysis file: {}): {io}",
            path.display()
        )),
        Err(other) => Err(other.to_string()),
    }
}

fn load_game(
    files: &dyn crate::files::Files,
    source: &Source,
    analysis: &Path,
    rules: &Spanned<String>,
    field: &str,
) -> Result<(PathBuf, Game), AnalysisError> {
    let (path, text) = read_rules_from(files, analysis, rules.get_ref())
        .map_err(|m| source.error(rules, field, m))?;
    Ok((path.clone(), Game::parse(&path, &text)?))
}

/// A variant's `[variant.cells]` applied to the rules it fights by; a bad edit is refused
/// with its key (`variant[0].cells."crt.3:1"`), its line and what is allowed.
fn with_cell_edits(
    source: &Source,
    game: &Game,
    cells: &Spanned<BTreeMap<String, Spanned<toml::Value>>>,
    variant: usize,
) -> Result<Game, AnalysisError> {
    let field = |key: &str| format!("variant[{variant}].cells.\"{key}\"");
    let given: Vec<(&String, &Spanned<toml::Value>)> = cells.get_ref().iter().collect();
    let mut edits = Vec::with_capacity(given.len());
    for (key, value) in &given {
        let toml::Value::String(text) = value.get_ref() else {
            return Err(source.error(value, field(key), format!("a cell edit is text: one result code for a cell (\"DE\"), or a whole column's, one per row, separated by spaces (\"DE DR DR EX AR AR\"); got {}", value.get_ref())));
        };
        edits.push((key.as_str(), text.as_str()));
    }
    game.with_cells(&edits).map_err(|e| match e.edit {
        Some(k) => source.error(given[k].1, field(given[k].0), e.message),
        None => source.error(cells, format!("variant[{variant}].cells"), e.message),
    })
}

impl RulesStudy {
    /// Validates analysis text; `path` names it in errors, and its rules file is read
    /// from disk, relative to `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, AnalysisError> {
        Self::parse_with(path, text, &crate::files::Disk)
    }

    /// [`RulesStudy::parse`], reading the rules files the analysis names from `files`.
    pub fn parse_with(
        path: &Path,
        text: &str,
        files: &dyn crate::files::Files,
    ) -> Result<Self, AnalysisError> {
        let source = Source::new(path, text);
        let spec: RulesAnalysis = source.parse_toml()?;
        let header = AnalysisHeader::parse(path, &source, None)?;
        let (rules_path, game) = load_game(files, &source, path, &spec.rules, "rules")?;
        let base_settings = settings_of(
            &source,
            spec.sides.as_ref(),
            spec.parameters.as_ref(),
            "",
            &game,
        )?;
        let side_names = [0, 1].map(|k| {
            let key = &game.sides[k];
            spec.sides
                .as_ref()
                .and_then(|s| s.get(key))
                .and_then(|t| t.get_ref().get("name").cloned().map(|v| (t, v)))
                .map_or(Ok(key.clone()), |(t, v)| match v {
                    toml::Value::String(s) => analysis::report_text_at(
                        &source,
                        t,
                        &s,
                        &format!("sides.{key}.name"),
                        "a side's name",
                        analysis::Lines::One,
                    ),
                    _ => Err(source.error(t, format!("sides.{key}.name"), "a side's name is text")),
                })
        });
        let [first, second] = side_names;
        let side_names = [first?, second?];
        let game = Arc::new(game);
        let mut variants: Vec<(RulesVariant, Vec<(String, Setting)>)> = Vec::new();
        // Each variant's `rules` key as written (the analysis's own where it has none),
        // for errors about the battle its rules file describes.
        let mut rules_keys: Vec<(&Spanned<String>, String)> = Vec::new();
        for (i, (v, heading)) in spec
            .variant
            .iter()
            .flatten()
            .zip(&header.variants)
            .enumerate()
        {
            rules_keys.push(match &v.rules {
                Some(r) => (r, format!("variant[{i}].rules")),
                None => (&spec.rules, "rules".into()),
            });
            let (vpath, vgame) = match &v.rules {
                Some(r) => {
                    let (p, g) =
                        load_game(files, &source, path, r, &format!("variant[{i}].rules"))?;
                    if g.sides != game.sides {
                        return Err(source.error(r, format!("variant[{i}].rules"), format!("this rules file's sides ({}) differ from the analysis's rules file's ({}); a variant changes the rules, not who fights", g.sides.join(", "), game.sides.join(", "))));
                    }
                    (p, Arc::new(g))
                }
                None => (rules_path.clone(), game.clone()),
            };
            let vgame = match &v.cells {
                Some(cells) => Arc::new(with_cell_edits(&source, &vgame, cells, i)?),
                None => vgame,
            };
            // Every setting of the analysis must mean something in this variant's rules.
            let declared: Vec<String> = vgame.settings().into_iter().map(|s| s.0).collect();
            if let Some((name, _)) = base_settings.iter().find(|s| !declared.contains(&s.0)) {
                let at = v.rules.as_ref().map_or(0..0, |r| r.span());
                return Err(source.error_at(
                    Some(source.line_of(at)),
                    format!("variant[{i}].rules"),
                    format!("the analysis sets {name}, which this variant's rules file \"{}\" does not declare; declare it there, or set it only where it applies", vgame.name),
                ));
            }
            let mut settings = base_settings.clone();
            for (name, value) in settings_of(
                &source,
                v.sides.as_ref(),
                v.parameters.as_ref(),
                &format!("variant[{i}]."),
                &vgame,
            )? {
                settings.retain(|s| s.0 != name);
                settings.push((name, value));
            }
            let compare = Arc::new(Prepared::of(&vgame));
            variants.push((
                RulesVariant {
                    name: heading.name.clone(),
                    rules_path: vpath,
                    game: vgame,
                    compare,
                },
                settings,
            ));
        }
        if variants.is_empty() {
            rules_keys.push((&spec.rules, "rules".into()));
            let compare = Arc::new(Prepared::of(&game));
            variants.push((
                RulesVariant {
                    name: "base".into(),
                    rules_path: rules_path.clone(),
                    game: game.clone(),
                    compare,
                },
                base_settings,
            ));
        }
        let mut names: Vec<String> = game.settings().into_iter().map(|s| s.0).collect();
        // A side's policy for a choice sweeps too: a list of its options (or "uniform").
        let choice_names: Vec<String> = game
            .choices
            .iter()
            .flat_map(|c| {
                game.sides
                    .iter()
                    .map(move |side| format!("{side}.{}", c.name))
            })
            .collect();
        names.extend(choice_names.iter().cloned());
        let sweepable: Vec<&str> = names.iter().map(String::as_str).collect();
        let named: Vec<&str> = choice_names.iter().map(String::as_str).collect();
        let (axes, lines) =
            analysis::sweep_axes_with_names(&source, spec.sweep.as_ref(), &sweepable, &named)?;
        // Each swept policy, read against its choice once: an unknown option is refused
        // at the sweep's line.
        let mut swept_policies: Vec<Vec<Vec<i64>>> = Vec::with_capacity(axes.len());
        for (i, axis) in axes.iter().enumerate() {
            let choice = axis.parameter.split_once('.').and_then(|(_, c)| {
                choice_names
                    .contains(&axis.parameter)
                    .then(|| game.choices.iter().find(|x| x.name == c))
                    .flatten()
            });
            let policies = match choice {
                Some(choice) => axis
                    .values
                    .iter()
                    .map(|v| policy_of(&toml::Value::String(v.to_string()), choice))
                    .collect::<Result<Vec<_>, String>>()
                    .map_err(|m| {
                        source.error_at(lines[i], format!("sweep.{}", axis.parameter), m)
                    })?,
                None => Vec::new(),
            };
            swept_policies.push(policies);
        }
        analysis::check_grid_size(&source, &axes, variants.len())?;
        let mut runs = Vec::new();
        let mut notices: Vec<String> = Vec::new();
        for (v, (variant, settings)) in variants.iter().enumerate() {
            let g = &variant.game;
            for coordinates in analysis::grid(&axes) {
                let mut values = settings.clone();
                for ((axis, value), policies) in axes.iter().zip(&coordinates).zip(&swept_policies)
                {
                    let setting = match value {
                        AxisValue::Int(x) => Setting::Int(*x),
                        AxisValue::Text(_) => {
                            let k = axis
                                .values
                                .iter()
                                .position(|v| v == value)
                                .expect("a value of its axis");
                            Setting::Policy(policies[k].clone())
                        }
                        _ => continue,
                    };
                    values.retain(|s| s.0 != axis.parameter);
                    values.push((axis.parameter.clone(), setting));
                }
                let mut base = vec![0i64; g.frame_len()];
                let mut as_run = Vec::new();
                for (name, decl, counter) in g.settings() {
                    let given = values.iter().rev().find_map(|s| match s {
                        (n, Setting::Int(x)) if *n == name => Some(*x),
                        _ => None,
                    });
                    let value = match given.or(decl.default) {
                        Some(x) => x,
                        None => {
                            // Point at the table the value goes under, where there is one.
                            let (table, key, field, at) = match name.split_once('.') {
                                Some((side, key)) => (
                                    format!("[sides.{side}]"),
                                    key.to_string(),
                                    format!("sides.{name}"),
                                    spec.sides
                                        .as_ref()
                                        .and_then(|s| s.get(side))
                                        .map(|t| t.span()),
                                ),
                                None => (
                                    "[parameters]".into(),
                                    name.clone(),
                                    format!("parameters.{name}"),
                                    spec.parameters.as_ref().map(|t| t.span()),
                                ),
                            };
                            let at = at.unwrap_or_else(|| rules_keys[v].0.span());
                            return Err(source.error_at(
                                Some(source.line_of(at)),
                                field,
                                format!(
                                    "the rules file gives {} \"{}\" no {}: set {key} under {table}",
                                    if counter {
                                        "the counter"
                                    } else {
                                        "the parameter"
                                    },
                                    decl.name,
                                    if counter { "start" } else { "default" }
                                ),
                            ));
                        }
                    };
                    if value < decl.min || value > decl.max {
                        let line = axes
                            .iter()
                            .position(|a| a.parameter == name)
                            .and_then(|i| lines[i]);
                        let at = analysis::describe_point(&axes, &coordinates, None);
                        return Err(source.error_at(
                            line,
                            if line.is_some() {
                                format!("sweep.{name}")
                            } else {
                                name.clone()
                            },
                            format!(
                                "{name} must be {} to {} (the rules file's range), got {value}{at}",
                                decl.min, decl.max
                            ),
                        ));
                    }
                    base[g.slot(&name).expect("declared")] = value;
                    as_run.push((name, value));
                }
                // Each side's policy for each choice: as given, else uniform.
                let mut policies = Vec::new();
                for choice in &g.choices {
                    for side in 0..2 {
                        let name = format!("{}.{}", g.sides[side], choice.name);
                        let weights = values
                            .iter()
                            .rev()
                            .find_map(|s| match s {
                                (n, Setting::Policy(w)) if *n == name => Some(w.clone()),
                                _ => None,
                            })
                            .unwrap_or_else(|| vec![1; choice.options.len()]);
                        base[choice.weights[side].clone()].copy_from_slice(&weights);
                        policies.push((name, describe_policy(choice, &weights)));
                    }
                }
                base[g.layout.cap] = g.cap_of(&base);
                // A battle that can go on for ever: reported in the rules file, at its
                // end condition, naming the analysis's settings that reach the state.
                let endless = |chain: &Chain| {
                    let s = chain.endless()?;
                    let at = analysis::describe_point(&axes, &coordinates, None);
                    // The counters (and the round, where remembered) of the state.
                    let state: Vec<String> = g.layout.names[g.layout.state.clone()]
                        .iter()
                        .zip(&chain.states[s])
                        .filter(|((_, slot, _), _)| {
                            *slot != g.layout.outcome
                                && (*slot != g.layout.round || g.rounds_remembered > 0)
                        })
                        .map(|((n, _, _), v)| format!("{n} = {v}"))
                        .collect();
                    let rules = Source::new(&variant.rules_path, &g.text);
                    Some(rules.error_at(Some(g.end_line), if g.end.is_some() { "battle.end" } else { "battle" }, format!("with the settings of {}{}{at}, a battle can go on for ever: from the state {}, no round leads to its end; make battle.end reachable from there, or give battle.round_limit", path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned()), if variants.len() > 1 { format!(" (variant \"{}\")", variant.name) } else { String::new() }, state.join(", "))))
                };
                let form = match Chain::build(g, &variant.compare, &base) {
                    Ok(chain) => {
                        if let Some(e) = endless(&chain) {
                            return Err(e);
                        }
                        if self_exact_off(&header, &chain) {
                            let notice = format!("{}: the battle can return to an earlier state, so exact results are off (a round limit, or counters that only go one way, make it exact)", variant.name);
                            if !notices.contains(&notice) {
                                notices.push(notice);
                            }
                        }
                        Form::Chain {
                            chain: Arc::new(chain),
                            walk: Arc::default(),
                        }
                    }
                    Err(why) => {
                        // Weights past 128 bits: whether the battle ends is read from
                        // the same chain with every way weighing 1.
                        let unchecked = match (&g.round_limit, &why) {
                            (Some(_), _) => None,
                            (None, TooLarge::Weights) => {
                                match Chain::build_unweighted(g, &variant.compare, &base) {
                                    Ok(chain) => match endless(&chain) {
                                        Some(e) => return Err(e),
                                        None => None,
                                    },
                                    Err(larger) => Some(larger),
                                }
                            }
                            (None, _) => Some(why.clone()),
                        };
                        if let Some(larger) = unchecked {
                            let (key, field) = &rules_keys[v];
                            return Err(source.error(key, field, format!("the battle of \"{}\" has {larger}, too many to check that it ends: set battle.round_limit in the rules file", key.get_ref().trim())));
                        }
                        let notice = format!("{}: the battle's chain has {why}: exact results are off and the step interpreter plays each battle", variant.name);
                        if !notices.contains(&notice) {
                            notices.push(notice);
                        }
                        Form::Steps(why.to_string())
                    }
                };
                runs.push(RulesRun {
                    variant: v,
                    coordinates,
                    base,
                    settings: as_run,
                    policies,
                    form,
                });
            }
        }
        Ok(Self {
            header,
            side_names,
            variants: variants.into_iter().map(|v| v.0).collect(),
            axes,
            runs,
            notices,
        })
    }

    /// The game a run fights by.
    pub fn game(&self, run: usize) -> &Game {
        &self.variants[self.runs[run].variant].game
    }

    /// The walk a run's battles take through its chain, where the chain was built.
    pub fn walk(&self, run: usize) -> Option<&Walk> {
        let r = &self.runs[run];
        match &r.form {
            Form::Chain { chain, walk } => {
                Some(walk.get_or_init(|| Walk::new(self.game(run), &r.base, chain)))
            }
            Form::Steps(_) => None,
        }
    }
}

/// A run's exact result: the probability of each outcome, each metric's value and each
/// battle length (where the round is in the state), by enumerating the chain; and the
/// same as fractions where the chain is small enough to sum them quickly
/// ([`chain::MAX_FRACTION_TRANSITIONS`]).
#[derive(Debug, Clone)]
pub struct RulesExact {
    pub outcomes: Vec<f64>,
    pub metrics: Vec<Vec<f64>>,
    pub rounds: Option<Vec<f64>>,
    pub fractions: Option<ExactFractions>,
}

/// Outcomes and metrics as fractions.
#[derive(Debug, Clone)]
pub struct ExactFractions {
    pub outcomes: Vec<BigRational>,
    pub metrics: Vec<Vec<BigRational>>,
}

/// Sums the probability of ending in each state into outcomes, metric values and
/// battle lengths.
type Folded<P> = (Vec<P>, Vec<Vec<P>>, Vec<P>);

fn fold_endings<P: Clone + Zero + for<'a> std::ops::AddAssign<&'a P>>(
    game: &Game,
    run: &RulesRun,
    chain: &Chain,
    mass: &[P],
) -> Folded<P> {
    let mut outcomes = vec![P::zero(); game.outcomes.len()];
    let mut metrics: Vec<Vec<P>> = game
        .metrics
        .iter()
        .map(|(_, _, (lo, hi))| vec![P::zero(); (hi - lo + 1) as usize])
        .collect();
    let mut rounds = vec![P::zero(); game.round_limit.unwrap_or(0) as usize + 1];
    for (s, p) in mass.iter().enumerate() {
        if !chain.terminal[s] || p.is_zero() {
            continue;
        }
        let frame = chain::frame_of(game, &run.base, &chain.states[s]);
        let end = kernel::ending(game, &frame);
        outcomes[end.outcome as usize] += p;
        for (m, b) in end.bins.iter().enumerate() {
            metrics[m][*b as usize] += p;
        }
        let last = rounds.len() - 1;
        rounds[(frame[game.layout.round].max(0) as usize).min(last)] += p;
    }
    (outcomes, metrics, rounds)
}

/// [`fold_endings`] in fractions: each ending's mass as a whole number over the common
/// denominator of them all, summed as integers, each sum reduced once. PERF: summing the
/// fractions themselves reduced every sum (a greatest common divisor of big integers per
/// ending, outcome and metric), nine tenths of a field battle's exact results.
fn fold_endings_exact(
    game: &Game,
    run: &RulesRun,
    chain: &Chain,
    mass: &[BigRational],
) -> Folded<BigRational> {
    use num_bigint::BigInt;
    use num_integer::Integer;
    let common = mass
        .iter()
        .enumerate()
        .filter(|(s, p)| chain.terminal[*s] && !p.is_zero())
        .fold(BigInt::from(1), |d, (_, p)| d.lcm(p.denom()));
    let whole: Vec<BigInt> = mass
        .iter()
        .map(|p| p.numer() * (&common / p.denom()))
        .collect();
    let (outcomes, metrics, rounds) = fold_endings(game, run, chain, &whole);
    let over = |n: BigInt| BigRational::new(n, common.clone());
    (
        outcomes.into_iter().map(over).collect(),
        metrics
            .into_iter()
            .map(|m| m.into_iter().map(over).collect())
            .collect(),
        rounds.into_iter().map(over).collect(),
    )
}

/// Whether exact results are asked for but the chain has a cycle they cannot be summed over.
fn self_exact_off(header: &AnalysisHeader, chain: &Chain) -> bool {
    header.exact && chain.order().is_none()
}

/// A fraction short enough to print, as `n/d`.
pub fn fraction_text(p: &BigRational) -> Option<String> {
    let text = if p.is_integer() {
        p.numer().to_string()
    } else {
        format!("{}/{}", p.numer(), p.denom())
    };
    (text.len() <= 48).then_some(text)
}

impl crate::engine::System for RulesStudy {
    type Counts = RulesCounts;
    type Exact = RulesExact;

    fn printed(&self) -> crate::engine::printed::Printed {
        printed::printed(self)
    }

    fn header(&self) -> crate::engine::Header<'_> {
        self.header.view()
    }

    fn kind(&self) -> String {
        format!("rules ({})", self.variants[0].game.name)
    }

    fn plan(&self) -> crate::engine::Plan {
        crate::engine::Plan {
            axes: self.axes.iter().map(|a| a.parameter.clone()).collect(),
            runs: self
                .runs
                .iter()
                .map(|r| crate::engine::RunKey {
                    variant: self.variants[r.variant].name.clone(),
                    coordinates: r.coordinates.clone(),
                })
                .collect(),
            unit: "battles",
        }
    }

    fn empty(&self, run: usize) -> RulesCounts {
        RulesCounts::new(self.game(run))
    }

    fn simulate(
        &self,
        run: usize,
        dice: &mut crate::dice::DiceStream,
        n: u64,
        counts: &mut RulesCounts,
    ) {
        let r = &self.runs[run];
        match &r.form {
            Form::Chain { .. } => self
                .walk(run)
                .expect("a chain's walk")
                .record_many(dice, n, counts),
            Form::Steps(_) => {
                let v = &self.variants[r.variant];
                kernel::interpret_many(&v.game, &v.compare, &r.base, dice, n, counts);
            }
        }
    }

    fn exact(&self, run: usize) -> Option<RulesExact> {
        if !self.header.exact {
            return None;
        }
        let r = &self.runs[run];
        let Form::Chain { chain, .. } = &r.form else {
            return None;
        };
        let game = self.game(run);
        let order = chain.order()?;
        let (outcomes, metrics, rounds) =
            fold_endings(game, r, chain, &chain.absorption_f64(&order));
        let fractions = (chain.edges.len() <= chain::MAX_FRACTION_TRANSITIONS).then(|| {
            let (outcomes, metrics, _) =
                fold_endings_exact(game, r, chain, &chain.absorption(&order));
            ExactFractions { outcomes, metrics }
        });
        Some(RulesExact {
            outcomes,
            metrics,
            rounds: game.round_limit.is_some().then_some(rounds),
            fractions,
        })
    }

    fn outcomes(
        &self,
        run: usize,
        counts: &RulesCounts,
        exact: Option<&RulesExact>,
    ) -> Vec<crate::engine::Outcome> {
        self.game(run)
            .outcomes
            .iter()
            .enumerate()
            .map(|(i, (name, _))| crate::engine::Outcome {
                name: name.clone(),
                count: counts.outcomes.get(i).copied().unwrap_or(0),
                exact: exact.map(|e| e.outcomes[i]),
                fraction: exact
                    .and_then(|e| e.fractions.as_ref())
                    .and_then(|f| fraction_text(&f.outcomes[i])),
            })
            .collect()
    }

    fn distributions(
        &self,
        run: usize,
        counts: &RulesCounts,
        exact: Option<&RulesExact>,
    ) -> Vec<crate::engine::Distribution> {
        let game = self.game(run);
        let mut out = Vec::new();
        let exact_rounds = exact.and_then(|e| e.rounds.clone());
        // Counted in fixed bins (every shard the same shape); shown up to the longest
        // battle counted or possible.
        let last = |nonzero: &mut dyn Iterator<Item = bool>| {
            nonzero
                .enumerate()
                .filter(|(_, z)| *z)
                .map(|(i, _)| i + 1)
                .max()
                .unwrap_or(0)
        };
        let len = last(&mut counts.rounds.iter().map(|c| *c > 0))
            .max(
                exact_rounds
                    .as_ref()
                    .map_or(0, |e| last(&mut e.iter().map(|p| *p > 0.0))),
            )
            .max(1);
        let mut rounds = counts.rounds.clone();
        rounds.resize(len, 0);
        out.push(crate::engine::Distribution {
            metric: "rounds".into(),
            first: 0,
            counts: rounds,
            exact: exact_rounds.map(|mut e| {
                e.resize(len, 0.0);
                e
            }),
        });
        for (m, (name, _, (lo, _))) in game.metrics.iter().enumerate() {
            out.push(crate::engine::Distribution {
                metric: name.clone(),
                first: *lo as u64,
                counts: counts.metrics.get(m).cloned().unwrap_or_default(),
                exact: exact.map(|e| e.metrics[m].clone()),
            });
        }
        out
    }

    fn notices(&self) -> Vec<String> {
        self.notices.clone()
    }

    /// A rules file whose sides make one choice each round is solved as a game
    /// (`equilibrium.rs`).
    fn simultaneous_choices(&self) -> Option<&dyn crate::engine::choices::SimultaneousChoices> {
        self.variants
            .iter()
            .all(|v| v.game.choices.len() == 1 && v.game.choices == self.variants[0].game.choices)
            .then_some(self as &dyn crate::engine::choices::SimultaneousChoices)
    }

    fn trials_counted(&self, _run: usize, counts: &RulesCounts) -> u128 {
        crate::sim::total(&counts.outcomes)
    }

    fn rules(&self) -> serde_json::Value {
        let mut rules = json!({
            "variants": self.variants.iter().map(|v| json!({"name": v.name, "rules": v.game.text})).collect::<Vec<_>>(),
            "runs": self.runs.iter().map(|r| &r.settings).collect::<Vec<_>>(),
        });
        // Policies only where a rules file has choices (files without keep their bytes).
        if self.runs.iter().any(|r| !r.policies.is_empty()) {
            rules["policies"] = json!(self.runs.iter().map(|r| &r.policies).collect::<Vec<_>>());
        }
        rules
    }
}
