//! Single-roll tables printed for a designer: exact fractions, optional Monte Carlo
//! estimates with Wilson intervals, in text, CSV, JSON or Markdown.
//!
//! Why this module exists: `battlelab table …` answers "what does one roll on this table
//! do?" exactly. The computation builds a [`TableReport`]; one [`Exporter`] per output
//! format turns it into text, so every format shows the same numbers.

use std::fmt::Write;

use serde::Serialize;
use serde_json::{json, Value};

use crate::exact::{BigFraction, ExactDistribution, Fraction};
use crate::sim::{Interrupted, RunControl};
use crate::stats::{wilson_interval, Z95};
use battlelab_core::systems::d6_tables::lookup::{self as d6table, CompiledD6Table};
use battlelab_core::systems::field::battle::{FieldCombat, OddsColumn};
use battlelab_core::systems::frontier::rolls as frontier;
use battlelab_core::systems::melee::engagement as melee;
use battlelab_core::systems::ratio::battle as ratio;
use battlelab_core::systems::setup::map as setup;

pub mod requests;

/// One outcome of a single-roll table.
#[derive(Debug, Clone, Serialize)]
pub struct OutcomeRow {
    pub outcome: String,
    /// The exact probability where known, else the estimate.
    pub probability: f64,
    /// The exact probability as a reduced fraction; `null` when not exact.
    pub fraction: Option<String>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// The Monte Carlo estimate and its count, when trials were run.
    pub estimate: Option<f64>,
    pub count: Option<u64>,
}

/// An expectation over one roll (e.g. SP lost by L), exact.
#[derive(Debug, Clone, Serialize)]
pub struct ExpectationRow {
    pub name: String,
    pub value: f64,
    pub fraction: String,
}

/// Everything a `table` command prints.
#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    pub system: String,
    pub title: String,
    pub params: Value,
    pub trials: Option<u64>,
    pub outcomes: Vec<OutcomeRow>,
    pub expectations: Vec<ExpectationRow>,
    /// Further groups of rows after the expectations (e.g. a whole melee engagement).
    pub sections: Vec<TableSection>,
}

/// A titled group of outcome rows. When `partition` is set the rows are disjoint and
/// sum to 1 (the Markdown percentages then sum to 100). Exact values here may be `f64`
/// from an exact enumeration too large for fractions; `fraction` is then `None`.
#[derive(Debug, Clone, Serialize)]
pub struct TableSection {
    pub title: String,
    pub partition: bool,
    /// Whether `probability` is exact (by enumeration) rather than the estimate.
    pub exact: bool,
    pub rows: Vec<OutcomeRow>,
}

/// Why a table could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error(
        "--odds {given}: not odds L:S with L ≥ S; the CRT's columns are {allowed}, and a ratio between or past them is read as the rules' odds rounding reads it (write L:S, e.g. 5:2)"
    )]
    UnknownOdds { given: String, allowed: String },
    #[error("--smaller-sp {0}: the smaller force's strength must be 1 to {max}", max = battlelab_core::systems::field::battle::MAX_SP)]
    SmallerSp(u32),
    #[error("--trials 0: give at least 1 trial, or leave --trials out for the exact table only")]
    ZeroTrials,
    #[error("{option}: {message}")]
    Invalid { option: String, message: String },
    #[error("--variant {given}: no such variant in the analysis file; allowed: {allowed}")]
    UnknownVariant { given: String, allowed: String },
    #[error(transparent)]
    Analysis(#[from] crate::analysis::AnalysisError),
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
}

/// The request behind `battlelab table crt`.
#[derive(Debug, Clone)]
pub struct CrtRequest {
    pub odds: String,
    pub drm: i32,
    pub smaller_sp: Option<u32>,
    pub trials: Option<u64>,
    pub seed: u64,
}

// Defined with the rulebook tables (the systems' reports print DRMs too).
pub use crate::report::rulebook::signed;

/// One CRT resolution: exact distribution, optional simulation and CLC expectations.
pub fn crt_table(
    field: &FieldCombat,
    request: &CrtRequest,
    control: &RunControl,
) -> Result<TableReport, TableError> {
    let rules = field.rules();
    let unknown = || TableError::UnknownOdds {
        given: request.odds.clone(),
        allowed: rules.odds_labels().join(", "),
    };
    // As a file's odds are read (`odds = ["5:2"]` in a sweep): any L:S with L ≥ S, and a
    // ratio between or past the printed columns falls to a column by the rules' own
    // rounding, through the same `odds_index` every battle of the file uses.
    let (larger, smaller) = OddsColumn::parse_ratio(&request.odds)
        .filter(|(l, s)| l >= s)
        .ok_or_else(unknown)?;
    let odds = match rules.odds_column_index(larger, smaller) {
        Some(listed) => listed,
        None => field.odds_index(larger, smaller),
    };
    let read_as =
        (rules.odds_column_index(larger, smaller).is_none()).then(|| format!("{larger}:{smaller}"));
    if let Some(sp) = request.smaller_sp {
        if !(1..=battlelab_core::systems::field::battle::MAX_SP).contains(&sp) {
            return Err(TableError::SmallerSp(sp));
        }
    }
    if request.trials == Some(0) {
        return Err(TableError::ZeroTrials);
    }
    let net_drm = request.drm.clamp(-rules.drm_cap, rules.drm_cap);
    let exact = field.resolution_distribution(odds, request.drm);
    let counts = match request.trials {
        Some(trials) => Some(
            battlelab_core::systems::field::battle::simulate_resolutions(
                field,
                odds,
                request.drm,
                request.seed,
                trials,
                control,
            )?,
        ),
        None => None,
    };
    let labels: Vec<String> = field.pairs().iter().map(|p| p.label()).collect();
    let outcomes = outcome_rows(&labels, &exact, counts.as_deref(), request.trials);
    let mut expectations = Vec::new();
    if let Some(sp) = request.smaller_sp {
        let pairs = field.pairs();
        let mut add = |name: &str, value: Fraction| {
            expectations.push(ExpectationRow {
                name: name.to_string(),
                value: value.to_f64(),
                fraction: value.to_string(),
            })
        };
        add(
            "SP lost by L",
            exact.expectation(|i| u64::from(field.clc_loss(pairs[i].larger, sp))),
        );
        add(
            "SP lost by S",
            exact.expectation(|i| u64::from(field.clc_loss(pairs[i].smaller, sp).min(sp))),
        );
        add(
            "morale lost by L",
            exact.expectation(|i| u64::from(pairs[i].larger.morale_loss())),
        );
        add(
            "morale lost by S",
            exact.expectation(|i| u64::from(pairs[i].smaller.morale_loss())),
        );
    }
    let mut params = json!({
        "odds": rules.odds_columns[odds].label(),
        "drm": request.drm,
        "net_drm": net_drm,
    });
    if let Some(given) = &read_as {
        params["odds_given"] = json!(given);
    }
    if let Some(sp) = request.smaller_sp {
        params["smaller_sp"] = json!(sp);
    }
    if request.trials.is_some() {
        params["seed"] = json!(request.seed);
    }
    let capped = if net_drm == request.drm {
        String::new()
    } else {
        format!(
            " (net {} after the ±{} cap)",
            signed(net_drm),
            rules.drm_cap
        )
    };
    Ok(TableReport {
        system: "crt".into(),
        title: format!(
            "CRT resolution — odds {}{}, DRM {}{capped}",
            rules.odds_columns[odds].label(),
            read_as.map_or_else(String::new, |given| format!(
                " ({given} read as {} by the odds rounding)",
                rules.odds_columns[odds].label()
            )),
            signed(request.drm)
        ),
        params,
        trials: request.trials,
        outcomes,
        expectations,
        sections: Vec::new(),
    })
}

/// Outcome rows from an exact distribution and, when trials were run, simulated counts.
fn outcome_rows(
    labels: &[String],
    exact: &ExactDistribution,
    counts: Option<&[u64]>,
    trials: Option<u64>,
) -> Vec<OutcomeRow> {
    labels
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let (estimate, count, ci) = match (counts, trials) {
                (Some(c), Some(n)) => (
                    Some(c[i] as f64 / n as f64),
                    Some(c[i]),
                    Some(wilson_interval(c[i], n, Z95)),
                ),
                _ => (None, None, None),
            };
            OutcomeRow {
                outcome: label.clone(),
                probability: exact.probability(i),
                fraction: Some(exact.fraction(i).to_string()),
                ci_low: ci.map(|c| c.0),
                ci_high: ci.map(|c| c.1),
                estimate,
                count,
            }
        })
        .collect()
}

/// A request for one roll on a d6 table of the strategic game.
#[derive(Debug, Clone)]
pub struct D6Request {
    /// The column; `None` means the roll cannot happen (a hex under 3 SP takes no
    /// attrition) and the first outcome, no loss, is certain.
    pub column: Option<usize>,
    pub drm: i32,
    pub trials: Option<u64>,
    pub seed: u64,
    /// What the designer asked for, echoed into the report.
    pub params: Value,
    pub title: String,
}

/// One roll on a d6 table: exact distribution, optional simulation, and expectations
/// derived from the printed codes (SP eliminated and cavalry losses for attrition, MP
/// gained and SP lost for forced march, NSP lost per side for naval combat).
pub fn d6_table(
    table: &CompiledD6Table,
    request: &D6Request,
    control: &RunControl,
) -> Result<TableReport, TableError> {
    if request.trials == Some(0) {
        return Err(TableError::ZeroTrials);
    }
    let outcomes = table.outcomes().len();
    let (exact, counts) = match request.column {
        Some(column) => {
            let counts = match request.trials {
                Some(trials) => Some(d6table::simulate_rolls(
                    table,
                    column,
                    request.drm,
                    request.seed,
                    trials,
                    control,
                )?),
                None => None,
            };
            (table.distribution(column, request.drm), counts)
        }
        None => {
            let mut certain = vec![0u64; outcomes];
            certain[0] = 6;
            let counts = request.trials.map(|n| {
                let mut c = vec![0u64; outcomes];
                c[0] = n;
                c
            });
            (
                ExactDistribution {
                    counts: certain,
                    total: 6,
                },
                counts,
            )
        }
    };
    let labels = table.outcomes();
    let rows = outcome_rows(labels, &exact, counts.as_deref(), request.trials);
    let expectations = d6table::outcome_values(&table.table().name, labels)
        .into_iter()
        .map(|(name, values)| {
            let value = exact.expectation(|i| values[i]);
            ExpectationRow {
                name: name.to_string(),
                value: value.to_f64(),
                fraction: value.to_string(),
            }
        })
        .collect();
    Ok(TableReport {
        system: table.table().name.clone(),
        title: request.title.clone(),
        params: request.params.clone(),
        trials: request.trials,
        outcomes: rows,
        expectations,
        sections: Vec::new(),
    })
}

/// One setup roll for a state (docs/systems/setup.md): each row with its exact probability
/// 1/6, and the exact expectation of every quantity.
pub fn setup_table(
    kind: setup::StateKind,
    port: bool,
    trials: Option<u64>,
    seed: u64,
    control: &RunControl,
) -> Result<TableReport, TableError> {
    if trials == Some(0) {
        return Err(TableError::ZeroTrials);
    }
    let rows = setup::rows(kind, port);
    let labels: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            format!(
                "row {}: leaders 3/2/1/0 {}/{}/{}/{}, Inf {}, Cav {}, Gds {}, NSP {}, T {}",
                i + 1,
                r.leaders[0],
                r.leaders[1],
                r.leaders[2],
                r.leaders[3],
                r.infantry,
                r.cavalry,
                r.guards,
                r.nsp,
                r.transports
            )
        })
        .collect();
    let exact = ExactDistribution::enumerate(6, 6, |face| face as usize);
    let counts = match trials {
        Some(n) => {
            let faces: [u8; 6] = [0, 1, 2, 3, 4, 5];
            Some(crate::sim::run_blocks(
                seed,
                n,
                || vec![0u64; 6],
                |dice, k, h| d6table::roll_many(&faces, dice, k, h),
                control,
            )?)
        }
        None => None,
    };
    let outcomes = outcome_rows(&labels, &exact, counts.as_deref(), trials);
    let expectations = setup::Quantity::ALL
        .iter()
        .map(|&q| {
            let value = exact.expectation(|i| u64::from(rows[i].quantity(q)));
            ExpectationRow {
                name: q.name().to_string(),
                value: value.to_f64(),
                fraction: value.to_string(),
            }
        })
        .collect();
    let state = match kind {
        setup::StateKind::Major => "major",
        setup::StateKind::Minor => "minor",
    };
    let mut params = json!({"state": state, "port": port});
    if trials.is_some() {
        params["seed"] = json!(seed);
    }
    Ok(TableReport {
        system: "setup".into(),
        title: format!(
            "Initial forces — {state} state{}",
            if kind == setup::StateKind::Minor && !port {
                " without a port"
            } else {
                ""
            }
        ),
        params,
        trials,
        outcomes,
        expectations,
        sections: Vec::new(),
    })
}

/// Most (state, face) steps the exact enumeration of `table ratio` may take.
pub const RATIO_EXACT_STEPS: usize = 50_000_000;

/// One ratio battle (docs/systems/ratio.md): the army result exactly (and simulated with
/// trials), and as expectations: casualty points, exhaustion, reserves used, how often the
/// min-score floor decides a combat, each combat's states, and the value of reserves under
/// every policy.
pub fn ratio_table(
    combat: &ratio::RatioCombat,
    policies: Option<&(usize, Vec<(ratio::ReservePolicy, ratio::RatioCombat)>)>,
    trials: Option<u64>,
    seed: u64,
    params: Value,
    title: String,
    control: &RunControl,
) -> Result<TableReport, TableError> {
    use ratio::{ArmyResult, CombatState, RatioDistribution};
    if trials == Some(0) {
        return Err(TableError::ZeroTrials);
    }
    let exact = combat.distribution(RATIO_EXACT_STEPS);
    if exact.is_none() && trials.is_none() {
        return Err(TableError::Invalid {
            option: "--line".into(),
            message: format!(
                "{} dice and {} reserves are too many to enumerate exactly; add --trials N to simulate",
                combat.line_dice(),
                combat.reserve_count()
            ),
        });
    }
    let counts = match trials {
        Some(n) => Some(ratio::simulate_battles(combat, seed, n, control)?),
        None => None,
    };
    let fraction = |count: u128, total: u128| Fraction::new(count, total);
    let mut outcomes = Vec::new();
    for i in 0..9 {
        let (estimate, count, ci) = match (&counts, trials) {
            (Some(h), Some(n)) => (
                Some(h.result[i] as f64 / n as f64),
                Some(h.result[i]),
                Some(wilson_interval(h.result[i], n, Z95)),
            ),
            _ => (None, None, None),
        };
        outcomes.push(OutcomeRow {
            outcome: ArmyResult::LABELS[i].to_string(),
            probability: exact
                .as_ref()
                .map_or(estimate.unwrap_or(0.0), |d| d.p_result(i)),
            fraction: exact
                .as_ref()
                .map(|d| fraction(d.result[i], d.total).to_string()),
            ci_low: ci.map(|c| c.0),
            ci_high: ci.map(|c| c.1),
            estimate,
            count,
        });
    }
    let mut expectations = Vec::new();
    let row = |name: String, value: Fraction| ExpectationRow {
        name,
        value: value.to_f64(),
        fraction: value.to_string(),
    };
    if let Some(d) = &exact {
        let mut add = |name: String, value: Fraction| expectations.push(row(name, value));
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
        if let Some((side, others)) = policies {
            for policy in ratio::ReservePolicy::ALL {
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
                    expectations.push(row(
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
        title,
        params,
        trials,
        outcomes,
        expectations,
        sections: Vec::new(),
    })
}

/// One row of a table from an exact value (fraction or `f64`) and optional counts.
fn outcome_row(
    outcome: String,
    exact: Option<f64>,
    fraction: Option<String>,
    counts: Option<(u64, u64)>,
) -> OutcomeRow {
    let estimate = counts.map(|(k, n)| k as f64 / n as f64);
    let ci = counts.map(|(k, n)| wilson_interval(k, n, Z95));
    OutcomeRow {
        outcome,
        probability: exact.or(estimate).unwrap_or(0.0),
        fraction,
        ci_low: ci.map(|c| c.0),
        ci_high: ci.map(|c| c.1),
        estimate,
        count: counts.map(|c| c.0),
    }
}

/// `table melee`: one combat phase exactly (hits, wounds, combat score, win/draw/lose,
/// break tests), and the whole engagement by exact enumeration where it fits, with
/// Monte Carlo estimates of both when `trials` is given.
pub fn melee_table(
    combat: &melee::MeleeCombat,
    trials: Option<u64>,
    seed: u64,
    params: Value,
    title: String,
    control: &RunControl,
) -> Result<TableReport, TableError> {
    use melee::EngagementEnd;
    if trials == Some(0) {
        return Err(TableError::ZeroTrials);
    }
    let odds = combat
        .exact_phase_fits()
        .then(|| combat.phase_odds(&combat.fresh_state()));
    if odds.is_none() && trials.is_none() {
        let dice = combat.first_phase_dice();
        return Err(TableError::Invalid {
            option: "--a/--b".into(),
            message: format!(
                "{} attack dice in the first phase are too many for exact fractions (at most {}); add --trials N to simulate",
                dice[0] + dice[1],
                melee::MAX_EXACT_PHASE_DICE
            ),
        });
    }
    let phases = match trials {
        Some(n) => Some((melee::simulate_phases(combat, seed, n, control)?, n)),
        None => None,
    };
    let engagements = match trials {
        Some(n) => Some((
            melee::simulate_engagements(combat, seed ^ ENGAGEMENT_STREAM, n, control)?,
            n,
        )),
        None => None,
    };
    let exact_engagement = combat.engagement_odds();
    let names = melee_unit_names(combat);
    let row = |outcome: String, value: Option<&BigFraction>, count: Option<(u64, u64)>| {
        outcome_row(
            outcome,
            value.map(BigFraction::to_f64),
            value.map(BigFraction::to_string),
            count,
        )
    };
    let phase_count =
        |pick: &dyn Fn(&melee::PhaseHistogram) -> u64| phases.as_ref().map(|(h, n)| (pick(h), *n));
    let outcomes = vec![
        row(
            "A wins the phase".into(),
            odds.as_ref().map(|o| &o.a_wins),
            phase_count(&|h| h.result[0]),
        ),
        row(
            "draw".into(),
            odds.as_ref().map(|o| &o.draw),
            phase_count(&|h| h.result[1]),
        ),
        row(
            "B wins the phase".into(),
            odds.as_ref().map(|o| &o.b_wins),
            phase_count(&|h| h.result[2]),
        ),
    ];
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
        let exact = |pick: fn(&melee::PhaseOdds, usize) -> &Vec<BigFraction>| {
            odds.as_ref().map(|o| pick(o, side))
        };
        let lists: [DistributionSection; 3] = [
            (
                "hits",
                "hits",
                exact(|o, s| &o.hits[s]),
                phases.as_ref().map(|(h, _)| &h.hits[side]),
            ),
            (
                "wounds",
                "wounds (saves failed, before the cap)",
                exact(|o, s| &o.wounds[s]),
                phases.as_ref().map(|(h, _)| &h.wounds[side]),
            ),
            (
                "score",
                "combat score",
                exact(|o, s| &o.score[s]),
                phases.as_ref().map(|(h, _)| &h.score[side]),
            ),
        ];
        for (short, what, dist, counts) in lists {
            let values = dist.map_or(counts.map_or(0, Vec::len), Vec::len);
            let rows = (0..values)
                .map(|k| {
                    let count =
                        counts.map(|c| (c.get(k).copied().unwrap_or(0), trials.unwrap_or(1)));
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
    let engagement_count = |pick: &dyn Fn(&melee::EngagementHistogram) -> u64| {
        engagements.as_ref().map(|(h, n)| (pick(h), *n))
    };
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
    let mut survival = Vec::new();
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
        title,
        params,
        trials,
        outcomes,
        expectations,
        sections,
    })
}

/// One exact first-phase distribution: short row label, title, exact odds, counts.
type DistributionSection<'a> = (
    &'a str,
    &'a str,
    Option<&'a Vec<BigFraction>>,
    Option<&'a Vec<u64>>,
);

/// The seed offset of the engagement simulation in `table melee`, so that the phase
/// and engagement runs draw independent streams from one `--seed`.
pub const ENGAGEMENT_STREAM: u64 = 0x6D65_6C65_6500_0001;

/// Display names of an engagement's units: `A`, then `B` or `B front`, `B flank 1` …
pub fn melee_unit_names(combat: &melee::MeleeCombat) -> Vec<String> {
    let b = &combat.engagement().b;
    let mut names = vec!["A".to_string()];
    let mut flank = 0;
    for (facing, _) in b {
        names.push(if b.len() == 1 {
            "B".to_string()
        } else if *facing == melee::Facing::Flank {
            flank += 1;
            format!("B flank {flank}")
        } else {
            format!("B {}", facing.name())
        });
    }
    names
}

/// One single-roll step of a frontier quick battle (docs/systems/frontier.md).
#[derive(Debug, Clone, Copy)]
pub enum FrontierStep {
    Fire(frontier::FireRoll),
    Move(frontier::MoveRoll),
    Recovery(frontier::RecoveryRoll),
}

impl FrontierStep {
    fn succeeds(&self, face: u32) -> bool {
        match self {
            Self::Fire(r) => r.hits(face),
            Self::Move(r) => r.moves(face),
            Self::Recovery(r) => r.recovers(face),
        }
    }

    fn labels(&self) -> [&'static str; 2] {
        match self {
            Self::Fire(_) => ["hit", "miss"],
            Self::Move(_) => ["moves", "stays"],
            Self::Recovery(_) => ["recovers one level", "does not recover"],
        }
    }
}

/// An exact row of a frontier rulebook grid: `faces` of 6 succeed.
fn faces_row(label: String, faces: u32) -> OutcomeRow {
    let f = Fraction::new(u128::from(faces), 6);
    outcome_row(label, Some(f.to_f64()), Some(f.to_string()), None)
}

/// `table frontier-fire | frontier-move | frontier-recovery`: the exact odds of one
/// roll (faces of a d6), a simulation when `trials` is given, and the rulebook grid of
/// every combination of the step's other inputs.
pub fn frontier_table(
    step: FrontierStep,
    trials: Option<u64>,
    seed: u64,
    params: Value,
    title: String,
    control: &RunControl,
) -> Result<TableReport, TableError> {
    use frontier::{FireRoll, MoveRoll, RecoveryRoll, Terrain, UnitType};
    if trials == Some(0) {
        return Err(TableError::ZeroTrials);
    }
    let face_ok: [bool; 6] = std::array::from_fn(|i| step.succeeds(i as u32 + 1));
    let exact = ExactDistribution::enumerate(6, 2, |face| usize::from(!face_ok[face as usize]));
    let counts = match trials {
        Some(n) => Some(crate::sim::run_blocks(
            seed,
            n,
            || vec![0u64; 2],
            |dice, block, h: &mut Vec<u64>| {
                for _ in 0..block {
                    h[usize::from(!face_ok[dice.below(6) as usize])] += 1;
                }
            },
            control,
        )?),
        None => None,
    };
    let labels = step.labels().map(String::from);
    let outcomes = outcome_rows(&labels, &exact, counts.as_deref(), trials);
    let weathers = [(false, "fair weather"), (true, "severe weather")];
    let mut sections = Vec::new();
    match step {
        FrontierStep::Fire(roll) => {
            for (severe, weather) in weathers {
                let rows = UnitType::ALL
                    .iter()
                    .flat_map(|&unit| Terrain::ALL.iter().map(move |&terrain| (unit, terrain)))
                    .map(|(unit, terrain)| {
                        let r = FireRoll {
                            unit,
                            terrain,
                            severe_weather: severe,
                            ..roll
                        };
                        faces_row(
                            format!("{} in {}", unit.name(), terrain.name()),
                            r.hitting_faces(),
                        )
                    })
                    .collect();
                sections.push(TableSection {
                    title: format!("P(hit), printed fire CF {}, {weather}", roll.cf),
                    partition: false,
                    exact: true,
                    rows,
                });
            }
        }
        FrontierStep::Move(roll) => {
            for (severe, weather) in weathers {
                for leader in 0..=frontier::MAX_LEADER {
                    if roll.surprise_bonus && leader == 0 {
                        continue;
                    }
                    let rows = UnitType::ALL
                        .iter()
                        .flat_map(|&unit| Terrain::ALL.iter().map(move |&terrain| (unit, terrain)))
                        .map(|(unit, terrain)| {
                            let r = MoveRoll {
                                unit,
                                terrain,
                                leader,
                                severe_weather: severe,
                                ..roll
                            };
                            faces_row(
                                format!("{} in {}", unit.name(), terrain.name()),
                                r.moving_faces(),
                            )
                        })
                        .collect();
                    let leader_note = if leader == 0 {
                        "no leader".to_string()
                    } else {
                        format!("leader {leader}")
                    };
                    sections.push(TableSection {
                        title: format!("P(move), level {}, {leader_note}, {weather}", roll.level),
                        partition: false,
                        exact: true,
                        rows,
                    });
                }
            }
        }
        FrontierStep::Recovery(_) => {
            let rows = (1..=frontier::MAX_LEVEL)
                .flat_map(|level| (0..=frontier::MAX_LEADER).map(move |leader| (level, leader)))
                .map(|(level, leader)| {
                    faces_row(
                        format!("level {level}, leader {leader}"),
                        RecoveryRoll { level, leader }.recovering_faces(),
                    )
                })
                .collect();
            sections.push(TableSection {
                title: "P(recover), every commitment level × leader rating (0 = no leader)".into(),
                partition: false,
                exact: true,
                rows,
            });
        }
    }
    Ok(TableReport {
        system: match step {
            FrontierStep::Fire(_) => "frontier-fire",
            FrontierStep::Move(_) => "frontier-move",
            FrontierStep::Recovery(_) => "frontier-recovery",
        }
        .into(),
        title,
        params,
        trials,
        outcomes,
        expectations: Vec::new(),
        sections,
    })
}

/// Turns a [`TableReport`] into one output format.
pub trait Exporter {
    fn export(&self, report: &TableReport) -> String;
}

/// Aligned plain text for the terminal.
pub struct TextExporter;
/// Comma-separated values with a header row.
pub struct CsvExporter;
/// The stable JSON shape scripts read.
pub struct JsonExporter;
/// A Markdown table ready for a rulebook.
pub struct MarkdownExporter;

/// The exporter for a format name: `text`, `csv`, `json` or `md`.
pub fn exporter(format: &str) -> Option<Box<dyn Exporter>> {
    match format {
        "text" => Some(Box::new(TextExporter)),
        "csv" => Some(Box::new(CsvExporter)),
        "json" => Some(Box::new(JsonExporter)),
        "md" => Some(Box::new(MarkdownExporter)),
        _ => None,
    }
}

/// Fractions longer than this are abbreviated in text and Markdown (the decimal column
/// still shows the value; CSV and JSON carry the whole fraction).
const SHOWN_FRACTION_CHARS: usize = 40;

/// A fraction as text and Markdown show it: whole, or its size when it is too long.
fn shown(fraction: &str) -> String {
    if fraction.len() <= SHOWN_FRACTION_CHARS {
        return fraction.to_string();
    }
    let digits = fraction.split('/').map(str::len).collect::<Vec<_>>();
    format!(
        "({}/{}-digit fraction)",
        digits[0],
        digits.get(1).copied().unwrap_or(0)
    )
}

fn opt(value: Option<f64>, digits: usize) -> String {
    value.map(|v| format!("{v:.digits$}")).unwrap_or_default()
}

/// One block of outcome rows as aligned text: a header line, then one line per row with
/// the fraction, the decimal (or `-` when the block is not exact) and, when simulated,
/// the estimate and its interval. `trials_note` ends the header with the trial count.
fn text_rows(
    out: &mut String,
    rows: &[OutcomeRow],
    exact: bool,
    simulated: bool,
    min_fraction_width: usize,
    trials_note: Option<u64>,
) {
    let width = rows
        .iter()
        .map(|o| o.outcome.chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    let fraction_width = rows
        .iter()
        .map(|o| {
            o.fraction
                .as_deref()
                .map_or(1, |f| shown(f).chars().count())
        })
        .max()
        .unwrap_or(min_fraction_width)
        .max(min_fraction_width);
    let _ = write!(
        out,
        "{:<width$}  {:>fraction_width$}  {:>8}",
        "outcome", "exact", "decimal"
    );
    if simulated {
        let _ = write!(out, "  {:>9}  {:<20}", "simulated", "95% interval");
    }
    match trials_note {
        Some(n) => {
            let _ = writeln!(out, "  ({n} trials)");
        }
        None => {
            let _ = writeln!(out);
        }
    }
    for o in rows {
        let decimal = if exact {
            format!("{:.6}", o.probability)
        } else {
            "-".to_string()
        };
        let _ = write!(
            out,
            "{:<width$}  {:>fraction_width$}  {:>8}",
            o.outcome,
            o.fraction.as_deref().map_or("-".to_string(), shown),
            decimal
        );
        if simulated && o.estimate.is_some() {
            let _ = write!(
                out,
                "  {:>9}  [{}, {}]",
                opt(o.estimate, 6),
                opt(o.ci_low, 6),
                opt(o.ci_high, 6)
            );
        }
        let _ = writeln!(out);
    }
}

impl Exporter for TextExporter {
    fn export(&self, report: &TableReport) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", report.title);
        let simulated = report.trials.is_some();
        // The main outcomes show their probability (exact, else the estimate) as decimal.
        text_rows(
            &mut out,
            &report.outcomes,
            true,
            simulated,
            9,
            report.trials,
        );
        if !report.expectations.is_empty() {
            let heading = match report.params.get("smaller_sp") {
                Some(sp) => {
                    format!("expected per resolution (Combat Loss Chart, smaller force {sp} SP)")
                }
                None if report.system == "ratio" => "expected per battle".to_string(),
                None if report.system == "melee" => "first combat phase".to_string(),
                None => "expected per roll".to_string(),
            };
            let _ = writeln!(out, "\n{heading}");
            let name_width = report
                .expectations
                .iter()
                .map(|e| e.name.chars().count())
                .max()
                .unwrap_or(18)
                .max(18);
            let value_width = report
                .expectations
                .iter()
                .map(|e| shown(&e.fraction).chars().count())
                .max()
                .unwrap_or(9)
                .max(9);
            for e in &report.expectations {
                let _ = writeln!(
                    out,
                    "{:<name_width$} {:>value_width$}  {:>8.6}",
                    e.name,
                    shown(&e.fraction),
                    e.value
                );
            }
        }
        for section in &report.sections {
            let _ = writeln!(out, "\n{}", section.title);
            text_rows(&mut out, &section.rows, section.exact, simulated, 5, None);
        }
        out
    }
}

/// A CSV field: made safe for spreadsheets, then quoted when it holds a comma, a quote
/// or a line break (RFC 4180); see [`crate::report::csv_cell`].
pub use crate::report::csv_cell::field as csv_field;

/// One outcome row of the CSV export, its name prefixed by `prefix`.
fn csv_outcome(out: &mut String, prefix: &str, o: &OutcomeRow) {
    let number = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    let _ = writeln!(
        out,
        "{},{},{},{},{},{},{}",
        csv_field(&format!("{prefix}{}", o.outcome)),
        o.probability,
        o.fraction.as_deref().unwrap_or(""),
        number(o.estimate),
        o.count.map(|v| v.to_string()).unwrap_or_default(),
        number(o.ci_low),
        number(o.ci_high),
    );
}

impl Exporter for CsvExporter {
    fn export(&self, report: &TableReport) -> String {
        let mut out = String::from("outcome,probability,fraction,estimate,count,ci_low,ci_high\n");
        for o in &report.outcomes {
            csv_outcome(&mut out, "", o);
        }
        for e in &report.expectations {
            let _ = writeln!(
                out,
                "{},{},{},,,,",
                csv_field(&format!("expected {}", e.name)),
                e.value,
                e.fraction
            );
        }
        for section in &report.sections {
            for o in &section.rows {
                csv_outcome(&mut out, &format!("{}: ", section.title), o);
            }
        }
        out
    }
}

impl Exporter for JsonExporter {
    fn export(&self, report: &TableReport) -> String {
        let mut value = json!({
            "system": report.system,
            "params": report.params,
            "trials": report.trials,
            "outcomes": report.outcomes,
        });
        if !report.expectations.is_empty() {
            value["expectations"] = json!(report.expectations);
        }
        if !report.sections.is_empty() {
            value["sections"] = json!(report.sections);
        }
        serde_json::to_string_pretty(&value).expect("JSON values serialise") + "\n"
    }
}

/// One block of outcome rows as a Markdown table: percentages that sum to 100 when the
/// rows are a partition (else each rounded on its own), the fraction (or the decimal of
/// an exact block without one, or `–`), and the estimate and interval when simulated.
fn markdown_rows(
    out: &mut String,
    rows: &[OutcomeRow],
    partition: bool,
    exact: bool,
    simulated: bool,
) {
    out.push_str(if simulated {
        "| outcome | exact | % | simulated | 95% interval |\n|---|---|---|---|---|\n"
    } else {
        "| outcome | exact | % |\n|---|---|---|\n"
    });
    let values: Vec<f64> = rows.iter().map(|o| o.probability).collect();
    let mut moved = false;
    let percents: Vec<String> = if partition {
        let row = crate::report::rulebook::percent_row(
            crate::analysis::TablesOptions::default(),
            &values,
        );
        moved = row.moved;
        row.cells
    } else {
        values.iter().map(|v| format!("{:.1}", v * 100.0)).collect()
    };
    for (o, percent) in rows.iter().zip(percents) {
        let shown_exact = match (&o.fraction, exact) {
            (Some(f), _) => shown(f),
            (None, true) => format!("{:.5}", o.probability),
            (None, false) => "–".to_string(),
        };
        let _ = write!(out, "| {} | {} | {} |", o.outcome, shown_exact, percent);
        if simulated && o.estimate.is_none() {
            out.push_str("  |  |");
        } else if simulated {
            let _ = write!(
                out,
                " {} | {}–{} |",
                opt(o.estimate, 5),
                opt(o.ci_low, 5),
                opt(o.ci_high, 5)
            );
        }
        out.push('\n');
    }
    if moved {
        let _ = write!(out, "\n{}\n", crate::report::rulebook::MOVED_NOTE);
    }
}

impl Exporter for MarkdownExporter {
    fn export(&self, report: &TableReport) -> String {
        let mut out = format!("**{}**\n\n", report.title);
        let simulated = report.trials.is_some();
        markdown_rows(&mut out, &report.outcomes, true, false, simulated);
        if !report.expectations.is_empty() {
            out.push_str("\n| expected | exact | decimal |\n|---|---|---|\n");
            for e in &report.expectations {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.4} |",
                    e.name,
                    shown(&e.fraction),
                    e.value
                );
            }
        }
        for section in &report.sections {
            let _ = write!(out, "\n**{}**\n\n", section.title);
            markdown_rows(
                &mut out,
                &section.rows,
                section.partition,
                section.exact,
                simulated,
            );
        }
        out
    }
}
