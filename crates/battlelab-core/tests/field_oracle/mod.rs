#![allow(dead_code)]
//! Independent oracle for field battles (docs/systems/field.md), written from the rules
//! text only: its own transcription of the printed CRT, Combat Loss Chart and tactical
//! matrix (as strings, the way they are printed), its own round step, and an exact
//! enumeration in integers. Nothing here calls the library: the simulator, the exact
//! enumeration, the table kernel and the game solver all share the library's round step
//! (`round_setup`, `tactic_cell`, `apply_round`, `battle_end`), so checking them against
//! each other cannot see a rule that the round step gets wrong; this can.
//!
//! Counts are exact: each round multiplies the weight of a path by A's tactic weight, B's
//! tactic weight and 1 (one face of the 36 of 2d6), so every count is over the common
//! denominator `(total weight of A's mix × total of B's × 36)^round_limit`; a battle that
//! ends early is scaled by that factor for each round it did not fight.
//!
//! Readings used (docs/systems/field.md, "A round" and "Readings"):
//! - L is the side with more SP now; on equal SP side A is L. S is the other.
//! - Odds L:S rounded down to 1:1, 3:2, 2:1 or 3:1 (shift 0, 1, 2, 3); the modified roll
//!   2d6 + net DRM is held to 2…12 and reads column roll − 1 + shift, held to 1…11.
//! - Net DRM = (L's leader − S's) + (L's morale − S's, current) + (L's DRM − S's) +
//!   terrain (written in A's favour, so negated when B is L) + the matrix cell with L's
//!   tactic as the row and S's as the column; held to ±4.
//! - Result `1`: CLC row 1; `Dn`: the D row ("D2 or D3" for both) and n morale. Both read
//!   the CLC column of S's current SP. Losses stop at 0 SP and 0 morale. `NC`: no CRT.
//! - The battle ends when a side has 0 SP or 0 morale, after a cell in parentheses, or
//!   after the round limit.

pub mod library;

use std::collections::BTreeMap;

/// The CRT's eleven columns, as printed: L's result, S's result.
pub const CRT_L: [&str; 11] = ["D3", "D2", "D1", "1", "1", "1", "1", "0", "1", "1", "1"];
pub const CRT_S: [&str; 11] = ["1", "1", "1", "0", "1", "1", "1", "1", "D1", "D2", "D3"];

/// The Combat Loss Chart as printed: bands of S's SP (lowest SP of each), then rows
/// `1`, `D1`, `D2 or D3`.
pub const CLC_BANDS: [(u32, &str); 6] = [
    (1, "1-3"),
    (4, "4-5"),
    (6, "6-10"),
    (11, "11-15"),
    (16, "16-20"),
    (21, "21+"),
];
pub const CLC: [[u32; 6]; 3] = [
    [1, 1, 1, 2, 2, 3], // 1
    [1, 1, 2, 3, 4, 6], // D1
    [1, 2, 3, 5, 6, 9], // D2 or D3
];

/// The tactical matrix as printed: rows L's tactic, columns S's, in this order.
pub const TACTICS: [&str; 7] = [
    "charge", "envelop", "skirmish", "bombard", "square", "refuse", "withdraw",
];
pub const MATRIX: [[&str; 7]; 7] = [
    ["0", "+1", "-2", "+1", "+2", "0", "(-2)"],
    ["-1", "0", "-1", "-1", "+1", "+2", "(-1)"],
    ["+2", "+1", "0", "-1", "-1", "-1", "(0)"],
    ["-1", "+1", "+1", "0", "-2", "-1", "(NC)"],
    ["-2", "-1", "+1", "+2", "NC", "NC", "(NC)"],
    ["0", "-2", "+1", "+1", "NC", "NC", "(NC)"],
    ["(+2)", "(+1)", "(0)", "(NC)", "(NC)", "(NC)", "(NC)"],
];

pub fn tactic(name: &str) -> usize {
    TACTICS
        .iter()
        .position(|t| *t == name)
        .unwrap_or_else(|| panic!("no tactic {name}"))
}

/// A printed matrix cell read by hand: (DRM, no combat, ends the battle).
pub fn cell(text: &str) -> (i32, bool, bool) {
    let (inner, ends) = match text.strip_prefix('(') {
        Some(rest) => (rest.strip_suffix(')').expect("closing parenthesis"), true),
        None => (text, false),
    };
    if inner == "NC" {
        return (0, true, ends);
    }
    let drm = match inner.strip_prefix('+') {
        Some(n) => n.parse().unwrap(),
        None => inner.parse().unwrap(),
    };
    (drm, false, ends)
}

/// SP lost and morale lost for one printed result (`0`, `1`, `D1`…) at S's strength.
pub fn loss(result: &str, smaller_sp: u32) -> (u32, u32) {
    let band = CLC_BANDS
        .iter()
        .rposition(|(lowest, _)| smaller_sp >= *lowest)
        .expect("a force has at least 1 SP");
    match result {
        "0" => (0, 0),
        "1" => (CLC[0][band], 0),
        "D1" => (CLC[1][band], 1),
        "D2" => (CLC[2][band], 2),
        "D3" => (CLC[2][band], 3),
        other => panic!("no CRT result {other}"),
    }
}

/// The odds shift of L:S rounded down to a printed column.
pub fn shift(larger: u32, smaller: u32) -> i32 {
    if larger >= 3 * smaller {
        3
    } else if larger >= 2 * smaller {
        2
    } else if 2 * larger >= 3 * smaller {
        1
    } else {
        0
    }
}

/// One side as the oracle needs it.
#[derive(Clone, Debug)]
pub struct Side {
    pub sp: u32,
    pub morale: u32,
    pub leader: i32,
    pub drm: i32,
    /// Whole-number weight of each tactic, in [`TACTICS`] order.
    pub tactics: [u64; 7],
}

impl Side {
    pub fn new(sp: u32, morale: u32, tactic_name: &str) -> Self {
        let mut tactics = [0; 7];
        tactics[tactic(tactic_name)] = 1;
        Self {
            sp,
            morale,
            leader: 0,
            drm: 0,
            tactics,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Battle {
    pub a: Side,
    pub b: Side,
    /// In A's favour.
    pub terrain: i32,
    pub round_limit: u32,
}

/// How a battle ended: labels as docs/systems/field.md names them.
pub const RESULTS: [&str; 8] = [
    "A wins",
    "B wins",
    "both broken",
    "A withdraws",
    "B withdraws",
    "both withdraw",
    "broken off",
    "round limit",
];

/// One battle's end: result (index into [`RESULTS`]), rounds fought, SP and morale lost
/// by A and by B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct End {
    pub result: usize,
    pub rounds: u32,
    pub sp_lost: [u32; 2],
    pub morale_lost: [u32; 2],
}

/// Every way the battle can end, with its count over `total`.
#[derive(Clone, Debug)]
pub struct Enumerated {
    pub total: u128,
    pub ends: BTreeMap<End, u128>,
}

impl Enumerated {
    pub fn result(&self) -> [u128; 8] {
        let mut out = [0; 8];
        for (end, count) in &self.ends {
            out[end.result] += count;
        }
        out
    }

    /// Counts by value of one quantity of the end (`len` slots).
    pub fn marginal(&self, len: usize, of: impl Fn(&End) -> u32) -> Vec<u128> {
        let mut out = vec![0; len];
        for (end, count) in &self.ends {
            out[of(end) as usize] += count;
        }
        out
    }

    pub fn rounds(&self, limit: u32) -> Vec<u128> {
        self.marginal(limit as usize + 1, |e| e.rounds)
    }
}

/// Strength and morale of both sides (index 0 = A, 1 = B).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Now {
    sp: [u32; 2],
    morale: [u32; 2],
}

/// The whole battle, enumerated exactly.
pub fn enumerate(battle: &Battle) -> Enumerated {
    let sides = [&battle.a, &battle.b];
    let weights = [
        battle.a.tactics.iter().sum::<u64>() as u128,
        battle.b.tactics.iter().sum::<u64>() as u128,
    ];
    let per_round = weights[0] * weights[1] * 36;
    let start = Now {
        sp: [battle.a.sp, battle.b.sp],
        morale: [battle.a.morale, battle.b.morale],
    };
    let mut ends: BTreeMap<End, u128> = BTreeMap::new();
    let mut live: BTreeMap<Now, u128> = BTreeMap::from([(start, 1)]);
    for round in 1..=battle.round_limit {
        let later = per_round.pow(battle.round_limit - round);
        let mut next: BTreeMap<Now, u128> = BTreeMap::new();
        for (now, count) in live {
            // Who is larger now: B only with strictly more SP.
            let l = if now.sp[1] > now.sp[0] { 1 } else { 0 };
            let s = 1 - l;
            let odds_shift = shift(now.sp[l], now.sp[s]);
            let terrain = if l == 0 {
                battle.terrain
            } else {
                -battle.terrain
            };
            let base = (sides[l].leader - sides[s].leader)
                + (now.morale[l] as i32 - now.morale[s] as i32)
                + (sides[l].drm - sides[s].drm)
                + terrain;
            for ta in 0..7 {
                for tb in 0..7 {
                    let w = u128::from(sides[0].tactics[ta]) * u128::from(sides[1].tactics[tb]);
                    if w == 0 {
                        continue;
                    }
                    let picked = [ta, tb];
                    let (cell_drm, no_combat, ends_battle) = cell(MATRIX[picked[l]][picked[s]]);
                    let net = (base + cell_drm).clamp(-4, 4);
                    for d1 in 1..=6 {
                        for d2 in 1..=6 {
                            let mut after = now;
                            if !no_combat {
                                let roll = (d1 + d2 + net).clamp(2, 12);
                                let column = (roll - 1 + odds_shift).clamp(1, 11) as usize;
                                let smaller_sp = now.sp[s];
                                for (side, result) in
                                    [(l, CRT_L[column - 1]), (s, CRT_S[column - 1])]
                                {
                                    let (sp, morale) = loss(result, smaller_sp);
                                    after.sp[side] = after.sp[side].saturating_sub(sp);
                                    after.morale[side] = after.morale[side].saturating_sub(morale);
                                }
                            }
                            let broken = [0, 1].map(|i| after.sp[i] == 0 || after.morale[i] == 0);
                            let result = match (broken, ends_battle) {
                                ([true, true], _) => Some(2),
                                ([false, true], _) => Some(0),
                                ([true, false], _) => Some(1),
                                (_, true) => Some(
                                    match (ta == tactic("withdraw"), tb == tactic("withdraw")) {
                                        (true, true) => 5,
                                        (true, false) => 3,
                                        (false, true) => 4,
                                        (false, false) => 6,
                                    },
                                ),
                                _ if round == battle.round_limit => Some(7),
                                _ => None,
                            };
                            let weight = count * w;
                            match result {
                                Some(result) => {
                                    let end = End {
                                        result,
                                        rounds: round,
                                        sp_lost: [0, 1].map(|i| start.sp[i] - after.sp[i]),
                                        morale_lost: [0, 1]
                                            .map(|i| start.morale[i] - after.morale[i]),
                                    };
                                    *ends.entry(end).or_insert(0) += weight * later;
                                }
                                None => *next.entry(after).or_insert(0) += weight,
                            }
                        }
                    }
                }
            }
        }
        live = next;
    }
    Enumerated {
        total: per_round.pow(battle.round_limit),
        ends,
    }
}
