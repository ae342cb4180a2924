//! Frontier battles' report: expectations, a chart per sensitivity group, rulebook
//! tables. The system itself is in `battlelab_core::systems::frontier`.

pub use battlelab_core::systems::frontier::*;

use std::collections::BTreeMap;
use std::path::Path;

use crate::chart::{self, BarGroup};
use crate::frame::LongFrame;
use crate::report::rulebook::{Cell, Live, NumberFormat, Rulebook, Table};
use crate::report::{self, with_side_names, Charts, ReportError};
use crate::stats::percentages_summing_to_100;
use battlelab_core::systems::frontier::battle::FrontierHistogram;

impl crate::pipeline::SystemReport for FrontierStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
        charts: &Charts,
    ) -> Result<(), ReportError> {
        let results = FrontierResults {
            trials: results.trials,
            seed: results.seed,
            runs: results.counts.clone(),
        };
        let mut expectations = LongFrame::new(&SENSITIVITY_AXES);
        for (run, h) in self.runs.iter().zip(&results.runs) {
            let n: u64 = h.result.iter().sum();
            let mut row = expectations
                .row("base", &run.coordinates())
                .int("trials", n as i64);
            for (i, label) in ["p_a_victory", "p_draw", "p_b_victory"].iter().enumerate() {
                row = row.float(label, Some(h.result[i] as f64 / n as f64));
            }
            for (s, side) in ["a", "b"].iter().enumerate() {
                row = row
                    .float(
                        &format!("mean_eliminated_{side}"),
                        Some(crate::stats::count_mean(&h.eliminated[s])),
                    )
                    .float(
                        &format!("mean_routed_{side}"),
                        Some(crate::stats::count_mean(&h.routed[s])),
                    )
                    .float(
                        &format!("mean_disrupted_{side}"),
                        Some(crate::stats::count_mean(&h.disrupted[s])),
                    )
                    .float(
                        &format!("mean_leaders_lost_{side}"),
                        Some(crate::stats::count_mean(&h.leaders_lost[s])),
                    );
            }
            row.float("mean_rounds", Some(crate::stats::count_mean(&h.rounds)))
                .finish();
        }
        report::write_frame(
            dir,
            "expectations",
            &mut expectations
                .build("frontier")
                .map_err(report::frame_error(dir))?,
        )?;
        draw_charts(self, &results, charts)?;
        rulebook_tables(self, &results).write(charts)
    }
}

fn probabilities(h: &FrontierHistogram) -> Vec<f64> {
    let n: u64 = h.result.iter().sum();
    h.result.iter().map(|&c| c as f64 / n as f64).collect()
}

fn draw_charts(
    study: &FrontierStudy,
    results: &FrontierResults,
    charts: &Charts,
) -> Result<(), ReportError> {
    let names = &study.side_names;
    let series: Vec<String> = RESULTS.iter().map(|r| with_side_names(r, names)).collect();
    let mut groups: BTreeMap<&str, Vec<BarGroup>> = BTreeMap::new();
    for (run, h) in study.runs.iter().zip(&results.runs) {
        groups
            .entry(run.group.as_str())
            .or_default()
            .push(BarGroup {
                label: run.label.clone(),
                values: probabilities(h),
            });
    }
    for (group, bars) in &groups {
        let (stem, title, x) = match *group {
            "as written" => ("outcome", "How the battle ends".to_string(), "battle"),
            "terrain × weather" => (
                "outcome_by_terrain_weather",
                "Outcome by terrain and weather".to_string(),
                "terrain, weather",
            ),
            "levels" => (
                "outcome_by_level_difference",
                "Outcome by commitment-level difference (A's level − B's, B as written)"
                    .to_string(),
                "level difference",
            ),
            "leaders" => (
                "outcome_by_leader",
                "Sensitivity to each side's primary leader rating".to_string(),
                "primary leader",
            ),
            _ => (
                "outcome_by_surprise",
                "Sensitivity to surprise".to_string(),
                "surprise",
            ),
        };
        chart::grouped_bars(
            &charts.path(stem, None),
            &title,
            x,
            "probability",
            &series,
            bars,
        )?;
    }
    // Units lost round by round, in the battle as written.
    let h = &results.runs[0];
    let curve = |side: usize| -> Vec<(f64, f64)> {
        std::iter::once((0.0, 0.0))
            .chain(
                h.lost_by_round
                    .iter()
                    .enumerate()
                    .map(|(r, by_side)| ((r + 1) as f64, crate::stats::count_mean(&by_side[side]))),
            )
            .collect()
    };
    chart::distributions(
        &charts.path("lost_by_round", None),
        "Mean units lost (eliminated or routed) by the end of each round, as written",
        "round",
        "mean units lost",
        &[
            (side_label(study, 0), curve(0)),
            (side_label(study, 1), curve(1)),
        ],
    )?;
    Ok(())
}

/// "side A" or, where the file names it, the side's name.
fn side_label(study: &FrontierStudy, side: usize) -> String {
    let name = &study.side_names[side];
    if name == ["A", "B"][side] {
        format!("side {name}")
    } else {
        name.clone()
    }
}

/// Rulebook tables: every battle of the study (as written first, then each sensitivity
/// group) with each side's chance of victory and the units each side loses.
fn rulebook_tables(study: &FrontierStudy, results: &FrontierResults) -> Rulebook {
    let names = &study.side_names;
    let mut book = Rulebook::new(
        &study.header.name,
        format!(
            "Seed {}, {} battles per row (simulated)",
            results.seed, results.trials
        ),
    );
    let mut md = format!("# {}\n\n", study.header.name);
    if let Some(d) = &study.header.description {
        md.push_str(&format!("{d}\n\n"));
    }
    md.push_str(&format!(
        "Side A: {}. Side B: {}. Simulated with {} battles per row (seed {}); victory goes to the side that lost fewer units (eliminated + still routed) unless the file reads it otherwise.\n\n",
        study.side_names[0], study.side_names[1], results.trials, results.seed
    ));
    let title = "How the battle ends";
    md.push_str(&format!("## {title}\n\n"));
    book.text(&md);
    let mut header: Vec<String> = vec!["group".into(), "run".into()];
    header.extend(
        RESULTS
            .iter()
            .map(|r| format!("{} %", with_side_names(r, names))),
    );
    header.extend([
        format!("mean {} eliminated", names[0]),
        format!("mean {} eliminated", names[1]),
    ]);
    let mut table = Table::new(title, header);
    for (index, (run, h)) in study.runs.iter().zip(&results.runs).enumerate() {
        let probabilities = probabilities(h);
        let p = percentages_summing_to_100(&probabilities, 1);
        let mut cells = vec![Cell::text(run.group.clone()), Cell::text(run.label.clone())];
        cells.extend(p.iter().zip(&probabilities).map(|(u, &x)| {
            Cell::number(
                x,
                NumberFormat::Percent(1),
                format!("{}.{}", u / 10, u % 10),
            )
        }));
        cells.extend([
            Cell::decimal(crate::stats::count_mean(&h.eliminated[0]), 2),
            Cell::decimal(crate::stats::count_mean(&h.eliminated[1]), 2),
        ]);
        table.row(cells);
        // The page's panel recomputes every number of the row from the run's outcomes
        // and metrics (the plan's runs are the study's, in order).
        for (k, outcome) in RESULTS.iter().enumerate() {
            table.live(2 + k, index, Live::Hundred(outcome.to_string()));
        }
        table.live(2 + RESULTS.len(), index, Live::Mean("eliminated_a".into()));
        table.live(3 + RESULTS.len(), index, Live::Mean("eliminated_b".into()));
    }
    book.table(table);
    let mut md = String::new();
    if !study.skipped.is_empty() {
        md.push_str("\nSensitivity runs left out (their battle breaks rule 19.1):\n\n");
        for (group, label, why) in &study.skipped {
            md.push_str(&format!("- {group}, {label}: {why}\n"));
        }
    }
    book.text(&md);
    book
}
