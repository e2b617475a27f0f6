//! Merge-path CSR kernels of PTX module `spmv` (Merrill & Garland, SC'16): the partition (once
//! per matrix), the split-row scaling and the walk.
use gpu_device::atomic::{atomic_add_f32, atomic_add_f64};
use gpu_device::mem::{ld_global, stg};
use gpu_device::thread::{block_idx_x, grid_dim_x, grid_size_1d, index_1d_u64, sync_threads, thread_idx_x};
use gpu_device::warp::{shfl_down_sync, shfl_up_sync, FULL_MASK};

use crate::term::Hints;
use crate::{combine, merge_path_search, MergePathArgs, MERGE_VT, NT};

/// Steps of the merge path per tile (block) of `spmv_merge`.
const MERGE_NV: usize = (NT * MERGE_VT) as usize;
gpu_device::static_shared!(SPMV_MERGE_PROD_F32: [f32; MERGE_NV]);
gpu_device::static_shared!(SPMV_MERGE_PROD_F64: [f64; MERGE_NV]);
gpu_device::static_shared!(SPMV_MERGE_ENDS: [u32; MERGE_NV + 1]);

macro_rules! merge_kernels {
    ($t:ty, $atomic:ident, $mpart:ident, $msplit:ident, $merge:ident, $prod:ident) => {
        /// Merge-path CSR, the partition (once per matrix): for each thread `t < threads` of
        /// the walk, the row where its stretch of the merge path (diagonals `t·MERGE_VT ..`)
        /// starts, into `start_row[t]`.
        ///
        /// # Safety
        /// A valid CSR pointer array of `rows + 1` entries ending at `nnz`; `start_row` holds
        /// `threads` entries, `threads · MERGE_VT ≥ rows + nnz`; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $mpart(a: MergePathArgs<$t>) {
            let MergePathArgs { ptr, start_row, rows, nnz, threads, .. } = a;
            let vt = MERGE_VT as u64;
            let mut t = index_1d_u64();
            while t < threads {
                let diag = (t * vt).min(rows + nnz);
                // SAFETY: the search reads ptr[1..=rows] only; t < threads.
                unsafe { stg(start_row.add(t as usize), merge_path_search(diag, rows, nnz, |r| ld_global(ptr.add(r as usize + 1)) as u64) as u32) };
                t += grid_size_1d();
            }
        }

        /// Merge-path CSR, before each walk: `y[r] = beta * y[r]` (or 0) for every row `r` that
        /// a stretch boundary splits, once (by the first boundary inside it), as the walk adds
        /// the pieces of those rows atomically.
        ///
        /// # Safety
        /// As the partition, which has filled `start_row`; `y` holds `rows` values.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $msplit(a: MergePathArgs<$t>) {
            let MergePathArgs { ptr, y, start_row, rows, nnz, threads, beta, .. } = a;
            let vt = MERGE_VT as u64;
            let mut t = index_1d_u64();
            while t < threads {
                let diag = (t * vt).min(rows + nnz);
                // SAFETY: t < threads; r <= rows, so ptr[r] exists; y[r] when r < rows.
                unsafe {
                    let r = ld_global(start_row.add(t as usize)) as u64;
                    if r < rows {
                        let row_start = r + ld_global(ptr.add(r as usize)) as u64;
                        // Mid-row start (past the row's first diagonal), and the previous
                        // boundary not inside the row: the first split of row r.
                        if diag > row_start && (t == 0 || (t - 1) * vt <= row_start) {
                            let yr = y.add(r as usize);
                            stg(yr, if beta == 0.0 { 0.0 } else { beta * ld_global(yr) });
                        }
                    }
                }
                t += grid_size_1d();
            }
        }

        /// Merge-path CSR, the walk (Merrill & Garland, SC'16): thread `t` walks `MERGE_VT` steps
        /// of the merge of row ends with nonzeros from `start_row[t]`, so every thread has the
        /// same work whatever the row lengths. Rows wholly inside one stretch are written
        /// (`alpha·sum + beta·y`, deterministic); pieces of split rows are summed by row across
        /// the warp, then added atomically onto the split pass's `beta·y` (not bit-reproducible).
        ///
        /// # Safety
        /// The partition and the split pass run before on the same stream with the same
        /// `threads`, `y` and `beta`; column indices
        /// below `x`'s length; a 1-D grid of blocks of exactly `NT` threads.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $merge(a: MergePathArgs<$t>) {
            let MergePathArgs { ptr, idx, vals, x, y, start_row, rows, nnz, threads, alpha, beta } = a;
            // L2 hints: the matrix read once, x again and again.
            let h = Hints::new();
            let vt = MERGE_VT as u64;
            let total = rows + nnz;
            let tid = thread_idx_x() as u64;
            let lane = (tid % 32) as u32;
            let prod: *mut $t = $prod::ptr();
            let ends: *mut u32 = SPMV_MERGE_ENDS::ptr();
            let tiles = threads.div_ceil(NT as u64);
            // Block-uniform loop over tiles of NT threads' steps: every thread takes part in the
            // barriers and shuffles; threads past `threads` walk nothing.
            let mut tile = block_idx_x() as u64;
            while tile < tiles {
                let t0 = tile * NT as u64;
                let t = t0 + tid;
                // The tile's first and last coordinates, from the partition.
                // SAFETY: t0 < threads; start_row entries are <= rows.
                let r_begin = unsafe { ld_global(start_row.add(t0 as usize)) } as u64;
                let k_begin = (t0 * vt).min(total) - r_begin;
                let t_end = t0 + NT as u64;
                let (r_end, k_end) = if t_end < threads {
                    // SAFETY: t_end < threads.
                    let r = unsafe { ld_global(start_row.add(t_end as usize)) } as u64;
                    (r, (t_end * vt).min(total) - r)
                } else {
                    (rows, nnz)
                };
                // Stage the tile's products (at most NV: a step takes one nonzero) and row
                // ends (rows r_begin..=r_end below rows: at most NV + 1) in shared memory,
                // coalesced.
                let n_k = k_end - k_begin;
                let mut i = tid;
                while i < n_k {
                    let k = (k_begin + i) as usize;
                    // SAFETY: k < nnz; the column is below x's length; i < NV.
                    unsafe { *prod.add(i as usize) = h.term(vals, idx, x, k) };
                    i += NT as u64;
                }
                let n_r = (r_end + 1).min(rows).saturating_sub(r_begin);
                let mut i = tid;
                while i < n_r {
                    // SAFETY: r_begin + i < rows, so ptr[r_begin + i + 1] exists; i <= NV.
                    unsafe { *ends.add(i as usize) = ld_global(ptr.add((r_begin + i + 1) as usize)) };
                    i += NT as u64;
                }
                sync_threads();
                let d0 = (t * vt).min(total);
                let d1 = (d0 + vt).min(total);
                // SAFETY: t < threads; start_row[t] <= rows by phase 1.
                let mut r = if t < threads { unsafe { ld_global(start_row.add(t as usize)) as u64 } } else { rows };
                let r0 = r;
                let mut k = d0 - r.min(d0);
                // SAFETY: r <= rows, so ptr[r] exists.
                let split_head = r < rows && k > unsafe { ld_global(ptr.add(r as usize)) } as u64;
                let mut first = true;
                let mut head: $t = 0.0;
                let mut sum: $t = 0.0;
                let mut any = false;
                // SAFETY: r_begin <= r < rows, r <= r_end: a staged row end.
                let mut end = if r < rows { unsafe { *ends.add((r - r_begin) as usize) as u64 } } else { 0 };
                let mut d = d0;
                while d < d1 {
                    if r < rows && k < end {
                        // SAFETY: k_begin <= k < k_end: a staged product.
                        unsafe { sum += *prod.add((k - k_begin) as usize) };
                        k += 1;
                        any = true;
                    } else {
                        // The end of row r (r < rows: the path has rows row ends).
                        if first && split_head {
                            // The rest of a row begun by an earlier thread: to the reduction.
                            head = alpha * sum;
                        } else {
                            // SAFETY: r < rows.
                            unsafe {
                                let yr = y.add(r as usize);
                                let old = if beta == 0.0 { 0.0 } else { ld_global(yr) };
                                stg(yr, combine(alpha, sum, beta, old));
                            }
                        }
                        first = false;
                        sum = 0.0;
                        any = false;
                        r += 1;
                        // SAFETY: as above (r <= r_end while steps remain).
                        end = if r < rows && r <= r_end { unsafe { *ends.add((r - r_begin) as usize) as u64 } } else { 0 };
                    }
                    d += 1;
                }
                // Pieces of split rows, reduced by row across the warp before the atomics: a
                // lane's tail (the row its steps end inside) gets the next lane's head (the
                // same row, as a split head starts where the previous thread ended), then a
                // segmented suffix sum over lanes with equal tail rows (nondecreasing across
                // the warp); the first lane of each run adds the run's sum.
                let has_head = !first && split_head;
                let key: u64 = if any { r } else { u64::MAX };
                let mut val: $t = if any { alpha * sum } else { 0.0 };
                let next_head: $t = shfl_down_sync(FULL_MASK, head, 1);
                let next_has = shfl_down_sync(FULL_MASK, has_head as u32, 1) != 0;
                if lane < 31 && next_has {
                    val += next_head;
                }
                let mut dd = 1;
                while dd < 32 {
                    let other = shfl_down_sync(FULL_MASK, val, dd);
                    let other_key = shfl_down_sync(FULL_MASK, key, dd);
                    if lane + dd < 32 && other_key == key {
                        val += other;
                    }
                    dd *= 2;
                }
                let prev_key = shfl_up_sync(FULL_MASK, key, 1);
                if key != u64::MAX && (lane == 0 || prev_key != key) {
                    // SAFETY: key = r < rows.
                    unsafe { $atomic(y.add(key as usize), val) };
                }
                if lane == 0 && has_head {
                    // No lane before this one in the warp: its head alone.
                    // SAFETY: a split head's row r0 < rows.
                    unsafe { $atomic(y.add(r0 as usize), head) };
                }
                // The next tile overwrites the staged data.
                sync_threads();
                tile += grid_dim_x() as u64;
            }
        }
    };
}

merge_kernels!(f32, atomic_add_f32, spmv_merge_partition_f32, spmv_merge_split_f32, spmv_merge_f32, SPMV_MERGE_PROD_F32);
merge_kernels!(f64, atomic_add_f64, spmv_merge_partition_f64, spmv_merge_split_f64, spmv_merge_f64, SPMV_MERGE_PROD_F64);
