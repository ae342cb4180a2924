//! Exact distributions as integer counts, printed as reduced fractions.
//!
//! Why this module exists: a single table lookup with few dice has a distribution that
//! can be counted exactly (every face of every die enumerated), and every Monte Carlo
//! kernel is held against those counts. Probabilities are kept as integers over a common
//! denominator until they are printed, so nothing is lost to rounding.

use std::fmt;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};

/// A non-negative rational number in lowest terms.
///
/// ```
/// use battlelab_core::exact::Fraction;
/// assert_eq!(Fraction::new(4, 36).to_string(), "1/9");
/// assert_eq!(Fraction::new(1, 6).plus(Fraction::new(1, 12)).to_string(), "1/4");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fraction {
    numerator: u128,
    denominator: u128,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Fraction {
    /// `numerator / denominator` reduced. Panics only on a zero denominator, which
    /// callers never build (denominators are dice counts).
    pub fn new(numerator: u128, denominator: u128) -> Self {
        assert!(denominator != 0, "fraction with zero denominator");
        let divisor = gcd(numerator, denominator).max(1);
        Self {
            numerator: numerator / divisor,
            denominator: denominator / divisor,
        }
    }

    pub const ZERO: Fraction = Fraction {
        numerator: 0,
        denominator: 1,
    };

    pub fn numerator(&self) -> u128 {
        self.numerator
    }

    pub fn denominator(&self) -> u128 {
        self.denominator
    }

    pub fn to_f64(&self) -> f64 {
        self.numerator as f64 / self.denominator as f64
    }

    /// Sum of two fractions, reduced.
    pub fn plus(self, other: Fraction) -> Fraction {
        let common =
            self.denominator / gcd(self.denominator, other.denominator) * other.denominator;
        Fraction::new(
            self.numerator * (common / self.denominator)
                + other.numerator * (common / other.denominator),
            common,
        )
    }

    /// This fraction times a whole number, reduced.
    pub fn times(self, factor: u128) -> Fraction {
        Fraction::new(self.numerator * factor, self.denominator)
    }
}

impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.denominator == 1 {
            write!(f, "{}", self.numerator)
        } else {
            write!(f, "{}/{}", self.numerator, self.denominator)
        }
    }
}

/// A non-negative rational number in lowest terms with arbitrary-size integers, for
/// distributions whose denominators outgrow `u128` (a melee phase rolls `36^dice`).
///
/// ```
/// use battlelab_core::exact::BigFraction;
/// use num_bigint::BigUint;
/// let f = BigFraction::new(BigUint::from(9u32), BigUint::from(36u32));
/// assert_eq!(f.to_string(), "1/4");
/// assert_eq!(f.to_f64(), 0.25);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BigFraction {
    numerator: BigUint,
    denominator: BigUint,
}

impl BigFraction {
    /// `numerator / denominator` reduced. Panics only on a zero denominator, which
    /// callers never build (denominators are dice counts).
    pub fn new(numerator: BigUint, denominator: BigUint) -> Self {
        assert!(!denominator.is_zero(), "fraction with zero denominator");
        let divisor = numerator.gcd(&denominator);
        if divisor.is_zero() || divisor.is_one() {
            return Self {
                numerator,
                denominator,
            };
        }
        Self {
            numerator: numerator / &divisor,
            denominator: denominator / &divisor,
        }
    }

    pub fn zero() -> Self {
        Self {
            numerator: BigUint::zero(),
            denominator: BigUint::one(),
        }
    }

    pub fn numerator(&self) -> &BigUint {
        &self.numerator
    }

    pub fn denominator(&self) -> &BigUint {
        &self.denominator
    }

    /// The nearest `f64` (correct to about 1 ulp even when both terms exceed `f64`'s range).
    pub fn to_f64(&self) -> f64 {
        // Scale so the quotient keeps 64 significant bits, then divide as integers.
        let shift = self.denominator.bits() as i64 - self.numerator.bits() as i64 + 64;
        let quotient = if shift >= 0 {
            (&self.numerator << shift as u64) / &self.denominator
        } else {
            &self.numerator / (&self.denominator << (-shift) as u64)
        };
        quotient.to_f64().unwrap_or(f64::INFINITY) * 2f64.powi(-shift as i32)
    }

    /// Sum of two fractions, reduced.
    pub fn plus(&self, other: &BigFraction) -> BigFraction {
        BigFraction::new(
            &self.numerator * &other.denominator + &other.numerator * &self.denominator,
            &self.denominator * &other.denominator,
        )
    }
}

impl fmt::Display for BigFraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.denominator.is_one() {
            write!(f, "{}", self.numerator)
        } else {
            write!(f, "{}/{}", self.numerator, self.denominator)
        }
    }
}

/// An exact distribution over dense outcome indices: `counts[i] / total`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExactDistribution {
    pub counts: Vec<u64>,
    pub total: u64,
}

impl ExactDistribution {
    /// Counts every face of one uniform `faces`-sided draw through `outcome_of`.
    pub fn enumerate(faces: u32, outcomes: usize, outcome_of: impl Fn(u32) -> usize) -> Self {
        let mut counts = vec![0u64; outcomes];
        for face in 0..faces {
            counts[outcome_of(face)] += 1;
        }
        Self {
            counts,
            total: u64::from(faces),
        }
    }

    pub fn fraction(&self, outcome: usize) -> Fraction {
        Fraction::new(u128::from(self.counts[outcome]), u128::from(self.total))
    }

    pub fn probability(&self, outcome: usize) -> f64 {
        self.counts[outcome] as f64 / self.total as f64
    }

    /// The exact expectation of `value(outcome)`.
    pub fn expectation(&self, value: impl Fn(usize) -> u64) -> Fraction {
        let sum: u128 = self
            .counts
            .iter()
            .enumerate()
            .map(|(outcome, &count)| u128::from(count) * u128::from(value(outcome)))
            .sum();
        Fraction::new(sum, u128::from(self.total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_reduce_and_print() {
        assert_eq!(Fraction::new(4, 36).to_string(), "1/9");
        assert_eq!(Fraction::new(0, 36).to_string(), "0");
        assert_eq!(Fraction::new(36, 36).to_string(), "1");
        assert_eq!(
            Fraction::new(1, 6).plus(Fraction::new(1, 4)).to_string(),
            "5/12"
        );
        assert_eq!(Fraction::new(5, 36).times(3).to_string(), "5/12");
    }

    #[test]
    fn big_fractions_reduce_print_and_convert() {
        let big = |n: u128| BigUint::from(n);
        assert_eq!(BigFraction::new(big(4), big(36)).to_string(), "1/9");
        assert_eq!(BigFraction::new(big(0), big(36)).to_string(), "0");
        let third = BigFraction::new(big(1), big(3));
        assert_eq!(third.plus(&third).to_string(), "2/3");
        assert_eq!(third.to_f64(), 1.0 / 3.0);
        // Terms far beyond f64's range still convert: 1 / 36^300 · 36^300 / 7.
        let huge = BigUint::from(36u32).pow(300);
        let f = BigFraction::new(&huge * big(2), &huge * big(7));
        assert_eq!(f.to_f64(), 2.0 / 7.0);
    }

    #[test]
    fn enumeration_counts_faces() {
        let dist = ExactDistribution::enumerate(36, 2, |face| usize::from(face % 6 == 0));
        assert_eq!(dist.counts, vec![30, 6]);
        assert_eq!(dist.fraction(1).to_string(), "1/6");
        assert_eq!(dist.expectation(|o| o as u64 * 6).to_string(), "1");
    }
}
