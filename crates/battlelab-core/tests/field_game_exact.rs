//! The field battle's game against the report, in fractions (issue 40): at every odds of a
//! small analysis, the solved game's value is the probability of its outcome set under
//! its own mixes — the report's forward enumeration, exactly, not to a tolerance — and a
//! payoff that counts a lone withdrawal as a loss no longer sends the smaller force away.

use std::path::Path;

use num_rational::BigRational;
use num_traits::ToPrimitive;

use battlelab_core::systems::field::battle::{smaller_side, BattleState, WITHDRAW};
use battlelab_core::systems::field::game::{self, Payoff, PayoffSpec, MAX_GAME_STATES};
use battlelab_core::systems::field::FieldStudy;

/// Both sides at equilibrium, four odds, three rounds: small enough for fractions.
const SMALL: &str = r#"
system = "field"
seed = 7
trials = 1000

[side.a]
sp = 4
morale = 1
leader = 1
tactic = "equilibrium"

[side.b]
sp = 3
morale = 1
tactic = "equilibrium"

[sweep]
odds = ["1:1", "3:2", "2:1", "3:1"]

[rules]
round_limit = 3
"#;

fn analysis(text: &str) -> FieldStudy {
    FieldStudy::parse(Path::new("small.toml"), text).unwrap()
}

/// For every run: the exact game's value is P(outcome set) under the exact mixes, as the
/// report's walk over rounds, tactic pairs and faces counts it; the f64 solver's value is
/// the same to 1e-12. Returns the f64 equilibria.
fn assert_value_is_the_reports_probability(
    analysis: &FieldStudy,
    payoff: &PayoffSpec,
) -> Vec<(usize, game::Equilibrium)> {
    let mut solved = Vec::new();
    for run in &analysis.runs {
        let payoff = payoff.resolve(&run.prepared.start);
        let Payoff::Outcomes(set) = payoff else {
            panic!("an outcome set")
        };
        let exact = game::solve_exact(&run.field, &run.prepared, payoff, MAX_GAME_STATES).unwrap();
        let mixes = |round: u32, state: &BattleState| {
            exact
                .mix_at(round, state)
                .cloned()
                .expect("every state the mixes reach was solved")
        };
        let p = run
            .field
            .result_probabilities_exact(&run.prepared, 1_000_000, &mixes)
            .unwrap();
        let total: BigRational = p.iter().cloned().sum();
        assert_eq!(
            total,
            BigRational::from_integer(1.into()),
            "{:?}",
            run.coordinates
        );
        let in_set: BigRational = set.results().iter().map(|r| p[r.index()].clone()).sum();
        assert_eq!(
            in_set,
            exact.value,
            "{:?}: P({}) = {in_set} but the game's value is {}",
            run.coordinates,
            set.label(),
            exact.value
        );
        let floats = game::equilibrium(&run.field, &run.prepared, payoff, MAX_GAME_STATES).unwrap();
        assert!(
            (floats.value - exact.value.to_f64().unwrap()).abs() < 1e-12,
            "{:?}: f64 {} vs exact {}",
            run.coordinates,
            floats.value,
            exact.value
        );
        solved.push((smaller_side(&run.prepared.start), floats));
    }
    solved
}

#[test]
fn the_games_value_is_the_reports_probability_fraction_for_fraction() {
    let small = analysis(SMALL);
    assert_eq!(small.runs.len(), 4);
    for name in ["win", "smaller loses", "A wins", "B wins", "round limit"] {
        let payoff = PayoffSpec::parse(name).unwrap();
        assert_value_is_the_reports_probability(&small, &payoff);
    }
    let list = PayoffSpec::parse_list(&["B wins", "A withdraws", "both withdraw"]).unwrap();
    assert_value_is_the_reports_probability(&small, &list);
}

/// `win` counts a lone withdrawal as the report does — a loss — so the smaller force
/// (B at every odds here) mixes its tactics instead of withdrawing at every odds, as it
/// did when `win` paid for "A wins" (B broken) alone. The side the set is bad for
/// minimises it.
#[test]
fn the_smaller_force_no_longer_always_withdraws() {
    let small = analysis(SMALL);
    let win = PayoffSpec::default();
    for (smaller, e) in assert_value_is_the_reports_probability(&small, &win) {
        assert_eq!(smaller, 1);
        assert_eq!(e.payoff.maximiser(), 0);
        assert!(e.value < 1.0, "B is not beaten for certain: {}", e.value);
        assert!(
            e.mix[1][WITHDRAW] < 1.0 - 1e-9,
            "the smaller force withdraws always: {:?}",
            e.mix[1]
        );
    }
    // Against "A wins" alone (B broken), withdrawing costs B nothing: it always withdraws.
    let broken = PayoffSpec::parse("A wins").unwrap();
    for (_, e) in assert_value_is_the_reports_probability(&small, &broken) {
        assert!((e.mix[1][WITHDRAW] - 1.0).abs() < 1e-9, "{:?}", e.mix[1]);
    }
    // "A loses": B maximises it, and A does not walk away either.
    let a_loses = PayoffSpec::parse("A loses").unwrap();
    for (_, e) in assert_value_is_the_reports_probability(&small, &a_loses) {
        assert_eq!(e.payoff.maximiser(), 1);
        assert!(e.mix[0][WITHDRAW] < 1.0 - 1e-9, "{:?}", e.mix[0]);
    }
}

/// A side's allowed tactics: the solved mixes stay inside them, at every reachable state,
/// and the value is still the report's probability exactly.
#[test]
fn allowed_tactics_bound_the_game_and_its_value_is_still_exact() {
    let text = SMALL.replace(
        "[side.b]\nsp = 3\nmorale = 1\n",
        "[side.b]\nsp = 3\nmorale = 1\nallowed_tactics = [\"skirmish\", \"square\", \"refuse\"]\n",
    );
    let limited = analysis(&text);
    assert_eq!(limited.allowed[1].names(), ["skirmish", "square", "refuse"]);
    for (_, e) in assert_value_is_the_reports_probability(&limited, &PayoffSpec::default()) {
        for t in [0, 1, 3, 6] {
            assert_eq!(e.mix[1][t], 0.0);
            assert_eq!(e.shortfall[1][t], None);
        }
        assert!(e.shortfall[1][2].is_some());
    }
    for run in &limited.runs {
        let policy = run
            .policy
            .as_ref()
            .expect("both sides play the equilibrium");
        let start = run.prepared.start;
        let p = policy.sides[1].probabilities(1, &start);
        assert_eq!(p[0] + p[1] + p[3] + p[6], 0.0, "{p:?}");
    }
}
