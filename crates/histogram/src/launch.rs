//! The only `unsafe` launches of the histogram kernels and the only raw device addresses of the
//! crate, with their grid sizing. The functions take typed buffers and check the lengths the
//! kernels rely on, so they are safe to call.
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, DeviceSlice, LaunchConfig};
use gpu_runtime::scratch::ScratchSlice;
use gpu_runtime::{arg_ptr, arg_ptr_mut, arg_ptr_mut_or_null, Gpu, KernelOf};
use histogram_kernels::{CountArgs, PartitionArgs, VscanArgs};

use crate::{Error, Result, Strategy, AUTO_SHARED_MAX_BINS, COPY_BUDGET, NT, SLICE_BINS, VT, WARPS};

/// `what` holds at least `need` words, else [`Error::LengthMismatch`].
fn at_least(what: &'static str, len: usize, need: u64) -> Result<()> {
    if (len as u64) < need {
        return Err(Error::LengthMismatch { what, expected: need, got: len as u64 });
    }
    Ok(())
}

/// The kernels, each with its argument struct (checked against the PTX at load).
pub(crate) struct Kernels {
    pub shared: KernelOf<CountArgs>,
    pub global: KernelOf<CountArgs>,
    pub partition: KernelOf<PartitionArgs>,
    pub vscan_reduce: KernelOf<VscanArgs>,
    pub vscan: KernelOf<VscanArgs>,
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
    let (keys, _k) = arg_ptr(keys, &stream);
    let (counts, _c) = arg_ptr_mut(counts, &stream);
    let (first_bad, _f) = arg_ptr_mut_or_null(flag, &stream);
    let props = gpu.props();
    let sms = props.sm_count.max(1) as u64;
    let vec_ok = (keys as usize % 16 == 0) as u32;
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
        let args = CountArgs { keys, counts, first_bad, n, bins, slice, copies, vec_ok };
        // SAFETY: histogram_shared(CountArgs): keys holds n words (aligned when vec_ok), counts
        // bins words, flag null or one word, grid.y = ceil(bins / slice), copies * slice words
        // of dynamic shared memory (at most 64 KiB; limit raised in `with_strategy`).
        unsafe { k.shared.launch(&stream, cfg, args)? };
    } else {
        let blocks = by_n.min(sms * 8);
        let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
        let args = CountArgs { keys, counts, first_bad, n, bins, slice: 0, copies: 0, vec_ok };
        // SAFETY: histogram_global(CountArgs): as above, without shared memory.
        unsafe { k.global.launch(&stream, cfg, args)? };
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
    let (keys, _k) = arg_ptr(keys, stream);
    let (table, _t) = arg_ptr_mut(table, stream);
    let (intra, _i) = arg_ptr_mut(intra, stream);
    let (first_bad, _f) = arg_ptr_mut_or_null(flag, stream);
    let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: histogram_partition(PartitionArgs): keys and intra hold n words, table (parts + 1)
    // * bins (checked), flag null or one word; parts warps in `blocks` blocks of NT.
    unsafe { k.partition.launch(stream, cfg, PartitionArgs { keys, table, intra, first_bad, n, parts, bins })? };
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
    let (table, _t) = arg_ptr_mut(table, stream);
    let rpc = rows.div_ceil(chunks.max(1));
    let grid = |c: u64| LaunchConfig { grid_dim: (col_blocks as u32, c as u32, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    let Some(sums) = sums.filter(|_| chunks > 1) else {
        let args = VscanArgs { table, sums: std::ptr::null_mut(), bins, rows, rows_per_chunk: rows };
        // SAFETY: histogram_vscan(VscanArgs): table holds rows * bins words (checked), no
        // carries; grid (col_blocks, 1).
        unsafe { k.vscan.launch(stream, grid(1), args)? };
        return Ok(());
    };
    at_least("vertical scan sums", sums.len(), (chunks + 1) * bins)?;
    let (sums, _s) = arg_ptr_mut(sums, stream);
    // Row c of the scanned sums = total of chunks < c: chunk c's carry.
    let chunked = VscanArgs { table, sums, bins, rows, rows_per_chunk: rpc };
    let carries = VscanArgs { table: sums, sums: std::ptr::null_mut(), bins, rows: chunks + 1, rows_per_chunk: chunks + 1 };
    // SAFETY: sums holds (chunks + 1) * bins words (checked); grids as each kernel documents.
    unsafe {
        k.vscan_reduce.launch(stream, grid(chunks), chunked)?;
        k.vscan.launch(stream, grid(1), carries)?;
        k.vscan.launch(stream, grid(chunks), chunked)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Every kernel takes exactly its argument struct in the committed PTX (what
    /// `Gpu::kernel_of` checks at load, here without a GPU).
    #[test]
    fn argument_structs_match_the_ptx() {
        use super::{CountArgs, PartitionArgs, VscanArgs};
        use gpu_runtime::check_signature;
        let m = &crate::MODULE;
        for name in ["histogram_shared", "histogram_global"] {
            check_signature::<CountArgs>(m, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        check_signature::<PartitionArgs>(m, "histogram_partition").unwrap();
        for name in ["histogram_vscan_reduce", "histogram_vscan"] {
            check_signature::<VscanArgs>(m, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(check_signature::<VscanArgs>(m, "histogram_shared").is_err());
    }
}
