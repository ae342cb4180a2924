//! `battlelab validate FILE`: check an analysis file without running it, and say what a
//! run would do.

use std::path::Path;

use anyhow::Result;

use super::emit;

pub fn validate(file: &Path) -> Result<()> {
    let (study, _) = battlelab::systems::load(file)?;
    let header = study.header();
    let plan = study.plan();
    let variants = plan.variants();
    let mut text = format!(
        "{}: ok — system {}, {} variant(s) ({}), {} runs of {} {}, seed {}\n",
        file.display(),
        study.kind(),
        variants.len(),
        variants.join(", "),
        plan.runs.len(),
        header.trials,
        plan.unit,
        header.seed
    );
    for (i, axis) in plan.axes.iter().enumerate() {
        let mut values: Vec<String> = Vec::new();
        for run in &plan.runs {
            let value = run.coordinates[i].to_string();
            if !values.contains(&value) {
                values.push(value);
            }
        }
        text += &format!("  {axis}: {}\n", values.join(", "));
    }
    emit(&text)
}
