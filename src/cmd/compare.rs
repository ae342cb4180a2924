//! `battlelab compare`: did a change matter? Two variants of one analysis, two analyses
//! with the same plan, or two report folders, compared cell by cell (run × outcome).
//!
//! The arms of one file, or of two files with the same seed and trials, draw the same dice
//! block by block, so each cell is decided by the paired test on per-block differences;
//! otherwise by the independent test; where both arms are exact, exactly. See
//! `battlelab_core::engine::compare` for the method, which every output names. The
//! comparison of one plan's arms and its printing are `battlelab_core::comparison`,
//! which the report page's module runs too; this file adds the thread pool, the progress
//! bar, report folders compared by their totals, the CSV and the report folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Result};
use serde_json::{json, Value};

use battlelab::analysis::AxisValue;
use battlelab::engine::compare::{self, Arm, Correction};
use battlelab::progress::ProgressWatcher;
use battlelab::report::{self, ReportError};
use battlelab::sim::RunControl;
use battlelab::systems::Study;
use battlelab::table::csv_field;
use battlelab_core::comparison::{
    self, arm_label, markdown, text, to_json, Comparison, Decision, Pairing, Row,
};

use super::{emit, interruptible, pool, usage, writing_report};
use crate::cli::{CompareArgs, Format};

/// The multiple-comparison correction the command line asks for.
fn correction(args: &CompareArgs) -> Correction {
    if args.fdr {
        Correction::BenjaminiHochberg
    } else {
        Correction::Holm
    }
}

/// How the cells are decided: the correction and α the command line asks for.
fn decision(args: &CompareArgs) -> Decision {
    Decision {
        correction: correction(args),
        alpha: args.alpha,
    }
}

/// What a compare report is of (its identity's name): the two arms, and the file whose
/// variants they are.
fn compared_name(args: &CompareArgs) -> String {
    match (args.inputs.as_slice(), &args.variants) {
        ([file], Some(variants)) => {
            let (a, b) = variants.split_once(',').unwrap_or((variants, ""));
            format!(
                "{} in {}",
                battlelab::output::compared(a.trim(), b.trim()),
                file.display()
            )
        }
        (inputs, _) => {
            let names: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
            battlelab::output::compared(
                names.first().map_or("", String::as_str),
                names.get(1).map_or("", String::as_str),
            )
        }
    }
}

pub fn compare(args: CompareArgs) -> Result<()> {
    let name = compared_name(&args);
    if let Some(out) = &args.out {
        // Before any work, and never over what is being compared.
        let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
        battlelab::output::check_target(
            out,
            &inputs,
            &battlelab::output::Identity::new("compare", &name),
            args.replace,
        )?;
    }
    let (pool, _) = pool(args.threads)?;
    let control = interruptible();
    let comparison = match args.inputs.as_slice() {
        [file] => {
            let Some(variants) = &args.variants else {
                bail!(usage(
                    "with one analysis file, say which two variants: --variants A,B"
                ));
            };
            let (a, b) = comparison::variant_names(variants).map_err(usage)?;
            let study = battlelab::systems::load(file)?.study;
            pool.install(|| variants_of_one(&study, &a, &b, &args, &control))?
        }
        [first, second] if first.is_dir() && second.is_dir() => {
            if args.variants.is_some() {
                bail!(usage("--variants is for one analysis file"));
            }
            pool.install(|| two_reports(first, second, &args, &control))?
        }
        [first, second] => {
            if args.variants.is_some() {
                bail!(usage("--variants is for one analysis file"));
            }
            let a = battlelab::systems::load(first)?.study;
            let b = battlelab::systems::load(second)?.study;
            let names = (first.display().to_string(), second.display().to_string());
            pool.install(|| two_studies(&a, &b, names, &args, &control))?
        }
        _ => bail!(usage(
            "give one analysis file with --variants A,B, two analysis files, or two report folders"
        )),
    };
    let mut comparison = comparison;
    // Outcomes that happened in neither arm left out, then the correction.
    comparison.finish();
    if let Some(out) = &args.out {
        // One analysis file's variants: the page's panel recomputes its runs, and
        // compares the edited file's variants as this command did.
        let source = match (args.inputs.as_slice(), &args.variants) {
            ([file], Some(_)) => battlelab::toml_input::read_analysis_file(file)
                .ok()
                .map(|text| {
                    report::tryit::Source::of_compare_report(
                        file,
                        &text,
                        json!({
                            "variants": [comparison.a, comparison.b],
                            "trials": args.trials,
                            "seed": args.seed,
                            "fdr": args.fdr,
                            "alpha": args.alpha,
                        }),
                    )
                }),
            _ => None,
        };
        writing_report(out, || {
            Ok(write_report(&comparison, &name, out, source.as_ref())?)
        })?;
    }
    emit(&match args.format {
        Format::Text => text(&comparison),
        Format::Csv => csv(&comparison),
        Format::Json => serde_json::to_string_pretty(&to_json(&comparison)).expect("JSON") + "\n",
        Format::Md => markdown(&comparison),
    })
}

/// Runs every pair of `pairing` with a progress bar (the core's comparison); `plan` is
/// arm a's.
// The command line's studies are boxed; the core's comparison takes them as `Priceable`.
#[allow(clippy::borrowed_box)]
fn run_pairs(
    a: &Box<dyn Study>,
    b: &Box<dyn Study>,
    plan: &battlelab::engine::Plan,
    pairing: &Pairing,
    args: &CompareArgs,
    control: &Arc<RunControl>,
) -> Result<Comparison> {
    let watcher = ProgressWatcher::start(Arc::clone(control), pairing.battles(), args.quiet);
    let result = comparison::compare(a, b, plan, pairing, decision(args), control);
    watcher.finish();
    Ok(result?)
}

// The command line's studies are boxed; the core's comparison takes them as `Priceable`.
#[allow(clippy::borrowed_box)]
fn variants_of_one(
    study: &Box<dyn Study>,
    a: &str,
    b: &str,
    args: &CompareArgs,
    control: &Arc<RunControl>,
) -> Result<Comparison> {
    let plan = study.plan();
    let header = study.header();
    let trials = args.trials.unwrap_or(header.trials);
    let seed = args.seed.unwrap_or(header.seed);
    let pairing = comparison::variants_of_one(&plan, a, b, trials, seed).map_err(usage)?;
    run_pairs(study, study, &plan, &pairing, args, control)
}

// The command line's studies are boxed; the core's comparison takes them as `Priceable`.
#[allow(clippy::borrowed_box)]
fn two_studies(
    a: &Box<dyn Study>,
    b: &Box<dyn Study>,
    names: (String, String),
    args: &CompareArgs,
    control: &Arc<RunControl>,
) -> Result<Comparison> {
    let (pa, pb) = (a.plan(), b.plan());
    let (ha, hb) = (a.header(), b.header());
    if ha.system != hb.system || pa.axes != pb.axes || pa.runs.len() != pb.runs.len() {
        bail!(usage(format!(
            "{} and {} do not have the same plan (system {} vs {}, axes [{}] vs [{}], {} vs {} runs); compare analyses of one system over the same grid",
            names.0,
            names.1,
            ha.system,
            hb.system,
            pa.axes.join(", "),
            pb.axes.join(", "),
            pa.runs.len(),
            pb.runs.len()
        )));
    }
    if let Some(k) = (0..pa.runs.len()).find(|&k| pa.runs[k].coordinates != pb.runs[k].coordinates)
    {
        bail!(usage(format!(
            "{} and {} differ at run {}: their grids are not the same",
            names.0,
            names.1,
            k + 1
        )));
    }
    let trials = [
        args.trials.unwrap_or(ha.trials),
        args.trials.unwrap_or(hb.trials),
    ];
    let seeds = [args.seed.unwrap_or(ha.seed), args.seed.unwrap_or(hb.seed)];
    // Pairing holds only when both arms draw the same dice in the same blocks.
    let paired = trials[0] == trials[1] && seeds[0] == seeds[1];
    let pairing = Pairing {
        a: names.0,
        b: names.1,
        pairs: (0..pa.runs.len()).map(|k| (k, k)).collect(),
        trials,
        seeds,
        paired,
    };
    let mut c = run_pairs(a, b, &pa, &pairing, args, control)?;
    if !paired {
        c.tests_note = format!(
            "independent arms: seeds {} and {}, trials {} and {} differ, so the dice are not shared",
            seeds[0], seeds[1], trials[0], trials[1]
        );
    }
    Ok(c)
}

/// Two report folders: re-simulated from their analysis files (paired) when they share
/// seed, trials and block size; otherwise compared from their totals (independent).
fn two_reports(
    a: &Path,
    b: &Path,
    args: &CompareArgs,
    control: &Arc<RunControl>,
) -> Result<Comparison> {
    let manifest = |dir: &Path| -> Result<Value> {
        let text = battlelab::output::read_capped(
            &dir.join(battlelab::output::MANIFEST),
            battlelab::output::MAX_MANIFEST_BYTES,
        )
        .map_err(|e| {
            usage(format!(
                "{} is not a battlelab report folder (cannot read its {}: {e}); give two report folders or two analysis files",
                dir.display(),
                battlelab::output::MANIFEST
            ))
        })?;
        serde_json::from_str(&text).map_err(|e| {
            usage(format!(
                "{}: its {} is not JSON ({e}); is it a battlelab report?",
                dir.display(),
                battlelab::output::MANIFEST
            ))
            .into()
        })
    };
    let (ma, mb) = (manifest(a)?, manifest(b)?);
    let same = ["seed", "trials", "block_trials"]
        .iter()
        .all(|k| ma.get(k).is_some() && ma.get(k) == mb.get(k));
    let load = |dir: &Path, m: &Value| -> Result<Box<dyn Study>> {
        let text = battlelab::output::read_capped(
            &dir.join(battlelab::pipeline::ANALYSIS_COPY),
            battlelab::limits::MAX_FILE_BYTES,
        )
        .map_err(|e| {
            usage(format!(
                "{}: cannot read its {} to re-run it: {e}",
                dir.display(),
                battlelab::pipeline::ANALYSIS_COPY
            ))
        })?;
        let name = m["name"].as_str().unwrap_or("analysis").to_string();
        Ok(battlelab::systems::parse(
            &PathBuf::from(format!("{name}.toml")),
            &text,
        )?)
    };
    if same {
        let (sa, sb) = (load(a, &ma)?, load(b, &mb)?);
        let names = (a.display().to_string(), b.display().to_string());
        let mut c = two_studies(&sa, &sb, names, args, control)?;
        c.tests_note = format!(
            "paired: both reports have seed {}, {} trials and the same blocks, so their analyses were re-run block by block",
            ma["seed"], ma["trials"]
        );
        return Ok(c);
    }
    totals_of_reports(a, b, args)
}

/// Reports that do not share their dice: their `results.csv` totals, independent test.
fn totals_of_reports(a: &Path, b: &Path, args: &CompareArgs) -> Result<Comparison> {
    let (ta, tb) = (read_results(a)?, read_results(b)?);
    if ta.axes != tb.axes {
        bail!(usage(format!(
            "{} and {} are not over the same axes ([{}] vs [{}])",
            a.display(),
            b.display(),
            ta.axes.join(", "),
            tb.axes.join(", ")
        )));
    }
    let mut rows = Vec::new();
    let mut coordinates = Vec::new();
    for (key, arm_a) in &ta.runs {
        let Some((_, arm_b)) = tb.runs.iter().find(|(k, _)| k == key) else {
            continue;
        };
        let cells = compare::compare_arms(arm_a, arm_b, false);
        rows.push(Row {
            run: ta
                .axes
                .iter()
                .cloned()
                .zip(key.iter().cloned())
                .filter(|(_, v)| !v.is_empty())
                .collect(),
            cells,
        });
        coordinates.push(key.iter().map(|v| AxisValue::Text(v.clone())).collect());
    }
    if rows.is_empty() {
        bail!(usage(format!(
            "{} and {} have no run in common (the same variant and axis values)",
            a.display(),
            b.display()
        )));
    }
    Ok(Comparison {
        a: a.display().to_string(),
        b: b.display().to_string(),
        left_out: 0,
        paired: false,
        tests_note: "independent arms: the reports do not share seed, trials and blocks, so their totals are compared".into(),
        correction: correction(args),
        alpha: args.alpha,
        rows,
        axes: ta.axes,
        coordinates,
    })
}

/// A report's results by run (its axis values as printed) and outcome.
struct Totals {
    axes: Vec<String>,
    runs: Vec<(Vec<String>, Arm)>,
}

/// Splits one CSV line (fields with commas are quoted, quotes doubled).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

fn read_results(dir: &Path) -> Result<Totals> {
    let path = dir.join("results.csv");
    let text = battlelab::output::read_small_file(&path)
        .map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let not_ours = |what: String| {
        usage(format!(
            "{}: {what}; is it a battlelab report's results.csv?",
            path.display()
        ))
    };
    let mut lines = text.lines();
    let header = csv_fields(lines.next().unwrap_or_default());
    let at = |name: &str| -> Result<usize> {
        Ok(header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| not_ours(format!("no `{name}` column")))?)
    };
    let (outcome, trials, count, exact) =
        (at("outcome")?, at("trials")?, at("count")?, at("exact")?);
    if header.first().map(String::as_str) != Some("system")
        || header.get(1).map(String::as_str) != Some("variant")
        || outcome < 2
    {
        bail!(not_ours(
            "its columns do not start with `system, variant` before `outcome`".into()
        ));
    }
    // Axis columns: between `variant` and `outcome`, labels rather than odds ratios.
    let axes: Vec<String> = header[2..outcome]
        .iter()
        .filter(|h| !header.contains(&format!("{h}_label")))
        .cloned()
        .collect();
    let axis_at: Vec<usize> = axes
        .iter()
        .map(|a| header.iter().position(|h| h == a).unwrap_or(0))
        .collect();
    let mut runs: Vec<(Vec<String>, Arm)> = Vec::new();
    for line in lines {
        // Text cells as the report's user wrote them (the CSV made formulas safe).
        let f: Vec<String> = csv_fields(line)
            .into_iter()
            .map(|cell| battlelab::report::csv_cell::restored(&cell).to_string())
            .collect();
        if f.len() != header.len() {
            bail!(not_ours(format!(
                "a row with {} fields under {} columns",
                f.len(),
                header.len()
            )));
        }
        let mut key: Vec<String> = vec![f[1].clone()];
        key.extend(axis_at.iter().map(|&i| {
            let label = header
                .iter()
                .position(|h| *h == format!("{}_label", header[i]));
            label.map_or_else(|| f[i].clone(), |l| f[l].clone())
        }));
        let whole = |i: usize| -> Result<u64> {
            Ok(f[i].parse().map_err(|_| {
                not_ours(format!(
                    "`{}` is not a whole number in a row: {}",
                    header[i],
                    battlelab::limits::echo(&f[i])
                ))
            })?)
        };
        let (n, c) = (whole(trials)?, whole(count)?);
        if n == 0 || c > n {
            bail!(not_ours(format!("a row counts {c} of {n} trials")));
        }
        let e: Option<f64> = f[exact].parse().ok();
        match runs.iter_mut().find(|(k, _)| *k == key) {
            Some((_, arm)) => {
                arm.outcomes.push(f[outcome].clone());
                arm.blocks[0].1.push(c);
                if let Some(ex) = &mut arm.exact {
                    ex.push(e);
                }
            }
            None => runs.push((
                key,
                Arm::from_totals(vec![f[outcome].clone()], n, vec![c], Some(vec![e])),
            )),
        }
    }
    let mut axes_with_variant = vec!["variant".to_string()];
    axes_with_variant.extend(axes);
    Ok(Totals {
        axes: axes_with_variant,
        runs,
    })
}

fn csv(c: &Comparison) -> String {
    let mut t = String::new();
    for a in &c.axes {
        t += &csv_field(a);
        t.push(',');
    }
    let [pa, pb, diff] = c.arm_headings();
    t += &format!(
        "outcome,{},{},{},ci_low,ci_high,exact_diff,p_value,significant,variance_ratio,trials_unpaired,test\n",
        csv_field(&pa),
        csv_field(&pb),
        csv_field(&diff)
    );
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for (row, coords) in c.rows.iter().zip(&c.coordinates) {
        for cell in &row.cells {
            for v in coords {
                if !matches!(v, AxisValue::Unset) {
                    t += &csv_field(&v.to_string());
                }
                t.push(',');
            }
            t += &format!(
                "{},{},{},{},{},{},{},{},{},{},{},{}\n",
                csv_field(&cell.outcome),
                cell.p_a,
                cell.p_b,
                cell.diff,
                cell.ci_low,
                cell.ci_high,
                num(cell.exact_diff),
                num(cell.p_value),
                cell.significant,
                num(cell.variance_ratio),
                num(cell.trials_unpaired),
                cell.test.key()
            );
        }
    }
    t
}

/// The compare report folder: `compare.csv`, a difference heatmap per outcome over the
/// first two axes, `tables.md` and a manifest.
fn write_report(
    c: &Comparison,
    name: &str,
    out: &Path,
    source: Option<&report::tryit::Source>,
) -> Result<(), ReportError> {
    report::write_atomically(out, |dir| {
        report::write_text(dir, "compare.csv", &csv(c))?;
        report::write_text(dir, "tables.md", &markdown(c))?;
        report::write_text(
            dir,
            "compare.json",
            &(serde_json::to_string_pretty(&to_json(c)).expect("JSON") + "\n"),
        )?;
        // Heatmaps over the first two axes with two or more values, other axes at their
        // first value.
        let varied: Vec<usize> = (0..c.axes.len())
            .filter(|&i| {
                let mut values: Vec<String> =
                    c.coordinates.iter().map(|k| k[i].to_string()).collect();
                values.dedup();
                values.len() > 1
            })
            .take(2)
            .collect();
        if let [x, y] = varied[..] {
            let values_of = |i: usize| {
                let mut v: Vec<String> = Vec::new();
                for k in &c.coordinates {
                    let s = k[i].to_string();
                    if !v.contains(&s) {
                        v.push(s);
                    }
                }
                v
            };
            let (xs, ys) = (values_of(x), values_of(y));
            // Every outcome some run kept; where a run left it out (0 in both arms), its
            // difference is 0.
            let mut outcomes: Vec<String> = Vec::new();
            for cell in c.rows.iter().flat_map(|r| &r.cells) {
                if !outcomes.contains(&cell.outcome) {
                    outcomes.push(cell.outcome.clone());
                }
            }
            for outcome in outcomes {
                let grid: Vec<Vec<f64>> = ys
                    .iter()
                    .map(|yv| {
                        xs.iter()
                            .map(|xv| {
                                c.rows
                                    .iter()
                                    .zip(&c.coordinates)
                                    .find(|(_, k)| {
                                        k[x].to_string() == *xv && k[y].to_string() == *yv
                                    })
                                    .map_or(f64::NAN, |(r, _)| {
                                        r.cells
                                            .iter()
                                            .find(|cell| cell.outcome == outcome)
                                            .map_or(0.0, |cell| {
                                                cell.exact_diff.unwrap_or(cell.diff)
                                            })
                                    })
                            })
                            .collect()
                    })
                    .collect();
                battlelab::chart::heatmap_difference(
                    &dir.join(format!("diff_{}", battlelab::analysis::slug(&outcome))),
                    &format!("{outcome}: {} − {}", arm_label(&c.b), arm_label(&c.a)),
                    &c.axes[x],
                    &xs,
                    &c.axes[y],
                    &ys,
                    &grid,
                )?;
            }
        }
        report::write_manifest(
            dir,
            &json!({"tool": "battlelab", "kind": "compare", "name": name, "a": c.a, "b": c.b}),
        )?;
        // One analysis file's variants: the panel recomputes its runs. Two files or two
        // report folders have no one analysis to recompute (the page says so).
        report::index::write_index_with(dir, None, None, source)
    })
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::csv_fields;

    #[test]
    fn quoted_csv_fields_split_as_written() {
        assert_eq!(
            csv_fields("a,\"b, c\",\"d \"\"e\"\"\""),
            ["a", "b, c", "d \"e\""]
        );
    }
}
