//! Sliced COO (SCOO, after Dang & Schmidt 2013) kernels of PTX module `spmv`: rows cut into
//! slices of `slice_rows` (a power of two ≤ [`SCOO_MAX_SLICE_ROWS`]); a slice's nonzeros
//! (`slice_ptr[s] .. slice_ptr[s + 1]`) sorted by column (stable), each with its row inside the
//! slice as a `u16`. One block per slice adds the products into [`SCOO_LANES`] shared-memory
//! copies of the slice's rows (thread `t` into copy `t mod SCOO_LANES`, fewer collisions), then
//! sums the copies and writes `y` once. Shared atomics: **not bit-reproducible**.
use gpu_device::atomic::{atomic_add_f32, atomic_add_f64};
use gpu_device::mem::{ld_global, stg};
use gpu_device::thread::{block_dim_x, block_idx_x, grid_dim_x, grid_size_1d, index_1d_u64, sync_threads, thread_idx_x};

use crate::term::Hints;
use crate::{combine, ScooArgs, SCOO_LANES};

gpu_device::dynamic_shared!(SPMV_DYNAMIC: u8);

/// `slice_ptr[s] = ptr[min(s · slice_rows, rows)]` for `s ≤ slices`.
///
/// # Safety
/// `ptr` holds `rows + 1` entries; `slice_ptr` holds `slices + 1`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_scoo_slice_ptr(a: ScooArgs<u8>) {
    let ScooArgs { ptr, slice_ptr, rows, slices, .. } = a;
    let slice_rows = a.slice_rows as u64;
    let mut s = index_1d_u64();
    while s <= slices {
        // SAFETY: s <= slices; the row index is clamped to rows.
        unsafe { stg(slice_ptr.add(s as usize), ld_global(ptr.add((s * slice_rows).min(rows) as usize))) };
        s += grid_size_1d();
    }
}

macro_rules! scoo_kernels {
    ($t:ty, $atomic:ident, $gather:ident, $scoo:ident) => {
        /// After the stable sort by column inside each slice (`perm[k]` = the CSR position of
        /// sorted entry `k`): `row16[k] = row_of[perm[k]] mod slice_rows`, `val[k] =
        /// vals[perm[k]]`.
        ///
        /// # Safety
        /// `perm` a permutation of `0..nnz`; `row_of`, `vals` hold `nnz`; `row16`, `val` hold
        /// `nnz`; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $gather(a: ScooArgs<$t>) {
            let ScooArgs { perm, row_of, vals, row16, val, nnz, slice_rows, .. } = a;
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: k < nnz, perm[k] < nnz.
                unsafe {
                    let p = ld_global(perm.add(k as usize)) as usize;
                    stg(row16.add(k as usize), (ld_global(row_of.add(p)) % slice_rows) as u16);
                    stg(val.add(k as usize), ld_global(vals.add(p)));
                }
                k += grid_size_1d();
            }
        }

        /// SCOO product: block per slice (grid-stride over slices).
        ///
        /// # Safety
        /// A valid SCOO: `slice_ptr` of `slices + 1` nondecreasing entries, `row16` below
        /// `slice_rows` and inside the matrix, columns below `x`'s length; `y` holds `rows`;
        /// dynamic shared memory of `SCOO_LANES · slice_rows` values; a 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $scoo(a: ScooArgs<$t>) {
            let ScooArgs { slice_ptr, row16, col, val, x, y, rows, slices, slice_rows, alpha, beta, .. } = a;
            // L2 hints: the matrix read once, x again and again.
            let h = Hints::new();
            let sh = SPMV_DYNAMIC::ptr() as *mut $t;
            let (tid, nt) = (thread_idx_x(), block_dim_x());
            let n_sh = SCOO_LANES * slice_rows;
            let lane_base = (tid % SCOO_LANES) * slice_rows;
            let mut s = block_idx_x() as u64;
            while s < slices {
                // SAFETY: shared indices below n_sh; s < slices; k inside the slice; the row
                // inside the slice and the matrix.
                unsafe {
                    let mut i = tid;
                    while i < n_sh {
                        *sh.add(i as usize) = 0.0;
                        i += nt;
                    }
                    sync_threads();
                    let (z0, z1) = (ld_global(slice_ptr.add(s as usize)) as u64, ld_global(slice_ptr.add(s as usize + 1)) as u64);
                    let mut k = z0 + tid as u64;
                    while k < z1 {
                        let v = h.term(val, col, x, k as usize);
                        $atomic(sh.add((lane_base + ld_global(row16.add(k as usize)) as u32) as usize), v);
                        k += nt as u64;
                    }
                    sync_threads();
                    let r0 = s * slice_rows as u64;
                    let mut i = tid;
                    while i < slice_rows && r0 + (i as u64) < rows {
                        let mut sum: $t = 0.0;
                        let mut l = 0;
                        while l < SCOO_LANES {
                            sum += *sh.add((l * slice_rows + i) as usize);
                            l += 1;
                        }
                        let yr = y.add((r0 + i as u64) as usize);
                        let old = if beta == 0.0 { 0.0 } else { ld_global(yr) };
                        stg(yr, combine(alpha, sum, beta, old));
                        i += nt;
                    }
                    sync_threads();
                }
                s += grid_dim_x() as u64;
            }
        }
    };
}

scoo_kernels!(f32, atomic_add_f32, spmv_scoo_gather_f32, spmv_scoo_f32);
scoo_kernels!(f64, atomic_add_f64, spmv_scoo_gather_f64, spmv_scoo_f64);
