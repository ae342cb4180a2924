//! Field battles re-expressed as a rules file (`rules/field.toml`) against the built-in
//! field system (issue 42): choices each round (tactics) with fixed, mixed and uniform
//! policies, lookups with no dice (the tactical matrix, the Combat Loss Chart), scratch
//! values, odds read down or to the nearest column, and a round limit per run.
//!
//! For every run of `analyses/field_combat.toml` the built-in study is parsed as shipped
//! and, for the run, a rules-file analysis with the same battle is generated from the
//! built-in's own prepared battle and rules (SP, morale, leaders, DRMs, terrain, the DRM
//! cap, the round limit, each side's tactic mix as integer weights). Their exact
//! distributions are equal within 1e-12 (the built-in enumerates in `f64`): every outcome,
//! SP and morale lost per side, and battle length. Outcome names are mapped by an explicit
//! table. Runs whose rules differ from the printed ones in a table (odds rounding, edited
//! CRT, CLC or tactical cells, added odds columns) are fought by a copy of the rules file
//! with those tables rewritten from the built-in's rules. A few runs are also simulated
//! from the rules file through the engine's driver, with fixed seeds, and every count is
//! held to the built-in's exact probability within 4.5 binomial standard errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use battlelab_core::engine::{driver, System};
use battlelab_core::sim::RunControl;
use battlelab_core::systems::field::battle::{
    BattleDistribution, BattleResult, FieldRules, TacticCell, TACTIC_NAMES,
};
use battlelab_core::systems::field::FieldStudy;
use battlelab_core::systems::rules_file::chain::{Chain, Prepared};
use battlelab_core::systems::rules_file::{RulesExact, RulesStudy};
use num_traits::ToPrimitive;

/// Tolerance for the built-in's `f64` enumeration.
const F64_TOLERANCE: f64 = 1e-12;

/// Standard errors a simulated count may stray from its exact expectation.
const SIGMAS: f64 = 4.5;

/// Trials per Monte Carlo check.
const TRIALS: u64 = 200_000;

/// The built-in's outcome labels → the rules file's outcomes, listed once each so that a
/// renamed outcome fails.
const OUTCOME_NAMES: [(&str, &str); BattleResult::COUNT] = [
    ("A wins", "A wins"),
    ("B wins", "B wins"),
    ("both broken", "both broken"),
    ("A withdraws", "A withdraws"),
    ("B withdraws", "B withdraws"),
    ("both withdraw", "both withdraw"),
    ("broken off", "broken off"),
    ("round limit", "round limit"),
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(relative: &str) -> String {
    let path = repo().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A built-in field analysis as shipped, or from text as if it sat in `analyses/`.
fn field_study(text: &str) -> FieldStudy {
    FieldStudy::parse(&repo().join("analyses/field_equivalence.toml"), text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A side's tactic weights as a rules-file policy (`{ charge = 2, envelop = 1 }`).
fn policy(weights: &[u32; 7]) -> String {
    let parts: Vec<String> = (0..7)
        .filter(|t| weights[*t] > 0)
        .map(|t| format!("{} = {}", TACTIC_NAMES[t], weights[t]))
        .collect();
    format!("{{ {} }}", parts.join(", "))
}

/// The rules-file analysis of one built-in run: every setting read from the built-in's
/// prepared battle and rules (so the comparison cannot drift from what the built-in ran).
fn rules_analysis(study: &FieldStudy, run: usize, rules_path: &Path) -> String {
    let r = &study.runs[run];
    let p = &r.prepared;
    let rules = r.field.rules();
    let cap = |c: Option<i32>| c.unwrap_or(12);
    let mut text = format!(
        "system = \"rules\"\nrules = {}\n",
        toml::Value::String(rules_path.display().to_string())
    );
    for (k, side) in ["a", "b"].iter().enumerate() {
        text.push_str(&format!(
            "\n[sides.{side}]\nsp = {}\nmorale = {}\nleader = {}\ndrm = {}\ntactic = {}\n",
            p.start.sp[k],
            p.start.morale[k],
            p.leader[k],
            p.drm[k],
            policy(&p.mix[k].weights)
        ));
    }
    text.push_str(&format!(
        "\n[parameters]\nterrain_drm = {}\ndrm_cap = {}\nroll_min = {}\nroll_max = {}\nround_limit = {}\ncap_leader = {}\ncap_morale = {}\ncap_terrain = {}\ncap_tactic = {}\ncap_drm = {}\n",
        p.terrain_drm,
        rules.drm_cap,
        rules.roll_min,
        rules.roll_max,
        rules.round_limit,
        cap(rules.caps.leader),
        cap(rules.caps.morale),
        cap(rules.caps.terrain),
        cap(rules.caps.tactic),
        cap(rules.caps.drm),
    ));
    text
}

/// The rules file a built-in run's tables are fought by: `rules/field.toml` where the run
/// reads the printed tables, else a copy (in `dir`) with the CRT, odds columns, odds
/// rounding, CLC and tactical matrix rewritten from the built-in's rules, and any result
/// code the rewritten cells need added.
fn rules_file_for(rules: &FieldRules, dir: &Path, tag: &str) -> PathBuf {
    let printed = FieldRules::printed();
    let tables_as_printed = rules.crt == printed.crt
        && rules.crt_cells.is_empty()
        && rules.odds_columns == printed.odds_columns
        && rules.odds_rounding == printed.odds_rounding
        && rules.clc == printed.clc
        && rules.tactics == printed.tactics;
    let shipped = repo().join("rules/field.toml");
    if tables_as_printed {
        return shipped;
    }
    let mut doc: toml::Table = toml::from_str(&read("rules/field.toml")).expect("TOML");
    let mut codes: Vec<(String, Vec<String>)> = Vec::new();
    let tables = doc["tables"].as_table_mut().expect("tables");
    // The CRT: odds row × modified roll, each cell the built-in's own reading.
    let labels = rules.odds_labels();
    let mut cells = toml::Table::new();
    for (odds, label) in labels.iter().enumerate() {
        let column: Vec<String> = (2..=12)
            .map(|roll| {
                let pair = rules.cell(odds, roll);
                let code = pair.to_string();
                let row = |r: battlelab_core::systems::field::battle::CrtResult| {
                    r.clc_row().map_or(0, |row| row as i64 + 1)
                };
                codes.push((
                    code.clone(),
                    vec![
                        format!("larger_row = {}", row(pair.larger)),
                        format!("larger_morale = {}", pair.larger.morale_loss()),
                        format!("smaller_row = {}", row(pair.smaller)),
                        format!("smaller_morale = {}", pair.smaller.morale_loss()),
                    ],
                ));
                code
            })
            .collect();
        cells.insert(label.clone(), toml::Value::String(column.join(" ")));
    }
    let crt = tables["crt"].as_table_mut().expect("crt");
    crt.insert("cells".into(), toml::Value::Table(cells));
    let columns = crt["columns"].as_table_mut().expect("columns");
    columns.insert(
        "labels".into(),
        labels
            .into_iter()
            .map(toml::Value::String)
            .collect::<Vec<_>>()
            .into(),
    );
    let rounding = format!("{:?}", rules.odds_rounding).to_lowercase();
    columns.insert("round".into(), toml::Value::String(rounding));
    // The CLC: a column per band, rows 1, D1, D2 or D3.
    let bands = rules.clc.band_labels();
    let mut cells = toml::Table::new();
    for (b, label) in bands.iter().enumerate() {
        let column: Vec<String> = (0..3)
            .map(|row| {
                let v = rules.clc.values[row][b];
                codes.push((v.to_string(), vec![format!("clc_loss = {v}")]));
                v.to_string()
            })
            .collect();
        cells.insert(label.clone(), toml::Value::String(column.join(" ")));
    }
    let clc = tables["clc"].as_table_mut().expect("clc");
    clc.insert("cells".into(), toml::Value::Table(cells));
    clc["columns"].as_table_mut().expect("columns").insert(
        "labels".into(),
        bands
            .into_iter()
            .map(toml::Value::String)
            .collect::<Vec<_>>()
            .into(),
    );
    // The tactical matrix, column by column (S's tactic), rows L's tactic.
    let mut cells = toml::Table::new();
    for (s, name) in TACTIC_NAMES.iter().enumerate() {
        let column: Vec<String> = (0..7)
            .map(|l| {
                let cell: TacticCell = rules.tactics.cells[l][s];
                let code = cell.to_string();
                let mut effects = vec![format!("tactic_drm = {}", cell.drm)];
                if cell.no_combat {
                    effects.push("no_combat = 1".into());
                }
                if cell.ends_battle {
                    effects.push("ends = 1".into());
                }
                codes.push((code.clone(), effects));
                code
            })
            .collect();
        cells.insert((*name).into(), toml::Value::String(column.join(" ")));
    }
    tables["tactics"]
        .as_table_mut()
        .expect("tactics")
        .insert("cells".into(), toml::Value::Table(cells));
    // Codes the rewritten cells use that the file lacks ("0" is shared: no DRM, no loss).
    let results = doc["results"].as_table_mut().expect("results");
    for (code, effects) in codes {
        if !results.contains_key(&code) {
            let mut t = toml::Table::new();
            t.insert(
                "effects".into(),
                effects
                    .into_iter()
                    .map(toml::Value::String)
                    .collect::<Vec<_>>()
                    .into(),
            );
            results.insert(code, toml::Value::Table(t));
        }
    }
    let path = dir.join(format!("{tag}.toml"));
    std::fs::write(&path, toml::to_string(&doc).expect("TOML")).expect("write");
    path
}

/// The one-run rules study for run `run` of a built-in study.
fn rules_run(study: &FieldStudy, run: usize, dir: &Path, tag: &str) -> RulesStudy {
    let path = rules_file_for(study.runs[run].field.rules(), dir, tag);
    let text = rules_analysis(study, run, &path);
    let rules = RulesStudy::parse(&repo().join("analyses/field_equivalence.toml"), &text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(rules.runs.len(), 1, "{text}");
    rules
}

/// A rules outcome's or metric bin's probability: its fraction where the chain is small
/// enough to sum them, else the `f64` enumeration.
fn rules_outcome(rules: &RulesStudy, exact: &RulesExact, name: &str) -> f64 {
    let i = rules
        .game(0)
        .outcomes
        .iter()
        .position(|o| o.0 == name)
        .unwrap_or_else(|| panic!("the rules file has no outcome {name}"));
    match &exact.fractions {
        Some(f) => f.outcomes[i].to_f64().expect("a probability"),
        None => exact.outcomes[i],
    }
}

/// A rules metric's distribution, value → probability, zeros dropped.
fn rules_metric(rules: &RulesStudy, exact: &RulesExact, metric: &str) -> BTreeMap<i64, f64> {
    let game = rules.game(0);
    let m = game
        .metrics
        .iter()
        .position(|x| x.0 == metric)
        .unwrap_or_else(|| panic!("the rules file has no metric {metric}"));
    let lo = game.metrics[m].2 .0;
    let values: Vec<f64> = match &exact.fractions {
        Some(f) => f.metrics[m]
            .iter()
            .map(|p| p.to_f64().expect("a probability"))
            .collect(),
        None => exact.metrics[m].clone(),
    };
    values
        .into_iter()
        .enumerate()
        .filter(|(_, p)| *p != 0.0)
        .map(|(i, p)| (i as i64 + lo, p))
        .collect()
}

/// A built-in distribution as value → probability, zeros dropped (`first`: the value of
/// index 0).
fn as_map(values: &[f64], first: i64) -> BTreeMap<i64, f64> {
    values
        .iter()
        .enumerate()
        .filter(|(_, p)| **p != 0.0)
        .map(|(i, p)| (i as i64 + first, *p))
        .collect()
}

fn assert_close(mine: &BTreeMap<i64, f64>, theirs: &BTreeMap<i64, f64>, what: &str) {
    let keys: std::collections::BTreeSet<i64> = mine.keys().chain(theirs.keys()).copied().collect();
    for k in keys {
        let (m, t) = (
            mine.get(&k).copied().unwrap_or(0.0),
            theirs.get(&k).copied().unwrap_or(0.0),
        );
        assert!(
            (m - t).abs() <= F64_TOLERANCE,
            "{what} = {k}: {t} built in, {m} from the rules file"
        );
    }
}

/// The built-in's exact results for one run, as the rules file names them: outcomes, and
/// each metric's distribution (SP and morale lost per side, rounds).
struct Expected {
    outcomes: Vec<(String, f64)>,
    metrics: Vec<(String, BTreeMap<i64, f64>)>,
    rounds: BTreeMap<i64, f64>,
}

fn expected_of(d: &BattleDistribution) -> Expected {
    let outcomes = BattleResult::ALL
        .iter()
        .map(|r| {
            let name = OUTCOME_NAMES
                .iter()
                .find(|(b, _)| *b == r.label())
                .unwrap_or_else(|| panic!("the built-in outcome {} is not mapped", r.label()))
                .1;
            (name.to_string(), d.result[r.index()])
        })
        .collect();
    let metrics = vec![
        ("sp_lost_a".to_string(), as_map(&d.sp_lost[0], 0)),
        ("sp_lost_b".to_string(), as_map(&d.sp_lost[1], 0)),
        ("morale_lost_a".to_string(), as_map(&d.morale_lost[0], 0)),
        ("morale_lost_b".to_string(), as_map(&d.morale_lost[1], 0)),
    ];
    Expected {
        outcomes,
        metrics,
        rounds: as_map(&d.rounds, 0),
    }
}

/// Run `run` of `study` against its rules file: every exact distribution equal within
/// 1e-12. Returns the built-in's expectations (for a Monte Carlo check) and the rules study.
fn run_equals(study: &FieldStudy, run: usize, dir: &Path, what: &str) -> (Expected, RulesStudy) {
    let builtin = study
        .exact(run)
        .unwrap_or_else(|| panic!("{what}: the built-in is exact"));
    let rules = rules_run(study, run, dir, &format!("run{run}"));
    let exact = rules
        .exact(0)
        .unwrap_or_else(|| panic!("{what}: the rules file is solved exactly"));
    let game = rules.game(0);
    // Every outcome of either side is in the name table once.
    for (name, _) in &game.outcomes {
        assert_eq!(
            OUTCOME_NAMES.iter().filter(|m| m.1 == name).count(),
            1,
            "{what}: the rules file's outcome {name} is mapped once"
        );
    }
    let expected = expected_of(&builtin);
    for (name, p) in &expected.outcomes {
        let mine = rules_outcome(&rules, &exact, name);
        assert!(
            (mine - p).abs() <= F64_TOLERANCE,
            "{what}: P({name}) is {p} built in, {mine} from the rules file"
        );
    }
    for (metric, theirs) in &expected.metrics {
        assert_close(
            &rules_metric(&rules, &exact, metric),
            theirs,
            &format!("{what}: {metric}"),
        );
    }
    let rounds = exact
        .rounds
        .as_ref()
        .expect("a round limit: rounds are exact");
    assert_close(
        &as_map(rounds, 0),
        &expected.rounds,
        &format!("{what}: rounds"),
    );
    (expected, rules)
}

/// Simulates `rules` through the engine's driver and holds every outcome count and every
/// metric bin to the built-in's exact probabilities within [`SIGMAS`] binomial standard
/// errors (a probability of 0 or 1 must be met exactly). Returns the largest deviation.
fn monte_carlo_agrees(rules: &RulesStudy, expected: &Expected, seed: u64, what: &str) -> f64 {
    let results = driver::run(rules, TRIALS, seed, &RunControl::default()).expect("not stopped");
    let counts = &results.counts[0];
    let game = rules.game(0);
    assert_eq!(counts.trials(), TRIALS, "{what}");
    let n = TRIALS as f64;
    let mut worst: f64 = 0.0;
    let mut check = |count: u64, p: f64, label: &str| {
        let mean = n * p;
        let sd = (n * p * (1.0 - p)).max(0.0).sqrt();
        if sd < 1e-9 {
            assert!(
                (count as f64 - mean).abs() < 0.5,
                "{what}: {label}: {count} of {TRIALS} where the exact probability is {p}"
            );
            return;
        }
        let z = (count as f64 - mean).abs() / sd;
        assert!(
            z <= SIGMAS,
            "{what}: {label}: {count} of {TRIALS}, exact {p}: {z:.2} standard errors"
        );
        worst = worst.max(z);
    };
    for (name, p) in &expected.outcomes {
        let i = game
            .outcomes
            .iter()
            .position(|o| o.0 == *name)
            .expect("mapped");
        check(counts.outcomes[i], *p, name);
    }
    for (metric, dist) in &expected.metrics {
        let m = game
            .metrics
            .iter()
            .position(|x| x.0 == *metric)
            .expect("a metric");
        let lo = game.metrics[m].2 .0;
        for (bin, count) in counts.metrics[m].iter().enumerate() {
            let value = bin as i64 + lo;
            check(
                *count,
                dist.get(&value).copied().unwrap_or(0.0),
                &format!("{metric} = {value}"),
            );
        }
    }
    for (rounds, count) in counts.rounds.iter().enumerate() {
        let p = expected
            .rounds
            .get(&(rounds as i64))
            .copied()
            .unwrap_or(0.0);
        check(*count, p, &format!("rounds = {rounds}"));
    }
    worst
}

#[test]
fn field_rules_file_equals_the_built_in_on_every_run_of_field_combat() {
    let study = field_study(&read("analyses/field_combat.toml"));
    let dir = tempfile::tempdir().expect("a temporary folder");
    let runs = study.runs.len();
    // 4 odds × 7 DRMs × 2 variants.
    assert_eq!(runs, 4 * 7 * 2);
    for run in 0..runs {
        let what = format!("field_combat run {run} ({:?})", study.runs[run].coordinates);
        let (expected, rules) = run_equals(&study, run, dir.path(), &what);
        if run == 0 || run == runs / 2 + 3 || run + 1 == runs {
            let z = monte_carlo_agrees(&rules, &expected, 1815 + run as u64, &what);
            eprintln!("{what}: simulated within {z:.2} standard errors");
        }
    }
}

/// A small built-in analysis with the given sides, battle and rules tables, every run
/// compared (and the first simulated when `simulate`).
fn equal_off_grid(body: &str, simulate: bool) -> usize {
    let text = format!("system = \"field\"\nseed = 7\ntrials = 1000\n{body}");
    let study = field_study(&text);
    let dir = tempfile::tempdir().expect("a temporary folder");
    for run in 0..study.runs.len() {
        let what = format!("{body}\nrun {run} ({:?})", study.runs[run].coordinates);
        let (expected, rules) = run_equals(&study, run, dir.path(), &what);
        if simulate && run == 0 {
            let z = monte_carlo_agrees(&rules, &expected, 42, &what);
            eprintln!("off grid: simulated within {z:.2} standard errors");
        }
    }
    study.runs.len()
}

#[test]
fn fixed_uniform_and_mixed_policies_equal_the_built_in() {
    // Every fixed tactic for A (so every row of the matrix is read as L), uniform for B,
    // and the mixes of the shipped analysis swapped.
    let runs = equal_off_grid(
        r#"
[side.a]
sp = 9
morale = 2
leader = 2
tactic = "uniform"
[side.b]
sp = 6
morale = 3
leader = 1
tactic = "uniform"
[sweep]
a.tactic = ["charge", "envelop", "skirmish", "bombard", "square", "refuse", "withdraw", "uniform"]
"#,
        true,
    );
    assert_eq!(runs, 8);
    // B larger: B's tactic is the matrix's row; terrain against L; every fixed B tactic.
    let runs = equal_off_grid(
        r#"
[battle]
terrain_drm = -2
[side.a]
sp = 5
morale = 1
drm = 2
tactic = { mix = { skirmish = 2, square = 1, refuse = 1 } }
[side.b]
sp = 11
morale = 2
leader = 3
tactic = "charge"
[sweep]
b.tactic = ["charge", "envelop", "skirmish", "bombard", "square", "refuse", "withdraw"]
"#,
        false,
    );
    assert_eq!(runs, 7);
}

#[test]
fn odds_rounding_round_limit_morale_caps_and_roll_clamp_equal_the_built_in() {
    // Odds between columns read to the nearest (and up), against SP that fall between
    // them; the round limit swept; morale of every kind.
    let runs = equal_off_grid(
        r#"
[side.a]
sp = 12
morale = 3
tactic = { mix = { charge = 3, envelop = 1 } }
[side.b]
sp = 7
morale = 1
tactic = { mix = { skirmish = 1, refuse = 2, withdraw = 1 } }
[sweep]
a.sp = [8, 9, 10, 11, 13, 17, 18, 19, 25]
round_limit = [1, 3, 10]
[[variant]]
name = "nearest"
rules = { odds_rounding = "nearest" }
[[variant]]
name = "up"
rules = { odds_rounding = "up" }
"#,
        true,
    );
    assert_eq!(runs, 9 * 3 * 2);
    // Each source's cap, the net cap and the roll clamp.
    let runs = equal_off_grid(
        r#"
[battle]
terrain_drm = 3
[side.a]
sp = 10
morale = 4
leader = 3
drm = 4
tactic = { mix = { charge = 1, skirmish = 1 } }
[side.b]
sp = 10
morale = 1
drm = -2
tactic = { mix = { envelop = 1, square = 1 } }
[[variant]]
name = "caps"
rules = { caps = { leader = 1, morale = 2, terrain = 1, tactic = 1, drm = 2 } }
[[variant]]
name = "net cap 6, roll 4 to 10"
rules = { drm_cap = 6, roll = { min = 4, max = 10 } }
"#,
        false,
    );
    assert_eq!(runs, 2);
}

#[test]
fn edited_crt_clc_odds_and_tactical_cells_equal_the_built_in() {
    let runs = equal_off_grid(
        r#"
[side.a]
sp = 14
morale = 2
leader = 1
tactic = "uniform"
[side.b]
sp = 5
morale = 2
tactic = "uniform"
[sweep]
a.sp = [5, 8, 14, 22]
[rules.crt]
"8" = "1/1"
[rules.crt_cells."3:2"]
"5" = "0/0"
[rules.odds]
"4:1" = 5
[rules.clc.D1]
"4-5" = 0
"21+" = 7
[rules.tactics.charge]
square = "+3"
withdraw = "(NC)"
[rules.tactics.withdraw]
charge = "(-3)"
"#,
        true,
    );
    assert_eq!(runs, 4);
}

/// How big the chain is for 12 v 8 with the shipped analysis's mixed tactics, and how
/// long the rules file's exact result takes beside the built-in's (printed; run with
/// `--nocapture`). Held: the chain's size, and both results equal.
#[test]
fn field_12_v_8_mixed_chain_size_and_timing() {
    let text = read("analyses/field_combat.toml").replace("[sweep]", "[unused]");
    let text = text
        .split("[unused]")
        .next()
        .expect("the analysis")
        .to_string();
    let study = field_study(&text);
    assert_eq!(study.runs.len(), 1);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let what = "12 v 8 mixed";
    run_equals(&study, 0, dir.path(), what);
    let path = rules_file_for(study.runs[0].field.rules(), dir.path(), "timing");
    let analysis = rules_analysis(&study, 0, &path);
    let repeats = 20;
    let t = Instant::now();
    for _ in 0..repeats {
        std::hint::black_box(study.exact(0));
    }
    let builtin = t.elapsed() / repeats;
    let t = Instant::now();
    let mut rules = None;
    for _ in 0..repeats {
        rules = Some(
            RulesStudy::parse(&repo().join("analyses/field_equivalence.toml"), &analysis)
                .expect("parses"),
        );
    }
    let parse = t.elapsed() / repeats;
    let rules = rules.expect("parsed");
    let t = Instant::now();
    for _ in 0..repeats {
        std::hint::black_box(rules.exact(0));
    }
    let exact = t.elapsed() / repeats;
    let battlelab_core::systems::rules_file::Form::Chain { chain, .. } = &rules.runs[0].form else {
        panic!("12 v 8 is a chain");
    };
    // The chain alone (what `parse` spends on this run beyond reading the files).
    let game = rules.game(0);
    let compare = Prepared::of(game);
    let t = Instant::now();
    for _ in 0..repeats {
        std::hint::black_box(Chain::build(game, &compare, &rules.runs[0].base).expect("builds"));
    }
    let build = t.elapsed() / repeats;
    let t = Instant::now();
    for _ in 0..repeats {
        let order = chain.order().expect("no cycle");
        std::hint::black_box(chain.absorption_f64(&order));
    }
    let absorb = t.elapsed() / repeats;
    eprintln!(
        "{what}: chain of {} states ({} ending the battle), {} transitions; built-in exact {:?}; rules file: parse (files and chain) {:?}, of which the chain {:?}; exact {:?} (fractions: {}), of which absorption in f64 {:?}",
        chain.states.len(),
        chain.terminal.iter().filter(|t| **t).count(),
        chain.edges.len(),
        builtin,
        parse,
        build,
        exact,
        rules.exact(0).expect("exact").fractions.is_some(),
        absorb,
    );
    assert!(chain.states.len() > 100 && chain.states.len() < 20_000);
}
