//! The deterministic option: `A` and a stored transpose `Aᵀ` in CSR (made by `gpu-transpose`),
//! each product a fixed-order CSR product (a thread, a warp or a block per row by the rows' mean
//! length), so
//! the same inputs give the same bits on every run. The cost: twice the memory of one CSR, the
//! transpose at build time, and rows of `Aᵀ` that are long and few for tall matrices (a block
//! each; BENCHMARKS.md has the times).
//!
//! **Column panels** ([`CsrPair::with_panels`]): a product `M · X` gathers a row of `X` per
//! nonzero; when `X` has more rows than the L2 holds, the gathers go to HBM. A side of the pair
//! whose `X` is that tall is stored instead as column panels `M = [M₀ M₁ …]`, each over rows of
//! `X` that fit, and its product is `Σⱼ Mⱼ Xⱼ`, a panel at a time (`benches/peers/
//! wide_products_floor.py`: `Aᵀ·U` of 8 vectors at 0.25B nonzeros, 7.9 ms whole and 3.3 ms in
//! 4 panels on an H100). The panels together hold one copy of the side; each is the transpose
//! of a row block of the other side, made by `gpu-transpose`.
use gpu_runtime::scratch::Carver;
use gpu_runtime::{DenseView, DenseViewMut, DeviceView, Gpu, Scratch, ScratchBuf};
use gpu_transpose::{Algorithm, Transposer};
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::view::{AsDeviceCsrView, DeviceCsrView};

use crate::{dense, launch, Error, Op, Products, Result, SpmvValue};

/// `A` and `Aᵀ` in CSR on the GPU, for bit-reproducible products ([`Products`]).
pub struct CsrPair<T: SpmvValue> {
    gpu: Gpu,
    k: launch::Kernels<T>,
    /// `A` for `A · X`: one panel, or column panels over rows of `X` ([`CsrPair::with_panels`]),
    /// each with the first row of `X` it multiplies.
    a: Vec<(u64, DeviceCsr<T>)>,
    /// `Aᵀ` for `Aᵀ · U`, likewise.
    at: Vec<(u64, DeviceCsr<T>)>,
    /// `A`'s shape.
    shape: (u64, u64),
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
        Self::of(gpu, (a.rows(), a.cols()), vec![(0, a)], vec![(0, at)])
    }

    /// The pair of a borrowed matrix: `Aᵀ` by one transpose of `a`, and the plan's own `A` by a
    /// transpose of that (the same matrix, each row's columns sorted), so `a` is not kept.
    ///
    /// # Errors
    /// As [`CsrPair::new`].
    pub fn from_view(gpu: &Gpu, a: &impl AsDeviceCsrView<T>) -> Result<Self> {
        // No side has more rows than u64::MAX: both stay whole, made by the same two transposes.
        Self::with_panels(gpu, a, u64::MAX)
    }

    /// [`CsrPair::from_view`] with each side whose dense operand has more than `panel_rows` rows
    /// stored as column panels of at most `panel_rows` columns (the module doc; at least 1 row),
    /// so that a panel's rows of the operand stay in the L2 ([`CsrPair::l2_panel_rows`] sizes
    /// them for 16 vectors). The same products within rounding (the sum over panels adds in
    /// another order than one pass), still bit-reproducible run to run. Cutting a side reads the
    /// other side's row pointer back: **synchronizes** then (not when no side is cut).
    ///
    /// # Errors
    /// As [`CsrPair::new`].
    pub fn with_panels(gpu: &Gpu, a: &impl AsDeviceCsrView<T>, panel_rows: u64) -> Result<Self> {
        let view = a.csr_view();
        if view.vals().is_none() {
            return Err(Error::NoValues);
        }
        let panel_rows = panel_rows.max(1);
        let mut tr = Transposer::new(gpu)?;
        let at = tr.transpose_new(Algorithm::Auto, &view)?;
        // A's panels (over X's rows: A's columns) are transposes of Aᵀ's row blocks, Aᵀ's (over
        // U's rows: A's rows) of A's, cut from the caller's matrix; the whole Aᵀ goes once both
        // are made (at most three CSR copies at a time).
        let a_side = if view.cols() > panel_rows {
            column_panels(gpu, &mut tr, &at.view(), panel_rows)?
        } else {
            vec![(0, tr.transpose_new(Algorithm::Auto, &at)?)]
        };
        let at_side = if view.rows() > panel_rows { column_panels(gpu, &mut tr, &view, panel_rows)? } else { vec![(0, at)] };
        Self::of(gpu, (view.rows(), view.cols()), a_side, at_side)
    }

    /// Rows of a dense operand of [`MAX_K`](crate::MAX_K) vectors that fill three quarters of
    /// `gpu`'s L2 (at least 1): the panel size for [`CsrPair::with_panels`].
    pub fn l2_panel_rows(gpu: &Gpu) -> u64 {
        (gpu.props().l2_bytes * 3 / 4 / (crate::MAX_K as u64 * T::BYTES as u64)).max(1)
    }

    /// Column panels per side: `(A's, Aᵀ's)` (1 for a side stored whole).
    pub fn panels(&self) -> (usize, usize) {
        (self.a.len(), self.at.len())
    }

    /// The plan of an `A` of `shape` stored as the panels `a` and its transpose as `at` (one
    /// each when whole), with the kernels loaded.
    fn of(gpu: &Gpu, shape: (u64, u64), a: Vec<(u64, DeviceCsr<T>)>, at: Vec<(u64, DeviceCsr<T>)>) -> Result<Self> {
        let k = launch::Kernels::<T>::load(gpu)?;
        Ok(Self { gpu: gpu.clone(), k, a, at, shape, own: ScratchBuf::default(), row_major: false })
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

    /// Device bytes of both sides (every panel's CSR).
    pub fn footprint_bytes(&self) -> u64 {
        let csr = |m: &DeviceCsr<T>| 4 * (m.rows() + 1) + m.nnz() * (4 + T::BYTES as u64);
        self.a.iter().chain(&self.at).map(|(_, m)| csr(m)).sum()
    }

    /// The stored transpose, or `None` when it is cut into column panels.
    pub fn transpose(&self) -> Option<&DeviceCsr<T>> {
        whole(&self.at)
    }

    /// Gives `A` back, or `None` when it is cut into column panels.
    pub fn into_matrix(self) -> Option<DeviceCsr<T>> {
        let mut a = self.a;
        (a.len() == 1).then(|| a.pop().map(|(_, m)| m)).flatten()
    }
}

/// A side stored whole (one panel).
fn whole<T: SpmvValue>(side: &[(u64, DeviceCsr<T>)]) -> Option<&DeviceCsr<T>> {
    match side {
        [(_, m)] => Some(m),
        _ => None,
    }
}

/// The column panels of `Mᵀ` over rows of its operand, `panel_rows` columns each (the last
/// fewer), from the row blocks of `m`: each block's row pointer rebased on the host (one
/// download of `m`'s pointer), its column indices and values borrowed, then transposed. Each
/// panel comes with its first column.
fn column_panels<T: SpmvValue>(gpu: &Gpu, tr: &mut Transposer, m: &DeviceCsrView<'_, T>, panel_rows: u64) -> Result<Vec<(u64, DeviceCsr<T>)>> {
    let bad = || Error::Runtime(gpu_runtime::Error::Internal("a row block outside its CSR"));
    let ptr: Vec<u32> = gpu.download(m.ptr())?;
    let vals = m.vals().ok_or(Error::NoValues)?;
    let mut panels = Vec::new();
    let mut r0 = 0u64;
    while r0 < m.rows() {
        let r1 = (r0 + panel_rows).min(m.rows());
        let block = ptr.get(r0 as usize..=r1 as usize).ok_or_else(bad)?;
        let (p0, p1) = (block[0] as usize, block[block.len() - 1] as usize);
        let rebased: Vec<u32> = block.iter().map(|p| p - block[0]).collect();
        let block_ptr = gpu.upload(&rebased)?;
        let (idx, v) = (m.idx().try_slice(p0..p1).ok_or_else(bad)?, vals.try_slice(p0..p1).ok_or_else(bad)?);
        // SAFETY: rows r0 .. r1 of a valid CSR (the view's invariants): the rebased pointer starts
        // at 0, never decreases and ends at the block's nonzeros, whose column indices (below
        // m.cols()) and values are the slices p0 .. p1 of m's arrays.
        let block = unsafe { DeviceCsrView::new_unchecked(r1 - r0, m.cols(), DeviceView::of(&block_ptr), idx, Some(v)) };
        panels.push((r0, tr.transpose_new(Algorithm::Auto, &block)?));
        r0 = r1;
    }
    Ok(panels)
}

impl<T: SpmvValue> CsrPair<T> {
    /// The product's own scratch after the packing: the row-major copy of `x` (the operand's
    /// rows × `k` values) when the row-major kernels take the product. The one description,
    /// measured by `workspace_bytes` and carved by the product.
    fn row_major_copy<C: Carver>(&self, c: &mut C, op: Op, k: usize) -> Result<Option<C::Slice<T>>> {
        let x_rows = dense::operand_rows(self.shape.0, self.shape.1, op).0;
        Ok(if self.takes_rows(k) { Some(c.slice::<T>(x_rows as usize * k)?) } else { None })
    }
}

crate::inherent_products!(CsrPair);

impl<T: SpmvValue> Products<T> for CsrPair<T> {
    fn rows(&self) -> u64 {
        self.shape.0
    }

    fn cols(&self) -> u64 {
        self.shape.1
    }

    fn workspace_bytes(&self, op: Op, k: usize, packed: bool) -> u64 {
        dense::product_bytes::<T, _>(self.shape, op, k, packed, |m| self.row_major_copy(m, op, k))
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
        let (rows, cols) = self.shape;
        let k = dense::check(rows, cols, op, x, out)?;
        scratch.require(Products::workspace_bytes(self, op, k, x.is_packed() && out.is_packed()))?;
        let side = if op == Op::NoTranspose { &self.a } else { &self.at };
        if side.iter().any(|(_, m)| m.vals().is_none()) {
            return Err(Error::NoValues);
        }
        let this = &*self;
        let (gpu, kernels) = (&this.gpu, &this.k);
        dense::with_packed(gpu, (rows, cols), op, x, beta, out, scratch, |mut d, s| {
            if let Some(mut xr) = this.row_major_copy(s, op, d.k)? {
                // SAFETY: as below; xr holds the operand's rows · k values.
                return unsafe { launch::rows_product(gpu, kernels, side, alpha, beta, &mut d, &mut xr) };
            }
            // SAFETY: the side's panels tile op(A)'s columns in order (CsrPair's construction;
            // checked again by the launch); x and out are packed blocks of k vectors of op(A)'s
            // column and row counts (dense::check); 1 ≤ k ≤ MAX_K.
            unsafe { launch::csr_product(gpu, kernels, side, alpha, beta, &mut d) }
        })
    }
}
