//! Field combat of the strategic game (docs/systems/field.md): the Combat Results
//! Table, the Combat Loss Chart and the tactical matrix, and whole field battles fought
//! round by round with them.
//!
//! Why this module exists: it turns the printed tables (with any designer overrides) into
//! validated plain data ([`FieldRules`]), compiles them once into flat lookup arrays
//! ([`FieldCombat`]), and offers three consumers the same rules:
//! - [`FieldCombat::resolve_face`]: one CRT resolution from one uniform face of 36, the
//!   single-roll kernel behind `battlelab table crt`;
//! - [`FieldCombat::fight`]: a whole battle from a [`DiceStream`], round by round: the
//!   Monte Carlo kernel's reference, and what runs fall back on where a battle is too
//!   large for [`transitions`](crate::systems::field::transitions), which compiles a battle into one state-transition
//!   table and fights the very same battles from the same dice, faster;
//! - [`FieldCombat::battle_distribution`]: the same battle enumerated exactly (every
//!   tactic pair and every face of the dice, round by round), which holds the kernel to
//!   account in tests and fills the `exact` column of reports.
//!
//! The round step ([`FieldCombat::apply_round`]) is shared by the kernel and the
//! enumeration, so the two can differ only in how dice are drawn.

use serde::Serialize;
use std::fmt;

use crate::dice::{DiceStream, DiceWord};
use crate::exact::ExactDistribution;
use crate::rules::RulesError;

/// Number of result columns on the CRT.
pub const CRT_COLUMNS: usize = 11;
/// Modified rolls the CRT is printed for (2d6: 2 to 12), one printed cell per odds row each.
pub const CRT_ROLLS: (i32, i32) = (2, 12);
/// Cells in one printed odds row: one per modified roll.
pub const CRT_ROLL_COUNT: usize = (CRT_ROLLS.1 - CRT_ROLLS.0 + 1) as usize;
/// Most distinct result pairs a CRT can hold (five results for L times five for S); the
/// single-roll kernel counts outcomes in this many lanes or fewer.
pub const MAX_PAIRS: usize = 25;
/// Faces of two d6 read as one uniform draw: `face = 6·(die1−1) + (die2−1)`.
pub const TWO_D6_FACES: u32 = 36;
/// Largest strength a force may have (keeps histograms small and exact sums in range).
pub const MAX_SP: u32 = crate::limits::MAX_SP;
/// Largest morale a force may have.
pub const MAX_MORALE: u32 = 9;
/// Allowed leader ratings (B8 prints leaders rated 0 to 3).
pub const LEADER_RANGE: (i32, i32) = (0, 3);
/// Allowed range for any single DRM written in an analysis (tactic cells, side DRMs).
pub const DRM_RANGE: (i32, i32) = (-6, 6);
/// Allowed range for a Combat Loss Chart value.
pub const CLC_VALUE_RANGE: (u32, u32) = (0, 99);
/// Allowed range for the round limit.
pub const ROUND_LIMIT_RANGE: (u32, u32) = (1, 100);
/// Largest total weight of a tactic mix (see [`TacticMix`]).
pub const MAX_MIX_WEIGHT: u32 = 10_000;

/// One side's result in a CRT column, as printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum CrtResult {
    /// `0`: no loss.
    NoLoss,
    /// `1`: consult the Combat Loss Chart, row 1.
    Loss,
    /// `D1`: CLC row D1, morale −1.
    D1,
    /// `D2`: CLC row "D2 or D3", morale −2.
    D2,
    /// `D3`: CLC row "D2 or D3", morale −3.
    D3,
}

impl CrtResult {
    pub const ALL: [CrtResult; 5] = [Self::NoLoss, Self::Loss, Self::D1, Self::D2, Self::D3];
    pub const CODES: [&'static str; 5] = ["0", "1", "D1", "D2", "D3"];

    pub fn code(self) -> &'static str {
        Self::CODES[self as usize]
    }

    pub fn parse(code: &str) -> Option<Self> {
        let code = code.trim();
        Self::CODES
            .iter()
            .position(|c| c.eq_ignore_ascii_case(code))
            .map(|i| Self::ALL[i])
    }

    /// Morale points this result takes away.
    pub fn morale_loss(self) -> u32 {
        [0, 0, 1, 2, 3][self as usize]
    }

    /// The CLC row this result reads, if any.
    pub fn clc_row(self) -> Option<ClcRow> {
        match self {
            Self::NoLoss => None,
            Self::Loss => Some(ClcRow::One),
            Self::D1 => Some(ClcRow::D1),
            Self::D2 | Self::D3 => Some(ClcRow::D2OrD3),
        }
    }
}

/// A row of the Combat Loss Chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ClcRow {
    One,
    D1,
    D2OrD3,
}

impl ClcRow {
    pub const ALL: [ClcRow; 3] = [Self::One, Self::D1, Self::D2OrD3];
    /// Row names as an analysis file writes them.
    pub const NAMES: [&'static str; 3] = ["1", "D1", "D2"];

    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_uppercase().as_str() {
            "1" => Some(Self::One),
            "D1" => Some(Self::D1),
            "D2" | "D3" | "D2 OR D3" | "D2/D3" => Some(Self::D2OrD3),
            _ => None,
        }
    }
}

/// One CRT column: the result for the Larger force and for the Smaller force.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ResultPair {
    pub larger: CrtResult,
    pub smaller: CrtResult,
}

impl ResultPair {
    pub const fn new(larger: CrtResult, smaller: CrtResult) -> Self {
        Self { larger, smaller }
    }

    /// The printed label, e.g. `L=1 S=D1`.
    pub fn label(&self) -> String {
        format!("L={} S={}", self.larger.code(), self.smaller.code())
    }

    /// Parses `"1/D1"` (L's result, then S's).
    pub fn parse(text: &str) -> Option<Self> {
        let (l, s) = text.split_once('/')?;
        Some(Self::new(CrtResult::parse(l)?, CrtResult::parse(s)?))
    }
}

impl fmt::Display for ResultPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.larger.code(), self.smaller.code())
    }
}

/// The eleven result columns of the CRT.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct CombatResultsTable {
    pub columns: [ResultPair; CRT_COLUMNS],
}

impl CombatResultsTable {
    pub fn printed() -> Self {
        use CrtResult::*;
        let l = [D3, D2, D1, Loss, Loss, Loss, Loss, NoLoss, Loss, Loss, Loss];
        let s = [Loss, Loss, Loss, NoLoss, Loss, Loss, Loss, Loss, D1, D2, D3];
        Self {
            columns: std::array::from_fn(|i| ResultPair::new(l[i], s[i])),
        }
    }
}

/// One printed CRT cell edited on its own (`[rules.crt_cells."3:2"] "8" = "1/1"`): the
/// result pair for one odds row and one modified roll, read instead of the result column
/// that roll reaches at those odds. Nothing else changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct CrtCellEdit {
    /// The odds row, as a reduced ratio `larger:smaller` (must be an odds column).
    pub larger: u32,
    pub smaller: u32,
    /// The modified roll, 2 to 12.
    pub roll: i32,
    pub pair: ResultPair,
}

impl CrtCellEdit {
    /// The odds row's label, e.g. `3:2`.
    pub fn odds_label(&self) -> String {
        format!("{}:{}", self.larger, self.smaller)
    }
}

/// An odds column: the strength ratio `larger:smaller` and the result column a modified
/// roll of 2 reaches (1 for 1:1, 2 for 3:2, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct OddsColumn {
    pub larger: u32,
    pub smaller: u32,
    pub roll_two_column: u32,
}

impl OddsColumn {
    pub fn label(&self) -> String {
        format!("{}:{}", self.larger, self.smaller)
    }

    /// Parses `3:2`, `3-2` or `3 to 2` into a reduced ratio `(larger, smaller)`.
    pub fn parse_ratio(text: &str) -> Option<(u32, u32)> {
        crate::rules::parse_odds_ratio(text)
    }

    /// The column shift: result column = modified roll − 1 + shift.
    pub fn shift(&self) -> i32 {
        self.roll_two_column as i32 - 1
    }
}

/// How a strength ratio between two printed odds columns is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OddsRounding {
    /// As printed: round down to the listed column (2.9:1 → 2:1).
    #[default]
    Down,
    /// To the column whose ratio is nearest (halfway goes up).
    Nearest,
    /// Up to the next listed column (1.1:1 → 3:2); above the top column, the top column.
    Up,
}

impl OddsRounding {
    pub const NAMES: [&'static str; 3] = ["down", "nearest", "up"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "down" => Some(Self::Down),
            "nearest" => Some(Self::Nearest),
            "up" => Some(Self::Up),
            _ => None,
        }
    }
}

/// The Combat Loss Chart: SP lost by result row and by the total SP of the smaller force.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct CombatLossChart {
    /// Lowest SP of each band, ascending, the first being 1 (1–3, 4–5, 6–10, …, 21+).
    pub band_lower_bounds: Vec<u32>,
    /// `values[row][band]`, rows in [`ClcRow::ALL`] order.
    pub values: [Vec<u32>; 3],
}

impl CombatLossChart {
    pub fn printed() -> Self {
        Self {
            band_lower_bounds: vec![1, 4, 6, 11, 16, 21],
            values: [
                vec![1, 1, 1, 2, 2, 3],
                vec![1, 1, 2, 3, 4, 6],
                vec![1, 2, 3, 5, 6, 9],
            ],
        }
    }

    /// Band labels as printed: `1-3`, `4-5`, …, `21+`.
    pub fn band_labels(&self) -> Vec<String> {
        let bounds = &self.band_lower_bounds;
        (0..bounds.len())
            .map(|i| match bounds.get(i + 1) {
                Some(next) if *next - 1 == bounds[i] => bounds[i].to_string(),
                Some(next) => format!("{}-{}", bounds[i], next - 1),
                None => format!("{}+", bounds[i]),
            })
            .collect()
    }

    /// The band holding a smaller-force strength of `smaller_sp` (≥ 1).
    pub fn band_of(&self, smaller_sp: u32) -> usize {
        // PERF: comparisons summed as integers, no search and no branch.
        self.band_lower_bounds[1..]
            .iter()
            .map(|&bound| usize::from(smaller_sp >= bound))
            .sum()
    }

    pub fn value(&self, row: ClcRow, band: usize) -> u32 {
        self.values[row as usize][band]
    }
}

/// The seven tactics of the tactical matrix, in printed order.
pub const TACTIC_NAMES: [&str; 7] = [
    "charge", "envelop", "skirmish", "bombard", "square", "refuse", "withdraw",
];
/// Index of `withdraw` in [`TACTIC_NAMES`].
pub const WITHDRAW: usize = 6;

/// Index of a tactic name (case-insensitive).
pub fn tactic_index(name: &str) -> Option<usize> {
    TACTIC_NAMES
        .iter()
        .position(|t| t.eq_ignore_ascii_case(name.trim()))
}

/// The tactics a side may choose from (`[side.x] allowed_tactics`): a bit per tactic of
/// [`TACTIC_NAMES`]. Every tactic by default; never empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TacticSet(u8);

impl TacticSet {
    /// All seven tactics.
    pub const ALL: TacticSet = TacticSet(0x7f);

    /// The set of these tactic indices, `None` if it is empty (or an index is not a
    /// tactic).
    pub fn of(tactics: &[usize]) -> Option<Self> {
        let mut bits = 0u8;
        for &t in tactics {
            if t >= TACTIC_NAMES.len() {
                return None;
            }
            bits |= 1 << t;
        }
        (bits != 0).then_some(Self(bits))
    }

    pub fn contains(self, tactic: usize) -> bool {
        tactic < TACTIC_NAMES.len() && self.0 & (1 << tactic) != 0
    }

    pub fn is_all(self) -> bool {
        self == Self::ALL
    }

    /// The tactics in printed order.
    pub fn tactics(self) -> Vec<usize> {
        (0..TACTIC_NAMES.len())
            .filter(|&t| self.contains(t))
            .collect()
    }

    /// The tactics' names in printed order.
    pub fn names(self) -> Vec<&'static str> {
        self.tactics()
            .into_iter()
            .map(|t| TACTIC_NAMES[t])
            .collect()
    }

    /// Uniform over the set: what `"uniform"` means for a side limited to it.
    pub fn uniform(self) -> TacticMix {
        TacticMix::uniform(&self.tactics()).expect("a tactic set is never empty")
    }
}

/// A set serialises as its tactics' names.
impl Serialize for TacticSet {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(serializer)
    }
}

/// One cell of the tactical matrix: a DRM to L's roll, or no combat; in parentheses, the
/// battle ends after this round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct TacticCell {
    pub drm: i32,
    pub no_combat: bool,
    pub ends_battle: bool,
}

impl TacticCell {
    /// Parses a printed cell: `0`, `+1`, `-2` (or `−2`), `NC`, `(+2)`, `(NC)`.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim().replace('−', "-");
        let (inner, ends_battle) = match text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
            Some(inner) => (inner.trim().to_string(), true),
            None => (text, false),
        };
        if inner.eq_ignore_ascii_case("NC") {
            return Some(Self {
                drm: 0,
                no_combat: true,
                ends_battle,
            });
        }
        let drm: i32 = inner.strip_prefix('+').unwrap_or(&inner).parse().ok()?;
        Some(Self {
            drm,
            no_combat: false,
            ends_battle,
        })
    }
}

impl fmt::Display for TacticCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let body = if self.no_combat {
            "NC".to_string()
        } else if self.drm > 0 {
            format!("+{}", self.drm)
        } else {
            self.drm.to_string()
        };
        if self.ends_battle {
            write!(f, "({body})")
        } else {
            write!(f, "{body}")
        }
    }
}

/// The tactical matrix: `cells[larger's tactic][smaller's tactic]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct TacticalMatrix {
    pub cells: [[TacticCell; 7]; 7],
}

impl TacticalMatrix {
    pub fn printed() -> Self {
        const ROWS: [[&str; 7]; 7] = [
            ["0", "+1", "-2", "+1", "+2", "0", "(-2)"],
            ["-1", "0", "-1", "-1", "+1", "+2", "(-1)"],
            ["+2", "+1", "0", "-1", "-1", "-1", "(0)"],
            ["-1", "+1", "+1", "0", "-2", "-1", "(NC)"],
            ["-2", "-1", "+1", "+2", "NC", "NC", "(NC)"],
            ["0", "-2", "+1", "+1", "NC", "NC", "(NC)"],
            ["(+2)", "(+1)", "(0)", "(NC)", "(NC)", "(NC)", "(NC)"],
        ];
        Self {
            cells: std::array::from_fn(|l| {
                std::array::from_fn(|s| TacticCell::parse(ROWS[l][s]).expect("printed cells parse"))
            }),
        }
    }
}

/// Caps on what each DRM source may contribute to L's roll, applied before the net DRM is
/// clamped (`[rules] caps = { leader = 2, tactic = 2 }`): a source's contribution is held
/// to `−cap…+cap`. `None`: the source is not capped (as printed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct DrmCaps {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leader: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub morale: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terrain: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tactic: Option<i32>,
    /// The sides' own DRMs (their difference).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drm: Option<i32>,
}

impl DrmCaps {
    /// The sources that can be capped, as files name them.
    pub const SOURCES: [&'static str; 5] = ["leader", "morale", "terrain", "tactic", "drm"];

    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }

    /// The cap of source `name` (one of [`Self::SOURCES`]).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Option<i32>> {
        match name {
            "leader" => Some(&mut self.leader),
            "morale" => Some(&mut self.morale),
            "terrain" => Some(&mut self.terrain),
            "tactic" => Some(&mut self.tactic),
            "drm" => Some(&mut self.drm),
            _ => None,
        }
    }

    fn bound(cap: Option<i32>) -> i32 {
        cap.unwrap_or(i32::MAX / 4)
    }

    /// `v` held to the cap (no cap: `v`).
    #[inline(always)]
    fn hold(cap: i32, v: i32) -> i32 {
        v.clamp(-cap, cap)
    }
}

/// Every printed value of field combat, possibly overridden: plain data, checked by
/// [`FieldCombat::new`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct FieldRules {
    pub crt: CombatResultsTable,
    /// Single printed cells edited on top of the column reading, at most one per
    /// (odds row, modified roll), in the order first given. Empty as printed (and then not
    /// serialised, so the validated rules of files without edits keep their bytes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub crt_cells: Vec<CrtCellEdit>,
    /// Ascending by ratio; the first must be 1:1 (L is never weaker than S).
    pub odds_columns: Vec<OddsColumn>,
    pub odds_rounding: OddsRounding,
    /// The net DRM is clamped to `−drm_cap…+drm_cap`.
    pub drm_cap: i32,
    /// Each source's contribution capped before the net clamp **\[option\]**; none as
    /// printed (and then not serialised, so files without caps keep their bytes).
    #[serde(skip_serializing_if = "DrmCaps::is_none")]
    pub caps: DrmCaps,
    /// The modified roll is clamped to `roll_min…roll_max`.
    pub roll_min: i32,
    pub roll_max: i32,
    pub clc: CombatLossChart,
    pub tactics: TacticalMatrix,
    /// A battle ends after this many rounds **[option, default 6]**.
    pub round_limit: u32,
}

impl FieldRules {
    /// The rules as printed (docs/systems/field.md).
    pub fn printed() -> Self {
        Self {
            crt: CombatResultsTable::printed(),
            crt_cells: Vec::new(),
            odds_columns: vec![
                OddsColumn {
                    larger: 1,
                    smaller: 1,
                    roll_two_column: 1,
                },
                OddsColumn {
                    larger: 3,
                    smaller: 2,
                    roll_two_column: 2,
                },
                OddsColumn {
                    larger: 2,
                    smaller: 1,
                    roll_two_column: 3,
                },
                OddsColumn {
                    larger: 3,
                    smaller: 1,
                    roll_two_column: 4,
                },
            ],
            odds_rounding: OddsRounding::Down,
            drm_cap: 4,
            caps: DrmCaps::default(),
            roll_min: 2,
            roll_max: 12,
            clc: CombatLossChart::printed(),
            tactics: TacticalMatrix::printed(),
            round_limit: 6,
        }
    }

    /// Index of the odds column with exactly this ratio.
    pub fn odds_column_index(&self, larger: u32, smaller: u32) -> Option<usize> {
        self.odds_columns.iter().position(|c| {
            u64::from(c.larger) * u64::from(smaller) == u64::from(c.smaller) * u64::from(larger)
        })
    }

    pub fn odds_labels(&self) -> Vec<String> {
        self.odds_columns.iter().map(OddsColumn::label).collect()
    }

    /// Edits one printed cell (odds row `larger:smaller`, modified roll `roll`), replacing
    /// an earlier edit of the same cell. Checked by [`FieldCombat::new`].
    pub fn edit_crt_cell(&mut self, larger: u32, smaller: u32, roll: i32, pair: ResultPair) {
        let edit = CrtCellEdit {
            larger,
            smaller,
            roll,
            pair,
        };
        let same = |e: &&mut CrtCellEdit| {
            e.roll == roll
                && u64::from(e.larger) * u64::from(smaller)
                    == u64::from(e.smaller) * u64::from(larger)
        };
        match self.crt_cells.iter_mut().find(same) {
            Some(existing) => *existing = edit,
            None => self.crt_cells.push(edit),
        }
    }

    /// The result column (1-based) a modified roll reaches in an odds column.
    pub fn column_of(column: &OddsColumn, roll: i32) -> usize {
        (roll - 1 + column.shift()).clamp(1, CRT_COLUMNS as i32) as usize
    }

    /// The edit of the printed cell (odds column `odds`, modified roll `roll`), if any.
    pub fn cell_edit(&self, odds: usize, roll: i32) -> Option<&CrtCellEdit> {
        let column = self.odds_columns.get(odds)?;
        self.crt_cells.iter().find(|e| {
            e.roll == roll
                && u64::from(e.larger) * u64::from(column.smaller)
                    == u64::from(e.smaller) * u64::from(column.larger)
        })
    }

    /// The printed cell (odds column `odds`, modified roll `roll`) as these rules read it:
    /// its edit if it has one, otherwise the result column the roll reaches.
    pub fn cell(&self, odds: usize, roll: i32) -> ResultPair {
        match self.cell_edit(odds, roll) {
            Some(edit) => edit.pair,
            None => {
                let column = Self::column_of(&self.odds_columns[odds], roll);
                self.crt.columns[column - 1]
            }
        }
    }

    fn validate(&self) -> Result<(), RulesError> {
        if self.odds_columns.is_empty() {
            return Err(RulesError::new(
                "rules.odds",
                "the CRT needs at least one odds column (1:1)",
            ));
        }
        let first = self.odds_columns[0];
        if first.larger != first.smaller {
            return Err(RulesError::new(
                "rules.odds",
                format!(
                    "the lowest odds column is {}, but the larger force is never weaker than 1:1; keep a 1:1 column",
                    first.label()
                ),
            ));
        }
        for pair in self.odds_columns.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if u64::from(a.larger) * u64::from(b.smaller)
                >= u64::from(b.larger) * u64::from(a.smaller)
            {
                return Err(RulesError::new(
                    "rules.odds",
                    format!(
                        "odds columns must be distinct and ascending, found {} before {}",
                        a.label(),
                        b.label()
                    ),
                ));
            }
        }
        for column in &self.odds_columns {
            if !(1..=CRT_COLUMNS as u32).contains(&column.roll_two_column) {
                return Err(RulesError::new(
                    format!("rules.odds.\"{}\"", column.label()),
                    format!(
                        "a modified roll of 2 must reach a result column 1 to {CRT_COLUMNS}, got {}",
                        column.roll_two_column
                    ),
                ));
            }
        }
        for edit in &self.crt_cells {
            let field = format!(
                "rules.crt_cells.\"{}\".\"{}\"",
                edit.odds_label(),
                edit.roll
            );
            if self.odds_column_index(edit.larger, edit.smaller).is_none() {
                return Err(RulesError::new(
                    field,
                    format!(
                        "the CRT has odds rows {}; got \"{}\"",
                        self.odds_labels().join(", "),
                        edit.odds_label()
                    ),
                ));
            }
            if !(CRT_ROLLS.0..=CRT_ROLLS.1).contains(&edit.roll) {
                return Err(RulesError::new(
                    field,
                    format!(
                        "the CRT is printed for modified rolls {} to {}, got {}",
                        CRT_ROLLS.0, CRT_ROLLS.1, edit.roll
                    ),
                ));
            }
        }
        for (name, cap) in [
            ("leader", self.caps.leader),
            ("morale", self.caps.morale),
            ("terrain", self.caps.terrain),
            ("tactic", self.caps.tactic),
            ("drm", self.caps.drm),
        ] {
            if let Some(cap) = cap {
                if !(0..=12).contains(&cap) {
                    return Err(RulesError::new(
                        format!("rules.caps.{name}"),
                        format!("a source's cap must be 0 to 12, got {cap}"),
                    ));
                }
            }
        }
        if !(0..=12).contains(&self.drm_cap) {
            return Err(RulesError::new(
                "rules.drm_cap",
                format!("the DRM cap must be 0 to 12, got {}", self.drm_cap),
            ));
        }
        if !(2..=12).contains(&self.roll_min)
            || !(2..=12).contains(&self.roll_max)
            || self.roll_min > self.roll_max
        {
            return Err(RulesError::new(
                "rules.roll",
                format!(
                    "the roll clamp must satisfy 2 <= min <= max <= 12 (2d6 rolls 2 to 12), got min {} max {}",
                    self.roll_min, self.roll_max
                ),
            ));
        }
        let bands = &self.clc.band_lower_bounds;
        if bands.first() != Some(&1) || bands.windows(2).any(|w| w[0] >= w[1]) {
            return Err(RulesError::new(
                "rules.clc",
                "CLC bands must start at 1 SP and ascend",
            ));
        }
        for (row, values) in self.clc.values.iter().enumerate() {
            if values.len() != bands.len() {
                return Err(RulesError::new(
                    format!("rules.clc.{}", ClcRow::NAMES[row]),
                    format!(
                        "needs {} values, one per band, got {}",
                        bands.len(),
                        values.len()
                    ),
                ));
            }
            if let Some(v) = values.iter().find(|v| **v > CLC_VALUE_RANGE.1) {
                return Err(RulesError::new(
                    format!("rules.clc.{}", ClcRow::NAMES[row]),
                    format!(
                        "SP lost must be {} to {}, got {v}",
                        CLC_VALUE_RANGE.0, CLC_VALUE_RANGE.1
                    ),
                ));
            }
        }
        for (l, row) in self.tactics.cells.iter().enumerate() {
            for (s, cell) in row.iter().enumerate() {
                if !(DRM_RANGE.0..=DRM_RANGE.1).contains(&cell.drm) {
                    return Err(RulesError::new(
                        format!("rules.tactics.{}.{}", TACTIC_NAMES[l], TACTIC_NAMES[s]),
                        format!(
                            "a tactic DRM must be {} to +{}, got {}",
                            DRM_RANGE.0, DRM_RANGE.1, cell.drm
                        ),
                    ));
                }
            }
        }
        if !(ROUND_LIMIT_RANGE.0..=ROUND_LIMIT_RANGE.1).contains(&self.round_limit) {
            return Err(RulesError::new(
                "rules.round_limit",
                format!(
                    "the round limit must be {} to {}, got {}",
                    ROUND_LIMIT_RANGE.0, ROUND_LIMIT_RANGE.1, self.round_limit
                ),
            ));
        }
        Ok(())
    }
}

/// A threshold on the strength ratio `L/S`: the ratio counts as reaching it when
/// `L·denominator ≥ S·numerator + strict`.
#[derive(Clone, Copy, Debug)]
struct OddsThreshold {
    numerator: u64,
    denominator: u64,
    strict: u64,
}

/// Field-combat rules, validated and compiled into flat lookup arrays. Built once; after
/// that nothing here can fail.
#[derive(Clone, Debug)]
pub struct FieldCombat {
    rules: FieldRules,
    /// The tactical matrix with `caps.tactic` applied to every cell's DRM, padded to 8×8
    /// (the eighth row and column are never read).
    // PERF: 8×8 so a tactic masked with `& 7` indexes without bounds checks.
    tactics: [[TacticCell; 8]; 8],
    /// `[leader, morale, terrain, drm]` caps (a large bound where a source is uncapped).
    source_caps: [i32; 4],
    /// Distinct result pairs in column order: the outcomes of one resolution.
    pairs: Vec<ResultPair>,
    /// `pair_by_roll[odds · 11 + modified roll − 2]` → index into `pairs`: the printed CRT
    /// by odds row and modified roll, cell edits applied on top of the column reading.
    pair_by_roll: Vec<u8>,
    /// `pair_by_face[odds · drm_steps + drm + cap][face]` → index into `pairs`,
    /// read from `pair_by_roll`.
    // PERF: rows of a fixed 36 so a face (< 36) indexes without a slice bounds check.
    pair_by_face: Vec<[u8; 36]>,
    drm_steps: usize,
    odds_thresholds: Vec<OddsThreshold>,
    /// `loss_by_result[result][band]`: SP lost, with a zero row for `0` results.
    loss_by_result: [Vec<u32>; 5],
    /// `odds_small[larger · SMALL_SP + smaller]`: [`Self::odds_index`] for strengths
    /// below [`SMALL_SP`], read from the thresholds at construction.
    // PERF: the threshold loop (a variable-length loop of u64 products) ran every round
    // and sat on the round's critical path; one byte load replaces it for small SP.
    odds_small: Box<[u8]>,
    /// `band_small[smaller]`: the CLC band for strengths below [`SMALL_SP`].
    // PERF: `band_of` was an out-of-line loop over a Vec (6% of the kernel in perf).
    band_small: [u8; SMALL_SP],
    /// `hits[band][pair]`: what one CRT pair does at one CLC band — SP and morale lost
    /// by the larger and the smaller side (before capping at what is left).
    // PERF: one load replaces pair → result → loss row → band (four dependent loads);
    // rows of a fixed power of two so a masked pair index needs no multiply or check.
    hits: Vec<[PairHit; OUTCOME_LANES]>,
}

/// Strengths below this read the odds column and CLC band from tables.
pub const SMALL_SP: usize = 64;

/// SP and morale lost by (larger, smaller) for one CRT pair at one CLC band.
#[derive(Clone, Copy, Debug, Default)]
struct PairHit {
    sp: [u32; 2],
    morale: [u32; 2],
}

impl FieldCombat {
    /// Validates the rules and compiles the lookups.
    pub fn new(rules: FieldRules) -> Result<Self, RulesError> {
        rules.validate()?;
        // Pairs in column order, then those only cell edits bring, in the order given.
        let mut pairs: Vec<ResultPair> = Vec::new();
        let mut index_of = |pair: ResultPair| match pairs.iter().position(|p| *p == pair) {
            Some(index) => index as u8,
            None => {
                pairs.push(pair);
                (pairs.len() - 1) as u8
            }
        };
        let pair_of_column = rules.crt.columns.map(&mut index_of);
        let edit_pairs: Vec<u8> = rules.crt_cells.iter().map(|e| index_of(e.pair)).collect();
        debug_assert!(pairs.len() <= MAX_PAIRS);
        // The printed CRT by odds row × modified roll: the column reading, then the edits.
        let mut pair_by_roll = Vec::with_capacity(rules.odds_columns.len() * CRT_ROLL_COUNT);
        for odds in &rules.odds_columns {
            for roll in CRT_ROLLS.0..=CRT_ROLLS.1 {
                pair_by_roll.push(pair_of_column[FieldRules::column_of(odds, roll) - 1]);
            }
        }
        for (edit, &pair) in rules.crt_cells.iter().zip(&edit_pairs) {
            let odds = rules
                .odds_column_index(edit.larger, edit.smaller)
                .expect("validated: an odds column");
            pair_by_roll[odds * CRT_ROLL_COUNT + (edit.roll - CRT_ROLLS.0) as usize] = pair;
        }
        let cap = rules.drm_cap;
        let drm_steps = (2 * cap + 1) as usize;
        let mut pair_by_face = Vec::with_capacity(rules.odds_columns.len() * drm_steps);
        for odds in 0..rules.odds_columns.len() {
            let row = &pair_by_roll[odds * CRT_ROLL_COUNT..(odds + 1) * CRT_ROLL_COUNT];
            for drm in -cap..=cap {
                let mut faces = [0u8; 36];
                for (face, slot) in faces.iter_mut().enumerate() {
                    let roll = (face / 6 + face % 6 + 2) as i32;
                    let modified = (roll + drm).clamp(rules.roll_min, rules.roll_max);
                    *slot = row[(modified - CRT_ROLLS.0) as usize];
                }
                pair_by_face.push(faces);
            }
        }
        let odds_thresholds = Self::thresholds(&rules.odds_columns, rules.odds_rounding);
        let zero_row = vec![0u32; rules.clc.band_lower_bounds.len()];
        let loss_by_result = CrtResult::ALL.map(|result| match result.clc_row() {
            Some(row) => rules.clc.values[row as usize].clone(),
            None => zero_row.clone(),
        });
        let tactic_cap = DrmCaps::bound(rules.caps.tactic);
        let mut tactics = [[TacticCell {
            drm: 0,
            no_combat: true,
            ends_battle: true,
        }; 8]; 8];
        for (row, printed) in tactics.iter_mut().zip(&rules.tactics.cells) {
            for (cell, printed) in row.iter_mut().zip(printed) {
                *cell = TacticCell {
                    drm: DrmCaps::hold(tactic_cap, printed.drm),
                    ..*printed
                };
            }
        }
        let source_caps = [
            DrmCaps::bound(rules.caps.leader),
            DrmCaps::bound(rules.caps.morale),
            DrmCaps::bound(rules.caps.terrain),
            DrmCaps::bound(rules.caps.drm),
        ];
        let bands = rules.clc.band_lower_bounds.len();
        let mut hits = vec![[PairHit::default(); OUTCOME_LANES]; bands];
        for (band, row) in hits.iter_mut().enumerate() {
            for (hit, pair) in row.iter_mut().zip(&pairs) {
                let [l, s] = [pair.larger, pair.smaller];
                *hit = PairHit {
                    sp: [
                        loss_by_result[l as usize][band],
                        loss_by_result[s as usize][band],
                    ],
                    morale: [l.morale_loss(), s.morale_loss()],
                };
            }
        }
        let mut band_small = [0u8; SMALL_SP];
        for (sp, band) in band_small.iter_mut().enumerate() {
            *band = rules.clc.band_of(sp as u32) as u8;
        }
        let mut combat = Self {
            rules,
            tactics,
            source_caps,
            pairs,
            pair_by_roll,
            pair_by_face,
            drm_steps,
            odds_thresholds,
            loss_by_result,
            odds_small: Box::new([]),
            band_small,
            hits,
        };
        let mut odds_small = vec![0u8; SMALL_SP * SMALL_SP];
        for larger in 0..SMALL_SP {
            for smaller in 0..SMALL_SP {
                odds_small[larger * SMALL_SP + smaller] =
                    combat.odds_by_thresholds(larger as u32, smaller as u32) as u8;
            }
        }
        combat.odds_small = odds_small.into_boxed_slice();
        Ok(combat)
    }

    /// One threshold per odds column after the first: reaching it moves one column up.
    fn thresholds(columns: &[OddsColumn], rounding: OddsRounding) -> Vec<OddsThreshold> {
        columns
            .windows(2)
            .map(|w| {
                let (lower, upper) = (w[0], w[1]);
                let (ln, ld) = (u64::from(lower.larger), u64::from(lower.smaller));
                let (un, ud) = (u64::from(upper.larger), u64::from(upper.smaller));
                match rounding {
                    OddsRounding::Down => OddsThreshold {
                        numerator: un,
                        denominator: ud,
                        strict: 0,
                    },
                    // Midpoint (ln/ld + un/ud)/2 = (ln·ud + un·ld) / (2·ld·ud).
                    OddsRounding::Nearest => OddsThreshold {
                        numerator: ln * ud + un * ld,
                        denominator: 2 * ld * ud,
                        strict: 0,
                    },
                    OddsRounding::Up => OddsThreshold {
                        numerator: ln,
                        denominator: ld,
                        strict: 1,
                    },
                }
            })
            .collect()
    }

    pub fn rules(&self) -> &FieldRules {
        &self.rules
    }

    /// The distinct result pairs, in CRT column order; a resolution's outcome indexes this.
    pub fn pairs(&self) -> &[ResultPair] {
        &self.pairs
    }

    /// The odds column for strengths `larger ≥ smaller ≥ 1` under the rounding rule.
    #[inline(always)]
    pub fn odds_index(&self, larger_sp: u32, smaller_sp: u32) -> usize {
        // PERF: a table for small SP (see `odds_small`); the branch is taken the same way
        // every round of a small battle.
        let (l, s) = (larger_sp as usize, smaller_sp as usize);
        if l < SMALL_SP && s < SMALL_SP {
            usize::from(self.odds_small[l * SMALL_SP + s])
        } else {
            self.odds_by_thresholds(larger_sp, smaller_sp)
        }
    }

    /// [`Self::odds_index`] from the thresholds, for any strengths.
    #[inline]
    fn odds_by_thresholds(&self, larger_sp: u32, smaller_sp: u32) -> usize {
        let (l, s) = (u64::from(larger_sp), u64::from(smaller_sp));
        // PERF: the column is the number of thresholds reached, summed as integers.
        self.odds_thresholds
            .iter()
            .map(|t| usize::from(l * t.denominator >= s * t.numerator + t.strict))
            .sum()
    }

    /// The compiled CRT cell: the pair index (into [`Self::pairs`]) for odds column `odds`
    /// and modified roll `roll` (2 to 12, after the DRM and the roll clamp), edits applied.
    /// [`Self::faces`] reads every resolution from these cells.
    pub fn pair_at(&self, odds: usize, roll: i32) -> usize {
        assert!((CRT_ROLLS.0..=CRT_ROLLS.1).contains(&roll), "roll {roll}");
        usize::from(self.pair_by_roll[odds * CRT_ROLL_COUNT + (roll - CRT_ROLLS.0) as usize])
    }

    /// The 36 pair indices for one odds column and net DRM (clamped to the cap here).
    #[inline(always)]
    pub fn faces(&self, odds: usize, net_drm: i32) -> &[u8; 36] {
        let cap = self.rules.drm_cap;
        let row = odds * self.drm_steps + (net_drm.clamp(-cap, cap) + cap) as usize;
        &self.pair_by_face[row]
    }

    /// One CRT resolution: the pair index for a uniform face `0..36` of two d6.
    #[inline(always)]
    pub fn resolve_face(&self, odds: usize, net_drm: i32, face: u32) -> usize {
        usize::from(self.faces(odds, net_drm)[face as usize])
    }

    /// The exact distribution of one resolution over [`Self::pairs`].
    pub fn resolution_distribution(&self, odds: usize, net_drm: i32) -> ExactDistribution {
        let faces = self.faces(odds, net_drm);
        ExactDistribution::enumerate(TWO_D6_FACES, self.pairs.len(), |face| {
            usize::from(faces[face as usize])
        })
    }

    /// SP lost for one result when the smaller force has `smaller_sp` SP (before capping
    /// at the force's own strength).
    #[inline(always)]
    pub fn clc_loss(&self, result: CrtResult, smaller_sp: u32) -> u32 {
        self.loss_by_result[result as usize][self.band(smaller_sp)]
    }

    /// The CLC band for the smaller force's strength.
    #[inline(always)]
    fn band(&self, smaller_sp: u32) -> usize {
        match self.band_small.get(smaller_sp as usize) {
            Some(&band) => usize::from(band),
            None => self.rules.clc.band_of(smaller_sp),
        }
    }

    /// Everything about a round that depends only on the state before the tactics and
    /// dice: who is larger, the odds column and the DRM before the tactic cell.
    #[inline(always)]
    pub fn round_setup(&self, battle: &PreparedBattle, state: &BattleState) -> RoundSetup {
        self.round_setup_with(&self.battle_constants(battle), state)
    }

    /// The parts of [`Self::round_setup`] that stay fixed through a battle: the capped
    /// leader, side and terrain DRMs, by which side is larger.
    // PERF: computed once per battle by the kernel instead of once per round (they were
    // six loads and three clamps on every round).
    #[inline(always)]
    pub fn battle_constants(&self, battle: &PreparedBattle) -> BattleConstants {
        let [leader, _, terrain, drm] = self.source_caps;
        let fixed_drm = [0usize, 1].map(|larger| {
            let smaller = 1 - larger;
            let sign = 1 - 2 * larger as i32; // +1 when A is larger, −1 when B is.
                                              // Each source held to its cap (`[rules] caps`) before the net clamp; uncapped
                                              // sources have a bound no sum reaches.
            DrmCaps::hold(leader, battle.leader[larger] - battle.leader[smaller])
                + DrmCaps::hold(drm, battle.drm[larger] - battle.drm[smaller])
                + DrmCaps::hold(terrain, sign * battle.terrain_drm)
        });
        BattleConstants { fixed_drm }
    }

    /// [`Self::round_setup`] from the battle's constants ([`Self::battle_constants`]).
    #[inline(always)]
    pub fn round_setup_with(&self, constants: &BattleConstants, state: &BattleState) -> RoundSetup {
        // PERF: ties make A the larger force; an index, not a branch.
        let larger = usize::from(state.sp[1] > state.sp[0]);
        let smaller = 1 - larger;
        let odds = self.odds_index(state.sp[larger], state.sp[smaller]);
        let morale = self.source_caps[1];
        let base_drm = constants.fixed_drm[larger]
            + DrmCaps::hold(
                morale,
                state.morale[larger] as i32 - state.morale[smaller] as i32,
            );
        RoundSetup {
            larger,
            odds,
            base_drm,
        }
    }

    /// The tactic cell for A's and B's tactics, read with L's choice as the row.
    #[inline(always)]
    pub fn tactic_cell(&self, setup: &RoundSetup, tactic: [usize; 2]) -> TacticCell {
        let larger = setup.larger & 1;
        self.tactics[tactic[larger] & 7][tactic[1 - larger] & 7]
    }

    /// Applies one round's CRT result (`pair`, ignored when the cell is no combat) and
    /// returns the state after it.
    #[inline(always)]
    pub fn apply_round(
        &self,
        state: &BattleState,
        setup: &RoundSetup,
        cell: TacticCell,
        pair: usize,
    ) -> BattleState {
        let (larger, smaller) = (setup.larger, 1 - setup.larger);
        let combat = u32::from(!cell.no_combat);
        let band = self.band(state.sp[smaller]);
        // PERF: the pair's losses at this band, precompiled (`hits`).
        let hit = self.hits[band][pair & (OUTCOME_LANES - 1)];
        let mut next = *state;
        for (i, side) in [larger, smaller].into_iter().enumerate() {
            let loss = combat * hit.sp[i];
            next.sp[side] -= loss.min(next.sp[side]);
            let morale = combat * hit.morale[i];
            next.morale[side] -= morale.min(next.morale[side]);
        }
        next
    }

    /// How a battle that stops after this round ends, or `None` if it goes on.
    #[inline(always)]
    pub fn battle_end(
        &self,
        after: &BattleState,
        cell: TacticCell,
        tactic: [usize; 2],
        round: u32,
    ) -> Option<BattleResult> {
        // PERF: one branch, "battle over?", on flags combined without short-circuits; the
        // match that names the result runs once per battle, not once per round.
        let broken = [
            (after.sp[0] == 0) | (after.morale[0] == 0),
            (after.sp[1] == 0) | (after.morale[1] == 0),
        ];
        if !(broken[0] | broken[1] | cell.ends_battle | (round >= self.rules.round_limit)) {
            return None;
        }
        let result = match (broken, cell.ends_battle) {
            ([true, true], _) => BattleResult::BothBroken,
            ([false, true], _) => BattleResult::AWins,
            ([true, false], _) => BattleResult::BWins,
            (_, true) => match (tactic[0] == WITHDRAW, tactic[1] == WITHDRAW) {
                (true, true) => BattleResult::BothWithdraw,
                (true, false) => BattleResult::AWithdraws,
                (false, true) => BattleResult::BWithdraws,
                (false, false) => BattleResult::BrokenOff,
            },
            _ if round >= self.rules.round_limit => BattleResult::RoundLimit,
            _ => return None,
        };
        Some(result)
    }

    /// Fights one whole battle. The Monte Carlo kernel: no allocation, no I/O; each
    /// round takes one 64-bit word for both tactic choices and the 2d6.
    #[inline]
    pub fn fight(&self, battle: &PreparedBattle, dice: &mut DiceStream) -> BattleOutcome {
        let mut state = battle.start;
        let constants = self.battle_constants(battle);
        let mut round = 0;
        loop {
            round += 1;
            let setup = self.round_setup_with(&constants, &state);
            // PERF: one word gives A's tactic, B's tactic and the 2d6 face; the product
            // of sides is at most 10^4 · 10^4 · 36 < 2^32, so the bias stays below 2^-32
            // of a probability (see dice.rs).
            let mut word: DiceWord = dice.word();
            let tactic = [battle.mix[0].pick(&mut word), battle.mix[1].pick(&mut word)];
            let face = word.take(TWO_D6_FACES);
            let cell = self.tactic_cell(&setup, tactic);
            let pair = self.resolve_face(setup.odds, setup.base_drm + cell.drm, face);
            state = self.apply_round(&state, &setup, cell, pair);
            if let Some(result) = self.battle_end(&state, cell, tactic, round) {
                return BattleOutcome::new(result, round, &battle.start, &state);
            }
        }
    }

    /// The exact distribution of a whole battle, enumerated round by round over every
    /// tactic pair and every face of the dice (probabilities in f64). Returns `None` when
    /// it would visit more than `max_states` (round, state) pairs in all, which bounds its
    /// time as well as its memory.
    pub fn battle_distribution(
        &self,
        battle: &PreparedBattle,
        max_states: usize,
    ) -> Option<BattleDistribution> {
        let mix = [battle.mix[0].probabilities(), battle.mix[1].probabilities()];
        self.battle_distribution_by(battle, max_states, &|_, _| mix)
    }

    /// [`Self::battle_distribution`] with each side's tactic probabilities given per
    /// round and state by `mixes` (A's, then B's): the one enumeration behind plain mixes
    /// and state-dependent policies (`systems::field::game`).
    pub fn battle_distribution_by(
        &self,
        battle: &PreparedBattle,
        max_states: usize,
        mixes: &dyn Fn(u32, &BattleState) -> [[f64; 7]; 2],
    ) -> Option<BattleDistribution> {
        use std::collections::HashMap;
        let mut distribution = BattleDistribution::new(battle, self.rules.round_limit);
        let mut live: HashMap<BattleState, f64> = HashMap::from([(battle.start, 1.0)]);
        let mut visited = 0usize;
        for round in 1..=self.rules.round_limit {
            visited += live.len();
            if visited > max_states {
                return None;
            }
            let mut next_live: HashMap<BattleState, f64> = HashMap::new();
            let mut states: Vec<(BattleState, f64)> = live.into_iter().collect();
            // Sorted so floating-point sums are taken in the same order every run.
            states.sort_by_key(|(s, _)| (s.sp, s.morale));
            for (state, p_state) in states {
                // A stop request ends the enumeration as if over budget; the caller sees
                // the request and reports the run as interrupted.
                if crate::interrupt::requested() {
                    return None;
                }
                let setup = self.round_setup(battle, &state);
                let mix = mixes(round, &state);
                for (ta, &pa) in mix[0].iter().enumerate().filter(|(_, p)| **p > 0.0) {
                    for (tb, &pb) in mix[1].iter().enumerate().filter(|(_, p)| **p > 0.0) {
                        let tactic = [ta, tb];
                        let cell = self.tactic_cell(&setup, tactic);
                        let resolution =
                            self.resolution_distribution(setup.odds, setup.base_drm + cell.drm);
                        for (pair, &count) in resolution
                            .counts
                            .iter()
                            .enumerate()
                            .filter(|(_, c)| **c > 0)
                        {
                            let p = p_state * pa * pb * count as f64 / f64::from(TWO_D6_FACES);
                            let after = self.apply_round(&state, &setup, cell, pair);
                            match self.battle_end(&after, cell, tactic, round) {
                                Some(result) => {
                                    distribution.add(result, round, &battle.start, &after, p)
                                }
                                None => *next_live.entry(after).or_insert(0.0) += p,
                            }
                        }
                    }
                }
            }
            live = next_live;
        }
        Some(distribution)
    }
}

/// Per-battle constants of the round step: the capped fixed DRMs (leader, side, terrain)
/// by the larger side (index 0 = A larger, 1 = B larger).
#[derive(Clone, Copy, Debug)]
pub struct BattleConstants {
    pub fixed_drm: [i32; 2],
}

/// What a round's setup computed: the larger side (0 = A, 1 = B), the odds column and
/// the DRM before the tactic cell.
#[derive(Clone, Copy, Debug)]
pub struct RoundSetup {
    pub larger: usize,
    pub odds: usize,
    pub base_drm: i32,
}

/// Strength and morale of both sides (index 0 = A, 1 = B).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BattleState {
    pub sp: [u32; 2],
    pub morale: [u32; 2],
}

/// A side's tactic policy compiled for sampling: integer weights over the seven tactics.
///
/// Weights are whole numbers (relative: `charge = 3, envelop = 1` is 75%/25%) with a total
/// of at most [`MAX_MIX_WEIGHT`], so the exact enumeration uses the very probabilities
/// the kernel samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct TacticMix {
    pub weights: [u32; 7],
    #[serde(skip)]
    cumulative: [u32; 7],
    #[serde(skip)]
    total: u32,
}

impl TacticMix {
    /// A mix from weights; errors name what is wrong.
    pub fn new(weights: [u32; 7]) -> Result<Self, String> {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        if total == 0 {
            return Err("a tactic mix needs at least one tactic with a positive weight".into());
        }
        if total > u64::from(MAX_MIX_WEIGHT) {
            return Err(format!(
                "the weights of a tactic mix may add up to at most {MAX_MIX_WEIGHT}, got {total}"
            ));
        }
        let mut cumulative = [0u32; 7];
        let mut running = 0;
        for (i, w) in weights.iter().enumerate() {
            running += w;
            cumulative[i] = running;
        }
        Ok(Self {
            weights,
            cumulative,
            total: total as u32,
        })
    }

    /// Always the same tactic.
    pub fn fixed(tactic: usize) -> Self {
        let mut weights = [0; 7];
        weights[tactic] = 1;
        Self::new(weights).expect("one positive weight")
    }

    /// Each of the given tactics equally often.
    pub fn uniform(tactics: &[usize]) -> Result<Self, String> {
        let mut weights = [0; 7];
        for &t in tactics {
            weights[t] = 1;
        }
        Self::new(weights)
    }

    /// Picks a tactic index from a word.
    #[inline(always)]
    pub fn pick(&self, word: &mut DiceWord) -> usize {
        let u = word.take(self.total);
        // PERF: the tactic is the number of cumulative weights ≤ u, summed as integers.
        self.cumulative.iter().map(|&c| usize::from(u >= c)).sum()
    }

    pub fn probabilities(&self) -> [f64; 7] {
        self.weights.map(|w| f64::from(w) / f64::from(self.total))
    }

    /// A short description: `charge`, `uniform`, or `charge 3, envelop 1`.
    pub fn describe(&self) -> String {
        let used: Vec<usize> = (0..7).filter(|&t| self.weights[t] > 0).collect();
        if used.len() == 1 {
            return TACTIC_NAMES[used[0]].to_string();
        }
        if used
            .iter()
            .all(|&t| self.weights[t] == self.weights[used[0]])
        {
            if used.len() == 7 {
                return "uniform".to_string();
            }
            return format!(
                "uniform over {}",
                used.iter()
                    .map(|&t| TACTIC_NAMES[t])
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        used.iter()
            .map(|&t| format!("{} {}", TACTIC_NAMES[t], self.weights[t]))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A side's tactic policy as the file gives it: a fixed mix (a tactic, uniform, weights)
/// or the solved equilibrium of the battle's game (`systems::field::game`), which depends on
/// the state and so is compiled per run, not here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TacticPolicy {
    Mix(TacticMix),
    Equilibrium,
}

impl From<TacticMix> for TacticPolicy {
    fn from(mix: TacticMix) -> Self {
        Self::Mix(mix)
    }
}

impl TacticPolicy {
    /// `charge`, `uniform`, `charge 3, envelop 1` or `equilibrium`.
    pub fn describe(&self) -> String {
        match self {
            Self::Mix(mix) => mix.describe(),
            Self::Equilibrium => "equilibrium".into(),
        }
    }

    pub fn is_equilibrium(&self) -> bool {
        matches!(self, Self::Equilibrium)
    }
}

/// A mix serialises as its weights (as before policies existed), the equilibrium as the
/// string `"equilibrium"`.
impl Serialize for TacticPolicy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Mix(mix) => mix.serialize(serializer),
            Self::Equilibrium => serializer.serialize_str("equilibrium"),
        }
    }
}

/// One side of a field battle as a designer describes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Force {
    pub name: String,
    pub sp: u32,
    pub morale: u32,
    pub leader: i32,
    /// Other DRMs in this side's favour.
    pub drm: i32,
    pub tactics: TacticPolicy,
}

/// A field battle: side A (the attacker) and side B, and terrain.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct FieldBattle {
    pub a: Force,
    pub b: Force,
    /// Terrain DRM in A's (the attacker's) favour; usually negative.
    pub terrain_drm: i32,
}

/// A battle checked and laid out per side for the kernel.
#[derive(Clone, Copy, Debug)]
pub struct PreparedBattle {
    pub start: BattleState,
    pub leader: [i32; 2],
    pub drm: [i32; 2],
    pub terrain_drm: i32,
    /// Each side's mix; for an `equilibrium` side, uniform (the run plays a
    /// `game::StatePolicy` instead).
    pub mix: [TacticMix; 2],
    /// Which sides play the solved equilibrium.
    pub equilibrium: [bool; 2],
    /// The tactics each side may choose from: the game an `equilibrium` side plays
    /// (`systems::field::game`) is solved over these only. Every tactic unless set after
    /// [`FieldBattle::prepare`] (the field system sets it from `allowed_tactics`, having
    /// checked that each side's mix stays inside it).
    pub allowed: [TacticSet; 2],
}

impl FieldBattle {
    /// Checks the scenario: errors name the field and what is allowed.
    pub fn prepare(&self) -> Result<PreparedBattle, RulesError> {
        for (side, force) in [("a", &self.a), ("b", &self.b)] {
            if !(1..=MAX_SP).contains(&force.sp) {
                return Err(RulesError::new(
                    format!("side.{side}.sp"),
                    format!("strength must be 1 to {MAX_SP} SP, got {}", force.sp),
                ));
            }
            if !(1..=MAX_MORALE).contains(&force.morale) {
                return Err(RulesError::new(
                    format!("side.{side}.morale"),
                    format!(
                        "morale must be 1 to {MAX_MORALE} (Guards 3, Major 2, Minor 1), got {}",
                        force.morale
                    ),
                ));
            }
            if !(LEADER_RANGE.0..=LEADER_RANGE.1).contains(&force.leader) {
                return Err(RulesError::new(
                    format!("side.{side}.leader"),
                    format!(
                        "a leader rating must be {} to {}, got {}",
                        LEADER_RANGE.0, LEADER_RANGE.1, force.leader
                    ),
                ));
            }
            if !(DRM_RANGE.0..=DRM_RANGE.1).contains(&force.drm) {
                return Err(RulesError::new(
                    format!("side.{side}.drm"),
                    format!(
                        "a side's DRM must be {} to +{}, got {}",
                        DRM_RANGE.0, DRM_RANGE.1, force.drm
                    ),
                ));
            }
        }
        if !(DRM_RANGE.0..=DRM_RANGE.1).contains(&self.terrain_drm) {
            return Err(RulesError::new(
                "battle.terrain_drm",
                format!(
                    "terrain DRM must be {} to +{}, got {}",
                    DRM_RANGE.0, DRM_RANGE.1, self.terrain_drm
                ),
            ));
        }
        Ok(PreparedBattle {
            start: BattleState {
                sp: [self.a.sp, self.b.sp],
                morale: [self.a.morale, self.b.morale],
            },
            leader: [self.a.leader, self.b.leader],
            drm: [self.a.drm, self.b.drm],
            terrain_drm: self.terrain_drm,
            mix: [&self.a, &self.b].map(|f| match f.tactics {
                TacticPolicy::Mix(mix) => mix,
                TacticPolicy::Equilibrium => {
                    TacticMix::uniform(&[0, 1, 2, 3, 4, 5, 6]).expect("seven tactics")
                }
            }),
            equilibrium: [
                self.a.tactics.is_equilibrium(),
                self.b.tactics.is_equilibrium(),
            ],
            allowed: [TacticSet::ALL; 2],
        })
    }
}

/// How a field battle ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BattleResult {
    /// B's SP or morale reached 0, A's did not.
    AWins,
    /// A's SP or morale reached 0, B's did not.
    BWins,
    /// Both reached 0 in the same round.
    BothBroken,
    /// A round in parentheses ended the battle and A had chosen Withdraw.
    AWithdraws,
    BWithdraws,
    BothWithdraw,
    /// A round in parentheses ended it without either side withdrawing (overridden
    /// matrices only).
    BrokenOff,
    /// The round limit was reached with both sides standing.
    RoundLimit,
}

impl BattleResult {
    pub const COUNT: usize = 8;
    pub const ALL: [BattleResult; 8] = [
        Self::AWins,
        Self::BWins,
        Self::BothBroken,
        Self::AWithdraws,
        Self::BWithdraws,
        Self::BothWithdraw,
        Self::BrokenOff,
        Self::RoundLimit,
    ];
    pub const LABELS: [&'static str; 8] = [
        "A wins",
        "B wins",
        "both broken",
        "A withdraws",
        "B withdraws",
        "both withdraw",
        "broken off",
        "round limit",
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn label(self) -> &'static str {
        Self::LABELS[self as usize]
    }

    /// Whether `side` (0 = A, 1 = B) lost: the other side broke it, or it withdrew alone.
    pub fn loses(self, side: usize) -> bool {
        match side {
            0 => matches!(self, Self::BWins | Self::AWithdraws),
            _ => matches!(self, Self::AWins | Self::BWithdraws),
        }
    }

    /// The result whose label is `label` (as the report prints it; case and spacing
    /// aside).
    pub fn from_label(label: &str) -> Option<Self> {
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let label = words(label);
        Self::ALL
            .into_iter()
            .find(|r| r.label().eq_ignore_ascii_case(&label))
    }
}

/// The side (0 = A, 1 = B) that is smaller at the start of a battle, as the field report
/// reads "the smaller force": fewer SP; on equal SP, B (A is the larger force on ties).
pub fn smaller_side(start: &BattleState) -> usize {
    usize::from(start.sp[0] >= start.sp[1])
}

/// The outcome of one battle, with dense indices for histograms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BattleOutcome {
    pub result: BattleResult,
    pub rounds: u32,
    pub sp_lost: [u32; 2],
    pub morale_lost: [u32; 2],
}

impl BattleOutcome {
    pub(crate) fn new(
        result: BattleResult,
        rounds: u32,
        start: &BattleState,
        end: &BattleState,
    ) -> Self {
        Self {
            result,
            rounds,
            sp_lost: [start.sp[0] - end.sp[0], start.sp[1] - end.sp[1]],
            morale_lost: [
                start.morale[0] - end.morale[0],
                start.morale[1] - end.morale[1],
            ],
        }
    }
}

/// Distributions of a battle's outcome, in probabilities (exact enumeration) or counts
/// turned into probabilities (simulation): the battle result, its length in rounds, and
/// SP and morale lost per side.
#[derive(Clone, Debug, PartialEq)]
pub struct BattleDistribution {
    pub result: [f64; BattleResult::COUNT],
    /// Index = rounds fought (index 0 unused).
    pub rounds: Vec<f64>,
    pub sp_lost: [Vec<f64>; 2],
    pub morale_lost: [Vec<f64>; 2],
}

impl BattleDistribution {
    pub fn new(battle: &PreparedBattle, round_limit: u32) -> Self {
        Self {
            result: [0.0; BattleResult::COUNT],
            rounds: vec![0.0; round_limit as usize + 1],
            sp_lost: battle.start.sp.map(|sp| vec![0.0; sp as usize + 1]),
            morale_lost: battle.start.morale.map(|m| vec![0.0; m as usize + 1]),
        }
    }

    fn add(
        &mut self,
        result: BattleResult,
        round: u32,
        start: &BattleState,
        end: &BattleState,
        p: f64,
    ) {
        let outcome = BattleOutcome::new(result, round, start, end);
        self.result[result.index()] += p;
        self.rounds[outcome.rounds as usize] += p;
        for side in 0..2 {
            self.sp_lost[side][outcome.sp_lost[side] as usize] += p;
            self.morale_lost[side][outcome.morale_lost[side] as usize] += p;
        }
    }
}

/// Counts of simulated battles: the Monte Carlo counterpart of [`BattleDistribution`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BattleHistogram {
    pub result: [u64; BattleResult::COUNT],
    pub rounds: Vec<u64>,
    pub sp_lost: [Vec<u64>; 2],
    pub morale_lost: [Vec<u64>; 2],
}

impl BattleHistogram {
    /// Zeroed counts sized for `battle` (allocated once per block, never per trial).
    pub fn new(battle: &PreparedBattle, round_limit: u32) -> Self {
        Self {
            result: [0; BattleResult::COUNT],
            rounds: vec![0; round_limit as usize + 1],
            sp_lost: battle.start.sp.map(|sp| vec![0; sp as usize + 1]),
            morale_lost: battle.start.morale.map(|m| vec![0; m as usize + 1]),
        }
    }

    #[inline(always)]
    pub fn record(&mut self, outcome: &BattleOutcome) {
        self.record_count(outcome, 1);
    }

    /// `count` battles that all ended in `outcome`.
    #[inline(always)]
    pub fn record_count(&mut self, outcome: &BattleOutcome, count: u64) {
        self.result[outcome.result.index()] += count;
        self.rounds[outcome.rounds as usize] += count;
        for side in 0..2 {
            self.sp_lost[side][outcome.sp_lost[side] as usize] += count;
            self.morale_lost[side][outcome.morale_lost[side] as usize] += count;
        }
    }

    pub fn trials(&self) -> u64 {
        self.result.iter().sum()
    }
}

impl crate::sim::Histogram for BattleHistogram {
    fn merge(&mut self, other: Self) {
        let add = |mine: &mut [u64], theirs: &[u64]| {
            mine.iter_mut().zip(theirs).for_each(|(m, t)| *m += t)
        };
        add(&mut self.result, &other.result);
        add(&mut self.rounds, &other.rounds);
        for side in 0..2 {
            add(&mut self.sp_lost[side], &other.sp_lost[side]);
            add(&mut self.morale_lost[side], &other.morale_lost[side]);
        }
    }
}

/// Simulates `trials` single CRT resolutions at one odds column and net DRM; returns
/// counts over [`FieldCombat::pairs`].
pub fn simulate_resolutions(
    field: &FieldCombat,
    odds: usize,
    net_drm: i32,
    seed: u64,
    trials: u64,
    control: &crate::sim::RunControl,
) -> Result<Vec<u64>, crate::sim::Interrupted> {
    let faces: [u8; 36] = *field.faces(odds, net_drm);
    let outcomes = field.pairs().len();
    crate::sim::run_blocks(
        seed,
        trials,
        || vec![0u64; outcomes],
        |dice, n, histogram| resolve_many(&faces, dice, n, histogram),
        control,
    )
}

/// Counters per local histogram of [`resolve_many`].
pub const OUTCOME_LANES: usize = MAX_PAIRS.next_power_of_two();

/// The single-roll kernel's inner loop: `n` resolutions into `histogram`.
///
/// PERF: one 64-bit word yields four faces of 36 (36^4 / 2^64 < 1e-13 bias, see dice.rs);
/// the counts go to four interleaved local histograms (one per face of the word) so that
/// repeated outcomes do not chain every increment on the one before. Each holds
/// [`OUTCOME_LANES`] counters (a power of two at least [`MAX_PAIRS`], so the mask that
/// drops the bounds check never aliases an outcome).
#[inline]
pub fn resolve_many(faces: &[u8; 36], dice: &mut DiceStream, n: u64, histogram: &mut [u64]) {
    const MASK: usize = OUTCOME_LANES - 1;
    let mut counts = [[0u64; OUTCOME_LANES]; 4];
    for _ in 0..n / 4 {
        let mut word = dice.word();
        for lane in &mut counts {
            lane[usize::from(faces[word.take(TWO_D6_FACES) as usize]) & MASK] += 1;
        }
    }
    let mut word = dice.word();
    for _ in 0..n % 4 {
        counts[0][usize::from(faces[word.take(TWO_D6_FACES) as usize]) & MASK] += 1;
    }
    for (outcome, total) in histogram.iter_mut().enumerate().take(OUTCOME_LANES) {
        *total += counts.iter().map(|c| c[outcome]).sum::<u64>();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed() -> FieldCombat {
        FieldCombat::new(FieldRules::printed()).unwrap()
    }

    #[test]
    fn printed_pairs_are_the_nine_distinct_columns() {
        let labels: Vec<String> = printed().pairs().iter().map(ResultPair::label).collect();
        assert_eq!(
            labels,
            [
                "L=D3 S=1", "L=D2 S=1", "L=D1 S=1", "L=1 S=0", "L=1 S=1", "L=0 S=1", "L=1 S=D1",
                "L=1 S=D2", "L=1 S=D3"
            ]
        );
    }

    #[test]
    fn odds_round_down_as_printed() {
        let field = printed();
        // 1.4:1 → 1:1, 1.5 → 3:2, 2.9:1 → 2:1, 3:1 and above → 3:1.
        assert_eq!(field.odds_index(14, 10), 0);
        assert_eq!(field.odds_index(15, 10), 1);
        assert_eq!(field.odds_index(29, 10), 2);
        assert_eq!(field.odds_index(30, 10), 3);
        assert_eq!(field.odds_index(99, 1), 3);
    }

    #[test]
    fn odds_rounding_options() {
        let mut rules = FieldRules::printed();
        rules.odds_rounding = OddsRounding::Nearest;
        let nearest = FieldCombat::new(rules.clone()).unwrap();
        assert_eq!(nearest.odds_index(12, 10), 0); // 1.2 is nearer 1:1
        assert_eq!(nearest.odds_index(13, 10), 1); // 1.3 nearer 3:2 (midpoint 1.25)
        assert_eq!(nearest.odds_index(25, 10), 3); // 2.5 is the midpoint of 2 and 3: up
        rules.odds_rounding = OddsRounding::Up;
        let up = FieldCombat::new(rules).unwrap();
        assert_eq!(up.odds_index(10, 10), 0);
        assert_eq!(up.odds_index(11, 10), 1);
        assert_eq!(up.odds_index(21, 10), 3);
        assert_eq!(up.odds_index(50, 10), 3);
    }

    #[test]
    fn clc_bands_as_printed() {
        let chart = CombatLossChart::printed();
        assert_eq!(
            chart.band_labels(),
            ["1-3", "4-5", "6-10", "11-15", "16-20", "21+"]
        );
        let bands: Vec<usize> = [1, 3, 4, 5, 6, 10, 11, 15, 16, 20, 21, 400]
            .iter()
            .map(|&sp| chart.band_of(sp))
            .collect();
        assert_eq!(bands, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    }

    #[test]
    fn tactic_cells_parse_as_printed() {
        let m = TacticalMatrix::printed();
        assert_eq!(m.cells[0][6].to_string(), "(-2)");
        assert_eq!(m.cells[4][4].to_string(), "NC");
        assert_eq!(m.cells[6][0].to_string(), "(+2)");
        assert!(m.cells[3][6].no_combat && m.cells[3][6].ends_battle);
        assert_eq!(m.cells[2][0].drm, 2);
    }

    /// One round, fixed tactics, hand-computed: A 10 SP morale 2 charges, B 5 SP morale 2
    /// holds in square. Odds 2:1 (shift 2); DRM = charge vs square +2; no leaders.
    /// Roll r = clamp(2d6+2, 2, 12), column = clamp(r+1, 1, 11): 2d6=2 → col 5 (L=1 S=1),
    /// 3 → 6 (1/1), 4 → 7 (1/1), 5 → 8 (0/1), 6 → 9 (1/D1), 7 → 10 (1/D2), 8+ → 11 (1/D3).
    /// B has 5 SP: CLC band 4–5. B's morale 2 breaks on D2 or D3.
    #[test]
    fn one_round_battle_by_hand() {
        let mut rules = FieldRules::printed();
        rules.round_limit = 1;
        let field = FieldCombat::new(rules).unwrap();
        let force = |sp, tactic| Force {
            name: String::new(),
            sp,
            morale: 2,
            leader: 0,
            drm: 0,
            tactics: TacticMix::fixed(tactic).into(),
        };
        let battle = FieldBattle {
            a: force(10, 0),
            b: force(5, 4),
            terrain_drm: 0,
        }
        .prepare()
        .unwrap();
        let d = field.battle_distribution(&battle, 1000).unwrap();
        // P(2d6 ≥ 7) = 21/36 → B's morale hits 0: A wins. Otherwise the round limit.
        assert!((d.result[BattleResult::AWins.index()] - 21.0 / 36.0).abs() < 1e-12);
        assert!((d.result[BattleResult::RoundLimit.index()] - 15.0 / 36.0).abs() < 1e-12);
        // B's SP lost: band 4–5 → row 1: 1, D1: 1, D2/D3: 2.
        // 2d6=2,3,4 (6/36) row 1 → 1; 5 (4/36) → 1; 6 (5/36) D1 → 1; 7+ (21/36) → 2.
        assert!((d.sp_lost[1][1] - 15.0 / 36.0).abs() < 1e-12);
        assert!((d.sp_lost[1][2] - 21.0 / 36.0).abs() < 1e-12);
        // A's SP lost (same band): all columns but 8 give L=1 → 1 SP; column 8 (2d6=5) none.
        assert!((d.sp_lost[0][0] - 4.0 / 36.0).abs() < 1e-12);
        assert!((d.sp_lost[0][1] - 32.0 / 36.0).abs() < 1e-12);
    }

    #[test]
    fn source_caps_hold_each_contribution_before_the_net_clamp() {
        // A: leader 3, morale 3, own DRM +2; B: leader 0, morale 1; terrain +2 for A.
        let force = |sp, morale, leader, drm| Force {
            name: String::new(),
            sp,
            morale,
            leader,
            drm,
            tactics: TacticMix::fixed(0).into(),
        };
        let battle = FieldBattle {
            a: force(8, 3, 3, 2),
            b: force(8, 1, 0, 0),
            terrain_drm: 2,
        }
        .prepare()
        .unwrap();
        let base = |caps: DrmCaps| {
            let mut rules = FieldRules::printed();
            rules.caps = caps;
            let field = FieldCombat::new(rules).unwrap();
            field.round_setup(&battle, &battle.start).base_drm
        };
        // Uncapped: 3 + 2 + 2 + 2 = 9 (the net clamp to ±4 comes later).
        assert_eq!(base(DrmCaps::default()), 9);
        let one = |f: fn(&mut DrmCaps) -> &mut Option<i32>| {
            let mut caps = DrmCaps::default();
            *f(&mut caps) = Some(1);
            base(caps)
        };
        assert_eq!(one(|c| &mut c.leader), 1 + 2 + 2 + 2);
        assert_eq!(one(|c| &mut c.morale), 3 + 1 + 2 + 2);
        assert_eq!(one(|c| &mut c.drm), 3 + 2 + 1 + 2);
        assert_eq!(one(|c| &mut c.terrain), 3 + 2 + 2 + 1);
        // The tactic cap holds every cell of the matrix; the printed rules are kept.
        let mut rules = FieldRules::printed();
        rules.caps.tactic = Some(1);
        let field = FieldCombat::new(rules).unwrap();
        let setup = field.round_setup(&battle, &battle.start);
        // Skirmish (L) vs Charge (S) is +2 printed.
        assert_eq!(field.tactic_cell(&setup, [2, 0]).drm, 1);
        assert_eq!(field.rules().tactics.cells[2][0].drm, 2);
        assert_eq!(
            field.tactic_cell(&setup, [4, 0]).drm,
            -1,
            "square v charge, −2"
        );
        let mut rules = FieldRules::printed();
        rules.caps.leader = Some(13);
        assert_eq!(
            FieldCombat::new(rules).unwrap_err().field,
            "rules.caps.leader"
        );
    }

    #[test]
    fn withdraw_ends_the_battle_and_is_attributed() {
        let field = printed();
        let a = Force {
            name: String::new(),
            sp: 8,
            morale: 2,
            leader: 0,
            drm: 0,
            tactics: TacticMix::fixed(WITHDRAW).into(),
        };
        let b = Force {
            tactics: TacticMix::fixed(3).into(),
            ..a.clone()
        }; // bombard vs withdraw: (NC)
        let battle = FieldBattle {
            a,
            b,
            terrain_drm: 0,
        }
        .prepare()
        .unwrap();
        let d = field.battle_distribution(&battle, 1000).unwrap();
        assert_eq!(d.result[BattleResult::AWithdraws.index()], 1.0);
        assert_eq!(d.rounds[1], 1.0);
        assert_eq!(d.sp_lost[0][0], 1.0);
        let mut dice = DiceStream::for_block(1, 0);
        let outcome = field.fight(&battle, &mut dice);
        assert_eq!(outcome.result, BattleResult::AWithdraws);
        assert_eq!(outcome.sp_lost, [0, 0]);
    }

    #[test]
    fn mix_picks_by_weight() {
        let mix = TacticMix::new([3, 1, 0, 0, 0, 0, 0]).unwrap();
        let picks: Vec<usize> = (0..4u64)
            .map(|k| mix.pick(&mut DiceWord(k << 62)))
            .collect();
        assert_eq!(picks, [0, 0, 0, 1]);
        assert!(TacticMix::new([0; 7]).is_err());
        assert!(TacticMix::new([MAX_MIX_WEIGHT, 1, 0, 0, 0, 0, 0]).is_err());
    }

    /// Every printed cell (odds row × modified roll 2…12) as the compiled lookup reads it,
    /// checked against the kernel's own face table at every net DRM on the way.
    fn compiled_cells(field: &FieldCombat) -> Vec<Vec<ResultPair>> {
        let rules = field.rules();
        for odds in 0..rules.odds_columns.len() {
            for drm in -rules.drm_cap..=rules.drm_cap {
                for face in 0..TWO_D6_FACES {
                    let roll = (face / 6 + face % 6 + 2) as i32;
                    let modified = (roll + drm).clamp(rules.roll_min, rules.roll_max);
                    assert_eq!(
                        field.resolve_face(odds, drm, face),
                        field.pair_at(odds, modified),
                        "odds {odds} DRM {drm} face {face}"
                    );
                }
            }
        }
        (0..rules.odds_columns.len())
            .map(|odds| {
                (CRT_ROLLS.0..=CRT_ROLLS.1)
                    .map(|roll| {
                        let pair = field.pairs()[field.pair_at(odds, roll)];
                        assert_eq!(pair, rules.cell(odds, roll), "odds {odds} roll {roll}");
                        pair
                    })
                    .collect()
            })
            .collect()
    }

    /// The (odds label, roll, printed, now) cells where two CRTs differ.
    fn differences(
        before: &FieldCombat,
        after: &FieldCombat,
    ) -> Vec<(String, i32, String, String)> {
        let (b, a) = (compiled_cells(before), compiled_cells(after));
        let labels = after.rules().odds_labels();
        let mut diff = Vec::new();
        for odds in 0..labels.len() {
            for (i, roll) in (CRT_ROLLS.0..=CRT_ROLLS.1).enumerate() {
                if b[odds][i] != a[odds][i] {
                    diff.push((
                        labels[odds].clone(),
                        roll,
                        b[odds][i].to_string(),
                        a[odds][i].to_string(),
                    ));
                }
            }
        }
        diff
    }

    #[test]
    fn printed_cells_follow_the_column_rule() {
        let field = printed();
        let cells = compiled_cells(&field);
        // 1:1 roll 2 → column 1, 3:2 roll 8 → column 8, 3:1 roll 9+ → column 11.
        assert_eq!(cells[0][0].to_string(), "D3/1");
        assert_eq!(cells[1][6].to_string(), "0/1");
        assert!(cells[3][7..].iter().all(|p| p.to_string() == "1/D3"));
    }

    #[test]
    fn a_cell_edit_changes_exactly_that_cell() {
        let mut rules = FieldRules::printed();
        rules.edit_crt_cell(3, 2, 8, ResultPair::parse("1/1").unwrap());
        let edited = FieldCombat::new(rules).unwrap();
        assert_eq!(
            differences(&printed(), &edited),
            [("3:2".to_string(), 8, "0/1".to_string(), "1/1".to_string())]
        );
        // Editing the same cell again replaces the edit (6:4 is 3:2).
        let mut rules = edited.rules().clone();
        rules.edit_crt_cell(6, 4, 8, ResultPair::parse("D1/0").unwrap());
        assert_eq!(rules.crt_cells.len(), 1);
        let twice = FieldCombat::new(rules).unwrap();
        assert_eq!(differences(&printed(), &twice)[0].3, "D1/0");
        assert_eq!(differences(&printed(), &twice).len(), 1);
    }

    #[test]
    fn a_column_edit_changes_four_cells() {
        let mut rules = FieldRules::printed();
        rules.crt.columns[7] = ResultPair::parse("1/1").unwrap();
        let edited = FieldCombat::new(rules).unwrap();
        let changed: Vec<(String, i32)> = differences(&printed(), &edited)
            .into_iter()
            .map(|(odds, roll, before, after)| {
                assert_eq!((before.as_str(), after.as_str()), ("0/1", "1/1"));
                (odds, roll)
            })
            .collect();
        assert_eq!(
            changed,
            [
                ("1:1".to_string(), 9),
                ("3:2".to_string(), 8),
                ("2:1".to_string(), 7),
                ("3:1".to_string(), 6)
            ]
        );
    }

    /// Edits may bring every one of the 25 result pairs; outcomes past the old 16 lanes
    /// of the single-roll kernel are counted where they fall.
    #[test]
    fn every_pair_can_be_an_outcome() {
        let mut rules = FieldRules::printed();
        let mut cells = (0..4usize).flat_map(|odds| (2..=12).map(move |roll| (odds, roll)));
        for l in CrtResult::ALL {
            for s in CrtResult::ALL {
                let (odds, roll) = cells.next().unwrap();
                let column = rules.odds_columns[odds];
                rules.edit_crt_cell(column.larger, column.smaller, roll, ResultPair::new(l, s));
            }
        }
        let field = FieldCombat::new(rules).unwrap();
        assert_eq!(field.pairs().len(), MAX_PAIRS);
        let n = 720_000;
        for odds in 0..4 {
            let counts =
                simulate_resolutions(&field, odds, 0, 5, n, &crate::sim::RunControl::default())
                    .unwrap();
            let exact = field.resolution_distribution(odds, 0);
            assert_eq!(counts.iter().sum::<u64>(), n);
            for (i, &count) in counts.iter().enumerate() {
                let p = exact.probability(i);
                let se = (p * (1.0 - p) / n as f64).sqrt();
                let estimate = count as f64 / n as f64;
                assert!(
                    (p == 0.0 && count == 0) || (estimate - p).abs() < 5.0 * se,
                    "odds {odds} pair {i}: {estimate} vs {p}"
                );
            }
        }
    }

    #[test]
    fn invalid_rules_are_named() {
        let mut rules = FieldRules::printed();
        rules.edit_crt_cell(5, 2, 8, ResultPair::parse("1/1").unwrap());
        let e = FieldCombat::new(rules).unwrap_err();
        assert_eq!(e.field, "rules.crt_cells.\"5:2\".\"8\"");
        assert!(e.message.contains("1:1, 3:2, 2:1, 3:1"), "{}", e.message);
        let mut rules = FieldRules::printed();
        rules.edit_crt_cell(3, 2, 13, ResultPair::parse("1/1").unwrap());
        assert!(FieldCombat::new(rules)
            .unwrap_err()
            .message
            .contains("2 to 12"));
        let mut rules = FieldRules::printed();
        rules.drm_cap = 13;
        assert_eq!(FieldCombat::new(rules).unwrap_err().field, "rules.drm_cap");
        let mut rules = FieldRules::printed();
        rules.odds_columns[1].roll_two_column = 12;
        assert_eq!(
            FieldCombat::new(rules).unwrap_err().field,
            "rules.odds.\"3:2\""
        );
        let mut rules = FieldRules::printed();
        rules.tactics.cells[0][1].drm = 7;
        assert_eq!(
            FieldCombat::new(rules).unwrap_err().field,
            "rules.tactics.charge.envelop"
        );
    }
}
