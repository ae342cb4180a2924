//! `value`: the page's prices, repriced after an edit by the core's pricing
//! (`battlelab_core::pricing`), the code `battlelab value` runs — so the same file, seed
//! and trials print the same prices, cell for cell.
//!
//! Exact first: with `exact_only` no block is simulated, and where every arm is exact the
//! answer is the command line's to the byte (an exact cell prints only exact numbers);
//! where some arm is not, the answer says so (`"exact": false`, with the arms and trials a
//! Monte Carlo pricing would run) and prices nothing, so the page can decide whether to
//! simulate the command line's blocks (`exact_only` false).

use std::path::Path;

use battlelab_core::levers;
use battlelab_core::pricing::{self, Analysis, Asked, Priceable, ValueError};
use serde_json::{json, Value};

use crate::{Parsed, Refusal};

/// What `value` is asked beside the analysis.
pub struct ValueRequest {
    pub seed: Option<u64>,
    pub trials: Option<u64>,
    pub exact_only: bool,
    pub asked: Asked,
}

/// Prices the edited analysis as `battlelab value` does (`--modifier`s, `--headline`,
/// `--seed`, `--trials` from the request).
pub fn value(parsed: &Parsed, request: ValueRequest) -> Result<Value, Refusal> {
    let (seed, trials) = crate::run::seed_and_trials(parsed, request.seed, request.trials)?;
    let header = parsed.study.header();
    let system = header.system.to_string();
    let name = header.name.to_string();
    let path = Path::new(&parsed.name);
    let doc: toml::Table = parsed
        .text
        .parse()
        .map_err(|e| Refusal::of_file(&parsed.name, format!("{} is not TOML: {e}", parsed.name)))?;
    let levers = levers::for_file(&parsed.files, path, &doc, &system).ok_or_else(|| {
        Refusal::of_file(
            &parsed.name,
            format!(
                "{}: {system} analyses have no settings to price or vary; value and solve serve {}",
                parsed.name,
                levers::served().join(", ")
            ),
        )
    })?;
    let plan = parsed.study.plan();
    let spec = levers::value_settings(&parsed.files, path, &parsed.text, &system, &plan)?;
    let files = &parsed.files;
    let parse = |text: &str| {
        battlelab_core::systems::parse(path, text, files).map(|s| Box::new(s) as Box<dyn Priceable>)
    };
    let analysis = Analysis {
        path,
        name: &name,
        doc: &doc,
        system: &system,
        levers,
        trials,
        seed,
        study: &parsed.study,
        parse: &parse,
    };
    let prepared =
        pricing::prepare(analysis, plan, &request.asked, &spec).map_err(|e| match e {
            ValueError::Refused(message) => Refusal::request(message),
            ValueError::Interrupted(_) => Refusal::request("the valuation was stopped"),
        })?;
    if let Some(why) = prepared.nothing_priced() {
        return Err(Refusal::request(why));
    }
    let arms = prepared.arms();
    let skipped: Vec<Value> = prepared
        .skipped
        .iter()
        .map(|(m, why)| json!({"name": m, "why": why}))
        .collect();
    let valuation = prepared
        .evaluate(!request.exact_only, &crate::reporting())
        .map_err(|_| Refusal::request("the valuation was stopped"))?;
    if request.exact_only && !valuation.exact {
        return Ok(json!({
            "exact": false, "priced": false, "arms": arms, "trials": trials, "seed": seed,
            "skipped": skipped,
        }));
    }
    let tables: Vec<Value> = valuation
        .headlines
        .iter()
        .map(|h| {
            json!({
                "headline": h.headline.name,
                "key": h.headline.key,
                "rows": pricing::markdown_rows(&valuation, h),
            })
        })
        .collect();
    Ok(json!({
        "exact": valuation.exact,
        "priced": true,
        "arms": arms,
        "trials": trials,
        "seed": seed,
        "skipped": skipped,
        "value": pricing::to_json(&valuation),
        "text": pricing::text_output(&valuation),
        "markdown": pricing::markdown(&valuation),
        "tables": tables,
    }))
}
