//! Field battles' tactics as simultaneous choices: what `battlelab equilibrium` solves.
//!
//! Why this module exists: each round both sides of a field battle pick a tactic at once
//! (the tactical matrix, docs/systems/field.md), so the battle is a zero-sum game. The
//! game and its solver are [`super::game`]; this file declares the game to the engine
//! ([`SimultaneousChoices`]): the seven tactics, the payoffs a file or `--payoff` names
//! ([`PayoffSpec`]), and a run's [`Equilibrium`] read into the engine's
//! [`ChoiceEquilibrium`], choice by choice.

use crate::engine::choices::{ChoiceEquilibrium, ChoicePayoff, SimultaneousChoices};
use crate::interrupt::Interrupted;
use crate::systems::field::battle::TACTIC_NAMES;
use crate::systems::field::game::{self, Equilibrium, PayoffSpec, MAX_GAME_STATES};
use crate::systems::field::FieldStudy;

impl SimultaneousChoices for FieldStudy {
    fn choice_word(&self) -> &str {
        "tactic"
    }

    fn choice_names(&self) -> Vec<String> {
        TACTIC_NAMES.iter().map(ToString::to_string).collect()
    }

    /// The file's `[equilibrium] payoff` (`win` where it names none).
    fn default_payoff(&self) -> Box<dyn ChoicePayoff + '_> {
        Box::new(FieldPayoff {
            study: self,
            spec: self.payoff.clone(),
        })
    }

    fn read_payoff(&self, text: &str) -> Result<Box<dyn ChoicePayoff + '_>, String> {
        let spec = payoff_from_text(text)?;
        Ok(Box::new(FieldPayoff { study: self, spec }))
    }
}

/// A payoff as `--payoff` gives it: one name, or outcome names joined by commas. The
/// error says what is wrong, then every payoff allowed.
pub fn payoff_from_text(text: &str) -> Result<PayoffSpec, String> {
    let parsed = if text.contains(',') {
        let names: Vec<&str> = text.split(',').collect();
        PayoffSpec::parse_list(&names)
    } else {
        PayoffSpec::parse(text)
    };
    parsed.map_err(|e| format!("{e}; allowed: {}", PayoffSpec::allowed()))
}

/// A payoff read for one analysis: each run's battle solved for it.
struct FieldPayoff<'a> {
    study: &'a FieldStudy,
    spec: PayoffSpec,
}

impl ChoicePayoff for FieldPayoff<'_> {
    fn name(&self) -> String {
        self.spec.name()
    }

    fn meaning(&self) -> String {
        if self.spec.is_sp() {
            "B's SP lost minus A's, A maximising".into()
        } else {
            "the chance of these outcomes of the report, the side they are bad for minimising it; a side loses when broken or withdrawing alone".into()
        }
    }

    fn as_written(&self) -> serde_json::Value {
        serde_json::to_value(&self.spec).expect("a payoff serialises")
    }

    /// The whole battle where its game has at most [`MAX_GAME_STATES`] slots, else the
    /// one-round game at the start ([`game::equilibrium`]).
    fn solve(&self, run: usize) -> Result<ChoiceEquilibrium, Interrupted> {
        let run = &self.study.runs[run];
        let payoff = self.spec.resolve(&run.prepared.start);
        // A game too large is solved as the one-round game inside; what is left is a stop.
        game::equilibrium(&run.field, &run.prepared, payoff, MAX_GAME_STATES)
            .map(|solved| ChoiceEquilibrium::from(&solved))
            .map_err(|_| Interrupted)
    }
}

impl From<&Equilibrium> for ChoiceEquilibrium {
    fn from(e: &Equilibrium) -> Self {
        let per_tactic = |of: &dyn Fn(usize, usize) -> bool| {
            [0, 1].map(|side| (0..TACTIC_NAMES.len()).map(|t| of(side, t)).collect())
        };
        ChoiceEquilibrium {
            of: e.payoff.describe(),
            value: e.value,
            maximiser: e.payoff.maximiser(),
            mix: e.mix.map(|mix| mix.to_vec()),
            allowed: per_tactic(&|side, t| e.allowed[side].contains(t)),
            shortfall: e.shortfall.map(|shortfall| shortfall.to_vec()),
            dominated: per_tactic(&|side, t| e.dominated[side].contains(&t)),
            never_played: per_tactic(&|side, t| e.never_played[side].contains(&t)),
            exact: e.exact,
            how: if e.exact {
                format!("exact: the whole battle, {} reachable states", e.states)
            } else {
                format!(
                    "NOT exact: the game has more than {MAX_GAME_STATES} state slots, so this is the one-round game at the start"
                )
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::engine::System;

    fn study(b_side: &str, equilibrium: &str) -> FieldStudy {
        let text = format!(
            "system = \"field\"\n\n[side.a]\nsp = 6\nmorale = 2\n\n[side.b]\nsp = 4\nmorale = 2\n{b_side}\n{equilibrium}"
        );
        FieldStudy::parse(Path::new("choices.toml"), &text).expect("a valid file")
    }

    /// The battle's own solution, as the solver gives it, for `spec`.
    fn own(study: &FieldStudy, spec: &PayoffSpec) -> Equilibrium {
        let run = &study.runs[0];
        game::equilibrium(
            &run.field,
            &run.prepared,
            spec.resolve(&run.prepared.start),
            MAX_GAME_STATES,
        )
        .unwrap()
    }

    /// The generic result is the battle's `Equilibrium`, tactic by tactic: a tactic read
    /// at another index, a side swapped or a list left unfilled fails here.
    fn assert_same(generic: &ChoiceEquilibrium, e: &Equilibrium) {
        assert_eq!(generic.value, e.value);
        assert_eq!(generic.maximiser, e.payoff.maximiser());
        assert_eq!(generic.of, e.payoff.describe());
        assert_eq!(generic.exact, e.exact);
        for side in 0..2 {
            assert_eq!(generic.mix[side].len(), 7);
            for (t, name) in TACTIC_NAMES.iter().enumerate() {
                assert_eq!(generic.mix[side][t], e.mix[side][t], "{side} {name}");
                assert_eq!(generic.shortfall[side][t], e.shortfall[side][t], "{name}");
                assert_eq!(generic.allowed[side][t], e.allowed[side].contains(t));
                assert_eq!(generic.dominated[side][t], e.dominated[side].contains(&t));
                assert_eq!(
                    generic.never_played[side][t],
                    e.never_played[side].contains(&t)
                );
            }
        }
    }

    #[test]
    fn the_generic_result_is_the_battles_equilibrium_tactic_by_tactic() {
        let study = study(
            "allowed_tactics = [\"skirmish\", \"square\", \"refuse\"]",
            "",
        );
        let choices = study.simultaneous_choices().expect("field battles choose");
        assert_eq!(choices.choice_word(), "tactic");
        assert_eq!(
            choices.choice_names(),
            ["charge", "envelop", "skirmish", "bombard", "square", "refuse", "withdraw"]
        );
        let payoff = choices.default_payoff();
        assert_eq!(payoff.as_written(), serde_json::json!("win"));
        let generic = payoff.solve(0).unwrap();
        let e = own(&study, &PayoffSpec::default());
        assert_same(&generic, &e);
        // B chooses among three: by hand, the other four are not allowed, never mixed
        // and have no shortfall; A (larger) maximises P(B loses), exactly solved.
        assert_eq!(
            generic.allowed[1],
            [false, false, true, false, true, true, false]
        );
        for t in [0, 1, 3, 6] {
            assert_eq!(generic.mix[1][t], 0.0);
            assert_eq!(generic.shortfall[1][t], None);
        }
        assert!(generic.allowed[0].iter().all(|&a| a));
        assert_eq!(generic.maximiser, 0);
        assert_eq!(generic.of, "P(A wins or B withdraws)");
        assert!(generic.exact);
        assert_eq!(
            generic.how,
            format!("exact: the whole battle, {} reachable states", e.states)
        );
        // A payoff B maximises (A's losses) reads B as the maximiser.
        let a_loses = choices.read_payoff("A loses").unwrap();
        let generic = a_loses.solve(0).unwrap();
        assert_same(
            &generic,
            &own(&study, &PayoffSpec::parse("A loses").unwrap()),
        );
        assert_eq!(generic.maximiser, 1);
    }

    #[test]
    fn a_side_held_to_one_tactic_plays_it_and_too_large_games_say_so() {
        let study = study(
            "allowed_tactics = [\"withdraw\"]",
            "[equilibrium]\npayoff = \"sp\"",
        );
        let choices = study.simultaneous_choices().unwrap();
        let payoff = choices.default_payoff();
        assert_eq!(payoff.name(), "sp");
        assert_eq!(payoff.meaning(), "B's SP lost minus A's, A maximising");
        let generic = payoff.solve(0).unwrap();
        assert_same(&generic, &own(&study, &PayoffSpec::parse("sp").unwrap()));
        assert_eq!(generic.mix[1], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        let big = FieldStudy::parse(
            Path::new("big.toml"),
            "system = \"field\"\n[side.a]\nsp = 300\nmorale = 3\n[side.b]\nsp = 200\nmorale = 3\n",
        )
        .unwrap();
        let generic = big
            .simultaneous_choices()
            .unwrap()
            .default_payoff()
            .solve(0)
            .unwrap();
        assert_same(&generic, &own(&big, &PayoffSpec::default()));
        assert!(!generic.exact);
        assert!(generic.how.starts_with("NOT exact"), "{}", generic.how);
    }

    /// `--payoff`'s words and errors: one name, a list joined by commas, and every
    /// refusal naming what is allowed.
    #[test]
    fn payoffs_are_read_as_the_command_line_gives_them() {
        let study = study("", "");
        let choices = study.simultaneous_choices().unwrap();
        let listed = choices.read_payoff("B wins,A withdraws").unwrap();
        assert_eq!(
            listed.as_written(),
            serde_json::json!(["B wins", "A withdraws"])
        );
        assert_eq!(listed.name(), "B wins or A withdraws");
        let spaced = choices.read_payoff(" a   WINS ").unwrap();
        assert_eq!(spaced.as_written(), serde_json::json!("A wins"));
        let allowed = PayoffSpec::allowed();
        for (text, why) in [
            ("glory", "unknown payoff \"glory\"".to_string()),
            ("A wins,", "unknown payoff \"\"".to_string()),
            (
                "win,sp",
                "\"sp\" is an SP difference, not an outcome; it cannot be part of a list"
                    .to_string(),
            ),
        ] {
            let Err(message) = choices.read_payoff(text) else {
                panic!("{text} was read");
            };
            assert_eq!(message, format!("{why}; allowed: {allowed}"));
        }
    }
}
