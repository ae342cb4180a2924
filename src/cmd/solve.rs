//! `battlelab solve FILE --target "A wins >= 0.5" --vary drm`: inverse design. One
//! whole-number setting is set to every value in a range (`levers::set`), each candidate
//! run with the file's seed and blocks (common random numbers), and the answer is where
//! the target holds: the values that meet it, and the edges where it starts or stops
//! holding between two neighbouring values — on rising, falling and non-monotone curves
//! alike — or, plainly, that it holds everywhere or nowhere in the range.
//!
//! Decisions: where every candidate is exact, they are exact (no tolerance): a value meets
//! `>= p` when it is at least p, compared as exact fractions where the system counts
//! exactly in integers (the d6 tables, ratio battles; so P = 1/2 meets ">= 0.5") and as
//! computed elsewhere. The threshold (`best`) is each edge's value on the side where the
//! target holds; for `= p`, the values equal to p, else the nearest. Where candidates are
//! simulated, each is judged on its estimate, and every candidate whose 95% interval
//! straddles p (for `=`: whose paired difference from the nearest has an interval
//! containing 0) is listed as "cannot be told apart".
//!
//! Everything the command line names is checked before any candidate is built: the
//! setting, the `--where` selection against the file's own plan (one run must be left once
//! the varied setting's own column is set aside), a setting the plan sets at that run (A's
//! SP under an odds sweep), and the target.

use std::cmp::Ordering;
use std::sync::Arc;

use anyhow::{bail, Result};
use battlelab::engine::headline::{self, Estimate, Headline, Level, Match, Measured};
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

    /// Whether a value compared with the target so meets it.
    fn holds(self, against_target: Ordering) -> bool {
        match self {
            Relation::Equal => against_target == Ordering::Equal,
            Relation::AtLeast => against_target != Ordering::Less,
            Relation::AtMost => against_target != Ordering::Greater,
        }
    }
}

fn parse_target(text: &str) -> Result<(String, Relation, Level, String)> {
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
    let p = Level::target(value).ok_or_else(|| {
        usage(format!(
            "--target: \"{}\" is not a number (write it as 0.5 or 1/2)",
            battlelab::limits::echo(value.trim())
        ))
    })?;
    let key = key.trim().trim_matches('"').to_string();
    if key.is_empty() {
        bail!(usage(
            "--target names no outcome or metric before the comparison"
        ));
    }
    Ok((key, relation, p, value.trim().to_string()))
}

struct Candidate {
    value: i64,
    measured: Measured,
    estimate: Estimate,
    level: Level,
}

/// Where the target holds among the candidates, in order.
#[derive(Debug, PartialEq)]
struct Verdict {
    /// Per candidate: whether it meets the target.
    holds: Vec<bool>,
    /// Between candidates `i` and `i + 1` where the target starts or stops holding: `i`.
    edges: Vec<usize>,
    /// The answer: the edge values where the target holds (for `=`: the values equal to
    /// the target, else the nearest).
    best: Vec<usize>,
    /// Candidates that cannot be told apart from the answer (simulated runs only).
    apart: Vec<usize>,
}

pub fn solve(args: SolveArgs) -> Result<()> {
    let (pool, _) = pool(args.threads)?;
    let control = interruptible();
    let (target_key, relation, p, p_text) = parse_target(&args.target)?;
    let (document, plan) = Document::load(&args.file, args.trials, args.seed)?;
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
    // Counted in 128 bits: --from and --to may be any whole numbers (i64's extremes too).
    let candidates = i128::from(to) - i128::from(from) + 1;
    if candidates > i128::from(MAX_CANDIDATES) {
        bail!(usage(format!(
            "{candidates} candidates from {from} to {to}; at most {MAX_CANDIDATES}: narrow --from/--to"
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

    // The run, chosen on the file's own plan before any candidate is built: the varied
    // setting's own column (where the file sweeps it) is what the candidates replace.
    let own_axis = lever
        .sweep
        .and_then(|p| plan.axes.iter().position(|a| a == p));
    if let Some(axis) = own_axis {
        if let Some((k, _)) = wanted.iter().find(|(k, _)| *k == plan.axes[axis]) {
            bail!(usage(format!(
                "--where {k}: {k} is the setting --vary sets, so it cannot be held; hold the other columns only"
            )));
        }
    }
    let runs = levers::select(&plan, &wanted).map_err(|e| usage(format!("--where: {e}")))?;
    let without_own = |r: usize| -> (String, Vec<String>) {
        let run = &plan.runs[r];
        (
            run.variant.clone(),
            run.coordinates
                .iter()
                .enumerate()
                .filter(|(a, _)| Some(*a) != own_axis)
                .map(|(_, v)| v.to_string())
                .collect(),
        )
    };
    let mut distinct: Vec<(String, Vec<String>)> = Vec::new();
    for &r in &runs {
        let key = without_own(r);
        if !distinct.contains(&key) {
            distinct.push(key);
        }
    }
    if distinct.len() != 1 {
        let mut axes = vec!["variant".to_string()];
        axes.extend(
            plan.axes
                .iter()
                .enumerate()
                .filter(|(a, _)| Some(*a) != own_axis)
                .map(|(_, name)| name.clone()),
        );
        bail!(usage(format!(
            "{} runs match; hold the others with --where (columns: {}) so that one run is left",
            distinct.len(),
            axes.join(", ")
        )));
    }
    let file_run = runs[0];
    if let Some(by) = levers::overridden(&plan, lever)[file_run] {
        bail!(usage(format!(
            "--vary {}: {} (at {})",
            lever.name,
            lever.refused_by(by),
            plan.describe(file_run)
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        )));
    }

    // The target: a headline, an outcome or a metric of that run.
    let names = document.study.run_names(file_run);
    let headline = document
        .levers
        .headlines
        .clone()
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
    if headline.is_probability() && !(0.0..=1.0).contains(&p.value) {
        bail!(usage(format!(
            "--target: {} is a probability, so the target must be 0 to 1, got {}",
            headline.name, p.value
        )));
    }

    // Every candidate is written, then parsed (and so range-checked), before any dice
    // are rolled.
    let docs = (from..=to)
        .map(|v| {
            levers::set(&document.doc, lever, v)
                .map(|doc| (v, doc))
                .map_err(|e| usage(format!("--vary {}: {e}", lever.name)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut studies = Vec::new();
    for (v, doc) in &docs {
        studies.push((*v, document.study(doc, &format!("{}={v}", lever.name))?));
    }
    let candidate_plan = studies[0].1.plan();
    if studies
        .iter()
        .any(|(_, s)| s.plan().runs.len() != candidate_plan.runs.len())
    {
        bail!(usage(format!(
            "varying {} changes the analysis's runs; vary a setting, not the grid",
            lever.name
        )));
    }
    let run = match levers::select(&candidate_plan, &wanted).as_deref() {
        Ok([run]) => *run,
        _ => bail!(usage(format!(
            "--where: once {} is set, the selection does not leave one run; hold every other column",
            lever.name
        ))),
    };

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
            let measured = headline::measure(&e.arms[0], &headline).ok_or_else(|| {
                usage(format!(
                    "--target: {} is not an outcome of {}={value}'s run",
                    headline.name, lever.name
                ))
            })?;
            Ok(Candidate {
                value,
                estimate: measured.estimate(),
                level: Level::of(&measured),
                measured,
            })
        })
        .collect::<Result<_>>()?;
    let exact = candidates.iter().all(|c| c.estimate.exact.is_some());
    let fractions = exact && candidates.iter().all(|c| c.level.fraction.is_some());
    let verdict = decide(&candidates, relation, &p, exact);

    let run_json: serde_json::Map<String, Value> = std::iter::once((
        "variant".to_string(),
        json!(candidate_plan.runs[run].variant),
    ))
    .chain(
        candidate_plan
            .describe(run)
            .into_iter()
            .map(|(k, v)| (k, json!(v))),
    )
    .collect();
    let words = Words {
        candidates: &candidates,
        verdict: &verdict,
        setting: lever.name,
        relation,
    };
    let point = |c: &Candidate| json!({"value": c.value, "probability": c.estimate.best(), "exact": c.estimate.exact.is_some()});
    let result = json!({
        "parameter": lever.name,
        "target": format!("{} {} {p_text}", headline.key, relation.symbol()),
        "measure": headline.name,
        "run": run_json,
        "verdict": words.verdict(),
        "holds": candidates.iter().zip(&verdict.holds).filter(|(_, h)| **h).map(|(c, _)| c.value).collect::<Vec<_>>(),
        "holds_in": words.ranges(),
        "edges": verdict.edges.iter().map(|&i| json!({
            "between": [candidates[i].value, candidates[i + 1].value],
            "holds_at": if verdict.holds[i] { candidates[i].value } else { candidates[i + 1].value },
            "kind": words.edge_kind(i),
        })).collect::<Vec<_>>(),
        "best": verdict.best.iter().map(|&i| point(&candidates[i])).collect::<Vec<_>>(),
        "cannot_tell_apart": verdict.apart.iter().map(|&i| candidates[i].value).collect::<Vec<_>>(),
        "curve": candidates.iter().zip(&verdict.holds).map(|(c, holds)| json!({
            "value": c.value,
            "probability": c.estimate.best(),
            "fraction": c.level.fraction.as_ref().map(ToString::to_string),
            "ci_low": c.estimate.exact.unwrap_or(c.estimate.ci_low),
            "ci_high": c.estimate.exact.unwrap_or(c.estimate.ci_high),
            "exact": c.estimate.exact.is_some(),
            "holds": holds,
        })).collect::<Vec<_>>(),
        "trials": document.trials,
        "seed": document.seed,
        "method": method(exact, fractions),
    });
    emit(&match args.format {
        Format::Json => serde_json::to_string_pretty(&result).expect("JSON") + "\n",
        Format::Csv => {
            let mut out =
                String::from("value,probability,fraction,ci_low,ci_high,exact,holds,best\n");
            for (i, c) in candidates.iter().enumerate() {
                out.push_str(&format!(
                    "{},{},{},{},{},{},{},{}\n",
                    c.value,
                    c.estimate.best(),
                    c.level
                        .fraction
                        .as_ref()
                        .map_or(String::new(), ToString::to_string),
                    c.estimate.exact.unwrap_or(c.estimate.ci_low),
                    c.estimate.exact.unwrap_or(c.estimate.ci_high),
                    c.estimate.exact.is_some(),
                    verdict.holds[i],
                    verdict.best.contains(&i)
                ));
            }
            out
        }
        Format::Text | Format::Md => {
            let md = matches!(args.format, Format::Md);
            let mut out = format!(
                "{}solve: {} {} {p_text} by varying {} at {}\n",
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
            out.push_str(&format!("\n{}\n", words.verdict()));
            if !verdict.best.is_empty() {
                out.push_str(&format!(
                    "{}: {}{}\n",
                    if relation == Relation::Equal {
                        "best"
                    } else {
                        "threshold"
                    },
                    verdict
                        .best
                        .iter()
                        .map(|&i| format!(
                            "{} = {} ({})",
                            candidates[i].value,
                            fmt(&candidates[i]),
                            if candidates[i].estimate.exact.is_some() {
                                "exact"
                            } else {
                                "simulated"
                            }
                        ))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if verdict.apart.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; cannot be told apart from: {}",
                            verdict
                                .apart
                                .iter()
                                .map(|&i| candidates[i].value.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                ));
            }
            out.push_str(&format!("method: {}\n", method(exact, fractions)));
            out.push_str(&format!(
                "\n| {} | {} | 95% interval | meets the target |\n{}",
                lever.name,
                headline.name,
                if md { "|---|---|---|---|\n" } else { "" }
            ));
            for (i, c) in candidates.iter().enumerate() {
                out.push_str(&format!(
                    "| {}{} | {}{} | [{}, {}] | {} |\n",
                    c.value,
                    if verdict.best.contains(&i) {
                        " ←"
                    } else {
                        ""
                    },
                    fmt(c),
                    if c.estimate.exact.is_some() {
                        " (exact)"
                    } else {
                        ""
                    },
                    num(c.estimate.exact.unwrap_or(c.estimate.ci_low)),
                    num(c.estimate.exact.unwrap_or(c.estimate.ci_high)),
                    if verdict.holds[i] { "yes" } else { "no" },
                ));
            }
            out
        }
    })
}

fn method(exact: bool, fractions: bool) -> &'static str {
    match (exact, fractions) {
        (true, true) => "every candidate exact: decided on exact fractions, no tolerance",
        (true, false) => "every candidate exact: decided on the exact values as computed (this system enumerates in floating point), no tolerance",
        _ => "simulated with common random numbers (same seed and blocks for every candidate); each judged on its estimate; 95% Wilson interval for a probability, Student's t over blocks for a mean; candidates whose paired difference from the best has a 95% interval containing 0 (or, for >= and <=, whose interval straddles the target) cannot be told apart",
    }
}

fn num(v: f64) -> String {
    format!("{v:.6}")
}

/// A candidate's value, with its fraction where it has one.
fn fmt(c: &Candidate) -> String {
    match &c.level.fraction {
        Some(f) if c.estimate.exact.is_some() && f.to_string().len() <= 24 => {
            format!("{} = {f}", num(c.estimate.best()))
        }
        _ => num(c.estimate.best()),
    }
}

/// The verdict in words.
struct Words<'a> {
    candidates: &'a [Candidate],
    verdict: &'a Verdict,
    setting: &'a str,
    relation: Relation,
}

impl Words<'_> {
    /// The candidates that meet the target as ranges ("-6..-2", "3").
    fn ranges(&self) -> Vec<String> {
        let mut ranges = Vec::new();
        let mut i = 0;
        let holds = &self.verdict.holds;
        while i < holds.len() {
            if !holds[i] {
                i += 1;
                continue;
            }
            let start = i;
            while i + 1 < holds.len() && holds[i + 1] {
                i += 1;
            }
            let (a, b) = (self.candidates[start].value, self.candidates[i].value);
            ranges.push(if a == b {
                a.to_string()
            } else {
                format!("{a}..{b}")
            });
            i += 1;
        }
        ranges
    }

    fn edge_kind(&self, i: usize) -> &'static str {
        match (self.relation, self.verdict.holds[i]) {
            (Relation::Equal, _) if !self.verdict.holds[i] && !self.verdict.holds[i + 1] => {
                "crosses the target"
            }
            (_, true) => "stops holding",
            (_, false) => "starts holding",
        }
    }

    fn verdict(&self) -> String {
        let c = self.candidates;
        let (first, last) = (c[0].value, c[c.len() - 1].value);
        let holds = &self.verdict.holds;
        if holds.iter().all(|h| *h) {
            return format!("holds everywhere in {first}..{last}: no edge in this range");
        }
        let edges = self
            .verdict
            .edges
            .iter()
            .map(|&i| {
                let (a, b) = (c[i].value, c[i + 1].value);
                match self.edge_kind(i) {
                    "stops holding" => format!("stops holding after {a} (between {a} and {b})"),
                    "starts holding" => format!("starts holding at {b} (between {a} and {b})"),
                    _ => format!("crosses the target between {a} and {b}"),
                }
            })
            .collect::<Vec<_>>();
        if holds.iter().all(|h| !*h) {
            return if edges.is_empty() {
                format!("holds nowhere in {first}..{last}")
            } else {
                format!("holds at no value in {first}..{last}; {}", edges.join("; "))
            };
        }
        format!(
            "holds for {} = {} (of {first}..{last}); {}",
            self.setting,
            self.ranges().join(", "),
            edges.join("; ")
        )
    }
}

/// Where the target holds, its edges, and the answer. Exact candidates are compared with
/// the target exactly ([`Level::compare`]); simulated ones on their estimates.
fn decide(c: &[Candidate], relation: Relation, p: &Level, exact: bool) -> Verdict {
    let against: Vec<Ordering> = c.iter().map(|c| c.level.compare(p)).collect();
    let holds: Vec<bool> = against.iter().map(|&o| relation.holds(o)).collect();
    // An edge: the target starts or stops holding, or (for `=`) the curve passes the
    // target between two values neither of which equals it.
    let edges: Vec<usize> = (0..c.len().saturating_sub(1))
        .filter(|&i| {
            holds[i] != holds[i + 1]
                || (relation == Relation::Equal
                    && against[i] != Ordering::Equal
                    && against[i + 1] != Ordering::Equal
                    && against[i] != against[i + 1])
        })
        .collect();
    let best: Vec<usize> = match relation {
        Relation::Equal if holds.iter().any(|h| *h) => (0..c.len()).filter(|&i| holds[i]).collect(),
        Relation::Equal => {
            let distance = |i: usize| (c[i].estimate.best() - p.value).abs();
            let nearest = (0..c.len()).map(distance).fold(f64::INFINITY, f64::min);
            (0..c.len()).filter(|&i| distance(i) == nearest).collect()
        }
        Relation::AtLeast | Relation::AtMost => {
            let mut at: Vec<usize> = edges
                .iter()
                .map(|&i| if holds[i] { i } else { i + 1 })
                .collect();
            at.dedup();
            at
        }
    };
    if exact {
        return Verdict {
            holds,
            edges,
            best,
            apart: Vec::new(),
        };
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
            .filter(|&i| c[i].estimate.ci_low <= p.value && p.value <= c[i].estimate.ci_high)
            .collect(),
    };
    Verdict {
        holds,
        edges,
        best,
        apart,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_the_key_the_relation_and_the_number() {
        let (k, r, p, _) = parse_target("A wins >= 0.5").unwrap();
        assert_eq!((k.as_str(), r, p.value), ("A wins", Relation::AtLeast, 0.5));
        assert_eq!(p.fraction.unwrap().to_string(), "1/2");
        let (k, r, _, _) = parse_target("sp_lost_b = 3").unwrap();
        assert_eq!((k.as_str(), r), ("sp_lost_b", Relation::Equal));
        let (_, _, third, text) = parse_target("E <= 1/3").unwrap();
        assert_eq!(text, "1/3");
        assert_eq!(third.fraction.unwrap().to_string(), "1/3");
        assert!(parse_target("A wins > 0.5").is_err());
        assert!(parse_target("A wins = lots").is_err());
    }

    fn exact(value: i64, fraction: &str) -> Candidate {
        let level = Level::target(fraction).unwrap();
        let measured = Measured {
            blocks: vec![(1, level.value)],
            exact: Some(level.value),
            fraction: level.fraction.clone(),
            probability: true,
        };
        Candidate {
            value,
            estimate: measured.estimate(),
            level: Level::of(&measured),
            measured,
        }
    }

    fn values(c: &[Candidate], indices: &[usize]) -> Vec<i64> {
        indices.iter().map(|&i| c[i].value).collect()
    }

    #[test]
    fn a_rising_curve_starts_holding_at_its_threshold() {
        let c = [
            exact(-1, "1/5"),
            exact(0, "2/5"),
            exact(1, "3/5"),
            exact(2, "4/5"),
        ];
        let v = decide(&c, Relation::AtLeast, &Level::target("0.6").unwrap(), true);
        assert_eq!(values(&c, &v.best), vec![1], "3/5 meets 0.6 exactly");
        assert_eq!(v.holds, vec![false, false, true, true]);
        assert_eq!(v.edges, vec![1]);
        let v = decide(
            &c,
            Relation::AtLeast,
            &Level::target("0.6000001").unwrap(),
            true,
        );
        assert_eq!(values(&c, &v.best), vec![2]);
        let v = decide(&c, Relation::Equal, &Level::target("0.5").unwrap(), true);
        assert_eq!(values(&c, &v.best), vec![0, 1], "none equal: the nearest");
        assert_eq!(v.edges, vec![1], "the curve crosses 0.5 between 0 and 1");
        let v = decide(&c, Relation::AtMost, &Level::target("0.1").unwrap(), true);
        assert!(v.best.is_empty() && v.holds.iter().all(|h| !h));
    }

    #[test]
    fn a_falling_curve_stops_holding_at_its_threshold() {
        // P(no loss) of a d6 roll needing a modified 1: (3 − drm)/6 for drm −3 … 2.
        let c: Vec<Candidate> = (-3..=2)
            .map(|d| exact(d, &format!("{}/6", (1 - d).clamp(0, 6))))
            .collect();
        let v = decide(&c, Relation::AtLeast, &Level::target("0.5").unwrap(), true);
        assert_eq!(
            values(&c, &v.best),
            vec![-2],
            "P = 3/6 meets >= 0.5 exactly"
        );
        assert_eq!(v.holds, vec![true, true, false, false, false, false]);
        let words = Words {
            candidates: &c,
            verdict: &v,
            setting: "drm",
            relation: Relation::AtLeast,
        };
        assert_eq!(
            words.verdict(),
            "holds for drm = -3..-2 (of -3..2); stops holding after -2 (between -2 and -1)"
        );
    }

    #[test]
    fn a_curve_that_rises_and_falls_has_two_edges_and_everywhere_or_nowhere_is_said() {
        let c = [
            exact(0, "1/6"),
            exact(1, "3/6"),
            exact(2, "4/6"),
            exact(3, "2/6"),
        ];
        let half = Level::target("1/2").unwrap();
        let v = decide(&c, Relation::AtLeast, &half, true);
        assert_eq!(values(&c, &v.best), vec![1, 2]);
        assert_eq!(v.edges, vec![0, 2]);
        let words = Words {
            candidates: &c,
            verdict: &v,
            setting: "drm",
            relation: Relation::AtLeast,
        };
        assert_eq!(words.ranges(), vec!["1..2"]);
        assert_eq!(words.edge_kind(0), "starts holding");
        assert_eq!(words.edge_kind(2), "stops holding");
        let everywhere = decide(&c, Relation::AtMost, &Level::target("1").unwrap(), true);
        let words = Words {
            candidates: &c,
            verdict: &everywhere,
            setting: "drm",
            relation: Relation::AtMost,
        };
        assert_eq!(
            words.verdict(),
            "holds everywhere in 0..3: no edge in this range"
        );
        assert!(everywhere.best.is_empty());
        let nowhere = decide(&c, Relation::AtLeast, &Level::target("0.9").unwrap(), true);
        let words = Words {
            candidates: &c,
            verdict: &nowhere,
            setting: "drm",
            relation: Relation::AtLeast,
        };
        assert_eq!(words.verdict(), "holds nowhere in 0..3");
    }
}
