//! The whole-map setup study (docs/systems/setup.md): every state rolls its initial forces;
//! what do the states and the coalitions start with?
//!
//! Why this module exists: a designer balancing a random setup needs the spread of each
//! coalition's starting strength, not one roll. Each state's roll is exact (six rows), each
//! coalition's totals are exact by convolution, and the simulation of whole maps is held
//! against them.
//!
//! ```toml
//! system = "setup"
//! seed = 1792
//!
//! [[state]]
//! name = "Blue"
//! kind = "major"        # major | minor
//! coalition = "Allies"
//!
//! [[state]]
//! name = "a"
//! kind = "minor"
//! port = false          # [option] minor states only; default true
//! coalition = "Neutral"
//! ```

pub mod derived;
pub mod map;
pub mod one_roll;
#[doc(hidden)]
pub mod scenarios;

use std::path::Path;

use serde::Deserialize;
use serde_json::json;
use toml::Spanned;

use crate::analysis::{self, AnalysisError, AxisValue, Source};
use crate::dice::DiceStream;
use crate::header::{analysis_file, AnalysisHeader};
use crate::keys::{self, key, KeyDoc, SystemDoc, Ty, ValueDoc, REQUIRED};
use crate::sim::{Interrupted, RunControl};
use crate::systems::setup::map::{
    exact_total, rows, CoalitionCounts, CoalitionMap, MapState, Quantity, StateKind,
};

/// Most states on one map.
pub const MAX_STATES: usize = 64;

/// A validated setup study.
#[derive(Debug, Clone)]
pub struct SetupStudy {
    pub header: AnalysisHeader,
    pub states: Vec<MapState>,
    pub coalitions: Vec<String>,
}

analysis_file! {
    struct SetupFile {
        state: Option<Vec<StateSpec>>,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateSpec {
    name: Spanned<String>,
    kind: Spanned<String>,
    coalition: Option<Spanned<String>>,
    port: Option<Spanned<bool>>,
}

/// Every key of a setup file (`battlelab keys setup`), beside the structs that parse them.
pub const KEYS: &[&[KeyDoc]] = &[keys::HEADER, SETUP_KEYS, keys::EXPECT_VALUE];

const SETUP_KEYS: &[KeyDoc] = &[
    key(
        "[[state]].name",
        Ty::Text,
        REQUIRED,
        "the state's name (1 to 64 states)",
        "\"Blue\"",
    ),
    key(
        "[[state]].kind",
        Ty::OneOf(&["major", "minor"]),
        REQUIRED,
        "major or minor state (picks its initial-forces table)",
        "\"minor\"",
    ),
    key(
        "[[state]].coalition",
        Ty::Text,
        "the state's own name",
        "the coalition whose totals it adds to",
        "\"North\"",
    ),
    key(
        "[[state]].port",
        Ty::Bool,
        "true",
        "minor states only: false = no NSP or transports",
        "false",
    ),
];

/// This system in [`crate::systems::REGISTRY`].
pub const REGISTRATION: crate::systems::Registration = crate::systems::Registration {
    folder: "setup",
    docs: &[DOC],
    benches: &["strategic"],
    one_roll: one_roll::TABLES,
    parse: |path, text, _| crate::systems::study(SetupStudy::parse(path, text)),
};

/// `battlelab keys` and `battlelab new` for setup studies.
pub const DOC: SystemDoc = SystemDoc {
    companion: None,
    name: "setup",
    summary: "whole-map setup (docs/systems/setup.md): every state rolls its initial forces; coalition totals",
    keys: KEYS,
    starter: "system = \"setup\"\ntrials = 10_000\n\n[[state]]\nname = \"Blue\"\nkind = \"major\"        # major | minor\ncoalition = \"North\"\n\n[[state]]\nname = \"Red\"\nkind = \"major\"\ncoalition = \"South\"\n\n[[state]]\nname = \"a\"\nkind = \"minor\"\nport = false          # minor states only; default true\ncoalition = \"Neutral\"\n",
    // Nothing to price: a setup study has no integer setting a side turns.
    value: ValueDoc {
        headlines: Vec::new,
        default_modifiers: &[],
        currency: None,
        odds_columns: None,
    },
};

impl SetupStudy {
    pub fn parse(path: &Path, text: &str) -> Result<Self, AnalysisError> {
        let source = Source::new(path, text);
        let spec: SetupFile = source.parse_toml()?;
        let header = AnalysisHeader::parse(path, &source, None)?;
        let specs = spec.state.unwrap_or_default();
        if specs.is_empty() || specs.len() > MAX_STATES {
            return Err(source.error_at(
                None,
                "state",
                format!(
                    "a map needs 1 to {MAX_STATES} [[state]] entries, got {}",
                    specs.len()
                ),
            ));
        }
        let mut coalitions: Vec<String> = Vec::new();
        let mut states: Vec<MapState> = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            let field = |f: &str| format!("state[{i}].{f}");
            let state_name = analysis::report_text(
                &source,
                &s.name,
                &field("name"),
                "a state's name",
                analysis::Lines::One,
            )?;
            if states.iter().any(|st| st.name == state_name) {
                return Err(source.error(
                    &s.name,
                    field("name"),
                    "each state needs a non-empty name of its own",
                ));
            }
            let kind = match s.kind.get_ref().as_str() {
                "major" => StateKind::Major,
                "minor" => StateKind::Minor,
                other => {
                    return Err(source.error(
                        &s.kind,
                        field("kind"),
                        format!("unknown kind \"{other}\"; allowed: major, minor"),
                    ))
                }
            };
            let port = match (&s.port, kind) {
                (Some(p), StateKind::Major) => {
                    return Err(source.error(
                        p,
                        field("port"),
                        "port applies to minor states only (their * entries)",
                    ))
                }
                (Some(p), StateKind::Minor) => *p.get_ref(),
                (None, _) => true,
            };
            let coalition_name = match &s.coalition {
                Some(c) => analysis::report_text(
                    &source,
                    c,
                    &field("coalition"),
                    "a coalition's name",
                    analysis::Lines::One,
                )?,
                None => state_name.clone(),
            };
            let coalition = match coalitions.iter().position(|c| *c == coalition_name) {
                Some(c) => c,
                None => {
                    coalitions.push(coalition_name);
                    coalitions.len() - 1
                }
            };
            states.push(MapState {
                name: state_name,
                kind,
                port,
                coalition,
                rows: rows(kind, port),
            });
        }
        Ok(Self {
            header,
            states,
            coalitions,
        })
    }

    pub fn members(&self, coalition: usize) -> Vec<&MapState> {
        self.states
            .iter()
            .filter(|s| s.coalition == coalition)
            .collect()
    }

    /// Largest total of each quantity for coalition `c` (the histogram's layout).
    fn maxima(&self, c: usize) -> [usize; 7] {
        let members = self.members(c);
        Quantity::ALL.map(|q| {
            members
                .iter()
                .map(|s| s.rows.iter().map(|r| r.quantity(q)).max().unwrap_or(0) as usize)
                .sum()
        })
    }
}

/// Simulated counts and exact distributions of coalition totals:
/// `[coalition][quantity][total]`.
#[derive(Debug, Clone)]
pub struct SetupResults {
    pub trials: u64,
    pub seed: u64,
    pub counts: Vec<Vec<Vec<u64>>>,
    pub exact: Vec<Vec<Vec<f64>>>,
}

pub fn execute(
    study: &SetupStudy,
    trials: u64,
    seed: u64,
    control: &RunControl,
) -> Result<SetupResults, Interrupted> {
    let results = crate::engine::driver::run(study, trials, seed, control)?;
    Ok(SetupResults::of(study, &results))
}

impl SetupResults {
    /// The engine's results of a setup study: one run per coalition.
    pub fn of(
        study: &SetupStudy,
        results: &crate::engine::driver::PlanResults<SetupStudy>,
    ) -> Self {
        let counts = results
            .counts
            .iter()
            .enumerate()
            .map(|(c, flat)| {
                let (maxima, offsets) = study.layout(c);
                (0..7)
                    .map(|q| flat.totals[offsets[q]..offsets[q] + maxima[q] + 1].to_vec())
                    .collect()
            })
            .collect();
        let exact = results
            .exact
            .iter()
            .map(|e| e.clone().expect("setup is always exact"))
            .collect();
        Self {
            trials: results.trials,
            seed: results.seed,
            counts,
            exact,
        }
    }
}

impl SetupStudy {
    /// Largest total of each quantity for coalition `c`, and where each one's counts
    /// start in the coalition's flat histogram.
    fn layout(&self, c: usize) -> ([usize; 7], [usize; 7]) {
        let maxima = self.maxima(c);
        let mut next = 0;
        let offsets = maxima.map(|max| {
            let at = next;
            next += max + 1;
            at
        });
        (maxima, offsets)
    }
}

impl crate::engine::System for SetupStudy {
    /// One coalition's totals of every quantity, one flat histogram (and, until the
    /// run's `finish`, the maps counted by their members' faces).
    type Counts = CoalitionCounts;
    /// `[quantity]`: the exact distribution of the coalition's total.
    type Exact = Vec<Vec<f64>>;

    fn derived(
        &self,
        _counts: &[CoalitionCounts],
        exact: &[Option<Vec<Vec<f64>>>],
    ) -> Vec<crate::engine::derived::Derived> {
        derived::derived(self, exact)
    }

    fn header(&self) -> crate::engine::Header<'_> {
        self.header.view()
    }

    /// One run per coalition. Every run rolls the whole map with the same dice (common
    /// random numbers), so the coalitions' totals are those of the same maps.
    fn plan(&self) -> crate::engine::Plan {
        crate::engine::Plan {
            axes: vec!["coalition".into()],
            runs: self
                .coalitions
                .iter()
                .map(|c| crate::engine::RunKey {
                    variant: "base".into(),
                    coordinates: vec![AxisValue::Text(c.clone())],
                })
                .collect(),
            unit: "maps",
        }
    }

    fn empty(&self, run: usize) -> CoalitionCounts {
        let (maxima, _) = self.layout(run);
        CoalitionCounts::new(maxima.iter().map(|m| m + 1).sum::<usize>())
    }

    fn simulate(&self, run: usize, dice: &mut DiceStream, n: u64, counts: &mut CoalitionCounts) {
        let (_, offsets) = self.layout(run);
        // PERF: only this run's coalition (see `CoalitionMap`), same dice as the whole map.
        CoalitionMap::new(&self.states, run).count(dice, n, &offsets, counts);
    }

    /// Adds the maps counted by their members' faces into the totals (once a run: the
    /// fold visits every faces of the coalition's members).
    fn finish(&self, run: usize, counts: &mut CoalitionCounts) {
        let (_, offsets) = self.layout(run);
        CoalitionMap::new(&self.states, run).fold(&offsets, counts);
    }

    fn exact(&self, run: usize) -> Option<Self::Exact> {
        Some(
            Quantity::ALL
                .iter()
                .map(|&q| exact_total(&self.members(run), q))
                .collect(),
        )
    }

    fn outcomes(
        &self,
        run: usize,
        counts: &CoalitionCounts,
        exact: Option<&Self::Exact>,
    ) -> Vec<crate::engine::Outcome> {
        debug_assert!(counts.folded(), "finished counts");
        let (maxima, offsets) = self.layout(run);
        let mut out = Vec::new();
        for (q, quantity) in Quantity::ALL.iter().enumerate() {
            for total in 0..=maxima[q] {
                let count = counts.totals[offsets[q] + total];
                let p = exact.and_then(|e| e[q].get(total).copied()).unwrap_or(0.0);
                // Totals neither drawn nor possible are left out of a report (which
                // always knows what is possible); without the exact result every total
                // is named, so that blocks of one run name the same outcomes.
                if exact.is_some() && count == 0 && p == 0.0 {
                    continue;
                }
                out.push(crate::engine::Outcome {
                    name: format!("{} = {total}", quantity.name()),
                    count,
                    exact: exact.map(|_| p),
                    fraction: None,
                });
            }
        }
        out
    }

    fn distributions(
        &self,
        run: usize,
        counts: &CoalitionCounts,
        exact: Option<&Self::Exact>,
    ) -> Vec<crate::engine::Distribution> {
        debug_assert!(counts.folded(), "finished counts");
        let (maxima, offsets) = self.layout(run);
        Quantity::ALL
            .iter()
            .enumerate()
            .map(|(q, quantity)| {
                crate::engine::Distribution::new(
                    quantity.name(),
                    &counts.totals[offsets[q]..offsets[q] + maxima[q] + 1],
                    exact.map(|e| &e[q][..]),
                )
            })
            .collect()
    }

    /// Maps counted: every map adds one to each quantity's totals, so the first
    /// quantity's totals sum to the maps.
    fn trials_counted(&self, run: usize, counts: &Self::Counts) -> u128 {
        let (maxima, offsets) = self.layout(run);
        crate::sim::total(&counts.totals[offsets[0]..offsets[0] + maxima[0] + 1])
    }

    fn rules(&self) -> serde_json::Value {
        json!({"coalitions": self.coalitions, "states": self.states})
    }
}
