//! The page's numbers are the command line's: `battlelab_wasm::call` — the function the
//! WebAssembly module exports — against `battlelab run` on the same files.
//!
//! Why this test exists: the report page and the playground recompute in the browser
//! through `battlelab-wasm`; a designer must read there exactly what `battlelab run`
//! writes. Each test runs the same analysis both ways and compares counts, exact
//! fractions and exact probabilities as numbers, and error texts as text. (The module
//! itself in a browser is B's Chromium tests; this is the same code, natively.)

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `call`, answered `ok` (the test fails on an error, printing it).
fn ok(request: &Value) -> Value {
    let response: Value = serde_json::from_str(&battlelab_wasm::call(&request.to_string()))
        .expect("the response is JSON");
    match response.get("ok") {
        Some(ok) => ok.clone(),
        None => panic!("{}: {response}", request["op"]),
    }
}

/// `call`, answered with an error: the error object.
fn refused(request: &Value) -> Value {
    let response: Value =
        serde_json::from_str(&battlelab_wasm::call(&request.to_string())).expect("JSON");
    response
        .get("error")
        .unwrap_or_else(|| panic!("expected an error, got {response}"))
        .clone()
}

/// The rules file an analysis names by path (`rules = "../rules/x.toml"`), if any.
fn companion(text: &str) -> Option<String> {
    let table: toml::Table = toml::from_str(text).ok()?;
    let given = table.get("rules")?.as_str()?;
    given.contains(['/', '.']).then(|| given.to_string())
}

/// The request fields naming the analysis at `path` and the rules file it names.
fn analysis(path: &Path) -> (String, BTreeMap<String, String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut files = BTreeMap::new();
    if let Some(given) = companion(&text) {
        let rules = std::fs::read_to_string(path.parent().unwrap().join(&given)).unwrap();
        files.insert(given, rules);
    }
    (text, files)
}

fn request(op: &str, name: &str, text: &str, files: &BTreeMap<String, String>) -> Value {
    json!({"op": op, "analysis": {"name": name, "text": text}, "files": files})
}

/// A CSV's rows, each by column name.
type Rows = Vec<BTreeMap<String, String>>;

/// A CSV's rows as fields (quoted fields may hold commas and doubled quotes).
fn csv(text: &str) -> Rows {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for line in text.lines() {
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => quoted = !quoted,
                ',' if !quoted => fields.push(std::mem::take(&mut field)),
                c => field.push(c),
            }
        }
        fields.push(field);
        rows.push(fields);
    }
    let header = rows.remove(0);
    rows.into_iter()
        .map(|r| header.iter().cloned().zip(r).collect())
        .collect()
}

/// A CSV text cell as written: a leading `'` guards a cell that starts like a formula.
fn cell(text: &str) -> &str {
    text.strip_prefix('\'').unwrap_or(text)
}

/// `battlelab run FILE --trials N --seed S` in the file's folder, into a fresh folder:
/// its results.csv and distributions.csv rows.
fn cli_run(dir: &Path, file: &str, trials: u64, seed: u64) -> (Rows, Rows) {
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report");
    let (code, _, stderr) = common::battlelab(
        dir,
        &[
            "run",
            file,
            "--trials",
            &trials.to_string(),
            "--seed",
            &seed.to_string(),
            "--out",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{file}: {stderr}");
    let read = |name: &str| csv(&std::fs::read_to_string(report.join(name)).unwrap());
    (read("results.csv"), read("distributions.csv"))
}

/// A float as the CSV wrote it, read back: the module's number as Polars writes it (16
/// significant digits, so the last binary digits may differ: 0.1673333333333333 for
/// 0.16733333333333333). Counts and fractions are compared exactly.
fn same_number(csv: &str, number: &Value, what: &str) {
    match number.as_f64() {
        None => assert!(
            csv.is_empty(),
            "{what}: the CLI wrote {csv}, the module null"
        ),
        Some(x) => {
            let y: f64 = csv.parse().unwrap_or_else(|_| panic!("{what}: {csv}"));
            assert!(
                (x - y).abs() <= 4.0 * f64::EPSILON * x.abs(),
                "{what}: the module {x}, the CLI {csv}"
            );
        }
    }
}

/// The module's `run` response equals the CLI's results.csv and distributions.csv row
/// for row: counts, exact fractions and exact probabilities.
fn assert_same_as_cli(
    label: &str,
    ours: &Value,
    results: &[BTreeMap<String, String>],
    distributions: &[BTreeMap<String, String>],
) {
    let runs = ours["runs"].as_array().unwrap();
    let mut rows = results.iter();
    let mut dist_rows = distributions.iter();
    for run in runs {
        let variant = run["variant"].as_str().unwrap();
        for o in run["outcomes"].as_array().unwrap() {
            let row = rows
                .next()
                .unwrap_or_else(|| panic!("{label}: the CLI has fewer rows"));
            let what = format!("{label}, {variant}, {}", o["name"]);
            assert_eq!(cell(&row["variant"]), variant, "{what}");
            assert_eq!(cell(&row["outcome"]), o["name"].as_str().unwrap(), "{what}");
            assert_eq!(row["trials"], run["trials"].to_string(), "{what}");
            assert_eq!(row["count"], o["count"].to_string(), "{what}: count");
            same_number(&row["exact"], &o["exact"], &format!("{what}: exact"));
            same_number(
                &row["probability"],
                &o["probability"],
                &format!("{what}: probability"),
            );
            assert_eq!(
                row["exact_fraction"],
                o["fraction"].as_str().unwrap_or(""),
                "{what}: fraction"
            );
        }
        for d in run["distributions"].as_array().unwrap() {
            for (value, count) in d["values"]
                .as_array()
                .unwrap()
                .iter()
                .zip(d["counts"].as_array().unwrap())
            {
                let row = dist_rows
                    .next()
                    .unwrap_or_else(|| panic!("{label}: fewer distribution rows"));
                let what = format!("{label}, {variant}, {} = {value}", d["metric"]);
                assert_eq!(row["metric"], d["metric"].as_str().unwrap(), "{what}");
                assert_eq!(row["value"], value.to_string(), "{what}");
                assert_eq!(row["count"], count.to_string(), "{what}");
            }
        }
    }
    assert!(
        rows.next().is_none(),
        "{label}: the CLI has more result rows"
    );
    assert!(
        dist_rows.next().is_none(),
        "{label}: the CLI has more distribution rows"
    );
}

#[test]
fn every_shipped_analysis_gives_the_command_lines_counts_and_exact_fractions() {
    let analyses = common::shipped_analyses();
    assert!(analyses.len() >= 20, "{analyses:?}");
    for path in analyses {
        let name = path.file_name().unwrap().to_str().unwrap();
        let (text, files) = analysis(&path);
        // Two blocks a run for one analysis (the block boundary), one elsewhere.
        let trials = if name == "classic_crt.toml" {
            70_000
        } else {
            1_500
        };
        let seed = 11;
        let mut run = request("run", name, &text, &files);
        run["trials"] = json!(trials);
        run["seed"] = json!(seed);
        let ours = ok(&run);
        let (results, distributions) = cli_run(path.parent().unwrap(), name, trials, seed);
        assert_same_as_cli(name, &ours, &results, &distributions);
        // describe lists the plan's runs in the same order, and the outcomes.
        let described = ok(&request("describe", name, &text, &files));
        assert_eq!(
            described["runs"].as_array().unwrap().len(),
            ours["runs"].as_array().unwrap().len(),
            "{name}"
        );
        for (d, r) in described["runs"]
            .as_array()
            .unwrap()
            .iter()
            .zip(ours["runs"].as_array().unwrap())
        {
            assert_eq!(d["exact"], r["exact"], "{name}");
            assert_eq!(d["coordinates"], r["coordinates"], "{name}");
        }
    }
}

/// classic_crt's files in a fresh folder laid out as the repository's (analyses/ and
/// rules/), with `text` as the analysis and `rules` as its rules file.
fn lay_out(text: &str, rules: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("analyses")).unwrap();
    std::fs::create_dir_all(dir.path().join("rules")).unwrap();
    std::fs::write(dir.path().join("analyses/classic_crt.toml"), text).unwrap();
    std::fs::write(dir.path().join("rules/classic_crt.toml"), rules).unwrap();
    dir
}

#[test]
fn an_edited_drm_gives_the_command_lines_exact_value_for_the_downloaded_files() {
    let path = root().join("analyses/classic_crt.toml");
    let (text, files) = analysis(&path);
    // The attacker's leader is a DRM in the rules file (clamped at ±2): 1 → 2.
    let mut edited = request("run", "classic_crt.toml", &text, &files);
    edited["edits"] = json!({"sides.attacker.leader": 2});
    edited["exact_only"] = json!(true);
    let ours = ok(&edited);
    let before = ok(&{
        let mut r = request("run", "classic_crt.toml", &text, &files);
        r["exact_only"] = json!(true);
        r
    });
    assert_ne!(
        ours["headline"], before["headline"],
        "the edit moved the numbers"
    );
    // Download the edited files and run them with the command line.
    let mut download = edited.clone();
    download["op"] = json!("download");
    let downloaded = ok(&download)["files"].clone();
    let analysis_text = downloaded["classic_crt.toml"].as_str().unwrap();
    assert!(analysis_text.contains("leader = 2"), "{analysis_text}");
    assert!(
        analysis_text.starts_with("# The classic odds CRT"),
        "comments are kept"
    );
    let rules_text = downloaded["../rules/classic_crt.toml"].as_str().unwrap();
    let dir = lay_out(analysis_text, rules_text);
    let analyses = dir.path().join("analyses");
    let (code, _, stderr) = common::battlelab(&analyses, &["validate", "classic_crt.toml"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (results, distributions) = cli_run(&analyses, "classic_crt.toml", 3_000, 5);
    let mut simulated = edited.clone();
    simulated["exact_only"] = json!(false);
    simulated["trials"] = json!(3_000);
    simulated["seed"] = json!(5);
    let both = ok(&simulated);
    assert_same_as_cli("edited classic_crt", &both, &results, &distributions);
    // The exact-only run's exact numbers are the simulated run's.
    for (a, b) in ours["runs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(both["runs"].as_array().unwrap())
    {
        for (x, y) in a["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .zip(b["outcomes"].as_array().unwrap())
        {
            assert_eq!(x["exact"], y["exact"]);
            assert_eq!(x["fraction"], y["fraction"]);
            assert_eq!(x["count"], Value::Null, "exact only: no counts");
        }
    }
}

#[test]
fn a_rules_table_edit_runs_as_the_command_line_runs_the_edited_rules_file() {
    let path = root().join("analyses/classic_crt.toml");
    let (text, files) = analysis(&path);
    let mut edited = request("download", "classic_crt.toml", &text, &files);
    // At 1:1 the attacker now always retreats.
    edited["edits"] = json!({"rules:tables.crt.cells.\"1:1\"": "AR AR AR AR AR AR"});
    let downloaded = ok(&edited)["files"].clone();
    let rules_text = downloaded["../rules/classic_crt.toml"].as_str().unwrap();
    assert!(
        rules_text.contains("\"1:1\" = \"AR AR AR AR AR AR\""),
        "{rules_text}"
    );
    assert!(
        rules_text.contains("# Net DRM in the attacker's favour"),
        "comments kept"
    );
    let dir = lay_out(downloaded["classic_crt.toml"].as_str().unwrap(), rules_text);
    let (results, distributions) =
        cli_run(&dir.path().join("analyses"), "classic_crt.toml", 2_000, 3);
    edited["op"] = json!("run");
    edited["trials"] = json!(2_000);
    edited["seed"] = json!(3);
    assert_same_as_cli(
        "classic_crt, 1:1 edited",
        &ok(&edited),
        &results,
        &distributions,
    );
}

/// The CLI's message for a file: what `battlelab validate` prints after `error: `.
fn cli_error(dir: &Path, file: &str) -> String {
    let (code, _, stderr) = common::battlelab(dir, &["validate", file]);
    assert_eq!(code, Some(2), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .expect(&stderr);
    let mut message = line.trim_start_matches("error: ").to_string();
    for cause in stderr
        .lines()
        .filter_map(|l| l.strip_prefix("  caused by: "))
    {
        message.push_str(": ");
        message.push_str(cause);
    }
    message
}

#[test]
fn a_bad_value_gets_the_command_lines_message_with_its_file_line_and_key() {
    let path = root().join("analyses/classic_crt.toml");
    let (text, files) = analysis(&path);
    let rules = &files["../rules/classic_crt.toml"];
    // The same bad values, written by hand into the files the CLI reads.
    let cases: [(Value, String, String); 3] = [
        (
            json!({"sides.attacker.leader": 5}),
            text.replace("leader = 1", "leader = 5"),
            rules.clone(),
        ),
        (
            json!({"trials": 0}),
            text.replace("trials = 200_000", "trials = 0"),
            rules.clone(),
        ),
        (
            json!({"rules:tables.crt.cells.\"2:1\"": "DR AR XX AR AR AE"}),
            text.clone(),
            rules.replace(
                "\"2:1\" = \"DR AR EX AR AR AE\"",
                "\"2:1\" = \"DR AR XX AR AR AE\"",
            ),
        ),
    ];
    for (edits, bad_text, bad_rules) in cases {
        assert!(
            bad_text != text || bad_rules != *rules,
            "{edits}: the case changes a file"
        );
        let mut req = request("describe", "classic_crt.toml", &text, &files);
        req["edits"] = edits.clone();
        let error = refused(&req);
        let dir = lay_out(&bad_text, &bad_rules);
        let expected = cli_error(&dir.path().join("analyses"), "classic_crt.toml");
        assert_eq!(error["message"], expected, "{edits}");
        assert!(error["file"].is_string(), "{edits}: {error}");
        assert!(error["line"].is_u64(), "{edits}: a line: {error}");
        assert!(error["key"].is_string(), "{edits}: a key: {error}");
        // The same request's download is refused too: nothing a run would refuse.
        req["op"] = json!("download");
        assert_eq!(refused(&req)["message"], expected);
    }
}

#[test]
fn every_bad_file_is_refused_with_the_command_lines_message() {
    let dir = root().join("tests/data/bad");
    let mut checked = 0;
    for path in common::toml_files(&dir) {
        let name = path.file_name().unwrap().to_str().unwrap();
        let (text, files) = analysis(&path);
        if files.values().any(String::is_empty) {
            continue;
        }
        let response: Value = serde_json::from_str(&battlelab_wasm::call(
            &request("describe", name, &text, &files).to_string(),
        ))
        .unwrap();
        let (code, _, _) = common::battlelab(&dir, &["validate", name]);
        if code != Some(2) {
            continue; // refused by a command rather than by the file (e.g. `--out`)
        }
        let expected = cli_error(&dir, name);
        if expected.contains("[value]") || expected.contains("field `value") {
            // `[value]` is read by `battlelab value`, not the module (docs/wasm-api.md).
            continue;
        }
        assert_eq!(response["error"]["message"], expected, "{name}: {response}");
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} bad files checked");
}

#[test]
fn steps_of_any_size_give_the_counts_of_one_run() {
    let path = root().join("analyses/classic_crt.toml");
    let (text, files) = analysis(&path);
    let mut run = request("run", "classic_crt.toml", &text, &files);
    run["trials"] = json!(140_000); // 3 blocks a run, the last short
    run["seed"] = json!(9);
    let whole = ok(&run);
    for step in [1u64, 2, 5, 1_000] {
        let mut start = run.clone();
        start["op"] = json!("start");
        let blocks = ok(&start)["blocks"].as_u64().unwrap();
        assert_eq!(blocks, 36 * 3);
        let mut done = 0;
        while done < blocks {
            let progress = ok(&json!({"op": "step", "blocks": step}));
            assert_eq!(
                progress["done"].as_u64().unwrap(),
                (done + step).min(blocks)
            );
            done = progress["done"].as_u64().unwrap();
        }
        assert_eq!(ok(&json!({"op": "finish"})), whole, "steps of {step}");
    }
    // finish on a job stepped part way runs the rest.
    let mut start = run.clone();
    start["op"] = json!("start");
    ok(&start);
    ok(&json!({"op": "step", "blocks": 7}));
    assert_eq!(ok(&json!({"op": "finish"})), whole);
    assert!(refused(&json!({"op": "finish"}))["message"]
        .as_str()
        .unwrap()
        .contains("start"));
}

#[test]
fn describe_gives_each_setting_with_what_the_key_table_allows() {
    let path = root().join("analyses/classic_crt.toml");
    let (text, files) = analysis(&path);
    let described = ok(&request("describe", "classic_crt.toml", &text, &files));
    let settings = described["settings"].as_array().unwrap();
    let find = |p: &str| {
        settings
            .iter()
            .find(|s| s["path"] == p)
            .unwrap_or_else(|| panic!("{p} in {settings:?}"))
    };
    // From rules/classic_crt.toml: leader = { per_side, min 0, max 2, default 0 }.
    let leader = find("sides.attacker.leader");
    assert_eq!(
        (
            &leader["value"],
            &leader["min"],
            &leader["max"],
            &leader["default"]
        ),
        (&json!(1), &json!(0), &json!(2), &json!(0))
    );
    assert_eq!(leader["side"], "attacker");
    assert_eq!(find("parameters.terrain")["swept"], true);
    assert_eq!(find("sides.attacker.strength")["swept"], true);
    assert_eq!(find("sides.defender.strength")["swept"], false);
    assert_eq!(find("sweep.terrain")["value"], json!([0, 1, 2]));
    assert_eq!(find("trials")["value"], 200_000);
    assert_eq!(described["tables"][0]["columns"][2], "2:1");
    assert_eq!(described["tables"][0]["cells"][2], "DR AR EX AR AR AE");
    assert_eq!(described["runs"].as_array().unwrap().len(), 36);
    // A built-in system's keys: field battles' DRM with its range from the key table.
    let field = root().join("analyses/field_combat.toml");
    let (text, files) = analysis(&field);
    let described = ok(&request("describe", "field_combat.toml", &text, &files));
    let drm = described["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == "side.a.leader")
        .expect("side.a.leader");
    assert_eq!(drm["value"], 1);
    assert_eq!(drm["side"], "a");
    assert!(drm["max"].is_i64());
}

#[test]
fn a_request_the_module_cannot_read_is_an_error_not_a_panic() {
    for bad in [
        "not json".to_string(),
        json!({"op": "fly"}).to_string(),
        json!({"op": "run"}).to_string(),
        json!({"op": "run", "analysis": {"name": "a.toml", "text": "system = \"rules\"\nrules = \"x.toml\"\n"}}).to_string(),
    ] {
        let response: Value = serde_json::from_str(&battlelab_wasm::call(&bad)).unwrap();
        let message = response["error"]["message"].as_str().unwrap_or_else(|| panic!("{bad}: {response}"));
        assert!(!message.is_empty() && !message.contains("internal error"), "{bad}: {message}");
    }
}

/// The page's live cells of a report (`tryit-data`'s `live`).
fn live_cells(report: &Path) -> Value {
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    let start = html.find("id=\"tryit-data\">").expect("the panel's data") + 16;
    let end = start + html[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[start..end]).unwrap();
    data["live"].clone()
}

#[test]
fn the_d6_tables_chances_and_expected_values_print_as_the_command_lines_tables_md() {
    // Every [tables] format a d6 table allows, and two decimals, on every shipped d6
    // analysis: the module's `chances` and `expected` of each run are the text of the
    // cells `battlelab run` prints in "Outcomes per grid point".
    let dir = tempfile::tempdir().unwrap();
    let formats = [
        "",
        "[tables]\ndecimals = 2\n\n",
        "[tables]\nformat = \"fraction\"\n\n",
        "[tables]\nformat = \"in6\"\n\n",
    ];
    let mut moved = 0;
    for stem in [
        "attrition",
        "blockade",
        "march",
        "naval",
        "pursuit",
        "storm",
        "transport",
    ] {
        let shipped = std::fs::read_to_string(common::shipped(&format!("{stem}.toml"))).unwrap();
        for (k, tables) in formats.iter().enumerate() {
            let name = format!("{stem}.toml");
            let text = shipped.replacen("\n[", &format!("\n{tables}["), 1);
            let folder = dir.path().join(format!("{stem}_{k}"));
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join(&name), &text).unwrap();
            let report = folder.join("report");
            let (code, _, stderr) = common::battlelab(
                &folder,
                &[
                    "run", &name, "--trials", "100", "--quiet", "--out", "report",
                ],
            );
            assert_eq!(code, Some(0), "{stderr}");
            let md = common::pages::tables_md(&report);
            let live = live_cells(&report);
            let mut run = request("run", &name, &text, &BTreeMap::new());
            run["exact_only"] = json!(true);
            let ours = ok(&run);
            let mut compared = 0;
            for cell in live["cells"].as_array().unwrap() {
                let key = &live["runs"][cell["run"].as_u64().unwrap() as usize];
                let r = ours["runs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| {
                        r["variant"] == key["variant"] && r["coordinates"] == key["coordinates"]
                    })
                    .expect("the cell's run");
                let printed = if let Some(outcome) = cell["chance"].as_str() {
                    let names: Vec<&str> = r["outcomes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|o| o["name"].as_str().unwrap())
                        .collect();
                    assert_eq!(json!(names), cell["of"], "{name}: the row's outcomes");
                    let at = names.iter().position(|n| *n == outcome).unwrap();
                    r["chances"][at].as_str().unwrap().to_string()
                } else if let Some(expected) = cell["expected"].as_str() {
                    let e = r["expected"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|e| e["name"] == expected)
                        .expect("the expected value");
                    let decimals = cell["decimals"].as_u64().unwrap() as usize;
                    format!(
                        "{} ({:.decimals$})",
                        e["fraction"].as_str().unwrap(),
                        e["value"].as_f64().unwrap()
                    )
                } else {
                    continue;
                };
                let at = |k: &str| cell[k].as_u64().unwrap() as usize;
                assert_eq!(
                    printed,
                    md[at("table")][at("row")][at("column")],
                    "{name} {tables:?}: {cell}"
                );
                moved += usize::from(printed.ends_with('†'));
                compared += 1;
            }
            assert!(compared >= 8, "{name} {tables:?}: {compared} cells");
        }
    }
    assert!(moved > 0, "some percentage was moved and marked");
}

/// A melee engagement too large to enumerate (the phase odds still exact) is simulated in
/// the module, as its report's "source" says: `describe` and `run` call its runs not
/// exact, so the page simulates them rather than printing exact chances it has not got.
#[test]
fn a_melee_engagement_too_large_to_enumerate_is_simulated_as_the_report_says() {
    let path = root().join("analyses/melee_engagement.toml");
    let (text, files) = analysis(&path);
    let mut describe = request("describe", "melee_engagement.toml", &text, &files);
    describe["edits"] = json!({
        "options.round_limit": 40,
        "profiles.spearmen.models": 300,
        "profiles.swordsmen.models": 200,
    });
    let described = ok(&describe);
    let runs = described["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    assert!(runs.iter().all(|r| r["exact"] == false), "{described}");
    let mut run = describe.clone();
    run["op"] = json!("run");
    run["trials"] = json!(500);
    let answered = ok(&run);
    for r in answered["runs"].as_array().unwrap() {
        assert_eq!(r["exact"], false, "{r}");
        let total: f64 = r["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["probability"].as_f64().unwrap())
            .sum();
        assert!((total - 1.0).abs() < 1e-12, "{r}");
    }
    // The shipped file, small enough, is exact.
    let shipped = ok(&request("describe", "melee_engagement.toml", &text, &files));
    assert!(shipped["runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["exact"] == true));
}

/// `battlelab value FILE ARGS --format FORMAT` run in `dir`: its standard output.
fn cli_value(dir: &Path, file: &str, args: &[&str], format: &str) -> String {
    let mut all = vec!["value", file, "--format", format, "--quiet"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = common::battlelab(dir, &all);
    assert_eq!(code, Some(0), "{all:?}: {stderr}");
    stdout
}

#[test]
fn the_value_op_prices_an_edited_analysis_as_the_command_line_prices_the_edited_file() {
    // (analysis, the panel's edit, --modifier, trials, whether every arm is exact)
    let cases: [(&str, Value, &[&str], u64, bool); 4] = [
        (
            "ratio_value_of_plus_one.toml",
            json!({"side.b.argument": 1}),
            &[],
            2_000,
            true,
        ),
        (
            "field_combat.toml",
            json!({"side.a.leader": 2}),
            &[],
            3_000,
            true,
        ),
        (
            "classic_crt.toml",
            json!({"sides.attacker.leader": 0}),
            &["attacker.leader+1", "defender.leader+1"],
            2_000,
            true,
        ),
        // Simulated: the same seed and trials give the same counts, so the same prices.
        (
            "field_combat.toml",
            json!({"exact": false, "side.a.leader": 2}),
            &["drm+1", "b.sp+2"],
            2_000,
            false,
        ),
    ];
    for (name, edits, modifiers, trials, exact) in cases {
        let (text, files) = analysis(&root().join("analyses").join(name));
        let mut req = request("value", name, &text, &files);
        req["edits"] = edits.clone();
        req["trials"] = json!(trials);
        req["modifiers"] = json!(modifiers);
        req["exact_only"] = json!(true);
        let exact_only = ok(&req);
        assert_eq!(exact_only["exact"], exact, "{name}: {exact_only}");
        req["exact_only"] = json!(false);
        let simulated = ok(&req);
        let ours = if exact {
            // Without a die rolled, the prices are the simulating run's, to the byte.
            assert_eq!(exact_only["priced"], true, "{name}");
            assert_eq!(exact_only["markdown"], simulated["markdown"], "{name}");
            assert_eq!(exact_only["value"], simulated["value"], "{name}");
            exact_only
        } else {
            assert_eq!(exact_only["priced"], false, "{name}: {exact_only}");
            assert!(exact_only["markdown"].is_null(), "{name}: priced nothing");
            assert_eq!(simulated["exact"], false, "{name}");
            simulated
        };
        // The command line, on the files the panel downloads.
        let mut download = req.clone();
        download["op"] = json!("download");
        let downloaded = ok(&download)["files"].clone();
        let rules = downloaded
            .as_object()
            .unwrap()
            .iter()
            .find(|(k, _)| k.as_str() != name)
            .map(|(_, v)| v.as_str().unwrap().to_string());
        let dir = tempfile::tempdir().unwrap();
        let analyses = dir.path().join("analyses");
        std::fs::create_dir_all(&analyses).unwrap();
        std::fs::create_dir_all(dir.path().join("rules")).unwrap();
        std::fs::write(analyses.join(name), downloaded[name].as_str().unwrap()).unwrap();
        if let (Some(rules), Some(given)) = (rules, companion(&text)) {
            std::fs::write(analyses.join(&given), rules).unwrap();
        }
        let mut args: Vec<String> = vec!["--trials".into(), trials.to_string()];
        for m in modifiers {
            args.extend(["--modifier".to_string(), m.to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let json_text = cli_value(&analyses, name, &args, "json");
        let cli: Value = serde_json::from_str(&json_text).unwrap();
        assert_eq!(
            ours["value"], cli,
            "{name}: the module's prices are the CLI's"
        );
        let md = cli_value(&analyses, name, &args, "md");
        assert_eq!(ours["markdown"].as_str(), Some(md.as_str()), "{name}");
        assert_eq!(
            ours["text"].as_str(),
            Some(cli_value(&analyses, name, &args, "text").as_str()),
            "{name}"
        );
        // The cells the page writes into its tables are tables.md's, row for row.
        let rows: Vec<Vec<String>> = ours["tables"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| t["rows"].as_array().unwrap().clone())
            .map(|r| serde_json::from_value(r).unwrap())
            .collect();
        assert_eq!(rows, common::markdown_rows(&md), "{name}");
        assert!(rows.len() >= 4, "{name}: {}", rows.len());
        // And the edit moved a price: the file as written prices otherwise.
        let mut unedited = request("value", name, &text, &files);
        unedited["trials"] = json!(trials);
        unedited["modifiers"] = json!(modifiers);
        if exact {
            unedited["exact_only"] = json!(true);
        }
        assert_ne!(
            ok(&unedited)["tables"],
            ours["tables"],
            "{name}: the edit moved nothing"
        );
    }
}

/// A derived number as the page prints it in its cell's format (`tryit.rs`'s
/// `liveText`: the system's own text where it gives one, ∞, a percentage, a signed or a
/// plain number, bold where the best of its row), from the module's `derived`.
fn print_derived(d: &Value, cell: &Value) -> String {
    let decimals = cell["decimals"].as_u64().unwrap_or(0) as usize;
    let text = if let Some(text) = d["text"].as_str() {
        text.to_string()
    } else if d["infinite"] == true {
        "∞".to_string()
    } else {
        let v = d["value"].as_f64().expect("a finite derived number");
        match cell["format"].as_str() {
            Some("percent") => format!("{:.decimals$}%", v * 100.0),
            Some("signed") => format!("{v:+.decimals$}"),
            _ => format!("{v:.decimals$}"),
        }
    };
    if d["best"] == true {
        format!("**{text}**")
    } else {
        text
    }
}

#[test]
fn the_value_op_refuses_with_the_command_lines_words() {
    let (text, files) = analysis(&root().join("analyses/classic_crt.toml"));
    // A rules file has no default modifiers: name some, as the command line says.
    let error = refused(&request("value", "classic_crt.toml", &text, &files));
    assert_eq!(
        error["message"],
        "none of the modifiers applies to classic_crt.toml; name some with --modifier"
    );
    let mut bad = request("value", "classic_crt.toml", &text, &files);
    bad["modifiers"] = json!(["attacker.luck+1"]);
    let error = refused(&bad);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("--modifier: rules analyses have no setting \"attacker.luck\"; the settings are: attacker.leader"),
        "{error}"
    );
    // A request the flags got wrong names no file; an analysis with nothing to price
    // names itself, as the command line's message does.
    assert_eq!(error["file"], Value::Null, "{error}");
    let (text, files) = analysis(&root().join("analyses/setup.toml"));
    let error = refused(&request("value", "setup.toml", &text, &files));
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("setup.toml: setup analyses have no settings to price or vary"),
        "{error}"
    );
    assert_eq!(error["file"], "setup.toml", "{error}");
}

#[test]
fn every_derived_cell_of_every_shipped_analysis_is_the_modules_derived_number() {
    // The cells the system derives from several runs (a best request, a survival curve, a
    // quantile, a difference of means, a fitted rating): the module's `derived`, printed
    // in the cell's format, is the text `battlelab run` prints in tables.md, key for key,
    // with the same seed and trials.
    let trials = 200;
    let mut compared = BTreeMap::new();
    for path in common::shipped_analyses() {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let out = tempfile::tempdir().unwrap();
        let report = out.path().join("report");
        let (code, _, stderr) = common::battlelab(
            path.parent().unwrap(),
            &[
                "run",
                &name,
                "--trials",
                &trials.to_string(),
                "--quiet",
                "--out",
                report.to_str().unwrap(),
            ],
        );
        assert_eq!(code, Some(0), "{name}: {stderr}");
        let live = live_cells(&report);
        let cells: Vec<&Value> = live["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["derived"].is_string())
            .collect();
        if cells.is_empty() {
            continue;
        }
        let md = common::pages::tables_md(&report);
        let (text, files) = analysis(&path);
        let mut run = request("run", &name, &text, &files);
        run["trials"] = json!(trials);
        let ours = ok(&run);
        let derived = ours["derived"].as_array().unwrap();
        for cell in &cells {
            let d = derived
                .iter()
                .find(|d| d["key"] == cell["derived"])
                .unwrap_or_else(|| panic!("{name}: {cell} is not among the module's derived"));
            let at = |k: &str| cell[k].as_u64().unwrap() as usize;
            assert_eq!(
                print_derived(d, cell),
                md[at("table")][at("row")][at("column")],
                "{name}: {cell}"
            );
        }
        compared.insert(name, cells.len());
    }
    // Every system that derives a table: field, march, attrition, ratio, melee, setup.
    for name in [
        "field_combat.toml",
        "march.toml",
        "attrition.toml",
        "ratio_line.toml",
        "melee_engagement.toml",
        "melee_round_robin.toml",
        "setup.toml",
    ] {
        assert!(compared.contains_key(name), "{name}: {compared:?}");
    }
}

/// `battlelab <command> FILE args… --format <format>` in `dir`, which must succeed.
fn cli_answer(dir: &Path, command: &str, file: &str, args: &[&str], format: &str) -> String {
    let mut all = vec![command, file, "--format", format];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = common::battlelab(dir, &all);
    assert_eq!(code, Some(0), "{all:?}: {stderr}");
    stdout
}

/// The analysis the panel downloads for `req` (its op set to `download`), written under
/// a new folder's `analyses/` (beside `rules/`): that folder's `analyses`.
fn downloaded_into(req: &Value, name: &str, dir: &Path) -> PathBuf {
    let mut download = req.clone();
    download["op"] = json!("download");
    let files = ok(&download)["files"].clone();
    let analyses = dir.join("analyses");
    std::fs::create_dir_all(&analyses).unwrap();
    std::fs::create_dir_all(dir.join("rules")).unwrap();
    for (file, text) in files.as_object().unwrap() {
        std::fs::write(analyses.join(file), text.as_str().unwrap()).unwrap();
    }
    assert!(analyses.join(name).is_file(), "{name} downloaded");
    analyses
}

/// The table rows and paragraphs of an answer's `sections`, as the page shows them.
fn sections_shown(sections: &Value) -> (Vec<Vec<String>>, Vec<String>) {
    let (mut rows, mut paragraphs) = (Vec::new(), Vec::new());
    for section in sections.as_array().expect("sections") {
        for block in section["blocks"].as_array().unwrap() {
            if let Some(p) = block["p"].as_str() {
                paragraphs.push(p.replace("**", "").replace('`', ""));
            } else if let Some(r) = block["rows"].as_array() {
                rows.extend(r.iter().map(|r| serde_json::from_value(r.clone()).unwrap()));
            }
        }
    }
    (rows, paragraphs)
}

#[test]
fn the_compare_op_compares_an_edited_files_variants_as_the_command_line_compares_them() {
    // (analysis, the panel's edit, variants, trials, --fdr/--alpha, the test it decides by)
    type Case<'a> = (&'a str, Value, &'a str, u64, &'a [&'a str], &'a str);
    let cases: [Case; 3] = [
        (
            "ratio_min_score.toml",
            json!({"side.b.argument": 0}),
            "floor 1 (printed),floor 2",
            2_000,
            &[],
            "exact",
        ),
        (
            "field_combat.toml",
            json!({"side.a.leader": 2}),
            "printed,DRM cap 3",
            2_000,
            &[],
            "exact",
        ),
        // Simulated: the same seed and trials give the same blocks (three of 2^16
        // trials, so paired t-tests), the same counts and tests, with the command line's
        // Benjamini–Hochberg at its α; twelve runs of each variant.
        (
            "field_combat.toml",
            json!({"exact": false, "side.a.leader": 2, "sweep.drm": {"from": -1, "to": 1}}),
            "printed,DRM cap 3",
            140_000,
            &["--fdr", "--alpha", "0.1"],
            "paired",
        ),
    ];
    for (name, edits, variants, trials, flags, test) in cases {
        let (text, files) = analysis(&root().join("analyses").join(name));
        let mut req = request("compare", name, &text, &files);
        req["edits"] = edits.clone();
        req["trials"] = json!(trials);
        req["variants"] = json!(variants);
        if !flags.is_empty() {
            req["fdr"] = json!(true);
            req["alpha"] = json!(0.1);
        }
        let ours = ok(&req);
        assert_eq!(ours["compared"], true, "{name}");
        assert!(
            ours["value"]["cells"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["test"] == test),
            "{name}: every cell decided by the {test} test"
        );
        let dir = tempfile::tempdir().unwrap();
        let analyses = downloaded_into(&req, name, dir.path());
        let trials_text = trials.to_string();
        let mut args = vec!["--variants", variants, "--trials", &trials_text, "--quiet"];
        args.extend_from_slice(flags);
        let cli: Value =
            serde_json::from_str(&cli_answer(&analyses, "compare", name, &args, "json")).unwrap();
        assert_eq!(
            ours["value"], cli,
            "{name}: the module's comparison is the CLI's"
        );
        let md = cli_answer(&analyses, "compare", name, &args, "md");
        assert_eq!(ours["markdown"].as_str(), Some(md.as_str()), "{name}");
        assert_eq!(
            ours["text"].as_str(),
            Some(cli_answer(&analyses, "compare", name, &args, "text").as_str()),
            "{name}"
        );
        // What the page writes into its cells and paragraphs is tables.md's.
        let shown = sections_shown(&ours["sections"]);
        assert_eq!(shown, common::markdown_shown(&md), "{name}");
        assert!(shown.0.len() >= 20, "{name}: {} rows", shown.0.len());
        // And the edit moved the comparison: without the value typed, it compares
        // otherwise.
        let mut unedited = req.clone();
        for key in ["side.a.leader", "side.b.argument"] {
            unedited["edits"].as_object_mut().unwrap().remove(key);
        }
        assert_ne!(
            sections_shown(&ok(&unedited)["sections"]).0,
            shown.0,
            "{name}: the edit moved nothing"
        );
    }
    // Past the page's limit nothing is simulated: the answer says how many battles.
    let (text, files) = analysis(&root().join("analyses/field_combat.toml"));
    let mut req = request("compare", "field_combat.toml", &text, &files);
    req["variants"] = json!("printed,DRM cap 3");
    req["max_battles"] = json!(20_000_000u64);
    let too_large = ok(&req);
    assert_eq!(too_large["compared"], false, "{too_large}");
    let pairs = too_large["pairs"].as_u64().unwrap();
    assert_eq!(too_large["battles"], json!(pairs * 2 * 1_000_000));
    assert!(too_large["sections"].is_null());
}

#[test]
fn the_equilibrium_op_solves_an_edited_file_as_the_command_line_solves_it() {
    let name = "field_equilibrium.toml";
    let (text, files) = analysis(&root().join("analyses").join(name));
    for (edits, payoff) in [
        (json!({"side.b.leader": 2}), None),
        (json!({"side.a.morale": 1}), Some("sp")),
    ] {
        let mut req = request("equilibrium", name, &text, &files);
        req["edits"] = edits.clone();
        let mut args = vec!["--quiet"];
        if let Some(p) = payoff {
            req["payoff"] = json!(p);
            args.extend(["--payoff", p]);
        }
        let ours = ok(&req);
        let dir = tempfile::tempdir().unwrap();
        let analyses = downloaded_into(&req, name, dir.path());
        let cli: Value =
            serde_json::from_str(&cli_answer(&analyses, "equilibrium", name, &args, "json"))
                .unwrap();
        assert_eq!(
            ours["value"], cli,
            "{edits}: the module's equilibria are the CLI's"
        );
        let md = cli_answer(&analyses, "equilibrium", name, &args, "md");
        assert_eq!(ours["markdown"].as_str(), Some(md.as_str()), "{edits}");
        assert_eq!(
            ours["text"].as_str(),
            Some(cli_answer(&analyses, "equilibrium", name, &args, "text").as_str()),
            "{edits}"
        );
        let shown = sections_shown(&ours["sections"]);
        assert_eq!(shown, common::markdown_shown(&md), "{edits}");
        // Eight runs (four odds, two variants), seven tactics each.
        assert_eq!(shown.0.len(), 8 * 7, "{edits}");
        let mut unedited = req.clone();
        unedited["edits"] = json!({});
        assert_ne!(
            sections_shown(&ok(&unedited)["sections"]),
            shown,
            "{edits}: the edit moved nothing"
        );
    }
}

/// The message `battlelab args…` (run in `dir`) exits 2 with, after `error: `.
fn cli_usage_error(dir: &Path, args: &[&str]) -> String {
    let (code, _, stderr) = common::battlelab(dir, args);
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .expect(&stderr)
        .to_string()
}

#[test]
fn the_compare_and_equilibrium_ops_refuse_with_the_command_lines_words() {
    let analyses = root().join("analyses");
    let (text, files) = analysis(&analyses.join("ratio_min_score.toml"));
    for variants in ["floor 1 (printed),floor 9", "floor 2,floor 2", "floor 2"] {
        let mut req = request("compare", "ratio_min_score.toml", &text, &files);
        req["variants"] = json!(variants);
        req["trials"] = json!(100);
        assert_eq!(
            refused(&req)["message"].as_str().unwrap(),
            cli_usage_error(
                &analyses,
                &[
                    "compare",
                    "ratio_min_score.toml",
                    "--variants",
                    variants,
                    "--trials",
                    "100"
                ]
            ),
            "{variants}"
        );
    }
    // A system without simultaneous choices has no equilibrium: the same refusal, naming
    // the systems that have one.
    let error = refused(&request(
        "equilibrium",
        "ratio_min_score.toml",
        &text,
        &files,
    ));
    assert_eq!(
        error["message"].as_str().unwrap(),
        cli_usage_error(&analyses, &["equilibrium", "ratio_min_score.toml"])
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("system = \"field\""),
        "{error}"
    );
    // A payoff the system does not read: the system's own words, as the CLI quotes them.
    let (text, files) = analysis(&analyses.join("field_equilibrium.toml"));
    let mut req = request("equilibrium", "field_equilibrium.toml", &text, &files);
    req["payoff"] = json!("glory");
    let message = refused(&req)["message"].as_str().unwrap().to_string();
    let cli = cli_usage_error(
        &analyses,
        &["equilibrium", "field_equilibrium.toml", "--payoff", "glory"],
    );
    assert_eq!(
        cli,
        format!("invalid value 'glory' for '--payoff <PAYOFF>': {message}")
    );
}

/// The pipe tables of a `tables.md`, in order: each its header, its rows (cut by
/// `battlelab_core::markdown::cells`, as the page's reader cuts them) and the paragraph
/// printed right under it (blank lines between skipped, its lines joined by spaces, as
/// the page shows it), if one is.
type MdTable = (Vec<String>, Vec<Vec<String>>, Option<String>);
fn md_tables(md: &str) -> Vec<MdTable> {
    let mut tables: Vec<MdTable> = Vec::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with('|') {
            i += 1;
            continue;
        }
        let header = battlelab_core::markdown::cells(lines[i]);
        // The rule under the header.
        i += 2;
        let mut rows = Vec::new();
        while i < lines.len() && lines[i].starts_with('|') {
            rows.push(battlelab_core::markdown::cells(lines[i]));
            i += 1;
        }
        let mut j = i;
        while j < lines.len() && lines[j].trim().is_empty() {
            j += 1;
        }
        let mut paragraph = Vec::new();
        if j < lines.len() && !lines[j].starts_with('#') && !lines[j].starts_with('|') {
            while j < lines.len() && !lines[j].trim().is_empty() && !lines[j].starts_with('|') {
                paragraph.push(lines[j].trim());
                j += 1;
            }
        }
        tables.push((
            header,
            rows,
            (!paragraph.is_empty()).then(|| paragraph.join(" ")),
        ));
    }
    tables
}

/// The module's `printed` tables of a run response, as `(header, rows, note)`.
fn printed_of(response: &Value) -> Vec<MdTable> {
    response["printed"]
        .as_array()
        .expect("printed")
        .iter()
        .map(|t| {
            (
                serde_json::from_value(t["header"].clone()).unwrap(),
                serde_json::from_value(t["rows"].clone()).unwrap(),
                t["note"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// `battlelab run` on the files the module downloads for `req`: its `tables.md`.
fn cli_tables_md(req: &Value, name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let analyses = downloaded_into(req, name, dir.path());
    let report = dir.path().join("report");
    let (code, _, stderr) = common::battlelab(
        &analyses,
        &[
            "run",
            name,
            "--trials",
            "100",
            "--quiet",
            "--out",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{name}: {stderr}");
    std::fs::read_to_string(report.join("tables.md")).unwrap()
}

#[test]
fn the_printed_rules_tables_are_the_command_lines_tables_md_for_the_edited_file() {
    // Every shipped rules-file analysis, as written and edited (a cell of its first
    // table, a DRM), in the module and in `battlelab run` on the downloaded files: the
    // module's printed tables are the tables `tables.md` prints before "How the battle
    // ends", cell for cell, with the paragraph under each (edges, "Runs: …").
    let crt_cell = ("rules:tables.crt.cells.\"1:1\"", json!("AR AR EX AE AE AE"));
    let drm = ("sides.attacker.leader", json!(2));
    // A DRM swept over two values: the runs read the rows two ways, so the table as
    // modified splits into two (other titles, another number of tables).
    let split = ("sweep.\"attacker.leader\"", json!([0, 2]));
    let cases: Vec<(&str, Vec<(&str, Value)>)> = vec![
        ("classic_crt.toml", vec![]),
        ("classic_crt.toml", vec![crt_cell.clone()]),
        ("classic_crt.toml", vec![drm.clone()]),
        ("classic_crt.toml", vec![crt_cell.clone(), drm.clone()]),
        ("classic_crt.toml", vec![split.clone()]),
        ("dice_pool.toml", vec![]),
        ("risk.toml", vec![]),
    ];
    let mut seen: Vec<Vec<MdTable>> = Vec::new();
    for (name, edits) in &cases {
        let (text, files) = analysis(&root().join("analyses").join(name));
        let mut req = request("run", name, &text, &files);
        req["exact_only"] = json!(true);
        for (path, value) in edits {
            req["edits"][*path] = value.clone();
        }
        let response = ok(&req);
        let ours = printed_of(&response);
        let md = cli_tables_md(&req, name);
        let theirs = md_tables(&md);
        let what = format!(
            "{name} with {:?}",
            edits.iter().map(|e| e.0).collect::<Vec<_>>()
        );
        // Every table but the last ("How the battle ends", recomputed from the runs).
        assert_eq!(ours.len() + 1, theirs.len(), "{what}: {md}");
        for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert_eq!(a, b, "{what}: table {k}");
        }
        // Keys are unique: the page finds each table by its key.
        let keys: std::collections::BTreeSet<&str> = response["printed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["key"].as_str().unwrap())
            .collect();
        assert_eq!(keys.len(), ours.len(), "{what}");
        seen.push(ours);
    }
    let (plain, edited, drm_moved, split) = (&seen[0], &seen[1], &seen[2], &seen[4]);
    // The cell edit moved the printed CRT's 1:1 column at roll 3 (AR → EX), no other
    // printed cell, and the table as modified (which reads the edited cells).
    let differing = |a: &MdTable, b: &MdTable| -> Vec<(usize, usize)> {
        let mut at = Vec::new();
        for (r, (x, y)) in a.1.iter().zip(&b.1).enumerate() {
            for (c, (p, q)) in x.iter().zip(y).enumerate() {
                if p != q {
                    at.push((r, c));
                }
            }
        }
        at
    };
    assert_eq!(differing(&plain[0], &edited[0]), [(2, 2)]);
    assert_eq!(edited[0].1[2][2], "EX");
    assert!(!differing(&plain[1], &edited[1]).is_empty());
    // The DRM moved the ‡ marks of the table as modified, not the printed table.
    assert_eq!(
        plain[0], drm_moved[0],
        "a DRM does not move the printed table"
    );
    let marks = |t: &MdTable| -> Vec<(usize, usize)> {
        let mut at = Vec::new();
        for (r, row) in t.1.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                if cell.ends_with('‡') {
                    at.push((r, c));
                }
            }
        }
        at
    };
    assert!(!marks(&plain[1]).is_empty());
    assert_ne!(marks(&plain[1]), marks(&drm_moved[1]), "the ‡ moved");
    // Swept over two DRMs: two tables as modified where there was one.
    assert_eq!(split.len(), plain.len() + 1);
}

/// The pipe tables of a `tables.md` each under the `##` heading it stands under.
fn md_tables_under_headings(md: &str) -> Vec<(String, Vec<String>, Vec<Vec<String>>)> {
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut lines = md.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(h) = line.strip_prefix("## ") {
            heading = h.trim().to_string();
        } else if line.starts_with('|') {
            let header = battlelab_core::markdown::cells(line);
            lines.next();
            let mut rows = Vec::new();
            while let Some(row) = lines.next_if(|l| l.starts_with('|')) {
                rows.push(battlelab_core::markdown::cells(row));
            }
            out.push((heading.clone(), header, rows));
        }
    }
    out
}

#[test]
fn a_built_in_systems_printed_table_is_the_command_lines_after_a_cell_edit() {
    // A d6 table, the naval engagement's table and the field CRT, a cell edited in the
    // analysis (`rules.cells`, `rules.crt_cells`): the module's printed table of each variant is the table
    // `tables.md` prints under its heading for the downloaded file, and the edit moved it.
    let cases = [
        ("storm.toml", "rules.cells.d6.\"3\"", "S", "3"),
        ("naval.toml", "rules.cells.\"3-2\".\"2\"", "SS", "2"),
        (
            "naval_engagement.toml",
            "rules.cells.\"3-2\".\"2\"",
            "SS",
            "2",
        ),
        // The field CRT: a row per odds column, the edited cell marked `*`.
        (
            "field_combat.toml",
            "rules.crt_cells.\"3:2\".\"8\"",
            "1/1",
            "3:2",
        ),
        // …printed in 36ths: a last row of each modified roll's chance at net DRM 0.
        (
            "field_combat.toml",
            "rules.crt_cells.\"3:2\".\"8\"",
            "1/1",
            "chance at net DRM 0",
        ),
    ];
    for (k, (name, path, code, roll)) in cases.into_iter().enumerate() {
        let (text, files) = analysis(&root().join("analyses").join(name));
        let mut req = request("run", name, &text, &files);
        req["exact_only"] = json!(true);
        let in36 = k == cases.len() - 1;
        if in36 {
            req["edits"] = json!({"tables.format": "in36"});
        }
        let before = ok(&req)["printed"].clone();
        req["edits"][path] = json!(code);
        let response = ok(&req);
        let printed = response["printed"].as_array().expect("printed");
        assert!(!printed.is_empty(), "{name}");
        let md = cli_tables_md(&req, name);
        let theirs = md_tables_under_headings(&md);
        for t in printed {
            let title = t["title"].as_str().unwrap();
            let (_, header, rows) = theirs
                .iter()
                .find(|(h, ..)| h == title)
                .unwrap_or_else(|| panic!("{name}: no table under \"## {title}\" in {md}"));
            assert_eq!(t["header"], json!(header), "{name}: {title}");
            assert_eq!(t["rows"], json!(rows), "{name}: {title}");
            assert_eq!(t["key"], t["title"], "{name}");
        }
        if in36 {
            let last = printed[0]["rows"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .clone();
            assert_eq!(last[0], roll, "{last}");
            assert!(
                last.as_array().unwrap()[1..]
                    .iter()
                    .all(|c| c.as_str().unwrap().ends_with(" in 36")),
                "{last}"
            );
            assert_ne!(
                response["printed"], before,
                "{name}: the edit moved the table"
            );
            continue;
        }
        // The edited cell reads the new code in the edited variant's table (the first).
        let row = printed[0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r[0] == roll)
            .unwrap();
        assert!(
            row.as_array()
                .unwrap()
                .iter()
                .any(|c| c == code || *c == format!("{code}*")),
            "{name}: {row}"
        );
        assert_ne!(
            response["printed"], before,
            "{name}: the edit moved the table"
        );
    }
}
