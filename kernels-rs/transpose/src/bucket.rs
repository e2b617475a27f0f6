//! BucketTrans's bucket pass, as a block-level building block: one block per bucket of column
//! groups. The nonzeros arrive partitioned by bucket (stable: input order inside a bucket).
//!
//! 1. The block finds its bucket's range of the partitioned keys (a block-wide `NT`-ary search).
//! 2. With `pre = 0` (a group is one column) it counts its columns in shared memory and writes
//!    their pointers itself (the index-to-pointers step, folded in); otherwise the pointer is
//!    given.
//! 3. Rounds of [`BUCKET_NV`] nonzeros: each is ranked among its group's nonzeros of the round in
//!    input order (warp match-rank, per-warp counters), the round is staged in shared memory in
//!    group order, and written out in runs: the group's cursor plus the position in its run, so
//!    consecutive threads write consecutive slots.
use gpu_device::intrinsics::popc;
use gpu_device::mem::ldg_u32;
use gpu_device::thread::{block_idx_x, sync_threads, sync_threads_count, thread_idx_x};
use gpu_device::warp::{inclusive_sum_u32, lane_id, shfl_idx_sync, sync_warp, FULL_MASK};
use gpu_device::{dynamic_shared, static_shared, unroll};
use histogram_kernels::warp::match_rank;

use crate::{BUCKET_MAX_LOW, BUCKET_NV, BUCKET_VT, NT};

const WARPS: usize = (NT / 32) as usize;
const GROUPS: usize = 1 << BUCKET_MAX_LOW;
const _: () = assert!(BUCKET_VT == 8, "the unrolled item loops list 8 indices");

// Per-warp group counters of one round (at most 32 * BUCKET_VT = 256 per warp, so u16), then
// each warp's offset inside the group's run; warp w's at w << low.
static_shared!(BK_WARP: [u16; WARPS * GROUPS]);
// Each group's next output slot.
static_shared!(BK_CURSOR: [u32; GROUPS]);
// Dynamic: the round's group starts (GROUPS words), then the staged rows (NV words), groups
// (NV u16) and values (NV values), [`crate::bucket_stage_bytes`] in all.
dynamic_shared!(BK_STAGE: u8);

/// The exclusive scan of `a[0..len]` in shared memory by one warp (`len / 32` entries a lane, a
/// shuffle scan of the lanes' sums); returns the total to every lane.
///
/// # Safety
/// Called by all 32 lanes of one warp; `a` holds `len` shared words.
#[inline(always)]
unsafe fn warp_exclusive_scan(a: *mut u32, len: u32) -> u32 {
    let lane = lane_id();
    let per = len.div_ceil(32);
    let first = (lane * per).min(len);
    let last = (first + per).min(len);
    // SAFETY: indices < len.
    unsafe {
        let mut sum = 0u32;
        for i in first..last {
            sum += *a.add(i as usize);
        }
        let inc = inclusive_sum_u32(sum);
        let total = shfl_idx_sync(FULL_MASK, inc, 31);
        let mut run = inc - sum;
        for i in first..last {
            let c = *a.add(i as usize);
            *a.add(i as usize) = run;
            run += c;
        }
        total
    }
}

/// The first index of `keys[0..len]` (nondecreasing under `>> shift`) whose `key >> shift` is
/// at least `target`, found by the whole block (`NT` probes a step).
///
/// # Safety
/// Called by every thread of the block (uniform arguments); `keys` holds `len` words.
#[inline(always)]
unsafe fn block_lower_bound(keys: *const u32, len: u64, shift: u32, target: u64) -> u64 {
    let tid = thread_idx_x() as u64;
    let (mut lo, mut hi) = (0u64, len);
    // The answer is in lo..=hi.
    while lo < hi {
        let step = (hi - lo).div_ceil(NT as u64);
        let p = lo + tid * step;
        // SAFETY: p < hi <= len when read.
        let below = p < hi && ((unsafe { ldg_u32(keys.add(p as usize)) } >> shift) as u64) < target;
        // The probes below the target are a prefix of the probes.
        let c = sync_threads_count(below) as u64;
        if c == 0 {
            hi = lo;
        } else {
            hi = hi.min(lo + c * step);
            lo += (c - 1) * step + 1;
        }
    }
    lo
}

/// The bucket pass for bucket `blockIdx.x`: groups are `2^pre` columns (`col >> pre`), buckets
/// `2^low` groups; the bucket's nonzeros are those of `keys` (the partitioned column indices,
/// with `rows` and `vals`) whose `key >> (pre + low)` is the bucket. Each goes to
/// `out[colptr[first column of its group] + its rank among the group's nonzeros]`. With `pre =
/// 0` the block writes `colptr` for its columns (the last bucket also `colptr[n] = nnz`);
/// otherwise `colptr` is read.
///
/// # Safety
/// [`crate::bucket_count`]`(n, pre, low)` blocks of [`NT`] threads with
/// [`crate::bucket_stage_bytes`]`(size_of::<V>())` bytes of dynamic shared memory; `low <=
/// BUCKET_MAX_LOW`, `pre + low < 32`; `keys` holds `nnz` column indices `< n`, nondecreasing
/// under `>> (pre + low)`, in input order inside a bucket; `rows`, `out_rows` (and `vals`,
/// `out_vals` unless `vals` is null) hold `nnz` items; `colptr` holds `n + 1` words, with
/// `pre > 0` the column pointer of these keys.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn bucket_pass<V: Copy + Default>(
    keys: *const u32,
    rows: *const u32,
    vals: *const V,
    nnz: u64,
    n: u64,
    pre: u32,
    low: u32,
    colptr: *mut u32,
    out_rows: *mut u32,
    out_vals: *mut V,
) {
    let (b, tid, lane) = (block_idx_x() as u64, thread_idx_x(), lane_id());
    let warp = (tid / 32) as usize;
    let (wh, cursor) = (BK_WARP::ptr(), BK_CURSOR::ptr());
    let stage = BK_STAGE::ptr();
    let starts = stage as *mut u32;
    // SAFETY: offsets inside bucket_stage_bytes (GROUPS words, NV words, NV u16, NV values; the
    // values start 8-aligned).
    let (srows, sgroup) = unsafe { (stage.add(4 * GROUPS) as *mut u32, stage.add(4 * GROUPS + 4 * BUCKET_NV as usize) as *mut u16) };
    let svals = unsafe { stage.add(4 * GROUPS + 6 * BUCKET_NV as usize) as *mut V };
    let shift = pre + low;
    let g0 = b << low;
    let width = (n.div_ceil(1 << pre) - g0).min(1 << low) as u32;
    let lmask = (1usize << low) - 1;
    // SAFETY: shared indices < WARPS << low, < width <= 2^low, < BUCKET_NV; global item indices
    // in begin..end <= nnz; colptr indices <= n; output slots are the final slots of a valid
    // column pointer of these keys, each written once.
    unsafe {
        let begin = block_lower_bound(keys, nnz, shift, b);
        let end = block_lower_bound(keys, nnz, shift, b + 1);
        if pre == 0 {
            // The bucket's column counts, scanned: its part of the column pointer.
            let mut g = tid;
            while g < width {
                *starts.add(g as usize) = 0;
                g += NT;
            }
            sync_threads();
            let mut k = begin + tid as u64;
            while k < end {
                gpu_device::atomic::red_add_u32(starts.add((ldg_u32(keys.add(k as usize)) as u64 - g0) as usize), 1);
                k += NT as u64;
            }
            sync_threads();
            if warp == 0 {
                warp_exclusive_scan(starts, width);
            }
            sync_threads();
            let mut g = tid;
            while g < width {
                let v = begin as u32 + *starts.add(g as usize);
                *cursor.add(g as usize) = v;
                *colptr.add((g0 + g as u64) as usize) = v;
                g += NT;
            }
            if g0 + width as u64 == n && tid == 0 {
                *colptr.add(n as usize) = nnz as u32;
            }
        } else {
            let mut g = tid;
            while g < width {
                *cursor.add(g as usize) = *colptr.add((((g0 + g as u64) << pre).min(n)) as usize);
                g += NT;
            }
        }
        let mut i = tid as usize;
        while i < WARPS << low {
            *wh.add(i) = 0;
            i += NT as usize;
        }
        sync_threads();
        let mut start = begin;
        while start < end {
            // Warp-striped: warp w holds positions seg + i * 32 + lane, in input order.
            let seg = start + warp as u64 * 32 * BUCKET_VT as u64;
            let mut group = [0u32; BUCKET_VT as usize];
            let mut rank = [0u32; BUCKET_VT as usize];
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                let k = seg + (i as u64) * 32 + lane as u64;
                if k < end {
                    group[i] = (ldg_u32(keys.add(k as usize)) >> pre) - g0 as u32;
                }
            });
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                let valid = seg + (i as u64) * 32 + (lane as u64) < end;
                // Past the end each lane is a group of its own.
                let key = if valid { group[i] } else { GROUPS as u32 + lane };
                let (peers, r) = match_rank(key);
                let slot = wh.add((warp << low) + (key as usize & lmask));
                let old = if valid { *slot as u32 } else { 0 };
                sync_warp(FULL_MASK);
                if valid && r == 0 {
                    *slot = (old + popc(peers)) as u16;
                }
                sync_warp(FULL_MASK);
                rank[i] = old + r;
            });
            sync_threads();
            // Per group: each warp's offset in the group's run, and the run's length.
            let mut g = tid as usize;
            while g < width as usize {
                let mut run = 0u32;
                for w in 0..WARPS {
                    let c = *wh.add((w << low) + g) as u32;
                    *wh.add((w << low) + g) = run as u16;
                    run += c;
                }
                *starts.add(g) = run;
                g += NT as usize;
            }
            sync_threads();
            if warp == 0 {
                warp_exclusive_scan(starts, width);
            }
            sync_threads();
            // Stage in group order.
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                let k = seg + (i as u64) * 32 + lane as u64;
                if k < end {
                    let g = group[i] as usize;
                    let s = (*starts.add(g) + *wh.add((warp << low) + g) as u32 + rank[i]) as usize;
                    *srows.add(s) = ldg_u32(rows.add(k as usize));
                    *sgroup.add(s) = g as u16;
                    if !vals.is_null() {
                        *svals.add(s) = *vals.add(k as usize);
                    }
                }
            });
            sync_threads();
            // Write out in runs: consecutive threads, consecutive slots of a group.
            let count = (end - start).min(BUCKET_NV as u64) as u32;
            let mut k = tid;
            while k < count {
                let g = *sgroup.add(k as usize) as usize;
                let at = (*cursor.add(g) + k - *starts.add(g)) as usize;
                *out_rows.add(at) = *srows.add(k as usize);
                if !vals.is_null() {
                    *out_vals.add(at) = *svals.add(k as usize);
                }
                k += NT;
            }
            sync_threads();
            // Advance the cursors; clear the counters for the next round.
            let mut g = tid as usize;
            while g < width as usize {
                let next = if g + 1 < width as usize { *starts.add(g + 1) } else { count };
                *cursor.add(g) += next - *starts.add(g);
                for w in 0..WARPS {
                    *wh.add((w << low) + g) = 0;
                }
                g += NT as usize;
            }
            sync_threads();
            start += BUCKET_NV as u64;
        }
    }
}
