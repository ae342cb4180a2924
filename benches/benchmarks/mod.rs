pub mod crt;
pub mod driver;
pub mod field;
pub mod frontier;
pub mod melee;
pub mod ratio;
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
