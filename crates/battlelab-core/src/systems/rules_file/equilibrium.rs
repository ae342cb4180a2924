//! `battlelab equilibrium` for rules files whose two sides make one choice each round
//! (`[choices.<name>]`): the battle solved as a zero-sum game by backward induction over
//! its chain — at every state a matrix game over the two sides' options, whose entries are
//! the values of the states each pair of options leads to.
//!
//! Why this module exists: a designer who gives the sides a choice asks what each should
//! play; the built-in field battles answer it, and so must a rules file, through the same
//! [`SimultaneousChoices`] the command reads. The round each pair of options plays is the
//! one every other form plays (`chain::Stepper::round`, with the policy weights set to
//! that pair), so the game solved is the battle as run.

use std::collections::HashMap;

use crate::engine::choices::{ChoiceEquilibrium, ChoicePayoff, SimultaneousChoices};
use crate::interrupt::Interrupted;
use crate::matrix_game;
use crate::systems::rules_file::chain::{self, Chain, Stepper};
use crate::systems::rules_file::kernel;
use crate::systems::rules_file::RulesStudy;

impl SimultaneousChoices for RulesStudy {
    fn choice_word(&self) -> &str {
        &self.variants[0].game.choices[0].name
    }

    fn choice_names(&self) -> Vec<String> {
        self.variants[0].game.choices[0].options.clone()
    }

    fn default_payoff(&self) -> Box<dyn ChoicePayoff + '_> {
        let game = &self.variants[0].game;
        Box::new(OutcomePayoff {
            study: self,
            outcomes: vec![game.outcomes[0].0.clone()],
            maximiser: 0,
        })
    }

    fn read_payoff(&self, text: &str) -> Result<Box<dyn ChoicePayoff + '_>, String> {
        let game = &self.variants[0].game;
        let (maximiser, rest) = match text.split_once(':') {
            Some((side, rest)) => {
                let side = side.trim();
                let k = game.sides.iter().position(|s| s == side).ok_or_else(|| {
                    format!(
                        "\"{side}\" is not a side; write \"<side>: <outcome>\" with a side of {}",
                        game.sides.join(" or ")
                    )
                })?;
                (k, rest)
            }
            None => (0, text),
        };
        let names: Vec<&str> = game.outcomes.iter().map(|o| o.0.as_str()).collect();
        let mut outcomes = Vec::new();
        for name in rest.split(" or ").map(str::trim) {
            if !names.contains(&name) {
                return Err(format!(
                    "the payoff is the chance of outcomes, \"[<side>:] <outcome> or <outcome> …\" (the side maximises it; the first side where none is named); \"{name}\" is not an outcome: {}",
                    names.join(", ")
                ));
            }
            outcomes.push(name.to_string());
        }
        Ok(Box::new(OutcomePayoff {
            study: self,
            outcomes,
            maximiser,
        }))
    }
}

/// The chance of some outcomes, which one side maximises.
struct OutcomePayoff<'s> {
    study: &'s RulesStudy,
    outcomes: Vec<String>,
    maximiser: usize,
}

impl OutcomePayoff<'_> {
    fn side(&self) -> &str {
        &self.study.variants[0].game.sides[self.maximiser]
    }
}

impl ChoicePayoff for OutcomePayoff<'_> {
    fn name(&self) -> String {
        format!("{}: {}", self.side(), self.outcomes.join(" or "))
    }

    fn meaning(&self) -> String {
        format!(
            "the chance the battle ends {}, which {} maximises",
            self.outcomes.join(" or "),
            self.side()
        )
    }

    fn as_written(&self) -> serde_json::Value {
        serde_json::json!(self.name())
    }

    fn solve(&self, run: usize) -> Result<ChoiceEquilibrium, Interrupted> {
        Ok(solve(self, run))
    }
}

/// Backward induction over the run's chain (built with every option possible to both).
fn solve(payoff: &OutcomePayoff, run: usize) -> ChoiceEquilibrium {
    let study = payoff.study;
    let r = &study.runs[run];
    let variant = &study.variants[r.variant];
    let (game, compare) = (&*variant.game, &*variant.compare);
    let choice = &game.choices[0];
    let n = choice.options.len();
    let of = format!("P({})", payoff.outcomes.join(" or "));
    let unsolved = |how: String| ChoiceEquilibrium {
        of: of.clone(),
        value: f64::NAN,
        maximiser: payoff.maximiser,
        mix: [vec![1.0 / n as f64; n], vec![1.0 / n as f64; n]],
        allowed: [vec![true; n], vec![true; n]],
        shortfall: [vec![None; n], vec![None; n]],
        dominated: [vec![false; n], vec![false; n]],
        never_played: [vec![false; n], vec![false; n]],
        exact: false,
        how,
    };
    // Every option open to both sides, so the chain reaches every state any play can.
    let mut base = r.base.clone();
    for side in 0..2 {
        base[choice.weights[side].clone()]
            .iter_mut()
            .for_each(|w| *w = 1);
    }
    let chain = match Chain::build(game, compare, &base) {
        Ok(chain) => chain,
        Err(why) => return unsolved(format!("not solved: the battle's chain has {why}")),
    };
    let Some(order) = chain.order() else {
        return unsolved(
            "not solved: the battle can return to an earlier state (give it a round limit)".into(),
        );
    };
    let index: HashMap<(&[i64], bool), usize> = chain
        .states
        .iter()
        .zip(&chain.terminal)
        .enumerate()
        .map(|(i, (s, t))| ((s, *t), i))
        .collect();
    let wanted: Vec<usize> = payoff
        .outcomes
        .iter()
        .filter_map(|name| game.outcomes.iter().position(|o| o.0 == *name))
        .collect();
    let mut value = vec![0.0f64; chain.states.len()];
    let mut played = [vec![false; n], vec![false; n]];
    let mut start: Option<(Vec<Vec<f64>>, matrix_game::GameSolution)> = None;
    for &s in order.iter().rev() {
        let frame = chain::frame_of(game, &base, &chain.states[s]);
        if chain.terminal[s] {
            let end = kernel::ending(game, &frame);
            value[s] = f64::from(u8::from(wanted.contains(&(end.outcome as usize))));
            continue;
        }
        // The maximiser's options are the rows.
        let mut matrix = vec![vec![0.0; n]; n];
        for (i, row) in matrix.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                let (a, b) = if payoff.maximiser == 0 {
                    (i, j)
                } else {
                    (j, i)
                };
                let mut f = frame.clone();
                for (side, pick) in [(0, a), (1, b)] {
                    let w = choice.weights[side].clone();
                    f[w.clone()].iter_mut().for_each(|x| *x = 0);
                    f[w.start + pick] = 1;
                }
                let mut stepper = Stepper::enumerating(game, compare);
                for (next, ended, num, den) in stepper.round(&f) {
                    let terminal = chain::over(game, &chain::frame_of(game, &base, &next), ended);
                    let Some(&t) = index.get(&(next.as_slice(), terminal)) else {
                        return unsolved(
                            "not solved: a pair of choices leads outside the chain".into(),
                        );
                    };
                    if t == s {
                        return unsolved("not solved: a round can leave the battle as it was (a repeat the game cannot be solved over state by state)".into());
                    }
                    *cell += num as f64 / den as f64 * value[t];
                }
            }
        }
        let solution = matrix_game::solve(&matrix);
        value[s] = solution.value;
        let (row_side, column_side) = if payoff.maximiser == 0 {
            (0, 1)
        } else {
            (1, 0)
        };
        for (k, p) in solution.row.iter().enumerate() {
            played[row_side][k] |= *p > 1e-12;
        }
        for (k, p) in solution.column.iter().enumerate() {
            played[column_side][k] |= *p > 1e-12;
        }
        if s == 0 {
            start = Some((matrix, solution));
        }
    }
    let Some((matrix, solution)) = start else {
        return unsolved("nothing to solve: the battle is over before its first round".into());
    };
    let rows = matrix_game::row_payoffs(&matrix, &solution.column);
    let columns = matrix_game::column_payoffs(&matrix, &solution.row);
    let row_short: Vec<Option<f64>> = rows
        .iter()
        .map(|p| Some((solution.value - p).max(0.0)))
        .collect();
    let column_short: Vec<Option<f64>> = columns
        .iter()
        .map(|p| Some((p - solution.value).max(0.0)))
        .collect();
    let mut row_dominated = vec![false; n];
    matrix_game::dominated_rows(&matrix, 1e-12)
        .into_iter()
        .for_each(|k| row_dominated[k] = true);
    let mut column_dominated = vec![false; n];
    matrix_game::dominated_columns(&matrix, 1e-12)
        .into_iter()
        .for_each(|k| column_dominated[k] = true);
    let (mix, shortfall, dominated) = if payoff.maximiser == 0 {
        (
            [solution.row.clone(), solution.column.clone()],
            [row_short, column_short],
            [row_dominated, column_dominated],
        )
    } else {
        (
            [solution.column.clone(), solution.row.clone()],
            [column_short, row_short],
            [column_dominated, row_dominated],
        )
    };
    ChoiceEquilibrium {
        of,
        value: solution.value,
        maximiser: payoff.maximiser,
        mix,
        allowed: [vec![true; n], vec![true; n]],
        shortfall,
        dominated,
        never_played: [played[0].iter().map(|p| !p).collect(), played[1].iter().map(|p| !p).collect()],
        exact: true,
        how: format!(
            "exact: the whole battle, {} reachable states, a matrix game at each (backward induction over the rounds)",
            chain.states.len()
        ),
    }
}
