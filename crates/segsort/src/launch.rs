//! The only `unsafe` launches of the segsort kernels, with their grid sizing.
use gpu_runtime::cudarc::driver::LaunchConfig;
use gpu_runtime::{grid_1d, Gpu, Kernel};
use gpu_segmerge::raw::{self, MergeKernels};

use crate::{Result, TileSize};

/// The kernels of the 64-bit segment sort: pack, block sort (pairs or keys), merge, unpack.
pub(crate) struct Kernels64<'a> {
    pub pack: &'a Kernel,
    pub unpack: &'a Kernel,
    pub pairs: &'a Kernel,
    pub keys: &'a Kernel,
    pub merge: &'a MergeKernels,
}

/// Every tile of `tile` items sorted by one block in shared memory.
///
/// # Safety
/// `kernel` is the pairs kernel of `tile` exactly when `vals != 0`; `keys`/`keys_out` (and
/// `vals`/`vals_out` unless 0) hold `n` `u32` items.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn block_sort(
    gpu: &Gpu,
    kernel: &Kernel,
    tile: TileSize,
    keys: u64,
    vals: u64,
    n: u64,
    keys_out: u64,
    vals_out: u64,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let blocks = n.div_ceil(tile.len() as u64);
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (tile.threads(), 1, 1),
        shared_mem_bytes: tile.len() * if vals != 0 { 8 } else { 4 },
    };
    let stream = gpu.stream();
    // SAFETY: segsort_pairs_B(keys, vals, n, keys_out, vals_out) / segsort_keys_B(keys, n,
    // keys_out) with ceil(n / B) blocks of B / VT threads and B * (4 + 4) bytes of shared
    // memory; buffers as the caller guarantees.
    unsafe {
        if vals != 0 {
            kernel.args(stream).arg(&keys).arg(&vals).arg(&n).arg(&keys_out).arg(&vals_out).launch(cfg)?;
        } else {
            kernel.args(stream).arg(&keys).arg(&n).arg(&keys_out).launch(cfg)?;
        }
    }
    Ok(())
}

/// The sort by segments: `(segment << 32 | key)` packed into `a`, block-sorted, merged
/// (ping-pong between `a` and `b`, the values between the caller's and `seg`'s memory), unpacked
/// into `keys`.
///
/// # Safety
/// `seg` holds each item's segment (`n` words; reused as value scratch after packing), `keys`
/// (and `vals` unless 0) `n` words; `a`, `b` `8 n` bytes; `splits`
/// `max_tiles(n, 2048) + 1` words; `n >= 1`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sort_segments64(
    gpu: &Gpu,
    k: &Kernels64<'_>,
    seg: u64,
    keys: u64,
    vals: u64,
    n: u64,
    a: u64,
    b: u64,
    splits: u64,
) -> Result<()> {
    let stream = gpu.stream();
    let cfg = grid_1d(n, 256, 256 * 8, gpu.props().sm_count * 16);
    // SAFETY: segsort_pack(seg, keys, n, packed): all hold n items.
    unsafe { k.pack.args(stream).arg(&seg).arg(&keys).arg(&n).arg(&a).launch(cfg)? };
    // Ping-pong so the last pass lands in (a, caller's values): the block sort writes to the pair
    // of index `passes % 2` (0 = a / values, 1 = b / seg scratch).
    let passes = raw::merge_passes(n, 2048);
    let (kbuf, vbuf) = ([a, b], [vals, if vals == 0 { 0 } else { seg }]);
    let mut x = (passes % 2) as usize;
    let block_cfg = LaunchConfig { grid_dim: (n.div_ceil(2048) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 2048 * 12 };
    // SAFETY: segsort_{pairs,keys}64_2048(keys, [vals,] n, keys_out, [vals_out]): buffers of n
    // items, ceil(n / 2048) blocks of 256 threads, 24 KiB of shared memory.
    unsafe {
        if vals != 0 {
            k.pairs.args(stream).arg(&a).arg(&vals).arg(&n).arg(&kbuf[x]).arg(&vbuf[x]).launch(block_cfg)?;
        } else {
            k.keys.args(stream).arg(&a).arg(&n).arg(&kbuf[x]).launch(block_cfg)?;
        }
    }
    let mut s = 2048u64;
    while s < n {
        // SAFETY: buffers of n items, splits of max_tiles(n, 2048) + 1 >= what the pass needs.
        unsafe { raw::merge_pass(gpu, k.merge, kbuf[x], vbuf[x], n, s, splits, kbuf[1 - x], vbuf[1 - x])? };
        x = 1 - x;
        s *= 2;
    }
    // SAFETY: segsort_unpack(packed, n, keys): n items each.
    unsafe { k.unpack.args(stream).arg(&a).arg(&n).arg(&keys).launch(cfg)? };
    Ok(())
}
