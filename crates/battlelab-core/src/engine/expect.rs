//! Balance assertions: `[[expect]]` in any analysis file, decided by `battlelab check`.
//!
//! Why this module exists: a rulebook promises odds ("at 1:1 the attacker wins at most
//! 55%"); a later rules change must not break them silently, and a test of them must not
//! be flaky. So an expectation is decided **exactly** where its run is exact (no
//! randomness, no tolerance), and otherwise by a **sequential test** that adds blocks only
//! until the bound is decided at the stated confidence, deterministically for a seed.
//!
//! The sequential test is an anytime-valid confidence sequence built from Hoeffding's
//! inequality and a union bound over a fixed schedule of looks: the k-th look (k = 0, 1,
//! …) sees the first 2^k blocks and uses the interval `mean ± R·√(ln(2/α_k) / 2n)` with
//! α_k = α_run / 2^(k+1), where R is the quantity's range (1 for a probability, the
//! metric's largest minus smallest value for a mean), so the chance that any look's
//! interval misses the truth is at most Σ α_k ≤ α_run. An expectation over several runs
//! ("for every DRM") splits α = 1 − confidence evenly between them (Bonferroni), so the
//! whole expectation holds at its confidence. A bound is PASS when a look's interval lies
//! inside it, FAIL when the interval lies outside it, and UNDECIDED when neither happens by
//! the trial cap — never a pass.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::compare::Arm;
use super::Plan;
use crate::analysis::{AnalysisError, AxisValue};
use crate::limits;
use crate::sim::BLOCK_TRIALS;

/// What an expectation bounds.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// The probability of a named outcome.
    Outcome(String),
    /// The mean of a named metric.
    Metric(String),
}

/// The bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    AtLeast(f64),
    AtMost(f64),
    Between(f64, f64),
}

impl Bound {
    /// The verdict for an interval `[lo, hi]` known to hold the truth.
    fn judge(self, lo: f64, hi: f64) -> Option<Status> {
        let (inside, outside) = match self {
            Bound::AtLeast(b) => (lo >= b, hi < b),
            Bound::AtMost(b) => (hi <= b, lo > b),
            Bound::Between(a, b) => (lo >= a && hi <= b, hi < a || lo > b),
        };
        if inside {
            Some(Status::Pass)
        } else if outside {
            Some(Status::Fail)
        } else {
            None
        }
    }
}

/// A validated expectation.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    pub line: usize,
    /// The entry as written, on one line (cut short).
    pub written: String,
    pub target: Target,
    pub bound: Bound,
    pub confidence: f64,
    /// The runs it holds at (every run matching its `where`).
    pub runs: Vec<usize>,
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    expect: Vec<Spanned<Spec>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    #[serde(rename = "where")]
    at: Option<BTreeMap<String, Spanned<toml::Value>>>,
    outcome: Option<Spanned<String>>,
    metric: Option<Spanned<String>>,
    at_least: Option<Spanned<toml::Value>>,
    at_most: Option<Spanned<toml::Value>>,
    between: Option<Spanned<Vec<toml::Value>>>,
    confidence: Option<Spanned<toml::Value>>,
}

/// A number written as an integer or a float.
fn number(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) if f.is_finite() => Some(*f),
        _ => None,
    }
}

/// What a run of the plan can be asked about.
pub struct RunNames {
    pub outcomes: Vec<String>,
    pub metrics: Vec<String>,
}

impl RunNames {
    /// The outcomes and metrics `system` reports for `run` (from its empty counts).
    pub fn of<S: super::System>(system: &S, run: usize) -> Self {
        let empty = system.empty(run);
        Self {
            outcomes: system
                .outcomes(run, &empty, None)
                .into_iter()
                .map(|o| o.name)
                .collect(),
            metrics: system
                .distributions(run, &empty, None)
                .into_iter()
                .map(|d| d.metric)
                .collect(),
        }
    }
}

/// Reads and validates the `[[expect]]` entries of `text` against `plan`; `names(run)`
/// gives the outcomes and metrics of a run. Errors name the file, the line and what is
/// allowed.
pub fn parse(
    file: &str,
    text: &str,
    plan: &Plan,
    names: &dyn Fn(usize) -> RunNames,
) -> Result<Vec<Expectation>, AnalysisError> {
    let parsed: File =
        toml::from_str(text).map_err(|e| crate::toml_input::describe_error(file, text, &e))?;
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let error = |offset: usize, field: &str, message: String| AnalysisError::Invalid {
        file: file.to_string(),
        line: Some(line_of(offset)),
        field: field.to_string(),
        message,
    };
    let mut out = Vec::new();
    for (index, entry) in parsed.expect.iter().enumerate() {
        let field = |key: &str| format!("expect[{index}].{key}");
        let span = entry.span();
        let spec = entry.get_ref();
        // The entry as written, in one canonical line (a `[[expect]]` table spans several).
        let written = {
            let mut parts: Vec<String> = Vec::new();
            if let Some(at) = &spec.at {
                let pairs: Vec<String> = at
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", v.get_ref()))
                    .collect();
                parts.push(format!("where = {{ {} }}", pairs.join(", ")));
            }
            if let Some(o) = &spec.outcome {
                parts.push(format!("outcome = {:?}", o.get_ref()));
            }
            if let Some(m) = &spec.metric {
                parts.push(format!("metric = {:?}", m.get_ref()));
            }
            for (key, v) in [("at_least", &spec.at_least), ("at_most", &spec.at_most)] {
                if let Some(v) = v {
                    parts.push(format!("{key} = {}", v.get_ref()));
                }
            }
            if let Some(v) = &spec.between {
                let values: Vec<String> = v.get_ref().iter().map(ToString::to_string).collect();
                parts.push(format!("between = [{}]", values.join(", ")));
            }
            if let Some(c) = &spec.confidence {
                parts.push(format!("confidence = {}", c.get_ref()));
            }
            format!("{{ {} }}", parts.join(", "))
        };
        // Runs matching `where`: every key a column of the plan (or `variant`), every value
        // one the grid takes there.
        let mut runs: Vec<usize> = (0..plan.runs.len()).collect();
        for (key, value) in spec.at.iter().flatten() {
            let wanted = match value.get_ref() {
                toml::Value::String(s) => AxisValue::Text(s.clone()),
                toml::Value::Integer(i) => AxisValue::Int(*i),
                other => {
                    return Err(error(
                        value.span().start,
                        &field(&format!("where.{key}")),
                        format!(
                            "a value is text or a whole number, got {}",
                            limits::echo(&other.to_string())
                        ),
                    ))
                }
            };
            let (value_at, all): (Box<dyn Fn(usize) -> AxisValue>, Vec<String>) =
                if key == "variant" {
                    let names = plan.variants().iter().map(|v| v.to_string()).collect();
                    (
                        Box::new(|r: usize| AxisValue::Text(plan.runs[r].variant.clone())),
                        names,
                    )
                } else if let Some(a) = plan.axes.iter().position(|a| a == key) {
                    (
                        Box::new(move |r: usize| plan.runs[r].coordinates[a].clone()),
                        plan.axis_values(a),
                    )
                } else {
                    let mut allowed = vec!["variant".to_string()];
                    allowed.extend(plan.axes.iter().cloned());
                    return Err(error(
                        value.span().start,
                        &field("where"),
                        format!(
                            "\"{}\" is not a swept parameter of this analysis; allowed: {}",
                            limits::echo(key),
                            allowed.join(", ")
                        ),
                    ));
                };
            // A variant named by a number; odds written as the sweep may write them
            // ("3:2", "3-2", "6:4").
            let wanted = match wanted {
                AxisValue::Int(i) if key == "variant" => AxisValue::Text(i.to_string()),
                AxisValue::Text(text)
                    if (0..plan.runs.len())
                        .any(|r| matches!(value_at(r), AxisValue::Odds { .. })) =>
                {
                    crate::rules::parse_odds_ratio(&text).map_or(
                        AxisValue::Text(text),
                        |(larger, smaller)| AxisValue::Odds { larger, smaller },
                    )
                }
                wanted => wanted,
            };
            if !(0..plan.runs.len()).any(|r| value_at(r) == wanted) {
                return Err(error(
                    value.span().start,
                    &field(&format!("where.{key}")),
                    format!(
                        "{} is not on the grid; {key} takes: {}",
                        limits::echo(&wanted.to_string()),
                        all.join(", ")
                    ),
                ));
            }
            runs.retain(|&r| value_at(r) == wanted);
        }
        if runs.is_empty() {
            return Err(error(
                span.start,
                &field("where"),
                "no run matches all of these values together".into(),
            ));
        }
        let target = match (&spec.outcome, &spec.metric) {
            (Some(o), None) => {
                // Every matching run must have the outcome (variants may name theirs
                // differently).
                let missing = runs.iter().find(|&&r| !names(r).outcomes.contains(o.get_ref()));
                if let Some(&r) = missing {
                    let known = names(r).outcomes;
                    return Err(error(
                        o.span().start,
                        &field("outcome"),
                        format!(
                            "unknown outcome \"{}\" (at a run this expectation covers); allowed: {}",
                            limits::echo(o.get_ref()),
                            known.join(", ")
                        ),
                    ));
                }
                Target::Outcome(o.get_ref().clone())
            }
            (None, Some(m)) => {
                let missing = runs.iter().find(|&&r| !names(r).metrics.contains(m.get_ref()));
                if let Some(&r) = missing {
                    let known = names(r).metrics;
                    return Err(error(
                        m.span().start,
                        &field("metric"),
                        format!(
                            "unknown metric \"{}\"; allowed: {}",
                            limits::echo(m.get_ref()),
                            known.join(", ")
                        ),
                    ));
                }
                Target::Metric(m.get_ref().clone())
            }
            _ => {
                return Err(error(
                    span.start,
                    &field("outcome"),
                    "give either outcome = \"…\" (a probability) or metric = \"…\" (a mean), one of them".into(),
                ))
            }
        };
        let probability = matches!(target, Target::Outcome(_));
        let checked = |v: &Spanned<toml::Value>, key: &str| -> Result<f64, AnalysisError> {
            let x = number(v.get_ref())
                .ok_or_else(|| error(v.span().start, &field(key), "a bound is a number".into()))?;
            if probability && !(0.0..=1.0).contains(&x) {
                return Err(error(
                    v.span().start,
                    &field(key),
                    format!("a probability's bound is 0 to 1, got {x}"),
                ));
            }
            Ok(x)
        };
        let bound = match (&spec.at_least, &spec.at_most, &spec.between) {
            (Some(v), None, None) => Bound::AtLeast(checked(v, "at_least")?),
            (None, Some(v), None) => Bound::AtMost(checked(v, "at_most")?),
            (None, None, Some(v)) => {
                let [lo, hi] = v.get_ref().as_slice() else {
                    return Err(error(
                        v.span().start,
                        &field("between"),
                        "between = [low, high]: two numbers".into(),
                    ));
                };
                let lo_v = Spanned::new(v.span(), lo.clone());
                let hi_v = Spanned::new(v.span(), hi.clone());
                let (lo, hi) = (checked(&lo_v, "between")?, checked(&hi_v, "between")?);
                if lo > hi {
                    return Err(error(
                        v.span().start,
                        &field("between"),
                        format!("the low bound {lo} is above the high bound {hi}"),
                    ));
                }
                Bound::Between(lo, hi)
            }
            _ => {
                return Err(error(
                    span.start,
                    &field("at_least"),
                    "give one bound: at_least = …, at_most = … or between = [low, high]".into(),
                ))
            }
        };
        let confidence = match &spec.confidence {
            None => 0.99,
            Some(v) => {
                let c = number(v.get_ref())
                    .filter(|c| *c > 0.5 && *c < 1.0)
                    .ok_or_else(|| {
                        error(
                            v.span().start,
                            &field("confidence"),
                            "a confidence is above 0.5 and below 1, e.g. 0.99".into(),
                        )
                    })?;
                c
            }
        };
        out.push(Expectation {
            line: line_of(span.start),
            written: if written.chars().count() > 160 {
                written.chars().take(160).collect::<String>() + "…"
            } else {
                written
            },
            target,
            bound,
            confidence,
            runs,
        });
    }
    Ok(out)
}

/// How an expectation came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    Undecided,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Undecided => "UNDECIDED",
        }
    }
}

/// The verdict on one run of an expectation.
#[derive(Clone, Debug, PartialEq)]
pub struct RunVerdict {
    pub run: usize,
    pub status: Status,
    pub estimate: f64,
    /// The exact value as a fraction, where the run counts exactly.
    pub fraction: Option<String>,
    pub interval: (f64, f64),
    /// Trials simulated (0 when decided exactly).
    pub trials: u64,
    pub exact: bool,
}

/// Decides `expectation` on each of its runs. `arm(run, blocks, with_exact)` simulates the
/// given blocks of a run (whole blocks of `BLOCK_TRIALS` trials) and, when asked, computes
/// its exact results; `max_blocks` caps the blocks per run.
pub fn decide<E>(
    expectation: &Expectation,
    max_blocks: u64,
    arm: &mut dyn FnMut(usize, std::ops::Range<u64>, bool) -> Result<Arm, E>,
) -> Result<Vec<RunVerdict>, E> {
    let alpha_run = (1.0 - expectation.confidence) / expectation.runs.len() as f64;
    let mut verdicts = Vec::with_capacity(expectation.runs.len());
    for &run in &expectation.runs {
        // The exact result, if the run has one, decides without a die rolled.
        let first = arm(run, 0..0, true)?;
        let exact = match &expectation.target {
            Target::Outcome(name) => first.outcomes.iter().position(|o| o == name).and_then(|i| {
                let p = first.exact.as_ref()?.get(i).copied().flatten()?;
                let f = first
                    .fractions
                    .as_ref()
                    .and_then(|f| f.get(i).cloned().flatten());
                Some((p, f))
            }),
            Target::Metric(name) => first
                .metrics
                .iter()
                .find(|m| &m.name == name)
                .and_then(|m| m.exact_mean.map(|v| (v, None))),
        };
        if let Some((value, fraction)) = exact {
            let status = expectation
                .bound
                .judge(value, value)
                .unwrap_or(Status::Fail);
            verdicts.push(RunVerdict {
                run,
                status,
                estimate: value,
                fraction,
                interval: (value, value),
                trials: 0,
                exact: true,
            });
            continue;
        }
        let mut sim = first;
        let mut done = 0u64;
        let mut look = 0u32;
        let verdict = loop {
            let target_blocks = (1u64 << look.min(62)).min(max_blocks);
            let more = arm(run, done..target_blocks, false)?;
            sim.extend(more);
            done = target_blocks;
            let alpha_k = alpha_run / 2f64.powi(look as i32 + 1);
            let (estimate, n, range, support) = match &expectation.target {
                Target::Outcome(name) => {
                    let i = sim.outcomes.iter().position(|o| o == name).unwrap_or(0);
                    let n = sim.trials();
                    (sim.count(i) as f64 / n.max(1) as f64, n, 1.0, (0.0, 1.0))
                }
                Target::Metric(name) => {
                    let m = sim
                        .metrics
                        .iter()
                        .find(|m| &m.name == name)
                        .expect("validated");
                    let (lo, hi) = (m.range.0 as f64, m.range.1 as f64);
                    (m.mean(), m.trials(), hi - lo, (lo, hi))
                }
            };
            let half = range * ((2.0 / alpha_k).ln() / (2.0 * n.max(1) as f64)).sqrt();
            let interval = (
                (estimate - half).max(support.0),
                (estimate + half).min(support.1),
            );
            let status = expectation.bound.judge(interval.0, interval.1);
            if status.is_some() || done >= max_blocks {
                break RunVerdict {
                    run,
                    status: status.unwrap_or(Status::Undecided),
                    estimate,
                    fraction: None,
                    interval,
                    trials: done * BLOCK_TRIALS,
                    exact: false,
                };
            }
            look += 1;
        };
        verdicts.push(verdict);
    }
    Ok(verdicts)
}

/// An expectation's verdict over its runs: FAIL if any run fails, else UNDECIDED if any
/// is undecided, else PASS; with the run that decided it (the failing one, the undecided
/// one, or the closest to the bound).
pub fn overall(verdicts: &[RunVerdict]) -> (Status, &RunVerdict) {
    let pick = |s: Status| verdicts.iter().find(|v| v.status == s);
    if let Some(v) = pick(Status::Fail) {
        return (Status::Fail, v);
    }
    if let Some(v) = pick(Status::Undecided) {
        return (Status::Undecided, v);
    }
    (Status::Pass, &verdicts[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_judge_intervals() {
        assert_eq!(Bound::AtMost(0.5).judge(0.1, 0.4), Some(Status::Pass));
        assert_eq!(Bound::AtMost(0.5).judge(0.6, 0.7), Some(Status::Fail));
        assert_eq!(Bound::AtMost(0.5).judge(0.4, 0.6), None);
        assert_eq!(
            Bound::Between(0.2, 0.3).judge(0.25, 0.25),
            Some(Status::Pass)
        );
        assert_eq!(Bound::AtLeast(0.2).judge(0.1, 0.15), Some(Status::Fail));
    }

    /// A plan of two variants ("1-2" and "base") over two odds columns.
    fn odds_plan() -> Plan {
        let mut runs = Vec::new();
        for variant in ["1-2", "base"] {
            for (larger, smaller) in [(1, 1), (2, 1)] {
                runs.push(super::super::RunKey {
                    variant: variant.into(),
                    coordinates: vec![AxisValue::Odds { larger, smaller }],
                });
            }
        }
        Plan {
            axes: vec!["odds".into()],
            runs,
            unit: "rolls",
        }
    }

    fn runs_of(where_: &str) -> Result<Vec<usize>, AnalysisError> {
        let text = format!("[[expect]]\nwhere = {{ {where_} }}\noutcome = \"A\"\nat_least = 0.1\n");
        let names = |_| RunNames {
            outcomes: vec!["A".into()],
            metrics: vec![],
        };
        Ok(parse("t.toml", &text, &odds_plan(), &names)?.remove(0).runs)
    }

    #[test]
    fn where_reads_odds_as_the_sweep_does_and_variants_by_name() {
        // Odds as the sweep may write them, reduced: all name the 2:1 column.
        for odds in ["\"2:1\"", "\"2-1\"", "\"4:2\""] {
            assert_eq!(
                runs_of(&format!("odds = {odds}")).unwrap(),
                [1, 3],
                "{odds}"
            );
        }
        // A variant's name is matched as written, even where it looks like odds.
        assert_eq!(runs_of("variant = \"1-2\"").unwrap(), [0, 1]);
        let error = runs_of("odds = \"3:1\"").unwrap_err().to_string();
        assert!(
            error.contains("3:1 is not on the grid; odds takes: 1:1, 2:1"),
            "{error}"
        );
    }
}
