#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough.
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

pub mod adaptive;
mod auto;
pub mod baselines;
mod convert;
pub mod cpu;
mod cusparse;
pub mod dist;
pub mod ell;
pub mod hyb;
pub mod jds;
mod launch;
pub mod scoo;
pub mod sell;
pub mod serial;
pub mod vi;

pub use auto::{RowStats, DEFAULT_PRODUCTS, TRIAL_MARGIN, TRIAL_MIN_PRODUCTS, TRIAL_REPS};

use std::str::FromStr;

use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::{Payload, PtxModule};
use sptrans_matrix::DeviceCsrView;
use sptrans_matrix::Value;

/// The embedded `spmv` PTX module (built from `kernels-rs/spmv`).
pub static MODULE: PtxModule = gpu_runtime::embed_module!("spmv");

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error, wherever it arose.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// From the conversions' pointers-to-index.
    #[error(transparent)]
    Ptr2Idx(gpu_ptr2idx::Error),
    /// From the conversions' scans.
    #[error(transparent)]
    Scan(gpu_scan::Error),
    /// From JDS's sort by row length.
    #[error(transparent)]
    Radix(gpu_radix::Error),
    /// From SCOO's sort by column.
    #[error(transparent)]
    Segsort(gpu_segsort::Error),
    /// From HYB's histogram of row lengths.
    #[error(transparent)]
    Histogram(gpu_histogram::Error),
    /// A format's host arrays that break its layout (the constructors' validation).
    #[error("invalid {format} matrix: {reason}")]
    Invalid {
        /// The format.
        format: &'static str,
        /// What is wrong, where.
        reason: String,
    },
    /// ELL or SELL-C-σ would pad too much: more than [`ell::ELL_MAX_FILL`] (ELL) or
    /// [`sell::SELL_MAX_FILL`] (SELL-C-σ) slots per nonzero.
    #[error("{format} would need {slots} slots for {nnz} nonzeros (more than {} per nonzero): the rows are too uneven; use coo, hyb, csr-adaptive or merge-path", if *format == "ell" { ell::ELL_MAX_FILL } else { sell::SELL_MAX_FILL })]
    TooMuchPadding {
        /// `ell` or `sell`.
        format: &'static str,
        /// Slots (`rows · width`).
        slots: u64,
        /// Nonzeros.
        nnz: u64,
    },
    /// [`Format::SellVi`] on a matrix of more distinct values than one byte indexes.
    #[error("sell-vi needs at most {max} distinct values, the matrix holds at least {at_least}: use sell")]
    TooManyValues {
        /// Distinct values found before the count stopped.
        at_least: u64,
        /// [`vi::VI_MAX`].
        max: u64,
    },
    /// A vector of the wrong length.
    #[error("spmv: {what} has {got} entries, expected {expected}")]
    LengthMismatch {
        /// `x` or `y`.
        what: &'static str,
        /// Length required.
        expected: u64,
        /// Length given.
        got: u64,
    },
    /// A pattern matrix (no values) cannot be multiplied.
    #[error("spmv: the matrix has no values (a pattern matrix)")]
    NoValues,
    /// A format name that [`Format::from_str`] does not know.
    #[error("unknown SpMV format `{0}` (auto, csr-scalar, csr-vector, csr-adaptive, coo, ell, hyb, scoo, jds, sell, sell-vi, merge-path, cusparse; cuSPARSE's other algorithms are the peers of baselines::CuSparseSpmv)")]
    UnknownFormat(String),
    /// cuSPARSE could not be loaded (the baseline formats).
    #[error("cuSPARSE is not available: {0}")]
    CuSparseUnavailable(String),
    /// A cuSPARSE call failed.
    #[error("{call} failed: {status}")]
    CuSparse {
        /// The call.
        call: &'static str,
        /// Its status.
        status: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

gpu_runtime::lift_cusparse_errors!();
gpu_runtime::lift_errors!(gpu_ptr2idx => Ptr2Idx, gpu_scan => Scan, gpu_radix => Radix, gpu_segsort => Segsort, gpu_histogram => Histogram);

/// Bytes an SpMV must move at least, the model behind the GB/s of the benchmarks: values and
/// column indices once, the row pointer, `x` once and `y` written, for `value_bytes`-byte values.
///
/// ```
/// assert_eq!(gpu_spmv::byte_model(2, 3, 4, 8), 12 * 4 + 4 * 3 + 8 * 5);
/// ```
pub fn byte_model(rows: u64, cols: u64, nnz: u64, value_bytes: u64) -> u64 {
    (4 + value_bytes) * nnz + 4 * (rows + 1) + value_bytes * (cols + rows)
}

/// [`Error::LengthMismatch`] unless `x` has `cols` and `y` `rows` entries.
pub(crate) fn check_vectors(rows: u64, cols: u64, x_len: usize, y_len: usize) -> Result<()> {
    if x_len as u64 != cols {
        return Err(Error::LengthMismatch { what: "x", expected: cols, got: x_len as u64 });
    }
    if y_len as u64 != rows {
        return Err(Error::LengthMismatch { what: "y", expected: rows, got: y_len as u64 });
    }
    Ok(())
}

pub(crate) fn invalid(format: &'static str, reason: String) -> Error {
    Error::Invalid { format, reason }
}

/// The value types the kernels are built for: `f32` and `f64`.
pub trait SpmvValue: Payload + Value + Into<f64> + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> {
    /// The type's name in kernel symbols (`spmv_csr_scalar_f64`).
    const NAME: &'static str;
    /// Unit roundoff (half the machine epsilon): `2^-24` for `f32`, `2^-53` for `f64`.
    const UNIT_ROUNDOFF: f64;
    /// The value's bits, widened ([`vi`]'s tables are sorted by them).
    fn to_bits64(self) -> u64;
    /// The value of [`SpmvValue::to_bits64`]'s bits.
    fn from_bits64(bits: u64) -> Self;
}

impl SpmvValue for f32 {
    const NAME: &'static str = "f32";
    const UNIT_ROUNDOFF: f64 = f32::EPSILON as f64 / 2.0;
    fn to_bits64(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_bits64(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

impl SpmvValue for f64 {
    const NAME: &'static str = "f64";
    const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
    fn from_bits64(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

/// A storage format with its kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Chosen when the plan is made: the row-length statistics give [`Format::candidates`]
    /// (the rule [`Format::choose_for`] and its rivals on that class of matrix), and when more
    /// than one, each is converted and timed on a few products and the fastest kept
    /// ([`Spmv::trials`] tells the times).
    Auto,
    /// CSR, one thread per row; deterministic. Good for short, even rows; one long row stalls
    /// its warp.
    CsrScalar,
    /// CSR, one warp per row with a shuffle reduction; deterministic. Good for rows of 32 or
    /// more; wastes lanes on short rows.
    CsrVector,
    /// CSR-adaptive ([`adaptive`]): row blocks of short rows streamed through shared memory, a
    /// block per long row; deterministic except for rows longer than
    /// [`spmv_kernels::ADAPTIVE_LONG`].
    CsrAdaptive,
    /// COO (the row of every nonzero, from ptr2idx; stored in 16 bits above a base row per
    /// chunk when no chunk spans 2^16 rows or more): a warp per chunk of
    /// [`spmv_kernels::COO_CHUNK`] nonzeros, equal rows summed across the warp and added by one
    /// atomic add per row and chunk: even work per warp whatever the rows, but **not
    /// bit-reproducible** run to run.
    Coo,
    /// ELL ([`ell`]): rows padded to the longest, column-major; deterministic. Refused past
    /// [`ell::ELL_MAX_FILL`] slots per nonzero.
    Ell,
    /// ELL-COO / HYB ([`hyb`]): ELL of a width from the row-length histogram plus COO for the
    /// overflow (atomic: not bit-reproducible when there is overflow).
    Hyb,
    /// Sliced COO ([`scoo`]): slices of rows accumulated in shared memory (shared atomics: not
    /// bit-reproducible).
    Scoo,
    /// JDS ([`jds`]): rows sorted by length, jagged diagonals; deterministic. A thread walks
    /// a whole row: a few very long rows among short ones leave their threads working alone
    /// (a circuit's dense rails: 176 ms against cuSPARSE's 0.17, H100, RESULTS.md), which is why
    /// [`Format::Auto`] takes it for even rows only.
    Jds,
    /// SELL-C-σ ([`sell`]): chunks of 32 rows padded to their longest, column-major, rows sorted
    /// by length inside windows of σ when that saves padding, columns in 16 bits above a chunk's
    /// base where they fit; a warp per chunk; deterministic. Refused past
    /// [`sell::SELL_MAX_FILL`] slots per nonzero. A lane walks a whole row, so a chunk holding a
    /// very long row runs at one lane's pace (a circuit's dense rails: 275 ms against
    /// cuSPARSE's 0.17, H100, RESULTS.md); [`Format::Auto`] offers it on even rows only.
    Sell,
    /// SELL-C-σ with values by index ([`vi`]: CSR-VI, Kourtis, Goumas & Koziris 2008): SELL-C-σ's
    /// chunks and columns, each value a byte indexing a table of the matrix's distinct values
    /// (none at all for a matrix of one value), so 2–4 + 1 bytes a slot against SELL-C-σ's 2–4 +
    /// 8 in f64. Refused past [`vi::VI_MAX`] distinct values ([`Error::TooManyValues`]) and
    /// where SELL-C-σ is ([`Error::TooMuchPadding`]); deterministic, SELL-C-σ's bits.
    SellVi,
    /// Merge-path CSR (Merrill & Garland, SC'16): every thread walks the same number of steps
    /// of the merge of row ends with nonzeros, so a row of a million nonzeros is shared by many
    /// threads and empty rows cost a step each. Rows wholly inside one thread's steps are
    /// deterministic; rows split between threads are completed by atomic adds, so the format
    /// is **not bit-reproducible**. Extra memory: 4 bytes per `MERGE_VT` (8) steps.
    MergePath,
    /// cuSPARSE's CSR SpMV (`cusparseSpMV`, `CUSPARSE_SPMV_CSR_ALG1`) on the borrowed CSR: what
    /// [`Format::Auto`] keeps where its trial finds cuSPARSE faster than this crate's formats
    /// (as on power-law graphs with community locality, documents × terms and circuit-like
    /// matrices, whose gathers of `x` hit the cache: RESULTS.md). Not bit-reproducible; needs
    /// cuSPARSE at run time ([`Error::CuSparseUnavailable`]). Not in [`Format::ALL`], which lists
    /// this crate's own formats.
    CuSparse,
}

impl Format {
    /// Every concrete format, in table order; not [`Format::Auto`] (cuSPARSE's are the peers of
    /// [`baselines::CuSparseSpmv`]).
    pub const ALL: [Format; 11] = [
        Format::CsrScalar,
        Format::CsrVector,
        Format::CsrAdaptive,
        Format::Coo,
        Format::Ell,
        Format::Hyb,
        Format::Scoo,
        Format::Jds,
        Format::Sell,
        Format::SellVi,
        Format::MergePath,
    ];

    /// The short name (`csr-scalar`, `ell`, `merge-path`, …).
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::CsrScalar => "csr-scalar",
            Format::CsrVector => "csr-vector",
            Format::CsrAdaptive => "csr-adaptive",
            Format::Coo => "coo",
            Format::Ell => "ell",
            Format::Hyb => "hyb",
            Format::Scoo => "scoo",
            Format::Jds => "jds",
            Format::Sell => "sell",
            Format::SellVi => "sell-vi",
            Format::MergePath => "merge-path",
            Format::CuSparse => "cusparse",
        }
    }

    /// Whether the plan keeps its own copy of the values (ELL, HYB, SCOO, JDS, SELL-C-σ: converted
    /// layouts; SELL-VI: their index): then values written into the borrowed CSR after
    /// [`Spmv::new`] are not seen by [`Spmv::apply`]. The other formats read the CSR's values at
    /// every product.
    pub fn copies_values(self) -> bool {
        matches!(self, Format::Ell | Format::Hyb | Format::Scoo | Format::Jds | Format::Sell | Format::SellVi)
    }

    /// Whether the same inputs give the same bits on every run, for any matrix (CSR-adaptive
    /// also is when no row is longer than [`spmv_kernels::ADAPTIVE_LONG`], HYB when nothing
    /// overflows to COO).
    pub fn is_deterministic(self) -> bool {
        matches!(self, Format::CsrScalar | Format::CsrVector | Format::Ell | Format::Jds | Format::Sell)
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let s_lower = s.to_ascii_lowercase();
        [Format::Auto, Format::CuSparse]
            .into_iter()
            .chain(Format::ALL)
            .find(|f| f.name() == s_lower)
            .ok_or_else(|| Error::UnknownFormat(s.to_string()))
    }
}

/// The plan's data beside its CSR, by format.
enum Data<'a, T: SpmvValue> {
    /// CSR-scalar, CSR-vector: the CSR alone.
    Csr,
    /// cuSPARSE's plan on the CSR.
    CuSparse(Box<baselines::CuSparseSpmv<'a, T>>),
    /// Merge-path: the first row of every thread's
    /// steps.
    Rows(CudaSlice<u32>),
    /// COO: the row of every nonzero.
    Coo(CooRows),
    Adaptive(adaptive::DeviceRowBlocks),
    Ell(ell::DeviceEll<T>),
    Hyb(hyb::DeviceHyb<T>),
    Scoo(scoo::DeviceScoo<T>),
    Jds(jds::DeviceJds<T>),
    Sell(Box<sell::DeviceSell<T>>),
}

/// COO's rows: 32-bit, or 16 bits a nonzero above a 32-bit base row per chunk of
/// [`COO_CHUNK`](spmv_kernels::COO_CHUNK) nonzeros, when no chunk spans 2^16 rows or more (2 bytes a
/// nonzero less to read: see [`COO_CHUNK`](spmv_kernels::COO_CHUNK)).
enum CooRows {
    U32(CudaSlice<u32>),
    U16 { base: CudaSlice<u32>, off: CudaSlice<u16> },
}

impl CooRows {
    /// The rows of `a` (sorted), in 16 bits where they fit.
    fn new<T: SpmvValue>(gpu: &Gpu, k: &launch::Kernels<T>, a: &DeviceCsrView<'_, T>) -> Result<Self> {
        let rows = convert::rows_of(gpu, a)?;
        let nnz = a.nnz();
        if nnz == 0 {
            return Ok(CooRows::U32(rows));
        }
        let mut base = gpu.alloc::<u32>(nnz.div_ceil(spmv_kernels::COO_CHUNK) as usize)?;
        let mut off = gpu.alloc::<u16>(nnz as usize)?;
        let span = launch::coo16_pack(gpu, k, &rows, &mut base, &mut off)?;
        Ok(if span < 1 << 16 { CooRows::U16 { base, off } } else { CooRows::U32(rows) })
    }

    fn bytes(&self) -> u64 {
        match self {
            CooRows::U32(r) => 4 * r.len() as u64,
            CooRows::U16 { base, off } => 4 * base.len() as u64 + 2 * off.len() as u64,
        }
    }
}

/// An SpMV plan: a matrix converted once to a format, multiplied many times
/// ([`Spmv::apply`]), on its [`Gpu`]'s stream, allocating nothing per call. The plan borrows the
/// CSR it was made from (a [`DeviceCsrView`]: of a [`DeviceCsr`](sptrans_matrix::device::DeviceCsr)
/// by `.view()`, or of a caller's buffers) for as long as it lives: the CSR formats and the
/// cuSPARSE baselines read it at every product. [`Spmv::footprint_bytes`] counts what the
/// chosen format itself needs.
pub struct Spmv<'a, T: SpmvValue> {
    gpu: Gpu,
    k: launch::Kernels<T>,
    format: Format,
    stats: Option<RowStats>,
    a: DeviceCsrView<'a, T>,
    data: Data<'a, T>,
    trials: Vec<(Format, f64)>,
}

impl<'a, T: SpmvValue> Spmv<'a, T> {
    /// Borrows `a` and converts it to `format` on the GPU with the primitives (transient
    /// workspace); [`Format::Auto`] first measures the row lengths ([`RowStats`]), then for
    /// [`DEFAULT_PRODUCTS`] products ([`Spmv::with_products`] says how many to expect) converts
    /// and times each of [`Format::candidates`] and keeps the fastest ([`Spmv::trials`]).
    /// Conversions that size their arrays from the data (CSR-adaptive, ELL, HYB, SCOO, JDS,
    /// SELL-C-σ, and COO's row width) read a few words back, and Auto's trial times products
    /// with GPU events: both synchronize the stream. [`Spmv::apply`] never does.
    ///
    /// # Errors
    /// [`Error::NoValues`] for a pattern matrix; [`Error::TooMuchPadding`] for ELL or SELL-C-σ on uneven
    /// rows; [`Error::TooManyValues`] for SELL-VI past [`vi::VI_MAX`] distinct values; cuSPARSE errors for the baselines; module loading, out of memory. The matrix is
    /// borrowed: an error leaves it with the caller.
    pub fn new(gpu: &Gpu, a: DeviceCsrView<'a, T>, format: Format) -> Result<Self> {
        Self::with_products(gpu, a, format, DEFAULT_PRODUCTS)
    }

    /// [`Spmv::new`] for a plan expected to serve `products` products ([`Spmv::new`] assumes
    /// [`DEFAULT_PRODUCTS`]): [`Format::Auto`] then takes a format whose conversion sorts (JDS,
    /// SCOO) only when that many products repay it ([`Format::choose_for`]), and times rivals
    /// only from [`TRIAL_MIN_PRODUCTS`] on ([`Format::candidates`]). A named format is built
    /// whatever `products` says.
    ///
    /// # Errors
    /// As [`Spmv::new`].
    pub fn with_products(gpu: &Gpu, a: DeviceCsrView<'a, T>, format: Format, products: u64) -> Result<Self> {
        if a.vals().is_none() {
            return Err(Error::NoValues);
        }
        let k = launch::Kernels::<T>::load(gpu)?;
        let Format::Auto = format else {
            let data = Self::convert(gpu, &k, &a, format)?;
            return Ok(Self { gpu: gpu.clone(), k, format, stats: None, a, data, trials: Vec::new() });
        };
        let stats = RowStats::measure(gpu, &k, &a)?;
        let candidates = Format::candidates(&stats, products);
        let first = candidates[0];
        let data = Self::convert(gpu, &k, &a, first)?;
        let mut best = Self { gpu: gpu.clone(), k, format: first, stats: Some(stats), a, data, trials: Vec::new() };
        if candidates.len() > 1 {
            best.trial(&candidates[1..])?;
        }
        Ok(best)
    }

    /// [`Format::Auto`]'s trial: times this plan's format and each rival's on
    /// [`TRIAL_REPS`] products (after a warm-up; the median, by GPU events, synchronizing)
    /// and keeps the fastest, except that cuSPARSE (the last rival) is kept unless the fastest
    /// of the others beats it by [`TRIAL_MARGIN`]. A rival that cannot be built here (too much padding, out of
    /// memory, no cuSPARSE) is left out; other errors end the plan.
    fn trial(&mut self, rivals: &[Format]) -> Result<()> {
        let (rows, cols) = (self.a.rows() as usize, self.a.cols() as usize);
        let x = self.gpu.alloc_zeros::<T>(cols)?;
        let mut y = self.gpu.alloc_zeros::<T>(rows)?;
        let timer = gpu_runtime::GpuTimer::new(&self.gpu)?;
        let mut time = |plan: &mut Self| timer.median_ms(1, auto::TRIAL_REPS, || plan.apply(<T as Value>::one(), &x, T::default(), &mut y));
        let mut best_ms = time(self)?;
        self.trials.push((self.format, best_ms));
        for &f in rivals {
            let k = self.k.clone();
            let data = match Self::convert(&self.gpu, &k, &self.a, f) {
                Ok(d) => d,
                Err(e)
                    if e.is_out_of_memory()
                        || matches!(e, Error::TooMuchPadding { .. } | Error::TooManyValues { .. } | Error::CuSparseUnavailable(_)) =>
                {
                    continue
                }
                Err(e) => return Err(e),
            };
            let mut rival = Self { gpu: self.gpu.clone(), k, format: f, stats: self.stats, a: self.a.clone(), data, trials: Vec::new() };
            let ms = time(&mut rival)?;
            self.trials.push((f, ms));
            // cuSPARSE, the reference, wins ties within the margin.
            let bar = if f == Format::CuSparse { best_ms / (1.0 - auto::TRIAL_MARGIN) } else { best_ms };
            if ms < bar {
                best_ms = ms;
                rival.trials = std::mem::take(&mut self.trials);
                *self = rival;
            }
        }
        Ok(())
    }

    /// Converts `a` to `format` (not [`Format::Auto`]).
    fn convert(gpu: &Gpu, k: &launch::Kernels<T>, a: &DeviceCsrView<'a, T>, format: Format) -> Result<Data<'a, T>> {
        Ok(match format {
            Format::Coo => Data::Coo(CooRows::new(gpu, k, a)?),
            Format::MergePath => {
                let mut start = gpu.alloc::<u32>(launch::merge_threads(a.rows(), a.nnz()).max(1) as usize)?;
                launch::merge_partition(gpu, k, a, &mut start)?;
                Data::Rows(start)
            }
            Format::CsrAdaptive => Data::Adaptive(adaptive::DeviceRowBlocks::convert(gpu, k, a)?),
            Format::Ell => Data::Ell(ell::DeviceEll::convert(gpu, k, a)?),
            Format::Hyb => Data::Hyb(hyb::DeviceHyb::convert(gpu, k, a)?),
            Format::Scoo => Data::Scoo(scoo::DeviceScoo::convert(gpu, k, a, None)?),
            Format::Jds => Data::Jds(jds::DeviceJds::convert(gpu, k, a)?),
            Format::Sell => Data::Sell(Box::new(sell::DeviceSell::convert(gpu, k, a, sell::SellOptions::default())?)),
            Format::SellVi => Data::Sell(Box::new(sell::DeviceSell::convert_vi(gpu, k, a, sell::SellOptions::default())?)),
            Format::CuSparse => Data::CuSparse(Box::new(baselines::CuSparseSpmv::new(gpu, a.clone(), baselines::CuSparseAlg::CsrAlg1)?)),
            Format::CsrScalar | Format::CsrVector | Format::Auto => Data::Csr,
        })
    }

    /// Runs later products on `gpu`'s stream (a handle on the same context): for callers whose
    /// current stream changes between products. When the stream differs, the new one first waits
    /// (on the device, through an event; the host does not block) for the work enqueued on the
    /// old one. Buffers the plan borrows must be complete in the new stream's order too.
    ///
    /// # Errors
    /// `gpu_runtime::Error::ForeignStream` for another context; driver errors.
    pub fn set_gpu(&mut self, gpu: &Gpu) -> Result<()> {
        if let Data::CuSparse(c) = &mut self.data {
            c.set_gpu(gpu)?;
        } else {
            gpu.follow(&self.gpu)?;
        }
        self.gpu = gpu.clone();
        Ok(())
    }

    /// [`Format::Auto`]'s trial: each candidate it timed with its median milliseconds a product,
    /// the rule's pick first (empty when a format was named, or when the class of matrix or
    /// the products expected left one candidate: [`Format::candidates`]).
    pub fn trials(&self) -> &[(Format, f64)] {
        &self.trials
    }

    /// The format (for [`Format::Auto`], the one chosen).
    pub fn format(&self) -> Format {
        self.format
    }

    /// The row statistics [`Format::Auto`] chose from (`None` when a format was named).
    pub fn stats(&self) -> Option<&RowStats> {
        self.stats.as_ref()
    }

    /// The matrix it borrows.
    pub fn matrix(&self) -> &DeviceCsrView<'a, T> {
        &self.a
    }

    /// Device bytes of the matrix in this format, padding included: the CSR arrays for the CSR
    /// formats (plus merge-path's partition, CSR-adaptive's row blocks), COO's rows (2 bytes a
    /// nonzero plus 4 a chunk, or 4 a nonzero), columns and values, and the format's own arrays for ELL, HYB, SCOO and JDS.
    pub fn footprint_bytes(&self) -> u64 {
        let csr = 4 * (self.a.rows() + 1) + self.a.nnz() * (4 + T::BYTES as u64);
        match (&self.data, self.format) {
            (Data::Coo(r), _) => self.a.nnz() * (4 + T::BYTES as u64) + r.bytes(),
            (Data::Rows(r), _) => csr + 4 * r.len() as u64,
            (Data::Csr, _) => csr,
            (Data::CuSparse(c), _) => c.footprint_bytes(),
            (Data::Adaptive(b), _) => csr + b.footprint_bytes(),
            (Data::Ell(e), _) => e.footprint_bytes(),
            (Data::Hyb(h), _) => h.footprint_bytes(),
            (Data::Scoo(s), _) => s.footprint_bytes(),
            (Data::Jds(j), _) => j.footprint_bytes(),
            (Data::Sell(s), _) => s.footprint_bytes(),
        }
    }

    /// `y = alpha * A * x + beta * y`; with `beta == 0`, `y` is not read. Enqueued without
    /// synchronizing.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `x` is not `cols` long or `y` not `rows` long; launch
    /// errors.
    pub fn apply(&mut self, alpha: T, x: &impl DevicePtr<T>, beta: T, y: &mut impl DevicePtrMut<T>) -> Result<()> {
        if let Data::CuSparse(c) = &mut self.data {
            return c.apply(alpha, x, beta, y);
        }
        let (rows, cols) = (self.a.rows(), self.a.cols());
        check_vectors(rows, cols, x.len(), y.len())?;
        launch::values(&self.a)?;
        let (gpu, k, a) = (&self.gpu, &self.k, &self.a);
        let (format, data) = (self.format, &self.data);
        launch::with_vectors(gpu, x, y, |x, y| {
            // SAFETY (every arm): `a` keeps its view's invariants (indices < cols = x's length),
            // y holds rows values, and the format's data was converted from `a`.
            match (format, data) {
                (Format::CsrScalar, _) => unsafe { launch::csr(gpu, k, false, a, x, alpha, beta, y) },
                (Format::CsrVector, _) => unsafe { launch::csr(gpu, k, true, a, x, alpha, beta, y) },
                (Format::Coo, Data::Coo(CooRows::U32(r))) => unsafe { launch::coo(gpu, k, a, r, x, alpha, beta, y) },
                // (and base + off are the rows, below `rows`)
                (Format::Coo, Data::Coo(CooRows::U16 { base, off })) => unsafe { launch::coo16(gpu, k, a, (base, off), x, alpha, beta, y) },
                (Format::MergePath, Data::Rows(s)) => unsafe { launch::merge(gpu, k, a, x, alpha, beta, y, s) },
                (_, Data::Adaptive(b)) => unsafe { b.apply(gpu, k, a, alpha, x, beta, y) },
                (_, Data::Ell(e)) => unsafe { e.apply(gpu, k, alpha, x, beta, y) },
                (_, Data::Hyb(h)) => unsafe { h.apply(gpu, k, alpha, x, beta, y) },
                (_, Data::Scoo(s)) => unsafe { s.apply(gpu, k, alpha, x, beta, y) },
                (_, Data::Jds(j)) => unsafe { j.apply(gpu, k, alpha, x, beta, y) },
                (_, Data::Sell(s)) => unsafe { s.apply(gpu, alpha, x, beta, y) },
                _ => Err(Error::Runtime(gpu_runtime::Error::Internal("SpMV plan without its format's data"))),
            }
        })
    }
}
