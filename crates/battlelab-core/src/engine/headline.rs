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
//! - **a comparison** (is this value at least the target? which lies between two others?):
//!   a [`Level`] compares exact fractions where the system counts exactly in integers (the
//!   d6 tables, ratio battles), so 3/6 meets "≥ 0.5" and 1/3 misses "≥ 0.3333333333333333"
//!   with no tolerance; elsewhere it compares the numbers as computed (an exact
//!   enumeration in floating point, or an estimate).

use std::cmp::Ordering;

use num_bigint::BigUint;
use num_traits::{One, Zero};

use super::compare::Arm;
use crate::exact::BigFraction;
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

/// A headline measured on one arm: per block (trials, sum), and its exact value (with the
/// exact fraction where the system counts exactly in integers).
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub blocks: Vec<(u64, f64)>,
    pub exact: Option<f64>,
    pub fraction: Option<BigFraction>,
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

/// Measures `headline` on `arm`, or `None` where the headline is not about this run: a
/// metric it has not, or outcomes none of which it can end in (the attrition turns
/// study's runs end in SP left, not in SP lost, so "P(no SP lost)" is not theirs).
pub fn measure(arm: &Arm, headline: &Headline) -> Option<Measured> {
    match &headline.kind {
        HeadlineKind::Outcomes(matched) => {
            let chosen: Vec<usize> = (0..arm.outcomes.len())
                .filter(|&i| matched.accepts(&arm.outcomes[i]))
                .collect();
            if chosen.is_empty() {
                return None;
            }
            let blocks = arm
                .blocks
                .iter()
                .map(|(n, counts)| (*n, chosen.iter().map(|&i| counts[i]).sum::<u64>() as f64))
                .collect();
            // Exact only where every chosen outcome is exact.
            let exact = arm
                .exact
                .as_ref()
                .and_then(|e| chosen.iter().map(|&i| e[i]).sum::<Option<f64>>());
            let fraction = arm.fractions.as_ref().and_then(|f| {
                chosen.iter().try_fold(BigFraction::zero(), |sum, &i| {
                    Some(sum.plus(&parse_fraction(f[i].as_deref()?)?))
                })
            });
            Some(Measured {
                blocks,
                exact,
                fraction,
                probability: true,
            })
        }
        HeadlineKind::Metric(name) => {
            let track = arm.metrics.iter().find(|m| &m.name == name)?;
            Some(Measured {
                blocks: track.blocks.iter().map(|(s, n)| (*n, *s as f64)).collect(),
                exact: track.exact_mean,
                fraction: None,
                probability: false,
            })
        }
    }
}

/// `"3/8"` or `"1"` as a fraction.
fn parse_fraction(text: &str) -> Option<BigFraction> {
    let (numerator, denominator) = text.split_once('/').unwrap_or((text, "1"));
    let numerator: BigUint = numerator.trim().parse().ok()?;
    let denominator: BigUint = denominator.trim().parse().ok()?;
    (!denominator.is_zero()).then(|| BigFraction::new(numerator, denominator))
}

/// A value as it is compared: with its exact fraction where there is one (a system that
/// counts exactly in integers, or a target written as a decimal or a fraction), else the
/// number alone.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    pub value: f64,
    pub fraction: Option<BigFraction>,
}

impl Level {
    /// The headline as measured: exact where the arm is, else the estimate.
    pub fn of(measured: &Measured) -> Self {
        Self {
            value: measured.estimate().best(),
            fraction: measured.exact.and(measured.fraction.clone()),
        }
    }

    /// A target as the user wrote it: `0.5`, `1/3`, `2`, `-1.5` (a negative one has no
    /// fraction: headlines are never negative, and it is compared as a number). `None`
    /// where it is not a finite number.
    pub fn target(text: &str) -> Option<Self> {
        let text = text.trim();
        if let Some((n, d)) = text.split_once('/') {
            let fraction = parse_fraction(text)?;
            let value = n.trim().parse::<f64>().ok()? / d.trim().parse::<f64>().ok()?;
            return value.is_finite().then_some(Self {
                value,
                fraction: Some(fraction),
            });
        }
        let value: f64 = text.parse().ok().filter(|v: &f64| v.is_finite())?;
        // A plain decimal (digits, at most one point) is exact: 0.35 = 35/100.
        let (whole, decimals) = text.split_once('.').unwrap_or((text, ""));
        let digits = format!("{whole}{decimals}");
        let fraction = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| {
                let numerator: BigUint = digits.parse().ok()?;
                let denominator =
                    (0..decimals.len()).fold(BigUint::one(), |d, _| d * BigUint::from(10u32));
                Some(BigFraction::new(numerator, denominator))
            })
            .flatten();
        Some(Self { value, fraction })
    }

    /// Compares exactly where both have a fraction, else as numbers.
    pub fn compare(&self, other: &Level) -> Ordering {
        match (&self.fraction, &other.fraction) {
            (Some(a), Some(b)) => {
                (a.numerator() * b.denominator()).cmp(&(b.numerator() * a.denominator()))
            }
            _ => self.value.total_cmp(&other.value),
        }
    }

    /// Whether this lies between `a` and `b`, either way round, ends included.
    pub fn between(&self, a: &Level, b: &Level) -> bool {
        let (low, high) = if a.compare(b) == Ordering::Greater {
            (b, a)
        } else {
            (a, b)
        };
        self.compare(low) != Ordering::Less && self.compare(high) != Ordering::Greater
    }

    /// Where this lies from `from` (0) to `to` (1), linearly: |self − from| / |to − from|,
    /// computed from the exact fractions where all three have one; `None` where `from`
    /// and `to` are equal.
    pub fn position(&self, from: &Level, to: &Level) -> Option<f64> {
        if from.compare(to) == Ordering::Equal {
            return None;
        }
        if let (Some(x), Some(a), Some(b)) = (&self.fraction, &from.fraction, &to.fraction) {
            let distance = |p: &BigFraction, q: &BigFraction| {
                let (l, r) = (
                    p.numerator() * q.denominator(),
                    q.numerator() * p.denominator(),
                );
                let difference = if l > r { l - r } else { r - l };
                BigFraction::new(difference, p.denominator() * q.denominator())
            };
            let (part, whole) = (distance(x, a), distance(b, a));
            return Some(
                BigFraction::new(
                    part.numerator() * whole.denominator(),
                    part.denominator() * whole.numerator(),
                )
                .to_f64(),
            );
        }
        Some(((self.value - from.value) / (to.value - from.value)).abs())
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

    #[test]
    fn exact_fractions_are_summed_and_compared_with_no_tolerance() {
        let mut with_fractions = arm(&[(10, [4, 6])], Some([1.0 / 3.0, 2.0 / 3.0]));
        with_fractions.fractions = Some(vec![Some("1/3".into()), Some("2/3".into())]);
        let both = Headline::outcomes(
            "any",
            "P(any)",
            Match::Is(vec!["A wins".into(), "B wins".into()]),
        );
        let m = measure(&with_fractions, &both).unwrap();
        assert_eq!(m.fraction.as_ref().unwrap().to_string(), "1");
        let third = Level::of(&measure(&with_fractions, &a_wins()).unwrap());
        // 1/3 in f64 is 0.333…33 (16 threes) rounded; exactly, 1/3 is above that decimal.
        let decimal = Level::target("0.3333333333333333").unwrap();
        assert_eq!(
            third.value, decimal.value,
            "the floats cannot tell them apart"
        );
        assert_eq!(third.compare(&decimal), Ordering::Greater);
        assert_eq!(
            third.compare(&Level::target("1/3").unwrap()),
            Ordering::Equal
        );
        assert_eq!(
            Level::target("0.5")
                .unwrap()
                .compare(&Level::target("3/6").unwrap()),
            Ordering::Equal
        );
        // Where 1/3 lies from 1/4 to 1/2: (1/12) / (1/4) = 1/3.
        let (quarter, half) = (
            Level::target("0.25").unwrap(),
            Level::target("1/2").unwrap(),
        );
        assert!(third.between(&half, &quarter));
        assert_eq!(third.position(&quarter, &half), Some(1.0 / 3.0));
        assert_eq!(third.position(&half, &half), None);
        assert!(Level::target("-0.5").unwrap().fraction.is_none());
        assert!(Level::target("lots").is_none());
    }

    #[test]
    fn a_headline_none_of_whose_outcomes_a_run_has_is_not_measured_there() {
        let other = Headline::outcomes("no_loss", "P(no SP lost)", Match::Is(vec!["0".into()]));
        assert!(measure(&arm(&[(10, [4, 6])], None), &other).is_none());
    }
}
