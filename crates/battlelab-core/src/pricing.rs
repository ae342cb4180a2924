//! What is a +1 worth? Every modifier priced at every run of a plan — the headline without
//! and with it, the paired difference with its 95% interval (exact where the runs are
//! exact), and its equivalent in the system's own currency — and the printing of the
//! answer (text, JSON, the Markdown of `tables.md`).
//!
//! Why this module exists: `battlelab value` prices on the command line and the report
//! page's WebAssembly module reprices after an edit, and a price must not depend on which
//! of the two computed it. So the pricing lives here once, with no files, threads, Polars
//! or clap: the caller hands over the analysis (its TOML document, its validated study
//! and a parser for changed documents) and gets back a [`Valuation`], which prints itself.
//! The command line adds the thread pool, the progress bar and the report folder.
//!
//! A modifier is an ordinary change to the analysis file (`levers::shifted`), run with
//! the same seed and block sizes as the file itself, so both arms of a run draw the same
//! dice block by block and the difference is a paired one (`engine::headline`). A side's
//! modifier changes that side only (`levers` gives a melee side its own copy of a profile
//! both sides name). A setting the plan itself sets at a run (A's SP under an odds sweep, a
//! frontier sensitivity run's leader) is not priced there, and a modifier the plan sets at
//! every run is refused, naming what sets it.
//!
//! Odds: `odds±N` and the odds-column equivalent are read along the odds columns of the
//! rules as run (the printed columns and any the file adds, `levers::odds_columns`), each
//! run's neighbours run at those columns with everything else as it was. A step past the
//! first or last column is "beyond the table"; a run whose odds are not a column has no
//! odds steps.
//!
//! The equivalent: the headline is read at each step of the currency on the same run
//! (every odds column of the table; −3 … +3 for units, points of skill, leader rating), and
//! the equivalent is where the modifier's headline falls on that curve, interpolated
//! linearly between two neighbouring steps that exist (never across a missing one), the
//! crossing nearest step 0. Which two steps it lies between is decided by exact fractions
//! where the system counts exactly (ratio battles), else on the numbers as computed. A value
//! no step reaches is "beyond the table" (odds) or beyond the steps tried.
//!
//! Exact without dice: a price whose every arm is exact prints the same whether or not its
//! blocks were simulated (every printed number of an exact cell is the exact one), so
//! [`Prepared::evaluate`] can be asked not to simulate, and says whether that sufficed
//! ([`Valuation::exact`]); the page reprices exact analyses at once that way.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::analysis::AxisValue;
use crate::engine::compare::Arm;
use crate::engine::dynamic::AnyStudy;
use crate::engine::headline::{self, Estimate, Headline, Level, Measured};
use crate::engine::Plan;
use crate::levers::{self, Modifier, Place, SetBy, SystemLevers, ValueSettings};
use crate::sim::{Interrupted, RunControl};
use crate::toml_input::AnalysisError;

/// A validated analysis as pricing runs it: its plan and any run's blocks.
pub trait Priceable: Send + Sync {
    fn plan(&self) -> Plan;
    /// Blocks `blocks` of `run` (of a run of `trials` trials from `seed`), each block's
    /// outcome counts and metric sums, and with `with_exact` the run's exact results.
    fn arm_blocks(
        &self,
        run: usize,
        blocks: std::ops::Range<u64>,
        trials: u64,
        seed: u64,
        with_exact: bool,
        control: &RunControl,
    ) -> Result<Arm, Interrupted>;
}

impl Priceable for Arc<dyn AnyStudy> {
    fn plan(&self) -> Plan {
        AnyStudy::plan(&**self)
    }

    fn arm_blocks(
        &self,
        run: usize,
        blocks: std::ops::Range<u64>,
        trials: u64,
        seed: u64,
        with_exact: bool,
        control: &RunControl,
    ) -> Result<Arm, Interrupted> {
        AnyStudy::arm_blocks(&**self, run, blocks, trials, seed, with_exact, control)
    }
}

/// Parses a changed analysis text with the system's own parser (the caller's: the
/// command line's reports, or the module's registry with its files in memory).
pub type Parse<'a> = dyn Fn(&str) -> Result<Box<dyn Priceable>, AnalysisError> + Sync + 'a;

/// Why a valuation cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ValueError {
    /// The question cannot be asked of this file (exit 2 on the command line), in words
    /// that name the fix.
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Interrupted(#[from] Interrupted),
}

/// The analysis being priced, as validated.
#[derive(Clone, Copy)]
pub struct Analysis<'a> {
    /// The file as the user named it (messages and outputs name it so).
    pub path: &'a Path,
    /// Its name (`name = …`).
    pub name: &'a str,
    /// The file as a TOML document.
    pub doc: &'a toml::Table,
    pub system: &'a str,
    pub levers: &'static SystemLevers,
    pub trials: u64,
    pub seed: u64,
    /// The file as validated.
    pub study: &'a dyn Priceable,
    pub parse: &'a Parse<'a>,
}

impl Analysis<'_> {
    /// Parses a changed document (`what` names the change in errors).
    fn study(&self, doc: &toml::Table, what: &str) -> Result<Box<dyn Priceable>, String> {
        let text =
            toml::to_string(doc).map_err(|e| format!("writing the changed analysis: {e}"))?;
        (self.parse)(&text).map_err(|e| {
            format!(
                "{what} cannot be applied to {}: {}",
                self.path.display(),
                strip_file(&e.to_string())
            )
        })
    }

    /// Every run of `study` (or only `runs`), every block (none without `simulate`), exact
    /// where the run is exact.
    fn evaluate(
        &self,
        study: &dyn Priceable,
        runs: Option<&[usize]>,
        simulate: bool,
        control: &RunControl,
    ) -> Result<Vec<Arm>, Interrupted> {
        let all: Vec<usize> = (0..study.plan().runs.len()).collect();
        let runs = runs.unwrap_or(&all);
        let blocks = if simulate {
            crate::engine::driver::blocks_per_run(self.trials)
        } else {
            0
        };
        runs.iter()
            .map(|&r| study.arm_blocks(r, 0..blocks, self.trials, self.seed, true, control))
            .collect()
    }
}

/// An error from the changed file without its (misleading) file and line prefix.
pub fn strip_file(message: &str) -> String {
    match message.split_once(": field `") {
        Some((_, rest)) => format!("field `{rest}"),
        None => message.to_string(),
    }
}

/// What the designer asked, beside the file: `--modifier`s and `--headline`.
#[derive(Clone, Debug, Default)]
pub struct Asked {
    /// The modifiers named (`a.drm+1`); empty: `[value]`'s, else the system's own list.
    pub modifiers: Vec<String>,
    /// A headline key, or `all`; `None`: `[value]`'s, else the system's first.
    pub headline: Option<String>,
}

/// A valuation with every changed file parsed and checked, before any dice are rolled.
pub struct Prepared<'a> {
    analysis: Analysis<'a>,
    plan: Plan,
    headlines: Vec<Headline>,
    reference: usize,
    ladder: Result<OddsLadder, Why>,
    ladder_studies: Vec<Box<dyn Priceable>>,
    ladder_jobs: Vec<(usize, usize)>,
    studies: Vec<Box<dyn Priceable>>,
    priced: Vec<(Modifier, Change, Vec<Option<&'static SetBy>>)>,
    /// Modifiers of the system's own list this file cannot take, and why.
    pub skipped: Vec<(String, String)>,
    currency_studies: Vec<(i64, Box<dyn Priceable>)>,
    currency_set_by: Vec<Option<&'static SetBy>>,
    /// Why the currency takes no step at all in this file, where it takes none.
    currency_stuck: Option<Why>,
}

/// Checks what is asked of `analysis` (with plan `plan` and its `[value]` settings `spec`)
/// and parses every changed file it needs. A modifier the user named must apply; one of
/// the system's own list that this file cannot take (a morale already at its top) is
/// skipped, and said so ([`Prepared::skipped`]). A modifier the plan sets at every run is
/// refused: it would price nothing.
pub fn prepare<'a>(
    analysis: Analysis<'a>,
    plan: Plan,
    asked: &Asked,
    spec: &ValueSettings,
) -> Result<Prepared<'a>, ValueError> {
    let refused = ValueError::Refused;
    let system = analysis.system;
    let levers = analysis.levers;
    // The modifiers: the command line, else [value], else the system's own list.
    let modifiers: Vec<Modifier> = if !asked.modifiers.is_empty() {
        asked
            .modifiers
            .iter()
            .map(|m| {
                Modifier::parse(m, levers, system).map_err(|e| refused(format!("--modifier: {e}")))
            })
            .collect::<Result<_, _>>()?
    } else if let Some(list) = &spec.modifiers {
        list.clone()
    } else {
        levers
            .default_modifiers
            .iter()
            .map(|m| Modifier::parse(m, levers, system).expect("the catalog's own modifiers"))
            .collect()
    };

    // The headlines.
    let all = levers.headlines.clone();
    if all.is_empty() {
        return Err(refused(format!(
            "{system} tables have no headline to price; use `battlelab solve` with an outcome, or `battlelab compare`"
        )));
    }
    let wanted = asked.headline.clone().or_else(|| spec.headline.clone());
    let headlines: Vec<Headline> = match wanted.as_deref() {
        None => vec![all[0].clone()],
        Some("all") => all.clone(),
        Some(key) => vec![all.iter().find(|h| h.key == key).cloned().ok_or_else(|| {
            refused(format!(
                "no headline \"{}\" for {system}; headlines: {}, or all",
                crate::limits::echo(key),
                all.iter()
                    .map(|h| h.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?],
    };

    // The odds ladder, where odds are stepped or counted in.
    let odds_wanted = modifiers
        .iter()
        .any(|m| matches!(m.lever.place, Place::Odds))
        || levers.currency.is_some_and(|(c, _)| c == "odds");
    let (ladder, ladder_studies, ladder_jobs) = if odds_wanted {
        match plan_ladder(&analysis, &plan) {
            Ok((ladder, studies, jobs)) => (Ok(ladder), studies, jobs),
            Err(why) => (Err(why), Vec::new(), Vec::new()),
        }
    } else {
        (
            Err(levers::NO_ODDS_SWEEP.to_string()),
            Vec::new(),
            Vec::new(),
        )
    };

    // Every changed document is checked before any dice are rolled.
    let chosen = !asked.modifiers.is_empty() || spec.modifiers.is_some();
    let mut studies = Vec::new();
    let mut priced: Vec<(Modifier, Change, Vec<Option<&'static SetBy>>)> = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    for m in &modifiers {
        let set_by = levers::overridden(&plan, m.lever);
        if let Some(Some(by)) = set_by
            .first()
            .filter(|_| set_by.iter().all(Option::is_some))
        {
            let why = m.lever.refused_by(by);
            if !chosen {
                skipped.push((m.name(), why));
                continue;
            }
            // ([value]'s modifiers were checked so when the file was read.)
            return Err(refused(format!("--modifier {}: {why}", m.name())));
        }
        let change = if matches!(m.lever.place, Place::Odds) {
            match &ladder {
                Ok(_) => Ok(Change::Odds(m.step)),
                Err(why) => Err(format!("{} cannot be applied: {why}", m.name())),
            }
        } else {
            levers::shifted(analysis.doc, m.lever, m.step)
                .map_err(|e| format!("{} cannot be applied: {e}", m.name()))
                .and_then(|doc| analysis.study(&doc, &m.name()))
                .and_then(|study| {
                    if study.plan().runs.len() != plan.runs.len() {
                        return Err(format!(
                            "{} changes the analysis's runs ({} instead of {}); price it on a file where it moves a setting, not the grid",
                            m.name(),
                            study.plan().runs.len(),
                            plan.runs.len()
                        ));
                    }
                    studies.push(study);
                    Ok(Change::File(studies.len() - 1))
                })
        };
        match change {
            Ok(change) => priced.push((*m, change, set_by)),
            Err(e) if !chosen => skipped.push((m.name(), e)),
            Err(e) => return Err(refused(e)),
        }
    }

    // The currency curve, where the currency is a setting (odds are the ladder's).
    let mut currency_studies: Vec<(i64, Box<dyn Priceable>)> = Vec::new();
    let mut currency_set_by = vec![None; plan.runs.len()];
    let mut currency_stuck: Option<Why> = None;
    if let Some((name, _)) = levers.currency.filter(|(c, _)| *c != "odds") {
        let lever = levers
            .lever(name, system)
            .expect("the catalog's own currency");
        currency_set_by = levers::overridden(&plan, lever);
        let mut first_refusal = None;
        for k in (-CURRENCY_REACH..=CURRENCY_REACH).filter(|&k| k != 0) {
            // A step the file cannot take (below 1 unit, past a stat's top) is left out.
            let study =
                levers::shifted(analysis.doc, lever, k).and_then(|doc| analysis.study(&doc, name));
            match study {
                Ok(study) if study.plan().runs.len() == plan.runs.len() => {
                    currency_studies.push((k, study))
                }
                Ok(_) => {}
                Err(e) => {
                    first_refusal.get_or_insert(e);
                }
            }
        }
        if currency_studies.is_empty() {
            currency_stuck = Some(format!(
                "{name} cannot be moved in this file: {}",
                first_refusal.unwrap_or_else(|| "every step changes the runs".into())
            ));
        }
    }
    Ok(Prepared {
        analysis,
        reference: spec.reference,
        plan,
        headlines,
        ladder,
        ladder_studies,
        ladder_jobs,
        studies,
        priced,
        skipped,
        currency_studies,
        currency_set_by,
        currency_stuck,
    })
}

impl Prepared<'_> {
    /// Why nothing can be priced (every modifier skipped), where that is so.
    pub fn nothing_priced(&self) -> Option<String> {
        self.priced.is_empty().then(|| {
            format!(
                "none of the modifiers applies to {}; name some with --modifier",
                self.analysis.path.display()
            )
        })
    }

    /// How many arms (run × setting) the valuation evaluates: each runs the file's trials.
    pub fn arms(&self) -> u64 {
        (1 + self.studies.len() + self.currency_studies.len()) as u64 * self.plan.runs.len() as u64
            + self.ladder_jobs.len() as u64
    }

    /// Evaluates every arm — simulating every block, or with `simulate` false none (exact
    /// results only: [`Valuation::exact`] says whether every printed number is then the
    /// simulating one's) — and prices every modifier at every run.
    pub fn evaluate(self, simulate: bool, control: &RunControl) -> Result<Valuation, Interrupted> {
        let analysis = self.analysis;
        let plan = self.plan;
        let levers = analysis.levers;
        let base = analysis.evaluate(analysis.study, None, simulate, control)?;
        let with = self
            .studies
            .iter()
            .map(|s| analysis.evaluate(&**s, None, simulate, control))
            .collect::<Result<Vec<_>, _>>()?;
        let curve = self
            .currency_studies
            .iter()
            .map(|(k, s)| Ok((*k, analysis.evaluate(&**s, None, simulate, control)?)))
            .collect::<Result<Vec<_>, Interrupted>>()?;
        let columns = self
            .ladder_jobs
            .iter()
            .map(|&(s, r)| {
                Ok(analysis
                    .evaluate(&*self.ladder_studies[s], Some(&[r]), simulate, control)?
                    .remove(0))
            })
            .collect::<Result<Vec<_>, Interrupted>>()?;
        // Exact throughout: every arm's every headline exact (or not about that arm).
        let exact = self.headlines.iter().all(|h| {
            base.iter()
                .chain(with.iter().flatten())
                .chain(curve.iter().flat_map(|(_, arms)| arms))
                .chain(&columns)
                .all(|arm| headline::measure(arm, h).is_none_or(|m| m.exact.is_some()))
        });
        let ladder = &self.ladder;
        let (priced, currency_set_by, currency_stuck) =
            (&self.priced, &self.currency_set_by, &self.currency_stuck);
        let results = self
            .headlines
            .into_iter()
            .map(|headline| {
                let not_here = || format!("{} is not an outcome there", headline.name);
                let at = |run: usize, at: &At| -> Result<Measured, Why> {
                    match at {
                        At::Base => headline::measure(&base[run], &headline).ok_or_else(not_here),
                        At::Arm(i) => {
                            headline::measure(&columns[*i], &headline).ok_or_else(not_here)
                        }
                        At::Missing(why) => Err(why.clone()),
                    }
                };
                // Per run, once for every modifier: the headline without a change, and the
                // currency curve through it (contiguous steps around 0), or why there is none.
                let unchanged: Vec<Option<(Measured, Result<Curve, Why>)>> = (0..plan.runs.len())
                    .map(|r| {
                        let without = headline::measure(&base[r], &headline)?;
                        let curve = match levers.currency {
                            None => Err(String::new()),
                            Some(("odds", _)) => ladder
                                .as_ref()
                                .map_err(Clone::clone)
                                .and_then(|l| l.runs[r].as_ref().map_err(Clone::clone))
                                .map(|place| {
                                    odds_curve(place, |a| at(r, a).ok().map(|m| Level::of(&m)))
                                }),
                            Some((name, unit)) => match (currency_set_by[r], currency_stuck) {
                                (Some(by), _) => Err(format!("{name} is set by {} here", by.what)),
                                (None, Some(why)) => Err(why.clone()),
                                (None, None) => Ok(setting_curve(name, unit, |k| {
                                    if k == 0 {
                                        return Some(Level::of(&without));
                                    }
                                    let (_, e) = curve.iter().find(|(s, _)| *s == k)?;
                                    headline::measure(&e[r], &headline).map(|m| Level::of(&m))
                                })),
                            },
                        };
                        Some((without, curve))
                    })
                    .collect();
                let modifiers = priced
                    .iter()
                    .map(|(m, change, set_by)| {
                        let cells = (0..plan.runs.len())
                            .filter_map(|r| {
                                let (without, curve) = unchanged[r].as_ref()?;
                                let changed: Result<Measured, Why> = match (set_by[r], change) {
                                    (Some(by), _) => Err(m.lever.refused_by(by)),
                                    (None, Change::File(i)) => {
                                        headline::measure(&with[*i][r], &headline)
                                            .ok_or_else(not_here)
                                    }
                                    (None, Change::Odds(step)) => ladder
                                        .as_ref()
                                        .map_err(Clone::clone)
                                        .and_then(|l| l.step(r, *step))
                                        .and_then(|a| at(r, a)),
                                };
                                let worth = match changed {
                                    Err(why) => Worth::Unpriced(why),
                                    Ok(changed) => Worth::Priced {
                                        with: changed.estimate(),
                                        delta: headline::paired_difference(without, &changed),
                                        equivalent: match curve {
                                            Err(why) => Equivalent::Unavailable(why.clone()),
                                            Ok(curve) => {
                                                equivalent(&curve.points, &Level::of(&changed))
                                                    .map_or_else(
                                                        || Equivalent::Beyond(curve.beyond.clone()),
                                                        Equivalent::Steps,
                                                    )
                                            }
                                        },
                                    },
                                };
                                Some(Priced {
                                    run: r,
                                    base: without.estimate(),
                                    worth,
                                })
                            })
                            .collect();
                        (*m, cells)
                    })
                    .collect();
                HeadlineResult {
                    headline,
                    modifiers,
                }
            })
            .collect();
        Ok(Valuation {
            name: analysis.name.to_string(),
            file: analysis.path.display().to_string(),
            system: analysis.system.to_string(),
            plan,
            trials: analysis.trials,
            seed: analysis.seed,
            currency: levers.currency,
            headlines: results,
            reference: self.reference,
            skipped: self.skipped,
            exact,
        })
    }
}

/// The method, as every output states it: the paired difference, and how the equivalent
/// is read in this system's currency (odds columns, a setting's steps, or none).
pub fn method(currency: Option<(&str, &str)>) -> String {
    let paired = "paired difference of the two arms (same seed and blocks: common random numbers), 95% interval by Student's t on per-block differences (ratio-estimator standard error); exact where both arms are exact";
    let located = "the modifier's headline located between two neighbouring steps that exist (exact fractions where the system counts exactly) and interpolated linearly between them, the crossing nearest 0";
    match currency {
        Some(("odds", _)) => format!("{paired}. Equivalent: the headline read at every odds column of the rules as run (printed and added by the file), on the same run; {located}; past the first or last column: beyond the table"),
        Some((setting, unit)) => format!("{paired}. Equivalent in {unit}: the headline with {setting} moved -{CURRENCY_REACH}..+{CURRENCY_REACH} on the same run; {located}; past the steps tried: beyond them"),
        None => format!("{paired}. No equivalent: this system has no currency to count a modifier in"),
    }
}

/// How far a currency other than odds columns reaches each way.
const CURRENCY_REACH: i64 = 3;

/// Why a cell has no price, or no equivalent.
pub type Why = String;

/// What a modifier is worth at one run, for one headline.
pub enum Worth {
    /// The headline with the modifier, the paired difference, and its equivalent.
    Priced {
        with: Estimate,
        delta: Estimate,
        equivalent: Equivalent,
    },
    /// The modifier cannot be priced at this run (the plan sets the setting here; an odds
    /// step past the table's last column).
    Unpriced(Why),
}

/// The modifier's headline in the currency's steps.
#[derive(Clone, Debug, PartialEq)]
pub enum Equivalent {
    /// So many steps (a fraction of one between two neighbouring steps).
    Steps(f64),
    /// No step there is reaches it, in words ("beyond the table (1:1 … 3:1)").
    Beyond(String),
    /// No equivalent at this run, and why.
    Unavailable(Why),
}

/// One priced cell: a modifier at a run, for one headline.
pub struct Priced {
    pub run: usize,
    pub base: Estimate,
    pub worth: Worth,
}

pub struct HeadlineResult {
    pub headline: Headline,
    /// Per modifier: its cells, run by run.
    pub modifiers: Vec<(Modifier, Vec<Priced>)>,
}

/// A valuation: every modifier priced at every run, for every headline asked.
pub struct Valuation {
    /// The analysis's name (the report's identity).
    pub name: String,
    pub file: String,
    pub system: String,
    pub plan: Plan,
    pub trials: u64,
    pub seed: u64,
    pub currency: Option<(&'static str, &'static str)>,
    pub headlines: Vec<HeadlineResult>,
    pub reference: usize,
    /// Modifiers of the system's own list this file cannot take, and why.
    pub skipped: Vec<(String, String)>,
    /// Whether every arm's every headline is exact (so an evaluation without dice printed
    /// what simulating would have printed).
    pub exact: bool,
}

/// Where one run's arm at another setting comes from.
#[derive(Clone, Debug)]
enum At {
    /// The run itself, unchanged.
    Base,
    /// An arm of the pool of evaluated arms.
    Arm(usize),
    /// This step cannot be run here, and why.
    Missing(Why),
}

/// A run's odds, placed among its variant's odds columns.
struct OddsPlace {
    /// The variant's columns, ascending, as the file writes odds.
    labels: Vec<String>,
    /// The run's own column.
    own: usize,
    /// The run at each column (the own one is `At::Base`).
    columns: Vec<At>,
}

/// The odds columns of every run: its place among its variant's columns, or why it has none.
struct OddsLadder {
    runs: Vec<Result<OddsPlace, Why>>,
}

impl OddsLadder {
    /// The same run `step` columns along, or why there is none.
    fn step(&self, run: usize, step: i64) -> Result<&At, Why> {
        let place = self.runs[run].as_ref().map_err(Clone::clone)?;
        let to = place.own as i64 + step;
        usize::try_from(to)
            .ok()
            .and_then(|j| place.columns.get(j))
            .ok_or_else(|| {
                format!(
                    "beyond the table: {} {step:+} column(s) is past its {} column ({})",
                    place.labels[place.own],
                    if step > 0 { "last" } else { "first" },
                    place.labels.join(", ")
                )
            })
    }
}

/// Runs of `plan` by what tells them apart besides the odds: (variant, every other axis).
fn key_without(plan: &Plan, run: usize, axis: usize) -> (String, Vec<String>) {
    let r = &plan.runs[run];
    (
        r.variant.clone(),
        r.coordinates
            .iter()
            .enumerate()
            .filter(|(a, _)| *a != axis)
            .map(|(_, v)| v.to_string())
            .collect(),
    )
}

/// Plans the odds ladder of the analysis `document`: every run's column, the studies of the file at each
/// column of the rules (the file with its odds sweep holding that column alone), and the
/// runs of those studies that some run needs, in `jobs` (study index, run) to evaluate.
#[allow(clippy::type_complexity)]
fn plan_ladder(
    document: &Analysis,
    plan: &Plan,
) -> Result<(OddsLadder, Vec<Box<dyn Priceable>>, Vec<(usize, usize)>), Why> {
    let axis = plan
        .axes
        .iter()
        .position(|a| a == "odds")
        .ok_or_else(|| levers::NO_ODDS_SWEEP.to_string())?;
    // Every column any variant has, each run once per file.
    let mut union: Vec<(u32, u32)> = Vec::new();
    let mut own: Vec<Result<(Vec<(u32, u32)>, usize), Why>> = Vec::new();
    for run in &plan.runs {
        let columns = levers::odds_columns(document.doc, document.system, &run.variant)
            .ok_or_else(|| format!("{} battles have no odds columns", document.system))?;
        for &c in &columns {
            if !union.iter().any(|&u| levers::same_ratio(u, c)) {
                union.push(c);
            }
        }
        let labels = || {
            columns
                .iter()
                .map(|&c| levers::odds_label(document.doc, c))
                .collect::<Vec<_>>()
                .join(", ")
        };
        own.push(match &run.coordinates[axis] {
            AxisValue::Odds { larger, smaller } => columns
                .iter()
                .position(|&c| levers::same_ratio(c, (*larger, *smaller)))
                .map(|i| (columns.clone(), i))
                .ok_or_else(|| {
                    format!(
                        "odds {} are not a column of the table ({}), so they have no neighbouring columns",
                        levers::odds_label(document.doc, (*larger, *smaller)),
                        labels()
                    )
                }),
            other => Err(format!("odds {other} are not a column of the table")),
        });
    }
    let mut studies = Vec::new();
    let mut column_runs: Vec<Result<(usize, HashMap<(String, Vec<String>), usize>), Why>> =
        Vec::new();
    for &c in &union {
        let label = levers::odds_label(document.doc, c);
        let study = levers::at_odds(document.doc, c)
            .and_then(|doc| document.study(&doc, &format!("odds {label}")));
        column_runs.push(match study {
            Ok(study) => {
                let p = study.plan();
                let at = p.axes.iter().position(|a| a == "odds").expect("swept");
                let runs = (0..p.runs.len())
                    .map(|r| (key_without(&p, r, at), r))
                    .collect();
                studies.push(study);
                Ok((studies.len() - 1, runs))
            }
            Err(e) => Err(format!("the battle cannot be fought at {label}: {e}")),
        });
    }
    let mut jobs: Vec<(usize, usize)> = Vec::new();
    let mut job_of: HashMap<(usize, usize), usize> = HashMap::new();
    let runs = own
        .into_iter()
        .enumerate()
        .map(|(r, placed)| {
            let (columns, own) = placed?;
            let key = key_without(plan, r, axis);
            let columns_at = columns
                .iter()
                .enumerate()
                .map(|(j, &c)| {
                    if j == own {
                        return At::Base;
                    }
                    let u = union
                        .iter()
                        .position(|&u| levers::same_ratio(u, c))
                        .expect("in the union");
                    match &column_runs[u] {
                        Err(why) => At::Missing(why.clone()),
                        Ok((study, runs)) => match runs.get(&key) {
                            None => At::Missing(format!(
                                "no run at {} matches this one",
                                levers::odds_label(document.doc, c)
                            )),
                            Some(&run) => {
                                let job = *job_of.entry((*study, run)).or_insert_with(|| {
                                    jobs.push((*study, run));
                                    jobs.len() - 1
                                });
                                At::Arm(job)
                            }
                        },
                    }
                })
                .collect();
            Ok(OddsPlace {
                labels: columns
                    .iter()
                    .map(|&c| levers::odds_label(document.doc, c))
                    .collect(),
                own,
                columns: columns_at,
            })
        })
        .collect();
    Ok((OddsLadder { runs }, studies, jobs))
}

/// What the modifier changes: a changed file (its study's index), or a step along the
/// odds columns.
enum Change {
    File(usize),
    Odds(i64),
}
/// A run's currency curve: the headline at each step that exists, contiguous around step
/// 0, and what to say of a value no step reaches.
struct Curve {
    points: Vec<(i64, Level)>,
    beyond: String,
}

/// The steps around 0 that exist with no gap between them (`points` ascending by step,
/// step 0 present).
fn contiguous(points: Vec<(i64, Option<Level>)>) -> Vec<(i64, Level)> {
    let zero = points
        .iter()
        .position(|(k, l)| *k == 0 && l.is_some())
        .expect("step 0 is the run itself");
    let lo = (0..=zero)
        .rev()
        .take_while(|&i| points[i].1.is_some())
        .last()
        .expect("step 0");
    let hi = (zero..points.len())
        .take_while(|&i| points[i].1.is_some())
        .last()
        .expect("step 0");
    points
        .into_iter()
        .skip(lo)
        .take(hi - lo + 1)
        .map(|(k, l)| (k, l.expect("contiguous")))
        .collect()
}

/// The curve along a run's odds columns, each column's headline from `level_at`.
fn odds_curve(place: &OddsPlace, level_at: impl Fn(&At) -> Option<Level>) -> Curve {
    let points = contiguous(
        place
            .columns
            .iter()
            .enumerate()
            .map(|(j, a)| (j as i64 - place.own as i64, level_at(a)))
            .collect(),
    );
    let column = |k: i64| (place.own as i64 + k) as usize;
    let (lo, hi) = (column(points[0].0), column(points[points.len() - 1].0));
    let (first, last) = (&place.labels[lo], &place.labels[hi]);
    let beyond = if lo == 0 && hi == place.labels.len() - 1 {
        format!("beyond the table ({first} … {last})")
    } else {
        format!("beyond the columns this run can be fought at ({first} … {last})")
    };
    Curve { points, beyond }
}

/// The curve of a currency setting moved −3 … +3, each step's headline from `level_at`.
fn setting_curve(name: &str, unit: &str, level_at: impl Fn(i64) -> Option<Level>) -> Curve {
    let points = contiguous(
        (-CURRENCY_REACH..=CURRENCY_REACH)
            .map(|k| (k, level_at(k)))
            .collect(),
    );
    let (lo, hi) = (points[0].0, points[points.len() - 1].0);
    Curve {
        points,
        beyond: format!("beyond the steps tried ({name} {lo:+} … {hi:+}, in {unit})"),
    }
}

/// Where `target` falls on `curve` (contiguous steps, ascending): between two neighbouring
/// steps whose headlines it lies between (decided exactly where both are exact
/// fractions), interpolated linearly; the crossing nearest step 0. `None` where no two
/// neighbouring steps (nor step 0 itself) hold it.
pub fn equivalent(curve: &[(i64, Level)], target: &Level) -> Option<f64> {
    use std::cmp::Ordering;
    if curve
        .iter()
        .any(|(k, l)| *k == 0 && l.compare(target) == Ordering::Equal)
    {
        return Some(0.0);
    }
    let mut best: Option<f64> = None;
    for pair in curve.windows(2) {
        let ((a, la), (b, lb)) = (&pair[0], &pair[1]);
        debug_assert_eq!(*b, a + 1, "neighbouring steps");
        if !target.between(la, lb) {
            continue;
        }
        let x = match target.position(la, lb) {
            Some(t) => *a as f64 + t,
            // Flat at the target: the end nearer 0.
            None if a.abs() <= b.abs() => *a as f64,
            None => *b as f64,
        };
        if best.is_none_or(|y| x.abs() < y.abs()) {
            best = Some(x);
        }
    }
    best
}

/// A run as `variant=… axis=…` pairs.
pub fn run_pairs(plan: &Plan, run: usize) -> Vec<(String, String)> {
    let mut pairs = vec![("variant".to_string(), plan.runs[run].variant.clone())];
    pairs.extend(plan.describe(run));
    pairs
}

/// A run as every output labels it (`variant=even size=1`).
pub fn run_label(plan: &Plan, run: usize) -> String {
    run_pairs(plan, run)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A number as every output prints it: six decimals, never `-0.000000`.
pub fn num(v: f64) -> String {
    let s = format!("{v:.6}");
    if s == "-0.000000" {
        "0.000000".into()
    } else {
        s
    }
}

impl Equivalent {
    /// The number of steps, where there is one.
    pub fn steps(&self) -> Option<f64> {
        match self {
            Equivalent::Steps(x) => Some(*x),
            _ => None,
        }
    }

    /// In words, with the currency's unit.
    pub fn text(&self, unit: &str) -> String {
        match self {
            Equivalent::Steps(x) => format!("{x:+.2} {unit}"),
            Equivalent::Beyond(words) => words.clone(),
            Equivalent::Unavailable(why) => format!("no equivalent: {why}"),
        }
    }
}

impl Priced {
    pub fn with(&self) -> Option<&Estimate> {
        match &self.worth {
            Worth::Priced { with, .. } => Some(with),
            Worth::Unpriced(_) => None,
        }
    }

    pub fn delta(&self) -> Option<&Estimate> {
        match &self.worth {
            Worth::Priced { delta, .. } => Some(delta),
            Worth::Unpriced(_) => None,
        }
    }

    pub fn equivalent(&self) -> Option<&Equivalent> {
        match &self.worth {
            Worth::Priced { equivalent, .. } => Some(equivalent),
            Worth::Unpriced(_) => None,
        }
    }

    /// Why there is no price, or no number for the equivalent ("" where there are both).
    pub fn note(&self, v: &Valuation) -> String {
        match &self.worth {
            Worth::Unpriced(why) => format!("not priced: {why}"),
            Worth::Priced { equivalent, .. } => match (v.currency, equivalent) {
                (Some((_, unit)), Equivalent::Beyond(_) | Equivalent::Unavailable(_)) => {
                    equivalent.text(unit)
                }
                _ => String::new(),
            },
        }
    }
}

/// The answer as `battlelab value` prints it (`--format text`).
pub fn text_output(v: &Valuation) -> String {
    let mut out = format!(
        "value: {} ({}), {} trials per run and arm, seed {}\nmethod: {}\n",
        v.file,
        v.system,
        v.trials,
        v.seed,
        method(v.currency)
    );
    for (m, why) in &v.skipped {
        out.push_str(&format!("not priced: {m}: {why}\n"));
    }
    for h in &v.headlines {
        out.push_str(&format!("\n{}\n", h.headline.name));
        for (m, cells) in &h.modifiers {
            out.push_str(&format!("  {} ({})\n", m.name(), m.lever.meaning));
            for c in cells {
                let label = run_label(&v.plan, c.run);
                match &c.worth {
                    Worth::Unpriced(why) => out.push_str(&format!(
                        "    {label:<40} {} -> not priced: {why}\n",
                        num(c.base.best())
                    )),
                    Worth::Priced {
                        with,
                        delta,
                        equivalent,
                    } => {
                        let exact = if delta.exact.is_some() { " exact" } else { "" };
                        let equivalent = v
                            .currency
                            .map(|(_, unit)| format!("  = {}", equivalent.text(unit)))
                            .unwrap_or_default();
                        out.push_str(&format!(
                            "    {label:<40} {} -> {}  delta {} [{}, {}]{exact}{equivalent}\n",
                            num(c.base.best()),
                            num(with.best()),
                            num(delta.best()),
                            num(delta.ci_low),
                            num(delta.ci_high),
                        ));
                    }
                }
            }
        }
    }
    out
}

fn headline_json(v: &Valuation, h: &HeadlineResult) -> Value {
    json!({
        "headline": h.headline.name,
        "key": h.headline.key,
        "modifiers": h.modifiers.iter().map(|(m, cells)| json!({
            "name": m.name(),
            "side": m.side(),
            "meaning": m.lever.meaning,
            "runs": cells.iter().map(|c| json!({
                "run": run_pairs(&v.plan, c.run).into_iter().map(|(k, s)| (k, Value::String(s))).collect::<serde_json::Map<_, _>>(),
                "base": c.base.best(),
                "with": c.with().map(Estimate::best),
                "delta": c.delta().map(Estimate::best),
                "ci_low": c.delta().map(|d| d.ci_low),
                "ci_high": c.delta().map(|d| d.ci_high),
                "exact_delta": c.delta().and_then(|d| d.exact),
                "not_priced": match &c.worth { Worth::Unpriced(why) => Some(why), Worth::Priced { .. } => None },
                "equivalent": v.currency.zip(c.equivalent()).map(|((_, unit), e)| json!({
                    "unit": unit,
                    "value": e.steps(),
                    "note": match e { Equivalent::Steps(_) => None, e => Some(e.text(unit)) },
                })),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The answer as `battlelab value --format json` prints it (and `value.json` holds).
pub fn to_json(v: &Valuation) -> Value {
    let mut object = match v.headlines.as_slice() {
        [one] => headline_json(v, one),
        many => json!({"headlines": many.iter().map(|h| headline_json(v, h)).collect::<Vec<_>>()}),
    };
    let map = object.as_object_mut().expect("an object");
    map.insert("file".into(), json!(v.file));
    map.insert("system".into(), json!(v.system));
    map.insert("trials".into(), json!(v.trials));
    map.insert("seed".into(), json!(v.seed));
    map.insert("method".into(), json!(method(v.currency)));
    map.insert(
        "skipped".into(),
        json!(v
            .skipped
            .iter()
            .map(|(m, why)| json!({"name": m, "why": why}))
            .collect::<Vec<_>>()),
    );
    object
}

/// The answer in Markdown, as `tables.md` holds it (`--format md`): one table per
/// headline, its rows [`markdown_rows`].
pub fn markdown(v: &Valuation) -> String {
    let mut out = format!(
        "## What is it worth?\n\n{} ({}), {} trials per run and arm, seed {}.\n\nMethod: {}.\n",
        v.file,
        v.system,
        v.trials,
        v.seed,
        method(v.currency)
    );
    for h in &v.headlines {
        out.push_str(&format!(
            "\n### {}\n\n| run | modifier | without | with | difference | 95% interval | {} |\n|---|---|---|---|---|---|---|\n",
            h.headline.name,
            v.currency.map_or("equivalent".to_string(), |(_, u)| format!("in {u}"))
        ));
        for row in markdown_rows(v, h) {
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
    }
    out
}

/// The rows of one headline's table in `tables.md`, each cell's text as printed: run,
/// modifier, without, with, difference, 95% interval, equivalent. The page's repriced
/// tables are these cells.
pub fn markdown_rows(v: &Valuation, h: &HeadlineResult) -> Vec<[String; 7]> {
    let mut rows = Vec::new();
    for (m, cells) in &h.modifiers {
        for c in cells {
            let (with, difference, interval, equivalent) = match &c.worth {
                Worth::Unpriced(why) => (
                    "—".to_string(),
                    format!("not priced: {why}"),
                    "—".to_string(),
                    "—".to_string(),
                ),
                Worth::Priced {
                    with,
                    delta,
                    equivalent,
                } => (
                    num(with.best()),
                    format!(
                        "{}{}",
                        num(delta.best()),
                        if delta.exact.is_some() {
                            " (exact)"
                        } else {
                            ""
                        }
                    ),
                    format!("[{}, {}]", num(delta.ci_low), num(delta.ci_high)),
                    v.currency
                        .map_or("—".to_string(), |(_, unit)| equivalent.text(unit)),
                ),
            };
            rows.push([
                run_label(&v.plan, c.run),
                m.name(),
                num(c.base.best()),
                with,
                difference,
                interval,
                equivalent,
            ]);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_method_names_the_currency_the_system_has_and_no_other() {
        let odds = method(Some(("odds", "odds columns")));
        assert!(odds.contains("every odds column"), "{odds}");
        let skill = method(Some(("a.skill", "points of skill")));
        assert!(
            skill.contains("in points of skill") && skill.contains("a.skill moved -3..+3"),
            "{skill}"
        );
        assert!(!skill.contains("odds"), "{skill}");
        let none = method(None);
        assert!(
            none.contains("No equivalent") && !none.contains("odds"),
            "{none}"
        );
        for m in [odds, skill, none] {
            assert!(m.starts_with("paired difference"), "{m}");
        }
    }

    fn level(x: f64) -> Level {
        Level {
            value: x,
            fraction: None,
        }
    }

    fn curve(points: &[(i64, f64)]) -> Vec<(i64, Level)> {
        points.iter().map(|&(k, p)| (k, level(p))).collect()
    }

    #[test]
    fn the_equivalent_is_the_nearest_crossing_of_the_curve() {
        let c = curve(&[(-1, 0.1), (0, 0.2), (1, 0.4), (2, 0.5)]);
        assert_eq!(equivalent(&c, &level(0.2)), Some(0.0));
        assert!((equivalent(&c, &level(0.3)).unwrap() - 0.5).abs() < 1e-12);
        assert!((equivalent(&c, &level(0.45)).unwrap() - 1.5).abs() < 1e-12);
        assert!((equivalent(&c, &level(0.15)).unwrap() + 0.5).abs() < 1e-12);
        assert_eq!(equivalent(&c, &level(0.5)), Some(2.0));
        assert_eq!(equivalent(&c, &level(0.9)), None);
        assert_eq!(equivalent(&c, &level(0.05)), None);
    }

    #[test]
    fn a_gap_in_the_steps_is_never_bridged() {
        let points = vec![
            (-1, Some(level(0.1))),
            (0, Some(level(0.2))),
            (1, None),
            (2, Some(level(0.6))),
        ];
        let c = contiguous(points);
        assert_eq!(c.iter().map(|p| p.0).collect::<Vec<_>>(), vec![-1, 0]);
        assert_eq!(equivalent(&c, &level(0.4)), None);
    }

    #[test]
    fn exact_levels_locate_the_crossing_exactly() {
        let exact = |t: &str| Level::target(t).unwrap();
        let c = vec![(-1, exact("1/6")), (0, exact("1/2")), (1, exact("2/3"))];
        // 1/3 lies a half of the way from 1/6 to 1/2: −0.5 exactly.
        assert_eq!(equivalent(&c, &exact("1/3")), Some(-0.5));
        assert_eq!(equivalent(&c, &exact("2/3")), Some(1.0));
        assert_eq!(equivalent(&c, &exact("0.7")), None);
    }
}
