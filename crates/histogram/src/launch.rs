//! The only `unsafe` launches of the histogram kernels and the only raw device addresses of the
//! crate, with their grid sizing. The functions take typed buffers and check the lengths the
//! kernels rely on, so they are safe to call.
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, DeviceSlice, LaunchConfig};
use gpu_runtime::scratch::ScratchSlice;
use gpu_runtime::{ptr_mut_or_null, Gpu, Kernel};

use crate::{Error, Result, Strategy, AUTO_SHARED_MAX_BINS, COPY_BUDGET, NT, SLICE_BINS, VT, WARPS};

/// `what` holds at least `need` words, else [`Error::LengthMismatch`].
fn at_least(what: &'static str, len: usize, need: u64) -> Result<()> {
    if (len as u64) < need {
        return Err(Error::LengthMismatch { what, expected: need, got: len as u64 });
    }
    Ok(())
}

/// A null device pointer (kernels treat it as "absent").
const NULL: u64 = 0;

pub(crate) struct Kernels {
    pub shared: Kernel,
    pub global: Kernel,
    pub partition: Kernel,
    pub vscan_reduce: Kernel,
    pub vscan: Kernel,
}

/// Counts the keys into the first `bins` words of `counts` (zeroed): privatized in shared memory
/// (in slices of [`SLICE_BINS`]) or with warp-aggregated global atomics, by `strategy` and
/// `bins`. Keys `>= bins` are skipped; `flag` (one word), when given, gets the first one's index.
#[allow(clippy::too_many_arguments)]
pub(crate) fn count(
    gpu: &Gpu,
    k: &Kernels,
    strategy: Strategy,
    max_shared: u32,
    keys: &impl DevicePtr<u32>,
    bins: u32,
    counts: &mut impl DevicePtrMut<u32>,
    flag: Option<&mut ScratchSlice<'_, u32>>,
) -> Result<()> {
    at_least("counts", counts.len(), bins as u64)?;
    let n = keys.len() as u64;
    if n == 0 {
        return Ok(());
    }
    let stream = gpu.stream().clone();
    let (keys, _k) = keys.device_ptr(&stream);
    let (counts, _c) = counts.device_ptr_mut(&stream);
    let (flag, _f) = ptr_mut_or_null(flag, &stream);
    let props = gpu.props();
    let sms = props.sm_count.max(1) as u64;
    let vec_ok = (keys % 16 == 0) as u32;
    let by_n = n.div_ceil((NT * VT) as u64);
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

/// One warp walks each of `parts` partitions (`blocks` blocks of NT threads): row `p` of
/// `table` (`(parts + 1) * bins` zeroed words) gets partition `p`'s counts, `intra` each key's
/// rank among equal keys of its partition; `flag` as in [`count`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn partition(
    gpu: &Gpu,
    k: &Kernels,
    keys: &impl DevicePtr<u32>,
    bins: u32,
    parts: u64,
    table: &mut impl DevicePtrMut<u32>,
    intra: &mut impl DevicePtrMut<u32>,
    flag: Option<&mut ScratchSlice<'_, u32>>,
) -> Result<()> {
    let n = keys.len() as u64;
    at_least("table", table.len(), (parts + 1) * bins as u64)?;
    at_least("intra", intra.len(), n)?;
    let blocks = (parts * 32).div_ceil(NT as u64);
    if n == 0 || parts == 0 || blocks > i32::MAX as u64 {
        return Ok(());
    }
    let stream = gpu.stream();
    let (keys, _k) = keys.device_ptr(stream);
    let (table, _t) = table.device_ptr_mut(stream);
    let (intra, _i) = intra.device_ptr_mut(stream);
    let (flag, _f) = ptr_mut_or_null(flag, stream);
    let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: histogram_partition(keys, n, bins, parts, table, intra, first_bad): keys and intra
    // hold n words, table (parts + 1) * bins (checked), flag null or one word; parts warps in
    // `blocks` blocks of NT.
    unsafe { k.partition.args(stream).arg(&keys).arg(&n).arg(&bins).arg(&parts).arg(&table).arg(&intra).arg(&flag).launch(cfg)? };
    Ok(())
}

/// The vertical scan of the `rows × bins` table, in `chunks` row chunks (one: no carries;
/// more: `sums` of `(chunks + 1) * bins` words); `col_blocks = ceil(bins / NT)`.
pub(crate) fn vertical_scan(
    gpu: &Gpu,
    k: &Kernels,
    table: &mut impl DevicePtrMut<u32>,
    rows: u64,
    bins: u64,
    chunks: u64,
    sums: Option<&mut ScratchSlice<'_, u32>>,
) -> Result<()> {
    at_least("table", table.len(), rows * bins)?;
    let col_blocks = bins.div_ceil(NT as u64);
    if rows == 0 || bins == 0 || col_blocks > i32::MAX as u64 {
        return Ok(());
    }
    let stream = gpu.stream();
    let (table, _t) = table.device_ptr_mut(stream);
    let rpc = rows.div_ceil(chunks.max(1));
    let grid = |c: u64| LaunchConfig { grid_dim: (col_blocks as u32, c as u32, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    let Some(sums) = sums.filter(|_| chunks > 1) else {
        // SAFETY: histogram_vscan(table, bins, rows, rows_per_chunk, carries): table holds
        // rows * bins words (checked), carries null; grid (col_blocks, 1).
        unsafe { k.vscan.args(stream).arg(&table).arg(&bins).arg(&rows).arg(&rows).arg(&NULL).launch(grid(1))? };
        return Ok(());
    };
    at_least("vertical scan sums", sums.len(), (chunks + 1) * bins)?;
    let (sums, _s) = sums.device_ptr_mut(stream);
    // Row c of the scanned sums = total of chunks < c: chunk c's carry.
    let (sum_rows, sum_rpc) = (chunks + 1, chunks + 1);
    // SAFETY: sums holds (chunks + 1) * bins words (checked); grids as each kernel documents.
    unsafe {
        k.vscan_reduce.args(stream).arg(&table).arg(&bins).arg(&rows).arg(&rpc).arg(&sums).launch(grid(chunks))?;
        k.vscan.args(stream).arg(&sums).arg(&bins).arg(&sum_rows).arg(&sum_rpc).arg(&NULL).launch(grid(1))?;
        k.vscan.args(stream).arg(&table).arg(&bins).arg(&rows).arg(&rpc).arg(&sums).launch(grid(chunks))?;
    }
    Ok(())
}
