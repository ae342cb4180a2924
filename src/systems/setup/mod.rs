//! The setup study's report: expected forces per coalition and state, charts, rulebook
//! tables. The system itself is in `battlelab_core::systems::setup`.

pub use battlelab_core::systems::setup::*;

use std::path::Path;

use crate::analysis::AxisValue;
use crate::chart::{self, BarGroup};
use crate::engine::derived::Derived;
use crate::frame::LongFrame;
use crate::report::rulebook::{derived_cell, Cell, Live, NumberFormat, Rulebook, Table};
use crate::report::{self, Charts, ReportError};
use battlelab_core::systems::setup::map::{Quantity, StateKind};

impl crate::pipeline::SystemReport for SetupStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
        charts: &Charts,
    ) -> Result<(), ReportError> {
        let derived = crate::engine::System::derived(self, &results.counts, &results.exact);
        write_extras(
            self,
            &SetupResults::of(self, results),
            &derived,
            dir,
            charts,
        )
    }
}

/// A setup study's own frames (expected forces per coalition and state), charts and
/// rulebook tables.
fn write_extras(
    study: &SetupStudy,
    results: &SetupResults,
    derived: &[Derived],
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
    rulebook_tables(study, results, derived).write(charts)
}

/// Rulebook tables: the coalitions' land SP first (mean and spread: the answer), which
/// coalition starts stronger, then each state's expected forces.
fn rulebook_tables(study: &SetupStudy, results: &SetupResults, derived: &[Derived]) -> Rulebook {
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
    // Every cell but the coalition's name is recomputed by the page's panel: the mean
    // from the coalition's run (the plan runs one coalition each, in order:
    // `live_rows_follow_the_plans_runs`), the rest derived by the core.
    let whole = NumberFormat::Decimal(0);
    for (c, name) in study.coalitions.iter().enumerate() {
        let d = &results.exact[c][0];
        let spread = |what| derived_cell(derived, &derived::spread_key(name, what), whole);
        coalitions.row(vec![
            Cell::text(name.clone()),
            spread(derived::Spread::States),
            Cell::decimal(crate::stats::distribution_mean(d), 2),
            spread(derived::Spread::Low),
            spread(derived::Spread::Median),
            spread(derived::Spread::High),
            spread(derived::Spread::Min),
            spread(derived::Spread::Max),
        ]);
        coalitions.live(2, c, Live::Mean(Quantity::Sp.name().into()));
        for (k, what) in derived::Spread::ALL.into_iter().enumerate() {
            let key = derived::spread_key(name, what);
            let column = if k == 0 { 1 } else { k + 2 };
            coalitions.live(column, c, Live::Derived { key, format: whole });
        }
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
            let percent = NumberFormat::Percent(1);
            let cells: Vec<Cell> = std::iter::once(Cell::text(a.clone()))
                .chain(study.coalitions.iter().enumerate().map(|(j, b)| {
                    if i == j {
                        Cell::text("–")
                    } else {
                        derived_cell(derived, &derived::stronger_key(a, b), percent)
                    }
                }))
                .collect();
            table.row(cells);
            for (j, b) in study.coalitions.iter().enumerate() {
                if i != j {
                    let key = derived::stronger_key(a, b);
                    table.live(
                        1 + j,
                        i,
                        Live::Derived {
                            key,
                            format: percent,
                        },
                    );
                }
            }
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
    let quantities = [
        Quantity::Sp,
        Quantity::Leaders,
        Quantity::Nsp,
        Quantity::Transports,
    ];
    for s in &study.states {
        let two = NumberFormat::Decimal(2);
        let e = |q: Quantity| derived_cell(derived, &derived::state_key(&s.name, q), two);
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
        // Read off the file's rows, recomputed with an edit to them; the page takes them
        // with the state's coalition's run.
        for (k, &q) in quantities.iter().enumerate() {
            let key = derived::state_key(&s.name, q);
            states.live(3 + k, s.coalition, Live::Derived { key, format: two });
        }
    }
    book.table(states);
    book
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page reprints a live cell from the run its cell names, found in the run
    /// response by the plan's coordinates: every live cell of the setup tables must name
    /// the run of the coalition its row stands for (the coalitions' rows and the plan's
    /// runs in the same order; a state's row with its own coalition's run).
    #[test]
    fn live_rows_follow_the_plans_runs() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("analyses/setup.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        // The shipped coalitions (North, South, Neutral minors: not in name order), and
        // the same file with North renamed Zulu (first in the file, last by name), so a
        // table that sorted its rows would drift from the plan.
        let reordered = text.replace("\"North\"", "\"Zulu\"");
        for text in [text.clone(), reordered] {
            let study = SetupStudy::parse(&path, &text).unwrap();
            let plan = crate::engine::System::plan(&study);
            let control = crate::sim::RunControl::default();
            let results = crate::engine::driver::run(&study, 1, 1, &control).unwrap();
            let derived = crate::engine::System::derived(&study, &results.counts, &results.exact);
            let book = rulebook_tables(&study, &SetupResults::of(&study, &results), &derived);
            let mut checked = 0;
            for (t, table) in book.tables().iter().enumerate() {
                // Where each table names the row's coalition.
                let named_at = if t + 1 == book.tables().len() { 2 } else { 0 };
                for cell in &table.live {
                    let Cell::Text(coalition) = &table.rows[cell.row][named_at] else {
                        panic!("{}: row {} names no coalition", table.title, cell.row);
                    };
                    assert_eq!(
                        plan.runs[cell.run].coordinates,
                        [AxisValue::Text(coalition.clone())],
                        "{}: row {} column {}",
                        table.title,
                        cell.row,
                        cell.column
                    );
                    checked += 1;
                }
            }
            // 3 coalitions × 7 cells, 3 × 2 comparisons, 13 states × 4 expectations.
            assert_eq!(checked, 3 * 7 + 3 * 2 + 13 * 4);
        }
    }
}
