//! The only `unsafe` launches of the histogram kernels, with their grid sizing.
use gpu_runtime::cudarc::driver::LaunchConfig;
use gpu_runtime::{Gpu, Kernel};

use crate::{Result, Strategy, AUTO_SHARED_MAX_BINS, COPY_BUDGET, NT, SLICE_BINS, VT, WARPS};

/// A null device pointer (kernels treat it as "absent").
const NULL: u64 = 0;

pub(crate) struct Kernels {
    pub shared: Kernel,
    pub global: Kernel,
    pub partition: Kernel,
    pub vscan_reduce: Kernel,
    pub vscan: Kernel,
}

/// Counts `n` keys into `bins` zeroed counts: privatized in shared memory (in slices of
/// [`SLICE_BINS`]) or with warp-aggregated global atomics, by `strategy` and `bins`.
///
/// # Safety
/// `keys` holds `n` words, `counts` `bins` zeroed words, `flag` is 0 or one word.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn count(
    gpu: &Gpu,
    k: &Kernels,
    strategy: Strategy,
    max_shared: u32,
    keys: u64,
    n: u64,
    bins: u32,
    counts: u64,
    flag: u64,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let props = gpu.props();
    let sms = props.sm_count.max(1) as u64;
    let vec_ok = (keys % 16 == 0) as u32;
    let by_n = n.div_ceil((NT * VT) as u64);
    let stream = gpu.stream().clone();
    let slice = bins.min(SLICE_BINS);
    let slices = bins.div_ceil(slice);
    let use_shared = match strategy {
        Strategy::Auto => bins <= AUTO_SHARED_MAX_BINS,
        Strategy::Shared => true,
        Strategy::Global => false,
    } && slices <= 65_535
        && slice * 4 <= max_shared;
    if use_shared {
        let copies = (COPY_BUDGET / (slice * 4)).clamp(1, WARPS);
        let smem = copies * slice * 4;
        let per_sm = (props.shared_per_sm / (smem + 1024)).clamp(1, 8) as u64;
        // Each block flushes `slice` counts: keep that well below the keys it counts.
        let flush_cap = (n / (8 * slice as u64)).max(sms);
        let blocks = by_n.min(sms * per_sm).min(flush_cap).max(1);
        let cfg = LaunchConfig { grid_dim: (blocks as u32, slices, 1), block_dim: (NT, 1, 1), shared_mem_bytes: smem };
        // SAFETY: histogram_shared(keys, n, bins, slice, copies, counts, first_bad, vec_ok):
        // keys holds n words (aligned when vec_ok), counts bins words, flag null or one
        // word, grid.y = ceil(bins / slice), copies * slice words of dynamic shared memory
        // (at most 64 KiB; limit raised in `with_strategy`).
        unsafe { k.shared.args(&stream).arg(&keys).arg(&n).arg(&bins).arg(&slice).arg(&copies).arg(&counts).arg(&flag).arg(&vec_ok).launch(cfg)? };
    } else {
        let blocks = by_n.min(sms * 8);
        let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: histogram_global(keys, n, bins, counts, first_bad, vec_ok): as above,
        // without shared memory.
        unsafe { k.global.args(&stream).arg(&keys).arg(&n).arg(&bins).arg(&counts).arg(&flag).arg(&vec_ok).launch(cfg)? };
    }
    Ok(())
}

/// One warp walks each of `parts` partitions (`blocks` blocks of NT threads).
///
/// # Safety
/// `keys`/`intra` hold `n` words, `table` `(parts + 1) * bins` zeroed words, `flag` 0 or one
/// word; `blocks * NT / 32 >= parts`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn partition(
    gpu: &Gpu,
    k: &Kernels,
    keys: u64,
    n: u64,
    bins: u32,
    parts: u64,
    blocks: u64,
    table: u64,
    intra: u64,
    flag: u64,
) -> Result<()> {
    let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: histogram_partition(keys, n, bins, parts, table, intra, first_bad): as the caller
    // guarantees; parts warps in blocks of NT.
    unsafe { k.partition.args(gpu.stream()).arg(&keys).arg(&n).arg(&bins).arg(&parts).arg(&table).arg(&intra).arg(&flag).launch(cfg)? };
    Ok(())
}

/// The vertical scan of a `rows × bins` table, in `chunks` row chunks (one: no carries).
///
/// # Safety
/// `table` holds `rows * bins` words; `sums` holds `(chunks + 1) * bins` words when
/// `chunks > 1`; `col_blocks = ceil(bins / NT)`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn vertical_scan(gpu: &Gpu, k: &Kernels, table: u64, rows: u64, bins: u64, col_blocks: u64, chunks: u64, sums: u64) -> Result<()> {
    let stream = gpu.stream();
    let rpc = rows.div_ceil(chunks);
    let grid = |c: u64| LaunchConfig { grid_dim: (col_blocks as u32, c as u32, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    if chunks == 1 {
        // SAFETY: histogram_vscan(table, bins, rows, rows_per_chunk, carries): table holds
        // rows * bins words, carries null; grid (col_blocks, 1).
        unsafe { k.vscan.args(stream).arg(&table).arg(&bins).arg(&rows).arg(&rpc).arg(&NULL).launch(grid(1))? };
        return Ok(());
    }
    // Row c of the scanned sums = total of chunks < c: chunk c's carry.
    let (sum_rows, sum_rpc) = (chunks + 1, chunks + 1);
    // SAFETY: sums holds (chunks + 1) * bins words; grids as each kernel documents.
    unsafe {
        k.vscan_reduce.args(stream).arg(&table).arg(&bins).arg(&rows).arg(&rpc).arg(&sums).launch(grid(chunks))?;
        k.vscan.args(stream).arg(&sums).arg(&bins).arg(&sum_rows).arg(&sum_rpc).arg(&NULL).launch(grid(1))?;
        k.vscan.args(stream).arg(&table).arg(&bins).arg(&rows).arg(&rpc).arg(&sums).launch(grid(chunks))?;
    }
    Ok(())
}
