//! The header every analysis file shares, parsed once: the report name, the description,
//! the system, the seed, the trials, the precision, and where a system has them `exact`,
//! `[tables]` and the names and descriptions of its `[[variant]]`s.
//!
//! Why this module exists: these keys mean the same in every system's file and are
//! checked the same way, so they are declared, checked and held here once. A system's
//! parser reads its own keys; its study keeps the [`AnalysisHeader`] whole, and
//! [`crate::engine::System::header`] reads from it. `[[expect]]` and `[value]` are
//! shared keys too, but they are judged against a study's plan, after it is parsed (by
//! [`crate::engine::expect`] and by the `value` command); a file only declares them here
//! (`analysis_file!`).
//!
//! A system's file is read twice: once into its own struct, declared with
//! `analysis_file!` (which adds the shared keys, with their types, in the place every
//! file has them), so that an unknown key or a wrong type anywhere in the file is the
//! first error, exactly as the key table allows and in the order the file gives them;
//! then by [`AnalysisHeader::parse`], which reads and checks the shared keys alone.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::analysis::{
    self, AnalysisError, Lines, Source, TableFormat, TablesOptions, TablesSpec, DEFAULT_SEED,
    DEFAULT_TRIALS, MAX_TRIALS,
};
use crate::limits;

/// The shared keys of an analysis file, checked.
#[derive(Clone, Debug)]
pub struct AnalysisHeader {
    /// The file as the command line named it.
    pub path: PathBuf,
    /// The report folder's name: `name = …`, else the file's stem.
    pub name: String,
    /// The system as the file names it ("field", "attrition", "ratio", …).
    pub system: String,
    /// One text shown in the report.
    pub description: Option<String>,
    pub seed: u64,
    /// Trials per grid point and variant.
    pub trials: u64,
    /// `precision = …`: the half-width every simulated probability's 95% interval must
    /// reach (trials is then the cap).
    pub precision: Option<f64>,
    /// `exact = …` (true where the file does not say; only systems whose enumeration can
    /// be turned off accept the key).
    pub exact: bool,
    /// `[tables]`: how `tables.md` prints chances (the default where the system has no
    /// `[tables]`).
    pub tables: TablesOptions,
    /// The `[[variant]]`s, in file order; empty where the file has none.
    pub variants: Vec<VariantHeading>,
}

/// A `[[variant]]`'s name and description, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantHeading {
    pub name: String,
    pub description: Option<String>,
    /// The line of its `name`, for errors about the variant as a whole.
    pub line: usize,
}

/// The formats a system's `[tables]` may ask for, and for a refused one why (e.g. "the
/// d6 tables are single d6 rolls").
#[derive(Clone, Copy, Debug)]
pub struct TableFormats {
    pub allowed: &'static [TableFormat],
    pub why: &'static str,
}

/// The shared keys as written. Lenient: the system's own struct has already refused any
/// key the file may not hold and any value of the wrong type.
#[derive(Deserialize)]
struct HeaderFile {
    name: Option<Spanned<String>>,
    description: Option<Spanned<String>>,
    system: Option<Spanned<String>>,
    seed: Option<Spanned<i64>>,
    trials: Option<Spanned<i64>>,
    exact: Option<bool>,
    precision: Option<Spanned<toml::Value>>,
    tables: Option<TablesSpec>,
    variant: Option<Vec<VariantHeadingSpec>>,
}

#[derive(Deserialize)]
struct VariantHeadingSpec {
    name: Spanned<String>,
    description: Option<Spanned<String>>,
}

impl AnalysisHeader {
    /// Reads and checks the shared keys of `source`, the file at `path`: the name (or the
    /// file's stem), the seed, the trials, the description, the precision, `[tables]`
    /// against `tables` (the system's formats; `None` for a system without `[tables]`)
    /// and every variant's name and description, in that order.
    pub fn parse(
        path: &Path,
        source: &Source,
        tables: Option<&TableFormats>,
    ) -> Result<Self, AnalysisError> {
        let file: HeaderFile = toml::from_str(source.text)
            .map_err(|e| crate::toml_input::describe_error(&source.file, source.text, &e))?;
        let name = report_name(source, path, file.name.as_ref())?;
        let seed = match &file.seed {
            Some(seed) => source.int_in(seed, "seed", 0, i64::MAX, "the seed")? as u64,
            None => DEFAULT_SEED,
        };
        let trials = match &file.trials {
            Some(trials) => source.int_in(
                trials,
                "trials",
                1,
                MAX_TRIALS as i64,
                "trials per grid point",
            )? as u64,
            None => DEFAULT_TRIALS,
        };
        let description = file
            .description
            .as_ref()
            .map(|d| {
                analysis::report_text(source, d, "description", "the description", Lines::Several)
            })
            .transpose()?;
        let precision = file
            .precision
            .as_ref()
            .map(|p| analysis::checked_precision(&source.file, source.text, p))
            .transpose()?;
        let tables = match tables {
            Some(formats) => {
                TablesOptions::parse(source, file.tables.as_ref(), formats.allowed, formats.why)?
            }
            None => TablesOptions::default(),
        };
        Ok(Self {
            path: path.to_path_buf(),
            name,
            system: file.system.map(Spanned::into_inner).unwrap_or_default(),
            description,
            seed,
            trials,
            precision,
            exact: file.exact.unwrap_or(true),
            tables,
            variants: variants(source, file.variant.as_deref().unwrap_or_default())?,
        })
    }

    /// What the engine and the commands read of it.
    pub fn view(&self) -> crate::engine::Header<'_> {
        crate::engine::Header {
            name: &self.name,
            system: &self.system,
            seed: self.seed,
            trials: self.trials,
            precision: self.precision,
            tables: self.tables,
        }
    }

    /// The names runs are told apart by: the variants', or "base" where the file has none.
    pub fn variant_names(&self) -> Vec<String> {
        if self.variants.is_empty() {
            vec!["base".into()]
        } else {
            self.variants.iter().map(|v| v.name.clone()).collect()
        }
    }
}

/// The report folder name, checked: `name = …` (letters, digits, `_` and `-`, at most
/// [`limits::MAX_NAME_CHARS`]), else the file's stem made one.
fn report_name(
    source: &Source,
    path: &Path,
    name: Option<&Spanned<String>>,
) -> Result<String, AnalysisError> {
    let Some(name) = name else {
        return default_report_name(path).ok_or_else(|| {
            source.error_at(
                None,
                "name",
                format!(
                    "the file name does not give a report folder name (it needs a letter or digit); add name = \"…\" (letters, digits, '_' and '-', at most {} characters)",
                    limits::MAX_NAME_CHARS
                ),
            )
        });
    };
    let text = name.get_ref();
    let valid = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err(source.error(
            name,
            "name",
            format!(
                "the report folder name may use letters, digits, '_' and '-' only, got \"{}\"",
                limits::echo(text)
            ),
        ));
    }
    if text.chars().count() > limits::MAX_NAME_CHARS {
        return Err(source.error(
            name,
            "name",
            format!(
                "the report folder name is {} characters long; at most {} are allowed",
                text.chars().count(),
                limits::MAX_NAME_CHARS
            ),
        ));
    }
    Ok(text.clone())
}

/// The report folder name a file gets when it names none: its stem, with every character
/// other than ASCII letters, digits, `_` and `-` made `_`, runs of `_` made one and the
/// ends trimmed, at most [`limits::MAX_NAME_CHARS`] long. `None` if nothing is left
/// (`...toml` must not become the folder `..`).
fn default_report_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_string_lossy();
    let mut name = String::new();
    for c in stem.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && (name.is_empty() || name.ends_with('_'))) {
            name.push(c);
        }
    }
    let name: String = name
        .trim_end_matches('_')
        .chars()
        .take(limits::MAX_NAME_CHARS)
        .collect();
    name.chars()
        .any(|c| c.is_ascii_alphanumeric())
        .then_some(name)
}

/// Every `[[variant]]`'s name (not empty, and different from the earlier ones also as a
/// file name, [`analysis::variant_name`]) and description, in file order.
fn variants(
    source: &Source,
    specs: &[VariantHeadingSpec],
) -> Result<Vec<VariantHeading>, AnalysisError> {
    let mut headings: Vec<VariantHeading> = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let field = format!("variant[{i}]");
        let taken: Vec<&str> = headings.iter().map(|v| v.name.as_str()).collect();
        let name = analysis::variant_name(source, &spec.name, &field, &taken)?;
        let description = spec
            .description
            .as_ref()
            .map(|d| {
                analysis::report_text(
                    source,
                    d,
                    &format!("{field}.description"),
                    "a variant's description",
                    Lines::Several,
                )
            })
            .transpose()?;
        headings.push(VariantHeading {
            name,
            description,
            line: source.line_of(spec.name.span()),
        });
    }
    Ok(headings)
}

/// Declares a system's file as written: its own keys, between the shared ones every file
/// has in the same places — `name`, `description`, `system`, `seed`, `trials` (and, where
/// the struct starts with `exact,`, `exact`) first, `expect`, `precision` and `value`
/// last — with unknown keys refused. The shared keys are typed here as
/// [`AnalysisHeader::parse`] reads them, so that one pass over the file meets every wrong
/// type in the file's order; they are not read from this struct. The order of the fields
/// is the list an unknown key's error gives as allowed.
///
/// ```ignore
/// analysis_file! {
///     struct NavalFile {
///         fleet: FleetsSpec,
///         variant: Option<Vec<VariantSpec>>,
///     }
/// }
/// ```
macro_rules! analysis_file {
    ($(#[$meta:meta])* struct $file:ident { exact, $($own:tt)* }) => {
        $crate::header::analysis_file!(@emit $(#[$meta])* $file [
            #[allow(dead_code)]
            exact: Option<bool>,
        ] $($own)*);
    };
    ($(#[$meta:meta])* struct $file:ident { $($own:tt)* }) => {
        $crate::header::analysis_file!(@emit $(#[$meta])* $file [] $($own)*);
    };
    (@emit $(#[$meta:meta])* $file:ident [$($exact:tt)*] $($own:tt)*) => {
        $(#[$meta])*
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $file {
            #[allow(dead_code)]
            name: Option<toml::Spanned<String>>,
            #[allow(dead_code)]
            description: Option<toml::Spanned<String>>,
            #[allow(dead_code)]
            system: toml::Spanned<String>,
            #[allow(dead_code)]
            seed: Option<toml::Spanned<i64>>,
            #[allow(dead_code)]
            trials: Option<toml::Spanned<i64>>,
            $($exact)*
            $($own)*
            /// Balance assertions, judged against the plan (`engine::expect`).
            #[allow(dead_code)]
            expect: Option<serde::de::IgnoredAny>,
            /// Run until precise: checked by [`AnalysisHeader::parse`].
            #[allow(dead_code)]
            precision: Option<serde::de::IgnoredAny>,
            /// What `battlelab value` prices, read by the `value` command.
            #[allow(dead_code)]
            value: Option<serde::de::IgnoredAny>,
        }
    };
}
pub(crate) use analysis_file;

/// Declares a system's `[[variant]]` table as written: `name` and `description` first
/// (checked by [`AnalysisHeader::parse`], typed here so that a wrong type is met where the
/// file gives it), then the system's own overrides, unknown keys refused.
///
/// ```ignore
/// variant_table! {
///     struct VariantSpec {
///         rules: Option<CellOverrides>,
///     }
/// }
/// ```
macro_rules! variant_table {
    ($(#[$meta:meta])* struct $variant:ident { $($own:tt)* }) => {
        $(#[$meta])*
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct $variant {
            /// Read by [`AnalysisHeader::parse`].
            #[allow(dead_code)]
            name: toml::Spanned<String>,
            /// Read by [`AnalysisHeader::parse`].
            #[allow(dead_code)]
            description: Option<toml::Spanned<String>>,
            $($own)*
        }
    };
}
pub(crate) use variant_table;

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Result<AnalysisHeader, String> {
        let source = Source::new(Path::new("study one.toml"), text);
        AnalysisHeader::parse(Path::new("study one.toml"), &source, None).map_err(|e| e.to_string())
    }

    #[test]
    fn the_shared_keys_are_read_with_their_defaults() {
        let h = header("system = \"setup\"\n").unwrap();
        assert_eq!(h.name, "study_one");
        assert_eq!(h.system, "setup");
        assert_eq!((h.seed, h.trials), (DEFAULT_SEED, DEFAULT_TRIALS));
        assert_eq!(
            (h.description.as_deref(), h.precision, h.exact),
            (None, None, true)
        );
        assert_eq!(h.tables, TablesOptions::default());
        assert_eq!(h.variant_names(), ["base"]);
        let h = header(
            "name = \"s\"\ndescription = \"why\"\nsystem = \"ratio\"\nseed = 7\ntrials = 20\nexact = false\nprecision = 0.01\n[[variant]]\nname = \" one \"\n[[variant]]\nname = \"two\"\ndescription = \"2\"\n",
        )
        .unwrap();
        assert_eq!((h.name.as_str(), h.seed, h.trials), ("s", 7, 20));
        assert_eq!(h.description.as_deref(), Some("why"));
        assert_eq!((h.precision, h.exact), (Some(0.01), false));
        assert_eq!(
            h.variants,
            [
                VariantHeading {
                    name: "one".into(),
                    description: None,
                    line: 9
                },
                VariantHeading {
                    name: "two".into(),
                    description: Some("2".into()),
                    line: 11
                }
            ]
        );
        assert_eq!(h.variant_names(), ["one", "two"]);
    }

    #[test]
    fn each_shared_key_is_refused_with_its_field_and_line() {
        for (text, expected) in [
            (
                "\nseed = -1\n",
                "line 2: field `seed`: the seed must be 0 to",
            ),
            (
                "trials = 0\n",
                "line 1: field `trials`: trials per grid point must be 1 to",
            ),
            (
                "name = \"a b\"\n",
                "line 1: field `name`: the report folder name may use",
            ),
            (
                "precision = 0.5\n",
                "line 1: field `precision`: the half-width",
            ),
            (
                "description = \"\\u0007\"\n",
                "line 1: field `description`: the description may not hold control characters",
            ),
            (
                "[[variant]]\nname = \"x\"\n[[variant]]\nname = \"X!\"\n",
                "line 4: field `variant[1].name`: \"x\" and \"X!\" would name the same chart files",
            ),
            (
                "[[variant]]\nname = \"x\"\ndescription = \"\\u001b\"\n",
                "line 3: field `variant[0].description`: a variant's description may not hold",
            ),
        ] {
            let error = header(text).unwrap_err();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
        // The name is checked first, then the seed, then the trials, then the rest.
        let error = header("trials = 0\nseed = -1\nname = \"a b\"\n").unwrap_err();
        assert!(error.contains("field `name`"), "{error}");
        let error = header("trials = 0\nseed = -1\n").unwrap_err();
        assert!(error.contains("field `seed`"), "{error}");
    }

    #[test]
    fn tables_are_read_against_the_systems_formats_only() {
        let text = "[tables]\nformat = \"in36\"\n";
        let source = Source::new(Path::new("f.toml"), text);
        let d6 = TableFormats {
            allowed: &[TableFormat::Percent, TableFormat::In6],
            why: "one d6",
        };
        let error = AnalysisHeader::parse(Path::new("f.toml"), &source, Some(&d6))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("field `tables.format`: \"in36\" is not available here: one d6"),
            "{error}"
        );
        let field = TableFormats {
            allowed: &[TableFormat::Percent, TableFormat::In36],
            why: "",
        };
        let h = AnalysisHeader::parse(Path::new("f.toml"), &source, Some(&field)).unwrap();
        assert_eq!(h.tables.format, TableFormat::In36);
    }

    /// Every system's file lists the shared keys in the same places around its own, in the
    /// order an unknown key's error gives as allowed (the lists as they were before the
    /// header was shared), and its `[[variant]]` table likewise.
    #[test]
    fn each_systems_file_holds_the_shared_keys_in_their_places() {
        use crate::systems::{d6_tables, field, frontier, melee, naval_engagement, ratio, setup};
        type Parse = fn(&Path, &str) -> Result<(), AnalysisError>;
        let parsers: [(&str, Parse); 7] = [
            ("field", |p, t| field::FieldStudy::parse(p, t).map(drop)),
            ("frontier", |p, t| {
                frontier::FrontierStudy::parse(p, t).map(drop)
            }),
            ("melee", |p, t| melee::MeleeStudy::parse(p, t).map(drop)),
            ("naval_engagement", |p, t| {
                naval_engagement::NavalEngagementStudy::parse(p, t).map(drop)
            }),
            ("ratio", |p, t| ratio::RatioStudy::parse(p, t).map(drop)),
            ("setup", |p, t| setup::SetupStudy::parse(p, t).map(drop)),
            ("attrition", |p, t| {
                d6_tables::D6TableStudy::parse(p, t).map(drop)
            }),
        ];
        let shared = "name, description, system, seed, trials";
        let last = "expect, precision, value";
        let allowed = [
            format!("{shared}, exact, battle, side, sweep, rules, variant, equilibrium, tables, {last}"),
            format!("{shared}, battle, side, crt, sensitivity, {last}"),
            format!("{shared}, exact, options, profiles, engagement, round_robin, sweep, variant, {last}"),
            format!("{shared}, engagement, fleet, sweep, rules, variant, {last}"),
            format!("{shared}, exact, battle, side, skirmish, sweep, variant, {last}"),
            format!("{shared}, state, {last}"),
            format!("{shared}, roll, sweep, rules, variant, turns, tables, {last}"),
        ];
        for ((system, parse), allowed) in parsers.iter().zip(&allowed) {
            let error = parse(
                Path::new("f.toml"),
                &format!("system = \"{system}\"\nbogus = 1\n"),
            )
            .unwrap_err()
            .to_string();
            assert!(
                error.ends_with(&format!("unknown key `bogus`; allowed: {allowed}")),
                "{system}: {error}"
            );
        }
        let variant_keys = [
            ("field", "rules, tactic"),
            ("naval_engagement", "rules"),
            ("ratio", "a, b, battle"),
            ("attrition", "rules"),
        ];
        for (system, own) in variant_keys {
            let (_, parse) = parsers.iter().find(|(s, _)| *s == system).unwrap();
            let error = parse(
                Path::new("f.toml"),
                &format!("system = \"{system}\"\n[[variant]]\nname = \"v\"\nbogus = 1\n"),
            )
            .unwrap_err()
            .to_string();
            assert!(
                error.ends_with(&format!(
                    "unknown key `bogus`; allowed: name, description, {own}"
                )),
                "{system}: {error}"
            );
        }
    }
}
