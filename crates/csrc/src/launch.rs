//! The only `unsafe` launches of the csrc kernels and the only raw device addresses of the
//! crate, with their grid sizing: the typed entry points ([`stored_product`], [`csr_product`],
//! [`rows_product`], [`scale_dense`], [`block_ptr`], [`gather`]) fill each kernel's argument
//! struct (`csrc_kernels`) from the arrays they borrow, holding their guards until the launches
//! below them are enqueued.
use csrc_kernels::{BlockPtrArgs, CsrArgs, CsrcArgs, FinishArgs, GatherArgs, ScaleArgs, ToRowsArgs, BLOCK_ROWS, NT};
use gpu_runtime::cudarc::driver::{CudaSlice, LaunchConfig, SyncOnDrop};
use gpu_runtime::scratch::ScratchSlice;
use gpu_runtime::{arg_ptr, arg_ptr_mut, arg_ptr_mut_or_null, arg_ptr_or_null, grid_1d, DenseViewMut, DeviceView, Gpu, KernelOf};
use sptrans_matrix::device::DeviceCsr;

use crate::Result;
use gpu_spmv::SpmvValue;

/// The kernels of one value type, each with its argument struct (checked against the PTX at
/// load).
pub(crate) struct Kernels<T: SpmvValue> {
    pub block_ptr: KernelOf<BlockPtrArgs>,
    pub gather: KernelOf<GatherArgs<T>>,
    pub ax: KernelOf<CsrcArgs<T>>,
    pub ax_pieces: KernelOf<CsrcArgs<T>>,
    pub scale: KernelOf<ScaleArgs<T>>,
    pub atu: KernelOf<CsrcArgs<T>>,
    pub atu_shared: KernelOf<CsrcArgs<T>>,
    pub atu_group: KernelOf<CsrcArgs<T>>,
    pub atu_finish: KernelOf<FinishArgs<T>>,
    pub atu_group_shared: KernelOf<CsrcArgs<T>>,
    /// Dynamic shared memory `atu_shared` may use: what a block may opt in to (227 KiB on an
    /// H100).
    pub shared_budget: u32,
    pub csr_thread: KernelOf<CsrArgs<T>>,
    pub csr_warp: KernelOf<CsrArgs<T>>,
    pub csr_block: KernelOf<CsrArgs<T>>,
    /// `csrc_to_rows_T`.
    pub to_rows: KernelOf<ToRowsArgs<T>>,
    /// `csrc_rows{4,8,16}_T`.
    pub rows: [KernelOf<CsrArgs<T>>; 3],
}

impl<T: SpmvValue> Kernels<T> {
    pub fn load(gpu: &Gpu) -> Result<Self> {
        let name = |phase: &str| format!("csrc_{phase}_{}", T::NAME);
        // The direct product's shared memory is at most 16 vectors of f64 for 256 rows: 32 KiB,
        // under the default 48 KiB; so is the global transposed product's staging of U.
        let props = gpu.props();
        let shared_budget = props.shared_per_block_optin.max(props.shared_per_block);
        let (atu_shared, atu_group_shared): (KernelOf<CsrcArgs<T>>, KernelOf<CsrcArgs<T>>) =
            (gpu.kernel_of(&crate::MODULE, &name("atu_shared"))?, gpu.kernel_of(&crate::MODULE, &name("atu_group_shared"))?);
        if shared_budget > props.shared_per_block {
            atu_shared.kernel().set_max_dynamic_shared(shared_budget)?;
            atu_group_shared.kernel().set_max_dynamic_shared(shared_budget)?;
        }
        Ok(Self {
            atu_shared,
            atu_group_shared,
            atu_group: gpu.kernel_of(&crate::MODULE, &name("atu_group"))?,
            atu_finish: gpu.kernel_of(&crate::MODULE, &name("atu_finish"))?,
            shared_budget,
            block_ptr: gpu.kernel_of(&crate::MODULE, "csrc_block_ptr")?,
            gather: gpu.kernel_of(&crate::MODULE, &name("gather"))?,
            ax: gpu.kernel_of(&crate::MODULE, &name("ax"))?,
            ax_pieces: gpu.kernel_of(&crate::MODULE, &name("ax_pieces"))?,
            scale: gpu.kernel_of(&crate::MODULE, &name("scale"))?,
            atu: gpu.kernel_of(&crate::MODULE, &name("atu"))?,
            csr_thread: gpu.kernel_of(&crate::MODULE, &name("csr_thread"))?,
            csr_warp: gpu.kernel_of(&crate::MODULE, &name("csr_warp"))?,
            csr_block: gpu.kernel_of(&crate::MODULE, &name("csr_block"))?,
            to_rows: gpu.kernel_of(&crate::MODULE, &name("to_rows"))?,
            rows: [
                gpu.kernel_of(&crate::MODULE, &name("rows4"))?,
                gpu.kernel_of(&crate::MODULE, &name("rows8"))?,
                gpu.kernel_of(&crate::MODULE, &name("rows16"))?,
            ],
        })
    }
}

/// A grid-stride launch over `n` items, a few per thread.
pub(crate) fn grid(gpu: &Gpu, n: u64) -> LaunchConfig {
    grid_1d(n, NT, NT as u64 * 4, gpu.props().sm_count.max(1) * 64)
}

/// One block per row block (the grid strides past 2^31 − 1 blocks).
pub(crate) fn per_block(blocks: u64) -> LaunchConfig {
    grid_1d(blocks, NT, 1, i32::MAX as u32)
}

/// [`per_block`] with `k · BLOCK_ROWS` values of `T` of dynamic shared memory: a row block's
/// partial rows (the direct products) or its staged `U` rows (the global transposed ones).
fn per_block_rows<T: SpmvValue>(blocks: u64, k: u32) -> LaunchConfig {
    let mut cfg = per_block(blocks);
    cfg.shared_mem_bytes = k * BLOCK_ROWS * T::BYTES as u32;
    cfg
}

/// The null pointer a kernel reads as "no such array".
fn null<P>() -> *const P {
    std::ptr::null()
}

/// `Y = alpha · A · X + beta · Y` on the stored CSRC (`csrc_ax_T`; `a` by row blocks).
///
/// # Safety
/// [`CsrcArgs`] by row blocks (`bounds` the block pointer of `pieces` row blocks) of a valid
/// CSRC; `x` holds `cols · k` values and `out` `rows · k`; `1 ≤ k ≤ MAX_K`.
unsafe fn ax<T: SpmvValue>(gpu: &Gpu, kn: &Kernels<T>, a: CsrcArgs<T>) -> Result<()> {
    if a.pieces == 0 {
        return Ok(());
    }
    let cfg = per_block_rows::<T>(a.pieces, a.k);
    // SAFETY: csrc_ax_T(CsrcArgs): the caller's valid CSRC and dense blocks; dynamic shared
    // memory of k · BLOCK_ROWS values (allowed at load).
    unsafe { kn.ax.launch(gpu.stream(), cfg, a) }?;
    Ok(())
}

/// `Y = alpha · A · X + beta · Y` on the stored CSRC by pieces of row blocks: `Y = beta · Y`,
/// then each piece adds its partial rows atomically (`csrc_ax_pieces`).
///
/// # Safety
/// As [`ax`], with `a`'s `bounds`, `block_of` and `pieces` made by [`crate::pieces`] from this
/// CSRC's block pointer.
unsafe fn ax_pieces<T: SpmvValue>(gpu: &Gpu, kn: &Kernels<T>, a: CsrcArgs<T>) -> Result<()> {
    // SAFETY: out holds rows · k values.
    unsafe { scale(gpu, kn, a.rows * a.k as u64, a.beta, a.out)? };
    if a.pieces == 0 {
        return Ok(());
    }
    let cfg = per_block_rows::<T>(a.pieces, a.k);
    // SAFETY: csrc_ax_pieces_T(CsrcArgs): the caller's valid CSRC, its pieces and dense blocks;
    // dynamic shared memory of k · BLOCK_ROWS values (as the direct product's).
    unsafe { kn.ax_pieces.launch(gpu.stream(), cfg, a) }?;
    Ok(())
}

/// `out = beta · out` over `n` values (`out = 0` when `beta == 0`, not read).
///
/// # Safety
/// `out` holds `n` values of `T`.
unsafe fn scale<T: SpmvValue>(gpu: &Gpu, kn: &Kernels<T>, n: u64, beta: T, out: *mut T) -> Result<()> {
    if n > 0 {
        // SAFETY: csrc_scale_T(ScaleArgs): out holds n values (the caller's contract).
        unsafe { kn.scale.launch(gpu.stream(), grid(gpu, n), ScaleArgs { out, n, beta }) }?;
    }
    Ok(())
}

/// Threads per block of the shared-memory transposed product.
const NT_SHARED: u32 = 512;

/// Shared memory one vector of the shared-memory transposed products takes: its `cols`
/// accumulators and `BLOCK_ROWS` staged rows of `U`.
fn shared_per_vector(cols: u64, value_bytes: u64) -> u64 {
    (cols + BLOCK_ROWS as u64) * value_bytes
}

/// Vectors (at most `k`) whose shared memory fits `budget` bytes.
fn shared_fit(cols: u64, k: u32, value_bytes: u64, budget: u32) -> u32 {
    (budget as u64 / shared_per_vector(cols, value_bytes)).min(k as u64) as u32
}

/// How the transposed product runs for `cols` columns and `k` vectors of `value_bytes`: `Some(kc)`
/// for the shared-memory kernel, `kc` vectors per pass (passes of equal size), or `None` for the
/// global-atomic kernel (one row of `V` does not fit the budget).
pub(crate) fn atu_passes(cols: u64, k: u32, value_bytes: u64, budget: u32) -> Option<u32> {
    let fit = shared_fit(cols, k, value_bytes, budget);
    // One vector per pass re-reads the matrix per vector: on the H100 (with 113 KiB) that lost
    // to the global kernel from 4 vectors on (12471 columns of f64: 0.87 vs 0.83 ms at k = 4,
    // 3.45 vs 2.76 ms at k = 16) and won at 1 and 2 (0.22 vs 0.31 ms, 0.44 vs 0.53 ms); 2 per
    // pass (12471 columns in 227 KiB) won at every k (2.63 vs 2.80 ms at k = 16), 3 per pass
    // (4284 columns) too (1.10 vs 1.44 ms at k = 16).
    if fit == 0 || (fit == 1 && k > 2) {
        return None;
    }
    let passes = k.div_ceil(fit);
    Some(k.div_ceil(passes))
}

/// How one transposed product runs ([`atu_plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtuPlan {
    /// `V` in shared memory, in passes of `kp` vectors, by lane groups or warp segments.
    Shared { kp: u32, grouped: bool },
    /// Global atomics into `V`, by warp segments (the paper's kernel).
    Global,
    /// Global atomics by lane groups into a row-major scratch of `cols · k` values, then
    /// `V = alpha · W + beta · V`.
    GlobalGrouped,
}

/// The plan for `k` vectors of `value_bytes` over `cols` columns with `budget` bytes of shared
/// memory. Warp segments: [`atu_passes`] (shared when it fits, else global). Lane groups: shared
/// in passes of the largest power of two of vectors that fits (no idle lanes), else the
/// row-major scratch. `Walk::Auto` picks by the H100 benchmark (f64, k = 1 … 16, BENCHMARKS.md):
///
/// - one vector: warp segments;
/// - lane groups in shared memory when at least 4 vectors fit and they take at most 2 passes
///   (1M × 4284 at k = 4: 0.23 against 0.27 ms by segments; 1M × 64 at k = 16: 0.30 against
///   0.45 ms by the scratch);
/// - warp segments in shared memory for up to 4 vectors when at least 2 fit (1M × 4284 at k = 2:
///   0.14 against 0.19 ms by groups; 12,471 columns at k = 4: 0.66 against 0.73 ms by the
///   scratch);
/// - otherwise lane groups into the row-major scratch (100k columns at k = 16: 0.75 against
///   2.05 ms by segments with global atomics; 12,471 columns at k = 16: 1.57 against 2.62 ms by
///   segments in 8 passes; 4284 columns at k = 16: 0.78 against 0.88 ms by groups in 4 passes).
pub(crate) fn atu_plan(cols: u64, k: u32, value_bytes: u64, budget: u32, walk: crate::Walk) -> AtuPlan {
    let fit = shared_fit(cols, k, value_bytes, budget);
    let segments = || match atu_passes(cols, k, value_bytes, budget) {
        Some(kp) => AtuPlan::Shared { kp, grouped: false },
        None => AtuPlan::Global,
    };
    let groups = || if fit == 0 { AtuPlan::GlobalGrouped } else { AtuPlan::Shared { kp: 1 << fit.ilog2(), grouped: true } };
    match walk {
        crate::Walk::WarpSegments => segments(),
        crate::Walk::LaneGroups => groups(),
        crate::Walk::Auto if k == 1 => segments(),
        crate::Walk::Auto if fit >= 4 && k.div_ceil(1 << fit.ilog2()) <= 2 => groups(),
        crate::Walk::Auto if fit >= 2 && k <= 4 => segments(),
        crate::Walk::Auto => AtuPlan::GlobalGrouped,
    }
}

/// `V = alpha · Aᵀ · U + beta · V` on the stored CSRC by `plan` ([`atu_plan`]); `a.x` is `U`,
/// `a.out` is `V`.
///
/// # Safety
/// [`CsrcArgs`] by row blocks of a valid CSRC, with `x` holding `rows · k` values and `out`
/// `cols · k`; `plan` made by [`atu_plan`] for these `cols` and `k` with a budget within the
/// one allowed at load; `scratch` holding `cols · k` zeros for [`AtuPlan::GlobalGrouped`];
/// `pieces` (count, bounds, row blocks) made by [`crate::pieces`] from this CSRC's block
/// pointer, for the global ways (the shared-memory ways take a row block at a time).
unsafe fn atu<T: SpmvValue>(gpu: &Gpu, kn: &Kernels<T>, plan: AtuPlan, a: CsrcArgs<T>, scratch: *mut T, pieces: Option<Pieces>) -> Result<()> {
    let (rows, cols, k) = (a.rows, a.cols, a.k);
    let n = cols * k as u64;
    let blocks = a.pieces;
    // The global ways by pieces when given, else a piece per row block (the block pointer as
    // bounds, no row-block list).
    let by_pieces = match pieces {
        Some((pieces, bounds, block_of)) => CsrcArgs { pieces, bounds, block_of, ..a },
        None => a,
    };
    if plan == AtuPlan::GlobalGrouped && by_pieces.pieces > 0 && n > 0 {
        let cfg = per_block_rows::<T>(by_pieces.pieces, k);
        // SAFETY: csrc_atu_group_T(CsrcArgs, out the scratch W): the caller's valid CSRC, its
        // pieces (or row blocks) and dense blocks, scratch of cols · k values; blocks of NT
        // threads (a multiple of 16); dynamic shared memory of BLOCK_ROWS · k values (at most
        // 32 KiB).
        unsafe { kn.atu_group.launch(gpu.stream(), cfg, CsrcArgs { out: scratch, ..by_pieces }) }?;
        let finish = FinishArgs { w: scratch.cast_const(), out: a.out, cols, k, alpha: a.alpha, beta: a.beta };
        // SAFETY: csrc_atu_finish_T(FinishArgs): both hold cols · k values.
        unsafe { kn.atu_finish.launch(gpu.stream(), grid(gpu, n), finish) }?;
        return Ok(());
    }
    // SAFETY: out holds cols · k = n values.
    unsafe { scale(gpu, kn, n, a.beta, a.out)? };
    if blocks == 0 || n == 0 {
        return Ok(());
    }
    let vb = T::BYTES as u64;
    match plan {
        AtuPlan::Shared { kp: kc, grouped } => {
            let mut c0 = 0;
            while c0 < k {
                let kp = kc.min(k - c0);
                let bytes = (shared_per_vector(cols, vb) * kp as u64) as u32;
                let per_sm = (gpu.props().shared_per_sm / (bytes + 1024)).clamp(1, 2048 / NT_SHARED);
                // One block per SM: twice the threads.
                let nt = if per_sm == 1 { 2 * NT_SHARED } else { NT_SHARED };
                let mut cfg = grid_1d(blocks, nt, 1, gpu.props().sm_count.max(1) * per_sm);
                cfg.shared_mem_bytes = bytes;
                // Vectors c0 .. c0 + kp of U (rows each) and of V (cols each).
                let pass =
                    CsrcArgs { x: a.x.wrapping_add((c0 as u64 * rows) as usize), out: a.out.wrapping_add((c0 as u64 * cols) as usize), k: kp, ..a };
                let kernel = if grouped { &kn.atu_group_shared } else { &kn.atu_shared };
                // SAFETY: csrc_atu_shared_T or csrc_atu_group_shared_T(CsrcArgs by row blocks)
                // (blocks of 512 or 1024 threads): the caller's valid CSRC; vectors c0 .. c0 + kp
                // of U and of V lie inside the caller's blocks; dynamic shared memory of (cols +
                // BLOCK_ROWS) · kp values, within the budget allowed at load (the plan's kp fits
                // it).
                unsafe { kernel.launch(gpu.stream(), cfg, pass) }?;
                c0 += kp;
            }
        }
        _ => {
            let cfg = per_block_rows::<T>(by_pieces.pieces, k);
            // SAFETY: csrc_atu_T(CsrcArgs): the caller's valid CSRC, its pieces (or row blocks)
            // and dense blocks; blocks of NT threads (whole warps); dynamic shared memory of
            // BLOCK_ROWS · k values (at most 32 KiB).
            unsafe { kn.atu.launch(gpu.stream(), cfg, by_pieces) }?;
        }
    }
    Ok(())
}

/// Rows at least this long (on average) get a block each in the deterministic CSR product.
pub(crate) const BLOCK_ROW_MIN: u64 = 512;
/// Rows at least this long (on average) and shorter than [`BLOCK_ROW_MIN`] get a warp each; rows
/// shorter, a thread each.
pub(crate) const WARP_ROW_MIN: u64 = 32;

/// Deterministic `Y = alpha · A · X + beta · Y` on a CSR: a thread, a warp or a block per row by
/// the mean row length ([`WARP_ROW_MIN`], [`BLOCK_ROW_MIN`]).
///
/// # Safety
/// [`CsrArgs`] of a valid CSR of `rows × cols` with `nnz` nonzeros; `x` holds `cols · k` values
/// and `y` `rows · k`; `1 ≤ k ≤ MAX_K`.
unsafe fn csr<T: SpmvValue>(gpu: &Gpu, kn: &Kernels<T>, nnz: u64, a: CsrArgs<T>) -> Result<()> {
    let rows = a.rows;
    if rows == 0 {
        return Ok(());
    }
    let (kernel, cfg) = if nnz >= BLOCK_ROW_MIN * rows {
        (&kn.csr_block, per_block(rows))
    } else if nnz >= WARP_ROW_MIN * rows {
        (&kn.csr_warp, grid_1d(rows * 32, NT, NT as u64, i32::MAX as u32))
    } else {
        (&kn.csr_thread, grid(gpu, rows))
    };
    // SAFETY: csrc_csr_{thread,warp,block}_T(CsrArgs): the caller's valid CSR and dense blocks;
    // blocks of NT threads (whole warps, ≤ 1024).
    unsafe { kernel.launch(gpu.stream(), cfg, a) }?;
    Ok(())
}

/// A CSRC's pieces as the kernels read them: (count, bounds, row blocks).
type Pieces = (u64, *const u32, *const u32);

/// A CSRC's device arrays as [`crate::DeviceCsrc`] stores them: the block pointer `p`, the
/// row offsets `r`, the columns `j`, the values `v`, and its pieces (count, bounds, row blocks)
/// when the direct product goes by pieces.
pub(crate) struct Stored<'a, T> {
    pub p: &'a CudaSlice<u32>,
    pub r: &'a CudaSlice<u8>,
    pub j: &'a CudaSlice<u32>,
    pub v: &'a CudaSlice<T>,
    pub pieces: Option<(u64, &'a CudaSlice<u32>, &'a CudaSlice<u32>)>,
}

/// One product on the stored CSRC of `rows × cols` (`op` of the stored matrix): the direct
/// product (by row blocks or by pieces) or the transposed one by `plan`, with `acc` its
/// zeroed row-major scratch of `cols · k` values for [`AtuPlan::GlobalGrouped`].
///
/// # Safety
/// `a` holds the arrays of a valid CSRC of `rows × cols` (a [`crate::DeviceCsrc`]'s, its
/// pieces made by [`crate::pieces`] from its block pointer); `d` packed blocks of `d.k`
/// vectors of op's lengths, `1 ≤ d.k ≤ MAX_K`; `plan` made by [`atu_plan`] for `cols` and `d.k`
/// within the budget allowed at load.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn stored_product<T: SpmvValue>(
    gpu: &Gpu,
    kn: &Kernels<T>,
    a: &Stored<'_, T>,
    (rows, cols): (u64, u64),
    op: crate::Op,
    plan: AtuPlan,
    alpha: T,
    beta: T,
    d: &mut crate::dense::Packed<'_, T>,
    acc: Option<&mut ScratchSlice<'_, T>>,
) -> Result<()> {
    let stream = gpu.stream();
    let ((p, _p), (r, _r), (j, _j), (v, _v)) = (arg_ptr(a.p, stream), arg_ptr(a.r, stream), arg_ptr(a.j, stream), arg_ptr(a.v, stream));
    let ((x, _x), (y, _y)) = (arg_ptr(&d.x, stream), arg_ptr_mut(&mut d.out, stream));
    // The pieces' arrays and their guards (none without pieces: no allocation in the product).
    let (bounds, _b) = arg_ptr_or_null(a.pieces.map(|(_, b, _)| b), stream);
    let (block_of, _o) = arg_ptr_or_null(a.pieces.map(|(_, _, o)| o), stream);
    let pieces: Option<Pieces> = a.pieces.map(|(count, _, _)| (count, bounds, block_of));
    let (sp, _s) = arg_ptr_mut_or_null(acc, stream);
    let args = CsrcArgs::<T> {
        bounds: p,
        block_of: null(),
        r,
        j,
        v,
        x,
        out: y,
        rows,
        cols,
        pieces: csrc_kernels::row_blocks(rows),
        k: d.k as u32,
        alpha,
        beta,
    };
    // SAFETY: the caller's contract, forwarded; every array is guarded until the launches are
    // enqueued.
    unsafe {
        match (op, pieces) {
            (crate::Op::NoTranspose, Some((pieces, bounds, block_of))) => ax_pieces(gpu, kn, CsrcArgs { pieces, bounds, block_of, ..args }),
            (crate::Op::NoTranspose, None) => ax(gpu, kn, args),
            (crate::Op::Transpose, pieces) => atu(gpu, kn, plan, args, sp, pieces),
        }
    }
}

/// The deterministic CSR product on `m` ([`csr`]).
///
/// # Errors
/// [`crate::Error::NoValues`] for a pattern matrix.
///
/// # Safety
/// `d` packed blocks of `d.k` vectors of `m`'s column and row counts; `1 ≤ d.k ≤ MAX_K`.
pub(crate) unsafe fn csr_product<T: SpmvValue>(
    gpu: &Gpu,
    kn: &Kernels<T>,
    panels: &[Panel<T>],
    alpha: T,
    beta: T,
    d: &mut crate::dense::Packed<'_, T>,
) -> Result<()> {
    let (rows, cols) = panels_shape(panels)?;
    let stream = gpu.stream();
    let ((x, _x), (y, _y)) = (arg_ptr(&d.x, stream), arg_ptr_mut(&mut d.out, stream));
    for (i, (start, m)) in panels.iter().enumerate() {
        let (m_args, _m) = csr_args(m, stream)?;
        // Panel i adds its columns' share: the first with the caller's beta, the rest onto it.
        let beta = if i == 0 { beta } else { T::one() };
        let args = CsrArgs { x: x.wrapping_add(*start as usize), y, ldx: cols, ldy: rows, k: d.k as u32, alpha, beta, ..m_args };
        // SAFETY: a valid CSR (DeviceCsr's invariants) whose columns are X's rows start ..
        // start + m.cols() (the panels tile X's cols rows, `panels_shape`), and the caller's
        // blocks.
        unsafe { csr(gpu, kn, m.nnz(), args)? };
    }
    Ok(())
}

/// One column panel of a CSR product's matrix ([`csr_product`], [`rows_product`]): the first
/// row of `X` it multiplies (its column 0), and its CSR (every row of the whole matrix, its own
/// columns indexed from 0).
pub(crate) type Panel<T> = (u64, DeviceCsr<T>);

/// The matrix the panels make together, `(rows, cols)`, after checking that they tile its
/// columns in order with one row count (the bound every panel's launch relies on).
///
/// # Errors
/// `Internal` for panels that do not (none made by `CsrPair`) or for none at all.
fn panels_shape<T: SpmvValue>(panels: &[Panel<T>]) -> Result<(u64, u64)> {
    let bad = || crate::Error::Runtime(gpu_runtime::Error::Internal("CSR panels that do not tile the columns"));
    let rows = panels.first().ok_or_else(bad)?.1.rows();
    let mut end = 0;
    for (start, m) in panels {
        if *start != end || m.rows() != rows {
            return Err(bad());
        }
        end = start + m.cols();
    }
    Ok((rows, end))
}

/// `m`'s arrays and row count as [`CsrArgs`] (the blocks, their leading dimensions, `k` and the
/// scales left null or zero for the caller to fill), with the guards that order the arrays' use
/// on `stream`.
///
/// # Errors
/// [`crate::Error::NoValues`] for a pattern matrix.
fn csr_args<'a, T: SpmvValue>(m: &'a DeviceCsr<T>, stream: &'a gpu_runtime::cudarc::driver::CudaStream) -> Result<(CsrArgs<T>, [SyncOnDrop<'a>; 3])> {
    let ((ptr, gp), (idx, gi)) = (arg_ptr(m.ptr(), stream), arg_ptr(m.idx(), stream));
    let (vals, gv) = arg_ptr(m.vals().ok_or(crate::Error::NoValues)?, stream);
    let zero = T::from_bits64(0);
    let args = CsrArgs { ptr, idx, vals, x: null(), y: std::ptr::null_mut(), rows: m.rows(), ldx: 0, ldy: 0, k: 0, alpha: zero, beta: zero };
    Ok((args, [gp, gi, gv]))
}

/// Vectors from which a CSR product takes the row-major group kernels ([`rows_product`]): the
/// column-major kernels read `k` lines a nonzero, these one (and a copy of `x` first).
pub(crate) const ROWS_FROM_K: usize = 3;

/// `out = alpha · m · x + beta · out` by the row-major group kernels: `x` copied row-major into
/// `xr` (`csrc_to_rows_T`), then a group of `rows_group(k)` lanes a row (`csrc_rows{G}_T`).
///
/// # Errors
/// [`crate::Error::NoValues`] for a pattern matrix; launch failures.
///
/// # Safety
/// `panels` tile the columns of one matrix in order ([`Panel`]); `d` packed blocks of `d.k`
/// vectors of its column and row counts; `1 ≤ d.k ≤ MAX_K`; `xr` holds at least `cols · d.k`
/// values.
pub(crate) unsafe fn rows_product<T: SpmvValue>(
    gpu: &Gpu,
    kn: &Kernels<T>,
    panels: &[Panel<T>],
    alpha: T,
    beta: T,
    d: &mut crate::dense::Packed<'_, T>,
    xr: &mut ScratchSlice<'_, T>,
) -> Result<()> {
    use csrc_kernels::rows_group;
    let (rows, cols) = panels_shape(panels)?;
    let stream = gpu.stream();
    let k = d.k as u32;
    let ((xa, _x), (oa, _o), (ra, _r)) = (arg_ptr(&d.x, stream), arg_ptr_mut(&mut d.out, stream), arg_ptr_mut(xr, stream));
    if cols > 0 {
        let args = ToRowsArgs::<T> { x: xa, out: ra, rows: cols, ld: cols, k };
        // SAFETY: csrc_to_rows_T(ToRowsArgs): x is a packed block of k columns of cols values, xr
        // holds cols · k (the caller's contract).
        unsafe { kn.to_rows.launch(stream, grid(gpu, cols * k as u64), args)? };
    }
    if rows == 0 {
        return Ok(());
    }
    let g = rows_group(k);
    let kernel = &kn.rows[g.trailing_zeros() as usize - 2];
    let cfg = grid_1d(rows * g as u64, NT, NT as u64, gpu.props().sm_count.max(1) * 64);
    for (i, (start, m)) in panels.iter().enumerate() {
        let (m_args, _m) = csr_args(m, stream)?;
        // Panel i adds its columns' share: the first with the caller's beta, the rest onto it.
        let beta = if i == 0 { beta } else { T::one() };
        let x = ra.cast_const().wrapping_add((start * k as u64) as usize);
        let args = CsrArgs { x, y: oa, ldx: k as u64, ldy: rows, k, alpha, beta, ..m_args };
        // SAFETY: csrc_rows{G}_T(CsrArgs): a valid CSR (DeviceCsr's invariants) whose columns
        // are rows start .. start + m.cols() of xr's row-major copy (the panels tile them,
        // `panels_cols`); out a packed block of k columns of rows values; k ≤ G; blocks of NT
        // threads (whole warps).
        unsafe { kernel.launch(stream, cfg, args)? };
    }
    Ok(())
}

/// `out = beta · out` over a block of `k` vectors of `rows` values (a column at a time when
/// strided).
pub(crate) fn scale_dense<T: SpmvValue>(gpu: &Gpu, kn: &Kernels<T>, beta: T, out: &mut DenseViewMut<'_, T>) -> Result<()> {
    let (rows, cols, ld) = (out.rows(), out.cols(), out.ld());
    let packed = out.is_packed();
    let (base, _o) = arg_ptr_mut(out.data_mut(), gpu.stream());
    if packed {
        // SAFETY: out holds rows · cols values (a packed DenseView's span).
        return unsafe { scale(gpu, kn, rows * cols, beta, base) };
    }
    for c in 0..cols {
        // SAFETY: column c: rows values at c · ld (within the DenseView's span).
        unsafe { scale(gpu, kn, rows, beta, base.wrapping_add((c * ld) as usize))? };
    }
    Ok(())
}

/// The CSRC's block pointer `p` (`blocks + 1` words) from the CSR pointer `ptr` of `rows` rows
/// (`csrc_block_ptr`).
pub(crate) fn block_ptr<T: SpmvValue>(gpu: &Gpu, kn: &Kernels<T>, ptr: &DeviceView<'_, u32>, p: &mut CudaSlice<u32>) -> Result<()> {
    let rows = (ptr.len() as u64).saturating_sub(1);
    let blocks = csrc_kernels::row_blocks(rows);
    if p.len() as u64 != blocks + 1 || ptr.is_empty() {
        return Err(crate::Error::Runtime(gpu_runtime::Error::Internal("csrc block pointer length")));
    }
    let stream = gpu.stream();
    let ((src, _s), (dst, _d)) = (arg_ptr(ptr, stream), arg_ptr_mut(p, stream));
    let args = BlockPtrArgs { ptr: src, p: dst, rows, blocks };
    // SAFETY: csrc_block_ptr(BlockPtrArgs): the pointer's rows + 1 words are read at row-block
    // boundaries only (< rows + 1); p holds blocks + 1 (checked).
    unsafe { kn.block_ptr.launch(stream, grid(gpu, blocks + 1), args) }?;
    Ok(())
}

/// `r[k] = row_of[perm[k]] − its block's first row`, `v[k] = vals[perm[k]]` (`csrc_gather_T`).
///
/// # Safety
/// `perm` is a permutation of `0..nnz`; every array holds `nnz = perm.len()` items.
pub(crate) unsafe fn gather<T: SpmvValue>(
    gpu: &Gpu,
    kn: &Kernels<T>,
    perm: &CudaSlice<u32>,
    row_of: &CudaSlice<u32>,
    vals: &DeviceView<'_, T>,
    r: &mut CudaSlice<u8>,
    v: &mut CudaSlice<T>,
) -> Result<()> {
    let stream = gpu.stream();
    let nnz = perm.len() as u64;
    let ((perm, _p), (row_of, _r), (vals, _v)) = (arg_ptr(perm, stream), arg_ptr(row_of, stream), arg_ptr(vals, stream));
    let ((r, _ro), (v, _vo)) = (arg_ptr_mut(r, stream), arg_ptr_mut(v, stream));
    let args = GatherArgs::<T> { perm, row_of, vals, r, v, nnz };
    // SAFETY: csrc_gather_T(GatherArgs): the caller's contract.
    unsafe { kn.gather.launch(stream, grid(gpu, nnz), args) }?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{atu_passes, atu_plan, AtuPlan};
    use crate::Walk;

    /// Every kernel takes exactly its argument struct in the committed PTX (what
    /// `Gpu::kernel_of` checks at load, here without a GPU).
    #[test]
    fn argument_structs_match_the_ptx() {
        use csrc_kernels::{BlockPtrArgs, CsrArgs, CsrcArgs, FinishArgs, GatherArgs, ScaleArgs, ToRowsArgs};
        use gpu_runtime::check_signature;
        fn of<T>(t: &str) {
            let name = |phase: &str| format!("csrc_{phase}_{t}");
            check_signature::<ToRowsArgs<T>>(&crate::MODULE, &name("to_rows")).unwrap();
            for phase in ["ax", "ax_pieces", "atu", "atu_shared", "atu_group", "atu_group_shared"] {
                check_signature::<CsrcArgs<T>>(&crate::MODULE, &name(phase)).unwrap();
            }
            for phase in ["csr_thread", "csr_warp", "csr_block", "rows4", "rows8", "rows16"] {
                check_signature::<CsrArgs<T>>(&crate::MODULE, &name(phase)).unwrap();
            }
            check_signature::<ScaleArgs<T>>(&crate::MODULE, &name("scale")).unwrap();
            check_signature::<FinishArgs<T>>(&crate::MODULE, &name("atu_finish")).unwrap();
            check_signature::<GatherArgs<T>>(&crate::MODULE, &name("gather")).unwrap();
        }
        of::<f32>("f32");
        of::<f64>("f64");
        check_signature::<BlockPtrArgs>(&crate::MODULE, "csrc_block_ptr").unwrap();
        // A struct of another size, and a kernel that is not there, are refused.
        assert!(check_signature::<CsrArgs<f64>>(&crate::MODULE, "csrc_to_rows_f64").is_err());
        assert!(check_signature::<CsrArgs<f64>>(&crate::MODULE, "csrc_ax_f64").is_err());
        assert!(check_signature::<CsrArgs<f64>>(&crate::MODULE, "no_such_kernel").is_err());
    }

    #[test]
    fn auto_plans_follow_the_benchmark() {
        let budget = 227 * 1024;
        let plan = |cols, k| atu_plan(cols, k, 8, budget, Walk::Auto);
        let shared = |kp, grouped| AtuPlan::Shared { kp, grouped };
        // The tall suite's shapes at 227 KiB: 64, 4284, 12,471 and 100k columns.
        assert_eq!(plan(64, 1), shared(1, false));
        assert_eq!(plan(100_000, 1), AtuPlan::Global);
        assert_eq!(plan(64, 16), shared(16, true));
        assert_eq!(plan(4284, 2), shared(2, false));
        assert_eq!(plan(4284, 4), shared(4, true));
        assert_eq!(plan(4284, 8), shared(4, true));
        assert_eq!(plan(4284, 16), AtuPlan::GlobalGrouped);
        assert_eq!(plan(12471, 2), shared(2, false));
        assert_eq!(plan(12471, 4), shared(2, false));
        assert_eq!(plan(12471, 8), AtuPlan::GlobalGrouped);
        assert_eq!(plan(100_000, 2), AtuPlan::GlobalGrouped);
        // Forced walks; no shared memory.
        assert_eq!(atu_plan(4284, 16, 8, budget, Walk::LaneGroups), shared(4, true));
        assert_eq!(atu_plan(4284, 3, 8, budget, Walk::LaneGroups), shared(2, true));
        assert_eq!(atu_plan(4284, 16, 8, budget, Walk::WarpSegments), shared(6, false));
        assert_eq!(atu_plan(4284, 16, 8, 0, Walk::LaneGroups), AtuPlan::GlobalGrouped);
        assert_eq!(atu_plan(4284, 16, 8, 0, Walk::WarpSegments), AtuPlan::Global);
    }

    #[test]
    fn passes_are_even_and_fit() {
        // 4284 columns of f64: 36 KiB a vector; 113 KiB hold 3, so 16 vectors go in 6 passes
        // of 3 (the last of 1).
        let budget = 113 * 1024;
        assert_eq!(atu_passes(4284, 16, 8, budget), Some(3));
        assert_eq!(atu_passes(4284, 2, 8, budget), Some(2));
        assert_eq!(atu_passes(64, 16, 8, budget), Some(16));
        // 10 vectors that fit 4 at a time: 3 passes of 4, 4, 2.
        assert_eq!(atu_passes(100, 10, 8, (356 * 8 * 4) as u32), Some(4));
        assert_eq!(atu_passes(100_000, 1, 8, budget), None);
        assert_eq!(atu_passes(64, 1, 8, 0), None);
        // One vector per pass: only for one or two vectors.
        assert_eq!(atu_passes(12471, 2, 8, budget), Some(1));
        assert_eq!(atu_passes(12471, 4, 8, budget), None);
    }
}
