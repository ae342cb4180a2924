//! What the field battles' rulebook tables derive from all of a variant's runs: "Battle
//! outcomes", whose columns are the results some run reaches and whose rows are each
//! run's percentages of those, rounded to add up to 100 (a `†` on a value moved).
//!
//! Why this module exists: `tables.md` prints these and the report page's panel reprints
//! them after an edit; both take the printed cells from here
//! ([`crate::engine::System::derived`]). A cell's key names the columns it stands in, so
//! an edit that brings in or takes away a result (the command line then prints other
//! columns) finds no number for the old columns.

use crate::analysis::MOVED_MARK;
use crate::engine::derived::Derived;
use crate::stats::rounded_percentages;

use super::battle::{BattleDistribution, BattleHistogram, BattleResult};
use super::FieldStudy;

/// The results some run reaches (simulated or exact), in [`BattleResult::ALL`] order:
/// the columns of "Battle outcomes".
pub fn reached(
    counts: &[BattleHistogram],
    exact: &[Option<BattleDistribution>],
) -> Vec<BattleResult> {
    BattleResult::ALL
        .into_iter()
        .filter(|r| {
            counts.iter().any(|h| h.result[r.index()] > 0)
                || exact
                    .iter()
                    .any(|e| e.as_ref().is_some_and(|e| e.result[r.index()] > 0.0))
        })
        .collect()
}

/// A run's probability of each result: exact where enumerated, else simulated.
pub fn result_probabilities(
    histogram: &BattleHistogram,
    exact: Option<&BattleDistribution>,
) -> [f64; BattleResult::COUNT] {
    match exact {
        Some(e) => e.result,
        None => {
            let n = histogram.trials();
            std::array::from_fn(|i| histogram.result[i] as f64 / n as f64)
        }
    }
}

/// The key of run `run`'s cell for `result` in "Battle outcomes" with columns `of`.
pub fn outcome_key(run: usize, result: BattleResult, of: &[BattleResult]) -> String {
    let of: Vec<&str> = of.iter().map(|r| r.label()).collect();
    format!("battle_outcomes/{run}/{}/{}", result.label(), of.join(","))
}

/// Every cell of "Battle outcomes", printed: each run's reached results' percentages,
/// rounded to add up to 100 at the file's `[tables] decimals`, `†` where moved.
pub fn derived(
    study: &FieldStudy,
    counts: &[BattleHistogram],
    exact: &[Option<BattleDistribution>],
) -> Vec<Derived> {
    let of = reached(counts, exact);
    let decimals = study.header.tables.decimals;
    let mut out = Vec::new();
    for (run, (histogram, e)) in counts.iter().zip(exact).enumerate() {
        let p = result_probabilities(histogram, e.as_ref());
        let shown: Vec<f64> = of.iter().map(|r| p[r.index()]).collect();
        let row = rounded_percentages(&shown, decimals);
        for (i, &result) in of.iter().enumerate() {
            let mut text = row.text(i, decimals);
            if row.moved[i] {
                text.push_str(MOVED_MARK);
            }
            out.push(Derived {
                text: Some(text),
                ..Derived::new(outcome_key(run, result, &of), shown[i])
            });
        }
    }
    out
}
