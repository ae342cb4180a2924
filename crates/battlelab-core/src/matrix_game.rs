//! Two-player zero-sum matrix games solved exactly enough (f64, a dense simplex) for the
//! field battle's stochastic game (`systems::field::game`).
//!
//! Why this module exists: the field battle's tactical matrix (docs/systems/field.md) makes
//! every round a simultaneous choice, so optimal play is a mixed strategy found by linear
//! programming. The matrices are tiny (at most 7 × 7) and there are many of them (one per
//! battle state and round), so a small dense tableau simplex in f64 with Bland's rule
//! (which cannot cycle on the degenerate games the matrix produces: "no combat" cells give
//! whole blocks of equal payoffs) is both faster and easier to audit than a general LP
//! crate. The design allowed `minilp`/`microlp` or an own solver; these games need neither
//! rationals nor sparse storage.
//!
//! The row player maximises, the column player minimises. The payoffs are shifted and
//! scaled to lie in `[1, 2]`, then the column player's LP
//! `max Σ y  s.t.  A'·y ≤ 1, y ≥ 0` is solved from the slack basis; its optimum `z` gives
//! the value `1/z` (undone to the original scale), `y/z` is the column player's optimal
//! mix and the dual prices of the slack rows, divided by `z`, the row player's.
//!
//! [`solve_exact`] is the same simplex in exact rationals (`BigRational`, no tolerance):
//! where a game's payoffs are fractions, its value and mixes are fractions too, so a
//! solved field game can be held against the report's exact probabilities fraction for
//! fraction (`systems::field::game::solve_exact`).

use std::ops::{Add, Div, Mul, Neg, Sub};

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

/// A number a game's payoffs are counted in: `f64` for the solver the commands use,
/// [`BigRational`] for the exact one. Whole numbers and the four operations are all the
/// stage games need.
pub trait GameNumber:
    Clone
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    fn whole(n: i64) -> Self;
}

impl GameNumber for f64 {
    fn whole(n: i64) -> Self {
        n as f64
    }
}

impl GameNumber for BigRational {
    fn whole(n: i64) -> Self {
        BigRational::from_integer(BigInt::from(n))
    }
}

/// Largest number of strategies per player.
pub const MAX_STRATEGIES: usize = 7;

/// Pivot and reduced-cost tolerance on the scaled tableau (payoffs in `[1, 2]`).
const EPS: f64 = 1e-12;

/// A solved game: its value and one optimal mixed strategy per player.
#[derive(Clone, Debug, PartialEq)]
pub struct GameSolution {
    /// The value of the game to the row player (who maximises).
    pub value: f64,
    /// The row player's optimal mix (probabilities summing to 1).
    pub row: Vec<f64>,
    /// The column player's optimal mix.
    pub column: Vec<f64>,
}

/// Solves the zero-sum game `payoff[i][j]` (row player's payoff when it plays `i` and the
/// column player `j`; rows of equal length, at most [`MAX_STRATEGIES`] each way, no
/// non-finite entries). Where several mixes are optimal, the one Bland's rule reaches
/// first is returned, so the answer is the same on every run.
pub fn solve(payoff: &[Vec<f64>]) -> GameSolution {
    let m = payoff.len();
    let n = payoff.first().map_or(0, Vec::len);
    assert!(
        (1..=MAX_STRATEGIES).contains(&m) && (1..=MAX_STRATEGIES).contains(&n),
        "a matrix game has 1 to {MAX_STRATEGIES} strategies a side"
    );
    let (lo, hi) = payoff
        .iter()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    let range = hi - lo;
    if range.is_nan() || range <= 0.0 {
        // Every entry equal (or the matrix is degenerate in some other way): any play is
        // optimal; the first strategy each.
        let pure = |k: usize| (0..k).map(|i| f64::from(u8::from(i == 0))).collect();
        return GameSolution {
            value: lo,
            row: pure(m),
            column: pure(n),
        };
    }
    // Tableau: m rows of [A' | I | 1], then the objective row [-1 … | 0 … | 0].
    let width = n + m + 1;
    let mut t = vec![0.0f64; (m + 1) * width];
    for i in 0..m {
        for j in 0..n {
            t[i * width + j] = (payoff[i][j] - lo) / range + 1.0;
        }
        t[i * width + n + i] = 1.0;
        t[i * width + width - 1] = 1.0;
    }
    for j in 0..n {
        t[m * width + j] = -1.0;
    }
    // basis[i]: the variable basic in row i (y_j = j, slack_i = n + i).
    let mut basis: Vec<usize> = (n..n + m).collect();
    // Bland's rule terminates; the cap only guards against floating-point surprises.
    for _ in 0..1000 {
        let Some(enter) = (0..n + m).find(|&c| t[m * width + c] < -EPS) else {
            break;
        };
        let mut leave: Option<(usize, f64)> = None;
        for r in 0..m {
            let a = t[r * width + enter];
            if a > EPS {
                let ratio = t[r * width + width - 1] / a;
                leave = match leave {
                    None => Some((r, ratio)),
                    Some((best, best_ratio)) => {
                        if ratio < best_ratio - EPS
                            || (ratio <= best_ratio + EPS && basis[r] < basis[best])
                        {
                            Some((r, ratio))
                        } else {
                            Some((best, best_ratio))
                        }
                    }
                };
            }
        }
        // The LP is bounded (every scaled payoff is at least 1), so a row always leaves.
        let Some((pivot_row, _)) = leave else { break };
        let pivot = t[pivot_row * width + enter];
        for c in 0..width {
            t[pivot_row * width + c] /= pivot;
        }
        for r in 0..=m {
            if r != pivot_row {
                let factor = t[r * width + enter];
                if factor != 0.0 {
                    for c in 0..width {
                        t[r * width + c] -= factor * t[pivot_row * width + c];
                    }
                }
            }
        }
        basis[pivot_row] = enter;
    }
    let z = t[m * width + width - 1];
    let mut column = vec![0.0; n];
    for (r, &b) in basis.iter().enumerate() {
        if b < n {
            column[b] = t[r * width + width - 1];
        }
    }
    let mut row: Vec<f64> = (0..m).map(|i| t[m * width + n + i]).collect();
    normalise(&mut row);
    normalise(&mut column);
    let scaled_value = 1.0 / z;
    GameSolution {
        value: (scaled_value - 1.0) * range + lo,
        row,
        column,
    }
}

/// Clips round-off below zero and rescales to a sum of 1.
fn normalise(mix: &mut [f64]) {
    for p in mix.iter_mut() {
        if *p < 1e-15 {
            *p = 0.0;
        }
    }
    let total: f64 = mix.iter().sum();
    if total > 0.0 {
        mix.iter_mut().for_each(|p| *p /= total);
    } else {
        mix.iter_mut()
            .enumerate()
            .for_each(|(i, p)| *p = f64::from(u8::from(i == 0)));
    }
}

/// A game solved in exact rationals: its value and one optimal mixed strategy per player.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactSolution {
    pub value: BigRational,
    pub row: Vec<BigRational>,
    pub column: Vec<BigRational>,
}

/// [`solve`] in exact rationals: the same tableau and Bland's rule, with no tolerance
/// (Bland's rule cannot cycle, so it ends), and no scaling (the payoffs are only shifted
/// to be at least 1). The mixes add up to exactly 1.
pub fn solve_exact(payoff: &[Vec<BigRational>]) -> ExactSolution {
    let m = payoff.len();
    let n = payoff.first().map_or(0, Vec::len);
    assert!(
        (1..=MAX_STRATEGIES).contains(&m) && (1..=MAX_STRATEGIES).contains(&n),
        "a matrix game has 1 to {MAX_STRATEGIES} strategies a side"
    );
    let lo = payoff
        .iter()
        .flatten()
        .min()
        .expect("a game has payoffs")
        .clone();
    let hi = payoff.iter().flatten().max().expect("a game has payoffs");
    let pure = |k: usize| -> Vec<BigRational> {
        (0..k)
            .map(|i| {
                if i == 0 {
                    BigRational::one()
                } else {
                    BigRational::zero()
                }
            })
            .collect()
    };
    if *hi == lo {
        return ExactSolution {
            value: lo,
            row: pure(m),
            column: pure(n),
        };
    }
    let one = BigRational::one();
    let width = n + m + 1;
    let mut t = vec![BigRational::zero(); (m + 1) * width];
    for i in 0..m {
        for j in 0..n {
            t[i * width + j] = &payoff[i][j] - &lo + &one;
        }
        t[i * width + n + i] = one.clone();
        t[i * width + width - 1] = one.clone();
    }
    for j in 0..n {
        t[m * width + j] = -one.clone();
    }
    let mut basis: Vec<usize> = (n..n + m).collect();
    while let Some(enter) = (0..n + m).find(|&c| t[m * width + c].is_negative()) {
        let mut leave: Option<(usize, BigRational)> = None;
        for r in 0..m {
            let a = &t[r * width + enter];
            if a.is_positive() {
                let ratio = &t[r * width + width - 1] / a;
                let better = match &leave {
                    None => true,
                    Some((best, best_ratio)) => {
                        ratio < *best_ratio || (ratio == *best_ratio && basis[r] < basis[*best])
                    }
                };
                if better {
                    leave = Some((r, ratio));
                }
            }
        }
        // Bounded: every shifted payoff is at least 1.
        let (pivot_row, _) = leave.expect("the game's LP is bounded");
        let pivot = t[pivot_row * width + enter].clone();
        for c in 0..width {
            t[pivot_row * width + c] = &t[pivot_row * width + c] / &pivot;
        }
        for r in 0..=m {
            if r != pivot_row {
                let factor = t[r * width + enter].clone();
                if !factor.is_zero() {
                    for c in 0..width {
                        let delta = &factor * &t[pivot_row * width + c];
                        t[r * width + c] = &t[r * width + c] - delta;
                    }
                }
            }
        }
        basis[pivot_row] = enter;
    }
    let z = t[m * width + width - 1].clone();
    let shifted_value = one.clone() / &z;
    let mut column = vec![BigRational::zero(); n];
    for (r, &b) in basis.iter().enumerate() {
        if b < n {
            column[b] = &t[r * width + width - 1] * &shifted_value;
        }
    }
    let row = (0..m)
        .map(|i| &t[m * width + n + i] * &shifted_value)
        .collect();
    ExactSolution {
        value: shifted_value + lo - one,
        row,
        column,
    }
}

/// The row player's expected payoff of each pure row against the column mix `column`.
pub fn row_payoffs(payoff: &[Vec<f64>], column: &[f64]) -> Vec<f64> {
    payoff
        .iter()
        .map(|row| row.iter().zip(column).map(|(a, q)| a * q).sum())
        .collect()
}

/// The row player's expected payoff when the column player plays each pure column
/// against the row mix `row`.
pub fn column_payoffs(payoff: &[Vec<f64>], row: &[f64]) -> Vec<f64> {
    let n = payoff.first().map_or(0, Vec::len);
    (0..n)
        .map(|j| payoff.iter().zip(row).map(|(r, p)| r[j] * p).sum())
        .collect()
}

/// Rows strictly dominated by another pure row (worse against every column, by more than
/// `tolerance`) for the maximising row player.
pub fn dominated_rows(payoff: &[Vec<f64>], tolerance: f64) -> Vec<usize> {
    (0..payoff.len())
        .filter(|&i| {
            (0..payoff.len()).any(|k| {
                k != i
                    && payoff[k]
                        .iter()
                        .zip(&payoff[i])
                        .all(|(better, worse)| *better > worse + tolerance)
            })
        })
        .collect()
}

/// Columns strictly dominated by another pure column (higher payoff to the row player
/// against every row, by more than `tolerance`) for the minimising column player.
pub fn dominated_columns(payoff: &[Vec<f64>], tolerance: f64) -> Vec<usize> {
    let n = payoff.first().map_or(0, Vec::len);
    (0..n)
        .filter(|&j| (0..n).any(|l| l != j && payoff.iter().all(|row| row[l] < row[j] - tolerance)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(rows: &[&[f64]]) -> Vec<Vec<f64>> {
        rows.iter().map(|r| r.to_vec()).collect()
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    /// Against the other side's optimal mix no pure strategy beats the value.
    fn assert_equilibrium(game: &[Vec<f64>], s: &GameSolution) {
        for v in row_payoffs(game, &s.column) {
            assert!(v <= s.value + 1e-12, "{v} > {}", s.value);
        }
        for v in column_payoffs(game, &s.row) {
            assert!(v >= s.value - 1e-12, "{v} < {}", s.value);
        }
        assert!((s.row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((s.column.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn matching_pennies_is_half_half_with_value_zero() {
        let game = m(&[&[1.0, -1.0], &[-1.0, 1.0]]);
        let s = solve(&game);
        assert!(s.value.abs() < 1e-12);
        assert!(close(&s.row, &[0.5, 0.5]) && close(&s.column, &[0.5, 0.5]));
        assert_equilibrium(&game, &s);
    }

    #[test]
    fn rock_paper_scissors_is_uniform() {
        let game = m(&[&[0.0, -1.0, 1.0], &[1.0, 0.0, -1.0], &[-1.0, 1.0, 0.0]]);
        let s = solve(&game);
        let third = [1.0 / 3.0; 3];
        assert!(s.value.abs() < 1e-12);
        assert!(close(&s.row, &third) && close(&s.column, &third));
        assert_equilibrium(&game, &s);
    }

    /// A saddle point: row 1, column 0 (value 3): the row minimum that is its column's
    /// maximum.
    #[test]
    fn saddle_point_is_pure() {
        let game = m(&[&[2.0, 5.0, 1.0], &[3.0, 4.0, 6.0], &[1.0, 7.0, 0.0]]);
        // Row minima 1, 3, 0 → maximin 3 (row 1); column maxima 3, 7, 6 → minimax 3 (col 0).
        let s = solve(&game);
        assert!((s.value - 3.0).abs() < 1e-12);
        assert!(close(&s.row, &[0.0, 1.0, 0.0]));
        assert!(close(&s.column, &[1.0, 0.0, 0.0]));
        assert_equilibrium(&game, &s);
    }

    /// Row 2 is dominated by row 0; without it the game is [[3, -1], [-2, 1]]:
    /// p·3 − 2(1−p) = −p + (1−p) → p = 3/7, value 1/7; column q: 3q − (1−q) = −2q + (1−q)
    /// → q = 2/7.
    #[test]
    fn dominated_row_is_never_played() {
        let game = m(&[&[3.0, -1.0], &[-2.0, 1.0], &[2.0, -2.0]]);
        let s = solve(&game);
        assert!((s.value - 1.0 / 7.0).abs() < 1e-12, "{}", s.value);
        assert!(close(&s.row, &[3.0 / 7.0, 4.0 / 7.0, 0.0]), "{:?}", s.row);
        assert!(close(&s.column, &[2.0 / 7.0, 5.0 / 7.0]), "{:?}", s.column);
        assert_eq!(dominated_rows(&game, 1e-12), [2]);
        assert!(dominated_columns(&game, 1e-12).is_empty());
        assert_equilibrium(&game, &s);
    }

    #[test]
    fn constant_and_degenerate_games() {
        let game = m(&[&[0.25; 7], &[0.25; 7]]);
        let s = solve(&game);
        assert_eq!(s.value, 0.25);
        assert_equilibrium(&game, &s);
        // Blocks of equal payoffs (like "no combat" cells) and a duplicated row.
        let game = m(&[
            &[0.0, 1.0, 0.5, 0.5],
            &[1.0, 0.0, 0.5, 0.5],
            &[0.5, 0.5, 0.5, 0.5],
            &[0.0, 1.0, 0.5, 0.5],
        ]);
        let s = solve(&game);
        assert!((s.value - 0.5).abs() < 1e-12);
        assert_equilibrium(&game, &s);
        let single = solve(&m(&[&[4.0, -2.0, 7.0]]));
        assert_eq!(single.value, -2.0);
        assert!(close(&single.column, &[0.0, 1.0, 0.0]));
    }

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    /// The game of `dominated_row_is_never_played` in fractions: value 1/7, mixes
    /// (3/7, 4/7, 0) and (2/7, 5/7) exactly.
    #[test]
    fn exact_solutions_are_fractions() {
        let game: Vec<Vec<BigRational>> = [[3, -1], [-2, 1], [2, -2]]
            .iter()
            .map(|r| r.iter().map(|&v| q(v, 1)).collect())
            .collect();
        let s = solve_exact(&game);
        assert_eq!(s.value, q(1, 7));
        assert_eq!(s.row, [q(3, 7), q(4, 7), q(0, 1)]);
        assert_eq!(s.column, [q(2, 7), q(5, 7)]);
        let pennies: Vec<Vec<BigRational>> = vec![vec![q(1, 2), q(-1, 3)], vec![q(-1, 3), q(1, 2)]];
        let s = solve_exact(&pennies);
        assert_eq!(s.value, q(1, 12));
        assert_eq!(s.row, [q(1, 2), q(1, 2)]);
    }

    /// Random games with fractional payoffs: exactly no pure strategy beats the value
    /// against the other side's mix, and the exact value is the f64 solver's to 1e-12.
    #[test]
    fn random_exact_games_meet_the_equilibrium_conditions_exactly() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..300 {
            let rows = (next() % 7 + 1) as usize;
            let cols = (next() % 7 + 1) as usize;
            let game: Vec<Vec<BigRational>> = (0..rows)
                .map(|_| {
                    (0..cols)
                        .map(|_| q((next() % 7) as i64 - 3, (next() % 3 + 1) as i64))
                        .collect()
                })
                .collect();
            let s = solve_exact(&game);
            assert_eq!(s.row.iter().sum::<BigRational>(), q(1, 1));
            assert_eq!(s.column.iter().sum::<BigRational>(), q(1, 1));
            assert!(s.row.iter().chain(&s.column).all(|p| !p.is_negative()));
            for row in &game {
                let payoff: BigRational = row.iter().zip(&s.column).map(|(a, q)| a * q).sum();
                assert!(payoff <= s.value);
            }
            for j in 0..cols {
                let payoff: BigRational = game.iter().zip(&s.row).map(|(r, p)| &r[j] * p).sum();
                assert!(payoff >= s.value);
            }
            let floats: Vec<Vec<f64>> = game
                .iter()
                .map(|r| r.iter().map(to_f64).collect())
                .collect();
            assert!((solve(&floats).value - to_f64(&s.value)).abs() < 1e-12);
        }
    }

    fn to_f64(v: &BigRational) -> f64 {
        use num_traits::ToPrimitive;
        v.to_f64().unwrap()
    }

    /// Random 7 × 7 games with small integer payoffs (many ties): the equilibrium
    /// conditions hold for every one.
    #[test]
    fn random_games_meet_the_equilibrium_conditions() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..2000 {
            let rows = (next() % 7 + 1) as usize;
            let cols = (next() % 7 + 1) as usize;
            let game: Vec<Vec<f64>> = (0..rows)
                .map(|_| (0..cols).map(|_| (next() % 5) as f64 - 2.0).collect())
                .collect();
            assert_equilibrium(&game, &solve(&game));
        }
    }
}
