//! The analysis file's keys, documented once: what `battlelab keys` prints, what
//! `battlelab new` explains in the file it writes, and what `battlelab schema` turns into
//! a JSON Schema.
//!
//! Why this module exists: a designer should learn a file's keys from the tool, and the
//! tool should not be able to teach a key its parser refuses (or hide one it accepts).
//! Each system's table ([`KeyDoc`] lists) sits in its own module beside its serde
//! structs (`systems::<name>::KEYS`); this module holds the shared header keys, the
//! types, and the tree every consumer builds from the table. Tests hold the table
//! against the parsers both ways (every documented key is accepted, every key of every
//! shipped file is documented, an undocumented key is refused).
//!
//! Paths are dotted: `side.{a,b}.sp` (both sides), `profiles.<name>.skill` (a key the
//! designer names), `[[variant]].rules` (an array of tables), `engagement.b[].unit` (the
//! tables of an inline array; `lanes[][]` for a list of lists).

use serde_json::{json, Value};

use crate::limits;

/// What a key's value is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ty {
    /// A whole number in `min..=max`.
    Int(i64, i64),
    /// A number above `.0` (exclusive) and at most `.1`.
    Float(f64, f64),
    /// Any number (an expectation's bound).
    Number,
    Bool,
    /// Free text.
    Text,
    /// One of these words.
    OneOf(&'static [&'static str]),
    /// A whole number in `min..=max`, or one of these words.
    IntOr(i64, i64, &'static [&'static str]),
    /// The system's own name (`system = "…"`).
    System,
    /// A list of free texts.
    TextList,
    /// A list of whole numbers.
    IntList,
    /// Two numbers, low then high.
    NumberPair,
    /// A sweep: a list of whole numbers or `{ from, to, step }`.
    Sweep,
    /// A rules analysis's sweep: [`Ty::Sweep`], or a list of a choice's options (a side's
    /// policy, `"attacker.stance" = ["attack", "uniform"]`).
    SweepOrOptions,
    /// A sweep of odds: a list of `"L:S"`.
    OddsList,
    /// A list of lists of texts (a printed table's rows).
    TextRows,
    /// A count of identical units, or a list of unit tables.
    CountOrTables(i64, i64),
    /// A field tactic policy: a name, `"uniform"`, `{ uniform = [...] }` or
    /// `{ mix = { name = weight } }`.
    Tactic,
    /// Any TOML value (a grid point's coordinate).
    Any,
    /// A list of some of these words (at least one).
    ListOf(&'static [&'static str]),
    /// One of the first words, or a list of some of the second.
    OneOrList(&'static [&'static str], &'static [&'static str]),
}

impl Ty {
    /// The type as `keys` prints it.
    pub fn name(&self) -> &'static str {
        match self {
            Ty::Int(..) => "integer",
            Ty::Float(..) | Ty::Number => "number",
            Ty::Bool => "boolean",
            Ty::Text | Ty::System => "string",
            Ty::OneOf(_) => "string",
            Ty::IntOr(..) => "integer or string",
            Ty::TextList => "list of strings",
            Ty::IntList => "list of integers",
            Ty::NumberPair => "[low, high]",
            Ty::Sweep => "list or range",
            Ty::SweepOrOptions => "list, range or list of options",
            Ty::OddsList => "list of odds",
            Ty::TextRows => "list of lists",
            Ty::CountOrTables(..) => "integer or list of tables",
            Ty::Tactic => "string or table",
            Ty::Any => "any",
            Ty::ListOf(_) => "list of strings",
            Ty::OneOrList(..) => "string or list of strings",
        }
    }

    /// The allowed values or range, in words.
    pub fn allowed(&self, system: &str) -> String {
        let words = |w: &[&str]| w.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>();
        match self {
            Ty::Int(lo, hi) | Ty::CountOrTables(lo, hi) => format!("{lo} to {hi}"),
            Ty::Float(lo, hi) => format!("above {lo}, at most {hi}"),
            Ty::OneOf(w) => words(w).join(" | "),
            Ty::IntOr(lo, hi, w) => format!("{lo} to {hi} | {}", words(w).join(" | ")),
            Ty::System => format!("\"{system}\""),
            Ty::Bool => "true | false".into(),
            Ty::Sweep => "[1, 2, 3] or { from, to, step }".into(),
            Ty::SweepOrOptions => {
                "[1, 2, 3] or { from, to, step }; a policy: [\"charge\", \"uniform\"]".into()
            }
            Ty::OddsList => "[\"1:1\", \"3:2\", …]".into(),
            Ty::NumberPair => "[0.2, 0.4]".into(),
            Ty::Tactic => {
                "name | \"uniform\" | { uniform = [..] } | { mix = { name = weight } }".into()
            }
            Ty::ListOf(w) => format!("[some of {}]", w.join(", ")),
            // The first few words, so that the column stays readable; the meaning and the
            // schema give the rest.
            Ty::OneOrList(one, _) if one.len() > 5 => format!(
                "{} | … ({} names) | [a list of them]",
                words(&one[..5]).join(" | "),
                one.len()
            ),
            Ty::OneOrList(one, _) => format!("{} | [a list of them]", words(one).join(" | ")),
            _ => String::new(),
        }
    }

    /// The JSON Schema of a value of this type.
    pub fn schema(&self, system: &str) -> Value {
        match self {
            Ty::Int(lo, hi) => json!({"type": "integer", "minimum": lo, "maximum": hi}),
            Ty::Float(lo, hi) => {
                json!({"type": "number", "exclusiveMinimum": lo, "maximum": hi})
            }
            Ty::Number => json!({"type": "number"}),
            Ty::Bool => json!({"type": "boolean"}),
            Ty::Text => json!({"type": "string"}),
            Ty::OneOf(w) => json!({"type": "string", "enum": w}),
            Ty::IntOr(lo, hi, w) => json!({"anyOf": [
                {"type": "integer", "minimum": lo, "maximum": hi},
                {"type": "string", "enum": w},
            ]}),
            Ty::System => json!({"type": "string", "enum": [system]}),
            Ty::TextList => json!({"type": "array", "items": {"type": "string"}}),
            Ty::IntList => json!({"type": "array", "items": {"type": "integer"}}),
            Ty::NumberPair => json!({"type": "array", "items": {"type": "number"}}),
            Ty::Sweep => json!({"anyOf": [
                {"type": "array", "items": {"type": "integer"}},
                {"type": "object", "properties": {
                    "from": {"type": "integer"},
                    "to": {"type": "integer"},
                    "step": {"type": "integer", "minimum": 1},
                }, "required": ["from", "to"], "additionalProperties": false},
            ]}),
            Ty::SweepOrOptions => {
                let mut any = Ty::Sweep.schema(system);
                any["anyOf"]
                    .as_array_mut()
                    .expect("a sweep's schema is anyOf")
                    .push(json!({"type": "array", "items": {"type": "string"}}));
                any
            }
            Ty::OddsList => json!({"type": "array", "items": {"type": "string"}}),
            Ty::TextRows => {
                json!({"type": "array", "items": {"type": "array", "items": {"type": "string"}}})
            }
            Ty::CountOrTables(lo, hi) => json!({"anyOf": [
                {"type": "integer", "minimum": lo, "maximum": hi},
                {"type": "array", "items": {"type": "object"}},
            ]}),
            Ty::Tactic => json!({"anyOf": [
                {"type": "string"},
                {"type": "object", "properties": {
                    "uniform": {"type": "array", "items": {"type": "string"}},
                    "mix": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
                }, "additionalProperties": false},
            ]}),
            Ty::Any => json!({}),
            Ty::ListOf(w) => {
                json!({"type": "array", "items": {"type": "string", "enum": w}, "minItems": 1})
            }
            Ty::OneOrList(one, list) => json!({"anyOf": [
                {"type": "string", "enum": one},
                {"type": "array", "items": {"type": "string", "enum": list}, "minItems": 1},
            ]}),
        }
    }
}

/// The default of a key the file must give.
pub const REQUIRED: &str = "required";

/// One key of an analysis file.
#[derive(Clone, Copy, Debug)]
pub struct KeyDoc {
    /// Dotted path (see the module docs).
    pub path: &'static str,
    pub ty: Ty,
    /// The value when left out, in words; [`REQUIRED`] when it must be given.
    pub default: &'static str,
    /// One line of meaning.
    pub meaning: &'static str,
    /// A valid value, as TOML (what `new` and the tests write).
    pub example: &'static str,
    /// The `[sweep]` parameter(s) that vary it (`{a,b}.sp`), or "".
    pub sweep: &'static str,
    /// Where a `[[variant]]` overrides it, or "" (see [`KeyDoc::variant_path`]).
    pub variant: &'static str,
    /// How `value` prices it and `solve` varies it, where it is a lever (a whole-number
    /// setting a designer turns): see [`Priced`].
    pub lever: Option<Priced>,
}

/// A key a designer can price (`battlelab value`) and vary (`battlelab solve`): a lever.
///
/// The lever is the key itself — its path, type, range, default and meaning are the
/// key's — plus what only a lever needs: its name on the command line, the values `solve`
/// tries when not told, what in a plan can set it instead, and how a side applies it.
/// A path with `{a,b}` gives one lever per side, each moving that side's key alone.
#[derive(Clone, Copy, Debug)]
pub struct Priced {
    /// The lever's name, `{…}` groups expanded in step with the key's path
    /// (`{a,b}.drm` for `side.{a,b}.drm`); "" names it by the key's sweep parameter.
    pub name: &'static str,
    pub at: PricedAt,
    /// The values `solve` tries when not told; `None`: the key's whole range.
    pub search: Option<(i64, i64)>,
    /// Runs of a plan where something else sets the key (see [`SetBy`]).
    pub set_by: &'static [SetBy],
    /// A side-wide modifier that listed units may set for themselves: the list's path
    /// (`side.{a,b}.units`, expanded in step) and the key in each unit. Such units move
    /// with the side.
    pub per_unit: Option<(&'static str, &'static str)>,
}

/// Where a lever's change is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PricedAt {
    /// At the key (and at each `[[variant]]`'s override of it, and in its sweep).
    Key,
    /// Only ever a sweep (`sweep.drm`): the value is `default` when the file sets none.
    SweepOnly { default: i64 },
    /// A step along the odds columns of the rules as run (`odds+1`: 1:1 → 3:2).
    OddsColumns,
    /// A stat of every profile the side fields (melee `profiles.<name>.skill`); a profile
    /// both sides field is copied for the side first, so the other side keeps its own.
    SideProfiles,
}

/// Runs of a plan where something else sets a lever: those whose axis `axis` has a value
/// (one that starts with `prefix`). A `[sweep]` is such an axis with every run on it.
#[derive(Clone, Copy, Debug)]
pub struct SetBy {
    /// The expansion of the key's `{…}` group this applies to (`"a"`), or "" for every one.
    pub only: &'static str,
    pub axis: &'static str,
    pub prefix: &'static str,
    /// What sets the lever there, e.g. "`[sweep] odds`, which sets A's SP to ⌈B's SP × L/S⌉".
    pub what: &'static str,
    /// What to use instead.
    pub instead: &'static str,
}

impl Priced {
    /// A lever at the key, named by its sweep parameter.
    pub const fn at_key() -> Self {
        Self {
            name: "",
            at: PricedAt::Key,
            search: None,
            set_by: &[],
            per_unit: None,
        }
    }
}

/// A key: `key(path, type, default, meaning, example)`.
pub const fn key(
    path: &'static str,
    ty: Ty,
    default: &'static str,
    meaning: &'static str,
    example: &'static str,
) -> KeyDoc {
    KeyDoc {
        path,
        ty,
        default,
        meaning,
        example,
        sweep: "",
        variant: "",
        lever: None,
    }
}

impl KeyDoc {
    /// Swept as `parameter` (`{a,b}.sp` for both sides).
    pub const fn sweep(mut self, parameter: &'static str) -> Self {
        self.sweep = parameter;
        self
    }

    /// Overridden by a variant at `path`.
    pub const fn variant(mut self, path: &'static str) -> Self {
        self.variant = path;
        self
    }

    /// Overridden by a variant at `[[variant]].` + its own path.
    pub const fn in_variant(mut self) -> Self {
        self.variant = "+";
        self
    }

    /// Where a variant overrides it, if it can.
    pub fn variant_path(&self) -> Option<String> {
        match self.variant {
            "" => None,
            "+" => Some(format!("[[variant]].{}", self.path)),
            v => Some(v.to_string()),
        }
    }

    /// The sweep parameters, each spelled out.
    pub fn sweep_parameters(&self) -> Vec<String> {
        if self.sweep.is_empty() {
            Vec::new()
        } else {
            expand(self.sweep)
        }
    }

    pub fn required(&self) -> bool {
        self.default == REQUIRED
    }

    /// A lever, named by its sweep parameter and moved at the key.
    pub const fn priced(mut self) -> Self {
        self.lever = Some(Priced::at_key());
        self
    }

    /// A lever named `name` (`{…}` groups expanded in step with the path), moved as `at`
    /// says.
    pub const fn priced_as(mut self, name: &'static str, at: PricedAt) -> Self {
        self.lever = Some(Priced {
            name,
            at,
            ..Priced::at_key()
        });
        self
    }

    /// `solve` tries `lo..=hi` when not told (the key's range is wider than a designer
    /// would search).
    pub const fn searched(mut self, lo: i64, hi: i64) -> Self {
        if let Some(mut lever) = self.lever {
            lever.search = Some((lo, hi));
            self.lever = Some(lever);
        }
        self
    }

    /// Where the plan itself sets the lever.
    pub const fn set_by(mut self, set_by: &'static [SetBy]) -> Self {
        if let Some(mut lever) = self.lever {
            lever.set_by = set_by;
            self.lever = Some(lever);
        }
        self
    }

    /// Listed units at `list` that give their own `key` move with the side.
    pub const fn per_unit(mut self, list: &'static str, key: &'static str) -> Self {
        if let Some(mut lever) = self.lever {
            lever.per_unit = Some((list, key));
            self.lever = Some(lever);
        }
        self
    }
}

/// Spells out every `{a,b}` group of a path: `side.{a,b}.sp` → `side.a.sp`, `side.b.sp`.
pub fn expand(pattern: &str) -> Vec<String> {
    match (pattern.find('{'), pattern.find('}')) {
        (Some(open), Some(close)) if open < close => {
            let (head, rest) = (&pattern[..open], &pattern[close + 1..]);
            pattern[open + 1..close]
                .split(',')
                .flat_map(|alt| expand(&format!("{head}{}{rest}", alt.trim())))
                .collect()
        }
        _ => vec![pattern.to_string()],
    }
}

/// The header every analysis file shares.
pub const HEADER: &[KeyDoc] = &[
    key(
        "name",
        Ty::Text,
        "the file's stem",
        "report folder name (letters, digits, '_' and '-', at most 100 characters)",
        "\"my_study\"",
    ),
    key(
        "description",
        Ty::Text,
        "none",
        "one line shown in the report",
        "\"what this study asks\"",
    ),
    key(
        "system",
        Ty::System,
        REQUIRED,
        "the rules system this file runs",
        "",
    ),
    key(
        "seed",
        Ty::Int(0, limits::MAX_SEED as i64),
        "1",
        "the seed: the same seed gives the same bytes on any machine",
        "1",
    ),
    key(
        "trials",
        Ty::Int(1, limits::MAX_TRIALS as i64),
        "1000000",
        "trials per grid point and variant (`--trials` overrides)",
        "10_000",
    ),
    key(
        "precision",
        Ty::Float(0.0, crate::analysis::MAX_PRECISION),
        "none",
        "run each run until every 95% interval half-width is at most this (trials is the cap)",
        "0.01",
    ),
];

/// `exact`, for the systems that enumerate exactly.
pub const EXACT: &[KeyDoc] = &[key(
    "exact",
    Ty::Bool,
    "true",
    "also compute exact results where the state space is small",
    "true",
)];

/// `[[expect]]` (read by the engine, `battlelab check`) and `[value]` (read by
/// `battlelab value`): every system's file may hold them.
pub const EXPECT_VALUE: &[KeyDoc] = &[
    key(
        "[[expect]].outcome",
        Ty::Text,
        "none",
        "an outcome of the run (give outcome or metric)",
        "\"A wins\"",
    ),
    key(
        "[[expect]].metric",
        Ty::Text,
        "none",
        "a metric's mean (give outcome or metric)",
        "\"rounds\"",
    ),
    key(
        "[[expect]].at_least",
        Ty::Number,
        "none",
        "the probability (or mean) is at least this (one bound)",
        "0.0",
    ),
    key(
        "[[expect]].at_most",
        Ty::Number,
        "none",
        "the probability (or mean) is at most this (one bound)",
        "1.0",
    ),
    key(
        "[[expect]].between",
        Ty::NumberPair,
        "none",
        "the probability (or mean) is between these (one bound)",
        "[0.0, 1.0]",
    ),
    key(
        "[[expect]].confidence",
        Ty::Float(0.0, 1.0),
        "0.99",
        "confidence of a simulated decision, below 1",
        "0.99",
    ),
    key(
        "[[expect]].where.<axis>",
        Ty::Any,
        "every run",
        "only the runs at this swept value (or `variant`)",
        "\"base\"",
    ),
    key(
        "[value].modifiers",
        Ty::TextList,
        "the system's own list",
        "modifiers `battlelab value` prices, e.g. \"a.drm+1\"",
        "[]",
    ),
    key(
        "[value].headline",
        Ty::Text,
        "the system's first",
        "the headline `battlelab value` prices",
        "\"all\"",
    ),
    key(
        "[value].reference.<axis>",
        Ty::Any,
        "the first grid point",
        "the run tornado charts show",
        "\"base\"",
    ),
];

/// One system's documentation: its name, one line, its keys and a starting file.
#[derive(Clone, Copy, Debug)]
pub struct SystemDoc {
    pub name: &'static str,
    pub summary: &'static str,
    pub keys: &'static [&'static [KeyDoc]],
    /// A small valid file (`battlelab new`), without the key reference `new` adds.
    pub starter: &'static str,
    /// What `value` and `solve` read first, and in which currency they count.
    pub value: ValueDoc,
    /// A file of its own an analysis names (a rules file), where the system has one.
    pub companion: Option<&'static Companion>,
}

/// A file an analysis names and the system reads beside it — a rules file, whose own
/// format is documented (`keys`/`new`/`schema` of [`Companion::doc`]) and whose declared
/// settings are the analysis's levers.
#[derive(Clone, Copy, Debug)]
pub struct Companion {
    /// The analysis key that names it (`rules`).
    pub key: &'static str,
    /// Its format's documentation: its name (`rules-file`), keys and starting file.
    pub doc: &'static SystemDoc,
    /// What `battlelab new` adds to a companion file's name beside the analysis
    /// (`my_game.rules.toml`).
    pub suffix: &'static str,
    /// The settings an analysis at a path gets from the companion file it names, read
    /// from the given files (the disk for the command line).
    pub settings:
        fn(&dyn crate::files::Files, &std::path::Path, &str) -> Result<FileSettings, String>,
    /// The settings a companion file at a path declares (`battlelab keys FILE`).
    pub settings_of_file:
        fn(&std::path::Path) -> Result<FileSettings, crate::analysis::AnalysisError>,
}

/// The settings a companion file declares: what an analysis sets, sweeps and prices.
#[derive(Clone, Debug)]
pub struct FileSettings {
    /// The file's own name for what it describes (a game's name).
    pub title: String,
    pub settings: Vec<FileSetting>,
    /// The headlines `value` and `solve` offer: one per outcome and metric.
    pub headlines: Vec<crate::engine::headline::Headline>,
}

/// One whole-number setting a companion file declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSetting {
    /// Its name in a sweep and on the command line (`attacker.strength`, `terrain`).
    pub name: String,
    /// Its key in the analysis (`sides.attacker.strength`, `parameters.terrain`).
    pub key: String,
    /// What kind of setting it is, in words ("parameter", "counter (its start)").
    pub kind: String,
    pub default: Option<i64>,
    pub min: i64,
    pub max: i64,
    pub meaning: String,
}

/// What `value` and `solve` read of a system besides its levers (which are its keys
/// marked [`KeyDoc::priced`]).
#[derive(Clone, Copy, Debug)]
pub struct ValueDoc {
    /// The headlines, the first the default.
    pub headlines: fn() -> Vec<crate::engine::headline::Headline>,
    /// The modifiers priced when the file does not say.
    pub default_modifiers: &'static [&'static str],
    /// The lever equivalents are counted in, and the unit's name.
    pub currency: Option<(&'static str, &'static str)>,
    /// Where the system has odds columns (`odds±N`): those of the rules a run of the
    /// named variant fights by, read from the analysis document — each a ratio
    /// (larger, smaller), the printed ones first (of equal ratios the first is kept).
    pub odds_columns: Option<OddsColumns>,
}

/// The odds columns of the rules a run of the named variant fights by, read from the
/// analysis document.
pub type OddsColumns = fn(&toml::Table, &str) -> Vec<(u32, u32)>;

/// One documented key as a row: its path, and where it came from.
#[derive(Clone, Debug)]
pub struct Row {
    pub path: String,
    pub doc: KeyDoc,
    /// What made this row: the key itself, a sweep of it, or a variant's override.
    pub origin: Origin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Key,
    Sweep,
    Variant,
}

impl SystemDoc {
    /// Every documented key, as written in the table.
    pub fn keys(&self) -> impl Iterator<Item = &'static KeyDoc> + '_ {
        self.keys.iter().flat_map(|s| s.iter())
    }

    /// Every path a file of this system may hold, spelled out: the keys (`{a,b}`
    /// expanded), `sweep.<parameter>` for each sweepable key, and each variant override.
    pub fn rows(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = Vec::new();
        let mut push = |path: String, doc: KeyDoc, origin| {
            if !rows.iter().any(|r| r.path == path) {
                rows.push(Row { path, doc, origin });
            }
        };
        for doc in self.keys() {
            for path in expand(doc.path) {
                push(path, *doc, Origin::Key);
            }
        }
        for doc in self.keys() {
            for parameter in doc.sweep_parameters() {
                let mut swept = *doc;
                if matches!(doc.ty, Ty::Tactic) {
                    // Tactics are swept by name.
                    swept.ty = Ty::TextList;
                    swept.default = "not swept";
                    swept.example = "[\"charge\", \"uniform\"]";
                } else if !doc.path.starts_with("sweep.") {
                    swept.ty = Ty::Sweep;
                    swept.default = "not swept";
                    swept.example = "[1, 2]";
                }
                push(format!("sweep.{parameter}"), swept, Origin::Sweep);
            }
            if let Some(v) = doc.variant_path() {
                let mut overridden = *doc;
                overridden.default = "the file's value";
                for path in expand(&v) {
                    push(path, overridden, Origin::Variant);
                }
            }
        }
        rows
    }

    /// Every `[sweep]` parameter the table documents.
    pub fn sweep_parameters(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in self.keys().flat_map(|d| d.sweep_parameters()) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// The tree of every documented path.
    pub fn tree(&self) -> Node {
        let mut root = Node::default();
        for row in self.rows() {
            root.insert(&segments(&row.path), row.doc);
            // `"a.sp" = [...]` under [sweep] is one quoted key: the same parameter.
            if let Some(parameter) = row.path.strip_prefix("sweep.") {
                if row.origin == Origin::Sweep && parameter.contains('.') {
                    let quoted = Segment {
                        name: parameter.to_string(),
                        arrays: 0,
                    };
                    root.insert(&[segments("sweep").remove(0), quoted], row.doc);
                }
            }
        }
        root
    }

    /// The JSON Schema (draft 2020-12) of this system's analysis file.
    pub fn schema(&self) -> Value {
        let mut schema = self.tree().schema(self.name);
        let object = schema.as_object_mut().expect("the root is a table");
        let mut head = serde_json::Map::new();
        head.insert(
            "$schema".into(),
            "https://json-schema.org/draft/2020-12/schema".into(),
        );
        head.insert(
            "$id".into(),
            format!("https://battlelab.invalid/schema/{}.schema.json", self.name).into(),
        );
        head.insert(
            "title".into(),
            format!("battlelab analysis file: {}", self.name).into(),
        );
        head.insert("description".into(), self.summary.into());
        head.append(object);
        Value::Object(head)
    }

    /// The paths in `file` that this system's table does not document (empty when every
    /// key is documented).
    pub fn undocumented(&self, file: &toml::Table) -> Vec<String> {
        let tree = self.tree();
        let mut out = Vec::new();
        tree.walk_table(file, "", &mut out);
        out
    }
}

/// One segment of a path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Segment {
    /// The key, or `<label>` for one the designer names.
    pub name: String,
    /// How many lists deep its tables are (`[[variant]]` 1, `lanes[][]` 2).
    pub arrays: usize,
}

impl Segment {
    pub fn is_placeholder(&self) -> bool {
        self.name.starts_with('<')
    }
}

/// A path's segments (after [`expand`]).
pub fn segments(path: &str) -> Vec<Segment> {
    path.split('.')
        .map(|s| {
            if let Some(inner) = s.strip_prefix("[[").and_then(|s| s.strip_suffix("]]")) {
                Segment {
                    name: inner.to_string(),
                    arrays: 1,
                }
            } else if let Some(inner) = s.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                // `[value]`: a table, written as TOML's header.
                Segment {
                    name: inner.to_string(),
                    arrays: 0,
                }
            } else {
                let name = s.trim_end_matches("[]");
                Segment {
                    name: name.to_string(),
                    arrays: (s.len() - name.len()) / 2,
                }
            }
        })
        .collect()
}

/// A table of the file: its documented keys, each a leaf (a value) or a table.
#[derive(Clone, Debug, Default)]
pub struct Node {
    /// In documentation order.
    pub children: Vec<(Segment, Node)>,
    /// The key's documentation where this is a value.
    pub leaf: Option<KeyDoc>,
}

impl Node {
    fn insert(&mut self, path: &[Segment], doc: KeyDoc) {
        let Some((first, rest)) = path.split_first() else {
            self.leaf.get_or_insert(doc);
            return;
        };
        let child = match self.children.iter().position(|(s, _)| s.name == first.name) {
            Some(i) => &mut self.children[i].1,
            None => {
                self.children.push((first.clone(), Node::default()));
                &mut self.children.last_mut().expect("just pushed").1
            }
        };
        child.insert(rest, doc);
    }

    /// The child for a key named `name` in a file: itself, or a `<placeholder>`.
    pub fn child(&self, name: &str) -> Option<&(Segment, Node)> {
        self.children
            .iter()
            .find(|(s, _)| s.name == name)
            .or_else(|| self.children.iter().find(|(s, _)| s.is_placeholder()))
    }

    /// The JSON Schema of this node's value.
    pub fn schema(&self, system: &str) -> Value {
        if let Some(doc) = &self.leaf {
            let mut s = doc.ty.schema(system);
            let mut meaning = doc.meaning.to_string();
            if !doc.default.is_empty() && !doc.required() {
                meaning += &format!(" (default: {})", doc.default);
            }
            s["description"] = meaning.into();
            return s;
        }
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        let mut additional = Value::Bool(false);
        for (segment, child) in &self.children {
            let mut s = child.schema(system);
            for _ in 0..segment.arrays {
                s = json!({"type": "array", "items": s});
            }
            if segment.is_placeholder() {
                additional = s;
            } else {
                if child.leaf.is_some_and(|d| d.required()) {
                    required.push(segment.name.clone());
                }
                properties.insert(segment.name.clone(), s);
            }
        }
        let mut object = json!({
            "type": "object",
            "properties": properties,
            "additionalProperties": additional,
        });
        if !required.is_empty() {
            object["required"] = required.into();
        }
        object
    }

    fn walk_table(&self, table: &toml::Table, prefix: &str, out: &mut Vec<String>) {
        for (name, value) in table {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            match self.child(name) {
                None => out.push(path),
                Some((segment, node)) => node.walk_value(value, segment.arrays, &path, out),
            }
        }
    }

    fn walk_value(&self, value: &toml::Value, arrays: usize, path: &str, out: &mut Vec<String>) {
        if self.leaf.is_some() {
            return;
        }
        match value {
            toml::Value::Array(items) if arrays > 0 => {
                for (i, item) in items.iter().enumerate() {
                    self.walk_value(item, arrays - 1, &format!("{path}[{i}]"), out);
                }
            }
            toml::Value::Table(table) if arrays == 0 => self.walk_table(table, path, out),
            _ => out.push(format!("{path} (not the documented shape)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_groups() {
        assert_eq!(expand("side.{a,b}.sp"), ["side.a.sp", "side.b.sp"]);
        assert_eq!(expand("x.{a, b}.{c,d}").len(), 4);
        assert_eq!(expand("plain"), ["plain"]);
    }

    #[test]
    fn segments_read_arrays() {
        let s = segments("[[variant]].rules.lanes[][].units");
        assert_eq!(s[0].arrays, 1);
        assert_eq!(s[0].name, "variant");
        assert_eq!(s[2].name, "lanes");
        assert_eq!(s[2].arrays, 2);
        assert_eq!(segments("[value].headline")[0].arrays, 0);
    }
}
