//! Numbers a report's rulebook tables derive from a plan's results rather than read from
//! one run as printed: a best choice over several columns, a survival curve's mean, the
//! tail of a distribution, a difference of two means.
//!
//! Why this module exists: the report page's "try it" panel recomputes the rulebook
//! tables in the browser, and every cell it reprints must be the text `battlelab run`
//! prints for the edited file. A derived cell is therefore computed once, here in the
//! core, by each system's [`super::System::derived`]: the report crate prints the values
//! into `tables.md`, the WebAssembly module hands the same values to the page
//! (`derived` in the run response, `docs/wasm-api.md`), and the page only formats them.

/// One derived number, named by a key the report's table and the page's cell share.
#[derive(Clone, Debug, PartialEq)]
pub struct Derived {
    /// What the number is, unique in the plan: `"<table>/<where>/<what>"`, e.g.
    /// `"best_request/base/-1/extra 2"`.
    pub key: String,
    /// The number (`f64::INFINITY` where the table prints ∞).
    pub value: f64,
    /// Whether the table prints it in bold: the best of its row.
    pub best: bool,
    /// The text the table prints, where the system prints it itself (three percentages
    /// in one cell, a verdict, "–" for a number that is not there); `None`: the number,
    /// printed in the cell's format.
    pub text: Option<String>,
}

impl Derived {
    pub fn new(key: impl Into<String>, value: f64) -> Self {
        Self {
            key: key.into(),
            value,
            best: false,
            text: None,
        }
    }

    /// The value as JSON: a number, or null where it is not finite (JSON has no ∞; the
    /// response says `"infinite": true` beside it).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "key": self.key,
            "value": self.value.is_finite().then_some(self.value),
            "infinite": self.value == f64::INFINITY,
            "best": self.best,
            "text": self.text,
        })
    }
}

/// Finds a derived value by its key.
pub fn find<'a>(derived: &'a [Derived], key: &str) -> Option<&'a Derived> {
    derived.iter().find(|d| d.key == key)
}
