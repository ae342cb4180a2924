//! Known-answer tests: the CRT's exact distributions against an oracle written straight
//! from docs/systems/field.md (the CRT), for every odds column and every net DRM from −6 to
//! +6.

use std::collections::BTreeMap;

use battlelab_core::systems::field::battle::{FieldCombat, FieldRules};

/// The CRT of docs/systems/field.md, transcribed independently of the library: the eleven
/// result columns, and the column a modified roll reaches for each odds (shift 0/1/2/3).
const L: [&str; 11] = ["D3", "D2", "D1", "1", "1", "1", "1", "0", "1", "1", "1"];
const S: [&str; 11] = ["1", "1", "1", "0", "1", "1", "1", "1", "D1", "D2", "D3"];
const ODDS: [(&str, i32); 4] = [("1:1", 0), ("3:2", 1), ("2:1", 2), ("3:1", 3)];

/// Counts out of 36 of each result pair, by enumerating both dice by hand.
fn oracle(shift: i32, drm: i32) -> BTreeMap<String, u64> {
    let net = drm.clamp(-4, 4);
    let mut counts = BTreeMap::new();
    for d1 in 1..=6 {
        for d2 in 1..=6 {
            let roll = (d1 + d2 + net).clamp(2, 12);
            let column = (roll - 1 + shift).clamp(1, 11) as usize;
            *counts
                .entry(format!("L={} S={}", L[column - 1], S[column - 1]))
                .or_insert(0) += 1;
        }
    }
    counts
}

#[test]
fn every_odds_column_and_drm_matches_the_hand_enumeration() {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    for (odds_index, (odds, shift)) in ODDS.iter().enumerate() {
        for drm in -6..=6 {
            let expected = oracle(*shift, drm);
            let dist = field.resolution_distribution(odds_index, drm);
            assert_eq!(dist.total, 36);
            let mut got = BTreeMap::new();
            for (i, pair) in field.pairs().iter().enumerate() {
                if dist.counts[i] > 0 {
                    got.insert(pair.label(), dist.counts[i]);
                }
            }
            assert_eq!(got, expected, "odds {odds}, DRM {drm}");
        }
    }
}

/// A few cells worked on paper from the printed table, as fractions.
#[test]
fn hand_worked_cells() {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let fraction = |odds: usize, drm: i32, label: &str| {
        let dist = field.resolution_distribution(odds, drm);
        let i = field
            .pairs()
            .iter()
            .position(|p| p.label() == label)
            .unwrap();
        dist.fraction(i).to_string()
    };
    // 3:2, +1: 2d6+1 ≥ 10 reaches column 11 → 6/36.
    assert_eq!(fraction(1, 1, "L=1 S=D3"), "1/6");
    // 3:2, 0: column 9 needs a roll of exactly 9 → 4/36.
    assert_eq!(fraction(1, 0, "L=1 S=D1"), "1/9");
    // 1:1, −4: roll 2..8 → columns 1..7; column 1 ← 2d6 ≤ 6 → 15/36 = 5/12.
    assert_eq!(fraction(0, -4, "L=D3 S=1"), "5/12");
    // −6 is capped at −4.
    assert_eq!(fraction(0, -6, "L=D3 S=1"), "5/12");
    // 3:1, +4: roll ≥ 6 always; column ≥ 8; column 11 ← roll ≥ 9 ← 2d6 ≥ 5 → 30/36.
    assert_eq!(fraction(3, 4, "L=1 S=D3"), "5/6");
}
