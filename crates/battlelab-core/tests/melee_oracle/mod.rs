#![allow(dead_code)]
//! Independent oracle for miniatures engagements (docs/systems/melee.md), written from
//! the rules text and the readings there only — std only, no crate code.
//!
//! Three independent computations:
//! - [`one_phase_brute_force`]: one combat phase of a fresh 1-v-1 front engagement by a
//!   literal odometer over every die (a hit die and a save die for every attack die, and
//!   every break die, all always enumerated). Every leaf has weight 1.
//! - [`one_phase_binomial`]: the same counts from binomial coefficients in `u128`
//!   (checked arithmetic; panics on overflow).
//! - [`engagement`]: a whole engagement, exact in `f64`, by forward propagation of a
//!   probability distribution over states, phase by phase (no sampling). Per-die wound
//!   distributions are built by convolution, not by the binomial formula.
//!
//! Readings used (docs/systems/melee.md, taken literally):
//! - Attack roll: attacker Skill > target Skill → 3+, else 4+ ([`hit_target`]).
//!   Damage save by the target: Power > Defense → 5+, 6+ if Power − Defense > 2; equal → 4+;
//!   Power < Defense → 3+, 2+ if Defense − Power > 2 ([`save_target`]). A wound is a hit
//!   whose save die is below the save target. Per attack die: P(wound) = (7−h)/6 · (s−1)/6.
//! - State of a unit = wounds taken `t`. Models alive `m = models − floor(t / wounds)`
//!   (a wounded model keeps fighting with full dice); wounds left `R = models·wounds − t`.
//! - Formation: front `f = min(m, frontage)`, second `s = min(max(m − frontage, 0), frontage)`,
//!   ranks `r = ceil(m / frontage)`; rank `j` (1-based) holds
//!   `min(frontage, m − (j−1)·frontage)` models.
//! - Rank bonus: `ranks` = `min(r − 1, cap)`; `full-ranks` = `min(max(floor(m/frontage) − 1, 0), cap)`;
//!   `none` = 0. Always computed from the unit's models after this phase's casualties.
//! - Every B unit (whatever its facing on A) attacks A with `f·attacks + s` dice.
//! - Unit A: front B unit present → `f·attacks + s` dice at it. Flanks: eligible ranks are
//!   3..=r if a front B unit is present (at the start of the phase), else 1..=r. The first
//!   flank unit gets `attacks` dice per eligible rank; the second flank unit gets `attacks`
//!   dice per eligible rank holding at least 2 models. Rear units get nothing.
//! - CHOICE: "first"/"second" flank unit means among the flank units still in the
//!   engagement, in listed order. If the first listed flank unit has fled or been
//!   destroyed, the remaining flank unit is attacked as the first one (one end model per
//!   eligible rank; a rank of one model has an end on both sides).
//! - Simultaneous: all dice come from formations at the start of the phase.
//! - Wounds on a unit are capped at its `R` (at the start of the phase). For A the cap is
//!   applied to the total over all B units. Casualties are then removed.
//! - Score A = Σ capped wounds on B units. Score B = capped wounds on A + 1 per B unit on
//!   A's flank + 1 per B unit on A's rear, counting units present at the start of the
//!   phase (a flank unit destroyed this phase still scores its bonus). A never gets a
//!   flank/rear bonus.
//! - Higher score wins; equal → draw, nobody tests. Every unit of the losing side that
//!   still has models after casualties tests: pass iff (sum of the break dice)
//!   ≤ Discipline + Rank Bonus (after casualties) − score difference. No automatic pass or
//!   fail on any roll; a threshold below the minimum roll always fails. A failed unit
//!   flees and leaves the engagement (no more attacks, no more flank/rear bonus).
//! - CHOICE: when several B units test, each rolls its own independent break dice.
//!   (In the one-phase 1-v-1 functions only one side can lose, so exactly one set of
//!   break dice is enumerated and it is always enumerated, even on a draw.)
//! - End after a phase: A gone (destroyed or fled) and every B unit gone → both out;
//!   else A destroyed → A destroyed; else A fled → A flees; else every B unit gone and all
//!   of them destroyed (in this or earlier phases) → B destroyed; else every B unit gone
//!   with at least one fled (ever) → B flees; else if this phase is the round limit →
//!   round limit; else continue.
//! - The round-limit result is only reported in the last phase, and only for the
//!   probability that no other result happened in that phase.

use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug)]
pub enum RankRule {
    Ranks,
    FullRanks,
    None,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Facing {
    Front,
    Flank,
    Rear,
}

#[derive(Clone, Copy, Debug)]
pub enum BreakDice {
    D6,
    TwoD6,
    ThreeD6,
}

#[derive(Clone, Copy, Debug)]
pub struct Unit {
    pub models: u32,
    pub frontage: u32,
    pub attacks: u32,
    pub skill: u32,
    pub power: u32,
    pub defense: u32,
    pub discipline: u32,
    pub wounds: u32,
    pub rank_rule: RankRule,
    pub rank_cap: u32,
}

/// Result index order of [`engagement`].
pub const A_FLEES: usize = 0;
pub const A_DESTROYED: usize = 1;
pub const B_FLEES: usize = 2;
pub const B_DESTROYED: usize = 3;
pub const BOTH_OUT: usize = 4;
pub const ROUND_LIMIT: usize = 5;

// ---------------------------------------------------------------------------------------
// Basic rules
// ---------------------------------------------------------------------------------------

/// d6 target (2..=6) to hit: attacker Skill > target Skill → 3+, otherwise 4+.
pub fn hit_target(attacker_skill: u32, target_skill: u32) -> u32 {
    if attacker_skill > target_skill {
        3
    } else {
        4
    }
}

/// d6 target (2..=6) for the target's damage save.
pub fn save_target(attacker_power: u32, target_defense: u32) -> u32 {
    if attacker_power > target_defense {
        if attacker_power - target_defense > 2 {
            6
        } else {
            5
        }
    } else if attacker_power == target_defense {
        4
    } else if target_defense - attacker_power > 2 {
        2
    } else {
        3
    }
}

/// Number of break dice.
pub fn break_dice_count(dice: BreakDice) -> u32 {
    match dice {
        BreakDice::D6 => 1,
        BreakDice::TwoD6 => 2,
        BreakDice::ThreeD6 => 3,
    }
}

/// Panics on a profile outside docs/systems/melee.md "Units".
pub fn validate_unit(u: &Unit) {
    assert!((1..=500).contains(&u.models), "models out of range: {u:?}");
    assert!(
        u.frontage >= 1 && u.frontage <= u.models,
        "frontage out of range: {u:?}"
    );
    for (name, v) in [
        ("attacks", u.attacks),
        ("skill", u.skill),
        ("power", u.power),
        ("defense", u.defense),
        ("discipline", u.discipline),
        ("wounds", u.wounds),
    ] {
        assert!((1..=10).contains(&v), "{name} out of range: {u:?}");
    }
    assert!(u.rank_cap <= 10, "rank_cap out of range: {u:?}");
}

/// Models alive after `t` wounds taken: `models − floor(t / wounds)` (0 if t ≥ models·wounds).
pub fn models_alive(u: &Unit, t: u32) -> u32 {
    u.models.saturating_sub(t / u.wounds)
}

/// Wounds left after `t` wounds taken.
pub fn wounds_left(u: &Unit, t: u32) -> u32 {
    (u.models * u.wounds).saturating_sub(t)
}

/// Front rank size with `m` models.
pub fn front_rank(u: &Unit, m: u32) -> u32 {
    m.min(u.frontage)
}

/// Second rank size with `m` models.
pub fn second_rank(u: &Unit, m: u32) -> u32 {
    m.saturating_sub(u.frontage).min(u.frontage)
}

/// Number of ranks with `m` models (0 for m = 0).
pub fn ranks(u: &Unit, m: u32) -> u32 {
    m.div_ceil(u.frontage)
}

/// Sizes of ranks 1..=r with `m` models (removed from the back).
pub fn rank_sizes(u: &Unit, m: u32) -> Vec<u32> {
    (0..ranks(u, m))
        .map(|j| u.frontage.min(m - j * u.frontage))
        .collect()
}

/// Rank bonus with `m` models.
pub fn rank_bonus(u: &Unit, m: u32) -> u32 {
    match u.rank_rule {
        RankRule::Ranks => ranks(u, m).saturating_sub(1).min(u.rank_cap),
        RankRule::FullRanks => (m / u.frontage).saturating_sub(1).min(u.rank_cap),
        RankRule::None => 0,
    }
}

/// Dice a unit with `m` models rolls to its front: `f·attacks + s`.
pub fn front_dice(u: &Unit, m: u32) -> u32 {
    front_rank(u, m) * u.attacks + second_rank(u, m)
}

/// Panics unless front ≤ 1, flank ≤ 2, rear ≤ 1.
pub fn validate_facings(facings: &[Facing]) {
    let count = |f: Facing| facings.iter().filter(|&&x| x == f).count();
    assert!(count(Facing::Front) <= 1, "more than one front unit");
    assert!(count(Facing::Flank) <= 2, "more than two flank units");
    assert!(count(Facing::Rear) <= 1, "more than one rear unit");
}

/// Dice unit A (with `m` models) rolls at each engaged B unit, given the facings of the B
/// units currently in the engagement, in listed order. Same order as `facings`.
pub fn a_attack_dice(a: &Unit, m: u32, facings: &[Facing]) -> Vec<u32> {
    validate_facings(facings);
    let front_engaged = facings.contains(&Facing::Front);
    let sizes = rank_sizes(a, m);
    // Ranks not already fighting: 3..=r when the front is engaged (index 2..), else all.
    let first_rank_index = if front_engaged { 2 } else { 0 };
    let eligible: Vec<u32> = sizes.iter().skip(first_rank_index).copied().collect();
    let first_flank = eligible.len() as u32 * a.attacks;
    let second_flank = eligible.iter().filter(|&&n| n >= 2).count() as u32 * a.attacks;
    let mut flanks_seen = 0;
    facings
        .iter()
        .map(|f| match f {
            Facing::Front => front_dice(a, m),
            Facing::Flank => {
                flanks_seen += 1;
                if flanks_seen == 1 {
                    first_flank
                } else {
                    second_flank
                }
            }
            Facing::Rear => 0,
        })
        .collect()
}

/// Counts of each break-dice total (index = total), by convolution. Sums to 6^k.
pub fn break_total_counts(dice: BreakDice) -> Vec<u128> {
    let mut counts = vec![1u128];
    for _ in 0..break_dice_count(dice) {
        let mut next = vec![0u128; counts.len() + 6];
        for (s, &c) in counts.iter().enumerate() {
            for face in 1..=6 {
                next[s + face] += c;
            }
        }
        counts = next;
    }
    counts
}

/// Number of break-dice outcomes with total ≤ `threshold` (passes).
pub fn break_pass_count(dice: BreakDice, threshold: i64) -> u128 {
    break_total_counts(dice)
        .iter()
        .enumerate()
        .filter(|(s, _)| (*s as i64) <= threshold)
        .map(|(_, &c)| c)
        .sum()
}

/// Probability of passing a break test with this threshold.
pub fn break_pass_prob(dice: BreakDice, threshold: i64) -> f64 {
    break_pass_count(dice, threshold) as f64 / 6f64.powi(break_dice_count(dice) as i32)
}

/// Break-test threshold: Discipline + Rank Bonus (with `m_after` models) − score difference.
pub fn break_threshold(u: &Unit, m_after: u32, score_difference: u32) -> i64 {
    u.discipline as i64 + rank_bonus(u, m_after) as i64 - score_difference as i64
}

// ---------------------------------------------------------------------------------------
// One phase, 1-v-1 front, fresh units
// ---------------------------------------------------------------------------------------

/// One combat phase of a fresh 1-v-1 front engagement. Counts over `denominator`
/// = 36^(attack dice of both sides) · 6^(break dice).
#[derive(Clone, Debug, PartialEq)]
pub struct OnePhase {
    pub denominator: u128,
    /// Index k: outcomes in which A scored exactly k hits (length = A's dice + 1).
    pub hits_by_a: Vec<u128>,
    /// Index k: outcomes in which exactly k of A's hits were not saved (before any cap).
    pub wounds_by_a: Vec<u128>,
    pub hits_by_b: Vec<u128>,
    pub wounds_by_b: Vec<u128>,
    pub a_wins: u128,
    pub draw: u128,
    pub b_wins: u128,
    /// A lost the phase, still has models, and failed its break test.
    pub a_breaks: u128,
    /// B lost the phase, still has models, and failed its break test.
    pub b_breaks: u128,
}

fn checked_mul(x: u128, y: u128) -> u128 {
    x.checked_mul(y)
        .expect("melee oracle: u128 overflow (too many dice)")
}

fn checked_pow(x: u128, e: u32) -> u128 {
    x.checked_pow(e)
        .expect("melee oracle: u128 overflow (too many dice)")
}

/// Advance an odometer of d6 faces (each 1..=6). Returns false after the last combination.
fn advance(dice: &mut [u32]) -> bool {
    for d in dice.iter_mut() {
        if *d < 6 {
            *d += 1;
            return true;
        }
        *d = 1;
    }
    false
}

/// Brute force over every die: for each attack die a hit die and a save die, then every
/// break die. Only for tiny cases (attack dice of both sides ≤ 5; 36^n·6^k leaves).
pub fn one_phase_brute_force(a: &Unit, b: &Unit, dice: BreakDice) -> OnePhase {
    validate_unit(a);
    validate_unit(b);
    let na = front_dice(a, a.models) as usize;
    let nb = front_dice(b, b.models) as usize;
    let n = na + nb;
    assert!(
        n <= 5,
        "brute force is for tiny cases only ({n} attack dice)"
    );
    let k = break_dice_count(dice) as usize;

    let hit_by_a = hit_target(a.skill, b.skill);
    let save_vs_a = save_target(a.power, b.defense); // B saves against A's hits
    let hit_by_b = hit_target(b.skill, a.skill);
    let save_vs_b = save_target(b.power, a.defense); // A saves against B's hits
    let r_a = wounds_left(a, 0);
    let r_b = wounds_left(b, 0);

    let mut out = OnePhase {
        denominator: 0,
        hits_by_a: vec![0; na + 1],
        wounds_by_a: vec![0; na + 1],
        hits_by_b: vec![0; nb + 1],
        wounds_by_b: vec![0; nb + 1],
        a_wins: 0,
        draw: 0,
        b_wins: 0,
        a_breaks: 0,
        b_breaks: 0,
    };

    // attack[2i] = hit die of attack die i, attack[2i + 1] = its save die.
    // Attack dice 0..na are A's, na..n are B's.
    let mut attack = vec![1u32; 2 * n];
    loop {
        let (mut ha, mut wa, mut hb, mut wb) = (0usize, 0u32, 0usize, 0u32);
        for i in 0..n {
            let (hit_die, save_die) = (attack[2 * i], attack[2 * i + 1]);
            if i < na {
                if hit_die >= hit_by_a {
                    ha += 1;
                    if save_die < save_vs_a {
                        wa += 1;
                    }
                }
            } else if hit_die >= hit_by_b {
                hb += 1;
                if save_die < save_vs_b {
                    wb += 1;
                }
            }
        }
        let score_a = wa.min(r_b);
        let score_b = wb.min(r_a);
        let m_a = models_alive(a, score_b);
        let m_b = models_alive(b, score_a);

        let mut brk = vec![1u32; k];
        loop {
            let roll: i64 = brk.iter().map(|&d| d as i64).sum();
            out.denominator += 1;
            out.hits_by_a[ha] += 1;
            out.wounds_by_a[wa as usize] += 1;
            out.hits_by_b[hb] += 1;
            out.wounds_by_b[wb as usize] += 1;
            if score_a > score_b {
                out.a_wins += 1;
                if m_b > 0 && roll > break_threshold(b, m_b, score_a - score_b) {
                    out.b_breaks += 1;
                }
            } else if score_b > score_a {
                out.b_wins += 1;
                if m_a > 0 && roll > break_threshold(a, m_a, score_b - score_a) {
                    out.a_breaks += 1;
                }
            } else {
                out.draw += 1;
            }
            if !advance(&mut brk) {
                break;
            }
        }
        if !advance(&mut attack) {
            break;
        }
    }
    out
}

/// Binomial coefficient C(n, k) by Pascal's triangle.
pub fn binomial(n: u32, k: u32) -> u128 {
    if k > n {
        return 0;
    }
    let mut row = vec![1u128];
    for _ in 0..n {
        let mut next = vec![1u128; row.len() + 1];
        for j in 1..row.len() {
            next[j] = row[j - 1] + row[j];
        }
        row = next;
    }
    row[k as usize]
}

/// Counts (over 36^n) of exactly j successes among n dice, each die succeeding in
/// `per_die` of its 36 (hit die, save die) outcomes.
fn success_counts(n: u32, per_die: u128) -> Vec<u128> {
    (0..=n)
        .map(|j| {
            checked_mul(
                binomial(n, j),
                checked_mul(checked_pow(per_die, j), checked_pow(36 - per_die, n - j)),
            )
        })
        .collect()
}

/// Same counts as [`one_phase_brute_force`] from binomial coefficients. Panics if
/// 36^(attack dice)·6^(break dice) overflows u128 (e.g. 12 + 12 dice fit with 1d6).
pub fn one_phase_binomial(a: &Unit, b: &Unit, dice: BreakDice) -> OnePhase {
    validate_unit(a);
    validate_unit(b);
    let na = front_dice(a, a.models);
    let nb = front_dice(b, b.models);
    let k = break_dice_count(dice);
    let break_leaves = checked_pow(6, k);
    let denominator = checked_mul(checked_pow(36, na + nb), break_leaves);

    let hit_by_a = hit_target(a.skill, b.skill) as u128;
    let save_vs_a = save_target(a.power, b.defense) as u128;
    let hit_by_b = hit_target(b.skill, a.skill) as u128;
    let save_vs_b = save_target(b.power, a.defense) as u128;
    // Of 36 (hit, save) pairs: hits = (7 − h)·6 (any save die); wounds = (7 − h)·(s − 1).
    let hits_a = success_counts(na, (7 - hit_by_a) * 6);
    let wounds_a = success_counts(na, (7 - hit_by_a) * (save_vs_a - 1));
    let hits_b = success_counts(nb, (7 - hit_by_b) * 6);
    let wounds_b = success_counts(nb, (7 - hit_by_b) * (save_vs_b - 1));

    // Each side's marginal is multiplied by every outcome of the other dice.
    let other_for_a = checked_mul(checked_pow(36, nb), break_leaves);
    let other_for_b = checked_mul(checked_pow(36, na), break_leaves);
    let scale = |v: &[u128], f: u128| v.iter().map(|&c| checked_mul(c, f)).collect::<Vec<_>>();

    let mut out = OnePhase {
        denominator,
        hits_by_a: scale(&hits_a, other_for_a),
        wounds_by_a: scale(&wounds_a, other_for_a),
        hits_by_b: scale(&hits_b, other_for_b),
        wounds_by_b: scale(&wounds_b, other_for_b),
        a_wins: 0,
        draw: 0,
        b_wins: 0,
        a_breaks: 0,
        b_breaks: 0,
    };

    let r_a = wounds_left(a, 0);
    let r_b = wounds_left(b, 0);
    for (wa, &ca) in wounds_a.iter().enumerate() {
        for (wb, &cb) in wounds_b.iter().enumerate() {
            let weight = checked_mul(ca, cb); // over 36^(na + nb)
            let score_a = (wa as u32).min(r_b);
            let score_b = (wb as u32).min(r_a);
            let m_a = models_alive(a, score_b);
            let m_b = models_alive(b, score_a);
            if score_a > score_b {
                out.a_wins += checked_mul(weight, break_leaves);
                if m_b > 0 {
                    let pass = break_pass_count(dice, break_threshold(b, m_b, score_a - score_b));
                    out.b_breaks += checked_mul(weight, break_leaves - pass);
                }
            } else if score_b > score_a {
                out.b_wins += checked_mul(weight, break_leaves);
                if m_a > 0 {
                    let pass = break_pass_count(dice, break_threshold(a, m_a, score_b - score_a));
                    out.a_breaks += checked_mul(weight, break_leaves - pass);
                }
            } else {
                out.draw += checked_mul(weight, break_leaves);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Whole engagement, exact in f64
// ---------------------------------------------------------------------------------------

/// Status of one B unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum BStatus {
    /// Still in the engagement with this many wounds taken (and at least one model).
    In(u32),
    Fled,
    Destroyed,
}

/// Add `n` dice, each wounding with probability `p`, to a distribution of wound counts.
fn add_dice(dist: &[f64], n: u32, p: f64) -> Vec<f64> {
    let mut d = dist.to_vec();
    for _ in 0..n {
        let mut next = vec![0.0; d.len() + 1];
        for (w, &q) in d.iter().enumerate() {
            next[w] += q * (1.0 - p);
            next[w + 1] += q * p;
        }
        d = next;
    }
    d
}

/// Probability that one attack die of `att` wounds `def`.
pub fn wound_prob(att: &Unit, def: &Unit) -> f64 {
    let h = hit_target(att.skill, def.skill) as f64;
    let s = save_target(att.power, def.defense) as f64;
    (7.0 - h) / 6.0 * (s - 1.0) / 6.0
}

/// Whole engagement, exact in f64. `b_units` are (facing, unit) in listed order.
/// Returns, for phases 1..=round_limit, the probability that the engagement ends in that
/// phase with each result: [a_flees, a_destroyed, b_flees, b_destroyed, both_out,
/// round_limit] (round_limit only in the last phase).
pub fn engagement(
    a: &Unit,
    b_units: &[(Facing, Unit)],
    dice: BreakDice,
    round_limit: u32,
) -> Vec<[f64; 6]> {
    validate_unit(a);
    assert!(!b_units.is_empty(), "side B needs at least one unit");
    for (_, u) in b_units {
        validate_unit(u);
    }
    validate_facings(&b_units.iter().map(|(f, _)| *f).collect::<Vec<_>>());
    assert!((1..=50).contains(&round_limit), "round limit out of range");

    let mut results = vec![[0.0f64; 6]; round_limit as usize];
    // State: (wounds taken by A, status of each B unit). A is always in (alive, not fled).
    let mut states: BTreeMap<(u32, Vec<BStatus>), f64> = BTreeMap::new();
    states.insert((0, vec![BStatus::In(0); b_units.len()]), 1.0);

    for phase in 1..=round_limit {
        let last = phase == round_limit;
        let mut next: BTreeMap<(u32, Vec<BStatus>), f64> = BTreeMap::new();
        for ((t_a, status), p_state) in states {
            let m_a = models_alive(a, t_a);
            let r_a = wounds_left(a, t_a);
            debug_assert!(m_a > 0);

            // B units in the engagement at the start of the phase.
            let present: Vec<usize> = (0..b_units.len())
                .filter(|&i| matches!(status[i], BStatus::In(_)))
                .collect();
            let t_b = |i: usize| match status[i] {
                BStatus::In(t) => t,
                _ => unreachable!(),
            };
            let facings: Vec<Facing> = present.iter().map(|&i| b_units[i].0).collect();
            let a_dice = a_attack_dice(a, m_a, &facings);
            let bonus = facings
                .iter()
                .filter(|&&f| f == Facing::Flank || f == Facing::Rear)
                .count() as u32;

            // Distribution of wounds caused on A (uncapped), all B units together.
            let mut on_a = vec![1.0];
            for &i in &present {
                let u = &b_units[i].1;
                on_a = add_dice(
                    &on_a,
                    front_dice(u, models_alive(u, t_b(i))),
                    wound_prob(u, a),
                );
            }
            // Joint distribution of wounds caused on each present B unit (uncapped).
            let mut on_b: Vec<(f64, Vec<u32>)> = vec![(1.0, vec![])];
            for (j, &i) in present.iter().enumerate() {
                let d = add_dice(&[1.0], a_dice[j], wound_prob(a, &b_units[i].1));
                let mut grown = Vec::new();
                for (q, ws) in &on_b {
                    for (w, &pw) in d.iter().enumerate() {
                        if pw > 0.0 {
                            let mut ws2 = ws.clone();
                            ws2.push(w as u32);
                            grown.push((q * pw, ws2));
                        }
                    }
                }
                on_b = grown;
            }

            for (wa, &p_wa) in on_a.iter().enumerate() {
                if p_wa == 0.0 {
                    continue;
                }
                for (p_wb, wbs) in &on_b {
                    let p = p_state * p_wa * p_wb;
                    if p == 0.0 {
                        continue;
                    }
                    // Capped wounds, casualties, scores.
                    let c_a = (wa as u32).min(r_a);
                    let t_a2 = t_a + c_a;
                    let m_a2 = models_alive(a, t_a2);
                    let mut score_a = 0;
                    let mut status2 = status.clone();
                    for (j, &i) in present.iter().enumerate() {
                        let u = &b_units[i].1;
                        let c = wbs[j].min(wounds_left(u, t_b(i)));
                        score_a += c;
                        let t2 = t_b(i) + c;
                        status2[i] = if models_alive(u, t2) == 0 {
                            BStatus::Destroyed
                        } else {
                            BStatus::In(t2)
                        };
                    }
                    let score_b = c_a + bonus;

                    // Break tests: a list of (probability, a_fled, B statuses).
                    let mut branches: Vec<(f64, bool, Vec<BStatus>)> = Vec::new();
                    if score_b > score_a && m_a2 > 0 {
                        let q = break_pass_prob(dice, break_threshold(a, m_a2, score_b - score_a));
                        branches.push((p * q, false, status2.clone()));
                        branches.push((p * (1.0 - q), true, status2));
                    } else if score_a > score_b {
                        let mut bs: Vec<(f64, Vec<BStatus>)> = vec![(p, status2)];
                        for &i in &present {
                            let u = &b_units[i].1;
                            let mut grown = Vec::new();
                            for (q0, st) in bs {
                                if let BStatus::In(t2) = st[i] {
                                    let m2 = models_alive(u, t2);
                                    let q = break_pass_prob(
                                        dice,
                                        break_threshold(u, m2, score_a - score_b),
                                    );
                                    let mut fled = st.clone();
                                    fled[i] = BStatus::Fled;
                                    grown.push((q0 * q, st));
                                    grown.push((q0 * (1.0 - q), fled));
                                } else {
                                    grown.push((q0, st));
                                }
                            }
                            bs = grown;
                        }
                        branches.extend(bs.into_iter().map(|(q, st)| (q, false, st)));
                    } else {
                        branches.push((p, false, status2));
                    }

                    for (q, a_fled, st) in branches {
                        if q == 0.0 {
                            continue;
                        }
                        let a_destroyed = m_a2 == 0;
                        let a_gone = a_destroyed || a_fled;
                        let b_gone = st.iter().all(|s| !matches!(s, BStatus::In(_)));
                        let all_destroyed = st.iter().all(|s| *s == BStatus::Destroyed);
                        let result = if a_gone && b_gone {
                            Some(BOTH_OUT)
                        } else if a_destroyed {
                            Some(A_DESTROYED)
                        } else if a_fled {
                            Some(A_FLEES)
                        } else if b_gone && all_destroyed {
                            Some(B_DESTROYED)
                        } else if b_gone {
                            Some(B_FLEES)
                        } else if last {
                            Some(ROUND_LIMIT)
                        } else {
                            None
                        };
                        match result {
                            Some(r) => results[(phase - 1) as usize][r] += q,
                            None => *next.entry((t_a2, st)).or_insert(0.0) += q,
                        }
                    }
                }
            }
        }
        states = next;
    }
    results
}

/// Sum of all entries of an [`engagement`] result (should be 1).
pub fn total_probability(r: &[[f64; 6]]) -> f64 {
    r.iter().flat_map(|x| x.iter()).sum()
}
