//! The setup study's report: expected forces per coalition and state, charts, rulebook
//! tables. The system itself is in `battlelab_core::systems::setup`.

pub use battlelab_core::systems::setup::*;

use std::path::Path;

use crate::analysis::AxisValue;
use crate::chart::{self, BarGroup};
use crate::frame::LongFrame;
use crate::report::rulebook::{Cell, Live, Rulebook, Table};
use crate::report::{self, Charts, ReportError};
use battlelab_core::systems::setup::map::{Quantity, StateKind};

impl crate::pipeline::SystemReport for SetupStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
        charts: &Charts,
    ) -> Result<(), ReportError> {
        write_extras(self, &SetupResults::of(self, results), dir, charts)
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
fn write_extras(
    study: &SetupStudy,
    results: &SetupResults,
    dir: &Path,
    charts: &Charts,
) -> Result<(), ReportError> {
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
            &charts.path(&format!("coalition_{}", quantity.name()), None),
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
        &charts.path("states_expected", None),
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
    rulebook_tables(study, results).write(charts)
}

/// Rulebook tables: the coalitions' land SP first (mean and spread: the answer), which
/// coalition starts stronger, then each state's expected forces.
fn rulebook_tables(study: &SetupStudy, results: &SetupResults) -> Rulebook {
    use std::fmt::Write;
    let mut book = Rulebook::new(
        &study.header.name,
        format!("Seed {}, {} simulated maps", results.seed, results.trials),
    );
    let mut md = format!("# {} — rulebook tables\n\n", study.header.name);
    if let Some(d) = &study.header.description {
        let _ = writeln!(md, "{}\n", d.trim());
    }
    let _ = writeln!(md, "Seed {}, {} simulated maps; every figure below is exact (convolution of the states' rows).\n", results.seed, results.trials);
    book.text(&md);
    let title = "Coalition land SP";
    book.text(&format!("## {title}\n\n"));
    let mut coalitions = Table::new(
        title,
        [
            "coalition",
            "states",
            "mean",
            "5%",
            "median",
            "95%",
            "min",
            "max",
        ]
        .map(String::from)
        .to_vec(),
    );
    let whole = |v: usize| {
        Cell::number(
            v as f64,
            crate::report::rulebook::NumberFormat::Decimal(0),
            v.to_string(),
        )
    };
    for (c, name) in study.coalitions.iter().enumerate() {
        let d = &results.exact[c][0];
        let min = d.iter().position(|p| *p > 0.0).unwrap_or(0);
        let max = d.iter().rposition(|p| *p > 0.0).unwrap_or(0);
        coalitions.row(vec![
            Cell::text(name.clone()),
            whole(study.members(c).len()),
            Cell::decimal(crate::stats::distribution_mean(d), 2),
            whole(quantile(d, 0.05)),
            whole(quantile(d, 0.5)),
            whole(quantile(d, 0.95)),
            whole(min),
            whole(max),
        ]);
        // The mean is the run's (the plan runs one coalition each, in order); the
        // quantiles, least and most are read off the whole distribution and stay the
        // file's.
        coalitions.live(2, c, Live::Mean(Quantity::Sp.name().into()));
    }
    book.table(coalitions);
    if study.coalitions.len() > 1 {
        let title = "P(row coalition starts with more land SP than column coalition)";
        book.text(&format!("\n## {title}\n\n"));
        let header: Vec<String> = std::iter::once(String::new())
            .chain(study.coalitions.iter().cloned())
            .collect();
        let mut table = Table::new(title, header);
        for (i, a) in study.coalitions.iter().enumerate() {
            let cells: Vec<Cell> = std::iter::once(Cell::text(a.clone()))
                .chain((0..study.coalitions.len()).map(|j| {
                    if i == j {
                        return Cell::text("–");
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
                    Cell::percent(p, 1)
                }))
                .collect();
            table.row(cells);
        }
        book.table(table);
    }
    let title = "Expected starting forces per state";
    book.text(&format!("\n## {title}\n\n"));
    let mut states = Table::new(
        title,
        [
            "state",
            "kind",
            "coalition",
            "land SP",
            "leaders",
            "NSP",
            "transports",
        ]
        .map(String::from)
        .to_vec(),
    );
    for s in &study.states {
        let e = |q: Quantity| {
            Cell::decimal(
                s.rows.iter().map(|r| f64::from(r.quantity(q))).sum::<f64>() / 6.0,
                2,
            )
        };
        let kind = match s.kind {
            StateKind::Major => "major",
            StateKind::Minor if s.port => "minor",
            StateKind::Minor => "minor, no port",
        };
        states.row(vec![
            Cell::text(s.name.clone()),
            Cell::text(kind),
            Cell::text(study.coalitions[s.coalition].clone()),
            e(Quantity::Sp),
            e(Quantity::Leaders),
            e(Quantity::Nsp),
            e(Quantity::Transports),
        ]);
    }
    book.table(states);
    book
}
