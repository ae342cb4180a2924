//! Initial on-map forces of the strategic game (docs/systems/setup.md): one d6 per state
//! picks a row of leaders, infantry, cavalry, guards, naval SP and transports.
//!
//! Why this module exists: a designer wants the spread of starting strengths a random
//! setup gives each state and each coalition. One state's roll is exact by inspection (six
//! rows, 1/6 each); a coalition's totals are sums of independent states, so they are exact
//! by convolution, and the simulation kernel is held against that.

use serde::Serialize;

use crate::dice::lanes;
use crate::dice::{DiceStream, DiceWord};

mod lockstep;

/// One row of the setup table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SetupRow {
    /// Leaders rated 3, 2, 1 and 0.
    pub leaders: [u32; 4],
    pub infantry: u32,
    pub cavalry: u32,
    pub guards: u32,
    pub nsp: u32,
    pub transports: u32,
}

impl SetupRow {
    const fn new(
        leaders: [u32; 4],
        infantry: u32,
        cavalry: u32,
        guards: u32,
        nsp: u32,
        transports: u32,
    ) -> Self {
        Self {
            leaders,
            infantry,
            cavalry,
            guards,
            nsp,
            transports,
        }
    }

    /// Land strength: infantry + cavalry + guards.
    pub fn sp(&self) -> u32 {
        self.infantry + self.cavalry + self.guards
    }

    pub fn leader_count(&self) -> u32 {
        self.leaders.iter().sum()
    }

    /// The value of one quantity of this row.
    pub fn quantity(&self, quantity: Quantity) -> u32 {
        match quantity {
            Quantity::Sp => self.sp(),
            Quantity::Infantry => self.infantry,
            Quantity::Cavalry => self.cavalry,
            Quantity::Guards => self.guards,
            Quantity::Leaders => self.leader_count(),
            Quantity::Nsp => self.nsp,
            Quantity::Transports => self.transports,
        }
    }
}

/// What a setup report counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Quantity {
    Sp,
    Infantry,
    Cavalry,
    Guards,
    Leaders,
    Nsp,
    Transports,
}

impl Quantity {
    pub const ALL: [Quantity; 7] = [
        Self::Sp,
        Self::Infantry,
        Self::Cavalry,
        Self::Guards,
        Self::Leaders,
        Self::Nsp,
        Self::Transports,
    ];

    pub fn name(self) -> &'static str {
        [
            "sp",
            "infantry",
            "cavalry",
            "guards",
            "leaders",
            "nsp",
            "transports",
        ][self as usize]
    }
}

/// Major or minor state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum StateKind {
    Major,
    Minor,
}

/// The printed rows for a kind of state. A minor state without a port gets no NSP or
/// transports (the `*` entries) **[option: port, default yes]**.
pub fn rows(kind: StateKind, port: bool) -> [SetupRow; 6] {
    match kind {
        StateKind::Major => [
            SetupRow::new([1, 2, 3, 2], 45, 6, 2, 6, 2),
            SetupRow::new([0, 2, 2, 3], 40, 5, 1, 5, 2),
            SetupRow::new([0, 2, 2, 3], 40, 5, 1, 5, 1),
            SetupRow::new([0, 1, 2, 3], 35, 4, 0, 4, 1),
            SetupRow::new([0, 1, 2, 3], 35, 4, 0, 4, 1),
            SetupRow::new([0, 0, 2, 3], 30, 3, 0, 4, 1),
        ],
        StateKind::Minor => {
            let naval = u32::from(port);
            [
                SetupRow::new([0, 0, 1, 0], 6, 2, 0, naval, naval),
                SetupRow::new([0, 0, 1, 0], 5, 2, 0, naval, 0),
                SetupRow::new([0, 0, 0, 1], 5, 2, 0, naval, 0),
                SetupRow::new([0, 0, 0, 1], 5, 1, 0, 0, 0),
                SetupRow::new([0, 0, 0, 1], 4, 1, 0, 0, 0),
                SetupRow::new([0, 0, 0, 1], 4, 0, 0, 0, 0),
            ]
        }
    }
}

/// A state on the map: its rows and the coalition it belongs to (an index).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MapState {
    pub name: String,
    pub kind: StateKind,
    pub port: bool,
    pub coalition: usize,
    pub rows: [SetupRow; 6],
}

impl MapState {
    /// Every quantity of one row, in [`Quantity::ALL`] order.
    #[inline(always)]
    pub fn values(&self, row: usize) -> [u32; 7] {
        let r = &self.rows[row];
        [
            r.sp(),
            r.infantry,
            r.cavalry,
            r.guards,
            r.leader_count(),
            r.nsp,
            r.transports,
        ]
    }
}

/// The exact distribution of a sum of independent states' values of one quantity, as
/// probabilities indexed by the total (a convolution of uniform six-row distributions).
pub fn exact_total(states: &[&MapState], quantity: Quantity) -> Vec<f64> {
    let mut distribution = vec![1.0];
    for state in states {
        let max_row = state
            .rows
            .iter()
            .map(|r| r.quantity(quantity))
            .max()
            .unwrap_or(0) as usize;
        let mut next = vec![0.0; distribution.len() + max_row];
        for (total, &p) in distribution.iter().enumerate().filter(|(_, p)| **p > 0.0) {
            for row in &state.rows {
                next[total + row.quantity(quantity) as usize] += p / 6.0;
            }
        }
        distribution = next;
    }
    distribution
}

/// Rolls one setup of the whole map into `totals[coalition][quantity]` (the kernel: no
/// allocation; one 64-bit word gives up to eight states' rolls).
#[inline]
pub fn roll_map(
    states: &[MapState],
    dice: &mut DiceStream,
    totals: &mut [[u32; 7]],
    rolls: &mut [u8],
) {
    let mut word = dice.word();
    for (index, roll) in rolls.iter_mut().enumerate().take(states.len()) {
        if index > 0 && index % 8 == 0 {
            word = dice.word();
        }
        *roll = word.take(6) as u8;
    }
    for coalition in totals.iter_mut() {
        *coalition = [0; 7];
    }
    for (state, &roll) in states.iter().zip(rolls.iter()) {
        let values = state.values(usize::from(roll));
        let totals = &mut totals[state.coalition];
        for (slot, value) in totals.iter_mut().zip(values) {
            *slot += value;
        }
    }
}

/// PERF: the whole map compiled for the kernel. `roll_map` recomputed every row's seven
/// values (SP and leader sums) for every state of every map and added them one by one into
/// `u32` slots: ~51 `next_u64` per map for 2 words of dice. Here every row is packed once
/// into a `u128` of 16-bit lanes, one per quantity (a total is at most 64 states × 53 SP,
/// under 2^16, so lanes never carry into each other), and a map is one table load and one
/// 128-bit add per state into its coalition's packed total. Same dice as `roll_map`, in the
/// same order (8 d6 per word), so the same maps.
#[derive(Clone, Debug)]
pub struct CompiledMap {
    /// The states two by two, as [`CompiledMap::roll`] takes their dice.
    pairs: Vec<StatePair>,
    /// One more than the highest coalition of a state.
    coalitions: usize,
    /// For a map of at most [`WIDE_COALITIONS`] coalitions: per pair and combined face,
    /// what it adds to each coalition, `wide[(pair · 36 + face) · coalitions + c]`.
    wide: Vec<u128>,
}

/// Coalitions up to which [`CompiledMap::roll_totals`] sums in registers.
const WIDE_COALITIONS: usize = 4;

#[derive(Clone, Copy, Debug)]
struct CompiledState {
    rows: [u128; 6],
    coalition: usize,
}

/// PERF: two states of one word whose dice are taken as one number, `take(36)` (exactly
/// the two `take(6)`s, the first state's die the more significant): half the multiplies on
/// the chain through the word, and both rows from one table entry.
#[derive(Clone, Copy, Debug)]
struct StatePair {
    /// 36, or 6 for the odd last state of a word (whose second row is zero).
    faces: u32,
    /// Whether the pair's dice start a fresh word.
    new_word: bool,
    coalitions: [usize; 2],
    /// Both states' rows per combined face.
    rows: [[u128; 2]; 36],
}

/// Bits per quantity in a packed total.
const LANE: u32 = 16;

/// A state's six rows, each row's seven values packed in [`LANE`]-bit lanes.
fn packed_rows(state: &MapState) -> [u128; 6] {
    std::array::from_fn(|row| {
        state
            .values(row)
            .iter()
            .enumerate()
            .map(|(q, &v)| u128::from(v) << (LANE * q as u32))
            .sum()
    })
}

/// States rolled from one 64-bit word (8 d6: `6^8 / 2^64 < 1e-13`, see `dice.rs`).
const STATES_PER_WORD: usize = 8;
/// Coalitions [`CompiledMap::roll_totals`] sums on the stack without clearing a buffer for
/// [`MAX_COALITIONS`].
const FEW_COALITIONS: usize = 8;
/// Most coalitions of a compiled map (one per state at most).
pub const MAX_COALITIONS: usize = 64;

impl CompiledMap {
    /// Packs every state's rows (at most 64 states: totals stay under 2^16 per lane).
    pub fn new(states: &[MapState]) -> Self {
        assert!(states.len() <= 64, "at most 64 states (16-bit lanes)");
        let states: Vec<CompiledState> = states
            .iter()
            .map(|state| CompiledState {
                rows: packed_rows(state),
                coalition: state.coalition,
            })
            .collect();
        let mut pairs = Vec::new();
        for chunk in states.chunks(STATES_PER_WORD) {
            for (i, two) in chunk.chunks(2).enumerate() {
                let second = two.get(1);
                let faces = if second.is_some() { 36 } else { 6 };
                pairs.push(StatePair {
                    faces,
                    new_word: i == 0,
                    coalitions: [two[0].coalition, second.unwrap_or(&two[0]).coalition],
                    rows: std::array::from_fn(|face| match second {
                        Some(b) => [two[0].rows[face / 6], b.rows[face % 6]],
                        None => [two[0].rows[face % 6], 0],
                    }),
                });
            }
        }
        let coalitions = states.iter().map(|s| s.coalition + 1).max().unwrap_or(0);
        let mut wide = Vec::new();
        if coalitions <= WIDE_COALITIONS {
            for pair in &pairs {
                for face in 0..36 {
                    let mut adds = vec![0u128; coalitions];
                    if face < pair.faces as usize {
                        adds[pair.coalitions[0]] += pair.rows[face][0];
                        adds[pair.coalitions[1]] += pair.rows[face][1];
                    }
                    wide.extend(adds);
                }
            }
        }
        Self {
            pairs,
            coalitions,
            wide,
        }
    }

    /// Rolls one setup of the whole map into packed per-coalition totals (one `u128` per
    /// coalition; read them with [`CompiledMap::total`]).
    #[inline]
    pub fn roll(&self, dice: &mut DiceStream, packed: &mut [u128]) {
        packed.fill(0);
        let mut word = DiceWord(0);
        for pair in &self.pairs {
            if pair.new_word {
                word = dice.word();
            }
            let rows = &pair.rows[word.take(pair.faces) as usize];
            packed[pair.coalitions[0]] += rows[0];
            packed[pair.coalitions[1]] += rows[1];
        }
    }

    /// Quantity `q` (in [`Quantity::ALL`] order) of a packed total.
    #[inline(always)]
    pub fn total(packed: u128, q: usize) -> u32 {
        (packed >> (LANE * q as u32)) as u32 & 0xFFFF
    }

    /// Rolls one setup into `totals[coalition][quantity]`, as [`roll_map`] does.
    #[inline]
    pub fn roll_totals(&self, dice: &mut DiceStream, totals: &mut [[u32; 7]]) {
        assert!(
            totals.len() >= self.coalitions && totals.len() <= MAX_COALITIONS,
            "totals for {} coalitions, the map has {}",
            totals.len(),
            self.coalitions
        );
        // PERF: a map of few coalitions sums each coalition in registers, from a table of
        // what each pair adds to every coalition: adding into a buffer indexed by the
        // state's coalition made a chain of stores and reloads through each coalition's
        // slot (~15 `next_u64` a 13-state map, 3 coalitions).
        match self.coalitions {
            1 => return self.roll_wide::<1>(dice, totals),
            2 => return self.roll_wide::<2>(dice, totals),
            3 => return self.roll_wide::<3>(dice, totals),
            4 => return self.roll_wide::<4>(dice, totals),
            _ => {}
        }
        // PERF: a `[0u128; 64]` buffer here cost a 1 KiB memset per map, ~80 of the ~350
        // instructions a 13-state map took; a map of few coalitions sums in a small one.
        if totals.len() <= FEW_COALITIONS {
            self.roll_into(dice, &mut [0; FEW_COALITIONS][..totals.len()], totals);
        } else {
            self.roll_into(dice, &mut [0; MAX_COALITIONS][..totals.len()], totals);
        }
    }

    #[inline(always)]
    fn roll_into(&self, dice: &mut DiceStream, packed: &mut [u128], totals: &mut [[u32; 7]]) {
        self.roll(dice, packed);
        for (coalition, &p) in totals.iter_mut().zip(packed.iter()) {
            for (q, slot) in coalition.iter_mut().enumerate() {
                *slot = Self::total(p, q);
            }
        }
    }

    /// [`Self::roll_totals`] for a map of `K` coalitions (`K` = `self.coalitions`).
    #[inline(always)]
    fn roll_wide<const K: usize>(&self, dice: &mut DiceStream, totals: &mut [[u32; 7]]) {
        let mut sums = [0u128; K];
        let mut word = DiceWord(0);
        let rows = self.wide.as_chunks::<K>().0;
        for (p, pair) in self.pairs.iter().enumerate() {
            if pair.new_word {
                word = dice.word();
            }
            let adds = &rows[p * 36 + word.take(pair.faces) as usize];
            for c in 0..K {
                sums[c] += adds[c];
            }
        }
        for (c, coalition) in totals.iter_mut().enumerate() {
            let packed = if c < K { sums[c] } else { 0 };
            for (q, slot) in coalition.iter_mut().enumerate() {
                *slot = Self::total(packed, q);
            }
        }
    }
}

/// PERF: a setup study's run reports one coalition's totals, yet rolled the whole map and
/// summed every coalition (~350 instructions a 13-state map, a third of them a buffer's
/// memset). This kernel keeps only that coalition's states and draws the same words as
/// [`CompiledMap::roll`]: the dice of the states it skips before a member are taken with
/// the member's as one number, `take(6^(skipped + 1))` (exactly that many successive
/// `take(6)`s, the member's die the last, least significant), and dice after a word's last
/// member are not taken at all. The member's row is then `rows[value % 6]`, summed in a
/// register.
#[derive(Clone, Debug)]
pub struct CoalitionMap {
    steps: Vec<CoalitionStep>,
}

#[derive(Clone, Copy, Debug)]
struct CoalitionStep {
    /// `6^(states skipped since the last member or the word's start + 1)`; 1 for a word
    /// that holds no member (drawn, nothing taken).
    sides: u32,
    /// Whether this member (or empty word) is the first of a fresh word.
    new_word: bool,
    rows: [u128; 6],
}

impl CoalitionStep {
    /// Whether the step takes a member's die (not a word with no member, of one side).
    fn is_member(&self) -> bool {
        self.sides > 1
    }
}

/// One coalition's counts as a setup study's run keeps them ([`CoalitionMap::count`]):
/// its totals, and the maps counted by their members' faces that wait to be added to them
/// ([`CoalitionMap::fold`], once a run). Merged by addition, so any split of a run's
/// blocks gives the same counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CoalitionCounts {
    /// Quantity `q`'s total `t` at `totals[offsets[q] + t]`.
    pub totals: Vec<u64>,
    /// Maps counted by their members' faces as a number (the first member's least
    /// significant), and then [`lanes::LANES`] slots the lanes count in where they roll
    /// no map; empty where none wait (folded counts, or maps counted one at a time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    by_faces: Vec<u64>,
}

impl CoalitionCounts {
    /// Zeroed counts of `slots` totals (the last quantity's offset and largest total,
    /// plus one).
    pub fn new(slots: usize) -> Self {
        Self {
            totals: vec![0; slots],
            by_faces: Vec::new(),
        }
    }

    /// Whether maps wait to be folded into the totals.
    pub fn folded(&self) -> bool {
        self.by_faces.is_empty()
    }
}

impl crate::sim::Histogram for CoalitionCounts {
    fn merge(&mut self, other: Self) {
        for (mine, theirs) in self.totals.iter_mut().zip(other.totals) {
            *mine += theirs;
        }
        // Counts of the same coalition: their tables of faces have one length, or none.
        if self.by_faces.is_empty() {
            self.by_faces = other.by_faces;
        } else {
            for (mine, theirs) in self.by_faces.iter_mut().zip(other.by_faces) {
                *mine += theirs;
            }
        }
    }
}

impl CoalitionMap {
    /// The kernel for `coalition`'s totals on the map of `states` (only its members' rows
    /// are compiled).
    pub fn new(states: &[MapState], coalition: usize) -> Self {
        let mut steps = Vec::new();
        for chunk in states.chunks(STATES_PER_WORD) {
            let mut skipped = 0u32;
            let mut first_in_word = true;
            for state in chunk {
                if state.coalition != coalition {
                    skipped += 1;
                    continue;
                }
                steps.push(CoalitionStep {
                    sides: 6u32.pow(skipped + 1),
                    new_word: first_in_word,
                    rows: packed_rows(state),
                });
                skipped = 0;
                first_in_word = false;
            }
            if first_in_word {
                // A word with no member is still drawn: the maps after this one then see
                // the dice the whole map's kernel gives them.
                steps.push(CoalitionStep {
                    sides: 1,
                    new_word: true,
                    rows: [0; 6],
                });
            }
        }
        Self { steps }
    }

    /// Rolls one setup of the whole map and returns this coalition's packed totals (read
    /// them with [`CompiledMap::total`]): the same dice and totals as [`CompiledMap::roll`].
    #[inline]
    pub fn roll(&self, dice: &mut DiceStream) -> u128 {
        let mut word = DiceWord(0);
        let mut packed = 0u128;
        for step in &self.steps {
            if step.new_word {
                word = dice.word();
            }
            packed += step.rows[(word.take(step.sides) % 6) as usize];
        }
        packed
    }

    /// Rolls `n` maps and counts this coalition's totals into `counts`: quantity `q`'s
    /// total `t` (in [`Quantity::ALL`] order) adds one at `counts.totals[offsets[q] + t]`
    /// (what a setup study's run counts), once [`Self::fold`] has added the maps that wait
    /// in `counts` counted by their members' faces.
    ///
    /// The maps are rolled in [`lanes::LANES`] lanes, each on its own stream split from
    /// `dice` (`dice::lanes`): all lanes at once where the CPU has AVX-512F or AVX2 and the
    /// coalition has at most five members (`lockstep`, counting a map once by its members'
    /// faces, into `counts`' table of every faces), else lane by lane with [`Self::roll`],
    /// straight into the totals; the same maps either way. Returns the words drawn from
    /// all streams.
    pub fn count(
        &self,
        dice: &mut DiceStream,
        n: u64,
        offsets: &[usize; 7],
        counts: &mut CoalitionCounts,
    ) -> u64 {
        lanes::fight_block(
            dice,
            n,
            counts,
            |lanes, counts| {
                lockstep::worth(self, n)
                    .then(|| lockstep::all_at_once(self, lanes, n, &mut counts.by_faces))
                    .flatten()
                    .map(|words| words * lanes::LANES as u64)
            },
            |dice, counts| {
                let packed = self.roll(dice);
                for (q, &offset) in offsets.iter().enumerate() {
                    counts.totals[offset + CompiledMap::total(packed, q) as usize] += 1;
                }
                self.words_per_map()
            },
        )
    }

    /// Adds the maps that wait in `counts` counted by their members' faces into its
    /// totals at `offsets`, and empties their table: folding, counting more and folding
    /// again gives what one fold of everything gives.
    ///
    /// PERF: once a run, not once a block of 65 536 maps: the fold visits every faces
    /// (7 776 for five members) and was 11.6% of `profile setup-count` once a block.
    ///
    /// # Panics
    /// Where `counts` holds faces' counts that are not this map's (a table of another
    /// length): only `count` of this map fills it.
    pub fn fold(&self, offsets: &[usize; 7], counts: &mut CoalitionCounts) {
        let by_faces = std::mem::take(&mut counts.by_faces);
        if by_faces.is_empty() {
            return;
        }
        let keys = self
            .face_keys()
            .filter(|&keys| by_faces.len() == keys + lanes::LANES)
            .expect("a table of this map's faces and the lanes' spare slots");
        self.add_by_faces(&by_faces[..keys], offsets, &mut counts.totals);
    }

    /// Words one map draws.
    fn words_per_map(&self) -> u64 {
        self.steps.iter().filter(|s| s.new_word).count() as u64
    }

    /// The joint values of the members' faces, `6^members`, where it fits a `usize`.
    fn face_keys(&self) -> Option<usize> {
        let members = self.steps.iter().filter(|s| s.is_member()).count() as u32;
        6usize.checked_pow(members)
    }

    /// Adds maps counted by their members' faces (`by_faces[key]`, the faces as a number,
    /// the first member's least significant) to `histogram` at `offsets`, as [`Self::count`]
    /// adds a map's totals. A key's packed totals are the sum of two: its first (up to)
    /// three members' faces' and the rest's, each from a table of every faces of its
    /// members (at most 216 and 36 entries), so the keys are visited in order with one
    /// addition each.
    ///
    /// PERF: an odometer over the keys (a member's row difference added as its face
    /// stepped, a branch a member) was 24% of a counted block's time in the `profile`
    /// loop (`setup-count`): 7,776 keys a block of 65,536 maps.
    fn add_by_faces(&self, by_faces: &[u64], offsets: &[usize; 7], histogram: &mut [u64]) {
        let members: Vec<&[u128; 6]> = self
            .steps
            .iter()
            .filter(|s| s.is_member())
            .map(|s| &s.rows)
            .collect();
        // Every faces of a group's members as packed totals, by the faces as a number, the
        // group's first member's least significant. Wrapping: packed fields never
        // overflow (a total is below 2^16), so this is plain addition field by field.
        let sums = |group: &[&[u128; 6]]| {
            group.iter().fold(vec![0u128], |sums, rows| {
                rows.iter()
                    .flat_map(|&row| sums.iter().map(move |&s| s.wrapping_add(row)))
                    .collect::<Vec<u128>>()
            })
        };
        let (low, high) = members.split_at(members.len().min(3));
        let (low, high) = (sums(low), sums(high));
        debug_assert_eq!(by_faces.len(), low.len() * high.len());
        for (counts, &high) in by_faces.chunks_exact(low.len()).zip(&high) {
            for (&count, &low) in counts.iter().zip(&low) {
                let packed = low.wrapping_add(high);
                for (q, &offset) in offsets.iter().enumerate() {
                    histogram[offset + CompiledMap::total(packed, q) as usize] += count;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_as_printed() {
        let major = rows(StateKind::Major, true);
        assert_eq!(major[0].sp(), 53);
        assert_eq!(major[5].sp(), 33);
        assert_eq!(major[0].leader_count(), 8);
        let minor = rows(StateKind::Minor, false);
        assert_eq!(minor.iter().map(|r| r.nsp + r.transports).sum::<u32>(), 0);
        let minor = rows(StateKind::Minor, true);
        assert_eq!(minor.iter().map(|r| r.nsp).sum::<u32>(), 3);
        assert_eq!(minor[0].transports, 1);
    }

    #[test]
    fn two_states_convolve() {
        let state = |coalition| MapState {
            name: String::new(),
            kind: StateKind::Minor,
            port: true,
            coalition,
            rows: rows(StateKind::Minor, true),
        };
        let (a, b) = (state(0), state(0));
        // Minor SP per row: 8, 7, 7, 6, 5, 4. Two minors: 16 only from (8, 8): 1/36.
        let d = exact_total(&[&a, &b], Quantity::Sp);
        assert!((d[16] - 1.0 / 36.0).abs() < 1e-15);
        assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // 14: (8,6), (6,8), (7,7) twice each way: 1+1+4 = 6 of 36.
        assert!((d[14] - 6.0 / 36.0).abs() < 1e-15);
    }

    /// `n` states, every fourth a major, two in three with a port, in `coalition(i)`.
    pub(super) fn test_map(n: usize, coalition: impl Fn(usize) -> usize) -> Vec<MapState> {
        (0..n)
            .map(|i| {
                let kind = if i % 4 == 0 {
                    StateKind::Major
                } else {
                    StateKind::Minor
                };
                MapState {
                    name: String::new(),
                    kind,
                    port: i % 3 != 0,
                    coalition: coalition(i),
                    rows: rows(kind, i % 3 != 0),
                }
            })
            .collect()
    }

    #[test]
    fn compiled_map_draws_the_same_maps() {
        // 1–4 coalitions sum in registers, more in a buffer (up to 8 on the stack, then
        // 64); totals may have rows past the map's coalitions, which stay zero.
        for coalitions in [1usize, 2, 3, 4, 5, 9] {
            for extra in [0, 1] {
                let states = test_map(21, |i| (i * 7 + i / 2) % coalitions);
                let map = CompiledMap::new(&states);
                let (mut a, mut b) = (DiceStream::for_block(3, 1), DiceStream::for_block(3, 1));
                let rows = coalitions + extra;
                let (mut expected, mut got) = (vec![[0u32; 7]; rows], vec![[1u32; 7]; rows]);
                let mut rolls = [0u8; 21];
                for _ in 0..5_000 {
                    roll_map(&states, &mut a, &mut expected, &mut rolls);
                    map.roll_totals(&mut b, &mut got);
                    assert_eq!(expected, got, "{coalitions} coalitions, {rows} rows");
                }
                assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn coalition_kernel_draws_the_same_maps() {
        // Maps of 1 to 21 states in 1 to 6 coalitions, so that some words hold no member
        // of a coalition and some coalitions have none at all.
        for n in [1usize, 7, 8, 9, 13, 16, 17, 21] {
            for coalitions in [1usize, 2, 3, 6] {
                let states = test_map(n, |i| (i * i + i / 3) % coalitions);
                let map = CompiledMap::new(&states);
                for c in 0..coalitions {
                    let one = CoalitionMap::new(&states, c);
                    let (mut a, mut b) = (DiceStream::for_block(5, 2), DiceStream::for_block(5, 2));
                    let mut packed = [0u128; 6];
                    for _ in 0..2_000 {
                        map.roll(&mut a, &mut packed[..coalitions]);
                        assert_eq!(one.roll(&mut b), packed[c], "{n} states, coalition {c}");
                    }
                    assert_eq!(a, b);
                }
            }
        }
    }

    /// Maps counted by their members' faces wait in the counts until `fold`: counting
    /// three blocks into one counts and folding once, folding after each block, and
    /// counting them in three counts (one folded, two not, one of those through serde)
    /// merged in either order before the fold give the same totals; a second fold adds
    /// nothing.
    #[test]
    fn faces_wait_until_the_fold_and_one_fold_is_a_fold_each_block() {
        use crate::sim::Histogram;
        let states = crate::systems::setup::scenarios::setup_map();
        let one = CoalitionMap::new(&states, 0);
        let offsets = [0, 400, 800, 1200, 1600, 2000, 2400];
        let n = 65_536;
        let count = |block: u64, counts: &mut CoalitionCounts| {
            one.count(&mut DiceStream::for_block(5, block), n, &offsets, counts);
        };
        let mut each = CoalitionCounts::new(2800);
        for block in 0..3 {
            count(block, &mut each);
            one.fold(&offsets, &mut each);
            assert!(each.folded());
        }
        assert_eq!(each.totals.iter().sum::<u64>(), 7 * 3 * n);
        let mut once = CoalitionCounts::new(2800);
        for block in 0..3 {
            count(block, &mut once);
        }
        // The lanes counted by faces wherever the CPU has a vector form.
        assert_eq!(
            once.folded(),
            crate::dice::lanes::VectorForm::detect().is_none()
        );
        one.fold(&offsets, &mut once);
        assert_eq!(once, each);
        one.fold(&offsets, &mut once);
        assert_eq!(once, each, "a second fold adds nothing");
        let mut folded = CoalitionCounts::new(2800);
        count(0, &mut folded);
        one.fold(&offsets, &mut folded);
        let mut waiting = CoalitionCounts::new(2800);
        count(1, &mut waiting);
        let mut more = CoalitionCounts::new(2800);
        count(2, &mut more);
        let json = serde_json::to_string(&more).expect("counts serialize");
        let more: CoalitionCounts = serde_json::from_str(&json).expect("and read back");
        // Folded with waiting, then waiting with waiting; and the other way round.
        let mut first = folded.clone();
        first.merge(waiting.clone());
        first.merge(more.clone());
        let mut second = more;
        second.merge(waiting);
        second.merge(folded);
        for mut merged in [first, second] {
            one.fold(&offsets, &mut merged);
            assert_eq!(merged, each);
        }
    }
}
