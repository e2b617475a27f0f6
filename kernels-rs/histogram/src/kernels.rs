//! Kernels of PTX module `histogram`.
use gpu_device::atomic::{atomic_min_u32, red_add_u32};
use gpu_device::dynamic_shared;
use gpu_device::intrinsics::popc;
use gpu_device::mem::{ld_global, ldg_u32, ldg_u32x4, stg};
use gpu_device::thread::{block_dim_x, block_idx_x, grid_dim_x, index_1d_u64, thread_idx_x};
use gpu_device::warp::{all_sync, lane_id, shfl_idx_sync, sync_warp, FULL_MASK};

use crate::{block, partition_range, warp, CountArgs, PartitionArgs, VscanArgs, NO_KEY, NT, VT};

dynamic_shared!(HIST_SMEM: u32);

/// The `VT` keys starting at `i` (`NO_KEY` past `n`), with one vector load when allowed.
///
/// # Safety
/// `keys` holds `n` words; with `vec_ok`, `keys` is 16-byte aligned.
#[inline(always)]
unsafe fn load_keys(keys: *const u32, n: u64, i: u64, vec_ok: bool) -> [u32; VT as usize] {
    // SAFETY: every index read is < n; the vector load is aligned when i % VT == 0 and vec_ok.
    unsafe {
        if vec_ok && i + VT as u64 <= n {
            return ldg_u32x4(keys.add(i as usize));
        }
        let mut k = [NO_KEY; VT as usize];
        for (j, kj) in k.iter_mut().enumerate() {
            if i + (j as u64) < n {
                *kj = ldg_u32(keys.add(i as usize + j));
            }
        }
        k
    }
}

/// Records index `i` of an out-of-range key in `*first_bad` (when `first_bad` is not null).
///
/// # Safety
/// `first_bad` is null or a valid global word.
#[inline(always)]
unsafe fn report_bad(first_bad: *mut u32, i: u64) {
    if !first_bad.is_null() {
        // SAFETY: forwarded to the caller; i < n <= u32::MAX.
        unsafe { atomic_min_u32(first_bad, i as u32) };
    }
}

/// Adds the counts of `keys[..n]` in `[0, bins)` to `counts`, through `copies` privatized copies
/// per block in dynamic shared memory (warp `w` uses copy `w % copies`). The bins are cut into
/// slices of `slice` bins; block row `blockIdx.y` counts only the keys of its slice (so bins that
/// do not fit shared memory at once are counted in several slices, each reading all keys). A warp
/// whose keys are all equal adds them with one shared atomic.
///
/// # Safety
/// `keys` holds `n <= u32::MAX` words (16-byte aligned if `vec_ok`), `counts` `bins` words,
/// `first_bad` is null or one word; blocks of `NT` threads, grid `(any, ceil(bins / slice))`,
/// and `copies * slice * 4` bytes of dynamic shared memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn histogram_shared(a: CountArgs) {
    let CountArgs { keys, counts, first_bad, n, bins, slice, copies, vec_ok } = a;
    let smem = HIST_SMEM::ptr();
    let tid = thread_idx_x();
    let lo = gpu_device::thread::block_idx_y() * slice;
    let width = slice.min(bins - lo);
    let report = lo == 0;
    // SAFETY: shared indices are < copies * width (key - lo < width); global ones < n and < bins.
    unsafe {
        block::zero_counts(smem, copies * width);
        let mine = smem.add(((tid / 32 % copies) * width) as usize);
        let step = grid_dim_x() as u64 * (NT * VT) as u64;
        let mut base = block_idx_x() as u64 * (NT * VT) as u64;
        while base < n {
            let i = base + (tid * VT) as u64;
            let k = load_keys(keys, n, i, vec_ok != 0);
            for (j, &key) in k.iter().enumerate() {
                // Keys below `lo` wrap to large values: one comparison tests the slice.
                let local = key.wrapping_sub(lo);
                let first = shfl_idx_sync(FULL_MASK, key, 0);
                if all_sync(FULL_MASK, key == first) {
                    // The whole warp holds one key (and all its lanes are in range: NO_KEY past
                    // the end is never a valid key, so such a warp adds nothing).
                    if lane_id() == 0 && local < width {
                        red_add_u32(mine.add(local as usize), 32);
                    }
                } else if local < width {
                    red_add_u32(mine.add(local as usize), 1);
                }
                if report && key >= bins && i + (j as u64) < n {
                    report_bad(first_bad, i + j as u64);
                }
            }
            base += step;
        }
        block::flush_counts(smem, copies, width, counts.add(lo as usize));
    }
}

/// Adds the counts of `keys[..n]` in `[0, bins)` to `counts` with warp-aggregated global atomics
/// (one atomic per distinct key of each warp step): for bins too many for shared memory.
///
/// # Safety
/// As `histogram_shared`, without shared memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn histogram_global(a: CountArgs) {
    let CountArgs { keys, counts, first_bad, n, bins, vec_ok, .. } = a;
    let tid = thread_idx_x();
    // SAFETY: as histogram_shared.
    unsafe {
        let step = grid_dim_x() as u64 * (NT * VT) as u64;
        let mut base = block_idx_x() as u64 * (NT * VT) as u64;
        while base < n {
            let i = base + (tid * VT) as u64;
            let k = load_keys(keys, n, i, vec_ok != 0);
            for (j, &key) in k.iter().enumerate() {
                warp::aggregated_increment(counts, key, key < bins);
                if key >= bins && i + (j as u64) < n {
                    report_bad(first_bad, i + j as u64);
                }
            }
            base += step;
        }
    }
}

/// The partitioned form: warp `p < parts` (global warp index) takes partition `p` of the keys
/// ([`partition_range`]) in order, 32 keys per step, counts it into row `p + 1` of the
/// `(parts + 1) × bins` table `table` (zeroed beforehand; row 0 stays zero) and writes
/// `intra[i]` = number of earlier keys of partition `p` equal to `keys[i]` (`NO_KEY` for keys
/// `>= bins`, which are not counted).
///
/// # Safety
/// `keys` and `intra` hold `n <= u32::MAX` words, `table` `(parts + 1) * bins` zeroed words,
/// `first_bad` is null or one word; blocks of `NT` threads covering `parts` warps.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn histogram_partition(a: PartitionArgs) {
    let PartitionArgs { keys, table, intra, first_bad, n, parts, bins } = a;
    let p = index_1d_u64() / 32;
    if p >= parts {
        return; // warp-uniform
    }
    let lane = lane_id();
    let (begin, end) = partition_range(n, parts, p);
    // SAFETY: row p + 1 <= parts of the table; key < bins inside it; i < end <= n.
    unsafe {
        let row = table.add(((p + 1) * bins as u64) as usize);
        let mut base = begin;
        while base < end {
            let i = base + lane as u64;
            let key = if i < end { ldg_u32(keys.add(i as usize)) } else { NO_KEY };
            let (peers, rank) = warp::match_rank(key);
            let valid = key < bins;
            let mut old = 0u32;
            if valid && rank == 0 {
                // Only this warp touches this row, and within one step each key has one leader.
                old = ld_global(row.add(key as usize));
                stg(row.add(key as usize), old + popc(peers));
            }
            let old = shfl_idx_sync(FULL_MASK, old, warp::leader(peers));
            if i < end {
                stg(intra.add(i as usize), if valid { old + rank } else { NO_KEY });
                if !valid {
                    report_bad(first_bad, i);
                }
            }
            // Orders this step's row updates before the next step's reads by other lanes.
            sync_warp(FULL_MASK);
            base += 32;
        }
    }
}

/// Column `b = blockIdx.x * NT + threadIdx.x` and row chunk `c = blockIdx.y`: the rows of the
/// chunk are `[c * rows_per_chunk, min(rows, (c + 1) * rows_per_chunk))`.
#[inline(always)]
fn column_chunk(rows: u64, rows_per_chunk: u64) -> (u64, u64, u64) {
    let c = gpu_device::thread::block_idx_y() as u64;
    let r0 = c * rows_per_chunk;
    (c, r0.min(rows), (r0 + rows_per_chunk).min(rows))
}

/// First pass of a chunked vertical scan: `sums[(c + 1) * bins + b]` = sum of column `b` over
/// row chunk `c` of `table`, and `sums[b] = 0`. Grid `(ceil(bins / NT), chunks)`.
///
/// # Safety
/// `table` holds `rows * bins` words, `sums` `(chunks + 1) * bins`; blocks of `NT` threads.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn histogram_vscan_reduce(a: VscanArgs) {
    let VscanArgs { table, sums, bins, rows, rows_per_chunk } = a;
    let b = block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64;
    if b >= bins {
        return;
    }
    let (c, r0, r1) = column_chunk(rows, rows_per_chunk);
    // SAFETY: r < rows, b < bins, c + 1 <= chunks.
    unsafe {
        let mut s = 0u32;
        for r in r0..r1 {
            s = s.wrapping_add(ld_global(table.add((r * bins + b) as usize)));
        }
        stg(sums.add(((c + 1) * bins + b) as usize), s);
        if c == 0 {
            stg(sums.add(b as usize), 0);
        }
    }
}

/// Inclusive scan down each column `b` of the rows of chunk `c` of `table`, starting from `carries[c * bins + b]` (from zero when `carries` is null). Grid
/// `(ceil(bins / NT), chunks)`.
///
/// # Safety
/// `table` holds `rows * bins` words, `carries` is null or `chunks * bins` words; blocks of
/// `NT` threads.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn histogram_vscan(a: VscanArgs) {
    let VscanArgs { table, sums: carries, bins, rows, rows_per_chunk } = a;
    let b = block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64;
    if b >= bins {
        return;
    }
    let (c, r0, r1) = column_chunk(rows, rows_per_chunk);
    // SAFETY: as histogram_vscan_reduce.
    unsafe {
        let mut acc = if carries.is_null() { 0 } else { ld_global(carries.add((c * bins + b) as usize)) };
        for r in r0..r1 {
            let p = table.add((r * bins + b) as usize);
            acc = acc.wrapping_add(ld_global(p));
            stg(p, acc);
        }
    }
}
