//! Frontier battles thirty-two at once, one to a lane, eight lanes to an AVX2 register.
//!
//! Since the bit-sliced kernel (`sliced.rs`, 256 battles a sweep, about three times
//! faster), runs fight here only the battles these sweeps suit and it does not: both sides
//! in one row with small stacks, but a CRT wider than the bit-sliced kernel's span of
//! columns (`sliced::MAX_SPAN`, more than 24 columns). Its tests call it directly.
//!
//! Why this module exists: one at a time, a frontier battle spends its time not on its
//! dice but waiting, on loops whose length the dice decide and branches no predictor
//! learns (docs/performance.md, "Frontier before it"). Here the [`LANES`] lanes of
//! [`FrontierCombat::lanes_block`] fight a battle each a sweep, eight lanes to a register
//! of 32-bit elements: a side's unit states are four bit masks ([`super::SideState`]), so
//! eight battles' states are four registers a side, and every rule is an operation on
//! them under a mask of the lanes it applies in. Loops run over the battle's fixed
//! structure (its units, its lanes), not over what the dice left: fire visits every unit
//! of the side in listed order, each lane's firers masked in; movement and melee every
//! lane of the array; recovery every unit.
//!
//! The dice: each lane cuts its d6 from its own stream twelve to a word, as
//! [`super::PackedDice`] cuts them, into a window of faces in memory (the faces of a word
//! are the base-6 digits of `⌊word · 6^12 / 2^64⌋`, [`cut_word_parts`]). A draw reads each
//! lane's next face from the eight it last gathered (two gathers, again when a lane that
//! draws has taken all eight), each lane stepping past its face only where it draws. Before a
//! sweep every lane's window is topped up to the most faces a battle can draw
//! (`LaneTables::faces_bound`), so no draw runs past it; a lane's words are the whole
//! words its drawn faces took, as a lane fought one battle at a time draws them. A round
//! that at most `SCALAR_LANES` lanes fight (a battle's extra round) is fought lane by lane
//! by [`FrontierCombat::round`], from the same windows.
//!
//! The battles are those [`FrontierCombat::fight_with`] fights lane by lane on the lanes'
//! streams (the tests hold the two to the same outcomes, battle for battle), so which form
//! runs changes no count. Sweeps take battles whose sides both stand in one row a lane,
//! whose stacks are small (their melee strengths and losses read from tables), whose
//! odds columns come from the table of strength pairs, and whose leader loss is a d6 roll
//! ([`LaneTables::new`]); others are fought lane by lane.

// The vector form is x86-64's; elsewhere its helpers go unused.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

use super::{
    FrontierCombat, FrontierHistogram, FACES_PER_WORD, MAX_LANES, MAX_STACKS, SMALL_STACK_KEYS,
};
use crate::dice::lanes::LANES;
use crate::dice::DiceStream;

/// The four base-6 digits of each value below 6^4, most significant first, as the bytes
/// of a little-endian word (5 KB).
const DIGITS4: [u32; 1296] = {
    let mut t = [0u32; 1296];
    let mut v = 0;
    while v < 1296 {
        t[v] = (v / 216) as u32
            | ((v / 36 % 6) as u32) << 8
            | ((v / 6 % 6) as u32) << 16
            | ((v % 6) as u32) << 24;
        v += 1;
    }
    t
};

/// What the sweeps read, built once with the battle where its sides suit them.
#[derive(Clone, Debug)]
pub(super) struct LaneTables {
    /// The most faces one battle can draw: a face for the extra round; then a round's
    /// fire (a face a firer and at most one leader roll each), movement (a face a side a
    /// lane), melees (a face a lane and a leader roll a side) and recovery (a face a
    /// unit), for the most rounds.
    faces_bound: usize,
    /// `move_faces[side][lane]`: [`super::SideMasks::move_faces`] for the side's stack in
    /// the lane, by `non_warrior · 16 + with_leader · 8 + with_regular · 4 + enemy_atop
    /// · 2 + surprise_bonus` (32 entries: four registers, read by permutes).
    move_faces: [[[u32; 32]; MAX_LANES]; 2],
    /// `strength[side][lane][units]`: [`super::SideMasks::stack_strength`] (two registers).
    strength: [[[u32; SMALL_STACK_KEYS]; MAX_LANES]; 2],
    /// Per side, [`super::SideMasks::melee_losses`] widened for 32-bit gathers.
    melee_losses: [Vec<u32>; 2],
    /// Per side whose every stack has at most two units, `pair_losses[side][lane]`: the
    /// stack's `melee_losses` entries by `disrupted · 4 + fighting` (two registers).
    pair_losses: [Option<[[u32; 16]; MAX_LANES]>; 2],
    /// [`FrontierCombat::odds_columns`], widened.
    odds: Vec<u32>,
    /// Where every stack of both sides has at most two units, `pair_odds[lane]`: the odds
    /// column of the melee in the lane by `attacker_b · 16 + attacker's fighting units ·
    /// 4 + defender's` (each as bits from the stack's first unit; four registers, read by
    /// permutes, not a gather).
    pair_odds: Option<[[u32; 32]; MAX_LANES]>,
    /// [`FrontierCombat::melee_cells`]: attacker's code | defender's code `<< 8`.
    cells: Vec<u32>,
    /// `cells`, where it has at most 64 (two attacking sides · five columns · six faces): read
    /// by permutes, not a gather.
    cells64: Option<[u32; 64]>,
    /// `nearest_first[firer_lane]`: the array's lanes, nearest the firer's first, the
    /// lower-numbered at equal distance (the order fire takes them in).
    nearest_first: [[u8; MAX_LANES]; MAX_LANES],
}

impl LaneTables {
    /// The most faces one battle can draw.
    #[cfg(test)]
    pub(super) fn faces_bound(&self) -> usize {
        self.faces_bound
    }

    /// Whether the melees' odds columns, and the CRT's cells, are read by permutes (not by
    /// gathers).
    #[cfg(test)]
    pub(super) fn read_by_permutes(&self) -> (bool, bool) {
        (self.pair_odds.is_some(), self.cells64.is_some())
    }

    /// The tables, where both sides stand in one row a lane with small stacks, every pair
    /// of strengths has its odds column in the table, and leader loss is a d6 roll
    /// (`below(6)`, a face: other denominators draw whole words between the faces).
    pub(super) fn new(c: &FrontierCombat) -> Option<Self> {
        let suits = c.masks.iter().all(|m| m.single_row && m.small_stacks)
            && !c.odds_columns.is_empty()
            && c.battle.leader_loss.1 == 6;
        if !suits {
            return None;
        }
        let faces_bound = c.most_faces();
        let move_faces = [0, 1].map(|s| {
            let m = &c.masks[s];
            std::array::from_fn(|l| {
                std::array::from_fn(|i| {
                    let leader = if i >> 3 & 1 == 1 {
                        m.leader[l & (MAX_STACKS - 1)]
                    } else {
                        0
                    };
                    u32::from(m.move_faces[i >> 4][leader as usize][i >> 2 & 1][i >> 1 & 1][i & 1])
                })
            })
        });
        let keys = SMALL_STACK_KEYS;
        let strength = [0, 1].map(|s| {
            let m = &c.masks[s];
            std::array::from_fn(|l| {
                std::array::from_fn(|k| {
                    if l < c.lanes {
                        m.stack_strength[l * keys + k]
                    } else {
                        0
                    }
                })
            })
        });
        let pair_losses = [0, 1].map(|s| {
            let m = &c.masks[s];
            let pairs = c.stacks[s].iter().all(|stack| stack.unit_count <= 2);
            pairs.then(|| {
                std::array::from_fn(|l| {
                    std::array::from_fn(|i| {
                        let (disrupted, fighting) = (i >> 2, i & 3);
                        if l < c.lanes {
                            u32::from(m.melee_losses[(l * keys + disrupted) * keys + fighting])
                        } else {
                            0
                        }
                    })
                })
            })
        });
        let pair_odds = pair_losses.iter().all(Option::is_some).then(|| {
            std::array::from_fn(|l| {
                std::array::from_fn(|i| {
                    let attacker = i >> 4;
                    let (a, d) = ((i >> 2) & 3, i & 3);
                    let (strength_a, strength_d) = (
                        strength[attacker][l][a] as usize,
                        strength[1 - attacker][l][d] as usize,
                    );
                    // A stack's strengths are below `c.strengths` (the table's side).
                    u32::from(c.odds_columns[strength_a * c.strengths + strength_d])
                })
            })
        });
        let cells: Vec<u32> = c
            .melee_cells
            .iter()
            .map(|&[a, d]| u32::from(a) | u32::from(d) << 8)
            .collect();
        let cells64 = (cells.len() <= 64).then(|| {
            let mut table = [0; 64];
            table[..cells.len()].copy_from_slice(&cells);
            table
        });
        Some(Self {
            faces_bound,
            move_faces,
            strength,
            pair_losses,
            pair_odds,
            cells64,
            melee_losses: [0, 1].map(|s| {
                c.masks[s]
                    .melee_losses
                    .iter()
                    .map(|&l| u32::from(l))
                    .collect()
            }),
            odds: c.odds_columns.iter().map(|&o| u32::from(o)).collect(),
            cells,
            nearest_first: std::array::from_fn(|firer| {
                let mut lanes: Vec<usize> = (0..c.lanes).collect();
                lanes.sort_by_key(|&l| (l.abs_diff(firer), l));
                let mut order = [0u8; MAX_LANES];
                for (slot, l) in order.iter_mut().zip(lanes) {
                    *slot = l as u8;
                }
                order
            }),
        })
    }
}

#[cfg(test)]
thread_local! {
    /// Rounds the sweeps fought, all lanes at once and lane by lane (for the tests, which
    /// check that they ran both ways).
    pub(super) static ROUNDS_FOUGHT: std::cell::Cell<[u64; 2]> = const { std::cell::Cell::new([0; 2]) };
}

/// Lanes to a register.
const WIDTH: usize = 8;

/// The bytes a fetch reads from a lane's next face (two gathers of four).
const FETCH_BYTES: usize = 8;

/// Eight lanes' windows of faces, cut from their streams ahead of the draws.
struct LaneFaces {
    /// Lane `i`'s window at `i · stride`, its faces one to a byte; spare bytes at the end,
    /// for the gathers' reads of [`FETCH_BYTES`] from a lane's next face (at most `stride`
    /// into its window: the last lane's read ends at most at the last spare byte).
    bytes: Vec<u8>,
    stride: usize,
    /// Each lane's next face to draw, and the faces cut into its window.
    at: [u32; WIDTH],
    end: [usize; WIDTH],
    /// Faces each lane drew before its window's start.
    used: [u64; WIDTH],
    streams: [DiceStream; WIDTH],
}

impl LaneFaces {
    fn new(streams: [DiceStream; WIDTH], bound: usize) -> Self {
        // Room for four battles' most faces: a window is moved back to its start only when
        // it has no room left (for the bench battle, about once in thirteen battles).
        let stride = 4 * bound + 2 * FACES_PER_WORD as usize;
        Self {
            bytes: vec![0; WIDTH * stride + FETCH_BYTES],
            stride,
            at: [0; WIDTH],
            end: [0; WIDTH],
            used: [0; WIDTH],
            streams,
        }
    }

    /// Cuts whole words until every window holds at least `bound` faces from its lane's
    /// next, first moving them to the window's start where the window has no room.
    fn top_up(&mut self, bound: usize) {
        let words_needed = |faces: usize| faces.div_ceil(FACES_PER_WORD as usize);
        for i in 0..WIDTH {
            let at = self.at[i] as usize;
            debug_assert!(at <= self.end[i]);
            if self.end[i] - at >= bound {
                continue;
            }
            let start = i * self.stride;
            let cut = words_needed(bound - (self.end[i] - at)) * FACES_PER_WORD as usize;
            if self.end[i] + cut > self.stride {
                self.bytes
                    .copy_within(start + at..start + self.end[i], start);
                self.end[i] -= at;
                self.used[i] += at as u64;
                self.at[i] = 0;
            }
            let end = start + self.end[i];
            let stream = &mut self.streams[i];
            // PERF: the words' faces written to the window's slice, twelve bytes a word,
            // one bounds check a top-up (two a word were 10% of its instructions).
            for faces in self.bytes[end..end + cut]
                .as_chunks_mut::<{ FACES_PER_WORD as usize }>()
                .0
            {
                let (first, last) = cut_word_parts(stream.next_u64());
                faces[..8].copy_from_slice(&first.to_le_bytes());
                faces[8..].copy_from_slice(&last.to_le_bytes());
            }
            self.end[i] += cut;
        }
    }

    /// The words the lanes' drawn faces took. (With `count-dice`, the faces drawn are
    /// counted as draws here: the cut takes no `DiceWord::take`.)
    fn words(&self) -> u64 {
        let drawn = std::array::from_fn::<u64, WIDTH, _>(|i| self.used[i] + u64::from(self.at[i]));
        #[cfg(any(test, feature = "count-dice"))]
        crate::dice::counting::add_draws(drawn.iter().sum());
        drawn
            .iter()
            .map(|faces| faces.div_ceil(u64::from(FACES_PER_WORD)))
            .sum()
    }
}

/// The twelve faces (0–5) that [`super::PackedDice`] cuts from `word` by successive
/// `take(6)`. The `k`-th is `⌊6^k · word / 2^64⌋ mod 6`, which is digit `k` (from the most
/// significant) of `x = ⌊6^12 · word / 2^64⌋` in base 6, since `⌊⌊a⌋ / m⌋ = ⌊a / m⌋`. `x`
/// is below `6^12 < 2^32`; its digits are read four at a time, from a table.
#[cfg(test)]
pub(super) fn cut_word(word: u64) -> [u8; FACES_PER_WORD as usize] {
    let (first, last) = cut_word_parts(word);
    let mut faces = [0; FACES_PER_WORD as usize];
    faces[..8].copy_from_slice(&first.to_le_bytes());
    faces[8..].copy_from_slice(&last.to_le_bytes());
    faces
}

/// `cut_word`'s faces as the little-endian bytes of a `u64` (the first eight) and a
/// `u32` (the last four).
///
/// PERF: the three four-digit groups are joined in registers. Written as overlapping
/// 4-byte stores of three-digit groups, read back as one 8-byte load, the load waited
/// for the stores (a failed store-to-load forward): 65% of the window top-up's samples
/// under `perf`. Four digits a lookup, each group from one multiply of the fraction the
/// last one left (two divisions of `x` before: 4,152 → 4,100 instructions a battle).
#[inline(always)]
fn cut_word_parts(word: u64) -> (u64, u32) {
    // Digits `k` to `k + 3` of `x` are `⌊f · 6^4⌋` for the fraction `f = frac(6^k · word /
    // 2^64)`, and `frac(f · 6^4)` is the next group's: a multiply of `f · 2^64` by 6^4
    // leaves the digits above bit 64 and that fraction, exactly, below.
    let group = |fraction: u64| {
        let product = u128::from(fraction) * u128::from(6u32.pow(4));
        (DIGITS4[(product >> 64) as usize], product as u64)
    };
    let (high, fraction) = group(word);
    let (middle, fraction) = group(fraction);
    let (low, _) = group(fraction);
    (u64::from(high) | u64::from(middle) << 32, low)
}

/// Fights [`FrontierCombat::lanes_block`]'s `n` battles on the lanes' streams (`lanes`)
/// all lanes at once and counts them into `histogram`, returning the words the lanes
/// drew; or fights nothing and returns `None` where the CPU has no AVX2 or the battle
/// has no [`LaneTables`].
pub(super) fn all_at_once(
    combat: &FrontierCombat,
    lanes: &[[u64; 4]; LANES],
    n: u64,
    histogram: &mut FrontierHistogram,
) -> Option<u64> {
    let tables = combat.lane_tables.as_ref()?;
    #[cfg(target_arch = "x86_64")]
    if crate::dice::lanes::VectorForm::Avx2.available() {
        let mut words = 0;
        for g in 0..LANES / WIDTH {
            let streams = std::array::from_fn(|i| DiceStream::from_state(lanes[WIDTH * g + i]));
            let battles: [u64; WIDTH] =
                std::array::from_fn(|i| crate::dice::lanes::lane_battles(n, WIDTH * g + i));
            // SAFETY: AVX2 is detected.
            words += unsafe { avx2::sweeps(combat, tables, streams, battles, histogram) };
        }
        return Some(words);
    }
    let _ = (tables, lanes, n, histogram);
    None
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    use super::{LaneFaces, LaneTables, WIDTH};
    use crate::dice::DiceStream;
    use crate::systems::frontier::battle::{
        BattleDice, BattleOutcome, FrontierCombat, FrontierHistogram, MovePolicy, SideState,
        MAX_LANES, MAX_UNITS, SMALL_STACK_KEYS,
    };
    use crate::systems::frontier::rolls::MAX_LEADER;

    type V = __m256i;

    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn set1(x: u32) -> V {
        _mm256_set1_epi32(x as i32)
    }

    /// All ones in the lanes where `v` is 0.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn is_zero(v: V) -> V {
        _mm256_cmpeq_epi32(v, _mm256_setzero_si256())
    }

    /// All ones in the lanes where `v` is not 0.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn non_zero(v: V) -> V {
        _mm256_xor_si256(is_zero(v), _mm256_set1_epi32(-1))
    }

    /// `BITS[b]`: bit `b` in each of eight lanes, read as a register. (PERF: a shift, a move
    /// and a broadcast a test were 2% of the sweeps' instructions.)
    #[repr(C, align(32))]
    struct Lanes8([u32; 8]);
    static BITS: [Lanes8; 32] = {
        let mut bits = [const { Lanes8([0; 8]) }; 32];
        let mut b = 0;
        while b < 32 {
            bits[b] = Lanes8([1 << b; 8]);
            b += 1;
        }
        bits
    };

    /// Bit `b` (below 32) in every lane.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn bit(b: usize) -> V {
        _mm256_load_si256(BITS[b].0.as_ptr().cast())
    }

    /// All ones in the lanes where bit `b` (below 32) of `v` is set.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn has_bit(v: V, b: usize) -> V {
        let bit = bit(b);
        _mm256_cmpeq_epi32(_mm256_and_si256(v, bit), bit)
    }

    /// All ones in the lanes where bit `b` of `v` is set, `b` lane by lane.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn has_bits(v: V, b: V) -> V {
        let one = set1(1);
        _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_srlv_epi32(v, b), one), one)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn any(m: V) -> bool {
        _mm256_testz_si256(m, m) == 0
    }

    /// `a` where `m`, else `b`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn select(m: V, a: V, b: V) -> V {
        _mm256_blendv_epi8(b, a, m)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn and(a: V, b: V) -> V {
        _mm256_and_si256(a, b)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn or(a: V, b: V) -> V {
        _mm256_or_si256(a, b)
    }

    /// `a & !b`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn and_not(a: V, b: V) -> V {
        _mm256_andnot_si256(b, a)
    }

    /// `table[index]` in each lane (every index in range).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn gather(table: &[u32], index: V) -> V {
        _mm256_i32gather_epi32::<4>(table.as_ptr().cast(), index)
    }

    /// `table[index]` in each lane, `index` below 16: two permutes.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn lookup16(table: &[u32; 16], index: V) -> V {
        let low = _mm256_loadu_si256(table.as_ptr().cast());
        let high = _mm256_loadu_si256(table[8..].as_ptr().cast());
        select(
            _mm256_cmpgt_epi32(index, set1(7)),
            _mm256_permutevar8x32_epi32(high, index),
            _mm256_permutevar8x32_epi32(low, index),
        )
    }

    /// `table[index]` in each lane, `index` below 32: four permutes
    /// ([`crate::dice::lanes::avx2::lookup32`] on the table's four registers).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn lookup32(table: &[u32; 32], index: V) -> V {
        let registers = std::array::from_fn(|r| _mm256_loadu_si256(table[8 * r..].as_ptr().cast()));
        crate::dice::lanes::avx2::lookup32(&registers, index)
    }

    /// `table[index]` in each lane, `index` below 64: eight permutes.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn lookup64(table: &[u32; 64], index: V) -> V {
        let within = and(index, set1(31));
        let low = lookup32(table[..32].try_into().unwrap_unchecked(), within);
        let high = lookup32(table[32..].try_into().unwrap_unchecked(), within);
        select(_mm256_cmpgt_epi32(index, set1(31)), high, low)
    }

    /// The set bits of each lane's element, counted by nibbles from a table.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn popcount(v: V) -> V {
        let nibble_bits = _mm256_setr_epi8(
            0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2,
            3, 3, 4,
        );
        let low = _mm256_set1_epi8(0x0F);
        let bytes = _mm256_add_epi8(
            _mm256_shuffle_epi8(nibble_bits, and(v, low)),
            _mm256_shuffle_epi8(nibble_bits, and(_mm256_srli_epi32::<4>(v), low)),
        );
        _mm256_madd_epi16(
            _mm256_maddubs_epi16(bytes, _mm256_set1_epi8(1)),
            _mm256_set1_epi16(1),
        )
    }

    /// One side's state in eight lanes.
    #[derive(Clone, Copy)]
    struct State {
        lo: V,
        hi: V,
        removed: V,
        leaders: V,
    }

    impl State {
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn in_play(&self, all: V) -> V {
            and_not(and_not(all, and(self.lo, self.hi)), self.removed)
        }
        /// Neither disrupted, routed nor eliminated.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn normal(&self) -> V {
            _mm256_xor_si256(or(self.lo, self.hi), _mm256_set1_epi32(-1))
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn worsen(&mut self, m: V) {
            self.hi = _mm256_xor_si256(self.hi, and(self.lo, m));
            self.lo = _mm256_xor_si256(self.lo, m);
        }
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn recover(&mut self, m: V) {
            self.hi = _mm256_xor_si256(self.hi, and_not(m, self.lo));
            self.lo = _mm256_xor_si256(self.lo, m);
            self.removed = and_not(self.removed, m);
        }
    }

    /// A side's constants as the sweeps read them.
    struct SideConsts<'a> {
        all: V,
        units: usize,
        first_unit: [u32; 8],
        unit_lane: [usize; MAX_UNITS],
        // PERF: the constants the loops over units and lanes read, as registers (a load
        // and a broadcast each time they were read).
        /// `lane_units[lane]`: the side's one stack in that lane; `leader_rating[lane]`: its
        /// leader's rating (0 for none); the units' fire faces, and their recovery faces with their
        /// stack's leader (`recover_with`) and without one (`recover_alone`).
        lane_units: [V; MAX_LANES],
        leader_rating: [V; MAX_LANES],
        fire_faces: [V; MAX_UNITS],
        recover_with: [V; MAX_UNITS],
        recover_alone: V,
        regular: V,
        non_warrior: V,
        /// The stacks (lanes) that start with a leader.
        leader_stacks: V,
        melee_losses: &'a [u32],
        aggressive: bool,
        avoid_melee: bool,
        /// `scan[firer_lane][k]`: the units of the side's stack (lane) that is `k`-th
        /// farthest from a firer of the other side in `firer_lane`, and that lane, as
        /// registers (the order fire scans for a target in: `LaneTables::nearest_first`
        /// reversed). PERF: read as they stand, not loaded from two tables and broadcast
        /// in the scan (its loop control and broadcasts were 5% of the sweeps'
        /// instructions).
        scan: [[[V; 2]; MAX_LANES]; MAX_LANES],
    }

    /// The sweeps of one register's lanes over their battles: the lanes' dice, the
    /// battle's constants, and the lanes' state.
    struct Sweep<'a> {
        combat: &'a FrontierCombat,
        tables: &'a LaneTables,
        sides: [SideConsts<'a>; 2],
        faces: LaneFaces,
        /// The eight faces from `chunk_start` in each lane's window (the first four in
        /// `chunk`, the next in `chunk_next`), which its draws read until one lane that
        /// draws has taken all eight (a gather a draw was most of the sweeps' time on the
        /// AMD EPYC).
        chunk: V,
        chunk_next: V,
        chunk_start: V,
        /// Eight times the faces each lane took from the chunk: its next face is at
        /// `chunk_start + shift / 8`, the bits of `chunk` (or, past 32, `chunk_next`) from
        /// `shift`.
        shift: V,
        window_start: V,
        st: [State; 2],
    }

    impl Sweep<'_> {
        /// The next face (0–5) of each lane; the lanes of `m` step past it.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn draw(&mut self, m: V) -> V {
            if any(and(m, _mm256_cmpgt_epi32(self.shift, set1(56)))) {
                self.fetch(self.drawn());
            }
            // Face `k` (`shift` 8k) is byte `k` of `chunk` or byte `k − 4` of `chunk_next`:
            // a shift by 32 bits or more (`8k − 32` below 0 wraps) leaves 0.
            let face = or(
                _mm256_srlv_epi32(self.chunk, self.shift),
                _mm256_srlv_epi32(self.chunk_next, _mm256_sub_epi32(self.shift, set1(32))),
            );
            // `m` is −1 where set: −8 there.
            self.shift = _mm256_sub_epi32(self.shift, _mm256_slli_epi32::<3>(m));
            and(face, set1(0xFF))
        }

        /// Each lane's next face in its window.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn drawn(&self) -> V {
            _mm256_add_epi32(self.chunk_start, _mm256_srli_epi32::<3>(self.shift))
        }

        /// Round `round` of the battles in the lanes of `lanes` (a bit a lane), one lane at a
        /// time by [`FrontierCombat::round`], drawing from the lanes' windows.
        #[target_feature(enable = "avx2")]
        #[inline(never)]
        unsafe fn round_lane_by_lane(&mut self, round: u32, mut lanes: u32) {
            let stored = self.stored_states();
            let mut st: [[SideState; 2]; WIDTH] = std::array::from_fn(|i| lane_sides(&stored, i));
            let mut at = store(self.drawn());
            while lanes != 0 {
                let i = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                let start = i * self.faces.stride;
                let mut dice = WindowDice {
                    faces: &self.faces.bytes[start..start + self.faces.stride],
                    at: at[i] as usize,
                };
                self.combat.round(&mut st[i], round, &mut dice);
                at[i] = dice.at as u32;
            }
            for (s, state) in self.st.iter_mut().enumerate() {
                let lanes = |word: fn(&SideState) -> u32| -> [u32; WIDTH] {
                    std::array::from_fn(|i| word(&st[i][s]))
                };
                *state = State {
                    lo: load(lanes(|x| x.lo)),
                    hi: load(lanes(|x| x.hi)),
                    removed: load(lanes(|x| x.removed)),
                    leaders: load(lanes(|x| x.leaders)),
                };
            }
            // The window is the same (it is topped up only between sweeps), so `chunk` and
            // `chunk_next` still hold the faces from `chunk_start`: a draw takes its face
            // there or gathers.
            self.shift = _mm256_slli_epi32::<3>(_mm256_sub_epi32(load(at), self.chunk_start));
        }

        /// The sides' states as stored words: `[side][lo, hi, removed, leaders][lane]`
        /// ([`lane_sides`] reads a lane's).
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn stored_states(&self) -> [[[u32; WIDTH]; 4]; 2] {
            self.st
                .map(|x| [store(x.lo), store(x.hi), store(x.removed), store(x.leaders)])
        }

        /// Each side's units lost (eliminated or routed).
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn lost(&self) -> [V; 2] {
            [
                popcount(and(self.st[0].hi, self.sides[0].all)),
                popcount(and(self.st[1].hi, self.sides[1].all)),
            ]
        }

        /// Each side's units eliminated, routed and disrupted, and leaders lost
        /// ([`FrontierCombat::outcome`]'s counts).
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn counts(&self) -> [[V; 4]; 2] {
            let mut counts = [[_mm256_setzero_si256(); 4]; 2];
            for (s, side) in counts.iter_mut().enumerate() {
                let (st, all) = (self.st[s], self.sides[s].all);
                *side = [
                    popcount(and(and(st.lo, st.hi), all)),
                    popcount(and(and_not(st.hi, st.lo), all)),
                    popcount(and(and_not(st.lo, st.hi), all)),
                    popcount(and_not(self.sides[s].leader_stacks, st.leaders)),
                ];
            }
            counts
        }

        /// Reads each lane's eight faces from `drawn` (a face in its window) into `chunk` and
        /// `chunk_next`.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn fetch(&mut self, drawn: V) {
            let at = _mm256_add_epi32(self.window_start, drawn);
            debug_assert!(store(at)
                .iter()
                .all(|&at| at as usize + super::FETCH_BYTES <= self.faces.bytes.len()));
            let bytes = self.faces.bytes.as_ptr().cast();
            self.chunk = _mm256_i32gather_epi32::<1>(bytes, at);
            const { assert!(super::FETCH_BYTES == 8) };
            self.chunk_next = _mm256_i32gather_epi32::<1>(bytes, _mm256_add_epi32(at, set1(4)));
            self.chunk_start = drawn;
            self.shift = _mm256_setzero_si256();
        }

        /// Bit `l` set where lane `l` of the side holds a unit of `units`.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn lanes_holding(&self, side: usize, units: V) -> V {
            let mut lanes = _mm256_setzero_si256();
            for l in 0..self.combat.lanes {
                let held = non_zero(and(units, self.sides[side].lane_units[l]));
                lanes = or(lanes, and(held, bit(l)));
            }
            lanes
        }

        /// The rating of the leader with the side's stack (lane) `l`, 0 where lost.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn leader_of(&self, side: usize, l: usize) -> V {
            and(
                has_bit(self.st[side].leaders, l),
                self.sides[side].leader_rating[l],
            )
        }

        /// A leader-loss roll at stack `l` in the lanes of `m` whose stack still has its
        /// leader, side 1's stack where `of_b`, side 0's elsewhere: one draw for both sides.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn lose_leaders(&mut self, l: usize, of_b: V, m: V) {
            let [a, b] = [0, 1].map(|s| has_bit(self.st[s].leaders, l));
            let rolls = and(m, select(of_b, b, a));
            let face = self.draw(rolls);
            let lost = and(
                and(rolls, bit(l)),
                _mm256_cmpgt_epi32(set1(self.combat.battle.leader_loss.0), face),
            );
            self.st[1].leaders = and_not(self.st[1].leaders, and(lost, of_b));
            self.st[0].leaders = and_not(self.st[0].leaders, and_not(lost, of_b));
        }

        /// A leader-loss roll at the side's stack, `lanes` giving each lane's, in the lanes
        /// of `m` whose stack still has its leader.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn lose_leader_at(&mut self, side: usize, lanes: V, m: V) {
            let rolls = and(m, has_bits(self.st[side].leaders, lanes));
            let face = self.draw(rolls);
            let lost = and(
                rolls,
                _mm256_cmpgt_epi32(set1(self.combat.battle.leader_loss.0), face),
            );
            let bits = _mm256_sllv_epi32(set1(1), lanes);
            self.st[side].leaders = and_not(self.st[side].leaders, and(lost, bits));
        }

        /// [`FrontierCombat::fire_phase`] in the lanes of `act`, for sides in one row.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn fire(&mut self, side: usize, act: V) {
            let enemy = 1 - side;
            let in_play = self.st[enemy].in_play(self.sides[enemy].all);
            let s = self.st[side];
            let firing = and_not(and(self.sides[side].all, s.normal()), s.removed);
            let go = and(act, and(non_zero(in_play), non_zero(firing)));
            let firers = and(firing, go);
            if !any(firers) {
                return;
            }
            // The enemy stacks (lanes) that still have their leader.
            let led = self.st[enemy].leaders;
            let mut set = in_play;
            let mut pass_hits = _mm256_setzero_si256();
            // Per firer: the lanes where its hit landed on a stack with its leader (a
            // leader-loss event), and the stack's lane. PERF: written for every unit of the
            // side before they are read, so not zeroed first (2 KB a call: `memset` was 2%
            // of the sweeps' samples).
            let mut events = [const { MaybeUninit::<V>::uninit() }; MAX_UNITS];
            let mut event_lanes = [const { MaybeUninit::<V>::uninit() }; MAX_UNITS];
            // The enemy's state through the loop, stored back after it (PERF: written
            // through `self.st[enemy]`, it was stored at every firer).
            let mut target = self.st[enemy];
            for u in 0..self.sides[side].units {
                let fires = has_bit(firers, u);
                // A pass ends where its targets are used up: its hits land, and a new
                // one starts from the front.
                let spent = and(fires, is_zero(set));
                let landing = and(pass_hits, spent);
                target.worsen(landing);
                pass_hits = and_not(pass_hits, spent);
                set = select(spent, in_play, set);
                let lane = self.sides[side].unit_lane[u];
                // The target's lane: the nearest to the firer's holding a unit of `set`, the
                // lower-numbered at equal distance (its own first): the lanes in that order,
                // scanned from the farthest, each that holds one overriding the last.
                let mut pick = _mm256_setzero_si256();
                let mut target_lane = _mm256_setzero_si256();
                for &[units, l] in &self.sides[enemy].scan[lane][..self.combat.lanes] {
                    let there = and(set, units);
                    let none = is_zero(there);
                    pick = select(none, pick, there);
                    target_lane = select(none, target_lane, l);
                }
                let bit = and(
                    fires,
                    and(pick, _mm256_sub_epi32(_mm256_setzero_si256(), pick)),
                );
                set = and_not(set, bit);
                let face = self.draw(fires);
                let hit = has_bits(self.sides[side].fire_faces[u], face);
                // A hit is wasted on a unit eliminated in an earlier pass: the enemy's state
                // changes only at a pass's end, its own lane's, so this is the state at the
                // pass's start.
                let gone = and(target.lo, target.hi);
                let landed = and_not(and(bit, hit), gone);
                pass_hits = or(pass_hits, landed);
                events[u].write(and(non_zero(landed), has_bits(led, target_lane)));
                event_lanes[u].write(target_lane);
            }
            target.worsen(pass_hits);
            self.st[enemy] = target;
            // PERF: only the firers with an event in some lane roll (a roll in no lane draws
            // nothing).
            let mut rolling = 0u32;
            for (u, event) in events.iter().enumerate().take(self.sides[side].units) {
                // SAFETY: the loop above wrote `events` for every unit of the side.
                rolling |= u32::from(any(event.assume_init())) << u;
            }
            while rolling != 0 {
                let u = rolling.trailing_zeros() as usize;
                rolling &= rolling - 1;
                // SAFETY: as above, both.
                let (lanes, events) = (event_lanes[u].assume_init(), events[u].assume_init());
                self.lose_leader_at(enemy, lanes, events);
            }
        }

        /// [`FrontierCombat::movement_and_melee`] in the lanes of `act`, for sides in one
        /// row (each lane's front stack is its only one).
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn movement_and_melee(&mut self, round: u32, act: V) {
            let b = &self.combat.battle;
            let lanes = self.combat.lanes;
            let in_play = [0, 1].map(|s| self.st[s].in_play(self.sides[s].all));
            let normal = [0, 1].map(|s| self.st[s].normal());
            let holding = [0, 1].map(|s| self.lanes_holding(s, in_play[s]));
            let can_move = [0, 1].map(|s| self.lanes_holding(s, and(in_play[s], normal[s])));
            let contested = and(act, and(holding[0], holding[1]));
            let zero = _mm256_setzero_si256();
            let mut started = [zero; 2];
            // Per lane: side 1 attacks (else side 0), its movers, and the defenders that
            // moved away.
            let mut attacker_b = [zero; MAX_LANE_COUNT];
            let mut moved = [zero; MAX_LANE_COUNT];
            let mut avoided = [zero; MAX_LANE_COUNT];
            for side in [b.initiative, 1 - b.initiative] {
                if !self.sides[side].aggressive {
                    continue;
                }
                let surprised = round == 1 && b.surprise == Some(1 - side);
                let won_surprise = round == 1 && b.surprise == Some(side);
                let atop = started[1 - side];
                let mut rolling = and_not(contested, or(started[0], started[1]));
                if self.sides[side].avoid_melee {
                    rolling = or(rolling, atop);
                }
                rolling = and(rolling, can_move[side]);
                if !any(rolling) {
                    continue;
                }
                for l in 0..lanes {
                    let mut rolls = has_bit(rolling, l);
                    let c = &self.sides[side];
                    let enemy_atop = has_bit(atop, l);
                    let here = and(c.lane_units[l], in_play[side]);
                    let movers = and(here, normal[side]);
                    let leader = self.leader_of(side, l);
                    let led = non_zero(leader);
                    if surprised {
                        rolls = and(rolls, led);
                    }
                    let one = set1(1);
                    let nw = and(non_zero(and(movers, c.non_warrior)), one);
                    let regular = and(non_zero(and(here, c.regular)), one);
                    let bonus = if won_surprise { and(led, one) } else { zero };
                    let index = or(
                        or(_mm256_slli_epi32::<4>(nw), and(led, set1(8))),
                        or(
                            _mm256_slli_epi32::<2>(regular),
                            or(_mm256_slli_epi32::<1>(and(enemy_atop, one)), bonus),
                        ),
                    );
                    let faces = lookup32(&self.tables.move_faces[side][l], index);
                    let face = self.draw(rolls);
                    let success = has_bits(faces, face);
                    avoided[l] = or(
                        avoided[l],
                        and(movers, and(rolls, and(success, enemy_atop))),
                    );
                    let attacks = and_not(rolls, enemy_atop);
                    attacker_b[l] = select(
                        attacks,
                        set1(if side == 1 { u32::MAX } else { 0 }),
                        attacker_b[l],
                    );
                    moved[l] = select(attacks, movers, moved[l]);
                    started[side] = or(started[side], and(and(attacks, success), bit(l)));
                }
            }
            let melees = or(started[0], started[1]);
            if !any(melees) {
                return;
            }
            for l in 0..lanes {
                let fights = has_bit(melees, l);
                self.close_combat(l, fights, attacker_b[l], moved[l], avoided[l], round);
            }
        }

        /// [`FrontierCombat::close_combat`] in lane `l`, in the lanes of `m`: side 1 attacks where
        /// `attacker_b`, side 0 elsewhere.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn close_combat(
            &mut self,
            l: usize,
            m: V,
            attacker_b: V,
            movers: V,
            avoided: V,
            round: u32,
        ) {
            let b = &self.combat.battle;
            let zero = _mm256_setzero_si256();
            let one = set1(1);
            let keys = SMALL_STACK_KEYS as u32;
            // Per side: attacks (lanes), the units that fight, their strength.
            let attacks = [_mm256_xor_si256(attacker_b, set1(u32::MAX)), attacker_b];
            let mut pool = [zero; 2];
            let mut fighting = [zero; 2];
            let mut disrupted = [zero; 2];
            let mut strength = [zero; 2];
            let mut fighting_keys = [zero; 2];
            for s in 0..2 {
                let c = &self.sides[s];
                let stayed = and_not(c.lane_units[l], avoided);
                pool[s] = select(attacks[s], movers, stayed);
                let st = &self.st[s];
                let routed = and_not(st.hi, st.lo);
                fighting[s] = and_not(and(pool[s], st.in_play(c.all)), routed);
                disrupted[s] = and(fighting[s], and_not(st.lo, st.hi));
                let first = _mm_cvtsi32_si128(c.first_unit[l] as i32);
                fighting_keys[s] = _mm256_srl_epi32(fighting[s], first);
                strength[s] = lookup16(&self.tables.strength[s][l], fighting_keys[s]);
            }
            let strength_a = select(attacker_b, strength[1], strength[0]);
            let strength_d = select(attacker_b, strength[0], strength[1]);
            let m = and(m, non_zero(strength_a));
            // Where every defender left in play is routed: all are eliminated.
            let doomed = and(m, is_zero(strength_d));
            for s in 0..2 {
                let lanes = and_not(doomed, attacks[s]);
                let units = and(lanes, and(pool[s], self.st[s].in_play(self.sides[s].all)));
                self.st[s].lo = or(self.st[s].lo, units);
                self.st[s].hi = or(self.st[s].hi, units);
            }
            let m = and_not(m, doomed);
            let disrupted_d = select(attacker_b, disrupted[0], disrupted[1]);
            let leader = [self.leader_of(0, l), self.leader_of(1, l)];
            let (leader_a, leader_d) = (
                select(attacker_b, leader[1], leader[0]),
                select(attacker_b, leader[0], leader[1]),
            );
            let mut shift = _mm256_sub_epi32(leader_a, leader_d);
            shift = _mm256_add_epi32(shift, and(non_zero(disrupted_d), one));
            if round == 1 {
                if let Some(surprise) = b.surprise {
                    shift = _mm256_add_epi32(shift, and(attacks[surprise], one));
                }
            }
            let odds = match &self.tables.pair_odds {
                Some(pair_odds) => {
                    let (key_a, key_d) = (
                        select(attacker_b, fighting_keys[1], fighting_keys[0]),
                        select(attacker_b, fighting_keys[0], fighting_keys[1]),
                    );
                    let index = or(
                        and(attacker_b, set1(16)),
                        or(_mm256_slli_epi32::<2>(key_a), key_d),
                    );
                    lookup32(&pair_odds[l], index)
                }
                None => {
                    let strengths = set1(self.combat.strengths as u32);
                    gather(
                        &self.tables.odds,
                        _mm256_add_epi32(_mm256_mullo_epi32(strength_a, strengths), strength_d),
                    )
                }
            };
            let columns = b.crt.columns.len() as u32;
            let column = _mm256_min_epi32(
                _mm256_max_epi32(_mm256_add_epi32(odds, shift), zero),
                set1(columns - 1),
            );
            let face = self.draw(m);
            let cell = _mm256_add_epi32(
                _mm256_mullo_epi32(
                    _mm256_add_epi32(
                        _mm256_mullo_epi32(and(attacker_b, one), set1(columns)),
                        column,
                    ),
                    set1(6),
                ),
                face,
            );
            let codes = match &self.tables.cells64 {
                Some(cells) => lookup64(cells, cell),
                None => gather(&self.tables.cells, cell),
            };
            let byte = set1(0xFF);
            let (code_a, code_d) = (and(codes, byte), and(_mm256_srli_epi32::<8>(codes), byte));
            let mut loses = [zero; 2];
            for s in 0..2 {
                let c = &self.sides[s];
                let code = select(attacks[s], code_a, code_d);
                let hit = and(m, non_zero(code));
                loses[s] = hit;
                let first = _mm_cvtsi32_si128(c.first_unit[l] as i32);
                let st = &mut self.st[s];
                let (disrupted_key, fighting_key) = (
                    _mm256_srl_epi32(disrupted[s], first),
                    _mm256_srl_epi32(fighting[s], first),
                );
                let losses = match &self.tables.pair_losses[s] {
                    Some(pairs) => lookup16(
                        &pairs[l],
                        or(_mm256_slli_epi32::<2>(disrupted_key), fighting_key),
                    ),
                    None => {
                        let key = or(_mm256_slli_epi32::<4>(disrupted_key), fighting_key);
                        gather(
                            c.melee_losses,
                            _mm256_add_epi32(key, set1(l as u32 * keys * keys)),
                        )
                    }
                };
                let lost = _mm256_sub_epi32(_mm256_min_epu32(code, set1(4)), one);
                let eliminated = _mm256_sll_epi32(
                    and(
                        _mm256_srlv_epi32(losses, _mm256_slli_epi32::<2>(lost)),
                        set1(0xF),
                    ),
                    first,
                );
                let eliminated = and(eliminated, hit);
                let routed = and(hit, and(fighting[s], _mm256_cmpeq_epi32(code, byte)));
                st.lo = and_not(or(st.lo, eliminated), routed);
                st.hi = or(st.hi, or(eliminated, routed));
                st.removed = or(st.removed, routed);
            }
            // The leader rolls: the attacker's, then the defender's.
            let (att, def) = (
                select(attacker_b, loses[1], loses[0]),
                select(attacker_b, loses[0], loses[1]),
            );
            self.lose_leaders(l, attacker_b, att);
            self.lose_leaders(l, attacks[0], def);
        }

        /// [`FrontierCombat::recovery`] in the lanes of `act`.
        #[target_feature(enable = "avx2")]
        #[inline]
        unsafe fn recovery(&mut self, act: V) {
            for side in 0..2 {
                let c = &self.sides[side];
                let st = self.st[side];
                let rolling = and(act, and(_mm256_xor_si256(st.lo, st.hi), c.all));
                if !any(rolling) {
                    continue;
                }
                let mut recovered = _mm256_setzero_si256();
                for u in 0..c.units {
                    let rolls = has_bit(rolling, u);
                    let c = &self.sides[side];
                    let faces = select(
                        has_bit(self.st[side].leaders, c.unit_lane[u]),
                        c.recover_with[u],
                        c.recover_alone,
                    );
                    let face = self.draw(rolls);
                    let ok = has_bits(faces, face);
                    recovered = or(recovered, and(rolls, and(ok, bit(u))));
                }
                self.st[side].recover(recovered);
            }
        }
    }

    /// `lanes[i]` in lane `i` ([`store`]'s inverse).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn load(lanes: [u32; WIDTH]) -> V {
        _mm256_loadu_si256(lanes.as_ptr().cast())
    }

    /// Lane `i`'s two sides' states from [`Sweep::stored_states`].
    #[inline(always)]
    fn lane_sides(stored: &[[[u32; WIDTH]; 4]; 2], i: usize) -> [SideState; 2] {
        [0, 1].map(|s| SideState {
            lo: stored[s][0][i],
            hi: stored[s][1][i],
            removed: stored[s][2][i],
            leaders: stored[s][3][i],
        })
    }

    /// Rounds fought by at most this many of a register's lanes are fought lane by lane.
    const SCALAR_LANES: u32 = 4;

    /// A lane's window of faces as a [`BattleDice`]: its faces in order from `at`. Sweeps
    /// run only battles whose every roll is a face (leader loss on a d6).
    struct WindowDice<'a> {
        faces: &'a [u8],
        at: usize,
    }

    impl BattleDice for WindowDice<'_> {
        #[inline(always)]
        fn face(&mut self) -> u32 {
            let face = self.faces[self.at];
            self.at += 1;
            u32::from(face)
        }
        #[inline(always)]
        fn below(&mut self, n: u32) -> u32 {
            // `LaneTables::new` takes only battles whose `below` is of 6.
            debug_assert_eq!(n, 6);
            self.face()
        }
    }

    /// The most lanes of an array (`super::MAX_LANES`).
    const MAX_LANE_COUNT: usize = crate::systems::frontier::battle::MAX_LANES;

    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn store(v: V) -> [u32; 8] {
        let mut out = [0u32; 8];
        _mm256_storeu_si256(out.as_mut_ptr().cast(), v);
        out
    }

    /// Fights `battles[i]` battles in lane `i` of one register, each lane on its stream
    /// (`streams`), counts them into `histogram` and returns the words the lanes drew.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sweeps(
        combat: &FrontierCombat,
        tables: &LaneTables,
        streams: [DiceStream; WIDTH],
        battles: [u64; WIDTH],
        histogram: &mut FrontierHistogram,
    ) -> u64 {
        let b = &combat.battle;
        let sides = [0, 1].map(|s| {
            let m = &combat.masks[s];
            let mut lane_units = [0u32; 8];
            let mut first_unit = [0u32; 8];
            let mut leader = [0u32; 8];
            for l in 0..combat.lanes {
                // One row a lane: stack `l` is lane `l`.
                lane_units[l] = m.stack_units[l];
                first_unit[l] = m.stack_units[l].trailing_zeros();
                leader[l] = m.leader[l];
            }
            SideConsts {
                all: set1(m.all),
                units: combat.units[s].len(),
                first_unit,
                unit_lane: m.unit_lane.map(usize::from),
                lane_units: std::array::from_fn(|l| set1(lane_units[l])),
                leader_rating: std::array::from_fn(|l| set1(leader[l])),
                fire_faces: m.fire_faces.map(|f| set1(u32::from(f))),
                recover_with: std::array::from_fn(|u| {
                    let l = usize::from(m.unit_lane[u]);
                    let rating = leader
                        .get(l)
                        .map_or(0, |&r| (r as usize).min(MAX_LEADER as usize));
                    set1(u32::from(m.recover_faces[rating]))
                }),
                recover_alone: set1(u32::from(m.recover_faces[0])),
                regular: set1(m.regular),
                non_warrior: set1(m.non_warrior),
                leader_stacks: set1(m.leader_stacks),
                melee_losses: &tables.melee_losses[s],
                aggressive: b.sides[s].move_policy == MovePolicy::Aggressive,
                avoid_melee: b.sides[s].avoid_melee,
                scan: std::array::from_fn(|firer_lane| {
                    std::array::from_fn(|k| {
                        let lanes = combat.lanes;
                        if firer_lane < lanes && k < lanes {
                            let l = tables.nearest_first[firer_lane][lanes - 1 - k];
                            [set1(lane_units[usize::from(l)]), set1(u32::from(l))]
                        } else {
                            [_mm256_setzero_si256(); 2]
                        }
                    })
                }),
            }
        });
        let bound = tables.faces_bound;
        let faces = LaneFaces::new(streams, bound);
        let stride = faces.stride as i32;
        let mut sweep = Sweep {
            combat,
            tables,
            sides,
            faces,
            shift: _mm256_setzero_si256(),
            chunk: _mm256_setzero_si256(),
            chunk_next: _mm256_setzero_si256(),
            chunk_start: _mm256_setzero_si256(),
            window_start: _mm256_mullo_epi32(
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                _mm256_set1_epi32(stride),
            ),
            st: [State {
                lo: _mm256_setzero_si256(),
                hi: _mm256_setzero_si256(),
                removed: _mm256_setzero_si256(),
                leaders: _mm256_setzero_si256(),
            }; 2],
        };
        let initiative = b.initiative;
        let other = 1 - initiative;
        let sweeps = battles.iter().copied().max().unwrap_or(0);
        for k in 0..sweeps {
            sweep.faces.top_up(bound);
            sweep.fetch(load(sweep.faces.at));
            // The lanes with a `k`-th battle (compared as `u64`: a lane's battles can pass
            // `i32::MAX` for a block of 2^36).
            let active = battles.map(|battles| if k < battles { u32::MAX } else { 0 });
            let active = load(active);
            for s in 0..2 {
                sweep.st[s] = State {
                    lo: _mm256_setzero_si256(),
                    hi: _mm256_setzero_si256(),
                    removed: _mm256_setzero_si256(),
                    leaders: set1(combat.masks[s].leader_stacks),
                };
            }
            // Rounds (19.1).
            let mut rounds = set1(b.sides[initiative].primary_leader);
            if b.extra_round {
                let face = sweep.draw(active);
                let extra = _mm256_cmpgt_epi32(
                    set1(b.sides[other].primary_leader),
                    _mm256_add_epi32(face, set1(1)),
                );
                rounds = _mm256_sub_epi32(rounds, extra);
            }
            let most = b.sides[initiative].primary_leader + u32::from(b.extra_round);
            // Per round, each side's units lost (eliminated or routed) by its end; rounds
            // not fought repeat the last (a lane's state stays as its last round left it).
            let mut lost_after = [[_mm256_setzero_si256(); 2]; 4];
            let mut fought = 0;
            for round in 1..=most {
                let act = and(active, _mm256_cmpgt_epi32(rounds, set1(round - 1)));
                if !any(act) {
                    break;
                }
                // PERF: where at most `SCALAR_LANES` lanes fight the round (a battle's
                // extra round, in about one lane in six for the bench battle), they fight it
                // one at a time, from the same windows of faces: a sweep's round costs the
                // same for one lane as for eight.
                let fighting = _mm256_movemask_ps(_mm256_castsi256_ps(act)) as u32;
                #[cfg(test)]
                super::ROUNDS_FOUGHT.with(|r| {
                    let mut rounds = r.get();
                    rounds[usize::from(fighting.count_ones() <= SCALAR_LANES)] += 1;
                    r.set(rounds);
                });
                if fighting.count_ones() <= SCALAR_LANES {
                    sweep.round_lane_by_lane(round, fighting);
                } else {
                    for side in [initiative, other] {
                        let surprised = round == 1 && b.surprise == Some(1 - side);
                        if !surprised {
                            sweep.fire(side, act);
                        }
                    }
                    sweep.movement_and_melee(round, act);
                    sweep.recovery(act);
                }
                lost_after[round as usize - 1] = sweep.lost();
                fought = round as usize;
            }
            let lost = sweep.lost();
            for after in &mut lost_after[fought..] {
                *after = lost;
            }
            // Count each lane's battle: its counts taken in the registers (PERF: one lane at a
            // time, `FrontierCombat::outcome` and the losses by round were 5% of the
            // samples), its bins one lane at a time.
            let rounds = store(rounds);
            let (counts, lost_after) = (sweep.counts(), lost_after);
            // `[count][side]` of each lane, and `[round][side]`.
            let (mut by_lane, mut lost_by_lane) = ([[[0u32; 2]; 4]; WIDTH], [[[0u8; 2]; 4]; WIDTH]);
            for s in 0..2 {
                for c in 0..4 {
                    for (i, count) in store(counts[s][c]).into_iter().enumerate() {
                        by_lane[i][c][s] = count;
                    }
                }
                for r in 0..4 {
                    for (i, lost) in store(lost_after[r][s]).into_iter().enumerate() {
                        lost_by_lane[i][r][s] = lost as u8;
                    }
                }
            }
            for i in 0..WIDTH {
                if k >= battles[i] {
                    continue;
                }
                let [eliminated, routed, disrupted, leaders_lost] = by_lane[i];
                let mut out = BattleOutcome {
                    winner: None,
                    rounds: rounds[i],
                    eliminated,
                    routed,
                    disrupted,
                    leaders_lost,
                    lost_after_round: lost_by_lane[i],
                };
                out.winner = combat.winner(&out);
                histogram.record(&out);
            }
            sweep.faces.at = store(sweep.drawn());
        }
        sweep.faces.words()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::frontier::battle::{BattleDice, PackedDice};

    /// Each lane's window holds its stream's faces in `PackedDice`'s order from its next
    /// face on, however many each lane draws between top-ups (none, some, all it holds),
    /// through every move back to the window's start, with no lane's cut reaching into
    /// another's window; and the words are the whole words the drawn faces took.
    #[test]
    fn windows_hold_each_lanes_faces_in_order_through_every_move() {
        let mut block = DiceStream::for_block(82, 0);
        let states = block.lane_states();
        let streams: [DiceStream; WIDTH] =
            std::array::from_fn(|i| DiceStream::from_state(states[i]));
        let mut g = DiceStream::for_block(83, 0);
        for bound in [1, 11, 12, 13, 30, 409] {
            let mut faces = LaneFaces::new(streams.clone(), bound);
            let mut expected = streams.clone();
            let mut packed: Vec<PackedDice> = expected.iter_mut().map(PackedDice::new).collect();
            let (mut drawn, mut moves) = ([0u64; WIDTH], 0);
            for step in 0..2_000 {
                let before = faces.used;
                faces.top_up(bound);
                moves += faces
                    .used
                    .iter()
                    .zip(before)
                    .filter(|(a, b)| **a != *b)
                    .count();
                for i in 0..WIDTH {
                    let at = faces.at[i] as usize;
                    assert!(faces.end[i] - at >= bound && faces.end[i] <= faces.stride);
                    // Lanes draw none, all they were topped up to, or some.
                    let take = match (step + i) % 4 {
                        0 => 0,
                        1 => bound,
                        _ => g.below(bound as u32 + 1) as usize,
                    };
                    let window = &faces.bytes[i * faces.stride..];
                    for k in 0..take {
                        assert_eq!(
                            u32::from(window[at + k]),
                            packed[i].face(),
                            "bound {bound}, step {step}, lane {i}"
                        );
                    }
                    faces.at[i] += take as u32;
                    drawn[i] += take as u64;
                }
            }
            assert!(moves > 100, "bound {bound}: {moves} moves");
            assert_eq!(
                faces.words(),
                drawn.iter().map(|d| d.div_ceil(12)).sum::<u64>()
            );
            assert_eq!(
                faces.words(),
                packed.iter().map(PackedDice::words).sum::<u64>()
            );
        }
    }
}
