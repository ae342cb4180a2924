//! Chances as a rulebook prints them (`[tables] format` and `decimals`): percentages
//! that add up to exactly 100 (marking a value moved away from its nearest rounding),
//! exact fractions, or counts of the faces of one d6 or of 2d6.

use crate::analysis::{TableFormat, TablesOptions};
use crate::exact::Fraction;
use crate::stats::{rounded_percentages, rounded_percentages_exact, units_text, RoundedRow};

/// The mark after a percentage that rounding moved away from its own nearest value.
pub const MOVED_MARK: &str = "†";

/// The note under a table that has a [`MOVED_MARK`].
pub const MOVED_NOTE: &str = "† rounded away from its nearest value so the row adds to 100%.";

/// One row of chances as printed, and whether a percentage in it was moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub cells: Vec<String>,
    pub moved: bool,
}

fn percent_cells(row: &RoundedRow, decimals: u32) -> Row {
    let cells = (0..row.units.len())
        .map(|i| {
            let text = row.text(i, decimals);
            if row.moved[i] {
                format!("{text}{MOVED_MARK}")
            } else {
                text
            }
        })
        .collect();
    Row {
        cells,
        moved: row.any_moved(),
    }
}

/// A row of exact chances `counts / total` in the format asked for. `in6` and `in36`
/// print the count of the faces (`"2 in 6"`); a count that is not a whole number of faces
/// (never, where the parser allowed the format) prints as a fraction instead.
pub fn exact_row(options: TablesOptions, counts: &[u64], total: u64) -> Row {
    let faces = |n: u128| {
        let cells = counts
            .iter()
            .map(|&c| {
                let scaled = u128::from(c) * n;
                if total > 0 && scaled.is_multiple_of(u128::from(total)) {
                    format!("{} in {n}", scaled / u128::from(total))
                } else {
                    Fraction::new(u128::from(c), u128::from(total.max(1))).to_string()
                }
            })
            .collect();
        Row {
            cells,
            moved: false,
        }
    };
    match options.format {
        TableFormat::Percent => percent_cells(
            &rounded_percentages_exact(counts, options.decimals),
            options.decimals,
        ),
        TableFormat::Fraction => Row {
            cells: counts
                .iter()
                .map(|&c| Fraction::new(u128::from(c), u128::from(total.max(1))).to_string())
                .collect(),
            moved: false,
        },
        TableFormat::In6 => faces(6),
        TableFormat::In36 => faces(36),
    }
}

/// A row of chances known only as floating-point probabilities (simulated, or enumerated
/// in `f64`): always percentages, with `options.decimals` digits.
pub fn percent_row(options: TablesOptions, probabilities: &[f64]) -> Row {
    percent_cells(
        &rounded_percentages(probabilities, options.decimals),
        options.decimals,
    )
}

/// "100.0" at the options' decimals.
pub fn hundred(options: TablesOptions) -> String {
    units_text(100 * 10u64.pow(options.decimals), options.decimals)
}

/// What the cells of an exact table are, for its note.
pub fn describe(options: TablesOptions) -> String {
    match options.format {
        TableFormat::Percent => format!(
            "percentages, each row adding up to exactly {}%",
            hundred(options)
        ),
        TableFormat::Fraction => "exact fractions".to_string(),
        TableFormat::In6 => "chances in 6 (faces of one d6)".to_string(),
        TableFormat::In36 => "chances in 36 (faces of 2d6)".to_string(),
    }
}

/// The header of an outcome's column: `"<outcome> %"` for percentages.
pub fn column_header(options: TablesOptions, outcome: &str) -> String {
    match options.format {
        TableFormat::Percent => format!("{outcome} %"),
        _ => outcome.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(format: TableFormat, decimals: u32) -> TablesOptions {
        TablesOptions { format, decimals }
    }

    #[test]
    fn every_format_of_one_row() {
        // 4, 1, 1 in 6.
        let counts = [4, 1, 1];
        let row = exact_row(options(TableFormat::Percent, 1), &counts, 6);
        assert_eq!(row.cells, ["66.6†", "16.7", "16.7"]);
        assert!(row.moved);
        let row = exact_row(options(TableFormat::Percent, 0), &counts, 6);
        assert_eq!(row.cells, ["66†", "17", "17"]);
        let row = exact_row(options(TableFormat::Fraction, 1), &counts, 6);
        assert_eq!(row.cells, ["2/3", "1/6", "1/6"]);
        let row = exact_row(options(TableFormat::In6, 1), &counts, 6);
        assert_eq!(row.cells, ["4 in 6", "1 in 6", "1 in 6"]);
        let row = exact_row(options(TableFormat::In36, 1), &counts, 6);
        assert_eq!(row.cells, ["24 in 36", "6 in 36", "6 in 36"]);
        // Not a whole number of faces: a fraction.
        let row = exact_row(options(TableFormat::In6, 1), &[1, 6], 7);
        assert_eq!(row.cells, ["1/7", "6/7"]);
        assert_eq!(hundred(options(TableFormat::Percent, 2)), "100.00");
        assert_eq!(hundred(options(TableFormat::Percent, 0)), "100");
    }
}
