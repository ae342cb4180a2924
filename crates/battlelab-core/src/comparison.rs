//! `compare`'s answer, pure: which runs of two arms are paired, the arms run block by
//! block, each run's cells compared (`engine::compare`), the cells that happened in
//! neither arm left out, the correction applied, and the answer printed (text, JSON and
//! the Markdown of `tables.md`).
//!
//! Why this module exists: `battlelab compare` answers on the command line and the report
//! page's WebAssembly module answers again after an edit (its `compare` op), and a
//! printed difference must not depend on which of the two computed it. So the comparison
//! lives here once, with no files, threads, Polars or clap: the caller hands over the
//! validated analyses ([`Priceable`]: the command line's `Study` or the module's
//! `AnyStudy`) and gets back a [`Comparison`], which prints itself. The command line adds
//! the thread pool, the progress bar, report folders compared by their totals, the CSV
//! and the report folder.

use std::path::Path;

use serde_json::{json, Value};

use crate::analysis::AxisValue;
use crate::engine::compare::{self, Arm, Cell, Correction};
use crate::engine::Plan;
use crate::pricing::Priceable;
use crate::sim::{Interrupted, RunControl};

/// One compared run: what tells it apart, and its cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub run: Vec<(String, String)>,
    pub cells: Vec<Cell>,
}

/// What was compared, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    /// Cells left out of the table: the outcome was 0 in both arms.
    pub left_out: usize,
    pub paired: bool,
    pub tests_note: String,
    pub correction: Correction,
    pub alpha: f64,
    pub rows: Vec<Row>,
    /// Axis names and per-row axis values, for the heatmaps and the CSV.
    pub axes: Vec<String>,
    pub coordinates: Vec<Vec<AxisValue>>,
}

/// How the cells are decided: the correction and its α (`--fdr`, `--alpha`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    pub correction: Correction,
    pub alpha: f64,
}

/// Which runs are compared: run `pairs[k].0` of arm a against run `pairs[k].1` of arm b,
/// each arm with its trials and seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Pairing {
    pub a: String,
    pub b: String,
    pub pairs: Vec<(usize, usize)>,
    pub trials: [u64; 2],
    pub seeds: [u64; 2],
    /// Both arms draw the same dice in the same blocks.
    pub paired: bool,
}

impl Pairing {
    /// The battles the comparison simulates: every pair's two arms.
    pub fn battles(&self) -> u64 {
        (self.pairs.len() as u64).saturating_mul(self.trials[0].saturating_add(self.trials[1]))
    }
}

/// Two variants `a` and `b` of one plan (`--variants A,B`): each run of `a` against the
/// run of `b` at the same coordinates, both with `trials` and `seed`, so paired. The
/// error is the command line's usage message (exit 2), naming the variants the file has.
pub fn variants_of_one(
    plan: &Plan,
    a: &str,
    b: &str,
    trials: u64,
    seed: u64,
) -> Result<Pairing, String> {
    let known = plan.variants();
    if a == b {
        return Err(format!(
            "--variants names \"{}\" twice; name two different variants",
            crate::limits::echo(a)
        ));
    }
    for name in [a, b] {
        if !known.contains(&name) {
            return Err(format!(
                "--variants: no variant \"{}\"; the file has: {}",
                crate::limits::echo(name),
                known.join(", ")
            ));
        }
    }
    let mut pairs = Vec::new();
    for (i, run) in plan.runs.iter().enumerate() {
        if run.variant != a {
            continue;
        }
        if let Some(j) = plan
            .runs
            .iter()
            .position(|r| r.variant == b && r.coordinates == run.coordinates)
        {
            pairs.push((i, j));
        }
    }
    Ok(Pairing {
        a: a.to_string(),
        b: b.to_string(),
        pairs,
        trials: [trials; 2],
        seeds: [seed; 2],
        paired: true,
    })
}

/// `--variants A,B` as the command line reads it: two names split at the comma, trimmed.
pub fn variant_names(variants: &str) -> Result<(String, String), String> {
    variants
        .split_once(',')
        .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
        .ok_or_else(|| "--variants takes two names: --variants A,B".to_string())
}

/// Runs every pair of `pairing` (arm a's runs from `a`, arm b's from `b`: every block,
/// with the exact results) and compares each run's cells; `plan` is arm a's. The cells
/// are not yet [`Comparison::finish`]ed.
pub fn compare(
    a: &dyn Priceable,
    b: &dyn Priceable,
    plan: &Plan,
    pairing: &Pairing,
    decision: Decision,
    control: &RunControl,
) -> Result<Comparison, Interrupted> {
    let (trials, seeds) = (pairing.trials, pairing.seeds);
    let arms = pairing
        .pairs
        .iter()
        .map(|&(i, j)| -> Result<(Arm, Arm), Interrupted> {
            // Every block of each run, with its exact results.
            let all = |t: u64| 0..crate::engine::driver::blocks_per_run(t);
            Ok((
                a.arm_blocks(i, all(trials[0]), trials[0], seeds[0], true, control)?,
                b.arm_blocks(j, all(trials[1]), trials[1], seeds[1], true, control)?,
            ))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(build(pairing, plan, arms, decision))
}

fn build(pairing: &Pairing, plan: &Plan, arms: Vec<(Arm, Arm)>, decision: Decision) -> Comparison {
    let mut rows = Vec::new();
    let mut coordinates = Vec::new();
    for (&(i, _), (arm_a, arm_b)) in pairing.pairs.iter().zip(&arms) {
        rows.push(Row {
            run: plan.describe(i),
            cells: compare::compare_arms(arm_a, arm_b, pairing.paired),
        });
        coordinates.push(plan.runs[i].coordinates.clone());
    }
    Comparison {
        a: pairing.a.clone(),
        b: pairing.b.clone(),
        left_out: 0,
        paired: pairing.paired,
        tests_note: if pairing.paired {
            "both arms draw the same dice in the same blocks".into()
        } else {
            "independent arms".into()
        },
        correction: decision.correction,
        alpha: decision.alpha,
        rows,
        axes: plan.axes.clone(),
        coordinates,
    }
}

impl Comparison {
    /// Leaves out the outcomes that happened in neither arm (they say nothing: out of the
    /// table and of the correction's family, and counted), then decides every tested cell
    /// with the correction.
    pub fn finish(&mut self) {
        for row in &mut self.rows {
            let before = row.cells.len();
            row.cells.retain(|cell| !cell.zero_in_both);
            self.left_out += before - row.cells.len();
        }
        let (correction, alpha) = (self.correction, self.alpha);
        let mut cells: Vec<&mut Cell> = self
            .rows
            .iter_mut()
            .flat_map(|r| r.cells.iter_mut())
            .collect();
        compare::correct(&mut cells, correction, alpha);
    }

    /// The three headings naming the arms: `P(printed)`, `P(cap 3)`, `cap 3 − printed`.
    pub fn arm_headings(&self) -> [String; 3] {
        let (a, b) = (arm_label(&self.a), arm_label(&self.b));
        [format!("P({a})"), format!("P({b})"), format!("{b} − {a}")]
    }

    fn tests_used(&self) -> Vec<&'static str> {
        let mut tests = Vec::new();
        for cell in self.rows.iter().flat_map(|r| &r.cells) {
            if !tests.contains(&cell.test.name()) {
                tests.push(cell.test.name());
            }
        }
        tests
    }
}

/// A run's label: `size=3, b.quality=-1`, or "(the one run)".
pub fn run_label(run: &[(String, String)]) -> String {
    if run.is_empty() {
        "(the one run)".into()
    } else {
        run.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The summary: which cells moved, largest first, or "no significant change".
pub fn summary(c: &Comparison) -> String {
    let mut moved: Vec<(&Row, &Cell)> = c
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().map(move |cell| (r, cell)))
        .filter(|(_, cell)| cell.significant)
        .collect();
    if moved.is_empty() {
        return format!(
            "no significant change ({} cells compared, {} at α = {})",
            c.rows.iter().map(|r| r.cells.len()).sum::<usize>(),
            c.correction.name(),
            c.alpha
        );
    }
    moved.sort_by(|x, y| {
        let size = |cell: &Cell| cell.exact_diff.unwrap_or(cell.diff).abs();
        size(y.1).total_cmp(&size(x.1))
    });
    let mut text = format!("{} cell(s) moved, largest first:\n", moved.len());
    for (row, cell) in moved {
        text += &if let Some(exact) = cell.exact_diff {
            format!(
                "  {}: {} {} exactly (simulated {:.4} in {} → {:.4} in {})\n",
                run_label(&row.run),
                cell.outcome,
                signed(exact),
                cell.p_a,
                c.a,
                cell.p_b,
                c.b
            )
        } else {
            format!(
                "  {}: {} {:.4} in {} → {:.4} in {} ({}, 95% CI [{}, {}])\n",
                run_label(&row.run),
                cell.outcome,
                cell.p_a,
                c.a,
                cell.p_b,
                c.b,
                signed(cell.diff),
                signed(cell.ci_low),
                signed(cell.ci_high)
            )
        };
    }
    text.trim_end().to_string()
}

/// A signed difference to 4 places; one too small to show there but not zero in
/// scientific notation, so that a flagged cell never reads +0.0000.
fn signed(v: f64) -> String {
    if v != 0.0 && v.abs() < 0.000_05 {
        format!("{v:+.1e}")
    } else {
        format!("{v:+.4}")
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| {
        if v != 0.0 && v.abs() < 0.000_05 {
            format!("{v:.1e}")
        } else {
            format!("{v:.4}")
        }
    })
}

fn p_value(v: Option<f64>) -> String {
    v.map_or("–".into(), |p| format!("{p:.2e}"))
}

/// An arm's name for a column heading: a file or folder by its last part, at most 24
/// characters (the full names head the output).
pub fn arm_label(name: &str) -> String {
    let path = Path::new(name);
    let short = if name.contains(['/', '\\']) || name.ends_with(".toml") {
        path.file_stem()
            .or_else(|| path.file_name())
            .map_or(name.to_string(), |s| s.to_string_lossy().into_owned())
    } else {
        name.to_string()
    };
    if short.chars().count() > 24 {
        short.chars().take(23).collect::<String>() + "…"
    } else {
        short
    }
}

/// The line that says what the table leaves out.
fn left_out_note(c: &Comparison) -> String {
    match c.left_out {
        0 => String::new(),
        n => format!(
            "{n} cell(s) left out: outcomes that happened in neither arm (and are exactly 0 where exact).\n"
        ),
    }
}

/// The answer as `battlelab compare` prints it (`--format text`).
pub fn text(c: &Comparison) -> String {
    let mut t = format!(
        "compare: {} against {}; each outcome's P in either, and the difference {} − {}\n",
        c.a, c.b, c.b, c.a
    );
    t += &format!(
        "method: {}; {}; correction {} at α = {}\n",
        c.tests_used().join(" / "),
        c.tests_note,
        c.correction.name(),
        c.alpha
    );
    t += &left_out_note(c);
    t += "\n";
    let [pa, pb, diff] = c.arm_headings();
    let (wa, wb, wd) = (
        pa.chars().count().max(8),
        pb.chars().count().max(8),
        diff.chars().count().max(9),
    );
    t += &format!(
        "{:<28} {:<22} {:>wa$} {:>wb$} {:>wd$} {:>21} {:>9} {:>9} {:>4} {:>8}\n",
        "run", "outcome", pa, pb, diff, "95% interval", "exact", "p", "sig", "var ratio"
    );
    for row in &c.rows {
        for cell in &row.cells {
            t += &format!(
                "{:<28} {:<22} {:>wa$.4} {:>wb$.4} {:>wd$} {:>21} {:>9} {:>9} {:>4} {:>8}\n",
                run_label(&row.run),
                cell.outcome,
                cell.p_a,
                cell.p_b,
                signed(cell.diff),
                format!("[{}, {}]", signed(cell.ci_low), signed(cell.ci_high)),
                opt(cell.exact_diff),
                p_value(cell.p_value),
                if cell.significant { "yes" } else { "no" },
                opt(cell.variance_ratio)
            );
        }
    }
    t + "\n" + &summary(c) + "\n"
}

/// The answer as `tables.md` holds it (`--format md`).
pub fn markdown(c: &Comparison) -> String {
    let mut t = format!("## {} against {}\n\n", c.a, c.b);
    t += &format!(
        "Method: {}; {}; correction {} at α = {}. Differences are {} − {}.\n\n",
        c.tests_used().join(" / "),
        c.tests_note,
        c.correction.name(),
        c.alpha,
        c.b,
        c.a
    );
    let left_out = left_out_note(c);
    if !left_out.is_empty() {
        t += &format!("{left_out}\n");
    }
    let [pa, pb, diff] = c.arm_headings().map(|h| h.replace('|', "\\|"));
    t += &format!("| run | outcome | {pa} | {pb} | {diff} | 95% interval | exact | p | significant | variance ratio |\n");
    t += "|---|---|---:|---:|---:|---|---:|---:|---|---:|\n";
    for row in &c.rows {
        for cell in &row.cells {
            t += &format!(
                "| {} | {} | {:.4} | {:.4} | {} | [{}, {}] | {} | {} | {} | {} |\n",
                run_label(&row.run),
                cell.outcome,
                cell.p_a,
                cell.p_b,
                signed(cell.diff),
                signed(cell.ci_low),
                signed(cell.ci_high),
                opt(cell.exact_diff),
                p_value(cell.p_value),
                if cell.significant { "yes" } else { "no" },
                opt(cell.variance_ratio)
            );
        }
    }
    t + "\n" + &summary(c).replace("\n  ", "\n- ") + "\n"
}

/// The answer as `--format json` (and the report's `compare.json`) holds it.
pub fn to_json(c: &Comparison) -> Value {
    let cells: Vec<Value> = c
        .rows
        .iter()
        .flat_map(|row| {
            let run: serde_json::Map<String, Value> = row
                .run
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            row.cells.iter().map(move |cell| {
                json!({
                    "run": run,
                    "outcome": cell.outcome,
                    "p_a": cell.p_a,
                    "p_b": cell.p_b,
                    "diff": cell.diff,
                    "ci_low": cell.ci_low,
                    "ci_high": cell.ci_high,
                    "exact_diff": cell.exact_diff,
                    "p_value": cell.p_value,
                    "significant": cell.significant,
                    "variance_ratio": cell.variance_ratio,
                    "trials_unpaired": cell.trials_unpaired,
                    "test": cell.test.key(),
                })
            })
        })
        .collect();
    json!({
        "a": c.a,
        "b": c.b,
        "left_out": c.left_out,
        "method": {
            "test": c.tests_used().join(" / "),
            "pairing": c.tests_note,
            "correction": c.correction.name(),
            "alpha": c.alpha,
            "paired": c.paired,
        },
        "cells": cells,
        "summary": summary(c),
    })
}
