//! The `battlelab` binary: parse, dispatch, print the error chain, return an exit code.

mod cli;
mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    // Ctrl-C, SIGTERM and SIGHUP end the process in every phase (a phase with a staging
    // folder first removes it). Should the handler fail to install, the default (the
    // process ends) also leaves no report.
    let _ = battlelab::interrupt::install(cmd::on_stop);
    match cmd::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let code = cmd::exit_code(&error);
            if battlelab::interrupt::requested() || cmd::is_interrupted(&error) {
                // Whatever the phase said on its way out, the cause is the stop request.
                cmd::note(&cmd::current_stop_note());
            } else {
                cmd::note(&format!("error: {error}"));
                for cause in error.chain().skip(1) {
                    cmd::note(&format!("  caused by: {cause}"));
                }
            }
            ExitCode::from(code)
        }
    }
}
