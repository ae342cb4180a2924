//! `run`, and `start`/`step`/`finish` for a progress bar: the plan's blocks through the
//! core's [`Job`] (the driver's block loop, the driver's block order), so the counts are
//! `battlelab run`'s for the same seed and trials whatever the steps.

use std::sync::Mutex;

use battlelab_core::analysis::{AxisValue, TablesOptions};
use battlelab_core::engine::dynamic::{Finished, Job, RunResult};
use battlelab_core::engine::headline::{Headline, HeadlineKind};
use battlelab_core::engine::Plan;
use battlelab_core::exact::Fraction;
use battlelab_core::limits::{MAX_SEED, MAX_TRIALS};
use battlelab_core::stats::{rounded_percentages, wilson_interval, Z95};
use serde_json::{json, Value};

use crate::{Parsed, Refusal};

/// The job `start` began, until `finish`.
struct Started {
    job: Box<dyn Job>,
    shown: Shown,
}

/// What the response gives besides the runs' results: the plan, the headline, how exact
/// results print, and the tables printed from the rules as read (the study's, taken when
/// the job starts).
struct Shown {
    plan: Plan,
    headline: Option<Headline>,
    printing: Printing,
    printed: Vec<Value>,
}

impl Shown {
    fn of(parsed: &Parsed) -> Self {
        Self {
            plan: parsed.study.plan(),
            headline: crate::describe::headlines(parsed).into_iter().next(),
            printing: Printing::of(parsed),
            // The tables `tables.md` prints from the rules as the edited file reads them
            // (a rules file's tables as printed and as modified), by the command line's
            // code: the page reprints its own with them.
            printed: parsed
                .study
                .printed()
                .tables()
                .iter()
                .map(|t| t.to_json())
                .collect(),
        }
    }
}

/// How the analysis's rulebook tables print a run's exact results: its `[tables]`
/// options and its system (whose expected values the d6 tables print).
#[derive(Clone)]
struct Printing {
    tables: TablesOptions,
    system: String,
}

impl Printing {
    fn of(parsed: &Parsed) -> Self {
        let header = parsed.study.header();
        Self {
            tables: header.tables,
            system: header.system.to_string(),
        }
    }
}

static STARTED: Mutex<Option<Started>> = Mutex::new(None);

fn started() -> std::sync::MutexGuard<'static, Option<Started>> {
    STARTED.lock().unwrap_or_else(|p| p.into_inner())
}

/// The seed and trials of a run: the request's, else the file's, within the command
/// line's bounds (`--seed`, `--trials`).
pub(crate) fn seed_and_trials(
    parsed: &Parsed,
    seed: Option<u64>,
    trials: Option<u64>,
) -> Result<(u64, u64), Refusal> {
    let header = parsed.study.header();
    let seed = seed.unwrap_or(header.seed);
    let trials = trials.unwrap_or(header.trials);
    if seed > MAX_SEED {
        return Err(Refusal::request(format!(
            "seed {seed} is not in 0..={MAX_SEED} (the bound of `--seed`)"
        )));
    }
    if !(1..=MAX_TRIALS).contains(&trials) {
        return Err(Refusal::request(format!(
            "trials {trials} is not in 1..={MAX_TRIALS} (the bound of `--trials`)"
        )));
    }
    Ok((seed, trials))
}

/// Every run, simulated with `trials` trials from `seed` (the file's where not given),
/// and exact where the system enumerates it; with `exact_only`, the exact results alone.
pub fn run(
    parsed: &Parsed,
    seed: Option<u64>,
    trials: Option<u64>,
    exact_only: bool,
) -> Result<Value, Refusal> {
    let (seed, trials) = seed_and_trials(parsed, seed, trials)?;
    let trials = if exact_only { 0 } else { trials };
    let job = parsed.study.clone().start(trials, seed);
    results(job, &Shown::of(parsed))
}

/// Starts a Monte Carlo job; `step` runs its blocks, `finish` gives `run`'s answer.
pub fn start(parsed: &Parsed, seed: Option<u64>, trials: Option<u64>) -> Result<Value, Refusal> {
    let (seed, trials) = seed_and_trials(parsed, seed, trials)?;
    let job = parsed.study.clone().start(trials, seed);
    let blocks = job.blocks();
    *started() = Some(Started {
        job,
        shown: Shown::of(parsed),
    });
    Ok(json!({ "blocks": blocks }))
}

/// Runs the next `blocks` blocks of the started job.
pub fn step(blocks: u64) -> Result<Value, Refusal> {
    let mut started = started();
    let job = &mut started
        .as_mut()
        .ok_or_else(|| Refusal::request("no job is started: send \"start\" first"))?
        .job;
    let done = job
        .step(blocks)
        .map_err(|_| Refusal::request("the run was stopped"))?;
    Ok(json!({ "done": done, "blocks": job.blocks() }))
}

/// Runs what is left of the started job and gives every run's results.
pub fn finish() -> Result<Value, Refusal> {
    let Started { job, shown } = started()
        .take()
        .ok_or_else(|| Refusal::request("no job is started: send \"start\" first"))?;
    results(job, &shown)
}

fn results(job: Box<dyn Job>, shown: &Shown) -> Result<Value, Refusal> {
    let (plan, headline, printing) = (&shown.plan, shown.headline.as_ref(), &shown.printing);
    let Finished { runs, derived } = job
        .finish()
        .map_err(|_| Refusal::request("the run was stopped"))?;
    let values: Vec<Value> = runs.iter().map(|r| headline_value(r, headline)).collect();
    Ok(json!({
        "runs": plan.runs.iter().zip(&runs).map(|(key, r)| run_json(key.variant.as_str(), &key.coordinates, r, printing)).collect::<Vec<_>>(),
        "headline": headline.map(|h| json!({"name": h.name, "key": h.key, "values": values})),
        // The numbers the rulebook tables derive from several runs (a best request, a
        // survival curve, a difference of means), as the system computes them for
        // `tables.md`.
        "derived": derived.iter().map(|d| d.to_json()).collect::<Vec<_>>(),
        "printed": shown.printed,
    }))
}

/// A run as `results.csv` and `distributions.csv` hold it: each outcome's count,
/// simulated probability and Wilson 95% interval, exact probability and fraction.
fn run_json(variant: &str, coordinates: &[AxisValue], r: &RunResult, printing: &Printing) -> Value {
    let n = r.trials;
    let simulated = |count: u64| (n > 0).then(|| count as f64 / n as f64);
    let exact = exact_counts(r);
    let names: Vec<String> = r.outcomes.iter().map(|o| o.name.clone()).collect();
    json!({
        "variant": variant,
        "coordinates": coordinates.iter().map(AxisValue::to_json).collect::<Vec<_>>(),
        "trials": n,
        "exact": r.exact,
        "outcomes": r.outcomes.iter().map(|o| json!({
            "name": o.name,
            "count": (n > 0).then_some(o.count),
            "probability": simulated(o.count),
            "ci": (n > 0).then(|| { let (lo, hi) = wilson_interval(o.count, n, Z95); [lo, hi] }),
            "exact": o.exact,
            "fraction": o.fraction,
        })).collect::<Vec<_>>(),
        // Each outcome's percentage in tenths, the row summing to exactly 100% (as the
        // rulebook tables print a run's outcomes: `stats::rounded_percentages`).
        "tenths": rounded_percentages(&r.outcomes.iter().map(|o| if r.exact { o.exact.unwrap_or(0.0) } else { o.count as f64 / n.max(1) as f64 }).collect::<Vec<_>>(), 1).units,
        // Each outcome's exact chance as the analysis's rulebook tables print it (its
        // `[tables]` format: "1/3", "2 in 6", or "33.3" with "†" where moved), and the
        // expected values a d6 table's rulebook table prints: null where not exact.
        "chances": exact.as_ref().map(|(counts, total)| printing.tables.print_chances(counts, *total).texts),
        "expected": exact.as_ref().map(|(counts, total)| expected_values(&printing.system, &names, counts, *total)),
        "distributions": r.distributions.iter().map(|d| json!({
            "metric": d.metric,
            "values": (0..d.counts.len() as u64).map(|i| d.first + i).collect::<Vec<_>>(),
            "counts": (n > 0).then_some(&d.counts),
            "probabilities": d.counts.iter().map(|&c| simulated(c)).collect::<Vec<_>>(),
            "exact": d.exact,
            "mean": (n > 0).then(|| d.mean()),
            "exact_mean": d.exact_mean(),
        })).collect::<Vec<_>>(),
    })
}

/// A run's exact chances as whole counts over one total, from its outcomes' fractions
/// (the smallest common denominator: every printed chance and expectation is the same
/// over any multiple of it); `None` where the run is not exact or a fraction is not one
/// of 128-bit integers.
fn exact_counts(r: &RunResult) -> Option<(Vec<u64>, u64)> {
    if !r.exact || r.outcomes.is_empty() {
        return None;
    }
    let fractions: Vec<(u128, u128)> = r
        .outcomes
        .iter()
        .map(|o| {
            let text = o.fraction.as_deref()?;
            let (numerator, denominator) = text.split_once('/').unwrap_or((text, "1"));
            let denominator: u128 = denominator.parse().ok()?;
            (denominator > 0).then_some(())?;
            Some((numerator.parse().ok()?, denominator))
        })
        .collect::<Option<_>>()?;
    let gcd = |mut a: u128, mut b: u128| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let total = fractions.iter().try_fold(1u128, |common, &(_, d)| {
        (common / gcd(common, d)).checked_mul(d)
    })?;
    let counts = fractions
        .iter()
        .map(|&(numerator, d)| u64::try_from(numerator.checked_mul(total / d)?).ok())
        .collect::<Option<Vec<u64>>>()?;
    Some((counts, u64::try_from(total).ok()?))
}

/// The expected values a d6 table's rulebook table prints beside its chances (none for
/// other systems): each `{"name", "fraction", "value"}`, exact.
fn expected_values(system: &str, outcomes: &[String], counts: &[u64], total: u64) -> Vec<Value> {
    battlelab_core::systems::d6_tables::lookup::outcome_values(system, outcomes)
        .into_iter()
        .map(|(name, values)| {
            let sum: u128 = counts
                .iter()
                .zip(&values)
                .map(|(&c, &v)| u128::from(c) * u128::from(v))
                .sum();
            let e = Fraction::new(sum, u128::from(total.max(1)));
            json!({"name": name, "fraction": e.to_string(), "value": e.to_f64()})
        })
        .collect()
}

/// The headline of one run: the exact value where the run is exact, else the simulated.
fn headline_value(r: &RunResult, headline: Option<&Headline>) -> Value {
    let Some(headline) = headline else {
        return Value::Null;
    };
    let n = r.trials.max(1) as f64;
    match &headline.kind {
        HeadlineKind::Outcomes(matching) => {
            let chosen = r.outcomes.iter().filter(|o| matching.accepts(&o.name));
            if r.exact {
                json!(chosen.map(|o| o.exact.unwrap_or(0.0)).sum::<f64>())
            } else if r.trials > 0 {
                json!(chosen.map(|o| o.count).sum::<u64>() as f64 / n)
            } else {
                Value::Null
            }
        }
        HeadlineKind::Metric(metric) => r
            .distributions
            .iter()
            .find(|d| &d.metric == metric)
            .and_then(|d| d.exact_mean().or_else(|| (r.trials > 0).then(|| d.mean())))
            .map_or(Value::Null, |m| json!(m)),
    }
}
