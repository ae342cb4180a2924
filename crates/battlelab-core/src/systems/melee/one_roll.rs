//! The melee system's one-roll table (`battlelab table melee`): one engagement from quick
//! profiles, declared beside the melee system.
//!
//! Why this module exists: a designer writes two units on the command line, in the
//! analysis file's words (`models=20 frontage=5 skill=4`), and reads the first combat
//! phase exactly (hits, wounds, combat score, win/draw/lose, break tests) and the whole
//! engagement over repeated phases. Its simulation is a plan of two runs through the
//! engine's driver: the first phase alone, and whole engagements with the melee system's
//! own kernel — so `table melee --trials N --seed S` counts the engagements `run` counts
//! for the same engagement and seed (both runs draw block `b` from the seed's block `b`,
//! as every run of a plan does).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::dice::DiceStream;
use crate::engine::{Header, Outcome, Plan, System};
use crate::exact::BigFraction;
use crate::one_roll::{
    invalid, outcome_row, outcome_rows, plan, Checked, ExpectationRow, OneRollTable, OutcomeRow,
    Param, ParamKind, ParamValues, PreparedTable, Sampling, TableError, TableReport, TableSection,
    TableSystem,
};
use crate::sim::Histogram;
use crate::systems::melee::engagement::{
    BreakDice, Engagement, EngagementEnd, EngagementHistogram, EngagementOdds, Facing, MeleeCombat,
    PhaseHistogram, PhaseOdds, UnitProfile, MAX_EXACT_PHASE_DICE, MAX_ROUND_LIMIT,
};

/// Every one-roll table of the melee system.
pub const TABLES: &[OneRollTable] = &[MELEE];

const MELEE_AFTER_HELP: &str = "\
A profile is key=value pairs, in the analysis file's words ([profiles.<name>]): models,
frontage (models wide), attacks, skill, power, defense, discipline, wounds (per model),
rank_bonus (ranks, full-ranks, none), rank_bonus_cap. The older spellings wide, rank-bonus
and rank-cap are accepted too. Ranks follow from models and frontage. Keys left out keep a
default unit: models=20 frontage=5 attacks=1 skill=3 power=3 defense=3 discipline=7 wounds=1
rank_bonus=ranks rank_bonus_cap=3 (so a unit of fewer than 5 models needs frontage=…).

Example: battlelab table melee --a \"models=20 frontage=5 skill=4\" --b \"models=15 frontage=5 defense=4\" --b-flank \"models=5 frontage=5\"

Readings of the engagement geometry: docs/systems/melee.md.";

const fn unit(
    name: &'static str,
    flag: &'static str,
    value_name: &'static str,
    help: &'static str,
) -> Param {
    Param {
        name,
        flag,
        value_name,
        kind: ParamKind::Text,
        help,
        ..Param::BASE
    }
}

const MELEE: OneRollTable = OneRollTable {
    name: "melee",
    about: "One melee engagement (docs/systems/melee.md): one combat phase exactly (hits, wounds, combat score, win/draw/lose, break tests) and the whole engagement over repeated phases",
    after_help: Some(MELEE_AFTER_HELP),
    trial_unit: "first phases and as many engagements",
    params: &[
        Param {
            required: true,
            ..unit(
                "a",
                "a",
                "A",
                "Side A's unit, the one engaged, e.g. \"models=20 frontage=5 attacks=1 skill=3 power=3 defense=3 discipline=7\"",
            )
        },
        unit("b", "b", "B", "Side B's unit engaging A's front"),
        Param {
            kind: ParamKind::TextList,
            ..unit(
                "b_flank",
                "b-flank",
                "B_FLANK",
                "A side-B unit engaging A's flank (give twice for both flanks)",
            )
        },
        unit("b_rear", "b-rear", "B_REAR", "A side-B unit engaging A's rear"),
        Param {
            default: Some("2d6"),
            ..unit(
                "break_dice",
                "break-dice",
                "BREAK_DICE",
                "[option] dice of the break test: 1d6, 2d6 or 3d6",
            )
        },
        Param {
            name: "round_limit",
            flag: "round-limit",
            value_name: "ROUND_LIMIT",
            kind: ParamKind::Int {
                min: 1,
                max: MAX_ROUND_LIMIT as i64,
                checked: Checked::ByTable,
            },
            default: Some("6"),
            help: "[option] combat phases before the engagement is called off",
            ..Param::BASE
        },
    ],
    example: &[
        ("a", "models=20 frontage=5 skill=4"),
        ("b", "models=15 frontage=5 defense=4"),
        ("b_flank", "models=5 frontage=5"),
    ],
    prepare,
};

fn prepare(values: &ParamValues, sampling: Sampling) -> Result<Box<dyn PreparedTable>, TableError> {
    let parse = |flag: &str, text: &str| {
        UnitProfile::parse_quick(text).map_err(|m| invalid(format!("{flag} \"{text}\""), m))
    };
    let a_text = values.need_text("a")?;
    let a = parse("--a", a_text)?;
    let mut b = Vec::new();
    let mut flags = Vec::new();
    if let Some(text) = values.text("b") {
        b.push((Facing::Front, parse("--b", text)?));
        flags.push(format!("--b \"{text}\""));
    }
    for text in values.texts("b_flank") {
        b.push((Facing::Flank, parse("--b-flank", text)?));
        flags.push(format!("--b-flank \"{text}\""));
    }
    if let Some(text) = values.text("b_rear") {
        b.push((Facing::Rear, parse("--b-rear", text)?));
        flags.push(format!("--b-rear \"{text}\""));
    }
    if b.is_empty() {
        return Err(invalid(
            "--b",
            "side B has no unit: give --b (front), --b-flank or --b-rear",
        ));
    }
    let break_text = values.need_text("break_dice")?;
    let break_dice = BreakDice::parse(break_text).ok_or_else(|| {
        invalid(
            format!("--break-dice {break_text}"),
            format!("allowed: {}", BreakDice::NAMES),
        )
    })?;
    let round_limit = values.need_int("round_limit")? as u32;
    let engagement = Engagement {
        a,
        b,
        break_dice,
        round_limit,
    };
    let combat = MeleeCombat::new(engagement.clone()).map_err(|e| {
        let option = match e.field.split('.').next() {
            Some("a") => format!("--a \"{a_text}\""),
            Some("round_limit") => format!("--round-limit {round_limit}"),
            _ if flags.len() == 1 => flags[0].clone(),
            _ => "--b/--b-flank/--b-rear".to_string(),
        };
        let hint = if e.field.ends_with(".frontage") {
            " (frontage is 5 unless given)"
        } else {
            ""
        };
        invalid(option, format!("{}{hint} ({})", e.message, e.field))
    })?;
    if !combat.exact_phase_fits() && sampling.trials.is_none() {
        let dice = combat.first_phase_dice();
        return Err(invalid(
            "--a/--b",
            format!(
                "{} attack dice in the first phase are too many for exact fractions (at most {}); add --trials N to simulate",
                dice[0] + dice[1],
                MAX_EXACT_PHASE_DICE
            ),
        ));
    }
    let params = json!({
        "a": engagement.a.quick(),
        "b": engagement.b.iter().map(|(f, u)| json!({"facing": f.name(), "unit": u.quick()})).collect::<Vec<_>>(),
        "break_dice": break_dice.name(),
        "round_limit": round_limit,
    });
    let title = format!(
        "Melee — A [{}] engaged by {}; break test {}, up to {} phases",
        engagement.a.quick(),
        engagement
            .b
            .iter()
            .map(|(f, u)| format!("{} [{}]", f.name(), u.quick()))
            .collect::<Vec<_>>()
            .join(", "),
        break_dice.name(),
        round_limit
    );
    Ok(Box::new(MeleeTable {
        combat,
        params,
        title,
        sampling,
    }))
}

/// A melee engagement ready to tabulate. Its plan has two runs: the first phase
/// ([`PHASE`]) and whole engagements ([`ENGAGEMENT`]).
pub struct MeleeTable {
    pub combat: MeleeCombat,
    pub params: Value,
    pub title: String,
    pub sampling: Sampling,
}

/// The run of first phases.
pub const PHASE: usize = 0;
/// The run of whole engagements.
pub const ENGAGEMENT: usize = 1;

/// Counts of either run: the first phase's (run [`PHASE`]) or the engagements' (run
/// [`ENGAGEMENT`]); the other stays empty.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeleeTableCounts {
    pub phases: PhaseHistogram,
    pub engagements: EngagementHistogram,
}

impl Histogram for MeleeTableCounts {
    fn merge(&mut self, other: Self) {
        self.phases.merge(other.phases);
        self.engagements.merge(other.engagements);
    }
}

/// Either run's exact result.
pub enum MeleeTableExact {
    /// The first phase in fractions (where it fits, [`MeleeCombat::exact_phase_fits`]).
    Phase(Box<PhaseOdds>),
    /// The whole engagement by enumeration of every state (where it fits the budget).
    Engagement(EngagementOdds),
}

impl System for MeleeTable {
    type Counts = MeleeTableCounts;
    type Exact = MeleeTableExact;

    fn header(&self) -> Header<'_> {
        Header {
            name: "melee",
            system: "melee",
            seed: self.sampling.seed,
            trials: self.sampling.trials.unwrap_or(0),
            precision: None,
            tables: crate::analysis::TablesOptions::default(),
        }
    }

    fn plan(&self) -> Plan {
        plan(&["first phase", "engagement"], "engagements")
    }

    fn empty(&self, _run: usize) -> MeleeTableCounts {
        MeleeTableCounts {
            phases: self.combat.empty_phase_histogram(),
            engagements: self.combat.empty_engagement_histogram(),
        }
    }

    fn simulate(&self, run: usize, dice: &mut DiceStream, n: u64, counts: &mut MeleeTableCounts) {
        if run == PHASE {
            self.combat.phase_block(dice, n, &mut counts.phases);
        } else {
            // As the melee system's runs simulate (`systems::melee`).
            self.combat
                .engagement_block(dice, n, &mut counts.engagements);
        }
    }

    fn exact(&self, run: usize) -> Option<MeleeTableExact> {
        let combat = &self.combat;
        if run == PHASE {
            combat
                .exact_phase_fits()
                .then(|| MeleeTableExact::Phase(Box::new(combat.phase_odds(&combat.fresh_state()))))
        } else {
            combat.engagement_odds().map(MeleeTableExact::Engagement)
        }
    }

    fn outcomes(
        &self,
        run: usize,
        counts: &MeleeTableCounts,
        exact: Option<&MeleeTableExact>,
    ) -> Vec<Outcome> {
        if run == PHASE {
            let odds = match exact {
                Some(MeleeTableExact::Phase(odds)) => Some(&**odds),
                _ => None,
            };
            phase_outcomes(odds, &counts.phases)
        } else {
            let odds = match exact {
                Some(MeleeTableExact::Engagement(odds)) => Some(odds),
                _ => None,
            };
            EngagementEnd::ALL
                .iter()
                .map(|&end| Outcome {
                    name: end.name().to_string(),
                    count: counts.engagements.total(end),
                    exact: odds.map(|o| o.ends.iter().map(|e| e[end.index()]).sum::<f64>()),
                    fraction: None,
                })
                .collect()
        }
    }

    fn distributions(
        &self,
        _run: usize,
        _counts: &MeleeTableCounts,
        _exact: Option<&MeleeTableExact>,
    ) -> Vec<crate::engine::Distribution> {
        Vec::new()
    }

    fn rules(&self) -> Value {
        json!(format!("{:?}", self.combat.engagement()))
    }

    fn trials_counted(&self, run: usize, counts: &MeleeTableCounts) -> u128 {
        if run == PHASE {
            crate::sim::total(&counts.phases.result)
        } else {
            crate::sim::total(&counts.engagements.ends)
        }
    }
}

/// The first phase's outcomes: A wins, draw, B wins; exact in fractions where computed.
fn phase_outcomes(odds: Option<&PhaseOdds>, h: &PhaseHistogram) -> Vec<Outcome> {
    [
        ("A wins the phase", odds.map(|o| &o.a_wins), h.result[0]),
        ("draw", odds.map(|o| &o.draw), h.result[1]),
        ("B wins the phase", odds.map(|o| &o.b_wins), h.result[2]),
    ]
    .into_iter()
    .map(|(name, value, count)| Outcome {
        name: name.to_string(),
        count,
        exact: value.map(BigFraction::to_f64),
        fraction: value.map(BigFraction::to_string),
    })
    .collect()
}

/// One exact first-phase distribution: short row label, title, exact odds, counts.
type DistributionSection<'a> = (
    &'a str,
    &'a str,
    Option<&'a Vec<BigFraction>>,
    Option<&'a Vec<u64>>,
);

impl TableSystem for MeleeTable {
    fn sampling(&self) -> Sampling {
        self.sampling
    }

    /// One combat phase exactly (hits, wounds, combat score, win/draw/lose, break
    /// tests), and the whole engagement by exact enumeration where it fits, with Monte
    /// Carlo estimates of both when simulated.
    fn report(
        &self,
        exact: Vec<Option<MeleeTableExact>>,
        counts: Option<Vec<MeleeTableCounts>>,
    ) -> Result<TableReport, TableError> {
        let combat = &self.combat;
        let trials = self.sampling.trials;
        let mut exact = exact.into_iter();
        let odds = match exact.next().flatten() {
            Some(MeleeTableExact::Phase(odds)) => Some(*odds),
            _ => None,
        };
        let exact_engagement = match exact.next().flatten() {
            Some(MeleeTableExact::Engagement(odds)) => Some(odds),
            _ => None,
        };
        let (phases, engagements) = match counts {
            Some(runs) => {
                let mut runs = runs.into_iter();
                let phases = runs.next().map(|c| c.phases);
                let engagements = runs.next().map(|c| c.engagements);
                (phases, engagements)
            }
            None => (None, None),
        };
        let n = trials.unwrap_or(1);
        let outcomes = match &phases {
            Some(h) => phase_outcomes(odds.as_ref(), h),
            None => phase_outcomes(odds.as_ref(), &combat.empty_phase_histogram()),
        };
        let outcomes = outcome_rows(outcomes, trials);
        let row = |outcome: String, value: Option<&BigFraction>, count: Option<(u64, u64)>| {
            outcome_row(
                outcome,
                value.map(BigFraction::to_f64),
                value.map(BigFraction::to_string),
                count,
            )
        };
        let names = melee_unit_names(combat);
        let mut expectations = Vec::new();
        let mut sections = Vec::new();
        if let Some(odds) = &odds {
            let mut expect = |name: String, value: &BigFraction| {
                expectations.push(ExpectationRow {
                    name,
                    value: value.to_f64(),
                    fraction: value.to_string(),
                })
            };
            for side in 0..2 {
                let s = ["A", "B"][side];
                expect(format!("hits by {s}"), &odds.expected_hits[side]);
                expect(
                    format!("wounds by {s} (before the cap)"),
                    &odds.expected_wounds[side],
                );
            }
            for (unit, name) in names.iter().enumerate() {
                expect(format!("P({name} flees)"), &odds.flees[unit]);
                expect(format!("P({name} destroyed)"), &odds.destroyed[unit]);
            }
        }
        for side in 0..2 {
            let s = ["A", "B"][side];
            let exact = |pick: fn(&PhaseOdds, usize) -> &Vec<BigFraction>| {
                odds.as_ref().map(|o| pick(o, side))
            };
            let lists: [DistributionSection; 3] = [
                (
                    "hits",
                    "hits",
                    exact(|o, s| &o.hits[s]),
                    phases.as_ref().map(|h| &h.hits[side]),
                ),
                (
                    "wounds",
                    "wounds (saves failed, before the cap)",
                    exact(|o, s| &o.wounds[s]),
                    phases.as_ref().map(|h| &h.wounds[side]),
                ),
                (
                    "score",
                    "combat score",
                    exact(|o, s| &o.score[s]),
                    phases.as_ref().map(|h| &h.score[side]),
                ),
            ];
            for (short, what, dist, counts) in lists {
                let values = dist.map_or(counts.map_or(0, Vec::len), Vec::len);
                let rows = (0..values)
                    .map(|k| {
                        let count = counts.map(|c| (c.get(k).copied().unwrap_or(0), n));
                        row(format!("{s} {short} = {k}"), dist.map(|d| &d[k]), count)
                    })
                    .collect();
                sections.push(TableSection {
                    title: format!("phase 1: {what} of side {s}"),
                    partition: true,
                    exact: dist.is_some(),
                    rows,
                });
            }
        }
        let limit = combat.engagement().round_limit;
        let engagement_count =
            |pick: &dyn Fn(&EngagementHistogram) -> u64| engagements.as_ref().map(|h| (pick(h), n));
        let rows = EngagementEnd::ALL
            .iter()
            .map(|&end| {
                let exact = exact_engagement
                    .as_ref()
                    .map(|o| o.ends.iter().map(|e| e[end.index()]).sum::<f64>());
                outcome_row(
                    end.name().to_string(),
                    exact,
                    None,
                    engagement_count(&|h| h.total(end)),
                )
            })
            .collect();
        let how = match (exact_engagement.is_some(), trials.is_some()) {
            (true, _) => "exact by enumeration of every state",
            (false, true) => "too many states to enumerate: simulated only",
            (false, false) => "too many states to enumerate: add --trials N to simulate",
        };
        sections.push(TableSection {
            title: format!("whole engagement, up to {limit} phases ({how})"),
            partition: true,
            exact: exact_engagement.is_some(),
            rows,
        });
        let mut survival: Vec<OutcomeRow> = Vec::new();
        for phase in 1..=limit {
            let by = |ends: &[EngagementEnd]| {
                let exact = exact_engagement.as_ref().map(|o| {
                    o.ends[..phase as usize]
                        .iter()
                        .map(|e| ends.iter().map(|end| e[end.index()]).sum::<f64>())
                        .sum::<f64>()
                });
                let count = engagement_count(&|h| {
                    (1..=phase)
                        .map(|p| ends.iter().map(|&end| h.ended(p, end)).sum::<u64>())
                        .sum()
                });
                (exact, count)
            };
            let (ended_exact, ended_count) = by(&EngagementEnd::ALL);
            survival.push(outcome_row(
                format!("still engaged after phase {phase}"),
                ended_exact.map(|p| (1.0 - p).max(0.0)),
                None,
                ended_count.map(|(k, n)| (n - k, n)),
            ));
            for (label, ends) in [
                (
                    "A broken",
                    [EngagementEnd::AFlees, EngagementEnd::ADestroyed],
                ),
                (
                    "B broken",
                    [EngagementEnd::BFlees, EngagementEnd::BDestroyed],
                ),
            ] {
                let (exact, count) = by(&ends);
                survival.push(outcome_row(
                    format!("{label} by phase {phase}"),
                    exact,
                    None,
                    count,
                ));
            }
        }
        sections.push(TableSection {
            title: "survival by phase (A broken: fled or destroyed; both out counts for neither)"
                .into(),
            partition: false,
            exact: exact_engagement.is_some(),
            rows: survival,
        });
        Ok(TableReport {
            system: "melee".into(),
            title: self.title.clone(),
            params: self.params.clone(),
            trials,
            outcomes,
            expectations_heading: "first combat phase".into(),
            expectations,
            sections,
        })
    }
}

/// Display names of an engagement's units: `A`, then `B` or `B front`, `B flank 1` …
pub fn melee_unit_names(combat: &MeleeCombat) -> Vec<String> {
    let b = &combat.engagement().b;
    let mut names = vec!["A".to_string()];
    let mut flank = 0;
    for (facing, _) in b {
        names.push(if b.len() == 1 {
            "B".to_string()
        } else if *facing == Facing::Flank {
            flank += 1;
            format!("B flank {flank}")
        } else {
            format!("B {}", facing.name())
        });
    }
    names
}
