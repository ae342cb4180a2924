//! `battlelab table …`: one roll (or one battle) of a table, exactly, and simulated with
//! `--trials`; printed as text, CSV, JSON or Markdown. The flags are copied into the
//! library's requests (`battlelab::table::requests`), which validate them.

use std::sync::Arc;

use anyhow::Result;

use battlelab::progress::ProgressWatcher;
use battlelab::sim::RunControl;
use battlelab::table::requests::{self, D6Query, FrontierQuery, MeleeQuery, RatioQuery, Sampling};
use battlelab::table::{self, CrtRequest, TableError, TableReport};

use super::{emit, interruptible, pool};
use crate::cli::{Common, Format, SmallStack, StateKindArg, TableCommand};

/// Runs one `table` subcommand.
pub fn table(command: TableCommand) -> Result<()> {
    let sampling = |c: &Common| Sampling {
        trials: c.trials,
        seed: c.seed,
    };
    match command {
        TableCommand::Crt(args) => {
            let field = requests::crt_combat(args.rules.as_deref(), args.variant.as_deref())?;
            let request = CrtRequest {
                odds: args.odds,
                drm: args.drm,
                smaller_sp: args.smaller_sp,
                trials: args.trials,
                seed: args.seed,
            };
            print_table(args.threads, args.trials, 1, args.format, |control| {
                table::crt_table(&field, &request, control)
            })
        }
        TableCommand::Setup(args) => {
            let major = matches!(args.state, StateKindArg::Major);
            let kind = requests::setup_state(major, args.no_port)?;
            let c = args.common;
            print_table(c.threads, c.trials, 1, c.format, |control| {
                table::setup_table(kind, !args.no_port, c.trials, c.seed, control)
            })
        }
        TableCommand::Ratio(args) => {
            let query = RatioQuery {
                line: args.line,
                reserve_a: args.reserve_a,
                reserve_b: args.reserve_b,
                policy: args.policy,
                objective: args.objective,
                mod_a: args.mod_a,
                mod_b: args.mod_b,
                min_score: args.min_score,
            };
            let c = args.common;
            let r = query.prepare(sampling(&c))?;
            print_table(c.threads, c.trials, 1, c.format, |control| {
                table::ratio_table(
                    &r.combat,
                    r.policies.as_ref(),
                    c.trials,
                    c.seed,
                    r.params,
                    r.title,
                    control,
                )
            })
        }
        TableCommand::Melee(args) => {
            let query = MeleeQuery {
                a: args.a,
                b: args.b,
                b_flank: args.b_flank,
                b_rear: args.b_rear,
                break_dice: args.break_dice,
                round_limit: args.round_limit,
            };
            let c = args.common;
            let (combat, params, title) = query.prepare(sampling(&c))?;
            // Phases and whole engagements: twice the trials.
            print_table(c.threads, c.trials, 2, c.format, |control| {
                table::melee_table(&combat, c.trials, c.seed, params, title, control)
            })
        }
        TableCommand::FrontierFire(a) => frontier(
            FrontierQuery::Fire {
                unit: a.unit,
                terrain: a.terrain,
                cf: a.cf,
                severe_weather: a.severe_weather,
            },
            a.common,
        ),
        TableCommand::FrontierMove(a) => frontier(
            FrontierQuery::Move {
                level: a.level,
                unit: a.unit,
                terrain: a.terrain,
                leader: a.leader,
                severe_weather: a.severe_weather,
                with_regular: a.with_regular,
                enemy_atop: a.enemy_atop,
                surprise: a.surprise,
            },
            a.common,
        ),
        TableCommand::FrontierRecovery(a) => frontier(
            FrontierQuery::Recovery {
                level: a.level,
                leader: a.leader,
            },
            a.common,
        ),
        TableCommand::Attrition(a) => d6(
            D6Query::Attrition {
                sp: a.sp,
                drm: a.drm,
                major_only: a.major_only,
                home: a.home,
                unsupplied: a.unsupplied,
                winter: a.winter,
                swamp: a.swamp,
                small_stack_column: matches!(a.small_stack, SmallStack::Column),
            },
            a.common,
        ),
        TableCommand::March(m) => d6(
            D6Query::March {
                extra: m.extra,
                drm: m.drm,
                guards: m.guards,
                major: m.major,
                unsupplied: m.unsupplied,
                winter: m.winter,
                swamp: m.swamp,
            },
            m.common,
        ),
        TableCommand::Naval(n) => d6(
            D6Query::Naval {
                odds: n.odds,
                drm: n.drm,
            },
            n.common,
        ),
        TableCommand::Pursuit(p) => d6(D6Query::Pursuit { coastal: p.coastal }, p.common),
        TableCommand::Blockade(c) => d6(D6Query::Blockade, c),
        TableCommand::Transport(c) => d6(D6Query::Transport, c),
        TableCommand::Storm(c) => d6(D6Query::Storm, c),
    }
}

fn d6(query: D6Query, c: Common) -> Result<()> {
    let (compiled, request) = query.prepare(Sampling {
        trials: c.trials,
        seed: c.seed,
    })?;
    print_table(c.threads, c.trials, 1, c.format, |control| {
        table::d6_table(&compiled, &request, control)
    })
}

fn frontier(query: FrontierQuery, c: Common) -> Result<()> {
    let (step, params, title) = query.prepare(Sampling {
        trials: c.trials,
        seed: c.seed,
    })?;
    print_table(c.threads, c.trials, 1, c.format, |control| {
        table::frontier_table(step, c.trials, c.seed, params, title, control)
    })
}

/// Computes a table on the worker pool (with a progress bar when it simulates
/// `trials × passes` trials) and prints it in `format`.
fn print_table(
    threads: Option<u64>,
    trials: Option<u64>,
    passes: u64,
    format: Format,
    compute: impl FnOnce(&RunControl) -> Result<TableReport, TableError> + Send,
) -> Result<()> {
    let (pool, _) = pool(threads)?;
    let control = interruptible();
    let watcher = ProgressWatcher::start(
        Arc::clone(&control),
        trials.unwrap_or(0).saturating_mul(passes),
        trials.is_none(),
    );
    let report = pool.install(|| compute(&control));
    watcher.finish();
    let exporter = table::exporter(format.name()).expect("every Format has an exporter");
    emit(&exporter.export(&report?))
}
