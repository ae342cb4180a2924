//! The bridge from the oracle's engagements to the library's: the same engagement as the
//! library's types and as an analysis file, and the comparisons of the library's answers
//! (exact in f64, simulated in counts) with the oracle's integer counts. The oracle itself
//! (`super`) never calls the library.

use battlelab_core::systems::d6_tables::lookup::D6Table;
use battlelab_core::systems::naval_engagement::engagement::{
    Engagement as LibraryEngagement, EngagementDistribution, EngagementHistogram,
    Fleet as LibraryFleet, NavalCombat,
};

use super::{Engagement, Enumerated, Fleet, RESULTS};

pub fn library_engagement(e: &Engagement) -> (NavalCombat, LibraryEngagement) {
    let fleet = |f: &Fleet, name: &str| LibraryFleet {
        name: name.into(),
        nsp: f.nsp,
        morale: f.morale as u32,
        leader: f.leader,
        drm: f.drm,
        pursues: f.pursues,
    };
    let engagement = LibraryEngagement {
        a: fleet(&e.a, "A"),
        b: fleet(&e.b, "B"),
        coastal: e.coastal,
        round_limit: e.round_limit,
    };
    engagement.validate().expect("a valid engagement");
    (
        NavalCombat::new(D6Table::naval()).expect("the printed table"),
        engagement,
    )
}

/// The engagement as an analysis file for `system = "naval_engagement"`.
pub fn analysis_text(e: &Engagement, seed: u64, trials: u64) -> String {
    let fleet = |key: &str, f: &Fleet| {
        format!(
            "[fleet.{key}]\nnsp = {}\nmorale = {}\nleader = {}\ndrm = {}\npursue = {}\n\n",
            f.nsp, f.morale, f.leader, f.drm, f.pursues
        )
    };
    format!(
        "name = \"by_hand\"\nsystem = \"naval_engagement\"\nseed = {seed}\ntrials = {trials}\n\n[engagement]\ncoastal = {}\nround_limit = {}\n\n{}{}",
        e.coastal,
        e.round_limit,
        fleet("a", &e.a),
        fleet("b", &e.b)
    )
}

/// Result, rounds and NSP lost per side, as counts over the oracle's total.
pub fn marginals(e: &Engagement, o: &Enumerated) -> Vec<(&'static str, Vec<u128>)> {
    vec![
        ("result", o.marginal(RESULTS.len(), |end| end.result as u32)),
        (
            "rounds",
            o.marginal(e.round_limit as usize + 1, |end| end.rounds),
        ),
        (
            "NSP lost by A",
            o.marginal(e.a.nsp as usize + 1, |end| end.nsp_lost[0]),
        ),
        (
            "NSP lost by B",
            o.marginal(e.b.nsp as usize + 1, |end| end.nsp_lost[1]),
        ),
    ]
}

/// See `field_oracle::library::F64_TOLERANCE`: the library's enumeration is in f64; the
/// denominators here are at most 36^7 < 10^11, so one count is ten times the tolerance.
pub const F64_TOLERANCE: f64 = 1e-12;
pub const MAX_TOTAL: u128 = 100_000_000_000;

pub fn assert_exact_equals(name: &str, e: &Engagement, o: &Enumerated, d: &EngagementDistribution) {
    assert!(
        o.total <= MAX_TOTAL,
        "{name}: a denominator too large to tell by f64"
    );
    let library = [
        d.result.to_vec(),
        d.rounds.clone(),
        d.nsp_lost[0].clone(),
        d.nsp_lost[1].clone(),
    ];
    for ((what, counts), probabilities) in marginals(e, o).iter().zip(library) {
        assert_eq!(counts.len(), probabilities.len(), "{name}, {what}");
        for (value, (&count, &p)) in counts.iter().zip(&probabilities).enumerate() {
            let expected = count as f64 / o.total as f64;
            assert!(
                (p - expected).abs() <= F64_TOLERANCE,
                "{name}, {what} = {value}{}: the library says {p}, by hand {count}/{} = {expected}",
                if *what == "result" {
                    format!(" ({})", RESULTS[value])
                } else {
                    String::new()
                },
                o.total
            );
        }
    }
}

/// Simulated counts within 5 standard deviations of the oracle's fractions (exactly 0
/// where impossible); see `field_oracle::library::assert_counts_agree`.
pub fn assert_counts_agree(
    name: &str,
    what: &str,
    counts: &[u128],
    total: u128,
    simulated: &[u64],
) {
    const Z: f64 = 5.0;
    assert_eq!(counts.len(), simulated.len(), "{name}, {what}");
    let trials = simulated.iter().sum::<u64>() as f64;
    for (value, (&count, &seen)) in counts.iter().zip(simulated).enumerate() {
        let p = count as f64 / total as f64;
        if count == 0 {
            assert_eq!(
                seen, 0,
                "{name}, {what} = {value}: impossible, drawn {seen} times"
            );
            continue;
        }
        let (mean, sd) = (trials * p, (trials * p * (1.0 - p)).sqrt());
        assert!(
            (seen as f64 - mean).abs() <= Z * sd + 1.0,
            "{name}, {what} = {value}: {seen} of {trials} simulated, {mean:.1} expected ({count}/{total}), {:.1} SD away",
            (seen as f64 - mean).abs() / sd
        );
    }
}

pub fn assert_histogram_agrees(
    name: &str,
    e: &Engagement,
    o: &Enumerated,
    h: &EngagementHistogram,
    trials: u64,
) {
    assert_eq!(h.trials(), trials, "{name}: engagements counted");
    let simulated = [
        h.result.to_vec(),
        h.rounds.clone(),
        h.nsp_lost[0].clone(),
        h.nsp_lost[1].clone(),
    ];
    for ((what, counts), seen) in marginals(e, o).iter().zip(simulated) {
        assert_counts_agree(name, what, counts, o.total, &seen);
    }
}
