//! Systems whose two sides choose at once, every round: what they declare so that their
//! battles can be solved as zero-sum games.
//!
//! Why this module exists: "what should each side play?" is asked of any rules system in
//! which both sides pick a choice simultaneously (field battles' tactics are the first).
//! `battlelab equilibrium` solves such a system through [`SimultaneousChoices`] alone —
//! the word for a choice, the choices' names, the payoffs the system reads, and each run
//! of the plan solved into a [`ChoiceEquilibrium`] — so the command names no system, and a
//! system that declares its choices (through [`crate::engine::System::simultaneous_choices`])
//! is solved with no command changed. How a system solves its game (backward induction, a
//! linear program per state, …) stays in its own folder.

use crate::interrupt::Interrupted;

/// A system whose sides (A and B) choose at once each round, among the same named choices.
pub trait SimultaneousChoices: Sync {
    /// The word for one choice, as headers and sentences use it: "tactic".
    fn choice_word(&self) -> &str;

    /// Every choice's name, in printed order: the index of [`ChoiceEquilibrium`]'s per-side
    /// lists.
    fn choice_names(&self) -> Vec<String>;

    /// The payoff the analysis itself names (for field battles, its `[equilibrium]
    /// payoff`): what the game is played for when the command line names none.
    fn default_payoff(&self) -> Box<dyn ChoicePayoff + '_>;

    /// A payoff given as text (`--payoff`). The error says what is wrong and names the
    /// payoffs allowed, in words.
    fn read_payoff(&self, text: &str) -> Result<Box<dyn ChoicePayoff + '_>, String>;
}

/// A payoff a system has read, bound to the analysis it is solved in: what the outputs
/// say of it, and each run's game solved for it.
pub trait ChoicePayoff: Sync {
    /// Its name as written, for headers: `win`, `sp`, `B wins or A withdraws`.
    fn name(&self) -> String;

    /// What the name means, in words, for headers.
    fn meaning(&self) -> String;

    /// As the user wrote it, for JSON and manifests: one name as a string, a list as a
    /// list.
    fn as_written(&self) -> serde_json::Value;

    /// Solves run `run` of the plan's game for this payoff. Fails only on a stop request.
    fn solve(&self, run: usize) -> Result<ChoiceEquilibrium, Interrupted>;
}

/// One run's game, solved: the value and, per side (0 = A, 1 = B), lists indexed by
/// choice in [`SimultaneousChoices::choice_names`] order.
#[derive(Clone, Debug, PartialEq)]
pub struct ChoiceEquilibrium {
    /// What the value measures, in words: `P(A wins or B withdraws)`.
    pub of: String,
    /// The game's value as the payoff reads it, under both sides' optimal play: the
    /// maximiser pushing it up, the other side down.
    pub value: f64,
    /// The side that maximises the payoff (0 = A, 1 = B); the other minimises it.
    pub maximiser: usize,
    /// Each side's optimal mix at the start (0 for a choice it may not make).
    pub mix: [Vec<f64>; 2],
    /// Whether each side may make each choice.
    pub allowed: [Vec<bool>; 2],
    /// Per choice, how much worse than the value it does for its side, played purely
    /// against the other side's optimal mix at the start (≥ 0, in the payoff's units;
    /// `None` for a choice the side may not make).
    pub shortfall: [Vec<Option<f64>>; 2],
    /// Allowed choices strictly dominated by another pure choice at the start.
    pub dominated: [Vec<bool>; 2],
    /// Allowed choices played nowhere the game was solved.
    pub never_played: [Vec<bool>; 2],
    /// Whether the whole game was solved (false: a smaller game stood in for it, which
    /// `how` names).
    pub exact: bool,
    /// How it was solved, in words: "exact: the whole battle, 859 reachable states".
    pub how: String,
}
