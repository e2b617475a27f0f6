//! ELL-COO (HYB) conversion kernels of PTX module `spmv`: the ELL part is filled by
//! `spmv_ell_fill` with the chosen width (a row's first `width` entries), the overflow goes to
//! COO here; the product is `spmv_ell` then `spmv_coo`.
use gpu_device::thread::{grid_size_1d, index_1d_u64};

/// Overflow counts: `count[r] = max(len_r − width, 0)` for `r < rows` and `count[rows] = 0`, so
/// that an exclusive scan gives each row's COO offset and the total.
///
/// # Safety
/// `ptr` holds `rows + 1` nondecreasing entries; `count` holds `rows + 1`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_hyb_overflow(rows: u64, ptr: *const u32, width: u32, count: *mut u32) {
    let mut r = index_1d_u64();
    while r <= rows {
        // SAFETY: r <= rows; ptr[r + 1] read only when r < rows.
        unsafe { *count.add(r as usize) = if r < rows { (*ptr.add(r as usize + 1) - *ptr.add(r as usize)).saturating_sub(width) } else { 0 } };
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
        pub unsafe extern "ptx-kernel" fn $fill(
            nnz: u64,
            ptr: *const u32,
            row_of: *const u32,
            width: u32,
            offset: *const u32,
            idx: *const u32,
            vals: *const $t,
            coo_row: *mut u32,
            coo_col: *mut u32,
            coo_val: *mut $t,
        ) {
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: k < nnz; r < rows; the destination is below the row's overflow end.
                unsafe {
                    let r = *row_of.add(k as usize);
                    let d = k as u32 - *ptr.add(r as usize);
                    if d >= width {
                        let o = (*offset.add(r as usize) + d - width) as usize;
                        *coo_row.add(o) = r;
                        *coo_col.add(o) = *idx.add(k as usize);
                        *coo_val.add(o) = *vals.add(k as usize);
                    }
                }
                k += grid_size_1d();
            }
        }
    };
}

hyb_kernels!(f32, spmv_hyb_fill_coo_f32);
hyb_kernels!(f64, spmv_hyb_fill_coo_f64);
