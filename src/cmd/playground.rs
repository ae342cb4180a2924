//! `battlelab playground [FILE]`: write one HTML page that edits, checks and runs an
//! analysis and its rules file in the browser (`battlelab::report::playground`).

use anyhow::{Context, Result};

use battlelab::report::playground;
use battlelab::report::tryit::Source;

use super::{note, print_out};
use crate::cli::PlaygroundArgs;

pub fn playground(args: PlaygroundArgs) -> Result<()> {
    let source = match &args.file {
        Some(file) => {
            let text = battlelab::toml_input::read_analysis_file(file)?;
            Source::of(file, &text)
        }
        None => playground::example(),
    };
    let module = battlelab::report::wasm::MODULE_GZ;
    // Before anything is written: a file of the user's is never replaced.
    battlelab::output::check_owned_file(&args.out, playground::MARKER)?;
    let html = playground::page(&source, module);
    battlelab::output::write_owned_file(&args.out, &html, playground::MARKER)
        .with_context(|| format!("no page was written at {}", args.out.display()))?;
    if module.is_empty() {
        note("warning: this battlelab was built without its WebAssembly core (rustup target add wasm32-unknown-unknown, then rebuild): the page shows the files but cannot check or run them");
    }
    if !args.quiet {
        let files: Vec<&str> = std::iter::once(source.analysis_name.as_str())
            .chain(source.files.iter().map(|(n, _)| n.as_str()))
            .collect();
        print_out(&format!(
            "wrote {} ({} KiB): an editor for {}; open it in a browser, no install or network needed\n",
            args.out.display(),
            html.len().div_ceil(1024),
            files.join(" and ")
        ))?;
    }
    Ok(())
}
