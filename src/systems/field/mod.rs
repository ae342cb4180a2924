//! Field battles' report: who loses (the smaller force above all) per grid point,
//! outcome bars, heatmaps over two swept axes, battle-length and SP-lost curves, and the
//! rulebook tables (the effective CRT and battle outcomes). The system itself is in
//! `battlelab_core::systems::field`.

pub use battlelab_core::systems::field::*;

use std::path::Path;

use polars::prelude::*;

use crate::analysis::AxisValue;
use crate::chart::{self, BarGroup};
use crate::engine::derived::Derived;
use crate::frame;
use crate::report::rulebook::{derived_cell, Cell, Live, NumberFormat, Rulebook, Table};
use crate::report::{
    draw_pages, frame_error, in_slice, with_side_names, write_frame, Charts, ReportError,
};
use crate::stats::count_mean;
use battlelab_core::systems::field::battle::{BattleDistribution, BattleHistogram, BattleResult};
use battlelab_core::systems::field::derived as field_derived;

/// Index (0 = A, 1 = B) of the side that is smaller at the start (ties: B, since A is
/// the larger force on ties).
pub fn smaller_side(run: &Run) -> usize {
    usize::from(run.battle.a.sp >= run.battle.b.sp)
}

/// P(side loses) from result probabilities.
fn p_loses(result: &[f64; BattleResult::COUNT], side: usize) -> f64 {
    BattleResult::ALL
        .iter()
        .filter(|r| r.loses(side))
        .map(|r| result[r.index()])
        .sum()
}

fn probabilities(counts: &[u64], trials: u64) -> Vec<f64> {
    counts.iter().map(|&c| c as f64 / trials as f64).collect()
}

/// Probabilities of the simulated histogram, per field of [`BattleDistribution`].
pub fn estimated(histogram: &BattleHistogram) -> BattleDistribution {
    let n = histogram.trials();
    BattleDistribution {
        result: std::array::from_fn(|i| histogram.result[i] as f64 / n as f64),
        rounds: probabilities(&histogram.rounds, n),
        sp_lost: [
            probabilities(&histogram.sp_lost[0], n),
            probabilities(&histogram.sp_lost[1], n),
        ],
        morale_lost: [
            probabilities(&histogram.morale_lost[0], n),
            probabilities(&histogram.morale_lost[1], n),
        ],
    }
}

/// The field-battle expectations frame: per grid point, the starting forces and who
/// loses (the smaller force above all), simulated and exact.
pub fn expectations_frame(
    analysis: &FieldStudy,
    results: &FieldResults,
) -> PolarsResult<DataFrame> {
    let axes: Vec<&str> = analysis.axes.iter().map(|a| a.parameter.as_str()).collect();
    let mut expectations = frame::LongFrame::new(&axes);
    for (run, result) in analysis.runs.iter().zip(&results.runs) {
        let variant = &analysis.variants[run.variant].name;
        let h = &result.histogram;
        let n = h.trials();
        let est = estimated(h);
        let smaller = smaller_side(run);
        let exact = result.exact.as_ref();
        let ex = |f: &dyn Fn(&BattleDistribution) -> f64| exact.map(f);
        expectations
            .row(variant, &run.coordinates)
            .int("start_sp_a", run.battle.a.sp.into())
            .int("start_sp_b", run.battle.b.sp.into())
            .text("smaller", ["A", "B"][smaller])
            .int("trials", n as i64)
            .float("p_a_loses", Some(p_loses(&est.result, 0)))
            .float("p_b_loses", Some(p_loses(&est.result, 1)))
            .float("p_smaller_loses", Some(p_loses(&est.result, smaller)))
            .float(
                "exact_p_smaller_loses",
                ex(&|e| p_loses(&e.result, smaller)),
            )
            .float("mean_rounds", Some(count_mean(&h.rounds)))
            .float("mean_sp_lost_a", Some(count_mean(&h.sp_lost[0])))
            .float("mean_sp_lost_b", Some(count_mean(&h.sp_lost[1])))
            .float(
                "exact_mean_sp_lost_a",
                ex(&|e| crate::stats::distribution_mean(&e.sp_lost[0])),
            )
            .float(
                "exact_mean_sp_lost_b",
                ex(&|e| crate::stats::distribution_mean(&e.sp_lost[1])),
            )
            .float("mean_morale_lost_a", Some(count_mean(&h.morale_lost[0])))
            .float("mean_morale_lost_b", Some(count_mean(&h.morale_lost[1])))
            .finish();
    }
    expectations.build("field")
}

impl crate::pipeline::SystemReport for FieldStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
        charts: &Charts,
    ) -> Result<(), ReportError> {
        let derived = crate::engine::System::derived(self, &results.counts, &results.exact);
        let results = FieldResults::of(results);
        let mut expectations = expectations_frame(self, &results).map_err(frame_error(dir))?;
        write_frame(dir, "expectations", &mut expectations)?;
        draw_charts(self, &results, charts)?;
        rulebook_tables(self, &results, &derived).write(charts)
    }
}

/// Runs of one variant in a slice (every other axis free), in grid order.
fn runs_in(analysis: &FieldStudy, variant: usize, slice: &[(usize, AxisValue)]) -> Vec<usize> {
    analysis
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.variant == variant && in_slice(&r.coordinates, slice))
        .map(|(i, _)| i)
        .collect()
}

/// Every run's simulated counts, in plan order.
fn counts_of(results: &FieldResults) -> Vec<BattleHistogram> {
    results.runs.iter().map(|r| r.histogram.clone()).collect()
}

/// Every run's exact distribution where computed, in plan order.
fn exact_of(results: &FieldResults) -> Vec<Option<BattleDistribution>> {
    results.runs.iter().map(|r| r.exact.clone()).collect()
}

fn point_label(analysis: &FieldStudy, run: &Run, axes: &[usize]) -> String {
    if axes.is_empty() {
        return format!(
            "{} {} SP vs {} {} SP",
            run.battle.a.name, run.battle.a.sp, run.battle.b.name, run.battle.b.sp
        );
    }
    axes.iter()
        .map(|&i| {
            let axis = &analysis.axes[i];
            match axis.parameter.as_str() {
                "odds" => run.coordinates[i].to_string(),
                p => format!("{p} {}", run.coordinates[i]),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sides' names from the file (`[side.a] name`, `[side.b] name`).
fn side_names(analysis: &FieldStudy) -> [String; 2] {
    [
        analysis.base_battle.a.name.clone(),
        analysis.base_battle.b.name.clone(),
    ]
}

fn draw_charts(
    analysis: &FieldStudy,
    results: &FieldResults,
    charts: &Charts,
) -> Result<(), ReportError> {
    let names = side_names(analysis);
    let axes = &analysis.axes;
    let x_axis: Vec<usize> = if axes.is_empty() { vec![] } else { vec![0] };
    let x_label = axes
        .first()
        .map_or("battle".to_string(), |a| a.parameter.clone());
    let series: Vec<String> = BattleResult::ALL
        .iter()
        .map(|r| with_side_names(r.label(), &names))
        .collect();
    let estimates: Vec<BattleDistribution> = results
        .runs
        .iter()
        .map(|r| estimated(&r.histogram))
        .collect();
    for (variant_index, variant) in analysis.variants.iter().enumerate() {
        let suffix = crate::report::variant_suffix(&variant.name, analysis.variants.len());
        let runs = |slice: &[(usize, AxisValue)]| runs_in(analysis, variant_index, slice);
        let of = Some(variant.name.as_str());
        draw_pages(
            axes,
            &x_axis,
            charts,
            of,
            &format!("outcomes{suffix}"),
            &format!("Battle outcomes — {}", variant.name),
            &|slice| chart::Panel::Bars {
                x_label: x_label.clone(),
                y_label: "probability".into(),
                series: series.clone(),
                groups: runs(slice)
                    .into_iter()
                    .map(|r| BarGroup {
                        label: point_label(analysis, &analysis.runs[r], &x_axis),
                        values: BattleResult::ALL
                            .iter()
                            .map(|o| estimates[r].result[o.index()])
                            .collect(),
                    })
                    .collect(),
            },
        )?;
        if axes.len() >= 2 {
            let (x, y) = (&axes[0], &axes[1]);
            draw_pages(
                axes,
                &[0, 1],
                charts,
                of,
                &format!("heatmap_smaller_loses{suffix}"),
                &format!("P(smaller force loses) — {}", variant.name),
                &|slice| {
                    let in_slice = runs(slice);
                    let values: Vec<Vec<f64>> = y
                        .values
                        .iter()
                        .map(|yv| {
                            x.values
                                .iter()
                                .map(|xv| {
                                    in_slice
                                        .iter()
                                        .find(|&&r| {
                                            analysis.runs[r].coordinates[0] == *xv
                                                && analysis.runs[r].coordinates[1] == *yv
                                        })
                                        .map_or(f64::NAN, |&r| {
                                            p_loses(
                                                &estimates[r].result,
                                                smaller_side(&analysis.runs[r]),
                                            )
                                        })
                                })
                                .collect()
                        })
                        .collect();
                    chart::Panel::Heat {
                        x_label: x.parameter.clone(),
                        x_ticks: x.values.iter().map(ToString::to_string).collect(),
                        y_label: y.parameter.clone(),
                        y_ticks: y.values.iter().map(ToString::to_string).collect(),
                        values,
                    }
                },
            )?;
        }
        let lines = |metric: &dyn Fn(&BattleDistribution) -> &Vec<f64>,
                     first: usize,
                     x_label: &str,
                     slice: &[(usize, AxisValue)]|
         -> chart::Panel {
            chart::Panel::Lines {
                x_label: x_label.to_string(),
                y_label: "probability".into(),
                series: runs(slice)
                    .into_iter()
                    .map(|r| {
                        let points = metric(&estimates[r])
                            .iter()
                            .enumerate()
                            .skip(first)
                            .map(|(v, &p)| (v as f64, p))
                            .collect();
                        (point_label(analysis, &analysis.runs[r], &x_axis), points)
                    })
                    .collect(),
            }
        };
        draw_pages(
            axes,
            &x_axis,
            charts,
            of,
            &format!("battle_length{suffix}"),
            &format!("Battle length — {}", variant.name),
            &|slice| lines(&|d| &d.rounds, 1, "rounds fought", slice),
        )?;
        for (side, name) in [(0, "a"), (1, "b")] {
            draw_pages(
                axes,
                &x_axis,
                charts,
                of,
                &format!("sp_lost_{name}{suffix}"),
                &format!("SP lost by {} — {}", names[side], variant.name),
                &|slice| lines(&|d| &d.sp_lost[side], 0, "SP lost", slice),
            )?;
        }
    }
    Ok(())
}

/// Rulebook tables (`tables.md`, `tables.xlsx`): first who loses per grid point — the
/// question a field battle answers: P(smaller force loses), P(each side wins) and the
/// mean SP each side loses, exact where enumerated — then the effective CRT of each
/// variant (odds × modified roll) and battle outcomes per grid point in percentages that
/// add up to exactly 100. Sides go by the names the file gives them.
pub fn rulebook_tables(
    analysis: &FieldStudy,
    results: &FieldResults,
    derived: &[Derived],
) -> Rulebook {
    use std::fmt::Write;
    let names = side_names(analysis);
    let mut book = Rulebook::new(
        &analysis.header.name,
        format!(
            "Seed {}, {} battles per grid point",
            results.seed, results.trials
        ),
    );
    let mut md = String::new();
    let _ = writeln!(md, "# {} — rulebook tables\n", analysis.header.name);
    if let Some(description) = &analysis.header.description {
        let _ = writeln!(md, "{}\n", description.trim());
    }
    let a = &analysis.base_battle.a;
    let b = &analysis.base_battle.b;
    let _ = writeln!(
        md,
        "Side A: {} ({} SP, morale {}, leader {}, tactics: {}). Side B: {} ({} SP, morale {}, leader {}, tactics: {}). Seed {}, {} battles per grid point.\n",
        a.name, a.sp, a.morale, a.leader, a.tactics.describe(), b.name, b.sp, b.morale, b.leader, b.tactics.describe(), results.seed, results.trials
    );
    book.text(&md);
    let decimals = analysis.header.tables.decimals;
    let axes: Vec<usize> = (0..analysis.axes.len()).collect();
    for (variant_index, variant) in analysis.variants.iter().enumerate() {
        let title = format!("Who loses — {}", variant.name);
        book.text(&format!(
            "## {title}\n\nThe smaller force (fewer SP at the start; on equal SP, {}) and how often it loses (broken, or withdrawing alone), each side's chance to win, and the SP each side loses on average; exact where the battle was enumerated, else simulated.\n\n",
            names[1]
        ));
        let header: Vec<String> = analysis
            .axes
            .iter()
            .map(|a| a.parameter.clone())
            .chain([
                "smaller".to_string(),
                "P(smaller loses)".to_string(),
                format!("P({} wins)", names[0]),
                format!("P({} wins)", names[1]),
                format!("SP lost by {}", names[0]),
                format!("SP lost by {}", names[1]),
                "source".to_string(),
            ])
            .collect();
        let mut table = Table::new(&title, header);
        for (index, (run, result)) in analysis
            .runs
            .iter()
            .zip(&results.runs)
            .enumerate()
            .filter(|(_, (run, _))| run.variant == variant_index)
        {
            let distribution = result
                .exact
                .clone()
                .unwrap_or_else(|| estimated(&result.histogram));
            let smaller = smaller_side(run);
            let mean = |side: usize| match &result.exact {
                Some(e) => crate::stats::distribution_mean(&e.sp_lost[side]),
                None => count_mean(&result.histogram.sp_lost[side]),
            };
            let mut cells: Vec<Cell> = axes
                .iter()
                .map(|&i| Cell::text(run.coordinates[i].to_string()))
                .collect();
            cells.extend([
                Cell::text(names[smaller].clone()),
                Cell::percent(p_loses(&distribution.result, smaller), decimals),
                Cell::percent(distribution.result[BattleResult::AWins.index()], decimals),
                Cell::percent(distribution.result[BattleResult::BWins.index()], decimals),
                Cell::decimal(mean(0), 2),
                Cell::decimal(mean(1), 2),
                Cell::text(if result.exact.is_some() {
                    "exact"
                } else {
                    "simulated"
                }),
            ]);
            table.row(cells);
            // The page's panel recomputes these from the run's outcomes and metrics.
            let at = axes.len();
            let outcomes = |keep: &dyn Fn(&BattleResult) -> bool| {
                Live::Outcomes(
                    BattleResult::ALL
                        .iter()
                        .filter(|r| keep(r))
                        .map(|r| r.label().to_string())
                        .collect(),
                )
            };
            table.live(at + 1, index, outcomes(&|r| r.loses(smaller)));
            table.live(at + 2, index, outcomes(&|r| *r == BattleResult::AWins));
            table.live(at + 3, index, outcomes(&|r| *r == BattleResult::BWins));
            table.live(at + 4, index, Live::Mean("sp_lost_a".into()));
            table.live(at + 5, index, Live::Mean("sp_lost_b".into()));
            table.live(at + 6, index, Live::Source);
        }
        book.table(table);
        book.text("\n");
    }
    let crts = battlelab_core::engine::System::printed(analysis).tables();
    for (variant_index, variant) in analysis.variants.iter().enumerate() {
        let rules = &variant.rules;
        let title = format!("Combat Results Table — {}", variant.name);
        let mut md = String::new();
        let _ = writeln!(md, "## {title}\n");
        let _ = writeln!(
            md,
            "Result for L / result for S, by odds column and modified 2d6 roll (net DRM capped at ±{}, roll clamped to {}–{}).\n",
            rules.drm_cap, rules.roll_min, rules.roll_max
        );
        book.text(&md);
        // The CRT as the file gives it, from the core (`System::printed`): the page
        // reprints it after an edit to its cells. Its chance row (the `in36` format)
        // keeps its numbers for the spreadsheet, printed as the core prints them.
        if let Some(printed) = crts.iter().find(|t| t.title == title) {
            let mut crt = Table::from_printed(printed);
            if analysis.header.tables.format == crate::analysis::TableFormat::In36 {
                let ways = roll_ways(rules.roll_min, rules.roll_max);
                let chances = crate::report::rulebook::exact_row(analysis.header.tables, &ways, 36);
                if let Some(row) = crt.rows.last_mut() {
                    *row = std::iter::once(Cell::text("chance at net DRM 0"))
                        .chain(chances.values)
                        .collect();
                }
            }
            book.table(crt);
        }
        let mut md = String::new();
        let _ = writeln!(md);
        if !rules.crt_cells.is_empty() {
            let _ = writeln!(
                md,
                "`*` edited by rules.crt_cells: that odds row and modified roll only; every other cell reads its result column.\n"
            );
            let unreached: Vec<String> = rules
                .crt_cells
                .iter()
                .filter(|e| !(rules.roll_min..=rules.roll_max).contains(&e.roll))
                .map(|e| format!("{} roll {} = {}", e.odds_label(), e.roll, e.pair))
                .collect();
            if !unreached.is_empty() {
                let _ = writeln!(
                    md,
                    "Edited but never reached (the modified roll is clamped to {}–{}): {}.\n",
                    rules.roll_min,
                    rules.roll_max,
                    unreached.join(", ")
                );
            }
        }

        let live = field_derived::reached(&counts_of(results), &exact_of(results));
        let title = format!("Battle outcomes — {}", variant.name);
        let _ = writeln!(md, "## {title}\n");
        let source = if results.runs.iter().all(|r| r.exact.is_some()) {
            "exact enumeration"
        } else {
            "simulation (exact enumeration where the state space was small)"
        };
        let _ = writeln!(
            md,
            "Percent of battles, from {source}; each row adds up to exactly {}%.\n",
            crate::report::rulebook::hundred(analysis.header.tables)
        );
        book.text(&md);
        let mut moved = false;
        let header: Vec<String> = analysis
            .axes
            .iter()
            .map(|a| a.parameter.clone())
            .chain(live.iter().map(|r| with_side_names(r.label(), &names)))
            .collect();
        let mut outcomes = Table::new(&title, header);
        let format = NumberFormat::Percent(analysis.header.tables.decimals);
        for (index, (run, _)) in analysis
            .runs
            .iter()
            .zip(&results.runs)
            .enumerate()
            .filter(|(_, (run, _))| run.variant == variant_index)
        {
            // Each run's percentages of the results some run reaches, rounded to add up
            // to 100 and printed by the core, for this table and the page's panel alike.
            let keys: Vec<String> = live
                .iter()
                .map(|&r| field_derived::outcome_key(index, r, &live))
                .collect();
            let cells: Vec<Cell> = axes
                .iter()
                .map(|&i| Cell::text(run.coordinates[i].to_string()))
                .chain(keys.iter().map(|key| derived_cell(derived, key, format)))
                .collect();
            moved |= cells
                .iter()
                .any(|c| c.shown().ends_with(crate::report::rulebook::MOVED_MARK));
            outcomes.row(cells);
            for (k, key) in keys.into_iter().enumerate() {
                outcomes.live(axes.len() + k, index, Live::DerivedText(key));
            }
        }
        book.table(outcomes);
        book.text("\n");
        if moved {
            book.text(&format!("{}\n\n", crate::report::rulebook::MOVED_NOTE));
        }
    }
    book.text(&with_side_names(
        "A loses when B breaks it (SP or morale 0) or when A withdraws alone; likewise B. \"round limit\": both sides still stand after the last round.\n",
        &names,
    ));
    book
}

#[cfg(test)]
mod tests {
    #[test]
    fn roll_ways_count_the_faces_of_2d6() {
        // 2d6: 1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1 ways in 36 for 2 … 12.
        assert_eq!(super::roll_ways(2, 12), [1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1]);
        // Clamped to 4–10: 2, 3 and 4 read 4 (1 + 2 + 3), 10, 11 and 12 read 10.
        assert_eq!(super::roll_ways(4, 10), [6, 4, 5, 6, 5, 4, 6]);
    }
}
