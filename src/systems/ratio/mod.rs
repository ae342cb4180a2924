//! Ratio battles' report: expectations, each combat's states, the policies compared,
//! charts and rulebook tables. The system itself is in `battlelab_core::systems::ratio`.

pub use battlelab_core::systems::ratio::*;

use std::path::Path;

use crate::analysis::AxisValue;
use crate::chart::{self, BarGroup};
use crate::engine::derived::Derived;
use crate::frame::LongFrame;
use crate::report::rulebook::{derived_cell, Cell, Live, NumberFormat, Rulebook, Table};
use crate::report::{self, with_side_names, Charts, ReportError};
use crate::stats::{percentages_summing_to_100, wilson_interval, Z95};
use battlelab_core::systems::ratio::battle::{ArmyResult, CombatState, ReservePolicy};

impl crate::pipeline::SystemReport for RatioStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
        charts: &Charts,
    ) -> Result<(), ReportError> {
        let derived = crate::engine::System::derived(self, &results.counts, &results.exact);
        write_extras(
            self,
            &RatioResults::of(self, results),
            &derived,
            dir,
            charts,
        )
    }
}

/// The ratio study's own frames (expectations, each combat's states, the policies
/// compared), charts and rulebook tables.
fn write_extras(
    study: &RatioStudy,
    results: &RatioResults,
    derived: &[Derived],
    dir: &Path,
    charts: &Charts,
) -> Result<(), ReportError> {
    let frame_error = report::frame_error(dir);
    let axes: Vec<&str> = study.axes.iter().map(|a| a.parameter.as_str()).collect();
    let mut expectations = LongFrame::new(&axes);
    let mut combats = LongFrame::new(&axes);
    let mut policies = LongFrame::new(&axes);
    for (run, r) in study.runs.iter().zip(&results.runs) {
        let vname = &study.variants[run.variant];
        let h = &r.histogram;
        let n = h.trials();
        let exact = r.exact.as_ref().map(summary_exact);
        let sim = summary_simulated(h);
        let battle = run.combat.battle();
        let open = battle.escalation.as_deref().unwrap_or(battle);
        let ex = |f: &dyn Fn(&Summary) -> f64| exact.as_ref().map(f);
        expectations
            .row(vname, &run.coordinates)
            .int("units_a", open.units[0].len() as i64)
            .int("units_b", open.units[1].len() as i64)
            .int("reserves_a", open.reserves[0].len() as i64)
            .int("reserves_b", open.reserves[1].len() as i64)
            .text("line", &describe_line(open))
            .int("trials", n as i64)
            .float("p_a_wins", Some(sim.p_wins(0)))
            .float("p_b_wins", Some(sim.p_wins(1)))
            .float("p_draw", Some(sim.p_draw()))
            .float("exact_p_a_wins", ex(&|e| e.p_wins(0)))
            .float("exact_p_b_wins", ex(&|e| e.p_wins(1)))
            .float("exact_p_draw", ex(&|e| e.p_draw()))
            .float(
                "mean_cp_a",
                Some(crate::stats::distribution_mean(&sim.cp[0])),
            )
            .float(
                "mean_cp_b",
                Some(crate::stats::distribution_mean(&sim.cp[1])),
            )
            .float(
                "exact_mean_cp_a",
                ex(&|e| crate::stats::distribution_mean(&e.cp[0])),
            )
            .float(
                "exact_mean_cp_b",
                ex(&|e| crate::stats::distribution_mean(&e.cp[1])),
            )
            .float("p_exhaustion", Some(sim.p_exhaustion()))
            .float("exact_p_exhaustion", ex(&|e| e.p_exhaustion()))
            .float(
                "mean_reserves_used",
                Some(crate::stats::distribution_mean(&sim.reserves_used)),
            )
            .float(
                "exact_mean_reserves_used",
                ex(&|e| crate::stats::distribution_mean(&e.reserves_used)),
            )
            .float("p_min_score_decides", Some(1.0 - sim.floor_decided[0]))
            .float(
                "exact_p_min_score_decides",
                ex(&|e| 1.0 - e.floor_decided[0]),
            )
            .float("p_escalation", Some(sim.p_escalation()))
            .float("exact_p_escalation", ex(&|e| e.p_escalation()))
            .finish();
        for (c, counts) in h.combat_states.iter().enumerate() {
            for (s, &count) in counts.iter().enumerate() {
                let (lo, hi) = wilson_interval(count, n, Z95);
                combats
                    .row(vname, &run.coordinates)
                    .int("combat", c as i64 + 1)
                    .text("pairing", &combat_label(run, c))
                    .text("state", CombatState::LABELS[s])
                    .int("count", count as i64)
                    .float("probability", Some(count as f64 / n as f64))
                    .float("ci_low", Some(lo))
                    .float("ci_high", Some(hi))
                    .float("exact", exact.as_ref().map(|e| e.combat_states[c][s]))
                    .finish();
            }
        }
        if let Some((side, _)) = &run.policies {
            for p in &r.policies {
                policies
                    .row(vname, &run.coordinates)
                    .text("reserve_side", ["A", "B"][*side])
                    .text("policy", p.policy.name())
                    .text("source", if p.exact { "exact" } else { "simulated" })
                    .float("p_win", Some(p.p_win))
                    .float("p_draw", Some(p.p_draw))
                    .float("mean_cp_difference", Some(p.cp_difference))
                    .finish();
            }
        }
    }
    report::write_frame(
        dir,
        "expectations",
        &mut expectations.build("ratio").map_err(frame_error)?,
    )?;
    report::write_frame(
        dir,
        "combats",
        &mut combats.build("ratio").map_err(frame_error)?,
    )?;
    if study.runs.iter().any(|r| r.policies.is_some()) {
        report::write_frame(
            dir,
            "policies",
            &mut policies.build("ratio").map_err(frame_error)?,
        )?;
    }
    draw_charts(study, results, charts)?;
    rulebook_tables(study, results, derived).write(charts)
}

fn combat_label(run: &RatioRun, c: usize) -> String {
    let b = run.combat.battle();
    let p = &b.line[c];
    let names = |s: usize, list: &[usize]| {
        list.iter()
            .map(|&u| b.units[s][u].name.as_str())
            .collect::<Vec<_>>()
            .join("+")
    };
    format!("{} vs {}", names(0, &p.a), names(1, &p.b))
}

fn slice(study: &RatioStudy, variant: usize, free: &[usize]) -> Vec<usize> {
    report::slice_points(
        &study.axes,
        study
            .runs
            .iter()
            .map(|r| (r.variant, r.coordinates.as_slice())),
        variant,
        free,
    )
}

fn draw_charts(
    study: &RatioStudy,
    results: &RatioResults,
    charts: &Charts,
) -> Result<(), ReportError> {
    let names = &study.side_names;
    let slots = slots(study);
    let live: Vec<usize> = (0..slots)
        .filter(|&i| {
            results.runs.iter().any(|r| {
                r.histogram.result[i] > 0 || r.exact.as_ref().is_some_and(|e| e.result[i] > 0)
            })
        })
        .collect();
    let series: Vec<String> = live
        .iter()
        .map(|&i| with_side_names(&ArmyResult::label(i), names))
        .collect();
    let free: Vec<usize> = if study.axes.is_empty() {
        vec![]
    } else {
        vec![0]
    };
    let x_label = study
        .axes
        .first()
        .map_or("battle".to_string(), |a| a.parameter.clone());
    let label = |r: usize| -> String {
        if study.axes.is_empty() {
            "battle".into()
        } else {
            format!(
                "{} {}",
                study.axes[0].parameter, study.runs[r].coordinates[0]
            )
        }
    };
    let axes = &study.axes;
    let runs_in = |vi: usize, slice: &[(usize, AxisValue)]| -> Vec<usize> {
        study
            .runs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.variant == vi && report::in_slice(&r.coordinates, slice))
            .map(|(i, _)| i)
            .collect()
    };
    for (vi, vname) in study.variants.iter().enumerate() {
        let suffix = report::variant_suffix(vname, study.variants.len());
        let of = Some(vname.as_str());
        let runs = slice(study, vi, &free);
        report::draw_pages(
            axes,
            &free,
            charts,
            of,
            &format!("outcomes{suffix}"),
            &format!("Battle outcomes — {vname}"),
            &|slice| chart::Panel::Bars {
                x_label: x_label.clone(),
                y_label: "probability".into(),
                series: series.clone(),
                groups: runs_in(vi, slice)
                    .into_iter()
                    .map(|r| {
                        let s = results.runs[r].summary();
                        BarGroup {
                            label: label(r),
                            values: live.iter().map(|&i| s.result[i]).collect(),
                        }
                    })
                    .collect(),
            },
        )?;
        if axes.len() >= 2 {
            let (x, y) = (&axes[0], &axes[1]);
            report::draw_pages(
                axes,
                &[0, 1],
                charts,
                of,
                &format!("heatmap_a_wins{suffix}"),
                &format!("P({} wins) — {vname}", study.side_names[0]),
                &|slice| {
                    let grid = runs_in(vi, slice);
                    let values: Vec<Vec<f64>> = y
                        .values
                        .iter()
                        .map(|yv| {
                            x.values
                                .iter()
                                .map(|xv| {
                                    grid.iter()
                                        .find(|&&r| {
                                            study.runs[r].coordinates[0] == *xv
                                                && study.runs[r].coordinates[1] == *yv
                                        })
                                        .map_or(f64::NAN, |&r| results.runs[r].summary().p_wins(0))
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
        for side in 0..2 {
            report::draw_pages(
                axes,
                &free,
                charts,
                of,
                &format!("cp_{}{suffix}", ["a", "b"][side]),
                &format!("Casualty points of {} — {vname}", study.side_names[side]),
                &|slice| chart::Panel::Lines {
                    x_label: "casualty points".into(),
                    y_label: "probability".into(),
                    series: runs_in(vi, slice)
                        .into_iter()
                        .map(|r| {
                            let s = results.runs[r].summary();
                            (
                                label(r),
                                s.cp[side]
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
        let with_policies: Vec<usize> = runs
            .iter()
            .copied()
            .filter(|&r| !results.runs[r].policies.is_empty())
            .collect();
        if !with_policies.is_empty() {
            let names: Vec<String> = ReservePolicy::NAMES.iter().map(|s| s.to_string()).collect();
            let groups: Vec<BarGroup> = with_policies
                .iter()
                .map(|&r| BarGroup {
                    label: label(r),
                    values: results.runs[r].policies.iter().map(|p| p.p_win).collect(),
                })
                .collect();
            chart::grouped_bars(
                &charts.path(&format!("policies_p_win{suffix}"), of),
                &report::held_title(
                    axes,
                    &free,
                    &format!("Value of reserves: P(reserve side wins) by policy — {vname}"),
                ),
                &x_label,
                "P(win)",
                &names,
                &groups,
            )?;
        }
    }
    // Across variants: P(A wins) along the first integer axis, one line per variant.
    if let Some(AxisValue::Int(_)) = study.axes.first().map(|a| &a.values[0]) {
        let lines: Vec<(String, Vec<(f64, f64)>)> = study
            .variants
            .iter()
            .enumerate()
            .map(|(vi, vname)| {
                let points = slice(study, vi, &[0])
                    .into_iter()
                    .map(|r| {
                        let x = match study.runs[r].coordinates[0] {
                            AxisValue::Int(x) => x as f64,
                            _ => 0.0,
                        };
                        (x, results.runs[r].summary().p_wins(0))
                    })
                    .collect();
                (vname.clone(), points)
            })
            .collect();
        chart::distributions(
            &charts.path("p_a_wins_by_variant", None),
            &report::held_title(
                &study.axes,
                &[0],
                &format!(
                    "P({} wins) by {} and variant",
                    study.side_names[0], study.axes[0].parameter
                ),
            ),
            &study.axes[0].parameter,
            &format!("P({} wins)", names[0]),
            &lines,
        )?;
    }
    Ok(())
}

/// A row of probabilities as percentages adding up to exactly 100.0, each cell keeping
/// its probability for the spreadsheet.
fn percent_cells(p: &[f64]) -> Vec<Cell> {
    percentages_summing_to_100(p, 1)
        .iter()
        .zip(p)
        .map(|(u, &x)| {
            Cell::number(
                x,
                NumberFormat::Percent(1),
                format!("{}.{}", u / 10, u % 10),
            )
        })
        .collect()
}

/// The runs of one variant with their results.
fn runs_of<'a>(
    study: &'a RatioStudy,
    results: &'a RatioResults,
    variant: usize,
) -> impl Iterator<Item = (&'a RatioRun, &'a RatioRunResult)> {
    study
        .runs
        .iter()
        .zip(&results.runs)
        .filter(move |(run, _)| run.variant == variant)
}

/// Each study run's index among the plan's runs (the page's panel finds a run's results
/// by it): a run comparing policies is followed there by one run per other policy.
fn plan_runs(study: &RatioStudy) -> Vec<usize> {
    let mut next = 0;
    study
        .runs
        .iter()
        .map(|run| {
            let at = next;
            next += 1 + run.policies.as_ref().map_or(0, |(_, others)| others.len());
            at
        })
        .collect()
}

/// The outcomes (result slots, by the engine's names) in which `side` wins, the battle is
/// drawn, or an army is exhausted — what [`Summary::p_wins`], [`Summary::p_draw`],
/// [`Summary::p_exhaustion`] and [`Summary::p_escalation`] add up, in the same order.
fn outcomes_where(study: &RatioStudy, keep: impl Fn(usize) -> bool) -> Live {
    Live::Outcomes(
        (0..slots(study))
            .filter(|&i| keep(i))
            .map(ArmyResult::label)
            .collect(),
    )
}

/// A metric's mean as the engine gives it: exact where enumerated, else the simulated
/// integer sum divided once (`results.csv`'s mean, and the page's).
fn mean_of(r: &RatioRunResult, exact: impl Fn(&Summary) -> &[f64], counts: &[u64]) -> f64 {
    match &r.exact {
        Some(d) => crate::stats::distribution_mean(exact(&summary_exact(d))),
        None => crate::stats::count_mean(counts),
    }
}

/// The five cells "Who wins" and "Expectations" both print of a run: P(A wins), P(B
/// wins), P(draw), and each side's mean casualty points ([`who_wins_live`] marks them).
fn who_wins_cells(r: &RatioRunResult) -> [Cell; 5] {
    let s = r.summary();
    [
        Cell::percent(s.p_wins(0), 1),
        Cell::percent(s.p_wins(1), 1),
        Cell::percent(s.p_draw(), 1),
        Cell::decimal(mean_of(r, |e| &e.cp[0], &r.histogram.cp[0]), 2),
        Cell::decimal(mean_of(r, |e| &e.cp[1], &r.histogram.cp[1]), 2),
    ]
}

/// Marks the five cells from `at` that "Who wins" and "Expectations" both print of plan
/// run `run` as live: P(A wins), P(B wins), P(draw) (from the run's outcomes) and each
/// side's mean casualty points.
fn who_wins_live(study: &RatioStudy, table: &mut Table, at: usize, run: usize) {
    let wins = |side: usize| outcomes_where(study, |i| ArmyResult::winner(i) == Some(side));
    table.live(at, run, wins(0));
    table.live(at + 1, run, wins(1));
    table.live(
        at + 2,
        run,
        outcomes_where(study, |i| i % 9 == ArmyResult::DRAW),
    );
    table.live(at + 3, run, Live::Mean("cp_a".into()));
    table.live(at + 4, run, Live::Mean("cp_b".into()));
}

/// Rulebook tables: per variant, the headline first — each side's chance to win and the
/// casualty points each takes (exact where the dice are few) — then every battle
/// outcome, the full expectations and the value of reserves. Sides go by their names.
fn rulebook_tables(study: &RatioStudy, results: &RatioResults, derived: &[Derived]) -> Rulebook {
    use std::fmt::Write;
    let names = &study.side_names;
    let mut book = Rulebook::new(
        &study.header.name,
        format!(
            "Seed {}, {} simulated battles per grid point",
            results.seed, results.trials
        ),
    );
    let mut md = format!("# {} — rulebook tables\n\n", study.header.name);
    if let Some(d) = &study.header.description {
        let _ = writeln!(md, "{}\n", d.trim());
    }
    let all_exact = results.runs.iter().all(|r| r.exact.is_some());
    let _ = writeln!(
        md,
        "Side A: {}. Side B: {}. Percent of battles from {}; each row adds up to exactly 100.0%. Seed {}, {} simulated battles per grid point beside them in results.csv.\n",
        study.side_names[0],
        study.side_names[1],
        if all_exact { "exact enumeration" } else { "exact enumeration where the dice are few, else simulation" },
        results.seed,
        results.trials
    );
    book.text(&md);
    let axis_cells = |run: &RatioRun| -> Vec<Cell> {
        run.coordinates
            .iter()
            .map(|c| Cell::text(c.to_string()))
            .collect()
    };
    let source = |r: &RatioRunResult| {
        Cell::text(if r.exact.is_some() {
            "exact"
        } else {
            "simulated"
        })
    };
    let plan_index = plan_runs(study);
    let index_of = |run: &RatioRun| {
        let i = study
            .runs
            .iter()
            .position(|r| std::ptr::eq(r, run))
            .expect("a run of the study");
        plan_index[i]
    };
    for (vi, vname) in study.variants.iter().enumerate() {
        let title = format!("Who wins — {vname}");
        book.text(&format!("## {title}\n\n"));
        let header: Vec<String> = study
            .axes
            .iter()
            .map(|a| a.parameter.clone())
            .chain([
                format!("P({} wins)", names[0]),
                format!("P({} wins)", names[1]),
                "P(draw)".to_string(),
                format!("CP of {}", names[0]),
                format!("CP of {}", names[1]),
                "source".to_string(),
            ])
            .collect();
        let mut table = Table::new(&title, header);
        for (run, r) in runs_of(study, results, vi) {
            let mut cells = axis_cells(run);
            let at = cells.len();
            cells.extend(who_wins_cells(r));
            cells.push(source(r));
            table.row(cells);
            let index = index_of(run);
            who_wins_live(study, &mut table, at, index);
            table.live(at + 5, index, Live::Source);
        }
        book.table(table);
        book.text("\n");
    }
    let slots = slots(study);
    let live: Vec<usize> = (0..slots)
        .filter(|&i| results.runs.iter().any(|r| r.summary().result[i] > 0.0))
        .collect();
    for (vi, vname) in study.variants.iter().enumerate() {
        let title = format!("Battle outcomes — {vname}");
        book.text(&format!("## {title}\n\n"));
        let header: Vec<String> = study
            .axes
            .iter()
            .map(|a| a.parameter.clone())
            .chain(["line".to_string()])
            .chain(
                live.iter()
                    .map(|&i| with_side_names(&ArmyResult::label(i), names)),
            )
            .collect();
        let mut table = Table::new(&title, header);
        for (run, r) in runs_of(study, results, vi) {
            let s = r.summary();
            let shown: Vec<f64> = live.iter().map(|&i| s.result[i]).collect();
            let battle = run.combat.battle();
            let mut cells = axis_cells(run);
            cells.push(Cell::text(describe_line(
                battle.escalation.as_deref().unwrap_or(battle),
            )));
            let at = cells.len();
            cells.extend(percent_cells(&shown));
            table.row(cells);
            let of: Vec<String> = live.iter().map(|&i| ArmyResult::label(i)).collect();
            for (k, outcome) in of.iter().enumerate() {
                table.live(
                    at + k,
                    index_of(run),
                    Live::HundredAmong {
                        outcome: outcome.clone(),
                        of: of.clone(),
                    },
                );
            }
        }
        book.table(table);
        let title = format!("Expectations — {vname}");
        book.text(&format!("\n## {title}\n\n"));
        let mut header: Vec<String> = study.axes.iter().map(|a| a.parameter.clone()).collect();
        header.extend([
            format!("P({} wins)", names[0]),
            format!("P({} wins)", names[1]),
            "P(draw)".to_string(),
            format!("CP {}", names[0]),
            format!("CP {}", names[1]),
            "P(exhaustion)".to_string(),
            "reserves used".to_string(),
            "P(min-score decides)".to_string(),
        ]);
        if study.skirmish {
            header.push("P(escalation)".into());
        }
        let mut table = Table::new(&title, header);
        for (run, r) in runs_of(study, results, vi) {
            let s = r.summary();
            let mut cells = axis_cells(run);
            let at = cells.len();
            cells.extend(who_wins_cells(r));
            cells.extend([
                Cell::percent(s.p_exhaustion(), 1),
                Cell::decimal(
                    mean_of(r, |e| &e.reserves_used, &r.histogram.reserves_used),
                    2,
                ),
                derived_cell(
                    derived,
                    &min_score_key(index_of(run)),
                    NumberFormat::Percent(2),
                ),
            ]);
            if study.skirmish {
                cells.push(Cell::percent(s.p_escalation(), 1));
            }
            table.row(cells);
            let index = index_of(run);
            who_wins_live(study, &mut table, at, index);
            table.live(at + 5, index, outcomes_where(study, ArmyResult::exhausts));
            table.live(at + 6, index, Live::Mean("reserves_used".into()));
            // "P(min-score decides)" is 1 − P(no combat decided by the floor): a
            // distribution's tail, derived by the core for both the table and the page.
            table.live(
                at + 7,
                index,
                Live::Derived {
                    key: min_score_key(index),
                    format: NumberFormat::Percent(2),
                },
            );
            if study.skirmish {
                table.live(at + 8, index, outcomes_where(study, |i| i >= 9));
            }
        }
        book.table(table);
        if study
            .runs
            .iter()
            .any(|r| r.variant == vi && r.policies.is_some())
        {
            let title = format!("Value of reserves — {vname}");
            book.text(&format!("\n## {title}\n\nP(the reserve side wins) and expected casualty points of its enemy minus its own, under each policy.\n\n"));
            let mut header: Vec<String> = study.axes.iter().map(|a| a.parameter.clone()).collect();
            header.push("side".into());
            for p in ReservePolicy::NAMES {
                header.push(format!("{p}: P(win)"));
                header.push(format!("{p}: CP diff"));
            }
            let mut table = Table::new(&title, header);
            for (run, r) in runs_of(study, results, vi) {
                let Some((side, _)) = &run.policies else {
                    continue;
                };
                let mut cells = axis_cells(run);
                cells.push(Cell::text(names[*side].clone()));
                // Each policy's numbers come from its own run; the core derives them
                // for the table and the page's panel alike.
                let index = index_of(run);
                let live: Vec<(usize, Live)> = r
                    .policies
                    .iter()
                    .flat_map(|p| {
                        [
                            (
                                reserves_key(index, p.policy, "p_win"),
                                NumberFormat::Percent(1),
                            ),
                            (
                                reserves_key(index, p.policy, "cp_difference"),
                                NumberFormat::Signed(3),
                            ),
                        ]
                    })
                    .map(|(key, format)| {
                        cells.push(derived_cell(derived, &key, format));
                        (cells.len() - 1, Live::Derived { key, format })
                    })
                    .collect();
                table.row(cells);
                for (column, live) in live {
                    table.live(column, index, live);
                }
            }
            book.table(table);
        }
        book.text("\n");
    }
    book.text("A side loses the battle when it has more casualty points (routed 3, beaten 2, repulsed 1 per unit). The loser holds (or retires) when none of its units was routed or beaten, retires when some were beaten, retreats when some were routed or more than half beaten, and disperses when more than half were routed; after a retreat or a dispersal both sides fight at −1 for exhaustion next turn. \"min-score decides\": at least one combat's state was changed by the min-score floor.\n");
    book
}
