//! `battlelab solve FILE --target "A wins >= 0.5" --vary drm`: inverse design. One
//! whole-number setting is set to every value in a range (`levers::set`), each candidate
//! run with the file's seed and blocks (common random numbers), and the value hitting the
//! target is chosen.
//!
//! Decisions: where every candidate is exact, the choice is exact (no tolerance):
//! `= p` picks the value(s) whose exact value is nearest p, `>= p` the smallest value
//! whose exact value is at least p, `<= p` the smallest at most p. Where candidates are
//! simulated, the choice is made on the estimates, and every other candidate whose paired
//! difference from the chosen one has a 95% interval containing 0 is listed as "cannot be
//! told apart" (for `>=`/`<=`, those whose interval straddles p).

use std::sync::Arc;

use anyhow::{bail, Result};
use battlelab::engine::headline::{self, Estimate, Headline, Match, Measured};
use battlelab::levers;
use battlelab::progress::ProgressWatcher;
use serde_json::{json, Value};

use super::value::Document;
use super::{emit, interruptible, pool, usage};
use crate::cli::{Format, SolveArgs};

/// Most candidates one solve tries.
const MAX_CANDIDATES: i64 = 1001;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Relation {
    Equal,
    AtLeast,
    AtMost,
}

impl Relation {
    fn symbol(self) -> &'static str {
        match self {
            Relation::Equal => "=",
            Relation::AtLeast => ">=",
            Relation::AtMost => "<=",
        }
    }
}

fn parse_target(text: &str) -> Result<(String, Relation, f64)> {
    let (key, relation, value) = if let Some((k, v)) = text.split_once(">=") {
        (k, Relation::AtLeast, v)
    } else if let Some((k, v)) = text.split_once("<=") {
        (k, Relation::AtMost, v)
    } else if let Some((k, v)) = text.split_once('=') {
        (k, Relation::Equal, v)
    } else {
        bail!(usage(format!(
            "--target is \"<outcome or metric> = p\", \">= p\" or \"<= p\", e.g. \"A wins >= 0.5\"; got \"{}\"",
            battlelab::limits::echo(text)
        )));
    };
    let p: f64 = value
        .trim()
        .parse()
        .ok()
        .filter(|p: &f64| p.is_finite())
        .ok_or_else(|| {
            usage(format!(
                "--target: \"{}\" is not a number",
                battlelab::limits::echo(value.trim())
            ))
        })?;
    let key = key.trim().trim_matches('"').to_string();
    if key.is_empty() {
        bail!(usage(
            "--target names no outcome or metric before the comparison"
        ));
    }
    Ok((key, relation, p))
}

struct Candidate {
    value: i64,
    measured: Measured,
    estimate: Estimate,
}

pub fn solve(args: SolveArgs) -> Result<()> {
    let (pool, _) = pool(args.threads)?;
    let control = interruptible();
    let (target_key, relation, p) = parse_target(&args.target)?;
    let (document, _) = Document::load(&args.file, args.trials, args.seed)?;
    let system = document.system.clone();
    let lever = document
        .levers
        .lever(&args.vary, &system)
        .map_err(|e| usage(format!("--vary: {e}")))?;
    let (from, to) = (
        args.from.unwrap_or(lever.search.0),
        args.to.unwrap_or(lever.search.1),
    );
    if from > to {
        bail!(usage(format!("--from {from} is above --to {to}")));
    }
    if to - from + 1 > MAX_CANDIDATES {
        bail!(usage(format!(
            "{} candidates from {from} to {to}; at most {MAX_CANDIDATES}: narrow --from/--to",
            to - from + 1
        )));
    }
    let wanted: Vec<(String, String)> = args
        .at
        .iter()
        .map(|w| {
            w.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| {
                    usage(format!(
                        "--where takes AXIS=VALUE, got \"{}\"",
                        battlelab::limits::echo(w)
                    ))
                })
        })
        .collect::<Result<_, _>>()?;

    // Every candidate is parsed (and so range-checked) before any dice are rolled.
    let mut studies = Vec::new();
    for v in from..=to {
        let doc = levers::set(&document.doc, lever, v)
            .map_err(|e| usage(format!("--vary {}: {e}", lever.name)))?;
        studies.push((v, document.study(&doc, &format!("{}={v}", lever.name))?));
    }
    let plan = studies[0].1.plan();
    let runs = levers::select(&plan, &wanted).map_err(|e| usage(format!("--where: {e}")))?;
    if runs.len() != 1 {
        let mut axes = vec!["variant".to_string()];
        axes.extend(plan.axes.iter().cloned());
        bail!(usage(format!(
            "{} runs match; hold the others with --where (columns: {}) so that one run is left",
            runs.len(),
            axes.join(", ")
        )));
    }
    let run = runs[0];
    if studies
        .iter()
        .any(|(_, s)| s.plan().runs.len() != plan.runs.len())
    {
        bail!(usage(format!(
            "varying {} changes the analysis's runs; vary a setting, not the grid",
            lever.name
        )));
    }

    // The target: a headline, an outcome or a metric of that run.
    let names = studies[0].1.run_names(run);
    let headline = (document.levers.headlines)()
        .into_iter()
        .find(|h| h.key == target_key || h.name == target_key)
        .or_else(|| {
            names.outcomes.contains(&target_key).then(|| {
                Headline::outcomes(
                    &target_key,
                    &format!("P({target_key})"),
                    Match::Is(vec![target_key.clone()]),
                )
            })
        })
        .or_else(|| {
            names
                .metrics
                .contains(&target_key)
                .then(|| Headline::metric(&target_key))
        })
        .ok_or_else(|| {
            usage(format!(
                "--target: no outcome or metric \"{}\"; outcomes: {}; metrics: {}",
                battlelab::limits::echo(&target_key),
                names.outcomes.join(", "),
                if names.metrics.is_empty() {
                    "none".to_string()
                } else {
                    names.metrics.join(", ")
                }
            ))
        })?;
    if headline.is_probability() && !(0.0..=1.0).contains(&p) {
        bail!(usage(format!(
            "--target: {} is a probability, so the target must be 0 to 1, got {p}",
            headline.name
        )));
    }

    let total = studies.len() as u64 * document.trials;
    let watcher = ProgressWatcher::start(Arc::clone(&control), total, args.quiet);
    let evaluated = pool.install(|| {
        studies
            .iter()
            .map(|(v, s)| Ok((*v, document.evaluate(&**s, Some(&[run]), &control)?)))
            .collect::<Result<Vec<_>>>()
    });
    watcher.finish();
    let candidates: Vec<Candidate> = evaluated?
        .into_iter()
        .map(|(value, e)| {
            let measured = headline::measure(&e.arms[0], &headline).expect("checked");
            let estimate = measured.estimate();
            Candidate {
                value,
                measured,
                estimate,
            }
        })
        .collect();
    let exact = candidates.iter().all(|c| c.estimate.exact.is_some());
    let (best, apart) = choose(&candidates, relation, p, exact);

    let run_json: serde_json::Map<String, Value> =
        std::iter::once(("variant".to_string(), json!(plan.runs[run].variant)))
            .chain(
                plan.describe(run)
                    .into_iter()
                    .filter(|(k, _)| Some(k.as_str()) != lever.sweep)
                    .map(|(k, v)| (k, json!(v))),
            )
            .collect();
    let point = |c: &Candidate| json!({"value": c.value, "probability": c.estimate.best(), "exact": c.estimate.exact.is_some()});
    let result = json!({
        "parameter": lever.name,
        "target": format!("{} {} {p}", headline.key, relation.symbol()),
        "measure": headline.name,
        "run": run_json,
        "best": best.iter().map(|&i| point(&candidates[i])).collect::<Vec<_>>(),
        "cannot_tell_apart": apart.iter().map(|&i| candidates[i].value).collect::<Vec<_>>(),
        "curve": candidates.iter().map(|c| json!({
            "value": c.value,
            "probability": c.estimate.best(),
            "ci_low": c.estimate.exact.unwrap_or(c.estimate.ci_low),
            "ci_high": c.estimate.exact.unwrap_or(c.estimate.ci_high),
            "exact": c.estimate.exact.is_some(),
        })).collect::<Vec<_>>(),
        "trials": document.trials,
        "seed": document.seed,
        "method": if exact {
            "every candidate exact: decided exactly, no tolerance"
        } else {
            "simulated with common random numbers (same seed and blocks for every candidate); 95% Wilson interval for a probability, Student's t over blocks for a mean; candidates whose paired difference from the best has a 95% interval containing 0 (or, for >= and <=, whose interval straddles the target) cannot be told apart"
        },
    });
    emit(&match args.format {
        Format::Json => serde_json::to_string_pretty(&result).expect("JSON") + "\n",
        Format::Csv => {
            let mut out = String::from("value,probability,ci_low,ci_high,exact,best\n");
            for (i, c) in candidates.iter().enumerate() {
                out.push_str(&format!(
                    "{},{},{},{},{},{}\n",
                    c.value,
                    c.estimate.best(),
                    c.estimate.exact.unwrap_or(c.estimate.ci_low),
                    c.estimate.exact.unwrap_or(c.estimate.ci_high),
                    c.estimate.exact.is_some(),
                    best.contains(&i)
                ));
            }
            out
        }
        Format::Text | Format::Md => {
            let md = matches!(args.format, Format::Md);
            let mut out = format!(
                "{}solve: {} {} {p} by varying {} at {}\n",
                if md { "## " } else { "" },
                headline.name,
                relation.symbol(),
                lever.name,
                run_json
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            if best.is_empty() {
                out.push_str(&format!(
                    "\nno value from {from} to {to} reaches the target\n"
                ));
            } else {
                out.push_str(&format!(
                    "\nbest: {}{}\n",
                    best.iter()
                        .map(|&i| format!(
                            "{} = {} ({})",
                            candidates[i].value,
                            fmt(candidates[i].estimate.best()),
                            if candidates[i].estimate.exact.is_some() {
                                "exact"
                            } else {
                                "simulated"
                            }
                        ))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if apart.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; cannot be told apart from: {}",
                            apart
                                .iter()
                                .map(|&i| candidates[i].value.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                ));
            }
            out.push_str(&format!(
                "\n| {} | {} | 95% interval |\n{}",
                lever.name,
                headline.name,
                if md { "|---|---|---|\n" } else { "" }
            ));
            for (i, c) in candidates.iter().enumerate() {
                out.push_str(&format!(
                    "| {}{} | {}{} | [{}, {}] |\n",
                    c.value,
                    if best.contains(&i) { " ←" } else { "" },
                    fmt(c.estimate.best()),
                    if c.estimate.exact.is_some() {
                        " (exact)"
                    } else {
                        ""
                    },
                    fmt(c.estimate.exact.unwrap_or(c.estimate.ci_low)),
                    fmt(c.estimate.exact.unwrap_or(c.estimate.ci_high)),
                ));
            }
            out
        }
    })
}

fn fmt(v: f64) -> String {
    format!("{v:.6}")
}

/// The chosen candidates (indices) and those that cannot be told apart from them.
fn choose(c: &[Candidate], relation: Relation, p: f64, exact: bool) -> (Vec<usize>, Vec<usize>) {
    let value = |i: usize| c[i].estimate.best();
    let best: Vec<usize> = match relation {
        Relation::Equal => {
            let nearest = (0..c.len())
                .map(|i| (value(i) - p).abs())
                .fold(f64::INFINITY, f64::min);
            (0..c.len())
                .filter(|&i| (value(i) - p).abs() == nearest)
                .collect()
        }
        Relation::AtLeast => (0..c.len()).find(|&i| value(i) >= p).into_iter().collect(),
        Relation::AtMost => (0..c.len()).find(|&i| value(i) <= p).into_iter().collect(),
    };
    if exact {
        return (best, Vec::new());
    }
    let apart = match relation {
        Relation::Equal => (0..c.len())
            .filter(|i| !best.contains(i))
            .filter(|&i| {
                best.iter().any(|&b| {
                    let d = headline::paired_difference(&c[b].measured, &c[i].measured);
                    d.ci_low <= 0.0 && 0.0 <= d.ci_high
                })
            })
            .collect(),
        Relation::AtLeast | Relation::AtMost => (0..c.len())
            .filter(|i| !best.contains(i))
            .filter(|&i| c[i].estimate.ci_low <= p && p <= c[i].estimate.ci_high)
            .collect(),
    };
    (best, apart)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_the_key_the_relation_and_the_number() {
        let (k, r, p) = parse_target("A wins >= 0.5").unwrap();
        assert_eq!((k.as_str(), r, p), ("A wins", Relation::AtLeast, 0.5));
        let (k, r, _) = parse_target("sp_lost_b = 3").unwrap();
        assert_eq!((k.as_str(), r), ("sp_lost_b", Relation::Equal));
        assert!(parse_target("A wins > 0.5").is_err());
        assert!(parse_target("A wins = lots").is_err());
    }

    fn exact(value: i64, p: f64) -> Candidate {
        let measured = Measured {
            blocks: vec![(1, p)],
            exact: Some(p),
            probability: true,
        };
        Candidate {
            value,
            estimate: measured.estimate(),
            measured,
        }
    }

    #[test]
    fn exact_choices_have_no_tolerance() {
        let c = [exact(-1, 0.2), exact(0, 0.4), exact(1, 0.6), exact(2, 0.8)];
        assert_eq!(choose(&c, Relation::AtLeast, 0.6, true).0, vec![2]);
        assert_eq!(choose(&c, Relation::AtLeast, 0.600_000_1, true).0, vec![3]);
        assert_eq!(choose(&c, Relation::Equal, 0.5, true).0, vec![1, 2]);
        assert_eq!(
            choose(&c, Relation::AtMost, 0.1, true).0,
            Vec::<usize>::new()
        );
    }
}
