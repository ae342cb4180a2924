//! `index.html`: one self-contained page per report folder, to open, share and print.
//!
//! Why this module exists: a report folder is a dozen data files, charts and a Markdown
//! file; a designer who wants to show a colleague what the dice say needs one page. The
//! page is written last, from what is already in the staging folder (the manifest,
//! `analysis.toml`, `tables.md`, every `.svg`, the file list), so it needs no knowledge of
//! any system's charts: a chart added or renamed by a system appears on the page as it
//! is. It is written through the same staging folder as every other file and listed in
//! the manifest like them.
//!
//! What the page promises:
//! - **No network, no server.** Inline CSS and inline scripts; charts are
//!   `<img src="x.svg">` links to files beside it; every link is relative; a
//!   Content-Security-Policy forbids anything else. It opens from the file system. The
//!   "try it" panel ([`crate::report::tryit`]) carries the WebAssembly core inline and
//!   runs it in a Worker made from a Blob URL, so the policy gains only
//!   `'wasm-unsafe-eval'` and `worker-src blob:`; still nothing is fetched.
//! - **It recomputes.** A run's page carries its analysis (and rules file) and a panel
//!   that changes any setting and recomputes with the CLI's own code; the edits live in
//!   the URL hash (see [`crate::report::tryit`]). Compare (one file's variants), value
//!   and equilibrium pages carry the panel for their analysis and say that their own
//!   answer is the file's as written; a compare of two files or two folders says in a
//!   comment why it has none.
//! - **Same seed, same bytes.** Nothing on it depends on the machine, the time, the
//!   thread count or where the folder is (no absolute path; `run_info.json` is linked,
//!   not read).
//! - **Phone and paper.** One column under 700 px, images scale down, wide tables scroll
//!   inside their own box so the page never does; a print stylesheet opens every
//!   collapsed section and keeps tables and figures whole.
//! - **The answer first.** Under the title and the question come the headline outcomes
//!   and the rulebook tables (`tables.md`, every section open); the contents, the
//!   expectations, the charts, the run in words (hashes included), the file list and the
//!   analysis file follow.
//! - **Long sweeps stay navigable.** Charts are grouped by the variant they show — as the
//!   system that drew them recorded it ([`crate::report::Charts`]), never guessed from a
//!   file name — in collapsible sections, with a chart-kind × variant table of links; a
//!   chart of many panels spans the page's width, and every chart opens full size on a
//!   click (a plain link to its SVG); a table of contents leads to each section.
//! - **A self-test.** Opened as `index.html#selftest` the page checks itself (every image
//!   loaded, no request outside its folder, no horizontal overflow) and writes
//!   `SELFTEST OK …` or `SELFTEST FAIL …` into the page and the console; `tests/browser.rs`
//!   runs it in headless Chromium.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use battlelab_core::markdown::cells;

use crate::engine::compare::{Arm, MetricTrack};
use crate::engine::driver::PlanResults;
use crate::engine::expect::{self, RunNames, Target};
use crate::engine::System;
use crate::report::tryit::{self, Source};
use crate::report::{ChartFile, ReportError};

/// The page's file name.
pub const INDEX: &str = "index.html";

/// One `[[expect]]` of the analysis file, as this report's own counts decide it.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    /// PASS, FAIL or UNDECIDED.
    pub status: &'static str,
    /// The line of `analysis.toml` the entry starts on.
    pub line: usize,
    /// The entry as written, on one line.
    pub written: String,
    /// The run that decided it and the value or interval there.
    pub detail: String,
}

/// Decides every `[[expect]]` of `analysis_text` on the report's own counts: exactly
/// where the run is exact, else by the Hoeffding interval of `battlelab check` at the
/// expectation's confidence, with one look at all the report's trials. (`check` takes
/// its own trials, in doubling looks, so it may decide what a small report leaves
/// undecided.) Depends only on the counts, so the same seed gives the same verdicts.
pub fn expectations<S: System>(
    system: &S,
    analysis_text: &str,
    results: &PlanResults<S>,
) -> Vec<Checked> {
    let plan = system.plan();
    let names = |run: usize| RunNames::of(system, run);
    // The file was validated when it was loaded; a failure here only means no checks.
    let Ok(parsed) = expect::parse(super::output::ANALYSIS_COPY, analysis_text, &plan, &names)
    else {
        return Vec::new();
    };
    parsed
        .iter()
        .map(|e| {
            let mut arm = |run: usize,
                           blocks: std::ops::Range<u64>,
                           with_exact: bool|
             -> Result<Arm, std::convert::Infallible> {
                Ok(totals_arm(
                    system,
                    results,
                    run,
                    !blocks.is_empty(),
                    with_exact,
                ))
            };
            let verdicts = expect::decide(e, 1, &mut arm).unwrap_or_else(|never| match never {});
            let (status, v) = expect::overall(&verdicts);
            let what = match &e.target {
                Target::Outcome(o) => format!("P({o})"),
                Target::Metric(m) => format!("mean {m}"),
            };
            let mut at: Vec<String> = Vec::new();
            if plan.variants().len() > 1 {
                at.push(format!("variant={}", plan.runs[v.run].variant));
            }
            at.extend(plan.describe(v.run).iter().map(|(a, x)| format!("{a}={x}")));
            let at = if at.is_empty() {
                "the run".to_string()
            } else {
                at.join(", ")
            };
            let of = if e.runs.len() > 1 {
                format!(" ({} runs)", e.runs.len())
            } else {
                String::new()
            };
            let detail = if v.exact {
                match &v.fraction {
                    Some(f) => format!("at {at}{of}: {what} = {f} exactly ({:.6})", v.estimate),
                    None => format!("at {at}{of}: {what} = {:.6} exactly", v.estimate),
                }
            } else {
                format!(
                    "at {at}{of}: {what} ≈ {:.4}, {:.0}% interval [{:.4}, {:.4}], {} trials",
                    v.estimate,
                    e.confidence * 100.0,
                    v.interval.0,
                    v.interval.1,
                    v.trials
                )
            };
            Checked {
                status: status.name(),
                line: e.line,
                written: e.written.clone(),
                detail,
            }
        })
        .collect()
}

/// A run of the report as one block of all its trials (`with_block`), with its exact
/// results when asked: what [`expect::decide`] reads.
fn totals_arm<S: System>(
    system: &S,
    results: &PlanResults<S>,
    run: usize,
    with_block: bool,
    with_exact: bool,
) -> Arm {
    let empty = system.empty(run);
    let names: Vec<String> = system
        .outcomes(run, &empty, None)
        .into_iter()
        .map(|o| o.name)
        .collect();
    let counts = &results.counts[run];
    let outcomes = system.outcomes(run, counts, None);
    let by_name: Vec<u64> = names
        .iter()
        .map(|n| {
            outcomes
                .iter()
                .find(|o| &o.name == n)
                .map_or(0, |o| o.count)
        })
        .collect();
    let exact = if with_exact {
        results.exact[run].as_ref()
    } else {
        None
    };
    let exact_outcomes = exact.map(|e| system.outcomes(run, &empty, Some(e)));
    let by_name_exact = |o: &[crate::engine::Outcome]| -> Vec<Option<crate::engine::Outcome>> {
        names
            .iter()
            .map(|n| o.iter().find(|o| &o.name == n).cloned())
            .collect()
    };
    let exact_named = exact_outcomes.as_deref().map(by_name_exact);
    let exact_p: Option<Vec<Option<f64>>> = exact_named
        .as_ref()
        .map(|o| o.iter().map(|o| o.as_ref().and_then(|o| o.exact)).collect());
    let fractions: Option<Vec<Option<String>>> = exact_named.as_ref().map(|o| {
        o.iter()
            .map(|o| o.as_ref().and_then(|o| o.fraction.clone()))
            .collect()
    });
    let exact_metrics = exact.map(|e| system.distributions(run, &empty, Some(e)));
    let simulated = system.distributions(run, counts, None);
    let metrics = system
        .distributions(run, &empty, None)
        .iter()
        .map(|shape| MetricTrack {
            name: shape.metric.clone(),
            range: (
                shape.first,
                shape.first + shape.counts.len().saturating_sub(1) as u64,
            ),
            blocks: if with_block {
                simulated
                    .iter()
                    .find(|d| d.metric == shape.metric)
                    .map(|d| vec![(d.sum(), d.trials())])
                    .unwrap_or_default()
            } else {
                Vec::new()
            },
            exact_mean: exact_metrics
                .as_ref()
                .and_then(|e| e.iter().find(|d| d.metric == shape.metric))
                .and_then(|d| d.exact_mean()),
        })
        .collect();
    Arm {
        outcomes: names,
        blocks: if with_block {
            vec![(results.run_trials[run], by_name)]
        } else {
            Vec::new()
        },
        exact: exact_p,
        fractions,
        metrics,
    }
}

/// Writes `index.html` into the report folder `dir` from the files already there.
/// `checks`: the analysis's expectations as decided ([`expectations`]), or `None` where
/// the report has no analysis of its own to check (a compare report). Its charts are
/// filed by their file names' variant suffixes; [`write_index_of`] takes the record.
pub fn write_index(dir: &Path, checks: Option<&[Checked]>) -> Result<(), ReportError> {
    write_index_of(dir, checks, None)
}

/// [`write_index`], with the record of which variant each chart shows (`charts`, from
/// [`crate::report::Charts`]) where the report's writer kept one.
pub fn write_index_of(
    dir: &Path,
    checks: Option<&[Checked]>,
    drawn: Option<&[ChartFile]>,
) -> Result<(), ReportError> {
    write_index_with(dir, checks, drawn, None)
}

/// [`write_index_of`], with the analysis the page's "try it" panel recomputes (`tryit`:
/// its text and the rules file it names; `None`: no panel, a comment says why).
pub fn write_index_with(
    dir: &Path,
    checks: Option<&[Checked]>,
    drawn: Option<&[ChartFile]>,
    tryit: Option<&Source>,
) -> Result<(), ReportError> {
    let read = |name: &str| fs::read_to_string(dir.join(name)).ok();
    let manifest: serde_json::Value = read(crate::output::MANIFEST)
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    let mut files: Vec<String> = Vec::new();
    let listing = fs::read_dir(dir).map_err(|source| ReportError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    for entry in listing.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // Hidden files (the staging mark) and the page itself are not the report's data.
        if !name.starts_with('.') && name != INDEX && entry.path().is_file() {
            files.push(name);
        }
    }
    files.sort();
    // How wide each chart is drawn: a chart of many panels gets the page's whole width.
    let widths: Vec<(String, u32)> = files
        .iter()
        .filter_map(|f| f.strip_suffix(".svg"))
        .filter_map(|stem| {
            svg_width(&dir.join(format!("{stem}.svg"))).map(|w| (stem.to_string(), w))
        })
        .collect();
    let page = Page {
        manifest: &manifest,
        analysis: read(super::output::ANALYSIS_COPY),
        tables: read("tables.md"),
        files: &files,
        checks,
        drawn,
        widths: &widths,
        tryit,
        module_gz: crate::report::wasm::MODULE_GZ,
    };
    super::write_text(dir, INDEX, &page.render())
}

/// The width in pixels an SVG chart was drawn at (its root element's `width`).
fn svg_width(path: &Path) -> Option<u32> {
    use std::io::Read;
    let mut head = [0u8; 512];
    let n = fs::File::open(path).ok()?.read(&mut head).ok()?;
    let head = std::str::from_utf8(&head[..n]).ok()?;
    let at = head.find("<svg")?;
    let rest = &head[at..];
    let value = rest.split("width=\"").nth(1)?;
    value.split('"').next()?.trim_end_matches("px").parse().ok()
}

/// The page's Content-Security-Policy without the panel: nothing but this folder.
const CSP: &str = "default-src 'none'; img-src 'self' file:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// Where the table of contents goes, until it is known.
const TOC_MARK: &str = "\u{0}toc\u{0}";

/// Charts drawn wider than this (small multiples of three or more panels) span the page.
const WIDE_CHART_PX: u32 = 1000;

/// What the page is made of.
struct Page<'a> {
    manifest: &'a serde_json::Value,
    analysis: Option<String>,
    tables: Option<String>,
    files: &'a [String],
    checks: Option<&'a [Checked]>,
    /// Which variant each chart shows, as its writer recorded it.
    drawn: Option<&'a [ChartFile]>,
    /// `(stem, width in px)` of every SVG chart.
    widths: &'a [(String, u32)],
    /// What the "try it" panel recomputes (none: no panel).
    tryit: Option<&'a Source>,
    /// The WebAssembly core the panel runs (empty: no panel).
    module_gz: &'a [u8],
}

/// `text` escaped for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline have no place on a page.
            c if c.is_control() && c != '\t' && c != '\n' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A file name as a relative URL: everything but `A-Za-z0-9._-` percent-encoded, so no
/// name can turn into a scheme, a path or a query.
fn href(name: &str) -> String {
    let mut out = String::new();
    if name.starts_with('.') || name.contains(':') {
        out.push_str("./");
    }
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// An id from free text: the analysis slug, never empty.
fn id_of(prefix: &str, text: &str) -> String {
    let slug = crate::analysis::slug(text);
    if slug.is_empty() {
        prefix.to_string()
    } else {
        format!("{prefix}-{slug}")
    }
}

/// The Markdown subset `tables.md` is written in, as HTML: `#`–`####` headings,
/// paragraphs, pipe tables (with `:` alignment) and inline `code` and `**bold**`. Each
/// `##` section becomes a `<details>` that starts open (the tables are the answer) and
/// folds away with a click; returns the HTML and the sections' (id, title) for the table
/// of contents.
pub fn markdown_to_html(md: &str, id_prefix: &str) -> (String, Vec<(String, String)>) {
    let mut html = String::new();
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut in_section = false;
    let mut paragraph: Vec<&str> = Vec::new();
    let mut table: Vec<&str> = Vec::new();
    let flush_paragraph = |html: &mut String, paragraph: &mut Vec<&str>| {
        if !paragraph.is_empty() {
            let _ = writeln!(html, "<p>{}</p>", inline(&paragraph.join(" ")));
            paragraph.clear();
        }
    };
    let flush_table = |html: &mut String, table: &mut Vec<&str>| {
        if !table.is_empty() {
            html.push_str(&render_table(table));
            table.clear();
        }
    };
    for line in md.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('|') {
            flush_paragraph(&mut html, &mut paragraph);
            table.push(trimmed);
            continue;
        }
        flush_table(&mut html, &mut table);
        let level = trimmed.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&level) && trimmed[level..].starts_with(' ') {
            flush_paragraph(&mut html, &mut paragraph);
            let title = trimmed[level..].trim();
            if level == 2 {
                if in_section {
                    html.push_str("</div></details>\n");
                }
                let id = format!("{id_prefix}-{}", sections.len() + 1);
                let _ = writeln!(
                    html,
                    "<details class=\"section\" id=\"{id}\" open><summary><h3>{}</h3></summary><div class=\"body\">",
                    inline(title)
                );
                sections.push((id, title.to_string()));
                in_section = true;
            } else {
                // The file's title is the page's section heading; lower levels nest.
                let h = (level + 2).min(6);
                let _ = writeln!(html, "<h{h}>{}</h{h}>", inline(title));
            }
        } else if trimmed.is_empty() {
            flush_paragraph(&mut html, &mut paragraph);
        } else {
            paragraph.push(trimmed);
        }
    }
    flush_table(&mut html, &mut table);
    flush_paragraph(&mut html, &mut paragraph);
    if in_section {
        html.push_str("</div></details>\n");
    }
    (html, sections)
}

/// A pipe table, in a box that scrolls sideways on a narrow screen.
fn render_table(rows: &[&str]) -> String {
    let is_rule = |row: &str| {
        let c = cells(row);
        !c.is_empty()
            && c.iter().all(|c| {
                let t = c.trim_matches(':');
                !t.is_empty() && t.chars().all(|ch| ch == '-')
            })
    };
    let (head, align, body): (Option<Vec<String>>, Vec<&str>, &[&str]) =
        if rows.len() >= 2 && is_rule(rows[1]) {
            let align = cells(rows[1])
                .iter()
                .map(|c| match (c.starts_with(':'), c.ends_with(':')) {
                    (true, true) => "center",
                    (false, true) => "right",
                    _ => "",
                })
                .collect();
            (Some(cells(rows[0])), align, &rows[2..])
        } else {
            (None, Vec::new(), rows)
        };
    let style = |i: usize| match align.get(i) {
        Some(a) if !a.is_empty() => format!(" class=\"{a}\""),
        _ => String::new(),
    };
    let mut html = String::from("<div class=\"scroll\"><table>\n");
    if let Some(head) = head {
        html.push_str("<thead><tr>");
        for (i, c) in head.iter().enumerate() {
            let _ = write!(html, "<th{}>{}</th>", style(i), inline(c));
        }
        html.push_str("</tr></thead>\n");
    }
    html.push_str("<tbody>\n");
    for row in body {
        html.push_str("<tr>");
        for (i, c) in cells(row).iter().enumerate() {
            let _ = write!(html, "<td{}>{}</td>", style(i), inline(c));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div>\n");
    html
}

/// Inline Markdown: `code` spans and `**bold**`; everything else is text, escaped. A lone
/// `*` (a printed "2*" result) stays a star.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('`') {
            if let Some(end) = after.find('`') {
                let _ = write!(out, "<code>{}</code>", escape(&after[..end]));
                rest = &after[end + 1..];
                continue;
            }
        }
        if let Some(after) = rest.strip_prefix("**") {
            if let Some(end) = after.find("**").filter(|&e| e > 0) {
                let _ = write!(out, "<strong>{}</strong>", inline(&after[..end]));
                rest = &after[end + 2..];
                continue;
            }
        }
        let first = rest.chars().next().map_or(1, char::len_utf8);
        let next = rest[first..]
            .find(['`', '*'])
            .map_or(rest.len(), |i| i + first);
        out.push_str(&escape(&rest[..next]));
        rest = &rest[next..];
    }
    out
}

/// A chart found in the folder: its file stem, kind and variant group.
struct Chart {
    stem: String,
    kind: String,
    /// Index into the manifest's variants, `None` for a chart over all of them.
    variant: Option<usize>,
}

/// Every `.svg` in the folder with the variant it shows: as `drawn` records it where the
/// report's writer kept a record; else by the variant suffix its name carries
/// ([`crate::report::variant_suffix`], as a whole `_`-separated segment, the longest
/// that matches), for reports written without one.
fn charts(files: &[String], variants: &[String], drawn: Option<&[ChartFile]>) -> Vec<Chart> {
    let suffixes: Vec<String> = if variants.len() > 1 {
        variants
            .iter()
            .map(|v| crate::report::variant_suffix(v, variants.len()))
            .collect()
    } else {
        Vec::new()
    };
    files
        .iter()
        .filter_map(|f| f.strip_suffix(".svg"))
        .map(|stem| {
            let variant = match drawn.and_then(|d| d.iter().find(|c| c.stem == stem)) {
                Some(c) => c
                    .variant
                    .as_ref()
                    .and_then(|v| variants.iter().position(|n| n == v))
                    .filter(|_| variants.len() > 1),
                None => suffixes
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| without_segment(stem, s).is_some())
                    .max_by_key(|(_, s)| s.len())
                    .map(|(i, _)| i),
            };
            let kind = variant
                .and_then(|i| without_segment(stem, &suffixes[i]))
                .unwrap_or_else(|| stem.to_string());
            Chart {
                stem: stem.to_string(),
                kind,
                variant,
            }
        })
        .collect()
}

/// `stem` without its last whole `_`-segment `segment` (`"_drm-cap-3"` in
/// `outcomes_drm-cap-3_a-leader-2`): the chart's kind, the same for every variant.
fn without_segment(stem: &str, segment: &str) -> Option<String> {
    if segment.len() <= 1 {
        return None;
    }
    let (at, _) = stem.rmatch_indices(segment).find(|(at, _)| {
        let after = &stem[at + segment.len()..];
        *at > 0 && (after.is_empty() || after.starts_with('_'))
    })?;
    Some(format!("{}{}", &stem[..at], &stem[at + segment.len()..]))
}

/// What a known file holds, for the file list.
fn describe_file(name: &str) -> &'static str {
    match name {
        "results.csv" | "results.parquet" => {
            "every run × outcome: count, probability, Wilson 95% interval, exact value"
        }
        "metrics.csv" | "metrics.parquet" => "every run × metric: simulated and exact mean",
        "distributions.csv" | "distributions.parquet" => {
            "every run × metric × value: count, probability, exact"
        }
        "expectations.csv" | "expectations.parquet" => "the system's own summary per run",
        "manifest.json" => "what the report is of, and its files",
        "run_info.json" => "threads, wall time, how the counts were made (differs per run)",
        "tables.md" => "the rulebook tables, in Markdown",
        "analysis.toml" => "the analysis file as run",
        "compare.csv" | "compare.json" => {
            "every run × outcome: both arms, their difference, its interval, p"
        }
        "value.csv" | "value.parquet" | "value.json" => "what each modifier is worth",
        _ => "",
    }
}

const STYLE: &str = r#"
:root{color-scheme:light;--fg:#1b1f24;--muted:#59636e;--line:#d0d7de;--bg2:#f6f8fa;--accent:#0b5cad}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0 auto;max-width:1180px;padding:1rem 1.25rem 3rem;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff;overflow-wrap:anywhere}
h1{font-size:1.7rem;line-height:1.25;margin:.5rem 0}
h2{font-size:1.3rem;margin:2rem 0 .6rem;padding-bottom:.25rem;border-bottom:1px solid var(--line)}
h3{font-size:1.05rem;margin:.2rem 0;display:inline}
h4,h5,h6{font-size:1rem;margin:1rem 0 .4rem}
a{color:var(--accent)}
p{margin:.5rem 0}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.88em}
pre{background:var(--bg2);border:1px solid var(--line);border-radius:6px;padding:.75rem;overflow-x:auto;white-space:pre;line-height:1.4}
.lead{font-size:1.08rem}
.muted{color:var(--muted)}
nav.toc{background:var(--bg2);border:1px solid var(--line);border-radius:6px;padding:.4rem .9rem;margin:1rem 0}
nav.toc ul{margin:.2rem 0;padding-left:1.2rem}
nav.toc li{margin:.1rem 0}
nav.toc details{border:none;margin:0;padding:0}
nav.toc details details summary{font-weight:400;padding:0;color:var(--muted)}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem 1rem;margin:.5rem 0}
dl.facts dt{font-weight:600}
dl.facts dd{margin:0;min-width:0}
.scroll{overflow-x:auto;max-width:100%;margin:.5rem 0 1rem;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:.9rem;font-variant-numeric:tabular-nums}
th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top;white-space:nowrap;overflow-wrap:normal}
th{background:var(--bg2)}
td.right,th.right{text-align:right}
td.center,th.center{text-align:center}
td.wrap{white-space:normal;overflow-wrap:anywhere;min-width:12rem}
details{border:1px solid var(--line);border-radius:6px;margin:.6rem 0;padding:0 .8rem}
details[open]{padding-bottom:.6rem}
summary{cursor:pointer;padding:.5rem 0;font-weight:600}
summary .count{font-weight:400;color:var(--muted)}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,460px),1fr));gap:1rem;margin:.5rem 0}
figure{margin:0;min-width:0;border:1px solid var(--line);border-radius:6px;padding:.5rem;background:#fff}
figure.wide{grid-column:1/-1}
figure img{display:block;max-width:100%;height:auto;margin:0 auto;cursor:zoom-in}
figcaption{font-size:.9rem;color:var(--muted);margin-top:.3rem}
.status{display:inline-block;font-weight:700;border-radius:4px;padding:0 .4rem;color:#fff}
.PASS{background:#1a7f37}.FAIL{background:#cf222e}.UNDECIDED{background:#9a6700}
ul.files{list-style:none;padding:0;margin:.3rem 0}
ul.files li{margin:.15rem 0}
#selftest{white-space:pre-wrap}
@media (max-width:700px){
 body{padding:.75rem .75rem 2rem;font-size:15px}
 h1{font-size:1.4rem}
 .charts{grid-template-columns:minmax(0,1fr)}
 dl.facts{grid-template-columns:minmax(0,1fr)}
 dl.facts dd{margin-bottom:.3rem}
}
@media print{
 body{max-width:none;padding:0;font-size:11pt}
 nav.toc,.noprint{display:none}
 a{color:inherit;text-decoration:none}
 details{border:none;padding:0}
 details::details-content{content-visibility:visible;display:block}
 summary{list-style:none}
 summary::-webkit-details-marker{display:none}
 .scroll{overflow:visible}
 pre{white-space:pre-wrap}
 table,figure,tr,.status{page-break-inside:avoid;break-inside:avoid}
 h2,h3,summary{page-break-after:avoid;break-after:avoid}
 .charts{display:block}
 figure{margin:0 0 1rem;border:none}
}
"#;

/// The page's script: opens the sections a link leads into, opens every section for
/// printing, and with `#selftest` checks the page and reports in the page and the
/// console. No network, no libraries.
const SCRIPT: &str = r##"
(function(){
  function all(sel){return Array.prototype.slice.call(document.querySelectorAll(sel));}
  function reveal(){
    var id=decodeURIComponent(location.hash.slice(1));
    var t=id&&document.getElementById(id);
    if(!t)return;
    for(var e=t;e;e=e.parentElement){if(e.tagName==='DETAILS')e.open=true;}
    t.scrollIntoView();
  }
  window.addEventListener('hashchange',reveal);
  reveal();
  var closed=[];
  window.addEventListener('beforeprint',function(){
    closed=all('details').filter(function(d){return !d.open;});
    closed.forEach(function(d){d.open=true;});
  });
  window.addEventListener('afterprint',function(){
    closed.forEach(function(d){d.open=false;});
    closed=[];
  });
  var test=/^#selftest(?:-(\d+))?$/.exec(location.hash);
  if(!test)return;
  window.addEventListener('load',function(){
    all('details').forEach(function(d){d.open=true;});
    // A headless window has a smallest width; "#selftest-390" narrows the page itself.
    var narrow=test[1]?parseInt(test[1],10):0;
    if(narrow)document.documentElement.style.width=narrow+'px';
    var fail=[];
    var imgs=all('img');
    imgs.forEach(function(i){
      if(!i.complete||!(i.naturalWidth>0))fail.push('image not loaded: '+i.getAttribute('src'));
    });
    all('[src],[href],[srcset],[action],[poster]').forEach(function(e){
      ['src','href','srcset','action','poster'].forEach(function(a){
        var v=e.getAttribute(a);
        if(v!==null&&(/^\s*[a-zA-Z][a-zA-Z0-9+.-]*:/.test(v)||/^\s*\/\//.test(v)||/^\s*\//.test(v)))
          fail.push('not a relative link: '+a+'='+v);
      });
    });
    var base=location.href.replace(/[#?].*$/,'').replace(/[^\/]*$/,'');
    (performance.getEntriesByType('resource')||[]).forEach(function(r){
      // blob: is the panel's Worker, made in the page from its own text.
      if(r.name.indexOf(base)!==0&&r.name.indexOf('blob:')!==0)fail.push('request outside the folder: '+r.name);
    });
    var sw=document.documentElement.scrollWidth,w=window.innerWidth;
    if(sw>w)fail.push('page overflows: scrollWidth '+sw+' > innerWidth '+w);
    var limit=narrow||w,widest=0;
    // Nothing may reach past the page's right edge, except inside a box that scrolls.
    (function walk(e){
      for(var c=e.firstElementChild;c;c=c.nextElementSibling){
        var r=c.getBoundingClientRect().right;
        if(r>widest)widest=r;
        if(r>limit+0.5)fail.push('sticks out to '+Math.round(r)+' px: <'+c.tagName.toLowerCase()+(c.id?' id='+c.id:'')+(c.className?' class='+c.className:'')+'>');
        var o=getComputedStyle(c).overflowX;
        if(o==='visible')walk(c);
      }
    })(document.body);
    var msg=(fail.length?'SELFTEST FAIL ':'SELFTEST OK ')+'images='+imgs.length+' width='+limit+' widest='+Math.round(widest)+' innerWidth='+w+' scrollWidth='+sw+(fail.length?' | '+fail.slice(0,12).join(' | '):'');
    var out=document.createElement('pre');
    out.id='selftest';
    out.textContent=msg;
    document.body.appendChild(out);
    console.log(msg);
  });
})();
"##;

impl Page<'_> {
    fn str(&self, key: &str) -> Option<&str> {
        self.manifest.get(key).and_then(|v| v.as_str())
    }

    fn kind(&self) -> &str {
        self.str("kind").unwrap_or("run")
    }

    fn variants(&self) -> Vec<String> {
        self.manifest
            .get("variants")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The analysis file's `description` and its opening comment (the question).
    fn question(&self) -> (Option<String>, Vec<String>) {
        let Some(text) = &self.analysis else {
            return (None, Vec::new());
        };
        let description = toml::from_str::<toml::Table>(text)
            .ok()
            .and_then(|t| t.get("description")?.as_str().map(str::to_string));
        let mut comment: Vec<String> = Vec::new();
        let mut paragraph = String::new();
        for line in text.lines() {
            let Some(c) = line.trim_start().strip_prefix('#') else {
                break;
            };
            let c = c.trim();
            if c.is_empty() {
                if !paragraph.is_empty() {
                    comment.push(std::mem::take(&mut paragraph));
                }
                continue;
            }
            // How-to-run lines are for the terminal, not the page.
            if c.starts_with("Run:") || c.starts_with("Check:") {
                continue;
            }
            if !paragraph.is_empty() {
                paragraph.push(' ');
            }
            paragraph.push_str(c);
        }
        if !paragraph.is_empty() {
            comment.push(paragraph);
        }
        (description, comment)
    }

    fn title(&self) -> String {
        match self.kind() {
            "compare" => format!(
                "Compare: {} against {}",
                self.str("a").unwrap_or("A"),
                self.str("b").unwrap_or("B")
            ),
            "value" => format!(
                "What is it worth? {}",
                self.str("analysis").unwrap_or("analysis")
            ),
            _ => self.str("name").unwrap_or("battlelab report").to_string(),
        }
    }

    /// The manifest in words: (label, HTML value).
    fn facts(&self) -> Vec<(&'static str, String)> {
        let m = self.manifest;
        let mut facts: Vec<(&'static str, String)> = Vec::new();
        let text = |key: &str| {
            m.get(key)
                .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
        };
        match self.kind() {
            "compare" => {
                facts.push((
                    "Report",
                    format!(
                        "compare: every cell {} − {}",
                        escape(self.str("b").unwrap_or("B")),
                        escape(self.str("a").unwrap_or("A"))
                    ),
                ));
                if let Some(a) = text("a") {
                    facts.push(("A", escape(&a)));
                }
                if let Some(b) = text("b") {
                    facts.push(("B", escape(&b)));
                }
            }
            "value" => facts.push(("Report", "value: what each modifier is worth".into())),
            _ => {}
        }
        if let Some(s) = text("system") {
            facts.push(("System", escape(&s)));
        }
        if let Some(seed) = text("seed") {
            facts.push((
                "Seed",
                format!(
                    "{} <span class=\"muted\">(the same seed gives the same numbers)</span>",
                    escape(&seed)
                ),
            ));
        }
        if let Some(trials) = m.get("trials").and_then(|v| v.as_u64()) {
            let runs = m.get("run_trials").and_then(|v| v.as_array());
            let value = match (m.get("precision").and_then(|v| v.as_f64()), runs) {
                (Some(p), Some(runs)) => {
                    let each: Vec<u64> = runs.iter().filter_map(|v| v.as_u64()).collect();
                    format!(
                        "each run until its 95% intervals were ±{p}: {}–{} per run (at most {trials})",
                        each.iter().min().unwrap_or(&0),
                        each.iter().max().unwrap_or(&0)
                    )
                }
                _ => format!("{trials} per run"),
            };
            let block = m
                .get("block_trials")
                .and_then(|v| v.as_u64())
                .map_or(String::new(), |b| {
                    format!(" <span class=\"muted\">(in blocks of {b})</span>")
                });
            facts.push(("Trials", format!("{}{block}", escape(&value))));
            if let Some(line) = precision_shortfall(m, trials) {
                facts.push(("Precision", escape(&line)));
            }
        }
        if let Some(runs) = m.get("runs").and_then(|v| v.as_u64()) {
            let exact = m.get("exact_runs").and_then(|v| v.as_u64()).unwrap_or(0);
            let how = match exact {
                0 => "none exact: Monte Carlo only".to_string(),
                e if e == runs => "all exact: enumerated beside the Monte Carlo".to_string(),
                e => format!("{e} exact (enumerated), the rest Monte Carlo only"),
            };
            facts.push(("Runs", format!("{runs}; {how}")));
        }
        let variants = self.variants();
        if !variants.is_empty() {
            facts.push((
                "Variants",
                format!("{}: {}", variants.len(), escape(&variants.join(", "))),
            ));
        }
        if let Some(axes) = m.get("axes").and_then(|v| v.as_array()) {
            let axes: Vec<&str> = axes.iter().filter_map(|v| v.as_str()).collect();
            facts.push((
                "Swept",
                if axes.is_empty() {
                    "nothing (one point)".into()
                } else {
                    escape(&axes.join(", "))
                },
            ));
        }
        if let Some(h) = text("rules_hash") {
            facts.push(("Rules hash", format!("<code>{}</code>", escape(&h))));
        }
        if let Some(h) = text("analysis_sha256") {
            facts.push(("Analysis SHA-256", format!("<code>{}</code>", escape(&h))));
        }
        let version = text("version").unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string());
        facts.push(("Written by", format!("battlelab {}", escape(&version))));
        facts
    }

    fn render(&self) -> String {
        let title = self.title();
        let (description, comment) = self.question();
        let variants = self.variants();
        let charts = charts(self.files, &variants, self.drawn);
        let tables = self
            .tables
            .as_deref()
            .map(|md| markdown_to_html(md, "tables"));
        let mut toc: Vec<String> = Vec::new();
        let mut body = String::new();

        // The question.
        let _ = writeln!(body, "<header id=\"question\"><h1>{}</h1>", escape(&title));
        if let Some(d) = &description {
            let _ = writeln!(body, "<p class=\"lead\">{}</p>", escape(d));
        }
        for p in &comment {
            let _ = writeln!(body, "<p>{}</p>", escape(p));
        }
        if self.kind() == "compare" {
            let (a, b) = (
                escape(self.str("a").unwrap_or("A")),
                escape(self.str("b").unwrap_or("B")),
            );
            let _ = writeln!(
                body,
                "<p class=\"lead\">Did the change matter? Every run and outcome of {b} against {a}: the difference {b} − {a}, its 95% interval, and whether it is significant after the correction for the number of cells compared.</p>"
            );
        }
        body.push_str("</header>\n");

        // Rulebook tables.
        if let Some((html, sections)) = &tables {
            let mut entry = String::from(
                "<li><a href=\"#tables\">The answer: headline and rulebook tables</a>",
            );
            if sections.len() > 1 {
                // A long sweep's many sections fold away in the contents too.
                let fold = sections.len() > 8;
                if fold {
                    let _ = write!(
                        entry,
                        "<details><summary class=\"count\">{} sections</summary>",
                        sections.len()
                    );
                }
                entry.push_str("<ul>");
                for (id, title) in sections {
                    let _ = write!(entry, "<li><a href=\"#{id}\">{}</a></li>", inline(title));
                }
                entry.push_str("</ul>");
                if fold {
                    entry.push_str("</details>");
                }
            }
            entry.push_str("</li>");
            toc.push(entry);
            let xlsx = if self
                .files
                .iter()
                .any(|f| f == crate::report::rulebook::XLSX)
            {
                format!(
                    " and <a href=\"{0}\">{0}</a> (every table a sheet, numbers as numbers)",
                    crate::report::rulebook::XLSX
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                body,
                "<section id=\"tables\"><h2>The answer: headline and rulebook tables</h2>\n<p class=\"muted\">From <a href=\"tables.md\">tables.md</a>{xlsx}.</p>\n{html}</section>"
            );
        }

        // The table of contents goes here: after the answer, before everything else.
        body.push_str(TOC_MARK);

        // Try it: the analysis recomputed in the page.
        let panel = self.tryit.filter(|_| !self.module_gz.is_empty());
        if panel.is_some() {
            toc.push("<li><a href=\"#tryit\">Try it: change a setting</a></li>".into());
        }
        body.push_str(&tryit::panel_section(self.tryit, self.module_gz));

        // Expectations.
        if let Some(checks) = self.checks {
            toc.push("<li><a href=\"#expectations\">Expectations</a></li>".into());
            body.push_str("<section id=\"expectations\"><h2>Expectations</h2>\n");
            if checks.is_empty() {
                body.push_str(
                    "<p>The analysis file states no expectations (<code>[[expect]]</code>).</p>\n",
                );
            } else {
                let count = |s: &str| checks.iter().filter(|c| c.status == s).count();
                let _ = writeln!(
                    body,
                    "<p>{} expectation(s): {} passed, {} failed, {} undecided. Decided on this report's own counts: exactly where the run is exact, otherwise by the Hoeffding interval <code>battlelab check</code> uses, at the stated confidence, over this report's trials. <code>battlelab check</code> draws its own trials and may decide what a small run leaves undecided.</p>",
                    checks.len(),
                    count("PASS"),
                    count("FAIL"),
                    count("UNDECIDED")
                );
                body.push_str("<div class=\"scroll\"><table><thead><tr><th>verdict</th><th class=\"right\">line</th><th>expectation</th><th>where it was decided</th></tr></thead><tbody>\n");
                for c in checks {
                    let _ = writeln!(
                        body,
                        "<tr><td><span class=\"status {0}\">{0}</span></td><td class=\"right\">{1}</td><td class=\"wrap\"><code>{2}</code></td><td class=\"wrap\">{3}</td></tr>",
                        c.status,
                        c.line,
                        escape(&c.written),
                        escape(&c.detail)
                    );
                }
                body.push_str("</tbody></table></div>\n");
            }
            body.push_str("</section>\n");
        }

        // Charts.
        if !charts.is_empty() {
            body.push_str(&self.render_charts(&charts, &variants, &mut toc));
        }

        // The manifest in words.
        toc.push("<li><a href=\"#run\">The run</a></li>".into());
        body.push_str("<section id=\"run\"><h2>The run</h2>\n<dl class=\"facts\">\n");
        for (label, value) in self.facts() {
            let _ = writeln!(body, "<dt>{label}</dt><dd>{value}</dd>");
        }
        body.push_str("</dl></section>\n");

        // Files.
        toc.push("<li><a href=\"#files\">Files</a></li>".into());
        body.push_str("<section id=\"files\"><h2>Files</h2>\n");
        let groups: [(&str, &[&str]); 4] = [
            ("Data", &["csv", "parquet", "json"]),
            ("Charts", &["svg", "png"]),
            ("Text", &["md", "toml"]),
            ("Other", &[]),
        ];
        let known: Vec<&str> = groups.iter().flat_map(|(_, e)| e.iter().copied()).collect();
        for (label, exts) in groups {
            let in_group: Vec<&String> = self
                .files
                .iter()
                .filter(|f| {
                    let ext = f.rsplit_once('.').map_or("", |(_, e)| e);
                    if exts.is_empty() {
                        !known.contains(&ext)
                    } else {
                        exts.contains(&ext)
                    }
                })
                .collect();
            if in_group.is_empty() {
                continue;
            }
            // The charts are on the page already: their files fold away.
            let fold = label == "Charts";
            if fold {
                let _ = writeln!(
                    body,
                    "<details><summary>{label} <span class=\"count\">({} files)</span></summary><ul class=\"files\">",
                    in_group.len()
                );
            } else {
                let _ = writeln!(body, "<h4>{label}</h4><ul class=\"files\">");
            }
            for f in in_group {
                let what = describe_file(f);
                let _ = writeln!(
                    body,
                    "<li><a href=\"{}\">{}</a>{}</li>",
                    href(f),
                    escape(f),
                    if what.is_empty() {
                        String::new()
                    } else {
                        format!(" <span class=\"muted\">— {what}</span>")
                    }
                );
            }
            body.push_str(if fold { "</ul></details>\n" } else { "</ul>\n" });
        }
        body.push_str("</section>\n");

        // The analysis file.
        if let Some(text) = &self.analysis {
            toc.push("<li><a href=\"#analysis\">The analysis file</a></li>".into());
            let _ = writeln!(
                body,
                "<section id=\"analysis\"><h2>The analysis file</h2>\n<p class=\"muted\"><a href=\"{}\">{}</a>, as run.</p>\n<pre>{}</pre></section>",
                href(super::output::ANALYSIS_COPY),
                super::output::ANALYSIS_COPY,
                escape(text)
            );
        }

        let mut page = String::new();
        page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        // Nothing but this folder: no network, whatever a file name or text says.
        // With the panel: WebAssembly from the page's own bytes, in a Worker from a Blob
        // URL (see `tryit`).
        let csp = if panel.is_some() {
            tryit::CSP_WITH_WASM
        } else {
            CSP
        };
        let _ = writeln!(
            page,
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">"
        );
        page.push_str("<meta name=\"generator\" content=\"battlelab\">\n");
        let _ = writeln!(page, "<title>{} — battlelab</title>", escape(&title));
        let panel_style = if panel.is_some() { tryit::STYLE } else { "" };
        let _ = writeln!(page, "<style>{STYLE}{panel_style}</style>\n</head>\n<body>");
        page.push_str(&body);
        // The table of contents: after the answer (or the question, where there is no
        // answer), before the rest.
        let nav = format!(
            "<nav class=\"toc\" aria-label=\"Contents\"><details open><summary>Contents</summary><ul>\n{}\n</ul></details></nav>\n",
            toc.join("\n")
        );
        let mut page = page.replacen(TOC_MARK, &nav, 1);
        let _ = writeln!(page, "<script>{SCRIPT}</script>");
        if panel.is_some() {
            let _ = writeln!(
                page,
                "<script>{}{}</script>",
                tryit::CLIENT_JS,
                tryit::PANEL_JS
            );
        }
        page.push_str("</body>\n</html>\n");
        page
    }

    /// The charts: one grid when they are few or of one variant, else a collapsible
    /// section per variant and a kind × variant table of links.
    fn render_charts(
        &self,
        charts: &[Chart],
        variants: &[String],
        toc: &mut Vec<String>,
    ) -> String {
        let mut html = String::from("<section id=\"charts\"><h2>Charts</h2>\n");
        let figure = |c: &Chart| {
            let label = c.kind.replace('_', " ");
            let of = c
                .variant
                .map_or(String::new(), |v| format!(" — {}", escape(&variants[v])));
            let png = format!("{}.png", c.stem);
            let png_link = if self.files.contains(&png) {
                format!(" · <a href=\"{}\">PNG</a>", href(&png))
            } else {
                String::new()
            };
            let svg = format!("{}.svg", c.stem);
            let wide = self
                .widths
                .iter()
                .any(|(stem, w)| *stem == c.stem && *w > WIDE_CHART_PX);
            // A click on the chart opens it full size: a plain link, no script.
            format!(
                "<figure id=\"chart-{id}\"{class}><a href=\"{src}\" title=\"open full size\"><img src=\"{src}\" alt=\"{alt}\"></a><figcaption>{alt}{of} · <a href=\"{src}\">full size (SVG)</a>{png_link}</figcaption></figure>\n",
                id = escape(&c.stem),
                class = if wide { " class=\"wide\"" } else { "" },
                src = href(&svg),
                alt = escape(&label),
            )
        };
        // Groups: charts over all variants first, then each variant's.
        let mut groups: Vec<(Option<usize>, Vec<&Chart>)> = Vec::new();
        for key in std::iter::once(None).chain((0..variants.len()).map(Some)) {
            let members: Vec<&Chart> = charts.iter().filter(|c| c.variant == key).collect();
            if !members.is_empty() {
                groups.push((key, members));
            }
        }
        if groups.len() <= 1 {
            toc.push("<li><a href=\"#charts\">Charts</a></li>".into());
            html.push_str("<div class=\"charts\">\n");
            for c in charts {
                html.push_str(&figure(c));
            }
            html.push_str("</div>\n</section>\n");
            return html;
        }
        let group_id = |key: Option<usize>| match key {
            None => "charts-all".to_string(),
            Some(v) => format!("{}-{}", id_of("charts-v", &variants[v]), v + 1),
        };
        let group_name = |key: Option<usize>| match key {
            None => "All variants together".to_string(),
            Some(v) => format!("Variant: {}", variants[v]),
        };
        let mut entry = String::from("<li><a href=\"#charts\">Charts</a><ul>");
        for (key, members) in &groups {
            let _ = write!(
                entry,
                "<li><a href=\"#{}\">{}</a> <span class=\"muted\">({})</span></li>",
                group_id(*key),
                escape(&group_name(*key)),
                members.len()
            );
        }
        entry.push_str("</ul></li>");
        toc.push(entry);
        // Kind × variant: every chart one click away, and charts of one kind side by side.
        let mut kinds: Vec<&str> = Vec::new();
        for c in charts {
            if !kinds.contains(&c.kind.as_str()) {
                kinds.push(&c.kind);
            }
        }
        let columns: Vec<Option<usize>> = groups.iter().map(|(k, _)| *k).collect();
        html.push_str("<p>By kind and variant; each section below opens with a click.</p>\n<div class=\"scroll\"><table><thead><tr><th>chart</th>");
        for key in &columns {
            let _ = write!(
                html,
                "<th>{}</th>",
                escape(&key.map_or("all variants".to_string(), |v| variants[v].clone()))
            );
        }
        html.push_str("</tr></thead><tbody>\n");
        for kind in &kinds {
            let _ = write!(html, "<tr><td>{}</td>", escape(&kind.replace('_', " ")));
            for key in &columns {
                match charts.iter().find(|c| c.kind == *kind && c.variant == *key) {
                    Some(c) => {
                        let _ = write!(
                            html,
                            "<td><a href=\"#chart-{}\">view</a></td>",
                            escape(&c.stem)
                        );
                    }
                    None => html.push_str("<td class=\"muted\">–</td>"),
                }
            }
            html.push_str("</tr>\n");
        }
        html.push_str("</tbody></table></div>\n");
        for (i, (key, members)) in groups.iter().enumerate() {
            let _ = writeln!(
                html,
                "<details id=\"{}\"{}><summary>{} <span class=\"count\">({} chart{})</span></summary>\n<div class=\"charts\">",
                group_id(*key),
                if i == 0 { " open" } else { "" },
                escape(&group_name(*key)),
                members.len(),
                if members.len() == 1 { "" } else { "s" }
            );
            for c in members {
                html.push_str(&figure(c));
            }
            html.push_str("</div></details>\n");
        }
        html.push_str("</section>\n");
        html
    }
}

/// The line a report run to an unreachable precision shows: the target, the cap the
/// runs stopped at, and the widest interval left. `None` when every run reached it.
fn precision_shortfall(manifest: &serde_json::Value, cap: u64) -> Option<String> {
    let target = manifest.get("precision")?.as_f64()?;
    let short = manifest.get("runs_short_of_precision")?.as_u64()?;
    let reached = manifest.get("precision_reached")?.as_f64()?;
    let runs = manifest
        .get("runs")
        .and_then(|v| v.as_u64())
        .unwrap_or(short);
    (short > 0).then(|| {
        format!(
            "precision target ±{} not reached at the cap of {cap} trials: {short} of {runs} run(s) stopped short; the widest 95% interval left is ±{reached:.1e}",
            crate::report::short_number(target)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_tables_headings_and_text_are_escaped_and_aligned() {
        let md = "# t <x>\n\nA & B `c<d>` **bold** 2* 3*\n\n## One\n\n| a | b \\| c |\n|---|---:|\n| <i> | 2* |\n\n### sub\n\n## Two\ntext\n";
        let (html, sections) = markdown_to_html(md, "tables");
        assert!(html.contains("<h3>t &lt;x&gt;</h3>"), "{html}");
        assert!(
            html.contains("<p>A &amp; B <code>c&lt;d&gt;</code> <strong>bold</strong> 2* 3*</p>"),
            "{html}"
        );
        assert!(
            html.contains("<th>a</th><th class=\"right\">b | c</th>"),
            "{html}"
        );
        assert!(
            html.contains("<td>&lt;i&gt;</td><td class=\"right\">2*</td>"),
            "{html}"
        );
        assert!(html.contains("<h5>sub</h5>"), "{html}");
        assert_eq!(
            sections,
            [
                ("tables-1".to_string(), "One".to_string()),
                ("tables-2".to_string(), "Two".to_string())
            ]
        );
        assert_eq!(html.matches("<details").count(), 2);
        assert_eq!(html.matches("</details>").count(), 2);
        assert!(!html.contains("<i>"));
    }

    #[test]
    fn file_names_become_relative_links() {
        assert_eq!(href("results.csv"), "results.csv");
        assert_eq!(href("a b.svg"), "a%20b.svg");
        assert_eq!(href("http:x"), "./http%3Ax");
        assert_eq!(href("<x>\"'"), "%3Cx%3E%22%27");
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }

    #[test]
    fn charts_are_filed_under_the_variant_their_writer_recorded() {
        // As the field system names them: a variant of several words, a chart of one
        // slice of a sweep, a chart over all variants.
        let files: Vec<String> = [
            "outcomes_printed_a-leader-1.svg",
            "outcomes_drm-cap-3_a-leader-1.svg",
            "outcomes_cap-3_a-leader-1.svg",
            "p_by_variant.svg",
            "outcomes_printed_a-leader-1.png",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let variants = vec![
            "printed".to_string(),
            "DRM cap 3".to_string(),
            "cap 3".to_string(),
        ];
        let recorded = |stem: &str, variant: Option<&str>| ChartFile {
            stem: stem.into(),
            variant: variant.map(str::to_string),
        };
        let drawn = vec![
            recorded("outcomes_printed_a-leader-1", Some("printed")),
            recorded("outcomes_drm-cap-3_a-leader-1", Some("DRM cap 3")),
            recorded("outcomes_cap-3_a-leader-1", Some("cap 3")),
            recorded("p_by_variant", None),
        ];
        let expected = [
            (
                "outcomes_printed_a-leader-1",
                "outcomes_a-leader-1",
                Some(0),
            ),
            (
                "outcomes_drm-cap-3_a-leader-1",
                "outcomes_a-leader-1",
                Some(1),
            ),
            ("outcomes_cap-3_a-leader-1", "outcomes_a-leader-1", Some(2)),
            ("p_by_variant", "p_by_variant", None),
        ];
        let got = |found: Vec<Chart>| -> Vec<(String, String, Option<usize>)> {
            found
                .into_iter()
                .map(|c| (c.stem, c.kind, c.variant))
                .collect()
        };
        let want: Vec<(String, String, Option<usize>)> = expected
            .iter()
            .map(|(s, k, v)| (s.to_string(), k.to_string(), *v))
            .collect();
        assert_eq!(got(charts(&files, &variants, Some(&drawn))), want);
        // Without a record (a report written by a command that keeps none), the same
        // from the names, as the writer forms them.
        assert_eq!(got(charts(&files, &variants, None)), want);
        // One variant: nothing to file under.
        assert!(charts(&files, &variants[..1], Some(&drawn))
            .iter()
            .all(|c| c.variant.is_none()));
    }
}
