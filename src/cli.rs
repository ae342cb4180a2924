//! Command-line interface: what a designer types.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches, Parser, Subcommand, ValueEnum};

use battlelab::one_roll::{OneRollTable, Param, ParamKind};
use battlelab::systems::{one_roll_table, one_roll_tables};

/// Odds for wargame combat rules: exact where the dice are few, seeded Monte Carlo
/// where they are not.
#[derive(Debug, Parser)]
#[command(
    name = "battlelab",
    version,
    about,
    long_about = None,
    arg_required_else_help = true,
    after_help = EXIT_CODES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The exit codes every command uses, for `battlelab --help`.
const EXIT_CODES: &str = "\
Exit codes:
  0    done (also: a report written whose summary could not be printed, with a warning;
       a run to --precision that reached its cap of trials first, with a warning)
  1    a failure to write (a full disk), or `check`: an expectation failed or undecided
  2    input to fix: a bad file, flag, --out or set of shards (nothing was written)
  130  stopped by Ctrl-C (SIGINT); 143 by SIGTERM; 129 by SIGHUP — at once, in any
       phase; no partial report is left";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an analysis file and write its report folder (data, charts, tables, manifest).
    Run(RunArgs),
    /// Validate an analysis file without running it: the first error, or what a run
    /// would do.
    Validate {
        /// The analysis file (TOML), e.g. analyses/field_combat.toml.
        file: PathBuf,
    },
    /// Add up the shards of one run (from `run --shard K/N`) and write its report, the
    /// same bytes one machine would have written.
    Merge(MergeArgs),
    /// Does the rulebook still hold? Decide every [[expect]] of the analyses: exactly
    /// where a run is exact, else by a sequential test that stops as soon as the bound is
    /// decided. Exit 0 when all pass, 1 when any fails or is undecided.
    Check(CheckArgs),
    /// Did a change matter? Compare two variants of one analysis (FILE --variants A,B),
    /// two analyses with the same plan (FILE_A FILE_B), or two report folders, run by run
    /// and outcome by outcome, with a paired test where the arms share their dice.
    Compare(CompareArgs),
    /// What is a +1 worth? Price each modifier (a.drm+1, odds+1, a.skill+1 …) at every
    /// run: the headline without and with it, the paired difference with its 95%
    /// interval (exact where the runs are exact), and its equivalent in the system's own
    /// currency (odds columns, units, points of skill, leader rating).
    ///
    /// A side's modifier changes that side only. Odds steps and odds equivalents run
    /// along the odds columns of the rules as run (the printed ones and any the file adds
    /// under [rules.odds]), both ways; past the first or last column the answer is "beyond
    /// the table". An equivalent is the modifier's headline located between two
    /// neighbouring steps of the currency that exist (exact fractions where the system
    /// counts exactly) and interpolated linearly between them, the crossing nearest 0. A
    /// setting the plan itself sets (A's SP under an odds sweep) is refused, or left out
    /// at the runs where the plan sets it, naming what sets it. See
    /// docs/value-and-solve.md.
    Value(ValueArgs),
    /// Which value hits my target? Vary one whole-number setting (a DRM, SP, a stat, the
    /// round limit) over a range and report where an outcome's probability or a metric's
    /// mean meets a target: the values that meet it and the edges where it starts or
    /// stops holding between two neighbouring values (rising, falling or non-monotone
    /// curves alike), or that it holds everywhere or nowhere in the range.
    ///
    /// Exact runs are decided exactly (exact fractions where the system counts exactly:
    /// P = 1/2 meets ">= 0.5"); simulated ones on their estimates, saying which candidates
    /// cannot be told apart. The --where selection, the setting and the target are checked
    /// before any candidate is built or run. See docs/value-and-solve.md.
    Solve(SolveArgs),
    /// Print the distribution of one roll on a table, exactly (and simulated with --trials).
    #[command(subcommand)]
    Table(TableCommand),
    /// What should each side play? Solve a field battle (system = "field") as a
    /// zero-sum game, exactly by backward induction where it is small enough, at every
    /// grid point: the value, both sides' optimal tactic mixes at the start, dominated
    /// and never-played tactics, and each tactic's shortfall against the other side's mix.
    Equilibrium(EquilibriumArgs),
    /// Every key of a system's analysis file: path, type, default, allowed values, meaning,
    /// and whether it can be swept or overridden by a variant. Without SYSTEM: the systems.
    Keys(KeysArgs),
    /// Write a commented starting file for a system (NAME.toml, default <system>.toml)
    /// that `validate` accepts and `run` runs; never overwrites a file.
    New(NewArgs),
    /// Print the JSON Schema of a system's analysis file, for editors (Taplo / Even Better
    /// TOML): `battlelab schema field > field.schema.json`, then `#:schema ./field.schema.json`
    /// at the top of the TOML file.
    Schema {
        /// The system, e.g. field, melee, attrition (`battlelab keys` lists them).
        system: String,
    },
    /// Write one HTML page to edit an analysis and its rules file in a browser: every
    /// edit is checked with battlelab's own messages (at the line they name) and run at
    /// once, exactly where the runs are exact, else by the file's seeded Monte Carlo (the
    /// same counts as `run`). The page works offline from one file: send it, and the
    /// co-designer needs no install. Every report's index.html recomputes the same way
    /// in its "try it" panel.
    Playground(PlaygroundArgs),
}

#[derive(Debug, Args)]
pub struct PlaygroundArgs {
    /// The analysis to start from, with the rules file it names [default: the classic
    /// odds CRT, analyses/classic_crt.toml, and its rules file].
    pub file: Option<PathBuf>,
    /// Where to write the page. A page the playground wrote there before is replaced;
    /// any other file is refused (battlelab never replaces a file of yours).
    #[arg(long, default_value = "playground.html")]
    pub out: PathBuf,
    /// No summary.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct EquilibriumArgs {
    /// A field-battle analysis file (TOML), e.g. analyses/field_equilibrium.toml.
    pub file: PathBuf,
    /// What the game is played for, as the file's system reads it (an unknown payoff is
    /// refused with the allowed ones named). Field battles: win = P(B loses: broken, or
    /// withdrawing alone), A maximising; sp = B's SP lost minus A's, A maximising; or the
    /// chance of outcomes the report names — "A loses", "B loses", "smaller loses", "A
    /// wins", "B withdraws", …, several joined by commas ("B wins,A withdraws") — the side
    /// they are bad for minimising it [default: the file's [equilibrium] payoff, else win].
    #[arg(long)]
    pub payoff: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write a report folder: equilibrium.csv/.parquet, charts of the mixes over
    /// the first swept axis, tables.md.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Let --out replace a battlelab report of another analysis or another kind (run,
    /// compare, value, equilibrium); without it only a report of this same analysis and
    /// kind is replaced.
    #[arg(long)]
    pub replace: bool,
    /// Worker threads [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// No summary of the written folder.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct KeysArgs {
    /// The system, e.g. field, melee, attrition [default: list the systems].
    pub system: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = KeysFormat::Text)]
    pub format: KeysFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KeysFormat {
    Text,
    Md,
    Json,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The system, e.g. field, melee, attrition (`battlelab keys` lists them).
    pub system: String,
    /// The file to write: NAME.toml in the current folder [default: <system>.toml].
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct ValueArgs {
    /// The analysis file (TOML), e.g. analyses/field_combat.toml.
    pub file: PathBuf,
    /// A modifier to price: a setting and a signed step, e.g. a.drm+1, odds+1, b.sp-2
    /// (repeat for several) [default: the file's [value] modifiers, else the system's
    /// own list]. odds±N steps along the rules' odds columns from each run's odds ("beyond
    /// the table" past the first or last); a side's setting (a.…, b.…) changes that side
    /// only; one the plan sets at every run is refused.
    #[arg(long = "modifier", value_name = "SETTING±N")]
    pub modifiers: Vec<String>,
    /// The headline to price by its key (e.g. a_wins, sp_lost_b), or all [default: the
    /// file's [value] headline, else the system's first].
    #[arg(long)]
    pub headline: Option<String>,
    /// Trials per run and arm, 1 to 10^12 (overrides the file).
    #[arg(long, value_parser = trials_parser())]
    pub trials: Option<u64>,
    /// Seed, 0 to 2^63-1 (overrides the file).
    #[arg(long, value_parser = seed_parser())]
    pub seed: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write a report folder (value.csv/.parquet/.json, a tornado chart per
    /// headline at the reference run, tables.md).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Let --out replace a battlelab report of another analysis or another kind (run,
    /// compare, value, equilibrium); without it only a report of this same analysis and
    /// kind is replaced.
    #[arg(long)]
    pub replace: bool,
    /// Worker threads [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct SolveArgs {
    /// The analysis file (TOML), e.g. analyses/field_combat.toml.
    pub file: PathBuf,
    /// What to hit: "<outcome, metric or headline> = p", ">= p" or "<= p", p a decimal or
    /// a fraction; e.g. "A wins >= 0.5", "no_loss >= 1/2", "sp_lost_b = 3". Answered with
    /// the values that meet it and its edges: where it starts holding (the value after
    /// which it holds) or stops holding, between two neighbouring values; for "= p", the
    /// values equal to p, else the nearest, and where the curve crosses p.
    #[arg(long)]
    pub target: String,
    /// The whole-number setting to vary, e.g. drm, a.drm, b.sp, a.skill, round_limit.
    #[arg(long)]
    pub vary: String,
    /// Hold a swept parameter (or the variant) at one value: AXIS=VALUE (repeat); once
    /// the varied setting's own column is set aside, the runs left must be one (checked
    /// before any work).
    #[arg(long = "where", value_name = "AXIS=VALUE")]
    pub at: Vec<String>,
    /// The smallest value tried [default: the setting's usual range].
    #[arg(long, allow_hyphen_values = true)]
    pub from: Option<i64>,
    /// The largest value tried [default: the setting's usual range].
    #[arg(long, allow_hyphen_values = true)]
    pub to: Option<i64>,
    /// Trials per candidate, 1 to 10^12 (overrides the file).
    #[arg(long, value_parser = trials_parser())]
    pub trials: Option<u64>,
    /// Seed, 0 to 2^63-1 (overrides the file).
    #[arg(long, value_parser = seed_parser())]
    pub seed: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Worker threads [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The analysis file (TOML), e.g. analyses/field_combat.toml.
    pub file: PathBuf,
    /// Battles per grid point and variant, 1 to 10^12 (overrides the file).
    #[arg(long, value_parser = trials_parser())]
    pub trials: Option<u64>,
    /// Seed, 0 to 2^63-1 (overrides the file). The same seed gives the same bytes on any
    /// thread count.
    #[arg(long, value_parser = seed_parser())]
    pub seed: Option<u64>,
    /// Worker threads [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Report folder [default: reports/<name from the file>; with --shard,
    /// shards/<name>/shard-K-of-N].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Let --out replace a battlelab report of another analysis or another kind (run,
    /// compare, value, equilibrium); without it only a report of this same analysis and
    /// kind is replaced.
    #[arg(long)]
    pub replace: bool,
    /// Run each run until every simulated probability's 95% interval half-width is at
    /// most this (e.g. 0.002), with --trials (or the file's trials) as the cap; overrides
    /// the file's `precision`. A run that reaches the cap first keeps its trials: the
    /// command warns on stderr with the precision reached, the report records it, and
    /// the exit code is still 0.
    #[arg(long, value_parser = precision_parser)]
    pub precision: Option<f64>,
    /// Run only shard K of N (1-based) of the plan's work and write its counts, for
    /// `battlelab merge` to add up: e.g. --shard 2/8 on the second of eight machines.
    #[arg(long, value_name = "K/N", value_parser = battlelab::engine::shard::parse_share)]
    pub shard: Option<(u64, u64)>,
    /// No progress bar and no summary.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Analysis files, or folders of them (their .toml files).
    #[arg(required = true, value_name = "FILE_OR_DIR")]
    pub inputs: Vec<PathBuf>,
    /// Most trials one run may take before an expectation still open is UNDECIDED.
    #[arg(long, default_value_t = 1 << 26, value_parser = trials_parser())]
    pub max_trials: u64,
    /// Seed (overrides the files'). The same seed decides the same way every time.
    #[arg(long, value_parser = seed_parser())]
    pub seed: Option<u64>,
    /// Also write the results as JUnit XML to this file (for CI systems).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Worker threads [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// One analysis file (with --variants), two analysis files, or two report folders.
    #[arg(required = true, num_args = 1..=2, value_name = "FILE_OR_REPORT")]
    pub inputs: Vec<PathBuf>,
    /// The two variants of one analysis file to compare: A,B (B − A is reported).
    #[arg(long, value_name = "A,B")]
    pub variants: Option<String>,
    /// Trials per run and arm, 1 to 10^12 (overrides the files).
    #[arg(long, value_parser = trials_parser())]
    pub trials: Option<u64>,
    /// Seed for both arms, 0 to 2^63-1 (overrides the files).
    #[arg(long, value_parser = seed_parser())]
    pub seed: Option<u64>,
    /// Control the false discovery rate (Benjamini–Hochberg) instead of the family-wise
    /// error rate (Holm).
    #[arg(long)]
    pub fdr: bool,
    /// Significance level for the family of cells compared.
    #[arg(long, default_value_t = 0.05, value_parser = alpha_parser)]
    pub alpha: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write a compare report folder (compare.csv/.json, a difference heatmap per
    /// outcome over two swept axes, tables.md).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Let --out replace a battlelab report of another analysis or another kind (run,
    /// compare, value, equilibrium); without it only a report of this same analysis and
    /// kind is replaced.
    #[arg(long)]
    pub replace: bool,
    /// Worker threads [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A precision: a half-width above 0 and at most 0.25.
fn precision_parser(text: &str) -> Result<f64, String> {
    let p: f64 = text
        .parse()
        .map_err(|_| format!("a precision is a number, e.g. 0.002; got \"{text}\""))?;
    if p > 0.0 && p <= battlelab::analysis::MAX_PRECISION {
        Ok(p)
    } else {
        Err(format!(
            "a precision is above 0 and at most {}, got {p}",
            battlelab::analysis::MAX_PRECISION
        ))
    }
}

/// A significance level strictly between 0 and 1.
fn alpha_parser(text: &str) -> Result<f64, String> {
    let alpha: f64 = text
        .parse()
        .map_err(|_| format!("a significance level is a number, e.g. 0.05; got \"{text}\""))?;
    if alpha > 0.0 && alpha < 1.0 {
        Ok(alpha)
    } else {
        Err(format!(
            "a significance level is between 0 and 1, got {alpha}"
        ))
    }
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shard folders, every shard of one run once (in any order).
    #[arg(required = true, value_name = "SHARD_DIR")]
    pub shards: Vec<PathBuf>,
    /// Report folder [default: reports/<name from the analysis>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Let --out replace a battlelab report of another analysis or another kind (run,
    /// compare, value, equilibrium); without it only a report of this same analysis and
    /// kind is replaced.
    #[arg(long)]
    pub replace: bool,
    /// Worker threads for the exact results [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// No summary.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `battlelab table <name> …`: one of the tables the systems declare
/// (`battlelab::systems::one_roll_tables`), its subcommand built from the declaration at
/// run time beside the derived commands, and its values as clap read them.
#[derive(Debug)]
pub struct TableCommand {
    pub table: &'static OneRollTable,
    /// (parameter, value) pairs as given, defaults included: `"true"` for a switch, a
    /// repeated text once a pair. The table reads and validates them.
    pub given: Vec<(&'static str, String)>,
    pub common: Common,
}

/// The clap argument of one declared parameter: its flag, value name, default, range
/// (shown in its help, and refused as it is read where the declaration says so) and
/// words.
fn table_arg(param: &'static Param) -> Arg {
    let mut arg = Arg::new(param.name).long(param.flag);
    let mut help = param.help.to_string();
    match param.kind {
        ParamKind::Flag => arg = arg.action(ArgAction::SetTrue),
        ParamKind::Int { .. } => {
            let (low, high) = param.kind.read_bounds().unwrap_or((i64::MIN, i64::MAX));
            arg = arg
                .value_parser(clap::value_parser!(i64).range(low..=high))
                .allow_hyphen_values(low < 0);
        }
        ParamKind::Choice(words) => {
            arg = arg.value_parser(PossibleValuesParser::new(words.iter().map(
                |&(word, meaning)| {
                    let value = PossibleValue::new(word);
                    if meaning.is_empty() {
                        value
                    } else {
                        value.help(meaning)
                    }
                },
            )));
        }
        ParamKind::Text => {}
        ParamKind::TextList => arg = arg.action(ArgAction::Append),
        ParamKind::File => arg = arg.value_parser(clap::value_parser!(PathBuf)),
    }
    if let Some(range) = param.range() {
        help.push_str(&format!(" [range: {range}]"));
    }
    if !param.value_name.is_empty() {
        arg = arg.value_name(param.value_name);
    }
    if let Some(default) = param.default {
        arg = arg.default_value(default);
    }
    if let Some(needed) = param.requires {
        arg = arg.requires(needed);
    }
    arg.required(param.required).help(help)
}

/// The subcommand of one declared table: its parameters, then the options every table
/// shares.
fn table_command(table: &'static OneRollTable) -> clap::Command {
    let command = table
        .params
        .iter()
        .fold(clap::Command::new(table.name), |command, param| {
            command.arg(table_arg(param))
        });
    let unit = table.trial_unit;
    // After the shared options, which would bring their own about line.
    let command = Common::augment_args(command)
        .mut_arg("trials", |arg| {
            arg.help(format!(
                "Also simulate this many {unit} (1 to 10^12) and print estimates with 95% Wilson intervals"
            ))
        })
        .about(table.about)
        .long_about(None);
    match table.after_help {
        Some(text) => command.after_help(text),
        None if !table.example.is_empty() => command.after_help(format!(
            "Example: battlelab table {} {}",
            table.name,
            example(table)
        )),
        None => command,
    }
}

/// A table's example as a command line: `--flag value`, a switch as `--flag`.
fn example(table: &OneRollTable) -> String {
    table
        .example
        .iter()
        .filter_map(|&(name, value)| {
            let param = table.param(name)?;
            Some(match param.kind {
                ParamKind::Flag => format!("--{}", param.flag),
                _ if value.contains(' ') => format!("--{} \"{value}\"", param.flag),
                _ => format!("--{} {value}", param.flag),
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl FromArgMatches for TableCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let (name, matches) = matches.subcommand().ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::MissingSubcommand,
                "name a table: `battlelab table --help` lists them",
            )
        })?;
        let table = one_roll_table(name).ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::InvalidSubcommand,
                format!("no table {name}: `battlelab table --help` lists them"),
            )
        })?;
        let mut given = Vec::new();
        for param in table.params {
            let id = param.name;
            match param.kind {
                ParamKind::Flag => {
                    if matches.get_flag(id) {
                        given.push((id, "true".to_string()));
                    }
                }
                ParamKind::Int { .. } => {
                    if let Some(value) = matches.get_one::<i64>(id) {
                        given.push((id, value.to_string()));
                    }
                }
                ParamKind::Choice(_) | ParamKind::Text | ParamKind::TextList => {
                    for value in matches.get_many::<String>(id).into_iter().flatten() {
                        given.push((id, value.clone()));
                    }
                }
                ParamKind::File => {
                    if let Some(path) = matches.get_one::<PathBuf>(id) {
                        let text = path.to_str().ok_or_else(|| {
                            clap::Error::raw(
                                clap::error::ErrorKind::InvalidUtf8,
                                format!(
                                    "--{} {}: the path is not UTF-8; give the file another name",
                                    param.flag,
                                    path.display()
                                ),
                            )
                        })?;
                        given.push((id, text.to_string()));
                    }
                }
            }
        }
        Ok(TableCommand {
            table,
            given,
            common: Common::from_arg_matches(matches)?,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for TableCommand {
    fn augment_subcommands(command: clap::Command) -> clap::Command {
        one_roll_tables().fold(command, |command, table| {
            command.subcommand(table_command(table))
        })
    }

    fn augment_subcommands_for_update(command: clap::Command) -> clap::Command {
        Self::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        one_roll_table(name).is_some()
    }
}

/// Options every table shares.
#[derive(Debug, Args)]
pub struct Common {
    /// Also simulate this many rolls (1 to 10^12) and print estimates with 95% Wilson
    /// intervals.
    #[arg(long, value_parser = trials_parser())]
    pub trials: Option<u64>,
    /// Seed for --trials (0 to 2^63-1).
    #[arg(long, default_value_t = 1, value_parser = seed_parser())]
    pub seed: u64,
    /// Worker threads for --trials [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Csv,
    Json,
    Md,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Md => "md",
        }
    }
}

/// `--trials`: the same bound as an analysis file's `trials`.
fn trials_parser() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=battlelab::limits::MAX_TRIALS)
}

/// `--seed`: the same bound as an analysis file's `seed`.
fn seed_parser() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(0..=battlelab::limits::MAX_SEED)
}
