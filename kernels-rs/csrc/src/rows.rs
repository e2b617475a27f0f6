//! The row-major group products of a CSR (`csrc_to_rows_*`, `csrc_rows{4,8,16}_*`): the dense
//! block read one line a nonzero, each row's sums in registers, a fixed order.
use gpu_device::mem::{ldg, stg};
use gpu_device::num::combine;
use gpu_device::thread::{grid_size_1d, index_1d_u64};
use gpu_device::warp::{lane_id, shfl_idx_sync};

use crate::{CsrArgs, ToRowsArgs};

macro_rules! rows_kernels {
    ($t:ty, $to_rows:ident, $body:ident, $g4:ident, $g8:ident, $g16:ident) => {
        /// `out[i · k + c] = x[i + c · ld]` ([`ToRowsArgs`]).
        ///
        /// # Safety
        /// `x` holds `k` columns of `ld ≥ rows` values, `out` `rows · k`; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $to_rows(a: ToRowsArgs<$t>) {
            let total = a.rows * a.k as u64;
            let mut i = index_1d_u64();
            while i < total {
                let (row, c) = (i / a.k as u64, i % a.k as u64);
                // SAFETY: row < rows, c < k: inside both blocks.
                unsafe { stg(a.out.add(i as usize), ldg(a.x.add((row + c * a.ld) as usize))) };
                i += grid_size_1d();
            }
        }

        /// A group of `G` lanes a row (grid-stride), lane `c` the sum of vector `c`: the row's
        /// nonzeros loaded `G` at a time (coalesced), broadcast by shuffles inside the group,
        /// `X`'s row `j` read as one contiguous line; two sums alternating over the nonzeros,
        /// added at the end (a fixed order). The CSR and `X` are read through the read-only path
        /// (`ld.global.nc`), `Y` stored with `st.global`.
        ///
        /// # Safety
        /// [`CsrArgs`]' contract: a valid CSR, `X` of every column index's row, `Y` of `rows`
        /// rows and `k` columns at `ldy`; `k ≤ G`; blocks of whole warps.
        #[inline(always)]
        unsafe fn $body<const G: u32>(a: &CsrArgs<$t>) {
            let lane = lane_id();
            let c = lane % G;
            let base = lane - c;
            let mask = if G == 32 { u32::MAX } else { ((1u32 << G) - 1) << base };
            let groups = grid_size_1d() / G as u64;
            let mut row = index_1d_u64() / G as u64;
            let k = a.k;
            while row < a.rows {
                // SAFETY: row < rows; every nonzero index below the row's end; columns index X's
                // rows (the caller's valid CSR); lanes c < k read inside X's row.
                unsafe {
                    // Positions in 64 bits: a row ending near 2^32 nonzeros must not wrap.
                    let (b, e) = (ldg(a.ptr.add(row as usize)) as u64, ldg(a.ptr.add(row as usize + 1)) as u64);
                    let (mut s0, mut s1) = (0.0 as $t, 0.0 as $t);
                    let mut p0 = b;
                    while p0 < e {
                        let p = p0 + c as u64;
                        let (j, v) = if p < e { (ldg(a.idx.add(p as usize)), ldg(a.vals.add(p as usize))) } else { (0, 0.0 as $t) };
                        let mut t = 0;
                        while t < G {
                            let j0 = shfl_idx_sync(mask, j, base + t);
                            let v0 = shfl_idx_sync(mask, v, base + t);
                            let j1 = shfl_idx_sync(mask, j, base + t + 1);
                            let v1 = shfl_idx_sync(mask, v, base + t + 1);
                            if c < k {
                                if p0 + (t as u64) < e {
                                    s0 += v0 * ldg(a.x.add((j0 as u64 * a.ldx + c as u64) as usize));
                                }
                                if p0 + (t as u64) + 1 < e {
                                    s1 += v1 * ldg(a.x.add((j1 as u64 * a.ldx + c as u64) as usize));
                                }
                            }
                            t += 2;
                        }
                        p0 += G as u64;
                    }
                    if c < k {
                        let yp = a.y.add((row + c as u64 * a.ldy) as usize);
                        let old = if a.beta == 0.0 { 0.0 } else { *yp };
                        stg(yp, combine(a.alpha, s0 + s1, a.beta, old));
                    }
                }
                row += groups;
            }
        }

        /// [`CsrArgs`] by groups of 4 lanes (`k ≤ 4`).
        ///
        /// # Safety
        /// As the group body: a valid CSR and blocks of its sizes; blocks of whole warps.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $g4(a: CsrArgs<$t>) {
            // SAFETY: the caller's contract with G = 4.
            unsafe { $body::<4>(&a) }
        }

        /// [`CsrArgs`] by groups of 8 lanes (`k ≤ 8`).
        ///
        /// # Safety
        /// As the group body: a valid CSR and blocks of its sizes; blocks of whole warps.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $g8(a: CsrArgs<$t>) {
            // SAFETY: the caller's contract with G = 8.
            unsafe { $body::<8>(&a) }
        }

        /// [`CsrArgs`] by groups of 16 lanes (`k ≤ 16`).
        ///
        /// # Safety
        /// As the group body: a valid CSR and blocks of its sizes; blocks of whole warps.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $g16(a: CsrArgs<$t>) {
            // SAFETY: the caller's contract with G = 16.
            unsafe { $body::<16>(&a) }
        }
    };
}

rows_kernels!(f32, csrc_to_rows_f32, rows_body_f32, csrc_rows4_f32, csrc_rows8_f32, csrc_rows16_f32);
rows_kernels!(f64, csrc_to_rows_f64, rows_body_f64, csrc_rows4_f64, csrc_rows8_f64, csrc_rows16_f64);
