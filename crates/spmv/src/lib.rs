#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough.
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

mod cusparse;
mod launch;
pub mod serial;

use std::str::FromStr;

use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::{Payload, PtxModule};
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::Value;

/// The embedded `spmv` PTX module (built from `kernels-rs/spmv`).
pub static MODULE: PtxModule = PtxModule::new("spmv", include_str!("../ptx/spmv.ptx"));

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error, wherever it arose.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// From the COO conversion's pointers-to-index.
    #[error(transparent)]
    Ptr2Idx(gpu_ptr2idx::Error),
    /// A vector of the wrong length.
    #[error("spmv: {what} has {actual} entries, expected {expected}")]
    LengthMismatch {
        /// `x` or `y`.
        what: &'static str,
        /// Length required.
        expected: u64,
        /// Length given.
        actual: u64,
    },
    /// A pattern matrix (no values) cannot be multiplied.
    #[error("spmv: the matrix has no values (a pattern matrix)")]
    NoValues,
    /// A format name that [`Format::from_str`] does not know.
    #[error("unknown SpMV format `{0}` (csr-scalar, csr-vector, coo, merge-path, cusparse-csr-alg1, cusparse-csr-alg2, cusparse-coo)")]
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

gpu_runtime::lift_errors!(gpu_ptr2idx => Ptr2Idx);

/// The value types the kernels are built for: `f32` and `f64`.
pub trait SpmvValue: Payload + Value + Into<f64> + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> {
    /// The type's name in kernel symbols (`spmv_csr_scalar_f64`).
    const NAME: &'static str;
    /// Unit roundoff (half the machine epsilon): `2^-24` for `f32`, `2^-53` for `f64`.
    const UNIT_ROUNDOFF: f64;
}

impl SpmvValue for f32 {
    const NAME: &'static str = "f32";
    const UNIT_ROUNDOFF: f64 = f32::EPSILON as f64 / 2.0;
}

impl SpmvValue for f64 {
    const NAME: &'static str = "f64";
    const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;
}

/// A storage format with its kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// CSR, one thread per row; deterministic. Good for short, even rows; one long row stalls
    /// its warp.
    CsrScalar,
    /// CSR, one warp per row with a shuffle reduction; deterministic. Good for rows of 32 or
    /// more; wastes lanes on short rows.
    CsrVector,
    /// COO (the row of every nonzero, from ptr2idx), one thread per nonzero with atomic adds:
    /// even work per thread whatever the rows, but **not bit-reproducible** run to run.
    Coo,
    /// Merge-path CSR (Merrill & Garland, SC'16): every thread walks the same number of steps
    /// of the merge of row ends with nonzeros, so a row of a million nonzeros is shared by many
    /// threads and empty rows cost a step each. Rows wholly inside one thread's steps are
    /// deterministic; rows split between threads are completed by atomic adds, so the format
    /// is **not bit-reproducible**. Extra memory: 4 bytes per `MERGE_VT` (8) steps.
    MergePath,
    /// The baseline: cuSPARSE `cusparseSpMV`, CSR, `CUSPARSE_SPMV_CSR_ALG1` (not bit-reproducible).
    CuSparseCsrAlg1,
    /// The baseline: cuSPARSE `cusparseSpMV`, CSR, `CUSPARSE_SPMV_CSR_ALG2` (deterministic).
    CuSparseCsrAlg2,
    /// The baseline: cuSPARSE `cusparseSpMV`, COO, `CUSPARSE_SPMV_COO_ALG1` (not
    /// bit-reproducible).
    CuSparseCoo,
}

impl Format {
    /// Every format, in table order (ours, then the cuSPARSE baselines).
    pub const ALL: [Format; 7] = [Format::CsrScalar, Format::CsrVector, Format::Coo, Format::MergePath, Format::CuSparseCsrAlg1, Format::CuSparseCsrAlg2, Format::CuSparseCoo];

    /// The short name (`csr-scalar`, `csr-vector`, `coo`).
    pub fn name(self) -> &'static str {
        match self {
            Format::CsrScalar => "csr-scalar",
            Format::CsrVector => "csr-vector",
            Format::Coo => "coo",
            Format::MergePath => "merge-path",
            Format::CuSparseCsrAlg1 => "cusparse-csr-alg1",
            Format::CuSparseCsrAlg2 => "cusparse-csr-alg2",
            Format::CuSparseCoo => "cusparse-coo",
        }
    }

    /// Whether it is a cuSPARSE baseline.
    pub fn is_cusparse(self) -> bool {
        matches!(self, Format::CuSparseCsrAlg1 | Format::CuSparseCsrAlg2 | Format::CuSparseCoo)
    }

    /// Whether the same inputs give the same bits on every run.
    pub fn is_deterministic(self) -> bool {
        matches!(self, Format::CsrScalar | Format::CsrVector | Format::CuSparseCsrAlg2)
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
        Format::ALL.into_iter().find(|f| f.name() == s.to_ascii_lowercase()).ok_or_else(|| Error::UnknownFormat(s.to_string()))
    }
}

/// An SpMV plan: a matrix converted once to a format, multiplied many times
/// ([`Spmv::apply`]), on its [`Gpu`]'s stream, allocating nothing per call.
pub struct Spmv<T: SpmvValue> {
    gpu: Gpu,
    k: launch::Kernels,
    format: Format,
    a: DeviceCsr<T>,
    /// COO: the row of every nonzero (the columns and values are the CSR's). Merge-path: the
    /// first row of every thread's steps.
    row_array: Option<CudaSlice<u32>>,
    /// The cuSPARSE baselines' handle and descriptors (pointing into `a` and, for COO,
    /// `row_array`).
    cusparse: Option<cusparse::CuSparseSpmv>,
}

impl<T: SpmvValue> Spmv<T> {
    /// Takes `a` and converts it to `format` on the GPU (COO: the row of every nonzero by
    /// `gpu-ptr2idx`, with a transient workspace).
    ///
    /// # Errors
    /// [`Error::NoValues`] for a pattern matrix; module loading, out of memory.
    pub fn new(gpu: &Gpu, a: DeviceCsr<T>, format: Format) -> Result<Self> {
        if a.vals().is_none() {
            return Err(Error::NoValues);
        }
        let k = launch::Kernels::load::<T>(gpu)?;
        let row_array = match format {
            Format::Coo | Format::CuSparseCoo => {
                let mut rows = gpu.alloc::<u32>(a.nnz() as usize)?;
                Ptr2Idx::new(gpu)?.run(a.ptr(), &mut rows)?;
                Some(rows)
            }
            Format::MergePath => {
                let mut start = gpu.alloc::<u32>(launch::merge_threads(a.rows(), a.nnz()).max(1) as usize)?;
                let stream = gpu.stream().clone();
                let (p, _p) = a.ptr().device_ptr(&stream);
                let (sp, _s) = start.device_ptr_mut(&stream);
                // SAFETY: a valid CSR's pointer array; start holds merge_threads(rows, nnz)
                // entries (or 1).
                unsafe { launch::merge_partition(gpu, &k, a.rows(), a.nnz(), p, sp)? };
                drop((_p, _s));
                Some(start)
            }
            _ => None,
        };
        let alg = match format {
            Format::CuSparseCsrAlg1 => Some(cusparse::Alg::CsrAlg1),
            Format::CuSparseCsrAlg2 => Some(cusparse::Alg::CsrAlg2),
            Format::CuSparseCoo => Some(cusparse::Alg::CooAlg1),
            _ => None,
        };
        let cusparse = match alg {
            Some(alg) => Some(cusparse::CuSparseSpmv::new(gpu, &a, row_array.as_ref(), alg)?),
            None => None,
        };
        Ok(Self { gpu: gpu.clone(), k, format, a, row_array, cusparse })
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The matrix.
    pub fn matrix(&self) -> &DeviceCsr<T> {
        &self.a
    }

    /// Gives the matrix back.
    pub fn into_matrix(mut self) -> DeviceCsr<T> {
        // The descriptors point into the matrix: release them first.
        self.cusparse = None;
        let Spmv { a, .. } = self;
        a
    }

    /// Device bytes of the matrix in this format (CSR arrays, plus COO's row array or
    /// merge-path's partition).
    pub fn footprint_bytes(&self) -> u64 {
        let csr = 4 * (self.a.rows() + 1) + self.a.nnz() * (4 + T::BYTES as u64);
        csr + self.row_array.as_ref().map_or(0, |r| 4 * r.len() as u64)
    }

    /// `y = alpha * A * x + beta * y`; with `beta == 0`, `y` is not read. Enqueued without
    /// synchronizing.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `x` is not `cols` long or `y` not `rows` long; launch
    /// errors.
    pub fn apply(&mut self, alpha: T, x: &impl DevicePtr<T>, beta: T, y: &mut impl DevicePtrMut<T>) -> Result<()> {
        let (rows, cols, nnz) = (self.a.rows(), self.a.cols(), self.a.nnz());
        if x.len() as u64 != cols {
            return Err(Error::LengthMismatch { what: "x", expected: cols, actual: x.len() as u64 });
        }
        if y.len() as u64 != rows {
            return Err(Error::LengthMismatch { what: "y", expected: rows, actual: y.len() as u64 });
        }
        let stream = self.gpu.stream().clone();
        let (p, _p) = self.a.ptr().device_ptr(&stream);
        let (i, _i) = self.a.idx().device_ptr(&stream);
        let v = match self.a.vals() {
            Some(v) => v.device_ptr(&stream).0,
            None => return Err(Error::NoValues),
        };
        let (xp, _x) = x.device_ptr(&stream);
        let (yp, _y) = y.device_ptr_mut(&stream);
        match (self.format, &self.row_array) {
            // SAFETY: `a` keeps DeviceCsr's invariants (indices < cols = x's length); y holds
            // rows values.
            (Format::CsrScalar, _) => unsafe { launch::csr(&self.gpu, &self.k, false, rows, p, i, v, xp, alpha, beta, yp) },
            // SAFETY: as above.
            (Format::CsrVector, _) => unsafe { launch::csr(&self.gpu, &self.k, true, rows, p, i, v, xp, alpha, beta, yp) },
            (Format::Coo, Some(r)) => {
                let (rp, _r) = r.device_ptr(&stream);
                // SAFETY: the rows of the valid CSR (< rows), its columns (< cols) and values.
                unsafe { launch::coo(&self.gpu, &self.k, rows, nnz, rp, i, v, xp, alpha, beta, yp) }
            }
            (Format::MergePath, Some(s)) => {
                let (sp, _s) = s.device_ptr(&stream);
                // SAFETY: the valid CSR; s holds its partition (merge_threads(rows, nnz) entries).
                unsafe { launch::merge(&self.gpu, &self.k, rows, nnz, p, i, v, xp, alpha, beta, yp, sp) }
            }
            (Format::Coo | Format::MergePath, None) => Err(Error::Runtime(gpu_runtime::Error::Internal("COO or merge-path plan without its array"))),
            (Format::CuSparseCsrAlg1 | Format::CuSparseCsrAlg2 | Format::CuSparseCoo, _) => match self.cusparse.as_mut() {
                // SAFETY: x and y checked to hold cols and rows values; the descriptor's arrays
                // are the plan's own.
                Some(cs) => unsafe { cs.apply(&self.gpu, rows, cols, alpha, xp, beta, yp) },
                None => Err(Error::Runtime(gpu_runtime::Error::Internal("cuSPARSE plan without its handle"))),
            },
        }
    }
}
