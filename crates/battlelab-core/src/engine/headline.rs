//! What a designer reads first: one number per run — P(A wins), expected SP lost — and the
//! difference a change makes to it, with its interval.
//!
//! Why this module exists: `value` (what is a +1 worth?) and `solve` (which value hits my
//! target?) ask the same question of many runs: how big is this headline here, and how
//! much did it move? A headline is either a group of outcomes (every outcome a side wins
//! by) or a metric's mean. This module measures it block by block from an [`Arm`], so the
//! difference between two arms that drew the same dice is a paired difference (the same
//! ratio-estimator standard error as `compare`), exact where both arms are exact.
//!
//! Method (written into every output):
//! - **one run**: a probability gets the Wilson 95% interval; a mean gets Student's t
//!   over per-block means (B − 1 degrees of freedom, B blocks; one block: no interval).
//! - **a difference**: per-block differences of the two arms' block sums, the
//!   ratio-estimator standard error √(B/(B−1) · Σ (Δ_b − n_b Δ/N)²) / N, Student's t with
//!   B − 1 degrees of freedom, 95%. Exact where both arms are exact (the interval is the
//!   point).

use super::compare::Arm;
use crate::stats::{student_t_quantile, wilson_interval, Z95};

/// Which outcomes a probability headline adds up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    /// Exactly these outcomes.
    Is(Vec<String>),
    /// Every outcome whose name contains this text ("A wins" in "escalated: A wins, B
    /// holds").
    Contains(String),
}

impl Match {
    pub fn accepts(&self, outcome: &str) -> bool {
        match self {
            Match::Is(names) => names.iter().any(|n| n == outcome),
            Match::Contains(text) => outcome.contains(text.as_str()),
        }
    }
}

/// What a headline adds up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadlineKind {
    /// The probability of the outcomes matched.
    Outcomes(Match),
    /// The mean of this metric.
    Metric(String),
}

/// One headline of a system: its name as every output prints it, and what it adds up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Headline {
    /// e.g. "P(A wins)", "E\[sp_lost_b\]".
    pub name: String,
    /// The key of the headline on the command line and in files (`a_wins`, `sp_lost_b`).
    pub key: String,
    pub kind: HeadlineKind,
}

impl Headline {
    /// P(any of `outcomes`).
    pub fn outcomes(key: &str, name: &str, outcomes: Match) -> Self {
        Self {
            name: name.to_string(),
            key: key.to_string(),
            kind: HeadlineKind::Outcomes(outcomes),
        }
    }

    /// The mean of `metric`, named `E[metric]`.
    pub fn metric(metric: &str) -> Self {
        Self {
            name: format!("E[{metric}]"),
            key: metric.to_string(),
            kind: HeadlineKind::Metric(metric.to_string()),
        }
    }

    pub fn is_probability(&self) -> bool {
        matches!(self.kind, HeadlineKind::Outcomes(_))
    }
}

/// A headline measured on one arm: per block (trials, sum), and its exact value.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub blocks: Vec<(u64, f64)>,
    pub exact: Option<f64>,
    pub probability: bool,
}

/// An estimate with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The exact value, where the arm (or both arms) are exact.
    pub exact: Option<f64>,
}

impl Estimate {
    /// The exact value where there is one, else the simulated one.
    pub fn best(&self) -> f64 {
        self.exact.unwrap_or(self.value)
    }
}

/// Measures `headline` on `arm`, or `None` where the arm has no such metric.
pub fn measure(arm: &Arm, headline: &Headline) -> Option<Measured> {
    match &headline.kind {
        HeadlineKind::Outcomes(matched) => {
            let chosen: Vec<usize> = (0..arm.outcomes.len())
                .filter(|&i| matched.accepts(&arm.outcomes[i]))
                .collect();
            let blocks = arm
                .blocks
                .iter()
                .map(|(n, counts)| (*n, chosen.iter().map(|&i| counts[i]).sum::<u64>() as f64))
                .collect();
            // Exact only where every chosen outcome is exact.
            let exact = arm.exact.as_ref().and_then(|e| {
                chosen
                    .iter()
                    .map(|&i| e[i])
                    .sum::<Option<f64>>()
                    .or(chosen.is_empty().then_some(0.0))
            });
            Some(Measured {
                blocks,
                exact,
                probability: true,
            })
        }
        HeadlineKind::Metric(name) => {
            let track = arm.metrics.iter().find(|m| &m.name == name)?;
            Some(Measured {
                blocks: track.blocks.iter().map(|(s, n)| (*n, *s as f64)).collect(),
                exact: track.exact_mean,
                probability: false,
            })
        }
    }
}

impl Measured {
    pub fn trials(&self) -> u64 {
        self.blocks.iter().map(|(n, _)| n).sum()
    }

    fn sum(&self) -> f64 {
        self.blocks.iter().map(|(_, s)| s).sum()
    }

    /// The simulated value with its 95% interval (Wilson for a probability, Student's t
    /// over block means for a mean).
    pub fn estimate(&self) -> Estimate {
        let n = self.trials();
        let value = self.sum() / n.max(1) as f64;
        let (ci_low, ci_high) = if self.probability {
            wilson_interval(self.sum().round() as u64, n, Z95)
        } else {
            let half = ratio_half_width(&self.blocks, &vec![(0, 0.0); self.blocks.len()]);
            (value - half, value + half)
        };
        Estimate {
            value,
            ci_low,
            ci_high,
            exact: self.exact,
        }
    }
}

/// `with − without` for two arms of one run that drew the same dice block by block (same
/// seed, same block sizes), with its 95% interval; exact where both are exact. Arms whose
/// blocks differ fall back to independent standard errors.
pub fn paired_difference(without: &Measured, with: &Measured) -> Estimate {
    let (a, b) = (without.estimate(), with.estimate());
    let delta = b.value - a.value;
    let exact = without.exact.zip(with.exact).map(|(x, y)| y - x);
    let paired = without.blocks.len() >= 2
        && without.blocks.len() == with.blocks.len()
        && without
            .blocks
            .iter()
            .zip(&with.blocks)
            .all(|(x, y)| x.0 == y.0);
    let half = if paired {
        ratio_half_width(&with.blocks, &without.blocks)
    } else {
        let se = |e: &Estimate| (e.ci_high - e.ci_low) / (2.0 * Z95);
        Z95 * (se(&a).powi(2) + se(&b).powi(2)).sqrt()
    };
    match exact {
        Some(e) => Estimate {
            value: delta,
            ci_low: e,
            ci_high: e,
            exact: Some(e),
        },
        None => Estimate {
            value: delta,
            ci_low: delta - half,
            ci_high: delta + half,
            exact: None,
        },
    }
}

/// The 95% half-width of the mean of per-trial `x − y` over blocks (the ratio-estimator
/// standard error, Student's t with B − 1 degrees of freedom); 0 with fewer than 2 blocks.
fn ratio_half_width(x: &[(u64, f64)], y: &[(u64, f64)]) -> f64 {
    let blocks = x.len();
    if blocks < 2 {
        return 0.0;
    }
    let n: f64 = x.iter().map(|(n, _)| *n as f64).sum();
    let total: f64 = x.iter().zip(y).map(|((_, a), (_, b))| a - b).sum();
    let mean = total / n;
    let spread: f64 = x
        .iter()
        .zip(y)
        .map(|((w, a), (_, b))| (a - b - *w as f64 * mean).powi(2))
        .sum();
    let b = blocks as f64;
    let se = (b / (b - 1.0) * spread).sqrt() / n;
    student_t_quantile(0.975, b - 1.0) * se
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::compare::MetricTrack;

    fn arm(blocks: &[(u64, [u64; 2])], exact: Option<[f64; 2]>) -> Arm {
        Arm {
            outcomes: vec!["A wins".into(), "B wins".into()],
            blocks: blocks.iter().map(|(n, c)| (*n, c.to_vec())).collect(),
            exact: exact.map(|e| e.iter().map(|p| Some(*p)).collect()),
            fractions: None,
            metrics: vec![MetricTrack {
                name: "sp_lost_b".into(),
                range: (0, 10),
                blocks: blocks
                    .iter()
                    .map(|(n, c)| (u128::from(c[0] * 2), *n))
                    .collect(),
                exact_mean: None,
            }],
        }
    }

    fn a_wins() -> Headline {
        Headline::outcomes("a_wins", "P(A wins)", Match::Is(vec!["A wins".into()]))
    }

    #[test]
    fn a_paired_difference_by_hand() {
        // Blocks of 10: A wins 4, 6 without; 5, 8 with. Δ_b = 1, 2; Δ = 3/20 = 0.15.
        let without = measure(&arm(&[(10, [4, 6]), (10, [6, 4])], None), &a_wins()).unwrap();
        let with = measure(&arm(&[(10, [5, 5]), (10, [8, 2])], None), &a_wins()).unwrap();
        let d = paired_difference(&without, &with);
        assert!((d.value - 0.15).abs() < 1e-15);
        // Residuals Δ_b − 10·0.15 = −0.5, +0.5: spread 0.5; se = √(2·0.5)/20 = 0.05;
        // t(0.975, 1) = 12.7062.
        let half = 12.706_204_736 * 0.05;
        assert!((d.ci_high - d.value - half).abs() < 1e-6, "{d:?}");
        assert!(d.exact.is_none());
    }

    #[test]
    fn exact_arms_give_an_exact_difference() {
        let without = measure(&arm(&[(10, [4, 6])], Some([0.25, 0.75])), &a_wins()).unwrap();
        let with = measure(&arm(&[(10, [5, 5])], Some([0.5, 0.5])), &a_wins()).unwrap();
        let d = paired_difference(&without, &with);
        assert_eq!(d.exact, Some(0.25));
        assert_eq!((d.ci_low, d.ci_high), (0.25, 0.25));
    }

    #[test]
    fn a_metric_mean_over_blocks() {
        let h = Headline::metric("sp_lost_b");
        let m = measure(&arm(&[(10, [4, 6]), (10, [6, 4])], None), &h).unwrap();
        let e = m.estimate();
        assert!((e.value - 1.0).abs() < 1e-15);
        // Block means 0.8 and 1.2: se = √(2·(4+4))/20 = 0.2.
        assert!(
            (e.ci_high - 1.0 - 12.706_204_736 * 0.2).abs() < 1e-6,
            "{e:?}"
        );
    }
}
