//! `sptrans`: see `sptrans --help`.
use clap::Parser;

fn main() -> std::process::ExitCode {
    match sptrans_cli::run(sptrans_cli::Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // A reader that closed the pipe (`sptrans spmv A.mtx | head`): quiet, as after SIGPIPE.
        Err(sptrans_cli::Error::BrokenPipe) => std::process::ExitCode::from(141),
        Err(e) => {
            // Never panics on a closed standard error: the exit status still says it failed.
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
