//! Fairness of the dice: chi-square tests at fixed seeds against the exact face
//! probabilities, for d6, 2d6, dN and for every position of several dice cut from one word.

use battlelab_core::dice::DiceStream;
use battlelab_core::stats::{chi_square, chi_square_critical};

/// 99.99% one-sided normal quantile: a fair die fails one of these tests with p = 1e-4.
const Z: f64 = 3.719;
const DRAWS: u64 = 10_000_000;

fn assert_fair(name: &str, counts: &[u64], expected: &[f64]) {
    let (statistic, df) = chi_square(counts, expected);
    let critical = chi_square_critical(df, Z);
    assert!(
        statistic < critical,
        "{name}: chi-square {statistic:.1} ≥ {critical:.1} (df {df}), counts {counts:?}"
    );
}

#[test]
fn d6_and_dn_are_uniform() {
    let mut dice = DiceStream::for_block(11, 0);
    let mut counts = vec![0u64; 6];
    for _ in 0..DRAWS {
        counts[dice.d6() as usize - 1] += 1;
    }
    assert_fair("d6", &counts, &[1.0 / 6.0; 6]);
    for sides in [2u32, 10, 20, 36, 100] {
        let mut counts = vec![0u64; sides as usize];
        for _ in 0..DRAWS {
            counts[dice.d(sides) as usize - 1] += 1;
        }
        assert_fair(
            &format!("d{sides}"),
            &counts,
            &vec![1.0 / f64::from(sides); sides as usize],
        );
    }
}

#[test]
fn two_d6_is_triangular() {
    let mut dice = DiceStream::for_block(12, 0);
    let mut counts = vec![0u64; 11];
    for _ in 0..DRAWS {
        counts[dice.two_d6() as usize - 2] += 1;
    }
    let expected: Vec<f64> = (2..=12)
        .map(|s: i32| f64::from(6 - (s - 7).abs()) / 36.0)
        .collect();
    assert_fair("2d6", &counts, &expected);
}

/// Eight d6 from one word: each position is uniform, and consecutive positions are
/// independent (the 36 joint faces of positions k and k+1 are uniform).
#[test]
fn eight_dice_from_one_word_are_uniform_and_independent() {
    let mut dice = DiceStream::for_block(13, 0);
    let mut single = vec![vec![0u64; 6]; 8];
    let mut pairs = vec![vec![0u64; 36]; 7];
    for _ in 0..DRAWS {
        let mut word = dice.word();
        let faces: [u32; 8] = std::array::from_fn(|_| word.take(6));
        for k in 0..8 {
            single[k][faces[k] as usize] += 1;
        }
        for k in 0..7 {
            pairs[k][(faces[k] * 6 + faces[k + 1]) as usize] += 1;
        }
    }
    for (k, counts) in single.iter().enumerate() {
        assert_fair(&format!("die {k} of a word"), counts, &[1.0 / 6.0; 6]);
    }
    for (k, counts) in pairs.iter().enumerate() {
        assert_fair(
            &format!("dice {k},{} of a word", k + 1),
            counts,
            &[1.0 / 36.0; 36],
        );
    }
}

/// The test is able to fail: a die that favours one face by 1% is caught.
#[test]
fn a_loaded_die_is_caught() {
    let mut dice = DiceStream::for_block(14, 0);
    let mut counts = vec![0u64; 6];
    for _ in 0..DRAWS {
        let face = dice.below(600);
        counts[if face < 106 {
            0
        } else {
            (face as usize - 106) * 5 / 494 + 1
        }] += 1;
    }
    let (statistic, df) = chi_square(&counts, &[1.0 / 6.0; 6]);
    assert!(
        statistic > chi_square_critical(df, Z),
        "a loaded die passed: {statistic}"
    );
}
