//! The merge-pass launcher on raw device addresses, for every crate whose kernels instantiate
//! `segmerge_kernels::pass` (this crate's `segmerge` module, `gpu-segsort`'s 64-bit merges): one
//! stable merge pass (partition + merge kernels).
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu_runtime::scratch::ScratchSlice;
use gpu_runtime::{grid_1d, Gpu, KernelOf};

pub use segmerge_kernels::{tile_count, tiles_per_pair, MergeArgs, NT, NV};

/// A partition kernel and a merge kernel of one key type (`key_bytes` 4 or 8), with or without
/// values (a keys-only merge kernel reads no value pointers), each taking [`MergeArgs`] (its
/// key pointers typed `u8` here: the struct's layout does not depend on the key type).
#[derive(Clone)]
pub struct MergeKernels {
    /// The pass's partition.
    pub partition: KernelOf<MergeArgs<u8>>,
    /// The pass's merge.
    pub merge: KernelOf<MergeArgs<u8>>,
    /// Bytes per key.
    pub key_bytes: u32,
}

/// Merge passes from runs of `first_run` until one run covers `n` items.
pub fn merge_passes(n: u64, first_run: u64) -> u32 {
    let mut s = first_run.max(1);
    let mut p = 0;
    while s < n {
        s *= 2;
        p += 1;
    }
    p
}

/// Most tiles any merge pass from runs of `first_run` up to one run needs over `n` items (the
/// size of the splits buffer for a whole sort: a pass's tile count is not monotone in `s`,
/// since the last, partial pair still gets `tiles_per_pair(s)` tiles).
pub fn max_tiles(n: u64, first_run: u64) -> u64 {
    let mut s = first_run.max(1);
    let mut most = 0;
    while s < n {
        most = most.max(tile_count(n, s));
        s *= 2;
    }
    most
}

/// Enqueues one merge pass over `n` items with runs of `s`: pairs of runs `(2p, 2p + 1)` become
/// one stable run of `2s` in the outputs. `vals == 0` selects the keys-only form.
///
/// # Safety
/// `keys`/`keys_out` (and `vals`/`vals_out` unless 0) hold `n` items of the kernels' types and
/// do not overlap; `splits` holds `tile_count(n, s)` words; `k.merge` is a pairs kernel exactly
/// when `vals != 0`.
///
/// # Errors
/// Launch errors.
#[allow(clippy::too_many_arguments)]
pub unsafe fn merge_pass(
    gpu: &Gpu,
    k: &MergeKernels,
    keys: u64,
    vals: u64,
    n: u64,
    s: u64,
    splits: u64,
    keys_out: u64,
    vals_out: u64,
) -> gpu_runtime::Result<()> {
    if n == 0 {
        return Ok(());
    }
    let tpp = tiles_per_pair(s);
    let tiles = tile_count(n, s);
    let stream = gpu.stream();
    let max_blocks = gpu.props().sm_count.max(1) * 8;
    let cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: NV * (k.key_bytes + 4) };
    let args = MergeArgs::<u8> {
        keys: keys as *const u8,
        vals: vals as *const u32,
        splits: splits as *mut u32,
        keys_out: keys_out as *mut u8,
        vals_out: vals_out as *mut u32,
        n,
        s,
        tpp,
        tiles,
    };
    // SAFETY: forwarded to the caller; grids as the kernels document.
    unsafe {
        k.partition.launch(stream, grid_1d(tiles, NT, NT as u64, max_blocks), args)?;
        k.merge.launch(stream, cfg, args)?;
    }
    Ok(())
}

/// One pairs merge pass of typed `u32` buffers of `n` items each (lengths checked by the
/// caller: `lengths`), `splits` of `tile_count(n, s) + 1` words: the addresses formed here.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pass_pairs(
    gpu: &Gpu,
    k: &MergeKernels,
    s: u64,
    (keys, vals): (&impl DevicePtr<u32>, &impl DevicePtr<u32>),
    keys_out: &mut impl DevicePtrMut<u32>,
    vals_out: &mut impl DevicePtrMut<u32>,
    splits: &mut ScratchSlice<'_, u32>,
) -> gpu_runtime::Result<()> {
    let n = keys.len() as u64;
    if [vals.len(), keys_out.len(), vals_out.len()].iter().any(|&l| l as u64 != n) || splits_short(splits, n, s) {
        return Err(gpu_runtime::Error::Internal("merge pass lengths"));
    }
    let stream = gpu.stream();
    let (k0, _a) = keys.device_ptr(stream);
    let (v0, _b) = vals.device_ptr(stream);
    let (ko, _c) = keys_out.device_ptr_mut(stream);
    let (vo, _d) = vals_out.device_ptr_mut(stream);
    let (sp, _e) = splits.device_ptr_mut(stream);
    // SAFETY: four buffers of n items (checked), distinct (the outputs are mutable borrows),
    // splits sized (checked); the pairs kernels.
    unsafe { merge_pass(gpu, k, k0, v0, n, s, sp, ko, vo) }
}

/// One keys-only merge pass of typed buffers (as [`pass_pairs`]).
pub(crate) fn pass_keys(
    gpu: &Gpu,
    k: &MergeKernels,
    s: u64,
    keys: &impl DevicePtr<u32>,
    keys_out: &mut impl DevicePtrMut<u32>,
    splits: &mut ScratchSlice<'_, u32>,
) -> gpu_runtime::Result<()> {
    let n = keys.len() as u64;
    if keys_out.len() as u64 != n || splits_short(splits, n, s) {
        return Err(gpu_runtime::Error::Internal("merge pass lengths"));
    }
    let stream = gpu.stream();
    let (k0, _a) = keys.device_ptr(stream);
    let (ko, _c) = keys_out.device_ptr_mut(stream);
    let (sp, _e) = splits.device_ptr_mut(stream);
    // SAFETY: two distinct buffers of n items (checked), splits sized (checked); the keys-only
    // kernels.
    unsafe { merge_pass(gpu, k, k0, 0, n, s, sp, ko, 0) }
}

fn splits_short(splits: &ScratchSlice<'_, u32>, n: u64, s: u64) -> bool {
    use gpu_runtime::cudarc::driver::DeviceSlice;
    s == 0 || (splits.len() as u64) < tile_count(n, s) + 1
}

#[cfg(test)]
mod tests {
    /// Every kernel takes exactly [`super::MergeArgs`] in the committed PTX (what
    /// `Gpu::kernel_of` checks at load, here without a GPU).
    #[test]
    fn argument_structs_match_the_ptx() {
        for name in ["segmerge_partition_u32", "segmerge_pairs_u32", "segmerge_keys_u32"] {
            gpu_runtime::check_signature::<super::MergeArgs<u8>>(&crate::MODULE, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(gpu_runtime::check_signature::<u64>(&crate::MODULE, "segmerge_keys_u32").is_err());
    }
}
