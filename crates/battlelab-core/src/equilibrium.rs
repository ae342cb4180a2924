//! `equilibrium`'s answer, pure: the payoff read, every run of the plan's game solved
//! (through the system's [`SimultaneousChoices`]), and the answer printed (text, JSON and
//! the Markdown of `tables.md`).
//!
//! Why this module exists: `battlelab equilibrium` solves on the command line and the
//! report page's WebAssembly module solves again after an edit (its `equilibrium` op),
//! and a printed mix or value must not depend on which of the two computed it. So the
//! solving and the printing live here once, with no files, threads, Polars or clap; the
//! command line adds the thread pool, the CSV and Parquet frame, the charts and the
//! report folder.

use std::path::Path;

use rayon::prelude::*;
use serde_json::{json, Map, Value};

use crate::analysis::AxisValue;
use crate::engine::choices::{ChoiceEquilibrium, ChoicePayoff, SimultaneousChoices};
use crate::engine::Plan;
use crate::files::InMemory;
use crate::interrupt::Interrupted;

/// The sides' keys in outputs, A first.
pub const SIDES: [&str; 2] = ["a", "b"];

/// Everything the outputs are made from.
pub struct Solved<'a> {
    /// The analysis file as the user named it (the text output's header).
    pub path: String,
    /// The analysis's name (its report's).
    pub name: String,
    pub plan: Plan,
    /// The plan's variants, in order; `variant[i]` is run `i`'s index among them.
    pub variants: Vec<String>,
    pub variant: Vec<usize>,
    /// The word for a choice ("what each side picks") and every choice's name.
    pub word: String,
    pub choices: Vec<String>,
    pub payoff: &'a dyn ChoicePayoff,
    /// One per run of the plan, in its order.
    pub points: Vec<ChoiceEquilibrium>,
}

/// The payoff the game is played for: `written` (`--payoff`) as the system reads it, else
/// the file's own. The error is the system's message naming the payoffs allowed.
pub fn payoff<'a>(
    choices: &'a dyn SimultaneousChoices,
    written: Option<&str>,
) -> Result<Box<dyn ChoicePayoff + 'a>, String> {
    match written {
        Some(text) => choices.read_payoff(text),
        None => Ok(choices.default_payoff()),
    }
}

/// The refusal of a file whose system declares no simultaneous choice, naming the
/// systems that do (`file`: the file as the user named it; `system`: its system).
pub fn no_choice(file: &str, system: &str) -> String {
    format!(
        "{file}: system \"{system}\" has no simultaneous choice to solve; equilibrium solves systems whose sides choose at once ({})",
        systems_that_choose()
    )
}

/// The systems that declare simultaneous choices, from the registry: each system's
/// starting file (`battlelab new`) parsed and asked. Each is named by what its summary
/// opens with and its `system` name.
pub fn systems_that_choose() -> String {
    crate::systems::docs()
        .into_iter()
        .filter(|doc| {
            let path = format!("{}.toml", doc.name);
            crate::systems::parse(Path::new(&path), doc.starter, &InMemory::default())
                .is_ok_and(|study| study.simultaneous_choices().is_some())
        })
        .map(|doc| {
            // A summary opens with what the system's battles are: "… battles (docs/…): …".
            let what = doc.summary.split(" (").next().unwrap_or(doc.summary);
            format!("{what}: system = \"{}\"", doc.name)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Solves every run of `plan` for `payoff` (on the caller's thread pool; on wasm32 on
/// the calling thread). Fails only on a stop request.
pub fn solve<'a>(
    path: String,
    name: String,
    plan: Plan,
    choices: &dyn SimultaneousChoices,
    payoff: &'a dyn ChoicePayoff,
) -> Result<Solved<'a>, Interrupted> {
    let points = (0..plan.runs.len())
        .into_par_iter()
        .map(|run| payoff.solve(run))
        .collect::<Result<Vec<_>, _>>()?;
    let variants: Vec<String> = plan.variants().into_iter().map(String::from).collect();
    let variant = plan
        .runs
        .iter()
        .map(|run| {
            variants
                .iter()
                .position(|v| *v == run.variant)
                .expect("every run's variant is one of the plan's")
        })
        .collect();
    Ok(Solved {
        path,
        name,
        variants,
        variant,
        plan,
        word: choices.choice_word().to_string(),
        choices: choices.choice_names(),
        payoff,
        points,
    })
}

impl Solved<'_> {
    /// The names of the choices `flags` marks, in printed order.
    pub fn marked(&self, flags: &[bool]) -> Vec<&str> {
        self.choices
            .iter()
            .zip(flags)
            .filter(|(_, &flag)| flag)
            .map(|(name, _)| name.as_str())
            .collect()
    }

    fn per_choice<T: serde::Serialize>(&self, values: &[T]) -> Value {
        Value::Object(
            self.choices
                .iter()
                .zip(values)
                .map(|(name, v)| (name.clone(), json!(v)))
                .collect(),
        )
    }

    /// `odds = 3:2, variant = base`.
    fn point_label(&self, run: usize) -> String {
        let key = &self.plan.runs[run];
        let mut parts: Vec<String> = self
            .plan
            .axes
            .iter()
            .zip(&key.coordinates)
            .map(|(a, v)| format!("{a} = {v}"))
            .collect();
        if self.variants.len() > 1 || parts.is_empty() {
            parts.push(format!("variant = {}", key.variant));
        }
        parts.join(", ")
    }

    fn limited(&self, e: &ChoiceEquilibrium, side: usize) -> String {
        if e.allowed[side].iter().all(|&a| a) {
            String::new()
        } else {
            format!(
                "; may choose only {}",
                self.marked(&e.allowed[side]).join(", ")
            )
        }
    }

    /// `  A: dominated at the start: none; never played: withdraw`, per side.
    fn side_lines(&self, e: &ChoiceEquilibrium, lead: &str) -> String {
        ["A", "B"]
            .iter()
            .enumerate()
            .map(|(side, label)| {
                format!(
                    "{lead}{label}: dominated at the start: {}; never played: {}{}\n",
                    list(&self.marked(&e.dominated[side])),
                    list(&self.marked(&e.never_played[side])),
                    self.limited(e, side)
                )
            })
            .collect()
    }
}

fn axis_json(value: &AxisValue) -> Value {
    match value {
        AxisValue::Int(v) => json!(v),
        AxisValue::Unset => Value::Null,
        other => json!(other.to_string()),
    }
}

/// The answer as `--format json` holds it.
pub fn to_json(s: &Solved) -> Value {
    let points: Vec<Value> = s
        .points
        .iter()
        .zip(&s.plan.runs)
        .map(|(e, key)| {
            let mut run = Map::new();
            for (axis, value) in s.plan.axes.iter().zip(&key.coordinates) {
                run.insert(axis.clone(), axis_json(value));
            }
            run.insert("variant".into(), json!(key.variant));
            let sides = |of: &dyn Fn(usize) -> Value| json!({"a": of(0), "b": of(1)});
            json!({
                "run": run,
                "value": e.value,
                "of": e.of,
                "maximiser": SIDES[e.maximiser],
                "a": s.per_choice(&e.mix[0]),
                "b": s.per_choice(&e.mix[1]),
                "allowed": sides(&|side| json!(s.marked(&e.allowed[side]))),
                "dominated": sides(&|side| json!(s.marked(&e.dominated[side]))),
                "never_played": sides(&|side| json!(s.marked(&e.never_played[side]))),
                "shortfall": sides(&|side| s.per_choice(&e.shortfall[side])),
                "exact": e.exact,
            })
        })
        .collect();
    json!({"payoff": s.payoff.as_written(), "points": points})
}

/// `P(A wins or B withdraws) = 0.250000, A maximising it, B minimising`.
fn value_line(e: &ChoiceEquilibrium) -> String {
    format!(
        "{} = {:.6}, {} maximising it, {} minimising",
        e.of,
        e.value,
        ["A", "B"][e.maximiser],
        ["A", "B"][1 - e.maximiser]
    )
}

fn four(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.4}"))
}

/// A side's mix entry: "–" for a choice it may not make.
fn plays(e: &ChoiceEquilibrium, side: usize, choice: usize) -> Option<f64> {
    e.allowed[side][choice].then_some(e.mix[side][choice])
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// The answer as `battlelab equilibrium` prints it (`--format text`).
pub fn text_output(s: &Solved) -> String {
    let mut t = format!(
        "equilibrium of {}: payoff {} ({})\n",
        s.path,
        s.payoff.name(),
        s.payoff.meaning()
    );
    // The names' column: ten characters, or the longest name's.
    let width = s
        .choices
        .iter()
        .chain([&s.word])
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(10);
    for (run, e) in s.points.iter().enumerate() {
        t += &format!(
            "\n{}\n  {}\n  ({})\n",
            s.point_label(run),
            value_line(e),
            e.how
        );
        t += &format!(
            "  {:<width$} {:>8} {:>11} {:>8} {:>11}\n",
            s.word, "A plays", "A shortfall", "B plays", "B shortfall"
        );
        for (k, name) in s.choices.iter().enumerate() {
            t += &format!(
                "  {:<width$} {:>8} {:>11} {:>8} {:>11}\n",
                name,
                four(plays(e, 0, k)),
                four(e.shortfall[0][k]),
                four(plays(e, 1, k)),
                four(e.shortfall[1][k])
            );
        }
        t += &s.side_lines(e, "  ");
    }
    t
}

/// The answer as `tables.md` holds it (`--format md`).
pub fn markdown(s: &Solved) -> String {
    let word = &s.word;
    let mut t = format!(
        "# {} — equilibrium\n\nPayoff **{}** ({}). A {word}'s shortfall is how much worse than the value it does for its side, played purely against the other side's optimal mix (0 for every {word} in the mix); – marks a {word} the side may not choose.\n",
        s.name,
        s.payoff.name(),
        s.payoff.meaning()
    );
    for (run, e) in s.points.iter().enumerate() {
        t += &format!(
            "\n## {}\n\n{} ({}).\n\n| {word} | A plays | A shortfall | B plays | B shortfall |\n|---|---:|---:|---:|---:|\n",
            s.point_label(run),
            value_line(e),
            e.how
        );
        for (k, name) in s.choices.iter().enumerate() {
            t += &format!(
                "| {name} | {} | {} | {} | {} |\n",
                four(plays(e, 0, k)),
                four(e.shortfall[0][k]),
                four(plays(e, 1, k)),
                four(e.shortfall[1][k])
            );
        }
        t += "\n";
        t += &s.side_lines(e, "- ");
    }
    t
}
