//! Runs one bench scenario's whole battles in a loop, for a sampling profiler.
//!
//! ```text
//! CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_TARGET_DIR=target-prof \
//!   cargo build -p battlelab-core --release --example profile
//! perf record -g target-prof/release/examples/profile frontier 10000000
//! perf annotate --stdio
//! ```
//!
//! Why this exists: every kernel inlines into its battle loop, so a profile of the criterion
//! bench shows one symbol; this loop, built with line tables, shows which lines of a battle
//! take the time (the `PERF:` comments in the kernels cite it). Kernels: `bare` (the
//! bare `next_u64` loop, to read a battle's cost against), `frontier` (bit-sliced, 256
//! at once: `systems/frontier/battle/sliced.rs`), `frontier-deep` (the bench
//! battle with second rows in three of side A's lanes, 15 units against 12: its lanes are
//! fought one battle at a time, by the mask kernel's multi-row paths),
//! `frontier-dice` (a frontier battle's 96 d6 cut as `PackedDice` cuts them, and no
//! rules), `frontier-sliced-dice` (the dice the bit-sliced kernel draws for it, 409
//! d6 a battle as bit planes, and no rules: `dice/planes.rs`), `ratio-rescue`, `ratio-press`, `ratio-optimal` (the bench's five-combat line
//! with two reserves, bit-sliced: `systems/ratio/battle/sliced.rs`), `ratio-four` (its
//! four-combat line with one reserve under `optimal` for the chance of winning:
//! signatures, in lanes), `melee-duel` and
//! `melee-surrounded` (both 32 at once, `systems/melee/engagement/lockstep.rs`), `setup`, `naval` (one engagement at a time, not counted), `naval-record` (one
//! at a time, each counted in a histogram) and `naval-lockstep` (32 at once, counted:
//! `systems/naval_engagement/engagement/lockstep.rs`), `field` (the bench's field battle from its table, one at a
//! time, each counted) and `field-lanes` (32 at once, counted:
//! `systems/field/transitions/lockstep.rs`), and `setup-count` (one coalition's maps counted:
//! `systems/setup/map/lockstep.rs`). The kernels in lanes run in blocks of `BLOCK_TRIALS`, as
//! runs fight them.

use std::time::Instant;

use battlelab_core::dice::DiceStream;
use battlelab_core::scenarios;
use battlelab_core::sim::BLOCK_TRIALS;
use battlelab_core::systems::field::battle::{BattleHistogram, FieldCombat, FieldRules};
use battlelab_core::systems::field::transitions::{
    FieldKernel, TransitionTable, MAX_TABLE_ENTRIES,
};
use battlelab_core::systems::frontier::battle::FrontierCombat;
use battlelab_core::systems::ratio::battle::{
    Objective, RatioCombat, RatioHistogram, ReservePolicy,
};
use battlelab_core::systems::setup::map::CompiledMap;

fn main() {
    let mut args = std::env::args().skip(1);
    let kernel = args.next().unwrap_or_else(|| "frontier".into());
    let battles: u64 = match args.next().map(|n| n.parse::<f64>()) {
        None => 10_000_000,
        Some(Ok(n)) if n >= 1.0 => n as u64,
        Some(_) => {
            eprintln!("usage: profile KERNEL [BATTLES]: BATTLES is a count such as 1e8");
            std::process::exit(2);
        }
    };
    let mut dice = DiceStream::for_block(1, 0);
    let start = Instant::now();
    let check = match kernel.as_str() {
        "bare" => {
            let mut acc = 0u64;
            for _ in 0..battles {
                acc ^= dice.next_u64();
            }
            acc
        }
        "frontier" => {
            let combat = scenarios::frontier();
            let mut h = combat.empty_histogram();
            combat.battle_block(&mut dice, battles, &mut h);
            h.result[0]
        }
        "frontier-deep" => {
            // The bench battle with a second row of one warrior in lanes 0, 2 and 4 of side
            // A (the side that sets up second): 15 units against 12, past the stack table of
            // `STACK_TABLE_UNITS`, so B's fire and A's movement take the multi-row paths.
            let mut battle = scenarios::frontier_six_stacks();
            for lane in battle.sides[0].lanes.iter_mut().step_by(2) {
                let mut behind = lane[0].clone();
                behind.units.truncate(1);
                behind.leader = 0;
                lane.push(behind);
            }
            let combat = FrontierCombat::new(battle).expect("a valid deep battle");
            let mut h = combat.empty_histogram();
            combat.battle_block(&mut dice, battles, &mut h);
            h.result[0]
        }
        "frontier-dice" => scenarios::frontier_dice_floor(&mut dice, battles),
        "frontier-sliced-dice" => {
            let faces = scenarios::frontier().most_faces() as u64;
            scenarios::sliced_dice_floor(&mut dice, battles, faces)
        }
        "ratio-rescue" | "ratio-press" | "ratio-optimal" | "ratio-four" => {
            let (line, policy) = match kernel.as_str() {
                // The bench's four-combat line: its signatures fit the signature bins (under
                // `optimal` for the chance of winning, which is not bit-sliced).
                "ratio-four" => ("1v1,1v1,1v1,2v1", ReservePolicy::Optimal),
                _ => (
                    scenarios::RATIO_LINE,
                    ReservePolicy::ALL
                        .into_iter()
                        .find(|p| kernel.ends_with(p.name()))
                        .expect("a listed policy"),
                ),
            };
            let reserves = if kernel == "ratio-four" { 1 } else { 2 };
            let mut battle = scenarios::ratio_line(line, reserves, 0, policy);
            if kernel == "ratio-four" {
                battle.objective = Objective::WinProbability;
            }
            let combat = RatioCombat::new(battle).expect("the bench line is valid");
            // As runs and the bench do: blocks into one histogram.
            let mut h = RatioHistogram::for_signatures(&combat);
            combat.simulate_block(&mut dice, battles, &mut h);
            h.fold_signatures(&combat);
            h.result[0]
        }
        "melee-duel" | "melee-surrounded" => {
            let combat = if kernel == "melee-duel" {
                scenarios::melee_duel()
            } else {
                scenarios::melee_surrounded()
            };
            let mut h = combat.empty_engagement_histogram();
            in_blocks(&mut dice, battles, |d, n| {
                combat.engagement_block(d, n, &mut h);
            });
            h.ends.iter().zip(1..).map(|(c, i)| c * i).sum::<u64>() + h.models_lost[1][3]
        }
        "setup" => {
            let map = CompiledMap::new(&scenarios::setup_map());
            let mut totals = [[0u32; 7]; 3];
            for _ in 0..battles {
                map.roll_totals(&mut dice, &mut totals);
            }
            u64::from(totals[0][0])
        }
        "setup-count" => {
            let one =
                battlelab_core::systems::setup::map::CoalitionMap::new(&scenarios::setup_map(), 0);
            let offsets = [0, 400, 800, 1200, 1600, 2000, 2400];
            let mut counts = battlelab_core::systems::setup::map::CoalitionCounts::new(2800);
            in_blocks(&mut dice, battles, |d, n| {
                one.count(d, n, &offsets, &mut counts);
            });
            // Once a run, as a study's run folds its counts.
            one.fold(&offsets, &mut counts);
            counts.totals[400..800]
                .iter()
                .enumerate()
                .map(|(t, c)| t as u64 * c)
                .sum()
        }
        "naval" => {
            let (naval, engagement) = scenarios::naval();
            let naval = naval.kernel(&engagement);
            for _ in 0..battles {
                std::hint::black_box(naval.engage(&mut dice));
            }
            0
        }
        "naval-record" => {
            let (naval, engagement) = scenarios::naval();
            let kernel = naval.kernel(&engagement);
            let mut h =
                battlelab_core::systems::naval_engagement::engagement::EngagementHistogram::new(
                    &engagement,
                );
            for _ in 0..battles {
                h.record(&kernel.engage(&mut dice));
            }
            h.result[0] + h.rounds[2]
        }
        "naval-lockstep" => {
            let (naval, engagement) = scenarios::naval();
            let kernel = naval.kernel(&engagement);
            let mut h =
                battlelab_core::systems::naval_engagement::engagement::EngagementHistogram::new(
                    &engagement,
                );
            in_blocks(&mut dice, battles, |d, n| {
                kernel.record_many(d, n, &mut h);
            });
            h.result[0] + h.rounds[2]
        }
        "rules-naval" | "rules-crt" | "rules-risk" | "rules-pool" | "rules-field" => {
            use battlelab_core::engine::System;
            use battlelab_core::systems::rules_file::scenarios as rules;
            let study = match kernel.as_str() {
                "rules-naval" => rules::naval_engagement_6_v_4(),
                "rules-crt" => rules::classic_crt(),
                "rules-risk" => rules::risk_30_v_30(),
                "rules-field" => rules::field_12_v_8(),
                _ => rules::dice_pool_10_v_10(),
            };
            let mut counts = study.empty(0);
            in_blocks(&mut dice, battles, |d, n| {
                study.simulate(0, d, n, &mut counts)
            });
            counts.outcomes[0] + counts.rounds[1]
        }
        "field" | "field-lanes" => {
            let field = FieldCombat::new(FieldRules::printed()).expect("the printed rules");
            let prepared = scenarios::field_battle().prepare().expect("a valid battle");
            let table =
                TransitionTable::compile(&field, &prepared, MAX_TABLE_ENTRIES).expect("small");
            let mut h = BattleHistogram::new(&prepared, field.rules().round_limit);
            if kernel == "field" {
                for _ in 0..battles {
                    h.record(&table.fight(&mut dice));
                }
            } else {
                let kernel = FieldKernel::Table(&table);
                in_blocks(&mut dice, battles, |d, n| {
                    kernel.fight_block(d, n, &mut h);
                });
            }
            h.result[0] + h.rounds[2]
        }
        other => {
            eprintln!(
                "unknown kernel {other}: bare, frontier, frontier-deep, frontier-dice, frontier-sliced-dice, ratio-rescue, ratio-press, ratio-optimal, melee-duel, melee-surrounded, setup, naval, naval-record, naval-lockstep, field, field-lanes, setup-count"
            );
            std::process::exit(2);
        }
    };
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{kernel}: {battles} battles in {secs:.2} s ({:.3} M/s) [{check}]",
        battles as f64 / secs / 1e6
    );
}

/// `battles` battles in blocks of `BLOCK_TRIALS` (the last one shorter), as runs fight a
/// kernel in lanes: `block(dice, n)` fights a block of `n`.
fn in_blocks(dice: &mut DiceStream, battles: u64, mut block: impl FnMut(&mut DiceStream, u64)) {
    for first in (0..battles).step_by(BLOCK_TRIALS as usize) {
        block(dice, BLOCK_TRIALS.min(battles - first));
    }
}
