//! The page's edits, made to the analysis text (and its rules file) before they are
//! parsed, so that a bad value is refused by the command line's own parser with its own
//! words, and so that "download" gives the file as the designer wrote it, comments kept.
//!
//! An edit is a dotted key path and a TOML value written as JSON:
//! `"sides.attacker.leader": 2`, `"sweep.terrain": [0, 1]`, `"side.a.tactic": "charge"`.
//! A segment may be quoted (`sweep."attacker.strength"`, `tables.crt.cells."3:1"`), a
//! number indexes an array (`variant.0.name`), and a path starting `rules:` edits the
//! rules file the analysis names (`rules:tables.crt.cells."3:1"`).

use std::collections::BTreeMap;

use serde_json::Value;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table};

use crate::Refusal;

/// Applies `edits` to the analysis `text` (named `name`) and to its rules file among
/// `files`; returns both edited.
pub fn apply(
    name: &str,
    text: &str,
    mut files: BTreeMap<String, String>,
    edits: &serde_json::Map<String, Value>,
) -> Result<(String, BTreeMap<String, String>), Refusal> {
    let (rules_edits, analysis_edits): (Vec<_>, Vec<_>) =
        edits.iter().partition(|(k, _)| k.starts_with("rules:"));
    let text = if analysis_edits.is_empty() {
        text.to_string()
    } else {
        edit_text(name, text, analysis_edits.into_iter())?
    };
    if !rules_edits.is_empty() {
        let rules = rules_file_of(name, &text, &files)?;
        let edited = edit_text(&rules, &files[&rules], rules_edits.into_iter())?;
        files.insert(rules, edited);
    }
    Ok((text, files))
}

/// The key in `files` of the rules file the analysis names (`rules = "…"`).
fn rules_file_of(
    name: &str,
    text: &str,
    files: &BTreeMap<String, String>,
) -> Result<String, Refusal> {
    let refuse = |message: String| Refusal {
        message,
        file: Some(name.to_string()),
        line: None,
        key: Some("rules".into()),
    };
    let table: toml::Table = toml::from_str(text)
        .map_err(|_| refuse(format!("{name}: the analysis is not valid TOML, so its rules file cannot be edited; fix the analysis first")))?;
    let Some(given) = table.get("rules").and_then(|v| v.as_str()) else {
        return Err(refuse(format!(
            "{name}: an edit starting `rules:` edits the rules file, but this analysis names none (`rules = \"…\"`)"
        )));
    };
    let key = battlelab_core::files::normalise(given.trim());
    if files.contains_key(&key) {
        Ok(key)
    } else {
        Err(refuse(format!(
            "{name}: its rules file \"{}\" was not given with the analysis (a shipped rules file cannot be edited: copy it beside the analysis and name the copy)",
            battlelab_core::limits::echo(given)
        )))
    }
}

/// `text` (the file `name`) with every edit made.
fn edit_text<'a>(
    name: &str,
    text: &str,
    edits: impl Iterator<Item = (&'a String, &'a Value)>,
) -> Result<String, Refusal> {
    // A file that is not TOML is left to the parser to refuse, with its words and line.
    let Ok(mut document) = text.parse::<DocumentMut>() else {
        return Ok(text.to_string());
    };
    for (path, value) in edits {
        let key = path.strip_prefix("rules:").unwrap_or(path);
        let refuse = |message: String| Refusal {
            message: format!("{name}: cannot edit `{key}`: {message}"),
            file: Some(name.to_string()),
            line: None,
            key: Some(key.to_string()),
        };
        let segments = split(key).map_err(&refuse)?;
        let value = to_toml(value).map_err(&refuse)?;
        set(document.as_item_mut(), &segments, value).map_err(&refuse)?;
    }
    Ok(document.to_string())
}

/// The segments of a dotted path; a segment may be quoted.
fn split(path: &str) -> Result<Vec<String>, String> {
    let mut segments = Vec::new();
    let mut chars = path.chars().peekable();
    loop {
        let mut segment = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some(c) => segment.push(c),
                    None => return Err("a quoted segment is not closed".into()),
                }
            }
            if !matches!(chars.peek(), None | Some('.')) {
                return Err("a quoted segment must end at a `.`".into());
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' {
                    break;
                }
                segment.push(c);
                chars.next();
            }
            if segment.is_empty() {
                return Err("a path has no empty segments (write `a.b.c`)".into());
            }
        }
        segments.push(segment);
        match chars.next() {
            Some('.') => continue,
            None => return Ok(segments),
            Some(_) => unreachable!("a segment ends at `.` or the end"),
        }
    }
}

/// A JSON value as a TOML value.
fn to_toml(value: &Value) -> Result<toml_edit::Value, String> {
    Ok(match value {
        Value::Null => return Err("null is not a TOML value; give a value".into()),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => match n.as_f64() {
                Some(f) => f.into(),
                None => return Err(format!("{n} is not a TOML number")),
            },
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            let mut array = Array::new();
            for item in items {
                array.push(to_toml(item)?);
            }
            toml_edit::Value::Array(array)
        }
        Value::Object(fields) => {
            let mut table = InlineTable::new();
            for (k, v) in fields {
                table.insert(k, to_toml(v)?);
            }
            toml_edit::Value::InlineTable(table)
        }
    })
}

/// Sets the value at `segments` under `item`, making the tables on the way; the value's
/// comment (its decor) is kept where it replaces one.
fn set(item: &mut Item, segments: &[String], value: toml_edit::Value) -> Result<(), String> {
    let (first, rest) = segments.split_first().expect("a path has a segment");
    if rest.is_empty() {
        return place(item, first, value);
    }
    let child = match item {
        Item::Table(table) => {
            if !table.contains_key(first) {
                let mut new = Table::new();
                new.set_implicit(true);
                table.insert(first, Item::Table(new));
            }
            table.get_mut(first).expect("inserted")
        }
        Item::ArrayOfTables(array) => {
            let index = index(first, array.len())?;
            return set_in_table(array.get_mut(index).expect("in range"), rest, value);
        }
        Item::Value(toml_edit::Value::InlineTable(table)) => {
            if !table.contains_key(first) {
                table.insert(first, toml_edit::Value::InlineTable(InlineTable::new()));
            }
            return set_in_value(table.get_mut(first).expect("inserted"), rest, value);
        }
        Item::Value(toml_edit::Value::Array(array)) => {
            let index = index(first, array.len())?;
            return set_in_value(array.get_mut(index).expect("in range"), rest, value);
        }
        _ => return Err(format!("`{first}` is not under a table or a list")),
    };
    set(child, rest, value)
}

fn set_in_table(
    table: &mut Table,
    segments: &[String],
    value: toml_edit::Value,
) -> Result<(), String> {
    let mut item = Item::Table(std::mem::take(table));
    let result = set(&mut item, segments, value);
    if let Item::Table(t) = item {
        *table = t;
    }
    result
}

fn set_in_value(
    at: &mut toml_edit::Value,
    segments: &[String],
    value: toml_edit::Value,
) -> Result<(), String> {
    let mut item = Item::Value(std::mem::replace(at, toml_edit::Value::from(false)));
    let result = set(&mut item, segments, value);
    if let Item::Value(v) = item {
        *at = v;
    }
    result
}

/// Sets `key` of the table or list `item` to `value`, keeping the old value's comment.
fn place(item: &mut Item, key: &str, mut value: toml_edit::Value) -> Result<(), String> {
    let keep = |old: Option<&toml_edit::Value>, value: &mut toml_edit::Value| {
        if let Some(old) = old {
            *value.decor_mut() = old.decor().clone();
        }
    };
    match item {
        Item::Table(table) => {
            keep(table.get(key).and_then(Item::as_value), &mut value);
            table.insert(key, Item::Value(value));
        }
        Item::Value(toml_edit::Value::InlineTable(table)) => {
            keep(table.get(key), &mut value);
            table.insert(key, value);
        }
        Item::Value(toml_edit::Value::Array(array)) => {
            let index = index(key, array.len())?;
            keep(array.get(index), &mut value);
            array.replace(index, value);
        }
        _ => return Err(format!("`{key}` is not under a table or a list")),
    }
    Ok(())
}

fn index(segment: &str, len: usize) -> Result<usize, String> {
    match segment.parse::<usize>() {
        Ok(i) if i < len => Ok(i),
        Ok(i) => Err(format!("the list has {len} entries; {i} is past its end")),
        Err(_) => Err(format!("`{segment}` indexes a list: give a number from 0")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edited(text: &str, edits: Value) -> String {
        let edits = edits.as_object().unwrap().clone();
        apply("a.toml", text, BTreeMap::new(), &edits).unwrap().0
    }

    #[test]
    fn an_edit_keeps_comments_and_changes_only_its_value() {
        let text = "# top\n[side.a]\nsp = 6 # six\ndrm = 0\n\n[sweep]\n\"a.sp\" = [1, 2]\n";
        let out = edited(
            text,
            serde_json::json!({"side.a.sp": 8, "sweep.\"a.sp\"": [3], "side.b.drm": -1}),
        );
        assert_eq!(
            out,
            "# top\n[side.a]\nsp = 8 # six\ndrm = 0\n\n[side.b]\ndrm = -1\n\n[sweep]\n\"a.sp\" = [3]\n"
        );
    }

    #[test]
    fn paths_split_on_dots_outside_quotes() {
        assert_eq!(split("a.\"b.c\".d").unwrap(), ["a", "b.c", "d"]);
        assert!(split("a..b").is_err());
        assert!(split("a.\"b").is_err());
    }

    #[test]
    fn an_edit_through_a_value_is_refused_naming_the_key() {
        let edits = serde_json::json!({"side.a.sp.x": 1});
        let e = apply(
            "a.toml",
            "[side.a]\nsp = 6\n",
            BTreeMap::new(),
            edits.as_object().unwrap(),
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("side.a.sp.x"));
        assert!(
            e.message.starts_with("a.toml: cannot edit `side.a.sp.x`"),
            "{}",
            e.message
        );
    }
}
