//! The only `unsafe` launches of the ptr2idx kernels and the only raw device addresses of the
//! crate.
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, DeviceSlice, LaunchConfig};
use gpu_runtime::scratch::ScratchSlice;
use gpu_runtime::{grid_1d, Gpu, Kernel};

use crate::{Error, Offset, Result, NT, NV};

pub(crate) struct Kernels {
    pub partition: Kernel,
    pub expand: Kernel,
}

/// The kernels for `u32` offsets, and for `u64` (`ptr2idx_*_u64`).
pub(crate) struct ByWidth {
    pub w32: Kernels,
    pub w64: Kernels,
}

/// The merge-path partition into `splits` (`tiles + 1` words), then the expansion of the
/// `tiles = ceil((m + nnz) / NV)` tiles: `out` (`nnz` words) gets each item's segment of the
/// `m + 1` offsets. The kernels clamp every search to its bounds, so any offsets (even not
/// monotone) stay in bounds: a safe function once the lengths are checked here.
pub(crate) fn expand<O: Offset>(
    gpu: &Gpu,
    k: &Kernels,
    offsets: &impl DevicePtr<O>,
    out: &mut impl DevicePtrMut<u32>,
    splits: &mut ScratchSlice<'_, u64>,
) -> Result<()> {
    let (m, nnz) = ((offsets.len() as u64).saturating_sub(1), out.len() as u64);
    let tiles = (m + nnz).div_ceil(NV as u64);
    if offsets.is_empty() || nnz == 0 || m >= u32::MAX as u64 || (splits.len() as u64) < tiles + 1 || tiles > i32::MAX as u64 {
        return Err(Error::Runtime(gpu_runtime::Error::Internal("ptr2idx launch sizes")));
    }
    let stream = gpu.stream();
    let (offsets, _o) = offsets.device_ptr(stream);
    let (out, _w) = out.device_ptr_mut(stream);
    let (splits, _s) = splits.device_ptr_mut(stream);
    let max_blocks = gpu.props().sm_count.max(1) * 8;
    // SAFETY: ptr2idx_partition(offsets, m, nnz, tiles, splits): offsets holds m + 1 words,
    // splits tiles + 1 (checked).
    unsafe {
        k.partition.args(stream).arg(&offsets).arg(&m).arg(&nnz).arg(&tiles).arg(&splits).launch(grid_1d(tiles + 1, NT, NT as u64, max_blocks))?
    };
    let cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: ptr2idx_expand(offsets, m, nnz, splits, out) with `tiles` blocks of NT threads;
    // out holds nnz words (checked).
    unsafe { k.expand.args(stream).arg(&offsets).arg(&m).arg(&nnz).arg(&splits).arg(&out).launch(cfg)? };
    Ok(())
}
