//! `battlelab keys`, `battlelab new` and `battlelab schema`: the tool teaches its own
//! files. All three read one table per system (`battlelab::keys`, each system's `KEYS`
//! beside its parser).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::json;

use battlelab::keys::{KeyDoc, SystemDoc};

use super::{emit, print_out, usage};
use crate::cli::{KeysArgs, KeysFormat, NewArgs};

/// The documentation of the companion files systems read (a rules file's format).
fn companion_docs() -> Vec<SystemDoc> {
    battlelab_core::systems::docs()
        .iter()
        .filter_map(|d| d.companion.map(|c| *c.doc))
        .collect()
}

fn system_doc(name: &str) -> Result<SystemDoc> {
    if let Some(doc) = companion_docs().into_iter().find(|d| d.name == name) {
        return Ok(doc);
    }
    battlelab_core::systems::doc(name).ok_or_else(|| {
        let names: Vec<_> = battlelab_core::systems::docs()
            .iter()
            .map(|d| d.name)
            .collect();
        usage(format!(
            "unknown system \"{}\"; allowed: {}, {} (the format of the file such an analysis names), or that file's path (its settings)",
            battlelab::limits::echo(name),
            names.join(", "),
            companion_docs().iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
        ))
        .into()
    })
}

/// One key as `keys` prints it: path, type, default, allowed, sweep, variant, meaning.
fn columns(system: &str, doc: &KeyDoc) -> [String; 7] {
    [
        doc.path.to_string(),
        doc.ty.name().to_string(),
        doc.default.to_string(),
        doc.ty.allowed(system),
        doc.sweep_parameters().join(", "),
        doc.variant_path().unwrap_or_default(),
        doc.meaning.to_string(),
    ]
}

const HEADINGS: [&str; 7] = [
    "key", "type", "default", "allowed", "sweep", "variant", "meaning",
];

/// An aligned text table (the last column is not padded).
fn aligned(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..width)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line += cell;
            } else {
                line += &format!("{cell:<w$}  ", w = widths[c]);
            }
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}

fn markdown(rows: &[Vec<String>]) -> String {
    let escape = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .map(|c| {
                if i > 0 && !c.is_empty() && c != "–" {
                    format!("`{}`", escape(c)).replace("``", "")
                } else {
                    escape(c)
                }
            })
            .collect();
        out += &format!("| {} |\n", cells.join(" | "));
        if i == 0 {
            out += &format!("|{}\n", "---|".repeat(row.len()));
        }
    }
    out
}

/// `battlelab keys [SYSTEM]`.
pub fn keys(args: KeysArgs) -> Result<()> {
    let Some(name) = args.system else {
        let systems = battlelab_core::systems::docs();
        let text = match args.format {
            KeysFormat::Json => {
                let list: Vec<_> = systems
                    .iter()
                    .map(|d| json!({"system": d.name, "summary": d.summary}))
                    .collect();
                serde_json::to_string_pretty(&list)? + "\n"
            }
            KeysFormat::Text | KeysFormat::Md => {
                let mut rows = vec![vec!["system".to_string(), "what it runs".to_string()]];
                rows.extend(
                    systems
                        .iter()
                        .map(|d| vec![d.name.to_string(), d.summary.to_string()]),
                );
                let table = if matches!(args.format, KeysFormat::Md) {
                    markdown(&rows)
                } else {
                    aligned(&rows)
                };
                table + "\nbattlelab keys SYSTEM: every key of its file; battlelab new SYSTEM: a starting file; battlelab schema SYSTEM: its JSON Schema\n"
            }
        };
        return emit(&text);
    };
    if name.ends_with(".toml") && Path::new(&name).is_file() {
        return emit(&companion_settings(Path::new(&name), args.format)?);
    }
    let doc = system_doc(&name)?;
    let text = match args.format {
        KeysFormat::Json => {
            let list: Vec<_> = doc
                .keys()
                .map(|k| {
                    json!({
                        "key": k.path,
                        "type": k.ty.name(),
                        "required": k.required(),
                        "default": k.default,
                        "allowed": k.ty.allowed(doc.name),
                        "schema": k.ty.schema(doc.name),
                        "example": k.example,
                        "sweep": k.sweep_parameters(),
                        "variant": k.variant_path(),
                        "meaning": k.meaning,
                    })
                })
                .collect();
            serde_json::to_string_pretty(&json!({
                "system": doc.name,
                "summary": doc.summary,
                "keys": list,
            }))? + "\n"
        }
        KeysFormat::Text | KeysFormat::Md => {
            let mut rows = vec![HEADINGS.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
            rows.extend(doc.keys().map(|k| columns(doc.name, k).to_vec()));
            if matches!(args.format, KeysFormat::Md) {
                format!("## {} — {}\n\n{}", doc.name, doc.summary, markdown(&rows))
            } else {
                format!(
                    "{}: {}\n{{a,b}} is each side; <name> a key you choose; [[variant]] an array of tables.\n\n{}",
                    doc.name,
                    doc.summary,
                    aligned(&rows)
                )
            }
        }
    };
    emit(&text)
}

/// `battlelab keys FILE`: the settings a companion file (a rules file) declares — what
/// its analyses set, sweep, and `value`/`solve` turn.
fn companion_settings(path: &Path, format: KeysFormat) -> Result<String> {
    let mut last = None;
    for doc in battlelab_core::systems::docs() {
        let Some(companion) = doc.companion else {
            continue;
        };
        match (companion.settings_of_file)(path) {
            Ok(file) => return settings_table(path, &file, format),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => anyhow::Error::from(e),
        None => usage(format!("{}: no system reads such a file", path.display())).into(),
    })
}

fn settings_table(
    path: &Path,
    file: &battlelab::keys::FileSettings,
    format: KeysFormat,
) -> Result<String> {
    let rows: Vec<[String; 6]> = file
        .settings
        .iter()
        .map(|s| {
            [
                s.name.clone(),
                s.key.clone(),
                s.kind.clone(),
                s.default.map_or("required".to_string(), |v| v.to_string()),
                format!("{} to {}", s.min, s.max),
                s.meaning.clone(),
            ]
        })
        .collect();
    Ok(match format {
        KeysFormat::Json => {
            let list: Vec<_> = rows
                .iter()
                .map(|r| json!({"setting": r[0], "key": r[1], "kind": r[2], "default": r[3], "allowed": r[4], "meaning": r[5]}))
                .collect();
            serde_json::to_string_pretty(
                &json!({"file": path.display().to_string(), "name": file.title, "settings": list}),
            )? + "\n"
        }
        KeysFormat::Text | KeysFormat::Md => {
            let mut table = vec![["setting", "key", "kind", "default", "allowed", "meaning"]
                .map(String::from)
                .to_vec()];
            table.extend(rows.iter().map(|r| r.to_vec()));
            let body = if matches!(format, KeysFormat::Md) {
                markdown(&table)
            } else {
                aligned(&table)
            };
            format!(
                "{} ({}): the settings an analysis sets under the keys below, sweeps by the setting's name ([sweep] \"attacker.strength\" = …), and value/solve turn\n\n{body}",
                file.title,
                path.display()
            )
        }
    })
}

/// The file `battlelab new` writes: a commented starting file, then every key of the
/// system as a comment.
pub fn starting_file(doc: &SystemDoc) -> String {
    if companion_docs().iter().any(|d| d.name == doc.name) {
        // A companion file's starter is commented throughout, and not an analysis.
        return doc.starter.to_string();
    }
    let mut out = format!(
        "# A {} analysis: {}.\n# Check it: battlelab validate FILE; run it: battlelab run FILE.\n# Every key: battlelab keys {}; a JSON Schema for editors: battlelab schema {}.\n\n",
        doc.name, doc.summary, doc.name, doc.name
    );
    out += doc.starter;
    out += &format!(
        "\n# ---- Every key of a {} file (battlelab keys {}) ----\n",
        doc.name, doc.name
    );
    for k in doc.keys() {
        let mut line = format!("# {}: {}", k.path, k.ty.name());
        let allowed = k.ty.allowed(doc.name);
        if !allowed.is_empty() {
            line += &format!(", {allowed}");
        }
        line += &format!("; default {}", k.default);
        let sweep = k.sweep_parameters();
        if !sweep.is_empty() {
            line += &format!("; sweep {}", sweep.join(", "));
        }
        if let Some(v) = k.variant_path() {
            line += &format!("; variant {v}");
        }
        out += &line;
        out += &format!("\n#     {}\n", k.meaning);
    }
    out
}

/// `battlelab new SYSTEM [NAME]`.
pub fn new(args: NewArgs) -> Result<()> {
    let doc = system_doc(&args.system)?;
    let name = args.name.unwrap_or_else(|| doc.name.to_string());
    let path = if name.ends_with(".toml") {
        PathBuf::from(&name)
    } else {
        PathBuf::from(format!("{name}.toml"))
    };
    if path.exists() {
        return Err(usage(format!(
            "{} exists; battlelab new never overwrites a file: give another NAME or remove it",
            path.display()
        ))
        .into());
    }
    if let Some(companion) = doc.companion {
        // The analysis and the starting companion file it names, side by side.
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file_name = format!("{stem}.{}.toml", companion.suffix);
        let companion_path = path.with_file_name(&file_name);
        if companion_path.exists() {
            return Err(usage(format!(
                "{} exists; battlelab new never overwrites a file: give another NAME or remove it",
                companion_path.display()
            ))
            .into());
        }
        let text = starting_file(&doc)
            .lines()
            .map(|line| {
                if line.starts_with(&format!("{} =", companion.key)) {
                    format!("{} = \"{file_name}\"   # the file beside this one; edit it to describe your game", companion.key)
                } else {
                    line.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
        write_new(&companion_path, companion.doc.starter)?;
        write_new(&path, &text)?;
        return print_out(&format!(
            "wrote {} and the file it names, {}: battlelab validate {} checks them, battlelab run {} runs them\n",
            path.display(),
            companion_path.display(),
            path.display(),
            path.display()
        ));
    }
    write_new(&path, &starting_file(&doc))?;
    print_out(&format!(
        "wrote {}: battlelab validate {} checks it, battlelab run {} runs it\n",
        path.display(),
        path.display(),
        path.display()
    ))
}

/// Writes `text` at `path` only if nothing is there, and whole or not at all: into a
/// temporary file beside it, fsynced, then hard-linked into place (which fails if the
/// name was taken meanwhile). A file system without hard links gets an error rather than
/// a file written in place.
fn write_new(path: &Path, text: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{file_name}.new-{}", std::process::id()));
    // A stop waits until the temporary file is linked or removed (a moment).
    let _deferral = battlelab::interrupt::defer();
    // `create_new`: a file already at the temporary name is not ours, neither to write
    // nor to remove.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .with_context(|| format!("could not create {}", temp.display()))?;
    let result = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("could not write {}", temp.display()))
        .and_then(|()| match std::fs::hard_link(&temp, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(usage(format!(
                "{} exists; battlelab new never overwrites a file",
                path.display()
            ))
            .into()),
            Err(e) => {
                Err(anyhow::Error::from(e).context(format!("could not create {}", path.display())))
            }
        });
    // The temporary file is ours (created above); the file at `path`, if any, is kept.
    let _ = std::fs::remove_file(&temp);
    result
}

/// `battlelab schema SYSTEM`.
pub fn schema(system: &str) -> Result<()> {
    let doc = system_doc(system)?;
    emit(&(serde_json::to_string_pretty(&doc.schema())? + "\n"))
}
