//! What a table study's rulebook tables derive beyond one roll's chances: the march
//! table's best request per DRM (expected extra MP per SP eliminated, over the three
//! requests) and the attrition turns study's survival (expected SP left, P(no loss),
//! P(half or less left) after each turn).
//!
//! Why this module exists: `tables.md` prints these and the report page's panel reprints
//! them after an edit; both take them from here ([`crate::engine::System::derived`]), so
//! the page never redoes the arithmetic.

use crate::engine::derived::Derived;

use super::{lookup, D6TableStudy, TableExact};

/// The requests of the march table's best-request table: extra 1, 2 and 3.
pub const REQUESTS: usize = 3;

/// The key of a march study's best-request cell: variant, DRM, request (0: extra 1).
pub fn best_request_key(variant: &str, drm: i32, request: usize) -> String {
    format!("best_request/{variant}/{drm}/{request}")
}

/// What the survival table prints of one turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Survival {
    /// The expected SP left.
    Mean,
    /// P(the stack has lost nothing).
    NoLoss,
    /// P(half the stack or less is left).
    HalfOrLess,
}

impl Survival {
    pub const ALL: [Survival; 3] = [Survival::Mean, Survival::NoLoss, Survival::HalfOrLess];

    fn name(self) -> &'static str {
        match self {
            Survival::Mean => "mean",
            Survival::NoLoss => "no_loss",
            Survival::HalfOrLess => "half_or_less",
        }
    }
}

/// The key of a turns study's survival cell: variant, turn (from 1), what.
pub fn survival_key(variant: &str, turn: usize, what: Survival) -> String {
    format!("survival/{variant}/{turn}/{}", what.name())
}

/// The DRMs a variant's grid points roll under, in order, once each.
pub fn drms(study: &D6TableStudy, variant: usize) -> Vec<i32> {
    let mut d: Vec<i32> = study
        .points
        .iter()
        .filter(|p| p.variant == variant)
        .map(|p| p.drm)
        .collect();
    d.sort();
    d.dedup();
    d
}

/// Every derived number of a table study: a march study's best requests per variant and
/// DRM, an attrition turns study's survival per variant and turn (from the turns runs'
/// exact results, which follow the grid points in plan order).
pub fn derived(study: &D6TableStudy, exact: &[Option<TableExact>]) -> Vec<Derived> {
    let mut out = Vec::new();
    if study.header.system == "march" {
        for (variant, (name, table)) in study.variants.iter().enumerate() {
            let values = lookup::outcome_values(&study.header.system, table.outcomes());
            for drm in drms(study, variant) {
                // Expected extra MP per SP eliminated, ∞ where no SP is lost.
                let ratios: Vec<f64> = (0..REQUESTS)
                    .map(|column| {
                        let dist = table.distribution(column, drm);
                        let mp = dist.expectation(|i| values[0].1[i]).to_f64();
                        let sp = dist.expectation(|i| values[1].1[i]).to_f64();
                        if sp == 0.0 {
                            f64::INFINITY
                        } else {
                            mp / sp
                        }
                    })
                    .collect();
                let best = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                for (request, &r) in ratios.iter().enumerate() {
                    out.push(Derived {
                        key: best_request_key(name, drm, request),
                        value: r,
                        best: r == best,
                        text: None,
                    });
                }
            }
        }
    }
    if let Some(turns) = study.turns {
        let runs = exact.iter().skip(study.points.len());
        for ((name, _), run) in study.variants.iter().zip(runs) {
            let Some(TableExact::Turns(result)) = run else {
                continue;
            };
            for (turn, d) in result.iter().enumerate().skip(1) {
                let mean: f64 = d.iter().enumerate().map(|(sp, p)| sp as f64 * p).sum();
                let half: f64 = d
                    .iter()
                    .enumerate()
                    .filter(|(sp, _)| 2 * sp <= turns.sp as usize)
                    .map(|(_, p)| p)
                    .sum();
                for (what, value) in [
                    (Survival::Mean, mean),
                    (Survival::NoLoss, d[turns.sp as usize]),
                    (Survival::HalfOrLess, half),
                ] {
                    out.push(Derived::new(survival_key(name, turn, what), value));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::System;

    #[test]
    fn the_best_request_is_extra_mp_per_sp_eliminated_by_hand() {
        let text = "name = \"m\"\nsystem = \"march\"\n[sweep]\nextra = [1, 2, 3]\ndrm = [0]\n";
        let study = D6TableStudy::parse(std::path::Path::new("m.toml"), text).unwrap();
        let exact: Vec<_> = (0..study.points.len()).map(|r| study.exact(r)).collect();
        let derived = derived(&study, &exact);
        let at = |request| {
            crate::engine::derived::find(&derived, &best_request_key("base", 0, request)).unwrap()
        };
        // Extra 1 (1 1 1 1 1 0) never loses an SP: ∞, the best.
        assert_eq!(at(0).value, f64::INFINITY);
        assert!(at(0).best);
        // Extra 2 (2 2 2 1* 0 0): 7/6 MP per 1/6 SP = 7; extra 3 (3 3 2* 1* 0 0): 9/6 MP
        // per 2/6 SP = 4.5. Each is the quotient of two doubles (the expectations rounded
        // once each), so within a few units in the last place; printed "7.00", "4.50".
        assert!((at(1).value - 7.0).abs() <= 4.0 * f64::EPSILON * 7.0);
        assert!(!at(1).best);
        assert!((at(2).value - 4.5).abs() <= 4.0 * f64::EPSILON * 4.5);
        assert_eq!(
            format!("{:.2} {:.2}", at(1).value, at(2).value),
            "7.00 4.50"
        );
    }
}
