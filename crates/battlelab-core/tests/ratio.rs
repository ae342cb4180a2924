//! Ratio battles (docs/systems/ratio.md): the exact enumeration against an independent
//! brute-force oracle (every die of every battle, no merging), the Monte Carlo kernels
//! against the exact distribution at 10^7 battles, the `optimal` policy against every other
//! policy on its own objective, and reproducibility.

mod ratio_oracle;

use battlelab_core::dice::DiceStream;
use battlelab_core::sim::{thread_pool, Histogram, RunControl};
use battlelab_core::systems::ratio::battle::{
    parse_line, simulate_battles, ArmyResult, MinScore, Objective, Pairing, RatioBattle,
    RatioCombat, RatioDistribution, RatioHistogram, ReservePolicy, Unit,
};
use ratio_oracle::{enumerate, trimmed, OracleBattle};

const BUDGET: usize = 50_000_000;

/// A battle from per-unit modifiers, a line of unit indices, and reserves of one side.
struct Case {
    a: Vec<i32>,
    b: Vec<i32>,
    line: Vec<(Vec<usize>, Vec<usize>)>,
    reserve_side: Option<usize>,
    reserves: Vec<usize>,
    policy: ReservePolicy,
    min_score: Option<i32>,
}

impl Case {
    fn quick(text: &str, mod_a: i32, mod_b: i32, reserve_a: usize, policy: ReservePolicy) -> Self {
        let (line, counts) = parse_line(text).unwrap();
        Case {
            a: vec![mod_a; counts[0] + reserve_a],
            b: vec![mod_b; counts[1]],
            line: line.into_iter().map(|p| (p.a, p.b)).collect(),
            reserve_side: (reserve_a > 0).then_some(0),
            reserves: (counts[0]..counts[0] + reserve_a).collect(),
            policy,
            min_score: Some(1),
        }
    }

    fn battle(&self, objective: Objective) -> RatioBattle {
        let units = |prefix: &str, mods: &[i32]| {
            mods.iter()
                .enumerate()
                .map(|(i, &m)| Unit {
                    name: format!("{prefix}{}", i + 1),
                    modifier: m,
                })
                .collect::<Vec<_>>()
        };
        let mut reserves = [vec![], vec![]];
        if let Some(s) = self.reserve_side {
            reserves[s] = self.reserves.clone();
        }
        RatioBattle {
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
            policy: [self.policy; 2],
            objective,
            min_score: self.min_score.map_or(MinScore::None, MinScore::Floor),
            skirmish: false,
            escalation: None,
        }
    }

    fn oracle(&self) -> OracleBattle {
        OracleBattle {
            a_mods: self.a.clone(),
            b_mods: self.b.clone(),
            line: self.line.clone(),
            reserve_side: self.reserve_side,
            reserves: self.reserves.clone(),
            policy: self.policy.name(),
            min_score: self.min_score,
        }
    }

    fn combat(&self) -> RatioCombat {
        RatioCombat::new(self.battle(Objective::CpDifference)).unwrap()
    }
}

fn assert_matches_oracle(case: &Case, name: &str) {
    let d = case.combat().distribution(BUDGET).expect("small enough");
    let o = enumerate(&case.oracle());
    assert_eq!(d.total, o.total, "{name}: denominator");
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
}

/// Every 1 v 1 with modifiers −2…+2 a side, with the printed floor and with none.
#[test]
fn one_v_one_with_every_modifier_pair_equals_the_oracle() {
    for min_score in [Some(1), None] {
        for a in -2..=2 {
            for b in -2..=2 {
                let mut case = Case::quick("1v1", a, b, 0, ReservePolicy::None);
                case.min_score = min_score;
                assert_matches_oracle(&case, &format!("1v1 {a:+} vs {b:+} floor {min_score:?}"));
            }
        }
    }
}

#[test]
fn lines_with_doubles_equal_the_oracle() {
    for (line, a, b) in [
        ("1v1,1v1,2v1", 0, 0),
        ("1v1,1v1,2v1", 1, -1),
        ("1v1,1v1,2v1", -1, 1),
        ("2v1,2v1", 0, 0),
        ("1v2,1v1", 1, 0),
        ("1v1,1v1,1v1,1v1", 0, 1),
    ] {
        assert_matches_oracle(
            &Case::quick(line, a, b, 0, ReservePolicy::None),
            &format!("{line} {a:+} {b:+}"),
        );
    }
    // Mixed unit modifiers and no floor.
    let case = Case {
        a: vec![1, 0, -1, 2],
        b: vec![0, -2, 1],
        line: vec![
            (vec![0], vec![1]),
            (vec![2, 3], vec![0]),
            (vec![1], vec![2]),
        ],
        reserve_side: None,
        reserves: vec![],
        policy: ReservePolicy::None,
        min_score: None,
    };
    assert_matches_oracle(&case, "mixed modifiers, no floor");
}

/// Reserves under none, rescue and press, held by side A or by side B, up to 8 dice.
#[test]
fn reserves_under_every_fixed_policy_equal_the_oracle() {
    for policy in [
        ReservePolicy::None,
        ReservePolicy::Rescue,
        ReservePolicy::Press,
    ] {
        for (line, reserves, a, b) in [
            ("1v1", 1, 0, 0),
            ("1v1", 2, -1, 1),
            ("1v1,1v1,2v1", 1, 0, 0),
            ("1v1,1v1,2v1", 1, 1, -1),
            ("1v1,2v1", 2, 0, 0),
            ("1v1,1v1", 2, 0, 1),
        ] {
            assert_matches_oracle(
                &Case::quick(line, a, b, reserves, policy),
                &format!("{line} +{reserves} reserves {a:+} {b:+} {}", policy.name()),
            );
        }
        // Side B holds the reserve; units of differing quality.
        let case = Case {
            a: vec![1, 0],
            b: vec![0, -1, 0, 2],
            line: vec![(vec![0], vec![0, 1]), (vec![1], vec![2])],
            reserve_side: Some(1),
            reserves: vec![3],
            policy,
            min_score: Some(1),
        };
        assert_matches_oracle(&case, &format!("B reserve, {}", policy.name()));
    }
}

/// The 216 dice of 1 v 1 with one reserve under rescue, tallied by hand (see the oracle's
/// self-check for the working): A commits on the 126 rolls where it is not winning.
#[test]
fn one_reserve_under_rescue_by_hand() {
    let d = Case::quick("1v1", 0, 0, 1, ReservePolicy::Rescue)
        .combat()
        .distribution(BUDGET)
        .unwrap();
    assert_eq!(d.total, 216);
    assert_eq!(&d.result[..9], &[84, 0, 39, 37, 21, 0, 8, 6, 21]);
    assert_eq!(d.reserves_used, vec![90, 126]);
    assert_eq!(d.cp[1], vec![56, 84, 39, 37]);
}

fn assert_within_four_se(h: &RatioHistogram, d: &RatioDistribution, name: &str) {
    let n = h.trials();
    let check = |counts: &[u64], exact: &[u128], what: &str| {
        assert_eq!(counts.len(), exact.len(), "{name}: {what} length");
        for (v, (&c, &e)) in counts.iter().zip(exact).enumerate() {
            let p = RatioDistribution::probability(e, d.total);
            if e == 0 {
                assert_eq!(c, 0, "{name}: {what}[{v}] is impossible but was drawn");
                continue;
            }
            if e == d.total {
                assert_eq!(c, n, "{name}: {what}[{v}] is certain");
                continue;
            }
            let se = (p * (1.0 - p) / n as f64).sqrt();
            let estimate = c as f64 / n as f64;
            assert!(
                (estimate - p).abs() <= 4.0 * se,
                "{name}: {what}[{v}] simulated {estimate} vs exact {p} (4 SE = {})",
                4.0 * se
            );
        }
    };
    check(&h.result, &d.result, "result");
    check(&h.cp[0], &d.cp[0], "cp A");
    check(&h.cp[1], &d.cp[1], "cp B");
    check(&h.reserves_used, &d.reserves_used, "reserves used");
    check(&h.floor_decided, &d.floor_decided, "floor decided");
    for (c, (hs, ds)) in h.combat_states.iter().zip(&d.combat_states).enumerate() {
        check(hs, ds, &format!("combat {c}"));
    }
}

fn skirmish(reserves: [usize; 2], policies: [ReservePolicy; 2], ambush: i32) -> RatioBattle {
    let open = Case::quick("1v1,1v1,2v1", ambush, 0, 1, ReservePolicy::Rescue)
        .battle(Objective::CpDifference);
    let units = |prefix: &str, n: usize, m: i32| {
        (0..=n)
            .map(|i| Unit {
                name: format!("{prefix}{}", i + 1),
                modifier: m,
            })
            .collect::<Vec<_>>()
    };
    RatioBattle {
        units: [units("A", reserves[0], ambush), units("B", reserves[1], 0)],
        line: vec![Pairing {
            a: vec![0],
            b: vec![0],
        }],
        reserves: [(1..=reserves[0]).collect(), (1..=reserves[1]).collect()],
        policy: policies,
        objective: Objective::CpDifference,
        min_score: MinScore::Floor(1),
        skirmish: true,
        escalation: Some(Box::new(open)),
    }
}

/// 10^7 battles per case through the same path `run` uses (the signature kernel for lines
/// without reserves, the bit-sliced sweeps for lines whose reserves commit by the combat's
/// state, the reserve table in lanes otherwise): every count within 4 standard errors.
#[test]
fn monte_carlo_agrees_with_exact_at_ten_million() {
    let mut cases: Vec<(String, RatioBattle)> = vec![
        (
            "1v1 +1 vs -1".into(),
            Case::quick("1v1", 1, -1, 0, ReservePolicy::None).battle(Objective::CpDifference),
        ),
        (
            "5-combat line +1".into(),
            Case::quick("1v1,1v1,1v1,1v1,2v1", 1, 0, 0, ReservePolicy::None)
                .battle(Objective::CpDifference),
        ),
        (
            "1v1,1v1,2v1 + 2 reserves rescue".into(),
            Case::quick("1v1,1v1,2v1", 0, 0, 2, ReservePolicy::Rescue)
                .battle(Objective::CpDifference),
        ),
        (
            "1v1,2v1 + 2 reserves optimal (win)".into(),
            Case::quick("1v1,2v1", 0, 0, 2, ReservePolicy::Optimal)
                .battle(Objective::WinProbability),
        ),
        (
            "1v1,1v1 + 1 reserve never committed (none)".into(),
            Case::quick("1v1,1v1", 0, 1, 1, ReservePolicy::None).battle(Objective::CpDifference),
        ),
        (
            "skirmish 2 v 2 reserves, rescue, ambush".into(),
            skirmish([2, 2], [ReservePolicy::Rescue; 2], 1),
        ),
    ];
    let mut no_floor = Case::quick("1v1,1v1", -2, 1, 0, ReservePolicy::None);
    no_floor.min_score = Some(2);
    cases.push(("floor 2".into(), no_floor.battle(Objective::CpDifference)));
    // Bit-sliced lines (`systems/ratio/battle/sliced.rs`): press with no floor (totals of 0 and
    // less routed), press with a floor that decides combats ...
    let mut press = Case::quick("1v1,2v1", -2, 0, 2, ReservePolicy::Press);
    press.min_score = None;
    cases.push((
        "1v1,2v1 -2 + 2 reserves press, no floor".into(),
        press.battle(Objective::CpDifference),
    ));
    press.min_score = Some(2);
    cases.push((
        "1v1,2v1 -2 + 2 reserves press, floor 2".into(),
        press.battle(Objective::CpDifference),
    ));
    // ... and optimal for casualty points, whose decisions read both totals.
    cases.push((
        "1v1,1v1,2v1 + 2 reserves optimal (cp)".into(),
        Case::quick("1v1,1v1,2v1", 0, 0, 2, ReservePolicy::Optimal).battle(Objective::CpDifference),
    ));
    let mut sliced = 0;
    for (seed, (name, battle)) in cases.into_iter().enumerate() {
        let combat = RatioCombat::new(battle).unwrap();
        sliced += usize::from(combat.bit_sliced());
        let d = combat.distribution(BUDGET).expect("small enough");
        let h = simulate_battles(
            &combat,
            1000 + seed as u64,
            10_000_000,
            &RunControl::default(),
        )
        .unwrap();
        assert_eq!(h.trials(), 10_000_000);
        assert_within_four_se(&h, &d, &name);
    }
    assert_eq!(
        sliced, 4,
        "the rescue, press and optimal (cp) lines are fought bit-sliced"
    );
}

/// A control: the same comparison catches a kernel that plays a different battle.
#[test]
fn the_monte_carlo_check_catches_a_changed_battle() {
    let played = RatioCombat::new(
        Case::quick("1v1,1v1,2v1", 1, 0, 0, ReservePolicy::None).battle(Objective::CpDifference),
    )
    .unwrap();
    let claimed = Case::quick("1v1,1v1,2v1", 0, 0, 0, ReservePolicy::None)
        .combat()
        .distribution(BUDGET)
        .unwrap();
    let h = simulate_battles(&played, 7, 1_000_000, &RunControl::default()).unwrap();
    let caught = std::panic::catch_unwind(|| assert_within_four_se(&h, &claimed, "control"));
    assert!(caught.is_err(), "a +1 on every A die went unnoticed");
}

/// The signature kernel and the general kernel draw the same dice and agree battle by
/// battle.
#[test]
fn signature_kernel_decodes_to_the_general_kernel() {
    for (line, a, b) in [("1v1,1v1,1v1,1v1,2v1", 1, 0), ("1v2,1v1", -2, 1)] {
        let combat = Case::quick(line, a, b, 0, ReservePolicy::None).combat();
        assert!(combat.has_line_signature());
        let mut one = DiceStream::for_block(5, 0);
        let mut two = DiceStream::for_block(5, 0);
        for _ in 0..100_000 {
            let s = combat.fight_signature(&mut one);
            assert_eq!(combat.decode_signature(s), combat.fight(&mut two), "{line}");
        }
    }
}

/// Exact expected objective of a policy, as a numerator over the common denominator.
fn objective_numerator(d: &RatioDistribution, side: usize, objective: Objective) -> i128 {
    match objective {
        Objective::WinProbability => d.wins(side) as i128,
        Objective::CpDifference => {
            RatioDistribution::weighted(&d.cp[1 - side]) as i128
                - RatioDistribution::weighted(&d.cp[side]) as i128
        }
    }
}

/// `optimal` is never worse than none, rescue or press on its own objective (exactly, over
/// the same denominator), strictly better somewhere, and its dynamic-programming value is
/// the value its decisions reach.
#[test]
fn optimal_is_never_worse_than_any_other_policy() {
    let mut strictly_better = 0;
    for objective in [Objective::CpDifference, Objective::WinProbability] {
        for (line, reserves, a, b) in [
            ("1v1", 1, 0, 0),
            ("1v1", 2, 0, 1),
            ("1v1,1v1", 1, 0, 0),
            ("1v1,1v1,2v1", 1, 1, -1),
            ("1v1,1v1,2v1", 2, 0, 0),
            ("1v1,2v1", 3, -1, 0),
            ("1v1,1v1,1v1", 2, 0, 1),
        ] {
            let name = format!("{line} +{reserves} {a:+} {b:+} {objective:?}");
            let value = |policy: ReservePolicy| {
                let combat =
                    RatioCombat::new(Case::quick(line, a, b, reserves, policy).battle(objective))
                        .unwrap();
                let d = combat.distribution(BUDGET).unwrap();
                (objective_numerator(&d, 0, objective), d.total, combat)
            };
            let (best, total, optimal) = value(ReservePolicy::Optimal);
            let dp = optimal.optimal_value().unwrap();
            assert!(
                (dp - best as f64 / total as f64).abs() < 1e-9,
                "{name}: DP value {dp} vs exact {}",
                best as f64 / total as f64
            );
            for policy in [
                ReservePolicy::None,
                ReservePolicy::Rescue,
                ReservePolicy::Press,
            ] {
                let (other, other_total, _) = value(policy);
                assert_eq!(total, other_total);
                assert!(
                    best >= other,
                    "{name}: optimal {best} < {} {other}",
                    policy.name()
                );
                strictly_better += usize::from(best > other);
            }
        }
    }
    assert!(
        strictly_better > 10,
        "optimal never beat anything: {strictly_better}"
    );
}

fn histogram_on(threads: usize, combat: &RatioCombat) -> RatioHistogram {
    thread_pool(threads)
        .unwrap()
        .install(|| simulate_battles(combat, 42, 1_000_003, &RunControl::default()).unwrap())
}

#[test]
fn same_seed_same_counts_on_any_thread_count() {
    for combat in [
        Case::quick("1v1,1v1,2v1", 1, 0, 0, ReservePolicy::None).combat(),
        Case::quick("1v1,1v1,2v1", 0, 0, 2, ReservePolicy::Press).combat(),
        RatioCombat::new(skirmish([2, 1], [ReservePolicy::Rescue; 2], 0)).unwrap(),
    ] {
        let one = histogram_on(1, &combat);
        assert_eq!(one, histogram_on(2, &combat));
        assert_eq!(one, histogram_on(8, &combat));
    }
}

/// Fixed-seed counts, pinned: a change to how dice are drawn or tallied shows up here.
#[test]
fn fixed_seed_counts_are_stable() {
    let run = |combat: &RatioCombat| {
        simulate_battles(combat, 2026, 100_000, &RunControl::default())
            .unwrap()
            .result[..9]
            .to_vec()
    };
    let plain = Case::quick("1v1,1v1,2v1", 1, -1, 0, ReservePolicy::None).combat();
    let reserve = Case::quick("1v1,1v1,2v1", 1, -1, 1, ReservePolicy::Rescue).combat();
    assert_eq!(run(&plain), PINNED_PLAIN);
    assert_eq!(run(&reserve), PINNED_RESERVE);
}

const PINNED_PLAIN: [u64; 9] = [2455, 7367, 48168, 38456, 307, 1043, 0, 0, 2204];
const PINNED_RESERVE: [u64; 9] = [2360, 6892, 49722, 40144, 174, 135, 0, 0, 573];

/// A skirmish escalates only when both sides hold reserves and commit all of them.
#[test]
fn skirmish_escalates_only_when_both_sides_commit_everything() {
    let combat = RatioCombat::new(skirmish([2, 2], [ReservePolicy::Press; 2], 0)).unwrap();
    let d = combat.distribution(BUDGET).unwrap();
    let escalated: u128 = d.result[9..].iter().sum();
    assert!(escalated > 0 && escalated < d.total);
    // Nobody commits: no escalation, and the skirmish is a plain 1 v 1.
    let quiet = RatioCombat::new(skirmish([2, 2], [ReservePolicy::None; 2], 0)).unwrap();
    let d = quiet.distribution(BUDGET).unwrap();
    assert_eq!(d.result[9..].iter().sum::<u128>(), 0);
    let scale = d.total / 36;
    assert_eq!(
        d.result[..9].iter().map(|c| c / scale).collect::<Vec<_>>(),
        vec![6, 0, 4, 5, 6, 0, 4, 5, 6]
    );
    // Side B holds no reserve: never an escalation, whatever A does.
    let one_sided = RatioCombat::new(skirmish([2, 0], [ReservePolicy::Press; 2], 0)).unwrap();
    let d = one_sided.distribution(BUDGET).unwrap();
    assert_eq!(d.result[9..].iter().sum::<u128>(), 0);
    assert!(ArmyResult::label(9).starts_with("escalated"));
}

/// The same for side B holding the reserve while both sides name `optimal` (the quick form
/// gives every side the one policy): it compiles, runs, and is never worse.
#[test]
fn optimal_for_side_b_is_never_worse() {
    for objective in [Objective::CpDifference, Objective::WinProbability] {
        let value = |policy: ReservePolicy| {
            let case = Case {
                a: vec![1, 1],
                b: vec![0, 0, 0, 0, 0],
                line: vec![(vec![0], vec![0, 1]), (vec![1], vec![2])],
                reserve_side: Some(1),
                reserves: vec![3, 4],
                policy,
                min_score: Some(1),
            };
            let combat = RatioCombat::new(case.battle(objective)).unwrap();
            let d = combat.distribution(BUDGET).unwrap();
            let mut dice = DiceStream::for_block(3, 0);
            for _ in 0..10_000 {
                combat.fight(&mut dice);
            }
            objective_numerator(&d, 1, objective)
        };
        let best = value(ReservePolicy::Optimal);
        for policy in [
            ReservePolicy::None,
            ReservePolicy::Rescue,
            ReservePolicy::Press,
        ] {
            let other = value(policy);
            assert!(best >= other, "{objective:?}: {}", policy.name());
        }
    }
}

/// Runs fold their signature bins as soon as a run's blocks are merged, and a merge may add
/// more afterwards: folding, merging more and folding again counts what one fold of
/// everything counts (results, casualty points, reserves used, floors, combat states).
#[test]
fn folding_twice_counts_what_folding_once_counts() {
    for combat in [
        Case::quick("1v1,1v1,2v1", 1, -2, 0, ReservePolicy::None).combat(),
        Case::quick("1v1,1v1,1v1,2v1", 0, -2, 2, ReservePolicy::Rescue).combat(),
        Case::quick("1v1,2v1", -2, 0, 1, ReservePolicy::Press).combat(),
    ] {
        assert!(combat.has_signature());
        // Two blocks, on streams of their own.
        let blocks = [
            (DiceStream::for_block(3, 1), 25_000),
            (DiceStream::for_block(3, 2), 35_000),
        ];
        let mut once = RatioHistogram::for_signatures(&combat);
        for (dice, n) in &blocks {
            combat.simulate_block(&mut dice.clone(), *n, &mut once);
        }
        once.fold_signatures(&combat);
        let mut first = RatioHistogram::for_signatures(&combat);
        combat.simulate_block(&mut blocks[0].0.clone(), blocks[0].1, &mut first);
        first.fold_signatures(&combat);
        let mut second = RatioHistogram::for_signatures(&combat);
        combat.simulate_block(&mut blocks[1].0.clone(), blocks[1].1, &mut second);
        first.merge(second);
        first.fold_signatures(&combat);
        assert_eq!(first, once);
        assert_eq!(once.trials(), 60_000);
        assert_eq!(once.floor_decided.iter().sum::<u64>(), 60_000);
        assert!(
            once.floor_decided[0] < 60_000,
            "no battle the floor decided"
        );
    }
}
