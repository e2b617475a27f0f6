//! # gpu-transpose
//!
//! Sparse-matrix transposition on the GPU: the CSR of an `m × n` matrix `A` in, the CSR of `Aᵀ`
//! (= the CSC of `A`) out, with the row indices sorted inside each output row and the values moved
//! with them. Every [`Algorithm`] gives the same bits as the serial twin [`serial::transpose`].
//!
//! - [`Algorithm::ScanTrans`] and [`Algorithm::MergeTrans`]: Wang, Liu & Hou, "Parallel
//!   Transposition of Sparse Data Structures" (ICS'16), composed from the primitive crates.
//! - [`Algorithm::RadixTrans`]: ScanTrans one digit at a time (an LSD radix sort of the column
//!   indices carrying rows and values), which keeps its table at 512 buckets per tile.
//! - [`Algorithm::CooChain`]: CSR → COO → swap → stable sort → CSR.
//! - [`Algorithm::CuSparse`]: NVIDIA cuSPARSE `cusparseCsr2cscEx2` (the baseline).
//! - [`Algorithm::Serial`]: download, [`serial::transpose`], upload.
//! - [`Algorithm::Auto`]: the fastest measured for the matrix's size ([`Algorithm::resolve`]).
//!
//! A [`Transposer`] is the plan: it loads the kernels once and keeps its workspace, which grows
//! to the largest matrix seen ([`Transposer::reserve`] allocates it up front;
//! [`Transposer::workspace_bytes`] says how much each algorithm needs).
//!
//! ```no_run
//! use gpu_transpose::{Algorithm, Transposer};
//! use sptrans_matrix::{device::DeviceCsr, gen};
//! let gpu = gpu_transpose::Gpu::first()?;
//! let a = gen::uniform::<f32>(1000, 800, 20_000, 7)?;
//! let mut t = Transposer::new(&gpu)?;
//! let da = DeviceCsr::upload(&gpu, &a)?;
//! let at = t.transpose_new(Algorithm::ScanTrans, &da)?;
//! assert_eq!(at.download(&gpu)?, a.transpose());
//! # Ok::<(), gpu_transpose::Error>(())
//! ```
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough: the GPU
/// handle [`Gpu`], scratch ([`gpu_runtime::Scratch`]), and cudarc (`gpu_runtime::cudarc`).
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

mod cusparse;
pub mod measure;
pub mod serial;

use std::str::FromStr;

use gpu_histogram::Histogram;
use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig};
use gpu_runtime::scratch::Layout as ScratchLayout;
use gpu_runtime::{grid_1d, Kernel, PtxModule, Scratch, ScratchBuf};
use gpu_scan::{Algorithm as ScanAlgorithm, ScanKind, Scanner};
use gpu_segmerge::Segmerge;
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};

pub use cusparse::{library as cusparse_library, LIB_ENV as CUSPARSE_LIB_ENV};
pub use transpose_kernels::{radix_digit, radix_passes, radix_passes_max, scatter_slot, sorted_ptr_range, NT, RADIX_MAX_BITS, RADIX_TILE};

/// The embedded `transpose` PTX module (built from `kernels-rs/transpose`).
pub static MODULE: PtxModule = PtxModule::new("transpose", include_str!("../ptx/transpose.ptx"));

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error, wherever it arose (the primitives' runtime errors are
    /// lifted here, so out of memory always has this one shape).
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// From pointers-to-index.
    #[error(transparent)]
    Ptr2Idx(gpu_ptr2idx::Error),
    /// From the histogram.
    #[error(transparent)]
    Histogram(gpu_histogram::Error),
    /// From the scan.
    #[error(transparent)]
    Scan(gpu_scan::Error),
    /// From the sort.
    #[error(transparent)]
    Segmerge(gpu_segmerge::Error),
    /// From the matrix crate (the serial path's download and upload, output allocation).
    #[error(transparent)]
    Matrix(sptrans_matrix::Error),
    /// The output does not have the transposed shape of the input.
    #[error("transpose output: {what} is {actual}, expected {expected}")]
    Shape {
        /// Which size.
        what: &'static str,
        /// Required.
        expected: u64,
        /// Given.
        actual: u64,
    },
    /// A size past what the indices (or cuSPARSE's `int`) hold.
    #[error("{what} = {len} is too large (at most {max})")]
    TooLarge {
        /// Which size.
        what: &'static str,
        /// Its value.
        len: u64,
        /// The largest allowed.
        max: u64,
    },
    /// Values of this size are not supported (4 and 8 bytes are; pattern matrices have none).
    #[error("values of {bytes} bytes are not supported (4 or 8 bytes, or a pattern matrix)")]
    UnsupportedValue {
        /// Size of one value.
        bytes: usize,
    },
    /// cuSPARSE could not be loaded.
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
    /// An algorithm name that [`Algorithm::from_str`] does not know.
    #[error("unknown algorithm `{0}` (auto, serial, scan, merge, radix, cusparse, coo)")]
    UnknownAlgorithm(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// `true` when the device ran out of memory (a device allocation, or cuSPARSE's).
    pub fn is_out_of_memory(&self) -> bool {
        match self {
            Error::Runtime(e) => e.is_out_of_memory(),
            Error::Ptr2Idx(e) => e.is_out_of_memory(),
            Error::Histogram(e) => e.is_out_of_memory(),
            Error::Scan(e) => e.is_out_of_memory(),
            Error::Segmerge(e) => e.is_out_of_memory(),
            Error::Matrix(e) => e.is_out_of_memory(),
            _ => false,
        }
    }
}

/// Lifts a primitive's runtime error to [`Error::Runtime`], keeping its other errors wrapped.
macro_rules! lift {
    ($($krate:ident => $variant:ident),*) => {$(
        impl From<$krate::Error> for Error {
            fn from(e: $krate::Error) -> Self {
                match e {
                    $krate::Error::Runtime(r) => Error::Runtime(r),
                    e => Error::$variant(e),
                }
            }
        }
    )*};
}
lift!(gpu_ptr2idx => Ptr2Idx, gpu_histogram => Histogram, gpu_scan => Scan, gpu_segmerge => Segmerge, sptrans_matrix => Matrix);

/// A transposition algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// The CPU twin ([`serial::transpose`]) on downloaded data; the specification.
    Serial,
    /// ptr2idx, partitioned column histograms (`inter`, `(P + 1) × n`) with per-nonzero ranks
    /// (`intra`), vertical scan, exclusive scan of the totals, scatter.
    ScanTrans,
    /// ptr2idx, block sorts of `(column, position)` pairs, merge passes, pointers from the sorted
    /// columns by boundary detection, gather.
    MergeTrans,
    /// NVIDIA cuSPARSE `cusparseCsr2cscEx2` (default algorithm).
    CuSparse,
    /// ScanTrans one digit (up to 9 bits) of the column index at a time (LSD): per pass, tiles of 2048
    /// nonzeros are the partitions, their digit counts scanned digit-major give `colptr + inter`,
    /// in-tile ranks give `intra`; rows and values travel with the keys, so no gather follows.
    RadixTrans,
    /// CSR → COO (ptr2idx) → swap → stable sort by column → CSR (index-to-pointers by histogram
    /// and scan), gather.
    CooChain,
    /// The fastest for the matrix's size, as measured ([`Algorithm::resolve`]).
    Auto,
}

impl Algorithm {
    /// Every algorithm but `Auto`, in table order.
    pub const ALL: [Algorithm; 6] = [Algorithm::Serial, Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::RadixTrans, Algorithm::CuSparse, Algorithm::CooChain];

    /// The short name (`serial`, `scan`, `merge`, `cusparse`, `coo`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Serial => "serial",
            Algorithm::ScanTrans => "scan",
            Algorithm::MergeTrans => "merge",
            Algorithm::CuSparse => "cusparse",
            Algorithm::RadixTrans => "radix",
            Algorithm::CooChain => "coo",
            Algorithm::Auto => "auto",
        }
    }

    /// Whether it runs on the GPU.
    pub fn is_gpu(self) -> bool {
        self != Algorithm::Serial
    }

    /// `Auto` becomes a concrete algorithm for an `m × n` matrix with `nnz` nonzeros; the others
    /// stay. The rule follows BENCHMARKS.md (H100): ScanTrans up to [`AUTO_SCAN_MAX_NNZ`]
    /// nonzeros (fewest launches), RadixTrans above (faster than cuSPARSE on 7 of the 9
    /// suite matrices, 0.84× at worst).
    pub fn resolve(self, _m: u64, _n: u64, nnz: u64) -> Algorithm {
        match self {
            Algorithm::Auto if nnz <= AUTO_SCAN_MAX_NNZ => Algorithm::ScanTrans,
            Algorithm::Auto => Algorithm::RadixTrans,
            a => a,
        }
    }
}

/// `Auto` picks ScanTrans up to this many nonzeros: on the real matrices of 15 to 84k nonzeros
/// it measured 1.8–2.4× faster than cuSPARSE and MergeTrans (launch latency dominates).
pub const AUTO_SCAN_MAX_NNZ: u64 = 100_000;

/// RadixTrans's default largest digit in bits (fewest passes of at most this many bits). A pass
/// costs more the more buckets it has (shorter runs to write): on an H100, 17-bit columns ran
/// in 0.77 ms as 3 passes of 6 bits and 0.82 ms as 2 of 9; 24-bit columns in 8.6 ms as 4 passes
/// of 6 and 9.0 ms as 3 of 8 (BENCHMARKS.md).
pub const RADIX_DEFAULT_BITS: u32 = 7;

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "serial" => Algorithm::Serial,
            "scan" | "scantrans" => Algorithm::ScanTrans,
            "merge" | "mergetrans" => Algorithm::MergeTrans,
            "cusparse" => Algorithm::CuSparse,
            "radix" | "radixtrans" => Algorithm::RadixTrans,
            "coo" | "coochain" => Algorithm::CooChain,
            "auto" => Algorithm::Auto,
            _ => return Err(Error::UnknownAlgorithm(s.to_string())),
        })
    }
}

/// The value payload the kernels move beside their keys (4 or 8 bytes; `u8` stands for pattern
/// matrices, whose values are absent). It lives in `gpu-runtime` so that every crate can use it.
pub use gpu_runtime::Payload;

/// Partitions ScanTrans uses for `nnz` nonzeros and `n` columns on a GPU of `sms`
/// multiprocessors. Its time is about `a * nnz / P` (each partition is walked by one warp, 32
/// nonzeros a step, a latency-bound chain) plus `b * P * n` (the `(P + 1) × n` table is zeroed,
/// scanned and read). The optimum `P = sqrt(a * nnz / (b * n))` uses `a / b ≈ 5800`, fitted to a
/// partition sweep on an H100 (BENCHMARKS.md). `P` is then capped at `32 * sms` (past that the
/// vertical scan down `P + 1` rows costs more than the walks save: a 2M × 64 matrix ran fastest
/// near 4096 partitions), by `nnz / 32` (a partition is worth a warp step), and by a table budget
/// of `max(16 * nnz, 2^22)` words.
pub fn scan_parts(nnz: u64, n: u64, sms: u32) -> u64 {
    let ideal = (SCAN_PARTS_A_OVER_B * nnz as f64 / n.max(1) as f64).sqrt().round() as u64;
    let busy = (sms.max(1) as u64 * 32).min(nnz.div_ceil(32));
    let fit = ((16 * nnz).max(1 << 22) / n.max(1)).saturating_sub(1);
    ideal.min(busy).min(fit).max(1)
}

/// The ratio `a / b` of [`scan_parts`]'s cost model (per-nonzero walk cost over per-table-entry
/// cost), measured on an H100.
pub const SCAN_PARTS_A_OVER_B: f64 = 5800.0;

/// A reusable transposition plan: loaded kernels, the primitives' plans, and one workspace
/// kept between calls (grown to the largest problem seen), or caller-lent [`Scratch`] through
/// [`Transposer::transpose_into_with`]. The primitives run on slices of that one workspace:
/// [`Transposer::workspace_bytes`] is everything a call needs beyond its input and output, and
/// [`Transposer::allocated_bytes`] everything the plan holds. All work is enqueued on the
/// [`Gpu`]'s stream.
pub struct Transposer {
    gpu: Gpu,
    iota: Kernel,
    sorted_ptr: Kernel,
    scatter: [Kernel; 2],
    gather: [Kernel; 2],
    upsweep: Kernel,
    downsweep: [Kernel; 2],
    ptr2idx: Ptr2Idx,
    hist: Histogram,
    scanner: Scanner<u32>,
    segmerge: Segmerge,
    cusparse: Option<cusparse::CuSparse>,
    parts: Option<u64>,
    radix_bits: u32,
    own: ScratchBuf,
}

/// Sizes of one transposition.
#[derive(Clone, Copy, Debug)]
struct Dims {
    m: u64,
    n: u64,
    nnz: u64,
}

impl Transposer {
    /// Loads the kernels of this crate and of the primitives. cuSPARSE is loaded on first use.
    ///
    /// # Errors
    /// [`Error::Runtime`] when a module cannot be loaded.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let k = |name| gpu.kernel(&MODULE, name);
        Ok(Self {
            gpu: gpu.clone(),
            iota: k("transpose_iota")?,
            sorted_ptr: k("transpose_sorted_ptr")?,
            scatter: [k("transpose_scatter_v4")?, k("transpose_scatter_v8")?],
            gather: [k("transpose_gather_v4")?, k("transpose_gather_v8")?],
            upsweep: k("transpose_radix_upsweep")?,
            downsweep: [k("transpose_radix_downsweep_v4")?, k("transpose_radix_downsweep_v8")?],
            ptr2idx: Ptr2Idx::new(gpu)?,
            hist: Histogram::new(gpu)?,
            scanner: Scanner::new(gpu, ScanAlgorithm::Auto)?,
            segmerge: Segmerge::new(gpu)?,
            cusparse: None,
            parts: None,
            radix_bits: RADIX_DEFAULT_BITS,
            own: ScratchBuf::default(),
        })
    }

    /// The GPU handle (and so the stream) it runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Overrides ScanTrans's partition count (`None`: [`scan_parts`]).
    pub fn set_scan_parts(&mut self, parts: Option<u64>) {
        self.parts = parts.map(|p| p.max(1));
    }

    /// RadixTrans's largest digit (1 to [`RADIX_MAX_BITS`]; `None`: [`RADIX_DEFAULT_BITS`]).
    pub fn set_radix_bits(&mut self, bits: Option<u32>) {
        self.radix_bits = bits.unwrap_or(RADIX_DEFAULT_BITS).clamp(1, RADIX_MAX_BITS);
    }

    /// The partition count ScanTrans uses for this shape.
    pub fn scan_parts_for(&self, nnz: u64, n: u64) -> u64 {
        self.parts.unwrap_or_else(|| scan_parts(nnz, n, self.gpu.props().sm_count))
    }

    /// The cuSPARSE version (`major * 1000 + minor * 100 + patch`), loading it if needed.
    ///
    /// # Errors
    /// [`Error::CuSparseUnavailable`] when the library cannot be loaded.
    pub fn cusparse_version(&mut self) -> Result<i32> {
        self.cusparse()?.version()
    }

    fn cusparse(&mut self) -> Result<&cusparse::CuSparse> {
        // cuSPARSE works on the calling thread's current context (the plan may have moved here
        // from another thread): make it this GPU's.
        self.gpu.context().bind_to_thread().map_err(gpu_runtime::Error::driver("binding the context for cuSPARSE"))?;
        if self.cusparse.is_none() {
            self.cusparse = Some(cusparse::CuSparse::new(&self.gpu)?);
        }
        self.cusparse.as_ref().ok_or(Error::Runtime(gpu_runtime::Error::Internal("cuSPARSE handle missing after creation")))
    }

    /// Device bytes `algo` needs beyond the input and output for an `m × n` matrix with `nnz`
    /// nonzeros of `value_bytes` bytes (0 for pattern): this crate's temporaries and the
    /// primitives' scratch, all carved from one workspace. cuSPARSE is asked (and loaded) for
    /// its own.
    ///
    /// # Errors
    /// [`Error::TooLarge`] past 32-bit sizes; for `CuSparse`, its loading and query errors.
    pub fn workspace_bytes(&mut self, algo: Algorithm, m: u64, n: u64, nnz: u64, value_bytes: usize) -> Result<u64> {
        let d = Dims { m, n, nnz };
        check_dims(d)?;
        let vb = value_bytes as u64;
        let words = |w: u64| 4 * w;
        if nnz == 0 {
            return Ok(0);
        }
        Ok(match algo.resolve(m, n, nnz) {
            Algorithm::Serial | Algorithm::Auto => 0,
            Algorithm::ScanTrans => {
                let parts = self.scan_parts_for(nnz, n);
                ScratchLayout::new()
                    .add(words(nnz))
                    .add(words(nnz))
                    .add(words(table_len(parts, n)?))
                    .add(Ptr2Idx::workspace_bytes(m, nnz))
                    .add(self.hist.partitioned_workspace_bytes(parts, n))
                    .add(Scanner::<u32>::workspace_bytes(ScanAlgorithm::Auto, n))
                    .bytes()
            }
            algo @ (Algorithm::MergeTrans | Algorithm::CooChain) => ScratchLayout::new()
                .add(words(nnz))
                .add(words(nnz))
                .add(words(nnz))
                .add(Ptr2Idx::workspace_bytes(m, nnz))
                .add(self.segmerge.sort_workspace_bytes(nnz, true))
                .add(if algo == Algorithm::CooChain { Histogram::pointers_workspace_bytes(n) } else { 0 })
                .bytes(),
            Algorithm::RadixTrans => ScratchLayout::new()
                .add(words(nnz))
                .add(words(nnz))
                .add(words(nnz))
                .add(words(nnz))
                .add(nnz * vb)
                .add(nnz * vb)
                .add(words(radix_counts_len(nnz)))
                .add(Ptr2Idx::workspace_bytes(m, nnz))
                .add(Scanner::<u32>::workspace_bytes(ScanAlgorithm::Auto, radix_counts_len(nnz)))
                .bytes(),
            Algorithm::CuSparse => {
                // The query reads no data but refuses null pointers: point them at a scratch word.
                let dummy = self.gpu.alloc::<u64>(2)?;
                let p = dummy.device_ptr(self.gpu.stream()).0;
                let call = cusparse::Call { m: d.m, n: d.n, nnz: d.nnz, vals: p, ptr: p, idx: p, out_vals: p, out_ptr: p, out_idx: p, value_bytes };
                ScratchLayout::new().add(self.cusparse()?.buffer_size(&call)?).bytes()
            }
        })
    }

    /// Allocates the plan's workspace for `algo` on matrices up to this size now, so that later
    /// calls allocate nothing.
    ///
    /// # Errors
    /// As [`Transposer::workspace_bytes`], and out of memory.
    pub fn reserve(&mut self, algo: Algorithm, m: u64, n: u64, nnz: u64, value_bytes: usize) -> Result<()> {
        let bytes = self.workspace_bytes(algo, m, n, nnz, value_bytes)?;
        Ok(self.own.reserve(&self.gpu, bytes)?)
    }

    /// Device bytes the plan holds now: its one workspace (the primitives it uses hold none).
    pub fn allocated_bytes(&self) -> u64 {
        self.own.bytes() + self.ptr2idx.allocated_bytes() + self.hist.allocated_bytes() + self.scanner.allocated_bytes() + self.segmerge.allocated_bytes()
    }

    /// Output buffers of the transposed shape for `a` (contents unspecified).
    ///
    /// # Errors
    /// Out of memory.
    pub fn alloc_output<T: Payload>(&self, a: &DeviceCsr<T>) -> Result<DeviceCsrParts<T>> {
        Ok(DeviceCsrParts::alloc(&self.gpu, a.cols(), a.nnz(), a.vals().is_some())?)
    }

    /// Allocates the output for `a` and transposes into it.
    ///
    /// # Errors
    /// As [`Transposer::transpose_into`].
    pub fn transpose_new<T: Payload>(&mut self, algo: Algorithm, a: &DeviceCsr<T>) -> Result<DeviceCsr<T>> {
        let out = self.alloc_output(a)?;
        self.transpose_into(algo, a, out)
    }

    /// Transposes `a` (`m × n`) into the buffers `out` (pointer of `n + 1`, `nnz` indices, values
    /// present exactly when `a` has them; e.g. [`Transposer::alloc_output`], or a previous
    /// result's [`DeviceCsr::into_parts`]) and returns them as the `n × m` result, on the plan's
    /// own workspace. Enqueued on the GPU's stream without synchronizing (`Serial` and the first
    /// cuSPARSE call synchronize). On error the buffers are dropped: no invalid matrix escapes.
    ///
    /// # Errors
    /// [`Error::Shape`] for output buffers of the wrong size, [`Error::TooLarge`],
    /// [`Error::UnsupportedValue`], cuSPARSE errors, runtime errors ([`Error::is_out_of_memory`]).
    pub fn transpose_into<T: Payload>(&mut self, algo: Algorithm, a: &DeviceCsr<T>, out: DeviceCsrParts<T>) -> Result<DeviceCsr<T>> {
        let d = dims(a)?;
        let vb = if a.vals().is_some() { T::BYTES } else { 0 };
        let bytes = self.workspace_bytes(algo, d.m, d.n, d.nnz, vb)?;
        let mut own = std::mem::take(&mut self.own);
        let r = own.scratch(&self.gpu, bytes).map_err(Error::from).and_then(|mut s| self.transpose_into_with(algo, a, out, &mut s));
        self.own = own;
        r
    }

    /// [`Transposer::transpose_into`] on caller-lent scratch of at least
    /// [`Transposer::workspace_bytes`] for this matrix and algorithm.
    ///
    /// # Errors
    /// As [`Transposer::transpose_into`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn transpose_into_with<T: Payload>(&mut self, algo: Algorithm, a: &DeviceCsr<T>, mut out: DeviceCsrParts<T>, scratch: &mut Scratch<'_>) -> Result<DeviceCsr<T>> {
        let d = dims(a)?;
        check_output(a, &out, d)?;
        if a.vals().is_some() && T::BYTES != 4 && T::BYTES != 8 {
            return Err(Error::UnsupportedValue { bytes: T::BYTES });
        }
        let algo = algo.resolve(d.m, d.n, d.nnz);
        let vb = if a.vals().is_some() { T::BYTES } else { 0 };
        scratch.require(self.workspace_bytes(algo, d.m, d.n, d.nnz, vb)?)?;
        if algo == Algorithm::Serial {
            self.serial(a, &mut out)?;
        } else if d.nnz == 0 {
            // Every algorithm's answer, without launching anything (cuSPARSE would leave the
            // pointer of n = 0 unwritten).
            self.gpu.memset_bytes(&mut out.ptr, 0)?;
        } else {
            match algo {
                Algorithm::ScanTrans => self.scan_trans(a, &mut out, d, scratch)?,
                Algorithm::MergeTrans | Algorithm::CooChain => self.sort_trans(algo, a, &mut out, d, scratch)?,
                Algorithm::RadixTrans => self.radix_trans(a, &mut out, d, scratch)?,
                Algorithm::CuSparse => self.cusparse_trans(a, &mut out, d, scratch)?,
                Algorithm::Serial | Algorithm::Auto => return Err(Error::Runtime(gpu_runtime::Error::Internal("unresolved transposition algorithm"))),
            }
        }
        // SAFETY: every algorithm writes the CSR of the transpose of a valid `a` (tested bit for
        // bit against the twin): pointer of n + 1 from 0 to nnz, row indices < m, values moved.
        Ok(unsafe { DeviceCsr::from_parts_unchecked(d.n, d.m, out) })
    }

    fn serial<T: Payload>(&mut self, a: &DeviceCsr<T>, out: &mut DeviceCsrParts<T>) -> Result<()> {
        let ptr = self.gpu.download(a.ptr())?;
        let idx = self.gpu.download(a.idx())?;
        let vals = match a.vals() {
            Some(v) => Some(self.gpu.download(v)?),
            None => None,
        };
        let (tp, ti, tv) = serial::transpose_parts(a.rows(), a.cols(), &ptr, &idx, vals.as_deref())?;
        let stream = self.gpu.stream().clone();
        let copy = |e| Error::Runtime(gpu_runtime::Error::driver("upload")(e));
        stream.memcpy_htod(&tp, &mut out.ptr).map_err(copy)?;
        stream.memcpy_htod(&ti, &mut out.idx).map_err(copy)?;
        if let (Some(tv), Some(ov)) = (tv, out.vals.as_mut()) {
            stream.memcpy_htod(&tv, ov).map_err(copy)?;
        }
        Ok(self.gpu.synchronize()?)
    }

    fn scan_trans<T: Payload>(&mut self, a: &DeviceCsr<T>, out: &mut DeviceCsrParts<T>, d: Dims, scratch: &mut Scratch<'_>) -> Result<()> {
        let parts = self.scan_parts_for(d.nnz, d.n);
        let tlen = table_len(parts, d.n)?;
        let stream = self.gpu.stream().clone();
        let sms = self.gpu.props().sm_count;
        let mut rows = scratch.slice::<u32>(d.nnz as usize)?;
        let mut intra = scratch.slice::<u32>(d.nnz as usize)?;
        let mut table = scratch.slice::<u32>(tlen as usize)?;
        self.ptr2idx.run_with(a.ptr(), &mut rows, &mut scratch.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?)?;
        let mut sub = scratch.sub(self.hist.partitioned_workspace_bytes(parts, d.n))?;
        self.hist.partitioned_with(a.idx(), parts, &mut table, &mut intra, false, &mut sub)?;
        // Column pointer: exclusive scan of the totals (row `parts` of the table), then nnz.
        {
            let totals = table.range((parts * d.n) as usize..);
            let mut head = out.ptr.slice_mut(0..d.n as usize);
            let mut sub = scratch.sub(Scanner::<u32>::workspace_bytes(ScanAlgorithm::Auto, d.n))?;
            self.scanner.scan_with(ScanKind::Exclusive, &totals, &mut head, &mut sub)?;
        }
        let mut tail = out.ptr.slice_mut(d.n as usize..);
        stream.memcpy_htod(&[d.nnz as u32], &mut tail).map_err(|e| gpu_runtime::Error::driver("column pointer tail")(e))?;
        let chunk = d.nnz.div_ceil(parts);
        let (k, vals, out_vals) = payload(&stream, a, out);
        let (c, _c) = a.idx().device_ptr(&stream);
        let (r, _r) = rows.device_ptr(&stream);
        let (cp, _cp) = out.ptr.device_ptr(&stream);
        let (t, _t) = table.device_ptr(&stream);
        let (i, _i) = intra.device_ptr(&stream);
        let (orow, _o) = out.idx.device_ptr_mut(&stream);
        // SAFETY: transpose_scatter(nnz, n, chunk, cols, rows, vals, colptr, inter, intra,
        // out_rows, out_vals): nnz-long inputs and outputs, colptr n + 1 words, inter
        // (parts + 1) * n words scanned by `partitioned`; `a` keeps DeviceCsr's invariants
        // (columns < n), so every slot is < nnz and distinct.
        unsafe {
            self.scatter[k]
                .args(&stream)
                .arg(&d.nnz)
                .arg(&d.n)
                .arg(&chunk)
                .arg(&c)
                .arg(&r)
                .arg(&vals)
                .arg(&cp)
                .arg(&t)
                .arg(&i)
                .arg(&orow)
                .arg(&out_vals)
                .launch(grid(sms, d.nnz))?
        };
        Ok(())
    }

    fn sort_trans<T: Payload>(&mut self, algo: Algorithm, a: &DeviceCsr<T>, out: &mut DeviceCsrParts<T>, d: Dims, scratch: &mut Scratch<'_>) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let sms = self.gpu.props().sm_count;
        let n = d.nnz as usize;
        let mut rows = scratch.slice::<u32>(n)?;
        let mut keys = scratch.slice::<u32>(n)?;
        let mut perm = scratch.slice::<u32>(n)?;
        self.ptr2idx.run_with(a.ptr(), &mut rows, &mut scratch.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?)?;
        stream.memcpy_dtod(a.idx(), &mut keys).map_err(|e| gpu_runtime::Error::driver("copy column indices")(e))?;
        {
            let (p, _p) = perm.device_ptr_mut(&stream);
            // SAFETY: transpose_iota(perm, nnz): perm holds nnz words.
            unsafe { self.iota.args(&stream).arg(&p).arg(&d.nnz).launch(grid(sms, d.nnz))? };
        }
        // Stable: equal columns keep their CSR order, so rows come out sorted in each column.
        let mut sub = scratch.sub(self.segmerge.sort_workspace_bytes(d.nnz, true))?;
        self.segmerge.sort_pairs_with(&mut keys, &mut perm, &mut sub)?;
        if algo == Algorithm::MergeTrans {
            let (kp, _k) = keys.device_ptr(&stream);
            let (pp, _p) = out.ptr.device_ptr_mut(&stream);
            // SAFETY: transpose_sorted_ptr(keys, nnz, n, ptr): nnz sorted keys < n (the input's
            // column indices, DeviceCsr's invariant), ptr n + 1 words.
            unsafe { self.sorted_ptr.args(&stream).arg(&kp).arg(&d.nnz).arg(&d.n).arg(&pp).launch(grid(sms, d.nnz))? };
        } else {
            let mut sub = scratch.sub(Histogram::pointers_workspace_bytes(d.n))?;
            self.hist.pointers_with(a.idx(), &mut out.ptr, false, &mut sub)?;
        }
        let (k, vals, out_vals) = payload(&stream, a, out);
        let (pm, _pm) = perm.device_ptr(&stream);
        let (r, _r) = rows.device_ptr(&stream);
        let (orow, _o) = out.idx.device_ptr_mut(&stream);
        // SAFETY: transpose_gather(nnz, perm, rows, vals, out_rows, out_vals): perm is a
        // permutation of 0..nnz (sorted iota), every other buffer holds nnz items.
        unsafe { self.gather[k].args(&stream).arg(&d.nnz).arg(&pm).arg(&r).arg(&vals).arg(&orow).arg(&out_vals).launch(grid(sms, d.nnz))? };
        Ok(())
    }

    fn radix_trans<T: Payload>(&mut self, a: &DeviceCsr<T>, out: &mut DeviceCsrParts<T>, d: Dims, scratch: &mut Scratch<'_>) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let vb = if a.vals().is_some() { T::BYTES as u64 } else { 0 };
        let tiles = d.nnz.div_ceil(RADIX_TILE as u64);
        let (passes, per) = radix_passes_max(d.n, self.radix_bits);
        let mut rows_buf = scratch.slice::<u32>(d.nnz as usize)?;
        let rows0 = scratch.take(4 * d.nnz)?;
        let keys = [scratch.take(4 * d.nnz)?, scratch.take(4 * d.nnz)?];
        let vals = [scratch.take(d.nnz * vb)?, scratch.take(d.nnz * vb)?];
        let mut counts = scratch.slice::<u32>(radix_counts_len(d.nnz) as usize)?;
        self.ptr2idx.run_with(a.ptr(), &mut rows_buf, &mut scratch.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?)?;
        let mut scan_scratch = scratch.sub(Scanner::<u32>::workspace_bytes(ScanAlgorithm::Auto, radix_counts_len(d.nnz)))?;
        let rows = rows_buf.device_ptr(&stream).0;
        let total_bits = if d.n <= 1 { 0 } else { 64 - (d.n - 1).leading_zeros() };
        let (k, a_vals, o_vals) = payload(&stream, a, out);
        let (a_idx, out_idx) = (a.idx().device_ptr(&stream).0, out.idx.device_ptr_mut(&stream).0);
        let counts_ptr = counts.device_ptr(&stream).0;
        // Temporaries: T0 = (keys[0], rows0, vals[0]), T1 = (keys[1], rows, vals[1]); the
        // ptr2idx rows are dead after pass 0, so T1 reuses them.
        let temp = |x: usize| (keys[x], if x == 0 { rows0 } else { rows }, if vb == 0 { 0 } else { vals[x] });
        let cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (transpose_kernels::RADIX_NT, 1, 1), shared_mem_bytes: 0 };
        for p in 0..passes {
            let shift = p * per;
            let bits = per.min(total_bits.saturating_sub(shift));
            let (kin, rin, vin) = if p == 0 { (a_idx, rows, a_vals) } else { temp(((p - 1) % 2) as usize) };
            let last = p + 1 == passes;
            let (kout, rout, vout) = if last { (keys[(p % 2) as usize], out_idx, o_vals) } else { temp((p % 2) as usize) };
            // SAFETY: transpose_radix_upsweep(keys, n, shift, bits, tiles, counts): `tiles`
            // blocks, keys of nnz words, counts of 2^MAX_BITS * tiles >= 2^bits * tiles words.
            unsafe { self.upsweep.args(&stream).arg(&kin).arg(&d.nnz).arg(&shift).arg(&bits).arg(&tiles).arg(&counts_ptr).launch(cfg)? };
            {
                let mut c = counts.range_mut(0..((1u64 << bits) * tiles) as usize);
                // Each pass reuses the same region (stream order).
                self.scanner.scan_in_place_with(ScanKind::Exclusive, &mut c, &mut scan_scratch.reborrow())?;
            }
            // SAFETY: transpose_radix_downsweep(keys_in, rows_in, vals_in, n, shift, bits, tiles,
            // offsets, keys_out, rows_out, vals_out): inputs and outputs of nnz items (values of
            // the kernel's width or null), distinct; offsets scanned from this pass's upsweep.
            unsafe {
                self.downsweep[k]
                    .args(&stream)
                    .arg(&kin)
                    .arg(&rin)
                    .arg(&vin)
                    .arg(&d.nnz)
                    .arg(&shift)
                    .arg(&bits)
                    .arg(&tiles)
                    .arg(&counts_ptr)
                    .arg(&kout)
                    .arg(&rout)
                    .arg(&vout)
                    .launch(cfg)?
            };
        }
        let sorted = keys[((passes - 1) % 2) as usize];
        let (pp, _p) = out.ptr.device_ptr_mut(&stream);
        // SAFETY: transpose_sorted_ptr(keys, nnz, n, ptr): the sorted column indices (< n), ptr
        // of n + 1 words.
        unsafe { self.sorted_ptr.args(&stream).arg(&sorted).arg(&d.nnz).arg(&d.n).arg(&pp).launch(grid(self.gpu.props().sm_count, d.nnz))? };
        Ok(())
    }

    fn cusparse_trans<T: Payload>(&mut self, a: &DeviceCsr<T>, out: &mut DeviceCsrParts<T>, d: Dims, scratch: &mut Scratch<'_>) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let (_, vals, out_vals) = payload(&stream, a, out);
        let (ptr, _a) = a.ptr().device_ptr(&stream);
        let (idx, _b) = a.idx().device_ptr(&stream);
        let (out_ptr, _c) = out.ptr.device_ptr_mut(&stream);
        let (out_idx, _d) = out.idx.device_ptr_mut(&stream);
        let value_bytes = if a.vals().is_some() { T::BYTES } else { 0 };
        let call = cusparse::Call { m: d.m, n: d.n, nnz: d.nnz, vals, ptr, idx, out_vals, out_ptr, out_idx, value_bytes };
        let bytes = self.cusparse()?.buffer_size(&call)?;
        let buf = scratch.take(bytes)?;
        let cs = self.cusparse()?;
        // SAFETY: a valid DeviceCsr and its transposed-shape output (checked), a buffer of the
        // size cuSPARSE asked for.
        unsafe { cs.run(&call, buf) }
    }
}

fn table_len(parts: u64, n: u64) -> Result<u64> {
    (parts + 1).checked_mul(n).filter(|&l| l <= isize::MAX as u64 / 4).ok_or(Error::TooLarge { what: "ScanTrans table (parts + 1) * n", len: parts, max: isize::MAX as u64 / 4 / n.max(1) })
}

/// Words of RadixTrans's digit counts for `nnz` nonzeros: the widest digit's buckets per tile.
fn radix_counts_len(nnz: u64) -> u64 {
    (1 << RADIX_MAX_BITS) * nnz.div_ceil(RADIX_TILE as u64)
}

/// The input's sizes (the lengths agree: `DeviceCsr` keeps them).
fn dims<T: DeviceRepr>(a: &DeviceCsr<T>) -> Result<Dims> {
    let d = Dims { m: a.rows(), n: a.cols(), nnz: a.nnz() };
    check_dims(d)?;
    Ok(d)
}

fn check_dims(d: Dims) -> Result<()> {
    let max = u32::MAX as u64 - 1;
    for (what, v) in [("rows", d.m), ("cols", d.n), ("nnz", d.nnz)] {
        if v > max {
            return Err(Error::TooLarge { what, len: v, max });
        }
    }
    Ok(())
}

fn check_output<T: DeviceRepr>(a: &DeviceCsr<T>, out: &DeviceCsrParts<T>, d: Dims) -> Result<()> {
    let checks = [
        ("output pointer length", d.n + 1, out.ptr.len() as u64),
        ("output indices length", d.nnz, out.idx.len() as u64),
        ("output values present", a.vals().is_some() as u64, out.vals.is_some() as u64),
    ];
    for (what, expected, actual) in checks {
        if expected != actual {
            return Err(Error::Shape { what, expected, actual });
        }
    }
    if let Some(v) = &out.vals {
        if v.len() as u64 != d.nnz {
            return Err(Error::Shape { what: "output values length", expected: d.nnz, actual: v.len() as u64 });
        }
    }
    Ok(())
}

/// A 1-D grid for `items` with up to 16 blocks per multiprocessor.
fn grid(sms: u32, items: u64) -> LaunchConfig {
    grid_1d(items, NT, NT as u64 * 4, sms.max(1) * 16)
}

/// Kernel variant (0: 4-byte values or none, 1: 8-byte) and the value pointers (0 if none).
fn payload<T: Payload>(stream: &std::sync::Arc<gpu_runtime::cudarc::driver::CudaStream>, a: &DeviceCsr<T>, out: &mut DeviceCsrParts<T>) -> (usize, u64, u64) {
    let k = usize::from(T::BYTES == 8);
    match (a.vals(), out.vals.as_mut()) {
        (Some(v), Some(o)) => (k, v.device_ptr(stream).0, o.device_ptr_mut(stream).0),
        _ => (0, 0, 0),
    }
}
