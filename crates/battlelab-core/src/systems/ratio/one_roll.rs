//! The ratio system's one-roll table (`battlelab table ratio`): one battle from a quick
//! line, declared beside the ratio system.
//!
//! Why this module exists: a designer sketches a line ("1v1,1v1,2v1"), reserves and a
//! policy on the command line and reads the army results, casualty points and each
//! combat's states exactly, with the value of the reserves under every policy. The battle
//! is the ratio system's own ([`RatioCombat`]), simulated with its kernel by the engine's
//! driver, so `table ratio --trials N --seed S` counts what `run` counts for the same
//! battle and seed.

use serde_json::{json, Value};

use crate::dice::DiceStream;
use crate::engine::{Header, Outcome, Plan, System};
use crate::exact::Fraction;
use crate::one_roll::{
    invalid, outcome_rows, plan, signed, Checked, ExpectationRow, OneRollTable, Param, ParamKind,
    ParamValues, PreparedTable, Sampling, TableError, TableReport, TableSystem,
};
use crate::systems::ratio::battle::{
    self as ratio, ArmyResult, CombatState, MinScore, Objective, RatioBattle, RatioCombat,
    RatioDistribution, RatioHistogram, ReservePolicy, Unit,
};

/// Every one-roll table of the ratio system.
pub const TABLES: &[OneRollTable] = &[RATIO];

/// Most (state, face) steps the exact enumeration of `table ratio` may take.
pub const RATIO_EXACT_STEPS: usize = 50_000_000;

const fn reserve(
    name: &'static str,
    flag: &'static str,
    value_name: &'static str,
    help: &'static str,
) -> Param {
    Param {
        name,
        flag,
        value_name,
        kind: ParamKind::Int {
            min: 0,
            max: ratio::MAX_RESERVES as i64,
            checked: Checked::ByTable,
        },
        default: Some("0"),
        help,
        ..Param::BASE
    }
}

const fn modifier(
    name: &'static str,
    flag: &'static str,
    value_name: &'static str,
    help: &'static str,
) -> Param {
    Param {
        name,
        flag,
        value_name,
        kind: ParamKind::Int {
            min: -6,
            max: 6,
            checked: Checked::ByTable,
        },
        default: Some("0"),
        help,
        ..Param::BASE
    }
}

const RATIO: OneRollTable = OneRollTable {
    name: "ratio",
    about: "One ratio battle (docs/systems/ratio.md): a line of pairings, reserves and a policy; army results, casualty points and per-combat states, exactly",
    after_help: None,
    trial_unit: "battles",
    params: &[
        Param {
            name: "line",
            flag: "line",
            value_name: "LINE",
            kind: ParamKind::Text,
            required: true,
            help: "The line, combat by combat in the attacker's order of resolution: A units \"v\" B units, e.g. \"1v1,1v1,2v1\" (a 2 is a double; only the side with more units doubles)",
            ..Param::BASE
        },
        reserve(
            "reserve_a",
            "reserve-a",
            "RESERVE_A",
            "Units side A keeps in reserve (only the side with more units may keep reserves)",
        ),
        reserve("reserve_b", "reserve-b", "RESERVE_B", "Units side B keeps in reserve"),
        Param {
            name: "policy",
            flag: "policy",
            value_name: "POLICY",
            kind: ParamKind::Text,
            default: Some("rescue"),
            help: "How the side with reserves commits them: none, rescue, press or optimal",
            ..Param::BASE
        },
        Param {
            name: "objective",
            flag: "objective",
            value_name: "OBJECTIVE",
            kind: ParamKind::Text,
            default: Some("cp"),
            help: "What `optimal` maximises: cp (expected casualty-point difference) or win (P(win))",
            ..Param::BASE
        },
        modifier(
            "mod_a",
            "mod-a",
            "MOD_A",
            "Modifier to every die of side A (argument, quality, ambush, exhaustion), e.g. +1",
        ),
        modifier("mod_b", "mod-b", "MOD_B", "Modifier to every die of side B"),
        Param {
            name: "min_score",
            flag: "min-score",
            value_name: "MIN_SCORE",
            kind: ParamKind::Text,
            default: Some("1"),
            help: "[option] a modified total below this counts as this (1-6), or \"none\"",
            ..Param::BASE
        },
    ],
    example: &[
        ("line", "1v1,1v1,2v1"),
        ("reserve_a", "1"),
        ("policy", "rescue"),
        ("mod_a", "1"),
        ("mod_b", "-1"),
    ],
    prepare,
};

/// A ratio battle ready to tabulate: the battle, and for the side with reserves the same
/// battle under every other policy.
pub struct RatioTable {
    pub combat: RatioCombat,
    /// The side with reserves and the battle under every other policy (its own is
    /// `combat`), in [`ReservePolicy::ALL`] order.
    pub policies: Option<(usize, Vec<(ReservePolicy, RatioCombat)>)>,
    pub params: Value,
    pub title: String,
    pub sampling: Sampling,
}

fn prepare(values: &ParamValues, sampling: Sampling) -> Result<Box<dyn PreparedTable>, TableError> {
    let text = values.need_text("line")?;
    let policy_text = values.need_text("policy")?;
    let (line, counts) =
        ratio::parse_line(text).map_err(|m| invalid(format!("--line {text}"), m))?;
    let policy = ReservePolicy::parse(policy_text).ok_or_else(|| {
        invalid(
            format!("--policy {policy_text}"),
            format!(
                "unknown reserve policy; allowed: {}",
                ReservePolicy::NAMES.join(", ")
            ),
        )
    })?;
    let objective_text = values.need_text("objective")?;
    let objective = Objective::parse(objective_text).ok_or_else(|| {
        invalid(
            format!("--objective {objective_text}"),
            "allowed: cp (expected casualty-point difference), win (P(win))",
        )
    })?;
    let min_score = match values.need_text("min_score")? {
        "none" => MinScore::None,
        text => MinScore::Floor(
            text.parse()
                .ok()
                .filter(|m| (1..=6).contains(m))
                .ok_or_else(|| {
                    invalid(
                        format!("--min-score {text}"),
                        "the floor is a whole number 1 to 6, or none",
                    )
                })?,
        ),
    };
    let mods = [values.need_int("mod_a")?, values.need_int("mod_b")?];
    for (flag, m) in [("--mod-a", mods[0]), ("--mod-b", mods[1])] {
        if !(-6..=6).contains(&m) {
            return Err(invalid(
                format!("{flag} {m}"),
                "a modifier must be -6 to +6",
            ));
        }
    }
    let mods = mods.map(|m| m as i32);
    let reserves_given = [values.need_int("reserve_a")?, values.need_int("reserve_b")?];
    if reserves_given
        .iter()
        .any(|&r| r > ratio::MAX_RESERVES as i64)
    {
        return Err(invalid(
            "--reserve-a/--reserve-b",
            format!("at most {} reserves", ratio::MAX_RESERVES),
        ));
    }
    let reserves = reserves_given.map(|r| r as usize);
    let units = [0, 1].map(|s| {
        (0..counts[s] + reserves[s])
            .map(|i| Unit {
                name: format!("{}{}", ["A", "B"][s], i + 1),
                modifier: mods[s],
            })
            .collect::<Vec<_>>()
    });
    let battle = RatioBattle {
        units,
        line,
        reserves: [0, 1].map(|s| (counts[s]..counts[s] + reserves[s]).collect()),
        policy: [policy; 2],
        objective,
        min_score,
        skirmish: false,
        escalation: None,
    };
    let option_of = |field: &str| {
        if field.starts_with("reserve") {
            "--reserve-a/--reserve-b".to_string()
        } else if field.ends_with("policy") {
            format!("--policy {policy_text}")
        } else {
            format!("--line {text}")
        }
    };
    let compile =
        |b: RatioBattle| RatioCombat::new(b).map_err(|e| invalid(option_of(&e.field), e.message));
    let combat = compile(battle.clone())?;
    let reserve_side = (0..2).find(|&s| reserves[s] > 0);
    let policies = match reserve_side {
        Some(side) => Some((
            side,
            ReservePolicy::ALL
                .into_iter()
                .filter(|&p| p != battle.policy[side])
                .map(|p| {
                    let mut b = battle.clone();
                    b.policy[side] = p;
                    Ok((p, compile(b)?))
                })
                .collect::<Result<Vec<_>, TableError>>()?,
        )),
        None => None,
    };
    let params = json!({
        "line": text,
        "reserve_a": reserves[0],
        "reserve_b": reserves[1],
        "policy": policy.name(),
        "objective": objective.name(),
        "mod_a": mods[0],
        "mod_b": mods[1],
        "min_score": min_score.to_string(),
    });
    let title = format!(
        "Ratio battle — line {text}{}, A {} / B {} on every die, min score {}",
        reserve_side.map_or(String::new(), |s| format!(
            ", {} reserve(s) for {} ({})",
            reserves[s],
            ["A", "B"][s],
            policy.name()
        )),
        signed(mods[0]),
        signed(mods[1]),
        min_score
    );
    Ok(Box::new(RatioTable {
        combat,
        policies,
        params,
        title,
        sampling,
    }))
}

impl System for RatioTable {
    type Counts = RatioHistogram;
    type Exact = RatioDistribution;

    fn header(&self) -> Header<'_> {
        Header {
            name: "ratio",
            system: "ratio",
            seed: self.sampling.seed,
            trials: self.sampling.trials.unwrap_or(0),
            precision: None,
            tables: crate::analysis::TablesOptions::default(),
        }
    }

    fn plan(&self) -> Plan {
        plan(&["battle"], "battles")
    }

    /// As the ratio system's runs count: by signature where the line allows, folded in
    /// `finish`.
    fn empty(&self, _run: usize) -> RatioHistogram {
        RatioHistogram::for_signatures(&self.combat)
    }

    fn simulate(&self, _run: usize, dice: &mut DiceStream, n: u64, h: &mut RatioHistogram) {
        self.combat.simulate_block(dice, n, h);
    }

    fn finish(&self, _run: usize, h: &mut RatioHistogram) {
        h.fold_signatures(&self.combat);
    }

    fn exact(&self, _run: usize) -> Option<RatioDistribution> {
        self.combat.distribution(RATIO_EXACT_STEPS)
    }

    fn outcomes(
        &self,
        _run: usize,
        h: &RatioHistogram,
        exact: Option<&RatioDistribution>,
    ) -> Vec<Outcome> {
        // The open battle's results (a table's battle never escalates).
        (0..ArmyResult::LABELS.len())
            .map(|i| Outcome {
                name: ArmyResult::LABELS[i].to_string(),
                count: h.result[i],
                exact: exact.map(|d| d.p_result(i)),
                fraction: exact.map(|d| Fraction::new(d.result[i], d.total).to_string()),
            })
            .collect()
    }

    fn distributions(
        &self,
        _run: usize,
        _h: &RatioHistogram,
        _exact: Option<&RatioDistribution>,
    ) -> Vec<crate::engine::Distribution> {
        Vec::new()
    }

    fn rules(&self) -> Value {
        json!(format!("{:?}", self.combat.battle()))
    }

    fn trials_counted(&self, _run: usize, h: &RatioHistogram) -> u128 {
        crate::sim::total(&h.result)
    }
}

impl TableSystem for RatioTable {
    fn sampling(&self) -> Sampling {
        self.sampling
    }

    /// The army result exactly (and simulated with trials), and as expectations: casualty
    /// points, exhaustion, reserves used, how often the min-score floor decides a combat,
    /// each combat's states, and the value of reserves under every policy.
    fn report(
        &self,
        exact: Vec<Option<RatioDistribution>>,
        counts: Option<Vec<RatioHistogram>>,
    ) -> Result<TableReport, TableError> {
        let combat = &self.combat;
        let exact = exact.into_iter().next().flatten();
        let trials = self.sampling.trials;
        if exact.is_none() && trials.is_none() {
            return Err(invalid(
                "--line",
                format!(
                    "{} dice and {} reserves are too many to enumerate exactly; add --trials N to simulate",
                    combat.line_dice(),
                    combat.reserve_count()
                ),
            ));
        }
        let counts = counts
            .and_then(|c| c.into_iter().next())
            .unwrap_or_else(|| self.empty_finished(0));
        let outcomes = outcome_rows(self.outcomes(0, &counts, exact.as_ref()), trials);
        let fraction = |count: u128, total: u128| Fraction::new(count, total);
        let mut expectations = Vec::new();
        if let Some(d) = &exact {
            let mut add =
                |name: String, value: Fraction| expectations.push(ExpectationRow::of(name, value));
            let t = d.total;
            let sum = |idx: &mut dyn Iterator<Item = usize>| idx.map(|i| d.result[i]).sum::<u128>();
            add("P(A wins)".into(), fraction(d.wins(0), t));
            add("P(B wins)".into(), fraction(d.wins(1), t));
            add("P(draw)".into(), fraction(d.result[ArmyResult::DRAW], t));
            add(
                "CP of A".into(),
                fraction(RatioDistribution::weighted(&d.cp[0]), t),
            );
            add(
                "CP of B".into(),
                fraction(RatioDistribution::weighted(&d.cp[1]), t),
            );
            add(
                "both -1 exhaustion next turn".into(),
                fraction(
                    sum(&mut (0..ArmyResult::COUNT).filter(|&i| ArmyResult::exhausts(i))),
                    t,
                ),
            );
            add(
                "reserves used".into(),
                fraction(RatioDistribution::weighted(&d.reserves_used), t),
            );
            add(
                "P(min score decides a combat)".into(),
                fraction(t - d.floor_decided[0], t),
            );
            for (c, states) in d.combat_states.iter().enumerate() {
                let p = &combat.battle().line[c];
                let names = |s: usize, list: &[usize]| {
                    list.iter()
                        .map(|&u| combat.battle().units[s][u].name.as_str())
                        .collect::<Vec<_>>()
                        .join("+")
                };
                for (s, &count) in states.iter().enumerate() {
                    if count > 0 {
                        add(
                            format!(
                                "combat {} ({} vs {}): {}",
                                c + 1,
                                names(0, &p.a),
                                names(1, &p.b),
                                CombatState::LABELS[s]
                            ),
                            fraction(count, t),
                        );
                    }
                }
            }
            if let Some((side, others)) = &self.policies {
                for policy in ReservePolicy::ALL {
                    // The battle's own policy was enumerated above; the others here.
                    let pd = if policy == combat.battle().policy[*side] {
                        exact.clone()
                    } else {
                        others
                            .iter()
                            .find(|(p, _)| *p == policy)
                            .and_then(|(_, c)| c.distribution(RATIO_EXACT_STEPS))
                    };
                    if let Some(pd) = pd {
                        let side_name = ["A", "B"][*side];
                        let other = ["B", "A"][*side];
                        expectations.push(ExpectationRow::of(
                            format!("{}: P({side_name} wins)", policy.name()),
                            fraction(pd.wins(*side), pd.total),
                        ));
                        let own = RatioDistribution::weighted(&pd.cp[*side]);
                        let enemy = RatioDistribution::weighted(&pd.cp[1 - *side]);
                        let (sign, magnitude) = if enemy >= own {
                            ("", enemy - own)
                        } else {
                            ("-", own - enemy)
                        };
                        let f = fraction(magnitude, pd.total);
                        expectations.push(ExpectationRow {
                            name: format!("{}: CP {other} - CP {side_name}", policy.name()),
                            value: if sign.is_empty() {
                                f.to_f64()
                            } else {
                                -f.to_f64()
                            },
                            fraction: format!("{sign}{f}"),
                        });
                    }
                }
            }
        }
        Ok(TableReport {
            system: "ratio".into(),
            title: self.title.clone(),
            params: self.params.clone(),
            trials,
            outcomes,
            expectations_heading: "expected per battle".into(),
            expectations,
            sections: Vec::new(),
        })
    }
}
