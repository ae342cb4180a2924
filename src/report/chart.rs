//! Charts as PNG and SVG, drawn from aggregated frames only (never per-trial
//! data), with a bundled font so output is identical on any machine.
//!
//! Every public function writes both `<stem>.png` and `<stem>.svg`. The two
//! files come from the same generic drawing code (one `draw` over any plotters
//! [`DrawingBackend`]), so the formats cannot drift apart. Text is laid out with
//! the DejaVu Sans font compiled into the binary and registered once in
//! plotters' `ab_glyph` font table under the family name `"sans-serif"`; no
//! system font lookup ever happens. (An SVG viewer renders the `<text>`
//! elements with its own sans-serif font, but every position and size was
//! computed from the DejaVu metrics.)
//!
//! The inputs are small, already-aggregated tables (odds per column, outcome
//! distributions), so no decimation is done here. Inputs are handled
//! defensively: NaN and infinite values count as 0, negative bar heights and
//! probabilities are drawn as 0, empty inputs give a valid chart with a
//! "no data" note, and nothing here panics on odd input.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Error raised when a chart cannot be drawn or written.
#[derive(Debug, thiserror::Error)]
#[error("could not draw chart {path}: {message}")]
pub struct ChartError {
    /// The file that could not be produced.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

impl ChartError {
    fn new(path: &Path, message: impl ToString) -> Self {
        Self {
            path: path.display().to_string(),
            message: message.to_string(),
        }
    }
}

/// One group of bars on the x axis (e.g. one odds column), one value per series.
#[derive(Debug, Clone, PartialEq)]
pub struct BarGroup {
    /// Category label shown under the group.
    pub label: String,
    /// One value per series, in the order of the `series` labels.
    pub values: Vec<f64>,
}

/// Grouped vertical bars: x = groups, one coloured bar per series in each
/// group, legend with series labels. The y axis runs from 0 to a little above
/// the largest value (probabilities, so the y label is given by the caller).
///
/// Writes `<stem>.png` and `<stem>.svg`.
pub fn grouped_bars(
    stem: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[String],
    groups: &[BarGroup],
) -> Result<(), ChartError> {
    render(
        stem,
        &GroupedBars {
            title,
            x_label,
            y_label,
            series,
            groups,
        },
    )
}

/// Heatmap: `values[y][x]` in `0..=1`, cells coloured on a viridis-like ramp,
/// each cell annotated with the value as a percentage with one decimal
/// (`"37.5%"`) in a text colour readable on the cell. Tick labels come from
/// `x_ticks` / `y_ticks` (categorical, one per cell); row `values[0]` /
/// `y_ticks[0]` is drawn at the top, like a table. A colour scale is drawn on
/// the right.
///
/// Writes `<stem>.png` and `<stem>.svg`.
pub fn heatmap(
    stem: &Path,
    title: &str,
    x_label: &str,
    x_ticks: &[String],
    y_label: &str,
    y_ticks: &[String],
    values: &[Vec<f64>],
) -> Result<(), ChartError> {
    let labels = (title, x_label, x_ticks, y_label, y_ticks);
    heat(stem, labels, values, Scale::Probability)
}

/// Heatmap of differences of probabilities (one arm minus another): a diverging scale
/// centred on 0 and symmetric about it, cells labelled in signed percentage points.
///
/// Writes `<stem>.png` and `<stem>.svg`.
pub fn heatmap_difference(
    stem: &Path,
    title: &str,
    x_label: &str,
    x_ticks: &[String],
    y_label: &str,
    y_ticks: &[String],
    values: &[Vec<f64>],
) -> Result<(), ChartError> {
    let m = largest(values, f64::abs);
    let labels = (title, x_label, x_ticks, y_label, y_ticks);
    heat(
        stem,
        labels,
        values,
        Scale::Difference(if m > 0.0 { m } else { 0.01 }),
    )
}

/// Heatmap of non-negative quantities that are not probabilities (e.g. expected wounds):
/// colours run from 0 to the largest finite value, cells are annotated with two decimals
/// and the colour scale is labelled in the values' own units.
///
/// Writes `<stem>.png` and `<stem>.svg`.
pub fn heatmap_scaled(
    stem: &Path,
    title: &str,
    x_label: &str,
    x_ticks: &[String],
    y_label: &str,
    y_ticks: &[String],
    values: &[Vec<f64>],
) -> Result<(), ChartError> {
    let max = largest(values, |v| v);
    let labels = (title, x_label, x_ticks, y_label, y_ticks);
    heat(
        stem,
        labels,
        values,
        Scale::UpTo(if max > 0.0 { max } else { 1.0 }),
    )
}

/// The largest `f(v)` over the finite values (0 when there are none).
fn largest(values: &[Vec<f64>], f: impl Fn(f64) -> f64) -> f64 {
    values
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(f(v)))
}

/// A heatmap's title, x label, x ticks, y label and y ticks.
type HeatLabels<'a> = (&'a str, &'a str, &'a [String], &'a str, &'a [String]);

fn heat(
    stem: &Path,
    (title, x_label, x_ticks, y_label, y_ticks): HeatLabels,
    values: &[Vec<f64>],
    scale: Scale,
) -> Result<(), ChartError> {
    render(
        stem,
        &Heatmap {
            title,
            x_label,
            x_ticks,
            y_label,
            y_ticks,
            values,
            scale,
        },
    )
}

/// Discrete distributions as lines with markers: each series is
/// `(label, points (x, probability))`; legend; x is integer-valued (ticks are
/// placed on integers only). Points are sorted by x before drawing; points
/// with a non-finite x (or |x| > 2^53) are dropped; y values are drawn as 0
/// when NaN, infinite or negative. Series with more than 120 points are drawn
/// without markers.
///
/// Writes `<stem>.png` and `<stem>.svg`.
pub fn distributions(
    stem: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), ChartError> {
    render(
        stem,
        &Distributions {
            title,
            x_label,
            y_label,
            series,
        },
    )
}

/// One panel of [`small_multiples`]: a chart without its own file.
#[derive(Debug, Clone, PartialEq)]
pub enum Panel {
    /// [`grouped_bars`]: `series` labels, one value per series in each group.
    Bars {
        x_label: String,
        y_label: String,
        series: Vec<String>,
        groups: Vec<BarGroup>,
    },
    /// [`heatmap`] of probabilities, `values[y][x]`.
    Heat {
        x_label: String,
        x_ticks: Vec<String>,
        y_label: String,
        y_ticks: Vec<String>,
        values: Vec<Vec<f64>>,
    },
    /// [`distributions`]: lines with markers.
    Lines {
        x_label: String,
        y_label: String,
        series: Vec<(String, Vec<(f64, f64)>)>,
    },
}

impl Panel {
    /// The panel with only the series in `keep` (bars and lines).
    fn keeping(&self, keep: &[bool]) -> Panel {
        match self {
            Panel::Bars {
                x_label,
                y_label,
                series,
                groups,
            } => Panel::Bars {
                x_label: x_label.clone(),
                y_label: y_label.clone(),
                series: kept(series, keep),
                groups: groups
                    .iter()
                    .map(|g| BarGroup {
                        label: g.label.clone(),
                        values: kept(&g.values, keep),
                    })
                    .collect(),
            },
            Panel::Lines {
                x_label,
                y_label,
                series,
            } => Panel::Lines {
                x_label: x_label.clone(),
                y_label: y_label.clone(),
                series: kept(series, keep),
            },
            heat => heat.clone(),
        }
    }

    /// Whether series `i` is non-zero anywhere in the panel.
    fn occurs(&self, i: usize) -> bool {
        match self {
            Panel::Bars { groups, .. } => groups
                .iter()
                .any(|g| g.values.get(i).is_some_and(|&v| clean(v) > 0.0)),
            // A line at 0 still says something (an expectation of 0); only a series
            // without points is left out.
            Panel::Lines { series, .. } => series.get(i).is_some_and(|(_, pts)| !pts.is_empty()),
            Panel::Heat { .. } => true,
        }
    }

    fn series_count(&self) -> usize {
        match self {
            Panel::Bars { series, groups, .. } => groups
                .iter()
                .map(|g| g.values.len())
                .max()
                .unwrap_or(0)
                .max(series.len()),
            Panel::Lines { series, .. } => series.len(),
            Panel::Heat { .. } => 0,
        }
    }

    fn draw_titled<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult<(), DB> {
        match self {
            Panel::Bars {
                x_label,
                y_label,
                series,
                groups,
            } => GroupedBars {
                title,
                x_label,
                y_label,
                series,
                groups,
            }
            .draw(area),
            Panel::Heat {
                x_label,
                x_ticks,
                y_label,
                y_ticks,
                values,
            } => Heatmap {
                title,
                x_label,
                x_ticks,
                y_label,
                y_ticks,
                values,
                scale: Scale::Probability,
            }
            .draw(area),
            Panel::Lines {
                x_label,
                y_label,
                series,
            } => Distributions {
                title,
                x_label,
                y_label,
                series,
            }
            .draw(area),
        }
    }
}

fn kept<T: Clone>(items: &[T], keep: &[bool]) -> Vec<T> {
    items
        .iter()
        .zip(keep)
        .filter(|(_, &k)| k)
        .map(|(t, _)| t.clone())
        .collect()
}

/// Most panels side by side in one image of small multiples.
const MAX_PANEL_COLUMNS: usize = 2;

/// Size of one panel of a chart of several.
const PANEL_SIZE: (u32, u32) = (720, 480);
/// Room above the panels for the title and its subtitle lines.
const PANELS_TITLE_H: u32 = 90;

/// Small multiples: one image of `panels` (each `(subtitle, panel)`, e.g. `("a.leader =
/// 2", …)`) laid out in a grid under one `title`, which may carry subtitle lines after a
/// `'\n'` (the slice every panel holds fixed). A single panel is drawn as a chart of its
/// own with its subtitle under the title. Bar series that are zero in every panel (an
/// outcome that never occurs in this chart) and line series without points are left out
/// of every panel and its legend, so the colours of the others stay the same from panel
/// to panel. Lines of a title too long
/// for the image wrap.
///
/// Writes `<stem>.png` and `<stem>.svg`.
pub fn small_multiples(
    stem: &Path,
    title: &str,
    panels: &[(String, Panel)],
) -> Result<(), ChartError> {
    let n = panels
        .iter()
        .map(|(_, p)| p.series_count())
        .max()
        .unwrap_or(0);
    let keep: Vec<bool> = (0..n)
        .map(|i| panels.iter().any(|(_, p)| p.occurs(i)))
        .collect();
    let panels: Vec<(String, Panel)> = panels
        .iter()
        .map(|(t, p)| (t.clone(), p.keeping(&keep)))
        .collect();
    if panels.len() <= 1 {
        let single = SinglePanel {
            title: match panels.first() {
                Some((sub, _)) if !sub.is_empty() => format!("{title}\n{sub}"),
                _ => title.to_string(),
            },
            panel: panels.first().map(|(_, p)| p),
        };
        return render(stem, &single);
    }
    // Two panels a row at most: an image of many panels is shown at the page's width,
    // where four 720-px panels a row would each shrink to a quarter and be unreadable.
    let cols = MAX_PANEL_COLUMNS;
    let rows = panels.len().div_ceil(cols);
    let size = (
        PANEL_SIZE.0 * cols as u32,
        PANEL_SIZE.1 * rows as u32 + PANELS_TITLE_H,
    );
    render_sized(
        stem,
        &Multiples {
            title,
            panels: &panels,
            grid: (rows, cols),
        },
        size,
    )
}

struct SinglePanel<'a> {
    title: String,
    panel: Option<&'a Panel>,
}

impl Chart for SinglePanel<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<(), DB> {
        match self.panel {
            Some(panel) => panel.draw_titled(root, &self.title),
            None => GroupedBars {
                title: &self.title,
                x_label: "",
                y_label: "",
                series: &[],
                groups: &[],
            }
            .draw(root),
        }
    }
}

struct Multiples<'a> {
    title: &'a str,
    panels: &'a [(String, Panel)],
    grid: (usize, usize),
}

impl Chart for Multiples<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<(), DB> {
        root.fill(&WHITE)?;
        let (_, h) = root.dim_in_pixel();
        let (top, body) =
            root.split_vertically(h.saturating_sub(PANEL_SIZE.1 * self.grid.0 as u32));
        titled(&top, self.title)?;
        let areas = body.split_evenly(self.grid);
        for ((subtitle, panel), area) in self.panels.iter().zip(&areas) {
            panel.draw_titled(area, subtitle)?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Shared machinery
// ---------------------------------------------------------------------------

const SIZE: (u32, u32) = (900, 600);
const FONT_FAMILY: &str = "sans-serif";
static FONT_DATA: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

const TITLE_SIZE: f64 = 26.0;
const DESC_SIZE: f64 = 19.0;
const SUBTITLE_SIZE: f64 = 19.0;
const LABEL_SIZE: f64 = 16.0;
const SMALL_LABEL_SIZE: f64 = 11.0;
const LEGEND_SIZE: f64 = 16.0;
const NOTE_SIZE: f64 = 20.0;

const TEXT: RGBColor = RGBColor(0x22, 0x22, 0x22);
const MUTED: RGBColor = RGBColor(0x88, 0x88, 0x88);
const GRID_BOLD: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
const AXIS: RGBColor = RGBColor(0x55, 0x55, 0x55);
const CELL_BLACK: RGBColor = RGBColor(0x00, 0x00, 0x00);
const CELL_WHITE: RGBColor = RGBColor(0xff, 0xff, 0xff);

/// Tableau 10: distinguishable, print-friendly, cycled for more series.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];

/// Anchor points of the viridis colour map, evenly spaced on 0..=1.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
];

type Area<DB> = DrawingArea<DB, Shift>;
type DrawResult<T, DB> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A chart that can be drawn on any backend, so PNG and SVG share one code path.
trait Chart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<(), DB>;
}

/// Register the bundled font exactly once for the whole process.
fn ensure_font() -> Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| register_font(FONT_FAMILY, FontStyle::Normal, FONT_DATA).is_ok());
    if ok {
        Ok(())
    } else {
        Err("the bundled DejaVu Sans font could not be parsed".to_string())
    }
}

/// `stem` + `.ext`, keeping any dots already in the file name.
fn with_suffix(stem: &Path, ext: &str) -> PathBuf {
    let mut name = stem.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

fn render<C: Chart>(stem: &Path, chart: &C) -> Result<(), ChartError> {
    render_sized(stem, chart, SIZE)
}

fn render_sized<C: Chart>(stem: &Path, chart: &C, size: (u32, u32)) -> Result<(), ChartError> {
    let png = with_suffix(stem, "png");
    let svg = with_suffix(stem, "svg");
    // A report of many charts stops between them when asked to (the run then ends as
    // interrupted and the staging folder is removed).
    if crate::interrupt::requested() {
        return Err(ChartError::new(&png, "stopped before this chart was drawn"));
    }
    ensure_font().map_err(|m| ChartError::new(&png, m))?;
    if let Some(dir) = stem.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| ChartError::new(&png, e))?;
    }

    // PNG: the bitmap backend writes the file itself in `present`. Should drawing
    // fail, dropping the backend would still save the partial image, so remove it.
    let root = BitMapBackend::new(&png, size).into_drawing_area();
    let result = chart.draw(&root).and_then(|()| root.present());
    drop(root);
    if let Err(e) = result {
        let _ = std::fs::remove_file(&png);
        return Err(ChartError::new(&png, e));
    }

    // SVG: draw into a string and write it ourselves, so I/O errors surface.
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        chart
            .draw(&root)
            .and_then(|()| root.present())
            .map_err(|e| ChartError::new(&svg, e))?;
    }
    std::fs::write(&svg, text).map_err(|e| ChartError::new(&svg, e))
}

/// NaN and infinities count as 0.
fn clean(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

fn style(size: f64, color: &RGBColor) -> TextStyle<'_> {
    TextStyle::from((FONT_FAMILY, size).into_font()).color(color)
}

fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
) -> DrawResult<u32, DB> {
    Ok(area.estimate_text_size(text, style)?.0)
}

/// `text`, shortened with an ellipsis if needed so it is at most `max_w` pixels wide.
fn fit_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    max_w: u32,
) -> DrawResult<String, DB> {
    if text_width(area, text, style)? <= max_w {
        return Ok(text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    let candidate = |n: usize| {
        let mut s: String = chars[..n].iter().collect::<String>().trim_end().to_string();
        s.push('…');
        s
    };
    // Largest prefix that fits, by binary search (widths grow with the prefix).
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if text_width(area, &candidate(mid), style)? <= max_w {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 && text_width(area, "…", style)? > max_w {
        return Ok(String::new());
    }
    Ok(candidate(lo))
}

/// `text` broken at spaces into lines at most `max_w` pixels wide; a single word wider
/// than that is shortened with an ellipsis.
fn wrap_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    max_w: u32,
) -> DrawResult<Vec<String>, DB> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if line.is_empty() || text_width(area, &candidate, style)? <= max_w {
            line = candidate;
        } else {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
        .iter()
        .map(|l| fit_text(area, l, style, max_w))
        .collect()
}

/// Most lines a title and its subtitle take together; the last one shown is shortened
/// with an ellipsis only beyond that.
const MAX_TITLE_LINES: usize = 4;

/// Draw the title (if any) and return the area below it. The title's first line (up to
/// a `'\n'`) is the title proper; each further line is a subtitle in a smaller font (the
/// slice a chart holds fixed, say). Lines too long for the image wrap at spaces rather
/// than being cut.
fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> DrawResult<DrawingArea<DB, Shift>, DB> {
    let (w, _) = root.dim_in_pixel();
    let max_w = w.saturating_sub(40);
    let mut lines: Vec<(String, f64)> = Vec::new();
    for (k, part) in title.trim().split('\n').enumerate() {
        let size = if k == 0 { TITLE_SIZE } else { SUBTITLE_SIZE };
        for line in wrap_text(root, part.trim(), &style(size, &TEXT), max_w)? {
            lines.push((line, size));
        }
    }
    if lines.len() > MAX_TITLE_LINES {
        let rest: Vec<String> = lines[MAX_TITLE_LINES - 1..]
            .iter()
            .map(|(l, _)| l.clone())
            .collect();
        let size = lines[MAX_TITLE_LINES - 1].1;
        let last = fit_text(root, &rest.join(" "), &style(size, &TEXT), max_w)?;
        lines.truncate(MAX_TITLE_LINES - 1);
        lines.push((last, size));
    }
    if lines.is_empty() {
        return Ok(root.margin(10, 0, 0, 0));
    }
    let mut y = 8.0;
    for (line, size) in &lines {
        let st = style(*size, &TEXT).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw_text(line, &st, (w as i32 / 2, y as i32))?;
        y += size * 1.25;
    }
    Ok(root.margin(y as i32 + 8, 0, 0, 0))
}

/// Upper end of a y axis that starts at 0.
fn y_top(max: f64) -> f64 {
    if max > 0.0 && max.is_finite() {
        (max * 1.05).min(f64::MAX)
    } else {
        1.0
    }
}

/// Labels for `n` categorical slots of `slot_w` pixels each, and the font size
/// to draw them with. Shrinks the font first; if the labels still do not fit,
/// shortens them with an ellipsis; if the slots are too narrow even for that,
/// labels only every k-th slot (the others get an empty label).
fn category_labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    labels: &[String],
    slot_w: f64,
) -> DrawResult<(Vec<String>, f64), DB> {
    let room = |slots: f64| (slots * slot_w - 6.0).max(0.0) as u32;
    let mut widest = 0;
    for size in [LABEL_SIZE, 14.0, 12.0, SMALL_LABEL_SIZE] {
        let st = style(size, &TEXT);
        widest = 0;
        for l in labels {
            widest = widest.max(text_width(area, l, &st)?);
        }
        if widest <= room(1.0) {
            return Ok((labels.to_vec(), size));
        }
    }
    let st = style(SMALL_LABEL_SIZE, &TEXT);
    // Keep at least about four characters per label, else thin them out.
    let min_useful = text_width(area, "Abc…", &st)?;
    let every = if room(1.0) >= min_useful {
        1
    } else {
        let needed = f64::from(widest.min(min_useful.max(widest / 2))) + 6.0;
        ((needed / slot_w.max(1.0)).ceil() as usize).clamp(1, labels.len().max(1))
    };
    let mut out = Vec::with_capacity(labels.len());
    for (i, l) in labels.iter().enumerate() {
        if i % every == 0 {
            out.push(fit_text(area, l, &st, room(every as f64))?);
        } else {
            out.push(String::new());
        }
    }
    Ok((out, SMALL_LABEL_SIZE))
}

/// A linear f64 axis whose ticks sit exactly at the given positions.
///
/// plotters' own `with_key_points` wrapper cannot be used on an f64 axis with a
/// custom label formatter: it inherits `RangedCoordf64`'s `NoDefaultFormatting`,
/// so `configure_mesh` is unavailable. This type opts into `DefaultFormatting`;
/// every axis here sets its own formatter, so the default is never used.
struct TickAxis {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl TickAxis {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Self {
            inner: (lo..hi).into(),
            ticks,
        }
    }

    /// `n` categorical slots on `0..n`, ticks at the slot centres.
    fn slots(n: usize) -> Self {
        Self::new(
            0.0,
            n.max(1) as f64,
            (0..n).map(|i| i as f64 + 0.5).collect(),
        )
    }
}

impl Ranged for TickAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Only bold ticks: no light grid lines between categories.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// Numeric tick label: up to three decimals, trailing zeros removed.
fn number_label(v: &f64) -> String {
    let s = format!("{:.3}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Category label for a key point placed at the centre of slot `i` (i + 0.5).
fn slot_label(labels: &[String], v: f64) -> String {
    let i = v.floor();
    if i >= 0.0 && (i as usize) < labels.len() {
        labels[i as usize].clone()
    } else {
        String::new()
    }
}

fn series_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Marker shapes, cycled once the colours repeat so series stay distinguishable.
fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    index: usize,
) -> DrawResult<(), DB> {
    let fill = series_color(index).filled();
    match (index / PALETTE.len()) % 3 {
        0 => area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), 4, fill))),
        1 => area.draw(&(EmptyElement::at(at) + TriangleMarker::new((0, 0), 6, fill))),
        _ => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], fill))),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Swatch {
    Box,
    LineMarker,
}

const LEGEND_ROW: i32 = 26;
const LEGEND_MAX_FRACTION: f64 = 0.3;

/// Split `body` into the plot area and a legend column sized for `labels`.
fn split_for_legend<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    labels: &[String],
) -> DrawResult<(Area<DB>, Option<Area<DB>>), DB> {
    if labels.is_empty() {
        return Ok((body.clone(), None));
    }
    let (w, _) = body.dim_in_pixel();
    let st = style(LEGEND_SIZE, &TEXT);
    let mut widest = 0;
    for l in labels {
        widest = widest.max(text_width(body, l, &st)?);
    }
    let max_w = (f64::from(w) * LEGEND_MAX_FRACTION) as u32;
    let legend_w = (widest + 56).clamp(90, max_w.max(90));
    let (plot, legend) = body.split_horizontally(w.saturating_sub(legend_w));
    Ok((plot, Some(legend)))
}

/// Vertical legend starting at pixel row `top` of `area`.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    labels: &[String],
    swatch: Swatch,
    top: i32,
) -> DrawResult<(), DB> {
    let (w, h) = area.dim_in_pixel();
    let st = style(LEGEND_SIZE, &TEXT).pos(Pos::new(HPos::Left, VPos::Center));
    let text_x = 40;
    let max_text = w.saturating_sub(text_x as u32 + 8);
    let rows = ((h as i32 - top - 10) / LEGEND_ROW).max(1) as usize;
    let shown = if labels.len() > rows {
        rows.saturating_sub(1)
    } else {
        labels.len()
    };
    for (i, label) in labels.iter().take(shown).enumerate() {
        let y = top + LEGEND_ROW * i as i32 + LEGEND_ROW / 2;
        let color = series_color(i);
        match swatch {
            Swatch::Box => {
                area.draw(&Rectangle::new([(10, y - 7), (28, y + 7)], color.filled()))?;
            }
            Swatch::LineMarker => {
                area.draw(&PathElement::new(
                    vec![(6, y), (32, y)],
                    color.stroke_width(2),
                ))?;
                draw_marker(area, (19, y), i)?;
            }
        }
        let text = fit_text(area, label, &st, max_text)?;
        area.draw_text(&text, &st, (text_x, y))?;
    }
    if shown < labels.len() {
        let y = top + LEGEND_ROW * shown as i32 + LEGEND_ROW / 2;
        let more = format!("+{} more", labels.len() - shown);
        area.draw_text(&more, &style(LEGEND_SIZE, &MUTED).pos(st.pos), (text_x, y))?;
    }
    Ok(())
}

/// "no data" in the middle of an empty plot.
fn draw_no_data<DB: DrawingBackend, CT: CoordTranslate>(
    plot: &DrawingArea<DB, CT>,
) -> DrawResult<(), DB> {
    let area = plot.strip_coord_spec();
    let (w, h) = area.dim_in_pixel();
    let st = style(NOTE_SIZE, &MUTED).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw_text("no data", &st, (w as i32 / 2, h as i32 / 2))
}

// ---------------------------------------------------------------------------
// Grouped bars
// ---------------------------------------------------------------------------

struct GroupedBars<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    series: &'a [String],
    groups: &'a [BarGroup],
}

impl Chart for GroupedBars<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<(), DB> {
        root.fill(&WHITE)?;
        let body = titled(root, self.title)?;
        let (plot_area, legend_area) = split_for_legend(&body, self.series)?;

        let n_groups = self.groups.len();
        let n_bars = self
            .groups
            .iter()
            .map(|g| g.values.len())
            .max()
            .unwrap_or(0)
            .max(self.series.len());
        let max = self
            .groups
            .iter()
            .flat_map(|g| g.values.iter())
            .map(|&v| clean(v))
            .fold(0.0, f64::max);

        let x_range = TickAxis::slots(n_groups);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .margin_right(if legend_area.is_some() { 4 } else { 24 })
            .x_label_area_size(60)
            .y_label_area_size(78)
            .build_cartesian_2d(x_range, 0.0..y_top(max))?;

        let (plot_w, _) = chart.plotting_area().dim_in_pixel();
        let slot_w = f64::from(plot_w) / n_groups.max(1) as f64;
        let names: Vec<String> = self.groups.iter().map(|g| g.label.clone()).collect();
        let (labels, x_size) = category_labels(root, &names, slot_w)?;
        let x_fmt = |v: &f64| slot_label(&labels, *v);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_max_light_lines(0)
            .bold_line_style(GRID_BOLD)
            .axis_style(AXIS)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&number_label)
            .x_label_style(style(x_size, &TEXT))
            .y_label_style(style(LABEL_SIZE, &TEXT))
            .axis_desc_style(style(DESC_SIZE, &TEXT))
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .draw()?;

        if n_bars > 0 {
            let band = 0.8 / n_bars as f64;
            let gap = if n_bars > 1 { band * 0.08 } else { 0.0 };
            let bars = self.groups.iter().enumerate().flat_map(|(gi, g)| {
                g.values.iter().enumerate().filter_map(move |(bi, &v)| {
                    let v = clean(v);
                    (v > 0.0).then(|| {
                        let x0 = gi as f64 + 0.1 + band * bi as f64;
                        Rectangle::new(
                            [(x0 + gap, 0.0), (x0 + band - gap, v)],
                            series_color(bi).filled(),
                        )
                    })
                })
            });
            chart.draw_series(bars)?;
        }
        if n_groups == 0 || n_bars == 0 {
            draw_no_data(chart.plotting_area())?;
        }

        if let Some(legend) = legend_area {
            draw_legend(&legend, self.series, Swatch::Box, 12)?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Tornado
// ---------------------------------------------------------------------------

/// One bar of a tornado chart: a change and what it did, with its 95% interval.
#[derive(Debug, Clone, PartialEq)]
pub struct TornadoBar {
    pub label: String,
    pub value: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// A tornado chart: one horizontal bar per change from 0 to its effect, the largest
/// effect at the top, each with its 95% interval as a whisker.
///
/// Writes `<stem>.png` and `<stem>.svg`.
pub fn tornado(
    stem: &Path,
    title: &str,
    x_label: &str,
    bars: &[TornadoBar],
) -> Result<(), ChartError> {
    let mut sorted = bars.to_vec();
    sorted.sort_by(|a, b| clean(a.value).abs().total_cmp(&clean(b.value).abs()));
    render(
        stem,
        &Tornado {
            title,
            x_label,
            bars: &sorted,
        },
    )
}

struct Tornado<'a> {
    title: &'a str,
    x_label: &'a str,
    /// Smallest effect first (drawn at the bottom).
    bars: &'a [TornadoBar],
}

impl Chart for Tornado<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<(), DB> {
        root.fill(&WHITE)?;
        let body = titled(root, self.title)?;
        let reach = self
            .bars
            .iter()
            .flat_map(|b| [b.value, b.ci_low, b.ci_high])
            .map(|v| clean(v).abs())
            .fold(0.0, f64::max);
        let reach = if reach > 0.0 { reach * 1.1 } else { 0.01 };
        let n = self.bars.len();
        let labels: Vec<String> = self.bars.iter().map(|b| b.label.clone()).collect();
        let y_fmt = |v: &f64| {
            let i = v.floor();
            if (v - i - 0.5).abs() < 1e-9 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        };
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .margin_right(24)
            .x_label_area_size(60)
            .y_label_area_size(150)
            .build_cartesian_2d(-reach..reach, 0.0..n.max(1) as f64)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n.max(1) * 2 + 1)
            .bold_line_style(GRID_BOLD)
            .axis_style(AXIS)
            .y_label_formatter(&y_fmt)
            .x_label_formatter(&number_label)
            .x_label_style(style(LABEL_SIZE, &TEXT))
            .y_label_style(style(LABEL_SIZE, &TEXT))
            .axis_desc_style(style(DESC_SIZE, &TEXT))
            .x_desc(self.x_label)
            .draw()?;
        chart.draw_series(self.bars.iter().enumerate().map(|(i, b)| {
            let y = i as f64;
            let v = clean(b.value);
            Rectangle::new(
                [(0.0_f64.min(v), y + 0.2), (0.0_f64.max(v), y + 0.8)],
                series_color(usize::from(v < 0.0)).filled(),
            )
        }))?;
        chart.draw_series(self.bars.iter().enumerate().map(|(i, b)| {
            let y = i as f64 + 0.5;
            PathElement::new(vec![(clean(b.ci_low), y), (clean(b.ci_high), y)], TEXT)
        }))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 0.0), (0.0, n.max(1) as f64)],
            TEXT,
        )))?;
        if n == 0 {
            draw_no_data(chart.plotting_area())?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Heatmap
// ---------------------------------------------------------------------------

struct Heatmap<'a> {
    title: &'a str,
    x_label: &'a str,
    x_ticks: &'a [String],
    y_label: &'a str,
    y_ticks: &'a [String],
    values: &'a [Vec<f64>],
    scale: Scale,
}

/// How a heatmap's values map to colours and labels.
#[derive(Clone, Copy)]
enum Scale {
    /// Probabilities in 0..=1, labelled as percentages.
    Probability,
    /// Values in 0..=max, coloured by `v / max`, labelled with two decimals.
    UpTo(f64),
    /// Differences of probabilities in −m..=m, the middle colour at 0, labelled in
    /// percentage points.
    Difference(f64),
}

impl Heatmap<'_> {
    /// The cell's position on the colour ramp, 0..=1.
    fn unit(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Probability => v,
            Scale::UpTo(max) => v / max,
            Scale::Difference(m) => (v + m) / (2.0 * m),
        }
    }

    fn label(&self, v: f64) -> String {
        if !v.is_finite() {
            return String::new();
        }
        match self.scale {
            Scale::Probability => percent_label(v),
            Scale::UpTo(_) => format!("{v:.2}"),
            Scale::Difference(_) => points_label(v),
        }
    }
}

/// A difference of probabilities in percentage points, signed: "+1.2", "−0.4", "0.0".
fn points_label(v: f64) -> String {
    let s = format!("{:+.1}", v * 100.0);
    match s.as_str() {
        "+0.0" | "-0.0" => "0.0".to_string(),
        _ => s.replace('-', "−"),
    }
}

const SCALE_W: u32 = 96;

/// Viridis-like colour for `v` in 0..=1 (piecewise-linear between anchors).
fn ramp(v: f64) -> RGBColor {
    let t = clean(v).clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (t.floor() as usize).min(VIRIDIS.len() - 2);
    let f = t - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Black or white, whichever contrasts more with `bg` (WCAG relative luminance).
fn readable_on(bg: RGBColor) -> &'static RGBColor {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let l = 0.2126 * lin(bg.0) + 0.7152 * lin(bg.1) + 0.0722 * lin(bg.2);
    if (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) {
        &CELL_BLACK
    } else {
        &CELL_WHITE
    }
}

fn percent_label(v: f64) -> String {
    let s = format!("{:.1}%", v * 100.0);
    if s == "-0.0%" {
        "0.0%".to_string()
    } else {
        s
    }
}

impl Chart for Heatmap<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<(), DB> {
        root.fill(&WHITE)?;
        let body = titled(root, self.title)?;
        let (body_w, _) = body.dim_in_pixel();
        let (plot_area, scale_area) = body.split_horizontally(body_w.saturating_sub(SCALE_W));

        let nx = self
            .values
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .max(self.x_ticks.len());
        let ny = self.values.len().max(self.y_ticks.len());

        // Row labels: as wide as needed, up to a quarter of the image.
        let label_style = style(LABEL_SIZE, &TEXT);
        let max_y_label = root.dim_in_pixel().0 / 4;
        let mut y_labels = Vec::with_capacity(ny);
        let mut widest = 0;
        for label in self.y_ticks {
            let fitted = fit_text(root, label, &label_style, max_y_label)?;
            widest = widest.max(text_width(root, &fitted, &label_style)?);
            y_labels.push(fitted);
        }

        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .margin_right(8)
            .x_label_area_size(60)
            .y_label_area_size(widest + 52)
            .build_cartesian_2d(TickAxis::slots(nx), TickAxis::slots(ny))?;

        let (plot_w, plot_h) = chart.plotting_area().dim_in_pixel();
        let cell_w = f64::from(plot_w) / nx.max(1) as f64;
        let cell_h = f64::from(plot_h) / ny.max(1) as f64;
        let (x_labels, x_size) = category_labels(root, self.x_ticks, cell_w)?;
        // Rows too short for a label each: label every k-th row.
        let every_row = ((LABEL_SIZE * 0.9) / cell_h.max(1.0)).ceil().max(1.0) as usize;
        for (i, label) in y_labels.iter_mut().enumerate() {
            if i % every_row != 0 {
                label.clear();
            }
        }

        // Row 0 is at the top: slot k (from the bottom) shows row ny - 1 - k.
        let row_slot = |row: usize| (ny - 1 - row) as f64;
        let x_fmt = |v: &f64| slot_label(&x_labels, *v);
        let y_fmt = |v: &f64| {
            let k = v.floor();
            if k >= 0.0 && (k as usize) < ny {
                y_labels
                    .get(ny - 1 - k as usize)
                    .cloned()
                    .unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .axis_style(AXIS)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_label_style(style(x_size, &TEXT))
            .y_label_style(label_style.clone())
            .axis_desc_style(style(DESC_SIZE, &TEXT))
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .draw()?;

        let cells: Vec<(usize, usize, f64)> = self
            .values
            .iter()
            .enumerate()
            .flat_map(|(r, row)| row.iter().enumerate().map(move |(c, &v)| (r, c, v)))
            .collect();
        // Cells without a value (NaN) are drawn at the bottom colour with no label.
        chart.draw_series(cells.iter().map(|&(r, c, v)| {
            let y = row_slot(r);
            Rectangle::new(
                [(c as f64, y), (c as f64 + 1.0, y + 1.0)],
                ramp(self.unit(clean(v))).filled(),
            )
        }))?;
        if cell_w >= 8.0 && cell_h >= 8.0 {
            // Thin white gaps between cells.
            chart.draw_series(cells.iter().map(|&(r, c, _)| {
                let y = row_slot(r);
                Rectangle::new(
                    [(c as f64, y), (c as f64 + 1.0, y + 1.0)],
                    WHITE.stroke_width(1),
                )
            }))?;
        }

        // Annotation size: as large as the cell allows, capped at 18.
        let mut size = (cell_h * 0.42).min(18.0);
        let sample_w = f64::from(text_width(root, "100.0%", &style(size, &TEXT))?);
        if sample_w > cell_w * 0.88 {
            size *= cell_w * 0.88 / sample_w;
        }
        if size >= 8.0 {
            let centre = Pos::new(HPos::Center, VPos::Center);
            chart.draw_series(cells.iter().map(|&(r, c, v)| {
                let st = style(size, readable_on(ramp(self.unit(clean(v))))).pos(centre);
                Text::new(self.label(v), (c as f64 + 0.5, row_slot(r) + 0.5), st)
            }))?;
        }
        if cells.is_empty() {
            draw_no_data(chart.plotting_area())?;
        }

        // Colour scale, aligned with the plot's top and bottom edges.
        let mut scale = ChartBuilder::on(&scale_area)
            .margin(12)
            .margin_left(6)
            .margin_right(4)
            .x_label_area_size(60)
            .right_y_label_area_size(match self.scale {
                Scale::Probability => 54,
                _ => 64,
            })
            .build_cartesian_2d(
                0.0..1.0,
                TickAxis::new(0.0, 1.0, vec![0.0, 0.25, 0.5, 0.75, 1.0]),
            )?;
        let pct_fmt = |v: &f64| match self.scale {
            Scale::Probability => format!("{:.0}%", v * 100.0),
            Scale::UpTo(max) => format!("{:.2}", v * max),
            Scale::Difference(m) => format!("{} pp", points_label((2.0 * v - 1.0) * m)),
        };
        scale
            .configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .axis_style(AXIS)
            .y_label_formatter(&pct_fmt)
            .label_style(label_style.clone())
            .draw()?;
        let steps = 100;
        scale.draw_series((0..steps).map(|i| {
            let lo = f64::from(i) / f64::from(steps);
            let hi = f64::from(i + 1) / f64::from(steps);
            Rectangle::new([(0.0, lo), (1.0, hi)], ramp((lo + hi) / 2.0).filled())
        }))?;
        scale.draw_series(std::iter::once(Rectangle::new(
            [(0.0, 0.0), (1.0, 1.0)],
            AXIS.stroke_width(1),
        )))?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Distributions
// ---------------------------------------------------------------------------

struct Distributions<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    series: &'a [(String, Vec<(f64, f64)>)],
}

/// Above this many points per series the markers are left out (they would
/// merge into a thick line anyway).
const MAX_MARKERS: usize = 120;
const MAX_X_TICKS: f64 = 15.0;
/// Points whose x is NaN or beyond ±2^53 (where f64 stops holding every
/// integer) are dropped.
const MAX_X: f64 = 9_007_199_254_740_992.0;

/// Smallest of 1, 2, 5, 10, 20, 50, ... that is at least `raw` (and at least 1).
fn integer_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 1.0 || raw.is_infinite() {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// Integer tick positions covering `lo..=hi`, at most about `MAX_X_TICKS` of them.
fn integer_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let step = integer_step((hi - lo) / MAX_X_TICKS);
    let mut ticks = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi && ticks.len() < 100 {
        ticks.push(t);
        t += step;
    }
    ticks
}

fn integer_label(v: &f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", *v as i64)
    } else {
        number_label(v)
    }
}

impl Chart for Distributions<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<(), DB> {
        root.fill(&WHITE)?;
        let body = titled(root, self.title)?;
        let labels: Vec<String> = self.series.iter().map(|(l, _)| l.clone()).collect();
        let (plot_area, legend_area) = split_for_legend(&body, &labels)?;

        let cleaned: Vec<Vec<(f64, f64)>> = self
            .series
            .iter()
            .map(|(_, pts)| {
                let mut pts: Vec<(f64, f64)> = pts
                    .iter()
                    .filter(|(x, _)| x.abs() <= MAX_X)
                    .map(|&(x, y)| (x, clean(y).max(0.0)))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                pts
            })
            .collect();
        let all = cleaned.iter().flatten();
        let x_min = all.clone().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let x_max = all.clone().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
        let y_max = all.map(|p| p.1).fold(0.0, f64::max);
        let has_data = x_min <= x_max;
        let (x_lo, x_hi, ticks) = if has_data {
            (x_min - 0.5, x_max + 0.5, integer_ticks(x_min, x_max))
        } else {
            (0.0, 1.0, Vec::new())
        };

        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .margin_right(if legend_area.is_some() { 4 } else { 24 })
            .x_label_area_size(60)
            .y_label_area_size(78)
            .build_cartesian_2d(TickAxis::new(x_lo, x_hi, ticks), 0.0..y_top(y_max))?;
        chart
            .configure_mesh()
            .y_max_light_lines(0)
            .bold_line_style(GRID_BOLD)
            .axis_style(AXIS)
            .x_label_formatter(&integer_label)
            .y_label_formatter(&number_label)
            .label_style(style(LABEL_SIZE, &TEXT))
            .axis_desc_style(style(DESC_SIZE, &TEXT))
            .x_desc(self.x_label)
            .y_desc(self.y_label)
            .draw()?;

        for (i, pts) in cleaned.iter().enumerate() {
            if pts.is_empty() {
                continue;
            }
            let color = series_color(i);
            chart.draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?;
            if pts.len() <= MAX_MARKERS {
                for &p in pts {
                    draw_marker(chart.plotting_area(), p, i)?;
                }
            }
        }
        if !has_data {
            draw_no_data(chart.plotting_area())?;
        }

        if let Some(legend) = legend_area {
            draw_legend(&legend, &labels, Swatch::LineMarker, 12)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder of this test's own, removed when the returned guard drops.
    fn out_dir(test: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("battlelab-chart-{test}-"))
            .tempdir()
            .unwrap()
    }

    fn assert_outputs(stem: &Path, needle: &str) {
        let png = std::fs::read(with_suffix(stem, "png")).expect("png written");
        assert!(png.starts_with(&[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]));
        let svg = std::fs::read_to_string(with_suffix(stem, "svg")).expect("svg written");
        assert!(svg.contains("<svg"));
        assert!(svg.contains(needle), "svg lacks {needle:?}");
    }

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn grouped_bars_writes_png_and_svg() {
        let dir = out_dir("bars");
        let stem = dir.path().join("odds.v1");
        let series = labels(&["Attacker wins", "Defender holds", "Mutual loss"]);
        let groups: Vec<BarGroup> = ["1:2", "1:1", "2:1", "3:1"]
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let a = 0.2 * i as f64 + 0.1;
                BarGroup {
                    label: l.to_string(),
                    values: vec![a, 0.9 - a, f64::NAN],
                }
            })
            .collect();
        grouped_bars(&stem, "Odds", "Odds column", "P", &series, &groups).unwrap();
        assert_outputs(&stem, "Defender holds");
        assert_outputs(&stem, "2:1");
    }

    #[test]
    fn heatmap_writes_png_and_svg() {
        let dir = out_dir("heat");
        let stem = dir.path().join("heat");
        let xs = labels(&["1:1", "2:1", "3:1"]);
        let ys = labels(&["Clear", "Woods"]);
        let values = vec![vec![0.375, 0.5, 0.9], vec![0.0, f64::NAN, 1.0]];
        heatmap(&stem, "Win odds", "Odds", &xs, "Terrain", &ys, &values).unwrap();
        assert_outputs(&stem, "Woods");
        assert_outputs(&stem, "37.5%");
    }

    #[test]
    fn distributions_writes_png_and_svg() {
        let dir = out_dir("dist");
        let stem = dir.path().join("losses");
        let series = vec![
            (
                "Attacker".to_string(),
                vec![(0.0, 0.5), (2.0, 0.2), (1.0, 0.3)],
            ),
            ("Defender".to_string(), vec![(0.0, 0.1), (1.0, f64::NAN)]),
        ];
        distributions(&stem, "Losses", "Steps lost", "P", &series).unwrap();
        assert_outputs(&stem, "Defender");
    }

    #[test]
    fn empty_and_degenerate_inputs_do_not_panic() {
        let dir = out_dir("empty");
        grouped_bars(&dir.path().join("b0"), "", "", "", &[], &[]).unwrap();
        assert_outputs(&dir.path().join("b0"), "no data");
        let zero = [BarGroup {
            label: "only".into(),
            values: vec![0.0, f64::NAN, f64::INFINITY],
        }];
        grouped_bars(
            &dir.path().join("b1"),
            "t",
            "x",
            "y",
            &labels(&["s"]),
            &zero,
        )
        .unwrap();
        assert_outputs(&dir.path().join("b1"), "only");

        heatmap(&dir.path().join("h0"), "", "", &[], "", &[], &[]).unwrap();
        assert_outputs(&dir.path().join("h0"), "no data");
        let ragged = vec![vec![], vec![f64::NAN], vec![-1.0, 2.0, 0.5]];
        heatmap(
            &dir.path().join("h1"),
            "t",
            "x",
            &labels(&["a"]),
            "y",
            &[],
            &ragged,
        )
        .unwrap();
        assert_outputs(&dir.path().join("h1"), "50.0%");

        distributions(&dir.path().join("d0"), "", "", "", &[]).unwrap();
        assert_outputs(&dir.path().join("d0"), "no data");
        let odd = vec![
            ("nan".to_string(), vec![(f64::NAN, 1.0), (3.0, f64::NAN)]),
            ("none".to_string(), vec![]),
        ];
        distributions(&dir.path().join("d1"), "t", "x", "y", &odd).unwrap();
        assert_outputs(&dir.path().join("d1"), "none");
    }

    #[test]
    fn extreme_values_do_not_panic() {
        let dir = out_dir("extreme");
        let big = [BarGroup {
            label: "big".into(),
            values: vec![f64::MAX, -f64::MAX, 1e-300],
        }];
        grouped_bars(&dir.path().join("b"), "t", "x", "y", &labels(&["s"]), &big).unwrap();
        assert_outputs(&dir.path().join("b"), "big");
        let hv = vec![vec![f64::MAX, -f64::MAX, f64::NEG_INFINITY]];
        heatmap(
            &dir.path().join("h"),
            "t",
            "x",
            &[],
            "y",
            &labels(&["row"]),
            &hv,
        )
        .unwrap();
        assert_outputs(&dir.path().join("h"), "row");
        let pts = vec![(
            "wide".to_string(),
            vec![(-f64::MAX, f64::MAX), (f64::MAX, 1.0), (0.0, 0.5)],
        )];
        distributions(&dir.path().join("d"), "t", "x", "y", &pts).unwrap();
        assert_outputs(&dir.path().join("d"), "wide");
    }

    #[test]
    fn long_titles_wrap_instead_of_being_cut() {
        let dir = out_dir("wrap");
        let title = "P(the smaller force loses the battle) with every modifier of the advanced rules in play — a variant with a long name\nb.leader = 3, a.morale = 2, terrain = woods and river crossing, weather = storm";
        let groups = [BarGroup {
            label: "1:1".into(),
            values: vec![0.5, 0.0],
        }];
        let panel = Panel::Bars {
            x_label: "odds".into(),
            y_label: "P".into(),
            series: labels(&["occurs", "never"]),
            groups: groups.to_vec(),
        };
        small_multiples(
            &dir.path().join("w"),
            title,
            &[(String::new(), panel.clone())],
        )
        .unwrap();
        let svg = std::fs::read_to_string(dir.path().join("w.svg")).unwrap();
        assert!(!svg.contains('…'), "a title was cut");
        assert!(svg.contains("long name") && svg.contains("weather = storm"));
        // An outcome that never occurs is not in the legend.
        assert!(svg.contains("occurs") && !svg.contains("never"));
        // Several panels: each titled, in one image.
        let panels = vec![
            ("drm = 0".to_string(), panel.clone()),
            ("drm = 1".to_string(), panel),
        ];
        small_multiples(&dir.path().join("m"), title, &panels).unwrap();
        assert_outputs(&dir.path().join("m"), "drm = 1");
    }

    #[test]
    fn colour_helpers() {
        assert_eq!(ramp(0.0), RGBColor(68, 1, 84));
        assert_eq!(ramp(1.0), RGBColor(253, 231, 37));
        assert_eq!(ramp(f64::NAN), ramp(0.0));
        assert_eq!(readable_on(ramp(0.0)), &CELL_WHITE);
        assert_eq!(readable_on(ramp(1.0)), &CELL_BLACK);
        assert_eq!(percent_label(0.375), "37.5%");
        assert_eq!(percent_label(-0.0), "0.0%");
        assert_eq!(integer_ticks(0.0, 4.0), vec![0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(integer_ticks(0.0, 100.0).len(), 11);
        assert_eq!(
            with_suffix(Path::new("a/b.v1"), "png"),
            Path::new("a/b.v1.png")
        );
    }
}
