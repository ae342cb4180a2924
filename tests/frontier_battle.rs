//! Frontier quick battles, whole (docs/systems/frontier.md): a fire-only duel
//! against an exact recursion written here from the rules, one round of movement and
//! melee against a hand computation, the validation of 19.1's stacking and array rules
//! and of the melee CRT, and reproducibility on any thread count.

use battlelab::sim::{thread_pool, RunControl};
use battlelab_core::systems::frontier::battle::{
    simulate_battles, CrtLoss, FrontierBattle, FrontierCombat, MeleeCrt, MovePolicy, Side, Stack,
    Unit, VictoryRule,
};
use battlelab_core::systems::frontier::rolls::{
    FireRoll, MoveRoll, RecoveryRoll, Terrain, UnitType,
};

fn unit(kind: UnitType, fire_cf: u32, melee_cf: u32) -> Unit {
    Unit {
        kind,
        fire_cf,
        melee_cf,
    }
}

fn side(level: u32, leader: u32, lanes: Vec<Vec<Stack>>, policy: MovePolicy) -> Side {
    Side {
        level,
        primary_leader: leader,
        lanes,
        move_policy: policy,
        avoid_melee: false,
    }
}

fn stack(units: Vec<Unit>) -> Stack {
    Stack { units, leader: 0 }
}

/// An illustrative CRT (not the game's): three columns, rows 1–6.
fn crt(cell: (CrtLoss, CrtLoss)) -> MeleeCrt {
    MeleeCrt {
        columns: vec![(1, 2), (1, 1), (2, 1)],
        first_roll: 1,
        cells: vec![vec![cell; 3]; 6],
    }
}

fn duel(rounds: u32, policy: MovePolicy, cell: (CrtLoss, CrtLoss)) -> FrontierBattle {
    FrontierBattle {
        terrain: Terrain::Wilderness,
        severe_weather: false,
        initiative: 0,
        surprise: None,
        sides: [
            side(
                3,
                rounds,
                vec![vec![stack(vec![unit(UnitType::Warrior, 3, 2)])]],
                policy,
            ),
            side(
                2,
                1,
                vec![vec![stack(vec![unit(UnitType::Militia, 2, 2)])]],
                policy,
            ),
        ],
        crt: crt(cell),
        leader_loss: (1, 6),
        extra_round: false,
        victory: VictoryRule::FewerLost,
    }
}

fn four_se(p: f64, n: u64) -> f64 {
    4.0 * (p * (1.0 - p) / n as f64).sqrt() + 1e-12
}

/// A fire-only duel of one unit a side, exactly: state pairs (0 normal … 3 eliminated)
/// carried round by round — A fires if normal, then B if normal, then each disrupted or
/// routed unit recovers one level.
#[test]
#[allow(clippy::needless_range_loop)] // a and b are unit states, indices of `dist`
fn fire_only_duel_matches_the_exact_recursion() {
    let rounds = 3;
    let battle = duel(rounds, MovePolicy::FireOnly, (CrtLoss::None, CrtLoss::None));
    let p = |roll: FireRoll| f64::from(roll.hitting_faces()) / 6.0;
    let hit_a = p(FireRoll {
        unit: UnitType::Warrior,
        cf: 3,
        terrain: Terrain::Wilderness,
        severe_weather: false,
    });
    let hit_b = p(FireRoll {
        unit: UnitType::Militia,
        cf: 2,
        terrain: Terrain::Wilderness,
        severe_weather: false,
    });
    let rec = |level| f64::from(RecoveryRoll { level, leader: 0 }.recovering_faces()) / 6.0;
    let (rec_a, rec_b) = (rec(3), rec(2));
    let mut dist = [[0.0f64; 4]; 4];
    dist[0][0] = 1.0;
    for _ in 0..rounds {
        let mut next = [[0.0f64; 4]; 4];
        for a in 0..4 {
            for b in 0..4 {
                let w = dist[a][b];
                if w == 0.0 {
                    continue;
                }
                // A fires.
                let after_a: Vec<(usize, f64)> = if a == 0 && b < 3 {
                    vec![(b + 1, hit_a), (b, 1.0 - hit_a)]
                } else {
                    vec![(b, 1.0)]
                };
                for (b1, w1) in after_a {
                    let after_b: Vec<(usize, f64)> = if b1 == 0 && a < 3 {
                        vec![(a + 1, hit_b), (a, 1.0 - hit_b)]
                    } else {
                        vec![(a, 1.0)]
                    };
                    for (a1, w2) in after_b {
                        // Recovery.
                        let ra: Vec<(usize, f64)> = if a1 == 1 || a1 == 2 {
                            vec![(a1 - 1, rec_a), (a1, 1.0 - rec_a)]
                        } else {
                            vec![(a1, 1.0)]
                        };
                        let rb: Vec<(usize, f64)> = if b1 == 1 || b1 == 2 {
                            vec![(b1 - 1, rec_b), (b1, 1.0 - rec_b)]
                        } else {
                            vec![(b1, 1.0)]
                        };
                        for &(a2, w3) in &ra {
                            for &(b2, w4) in &rb {
                                next[a2][b2] += w * w1 * w2 * w3 * w4;
                            }
                        }
                    }
                }
            }
        }
        dist = next;
    }
    // Lost: routed or eliminated. Fewer lost wins.
    let lost = |s: usize| u8::from(s >= 2);
    let mut result = [0.0f64; 3];
    let mut eliminated_b = 0.0;
    for a in 0..4 {
        for b in 0..4 {
            let i = 1 + i32::from(lost(a)) - i32::from(lost(b));
            result[i as usize] += dist[a][b];
            if b == 3 {
                eliminated_b += dist[a][b];
            }
        }
    }
    let combat = FrontierCombat::new(battle).unwrap();
    let n = 2_000_000;
    let h = simulate_battles(&combat, 7, n, &RunControl::default()).unwrap();
    for i in 0..3 {
        let estimate = h.result[i] as f64 / n as f64;
        assert!(
            (estimate - result[i]).abs() <= four_se(result[i], n),
            "result {i}: {estimate} vs {}",
            result[i]
        );
    }
    let estimate = h.eliminated[1][1] as f64 / n as f64;
    assert!((estimate - eliminated_b).abs() <= four_se(eliminated_b, n));
    assert!(eliminated_b > 0.01 && result[0] > 0.05);
    assert_eq!(h.rounds[rounds as usize], n);
}

/// One round of movement and melee, by hand. A (initiative) fires, then B; A moves atop B
/// if A is still undisrupted and its move roll succeeds; otherwise B, if undisrupted,
/// tries to move atop A. The CRT eliminates the defender on every roll.
#[test]
fn one_round_of_movement_and_melee_by_hand() {
    let battle = duel(
        1,
        MovePolicy::Aggressive,
        (CrtLoss::None, CrtLoss::Eliminate(1)),
    );
    let hit_a = 3.0 / 6.0; // warrior CF 3: faces 1–3
    let hit_b = 2.0 / 6.0; // militia CF 2 in wilderness: faces 1–2
    let move_p = |level, unit| {
        f64::from(
            MoveRoll {
                level,
                unit,
                terrain: Terrain::Wilderness,
                leader: 0,
                severe_weather: false,
                with_regular: false,
                enemy_atop: false,
                surprise_bonus: false,
            }
            .moving_faces(),
        ) / 6.0
    };
    let (move_a, move_b) = (move_p(3, UnitType::Warrior), move_p(2, UnitType::Militia));
    // P(A undisrupted after both fires) = 1 − P(B still undisrupted) · hit_b.
    let b_normal = 1.0 - hit_a;
    let a_normal = 1.0 - b_normal * hit_b;
    let b_eliminated = a_normal * move_a;
    // B attacks only when A did not move in and B is undisrupted: A disrupted (B must have
    // been undisrupted to fire) or A undisrupted but failed to move while B undisrupted.
    let a_eliminated = (b_normal * hit_b + b_normal * (1.0 - hit_b) * (1.0 - move_a)) * move_b;
    let combat = FrontierCombat::new(battle).unwrap();
    let n = 2_000_000;
    let h = simulate_battles(&combat, 9, n, &RunControl::default()).unwrap();
    for (what, count, p) in [
        ("B eliminated", h.eliminated[1][1], b_eliminated),
        ("A eliminated", h.eliminated[0][1], a_eliminated),
    ] {
        let estimate = count as f64 / n as f64;
        assert!(
            (estimate - p).abs() <= four_se(p, n),
            "{what}: {estimate} vs {p}"
        );
    }
}

#[test]
fn identical_on_any_thread_count() {
    let mut battle = duel(
        2,
        MovePolicy::Aggressive,
        (CrtLoss::Eliminate(1), CrtLoss::Rout),
    );
    battle.sides[0].lanes[0][0].leader = 2;
    battle.extra_round = true;
    let combat = FrontierCombat::new(battle).unwrap();
    let run = |threads| {
        thread_pool(threads)
            .unwrap()
            .install(|| simulate_battles(&combat, 3, 200_001, &RunControl::default()).unwrap())
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(8));
    assert!(one.leaders_lost[0][1] > 0);
}

#[test]
fn validation_names_the_rule_broken() {
    let ok = duel(1, MovePolicy::Aggressive, (CrtLoss::None, CrtLoss::None));
    let err = |b: FrontierBattle| FrontierCombat::new(b).unwrap_err();
    // Stacking: three warriors in rough terrain (limit 2).
    let mut b = ok.clone();
    b.terrain = Terrain::Rough;
    b.sides[0].lanes[0][0].units = vec![unit(UnitType::Warrior, 2, 2); 3];
    assert!(err(b).message.contains("the limit is 2"));
    // A regular in wilderness with a warrior.
    let mut b = ok.clone();
    b.sides[0].lanes[0][0].units =
        vec![unit(UnitType::Regular, 2, 2), unit(UnitType::Warrior, 2, 2)];
    assert!(err(b).message.contains("only with one militia"));
    // … but with one militia it may.
    let mut b = ok.clone();
    b.sides[0].lanes[0][0].units =
        vec![unit(UnitType::Regular, 2, 2), unit(UnitType::Militia, 2, 2)];
    assert!(FrontierCombat::new(b).is_ok());
    // Rifles do not count.
    let mut b = ok.clone();
    b.terrain = Terrain::Rough;
    b.sides[0].lanes[0][0].units = vec![
        unit(UnitType::Warrior, 2, 2),
        unit(UnitType::Warrior, 2, 2),
        unit(UnitType::Rifle, 3, 1),
    ];
    assert!(FrontierCombat::new(b).is_ok());
    // A second row where the enemy has no stack opposite: B sets up first (A has the
    // initiative), A has a lane B does not.
    let mut b = ok.clone();
    b.sides[0]
        .lanes
        .push(vec![stack(vec![unit(UnitType::Warrior, 2, 2)])]);
    assert!(err(b).message.contains("opposite each of them"));
    // A third row before every lane has two.
    let mut b = ok.clone();
    b.sides[0].lanes[0].push(stack(vec![unit(UnitType::Warrior, 2, 2)]));
    b.sides[0].lanes[0].push(stack(vec![unit(UnitType::Warrior, 2, 2)]));
    b.sides[1]
        .lanes
        .push(vec![stack(vec![unit(UnitType::Militia, 2, 2)])]);
    b.sides[0]
        .lanes
        .push(vec![stack(vec![unit(UnitType::Warrior, 2, 2)])]);
    assert!(err(b).message.contains("a further row"));
    // CRT: missing cells, columns out of order.
    let mut b = ok.clone();
    b.crt.cells[2].pop();
    assert_eq!(err(b).field, "crt.rows[2]");
    let mut b = ok.clone();
    b.crt.columns = vec![(1, 1), (1, 2), (2, 1)];
    assert!(err(b)
        .message
        .contains("from the lowest odds to the highest"));
    // Ratings and levels.
    let mut b = ok.clone();
    b.sides[1].primary_leader = 4;
    assert_eq!(err(b).field, "b.primary_leader");
    let mut b = ok.clone();
    b.sides[0].lanes[0][0].leader = 5;
    assert!(err(b).field.ends_with(".leader"));
    let mut b = ok;
    b.sides[0].level = 6;
    assert_eq!(err(b).field, "a.level");
}

#[test]
fn crt_columns_round_the_odds_down() {
    let c = crt((CrtLoss::None, CrtLoss::None));
    assert_eq!(c.column_for(1, 3), 0); // below 1:2 uses the first column
    assert_eq!(c.column_for(5, 4), 1); // 1.25:1 → 1:1
    assert_eq!(c.column_for(4, 2), 2); // 2:1
    assert_eq!(c.column_for(9, 2), 2); // beyond the last column
}

/// The shipped frontier analysis writes identical data on 1 and 8 threads, with every
/// sensitivity chart the issue names.
#[test]
fn shipped_frontier_analysis_is_byte_identical_on_one_and_eight_threads() {
    let dir = tempfile::tempdir().unwrap();
    let analysis = format!(
        "{}/analyses/frontier_illustrative_crt.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut outputs = Vec::new();
    for threads in ["1", "8"] {
        let out = dir.path().join(threads);
        let output = assert_cmd::Command::cargo_bin("battlelab")
            .unwrap()
            .args([
                "run",
                &analysis,
                "--trials",
                "70000",
                "--threads",
                threads,
                "--quiet",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        outputs.push(
            [
                "results.csv",
                "results.parquet",
                "expectations.csv",
                "distributions.csv",
                "tables.md",
            ]
            .map(|f| std::fs::read(out.join(f)).unwrap()),
        );
    }
    assert!(outputs[0] == outputs[1], "1 vs 8 threads differ");
    let out = dir.path().join("1");
    for chart in [
        "outcome_by_terrain_weather.png",
        "outcome_by_level_difference.png",
        "outcome_by_leader.png",
        "outcome_by_surprise.png",
    ] {
        assert!(out.join(chart).exists(), "{chart}");
    }
}

/// One round with B avoiding melee (19.2.2's "+1 if enemy units have moved atop them"):
/// when A moves in, an undisrupted B tries to move away at +1 and, if it does, there is
/// no melee in that lane this round.
#[test]
fn avoiding_melee_by_hand() {
    let mut battle = duel(
        1,
        MovePolicy::Aggressive,
        (CrtLoss::None, CrtLoss::Eliminate(1)),
    );
    battle.sides[1].avoid_melee = true;
    let (hit_a, hit_b) = (3.0 / 6.0, 2.0 / 6.0);
    let moving = |level, unit, enemy_atop| {
        f64::from(
            MoveRoll {
                level,
                unit,
                terrain: Terrain::Wilderness,
                leader: 0,
                severe_weather: false,
                with_regular: false,
                enemy_atop,
                surprise_bonus: false,
            }
            .moving_faces(),
        ) / 6.0
    };
    let move_a = moving(3, UnitType::Warrior, false);
    let move_b = moving(2, UnitType::Militia, false);
    let avoid_b = moving(2, UnitType::Militia, true);
    assert_eq!(avoid_b, 1.0 / 6.0); // militia level 2, +1: only the natural 1
    let b_eliminated = hit_a * move_a + (1.0 - hit_a) * (1.0 - hit_b) * move_a * (1.0 - avoid_b);
    let a_eliminated = (1.0 - hit_a) * (hit_b * move_b + (1.0 - hit_b) * (1.0 - move_a) * move_b);
    let combat = FrontierCombat::new(battle).unwrap();
    let n = 2_000_000;
    let h = simulate_battles(&combat, 10, n, &RunControl::default()).unwrap();
    for (what, count, p) in [
        ("B eliminated", h.eliminated[1][1], b_eliminated),
        ("A eliminated", h.eliminated[0][1], a_eliminated),
    ] {
        let estimate = count as f64 / n as f64;
        assert!(
            (estimate - p).abs() <= four_se(p, n),
            "{what}: {estimate} vs {p}"
        );
    }
}

/// Fixed-seed outputs are pinned (a change to the kernel or the dice shows up here).
#[test]
fn fixed_seed_counts_are_pinned() {
    let mut battle = duel(
        2,
        MovePolicy::Aggressive,
        (CrtLoss::Eliminate(1), CrtLoss::Rout),
    );
    battle.extra_round = true;
    let combat = FrontierCombat::new(battle).unwrap();
    let h = simulate_battles(&combat, 2026, 100_000, &RunControl::default()).unwrap();
    assert_eq!(h.result, PINNED_RESULT);
}

const PINNED_RESULT: [u64; 3] = [17206, 53429, 29365];

/// Sensitivity runs whose battle breaks 19.1 are left out and listed, not fatal: three
/// warriors stack in wilderness but not in rough terrain.
#[test]
fn illegal_sensitivity_runs_are_skipped_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("three_warriors.toml");
    std::fs::write(
        &file,
        r#"system = "frontier"
trials = 2000
[battle]
terrain = "wilderness"
[side.a]
level = 3
primary_leader = 2
lanes = [[{ units = ["warrior 3/2", "warrior 3/2", "warrior 3/2"], primary = true }]]
[side.b]
level = 3
primary_leader = 2
lanes = [[{ units = ["militia 2/2", "militia 2/2"] }]]
[crt]
columns = ["1:2", "1:1", "2:1"]
rows = [["1/-", "1/-", "-/1"], ["-/1", "-/1", "-/R"]]
[sensitivity]
terrain_weather = true
leaders = true
"#,
    )
    .unwrap();
    let out = dir.path().join("report");
    let output = assert_cmd::Command::cargo_bin("battlelab")
        .unwrap()
        .args(["run"])
        .arg(&file)
        .args(["--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tables = std::fs::read_to_string(out.join("tables.md")).unwrap();
    assert!(tables.contains("left out"), "{tables}");
    assert!(
        tables.contains("rough, fair") && tables.contains("the limit is 2"),
        "{tables}"
    );
    // The leader runs vary the primary leader's stack too: rating 1 and 3 differ.
    let expectations = std::fs::read_to_string(out.join("expectations.csv")).unwrap();
    assert!(
        expectations.contains("A primary leader 1") && expectations.contains("A primary leader 3")
    );
}
