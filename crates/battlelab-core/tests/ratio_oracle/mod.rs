#![allow(dead_code)]
//! Independent brute-force oracle for ratio battles (docs/systems/ratio.md), written from the
//! rules text only. It enumerates every combination of dice — every line die and every
//! reserve die — and plays the battle out leaf by leaf. No state merging, no memoisation:
//! each leaf has weight 1 and the denominator is 6^(line dice + reserves).
//!
//! Readings used (see docs/systems/ratio.md):
//! - A line unit scores d6 + its modifier; a combat's side total is the sum over its
//!   units (a double adds both).
//! - A committed reserve scores d6 − 1 + its own modifier, added to its side's total in
//!   the combat being resolved. The k-th committed reserve (in `reserves` order) always
//!   uses the k-th reserve die of the leaf, whatever combat it goes into.
//! - Policies: "none" never commits; "rescue" commits while that combat is lost or even
//!   (totals compared after the floor); "press" commits while the combat is not yet a
//!   rout of the enemy. Both stop when reserves run out.
//! - Floor: `min_score = Some(m)` turns each side's total t into max(t, m) before
//!   comparing. A lower total ≤ 0 is routed by any higher total (this only happens
//!   without a floor, or with a floor ≤ 0).
//! - hi < 2·lo repulsed; 2·lo ≤ hi < 3·lo beaten; hi ≥ 3·lo routed; equal: no effect.
//! - Every unit on the losing side of a combat (line units and committed reserves) takes
//!   that state. Casualty points 3/2/1; higher total loses the battle; equal is a draw.
//! - Army result from the losing side, N = its line units + its committed reserves:
//!   2·routed > N disperses; else routed > 0 or 2·beaten > N retreats; else beaten > 0
//!   retires; else holds.

/// One battle as the oracle sees it. Units are given by their modifier (added to each die they roll).
pub struct OracleBattle {
    pub a_mods: Vec<i32>, // side A's units, by index
    pub b_mods: Vec<i32>, // side B's units
    /// Combats in resolution order: (A unit indices, B unit indices), each 1 or 2 units.
    pub line: Vec<(Vec<usize>, Vec<usize>)>,
    /// Which side holds reserves: None, Some(0) = A, Some(1) = B.
    pub reserve_side: Option<usize>,
    /// Reserve unit indices of that side, in the order they are committed.
    pub reserves: Vec<usize>,
    /// "none", "rescue" or "press".
    pub policy: &'static str,
    /// Some(m): a modified total below m counts as m. None: no floor; a lower total <= 0 is "routed" by any higher total.
    pub min_score: Option<i32>,
}

pub struct OracleResult {
    /// Denominator: 6^(line dice + number of reserves). Every reserve die is enumerated even when unused.
    pub total: u128,
    /// Counts per army result, in this order:
    /// 0 "A wins, B holds", 1 "A wins, B retires", 2 "A wins, B retreats", 3 "A wins, B disperses",
    /// 4 "B wins, A holds", 5 "B wins, A retires", 6 "B wins, A retreats", 7 "B wins, A disperses", 8 "draw".
    pub result: [u128; 9],
    /// Counts of casualty points of A (index = points) and of B.
    /// Length = 3 × (units of that side that can fight: line units + its reserves) + 1,
    /// i.e. every possible value has a slot (use `trimmed` to drop trailing zeros).
    pub cp_a: Vec<u128>,
    pub cp_b: Vec<u128>,
    /// Counts of the number of reserves committed (index = how many). Length = reserves + 1.
    pub reserves_used: Vec<u128>,
    /// Per combat (in resolution order), counts per combat state:
    /// 0 even, 1 A repulsed, 2 A beaten, 3 A routed, 4 B repulsed, 5 B beaten, 6 B routed.
    pub combat_states: Vec<[u128; 7]>,
}

/// Unit states. `FRESH` = not a loser of any combat (or did not fight).
const FRESH: usize = 0;
const REPULSED: usize = 1;
const BEATEN: usize = 2;
const ROUTED: usize = 3;

/// Casualty points of a unit state.
fn points(state: usize) -> u32 {
    match state {
        REPULSED => 1,
        BEATEN => 2,
        ROUTED => 3,
        _ => 0,
    }
}

/// Outcome of one combat from the two side totals (before the floor).
/// Returns None for even, or Some((losing side 0/1, REPULSED | BEATEN | ROUTED)).
pub fn combat_outcome(
    total_a: i32,
    total_b: i32,
    min_score: Option<i32>,
) -> Option<(usize, usize)> {
    let (ta, tb) = match min_score {
        Some(m) => (total_a.max(m), total_b.max(m)),
        None => (total_a, total_b),
    };
    if ta == tb {
        return None;
    }
    let (loser, hi, lo) = if ta < tb { (0, tb, ta) } else { (1, ta, tb) };
    let state = if lo <= 0 || hi >= 3 * lo {
        ROUTED
    } else if hi >= 2 * lo {
        BEATEN
    } else {
        REPULSED
    };
    Some((loser, state))
}

/// Drop trailing zero counts (for comparing distributions whose vectors differ in length).
pub fn trimmed(v: &[u128]) -> Vec<u128> {
    let mut out = v.to_vec();
    while out.last() == Some(&0) {
        out.pop();
    }
    out
}

/// Mark unit `i` as placed; panics if out of range or placed twice.
fn mark(seen: &mut [bool], i: usize) {
    assert!(i < seen.len(), "unit index {i} out of range");
    assert!(!seen[i], "unit {i} used twice");
    seen[i] = true;
}

/// Check the battle description; panics on anything the rules do not allow.
fn validate(battle: &OracleBattle) {
    assert!(
        matches!(battle.policy, "none" | "rescue" | "press"),
        "unknown policy {:?}",
        battle.policy
    );
    match battle.reserve_side {
        None => assert!(
            battle.reserves.is_empty(),
            "reserves without a reserve side"
        ),
        Some(s) => assert!(s <= 1, "reserve side must be 0 or 1"),
    }
    let mut seen_a = vec![false; battle.a_mods.len()];
    let mut seen_b = vec![false; battle.b_mods.len()];
    for (a, b) in &battle.line {
        assert!((1..=2).contains(&a.len()), "a combat needs 1 or 2 A units");
        assert!((1..=2).contains(&b.len()), "a combat needs 1 or 2 B units");
        for &i in a {
            mark(&mut seen_a, i);
        }
        for &i in b {
            mark(&mut seen_b, i);
        }
    }
    for &i in &battle.reserves {
        match battle.reserve_side {
            Some(0) => mark(&mut seen_a, i),
            _ => mark(&mut seen_b, i),
        }
    }
}

/// Enumerate every combination of dice and tally the results.
pub fn enumerate(battle: &OracleBattle) -> OracleResult {
    validate(battle);
    let mods = [&battle.a_mods, &battle.b_mods];
    let line_dice: usize = battle.line.iter().map(|(a, b)| a.len() + b.len()).sum();
    let n_res = battle.reserves.len();
    let n_dice = line_dice + n_res;

    // Units of each side that can fight: line units, plus reserves for the reserve side.
    let mut can_fight = [0usize; 2];
    for (a, b) in &battle.line {
        can_fight[0] += a.len();
        can_fight[1] += b.len();
    }
    if let Some(s) = battle.reserve_side {
        can_fight[s] += n_res;
    }

    let mut out = OracleResult {
        total: 0,
        result: [0; 9],
        cp_a: vec![0; 3 * can_fight[0] + 1],
        cp_b: vec![0; 3 * can_fight[1] + 1],
        reserves_used: vec![0; n_res + 1],
        combat_states: vec![[0; 7]; battle.line.len()],
    };

    // Per-leaf scratch: unit states and whether each unit fought, per side.
    let mut state: [Vec<usize>; 2] = [vec![FRESH; mods[0].len()], vec![FRESH; mods[1].len()]];
    let mut fought: [Vec<bool>; 2] = [vec![false; mods[0].len()], vec![false; mods[1].len()]];
    let mut committed: Vec<usize> = Vec::new();

    // Odometer over all dice, each 1..=6. dice[0..line_dice] are line dice (combat by
    // combat, A units then B units); dice[line_dice..] are the reserve dice in order.
    let mut dice = vec![1i32; n_dice];
    loop {
        for st in state.iter_mut() {
            st.fill(FRESH);
        }
        for f in fought.iter_mut() {
            f.fill(false);
        }
        let mut next_die = 0usize;
        let mut next_reserve = 0usize;

        for (c, (units_a, units_b)) in battle.line.iter().enumerate() {
            let sides = [units_a, units_b];
            let mut totals = [0i32; 2];
            for s in 0..2 {
                for &u in sides[s].iter() {
                    totals[s] += dice[next_die] + mods[s][u];
                    next_die += 1;
                    fought[s][u] = true;
                }
            }

            // Reserve commitment, one at a time, after seeing this combat's dice.
            committed.clear();
            if let Some(rs) = battle.reserve_side {
                loop {
                    if next_reserve >= n_res {
                        break;
                    }
                    let outcome = combat_outcome(totals[0], totals[1], battle.min_score);
                    let wants = match battle.policy {
                        // Lost or even: anything but "the enemy lost".
                        "rescue" => !matches!(outcome, Some((loser, _)) if loser != rs),
                        // Anything but "the enemy routed".
                        "press" => !matches!(outcome, Some((loser, ROUTED)) if loser != rs),
                        _ => false,
                    };
                    if !wants {
                        break;
                    }
                    let u = battle.reserves[next_reserve];
                    totals[rs] += dice[line_dice + next_reserve] - 1 + mods[rs][u];
                    fought[rs][u] = true;
                    committed.push(u);
                    next_reserve += 1;
                }
            }

            let outcome = combat_outcome(totals[0], totals[1], battle.min_score);
            match outcome {
                None => out.combat_states[c][0] += 1,
                Some((loser, st)) => {
                    out.combat_states[c][loser * 3 + st] += 1;
                    for &u in sides[loser].iter() {
                        state[loser][u] = st;
                    }
                    if battle.reserve_side == Some(loser) {
                        for &u in &committed {
                            state[loser][u] = st;
                        }
                    }
                }
            }
        }
        debug_assert_eq!(next_die, line_dice);

        out.reserves_used[next_reserve] += 1;

        let cp: [u32; 2] = [
            state[0].iter().map(|&st| points(st)).sum(),
            state[1].iter().map(|&st| points(st)).sum(),
        ];
        out.cp_a[cp[0] as usize] += 1;
        out.cp_b[cp[1] as usize] += 1;

        if cp[0] == cp[1] {
            out.result[8] += 1;
        } else {
            // Loser = side with the higher casualty total; winner A ⇒ base 0, winner B ⇒ base 4.
            let loser = if cp[0] > cp[1] { 0 } else { 1 };
            let base = if loser == 1 { 0 } else { 4 };
            let n = fought[loser].iter().filter(|&&f| f).count();
            let routed = state[loser].iter().filter(|&&st| st == ROUTED).count();
            let beaten = state[loser].iter().filter(|&&st| st == BEATEN).count();
            let army = if 2 * routed > n {
                3 // disperses
            } else if routed > 0 || 2 * beaten > n {
                2 // retreats
            } else if beaten > 0 {
                1 // retires
            } else {
                0 // holds
            };
            out.result[base + army] += 1;
        }
        out.total += 1;

        // Advance the odometer; stop after the last combination.
        let mut i = 0;
        while i < n_dice {
            if dice[i] < 6 {
                dice[i] += 1;
                break;
            }
            dice[i] = 1;
            i += 1;
        }
        if i == n_dice {
            break;
        }
    }
    out
}
