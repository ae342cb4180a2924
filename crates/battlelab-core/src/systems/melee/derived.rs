//! What the melee study's rulebook tables derive beyond one run's outcomes: each run's
//! exact first phase ("A wins / draw / B wins %"), and for a round robin the score
//! matrix and the point-value hints (Bradley–Terry strength, Elo, mean score, the points
//! a straight line through the costed profiles suggests, and the verdict).
//!
//! Why this module exists: `tables.md` prints these and the report page's panel reprints
//! them after an edit; both take them — printed, where the table prints text — from here
//! ([`crate::engine::System::derived`]), so the page never redoes the arithmetic.

use crate::engine::derived::Derived;
use crate::stats::percentages_summing_to_100;

use super::ratings::{cost_verdict, elo, mean_score};
use super::{hints_of, round_robin_table, MeleeResults, MeleeRunResult, MeleeStudy};

/// The key of run `run`'s first-phase cell.
pub fn phase_key(run: usize) -> String {
    format!("phase/{run}")
}

/// The key of the round robin's score of profile `a` (as A) against `b` (as B).
pub fn score_key(a: usize, b: usize) -> String {
    format!("round_robin/{a}/{b}")
}

/// What the point-value hints table prints of a profile, in its columns' order (after
/// the profile's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    Strength,
    Elo,
    MeanScore,
    Points,
    Suggested,
    Verdict,
}

impl Hint {
    pub const ALL: [Hint; 6] = [
        Hint::Strength,
        Hint::Elo,
        Hint::MeanScore,
        Hint::Points,
        Hint::Suggested,
        Hint::Verdict,
    ];

    fn name(self) -> &'static str {
        match self {
            Hint::Strength => "strength",
            Hint::Elo => "elo",
            Hint::MeanScore => "mean_score",
            Hint::Points => "points",
            Hint::Suggested => "suggested",
            Hint::Verdict => "verdict",
        }
    }
}

/// The key of a profile's point-value hint cell.
pub fn hint_key(profile: usize, what: Hint) -> String {
    format!("hint/{profile}/{}", what.name())
}

/// One derived number with the text the table prints for it.
fn printed(key: String, value: f64, text: String) -> Derived {
    Derived {
        text: Some(text),
        ..Derived::new(key, value)
    }
}

/// A percentage printed with one decimal and no `%` sign ("44.8").
fn tenth(p: f64) -> String {
    format!("{:.1}", p * 100.0)
}

/// The first phase's cell: "A wins / draw / B wins" as percentages adding up to 100.0,
/// "–" where it was not computed.
pub fn phase_text(r: &MeleeRunResult) -> String {
    r.phase.as_ref().map_or("–".to_string(), |p| {
        percentages_summing_to_100(&[p.a_wins.to_f64(), p.draw.to_f64(), p.b_wins.to_f64()], 1)
            .iter()
            .map(|u| format!("{}.{}", u / 10, u % 10))
            .collect::<Vec<_>>()
            .join(" / ")
    })
}

/// Every derived number of a melee study (printed: each carries its table's text).
pub fn derived(study: &MeleeStudy, results: &MeleeResults) -> Vec<Derived> {
    let mut out = Vec::new();
    if study.is_round_robin() {
        let rr = round_robin_table(study, results);
        for (a, row) in rr.score.iter().enumerate() {
            for (b, &s) in row.iter().enumerate() {
                out.push(printed(score_key(a, b), s, tenth(s)));
            }
        }
        let hints = hints_of(study, &rr);
        for (i, (_, points)) in study.round_robin.iter().enumerate() {
            let strength = rr.strength[i];
            let score = mean_score(&rr, i);
            let (suggested, verdict) = match (points, hints[i]) {
                (Some(p), Some(h)) => (
                    (h.suggested_points, format!("{:.0}", h.suggested_points)),
                    cost_verdict(*p, &h),
                ),
                _ => ((f64::NAN, "–".to_string()), "–"),
            };
            let points = points.map_or((f64::NAN, "–".to_string()), |p| {
                (f64::from(p), p.to_string())
            });
            for (what, (value, text)) in [
                (Hint::Strength, (strength, format!("{strength:.3}"))),
                (Hint::Elo, (elo(strength), format!("{:.0}", elo(strength)))),
                (Hint::MeanScore, (score, tenth(score))),
                (Hint::Points, points),
                (Hint::Suggested, suggested),
                (Hint::Verdict, (f64::NAN, verdict.to_string())),
            ] {
                out.push(printed(hint_key(i, what), value, text));
            }
        }
    } else {
        for (run, r) in results.runs.iter().enumerate() {
            // Text only: three numbers in one cell (the spreadsheet holds it as text).
            out.push(printed(phase_key(run), f64::NAN, phase_text(r)));
        }
    }
    out
}
