//! Running an analysis and writing its report folder.
//!
//! Why this module exists: it is the one place where results become files. It runs every
//! grid point of every variant through the Monte Carlo driver (and the exact enumeration
//! where it is small enough), turns the integer counts into Polars frames, charts and
//! rulebook tables, and writes them into a temporary folder that is renamed into place
//! only when everything is written — an interrupted or failed run leaves no report.

pub mod chart;
pub mod csv_cell;
pub mod frame;
pub mod index;
pub mod output;
pub mod pipeline;
pub mod playground;
pub mod rulebook;
pub mod tryit;
pub mod wasm;

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

/// Writes `bytes` to `dir/name`.
pub fn write_bytes(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), ReportError> {
    crate::interrupt::check()?;
    let path = dir.join(name);
    fs::write(&path, bytes).map_err(io_error(&path))
}

/// One chart a system drew: its file stem (`<stem>.svg`, `<stem>.png`) and the variant it
/// shows (`None`: all variants together, or an analysis of one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChartFile {
    pub stem: String,
    pub variant: Option<String>,
}

/// Where a system draws its charts, and the record of which variant each chart shows.
///
/// Why this exists: the page files every chart under its own variant. Guessed back from
/// file names, a variant of several words ("DRM cap 3") or a chart of one slice of a
/// sweep (`…_drm-cap-3_a-leader-2`) lost its variant; recorded here by the code that
/// drew the chart, it cannot.
#[derive(Debug)]
pub struct Charts<'a> {
    dir: &'a Path,
    drawn: std::cell::RefCell<Vec<ChartFile>>,
    /// The rulebook's live cells ([`crate::report::rulebook::Rulebook::live_cells`]), once
    /// `tables.md` is written.
    live: std::cell::RefCell<Option<serde_json::Value>>,
}

impl<'a> Charts<'a> {
    pub fn new(dir: &'a Path) -> Self {
        Self {
            dir,
            drawn: std::cell::RefCell::new(Vec::new()),
            live: std::cell::RefCell::new(None),
        }
    }

    /// Records the cells of `tables.md` the page's panel recomputes.
    pub fn record_live_cells(&self, cells: serde_json::Value) {
        *self.live.borrow_mut() = Some(cells);
    }

    /// The live cells recorded, if a rulebook was written.
    pub fn live_cells(&self) -> Option<serde_json::Value> {
        self.live.borrow().clone()
    }

    /// The report folder.
    pub fn dir(&self) -> &'a Path {
        self.dir
    }

    /// The path (without extension) to draw the chart `stem` of `variant` at, recorded.
    pub fn path(&self, stem: &str, variant: Option<&str>) -> std::path::PathBuf {
        self.drawn.borrow_mut().push(ChartFile {
            stem: stem.to_string(),
            variant: variant.map(str::to_string),
        });
        self.dir.join(stem)
    }

    /// Every chart drawn, in order.
    pub fn drawn(&self) -> Vec<ChartFile> {
        self.drawn.borrow().clone()
    }
}

/// Writes `manifest.json`.
pub fn write_manifest(dir: &Path, manifest: &serde_json::Value) -> Result<(), ReportError> {
    let text = serde_json::to_string_pretty(manifest).expect("JSON values serialise");
    write_text(dir, crate::output::MANIFEST, &(text + "\n"))
}

/// A number as a line of text shows it: as written for ordinary sizes (0.003), in
/// scientific notation for tiny or huge ones (1e-9, not 0.000000001).
pub fn short_number(x: f64) -> String {
    if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e6) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// `text` with the sides' names from the file: every word "A" or "B" standing alone
/// ("A wins", "P(B destroyed)", "SP lost by A") becomes `names[0]` or `names[1]`.
/// Names left at their defaults ("A", "B") change nothing.
pub fn with_side_names(text: &str, names: &[String; 2]) -> String {
    if names[0] == "A" && names[1] == "B" {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let alone = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_none_or(|n| !n.is_alphanumeric() && *n != '_' && *n != '.')
        };
        if (c == 'A' || c == 'B') && alone(i.checked_sub(1)) && alone(Some(i + 1)) {
            out.push_str(&names[usize::from(c == 'B')]);
        } else {
            out.push(c);
        }
    }
    out
}

/// What a chart's file name adds for a variant: nothing when the analysis has one, else
/// `_` and the variant's name as a `file_slug` (`_small-stacks-roll`).
pub fn variant_suffix(variant: &str, variants: usize) -> String {
    if variants > 1 {
        format!("_{}", file_slug(variant))
    } else {
        String::new()
    }
}

pub(crate) use crate::analysis::file_slug;

/// A slice of a sweep: `(axis, value)` for every axis it holds fixed.
pub(crate) type Slice = [(usize, AxisValue)];

/// Most panels in one image of small multiples; a slice axis with more values is drawn
/// over several images ("part 1 of 3").
pub(crate) const MAX_PANELS: usize = 12;

/// One chart file of a sweep: the axes it does not draw held at `fixed`, and its panels,
/// one per value of the first axis not drawn (`panel_axis`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Page {
    pub fixed: Vec<(usize, AxisValue)>,
    pub panel_axis: Option<usize>,
    pub panels: Vec<AxisValue>,
    /// `(k, n)`: part k of n when the panel axis has more than [`MAX_PANELS`] values.
    pub part: Option<(usize, usize)>,
}

impl Page {
    /// The slices of this page's panels: `fixed` plus the panel's value (one empty panel
    /// title when there is no panel axis).
    pub fn panel_slices(&self) -> Vec<Vec<(usize, AxisValue)>> {
        match self.panel_axis {
            None => vec![self.fixed.clone()],
            Some(axis) => self
                .panels
                .iter()
                .map(|v| {
                    let mut slice = self.fixed.clone();
                    slice.push((axis, v.clone()));
                    slice
                })
                .collect(),
        }
    }

    /// A panel's title: the panel axis's value ("a.leader = 2"), empty without one.
    pub fn panel_title(&self, axes: &[SweepAxis], slice: &[(usize, AxisValue)]) -> String {
        match self.panel_axis {
            None => String::new(),
            Some(axis) => slice
                .iter()
                .filter(|(i, _)| *i == axis)
                .map(|(i, v)| format!("{} = {v}", axes[*i].parameter))
                .collect(),
        }
    }

    /// The subtitle of the whole image: every value it holds fixed ("b.morale = 2,
    /// a.leader = 1"), and which part it is.
    pub fn subtitle(&self, axes: &[SweepAxis]) -> String {
        let mut text = slice_label(axes, &self.fixed);
        if let Some((k, n)) = self.part {
            let part = format!("part {k} of {n}");
            text = if text.is_empty() {
                part
            } else {
                format!("{text} ({part})")
            };
        }
        text
    }

    /// The chart's title: `title`, then its [`subtitle`](Self::subtitle) on a line of its
    /// own where there is one.
    pub fn title(&self, axes: &[SweepAxis], title: &str) -> String {
        let sub = self.subtitle(axes);
        if sub.is_empty() {
            title.to_string()
        } else {
            format!("{title}\n{sub}")
        }
    }

    /// The chart's file stem: `base` + variant suffix, then `_` + one [`file_slug`] per
    /// fixed value (`heatmap_a_wins_b-leader-3`) and the part (`_part-2`).
    pub fn stem(&self, axes: &[SweepAxis], base: &str) -> String {
        let mut stem = base.to_string();
        for (i, v) in &self.fixed {
            stem.push('_');
            stem.push_str(&file_slug(&format!("{} {v}", axes[*i].parameter)));
        }
        if let Some((k, _)) = self.part {
            stem.push_str(&format!("_part-{k}"));
        }
        stem
    }
}

/// The chart files a chart drawing the axes `drawn` takes for a sweep over `axes`: the
/// first axis not drawn becomes panels of small multiples (up to [`MAX_PANELS`] an
/// image), every further axis one file per value — so every grid point appears in one
/// panel of one file, and each file names the slice it holds fixed.
pub(crate) fn pages(axes: &[SweepAxis], drawn: &[usize]) -> Vec<Page> {
    let rest: Vec<usize> = (0..axes.len()).filter(|i| !drawn.contains(i)).collect();
    let Some((&panel_axis, file_axes)) = rest.split_first() else {
        return vec![Page {
            fixed: Vec::new(),
            panel_axis: None,
            panels: Vec::new(),
            part: None,
        }];
    };
    let mut fixed: Vec<Vec<(usize, AxisValue)>> = vec![Vec::new()];
    for &axis in file_axes {
        fixed = fixed
            .into_iter()
            .flat_map(|f| {
                axes[axis].values.iter().map(move |v| {
                    let mut f = f.clone();
                    f.push((axis, v.clone()));
                    f
                })
            })
            .collect();
    }
    let values = &axes[panel_axis].values;
    let parts = values.len().div_ceil(MAX_PANELS);
    fixed
        .into_iter()
        .flat_map(|f| {
            values
                .chunks(MAX_PANELS)
                .enumerate()
                .map(move |(k, chunk)| Page {
                    fixed: f.clone(),
                    panel_axis: Some(panel_axis),
                    panels: chunk.to_vec(),
                    part: (parts > 1).then_some((k + 1, parts)),
                })
        })
        .collect()
}

/// Draws one chart per [`pages`] page of the axes `drawn`: `panel(slice)` makes the panel
/// of a slice; the file is `<base><suffix>[_<fixed slice>]`, its title `title` with the
/// slice it holds fixed under it, recorded in `charts` as a chart of `variant`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn draw_pages(
    axes: &[SweepAxis],
    drawn: &[usize],
    charts: &Charts,
    variant: Option<&str>,
    base: &str,
    title: &str,
    panel: &dyn Fn(&Slice) -> crate::chart::Panel,
) -> Result<(), ReportError> {
    for page in pages(axes, drawn) {
        let panels: Vec<(String, crate::chart::Panel)> = page
            .panel_slices()
            .iter()
            .map(|slice| (page.panel_title(axes, slice), panel(slice)))
            .collect();
        crate::chart::small_multiples(
            &charts.path(&page.stem(axes, base), variant),
            &page.title(axes, title),
            &panels,
        )?;
    }
    Ok(())
}

/// "b.leader = 3, a.morale = 2": the values a slice holds fixed.
pub(crate) fn slice_label(axes: &[SweepAxis], fixed: &[(usize, AxisValue)]) -> String {
    fixed
        .iter()
        .map(|(i, v)| format!("{} = {v}", axes[*i].parameter))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether a point's coordinates lie in a slice.
pub(crate) fn in_slice(coordinates: &[AxisValue], slice: &[(usize, AxisValue)]) -> bool {
    slice.iter().all(|(i, v)| coordinates.get(*i) == Some(v))
}

/// The value a chart holds an axis at when it is not drawn: the value nearest zero for
/// numbers (no modifier), else the first.
pub fn fixed_value(axis: &SweepAxis) -> &AxisValue {
    axis.values
        .iter()
        .min_by_key(|v| match v {
            AxisValue::Int(x) => x.unsigned_abs(),
            _ => 0,
        })
        .expect("axes are never empty")
}

/// A chart title with, on a subtitle line, what a [`slice_points`] slice holds every axis
/// not in `free` at ("b.leader = 0, a.morale = 2"); the title alone when that is nothing.
pub(crate) fn held_title(axes: &[SweepAxis], free: &[usize], title: &str) -> String {
    let held: Vec<(usize, AxisValue)> = (0..axes.len())
        .filter(|i| !free.contains(i))
        .map(|i| (i, fixed_value(&axes[i]).clone()))
        .collect();
    if held.is_empty() {
        title.to_string()
    } else {
        format!("{title}\n{}", slice_label(axes, &held))
    }
}

/// Indices of the points `(variant, coordinates)` of one variant on the axes `free`, every
/// other axis at its [`fixed_value`]: the slice a chart draws.
pub fn slice_points<'a>(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(parameter: &str, values: &[i64]) -> SweepAxis {
        SweepAxis {
            parameter: parameter.to_string(),
            values: values.iter().map(|&v| AxisValue::Int(v)).collect(),
        }
    }

    #[test]
    fn side_names_replace_the_words_a_and_b_alone() {
        let names = ["French".to_string(), "Austrians".to_string()];
        assert_eq!(with_side_names("A wins", &names), "French wins");
        assert_eq!(
            with_side_names("P(B destroyed)", &names),
            "P(Austrians destroyed)"
        );
        assert_eq!(
            with_side_names("SP lost by A, a.leader B-side AB", &names),
            "SP lost by French, a.leader Austrians-side AB"
        );
        let plain = ["A".to_string(), "B".to_string()];
        assert_eq!(with_side_names("A wins", &plain), "A wins");
    }

    #[test]
    fn file_slugs_are_short_and_readable() {
        assert_eq!(file_slug("+1 argument"), "plus1-argument");
        assert_eq!(file_slug("a.leader 3"), "a-leader-3");
        assert_eq!(file_slug("drm -2"), "drm-minus2");
        assert_eq!(file_slug("odds 3:2"), "odds-3-2");
        assert_eq!(file_slug("small stacks roll"), "small-stacks-roll");
        assert_eq!(file_slug("--x--"), "x");
    }

    #[test]
    fn pages_cover_every_point_once() {
        let axes = vec![
            axis("odds", &[1, 2]),
            axis("drm", &[0, 1]),
            axis("a.leader", &[1, 2, 3]),
            axis("b.morale", &[2, 3]),
        ];
        // Bars over odds: panels over drm, one file per a.leader × b.morale.
        let pages = pages(&axes, &[0]);
        assert_eq!(pages.len(), 6);
        assert_eq!(pages[0].panel_axis, Some(1));
        assert_eq!(
            pages[0].stem(&axes, "outcomes"),
            "outcomes_a-leader-1_b-morale-2"
        );
        assert_eq!(
            pages[0].title(&axes, "Outcomes"),
            "Outcomes\na.leader = 1, b.morale = 2"
        );
        let stems: std::collections::BTreeSet<String> =
            pages.iter().map(|p| p.stem(&axes, "outcomes")).collect();
        assert_eq!(stems.len(), 6);
        // A heatmap over odds × drm: panels over a.leader, files per b.morale.
        let pages = super::pages(&axes, &[0, 1]);
        assert_eq!(pages.len(), 2);
        assert_eq!(pages[1].panel_slices().len(), 3);
        assert_eq!(
            pages[1].panel_title(&axes, &pages[1].panel_slices()[2]),
            "a.leader = 3"
        );
        // Nothing to slice: one page, no suffix.
        let pages = super::pages(&axes[..2], &[0, 1]);
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].stem(&axes, "heat"), "heat");
        // More panels than fit: parts.
        let many = vec![axis("x", &[0]), axis("y", &(0..30).collect::<Vec<_>>())];
        let pages = super::pages(&many, &[0]);
        assert_eq!(pages.len(), 3);
        assert_eq!(pages[2].stem(&many, "o"), "o_part-3");
        assert_eq!(pages[2].panels.len(), 6);
    }
}
