//! Reading back the pipe tables the tool prints (`tables.md`, `--format md`): the report
//! page lays them out as HTML, and the WebAssembly module splits a recomputed answer into
//! the sections a page rewrites. One reader, so both cut a row into the same cells.

/// The cells of a pipe-table row: split on `|` not escaped as `\|`, outer pipes dropped.
pub fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner
        .strip_suffix('|')
        .filter(|s| !s.ends_with('\\'))
        .unwrap_or(inner);
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cell).trim().to_string()),
            c => cell.push(c),
        }
    }
    out.push(cell.trim().to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::cells;

    #[test]
    fn a_row_is_cut_at_its_unescaped_pipes() {
        assert_eq!(cells("| a | b |"), ["a", "b"]);
        assert_eq!(cells("| 1 \\| 2 | c |"), ["1 | 2", "c"]);
        assert_eq!(cells("a | b"), ["a", "b"]);
        // A last cell ending in an escaped pipe keeps it.
        assert_eq!(cells("| x | y \\|"), ["x", "y |"]);
    }
}
