//! Single-d6 lookup tables of the strategic game (docs/systems/tables.md): attrition,
//! forced march, naval combat, blockade, pursuit, transport and storm.
//!
//! Why this module exists: these tables share one shape — one d6 plus a DRM, clamped to
//! the printed rows, read in one column — so one validated structure ([`D6Table`]) and one
//! compiled lookup ([`CompiledD6Table`]) serve them all, with the same exact enumeration
//! and the same branch-free kernel. Outcome labels are the printed codes (`2*`, `LR`, `F*`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dice::DiceStream;
use crate::exact::ExactDistribution;
use crate::rules::RulesError;

/// A d6 table as printed: rows are modified rolls `roll_min..=roll_max`, and each column
/// gives one outcome label per row.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct D6Table {
    pub name: String,
    pub roll_min: i32,
    pub roll_max: i32,
    pub column_labels: Vec<String>,
    /// `cells[column][roll − roll_min]`.
    pub cells: Vec<Vec<String>>,
}

fn table(name: &str, roll_min: i32, columns: &[&str], rows: &[&[&str]]) -> D6Table {
    let roll_max = roll_min + rows.len() as i32 - 1;
    D6Table {
        name: name.to_string(),
        roll_min,
        roll_max,
        column_labels: columns.iter().map(|c| c.to_string()).collect(),
        cells: (0..columns.len())
            .map(|c| rows.iter().map(|row| row[c].to_string()).collect())
            .collect(),
    }
}

impl D6Table {
    /// B4: SP eliminated (`*` = one of them cavalry), by total SP in the hex.
    pub fn attrition() -> Self {
        table(
            "attrition",
            1,
            &["3-5", "6-10", "11-15", "16-20", "21+"],
            &[
                &["0", "0", "0", "1", "1"],
                &["0", "0", "1", "1", "2*"],
                &["0", "1", "1", "2*", "3*"],
                &["0", "1", "2*", "2*", "3*"],
                &["0", "2*", "2*", "3*", "4*"],
                &["1", "2*", "3*", "3*", "5*"],
            ],
        )
    }

    /// B5: extra MP gained (`*` = one SP eliminated), by extra MP asked for.
    pub fn march() -> Self {
        table(
            "march",
            1,
            &["1", "2", "3"],
            &[
                &["1", "2", "3"],
                &["1", "2", "3"],
                &["1", "2", "2*"],
                &["1", "1*", "1*"],
                &["1", "0", "0"],
                &["0", "0", "0"],
            ],
        )
    }

    /// B6: naval combat, modified d6 −1…8, by odds (L NSP : S NSP).
    pub fn naval() -> Self {
        let rows: [[&str; 3]; 10] = [
            ["2LS", "2LC", "LS"],
            ["LC", "LS", "LR"],
            ["LS", "LR", "LR"],
            ["LR", "LR", "SR"],
            ["LR", "SR", "SR"],
            ["SR", "SR", "SS"],
            ["SR", "SS", "SS"],
            ["SS", "SS", "SC"],
            ["SC", "SC", "SC"],
            ["2SS", "2SC", "2SC"],
        ];
        let rows: Vec<&[&str]> = rows.iter().map(|r| &r[..]).collect();
        table("naval", -1, &["1-1", "3-2", "2-1"], &rows)
    }

    /// B7: one-column d6 tables.
    pub fn blockade() -> Self {
        Self::single("blockade", ["F*", "F", "F", "F", "F", "E"])
    }
    pub fn pursuit() -> Self {
        Self::single("pursuit", ["F", "F", "F", "F", "I", "I"])
    }
    pub fn transport() -> Self {
        Self::single("transport", ["C", "C", "S", "S", "E", "E"])
    }
    pub fn storm() -> Self {
        Self::single("storm", ["S", "D", "D", "E", "E", "E"])
    }

    fn single(name: &str, rows: [&str; 6]) -> Self {
        let rows: Vec<[&str; 1]> = rows.iter().map(|r| [*r]).collect();
        let rows: Vec<&[&str]> = rows.iter().map(|r| &r[..]).collect();
        table(name, 1, &["d6"], &rows)
    }

    /// Every printed d6 table by name.
    pub fn printed(name: &str) -> Option<Self> {
        Some(match name {
            "attrition" => Self::attrition(),
            "march" => Self::march(),
            "naval" => Self::naval(),
            "blockade" => Self::blockade(),
            "pursuit" => Self::pursuit(),
            "transport" => Self::transport(),
            "storm" => Self::storm(),
            _ => return None,
        })
    }

    pub const NAMES: [&'static str; 7] = [
        "attrition",
        "march",
        "naval",
        "blockade",
        "pursuit",
        "transport",
        "storm",
    ];

    /// The table as a Markdown grid: a row per modified roll, a column per printed column.
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "| roll | {} |\n|---|{}\n",
            self.column_labels.join(" | "),
            "---|".repeat(self.column_labels.len())
        );
        for roll in self.roll_min..=self.roll_max {
            let cells: Vec<&str> = self
                .cells
                .iter()
                .map(|c| c[(roll - self.roll_min) as usize].as_str())
                .collect();
            md.push_str(&format!("| {roll} | {} |\n", cells.join(" | ")));
        }
        md
    }

    pub fn column_index(&self, label: &str) -> Option<usize> {
        self.column_labels.iter().position(|c| c == label)
    }

    fn validate(&self) -> Result<(), RulesError> {
        let rows = (self.roll_max - self.roll_min + 1).max(0) as usize;
        if rows == 0
            || self.column_labels.is_empty()
            || self.cells.len() != self.column_labels.len()
        {
            return Err(RulesError::new(
                &self.name,
                "a table needs at least one row and one column",
            ));
        }
        for (c, column) in self.cells.iter().enumerate() {
            if column.len() != rows {
                return Err(RulesError::new(
                    format!("{}.\"{}\"", self.name, self.column_labels[c]),
                    format!(
                        "needs {rows} cells (rolls {} to {}), got {}",
                        self.roll_min,
                        self.roll_max,
                        column.len()
                    ),
                ));
            }
            if let Some(empty) = column.iter().position(|cell| cell.trim().is_empty()) {
                return Err(RulesError::new(
                    format!("{}.\"{}\"", self.name, self.column_labels[c]),
                    format!(
                        "the cell for roll {} is empty",
                        self.roll_min + empty as i32
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Largest |DRM| worth distinguishing: beyond it every roll is clamped the same way.
fn drm_span(table: &D6Table) -> i32 {
    (table.roll_max - table.roll_min).max(0) + 6
}

/// A d6 table validated and compiled: `faces[(column · drms + drm + span) · 6 + die − 1]`
/// is the outcome index.
#[derive(Clone, Debug)]
pub struct CompiledD6Table {
    table: D6Table,
    outcomes: Vec<String>,
    faces: Vec<u8>,
    span: i32,
}

impl CompiledD6Table {
    pub fn new(table: D6Table) -> Result<Self, RulesError> {
        table.validate()?;
        // Outcomes in the order of the lowest roll that gives them (then first seen), so
        // that a column reads from the worst roll to the best.
        let mut first_row: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        let mut seen = 0;
        for column in &table.cells {
            for (row, cell) in column.iter().enumerate() {
                first_row.entry(cell.as_str()).or_insert_with(|| {
                    seen += 1;
                    (row, seen)
                });
                let entry = first_row.get_mut(cell.as_str()).expect("just inserted");
                entry.0 = entry.0.min(row);
            }
        }
        let mut outcomes: Vec<(&str, (usize, usize))> = first_row.into_iter().collect();
        outcomes.sort_by_key(|(_, key)| *key);
        let outcomes: Vec<String> = outcomes
            .into_iter()
            .map(|(label, _)| label.to_string())
            .collect();
        let span = drm_span(&table);
        let mut faces = Vec::with_capacity(table.cells.len() * (2 * span as usize + 1) * 6);
        for column in &table.cells {
            for drm in -span..=span {
                for die in 1..=6 {
                    let row = (die + drm).clamp(table.roll_min, table.roll_max) - table.roll_min;
                    let label = &column[row as usize];
                    faces.push(
                        outcomes
                            .iter()
                            .position(|o| o == label)
                            .expect("every cell is an outcome") as u8,
                    );
                }
            }
        }
        Ok(Self {
            table,
            outcomes,
            faces,
            span,
        })
    }

    pub fn table(&self) -> &D6Table {
        &self.table
    }

    /// Outcome labels; a roll's outcome indexes this.
    pub fn outcomes(&self) -> &[String] {
        &self.outcomes
    }

    /// The six outcome indices (die 1…6) for one column and DRM.
    #[inline(always)]
    pub fn faces(&self, column: usize, drm: i32) -> &[u8; 6] {
        let drms = 2 * self.span as usize + 1;
        let row = column * drms + (drm.clamp(-self.span, self.span) + self.span) as usize;
        self.faces[row * 6..row * 6 + 6]
            .try_into()
            .expect("six faces")
    }

    /// The exact distribution of one roll.
    pub fn distribution(&self, column: usize, drm: i32) -> ExactDistribution {
        let faces = self.faces(column, drm);
        ExactDistribution::enumerate(6, self.outcomes.len(), |face| {
            usize::from(faces[face as usize])
        })
    }
}

/// The single-d6 kernel: `n` rolls into `histogram`.
///
/// PERF: one 64-bit word yields eight d6 (6^8 / 2^64 < 1e-13 bias, see dice.rs). The
/// counts go to four interleaved local histograms, so that a run of equal outcomes (a
/// table that mostly says `F`) does not chain every increment on the one before.
#[inline]
pub fn roll_many(faces: &[u8; 6], dice: &mut DiceStream, n: u64, histogram: &mut [u64]) {
    let mut counts = [[0u64; 32]; 4];
    for _ in 0..n / 8 {
        let mut word = dice.word();
        for die in 0..8 {
            counts[die & 3][usize::from(faces[word.take(6) as usize]) & 31] += 1;
        }
    }
    let mut word = dice.word();
    for _ in 0..n % 8 {
        counts[0][usize::from(faces[word.take(6) as usize]) & 31] += 1;
    }
    for (outcome, total) in histogram.iter_mut().enumerate().take(32) {
        *total += counts.iter().map(|c| c[outcome]).sum::<u64>();
    }
}

/// Simulates `trials` rolls of one column and DRM with the parallel driver.
pub fn simulate_rolls(
    table: &CompiledD6Table,
    column: usize,
    drm: i32,
    seed: u64,
    trials: u64,
    control: &crate::sim::RunControl,
) -> Result<Vec<u64>, crate::sim::Interrupted> {
    let faces = *table.faces(column, drm);
    let outcomes = table.outcomes().len();
    crate::sim::run_blocks(
        seed,
        trials,
        || vec![0u64; outcomes],
        |dice, n, histogram| roll_many(&faces, dice, n, histogram),
        control,
    )
}

/// Values each outcome carries, by table: what expectations are taken over. Attrition:
/// SP eliminated and cavalry losses; forced march: extra MP gained and SP eliminated;
/// naval combat: NSP lost (sunk or captured) per side and retreats.
pub fn outcome_values(table: &str, labels: &[String]) -> Vec<(&'static str, Vec<u64>)> {
    let number = |label: &String| u64::from(leading_number(label).unwrap_or(0));
    let starred = |label: &String| u64::from(label.ends_with('*'));
    let per = |f: &dyn Fn(&String) -> u64| labels.iter().map(f).collect::<Vec<u64>>();
    // `2LS` = two NSP of L sunk; `SC` = one NSP of S captured; `LR` = L retreats.
    let naval = |side: char, kinds: &[char]| {
        per(&|label: &String| {
            let count = if label.starts_with('2') { 2 } else { 1 };
            let mut code = label.trim_start_matches('2').chars();
            match (code.next(), code.next()) {
                (Some(s), Some(k)) if s == side && kinds.contains(&k) => count,
                _ => 0,
            }
        })
    };
    match table {
        "attrition" => vec![
            ("SP eliminated", per(&number)),
            ("P(cavalry loss)", per(&starred)),
        ],
        "march" => vec![
            ("extra MP gained", per(&number)),
            ("SP eliminated", per(&starred)),
        ],
        "naval" => vec![
            ("NSP lost by L", naval('L', &['S', 'C'])),
            ("NSP lost by S", naval('S', &['S', 'C'])),
            ("P(L retreats)", naval('L', &['R'])),
            ("P(S retreats)", naval('S', &['R'])),
        ],
        _ => Vec::new(),
    }
}

/// The number at the start of a label (`2*` → 2, `0` → 0), for expectations.
pub fn leading_number(label: &str) -> Option<u32> {
    let digits: String = label.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Attrition column for a hex of `sp` SP (`None` below 3 SP: the small-stack rule decides).
pub fn attrition_column(sp: u32) -> Option<usize> {
    match sp {
        0..=2 => None,
        3..=5 => Some(0),
        6..=10 => Some(1),
        11..=15 => Some(2),
        16..=20 => Some(3),
        _ => Some(4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_from_worst_roll_to_best() {
        let naval = CompiledD6Table::new(D6Table::naval()).unwrap();
        assert_eq!(
            naval.outcomes(),
            ["2LS", "LS", "2LC", "LC", "LR", "SR", "SS", "SC", "2SS", "2SC"]
        );
        let attrition = CompiledD6Table::new(D6Table::attrition()).unwrap();
        assert_eq!(attrition.outcomes(), ["0", "1", "2*", "3*", "4*", "5*"]);
    }

    #[test]
    fn rolls_clamp_to_the_printed_rows() {
        let naval = CompiledD6Table::new(D6Table::naval()).unwrap();
        let label = |column, drm, die: usize| {
            naval.outcomes()[usize::from(naval.faces(column, drm)[die - 1])].clone()
        };
        // 1-1: 6 − 5 = 1 → LS; 6 − 7 clamps to −1 → 2LS; DRM +5: 3 + 5 = 8 → 2SS.
        assert_eq!(label(0, -5, 6), "LS");
        assert_eq!(label(0, -7, 6), "2LS");
        assert_eq!(label(0, 5, 1), "SS"); // 1 + 5 = 6
        assert_eq!(label(0, 5, 3), "2SS");
        assert_eq!(label(0, 100, 1), "2SS");
        assert_eq!(leading_number("2*"), Some(2));
        assert_eq!(leading_number("LR"), None);
        assert_eq!(attrition_column(14), Some(2));
        assert_eq!(attrition_column(2), None);
    }

    #[test]
    fn empty_cells_are_refused() {
        let mut t = D6Table::storm();
        t.cells[0][2] = " ".into();
        assert_eq!(CompiledD6Table::new(t).unwrap_err().field, "storm.\"d6\"");
    }
}
