//! The printed tables of the strategic game, cell by cell, as the battles read them
//! (docs/systems/field.md, docs/systems/naval.md, docs/systems/tables.md): every cell of
//! the Combat Loss Chart (3 rows × 6 columns), every cell of the tactical matrix (7 × 7,
//! NC and the parenthesised cells included) read both ways round (A the larger force, and
//! B), every CRT column at every odds and DRM, and every cell of the naval combat table
//! at every odds with either fleet larger — each held against one round of a battle the
//! library fights, through its public entry points (`clc_loss`, `battle_distribution`,
//! `NavalCombat::distribution`, `engage`), never against the library's own constant
//! arrays. The expected values come from the independent oracles (`field_oracle/`,
//! `naval_oracle/`), which type the tables in from the docs as printed.
//!
//! (The CRT's single roll and every one-roll table, naval included, are also held cell by
//! cell against their own transcriptions by `crt_exact.rs` and `d6_exact.rs`; here the
//! same tables are read where the battles read them.)

mod field_oracle;
mod naval_oracle;

use battlelab_core::dice::DiceStream;
use battlelab_core::systems::field::battle::{CrtResult, FieldCombat, FieldRules};
use field_oracle::library::{assert_exact_equals, library_battle};
use field_oracle::{Battle, Side, CLC, CLC_BANDS, MATRIX, TACTICS};
use naval_oracle::library::{assert_counts_agree, library_engagement};

/// Every CLC cell by the public `clc_loss`: each result at every strength of the smaller
/// force from 1 to 40 SP (every band and both edges of each) is the printed value; `0`
/// loses nothing.
#[test]
fn combat_loss_chart_every_cell_by_strength() {
    let field = FieldCombat::new(FieldRules::printed()).unwrap();
    let rows: [(&str, usize); 4] = [("1", 0), ("D1", 1), ("D2", 2), ("D3", 2)];
    for smaller_sp in 1..=40u32 {
        let band = CLC_BANDS
            .iter()
            .rposition(|(lowest, _)| smaller_sp >= *lowest)
            .unwrap();
        for (result, row) in rows {
            assert_eq!(
                field.clc_loss(CrtResult::parse(result).unwrap(), smaller_sp),
                CLC[row][band],
                "CLC row {result}, column {} (smaller force {smaller_sp} SP)",
                CLC_BANDS[band].1
            );
        }
        assert_eq!(field.clc_loss(CrtResult::NoLoss, smaller_sp), 0);
    }
}

/// Every CLC cell as a battle applies it: one round at 1:1 (every CRT column reachable,
/// so both forces take `1`, `D1`, `D2` and `D3` results), the smaller force at the lowest
/// and highest SP of every column, A larger and B larger. Morale 9 a side, so no result
/// breaks a force and every loss shows in full.
#[test]
fn combat_loss_chart_every_cell_in_one_round() {
    for smaller in [1, 3, 4, 5, 6, 10, 11, 15, 16, 20, 21, 30] {
        // The larger force: one SP more where that stays at 1:1, else equal (A larger).
        let larger = if 2 * (smaller + 1) < 3 * smaller {
            smaller + 1
        } else {
            smaller
        };
        for b_larger in [false, true] {
            let (a_sp, b_sp) = if b_larger && larger > smaller {
                (smaller, larger)
            } else {
                (larger, smaller)
            };
            let battle = Battle {
                a: Side::new(a_sp, 9, "charge"),
                b: Side::new(b_sp, 9, "charge"),
                terrain: 0,
                round_limit: 1,
            };
            let (field, prepared) = library_battle(&battle);
            let exact = field.battle_distribution(&prepared, 1_000_000).unwrap();
            assert_exact_equals(
                &format!("CLC, {a_sp} SP v {b_sp} SP"),
                &battle,
                &field_oracle::enumerate(&battle),
                &exact,
            );
        }
    }
}

/// Every cell of the tactical matrix, with A the larger force (A's tactic the row) and
/// with B the larger force (B's tactic the row): one round at 3:2, where a DRM of −2…+2
/// gives five different distributions, NC none, and a cell in parentheses ends the battle
/// (A withdraws, B withdraws, both withdraw). Round limit 2, so a cell without
/// parentheses goes on to a second round.
#[test]
fn tactical_matrix_every_cell_both_ways_round() {
    for (row, row_name) in TACTICS.iter().enumerate() {
        for (column, column_name) in TACTICS.iter().enumerate() {
            for b_larger in [false, true] {
                let (larger, smaller) = (Side::new(12, 2, row_name), Side::new(8, 2, column_name));
                let (a, b) = if b_larger {
                    (smaller, larger)
                } else {
                    (larger, smaller)
                };
                let battle = Battle {
                    a,
                    b,
                    terrain: 0,
                    round_limit: 2,
                };
                let (field, prepared) = library_battle(&battle);
                let exact = field.battle_distribution(&prepared, 1_000_000).unwrap();
                assert_exact_equals(
                    &format!(
                        "matrix cell {row_name}/{column_name} = {} with {} larger",
                        MATRIX[row][column],
                        if b_larger { "B" } else { "A" }
                    ),
                    &battle,
                    &field_oracle::enumerate(&battle),
                    &exact,
                );
            }
        }
    }
}

/// Every CRT column as a battle applies it: one round at each printed odds column, with
/// A larger and with B larger, at every net DRM from −5 to +5 (so the ±4 clamp is crossed)
/// set through the larger side's own DRM.
#[test]
fn crt_every_odds_and_drm_in_one_round() {
    // (larger SP, smaller SP): 1:1, 3:2, 2:1, 3:1, and 4:1 (which reads 3:1).
    for (larger_sp, smaller_sp) in [(10, 8), (12, 8), (16, 8), (24, 8), (32, 8)] {
        for drm in -5..=5 {
            for b_larger in [false, true] {
                let mut larger = Side::new(larger_sp, 9, "charge");
                larger.drm = drm;
                let smaller = Side::new(smaller_sp, 9, "charge");
                let (a, b) = if b_larger {
                    (smaller, larger)
                } else {
                    (larger, smaller)
                };
                let battle = Battle {
                    a,
                    b,
                    terrain: 0,
                    round_limit: 1,
                };
                let (field, prepared) = library_battle(&battle);
                let exact = field.battle_distribution(&prepared, 1_000_000).unwrap();
                assert_exact_equals(
                    &format!(
                        "CRT {larger_sp}:{smaller_sp}, DRM {drm:+}, {} larger",
                        if b_larger { "B" } else { "A" }
                    ),
                    &battle,
                    &field_oracle::enumerate(&battle),
                    &exact,
                );
            }
        }
    }
}

/// Every cell of the naval combat table as an engagement reads it: one round, neither
/// fleet pursuing (so the round's result is the table's: who breaks off, what it loses),
/// at 1-1, 3-2, 2-1 and above 2-1, with A larger and with B larger, at DRMs from −3 to
/// +4 (every row −1…8 reached, the clamp crossed at both ends). Exact NSP lost against
/// the oracle; sunk and captured apart through the kernel's own outcomes, 60 000
/// engagements a case within 5 standard deviations.
#[test]
fn naval_table_every_cell_in_one_round() {
    use naval_oracle::{enumerate, Engagement, Fleet};
    for (larger_nsp, smaller_nsp) in [(4, 4), (6, 4), (8, 4), (9, 3)] {
        for drm in -3..=4 {
            for b_larger in [false, true] {
                let mut larger = Fleet::new(larger_nsp, 2);
                larger.drm = drm;
                larger.pursues = false;
                let mut smaller = Fleet::new(smaller_nsp, 2);
                smaller.pursues = false;
                let (a, b) = if b_larger {
                    (smaller, larger)
                } else {
                    (larger, smaller)
                };
                let e = Engagement {
                    a,
                    b,
                    coastal: false,
                    round_limit: 1,
                };
                let name = format!(
                    "naval {larger_nsp}-{smaller_nsp}, DRM {drm:+}, {} larger",
                    if b_larger { "B" } else { "A" }
                );
                let oracle = enumerate(&e);
                let (naval, engagement) = library_engagement(&e);
                naval_oracle::library::assert_exact_equals(
                    &name,
                    &e,
                    &oracle,
                    &naval.distribution(&engagement),
                );
                let mut captured = [vec![0u64; 3], vec![0u64; 3]];
                let mut dice = DiceStream::for_block(1805, drm as u64 + 10);
                for _ in 0..60_000 {
                    let o = naval.engage(&engagement, &mut dice);
                    for side in 0..2 {
                        captured[side][o.captured[side] as usize] += 1;
                    }
                }
                for (side, seen) in captured.iter().enumerate() {
                    let expected = oracle.marginal(3, |end| end.captured[side]);
                    assert_counts_agree(
                        &name,
                        ["NSP captured from A", "NSP captured from B"][side],
                        &expected,
                        oracle.total,
                        seen,
                    );
                }
            }
        }
    }
}
