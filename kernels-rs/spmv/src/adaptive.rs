//! CSR-adaptive kernels of PTX module `spmv` (after Greathouse & Daga, SC'14): the matrix is the
//! CSR itself plus row blocks (`block_row`, `block_nz`: entry `i` starts at row `block_row[i]`,
//! nonzero `block_nz[i]`; entries from [`adaptive_entries`]). Block `i` covers rows
//! `block_row[i] .. block_row[i + 1]` and nonzeros `block_nz[i] .. block_nz[i + 1]`:
//! - several rows (fewer than `2 · ADAPTIVE_CHUNK` nonzeros): CSR-stream, the products staged
//!   in shared memory with coalesced loads, then a power-of-two group of lanes per row sums it;
//! - one whole row: CSR-vector with the whole block (a block reduction);
//! - a piece of a row longer than [`ADAPTIVE_LONG`] (`block_row[i + 1] == block_row[i]`, or a
//!   start past the row's first nonzero): CSR-vectorL, a block reduction added atomically onto
//!   `beta · y` written by `spmv_adaptive_split`.
//!
//! Deterministic except for the rows cut in pieces.
use gpu_device::atomic::{atomic_add_f32, atomic_add_f64};
use gpu_device::mem::{ld_global, ldg_u32, stg};
use gpu_device::thread::{block_idx_x, grid_dim_x, grid_size_1d, index_1d_u64, sync_threads, thread_idx_x};

use crate::reduce::{block_sum, group_sum};
use crate::term::Hints;
use crate::{adaptive_entries, combine, AdaptiveArgs, AdaptiveBuildArgs, ADAPTIVE_LONG, ADAPTIVE_NV, NT};

gpu_device::static_shared!(SPMV_ADAPTIVE_PROD_F32: [f32; ADAPTIVE_NV]);
gpu_device::static_shared!(SPMV_ADAPTIVE_PROD_F64: [f64; ADAPTIVE_NV]);
gpu_device::static_shared!(SPMV_ADAPTIVE_TEMP_F32: [f32; 32]);
gpu_device::static_shared!(SPMV_ADAPTIVE_TEMP_F64: [f64; 32]);

/// Entry counts: `count[r] = adaptive_entries(r)` for `r ≤ rows`, `count[rows + 1] = 0` (an
/// exclusive scan gives each row's first entry and the total).
///
/// # Safety
/// A valid CSR pointer array of `rows + 1` entries; `count` holds `rows + 2`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_adaptive_counts(a: AdaptiveBuildArgs) {
    let AdaptiveBuildArgs { ptr, count, rows, .. } = a;
    let mut r = index_1d_u64();
    while r <= rows + 1 {
        // SAFETY: adaptive_entries reads ptr[0 ..= rows] only; r <= rows + 1.
        unsafe {
            let c = if r <= rows { adaptive_entries(r, rows, |i| ld_global(ptr.add(i as usize)) as u64) as u32 } else { 0 };
            stg(count.add(r as usize), c)
        };
        r += grid_size_1d();
    }
}

/// Writes row `r`'s entries from `offset[r]`: `(r, ptr[r] + j · ADAPTIVE_LONG)` for each of its
/// `count` entries.
///
/// # Safety
/// `offset` the exclusive scan of `spmv_adaptive_counts`; `block_row`, `block_nz` hold the
/// total; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_adaptive_write(a: AdaptiveBuildArgs) {
    let AdaptiveBuildArgs { ptr, offset, block_row, block_nz, rows, .. } = a;
    let mut r = index_1d_u64();
    while r <= rows {
        // SAFETY: r <= rows; the row's entries lie between offset[r] and offset[r + 1].
        unsafe {
            let (o0, o1) = (ld_global(offset.add(r as usize)), ld_global(offset.add(r as usize + 1)));
            let start = ld_global(ptr.add(r as usize));
            for j in 0..o1 - o0 {
                stg(block_row.add((o0 + j) as usize), r as u32);
                stg(block_nz.add((o0 + j) as usize), start + j * ADAPTIVE_LONG as u32);
            }
        }
        r += grid_size_1d();
    }
}

macro_rules! adaptive_kernels {
    ($t:ty, $atomic:ident, $split:ident, $adaptive:ident, $prod:ident, $temp:ident) => {
        /// Before each product: `y[r] = beta · y[r]` (or 0) for each row cut in pieces, by its
        /// first piece's entry.
        ///
        /// # Safety
        /// `blocks + 1` row-block entries of this CSR; `y` holds `rows`; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $split(a: AdaptiveArgs<$t>) {
            let AdaptiveArgs { ptr, block_row, block_nz, y, blocks, beta, .. } = a;
            let mut i = index_1d_u64();
            while i < blocks {
                // SAFETY: i + 1 <= blocks; rows of entries below the last are < rows.
                unsafe {
                    let r = ld_global(block_row.add(i as usize));
                    if ld_global(block_row.add(i as usize + 1)) == r && ld_global(block_nz.add(i as usize)) == ld_global(ptr.add(r as usize)) {
                        let yr = y.add(r as usize);
                        stg(yr, if beta == 0.0 { 0.0 } else { beta * ld_global(yr) });
                    }
                }
                i += grid_size_1d();
            }
        }

        /// The product: block per row block (grid-stride over blocks).
        ///
        /// # Safety
        /// A valid CSR with its `blocks + 1` row-block entries; `spmv_adaptive_split` run
        /// before on the same stream with the same `beta` and `y`; columns below `x`'s length;
        /// `y` holds `rows`; a 1-D grid of blocks of exactly `NT` threads.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $adaptive(a: AdaptiveArgs<$t>) {
            let AdaptiveArgs { ptr, idx, vals, x, y, block_row, block_nz, blocks, alpha, beta } = a;
            // L2 hints: the matrix read once, x again and again.
            let h = Hints::new();
            let tid = thread_idx_x();
            // Shared-window address (LDS/STS), read-only loads through ld.global.nc.
            let prod = $prod::smem();
            let temp: *mut $t = $temp::ptr();
            let mut b = block_idx_x() as u64;
            while b < blocks {
                // SAFETY: entries b, b + 1 exist; nonzeros z0..z1 and rows r0..r1 lie inside the
                // CSR; staged products below ADAPTIVE_NV (a multi-row block has fewer).
                unsafe {
                    let (r0, r1) = (ldg_u32(block_row.add(b as usize)) as u64, ldg_u32(block_row.add(b as usize + 1)) as u64);
                    let (z0, z1) = (ldg_u32(block_nz.add(b as usize)) as u64, ldg_u32(block_nz.add(b as usize + 1)) as u64);
                    let piece = r1 == r0 || z0 != ldg_u32(ptr.add(r0 as usize)) as u64;
                    if piece || r1 - r0 == 1 {
                        // One row or a piece of one: the whole block strides it.
                        let mut sum: $t = 0.0;
                        let mut k = z0 + tid as u64;
                        while k < z1 {
                            sum += h.term(vals, idx, x, k as usize);
                            k += NT as u64;
                        }
                        let total = block_sum(temp, sum);
                        if tid == 0 {
                            let yr = y.add(r0 as usize);
                            if piece {
                                $atomic(yr, alpha * total);
                            } else {
                                let old = if beta == 0.0 { 0.0 } else { ld_global(yr) };
                                stg(yr, combine(alpha, total, beta, old));
                            }
                        }
                    } else {
                        // CSR-stream.
                        let mut k = z0 + tid as u64;
                        while k < z1 {
                            prod.add((k - z0) as usize).st(h.term(vals, idx, x, k as usize));
                            k += NT as u64;
                        }
                        sync_threads();
                        let n_rows = (r1 - r0) as u32;
                        // Lanes per row: the largest power of two ≤ NT / n_rows, at most 32 (one
                        // lane per row, rows tid, tid + NT, ..., when a block has more than NT).
                        let per = (NT / n_rows).clamp(1, 32);
                        let lanes = 1u32 << (31 - per.leading_zeros());
                        let (first, lane) = (tid / lanes, tid % lanes);
                        // Every group takes the same number of turns (the group sums are
                        // warp-wide).
                        let mut row = first;
                        while row < n_rows.next_multiple_of(NT / lanes) {
                            let mut sum: $t = 0.0;
                            if row < n_rows {
                                let r = r0 + row as u64;
                                let (b0, e0) = (ldg_u32(ptr.add(r as usize)) as u64 - z0, ldg_u32(ptr.add(r as usize + 1)) as u64 - z0);
                                let mut k = b0 + lane as u64;
                                while k < e0 {
                                    sum += prod.add(k as usize).ld();
                                    k += lanes as u64;
                                }
                            }
                            let total = group_sum(sum, lanes);
                            if row < n_rows && lane == 0 {
                                let yr = y.add((r0 + row as u64) as usize);
                                let old = if beta == 0.0 { 0.0 } else { ld_global(yr) };
                                stg(yr, combine(alpha, total, beta, old));
                            }
                            row += NT / lanes;
                        }
                        sync_threads();
                    }
                }
                b += grid_dim_x() as u64;
            }
        }
    };
}

adaptive_kernels!(f32, atomic_add_f32, spmv_adaptive_split_f32, spmv_adaptive_f32, SPMV_ADAPTIVE_PROD_F32, SPMV_ADAPTIVE_TEMP_F32);
adaptive_kernels!(f64, atomic_add_f64, spmv_adaptive_split_f64, spmv_adaptive_f64, SPMV_ADAPTIVE_PROD_F64, SPMV_ADAPTIVE_TEMP_F64);
