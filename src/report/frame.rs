//! Counts → Polars DataFrames (long format) → CSV and Parquet.
//!
//! Why this module exists: every system reports in the same long schema
//! (`system, variant, <one column per swept parameter>, outcome, …`), so a designer can
//! load any report into Polars, pandas or a spreadsheet the same way. Frames are built
//! from aggregated counts only, never from per-trial rows.

use std::fs::File;
use std::path::Path;

use polars::prelude::*;

use crate::analysis::AxisValue;

enum ColumnData {
    Text(Vec<String>),
    OptText(Vec<Option<String>>),
    Int(Vec<i64>),
    Float(Vec<Option<f64>>),
}

/// The type of a declared column ([`LongFrame::with_columns`]).
#[derive(Clone, Copy, Debug)]
pub enum ColumnKind {
    Text,
    /// Text that may be null.
    OptText,
    Int,
    Float,
}

/// A long-format frame under construction: fixed leading columns (`system`, `variant`,
/// one per axis), then the columns each row adds, in the order rows add them.
pub struct LongFrame {
    axes: Vec<String>,
    variant: Vec<String>,
    coordinates: Vec<Vec<AxisValue>>,
    columns: Vec<(String, ColumnData)>,
    rows: usize,
    /// Every value each axis takes in the plan: decides an axis column's type even when
    /// the frame has no rows.
    axis_values: Vec<Vec<AxisValue>>,
}

/// One row being filled; [`RowBuilder::finish`] commits it.
pub struct RowBuilder<'a> {
    frame: &'a mut LongFrame,
    next_column: usize,
}

impl LongFrame {
    pub fn new(axes: &[&str]) -> Self {
        Self {
            axes: axes.iter().map(|a| a.to_string()).collect(),
            variant: Vec::new(),
            coordinates: Vec::new(),
            columns: Vec::new(),
            rows: 0,
            axis_values: Vec::new(),
        }
    }

    /// Types the axis columns from every run's coordinates (not only the rows written).
    pub fn typed_by(mut self, runs: &[&[AxisValue]]) -> Self {
        self.axis_values = (0..self.axes.len())
            .map(|i| runs.iter().map(|r| r[i].clone()).collect())
            .collect();
        self
    }

    /// Declares the columns every row will add, in order, so that a frame with no rows
    /// still has them (an empty `metrics` frame keeps its schema).
    pub fn with_columns(mut self, columns: &[(&str, ColumnKind)]) -> Self {
        for (name, kind) in columns {
            let data = match kind {
                ColumnKind::Text => ColumnData::Text(Vec::new()),
                ColumnKind::OptText => ColumnData::OptText(Vec::new()),
                ColumnKind::Int => ColumnData::Int(Vec::new()),
                ColumnKind::Float => ColumnData::Float(Vec::new()),
            };
            self.columns.push((name.to_string(), data));
        }
        self
    }

    /// Starts a row for one variant and grid point.
    pub fn row(&mut self, variant: &str, coordinates: &[AxisValue]) -> RowBuilder<'_> {
        self.variant.push(variant.to_string());
        self.coordinates.push(coordinates.to_vec());
        RowBuilder {
            frame: self,
            next_column: 0,
        }
    }

    /// The finished frame, with `system` as its first column.
    pub fn build(self, system: &str) -> PolarsResult<DataFrame> {
        let mut columns = vec![
            Column::new("system".into(), vec![system.to_string(); self.rows]),
            Column::new("variant".into(), self.variant),
        ];
        for (i, axis) in self.axes.iter().enumerate() {
            let values: Vec<&AxisValue> = self.coordinates.iter().map(|c| &c[i]).collect();
            let all: Vec<&AxisValue> = match self.axis_values.get(i) {
                Some(plan) => plan.iter().collect(),
                None => values.clone(),
            };
            columns.extend(axis_columns(axis, &values, &all));
        }
        for (name, data) in self.columns {
            columns.push(match data {
                ColumnData::Text(v) => Column::new(name.into(), v),
                ColumnData::OptText(v) => Column::new(name.into(), v),
                ColumnData::Int(v) => Column::new(name.into(), v),
                ColumnData::Float(v) => Column::new(name.into(), v),
            });
        }
        DataFrame::new_infer_height(columns)
    }
}

impl RowBuilder<'_> {
    fn slot(&mut self, name: &str, make: impl FnOnce() -> ColumnData) -> &mut ColumnData {
        let index = self.next_column;
        self.next_column += 1;
        if self.frame.columns.len() == index {
            self.frame.columns.push((name.to_string(), make()));
        }
        let (existing, data) = &mut self.frame.columns[index];
        debug_assert_eq!(existing, name, "rows must add columns in the same order");
        data
    }

    pub fn text(mut self, name: &str, value: &str) -> Self {
        if let ColumnData::Text(v) = self.slot(name, || ColumnData::Text(Vec::new())) {
            v.push(value.to_string());
        }
        self
    }

    /// A text cell that may be null (written as an empty CSV field).
    pub fn text_opt(mut self, name: &str, value: Option<&str>) -> Self {
        if let ColumnData::OptText(v) = self.slot(name, || ColumnData::OptText(Vec::new())) {
            v.push(value.map(str::to_string));
        }
        self
    }

    pub fn int(mut self, name: &str, value: i64) -> Self {
        if let ColumnData::Int(v) = self.slot(name, || ColumnData::Int(Vec::new())) {
            v.push(value);
        }
        self
    }

    pub fn float(mut self, name: &str, value: Option<f64>) -> Self {
        if let ColumnData::Float(v) = self.slot(name, || ColumnData::Float(Vec::new())) {
            v.push(value);
        }
        self
    }

    pub fn finish(self) {
        self.frame.rows += 1;
    }
}

/// A parameter's name as a column name: `a.morale` → `a_morale`.
pub fn column_name(parameter: &str) -> String {
    parameter
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The column(s) of one axis: whole numbers as integers, names as text, odds as their
/// ratio (so they sort: 1:1 < 3:2 < 2:1 < 3:1) with the printed label beside it in
/// `<axis>_label`. A run the axis does not apply to has a null.
fn axis_columns(axis: &str, values: &[&AxisValue], all: &[&AxisValue]) -> Vec<Column> {
    let name = column_name(axis);
    let odds = all.iter().any(|v| matches!(v, AxisValue::Odds { .. }));
    let ints = all
        .iter()
        .all(|v| matches!(v, AxisValue::Int(_) | AxisValue::Unset));
    if odds {
        let ratio: Vec<Option<f64>> = values.iter().map(|v| v.as_f64()).collect();
        let label: Vec<Option<String>> = values
            .iter()
            .map(|v| (!matches!(v, AxisValue::Unset)).then(|| v.to_string()))
            .collect();
        vec![
            Column::new(name.as_str().into(), ratio),
            Column::new(format!("{name}_label").into(), label),
        ]
    } else if ints {
        let ints: Vec<Option<i64>> = values
            .iter()
            .map(|v| match v {
                AxisValue::Int(x) => Some(*x),
                _ => None,
            })
            .collect();
        vec![Column::new(name.as_str().into(), ints)]
    } else {
        let text: Vec<Option<String>> = values
            .iter()
            .map(|v| (!matches!(v, AxisValue::Unset)).then(|| v.to_string()))
            .collect();
        vec![Column::new(name.as_str().into(), text)]
    }
}

/// Writes a frame as CSV (header, full float precision, nulls as empty fields, text
/// cells [`spreadsheet_safe`](crate::report::csv_cell::spreadsheet_safe)).
pub fn write_csv(df: &DataFrame, path: &Path) -> PolarsResult<()> {
    let mut file = File::create(path)?;
    write_csv_to(df, &mut file)
}

/// Writes a frame as CSV to `out`, as [`write_csv`] does.
pub fn write_csv_to(df: &DataFrame, out: &mut impl std::io::Write) -> PolarsResult<()> {
    let mut safe = crate::report::csv_cell::spreadsheet_safe_frame(df)?;
    CsvWriter::new(out).include_header(true).finish(&mut safe)
}

/// Writes a frame as Parquet (zstd, statistics on): the same bytes for the same frame.
pub fn write_parquet(df: &mut DataFrame, path: &Path) -> PolarsResult<()> {
    let file = File::create(path)?;
    ParquetWriter::new(file)
        .with_compression(ParquetCompression::Zstd(None))
        .finish(df)?;
    Ok(())
}
