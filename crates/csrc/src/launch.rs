//! The only `unsafe` launches of the csrc kernels, with their grid sizing.
use gpu_runtime::cudarc::driver::LaunchConfig;
use gpu_runtime::{grid_1d, Gpu, Kernel};
use csrc_kernels::{BLOCK_ROWS, NT};

use crate::Result;
use gpu_spmv::SpmvValue;

/// The kernels of one value type.
pub(crate) struct Kernels {
    pub block_ptr: Kernel,
    pub gather: Kernel,
    pub ax: Kernel,
    pub scale: Kernel,
    pub atu: Kernel,
    pub csr_warp: Kernel,
    pub csr_block: Kernel,
}

impl Kernels {
    pub fn load<T: SpmvValue>(gpu: &Gpu) -> Result<Self> {
        let k = |phase: &str| gpu.kernel(&crate::MODULE, &format!("csrc_{phase}_{}", T::NAME));
        // The direct product's shared memory is at most 16 vectors of f64 for 256 rows: 32 KiB,
        // under the default 48 KiB.
        Ok(Self {
            block_ptr: gpu.kernel(&crate::MODULE, "csrc_block_ptr")?,
            gather: k("gather")?,
            ax: k("ax")?,
            scale: k("scale")?,
            atu: k("atu")?,
            csr_warp: k("csr_warp")?,
            csr_block: k("csr_block")?,
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

/// `Y = alpha · A · X + beta · Y` on the stored CSRC.
///
/// # Safety
/// `p`, `r`, `j`, `v` are the device arrays of a valid CSRC of `rows × cols`; `x` holds `cols ·
/// k` values and `y` `rows · k`; `1 ≤ k ≤ MAX_K`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ax<T: SpmvValue>(gpu: &Gpu, kn: &Kernels, rows: u64, cols: u64, k: u32, p: u64, r: u64, j: u64, v: u64, x: u64, alpha: T, beta: T, y: u64) -> Result<()> {
    let blocks = csrc_kernels::row_blocks(rows);
    if blocks == 0 {
        return Ok(());
    }
    let mut cfg = per_block(blocks);
    cfg.shared_mem_bytes = k * BLOCK_ROWS * T::BYTES as u32;
    // SAFETY: csrc_ax_T(rows, cols, k, blocks, p, r, j, v, x, alpha, beta, y): the caller's valid
    // CSRC and dense blocks; dynamic shared memory of k · BLOCK_ROWS values (allowed at load).
    unsafe { kn.ax.args(gpu.stream()).arg(&rows).arg(&cols).arg(&k).arg(&blocks).arg(&p).arg(&r).arg(&j).arg(&v).arg(&x).arg(&alpha).arg(&beta).arg(&y).launch(cfg)? };
    Ok(())
}

/// `V = alpha · Aᵀ · U + beta · V` on the stored CSRC: the scale, then the atomic product.
///
/// # Safety
/// As [`ax`], with `u` holding `rows · k` values and `out` `cols · k`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn atu<T: SpmvValue>(gpu: &Gpu, kn: &Kernels, rows: u64, cols: u64, k: u32, p: u64, r: u64, j: u64, v: u64, u: u64, alpha: T, beta: T, out: u64) -> Result<()> {
    let n = cols * k as u64;
    if n > 0 {
        // SAFETY: csrc_scale_T(n, beta, out): out holds cols · k = n values.
        unsafe { kn.scale.args(gpu.stream()).arg(&n).arg(&beta).arg(&out).launch(grid(gpu, n))? };
    }
    let blocks = csrc_kernels::row_blocks(rows);
    if blocks == 0 || n == 0 {
        return Ok(());
    }
    // SAFETY: csrc_atu_T(rows, cols, k, blocks, p, r, j, v, u, alpha, out): the caller's valid
    // CSRC and dense blocks; blocks of NT threads (whole warps).
    unsafe { kn.atu.args(gpu.stream()).arg(&rows).arg(&cols).arg(&k).arg(&blocks).arg(&p).arg(&r).arg(&j).arg(&v).arg(&u).arg(&alpha).arg(&out).launch(per_block(blocks))? };
    Ok(())
}

/// Rows at least this long (on average) get a block each in the deterministic CSR product, a
/// warp each below.
pub(crate) const BLOCK_ROW_MIN: u64 = 512;

/// Deterministic `Y = alpha · A · X + beta · Y` on a CSR: a warp per row, or a block per row when
/// the mean row holds [`BLOCK_ROW_MIN`] or more nonzeros.
///
/// # Safety
/// `ptr`, `idx`, `vals` are the device arrays of a valid CSR of `rows × cols` with `nnz`
/// nonzeros; `x` holds `cols · k` values and `y` `rows · k`; `1 ≤ k ≤ MAX_K`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn csr<T: SpmvValue>(gpu: &Gpu, kn: &Kernels, rows: u64, cols: u64, nnz: u64, k: u32, ptr: u64, idx: u64, vals: u64, x: u64, alpha: T, beta: T, y: u64) -> Result<()> {
    if rows == 0 {
        return Ok(());
    }
    let (kernel, cfg) = if nnz >= BLOCK_ROW_MIN * rows { (&kn.csr_block, per_block(rows)) } else { (&kn.csr_warp, grid_1d(rows * 32, NT, NT as u64, i32::MAX as u32)) };
    // SAFETY: csrc_csr_{warp,block}_T(rows, cols, k, ptr, idx, vals, x, alpha, beta, y): the
    // caller's valid CSR and dense blocks; blocks of NT threads (whole warps, ≤ 1024).
    unsafe { kernel.args(gpu.stream()).arg(&rows).arg(&cols).arg(&k).arg(&ptr).arg(&idx).arg(&vals).arg(&x).arg(&alpha).arg(&beta).arg(&y).launch(cfg)? };
    Ok(())
}
