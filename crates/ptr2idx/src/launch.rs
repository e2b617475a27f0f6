//! The only `unsafe` launches of the ptr2idx kernels.
use gpu_runtime::cudarc::driver::LaunchConfig;
use gpu_runtime::{grid_1d, Gpu, Kernel};

use crate::{Result, NT};

pub(crate) struct Kernels {
    pub partition: Kernel,
    pub expand: Kernel,
}

/// The kernels for `u32` offsets, and for `u64` (`ptr2idx_*_u64`).
pub(crate) struct ByWidth {
    pub w32: Kernels,
    pub w64: Kernels,
}

/// The merge-path partition, then the expansion of `tiles` tiles.
///
/// # Safety
/// `offsets` holds `m + 1` words of the kernels' offset type, `out` `nnz` words, `splits`
/// `tiles + 1` words (`u64`), `tiles = ceil((m + nnz) / NV)`, `m < 2^32`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn expand(gpu: &Gpu, k: &Kernels, offsets: u64, m: u64, nnz: u64, tiles: u64, splits: u64, out: u64) -> Result<()> {
    let stream = gpu.stream();
    let max_blocks = gpu.props().sm_count.max(1) * 8;
    // SAFETY: ptr2idx_partition(offsets, m, nnz, tiles, splits): offsets holds m + 1 words,
    // splits tiles + 1.
    unsafe {
        k.partition.args(stream).arg(&offsets).arg(&m).arg(&nnz).arg(&tiles).arg(&splits).launch(grid_1d(tiles + 1, NT, NT as u64, max_blocks))?
    };
    let cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: ptr2idx_expand(offsets, m, nnz, splits, out) with `tiles` blocks of NT threads;
    // out holds nnz words.
    unsafe { k.expand.args(stream).arg(&offsets).arg(&m).arg(&nnz).arg(&splits).arg(&out).launch(cfg)? };
    Ok(())
}
