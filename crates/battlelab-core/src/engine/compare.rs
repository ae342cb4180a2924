//! Did a change matter? Two arms (two variants of one plan, two analyses with the same
//! plan) compared cell by cell — run × outcome — with the test the data allow.
//!
//! Why this module exists: the engine seeds every run of a plan identically, so two arms
//! draw the same dice in the same block (common random numbers). The difference of the
//! two arms' frequencies in one block then carries far less noise than two independent
//! runs would, and a test on the per-block paired differences sees changes the naive test
//! misses. This module holds that test, the naive one for arms that are not paired, the
//! exact difference where both arms are exact (no test needed), and the corrections for
//! the number of cells compared.
//!
//! Method (written into every output):
//! - **paired**: per-block differences d_b = (a_b − b_b)/n_b, weighted by block size;
//!   the standard error of the mean difference is the ratio-estimator one,
//!   √(B/(B−1) · Σ n_b²(d_b − d̄)²) / N; Student's t with B − 1 degrees of freedom gives
//!   the p-value and the 95% interval. Needs at least 2 blocks.
//! - **independent**: the two-proportion z-test (unpooled standard error
//!   √(p_a(1−p_a)/N_a + p_b(1−p_b)/N_b)), normal p-value and interval.
//! - **exact**: where both arms are exact, the difference is decided exactly: no p-value,
//!   significant iff it is not zero (fractions compared where both arms have them), and
//!   the cell is left out of the correction's family.
//! - **no difference**: a cell whose arms have the same frequency (identical counts over
//!   the same trials), or an exact difference of zero, is never significant, whatever α:
//!   its p-value is 1.
//! - A cell whose outcome is 0 in both arms (never counted, and exactly 0 where exact) is
//!   marked [`Cell::zero_in_both`]: the command leaves it out of its table and of the
//!   correction's family, and says how many it left out.
//! - **correction**: Holm's step-down (family-wise error rate ≤ α) by default, or
//!   Benjamini–Hochberg (false discovery rate ≤ α) with `--fdr`.

use rayon::prelude::*;

use super::System;
use crate::dice::DiceStream;
use crate::sim::{block_trials, Interrupted, RunControl};
use crate::stats::{
    benjamini_hochberg, holm, normal_two_sided_p, student_t_quantile, student_t_two_sided_p, Z95,
};

/// One run's outcome counts (and its metrics' sums), block by block, with its exact
/// outcome probabilities and metric means.
#[derive(Clone, Debug, PartialEq)]
pub struct Arm {
    pub outcomes: Vec<String>,
    /// `(trials, counts per outcome)` for each block, in block order.
    pub blocks: Vec<(u64, Vec<u64>)>,
    /// Exact probability per outcome, where the run is exact.
    pub exact: Option<Vec<Option<f64>>>,
    /// The exact probabilities as fractions, where the system counts exactly.
    pub fractions: Option<Vec<Option<String>>>,
    /// The run's metrics (the quantities whose means `metrics.csv` reports).
    pub metrics: Vec<MetricTrack>,
}

/// One metric of a run, block by block.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricTrack {
    pub name: String,
    /// Smallest and largest value the metric can take (its support).
    pub range: (u64, u64),
    /// `(sum of values, trials counted)` per block, in block order.
    pub blocks: Vec<(u128, u64)>,
    pub exact_mean: Option<f64>,
}

impl MetricTrack {
    pub fn mean(&self) -> f64 {
        let (sum, n) = self
            .blocks
            .iter()
            .fold((0u128, 0u64), |(s, n), (bs, bn)| (s + bs, n + bn));
        sum as f64 / n.max(1) as f64
    }

    pub fn trials(&self) -> u64 {
        self.blocks.iter().map(|(_, n)| n).sum()
    }
}

impl Arm {
    pub fn trials(&self) -> u64 {
        self.blocks.iter().map(|(n, _)| n).sum()
    }

    pub fn count(&self, outcome: usize) -> u64 {
        self.blocks.iter().map(|(_, c)| c[outcome]).sum()
    }

    /// An arm known only by its totals (a report's results): one "block".
    pub fn from_totals(
        outcomes: Vec<String>,
        trials: u64,
        counts: Vec<u64>,
        exact: Option<Vec<Option<f64>>>,
    ) -> Self {
        Self {
            outcomes,
            blocks: vec![(trials, counts)],
            exact,
            fractions: None,
            metrics: Vec::new(),
        }
    }

    /// Adds the blocks of `more` (a later range of the same run) to this arm.
    pub fn extend(&mut self, more: Arm) {
        self.blocks.extend(more.blocks);
        for (mine, theirs) in self.metrics.iter_mut().zip(more.metrics) {
            mine.blocks.extend(theirs.blocks);
        }
    }
}

/// One block: its trials, its outcome counts, and each metric's (sum, trials).
type BlockCounts = (u64, Vec<u64>, Vec<(u128, u64)>);

/// The blocks `blocks` of `run` (of a run of `trials` trials: the last block may be
/// short), each block's outcome counts and metric sums, and with `with_exact` the run's
/// exact results.
pub fn arm_blocks<S: System>(
    system: &S,
    run: usize,
    blocks: std::ops::Range<u64>,
    trials: u64,
    seed: u64,
    with_exact: bool,
    control: &RunControl,
) -> Result<Arm, Interrupted> {
    let empty = system.empty(run);
    let names: Vec<String> = system
        .outcomes(run, &empty, None)
        .into_iter()
        .map(|o| o.name)
        .collect();
    let shapes = system.distributions(run, &empty, None);
    let per_block: Vec<BlockCounts> = blocks
        .into_par_iter()
        .map(|block| {
            if control.stopped() {
                return Err(Interrupted);
            }
            let n = block_trials(trials, block);
            let mut counts = system.empty_block(run);
            let mut dice = DiceStream::for_block(seed, block);
            system.simulate(run, &mut dice, n, &mut counts);
            system.finish(run, &mut counts);
            control.add_done(n);
            // Outcomes are named the same in every block (the run's own list).
            let outcomes = system.outcomes(run, &counts, None);
            let by_name = names
                .iter()
                .map(|name| {
                    outcomes
                        .iter()
                        .find(|o| &o.name == name)
                        .map_or(0, |o| o.count)
                })
                .collect();
            let metrics = system
                .distributions(run, &counts, None)
                .iter()
                .map(|d| (d.sum(), d.trials()))
                .collect();
            Ok((n, by_name, metrics))
        })
        .collect::<Result<_, _>>()?;
    let exact = if with_exact { system.exact(run) } else { None };
    let exact_outcomes: Option<Vec<_>> = exact.as_ref().map(|e| {
        let outcomes = system.outcomes(run, &empty, Some(e));
        names
            .iter()
            .map(|name| outcomes.iter().find(|o| &o.name == name).cloned())
            .collect()
    });
    let fractions = exact_outcomes
        .as_ref()
        .map(|o: &Vec<Option<super::Outcome>>| {
            o.iter()
                .map(|o| o.as_ref().and_then(|o| o.fraction.clone()))
                .collect()
        });
    let exact_outcomes =
        exact_outcomes.map(|o| o.iter().map(|o| o.as_ref().and_then(|o| o.exact)).collect());
    let exact_metrics = exact
        .as_ref()
        .map(|e| system.distributions(run, &empty, Some(e)));
    let metrics = shapes
        .iter()
        .enumerate()
        .map(|(k, d)| MetricTrack {
            name: d.metric.clone(),
            range: (d.first, d.first + d.counts.len().saturating_sub(1) as u64),
            blocks: per_block.iter().map(|(_, _, m)| m[k]).collect(),
            // By name: a system may list other metrics with an exact result.
            exact_mean: exact_metrics
                .as_ref()
                .and_then(|e| e.iter().find(|e| e.metric == d.metric))
                .and_then(|d| d.exact_mean()),
        })
        .collect();
    if control.stopped() {
        return Err(Interrupted);
    }
    Ok(Arm {
        outcomes: names,
        blocks: per_block.into_iter().map(|(n, c, _)| (n, c)).collect(),
        exact: exact_outcomes,
        fractions,
        metrics,
    })
}

/// Which test a cell was decided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// Paired t-test on per-block differences (common random numbers).
    Paired,
    /// Two-proportion z-test (arms drawn independently, or known by totals only).
    Independent,
    /// Both arms exact: the difference is exact.
    Exact,
}

impl Test {
    /// The test's key in csv and json (`paired`, `independent`, `exact`).
    pub fn key(self) -> &'static str {
        match self {
            Test::Paired => "paired",
            Test::Independent => "independent",
            Test::Exact => "exact",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Test::Paired => "paired t-test on per-block differences (common random numbers)",
            Test::Independent => "two-proportion z-test (independent arms)",
            Test::Exact => "exact difference (no test)",
        }
    }
}

/// One compared cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub outcome: String,
    pub p_a: f64,
    pub p_b: f64,
    /// `p_b − p_a`: what the change did.
    pub diff: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub exact_diff: Option<f64>,
    pub p_value: Option<f64>,
    pub significant: bool,
    pub test: Test,
    /// Variance of the paired difference over that of independent arms (paired only).
    pub variance_ratio: Option<f64>,
    /// Trials per arm independent arms would have needed for this precision (paired only).
    pub trials_unpaired: Option<f64>,
    /// The arms do not differ at all: the same frequency (identical counts), or an exact
    /// difference of zero. Never significant.
    pub no_difference: bool,
    /// The outcome never happened in either arm (and is exactly 0 where exact).
    pub zero_in_both: bool,
}

/// Compares two arms of one run outcome by outcome (`b` against `a`). `paired` says the
/// arms drew the same dice block by block; with fewer than 2 blocks, or blocks of other
/// sizes, the test falls back to the independent one.
pub fn compare_arms(a: &Arm, b: &Arm, paired: bool) -> Vec<Cell> {
    let (na, nb) = (a.trials(), b.trials());
    let paired = paired
        && a.blocks.len() >= 2
        && a.blocks.len() == b.blocks.len()
        && a.blocks.iter().zip(&b.blocks).all(|(x, y)| x.0 == y.0);
    // The paired test's degrees of freedom and t quantile: the same for every cell.
    let df = a.blocks.len() as f64 - 1.0;
    let t = if paired {
        student_t_quantile(0.975, df)
    } else {
        f64::NAN
    };
    a.outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let j = b.outcomes.iter().position(|o| o == name)?;
            let (ca, cb) = (a.count(i), b.count(j));
            let p_a = ca as f64 / na.max(1) as f64;
            let p_b = cb as f64 / nb.max(1) as f64;
            let diff = p_b - p_a;
            let exact = match (&a.exact, &b.exact) {
                (Some(ea), Some(eb)) => ea[i].zip(eb[j]).map(|(x, y)| y - x),
                _ => None,
            };
            // Exactly equal fractions, where both arms have them, decide "no difference"
            // without floating point.
            let same_fraction = match (&a.fractions, &b.fractions) {
                (Some(fa), Some(fb)) => match (&fa[i], &fb[j]) {
                    (Some(x), Some(y)) => Some(x == y),
                    _ => None,
                },
                _ => None,
            };
            let exactly_zero = |p: &Option<Vec<Option<f64>>>, k: usize| {
                p.as_ref().is_none_or(|e| e[k].is_none_or(|v| v == 0.0))
            };
            let zero_in_both =
                ca == 0 && cb == 0 && exactly_zero(&a.exact, i) && exactly_zero(&b.exact, j);
            let same_frequency =
                u128::from(ca) * u128::from(nb.max(1)) == u128::from(cb) * u128::from(na.max(1));
            let independent_var =
                p_a * (1.0 - p_a) / na.max(1) as f64 + p_b * (1.0 - p_b) / nb.max(1) as f64;
            let mut cell = Cell {
                outcome: name.clone(),
                p_a,
                p_b,
                diff,
                ci_low: diff,
                ci_high: diff,
                exact_diff: exact,
                p_value: None,
                significant: false,
                test: Test::Independent,
                variance_ratio: None,
                trials_unpaired: None,
                no_difference: false,
                zero_in_both,
            };
            if let Some(e) = exact {
                cell.test = Test::Exact;
                cell.no_difference = same_fraction.unwrap_or(e.abs() <= 1e-12);
                cell.significant = !cell.no_difference;
                cell.ci_low = e;
                cell.ci_high = e;
                return Some(cell);
            }
            if same_frequency {
                cell.no_difference = true;
            }
            if paired {
                let n = na as f64;
                let blocks = a.blocks.len() as f64;
                // w_b(d_b − d̄) = (b_b − a_b) − w_b·(B − A)/N, summed squared; in
                // integers (× N) so that equal differences give exactly no spread.
                let total = i128::from(cb) - i128::from(ca);
                let spread: f64 = a
                    .blocks
                    .iter()
                    .zip(&b.blocks)
                    .map(|((w, ca), (_, cb))| {
                        let d = (i128::from(cb[j]) - i128::from(ca[i])) * i128::from(na)
                            - i128::from(*w) * total;
                        (d as f64).powi(2)
                    })
                    .sum::<f64>()
                    / (n * n);
                let variance = blocks / (blocks - 1.0) * spread / (n * n);
                let se = variance.sqrt();
                cell.test = Test::Paired;
                cell.ci_low = diff - t * se;
                cell.ci_high = diff + t * se;
                cell.p_value = Some(if cell.no_difference {
                    1.0
                } else if se > 0.0 {
                    student_t_two_sided_p(diff / se, df)
                } else if diff == 0.0 {
                    1.0
                } else {
                    0.0
                });
                if independent_var > 0.0 {
                    let ratio = variance / independent_var;
                    cell.variance_ratio = Some(ratio);
                    cell.trials_unpaired = (ratio > 0.0).then(|| n / ratio);
                }
            } else {
                let se = independent_var.sqrt();
                cell.ci_low = diff - Z95 * se;
                cell.ci_high = diff + Z95 * se;
                cell.p_value = Some(if cell.no_difference {
                    1.0
                } else if se > 0.0 {
                    normal_two_sided_p(diff / se)
                } else if diff == 0.0 {
                    1.0
                } else {
                    0.0
                });
            }
            Some(cell)
        })
        .collect()
}

/// The multiple-comparison correction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Correction {
    Holm,
    BenjaminiHochberg,
}

impl Correction {
    pub fn name(self) -> &'static str {
        match self {
            Correction::Holm => "Holm (family-wise error rate)",
            Correction::BenjaminiHochberg => "Benjamini-Hochberg (false discovery rate)",
        }
    }
}

/// Marks the tested cells (those with a p-value) significant after `correction` at
/// `alpha` over all of them; exact cells keep their exact verdict, and a cell with no
/// difference is never significant, whatever `alpha`.
pub fn correct(cells: &mut [&mut Cell], correction: Correction, alpha: f64) {
    let tested: Vec<usize> = (0..cells.len())
        .filter(|&i| cells[i].p_value.is_some())
        .collect();
    let p: Vec<f64> = tested
        .iter()
        .map(|&i| cells[i].p_value.expect("tested"))
        .collect();
    let verdict = match correction {
        Correction::Holm => holm(&p, alpha),
        Correction::BenjaminiHochberg => benjamini_hochberg(&p, alpha),
    };
    for (k, &i) in tested.iter().enumerate() {
        cells[i].significant = verdict[k] && !cells[i].no_difference;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(blocks: &[(u64, u64)]) -> Arm {
        Arm {
            outcomes: vec!["win".into(), "lose".into()],
            blocks: blocks.iter().map(|&(n, w)| (n, vec![w, n - w])).collect(),
            exact: None,
            fractions: None,
            metrics: Vec::new(),
        }
    }

    #[test]
    fn paired_differences_by_hand() {
        // Four blocks of 100: A wins 50, 52, 48, 50; B wins 2 more in every block.
        let a = arm(&[(100, 50), (100, 52), (100, 48), (100, 50)]);
        let b = arm(&[(100, 52), (100, 54), (100, 50), (100, 52)]);
        let cells = compare_arms(&a, &b, true);
        let win = &cells[0];
        assert_eq!(win.test, Test::Paired);
        assert!((win.diff - 0.02).abs() < 1e-12);
        // Every block's difference is the same: no spread, so the change is certain.
        assert_eq!(win.p_value, Some(0.0));
        assert!((win.ci_high - win.ci_low).abs() < 1e-12);
        assert_eq!(win.variance_ratio, Some(0.0));
        // Differences 0.01, 0.03, 0.01, 0.03: mean 0.02; each block's weighted deviation
        // is 100·0.01 = 1, so the standard error is √(4/3 · 4) / 400 = 0.005774.
        let b = arm(&[(100, 51), (100, 55), (100, 49), (100, 53)]);
        let win = &compare_arms(&a, &b, true)[0];
        let se = (4.0f64 / 3.0 * 4.0).sqrt() / 400.0;
        let t = 0.02 / se;
        assert!((win.p_value.unwrap() - student_t_two_sided_p(t, 3.0)).abs() < 1e-12);
        // Unpaired, the same totals give a much wider interval.
        let z = compare_arms(&a, &b, false);
        assert_eq!(z[0].test, Test::Independent);
        // Half-widths: 1.96·√(2·0.25/400) = 0.069 against 3.182·0.00577 = 0.0184.
        assert!(z[0].ci_high - z[0].ci_low > 3.5 * (win.ci_high - win.ci_low));
    }

    #[test]
    fn exact_cells_are_decided_exactly_and_left_out_of_the_correction() {
        let mut a = arm(&[(100, 50), (100, 50)]);
        let mut b = arm(&[(100, 50), (100, 50)]);
        a.exact = Some(vec![Some(0.5), Some(0.5)]);
        b.exact = Some(vec![Some(0.5), Some(0.5)]);
        let cells = compare_arms(&a, &b, true);
        assert!(cells
            .iter()
            .all(|c| c.test == Test::Exact && !c.significant && c.p_value.is_none()));
        b.exact = Some(vec![Some(0.6), Some(0.4)]);
        let cells = compare_arms(&a, &b, true);
        assert!(cells.iter().all(|c| c.significant));
        assert!((cells[0].exact_diff.unwrap() - 0.1).abs() < 1e-12);
        // Equal fractions are no difference, however the floats were summed.
        b.exact = Some(vec![Some(0.5 + 1e-11), Some(0.5)]);
        a.fractions = Some(vec![Some("1/2".into()), Some("1/2".into())]);
        b.fractions = a.fractions.clone();
        let cells = compare_arms(&a, &b, true);
        assert!(cells.iter().all(|c| c.no_difference && !c.significant));
    }

    /// Identical counts: p = 1 and never significant, paired or not, even at α near 1;
    /// an outcome never counted in either arm is marked zero in both.
    #[test]
    fn no_difference_is_never_significant_and_zero_outcomes_are_marked() {
        let three = |blocks: &[(u64, u64, u64)]| Arm {
            outcomes: vec!["win".into(), "lose".into(), "draw".into()],
            blocks: blocks
                .iter()
                .map(|&(n, w, d)| (n, vec![w, n - w - d, d]))
                .collect(),
            exact: None,
            fractions: None,
            metrics: Vec::new(),
        };
        let a = three(&[(100, 50, 0), (100, 40, 0), (100, 60, 0)]);
        let b = three(&[(100, 45, 0), (100, 45, 0), (100, 60, 0)]);
        for paired in [true, false] {
            let mut cells = compare_arms(&a, &b, paired);
            assert_eq!(cells[0].diff, 0.0);
            assert!(cells[0].no_difference && cells[0].p_value == Some(1.0));
            assert!(!cells[0].zero_in_both);
            assert!(cells[2].zero_in_both && cells[2].no_difference);
            let mut all: Vec<&mut Cell> = cells.iter_mut().collect();
            correct(&mut all, Correction::BenjaminiHochberg, 0.999);
            assert!(cells.iter().all(|c| !c.significant));
        }
        // Same frequency over different trials is no difference either.
        let c = three(&[(200, 100, 0)]);
        let d = three(&[(400, 200, 0)]);
        assert!(compare_arms(&c, &d, false)[0].no_difference);
        let e = three(&[(400, 201, 0)]);
        assert!(!compare_arms(&c, &e, false)[0].no_difference);
    }
}
