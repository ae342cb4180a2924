//! Naval engagements in a coastal hex worked by hand (docs/systems/naval.md): the chain
//! battle → a fleet breaks off → the other pursues, rolling on the pursuit table with the
//! coastal −1 (held to 1…6) → on an intercept, another battle round. One engagement is
//! worked on paper below and pins the independent oracle (`naval_oracle/`); the oracle
//! then enumerates more engagements exactly in integers, and every library path is held
//! against its counts: the exact enumeration (`NavalCombat::distribution`, in f64, to its
//! rounding), the system as a run computes it (an analysis file through the engine's
//! driver: the exact result and the kernel in lanes) and `NavalCombat::engage`, the last
//! two within 5 standard deviations at fixed seeds.

mod naval_oracle;

use std::path::Path;

use battlelab_core::dice::DiceStream;
use battlelab_core::engine::driver;
use battlelab_core::sim::RunControl;
use battlelab_core::systems::naval_engagement::engagement::EngagementHistogram;
use battlelab_core::systems::naval_engagement::NavalEngagementStudy;
use naval_oracle::library::{
    analysis_text, assert_exact_equals, assert_histogram_agrees, library_engagement, marginals,
};
use naval_oracle::{enumerate, intercepts, Engagement, Fleet};

fn assert_library_agrees(name: &str, e: &Engagement, trials: u64) {
    let oracle = enumerate(e);
    let (naval, engagement) = library_engagement(e);
    assert_exact_equals(
        &format!("{name}, distribution"),
        e,
        &oracle,
        &naval.distribution(&engagement),
    );

    let text = analysis_text(e, 1805, trials);
    let study =
        NavalEngagementStudy::parse(Path::new("by_hand.toml"), &text).expect("a valid file");
    let results = driver::run(&study, trials, 1805, &RunControl::default()).unwrap();
    let exact = results.exact[0].as_ref().expect("engagements are exact");
    assert_exact_equals(&format!("{name}, the system's exact"), e, &oracle, exact);
    assert_histogram_agrees(
        &format!("{name}, the system's simulation"),
        e,
        &oracle,
        &results.counts[0],
        trials,
    );

    let mut dice = DiceStream::for_block(1806, 0);
    let mut histogram = EngagementHistogram::new(&engagement);
    for _ in 0..trials / 4 {
        histogram.record(&naval.engage(&engagement, &mut dice));
    }
    assert_histogram_agrees(
        &format!("{name}, engage"),
        e,
        &oracle,
        &histogram,
        trials / 4,
    );
}

/// The pursuit roll on its own: I on 5–6; in a coastal hex d6 − 1, held to 1…6, so only
/// a 6 intercepts (and a 1 stays a 1, F).
#[test]
fn the_coastal_pursuit_roll() {
    let at_sea: Vec<bool> = (1..=6).map(|d| intercepts(d, false)).collect();
    let coastal: Vec<bool> = (1..=6).map(|d| intercepts(d, true)).collect();
    assert_eq!(at_sea, [false, false, false, false, true, true]);
    assert_eq!(coastal, [false, false, false, false, false, true]);
}

/// A 2 NSP v B 2 NSP, both Major (morale 2), no leaders, both pursue, coastal, two
/// rounds.
///
/// Round 1: equal NSP, A is L; 1-1, DRM 0: d6 1 LS, 2–3 LR, 4–5 SR, 6 SS. The fleet
/// that breaks off is pursued; coastal, only a pursuit 6 intercepts (1 of 6).
///   d6 1: A sunk 1 → 1 NSP; escapes on pursuit 1–5 (5), intercepted on 6 (1).
///   d6 2, 3: A retreats; escapes 2·5 = 10, intercepted 2.
///   d6 4, 5: B retreats; escapes 10, intercepted 2.  d6 6: B sunk 1; escapes 5, 1.
///   Over 36: A escapes 15, B escapes 15, round 2 reached 6.
/// Round 2 (the limit: an intercept now ends at the round limit):
///   A 1 v B 2 (1 way): B is L, 2-1, rows 1…6 read LR, SR, SR, SS, SS, SC.
///     d6 1 LR: B breaks off, escapes 5, round limit 1. d6 2, 3 SR: A breaks off,
///     escapes 10, round limit 2. d6 4, 5 SS and 6 SC: A loses its last NSP, destroyed
///     3·6 = 18 (of 36).
///   A 2 v B 2 (4 ways): as round 1: A escapes 15, B escapes 15, round limit 6.
///   A 2 v B 1 (1 way): A is L, 2-1: B escapes 10, A escapes 5, round limit 3,
///     B destroyed 18.
/// Over 36² = 1296:
///   A escapes 15·36 + 10 + 4·15 + 5 = 615; B escapes 615; A destroyed 18; B destroyed
///   18; round limit 3 + 4·6 + 3 = 30. Rounds: 1 → 30·36 = 1080; 2 → 216.
///   NSP lost by A: 1 → 5·36 (sunk, escaped in round 1), 18 (A 1 v B 2, not destroyed)
///   and 4·6 (sunk in round 2 from 2 v 2): 222; 2 → 18; 0 → the other 1056.
///   B the same by symmetry.
/// At sea (no −1) the intercept is 2 in 6 and round 2 is reached in 12 of 36; with the
/// −1 misread as +1 it would be 3 in 6 and 18 of 36.
fn coastal_two_v_two() -> Engagement {
    Engagement {
        a: Fleet::new(2, 2),
        b: Fleet::new(2, 2),
        coastal: true,
        round_limit: 2,
    }
}

#[test]
fn the_oracle_reproduces_the_engagement_worked_on_paper() {
    let e = coastal_two_v_two();
    let oracle = enumerate(&e);
    assert_eq!(oracle.total, 1296);
    let m = marginals(&e, &oracle);
    assert_eq!(m[0], ("result", vec![18, 18, 615, 615, 0, 0, 30]));
    assert_eq!(m[1], ("rounds", vec![0, 1080, 216]));
    assert_eq!(m[2], ("NSP lost by A", vec![1056, 222, 18]));
    assert_eq!(m[3], ("NSP lost by B", vec![1056, 222, 18]));
}

#[test]
fn coastal_two_v_two_through_every_path() {
    assert_library_agrees("coastal 2 v 2", &coastal_two_v_two(), 1_000_000);
}

/// The coastal −1 changes the answer: the same engagement at sea reaches round 2 twice
/// as often (12 of 36 against 6 of 36), in the library as by hand.
#[test]
fn coastal_and_at_sea_differ_as_by_hand() {
    let coastal = coastal_two_v_two();
    let at_sea = Engagement {
        coastal: false,
        ..coastal_two_v_two()
    };
    for (e, round_two) in [(coastal, 6.0 / 36.0), (at_sea, 12.0 / 36.0)] {
        let (naval, engagement) = library_engagement(&e);
        let d = naval.distribution(&engagement);
        assert!(
            (d.rounds[2] - round_two).abs() < 1e-12,
            "coastal {}: round 2 reached with probability {}, by hand {round_two}",
            e.coastal,
            d.rounds[2]
        );
    }
}

/// Longer coastal chains, enumerated by the oracle: B larger, Minor against Major,
/// leaders and DRMs (rows clamped at −1 and at 8), captures at 3-2 and 2-1, a fleet that
/// does not pursue, and round limits up to 7.
#[test]
fn coastal_chains_equal_the_oracle() {
    let fleet = |nsp, morale, leader, drm, pursues| Fleet {
        nsp,
        morale,
        leader,
        drm,
        pursues,
    };
    let cases = [
        (
            "B larger, 3 v 5",
            fleet(3, 2, 0, 0, true),
            fleet(5, 2, 0, 0, true),
            6,
        ),
        (
            "Minor A v Major B, leaders",
            fleet(6, 1, 2, 0, true),
            fleet(4, 2, 0, 0, true),
            7,
        ),
        (
            "B larger, DRM clamps at 8",
            fleet(4, 2, 0, 0, true),
            fleet(8, 2, 2, 4, true),
            5,
        ),
        (
            "A larger, DRM clamps at −1",
            fleet(6, 1, 0, -3, true),
            fleet(4, 2, 1, 0, true),
            5,
        ),
        (
            "B does not pursue",
            fleet(5, 2, 0, 1, true),
            fleet(6, 2, 0, 0, false),
            6,
        ),
        ("1 v 1", fleet(1, 2, 0, 0, true), fleet(1, 1, 0, 0, true), 7),
    ];
    for (name, a, b, round_limit) in cases {
        let e = Engagement {
            a,
            b,
            coastal: true,
            round_limit,
        };
        assert_library_agrees(name, &e, 400_000);
    }
}

/// A control: the simulation check has the power to see a wrong pursuit roll. The coastal
/// engagement simulated as the system runs it is rejected against the oracle's counts for
/// the same engagement at sea (an intercept on 5–6 instead of 6 alone).
#[test]
fn the_simulation_check_rejects_pursuit_at_sea() {
    let coastal = coastal_two_v_two();
    let at_sea = Engagement {
        coastal: false,
        ..coastal_two_v_two()
    };
    let text = analysis_text(&coastal, 1805, 200_000);
    let study = NavalEngagementStudy::parse(Path::new("by_hand.toml"), &text).unwrap();
    let results = driver::run(&study, 200_000, 1805, &RunControl::default()).unwrap();
    let oracle = enumerate(&at_sea);
    let check = std::panic::catch_unwind(|| {
        assert_histogram_agrees("control", &at_sea, &oracle, &results.counts[0], 200_000)
    });
    assert!(
        check.is_err(),
        "the simulation check missed a wrong pursuit roll"
    );
}
