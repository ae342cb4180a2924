//! The shipped rules files' games (`rules/*.toml`) against independent exact oracles
//! (`rules_oracle/`, written from the games' definitions alone): every outcome and every
//! metric's distribution, as fractions, equal — decided exactly, with no tolerance.

mod rules_oracle;

use std::path::PathBuf;

use battlelab_core::engine::System;
use battlelab_core::systems::rules_file::{RulesExact, RulesStudy};
use num_rational::BigRational;
use num_traits::Zero;
use rules_oracle::{classic_crt, pool, risk, Side};

/// An analysis at the repository's `analyses/`, so its `rules = "../rules/…"` resolves.
fn study(text: &str) -> RulesStudy {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../analyses/oracle_test.toml");
    RulesStudy::parse(&path, text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn exact_of(s: &RulesStudy, run: usize) -> RulesExact {
    s.exact(run).expect("an exact run")
}

/// The run's probability of each value of `metric` (from 0), zeros dropped.
fn metric(s: &RulesStudy, e: &RulesExact, run: usize, metric: &str) -> Vec<(u32, BigRational)> {
    let game = s.game(run);
    let m = game
        .metrics
        .iter()
        .position(|m| m.0 == metric)
        .expect("a metric");
    let lo = game.metrics[m].2 .0;
    e.fractions.as_ref().expect("fractions").metrics[m]
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_zero())
        .map(|(i, p)| ((i as i64 + lo) as u32, p.clone()))
        .collect()
}

fn outcome(s: &RulesStudy, e: &RulesExact, run: usize, name: &str) -> BigRational {
    let i = s
        .game(run)
        .outcomes
        .iter()
        .position(|o| o.0 == name)
        .unwrap_or_else(|| panic!("no outcome {name}"));
    e.fractions.as_ref().expect("fractions").outcomes[i].clone()
}

fn nonzero<K: Copy + Into<u32>>(
    map: &std::collections::BTreeMap<K, BigRational>,
) -> Vec<(u32, BigRational)> {
    map.iter()
        .filter(|(_, p)| !p.is_zero())
        .map(|(k, p)| ((*k).into(), p.clone()))
        .collect()
}

#[test]
fn the_classic_crt_equals_its_oracle_on_every_odds_terrain_leader_and_supply() {
    let s = study(
        "system = \"rules\"\nrules = \"../rules/classic_crt.toml\"\n[sides.defender]\nstrength = 3\n[sides.attacker]\nstrength = 1\n\
         [sweep]\nattacker.strength = { from = 1, to = 20 }\nattacker.leader = [0, 1, 2]\ndefender.leader = [0, 2]\nattacker.out_of_supply = [0, 1]\nterrain = [0, 1, 2]\n",
    );
    assert_eq!(s.runs.len(), 20 * 3 * 2 * 2 * 3);
    for (run, r) in s.runs.iter().enumerate() {
        let get = |n: &str| r.settings.iter().find(|x| x.0 == n).unwrap().1;
        let o = classic_crt(
            get("attacker.strength") as u32,
            3,
            get("attacker.leader") as i32,
            get("defender.leader") as i32,
            get("attacker.out_of_supply") == 1,
            get("terrain") as u32,
        );
        let e = exact_of(&s, run);
        for (code, p) in &o.result {
            assert_eq!(outcome(&s, &e, run, code), *p, "{code} at {:?}", r.settings);
        }
        assert_eq!(
            metric(&s, &e, run, "strength_lost_attacker"),
            nonzero(&o.lost_attacker),
            "{:?}",
            r.settings
        );
        assert_eq!(
            metric(&s, &e, run, "strength_lost_defender"),
            nonzero(&o.lost_defender),
            "{:?}",
            r.settings
        );
    }
}

#[test]
fn risk_equals_its_oracle_up_to_thirty_armies() {
    let s = study(
        "system = \"rules\"\nrules = \"../rules/risk.toml\"\n[sides.attacker]\narmies = 2\n[sides.defender]\narmies = 1\n\
         [sweep]\nattacker.armies = [1, 2, 3, 4, 5, 7, 10, 30]\ndefender.armies = [1, 2, 3, 6, 10, 30]\n",
    );
    for (run, r) in s.runs.iter().enumerate() {
        let get = |n: &str| r.settings.iter().find(|x| x.0 == n).unwrap().1 as u32;
        let (a, d) = (get("attacker.armies"), get("defender.armies"));
        let e = exact_of(&s, run);
        if a == 1 {
            assert_eq!(
                outcome(&s, &e, run, "defender holds"),
                BigRational::from_integer(1.into())
            );
            continue;
        }
        let o = risk(a, d);
        assert_eq!(
            outcome(&s, &e, run, "attacker wins"),
            o.attacker_wins,
            "{a} v {d}"
        );
        assert_eq!(
            metric(&s, &e, run, "armies_left_attacker"),
            nonzero(&o.left_attacker),
            "{a} v {d}"
        );
        assert_eq!(
            metric(&s, &e, run, "armies_left_defender"),
            nonzero(&o.left_defender),
            "{a} v {d}"
        );
    }
}

#[test]
fn the_dice_pool_equals_its_oracle_with_and_without_retreat() {
    let cases: [([u32; 3], [u32; 3]); 4] = [
        ([1, 0, 0], [1, 0, 0]),
        ([2, 0, 0], [0, 0, 1]),
        ([4, 3, 3], [5, 2, 3]),
        ([3, 1, 2], [2, 2, 1]),
    ];
    for (att, def) in cases {
        let s = study(&format!(
            "system = \"rules\"\nrules = \"../rules/dice_pool.toml\"\n[sides.attacker]\ninfantry = {}\nartillery = {}\ntank = {}\n[sides.defender]\ninfantry = {}\nartillery = {}\ntank = {}\n[sweep]\nretreat_from = [0, 1, 2, 3]\n",
            att[0], att[1], att[2], def[0], def[1], def[2]
        ));
        for (run, r) in s.runs.iter().enumerate() {
            let from = r.settings.iter().find(|x| x.0 == "retreat_from").unwrap().1 as u32;
            let o = pool(att, def, (from > 0).then_some(from));
            let e = exact_of(&s, run);
            for (name, p) in &o.outcome {
                assert_eq!(
                    outcome(&s, &e, run, name),
                    *p,
                    "{name}: {att:?} v {def:?} retreat from {from}"
                );
            }
            for (k, unit) in ["infantry", "artillery", "tank"].iter().enumerate() {
                for (side, key) in [(Side::Attacker, "attacker"), (Side::Defender, "defender")] {
                    let want = nonzero(&o.left_of(side, k));
                    assert_eq!(
                        metric(&s, &e, run, &format!("{unit}_left_{key}")),
                        want,
                        "{unit} {key}: {att:?} v {def:?} retreat from {from}"
                    );
                }
            }
        }
    }
}

/// Twenty units of each type a side, and no round limit: a round's weights outgrow 128
/// bits (60 dice a side), so there are no exact results — but whether the battle always
/// ends is still checked, on the same chain with every way weighing 1, and the battle is
/// simulated by the step interpreter rather than refused.
#[test]
fn a_pool_too_heavy_for_exact_is_checked_to_end_and_simulated() {
    use battlelab_core::systems::rules_file::Form;
    let s = study(
        "system = \"rules\"\nrules = \"../rules/dice_pool.toml\"\ntrials = 10\n\
         [sides.attacker]\ninfantry = 20\nartillery = 20\ntank = 20\n\
         [sides.defender]\ninfantry = 20\nartillery = 20\ntank = 20\n",
    );
    assert!(
        matches!(&s.runs[0].form, Form::Steps(why) if why.contains("128 bits")),
        "{:?}",
        s.runs[0].form
    );
    assert!(
        s.notices.iter().any(|n| n.contains("step interpreter")),
        "{:?}",
        s.notices
    );
    // The same weights in a battle that cannot end: refused at the rules file's end.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("volley.rules.toml"),
        "name = \"Volleys\"\nsides = [\"attacker\", \"defender\"]\n\
         [counters]\nstrength = { min = 0, max = 40 }\n\
         [scratch]\nhits = { min = 0, max = 40 }\n\
         [battle]\nend = \"attacker.strength == 0 or defender.strength == 0\"\n\
         [[phases]]\nname = \"volley\"\neffects = []\n\
         [[phases.count]]\ninto = \"hits\"\ndice = \"attacker.strength\"\nhits_at_most = \"3\"\n\
         [[phases.count]]\ninto = \"hits\"\ndice = \"defender.strength\"\nhits_at_most = \"3\"\n\
         [[outcomes]]\nname = \"attacker wins\"\nwhen = \"defender.strength == 0\"\n\
         [[outcomes]]\nname = \"no decision\"\n",
    )
    .unwrap();
    let analysis = dir.path().join("volley.toml");
    let text = "system = \"rules\"\nrules = \"volley.rules.toml\"\ntrials = 10\n\
                [sides.attacker]\nstrength = 40\n[sides.defender]\nstrength = 40\n";
    let e = RulesStudy::parse(&analysis, text).expect_err("a battle that cannot end");
    let rules = dir.path().join("volley.rules.toml");
    assert!(
        e.to_string().contains(&format!(
            "{}, line 8: field `battle.end`: with the settings of volley.toml, a battle can go on for ever",
            rules.display()
        )),
        "{e}"
    );
}
