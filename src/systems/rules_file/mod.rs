//! Rules files' report: each run's outcomes and metrics (exact beside simulated), a chart
//! of outcomes per variant, and `tables.md` with every table of the rules file as printed
//! and as modified, its result codes (their text built in the core,
//! `battlelab_core::systems::rules_file::printed`, which the report page reprints after an
//! edit), and the outcome tables. The system itself is in
//! `battlelab_core::systems::rules_file`.

pub use battlelab_core::systems::rules_file::*;

use std::path::Path;

use battlelab_core::engine::System;
use battlelab_core::systems::rules_file::printed::run_label;

use crate::chart::{self, BarGroup};
use crate::frame::LongFrame;
use crate::report::rulebook::{Cell, Live, NumberFormat, Rulebook, Table};
use crate::report::{self, Charts, ReportError};
use crate::stats::percentages_summing_to_100;

impl crate::pipeline::SystemReport for RulesStudy {
    fn extras(
        &self,
        results: &crate::engine::driver::PlanResults<Self>,
        dir: &Path,
        charts: &Charts,
    ) -> Result<(), ReportError> {
        let axes: Vec<&str> = self.axes.iter().map(|a| a.parameter.as_str()).collect();
        let mut expectations = LongFrame::new(&axes);
        for (run, r) in self.runs.iter().enumerate() {
            let counts = &results.counts[run];
            let exact = results.exact[run].as_ref();
            let n = counts.trials();
            let vname = &self.variants[r.variant].name;
            let mut row = expectations
                .row(vname, &r.coordinates)
                .int("trials", n as i64);
            for (name, value) in &r.settings {
                row = row.int(&format!("start_{}", column_name(name)), *value);
            }
            for o in self.outcomes(run, counts, exact) {
                let column = column_name(&o.name);
                row = row
                    .float(
                        &format!("p_{column}"),
                        Some(o.count as f64 / n.max(1) as f64),
                    )
                    .float(&format!("exact_p_{column}"), o.exact);
            }
            for d in self.distributions(run, counts, exact) {
                row = row
                    .float(&format!("mean_{}", d.metric), Some(d.mean()))
                    .float(&format!("exact_mean_{}", d.metric), d.exact_mean());
            }
            row.finish();
        }
        report::write_frame(
            dir,
            "expectations",
            &mut expectations
                .build("rules")
                .map_err(report::frame_error(dir))?,
        )?;
        draw_charts(self, results, charts)?;
        rulebook_tables(self, results).write(charts)
    }
}

/// Each run's outcome probabilities: exact where the run is exact, else simulated.
fn probabilities(
    study: &RulesStudy,
    results: &crate::engine::driver::PlanResults<RulesStudy>,
    run: usize,
) -> Vec<f64> {
    let counts = &results.counts[run];
    let n = counts.trials().max(1) as f64;
    study
        .outcomes(run, counts, results.exact[run].as_ref())
        .iter()
        .map(|o| o.exact.unwrap_or(o.count as f64 / n))
        .collect()
}

fn draw_charts(
    study: &RulesStudy,
    results: &crate::engine::driver::PlanResults<RulesStudy>,
    charts: &Charts,
) -> Result<(), ReportError> {
    for (v, variant) in study.variants.iter().enumerate() {
        let runs: Vec<usize> = (0..study.runs.len())
            .filter(|r| study.runs[*r].variant == v)
            .collect();
        let series: Vec<String> = variant.game.outcomes.iter().map(|o| o.0.clone()).collect();
        let groups: Vec<BarGroup> = runs
            .iter()
            .take(60)
            .map(|&r| BarGroup {
                label: run_label(study, r),
                values: probabilities(study, results, r),
            })
            .collect();
        let suffix = report::variant_suffix(&variant.name, study.variants.len());
        let of = (study.variants.len() > 1).then_some(variant.name.as_str());
        chart::grouped_bars(
            &charts.path(&format!("outcome{suffix}"), of),
            &format!("How the battle ends — {}", variant.game.name),
            if study.axes.is_empty() {
                "battle"
            } else {
                "run"
            },
            "probability",
            &series,
            &groups,
        )?;
    }
    Ok(())
}

fn rulebook_tables(
    study: &RulesStudy,
    results: &crate::engine::driver::PlanResults<RulesStudy>,
) -> Rulebook {
    let exact_everywhere = results.exact.iter().all(Option::is_some);
    let mut book = Rulebook::new(
        &study.header.name,
        format!(
            "Seed {}, {} battles per row{}",
            results.seed,
            results.trials,
            if exact_everywhere {
                " (percentages exact)"
            } else {
                ""
            }
        ),
    );
    let mut md = format!("# {}\n\n", study.header.name);
    if let Some(d) = &study.header.description {
        md.push_str(&format!("{d}\n\n"));
    }
    for notice in &study.notices {
        md.push_str(&format!("Note: {notice}.\n\n"));
    }
    book.text(&md);
    // The rules as the analysis reads them (the same text the page reprints after an
    // edit: `battlelab_core::systems::rules_file::printed`).
    book.printed(&battlelab_core::engine::System::printed(study));
    book.text("\n## How the battle ends\n\n");
    let mut header: Vec<String> = vec!["variant".into(), "run".into()];
    let outcome_names: Vec<String> = study.variants[0]
        .game
        .outcomes
        .iter()
        .map(|o| o.0.clone())
        .collect();
    header.extend(outcome_names.iter().map(|o| format!("{o} %")));
    let mut table = Table::new("How the battle ends", header);
    for (run, r) in study.runs.iter().enumerate() {
        let game = study.game(run);
        if game.outcomes.iter().map(|o| &o.0).ne(outcome_names.iter()) {
            continue;
        }
        let p = probabilities(study, results, run);
        let shown = percentages_summing_to_100(&p, 1);
        let mut cells = vec![
            Cell::text(study.variants[r.variant].name.clone()),
            Cell::text(run_label(study, run)),
        ];
        cells.extend(shown.iter().zip(&p).map(|(u, &x)| {
            Cell::number(
                x,
                NumberFormat::Percent(1),
                format!("{}.{}", u / 10, u % 10),
            )
        }));
        table.row(cells);
        for (k, name) in outcome_names.iter().enumerate() {
            table.live(2 + k, run, Live::Hundred(name.clone()));
        }
    }
    book.table(table);
    book
}
