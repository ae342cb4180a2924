//! The seed systems re-expressed as rules files (`rules/attrition.toml`, `march.toml`,
//! `naval.toml`, `blockade.toml`, `pursuit.toml`, `transport.toml`, `storm.toml`,
//! `naval_engagement.toml`) against the built-in systems they restate (issue 42, proof 1).
//!
//! For every run of every shipped analysis of those systems, the built-in study is parsed
//! as shipped and, for the run, a rules-file analysis with the same settings is generated
//! (an odds sweep's column becomes the fleets' NSP; a variant's changed cells become a copy
//! of the rules file with those cells changed). Their exact outcome distributions are equal
//! — as fractions where the built-in gives fractions (the d6 tables), else within 1e-12
//! (the built-in's naval engagements and attrition turns are enumerated in `f64`) — and so
//! are the values each outcome carries (SP lost, MP gained, NSP lost, retreats, rounds).
//! Outcome names are mapped by an explicit table, never by position. A few runs are also
//! simulated from the rules files through the engine's driver, with fixed seeds, and every
//! count is held to the built-in's exact probability within 4.5 binomial standard errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use battlelab_core::analysis::AxisValue;
use battlelab_core::engine::{driver, System};
use battlelab_core::sim::RunControl;
use battlelab_core::systems::d6_tables::lookup::{outcome_values, D6Table};
use battlelab_core::systems::d6_tables::{D6TableStudy, TableExact};
use battlelab_core::systems::naval_engagement::NavalEngagementStudy;
use battlelab_core::systems::rules_file::game::Game;
use battlelab_core::systems::rules_file::{RulesExact, RulesStudy};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

/// Tolerance for the built-in's `f64` enumerations (naval engagements, attrition turns).
const F64_TOLERANCE: f64 = 1e-12;

/// Standard errors a simulated count may stray from its exact expectation.
const SIGMAS: f64 = 4.5;

/// Trials per Monte Carlo check.
const TRIALS: u64 = 200_000;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(relative: &str) -> String {
    let path = repo().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A fraction as the built-in prints it (`"1/6"`, `"0"`, `"1"`).
fn fraction(text: &str) -> BigRational {
    let int = |t: &str| {
        t.parse::<BigInt>()
            .unwrap_or_else(|e| panic!("{text}: {e}"))
    };
    match text.split_once('/') {
        Some((n, d)) => BigRational::new(int(n), int(d)),
        None => BigRational::from_integer(int(text)),
    }
}

fn to_f64(p: &BigRational) -> f64 {
    p.to_f64().expect("a probability")
}

/// A rules-file analysis of one run: `rules` with these settings (`side.key` under
/// `[sides.side]`, a plain key under `[parameters]`), parsed as if it sat in `analyses/`.
fn rules_run(rules: &Path, settings: &[(String, i64)]) -> RulesStudy {
    let mut text = format!(
        "system = \"rules\"\nrules = {}\n",
        toml::Value::String(rules.display().to_string())
    );
    let mut sides: BTreeMap<&str, Vec<(&str, i64)>> = BTreeMap::new();
    let mut parameters = Vec::new();
    for (name, value) in settings {
        match name.split_once('.') {
            Some((side, key)) => sides.entry(side).or_default().push((key, *value)),
            None => parameters.push((name.as_str(), *value)),
        }
    }
    for (side, keys) in &sides {
        text.push_str(&format!("\n[sides.{side}]\n"));
        for (key, value) in keys {
            text.push_str(&format!("{key} = {value}\n"));
        }
    }
    if !parameters.is_empty() {
        text.push_str("\n[parameters]\n");
        for (key, value) in &parameters {
            text.push_str(&format!("{key} = {value}\n"));
        }
    }
    let path = repo().join("analyses/seed_equivalence.toml");
    let study = RulesStudy::parse(&path, &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(study.runs.len(), 1, "{text}");
    study
}

/// The exact result of a one-run rules study.
fn rules_exact(study: &RulesStudy) -> RulesExact {
    study
        .exact(0)
        .expect("every seed rules file is solved exactly")
}

/// The rules file a built-in variant's table is fought by: the shipped file where the
/// variant prints the table as shipped, else a copy (in `dir`) with the variant's changed
/// cells written into table `table_name` of the rules file.
fn rules_for_variant(
    shipped: &str,
    table_name: &str,
    printed: &D6Table,
    used: &D6Table,
    dir: &Path,
    tag: &str,
) -> PathBuf {
    let shipped_path = repo().join(shipped);
    if used == printed {
        return shipped_path;
    }
    assert_eq!(used.column_labels, printed.column_labels);
    let mut doc: toml::Table = toml::from_str(&read(shipped)).expect("a TOML rules file");
    let cells = doc["tables"][table_name]["cells"]
        .as_table_mut()
        .expect("the table's cells");
    for (c, label) in printed.column_labels.iter().enumerate() {
        if used.cells[c] == printed.cells[c] {
            continue;
        }
        let column = cells.get_mut(label).expect("a column of the rules file");
        let mut codes: Vec<String> = column
            .as_str()
            .expect("codes")
            .split_whitespace()
            .map(str::to_string)
            .collect();
        assert_eq!(codes.len(), used.cells[c].len(), "column {label}");
        for (row, code) in used.cells[c].iter().enumerate() {
            if *code != printed.cells[c][row] {
                codes[row] = code.clone();
            }
        }
        *column = toml::Value::String(codes.join(" "));
    }
    let path = dir.join(format!("{tag}.toml"));
    std::fs::write(&path, toml::to_string(&doc).expect("TOML")).expect("write");
    path
}

/// A rules outcome's exact probability, by name.
fn rules_outcome(study: &RulesStudy, exact: &RulesExact, name: &str) -> BigRational {
    let i = study
        .game(0)
        .outcomes
        .iter()
        .position(|o| o.0 == name)
        .unwrap_or_else(|| panic!("the rules file has no outcome {name}"));
    // Fractions where the chain is small enough to sum them; the floating-point
    // enumeration otherwise (compared within 1e-12, as the built-in's f64 are).
    match &exact.fractions {
        Some(f) => f.outcomes[i].clone(),
        None => BigRational::from_float(exact.outcomes[i]).expect("a probability"),
    }
}

/// A rules metric's exact distribution, value → probability, zeros dropped.
fn rules_metric(
    study: &RulesStudy,
    exact: &RulesExact,
    metric: &str,
) -> BTreeMap<i64, BigRational> {
    let game = study.game(0);
    let m = game
        .metrics
        .iter()
        .position(|m| m.0 == metric)
        .unwrap_or_else(|| panic!("the rules file has no metric {metric}"));
    let lo = game.metrics[m].2 .0;
    let values: Vec<BigRational> = match &exact.fractions {
        Some(f) => f.metrics[m].clone(),
        None => exact.metrics[m]
            .iter()
            .map(|p| BigRational::from_float(*p).expect("a probability"))
            .collect(),
    };
    values
        .into_iter()
        .enumerate()
        .filter(|(_, p)| !p.is_zero())
        .map(|(i, p)| (i as i64 + lo, p))
        .collect()
}

/// Every name on each side of `map` is mapped once, both ways: no outcome is dropped.
fn check_mapping(map: &[(&str, &str)], builtin: &[String], rules: &Game, what: &str) {
    for name in builtin {
        assert!(
            map.iter().any(|m| m.0 == name),
            "{what}: the built-in outcome {name} is not in the name table"
        );
    }
    for (name, _) in &rules.outcomes {
        assert_eq!(
            map.iter().filter(|m| m.1 == name).count(),
            1,
            "{what}: the rules file's outcome {name} is not in the name table once"
        );
    }
}

/// One of the seven d6 tables: its analysis, rules file, table, the names of the built-in
/// outcomes in the rules file, and of the built-in's expectation values in its metrics.
struct D6Case {
    analysis: &'static str,
    rules: &'static str,
    table: &'static str,
    names: &'static [(&'static str, &'static str)],
    values: &'static [(&'static str, &'static str)],
}

/// The same code in both, listed once per code so that a renamed outcome fails.
const ATTRITION_NAMES: &[(&str, &str)] = &[
    ("0", "0"),
    ("1", "1"),
    ("2*", "2*"),
    ("3*", "3*"),
    ("4*", "4*"),
    ("5*", "5*"),
];
const MARCH_NAMES: &[(&str, &str)] = &[
    ("0", "0"),
    ("1", "1"),
    ("2", "2"),
    ("3", "3"),
    ("1*", "1*"),
    ("2*", "2*"),
];
const NAVAL_NAMES: &[(&str, &str)] = &[
    ("2LS", "2LS"),
    ("LS", "LS"),
    ("2LC", "2LC"),
    ("LC", "LC"),
    ("LR", "LR"),
    ("SR", "SR"),
    ("SS", "SS"),
    ("SC", "SC"),
    ("2SS", "2SS"),
    ("2SC", "2SC"),
];
const BLOCKADE_NAMES: &[(&str, &str)] = &[("F*", "F*"), ("F", "F"), ("E", "E")];
const PURSUIT_NAMES: &[(&str, &str)] = &[("F", "F"), ("I", "I")];
const TRANSPORT_NAMES: &[(&str, &str)] = &[("C", "C"), ("S", "S"), ("E", "E")];
const STORM_NAMES: &[(&str, &str)] = &[("S", "S"), ("D", "D"), ("E", "E")];

/// The built-in's expectation values (`lookup::outcome_values`) → the rules file's metrics.
const ATTRITION_VALUES: &[(&str, &str)] = &[
    ("SP eliminated", "sp_lost"),
    ("P(cavalry loss)", "cavalry_lost"),
];
const MARCH_VALUES: &[(&str, &str)] = &[
    ("extra MP gained", "mp_gained"),
    ("SP eliminated", "sp_lost"),
];
const NAVAL_VALUES: &[(&str, &str)] = &[
    ("NSP lost by L", "nsp_lost_larger"),
    ("NSP lost by S", "nsp_lost_smaller"),
    ("P(L retreats)", "retreats_larger"),
    ("P(S retreats)", "retreats_smaller"),
];

/// A `[roll]` value the analysis fixes (not swept).
fn fixed_roll(analysis: &toml::Table, key: &str) -> Option<toml::Value> {
    analysis.get("roll").and_then(|r| r.get(key)).cloned()
}

/// The rules-file settings of a built-in d6 run: its DRM and what picks its column.
fn d6_settings(
    study: &D6TableStudy,
    analysis: &toml::Table,
    system: &str,
    run: usize,
) -> Vec<(String, i64)> {
    let point = &study.points[run];
    let swept = |key: &str| {
        study
            .axes
            .iter()
            .position(|a| a.parameter == key)
            .map(|i| point.coordinates[i].clone())
    };
    let int = |key: &str| match swept(key) {
        Some(AxisValue::Int(v)) => v,
        Some(other) => panic!("{key} = {other:?}"),
        None => fixed_roll(analysis, key)
            .and_then(|v| v.as_integer())
            .unwrap_or_else(|| panic!("{key} is neither swept nor given")),
    };
    let mut settings = vec![("drm".to_string(), i64::from(point.drm))];
    match system {
        "attrition" => {
            settings.push(("sp".into(), int("sp")));
            settings.push(("small_stack".into(), i64::from(study.small_stack_column)));
        }
        "march" => settings.push(("extra".into(), int("extra"))),
        "naval" => {
            // The built-in names the column; here the fleets' NSP pick it.
            let (larger, smaller) = match swept("odds") {
                Some(AxisValue::Odds { larger, smaller }) => (larger, smaller),
                Some(other) => panic!("odds = {other:?}"),
                None => {
                    let text = fixed_roll(analysis, "odds").expect("roll.odds");
                    let (l, s) = text.as_str().expect("odds text").split_once('-').unwrap();
                    (l.parse().unwrap(), s.parse().unwrap())
                }
            };
            settings.push(("larger.nsp".into(), i64::from(larger)));
            settings.push(("smaller.nsp".into(), i64::from(smaller)));
        }
        _ => {}
    }
    settings
}

/// Simulates `rules` through the engine's driver and holds every outcome count and every
/// metric bin to the expected probabilities within [`SIGMAS`] binomial standard errors (a
/// probability of 0 or 1 must be met exactly). Returns the largest deviation in sigmas.
fn monte_carlo_agrees(
    rules: &RulesStudy,
    outcomes: &[(String, f64)],
    metrics: &[(String, BTreeMap<i64, f64>)],
    seed: u64,
    what: &str,
) -> f64 {
    let results = driver::run(rules, TRIALS, seed, &RunControl::default()).expect("not stopped");
    let counts = &results.counts[0];
    let game = rules.game(0);
    assert_eq!(counts.trials(), TRIALS, "{what}");
    let n = TRIALS as f64;
    let mut worst: f64 = 0.0;
    let mut check = |count: u64, p: f64, label: &str| {
        let expected = n * p;
        let sd = (n * p * (1.0 - p)).max(0.0).sqrt();
        if sd < 1e-9 {
            assert!(
                (count as f64 - expected).abs() < 0.5,
                "{what}: {label}: {count} of {TRIALS} where the exact probability is {p}"
            );
            return;
        }
        let z = (count as f64 - expected).abs() / sd;
        assert!(
            z <= SIGMAS,
            "{what}: {label}: {count} of {TRIALS}, exact {p} (expected {expected:.1}): {z:.2} standard errors"
        );
        worst = worst.max(z);
    };
    for (name, p) in outcomes {
        let i = game
            .outcomes
            .iter()
            .position(|o| o.0 == *name)
            .unwrap_or_else(|| panic!("no outcome {name}"));
        check(counts.outcomes[i], *p, name);
    }
    for (metric, expected) in metrics {
        let m = game
            .metrics
            .iter()
            .position(|x| x.0 == *metric)
            .unwrap_or_else(|| panic!("no metric {metric}"));
        let lo = game.metrics[m].2 .0;
        for (bin, count) in counts.metrics[m].iter().enumerate() {
            let value = bin as i64 + lo;
            let p = expected.get(&value).copied().unwrap_or(0.0);
            check(*count, p, &format!("{metric} = {value}"));
        }
    }
    worst
}

/// Every run of a shipped d6-table analysis, exact, against its rules file; the first and
/// the last run (and the turns runs) also simulated. Returns the number of runs compared.
fn d6_table_equals_its_rules_file(case: &D6Case) -> usize {
    let text = read(case.analysis);
    let study =
        D6TableStudy::parse(&repo().join(case.analysis), &text).unwrap_or_else(|e| panic!("{e}"));
    let analysis: toml::Table = toml::from_str(&text).expect("TOML");
    let system = study.header.system.clone();
    let printed = D6Table::printed(&system).expect("a printed table");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let seed = study.header.seed;
    let points = study.points.len();
    for run in 0..points {
        let point = &study.points[run];
        let (variant_name, table) = &study.variants[point.variant];
        let rules_path = rules_for_variant(
            case.rules,
            case.table,
            &printed,
            table.table(),
            dir.path(),
            &format!("{system}_{}", point.variant),
        );
        let settings = d6_settings(&study, &analysis, &system, run);
        let what = format!("{} run {run} ({variant_name}, {settings:?})", case.analysis);
        let rules = rules_run(&rules_path, &settings);
        let exact = rules_exact(&rules);
        let builtin_exact = study.exact(run).expect("exact");
        let builtin = study.outcomes(run, &study.empty(run), Some(&builtin_exact));
        let labels: Vec<String> = builtin.iter().map(|o| o.name.clone()).collect();
        check_mapping(case.names, &labels, rules.game(0), &what);
        for (builtin_name, rules_name) in case.names {
            let theirs = builtin
                .iter()
                .find(|o| o.name == *builtin_name)
                .map_or_else(BigRational::zero, |o| {
                    fraction(o.fraction.as_deref().expect("the d6 tables give fractions"))
                });
            assert_eq!(
                rules_outcome(&rules, &exact, rules_name),
                theirs,
                "{what}: P({builtin_name})"
            );
        }
        // The values outcomes carry: the built-in's expectation values, as distributions.
        let values = outcome_values(&system, &labels);
        assert_eq!(
            values.len(),
            case.values.len(),
            "{what}: every value is mapped"
        );
        for (value_name, per_outcome) in &values {
            let metric = case
                .values
                .iter()
                .find(|v| v.0 == *value_name)
                .unwrap_or_else(|| panic!("{what}: the value {value_name} is not mapped"))
                .1;
            let mut theirs: BTreeMap<i64, BigRational> = BTreeMap::new();
            for (o, v) in builtin.iter().zip(per_outcome) {
                let p = fraction(o.fraction.as_deref().expect("a fraction"));
                if !p.is_zero() {
                    *theirs.entry(*v as i64).or_insert_with(BigRational::zero) += p;
                }
            }
            assert_eq!(
                rules_metric(&rules, &exact, metric),
                theirs,
                "{what}: {value_name} against {metric}"
            );
        }
        if run == 0 || run == points / 2 || run + 1 == points {
            let expected: Vec<(String, f64)> = case
                .names
                .iter()
                .map(|(b, r)| {
                    let p = builtin
                        .iter()
                        .find(|o| o.name == *b)
                        .and_then(|o| o.exact)
                        .unwrap_or(0.0);
                    (r.to_string(), p)
                })
                .collect();
            let z = monte_carlo_agrees(&rules, &expected, &[], seed, &what);
            eprintln!("{what}: simulated outcomes within {z:.2} standard errors");
        }
    }
    // The attrition turns study: a stack sitting K turns, one run per variant.
    let plan_runs = study.plan().runs.len();
    for run in points..plan_runs {
        let turns = study.turns.expect("runs beyond the points are turns runs");
        let variant = run - points;
        let (variant_name, table) = &study.variants[variant];
        let rules_path = rules_for_variant(
            case.rules,
            case.table,
            &printed,
            table.table(),
            dir.path(),
            &format!("{system}_{variant}"),
        );
        let settings = vec![
            ("sp".to_string(), i64::from(turns.sp)),
            ("drm".to_string(), i64::from(turns.drm)),
            ("turns".to_string(), i64::from(turns.turns)),
            (
                "small_stack".to_string(),
                i64::from(study.small_stack_column),
            ),
        ];
        let what = format!("{} turns run ({variant_name}, {settings:?})", case.analysis);
        let rules = rules_run(&rules_path, &settings);
        let exact = rules_exact(&rules);
        let builtin_exact = study.exact(run).expect("exact");
        assert!(matches!(builtin_exact, TableExact::Turns(_)));
        let builtin = study.outcomes(run, &study.empty(run), Some(&builtin_exact));
        // "k SP left" is the rules file's metric sp_left = k.
        let sp_left = rules_metric(&rules, &exact, "sp_left");
        let mut expected = BTreeMap::new();
        for o in &builtin {
            let k: i64 = o
                .name
                .strip_suffix(" SP left")
                .and_then(|k| k.parse().ok())
                .unwrap_or_else(|| panic!("{what}: a turns outcome named {}", o.name));
            let theirs = o.exact.expect("exact");
            let mine = sp_left.get(&k).map_or(0.0, to_f64);
            assert!(
                (mine - theirs).abs() <= F64_TOLERANCE,
                "{what}: P({} ) is {theirs} built in, {mine} from the rules file",
                o.name
            );
            if theirs > 0.0 {
                expected.insert(k, theirs);
            }
        }
        assert!(
            sp_left
                .keys()
                .all(|k| (0..=i64::from(turns.sp)).contains(k)),
            "{what}: the rules file leaves SP the built-in cannot"
        );
        let z = monte_carlo_agrees(&rules, &[], &[("sp_left".into(), expected)], seed, &what);
        eprintln!("{what}: simulated SP left within {z:.2} standard errors");
    }
    plan_runs
}

#[test]
fn attrition_rules_file_equals_the_built_in_on_every_run_of_its_analysis() {
    let runs = d6_table_equals_its_rules_file(&D6Case {
        analysis: "analyses/attrition.toml",
        rules: "rules/attrition.toml",
        table: "attrition",
        names: ATTRITION_NAMES,
        values: ATTRITION_VALUES,
    });
    // 7 SP × 6 DRMs × 2 variants, and the turns study per variant.
    assert_eq!(runs, 7 * 6 * 2 + 2);
}

#[test]
fn forced_march_rules_file_equals_the_built_in_on_every_run_of_its_analysis() {
    let runs = d6_table_equals_its_rules_file(&D6Case {
        analysis: "analyses/march.toml",
        rules: "rules/march.toml",
        table: "march",
        names: MARCH_NAMES,
        values: MARCH_VALUES,
    });
    assert_eq!(runs, 3 * 6);
}

#[test]
fn naval_combat_rules_file_equals_the_built_in_on_every_run_of_its_analysis() {
    let runs = d6_table_equals_its_rules_file(&D6Case {
        analysis: "analyses/naval.toml",
        rules: "rules/naval.toml",
        table: "naval",
        names: NAVAL_NAMES,
        values: NAVAL_VALUES,
    });
    assert_eq!(runs, 3 * 7);
}

#[test]
fn blockade_pursuit_transport_and_storm_rules_files_equal_the_built_ins() {
    for (case, runs) in [
        (
            D6Case {
                analysis: "analyses/blockade.toml",
                rules: "rules/blockade.toml",
                table: "blockade",
                names: BLOCKADE_NAMES,
                values: &[],
            },
            4,
        ),
        (
            D6Case {
                analysis: "analyses/pursuit.toml",
                rules: "rules/pursuit.toml",
                table: "pursuit",
                names: PURSUIT_NAMES,
                values: &[],
            },
            2 * 2,
        ),
        (
            D6Case {
                analysis: "analyses/transport.toml",
                rules: "rules/transport.toml",
                table: "transport",
                names: TRANSPORT_NAMES,
                values: &[],
            },
            4,
        ),
        (
            D6Case {
                analysis: "analyses/storm.toml",
                rules: "rules/storm.toml",
                table: "storm",
                names: STORM_NAMES,
                values: &[],
            },
            4 * 2,
        ),
    ] {
        assert_eq!(
            d6_table_equals_its_rules_file(&case),
            runs,
            "{}",
            case.analysis
        );
    }
}

/// Odds between the printed columns: the one-roll naval file picks its column from the
/// fleets' NSP, rounded down as docs/systems/tables.md reads the table (above 2-1 reads
/// 2-1), and rolls as the built-in study does on the column it names.
#[test]
fn naval_odds_between_columns_round_down_as_the_built_in_reads_them() {
    let rules_path = repo().join("rules/naval.toml");
    let path = repo().join("analyses/seed_equivalence.toml");
    for (larger, smaller, column) in [
        (4, 3, "1-1"),
        (7, 5, "1-1"),
        (5, 3, "3-2"),
        (11, 6, "3-2"),
        (7, 3, "2-1"),
        (9, 2, "2-1"),
    ] {
        let text = format!(
            "system = \"naval\"\n[roll]\nodds = \"{column}\"\n[sweep]\ndrm = [-2, 0, 1, 4]\n"
        );
        let study = D6TableStudy::parse(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        for run in 0..study.points.len() {
            let settings = vec![
                ("drm".to_string(), i64::from(study.points[run].drm)),
                ("larger.nsp".to_string(), larger),
                ("smaller.nsp".to_string(), smaller),
            ];
            let rules = rules_run(&rules_path, &settings);
            let exact = rules_exact(&rules);
            let e = study.exact(run).unwrap();
            for o in study.outcomes(run, &study.empty(run), Some(&e)) {
                assert_eq!(
                    rules_outcome(&rules, &exact, &o.name),
                    fraction(o.fraction.as_deref().unwrap()),
                    "{larger}:{smaller} against {column}, {settings:?}: {}",
                    o.name
                );
            }
        }
    }
}

/// The attrition reading the shipped analysis does not use: `small_stack = "column"`
/// (a hex under 3 SP reads the 3-5 column), one roll and over several turns.
#[test]
fn attrition_small_stacks_read_the_first_column_in_both() {
    let text = "system = \"attrition\"\n[roll]\nsmall_stack = \"column\"\n[sweep]\nsp = [1, 2, 3]\ndrm = [0, 5]\n[turns]\nsp = 4\ncount = 5\ndrm = 5\n";
    let path = repo().join("analyses/seed_equivalence.toml");
    let study = D6TableStudy::parse(&path, text).unwrap_or_else(|e| panic!("{e}"));
    let analysis: toml::Table = toml::from_str(text).unwrap();
    let rules_path = repo().join("rules/attrition.toml");
    for run in 0..study.points.len() {
        let settings = d6_settings(&study, &analysis, "attrition", run);
        let rules = rules_run(&rules_path, &settings);
        let exact = rules_exact(&rules);
        let e = study.exact(run).unwrap();
        for o in study.outcomes(run, &study.empty(run), Some(&e)) {
            assert_eq!(
                rules_outcome(&rules, &exact, &o.name),
                fraction(o.fraction.as_deref().unwrap()),
                "{settings:?}: {}",
                o.name
            );
        }
    }
    // A roll of 6 on the 3-5 column loses 1 SP: with DRM +5 every turn loses one, so a
    // stack of 4 is gone after 4 of its 5 turns (under "none" it would stop at 2 SP).
    let turns = study.points.len();
    let e = study.exact(turns).unwrap();
    let builtin = study.outcomes(turns, &study.empty(turns), Some(&e));
    assert_eq!(builtin[0].name, "0 SP left");
    assert!((builtin[0].exact.unwrap() - 1.0).abs() <= F64_TOLERANCE);
    let rules = rules_run(
        &rules_path,
        &[
            ("sp".into(), 4),
            ("drm".into(), 5),
            ("turns".into(), 5),
            ("small_stack".into(), 1),
        ],
    );
    let exact = rules_exact(&rules);
    assert_eq!(
        rules_metric(&rules, &exact, "sp_left"),
        BTreeMap::from([(0, BigRational::from_integer(1.into()))])
    );
}

/// The built-in engagement's outcome labels → the rules file's outcomes.
const ENGAGEMENT_NAMES: &[(&str, &str)] = &[
    ("A destroyed", "A destroyed"),
    ("B destroyed", "B destroyed"),
    ("A escapes", "A escapes"),
    ("B escapes", "B escapes"),
    ("A retreats unpursued", "A retreats unpursued"),
    ("B retreats unpursued", "B retreats unpursued"),
    ("round limit", "round limit"),
];

/// The built-in engagement's distributions → the rules file's metrics (`rounds` is the
/// rules study's own battle length).
const ENGAGEMENT_DISTRIBUTIONS: &[(&str, &str)] = &[
    ("rounds", "rounds"),
    ("nsp_lost_a", "nsp_lost_a"),
    ("nsp_lost_b", "nsp_lost_b"),
];

/// Every run of a naval-engagement analysis against rules/naval_engagement.toml; runs
/// `simulate` also simulated. Returns the number of runs.
fn naval_engagements_equal_the_rules_file(path: &Path, text: &str, simulate: &[usize]) -> usize {
    let study = NavalEngagementStudy::parse(path, text).unwrap_or_else(|e| panic!("{e}"));
    let printed = D6Table::naval();
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (run, (variant, coordinates, e)) in study.runs.iter().enumerate() {
        let rules_path = rules_for_variant(
            "rules/naval_engagement.toml",
            "naval",
            &printed,
            study.variants[*variant].1.table().table(),
            dir.path(),
            &format!("naval_engagement_{variant}"),
        );
        // The built-in's engagement as run: the odds sweep has already set A's NSP from
        // B's, and the DRM sweep added to A's own DRM.
        let settings: Vec<(String, i64)> = vec![
            ("a.nsp".into(), i64::from(e.a.nsp)),
            ("b.nsp".into(), i64::from(e.b.nsp)),
            ("a.morale".into(), i64::from(e.a.morale)),
            ("b.morale".into(), i64::from(e.b.morale)),
            ("a.leader".into(), i64::from(e.a.leader)),
            ("b.leader".into(), i64::from(e.b.leader)),
            ("a.drm".into(), i64::from(e.a.drm)),
            ("b.drm".into(), i64::from(e.b.drm)),
            ("a.pursues".into(), i64::from(e.a.pursues)),
            ("b.pursues".into(), i64::from(e.b.pursues)),
            ("coastal".into(), i64::from(e.coastal)),
            ("max_rounds".into(), i64::from(e.round_limit)),
        ];
        let what = format!(
            "{} run {run} ({coordinates:?}, {settings:?})",
            path.display()
        );
        let rules = rules_run(&rules_path, &settings);
        let exact = rules_exact(&rules);
        let builtin_exact = study.exact(run).expect("exact");
        let builtin = study.outcomes(run, &study.empty(run), Some(&builtin_exact));
        let labels: Vec<String> = builtin.iter().map(|o| o.name.clone()).collect();
        check_mapping(ENGAGEMENT_NAMES, &labels, rules.game(0), &what);
        let mut expected_outcomes = Vec::new();
        for (builtin_name, rules_name) in ENGAGEMENT_NAMES {
            let theirs = builtin
                .iter()
                .find(|o| o.name == *builtin_name)
                .and_then(|o| o.exact)
                .expect("exact");
            let mine = to_f64(&rules_outcome(&rules, &exact, rules_name));
            assert!(
                (mine - theirs).abs() <= F64_TOLERANCE,
                "{what}: P({builtin_name}) is {theirs} built in, {mine} from the rules file"
            );
            expected_outcomes.push((rules_name.to_string(), theirs));
        }
        let distributions = study.distributions(run, &study.empty(run), Some(&builtin_exact));
        assert_eq!(
            distributions.len(),
            ENGAGEMENT_DISTRIBUTIONS.len(),
            "{what}"
        );
        let mut expected_metrics = Vec::new();
        for d in &distributions {
            let metric = ENGAGEMENT_DISTRIBUTIONS
                .iter()
                .find(|m| m.0 == d.metric)
                .unwrap_or_else(|| panic!("{what}: the distribution {} is not mapped", d.metric))
                .1;
            let theirs: BTreeMap<i64, f64> = d
                .exact
                .as_ref()
                .expect("exact")
                .iter()
                .enumerate()
                .filter(|(_, p)| **p != 0.0)
                .map(|(i, p)| (i as i64 + d.first as i64, *p))
                .collect();
            let mine: BTreeMap<i64, f64> = if metric == "rounds" {
                exact
                    .rounds
                    .as_ref()
                    .expect("the rules file has a round limit: rounds are exact")
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| **p != 0.0)
                    .map(|(i, p)| (i as i64, *p))
                    .collect()
            } else {
                rules_metric(&rules, &exact, metric)
                    .iter()
                    .map(|(k, p)| (*k, to_f64(p)))
                    .collect()
            };
            for k in theirs.keys().chain(mine.keys()) {
                let (a, b) = (
                    theirs.get(k).copied().unwrap_or(0.0),
                    mine.get(k).copied().unwrap_or(0.0),
                );
                assert!(
                    (a - b).abs() <= F64_TOLERANCE,
                    "{what}: {} = {k} is {a} built in, {b} from the rules file",
                    d.metric
                );
            }
            if metric != "rounds" {
                expected_metrics.push((metric.to_string(), theirs));
            }
        }
        if simulate.contains(&run) {
            let z = monte_carlo_agrees(
                &rules,
                &expected_outcomes,
                &expected_metrics,
                study.header.seed + run as u64,
                &what,
            );
            eprintln!("{what}: simulated within {z:.2} standard errors");
        }
    }
    study.runs.len()
}

#[test]
fn naval_engagement_rules_file_equals_the_built_in_on_every_run_of_its_analysis() {
    let analysis = "analyses/naval_engagement.toml";
    // 3 odds × 7 DRMs; simulated: 1-1 at DRM -3, 0 and +3, and 2-1 at DRM 0.
    let runs = naval_engagements_equal_the_rules_file(
        &repo().join(analysis),
        &read(analysis),
        &[0, 3, 6, 17],
    );
    assert_eq!(runs, 3 * 7);
}

/// What the shipped analysis leaves at its defaults: coastal pursuit, fleets that do not
/// pursue, Minor-state morale, leaders, fleets' own DRMs, a short round limit and a changed
/// cell, over fleets of every size relation (B larger, captures down to the last NSP).
#[test]
fn naval_engagement_rules_file_equals_the_built_in_off_the_shipped_grid() {
    let path = repo().join("analyses/seed_equivalence.toml");
    let mut runs = 0;
    for (coastal, pursue_a, pursue_b, limit) in [
        (true, true, true, 20),
        (false, false, true, 3),
        (true, true, false, 1),
        (false, true, true, 100),
    ] {
        let text = format!(
            "system = \"naval_engagement\"\n[engagement]\ncoastal = {coastal}\nround_limit = {limit}\n\
             [fleet.a]\nnsp = 3\nmorale = 1\nleader = 2\ndrm = -1\npursue = {pursue_a}\n\
             [fleet.b]\nnsp = 2\nmorale = 2\nleader = 0\ndrm = 2\npursue = {pursue_b}\n\
             [sweep]\na.nsp = [1, 2, 5, 9]\nb.nsp = [1, 3, 4]\n\
             [[variant]]\nname = \"printed\"\n\
             [[variant]]\nname = \"2SC at 1-1\"\nrules = {{ cells = {{ \"1-1\" = {{ \"8\" = \"2SC\", \"-1\" = \"2LC\" }} }} }}\n"
        );
        runs += naval_engagements_equal_the_rules_file(&path, &text, &[]);
    }
    assert_eq!(runs, 4 * 4 * 3 * 2);
}

/// Each shipped rules file prints its built-in table cell for cell: the same columns in the
/// same order, the same rows, the same code in every cell.
#[test]
fn the_seed_rules_files_print_the_built_in_tables_cell_for_cell() {
    let cases = [
        ("rules/attrition.toml", "attrition", D6Table::attrition()),
        ("rules/march.toml", "march", D6Table::march()),
        ("rules/naval.toml", "naval", D6Table::naval()),
        ("rules/blockade.toml", "blockade", D6Table::blockade()),
        ("rules/pursuit.toml", "pursuit", D6Table::pursuit()),
        ("rules/transport.toml", "transport", D6Table::transport()),
        ("rules/storm.toml", "storm", D6Table::storm()),
        ("rules/naval_engagement.toml", "naval", D6Table::naval()),
        ("rules/naval_engagement.toml", "pursuit", D6Table::pursuit()),
    ];
    for (file, name, printed) in cases {
        let game = Game::parse(&repo().join(file), &read(file)).unwrap_or_else(|e| panic!("{e}"));
        let t = game
            .tables
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{file} has no table {name}"));
        assert_eq!((t.dice, t.faces), (1, 6), "{file}: {name} is one d6");
        assert_eq!(
            t.rows,
            (i64::from(printed.roll_min), i64::from(printed.roll_max)),
            "{file}: {name}'s rows"
        );
        assert_eq!(t.labels, printed.column_labels, "{file}: {name}'s columns");
        for (c, column) in printed.cells.iter().enumerate() {
            let codes: Vec<&str> = t.cells[c]
                .iter()
                .map(|r| game.results[*r].code.as_str())
                .collect();
            assert_eq!(
                codes, *column,
                "{file}: {name}, column {}",
                printed.column_labels[c]
            );
        }
    }
}
