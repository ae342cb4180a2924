//! Melee's report: expectations, survival by phase, the exact first phase, round-robin
//! matchups and ratings, charts and rulebook tables. The system itself is in
//! `battlelab_core::systems::melee`.

pub use battlelab_core::systems::melee::*;

use std::path::Path;

use crate::analysis::AxisValue;
use crate::chart::{self, BarGroup};
use crate::engine::derived::Derived;
use crate::frame::LongFrame;
use crate::report::rulebook::{derived_cell, Cell, Live, NumberFormat, Rulebook, Table};
use crate::report::{self, Charts, ReportError};
use crate::stats::percentages_summing_to_100;
use battlelab_core::systems::melee::derived as melee_derived;
use battlelab_core::systems::melee::engagement::{EngagementEnd, PhaseOdds};
use battlelab_core::systems::melee::ratings::{elo, mean_score, RoundRobinTable};

impl crate::pipeline::SystemReport for MeleeStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
        charts: &Charts,
    ) -> Result<(), ReportError> {
        let derived = crate::engine::System::derived(self, &results.counts, &results.exact);
        write_extras(self, &MeleeResults::of(results), &derived, dir, charts)
    }
}

/// " (a.skill = 3, b.defense = 2)" for a chart title: the run's grid point, if swept.
fn point_label(study: &MeleeStudy, run: &MeleeRun) -> String {
    if study.axes.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = study
        .axes
        .iter()
        .zip(&run.coordinates)
        .map(|(a, v)| format!("{} = {v}", a.parameter))
        .collect();
    format!(" ({})", parts.join(", "))
}

/// The label of a run: its pairing in a round robin, else its variant and grid point.
fn run_label(study: &MeleeStudy, run: &MeleeRun) -> String {
    if let Some((i, j)) = run.pairing {
        return format!("{} vs {}", study.round_robin[i].0, study.round_robin[j].0);
    }
    let mut parts = Vec::new();
    if study.variants.len() > 1 {
        parts.push(study.variants[run.variant].clone());
    }
    for (a, v) in study.axes.iter().zip(&run.coordinates) {
        parts.push(format!("{} = {v}", a.parameter));
    }
    if parts.is_empty() {
        "engagement".to_string()
    } else {
        parts.join(", ")
    }
}

/// The melee study's own frames (expectations, survival, the exact first phase, and for
/// a round robin the matchups and ratings), charts and rulebook tables.
fn write_extras(
    study: &MeleeStudy,
    results: &MeleeResults,
    derived: &[Derived],
    dir: &Path,
    charts: &Charts,
) -> Result<(), ReportError> {
    let frame_error = report::frame_error(dir);
    let axes = study.key_axes();
    let mut expectations = LongFrame::new(&axes);
    let mut survival = LongFrame::new(&axes);
    let mut phase = LongFrame::new(&axes);
    for (run, r) in study.runs.iter().zip(&results.runs) {
        let vname = &study.variants[run.variant];
        let h = &r.histogram;
        let n = h.trials();
        let exact = r.exact.as_ref().map(Summary::exact);
        let sim = Summary::simulated(h);
        let key = study.key_coordinates(run);
        let ex = |f: &dyn Fn(&Summary) -> f64| exact.as_ref().map(f);
        let ph = |f: &dyn Fn(&PhaseOdds) -> f64| r.phase.as_ref().map(f);
        let units = run.combat.units();
        let (_, first_wounds) = run.combat.expected_first_phase();
        expectations
            .row(vname, &key)
            .text("a", &units[0].quick())
            .text(
                "b",
                &run.combat
                    .engagement()
                    .b
                    .iter()
                    .map(|(f, u)| format!("{}: {}", f.name(), u.quick()))
                    .collect::<Vec<_>>()
                    .join("; "),
            )
            .int("trials", n as i64)
            .float("p_a_wins", Some(sim.p_wins(0)))
            .float("p_b_wins", Some(sim.p_wins(1)))
            .float("p_draw", Some(sim.p_draw()))
            .float("exact_p_a_wins", ex(&|e| e.p_wins(0)))
            .float("exact_p_b_wins", ex(&|e| e.p_wins(1)))
            .float("exact_p_draw", ex(&|e| e.p_draw()))
            .float("mean_phases", Some(sim.mean_phases()))
            .float("exact_mean_phases", ex(&|e| e.mean_phases()))
            .float("mean_models_lost_a", Some(sim.mean_lost(0)))
            .float("mean_models_lost_b", Some(sim.mean_lost(1)))
            .float("exact_mean_models_lost_a", ex(&|e| e.mean_lost(0)))
            .float("exact_mean_models_lost_b", ex(&|e| e.mean_lost(1)))
            .float("phase1_exact_p_a_wins", ph(&|p| p.a_wins.to_f64()))
            .float("phase1_exact_p_draw", ph(&|p| p.draw.to_f64()))
            .float("phase1_exact_p_b_wins", ph(&|p| p.b_wins.to_f64()))
            .float("phase1_exact_wounds_by_a", Some(first_wounds[0].to_f64()))
            .float("phase1_exact_wounds_by_b", Some(first_wounds[1].to_f64()))
            .float("phase1_exact_p_a_flees", ph(&|p| p.flees[0].to_f64()))
            .float(
                "phase1_exact_expected_b_units_fleeing",
                ph(&|p| p.flees[1..].iter().map(|f| f.to_f64()).sum::<f64>()),
            )
            .finish();
        let broken = |s: &Summary| {
            [
                s.by(&EngagementEnd::ALL),
                s.by(&[EngagementEnd::AFlees, EngagementEnd::ADestroyed]),
                s.by(&[EngagementEnd::BFlees, EngagementEnd::BDestroyed]),
                s.by(&[EngagementEnd::ADestroyed]),
                s.by(&[EngagementEnd::BDestroyed]),
            ]
        };
        let sim_curves = broken(&sim);
        let exact_curves = exact.as_ref().map(broken);
        for p in 0..sim_curves[0].len() {
            survival
                .row(vname, &key)
                .int("phase", p as i64 + 1)
                .float("p_still_engaged", Some(1.0 - sim_curves[0][p]))
                .float("p_a_broken_by", Some(sim_curves[1][p]))
                .float("p_b_broken_by", Some(sim_curves[2][p]))
                .float(
                    "exact_p_still_engaged",
                    exact_curves.as_ref().map(|c| (1.0 - c[0][p]).max(0.0)),
                )
                .float(
                    "exact_p_a_broken_by",
                    exact_curves.as_ref().map(|c| c[1][p]),
                )
                .float(
                    "exact_p_b_broken_by",
                    exact_curves.as_ref().map(|c| c[2][p]),
                )
                .float("p_a_destroyed_by", Some(sim_curves[3][p]))
                .float("p_b_destroyed_by", Some(sim_curves[4][p]))
                .float(
                    "exact_p_a_destroyed_by",
                    exact_curves.as_ref().map(|c| c[3][p]),
                )
                .float(
                    "exact_p_b_destroyed_by",
                    exact_curves.as_ref().map(|c| c[4][p]),
                )
                .finish();
        }
        if let Some(odds) = &r.phase {
            for side in 0..2 {
                for (metric, dist) in [
                    ("hits", &odds.hits[side]),
                    ("wounds", &odds.wounds[side]),
                    ("score", &odds.score[side]),
                ] {
                    for (value, f) in dist.iter().enumerate() {
                        phase
                            .row(vname, &key)
                            .text("side", ["A", "B"][side])
                            .text("metric", metric)
                            .int("value", value as i64)
                            .float("exact", Some(f.to_f64()))
                            .text("exact_fraction", &f.to_string())
                            .finish();
                    }
                }
            }
        }
    }
    report::write_frame(
        dir,
        "expectations",
        &mut expectations.build("melee").map_err(frame_error)?,
    )?;
    report::write_frame(
        dir,
        "survival",
        &mut survival.build("melee").map_err(frame_error)?,
    )?;
    if study.header.exact {
        report::write_frame(
            dir,
            "phase",
            &mut phase.build("melee").map_err(frame_error)?,
        )?;
    }
    let round_robin = study
        .is_round_robin()
        .then(|| round_robin_table(study, results));
    if let Some(rr) = &round_robin {
        let mut matrix = LongFrame::new(&[]);
        for (i, (a, _)) in study.round_robin.iter().enumerate() {
            for (j, (b, _)) in study.round_robin.iter().enumerate() {
                matrix
                    .row("base", &[])
                    .text("a_profile", a)
                    .text("b_profile", b)
                    .float("score_a", Some(rr.score[i][j]))
                    .finish();
            }
        }
        report::write_frame(
            dir,
            "matchups",
            &mut matrix.build("melee").map_err(frame_error)?,
        )?;
        let mut ratings = LongFrame::new(&[]);
        let hints = hints_of(study, rr);
        for (i, (name, points)) in study.round_robin.iter().enumerate() {
            let hint = hints[i];
            ratings
                .row("base", &[])
                .text("profile", name)
                .float("strength", Some(rr.strength[i]))
                .float("elo", Some(elo(rr.strength[i])))
                .float("mean_score", Some(mean_score(rr, i)))
                .float("points", points.map(f64::from))
                .float("fitted_elo", hint.map(|h| h.fitted_elo))
                .float("elo_above_fit", hint.map(|h| h.residual))
                .float("suggested_points", hint.map(|h| h.suggested_points))
                .finish();
        }
        report::write_frame(
            dir,
            "ratings",
            &mut ratings.build("melee").map_err(frame_error)?,
        )?;
    }
    draw_charts(study, results, round_robin.as_ref(), charts)?;
    rulebook_tables(study, results, round_robin.as_ref(), derived).write(charts)
}

fn draw_charts(
    study: &MeleeStudy,
    results: &MeleeResults,
    round_robin: Option<&RoundRobinTable>,
    charts: &Charts,
) -> Result<(), ReportError> {
    let summaries: Vec<Summary> = results.runs.iter().map(best_summary).collect();
    if let Some(rr) = round_robin {
        let names: Vec<String> = study.round_robin.iter().map(|p| p.0.clone()).collect();
        chart::heatmap(
            &charts.path("matchups", None),
            "Round robin: score of row (A) against column (B)",
            "side B (engaging A's front)",
            &names,
            "side A",
            &names,
            &rr.score,
        )?;
        let groups: Vec<BarGroup> = names
            .iter()
            .enumerate()
            .map(|(i, n)| BarGroup {
                label: n.clone(),
                values: vec![mean_score(rr, i)],
            })
            .collect();
        chart::grouped_bars(
            &charts.path("ratings", None),
            "Mean score over the field (Bradley–Terry strengths in ratings.csv)",
            "profile",
            "mean score",
            &["mean score".to_string()],
            &groups,
        )?;
        return Ok(());
    }
    if study.variants.len() > 1 {
        // Every variant side by side, each at the fixed point of the sweep.
        let groups: Vec<BarGroup> = study
            .variants
            .iter()
            .enumerate()
            .filter_map(|(vi, vname)| {
                report::slice_points(
                    &study.axes,
                    study
                        .runs
                        .iter()
                        .map(|r| (r.variant, r.coordinates.as_slice())),
                    vi,
                    &[],
                )
                .first()
                .map(|&i| BarGroup {
                    label: vname.clone(),
                    values: summaries[i].ends.to_vec(),
                })
            })
            .collect();
        let series: Vec<String> = EngagementEnd::ALL
            .iter()
            .map(|e| e.name().to_string())
            .collect();
        chart::grouped_bars(
            &charts.path("outcomes_by_variant", None),
            "How the engagement ends, by variant",
            "variant",
            "probability",
            &series,
            &groups,
        )?;
    }
    for (vi, vname) in study.variants.iter().enumerate() {
        let suffix = report::variant_suffix(vname, study.variants.len());
        let of = Some(vname.as_str());
        let title_note = if study.variants.len() > 1 {
            format!(" — {vname}")
        } else {
            String::new()
        };
        let points = |free: &[usize]| {
            report::slice_points(
                &study.axes,
                study
                    .runs
                    .iter()
                    .map(|r| (r.variant, r.coordinates.as_slice())),
                vi,
                free,
            )
        };
        // Outcomes along the first axis (or the one run).
        let line = points(if study.axes.is_empty() { &[] } else { &[0] });
        let series: Vec<String> = EngagementEnd::ALL
            .iter()
            .map(|e| e.name().to_string())
            .collect();
        let axes = &study.axes;
        let runs_in = |slice: &[(usize, AxisValue)]| -> Vec<usize> {
            study
                .runs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.variant == vi && report::in_slice(&r.coordinates, slice))
                .map(|(i, _)| i)
                .collect()
        };
        let first: Vec<usize> = if axes.is_empty() { vec![] } else { vec![0] };
        report::draw_pages(
            axes,
            &first,
            charts,
            of,
            &format!("outcomes{suffix}"),
            &format!("How the engagement ends{title_note}"),
            &|slice| chart::Panel::Bars {
                x_label: axes.first().map_or(String::new(), |a| a.parameter.clone()),
                y_label: "probability".into(),
                series: series.clone(),
                groups: runs_in(slice)
                    .into_iter()
                    .map(|i| BarGroup {
                        label: axes.first().map_or_else(
                            || "engagement".to_string(),
                            |a| format!("{} = {}", a.parameter, study.runs[i].coordinates[0]),
                        ),
                        values: summaries[i].ends.to_vec(),
                    })
                    .collect(),
            },
        )?;
        // Survival curves at the first point of the slice.
        if let Some(&first) = points(&[]).first().or(line.first()) {
            let s = &summaries[first];
            let curve = |v: Vec<f64>| -> Vec<(f64, f64)> {
                std::iter::once((0.0, 0.0))
                    .chain(v.into_iter().enumerate().map(|(p, x)| ((p + 1) as f64, x)))
                    .collect()
            };
            let still: Vec<f64> = s
                .by(&EngagementEnd::ALL)
                .into_iter()
                .map(|x| 1.0 - x)
                .collect();
            let series = vec![
                (
                    "still engaged".to_string(),
                    std::iter::once((0.0, 1.0))
                        .chain(
                            still
                                .into_iter()
                                .enumerate()
                                .map(|(p, x)| ((p + 1) as f64, x.max(0.0))),
                        )
                        .collect(),
                ),
                (
                    "A broken by phase".to_string(),
                    curve(s.by(&[EngagementEnd::AFlees, EngagementEnd::ADestroyed])),
                ),
                (
                    "B broken by phase".to_string(),
                    curve(s.by(&[EngagementEnd::BFlees, EngagementEnd::BDestroyed])),
                ),
            ];
            let lost = |side: usize| -> Vec<(f64, f64)> {
                s.models_lost[side]
                    .iter()
                    .enumerate()
                    .map(|(k, p)| (k as f64, *p))
                    .collect()
            };
            chart::distributions(
                &charts.path(&format!("models_lost{suffix}"), of),
                &format!(
                    "Models lost by the end of the engagement{}{title_note}",
                    point_label(study, &study.runs[first])
                ),
                "models lost",
                "probability",
                &[
                    ("side A".to_string(), lost(0)),
                    ("side B (all units)".to_string(), lost(1)),
                ],
            )?;
            chart::distributions(
                &charts.path(&format!("survival{suffix}"), of),
                &format!(
                    "Survival over phases{}{title_note}",
                    point_label(study, &study.runs[first])
                ),
                "combat phase",
                "probability",
                &series,
            )?;
        }
        // Heatmaps over the first two axes.
        if study.axes.len() >= 2 {
            let grid = points(&[0, 1]);
            let xs = &study.axes[0].values;
            let ys = &study.axes[1].values;
            let cell = |f: &dyn Fn(usize) -> f64| -> Vec<Vec<f64>> {
                ys.iter()
                    .map(|y| {
                        xs.iter()
                            .map(|x| {
                                grid.iter()
                                    .find(|&&i| {
                                        &study.runs[i].coordinates[0] == x
                                            && &study.runs[i].coordinates[1] == y
                                    })
                                    .map_or(f64::NAN, |&i| f(i))
                            })
                            .collect()
                    })
                    .collect()
            };
            let ticks =
                |values: &[AxisValue]| values.iter().map(ToString::to_string).collect::<Vec<_>>();
            let (x, y) = (&study.axes[0], &study.axes[1]);
            report::draw_pages(
                axes,
                &[0, 1],
                charts,
                of,
                &format!("p_a_wins{suffix}"),
                &format!("P(A wins the engagement){title_note}"),
                &|slice| {
                    let grid = runs_in(slice);
                    chart::Panel::Heat {
                        x_label: x.parameter.clone(),
                        x_ticks: ticks(&x.values),
                        y_label: y.parameter.clone(),
                        y_ticks: ticks(&y.values),
                        values: y
                            .values
                            .iter()
                            .map(|yv| {
                                x.values
                                    .iter()
                                    .map(|xv| {
                                        grid.iter()
                                            .find(|&&i| {
                                                &study.runs[i].coordinates[0] == xv
                                                    && &study.runs[i].coordinates[1] == yv
                                            })
                                            .map_or(f64::NAN, |&i| summaries[i].p_wins(0))
                                    })
                                    .collect()
                            })
                            .collect(),
                    }
                },
            )?;
            {
                let wounds = cell(&|i| study.runs[i].combat.expected_first_phase().1[0].to_f64());
                chart::heatmap_scaled(
                    &charts.path(&format!("wounds_by_a{suffix}"), of),
                    &report::held_title(
                        axes,
                        &[0, 1],
                        &format!(
                            "Expected wounds caused by A in the first phase (exact){title_note}"
                        ),
                    ),
                    &study.axes[0].parameter,
                    &ticks(xs),
                    &study.axes[1].parameter,
                    &ticks(ys),
                    &wounds,
                )?;
            }
        }
    }
    Ok(())
}

/// A row of probabilities as percentages adding up to exactly 100.0, each cell keeping
/// its probability for the spreadsheet.
fn percent_cells(p: &[f64]) -> Vec<Cell> {
    percentages_summing_to_100(p, 1)
        .into_iter()
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

/// Rulebook tables: for a round robin its score matrix and point-value hints; else the
/// headline first — who wins each run and the models each side loses (exact where every
/// state was enumerated) — then how each engagement ends, with the exact first phase.
fn rulebook_tables(
    study: &MeleeStudy,
    results: &MeleeResults,
    round_robin: Option<&RoundRobinTable>,
    derived: &[Derived],
) -> Rulebook {
    let mut book = Rulebook::new(
        &study.header.name,
        format!(
            "Seed {}, {} engagements per run",
            results.seed, results.trials
        ),
    );
    let mut md = format!("# {}\n\n", study.header.name);
    if let Some(d) = &study.header.description {
        md.push_str(&format!("{d}\n\n"));
    }
    let options_of = |run: &MeleeRun| {
        let e = run.combat.engagement();
        format!(
            "{} break test, up to {} phases",
            e.break_dice.name(),
            e.round_limit
        )
    };
    let options_vary = study
        .runs
        .iter()
        .any(|r| options_of(r) != options_of(&study.runs[0]));
    if options_vary {
        md.push_str("Break dice and round limit differ between runs: see the options column.");
    } else {
        md.push_str(&format!("Every run: {}.", options_of(&study.runs[0])));
    }
    md.push_str(&format!(
        " Percentages are exact (enumeration of every state) where the source says so, else simulated with {} engagements per row.\n\n",
        results.trials
    ));
    if let Some(rr) = round_robin {
        let title =
            "Round robin: score of side A (row) against side B (column), P(win) + ½ P(draw), %";
        md.push_str(&format!("## {title}\n\n"));
        book.text(&md);
        let mut header = vec!["A \\ B".to_string()];
        header.extend(study.round_robin.iter().map(|p| p.0.clone()));
        let mut table = Table::new("Round robin", header);
        // Derived by the core from the pairings' runs (and reprinted by the page's panel
        // from the same numbers): each score with the run of its pairing.
        let run_of = |pairing: &dyn Fn((usize, usize)) -> bool| {
            study
                .runs
                .iter()
                .position(|r| r.pairing.is_some_and(pairing))
        };
        let percent = NumberFormat::Percent(1);
        for (i, (name, _)) in study.round_robin.iter().enumerate() {
            let cells: Vec<Cell> = std::iter::once(Cell::text(name.clone()))
                .chain(
                    (0..rr.score[i].len())
                        .map(|j| derived_cell(derived, &melee_derived::score_key(i, j), percent)),
                )
                .collect();
            table.row(cells);
            for j in 0..rr.score[i].len() {
                if let Some(run) = run_of(&|p| p == (i, j)) {
                    let key = melee_derived::score_key(i, j);
                    table.live(1 + j, run, Live::DerivedText(key));
                }
            }
        }
        book.table(table);
        book.text(
            "\n## Point-value hints\n\nStrength: Bradley–Terry, from every pairing both ways (geometric mean 1); Elo = 1500 + 400·log10 strength. Suggested points: where a straight line through the costed profiles' (points, Elo) puts each profile's Elo; more than 10% off its cost is flagged.\n\n",
        );
        let mut table = Table::new(
            "Point-value hints",
            [
                "profile",
                "strength",
                "Elo",
                "mean score %",
                "points",
                "suggested points",
                "hint",
            ]
            .map(String::from)
            .to_vec(),
        );
        // Derived by the core (strength, Elo, mean score, points, suggested points and
        // verdict, each printed there); the page takes a profile's row with the run of
        // its first pairing as A.
        let formats = [
            NumberFormat::Decimal(3),
            NumberFormat::Decimal(0),
            NumberFormat::Percent(1),
            NumberFormat::Decimal(0),
            NumberFormat::Decimal(0),
            NumberFormat::Decimal(0),
        ];
        for (i, (name, _)) in study.round_robin.iter().enumerate() {
            let cells = std::iter::once(Cell::text(name.clone()))
                .chain(
                    melee_derived::Hint::ALL
                        .iter()
                        .zip(formats)
                        .map(|(&what, format)| {
                            derived_cell(derived, &melee_derived::hint_key(i, what), format)
                        }),
                )
                .collect();
            table.row(cells);
            if let Some(run) = run_of(&|(a, _)| a == i) {
                for (k, &what) in melee_derived::Hint::ALL.iter().enumerate() {
                    let key = melee_derived::hint_key(i, what);
                    table.live(1 + k, run, Live::DerivedText(key));
                }
            }
        }
        book.table(table);
        let exact_runs = results.runs.iter().filter(|r| r.exact.is_some()).count();
        book.text(&format!(
            "\n{exact_runs} of {} pairings are exact (every state enumerated); the others are simulated.\n",
            results.runs.len()
        ));
        return book;
    }
    let swept: Vec<&str> = study.axes.iter().map(|a| a.parameter.as_str()).collect();
    md.push_str(&format!(
        "Side A: {}. Side B: {}.{} Every run's profiles, as fought, are in expectations.csv (columns a and b).\n\n",
        study.a_name,
        study
            .b_names
            .iter()
            .map(|(f, n)| format!("{n} on the {}", f.name()))
            .collect::<Vec<_>>()
            .join(", "),
        if swept.is_empty() {
            String::new()
        } else {
            format!(" Swept: {}.", swept.join(", "))
        }
    ));
    let title = "Who wins";
    md.push_str(&format!(
        "## {title}\n\nA wins when every B unit is destroyed or flees; B wins likewise. Models lost: the mean over the engagement, B's over all its units.\n\n"
    ));
    book.text(&md);
    let source = |r: &MeleeRunResult| {
        Cell::text(if r.exact.is_some() {
            "exact"
        } else {
            "simulated"
        })
    };
    let mut table = Table::new(
        title,
        [
            "run",
            "P(A wins)",
            "P(B wins)",
            "P(draw)",
            "models lost by A",
            "models lost by B",
            "source",
        ]
        .map(String::from)
        .to_vec(),
    );
    // The page's panel recomputes these cells from each run's outcomes (the ends, by
    // name) and metrics; the plan's runs are the study's, in order.
    let ends_where = |keep: &dyn Fn(EngagementEnd) -> bool| {
        Live::Outcomes(
            EngagementEnd::ALL
                .iter()
                .filter(|&&e| keep(e))
                .map(|e| e.name().to_string())
                .collect(),
        )
    };
    // A metric's mean as the engine gives it: exact where enumerated, else the
    // simulated integer sum divided once.
    let mean_lost = |r: &MeleeRunResult, s: &Summary, side: usize| match &r.exact {
        Some(_) => s.mean_lost(side),
        None => crate::stats::count_mean(&r.histogram.models_lost[side]),
    };
    for (index, (run, r)) in study.runs.iter().zip(&results.runs).enumerate() {
        let s = best_summary(r);
        table.row(vec![
            Cell::text(run_label(study, run)),
            Cell::percent(s.p_wins(0), 1),
            Cell::percent(s.p_wins(1), 1),
            Cell::percent(s.p_draw(), 1),
            Cell::decimal(mean_lost(r, &s, 0), 2),
            Cell::decimal(mean_lost(r, &s, 1), 2),
            source(r),
        ]);
        table.live(1, index, ends_where(&|e| e.winner() == Some(0)));
        table.live(2, index, ends_where(&|e| e.winner() == Some(1)));
        table.live(
            3,
            index,
            ends_where(&|e| matches!(e, EngagementEnd::BothOut | EngagementEnd::RoundLimit)),
        );
        table.live(4, index, Live::Mean("models_lost_a".into()));
        table.live(5, index, Live::Mean("models_lost_b".into()));
        table.live(6, index, Live::Source);
    }
    book.table(table);
    let title = "How the engagement ends, %";
    book.text(&format!("\n## {title}\n\n"));
    let mut header = vec!["run".to_string()];
    header.extend(EngagementEnd::ALL.iter().map(|e| e.name().to_string()));
    header.push("source".into());
    header.push("phase 1: A wins / draw / B wins %".into());
    if options_vary {
        header.push("options".into());
    }
    let mut table = Table::new("How the engagement ends", header);
    for (index, (run, r)) in study.runs.iter().zip(&results.runs).enumerate() {
        let s = best_summary(r);
        let phase = melee_derived::phase_key(index);
        let mut cells = vec![Cell::text(run_label(study, run))];
        cells.extend(percent_cells(&s.ends));
        cells.push(source(r));
        cells.push(derived_cell(derived, &phase, NumberFormat::Decimal(0)));
        if options_vary {
            cells.push(Cell::text(options_of(run)));
        }
        table.row(cells);
        // Every end's percentage and the source are the run's; the first phase's odds
        // (a separate exact calculation) are derived by the core; the options stay the
        // file's.
        for (k, end) in EngagementEnd::ALL.iter().enumerate() {
            table.live(1 + k, index, Live::Hundred(end.name().to_string()));
        }
        table.live(1 + EngagementEnd::ALL.len(), index, Live::Source);
        table.live(
            2 + EngagementEnd::ALL.len(),
            index,
            Live::DerivedText(phase),
        );
    }
    book.table(table);
    book
}
