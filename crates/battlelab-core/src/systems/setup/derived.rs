//! What the setup study's rulebook tables derive beyond each coalition's mean: the
//! spread of a coalition's land SP (states counted, 5% / median / 95% quantiles, least
//! and most), which coalition starts stronger (P(A's land SP > B's)), and each state's
//! expected forces.
//!
//! Why this module exists: `tables.md` prints these and the report page's panel reprints
//! them after an edit; both take them from here ([`crate::engine::System::derived`]), so
//! the page never redoes the arithmetic.

use crate::engine::derived::Derived;

use super::map::Quantity;
use super::SetupStudy;

/// What the coalitions table prints of a coalition's land SP beyond its mean, in its
/// columns' order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spread {
    /// The states in the coalition.
    States,
    /// The smallest total whose cumulative probability reaches 5%.
    Low,
    Median,
    /// The smallest total whose cumulative probability reaches 95%.
    High,
    Min,
    Max,
}

impl Spread {
    pub const ALL: [Spread; 6] = [
        Spread::States,
        Spread::Low,
        Spread::Median,
        Spread::High,
        Spread::Min,
        Spread::Max,
    ];

    fn name(self) -> &'static str {
        match self {
            Spread::States => "states",
            Spread::Low => "q05",
            Spread::Median => "median",
            Spread::High => "q95",
            Spread::Min => "min",
            Spread::Max => "max",
        }
    }
}

/// The key of a coalitions-table cell beyond the mean.
pub fn spread_key(coalition: &str, what: Spread) -> String {
    format!("spread/{coalition}/{}", what.name())
}

/// The key of P(coalition `a` starts with more land SP than `b`).
pub fn stronger_key(a: &str, b: &str) -> String {
    format!("stronger/{a}/{b}")
}

/// The key of a state's expected starting `quantity`.
pub fn state_key(state: &str, quantity: Quantity) -> String {
    format!("state/{state}/{}", quantity.name())
}

/// The smallest total whose cumulative probability reaches `q`.
pub fn quantile(d: &[f64], q: f64) -> usize {
    let mut cumulative = 0.0;
    for (v, p) in d.iter().enumerate() {
        cumulative += p;
        if cumulative >= q - 1e-12 {
            return v;
        }
    }
    d.len().saturating_sub(1)
}

/// P(A > B) = Σ_a P(A = a) · P(B < a), for independent-looking totals read off each
/// coalition's exact distribution.
pub fn p_greater(da: &[f64], db: &[f64]) -> f64 {
    let mut cumulative_b = vec![0.0; da.len().max(db.len()) + 1];
    for v in 0..cumulative_b.len() - 1 {
        cumulative_b[v + 1] = cumulative_b[v] + db.get(v).copied().unwrap_or(0.0);
    }
    da.iter()
        .enumerate()
        .map(|(v, p)| p * cumulative_b[v.min(cumulative_b.len() - 1)])
        .sum()
}

/// A state's expected starting `quantity`: its six rows' mean.
pub fn state_mean(study: &SetupStudy, state: usize, quantity: Quantity) -> f64 {
    study.states[state]
        .rows
        .iter()
        .map(|r| f64::from(r.quantity(quantity)))
        .sum::<f64>()
        / 6.0
}

/// Every derived number of a setup study, from each coalition's exact land SP
/// distribution (`exact[coalition][0]`, the plan's runs being the coalitions in order).
pub fn derived(study: &SetupStudy, exact: &[Option<Vec<Vec<f64>>>]) -> Vec<Derived> {
    let land: Vec<&[f64]> = exact
        .iter()
        .map(|e| {
            e.as_ref()
                .and_then(|q| q.first())
                .map_or(&[][..], |d| &d[..])
        })
        .collect();
    let mut out = Vec::new();
    for (c, name) in study.coalitions.iter().enumerate() {
        let d = land.get(c).copied().unwrap_or(&[]);
        for what in Spread::ALL {
            let value = match what {
                Spread::States => study.members(c).len(),
                Spread::Low => quantile(d, 0.05),
                Spread::Median => quantile(d, 0.5),
                Spread::High => quantile(d, 0.95),
                Spread::Min => d.iter().position(|p| *p > 0.0).unwrap_or(0),
                Spread::Max => d.iter().rposition(|p| *p > 0.0).unwrap_or(0),
            };
            out.push(Derived::new(spread_key(name, what), value as f64));
        }
    }
    for (i, a) in study.coalitions.iter().enumerate() {
        for (j, b) in study.coalitions.iter().enumerate() {
            if i != j {
                let (da, db) = (land.get(i).copied(), land.get(j).copied());
                let p = p_greater(da.unwrap_or(&[]), db.unwrap_or(&[]));
                out.push(Derived::new(stronger_key(a, b), p));
            }
        }
    }
    for (s, state) in study.states.iter().enumerate() {
        for quantity in [
            Quantity::Sp,
            Quantity::Leaders,
            Quantity::Nsp,
            Quantity::Transports,
        ] {
            let value = state_mean(study, s, quantity);
            out.push(Derived::new(state_key(&state.name, quantity), value));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_comparisons_by_hand() {
        // Totals 0, 1, 2 with 1/4, 1/2, 1/4.
        let d = [0.25, 0.5, 0.25];
        assert_eq!(quantile(&d, 0.05), 0);
        assert_eq!(quantile(&d, 0.5), 1);
        assert_eq!(quantile(&d, 0.95), 2);
        // P(A > B) against a certain 1: only A = 2 wins; against itself 1/4·1/4 + 1/2·1/4.
        assert_eq!(p_greater(&d, &[0.0, 1.0]), 0.25);
        assert_eq!(p_greater(&d, &d), 0.3125);
    }
}
