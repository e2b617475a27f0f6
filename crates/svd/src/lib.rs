#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough.
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

/// The PTX of the tall-skinny block kernels (`kernels-rs/svd`), loaded by the GPU backend.
pub static MODULE: PtxModule = gpu_runtime::embed_module!("svd");

mod dense;
pub mod dist;
mod gpu;
mod host;
mod lanczos;
mod randomized;
mod rows;
mod skinny;

use gpu_csrc::serial::Csrc;
use gpu_csrc::{DeviceCsrc, MAX_K};
use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::DeviceView;
use gpu_runtime::PtxModule;
use sptrans_matrix::{AsDeviceCsrView, Csr, DeviceCsrView};
use std::sync::{Arc, Mutex};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error, wherever it arose.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// From the CSRC build or products.
    #[error(transparent)]
    Csrc(gpu_csrc::Error),
    /// More singular triplets asked for than the matrix has.
    #[error("{rank} singular values asked of a {rows} × {cols} matrix (at most min(rows, cols) = {})", rows.min(cols))]
    RankTooLarge {
        /// Triplets asked for.
        rank: usize,
        /// Rows.
        rows: u64,
        /// Columns.
        cols: u64,
    },
    /// A setting out of its range.
    #[error("invalid SVD setting: {0}")]
    Config(String),
    /// The matrix holds NaN or an infinity (found before the iteration: its Frobenius norm is not
    /// finite).
    #[error("the matrix holds NaN or infinite values (its Frobenius norm is {norm}): the SVD is undefined")]
    NonFinite {
        /// The norm computed.
        norm: f64,
    },
    /// cuBLAS could not be loaded.
    #[error("cuBLAS is not available: {0}")]
    CublasUnavailable(String),
    /// A cuBLAS call failed.
    #[error("{call} failed: {status}")]
    Cublas {
        /// The call.
        call: &'static str,
        /// Its status.
        status: String,
    },
    /// A numerical step that should not fail did (a message).
    #[error("svd: {0}")]
    Internal(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

gpu_runtime::lift_errors!(gpu_csrc => Csrc);

/// The block size when [`Config::block`] is `None`, on the GPU and in the twin, below
/// [`WIDE_BLOCK_NNZ`] nonzeros or [`WIDE_BLOCK_RANK`] triplets ([`default_block`]).
pub const DEFAULT_BLOCK: usize = 2;

/// The block size [`default_block`] takes for large matrices and many triplets: on the H100,
/// k = 50 to 1e-8 of uniform matrices took 0.65 s at block 8 against 1.20 s at block 2 (24.4M
/// nonzeros), and 6.55 s against 16.6 s (243.8M; 4.44 s at block 8 on the CSR pair, which
/// `Layout::Auto` takes for blocks of 3 or more).
pub const WIDE_BLOCK: usize = 8;

/// Nonzeros from which [`default_block`] takes [`WIDE_BLOCK`].
pub const WIDE_BLOCK_NNZ: u64 = 20_000_000;

/// Triplets from which [`default_block`] takes [`WIDE_BLOCK`]: at k = 16 block 2 was the faster
/// (1M × 4284, 11M nonzeros: 0.18 s at 2, 0.30 s at 8), and the realistic suite's k = 16 runs
/// take 0.08–0.31 s at block 2.
pub const WIDE_BLOCK_RANK: usize = 32;

/// Lanczos's block size when [`Config::block`] is `None`, on the GPU and in the serial twin:
/// [`WIDE_BLOCK`] for matrices of at least [`WIDE_BLOCK_NNZ`] nonzeros when at least
/// [`WIDE_BLOCK_RANK`] triplets are wanted (each product sweeps the matrix once, so wide blocks
/// pay where sweeps are long and many), else [`DEFAULT_BLOCK`]. The distributed SVD keeps
/// [`DEFAULT_BLOCK`] (each process holds only its blocks' nonzeros).
///
/// ```
/// use gpu_svd::{default_block, DEFAULT_BLOCK, WIDE_BLOCK};
/// assert_eq!(default_block(243_807_771, 50), WIDE_BLOCK);
/// assert_eq!(default_block(243_807_771, 16), DEFAULT_BLOCK);
/// assert_eq!(default_block(11_000_000, 50), DEFAULT_BLOCK);
/// ```
pub fn default_block(nnz: u64, rank: usize) -> usize {
    if nnz >= WIDE_BLOCK_NNZ && rank >= WIDE_BLOCK_RANK {
        WIDE_BLOCK
    } else {
        DEFAULT_BLOCK
    }
}

/// `cfg` with Lanczos's block resolved by [`default_block`] where it is `None` (the randomized
/// method keeps its own default).
fn with_default_block(cfg: &Config, nnz: u64) -> Config {
    let block = match (cfg.block, cfg.method) {
        (None, Method::Lanczos) => Some(default_block(nnz, cfg.rank)),
        (b, _) => b,
    };
    Config { block, ..cfg.clone() }
}

/// The method of the truncated SVD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Block Golub–Kahan–Lanczos with thick restarts until every wanted residual meets
    /// [`Config::tol`] (or [`Config::max_restarts`]).
    #[default]
    Lanczos,
    /// Randomized SVD (Halko, Martinsson & Tropp 2011): a sketch of `rank + oversample` columns,
    /// `power_iters` power iterations, one small SVD. A fixed amount of work (`2 power_iters +
    /// 2` sweeps of the sketch through the products, plus the residuals'), no restarts; the
    /// answer's residuals say what accuracy it reached (`converged`: all within
    /// [`Config::tol`]). [`Config::block`] is the vectors per product (default 16), and
    /// [`Config::krylov`] and [`Config::max_restarts`] are not used.
    Randomized {
        /// Columns beyond `rank` in the sketch (capped at the smaller dimension).
        oversample: usize,
        /// Power iterations (each a sweep through `Aᵀ` and `A`).
        power_iters: usize,
    },
}

impl Method {
    /// [`Method::Randomized`] with 10 extra columns and 4 power iterations (scikit-learn's
    /// oversampling; its `n_iter` is 5 for `"auto"`).
    pub const RANDOMIZED: Method = Method::Randomized { oversample: 10, power_iters: 4 };
}

/// How the GPU SVD stores the matrix for its products ([`Config::layout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// [`Layout::CsrPair`] for products of 3 or more vectors (the block size) where three
    /// copies of the matrix take at most half the free device memory, else [`Layout::Csrc`].
    /// On the H100 at 0.25B nonzeros, k = 50 to 1e-8: block 8 4.44 s with the pair against
    /// 6.52 s with CSRC, block 16 5.30 s against 9.91 s, randomized 0.69 s against 1.14 s
    /// (`benches/experiments/2026-12-07-svd-pair-profile.md`).
    #[default]
    Auto,
    /// One copy of `A` in CSRC ([`gpu_csrc::DeviceCsrc`]): the least memory; its products on
    /// blocks of more than a few vectors read a line of the block per vector and nonzero.
    Csrc,
    /// `A` and `Aᵀ` in CSR ([`gpu_csrc::CsrPair::with_panels`], built by transposes, with
    /// [`gpu_csrc::CsrPair::set_row_major`]): twice the memory; blocks of 3 or more vectors are
    /// copied row-major and each nonzero reads one line of them, the sums kept in registers
    /// (deterministic); a side whose dense operand outgrows the L2 is cut into column panels
    /// ([`gpu_csrc::CsrPair::l2_panel_rows`]) multiplied one after another.
    CsrPair,
}

/// Settings of the truncated SVD.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The method ([`Method::Lanczos`] by default).
    pub method: Method,
    /// Singular triplets wanted (`r`), the largest.
    pub rank: usize,
    /// Block size `b` (vectors per product), `1 ..= 16`; `None`: [`default_block`] on the GPU
    /// and in the twin (2, or 8 from 20M nonzeros and 32 triplets; on the H100, k = 16 of a 1M ×
    /// 4284 matrix: 0.18 s at b = 2, 0.20 s at 4, 0.24 s at 1, 0.30 s at 8), 16 for the
    /// randomized method, [`cpu::DEFAULT_BLOCK`] in the CPU fallback.
    pub block: Option<usize>,
    /// Stop when every wanted triplet's residual `‖Aᵀu − σv‖` (estimated from the recurrence) is at
    /// most `tol · σ₁`.
    pub tol: f64,
    /// Restarts before giving up (the answer then says `converged == false`).
    pub max_restarts: usize,
    /// Krylov dimension `K` per cycle (rounded up to a multiple of `b`, at most `min(m, n)`);
    /// `None`: `max(6 r, 96)` (on the H100 at r = 16, 96 took 0.172–0.175 s against 0.179–0.192 s
    /// for 128: more restarts, but a cheaper small SVD each).
    pub krylov: Option<usize>,
    /// Seed of the random start block.
    pub seed: u64,
    /// Return the singular vectors ([`Svd::u`], [`Svd::v`]; copied to the host, `(rows + cols)
    /// · r` values).
    pub vectors: bool,
    /// Decompose the column-centered matrix `A − 1 μᵀ` (`μ` the column means) without forming
    /// it: sparse PCA. Each product adds one rank-one correction (two small cuBLAS products on
    /// the GPU); the matrix stays sparse.
    pub center: bool,
    /// Time each phase and each backend operation, reported to [`Config::observer`] as
    /// [`Event::Phase`] and [`Event::Operation`]. Profiling synchronizes the stream around
    /// every operation: slower, for studies only.
    pub profile: bool,
    /// What receives the run's [`Event`]s (none by default): each cycle's residual, and with
    /// [`Config::profile`] the phases' and operations' times.
    pub observer: Observer,
    /// How the GPU stores the matrix for the products ([`Layout::Auto`] by default; the host
    /// paths ignore it).
    pub layout: Layout,
}

/// The receiver of an SVD's [`Event`]s, a field of its [`Config`]: none ([`Observer::default`])
/// or a callback ([`Observer::new`]) that clones of the config share. The library prints
/// nothing itself.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
/// use gpu_svd::{Config, Event, Observer};
/// let cycles = Arc::new(AtomicUsize::new(0));
/// let seen = cycles.clone();
/// let cfg = Config { rank: 2, observer: Observer::new(move |e| if matches!(e, Event::Cycle { .. }) { seen.fetch_add(1, Ordering::Relaxed); }), ..Config::default() };
/// let a = sptrans_matrix::generate::uniform::<f64>(200, 50, 2000, 1).unwrap();
/// gpu_svd::serial::svd(&a, &cfg).unwrap();
/// assert!(cycles.load(Ordering::Relaxed) >= 1);
/// ```
#[derive(Clone, Default)]
pub struct Observer(Option<Arc<Mutex<ObserverFn>>>);

/// The callback an [`Observer`] holds.
type ObserverFn = dyn FnMut(Event<'_>) + Send;

impl Observer {
    /// An observer calling `f` with each event (from the thread running the SVD).
    pub fn new(f: impl FnMut(Event<'_>) + Send + 'static) -> Self {
        Self(Some(Arc::new(Mutex::new(f))))
    }

    /// Whether a callback is set.
    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// Passes `e` to the callback, if any (a callback that panicked earlier is skipped).
    fn emit(&self, e: Event<'_>) {
        if let Some(f) = &self.0 {
            if let Ok(mut f) = f.lock() {
                f(e)
            }
        }
    }
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_set() { "Observer(set)" } else { "Observer(none)" })
    }
}

/// Two observers are equal when both are none or both hold the same callback.
impl PartialEq for Observer {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// What the SVD reports while it runs, to [`Config::observer`] (the library prints nothing
/// itself).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event<'a> {
    /// A cycle ended: restarts made so far and the worst wanted residual estimate relative to
    /// `σ₁` (the run stops when it is at most [`Config::tol`]).
    Cycle {
        /// Restarts made before this cycle's end.
        restart: usize,
        /// `max ‖Aᵀu − σv‖ / σ₁` over the wanted triplets.
        residual: f64,
    },
    /// A cycle found dependent columns (or a block wider than the fast QR takes) and was redone
    /// with the host's QR decisions.
    HostQr {
        /// The restart count at that cycle.
        restart: usize,
    },
    /// With [`Config::profile`]: a phase's wall time (`setup`: CSRC build, cuBLAS handle and
    /// norm; `bases allocated`; `small SVD`, each cycle; `finish`).
    Phase {
        /// The phase.
        what: &'a str,
        /// Seconds.
        seconds: f64,
    },
    /// With [`Config::profile`], at the end: a backend operation's total time and calls
    /// (`product`, `dot`, `qr`, ...; each synchronized).
    Operation {
        /// The operation.
        what: &'a str,
        /// Seconds in all.
        seconds: f64,
        /// Calls.
        calls: usize,
    },
}

impl Default for Config {
    fn default() -> Self {
        Self {
            method: Method::Lanczos,
            rank: 16,
            block: None,
            tol: 1e-8,
            max_restarts: 100,
            krylov: None,
            seed: 0x5eed,
            vectors: false,
            center: false,
            profile: false,
            observer: Observer::default(),
            layout: Layout::Auto,
        }
    }
}

impl Config {
    fn check(&self, rows: u64, cols: u64) -> Result<()> {
        if self.rank == 0 || self.rank as u64 > rows.min(cols) {
            return Err(Error::RankTooLarge { rank: self.rank, rows, cols });
        }
        if let Some(b) = self.block.filter(|&b| b == 0 || b > MAX_K as usize) {
            return Err(Error::Config(format!("block size {b} (1 to {MAX_K})")));
        }
        if !(self.tol > 0.0 && self.tol.is_finite()) {
            return Err(Error::Config(format!("tolerance {} (a positive number)", self.tol)));
        }
        Ok(())
    }
}

/// The answer: `σ₁ ≥ … ≥ σ_r` with their triplets.
#[derive(Debug, Clone)]
pub struct Svd {
    /// The singular values, nonincreasing.
    pub sigma: Vec<f64>,
    /// Each triplet's residual computed with the products at the end: `sqrt(‖A v − σ u‖² +
    /// ‖Aᵀ u − σ v‖²)`, with `u`, `v` of unit length.
    pub residual: Vec<f64>,
    /// The recurrence's estimate `‖Aᵀ u − σ v‖` the stopping test used.
    pub estimate: Vec<f64>,
    /// Left singular vectors, `rows × r` column-major (empty unless [`Config::vectors`]).
    pub u: Vec<f64>,
    /// Right singular vectors, `cols × r` column-major (empty unless [`Config::vectors`]).
    pub v: Vec<f64>,
    /// Whether every estimate met `tol · σ₁` (otherwise the restart cap was reached).
    pub converged: bool,
    /// Restarts made.
    pub restarts: usize,
    /// Block products (`A X` or `Aᵀ U`) made.
    pub products: usize,
    /// Block size used.
    pub block: usize,
    /// Lanczos steps per cycle (`K = steps · block`).
    pub steps: usize,
}

fn frobenius(a: &Csr<u32, f64>) -> f64 {
    a.vals().iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// `‖A − 1 μᵀ‖_F` from `‖A‖_F` and the column means: `‖A‖² − m ‖μ‖²` (each column's sum is
/// `m μ_j`), never below 0.
fn centered_norm(norm: f64, rows: u64, mu: &[f64]) -> f64 {
    (norm * norm - rows as f64 * mu.iter().map(|x| x * x).sum::<f64>()).max(0.0).sqrt()
}

/// Runs the configured method on a backend.
fn solve<B: lanczos::Backend>(be: &mut B, cfg: &Config, a_norm: f64, obs: &mut dyn FnMut(Event<'_>)) -> Result<Svd> {
    match cfg.method {
        Method::Lanczos => lanczos::run(be, cfg, a_norm, obs),
        Method::Randomized { oversample, power_iters } => randomized::run(be, cfg, a_norm, oversample, power_iters, obs),
    }
}

/// Swaps `u` and `v` of an answer computed on `Aᵀ`.
fn untranspose(mut s: Svd, transposed: bool) -> Svd {
    if transposed {
        std::mem::swap(&mut s.u, &mut s.v);
    }
    s
}

/// The value types the SVD takes: `f64`, and `f32`, whose values are widened to `f64` on the
/// GPU (exactly; `8 · nnz` bytes more) so that the whole computation runs in double precision.
pub trait SvdValue: gpu_csrc::SpmvValue {
    /// The matrix with `f64` values: `a` itself, or its structure with the values widened into
    /// `buf`.
    ///
    /// # Errors
    /// Out of memory, launch errors.
    #[doc(hidden)]
    fn as_f64<'a>(gpu: &Gpu, a: &DeviceCsrView<'a, Self>, buf: &'a mut Option<CudaSlice<f64>>) -> Result<DeviceCsrView<'a, f64>>;
}

impl SvdValue for f64 {
    fn as_f64<'a>(_gpu: &Gpu, a: &DeviceCsrView<'a, f64>, _buf: &'a mut Option<CudaSlice<f64>>) -> Result<DeviceCsrView<'a, f64>> {
        Ok(a.clone())
    }
}

impl SvdValue for f32 {
    fn as_f64<'a>(gpu: &Gpu, a: &DeviceCsrView<'a, f32>, buf: &'a mut Option<CudaSlice<f64>>) -> Result<DeviceCsrView<'a, f64>> {
        let vals = a.vals().ok_or(Error::Csrc(gpu_csrc::Error::NoValues))?;
        let n = vals.len();
        let mut wide = gpu.alloc::<f64>(n)?;
        if n > 0 {
            let k: gpu_runtime::KernelOf<svd_kernels::WidenArgs> = gpu.kernel_of(&MODULE, "svd_widen_f32")?;
            let stream = gpu.stream();
            let ((src, _s), (dst, _d)) = (gpu_runtime::arg_ptr(vals, stream), gpu_runtime::arg_ptr_mut(&mut wide, stream));
            let args = svd_kernels::WidenArgs { src, dst, n: n as u64 };
            let cfg = gpu_runtime::grid_1d(n as u64, 256, 1024, 4 * gpu.props().sm_count.max(1));
            // SAFETY: svd_widen_f32(WidenArgs): the values (n) and the new buffer (n).
            unsafe { k.launch(stream, cfg, args)? };
        }
        let wide = buf.insert(wide);
        a.with_values(DeviceView::of(wide)).map_err(|e| Error::Internal(e.to_string()))
    }
}

/// The truncated SVD on the GPU: products on CSRC ([`gpu_csrc::DeviceCsrc`], built here from
/// `a`: a `DeviceCsr` or a borrowed `DeviceCsrView`, of `f64` or `f32` values — see
/// [`SvdValue`]), the Krylov bases in device memory, block operations by cuBLAS and the
/// tall-skinny kernels, the small SVD of the block bidiagonal matrix on the host (faer). Prints
/// nothing; [`Config::observer`] receives the progress.
///
/// # Errors
/// [`Error::RankTooLarge`], [`Error::Config`]; [`Error::CublasUnavailable`]; CSRC, cuBLAS, driver
/// errors, out of memory.
pub fn svd<T: SvdValue>(gpu: &Gpu, a: &impl AsDeviceCsrView<T>, cfg: &Config) -> Result<Svd> {
    let a = a.csr_view();
    cfg.check(a.rows(), a.cols())?;
    run_gpu(gpu, &a, &with_default_block(cfg, a.nnz()), None, &mut |e| cfg.observer.emit(e))
}

/// [`svd`] writing the singular vectors into the caller's device blocks instead of host memory:
/// `u` of `rows × rank` and `v` of `cols × rank` (column-major, any leading dimension), left
/// and right vectors in the order of [`Svd::sigma`]. The answer's `u` and `v` stay empty; the
/// blocks are written on `gpu`'s stream (complete when the call returns: the SVD synchronizes).
///
/// # Errors
/// `Error::Config` for blocks of other shapes; as [`svd`].
pub fn svd_into<T: SvdValue>(
    gpu: &Gpu,
    a: &impl AsDeviceCsrView<T>,
    cfg: &Config,
    u: &mut gpu_runtime::DenseViewMut<'_, f64>,
    v: &mut gpu_runtime::DenseViewMut<'_, f64>,
) -> Result<Svd> {
    let a = a.csr_view();
    cfg.check(a.rows(), a.cols())?;
    for (what, rows_cols, rows) in [("u", (u.rows(), u.cols()), a.rows()), ("v", (v.rows(), v.cols()), a.cols())] {
        if rows_cols != (rows, cfg.rank as u64) {
            return Err(Error::Config(format!("{what}: {} × {} block, expected {rows} × {}", rows_cols.0, rows_cols.1, cfg.rank)));
        }
    }
    let transposed = a.cols() > a.rows();
    // The backend's left vectors span the operator's rows: A's columns when it works on Aᵀ.
    let (ua, vb) = (gpu::Dest::of(u), gpu::Dest::of(v));
    let dest = if transposed { [vb, ua] } else { [ua, vb] };
    run_gpu(gpu, &a, &Config { vectors: false, ..with_default_block(cfg, a.nnz()) }, Some(dest), &mut |e| cfg.observer.emit(e))
}

/// The GPU SVD of a checked view; `dest`: device blocks for the left and right vectors in the
/// operator's orientation.
fn run_gpu<T: SvdValue>(
    gpu: &Gpu,
    a: &DeviceCsrView<'_, T>,
    cfg: &Config,
    dest: Option<[gpu::Dest; 2]>,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<Svd> {
    let t0 = std::time::Instant::now();
    let mut wide = None;
    let a = T::as_f64(gpu, a, &mut wide)?;
    let transposed = a.cols() > a.rows();
    let vals = a.vals().ok_or(Error::Csrc(gpu_csrc::Error::NoValues))?.clone();
    let (mut c, mut pair) = (None, None);
    let ops: &mut dyn gpu_csrc::Products<f64> = if pair_layout(gpu, &a, cfg)? {
        let p = pair.insert(gpu_csrc::CsrPair::with_panels(gpu, &a, gpu_csrc::CsrPair::<f64>::l2_panel_rows(gpu))?);
        p.set_row_major(true);
        p
    } else {
        c.insert(DeviceCsrc::from_csr(gpu, &a)?)
    };
    let mut be = gpu::GpuBackend::new(gpu, ops, transposed, cfg.profile)?;
    be.dest = dest;
    let mut norm = be.norm(&vals)?;
    if !norm.is_finite() {
        return Err(Error::NonFinite { norm });
    }
    if cfg.center {
        norm = centered_norm(norm, a.rows(), &be.center()?);
    }
    if cfg.profile {
        gpu.synchronize()?;
        observer(Event::Phase { what: "setup", seconds: t0.elapsed().as_secs_f64() });
    }
    let s = solve(&mut be, cfg, norm, observer)?;
    be.report(observer);
    Ok(untranspose(s, transposed))
}

/// Whether the GPU SVD of `a` stores it as a [`gpu_csrc::CsrPair`] (row-major products over
/// column panels that keep the dense operand's rows in the L2) rather than CSRC:
/// [`Layout::CsrPair`]; or [`Layout::Auto`] with products of 3 or more vectors (the block size:
/// resolved by [`default_block`] for Lanczos, 16 for the randomized method) when three CSR
/// copies (the pair and the transposes' temporaries) take at most half the free device memory.
///
/// # Errors
/// Reading the free memory.
fn pair_layout(gpu: &Gpu, a: &DeviceCsrView<'_, f64>, cfg: &Config) -> Result<bool> {
    let block = cfg.block.unwrap_or(match cfg.method {
        Method::Lanczos => DEFAULT_BLOCK,
        Method::Randomized { .. } => gpu_csrc::MAX_K as usize,
    });
    Ok(match cfg.layout {
        Layout::CsrPair => true,
        Layout::Csrc => false,
        Layout::Auto => {
            let csr = 4 * (a.rows() + a.cols() + 2) + 12 * a.nnz();
            block >= 3 && 3 * csr <= gpu.memory_info()?.0 / 2
        }
    })
}

/// The serial twin: the same algorithm (same start block, same steps) with the CSRC twin's
/// products and host dense algebra.
pub mod serial {
    use super::*;

    /// The truncated SVD of `a` on the host (see [`crate::svd`]; `f32` values are widened to
    /// `f64`, as on the GPU).
    ///
    /// # Errors
    /// [`Error::RankTooLarge`], [`Error::Config`], [`Error::Internal`].
    pub fn svd<T: sptrans_matrix::Value + Into<f64>>(a: &Csr<u32, T>, cfg: &Config) -> Result<Svd> {
        host_svd(a, cfg, false)
    }
}

/// The CPU fallback: the algorithm of [`svd`] on the host, on every thread of rayon's pool
/// (`RAYON_NUM_THREADS` sets their number), sized for host memory as ARPACK is: single-vector
/// Lanczos ([`cpu::DEFAULT_BLOCK`]) with a small Krylov dimension ([`cpu::default_krylov`]),
/// `A · X` as row gathers and `Aᵀ · U` as row scatters over `A` alone (no stored transpose),
/// the dense operations as one-pass loops over row chunks of the tall blocks, the restart in
/// place. Not the specification (that is [`serial`], sequential and the same bits every run);
/// its answers agree with the twin's within the tolerance asked, and its `σ` within rounding.
/// It holds `A`, the two Krylov bases (`(rows + cols) · (K + 1)` values at `b = 1`), two
/// temporaries of two columns and the scatter's accumulators (a `cols`-vector per thread, at
/// most a stored `Aᵀ`'s size).
pub mod cpu {
    use super::*;

    /// The block size when [`Config::block`] is `None`: single-vector Lanczos, as ARPACK. With
    /// [`default_krylov`] it is faster and smaller than `b = 2` (500k², 5M nonzeros, r = 8, two
    /// cores: 11.6 s at b = 1, K = 20; 25.5 s at b = 2, K = 24). It needs the left side's
    /// breakdown guard of the algorithm (a near-zero pivot reorthogonalizes the new left
    /// vector): without it, a rank-deficient centered matrix once reported a converged `σ ≈ 0`
    /// with a residual of 0.46.
    pub const DEFAULT_BLOCK: usize = 1;

    /// The Krylov dimension when [`Config::krylov`] is `None`: `max(2 r + 4, 20)`, ARPACK's
    /// `ncv` rule for `svds` (`max(2 k + 1, 20)`) with a little room for the restart's kept
    /// triplets; on a CPU the reorthogonalization streams the basis from memory, so a small
    /// basis with more restarts costs less (500k², 5M nonzeros, r = 8, two cores, b = 1: 11.6 s
    /// at K = 20; b = 2: 17.3 s at K = 48, 22.0 s at 96).
    pub fn default_krylov(rank: usize) -> usize {
        (2 * rank + 4).max(20)
    }

    /// The truncated SVD of `a` on the host's threads (`f32` values widened to `f64`).
    ///
    /// # Errors
    /// As [`serial::svd`].
    pub fn svd<T: sptrans_matrix::Value + Into<f64>>(a: &Csr<u32, T>, cfg: &Config) -> Result<Svd> {
        host_svd(a, cfg, true)
    }
}

/// The SVD on the host: the serial twin (`threaded == false`: CSRC twin products, sequential
/// dense operations) or the CPU fallback ([`cpu`]: row gathers and scatters and tall-skinny loops
/// on rayon's threads, [`cpu::DEFAULT_BLOCK`] and [`cpu::default_krylov`] where [`Config`] leaves
/// them `None`); `f32` values widened.
fn host_svd<T: sptrans_matrix::Value + Into<f64>>(a: &Csr<u32, T>, cfg: &Config, threaded: bool) -> Result<Svd> {
    let wide;
    let a: &Csr<u32, f64> = match (a as &dyn std::any::Any).downcast_ref::<Csr<u32, f64>>() {
        Some(a) => a,
        None => {
            wide = a.clone().map_values(Into::into);
            &wide
        }
    };
    cfg.check(a.rows(), a.cols())?;
    let mut norm = frobenius(a);
    if !norm.is_finite() {
        return Err(Error::NonFinite { norm });
    }
    let twin;
    let (c, cfg) = if threaded {
        let krylov = Some(cfg.krylov.unwrap_or(cpu::default_krylov(cfg.rank)));
        let block = Some(cfg.block.unwrap_or(cpu::DEFAULT_BLOCK));
        (host::Products::Rows(rows::RowProducts::new(a)), Config { krylov, block, ..cfg.clone() })
    } else {
        twin = Csrc::from_csr(a);
        (host::Products::Twin(&twin), with_default_block(cfg, a.nnz()))
    };
    let transposed = a.cols() > a.rows();
    let mut be = host::HostBackend { c, transposed, slots: Vec::new(), mu: None };
    if cfg.center {
        norm = centered_norm(norm, a.rows(), &be.center());
    }
    let s = solve(&mut be, &cfg, norm, &mut |e| cfg.observer.emit(e))?;
    Ok(untranspose(s, transposed))
}

#[cfg(test)]
mod signature_tests {
    /// Every kernel loaded with an argument struct takes exactly that struct in the committed
    /// PTX (what `Gpu::kernel_of` checks at load, here without a GPU).
    #[test]
    fn argument_structs_match_the_ptx() {
        use gpu_runtime::check_signature;
        use svd_kernels::{GramArgs, MulArgs, QrStepArgs, WidenArgs};
        check_signature::<GramArgs>(&crate::MODULE, "svd_gram_f64").unwrap();
        check_signature::<MulArgs>(&crate::MODULE, "svd_mul_f64").unwrap();
        check_signature::<QrStepArgs>(&crate::MODULE, "svd_qr_step_f64").unwrap();
        check_signature::<WidenArgs>(&crate::MODULE, "svd_widen_f32").unwrap();
        assert!(check_signature::<MulArgs>(&crate::MODULE, "svd_gram_f64").is_err());
        // Every kernel of the module takes a struct, and every one is checked above.
        let checked = ["svd_gram_f64", "svd_mul_f64", "svd_qr_step_f64", "svd_widen_f32"];
        let unchecked: Vec<_> = crate::MODULE.kernels().into_iter().filter(|k| !checked.contains(k)).collect();
        assert!(unchecked.is_empty(), "kernels without a check: {unchecked:?}");
    }
}
