#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough.
pub use gpu_runtime;
pub use gpu_runtime::Gpu;
pub use gpu_spmv::SpmvValue;

mod cusparse;
mod dense;
mod launch;
mod pair;
pub mod serial;

pub use cusparse::CuSparseProducts;
pub use pair::CsrPair;
pub use serial::Csrc;

use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::scratch::Carver;
pub use gpu_runtime::{DenseView, DenseViewMut};
use gpu_runtime::{PtxModule, Scratch, ScratchBuf};
use gpu_transpose::{Algorithm, Transposer};
use sptrans_matrix::{AsDeviceCsrView, DeviceCsrView};

pub use csrc_kernels::{BLOCK_ROWS, MAX_K};

/// The embedded `csrc` PTX module (built from `kernels-rs/csrc`).
pub static MODULE: PtxModule = gpu_runtime::embed_module!("csrc");

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error, wherever it arose.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// From the build's pointers-to-index.
    #[error(transparent)]
    Ptr2Idx(gpu_ptr2idx::Error),
    /// From the build's sort by column.
    #[error(transparent)]
    Segsort(gpu_segsort::Error),
    /// From the transposer (the transpose view of wide matrices, the stored transpose).
    #[error(transparent)]
    Transpose(gpu_transpose::Error),
    /// Host arrays that break the CSRC layout (the constructor's validation).
    #[error("invalid CSRC matrix: {0}")]
    Invalid(String),
    /// A number of vectors outside `1..=MAX_K`.
    #[error("{k} vectors: a product takes 1 to {MAX_K}")]
    BadVectorCount {
        /// The number given.
        k: usize,
    },
    /// A dense block of the wrong length.
    #[error("{what} has {got} entries, expected {expected} (k vectors of the operand's length)")]
    LengthMismatch {
        /// `x` or `out`.
        what: &'static str,
        /// Entries required: `k` times the operand's length.
        expected: u64,
        /// Entries given.
        got: u64,
    },
    /// A pattern matrix (no values) cannot be multiplied.
    #[error("the matrix has no values (a pattern matrix)")]
    NoValues,
    /// cuSPARSE could not be loaded (the baseline).
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
gpu_runtime::lift_errors!(gpu_ptr2idx => Ptr2Idx, gpu_segsort => Segsort, gpu_transpose => Transpose);

pub(crate) fn invalid(reason: String) -> Error {
    Error::Invalid(reason)
}

/// Which product: `A · X` or `Aᵀ · U`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `Y = alpha · A · X + beta · Y`.
    NoTranspose,
    /// `V = alpha · Aᵀ · U + beta · V`.
    Transpose,
}

impl Op {
    /// The other one.
    pub fn flip(self) -> Op {
        match self {
            Op::NoTranspose => Op::Transpose,
            Op::Transpose => Op::NoTranspose,
        }
    }
}

/// Sparse products on the GPU with `k` dense vectors: what the truncated SVD and the benchmark
/// drive, implemented by [`DeviceCsrc`], the deterministic [`CsrPair`] and the cuSPARSE baseline
/// [`CuSparseProducts`]. Each type has the same methods inherent (no import needed); the trait
/// is for code generic over them.
///
/// The dense blocks are [`DenseView`]s: column-major, `k = x.cols()` vectors (`1..=MAX_K`) of
/// the operand's length, any leading dimension (strided blocks are packed through the scratch:
/// see [`Products::workspace_bytes`]).
pub trait Products<T: SpmvValue> {
    /// Rows of `A`.
    fn rows(&self) -> u64;
    /// Columns of `A`.
    fn cols(&self) -> u64;
    /// Device bytes one product `op` with `k` vectors needs beyond its operands: the product's
    /// own (the transposed lane-group product's `cols · k` accumulators), plus, unless
    /// `packed` (both blocks with `ld == rows`), room to pack strided blocks. The same for
    /// every call of that shape: a plan given this much never allocates.
    fn workspace_bytes(&self, op: Op, k: usize, packed: bool) -> u64;
    /// The plan's GPU handle.
    fn gpu(&self) -> &Gpu;
    /// The plan's own scratch (what [`Products::multiply`] runs on).
    #[doc(hidden)]
    fn own_scratch(&mut self) -> &mut ScratchBuf;
    /// Allocates the plan's own scratch for products up to this shape now, so that
    /// [`Products::multiply`] allocates nothing afterwards.
    ///
    /// # Errors
    /// Out of memory.
    fn reserve(&mut self, op: Op, k: usize, packed: bool) -> Result<()> {
        let (bytes, gpu) = (self.workspace_bytes(op, k, packed), self.gpu().clone());
        Ok(self.own_scratch().reserve(&gpu, bytes)?)
    }
    /// `out = alpha · op(A) · x + beta · out` on the plan's own scratch (grown when a larger
    /// shape comes; [`Products::reserve`] sizes it first); `out` is not read when `beta == 0`.
    /// Enqueued on the plan's stream without synchronizing.
    ///
    /// # Errors
    /// [`Error::BadVectorCount`], [`Error::LengthMismatch`] (operand rows, vector counts);
    /// launch and cuSPARSE errors; out of memory.
    fn multiply(&mut self, op: Op, alpha: T, x: &DenseView<'_, T>, beta: T, out: &mut DenseViewMut<'_, T>) -> Result<()> {
        let k = dense::check(self.rows(), self.cols(), op, x, out)?;
        let (bytes, gpu) = (self.workspace_bytes(op, k, x.is_packed() && out.is_packed()), self.gpu().clone());
        ScratchBuf::lend(self, |p| p.own_scratch(), &gpu, bytes, |c, s| c.multiply_with(op, alpha, x, beta, out, s))
    }
    /// [`Products::multiply`] on caller-lent scratch of at least [`Products::workspace_bytes`].
    ///
    /// # Errors
    /// As [`Products::multiply`], and `ScratchTooSmall`.
    fn multiply_with(
        &mut self,
        op: Op,
        alpha: T,
        x: &DenseView<'_, T>,
        beta: T,
        out: &mut DenseViewMut<'_, T>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()>;
}

/// The methods of [`Products`] made inherent on a type, forwarding to its implementation.
macro_rules! inherent_products {
    ($ty:ident) => {
        impl<T: SpmvValue> $ty<T> {
            /// Rows of `A`.
            pub fn rows(&self) -> u64 {
                <Self as $crate::Products<T>>::rows(self)
            }

            /// Columns of `A`.
            pub fn cols(&self) -> u64 {
                <Self as $crate::Products<T>>::cols(self)
            }

            /// See [`Products::workspace_bytes`]($crate::Products::workspace_bytes).
            pub fn workspace_bytes(&self, op: $crate::Op, k: usize, packed: bool) -> u64 {
                <Self as $crate::Products<T>>::workspace_bytes(self, op, k, packed)
            }

            /// See [`Products::reserve`]($crate::Products::reserve).
            ///
            /// # Errors
            /// Out of memory.
            pub fn reserve(&mut self, op: $crate::Op, k: usize, packed: bool) -> $crate::Result<()> {
                <Self as $crate::Products<T>>::reserve(self, op, k, packed)
            }

            /// `out = alpha · op(A) · x + beta · out`: see [`Products::multiply`]($crate::Products::multiply).
            ///
            /// # Errors
            /// As [`Products::multiply`]($crate::Products::multiply).
            pub fn multiply(
                &mut self,
                op: $crate::Op,
                alpha: T,
                x: &gpu_runtime::DenseView<'_, T>,
                beta: T,
                out: &mut gpu_runtime::DenseViewMut<'_, T>,
            ) -> $crate::Result<()> {
                <Self as $crate::Products<T>>::multiply(self, op, alpha, x, beta, out)
            }

            /// On lent scratch: see [`Products::multiply_with`]($crate::Products::multiply_with).
            ///
            /// # Errors
            /// As [`Products::multiply_with`]($crate::Products::multiply_with).
            pub fn multiply_with(
                &mut self,
                op: $crate::Op,
                alpha: T,
                x: &gpu_runtime::DenseView<'_, T>,
                beta: T,
                out: &mut gpu_runtime::DenseViewMut<'_, T>,
                scratch: &mut gpu_runtime::Scratch<'_>,
            ) -> $crate::Result<()> {
                <Self as $crate::Products<T>>::multiply_with(self, op, alpha, x, beta, out, scratch)
            }
        }
    };
}
pub(crate) use inherent_products;

/// How the transposed product of a [`DeviceCsrc`] walks the nonzeros of a row block (sorted by
/// column). Both give the same sums up to rounding (neither is bit-reproducible).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Walk {
    /// The faster on the H100 benchmark for the shape: [`Walk::WarpSegments`] for one vector,
    /// and for up to 4 when 2 fit in shared memory; [`Walk::LaneGroups`] otherwise (in shared
    /// memory when at least 4 vectors fit and take at most 2 passes, else into the scratch).
    #[default]
    Auto,
    /// The paper's: each lane takes a nonzero, lanes with the same column are summed by a warp
    /// segmented sum (shuffles, once per vector) and the first lane of each run adds the sum
    /// atomically.
    WarpSegments,
    /// A group of lanes per contiguous chunk of the row block, one lane per vector (`k` rounded
    /// up to a power of two): each run of equal columns is summed in a register; with the result
    /// in shared memory (in passes of a power of two of vectors), only runs shared with a
    /// neighbouring chunk need an atomic; otherwise the atomics go to a row-major scratch of
    /// `cols · k` values kept by the [`DeviceCsrc`] (allocated at the first such product).
    LaneGroups,
}

/// Nonzeros of a piece of the direct product at least ([`Split`]): 64 a thread of a block of
/// 256.
pub const PIECE_NNZ: u64 = 16384;

/// How the products of the stored matrix spread its row blocks over blocks of threads
/// ([`DeviceCsrc::set_split`]): the direct product, and the transposed product's global-memory
/// ways (the shared-memory ways take a row block at a time). Both give the same sums up to
/// rounding (neither is bit-reproducible).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Split {
    /// Pieces when the heaviest row block holds more than four pieces' worth (power-law rows:
    /// a row block with hub rows would keep one block of threads busy long after the others),
    /// else one block a row block. A starting rule, not yet fitted to measured times.
    #[default]
    Auto,
    /// One block of threads a row block, `Y` written once (the paper's).
    Never,
    /// Pieces always: for the direct product `Y = beta · Y` first, then each piece of at most a
    /// piece's size ([`pieces`]) adds its partial rows by global atomics; the transposed
    /// product's global ways take a piece per block of threads (they add atomically anyway).
    Always,
}

/// The direct product's pieces of a CSRC whose block pointer is `p` (`blocks + 1` entries):
/// the piece size is [`PIECE_NNZ`] or the mean row block's nonzeros if more; each nonempty row
/// block is cut into `⌈nnz / size⌉` pieces of nearly equal nonzeros. Returns the pieces' bounds
/// (their first nonzeros, then the last row block's end: they tile the nonzeros), each piece's
/// row block, and whether the heaviest row block holds more than four pieces' size (what
/// [`Split::Auto`] splits for).
///
/// ```
/// // Row blocks of 10, 0, 70 000 and 5 nonzeros, then four empty ones: the third is cut in 5
/// // pieces of 14 000 (a piece holds at most PIECE_NNZ = 16 384 here), the empty ones in none.
/// let (bounds, block_of, heavy) = gpu_csrc::pieces(&[0, 10, 10, 70_010, 70_015, 70_015, 70_015, 70_015, 70_015]);
/// assert_eq!(bounds, vec![0, 10, 14_010, 28_010, 42_010, 56_010, 70_010, 70_015]);
/// assert_eq!(block_of, vec![0, 2, 2, 2, 2, 2, 3]);
/// assert!(heavy);
/// ```
pub fn pieces(p: &[u32]) -> (Vec<u32>, Vec<u32>, bool) {
    let blocks = p.len().saturating_sub(1);
    let total = p.last().map_or(0, |&e| e as u64);
    let size = PIECE_NNZ.max(total.div_ceil(blocks.max(1) as u64));
    let (mut bounds, mut block_of) = (Vec::new(), Vec::new());
    let mut heaviest = 0;
    for g in 0..blocks {
        let (h0, h1) = (p[g] as u64, p[g + 1] as u64);
        let nnz = h1.saturating_sub(h0);
        heaviest = heaviest.max(nnz);
        let parts = nnz.div_ceil(size);
        for q in 0..parts {
            bounds.push((h0 + q * nnz / parts) as u32);
            block_of.push(g as u32);
        }
    }
    bounds.push(total as u32);
    (bounds, block_of, heaviest > 4 * size)
}

/// A matrix in CSRC on the GPU (see [`Csrc`]), with its products ([`Products`]). A matrix with
/// more columns than rows is stored as the CSRC of its transpose (the paper's transpose view,
/// [`DeviceCsrc::is_transpose_view`]), so its row blocks are always the long dimension; the
/// products swap kernels accordingly.
///
/// The direct product adds in shared memory and the transposed one in global memory by atomics:
/// neither is bit-reproducible run to run ([`CsrPair`] is).
pub struct DeviceCsrc<T: SpmvValue> {
    gpu: Gpu,
    k: launch::Kernels<T>,
    /// Shape of `A`.
    rows: u64,
    cols: u64,
    /// The stored matrix is `Aᵀ`.
    transposed: bool,
    nnz: u64,
    /// Shared-memory bytes the transposed product may use (0: global atomics only).
    atu_budget: u32,
    /// How the transposed product walks a row block.
    walk: Walk,
    /// How the direct product spreads its row blocks.
    split: Split,
    /// The direct product's pieces ([`pieces`]): bounds, row blocks, and whether a row block is
    /// heavy.
    pieces: u64,
    piece_bounds: CudaSlice<u32>,
    piece_block: CudaSlice<u32>,
    heavy: bool,
    /// The plan's own scratch (the global lane-group product's accumulators, packed operands).
    own: ScratchBuf,
    p: CudaSlice<u32>,
    r: CudaSlice<u8>,
    j: CudaSlice<u32>,
    v: CudaSlice<T>,
}

impl<T: SpmvValue> DeviceCsrc<T> {
    /// Builds the CSRC of `a` (or, when `a` has more columns than rows, of its transpose, made
    /// by `gpu-transpose`) on the GPU: block pointers gathered from the row pointer, a stable
    /// segmented sort of (column, position) by row block (`gpu-segsort`), then a gather of the
    /// rows (`gpu-ptr2idx`) and values.
    ///
    /// # Errors
    /// [`Error::NoValues`] for a pattern matrix; out of memory, launch errors.
    pub fn from_csr(gpu: &Gpu, a: &impl AsDeviceCsrView<T>) -> Result<Self> {
        let a = a.csr_view();
        let k = launch::Kernels::<T>::load(gpu)?;
        if a.vals().is_none() {
            return Err(Error::NoValues);
        }
        if a.cols() > a.rows() {
            let at = Transposer::new(gpu)?.transpose_new(Algorithm::Auto, &a)?;
            return Self::build(gpu, k, &at.view(), true);
        }
        Self::build(gpu, k, &a, false)
    }

    fn build(gpu: &Gpu, k: launch::Kernels<T>, a: &DeviceCsrView<'_, T>, transposed: bool) -> Result<Self> {
        let vals = a.vals().ok_or(Error::NoValues)?;
        let (rows, nnz) = (a.rows(), a.nnz());
        let blocks = csrc_kernels::row_blocks(rows);
        let mut p = gpu.alloc::<u32>(blocks as usize + 1)?;
        launch::block_ptr(gpu, &k, a.ptr(), &mut p)?;
        let n = nnz.max(1) as usize;
        let mut j = gpu.alloc::<u32>(n)?;
        let (mut r, mut v) = (gpu.alloc::<u8>(n)?, gpu.alloc::<T>(n)?);
        if nnz > 0 {
            gpu.stream().memcpy_dtod(a.idx(), &mut j).map_err(gpu_runtime::Error::driver("copying the column indices"))?;
            let mut perm = gpu.alloc::<u32>(n)?;
            gpu_runtime::selftest::iota_u32(gpu, &mut perm, 0)?;
            gpu_segsort::Segsort::new(gpu)?.sort_segments(&p, &mut j, &mut perm)?;
            let mut row_of = gpu.alloc::<u32>(n)?;
            gpu_ptr2idx::Ptr2Idx::new(gpu)?.run(a.ptr(), &mut row_of)?;
            // SAFETY: perm a permutation of 0..nnz (an iota sorted with the columns); every array
            // holds nnz.
            unsafe { launch::gather(gpu, &k, &perm, &row_of, vals, &mut r, &mut v)? };
        }
        let (rows, cols) = if transposed { (a.cols(), a.rows()) } else { (a.rows(), a.cols()) };
        let atu_budget = k.shared_budget;
        // The direct product's pieces, from the block pointer read back (blocks + 1 words).
        let (bounds, block_of, heavy) = pieces(&gpu.download(&p)?);
        let pieces = block_of.len() as u64;
        // (A matrix without nonzeros has no pieces: one unused word.)
        let (piece_bounds, piece_block) = (gpu.upload(&bounds)?, gpu.upload(if block_of.is_empty() { &[0] } else { &block_of[..] })?);
        Ok(Self {
            gpu: gpu.clone(),
            k,
            rows,
            cols,
            transposed,
            nnz,
            atu_budget,
            walk: Walk::Auto,
            split: Split::Auto,
            pieces,
            piece_bounds,
            piece_block,
            heavy,
            own: ScratchBuf::default(),
            p,
            r,
            j,
            v,
        })
    }

    /// Nonzeros.
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// Runs this plan's later work on `gpu`'s stream (a handle on the same context, such as
    /// [`Gpu::with_stream`] of the one it was built with): for callers whose current stream
    /// changes between products. When the stream differs, the new one first waits (on the
    /// device, through an event; the host does not block) for the work already enqueued on the
    /// old one, so the plan's data and scratch are never used out of order.
    ///
    /// # Errors
    /// `gpu_runtime::Error::ForeignStream` when `gpu` belongs to another context; driver errors
    /// recording or waiting for the event.
    pub fn set_gpu(&mut self, gpu: &Gpu) -> Result<()> {
        gpu.follow(&self.gpu)?;
        self.gpu = gpu.clone();
        Ok(())
    }

    /// Caps the shared memory of the transposed product (of the stored matrix): when one column
    /// of the result (`cols` values of the stored matrix, plus 256 staged rows) fits in `bytes`,
    /// each block accumulates the result in shared memory and adds it to global memory once,
    /// in passes of as many vectors as fit; otherwise every run of equal columns is one global
    /// atomic. The default, and the most, is what a block may opt in to (227 KiB on an H100: one
    /// block of 1024 threads per SM, the fewest passes; on the H100 it was as fast as half that
    /// with two blocks per SM, or up to 1.3× faster where it saved passes: BENCHMARKS.md); 0
    /// forces the global kernel. For tests and tuning.
    pub fn set_transposed_shared_bytes(&mut self, bytes: u32) {
        self.atu_budget = bytes.min(self.k.shared_budget);
    }

    /// The shared-memory cap of the transposed product ([`DeviceCsrc::set_transposed_shared_bytes`]).
    pub fn transposed_shared_bytes(&self) -> u32 {
        self.atu_budget
    }

    /// Chooses how the transposed product (of the stored matrix) walks a row block ([`Walk`]);
    /// the default is [`Walk::Auto`]. For tests and tuning.
    pub fn set_transposed_walk(&mut self, walk: Walk) {
        self.walk = walk;
    }

    /// How the transposed product walks a row block ([`DeviceCsrc::set_transposed_walk`]).
    pub fn transposed_walk(&self) -> Walk {
        self.walk
    }

    /// Chooses how the products (of the stored matrix) spread its row blocks over blocks of
    /// threads ([`Split`]); the default is [`Split::Auto`]. For tests and tuning.
    pub fn set_split(&mut self, split: Split) {
        self.split = split;
    }

    /// Whether the products run by pieces ([`DeviceCsrc::set_split`], and for [`Split::Auto`]
    /// whether a row block is heavy).
    pub fn by_pieces(&self) -> bool {
        match self.split {
            Split::Auto => self.heavy,
            Split::Never => false,
            Split::Always => true,
        }
    }

    /// Whether the stored matrix is `Aᵀ` (`A` has more columns than rows).
    pub fn is_transpose_view(&self) -> bool {
        self.transposed
    }

    /// Shape of the stored matrix (`A`'s, or `Aᵀ`'s for a transpose view).
    fn stored_shape(&self) -> (u64, u64) {
        if self.transposed {
            (self.cols, self.rows)
        } else {
            (self.rows, self.cols)
        }
    }

    /// Device bytes of the four arrays ([`serial::csrc_bytes`]); CSR takes `4 (rows + 1) + nnz
    /// (4 + value bytes)`.
    pub fn footprint_bytes(&self) -> u64 {
        serial::csrc_bytes(self.stored_shape().0, self.nnz, T::BYTES as u64)
    }

    /// Copies the stored matrix (of `A`, or of `Aᵀ` for a transpose view) to the host type,
    /// validated.
    ///
    /// # Errors
    /// Driver errors; [`Error::Invalid`] if the arrays broke the layout (a bug).
    pub fn download(&self) -> Result<Csrc<T>> {
        let n = self.nnz as usize;
        let (sr, sc) = self.stored_shape();
        let (mut r, mut j, mut v) = (self.gpu.download(&self.r)?, self.gpu.download(&self.j)?, self.gpu.download(&self.v)?);
        // Device arrays hold at least one entry: an empty matrix's are buffers of one.
        r.truncate(n);
        j.truncate(n);
        v.truncate(n);
        Csrc::try_new(sr, sc, self.gpu.download(&self.p)?, r, j, v)
    }
}

impl<T: SpmvValue> DeviceCsrc<T> {
    /// The transposed-product plan of the stored matrix for `k` vectors, and whether it needs
    /// the `cols · k` accumulators of the scratch.
    fn atu(&self, op: Op, k: usize) -> (launch::AtuPlan, bool) {
        let sc = self.stored_shape().1;
        let stored_op = if self.transposed { op.flip() } else { op };
        let plan = launch::atu_plan(sc, k as u32, T::BYTES as u64, self.atu_budget, self.walk);
        (plan, stored_op == Op::Transpose && plan == launch::AtuPlan::GlobalGrouped && sc > 0)
    }
}

impl<T: SpmvValue> DeviceCsrc<T> {
    /// The product's own scratch after the packing: the grouped transposed product's
    /// accumulator (the stored matrix's columns × `k` values), when its plan takes one. The one
    /// description, measured by `workspace_bytes` and carved by the product.
    fn accumulator<C: Carver>(&self, c: &mut C, op: Op, k: usize) -> Result<Option<C::Slice<T>>> {
        Ok(if self.atu(op, k).1 { Some(c.slice::<T>(self.stored_shape().1 as usize * k)?) } else { None })
    }
}

inherent_products!(DeviceCsrc);

impl<T: SpmvValue> Products<T> for DeviceCsrc<T> {
    fn rows(&self) -> u64 {
        self.rows
    }

    fn cols(&self) -> u64 {
        self.cols
    }

    fn workspace_bytes(&self, op: Op, k: usize, packed: bool) -> u64 {
        dense::product_bytes::<T, _>((self.rows, self.cols), op, k, packed, |m| self.accumulator(m, op, k))
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
        let k = dense::check(self.rows, self.cols, op, x, out)?;
        scratch.require(Products::workspace_bytes(self, op, k, x.is_packed() && out.is_packed()))?;
        let gpu = self.gpu.clone();
        dense::with_packed(&gpu, (self.rows, self.cols), op, x, beta, out, scratch, |d, s| {
            let (sr, sc) = self.stored_shape();
            let stored_op = if self.transposed { op.flip() } else { op };
            let (plan, _) = self.atu(op, d.k);
            let mut acc = self.accumulator(s, op, d.k)?;
            if let Some(w) = acc.as_mut() {
                gpu.memset_bytes(w, 0)?;
            }
            let pieces = self.by_pieces().then_some((self.pieces, &self.piece_bounds, &self.piece_block));
            let stored = launch::Stored { p: &self.p, r: &self.r, j: &self.j, v: &self.v, pieces };
            let mut d = d;
            // SAFETY: the arrays of a CSRC built from a valid CSR of sr × sc, its pieces from its
            // block pointer; x and out are packed blocks of k vectors of op(A)'s lengths
            // (dense::check), which are the stored matrix's for stored_op; 1 ≤ k ≤ MAX_K; the plan
            // is `atu`'s for sc and k; acc holds sc · k zeros when used.
            unsafe { launch::stored_product(&gpu, &self.k, &stored, (sr, sc), stored_op, plan, alpha, beta, &mut d, acc.as_mut()) }
        })
    }
}
