//! The deterministic option: `A` and a stored transpose `Aᵀ` in CSR (made by `gpu-transpose`),
//! each product a fixed-order CSR product (a thread, a warp or a block per row by the rows' mean
//! length), so
//! the same inputs give the same bits on every run. The cost: twice the memory of one CSR, the
//! transpose at build time, and rows of `Aᵀ` that are long and few for tall matrices (a block
//! each; BENCHMARKS.md has the times).
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use gpu_runtime::Gpu;
use gpu_transpose::{Algorithm, Transposer};
use sptrans_matrix::device::DeviceCsr;

use crate::{check_dense, launch, Error, Op, Products, Result, SpmvValue};

/// `A` and `Aᵀ` in CSR on the GPU, for bit-reproducible products ([`Products`]).
pub struct CsrPair<T: SpmvValue> {
    gpu: Gpu,
    k: launch::Kernels,
    a: DeviceCsr<T>,
    at: DeviceCsr<T>,
}

impl<T: SpmvValue> CsrPair<T> {
    /// Takes `a` and transposes it on the GPU (`gpu-transpose`, `Algorithm::Auto`).
    ///
    /// # Errors
    /// [`Error::NoValues`] for a pattern matrix; transposer errors, out of memory.
    pub fn new(gpu: &Gpu, a: DeviceCsr<T>) -> Result<Self> {
        if a.vals().is_none() {
            return Err(Error::NoValues);
        }
        let k = launch::Kernels::load::<T>(gpu)?;
        let at = Transposer::new(gpu)?.transpose_new(Algorithm::Auto, &a)?;
        Ok(Self { gpu: gpu.clone(), k, a, at })
    }

    /// Device bytes of both CSR matrices.
    pub fn footprint_bytes(&self) -> u64 {
        let csr = |m: &DeviceCsr<T>| 4 * (m.rows() + 1) + m.nnz() * (4 + T::BYTES as u64);
        csr(&self.a) + csr(&self.at)
    }

    /// The stored transpose.
    pub fn transpose(&self) -> &DeviceCsr<T> {
        &self.at
    }

    /// Gives `A` back.
    pub fn into_matrix(self) -> DeviceCsr<T> {
        self.a
    }
}

impl<T: SpmvValue> Products<T> for CsrPair<T> {
    fn rows(&self) -> u64 {
        self.a.rows()
    }

    fn cols(&self) -> u64 {
        self.a.cols()
    }

    fn multiply(&mut self, op: Op, alpha: T, x: &impl DevicePtr<T>, k: usize, beta: T, out: &mut impl DevicePtrMut<T>) -> Result<()> {
        check_dense(self.a.rows(), self.a.cols(), op, x.len(), k, out.len())?;
        let m = if op == Op::NoTranspose { &self.a } else { &self.at };
        let stream = self.gpu.stream().clone();
        let (p, _p) = m.ptr().device_ptr(&stream);
        let (i, _i) = m.idx().device_ptr(&stream);
        let v = match m.vals() {
            Some(v) => v.device_ptr(&stream).0,
            None => return Err(Error::NoValues),
        };
        let (xp, _x) = x.device_ptr(&stream);
        let (yp, _y) = out.device_ptr_mut(&stream);
        // SAFETY: a valid CSR (DeviceCsr's invariants) of op(A)'s shape; check_dense checked the
        // dense blocks hold k vectors of its column and row counts; 1 ≤ k ≤ MAX_K.
        unsafe { launch::csr(&self.gpu, &self.k, m.rows(), m.cols(), m.nnz(), k as u32, p, i, v, xp, alpha, beta, yp) }
    }
}
