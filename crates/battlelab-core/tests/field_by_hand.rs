//! Field battles worked by hand (docs/systems/field.md), where side B is the larger force,
//! over several rounds, with the smaller force above 10 SP, so that the Combat Loss
//! Chart's 11–15, 16–20 and 21+ columns and the tactical matrix read with the larger
//! force's (B's) tactic as the row are what decides the numbers.
//!
//! Two battles are worked on paper below (every count is derived in the comment above
//! it) and pin the independent oracle (`field_oracle/`); the oracle then enumerates more
//! battles exactly in integers. Every library path that fights a field battle is held
//! against those counts: the exact enumeration (`battle_distribution`, in f64, to its
//! rounding), the system as a run computes it (an analysis file through the engine's
//! driver: the exact result and the table kernel in lanes), and the round-by-round kernel
//! (`FieldCombat::fight`), the last two within 5 standard deviations at fixed seeds.
//!
//! The rule (docs/systems/field.md, "The tactical matrix"): the cell of the larger force's
//! tactic (row) and the smaller force's (column) is a DRM to the larger force's roll. With
//! B larger, B's tactic is the row.

mod field_oracle;

use std::path::Path;

use battlelab_core::dice::DiceStream;
use battlelab_core::engine::driver;
use battlelab_core::sim::RunControl;
use battlelab_core::systems::field::battle::BattleHistogram;
use battlelab_core::systems::field::FieldStudy;
use field_oracle::library::{
    analysis_text, assert_counts_agree, assert_exact_equals, library_battle, marginals,
};
use field_oracle::{enumerate, Battle, Side};

/// Every library path against the oracle's counts for one battle.
fn assert_library_agrees(name: &str, battle: &Battle, trials: u64) {
    let oracle = enumerate(battle);
    let (field, prepared) = library_battle(battle);
    let exact = field
        .battle_distribution(&prepared, 10_000_000)
        .expect("a small battle");
    assert_exact_equals(
        &format!("{name}, battle_distribution"),
        battle,
        &oracle,
        &exact,
    );

    // The system as `battlelab run` computes it: the file parsed, the engine's driver.
    let text = analysis_text(battle, 41, trials);
    let analysis = FieldStudy::parse(Path::new("by_hand.toml"), &text).expect("a valid file");
    let results = driver::run(&analysis, trials, 41, &RunControl::default()).unwrap();
    let system_exact = results.exact[0].as_ref().expect("the system enumerates it");
    assert_exact_equals(
        &format!("{name}, the system's exact"),
        battle,
        &oracle,
        system_exact,
    );
    assert_counts_agree(
        &format!("{name}, the system's simulation"),
        battle,
        &oracle,
        &results.counts[0],
        trials,
    );

    // The round-by-round kernel, battle by battle.
    let mut dice = DiceStream::for_block(4141, 0);
    let mut histogram = BattleHistogram::new(&prepared, battle.round_limit);
    for _ in 0..trials / 4 {
        histogram.record(&field.fight(&prepared, &mut dice));
    }
    assert_counts_agree(
        &format!("{name}, fight"),
        battle,
        &oracle,
        &histogram,
        trials / 4,
    );
}

fn side(sp: u32, morale: u32, tactic: &str) -> Side {
    Side::new(sp, morale, tactic)
}

fn mix(sp: u32, morale: u32, weights: &[(&str, u64)]) -> Side {
    let mut s = Side::new(sp, morale, weights[0].0);
    s.tactics = [0; 7];
    for &(t, w) in weights {
        s.tactics[field_oracle::tactic(t)] = w;
    }
    s
}

/// Battle 1: A 12 SP, morale 1 (Minor), Bombard; B 24 SP, morale 2, Square; no leaders,
/// no terrain; two rounds.
///
/// Round 1. B is larger (24 > 12): L = B, S = A. Odds 24:12 = 2:1, shift 2. Tactic cell:
/// row B's Square, column A's Bombard: +2 (read the other way, Bombard/Square, it would
/// be −2). Morale DRM L − S = 2 − 1 = +1. Net +3. Modified roll 2d6 + 3 (5…12, held at
/// 12), column = roll − 1 + 2 = 2d6 + 4, held at 11:
///   2d6 = 2 (1 way) → col 6 (1/1); 3 (2) → col 7 (1/1); 4 (3) → col 8 (0/1);
///   5 (4) → col 9 (1/D1); 6 (5) → col 10 (1/D2); 7+ (21) → col 11 (1/D3).
/// CLC column of S = A's 12 SP: 11–15 (1 → 2, D1 → 3, D2/D3 → 5).
///   col 6, 7 (3 ways): A −2 → 10, B −2 → 22.  col 8 (3): A −2 → 10, B 24.
///   col 9 (4): A −3 and morale 1 → 0: broken, B −2; B wins, A lost 3.
///   col 10, 11 (26): A −5, morale 0: B wins, A lost 5, B lost 2.
/// Round 2 (6 ways of 36 reach it, A at 10 SP, morale 1). B still larger: 22:10 and
/// 24:10 are both 2:1; the same net +3, the same columns; CLC column 6–10 (1 → 1,
/// D1 → 2, D2/D3 → 3).
///   cols 6–8 (6 of 36): A −1 (lost 3 in all), not broken → round limit.
///   col 9 (4): A −2 (lost 4), broken. cols 10, 11 (26): A −3 (lost 5), broken.
///   B loses 1 in every column but 8.
/// Over 36² = 1296:
///   B wins: round 1 30·36 = 1080, round 2 6·30 = 180 → 1260. Round limit 6·6 = 36.
///   Rounds: 1 → 1080, 2 → 216.
///   SP lost by A: 3 → 4·36 + 6·6 = 180; 4 → 6·4 = 24; 5 → 26·36 + 6·26 = 1092.
///   SP lost by B: from 22 (3 ways): col 8 → 2 (3·3 = 9), else 3 (3·33 = 99);
///     from 24 (3 ways): col 8 → 0 (9), else 1 (99); round 1 ends: 2 (1080).
///     → 0: 9, 1: 99, 2: 1089, 3: 99.
///   Morale lost by A: 1 in every B win (1260), 0 at the round limit (36). B: 0.
fn battle_one() -> Battle {
    Battle {
        a: side(12, 1, "bombard"),
        b: side(24, 2, "square"),
        terrain: 0,
        round_limit: 2,
    }
}

/// Battle 2: A 21 SP, morale 2, Refuse; B 64 SP, morale 2, Envelop; two rounds. The CLC's
/// 21+ column decides round 1; 16–20 and 11–15 round 2.
///
/// Round 1. L = B. 64:21 ≥ 3 → 3:1, shift 3. Cell row Envelop, column Refuse: +2 (the
/// other way, Refuse/Envelop, −2). Morale DRM 0. Net +2: column = 2d6 + 2 − 1 + 3 =
/// 2d6 + 4 held at 11 — the same columns and ways as battle 1.
/// CLC column of A's 21 SP: 21+ (1 → 3, D1 → 6, D2/D3 → 9).
///   col 6, 7 (3): A −3 → 18, B −3 → 61.  col 8 (3): A −3 → 18, B 64.
///   col 9 (4): A −6 → 15, morale 1; B −3 → 61.
///   col 10, 11 (26): A −9 → 12, morale 0 (D2 takes 2, D3 all): B wins; B lost 3.
/// Round 2 from A 18 SP morale 2 (6 ways): 61:18 and 64:18 are 3:1, net +2, the same
/// columns; CLC 16–20 (1 → 2, D1 → 4, D2 → 6):
///   cols 6–8 (6): A lost 3 + 2 = 5, round limit; col 9 (4): A lost 3 + 4 = 7, morale 1,
///   round limit; cols 10, 11 (26): A lost 3 + 6 = 9, broken.
/// From A 15 SP morale 1 (4 ways): 61:15 → 3:1; morale DRM 2 − 1 = +1, net +3: column
/// 2d6 + 5 held at 11: 2d6 = 2 → col 7 (1 way), 3 → col 8 (2), 4 → col 9 (3), 5 → col 10
/// (4), 6+ → col 11 (26). CLC 11–15 (1 → 2, D1 → 3, D2 → 5):
///   cols 7, 8 (3): A lost 6 + 2 = 8, round limit; col 9 (3): 6 + 3 = 9, broken;
///   cols 10, 11 (30): 6 + 5 = 11, broken.
/// Over 1296:
///   B wins: 26·36 = 936 + 6·26 = 156 + 4·33 = 132 → 1224; round limit 6·10 + 4·3 = 72.
///   Rounds: 1 → 936, 2 → 360.
///   SP lost by A: 5 → 36; 7 → 24; 8 → 12; 9 → 936 + 156 + 12 = 1104; 11 → 120.
///   SP lost by B (L loses 2 from 16–20 / 11–15 in round 2 on every column but 8):
///     round 1 ends: 3 (936). From 61 via cols 6, 7 (3 ways): col 8 → 3 (9), else 5 (99).
///     From 64 (3 ways): col 8 → 0 (9), else 2 (99). From 61 via col 9 (4 ways): col 8
///     (2 of 36) → 3 (8), else 5 (136). → 0: 9, 2: 99, 3: 953, 5: 235.
///   Morale lost by A: 0 → 36; 1 → 24 + 12 = 36; 2 → 936 + 156 + 132 = 1224. B: 0.
fn battle_two() -> Battle {
    Battle {
        a: side(21, 2, "refuse"),
        b: side(64, 2, "envelop"),
        terrain: 0,
        round_limit: 2,
    }
}

fn counts(values: &[(usize, u128)], len: usize) -> Vec<u128> {
    let mut out = vec![0; len];
    for &(at, count) in values {
        out[at] = count;
    }
    out
}

/// The oracle reproduces both battles worked on paper, count for count.
#[test]
fn the_oracle_reproduces_the_battles_worked_on_paper() {
    let expected_one = vec![
        ("result".to_string(), counts(&[(1, 1260), (7, 36)], 8)),
        ("rounds".into(), counts(&[(1, 1080), (2, 216)], 3)),
        (
            "SP lost by A".into(),
            counts(&[(3, 180), (4, 24), (5, 1092)], 13),
        ),
        (
            "SP lost by B".into(),
            counts(&[(0, 9), (1, 99), (2, 1089), (3, 99)], 25),
        ),
        ("morale lost by A".into(), counts(&[(0, 36), (1, 1260)], 2)),
        ("morale lost by B".into(), counts(&[(0, 1296)], 3)),
    ];
    let battle = battle_one();
    let oracle = enumerate(&battle);
    assert_eq!(oracle.total, 1296);
    assert_eq!(marginals(&battle, &oracle), expected_one);

    let expected_two = vec![
        ("result".to_string(), counts(&[(1, 1224), (7, 72)], 8)),
        ("rounds".into(), counts(&[(1, 936), (2, 360)], 3)),
        (
            "SP lost by A".into(),
            counts(&[(5, 36), (7, 24), (8, 12), (9, 1104), (11, 120)], 22),
        ),
        (
            "SP lost by B".into(),
            counts(&[(0, 9), (2, 99), (3, 953), (5, 235)], 65),
        ),
        (
            "morale lost by A".into(),
            counts(&[(0, 36), (1, 36), (2, 1224)], 3),
        ),
        ("morale lost by B".into(), counts(&[(0, 1296)], 3)),
    ];
    let battle = battle_two();
    let oracle = enumerate(&battle);
    assert_eq!(oracle.total, 1296);
    assert_eq!(marginals(&battle, &oracle), expected_two);
}

/// Battle 1 (B larger, the CLC's 11–15 and 6–10 columns, B's Square as the row) through
/// every library path.
#[test]
fn battle_one_b_square_against_a_bombard() {
    assert_library_agrees("battle 1", &battle_one(), 1_000_000);
}

/// Battle 2 (B larger, the CLC's 21+, 16–20 and 11–15 columns) through every path.
#[test]
fn battle_two_the_twenty_one_plus_column() {
    assert_library_agrees("battle 2", &battle_two(), 1_000_000);
}

/// More battles with B larger at the start and A above 10 SP, three to six rounds,
/// enumerated by the oracle: every odds column, leaders, side DRMs and terrain (in A's
/// favour, so against B's roll while B is larger), tactic mixes, Withdraw, equal SP (A
/// larger on the tie) and battles in which the larger force changes.
#[test]
fn multi_round_battles_with_b_larger_equal_the_oracle() {
    let mut cases: Vec<(&str, Battle)> = Vec::new();
    // 3:2, CLC 11–15: B's Skirmish row against A's Charge is +2 (Charge/Skirmish −2).
    cases.push((
        "12 v 18, Charge v Skirmish",
        Battle {
            a: side(12, 2, "charge"),
            b: side(18, 2, "skirmish"),
            terrain: 0,
            round_limit: 4,
        },
    ));
    // 2:1, CLC 16–20, leaders, side DRMs, terrain −1 (so +1 to B's roll while B is L).
    let mut a = side(17, 2, "envelop");
    a.leader = 1;
    a.drm = 1;
    let mut b = side(34, 3, "bombard");
    b.leader = 2;
    cases.push((
        "17 v 34, leaders, DRMs, terrain",
        Battle {
            a,
            b,
            terrain: -1,
            round_limit: 4,
        },
    ));
    // 1:1 with S at 25 SP (21+): both sides read the D rows of the 21+ column.
    cases.push((
        "25 v 30, Skirmish v Charge",
        Battle {
            a: side(25, 2, "skirmish"),
            b: side(30, 2, "charge"),
            terrain: 0,
            round_limit: 5,
        },
    ));
    // Mixes on both sides, 2:1, 21+, terrain in A's favour +1.
    cases.push((
        "22 v 45, mixes",
        Battle {
            a: mix(22, 3, &[("charge", 2), ("square", 1)]),
            b: mix(45, 2, &[("envelop", 1), ("refuse", 1)]),
            terrain: 1,
            round_limit: 4,
        },
    ));
    // B larger by one; A's leader 3 lets A wear B down until A is the larger force.
    let mut a = side(14, 2, "refuse");
    a.leader = 3;
    cases.push((
        "14 v 15, the larger force changes",
        Battle {
            a,
            b: side(15, 2, "envelop"),
            terrain: 0,
            round_limit: 6,
        },
    ));
    // B may withdraw: (+2) with B's Withdraw as the row against A's Charge.
    cases.push((
        "16 v 20, B withdraws or bombards",
        Battle {
            a: side(16, 2, "charge"),
            b: mix(20, 2, &[("withdraw", 1), ("bombard", 2)]),
            terrain: 0,
            round_limit: 4,
        },
    ));
    // Equal SP: A is the larger force until it has fewer SP than B.
    cases.push((
        "15 v 15, equal",
        Battle {
            a: side(15, 2, "skirmish"),
            b: side(15, 2, "charge"),
            terrain: 0,
            round_limit: 5,
        },
    ));
    // Every cell of the matrix in play: both sides uniform over all seven tactics.
    let uniform = [1; 7];
    let mut a = side(11, 2, "charge");
    a.tactics = uniform;
    let mut b = side(13, 2, "charge");
    b.tactics = uniform;
    cases.push((
        "11 v 13, uniform",
        Battle {
            a,
            b,
            terrain: 0,
            round_limit: 3,
        },
    ));
    for (name, battle) in &cases {
        assert!(
            battle.b.sp >= battle.a.sp && battle.a.sp > 10,
            "{name}: B larger, A above 10 SP"
        );
        assert_library_agrees(name, battle, 400_000);
    }
}

/// A control: the simulation check has the power to see the misreading the exact checks
/// catch. Battle 1 simulated as the system runs it is rejected against the oracle's
/// counts for the matrix read with A's tactic as the row (B's Square against A's
/// Bombard read as Bombard/Square, −2: the same as the printed Charge/Skirmish cell, so
/// the oracle fights that battle with B charging and A skirmishing).
#[test]
fn the_simulation_check_rejects_the_matrix_read_the_wrong_way_round() {
    let misread = Battle {
        a: side(12, 1, "skirmish"),
        b: side(24, 2, "charge"),
        terrain: 0,
        round_limit: 2,
    };
    let text = analysis_text(&battle_one(), 41, 200_000);
    let analysis = FieldStudy::parse(Path::new("by_hand.toml"), &text).unwrap();
    let results = driver::run(&analysis, 200_000, 41, &RunControl::default()).unwrap();
    let oracle = enumerate(&misread);
    let check = std::panic::catch_unwind(|| {
        assert_counts_agree("control", &misread, &oracle, &results.counts[0], 200_000)
    });
    assert!(
        check.is_err(),
        "the simulation check missed a misread matrix"
    );
}
