//! `battlelab validate FILE`: check an analysis file without running it, and say what a
//! run would do.

use std::path::Path;

use anyhow::Result;

use super::emit;

pub fn validate(file: &Path) -> Result<()> {
    let study = battlelab::systems::load(file)?.study;
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
        text += &format!("  {axis}: {}\n", plan.axis_values(i).join(", "));
    }
    for notice in study.notices() {
        text += &format!("note: {notice}\n");
    }
    emit(&text)
}
