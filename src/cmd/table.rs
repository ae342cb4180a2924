//! `battlelab table …`: one roll (or one battle) of a table, exactly, and simulated with
//! `--trials`; printed as text, CSV, JSON or Markdown.

use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::json;

use battlelab::progress::ProgressWatcher;
use battlelab::rules::crt::{FieldCombat, FieldRules};
use battlelab::rules::d6table::{self, CompiledD6Table, D6Table};
use battlelab::systems::field::Analysis;
use battlelab::table::{self, signed, CrtRequest, D6Request, TableError};

use super::{emit, interruptible, pool};
use crate::cli::{
    Common, CrtArgs, FrontierFireArgs, FrontierMoveArgs, FrontierRecoveryArgs, MeleeArgs,
    RatioArgs, SetupArgs, SmallStack, StateKindArg, TableCommand,
};

/// Runs one `table` subcommand.
pub fn table(command: TableCommand) -> Result<()> {
    match command {
        TableCommand::Crt(args) => table_crt(args),
        TableCommand::Setup(args) => table_setup(args),
        TableCommand::Ratio(args) => table_ratio(args),
        TableCommand::Melee(args) => table_melee(args),
        TableCommand::FrontierFire(args) => table_frontier_fire(args),
        TableCommand::FrontierMove(args) => table_frontier_move(args),
        TableCommand::FrontierRecovery(args) => table_frontier_recovery(args),
        other => table_d6(other),
    }
}

fn table_crt(args: CrtArgs) -> Result<()> {
    let rules = match &args.rules {
        None => FieldRules::printed(),
        Some(file) => {
            let analysis = Analysis::load(file)?;
            let variant = match &args.variant {
                None => &analysis.variants[0],
                Some(name) => analysis
                    .variants
                    .iter()
                    .find(|v| &v.name == name)
                    .ok_or_else(|| TableError::UnknownVariant {
                        given: name.clone(),
                        allowed: analysis
                            .variants
                            .iter()
                            .map(|v| v.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })?,
            };
            variant.rules.clone()
        }
    };
    let field = FieldCombat::new(rules).context("the rules failed validation")?;
    let request = CrtRequest {
        odds: args.odds,
        drm: args.drm,
        smaller_sp: args.smaller_sp,
        trials: args.trials,
        seed: args.seed,
    };
    let (pool, _) = pool(args.threads)?;
    let control = interruptible();
    let watcher = ProgressWatcher::start(
        Arc::clone(&control),
        args.trials.unwrap_or(0),
        args.trials.is_none(),
    );
    let report = pool.install(|| table::crt_table(&field, &request, &control));
    watcher.finish();
    let report = report?;
    let exporter = table::exporter(args.format.name()).expect("every Format has an exporter");
    emit(&exporter.export(&report))
}

/// The d6 tables of the strategic game: pick the table, the column and the DRM, then print.
fn table_d6(command: TableCommand) -> Result<()> {
    let invalid = |option: &str, message: String| TableError::Invalid {
        option: option.to_string(),
        message,
    };
    let flag = |on: bool, drm: i32| if on { drm } else { 0 };
    let (name, column, drm, params, title, common): (
        &str,
        Option<usize>,
        i32,
        serde_json::Value,
        String,
        Common,
    ) = match command {
        TableCommand::Attrition(a) => {
            let drm = a.drm
                + flag(a.major_only, -1)
                + flag(a.home, -1)
                + flag(a.unsupplied, 1)
                + flag(a.winter, 1)
                + flag(a.swamp, 1);
            let column = d6table::attrition_column(a.sp).or(match a.small_stack {
                SmallStack::None => None,
                SmallStack::Column => Some(0),
            });
            let table = D6Table::attrition();
            let column_label = column.map_or("none: no attrition under 3 SP".to_string(), |c| {
                table.column_labels[c].clone()
            });
            let params = json!({"sp": a.sp, "column": column_label, "drm": drm, "small_stack": format!("{:?}", a.small_stack).to_lowercase()});
            let title = format!(
                "Attrition — {} SP (column {column_label}), DRM {}",
                a.sp,
                signed(drm)
            );
            ("attrition", column, drm, params, title, a.common)
        }
        TableCommand::March(m) => {
            if !(1..=3).contains(&m.extra) {
                return Err(invalid(
                    &format!("--extra {}", m.extra),
                    "extra MP asked for must be 1, 2 or 3".into(),
                )
                .into());
            }
            let drm = m.drm
                + flag(m.guards, -1)
                + flag(m.major, -1)
                + flag(m.unsupplied, 1)
                + flag(m.winter, 1)
                + flag(m.swamp, 1);
            let params = json!({"extra": m.extra, "drm": drm});
            let title = format!(
                "Forced march — {} extra MP asked, DRM {}",
                m.extra,
                signed(drm)
            );
            (
                "march",
                Some(m.extra as usize - 1),
                drm,
                params,
                title,
                m.common,
            )
        }
        TableCommand::Naval(n) => {
            let table = D6Table::naval();
            let column = battlelab::rules::crt::OddsColumn::parse_ratio(&n.odds)
                    .and_then(|(l, s)| table.column_index(&format!("{l}-{s}")))
                    .ok_or_else(|| {
                        invalid(
                            &format!("--odds {}", n.odds),
                            format!("not an odds column of the naval table; allowed: {} (odds above 2-1 use 2-1)", table.column_labels.join(", ")),
                        )
                    })?;
            let params = json!({"odds": table.column_labels[column], "drm": n.drm});
            let title = format!(
                "Naval combat — odds {}, DRM {}",
                table.column_labels[column],
                signed(n.drm)
            );
            ("naval", Some(column), n.drm, params, title, n.common)
        }
        TableCommand::Pursuit(p) => {
            let drm = flag(p.coastal, -1);
            let params = json!({"coastal": p.coastal, "drm": drm});
            let title = format!(
                "Pursuit{}",
                if p.coastal {
                    " — pursuers in a coastal hex or port (−1)"
                } else {
                    ""
                }
            );
            ("pursuit", Some(0), drm, params, title, p.common)
        }
        TableCommand::Blockade(c) => ("blockade", Some(0), 0, json!({}), "Blockade".into(), c),
        TableCommand::Transport(c) => (
            "transport",
            Some(0),
            0,
            json!({}),
            "Naval transport".into(),
            c,
        ),
        TableCommand::Storm(c) => ("storm", Some(0), 0, json!({}), "Storm / ice".into(), c),
        TableCommand::Crt(_)
        | TableCommand::Setup(_)
        | TableCommand::Ratio(_)
        | TableCommand::Melee(_)
        | TableCommand::FrontierFire(_)
        | TableCommand::FrontierMove(_)
        | TableCommand::FrontierRecovery(_) => {
            unreachable!("dispatched to their own table_* functions")
        }
    };
    let table = CompiledD6Table::new(D6Table::printed(name).expect("a printed table"))
        .context("the printed table failed validation")?;
    let mut params = params;
    if common.trials.is_some() {
        params["seed"] = json!(common.seed);
    }
    let request = D6Request {
        column,
        drm,
        trials: common.trials,
        seed: common.seed,
        params,
        title,
    };
    let (pool, _) = pool(common.threads)?;
    let control = interruptible();
    let watcher = ProgressWatcher::start(
        Arc::clone(&control),
        common.trials.unwrap_or(0),
        common.trials.is_none(),
    );
    let report = pool.install(|| table::d6_table(&table, &request, &control));
    watcher.finish();
    let report = report?;
    let exporter = table::exporter(common.format.name()).expect("every Format has an exporter");
    emit(&exporter.export(&report))
}

fn table_setup(args: SetupArgs) -> Result<()> {
    let kind = match args.state {
        StateKindArg::Major => battlelab::rules::setup::StateKind::Major,
        StateKindArg::Minor => battlelab::rules::setup::StateKind::Minor,
    };
    if args.no_port && kind == battlelab::rules::setup::StateKind::Major {
        return Err(TableError::Invalid {
            option: "--no-port".into(),
            message: "only a minor state's naval forces depend on a port (the * entries)".into(),
        }
        .into());
    }
    let common = args.common;
    let (pool, _) = pool(common.threads)?;
    let control = interruptible();
    let report = pool.install(|| {
        table::setup_table(kind, !args.no_port, common.trials, common.seed, &control)
    })?;
    let exporter = table::exporter(common.format.name()).expect("every Format has an exporter");
    emit(&exporter.export(&report))
}

/// `table ratio`: one battle from a quick line, exactly (and simulated with --trials).
fn table_ratio(args: RatioArgs) -> Result<()> {
    use battlelab::rules::ratio::{self, MinScore, Objective, RatioBattle, ReservePolicy, Unit};
    let invalid = |option: String, message: String| TableError::Invalid { option, message };
    let (line, counts) =
        ratio::parse_line(&args.line).map_err(|m| invalid(format!("--line {}", args.line), m))?;
    let policy = ReservePolicy::parse(&args.policy).ok_or_else(|| {
        invalid(
            format!("--policy {}", args.policy),
            format!(
                "unknown reserve policy; allowed: {}",
                ReservePolicy::NAMES.join(", ")
            ),
        )
    })?;
    let objective = Objective::parse(&args.objective).ok_or_else(|| {
        invalid(
            format!("--objective {}", args.objective),
            "allowed: cp (expected casualty-point difference), win (P(win))".into(),
        )
    })?;
    let min_score = match args.min_score.as_str() {
        "none" => MinScore::None,
        text => MinScore::Floor(
            text.parse()
                .ok()
                .filter(|m| (1..=6).contains(m))
                .ok_or_else(|| {
                    invalid(
                        format!("--min-score {text}"),
                        "the floor is a whole number 1 to 6, or none".into(),
                    )
                })?,
        ),
    };
    let reserves = [args.reserve_a as usize, args.reserve_b as usize];
    for (flag, m) in [("--mod-a", args.mod_a), ("--mod-b", args.mod_b)] {
        if !(-6..=6).contains(&m) {
            return Err(
                invalid(format!("{flag} {m}"), "a modifier must be -6 to +6".into()).into(),
            );
        }
    }
    if reserves.iter().any(|&r| r > ratio::MAX_RESERVES) {
        return Err(invalid(
            "--reserve-a/--reserve-b".into(),
            format!("at most {} reserves", ratio::MAX_RESERVES),
        )
        .into());
    }
    let mods = [args.mod_a, args.mod_b];
    let units = [0, 1].map(|s| {
        (0..counts[s] + reserves[s])
            .map(|i| Unit {
                name: format!("{}{}", ["A", "B"][s], i + 1),
                modifier: mods[s],
            })
            .collect::<Vec<_>>()
    });
    let battle = RatioBattle {
        units,
        line,
        reserves: [0, 1].map(|s| (counts[s]..counts[s] + reserves[s]).collect()),
        policy: [policy; 2],
        objective,
        min_score,
        skirmish: false,
        escalation: None,
    };
    let option_of = |field: &str| {
        if field.starts_with("reserve") {
            "--reserve-a/--reserve-b".to_string()
        } else if field.ends_with("policy") {
            format!("--policy {}", args.policy)
        } else {
            format!("--line {}", args.line)
        }
    };
    let compile = |b: RatioBattle| {
        ratio::RatioCombat::new(b).map_err(|e| invalid(option_of(&e.field), e.message))
    };
    let combat = compile(battle.clone())?;
    let reserve_side = (0..2).find(|&s| reserves[s] > 0);
    let policies = match reserve_side {
        Some(side) => Some((
            side,
            ReservePolicy::ALL
                .iter()
                .map(|&p| {
                    let mut b = battle.clone();
                    b.policy[side] = p;
                    compile(b)
                })
                .collect::<Result<Vec<_>, _>>()?,
        )),
        None => None,
    };
    let common = args.common;
    let mut params = json!({
        "line": args.line,
        "reserve_a": args.reserve_a,
        "reserve_b": args.reserve_b,
        "policy": policy.name(),
        "objective": objective.name(),
        "mod_a": args.mod_a,
        "mod_b": args.mod_b,
        "min_score": min_score.to_string(),
    });
    if common.trials.is_some() {
        params["seed"] = json!(common.seed);
    }
    let title = format!(
        "Ratio battle — line {}{}, A {} / B {} on every die, min score {}",
        args.line,
        reserve_side.map_or(String::new(), |s| format!(
            ", {} reserve(s) for {} ({})",
            reserves[s],
            ["A", "B"][s],
            policy.name()
        )),
        signed(args.mod_a),
        signed(args.mod_b),
        min_score
    );
    let (pool, _) = pool(common.threads)?;
    let control = interruptible();
    let watcher = ProgressWatcher::start(
        Arc::clone(&control),
        common.trials.unwrap_or(0),
        common.trials.is_none(),
    );
    let report = pool.install(|| {
        table::ratio_table(
            &combat,
            policies.as_ref(),
            common.trials,
            common.seed,
            params,
            title,
            &control,
        )
    });
    watcher.finish();
    let report = report?;
    let exporter = table::exporter(common.format.name()).expect("every Format has an exporter");
    emit(&exporter.export(&report))
}

/// `table melee`: one engagement from quick profiles.
fn table_melee(args: MeleeArgs) -> Result<()> {
    use battlelab::rules::melee::{BreakDice, Engagement, Facing, MeleeCombat, UnitProfile};
    let invalid = |option: String, message: String| TableError::Invalid { option, message };
    let parse = |flag: &str, text: &str| {
        UnitProfile::parse_quick(text).map_err(|m| invalid(format!("{flag} \"{text}\""), m))
    };
    let a = parse("--a", &args.a)?;
    let mut b = Vec::new();
    let mut flags = Vec::new();
    if let Some(text) = &args.b {
        b.push((Facing::Front, parse("--b", text)?));
        flags.push(format!("--b \"{text}\""));
    }
    for text in &args.b_flank {
        b.push((Facing::Flank, parse("--b-flank", text)?));
        flags.push(format!("--b-flank \"{text}\""));
    }
    if let Some(text) = &args.b_rear {
        b.push((Facing::Rear, parse("--b-rear", text)?));
        flags.push(format!("--b-rear \"{text}\""));
    }
    if b.is_empty() {
        return Err(invalid(
            "--b".into(),
            "side B has no unit: give --b (front), --b-flank or --b-rear".into(),
        )
        .into());
    }
    let break_dice = BreakDice::parse(&args.break_dice).ok_or_else(|| {
        invalid(
            format!("--break-dice {}", args.break_dice),
            format!("allowed: {}", BreakDice::NAMES),
        )
    })?;
    let engagement = Engagement {
        a,
        b,
        break_dice,
        round_limit: args.round_limit,
    };
    let combat = MeleeCombat::new(engagement.clone()).map_err(|e| {
        let option = match e.field.split('.').next() {
            Some("a") => format!("--a \"{}\"", args.a),
            Some("round_limit") => format!("--round-limit {}", args.round_limit),
            _ if flags.len() == 1 => flags[0].clone(),
            _ => "--b/--b-flank/--b-rear".to_string(),
        };
        let hint = if e.field.ends_with(".frontage") {
            " (wide is 5 unless given)"
        } else {
            ""
        };
        invalid(option, format!("{}{hint} ({})", e.message, e.field))
    })?;
    let common = args.common;
    let mut params = json!({
        "a": engagement.a.quick(),
        "b": engagement.b.iter().map(|(f, u)| json!({"facing": f.name(), "unit": u.quick()})).collect::<Vec<_>>(),
        "break_dice": break_dice.name(),
        "round_limit": args.round_limit,
    });
    if common.trials.is_some() {
        params["seed"] = json!(common.seed);
    }
    let title = format!(
        "Melee — A [{}] engaged by {}; break test {}, up to {} phases",
        engagement.a.quick(),
        engagement
            .b
            .iter()
            .map(|(f, u)| format!("{} [{}]", f.name(), u.quick()))
            .collect::<Vec<_>>()
            .join(", "),
        break_dice.name(),
        args.round_limit
    );
    let (pool, _) = pool(common.threads)?;
    let control = interruptible();
    let watcher = ProgressWatcher::start(
        Arc::clone(&control),
        common.trials.unwrap_or(0) * 2,
        common.trials.is_none(),
    );
    let report = pool.install(|| {
        table::melee_table(&combat, common.trials, common.seed, params, title, &control)
    });
    watcher.finish();
    let report = report?;
    let exporter = table::exporter(common.format.name()).expect("every Format has an exporter");
    emit(&exporter.export(&report))
}

fn frontier_unit(text: &str) -> Result<battlelab::rules::frontier::UnitType, TableError> {
    use battlelab::rules::frontier::UnitType;
    UnitType::parse(text).ok_or_else(|| TableError::Invalid {
        option: format!("--type {text}"),
        message: format!("unknown unit type; allowed: {}", UnitType::NAMES),
    })
}

fn frontier_terrain(text: &str) -> Result<battlelab::rules::frontier::Terrain, TableError> {
    use battlelab::rules::frontier::Terrain;
    Terrain::parse(text).ok_or_else(|| TableError::Invalid {
        option: format!("--terrain {text}"),
        message: format!("unknown terrain; allowed: {}", Terrain::NAMES),
    })
}

/// Runs one frontier single-roll table and prints it.
fn frontier(
    step: table::FrontierStep,
    validation: Result<(), battlelab::rules::crt::RulesError>,
    params: serde_json::Value,
    title: String,
    common: Common,
) -> Result<()> {
    validation.map_err(|e| TableError::Invalid {
        option: format!("--{}", e.field),
        message: e.message,
    })?;
    let mut params = params;
    if common.trials.is_some() {
        params["seed"] = json!(common.seed);
    }
    let (pool, _) = pool(common.threads)?;
    let control = interruptible();
    let watcher = ProgressWatcher::start(
        Arc::clone(&control),
        common.trials.unwrap_or(0),
        common.trials.is_none(),
    );
    let report = pool.install(|| {
        table::frontier_table(step, common.trials, common.seed, params, title, &control)
    });
    watcher.finish();
    let report = report?;
    let exporter = table::exporter(common.format.name()).expect("every Format has an exporter");
    emit(&exporter.export(&report))
}

fn table_frontier_fire(args: FrontierFireArgs) -> Result<()> {
    let roll = battlelab::rules::frontier::FireRoll {
        unit: frontier_unit(&args.unit)?,
        cf: args.cf,
        terrain: frontier_terrain(&args.terrain)?,
        severe_weather: args.severe_weather,
    };
    let title = format!(
        "Frontier fire combat (19.2.1) — {} with fire CF {} in {} terrain{}",
        roll.unit.name(),
        roll.cf,
        roll.terrain.name(),
        if roll.severe_weather {
            ", severe weather"
        } else {
            ""
        }
    );
    let params = json!({"type": roll.unit.name(), "cf": roll.cf, "terrain": roll.terrain.name(), "severe_weather": roll.severe_weather});
    frontier(
        table::FrontierStep::Fire(roll),
        roll.validate(),
        params,
        title,
        args.common,
    )
}

fn table_frontier_move(args: FrontierMoveArgs) -> Result<()> {
    let roll = battlelab::rules::frontier::MoveRoll {
        level: args.level,
        unit: frontier_unit(&args.unit)?,
        terrain: frontier_terrain(&args.terrain)?,
        leader: args.leader,
        severe_weather: args.severe_weather,
        with_regular: args.with_regular,
        enemy_atop: args.enemy_atop,
        surprise_bonus: args.surprise,
    };
    // Validated before the DRM is summed, so an out-of-range rating never reaches it.
    roll.validate().map_err(|e| TableError::Invalid {
        option: format!("--{}", e.field),
        message: e.message,
    })?;
    let title = format!(
        "Frontier movement (19.2.2) — {} in {} terrain, commitment level {}, DRM {}",
        roll.unit.name(),
        roll.terrain.name(),
        roll.level,
        signed(roll.drm())
    );
    let params = json!({"type": roll.unit.name(), "terrain": roll.terrain.name(), "level": roll.level, "leader": roll.leader, "severe_weather": roll.severe_weather, "with_regular": roll.with_regular, "enemy_atop": roll.enemy_atop, "surprise": roll.surprise_bonus, "drm": roll.drm()});
    frontier(
        table::FrontierStep::Move(roll),
        roll.validate(),
        params,
        title,
        args.common,
    )
}

fn table_frontier_recovery(args: FrontierRecoveryArgs) -> Result<()> {
    let roll = battlelab::rules::frontier::RecoveryRoll {
        level: args.level,
        leader: args.leader,
    };
    let title = format!(
        "Frontier recovery (19.2.4) — commitment level {}, leader {}",
        roll.level,
        if roll.leader == 0 {
            "none".to_string()
        } else {
            roll.leader.to_string()
        }
    );
    let params = json!({"level": roll.level, "leader": roll.leader});
    frontier(
        table::FrontierStep::Recovery(roll),
        roll.validate(),
        params,
        title,
        args.common,
    )
}
