//! `describe`: what the page shows as inputs — the analysis's settings with what each
//! allows (from the core's key table, described once in the registry; for a rules file,
//! the settings it declares), a rules file's tables, the runs of the plan, its outcomes
//! and headlines.

use std::path::Path;

use battlelab_core::engine::headline::Headline;
use battlelab_core::keys::{self, FileSettings, KeyDoc, Origin, Ty};
use serde_json::{json, Value};
use toml_edit::{DocumentMut, Item};

use crate::{Parsed, Refusal};

pub fn describe(parsed: &Parsed) -> Result<Value, Refusal> {
    let study = &parsed.study;
    let header = study.header();
    let plan = study.plan();
    let document: toml::Table = toml::from_str(&parsed.text).unwrap_or_default();
    // The exact results decide which runs are exact: computed once, no trials run.
    let exact: Vec<bool> = study
        .clone()
        .start(0, header.seed)
        .finish()
        .map_err(|_| Refusal::request("the run was stopped"))?
        .runs
        .iter()
        .map(|r| r.exact)
        .collect();
    let outcomes = if plan.runs.is_empty() {
        Vec::new()
    } else {
        study.run_names(0).outcomes
    };
    Ok(json!({
        "system": header.system,
        "kind": study.kind(),
        "name": header.name,
        "description": document.get("description").and_then(|d| d.as_str()),
        "seed": header.seed,
        "trials": header.trials,
        "precision": header.precision,
        "unit": plan.unit,
        "settings": settings(parsed, &document),
        "tables": tables(parsed, &document),
        "runs": plan.runs.iter().zip(&exact).map(|(r, exact)| json!({
            "variant": r.variant,
            "coordinates": r.coordinates.iter().map(battlelab_core::analysis::AxisValue::to_json).collect::<Vec<_>>(),
            "exact": exact,
        })).collect::<Vec<_>>(),
        "axes": plan.axes,
        "outcomes": outcomes,
        "headlines": headlines(parsed).iter().map(|h| json!({"name": h.name, "key": h.key})).collect::<Vec<_>>(),
        "notices": study.notices(),
    }))
}

/// The settings the rules file the analysis names declares, read from the request's files.
fn companion_settings(parsed: &Parsed) -> Option<FileSettings> {
    let doc = battlelab_core::systems::doc(parsed.study.header().system)?;
    let companion = doc.companion?;
    let document: toml::Table = toml::from_str(&parsed.text).ok()?;
    let given = document.get(companion.key)?.as_str()?;
    (companion.settings)(&parsed.files, Path::new(&parsed.name), given).ok()
}

/// The headlines `value` and `solve` offer for this analysis, the first the default.
pub fn headlines(parsed: &Parsed) -> Vec<Headline> {
    if let Some(settings) = companion_settings(parsed) {
        return settings.headlines;
    }
    battlelab_core::systems::doc(parsed.study.header().system)
        .map(|doc| (doc.value.headlines)())
        .unwrap_or_default()
}

/// The value at a dotted path of the document, if the file gives one.
fn lookup<'a>(document: &'a toml::Table, path: &[String]) -> Option<&'a toml::Value> {
    let (first, rest) = path.split_first()?;
    let value = document.get(first)?;
    if rest.is_empty() {
        return Some(value);
    }
    lookup(value.as_table()?, rest)
}

fn json_of(value: &toml::Value) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A path as an edit names it: segments joined by dots, quoted where they hold one.
fn edit_path(segments: &[String]) -> String {
    segments
        .iter()
        .map(|s| {
            if s.contains('.') || s.contains('"') || s.is_empty() {
                format!("\"{s}\"")
            } else {
                s.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether a key's value is one input (a number, a word, a switch) the page can edit.
fn is_input(ty: &Ty) -> bool {
    matches!(
        ty,
        Ty::Int(..) | Ty::Float(..) | Ty::Bool | Ty::OneOf(_) | Ty::IntOr(..) | Ty::Tactic
    )
}

fn setting(
    path: &[String],
    doc: &KeyDoc,
    ty: &Ty,
    value: Option<&toml::Value>,
    swept: bool,
) -> Value {
    let (min, max) = match ty {
        Ty::Int(lo, hi) | Ty::IntOr(lo, hi, _) | Ty::CountOrTables(lo, hi) => {
            (json!(lo), json!(hi))
        }
        Ty::Float(lo, hi) => (json!(lo), json!(hi)),
        _ => (Value::Null, Value::Null),
    };
    let allowed = match ty {
        Ty::OneOf(words) | Ty::IntOr(_, _, words) => json!(words),
        Ty::Bool => json!([true, false]),
        _ => Value::Null,
    };
    // The default in words ("0", "true", "\"charge\"") read as the value it is.
    let default = toml::from_str::<toml::Table>(&format!("v = {}", doc.default))
        .ok()
        .and_then(|t| t.get("v").map(json_of));
    json!({
        "path": edit_path(path),
        "value": value.map(json_of).or(default.clone()),
        "set": value.is_some(),
        "default": default,
        "type": ty.name(),
        "min": min,
        "max": max,
        "allowed": allowed,
        "doc": doc.meaning,
        "side": side_of(path),
        "swept": swept,
    })
}

/// `side.a.drm` → `a`; `sides.attacker.strength` → `attacker`.
fn side_of(path: &[String]) -> Option<&str> {
    match path {
        [first, side, _, ..] if first == "side" || first == "sides" => Some(side),
        _ => None,
    }
}

/// Every concrete path of a documented key in this file: a `<name>` segment takes each
/// name the file gives there. Keys inside lists of tables are left out.
fn concrete(document: &toml::Table, pattern: &str) -> Vec<Vec<String>> {
    let segments = keys::segments(pattern);
    if segments.iter().any(|s| s.arrays > 0) || pattern.contains('[') {
        return Vec::new();
    }
    let mut paths: Vec<Vec<String>> = vec![Vec::new()];
    for segment in segments {
        let mut next = Vec::new();
        for path in paths {
            if segment.is_placeholder() {
                let names = lookup(document, &path)
                    .and_then(|v| v.as_table())
                    .map(|t| t.keys().cloned().collect::<Vec<_>>())
                    .or_else(|| path.is_empty().then(|| document.keys().cloned().collect()))
                    .unwrap_or_default();
                for name in names {
                    let mut p = path.clone();
                    p.push(name);
                    next.push(p);
                }
            } else {
                let mut p = path;
                p.push(segment.name.clone());
                next.push(p);
            }
        }
        paths = next;
    }
    paths
}

fn settings(parsed: &Parsed, document: &toml::Table) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let sweep = document.get("sweep").and_then(|s| s.as_table());
    let swept = |parameter: &str| sweep.is_some_and(|s| s.contains_key(parameter));
    // A rules file's declared settings first: they are the analysis's levers.
    if let Some(file) = companion_settings(parsed) {
        for s in &file.settings {
            let path: Vec<String> = s.key.split('.').map(str::to_string).collect();
            let value = lookup(document, &path);
            let default = s.default.map(|d| json!(d));
            seen.push(edit_path(&path));
            out.push(json!({
                "path": edit_path(&path),
                "value": value.map(json_of).or(default.clone()),
                "set": value.is_some(),
                "default": default,
                "type": "integer",
                "min": s.min,
                "max": s.max,
                "allowed": null,
                "doc": s.meaning,
                "kind": s.kind,
                "side": side_of(&path),
                "swept": swept(&s.name),
            }));
        }
    }
    let Some(doc) = battlelab_core::systems::doc(parsed.study.header().system) else {
        return out;
    };
    for row in doc.rows() {
        match row.origin {
            Origin::Key if is_input(&row.doc.ty) => {
                let parameters = row.doc.sweep_parameters();
                let expanded = keys::expand(row.doc.path);
                let parameter = expanded
                    .iter()
                    .position(|p| *p == row.path)
                    .and_then(|i| {
                        (parameters.len() == expanded.len()).then(|| parameters[i].clone())
                    })
                    .or_else(|| (parameters.len() == 1).then(|| parameters[0].clone()));
                for path in concrete(document, &row.path) {
                    let key = edit_path(&path);
                    if seen.contains(&key) {
                        continue;
                    }
                    seen.push(key);
                    let is_swept = parameter.as_deref().is_some_and(swept);
                    out.push(setting(
                        &path,
                        &row.doc,
                        &row.doc.ty,
                        lookup(document, &path),
                        is_swept,
                    ));
                }
            }
            // The swept values the file gives: each a list (or range) to edit whole.
            Origin::Sweep => {
                let Some(parameter) = row.path.strip_prefix("sweep.") else {
                    continue;
                };
                let Some(value) = sweep.and_then(|s| s.get(parameter)) else {
                    continue;
                };
                let path = vec!["sweep".to_string(), parameter.to_string()];
                let key = edit_path(&path);
                if !seen.contains(&key) {
                    seen.push(key);
                    out.push(setting(&path, &row.doc, &row.doc.ty, Some(value), true));
                }
            }
            _ => {}
        }
    }
    // A rules file's parameters swept by name (`[sweep] terrain = [0, 1, 2]`).
    if let Some(sweep) = sweep {
        for (parameter, value) in sweep {
            let path = vec!["sweep".to_string(), parameter.clone()];
            let key = edit_path(&path);
            if !seen.contains(&key) {
                seen.push(key.clone());
                out.push(json!({
                    "path": key, "value": json_of(value), "set": true, "default": null,
                    "type": "list or range", "min": null, "max": null, "allowed": null,
                    "doc": format!("the values {parameter} is swept over"),
                    "side": null, "swept": true,
                }));
            }
        }
    }
    out
}

/// JSON of a `toml_edit` value, as written.
fn edit_json(item: &Item) -> Value {
    match item {
        Item::Value(v) => v
            .to_string()
            .trim()
            .parse::<toml::Value>()
            .ok()
            .or_else(|| {
                toml::from_str::<toml::Table>(&format!("v = {v}"))
                    .ok()
                    .and_then(|t| t.get("v").cloned())
            })
            .map_or(Value::Null, |v| json_of(&v)),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), edit_json(v)))
                .collect(),
        ),
        _ => Value::Null,
    }
}

/// The tables of the rules file the analysis names, cells as written, in file order:
/// each column's cells edit at `rules:tables.<name>.cells."<column>"`.
fn tables(parsed: &Parsed, document: &toml::Table) -> Vec<Value> {
    let Some(given) = document.get("rules").and_then(|r| r.as_str()) else {
        return Vec::new();
    };
    let key = battlelab_core::files::normalise(given.trim());
    let Some(text) = parsed.files.files().get(&key) else {
        return Vec::new();
    };
    let Ok(rules) = text.parse::<DocumentMut>() else {
        return Vec::new();
    };
    let Some(tables) = rules.get("tables").and_then(Item::as_table_like) else {
        return Vec::new();
    };
    tables
        .iter()
        .filter_map(|(name, table)| {
            let table = table.as_table_like()?;
            let cells = table.get("cells")?.as_table_like()?;
            let path = edit_path(&["tables".into(), name.into(), "cells".into()]);
            Some(json!({
                "path": format!("rules:{path}"),
                "name": name,
                "means": table.get("means").and_then(Item::as_str),
                "columns": cells.iter().map(|(c, _)| c).collect::<Vec<_>>(),
                "cells": cells.iter().map(|(_, v)| edit_json(v)).collect::<Vec<_>>(),
            }))
        })
        .collect()
}
