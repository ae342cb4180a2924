//! The `optimal` reserve policy of ratio battles (docs/systems/ratio.md) against an
//! independent brute force (`ratio_oracle::enumerate_optimal`): every die of every battle
//! and every commitment decision, the better decision at each point chosen by the exact
//! values of both subtrees in integers. The library solves the policy by dynamic
//! programming over compressed states in f64; here its policy's exact value (from its
//! exact distribution, an integer over 6^dice) must equal the brute force's best value
//! exactly, its whole distribution must be the one the brute force's best play (ties keep
//! the reserve) gives, count for count, and its reported value `optimal_value` must be
//! that fraction to f64 rounding. Before this, `optimal` was checked only against its own
//! dynamic programme and against the fixed policies.

mod ratio_oracle;

use battlelab_core::sim::RunControl;
use battlelab_core::systems::ratio::battle::{
    simulate_battles, MinScore, Objective, Pairing, RatioBattle, RatioCombat, RatioDistribution,
    ReservePolicy, Unit,
};
use ratio_oracle::{enumerate, enumerate_optimal, trimmed, Goal, OracleBattle};

const BUDGET: usize = 50_000_000;

/// One battle: each side's units by modifier, the line (unit indices per combat), the
/// reserve side and its reserves (unit indices, in commitment order), the floor.
struct Case {
    name: &'static str,
    a: Vec<i32>,
    b: Vec<i32>,
    line: Vec<(Vec<usize>, Vec<usize>)>,
    side: usize,
    reserves: Vec<usize>,
    min_score: Option<i32>,
}

impl Case {
    fn library(&self, goal: Goal) -> RatioCombat {
        let units = |prefix: &str, mods: &[i32]| -> Vec<Unit> {
            mods.iter()
                .enumerate()
                .map(|(i, &m)| Unit {
                    name: format!("{prefix}{}", i + 1),
                    modifier: m,
                })
                .collect()
        };
        let mut reserves = [vec![], vec![]];
        reserves[self.side] = self.reserves.clone();
        let mut policy = [ReservePolicy::None; 2];
        policy[self.side] = ReservePolicy::Optimal;
        RatioCombat::new(RatioBattle {
            units: [units("A", &self.a), units("B", &self.b)],
            line: self
                .line
                .iter()
                .map(|(a, b)| Pairing {
                    a: a.clone(),
                    b: b.clone(),
                })
                .collect(),
            reserves,
            policy,
            objective: match goal {
                Goal::CpDifference => Objective::CpDifference,
                Goal::Win => Objective::WinProbability,
            },
            min_score: self.min_score.map_or(MinScore::None, MinScore::Floor),
            skirmish: false,
            escalation: None,
        })
        .expect("a valid battle")
    }

    fn oracle(&self, policy: &'static str) -> OracleBattle {
        OracleBattle {
            a_mods: self.a.clone(),
            b_mods: self.b.clone(),
            line: self.line.clone(),
            reserve_side: Some(self.side),
            reserves: self.reserves.clone(),
            policy,
            min_score: self.min_score,
        }
    }
}

/// The library's exact value of its own policy: Σ objective × count over the total.
fn library_value(d: &RatioDistribution, side: usize, goal: Goal) -> i128 {
    match goal {
        Goal::Win => d.wins(side) as i128,
        Goal::CpDifference => {
            RatioDistribution::weighted(&d.cp[1 - side]) as i128
                - RatioDistribution::weighted(&d.cp[side]) as i128
        }
    }
}

fn cases() -> Vec<Case> {
    let v = |units: &[usize]| units.to_vec();
    vec![
        Case {
            name: "1v1, one reserve",
            a: vec![0, 0],
            b: vec![0],
            line: vec![(v(&[0]), v(&[0]))],
            side: 0,
            reserves: v(&[1]),
            min_score: Some(1),
        },
        Case {
            name: "1v1, reserves +1 and −1",
            a: vec![0, 1, -1],
            b: vec![1],
            line: vec![(v(&[0]), v(&[0]))],
            side: 0,
            reserves: v(&[1, 2]),
            min_score: Some(1),
        },
        Case {
            name: "1v1,1v1, one reserve at +2",
            a: vec![0, 0, 2],
            b: vec![0, 1],
            line: vec![(v(&[0]), v(&[0])), (v(&[1]), v(&[1]))],
            side: 0,
            reserves: v(&[2]),
            min_score: Some(1),
        },
        Case {
            name: "1v1,1v1, reserves +2 then 0",
            a: vec![0, -1, 2, 0],
            b: vec![0, 0],
            line: vec![(v(&[0]), v(&[0])), (v(&[1]), v(&[1]))],
            side: 0,
            reserves: v(&[2, 3]),
            min_score: Some(1),
        },
        Case {
            name: "2v1,1v1, no floor, reserves −1 then +1",
            a: vec![-1, 0, 0, -1, 1],
            b: vec![1, -2],
            line: vec![(v(&[0, 1]), v(&[0])), (v(&[2]), v(&[1]))],
            side: 0,
            reserves: v(&[3, 4]),
            min_score: None,
        },
        Case {
            name: "B holds the reserves: 1v2,1v1 + B +1, −1",
            a: vec![1, 1],
            b: vec![0, 0, 0, 1, -1],
            line: vec![(v(&[0]), v(&[0, 1])), (v(&[1]), v(&[2]))],
            side: 1,
            reserves: v(&[3, 4]),
            min_score: Some(1),
        },
        Case {
            name: "1v1,1v1,1v1, reserves +1 then −2",
            a: vec![0, 0, 0, 1, -2],
            b: vec![0, 1, -1],
            line: vec![(v(&[0]), v(&[0])), (v(&[1]), v(&[1])), (v(&[2]), v(&[2]))],
            side: 0,
            reserves: v(&[3, 4]),
            min_score: Some(2),
        },
    ]
}

/// Worked by hand: A0 v B0 (no modifiers, floor 1), A1 in reserve, objective `win`.
/// A wins exactly when B loses the combat. A line roll a > b wins without the reserve
/// (15 pairs; committing cannot lose it, a tie, so A keeps it): 15 × 6 = 90 of the 216
/// (every reserve die counted). With a ≤ b and k = b − a, the reserve's total
/// a + r − 1 beats b when r ≥ k + 2: 5 − k faces of 6 for k ≤ 4, and none for k = 5
/// (a 1 against a 6: committing gains nothing, so A keeps it). Pairs with b − a = k:
/// 6 − k. Wins: Σ_k (6 − k)(5 − k) = 30 + 20 + 12 + 6 + 2 = 70. In all 160 of 216 = 20/27.
/// A commits on the 20 pairs with k ≤ 4: 120 of 216 use the reserve, 96 do not (rescue
/// would also commit on 1 v 6: 126).
#[test]
fn one_reserve_for_the_win_by_hand() {
    let case = &cases()[0];
    let best = enumerate_optimal(&case.oracle("optimal"), Goal::Win);
    assert_eq!((best.value, best.total), (160, 216));
    assert_eq!(best.tally.reserves_used, vec![96, 120]);
    let d = case.library(Goal::Win).distribution(BUDGET).unwrap();
    assert_eq!(library_value(&d, 0, Goal::Win), 160);
    assert_eq!(d.reserves_used, vec![96, 120]);
}

/// The brute force is never beaten by a fixed policy (each counted by the fixed-policy
/// oracle): its search does find the best play.
#[test]
fn the_brute_force_is_at_least_every_fixed_policy() {
    for case in cases() {
        for goal in [Goal::CpDifference, Goal::Win] {
            let best = enumerate_optimal(&case.oracle("optimal"), goal);
            for policy in ["none", "rescue", "press"] {
                let o = enumerate(&case.oracle(policy));
                assert_eq!(o.total, best.total);
                let (a, b) = (o.cp_a.iter(), o.cp_b.iter());
                let weighted = |v: std::slice::Iter<u128>| -> i128 {
                    v.enumerate().map(|(i, c)| i as i128 * *c as i128).sum()
                };
                let value = match goal {
                    Goal::CpDifference => {
                        let (own, enemy) = if case.side == 0 {
                            (weighted(a), weighted(b))
                        } else {
                            (weighted(b), weighted(a))
                        };
                        enemy - own
                    }
                    Goal::Win => {
                        let wins = if case.side == 0 { 0..4 } else { 4..8 };
                        o.result[wins].iter().sum::<u128>() as i128
                    }
                };
                assert!(
                    best.value >= value,
                    "{}, {goal:?}: brute force {} < {policy} {value}",
                    case.name,
                    best.value
                );
            }
        }
    }
}

/// The library's `optimal` is the best policy: its exact value equals the brute force's,
/// its distribution is the brute force's best play count for count, and `optimal_value`
/// is that fraction.
#[test]
fn optimal_equals_the_brute_force_exactly() {
    for case in cases() {
        for goal in [Goal::CpDifference, Goal::Win] {
            let name = format!("{}, {goal:?}", case.name);
            let best = enumerate_optimal(&case.oracle("optimal"), goal);
            let combat = case.library(goal);
            let d = combat.distribution(BUDGET).expect("small enough");
            assert_eq!(d.total, best.total, "{name}: denominator");
            assert_eq!(
                library_value(&d, case.side, goal),
                best.value,
                "{name}: the library's policy reaches {}/{}, the best is {}/{}",
                library_value(&d, case.side, goal),
                d.total,
                best.value,
                best.total
            );
            let o = &best.tally;
            assert_eq!(&d.result[..9], &o.result[..], "{name}: army results");
            assert!(d.result[9..].iter().all(|&c| c == 0), "{name}");
            assert_eq!(trimmed(&d.cp[0]), trimmed(&o.cp_a), "{name}: CP of A");
            assert_eq!(trimmed(&d.cp[1]), trimmed(&o.cp_b), "{name}: CP of B");
            assert_eq!(
                trimmed(&d.reserves_used),
                trimmed(&o.reserves_used),
                "{name}: reserves used"
            );
            assert_eq!(d.combat_states, o.combat_states, "{name}: combat states");
            let reported = combat.optimal_value().expect("an optimal policy");
            let exact = best.value as f64 / best.total as f64;
            assert!(
                (reported - exact).abs() < 1e-12,
                "{name}: optimal_value {reported}, the best is {exact}"
            );
        }
    }
}

/// The kernels that fight `optimal` lines in runs (bit-sliced or the reserve table), 10^6
/// battles a case: army results and reserves used within 5 standard deviations of the
/// brute force's best play.
#[test]
fn simulated_optimal_battles_follow_the_brute_force() {
    const Z: f64 = 5.0;
    let n = 1_000_000u64;
    for case in cases().into_iter().skip(3).take(3) {
        for goal in [Goal::CpDifference, Goal::Win] {
            let name = format!("{}, {goal:?}", case.name);
            let best = enumerate_optimal(&case.oracle("optimal"), goal);
            let h = simulate_battles(&case.library(goal), 2041, n, &RunControl::default()).unwrap();
            assert_eq!(h.trials(), n, "{name}: battles counted");
            let mut pairs: Vec<(String, u64, u128)> = Vec::new();
            for (i, &expected) in best.tally.result.iter().enumerate() {
                pairs.push((format!("result {i}"), h.result[i], expected));
            }
            for (i, &expected) in best.tally.reserves_used.iter().enumerate() {
                pairs.push((format!("reserves used {i}"), h.reserves_used[i], expected));
            }
            for (what, seen, expected) in pairs {
                let p = expected as f64 / best.total as f64;
                if expected == 0 {
                    assert_eq!(seen, 0, "{name}: {what} impossible");
                    continue;
                }
                let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
                assert!(
                    (seen as f64 - mean).abs() <= Z * sd + 1.0,
                    "{name}: {what}: {seen} simulated, {mean:.1} expected"
                );
            }
        }
    }
}
