#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// `$write!` (`write` or `writeln`) to `$stream` without panicking: a closed or full stream
/// (`2>&-`, a reader that closed the pipe) loses the text, never the work or the exit status.
macro_rules! quietly {
    ($stream:expr, $write:ident, $($t:tt)*) => {{
        use std::io::Write as _;
        let _ = $write!($stream, $($t)*);
    }};
}

/// A line to standard error, never panicking (`quietly!`).
macro_rules! say {
    ($($t:tt)*) => { quietly!(std::io::stderr(), writeln, $($t)*) };
}

/// A line to standard output, never panicking (`quietly!`).
macro_rules! out {
    ($($t:tt)*) => { quietly!(std::io::stdout(), writeln, $($t)*) };
}

/// Text to standard output without a newline, never panicking (`quietly!`).
macro_rules! out_inline {
    ($($t:tt)*) => { quietly!(std::io::stdout(), write, $($t)*) };
}

pub mod bench;
pub mod cli;
mod files;
pub mod info;
mod output;
pub mod spmv;
pub mod spmv_bench;
pub mod svd;

use std::path::PathBuf;

pub use cli::Cli;

/// Errors of the tool.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading, parsing or writing a matrix.
    #[error("{}", matrix_message(path, source))]
    Matrix {
        /// The file.
        path: PathBuf,
        /// What went wrong (a parse error carries its line number).
        source: sptrans::matrix::Error,
    },
    /// Generating a matrix.
    #[error("generating the matrix: {0}")]
    Gen(sptrans::matrix::Error),
    /// Moving a matrix to or from the GPU.
    #[error("device transfer: {0}")]
    Device(#[from] sptrans::matrix::Error),
    /// The library failed (`sptrans::Error`: a transposer, an SpMV plan, the SVD, ...; driver
    /// errors, out of memory among them, always as `sptrans::Error::Runtime`).
    #[error(transparent)]
    Toolkit(#[from] sptrans::Error),
    /// The truncated SVD reached its restart cap.
    #[error("{0}")]
    NotConverged(String),
    /// Standard output was closed by its reader (`… | head`): the program ends quietly with
    /// status 141, as after `SIGPIPE`.
    #[error("standard output closed")]
    BrokenPipe,
    /// Writing an output (CSV, plot) failed.
    #[error("{path}: {msg}")]
    Output {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        msg: String,
    },
    /// `--check` found a difference from the serial twin.
    #[error("check failed: {0}")]
    CheckFailed(String),
    /// An explicit GPU algorithm was asked for and there is no GPU.
    #[error("--algo {algo} needs a GPU, and none is usable: {why} (use --algo auto to fall back to the serial twin, or --algo serial)")]
    NoGpu {
        /// The algorithm asked for.
        algo: &'static str,
        /// Why there is no GPU.
        why: String,
    },
    /// A usage error the argument parser cannot see.
    #[error("{0}")]
    Usage(String),
}

/// The library's errors reach the tool through the facade's one type, which lifts driver
/// errors (out of memory among them) to `sptrans::Error::Runtime` however deep they arose.
macro_rules! through_facade {
    ($($t:ty),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Error::Toolkit(sptrans::Error::from(e))
            }
        }
    )*};
}
through_facade!(sptrans::transpose::Error, sptrans::spmv::Error, sptrans::svd::Error, sptrans::runtime::Error);

/// `path: error`, without repeating the path when the error already names it (a file that could
/// not be opened).
fn matrix_message(path: &std::path::Path, source: &sptrans::matrix::Error) -> String {
    match source {
        sptrans::matrix::Error::Open { .. } => source.to_string(),
        _ => format!("{}: {source}", if path.as_os_str() == "-" { "standard input".into() } else { path.display().to_string() }),
    }
}

/// `Result` with the tool's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Runs one command.
pub fn run(cli: Cli) -> Result<()> {
    // Every output path is checked before any reading or computing (issue 38).
    let vectors = match &cli.command {
        cli::Command::Svd(a) => {
            let (u, v) = svd::vector_paths(a);
            u.into_iter().chain(v).collect()
        }
        _ => Vec::new(),
    };
    let outputs: Vec<&std::path::Path> = match &cli.command {
        cli::Command::Transpose(a) => vec![a.output.as_path()],
        cli::Command::Gen(a) => a.output.iter().map(|p| p.as_path()).collect(),
        cli::Command::Bench(a) => a.csv.iter().chain(&a.json).chain(a.plot.iter()).map(|p| p.as_path()).collect(),
        cli::Command::Spmv(a) => vec![a.output.as_path()],
        cli::Command::SpmvBench(a) => a.csv.iter().chain(&a.json).chain(a.plot.iter()).map(|p| p.as_path()).collect(),
        cli::Command::Svd(a) => a.output.iter().chain(&vectors).map(|p| p.as_path()).collect(),
        cli::Command::Info(_) => vec![],
    };
    let inputs: Vec<&std::path::Path> = match &cli.command {
        cli::Command::Transpose(a) => vec![a.input.as_path()],
        cli::Command::Spmv(a) => std::iter::once(a.input.as_path()).chain(a.x.as_deref()).collect(),
        cli::Command::Svd(a) => vec![a.input.as_path()],
        _ => Vec::new(),
    };
    for p in outputs {
        output::check(p)?;
        output::distinct(p, &inputs)?;
    }
    // One process per GPU under a launcher (torchrun, mpirun, srun) is the SVD's alone: every
    // other command would run whole in each process, on the same GPU, into the same files.
    if let Some(env) = sptrans::dist::RankEnv::from_env()?.filter(|e| e.world > 1) {
        let name = match &cli.command {
            cli::Command::Transpose(_) => Some("transpose"),
            cli::Command::Bench(_) => Some("bench"),
            cli::Command::Spmv(_) => Some("spmv"),
            cli::Command::SpmvBench(_) => Some("spmv-bench"),
            cli::Command::Gen(_) | cli::Command::Svd(_) | cli::Command::Info(_) => None,
        };
        if let Some(name) = name {
            return Err(Error::Usage(format!(
                "{name} under a launcher of {} processes (rank {}): only `svd` runs one process per GPU; run {name} in one process (`--gpus N` spreads transpose, spmv and bench over the GPUs of a machine; SPTRANS_LAUNCHER=none runs a single process started under a launcher's environment)",
                env.world, env.rank
            )));
        }
    }
    match cli.command {
        cli::Command::Transpose(a) => files::transpose(&a),
        cli::Command::Gen(a) => files::gen(&a),
        cli::Command::Bench(a) => bench::bench(&a),
        cli::Command::Spmv(a) => spmv::spmv(&a),
        cli::Command::SpmvBench(a) => spmv_bench::bench(&a),
        cli::Command::Svd(a) => svd::svd(&a),
        cli::Command::Info(a) => info::info(&a),
    }
}

/// The `meta` object of `--json` results: the command line, the tool's version, the time, the
/// device and its driver (or that the serial twin ran), and the measured copy bandwidth.
pub(crate) fn json_meta(gpu: Option<&sptrans::runtime::Gpu>, copy_gbs: Option<f64>, extra: serde_json::Value) -> serde_json::Value {
    let driver = sptrans::runtime::driver_version().ok().map(|(a, b)| format!("{a}.{b}"));
    let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut m = serde_json::json!({
        "command": std::env::args().collect::<Vec<_>>().join(" "),
        "sptrans_version": env!("CARGO_PKG_VERSION"),
        "unix_time": unix,
        "device": gpu.map_or("none (the serial twin)".to_string(), |g| g.props().name.clone()),
        "cuda_driver": driver,
        "copy_gb_per_s": copy_gbs,
    });
    if let (Some(o), serde_json::Value::Object(e)) = (m.as_object_mut(), extra) {
        o.extend(e);
    }
    m
}

/// Writes `csv_text` as JSON (`sptrans_report::json_from_csv`) to `path`.
pub(crate) fn write_json(path: &std::path::Path, csv_text: &str, meta: serde_json::Value) -> Result<()> {
    let text = sptrans_report::json_from_csv(csv_text, meta).map_err(|msg| Error::Output { path: path.to_path_buf(), msg })?;
    files::write_with(path, |w| w.write_all(text.as_bytes()).map_err(|e| e.to_string()))?;
    say!("wrote {}", path.display());
    Ok(())
}

/// The first GPU, or why there is none (any failure to open one counts as none).
pub fn open_gpu() -> std::result::Result<sptrans::runtime::Gpu, String> {
    sptrans::runtime::Gpu::first().map_err(|e| e.to_string())
}
