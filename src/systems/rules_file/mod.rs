//! Rules files' report: each run's outcomes and metrics (exact beside simulated), a chart
//! of outcomes per variant, and `tables.md` with every table of the rules file as printed,
//! its result codes, and the outcome tables. The system itself is in
//! `battlelab_core::systems::rules_file`.

pub use battlelab_core::systems::rules_file::*;

use std::path::Path;

use battlelab_core::engine::System;
use battlelab_core::systems::rules_file::game::{ColumnPick, Edge, Game};

use crate::chart::{self, BarGroup};
use crate::frame::LongFrame;
use crate::report::rulebook::{Cell, Live, NumberFormat, Rulebook, Table};
use crate::report::{self, Charts, ReportError};
use crate::stats::percentages_summing_to_100;

impl crate::pipeline::SystemReport for RulesStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
        charts: &Charts,
    ) -> Result<(), ReportError> {
        let axes: Vec<&str> = self.axes.iter().map(|a| a.parameter.as_str()).collect();
        let mut expectations = LongFrame::new(&axes);
        for (run, r) in self.runs.iter().enumerate() {
            let counts = &results.counts[run];
            let exact = results.exact[run].as_ref();
            let n = counts.trials();
            let vname = &self.variants[r.variant].name;
            let mut row = expectations
                .row(vname, &r.coordinates)
                .int("trials", n as i64);
            for (name, value) in &r.settings {
                row = row.int(&format!("start_{}", column_name(name)), *value);
            }
            for o in self.outcomes(run, counts, exact) {
                let column = column_name(&o.name);
                row = row
                    .float(
                        &format!("p_{column}"),
                        Some(o.count as f64 / n.max(1) as f64),
                    )
                    .float(&format!("exact_p_{column}"), o.exact);
            }
            for d in self.distributions(run, counts, exact) {
                row = row
                    .float(&format!("mean_{}", d.metric), Some(d.mean()))
                    .float(&format!("exact_mean_{}", d.metric), d.exact_mean());
            }
            row.finish();
        }
        report::write_frame(
            dir,
            "expectations",
            &mut expectations
                .build("rules")
                .map_err(report::frame_error(dir))?,
        )?;
        draw_charts(self, results, charts)?;
        rulebook_tables(self, results).write(charts)
    }
}

/// Each run's outcome probabilities: exact where the run is exact, else simulated.
fn probabilities(
    study: &RulesStudy,
    results: &crate::engine::driver::PlanResults<RulesStudy>,
    run: usize,
) -> Vec<f64> {
    let counts = &results.counts[run];
    let n = counts.trials().max(1) as f64;
    study
        .outcomes(run, counts, results.exact[run].as_ref())
        .iter()
        .map(|o| o.exact.unwrap_or(o.count as f64 / n))
        .collect()
}

fn run_label(study: &RulesStudy, run: usize) -> String {
    let plan = study.plan();
    let parts: Vec<String> = plan
        .describe(run)
        .into_iter()
        .map(|(a, v)| format!("{a} {v}"))
        .collect();
    if parts.is_empty() {
        "as written".into()
    } else {
        parts.join(", ")
    }
}

fn draw_charts(
    study: &RulesStudy,
    results: &crate::engine::driver::PlanResults<RulesStudy>,
    charts: &Charts,
) -> Result<(), ReportError> {
    for (v, variant) in study.variants.iter().enumerate() {
        let runs: Vec<usize> = (0..study.runs.len())
            .filter(|r| study.runs[*r].variant == v)
            .collect();
        let series: Vec<String> = variant.game.outcomes.iter().map(|o| o.0.clone()).collect();
        let groups: Vec<BarGroup> = runs
            .iter()
            .take(60)
            .map(|&r| BarGroup {
                label: run_label(study, r),
                values: probabilities(study, results, r),
            })
            .collect();
        let suffix = report::variant_suffix(&variant.name, study.variants.len());
        let of = (study.variants.len() > 1).then_some(variant.name.as_str());
        chart::grouped_bars(
            &charts.path(&format!("outcome{suffix}"), of),
            &format!("How the battle ends — {}", variant.game.name),
            if study.axes.is_empty() {
                "battle"
            } else {
                "run"
            },
            "probability",
            &series,
            &groups,
        )?;
    }
    Ok(())
}

/// A table of the rules file as printed: a row per modified roll, a column per label;
/// where `variant` edited its cells (`[variant.cells]`), the title names the variant and
/// the edited cells are marked `*`.
fn printed(
    game: &Game,
    t: &battlelab_core::systems::rules_file::game::Table,
    variant: &str,
) -> Table {
    let how = match &t.columns {
        ColumnPick::Odds {
            round_up, nearest, ..
        } => format!(
            "odds, read {}",
            if *nearest {
                "to the nearest"
            } else if *round_up {
                "up"
            } else {
                "down"
            }
        ),
        ColumnPick::AtLeast { .. } => "at least the column's value".into(),
        ColumnPick::Index { .. } => "by position".into(),
    };
    let dice = if t.dice == 0 {
        "no dice: a lookup".to_string()
    } else {
        format!("{}d{}", t.dice, t.faces)
    };
    let mut title = format!(
        "{} ({}; {dice}; columns {how})",
        if t.means.is_empty() {
            &t.name
        } else {
            &t.means
        },
        t.name,
    );
    if !t.edited.is_empty() {
        title.push_str(&format!(", as variant \"{variant}\" edits it"));
    }
    let mut header = vec![if t.dice == 0 { "row" } else { "roll" }.to_string()];
    header.extend(t.labels.iter().cloned());
    let mut table = Table::new(&title, header);
    for (i, row) in (t.rows.0..=t.rows.1).enumerate() {
        let mut cells = vec![Cell::text(row.to_string())];
        cells.extend(t.cells.iter().enumerate().map(|(c, column)| {
            let code = &game.results[column[i]].code;
            if t.edited.binary_search(&(c, i)).is_ok() {
                Cell::text(format!("{code}*"))
            } else {
                Cell::text(code.clone())
            }
        }));
        table.row(cells);
    }
    table
}

/// Each table rolled with dice, as modified at the start of each run's battle (its
/// parameters and counters; a round's scratch values and choices at 0): for each natural
/// roll, what every column reads once the modifier and the row formula have been applied
/// (marked ‡ where that is not the printed cell: `*` is a variant's edited cell, † a percentage rounding moved).
/// Runs whose rolls read the same rows share one table; the runs and the column each
/// reads are listed under it.
fn as_modified(study: &RulesStudy, book: &mut Rulebook, game: &Game) {
    use battlelab_core::systems::rules_file::chain::{column_of, rows_read, RowRead};
    let runs: Vec<usize> = (0..study.runs.len())
        .filter(|r| study.variants[study.runs[*r].variant].game.text == game.text)
        .collect();
    for t in game.tables.iter().filter(|t| t.dice > 0) {
        // Each distinct reading of the rolls, with the runs that read it.
        type Reading = Vec<(i64, RowRead)>;
        let mut groups: Vec<(Reading, Vec<usize>)> = Vec::new();
        for &r in &runs {
            let read = rows_read(game, t, &study.runs[r].base);
            match groups.iter_mut().find(|g| g.0 == read) {
                Some(g) => g.1.push(r),
                None => groups.push((read, vec![r])),
            }
        }
        let name = if t.means.is_empty() {
            &t.name
        } else {
            &t.means
        };
        book.text(&format!(
            "### {name} as modified\n\nAt the start of each run's battle (its parameters and counters; choices and scratch values 0): for each natural roll of {}d{}, what each column reads after the modifier (a cell the modifier moved off the printed one is marked ‡).\n\n",
            t.dice, t.faces
        ));
        for (k, (read, members)) in groups.iter().enumerate() {
            let title = if groups.len() == 1 {
                format!("{} as modified", t.name)
            } else {
                format!("{} as modified ({} of {})", t.name, k + 1, groups.len())
            };
            let mut header = vec!["roll".to_string()];
            header.extend(t.labels.iter().cloned());
            let mut table = Table::new(&title, header);
            for (sum, row) in read {
                let mut cells = vec![Cell::text(sum.to_string())];
                for c in 0..t.labels.len() {
                    let result = match row {
                        RowRead::Natural(r) | RowRead::Beyond(r) => *r,
                        RowRead::Row(index) => t.cells[c][*index],
                    };
                    // The printed cell of this natural roll, where the table prints it.
                    let printed = (t.rows.0..=t.rows.1)
                        .position(|x| x == *sum)
                        .map(|j| t.cells[c][j]);
                    let mark = if printed.is_some_and(|p| p != result) {
                        "‡"
                    } else {
                        ""
                    };
                    cells.push(Cell::text(format!("{}{mark}", game.results[result].code)));
                }
                table.row(cells);
            }
            book.table(table);
            let shown: Vec<String> = members
                .iter()
                .take(12)
                .map(|&r| {
                    let column = match column_of(t, &study.runs[r].base) {
                        Ok(c) => format!("column {}", t.labels[c]),
                        Err(result) => format!("{} with no roll", game.results[result].code),
                    };
                    format!("{} ({column})", run_label(study, r))
                })
                .collect();
            let more = members.len().saturating_sub(shown.len());
            book.text(&format!(
                "\nRuns: {}{}.\n\n",
                shown.join("; "),
                if more > 0 {
                    format!("; and {more} more")
                } else {
                    String::new()
                }
            ));
        }
    }
}

fn edge_text(game: &Game, e: Edge) -> String {
    match e {
        Edge::Clamp => "the nearest is read".into(),
        Edge::Result(r) => format!("{} (no roll)", game.results[r].code),
    }
}

fn rulebook_tables(
    study: &RulesStudy,
    results: &crate::engine::driver::PlanResults<RulesStudy>,
) -> Rulebook {
    let exact_everywhere = results.exact.iter().all(Option::is_some);
    let mut book = Rulebook::new(
        &study.header.name,
        format!(
            "Seed {}, {} battles per row{}",
            results.seed,
            results.trials,
            if exact_everywhere {
                " (percentages exact)"
            } else {
                ""
            }
        ),
    );
    let mut md = format!("# {}\n\n", study.header.name);
    if let Some(d) = &study.header.description {
        md.push_str(&format!("{d}\n\n"));
    }
    for notice in &study.notices {
        md.push_str(&format!("Note: {notice}.\n\n"));
    }
    book.text(&md);
    let mut shown: Vec<&str> = Vec::new();
    for variant in &study.variants {
        let game = &variant.game;
        if shown.contains(&game.text.as_str()) {
            continue;
        }
        shown.push(&game.text);
        let edited = game.tables.iter().any(|t| !t.edited.is_empty());
        let mut md = if edited {
            format!(
                "## {} — the tables as variant \"{}\" edits them\n\n",
                game.name, variant.name
            )
        } else if game.tables.is_empty() {
            format!("## {}\n\n", game.name)
        } else {
            format!("## {} — the tables as printed\n\n", game.name)
        };
        if !game.description.is_empty() {
            md.push_str(&format!("{}\n\n", game.description));
        }
        if edited {
            md.push_str("`*` edited by variant.cells: the cells this variant changed from the rules file.\n\n");
        }
        if game.tables.is_empty() {
            md.push_str("This rules file declares no table: its rounds count or compare dice, as its phases say.\n\n");
        }
        book.text(&md);
        for t in &game.tables {
            book.table(printed(game, t, &variant.name));
            book.text(&format!(
                "Left of the first column: {}; right of the last: {}. Below the first row: {}; above the last: {}.\n\n",
                edge_text(game, t.below),
                edge_text(game, t.above),
                edge_text(game, t.below_rows),
                edge_text(game, t.above_rows)
            ));
        }
        as_modified(study, &mut book, game);
        let mut codes = Table::new(
            format!("{}: result codes", game.name),
            vec!["code".into(), "means".into()],
        );
        for r in &game.results {
            codes.row(vec![
                Cell::text(r.code.clone()),
                Cell::text(r.means.clone()),
            ]);
        }
        // No result codes (dice counted or compared): no empty table, no empty sheet.
        if !codes.rows.is_empty() {
            book.table(codes);
        }
    }
    book.text("\n## How the battle ends\n\n");
    let mut header: Vec<String> = vec!["variant".into(), "run".into()];
    let outcome_names: Vec<String> = study.variants[0]
        .game
        .outcomes
        .iter()
        .map(|o| o.0.clone())
        .collect();
    header.extend(outcome_names.iter().map(|o| format!("{o} %")));
    let mut table = Table::new("How the battle ends", header);
    for (run, r) in study.runs.iter().enumerate() {
        let game = study.game(run);
        if game.outcomes.iter().map(|o| &o.0).ne(outcome_names.iter()) {
            continue;
        }
        let p = probabilities(study, results, run);
        let shown = percentages_summing_to_100(&p, 1);
        let mut cells = vec![
            Cell::text(study.variants[r.variant].name.clone()),
            Cell::text(run_label(study, run)),
        ];
        cells.extend(shown.iter().zip(&p).map(|(u, &x)| {
            Cell::number(
                x,
                NumberFormat::Percent(1),
                format!("{}.{}", u / 10, u % 10),
            )
        }));
        table.row(cells);
        for (k, name) in outcome_names.iter().enumerate() {
            table.live(2 + k, run, Live::Hundred(name.clone()));
        }
    }
    book.table(table);
    book
}
