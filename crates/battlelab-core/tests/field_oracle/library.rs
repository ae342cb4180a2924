//! The bridge from the oracle's battles to the library's: the same battle as the library's
//! types and as an analysis file, and the comparisons of the library's answers (exact in
//! f64, simulated in counts) with the oracle's integer counts. The oracle itself
//! (`super`) never calls the library.

use battlelab_core::systems::field::battle::{
    BattleDistribution, BattleHistogram, FieldBattle, FieldCombat, FieldRules, Force,
    PreparedBattle, TacticMix,
};

use super::{Battle, Enumerated, Side, RESULTS, TACTICS};

/// The library's field, printed rules with the battle's round limit, and its battle.
pub fn library_battle(battle: &Battle) -> (FieldCombat, PreparedBattle) {
    let mut rules = FieldRules::printed();
    rules.round_limit = battle.round_limit;
    let field = FieldCombat::new(rules).expect("printed rules");
    let force = |side: &Side| Force {
        name: String::new(),
        sp: side.sp,
        morale: side.morale,
        leader: side.leader,
        drm: side.drm,
        tactics: TacticMix::new(side.tactics.map(|w| w as u32))
            .expect("whole weights")
            .into(),
    };
    let prepared = FieldBattle {
        a: force(&battle.a),
        b: force(&battle.b),
        terrain_drm: battle.terrain,
    }
    .prepare()
    .expect("a valid battle");
    (field, prepared)
}

/// The battle as an analysis file for `system = "field"`.
pub fn analysis_text(battle: &Battle, seed: u64, trials: u64) -> String {
    let tactic = |side: &Side| {
        let weights: Vec<String> = TACTICS
            .iter()
            .zip(side.tactics)
            .filter(|(_, w)| *w > 0)
            .map(|(t, w)| format!("{t} = {w}"))
            .collect();
        format!("{{ mix = {{ {} }} }}", weights.join(", "))
    };
    let side = |key: &str, side: &Side| {
        format!(
            "[side.{key}]\nsp = {}\nmorale = {}\nleader = {}\ndrm = {}\ntactic = {}\n\n",
            side.sp,
            side.morale,
            side.leader,
            side.drm,
            tactic(side)
        )
    };
    format!(
        "name = \"by_hand\"\nsystem = \"field\"\nseed = {seed}\ntrials = {trials}\n\n[battle]\nterrain_drm = {}\n\n{}{}[rules]\nround_limit = {}\n",
        battle.terrain,
        side("a", &battle.a),
        side("b", &battle.b),
        battle.round_limit
    )
}

/// The oracle's marginals in the library's layout: result, rounds, SP lost per side,
/// morale lost per side (each quantity indexed by its value).
pub fn marginals(battle: &Battle, o: &Enumerated) -> Vec<(String, Vec<u128>)> {
    vec![
        ("result".into(), o.result().to_vec()),
        ("rounds".into(), o.rounds(battle.round_limit)),
        (
            "SP lost by A".into(),
            o.marginal(battle.a.sp as usize + 1, |e| e.sp_lost[0]),
        ),
        (
            "SP lost by B".into(),
            o.marginal(battle.b.sp as usize + 1, |e| e.sp_lost[1]),
        ),
        (
            "morale lost by A".into(),
            o.marginal(battle.a.morale as usize + 1, |e| e.morale_lost[0]),
        ),
        (
            "morale lost by B".into(),
            o.marginal(battle.b.morale as usize + 1, |e| e.morale_lost[1]),
        ),
    ]
}

/// The same marginals of an exact distribution from the library (probabilities).
fn library_marginals(d: &BattleDistribution) -> Vec<Vec<f64>> {
    vec![
        d.result.to_vec(),
        d.rounds.clone(),
        d.sp_lost[0].clone(),
        d.sp_lost[1].clone(),
        d.morale_lost[0].clone(),
        d.morale_lost[1].clone(),
    ]
}

/// The same marginals of simulated counts.
fn histogram_marginals(h: &BattleHistogram) -> Vec<Vec<u64>> {
    vec![
        h.result.to_vec(),
        h.rounds.clone(),
        h.sp_lost[0].clone(),
        h.sp_lost[1].clone(),
        h.morale_lost[0].clone(),
        h.morale_lost[1].clone(),
    ]
}

/// The library enumerates in f64: a path's probability is a product of a few factors per
/// round and a marginal a sum of at most a few thousand paths, so its rounding error is
/// of the order of 10^-15. The oracle's denominators are kept at most [`MAX_TOTAL`], so a
/// changed rule that moves even one count moves a probability by at least 10^-11: ten
/// times the tolerance.
pub const F64_TOLERANCE: f64 = 1e-12;
pub const MAX_TOTAL: u128 = 100_000_000_000;

/// Every marginal of the library's exact distribution equals the oracle's fraction (to
/// the f64 rounding of the library's enumeration).
pub fn assert_exact_equals(name: &str, battle: &Battle, o: &Enumerated, d: &BattleDistribution) {
    assert!(
        o.total <= MAX_TOTAL,
        "{name}: a denominator too large to tell by f64"
    );
    for ((what, counts), probabilities) in marginals(battle, o).iter().zip(library_marginals(d)) {
        assert_eq!(
            counts.len(),
            probabilities.len(),
            "{name}, {what}: lengths differ"
        );
        for (value, (&count, &p)) in counts.iter().zip(&probabilities).enumerate() {
            let expected = count as f64 / o.total as f64;
            assert!(
                (p - expected).abs() <= F64_TOLERANCE,
                "{name}, {what} = {value}{}: the library says {p}, by hand {count}/{} = {expected}",
                if what == "result" {
                    format!(" ({})", RESULTS[value])
                } else {
                    String::new()
                },
                o.total
            );
        }
    }
}

/// Simulated counts against the oracle's fractions: a count of `n` battles is within
/// `Z` standard deviations of `n·p` (at most one count off where the deviation is tiny),
/// and exactly 0 where `p` is 0. At Z = 5 one cell fails by chance with probability
/// 5.7·10^-7; a battle has at most about 100 cells, and the seeds are fixed.
pub fn assert_counts_agree(
    name: &str,
    battle: &Battle,
    o: &Enumerated,
    h: &BattleHistogram,
    trials: u64,
) {
    const Z: f64 = 5.0;
    assert_eq!(
        h.result.iter().sum::<u64>(),
        trials,
        "{name}: battles counted"
    );
    for ((what, counts), simulated) in marginals(battle, o).iter().zip(histogram_marginals(h)) {
        assert_eq!(counts.len(), simulated.len(), "{name}, {what}");
        for (value, (&count, &seen)) in counts.iter().zip(&simulated).enumerate() {
            let p = count as f64 / o.total as f64;
            let mean = trials as f64 * p;
            let sd = (trials as f64 * p * (1.0 - p)).sqrt();
            if count == 0 {
                assert_eq!(
                    seen, 0,
                    "{name}, {what} = {value}: impossible, drawn {seen} times"
                );
                continue;
            }
            assert!(
                (seen as f64 - mean).abs() <= Z * sd + 1.0,
                "{name}, {what} = {value}: {seen} of {trials} simulated, {mean:.1} expected \
                 ({count}/{}), {:.1} standard deviations away",
                o.total,
                (seen as f64 - mean).abs() / sd
            );
        }
    }
}
