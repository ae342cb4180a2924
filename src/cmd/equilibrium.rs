//! `battlelab equilibrium FILE`: solve the zero-sum game of a system whose sides choose at
//! once each round, at every run of the plan, and say what each side should play.
//!
//! Why this command exists: where both sides pick at once, a designer asking "is this
//! choice too strong?" needs the game's optimal mixes, not one more fixed-policy run. What
//! the choices are, what they are called, which payoffs there are and how a run's game is
//! solved belong to the system, which declares them (`SimultaneousChoices`, through
//! `Study::simultaneous_choices`). This file loads any analysis, refuses one whose system
//! declares no choice (naming those that do, from the registry), solves every run on the
//! worker pool, and prints or writes the results from the plan and the generic
//! [`ChoiceEquilibrium`] alone. The solving and the printing are the core's
//! (`battlelab_core::equilibrium`, which the report page's module runs too); this file
//! adds the pool, the frame, the charts and the report folder. A run whose game is too large for the system to solve
//! whole is marked `exact: false`, with how it was solved instead.
//!
//! The payoff is the file's own (`SimultaneousChoices::default_payoff`) or `--payoff`,
//! read by the system; every output says which side maximises it at each run. A side's
//! choices may be limited: the outputs mark a choice a side may not make.

use std::path::Path;

use anyhow::{bail, Result};
use polars::prelude::*;

use battlelab::analysis::{AxisValue, SweepAxis};
use battlelab::engine::Plan;
use battlelab::report::{self, ReportError};
use battlelab_core::equilibrium::{self, markdown, text_output, to_json, Solved, SIDES};
use serde_json::json;

use super::{emit, note, pool, usage, writing_report};
use crate::cli::{EquilibriumArgs, Format};

pub fn equilibrium(args: EquilibriumArgs) -> Result<()> {
    let loaded = battlelab::systems::load(&args.file)?;
    let study = &*loaded.study;
    let header = study.header();
    let Some(choices) = study.simultaneous_choices() else {
        bail!(usage(equilibrium::no_choice(
            &args.file.display().to_string(),
            header.system
        )));
    };
    let payoff = equilibrium::payoff(choices, args.payoff.as_deref()).map_err(|message| {
        usage(format!(
            "invalid value '{}' for '--payoff <PAYOFF>': {message}\n\nFor more information, try '--help'.",
            args.payoff.as_deref().unwrap_or_default()
        ))
    })?;
    if let Some(out) = &args.out {
        // Before any work, and never over the analysis itself.
        battlelab::output::check_target(
            out,
            &[&args.file],
            &battlelab::output::Identity::new("equilibrium", header.name),
            args.replace,
        )?;
    }
    let (pool, _) = pool(args.threads)?;
    let solved = pool.install(|| {
        equilibrium::solve(
            loaded.analysis.path.display().to_string(),
            header.name.to_string(),
            study.plan(),
            choices,
            &*payoff,
        )
    })?;
    battlelab::interrupt::check()?;
    if let Some(out) = &args.out {
        let files = writing_report(out, || {
            Ok(write_report(
                &solved,
                &loaded.analysis.path,
                &loaded.analysis.text,
                args.payoff.as_deref(),
                out,
            )?)
        })?;
        if !args.quiet {
            note(&format!("wrote {} ({} files)", out.display(), files.len()));
        }
    }
    emit(&match args.format {
        Format::Text => text_output(&solved),
        Format::Csv => csv_text(&solved)?,
        Format::Json => serde_json::to_string_pretty(&to_json(&solved)).expect("JSON") + "\n",
        Format::Md => markdown(&solved),
    })
}

fn yes_no(flag: bool) -> &'static str {
    if flag {
        "true"
    } else {
        "false"
    }
}

/// The long frame: one row per run, side and choice.
fn frame(s: &Solved) -> PolarsResult<DataFrame> {
    let axes: Vec<&str> = s.plan.axes.iter().map(String::as_str).collect();
    let runs: Vec<&[AxisValue]> = s.plan.runs.iter().map(|r| &r.coordinates[..]).collect();
    let mut frame = battlelab::frame::LongFrame::new(&axes).typed_by(&runs);
    for (e, key) in s.points.iter().zip(&s.plan.runs) {
        for (side, side_name) in SIDES.iter().enumerate() {
            for (k, name) in s.choices.iter().enumerate() {
                frame
                    .row(&key.variant, &key.coordinates)
                    .text("side", side_name)
                    .text(&s.word, name)
                    .text("allowed", yes_no(e.allowed[side][k]))
                    .float("probability", Some(e.mix[side][k]))
                    .float("shortfall", e.shortfall[side][k])
                    .float("value", Some(e.value))
                    .text("maximiser", SIDES[e.maximiser])
                    .text("exact", yes_no(e.exact))
                    .text("dominated", yes_no(e.dominated[side][k]))
                    .text("never_played", yes_no(e.never_played[side][k]))
                    .finish();
            }
        }
    }
    // The frame's system column says nothing here (one analysis): dropped.
    let mut df = frame.build("")?;
    df.drop_in_place("system")?;
    Ok(df)
}

fn csv_text(s: &Solved) -> Result<String> {
    let df = frame(s)?;
    let mut bytes = Vec::new();
    battlelab::frame::write_csv_to(&df, &mut bytes)?;
    Ok(String::from_utf8(bytes).expect("CSV is UTF-8"))
}

/// The report folder: `equilibrium.csv`/`.parquet`, one chart of each side's mix over the
/// first axis per variant, `tables.md`, the analysis, a manifest and `index.html`.
fn write_report(
    s: &Solved,
    path: &Path,
    text: &str,
    payoff: Option<&str>,
    out: &Path,
) -> Result<Vec<std::path::PathBuf>, ReportError> {
    report::write_atomically(out, |dir| {
        let mut df = frame(s).map_err(|e| ReportError::Frame {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
        report::write_frame(dir, "equilibrium", &mut df)?;
        draw_charts(s, dir)?;
        report::write_text(dir, "tables.md", &markdown(s))?;
        report::write_text(dir, "analysis.toml", text)?;
        report::write_manifest(
            dir,
            &json!({
                "tool": "battlelab",
                "kind": "equilibrium",
                "name": s.name,
                "analysis": path.display().to_string(),
                "payoff": s.payoff.as_written(),
            }),
        )?;
        let source = report::tryit::Source::of_equilibrium_report(path, text, payoff);
        report::index::write_index_with(dir, None, None, Some(&source))
    })
}

/// The plan's axes with the values its runs take, in the order they first appear (what
/// a chart's slice holds an axis it does not draw at).
fn axes_of(plan: &Plan) -> Vec<SweepAxis> {
    plan.axes
        .iter()
        .enumerate()
        .map(|(i, parameter)| {
            let mut values: Vec<AxisValue> = Vec::new();
            for run in &plan.runs {
                if !values.contains(&run.coordinates[i]) {
                    values.push(run.coordinates[i].clone());
                }
            }
            SweepAxis {
                parameter: parameter.clone(),
                values,
            }
        })
        .collect()
}

/// Per variant and side, the optimal mix at the start as grouped bars: one group per value
/// of the first axis (other axes at their fixed value), one bar per choice.
fn draw_charts(s: &Solved, dir: &Path) -> Result<(), ReportError> {
    let axes = axes_of(&s.plan);
    for (v, variant) in s.variants.iter().enumerate() {
        let free: Vec<usize> = if axes.is_empty() { vec![] } else { vec![0] };
        let indices = report::slice_points(
            &axes,
            s.variant
                .iter()
                .zip(&s.plan.runs)
                .map(|(&v, run)| (v, &run.coordinates[..])),
            v,
            &free,
        );
        let x_label = axes.first().map_or("start", |a| a.parameter.as_str());
        for (side, side_name) in SIDES.iter().enumerate() {
            let groups: Vec<battlelab::chart::BarGroup> = indices
                .iter()
                .map(|&i| battlelab::chart::BarGroup {
                    label: s.plan.runs[i]
                        .coordinates
                        .first()
                        .map_or_else(|| "start".to_string(), ToString::to_string),
                    values: s.points[i].mix[side].clone(),
                })
                .collect();
            let stem = dir.join(format!(
                "mix_{}{}",
                side_name,
                report::variant_suffix(variant, s.variants.len())
            ));
            battlelab::chart::grouped_bars(
                &stem,
                &format!(
                    "Side {}'s optimal mix at the start ({}) — {}",
                    side_name.to_uppercase(),
                    s.payoff.name(),
                    variant
                ),
                x_label,
                "probability",
                &s.choices,
                &groups,
            )?;
        }
    }
    Ok(())
}
