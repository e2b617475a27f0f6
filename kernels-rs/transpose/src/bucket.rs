//! BucketTrans's bucket pass, as a block-level building block: one block per bucket of column
//! groups, the bucket's nonzeros (already partitioned by bucket, in input order inside it) taken
//! in rounds of [`BUCKET_NV`], each nonzero ranked among its group's nonzeros in input order and
//! written straight to its final slot, `colptr[group start] + rank`.
//!
//! Per round: warp match-rank over the group ([`histogram_kernels::warp::match_rank`]) and
//! per-warp group counters give each nonzero its rank inside the warp's run; the counters of
//! the warps before it and the group's running cursor (the column pointer at the bucket's start,
//! advanced round by round) complete it. Only counters a round touched are read, reset and
//! advanced, so a round costs the same whatever the bucket's width.
use gpu_device::intrinsics::popc;
use gpu_device::mem::ldg_u32;
use gpu_device::thread::{block_idx_x, sync_threads, thread_idx_x};
use gpu_device::warp::{lane_id, sync_warp, FULL_MASK};
use gpu_device::{static_shared, unroll};
use histogram_kernels::warp::match_rank;

use crate::{BUCKET_MAX_LOW, BUCKET_NV, BUCKET_VT, NT};

const WARPS: usize = (NT / 32) as usize;
const GROUPS: usize = 1 << BUCKET_MAX_LOW;
const _: () = assert!(BUCKET_VT == 8, "the unrolled item loops list 8 indices");

// Per-warp group counters of one round: at most 32 * BUCKET_VT = 256 per warp, so u16
// (warp-major: warp w's counters at w << low).
static_shared!(BK_WARP: [u16; WARPS * GROUPS]);
// Each group's next output slot.
static_shared!(BK_CURSOR: [u32; GROUPS]);

/// The bucket pass for bucket `blockIdx.x`: groups are `2^pre` columns (`col >> pre`), buckets
/// `2^low` groups; the bucket's nonzeros are `cols[begin..end]` (with `rows`, `vals`) where
/// `begin`/`end` are the column pointer at its first column and past its last. Each goes to
/// `out[colptr[first column of its group] + its rank among the group's nonzeros of the bucket]`.
///
/// # Safety
/// `ceil(ceil(n / 2^pre) / 2^low)` blocks of [`NT`] threads; `low <= BUCKET_MAX_LOW`, `pre + low
/// < 32`; `colptr` holds the `n + 1` column pointers of the column indices `cols` (each `< n`,
/// partitioned by bucket: bucket `b`'s nonzeros at `colptr` of its first column onwards),
/// `cols`, `rows` and `out_rows` (and `vals`, `out_vals` unless `vals` is null) hold
/// `colptr[n]` items.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn bucket_pass<V: Copy + Default>(cols: *const u32, rows: *const u32, vals: *const V, n: u64, pre: u32, low: u32, colptr: *const u32, out_rows: *mut u32, out_vals: *mut V) {
    let (b, tid, lane) = (block_idx_x() as u64, thread_idx_x(), lane_id());
    let warp = (tid / 32) as usize;
    let (wh, cursor) = (BK_WARP::ptr(), BK_CURSOR::ptr());
    let group_cols = 1u64 << pre;
    let g0 = b << low;
    let groups_total = n.div_ceil(group_cols);
    let width = (groups_total - g0).min(1 << low) as u32;
    let col_at = |g: u64| (g * group_cols).min(n) as usize;
    let mask = (1usize << low) - 1;
    // SAFETY: shared indices < WARPS << low and < 2^low (low <= BUCKET_MAX_LOW); colptr indices
    // <= n; item indices in begin..end <= colptr[n]; output slots are the distinct final slots
    // of a valid column pointer.
    unsafe {
        let begin = ldg_u32(colptr.add(col_at(g0))) as u64;
        let end = ldg_u32(colptr.add(col_at(g0 + width as u64))) as u64;
        let mut g = tid;
        while g < width {
            *cursor.add(g as usize) = ldg_u32(colptr.add(col_at(g0 + g as u64)));
            g += NT;
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
            let mut row = [0u32; BUCKET_VT as usize];
            let mut val = [V::default(); BUCKET_VT as usize];
            let mut rank = [0u32; BUCKET_VT as usize];
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                let k = seg + (i as u64) * 32 + lane as u64;
                if k < end {
                    group[i] = (ldg_u32(cols.add(k as usize)) >> pre) - g0 as u32;
                    row[i] = ldg_u32(rows.add(k as usize));
                    if !vals.is_null() {
                        val[i] = *vals.add(k as usize);
                    }
                }
            });
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                let valid = seg + (i as u64) * 32 + (lane as u64) < end;
                // Past the end each lane is a group of its own.
                let key = if valid { group[i] } else { GROUPS as u32 + lane };
                let (peers, r) = match_rank(key);
                let slot = wh.add((warp << low) + (key as usize & mask));
                let old = if valid { *slot as u32 } else { 0 };
                sync_warp(FULL_MASK);
                if valid && r == 0 {
                    *slot = (old + popc(peers)) as u16;
                }
                sync_warp(FULL_MASK);
                rank[i] = old + r;
            });
            sync_threads();
            // Slots; the group's last nonzero of the round remembers the round's count.
            let mut advance = [0u32; BUCKET_VT as usize];
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                if seg + (i as u64) * 32 + (lane as u64) < end {
                    let gi = group[i] as usize;
                    let (mut before, mut total) = (0u32, 0u32);
                    for w in 0..WARPS {
                        let c = *wh.add((w << low) + gi) as u32;
                        total += c;
                        if w < warp {
                            before += c;
                        }
                    }
                    let within = before + rank[i];
                    let at = (*cursor.add(gi) + within) as usize;
                    *out_rows.add(at) = row[i];
                    if !vals.is_null() {
                        *out_vals.add(at) = val[i];
                    }
                    if within + 1 == total {
                        advance[i] = total;
                    }
                }
            });
            sync_threads();
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                if seg + (i as u64) * 32 + (lane as u64) < end {
                    let gi = group[i] as usize;
                    *wh.add((warp << low) + gi) = 0;
                    if advance[i] != 0 {
                        *cursor.add(gi) += advance[i];
                    }
                }
            });
            sync_threads();
            start += BUCKET_NV as u64;
        }
    }
}
