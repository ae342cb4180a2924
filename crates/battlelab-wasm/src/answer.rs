//! `compare` and `equilibrium`: a compare or equilibrium page's answer, given again for
//! the edited file by the core's own code (`battlelab_core::comparison`,
//! `battlelab_core::equilibrium`), the code `battlelab compare` and `battlelab
//! equilibrium` run — so the same file, variants, seed and trials print the same tables,
//! cell for cell.
//!
//! Each answer comes with its printed forms (text, Markdown, JSON) and with the Markdown
//! split into the sections and blocks the page shows ([`sections`]): the page's script
//! only puts that text into its cells.

use battlelab_core::comparison::{self, Decision};
use battlelab_core::engine::compare::Correction;
use battlelab_core::equilibrium;
use battlelab_core::markdown::cells;
use battlelab_core::pricing::Priceable;
use serde_json::{json, Value};

use crate::{Parsed, Refusal};

/// What `compare` is asked beside the analysis (`battlelab compare FILE --variants A,B`
/// with `--seed`, `--trials`, `--fdr`, `--alpha`).
pub struct CompareRequest {
    pub variants: Option<String>,
    pub seed: Option<u64>,
    pub trials: Option<u64>,
    pub fdr: bool,
    pub alpha: Option<f64>,
    /// The most battles to simulate: past it nothing is simulated and the answer says how
    /// many it would take (`"compared": false`).
    pub max_battles: Option<u64>,
}

/// Compares the edited file's two variants as `battlelab compare --variants` does.
pub fn compare(parsed: &Parsed, request: CompareRequest) -> Result<Value, Refusal> {
    let variants = request.variants.as_deref().ok_or_else(|| {
        Refusal::request(
            "compare needs \"variants\": \"A,B\" (battlelab compare FILE --variants A,B)",
        )
    })?;
    let alpha = request.alpha.unwrap_or(0.05);
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(Refusal::request(format!(
            "a significance level is between 0 and 1, got {alpha}"
        )));
    }
    let (a, b) = comparison::variant_names(variants).map_err(Refusal::request)?;
    let (seed, trials) = crate::run::seed_and_trials(parsed, request.seed, request.trials)?;
    let plan = parsed.study.plan();
    let pairing =
        comparison::variants_of_one(&plan, &a, &b, trials, seed).map_err(Refusal::request)?;
    let battles = pairing.battles();
    if request.max_battles.is_some_and(|most| battles > most) {
        return Ok(json!({
            "compared": false, "battles": battles, "pairs": pairing.pairs.len(),
            "trials": trials, "seed": seed,
        }));
    }
    let decision = Decision {
        correction: if request.fdr {
            Correction::BenjaminiHochberg
        } else {
            Correction::Holm
        },
        alpha,
    };
    let study: &dyn Priceable = &parsed.study;
    let mut answer =
        comparison::compare(study, study, &plan, &pairing, decision, &crate::reporting())
            .map_err(|_| Refusal::request("the comparison was stopped"))?;
    answer.finish();
    let markdown = comparison::markdown(&answer);
    Ok(json!({
        "compared": true,
        "battles": battles,
        "pairs": pairing.pairs.len(),
        "trials": trials,
        "seed": seed,
        "value": comparison::to_json(&answer),
        "text": comparison::text(&answer),
        "sections": sections(&markdown),
        "markdown": markdown,
    }))
}

/// Solves the edited file's games as `battlelab equilibrium` does (`payoff`: `--payoff`,
/// or none for the file's own).
pub fn equilibrium(parsed: &Parsed, payoff: Option<&str>) -> Result<Value, Refusal> {
    let header = parsed.study.header();
    let Some(choices) = parsed.study.simultaneous_choices() else {
        return Err(Refusal::request(equilibrium::no_choice(
            &parsed.name,
            header.system,
        )));
    };
    let payoff = equilibrium::payoff(choices, payoff).map_err(Refusal::request)?;
    let solved = equilibrium::solve(
        parsed.name.clone(),
        header.name.to_string(),
        parsed.study.plan(),
        choices,
        &*payoff,
    )
    .map_err(|_| Refusal::request("the equilibrium was stopped"))?;
    let markdown = equilibrium::markdown(&solved);
    Ok(json!({
        "value": equilibrium::to_json(&solved),
        "text": equilibrium::text_output(&solved),
        "sections": sections(&markdown),
        "markdown": markdown,
    }))
}

/// `tables.md` as the report page lays it out (`report::index::markdown_to_html`): what
/// comes before the first `##` heading, then one section per `##` heading (`title`), each
/// a list of blocks — `{"p": text}` (a paragraph's lines joined by a space) or
/// `{"rows": [[cell, …], …]}` (a pipe table's body, `\|` read as `|`) — and `{"h": text}`
/// for a lower heading. Texts keep their inline Markdown (`**bold**`, `` `code` ``).
pub fn sections(markdown: &str) -> Value {
    let mut sections: Vec<Value> = vec![json!({"title": null, "blocks": []})];
    let mut paragraph: Vec<&str> = Vec::new();
    let mut table: Vec<&str> = Vec::new();
    fn push(sections: &mut [Value], block: Value) {
        let last = sections.len() - 1;
        sections[last]["blocks"]
            .as_array_mut()
            .expect("blocks")
            .push(block);
    }
    let flush = |sections: &mut Vec<Value>, paragraph: &mut Vec<&str>, table: &mut Vec<&str>| {
        if !paragraph.is_empty() {
            push(sections, json!({"p": paragraph.join(" ")}));
            paragraph.clear();
        }
        if !table.is_empty() {
            // The head and the rule are the page's own; the body is the answer.
            let body: Vec<Vec<String>> = table.iter().skip(2).map(|row| cells(row)).collect();
            push(sections, json!({"rows": body}));
            table.clear();
        }
    };
    for line in markdown.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('|') {
            if !paragraph.is_empty() {
                push(&mut sections, json!({"p": paragraph.join(" ")}));
                paragraph.clear();
            }
            table.push(trimmed);
            continue;
        }
        if !table.is_empty() {
            flush(&mut sections, &mut Vec::new(), &mut table);
        }
        let level = trimmed.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&level) && trimmed[level..].starts_with(' ') {
            flush(&mut sections, &mut paragraph, &mut table);
            let title = trimmed[level..].trim();
            if level == 2 {
                sections.push(json!({"title": title, "blocks": []}));
            } else {
                push(&mut sections, json!({"h": title}));
            }
        } else if trimmed.is_empty() {
            flush(&mut sections, &mut paragraph, &mut table);
        } else {
            paragraph.push(trimmed);
        }
    }
    flush(&mut sections, &mut paragraph, &mut table);
    Value::Array(sections)
}

#[cfg(test)]
mod tests {
    use super::sections;

    #[test]
    fn sections_follow_the_pages_layout() {
        let md = "# t — equilibrium\n\nPayoff **win** (x).\nmore\n\n## odds = 1:1\n\nvalue line.\n\n| a | b |\n|---|---:|\n| x \\| y | 1 |\n| z | 2 |\n\n- A: one\n- B: two\n## second\n\n| a |\n|---|\n| w |\n";
        assert_eq!(
            sections(md),
            serde_json::json!([
                {"title": null, "blocks": [{"h": "t — equilibrium"}, {"p": "Payoff **win** (x). more"}]},
                {"title": "odds = 1:1", "blocks": [
                    {"p": "value line."},
                    {"rows": [["x | y", "1"], ["z", "2"]]},
                    {"p": "- A: one - B: two"}
                ]},
                {"title": "second", "blocks": [{"rows": [["w"]]}]}
            ])
        );
    }
}
