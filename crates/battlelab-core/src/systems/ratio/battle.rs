//! Ratio battles of the Matrix-game battle resolution (docs/systems/ratio.md).
//!
//! Why this module exists: a designer's question about these rules is about whole lines —
//! "what is a +1 argument worth against one more unit or one reserve?" — and the answer
//! depends on pairings, doubles, the order of resolution and when reserves are fed in.
//! This module holds a validated battle ([`RatioCombat`]), the Monte Carlo kernel
//! ([`RatioCombat::fight`] for one battle; [`RatioCombat::simulate_block`] and
//! [`RatioCombat::fight_signature`] for the blocks of a run), the exact enumeration
//! ([`RatioCombat::distribution`], integer counts over a common denominator of `6^dice`)
//! and the `optimal` reserve policy, found by dynamic programming over the remaining
//! combats and reserves.
//!
//! One combat: each side's total is the sum of its units' d6 + modifiers (reserves fed in
//! roll d6 − 1 + modifiers); totals below the min-score floor count as the floor; the lower
//! total loses, and the ratio higher / lower gives repulsed (< 2), beaten (< 3) or routed.
//! Every unit of the losing side of that combat takes that state; casualty points are 1, 2
//! and 3 per unit; the side with more casualty points loses the battle, and its units give
//! the army result (holds, retires, retreats, disperses).
//!
//! Both the kernel and the enumeration call [`RatioCombat::resolve`] for every combat and
//! the same commitment rule (`RatioCombat::commits`), so they can differ only in how dice
//! are drawn.
//!
//! Runs fight a line whose one reserve side holds 1 to 4 reserves and does not decide by
//! the casualty points so far bit-sliced, 256 battles to a register (`ratio/sliced.rs`);
//! other lines with a reserve table in 32 lanes (`ratio/lockstep.rs`); lines without
//! reserves by their signature kernel.

use std::collections::HashMap;

use serde::Serialize;

use crate::dice::{lanes, DiceStream, DiceWord};
use crate::rules::RulesError;

mod lockstep;
mod sliced;

pub use sliced::MAX_SLICED_RESERVES;

/// Most units one side may field (line and reserve).
pub const MAX_UNITS: usize = 16;
/// Most reserves one side may hold.
pub const MAX_RESERVES: usize = 8;
/// Most reserves one side may hold in a skirmish (docs/systems/ratio.md: up to two more units).
pub const MAX_SKIRMISH_RESERVES: usize = 2;
/// Most combats in one line.
pub const MAX_COMBATS: usize = 16;
/// Allowed range of one unit's total modifier.
pub const MODIFIER_RANGE: (i32, i32) = (-6, 6);
/// Most decision-table entries the `optimal` policy may build.
pub const MAX_POLICY_STATES: usize = 40_000_000;

/// The side that may feed in reserves and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReservePolicy {
    /// Never commit.
    None,
    /// Commit one at a time while the combat is lost or even.
    Rescue,
    /// Commit one at a time until the enemy in that combat is routed.
    Press,
    /// Commit when it raises the objective, by dynamic programming (open battles only).
    Optimal,
}

impl ReservePolicy {
    pub const ALL: [Self; 4] = [Self::None, Self::Rescue, Self::Press, Self::Optimal];
    pub const NAMES: [&'static str; 4] = ["none", "rescue", "press", "optimal"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == text)
            .map(|i| Self::ALL[i])
    }
}

/// What the `optimal` policy maximises, from the reserve side's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Objective {
    /// Expected casualty points of the enemy minus its own.
    CpDifference,
    /// Probability of winning the battle.
    WinProbability,
}

impl Objective {
    pub const NAMES: [&'static str; 2] = ["cp", "win"];

    pub fn name(self) -> &'static str {
        match self {
            Self::CpDifference => "cp",
            Self::WinProbability => "win",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "cp" => Some(Self::CpDifference),
            "win" => Some(Self::WinProbability),
            _ => None,
        }
    }
}

/// **\[option\]** the min-score rule: a total below the floor counts as the floor, or no
/// floor at all (then a lower total of 0 or less is routed by any higher total).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum MinScore {
    Floor(i32),
    None,
}

impl std::fmt::Display for MinScore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MinScore::Floor(m) => write!(f, "{m}"),
            MinScore::None => write!(f, "none"),
        }
    }
}

/// One unit: its name and the total modifier to each die it rolls (argument, quality,
/// ambush, exhaustion).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Unit {
    pub name: String,
    pub modifier: i32,
}

/// One combat of the line: unit indices of side A and of side B (one or two each).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Pairing {
    pub a: Vec<usize>,
    pub b: Vec<usize>,
}

/// A whole battle as plain data: units, the line in the order of resolution, reserves
/// and policies. Validated by [`RatioCombat::new`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct RatioBattle {
    /// Units of side A (index 0) and side B (index 1).
    pub units: [Vec<Unit>; 2],
    /// Combats, in the order the attacker resolves them.
    pub line: Vec<Pairing>,
    /// Reserve unit indices per side, in the order they are committed.
    pub reserves: [Vec<usize>; 2],
    pub policy: [ReservePolicy; 2],
    pub objective: Objective,
    pub min_score: MinScore,
    /// A skirmish: one combat of one unit a side, both sides may commit up to two reserves,
    /// and committing all of both sides' reserves escalates to `escalation`.
    pub skirmish: bool,
    /// The open battle of the full armies fought when a skirmish escalates.
    pub escalation: Option<Box<RatioBattle>>,
}

/// The state one combat ends in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CombatState {
    Even,
    ARepulsed,
    ABeaten,
    ARouted,
    BRepulsed,
    BBeaten,
    BRouted,
}

impl CombatState {
    pub const COUNT: usize = 7;
    pub const LABELS: [&'static str; 7] = [
        "even",
        "A repulsed",
        "A beaten",
        "A routed",
        "B repulsed",
        "B beaten",
        "B routed",
    ];
}

/// The army result of a battle (docs/systems/ratio.md), with the escalated forms of a skirmish.
pub struct ArmyResult;

impl ArmyResult {
    /// Results of an open battle; a skirmish that escalated adds 9 to the index.
    pub const LABELS: [&'static str; 9] = [
        "A wins, B holds",
        "A wins, B retires",
        "A wins, B retreats",
        "A wins, B disperses",
        "B wins, A holds",
        "B wins, A retires",
        "B wins, A retreats",
        "B wins, A disperses",
        "draw",
    ];
    pub const DRAW: usize = 8;
    /// Result slots: 9 plain, 9 after escalation.
    pub const COUNT: usize = 18;

    /// The label of a result slot.
    pub fn label(index: usize) -> String {
        if index < 9 {
            Self::LABELS[index].to_string()
        } else {
            format!("escalated: {}", Self::LABELS[index - 9])
        }
    }

    /// The winner of a result slot (0 = A, 1 = B), if any.
    pub fn winner(index: usize) -> Option<usize> {
        match index % 9 {
            0..=3 => Some(0),
            4..=7 => Some(1),
            _ => None,
        }
    }

    /// Whether both sides fight at −1 for exhaustion next turn (the loser retreats or
    /// disperses).
    pub fn exhausts(index: usize) -> bool {
        matches!(index % 9, 2 | 3 | 6 | 7)
    }
}

// PERF: what a combat adds to a battle is packed into one u64, one byte per counter, so a
// whole line's tallies are summed with one integer add per combat (no counter can pass 255:
// at most 24 units a side, 3 casualty points each).
const CP_A: u32 = 0;
const CP_B: u32 = 8;
const ROUTED_A: u32 = 16;
const BEATEN_A: u32 = 24;
const ROUTED_B: u32 = 32;
const BEATEN_B: u32 = 40;
const FLOOR_DECIDED: u32 = 48;

#[inline(always)]
fn field(packed: u64, shift: u32) -> u32 {
    ((packed >> shift) & 0xff) as u32
}

/// Keys of [`ReserveTable::result_bins`]: whether A lost, the reserves used (below 8), and
/// the loser's beaten and routed units (below 32), five bits each.
const RESULT_KEYS: usize = 2 * 8 * 32 * 32;
const _: () = assert!(MAX_UNITS + MAX_TABLE_RESERVES < 32 && MAX_TABLE_RESERVES < 8);

/// The [`ReserveTable::result_bins`] key of a battle that is no draw: A lost (more
/// casualty points), `used` reserves, the loser's beaten and routed units. The loser's two
/// counters lie side by side in `packed` (routed, then beaten 8 bits up), read as one.
#[inline(always)]
fn result_key(packed: u64, used: usize) -> usize {
    const _: () =
        assert!(BEATEN_A - ROUTED_A == 8 && BEATEN_B - ROUTED_B == 8 && ROUTED_B - ROUTED_A == 16);
    let a_loses = usize::from(field(packed, CP_A) > field(packed, CP_B));
    let counters = (packed >> (ROUTED_B - 16 * a_loses as u32)) as usize;
    ((a_loses << 3 | used) << 10 | (counters >> 3 & 31 << 5) | (counters & 31)) & (RESULT_KEYS - 1)
}

/// What one combat ends in: its state and its tallies, packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CombatOutcome {
    pub state: CombatState,
    pub packed: u64,
}

/// A combat as the kernel sees it: its base dice and, per combined face, the raw totals.
#[derive(Clone, Debug)]
struct CompiledPairing {
    /// Units per side in the line.
    units: [u32; 2],
    /// Faces of the combined base dice: 6^(units of A + units of B).
    faces: u32,
    /// Raw totals (A, B) for each combined face.
    totals: Vec<[i32; 2]>,
    /// The outcome for each combined face when no reserve can join (the fast path).
    outcome: Vec<CombatOutcome>,
    /// Whether this combat starts a fresh 64-bit word of dice.
    new_word: bool,
}

/// Dense decisions of the `optimal` policy.
#[derive(Clone, Debug)]
struct OptimalPolicy {
    side: usize,
    objective: Objective,
    reserves: usize,
    /// Own raw totals `own_lo..own_lo + own_len` and enemy totals likewise, per combat.
    own_lo: Vec<i32>,
    own_len: Vec<usize>,
    opp_lo: Vec<i32>,
    opp_len: Vec<usize>,
    /// Casualty-point difference (enemy − own) from `diff_lo`, `diff_len` values; a single
    /// value when the objective does not depend on it.
    diff_lo: i32,
    diff_len: usize,
    /// Offsets of each combat's block in `commit`.
    offsets: Vec<usize>,
    /// Commit one more reserve? Indexed by combat block, used, in-combat, diff, own, opp.
    commit: Vec<bool>,
    /// Expected objective at the start of the battle.
    value: f64,
}

impl OptimalPolicy {
    #[inline]
    fn index(&self, c: usize, used: usize, here: usize, diff: i32, own: i32, opp: i32) -> usize {
        let r = self.reserves + 1;
        let d = if self.diff_len == 1 {
            0
        } else {
            (diff - self.diff_lo) as usize
        };
        let own = (own - self.own_lo[c]) as usize;
        let opp = (opp - self.opp_lo[c]) as usize;
        self.offsets[c]
            + (((used * r + here) * self.diff_len + d) * self.own_len[c] + own) * self.opp_len[c]
            + opp
    }
}

/// A validated ratio battle, compiled for the kernel and the enumeration.
#[derive(Clone, Debug)]
pub struct RatioCombat {
    battle: RatioBattle,
    pairings: Vec<CompiledPairing>,
    /// Reserve modifiers per side, in commitment order.
    reserve_mods: [Vec<i32>; 2],
    /// Units that fight in the line, per side.
    line_units: [u32; 2],
    optimal: Option<OptimalPolicy>,
    escalation: Option<Box<RatioCombat>>,
    /// The signature kernel of a line without reserves (see [`RatioCombat::fight_signature`]).
    signature: Option<SignatureKernel>,
    /// Sides that may ever commit a reserve: they hold one and their policy is not `none`.
    committing: Vec<usize>,
    /// Every combat's reserve decisions as one table lookup (see [`ReserveTable`]).
    reserve_table: Option<ReserveTable>,
    /// Bins of the joint histogram a run counts signatures in: `7^combats` without
    /// reserves; with a reserve table, that times the extra digits (one per tuple of
    /// reserves used and reserves lost by severity, [`ReserveTable::extras`]); 0 when
    /// neither signature kernel runs the line (see [`RatioCombat::simulate_block`]).
    signature_bins: usize,
    /// The line compiled for the bit-sliced sweeps (`ratio/sliced.rs`), where they fight it.
    sliced: Option<sliced::SlicedLine>,
}

/// PERF: an open battle with reserves spent ~135 `next_u64` (rescue, press; ~230 for
/// `optimal`) on 2 words of dice: per combat the commit loop re-read the policy, classified
/// the totals after every reserve die and resolved the combat, and those data-dependent
/// branches mispredicted several times a combat. With one committing side (validation
/// allows no other outside a skirmish), a combat is a function of (reserves used before
/// it, the casualty-point difference so far when the policy reads it, the line's combined
/// face, the reserve dice still unrolled): the table holds, per such key, one byte — the
/// combat's state, the number of reserve dice it took and whether the floor decided it —
/// and the combat's `tallies` turn that byte into its packed tallies. Built with
/// [`RatioCombat::commits`] and [`RatioCombat::resolve`], the same step as every other
/// path; only built within [`RESERVE_TABLE_ENTRIES`] and for at most
/// [`MAX_TABLE_RESERVES`] reserves (all of them then come from one reserve word).
///
/// PERF: the first table held a `u64` per key (124 KiB for the bench line, so L2) and the
/// kernel looked combat `c + 1` up only once combat `c` had said how many reserves it took:
/// five dependent L2 loads and the reserve-word bookkeeping per battle (~58 `next_u64` for
/// rescue). Now a key is one byte and the codes of one (difference, face) for every number
/// of reserves used lie in one block of `PAD` bytes (one 64-byte cache line for two
/// reserves; the bench line's table is 23 KiB, L1). Where the policy does not read the
/// casualty-point difference the kernel loads every combat's code for *every* possible
/// number of reserves used before it — loads that depend on the dice alone — and the chain
/// from one combat to the next is only a shift that picks one.
#[derive(Clone, Debug)]
struct ReserveTable {
    side: usize,
    reserves: usize,
    steps: Vec<TableStep>,
    /// `(first, end)` combats of each run that shares one word of line dice.
    segments: Vec<(usize, usize)>,
    /// Casualty-point difference (enemy − own) from `diff_lo`, `diff_len` values (1 when
    /// the policy does not read it).
    diff_lo: i32,
    diff_len: usize,
    /// Where the run of codes for `used` reserves starts within a block: one run of
    /// `6^(R − used)` per `used`, `6^R + 6^(R−1) + … + 1` codes, padded to a power of two.
    used_offsets: [u32; MAX_TABLE_RESERVES + 1],
    /// Blocks of [`reserve_block`]`(R)` codes from `codes[skip]` (`skip` aligns them to 64
    /// bytes): block `steps[c].first_block + diff × faces + face`, code
    /// `used_offsets[used] + path`, where `path` is the next `R − used` reserve dice, first
    /// die most significant. A code is `state | taken << 3 | floor_decided << 6`. (A clone
    /// keeps `skip` and so reads the same codes, if perhaps not on cache-line bounds.)
    codes: Vec<u8>,
    skip: usize,
    /// `extra_index[used × (R + 1)^3 + losses]`: the number `k` of the signature's extra
    /// digit for the reserves used and the reserves of the losing side by severity
    /// (`losses` = repulsed + beaten × (R + 1) + routed × (R + 1)^2).
    extra_index: Vec<u32>,
    /// `extras[k]`: (used, repulsed, beaten, routed) of extra digit `k`.
    extras: Vec<[u32; 4]>,
    /// `result_bins[result_key(packed, used)]`: the joint histogram's bin `result × (R + 1)
    /// + used` of a battle that is no draw ([`RatioCombat::table_block`]).
    ///
    /// PERF: the army result from its table, not from [`army_result`]'s rules, whose two
    /// counters read at a shift that depends on the loser and whose chain of comparisons
    /// held the top line of the kernel's profile (16% of `perf`'s samples on `field`). The
    /// bench line's profile loop 47 → 54 M battles/s under every policy (three runs of
    /// each policy, built alternately, same counts); callgrind 336.6 → 323.7 instructions
    /// a battle.
    result_bins: Box<[u8; RESULT_KEYS]>,
}

impl ReserveTable {
    /// The codes as blocks of `BLOCK` ([`reserve_block`] of the table's reserves), from the
    /// 64-byte boundary `skip` marks.
    fn blocks<const BLOCK: usize>(&self) -> &[[u8; BLOCK]] {
        self.codes[self.skip..].as_chunks::<BLOCK>().0
    }
}

/// One combat of a [`ReserveTable`].
#[derive(Clone, Debug)]
struct TableStep {
    faces: u32,
    /// Index of this combat's first block of codes.
    first_block: u32,
    /// `tallies[code]`: what the combat adds to the battle's packed tallies.
    /// (256 entries, so that a byte indexes it without a mask or a bounds check.)
    tallies: [u64; 256],
    /// What the combat's state is multiplied by in the joint histogram's key: `7^(c mod 3)`
    /// in lane `c / 3` of [`STATE_LANE`] bits (see [`JointCounts`]).
    joint_place: u64,
    /// `signature_terms[code]`: what the combat adds to the battle's signature before its
    /// extra digit is numbered (see [`RatioCombat::signature_block`]): `state × 7^c`, the
    /// reserves it took when their side lost it at its severity (`taken × (R + 1)^(severity
    /// − 1)` from bit [`EXTRA_SHIFT`]), and whether the floor decided it (bit 32).
    signature_terms: [u64; 256],
}

/// How [`RatioCombat::table_battle`] sums a battle's combat states: 4 bits a combat at
/// `4 × combat` (one battle's [`RatioOutcome::states`]), ...
const STATES_NIBBLES: u8 = 0;
/// ... into the lanes of [`JointCounts`], ...
const STATES_JOINT: u8 = 1;
/// ... or as the base-7 number of the battle's signature.
const STATES_SIGNATURE: u8 = 2;

/// Combats whose states share one joint bin (`7^3` states).
const STATE_GROUP: usize = 3;
/// Bits per group of states in the joint key: `7^3 = 343 < 2^9`, and six groups (16
/// combats) fit in 54 bits.
const STATE_LANE: u32 = 9;

/// The largest reserve table built (one byte an entry, padding included).
pub const RESERVE_TABLE_ENTRIES: usize = 1 << 18;
/// Most reserves a reserve table is built for: every reserve die of a battle then comes
/// from one 64-bit word (8 d6), drawn when the first reserve commits. (With five, one 1 v 1
/// combat's codes alone would pass [`RESERVE_TABLE_ENTRIES`].)
pub const MAX_TABLE_RESERVES: usize = 4;
const POW6: [u32; 7] = [1, 6, 36, 216, 1296, 7776, 46656];
const CODE_TAKEN: u32 = 3;
/// The bits of a code that hold the reserves it took, times 8: what the kernel adds to the
/// shift that picks the next combat's code (`8 × used`).
const CODE_TAKEN_BYTES: u8 = 7 << CODE_TAKEN;
const CODE_FLOOR: u32 = 6;

/// Codes per block of a reserve table with `reserves` reserves: `6^R + … + 6 + 1` rounded up
/// to a power of two, so that a masked index never leaves its block.
const fn reserve_block(reserves: usize) -> usize {
    let mut sum = 0;
    let mut k = 0;
    while k <= reserves {
        sum += POW6[k] as usize;
        k += 1;
    }
    sum.next_power_of_two()
}

/// PERF: a line without reserves is a function of its dice alone, so the kernel only needs
/// each combat's state. Each combat's table maps its combined face to `state × 7^c` (plus
/// one in the upper half when the min-score floor decided it); the sum over combats is the
/// battle's signature, a base-7 number of at most 7^6 values. The driver counts signatures
/// in one joint histogram — one increment per battle — and every other figure (result,
/// casualty points, per-combat states) is derived from those counts afterwards.
#[derive(Clone, Debug)]
struct SignatureKernel {
    /// Per combat: faces, offset into `table`, whether it starts a fresh word.
    steps: Vec<(u32, u32, bool)>,
    table: Vec<u64>,
    /// 7^combats.
    size: usize,
}

/// One battle's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RatioOutcome {
    /// Result slot, see [`ArmyResult`].
    pub result: usize,
    pub cp: [u32; 2],
    /// Reserves committed by both sides (of the skirmish, when it escalated).
    pub reserves_used: u32,
    /// Combats whose state the min-score floor changed.
    pub floor_decided: u32,
    /// Combat states, 4 bits per combat in resolution order (the skirmish combat for a
    /// skirmish).
    pub states: u64,
}

fn err(field: impl Into<String>, message: impl Into<String>) -> RulesError {
    RulesError::new(field, message)
}

/// Classifies raw totals: 0 even, 1–3 A repulsed/beaten/routed, 4–6 B likewise.
#[inline(always)]
fn classify(a: i32, b: i32) -> u32 {
    let a_loses = a < b;
    let (hi, lo) = if a_loses { (b, a) } else { (a, b) };
    // PERF: the ratio class is a count of thresholds reached; a lower total of 0 or less
    // (possible only without a floor) has no ratio and counts as routed.
    let severity = if lo <= 0 {
        3
    } else {
        1 + u32::from(hi >= 2 * lo) + u32::from(hi >= 3 * lo)
    };
    let code = if a_loses { severity } else { 3 + severity };
    if a == b {
        0
    } else {
        code
    }
}

const STATES: [CombatState; 7] = [
    CombatState::Even,
    CombatState::ARepulsed,
    CombatState::ABeaten,
    CombatState::ARouted,
    CombatState::BRepulsed,
    CombatState::BBeaten,
    CombatState::BRouted,
];

/// What a combat ending in state `code` adds to the tallies (casualty points, routed and
/// beaten units of the losing side), given the units on each side.
fn tallies(code: u32, units: [u32; 2]) -> u64 {
    let (loser, severity) = loser_and_severity(code);
    let loser_is_a = loser == 0;
    let n = u64::from(units[loser]);
    let (cp_shift, routed_shift, beaten_shift) = if loser_is_a {
        (CP_A, ROUTED_A, BEATEN_A)
    } else {
        (CP_B, ROUTED_B, BEATEN_B)
    };
    ((u64::from(severity) * n) << cp_shift)
        + ((u64::from(severity == 3) * n) << routed_shift)
        + ((u64::from(severity == 2) * n) << beaten_shift)
}

/// Where a signature term's reserve losses start (`7^6 < 2^17`, below them).
const EXTRA_SHIFT: u32 = 20;

/// A combat's term of a reserve line's signature (see [`TableStep::signature_terms`]).
fn signature_term(state: u32, combat: usize, side: usize, reserves: usize, taken: u32) -> u64 {
    let (loser, severity) = loser_and_severity(state);
    let losses = if severity > 0 && loser == side {
        u64::from(taken) * (reserves as u64 + 1).pow(severity - 1)
    } else {
        0
    };
    u64::from(state) * 7u64.pow(combat as u32) + (losses << EXTRA_SHIFT)
}

/// Where [`ReserveTable::extra_index`] numbers the reserves used and the reserves lost
/// by severity (`losses`, digits of `radix` = reserves + 1).
#[inline(always)]
fn extra_key(used: u32, losses: u32, radix: u32) -> usize {
    (used * radix.pow(3) + losses) as usize
}

/// The side that lost a combat ending in state `code` (A for 1–3, B for 4–6; B for an
/// even combat, which has severity 0) and the severity: 1 repulsed, 2 beaten, 3 routed.
fn loser_and_severity(code: u32) -> (usize, u32) {
    let loser = usize::from(!(1..=3).contains(&code));
    let severity = if code == 0 { 0 } else { (code - 1) % 3 + 1 };
    (loser, severity)
}

/// Lines of at most this many combats without reserves use the signature kernel.
pub const MAX_SIGNATURE_COMBATS: usize = 6;
/// The most bins (512 KiB of counts) a line with a reserve table counts its signatures in:
/// it uses the signature kernel when `7^combats` times its extra digits is within this.
///
/// PERF: measured end to end (`run`, 9 runs of 10^6 battles, old and new binaries
/// alternately, four times each): a four-combat line with two reserves (36,015 bins) ran
/// 0.225 → 0.178 s on 1 thread and 0.135 → 0.118 s on 2; a five-combat line with one
/// reserve (84,035 bins) 0.23 → 0.19 s and 0.14 → 0.13 s; the bench line, five combats
/// and two reserves (252,105 bins, 2 MiB), 0.245 → 0.215 s on 1 thread but 0.145 → 0.17 s
/// on 2 — every parallel split of a run starts, fills and merges its own bins, and at
/// 2 MiB that costs more than the kernel saves (its kernel alone: 49 → 67 M battles/s).
pub const MAX_SIGNATURE_BINS: usize = 1 << 16;

/// Tallies of a battle so far → the army result slot (0–8).
#[inline(always)]
fn army_result(packed: u64, units: [u32; 2]) -> usize {
    let cp_a = field(packed, CP_A);
    let cp_b = field(packed, CP_B);
    let a_loses = cp_a > cp_b;
    // PERF: the loser's counters and units by arithmetic, not a branch on who lost (which
    // the compiler emitted, and which mispredicted in about every other battle).
    const _: () = assert!(ROUTED_B - ROUTED_A == 16 && BEATEN_B - BEATEN_A == 16);
    let loser = ROUTED_B - 16 * u32::from(a_loses);
    let routed = field(packed, loser);
    let beaten = field(packed, loser + (BEATEN_A - ROUTED_A));
    let n = units[1] ^ ((units[0] ^ units[1]) & 0u32.wrapping_sub(u32::from(a_loses)));
    // PERF: the first rule that holds, as a sum of conditions: disperses ⇒ retreats.
    let disperses = 2 * routed > n;
    let retreats = routed > 0 || 2 * beaten > n;
    let retires = beaten > 0;
    let severity = u32::from(disperses) + u32::from(retreats) + u32::from(retreats | retires);
    if cp_a == cp_b {
        ArmyResult::DRAW
    } else {
        (4 * u32::from(a_loses) + severity) as usize
    }
}

/// `$s.$kernel::<R, BLOCK, DIFF>(t, …)` monomorphised for the reserve table `t`'s number
/// of reserves (1 to [`MAX_TABLE_RESERVES`]) and whether its policy reads the difference;
/// `None` for any other table. The one place that lists the kernels built.
macro_rules! with_reserve_table {
    ($s:ident . $kernel:ident ($t:expr $(, $arg:expr)*)) => {
        match ($t.reserves, $t.diff_len > 1) {
            (1, false) => Some($s.$kernel::<1, { reserve_block(1) }, false>($t $(, $arg)*)),
            (2, false) => Some($s.$kernel::<2, { reserve_block(2) }, false>($t $(, $arg)*)),
            (3, false) => Some($s.$kernel::<3, { reserve_block(3) }, false>($t $(, $arg)*)),
            (4, false) => Some($s.$kernel::<4, { reserve_block(4) }, false>($t $(, $arg)*)),
            (1, true) => Some($s.$kernel::<1, { reserve_block(1) }, true>($t $(, $arg)*)),
            (2, true) => Some($s.$kernel::<2, { reserve_block(2) }, true>($t $(, $arg)*)),
            (3, true) => Some($s.$kernel::<3, { reserve_block(3) }, true>($t $(, $arg)*)),
            (4, true) => Some($s.$kernel::<4, { reserve_block(4) }, true>($t $(, $arg)*)),
            _ => None,
        }
    };
}

impl RatioCombat {
    /// Validates a battle and compiles it. Errors name the field and what is allowed.
    pub fn new(battle: RatioBattle) -> Result<Self, RulesError> {
        validate(&battle)?;
        let escalation = match &battle.escalation {
            Some(open) if battle.skirmish => Some(Box::new(
                RatioCombat::new((**open).clone()).map_err(|e| {
                    err(
                        format!("escalation.{}", e.field),
                        format!("the full armies a skirmish escalates to: {}", e.message),
                    )
                })?,
            )),
            _ => None,
        };
        let mut pairings = Vec::with_capacity(battle.line.len());
        let mut product: u64 = 1;
        for p in &battle.line {
            let mods: Vec<i32> =
                p.a.iter()
                    .map(|&u| battle.units[0][u].modifier)
                    .chain(p.b.iter().map(|&u| battle.units[1][u].modifier))
                    .collect();
            let dice = mods.len() as u32;
            let faces = 6u32.pow(dice);
            let na = p.a.len();
            let totals: Vec<[i32; 2]> = (0..faces)
                .map(|face| {
                    let mut rest = face;
                    let mut t = [0i32; 2];
                    for (k, m) in mods.iter().enumerate() {
                        t[usize::from(k >= na)] += (rest % 6) as i32 + 1 + m;
                        rest /= 6;
                    }
                    t
                })
                .collect();
            let units = [p.a.len() as u32, p.b.len() as u32];
            let outcome = totals
                .iter()
                .map(|t| Self::resolve_with(battle.min_score, t[0], t[1], units))
                .collect();
            // PERF: several combats share one 64-bit word while the product of their faces
            // stays under 2^32 (bias < 2^-32, see dice.rs).
            let new_word = product * u64::from(faces) > 1 << 32;
            product = if new_word {
                u64::from(faces)
            } else {
                product * u64::from(faces)
            };
            pairings.push(CompiledPairing {
                units,
                faces,
                totals,
                outcome,
                new_word,
            });
        }
        if let Some(first) = pairings.first_mut() {
            first.new_word = true;
        }
        let reserve_mods: [Vec<i32>; 2] = [0, 1].map(|s| {
            battle.reserves[s]
                .iter()
                .map(|&u| battle.units[s][u].modifier)
                .collect()
        });
        let line_units = [0, 1].map(|s| {
            battle
                .line
                .iter()
                .map(|p| [p.a.len(), p.b.len()][s] as u32)
                .sum()
        });
        // Reserves that are never committed (policy `none`) leave the line a function of
        // its dice alone.
        let never_commit =
            (0..2).all(|s| reserve_mods[s].is_empty() || battle.policy[s] == ReservePolicy::None);
        let signature = (never_commit
            && !battle.skirmish
            && pairings.len() <= MAX_SIGNATURE_COMBATS)
            .then(|| {
                let mut steps = Vec::new();
                let mut table = Vec::new();
                let mut place = 1u64;
                for p in &pairings {
                    steps.push((p.faces, table.len() as u32, p.new_word));
                    table.extend(
                        p.outcome
                            .iter()
                            .map(|o| o.state as u64 * place + ((o.packed >> FLOOR_DECIDED) << 32)),
                    );
                    place *= 7;
                }
                SignatureKernel {
                    steps,
                    table,
                    size: place as usize,
                }
            });
        let committing = (0..2)
            .filter(|&s| !reserve_mods[s].is_empty() && battle.policy[s] != ReservePolicy::None)
            .collect();
        let mut combat = Self {
            committing,
            battle,
            pairings,
            reserve_mods,
            line_units,
            optimal: None,
            escalation,
            signature,
            reserve_table: None,
            signature_bins: 0,
            sliced: None,
        };
        // Validation leaves at most one side with reserves outside a skirmish, and refuses
        // `optimal` inside one: at most one side needs a solved policy.
        if let Some(side) = (0..2).find(|&s| {
            combat.battle.policy[s] == ReservePolicy::Optimal
                && !combat.battle.reserves[s].is_empty()
        }) {
            combat.optimal = Some(combat.solve_optimal(side)?);
        }
        combat.reserve_table = combat.build_reserve_table();
        combat.sliced = sliced::SlicedLine::new(&combat);
        combat.signature_bins = match (&combat.signature, &combat.reserve_table) {
            (Some(kernel), _) => kernel.size,
            (None, Some(t)) => 7usize
                .checked_pow(combat.pairings.len() as u32)
                .and_then(|states| states.checked_mul(t.extras.len()))
                .filter(|&bins| bins <= MAX_SIGNATURE_BINS)
                .unwrap_or(0),
            (None, None) => 0,
        };
        Ok(combat)
    }

    /// The reserve table of an open battle with one committing side, if small enough.
    fn build_reserve_table(&self) -> Option<ReserveTable> {
        if self.battle.skirmish || self.committing.len() != 1 {
            return None;
        }
        let side = self.committing[0];
        let reserves = self.reserve_mods[side].len();
        if reserves > MAX_TABLE_RESERVES {
            return None;
        }
        let (diff_lo, diff_len) = match (&self.optimal, self.battle.policy[side]) {
            (Some(o), ReservePolicy::Optimal) => (o.diff_lo, o.diff_len),
            _ => (0, 1),
        };
        let block = reserve_block(reserves);
        let mut used_offsets = [0u32; MAX_TABLE_RESERVES + 1];
        let mut offset = 0;
        for (used, at) in used_offsets.iter_mut().enumerate().take(reserves + 1) {
            *at = offset;
            offset += POW6[reserves - used];
        }
        let mut steps = Vec::with_capacity(self.pairings.len());
        let mut segments: Vec<(usize, usize)> = Vec::new();
        let mut blocks = 0usize;
        for (c, p) in self.pairings.iter().enumerate() {
            if p.new_word {
                segments.push((c, c));
            }
            if let Some(last) = segments.last_mut() {
                last.1 = c + 1;
            }
            steps.push(TableStep {
                faces: p.faces,
                first_block: blocks as u32,
                joint_place: 7u64.pow((c % STATE_GROUP) as u32)
                    << (STATE_LANE * (c / STATE_GROUP) as u32),
                signature_terms: [0; 256],
                tallies: [0; 256],
            });
            blocks += diff_len * p.faces as usize;
            if blocks * block > RESERVE_TABLE_ENTRIES {
                return None;
            }
        }
        // Every (used, repulsed, beaten, routed) with the losses within the reserves used.
        let radix = reserves as u32 + 1;
        let mut extra_index = vec![u32::MAX; radix.pow(4) as usize];
        let mut extras = Vec::new();
        for used in 0..radix {
            for routed in 0..radix {
                for beaten in 0..radix {
                    for repulsed in 0..radix {
                        if repulsed + beaten + routed <= used {
                            let losses = repulsed + (beaten + routed * radix) * radix;
                            extra_index[extra_key(used, losses, radix)] = extras.len() as u32;
                            extras.push([used, repulsed, beaten, routed]);
                        }
                    }
                }
            }
        }
        // Room to start the blocks on a 64-byte boundary, and three bytes past the last
        // block (the lanes' gathers read four bytes at a code).
        let mut codes = vec![0u8; blocks * block + 63 + 3];
        let skip = codes.as_ptr().align_offset(64).min(63);
        for (c, (p, step)) in self.pairings.iter().zip(&mut steps).enumerate() {
            for (used, &used_offset) in used_offsets.iter().enumerate().take(reserves + 1) {
                let left = reserves - used;
                let paths = POW6[left] as usize;
                for d in 0..diff_len {
                    let diff = diff_lo + d as i32;
                    for face in 0..p.faces as usize {
                        for path in 0..paths {
                            // The reserve dice, first die most significant (as `take(6^left)`
                            // splits into `left` successive `take(6)`).
                            let mut digits = path;
                            let mut div = paths;
                            let mut die = || {
                                div /= 6;
                                let d = digits / div;
                                digits %= div;
                                d as u32
                            };
                            let (totals, units, taken) =
                                self.commit_reserves(c, p, face, used, side, diff, &mut die);
                            let o = self.resolve(totals[0], totals[1], units);
                            let floor = field(o.packed, FLOOR_DECIDED);
                            let code =
                                o.state as u32 | (taken as u32) << CODE_TAKEN | floor << CODE_FLOOR;
                            step.tallies[code as usize] = o.packed;
                            step.signature_terms[code as usize] =
                                signature_term(o.state as u32, c, side, reserves, taken as u32)
                                    + (u64::from(floor) << 32);
                            let at = skip
                                + (step.first_block as usize + d * p.faces as usize + face) * block
                                + used_offset as usize
                                + path;
                            codes[at] = code as u8;
                        }
                    }
                }
            }
        }
        let result_bins = self.result_bins(side, reserves);
        Some(ReserveTable {
            side,
            reserves,
            steps,
            segments,
            diff_lo,
            diff_len,
            used_offsets,
            codes,
            skip,
            extra_index,
            extras,
            result_bins,
        })
    }

    /// [`ReserveTable::result_bins`] for reserves on `side`: every key's bin, from
    /// [`army_result`] on tallies holding only what the key reads.
    fn result_bins(&self, side: usize, reserves: usize) -> Box<[u8; RESULT_KEYS]> {
        let mut bins = Box::new([0u8; RESULT_KEYS]);
        for used in 0..=reserves {
            let units = self.units_after(side, used);
            // A lost (more casualty points, its counters), or B did.
            for (cp, routed_at, beaten_at) in [
                (1 << CP_A, ROUTED_A, BEATEN_A),
                (1 << CP_B, ROUTED_B, BEATEN_B),
            ] {
                for beaten in 0..32u64 {
                    for routed in 0..32u64 {
                        let packed = cp | routed << routed_at | beaten << beaten_at;
                        let bin = army_result(packed, units) * (reserves + 1) + used;
                        bins[result_key(packed, used)] = bin as u8;
                    }
                }
            }
        }
        bins
    }

    /// One combat's commit loop for `side`: the line's totals for `face`, then reserves
    /// while the policy commits, each rolling `die()`. Returns totals, units and reserves
    /// committed here.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn commit_reserves(
        &self,
        c: usize,
        p: &CompiledPairing,
        face: usize,
        mut used: usize,
        side: usize,
        diff: i32,
        mut die: impl FnMut() -> u32,
    ) -> ([i32; 2], [u32; 2], usize) {
        let mut totals = p.totals[face];
        let mut units = p.units;
        let mut here = 0;
        while self.commits(side, c, totals, used, here, diff) {
            totals[side] += die() as i32 + self.reserve_mods[side][used];
            units[side] += 1;
            used += 1;
            here += 1;
        }
        (totals, units, here)
    }

    pub fn battle(&self) -> &RatioBattle {
        &self.battle
    }

    /// Combats in the line.
    pub fn combats(&self) -> usize {
        self.pairings.len()
    }

    /// Dice rolled by the line (reserves not counted).
    pub fn line_dice(&self) -> u32 {
        self.pairings.iter().map(|p| p.units[0] + p.units[1]).sum()
    }

    /// Reserves held by both sides.
    pub fn reserve_count(&self) -> usize {
        self.reserve_mods[0].len() + self.reserve_mods[1].len()
    }

    /// Largest casualty-point total each side can reach (final battle or escalation).
    pub fn max_cp(&self) -> [u32; 2] {
        let own = [0, 1].map(|s| 3 * (self.line_units[s] + self.reserve_mods[s].len() as u32));
        match &self.escalation {
            Some(e) => {
                let other = e.max_cp();
                [own[0].max(other[0]), own[1].max(other[1])]
            }
            None => own,
        }
    }

    /// The expected objective of the `optimal` policy from the start, if it is used.
    pub fn optimal_value(&self) -> Option<f64> {
        self.optimal.as_ref().map(|o| o.value)
    }

    fn resolve_with(min_score: MinScore, a: i32, b: i32, units: [u32; 2]) -> CombatOutcome {
        let (fa, fb) = match min_score {
            MinScore::Floor(m) => (a.max(m), b.max(m)),
            MinScore::None => (a, b),
        };
        let code = classify(fa, fb);
        let floor_decided = u64::from(fa != a || fb != b) * u64::from(classify(a, b) != code);
        CombatOutcome {
            state: STATES[code as usize],
            packed: tallies(code, units) + (floor_decided << FLOOR_DECIDED),
        }
    }

    /// The state a combat would end in with these raw totals (0 even, 1–3 A repulsed,
    /// beaten, routed, 4–6 B likewise): `resolve` without the tallies.
    #[inline(always)]
    fn state_of(&self, totals: [i32; 2]) -> u32 {
        match self.battle.min_score {
            MinScore::Floor(m) => classify(totals[0].max(m), totals[1].max(m)),
            MinScore::None => classify(totals[0], totals[1]),
        }
    }

    /// One combat's outcome from raw totals and the units on each side.
    #[inline]
    pub fn resolve(&self, a: i32, b: i32, units: [u32; 2]) -> CombatOutcome {
        Self::resolve_with(self.battle.min_score, a, b, units)
    }

    /// Whether `side` commits its next reserve, given the combat's raw totals so far.
    /// `used` reserves of that side are gone (`here` of them into this combat), `diff` is
    /// the enemy's casualty points minus its own before this combat.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn commits(
        &self,
        side: usize,
        combat: usize,
        totals: [i32; 2],
        used: usize,
        here: usize,
        diff: i32,
    ) -> bool {
        if used >= self.reserve_mods[side].len() {
            return false;
        }
        let state = self.state_of(totals);
        let (lost, routed_enemy) = if side == 0 {
            ((1..=3).contains(&state), state == 6)
        } else {
            (state >= 4, state == 3)
        };
        match self.battle.policy[side] {
            ReservePolicy::None => false,
            ReservePolicy::Rescue => lost || state == 0,
            ReservePolicy::Press => !routed_enemy,
            ReservePolicy::Optimal => {
                let o = self.optimal.as_ref().expect("compiled with the policy");
                o.commit[o.index(combat, used, here, diff, totals[side], totals[1 - side])]
            }
        }
    }

    /// One whole battle: the Monte Carlo kernel.
    #[inline]
    pub fn fight(&self, dice: &mut DiceStream) -> RatioOutcome {
        if self.battle.skirmish {
            return self.fight_skirmish(dice);
        }
        if self.committing.is_empty() {
            return self.fight_line(dice);
        }
        self.fight_with_reserves(dice)
    }

    /// Whether runs count this battle's signatures (see [`RatioCombat::simulate_block`]):
    /// a line without reserves, or one with a reserve table and at most
    /// [`MAX_SIGNATURE_BINS`] signatures.
    pub fn has_signature(&self) -> bool {
        self.signature_bins > 0
    }

    /// Whether [`RatioCombat::fight_signature`] fights this battle: a line without
    /// reserves of at most [`MAX_SIGNATURE_COMBATS`] combats.
    pub fn has_line_signature(&self) -> bool {
        self.signature.is_some()
    }

    /// Joint-histogram bins of the signature kernel (0 without one).
    pub fn signature_size(&self) -> usize {
        self.signature_bins
    }

    /// The signature kernel: one battle of a line without reserves as its signature, the
    /// combat states as a base-7 number in the low 32 bits and the number of combats the
    /// min-score floor decided in the high 32 bits. Draws the same dice as [`Self::fight`].
    /// (A line with reserves has its signatures from [`RatioCombat::simulate_block`].)
    #[inline(always)]
    pub fn fight_signature(&self, dice: &mut DiceStream) -> u64 {
        let kernel = self
            .signature
            .as_ref()
            .expect("has_line_signature: a line without reserves");
        let mut word = DiceWord(0);
        let mut signature = 0u64;
        for &(faces, offset, new_word) in &kernel.steps {
            if new_word {
                word = dice.word();
            }
            signature += kernel.table[offset as usize + word.take(faces) as usize];
        }
        signature
    }

    /// The outcome a signature stands for. Low 32 bits: the combat states in base 7, first
    /// combat least significant, plus (a line with a reserve table) `7^combats × k`, `k`
    /// the extra digit of `ReserveTable::extras`. High 32 bits: the combats the min-score
    /// floor decided.
    pub fn decode_signature(&self, signature: u64) -> RatioOutcome {
        let mut rest = signature as u32;
        let mut packed = (signature >> 32) << FLOOR_DECIDED;
        let mut states = 0u64;
        for (c, p) in self.pairings.iter().enumerate() {
            let code = rest % 7;
            rest /= 7;
            packed += tallies(code, p.units);
            states |= u64::from(code) << (4 * c);
        }
        let (units, used) = match &self.reserve_table {
            Some(t) => {
                // The extra digit: the reserves used, and those lost by severity.
                let [used, repulsed, beaten, routed] = t.extras[rest as usize];
                for (severity, lost) in [repulsed, beaten, routed].into_iter().enumerate() {
                    let state = 3 * t.side as u32 + severity as u32 + 1;
                    packed += tallies(state, [lost; 2]);
                }
                (self.units_after(t.side, used as usize), used)
            }
            None => (self.line_units, 0),
        };
        self.outcome(packed, units, used, states)
    }

    /// The fast path: no reserves, every combat a table lookup on its combined face.
    #[inline]
    fn fight_line(&self, dice: &mut DiceStream) -> RatioOutcome {
        let mut word = DiceWord(0);
        let mut packed = 0u64;
        let mut states = 0u64;
        for (c, p) in self.pairings.iter().enumerate() {
            if p.new_word {
                word = dice.word();
            }
            let o = p.outcome[word.take(p.faces) as usize];
            packed += o.packed;
            states |= (o.state as u64) << (4 * c);
        }
        self.outcome(packed, self.line_units, 0, states)
    }

    #[inline(always)]
    fn outcome(
        &self,
        packed: u64,
        units: [u32; 2],
        reserves_used: u32,
        states: u64,
    ) -> RatioOutcome {
        RatioOutcome {
            result: army_result(packed, units),
            cp: [field(packed, CP_A), field(packed, CP_B)],
            reserves_used,
            floor_decided: field(packed, FLOOR_DECIDED),
            states,
        }
    }

    /// One battle by the reserve table, `R` reserves in blocks of `BLOCK` codes, the policy
    /// reading the casualty-point difference (`DIFF`) or not: the same dice as
    /// [`RatioCombat::fight_reserve_loop`]. Returns the packed tallies, the reserves used
    /// and the combat states summed as `STATES` says ([`STATES_NIBBLES`], [`STATES_JOINT`]
    /// or [`STATES_SIGNATURE`]). `looked_up` is scratch, one slot per combat.
    ///
    /// Every reserve die of a battle comes from one word, the one after the line word in
    /// play when the first reserve commits; it is peeked from a copy of the stream, and the
    /// stream draws it once a reserve has committed, so the battle draws the very words the
    /// loop draws. The reserve dice are taken as one number,
    /// `take(6^R)` (exactly the `R` successive `take(6)`s, first die most significant), and
    /// the dice left after `u` are used are its last `R − u` base-6 digits.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)]
    fn table_battle<const R: usize, const BLOCK: usize, const DIFF: bool, const STATES: u8>(
        t: &ReserveTable,
        blocks: &[[u8; BLOCK]],
        looked_up: &mut [u64; MAX_COMBATS],
        dice: &mut DiceStream,
    ) -> (u64, usize, u64) {
        let mut drawn = false;
        // Where the code for `used` lies within a block.
        let mut at = [0usize; MAX_TABLE_RESERVES + 1];
        let mut packed = 0u64;
        let mut states = 0u64;
        let mut used = 0usize;
        for &(first, end) in &t.segments {
            let mut word = dice.word();
            if used == 0 {
                // PERF: the reserve word peeked from a throwaway copy of the stream, which
                // is advanced past it only once a reserve commits (keeping that copy live
                // instead cost four registers through the combats).
                let all = dice.clone().word().take(POW6[R]);
                at[0] = all as usize; // `used_offsets[0]` is 0 and `all` < 6^R.
                for u in 1..=R {
                    at[u] = (t.used_offsets[u] + all % POW6[R - u]) as usize;
                }
            }
            let steps = &t.steps[first..end];
            if DIFF {
                // Each combat's block once the dice are known, then the chain through the
                // difference so far.
                for (slot, step) in looked_up[first..end].iter_mut().zip(steps) {
                    *slot = u64::from(step.first_block) + u64::from(word.take(step.faces));
                }
                for (i, (&block, step)) in looked_up[first..end].iter().zip(steps).enumerate() {
                    let d = (cp_diff(packed, t.side) - t.diff_lo) as usize;
                    let code =
                        blocks[block as usize + d * step.faces as usize][at[used] & (BLOCK - 1)];
                    used += usize::from(code >> CODE_TAKEN) & 7;
                    packed += step.tallies[usize::from(code)];
                    states += Self::state_term::<STATES>(code, step, first + i);
                }
            } else {
                // PERF: the chain carries `8 × used`, which a code's taken bits add to as
                // they stand.
                let mut shift = 8 * used as u32;
                for (i, step) in steps.iter().enumerate() {
                    // PERF: the code for every `used`, one byte each, from the dice alone;
                    // the chain through `used` only shifts one out. (`if used == u { code
                    // = … }` compiled to a branch per `u` around the load, mispredicted
                    // whenever `used` changed. Index loops over the constant `0..=R`
                    // unroll; iterator adapters did not.)
                    let block = &blocks[step.first_block as usize + word.take(step.faces) as usize];
                    let mut all = 0u64;
                    for u in 0..=R {
                        all |= u64::from(block[at[u] & (BLOCK - 1)]) << (8 * u);
                    }
                    let code = (all >> shift) as u8;
                    shift += u32::from(code & CODE_TAKEN_BYTES);
                    packed += step.tallies[usize::from(code)];
                    states += Self::state_term::<STATES>(code, step, first + i);
                }
                used = shift as usize / 8;
            }
            if !drawn && used > 0 {
                dice.word();
                drawn = true;
            }
        }
        (packed, used, states)
    }

    /// A combat's term of the battle's states, as `STATES` says.
    #[inline(always)]
    fn state_term<const STATES: u8>(code: u8, step: &TableStep, combat: usize) -> u64 {
        let state = u64::from(code & 7);
        match STATES {
            STATES_JOINT => state * step.joint_place,
            STATES_SIGNATURE => step.signature_terms[usize::from(code)],
            _ => state << (4 * combat),
        }
    }

    /// Both sides' units at the end of a battle in which the reserve side used `used`.
    /// PERF: not `units[side] += used`: that store into the array, read back whole,
    /// stalled store forwarding (10% of the kernel's samples).
    #[inline(always)]
    fn units_after(&self, side: usize, used: usize) -> [u32; 2] {
        let [a, b] = self.line_units;
        if side == 0 {
            [a + used as u32, b]
        } else {
            [a, b + used as u32]
        }
    }

    /// One battle by the reserve table (see [`RatioCombat::table_battle`]).
    #[inline(always)]
    fn fight_with_table<const R: usize, const BLOCK: usize, const DIFF: bool>(
        &self,
        t: &ReserveTable,
        dice: &mut DiceStream,
    ) -> RatioOutcome {
        let blocks = t.blocks::<BLOCK>();
        let mut looked_up = [0u64; MAX_COMBATS];
        let (packed, used, states) =
            Self::table_battle::<R, BLOCK, DIFF, STATES_NIBBLES>(t, blocks, &mut looked_up, dice);
        let units = self.units_after(t.side, used);
        self.outcome(packed, units, used as u32, states)
    }

    /// `n` battles by the reserve table in [`lanes::LANES`] lanes, each on its own stream
    /// split from `dice` (the AVX2 sweeps of `ratio/lockstep.rs` where the CPU has AVX2,
    /// else [`RatioCombat::table_battle`] lane by lane: the same battles), each battle's
    /// tallies, reserves used and `STATES` handed to `count`. Returns the words drawn from
    /// all streams: the lanes' keys and their battles' words.
    fn table_lanes<const R: usize, const BLOCK: usize, const DIFF: bool, const STATES: u8>(
        t: &ReserveTable,
        dice: &mut DiceStream,
        n: u64,
        count: &mut impl lockstep::CountBattle,
    ) -> u64 {
        let blocks = t.blocks::<BLOCK>();
        let mut looked_up = [0u64; MAX_COMBATS];
        lanes::fight_block(
            dice,
            n,
            count,
            |lanes, count| lockstep::all_at_once::<R, BLOCK, DIFF, STATES>(t, lanes, n, count),
            |dice, count| {
                Self::lane_battle::<R, BLOCK, DIFF, STATES>(t, blocks, &mut looked_up, dice, count)
            },
        )
    }

    /// One battle of a lane fought on its own ([`RatioCombat::table_lanes`] where the
    /// sweeps do not run), handed to `count`. Returns the words it drew: one a segment of
    /// line dice, and the reserve word where a reserve committed.
    #[inline(always)]
    fn lane_battle<const R: usize, const BLOCK: usize, const DIFF: bool, const STATES: u8>(
        t: &ReserveTable,
        blocks: &[[u8; BLOCK]],
        looked_up: &mut [u64; MAX_COMBATS],
        dice: &mut DiceStream,
        count: &mut impl lockstep::CountBattle,
    ) -> u64 {
        let (packed, used, states) =
            Self::table_battle::<R, BLOCK, DIFF, STATES>(t, blocks, looked_up, dice);
        count(packed, used, states);
        t.segments.len() as u64 + u64::from(used > 0)
    }

    /// `n` battles by the reserve table into `h`, through a joint histogram
    /// ([`JointCounts`]) folded into `h` at the end. Returns the words drawn
    /// ([`RatioCombat::table_lanes`]).
    fn table_block<const R: usize, const BLOCK: usize, const DIFF: bool>(
        &self,
        t: &ReserveTable,
        dice: &mut DiceStream,
        n: u64,
        h: &mut RatioHistogram,
    ) -> u64 {
        let mut joint = JointCounts::new(h, self.combats(), R);
        let cp_b_len = h.cp[1].len();
        let mut floored = 0u64;
        let floor_decided = &mut h.floor_decided;
        let words = Self::table_lanes::<R, BLOCK, DIFF, STATES_JOINT>(
            t,
            dice,
            n,
            &mut |packed, used, key| {
                let result_used = std::hint::select_unpredictable(
                    field(packed, CP_A) == field(packed, CP_B),
                    ArmyResult::DRAW * (R + 1) + used,
                    usize::from(t.result_bins[result_key(packed, used)]),
                );
                joint.result_used[result_used] += 1;
                let cp = field(packed, CP_A) as usize * cp_b_len + field(packed, CP_B) as usize;
                joint.cp[cp] += 1;
                // PERF: one and two groups (lines of up to six combats) written out: the
                // loop over the groups was 35 of the count's 86 instructions a battle
                // (callgrind, `profile ratio-rescue`: 193 -> 172 a battle).
                match joint.states.as_mut_slice() {
                    [first] => first[key as usize & 511] += 1,
                    [first, second] => {
                        first[key as usize & 511] += 1;
                        second[(key >> STATE_LANE) as usize & 511] += 1;
                    }
                    groups => {
                        for (g, counts) in groups.iter_mut().enumerate() {
                            counts[(key >> (STATE_LANE * g as u32)) as usize & 511] += 1;
                        }
                    }
                }
                // Floor counts are kept for one or more combats only (rare); the count of
                // none is what is left.
                let floor = field(packed, FLOOR_DECIDED) as usize;
                if floor != 0 {
                    floor_decided[floor] += 1;
                    floored += 1;
                }
            },
        );
        h.floor_decided[0] += n - floored;
        joint.fold_into(h, R);
        words
    }

    /// `n` battles by the reserve table as signatures into `h`'s signature histogram.
    ///
    /// PERF: every tally of a battle with reserves follows from its combat states, the
    /// reserves used, and the reserves that were on the losing side of a combat, by the
    /// severity of that loss (a combat's line units are fixed; a reserve adds to its own
    /// side's units, which count only when that side loses). So one increment of a
    /// signature histogram per battle stands for the result, casualty points, reserves
    /// used, floors and combat states that [`RatioCombat::table_block`] counts one by one
    /// (the army result alone was about 30 instructions when this was measured, before
    /// `table_block` read it from [`ReserveTable::result_bins`]); they are derived from the counts
    /// when the run is folded. The signature is `states + 7^combats × k`, `k` numbering
    /// (used, repulsed, beaten, routed): 15 values for two reserves. Only lines of at most
    /// [`MAX_SIGNATURE_BINS`] signatures use it (see there for the runs measured). Returns
    /// the words drawn ([`RatioCombat::table_lanes`]).
    fn signature_block<const R: usize, const BLOCK: usize, const DIFF: bool>(
        &self,
        t: &ReserveTable,
        dice: &mut DiceStream,
        n: u64,
        h: &mut RatioHistogram,
    ) -> u64 {
        // The place of the extra digit, after every combat's state.
        let extra_place = 7u64.pow(self.combats() as u32);
        let radix = R as u32 + 1;
        Self::table_lanes::<R, BLOCK, DIFF, STATES_SIGNATURE>(t, dice, n, &mut |_, used, terms| {
            let states = terms & ((1 << EXTRA_SHIFT) - 1);
            let losses = (terms >> EXTRA_SHIFT) as u32 & ((1 << (32 - EXTRA_SHIFT)) - 1);
            let extra = t.extra_index[extra_key(used as u32, losses, radix)];
            let floors = terms >> 32 << 32;
            h.record_signature(floors + states + u64::from(extra) * extra_place);
        })
    }

    /// Adds `n` battles drawn from `dice` to `h`. A line [`RatioCombat::bit_sliced`] is
    /// fought in sweeps of 256 battles, one bit each, counted by popcounts into `h`'s
    /// marginals (`ratio/sliced.rs`; the lanes' streams split from `dice` give the planes).
    /// Otherwise, where `h` has signature bins (runs'
    /// histograms, from [`RatioHistogram::for_signatures`], folded with
    /// [`RatioHistogram::fold_signatures`]) the battles are counted as signatures: a line
    /// without reserves by [`RatioCombat::fight_signature`], one with a reserve table by its
    /// signature block. Otherwise by the reserve table's joint counts, or battle by battle.
    ///
    /// A line with a reserve table not bit-sliced is fought in [`lanes::LANES`] lanes, each on its own
    /// stream split from `dice` (which gives the lanes' keys): all at once in AVX2 sweeps
    /// where the CPU has AVX2 (`ratio/lockstep.rs`), else lane by lane, the same battles
    /// (`RatioCombat::table_lanes`). Every other line draws its battles from `dice`
    /// one after another.
    pub fn simulate_block(&self, dice: &mut DiceStream, n: u64, h: &mut RatioHistogram) {
        if self.sliced_block(dice, n, h).is_none() {
            self.block_unsliced(dice, n, h);
        }
    }

    /// [`RatioCombat::simulate_block`] for a line the bit-sliced sweeps do not fight (and
    /// the tests of the kernels below them, for any line): signatures, the reserve table's
    /// joint counts, or battle by battle.
    fn block_unsliced(&self, dice: &mut DiceStream, n: u64, h: &mut RatioHistogram) {
        let signed = h
            .signature_counts()
            .is_some_and(|bins| bins.len() == self.signature_size());
        if signed && self.signature.is_some() {
            for _ in 0..n {
                h.record_signature(self.fight_signature(dice));
            }
            return;
        }
        if let Some(t) = &self.reserve_table {
            let done = if signed {
                with_reserve_table!(self.signature_block(t, dice, n, h))
            } else {
                with_reserve_table!(self.table_block(t, dice, n, h))
            };
            if done.is_some() {
                return;
            }
        }
        for _ in 0..n {
            h.record(&self.fight(dice));
        }
    }

    /// `n` battles bit-sliced into `h` where the line is fought that way (see
    /// [`RatioCombat::bit_sliced`]); returns the words drawn (the lanes' keys and the
    /// planes'), or `None` (nothing fought) for any other line.
    pub fn sliced_block(
        &self,
        dice: &mut DiceStream,
        n: u64,
        h: &mut RatioHistogram,
    ) -> Option<u64> {
        self.sliced
            .as_ref()
            .map(|line| sliced::battle_block(line, dice, n, h))
    }

    /// Whether runs fight this line bit-sliced (`ratio/sliced.rs`): an open battle whose
    /// one committing side holds 1 to [`MAX_SLICED_RESERVES`] reserves and decides each
    /// commitment from the combat's state (always for `rescue` and `press`; for `optimal`
    /// where its solved decisions do).
    pub fn bit_sliced(&self) -> bool {
        self.sliced.is_some()
    }

    /// Faces one bit-sliced battle draws (its line dice and one a reserve), if it is one.
    pub fn sliced_faces(&self) -> Option<u64> {
        self.sliced.as_ref().map(|line| line.faces())
    }

    /// Open battles with reserves: the reserve side decides after each of its dice.
    fn fight_with_reserves(&self, dice: &mut DiceStream) -> RatioOutcome {
        self.reserve_table
            .as_ref()
            .and_then(|t| with_reserve_table!(self.fight_with_table(t, dice)))
            .unwrap_or_else(|| self.fight_reserve_loop(dice))
    }

    /// Open battles with reserves, die by die (where no reserve table is built, and the
    /// reference the table is tested against).
    fn fight_reserve_loop(&self, dice: &mut DiceStream) -> RatioOutcome {
        let mut word = DiceWord(0);
        let mut reserve_word = DiceWord(0);
        let mut reserve_dice_left = 0u32;
        let mut packed = 0u64;
        let mut states = 0u64;
        let mut used = [0usize; 2];
        for (c, p) in self.pairings.iter().enumerate() {
            if p.new_word {
                word = dice.word();
            }
            let mut totals = p.totals[word.take(p.faces) as usize];
            let mut units = p.units;
            for &side in &self.committing {
                let mut here = 0;
                let diff = cp_diff(packed, side);
                while self.commits(side, c, totals, used[side], here, diff) {
                    if reserve_dice_left == 0 {
                        reserve_word = dice.word();
                        reserve_dice_left = 8;
                    }
                    reserve_dice_left -= 1;
                    totals[side] +=
                        reserve_word.take(6) as i32 + self.reserve_mods[side][used[side]];
                    units[side] += 1;
                    used[side] += 1;
                    here += 1;
                }
            }
            let o = self.resolve(totals[0], totals[1], units);
            packed += o.packed;
            states |= (o.state as u64) << (4 * c);
        }
        let units = [
            self.line_units[0] + used[0] as u32,
            self.line_units[1] + used[1] as u32,
        ];
        self.outcome(packed, units, (used[0] + used[1]) as u32, states)
    }

    /// The order in which the two sides of a skirmish decide: the attacker (A) first.
    fn skirmish_step(
        &self,
        totals: &mut [i32; 2],
        units: &mut [u32; 2],
        used: &mut [usize; 2],
        mut die: impl FnMut() -> u32,
    ) {
        loop {
            let mut committed = false;
            for side in 0..2 {
                if self.commits(side, 0, *totals, used[side], used[side], 0) {
                    totals[side] += die() as i32 + self.reserve_mods[side][used[side]];
                    units[side] += 1;
                    used[side] += 1;
                    committed = true;
                }
            }
            if !committed {
                return;
            }
        }
    }

    /// Whether a skirmish escalates: both sides held reserves and committed all of them.
    fn escalates(&self, used: [usize; 2]) -> bool {
        (0..2).all(|s| !self.reserve_mods[s].is_empty() && used[s] == self.reserve_mods[s].len())
    }

    fn fight_skirmish(&self, dice: &mut DiceStream) -> RatioOutcome {
        let p = &self.pairings[0];
        let mut word = dice.word();
        let mut totals = p.totals[word.take(p.faces) as usize];
        let mut units = p.units;
        let mut used = [0usize; 2];
        // Four reserve dice at most: they come from the same word.
        self.skirmish_step(&mut totals, &mut units, &mut used, || word.take(6));
        let o = self.resolve(totals[0], totals[1], units);
        let reserves_used = (used[0] + used[1]) as u32;
        if self.escalates(used) {
            let open = self
                .escalation
                .as_ref()
                .expect("validated: a skirmish has its armies");
            let mut battle = open.fight(dice);
            battle.result += 9;
            battle.reserves_used = reserves_used;
            battle.states = o.state as u64;
            return battle;
        }
        self.outcome(o.packed, units, reserves_used, o.state as u64)
    }
}

/// The enemy's casualty points minus `side`'s.
#[inline(always)]
fn cp_diff(packed: u64, side: usize) -> i32 {
    let a = field(packed, CP_A) as i32;
    let b = field(packed, CP_B) as i32;
    if side == 0 {
        b - a
    } else {
        a - b
    }
}

fn validate(battle: &RatioBattle) -> Result<(), RulesError> {
    let sides = ["a", "b"];
    for (s, units) in battle.units.iter().enumerate() {
        if units.is_empty() || units.len() > MAX_UNITS {
            return Err(err(
                format!("side.{}.units", sides[s]),
                format!("a side fields 1 to {MAX_UNITS} units, got {}", units.len()),
            ));
        }
        for u in units {
            if !(MODIFIER_RANGE.0..=MODIFIER_RANGE.1).contains(&u.modifier) {
                return Err(err(
                    format!("side.{}.units", sides[s]),
                    format!(
                        "unit {}: its total modifier must be {} to +{}, got {}",
                        u.name, MODIFIER_RANGE.0, MODIFIER_RANGE.1, u.modifier
                    ),
                ));
            }
        }
    }
    if battle.line.is_empty() || battle.line.len() > MAX_COMBATS {
        return Err(err(
            "line",
            format!(
                "a line holds 1 to {MAX_COMBATS} combats, got {}",
                battle.line.len()
            ),
        ));
    }
    let larger = match battle.units[0].len().cmp(&battle.units[1].len()) {
        std::cmp::Ordering::Greater => Some(0),
        std::cmp::Ordering::Less => Some(1),
        std::cmp::Ordering::Equal => None,
    };
    let name = |s: usize, u: usize| {
        battle.units[s]
            .get(u)
            .map_or_else(|| format!("#{}", u + 1), |x| x.name.clone())
    };
    let mut placed = [
        vec![false; battle.units[0].len()],
        vec![false; battle.units[1].len()],
    ];
    for (c, p) in battle.line.iter().enumerate() {
        let field = format!("line[{c}]");
        for (s, members) in [&p.a, &p.b].into_iter().enumerate() {
            if members.is_empty() {
                return Err(err(
                    &field,
                    format!(
                        "every combat needs at least one unit of side {}",
                        sides[s].to_uppercase()
                    ),
                ));
            }
            if members.len() > 2 {
                return Err(err(
                    &field,
                    format!(
                        "at most two units may oppose one enemy unit (a double); this combat has {} of side {}",
                        members.len(),
                        sides[s].to_uppercase()
                    ),
                ));
            }
            for &u in members {
                if u >= battle.units[s].len() {
                    return Err(err(
                        &field,
                        format!("side {} has no unit {}", sides[s].to_uppercase(), u + 1),
                    ));
                }
                if placed[s][u] {
                    return Err(err(
                        &field,
                        format!(
                            "unit {} is in two pairings; each unit fights in one combat",
                            name(s, u)
                        ),
                    ));
                }
                placed[s][u] = true;
            }
        }
        if p.a.len() == 2 && p.b.len() == 2 {
            return Err(err(
                &field,
                "a double is two units against ONE enemy unit; 2 v 2 is two combats of 1 v 1",
            ));
        }
        for s in 0..2 {
            if [&p.a, &p.b][s].len() == 2 && larger != Some(s) && !battle.skirmish {
                return Err(err(
                    &field,
                    format!(
                        "a double on the smaller side: only the side with more units (here {}) may put two units against one",
                        larger.map_or("neither: both have the same number".to_string(), |l| sides[l].to_uppercase())
                    ),
                ));
            }
        }
    }
    for s in 0..2 {
        for &u in &battle.reserves[s] {
            if u >= battle.units[s].len() {
                return Err(err(
                    format!("reserve.{}", sides[s]),
                    format!("side {} has no unit {}", sides[s].to_uppercase(), u + 1),
                ));
            }
            if placed[s][u] {
                return Err(err(
                    format!("reserve.{}", sides[s]),
                    format!(
                        "unit {} is both in the line and in reserve (or in reserve twice)",
                        name(s, u)
                    ),
                ));
            }
            placed[s][u] = true;
        }
        if let Some(u) = placed[s].iter().position(|p| !p) {
            return Err(err(
                "line",
                format!(
                    "unit {} is neither in a pairing nor in reserve; put it in a pairing (e.g. as a double) or in reserve",
                    name(s, u)
                ),
            ));
        }
    }
    let held = [battle.reserves[0].len(), battle.reserves[1].len()];
    if battle.skirmish {
        if battle.line.len() != 1 || battle.line[0].a.len() != 1 || battle.line[0].b.len() != 1 {
            return Err(err(
                "skirmish",
                "a skirmish starts with one unit a side: its line is a single 1 v 1 combat",
            ));
        }
        for s in 0..2 {
            if held[s] > MAX_SKIRMISH_RESERVES {
                return Err(err(
                    format!("reserve.{}", sides[s]),
                    format!(
                        "a skirmish has up to {MAX_SKIRMISH_RESERVES} reserves a side, got {}",
                        held[s]
                    ),
                ));
            }
            if battle.policy[s] == ReservePolicy::Optimal {
                return Err(err(
                    format!("side.{}.policy", sides[s]),
                    "optimal is for open battles, where one side commits; in a skirmish both sides commit (allowed: none, rescue, press)",
                ));
            }
        }
        if battle.escalation.is_none() {
            return Err(err(
                "escalation",
                "a skirmish needs the full armies it escalates to",
            ));
        }
    } else {
        if held[0] > 0 && held[1] > 0 {
            return Err(err(
                "reserve",
                "reserves on both sides outside a skirmish: only the larger side keeps reserves in an open battle",
            ));
        }
        for s in 0..2 {
            if held[s] > MAX_RESERVES {
                return Err(err(
                    format!("reserve.{}", sides[s]),
                    format!("at most {MAX_RESERVES} reserves, got {}", held[s]),
                ));
            }
            if held[s] > 0 && larger != Some(s) {
                return Err(err(
                    format!("reserve.{}", sides[s]),
                    format!(
                        "only the side with more units may keep reserves; side {} has {} units, side {} has {}",
                        sides[s].to_uppercase(),
                        battle.units[s].len(),
                        sides[1 - s].to_uppercase(),
                        battle.units[1 - s].len()
                    ),
                ));
            }
        }
    }
    if let MinScore::Floor(m) = battle.min_score {
        if !(1..=6).contains(&m) {
            return Err(err(
                "min_score",
                format!("the min-score floor must be 1 to 6, or \"none\"; got {m}"),
            ));
        }
    }
    Ok(())
}

impl RatioCombat {
    /// Backward induction for the `optimal` policy of `side`: the value of each state is
    /// the better of stopping (this combat's result, then the rest of the battle) and
    /// committing one more reserve (the average over its die).
    fn solve_optimal(&self, side: usize) -> Result<OptimalPolicy, RulesError> {
        let objective = self.battle.objective;
        let mods = &self.reserve_mods[side];
        let reserves = mods.len();
        let (rmin, rmax) = (
            mods.iter().map(|&m| m.min(0)).sum::<i32>(),
            mods.iter().map(|&m| 5 + m.max(0)).sum::<i32>(),
        );
        let mut own_lo = Vec::new();
        let mut own_len = Vec::new();
        let mut opp_lo = Vec::new();
        let mut opp_len = Vec::new();
        let mut offsets = Vec::new();
        let max_cp =
            [0, 1].map(|s| 3 * (self.line_units[s] as i32 + self.reserve_mods[s].len() as i32));
        let (diff_lo, diff_len) = match objective {
            Objective::CpDifference => (0, 1),
            Objective::WinProbability => (
                -max_cp[side],
                (max_cp[side] + max_cp[1 - side] + 1) as usize,
            ),
        };
        let r = reserves + 1;
        let mut size = 0usize;
        for p in &self.pairings {
            let own = p.totals.iter().map(|t| t[side]);
            let opp = p.totals.iter().map(|t| t[1 - side]);
            let lo = own.clone().min().unwrap_or(0) + rmin;
            let hi = own.max().unwrap_or(0) + rmax;
            own_lo.push(lo);
            own_len.push((hi - lo + 1) as usize);
            let (olo, ohi) = (opp.clone().min().unwrap_or(0), opp.max().unwrap_or(0));
            opp_lo.push(olo);
            opp_len.push((ohi - olo + 1) as usize);
            offsets.push(size);
            size = size.saturating_add(
                r * r * diff_len * own_len.last().unwrap() * opp_len.last().unwrap(),
            );
        }
        if size > MAX_POLICY_STATES {
            return Err(err(
                format!("side.{}.policy", ["a", "b"][side]),
                format!(
                    "optimal needs {size} decision states here, more than {MAX_POLICY_STATES}; use fewer reserves or combats, or objective \"cp\""
                ),
            ));
        }
        let mut policy = OptimalPolicy {
            side,
            objective,
            reserves,
            own_lo,
            own_len,
            opp_lo,
            opp_len,
            diff_lo,
            diff_len,
            offsets,
            commit: vec![false; size],
            value: 0.0,
        };
        // next[used][diff]: value of the battle from the start of the next combat.
        let terminal = |diff: i32| match objective {
            Objective::CpDifference => 0.0,
            Objective::WinProbability => f64::from(u8::from(diff > 0)),
        };
        let diffs: Vec<i32> = (0..diff_len as i32).map(|d| diff_lo + d).collect();
        let mut next: Vec<Vec<f64>> = vec![diffs.iter().map(|&d| terminal(d)).collect(); r];
        for c in (0..self.pairings.len()).rev() {
            let block = policy.offsets.get(c + 1).copied().unwrap_or(size) - policy.offsets[c];
            let mut memo = vec![f64::NAN; block];
            let p = &self.pairings[c];
            let mut here_values = vec![vec![0.0; diff_len]; r];
            for (used, row) in here_values.iter_mut().enumerate() {
                for (value, &diff) in row.iter_mut().zip(&diffs) {
                    if crate::interrupt::requested() {
                        return Err(err(
                            format!("side.{}.policy", ["a", "b"][side]),
                            "interrupted while solving the optimal policy",
                        ));
                    }
                    let mut sum = 0.0;
                    for t in &p.totals {
                        sum += self.optimal_value_at(
                            &mut policy,
                            &next,
                            &mut memo,
                            c,
                            used,
                            0,
                            diff,
                            t[side],
                            t[1 - side],
                        );
                    }
                    *value = sum / f64::from(p.faces);
                }
            }
            next = here_values;
        }
        let start = if diff_len == 1 {
            0
        } else {
            (-diff_lo) as usize
        };
        policy.value = next[0][start];
        Ok(policy)
    }

    /// The value of a state within combat `c` and records the decision.
    #[allow(clippy::too_many_arguments)]
    fn optimal_value_at(
        &self,
        policy: &mut OptimalPolicy,
        next: &[Vec<f64>],
        memo: &mut [f64],
        c: usize,
        used: usize,
        here: usize,
        diff: i32,
        own: i32,
        opp: i32,
    ) -> f64 {
        let index = policy.index(c, used, here, diff, own, opp);
        let key = index - policy.offsets[c];
        if !memo[key].is_nan() {
            return memo[key];
        }
        let side = policy.side;
        let p = &self.pairings[c];
        let mut units = p.units;
        units[side] += here as u32;
        let totals = if side == 0 { [own, opp] } else { [opp, own] };
        let o = self.resolve(totals[0], totals[1], units);
        let gain = cp_diff(o.packed, side);
        let stop = match policy.objective {
            Objective::CpDifference => f64::from(gain) + next[used][0],
            Objective::WinProbability => {
                // Unreachable differences at the edge of the range are clamped.
                let d = (diff + gain - policy.diff_lo).clamp(0, policy.diff_len as i32 - 1);
                next[used][d as usize]
            }
        };
        let mut best = stop;
        if used < policy.reserves {
            let m = self.reserve_mods[side][used];
            let mut sum = 0.0;
            for face in 0..6 {
                sum += self.optimal_value_at(
                    policy,
                    next,
                    memo,
                    c,
                    used + 1,
                    here + 1,
                    diff,
                    own + face + m,
                    opp,
                );
            }
            let commit = sum / 6.0;
            // Ties stop: a reserve kept is never worse.
            if commit > stop + 1e-12 {
                best = commit;
                policy.commit[index] = true;
            }
        }
        memo[key] = best;
        best
    }
}

/// Exact distribution of a battle: integer counts over `total = 6^(dice)`, where every
/// reserve die is counted whether it is rolled or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RatioDistribution {
    pub total: u128,
    pub result: [u128; ArmyResult::COUNT],
    pub cp: [Vec<u128>; 2],
    pub reserves_used: Vec<u128>,
    pub floor_decided: Vec<u128>,
    pub combat_states: Vec<[u128; CombatState::COUNT]>,
}

impl RatioDistribution {
    fn empty(combat: &RatioCombat, total: u128) -> Self {
        let max_cp = combat.max_cp();
        let combats = if combat.battle.skirmish {
            1
        } else {
            combat.combats()
        };
        let floors = combat
            .escalation
            .as_ref()
            .map_or(0, |e| e.combats())
            .max(combats);
        Self {
            total,
            result: [0; ArmyResult::COUNT],
            cp: max_cp.map(|m| vec![0; m as usize + 1]),
            reserves_used: vec![0; combat.reserve_count() + 1],
            floor_decided: vec![0; floors + 1],
            combat_states: vec![[0; CombatState::COUNT]; combats],
        }
    }

    pub fn probability(count: u128, total: u128) -> f64 {
        count as f64 / total as f64
    }

    /// P(result slot).
    pub fn p_result(&self, index: usize) -> f64 {
        Self::probability(self.result[index], self.total)
    }

    /// Counts of a side winning (plain and escalated).
    pub fn wins(&self, side: usize) -> u128 {
        (0..ArmyResult::COUNT)
            .filter(|&i| ArmyResult::winner(i) == Some(side))
            .map(|i| self.result[i])
            .sum()
    }

    /// Sum of `value × count` over a distribution.
    pub fn weighted(counts: &[u128]) -> u128 {
        counts.iter().enumerate().map(|(v, c)| v as u128 * c).sum()
    }
}

/// The key of an enumeration state: reserves used per side and the packed tallies.
type EnumerationKey = (u8, u8, u64);

impl RatioCombat {
    /// The exact distribution, or `None` when more than `budget` states would be visited
    /// (or the common denominator would not fit in 128 bits).
    pub fn distribution(&self, budget: usize) -> Option<RatioDistribution> {
        if self.battle.skirmish {
            return self.skirmish_distribution(budget);
        }
        let dice = self.line_dice() + self.reserve_count() as u32;
        if dice > 45 {
            return None;
        }
        let reserve_weight = 6u128.pow(self.reserve_count() as u32);
        let mut live: HashMap<EnumerationKey, u128> = HashMap::from([((0, 0, 0), reserve_weight)]);
        let mut combat_states = Vec::with_capacity(self.combats());
        let mut visited = 0usize;
        for (c, p) in self.pairings.iter().enumerate() {
            let mut next: HashMap<EnumerationKey, u128> = HashMap::new();
            let mut states = [0u128; CombatState::COUNT];
            for (&(ua, ub, packed), &weight) in &live {
                for t in &p.totals {
                    visited += 1;
                    // A stop request ends the enumeration as if over budget; the caller
                    // sees the request and reports the run as interrupted.
                    if visited > budget || (visited & 0xFFF == 0 && crate::interrupt::requested()) {
                        return None;
                    }
                    let mut used = [ua as usize, ub as usize];
                    self.enumerate_commits(
                        c,
                        *t,
                        p.units,
                        &mut used,
                        [0, 0],
                        packed,
                        weight,
                        0,
                        &mut |totals, units, used, w| {
                            let o = self.resolve(totals[0], totals[1], units);
                            states[o.state as usize] += w;
                            *next
                                .entry((used[0] as u8, used[1] as u8, packed + o.packed))
                                .or_insert(0) += w;
                        },
                    );
                }
            }
            combat_states.push(states);
            live = next;
        }
        let total = reserve_weight * 6u128.pow(self.line_dice());
        let mut d = RatioDistribution::empty(self, total);
        // Marginals of combat c are counted over the dice up to c; later combats multiply
        // every path by the same number of faces.
        for (c, states) in combat_states.into_iter().enumerate() {
            let later: u128 = self.pairings[c + 1..]
                .iter()
                .map(|p| u128::from(p.faces))
                .product();
            d.combat_states[c] = states.map(|s| s * later);
        }
        for ((ua, ub, packed), w) in live {
            let units = [
                self.line_units[0] + u32::from(ua),
                self.line_units[1] + u32::from(ub),
            ];
            let o = self.outcome(packed, units, u32::from(ua) + u32::from(ub), 0);
            d.add(&o, w);
        }
        Some(d)
    }

    /// Every way the reserve sides can feed this combat, with its weight: a committed
    /// reserve splits the weight six ways (its die), as if every reserve die were rolled.
    #[allow(clippy::too_many_arguments)]
    fn enumerate_commits(
        &self,
        c: usize,
        totals: [i32; 2],
        units: [u32; 2],
        used: &mut [usize; 2],
        here: [usize; 2],
        packed: u64,
        weight: u128,
        side_from: usize,
        emit: &mut dyn FnMut([i32; 2], [u32; 2], [usize; 2], u128),
    ) {
        for side in side_from..2 {
            if self.commits(
                side,
                c,
                totals,
                used[side],
                here[side],
                cp_diff(packed, side),
            ) {
                let m = self.reserve_mods[side][used[side]];
                used[side] += 1;
                for face in 0..6 {
                    let mut t = totals;
                    t[side] += face + m;
                    let mut u = units;
                    u[side] += 1;
                    let mut h = here;
                    h[side] += 1;
                    self.enumerate_commits(c, t, u, used, h, packed, weight / 6, side, emit);
                }
                used[side] -= 1;
                return;
            }
        }
        emit(totals, units, *used, weight);
    }

    fn skirmish_distribution(&self, budget: usize) -> Option<RatioDistribution> {
        let open = self.escalation.as_ref()?.distribution(budget)?;
        let reserve_weight = 6u128.pow(self.reserve_count() as u32);
        let p = &self.pairings[0];
        let own_total = reserve_weight * u128::from(p.faces);
        let total = own_total.checked_mul(open.total)?;
        let mut d = RatioDistribution::empty(self, total);
        for t in &p.totals {
            self.skirmish_pass(
                *t,
                p.units,
                [0, 0],
                reserve_weight,
                0,
                false,
                &mut |totals, units, used, w| {
                    let o = self.resolve(totals[0], totals[1], units);
                    d.combat_states[0][o.state as usize] += w * open.total;
                    let reserves_used = (used[0] + used[1]) as u32;
                    if self.escalates(used) {
                        d.reserves_used[reserves_used as usize] += w * open.total;
                        for (i, &count) in open.result.iter().enumerate().take(9) {
                            d.result[9 + i] += w * count;
                        }
                        for s in 0..2 {
                            for (v, &count) in open.cp[s].iter().enumerate() {
                                d.cp[s][v] += w * count;
                            }
                        }
                        for (v, &count) in open.floor_decided.iter().enumerate() {
                            d.floor_decided[v] += w * count;
                        }
                    } else {
                        let out = self.outcome(o.packed, units, reserves_used, 0);
                        d.add(&out, w * open.total);
                    }
                },
            );
        }
        Some(d)
    }

    /// The skirmish's commitment sequence, every die: it replays the kernel's passes —
    /// within a pass A decides, then B, on the totals as they stand; a pass with no
    /// commitment ends the combat.
    #[allow(clippy::too_many_arguments)]
    fn skirmish_pass(
        &self,
        totals: [i32; 2],
        units: [u32; 2],
        used: [usize; 2],
        weight: u128,
        side: usize,
        committed_this_pass: bool,
        emit: &mut dyn FnMut([i32; 2], [u32; 2], [usize; 2], u128),
    ) {
        if side == 2 {
            if committed_this_pass {
                return self.skirmish_pass(totals, units, used, weight, 0, false, emit);
            }
            return emit(totals, units, used, weight);
        }
        if self.commits(side, 0, totals, used[side], used[side], 0) {
            let m = self.reserve_mods[side][used[side]];
            for face in 0..6 {
                let mut t = totals;
                t[side] += face + m;
                let mut u = units;
                u[side] += 1;
                let mut us = used;
                us[side] += 1;
                self.skirmish_pass(t, u, us, weight / 6, side + 1, true, emit);
            }
        } else {
            self.skirmish_pass(
                totals,
                units,
                used,
                weight,
                side + 1,
                committed_this_pass,
                emit,
            );
        }
    }
}

impl RatioDistribution {
    fn add(&mut self, o: &RatioOutcome, w: u128) {
        self.result[o.result] += w;
        self.cp[0][o.cp[0] as usize] += w;
        self.cp[1][o.cp[1] as usize] += w;
        self.reserves_used[o.reserves_used as usize] += w;
        self.floor_decided[o.floor_decided as usize] += w;
    }
}

/// PERF: a battle with reserves touched ten counters of [`RatioHistogram`] (result, both
/// sides' casualty points, reserves used, floor, five combat states): ~90 instructions a
/// battle, more than the reserve table's lookups. A block of battles counts joint bins
/// instead — (result, reserves used), (casualty points of A, of B) and the states of each
/// group of [`STATE_GROUP`] combats, four increments for five combats, every bin in L1 —
/// and folds them into the marginals once, at the end of the block ([`Self::fold_into`]).
struct JointCounts {
    /// `result × (R + 1) + used`.
    result_used: Vec<u64>,
    /// `cp_a × (cp_b values) + cp_b`.
    cp: Vec<u64>,
    /// Per group of combats, its states as a base-7 number, first combat least significant.
    states: Vec<[u64; 1 << STATE_LANE]>,
    combats: usize,
}

impl JointCounts {
    fn new(h: &RatioHistogram, combats: usize, reserves: usize) -> Self {
        Self {
            result_used: vec![0; ArmyResult::COUNT * (reserves + 1)],
            cp: vec![0; h.cp[0].len() * h.cp[1].len()],
            states: vec![[0; 1 << STATE_LANE]; combats.div_ceil(STATE_GROUP)],
            combats,
        }
    }

    /// Adds the marginals of these joint counts to `h`.
    fn fold_into(self, h: &mut RatioHistogram, reserves: usize) {
        for (i, &count) in self.result_used.iter().enumerate() {
            h.result[i / (reserves + 1)] += count;
            h.reserves_used[i % (reserves + 1)] += count;
        }
        let cp_b_len = h.cp[1].len();
        for (i, &count) in self.cp.iter().enumerate() {
            h.cp[0][i / cp_b_len] += count;
            h.cp[1][i % cp_b_len] += count;
        }
        for (g, counts) in self.states.iter().enumerate() {
            let first = g * STATE_GROUP;
            let in_group = (self.combats - first).min(STATE_GROUP);
            for (key, &count) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
                let mut rest = key;
                for combat in &mut h.combat_states[first..first + in_group] {
                    combat[rest % 7] += count;
                    rest /= 7;
                }
            }
        }
    }
}

/// Counts of simulated battles, in the shape of [`RatioDistribution`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RatioHistogram {
    pub result: [u64; ArmyResult::COUNT],
    pub cp: [Vec<u64>; 2],
    pub reserves_used: Vec<u64>,
    pub floor_decided: Vec<u64>,
    pub combat_states: Vec<[u64; CombatState::COUNT]>,
    /// Counts per signature while the signature kernel runs; folded into the other
    /// fields by [`RatioHistogram::fold_signatures`].
    pub signatures: Vec<u64>,
    /// The bins [`RatioCombat::simulate_block`] gives `signatures` when it first counts
    /// into this histogram (0: it counts without signatures). PERF: bins are allocated
    /// only where battles are counted, not for every empty histogram a parallel fold
    /// starts from (up to 0.9 MiB each).
    #[serde(skip)]
    signature_bins: usize,
}

impl RatioHistogram {
    pub fn new(combat: &RatioCombat) -> Self {
        let d = RatioDistribution::empty(combat, 1);
        Self {
            result: [0; ArmyResult::COUNT],
            cp: [vec![0; d.cp[0].len()], vec![0; d.cp[1].len()]],
            reserves_used: vec![0; d.reserves_used.len()],
            floor_decided: vec![0; d.floor_decided.len()],
            combat_states: vec![[0; CombatState::COUNT]; d.combat_states.len()],
            signatures: Vec::new(),
            signature_bins: 0,
        }
    }

    /// The histogram a run fills with [`RatioCombat::simulate_block`]: it counts
    /// signatures where the combat has a signature kernel, in bins allocated by the first
    /// block counted.
    pub fn for_signatures(combat: &RatioCombat) -> Self {
        Self {
            signature_bins: combat.signature_size(),
            ..Self::new(combat)
        }
    }

    /// The signature bins, allocated on first use: what [`RatioCombat::simulate_block`]
    /// counts into when this histogram counts signatures.
    fn signature_counts(&mut self) -> Option<&mut Vec<u64>> {
        if self.signature_bins == 0 {
            return None;
        }
        if self.signatures.is_empty() {
            self.signatures = vec![0; self.signature_bins];
        }
        Some(&mut self.signatures)
    }

    /// The histogram of one block folded on its own (a paired comparison's block): with
    /// signature bins only where there are at most [`crate::sim::BLOCK_TRIALS`] of them,
    /// so that its fold visits at most one bin a battle.
    pub fn for_block(combat: &RatioCombat) -> Self {
        if combat.signature_size() <= crate::sim::BLOCK_TRIALS as usize {
            Self::for_signatures(combat)
        } else {
            Self::new(combat)
        }
    }

    /// Counts one signature into bins [`RatioHistogram::signature_counts`] allocated. Floor
    /// counts are kept for one or more combats only (rare); the count of none is what is
    /// left when the signatures are folded.
    #[inline(always)]
    fn record_signature(&mut self, signature: u64) {
        self.signatures[signature as u32 as usize] += 1;
        let floored = (signature >> 32) as usize;
        if floored != 0 {
            self.floor_decided[floored] += 1;
        }
    }

    /// Folds signature counts into results, casualty points, reserves used and combat
    /// states, and empties the bins: folding, merging more and folding again gives what one
    /// fold of everything gives (nothing to do without signatures).
    pub fn fold_signatures(&mut self, combat: &RatioCombat) {
        let signatures = std::mem::take(&mut self.signatures);
        for (signature, &count) in signatures.iter().enumerate() {
            if count == 0 {
                continue;
            }
            let o = combat.decode_signature(signature as u64);
            self.result[o.result] += count;
            self.cp[0][o.cp[0] as usize] += count;
            self.cp[1][o.cp[1] as usize] += count;
            self.reserves_used[o.reserves_used as usize] += count;
            for (c, counts) in self.combat_states.iter_mut().enumerate() {
                counts[((o.states >> (4 * c)) & 0xf) as usize] += count;
            }
        }
        // Every battle is in one floor bin: the signatures counted only battles the floor
        // decided a combat of, and none is what is left.
        let floored: u64 = self.floor_decided[1..].iter().sum();
        self.floor_decided[0] = self.trials() - floored;
    }

    pub fn trials(&self) -> u64 {
        self.result.iter().sum()
    }

    #[inline(always)]
    pub fn record(&mut self, o: &RatioOutcome) {
        self.result[o.result] += 1;
        self.cp[0][o.cp[0] as usize] += 1;
        self.cp[1][o.cp[1] as usize] += 1;
        self.reserves_used[o.reserves_used as usize] += 1;
        self.floor_decided[o.floor_decided as usize] += 1;
        for (c, counts) in self.combat_states.iter_mut().enumerate() {
            counts[((o.states >> (4 * c)) & 0xf) as usize] += 1;
        }
    }
}

impl crate::sim::Histogram for RatioHistogram {
    fn merge(&mut self, other: Self) {
        let add = |m: &mut [u64], t: &[u64]| m.iter_mut().zip(t).for_each(|(a, b)| *a += b);
        add(&mut self.result, &other.result);
        add(&mut self.cp[0], &other.cp[0]);
        add(&mut self.cp[1], &other.cp[1]);
        add(&mut self.reserves_used, &other.reserves_used);
        add(&mut self.floor_decided, &other.floor_decided);
        for (m, t) in self.combat_states.iter_mut().zip(&other.combat_states) {
            add(m, t);
        }
        // Finished counts and those no block counted into have no signature bins.
        self.signature_bins = self.signature_bins.max(other.signature_bins);
        if self.signatures.is_empty() {
            self.signatures = other.signatures;
        } else {
            add(&mut self.signatures, &other.signatures);
        }
    }
}

/// Simulates `trials` battles with the parallel driver.
pub fn simulate_battles(
    combat: &RatioCombat,
    seed: u64,
    trials: u64,
    control: &crate::sim::RunControl,
) -> Result<RatioHistogram, crate::sim::Interrupted> {
    let mut h = crate::sim::run_blocks(
        seed,
        trials,
        || RatioHistogram::for_signatures(combat),
        |dice, n, h| combat.simulate_block(dice, n, h),
        control,
    )?;
    h.fold_signatures(combat);
    Ok(h)
}

/// Parses a quick line such as `"1v1,1v1,2v1"` into pairings, numbering each side's units
/// in line order. Returns the pairings and the units per side.
pub fn parse_line(text: &str) -> Result<(Vec<Pairing>, [usize; 2]), String> {
    let mut line = Vec::new();
    let mut next = [0usize; 2];
    for (i, part) in text.split(',').enumerate() {
        let part = part.trim();
        let (a, b) = part.split_once(['v', 'V']).ok_or_else(|| {
            format!(
                "combat {} (\"{part}\"): write each combat as <A units>v<B units>, e.g. 1v1 or 2v1",
                i + 1
            )
        })?;
        let count = |s: &str| {
            s.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=2).contains(n))
                .ok_or_else(|| {
                    format!(
                        "combat {} (\"{part}\"): each side puts 1 or 2 units into a combat",
                        i + 1
                    )
                })
        };
        let (na, nb) = (count(a)?, count(b)?);
        let a: Vec<usize> = (next[0]..next[0] + na).collect();
        let b: Vec<usize> = (next[1]..next[1] + nb).collect();
        next[0] += na;
        next[1] += nb;
        line.push(Pairing { a, b });
    }
    Ok((line, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(prefix: &str, mods: &[i32]) -> Vec<Unit> {
        mods.iter()
            .enumerate()
            .map(|(i, &m)| Unit {
                name: format!("{prefix}{}", i + 1),
                modifier: m,
            })
            .collect()
    }

    pub(crate) fn one_v_one(a: i32, b: i32) -> RatioBattle {
        RatioBattle {
            units: [units("A", &[a]), units("B", &[b])],
            line: vec![Pairing {
                a: vec![0],
                b: vec![0],
            }],
            reserves: [vec![], vec![]],
            policy: [ReservePolicy::Rescue; 2],
            objective: Objective::CpDifference,
            min_score: MinScore::Floor(1),
            skirmish: false,
            escalation: None,
        }
    }

    /// The same battle with the sides' units, reserves and pairings swapped.
    fn swap_sides(battle: &mut RatioBattle) {
        battle.units.swap(0, 1);
        battle.reserves.swap(0, 1);
        for p in &mut battle.line {
            std::mem::swap(&mut p.a, &mut p.b);
        }
    }

    /// A line of the reserve-table tests: `text` with `reserves` for A under `policy`, A's
    /// line units at modifiers −1, 0 and +1 in turn, the sides swapped where `mirrored`.
    fn table_case(
        text: &str,
        reserves: usize,
        policy: ReservePolicy,
        objective: Objective,
        min_score: MinScore,
        mirrored: bool,
    ) -> RatioCombat {
        let mut battle = crate::systems::ratio::scenarios::ratio_line(text, reserves, 0, policy);
        battle.objective = objective;
        battle.min_score = min_score;
        for (i, u) in battle.units[0].iter_mut().enumerate() {
            u.modifier = i as i32 % 3 - 1;
        }
        if mirrored {
            swap_sides(&mut battle);
        }
        RatioCombat::new(battle).unwrap()
    }

    #[test]
    fn reserve_table_draws_the_same_dice_as_the_loop() {
        let (mut tables, mut reading_diff, mut two_words, mut side_b) = (0, 0, 0, 0);
        let (mut floored, mut signed, mut extras_seen) = (0, 0, 0);
        // Joint counts of lines with one, two and three groups of combat states.
        let mut state_groups = [0; 3];
        // The fifth line has 16 line dice: two line words, so the first reserve may commit
        // before or after the second is drawn. The last has seven combats: three groups of
        // states in its joint counts.
        for text in [
            "1v1,1v1,1v1,1v1,2v1",
            "2v1,1v1",
            "1v1,1v1,1v1",
            "1v1,1v1",
            "2v1,2v1,2v1,2v1,1v1,1v1",
            "1v1,1v1,1v1,1v1,1v1,1v1,1v1",
        ] {
            for reserves in [1, 2, 3, 4] {
                for policy in [
                    ReservePolicy::Rescue,
                    ReservePolicy::Press,
                    ReservePolicy::Optimal,
                ] {
                    for objective in [Objective::CpDifference, Objective::WinProbability] {
                        for min_score in [MinScore::Floor(1), MinScore::None] {
                            for mirrored in [false, true] {
                                let combat = table_case(
                                    text, reserves, policy, objective, min_score, mirrored,
                                );
                                let Some(t) = &combat.reserve_table else {
                                    continue;
                                };
                                tables += 1;
                                reading_diff += usize::from(t.diff_len > 1);
                                two_words += usize::from(t.segments.len() > 1);
                                side_b += t.side;
                                let mut a = DiceStream::for_block(11, 2);
                                let mut b = a.clone();
                                for _ in 0..20_000 {
                                    assert_eq!(
                                        combat.fight_with_reserves(&mut a),
                                        combat.fight_reserve_loop(&mut b)
                                    );
                                }
                                assert_eq!(a, b);
                                // The block kernel's signatures or joint histogram,
                                // folded, count what battle-by-battle recording counts, on
                                // the same dice: each lane's share on its own stream. Then
                                // a histogram without signature bins: the joint counts,
                                // whatever the line's length.
                                for (n, signature_bins) in [(5_000, true), (2_000, false)] {
                                    let fresh = || match signature_bins {
                                        true => RatioHistogram::for_signatures(&combat),
                                        false => RatioHistogram::new(&combat),
                                    };
                                    let mut joint = fresh();
                                    combat.block_unsliced(&mut a, n, &mut joint);
                                    if !signature_bins {
                                        let groups = combat.combats().div_ceil(STATE_GROUP);
                                        state_groups[groups - 1] += 1;
                                    } else if combat.has_signature() {
                                        signed += 1;
                                        let states = 7u32.pow(combat.combats() as u32);
                                        extras_seen += joint
                                            .signatures
                                            .iter()
                                            .enumerate()
                                            .filter(|&(i, &n)| n > 0 && i as u32 >= states)
                                            .count();
                                    }
                                    joint.fold_signatures(&combat);
                                    // (`record` leaves the signature bins alone.)
                                    let (each, _) = lane_by_lane(&combat, &mut b, n, fresh());
                                    assert_eq!(joint, each);
                                    assert_eq!(a, b);
                                    if signature_bins {
                                        floored += usize::from(each.floor_decided[0] < n);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(tables >= 300, "{tables} tables built");
        assert!(
            state_groups.iter().all(|&n| n >= 20),
            "joint counts of 1, 2, 3 groups of states: {state_groups:?}"
        );
        assert!(
            reading_diff >= 20,
            "{reading_diff} tables read the difference"
        );
        assert!(two_words >= 30, "{two_words} tables span two line words");
        assert!(side_b >= 150, "{side_b} tables for side B");
        assert!(
            floored >= 100,
            "{floored} tables with battles the floor decided"
        );
        // Both block kernels ran: signatures where they fit, joint counts where not.
        assert!(
            signed >= 100 && signed + 50 <= tables,
            "{signed} of {tables} tables counted signatures"
        );
        assert!(
            extras_seen >= 1_000,
            "{extras_seen} signatures with reserves used"
        );
        // (A line within MAX_SIGNATURE_BINS has at most four combats, at most 12 line
        // dice: its signatures never span two line words.)
    }

    #[test]
    fn ratio_classes_are_thresholds() {
        assert_eq!(classify(3, 3), 0);
        assert_eq!(classify(2, 3), 1); // A repulsed
        assert_eq!(classify(3, 6), 2); // exactly 2:1 → beaten
        assert_eq!(classify(2, 6), 3); // exactly 3:1 → routed
        assert_eq!(classify(5, 3), 4);
        assert_eq!(classify(5, 2), 5);
        assert_eq!(classify(6, 2), 6);
        assert_eq!(classify(3, 0), 6); // no ratio: routed
    }

    /// 1 v 1, no modifiers, by hand: A beats B on 15 of 36; routed on (3,1) (4,1) (5,1)
    /// (6,1) (6,2) = 5, beaten on (2,1) (4,2) (5,2) (6,3) = 4, repulsed on the other 6.
    #[test]
    fn one_v_one_by_hand() {
        let combat = RatioCombat::new(one_v_one(0, 0)).unwrap();
        let d = combat.distribution(1_000_000).unwrap();
        assert_eq!(d.total, 36);
        assert_eq!(&d.result[..9], &[6, 0, 4, 5, 6, 0, 4, 5, 6]);
        // CP of A: 1 on 6, 2 on 4, 3 on 5.
        assert_eq!(d.cp[0], vec![21, 6, 4, 5]);
    }

    /// The block kernel's result table gives `army_result`'s bin for any tallies that are
    /// no draw: whatever the casualty points, floors and the winner's counters (which the
    /// table's key leaves out), on either side's reserves.
    #[test]
    fn result_bins_are_army_result() {
        let mut checked = 0;
        for mirrored in [false, true] {
            let mut battle = crate::systems::ratio::scenarios::ratio_line(
                crate::systems::ratio::scenarios::RATIO_LINE,
                2,
                0,
                ReservePolicy::Rescue,
            );
            if mirrored {
                swap_sides(&mut battle);
            }
            let combat = RatioCombat::new(battle).unwrap();
            let t = combat.reserve_table.as_ref().expect("a reserve table");
            assert_eq!(t.side, usize::from(mirrored));
            let r = t.reserves;
            for used in 0..=r {
                let units = combat.units_after(t.side, used);
                for (cp_a, cp_b) in [(1u64, 0u64), (0, 1), (7, 2), (3, 9), (255, 254)] {
                    for counters in 0..6u64.pow(4) {
                        let [ra, ba, rb, bb] = [0, 1, 2, 3].map(|k| counters / 6u64.pow(k) % 6);
                        for floor in [0u64, 3] {
                            let packed = cp_a << CP_A
                                | cp_b << CP_B
                                | ra << ROUTED_A
                                | ba << BEATEN_A
                                | rb << ROUTED_B
                                | bb << BEATEN_B
                                | floor << FLOOR_DECIDED;
                            assert_eq!(
                                usize::from(t.result_bins[result_key(packed, used)]),
                                army_result(packed, units) * (r + 1) + used,
                                "{packed:#x}, {used} used"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 2 * 3 * 5 * 1296 * 2);
    }

    #[test]
    fn army_result_rules_in_order() {
        // B lost with 3 units: 2 routed of 3 → disperses; 1 routed → retreats;
        // 2 beaten → retreats; 1 beaten → retires; none → holds.
        let pack = |cp_b: u64, routed: u64, beaten: u64| {
            (cp_b << CP_B) | (routed << ROUTED_B) | (beaten << BEATEN_B)
        };
        assert_eq!(army_result(pack(6, 2, 0), [3, 3]), 3);
        assert_eq!(army_result(pack(3, 1, 0), [3, 3]), 2);
        assert_eq!(army_result(pack(4, 0, 2), [3, 3]), 2);
        assert_eq!(army_result(pack(2, 0, 1), [3, 3]), 1);
        assert_eq!(army_result(pack(1, 0, 0), [3, 3]), 0);
        assert_eq!(army_result(0, [3, 3]), ArmyResult::DRAW);
    }

    /// What a block's `n` battles must count, from the die-by-die loop: lane `l`'s
    /// [`lanes::lane_battles`] fought one after another on its own stream split from
    /// `dice`. Returns the counts and the words drawn from all streams (the lanes' keys and
    /// each lane's words).
    fn lane_by_lane(
        combat: &RatioCombat,
        dice: &mut DiceStream,
        n: u64,
        mut h: RatioHistogram,
    ) -> (RatioHistogram, u64) {
        if n == 0 {
            return (h, 0);
        }
        let mut words = lanes::LANES as u64;
        for (lane, state) in dice.lane_states().into_iter().enumerate() {
            let start = DiceStream::from_state(state);
            let mut dice = start.clone();
            for _ in 0..lanes::lane_battles(n, lane) {
                h.record(&combat.fight_reserve_loop(&mut dice));
            }
            words += start.words_until(&dice, 1 << 24).expect("within the limit");
        }
        (h, words)
    }

    impl RatioCombat {
        /// The lanes' battles all at once (`lockstep`) and lane by lane by
        /// [`RatioCombat::lane_battle`] (as runs fight them where the sweeps do not run),
        /// each as `(tallies, reserves used, states)` for the joint counts and for the
        /// signatures, sorted: `(words, battles)` for each way and each sum of states,
        /// `None` where the sweeps did not run.
        #[allow(clippy::type_complexity)]
        fn lanes_both_ways<const R: usize, const BLOCK: usize, const DIFF: bool>(
            &self,
            t: &ReserveTable,
            lanes: &[[u64; 4]; lanes::LANES],
            n: u64,
        ) -> [[Option<(u64, Vec<(u64, usize, u64)>)>; 2]; 2] {
            fn sorted(mut v: Vec<(u64, usize, u64)>) -> Vec<(u64, usize, u64)> {
                v.sort_unstable();
                v
            }
            let blocks = t.blocks::<BLOCK>();
            let mut looked_up = [0u64; MAX_COMBATS];
            let mut each = |states: u8| {
                let mut battles = Vec::new();
                let mut words = 0;
                for (lane, &state) in lanes.iter().enumerate() {
                    let mut dice = DiceStream::from_state(state);
                    let mut push = |p, u, s| battles.push((p, u, s));
                    for _ in 0..lanes::lane_battles(n, lane) {
                        words += if states == STATES_JOINT {
                            Self::lane_battle::<R, BLOCK, DIFF, STATES_JOINT>(
                                t,
                                blocks,
                                &mut looked_up,
                                &mut dice,
                                &mut push,
                            )
                        } else {
                            Self::lane_battle::<R, BLOCK, DIFF, STATES_SIGNATURE>(
                                t,
                                blocks,
                                &mut looked_up,
                                &mut dice,
                                &mut push,
                            )
                        };
                    }
                }
                Some((words, sorted(battles)))
            };
            let lane_by_lane = [each(STATES_JOINT), each(STATES_SIGNATURE)];
            let mut joint = Vec::new();
            let joint_words = lockstep::all_at_once::<R, BLOCK, DIFF, STATES_JOINT>(
                t,
                lanes,
                n,
                &mut |p, u, s| joint.push((p, u, s)),
            );
            let mut signed = Vec::new();
            let signed_words = lockstep::all_at_once::<R, BLOCK, DIFF, STATES_SIGNATURE>(
                t,
                lanes,
                n,
                &mut |p, u, s| signed.push((p, u, s)),
            );
            [
                [
                    joint_words.map(|w| (w, sorted(joint))),
                    signed_words.map(|w| (w, sorted(signed))),
                ],
                lane_by_lane,
            ]
        }
    }

    /// The AVX2 sweeps against [`RatioCombat::table_battle`] lane by lane: the same battles
    /// (tallies, reserves used, states summed both ways) and the same words, for fewer
    /// battles than lanes, exactly the lanes, one more and many (the last sweep runs with
    /// lanes idle), on lines of one and two line words, one to four reserves, on either
    /// side, every policy (`optimal` reads the casualty-point difference). And as runs call
    /// them (`simulate_block`, joint counts and signatures), against the die-by-die loop
    /// lane by lane, with the block's stream advanced by the lanes' keys alone.
    #[test]
    fn lanes_fight_what_each_lane_fights_on_its_own_stream() {
        let avx2 = lanes::VectorForm::Avx2.available();
        let (mut swept, mut tables, mut reading_diff, mut two_words) = (0, 0, 0, 0);
        for text in [
            "1v1,1v1,1v1,1v1,2v1",
            "1v1,1v1,1v1",
            "1v1,1v1",
            "2v1,1v1",
            "2v1,2v1,2v1,2v1,1v1,1v1",
        ] {
            for reserves in 1..=4 {
                for policy in [
                    ReservePolicy::Rescue,
                    ReservePolicy::Press,
                    ReservePolicy::Optimal,
                ] {
                    for mirrored in [false, true] {
                        // `optimal` reads the casualty-point difference for its win
                        // probability.
                        let objective = if policy == ReservePolicy::Optimal {
                            Objective::WinProbability
                        } else {
                            Objective::CpDifference
                        };
                        let min_score = if mirrored {
                            MinScore::None
                        } else {
                            MinScore::Floor(1)
                        };
                        let combat =
                            table_case(text, reserves, policy, objective, min_score, mirrored);
                        let Some(t) = &combat.reserve_table else {
                            continue;
                        };
                        tables += 1;
                        reading_diff += usize::from(t.diff_len > 1);
                        two_words += usize::from(t.segments.len() > 1);
                        for n in [0, 1, 31, 32, 33, 1_000] {
                            let case =
                                format!("{text}, {reserves} reserves, {policy:?}, {mirrored}, {n}");
                            let start = DiceStream::for_block(3, n);
                            let lanes = start.clone().lane_states();
                            let [at_once, one_by_one] =
                                with_reserve_table!(combat.lanes_both_ways(t, &lanes, n)).unwrap();
                            for (swept_way, expected) in at_once.into_iter().zip(one_by_one) {
                                match swept_way {
                                    Some(battles) => {
                                        swept += 1;
                                        assert_eq!(Some(battles), expected, "{case}");
                                    }
                                    None => assert!(!avx2, "{case}: the sweeps did not run"),
                                }
                            }
                            // As runs call them.
                            for signed in [false, true] {
                                let mut dice = start.clone();
                                let empty = if signed {
                                    if !combat.has_signature() {
                                        continue;
                                    }
                                    RatioHistogram::for_signatures(&combat)
                                } else {
                                    RatioHistogram::new(&combat)
                                };
                                let mut h = empty.clone();
                                let (expected, expected_words) =
                                    lane_by_lane(&combat, &mut start.clone(), n, empty);
                                let words = if signed {
                                    h.signature_counts(); // (As `simulate_block` does.)
                                    with_reserve_table!(
                                        combat.signature_block(t, &mut dice, n, &mut h)
                                    )
                                } else {
                                    with_reserve_table!(combat.table_block(t, &mut dice, n, &mut h))
                                };
                                assert_eq!(words, Some(expected_words), "{case}, {signed}");
                                h.fold_signatures(&combat);
                                assert_eq!(h, expected, "{case}, {signed}");
                                let keys = if n == 0 { 0 } else { lanes::LANES as u64 };
                                assert_eq!(start.words_until(&dice, 100), Some(keys), "{case}");
                            }
                        }
                    }
                }
            }
        }
        assert!(
            tables >= 70 && reading_diff >= 10 && two_words >= 8,
            "{tables} {reading_diff} {two_words}"
        );
        if avx2 {
            assert_eq!(swept, 2 * 6 * tables, "every case swept both ways");
        } else {
            eprintln!("this machine has no AVX2: the sweeps did not run");
        }
    }

    #[test]
    fn kernel_draws_every_result_the_enumeration_allows() {
        let combat = RatioCombat::new(one_v_one(1, -1)).unwrap();
        let d = combat.distribution(1_000_000).unwrap();
        let mut dice = DiceStream::for_block(9, 0);
        let mut h = RatioHistogram::new(&combat);
        for _ in 0..200_000 {
            h.record(&combat.fight(&mut dice));
        }
        for i in 0..ArmyResult::COUNT {
            assert_eq!(h.result[i] > 0, d.result[i] > 0, "{}", ArmyResult::label(i));
        }
    }

    #[test]
    fn quick_lines_parse() {
        let (line, n) = parse_line("1v1, 2v1,1v2").unwrap();
        assert_eq!(n, [4, 4]);
        assert_eq!(line[1].a, vec![1, 2]);
        assert_eq!(line[2].b, vec![2, 3]);
        assert!(parse_line("3v1").is_err());
        assert!(parse_line("1-1").is_err());
    }
}
