//! Known-answer tests for the single-d6 tables of the strategic game (docs/systems/tables.md):
//! every column and every DRM from −6 to +6, against an oracle transcribed here from
//! docs/systems/tables.md independently of the library, and Monte Carlo at 10^7 rolls
//! within four standard errors of exact.

use std::collections::BTreeMap;

use battlelab_core::sim::RunControl;
use battlelab_core::systems::d6_tables::lookup::{simulate_rolls, CompiledD6Table, D6Table};

/// (table, lowest modified roll, rows of columns as printed in docs/systems/tables.md).
fn oracle_tables() -> Vec<(&'static str, i32, Vec<Vec<&'static str>>)> {
    vec![
        (
            "attrition",
            1,
            vec![
                vec!["0", "0", "0", "1", "1"],
                vec!["0", "0", "1", "1", "2*"],
                vec!["0", "1", "1", "2*", "3*"],
                vec!["0", "1", "2*", "2*", "3*"],
                vec!["0", "2*", "2*", "3*", "4*"],
                vec!["1", "2*", "3*", "3*", "5*"],
            ],
        ),
        (
            "march",
            1,
            vec![
                vec!["1", "2", "3"],
                vec!["1", "2", "3"],
                vec!["1", "2", "2*"],
                vec!["1", "1*", "1*"],
                vec!["1", "0", "0"],
                vec!["0", "0", "0"],
            ],
        ),
        (
            "naval",
            -1,
            vec![
                vec!["2LS", "2LC", "LS"],
                vec!["LC", "LS", "LR"],
                vec!["LS", "LR", "LR"],
                vec!["LR", "LR", "SR"],
                vec!["LR", "SR", "SR"],
                vec!["SR", "SR", "SS"],
                vec!["SR", "SS", "SS"],
                vec!["SS", "SS", "SC"],
                vec!["SC", "SC", "SC"],
                vec!["2SS", "2SC", "2SC"],
            ],
        ),
        (
            "blockade",
            1,
            ["F*", "F", "F", "F", "F", "E"]
                .iter()
                .map(|c| vec![*c])
                .collect(),
        ),
        (
            "pursuit",
            1,
            ["F", "F", "F", "F", "I", "I"]
                .iter()
                .map(|c| vec![*c])
                .collect(),
        ),
        (
            "transport",
            1,
            ["C", "C", "S", "S", "E", "E"]
                .iter()
                .map(|c| vec![*c])
                .collect(),
        ),
        (
            "storm",
            1,
            ["S", "D", "D", "E", "E", "E"]
                .iter()
                .map(|c| vec![*c])
                .collect(),
        ),
    ]
}

fn oracle(rows: &[Vec<&str>], lowest: i32, column: usize, drm: i32) -> BTreeMap<String, u64> {
    let highest = lowest + rows.len() as i32 - 1;
    let mut counts = BTreeMap::new();
    for die in 1..=6 {
        let roll = (die + drm).clamp(lowest, highest);
        *counts
            .entry(rows[(roll - lowest) as usize][column].to_string())
            .or_insert(0) += 1;
    }
    counts
}

#[test]
fn every_table_column_and_drm_matches_the_hand_enumeration() {
    for (name, lowest, rows) in oracle_tables() {
        let table = CompiledD6Table::new(D6Table::printed(name).unwrap()).unwrap();
        for column in 0..rows[0].len() {
            for drm in -6..=6 {
                let dist = table.distribution(column, drm);
                let got: BTreeMap<String, u64> = table
                    .outcomes()
                    .iter()
                    .zip(&dist.counts)
                    .filter(|(_, c)| **c > 0)
                    .map(|(o, c)| (o.clone(), *c))
                    .collect();
                assert_eq!(
                    got,
                    oracle(&rows, lowest, column, drm),
                    "{name} column {column} DRM {drm}"
                );
            }
        }
    }
}

#[test]
fn monte_carlo_within_four_standard_errors_at_ten_million() {
    let n: u64 = 10_000_000;
    let control = RunControl::default();
    for (name, _, rows) in oracle_tables() {
        let table = CompiledD6Table::new(D6Table::printed(name).unwrap()).unwrap();
        for column in 0..rows[0].len() {
            for drm in -6..=6 {
                let counts = simulate_rolls(&table, column, drm, 303, n, &control).unwrap();
                let exact = table.distribution(column, drm);
                for (i, &count) in counts.iter().enumerate() {
                    let p = exact.probability(i);
                    if p == 0.0 || p == 1.0 {
                        assert_eq!(count, (p * n as f64) as u64, "{name} column {column} DRM {drm}: outcome {i} is certain or impossible");
                        continue;
                    }
                    let z = (count as f64 / n as f64 - p).abs() / (p * (1.0 - p) / n as f64).sqrt();
                    assert!(
                        z < 4.0,
                        "{name} column {column} DRM {drm} outcome {i}: {z:.2} SE from exact"
                    );
                }
            }
        }
    }
}
