//! The tool teaches its own files (`battlelab keys`, `new`, `schema`), and the key table
//! each system keeps beside its parser is held against that parser both ways:
//!
//! (a) every documented key, set to its documented example in a valid starting file, is
//!     not refused as unknown;
//! (b) every key of every shipped analysis, good test file and starting file is
//!     documented;
//! (c) a key the table does not document is refused, in every table of the file;
//! and the JSON Schema generated from the same table accepts every shipped file and
//! refuses a misspelt key.

use std::path::{Path, PathBuf};

mod common;

use battlelab::keys::{self, Node, Origin, SystemDoc};
use serde_json::Value;

/// What the engine reads from any text: the system's parse, `[[expect]]`, `precision`.
fn check(text: &str) -> Result<(), String> {
    let path = Path::new("keys_test.toml");
    let study = battlelab::systems::parse(path, text).map_err(|e| e.to_string())?;
    battlelab::systems::expectations(&*study, path, text).map_err(|e| e.to_string())?;
    battlelab::analysis::precision_of("keys_test.toml", text).map_err(|e| e.to_string())?;
    Ok(())
}

/// Words with which a parser refuses a key (rather than a value).
fn refuses_key(message: &str) -> bool {
    [
        "unknown key",
        "unknown field",
        "cannot sweep",
        " table has no ",
    ]
    .iter()
    .any(|w| message.contains(w))
}

fn example_name(placeholder: &str) -> &'static str {
    match placeholder {
        "<column>" | "<roll>" => "8",
        "<odds>" => "3:2",
        "<row>" => "D1",
        "<band>" => "6-10",
        "<tactic>" => "square",
        "<axis>" => "variant",
        "<cell>" => "crt.3:1",
        _ => "x",
    }
}

/// Sets `path` (spelled out, placeholders allowed) to `value` in `table`, creating tables
/// and arrays of one table on the way; an existing array's first table is used.
fn set(table: &mut toml::Table, path: &[keys::Segment], value: toml::Value) {
    let (first, rest) = path.split_first().expect("a path");
    let name = if first.is_placeholder() {
        table
            .keys()
            .next()
            .cloned()
            .unwrap_or_else(|| example_name(&first.name).to_string())
    } else {
        first.name.clone()
    };
    if rest.is_empty() {
        table.insert(name, value);
        return;
    }
    let mut slot = table
        .entry(name)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    for _ in 0..first.arrays {
        if !matches!(slot, toml::Value::Array(a) if !a.is_empty()) {
            *slot = toml::Value::Array(vec![toml::Value::Table(toml::Table::new())]);
        }
        let toml::Value::Array(items) = slot else {
            unreachable!()
        };
        slot = &mut items[0];
    }
    if !slot.is_table() {
        *slot = toml::Value::Table(toml::Table::new());
    }
    set(slot.as_table_mut().expect("a table"), rest, value);
}

fn value_of(example: &str) -> toml::Value {
    let table: toml::Table = toml::from_str(&format!("v = {example}"))
        .unwrap_or_else(|e| panic!("the example {example} is not TOML: {e}"));
    table["v"].clone()
}

fn starter(doc: &SystemDoc) -> toml::Table {
    toml::from_str(doc.starter).unwrap_or_else(|e| panic!("{}'s starter: {e}", doc.name))
}

#[test]
fn every_starting_file_validates() {
    for doc in battlelab_core::systems::docs() {
        check(doc.starter).unwrap_or_else(|e| panic!("{}'s starting file: {e}", doc.name));
    }
}

#[test]
fn a_every_documented_key_is_accepted_by_its_parser() {
    for doc in battlelab_core::systems::docs() {
        for row in doc.rows() {
            // [value] is read by `battlelab value` (its own test below).
            if row.path.starts_with("[value]") || row.doc.example.is_empty() {
                continue;
            }
            let mut file = starter(&doc);
            set(
                &mut file,
                &keys::segments(&row.path),
                value_of(row.doc.example),
            );
            let text = toml::to_string(&file).unwrap();
            if let Err(e) = check(&text) {
                assert!(
                    !refuses_key(&e),
                    "{}: the documented key {} ({:?}) is refused as a key: {e}\n{text}",
                    doc.name,
                    row.path,
                    row.origin
                );
            }
        }
    }
}

#[test]
fn a_value_keys_are_accepted_by_the_value_command() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{}\n[value]\nmodifiers = [\"a.drm+1\"]\nheadline = \"a_wins\"\nreference = {{ odds = \"3:2\" }}\n",
        battlelab_core::systems::doc("field").unwrap().starter
    );
    std::fs::write(dir.path().join("v.toml"), text).unwrap();
    let (code, _, stderr) = common::battlelab(
        dir.path(),
        &["value", "v.toml", "--trials", "1000", "--quiet"],
    );
    assert!(!refuses_key(&stderr), "{stderr}");
    assert_eq!(code, Some(0), "{stderr}");
}

fn files_to_document() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = common::shipped_analyses();
    files.extend(common::toml_files(&root.join("tests/data/good")));
    files
}

fn system_of(table: &toml::Table) -> SystemDoc {
    let name = table["system"].as_str().expect("system = \"…\"");
    battlelab_core::systems::doc(name).unwrap_or_else(|| panic!("no key table for {name}"))
}

#[test]
fn b_every_key_of_every_shipped_file_is_documented() {
    let files = files_to_document();
    assert!(files.len() >= 20, "only {} files", files.len());
    for file in files {
        let table: toml::Table = toml::from_str(&std::fs::read_to_string(&file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let missing = system_of(&table).undocumented(&table);
        assert!(
            missing.is_empty(),
            "{}: keys missing from `battlelab keys`: {missing:?}",
            file.display()
        );
    }
    for doc in battlelab_core::systems::docs() {
        assert_eq!(doc.undocumented(&starter(&doc)), Vec::<String>::new());
    }
}

/// Every table of the tree whose keys are all named (no `<placeholder>`), as a path.
fn closed_tables(node: &Node, prefix: &mut Vec<keys::Segment>, out: &mut Vec<Vec<keys::Segment>>) {
    if node.leaf.is_some() {
        return;
    }
    if !node.children.iter().any(|(s, _)| s.is_placeholder()) {
        out.push(prefix.clone());
    }
    for (segment, child) in &node.children {
        prefix.push(segment.clone());
        closed_tables(child, prefix, out);
        prefix.pop();
    }
}

#[test]
fn c_an_undocumented_key_is_refused_in_every_table() {
    for doc in battlelab_core::systems::docs() {
        let mut tables = Vec::new();
        closed_tables(&doc.tree(), &mut Vec::new(), &mut tables);
        for table_path in tables {
            // [value] is read by `battlelab value`; tested by the binary below.
            if table_path.first().is_some_and(|s| s.name == "value") {
                continue;
            }
            let mut path = table_path.clone();
            path.push(keys::Segment {
                name: "zz_misspelt".into(),
                arrays: 0,
            });
            let mut file = starter(&doc);
            set(&mut file, &path, toml::Value::Integer(1));
            let text = toml::to_string(&file).unwrap();
            let shown: Vec<_> = path.iter().map(|s| s.name.as_str()).collect();
            assert!(
                check(&text).is_err(),
                "{}: the undocumented key {} was accepted\n{text}",
                doc.name,
                shown.join(".")
            );
        }
    }
}

#[test]
fn c_a_misspelt_key_exits_2_for_every_system() {
    let dir = tempfile::tempdir().unwrap();
    for doc in battlelab_core::systems::docs() {
        let name = format!("{}_misspelt.toml", doc.name);
        std::fs::write(
            dir.path().join(&name),
            format!("{}\ntrails = 1000\n", doc.starter),
        )
        .unwrap();
        let (code, _, stderr) = common::battlelab(dir.path(), &["validate", &name]);
        assert_eq!(code, Some(2), "{}: {stderr}", doc.name);
        assert!(stderr.contains("trails"), "{}: {stderr}", doc.name);
    }
}

#[test]
fn documented_sweeps_are_the_parsers_sweeps() {
    use battlelab::systems as s;
    let cases: [(&str, &[&str]); 4] = [
        ("field", &s::field::FIELD_PARAMETERS),
        ("naval_engagement", &s::naval_engagement::PARAMETERS),
        ("ratio", &s::ratio::PARAMETERS),
        ("melee", &s::melee::PARAMETERS),
    ];
    for (name, parameters) in cases {
        let mut documented = battlelab_core::systems::doc(name)
            .unwrap()
            .sweep_parameters();
        let mut expected: Vec<String> = parameters.iter().map(|p| p.to_string()).collect();
        documented.sort();
        expected.sort();
        assert_eq!(documented, expected, "{name}");
    }
    for name in battlelab_core::systems::d6_tables::lookup::D6Table::NAMES {
        let mut documented = battlelab_core::systems::doc(name)
            .unwrap()
            .sweep_parameters();
        let mut expected: Vec<String> = s::d6_tables::parameters(name)
            .iter()
            .map(|p| p.to_string())
            .collect();
        documented.sort();
        expected.sort();
        assert_eq!(documented, expected, "{name}");
    }
}

#[test]
fn rows_spell_out_sides_sweeps_and_variants() {
    let rows = battlelab_core::systems::doc("field").unwrap().rows();
    let has =
        |path: &str, origin: Origin| rows.iter().any(|r| r.path == path && r.origin == origin);
    assert!(has("side.a.sp", Origin::Key));
    assert!(has("side.b.tactic", Origin::Key));
    assert!(has("sweep.a.sp", Origin::Sweep));
    assert!(has("[[variant]].rules.drm_cap", Origin::Variant));
    let melee = battlelab_core::systems::doc("melee").unwrap().rows();
    assert!(melee
        .iter()
        .any(|r| r.path == "[[variant]].a.skill" && r.origin == Origin::Variant));
}

// ---- new, keys, schema through the binary ----

#[test]
fn new_validates_and_runs_for_every_system() {
    let dir = tempfile::tempdir().unwrap();
    for doc in battlelab_core::systems::docs() {
        let (code, _, stderr) = common::battlelab(dir.path(), &["new", doc.name]);
        assert_eq!(code, Some(0), "new {}: {stderr}", doc.name);
        let file = format!("{}.toml", doc.name);
        let text = std::fs::read_to_string(dir.path().join(&file)).unwrap();
        // Every key of the table is explained in the file it writes.
        for k in doc.keys() {
            assert!(
                text.contains(&format!("# {}:", k.path)),
                "{}: {}",
                doc.name,
                k.path
            );
        }
        let (code, _, stderr) = common::battlelab(dir.path(), &["validate", &file]);
        assert_eq!(code, Some(0), "validate {file}: {stderr}");
        let out = format!("report_{}", doc.name);
        let (code, _, stderr) = common::battlelab(
            dir.path(),
            &["run", &file, "--trials", "1000", "--quiet", "--out", &out],
        );
        assert_eq!(code, Some(0), "run {file}: {stderr}");
    }
}

#[test]
fn new_names_the_file_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = common::battlelab(dir.path(), &["new", "melee", "my_melee"]);
    assert_eq!(code, Some(0), "{stderr}");
    let path = dir.path().join("my_melee.toml");
    let first = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, "mine").unwrap();
    let (code, _, stderr) = common::battlelab(dir.path(), &["new", "field", "my_melee"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("exists"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
    assert!(first.contains("system = \"melee\""));
    // Nothing else was left behind (no temporary files).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let (code, _, stderr) = common::battlelab(dir.path(), &["new", "chess"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("allowed: field"), "{stderr}");
}

#[test]
fn keys_prints_text_markdown_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text, _) = common::battlelab(dir.path(), &["keys"]);
    assert_eq!(code, Some(0));
    for doc in battlelab_core::systems::docs() {
        assert!(text.contains(doc.name), "{text}");
    }
    let (code, text, _) = common::battlelab(dir.path(), &["keys", "field"]);
    assert_eq!(code, Some(0));
    assert!(text.contains("side.{a,b}.sp"), "{text}");
    assert!(text.contains("rules.round_limit"), "{text}");
    assert!(text.contains("[[variant]].rules.round_limit"), "{text}");
    let (code, md, _) = common::battlelab(dir.path(), &["keys", "melee", "--format", "md"]);
    assert_eq!(code, Some(0));
    assert!(md.contains("| key | type |"), "{md}");
    assert!(md.contains("profiles.<name>.skill"), "{md}");
    let (code, json, _) = common::battlelab(dir.path(), &["keys", "ratio", "--format", "json"]);
    assert_eq!(code, Some(0));
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["system"], "ratio");
    let n = json["keys"].as_array().unwrap().len();
    assert_eq!(
        n,
        battlelab_core::systems::doc("ratio")
            .unwrap()
            .keys()
            .count()
    );
    let (code, _, stderr) = common::battlelab(dir.path(), &["keys", "chess"]);
    assert_eq!(code, Some(2), "{stderr}");
}

// ---- the JSON Schema, checked by a small validator of the subset it uses ----

/// Why `value` does not match `schema` (the first reason), or `None`.
fn violation(schema: &Value, value: &Value, at: &str) -> Option<String> {
    let fail = |why: String| Some(format!("{at}: {why}"));
    if let Some(t) = schema.get("type").and_then(Value::as_str) {
        let ok = match t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            other => panic!("type {other} is not in the subset"),
        };
        if !ok {
            return fail(format!("not {t}: {value}"));
        }
    }
    if let Some(list) = schema.get("enum").and_then(Value::as_array) {
        if !list.contains(value) {
            return fail(format!("{value} is not one of {list:?}"));
        }
    }
    if let (Some(min), Some(v)) = (
        schema.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) {
        if v < min {
            return fail(format!("{v} is below {min}"));
        }
    }
    if let (Some(max), Some(v)) = (
        schema.get("maximum").and_then(Value::as_f64),
        value.as_f64(),
    ) {
        if v > max {
            return fail(format!("{v} is above {max}"));
        }
    }
    if let (Some(min), Some(v)) = (
        schema.get("exclusiveMinimum").and_then(Value::as_f64),
        value.as_f64(),
    ) {
        if v <= min {
            return fail(format!("{v} is not above {min}"));
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        for (k, v) in object {
            let at = format!("{at}.{k}");
            match properties.and_then(|p| p.get(k)) {
                Some(s) => {
                    if let Some(why) = violation(s, v, &at) {
                        return Some(why);
                    }
                }
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return Some(format!("{at}: not allowed here")),
                    Some(s @ Value::Object(_)) => {
                        if let Some(why) = violation(s, v, &at) {
                            return Some(why);
                        }
                    }
                    _ => {}
                },
            }
        }
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let r = r.as_str().unwrap();
            if !object.contains_key(r) {
                return fail(format!("{r} is required"));
            }
        }
    }
    if let (Some(items), Some(list)) = (schema.get("items"), value.as_array()) {
        for (i, v) in list.iter().enumerate() {
            if let Some(why) = violation(items, v, &format!("{at}[{i}]")) {
                return Some(why);
            }
        }
    }
    for (word, need_one) in [("anyOf", false), ("oneOf", true)] {
        if let Some(options) = schema.get(word).and_then(Value::as_array) {
            let passing = options
                .iter()
                .filter(|s| violation(s, value, at).is_none())
                .count();
            if passing == 0 || (need_one && passing != 1) {
                return fail(format!("{value} matches {passing} of {word}"));
            }
        }
    }
    None
}

fn json_of(text: &str) -> Value {
    let table: toml::Table = toml::from_str(text).unwrap();
    serde_json::to_value(table).unwrap()
}

#[test]
fn the_validator_knows_its_subset() {
    let schema = serde_json::json!({"type": "object", "properties": {
        "a": {"type": "integer", "minimum": 1, "maximum": 3},
        "b": {"anyOf": [{"type": "string", "enum": ["x"]}, {"type": "array", "items": {"type": "integer"}}]},
    }, "required": ["a"], "additionalProperties": false});
    assert!(violation(&schema, &json_of("a = 2\nb = \"x\""), "").is_none());
    assert!(violation(&schema, &json_of("a = 2\nb = [1, 2]"), "").is_none());
    assert!(violation(&schema, &json_of("a = 4"), "").is_some());
    assert!(violation(&schema, &json_of("b = \"x\""), "").is_some());
    assert!(violation(&schema, &json_of("a = 1\nb = \"y\""), "").is_some());
    assert!(violation(&schema, &json_of("a = 1\nc = 1"), "").is_some());
}

#[test]
fn the_schema_accepts_every_shipped_file_and_refuses_a_misspelt_key() {
    let dir = tempfile::tempdir().unwrap();
    for doc in battlelab_core::systems::docs() {
        let (code, text, stderr) = common::battlelab(dir.path(), &["schema", doc.name]);
        assert_eq!(code, Some(0), "{stderr}");
        let schema: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(schema["additionalProperties"], false);
        let why = violation(&schema, &json_of(doc.starter), "");
        assert!(why.is_none(), "{}: {why:?}", doc.name);
        let misspelt = json_of(&format!("{}\ntrails = 10\n", doc.starter));
        assert!(violation(&schema, &misspelt, "").is_some(), "{}", doc.name);
    }
    for file in files_to_document() {
        let text = std::fs::read_to_string(&file).unwrap();
        let value = json_of(&text);
        let doc = system_of(&toml::from_str(&text).unwrap());
        let schema = doc.schema();
        if let Some(why) = violation(&schema, &value, "") {
            panic!(
                "{}: the {} schema refuses it: {why}",
                file.display(),
                doc.name
            );
        }
        // A misspelt key in a nested table is refused too.
        let mut nested = value.clone();
        if let Some(side) = nested.pointer_mut("/side/a").and_then(Value::as_object_mut) {
            side.insert("spp".into(), 1.into());
            assert!(
                violation(&schema, &nested, "").is_some(),
                "{}",
                file.display()
            );
        }
    }
}

// ---- the command line speaks the file's words ----

#[test]
fn table_crt_reads_odds_as_a_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let run = |odds: &str| {
        common::battlelab(
            dir.path(),
            &["table", "crt", "--odds", odds, "--format", "json"],
        )
    };
    let (code, between, stderr) = run("5:2");
    assert_eq!(code, Some(0), "{stderr}");
    let (code, printed, _) = run("2:1");
    assert_eq!(code, Some(0));
    let between: Value = serde_json::from_str(&between).unwrap();
    let printed: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(between["params"]["odds"], "2:1");
    assert_eq!(between["params"]["odds_given"], "5:2");
    assert_eq!(between["outcomes"], printed["outcomes"]);
    // Past the top column: the top column, as a battle at 7:1 reads it.
    let (code, past, _) = run("7:1");
    assert_eq!(code, Some(0));
    let past: Value = serde_json::from_str(&past).unwrap();
    assert_eq!(past["params"]["odds"], "3:1");
    // What a file refuses, the command line refuses.
    let (code, _, stderr) = run("2:3");
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, _) = run("odds");
    assert_eq!(code, Some(2));
}

#[test]
fn table_melee_takes_the_files_profile_words_and_the_old_ones() {
    let dir = tempfile::tempdir().unwrap();
    let run =
        |a: &str, b: &str| common::battlelab(dir.path(), &["table", "melee", "--a", a, "--b", b]);
    let (code, new, stderr) = run(
        "models=6 frontage=3 rank_bonus=full-ranks rank_bonus_cap=2",
        "models=6 frontage=3",
    );
    assert_eq!(code, Some(0), "{stderr}");
    let (code, old, stderr) = run(
        "models=6 wide=3 rank-bonus=full-ranks rank-cap=2",
        "models=6 wide=3",
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(new, old);
}
