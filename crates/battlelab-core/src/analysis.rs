//! The analysis-file boundary every system shares: what an error says, sweep axes and
//! their values, the texts a report shows, variant names, the grid. The keys every file
//! shares (name, seed, trials, …) are read once, by [`crate::header`].
//!
//! Why this module exists: every system's parser (under [`crate::systems`]) turns a
//! designer's TOML into validated plain data the same way — unknown keys refused, every
//! value held to its allowed range, errors naming the file, the line, the field, the
//! value and what is allowed — so the shared parts are written once, here. After a
//! system's `parse` succeeds, running it cannot fail on input.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use toml::Spanned;

use crate::limits;

/// Trials per grid point when the file gives none.
pub const DEFAULT_TRIALS: u64 = 1_000_000;

/// Seed when the file gives none.
pub const DEFAULT_SEED: u64 = 1;

/// Most trials one grid point may ask for (the same bound as `--trials`).
pub use crate::limits::MAX_TRIALS;

/// Most grid points × variants one analysis may hold.
pub const MAX_RUNS: usize = 10_000;

// Defined with the reading of the file that first refuses it; used here under its old path.
pub use crate::toml_input::AnalysisError;

/// One value a sweep axis (or an extra axis of a plan) takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AxisValue {
    Int(i64),
    Odds {
        larger: u32,
        smaller: u32,
    },
    /// A name: a profile, a policy, a terrain.
    Text(String),
    /// The axis does not apply to this run (a null in the frames).
    Unset,
}

impl AxisValue {
    /// The value as a number, for charts' axes and sorting: odds as their ratio.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            AxisValue::Int(v) => Some(*v as f64),
            AxisValue::Odds { larger, smaller } => Some(f64::from(*larger) / f64::from(*smaller)),
            AxisValue::Text(_) | AxisValue::Unset => None,
        }
    }

    /// The value as the frames write it, in JSON (the page's panel matches runs by it): a
    /// number, a text (odds as "3:2"), or null where unset.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            AxisValue::Int(i) => serde_json::json!(i),
            AxisValue::Unset => serde_json::Value::Null,
            other => serde_json::json!(other.to_string()),
        }
    }
}

impl fmt::Display for AxisValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AxisValue::Int(v) => write!(f, "{v}"),
            AxisValue::Odds { larger, smaller } => write!(f, "{larger}:{smaller}"),
            AxisValue::Text(t) => f.write_str(t),
            AxisValue::Unset => f.write_str("–"),
        }
    }
}

/// A swept parameter and its values, in file order.
#[derive(Clone, Debug)]
pub struct SweepAxis {
    pub parameter: String,
    pub values: Vec<AxisValue>,
}

/// Turns byte spans into line numbers and builds errors for one file.
pub struct Source<'a> {
    pub file: String,
    pub text: &'a str,
}

impl<'a> Source<'a> {
    /// The file at `path` (named so in errors) holding `text`.
    pub fn new(path: &Path, text: &'a str) -> Self {
        Self {
            file: path.display().to_string(),
            text,
        }
    }

    /// The file's TOML as `T`; a syntax error, unknown key or wrong type names the file
    /// and the parser's line.
    pub fn parse_toml<T: serde::de::DeserializeOwned>(&self) -> Result<T, AnalysisError> {
        crate::toml_input::check_shape(&self.file, self.text)?;
        toml::from_str(self.text)
            .map_err(|e| crate::toml_input::describe_error(&self.file, self.text, &e))
    }

    pub fn line_of(&self, span: std::ops::Range<usize>) -> usize {
        self.text[..span.start.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    pub fn error<T>(
        &self,
        spanned: &Spanned<T>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> AnalysisError {
        AnalysisError::Invalid {
            file: self.file.clone(),
            line: Some(self.line_of(spanned.span())),
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn error_at(
        &self,
        line: Option<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> AnalysisError {
        AnalysisError::Invalid {
            file: self.file.clone(),
            line,
            field: field.into(),
            message: message.into(),
        }
    }

    /// An integer held to `lo..=hi`.
    pub fn int_in(
        &self,
        value: &Spanned<i64>,
        field: &str,
        lo: i64,
        hi: i64,
        what: &str,
    ) -> Result<i64, AnalysisError> {
        let v = *value.get_ref();
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(self.error(
                value,
                field,
                format!("{what} must be {lo} to {hi}, got {v}"),
            ))
        }
    }
}

/// Reads `[sweep]` into axes in the order of `parameters`, with each axis's line.
pub fn sweep_axes(
    source: &Source,
    sweep: Option<&BTreeMap<String, Spanned<toml::Value>>>,
    parameters: &[&str],
) -> Result<(Vec<SweepAxis>, Vec<Option<usize>>), AnalysisError> {
    sweep_axes_with_names(source, sweep, parameters, &[])
}

/// [`sweep_axes`], where the parameters in `named` (a rules file's choices,
/// `attacker.stance`) are swept as lists of names (`["attack", "uniform"]`), each
/// checked by the system.
pub fn sweep_axes_with_names(
    source: &Source,
    sweep: Option<&BTreeMap<String, Spanned<toml::Value>>>,
    parameters: &[&str],
    named: &[&str],
) -> Result<(Vec<SweepAxis>, Vec<Option<usize>>), AnalysisError> {
    let Some(sweep) = sweep else {
        return Ok((Vec::new(), Vec::new()));
    };
    // Flatten dotted keys: `a.sp = [..]` arrives as `a = { sp = [..] }`.
    let mut entries: Vec<(String, toml::Value, &Spanned<toml::Value>)> = Vec::new();
    for (key, value) in sweep {
        match value.get_ref() {
            // `drm = {}` sweeps nothing: refused, or the axis would vanish unnoticed.
            toml::Value::Table(table) if table.is_empty() => {
                return Err(source.error(
                    value,
                    format!("sweep.{key}"),
                    "an empty table sweeps nothing; sweep a list ([1, 2, 3]) or a range ({ from = -3, to = 3 }), or remove the key",
                ));
            }
            toml::Value::Table(table) if !is_range(table) => {
                for (inner, v) in table {
                    entries.push((format!("{key}.{inner}"), v.clone(), value));
                }
            }
            v => entries.push((key.clone(), v.clone(), value)),
        }
    }
    if entries.is_empty() {
        return Err(source.error_at(
            crate::toml_input::line_of_key(source.text, "sweep"),
            "sweep",
            format!(
                "an empty [sweep]; give at least one of {} or remove [sweep]",
                parameters.join(", ")
            ),
        ));
    }
    let mut axes = Vec::new();
    for (parameter, value, spanned) in entries {
        let field = format!("sweep.{parameter}");
        if !parameters.contains(&parameter.as_str()) {
            return Err(source.error(
                spanned,
                &field,
                format!(
                    "cannot sweep \"{parameter}\"; sweepable parameters: {}",
                    parameters.join(", ")
                ),
            ));
        }
        let values = if named.contains(&parameter.as_str()) {
            named_values(&parameter, &value)
        } else {
            axis_values(&parameter, &value)
        }
        .map_err(|m| source.error(spanned, &field, m))?;
        if values.is_empty() {
            return Err(source.error(spanned, &field, "an empty sweep; give at least one value"));
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(source.error(spanned, &field, format!("the value {v} appears twice")));
            }
        }
        axes.push((parameter, values, Some(source.line_of(spanned.span()))));
    }
    if axes.iter().any(|a| a.0 == "odds") && axes.iter().any(|a| a.0 == "a.sp") {
        return Err(source.error_at(
            None,
            "sweep.odds",
            "odds sets side A's SP from side B's; sweep either odds or a.sp, not both",
        ));
    }
    axes.sort_by_key(|a| parameters.iter().position(|p| *p == a.0));
    let lines = axes.iter().map(|a| a.2).collect();
    Ok((
        axes.into_iter()
            .map(|(parameter, values, _)| SweepAxis { parameter, values })
            .collect(),
        lines,
    ))
}

fn is_range(table: &toml::Table) -> bool {
    table.contains_key("from") || table.contains_key("to")
}

/// A swept list of names (a policy per value: an option or "uniform").
fn named_values(parameter: &str, value: &toml::Value) -> Result<Vec<AxisValue>, String> {
    let wanted = || {
        format!("{parameter} is swept as a list of its options or \"uniform\", e.g. [\"attack\", \"defend\", \"uniform\"]")
    };
    value
        .as_array()
        .ok_or_else(wanted)?
        .iter()
        .map(|v| {
            v.as_str()
                .map(|t| AxisValue::Text(t.trim().to_string()))
                .ok_or_else(|| format!("{}, got {v}", wanted()))
        })
        .collect()
}

fn axis_values(parameter: &str, value: &toml::Value) -> Result<Vec<AxisValue>, String> {
    if parameter == "odds" {
        let list = value.as_array().ok_or(
            "odds are swept as a list of ratios, e.g. [\"1:1\", \"3:2\", \"2:1\", \"3:1\"]",
        )?;
        return list
            .iter()
            .map(|v| {
                let text = v
                    .as_str()
                    .ok_or("odds are written as strings, e.g. \"3:2\"")?;
                crate::rules::parse_odds_ratio(text)
                    .filter(|(l, s)| l >= s)
                    .map(|(larger, smaller)| AxisValue::Odds { larger, smaller })
                    .ok_or(format!(
                        "odds are written L:S with L ≥ S, e.g. \"3:2\"; got \"{text}\""
                    ))
            })
            .collect();
    }
    if parameter.ends_with(".tactic") {
        // Field battles' tactic policies: names, checked by the field parser.
        let list = value.as_array().ok_or(
            "tactics are swept as a list of names, e.g. [\"charge\", \"envelop\", \"uniform\", \"equilibrium\"]",
        )?;
        return list
            .iter()
            .map(|v| {
                v.as_str()
                    .map(|t| AxisValue::Text(t.trim().to_string()))
                    .ok_or(format!(
                        "tactics are swept as names (\"charge\", \"uniform\", \"equilibrium\"), got {v}"
                    ))
            })
            .collect();
    }
    match value {
        toml::Value::Array(list) => list
            .iter()
            .map(|v| {
                v.as_integer()
                    .map(AxisValue::Int)
                    .ok_or(format!("{parameter} takes whole numbers, got {v}"))
            })
            .collect(),
        toml::Value::Table(range) => {
            let get = |key: &str| {
                range.get(key).map(|v| {
                    v.as_integer()
                        .ok_or(format!("{key} must be a whole number"))
                })
            };
            for key in range.keys() {
                if !["from", "to", "step"].contains(&key.as_str()) {
                    return Err(format!(
                        "a range has from, to and step; unknown key \"{key}\""
                    ));
                }
            }
            let from = get("from").ok_or("a range needs from")??;
            let to = get("to").ok_or("a range needs to")??;
            let step = get("step").unwrap_or(Ok(1))?;
            if step <= 0 {
                return Err(format!("step must be positive, got {step}"));
            }
            if from > to {
                return Err(format!("an empty range: from ({from}) is above to ({to})"));
            }
            // In i128: `to - from` of two i64 values cannot overflow there.
            let count = (i128::from(to) - i128::from(from)) / i128::from(step);
            if count > 1000 {
                return Err("a range may hold at most 1001 values".into());
            }
            Ok((0..=count as i64)
                .map(|k| AxisValue::Int(from + k * step))
                .collect())
        }
        other => Err(format!(
            "sweep a list ([1, 2, 3]) or a range ({{ from = -3, to = 3 }}), got {other}"
        )),
    }
}

/// A variant's name, checked: not empty, at most [`limits::MAX_NAME_CHARS`] characters,
/// and different from every earlier name in `taken` also as a file name: chart files are
/// named after [`slug`], so "printed", "Printed" and "printed!" would
/// overwrite each other's charts.
pub fn variant_name(
    source: &Source,
    name: &Spanned<String>,
    field: &str,
    taken: &[&str],
) -> Result<String, AnalysisError> {
    let text = name.get_ref().trim();
    let refuse = |message: String| Err(source.error(name, format!("{field}.name"), message));
    if text.is_empty() {
        return refuse("each variant needs a non-empty name of its own".into());
    }
    let count = text.chars().count();
    if count > limits::MAX_NAME_CHARS {
        return refuse(format!(
            "a variant name is at most {} characters, got {count}",
            limits::MAX_NAME_CHARS
        ));
    }
    if let Some(refused) = control_character(text, Lines::One) {
        return refuse(control_message("a variant name", refused, Lines::One));
    }
    let own = slug(text);
    if own.is_empty() {
        return refuse(format!(
            "a variant name needs a letter or digit (it names chart files), got \"{}\"",
            limits::echo(text)
        ));
    }
    let file = file_slug(text);
    if let Some(other) = taken
        .iter()
        .find(|t| slug(t) == own || file_slug(t) == file)
    {
        return refuse(if *other == text {
            format!(
                "each variant needs a non-empty name of its own; \"{}\" is used twice",
                limits::echo(text)
            )
        } else {
            format!(
                "\"{}\" and \"{}\" would name the same chart files (…_{file}.png); give variants names that differ in their letters or digits",
                limits::echo(other),
                limits::echo(text)
            )
        });
    }
    Ok(text.to_string())
}

/// Whether a text from the file may run over several lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lines {
    /// A name: one line, no tab.
    One,
    /// A description: tabs and line breaks (`\n`, `\r\n`) are its own.
    Several,
}

/// The first character of `text` no report may show: a control character — C0
/// (U+0000–U+001F), DEL (U+007F) or C1 (U+0080–U+009F) — other than, in a text of
/// [`Lines::Several`], a tab, a newline or a carriage return before a newline. Such a
/// character written raw into `tables.md` is a terminal escape when the file is `cat`.
pub fn control_character(text: &str, lines: Lines) -> Option<(usize, char)> {
    let mut chars = text.chars().enumerate().peekable();
    while let Some((at, c)) = chars.next() {
        let allowed = lines == Lines::Several
            && (c == '\t'
                || c == '\n'
                || (c == '\r' && chars.peek().is_some_and(|(_, next)| *next == '\n')));
        if c.is_control() && !allowed {
            return Some((at + 1, c));
        }
    }
    None
}

/// What an error says of a control character found by [`control_character`] in `what`
/// ("a side name").
pub fn control_message(what: &str, (at, c): (usize, char), lines: Lines) -> String {
    let allowed = match lines {
        Lines::One => "letters, digits, spaces and punctuation on one line",
        Lines::Several => "plain text (tabs and line breaks are fine)",
    };
    format!(
        "{what} may not hold control characters (they reach tables.md and the page, where a terminal would run them); found U+{:04X} at character {at}; write {allowed}",
        u32::from(c)
    )
}

/// A text of the file that reaches a report — a description, a side's, a unit's or a
/// profile's name — checked the one way every system checks it: no control characters
/// ([`control_character`]), and for a name ([`Lines::One`]) not blank and at most
/// [`limits::MAX_NAME_CHARS`] characters. `field` is the key ("side.a.name"), `what`
/// the text in words ("a side name"). Returns the text, a name trimmed.
pub fn report_text(
    source: &Source,
    value: &Spanned<String>,
    field: &str,
    what: &str,
    lines: Lines,
) -> Result<String, AnalysisError> {
    report_text_at(source, value, value.get_ref(), field, what, lines)
}

/// [`report_text`] of a text read from inside a larger value `value` (a unit's name in a
/// list of unit tables), the error naming that value's line.
pub fn report_text_at<T>(
    source: &Source,
    value: &Spanned<T>,
    text: &str,
    field: &str,
    what: &str,
    lines: Lines,
) -> Result<String, AnalysisError> {
    let text = match lines {
        Lines::One => text.trim(),
        Lines::Several => text,
    };
    if let Some(refused) = control_character(text, lines) {
        return Err(source.error(value, field, control_message(what, refused, lines)));
    }
    if lines == Lines::One {
        if text.is_empty() {
            return Err(source.error(value, field, format!("{what} may not be blank")));
        }
        let count = text.chars().count();
        if count > limits::MAX_NAME_CHARS {
            return Err(source.error(
                value,
                field,
                format!(
                    "{what} is at most {} characters, got {count}",
                    limits::MAX_NAME_CHARS
                ),
            ));
        }
    }
    Ok(text.to_string())
}

/// Refuses a grid of more than [`MAX_RUNS`] runs (grid points × variants).
pub fn check_grid_size(
    source: &Source,
    axes: &[SweepAxis],
    variants: usize,
) -> Result<(), AnalysisError> {
    let points = axes
        .iter()
        .fold(1usize, |n, a| n.saturating_mul(a.values.len()));
    if points.saturating_mul(variants) > MAX_RUNS {
        return Err(source.error_at(
            None,
            "sweep",
            format!("{points} grid points × {variants} variants is more than {MAX_RUNS} runs; sweep fewer values"),
        ));
    }
    Ok(())
}

/// Every combination of axis values, the last axis varying fastest.
pub fn grid(axes: &[SweepAxis]) -> Vec<Vec<AxisValue>> {
    axes.iter().fold(vec![Vec::new()], |points, axis| {
        points
            .into_iter()
            .flat_map(|point| {
                axis.values.iter().map(move |v| {
                    let mut p = point.clone();
                    p.push(v.clone());
                    p
                })
            })
            .collect()
    })
}

/// A name as a file-name part: ASCII letters and digits lower-cased, every run of other
/// characters one `_`, no `_` at either end. Variant names are checked to differ here
/// ([`variant_name`]), so no two variants share a chart file.
pub fn slug(name: &str) -> String {
    let mut s = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.is_empty() && !s.ends_with('_') {
            s.push('_');
        }
    }
    s.truncate(s.trim_end_matches('_').len());
    s
}

/// One segment of a chart's file name: lower-case letters and digits, words joined by
/// `-` (segments are joined by `_`): "+1 argument" → `plus1-argument`, "a.leader" →
/// `a-leader`, "-2" → `minus2`, "3:2" → `3-2`.
pub fn file_slug(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next_digit = chars.get(i + 1).is_some_and(char::is_ascii_digit);
        let word_start = s.is_empty() || s.ends_with('-');
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if c == '+' && word_start {
            s.push_str("plus");
        } else if (c == '-' || c == '−') && word_start && next_digit {
            s.push_str("minus");
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    s.truncate(s.trim_end_matches('-').len());
    s
}

/// Largest `precision` (the 95% interval's half-width) a file or `--precision` may ask for.
pub const MAX_PRECISION: f64 = 0.25;

/// The `precision = …` of an analysis file, checked: the 95% interval half-width every
/// simulated probability must reach, greater than 0 and at most [`MAX_PRECISION`].
pub fn precision_of(file: &str, text: &str) -> Result<Option<f64>, AnalysisError> {
    #[derive(serde::Deserialize)]
    struct Only {
        precision: Option<Spanned<toml::Value>>,
    }
    let only: Only =
        toml::from_str(text).map_err(|e| crate::toml_input::describe_error(file, text, &e))?;
    only.precision
        .as_ref()
        .map(|value| checked_precision(file, text, value))
        .transpose()
}

/// A `precision = …` value, checked: a number above 0 and at most [`MAX_PRECISION`].
pub fn checked_precision(
    file: &str,
    text: &str,
    value: &Spanned<toml::Value>,
) -> Result<f64, AnalysisError> {
    let p = match value.get_ref() {
        toml::Value::Float(f) => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    };
    match p {
        Some(p) if p > 0.0 && p <= MAX_PRECISION => Ok(p),
        _ => Err(AnalysisError::Invalid {
            file: file.to_string(),
            line: Some(text[..value.span().start.min(text.len())].matches('\n').count() + 1),
            field: "precision".into(),
            message: format!(
                "the half-width of every 95% interval, above 0 and at most {MAX_PRECISION} (e.g. 0.002), got {}",
                limits::echo(&value.get_ref().to_string())
            ),
        }),
    }
}

/// A grid point as errors name it: `a.sp = 3, drm = -1`.
pub fn grid_point(axes: &[SweepAxis], coordinates: &[AxisValue]) -> String {
    axes.iter()
        .zip(coordinates)
        .map(|(a, v)| format!("{} = {v}", a.parameter))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where in a plan an error arose, as a message's suffix: ` (variant v, at the grid point
/// a = 1, b = 2)`, either part left out where it says nothing (no variant named, no axes).
pub fn describe_point(
    axes: &[SweepAxis],
    coordinates: &[AxisValue],
    variant: Option<&str>,
) -> String {
    let variant_note = variant.map(|v| format!("variant {v}"));
    let point =
        (!axes.is_empty()).then(|| format!("at the grid point {}", grid_point(axes, coordinates)));
    let parts: Vec<String> = variant_note.into_iter().chain(point).collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// How `tables.md` prints a chance: `[tables] format = "percent" | "fraction" | "in36" |
/// "in6"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Percentages with `decimals` digits, each row adding up to exactly 100.
    Percent,
    /// Exact fractions in lowest terms ("1/3").
    Fraction,
    /// Counts of the 36 faces of 2d6 ("12 in 36"): for 2d6 tables only.
    In36,
    /// Counts of the 6 faces of one d6 ("2 in 6"): for single-d6 tables only.
    In6,
}

impl TableFormat {
    pub const ALL: [TableFormat; 4] = [Self::Percent, Self::Fraction, Self::In36, Self::In6];

    /// The name written in the file.
    pub fn name(self) -> &'static str {
        match self {
            Self::Percent => "percent",
            Self::Fraction => "fraction",
            Self::In36 => "in36",
            Self::In6 => "in6",
        }
    }
}

/// `[tables]` as written: how `tables.md` prints its chances.
#[derive(serde::Deserialize, Default, Debug)]
#[serde(deny_unknown_fields)]
pub struct TablesSpec {
    format: Option<Spanned<String>>,
    decimals: Option<Spanned<i64>>,
}

/// `[tables]` validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TablesOptions {
    pub format: TableFormat,
    /// Digits after the point of a percentage, 0–4.
    pub decimals: u32,
}

impl Default for TablesOptions {
    fn default() -> Self {
        Self {
            format: TableFormat::Percent,
            decimals: 1,
        }
    }
}

/// Most digits after the point `[tables] decimals` may ask for.
pub const MAX_TABLE_DECIMALS: i64 = 4;

impl TablesOptions {
    /// Validates `[tables]` for a system whose rulebook tables can be printed in the
    /// formats `allowed`; `why` says, for a refused format, what the system's tables are
    /// (e.g. "the d6 tables are single d6 rolls").
    pub fn parse(
        source: &Source,
        spec: Option<&TablesSpec>,
        allowed: &[TableFormat],
        why: &str,
    ) -> Result<Self, AnalysisError> {
        let mut options = Self::default();
        let Some(spec) = spec else {
            return Ok(options);
        };
        let names = || {
            allowed
                .iter()
                .map(|f| format!("\"{}\"", f.name()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(format) = &spec.format {
            let text = format.get_ref().trim();
            let known = TableFormat::ALL.into_iter().find(|f| f.name() == text);
            options.format = match known {
                Some(f) if allowed.contains(&f) => f,
                Some(f) => {
                    return Err(source.error(
                        format,
                        "tables.format",
                        format!(
                            "\"{}\" is not available here: {why}; allowed: {}",
                            f.name(),
                            names()
                        ),
                    ))
                }
                None => {
                    return Err(source.error(
                        format,
                        "tables.format",
                        format!(
                            "unknown table format \"{}\"; allowed: {}",
                            crate::limits::echo(text),
                            names()
                        ),
                    ))
                }
            };
        }
        if let Some(decimals) = &spec.decimals {
            options.decimals = source.int_in(
                decimals,
                "tables.decimals",
                0,
                MAX_TABLE_DECIMALS,
                "digits after the point of a percentage",
            )? as u32;
        }
        Ok(options)
    }

    /// A row of exact chances `counts / total` as `tables.md` prints them in these
    /// options' format: percentages rounded to add up to exactly 100 (one moved away from
    /// its own nearest rounding marked [`MOVED_MARK`]), fractions in lowest terms, or
    /// counts of faces ("2 in 6"; a count that is not a whole number of faces prints as a
    /// fraction). The one printing of a rulebook's chances: the report's `tables.md` and
    /// the report page's recomputed cells (the WebAssembly module's `run`) both read it.
    pub fn print_chances(self, counts: &[u64], total: u64) -> PrintedChances {
        let fraction = |c: u64| {
            crate::exact::Fraction::new(u128::from(c), u128::from(total.max(1))).to_string()
        };
        let faces = |n: u128| -> Vec<String> {
            counts
                .iter()
                .map(|&c| {
                    let scaled = u128::from(c) * n;
                    if total > 0 && scaled.is_multiple_of(u128::from(total)) {
                        format!("{} in {n}", scaled / u128::from(total))
                    } else {
                        fraction(c)
                    }
                })
                .collect()
        };
        let unmoved = |texts: Vec<String>| PrintedChances {
            moved: vec![false; texts.len()],
            texts,
        };
        match self.format {
            TableFormat::Percent => {
                let row = crate::stats::rounded_percentages_exact(counts, self.decimals);
                PrintedChances {
                    texts: (0..row.units.len())
                        .map(|i| {
                            let text = row.text(i, self.decimals);
                            if row.moved[i] {
                                format!("{text}{MOVED_MARK}")
                            } else {
                                text
                            }
                        })
                        .collect(),
                    moved: row.moved,
                }
            }
            TableFormat::Fraction => unmoved(counts.iter().map(|&c| fraction(c)).collect()),
            TableFormat::In6 => unmoved(faces(6)),
            TableFormat::In36 => unmoved(faces(36)),
        }
    }
}

/// The mark after a percentage that rounding moved away from its own nearest value.
pub const MOVED_MARK: &str = "†";

/// One row of chances as `tables.md` prints them ([`TablesOptions::print_chances`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintedChances {
    /// Each chance's text, in the order of the counts.
    pub texts: Vec<String>,
    /// `moved[i]`: percentage `i` was moved away from its own nearest rounding (marked).
    pub moved: Vec<bool>,
}

impl PrintedChances {
    /// Whether a percentage of the row was moved (the table then carries the note).
    pub fn any_moved(&self) -> bool {
        self.moved.iter().any(|&m| m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chances_print_in_every_format_the_same_over_any_common_total() {
        let print = |format, decimals, counts: &[u64], total| {
            TablesOptions { format, decimals }.print_chances(counts, total)
        };
        // 2/6, 2/6, 2/6: a third moved to make 100.0, and marked.
        let thirds = print(TableFormat::Percent, 1, &[2, 2, 2], 6);
        assert_eq!(thirds.texts, ["33.4†", "33.3", "33.3"]);
        assert_eq!(thirds.moved, [true, false, false]);
        assert!(thirds.any_moved());
        assert_eq!(
            print(TableFormat::Percent, 0, &[1, 5], 6).texts,
            ["17", "83"]
        );
        // The same chances over 36 (a multiple of the total) print the same.
        assert_eq!(print(TableFormat::Percent, 1, &[12, 12, 12], 36), thirds);
        let fractions = print(TableFormat::Fraction, 1, &[0, 2, 4], 6);
        assert_eq!(fractions.texts, ["0", "1/3", "2/3"]);
        assert!(!fractions.any_moved());
        assert_eq!(print(TableFormat::Fraction, 1, &[0, 12, 24], 36), fractions);
        assert_eq!(
            print(TableFormat::In6, 1, &[1, 5], 6).texts,
            ["1 in 6", "5 in 6"]
        );
        assert_eq!(
            print(TableFormat::In36, 1, &[1, 5], 6).texts,
            ["6 in 36", "30 in 36"]
        );
        // Not a whole number of faces: the fraction.
        assert_eq!(print(TableFormat::In6, 1, &[1, 6], 7).texts, ["1/7", "6/7"]);
    }

    #[test]
    fn control_characters_are_found_where_a_report_would_show_them() {
        // C0, DEL and C1, each at its character position.
        assert_eq!(
            control_character("ok\u{1b}[31m", Lines::One),
            Some((3, '\u{1b}'))
        );
        assert_eq!(
            control_character("del\u{7f}", Lines::One),
            Some((4, '\u{7f}'))
        );
        assert_eq!(
            control_character("é\u{9b}", Lines::Several),
            Some((2, '\u{9b}'))
        );
        // A name is one line: no tab, no newline.
        assert_eq!(control_character("a\tb", Lines::One), Some((2, '\t')));
        assert_eq!(control_character("a\nb", Lines::One), Some((2, '\n')));
        // A description may break lines (also as CRLF) and hold tabs, nothing else.
        assert_eq!(control_character("a\tb\nc\r\nd", Lines::Several), None);
        assert_eq!(control_character("a\rb", Lines::Several), Some((2, '\r')));
        // Letters of any script, punctuation and format characters are text.
        assert_eq!(control_character("Ямщики — 3:2 ½", Lines::One), None);
    }

    #[test]
    fn a_report_text_is_refused_with_its_field_line_and_the_character() {
        let text = "x = 1\nname = \"At\\u0007tacker\"\n";
        #[derive(serde::Deserialize)]
        struct File {
            name: Spanned<String>,
        }
        let source = Source::new(Path::new("f.toml"), text);
        let file: File = toml::from_str(text).unwrap();
        let error = report_text(
            &source,
            &file.name,
            "side.a.name",
            "a side name",
            Lines::One,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with(
                "f.toml, line 2: field `side.a.name`: a side name may not hold control characters"
            ),
            "{error}"
        );
        assert!(error.contains("U+0007 at character 3"), "{error}");
        let fine: File = toml::from_str("name = \"  Attacker \"").unwrap();
        assert_eq!(
            report_text(
                &source,
                &fine.name,
                "side.a.name",
                "a side name",
                Lines::One
            )
            .unwrap(),
            "Attacker"
        );
    }
}
