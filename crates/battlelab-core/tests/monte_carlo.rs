//! Monte Carlo kernels held against exact distributions, with fixed seeds and
//! tolerances derived from the sample size; and pinned fixed-seed outputs.

use battlelab_core::sim::{thread_pool, RunControl};
use battlelab_core::stats::{chi_square, chi_square_critical};
use battlelab_core::systems::field::battle::{
    simulate_resolutions, BattleDistribution, BattleHistogram, BattleResult, FieldBattle,
    FieldCombat, FieldRules, Force, PreparedBattle, TacticMix,
};
use battlelab_core::systems::field::transitions::simulate_battles;

/// 10^7 resolutions per odds × DRM cell: every outcome within 4 standard errors of exact.
#[test]
fn single_resolution_within_four_standard_errors_at_ten_million() {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let n: u64 = 10_000_000;
    let control = RunControl::default();
    for odds in 0..4 {
        for drm in -6..=6 {
            let counts = simulate_resolutions(&field, odds, drm, 2026, n, &control).unwrap();
            let exact = field.resolution_distribution(odds, drm);
            assert_eq!(counts.iter().sum::<u64>(), n);
            for (i, &count) in counts.iter().enumerate() {
                let p = exact.probability(i);
                let estimate = count as f64 / n as f64;
                let standard_error = (p * (1.0 - p) / n as f64).sqrt();
                if p == 0.0 {
                    assert_eq!(
                        count, 0,
                        "odds {odds} DRM {drm} outcome {i}: impossible outcome drawn"
                    );
                } else {
                    let z = (estimate - p).abs() / standard_error;
                    assert!(
                        z < 4.0,
                        "odds {odds} DRM {drm} outcome {i}: {estimate} vs {p} is {z:.2} SE away"
                    );
                }
            }
        }
    }
}

fn force(sp: u32, morale: u32, leader: i32, tactics: TacticMix) -> Force {
    Force {
        name: String::new(),
        sp,
        morale,
        leader,
        drm: 0,
        tactics: tactics.into(),
    }
}

fn scenarios() -> Vec<FieldBattle> {
    let uniform = TacticMix::uniform(&[0, 1, 2, 3, 4, 5, 6]).unwrap();
    let mix = TacticMix::new([2, 1, 0, 1, 0, 0, 0]).unwrap();
    let defend = TacticMix::new([0, 0, 2, 0, 1, 1, 0]).unwrap();
    vec![
        FieldBattle {
            a: force(12, 2, 1, mix),
            b: force(8, 2, 1, defend),
            terrain_drm: 0,
        },
        FieldBattle {
            a: force(20, 3, 2, uniform),
            b: force(7, 1, 0, uniform),
            terrain_drm: -1,
        },
        FieldBattle {
            a: force(5, 2, 0, mix),
            b: force(5, 2, 3, defend),
            terrain_drm: 0,
        },
    ]
}

/// The chi-square checks of a simulated battle against an exact distribution at the
/// 99.99% level (z = 3.719): result, length and SP lost per side, each as
/// (name, statistic, critical value, degrees of freedom).
fn chi_square_checks(
    histogram: &BattleHistogram,
    exact: &BattleDistribution,
) -> Vec<(&'static str, f64, f64, usize)> {
    let checks: [(&str, &[u64], &[f64]); 4] = [
        ("result", &histogram.result, &exact.result),
        ("rounds", &histogram.rounds, &exact.rounds),
        ("sp lost A", &histogram.sp_lost[0], &exact.sp_lost[0]),
        ("sp lost B", &histogram.sp_lost[1], &exact.sp_lost[1]),
    ];
    checks
        .into_iter()
        .map(|(name, observed, expected)| {
            let (statistic, df) = chi_square(observed, expected);
            (name, statistic, chi_square_critical(df, 3.719), df)
        })
        .collect()
}

/// 2·10^6 battles simulated with `field` pass every chi-square check against the exact
/// enumeration of the same field.
fn assert_battles_agree(field: &FieldCombat, prepared: &PreparedBattle, what: &str) {
    let exact = field
        .battle_distribution(prepared, 1_000_000)
        .expect("small battle");
    assert!((exact.result.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    let histogram =
        simulate_battles(field, prepared, 77, 2_000_000, &RunControl::default()).unwrap();
    for (name, statistic, critical, df) in chi_square_checks(&histogram, &exact) {
        assert!(
            statistic < critical,
            "{what}, {name}: chi-square {statistic:.1} ≥ {critical:.1} (df {df})"
        );
    }
}

/// Whole battles: the simulated result, length and SP-lost histograms pass a chi-square
/// test against the exact enumeration at the 99.99% level (z = 3.719).
#[test]
fn battles_agree_with_exact_enumeration() {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    for (k, battle) in scenarios().iter().enumerate() {
        assert_battles_agree(&field, &battle.prepare().unwrap(), &format!("scenario {k}"));
    }
}

fn crt_cells_file() -> battlelab_core::systems::field::FieldStudy {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/good/crt_cells.toml");
    battlelab_core::systems::field::FieldStudy::load(&path).unwrap()
}

/// A file with edited CRT cells (`tests/data/good/crt_cells.toml`): every variant's
/// kernel agrees with the exact enumeration of the same compiled table.
#[test]
fn battles_with_edited_cells_agree_with_exact_enumeration() {
    let analysis = crt_cells_file();
    assert!(analysis
        .variants
        .iter()
        .any(|v| !v.rules.crt_cells.is_empty()));
    for run in &analysis.runs {
        let variant = &analysis.variants[run.variant].name;
        assert_battles_agree(&run.field, &run.prepared, variant);
    }
}

/// …and the comparison sees the one edited cell: the kernel with the cell edited is far
/// from the exact enumeration of the printed table.
#[test]
fn the_comparison_detects_one_edited_cell() {
    let analysis = crt_cells_file();
    let run = |name: &str| {
        let v = analysis
            .variants
            .iter()
            .position(|v| v.name == name)
            .unwrap();
        analysis.runs.iter().find(|r| r.variant == v).unwrap()
    };
    let (printed, edited) = (run("printed"), run("one cell"));
    assert_eq!(edited.field.rules().crt_cells.len(), 1);
    let exact = printed
        .field
        .battle_distribution(&printed.prepared, 1_000_000)
        .unwrap();
    let histogram = simulate_battles(
        &edited.field,
        &edited.prepared,
        77,
        2_000_000,
        &RunControl::default(),
    )
    .unwrap();
    let checks = chi_square_checks(&histogram, &exact);
    assert!(
        checks
            .iter()
            .any(|(_, statistic, critical, _)| statistic > critical),
        "one edited cell went unnoticed: {checks:?}"
    );
}

/// The kernel must break when the rules it names break: a battle simulated under the
/// printed rules is far from the exact enumeration of a changed table.
#[test]
fn the_comparison_detects_a_wrong_table() {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let mut changed = FieldRules::printed();
    changed.crt.columns[7] = changed.crt.columns[8]; // column 8 "0/1" becomes "1/D1"
    let changed = FieldCombat::new(changed).unwrap();
    let prepared = scenarios()[0].prepare().unwrap();
    let exact = changed.battle_distribution(&prepared, 1_000_000).unwrap();
    let histogram =
        simulate_battles(&field, &prepared, 77, 2_000_000, &RunControl::default()).unwrap();
    let (statistic, df) = chi_square(&histogram.result, &exact.result);
    assert!(
        statistic > chi_square_critical(df, 3.719),
        "a changed CRT went unnoticed: {statistic}"
    );
}

/// Same seed, same counts on 1, 2 and 8 threads; and the counts themselves are pinned so
/// that any change to the dice, the block layout or the kernel is seen.
#[test]
fn fixed_seed_outputs_are_stable_across_threads() {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let prepared = scenarios()[0].prepare().unwrap();
    let run = |threads| {
        thread_pool(threads).unwrap().install(|| {
            simulate_battles(&field, &prepared, 1815, 300_000, &RunControl::default()).unwrap()
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(8));
    let a_wins = one.result[BattleResult::AWins.index()];
    let b_wins = one.result[BattleResult::BWins.index()];
    assert_eq!(
        (a_wins, b_wins),
        PINNED_BATTLE_COUNTS,
        "fixed-seed output changed"
    );
    let resolutions = thread_pool(2).unwrap().install(|| {
        simulate_resolutions(&field, 1, 1, 1815, 1_000_000, &RunControl::default()).unwrap()
    });
    assert_eq!(
        resolutions, PINNED_RESOLUTION_COUNTS,
        "fixed-seed output changed"
    );
}

const PINNED_BATTLE_COUNTS: (u64, u64) = (196196, 75033);
const PINNED_RESOLUTION_COUNTS: [u64; 9] =
    [0, 0, 27889, 55670, 333049, 166652, 138658, 111481, 166601];
