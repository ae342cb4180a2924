//! A rules file's tables as `tables.md` prints them: each declared table as printed (a
//! variant's edited cells marked `*`) with its edges, each dice table as modified at the
//! start of each run's battle (‡ where the modifier moved a cell) with the runs it stands
//! for, and the result codes — one section per distinct rules text of the variants.
//!
//! Why this module exists: the command line prints these tables into `tables.md`, and the
//! report page's panel, after an edit to a cell or a modifier, must print the same text
//! for the edited file. Both take it from [`printed`] ([`crate::engine::System::printed`]
//! of a [`RulesStudy`]); the report crate writes the blocks as they are, the WebAssembly
//! module hands the tables to the page.

use super::chain::{column_of, rows_read, RowRead};
use super::game::{ColumnPick, Edge, Game, Table};
use super::RulesStudy;
use crate::engine::printed::Printed;
use crate::engine::System;

/// Every rules section of the study's `tables.md`: for each variant whose rules text is
/// not printed yet, its heading, its tables as printed, as modified, and its result codes.
pub fn printed(study: &RulesStudy) -> Printed {
    let mut out = Printed::default();
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
        out.text(md);
        for t in &game.tables {
            as_printed(&mut out, game, t, &variant.name);
            out.note(format!(
                "Left of the first column: {}; right of the last: {}. Below the first row: {}; above the last: {}.\n\n",
                edge_text(game, t.below),
                edge_text(game, t.above),
                edge_text(game, t.below_rows),
                edge_text(game, t.above_rows)
            ));
        }
        as_modified(study, &mut out, game);
        let rows: Vec<Vec<String>> = game
            .results
            .iter()
            .map(|r| vec![r.code.clone(), r.means.clone()])
            .collect();
        // No result codes (dice counted or compared): no empty table, no empty sheet.
        if !rows.is_empty() {
            out.table(
                format!("{}: result codes", game.name),
                vec!["code".into(), "means".into()],
                rows,
            );
        }
    }
    out
}

/// What tells run `run` apart, in words ("terrain 1, attacker.strength 4"; "as written"
/// where nothing does).
pub fn run_label(study: &RulesStudy, run: usize) -> String {
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

/// A table of the rules file as printed: a row per modified roll, a column per label;
/// where `variant` edited its cells (`[variant.cells]`), the title names the variant and
/// the edited cells are marked `*`.
fn as_printed(out: &mut Printed, game: &Game, t: &Table, variant: &str) {
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
    let rows = (t.rows.0..=t.rows.1)
        .enumerate()
        .map(|(i, row)| {
            let mut cells = vec![row.to_string()];
            cells.extend(t.cells.iter().enumerate().map(|(c, column)| {
                let code = &game.results[column[i]].code;
                if t.edited.binary_search(&(c, i)).is_ok() {
                    format!("{code}*")
                } else {
                    code.clone()
                }
            }));
            cells
        })
        .collect();
    out.table(title, header, rows);
}

/// Each table rolled with dice, as modified at the start of each run's battle (its
/// parameters and counters; a round's scratch values and choices at 0): for each natural
/// roll, what every column reads once the modifier and the row formula have been applied
/// (marked ‡ where that is not the printed cell).
/// Runs whose rolls read the same rows share one table; the runs and the column each
/// reads are listed under it.
fn as_modified(study: &RulesStudy, out: &mut Printed, game: &Game) {
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
        out.text(format!(
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
            let rows = read
                .iter()
                .map(|(sum, row)| {
                    let mut cells = vec![sum.to_string()];
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
                        cells.push(format!("{}{mark}", game.results[result].code));
                    }
                    cells
                })
                .collect();
            out.table(title, header, rows);
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
            out.note(format!(
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
