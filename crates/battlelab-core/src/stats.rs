//! Interval estimates and goodness-of-fit tests for Monte Carlo counts.
//!
//! Why this module exists: every simulated probability is printed with a 95% Wilson
//! interval, tests hold simulated histograms against exact ones with tolerances derived
//! from the sample size, and rulebook tables need percentages that add up to exactly 100.

/// The two-sided 95% normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `successes` out of `trials` at normal quantile `z`.
pub fn wilson_interval(successes: u64, trials: u64, z: f64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half_width = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    // At no successes (or all) the bound is exactly 0 (or 1); computed, it lands a
    // rounding error away (1e-19, 0.9999999999999998).
    let low = if successes == 0 {
        0.0
    } else {
        (centre - half_width).max(0.0)
    };
    let high = if successes >= trials {
        1.0
    } else {
        (centre + half_width).min(1.0)
    };
    (low, high)
}

/// Pearson's chi-square statistic of observed counts against expected probabilities,
/// with the number of degrees of freedom (cells with non-zero expectation, minus one).
/// A cell with zero expected probability but observed counts makes the statistic infinite.
pub fn chi_square(observed: &[u64], expected: &[f64]) -> (f64, usize) {
    let n: u64 = observed.iter().sum();
    let mut statistic = 0.0;
    let mut cells = 0usize;
    for (&count, &p) in observed.iter().zip(expected) {
        if p > 0.0 {
            let e = p * n as f64;
            statistic += (count as f64 - e).powi(2) / e;
            cells += 1;
        } else if count > 0 {
            return (f64::INFINITY, cells.saturating_sub(1));
        }
    }
    (statistic, cells.saturating_sub(1))
}

/// Upper quantile of the chi-square distribution (Wilson–Hilferty approximation, good to
/// a few percent for df ≥ 1), for a one-sided test at normal quantile `z`.
pub fn chi_square_critical(degrees_of_freedom: usize, z: f64) -> f64 {
    let k = degrees_of_freedom.max(1) as f64;
    let a = 2.0 / (9.0 * k);
    k * (1.0 - a + z * a.sqrt()).powi(3)
}

/// Rounds probabilities to whole units of `10^-decimals` percent so that they add up to
/// exactly 100% (largest-remainder method; ties go to the earlier entry).
/// Returns the rounded values in units (e.g. tenths of a percent for `decimals = 1`).
pub fn percentages_summing_to_100(probabilities: &[f64], decimals: u32) -> Vec<u64> {
    let scale = 100.0 * 10f64.powi(decimals as i32);
    let total_units = scale.round() as u64;
    let sum: f64 = probabilities.iter().sum();
    if sum <= 0.0 {
        return vec![0; probabilities.len()];
    }
    let raw: Vec<f64> = probabilities.iter().map(|p| p / sum * scale).collect();
    let mut units: Vec<u64> = raw.iter().map(|r| r.floor() as u64).collect();
    let assigned: u64 = units.iter().sum();
    let mut order: Vec<usize> = (0..raw.len()).collect();
    // Remainders are compared on a 1e-9 grid so that exact ties (1/6 and 5/30 say) are
    // not split by floating-point noise but go to the earlier entry.
    let remainder = |i: usize| ((raw[i] - raw[i].floor()) * 1e9).round() as u64;
    order.sort_by(|&i, &j| remainder(j).cmp(&remainder(i)).then(i.cmp(&j)));
    for &index in order
        .iter()
        .take(total_units.saturating_sub(assigned) as usize)
    {
        units[index] += 1;
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_published_value() {
        // Wilson (1927) / Newcombe (1998) example: 81 of 263 → 0.2553 … 0.3662.
        let (lo, hi) = wilson_interval(81, 263, Z95);
        assert!((lo - 0.2553).abs() < 5e-4, "{lo}");
        assert!((hi - 0.3662).abs() < 5e-4, "{hi}");
        let (lo, hi) = wilson_interval(0, 10, Z95);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.2775).abs() < 5e-4, "{hi}");
    }

    #[test]
    fn chi_square_critical_is_close_to_tables() {
        // 99.9% points (z = 3.0902): df 1 → 10.83, df 8 → 26.12, df 10 → 29.59.
        for (df, table) in [(8, 26.12), (10, 29.59)] {
            let c = chi_square_critical(df, 3.0902);
            assert!((c - table).abs() / table < 0.02, "df {df}: {c}");
        }
    }

    #[test]
    fn percentages_add_to_exactly_100() {
        let thirds = [1.0 / 3.0; 3];
        assert_eq!(percentages_summing_to_100(&thirds, 1), vec![334, 333, 333]);
        let p = [
            1.0 / 36.0,
            2.0 / 36.0,
            12.0 / 36.0,
            6.0 / 36.0,
            5.0 / 36.0,
            4.0 / 36.0,
            6.0 / 36.0,
        ];
        let units = percentages_summing_to_100(&p, 1);
        assert_eq!(units.iter().sum::<u64>(), 1000);
        assert_eq!(units, vec![28, 55, 333, 167, 139, 111, 167]);
        // Exact ties go to the earlier entry: 15/36, 6/36, 5/36, 4/36, 6/36.
        let p = [15.0 / 36.0, 6.0 / 36.0, 5.0 / 36.0, 4.0 / 36.0, 6.0 / 36.0];
        assert_eq!(
            percentages_summing_to_100(&p, 1),
            vec![417, 167, 139, 111, 166]
        );
    }
}
