//! The rules-file battles the benches time, from the rules files shipped with the tool
//! (by name, so no file is read): the classic CRT's one roll, Risk 30 v 30, the dice pool
//! with ten units a side of three types, and the naval engagement 6 v 4 that
//! `systems::naval_engagement::scenarios::naval` fights with the built-in kernel, and the
//! field battle 12 v 8 of `systems::field::scenarios::field_battle`. Not part
//! of the analysis API.

use std::path::Path;

use crate::systems::rules_file::RulesStudy;

fn study(text: &str) -> RulesStudy {
    RulesStudy::parse(Path::new("bench.toml"), text)
        .expect("a shipped rules file and a valid analysis")
}

/// One roll on the classic CRT: 6 against 3 (2:1), attacker leader 1, in woods.
pub fn classic_crt() -> RulesStudy {
    study("system = \"rules\"\nrules = \"classic_crt\"\n[sides.attacker]\nstrength = 6\nleader = 1\n[sides.defender]\nstrength = 3\n[parameters]\nterrain = 1\n")
}

/// Risk-style opposed dice, 30 armies against 30.
pub fn risk_30_v_30() -> RulesStudy {
    study("system = \"rules\"\nrules = \"risk\"\n[sides.attacker]\narmies = 30\n[sides.defender]\narmies = 30\n")
}

/// The dice pool: 4 infantry, 3 artillery, 3 tanks against 5, 2, 3; no retreat.
pub fn dice_pool_10_v_10() -> RulesStudy {
    study("system = \"rules\"\nrules = \"dice_pool\"\n[sides.attacker]\ninfantry = 4\nartillery = 3\ntank = 3\n[sides.defender]\ninfantry = 5\nartillery = 2\ntank = 3\n")
}

/// The naval engagement of `naval_engagement::scenarios::naval`, from its rules file: 6
/// against 4 NSP, Major morale, leaders 1, both pursue, at sea, at most 20 rounds.
pub fn naval_engagement_6_v_4() -> RulesStudy {
    study("system = \"rules\"\nrules = \"naval_engagement\"\n[sides.a]\nnsp = 6\nmorale = 2\nleader = 1\n[sides.b]\nnsp = 4\nmorale = 2\nleader = 1\n")
}

/// The field battle of `field::scenarios::field_battle`, from its rules file: 12 against
/// 8 SP, Major morale, leaders 1; A mixes charge 2, envelop 1, bombard 1, B skirmish 2,
/// square 1, refuse 1; the printed rules.
pub fn field_12_v_8() -> RulesStudy {
    study("system = \"rules\"\nrules = \"field\"\n[sides.a]\nsp = 12\nmorale = 2\nleader = 1\ntactic = { charge = 2, envelop = 1, bombard = 1 }\n[sides.b]\nsp = 8\nmorale = 2\nleader = 1\ntactic = { skirmish = 2, square = 1, refuse = 1 }\n")
}
