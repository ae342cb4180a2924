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

/// Percentages rounded to whole units of `10^-decimals` percent that add up to exactly
/// 100%, and which of them rounding moved away from their own nearest value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundedRow {
    /// The rounded values in units (tenths of a percent for `decimals = 1`).
    pub units: Vec<u64>,
    /// `moved[i]`: value `i` is not its own nearest rounding (it was moved one unit so
    /// the row adds to 100%); a table marks it (e.g. with `†`).
    pub moved: Vec<bool>,
}

impl RoundedRow {
    /// Whether rounding moved any value away from its nearest rounding.
    pub fn any_moved(&self) -> bool {
        self.moved.iter().any(|&m| m)
    }

    /// Value `i` as a decimal with `decimals` digits after the point ("33.3").
    pub fn text(&self, i: usize, decimals: u32) -> String {
        units_text(self.units[i], decimals)
    }
}

/// `units` of `10^-decimals` written as a decimal: 333 at 1 decimal is "33.3".
pub fn units_text(units: u64, decimals: u32) -> String {
    if decimals == 0 {
        return units.to_string();
    }
    let scale = 10u64.pow(decimals);
    format!(
        "{}.{:0width$}",
        units / scale,
        units % scale,
        width = decimals as usize
    )
}

/// Rounds values given as `whole + remainder / denominator` units (remainder below the
/// denominator) so that they add up to `total` units, moving as little as possible.
///
/// Each value starts at its nearest rounding (a remainder of exactly one half rounds up).
/// If those do not add up, the values moved are the ones whose move costs least: the
/// total absolute deviation from the exact values grows by `|1 − 2·remainder|` per value
/// moved, so the remainders nearest one half move first. Among equal costs exact thirds
/// and sixths (`protected`: k/3 or k/6 in lowest terms, whose decimals repeat) move last,
/// so a third reads 33.3 and a sixth 16.7 wherever an equally near row allows it; then
/// the larger value moves (two thirds become 66.6 rather than a sixth 16.6: the same total
/// deviation, a smaller relative one); among values equal in all of these, the earlier
/// entries get the larger values (moved up first, moved down last), as the
/// largest-remainder method gives them. This minimises the total
/// absolute deviation among all roundings to whole units that add up to `total`: no
/// value ever needs to move by more than one unit.
fn round_to_total(
    parts: &[(u64, u128)],
    denominator: u128,
    total: u64,
    protected: &[bool],
) -> RoundedRow {
    let n = parts.len();
    // Nearest rounding: up when 2·remainder ≥ denominator.
    let up: Vec<bool> = parts.iter().map(|&(_, r)| 2 * r >= denominator).collect();
    let mut units: Vec<u64> = parts
        .iter()
        .zip(&up)
        .map(|(&(w, _), &u)| w + u64::from(u))
        .collect();
    let mut moved = vec![false; n];
    let sum: u64 = units.iter().sum();
    // The cost of moving value i away from its nearest rounding, ×denominator:
    // |denominator − 2·remainder|.
    let cost = |i: usize| {
        let twice = 2 * parts[i].1;
        twice.abs_diff(denominator)
    };
    // Among equal costs exact thirds and sixths move last, then the larger exact value
    // moves first (its relative error is smaller).
    let larger = |i: usize, j: usize| {
        protected[i]
            .cmp(&protected[j])
            .then(parts[j].0.cmp(&parts[i].0))
    };
    if sum < total {
        // Move up values that were rounded down (and have something to round).
        let mut order: Vec<usize> = (0..n).filter(|&i| !up[i] && parts[i].1 > 0).collect();
        order.sort_by(|&i, &j| cost(i).cmp(&cost(j)).then(larger(i, j)).then(i.cmp(&j)));
        for &i in order.iter().take((total - sum) as usize) {
            units[i] += 1;
            moved[i] = true;
        }
    } else if sum > total {
        // Move down values that were rounded up.
        let mut order: Vec<usize> = (0..n).filter(|&i| up[i]).collect();
        order.sort_by(|&i, &j| cost(i).cmp(&cost(j)).then(larger(i, j)).then(j.cmp(&i)));
        for &i in order.iter().take((sum - total) as usize) {
            units[i] -= 1;
            // A remainder of exactly one half is as near to either rounding.
            moved[i] = 2 * parts[i].1 != denominator;
        }
    }
    for (i, m) in moved.iter_mut().enumerate() {
        *m = *m && cost(i) != 0;
    }
    RoundedRow { units, moved }
}

/// Rounds probabilities to whole units of `10^-decimals` percent so that they add up to
/// exactly 100%, moving as little as possible from the exact values (see
/// `round_to_total`); `moved` says which values are not their own nearest rounding.
/// Remainders are compared on a 10^-9 grid so that exact ties (1/6 and 5/30 say) are not
/// split by floating-point noise. Where the exact counts are known, prefer
/// [`rounded_percentages_exact`].
pub fn rounded_percentages(probabilities: &[f64], decimals: u32) -> RoundedRow {
    let scale = 100.0 * 10f64.powi(decimals as i32);
    let total_units = scale.round() as u64;
    let sum: f64 = probabilities.iter().sum();
    if sum <= 0.0 || !sum.is_finite() {
        return RoundedRow {
            units: vec![0; probabilities.len()],
            moved: vec![false; probabilities.len()],
        };
    }
    const GRID: u128 = 1_000_000_000;
    let parts: Vec<(u64, u128)> = probabilities
        .iter()
        .map(|p| {
            let raw = (p / sum * scale).max(0.0);
            // The value on the 10^-9 grid, so that noise below it does not split ties.
            let on_grid = (raw * GRID as f64).round() as u128;
            ((on_grid / GRID) as u64, on_grid % GRID)
        })
        .collect();
    let near_whole = |x: f64| (x - x.round()).abs() < 1e-9;
    let protected: Vec<bool> = probabilities
        .iter()
        .map(|p| near_whole(p / sum * 6.0) && !near_whole(p / sum * 2.0))
        .collect();
    round_to_total(&parts, GRID, total_units, &protected)
}

/// Like [`rounded_percentages`], from exact integer counts out of their sum: every
/// remainder is compared exactly.
pub fn rounded_percentages_exact(counts: &[u64], decimals: u32) -> RoundedRow {
    let total_units = 100 * 10u64.pow(decimals);
    let sum: u128 = counts.iter().map(|&c| u128::from(c)).sum();
    if sum == 0 {
        return RoundedRow {
            units: vec![0; counts.len()],
            moved: vec![false; counts.len()],
        };
    }
    let parts: Vec<(u64, u128)> = counts
        .iter()
        .map(|&c| {
            let scaled = u128::from(c) * u128::from(total_units);
            ((scaled / sum) as u64, scaled % sum)
        })
        .collect();
    // k/3 or k/6 in lowest terms: 6c is a multiple of the sum, 2c is not.
    let protected: Vec<bool> = counts
        .iter()
        .map(|&c| (6 * u128::from(c)) % sum == 0 && (2 * u128::from(c)) % sum != 0)
        .collect();
    round_to_total(&parts, sum, total_units, &protected)
}

/// Rounds probabilities to whole units of `10^-decimals` percent so that they add up to
/// exactly 100% ([`rounded_percentages`] without the marks). Returns the rounded values
/// in units (e.g. tenths of a percent for `decimals = 1`).
pub fn percentages_summing_to_100(probabilities: &[f64], decimals: u32) -> Vec<u64> {
    rounded_percentages(probabilities, decimals).units
}

/// The mean of a histogram of the values 0, 1, 2, …: an integer sum divided once, so it
/// prints as the number it is (1.8875, not 1.8875000000000002).
pub fn count_mean(counts: &[u64]) -> f64 {
    let n: u64 = counts.iter().sum();
    count_sum(counts, 0) as f64 / n.max(1) as f64
}

/// The sum of the values counted by a histogram of the values `first`, `first + 1`, …,
/// in integers.
pub fn count_sum(counts: &[u64], first: u64) -> u128 {
    counts
        .iter()
        .enumerate()
        .map(|(i, &c)| u128::from(first + i as u64) * u128::from(c))
        .sum()
}

/// The mean of a distribution given as probabilities of the values 0, 1, 2, …
pub fn distribution_mean(probabilities: &[f64]) -> f64 {
    probabilities
        .iter()
        .enumerate()
        .map(|(v, p)| v as f64 * p)
        .sum()
}

/// `ln Γ(x)` for x > 0 (Lanczos, g = 7, 9 terms: about 15 significant digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function `I_x(a, b)` (continued fraction, Lentz).
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast for x < (a + 1) / (a + b + 2).
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(b, a, 1.0 - x);
    }
    let tiny = 1e-300;
    let mut f = 1.0;
    let mut c = 1.0;
    let mut d = 0.0;
    for i in 0..=400 {
        let m = f64::from(i / 2);
        let numerator = if i == 0 {
            1.0
        } else if i % 2 == 0 {
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
        } else {
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))
        };
        d = 1.0 + numerator * d;
        if d.abs() < tiny {
            d = tiny;
        }
        d = 1.0 / d;
        c = 1.0 + numerator / c;
        if c.abs() < tiny {
            c = tiny;
        }
        let cd = c * d;
        f *= cd;
        if (1.0 - cd).abs() < 1e-15 {
            break;
        }
    }
    front * (f - 1.0) / a
}

/// The two-sided p-value of Student's t statistic `t` with `df` degrees of freedom (the
/// normal distribution's beyond 10^6 degrees of freedom).
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    if df > 1e6 {
        return normal_two_sided_p(t);
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// The `q` quantile (0 < q < 1) of Student's t with `df` degrees of freedom, by bisection
/// on the distribution function.
pub fn student_t_quantile(q: f64, df: f64) -> f64 {
    let cdf = |t: f64| {
        let tail = student_t_two_sided_p(t.abs(), df) / 2.0;
        if t >= 0.0 {
            1.0 - tail
        } else {
            tail
        }
    };
    let (mut lo, mut hi) = (-1e3, 1e3);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The complementary error function (Numerical Recipes' Chebyshev fit; relative error
/// below 1.2e-7 everywhere: ample for p-values).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// The two-sided p-value of a standard normal statistic `z`.
pub fn normal_two_sided_p(z: f64) -> f64 {
    if !z.is_finite() {
        return 0.0;
    }
    erfc(z.abs() / std::f64::consts::SQRT_2).clamp(0.0, 1.0)
}

/// Holm's step-down correction: which of `p_values` are significant with the
/// family-wise error rate held at `alpha`.
pub fn holm(p_values: &[f64], alpha: f64) -> Vec<bool> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut significant = vec![false; m];
    for (rank, &i) in order.iter().enumerate() {
        if p_values[i] <= alpha / (m - rank) as f64 {
            significant[i] = true;
        } else {
            break;
        }
    }
    significant
}

/// The Benjamini–Hochberg step-up procedure: which of `p_values` are significant with
/// the false discovery rate held at `alpha`.
pub fn benjamini_hochberg(p_values: &[f64], alpha: f64) -> Vec<bool> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let last = order
        .iter()
        .enumerate()
        .rev()
        .find(|(rank, &i)| p_values[i] <= alpha * (rank + 1) as f64 / m as f64)
        .map(|(rank, _)| rank);
    let mut significant = vec![false; m];
    if let Some(last) = last {
        for &i in &order[..=last] {
            significant[i] = true;
        }
    }
    significant
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
        // 15/36, 6/36, 5/36, 4/36, 6/36 = 41.666…, 16.666…, 13.888…, 11.111…, 16.666…:
        // nearest 41.7 + 16.7 + 13.9 + 11.1 + 16.7 = 100.1. Moving 41.7, 16.7 or 16.7
        // down costs the same (remainder .666); the largest value moves: 41.6, and both
        // sixths stay 16.7.
        let p = [15.0 / 36.0, 6.0 / 36.0, 5.0 / 36.0, 4.0 / 36.0, 6.0 / 36.0];
        assert_eq!(
            percentages_summing_to_100(&p, 1),
            vec![416, 167, 139, 111, 167]
        );
    }

    /// Rounds exact counts and checks the units, the marks and the sum.
    fn exact(counts: &[u64], units: &[u64], moved: &[bool]) {
        let row = rounded_percentages_exact(counts, 1);
        assert_eq!(row.units, units, "{counts:?}");
        assert_eq!(row.moved, moved, "{counts:?}");
        assert_eq!(row.units.iter().sum::<u64>(), 1000, "{counts:?}");
        // The float version agrees wherever the counts are exact.
        let total: u64 = counts.iter().sum();
        let p: Vec<f64> = counts.iter().map(|&c| c as f64 / total as f64).collect();
        assert_eq!(rounded_percentages(&p, 1), row, "{counts:?}");
    }

    #[test]
    fn thirds_cannot_all_be_33_3() {
        // 1/3 = 33.333…%: every value's nearest rounding is 33.3, which adds to 99.9.
        // Any row of tenths that adds to 100.0 needs one value at 33.4 (deviation
        // 0.0667) or a value further away: 33.3 + 33.3 + 33.4 is the best there is
        // (total deviation 0.0333 + 0.0333 + 0.0667 = 0.1333), so 33.4 is acceptable
        // here, and it is marked as moved. With three equal remainders the earliest
        // value gets the larger one.
        exact(&[1, 1, 1], &[334, 333, 333], &[true, false, false]);
    }

    #[test]
    fn sixths_and_two_thirds_round_to_their_nearest() {
        // 1/6 = 16.666…% → nearest 16.7; 2/3 = 66.666…% → nearest 66.7. 16.7 + 16.7 +
        // 66.7 = 100.1: one value moves down, each at the same cost (remainder .666 of a
        // tenth, |1 − 2·0.666| = 0.333); the largest value moves (its relative error is
        // the smallest): 16.7, 16.7, 66.6 — in any order, never 16.6.
        exact(&[1, 1, 4], &[167, 167, 666], &[false, false, true]);
        exact(&[4, 1, 1], &[666, 167, 167], &[true, false, false]);
        // 1/2, 1/6, 1/6, 1/6: nearest 50.0 + 3 × 16.7 = 100.1; 50.0 is exact (moving it
        // costs a whole tenth), so one sixth moves: the last, 16.6.
        exact(
            &[3, 1, 1, 1],
            &[500, 167, 167, 166],
            &[false, false, false, true],
        );
    }

    #[test]
    fn six_sixths_are_four_16_7_and_two_16_6() {
        // Six values of 16.666…%: nearest 16.7 each, 100.2 in all; two must move to
        // 16.6 (the least a row of tenths adding to 100.0 can move: 4 × 16.7 + 2 × 16.6).
        // All tie, so the last two move down.
        exact(
            &[1; 6],
            &[167, 167, 167, 167, 166, 166],
            &[false, false, false, false, true, true],
        );
    }

    #[test]
    fn no_third_prints_as_33_4_when_33_3_can_add_up() {
        // 1/3, 1/6, 1/2 = 33.333…, 16.666…, 50.0: nearest 33.3, 16.7, 50.0 add to 100.0,
        // so nothing moves.
        exact(&[2, 1, 3], &[333, 167, 500], &[false, false, false]);
        // 1/3, 1/3, 1/6, 1/6: nearest 33.3, 33.3, 16.7, 16.7 = 100.0: nothing moves.
        exact(&[2, 2, 1, 1], &[333, 333, 167, 167], &[false; 4]);
        // 1/3, 2/9, 4/9 = 33.333…, 22.222…, 44.444…: nearest 33.3, 22.2, 44.4 = 99.9.
        // One moves up; the cheapest is the remainder nearest one half: 4/9 (.444 of a
        // tenth, cost 0.111) before 1/3 (.333, cost 0.333) and 2/9 (.222, cost 0.556):
        // 33.3, 22.2, 44.5.
        exact(&[3, 2, 4], &[333, 222, 445], &[false, false, true]);
        // 12 in 36, 12 in 36, 11 in 36, 1 in 36 = 33.333…, 33.333…, 30.555…, 2.777…:
        // nearest 33.3, 33.3, 30.6, 2.8 = 100.0: the thirds stay 33.3.
        exact(&[12, 12, 11, 1], &[333, 333, 306, 28], &[false; 4]);
    }

    #[test]
    fn a_third_stays_33_3_when_an_equally_near_row_allows_it() {
        // 12, 3, 3, 18 in 36 = 33.333…, 8.333…, 8.333…, 50.0: nearest 33.3 + 8.3 + 8.3 +
        // 50.0 = 99.9, one moves up. The third and both twelfths cost the same (remainder
        // .333 of a tenth, 0.333 more deviation); the third is protected, so a twelfth
        // (the earlier) moves: 33.3, 8.4, 8.3, 50.0.
        exact(
            &[12, 3, 3, 18],
            &[333, 84, 83, 500],
            &[false, true, false, false],
        );
        // 1, 2, 3 in 6 = 16.666…, 33.333…, 50.0: nearest 16.7 + 33.3 + 50.0 = 100.0.
        exact(&[1, 2, 3], &[167, 333, 500], &[false; 3]);
    }

    /// Every row of a d6 (counts of 6 in up to 6 outcomes) and of 2d6 (counts of 36 in up
    /// to 4 outcomes): the rounding adds to 100.0, is as near as any row of tenths adding
    /// to 100.0 can be (brute force over every floor/ceil choice), and never prints an
    /// exact third as 33.4 or a sixth as 16.6 where an equally near row does not.
    #[test]
    fn every_d6_and_2d6_row_is_as_near_as_possible() {
        fn rows(total: u64, parts: usize, prefix: &mut Vec<u64>, out: &mut Vec<Vec<u64>>) {
            if parts == 1 {
                prefix.push(total);
                out.push(prefix.clone());
                prefix.pop();
                return;
            }
            for c in 0..=total {
                prefix.push(c);
                rows(total - c, parts - 1, prefix, out);
                prefix.pop();
            }
        }
        let mut all = Vec::new();
        for parts in 2..=6 {
            rows(6, parts, &mut Vec::new(), &mut all);
        }
        for parts in 2..=4 {
            rows(36, parts, &mut Vec::new(), &mut all);
        }
        for counts in all {
            let sum: u64 = counts.iter().sum();
            let row = rounded_percentages_exact(&counts, 1);
            assert_eq!(row.units.iter().sum::<u64>(), 1000, "{counts:?}");
            // Deviation ×sum, in integers: |units·sum − count·1000|.
            let deviation = |units: &[u64]| -> u64 {
                units
                    .iter()
                    .zip(&counts)
                    .map(|(&u, &c)| (u * sum).abs_diff(c * 1000))
                    .sum()
            };
            // A "bad" print: an exact third as 33.4 or a sixth as 16.6 (their nearest
            // renderings are 33.3 and 16.7).
            let bad = |units: &[u64]| -> usize {
                units
                    .iter()
                    .zip(&counts)
                    .filter(|(&u, &c)| (3 * c == sum && u == 334) || (6 * c == sum && u == 166))
                    .count()
            };
            let floors: Vec<u64> = counts.iter().map(|&c| c * 1000 / sum).collect();
            let (mut best, mut fewest_bad) = (u64::MAX, usize::MAX);
            for mask in 0..(1u32 << counts.len()) {
                let units: Vec<u64> = floors
                    .iter()
                    .enumerate()
                    .map(|(i, &f)| f + u64::from(mask >> i & 1))
                    .collect();
                if units.iter().sum::<u64>() != 1000 {
                    continue;
                }
                let d = deviation(&units);
                if d < best {
                    (best, fewest_bad) = (d, bad(&units));
                } else if d == best {
                    fewest_bad = fewest_bad.min(bad(&units));
                }
            }
            assert_eq!(deviation(&row.units), best, "{counts:?}: {:?}", row.units);
            assert_eq!(bad(&row.units), fewest_bad, "{counts:?}: {:?}", row.units);
        }
    }

    #[test]
    fn halves_are_not_marked_and_other_decimals_work() {
        // 1/8 = 12.5%: at 0 decimals 12.5 is as near 12 as 13. Eight of them: nearest
        // (half up) 13 × 8 = 104, four move down to 12, none counted as moved.
        let row = rounded_percentages_exact(&[1; 8], 0);
        assert_eq!(row.units, [13, 13, 13, 13, 12, 12, 12, 12]);
        assert!(!row.any_moved());
        // Two decimals: 1/3 → 33.33, 33.33, 33.34.
        let row = rounded_percentages_exact(&[1, 1, 1], 2);
        assert_eq!(row.units, [3334, 3333, 3333]);
        assert_eq!(row.text(0, 2), "33.34");
        assert_eq!(units_text(5, 2), "0.05");
        assert_eq!(units_text(1000, 1), "100.0");
        assert_eq!(units_text(42, 0), "42");
        // Nothing to round.
        assert_eq!(rounded_percentages_exact(&[0, 0], 1).units, [0, 0]);
        assert_eq!(rounded_percentages(&[0.0, 0.0], 1).units, [0, 0]);
    }

    #[test]
    fn student_t_and_normal_tails_match_tables() {
        // Two-sided p of t = 2.0 with 10 df: 0.07338803 (R: 2*pt(-2, 10)).
        assert!((student_t_two_sided_p(2.0, 10.0) - 0.073_388_03).abs() < 1e-7);
        assert!((student_t_two_sided_p(0.0, 5.0) - 1.0).abs() < 1e-12);
        // qt(0.975, 15) = 2.131450; qnorm(0.975) = 1.959964.
        assert!((student_t_quantile(0.975, 15.0) - 2.131_450).abs() < 1e-5);
        assert!((student_t_quantile(0.975, 1e12) - Z95).abs() < 1e-5);
        assert!((normal_two_sided_p(Z95) - 0.05).abs() < 1e-8);
        // 2*pnorm(-3) = 0.002699796.
        assert!((normal_two_sided_p(3.0) - 0.002_699_796).abs() < 1e-9);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn corrections_by_hand() {
        let p = [0.01, 0.04, 0.03, 0.005];
        // Holm at 0.05: sorted 0.005 (≤ .0125), 0.01 (≤ .0167), 0.03 (> .025): stop.
        assert_eq!(holm(&p, 0.05), [true, false, false, true]);
        // BH at 0.05: ranks 1–4 thresholds .0125 .025 .0375 .05; 0.04 ≤ .05 is the last.
        assert_eq!(benjamini_hochberg(&p, 0.05), [true, true, true, true]);
        assert_eq!(benjamini_hochberg(&[0.2, 0.5], 0.05), [false, false]);
    }
}
