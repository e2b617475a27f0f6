//! Kernels of PTX module `spmv`.
use gpu_device::atomic::{atomic_add_f32, atomic_add_f64, atomic_max_u32};
use gpu_device::mem::{ld_global, ldg, ldg_u32, stg};
use gpu_device::thread::{grid_size_1d, index_1d_u64};
use gpu_device::warp::{ballot_sync, lane_id, shfl_down_sync, shfl_idx_sync, FULL_MASK};

use crate::reduce::Segments;
use crate::term::Hints;
use crate::{combine, Coo16PackArgs, CooArgs, CsrArgs, ScaleArgs, COO_CHUNK, COO_VT};

const _: () = assert!(COO_VT == 2, "spmv_coo unrolls COO_VT = 2 runs");

macro_rules! spmv_kernels {
    ($t:ty, $scalar:ident, $vector:ident, $scale:ident, $coo:ident, $coo16:ident, $chunk:ident, $atomic:ident) => {
        /// CSR-scalar: thread per row (grid-stride over rows).
        ///
        /// # Safety
        /// A valid CSR (`ptr` of `rows + 1` from 0 to nnz, nondecreasing; `idx` < `x`'s length);
        /// `y` holds `rows` values; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $scalar(a: CsrArgs<$t>) {
            let CsrArgs { ptr, idx, vals, x, y, rows, alpha, beta } = a;
            // L2 hints: the matrix read once, x again and again.
            let h = Hints::new();
            let mut r = index_1d_u64();
            while r < rows {
                // SAFETY: the caller's valid CSR; r < rows.
                unsafe {
                    let (b, e) = (ld_global(ptr.add(r as usize)) as usize, ld_global(ptr.add(r as usize + 1)) as usize);
                    let mut sum: $t = 0.0;
                    for k in b..e {
                        // The matrix without the evict-first hint: a thread walks its row, and its
                        // neighbours read the same lines later (0.177 against 0.195 ms with the hint on
                        // uniform 100k², H100).
                        sum += ldg(vals.add(k)) * h.x(x, ldg_u32(idx.add(k)));
                    }
                    let old = if beta == 0.0 { 0.0 } else { ld_global(y.add(r as usize)) };
                    stg(y.add(r as usize), combine(alpha, sum, beta, old));
                }
                r += grid_size_1d();
            }
        }

        /// CSR-vector: one warp per row (grid-stride over rows by warps); lanes stride the row,
        /// then a shuffle reduction; lane 0 writes.
        ///
        /// # Safety
        /// As the scalar kernel; blocks of a multiple of 32 threads.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $vector(a: CsrArgs<$t>) {
            let CsrArgs { ptr, idx, vals, x, y, rows, alpha, beta } = a;
            // L2 hints: the matrix read once, x again and again.
            let h = Hints::new();
            let lane = lane_id() as usize;
            let mut r = index_1d_u64() / 32;
            let warps = grid_size_1d() / 32;
            while r < rows {
                // SAFETY: the caller's valid CSR; r < rows (uniform across the warp).
                unsafe {
                    let (b, e) = (ld_global(ptr.add(r as usize)) as usize, ld_global(ptr.add(r as usize + 1)) as usize);
                    let mut sum: $t = 0.0;
                    let mut k = b + lane;
                    while k < e {
                        sum += h.term(vals, idx, x, k);
                        k += 32;
                    }
                    let mut d = 16;
                    while d > 0 {
                        sum += shfl_down_sync(FULL_MASK, sum, d);
                        d /= 2;
                    }
                    if lane == 0 {
                        let old = if beta == 0.0 { 0.0 } else { ld_global(y.add(r as usize)) };
                        stg(y.add(r as usize), combine(alpha, sum, beta, old));
                    }
                }
                r += warps;
            }
        }

        /// `y = beta * y` (`y = 0` when `beta == 0`, not reading `y`), before the COO kernel.
        ///
        /// # Safety
        /// `y` holds `rows` values; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $scale(a: ScaleArgs<$t>) {
            let ScaleArgs { y, rows, beta } = a;
            let mut r = index_1d_u64();
            while r < rows {
                // SAFETY: r < rows.
                unsafe { stg(y.add(r as usize), if beta == 0.0 { 0.0 } else { beta * ld_global(y.add(r as usize)) }) };
                r += grid_size_1d();
            }
        }

        /// COO: each warp takes chunks of [`COO_CHUNK`] consecutive nonzeros (grid-stride over
        /// chunks), in turns of [`COO_VT`] runs of 32 (coalesced loads, all of them in flight
        /// before the `x` gathers). It sums each run's equal rows across the warp ([`Segments`])
        /// and adds each segment's `alpha · sum` to `y[row]` by one atomic add, except the run's
        /// last segment, carried into the next run when that starts with the same row: a long
        /// row costs one atomic add per chunk, not per run. Not bit-reproducible. Rows need not
        /// be sorted: a row split into several segments gets several atomic adds.
        ///
        /// # Safety
        /// `row`, `col`, `vals` hold `nnz` entries with `row < y`'s length and `col < x`'s;
        /// any 1-D grid of whole warps.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $coo(a: CooArgs<$t>) {
            let CooArgs { row, col, vals, x, y, nnz, alpha, .. } = a;
            let h = Hints::new();
            coo_chunks(nnz, |lo, hi| {
                // SAFETY: lo < hi <= nnz, k below hi; every row is below y's length.
                unsafe {
                    let row_at = |k: u64| h.matrix(row.add(k as usize));
                    $chunk(h, lo, hi, row_at, col, vals, x, |r, s| {
                        $atomic(y.add(r as usize), alpha * s);
                    })
                };
            });
        }

        /// COO with 16-bit rows: as the COO kernel above (`spmv_coo_*`), the row of nonzero `k`
        /// being `base[k / COO_CHUNK] + off[k]` (2 bytes a nonzero instead of 4).
        ///
        /// # Safety
        /// As `spmv_coo_*` for those rows; `base` holds `nnz / COO_CHUNK` (rounded up) values,
        /// `off` `nnz`.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $coo16(a: CooArgs<$t>) {
            let CooArgs { base, off, col, vals, x, y, nnz, alpha, .. } = a;
            let h = Hints::new();
            coo_chunks(nnz, |lo, hi| {
                // SAFETY: lo < hi <= nnz, k below hi; base + off is a row below y's length.
                unsafe {
                    let b = ldg(base.add((lo / COO_CHUNK) as usize));
                    let row_at = |k: u64| b + h.matrix(off.add(k as usize)) as u32;
                    $chunk(h, lo, hi, row_at, col, vals, x, |r, s| {
                        $atomic(y.add(r as usize), alpha * s);
                    })
                };
            });
        }

        /// One COO chunk `[lo, hi)` in turns of [`COO_VT`] runs of 32, `row_at(k)` giving
        /// nonzero `k`'s row; `flush(row, sum)` called by one lane for each segment but the
        /// run's last, which is carried (see `spmv_coo_*`).
        ///
        /// # Safety
        /// `lo < hi`; `row_at`, `col`, `vals` valid below `hi`, columns below x's length; every
        /// lane of the warp calls it with the same chunk.
        #[inline(always)]
        unsafe fn $chunk(h: Hints, lo: u64, hi: u64, row_at: impl Fn(u64) -> u32, col: *const u32, vals: *const $t, x: *const $t, mut flush: impl FnMut(u32, $t)) {
            let lane = lane_id();
            let nv = 32 * COO_VT as u64;
            // Warp-uniform loops: every lane takes part in the shuffles.
            // The carried segment: its row (u32::MAX: none) and sum, the same in every lane.
            let (mut crow, mut csum): (u32, $t) = (u32::MAX, 0.0);
            let mut base = lo;
            while base < hi {
                let mut r = [u32::MAX; COO_VT];
                let mut c = [0u32; COO_VT];
                let mut v: [$t; COO_VT] = [0.0; COO_VT];
                gpu_device::unroll!(j in [0, 1] {
                    let k = base + 32 * j as u64 + lane as u64;
                    if k < hi {
                        // SAFETY: k < hi.
                        unsafe {
                            r[j] = row_at(k);
                            c[j] = h.matrix(col.add(k as usize));
                            v[j] = h.matrix(vals.add(k as usize));
                        }
                    }
                });
                gpu_device::unroll!(j in [0, 1] {
                    if r[j] != u32::MAX {
                        // SAFETY: the column is below x's length by the caller's contract.
                        v[j] = v[j] * unsafe { h.x(x, c[j]) };
                    }
                });
                gpu_device::unroll!(j in [0, 1] {
                    if crow != u32::MAX {
                        // The carry joins lane 0's segment when it has the same row, else
                        // it is flushed now.
                        if shfl_idx_sync(FULL_MASK, r[j], 0) == crow {
                            if lane == 0 {
                                v[j] = v[j] + csum;
                            }
                        } else if lane == 0 {
                            flush(crow, csum);
                        }
                        crow = u32::MAX;
                    }
                    let seg = Segments::new(r[j]);
                    let s = seg.sum(v[j]);
                    // The last segment (lane 31's row; u32::MAX past hi) is carried: its
                    // head is the highest head lane with that row.
                    let tail = shfl_idx_sync(FULL_MASK, r[j], 31);
                    let heads = ballot_sync(FULL_MASK, seg.head() && r[j] == tail);
                    let tail_head = 31 - heads.leading_zeros();
                    if tail != u32::MAX {
                        crow = tail;
                        csum = shfl_idx_sync(FULL_MASK, s, tail_head);
                    }
                    if seg.head() && r[j] != u32::MAX && !(r[j] == tail && lane == tail_head) {
                        flush(r[j], s);
                    }
                });
                base += nv;
            }
            if crow != u32::MAX && lane == 0 {
                flush(crow, csum);
            }
        }
    };
}

/// COO's 16-bit rows from its 32-bit ones (thread per nonzero): `base[c]` the row of chunk
/// `c`'s first nonzero, `off[k] = row[k] − base[k / COO_CHUNK]` (truncated to 16 bits), and into
/// `span` the largest such difference in any chunk (by atomic max, from each chunk's last
/// nonzero): the 16-bit rows are right only when it is below 2^16.
///
/// # Safety
/// `row` holds `nnz` nondecreasing rows; `base` `nnz / COO_CHUNK` (rounded up) values, `off`
/// `nnz`; `span` one `u32`, zeroed.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_coo16_pack(a: Coo16PackArgs) {
    let Coo16PackArgs { row, base, off, span, nnz } = a;
    let mut k = index_1d_u64();
    while k < nnz {
        let c = k / COO_CHUNK;
        // SAFETY: k < nnz; c below base's length; c · COO_CHUNK <= k.
        unsafe {
            let r = ld_global(row.add(k as usize));
            let b = ld_global(row.add((c * COO_CHUNK) as usize));
            stg(off.add(k as usize), r.wrapping_sub(b) as u16);
            if k % COO_CHUNK == 0 {
                stg(base.add(c as usize), r);
            }
            if k % COO_CHUNK == COO_CHUNK - 1 || k == nnz - 1 {
                atomic_max_u32(span, r - b);
            }
        }
        k += grid_size_1d();
    }
}

/// Calls `f(lo, hi)` for this warp's chunks `[lo, hi)` of [`COO_CHUNK`] nonzeros out of `nnz`
/// (grid-stride, whole warps).
#[inline(always)]
fn coo_chunks(nnz: u64, mut f: impl FnMut(u64, u64)) {
    let warps = grid_size_1d() / 32;
    let mut lo = (index_1d_u64() / 32) * COO_CHUNK;
    while lo < nnz {
        f(lo, (lo + COO_CHUNK).min(nnz));
        lo += warps * COO_CHUNK;
    }
}

spmv_kernels!(f32, spmv_csr_scalar_f32, spmv_csr_vector_f32, spmv_scale_f32, spmv_coo_f32, spmv_coo16_f32, coo_chunk_f32, atomic_add_f32);
spmv_kernels!(f64, spmv_csr_scalar_f64, spmv_csr_vector_f64, spmv_scale_f64, spmv_coo_f64, spmv_coo16_f64, coo_chunk_f64, atomic_add_f64);
