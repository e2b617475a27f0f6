//! ELL kernels of PTX module `spmv`: rows padded to one width, stored column-major (slot
//! `(r, k)` at `k · rows + r`, so a warp's threads read consecutive slots); padding has column
//! [`ELL_PAD`] and value 0 and comes after a row's entries.
use gpu_device::mem::{ld_global, stg};
use gpu_device::thread::{grid_size_1d, index_1d_u64};

use crate::term::Hints;
use crate::{combine, EllArgs, ELL_PAD};

macro_rules! ell_kernels {
    ($t:ty, $fill:ident, $ell:ident) => {
        /// ELL from CSR: slot `s = k · rows + r` (one thread each, writes coalesced) takes the
        /// `k`-th entry of row `r`, or padding.
        ///
        /// # Safety
        /// A valid CSR of `rows` rows (`ptr`, `idx`, `vals`) whose rows are at most `width`
        /// long; `col` and `val` hold `rows · width` entries; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $fill(a: EllArgs<$t>) {
            let EllArgs { ptr, idx, vals, col, val, rows, width, .. } = a;
            let n = rows * width;
            let mut s = index_1d_u64();
            while s < n {
                let (k, r) = (s / rows, s % rows);
                // SAFETY: r < rows; k below the row's length reads inside it; s < n.
                unsafe {
                    let b = ld_global(ptr.add(r as usize)) as u64;
                    let len = ld_global(ptr.add(r as usize + 1)) as u64 - b;
                    let (c, v) = if k < len { (ld_global(idx.add((b + k) as usize)), ld_global(vals.add((b + k) as usize))) } else { (ELL_PAD, 0.0) };
                    stg(col.add(s as usize), c);
                    stg(val.add(s as usize), v);
                }
                s += grid_size_1d();
            }
        }

        /// ELL product, thread per row: the row's slots in order up to the first padding, then
        /// `y[r] = alpha · sum + beta · y[r]`. Deterministic; the same sums as CSR-scalar.
        ///
        /// # Safety
        /// `col`/`val` hold `rows · width` slots of a valid ELL (columns below `x`'s length or
        /// padding at the row's end); `y` holds `rows` values; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $ell(a: EllArgs<$t>) {
            let EllArgs { col, val, x, y, rows, width, alpha, beta, .. } = a;
            // L2 hints: the matrix read once, x again and again.
            let h = Hints::new();
            let mut r = index_1d_u64();
            while r < rows {
                // SAFETY: slots k · rows + r < rows · width; columns valid until padding.
                unsafe {
                    let mut sum: $t = 0.0;
                    let mut k = 0;
                    while k < width {
                        let s = (k * rows + r) as usize;
                        let c = h.matrix(col.add(s));
                        if c == ELL_PAD {
                            break;
                        }
                        sum += h.matrix(val.add(s)) * h.x(x, c);
                        k += 1;
                    }
                    let old = if beta == 0.0 { 0.0 } else { ld_global(y.add(r as usize)) };
                    stg(y.add(r as usize), combine(alpha, sum, beta, old));
                }
                r += grid_size_1d();
            }
        }
    };
}

ell_kernels!(f32, spmv_ell_fill_f32, spmv_ell_f32);
ell_kernels!(f64, spmv_ell_fill_f64, spmv_ell_f64);
