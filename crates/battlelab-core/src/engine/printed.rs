//! The tables a report prints from the rules as the analysis reads them rather than from
//! a run's results: a rules file's tables as printed (a variant's edited cells marked `*`)
//! and as modified at the start of each run's battle (‡ where the modifier moved a cell),
//! its result codes — with the headings and notes `tables.md` prints around them.
//!
//! Why this module exists: the report page's "try it" panel lets a designer edit a
//! table's cells or a modifier and must then show the tables as `battlelab run` prints
//! them for the edited file. So their text is built once, here in the core, by each
//! system's [`super::System::printed`]: the report crate writes the blocks into
//! `tables.md` as they are, and the WebAssembly module hands the same tables to the page
//! (`printed` in the run response, `docs/wasm-api.md`), which only lays out their rows.

/// One printed table: its title, header and rows as `tables.md` prints them (every cell
/// text), and the key the report page finds it by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintedTable {
    /// Unique among a report's printed tables: the title, followed by ` #2`, ` #3`, … for
    /// a title printed before (two variants' rules files with the same table names).
    pub key: String,
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// The paragraph printed right under the table (a table's edges, the runs an
    /// as-modified table stands for), as one line; `None` where none is.
    pub note: Option<String>,
}

impl PrintedTable {
    /// The table as the module's response gives it to the page.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "key": self.key,
            "title": self.title,
            "header": self.header,
            "rows": self.rows,
            "note": self.note,
        })
    }
}

/// One piece of the printed section, in the order `tables.md` prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// Markdown printed as it is (headings, paragraphs).
    Text(String),
    /// A table (printed as a pipe table).
    Table(PrintedTable),
    /// The paragraph that belongs to the table before it, as Markdown printed as it is
    /// (its blank lines included): the page reprints it with the table.
    Note(String),
}

/// The printed section of a report, built in order: what `tables.md` prints and what the
/// page reprints after an edit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Printed {
    pub blocks: Vec<Block>,
}

impl Printed {
    /// Appends Markdown text.
    pub fn text(&mut self, md: impl Into<String>) {
        self.blocks.push(Block::Text(md.into()));
    }

    /// Appends a table, keyed by its title (numbered where the title is taken).
    pub fn table(&mut self, title: impl Into<String>, header: Vec<String>, rows: Vec<Vec<String>>) {
        let title = title.into();
        let before = self
            .blocks
            .iter()
            .filter(|b| matches!(b, Block::Table(t) if t.title == title))
            .count();
        let key = if before == 0 {
            title.clone()
        } else {
            format!("{title} #{}", before + 1)
        };
        self.blocks.push(Block::Table(PrintedTable {
            key,
            title,
            header,
            rows,
            note: None,
        }));
    }

    /// Appends a table printed as a Markdown pipe table (a d6 table's grid): its header
    /// and rows cut by [`crate::markdown::cells`].
    pub fn pipe_table(&mut self, title: impl Into<String>, md: &str) {
        let mut lines = md.lines().filter(|l| l.trim_start().starts_with('|'));
        let header = lines.next().map(crate::markdown::cells).unwrap_or_default();
        let rows = lines
            .filter(|l| !l.contains("---"))
            .map(crate::markdown::cells)
            .collect();
        self.table(title, header, rows);
    }

    /// Appends the paragraph under the last table (Markdown as printed, blank lines
    /// included).
    pub fn note(&mut self, md: impl Into<String>) {
        self.blocks.push(Block::Note(md.into()));
    }

    /// Every table, in order, each with the note printed under it (its lines joined by
    /// spaces, as the page shows a paragraph).
    pub fn tables(&self) -> Vec<PrintedTable> {
        let mut tables: Vec<PrintedTable> = Vec::new();
        let mut last_was_table = false;
        for block in &self.blocks {
            match block {
                Block::Table(t) => {
                    tables.push(t.clone());
                    last_was_table = true;
                    continue;
                }
                Block::Note(md) if last_was_table => {
                    if let Some(t) = tables.last_mut() {
                        let lines: Vec<&str> = md
                            .lines()
                            .map(str::trim)
                            .filter(|l| !l.is_empty())
                            .collect();
                        t.note = Some(lines.join(" "));
                    }
                }
                _ => {}
            }
            last_was_table = false;
        }
        tables
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_title_is_keyed_by_its_number_and_a_note_joins_its_table() {
        let mut p = Printed::default();
        p.text("## A\n\n");
        p.table("CRT", vec!["roll".into()], vec![vec!["1".into()]]);
        p.note("Left of the first column: AE.\n\n");
        p.table("CRT", vec!["roll".into()], vec![vec!["2".into()]]);
        p.text("### next\n\n");
        p.note("\nRuns: base\nand more.\n\n");
        p.table("Codes", vec!["code".into()], Vec::new());
        let tables = p.tables();
        let keys: Vec<&str> = tables.iter().map(|t| t.key.as_str()).collect();
        assert_eq!(keys, ["CRT", "CRT #2", "Codes"]);
        assert_eq!(
            tables[0].note.as_deref(),
            Some("Left of the first column: AE.")
        );
        // A note after text is no table's note.
        assert_eq!(tables[1].note, None);
        assert_eq!(tables[2].note, None);
    }
}
