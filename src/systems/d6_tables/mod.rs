//! The d6 table studies' report: expected values per point, the turns study's
//! survival, charts and rulebook tables. The system itself is in
//! `battlelab_core::systems::d6_tables`.

pub use battlelab_core::systems::d6_tables::*;

use std::path::Path;

use crate::analysis::AxisValue;
use crate::chart::{self, BarGroup};
use crate::engine::derived::Derived;
use crate::frame::LongFrame;
use crate::report::rulebook::{derived_cell, Cell, Live, NumberFormat, Rulebook, Table};
use crate::report::{self, Charts, ReportError};

impl crate::pipeline::SystemReport for D6TableStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
        charts: &Charts,
    ) -> Result<(), ReportError> {
        let derived = crate::engine::System::derived(self, &results.counts, &results.exact);
        write_extras(self, &D6TableResults::of(results), &derived, dir, charts)
    }
}

/// A table study's own frames (expected values per point, the turns study's survival),
/// charts and rulebook tables.
fn write_extras(
    study: &D6TableStudy,
    results: &D6TableResults,
    derived: &[Derived],
    dir: &Path,
    charts: &Charts,
) -> Result<(), ReportError> {
    let axes: Vec<&str> = study.axes.iter().map(|a| a.parameter.as_str()).collect();
    let mut expectations = LongFrame::new(&axes);
    for (point, result) in study.points.iter().zip(&results.points) {
        let (variant, table) = &study.variants[point.variant];
        let n: u64 = result.counts.iter().sum();
        let mut row = expectations
            .row(variant, &point.coordinates)
            .text(
                "column",
                &point.column.map_or("none".to_string(), |c| {
                    table.table().column_labels[c].clone()
                }),
            )
            .int("net_drm", point.drm.into())
            .int("trials", n as i64);
        for (name, values) in lookup::outcome_values(&study.header.system, table.outcomes()) {
            let key = crate::analysis::slug(name);
            let simulated = result
                .counts
                .iter()
                .zip(&values)
                .map(|(c, v)| *c as f64 * *v as f64)
                .sum::<f64>()
                / n as f64;
            let exact = result.exact.expectation(|i| values[i]);
            row = row
                .float(&key, Some(simulated))
                .float(&format!("exact_{key}"), Some(exact.to_f64()))
                .text(&format!("exact_{key}_fraction"), &exact.to_string());
        }
        row.finish();
    }
    let mut expectations = expectations
        .build(&study.header.system)
        .map_err(report::frame_error(dir))?;
    report::write_frame(dir, "expectations", &mut expectations)?;
    if let Some(turns) = study.turns {
        let mut survival = LongFrame::new(&[]);
        for ((variant, _), result) in study.variants.iter().zip(&results.turns) {
            let n: u64 = result.counts.iter().sum();
            for (turn, distribution) in result.exact.iter().enumerate() {
                for (sp, &p) in distribution.iter().enumerate() {
                    let last = turn == turns.turns as usize;
                    survival
                        .row(variant, &[])
                        .int("turn", turn as i64)
                        .int("sp_left", sp as i64)
                        .float("exact", Some(p))
                        .float(
                            "probability",
                            last.then(|| result.counts[sp] as f64 / n as f64),
                        )
                        .finish();
                }
            }
        }
        let mut survival = survival
            .build(&study.header.system)
            .map_err(report::frame_error(dir))?;
        report::write_frame(dir, "survival", &mut survival)?;
    }
    draw_charts(study, results, charts)?;
    rulebook_tables(study, results, derived).write(charts)
}

/// Points of one variant in a slice (every other axis free), in grid order.
fn points_in(study: &D6TableStudy, variant: usize, slice: &[(usize, AxisValue)]) -> Vec<usize> {
    study
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.variant == variant && report::in_slice(&p.coordinates, slice))
        .map(|(i, _)| i)
        .collect()
}

fn draw_charts(
    study: &D6TableStudy,
    results: &D6TableResults,
    charts: &Charts,
) -> Result<(), ReportError> {
    let axes = &study.axes;
    let x: Vec<usize> = if axes.is_empty() { vec![] } else { vec![0] };
    let x_label = axes
        .first()
        .map_or("roll".to_string(), |a| a.parameter.clone());
    for (variant, (name, table)) in study.variants.iter().enumerate() {
        let suffix = report::variant_suffix(name, study.variants.len());
        let series: Vec<String> = table.outcomes().to_vec();
        let of = Some(name.as_str());
        report::draw_pages(
            axes,
            &x,
            charts,
            of,
            &format!("outcomes{suffix}"),
            &format!("{} outcomes — {name}", study.header.system),
            &|slice| chart::Panel::Bars {
                x_label: x_label.clone(),
                y_label: "probability".into(),
                series: series.clone(),
                groups: points_in(study, variant, slice)
                    .into_iter()
                    .map(|p| BarGroup {
                        label: if x.is_empty() {
                            "all".to_string()
                        } else {
                            study.points[p].coordinates[0].to_string()
                        },
                        values: (0..series.len())
                            .map(|i| results.points[p].exact.probability(i))
                            .collect(),
                    })
                    .collect(),
            },
        )?;
        // Expectations as lines over the first axis, one line per value of the second.
        let drawn: Vec<usize> = (0..axes.len().min(2)).collect();
        for (expectation, values) in lookup::outcome_values(&study.header.system, table.outcomes())
        {
            let line = |points: &[usize], label: String| {
                let xy = points
                    .iter()
                    .enumerate()
                    .map(|(k, &p)| {
                        let xv = match &study.points[p].coordinates.first() {
                            Some(AxisValue::Int(v)) => *v as f64,
                            _ => k as f64,
                        };
                        (
                            xv,
                            results.points[p].exact.expectation(|i| values[i]).to_f64(),
                        )
                    })
                    .collect();
                (label, xy)
            };
            report::draw_pages(
                axes,
                &drawn,
                charts,
                of,
                &format!("expected_{}{suffix}", crate::analysis::slug(expectation)),
                &format!("{expectation} per roll — {name}"),
                &|slice| {
                    let series = match axes.get(1) {
                        Some(second) => second
                            .values
                            .iter()
                            .map(|v| {
                                let mut slice = slice.to_vec();
                                slice.push((1, v.clone()));
                                line(
                                    &points_in(study, variant, &slice),
                                    format!("{} {v}", second.parameter),
                                )
                            })
                            .collect(),
                        None => vec![line(
                            &points_in(study, variant, slice),
                            expectation.to_string(),
                        )],
                    };
                    chart::Panel::Lines {
                        x_label: x_label.clone(),
                        y_label: expectation.to_string(),
                        series,
                    }
                },
            )?;
        }
        if let (Some(turns), Some(result)) = (study.turns, results.turns.get(variant)) {
            let series: Vec<(String, Vec<(f64, f64)>)> = result
                .exact
                .iter()
                .enumerate()
                .skip(1)
                .map(|(turn, d)| {
                    (
                        format!("after turn {turn}"),
                        d.iter()
                            .enumerate()
                            .map(|(sp, &p)| (sp as f64, p))
                            .collect(),
                    )
                })
                .collect();
            chart::distributions(
                &charts.path(&format!("survival{suffix}"), of),
                &format!(
                    "SP left of a {}-SP stack, DRM {} — {name}",
                    turns.sp,
                    crate::report::rulebook::signed(turns.drm)
                ),
                "SP left",
                "probability",
                &series,
            )?;
        }
    }
    Ok(())
}

/// Rulebook tables: per variant, the outcomes at every grid point first (each outcome's
/// exact chance and the expected values: the answer), then the printed table, a march
/// study's best request and a turns study's survival.
fn rulebook_tables(
    study: &D6TableStudy,
    results: &D6TableResults,
    derived: &[Derived],
) -> Rulebook {
    use std::fmt::Write;
    let mut book = Rulebook::new(
        &study.header.name,
        format!(
            "Seed {}, {} rolls per grid point",
            results.seed, results.trials
        ),
    );
    let mut md = format!("# {} — rulebook tables\n\n", study.header.name);
    if let Some(d) = &study.header.description {
        let _ = writeln!(md, "{}\n", d.trim());
    }
    let options = study.header.tables;
    let _ = writeln!(
        md,
        "Seed {}, {} rolls per grid point; chances from exact enumeration, as {}.\n",
        results.seed,
        results.trials,
        report::rulebook::describe(options)
    );
    book.text(&md);
    let tables_as_given = battlelab_core::engine::System::printed(study).tables();
    for (variant, (name, table)) in study.variants.iter().enumerate() {
        let t = table.table();
        let title = format!("Outcomes per grid point — {name}");
        book.text(&format!("## {title}\n\n"));
        let values = lookup::outcome_values(&study.header.system, table.outcomes());
        let rows = printed_rows(study, variant);
        let header: Vec<String> = study
            .axes
            .iter()
            .map(|a| column_heading(study, &a.parameter))
            .chain(
                table
                    .outcomes()
                    .iter()
                    .map(|o| report::rulebook::column_header(options, o)),
            )
            .chain(values.iter().map(|(n, _)| n.to_string()))
            .collect();
        let mut outcomes = Table::new(&title, header);
        let mut moved = false;
        for row in &rows {
            // A row's points roll the same: the page recomputes it from its first.
            let run = row.points[0];
            let result = &results.points[run];
            let chances =
                report::rulebook::exact_row(options, &result.exact.counts, result.exact.total);
            moved |= chances.moved;
            let cells: Vec<Cell> = row
                .labels
                .iter()
                .cloned()
                .map(Cell::Text)
                .chain(chances.values)
                .chain(values.iter().map(|(_, v)| {
                    let e = result.exact.expectation(|i| v[i]);
                    Cell::number(
                        e.to_f64(),
                        NumberFormat::Decimal(3),
                        format!("{e} ({:.3})", e.to_f64()),
                    )
                }))
                .collect();
            outcomes.row(cells);
            // Every chance and expected value is recomputed by the page's panel.
            let first = row.labels.len();
            for (i, outcome) in table.outcomes().iter().enumerate() {
                let of = table.outcomes().to_vec();
                let live = Live::Chance {
                    outcome: outcome.clone(),
                    of,
                };
                outcomes.live(first + i, run, live);
            }
            let first = first + table.outcomes().len();
            for (i, (name, _)) in values.iter().enumerate() {
                outcomes.live(first + i, run, Live::Expected(name.to_string()));
            }
        }
        book.table(outcomes);
        book.text("\n");
        if let Some(note) = column_note(study, &rows) {
            book.text(&format!("{note}\n\n"));
        }
        if moved {
            book.text(&format!("{}\n\n", report::rulebook::MOVED_NOTE));
        }
        if study.header.system == "march" {
            let best_title = format!("Best request per DRM — {name}");
            book.text(&format!("### {best_title}\n\nExpected extra MP per SP eliminated (∞ when no SP is lost); the best request in bold.\n\n"));
            let mut best_table = Table::new(
                &best_title,
                ["DRM", "extra 1", "extra 2", "extra 3"]
                    .map(String::from)
                    .to_vec(),
            );
            // Derived by the core (as the page's panel gets it): expected extra MP per SP
            // eliminated for each request, the best marked.
            for drm in derived::drms(study, variant) {
                let cells: Vec<Cell> =
                    std::iter::once(Cell::text(crate::report::rulebook::signed(drm)))
                        .chain((0..derived::REQUESTS).map(|request| {
                            let key = derived::best_request_key(name, drm, request);
                            derived_cell(derived, &key, NumberFormat::Decimal(2))
                        }))
                        .collect();
                best_table.row(cells);
                // The page recomputes a row from its DRM's first grid point's run.
                let run = study
                    .points
                    .iter()
                    .position(|p| p.variant == variant && p.drm == drm)
                    .expect("a DRM of the variant's points");
                for request in 0..derived::REQUESTS {
                    let key = derived::best_request_key(name, drm, request);
                    let format = NumberFormat::Decimal(2);
                    best_table.live(1 + request, run, Live::Derived { key, format });
                }
            }
            book.table(best_table);
            book.text("\n");
        }
        let printed = format!("The {} table — {name}", t.name);
        book.text(&format!("## {printed}\n\n"));
        // The table as the file gives it, from the core (`System::printed`): the page
        // reprints it after an edit to its cells.
        match tables_as_given.iter().find(|t| t.title == printed) {
            Some(t) => book.printed_table(t),
            None => book.table(Table::from_markdown(&printed, &t.markdown())),
        }
        book.text("\n");
        if let (Some(turns), Some(result)) = (study.turns, results.turns.get(variant)) {
            let turns_title = format!(
                "A {}-SP stack sitting {} turns, DRM {} — {name}",
                turns.sp,
                turns.turns,
                crate::report::rulebook::signed(turns.drm)
            );
            book.text(&format!("## {turns_title}\n\n"));
            let mut survival = Table::new(
                &turns_title,
                [
                    "turn",
                    "expected SP left",
                    "P(no loss)",
                    "P(half or less left)",
                ]
                .map(String::from)
                .to_vec(),
            );
            // Derived by the core (as the page's panel gets it), from the turns run.
            let run = study.points.len() + variant;
            let formats = [
                NumberFormat::Decimal(3),
                NumberFormat::Percent(1),
                NumberFormat::Percent(1),
            ];
            for turn in 1..result.exact.len() {
                let cells = std::iter::once(Cell::text(turn.to_string()))
                    .chain(
                        derived::Survival::ALL
                            .iter()
                            .zip(formats)
                            .map(|(&what, format)| {
                                derived_cell(
                                    derived,
                                    &derived::survival_key(name, turn, what),
                                    format,
                                )
                            }),
                    )
                    .collect();
                survival.row(cells);
                for (k, (&what, format)) in derived::Survival::ALL.iter().zip(formats).enumerate() {
                    let key = derived::survival_key(name, turn, what);
                    survival.live(1 + k, run, Live::Derived { key, format });
                }
            }
            book.table(survival);
            book.text("\n");
        }
    }
    book
}

/// The swept parameter that picks a printed column of the table, if any.
fn column_parameter(system: &str) -> Option<&'static str> {
    match system {
        "attrition" => Some("sp"),
        "march" => Some("extra"),
        "naval" => Some("odds"),
        _ => None,
    }
}

/// A rulebook table's heading for a swept parameter: the column parameter reads as the
/// printed column it reaches.
fn column_heading(study: &D6TableStudy, parameter: &str) -> String {
    match (column_parameter(&study.header.system), parameter) {
        (Some("sp"), "sp") => "SP column".to_string(),
        (Some(p), q) if p == q => format!("{p} column"),
        _ => parameter.to_string(),
    }
}

/// One printed row of the outcomes table: the grid points it stands for (identical
/// rolls: the same printed column and every other swept value the same) and its labels.
struct PrintedRow {
    points: Vec<usize>,
    labels: Vec<String>,
    /// The swept values of the column parameter that reached this row's column.
    swept: Vec<String>,
}

/// The rows of one variant's outcomes table, labelled by the printed column a point's
/// column parameter reaches (attrition at 8 SP reads the "6-10" column); points that
/// reach the same column with every other swept value equal roll the same and share a
/// row, which lists the swept values.
fn printed_rows(study: &D6TableStudy, variant: usize) -> Vec<PrintedRow> {
    let column_axis = column_parameter(&study.header.system)
        .and_then(|p| study.axes.iter().position(|a| a.parameter == p));
    let table = study.variants[variant].1.table();
    let mut rows: Vec<(Option<usize>, Vec<AxisValue>, PrintedRow)> = Vec::new();
    for (index, point) in study.points.iter().enumerate() {
        if point.variant != variant {
            continue;
        }
        let rest: Vec<AxisValue> = point
            .coordinates
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != column_axis)
            .map(|(_, v)| v.clone())
            .collect();
        let key_column = column_axis.map(|_| point.column);
        let swept = column_axis.map(|i| point.coordinates[i].to_string());
        if let Some((_, _, row)) = rows
            .iter_mut()
            .find(|(c, r, _)| column_axis.is_some() && *c == key_column.flatten() && *r == rest)
        {
            row.points.push(index);
            row.swept.extend(swept);
            continue;
        }
        let labels = point
            .coordinates
            .iter()
            .enumerate()
            .map(|(i, v)| {
                if Some(i) == column_axis {
                    point
                        .column
                        .map_or("none".to_string(), |c| table.column_labels[c].clone())
                } else {
                    v.to_string()
                }
            })
            .collect();
        rows.push((
            key_column.flatten(),
            rest,
            PrintedRow {
                points: vec![index],
                labels,
                swept: swept.into_iter().collect(),
            },
        ));
    }
    let mut rows: Vec<PrintedRow> = rows.into_iter().map(|(_, _, r)| r).collect();
    // A column reached by several swept values names them: "6-10 (6, 8 SP)".
    if let Some(axis) = column_axis {
        let unit = if study.header.system == "attrition" {
            " SP"
        } else {
            ""
        };
        for row in &mut rows {
            if row.swept.len() > 1 {
                row.labels[axis] = format!("{} ({}{unit})", row.labels[axis], row.swept.join(", "));
            }
        }
    }
    rows
}

/// What the column labels of the outcomes table mean, where a swept value is not itself
/// the printed column.
fn column_note(study: &D6TableStudy, rows: &[PrintedRow]) -> Option<String> {
    match study.header.system.as_str() {
        "attrition" if study.axes.iter().any(|a| a.parameter == "sp") => {
            let none = rows
                .iter()
                .any(|r| study.points[r.points[0]].column.is_none());
            Some(format!(
                "Rows are the printed SP column each swept stack size reaches; sizes that reach the same column roll the same and share a row.{}",
                if none { " \"none\": a hex under 3 SP, which does not roll (small_stack = \"none\")." } else { "" }
            ))
        }
        _ => None,
    }
}
