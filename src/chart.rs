//! TEMPORARY stub until the chart module lands.
use std::path::Path;
#[derive(Debug, thiserror::Error)]
#[error("could not draw chart {path}: {message}")]
pub struct ChartError { pub path: String, pub message: String }
pub struct BarGroup { pub label: String, pub values: Vec<f64> }
pub fn grouped_bars(_stem: &Path, _t: &str, _x: &str, _y: &str, _s: &[String], _g: &[BarGroup]) -> Result<(), ChartError> { Ok(()) }
pub fn heatmap(_stem: &Path, _t: &str, _x: &str, _xt: &[String], _y: &str, _yt: &[String], _v: &[Vec<f64>]) -> Result<(), ChartError> { Ok(()) }
pub fn distributions(_stem: &Path, _t: &str, _x: &str, _y: &str, _s: &[(String, Vec<(f64, f64)>)]) -> Result<(), ChartError> { Ok(()) }
