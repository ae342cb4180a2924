//! Rulebook tables: `tables.md` and `tables.xlsx`, from one description of each table.
//!
//! Why this module exists: a designer lays a table out in a rulebook — in a word
//! processor or a spreadsheet — and reads it first in Markdown. Both files come from
//! one [`Rulebook`]: the Markdown text with every table in it, and each table as typed
//! cells ([`Cell`]: text, or a number with its exact value and how it prints), so the
//! spreadsheet holds numbers as numbers (a percentage is the probability under a
//! percent format, a chance "in 36" the count of faces under a `0" in 36"` format) and
//! odds labels and row labels as text — never a `3:2` a spreadsheet reads as a time.
//!
//! It also prints chances as a rulebook does (`[tables] format` and `decimals`):
//! percentages that add up to exactly 100 (marking a value moved away from its nearest
//! rounding), exact fractions, or counts of the faces of one d6 or of 2d6.

use rust_xlsxwriter::{DocProperties, ExcelDateTime, Format, Workbook, XlsxError};

use crate::analysis::{TableFormat, TablesOptions};
use crate::report::ReportError;
use crate::stats::{rounded_percentages, units_text, RoundedRow};
use battlelab_core::engine::derived::Derived;
use battlelab_core::engine::printed::{Block, Printed, PrintedTable};

/// The spreadsheet beside `tables.md`.
pub const XLSX: &str = "tables.xlsx";

/// A DRM as printed: `+1`, `0`, `-2` (defined once, in the core, where the one-roll
/// tables print DRMs in their titles too).
pub use battlelab_core::one_roll::signed;

/// How a number cell prints in `tables.xlsx` (its Markdown text is [`Cell::shown`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberFormat {
    /// A probability as a percentage with this many decimals.
    Percent(u32),
    /// A probability as a fraction whose denominator has at most this many digits.
    Fraction(u32),
    /// A count of faces out of `n` ("4 in 6"): the value is the count.
    FacesIn(u32),
    /// A plain number with this many decimals.
    Decimal(u32),
    /// A number with its sign ("+0.125") and this many decimals.
    Signed(u32),
}

impl NumberFormat {
    /// The spreadsheet's number format code.
    pub fn code(self) -> String {
        let decimals = |d: u32| {
            if d == 0 {
                "0".to_string()
            } else {
                format!("0.{}", "0".repeat(d as usize))
            }
        };
        match self {
            Self::Percent(d) => format!("{}%", decimals(d)),
            Self::Fraction(digits) => format!("?/{}", "?".repeat(digits.max(1) as usize)),
            Self::FacesIn(n) => format!("0\" in {n}\""),
            Self::Decimal(d) => decimals(d),
            Self::Signed(d) => {
                let d = decimals(d);
                format!("+{d};-{d};{d}")
            }
        }
    }
}

/// One cell of a rulebook table.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A label, an odds column, a printed result: text in both files.
    Text(String),
    /// A number: `value` in the spreadsheet under `format`, `shown` in Markdown.
    Number {
        value: f64,
        format: NumberFormat,
        shown: String,
    },
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(text.into())
    }

    /// A number shown as `shown` in Markdown.
    pub fn number(value: f64, format: NumberFormat, shown: impl Into<String>) -> Self {
        if value.is_finite() {
            Self::Number {
                value,
                format,
                shown: shown.into(),
            }
        } else {
            // ∞ and NaN are no spreadsheet number: the text as printed.
            Self::Text(shown.into())
        }
    }

    /// A probability printed "12.3%" (with `decimals` digits).
    pub fn percent(p: f64, decimals: u32) -> Self {
        Self::number(
            p,
            NumberFormat::Percent(decimals),
            format!("{:.*}%", decimals as usize, p * 100.0),
        )
    }

    /// A plain number printed with `decimals` digits.
    pub fn decimal(value: f64, decimals: u32) -> Self {
        Self::number(
            value,
            NumberFormat::Decimal(decimals),
            format!("{value:.*}", decimals as usize),
        )
    }

    /// What `tables.md` prints.
    pub fn shown(&self) -> &str {
        match self {
            Self::Text(t) => t,
            Self::Number { shown, .. } => shown,
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Self::Text(text.to_string())
    }
}

/// What a live cell of a rulebook table holds: a number the report page's "try it" panel
/// recomputes from a run's results when a designer edits the analysis (the measurement
/// named as the engine names it: outcomes by name, metrics by name).
#[derive(Clone, Debug, PartialEq)]
pub enum Live {
    /// The probability that the battle ends in any of these outcomes.
    Outcomes(Vec<String>),
    /// A metric's mean.
    Mean(String),
    /// How the run's numbers were found: "exact", else "simulated".
    Source,
    /// This outcome's percentage in tenths, printed "12.3", in a row of every outcome of
    /// the run rounded to add up to exactly 100% ([`crate::stats::rounded_percentages`]).
    Hundred(String),
    /// As [`Live::Hundred`], in a table whose columns are only the outcomes `of`: those
    /// the runs of the table's rows reach (the command line leaves out a column no run
    /// reaches; every cell of the table carries the same `of`). Where the edited runs
    /// reach other outcomes (an edit brought one in or took one away, so the command line
    /// prints other columns) no cell is printed in these columns.
    HundredAmong { outcome: String, of: Vec<String> },
    /// This outcome's exact chance printed as the analysis's `[tables]` asks (a fraction,
    /// "2 in 6", or a percentage in a row rounded to add up to 100, with its `†`): the
    /// text the run's response carries ([`crate::analysis::TablesOptions::print_chances`]).
    /// `of`: every outcome of the row, in its columns' order; a run whose outcomes differ
    /// (an edited cell brought in or took away an outcome, so the command line prints
    /// other columns) is not printed in these columns.
    Chance { outcome: String, of: Vec<String> },
    /// A d6 table's expected value by this name, exact: printed "7/6 (1.167)", the
    /// fraction and its value at the cell's decimals.
    Expected(String),
    /// A number the system derives from several runs or a search
    /// ([`battlelab_core::engine::derived::Derived`]: a best request, a survival curve's
    /// mean, a difference of means), by its key, printed in `format` as
    /// [`derived_cell`] prints it (∞ where infinite, bold where the best of its row).
    Derived { key: String, format: NumberFormat },
    /// As [`Live::Derived`], where the system prints the cell's text itself (three
    /// percentages in one cell, a verdict, "–"): the page prints that text.
    DerivedText(String),
}

/// A live cell: where it stands (row and column of its table), the plan's run it reads,
/// and what it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveCell {
    pub row: usize,
    pub column: usize,
    pub run: usize,
    pub live: Live,
}

/// One rulebook table: its title (the `##` heading it stands under), header and rows,
/// and the cells the page recomputes ([`Table::live`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub live: Vec<LiveCell>,
    /// Where the table is printed from the rules as read: its key and the note printed
    /// under it ([`battlelab_core::engine::printed::PrintedTable`]), by which the page
    /// reprints it from the module's `printed` after an edit.
    pub printed: Option<PrintedKey>,
}

/// How the page finds a table printed from the rules as read among the module's: its
/// key, and the paragraph under it as the page shows it (to find it and reprint it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintedKey {
    pub key: String,
    pub note: Option<String>,
}

impl Table {
    pub fn new(title: impl Into<String>, header: Vec<String>) -> Self {
        Self {
            title: title.into(),
            header,
            rows: Vec::new(),
            live: Vec::new(),
            printed: None,
        }
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// Marks cell `column` of the last row as holding `live` of the plan's run `run`, so
    /// the page's panel recomputes it. Only a percentage or a plain number (a [`Live::Source`]:
    /// a text; a [`Live::Hundred`]: a percentage with one decimal; a [`Live::Chance`]: a
    /// chance of [`exact_row`]; a [`Live::Expected`]: a plain number) can be live: the page
    /// prints it the way [`Cell::percent`], [`Cell::decimal`] and [`exact_row`] do; any
    /// other cell stays as the run printed it.
    pub fn live(&mut self, column: usize, run: usize, live: Live) {
        let Some(row) = self.rows.len().checked_sub(1) else {
            return;
        };
        let printable = matches!(
            (&self.rows[row].get(column), &live),
            (Some(_), Live::DerivedText(_))
                | (
                    Some(_),
                    Live::Derived {
                        format: NumberFormat::Percent(_)
                            | NumberFormat::Decimal(_)
                            | NumberFormat::Signed(_),
                        ..
                    }
                )
        ) || matches!(
            (&self.rows[row].get(column), &live),
            (Some(Cell::Text(_)), Live::Source)
                | (
                    Some(Cell::Number {
                        format: NumberFormat::Percent(_) | NumberFormat::Decimal(_),
                        ..
                    }),
                    Live::Outcomes(_) | Live::Mean(_),
                )
                | (
                    Some(Cell::Number {
                        format: NumberFormat::Percent(1),
                        ..
                    }),
                    Live::Hundred(_) | Live::HundredAmong { .. },
                )
                | (
                    Some(Cell::Number {
                        format: NumberFormat::Percent(_)
                            | NumberFormat::Fraction(_)
                            | NumberFormat::FacesIn(_),
                        ..
                    }),
                    Live::Chance { .. },
                )
                | (
                    Some(Cell::Number {
                        format: NumberFormat::Decimal(_),
                        ..
                    }),
                    Live::Expected(_),
                )
        );
        if printable {
            self.live.push(LiveCell {
                row,
                column,
                run,
                live,
            });
        }
    }

    /// A table printed from the rules as read, built by the core
    /// ([`battlelab_core::engine::System::printed`]): every cell text, its key kept for
    /// the page.
    pub fn from_printed(t: &PrintedTable) -> Self {
        let mut table = Self::new(&t.title, t.header.clone());
        for row in &t.rows {
            table.row(row.iter().cloned().map(Cell::Text).collect());
        }
        table.printed = Some(PrintedKey {
            key: t.key.clone(),
            note: t.note.clone(),
        });
        table
    }

    /// A table already printed as a Markdown pipe table (a printed rules table): every
    /// cell text.
    pub fn from_markdown(title: impl Into<String>, md: &str) -> Self {
        let split = |line: &str| -> Vec<String> {
            let inner = line.trim().trim_start_matches('|');
            let inner = inner.strip_suffix('|').unwrap_or(inner);
            inner.split('|').map(|c| c.trim().to_string()).collect()
        };
        let mut lines = md.lines().filter(|l| l.trim_start().starts_with('|'));
        let header = lines.next().map(split).unwrap_or_default();
        let rows = lines
            .filter(|l| !l.contains("---"))
            .map(|l| split(l).into_iter().map(Cell::Text).collect())
            .collect();
        Self {
            title: title.into(),
            header,
            rows,
            live: Vec::new(),
            printed: None,
        }
    }

    /// The table in Markdown: header, rule, rows, each line ending in a newline.
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "| {} |\n|{}\n",
            self.header.join(" | "),
            "---|".repeat(self.header.len())
        );
        for row in &self.rows {
            let cells: Vec<&str> = row.iter().map(Cell::shown).collect();
            md.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        md
    }
}

/// A report's rulebook tables: the Markdown of `tables.md`, and every table in it as
/// typed cells for `tables.xlsx`.
#[derive(Clone, Debug, Default)]
pub struct Rulebook {
    /// The analysis's name: the first words of every sheet's title row.
    pub name: String,
    /// What the run was ("seed 1815, 1000000 trials per grid point"), under each title.
    pub run: String,
    md: String,
    tables: Vec<Table>,
}

impl Rulebook {
    pub fn new(name: impl Into<String>, run: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            run: run.into(),
            ..Self::default()
        }
    }

    /// Appends Markdown text as it is (headings, paragraphs, notes).
    pub fn text(&mut self, md: &str) {
        self.md.push_str(md);
    }

    /// Appends a table: its Markdown to `tables.md`, its cells to `tables.xlsx`.
    pub fn table(&mut self, table: Table) {
        self.md.push_str(&table.markdown());
        self.tables.push(table);
    }

    /// Appends the tables printed from the rules as read, with the text around them, as
    /// the core built them ([`battlelab_core::engine::System::printed`]); each table keeps
    /// its key for the page.
    /// Appends one table printed from the rules as read (a built-in system's table as
    /// the file gives it, [`battlelab_core::engine::System::printed`]), keeping its key.
    pub fn printed_table(&mut self, t: &PrintedTable) {
        self.table(Table::from_printed(t));
    }

    pub fn printed(&mut self, printed: &Printed) {
        let mut tables = printed.tables().into_iter();
        for block in &printed.blocks {
            match block {
                Block::Text(md) | Block::Note(md) => self.text(md),
                Block::Table(_) => {
                    if let Some(t) = tables.next() {
                        self.printed_table(&t);
                    }
                }
            }
        }
    }

    pub fn markdown(&self) -> &str {
        &self.md
    }

    pub fn tables(&self) -> &[Table] {
        &self.tables
    }

    /// `tables.xlsx`: one sheet per table, named after its title (at most 31
    /// characters, none of `[]:*?/\`, unique), a title row naming the run, the header
    /// in bold, then the rows. The same tables give the same bytes: the workbook's
    /// creation date is fixed, and its zip entries carry no time.
    pub fn xlsx(&self) -> Result<Vec<u8>, XlsxError> {
        let mut workbook = Workbook::new();
        // Same seed, same bytes: no clock in the file.
        let epoch = ExcelDateTime::from_ymd(2000, 1, 1)?;
        workbook.set_properties(
            &DocProperties::new()
                .set_title(format!("{} — rulebook tables", self.name))
                .set_creation_datetime(&epoch),
        );
        let bold = Format::new().set_bold();
        let mut taken: Vec<String> = Vec::new();
        for table in &self.tables {
            let name = sheet_name(&table.title, &taken);
            taken.push(name.clone());
            let sheet = workbook.add_worksheet();
            sheet.set_name(&name)?;
            sheet.write_string_with_format(
                0,
                0,
                format!("{} — {}", self.name, table.title),
                &bold,
            )?;
            sheet.write_string(1, 0, &self.run)?;
            for (c, h) in table.header.iter().enumerate() {
                sheet.write_string_with_format(3, column(c), h, &bold)?;
            }
            for (r, row) in table.rows.iter().enumerate() {
                let at = 4 + r as u32;
                for (c, cell) in row.iter().enumerate() {
                    match cell {
                        Cell::Text(t) => {
                            sheet.write_string(at, column(c), t)?;
                        }
                        Cell::Number { value, format, .. } => {
                            let format = Format::new().set_num_format(format.code());
                            sheet.write_number_with_format(at, column(c), *value, &format)?;
                        }
                    }
                }
            }
            for c in 0..table.header.len() {
                let widest = std::iter::once(table.header[c].chars().count())
                    .chain(
                        table
                            .rows
                            .iter()
                            .filter_map(|r| r.get(c))
                            .map(|cell| cell.shown().chars().count()),
                    )
                    .max()
                    .unwrap_or(8);
                sheet.set_column_width(column(c), (widest.clamp(6, 60) + 2) as f64)?;
            }
            sheet.set_freeze_panes(4, 0)?;
        }
        workbook.save_to_buffer()
    }

    /// The live cells of every table, for the report page's panel: `{"tables": n, "cells":
    /// [{table, row, column, run, outcomes | mean | source | tenths (with `of` where the
    /// table's columns are some of the outcomes) | chance | expected, format, decimals}],
    /// "printed": [{table, key, note}]}` (`printed` where some table is printed from the rules as
    /// read: [`Rulebook::printed`]), where `table` counts the tables in `tables.md` from 0
    /// and `row` the rows under the header.
    pub fn live_cells(&self) -> serde_json::Value {
        let mut cells = Vec::new();
        for (t, table) in self.tables.iter().enumerate() {
            for c in &table.live {
                let mut cell = serde_json::json!({
                    "table": t, "row": c.row, "column": c.column, "run": c.run,
                });
                match &c.live {
                    Live::Outcomes(names) => cell["outcomes"] = serde_json::json!(names),
                    Live::Mean(metric) => cell["mean"] = serde_json::json!(metric),
                    Live::Source => cell["source"] = serde_json::json!(true),
                    Live::Hundred(name) => cell["tenths"] = serde_json::json!(name),
                    Live::HundredAmong { outcome, of } => {
                        cell["tenths"] = serde_json::json!(outcome);
                        cell["of"] = serde_json::json!(of);
                    }
                    Live::Chance { outcome, of } => {
                        cell["chance"] = serde_json::json!(outcome);
                        cell["of"] = serde_json::json!(of);
                    }
                    Live::Expected(name) => cell["expected"] = serde_json::json!(name),
                    Live::Derived { key, .. } => cell["derived"] = serde_json::json!(key),
                    Live::DerivedText(key) => {
                        cell["derived"] = serde_json::json!(key);
                        cell["format"] = serde_json::json!("text");
                    }
                }
                // A chance prints the response's own text: no format of its own. A
                // derived number prints in its own format (its cell may be an ∞ now).
                let format = match &c.live {
                    Live::Chance { .. } | Live::DerivedText(_) => None,
                    Live::Derived { format, .. } => Some(*format),
                    _ => match &table.rows[c.row][c.column] {
                        Cell::Number { format, .. } => Some(*format),
                        Cell::Text(_) => None,
                    },
                };
                if let Some(format) = format {
                    let (name, decimals) = match format {
                        NumberFormat::Percent(d) => ("percent", d),
                        NumberFormat::Signed(d) if matches!(c.live, Live::Derived { .. }) => {
                            ("signed", d)
                        }
                        _ => ("decimal", decimal_places(format)),
                    };
                    cell["format"] = serde_json::json!(name);
                    cell["decimals"] = serde_json::json!(decimals);
                }
                cells.push(cell);
            }
        }
        // The tables printed from the rules as read: the page reprints them after an
        // edit from the module's tables of the same key.
        let printed: Vec<serde_json::Value> = self
            .tables
            .iter()
            .enumerate()
            .filter_map(|(t, table)| {
                let printed = table.printed.as_ref()?;
                Some(serde_json::json!({"table": t, "key": printed.key, "note": printed.note}))
            })
            .collect();
        let mut live = serde_json::json!({"tables": self.tables.len(), "cells": cells});
        if !printed.is_empty() {
            live["printed"] = serde_json::json!(printed);
        }
        live
    }

    /// Writes `tables.md` and `tables.xlsx` into the report folder, and records the live
    /// cells for the page ([`crate::report::Charts::record_live_cells`]).
    pub fn write(&self, charts: &crate::report::Charts) -> Result<(), ReportError> {
        charts.record_live_cells(self.live_cells());
        let dir = charts.dir();
        crate::report::write_text(dir, "tables.md", &self.md)?;
        let path = dir.join(XLSX);
        let bytes = self.xlsx().map_err(|e| ReportError::Frame {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        crate::report::write_bytes(dir, XLSX, &bytes)
    }
}

/// The cell of a derived number (found by `key` among `derived`) as `tables.md` prints
/// it in `format` — a percentage ("12.3%"), a plain number ("0.53") or a signed one
/// ("+0.125"); "∞" where infinite; the system's own text where it prints one; in bold
/// where it is the best of its row — and as the
/// report page's panel prints the same number after an edit. A key not among them (never,
/// where the table and the system agree) prints "—".
pub fn derived_cell(derived: &[Derived], key: &str, format: NumberFormat) -> Cell {
    let Some(d) = battlelab_core::engine::derived::find(derived, key) else {
        return Cell::text("—");
    };
    let v = d.value;
    let text = if let Some(text) = &d.text {
        text.clone()
    } else if v == f64::INFINITY {
        "∞".to_string()
    } else {
        match format {
            NumberFormat::Percent(p) => format!("{:.*}%", p as usize, v * 100.0),
            NumberFormat::Signed(p) => format!("{v:+.*}", p as usize),
            _ => format!("{v:.*}", decimal_places(format) as usize),
        }
    };
    let shown = if d.best { format!("**{text}**") } else { text };
    Cell::number(v, format, shown)
}

/// The decimals of a plain number's format (a live cell is a percentage or one of these).
fn decimal_places(format: NumberFormat) -> u32 {
    match format {
        NumberFormat::Decimal(d) | NumberFormat::Signed(d) | NumberFormat::Percent(d) => d,
        NumberFormat::Fraction(_) | NumberFormat::FacesIn(_) => 0,
    }
}

/// A spreadsheet column index (the spreadsheet has 16 384; a rulebook table far fewer).
fn column(c: usize) -> u16 {
    c.min(16_383) as u16
}

/// A sheet name from a table's title: the characters a spreadsheet refuses in a sheet
/// name (`[]:*?/\`, control characters) as `-`, no apostrophe at either end, at most 31
/// characters (UTF-16 units; a long "`<table> — <variant>`" shortens the table's part and
/// keeps the variant's), different from every name in `taken` (case aside) — numbered
/// "(2)", "(3)" … where the title repeats.
pub fn sheet_name(title: &str, taken: &[String]) -> String {
    let clean: String = title
        .chars()
        .map(|c| {
            if "[]:*?/\\".contains(c) || c.is_control() {
                '-'
            } else {
                c
            }
        })
        .collect();
    let clean = clean.trim().trim_matches('\'').trim();
    let base = if clean.is_empty() || clean.eq_ignore_ascii_case("history") {
        format!("Table {}", taken.len() + 1)
    } else {
        clean.to_string()
    };
    let cut = |text: &str, units: usize| -> String {
        let mut out = String::new();
        let mut used = 0;
        for c in text.chars() {
            used += c.len_utf16();
            if used > units {
                break;
            }
            out.push(c);
        }
        out.trim_end().trim_end_matches('\'').to_string()
    };
    let free = |name: &str| {
        !taken
            .iter()
            .any(|t| t.to_lowercase() == name.to_lowercase())
    };
    let units = |text: &str| text.encode_utf16().count();
    // A long "<table> — <variant>" keeps its variant whole and shortens the table's name.
    let name = match base.rsplit_once(" — ") {
        Some((head, tail)) if units(&base) > 31 && units(tail) + 12 <= 31 => {
            format!("{}… — {tail}", cut(head, 31 - units(tail) - 4))
        }
        _ => cut(&base, 31),
    };
    if free(&name) {
        return name;
    }
    (2..)
        .map(|k| {
            let tail = format!(" ({k})");
            format!("{}{tail}", cut(&base, 31 - tail.len()))
        })
        .find(|n| free(n))
        .expect("some number is free")
}

/// The mark after a percentage that rounding moved away from its own nearest value
/// (defined once, in the core, where the chances are printed).
pub use battlelab_core::analysis::MOVED_MARK;

/// The note under a table that has a [`MOVED_MARK`].
pub const MOVED_NOTE: &str = "† rounded away from its nearest value so the row adds to 100%.";

/// One row of chances as printed, and whether a percentage in it was moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cells: Vec<String>,
    pub moved: bool,
    /// The same cells typed for the spreadsheet: each chance's exact value.
    pub values: Vec<Cell>,
}

fn percent_cells(row: &RoundedRow, decimals: u32, probabilities: &[f64]) -> Row {
    let cells: Vec<String> = (0..row.units.len())
        .map(|i| {
            let text = row.text(i, decimals);
            if row.moved[i] {
                format!("{text}{MOVED_MARK}")
            } else {
                text
            }
        })
        .collect();
    let values = cells
        .iter()
        .zip(probabilities)
        .map(|(shown, &p)| Cell::number(p, NumberFormat::Percent(decimals), shown.clone()))
        .collect();
    Row {
        cells,
        moved: row.any_moved(),
        values,
    }
}

/// Digits of `n` (at least 1).
fn digits(n: u64) -> u32 {
    n.max(1).ilog10() + 1
}

/// A row of exact chances `counts / total` in the format asked for, as
/// [`TablesOptions::print_chances`] prints it (the texts the report page's recomputed
/// cells print too), each cell typed for the spreadsheet. `in6` and `in36` print the
/// count of the faces (`"2 in 6"`); a count that is not a whole number of faces (never,
/// where the parser allowed the format) prints as a fraction instead.
pub fn exact_row(options: TablesOptions, counts: &[u64], total: u64) -> Row {
    let printed = options.print_chances(counts, total);
    let p = |c: u64| c as f64 / total.max(1) as f64;
    // Denominators past five digits no fraction format shows exactly: a percentage.
    let fraction_format = if digits(total) <= 5 {
        NumberFormat::Fraction(digits(total))
    } else {
        NumberFormat::Percent(options.decimals + 2)
    };
    let faces_in = |n: u32, c: u64| {
        let scaled = u128::from(c) * u128::from(n);
        (total > 0 && scaled.is_multiple_of(u128::from(total)))
            .then(|| (scaled / u128::from(total)) as f64)
    };
    let values = counts
        .iter()
        .zip(&printed.texts)
        .map(|(&c, shown)| {
            let (value, format) = match options.format {
                TableFormat::Percent => (p(c), NumberFormat::Percent(options.decimals)),
                TableFormat::Fraction => (p(c), fraction_format),
                TableFormat::In6 | TableFormat::In36 => {
                    let n = if options.format == TableFormat::In6 {
                        6
                    } else {
                        36
                    };
                    match faces_in(n, c) {
                        Some(k) => (k, NumberFormat::FacesIn(n)),
                        None => (p(c), fraction_format),
                    }
                }
            };
            Cell::number(value, format, shown.clone())
        })
        .collect();
    Row {
        moved: printed.any_moved(),
        cells: printed.texts,
        values,
    }
}

/// A row of chances known only as floating-point probabilities (simulated, or enumerated
/// in `f64`): always percentages, with `options.decimals` digits.
pub fn percent_row(options: TablesOptions, probabilities: &[f64]) -> Row {
    percent_cells(
        &rounded_percentages(probabilities, options.decimals),
        options.decimals,
        probabilities,
    )
}

/// "100.0" at the options' decimals.
pub fn hundred(options: TablesOptions) -> String {
    units_text(100 * 10u64.pow(options.decimals), options.decimals)
}

/// What the cells of an exact table are, for its note.
pub fn describe(options: TablesOptions) -> String {
    match options.format {
        TableFormat::Percent => format!(
            "percentages, each row adding up to exactly {}%",
            hundred(options)
        ),
        TableFormat::Fraction => "exact fractions".to_string(),
        TableFormat::In6 => "chances in 6 (faces of one d6)".to_string(),
        TableFormat::In36 => "chances in 36 (faces of 2d6)".to_string(),
    }
}

/// The header of an outcome's column: `"<outcome> %"` for percentages.
pub fn column_header(options: TablesOptions, outcome: &str) -> String {
    match options.format {
        TableFormat::Percent => format!("{outcome} %"),
        _ => outcome.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(format: TableFormat, decimals: u32) -> TablesOptions {
        TablesOptions { format, decimals }
    }

    #[test]
    fn sheet_names_are_what_a_spreadsheet_accepts_and_unique() {
        let mut taken: Vec<String> = Vec::new();
        let mut name = |title: &str| {
            let n = sheet_name(title, &taken);
            rust_xlsxwriter::utility::check_sheet_name(&n).unwrap();
            taken.push(n.clone());
            n
        };
        assert_eq!(name("Who loses — printed"), "Who loses — printed");
        // Refused characters become '-'; the name is cut to 31 characters.
        assert_eq!(name("Odds 3:2 / [x]*?\\"), "Odds 3-2 - -x----");
        assert_eq!(
            name("Combat Results Table — a very long variant name"),
            "Combat Results Table — a very l"
        );
        // A repeat, case aside, is numbered, still within 31.
        assert_eq!(
            name("combat results table — a very long variant name"),
            "combat results table — a ve (2)"
        );
        assert_eq!(
            name("Combat Results Table — DRM cap 3"),
            "Combat Results Tab… — DRM cap 3"
        );
        assert_eq!(name("'quoted'"), "quoted");
        assert_eq!(name("  "), "Table 7");
        assert_eq!(name("History"), "Table 8");
        assert!(taken.iter().all(|n| n.encode_utf16().count() <= 31));
    }

    #[test]
    fn a_rulebook_is_the_same_markdown_and_the_same_workbook_bytes_each_time() {
        let build = || {
            let mut book = Rulebook::new("study", "Seed 1, 100 trials per grid point");
            book.text("# study\n\n## Odds\n\n");
            let mut table = Table::new("Odds", vec!["odds".into(), "P(win)".into(), "SP".into()]);
            table.row(vec![
                Cell::text("3:2"),
                Cell::percent(0.125, 1),
                Cell::decimal(2.0 / 3.0, 2),
            ]);
            book.table(table);
            book
        };
        let book = build();
        assert_eq!(
            book.markdown(),
            "# study\n\n## Odds\n\n| odds | P(win) | SP |\n|---|---|---|\n| 3:2 | 12.5% | 0.67 |\n"
        );
        let bytes = book.xlsx().unwrap();
        assert_eq!(&bytes[..2], b"PK");
        assert_eq!(bytes, build().xlsx().unwrap());
    }

    #[test]
    fn number_formats_print_as_the_file_asks() {
        assert_eq!(NumberFormat::Percent(1).code(), "0.0%");
        assert_eq!(NumberFormat::Percent(0).code(), "0%");
        assert_eq!(NumberFormat::Fraction(2).code(), "?/??");
        assert_eq!(NumberFormat::FacesIn(36).code(), "0\" in 36\"");
        assert_eq!(NumberFormat::Decimal(3).code(), "0.000");
        assert_eq!(NumberFormat::Signed(2).code(), "+0.00;-0.00;0.00");
        // Infinity is no spreadsheet number: the text as printed.
        assert_eq!(
            Cell::number(f64::INFINITY, NumberFormat::Decimal(2), "∞"),
            Cell::Text("∞".into())
        );
    }

    #[test]
    fn every_format_of_one_row() {
        // 4, 1, 1 in 6.
        let counts = [4, 1, 1];
        let row = exact_row(options(TableFormat::Percent, 1), &counts, 6);
        assert_eq!(row.cells, ["66.6†", "16.7", "16.7"]);
        assert!(row.moved);
        let row = exact_row(options(TableFormat::Percent, 0), &counts, 6);
        assert_eq!(row.cells, ["66†", "17", "17"]);
        let row = exact_row(options(TableFormat::Fraction, 1), &counts, 6);
        assert_eq!(row.cells, ["2/3", "1/6", "1/6"]);
        let row = exact_row(options(TableFormat::In6, 1), &counts, 6);
        assert_eq!(row.cells, ["4 in 6", "1 in 6", "1 in 6"]);
        let row = exact_row(options(TableFormat::In36, 1), &counts, 6);
        assert_eq!(row.cells, ["24 in 36", "6 in 36", "6 in 36"]);
        // The spreadsheet's cells: the count of faces under "in 36".
        assert_eq!(
            row.values[0],
            Cell::number(24.0, NumberFormat::FacesIn(36), "24 in 36")
        );
        let row = exact_row(options(TableFormat::Fraction, 1), &counts, 6);
        assert_eq!(
            row.values[1],
            Cell::number(1.0 / 6.0, NumberFormat::Fraction(1), "1/6")
        );
        let row = exact_row(options(TableFormat::Percent, 1), &counts, 6);
        assert_eq!(
            row.values[0],
            Cell::number(4.0 / 6.0, NumberFormat::Percent(1), "66.6†")
        );
        // Not a whole number of faces: a fraction.
        let row = exact_row(options(TableFormat::In6, 1), &[1, 6], 7);
        assert_eq!(row.cells, ["1/7", "6/7"]);
        assert_eq!(hundred(options(TableFormat::Percent, 2)), "100.00");
        assert_eq!(hundred(options(TableFormat::Percent, 0)), "100");
    }
}
