//! CSV cells a spreadsheet will not run: the one rule every CSV battlelab writes follows.
//!
//! Why this module exists: a designer's text ends up in CSV cells — variant names,
//! profile, side and state names, labels — and a spreadsheet that opens the file treats a
//! cell starting with `=`, `+`, `-` or `@` as a formula (`=cmd|' /C calc'!A0` runs a
//! program; a leading tab or carriage return hides the same from a careless eye). So
//! every CSV writer passes its text cells through [`spreadsheet_safe`], the OWASP rule: such
//! a cell gets a leading `'`, which spreadsheets read as "this is text" and hide. A cell
//! that is a plain number (`-0.5`, `+1`, `-1/36`, `-inf`) is left alone: it cannot call
//! anything, and numbers must stay numbers. Parquet files keep the raw text (typed data,
//! not a spreadsheet), as do JSON and Markdown. `docs/csv-safety.md` says this for users.

use std::borrow::Cow;

use polars::prelude::*;

/// The first characters that make a spreadsheet read a cell as a formula (OWASP's list).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// `text` as a CSV cell that no spreadsheet runs: with a leading `'` when it starts like
/// a formula and is not a plain number; unchanged otherwise. (Text that already starts
/// with `'` before such a start gets one more, so that [`restored`] gives back exactly
/// what was written.)
pub fn spreadsheet_safe(text: &str) -> Cow<'_, str> {
    if formula_like(text.trim_start_matches('\'')) {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The text a [`spreadsheet_safe`] cell was made from: for battlelab reading its own CSVs
/// back (`compare` of two report folders).
pub fn restored(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if formula_like(rest.trim_start_matches('\'')) => rest,
        _ => cell,
    }
}

/// Whether a spreadsheet would read `text` as a formula: it starts like one and is not
/// a plain number.
fn formula_like(text: &str) -> bool {
    text.starts_with(FORMULA_STARTS) && !is_plain_number(text)
}

/// A signed decimal number (`-0.5`, `+3`, `-1.5e-3`), fraction (`-1/36`), or infinity
/// or NaN as Rust prints them: what battlelab writes for numbers, never a formula.
fn is_plain_number(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(unsigned, "inf" | "NaN") {
        return true;
    }
    let (numerator, denominator) = match unsigned.split_once('/') {
        Some((n, d)) => (n, Some(d)),
        None => (unsigned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let decimal = |s: &str| {
        let (mantissa, exponent) = match s.split_once(['e', 'E']) {
            Some((m, e)) => (m, Some(e)),
            None => (s, None),
        };
        let mantissa_ok = match mantissa.split_once('.') {
            Some((whole, fraction)) => {
                (digits(whole) || digits(fraction))
                    && (whole.is_empty() || digits(whole))
                    && (fraction.is_empty() || digits(fraction))
            }
            None => digits(mantissa),
        };
        let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
        mantissa_ok && exponent_ok
    };
    match denominator {
        Some(d) => digits(numerator) && digits(d),
        None => decimal(numerator),
    }
}

/// A CSV field: [`spreadsheet_safe`], then quoted when it holds a comma, a quote or a line
/// break (RFC 4180).
pub fn field(text: &str) -> String {
    let text = spreadsheet_safe(text);
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.into_owned()
    }
}

/// `df` with every text column's cells made [`spreadsheet_safe`] (numeric columns are
/// numbers already): what a frame's CSV is written from.
pub fn spreadsheet_safe_frame(df: &DataFrame) -> PolarsResult<DataFrame> {
    let columns = df
        .columns()
        .iter()
        .map(|column| -> PolarsResult<Column> {
            if column.dtype() != &DataType::String {
                return Ok(column.clone());
            }
            let safe: Vec<Option<String>> = column
                .str()?
                .iter()
                .map(|cell| cell.map(|text| spreadsheet_safe(text).into_owned()))
                .collect();
            Ok(Column::new(column.name().clone(), safe))
        })
        .collect::<PolarsResult<Vec<_>>>()?;
    DataFrame::new_infer_height(columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised_and_numbers_are_not() {
        for (cell, safe) in [
            ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
            ("+1+cmd", "'+1+cmd"),
            ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
            ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("-", "'-"),
            ("+", "'+"),
            ("-e5", "'-e5"),
            ("-1/", "'-1/"),
            ("-.", "'-."),
            ("plain", "plain"),
            ("a=b", "a=b"),
            ("'=already", "''=already"),
            ("'plain", "'plain"),
            ("", ""),
            ("-0.5", "-0.5"),
            ("+1", "+1"),
            ("-3", "-3"),
            ("-1/36", "-1/36"),
            ("-1.5e-3", "-1.5e-3"),
            ("-.5", "-.5"),
            ("-inf", "-inf"),
            ("1:2", "1:2"),
        ] {
            assert_eq!(spreadsheet_safe(cell), safe, "{cell:?}");
        }
    }

    #[test]
    fn a_safe_cell_reads_back_as_the_text_it_was_made_from() {
        for text in [
            "=cmd|' /C calc'!A0",
            "'=cmd",
            "''=cmd",
            "'plain",
            "plain",
            "'",
            "-0.5",
            "'-0.5",
            "-",
            "\t@",
            "",
        ] {
            assert_eq!(restored(&spreadsheet_safe(text)), text, "{text:?}");
        }
    }

    #[test]
    fn fields_are_neutralised_then_quoted() {
        assert_eq!(field("=1,2"), "\"'=1,2\"");
        assert_eq!(field("a\"b"), "\"a\"\"b\"");
        assert_eq!(field("\r=1"), "\"'\r=1\"");
        assert_eq!(field("-0.25"), "-0.25");
    }

    #[test]
    fn only_text_columns_change() {
        let df = DataFrame::new_infer_height(vec![
            Column::new("variant".into(), ["=cmd", "ok"]),
            Column::new("label".into(), [Some("@x"), None]),
            Column::new("delta".into(), [-0.5f64, 1.0]),
            Column::new("drm".into(), [-2i64, 3]),
        ])
        .unwrap();
        let safe = spreadsheet_safe_frame(&df).unwrap();
        let text = |name: &str| -> Vec<Option<String>> {
            safe.column(name)
                .unwrap()
                .str()
                .unwrap()
                .iter()
                .map(|v| v.map(str::to_string))
                .collect()
        };
        assert_eq!(text("variant"), [Some("'=cmd".into()), Some("ok".into())]);
        assert_eq!(text("label"), [Some("'@x".into()), None]);
        assert_eq!(safe.column("delta").unwrap(), df.column("delta").unwrap());
        assert_eq!(safe.column("drm").unwrap(), df.column("drm").unwrap());
    }
}
