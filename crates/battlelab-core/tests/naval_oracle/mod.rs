#![allow(dead_code)]
//! Independent oracle for naval engagements (docs/systems/naval.md), written from the rules
//! text only: its own transcription of the naval combat table and the pursuit table
//! (docs/systems/tables.md), its own round, and an exact enumeration in integers over
//! `36^round_limit` (each round one battle die and one pursuit die; an engagement that
//! ends early is scaled by 36 for each round it did not fight). Nothing here calls the
//! library.
//!
//! Readings used (docs/systems/naval.md):
//! - L is the fleet with more NSP now; on equal NSP fleet A. Odds L:S rounded down to
//!   1-1, 3-2 or 2-1 (above 2-1 reads 2-1).
//! - DRM in L's favour: naval morale L − S, leaders L − S, each fleet's own DRM L − S. The
//!   modified d6 is held to −1…8.
//! - The named fleet loses what the code says (S sunk, C captured, a leading 2 two of
//!   them, R nothing; never more than it has) and breaks off. At 0 NSP it is destroyed and
//!   the engagement ends. Else, if the other fleet pursues, it rolls d6 on the pursuit
//!   table, −1 when coastal, held to 1…6: I (5–6) means another round, F the fleet escapes.
//!   A fleet not pursued retreats unpursued.
//! - The chain stops after the round limit (when the last round's pursuit intercepts).

pub mod library;

use std::collections::BTreeMap;

/// The naval combat table as printed: columns 1-1, 3-2, 2-1; rows modified roll −1…8.
pub const NAVAL_ODDS: [(u32, u32); 3] = [(1, 1), (3, 2), (2, 1)];
pub const NAVAL: [[&str; 10]; 3] = [
    ["2LS", "LC", "LS", "LR", "LR", "SR", "SR", "SS", "SC", "2SS"],
    ["2LC", "LS", "LR", "LR", "SR", "SR", "SS", "SS", "SC", "2SC"],
    ["LS", "LR", "LR", "SR", "SR", "SS", "SS", "SC", "SC", "2SC"],
];
/// The pursuit table as printed, rolls 1…6.
pub const PURSUIT: [&str; 6] = ["F", "F", "F", "F", "I", "I"];

#[derive(Clone, Debug)]
pub struct Fleet {
    pub nsp: u32,
    /// Naval morale: Major 2, Minor 1.
    pub morale: i32,
    pub leader: i32,
    pub drm: i32,
    pub pursues: bool,
}

impl Fleet {
    pub fn new(nsp: u32, morale: i32) -> Self {
        Self {
            nsp,
            morale,
            leader: 0,
            drm: 0,
            pursues: true,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Engagement {
    pub a: Fleet,
    pub b: Fleet,
    pub coastal: bool,
    pub round_limit: u32,
}

/// Results as docs/systems/naval.md names them.
pub const RESULTS: [&str; 7] = [
    "A destroyed",
    "B destroyed",
    "A escapes",
    "B escapes",
    "A retreats unpursued",
    "B retreats unpursued",
    "round limit",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct End {
    pub result: usize,
    pub rounds: u32,
    pub nsp_lost: [u32; 2],
    pub captured: [u32; 2],
}

#[derive(Clone, Debug)]
pub struct Enumerated {
    pub total: u128,
    pub ends: BTreeMap<End, u128>,
}

impl Enumerated {
    pub fn marginal(&self, len: usize, of: impl Fn(&End) -> u32) -> Vec<u128> {
        let mut out = vec![0; len];
        for (end, count) in &self.ends {
            out[of(end) as usize] += count;
        }
        out
    }
}

/// The odds column of `larger : smaller`, rounded down.
pub fn column(larger: u32, smaller: u32) -> usize {
    NAVAL_ODDS
        .iter()
        .rposition(|&(n, d)| larger * d >= smaller * n)
        .expect("larger ≥ smaller reaches 1-1")
}

/// A printed code read by hand: (smaller fleet affected, NSP sunk, NSP captured).
pub fn code(text: &str) -> (bool, u32, u32) {
    let (count, rest) = match text.strip_prefix('2') {
        Some(rest) => (2, rest),
        None => (1, text),
    };
    let mut chars = rest.chars();
    let smaller = match chars.next() {
        Some('L') => false,
        Some('S') => true,
        other => panic!("no fleet {other:?} in {text}"),
    };
    match chars.next() {
        Some('R') => (smaller, 0, 0),
        Some('S') => (smaller, count, 0),
        Some('C') => (smaller, 0, count),
        other => panic!("no result {other:?} in {text}"),
    }
}

pub fn intercepts(pursuit_die: i32, coastal: bool) -> bool {
    let roll = (pursuit_die - i32::from(coastal)).clamp(1, 6);
    PURSUIT[(roll - 1) as usize] == "I"
}

pub fn enumerate(e: &Engagement) -> Enumerated {
    let fleets = [&e.a, &e.b];
    let start = [e.a.nsp, e.b.nsp];
    let mut ends: BTreeMap<End, u128> = BTreeMap::new();
    // (NSP, captured) of each fleet → count.
    let mut live: BTreeMap<([u32; 2], [u32; 2]), u128> = BTreeMap::from([((start, [0, 0]), 1)]);
    for round in 1..=e.round_limit {
        let later = 36u128.pow(e.round_limit - round);
        let mut next = BTreeMap::new();
        for ((nsp, captured), count) in live {
            let l = if nsp[1] > nsp[0] { 1 } else { 0 };
            let s = 1 - l;
            let drm = (fleets[l].morale - fleets[s].morale)
                + (fleets[l].leader - fleets[s].leader)
                + (fleets[l].drm - fleets[s].drm);
            let odds = column(nsp[l], nsp[s]);
            for battle_die in 1..=6 {
                let roll = (battle_die + drm).clamp(-1, 8);
                let (smaller, sunk, taken) = code(NAVAL[odds][(roll + 1) as usize]);
                let hit = if smaller { s } else { l };
                let mut after = nsp;
                let mut held = captured;
                let sunk = sunk.min(after[hit]);
                after[hit] -= sunk;
                let taken = taken.min(after[hit]);
                after[hit] -= taken;
                held[hit] += taken;
                for pursuit_die in 1..=6 {
                    let pursuer = fleets[1 - hit];
                    let result = if after[hit] == 0 {
                        Some(hit) // A destroyed / B destroyed
                    } else if !pursuer.pursues {
                        Some(4 + hit)
                    } else if !intercepts(pursuit_die, e.coastal) {
                        Some(2 + hit)
                    } else if round == e.round_limit {
                        Some(6)
                    } else {
                        None
                    };
                    match result {
                        Some(result) => {
                            let end = End {
                                result,
                                rounds: round,
                                nsp_lost: [start[0] - after[0], start[1] - after[1]],
                                captured: held,
                            };
                            *ends.entry(end).or_insert(0) += count * later;
                        }
                        None => *next.entry((after, held)).or_insert(0) += count,
                    }
                }
            }
        }
        live = next;
    }
    Enumerated {
        total: 36u128.pow(e.round_limit),
        ends,
    }
}
