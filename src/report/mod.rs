//! Running an analysis and writing its report folder.
//!
//! Why this module exists: it is the one place where results become files. It runs every
//! grid point of every variant through the Monte Carlo driver (and the exact enumeration
//! where it is small enough), turns the integer counts into Polars frames, charts and
//! rulebook tables, and writes them into a temporary folder that is renamed into place
//! only when everything is written — an interrupted or failed run leaves no report.

pub mod chart;
pub mod frame;
pub mod output;
pub mod pipeline;
pub mod rulebook;

use std::fs;
use std::path::Path;

use polars::prelude::*;

use crate::analysis::{AxisValue, SweepAxis};
use crate::sim::Interrupted;

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
    #[error("cannot write {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {message}")]
    Frame { path: String, message: String },
    #[error(transparent)]
    Chart(#[from] chart::ChartError),
    #[error(transparent)]
    Refused(#[from] crate::output::OutputError),
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.display().to_string(),
        source,
    }
}

pub use crate::output::write_atomically;

/// Turns a Polars error while building or writing a report's frames into a report error
/// naming the folder or file.
pub fn frame_error(path: &Path) -> impl Fn(PolarsError) -> ReportError + Copy + '_ {
    move |e| ReportError::Frame {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Writes a frame as `<stem>.csv` and `<stem>.parquet` in `dir`.
pub fn write_frame(dir: &Path, stem: &str, df: &mut DataFrame) -> Result<(), ReportError> {
    crate::interrupt::check()?;
    let csv = dir.join(format!("{stem}.csv"));
    frame::write_csv(df, &csv).map_err(frame_error(&csv))?;
    let parquet = dir.join(format!("{stem}.parquet"));
    frame::write_parquet(df, &parquet).map_err(frame_error(&parquet))?;
    Ok(())
}

/// Writes `text` to `dir/name`.
pub fn write_text(dir: &Path, name: &str, text: &str) -> Result<(), ReportError> {
    crate::interrupt::check()?;
    let path = dir.join(name);
    fs::write(&path, text).map_err(io_error(&path))
}

/// Writes `manifest.json`.
pub fn write_manifest(dir: &Path, manifest: &serde_json::Value) -> Result<(), ReportError> {
    let text = serde_json::to_string_pretty(manifest).expect("JSON values serialise");
    write_text(dir, crate::output::MANIFEST, &(text + "\n"))
}

/// What a chart's file name adds for a variant: nothing when the analysis has one.
pub(crate) fn variant_suffix(variant: &str, variants: usize) -> String {
    if variants > 1 {
        format!("_{}", crate::analysis::slug(variant))
    } else {
        String::new()
    }
}

/// The value a chart holds an axis at when it is not drawn: the value nearest zero for
/// numbers (no modifier), else the first.
pub(crate) fn fixed_value(axis: &SweepAxis) -> &AxisValue {
    axis.values
        .iter()
        .min_by_key(|v| match v {
            AxisValue::Int(x) => x.unsigned_abs(),
            _ => 0,
        })
        .expect("axes are never empty")
}

/// Indices of the points `(variant, coordinates)` of one variant on the axes `free`, every
/// other axis at its [`fixed_value`]: the slice a chart draws.
pub(crate) fn slice_points<'a>(
    axes: &[SweepAxis],
    points: impl IntoIterator<Item = (usize, &'a [AxisValue])>,
    variant: usize,
    free: &[usize],
) -> Vec<usize> {
    points
        .into_iter()
        .enumerate()
        .filter(|(_, (v, coordinates))| {
            *v == variant
                && coordinates
                    .iter()
                    .zip(axes)
                    .enumerate()
                    .all(|(i, (value, axis))| free.contains(&i) || value == fixed_value(axis))
        })
        .map(|(i, _)| i)
        .collect()
}
