//! The only `unsafe` launches of the ptr2idx kernels and the only raw device addresses of the
//! crate.
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, DeviceSlice, LaunchConfig};
use gpu_runtime::scratch::ScratchSlice;
use gpu_runtime::{arg_ptr, arg_ptr_mut, grid_1d, Gpu, KernelOf};
use ptr2idx_kernels::Ptr2IdxArgs;

use crate::{Error, Offset, Result, NT, NV};

/// The kernels of one offset width, each taking [`Ptr2IdxArgs`] (checked against the PTX at
/// load); the offsets' pointer is typed `u8` here (the struct's layout does not depend on it).
pub(crate) struct Kernels {
    pub partition: KernelOf<Ptr2IdxArgs<u8>>,
    pub expand: KernelOf<Ptr2IdxArgs<u8>>,
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
    let (offsets, _o) = arg_ptr(offsets, stream);
    let (out, _w) = arg_ptr_mut(out, stream);
    let (splits, _s) = arg_ptr_mut(splits, stream);
    let args = Ptr2IdxArgs { offsets: offsets.cast::<u8>(), splits, out, m, nnz, tiles };
    let max_blocks = gpu.props().sm_count.max(1) * 8;
    // SAFETY: ptr2idx_partition(Ptr2IdxArgs): offsets holds m + 1 words, splits tiles + 1
    // (checked).
    unsafe { k.partition.launch(stream, grid_1d(tiles + 1, NT, NT as u64, max_blocks), args)? };
    let cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: ptr2idx_expand(Ptr2IdxArgs) with `tiles` blocks of NT threads; out holds nnz words
    // (checked).
    unsafe { k.expand.launch(stream, cfg, args)? };
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Every kernel takes exactly [`Ptr2IdxArgs`] in the committed PTX (what `Gpu::kernel_of`
    /// checks at load, here without a GPU).
    #[test]
    fn argument_structs_match_the_ptx() {
        use super::Ptr2IdxArgs;
        for name in ["ptr2idx_partition", "ptr2idx_expand", "ptr2idx_partition_u64", "ptr2idx_expand_u64"] {
            gpu_runtime::check_signature::<Ptr2IdxArgs<u8>>(&crate::MODULE, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(gpu_runtime::check_signature::<u64>(&crate::MODULE, "ptr2idx_expand").is_err());
    }
}
