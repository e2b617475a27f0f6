//! ELL-COO (HYB) conversion kernels of PTX module `spmv`: the ELL part is filled by
//! `spmv_ell_fill` with the chosen width (a row's first `width` entries), the overflow goes to
//! COO here; the product is `spmv_ell` then `spmv_coo`.
use gpu_device::mem::{ld_global, stg};
use gpu_device::thread::{grid_size_1d, index_1d_u64};

use crate::HybArgs;

/// Overflow counts: `count[r] = max(len_r − width, 0)` for `r < rows` and `count[rows] = 0`, so
/// that an exclusive scan gives each row's COO offset and the total.
///
/// # Safety
/// `ptr` holds `rows + 1` nondecreasing entries; `count` holds `rows + 1`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_hyb_overflow(a: HybArgs<u8>) {
    let HybArgs { ptr, count, rows, width, .. } = a;
    let mut r = index_1d_u64();
    while r <= rows {
        // SAFETY: r <= rows; ptr[r + 1] read only when r < rows.
        unsafe {
            let c = if r < rows { (ld_global(ptr.add(r as usize + 1)) - ld_global(ptr.add(r as usize))).saturating_sub(width) } else { 0 };
            stg(count.add(r as usize), c)
        };
        r += grid_size_1d();
    }
}

macro_rules! hyb_kernels {
    ($t:ty, $fill:ident) => {
        /// The COO overflow: nonzero `k` of row `r = row_of[k]` at position `d = k − ptr[r] ≥
        /// width` goes to `offset[r] + d − width` (rows ascending, each row's order kept).
        ///
        /// # Safety
        /// A valid CSR (`ptr`, `idx`, `vals`) of `nnz` nonzeros, `row_of` their rows;
        /// `offset` the exclusive scan of `spmv_hyb_overflow`'s counts; `coo_*` hold the total;
        /// any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $fill(a: HybArgs<$t>) {
            let HybArgs { ptr, row_of, offset, idx, vals, coo_row, coo_col, coo_val, nnz, width, .. } = a;
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: k < nnz; r < rows; the destination is below the row's overflow end.
                unsafe {
                    let r = ld_global(row_of.add(k as usize));
                    let d = k as u32 - ld_global(ptr.add(r as usize));
                    if d >= width {
                        let o = (ld_global(offset.add(r as usize)) + d - width) as usize;
                        stg(coo_row.add(o), r);
                        stg(coo_col.add(o), ld_global(idx.add(k as usize)));
                        stg(coo_val.add(o), ld_global(vals.add(k as usize)));
                    }
                }
                k += grid_size_1d();
            }
        }
    };
}

hyb_kernels!(f32, spmv_hyb_fill_coo_f32);
hyb_kernels!(f64, spmv_hyb_fill_coo_f64);
