//! Table studies: analysis files for the single-d6 tables of the strategic game
//! (attrition, forced march, naval combat, blockade, pursuit, transport, storm), and the
//! dispatch between them and field battles.
//!
//! Why this module exists: a designer sweeps a d6 table over its column and DRM (and
//! compares variants of its cells) the same way as a field battle, and gets the same kind
//! of report: exact and simulated distributions, expectations, charts, rulebook tables and
//! a manifest. Attrition adds a multi-turn study: a stack of N SP sitting K turns, with the
//! exact distribution of what survives (a Markov chain over SP) held against simulation.
//!
//! ```toml
//! system = "attrition"
//! seed = 1812
//! trials = 1_000_000
//!
//! [roll]               # values held fixed when not swept
//! drm = 0
//! small_stack = "none" # [option] a hex under 3 SP: "none" (no attrition) or "column" (3-5)
//!
//! [sweep]
//! sp = { from = 1, to = 30 }
//! drm = { from = -2, to = 3 }
//!
//! [rules.cells."11-15"] # overrides: column label → modified roll → printed code
//! "6" = "4*"
//!
//! [turns]              # attrition only: N SP sitting K turns under one DRM
//! sp = 12
//! count = 6
//! drm = 1
//!
//! [tables]             # [option] how tables.md prints chances
//! format = "in6"       # "percent" (default), "fraction" ("1/3") or "in6" ("2 in 6");
//!                      # "in36" is refused: every table here is one d6
//! decimals = 1         # digits after the point of a percentage, 0–4 (default 1)
//! ```
//!
//! In `tables.md` a row is labelled by the printed column its swept value reaches
//! (attrition at 8 SP reads "6-10"); swept values that reach the same column with every
//! other swept value equal roll the same and share one row ("11-15 (12, 14 SP)").
//! Percentages add up to exactly 100 per row and move as little as possible from the
//! exact values; one moved away from its own nearest rounding is marked `†`.

pub mod derived;
pub mod lookup;
pub mod one_roll;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::json;
use toml::Spanned;

use crate::analysis::{self, AnalysisError, AxisValue, Source, SweepAxis, TableFormat};
use crate::dice::DiceStream;
use crate::engine::headline::{Headline, Match};
use crate::exact::ExactDistribution;
use crate::header::{analysis_file, variant_table, AnalysisHeader, TableFormats};
use crate::keys::{self, key, KeyDoc, SetBy, SystemDoc, Ty, ValueDoc, REQUIRED};
use crate::limits;
use crate::sim::{Interrupted, RunControl};
use crate::systems::d6_tables::lookup::{CompiledD6Table, D6Table};
use crate::systems::field::battle::OddsColumn;

/// Allowed range of a swept or fixed DRM on a d6 table.
pub const TABLE_DRM_RANGE: (i64, i64) = (-20, 20);

/// Largest stack of the attrition turns study.
pub const MAX_TURNS_SP: i64 = 200;

/// Most turns of the attrition turns study.
pub const MAX_TURNS: i64 = 100;

/// One grid point of one variant: which column and DRM to roll.
#[derive(Debug, Clone)]
pub struct TablePoint {
    pub variant: usize,
    pub coordinates: Vec<AxisValue>,
    /// `None`: no roll happens (attrition under 3 SP with `small_stack = "none"`).
    pub column: Option<usize>,
    pub drm: i32,
}

/// The attrition turns study: a stack of `sp` SP sitting `turns` turns under `drm`.
#[derive(Debug, Clone, Copy)]
pub struct TurnsStudy {
    pub sp: u32,
    pub turns: u32,
    pub drm: i32,
}

/// A validated table study.
#[derive(Debug, Clone)]
pub struct D6TableStudy {
    /// The shared keys; `header.tables` is how `tables.md` prints chances.
    pub header: AnalysisHeader,
    pub small_stack_column: bool,
    pub variants: Vec<(String, CompiledD6Table)>,
    pub axes: Vec<SweepAxis>,
    pub points: Vec<TablePoint>,
    pub turns: Option<TurnsStudy>,
}

analysis_file! {
    struct TableFile {
        #[serde(default)]
        roll: RollSpec,
        sweep: Option<BTreeMap<String, Spanned<toml::Value>>>,
        rules: Option<CellOverrides>,
        variant: Option<Vec<VariantSpec>>,
        turns: Option<TurnsSpec>,
        /// Read by [`AnalysisHeader::parse`] against [`TABLE_FORMATS`].
        #[allow(dead_code)]
        tables: Option<analysis::TablesSpec>,
    }
}

/// What `[tables]` may ask for: every table here is one d6.
const TABLE_FORMATS: TableFormats = TableFormats {
    allowed: &[
        TableFormat::Percent,
        TableFormat::Fraction,
        TableFormat::In6,
    ],
    why: "the d6 tables are single d6 rolls, so \"in36\" does not apply",
};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RollSpec {
    sp: Option<Spanned<i64>>,
    extra: Option<Spanned<i64>>,
    odds: Option<Spanned<String>>,
    drm: Option<Spanned<i64>>,
    small_stack: Option<Spanned<String>>,
}

/// `[rules.cells."<column>"] "<roll>" = "<code>"`: cell overrides of a d6 table.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CellOverrides {
    cells: Option<BTreeMap<String, BTreeMap<String, Spanned<String>>>>,
}

variant_table! {
    struct VariantSpec {
        rules: Option<CellOverrides>,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnsSpec {
    sp: Spanned<i64>,
    count: Spanned<i64>,
    drm: Option<Spanned<i64>>,
}

/// A key a file gives or sweeps (the schema cannot require it).
const GIVE_OR_SWEEP: &str = "none: give it or sweep it";

const TABLE_DRM: Ty = Ty::Int(TABLE_DRM_RANGE.0, TABLE_DRM_RANGE.1);

/// Keys every d6 table's file has.
const TABLE_KEYS: &[KeyDoc] = &[
    key("roll.drm", TABLE_DRM, "0", "the net DRM of the roll", "1").sweep("drm").priced().searched(-6, 6).set_by(TURNS_SET_DRM),
    key("rules.cells.<column>.<roll>", Ty::Text, "as printed", "a printed cell: column label (\"11-15\", \"d6\") × modified roll = code (`battlelab table <system>` prints them)", "\"E\"").in_variant(),
    key("[[variant]].name", Ty::Text, REQUIRED, "the variant's name", "\"printed\""),
    key("[[variant]].description", Ty::Text, "none", "what the variant changes", "\"as printed\""),
    key("tables.format", Ty::OneOf(&["percent", "fraction", "in6"]), "\"percent\"", "how tables.md prints chances: percent, fraction or \"2 in 6\"", "\"in6\""),
    key("tables.decimals", Ty::Int(0, 4), "1", "digits after the point of a percentage", "2"),
];

const ATTRITION_KEYS: &[KeyDoc] = &[
    key(
        "roll.sp",
        Ty::Int(1, crate::limits::MAX_SP as i64),
        GIVE_OR_SWEEP,
        "total SP in the hex (picks the column); or sweep sp",
        "12",
    )
    .sweep("sp")
    .priced()
    .searched(1, 30)
    .set_by(TURNS_SET_SP),
    key(
        "roll.small_stack",
        Ty::OneOf(&["none", "column"]),
        "\"none\"",
        "a hex under 3 SP: no attrition, or the 3-5 column",
        "\"column\"",
    ),
    key(
        "turns.sp",
        Ty::Int(1, MAX_TURNS_SP),
        REQUIRED,
        "with [turns]: the stack's SP at the start",
        "12",
    ),
    key(
        "turns.count",
        Ty::Int(1, MAX_TURNS),
        REQUIRED,
        "with [turns]: how many turns it sits",
        "6",
    ),
    key(
        "turns.drm",
        TABLE_DRM,
        "0",
        "with [turns]: the DRM of every turn's roll",
        "1",
    ),
];

const MARCH_KEYS: &[KeyDoc] = &[key(
    "roll.extra",
    Ty::Int(1, 3),
    GIVE_OR_SWEEP,
    "extra MP asked for (picks the column); or sweep extra",
    "2",
)
.sweep("extra")
.priced()];

const NAVAL_KEYS: &[KeyDoc] = &[
    key(
        "roll.odds",
        Ty::Text,
        GIVE_OR_SWEEP,
        "odds column, larger-smaller: \"1-1\", \"3-2\" or \"2-1\"; or sweep odds",
        "\"3-2\"",
    ),
    key(
        "sweep.odds",
        Ty::OddsList,
        "none",
        "odds columns, e.g. [\"1-1\", \"3-2\", \"2-1\"]",
        "[\"1-1\", \"2-1\"]",
    )
    .sweep("odds"),
];

const fn table_doc(
    name: &'static str,
    value: ValueDoc,
    summary: &'static str,
    keys: &'static [&'static [KeyDoc]],
    starter: &'static str,
) -> SystemDoc {
    SystemDoc {
        companion: None,
        name,
        summary,
        keys,
        starter,
        value,
    }
}

/// Every table takes a DRM; only attrition has a headline (P(no SP lost)).
const TABLE_VALUE: ValueDoc = ValueDoc {
    headlines: Vec::new,
    default_modifiers: &["drm+1"],
    currency: None,
    odds_columns: None,
};

const ATTRITION_VALUE: ValueDoc = ValueDoc {
    headlines: attrition_headlines,
    ..TABLE_VALUE
};

fn attrition_headlines() -> Vec<Headline> {
    vec![Headline::outcomes(
        "no_loss",
        "P(no SP lost)",
        Match::Is(vec!["0".into()]),
    )]
}

const TURNS_SET_DRM: &[SetBy] = &[SetBy {
    only: "",
    axis: "turns",
    prefix: "",
    what: "[turns], whose runs roll under turns.drm",
    instead: "read the single-roll runs (turns unset), or move turns.drm in the file",
}];

const TURNS_SET_SP: &[SetBy] = &[SetBy {
    only: "",
    axis: "turns",
    prefix: "",
    what: "[turns], whose runs start from turns.sp",
    instead: "read the single-roll runs (turns unset), or move turns.sp in the file",
}];

/// This system in [`crate::systems::REGISTRY`].
pub const REGISTRATION: crate::systems::Registration = crate::systems::Registration {
    folder: "d6_tables",
    docs: &DOCS,
    benches: &["strategic"],
    one_roll: one_roll::TABLES,
    parse: |path, text, _| crate::systems::study(D6TableStudy::parse(path, text)),
};

/// `battlelab keys` and `battlelab new` for the seven d6 tables, in [`D6Table::NAMES`]
/// order.
pub const DOCS: [SystemDoc; 7] = [
    table_doc("attrition", ATTRITION_VALUE, "attrition rolls (docs/systems/tables.md), swept over SP and DRM; [turns]: a stack sitting K turns", &[keys::HEADER, TABLE_KEYS, ATTRITION_KEYS, keys::EXPECT_VALUE], "system = \"attrition\"\ntrials = 10_000\n\n[roll]\ndrm = 0\n\n[sweep]\nsp = { from = 3, to = 21, step = 3 }\n\n[turns]                 # N SP sitting K turns under one DRM\nsp = 12\ncount = 4\ndrm = 0\n"),
    table_doc("march", TABLE_VALUE, "forced-march rolls (docs/systems/tables.md), swept over extra MP and DRM", &[keys::HEADER, TABLE_KEYS, MARCH_KEYS, keys::EXPECT_VALUE], "system = \"march\"\ntrials = 10_000\n\n[sweep]\nextra = [1, 2, 3]       # extra MP asked for\ndrm = { from = -1, to = 2 }\n"),
    table_doc("naval", TABLE_VALUE, "one naval combat roll (docs/systems/tables.md), swept over odds and DRM", &[keys::HEADER, TABLE_KEYS, NAVAL_KEYS, keys::EXPECT_VALUE], "system = \"naval\"\ntrials = 10_000\n\n[sweep]\nodds = [\"1-1\", \"3-2\", \"2-1\"]\ndrm = { from = -2, to = 2 }\n"),
    table_doc("blockade", TABLE_VALUE, "blockade rolls (docs/systems/tables.md), swept over DRM", &[keys::HEADER, TABLE_KEYS, keys::EXPECT_VALUE], "system = \"blockade\"\ntrials = 10_000\n\n[sweep]\ndrm = { from = -1, to = 1 }\n"),
    table_doc("pursuit", TABLE_VALUE, "pursuit rolls (docs/systems/tables.md), swept over DRM", &[keys::HEADER, TABLE_KEYS, keys::EXPECT_VALUE], "system = \"pursuit\"\ntrials = 10_000\n\n[sweep]\ndrm = [-1, 0]          # -1: pursuers in a coastal hex or port\n"),
    table_doc("transport", TABLE_VALUE, "naval transport rolls (docs/systems/tables.md), swept over DRM", &[keys::HEADER, TABLE_KEYS, keys::EXPECT_VALUE], "system = \"transport\"\ntrials = 10_000\n\n[sweep]\ndrm = { from = -1, to = 1 }\n"),
    table_doc("storm", TABLE_VALUE, "storm/ice rolls (docs/systems/tables.md), swept over DRM", &[keys::HEADER, TABLE_KEYS, keys::EXPECT_VALUE], "system = \"storm\"\ntrials = 10_000\n\n[sweep]\ndrm = { from = -1, to = 2 }\n\n[[variant]]\nname = \"printed\"\n\n[[variant]]\nname = \"a 1 only damages\"\nrules = { cells = { d6 = { \"1\" = \"D\" } } }\n"),
];

/// What each table sweeps: its column parameter (if any) and the DRM.
pub fn parameters(system: &str) -> &'static [&'static str] {
    match system {
        "attrition" => &["sp", "drm"],
        "march" => &["extra", "drm"],
        "naval" => &["odds", "drm"],
        _ => &["drm"],
    }
}

impl D6TableStudy {
    /// Validates a table-study file.
    pub fn parse(path: &Path, text: &str) -> Result<Self, AnalysisError> {
        let source = Source::new(path, text);
        let spec: TableFile = source.parse_toml()?;
        let system = spec.system.get_ref().clone();
        let printed = D6Table::printed(&system).ok_or_else(|| {
            source.error_at(
                None,
                "system",
                format!(
                    "\"{}\" is not a dice table; allowed: {}",
                    limits::echo(&system),
                    D6Table::NAMES.join(", ")
                ),
            )
        })?;
        let header = AnalysisHeader::parse(path, &source, Some(&TABLE_FORMATS))?;
        let small_stack_column = small_stack_column(&source, &spec.roll, &system)?;
        let variants = variants(&source, &spec, &header, printed)?;
        let allowed = parameters(&system);
        let (axes, axis_lines) = analysis::sweep_axes(&source, spec.sweep.as_ref(), allowed)?;
        check_fixed_roll_keys(&source, &spec.roll, &system)?;
        analysis::check_grid_size(&source, &axes, variants.len())?;
        let roll_grid = RollGrid {
            source: &source,
            roll: &spec.roll,
            system: &system,
            axes: &axes,
            axis_lines: &axis_lines,
            small_stack_column,
        };
        let mut points = Vec::new();
        let grid = analysis::grid(&axes);
        for (variant, (_, table)) in variants.iter().enumerate() {
            for coordinates in &grid {
                points.push(roll_grid.point(variant, table, coordinates)?);
            }
        }
        let turns = turns(&source, &spec, &system)?;
        Ok(Self {
            header,
            small_stack_column,
            variants,
            axes,
            points,
            turns,
        })
    }
}

/// `roll.small_stack` (attrition only): whether a hex under 3 SP rolls on the 3-5 column.
fn small_stack_column(
    source: &Source,
    roll: &RollSpec,
    system: &str,
) -> Result<bool, AnalysisError> {
    match &roll.small_stack {
        None => Ok(false),
        Some(v) if system != "attrition" => {
            Err(source.error(v, "roll.small_stack", "small_stack is an attrition option"))
        }
        Some(v) => match v.get_ref().as_str() {
            "none" => Ok(false),
            "column" => Ok(true),
            other => Err(source.error(
                v,
                "roll.small_stack",
                format!("unknown small-stack reading \"{other}\"; allowed: none, column"),
            )),
        },
    }
}

/// The printed table with `[rules]`'s cells, then each variant's table with its own
/// cells on top, compiled; the one variant "base" where the file has none.
fn variants(
    source: &Source,
    spec: &TableFile,
    header: &AnalysisHeader,
    printed: D6Table,
) -> Result<Vec<(String, CompiledD6Table)>, AnalysisError> {
    let mut variants = Vec::new();
    let base = apply_cells(source, "rules", spec.rules.as_ref(), printed)?;
    for (index, (variant, heading)) in spec
        .variant
        .iter()
        .flatten()
        .zip(&header.variants)
        .enumerate()
    {
        let table = apply_cells(
            source,
            &format!("variant[{index}].rules"),
            variant.rules.as_ref(),
            base.clone(),
        )?;
        variants.push((heading.name.clone(), compile(source, table)?));
    }
    if variants.is_empty() {
        variants.push(("base".to_string(), compile(source, base)?));
    }
    Ok(variants)
}

/// `roll.sp`, `roll.extra` and `roll.odds` only on the table that has that column.
fn check_fixed_roll_keys(
    source: &Source,
    roll: &RollSpec,
    system: &str,
) -> Result<(), AnalysisError> {
    let allowed = parameters(system);
    for key in ["sp", "extra", "odds"] {
        let given = match key {
            "sp" => roll.sp.as_ref().map(|v| v.span()),
            "extra" => roll.extra.as_ref().map(|v| v.span()),
            _ => roll.odds.as_ref().map(|v| v.span()),
        };
        if let Some(span) = given {
            if !allowed.contains(&key) {
                return Err(source.error_at(
                    Some(source.line_of(span)),
                    format!("roll.{key}"),
                    format!(
                        "the {system} table has no {key}; it takes: {}",
                        allowed.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `[turns]` (attrition only): the stack's SP, the number of turns and their DRM.
fn turns(
    source: &Source,
    spec: &TableFile,
    system: &str,
) -> Result<Option<TurnsStudy>, AnalysisError> {
    match &spec.turns {
        None => Ok(None),
        Some(t) if system != "attrition" => {
            Err(source.error(&t.count, "turns", "the turns study is for attrition only"))
        }
        Some(t) => Ok(Some(TurnsStudy {
            sp: source.int_in(&t.sp, "turns.sp", 1, MAX_TURNS_SP, "the stack's SP")? as u32,
            turns: source.int_in(&t.count, "turns.count", 1, MAX_TURNS, "the number of turns")?
                as u32,
            drm: match &t.drm {
                Some(d) => source.int_in(
                    d,
                    "turns.drm",
                    TABLE_DRM_RANGE.0,
                    TABLE_DRM_RANGE.1,
                    "a DRM",
                )? as i32,
                None => 0,
            },
        })),
    }
}

/// What a table file's grid points are read from: `[roll]`'s fixed values and the
/// sweep.
struct RollGrid<'a> {
    source: &'a Source<'a>,
    roll: &'a RollSpec,
    system: &'a str,
    axes: &'a [SweepAxis],
    /// The line of each axis's `[sweep]` entry.
    axis_lines: &'a [Option<usize>],
    small_stack_column: bool,
}

impl RollGrid<'_> {
    /// The line where a parameter is given: its sweep, else its fixed value.
    fn line_of(&self, key: &str) -> Option<usize> {
        if let Some(i) = self.axes.iter().position(|a| a.parameter == key) {
            return self.axis_lines[i];
        }
        let roll = self.roll;
        let span = match key {
            "sp" => roll.sp.as_ref().map(|v| v.span()),
            "extra" => roll.extra.as_ref().map(|v| v.span()),
            "drm" => roll.drm.as_ref().map(|v| v.span()),
            _ => roll.odds.as_ref().map(|v| v.span()),
        };
        span.map(|s| self.source.line_of(s))
    }

    /// The fixed value of a parameter that is not swept, checked like a swept one.
    fn fixed(&self, key: &str) -> Result<Option<AxisValue>, AnalysisError> {
        let roll = self.roll;
        let field = format!("roll.{key}");
        let int = |v: &Spanned<i64>| Ok(Some(AxisValue::Int(*v.get_ref())));
        match key {
            "sp" => roll.sp.as_ref().map_or(Ok(None), int),
            "extra" => roll.extra.as_ref().map_or(Ok(None), int),
            "drm" => roll.drm.as_ref().map_or(Ok(Some(AxisValue::Int(0))), int),
            "odds" => match &roll.odds {
                None => Ok(None),
                Some(v) => OddsColumn::parse_ratio(v.get_ref())
                    .map(|(larger, smaller)| Some(AxisValue::Odds { larger, smaller }))
                    .ok_or_else(|| {
                        self.source.error(
                            v,
                            &field,
                            format!(
                                "odds are written L-S, e.g. \"3-2\"; got \"{}\"",
                                v.get_ref()
                            ),
                        )
                    }),
            },
            _ => Ok(None),
        }
    }

    /// One variant's roll at one grid point: its DRM and the column it rolls on
    /// (`None`: no roll), each checked against the table.
    fn point(
        &self,
        variant: usize,
        table: &CompiledD6Table,
        coordinates: &[AxisValue],
    ) -> Result<TablePoint, AnalysisError> {
        let axes = self.axes;
        let value = |key: &str| -> Result<Option<AxisValue>, AnalysisError> {
            match axes.iter().position(|a| a.parameter == key) {
                Some(i) => Ok(Some(coordinates[i].clone())),
                None => self.fixed(key),
            }
        };
        let bad = |field: &str, message: String| {
            let suffix = analysis::describe_point(axes, coordinates, None);
            let section = if axes.iter().any(|a| a.parameter == field) {
                "sweep"
            } else {
                "roll"
            };
            self.source.error_at(
                self.line_of(field),
                format!("{section}.{field}"),
                format!("{message}{suffix}"),
            )
        };
        let drm = match value("drm")? {
            Some(AxisValue::Int(d)) if (TABLE_DRM_RANGE.0..=TABLE_DRM_RANGE.1).contains(&d) => {
                d as i32
            }
            other => {
                return Err(bad(
                    "drm",
                    format!(
                        "a DRM must be {} to {}, got {}",
                        TABLE_DRM_RANGE.0,
                        TABLE_DRM_RANGE.1,
                        other.map_or("nothing".into(), |v| v.to_string())
                    ),
                ))
            }
        };
        let column = match self.system {
            "attrition" => match value("sp")? {
                Some(AxisValue::Int(sp)) if (1..=i64::from(crate::limits::MAX_SP)).contains(&sp) => lookup::attrition_column(sp as u32)
                    .or(self.small_stack_column.then_some(0)),
                Some(AxisValue::Int(sp)) if sp >= 1 => {
                    return Err(bad("sp", format!("a hex holds at most {} SP, got {sp}", crate::limits::MAX_SP)))
                }
                Some(other) => {
                    return Err(bad("sp", format!("SP below the table: a hex holds at least 1 SP, got {other}")))
                }
                None => return Err(bad("sp", "the attrition table needs the SP in the hex: give roll.sp or sweep sp".into())),
            },
            "march" => match value("extra")? {
                Some(AxisValue::Int(extra)) if (1..=3).contains(&extra) => Some(extra as usize - 1),
                Some(other) => return Err(bad("extra", format!("extra MP asked for must be 1, 2 or 3, got {other}"))),
                None => return Err(bad("extra", "the forced-march table needs the extra MP asked for: give roll.extra or sweep extra".into())),
            },
            "naval" => match value("odds")? {
                Some(AxisValue::Odds { larger, smaller }) => {
                    let label = format!("{larger}-{smaller}");
                    Some(table.table().column_index(&label).ok_or_else(|| {
                        bad(
                            "odds",
                            format!(
                                "odds {label} are not on the naval table; allowed: {} (odds above 2-1 use 2-1)",
                                table.table().column_labels.join(", ")
                            ),
                        )
                    })?)
                }
                _ => return Err(bad("odds", "the naval table needs odds: give roll.odds or sweep odds".into())),
            },
            _ => Some(0),
        };
        Ok(TablePoint {
            variant,
            coordinates: coordinates.to_vec(),
            column,
            drm,
        })
    }
}

fn compile(source: &Source, table: D6Table) -> Result<CompiledD6Table, AnalysisError> {
    CompiledD6Table::new(table).map_err(|e| source.error_at(None, e.field, e.message))
}

/// Applies `[rules.cells."<column>"] "<roll>" = "<code>"` overrides.
pub fn apply_cells(
    source: &Source,
    prefix: &str,
    overrides: Option<&CellOverrides>,
    mut table: D6Table,
) -> Result<D6Table, AnalysisError> {
    for (column, rolls) in overrides
        .and_then(|o| o.cells.as_ref())
        .into_iter()
        .flatten()
    {
        for (roll, code) in rolls {
            let field = format!("{prefix}.cells.\"{column}\".\"{roll}\"");
            let c = table.column_index(column).ok_or_else(|| {
                source.error(
                    code,
                    &field,
                    format!(
                        "the {} table has columns {}; got \"{column}\"",
                        table.name,
                        table.column_labels.join(", ")
                    ),
                )
            })?;
            let r: i32 = roll
                .trim()
                .parse()
                .ok()
                .filter(|r| (table.roll_min..=table.roll_max).contains(r))
                .ok_or_else(|| {
                    source.error(
                        code,
                        &field,
                        format!(
                            "the {} table has modified rolls {} to {}; got \"{roll}\"",
                            table.name, table.roll_min, table.roll_max
                        ),
                    )
                })?;
            let text = code.get_ref().trim();
            let valid = !text.is_empty()
                && text.len() <= 8
                && text
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '*');
            if !valid {
                return Err(source.error(code, &field, format!("a cell is a printed code of letters, digits and '*' (e.g. \"2*\", \"LR\"), got \"{text}\"")));
            }
            table.cells[c][(r - table.roll_min) as usize] = text.to_string();
        }
    }
    Ok(table)
}

/// Simulated counts and exact distribution of one point.
#[derive(Debug, Clone)]
pub struct PointResult {
    pub counts: Vec<u64>,
    pub exact: ExactDistribution,
}

/// Surviving SP after each turn of the turns study, per variant.
#[derive(Debug, Clone)]
pub struct TurnsResult {
    /// `exact[turn][sp]`, turn 0 = the start.
    pub exact: Vec<Vec<f64>>,
    /// Simulated counts of SP left after the last turn.
    pub counts: Vec<u64>,
}

/// Results of a table study.
#[derive(Debug, Clone)]
pub struct D6TableResults {
    pub trials: u64,
    pub seed: u64,
    pub points: Vec<PointResult>,
    pub turns: Vec<TurnsResult>,
}

fn certain(outcomes: usize) -> ExactDistribution {
    let mut counts = vec![0u64; outcomes];
    counts[0] = 6;
    ExactDistribution { counts, total: 6 }
}

/// Runs every point (and the turns study) on the engine's driver.
pub fn execute(
    study: &D6TableStudy,
    trials: u64,
    seed: u64,
    control: &RunControl,
) -> Result<D6TableResults, Interrupted> {
    let results = crate::engine::driver::run(study, trials, seed, control)?;
    Ok(D6TableResults::of(&results))
}

impl D6TableResults {
    /// The engine's results of a table study: the grid points, then the turns runs.
    pub fn of(results: &crate::engine::driver::PlanResults<D6TableStudy>) -> Self {
        let mut points = Vec::new();
        let mut turns = Vec::new();
        for (counts, exact) in results.counts.iter().zip(&results.exact) {
            match exact.clone().expect("table studies are always exact") {
                TableExact::Point(exact) => points.push(PointResult {
                    counts: counts.clone(),
                    exact,
                }),
                TableExact::Turns(exact) => turns.push(TurnsResult {
                    exact,
                    counts: counts.clone(),
                }),
            }
        }
        Self {
            trials: results.trials,
            seed: results.seed,
            points,
            turns,
        }
    }
}

/// The exact result of a table study's run.
#[derive(Debug, Clone)]
pub enum TableExact {
    /// One roll's distribution at a grid point.
    Point(ExactDistribution),
    /// The turns study: the distribution of SP left after each turn.
    Turns(Vec<Vec<f64>>),
}

impl D6TableStudy {
    /// The variant of the turns run `run` (runs after the grid points), if it is one.
    fn turns_variant(&self, run: usize) -> Option<usize> {
        run.checked_sub(self.points.len())
    }
}

impl crate::engine::System for D6TableStudy {
    type Counts = Vec<u64>;
    type Exact = TableExact;

    /// Each variant's table as the file gives it (its cells edited by `rules.cells`), as
    /// `tables.md` prints it: "The `<table>` table — `<variant>`".
    fn printed(&self) -> crate::engine::printed::Printed {
        let mut printed = crate::engine::printed::Printed::default();
        for (name, table) in &self.variants {
            let t = table.table();
            printed.pipe_table(format!("The {} table — {name}", t.name), &t.markdown());
        }
        printed
    }

    fn derived(
        &self,
        _counts: &[Vec<u64>],
        exact: &[Option<TableExact>],
    ) -> Vec<crate::engine::derived::Derived> {
        derived::derived(self, exact)
    }

    fn header(&self) -> crate::engine::Header<'_> {
        self.header.view()
    }

    fn plan(&self) -> crate::engine::Plan {
        // The turns study's runs are told apart by a `turns` axis (unset for one roll).
        let turns_axis = self.turns.map(|t| AxisValue::Int(t.turns.into()));
        let mut runs: Vec<crate::engine::RunKey> = self
            .points
            .iter()
            .map(|p| {
                let mut coordinates = p.coordinates.clone();
                if turns_axis.is_some() {
                    coordinates.push(AxisValue::Unset);
                }
                crate::engine::RunKey {
                    variant: self.variants[p.variant].0.clone(),
                    coordinates,
                }
            })
            .collect();
        let mut axes: Vec<String> = self.axes.iter().map(|a| a.parameter.clone()).collect();
        if let Some(turns) = turns_axis {
            axes.push("turns".into());
            for (name, _) in &self.variants {
                let mut coordinates = vec![AxisValue::Unset; self.axes.len()];
                coordinates.push(turns.clone());
                runs.push(crate::engine::RunKey {
                    variant: name.clone(),
                    coordinates,
                });
            }
        }
        crate::engine::Plan {
            axes,
            runs,
            unit: "rolls",
        }
    }

    fn empty(&self, run: usize) -> Vec<u64> {
        match (self.turns_variant(run), self.turns) {
            (Some(_), Some(t)) => vec![0; t.sp as usize + 1],
            _ => {
                let point = &self.points[run];
                vec![0; self.variants[point.variant].1.outcomes().len()]
            }
        }
    }

    fn simulate(&self, run: usize, dice: &mut DiceStream, n: u64, histogram: &mut Vec<u64>) {
        if let (Some(variant), Some(t)) = (self.turns_variant(run), self.turns) {
            let table = &self.variants[variant].1;
            let loss = losses(table);
            for _ in 0..n {
                let mut sp = t.sp;
                for _ in 0..t.turns {
                    if let Some(column) = column_of(sp, self.small_stack_column) {
                        let face = table.faces(column, t.drm)[dice.below(6) as usize];
                        sp = sp.saturating_sub(loss[usize::from(face)]);
                    }
                }
                histogram[sp as usize] += 1;
            }
            return;
        }
        let point = &self.points[run];
        let table = &self.variants[point.variant].1;
        match point.column {
            Some(column) => {
                lookup::roll_many(table.faces(column, point.drm), dice, n, histogram);
            }
            // Below the table (a hex under 3 SP with no column): nothing happens.
            None => histogram[0] += n,
        }
    }

    fn exact(&self, run: usize) -> Option<TableExact> {
        if let (Some(variant), Some(t)) = (self.turns_variant(run), self.turns) {
            return Some(TableExact::Turns(turns_exact(
                &self.variants[variant].1,
                t,
                self.small_stack_column,
            )));
        }
        let point = &self.points[run];
        let table = &self.variants[point.variant].1;
        Some(TableExact::Point(match point.column {
            Some(column) => table.distribution(column, point.drm),
            None => certain(table.outcomes().len()),
        }))
    }

    fn outcomes(
        &self,
        run: usize,
        counts: &Vec<u64>,
        exact: Option<&TableExact>,
    ) -> Vec<crate::engine::Outcome> {
        // A run's outcomes are named the same with or without its exact result (which
        // `compare` asks for first).
        if self.turns_variant(run).is_some() {
            let last = match exact {
                Some(TableExact::Turns(exact)) => exact.last(),
                _ => None,
            };
            return counts
                .iter()
                .enumerate()
                .map(|(sp, &count)| crate::engine::Outcome {
                    name: format!("{sp} SP left"),
                    count,
                    exact: last.map(|l| l[sp]),
                    fraction: None,
                })
                .collect();
        }
        let point = match exact {
            Some(TableExact::Point(exact)) => Some(exact),
            _ => None,
        };
        let table = &self.variants[self.points[run].variant].1;
        table
            .outcomes()
            .iter()
            .enumerate()
            .map(|(i, outcome)| crate::engine::Outcome {
                name: outcome.clone(),
                count: counts[i],
                exact: point.map(|e| e.probability(i)),
                fraction: point.map(|e| e.fraction(i).to_string()),
            })
            .collect()
    }

    fn distributions(
        &self,
        _run: usize,
        counts: &Vec<u64>,
        exact: Option<&TableExact>,
    ) -> Vec<crate::engine::Distribution> {
        match exact {
            Some(TableExact::Turns(exact)) => vec![crate::engine::Distribution::new(
                "sp_left",
                counts,
                exact.last().map(Vec::as_slice),
            )],
            _ => Vec::new(),
        }
    }

    /// Trials counted: every roll (or turns study) adds one count.
    fn trials_counted(&self, _run: usize, counts: &Self::Counts) -> u128 {
        crate::sim::total(counts)
    }

    fn rules(&self) -> serde_json::Value {
        json!({
            "system": self.header.system,
            "variants": self.variants.iter().map(|(n, t)| json!({"name": n, "table": t.table()})).collect::<Vec<_>>(),
            "small_stack_column": self.small_stack_column,
        })
    }
}

/// SP eliminated by each outcome of the attrition table.
fn losses(table: &CompiledD6Table) -> Vec<u32> {
    table
        .outcomes()
        .iter()
        .map(|o| lookup::leading_number(o).unwrap_or(0))
        .collect()
}

fn column_of(sp: u32, small_stack_column: bool) -> Option<usize> {
    if sp == 0 {
        return None;
    }
    lookup::attrition_column(sp).or(small_stack_column.then_some(0))
}

/// The turns study exactly: a Markov chain over SP, turn by turn.
fn turns_exact(
    table: &CompiledD6Table,
    study: TurnsStudy,
    small_stack_column: bool,
) -> Vec<Vec<f64>> {
    let loss = losses(table);
    let size = study.sp as usize + 1;
    let mut exact = vec![vec![0.0; size]];
    exact[0][study.sp as usize] = 1.0;
    for _ in 0..study.turns {
        let before = exact.last().expect("the start").clone();
        let mut after = vec![0.0; size];
        for (sp, &p) in before.iter().enumerate().filter(|(_, p)| **p > 0.0) {
            match column_of(sp as u32, small_stack_column) {
                None => after[sp] += p,
                Some(column) => {
                    for &face in table.faces(column, study.drm) {
                        let left = sp.saturating_sub(loss[usize::from(face)] as usize);
                        after[left] += p / 6.0;
                    }
                }
            }
        }
        exact.push(after);
    }
    exact
}
