//! `sptrans`: see `sptrans --help`.
use clap::Parser;

fn main() -> std::process::ExitCode {
    match sptrans_cli::run(sptrans_cli::Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
