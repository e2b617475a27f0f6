//! The command line (clap).
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use sptrans::transpose::Algorithm;

/// GPU sparse-matrix transposition: transpose Matrix Market files, generate matrices, benchmark
/// ScanTrans, MergeTrans, the COO chain and cuSPARSE against the serial twin.
#[derive(Debug, Parser)]
#[command(name = "sptrans", version, about)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Transpose a Matrix Market file (.mtx, .mtx.gz, a SuiteSparse NAME.tar.gz holding NAME/NAME.mtx, or a SciPy .npz) and write the result.
    Transpose(TransposeArgs),
    /// Generate a matrix and write it as Matrix Market.
    Gen(GenArgs),
    /// Benchmark the transposers (default: the built-in suite, every algorithm).
    Bench(BenchArgs),
    /// Multiply: y = A·x in a chosen SpMV format (the threaded CPU fallback without a GPU).
    Spmv(SpmvArgs),
    /// Benchmark every SpMV format against cuSPARSE (f64 and f32): time, GB/s, speedup,
    /// conversion time, footprint; CSV and an SVG chart.
    SpmvBench(SpmvBenchArgs),
    /// Truncated SVD: the k largest singular values with their residuals, by block Lanczos on
    /// CSRC (the threaded CPU fallback without a GPU).
    Svd(SvdArgs),
    /// Show the driver, the device, cuSPARSE, the embedded PTX and the device toolchain.
    Info(InfoArgs),
}

fn parse_algo(s: &str) -> Result<Algorithm, String> {
    if s.eq_ignore_ascii_case("cusparse") {
        return Err("cuSPARSE is the benchmarks' peer, not a transposer of sptrans: `sptrans bench --algos radix,cusparse` compares them".into());
    }
    s.parse().map_err(|e: sptrans::transpose::Error| e.to_string())
}

fn parse_target(s: &str) -> Result<sptrans_report::Target, String> {
    s.parse().map_err(|e: sptrans::transpose::Error| e.to_string())
}

/// `sptrans transpose`.
#[derive(Debug, Args)]
pub struct TransposeArgs {
    /// Input matrix (.mtx, .mtx.gz, a SuiteSparse NAME.tar.gz holding NAME/NAME.mtx, or a SciPy .npz; gzip, zstd, xz and bzip2 are detected by content; `-` for standard input;
    /// pipes and FIFOs work: the input is read once, streaming).
    pub input: PathBuf,
    /// Output file (Matrix Market coordinate general; compressed when it ends in `.gz`, `.zst`, `.xz` or `.bz2`; SciPy `save_npz` CSR when it ends in `.npz`; `-` for
    /// standard output). Written to a temporary file beside it and renamed into place when done.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Algorithm: auto, serial, scan, merge, radix, sym, coo. `auto` is the
    /// library's `Auto` (RadixTrans), SymTrans for any file stored as symmetric, skew-symmetric
    /// or Hermitian (one triangle: a symmetric pattern, told to the plan as a hint), and the
    /// serial twin without a GPU.
    #[arg(long, default_value = "auto", value_parser = parse_algo)]
    pub algo: Algorithm,
    /// Compare the result with the serial twin (the twin's own result with an independent
    /// sort-based transpose); exit code 1 on any difference.
    #[arg(long)]
    pub check: bool,
    /// Host memory the command may use (bytes, or with a suffix: 500M, 16G, 1T; default: what
    /// the system reports available). A matrix that needs more is refused before it is read.
    #[arg(long, value_parser = parse_bytes)]
    pub max_memory: Option<u64>,
    /// Index width: 32 (`u32` pointer and indices) or 64 (the file read with `u64` indices, so
    /// files of more than 2^32 entries are taken; on the GPU a `u64` row pointer, `DeviceCsr64`,
    /// and the 64-bit transposer, in chunks). The output file is the same either way.
    #[arg(long, value_enum, default_value_t = IndexBits::I32)]
    pub index: IndexBits,
    /// GPUs to spread the transpose over (GPUs 0 .. N of this machine, row blocks balanced by
    /// nonzeros, exchanged over NCCL; the result is the one-GPU transpose, bit for bit). More
    /// than 1 needs NCCL: `SPTRANS_NCCL_LIB`, or `libnccl.so` on the loader path; 32-bit
    /// indices, real or integer values.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub gpus: u64,
}

/// `123`, `500M`, `16G`, `1.5T` (powers of 1024; `k`, `M`, `G`, `T`, optional `B` / `iB`).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix("iB").or_else(|| t.strip_suffix('B')).unwrap_or(t);
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m' | 'M') => (&t[..t.len() - 1], 1 << 20),
        Some('g' | 'G') => (&t[..t.len() - 1], 1 << 30),
        Some('t' | 'T') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("`{s}` is not a size (examples: 500M, 16G, 123456)"))?;
    if !(v.is_finite() && v >= 0.0) || v * mult as f64 > u64::MAX as f64 {
        return Err(format!("`{s}` is not a size (examples: 500M, 16G, 123456)"));
    }
    Ok((v * mult as f64) as u64)
}

/// Value type of generated matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FieldArg {
    /// f64 values.
    Real,
    /// i64 values.
    Integer,
    /// `Complex<f64>` values (the real generator's values, and imaginary parts from each entry's
    /// position).
    Complex,
    /// No values.
    Pattern,
}

/// `sptrans gen`.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// The generator and its sizes.
    #[command(subcommand)]
    pub kind: sptrans::matrix::generate::Spec,
    /// Random seed (same seed, same matrix).
    #[arg(long, default_value_t = 1, global = true)]
    pub seed: u64,
    /// Output file (required).
    #[arg(short, long, global = true)]
    pub output: Option<PathBuf>,
    /// Host memory the generator may use (bytes, or with a suffix: 500M, 16G, 1T; default: what
    /// the system reports available). A matrix that would need more is refused before anything
    /// is allocated.
    #[arg(long, value_parser = parse_bytes, global = true)]
    pub max_memory: Option<u64>,
    /// Value field of the output.
    #[arg(long, value_enum, default_value = "real", global = true)]
    pub field: FieldArg,
    /// Index width of the generator: 64 builds matrices of more than 2^32 - 1 nonzeros or with a
    /// dimension past it (rows × cols must still fit 64 bits); the file is the same either way
    /// for matrices both can hold.
    #[arg(long, value_enum, default_value_t = IndexBits::I32, global = true)]
    pub index: IndexBits,
}

/// `sptrans bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// `default` (the seed papers' sizes), `small`, a directory of .mtx (plain or .gz/.zst/.xz/.bz2), .npz and SuiteSparse .tar.gz files, or files.
    #[arg(long, num_args = 1.., default_value = "default")]
    pub suite: Vec<PathBuf>,
    /// Also run the real matrices of this directory (with the default or small suite).
    #[arg(long)]
    pub matrices: Option<PathBuf>,
    /// Also run the matrices listed in this file: one path a line (relative paths from the
    /// list's folder; blank lines and `#` comments skipped).
    #[arg(long)]
    pub list: Option<PathBuf>,
    /// Algorithms, comma-separated (default: serial,scan,merge,radix,sym,coo,cusparse).
    #[arg(long, value_delimiter = ',', value_parser = parse_target)]
    pub algos: Option<Vec<sptrans_report::Target>>,
    /// RadixTrans's largest digit in bits, 1 to 9 (default 8): fewer, wider passes.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=9))]
    pub radix_bits: Option<u32>,
    /// Timed runs per matrix and algorithm (GPU; the serial twin runs at most 3).
    #[arg(long, default_value_t = 10)]
    pub reps: usize,
    /// Untimed runs before timing.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Write every measurement as CSV here.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write every measurement as JSON here: the CSV's fields per record, plus the device, driver,
    /// copy bandwidth and command line (`meta`).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw a bar chart of the times (SVG) here.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Do not draw a progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Value type of the matrices (the sources' f32 values converted: f64 and c64 exactly, f16
    /// and i8 rounded).
    #[arg(long, value_enum, default_value_t = BenchValues::F32)]
    pub values: BenchValues,
    /// Also time the distributed transpose over GPUs 0 .. N (the `dist` column: row blocks
    /// balanced by nonzeros, `auto` on each GPU, NCCL's exchange; checked against the twin, bit
    /// for bit; wall time of a whole call, every GPU synchronized). Needs NCCL; 32-bit indices.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub gpus: u64,
    /// Index width of the transposed matrices: 32 (`u32` pointer and indices) or 64 (a `u64`
    /// row pointer: `DeviceCsr64` and the 64-bit transposer). cuSPARSE takes no 64-bit
    /// pointers: with 64 it still runs its 32-bit `csr2cscEx2` as the peer.
    #[arg(long, value_enum, default_value_t = IndexBits::I32)]
    pub index: IndexBits,
}

/// Index widths (`--index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IndexBits {
    /// `u32` pointers and indices.
    #[value(name = "32")]
    I32,
    /// A `u64` row pointer (`u32` column indices: the narrowest type that holds the columns).
    #[value(name = "64")]
    I64,
}

/// Value types `sptrans bench` moves (`--values`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchValues {
    /// f32 (4 bytes).
    F32,
    /// f64 (8 bytes).
    F64,
    /// IEEE half (2 bytes).
    F16,
    /// 8-bit integers (1 byte).
    I8,
    /// `Complex<f64>` (16 bytes; the f32 value as the real part, moved as its bits).
    C64,
}

fn parse_spmv_target(s: &str) -> Result<crate::spmv_bench::SpmvTarget, String> {
    s.parse().map_err(|e: sptrans::spmv::Error| e.to_string())
}

fn parse_format(s: &str) -> Result<sptrans::spmv::Format, String> {
    if sptrans::spmv::baselines::CuSparseAlg::from_name(s).is_some() {
        return Err(format!("{s} is the benchmarks' peer, not a format of sptrans: `sptrans spmv-bench --formats auto,{s}` compares them"));
    }
    s.parse().map_err(|e: sptrans::spmv::Error| e.to_string())
}

/// Value precision of a product.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Precision {
    /// f32 values and vectors.
    F32,
    /// f64 values and vectors.
    F64,
}

/// `sptrans spmv`.
#[derive(Debug, Args)]
pub struct SpmvArgs {
    /// The matrix (.mtx, .mtx.gz, a SuiteSparse NAME.tar.gz holding NAME/NAME.mtx, or a SciPy .npz; `-` for standard input).
    pub input: PathBuf,
    /// x: a Matrix Market array file, a NumPy `.npy` vector or plain text (numbers separated by
    /// white space) of `cols` entries (default: all ones).
    #[arg(long)]
    pub x: Option<PathBuf>,
    /// Where to write y (Matrix Market array, or NumPy `.npy` when the name ends in `.npy`; `-`:
    /// standard output, the default).
    #[arg(short, long, default_value = "-")]
    pub output: PathBuf,
    /// Format: auto, csr-scalar, csr-vector, csr-adaptive, coo, ell, hyb, scoo, jds, sell,
    /// sell-vi (matrices of at most 256 distinct values), merge-path (cuSPARSE's, the peers, run
    /// under `spmv-bench`).
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    pub format: sptrans::spmv::Format,
    /// Value precision.
    #[arg(long, value_enum, default_value = "f64")]
    pub precision: Precision,
    /// Compare y with the serial twin within the bound 2·γ_{k+2}·|A|·|x| per row; exit code 1
    /// on a difference.
    #[arg(long)]
    pub check: bool,
    /// Host memory the command may use (as `transpose --max-memory`).
    #[arg(long, value_parser = parse_bytes)]
    pub max_memory: Option<u64>,
    /// GPUs to spread the product over (GPUs 0 .. N of this machine, row blocks balanced by
    /// nonzeros; x exchanged over NCCL, all-gathered or by halo, whichever moves less). More
    /// than 1 needs NCCL (`SPTRANS_NCCL_LIB`, or `libnccl.so` on the loader path).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub gpus: u64,
}

/// The method of `sptrans svd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SvdMethod {
    /// Restarted block Lanczos to the tolerance.
    Lanczos,
    /// Randomized SVD: a sketch, power iterations, one small SVD.
    Randomized,
}

/// How `sptrans svd` stores the matrix on the GPU for its products.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SvdLayout {
    /// The library's choice: `pair` for blocks of 3 or more vectors where three copies fit in half the free memory, else `csrc`.
    Auto,
    /// One copy in CSRC: the least memory.
    Csrc,
    /// A and Aᵀ in CSR (twice the memory): wide blocks copied row-major, sums in registers.
    Pair,
}

/// `sptrans svd`.
#[derive(Debug, Args)]
pub struct SvdArgs {
    /// The matrix (.mtx, .mtx.gz, a SuiteSparse NAME.tar.gz holding NAME/NAME.mtx, or a SciPy .npz; `-` for standard input); real or integer values.
    pub input: PathBuf,
    /// Singular values wanted (the largest), at most min(rows, cols).
    #[arg(short = 'k', long = "rank", default_value_t = 16)]
    pub rank: usize,
    /// Block size: vectors per product (1 to 16; default on a GPU 2, or 8 from 20M nonzeros and
    /// 32 singular values; 16 for --method randomized; 1 on the CPU fallback).
    #[arg(long)]
    pub block: Option<usize>,
    /// Stop when every residual ‖Aᵀu − σv‖ is at most tol · σ₁.
    #[arg(long, default_value_t = 1e-8)]
    pub tol: f64,
    /// Cycles at most (each up to the Krylov dimension in block steps, then a restart);
    /// reaching it without converging is an error (exit code 1) after printing what it has.
    #[arg(long = "max-iter", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_iter: u64,
    /// Krylov dimension per cycle (default: max(6k, 96) on a GPU, max(2k + 4, 20) on the CPU).
    #[arg(long)]
    pub krylov: Option<usize>,
    /// `lanczos` (restarted block Lanczos to --tol) or `randomized` (Halko et al.: a sketch of
    /// k + --oversample columns, --power-iters power iterations, one small SVD; a fixed amount
    /// of work whose residuals are printed; missing --tol is then not an error).
    #[arg(long, value_enum, default_value_t = SvdMethod::Lanczos)]
    pub method: SvdMethod,
    /// Randomized: columns of the sketch beyond k.
    #[arg(long, default_value_t = 10)]
    pub oversample: usize,
    /// Randomized: power iterations (each a sweep through Aᵀ and A).
    #[arg(long = "power-iters", default_value_t = 4)]
    pub power_iters: usize,
    /// How the GPU stores the matrix for the products: `auto` (`pair` for blocks of 3 or more
    /// vectors where three copies fit in half the free memory, else `csrc`), `csrc` (one copy)
    /// or `pair` (A and Aᵀ in CSR, twice the memory; row-major products of 3 or more vectors,
    /// column panels where the dense block outgrows the L2). The CPU fallback ignores it.
    #[arg(long, value_enum, default_value_t = SvdLayout::Auto)]
    pub layout: SvdLayout,
    /// Where to write σ₁ … σ_k, one per line (`-`: standard output; the table then goes to
    /// standard error).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Write the left singular vectors U (rows × k) here: a NumPy `.npy` array when the name
    /// ends in `.npy`, else a Matrix Market `array` (dense, column-major; compressed when it ends
    /// in `.gz`, `.zst`, `.xz` or `.bz2`; `-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub left: Option<PathBuf>,
    /// Write the right singular vectors V (cols × k) here, as `--left` does.
    #[arg(long, value_name = "FILE")]
    pub right: Option<PathBuf>,
    /// Write U and V as `PREFIX.U.npy` and `PREFIX.V.npy` (`--left`/`--right` name them one by one).
    #[arg(long, value_name = "PREFIX", conflicts_with_all = ["left", "right"])]
    pub vectors: Option<PathBuf>,
    /// Decompose the column-centered matrix A − 1μᵀ (μ the column means) without forming it:
    /// sparse PCA (V holds the principal axes, U·Σ the scores).
    #[arg(long)]
    pub center: bool,
    /// Host memory the command may use (as `transpose --max-memory`).
    #[arg(long, value_parser = parse_bytes)]
    pub max_memory: Option<u64>,
    /// Print the time of each phase and each GPU operation (synchronizing around every
    /// operation: slower; for studies).
    #[arg(long)]
    pub profile: bool,
    /// GPUs to spread the SVD over (GPUs 0 .. N of this machine, row blocks balanced by
    /// nonzeros, the Krylov bases cut the same way; products and Gram matrices exchanged over
    /// NCCL). More than 1 needs NCCL (`SPTRANS_NCCL_LIB`, or `libnccl.so` on the loader path);
    /// not with `--center`; `--profile` then times phases only.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub gpus: u64,
}

/// `sptrans spmv-bench`.
#[derive(Debug, Args)]
pub struct SpmvBenchArgs {
    /// `default` (uniform 100k², 10M; R-MAT 2^20 and 2^22; 3D Laplacian 100³; a dense row of
    /// 1M over 1M × 1M, 10M), `small`, a directory of .mtx (plain or .gz/.zst/.xz/.bz2), .npz and SuiteSparse .tar.gz files, or files.
    #[arg(long, num_args = 1.., default_value = "default")]
    pub suite: Vec<PathBuf>,
    /// Also run the matrices of this directory.
    #[arg(long)]
    pub matrices: Option<PathBuf>,
    /// Also run the matrices listed in this file: one path a line (relative paths from the
    /// list's folder; blank lines and `#` comments skipped).
    #[arg(long)]
    pub list: Option<PathBuf>,
    /// Formats, comma-separated (default: all, cuSPARSE's included, and auto).
    #[arg(long, value_delimiter = ',', value_parser = parse_spmv_target)]
    pub formats: Option<Vec<crate::spmv_bench::SpmvTarget>>,
    /// Precisions, comma-separated.
    #[arg(long, value_delimiter = ',', value_enum, default_value = "f64,f32")]
    pub precision: Vec<Precision>,
    /// Timed products per matrix and format (the median is reported).
    #[arg(long, default_value_t = 30)]
    pub reps: usize,
    /// Write every measurement as CSV here (with GB/s and GFLOP/s, 2 flops a nonzero).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write every measurement as JSON here: the CSV's fields per record, plus the device, driver,
    /// copy bandwidth and command line (`meta`).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw the speedups over cuSPARSE CSR (SVG) here.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Do not draw a progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// `sptrans info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Skip measuring the copy bandwidth.
    #[arg(long)]
    pub no_bandwidth: bool,
}
