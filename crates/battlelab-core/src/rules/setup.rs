//! Initial on-map forces of the strategic game (seed 003; RULES.md B8): one d6 per state
//! picks a row of leaders, infantry, cavalry, guards, naval SP and transports.
//!
//! Why this module exists: a designer wants the spread of starting strengths a random
//! setup gives each state and each coalition. One state's roll is exact by inspection (six
//! rows, 1/6 each); a coalition's totals are sums of independent states, so they are exact
//! by convolution, and the simulation kernel is held against that.

use serde::Serialize;

use crate::dice::DiceStream;

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
    /// `rows[state][face]`: the row's seven values, 16 bits each.
    rows: Vec<[u128; 6]>,
    coalition: Vec<usize>,
}

/// Bits per quantity in a packed total.
const LANE: u32 = 16;

impl CompiledMap {
    /// Packs every state's rows (at most 64 states: totals stay under 2^16 per lane).
    pub fn new(states: &[MapState]) -> Self {
        assert!(states.len() <= 64, "at most 64 states (16-bit lanes)");
        let rows = states
            .iter()
            .map(|state| {
                std::array::from_fn(|row| {
                    state
                        .values(row)
                        .iter()
                        .enumerate()
                        .map(|(q, &v)| u128::from(v) << (LANE * q as u32))
                        .sum()
                })
            })
            .collect();
        Self {
            rows,
            coalition: states.iter().map(|s| s.coalition).collect(),
        }
    }

    /// Rolls one setup of the whole map into packed per-coalition totals (one `u128` per
    /// coalition; read them with [`CompiledMap::total`]).
    #[inline]
    pub fn roll(&self, dice: &mut DiceStream, packed: &mut [u128]) {
        packed.fill(0);
        let mut word = dice.word();
        for (index, (rows, &coalition)) in self.rows.iter().zip(&self.coalition).enumerate() {
            if index > 0 && index % 8 == 0 {
                word = dice.word();
            }
            packed[coalition] += rows[word.take(6) as usize];
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
        let mut packed = [0u128; 64];
        let packed = &mut packed[..totals.len()];
        self.roll(dice, packed);
        for (coalition, &p) in totals.iter_mut().zip(packed.iter()) {
            for (q, slot) in coalition.iter_mut().enumerate() {
                *slot = Self::total(p, q);
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

    #[test]
    fn compiled_map_draws_the_same_maps() {
        let states: Vec<MapState> = (0..21)
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
                    coalition: i % 5,
                    rows: rows(kind, i % 3 != 0),
                }
            })
            .collect();
        let map = CompiledMap::new(&states);
        let (mut a, mut b) = (DiceStream::for_block(3, 1), DiceStream::for_block(3, 1));
        let (mut expected, mut got) = ([[0u32; 7]; 5], [[0u32; 7]; 5]);
        let mut rolls = [0u8; 21];
        for _ in 0..10_000 {
            roll_map(&states, &mut a, &mut expected, &mut rolls);
            map.roll_totals(&mut b, &mut got);
            assert_eq!(expected, got);
        }
        assert_eq!(a, b);
    }
}
