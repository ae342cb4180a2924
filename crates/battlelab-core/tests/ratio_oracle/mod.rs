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
//! - "optimal" ([`enumerate_optimal`]): the reserve side commits, one reserve at a time,
//!   whenever committing gives a strictly better expected objective than stopping —
//!   enemy casualty points minus its own, or the chance that the enemy has more casualty
//!   points — given everything it has seen (every die so far). Equal values keep the
//!   reserve. Searched over the whole tree of dice and decisions, in integers.

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
        matches!(battle.policy, "none" | "rescue" | "press" | "optimal"),
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
    assert_ne!(battle.policy, "optimal", "optimal: use enumerate_optimal");
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

/// What `optimal` maximises, from the reserve side's point of view (docs/systems/ratio.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// Expected casualty points of the enemy minus its own.
    CpDifference,
    /// The chance that the enemy ends with more casualty points (a win).
    Win,
}

/// The best policy's value and the battle's distribution under it.
pub struct OptimalResult {
    /// Σ over every leaf of the objective (casualty-point difference, or 1 for a win),
    /// each leaf weighted as the distribution counts it: over `total` = 6^(all dice).
    pub value: i128,
    pub total: u128,
    /// The distribution when the reserve side plays its best policy (ties keep).
    pub tally: OracleResult,
}

/// The whole search, fixed for one battle.
struct Search<'a> {
    battle: &'a OracleBattle,
    goal: Goal,
    side: usize,
    can_fight: [usize; 2],
}

/// What the dice and decisions so far have done.
#[derive(Clone)]
struct Path {
    state: [Vec<usize>; 2],
    fought: [Vec<bool>; 2],
    used: usize,
}

/// A subtree's value and tally (the tally flattened: see [`Search::unflatten`]).
type Subtree = (i128, Vec<u128>);

impl Search<'_> {
    fn mods(&self, side: usize) -> &[i32] {
        [&self.battle.a_mods, &self.battle.b_mods][side]
    }

    fn lengths(&self) -> [usize; 5] {
        [
            9,
            3 * self.can_fight[0] + 1,
            3 * self.can_fight[1] + 1,
            self.battle.reserves.len() + 1,
            7 * self.battle.line.len(),
        ]
    }

    fn empty(&self) -> Vec<u128> {
        vec![0; self.lengths().iter().sum()]
    }

    fn add(into: &mut Subtree, other: Subtree) {
        into.0 += other.0;
        into.1.iter_mut().zip(other.1).for_each(|(a, b)| *a += b);
    }

    fn unflatten(&self, flat: &[u128], total: u128) -> OracleResult {
        let [r, a, b, u, c] = self.lengths();
        let mut at = 0;
        let mut take = |n: usize| {
            let part = flat[at..at + n].to_vec();
            at += n;
            part
        };
        let result = take(r);
        let (cp_a, cp_b, reserves_used, states) = (take(a), take(b), take(u), take(c));
        OracleResult {
            total,
            result: result.try_into().unwrap(),
            cp_a,
            cp_b,
            reserves_used,
            combat_states: states.chunks(7).map(|s| s.try_into().unwrap()).collect(),
        }
    }

    /// The rest of the battle from combat `c` on, every die of it enumerated.
    fn rest_of_battle(&self, c: usize, path: &Path, states: &mut Vec<usize>) -> Subtree {
        if c == self.battle.line.len() {
            return self.leaf(path, states);
        }
        let (units_a, units_b) = &self.battle.line[c];
        let units: Vec<(usize, usize)> = units_a
            .iter()
            .map(|&u| (0, u))
            .chain(units_b.iter().map(|&u| (1, u)))
            .collect();
        let mut sum: Subtree = (0, self.empty());
        let mut fought = path.clone();
        for &(s, u) in &units {
            fought.fought[s][u] = true;
        }
        for faces in 0..6usize.pow(units.len() as u32) {
            let mut totals = [0i32; 2];
            let mut rest = faces;
            for &(s, u) in &units {
                totals[s] += (rest % 6) as i32 + 1 + self.mods(s)[u];
                rest /= 6;
            }
            Self::add(
                &mut sum,
                self.decide(c, totals, &mut Vec::new(), &fought, states),
            );
        }
        sum
    }

    /// Within combat `c`, after the line's dice and `committed` reserves: the better of
    /// stopping and committing one more (ties stop).
    fn decide(
        &self,
        c: usize,
        totals: [i32; 2],
        committed: &mut Vec<usize>,
        path: &Path,
        states: &mut Vec<usize>,
    ) -> Subtree {
        let stop = {
            let mut after = path.clone();
            let code = match combat_outcome(totals[0], totals[1], self.battle.min_score) {
                None => 0,
                Some((loser, st)) => {
                    let (units_a, units_b) = &self.battle.line[c];
                    for &u in [units_a, units_b][loser] {
                        after.state[loser][u] = st;
                    }
                    if loser == self.side {
                        for &u in committed.iter() {
                            after.state[loser][u] = st;
                        }
                    }
                    loser * 3 + st
                }
            };
            states.push(code);
            let subtree = self.rest_of_battle(c + 1, &after, states);
            states.pop();
            subtree
        };
        if path.used == self.battle.reserves.len() {
            return stop;
        }
        let u = self.battle.reserves[path.used];
        let mut next = path.clone();
        next.used += 1;
        next.fought[self.side][u] = true;
        committed.push(u);
        let mut commit: Subtree = (0, self.empty());
        for die in 1..=6 {
            let mut more = totals;
            more[self.side] += die - 1 + self.mods(self.side)[u];
            Self::add(&mut commit, self.decide(c, more, committed, &next, states));
        }
        committed.pop();
        if commit.0 > stop.0 {
            commit
        } else {
            stop
        }
    }

    /// A finished battle, weighted by the reserve dice it never rolled.
    fn leaf(&self, path: &Path, states: &[usize]) -> Subtree {
        let weight = 6u128.pow((self.battle.reserves.len() - path.used) as u32);
        let [r, a, b, u, _] = self.lengths();
        let mut flat = self.empty();
        let cp = [0, 1].map(|s| path.state[s].iter().map(|&st| points(st)).sum::<u32>());
        flat[r + cp[0] as usize] += weight;
        flat[r + a + cp[1] as usize] += weight;
        flat[r + a + b + path.used] += weight;
        for (c, &code) in states.iter().enumerate() {
            flat[r + a + b + u + 7 * c + code] += weight;
        }
        if cp[0] == cp[1] {
            flat[8] += weight;
        } else {
            let loser = if cp[0] > cp[1] { 0 } else { 1 };
            let base = if loser == 1 { 0 } else { 4 };
            let n = path.fought[loser].iter().filter(|&&f| f).count();
            let routed = path.state[loser].iter().filter(|&&st| st == ROUTED).count();
            let beaten = path.state[loser].iter().filter(|&&st| st == BEATEN).count();
            let army = if 2 * routed > n {
                3
            } else if routed > 0 || 2 * beaten > n {
                2
            } else if beaten > 0 {
                1
            } else {
                0
            };
            flat[base + army] += weight;
        }
        let (own, enemy) = (i128::from(cp[self.side]), i128::from(cp[1 - self.side]));
        let objective = match self.goal {
            Goal::CpDifference => enemy - own,
            Goal::Win => i128::from(enemy > own),
        };
        (objective * weight as i128, flat)
    }
}

/// The `optimal` policy by brute force: every die of every battle and every commitment
/// decision, the best decision at each point chosen by comparing the exact values of the
/// two subtrees (no states merged, no memoisation, no floating point).
pub fn enumerate_optimal(battle: &OracleBattle, goal: Goal) -> OptimalResult {
    validate(battle);
    assert_eq!(battle.policy, "optimal");
    let side = battle
        .reserve_side
        .expect("optimal needs a side with reserves");
    let mut can_fight = [0usize; 2];
    for (a, b) in &battle.line {
        can_fight[0] += a.len();
        can_fight[1] += b.len();
    }
    can_fight[side] += battle.reserves.len();
    let search = Search {
        battle,
        goal,
        side,
        can_fight,
    };
    let path = Path {
        state: [
            vec![FRESH; battle.a_mods.len()],
            vec![FRESH; battle.b_mods.len()],
        ],
        fought: [
            vec![false; battle.a_mods.len()],
            vec![false; battle.b_mods.len()],
        ],
        used: 0,
    };
    let (value, flat) = search.rest_of_battle(0, &path, &mut Vec::new());
    let line_dice: usize = battle.line.iter().map(|(a, b)| a.len() + b.len()).sum();
    let total = 6u128.pow((line_dice + battle.reserves.len()) as u32);
    OptimalResult {
        value,
        total,
        tally: search.unflatten(&flat, total),
    }
}
