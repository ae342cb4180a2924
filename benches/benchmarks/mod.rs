pub mod crt;
pub mod driver;
pub mod field;
pub mod frontier;
pub mod melee;
pub mod ratio;
pub mod rules_file;
pub mod strategic;

use battlelab::dice::DiceStream;

/// Elements per measured iteration.
pub const BATCH: u64 = 1 << 16;

/// The baseline every kernel is compared with: `n` bare `next_u64` calls, folded so the
/// optimiser cannot drop them.
#[inline(never)]
pub fn bare_xoshiro(dice: &mut DiceStream, n: u64) -> u64 {
    let mut acc = 0u64;
    for _ in 0..n {
        acc ^= dice.next_u64();
    }
    acc
}

/// Prints the words (64-bit draws) one battle of `name` takes on average, counted outside
/// any timing by stepping a copy of the stream (`scenarios::words_per_battle`), so that
/// `overhead = cost of a battle / (words per battle × cost of one next_u64)` can be read
/// from the same run. Dice per battle: the `dice_count` example (docs/performance.md).
pub fn print_words(name: &str, battle: impl FnMut(&mut DiceStream)) {
    let words = battlelab_core::scenarios::words_per_battle(1 << 16, battle);
    println!("words/battle {words:.3}: {name}");
}

/// Prints the words one battle of a kernel in lanes draws, as runs fight them: `block`
/// fights a block of [`BATCH`] battles on a fresh block stream and returns the words it
/// reports (the lanes' keys, and the lanes' words to the block's last sweep), over 16
/// blocks; read against the bench's cost as [`print_words`]'s figures are.
pub fn print_lane_words(name: &str, mut block: impl FnMut(&mut DiceStream, u64) -> u64) {
    let mut dice = DiceStream::for_block(1, 0);
    let words: u64 = (0..16).map(|_| block(&mut dice, BATCH)).sum();
    let words = words as f64 / (16 * BATCH) as f64;
    println!("words/battle {words:.3}: {name}, in blocks of {BATCH}");
}
