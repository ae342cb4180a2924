//! The d6 table studies' report: expected values per point, the turns study's
//! survival, charts and rulebook tables. The system itself is in
//! `battlelab_core::systems::tables`.

pub use battlelab_core::systems::tables::*;

use std::path::Path;

use crate::analysis::AxisValue;
use crate::chart::{self, BarGroup};
use crate::frame::LongFrame;
use crate::report::{self, ReportError};
use crate::rules::d6table::{self};
use crate::stats::percentages_summing_to_100;

impl crate::pipeline::SystemReport for TableStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
    ) -> Result<(), ReportError> {
        write_extras(self, &TableResults::of(results), dir)
    }
}

/// A table study's own frames (expected values per point, the turns study's survival),
/// charts and rulebook tables.
fn write_extras(study: &TableStudy, results: &TableResults, dir: &Path) -> Result<(), ReportError> {
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
        for (name, values) in d6table::outcome_values(&study.system, table.outcomes()) {
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
        .build(&study.system)
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
            .build(&study.system)
            .map_err(report::frame_error(dir))?;
        report::write_frame(dir, "survival", &mut survival)?;
    }
    draw_charts(study, results, dir)?;
    report::write_text(dir, "tables.md", &rulebook_tables(study, results))
}

/// Points of one variant on axis `free`, every other axis at its first value.
fn slice(
    study: &TableStudy,
    variant: usize,
    free: Option<usize>,
    other: Option<(usize, &AxisValue)>,
) -> Vec<usize> {
    study
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            p.variant == variant
                && p.coordinates.iter().enumerate().all(|(i, v)| {
                    Some(i) == free
                        || other.is_some_and(|(j, w)| j == i && w == v)
                        || (other.is_none_or(|(j, _)| j != i) && *v == study.axes[i].values[0])
                })
        })
        .map(|(i, _)| i)
        .collect()
}

fn draw_charts(study: &TableStudy, results: &TableResults, dir: &Path) -> Result<(), ReportError> {
    let x = if study.axes.is_empty() { None } else { Some(0) };
    let x_label = study
        .axes
        .first()
        .map_or("roll".to_string(), |a| a.parameter.clone());
    for (variant, (name, table)) in study.variants.iter().enumerate() {
        let suffix = report::variant_suffix(name, study.variants.len());
        let series: Vec<String> = table.outcomes().to_vec();
        let groups: Vec<BarGroup> = slice(study, variant, x, None)
            .into_iter()
            .map(|p| BarGroup {
                label: x.map_or("all".to_string(), |_| {
                    study.points[p].coordinates[0].to_string()
                }),
                values: (0..series.len())
                    .map(|i| results.points[p].exact.probability(i))
                    .collect(),
            })
            .collect();
        chart::grouped_bars(
            &dir.join(format!("outcomes{suffix}")),
            &format!("{} outcomes — {name}", study.system),
            &x_label,
            "probability",
            &series,
            &groups,
        )?;
        // Expectations as lines over the first axis, one line per value of the second.
        for (expectation, values) in d6table::outcome_values(&study.system, table.outcomes()) {
            let lines: Vec<(AxisValue, Vec<usize>)> = match study.axes.get(1) {
                Some(second) => second
                    .values
                    .iter()
                    .map(|v| (v.clone(), slice(study, variant, x, Some((1, v)))))
                    .collect(),
                None => vec![(AxisValue::Int(0), slice(study, variant, x, None))],
            };
            let series: Vec<(String, Vec<(f64, f64)>)> = lines
                .into_iter()
                .map(|(value, points)| {
                    let label = study.axes.get(1).map_or(expectation.to_string(), |a| {
                        format!("{} {value}", a.parameter)
                    });
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
                })
                .collect();
            chart::distributions(
                &dir.join(format!(
                    "expected_{}{suffix}",
                    crate::analysis::slug(expectation)
                )),
                &format!("{expectation} per roll — {name}"),
                &x_label,
                expectation,
                &series,
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
                &dir.join(format!("survival{suffix}")),
                &format!(
                    "SP left of a {}-SP stack, DRM {} — {name}",
                    turns.sp,
                    crate::table::signed(turns.drm)
                ),
                "SP left",
                "probability",
                &series,
            )?;
        }
    }
    Ok(())
}

fn rulebook_tables(study: &TableStudy, results: &TableResults) -> String {
    use std::fmt::Write;
    let mut md = format!("# {} — rulebook tables\n\n", study.name);
    if let Some(d) = &study.description {
        let _ = writeln!(md, "{}\n", d.trim());
    }
    let _ = writeln!(md, "Seed {}, {} rolls per grid point; percentages from exact enumeration, each row adding up to exactly 100.0%.\n", results.seed, results.trials);
    for (variant, (name, table)) in study.variants.iter().enumerate() {
        let t = table.table();
        let _ = writeln!(md, "## The {} table — {name}\n", t.name);
        let _ = writeln!(md, "{}", t.markdown());
        let _ = writeln!(md, "## Outcomes per grid point — {name}\n");
        let values = d6table::outcome_values(&study.system, table.outcomes());
        let header: Vec<String> = study
            .axes
            .iter()
            .map(|a| a.parameter.clone())
            .chain(table.outcomes().iter().map(|o| format!("{o} %")))
            .chain(values.iter().map(|(n, _)| n.to_string()))
            .collect();
        let _ = writeln!(md, "| {} |", header.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(header.len()));
        for (point, result) in study
            .points
            .iter()
            .zip(&results.points)
            .filter(|(p, _)| p.variant == variant)
        {
            let p: Vec<f64> = (0..table.outcomes().len())
                .map(|i| result.exact.probability(i))
                .collect();
            let units = percentages_summing_to_100(&p, 1);
            let cells: Vec<String> = point
                .coordinates
                .iter()
                .map(ToString::to_string)
                .chain(units.iter().map(|u| format!("{}.{}", u / 10, u % 10)))
                .chain(values.iter().map(|(_, v)| {
                    let e = result.exact.expectation(|i| v[i]);
                    format!("{e} ({:.3})", e.to_f64())
                }))
                .collect();
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(md);
        if study.system == "march" {
            let _ = writeln!(md, "### Best request per DRM — {name}\n\nExpected extra MP per SP eliminated (∞ when no SP is lost); the best request in bold.\n");
            let drms: Vec<i32> = {
                let mut d: Vec<i32> = study
                    .points
                    .iter()
                    .filter(|p| p.variant == variant)
                    .map(|p| p.drm)
                    .collect();
                d.sort();
                d.dedup();
                d
            };
            let _ = writeln!(
                md,
                "| DRM | extra 1 | extra 2 | extra 3 |\n|---|---|---|---|"
            );
            for drm in drms {
                let ratio = |column: usize| {
                    let dist = table.distribution(column, drm);
                    let mp = dist.expectation(|i| values[0].1[i]).to_f64();
                    let sp = dist.expectation(|i| values[1].1[i]).to_f64();
                    if sp == 0.0 {
                        f64::INFINITY
                    } else {
                        mp / sp
                    }
                };
                let ratios: Vec<f64> = (0..3).map(ratio).collect();
                let best = ratios.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let cells: Vec<String> = ratios
                    .iter()
                    .map(|r| {
                        let text = if r.is_infinite() {
                            "∞".to_string()
                        } else {
                            format!("{r:.2}")
                        };
                        if *r == best {
                            format!("**{text}**")
                        } else {
                            text
                        }
                    })
                    .collect();
                let _ = writeln!(
                    md,
                    "| {} | {} |",
                    crate::table::signed(drm),
                    cells.join(" | ")
                );
            }
            let _ = writeln!(md);
        }
        if let (Some(turns), Some(result)) = (study.turns, results.turns.get(variant)) {
            let _ = writeln!(
                md,
                "## A {}-SP stack sitting {} turns, DRM {} — {name}\n",
                turns.sp,
                turns.turns,
                crate::table::signed(turns.drm)
            );
            let _ = writeln!(md, "| turn | expected SP left | P(no loss) | P(half or less left) |\n|---|---|---|---|");
            for (turn, d) in result.exact.iter().enumerate().skip(1) {
                let mean: f64 = d.iter().enumerate().map(|(sp, p)| sp as f64 * p).sum();
                let half: f64 = d
                    .iter()
                    .enumerate()
                    .filter(|(sp, _)| 2 * sp <= turns.sp as usize)
                    .map(|(_, p)| p)
                    .sum();
                let _ = writeln!(
                    md,
                    "| {turn} | {mean:.3} | {:.1}% | {:.1}% |",
                    d[turns.sp as usize] * 100.0,
                    half * 100.0
                );
            }
            let _ = writeln!(md);
        }
    }
    md
}
