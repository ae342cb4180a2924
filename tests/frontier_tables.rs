//! Frontier quick battles (rule 19; docs/systems/frontier.md), the single rolls: fire, movement
//! and recovery against closed forms worked from the rules text for every unit type ×
//! terrain × weather × leader rating × level, and `table frontier-*` from the command line.

use assert_cmd::Command;
use battlelab_core::systems::frontier::rolls::{
    melee_multiplier, FireRoll, MoveRoll, RecoveryRoll, Terrain, UnitType, MAX_LEADER, MAX_LEVEL,
};
use serde_json::Value;

/// Faces 2–5 succeed when at or under `target`; the 1 always succeeds, the 6 never:
/// 1 + |{2..=5} ∩ (−∞, target]|.
fn closed_form(target: i64) -> u32 {
    1 + (target - 1).clamp(0, 4) as u32
}

/// The fire table of 19.2.1 as printed: (CF multiplier, DRM, waived in severe weather).
fn printed_fire(unit: UnitType, terrain: Terrain) -> (i64, i64, bool) {
    let row = match unit {
        UnitType::Warrior => [(1, 0, false); 3],
        UnitType::Regular => [(1, 0, false), (1, -1, true), (2, -1, true)],
        UnitType::Militia => [(1, 0, false), (1, 0, false), (1, -1, false)],
        UnitType::Rifle => [(1, 0, false), (1, -1, true), (1, -1, false)],
    };
    row[Terrain::ALL.iter().position(|&t| t == terrain).unwrap()]
}

#[test]
fn fire_hits_for_every_type_terrain_weather_and_cf() {
    let mut checked = 0;
    for unit in UnitType::ALL {
        for terrain in Terrain::ALL {
            for severe in [false, true] {
                for cf in 1..=10u32 {
                    let (mult, drm, waived) = printed_fire(unit, terrain);
                    let drm = if waived && severe { 0 } else { drm };
                    let expected = closed_form(i64::from(cf) * mult - drm);
                    let roll = FireRoll {
                        unit,
                        cf,
                        terrain,
                        severe_weather: severe,
                    };
                    assert_eq!(roll.hitting_faces(), expected, "{roll:?}");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 4 * 3 * 2 * 10);
}

#[test]
fn movement_for_every_type_terrain_weather_leader_and_level() {
    let mut checked = 0;
    for unit in UnitType::ALL {
        for terrain in Terrain::ALL {
            for severe in [false, true] {
                for leader in 0..=MAX_LEADER {
                    for level in 1..=MAX_LEVEL {
                        for (with_regular, enemy_atop, surprise) in [
                            (false, false, false),
                            (true, true, false),
                            (false, true, true),
                        ] {
                            if surprise && leader == 0 {
                                continue;
                            }
                            // 19.2.2, every DRM cumulative.
                            let mut drm = -i64::from(leader);
                            if terrain == Terrain::Settled
                                && (unit == UnitType::Regular || with_regular)
                            {
                                drm -= 1;
                            }
                            if terrain == Terrain::Rough && unit != UnitType::Warrior {
                                drm += 1;
                            }
                            drm += i64::from(severe) + i64::from(enemy_atop) - i64::from(surprise);
                            let roll = MoveRoll {
                                level,
                                unit,
                                terrain,
                                leader,
                                severe_weather: severe,
                                with_regular,
                                enemy_atop,
                                surprise_bonus: surprise,
                            };
                            assert_eq!(roll.drm() as i64, drm, "{roll:?}");
                            assert_eq!(
                                roll.moving_faces(),
                                closed_form(i64::from(level) - drm),
                                "{roll:?}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 1000);
}

#[test]
fn recovery_for_every_level_and_leader() {
    for level in 1..=MAX_LEVEL {
        for leader in 0..=MAX_LEADER {
            // Faces 1–5 recover when face − leader ≤ level; the 6 never does.
            let expected = (level + leader).min(5);
            assert_eq!(RecoveryRoll { level, leader }.recovering_faces(), expected);
        }
    }
}

#[test]
fn melee_terrain_multipliers_as_printed() {
    let printed = [[3, 2, 2], [1, 1, 1], [2, 1, 2], [1, 1, 1]];
    for (u, unit) in UnitType::ALL.into_iter().enumerate() {
        for (t, terrain) in Terrain::ALL.into_iter().enumerate() {
            assert_eq!(
                melee_multiplier(unit, terrain),
                printed[u][t],
                "{unit:?} {terrain:?}"
            );
        }
    }
}

fn battlelab() -> Command {
    Command::cargo_bin("battlelab").unwrap()
}

fn json(args: &[&str]) -> Value {
    let output = battlelab()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn table_commands_print_exact_odds_and_the_rulebook_grid() {
    let fire = json(&[
        "table",
        "frontier-fire",
        "--type",
        "regular",
        "--terrain",
        "settled",
        "--cf",
        "3",
    ]);
    assert_eq!(fire["outcomes"][0]["fraction"], "5/6");
    let sections = fire["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 2);
    assert_eq!(sections[0]["rows"].as_array().unwrap().len(), 12);
    let moves = json(&[
        "table",
        "frontier-move",
        "--level",
        "3",
        "--type",
        "militia",
        "--terrain",
        "rough",
        "--severe-weather",
    ]);
    // Rough +1 (non-warrior) and severe +1: roll + 2 ≤ 3 only for the 1.
    assert_eq!(moves["outcomes"][0]["fraction"], "1/6");
    assert_eq!(moves["sections"].as_array().unwrap().len(), 8);
    let recovery = json(&[
        "table",
        "frontier-recovery",
        "--level",
        "2",
        "--leader",
        "2",
    ]);
    assert_eq!(recovery["outcomes"][0]["fraction"], "2/3");
    assert_eq!(
        recovery["sections"][0]["rows"].as_array().unwrap().len(),
        20
    );
}

#[test]
fn table_commands_simulate_within_four_se() {
    let n = 1_000_000f64;
    let fire = json(&[
        "table",
        "frontier-fire",
        "--type",
        "rifle",
        "--terrain",
        "wilderness",
        "--cf",
        "2",
        "--trials",
        "1000000",
    ]);
    for o in fire["outcomes"].as_array().unwrap() {
        let p = o["probability"].as_f64().unwrap();
        let se = (p * (1.0 - p) / n).sqrt();
        assert!(
            (o["estimate"].as_f64().unwrap() - p).abs() <= 4.0 * se,
            "{o}"
        );
    }
}

#[test]
fn table_commands_refuse_bad_input() {
    for (args, expected) in [
        (
            vec![
                "frontier-fire",
                "--type",
                "ranger",
                "--terrain",
                "rough",
                "--cf",
                "2",
            ],
            "allowed: warrior, regular, militia, rifle",
        ),
        (
            vec![
                "frontier-fire",
                "--type",
                "warrior",
                "--terrain",
                "swamp",
                "--cf",
                "2",
            ],
            "allowed: rough, wilderness, settled",
        ),
        (
            vec![
                "frontier-fire",
                "--type",
                "warrior",
                "--terrain",
                "rough",
                "--cf",
                "0",
            ],
            "fire CF is 1 to 10",
        ),
        (vec!["frontier-move", "--level", "0"], "levels are 1 to 5"),
        (vec!["frontier-move", "--level", "6"], "levels are 1 to 5"),
        (
            vec!["frontier-move", "--level", "3", "--leader", "4"],
            "command ratings are 1 to 3",
        ),
        (
            vec!["frontier-move", "--level", "3", "--surprise"],
            "give a leader rating",
        ),
        (
            vec!["frontier-recovery", "--level", "3", "--leader", "9"],
            "command ratings are 1 to 3",
        ),
    ] {
        let output = battlelab().arg("table").args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty());
    }
}
