//! Naval engagements' report: expected control and NSP lost, charts over odds and DRM,
//! rulebook tables. The system itself (keys, plan, kernel calls) is in
//! `battlelab_core::systems::naval_engagement`.

pub use battlelab_core::systems::naval_engagement::*;

use std::path::Path;

use crate::analysis::AxisValue;
use crate::chart::{self, BarGroup};
use crate::frame::LongFrame;
use crate::report::rulebook::{Cell, Live, Rulebook, Table};
use crate::report::{self, with_side_names, Charts, ReportError};
use crate::stats::percentages_summing_to_100;
use battlelab_core::systems::naval_engagement::engagement::EngagementResult;

impl crate::pipeline::SystemReport for NavalEngagementStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
        charts: &Charts,
    ) -> Result<(), ReportError> {
        let results = NavalEngagementResults::of(results);
        let frame_error = report::frame_error(dir);
        let axes: Vec<&str> = self.axes.iter().map(|a| a.parameter.as_str()).collect();
        let mut expectations = LongFrame::new(&axes);
        for ((variant, coordinates, engagement), (h, exact)) in self.runs.iter().zip(&results.runs)
        {
            let vname = &self.variants[*variant].0;
            let n = h.trials();
            let est: [f64; EngagementResult::COUNT] =
                std::array::from_fn(|i| h.result[i] as f64 / n as f64);
            expectations
                .row(vname, coordinates)
                .int("start_nsp_a", engagement.a.nsp.into())
                .int("start_nsp_b", engagement.b.nsp.into())
                .int("trials", n as i64)
                .float("p_a_control", Some(p_control(&est, 0)))
                .float("p_b_control", Some(p_control(&est, 1)))
                .float("exact_p_a_control", Some(p_control(&exact.result, 0)))
                .float("exact_p_b_control", Some(p_control(&exact.result, 1)))
                .float(
                    "mean_nsp_lost_a",
                    Some(crate::stats::count_mean(&h.nsp_lost[0])),
                )
                .float(
                    "mean_nsp_lost_b",
                    Some(crate::stats::count_mean(&h.nsp_lost[1])),
                )
                .float(
                    "exact_mean_nsp_lost_a",
                    Some(crate::stats::distribution_mean(&exact.nsp_lost[0])),
                )
                .float(
                    "exact_mean_nsp_lost_b",
                    Some(crate::stats::distribution_mean(&exact.nsp_lost[1])),
                )
                .float("mean_rounds", Some(crate::stats::count_mean(&h.rounds)))
                .finish();
        }
        report::write_frame(
            dir,
            "expectations",
            &mut expectations
                .build("naval_engagement")
                .map_err(frame_error)?,
        )?;
        draw_charts(self, &results, charts)?;
        rulebook_tables(self, &results).write(charts)
    }
}

/// What the page's panel sums for [`p_control`]: the results that leave `side` in control.
fn control(side: usize) -> Live {
    Live::Outcomes(
        EngagementResult::ALL
            .iter()
            .filter(|r| r.control() == Some(side))
            .map(|r| r.label().to_string())
            .collect(),
    )
}

fn p_control(result: &[f64; EngagementResult::COUNT], side: usize) -> f64 {
    EngagementResult::ALL
        .iter()
        .filter(|r| r.control() == Some(side))
        .map(|r| result[*r as usize])
        .sum()
}

/// Runs of one variant in a slice (every other axis free), in grid order.
fn runs_in(
    study: &NavalEngagementStudy,
    variant: usize,
    slice: &[(usize, AxisValue)],
) -> Vec<usize> {
    study
        .runs
        .iter()
        .enumerate()
        .filter(|(_, (v, c, _))| *v == variant && report::in_slice(c, slice))
        .map(|(i, _)| i)
        .collect()
}

fn draw_charts(
    study: &NavalEngagementStudy,
    results: &NavalEngagementResults,
    charts: &Charts,
) -> Result<(), ReportError> {
    let names = &study.side_names;
    let axes = &study.axes;
    let first: Vec<usize> = if axes.is_empty() { vec![] } else { vec![0] };
    for (variant, (vname, _)) in study.variants.iter().enumerate() {
        let suffix = report::variant_suffix(vname, study.variants.len());
        let of = Some(vname.as_str());
        if axes.len() >= 2 {
            let (x, y) = (&axes[0], &axes[1]);
            report::draw_pages(
                axes,
                &[0, 1],
                charts,
                of,
                &format!("heatmap_a_control{suffix}"),
                &format!("P({} ends in control of the sea) — {vname}", names[0]),
                &|slice| {
                    let runs = runs_in(study, variant, slice);
                    let values: Vec<Vec<f64>> = y
                        .values
                        .iter()
                        .map(|yv| {
                            x.values
                                .iter()
                                .map(|xv| {
                                    runs.iter()
                                        .find(|&&r| {
                                            study.runs[r].1[0] == *xv && study.runs[r].1[1] == *yv
                                        })
                                        .map_or(f64::NAN, |&r| {
                                            p_control(&results.runs[r].1.result, 0)
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
        // Outcome bars and NSP lost over the first axis, every other axis in panels and
        // files of its own.
        let label = |r: usize| {
            if axes.is_empty() {
                "engagement".to_string()
            } else {
                format!("{} {}", axes[0].parameter, study.runs[r].1[0])
            }
        };
        let series: Vec<String> = EngagementResult::LABELS
            .iter()
            .map(|s| with_side_names(s, names))
            .collect();
        report::draw_pages(
            axes,
            &first,
            charts,
            of,
            &format!("outcomes{suffix}"),
            &format!("Engagement outcomes — {vname}"),
            &|slice| chart::Panel::Bars {
                x_label: axes
                    .first()
                    .map_or("engagement".to_string(), |a| a.parameter.clone()),
                y_label: "probability".into(),
                series: series.clone(),
                groups: runs_in(study, variant, slice)
                    .into_iter()
                    .map(|r| BarGroup {
                        label: label(r),
                        values: results.runs[r].1.result.to_vec(),
                    })
                    .collect(),
            },
        )?;
        for side in 0..2 {
            report::draw_pages(
                axes,
                &first,
                charts,
                of,
                &format!("nsp_lost_{}{suffix}", ["a", "b"][side]),
                &format!("NSP lost by {} — {vname}", names[side]),
                &|slice| chart::Panel::Lines {
                    x_label: "NSP lost (sunk or captured)".into(),
                    y_label: "probability".into(),
                    series: runs_in(study, variant, slice)
                        .into_iter()
                        .map(|r| {
                            (
                                label(r),
                                results.runs[r].1.nsp_lost[side]
                                    .iter()
                                    .enumerate()
                                    .map(|(v, &p)| (v as f64, p))
                                    .collect(),
                            )
                        })
                        .collect(),
                },
            )?;
        }
    }
    Ok(())
}

/// Rulebook tables: per variant, the headline — who ends in control and the NSP each
/// fleet loses, exact — then the naval table and every outcome per grid point.
fn rulebook_tables(study: &NavalEngagementStudy, results: &NavalEngagementResults) -> Rulebook {
    use std::fmt::Write;
    let names = &study.side_names;
    let mut book = Rulebook::new(
        &study.header.name,
        format!(
            "Seed {}, {} engagements per grid point",
            results.seed, results.trials
        ),
    );
    let mut md = format!("# {} — rulebook tables\n\n", study.header.name);
    if let Some(d) = &study.header.description {
        let _ = writeln!(md, "{}\n", d.trim());
    }
    let _ = writeln!(md, "Fleet A: {}. Fleet B: {}. Percent of engagements from exact enumeration (each row adds up to exactly 100.0%); seed {}, {} simulated engagements per grid point beside them in results.csv.\n", names[0], names[1], results.seed, results.trials);
    book.text(&md);
    let axis_cells = |coordinates: &[AxisValue]| -> Vec<Cell> {
        coordinates
            .iter()
            .map(|c| Cell::text(c.to_string()))
            .collect()
    };
    for (variant, (vname, _)) in study.variants.iter().enumerate() {
        let title = format!("Who controls the sea — {vname}");
        book.text(&format!("## {title}\n\nP(each fleet ends in control of the sea) and the NSP each loses on average (sunk or captured), exact.\n\n"));
        let header: Vec<String> = study
            .axes
            .iter()
            .map(|a| a.parameter.clone())
            .chain([
                format!("P({} in control)", names[0]),
                format!("P({} in control)", names[1]),
                format!("NSP lost by {}", names[0]),
                format!("NSP lost by {}", names[1]),
            ])
            .collect();
        let mut table = Table::new(&title, header);
        for (run, ((v, coordinates, _), (_, exact))) in
            study.runs.iter().zip(&results.runs).enumerate()
        {
            if *v != variant {
                continue;
            }
            let mut cells = axis_cells(coordinates);
            cells.extend([
                Cell::percent(p_control(&exact.result, 0), 1),
                Cell::percent(p_control(&exact.result, 1), 1),
                Cell::decimal(crate::stats::distribution_mean(&exact.nsp_lost[0]), 2),
                Cell::decimal(crate::stats::distribution_mean(&exact.nsp_lost[1]), 2),
            ]);
            table.row(cells);
            let at = coordinates.len();
            table.live(at, run, control(0));
            table.live(at + 1, run, control(1));
            table.live(at + 2, run, Live::Mean("nsp_lost_a".into()));
            table.live(at + 3, run, Live::Mean("nsp_lost_b".into()));
        }
        book.table(table);
        book.text("\n");
    }
    let tables_as_given = battlelab_core::engine::System::printed(study).tables();
    for (variant, (vname, naval)) in study.variants.iter().enumerate() {
        let t = naval.table().table();
        let printed = format!("Naval combat table — {vname}");
        book.text(&format!("## {printed}\n\n"));
        // The table as the file gives it, from the core (`System::printed`): the page
        // reprints it after an edit to its cells.
        match tables_as_given.iter().find(|t| t.title == printed) {
            Some(t) => book.printed_table(t),
            None => book.table(Table::from_markdown(&printed, &t.markdown())),
        }
        let title = format!("Engagements — {vname}");
        book.text(&format!("## {title}\n\n"));
        let header: Vec<String> = study
            .axes
            .iter()
            .map(|a| a.parameter.clone())
            .chain(
                EngagementResult::LABELS
                    .iter()
                    .map(|s| with_side_names(s, names)),
            )
            .chain([
                format!("{} in control", names[0]),
                format!("NSP lost {}", names[0]),
                format!("NSP lost {}", names[1]),
            ])
            .collect();
        let mut table = Table::new(&title, header);
        for (run, ((v, coordinates, _), (_, exact))) in
            study.runs.iter().zip(&results.runs).enumerate()
        {
            if *v != variant {
                continue;
            }
            let units = percentages_summing_to_100(&exact.result, 1);
            let mut cells = axis_cells(coordinates);
            cells.extend(units.iter().zip(&exact.result).map(|(u, &p)| {
                Cell::number(
                    p,
                    crate::report::rulebook::NumberFormat::Percent(1),
                    format!("{}.{}", u / 10, u % 10),
                )
            }));
            cells.extend([
                Cell::percent(p_control(&exact.result, 0), 1),
                Cell::decimal(crate::stats::distribution_mean(&exact.nsp_lost[0]), 2),
                Cell::decimal(crate::stats::distribution_mean(&exact.nsp_lost[1]), 2),
            ]);
            table.row(cells);
            let at = coordinates.len();
            for (k, r) in EngagementResult::ALL.iter().enumerate() {
                table.live(at + k, run, Live::Hundred(r.label().to_string()));
            }
            let at = at + EngagementResult::COUNT;
            table.live(at, run, control(0));
            table.live(at + 1, run, Live::Mean("nsp_lost_a".into()));
            table.live(at + 2, run, Live::Mean("nsp_lost_b".into()));
        }
        book.table(table);
        book.text("\n");
    }
    book.text("A fleet named by a result breaks off; the other may pursue, and on an intercept another round is fought. \"in control\": the fleet that did not break off at the end.\n");
    book
}
