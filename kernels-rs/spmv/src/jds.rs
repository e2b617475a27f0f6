//! JDS kernels of PTX module `spmv`: rows sorted by length (longest first, ties by row), the
//! `d`-th entries of the sorted rows stored together as jagged diagonal `d`
//! (`jd_ptr[d] .. jd_ptr[d + 1]`, one entry per row longer than `d`), and `perm` mapping a
//! sorted position back to its row.
use gpu_device::thread::{grid_size_1d, index_1d_u64};

use crate::term::Hints;
use crate::{combine, jds_rows_longer};

/// Sort keys `max_len − len_r` (ascending = longest first; a stable sort keeps rows of equal
/// length in order) and the identity permutation.
///
/// # Safety
/// `ptr` holds `rows + 1` nondecreasing entries with differences `≤ max_len`; `keys` and `perm`
/// hold `rows`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_jds_keys(rows: u64, ptr: *const u32, max_len: u32, keys: *mut u32, perm: *mut u32) {
    let mut r = index_1d_u64();
    while r < rows {
        // SAFETY: r < rows.
        unsafe {
            *keys.add(r as usize) = max_len - (*ptr.add(r as usize + 1) - *ptr.add(r as usize));
            *perm.add(r as usize) = r as u32;
        }
        r += grid_size_1d();
    }
}

/// Diagonal widths: `count[d]` = rows longer than `d` for `d < max_len`, `count[max_len] = 0`
/// (an exclusive scan gives `jd_ptr`).
///
/// # Safety
/// `keys` holds `rows` sorted keys from `spmv_jds_keys`; `count` holds `max_len + 1`; any 1-D
/// grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_jds_counts(rows: u64, keys: *const u32, max_len: u32, count: *mut u32) {
    let mut d = index_1d_u64();
    while d <= max_len as u64 {
        // SAFETY: d <= max_len; keys holds rows sorted entries.
        unsafe { *count.add(d as usize) = if d < max_len as u64 { jds_rows_longer(d as u32, max_len, keys, rows) as u32 } else { 0 } };
        d += grid_size_1d();
    }
}

/// `inv[perm[i]] = i`.
///
/// # Safety
/// `perm` is a permutation of `0..rows`; `inv` holds `rows`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_jds_invert(rows: u64, perm: *const u32, inv: *mut u32) {
    let mut i = index_1d_u64();
    while i < rows {
        // SAFETY: perm[i] < rows.
        unsafe { *inv.add(*perm.add(i as usize) as usize) = i as u32 };
        i += grid_size_1d();
    }
}

macro_rules! jds_kernels {
    ($t:ty, $fill:ident, $jds:ident) => {
        /// JDS from CSR: nonzero `k` of row `r = row_of[k]` at position `d` goes to `jd_ptr[d] +
        /// inv[r]` (thread per nonzero).
        ///
        /// # Safety
        /// A valid CSR of `nnz` nonzeros (`ptr`, `idx`, `vals`), `row_of` their rows, `inv` the
        /// inverse of the sort, `jd_ptr` its diagonal pointers; `col`/`val` hold `nnz`; any 1-D
        /// grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $fill(
            nnz: u64,
            ptr: *const u32,
            row_of: *const u32,
            inv: *const u32,
            jd_ptr: *const u32,
            idx: *const u32,
            vals: *const $t,
            col: *mut u32,
            val: *mut $t,
        ) {
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: k < nnz; d below the row's length, below max_len; the row's sorted
                // position is below the diagonal's width.
                unsafe {
                    let r = *row_of.add(k as usize) as usize;
                    let d = k as u32 - *ptr.add(r);
                    let o = (*jd_ptr.add(d as usize) + *inv.add(r)) as usize;
                    *col.add(o) = *idx.add(k as usize);
                    *val.add(o) = *vals.add(k as usize);
                }
                k += grid_size_1d();
            }
        }

        /// JDS product, thread per sorted row `i`: diagonals `d = 0, 1, …` while row `i` is in
        /// them (`jd_ptr[d + 1] − jd_ptr[d] > i`), then `y[perm[i]] = alpha · sum + beta ·
        /// y[perm[i]]`. Deterministic; the same sums as CSR-scalar.
        ///
        /// # Safety
        /// A valid JDS: `perm` a permutation of `0..rows`, `jd_ptr` of `diags + 1` nondecreasing
        /// entries with nonincreasing widths `≤ rows`, columns below `x`'s length; `y` holds
        /// `rows`; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $jds(
            rows: u64,
            diags: u64,
            perm: *const u32,
            jd_ptr: *const u32,
            col: *const u32,
            val: *const $t,
            x: *const $t,
            alpha: $t,
            beta: $t,
            y: *mut $t,
        ) {
            // L2 hints: the matrix read once, x again and again.
            let h = Hints::new();
            let mut i = index_1d_u64();
            while i < rows {
                // SAFETY: d < diags; i below the diagonal's width, so the slot is inside it.
                unsafe {
                    let mut sum: $t = 0.0;
                    let mut d = 0;
                    let mut start = *jd_ptr as u64;
                    while d < diags {
                        let end = *jd_ptr.add(d as usize + 1) as u64;
                        if end - start <= i {
                            break;
                        }
                        let s = (start + i) as usize;
                        sum += h.term(val, col, x, s);
                        start = end;
                        d += 1;
                    }
                    let r = *perm.add(i as usize) as usize;
                    let old = if beta == 0.0 { 0.0 } else { *y.add(r) };
                    *y.add(r) = combine(alpha, sum, beta, old);
                }
                i += grid_size_1d();
            }
        }
    };
}

jds_kernels!(f32, spmv_jds_fill_f32, spmv_jds_f32);
jds_kernels!(f64, spmv_jds_fill_f64, spmv_jds_f64);
