//! JDS kernels of PTX module `spmv`: rows sorted by length (longest first, ties by row), the
//! `d`-th entries of the sorted rows stored together as jagged diagonal `d`
//! (`jd_ptr[d] .. jd_ptr[d + 1]`, one entry per row longer than `d`), and `perm` mapping a
//! sorted position back to its row.
use gpu_device::mem::{ld_global, stg};
use gpu_device::thread::{grid_size_1d, index_1d_u64};

use crate::term::Hints;
use crate::{combine, jds_rows_longer, JdsArgs, JdsBuildArgs};

/// Sort keys `max_len − len_r` (ascending = longest first; a stable sort keeps rows of equal
/// length in order) and the identity permutation.
///
/// # Safety
/// `ptr` holds `rows + 1` nondecreasing entries with differences `≤ max_len`; `keys` and `perm`
/// hold `rows`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_jds_keys(a: JdsBuildArgs<u8>) {
    let JdsBuildArgs { ptr, keys, perm, rows, max_len, .. } = a;
    let mut r = index_1d_u64();
    while r < rows {
        // SAFETY: r < rows.
        unsafe {
            stg(keys.add(r as usize), max_len - (ld_global(ptr.add(r as usize + 1)) - ld_global(ptr.add(r as usize))));
            stg(perm.add(r as usize), r as u32);
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
pub unsafe extern "ptx-kernel" fn spmv_jds_counts(a: JdsBuildArgs<u8>) {
    let JdsBuildArgs { keys, count, rows, max_len, .. } = a;
    let mut d = index_1d_u64();
    while d <= max_len as u64 {
        // SAFETY: d <= max_len; keys holds rows sorted entries (read below rows only).
        unsafe {
            let c = if d < max_len as u64 { jds_rows_longer(d as u32, max_len, |i| ld_global(keys.add(i as usize)), rows) as u32 } else { 0 };
            stg(count.add(d as usize), c)
        };
        d += grid_size_1d();
    }
}

/// `inv[perm[i]] = i`.
///
/// # Safety
/// `perm` is a permutation of `0..rows`; `inv` holds `rows`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_jds_invert(a: JdsBuildArgs<u8>) {
    let JdsBuildArgs { perm, inv, rows, .. } = a;
    let mut i = index_1d_u64();
    while i < rows {
        // SAFETY: perm[i] < rows.
        unsafe { stg(inv.add(ld_global(perm.add(i as usize)) as usize), i as u32) };
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
        pub unsafe extern "ptx-kernel" fn $fill(a: JdsBuildArgs<$t>) {
            let JdsBuildArgs { ptr, row_of, inv, jd_ptr, idx, vals, col, val, nnz, .. } = a;
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: k < nnz; d below the row's length, below max_len; the row's sorted
                // position is below the diagonal's width.
                unsafe {
                    let r = ld_global(row_of.add(k as usize)) as usize;
                    let d = k as u32 - ld_global(ptr.add(r));
                    let o = (ld_global(jd_ptr.add(d as usize)) + ld_global(inv.add(r))) as usize;
                    stg(col.add(o), ld_global(idx.add(k as usize)));
                    stg(val.add(o), ld_global(vals.add(k as usize)));
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
        pub unsafe extern "ptx-kernel" fn $jds(a: JdsArgs<$t>) {
            let JdsArgs { perm, jd_ptr, col, val, x, y, rows, diags, alpha, beta } = a;
            // L2 hints: the matrix read once, x again and again.
            let h = Hints::new();
            let mut i = index_1d_u64();
            while i < rows {
                // SAFETY: d < diags; i below the diagonal's width, so the slot is inside it.
                unsafe {
                    let mut sum: $t = 0.0;
                    let mut d = 0;
                    let mut start = ld_global(jd_ptr) as u64;
                    while d < diags {
                        let end = ld_global(jd_ptr.add(d as usize + 1)) as u64;
                        if end - start <= i {
                            break;
                        }
                        let s = (start + i) as usize;
                        sum += h.term(val, col, x, s);
                        start = end;
                        d += 1;
                    }
                    let r = ld_global(perm.add(i as usize)) as usize;
                    let old = if beta == 0.0 { 0.0 } else { ld_global(y.add(r)) };
                    stg(y.add(r), combine(alpha, sum, beta, old));
                }
                i += grid_size_1d();
            }
        }
    };
}

jds_kernels!(f32, spmv_jds_fill_f32, spmv_jds_f32);
jds_kernels!(f64, spmv_jds_fill_f64, spmv_jds_f64);
