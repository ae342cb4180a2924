//! `battlelab value FILE`: what is a +1 worth? Every modifier priced at every run of the
//! plan — the headline without and with it, the paired difference with its 95% interval
//! (exact where the runs are exact), and its equivalent in the system's own currency.
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

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use battlelab::analysis::AxisValue;
use battlelab::engine::compare::Arm;
use battlelab::engine::headline::{self, Estimate, Headline, Level, Measured};
use battlelab::engine::Plan;
use battlelab::levers::{self, Modifier, Place, SystemLevers};
use battlelab::progress::ProgressWatcher;
use battlelab::report;
use battlelab::sim::RunControl;
use serde_json::{json, Value};

use super::{emit, interruptible, pool, usage, writing_report};
use crate::cli::Format;

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

/// A document evaluated: every run's arm (or the runs asked for), in order.
pub struct Evaluated {
    pub arms: Vec<Arm>,
}

/// The analysis file as a TOML document, with the system's levers.
pub struct Document {
    pub path: PathBuf,
    /// The file as written.
    pub text: String,
    /// The file as validated.
    pub study: Box<dyn battlelab::systems::Study>,
    pub doc: toml::Table,
    pub system: String,
    pub levers: &'static SystemLevers,
    pub trials: u64,
    pub seed: u64,
}
impl Document {
    /// Loads and validates `path` (exit 2 on a bad file), with `--trials`/`--seed`.
    pub fn load(path: &Path, trials: Option<u64>, seed: Option<u64>) -> Result<(Self, Plan)> {
        let loaded = battlelab::systems::load(path)?;
        let header = loaded.study.header();
        let system = header.system.to_string();
        let doc: toml::Table = loaded.analysis.text.parse().unwrap_or_default();
        let levers = levers::for_file(path, &doc, &system).ok_or_else(|| {
            usage(format!(
                "{}: {system} analyses have no settings to price or vary; value and solve serve {}",
                path.display(),
                levers::served().join(", ")
            ))
        })?;
        let doc: toml::Table = loaded
            .analysis
            .text
            .parse()
            .with_context(|| format!("{} is not TOML", path.display()))?;
        let plan = loaded.study.plan();
        let (trials, seed) = (trials.unwrap_or(header.trials), seed.unwrap_or(header.seed));
        Ok((
            Self {
                path: path.to_path_buf(),
                text: loaded.analysis.text,
                study: loaded.study,
                doc,
                system,
                levers,
                trials,
                seed,
            },
            plan,
        ))
    }

    /// Parses a changed document (`what` names the change in errors).
    pub fn study(
        &self,
        doc: &toml::Table,
        what: &str,
    ) -> Result<Box<dyn battlelab::systems::Study>> {
        let text = toml::to_string(doc).context("writing the changed analysis")?;
        battlelab::systems::parse(&self.path, &text).map_err(|e| {
            usage(format!(
                "{what} cannot be applied to {}: {}",
                self.path.display(),
                strip_file(&e.to_string())
            ))
            .into()
        })
    }

    /// Every run of `study` (or only `runs`), every block, exact where the run is exact.
    pub fn evaluate(
        &self,
        study: &dyn battlelab::systems::Study,
        runs: Option<&[usize]>,
        control: &RunControl,
    ) -> Result<Evaluated> {
        let all: Vec<usize> = (0..study.plan().runs.len()).collect();
        let runs = runs.unwrap_or(&all);
        let blocks = battlelab::engine::driver::blocks_per_run(self.trials);
        let arms = runs
            .iter()
            .map(|&r| study.arm_blocks(r, 0..blocks, self.trials, self.seed, true, control))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Evaluated { arms })
    }
}

/// An error from the changed file without its (misleading) file and line prefix.
fn strip_file(message: &str) -> String {
    match message.split_once(": field `") {
        Some((_, rest)) => format!("field `{rest}"),
        None => message.to_string(),
    }
}

/// Why a cell has no price, or no equivalent.
type Why = String;

/// What a modifier is worth at one run, for one headline.
enum Worth {
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
struct Priced {
    run: usize,
    base: Estimate,
    worth: Worth,
}

struct HeadlineResult {
    headline: Headline,
    /// Per modifier: its cells, run by run.
    modifiers: Vec<(Modifier, Vec<Priced>)>,
}

struct Valuation {
    /// The analysis's name (the report's identity).
    name: String,
    file: String,
    system: String,
    plan: Plan,
    trials: u64,
    seed: u64,
    currency: Option<(&'static str, &'static str)>,
    headlines: Vec<HeadlineResult>,
    reference: usize,
    /// Modifiers of the system's own list this file cannot take, and why.
    skipped: Vec<(String, String)>,
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

/// Plans the odds ladder of `document`: every run's column, the studies of the file at each
/// column of the rules (the file with its odds sweep holding that column alone), and the
/// runs of those studies that some run needs, in `jobs` (study index, run) to evaluate.
#[allow(clippy::type_complexity)]
fn plan_ladder(
    document: &Document,
    plan: &Plan,
) -> Result<
    (
        OddsLadder,
        Vec<Box<dyn battlelab::systems::Study>>,
        Vec<(usize, usize)>,
    ),
    Why,
> {
    let axis = plan
        .axes
        .iter()
        .position(|a| a == "odds")
        .ok_or_else(|| levers::NO_ODDS_SWEEP.to_string())?;
    // Every column any variant has, each run once per file.
    let mut union: Vec<(u32, u32)> = Vec::new();
    let mut own: Vec<Result<(Vec<(u32, u32)>, usize), Why>> = Vec::new();
    for run in &plan.runs {
        let columns = levers::odds_columns(&document.doc, &document.system, &run.variant)
            .ok_or_else(|| format!("{} battles have no odds columns", document.system))?;
        for &c in &columns {
            if !union.iter().any(|&u| levers::same_ratio(u, c)) {
                union.push(c);
            }
        }
        let labels = || {
            columns
                .iter()
                .map(|&c| levers::odds_label(&document.doc, c))
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
                        levers::odds_label(&document.doc, (*larger, *smaller)),
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
        let label = levers::odds_label(&document.doc, c);
        let study = levers::at_odds(&document.doc, c)
            .map_err(|e| anyhow::anyhow!(e))
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
                                levers::odds_label(&document.doc, c)
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
                    .map(|&c| levers::odds_label(&document.doc, c))
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

pub fn value(args: crate::cli::ValueArgs) -> Result<()> {
    let (document, plan) = Document::load(&args.file, args.trials, args.seed)?;
    let name = document.study.header().name.to_string();
    if let Some(out) = &args.out {
        // Before any work.
        battlelab::output::check_target(
            out,
            &[args.file.as_path()],
            &battlelab::output::Identity::new("value", &name),
            args.replace,
        )?;
    }
    let (pool, _) = pool(args.threads)?;
    let control = interruptible();
    let text = document.text.clone();
    // `[value]`, checked when the file was loaded; read again for its parts.
    let spec = levers::value_settings(&args.file, &text, &document.system, &plan)?;
    let system = document.system.clone();
    let levers = document.levers;

    // The modifiers: the command line, else [value], else the system's own list.
    let modifiers: Vec<Modifier> = if !args.modifiers.is_empty() {
        args.modifiers
            .iter()
            .map(|m| {
                Modifier::parse(m, levers, &system).map_err(|e| usage(format!("--modifier: {e}")))
            })
            .collect::<Result<_, _>>()?
    } else if let Some(list) = &spec.modifiers {
        list.clone()
    } else {
        levers
            .default_modifiers
            .iter()
            .map(|m| Modifier::parse(m, levers, &system).expect("the catalog's own modifiers"))
            .collect()
    };

    // The headlines.
    let all = levers.headlines.clone();
    if all.is_empty() {
        bail!(usage(format!(
            "{system} tables have no headline to price; use `battlelab solve` with an outcome, or `battlelab compare`"
        )));
    }
    let wanted = args.headline.clone().or_else(|| spec.headline.clone());
    let headlines: Vec<Headline> = match wanted.as_deref() {
        None => vec![all[0].clone()],
        Some("all") => all.clone(),
        Some(key) => vec![all.iter().find(|h| h.key == key).cloned().ok_or_else(|| {
            usage(format!(
                "no headline \"{}\" for {system}; headlines: {}, or all",
                battlelab::limits::echo(key),
                all.iter()
                    .map(|h| h.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?],
    };

    // The reference run of the tornado charts.
    let reference = spec.reference;

    // The odds ladder, where odds are stepped or counted in.
    let odds_wanted = modifiers
        .iter()
        .any(|m| matches!(m.lever.place, Place::Odds))
        || levers.currency.is_some_and(|(c, _)| c == "odds");
    let (ladder, ladder_studies, ladder_jobs) = if odds_wanted {
        match plan_ladder(&document, &plan) {
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

    // Every changed document is checked before any dice are rolled. A modifier the user
    // named must apply; one of the system's own list that this file cannot take (a morale
    // already at its top) is skipped, and said so. A modifier the plan sets at every run
    // is refused: it would price nothing.
    let chosen = !args.modifiers.is_empty() || spec.modifiers.is_some();
    let mut studies = Vec::new();
    let mut priced: Vec<(Modifier, Change, Vec<Option<&'static levers::SetBy>>)> = Vec::new();
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
            bail!(usage(format!("--modifier {}: {why}", m.name())));
        }
        let change = if matches!(m.lever.place, Place::Odds) {
            match &ladder {
                Ok(_) => Ok(Change::Odds(m.step)),
                Err(why) => Err(usage(format!("{} cannot be applied: {why}", m.name())).into()),
            }
        } else {
            levers::shifted(&document.doc, m.lever, m.step)
                .map_err(|e| {
                    anyhow::Error::from(usage(format!("{} cannot be applied: {e}", m.name())))
                })
                .and_then(|doc| document.study(&doc, &m.name()))
                .and_then(|study| {
                    if study.plan().runs.len() != plan.runs.len() {
                        bail!(usage(format!(
                            "{} changes the analysis's runs ({} instead of {}); price it on a file where it moves a setting, not the grid",
                            m.name(),
                            study.plan().runs.len(),
                            plan.runs.len()
                        )));
                    }
                    studies.push(study);
                    Ok(Change::File(studies.len() - 1))
                })
        };
        match change {
            Ok(change) => priced.push((*m, change, set_by)),
            Err(e) if !chosen => skipped.push((m.name(), e.to_string())),
            Err(e) => return Err(e),
        }
    }
    if !matches!(args.format, Format::Text) {
        for (name, why) in &skipped {
            super::note(&format!("not priced: {name}: {why}"));
        }
    }
    if priced.is_empty() {
        bail!(usage(format!(
            "none of the modifiers applies to {}; name some with --modifier",
            args.file.display()
        )));
    }

    // The currency curve, where the currency is a setting (odds are the ladder's).
    let mut currency_studies: Vec<(i64, Box<dyn battlelab::systems::Study>)> = Vec::new();
    let mut currency_set_by = vec![None; plan.runs.len()];
    // Why the currency takes no step at all in this file, where it takes none.
    let mut currency_stuck: Option<Why> = None;
    if let Some((name, _)) = levers.currency.filter(|(c, _)| *c != "odds") {
        let lever = levers
            .lever(name, &system)
            .expect("the catalog's own currency");
        currency_set_by = levers::overridden(&plan, lever);
        let mut first_refusal = None;
        for k in (-CURRENCY_REACH..=CURRENCY_REACH).filter(|&k| k != 0) {
            // A step the file cannot take (below 1 unit, past a stat's top) is left out.
            let study = levers::shifted(&document.doc, lever, k)
                .map_err(|e| anyhow::anyhow!(e))
                .and_then(|doc| document.study(&doc, name));
            match study {
                Ok(study) if study.plan().runs.len() == plan.runs.len() => {
                    currency_studies.push((k, study))
                }
                Ok(_) => {}
                Err(e) => {
                    first_refusal.get_or_insert(e.to_string());
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

    let arms = (1 + studies.len() + currency_studies.len()) as u64 * plan.runs.len() as u64
        + ladder_jobs.len() as u64;
    let watcher = ProgressWatcher::start(Arc::clone(&control), arms * document.trials, args.quiet);
    let evaluated = pool.install(|| -> Result<_> {
        let base = document.evaluate(&*document.study, None, &control)?;
        let with = studies
            .iter()
            .map(|s| document.evaluate(&**s, None, &control))
            .collect::<Result<Vec<_>>>()?;
        let curve = currency_studies
            .iter()
            .map(|(k, s)| Ok((*k, document.evaluate(&**s, None, &control)?)))
            .collect::<Result<Vec<_>>>()?;
        let columns = ladder_jobs
            .iter()
            .map(|&(s, r)| {
                Ok(document
                    .evaluate(&*ladder_studies[s], Some(&[r]), &control)?
                    .arms
                    .remove(0))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((base, with, curve, columns))
    });
    watcher.finish();
    let (base, with, curve, columns) = evaluated?;

    let results = headlines
        .into_iter()
        .map(|headline| {
            let not_here = || format!("{} is not an outcome there", headline.name);
            let at = |run: usize, at: &At| -> Result<Measured, Why> {
                match at {
                    At::Base => headline::measure(&base.arms[run], &headline).ok_or_else(not_here),
                    At::Arm(i) => headline::measure(&columns[*i], &headline).ok_or_else(not_here),
                    At::Missing(why) => Err(why.clone()),
                }
            };
            // Per run, once for every modifier: the headline without a change, and the
            // currency curve through it (contiguous steps around 0), or why there is none.
            let unchanged: Vec<Option<(Measured, Result<Curve, Why>)>> = (0..plan.runs.len())
                .map(|r| {
                    let without = headline::measure(&base.arms[r], &headline)?;
                    let curve = match levers.currency {
                        None => Err(String::new()),
                        Some(("odds", _)) => ladder
                            .as_ref()
                            .map_err(Clone::clone)
                            .and_then(|l| l.runs[r].as_ref().map_err(Clone::clone))
                            .map(|place| {
                                odds_curve(place, |a| at(r, a).ok().map(|m| Level::of(&m)))
                            }),
                        Some((name, unit)) => match (currency_set_by[r], &currency_stuck) {
                            (Some(by), _) => Err(format!("{name} is set by {} here", by.what)),
                            (None, Some(why)) => Err(why.clone()),
                            (None, None) => Ok(setting_curve(name, unit, |k| {
                                if k == 0 {
                                    return Some(Level::of(&without));
                                }
                                let (_, e) = curve.iter().find(|(s, _)| *s == k)?;
                                headline::measure(&e.arms[r], &headline).map(|m| Level::of(&m))
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
                                    headline::measure(&with[*i].arms[r], &headline)
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
    let valuation = Valuation {
        name,
        file: args.file.display().to_string(),
        system,
        plan,
        trials: document.trials,
        seed: document.seed,
        currency: levers.currency,
        headlines: results,
        reference,
        skipped,
    };
    if let Some(out) = &args.out {
        writing_report(out, || write_report(&valuation, out, &text))?;
    }
    emit(&match args.format {
        Format::Text => text_output(&valuation),
        Format::Csv => csv(&valuation),
        Format::Json => serde_json::to_string_pretty(&to_json(&valuation)).expect("JSON") + "\n",
        Format::Md => markdown(&valuation),
    })
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

fn run_pairs(plan: &Plan, run: usize) -> Vec<(String, String)> {
    let mut pairs = vec![("variant".to_string(), plan.runs[run].variant.clone())];
    pairs.extend(plan.describe(run));
    pairs
}

fn run_label(plan: &Plan, run: usize) -> String {
    run_pairs(plan, run)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn num(v: f64) -> String {
    let s = format!("{v:.6}");
    if s == "-0.000000" {
        "0.000000".into()
    } else {
        s
    }
}

impl Equivalent {
    /// The number of steps, where there is one.
    fn steps(&self) -> Option<f64> {
        match self {
            Equivalent::Steps(x) => Some(*x),
            _ => None,
        }
    }

    /// In words, with the currency's unit.
    fn text(&self, unit: &str) -> String {
        match self {
            Equivalent::Steps(x) => format!("{x:+.2} {unit}"),
            Equivalent::Beyond(words) => words.clone(),
            Equivalent::Unavailable(why) => format!("no equivalent: {why}"),
        }
    }
}

impl Priced {
    fn with(&self) -> Option<&Estimate> {
        match &self.worth {
            Worth::Priced { with, .. } => Some(with),
            Worth::Unpriced(_) => None,
        }
    }

    fn delta(&self) -> Option<&Estimate> {
        match &self.worth {
            Worth::Priced { delta, .. } => Some(delta),
            Worth::Unpriced(_) => None,
        }
    }

    fn equivalent(&self) -> Option<&Equivalent> {
        match &self.worth {
            Worth::Priced { equivalent, .. } => Some(equivalent),
            Worth::Unpriced(_) => None,
        }
    }

    /// Why there is no price, or no number for the equivalent ("" where there are both).
    fn note(&self, v: &Valuation) -> String {
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

fn text_output(v: &Valuation) -> String {
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

fn csv_header(v: &Valuation) -> Vec<String> {
    let mut header: Vec<String> = ["headline", "modifier", "side", "variant"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.extend(v.plan.axes.iter().cloned());
    header.extend(
        [
            "base",
            "with",
            "delta",
            "ci_low",
            "ci_high",
            "exact_delta",
            "equivalent",
            "equivalent_unit",
            "note",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    header
}

fn csv(v: &Valuation) -> String {
    let field = battlelab::table::csv_field;
    let number = |x: Option<f64>| x.map_or(String::new(), |x| x.to_string());
    let mut out = csv_header(v)
        .iter()
        .map(|s| field(s))
        .collect::<Vec<_>>()
        .join(",")
        + "\n";
    for h in &v.headlines {
        for (m, cells) in &h.modifiers {
            for c in cells {
                let mut row = vec![
                    h.headline.key.clone(),
                    m.name(),
                    m.side().to_string(),
                    v.plan.runs[c.run].variant.clone(),
                ];
                row.extend(v.plan.runs[c.run].coordinates.iter().map(|x| match x {
                    AxisValue::Unset => String::new(),
                    x => x.to_string(),
                }));
                row.extend([
                    c.base.best().to_string(),
                    number(c.with().map(Estimate::best)),
                    number(c.delta().map(Estimate::best)),
                    number(c.delta().map(|d| d.ci_low)),
                    number(c.delta().map(|d| d.ci_high)),
                    number(c.delta().and_then(|d| d.exact)),
                    number(c.equivalent().and_then(Equivalent::steps)),
                    v.currency.map_or(String::new(), |(_, u)| u.to_string()),
                    c.note(v),
                ]);
                out.push_str(&row.iter().map(|s| field(s)).collect::<Vec<_>>().join(","));
                out.push('\n');
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

fn to_json(v: &Valuation) -> Value {
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

fn markdown(v: &Valuation) -> String {
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
                out.push_str(&format!(
                    "| {} | {} | {} | {with} | {difference} | {interval} | {equivalent} |\n",
                    run_label(&v.plan, c.run),
                    m.name(),
                    num(c.base.best()),
                ));
            }
        }
    }
    out
}

fn write_report(v: &Valuation, out: &Path, analysis: &str) -> Result<()> {
    use battlelab::report::frame::{ColumnKind, LongFrame};
    report::write_atomically(out, |dir| {
        let axes: Vec<&str> = v.plan.axes.iter().map(String::as_str).collect();
        let runs: Vec<&[AxisValue]> = v
            .plan
            .runs
            .iter()
            .map(|r| r.coordinates.as_slice())
            .collect();
        let mut frame = LongFrame::new(&axes).typed_by(&runs).with_columns(&[
            ("headline", ColumnKind::Text),
            ("modifier", ColumnKind::Text),
            ("side", ColumnKind::Text),
            ("base", ColumnKind::Float),
            ("with", ColumnKind::Float),
            ("delta", ColumnKind::Float),
            ("ci_low", ColumnKind::Float),
            ("ci_high", ColumnKind::Float),
            ("exact_delta", ColumnKind::Float),
            ("equivalent", ColumnKind::Float),
            ("equivalent_unit", ColumnKind::Text),
            ("note", ColumnKind::Text),
        ]);
        for h in &v.headlines {
            for (m, cells) in &h.modifiers {
                for c in cells {
                    let run = &v.plan.runs[c.run];
                    frame
                        .row(&run.variant, &run.coordinates)
                        .text("headline", &h.headline.key)
                        .text("modifier", &m.name())
                        .text("side", m.side())
                        .float("base", Some(c.base.best()))
                        .float("with", c.with().map(Estimate::best))
                        .float("delta", c.delta().map(Estimate::best))
                        .float("ci_low", c.delta().map(|d| d.ci_low))
                        .float("ci_high", c.delta().map(|d| d.ci_high))
                        .float("exact_delta", c.delta().and_then(|d| d.exact))
                        .float("equivalent", c.equivalent().and_then(Equivalent::steps))
                        .text("equivalent_unit", v.currency.map_or("", |(_, u)| u))
                        .text("note", &c.note(v))
                        .finish();
                }
            }
        }
        let mut df = frame.build(&v.system).map_err(report::frame_error(dir))?;
        report::write_frame(dir, "value", &mut df)?;
        for h in &v.headlines {
            let bars: Vec<battlelab::chart::TornadoBar> = h
                .modifiers
                .iter()
                .filter_map(|(m, cells)| {
                    let c = cells.iter().find(|c| c.run == v.reference)?;
                    let delta = c.delta()?;
                    Some(battlelab::chart::TornadoBar {
                        label: m.name(),
                        value: delta.best(),
                        ci_low: delta.ci_low,
                        ci_high: delta.ci_high,
                    })
                })
                .collect();
            battlelab::chart::tornado(
                &dir.join(format!(
                    "tornado_{}",
                    battlelab::analysis::slug(&h.headline.key)
                )),
                &format!("{} at {}", h.headline.name, run_label(&v.plan, v.reference)),
                &format!("change in {}", h.headline.name),
                &bars,
            )?;
        }
        report::write_text(dir, "tables.md", &markdown(v))?;
        report::write_text(
            dir,
            "value.json",
            &(serde_json::to_string_pretty(&to_json(v)).expect("JSON") + "\n"),
        )?;
        report::write_text(dir, "analysis.toml", analysis)?;
        report::write_manifest(
            dir,
            &json!({"tool": "battlelab", "kind": "value", "name": v.name, "analysis": v.file, "system": v.system, "seed": v.seed, "trials": v.trials}),
        )?;
        // The panel recomputes the analysis's runs (the prices are this page's own).
        let source =
            report::tryit::Source::of_report(Path::new(&v.file), analysis, "pricing", "value");
        report::index::write_index_with(dir, None, None, Some(&source))
    })?;
    Ok(())
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
