//! The ratio line the benches time, shared with the `dice_count` and `profile` examples and
//! the tests that count the dice a battle draws (re-exported by
//! [`crate::scenarios`]). Not part of the analysis API.

use crate::systems::ratio::battle::{
    self, parse_line, MinScore, Objective, RatioBattle, ReservePolicy,
};

/// A ratio battle from a quick line, `reserve_a` reserves for A, every A die at `mod_a`.
pub fn ratio_line(text: &str, reserve_a: usize, mod_a: i32, policy: ReservePolicy) -> RatioBattle {
    let (line, counts) = parse_line(text).expect("the bench line parses");
    let units = |prefix: &str, n: usize, modifier: i32| {
        (0..n)
            .map(|i| battle::Unit {
                name: format!("{prefix}{}", i + 1),
                modifier,
            })
            .collect::<Vec<_>>()
    };
    RatioBattle {
        units: [
            units("A", counts[0] + reserve_a, mod_a),
            units("B", counts[1], 0),
        ],
        line,
        reserves: [(counts[0]..counts[0] + reserve_a).collect(), vec![]],
        policy: [policy; 2],
        objective: Objective::CpDifference,
        min_score: MinScore::Floor(1),
        skirmish: false,
        escalation: None,
    }
}

/// The bench line: four 1 v 1 combats and a double.
pub const RATIO_LINE: &str = "1v1,1v1,1v1,1v1,2v1";
