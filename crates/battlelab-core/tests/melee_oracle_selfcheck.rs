//! Self-checks of the melee oracle (tests/melee_oracle/mod.rs) against numbers worked out
//! by hand from the rules and readings of docs/systems/melee.md. Each expected number
//! is derived in the comment above it; the oracle is then trusted to check the crate.

mod melee_oracle;

use melee_oracle::*;

/// A unit with the default rank rule (`ranks`, cap 3).
#[allow(clippy::too_many_arguments)]
fn unit(
    models: u32,
    frontage: u32,
    attacks: u32,
    skill: u32,
    power: u32,
    defense: u32,
    discipline: u32,
    wounds: u32,
) -> Unit {
    Unit {
        models,
        frontage,
        attacks,
        skill,
        power,
        defense,
        discipline,
        wounds,
        rank_rule: RankRule::Ranks,
        rank_cap: 3,
    }
}

/// "A": 1 model, 1 attack, Skill 4, Power 3, Defense 3, Discipline 3.
fn a1(wounds: u32) -> Unit {
    unit(1, 1, 1, 4, 3, 3, 3, wounds)
}

/// "B": 1 model, 1 attack, Skill 3, Power 3, Defense 3, Discipline 5.
fn b1(wounds: u32) -> Unit {
    unit(1, 1, 1, 3, 3, 3, 5, wounds)
}

fn check_one_phase_sums(r: &OnePhase) {
    for v in [&r.hits_by_a, &r.wounds_by_a, &r.hits_by_b, &r.wounds_by_b] {
        assert_eq!(v.iter().sum::<u128>(), r.denominator);
    }
    assert_eq!(r.a_wins + r.draw + r.b_wins, r.denominator);
    assert!(r.a_breaks <= r.b_wins);
    assert!(r.b_breaks <= r.a_wins);
}

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() < 1e-12,
        "{what}: got {got}, want {want} (diff {})",
        got - want
    );
}

fn assert_phases(got: &[[f64; 6]], want: &[[f64; 6]]) {
    assert_eq!(got.len(), want.len(), "number of phases");
    for (p, (g, w)) in got.iter().zip(want).enumerate() {
        for i in 0..6 {
            assert_close(g[i], w[i], &format!("phase {} result {}", p + 1, i));
        }
    }
    assert_close(total_probability(got), 1.0, "total probability");
}

// ---------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------

// Attack roll: attacker Skill > target Skill → 3+, otherwise (equal or lower) 4+.
// Differences 0, ±1, ±2, ±3 around Skill 5.
#[test]
fn hit_targets_at_every_edge() {
    assert_eq!(hit_target(5, 5), 4); // equal
    assert_eq!(hit_target(6, 5), 3); // +1
    assert_eq!(hit_target(7, 5), 3); // +2
    assert_eq!(hit_target(8, 5), 3); // +3
    assert_eq!(hit_target(4, 5), 4); // −1
    assert_eq!(hit_target(3, 5), 4); // −2
    assert_eq!(hit_target(2, 5), 4); // −3
    assert_eq!(hit_target(10, 1), 3);
    assert_eq!(hit_target(1, 10), 4);
}

// Damage save: Power > Defense → 5+, 6+ if the difference is more than 2; equal → 4+;
// Power < Defense → 3+, 2+ if the difference is more than 2.
#[test]
fn save_targets_at_every_edge() {
    assert_eq!(save_target(5, 5), 4); // equal
    assert_eq!(save_target(6, 5), 5); // Power +1
    assert_eq!(save_target(7, 5), 5); // Power +2 (not more than 2)
    assert_eq!(save_target(8, 5), 6); // Power +3
    assert_eq!(save_target(4, 5), 3); // Power −1
    assert_eq!(save_target(3, 5), 3); // Power −2
    assert_eq!(save_target(2, 5), 2); // Power −3
    assert_eq!(save_target(10, 1), 6);
    assert_eq!(save_target(1, 10), 2);
}

// ---------------------------------------------------------------------------------------
// Formation, rank bonus, A's dice
// ---------------------------------------------------------------------------------------

// 5 models, frontage 2: ranks 2,2,1 → f 2, s 2, r 3.
//   ranks: min(3−1, 3) = 2; full-ranks: floor(5/2) − 1 = 1; none: 0; ranks cap 1 → 1.
// 7 models, frontage 1: r 7 → ranks min(6, 3) = 3; full-ranks min(7−1, 3) = 3.
// 2 models, frontage 2: r 1 → 0; 1 model: 0. 0 models: 0 ranks.
// Multi-wound: 3 models × 2 wounds: t = 0,1 → 3 alive; t = 2,3 → 2; t = 5 → 1; t = 6 → 0.
#[test]
fn formation_and_rank_bonus() {
    let mut u = unit(5, 2, 1, 3, 3, 3, 5, 1);
    assert_eq!(rank_sizes(&u, 5), vec![2, 2, 1]);
    assert_eq!(
        (front_rank(&u, 5), second_rank(&u, 5), ranks(&u, 5)),
        (2, 2, 3)
    );
    assert_eq!(
        (front_rank(&u, 1), second_rank(&u, 1), ranks(&u, 1)),
        (1, 0, 1)
    );
    assert_eq!(
        (front_rank(&u, 3), second_rank(&u, 3), ranks(&u, 3)),
        (2, 1, 2)
    );
    assert_eq!(ranks(&u, 0), 0);
    assert_eq!(rank_bonus(&u, 5), 2);
    assert_eq!(rank_bonus(&u, 2), 0);
    assert_eq!(rank_bonus(&u, 3), 1);
    u.rank_rule = RankRule::FullRanks;
    assert_eq!(rank_bonus(&u, 5), 1);
    assert_eq!(rank_bonus(&u, 3), 0);
    assert_eq!(rank_bonus(&u, 4), 1);
    u.rank_rule = RankRule::None;
    assert_eq!(rank_bonus(&u, 5), 0);
    u.rank_rule = RankRule::Ranks;
    u.rank_cap = 1;
    assert_eq!(rank_bonus(&u, 5), 1);

    let mut col = unit(7, 1, 1, 3, 3, 3, 5, 1);
    assert_eq!(rank_bonus(&col, 7), 3);
    col.rank_rule = RankRule::FullRanks;
    assert_eq!(rank_bonus(&col, 7), 3);

    let mw = unit(3, 3, 1, 3, 3, 3, 5, 2);
    let alive: Vec<u32> = (0..=6).map(|t| models_alive(&mw, t)).collect();
    assert_eq!(alive, vec![3, 3, 2, 2, 1, 1, 0]);
    assert_eq!(wounds_left(&mw, 1), 5);
    // Front dice f·attacks + s: 5 models frontage 2, 2 attacks → 2·2 + 2 = 6.
    assert_eq!(front_dice(&unit(5, 2, 2, 3, 3, 3, 5, 1), 5), 6);
}

// A's dice (readings "Unit A attacks"):
// - 6 models frontage 2 (ranks 2,2,2), attacks 2, front + 2 flanks: front 2·2 + 2 = 6;
//   eligible ranks = rank 3 only (size 2) → first flank 1·2 = 2, second flank 1·2 = 2.
// - same without a front, flank + flank + rear: eligible ranks 1..3 → 3·2 = 6, 3·2 = 6, rear 0.
// - 5 models frontage 2 (2,2,1), attacks 1, two flanks: first 3, second 2 (last rank has 1).
// - 3 models frontage 1: two flanks → 3 and 0; front + flank → front 1 + 1 = 2, flank 1 (rank 3).
// - 4 models frontage 2, front + flank: front 2 + 2 = 4; no rank 3 → flank 0.
// - 1 model, front + flank: front 1, flank 0. Flank only: 1.
#[test]
fn a_dice_geometry() {
    use Facing::*;
    let six = unit(6, 2, 2, 3, 3, 3, 5, 1);
    assert_eq!(
        a_attack_dice(&six, 6, &[Front, Flank, Flank]),
        vec![6, 2, 2]
    );
    assert_eq!(a_attack_dice(&six, 6, &[Flank, Flank, Rear]), vec![6, 6, 0]);
    assert_eq!(a_attack_dice(&six, 6, &[Rear, Flank]), vec![0, 6]);
    let five = unit(5, 2, 1, 3, 3, 3, 5, 1);
    assert_eq!(a_attack_dice(&five, 5, &[Flank, Flank]), vec![3, 2]);
    // Front 2·1 + 2 = 4; rank 3 (1 model) → first flank 1, second flank 0.
    assert_eq!(
        a_attack_dice(&five, 5, &[Front, Flank, Flank]),
        vec![4, 1, 0]
    );
    let col = unit(3, 1, 1, 3, 3, 3, 5, 1);
    assert_eq!(a_attack_dice(&col, 3, &[Flank, Flank]), vec![3, 0]);
    assert_eq!(a_attack_dice(&col, 3, &[Front, Flank]), vec![2, 1]);
    let four = unit(4, 2, 1, 3, 3, 3, 5, 1);
    assert_eq!(a_attack_dice(&four, 4, &[Front, Flank]), vec![4, 0]);
    assert_eq!(a_attack_dice(&a1(1), 1, &[Front, Flank]), vec![1, 0]);
    assert_eq!(a_attack_dice(&a1(1), 1, &[Flank]), vec![1]);
}

// Break dice totals: 1d6 ≤ 2 → 2 of 6; 2d6 ≤ 2 → 1 of 36, ≤ 4 → 1+2+3 = 6, ≤ 9 → 30;
// 3d6 ≤ 2 → 0, ≤ 4 → 1 + 3 = 4 of 216. Threshold ≥ max always passes, < min always fails.
#[test]
fn break_dice_counts() {
    assert_eq!(break_pass_count(BreakDice::D6, 2), 2);
    assert_eq!(break_pass_count(BreakDice::D6, 0), 0);
    assert_eq!(break_pass_count(BreakDice::D6, -3), 0);
    assert_eq!(break_pass_count(BreakDice::D6, 9), 6);
    assert_eq!(break_pass_count(BreakDice::TwoD6, 2), 1);
    assert_eq!(break_pass_count(BreakDice::TwoD6, 4), 6);
    assert_eq!(break_pass_count(BreakDice::TwoD6, 9), 30);
    assert_eq!(break_pass_count(BreakDice::TwoD6, 12), 36);
    assert_eq!(break_pass_count(BreakDice::ThreeD6, 2), 0);
    assert_eq!(break_pass_count(BreakDice::ThreeD6, 4), 4);
    assert_eq!(break_pass_count(BreakDice::ThreeD6, 18), 216);
}

// ---------------------------------------------------------------------------------------
// One phase, hand-worked
// ---------------------------------------------------------------------------------------

// A = a1(w) vs B = b1(w), one attack die each (f = 1, s = 0).
// A hits B on 3+ (Skill 4 > 3): 4 of 6 hit dice. B saves on 4+ (Power 3 = Defense 3),
//   fails on 1..3: 3 of 6. Per die (36 pairs): hits 24, wounds 4·3 = 12.
// B hits A on 4+ (3 ≤ 4): 3 of 6; A saves 4+: fails 3 of 6. Per die: hits 18, wounds 9.
// Denominator with 1d6: 36·36·6 = 7776; each per-die count is × 36·6 = 216.
//   hits_by_a = [12, 24]·216 = [2592, 5184]; wounds_by_a = [24, 12]·216 = [5184, 2592]
//   hits_by_b = [18, 18]·216 = [3888, 3888]; wounds_by_b = [27, 9]·216 = [5832, 1944]
// Over the 1296 attack-die outcomes: A wins (A wounds, B not) 12·27 = 324; B wins 24·9 = 216;
// draw 12·9 + 24·27 = 756. × 6: a_wins 1944, b_wins 1296, draw 4536.
// wounds = 1: the loser lost its only model → nobody tests: a_breaks = b_breaks = 0.
// wounds = 2: the loser keeps its model (1 wound taken), rank bonus 0 (1 rank),
//   difference 1. A: 3 + 0 − 1 = 2 → 1d6 fails on 3..6: 4 of 6 → a_breaks = 216·4 = 864.
//   B: 5 + 0 − 1 = 4 → fails on 5,6: 2 of 6 → b_breaks = 324·2 = 648.
// P(A wins) = 1/4, P(draw) = 7/12, P(B wins) = 1/6, P(A breaks) = 1/9, P(B breaks) = 1/12.
#[test]
fn one_phase_single_die_each() {
    for w in [1, 2] {
        for r in [
            one_phase_brute_force(&a1(w), &b1(w), BreakDice::D6),
            one_phase_binomial(&a1(w), &b1(w), BreakDice::D6),
        ] {
            check_one_phase_sums(&r);
            assert_eq!(r.denominator, 7776);
            assert_eq!(r.hits_by_a, vec![2592, 5184]);
            assert_eq!(r.wounds_by_a, vec![5184, 2592]);
            assert_eq!(r.hits_by_b, vec![3888, 3888]);
            assert_eq!(r.wounds_by_b, vec![5832, 1944]);
            assert_eq!((r.a_wins, r.draw, r.b_wins), (1944, 4536, 1296));
            if w == 1 {
                assert_eq!((r.a_breaks, r.b_breaks), (0, 0));
            } else {
                assert_eq!((r.a_breaks, r.b_breaks), (864, 648));
            }
        }
    }
}

// Same units (wounds 2) with 2d6 and 3d6 break dice: only the break counts and the
// denominator change (every other count scales with the number of break-dice outcomes).
// 2d6 (36 outcomes, denominator 1296·36 = 46656):
//   A needs ≤ 2: only (1,1) → fails 35 → a_breaks = 216·35 = 7560.
//   B needs ≤ 4: totals 2,3,4 = 1+2+3 = 6 → fails 30 → b_breaks = 324·30 = 9720.
// 3d6 (216 outcomes, denominator 1296·216 = 279936):
//   A needs ≤ 2: impossible → fails 216 → a_breaks = 216·216 = 46656.
//   B needs ≤ 4: totals 3 (1 way), 4 (3 ways) → fails 212 → b_breaks = 324·212 = 68688.
// With 1d6 B failed 2/6 = 1/3; with 2d6 30/36 = 5/6: the break dice matter.
#[test]
fn one_phase_break_dice_matter() {
    let (a, b) = (a1(2), b1(2));
    for r in [
        one_phase_brute_force(&a, &b, BreakDice::TwoD6),
        one_phase_binomial(&a, &b, BreakDice::TwoD6),
    ] {
        check_one_phase_sums(&r);
        assert_eq!(r.denominator, 46656);
        assert_eq!((r.a_wins, r.draw, r.b_wins), (324 * 36, 756 * 36, 216 * 36));
        assert_eq!((r.a_breaks, r.b_breaks), (7560, 9720));
        assert_eq!(r.wounds_by_b, vec![27 * 36 * 36, 9 * 36 * 36]);
    }
    for r in [
        one_phase_brute_force(&a, &b, BreakDice::ThreeD6),
        one_phase_binomial(&a, &b, BreakDice::ThreeD6),
    ] {
        check_one_phase_sums(&r);
        assert_eq!(r.denominator, 279936);
        assert_eq!(
            (r.a_wins, r.draw, r.b_wins),
            (324 * 216, 756 * 216, 216 * 216)
        );
        assert_eq!((r.a_breaks, r.b_breaks), (46656, 68688));
    }
}

// Rank bonus after casualties, supporting die, caps.
// A: 1 model, 2 attacks, Skill 4, Power 3, Defense 3, Discipline 4, 2 wounds → 2 dice.
// B: 2 models, frontage 1, 1 attack, Skill 3, Power 3, Defense 3, Discipline 3, 1 wound →
//    f = 1, s = 1 → 2 dice; fresh: 2 ranks → rank bonus 1.
// A's wounds per die 1/3: P(wA = 0, 1, 2) = 4/9, 4/9, 1/9 (cap R_B = 2 never binds).
// B's wounds per die 1/4: P(wB = 0, 1, 2) = 9/16, 6/16, 1/16 (cap R_A = 2 never binds).
// A wins: (1,0) 1/4 + (2,0) 1/16 + (2,1) 1/24 = 51/144.
// B wins: (0,1) 1/6 + (0,2) 1/36 + (1,2) 1/36 = 32/144.  Draw: 36+24+1 = 61/144.
// B breaks: only at (1,0) (at (2,·) B is destroyed): B has 1 model left → 1 rank → bonus 0
//   (not the fresh 1!), threshold 3 + 0 − 1 = 2 → fails 4/6: 1/4 · 2/3 = 1/6.
// A breaks: only at (0,1) (wB = 2 destroys A): threshold 4 + 0 − 1 = 3 → fails 3/6:
//   1/6 · 1/2 = 1/12.
// Denominator 36^4 · 6 = 10077696; 1/144 of it = 69984.
// hits_by_a: A hits 4/6 per die → [1/9, 4/9, 4/9] → [1119744, 4478976, 4478976].
// hits_by_b: B hits 3/6 per die → [1/4, 1/2, 1/4] → [2519424, 5038848, 2519424].
// wounds_by_a = [4478976, 4478976, 1119744]; wounds_by_b: 1/16 = 629856 → [9, 6, 1]·629856.
#[test]
fn one_phase_rank_bonus_after_casualties() {
    let a = unit(1, 1, 2, 4, 3, 3, 4, 2);
    let b = unit(2, 1, 1, 3, 3, 3, 3, 1);
    for r in [
        one_phase_brute_force(&a, &b, BreakDice::D6),
        one_phase_binomial(&a, &b, BreakDice::D6),
    ] {
        check_one_phase_sums(&r);
        assert_eq!(r.denominator, 10077696);
        assert_eq!(r.hits_by_a, vec![1119744, 4478976, 4478976]);
        assert_eq!(r.hits_by_b, vec![2519424, 5038848, 2519424]);
        assert_eq!(r.wounds_by_a, vec![4478976, 4478976, 1119744]);
        assert_eq!(r.wounds_by_b, vec![9 * 629856, 6 * 629856, 629856]);
        assert_eq!(r.a_wins, 51 * 69984);
        assert_eq!(r.b_wins, 32 * 69984);
        assert_eq!(r.draw, 61 * 69984);
        assert_eq!(r.b_breaks, 10077696 / 6);
        assert_eq!(r.a_breaks, 10077696 / 12);
    }
}

// Cap: A with 3 dice (1 model, 3 attacks) against B of 1 model, 1 wound. wounds_by_a is
// uncapped (up to 3), but the score is at most 1, so B "wins" only when it wounds and A
// does not: P(A no wound) = (2/3)^3 = 8/27, P(B wounds) = 1/4 → b_wins = 2/27 of the
// total; A's score ≥ 1 and B's = 0 → a_wins = 19/27 · 3/4 = 19/36; draw = the rest.
// Denominator 36^4·6; 1/108 of it = 93312. b_wins = 8·93312, a_wins = 57·93312.
#[test]
fn one_phase_capped_score() {
    let a = unit(1, 1, 3, 4, 3, 3, 3, 1);
    let b = b1(1);
    for r in [
        one_phase_brute_force(&a, &b, BreakDice::D6),
        one_phase_binomial(&a, &b, BreakDice::D6),
    ] {
        check_one_phase_sums(&r);
        assert_eq!(r.denominator, 10077696);
        assert_eq!(r.wounds_by_a.len(), 4);
        // P(wA = 3) = 1/27 (uncapped count).
        assert_eq!(r.wounds_by_a[3], 10077696 / 27);
        assert_eq!(r.b_wins, 8 * 93312);
        assert_eq!(r.a_wins, 57 * 93312);
        assert_eq!(r.draw, 43 * 93312);
        assert_eq!((r.a_breaks, r.b_breaks), (0, 0));
    }
}

// ---------------------------------------------------------------------------------------
// Brute force == binomial
// ---------------------------------------------------------------------------------------

#[test]
fn brute_force_equals_binomial() {
    let mut full_ranks = unit(3, 1, 1, 5, 6, 2, 4, 1);
    full_ranks.rank_rule = RankRule::FullRanks;
    let mut no_ranks = unit(2, 1, 1, 2, 1, 7, 6, 2);
    no_ranks.rank_rule = RankRule::None;
    let cases: Vec<(Unit, Unit, BreakDice)> = vec![
        (a1(1), b1(1), BreakDice::D6),
        (a1(2), b1(2), BreakDice::ThreeD6),
        // Supporting dice, rank bonus after casualties, Power far above/below Defense.
        (
            unit(2, 1, 1, 6, 9, 2, 5, 1),
            unit(2, 1, 1, 3, 2, 6, 4, 1),
            BreakDice::TwoD6,
        ),
        // 3 ranks vs 1 model with 3 wounds and 2 attacks.
        (
            unit(3, 1, 1, 3, 4, 3, 2, 1),
            unit(1, 1, 2, 7, 3, 4, 8, 3),
            BreakDice::TwoD6,
        ),
        (full_ranks, unit(1, 1, 1, 4, 1, 9, 3, 1), BreakDice::D6),
        (no_ranks, unit(2, 2, 1, 2, 7, 1, 2, 1), BreakDice::TwoD6),
        // Wide unit, multi-wound models, low discipline.
        (
            unit(3, 3, 1, 4, 4, 4, 1, 2),
            unit(1, 1, 1, 4, 4, 4, 1, 2),
            BreakDice::D6,
        ),
        // Extreme stats both ways, 3d6.
        (
            unit(1, 1, 2, 1, 10, 1, 10, 1),
            unit(1, 1, 1, 10, 1, 10, 10, 1),
            BreakDice::ThreeD6,
        ),
    ];
    for (a, b, dice) in cases {
        let brute = one_phase_brute_force(&a, &b, dice);
        let binom = one_phase_binomial(&a, &b, dice);
        check_one_phase_sums(&brute);
        assert_eq!(brute, binom, "{a:?} vs {b:?} {dice:?}");
        // Swapping the sides swaps the roles.
        let swapped = one_phase_binomial(&b, &a, dice);
        assert_eq!(swapped.hits_by_a, binom.hits_by_b);
        assert_eq!(swapped.wounds_by_b, binom.wounds_by_a);
        assert_eq!(
            (swapped.a_wins, swapped.b_wins),
            (binom.b_wins, binom.a_wins)
        );
        assert_eq!(
            (swapped.a_breaks, swapped.b_breaks),
            (binom.b_breaks, binom.a_breaks)
        );
    }
}

// The binomial way handles 12 dice a side (36^24 · 6 fits u128): sums still exact.
#[test]
fn binomial_large() {
    let a = unit(12, 6, 1, 4, 4, 3, 7, 1); // 6 + 6 = 12 dice
    let b = unit(6, 6, 2, 3, 3, 4, 7, 2); // 12 dice
    let r = one_phase_binomial(&a, &b, BreakDice::D6);
    check_one_phase_sums(&r);
    assert_eq!(r.hits_by_a.len(), 13);
    assert_eq!(r.hits_by_b.len(), 13);
}

// ---------------------------------------------------------------------------------------
// Engagements, hand-worked
// ---------------------------------------------------------------------------------------

// a1(1) vs b1(1) in front, 1d6. Per phase (from the one-phase test): A only wounds 1/4 →
// B destroyed; B only 1/6 → A destroyed; both 1/12 → both out; neither 1/2 → next phase
// (a loser always dies, nobody tests).
// Limit 2: phase 1 [0, 1/6, 0, 1/4, 1/12, 0]; phase 2 = 1/2 · phase 1 plus 1/2·1/2 = 1/4
// reaching the limit.
#[test]
fn engagement_one_model_each_one_wound() {
    let r = engagement(&a1(1), &[(Facing::Front, b1(1))], BreakDice::D6, 2);
    assert_phases(
        &r,
        &[
            [0.0, 1.0 / 6.0, 0.0, 0.25, 1.0 / 12.0, 0.0],
            [0.0, 1.0 / 12.0, 0.0, 0.125, 1.0 / 24.0, 0.25],
        ],
    );
}

// a1(2) vs b1(2) in front, 1d6, limit 2. State (wounds on A, wounds on B).
// Phase 1 from (0,0):
//   A only 1/4: B loses by 1, 1 model left, fails 2/6 → B flees 1/12; passes → (0,1) 1/6.
//   B only 1/6: A loses by 1, fails 4/6 → A flees 1/9; passes → (1,0) 1/18.
//   both 1/12 → draw → (1,1) 1/12.  neither 1/2 → (0,0) 1/2.
//   Phase 1: [1/9, 0, 1/12, 0, 0, 0].
// Phase 2:
//   (0,0) 1/2: A flees 1/2·1/9 = 1/18, B flees 1/2·1/12 = 1/24, rest → limit.
//   (0,1) 1/6 (B has 1 wound left): A only 1/4 → B destroyed 1/24; B only 1/6 → A fails 4/6
//     → A flees 1/54; both 1/12 → draw, B destroyed 1/72; else limit.
//   (1,0) 1/18: A only 1/4 → B fails 1/3 → B flees 1/216; B only 1/6 → A destroyed 1/108;
//     both 1/12 → A destroyed (draw, B stays) 1/216.
//   (1,1) 1/12: A only → B destroyed 1/48; B only → A destroyed 1/72; both → both out 1/144.
//   A flees 1/18 + 1/54 = 2/27; A destroyed 1/108 + 1/216 + 1/72 = 6/216 = 1/36;
//   B flees 1/24 + 1/216 = 10/216 = 5/108; B destroyed 1/24 + 1/72 + 1/48 = 11/144;
//   both out 1/144; limit = 1 − 7/36 − 25/108 = 31/54.
//   (Check of the limit: 1/2·29/36 + 1/6·5/9 + 1/18·2/3 + 1/12·1/2 = (87+20+8+9)/216 = 31/54.)
#[test]
fn engagement_one_model_each_two_wounds() {
    let r = engagement(&a1(2), &[(Facing::Front, b1(2))], BreakDice::D6, 2);
    assert_phases(
        &r,
        &[
            [1.0 / 9.0, 0.0, 1.0 / 12.0, 0.0, 0.0, 0.0],
            [
                2.0 / 27.0,
                1.0 / 36.0,
                5.0 / 108.0,
                11.0 / 144.0,
                1.0 / 144.0,
                31.0 / 54.0,
            ],
        ],
    );
}

// Flank bonus. a1(1) engaged only by b1(1) on its flank, 1d6, limit 1.
// No front → A's rank 1 is eligible → 1 die at the flank unit (wound 1/3). B: 1 die (1/4),
// score = wounds + 1.
//   A only 1/4: 1 vs 0+1 → draw; B destroyed → B destroyed 1/4.
//   B only 1/6: A destroyed 1/6.  Both 1/12: both out.
//   Neither 1/2: 0 vs 1 → A loses by 1, threshold 3 + 0 − 1 = 2 → fails 4/6 → A flees 1/3,
//   passes → limit 1/6.
#[test]
fn engagement_flank_bonus() {
    let r = engagement(&a1(1), &[(Facing::Flank, b1(1))], BreakDice::D6, 1);
    assert_phases(
        &r,
        &[[1.0 / 3.0, 1.0 / 6.0, 0.0, 0.25, 1.0 / 12.0, 1.0 / 6.0]],
    );
}

// Rear: A never attacks a rear unit; B's score = wounds + 1.
// a1(1) vs b1(1) at the rear, 1d6, limit 1: B wounds 1/4 → A destroyed; else (3/4)
// A loses 0 vs 1 → fails 4/6 → A flees 1/2; passes → limit 1/4.
#[test]
fn engagement_rear_bonus() {
    let r = engagement(&a1(1), &[(Facing::Rear, b1(1))], BreakDice::D6, 1);
    assert_phases(&r, &[[0.5, 0.25, 0.0, 0.0, 0.0, 0.25]]);
}

// Front + flank: a1(1) vs front b1(1) and flank b1(1), 1d6.
// Phase 1: A attacks the front only (1 die, 1/3); no rank 3 → flank gets nothing. Both B
// units roll 1 die each at A (1/4 each): A wounded (destroyed) 1 − 9/16 = 7/16. Score B =
// wounds + 1 (flank) ≥ 1, score A ≤ 1.
//   A destroyed 7/16 (the flank unit is untouched, so never both out).
//   A unhurt 9/16: A wounds the front 1/3 → 1 vs 1 draw, front destroyed → state S1 3/16;
//     else 0 vs 1 → A fails 4/6 → A flees 9/16·2/3·2/3 = 1/4; passes → S0 1/8.
//   Phase 1 (limit 1): [1/4, 7/16, 0, 0, 0, 5/16].
// Phase 2 (limit 2):
//   S1 (3/16): A vs the flank unit alone, now with rank 1 eligible → exactly the flank test
//     above: [1/3, 1/6, 0, 1/4, 1/12, 1/6]·3/16 = [1/16, 1/32, 0, 3/64, 1/64, 1/32]
//     (B destroyed: both B units destroyed over the two phases).
//   S0 (1/8): phase 1 again: [1/32, 7/128, 0, 0, 0, 5/128].
//   Phase 2: [12/128, 11/128, 0, 6/128, 2/128, 9/128] (sums to 40/128 = 5/16).
#[test]
fn engagement_front_and_flank() {
    let b = [(Facing::Front, b1(1)), (Facing::Flank, b1(1))];
    let r = engagement(&a1(1), &b, BreakDice::D6, 1);
    assert_phases(&r, &[[0.25, 7.0 / 16.0, 0.0, 0.0, 0.0, 5.0 / 16.0]]);
    let r = engagement(&a1(1), &b, BreakDice::D6, 2);
    assert_phases(
        &r,
        &[
            [0.25, 7.0 / 16.0, 0.0, 0.0, 0.0, 0.0],
            [
                12.0 / 128.0,
                11.0 / 128.0,
                0.0,
                6.0 / 128.0,
                2.0 / 128.0,
                9.0 / 128.0,
            ],
        ],
    );
}

// Flank geometry and rank bonus after casualties. A: 3 models in a column (frontage 1),
// 1 attack, Skill 4, Power 3, Defense 3, Discipline 5, 1 wound → ranks 3, bonus 2.
// B: b1(1) on A's flank. 2d6, limit 1.
// No front → ranks 1..3 eligible → 3 dice at B (1/3 each): P(≥ 1 wound) = 1 − 8/27 = 19/27
// (A's score capped at 1). B: 1 die (1/4) + 1 flank → score 1 or 2.
//   A 1, B 1 (19/27·3/4 = 19/36): draw, B destroyed → B destroyed.
//   A 1, B 2 (19/27·1/4): A loses by 1, 2 models left → bonus 1, threshold 5+1−1 = 5 →
//     2d6 ≤ 5 in 10/36. Fails 26/36 → A flees with B destroyed → both out
//     19·26/3888 = 247/1944; passes → B destroyed 19·10/3888 = 95/1944.
//   A 0, B 1 (8/27·3/4): 3 models, bonus 2, threshold 6 → ≤ 6 in 15/36. Fails → A flees
//     8·3·21/3888 = 7/54; passes → limit 8·3·15/3888 = 5/54.
//   A 0, B 2 (8/27·1/4): 2 models, bonus 1, threshold 5+1−2 = 4 → ≤ 4 in 6/36. Fails →
//     A flees 8·30/3888 = 5/81; passes → limit 8·6/3888 = 1/81.
//   A flees 7/54 + 5/81 = 31/162; B destroyed 19/36 + 95/1944 = 1121/1944;
//   both out 247/1944; limit 5/54 + 1/81 = 17/162.
#[test]
fn engagement_flank_geometry_and_rank_bonus() {
    let a = unit(3, 1, 1, 4, 3, 3, 5, 1);
    let r = engagement(&a, &[(Facing::Flank, b1(1))], BreakDice::TwoD6, 1);
    assert_phases(
        &r,
        &[[
            31.0 / 162.0,
            0.0,
            0.0,
            1121.0 / 1944.0,
            247.0 / 1944.0,
            17.0 / 162.0,
        ]],
    );
}

// CHOICE (module docs): when the first listed flank unit is gone, the remaining flank
// unit is attacked as the first one. A: column of 2 (frontage 1), 1 attack, Skill 4,
// Power 3, Defense 3, Discipline 10, 1 wound; flanks B1 = b1(1) then B2 = b1(1); 1d6, limit 2.
// A never breaks: with 2 models bonus 1, with 1 model bonus 0, and the difference is at
// most 2 + 2 (bonuses) → threshold ≥ 7 > 6. B never tests: A's score is at
// most 1 (only one flank unit is ever attacked, 1 wound cap) and B's at least 1 (flank
// bonus), at least 2 while both flank units are in.
// Phase 1: B1 gets 2 dice (ranks 1, 2), B2 none. B1 dies 1 − 4/9 = 5/9. A takes j wounds
//   from 2 dice at 1/4: 9/16, 6/16, 1/16; j = 2 → A destroyed 1/16.
//   Phase 1: [0, 1/16, 0, 0, 0, 0].
// Phase 2 (over 576):
//   (j=0, B1 dead) 5/16: A (2 models) puts 2 dice into B2 → B2 dies 5/9; A cannot die
//     (1 die at it, 2 wounds left) → B destroyed 25/144 = 100.
//   (j=1, B1 dead) 5/24: 1 model, 1 die → B2 dies 1/3; A dies 1/4 → both out 5/288 = 10,
//     B destroyed 5/96 = 30, A destroyed 5/144 = 20.
//   (j=0, B1 alive) 1/4: as phase 1 → A destroyed 1/64 = 9.
//   (j=1, B1 alive) 1/6: A (1 model) dies if either die wounds, 7/16 → 7/96 = 42.
//   A destroyed 71, B destroyed 130, both out 10, limit 540 − 211 = 329
//   (= 80 + 60 + 135 + 54 directly). With the other reading B2 would get no dice: no
//   "B destroyed" at all.
#[test]
fn engagement_second_flank_takes_over() {
    let a = unit(2, 1, 1, 4, 3, 3, 10, 1);
    let b = [(Facing::Flank, b1(1)), (Facing::Flank, b1(1))];
    let r = engagement(&a, &b, BreakDice::D6, 2);
    let d = 576.0;
    assert_phases(
        &r,
        &[
            [0.0, 1.0 / 16.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 71.0 / d, 0.0, 130.0 / d, 10.0 / d, 329.0 / d],
        ],
    );
}

// Multi-wound models. A: 2 models × 2 wounds, frontage 2, 1 attack, Skill 4, Power 3,
// Defense 3, Discipline 10 (with 1d6 and a difference ≤ 3 it always passes). B: 1 model,
// 1 wound, 3 attacks (3 dice, 1/4 each on A). A's dice: 2 while 2 models are alive (a
// wounded model keeps fighting), 1 die once t_A ≥ 2. 1d6, limit 2.
// Phase 1: A kills B with ≥ 1 wound in 2 dice: 1 − 4/9 = 5/9 → B destroyed (A has R = 4 >
//   3 dice, so A survives). Else (4/9) A takes k ~ Bin(3, 1/4): 27/64, 27/64, 9/64, 1/64,
//   and never breaks.
// Phase 2 from t_A = k (probability 4/9·P(k)): B dies with 5/9 (k = 0, 1: 2 dice) or 1/3
//   (k = 2, 3: 1 die); A dies if B's j ≥ 4 − k: 0, 1/64, 10/64, 37/64 for k = 0..3.
//   both out = Σ P·Bdie·Adie, A destroyed = Σ P·(1−Bdie)·Adie, B destroyed = Σ P·Bdie·(1−Adie).
//   Over 27648:
//     k=0 (3/16): B destroyed 2880.
//     k=1 (3/16): both out 45, A destroyed 36, B destroyed 2835.
//     k=2 (1/16): both out 90, A destroyed 180, B destroyed 486.
//     k=3 (1/144): both out 37, A destroyed 74, B destroyed 27.
//   A destroyed 290, B destroyed 6228, both out 172; limit 12288 − 6690 = 5598
//   (= 2304 + 2268 + 972 + 54 computed directly).
#[test]
fn engagement_multi_wound() {
    let a = unit(2, 2, 1, 4, 3, 3, 10, 2);
    let b = unit(1, 1, 3, 3, 3, 3, 5, 1);
    let r = engagement(&a, &[(Facing::Front, b)], BreakDice::D6, 2);
    let d = 27648.0;
    assert_phases(
        &r,
        &[
            [0.0, 0.0, 0.0, 5.0 / 9.0, 0.0, 0.0],
            [0.0, 290.0 / d, 0.0, 6228.0 / d, 172.0 / d, 5598.0 / d],
        ],
    );
}

// Phase 1 of a 1-v-1 front engagement where nobody can be destroyed in one phase equals
// the one-phase counts: A flees = a_breaks, B flees = b_breaks, limit = the rest.
// A: 4 models frontage 2 → 4 dice, R 4; B: 3 models × 2 wounds in a column → 2 dice, R 6.
#[test]
fn engagement_phase_one_matches_one_phase() {
    let a = unit(4, 2, 1, 4, 4, 3, 4, 1);
    let b = unit(3, 1, 1, 3, 3, 4, 6, 2);
    for dice in [BreakDice::D6, BreakDice::TwoD6, BreakDice::ThreeD6] {
        let one = one_phase_binomial(&a, &b, dice);
        let den = one.denominator as f64;
        let r = engagement(&a, &[(Facing::Front, b)], dice, 1);
        let pa = one.a_breaks as f64 / den;
        let pb = one.b_breaks as f64 / den;
        assert_phases(&r, &[[pa, 0.0, pb, 0.0, 0.0, 1.0 - pa - pb]]);
    }
}

// ---------------------------------------------------------------------------------------
// Engagements: totals, and phase 1 against a literal enumeration
// ---------------------------------------------------------------------------------------

#[test]
fn engagement_probabilities_sum_to_one() {
    use Facing::*;
    let mut full = unit(6, 2, 2, 4, 4, 3, 6, 1);
    full.rank_rule = RankRule::FullRanks;
    let cases: Vec<(Unit, Vec<(Facing, Unit)>)> = vec![
        (a1(1), vec![(Front, b1(1))]),
        (
            unit(4, 2, 1, 4, 3, 3, 6, 2),
            vec![(Front, b1(2)), (Flank, b1(1))],
        ),
        (
            unit(6, 2, 1, 3, 4, 4, 7, 1),
            vec![
                (Flank, b1(2)),
                (Front, unit(3, 3, 1, 3, 3, 3, 6, 1)),
                (Rear, b1(1)),
                (Flank, b1(1)),
            ],
        ),
        (
            full,
            vec![(Flank, unit(2, 2, 1, 5, 5, 2, 4, 1)), (Flank, b1(3))],
        ),
        (
            unit(3, 1, 2, 5, 6, 2, 3, 3),
            vec![(Rear, b1(1)), (Front, unit(2, 1, 2, 4, 4, 4, 8, 2))],
        ),
    ];
    for (a, bs) in &cases {
        for dice in [BreakDice::D6, BreakDice::TwoD6, BreakDice::ThreeD6] {
            for limit in [1, 3, 6] {
                let r = engagement(a, bs, dice, limit);
                assert_eq!(r.len(), limit as usize);
                assert_close(total_probability(&r), 1.0, "total");
                for (p, row) in r.iter().enumerate() {
                    assert!(row.iter().all(|&x| x >= 0.0));
                    if p + 1 < limit as usize {
                        assert_eq!(row[ROUND_LIMIT], 0.0, "round limit before the last phase");
                    }
                }
            }
        }
    }
}

/// Phase 1 (limit 1) of an engagement of fresh units by enumerating every attack die
/// literally (a hit die and a save die each). Each unit that tests rolls its own k break
/// dice: its passes are counted by a literal loop over its 6^k rolls, and every
/// pass/fail pattern of the testers is weighted by the product of those counts; a unit
/// that does not test stands for 6^k unrolled outcomes. Returns probabilities in the
/// order of `engagement`.
fn phase_one_literal(a: &Unit, bs: &[(Facing, Unit)], dice: BreakDice) -> [f64; 6] {
    let facings: Vec<Facing> = bs.iter().map(|(f, _)| *f).collect();
    let a_dice = a_attack_dice(a, a.models, &facings);
    // (hit target, save target, slot): slot 0 = a wound on A, slot 1 + i = a wound on B unit i.
    let mut attack: Vec<(u32, u32, usize)> = Vec::new();
    for (_, u) in bs {
        for _ in 0..front_dice(u, u.models) {
            attack.push((
                hit_target(u.skill, a.skill),
                save_target(u.power, a.defense),
                0,
            ));
        }
    }
    for (i, (_, u)) in bs.iter().enumerate() {
        for _ in 0..a_dice[i] {
            attack.push((
                hit_target(a.skill, u.skill),
                save_target(a.power, u.defense),
                1 + i,
            ));
        }
    }
    let k = break_dice_count(dice);
    let rolls = 6u128.pow(k);
    // Literal count of k-dice rolls with total <= thr, for thr in -40..=40 (index thr + 40).
    let pass_table: Vec<u128> = (-40i64..=40)
        .map(|thr| {
            let mut n = 0;
            for idx in 0..rolls {
                let (mut x, mut sum) = (idx, 0i64);
                for _ in 0..k {
                    sum += (x % 6) as i64 + 1;
                    x /= 6;
                }
                if sum <= thr {
                    n += 1;
                }
            }
            n
        })
        .collect();
    let passes = |thr: i64| pass_table[(thr.clamp(-40, 40) + 40) as usize];
    assert!(bs.len() <= 4);
    let bonus = facings.iter().filter(|&&f| f != Facing::Front).count() as u32;
    let mut counts = [0u128; 6];
    let mut total = 0u128;
    let mut d = vec![1u32; 2 * attack.len()];
    let mut w = vec![0u32; 1 + bs.len()];
    let mut b_left = vec![0u32; bs.len()];
    loop {
        w.fill(0);
        for (j, &(h, s, slot)) in attack.iter().enumerate() {
            if d[2 * j] >= h && d[2 * j + 1] < s {
                w[slot] += 1;
            }
        }
        let wa = w[0].min(a.models * a.wounds);
        let a_left = a.models - wa / a.wounds;
        let mut score_a = 0;
        for (i, (_, u)) in bs.iter().enumerate() {
            let c = w[1 + i].min(u.models * u.wounds);
            score_a += c;
            b_left[i] = u.models - c / u.wounds;
        }
        let score_b = wa + bonus;
        // Testers: (unit: 0 = A, 1 + i = B unit i; passing rolls out of 6^k).
        let mut testers = [(0usize, 0u128); 5];
        let mut n_testers = 0;
        if score_b > score_a && a_left > 0 {
            testers[0] = (0, passes(break_threshold(a, a_left, score_b - score_a)));
            n_testers = 1;
        }
        if score_a > score_b {
            for (i, (_, u)) in bs.iter().enumerate() {
                if b_left[i] > 0 {
                    let pass = passes(break_threshold(u, b_left[i], score_a - score_b));
                    testers[n_testers] = (1 + i, pass);
                    n_testers += 1;
                }
            }
        }
        let testers = &testers[..n_testers];
        let untested = rolls.pow((1 + bs.len() - testers.len()) as u32);
        for mask in 0..(1u32 << testers.len()) {
            let mut fled = [false; 5];
            let mut weight = untested;
            for (t, &(who, pass)) in testers.iter().enumerate() {
                if mask & (1 << t) != 0 {
                    fled[who] = true;
                    weight *= rolls - pass;
                } else {
                    weight *= pass;
                }
            }
            let a_gone = a_left == 0 || fled[0];
            let b_gone = (0..bs.len()).all(|i| b_left[i] == 0 || fled[1 + i]);
            let class = if a_gone && b_gone {
                BOTH_OUT
            } else if a_left == 0 {
                A_DESTROYED
            } else if fled[0] {
                A_FLEES
            } else if b_gone && (0..bs.len()).all(|i| b_left[i] == 0) {
                B_DESTROYED
            } else if b_gone {
                B_FLEES
            } else {
                ROUND_LIMIT
            };
            counts[class] += weight;
            total += weight;
        }
        let mut i = 0;
        while i < d.len() && d[i] == 6 {
            d[i] = 1;
            i += 1;
        }
        if i == d.len() {
            break;
        }
        d[i] += 1;
    }
    assert_eq!(
        total,
        36u128.pow(attack.len() as u32) * rolls.pow((1 + bs.len()) as u32)
    );
    let mut out = [0.0; 6];
    for c in 0..6 {
        out[c] = counts[c] as f64 / total as f64;
    }
    out
}

#[test]
fn engagement_phase_one_equals_literal_enumeration() {
    use Facing::*;
    type Case = (Unit, Vec<(Facing, Unit)>, BreakDice);
    let cases: Vec<Case> = vec![
        // 3 dice: front + flank against 1 model.
        (
            a1(2),
            vec![(Front, b1(2)), (Flank, b1(1))],
            BreakDice::TwoD6,
        ),
        // 4 dice: A (2 wide) fights the front with 2 dice; two B units can both test.
        (
            unit(2, 2, 1, 4, 3, 3, 4, 1),
            vec![(Front, unit(1, 1, 1, 3, 3, 3, 4, 3)), (Flank, b1(2))],
            BreakDice::D6,
        ),
        // 4 dice: column of 2 against two flanks (second flank gets nothing).
        (
            unit(2, 1, 1, 4, 4, 3, 6, 1),
            vec![(Flank, b1(1)), (Flank, b1(2))],
            BreakDice::TwoD6,
        ),
        // 4 dice: 2 wide, two flanks (one die from each end of rank 1).
        (
            unit(2, 2, 1, 5, 5, 3, 7, 1),
            vec![(Flank, b1(2)), (Flank, b1(1))],
            BreakDice::D6,
        ),
        // 4 dice: one model (a rank of 1) against two flanks and a rear unit: the first
        // flank gets its die, the second none, the rear none; B has +3.
        (
            unit(1, 1, 1, 5, 5, 3, 7, 2),
            vec![(Flank, b1(2)), (Rear, b1(1)), (Flank, b1(1))],
            BreakDice::TwoD6,
        ),
        // 4 dice: multi-wound A, front and rear; both B units can test; 3d6.
        (
            unit(1, 1, 2, 4, 2, 5, 9, 2),
            vec![(Front, b1(2)), (Rear, b1(1))],
            BreakDice::ThreeD6,
        ),
        // 2 dice: A (2 wide) engaged only at its rear by a 2-wide unit: A rolls nothing.
        (
            unit(2, 2, 2, 4, 4, 4, 5, 1),
            vec![(Rear, unit(2, 2, 1, 3, 3, 3, 5, 1))],
            BreakDice::D6,
        ),
    ];
    for (a, bs, dice) in &cases {
        let want = phase_one_literal(a, bs, *dice);
        let got = engagement(a, bs, *dice, 1);
        assert_phases(&got, &[want]);
    }
}
