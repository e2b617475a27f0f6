//! Peers the benchmarks and tests compare with, kept out of [`crate::Format`] (which lists this
//! crate's formats): NVIDIA cuSPARSE's `cusparseSpMV` on CSR (ALG1, ALG2) and COO (ALG1), as
//! [`CuSparseSpmv`].
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::Gpu;
use sptrans_matrix::DeviceCsrView;

use crate::cusparse::{Alg, CuSparseHandle};
use crate::{convert, launch, Error, Result, SpmvValue};

/// Matrices of fewer rows than this get a padded `y` in cuSPARSE's products, and no cuSPARSE
/// candidate in [`crate::Format::Auto`]'s trial ([`crate::Format::candidates`]).
///
/// cuSPARSE 12 (the 12.6 build on the GPU host and PyTorch's wheel's, CSR ALG1 and ALG2) has a
/// bug on small matrices: while other host threads run cuSPARSE products, a product on a matrix
/// of 32 rows (once in 24,000, 64 rows) sometimes writes one value past the end of `y`, and
/// sometimes leaves rows wrong (`f32` and `f64`). Reproduced without this crate
/// (`benches/repro/cusparse_spmv_memcheck.cu`, 8 threads, matrices of 32 rows mixed with larger
/// ones: 11–45 writes past `y` and 0–3 wrong rows in 24,000 `f32` products; none at 100, 128,
/// 300, 1,024 or more rows; none with one thread; record
/// `benches/experiments/2026-11-27-cusparse-spmv-memcheck.md`). The padded `y` keeps the stray
/// write inside memory of the plan's (the products stay memory-safe); the wrong rows remain
/// cuSPARSE's, so on small matrices used from several threads prefer this crate's formats.
pub const CUSPARSE_SMALL_ROWS: u64 = 1024;

/// Which cuSPARSE `cusparseSpMV` algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CuSparseAlg {
    /// CSR, `CUSPARSE_SPMV_CSR_ALG1` (not bit-reproducible): the peer of every SpMV ratio.
    CsrAlg1,
    /// CSR, `CUSPARSE_SPMV_CSR_ALG2` (deterministic).
    CsrAlg2,
    /// COO (the rows of every nonzero, made from the CSR), `CUSPARSE_SPMV_COO_ALG1` (not
    /// bit-reproducible).
    CooAlg1,
}

impl CuSparseAlg {
    /// Every one, in table order.
    pub const ALL: [CuSparseAlg; 3] = [CuSparseAlg::CsrAlg1, CuSparseAlg::CsrAlg2, CuSparseAlg::CooAlg1];

    /// The short name (`cusparse-csr-alg1`, `cusparse-csr-alg2`, `cusparse-coo`).
    pub fn name(self) -> &'static str {
        match self {
            CuSparseAlg::CsrAlg1 => "cusparse-csr-alg1",
            CuSparseAlg::CsrAlg2 => "cusparse-csr-alg2",
            CuSparseAlg::CooAlg1 => "cusparse-coo",
        }
    }

    /// The algorithm of a short name ([`CuSparseAlg::name`]), case-insensitive.
    pub fn from_name(s: &str) -> Option<CuSparseAlg> {
        CuSparseAlg::ALL.into_iter().find(|a| a.name().eq_ignore_ascii_case(s))
    }

    /// Whether the same inputs give the same bits on every run.
    pub fn is_deterministic(self) -> bool {
        self == CuSparseAlg::CsrAlg2
    }
}

impl std::fmt::Display for CuSparseAlg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// cuSPARSE's SpMV on a borrowed CSR, as a plan like [`crate::Spmv`]: `y = alpha · A · x + beta ·
/// y` on the [`Gpu`]'s stream. The handle, the matrix's descriptor (pointing into the borrowed
/// arrays, and into the plan's own row array for COO) and the buffer are made once; the vectors'
/// descriptors at the first product.
pub struct CuSparseSpmv<'a, T: SpmvValue> {
    gpu: Gpu,
    k: launch::Kernels<T>,
    alg: CuSparseAlg,
    a: DeviceCsrView<'a, T>,
    /// COO's rows (declared after the handle: the descriptor points into them).
    h: CuSparseHandle,
    rows: Option<CudaSlice<u32>>,
}

impl<'a, T: SpmvValue> CuSparseSpmv<'a, T> {
    /// Loads cuSPARSE and describes `a` for `alg` (COO: its rows made on the GPU first).
    ///
    /// # Errors
    /// [`Error::CuSparseUnavailable`], [`Error::NoValues`], cuSPARSE errors, out of memory.
    pub fn new(gpu: &Gpu, a: DeviceCsrView<'a, T>, alg: CuSparseAlg) -> Result<Self> {
        if a.vals().is_none() {
            return Err(Error::NoValues);
        }
        let k = launch::Kernels::<T>::load(gpu)?;
        let rows = if alg == CuSparseAlg::CooAlg1 { Some(convert::rows_of(gpu, &a)?) } else { None };
        let inner = match alg {
            CuSparseAlg::CsrAlg1 => Alg::CsrAlg1,
            CuSparseAlg::CsrAlg2 => Alg::CsrAlg2,
            CuSparseAlg::CooAlg1 => Alg::CooAlg1,
        };
        let h = CuSparseHandle::new(gpu, &a, rows.as_ref(), inner)?;
        Ok(Self { gpu: gpu.clone(), k, alg, a, h, rows })
    }

    /// Runs later products on `gpu`'s stream (a handle on the same context), as
    /// [`crate::Spmv::set_gpu`]: the new stream first waits (on the device) for the work enqueued
    /// on the old one.
    ///
    /// # Errors
    /// `gpu_runtime::Error::ForeignStream` for another context; driver and cuSPARSE errors.
    pub fn set_gpu(&mut self, gpu: &Gpu) -> Result<()> {
        gpu.follow(&self.gpu)?;
        self.h.set_stream(gpu)?;
        self.gpu = gpu.clone();
        Ok(())
    }

    /// The algorithm.
    pub fn alg(&self) -> CuSparseAlg {
        self.alg
    }

    /// Device bytes of the matrix as cuSPARSE reads it: the CSR, or for COO its rows, columns
    /// and values.
    pub fn footprint_bytes(&self) -> u64 {
        let nnz = self.a.nnz();
        match self.rows {
            Some(_) => nnz * (8 + T::BYTES as u64),
            None => 4 * (self.a.rows() + 1) + nnz * (4 + T::BYTES as u64),
        }
    }

    /// `y = alpha * A * x + beta * y` (`y` not read when `beta == 0`). Enqueued on the stream; the
    /// first product allocates cuSPARSE's buffer.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for vectors of the wrong length; cuSPARSE errors.
    pub fn apply(&mut self, alpha: T, x: &impl DevicePtr<T>, beta: T, y: &mut impl DevicePtrMut<T>) -> Result<()> {
        let (rows, cols) = (self.a.rows(), self.a.cols());
        crate::check_vectors(rows, cols, x.len(), y.len())?;
        let empty = rows == 0 || cols == 0 || self.a.nnz() == 0;
        let (gpu, k, h) = (&self.gpu, &self.k, &mut self.h);
        launch::with_vectors(gpu, x, y, |x, y| {
            if empty {
                // cuSPARSE refuses empty dimensions: y = beta · y (our scale kernel).
                return launch::scale(gpu, k, beta, y);
            }
            // SAFETY: x and y hold cols and rows values (checked), live until the work completes
            // (the caller's borrows outlast the enqueue; the stream orders their later use).
            unsafe { h.apply_views(gpu, alpha, x, beta, y) }
        })
    }
}
