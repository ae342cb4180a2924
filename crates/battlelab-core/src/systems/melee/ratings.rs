//! Ratings of a round robin: Bradley–Terry strengths fitted to the pairwise scores, their
//! Elo-style ratings, each profile's mean score, and the point-value hints a straight
//! line through (points, Elo) gives.
//!
//! Why this module exists: the maths is plain statistics over a table of scores, apart
//! from the engagements that fill it (in [`super`]); kept here it reads and is tested on
//! its own. Only the melee round robin rates profiles today, so it lives with melee.

/// Bradley–Terry strengths from pairwise results by the MM algorithm (Hunter 2004).
///
/// `wins[i][j]` is how much `i` scored against `j` (a draw counts ½) in `games[i][j]`
/// games. `prior_draws` adds that many drawn games to every pair, which keeps strengths
/// finite when a profile wins every game. Strengths are scaled to geometric mean 1.
pub fn bradley_terry(wins: &[Vec<f64>], games: &[Vec<f64>], prior_draws: f64) -> Vec<f64> {
    let n = wins.len();
    let w = |i: usize, j: usize| wins[i][j] + 0.5 * prior_draws;
    let g = |i: usize, j: usize| games[i][j] + prior_draws;
    let mut strength = vec![1.0f64; n];
    for _ in 0..100_000 {
        let mut next = vec![0.0; n];
        for i in 0..n {
            let won: f64 = (0..n).filter(|&j| j != i).map(|j| w(i, j)).sum();
            let denominator: f64 = (0..n)
                .filter(|&j| j != i)
                .map(|j| g(i, j) / (strength[i] + strength[j]))
                .sum();
            next[i] = if denominator > 0.0 {
                won / denominator
            } else {
                1.0
            };
        }
        let log_mean = next.iter().map(|s| s.max(1e-300).ln()).sum::<f64>() / n as f64;
        for s in &mut next {
            *s = (*s / log_mean.exp()).max(1e-300);
        }
        let change = next
            .iter()
            .zip(&strength)
            .map(|(a, b)| (a.ln() - b.ln()).abs())
            .fold(0.0, f64::max);
        strength = next;
        if change < 1e-13 {
            break;
        }
    }
    strength
}

/// A round robin's results: `score[i][j]` = score of profile i (as A) against j (as B).
pub struct RoundRobinTable {
    pub score: Vec<Vec<f64>>,
    pub strength: Vec<f64>,
}

/// Elo-style rating of a Bradley–Terry strength: 1500 + 400·log10(strength).
pub fn elo(strength: f64) -> f64 {
    1500.0 + 400.0 * strength.log10()
}

/// A distribution column: name, simulated counts, exact probabilities, first value.
/// Mean score of profile `i` over the field (as A and as B, mirror match excluded).
pub fn mean_score(rr: &RoundRobinTable, i: usize) -> f64 {
    let n = rr.score.len();
    let total: f64 = (0..n)
        .filter(|&j| j != i)
        .map(|j| rr.score[i][j] + 1.0 - rr.score[j][i])
        .sum();
    total / (2.0 * (n - 1) as f64)
}

/// A profile's point-value hint: where a straight line through (points, Elo) of every
/// costed profile puts it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointsHint {
    /// The line's Elo at the profile's cost.
    pub fitted_elo: f64,
    /// Its Elo minus the line's: positive plays above its cost.
    pub residual: f64,
    /// The cost at which the line gives the profile's Elo.
    pub suggested_points: f64,
}

/// Fits Elo = a + b · points by least squares over the costed profiles. `None` for every
/// profile when fewer than three are costed, the costs are all equal, or the fit does not
/// rise with points (then points say nothing about strength).
pub fn points_hints(points: &[Option<u32>], elos: &[f64]) -> Vec<Option<PointsHint>> {
    let costed: Vec<(f64, f64)> = points
        .iter()
        .zip(elos)
        .filter_map(|(p, e)| p.map(|p| (f64::from(p), *e)))
        .collect();
    let none = vec![None; points.len()];
    if costed.len() < 3 {
        return none;
    }
    let n = costed.len() as f64;
    let mean_x = costed.iter().map(|c| c.0).sum::<f64>() / n;
    let mean_y = costed.iter().map(|c| c.1).sum::<f64>() / n;
    let sxx: f64 = costed.iter().map(|c| (c.0 - mean_x).powi(2)).sum();
    let sxy: f64 = costed.iter().map(|c| (c.0 - mean_x) * (c.1 - mean_y)).sum();
    if sxx <= 0.0 || sxy <= 0.0 {
        return none;
    }
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    points
        .iter()
        .zip(elos)
        .map(|(p, &e)| {
            p.map(|p| {
                let fitted_elo = intercept + slope * f64::from(p);
                PointsHint {
                    fitted_elo,
                    residual: e - fitted_elo,
                    suggested_points: (e - intercept) / slope,
                }
            })
        })
        .collect()
}

/// "under-costed" / "over-costed" when the suggested cost is more than 10% off.
pub fn cost_verdict(points: u32, hint: &PointsHint) -> &'static str {
    let ratio = hint.suggested_points / f64::from(points);
    if ratio > 1.1 {
        "under-costed"
    } else if ratio < 0.9 {
        "over-costed"
    } else {
        "about right"
    }
}
