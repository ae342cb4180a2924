//! The setup study's report: expected forces per coalition and state, charts, rulebook
//! tables. The system itself is in `battlelab_core::systems::setup`.

pub use battlelab_core::systems::setup::*;

use std::path::Path;

use crate::analysis::AxisValue;
use crate::chart::{self, BarGroup};
use crate::frame::LongFrame;
use crate::report::{self, ReportError};
use crate::rules::setup::{Quantity, StateKind};

impl crate::pipeline::SystemReport for SetupStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
    ) -> Result<(), ReportError> {
        write_extras(self, &SetupResults::of(self, results), dir)
    }
}

/// The smallest total whose cumulative probability reaches `q`.
fn quantile(d: &[f64], q: f64) -> usize {
    let mut cumulative = 0.0;
    for (v, p) in d.iter().enumerate() {
        cumulative += p;
        if cumulative >= q - 1e-12 {
            return v;
        }
    }
    d.len().saturating_sub(1)
}

/// A setup study's own frames (expected forces per coalition and state), charts and
/// rulebook tables.
fn write_extras(study: &SetupStudy, results: &SetupResults, dir: &Path) -> Result<(), ReportError> {
    let frame_error = report::frame_error(dir);
    let none: [AxisValue; 0] = [];
    let mut expectations = LongFrame::new(&[]);
    for (c, coalition) in study.coalitions.iter().enumerate() {
        for (q, quantity) in Quantity::ALL.iter().enumerate() {
            let counts = &results.counts[c][q];
            let exact = &results.exact[c][q];
            let simulated = crate::stats::count_mean(counts);
            expectations
                .row("base", &none)
                .text("level", "coalition")
                .text("group", coalition)
                .text("quantity", quantity.name())
                .float("mean", Some(simulated))
                .float("exact_mean", Some(crate::stats::distribution_mean(exact)))
                .finish();
        }
    }
    for state in &study.states {
        for quantity in Quantity::ALL {
            let exact = state
                .rows
                .iter()
                .map(|r| f64::from(r.quantity(quantity)))
                .sum::<f64>()
                / 6.0;
            expectations
                .row("base", &none)
                .text("level", "state")
                .text("group", &state.name)
                .text("quantity", quantity.name())
                .float("mean", None)
                .float("exact_mean", Some(exact))
                .finish();
        }
    }
    report::write_frame(
        dir,
        "expectations",
        &mut expectations.build("setup").map_err(frame_error)?,
    )?;

    for (q, quantity, label) in [
        (0usize, Quantity::Sp, "land SP"),
        (4, Quantity::Leaders, "leaders"),
        (5, Quantity::Nsp, "NSP"),
    ] {
        let series: Vec<(String, Vec<(f64, f64)>)> = study
            .coalitions
            .iter()
            .enumerate()
            .map(|(c, name)| {
                let d = &results.exact[c][q];
                (
                    name.clone(),
                    d.iter()
                        .enumerate()
                        .filter(|(_, p)| **p > 0.0)
                        .map(|(v, &p)| (v as f64, p))
                        .collect(),
                )
            })
            .collect();
        chart::distributions(
            &dir.join(format!("coalition_{}", quantity.name())),
            &format!("Starting {label} per coalition"),
            label,
            "probability",
            &series,
        )?;
    }
    let groups: Vec<BarGroup> = study
        .states
        .iter()
        .map(|s| BarGroup {
            label: s.name.clone(),
            values: [Quantity::Sp, Quantity::Leaders, Quantity::Nsp]
                .iter()
                .map(|&q| s.rows.iter().map(|r| f64::from(r.quantity(q))).sum::<f64>() / 6.0)
                .collect(),
        })
        .collect();
    chart::grouped_bars(
        &dir.join("states_expected"),
        "Expected starting forces per state",
        "state",
        "expected",
        &[
            "land SP".to_string(),
            "leaders".to_string(),
            "NSP".to_string(),
        ],
        &groups,
    )?;
    report::write_text(dir, "tables.md", &rulebook_tables(study, results))
}

fn rulebook_tables(study: &SetupStudy, results: &SetupResults) -> String {
    use std::fmt::Write;
    let mut md = format!("# {} — rulebook tables\n\n", study.name);
    if let Some(d) = &study.description {
        let _ = writeln!(md, "{}\n", d.trim());
    }
    let _ = writeln!(md, "Seed {}, {} simulated maps; every figure below is exact (convolution of the states' rows).\n", results.seed, results.trials);
    let _ = writeln!(md, "## Expected starting forces per state\n\n| state | kind | coalition | land SP | leaders | NSP | transports |\n|---|---|---|---|---|---|---|");
    for s in &study.states {
        let e = |q: Quantity| s.rows.iter().map(|r| f64::from(r.quantity(q))).sum::<f64>() / 6.0;
        let kind = match s.kind {
            StateKind::Major => "major",
            StateKind::Minor if s.port => "minor",
            StateKind::Minor => "minor, no port",
        };
        let _ = writeln!(
            md,
            "| {} | {kind} | {} | {:.2} | {:.2} | {:.2} | {:.2} |",
            s.name,
            study.coalitions[s.coalition],
            e(Quantity::Sp),
            e(Quantity::Leaders),
            e(Quantity::Nsp),
            e(Quantity::Transports)
        );
    }
    let _ = writeln!(md, "\n## Coalition land SP\n\n| coalition | states | mean | 5% | median | 95% | min | max |\n|---|---|---|---|---|---|---|---|");
    for (c, name) in study.coalitions.iter().enumerate() {
        let d = &results.exact[c][0];
        let min = d.iter().position(|p| *p > 0.0).unwrap_or(0);
        let max = d.iter().rposition(|p| *p > 0.0).unwrap_or(0);
        let _ = writeln!(
            md,
            "| {name} | {} | {:.2} | {} | {} | {} | {min} | {max} |",
            study.members(c).len(),
            crate::stats::distribution_mean(d),
            quantile(d, 0.05),
            quantile(d, 0.5),
            quantile(d, 0.95)
        );
    }
    if study.coalitions.len() > 1 {
        let _ = writeln!(
            md,
            "\n## P(row coalition starts with more land SP than column coalition)\n"
        );
        let _ = writeln!(
            md,
            "| | {} |\n|---|{}",
            study.coalitions.join(" | "),
            "---|".repeat(study.coalitions.len())
        );
        for (i, a) in study.coalitions.iter().enumerate() {
            let cells: Vec<String> = (0..study.coalitions.len())
                .map(|j| {
                    if i == j {
                        return "–".to_string();
                    }
                    let (da, db) = (&results.exact[i][0], &results.exact[j][0]);
                    let mut cumulative_b = vec![0.0; da.len().max(db.len()) + 1];
                    for v in 0..cumulative_b.len() - 1 {
                        cumulative_b[v + 1] = cumulative_b[v] + db.get(v).copied().unwrap_or(0.0);
                    }
                    // P(A > B) = Σ_a P(A = a) · P(B < a).
                    let p: f64 = da
                        .iter()
                        .enumerate()
                        .map(|(v, p)| p * cumulative_b[v.min(cumulative_b.len() - 1)])
                        .sum();
                    format!("{:.1}%", p * 100.0)
                })
                .collect();
            let _ = writeln!(md, "| {a} | {} |", cells.join(" | "));
        }
    }
    md
}
