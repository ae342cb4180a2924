//! Frontier battles bit-sliced: [`PLANE_BATTLES`] battles a sweep, one bit each.
//!
//! Why this module exists: fought one at a time or eight to a register, a frontier battle
//! costs hundreds of `next_u64` in rule work: loops whose length the dice decide,
//! branches no predictor learns, and in lanes every unit's work done in all eight lanes
//! (docs/performance.md, "Frontier before it"). Here a bit of a 256-bit plane is a
//! battle: a unit's state is three planes (`lo`, `hi`, `removed`, as [`super::SideState`]'s
//! masks hold it for one battle), a stack's leader one, and every rule is the same
//! boolean operations for all 256 battles: it never branches on one battle's dice, only
//! on whether any of the 256 needs a step (a redraw, a pass's end, a melee). A firer's
//! target is a chain over the enemy's units in the firer's order of preference; a roll's
//! success is its faces as a function of the face's three planes; a melee's odds column,
//! CRT cell and victims are decoded from its fighting units' planes.
//!
//! The dice: a bit-sliced kernel cannot skip a die in one battle and not in another, so
//! every battle draws a face for every event that could happen to it (a fire die and a
//! leader roll a unit, a move die a side a lane, a CRT die and a leader roll a side a
//! lane, a recovery die a unit, a round), whether it happens or not, as planes
//! ([`crate::dice::planes`], exactly uniform faces). A face drawn for an event that does
//! not happen is never read, so each battle's outcome has the distribution the rules
//! give, as one fought with only the dice it needs. Each face has its [`Slot`] (the
//! event it is for), and the tests replay single battles through the reference kernel
//! with each roll read from its slot.
//!
//! Which battles: both sides in one row a lane, stacks of at most four units, every pair
//! of melee strengths in the odds table, leader loss on a d6, a CRT of at most 24 columns
//! ([`SlicedTables::new`]); others are fought in lanes (`lockstep.rs`) or lane by lane. The choice depends on the
//! battle alone, and the kernel is the same operations on every CPU (AVX2 registers where
//! the CPU has them, four plain words elsewhere), so every machine writes the same bytes.

// The sweeps index several arrays of planes (a unit's `lo`, `hi`, `removed`, its targets,
// its hits) by the same unit or lane: a loop over the index reads plainer than zips.
#![allow(clippy::needless_range_loop)]

use super::{
    melee_victims, FrontierCombat, FrontierHistogram, MovePolicy, VictoryRule, LOSS_ROUT,
    MAX_LANES, MAX_LEADER, MAX_UNITS, SMALL_STACK_KEYS, SMALL_STACK_UNITS,
};
use crate::dice::lanes::LANES;
#[cfg(target_arch = "x86_64")]
use crate::dice::planes::Avx2;
use crate::dice::planes::{
    d6, equals, increment, live_plane, popcount, tally, Bits, LanePlanes, Plane, PLANE_BATTLES,
};
use crate::dice::DiceStream;

/// The event a face is drawn for (the tests replay a battle's faces by their slots).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Slot {
    /// Whether the non-initiative side gets its extra round.
    Extra,
    /// Unit `unit` of `side` firing in `round`.
    Fire {
        round: u32,
        side: usize,
        unit: usize,
    },
    /// The leader roll for a hit by that firer.
    FireLeader {
        round: u32,
        side: usize,
        unit: usize,
    },
    /// `side`'s move roll in `lane`.
    Move {
        round: u32,
        side: usize,
        lane: usize,
    },
    /// The melee's CRT die in `lane`.
    Crt { round: u32, lane: usize },
    /// `side`'s leader roll after a loss in the melee in `lane`.
    MeleeLeader {
        round: u32,
        side: usize,
        lane: usize,
    },
    /// Unit `unit` of `side`'s recovery roll.
    Recover {
        round: u32,
        side: usize,
        unit: usize,
    },
}

/// One side's constants as a sweep reads them.
#[derive(Clone, Debug)]
struct SideTables {
    units: usize,
    /// `stacks[lane]`: the first unit and the number of units of the side's stack
    /// there (stack `l` is lane `l`).
    stacks: [(usize, usize); MAX_LANES],
    unit_lane: [usize; MAX_UNITS],
    /// Faces 0–5 that hit, per unit.
    fire_faces: [u8; MAX_UNITS],
    regular: [bool; MAX_UNITS],
    non_warrior: [bool; MAX_UNITS],
    /// The leader rating with the stack in each lane (0: none).
    leader: [u32; MAX_LANES],
    /// Faces that move, by lane and `atop · 8 + with_regular · 4 + leader present · 2 +
    /// a mover not a warrior`, in round 1 (`[0]`) and later (`[1]`; surprise's bonus only
    /// in round 1).
    move_faces: [[[u8; 16]; MAX_LANES]; 2],
    /// Faces that recover a unit with its stack's leader present (`[1]`) or not (`[0]`).
    recover_faces: [[u8; 2]; MAX_UNITS],
    /// `victims[lane]`: the stack's units (as offsets from its first) in the order a loss
    /// takes them within each pass (disrupted first, then the rest): the lowest melee
    /// strength first, then the last listed.
    victims: [[usize; SMALL_STACK_UNITS]; MAX_LANES],
    /// `strength[lane][units]`: the melee strength of those units of the stack.
    strength: [[u32; SMALL_STACK_KEYS]; MAX_LANES],
    /// `fire_order[firer_lane]`: this side's units in the order a firer of the other side
    /// in that lane takes them (nearest lane, the lower-numbered at equal distance, then
    /// the first listed).
    fire_order: [[usize; MAX_UNITS]; MAX_LANES],
    fire_only: bool,
    avoid_melee: bool,
}

/// What the sweeps read, built once with the battle where it suits them.
#[derive(Clone, Debug)]
pub(super) struct SlicedTables {
    sides: [SideTables; 2],
    /// Faces a leader-loss roll loses on.
    loss_faces: u8,
    /// The rounds every battle fights (the initiative side's primary leader).
    fixed_rounds: u32,
    /// Where the battle has an extra round, the faces that give it (a face + 1 under the
    /// other side's primary leader).
    extra: Option<u8>,
}

/// The most columns a melee's shifted odds column can span before its clamp (the CRT's
/// and both leaders' shifts and two more).
const MAX_SPAN: usize = 32;

/// Faces 0–5 below `n`, as a set.
fn faces_below(n: u32) -> u8 {
    ((1u32 << n.min(6)) - 1) as u8
}

impl SlicedTables {
    /// The tables, where both sides stand in one row a lane with stacks of at most
    /// [`SMALL_STACK_UNITS`] units, every pair of strengths has its odds column in the
    /// table, and leader loss is a d6 roll.
    pub(super) fn new(c: &FrontierCombat) -> Option<Self> {
        let b = &c.battle;
        let suits = c.masks.iter().all(|m| m.single_row && m.small_stacks)
            && !c.odds_columns.is_empty()
            && b.leader_loss.1 == 6
            && b.crt.columns.len() + 2 * MAX_LEADER as usize + 2 <= MAX_SPAN;
        if !suits {
            return None;
        }
        let sides = [0, 1].map(|s| {
            let m = &c.masks[s];
            let units = c.units[s].len();
            let mut stacks = [(0, 0); MAX_LANES];
            for (l, stack) in c.stacks[s].iter().enumerate() {
                stacks[l] = (stack.first_unit, stack.unit_count);
            }
            let mut move_faces = [[[0u8; 16]; MAX_LANES]; 2];
            for (first, by_lane) in move_faces.iter_mut().enumerate() {
                let won_surprise = first == 0 && b.surprise == Some(s);
                for (l, cells) in by_lane.iter_mut().enumerate().take(c.lanes) {
                    for (key, cell) in cells.iter_mut().enumerate() {
                        let (nw, present, regular, atop) =
                            (key & 1, key >> 1 & 1, key >> 2 & 1, key >> 3 & 1);
                        let leader = if present == 1 { m.leader[l] } else { 0 };
                        let bonus = usize::from(won_surprise && leader > 0);
                        *cell = m.move_faces[nw][leader as usize][regular][atop][bonus];
                    }
                }
            }
            let recover_faces = std::array::from_fn(|u| {
                let rating = if u < units {
                    m.leader[c.units[s][u].stack].min(MAX_LEADER)
                } else {
                    0
                };
                [m.recover_faces[0], m.recover_faces[rating as usize]]
            });
            // The order `melee_victims` takes a stack's units in, one more each time, when
            // all fight undisrupted (among the disrupted it is the same order).
            let victims = std::array::from_fn(|l| {
                let (first, count) = stacks[l];
                let all = ((1u32 << count) - 1) << first;
                let mut order = [0; SMALL_STACK_UNITS];
                let mut taken = 0;
                for (k, victim) in order.iter_mut().enumerate().take(count) {
                    let now = melee_victims(all, 0, k as u32 + 1, &m.melee_strength);
                    *victim = (now & !taken).trailing_zeros() as usize - first;
                    taken = now;
                }
                order
            });
            let strength = std::array::from_fn(|l| {
                std::array::from_fn(|k| {
                    if l < c.lanes {
                        m.stack_strength[l * SMALL_STACK_KEYS + k]
                    } else {
                        0
                    }
                })
            });
            // The lanes in `nearest_lane`'s order from the firer's, each lane's units in
            // listed order.
            let fire_order = std::array::from_fn(|firer_lane| {
                let mut order = [0; MAX_UNITS];
                let (mut lanes_left, mut k) = ((1usize << c.lanes) - 1, 0);
                while lanes_left != 0 {
                    let lane = usize::from(c.nearest_lane[firer_lane][lanes_left]);
                    lanes_left &= !(1 << lane);
                    let (first, count) = stacks[lane];
                    for u in first..first + count {
                        order[k] = u;
                        k += 1;
                    }
                }
                order
            });
            SideTables {
                units,
                stacks,
                unit_lane: std::array::from_fn(|u| if u < units { c.units[s][u].lane } else { 0 }),
                fire_faces: m.fire_faces,
                regular: std::array::from_fn(|u| m.regular >> u & 1 == 1),
                non_warrior: std::array::from_fn(|u| m.non_warrior >> u & 1 == 1),
                leader: std::array::from_fn(|l| if l < c.lanes { m.leader[l] } else { 0 }),
                move_faces,
                recover_faces,
                victims,
                strength,
                fire_order,
                fire_only: b.sides[s].move_policy == MovePolicy::FireOnly,
                avoid_melee: b.sides[s].avoid_melee,
            }
        });
        let other = 1 - b.initiative;
        Some(Self {
            sides,
            loss_faces: faces_below(b.leader_loss.0),
            fixed_rounds: b.sides[b.initiative].primary_leader,
            // The extra round: a face + 1 under the other side's primary leader.
            extra: b
                .extra_round
                .then(|| faces_below(b.sides[other].primary_leader.saturating_sub(1))),
        })
    }

    /// The most rounds a battle fights.
    fn most_rounds(&self) -> u32 {
        self.fixed_rounds + u32::from(self.extra.is_some())
    }
}

/// What a sweep tells a test: each face drawn, by its slot, and each side's `hi` planes
/// (units lost) after each round. Runs record nothing (`()`).
pub(super) trait Record {
    fn face(&mut self, _slot: Slot, _planes: [Plane; 3]) {}
    fn lost(&mut self, _round: u32, _side: usize, _hi: Vec<Plane>) {}
    /// Whether faces are wanted (their planes are stored only then).
    const ON: bool = false;
}

impl Record for () {}

/// One side's state in a sweep's battles.
#[derive(Clone, Copy)]
struct Side<B> {
    lo: [B; MAX_UNITS],
    hi: [B; MAX_UNITS],
    removed: [B; MAX_UNITS],
    /// The stack in each lane still has its leader (never, for a stack with none).
    leaders: [B; MAX_LANES],
}

impl<B: Bits> Side<B> {
    /// Where unit `u` is in play: neither eliminated nor off the array.
    #[inline(always)]
    unsafe fn in_play(&self, u: usize) -> B {
        self.lo[u].and(self.hi[u]).or(self.removed[u]).not()
    }

    /// Unit `u` one level worse where `m` is set ([`super::SideState::worsen`]).
    #[inline(always)]
    unsafe fn worsen(&mut self, u: usize, m: B) {
        self.hi[u] = self.hi[u].xor(self.lo[u].and(m));
        self.lo[u] = self.lo[u].xor(m);
    }
}

/// The three planes of a face as six, one a face.
#[inline(always)]
unsafe fn one_hot<B: Bits>([p0, p1, p2]: [B; 3]) -> [B; 6] {
    let n0 = p0.not();
    let low = p2.not();
    let (low0, low1) = (low.and_not(p1), low.and(p1));
    [
        low0.and(n0),
        low0.and(p0),
        low1.and(n0),
        low1.and(p0),
        p2.and(n0),
        p2.and(p0),
    ]
}

/// Where the face (its three planes) is at least `t` (0–6).
#[inline(always)]
unsafe fn at_least<B: Bits>([p0, p1, p2]: &[B; 3], t: u32) -> B {
    match t {
        0 => B::ones(),
        1 => p0.or(*p1).or(*p2),
        2 => p1.or(*p2),
        3 => p2.or(p1.and(*p0)),
        4 => *p2,
        5 => p2.and(*p0),
        _ => B::zero(),
    }
}

/// Where the face (its three planes) is in `set` (faces 0–5). PERF: a roll's faces are
/// a run of faces (a modified roll against a number): one or two operations, where a
/// face's six one-hot planes cost eleven and an OR a face. (The run found once with the
/// tables, as an enum, was no faster: 1,527 instructions a battle against 1,512.)
#[inline(always)]
unsafe fn faces_in<B: Bits>(face: &[B; 3], set: u8) -> B {
    let set = u32::from(set & 0x3F);
    if set == 0 {
        return B::zero();
    }
    let (low, high) = (set.trailing_zeros(), 32 - set.leading_zeros());
    if set == (1 << high) - (1 << low) {
        return at_least(face, low).and_not(at_least(face, high));
    }
    let one_hot = one_hot(*face);
    let mut r = B::zero();
    for (f, &plane) in one_hot.iter().enumerate() {
        if set >> f & 1 == 1 {
            r = r.or(plane);
        }
    }
    r
}

/// `table[key]`'s faces where the face is in them, the key's four bits from `bits` (bit
/// `i` of the key from `bits[i]`): a tree of selects on the bits, level by level, a
/// select left out where both halves of the table are alike.
#[inline(always)]
unsafe fn lookup<B: Bits>(bits: &[B; 4], table: &[u8; 16], face: &[B; 3]) -> B {
    let mut value = [B::zero(); 16];
    for (v, &faces) in value.iter_mut().zip(table) {
        *v = faces_in(face, faces);
    }
    let mut width = 1;
    for &bit in bits {
        let mut k = 0;
        while k < 16 {
            let (low, high) = (&table[k..k + width], &table[k + width..k + 2 * width]);
            if low != high {
                value[k] = bit.select(value[k + width], value[k]);
            }
            k += 2 * width;
        }
        width *= 2;
    }
    value[0]
}

/// Each battle's count of the set bits of `planes` (up to 63), as six planes of a binary
/// number.
#[inline(always)]
unsafe fn count<B: Bits>(planes: &[B]) -> [B; 6] {
    let mut c = [B::zero(); 6];
    for &p in planes {
        increment(&mut c, p);
    }
    c
}

/// The minterms of the first `n` of `bits`: `out[k]` where bit `i` of `bits` is bit `i`
/// of `k`. PERF: `dice::planes::minterms` written out over the stack's array: through the
/// shared function's slices the sweep took 1,556 instructions a battle, 1,506 this way
/// (callgrind, `profile frontier`).
#[inline(always)]
unsafe fn stack_minterms<B: Bits>(
    bits: &[B; SMALL_STACK_UNITS],
    n: usize,
) -> [B; SMALL_STACK_KEYS] {
    let mut out = [B::zero(); SMALL_STACK_KEYS];
    out[0] = B::ones();
    for (i, &bit) in bits.iter().enumerate().take(n) {
        for k in (0..1 << i).rev() {
            out[k | 1 << i] = out[k].and(bit);
            out[k] = out[k].and_not(bit);
        }
    }
    out
}

/// A sweep: the battle's tables, the dice, and what to record.
struct Sweep<'a, B, R> {
    c: &'a FrontierCombat,
    t: &'a SlicedTables,
    dice: LanePlanes<B>,
    record: &'a mut R,
    /// Faces drawn (counted for `count-dice` and the tests only).
    #[cfg(any(test, feature = "count-dice"))]
    faces: u64,
}

impl<B: Bits, R: Record> Sweep<'_, B, R> {
    /// The next face of every battle, for `slot`.
    #[inline(always)]
    unsafe fn draw(&mut self, slot: Slot) -> [B; 3] {
        let planes = d6(&mut self.dice);
        #[cfg(any(test, feature = "count-dice"))]
        {
            self.faces += 1;
        }
        if R::ON {
            self.record.face(slot, planes.map(|p| p.to_plane()));
        }
        planes
    }

    /// A battle each bit of `live`: every round, then counted into `h`.
    #[inline(always)]
    /// Returns the final state and the battles that fought the extra round (for the
    /// tests).
    unsafe fn battles(&mut self, live: B, h: &mut FrontierHistogram) -> ([Side<B>; 2], B) {
        let (c, t) = (self.c, self.t);
        let b = &c.battle;
        let fresh = Side {
            lo: [B::zero(); MAX_UNITS],
            hi: [B::zero(); MAX_UNITS],
            removed: [B::zero(); MAX_UNITS],
            leaders: [B::zero(); MAX_LANES],
        };
        let mut st = [fresh; 2];
        for (s, x) in st.iter_mut().enumerate() {
            for l in 0..self.c.lanes {
                if t.sides[s].leader[l] > 0 {
                    x.leaders[l] = B::ones();
                }
            }
        }
        let extra = match t.extra {
            Some(faces) => {
                let face = self.draw(Slot::Extra);
                faces_in(&face, faces)
            }
            None => B::zero(),
        };
        let most = t.most_rounds();
        let mut lost_after = [[[B::zero(); 6]; 2]; 4];
        for round in 1..=most {
            let act = if round <= t.fixed_rounds {
                B::ones()
            } else {
                extra
            };
            for side in [b.initiative, 1 - b.initiative] {
                if !(round == 1 && b.surprise == Some(1 - side)) {
                    self.fire(&mut st, side, act, round);
                }
            }
            self.movement_and_melee(&mut st, act, round);
            self.recovery(&mut st, act, round);
            // A battle that does not fight the round keeps its state: its count repeats.
            for s in 0..2 {
                let units = t.sides[s].units;
                lost_after[round as usize - 1][s] = count(&st[s].hi[..units]);
                if R::ON {
                    self.record.lost(
                        round,
                        s,
                        st[s].hi[..units].iter().map(|p| p.to_plane()).collect(),
                    );
                }
            }
        }
        for r in most as usize..4 {
            lost_after[r] = lost_after[r - 1];
        }
        self.count(&st, extra, &lost_after, live, h);
        (st, extra)
    }

    /// Fire combat of `side` in the battles of `act` ([`FrontierCombat::fire_phase`], one
    /// row a lane): firers in listed order, each taking the nearest enemy unit not yet
    /// targeted in the pass; a pass's hits land when its targets are used up, and at the
    /// end; then a leader roll a firer whose hit landed on a stack with its leader.
    #[inline(always)]
    unsafe fn fire(&mut self, st: &mut [Side<B>; 2], side: usize, act: B, round: u32) {
        let t = self.t;
        let enemy = 1 - side;
        let (f, e) = (&t.sides[side], &t.sides[enemy]);
        let mut in_play = [B::zero(); MAX_UNITS];
        let mut any_in_play = B::zero();
        for c in 0..e.units {
            in_play[c] = st[enemy].in_play(c);
            any_in_play = any_in_play.or(in_play[c]);
        }
        let gate = act.and(any_in_play);
        let mut set = in_play;
        let mut pass_hits = [B::zero(); MAX_UNITS];
        let lanes = self.c.lanes;
        for u in 0..f.units {
            let s = &st[side];
            let fires = s.lo[u].or(s.hi[u]).or(s.removed[u]).not().and(gate);
            let mut left = B::zero();
            for &plane in &set[..e.units] {
                left = left.or(plane);
            }
            let spent = fires.and_not(left);
            if spent.any() {
                let target = &mut st[enemy];
                for c in 0..e.units {
                    target.worsen(c, pass_hits[c].and(spent));
                    pass_hits[c] = pass_hits[c].and_not(spent);
                    set[c] = spent.select(in_play[c], set[c]);
                }
            }
            let face = self.draw(Slot::Fire {
                round,
                side,
                unit: u,
            });
            let hit = faces_in(&face, f.fire_faces[u]).and(fires);
            // `hits[lane]`: the hit landed on the enemy stack in that lane.
            let mut hits = [B::zero(); MAX_LANES];
            let target = &st[enemy];
            let mut found = B::zero();
            for &c in &e.fire_order[f.unit_lane[u]][..e.units] {
                let chosen = set[c].and_not(found).and(fires);
                found = found.or(set[c]);
                set[c] = set[c].and_not(chosen);
                let landed = chosen.and(hit).and_not(target.lo[c].and(target.hi[c]));
                pass_hits[c] = pass_hits[c].or(landed);
                let lane = e.unit_lane[c];
                hits[lane] = hits[lane].or(landed);
            }
            // The leader roll for the hit. (The rules roll every leader roll after the
            // volley's fire dice, in firer order: nothing in the volley reads a leader but
            // the rolls, so each may come as soon as its hit has landed.)
            let face = self.draw(Slot::FireLeader {
                round,
                side,
                unit: u,
            });
            let lose = faces_in(&face, t.loss_faces);
            for (l, &hit) in hits.iter().enumerate().take(lanes) {
                let leaders = &mut st[enemy].leaders[l];
                *leaders = leaders.and_not(hit.and(lose));
            }
        }
        for c in 0..e.units {
            st[enemy].worsen(c, pass_hits[c]);
        }
    }

    /// Movement and melee in the battles of `act` ([`FrontierCombat::movement_and_melee`],
    /// one row a lane).
    #[inline(always)]
    unsafe fn movement_and_melee(&mut self, st: &mut [Side<B>; 2], act: B, round: u32) {
        let (c, t) = (self.c, self.t);
        let b = &c.battle;
        let lanes = self.c.lanes;
        let mut movers = [[B::zero(); MAX_UNITS]; 2];
        let mut in_play = [[B::zero(); MAX_UNITS]; 2];
        let mut holding = [[B::zero(); MAX_LANES]; 2];
        let mut can_move = [[B::zero(); MAX_LANES]; 2];
        for s in 0..2 {
            for u in 0..t.sides[s].units {
                let x = &st[s];
                in_play[s][u] = x.in_play(u);
                movers[s][u] = in_play[s][u].and_not(x.lo[u].or(x.hi[u]));
                let l = t.sides[s].unit_lane[u];
                holding[s][l] = holding[s][l].or(in_play[s][u]);
                can_move[s][l] = can_move[s][l].or(movers[s][u]);
            }
        }
        let mut started = [[B::zero(); MAX_LANES]; 2];
        let mut moved = [[B::zero(); MAX_UNITS]; 2];
        let mut avoided = [[B::zero(); MAX_UNITS]; 2];
        for side in [b.initiative, 1 - b.initiative] {
            let sd = &t.sides[side];
            if sd.fire_only {
                continue;
            }
            let surprised = round == 1 && b.surprise == Some(1 - side);
            // Surprise's bonus is in the round-1 table only.
            let later = usize::from(round != 1);
            for l in 0..lanes {
                let atop = started[1 - side][l];
                let mut rolling = holding[0][l]
                    .and(holding[1][l])
                    .and(act)
                    .and_not(started[0][l].or(started[1][l]));
                if sd.avoid_melee {
                    rolling = rolling.or(atop);
                }
                rolling = rolling.and(can_move[side][l]);
                let present = st[side].leaders[l];
                if surprised {
                    rolling = rolling.and(present);
                }
                let face = self.draw(Slot::Move {
                    round,
                    side,
                    lane: l,
                });
                let (first, count) = sd.stacks[l];
                let (mut non_warrior, mut regular) = (B::zero(), B::zero());
                for u in first..first + count {
                    if sd.non_warrior[u] {
                        non_warrior = non_warrior.or(movers[side][u]);
                    }
                    if sd.regular[u] {
                        regular = regular.or(in_play[side][u]);
                    }
                }
                let success = lookup(
                    &[non_warrior, present, regular, atop],
                    &sd.move_faces[later][l],
                    &face,
                )
                .and(rolling);
                let away = success.and(atop);
                let start = success.and_not(atop);
                started[side][l] = started[side][l].or(start);
                for u in first..first + count {
                    avoided[side][u] = avoided[side][u].or(away.and(movers[side][u]));
                    moved[side][u] = start.select(movers[side][u], moved[side][u]);
                }
            }
        }
        for l in 0..lanes {
            let any = started[0][l].or(started[1][l]);
            if !any.any() {
                continue;
            }
            let crt = one_hot(self.draw(Slot::Crt { round, lane: l }));
            let lose_0 = self.draw(Slot::MeleeLeader {
                round,
                side: 0,
                lane: l,
            });
            let lose_1 = self.draw(Slot::MeleeLeader {
                round,
                side: 1,
                lane: l,
            });
            let leader_faces = [
                faces_in(&lose_0, t.loss_faces),
                faces_in(&lose_1, t.loss_faces),
            ];
            for a in 0..2 {
                if started[a][l].any() {
                    self.close_combat(
                        st,
                        a,
                        l,
                        started[a][l],
                        &moved[a],
                        &avoided[1 - a],
                        &crt,
                        leader_faces,
                        round,
                    );
                }
            }
        }
    }

    /// The melee in lane `l` of the battles of `m`, `a` attacking with its units `moved`
    /// against the defender's stack less the units that moved away (`avoided`).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn close_combat(
        &mut self,
        st: &mut [Side<B>; 2],
        a: usize,
        l: usize,
        m: B,
        moved: &[B; MAX_UNITS],
        avoided: &[B; MAX_UNITS],
        crt: &[B; 6],
        leader_faces: [B; 2],
        round: u32,
    ) {
        let (c, t) = (self.c, self.t);
        let b = &c.battle;
        let d = 1 - a;
        let (ta, td) = (&t.sides[a], &t.sides[d]);
        let ((fa0, na), (fd0, nd)) = (ta.stacks[l], td.stacks[l]);
        // The units that fight (in play, not routed: of the attacker those that moved in,
        // of the defender those that stayed), and the disrupted among them, as offsets.
        let mut fights = [[B::zero(); SMALL_STACK_UNITS]; 2];
        let mut disrupted = [[B::zero(); SMALL_STACK_UNITS]; 2];
        for i in 0..na {
            let u = fa0 + i;
            // In play and not routed: neither `hi` (routed, eliminated) nor removed.
            fights[0][i] = moved[u].and_not(st[a].hi[u].or(st[a].removed[u]));
            disrupted[0][i] = fights[0][i].and(st[a].lo[u]).and_not(st[a].hi[u]);
        }
        let mut stayed = [B::zero(); SMALL_STACK_UNITS];
        for i in 0..nd {
            let u = fd0 + i;
            stayed[i] = avoided[u].not();
            fights[1][i] = stayed[i].and_not(st[d].hi[u].or(st[d].removed[u]));
            disrupted[1][i] = fights[1][i].and(st[d].lo[u]).and_not(st[d].hi[u]);
        }
        // The strengths' odds column, from each pair of fighting sets; none where the
        // attacker brings no strength, and the defender's left in play eliminated where it
        // brings none.
        let (keys_a, keys_d) = (
            stack_minterms(&fights[0], na),
            stack_minterms(&fights[1], nd),
        );
        // Columns from −(largest defender's leader) to the last + the attacker's leader +
        // 2 (disrupted defenders, surprise), clamped after all shifts.
        let below = td.leader[l] as usize;
        let columns = b.crt.columns.len();
        let span = columns + below + ta.leader[l] as usize + 2;
        let mut column = [B::zero(); MAX_SPAN];
        let mut doomed = B::zero();
        for (ka, &key_a) in keys_a.iter().enumerate().take(1 << na) {
            let sa = ta.strength[l][ka];
            if sa == 0 {
                continue;
            }
            for (kd, &key_d) in keys_d.iter().enumerate().take(1 << nd) {
                let sd = td.strength[l][kd];
                let both = key_a.and(key_d);
                if sd == 0 {
                    doomed = doomed.or(both);
                } else {
                    let odds = usize::from(c.odds_columns[sa as usize * c.strengths + sd as usize]);
                    column[below + odds] = column[below + odds].or(both);
                }
            }
        }
        let doomed = doomed.and(m);
        if doomed.any() {
            let x = &mut st[d];
            for i in 0..nd {
                let u = fd0 + i;
                let gone = doomed.and(stayed[i]).and(x.in_play(u));
                x.lo[u] = x.lo[u].or(gone);
                x.hi[u] = x.hi[u].or(gone);
            }
        }
        // The shifts: the attacker's leader present, the defender's, a disrupted defender
        // fighting, and surprise in round 1.
        let mut any_disrupted = B::zero();
        for &x in &disrupted[1][..nd] {
            any_disrupted = any_disrupted.or(x);
        }
        let shifts = [
            (ta.leader[l] as isize, st[a].leaders[l]),
            (-(td.leader[l] as isize), st[d].leaders[l]),
            (1, any_disrupted),
            (
                1,
                if round == 1 && b.surprise == Some(a) {
                    B::ones()
                } else {
                    B::zero()
                },
            ),
        ];
        // Each shift moves the column in place: upward from the top, downward from the
        // bottom, so no plane moves twice (the span holds every sum: no clamp before the
        // last).
        for (k, when) in shifts {
            if k == 0 {
                continue;
            }
            let mut move_to = |i: usize| {
                let j = (i as isize + k) as usize;
                let moving = column[i].and(when);
                column[j] = column[j].or(moving);
                column[i] = column[i].and_not(when);
            };
            if k > 0 {
                for i in (0..span - k as usize).rev() {
                    move_to(i);
                }
            } else {
                for i in (-k) as usize..span {
                    move_to(i);
                }
            }
        }
        // The clamp: columns below the first and past the last fold into them.
        for i in 0..below {
            column[below] = column[below].or(column[i]);
        }
        let last = below + columns - 1;
        for i in last + 1..span {
            column[last] = column[last].or(column[i]);
        }
        let clamped = &column[below..=last];
        let fought = m.and_not(doomed);
        for (role, side) in [(0, a), (1, d)] {
            // `code[k]`: this side's code is `k` eliminated (1 to 4; 4 for more), or
            // (`code[0]`) a rout.
            let mut code = [B::zero(); SMALL_STACK_UNITS + 1];
            let mut loss = B::zero();
            for (col, &plane) in clamped.iter().enumerate() {
                for (f, &face) in crt.iter().enumerate() {
                    let cell = c.melee_cells[(a * columns + col) * 6 + f][role];
                    if cell == 0 {
                        continue;
                    }
                    let k = if cell == LOSS_ROUT {
                        0
                    } else {
                        usize::from(cell).min(SMALL_STACK_UNITS)
                    };
                    let here = plane.and(face);
                    code[k] = code[k].or(here);
                    loss = loss.or(here);
                }
            }
            let loss = loss.and(fought);
            if !loss.any() {
                continue;
            }
            let (first, n) = t.sides[side].stacks[l];
            let order = &t.sides[side].victims[l];
            // `need[j]`: `j` more to eliminate (the last, j ≥ n).
            let mut need = [B::zero(); SMALL_STACK_UNITS + 1];
            for (k, &plane) in code.iter().enumerate().skip(1) {
                let j = k.min(n);
                need[j] = need[j].or(plane.and(fought));
            }
            let mut eliminated = [B::zero(); SMALL_STACK_UNITS];
            for pass in 0..2 {
                for &i in &order[..n] {
                    let weak = disrupted[role][i];
                    let candidate = if pass == 0 {
                        weak
                    } else {
                        fights[role][i].and_not(weak)
                    };
                    let mut more = B::zero();
                    for &x in &need[1..=n] {
                        more = more.or(x);
                    }
                    let take = candidate.and(more);
                    eliminated[i] = eliminated[i].or(take);
                    for j in 0..n {
                        need[j] = take.select(need[j + 1], need[j]);
                    }
                    need[n] = need[n].and_not(take);
                }
            }
            let rout = code[0].and(fought);
            let x = &mut st[side];
            for i in 0..n {
                let u = first + i;
                let routed = rout.and(fights[role][i]);
                x.lo[u] = x.lo[u].or(eliminated[i]).and_not(routed);
                x.hi[u] = x.hi[u].or(eliminated[i]).or(routed);
                x.removed[u] = x.removed[u].or(routed);
            }
            x.leaders[l] = x.leaders[l].and_not(loss.and(leader_faces[side]));
        }
    }

    /// Recovery in the battles of `act`: every disrupted or routed unit rolls.
    #[inline(always)]
    unsafe fn recovery(&mut self, st: &mut [Side<B>; 2], act: B, round: u32) {
        let t = self.t;
        for (side, x) in st.iter_mut().enumerate() {
            let sd = &t.sides[side];
            for u in 0..sd.units {
                let face = self.draw(Slot::Recover {
                    round,
                    side,
                    unit: u,
                });
                let rolling = x.lo[u].xor(x.hi[u]).and(act);
                let [alone, led] = sd.recover_faces[u];
                let present = x.leaders[sd.unit_lane[u]];
                let success = present
                    .select(faces_in(&face, led), faces_in(&face, alone))
                    .and(rolling);
                x.hi[u] = x.hi[u].xor(success.and_not(x.lo[u]));
                x.lo[u] = x.lo[u].xor(success);
                x.removed[u] = x.removed[u].and_not(success);
            }
        }
    }

    /// Counts the battles of `live` into `h`.
    #[inline(always)]
    unsafe fn count(
        &self,
        st: &[Side<B>; 2],
        extra: B,
        lost_after: &[[[B; 6]; 2]; 4],
        live: B,
        h: &mut FrontierHistogram,
    ) {
        let (c, t) = (self.c, self.t);
        for s in 0..2 {
            let (x, n) = (&st[s], t.sides[s].units);
            let (mut eliminated, mut routed, mut disrupted) = (
                [B::zero(); MAX_UNITS],
                [B::zero(); MAX_UNITS],
                [B::zero(); MAX_UNITS],
            );
            for u in 0..n {
                eliminated[u] = x.lo[u].and(x.hi[u]);
                routed[u] = x.hi[u].and_not(x.lo[u]);
                disrupted[u] = x.lo[u].and_not(x.hi[u]);
            }
            tally(&mut h.eliminated[s], &count(&eliminated[..n]), live);
            tally(&mut h.routed[s], &count(&routed[..n]), live);
            tally(&mut h.disrupted[s], &count(&disrupted[..n]), live);
            let (mut lost, mut led) = ([B::zero(); MAX_LANES], 0);
            for l in 0..self.c.lanes {
                if t.sides[s].leader[l] > 0 {
                    lost[led] = x.leaders[l].not();
                    led += 1;
                }
            }
            tally(&mut h.leaders_lost[s], &count(&lost[..led]), live);
            for (r, lost) in lost_after.iter().enumerate() {
                tally(&mut h.lost_by_round[r][s], &lost[s], live);
            }
        }
        // The result, from the units lost at the end.
        let (n0, n1) = (t.sides[0].units, t.sides[1].units);
        let final_lost = lost_after[3];
        let mut eq1 = [B::zero(); MAX_UNITS + 1];
        for (k, e) in eq1.iter_mut().enumerate().take(n1 + 1) {
            *e = equals(&final_lost[1], k);
        }
        let (mut a_wins, mut b_wins) = (B::zero(), B::zero());
        for k0 in 0..=n0 {
            let eq0 = equals(&final_lost[0], k0);
            for (k1, &e1) in eq1.iter().enumerate().take(n1 + 1) {
                let (x, y) = match c.battle.victory {
                    VictoryRule::FewerLost => (k0 as u64, k1 as u64),
                    VictoryRule::FewerLostShare => ((k0 * n1) as u64, (k1 * n0) as u64),
                };
                let both = eq0.and(e1);
                match x.cmp(&y) {
                    std::cmp::Ordering::Less => a_wins = a_wins.or(both),
                    std::cmp::Ordering::Greater => b_wins = b_wins.or(both),
                    std::cmp::Ordering::Equal => {}
                }
            }
        }
        let draw = a_wins.or(b_wins).not();
        let results = [a_wins, draw, b_wins];
        let rounds = t.fixed_rounds as usize;
        for (r, battles) in [(rounds, extra.not()), (rounds + 1, extra)] {
            let battles = battles.and(live);
            if r > 4 || !battles.any() {
                continue;
            }
            h.rounds[r] += popcount(battles);
            for (i, &result) in results.iter().enumerate() {
                let n = popcount(result.and(battles));
                h.result[i] += n;
                h.result_by_rounds[r][i] += n;
            }
        }
    }
}

/// `n` battles in sweeps of [`PLANE_BATTLES`], from the lanes' streams split from `dice`,
/// counted into `histogram`; returns the words drawn (the lanes' keys and the planes').
pub(super) fn battle_block(
    c: &FrontierCombat,
    t: &SlicedTables,
    dice: &mut DiceStream,
    n: u64,
    histogram: &mut FrontierHistogram,
) -> u64 {
    if n == 0 {
        return 0;
    }
    let lanes = dice.lane_states();
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return LANES as u64 + unsafe { sweeps_avx2(c, t, &lanes, n, histogram) };
    }
    // SAFETY: plain words need nothing of the CPU.
    LANES as u64 + unsafe { sweeps::<Plane>(c, t, &lanes, n, histogram) }
}

/// The sweeps in AVX2 registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sweeps_avx2(
    c: &FrontierCombat,
    t: &SlicedTables,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    h: &mut FrontierHistogram,
) -> u64 {
    sweeps::<Avx2>(c, t, lanes, n, h)
}

/// The sweeps of `n` battles, counted into `histogram`; returns the planes' words.
#[inline(always)]
unsafe fn sweeps<B: Bits>(
    c: &FrontierCombat,
    t: &SlicedTables,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    histogram: &mut FrontierHistogram,
) -> u64 {
    let mut sweep = Sweep {
        c,
        t,
        dice: LanePlanes::<B>::new(lanes),
        record: &mut (),
        #[cfg(any(test, feature = "count-dice"))]
        faces: 0,
    };
    let mut left = n;
    #[cfg(any(test, feature = "count-dice"))]
    let mut draws = 0;
    while left > 0 {
        let battles = left.min(PLANE_BATTLES as u64) as usize;
        left -= battles as u64;
        #[cfg(any(test, feature = "count-dice"))]
        let before = sweep.faces;
        let _ = sweep.battles(B::from_plane(live_plane(battles)), histogram);
        // Every battle draws every face of its sweep.
        #[cfg(any(test, feature = "count-dice"))]
        {
            draws += (sweep.faces - before) * battles as u64;
        }
    }
    #[cfg(any(test, feature = "count-dice"))]
    crate::dice::counting::add_draws(draws);
    sweep.dice.words()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::super::reference::{RefDice, Reference};
    use super::super::tests::random_battle_in_one_row;
    use super::super::BattleOutcome;
    use super::*;
    use crate::dice::planes::face;

    /// A sweep's faces by slot, and the units each side had lost after each round.
    #[derive(Default)]
    struct Recorded {
        faces: HashMap<Slot, [Plane; 3]>,
        lost: HashMap<(u32, usize), Vec<Plane>>,
    }

    impl Record for Recorded {
        const ON: bool = true;
        fn face(&mut self, slot: Slot, planes: [Plane; 3]) {
            assert!(
                self.faces.insert(slot, planes).is_none(),
                "{slot:?} drawn twice"
            );
        }
        fn lost(&mut self, round: u32, side: usize, hi: Vec<Plane>) {
            self.lost.insert((round, side), hi);
        }
    }

    /// One battle's faces, read by slot as the reference asks for them.
    struct SlotDice<'a> {
        recorded: &'a Recorded,
        battle: usize,
    }

    impl SlotDice<'_> {
        fn at(&self, slot: Slot) -> u32 {
            let planes = self.recorded.faces.get(&slot);
            face(
                planes.unwrap_or_else(|| panic!("{slot:?} was not drawn")),
                self.battle,
            )
        }
    }

    impl RefDice for SlotDice<'_> {
        fn extra(&mut self) -> u32 {
            self.at(Slot::Extra) + 1
        }
        fn fire(&mut self, round: u32, side: usize, unit: usize) -> u32 {
            self.at(Slot::Fire { round, side, unit })
        }
        fn fire_leader(&mut self, round: u32, side: usize, unit: usize, den: u32) -> u32 {
            assert_eq!(den, 6);
            self.at(Slot::FireLeader { round, side, unit })
        }
        fn move_roll(&mut self, round: u32, side: usize, lane: usize) -> u32 {
            self.at(Slot::Move { round, side, lane }) + 1
        }
        fn crt(&mut self, round: u32, lane: usize) -> u32 {
            self.at(Slot::Crt { round, lane }) + 1
        }
        fn melee_leader(&mut self, round: u32, side: usize, lane: usize, den: u32) -> u32 {
            assert_eq!(den, 6);
            self.at(Slot::MeleeLeader { round, side, lane })
        }
        fn recover(&mut self, round: u32, side: usize, unit: usize) -> u32 {
            self.at(Slot::Recover { round, side, unit }) + 1
        }
    }

    /// Battle `i`'s outcome from a sweep's final planes and recorded losses.
    fn outcome(
        c: &FrontierCombat,
        st: &[Side<Plane>; 2],
        recorded: &Recorded,
        rounds: u32,
        i: usize,
    ) -> BattleOutcome {
        let bit = |p: &Plane| p[i / 64] >> (i % 64) & 1 == 1;
        let mut out = BattleOutcome::after(rounds);
        for s in 0..2 {
            for u in 0..c.units[s].len() {
                match (bit(&st[s].lo[u]), bit(&st[s].hi[u])) {
                    (true, true) => out.eliminated[s] += 1,
                    (false, true) => out.routed[s] += 1,
                    (true, false) => out.disrupted[s] += 1,
                    (false, false) => {}
                }
            }
            out.leaders_lost[s] = (0..c.lanes)
                .filter(|&l| c.stacks[s][l].leader > 0 && !bit(&st[s].leaders[l]))
                .count() as u32;
            for r in 0..4 {
                // Rounds not fought repeat the last the battle fought.
                let round = (r as u32 + 1).min(rounds).max(1);
                out.lost_after_round[r][s] = match recorded.lost.get(&(round, s)) {
                    Some(hi) => hi.iter().filter(|p| bit(p)).count() as u8,
                    None => 0,
                };
            }
        }
        out.winner = c.winner(&out);
        out
    }

    /// The sweeps in AVX2 registers count what they count in four plain words (so a
    /// machine without AVX2 writes the same bytes), with the same words, for blocks of
    /// whole and partial sweeps.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_registers_and_plain_words_fight_the_same_battles() {
        if !is_x86_feature_detected!("avx2") {
            eprintln!("this machine has no AVX2: that form did not run");
            return;
        }
        let battles = sliced_battles(92, 40);
        assert!(battles.len() > 30, "{}", battles.len());
        for (k, c) in battles.iter().enumerate() {
            let t = c.sliced.as_ref().unwrap();
            for n in [1, 255, 256, 700] {
                let lanes = DiceStream::for_block(93, k as u64).lane_states();
                let (mut plain, mut vector) = (c.empty_histogram(), c.empty_histogram());
                // SAFETY: plain words; and the CPU has AVX2.
                let (plain_words, vector_words) = unsafe {
                    (
                        sweeps::<Plane>(c, t, &lanes, n, &mut plain),
                        sweeps_avx2(c, t, &lanes, n, &mut vector),
                    )
                };
                assert_eq!(vector, plain, "battle {k}, {n} battles");
                assert_eq!(vector_words, plain_words, "battle {k}, {n} battles");
                assert_eq!(plain.result.iter().sum::<u64>(), n);
            }
        }
    }

    /// The bench battle and random battles in one row (`n` tried), those the bit-sliced
    /// kernel takes.
    fn sliced_battles(seed: u64, n: usize) -> Vec<FrontierCombat> {
        let mut g = DiceStream::for_block(seed, 0);
        let mut battles = vec![crate::systems::frontier::scenarios::frontier_six_stacks()];
        while battles.len() < n {
            battles.extend(random_battle_in_one_row(&mut g));
        }
        battles
            .into_iter()
            .map(|b| FrontierCombat::new(b).unwrap())
            .filter(FrontierCombat::bit_sliced)
            .collect()
    }

    /// One sweep of battle `c` on the lanes split from block `block` of seed 91, the
    /// battles of `live` counted: every battle of the sweep is the battle the reference
    /// kernel fights with the faces of its slots, die for die (its rounds those the
    /// kernel's extra-round plane gives), and the sweep counts exactly the live ones'
    /// outcomes.
    fn sweep_is_the_reference(c: &FrontierCombat, block: u64, live: Plane) {
        let t = c.sliced.as_ref().unwrap();
        let lanes = DiceStream::for_block(91, block).lane_states();
        let mut recorded = Recorded::default();
        let mut h = c.empty_histogram();
        // SAFETY: plain words.
        let (st, extra) = unsafe {
            let mut sweep = Sweep {
                c,
                t,
                dice: LanePlanes::<Plane>::new(&lanes),
                record: &mut recorded,
                faces: 0,
            };
            sweep.battles(live, &mut h)
        };
        let reference = Reference::new(c);
        let mut expected = c.empty_histogram();
        let bit = |p: &Plane, i: usize| p[i / 64] >> (i % 64) & 1 == 1;
        for i in 0..PLANE_BATTLES {
            let mut dice = SlotDice {
                recorded: &recorded,
                battle: i,
            };
            let want = reference.fight(&mut dice);
            let rounds = t.fixed_rounds + u32::from(bit(&extra, i));
            let got = outcome(c, &st, &recorded, rounds, i);
            assert_eq!(got, want, "block {block}, sweep battle {i}: {:?}", c.battle);
            if bit(&live, i) {
                expected.record(&want);
            }
        }
        assert_eq!(h, expected, "block {block}");
    }

    /// Every battle of a sweep is the reference's battle on its slots' faces, over the
    /// bench battle and random battles in one row (every terrain, surprise either way,
    /// fire-only sides, avoiding the melee, extra rounds, stacks of one to four units,
    /// leader loss 0, 1, 2 and 6 in 6), the last seven battles of the sweep not counted.
    #[test]
    fn every_battle_is_the_reference_battle_on_its_slots_faces() {
        let battles = sliced_battles(90, 120);
        assert!(battles.len() > 100, "{}", battles.len());
        for (k, c) in battles.iter().enumerate() {
            sweep_is_the_reference(c, k as u64, [u64::MAX, u64::MAX, u64::MAX, u64::MAX >> 7]);
        }
    }

    /// A random battle in one row at the edges the other draw does not reach: up to eight
    /// lanes of four units (32 a side), CRTs of up to 24 columns with leaders of 3 (the
    /// whole span), eliminations of 0 to 255 and routs, leader loss 0, 3, 5 and 6 in 6,
    /// both victory rules.
    fn edge_battle_in_one_row(g: &mut DiceStream) -> Option<FrontierCombat> {
        use super::super::{CrtLoss, FrontierBattle, MeleeCrt, Side as Army, Stack, Unit};
        use crate::systems::frontier::rolls::{Terrain, UnitType};
        use CrtLoss::{Eliminate as E, None as N, Rout as R};
        let pick = |g: &mut DiceStream, n: u32| g.below(n) as usize;
        let terrain = [Terrain::Settled, Terrain::Wilderness, Terrain::Rough][pick(g, 3)];
        let lanes = [1, 2, 8, 8][pick(g, 4)];
        let full = lanes == 8 && pick(g, 2) == 0;
        let stack = |g: &mut DiceStream| {
            let n = if full { 4 } else { 1 + pick(g, 4) };
            let kind = if terrain == Terrain::Settled {
                [UnitType::Warrior, UnitType::Militia, UnitType::Regular][pick(g, 3)]
            } else {
                UnitType::Rifle
            };
            let units = (0..n)
                .map(|k| Unit {
                    kind: if k == 0 { kind } else { UnitType::Rifle },
                    fire_cf: 1 + pick(g, 10) as u32,
                    melee_cf: [1, 1, 2, 20][pick(g, 4)],
                })
                .collect();
            Stack {
                units,
                leader: [0, 3, 3, 1, 2][pick(g, 5)],
            }
        };
        let columns = [1, 2, 20, 24, 24][pick(g, 5)];
        let loss = |g: &mut DiceStream| match pick(g, 7) {
            0 => N,
            1 => R,
            2 => E(0),
            k @ 3..=5 => E(k as u8 - 2),
            _ => E([4, 5, 32, 255][pick(g, 4)]),
        };
        let crt = MeleeCrt {
            columns: (0..columns as u32).map(|c| (c + 1, 3)).collect(),
            first_roll: pick(g, 9) as i32 - 4,
            cells: (0..1 + pick(g, 8))
                .map(|_| (0..columns).map(|_| (loss(g), loss(g))).collect())
                .collect(),
        };
        let sides: [Army; 2] = std::array::from_fn(|_| Army {
            level: 1 + pick(g, 5) as u32,
            primary_leader: 1 + pick(g, 3) as u32,
            lanes: (0..lanes).map(|_| vec![stack(g)]).collect(),
            move_policy: if pick(g, 5) == 0 {
                MovePolicy::FireOnly
            } else {
                MovePolicy::Aggressive
            },
            avoid_melee: pick(g, 2) == 0,
        });
        let battle = FrontierBattle {
            terrain,
            severe_weather: pick(g, 2) == 0,
            initiative: pick(g, 2),
            surprise: [None, Some(0), Some(1)][pick(g, 3)],
            sides,
            crt,
            leader_loss: [(0, 6), (6, 6), (3, 6), (5, 6)][pick(g, 4)],
            extra_round: pick(g, 2) == 0,
            victory: [VictoryRule::FewerLost, VictoryRule::FewerLostShare][pick(g, 2)],
        };
        FrontierCombat::new(battle)
            .ok()
            .filter(FrontierCombat::bit_sliced)
    }

    /// The edges: every battle of a sweep is the reference's on its slots' faces, with
    /// the live battles spread over the plane's words; and AVX2 counts as plain words do.
    #[test]
    fn at_the_edges_every_battle_is_still_the_reference_battle() {
        let mut g = DiceStream::for_block(94, 0);
        let (mut checked, mut widest, mut most_units) = (0, 0, 0);
        while checked < 150 {
            let Some(c) = edge_battle_in_one_row(&mut g) else {
                continue;
            };
            checked += 1;
            widest = widest.max(c.battle.crt.columns.len());
            most_units = most_units.max(c.units[0].len().max(c.units[1].len()));
            sweep_is_the_reference(&c, 1000 + checked, [u64::MAX, 0b101, 0, 1 << 63]);
            #[cfg(target_arch = "x86_64")]
            if is_x86_feature_detected!("avx2") {
                let t = c.sliced.as_ref().unwrap();
                let lanes = DiceStream::for_block(95, checked).lane_states();
                for n in [3, 65, 300] {
                    let (mut plain, mut vector) = (c.empty_histogram(), c.empty_histogram());
                    // SAFETY: plain words; and the CPU has AVX2.
                    let words = unsafe {
                        [
                            sweeps::<Plane>(&c, t, &lanes, n, &mut plain),
                            sweeps_avx2(&c, t, &lanes, n, &mut vector),
                        ]
                    };
                    assert_eq!((vector, words[1]), (plain, words[0]));
                }
            }
        }
        assert_eq!((widest, most_units), (24, 32));
    }
}
