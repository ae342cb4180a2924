//! Single-roll tables printed for a designer: exact fractions, optional Monte Carlo
//! estimates with Wilson intervals, in text, CSV, JSON or Markdown.
//!
//! Why this module exists: `battlelab table …` answers "what does one roll on this table
//! do?" for any table a system declares (`battlelab_core::one_roll`); the core computes a
//! [`TableReport`], and one [`Exporter`] per output format turns it into text, so every
//! format shows the same numbers and no format knows any table.

use std::fmt::Write;

use serde_json::json;

pub use battlelab_core::one_roll::{
    ExpectationRow, OutcomeRow, TableError, TableReport, TableSection,
};

/// Turns a [`TableReport`] into one output format.
pub trait Exporter {
    fn export(&self, report: &TableReport) -> String;
}

/// Aligned plain text for the terminal.
pub struct TextExporter;
/// Comma-separated values with a header row.
pub struct CsvExporter;
/// The stable JSON shape scripts read.
pub struct JsonExporter;
/// A Markdown table ready for a rulebook.
pub struct MarkdownExporter;

/// The exporter for a format name: `text`, `csv`, `json` or `md`.
pub fn exporter(format: &str) -> Option<Box<dyn Exporter>> {
    match format {
        "text" => Some(Box::new(TextExporter)),
        "csv" => Some(Box::new(CsvExporter)),
        "json" => Some(Box::new(JsonExporter)),
        "md" => Some(Box::new(MarkdownExporter)),
        _ => None,
    }
}

/// Fractions longer than this are abbreviated in text and Markdown (the decimal column
/// still shows the value; CSV and JSON carry the whole fraction).
const SHOWN_FRACTION_CHARS: usize = 40;

/// A fraction as text and Markdown show it: whole, or its size when it is too long.
fn shown(fraction: &str) -> String {
    if fraction.len() <= SHOWN_FRACTION_CHARS {
        return fraction.to_string();
    }
    let digits = fraction.split('/').map(str::len).collect::<Vec<_>>();
    format!(
        "({}/{}-digit fraction)",
        digits[0],
        digits.get(1).copied().unwrap_or(0)
    )
}

fn opt(value: Option<f64>, digits: usize) -> String {
    value.map(|v| format!("{v:.digits$}")).unwrap_or_default()
}

/// One block of outcome rows as aligned text: a header line, then one line per row with
/// the fraction, the decimal (or `-` when the block is not exact) and, when simulated,
/// the estimate and its interval. `trials_note` ends the header with the trial count.
fn text_rows(
    out: &mut String,
    rows: &[OutcomeRow],
    exact: bool,
    simulated: bool,
    min_fraction_width: usize,
    trials_note: Option<u64>,
) {
    let width = rows
        .iter()
        .map(|o| o.outcome.chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    let fraction_width = rows
        .iter()
        .map(|o| {
            o.fraction
                .as_deref()
                .map_or(1, |f| shown(f).chars().count())
        })
        .max()
        .unwrap_or(min_fraction_width)
        .max(min_fraction_width);
    let _ = write!(
        out,
        "{:<width$}  {:>fraction_width$}  {:>8}",
        "outcome", "exact", "decimal"
    );
    if simulated {
        let _ = write!(out, "  {:>9}  {:<20}", "simulated", "95% interval");
    }
    match trials_note {
        Some(n) => {
            let _ = writeln!(out, "  ({n} trials)");
        }
        None => {
            let _ = writeln!(out);
        }
    }
    for o in rows {
        let decimal = if exact {
            format!("{:.6}", o.probability)
        } else {
            "-".to_string()
        };
        let _ = write!(
            out,
            "{:<width$}  {:>fraction_width$}  {:>8}",
            o.outcome,
            o.fraction.as_deref().map_or("-".to_string(), shown),
            decimal
        );
        if simulated && o.estimate.is_some() {
            let _ = write!(
                out,
                "  {:>9}  [{}, {}]",
                opt(o.estimate, 6),
                opt(o.ci_low, 6),
                opt(o.ci_high, 6)
            );
        }
        let _ = writeln!(out);
    }
}

impl Exporter for TextExporter {
    fn export(&self, report: &TableReport) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", report.title);
        let simulated = report.trials.is_some();
        // The main outcomes show their probability (exact, else the estimate) as decimal.
        text_rows(
            &mut out,
            &report.outcomes,
            true,
            simulated,
            9,
            report.trials,
        );
        if !report.expectations.is_empty() {
            let _ = writeln!(out, "\n{}", report.expectations_heading);
            let name_width = report
                .expectations
                .iter()
                .map(|e| e.name.chars().count())
                .max()
                .unwrap_or(18)
                .max(18);
            let value_width = report
                .expectations
                .iter()
                .map(|e| shown(&e.fraction).chars().count())
                .max()
                .unwrap_or(9)
                .max(9);
            for e in &report.expectations {
                let _ = writeln!(
                    out,
                    "{:<name_width$} {:>value_width$}  {:>8.6}",
                    e.name,
                    shown(&e.fraction),
                    e.value
                );
            }
        }
        for section in &report.sections {
            let _ = writeln!(out, "\n{}", section.title);
            text_rows(&mut out, &section.rows, section.exact, simulated, 5, None);
        }
        out
    }
}

/// A CSV field: made safe for spreadsheets, then quoted when it holds a comma, a quote
/// or a line break (RFC 4180); see [`crate::report::csv_cell`].
pub use crate::report::csv_cell::field as csv_field;

/// One outcome row of the CSV export, its name prefixed by `prefix`.
fn csv_outcome(out: &mut String, prefix: &str, o: &OutcomeRow) {
    let number = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    let _ = writeln!(
        out,
        "{},{},{},{},{},{},{}",
        csv_field(&format!("{prefix}{}", o.outcome)),
        o.probability,
        o.fraction.as_deref().unwrap_or(""),
        number(o.estimate),
        o.count.map(|v| v.to_string()).unwrap_or_default(),
        number(o.ci_low),
        number(o.ci_high),
    );
}

impl Exporter for CsvExporter {
    fn export(&self, report: &TableReport) -> String {
        let mut out = String::from("outcome,probability,fraction,estimate,count,ci_low,ci_high\n");
        for o in &report.outcomes {
            csv_outcome(&mut out, "", o);
        }
        for e in &report.expectations {
            let _ = writeln!(
                out,
                "{},{},{},,,,",
                csv_field(&format!("expected {}", e.name)),
                e.value,
                e.fraction
            );
        }
        for section in &report.sections {
            for o in &section.rows {
                csv_outcome(&mut out, &format!("{}: ", section.title), o);
            }
        }
        out
    }
}

impl Exporter for JsonExporter {
    fn export(&self, report: &TableReport) -> String {
        let mut value = json!({
            "system": report.system,
            "params": report.params,
            "trials": report.trials,
            "outcomes": report.outcomes,
        });
        if !report.expectations.is_empty() {
            value["expectations"] = json!(report.expectations);
        }
        if !report.sections.is_empty() {
            value["sections"] = json!(report.sections);
        }
        serde_json::to_string_pretty(&value).expect("JSON values serialise") + "\n"
    }
}

/// One block of outcome rows as a Markdown table: percentages that sum to 100 when the
/// rows are a partition (else each rounded on its own), the fraction (or the decimal of
/// an exact block without one, or `–`), and the estimate and interval when simulated.
fn markdown_rows(
    out: &mut String,
    rows: &[OutcomeRow],
    partition: bool,
    exact: bool,
    simulated: bool,
) {
    out.push_str(if simulated {
        "| outcome | exact | % | simulated | 95% interval |\n|---|---|---|---|---|\n"
    } else {
        "| outcome | exact | % |\n|---|---|---|\n"
    });
    let values: Vec<f64> = rows.iter().map(|o| o.probability).collect();
    let mut moved = false;
    let percents: Vec<String> = if partition {
        let row = crate::report::rulebook::percent_row(
            crate::analysis::TablesOptions::default(),
            &values,
        );
        moved = row.moved;
        row.cells
    } else {
        values.iter().map(|v| format!("{:.1}", v * 100.0)).collect()
    };
    for (o, percent) in rows.iter().zip(percents) {
        let shown_exact = match (&o.fraction, exact) {
            (Some(f), _) => shown(f),
            (None, true) => format!("{:.5}", o.probability),
            (None, false) => "–".to_string(),
        };
        let _ = write!(out, "| {} | {} | {} |", o.outcome, shown_exact, percent);
        if simulated && o.estimate.is_none() {
            out.push_str("  |  |");
        } else if simulated {
            let _ = write!(
                out,
                " {} | {}–{} |",
                opt(o.estimate, 5),
                opt(o.ci_low, 5),
                opt(o.ci_high, 5)
            );
        }
        out.push('\n');
    }
    if moved {
        let _ = write!(out, "\n{}\n", crate::report::rulebook::MOVED_NOTE);
    }
}

impl Exporter for MarkdownExporter {
    fn export(&self, report: &TableReport) -> String {
        let mut out = format!("**{}**\n\n", report.title);
        let simulated = report.trials.is_some();
        markdown_rows(&mut out, &report.outcomes, true, false, simulated);
        if !report.expectations.is_empty() {
            out.push_str("\n| expected | exact | decimal |\n|---|---|---|\n");
            for e in &report.expectations {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.4} |",
                    e.name,
                    shown(&e.fraction),
                    e.value
                );
            }
        }
        for section in &report.sections {
            let _ = write!(out, "\n**{}**\n\n", section.title);
            markdown_rows(
                &mut out,
                &section.rows,
                section.partition,
                section.exact,
                simulated,
            );
        }
        out
    }
}
