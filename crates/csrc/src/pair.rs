//! The deterministic option: `A` and a stored transpose `Aᵀ` in CSR (made by `gpu-transpose`),
//! each product a fixed-order CSR product (a thread, a warp or a block per row by the rows' mean
//! length), so
//! the same inputs give the same bits on every run. The cost: twice the memory of one CSR, the
//! transpose at build time, and rows of `Aᵀ` that are long and few for tall matrices (a block
//! each; BENCHMARKS.md has the times).
use gpu_runtime::scratch::Layout;
use gpu_runtime::{DenseView, DenseViewMut, Gpu, Scratch, ScratchBuf};
use gpu_transpose::{Algorithm, Transposer};
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::view::AsDeviceCsrView;

use crate::{dense, launch, Error, Op, Products, Result, SpmvValue};

/// `A` and `Aᵀ` in CSR on the GPU, for bit-reproducible products ([`Products`]).
pub struct CsrPair<T: SpmvValue> {
    gpu: Gpu,
    k: launch::Kernels<T>,
    a: DeviceCsr<T>,
    at: DeviceCsr<T>,
    /// The plan's own scratch (packed operands).
    own: ScratchBuf,
    /// Products of 3 or more vectors by the row-major group kernels ([`CsrPair::set_row_major`]).
    row_major: bool,
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
        let at = Transposer::new(gpu)?.transpose_new(Algorithm::Auto, &a)?;
        Self::of(gpu, a, at)
    }

    /// The pair of a borrowed matrix: `Aᵀ` by one transpose of `a`, and the plan's own `A` by a
    /// transpose of that (the same matrix, each row's columns sorted), so `a` is not kept.
    ///
    /// # Errors
    /// As [`CsrPair::new`].
    pub fn from_view(gpu: &Gpu, a: &impl AsDeviceCsrView<T>) -> Result<Self> {
        if a.csr_view().vals().is_none() {
            return Err(Error::NoValues);
        }
        let mut tr = Transposer::new(gpu)?;
        let at = tr.transpose_new(Algorithm::Auto, a)?;
        let a = tr.transpose_new(Algorithm::Auto, &at)?;
        Self::of(gpu, a, at)
    }

    /// The plan of `a` and its transpose `at`, with the kernels loaded.
    fn of(gpu: &Gpu, a: DeviceCsr<T>, at: DeviceCsr<T>) -> Result<Self> {
        let k = launch::Kernels::<T>::load(gpu)?;
        Ok(Self { gpu: gpu.clone(), k, a, at, own: ScratchBuf::default(), row_major: false })
    }

    /// Products of 3 to 16 vectors by the row-major group kernels (`on`; off by default until
    /// their device measurements land): the input block copied row-major into the scratch
    /// (`x rows · k` values more of [`Products::workspace_bytes`]), then a group of 4, 8 or 16
    /// lanes a row, one lane a vector, each nonzero reading one contiguous line of the block
    /// instead of `k`, the sums in registers in a fixed order (still bit-reproducible).
    pub fn set_row_major(&mut self, on: bool) {
        self.row_major = on;
    }

    /// Whether products of 3 or more vectors take the row-major group kernels.
    pub fn row_major(&self) -> bool {
        self.row_major
    }

    /// Whether a product of `k` vectors takes the row-major group kernels (and their scratch):
    /// the one test behind both the size query and the product.
    fn takes_rows(&self, k: usize) -> bool {
        self.row_major && k >= launch::ROWS_FROM_K
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

crate::inherent_products!(CsrPair);

impl<T: SpmvValue> Products<T> for CsrPair<T> {
    fn rows(&self) -> u64 {
        self.a.rows()
    }

    fn cols(&self) -> u64 {
        self.a.cols()
    }

    fn workspace_bytes(&self, op: Op, k: usize, packed: bool) -> u64 {
        let rows = if self.takes_rows(k) { dense::operand_rows(self.a.rows(), self.a.cols(), op).0 * k as u64 * T::BYTES as u64 } else { 0 };
        Layout::new().add(dense::packing_bytes(self.a.rows(), self.a.cols(), op, k, T::BYTES as u64, packed)).add(rows).bytes()
    }

    fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    fn own_scratch(&mut self) -> &mut ScratchBuf {
        &mut self.own
    }

    fn multiply_with(
        &mut self,
        op: Op,
        alpha: T,
        x: &DenseView<'_, T>,
        beta: T,
        out: &mut DenseViewMut<'_, T>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let k = dense::check(self.a.rows(), self.a.cols(), op, x, out)?;
        scratch.require(Products::workspace_bytes(self, op, k, x.is_packed() && out.is_packed()))?;
        let m = if op == Op::NoTranspose { &self.a } else { &self.at };
        if m.vals().is_none() {
            return Err(Error::NoValues);
        }
        let (gpu, kernels, rows) = (&self.gpu, &self.k, self.takes_rows(k));
        dense::with_packed(gpu, (self.a.rows(), self.a.cols()), op, x, beta, out, scratch, |mut d, s| {
            if rows {
                let mut xr = s.slice::<T>(m.cols() as usize * d.k)?;
                // SAFETY: as below; xr holds m.cols() · k values.
                return unsafe { launch::rows_product(gpu, kernels, m, alpha, beta, &mut d, &mut xr) };
            }
            // SAFETY: x and out are packed blocks of k vectors of op(A)'s column and row counts
            // (dense::check); 1 ≤ k ≤ MAX_K.
            unsafe { launch::csr_product(gpu, kernels, m, alpha, beta, &mut d) }
        })
    }
}
