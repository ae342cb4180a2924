//! Self-checks of the ratio-battle brute-force oracle (tests/ratio_oracle/mod.rs) against
//! numbers worked out by hand from docs/systems/ratio.md. Each expected number is derived
//! in the comment above it; the oracle is then trusted to check the crate's exact
//! enumeration.

mod ratio_oracle;

use ratio_oracle::{enumerate, OracleBattle, OracleResult};

/// A battle of single combats `A_i` vs `B_i`, one per pair of modifiers, no reserves.
fn line_battle(a_mods: Vec<i32>, b_mods: Vec<i32>, min_score: Option<i32>) -> OracleBattle {
    let line = (0..a_mods.len()).map(|i| (vec![i], vec![i])).collect();
    OracleBattle {
        a_mods,
        b_mods,
        line,
        reserve_side: None,
        reserves: vec![],
        policy: "none",
        min_score,
    }
}

/// Internal consistency every result must have.
fn check_sums(r: &OracleResult) {
    assert_eq!(r.result.iter().sum::<u128>(), r.total);
    assert_eq!(r.cp_a.iter().sum::<u128>(), r.total);
    assert_eq!(r.cp_b.iter().sum::<u128>(), r.total);
    assert_eq!(r.reserves_used.iter().sum::<u128>(), r.total);
    for c in &r.combat_states {
        assert_eq!(c.iter().sum::<u128>(), r.total);
    }
}

// 1v1, no modifiers. 36 pairs (a, b).
// a = b: 6 → even, no casualties → draw.
// a > b (15 pairs), by b:
//   b=1: a=2 beaten (2 = 2·1); a=3..6 routed (≥ 3·1)          → 1 beaten, 4 routed
//   b=2: a=3 repulsed; a=4,5 beaten; a=6 routed                → 1 rep, 2 beat, 1 rout
//   b=3: a=4,5 repulsed; a=6 beaten                            → 2 rep, 1 beat
//   b=4: a=5,6 repulsed                                        → 2 rep
//   b=5: a=6 repulsed                                          → 1 rep
//   B repulsed 6, beaten 4, routed 5. With N = 1: repulsed → holds; beaten (2·1 > 1) →
//   retreats; routed (2·1 > 1) → disperses. Never "retires" with one unit.
// By symmetry the same for a < b.
#[test]
fn one_vs_one_plain() {
    for floor in [Some(1), None] {
        let r = enumerate(&line_battle(vec![0], vec![0], floor));
        check_sums(&r);
        assert_eq!(r.total, 36);
        assert_eq!(r.result, [6, 0, 4, 5, 6, 0, 4, 5, 6]);
        assert_eq!(r.combat_states, vec![[6, 6, 4, 5, 6, 4, 5]]);
        // CP of B: 0 for draws and B wins (6 + 15), 1/2/3 for repulsed/beaten/routed.
        assert_eq!(r.cp_b, vec![21, 6, 4, 5]);
        assert_eq!(r.cp_a, vec![21, 6, 4, 5]);
        assert_eq!(r.reserves_used, vec![36]);
    }
}

// 1v1, A at +2 (totals 3..8), B at −1 (raw totals 0..5).
// With min_score 1, B's total for b = 1..6 is 1,1,2,3,4,5:
//   B=1 (b=1,2): every A ≥ 3 = 3·1 → B routed                      → 12 B routed
//   B=2 (b=3):  A=3 rep; A=4,5 beaten; A=6,7,8 routed (≥ 6)        → 1 rep, 2 beat, 3 rout
//   B=3 (b=4):  A=3 even; A=4,5 rep; A=6,7,8 beaten (6..8 < 9)     → 1 even, 2 rep, 3 beat
//   B=4 (b=5):  A=3 → A repulsed (4 < 6); A=4 even; A=5,6,7 B rep (< 8); A=8 B beaten
//   B=5 (b=6):  A=3,4 → A repulsed (5 < 6, 5 < 8); A=5 even; A=6,7,8 B rep (8 < 10)
//   Totals: even 3, A repulsed 3, B repulsed 1+2+3+3 = 9, B beaten 2+3+1 = 6,
//   B routed 12+3 = 15 (sum 36).
// Without a floor, b=1 gives B = 0 ≤ 0 → routed by any higher total, and b=2 gives B = 1
// → routed as above: exactly the same counts.
#[test]
fn one_vs_one_a_plus2_b_minus1() {
    for floor in [Some(1), None] {
        let r = enumerate(&line_battle(vec![2], vec![-1], floor));
        check_sums(&r);
        assert_eq!(r.total, 36);
        assert_eq!(r.result, [9, 0, 6, 15, 3, 0, 0, 0, 3]);
        assert_eq!(r.combat_states, vec![[3, 3, 0, 0, 9, 6, 15]]);
        assert_eq!(r.cp_a, vec![33, 3, 0, 0]);
        assert_eq!(r.cp_b, vec![6, 9, 6, 15]);
    }
}

// 1v1, A at 0 (1..6), B at −3 (raw −2..3).
// min_score Some(1): B = 1,1,1,1,2,3 for b = 1..6.
//   B=1 (b=1..4, ×4): A=1 even; A=2 beaten (2 ≥ 2·1, < 3); A=3..6 routed
//                      → even 4, B beaten 4, B routed 16
//   B=2 (b=5): A=1 → A beaten (hi 2 = 2·1); A=2 even; A=3 B rep (3 < 4);
//              A=4,5 B beaten (≥ 4, < 6); A=6 B routed (≥ 6)
//   B=3 (b=6): A=1 → A routed (3 ≥ 3·1); A=2 → A repulsed (3 < 4); A=3 even;
//              A=4,5 B repulsed (< 6); A=6 B beaten (6 ≥ 6, < 9)
//   Totals: even 6, A rep 1, A beat 1, A rout 1, B rep 3, B beat 4+2+1 = 7,
//   B rout 16+1 = 17 (sum 36).
// min_score None: b=1..3 give B = −2, −1, 0 ≤ 0 → routed by every A (18); b=4 gives B=1
//   → A=1 even, A=2 beaten, A=3..6 routed; b=5, b=6 as above.
//   Totals: even 3, A rep 1, A beat 1, A rout 1, B rep 3, B beat 1+2+1 = 4,
//   B rout 18+4+1 = 23 (sum 36).
#[test]
fn one_vs_one_floor() {
    let r = enumerate(&line_battle(vec![0], vec![-3], Some(1)));
    check_sums(&r);
    assert_eq!(r.result, [3, 0, 7, 17, 1, 0, 1, 1, 6]);
    assert_eq!(r.combat_states, vec![[6, 1, 1, 1, 3, 7, 17]]);
    assert_eq!(r.cp_a, vec![33, 1, 1, 1]);
    assert_eq!(r.cp_b, vec![9, 3, 7, 17]);

    let r = enumerate(&line_battle(vec![0], vec![-3], None));
    check_sums(&r);
    assert_eq!(r.result, [3, 0, 4, 23, 1, 0, 1, 1, 3]);
    assert_eq!(r.combat_states, vec![[3, 1, 1, 1, 3, 4, 23]]);
    assert_eq!(r.cp_a, vec![33, 1, 1, 1]);
    assert_eq!(r.cp_b, vec![6, 3, 4, 23]);
}

/// A0 vs B0 in the line, A1 in reserve, all modifiers 0, floor 1.
fn one_reserve(policy: &'static str) -> OracleBattle {
    OracleBattle {
        a_mods: vec![0, 0],
        b_mods: vec![0],
        line: vec![(vec![0], vec![0])],
        reserve_side: Some(0),
        reserves: vec![1],
        policy,
        min_score: Some(1),
    }
}

// Rescue with one reserve: 6^3 = 216 leaves (a, b, r).
// a > b (15 pairs × 6 reserve dice = 90 leaves): no commit; as in the plain 1v1, ×6:
//   B repulsed 36, beaten 24, routed 30.
// a ≤ b (21 pairs × 6 = 126 leaves): A1 committed, A's total T = a + r − 1 ∈ [a, a+5]
// (never below 1). Per b, outcome of each T against b, then counted over a = 1..b:
//   b=1: T=1 even; 2 B beat; 3..6 B rout.            a=1            → even 1, Bbeat 1, Brout 4
//   b=2: T=1 A beat; 2 even; 3 B rep; 4,5 B beat; 6,7 B rout.
//        a=1 (T 1..6): Abeat 1, even 1, Brep 1, Bbeat 2, Brout 1
//        a=2 (T 2..7): even 1, Brep 1, Bbeat 2, Brout 2
//   b=3: T=1 A rout; 2 A rep; 3 even; 4,5 B rep; 6..8 B beat.
//        a=1: Arout 1, Arep 1, even 1, Brep 2, Bbeat 1
//        a=2: Arep 1, even 1, Brep 2, Bbeat 2
//        a=3: even 1, Brep 2, Bbeat 3
//   b=4: T=1 A rout; 2 A beat; 3 A rep; 4 even; 5..7 B rep; 8,9 B beat.
//        a=1: Arout 1, Abeat 1, Arep 1, even 1, Brep 2
//        a=2: Abeat 1, Arep 1, even 1, Brep 3
//        a=3: Arep 1, even 1, Brep 3, Bbeat 1
//        a=4: even 1, Brep 3, Bbeat 2
//   b=5: T=1 A rout; 2 A beat; 3,4 A rep; 5 even; 6..9 B rep; 10 B beat.
//        a=1: Arout 1, Abeat 1, Arep 2, even 1, Brep 1
//        a=2: Abeat 1, Arep 2, even 1, Brep 2
//        a=3: Arep 2, even 1, Brep 3
//        a=4: Arep 1, even 1, Brep 4
//        a=5: even 1, Brep 4, Bbeat 1
//   b=6: T=1,2 A rout; 3 A beat; 4,5 A rep; 6 even; 7..11 B rep.
//        a=1: Arout 2, Abeat 1, Arep 2, even 1
//        a=2: Arout 1, Abeat 1, Arep 2, even 1, Brep 1
//        a=3: Abeat 1, Arep 2, even 1, Brep 2
//        a=4: Arep 2, even 1, Brep 3
//        a=5: Arep 1, even 1, Brep 4
//        a=6: even 1, Brep 5
//   Sums over b: Arout 6, Abeat 8, Arep 21, even 21, Brep 48, Bbeat 15, Brout 7 (= 126).
// Whole battle: even 21, A rep 21, A beat 8, A rout 6, B rep 36+48 = 84,
// B beat 24+15 = 39, B rout 30+7 = 37 (sum 216).
// When A loses it has N = 2 (line unit + reserve), both in the same state:
//   2 repulsed → holds (CP 2); 2 beaten → 2·2 > 2 retreats (CP 4); 2 routed → disperses (CP 6).
// B (N = 1): repulsed holds, beaten retreats, routed disperses.
// CP of A: 0 in 216 − 35 = 181 leaves; CP of B: 0 in 21 + 35 = 56 leaves.
#[test]
fn one_reserve_rescue() {
    let r = enumerate(&one_reserve("rescue"));
    check_sums(&r);
    assert_eq!(r.total, 216);
    assert_eq!(r.result, [84, 0, 39, 37, 21, 0, 8, 6, 21]);
    assert_eq!(r.combat_states, vec![[21, 21, 8, 6, 84, 39, 37]]);
    assert_eq!(r.cp_a, vec![181, 0, 21, 0, 8, 0, 6]);
    assert_eq!(r.cp_b, vec![56, 84, 39, 37]);
    assert_eq!(r.reserves_used, vec![90, 126]);
}

// Press with one reserve: A keeps its reserve only when the line roll already routs B,
// i.e. a ≥ 3b: (3..6, 1) and (6, 2) = 5 pairs × 6 reserve dice = 30 leaves; else commits.
// Policy "none": never commits; every reserve die is still enumerated, so every count is
// the plain 1v1 count × 6.
#[test]
fn one_reserve_press_and_none() {
    let r = enumerate(&one_reserve("press"));
    check_sums(&r);
    assert_eq!(r.reserves_used, vec![30, 186]);

    let r = enumerate(&one_reserve("none"));
    check_sums(&r);
    assert_eq!(r.total, 216);
    assert_eq!(r.reserves_used, vec![216, 0]);
    assert_eq!(r.result, [36, 0, 24, 30, 36, 0, 24, 30, 36]);
    assert_eq!(r.combat_states, vec![[36, 36, 24, 30, 36, 24, 30]]);
}

// Reserves on side B. A at +100 (101..106) against B0 at 0 plus reserves B1, B2 at 0:
// B's best total is 6 + 5 + 5 = 16 and 101 ≥ 3·16, so B always loses and is always
// routed. "rescue" commits both reserves in every leaf (the combat stays lost), and so
// does "press" (B never routs A). All 3 B units routed (CP 9), N = 3, 2·3 > 3 → B
// disperses. 6^4 = 1296 leaves.
#[test]
fn b_reserves_hopeless() {
    for policy in ["rescue", "press"] {
        let b = OracleBattle {
            a_mods: vec![100],
            b_mods: vec![0, 0, 0],
            line: vec![(vec![0], vec![0])],
            reserve_side: Some(1),
            reserves: vec![1, 2],
            policy,
            min_score: Some(1),
        };
        let r = enumerate(&b);
        check_sums(&r);
        assert_eq!(r.total, 1296);
        assert_eq!(r.reserves_used, vec![0, 0, 1296]);
        assert_eq!(r.result, [0, 0, 0, 1296, 0, 0, 0, 0, 0]);
        assert_eq!(r.combat_states, vec![[0, 0, 0, 0, 0, 0, 1296]]);
        assert_eq!(r.cp_b[9], 1296);
        assert_eq!(r.cp_a[0], 1296);
    }
}

// B at +100 in the line routs A (A ≤ 6, B ≥ 101) before any reserve: "press" never
// commits (the enemy is already routed), "rescue" never commits (already winning).
#[test]
fn b_reserves_not_needed() {
    for policy in ["rescue", "press"] {
        let b = OracleBattle {
            a_mods: vec![0],
            b_mods: vec![100, 0],
            line: vec![(vec![0], vec![0])],
            reserve_side: Some(1),
            reserves: vec![1],
            policy,
            min_score: Some(1),
        };
        let r = enumerate(&b);
        check_sums(&r);
        assert_eq!(r.total, 216);
        assert_eq!(r.reserves_used, vec![216, 0]);
        assert_eq!(r.result, [0, 0, 0, 0, 0, 0, 0, 216, 0]);
    }
}

/// (name, A modifiers, B modifiers, expected result index, CP of A, CP of B).
type Case = (&'static str, Vec<i32>, Vec<i32>, usize, usize, usize);

// Deterministic multi-combat battles using a high floor (min_score 10):
//   a unit at −20 always totals −19..−14 → floored to 10;
//   a unit at +19 totals 20..25 against 10: ratio 2..2.5 → loser beaten;
//   a unit at +29 totals 30..35 against 10: ratio ≥ 3 → loser routed;
//   −20 against −20: 10 = 10 → even.
// Three combats, 6^6 = 46656 leaves, each one giving the same battle.
#[test]
fn army_result_categories() {
    const W: u128 = 46656;
    let cases: [Case; 6] = [
        // B: 1 beaten of N=3 → none routed, 2·1 ≤ 3 → retires. CP 0 vs 2.
        ("retires", vec![19, -20, -20], vec![-20; 3], 1, 0, 2),
        // B: 2 beaten of 3 → 2·2 > 3 → retreats. CP 0 vs 4.
        (
            "retreats, beaten majority",
            vec![19, 19, -20],
            vec![-20; 3],
            2,
            0,
            4,
        ),
        // B: 1 routed of 3 → 2·1 ≤ 3, but some routed → retreats. CP 0 vs 3.
        (
            "retreats, one routed",
            vec![29, -20, -20],
            vec![-20; 3],
            2,
            0,
            3,
        ),
        // B: 2 routed of 3 → 2·2 > 3 → disperses. CP 0 vs 6.
        ("disperses", vec![29, 29, -20], vec![-20; 3], 3, 0, 6),
        // Nobody loses any combat → draw at 0–0.
        ("draw 0-0", vec![-20; 3], vec![-20; 3], 8, 0, 0),
        // A routs B in combat 0, B routs A in combat 1: 3–3 → draw.
        ("draw 3-3", vec![29, -20, -20], vec![-20, 29, -20], 8, 3, 3),
    ];
    for (name, a, b, idx, cpa, cpb) in cases {
        let r = enumerate(&line_battle(a, b, Some(10)));
        check_sums(&r);
        assert_eq!(r.total, W, "{name}");
        let mut want = [0u128; 9];
        want[idx] = W;
        assert_eq!(r.result, want, "{name}");
        assert_eq!(r.cp_a[cpa], W, "{name}");
        assert_eq!(r.cp_b[cpb], W, "{name}");
    }
}

// A double: A0 + A1 (both −20, sum −40 → floored 10) against B0 at +19 (20..25): both A
// units beaten (CP 4). Second combat A2 vs B1 both −20: even. A's N = 3 (two in the
// double + one), 2 beaten: 2·2 > 3 → A retreats; B wins. 6^5 = 7776 leaves.
#[test]
fn double_both_units_take_the_state() {
    let b = OracleBattle {
        a_mods: vec![-20, -20, -20],
        b_mods: vec![19, -20],
        line: vec![(vec![0, 1], vec![0]), (vec![2], vec![1])],
        reserve_side: None,
        reserves: vec![],
        policy: "none",
        min_score: Some(10),
    };
    let r = enumerate(&b);
    check_sums(&r);
    assert_eq!(r.total, 7776);
    assert_eq!(r.result, [0, 0, 0, 0, 0, 0, 7776, 0, 0]);
    assert_eq!(
        r.combat_states,
        vec![[0, 0, 7776, 0, 0, 0, 0], [7776, 0, 0, 0, 0, 0, 0]]
    );
    assert_eq!(r.cp_a[4], 7776);
    assert_eq!(r.cp_b[0], 7776);
}

// Reserves spent on one combat are gone for later combats. Floor 10; A0, A1 and the
// reserve A2 all at −20 (always floored to 10, even with the reserve added: at most
// −20 + 6 + (6 − 1 − 20) < 10); B0, B1 at +19 (20..25) → A beaten in both combats.
// "rescue": combat 0 is lost → A2 committed, still lost → A0 and A2 beaten; combat 1 is
// lost but no reserve is left → A1 beaten. A: N = 3, 3 beaten → 2·3 > 3 → retreats,
// CP 6. 6^5 = 7776 leaves.
#[test]
fn reserve_used_only_once() {
    let b = OracleBattle {
        a_mods: vec![-20, -20, -20],
        b_mods: vec![19, 19],
        line: vec![(vec![0], vec![0]), (vec![1], vec![1])],
        reserve_side: Some(0),
        reserves: vec![2],
        policy: "rescue",
        min_score: Some(10),
    };
    let r = enumerate(&b);
    check_sums(&r);
    assert_eq!(r.total, 7776);
    assert_eq!(r.reserves_used, vec![0, 7776]);
    assert_eq!(r.result, [0, 0, 0, 0, 0, 0, 7776, 0, 0]);
    assert_eq!(r.cp_a[6], 7776);
    assert_eq!(r.cp_b[0], 7776);
}
