//! Reading an analysis file safely: bounded size, bounded shape, errors in the
//! designer's words.
//!
//! Why this module exists: every analysis file, whatever its system, passes through the
//! same three gates before its own parser sees it, so that no input can exhaust memory
//! or time and no error speaks Rust:
//!
//! 1. [`read_analysis_file`] reads at most [`limits::MAX_FILE_BYTES`] (so `/dev/zero` or
//!    a wrong, huge file is refused at once) and insists on UTF-8 text.
//! 2. [`check_shape`] refuses any list or table with more than
//!    [`limits::MAX_LIST_ITEMS`] entries and nesting deeper than [`limits::MAX_NESTING`],
//!    naming the key, its line and the cap.
//! 3. [`describe_error`] turns the TOML parser's and serde's messages ("invalid type:
//!    string \"x\", expected i64", "expected struct VariantSpec", "u64 value was too
//!    large") into what a designer reads ("field `side.a.sp`: expected a whole number,
//!    got the text \"x\""), names the key from the error's position, and never echoes
//!    more than a few dozen characters of what the user wrote.

use std::io::Read;
use std::ops::Range;
use std::path::Path;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::limits::{self, MAX_FILE_BYTES, MAX_LIST_ITEMS, MAX_NESTING};

/// Why an analysis file was refused.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("cannot read analysis file {file}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}: {}", limits::tidy(message))]
    Syntax { file: String, message: String },
    #[error("{file}{}: field `{}`: {}", line.map(|l| format!(", line {l}")).unwrap_or_default(), limits::tidy(field), limits::tidy(message))]
    Invalid {
        file: String,
        line: Option<usize>,
        field: String,
        message: String,
    },
}

/// Reads an analysis file: at most [`MAX_FILE_BYTES`], UTF-8.
pub fn read_analysis_file(path: &Path) -> Result<String, AnalysisError> {
    let file = path.display().to_string();
    let read_error = |source| AnalysisError::Read {
        file: file.clone(),
        source,
    };
    let handle = std::fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    handle
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(AnalysisError::Syntax {
            file,
            message: format!(
                "the file is larger than {} KiB; an analysis file is a few kilobytes of TOML — is this the right file?",
                MAX_FILE_BYTES / 1024
            ),
        });
    }
    String::from_utf8(bytes).map_err(|e| AnalysisError::Syntax {
        file,
        message: format!(
            "the file is not UTF-8 text (a bad byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        ),
    })
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Refuses lists and tables longer than [`MAX_LIST_ITEMS`] and nesting deeper than
/// [`MAX_NESTING`]. A file the TOML parser refuses passes here: its syntax error is
/// reported by the typed parse.
pub fn check_shape(file: &str, text: &str) -> Result<(), AnalysisError> {
    let Ok(document) = DeTable::parse(text) else {
        return Ok(());
    };
    let error = |span: Range<usize>, field: &str, message: String| AnalysisError::Invalid {
        file: file.to_string(),
        line: Some(line_of(text, span.start)),
        field: if field.is_empty() {
            "(the file)".into()
        } else {
            field.to_string()
        },
        message,
    };
    fn walk(
        value: &DeValue,
        span: Range<usize>,
        path: &str,
        depth: usize,
        error: &dyn Fn(Range<usize>, &str, String) -> AnalysisError,
    ) -> Result<(), AnalysisError> {
        if depth > MAX_NESTING {
            return Err(error(
                span,
                path,
                format!("lists and tables nest at most {MAX_NESTING} deep here"),
            ));
        }
        match value {
            DeValue::Array(items) => {
                if items.len() > MAX_LIST_ITEMS {
                    return Err(error(
                        span,
                        path,
                        format!(
                            "a list holds at most {MAX_LIST_ITEMS} items, this one {}",
                            items.len()
                        ),
                    ));
                }
                for (i, item) in items.iter().enumerate() {
                    walk(
                        item.get_ref(),
                        item.span(),
                        &format!("{path}[{i}]"),
                        depth + 1,
                        error,
                    )?;
                }
            }
            DeValue::Table(table) => {
                if table.len() > MAX_LIST_ITEMS {
                    return Err(error(
                        span,
                        path,
                        format!(
                            "a table holds at most {MAX_LIST_ITEMS} keys, this one {}",
                            table.len()
                        ),
                    ));
                }
                for (key, item) in table.iter() {
                    let key = key.get_ref().as_ref();
                    let child = if path.is_empty() {
                        key.to_string()
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(item.get_ref(), item.span(), &child, depth + 1, error)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
    let span = document.span();
    let table = DeValue::Table(document.into_inner());
    walk(&table, span, "", 0, &error)
}

/// The line of the top-level key `key` (`[sweep]`, `sweep = …`, or the first `sweep.x`),
/// if the file has it.
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let document = DeTable::parse(text).ok()?;
    document
        .get_ref()
        .iter()
        .find(|(k, _)| k.get_ref().as_ref() == key)
        .map(|(k, _)| line_of(text, k.span().start))
}

/// The allowed name closest to `unknown`, if one is close enough to be a slip of the
/// keyboard (`system_zz` → `system`, `moral` → `morale`).
pub fn closest<'a>(unknown: &str, allowed: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    allowed
        .into_iter()
        .map(|name| (strsim::jaro_winkler(unknown, name), name))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

/// The dotted key (with list indices) whose value lies at byte `offset`, if any: the
/// innermost one.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let document = DeTable::parse(text).ok()?;
    fn find(table: &DeTable, offset: usize, path: &str) -> Option<String> {
        for (key, value) in table.iter() {
            let name = key.get_ref().as_ref();
            let child = if path.is_empty() {
                name.to_string()
            } else {
                format!("{path}.{name}")
            };
            let inside = value.span().contains(&offset) || key.span().contains(&offset);
            if let Some(found) = within(value, offset, &child) {
                return Some(found);
            }
            if inside {
                return Some(child);
            }
        }
        None
    }
    fn within(value: &Spanned<DeValue>, offset: usize, path: &str) -> Option<String> {
        match value.get_ref() {
            DeValue::Table(table) => find(table, offset, path),
            DeValue::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
                let child = format!("{path}[{i}]");
                within(item, offset, &child)
                    .or_else(|| item.span().contains(&offset).then_some(child))
            }),
            _ => None,
        }
    }
    find(document.get_ref(), offset, "")
}

/// Whether byte `offset` lies in a top-level key's plain value (not a table): where serde
/// points for a key missing from the top-level table itself.
fn starts_with_a_top_level_value(text: &str, offset: usize) -> bool {
    DeTable::parse(text).is_ok_and(|document| {
        document.get_ref().iter().any(|(key, value)| {
            (key.span().contains(&offset) || value.span().contains(&offset))
                && !matches!(value.get_ref(), DeValue::Table(_))
        })
    })
}

/// An error from the TOML parser or from serde while reading `file`, in a designer's
/// words: the line (and column for syntax errors), the key where one can be named, and
/// what is allowed; quoted values are cut to [`limits::MAX_ECHO_CHARS`].
pub fn describe_error(file: &str, text: &str, error: &toml::de::Error) -> AnalysisError {
    let message = friendly(error.message());
    let Some(span) = error.span() else {
        return AnalysisError::Syntax {
            file: file.to_string(),
            message,
        };
    };
    // A key missing from the file's top level: the parser points at the whole file, so
    // the key at its start (a plain value, such as `name = …`) is not at fault; the
    // missing key is the field, and no line holds it.
    if let Some(missing) = message.strip_prefix("missing key ") {
        if starts_with_a_top_level_value(text, span.start) {
            return AnalysisError::Invalid {
                file: file.to_string(),
                line: None,
                field: missing.trim_matches('`').to_string(),
                message: "missing: the file needs it, as a key above the first [table] or as its own [table] or [[table]]".into(),
            };
        }
    }
    let line = line_of(text, span.start);
    // An unknown key is named in the message; the field is the table that holds it.
    let key_at = key_at(text, span.start).map(|field| {
        match (
            message.strip_prefix("unknown key `"),
            field.rsplit_once('.'),
        ) {
            (Some(rest), Some((table, last))) if rest.starts_with(&format!("{last}`")) => {
                table.to_string()
            }
            _ => field,
        }
    });
    match key_at {
        Some(field) => AnalysisError::Invalid {
            file: file.to_string(),
            line: Some(line),
            field,
            message,
        },
        None => {
            let line_start = text[..span.start.min(text.len())]
                .rfind('\n')
                .map_or(0, |i| i + 1);
            let column = text
                .get(line_start..span.start.min(text.len()))
                .map_or(1, |s| s.chars().count() + 1);
            let line_text = text[line_start..].lines().next().unwrap_or("").trim();
            AnalysisError::Syntax {
                file: file.to_string(),
                message: format!(
                    "at line {line}, column {column}: {message} (the line reads: {})",
                    limits::echo(line_text)
                ),
            }
        }
    }
}

/// serde's type names as a designer would say them.
fn type_name(expected: &str) -> String {
    let e = expected.trim();
    if let Some(rest) = e.strip_prefix("one of ") {
        return format!("one of {}", rest.replace('`', ""));
    }
    match e {
        "i64" | "i32" | "u64" | "u32" | "u16" | "u8" | "i8" | "i16" | "usize" | "isize"
        | "an integer" | "i128" | "u128" => "a whole number".into(),
        "f64" | "f32" | "a float" => "a number".into(),
        "a string" | "a borrowed string" | "string" => "text in quotes".into(),
        "a boolean" | "bool" => "true or false".into(),
        "a sequence" | "a tuple" => "a list [ … ]".into(),
        "a map" => "a table".into(),
        _ if e.starts_with("struct ") || e.starts_with("a map") => "a table".into(),
        _ if e.starts_with("enum ") => "one of the allowed names".into(),
        _ => e.replace('`', ""),
    }
}

/// The range of serde's integer type names (a file's integers are `i64` at most).
fn int_range(expected: &str) -> (i128, i128) {
    match expected.trim() {
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" | "usize" => (0, i64::MAX.into()),
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN.into(), i64::MAX.into()),
    }
}

/// serde's description of what was found ("string \"x\"", "integer `3`").
fn found(what: &str) -> String {
    let what = what.trim();
    let quoted = |s: &str| limits::echo(s.trim_matches(|c| c == '"' || c == '`'));
    if let Some(rest) = what.strip_prefix("string ") {
        return format!("the text \"{}\"", quoted(rest));
    }
    if let Some(rest) = what.strip_prefix("integer ") {
        let number = rest.split_whitespace().next().unwrap_or(rest);
        return format!("the number {}", quoted(number));
    }
    if let Some(rest) = what.strip_prefix("floating point ") {
        let text = rest.trim_matches('`');
        return match text.parse::<f64>() {
            Ok(x) if x.is_finite() && (x.abs() >= 1e15 || (x != 0.0 && x.abs() < 1e-4)) => {
                format!("the decimal number {x:e}")
            }
            Ok(x) => format!("the decimal number {x}"),
            Err(_) => format!("the decimal number {}", quoted(text)),
        };
    }
    if let Some(rest) = what.strip_prefix("boolean ") {
        return quoted(rest);
    }
    match what {
        "map" => "a table".into(),
        "sequence" => "a list".into(),
        other => limits::echo(other),
    }
}

/// serde's "one of `a`, `b`" or "`a` or `b`" as "a, b".
fn allowed_list(expected: &str) -> String {
    expected
        .trim_start_matches("one of ")
        .replace(" or ", ", ")
        .replace('`', "")
}

/// Rewrites the parser's and serde's messages; anything unrecognised is kept, cut short.
fn friendly(message: &str) -> String {
    let message = message.trim();
    if let Some(rest) = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
    {
        if let Some((got, expected)) = rest.rsplit_once(", expected ") {
            // An integer refused where a whole number is expected is out of range.
            if got.starts_with("integer ")
                && (got.contains(" as ") || type_name(expected) == "a whole number")
            {
                let (lo, hi) = int_range(expected);
                return format!(
                    "{} is out of range: whole numbers here are {lo} to {hi}",
                    found(got)
                );
            }
            return format!("expected {}, got {}", type_name(expected), found(got));
        }
    }
    // serde reads a struct from a list, field by field: a list given for a table is
    // refused by its length, which must not name the parser's struct.
    if let Some((_, expected)) = message
        .strip_prefix("invalid length ")
        .and_then(|rest| rest.split_once(", expected "))
    {
        if expected.starts_with("struct ") {
            return "expected a table, got a list".into();
        }
    }
    if let Some(rest) = message.strip_prefix("unknown field ") {
        if let Some((key, allowed)) = rest.split_once(", expected ") {
            let allowed = allowed_list(allowed);
            let suggestion = closest(key.trim_matches('`'), allowed.split(", "))
                .map_or(String::new(), |name| format!("; did you mean `{name}`?"));
            return format!(
                "unknown key {}; allowed: {allowed}{suggestion}",
                limits::echo(key),
            );
        }
        if let Some((key, _)) = rest.split_once(", there are no fields") {
            return format!(
                "unknown key {}; this table takes no keys",
                limits::echo(key)
            );
        }
    }
    if let Some(rest) = message.strip_prefix("missing field ") {
        return format!("missing key {}", limits::echo(rest));
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        if let Some((value, allowed)) = rest.split_once(", expected ") {
            return format!(
                "unknown value {}; allowed: {}",
                limits::echo(value),
                allowed_list(allowed)
            );
        }
    }
    if message.contains("value was too large") || message.contains("number too large") {
        return format!(
            "the number is too large: whole numbers in an analysis file are {} to {}",
            i64::MIN,
            i64::MAX
        );
    }
    if message.contains("max recursion depth") || message.contains("recursion limit") {
        return format!("lists and tables nest too deep (at most {MAX_NESTING} levels)");
    }
    let mut cut: String = message.chars().take(200).collect();
    if cut.len() < message.len() {
        cut.push('…');
    }
    // Parser messages name the offending key in backticks; keep it short.
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(text: &str, error: &toml::de::Error) -> String {
        describe_error("f.toml", text, error).to_string()
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Side {
        sp: i64,
        morale: Option<i64>,
    }
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Doc {
        side: std::collections::BTreeMap<String, Side>,
        name: Option<String>,
    }

    fn error_of(text: &str) -> String {
        let e = toml::from_str::<Doc>(text).unwrap_err();
        describe(text, &e)
    }

    #[test]
    fn type_errors_name_the_key_and_the_type_in_words() {
        let text = "[side.a]\nsp = \"twelve\"\n";
        let e = error_of(text);
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains("side.a.sp"), "{e}");
        assert!(
            e.contains("expected a whole number, got the text \"twelve\""),
            "{e}"
        );
        let text = "[side]\na = 3\n";
        let e = error_of(text);
        assert!(e.contains("expected a table"), "{e}");
        assert!(!e.contains("struct"), "{e}");
        let text = "[side]\na = []\n";
        let e = error_of(text);
        assert!(e.contains("expected a table, got a list"), "{e}");
        assert!(!e.contains("struct"), "{e}");
    }

    #[test]
    fn unknown_and_missing_keys_say_what_is_allowed() {
        let e = error_of("[side.a]\nsp = 1\nspeed = 2\n");
        assert!(
            e.contains("unknown key `speed`; allowed: sp, morale"),
            "{e}"
        );
        let e = error_of("[side.a]\nmorale = 1\n");
        assert!(e.contains("missing key `sp`"), "{e}");
        // A key missing from the top level is the field, not the file's first key.
        let e = error_of("name = \"x\"\n");
        assert_eq!(
            e,
            "f.toml: field `side`: missing: the file needs it, as a key above the first [table] or as its own [table] or [[table]]"
        );
    }

    #[test]
    fn huge_numbers_and_long_values_are_not_echoed_whole() {
        for big in [
            "99999999999999999999",
            "18446744073709551615",
            "9223372036854775808",
        ] {
            let e = error_of(&format!("[side.a]\nsp = {big}\n"));
            assert!(e.contains("out of range"), "{e}");
        }
        let long = "x".repeat(100_000);
        let text = format!("[side.a]\nsp = \"{long}\"\n");
        let e = error_of(&text);
        assert!(e.len() < 400, "{} characters: {}", e.len(), &e[..200]);
        let text = format!("name = [{}\n", "1,".repeat(100_000));
        let e = error_of(&text);
        assert!(e.len() < 400, "{} characters", e.len());
    }

    #[test]
    fn long_lists_and_deep_nesting_are_refused_with_their_key() {
        let text = format!("[sweep]\ndrm = [{}]\n", vec!["1"; 2000].join(","));
        let e = check_shape("f.toml", &text).unwrap_err().to_string();
        assert!(e.contains("sweep.drm") && e.contains("at most 1001"), "{e}");
        let text = format!("x = {}1{}\n", "[".repeat(20), "]".repeat(20));
        let e = check_shape("f.toml", &text).unwrap_err().to_string();
        assert!(e.contains("nest at most"), "{e}");
        assert!(check_shape("f.toml", "[sweep]\ndrm = [1, 2]\n").is_ok());
    }
}
