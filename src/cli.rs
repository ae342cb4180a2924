//! Command-line interface: what a designer types.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
}

#[derive(Debug, Args)]
pub struct EquilibriumArgs {
    /// A field-battle analysis file (TOML), e.g. analyses/field_equilibrium.toml.
    pub file: PathBuf,
    /// What the game is played for: win = P(B loses: broken, or withdrawing alone), A
    /// maximising; sp = B's SP lost minus A's, A maximising; or the chance of outcomes the
    /// report names — "A loses", "B loses", "smaller loses", "A wins", "B withdraws", …,
    /// several joined by commas ("B wins,A withdraws") — the side they are bad for
    /// minimising it [default: the file's [equilibrium] payoff, else win].
    #[arg(long, value_parser = payoff_parser)]
    pub payoff: Option<battlelab_core::systems::field::game::PayoffSpec>,
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

/// `--payoff`: one name, or outcome names joined by commas.
fn payoff_parser(text: &str) -> Result<battlelab_core::systems::field::game::PayoffSpec, String> {
    use battlelab_core::systems::field::game::PayoffSpec;
    let parsed = if text.contains(',') {
        let names: Vec<&str> = text.split(',').collect();
        PayoffSpec::parse_list(&names)
    } else {
        PayoffSpec::parse(text)
    };
    parsed.map_err(|e| format!("{e}; allowed: {}", PayoffSpec::allowed()))
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

#[derive(Debug, Subcommand)]
pub enum TableCommand {
    /// One resolution on the field-combat CRT (docs/systems/field.md): result pairs L=… S=….
    Crt(CrtArgs),
    /// One attrition roll (docs/systems/tables.md): SP eliminated, `*` = one of them cavalry.
    Attrition(AttritionArgs),
    /// One forced-march roll (docs/systems/tables.md): extra MP gained, `*` = one SP eliminated.
    March(MarchArgs),
    /// One naval combat roll (docs/systems/tables.md): 2LS, LC, LR, SR, SS, SC, 2SC …
    Naval(NavalArgs),
    /// One blockade roll (docs/systems/tables.md): F* (blockader may attack), F (blockaded must attack or retreat), E (escape).
    Blockade(Common),
    /// One pursuit roll (docs/systems/tables.md): F (fail), I (intercept).
    Pursuit(PursuitArgs),
    /// One naval transport roll (docs/systems/tables.md): C (captured), S (sunk), E (escape).
    Transport(Common),
    /// One storm/ice roll (docs/systems/tables.md): S (sunk), D (damaged), E (escape).
    Storm(Common),
    /// One initial-forces roll for a state (docs/systems/setup.md): every row, and expected forces.
    Setup(SetupArgs),
    /// One ratio battle (docs/systems/ratio.md): a line of pairings, reserves and a policy;
    /// army results, casualty points and per-combat states, exactly.
    Ratio(RatioArgs),
    /// One melee engagement (docs/systems/melee.md): one combat phase exactly (hits,
    /// wounds, combat score, win/draw/lose, break tests) and the whole engagement over
    /// repeated phases.
    #[command(after_help = MELEE_AFTER_HELP)]
    Melee(MeleeArgs),
    /// One fire-combat roll of a frontier quick battle (rule 19.2.1,
    /// docs/systems/frontier.md): P(hit), and the rulebook table for every unit type ×
    /// terrain × weather at that CF.
    FrontierFire(FrontierFireArgs),
    /// One movement roll of a frontier quick battle (rule 19.2.2): P(the stack moves),
    /// and the table for every unit type × terrain × weather × leader rating.
    FrontierMove(FrontierMoveArgs),
    /// One recovery roll of a frontier quick battle (rule 19.2.4): P(the unit recovers a
    /// level), and the table for every commitment level × leader rating.
    FrontierRecovery(FrontierRecoveryArgs),
}

#[derive(Debug, Args)]
pub struct FrontierFireArgs {
    /// Unit type: warrior, regular, militia or rifle.
    #[arg(long = "type")]
    pub unit: String,
    /// Terrain: rough, wilderness or settled.
    #[arg(long)]
    pub terrain: String,
    /// The unit's printed fire CF (1-10).
    #[arg(long)]
    pub cf: u32,
    /// Severe weather (the * DR modifiers do not apply).
    #[arg(long)]
    pub severe_weather: bool,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct FrontierMoveArgs {
    /// The side's commitment/mobilisation level (1-5).
    #[arg(long)]
    pub level: u32,
    /// Unit type: warrior, regular, militia or rifle.
    #[arg(long = "type", default_value = "militia")]
    pub unit: String,
    /// Terrain: rough, wilderness or settled.
    #[arg(long, default_value = "wilderness")]
    pub terrain: String,
    /// Command rating of a leader stacked with the unit (1-3; 0 = none).
    #[arg(long, default_value_t = 0)]
    pub leader: u32,
    /// Severe weather (+1).
    #[arg(long)]
    pub severe_weather: bool,
    /// Stacked with a regular unit (settled terrain: −1 for it too).
    #[arg(long)]
    pub with_regular: bool,
    /// Enemy units have moved atop this stack (+1).
    #[arg(long)]
    pub enemy_atop: bool,
    /// First round, the side that won surprise, stacked with a leader (−1).
    #[arg(long)]
    pub surprise: bool,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct FrontierRecoveryArgs {
    /// The side's commitment/mobilisation level (1-5).
    #[arg(long)]
    pub level: u32,
    /// Command rating of a leader stacked with the unit (1-3; 0 = none).
    #[arg(long, default_value_t = 0)]
    pub leader: u32,
    #[command(flatten)]
    pub common: Common,
}

const MELEE_AFTER_HELP: &str = "\
A profile is key=value pairs, in the analysis file's words ([profiles.<name>]): models,
frontage (models wide), attacks, skill, power, defense, discipline, wounds (per model),
rank_bonus (ranks, full-ranks, none), rank_bonus_cap. The older spellings wide, rank-bonus
and rank-cap are accepted too. Ranks follow from models and frontage. Keys left out keep a
default unit: models=20 frontage=5 attacks=1 skill=3 power=3 defense=3 discipline=7 wounds=1
rank_bonus=ranks rank_bonus_cap=3 (so a unit of fewer than 5 models needs frontage=…).

Example: battlelab table melee --a \"models=20 frontage=5 skill=4\" --b \"models=15 frontage=5 defense=4\" --b-flank \"models=5 frontage=5\"

Readings of the engagement geometry: docs/systems/melee.md.";

#[derive(Debug, Args)]
pub struct MeleeArgs {
    /// Side A's unit, the one engaged, e.g. "models=20 frontage=5 attacks=1 skill=3 power=3 defense=3 discipline=7".
    #[arg(long)]
    pub a: String,
    /// Side B's unit engaging A's front.
    #[arg(long)]
    pub b: Option<String>,
    /// A side-B unit engaging A's flank (give twice for both flanks).
    #[arg(long)]
    pub b_flank: Vec<String>,
    /// A side-B unit engaging A's rear.
    #[arg(long)]
    pub b_rear: Option<String>,
    /// [option] dice of the break test: 1d6, 2d6 or 3d6.
    #[arg(long, default_value = "2d6")]
    pub break_dice: String,
    /// [option] combat phases before the engagement is called off (1-50).
    #[arg(long, default_value_t = 6)]
    pub round_limit: u32,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct RatioArgs {
    /// The line, combat by combat in the attacker's order of resolution: A units "v" B
    /// units, e.g. "1v1,1v1,2v1" (a 2 is a double; only the side with more units doubles).
    #[arg(long)]
    pub line: String,
    /// Units side A keeps in reserve (only the side with more units may keep reserves).
    #[arg(long, default_value_t = 0)]
    pub reserve_a: u32,
    /// Units side B keeps in reserve.
    #[arg(long, default_value_t = 0)]
    pub reserve_b: u32,
    /// How the side with reserves commits them: none, rescue, press or optimal.
    #[arg(long, default_value = "rescue")]
    pub policy: String,
    /// What `optimal` maximises: cp (expected casualty-point difference) or win (P(win)).
    #[arg(long, default_value = "cp")]
    pub objective: String,
    /// Modifier to every die of side A (argument, quality, ambush, exhaustion), e.g. +1.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = drm_parser())]
    pub mod_a: i32,
    /// Modifier to every die of side B.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = drm_parser())]
    pub mod_b: i32,
    /// [option] a modified total below this counts as this (1-6), or "none".
    #[arg(long, default_value = "1")]
    pub min_score: String,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum StateKindArg {
    Major,
    Minor,
}

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// Major or minor state.
    #[arg(long)]
    pub state: StateKindArg,
    /// [option] a minor state without a port gets no NSP or transports.
    #[arg(long)]
    pub no_port: bool,
    #[command(flatten)]
    pub common: Common,
}

/// Options every d6 table shares.
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
pub enum SmallStack {
    /// A hex with fewer than 3 SP takes no attrition.
    None,
    /// Such a hex rolls on the 3–5 column.
    Column,
}

#[derive(Debug, Args)]
pub struct AttritionArgs {
    /// Total SP in the hex, 1 to 999 (picks the column: 3-5, 6-10, 11-15, 16-20, 21+).
    #[arg(long, value_parser = sp_parser())]
    pub sp: u32,
    /// Further DRM by number, added to the named ones (e.g. +1, -2).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = drm_parser())]
    pub drm: i32,
    /// −1: only Major-state units in the hex.
    #[arg(long)]
    pub major_only: bool,
    /// −1: all units in their home country.
    #[arg(long)]
    pub home: bool,
    /// +1: unsupplied.
    #[arg(long)]
    pub unsupplied: bool,
    /// +1: winter turn.
    #[arg(long)]
    pub winter: bool,
    /// +1: in a swamp hex.
    #[arg(long)]
    pub swamp: bool,
    /// [option] a hex under 3 SP: no attrition, or the 3–5 column.
    #[arg(long, value_enum, default_value_t = SmallStack::None)]
    pub small_stack: SmallStack,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct MarchArgs {
    /// Extra MP asked for: 1, 2 or 3.
    #[arg(long)]
    pub extra: u32,
    /// Further DRM by number, added to the named ones.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = drm_parser())]
    pub drm: i32,
    /// −1: all Guards.
    #[arg(long)]
    pub guards: bool,
    /// −1: all Major state.
    #[arg(long)]
    pub major: bool,
    /// +1: unsupplied units.
    #[arg(long)]
    pub unsupplied: bool,
    /// +1: winter turn.
    #[arg(long)]
    pub winter: bool,
    /// +1: any swamp hexes.
    #[arg(long)]
    pub swamp: bool,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct NavalArgs {
    /// Odds column, larger-smaller: 1-1, 3-2 or 2-1.
    #[arg(long)]
    pub odds: String,
    /// Net DRM (morale difference, leaders, scenario); the roll is clamped to −1…8.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = drm_parser())]
    pub drm: i32,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Args)]
pub struct PursuitArgs {
    /// −1: the pursuing units are in a coastal hex or port.
    #[arg(long)]
    pub coastal: bool,
    #[command(flatten)]
    pub common: Common,
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

#[derive(Debug, Args)]
pub struct CrtArgs {
    /// Odds, larger:smaller, as an analysis file writes them: a printed column (1:1, 3:2,
    /// 2:1, 3:1) or any ratio L:S with L ≥ S, read as the file's battles read it (5:2 →
    /// 2:1 under the printed rounding down; `odds_rounding` of --rules applies).
    #[arg(long)]
    pub odds: String,
    /// Net DRM to the larger force's 2d6 (e.g. +1, -2); capped at ±4 as printed.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = drm_parser())]
    pub drm: i32,
    /// Also show expected SP and morale lost per side through the Combat Loss Chart, for a
    /// smaller force of this many SP (1 to 999).
    #[arg(long)]
    pub smaller_sp: Option<u32>,
    /// Also simulate this many resolutions (1 to 10^12) and print estimates with 95%
    /// Wilson intervals.
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
    /// Read the tables (with their overrides) from this analysis file instead of the
    /// printed rules.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// With --rules: which variant's tables [default: the first].
    #[arg(long, requires = "rules")]
    pub variant: Option<String>,
}

/// `--trials`: the same bound as an analysis file's `trials`.
fn trials_parser() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=battlelab::limits::MAX_TRIALS)
}

/// `--seed`: the same bound as an analysis file's `seed`.
fn seed_parser() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(0..=battlelab::limits::MAX_SEED)
}

/// A DRM or modifier by number: bounded so that sums of DRMs cannot overflow.
fn drm_parser() -> clap::builder::RangedI64ValueParser<i32> {
    let max = battlelab::limits::MAX_DRM_ARG;
    clap::value_parser!(i32).range(-max..=max)
}

/// A strength in SP, as anywhere else.
fn sp_parser() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=i64::from(battlelab::limits::MAX_SP))
}
