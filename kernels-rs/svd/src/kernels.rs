//! Kernels of PTX module `svd`.
use gpu_device::mem::{ld_global, ldg, stg};
use gpu_device::reduce::block_sum;
use gpu_device::thread::{block_idx_x, grid_size_1d, index_1d_u64, thread_idx_x};

use crate::{GramArgs, MulArgs, QrStepArgs, WidenArgs};

gpu_device::static_shared!(SVD_SUM: [f64; 32]);

/// Whether a kernel given the flag `skip` (null: never) returns at once: `*skip == 0`.
///
/// # Safety
/// `skip` null or a valid device address.
#[inline(always)]
unsafe fn skipped(skip: *const f64) -> bool {
    // SAFETY: the caller's valid or null pointer.
    !skip.is_null() && unsafe { ldg(skip) } == 0.0
}

/// [`GramArgs`]: `partial[blk · c · k + a + b · c] = Σ_i X[i][a] · Y[i][b]` over the rows `i`
/// this block takes (grid-stride by thread), for `a < c`, `b < k`; nothing when `*skip == 0`
/// (`skip` non-null).
///
/// # Safety
/// `x` holds `rows · c` values and `y` `rows · k` (leading dimension `rows`); `c · k ≤ MAX_PAIRS`,
/// `c, k ≥ 1`; `partial` holds `grid · c · k` values; `skip` null or one value; blocks of at most
/// 1024 threads, whole warps.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn svd_gram_f64(args: GramArgs) {
    let GramArgs { rows, c, k, x, y, partial, skip } = args;
    // SAFETY: the caller's pointer; the flag is the same for the whole grid.
    if unsafe { skipped(skip) } {
        return;
    }
    let pairs = c * k;
    let mut acc = [0.0f64; 16];
    let mut i = index_1d_u64();
    while i < rows {
        // SAFETY: i < rows; columns below c and k.
        unsafe {
            gpu_device::unroll!(p in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                if (p as u32) < pairs {
                    let (a, b) = (p as u32 % c, p as u32 / c);
                    acc[p] += ldg(x.add((i + a as u64 * rows) as usize)) * ldg(y.add((i + b as u64 * rows) as usize));
                }
            });
        }
        i += grid_size_1d();
    }
    let temp = SVD_SUM::ptr() as *mut f64;
    gpu_device::unroll!(p in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
        if (p as u32) < pairs {
            // SAFETY: every thread of the block calls it (pairs is uniform); temp holds 32.
            let s = unsafe { block_sum(temp, acc[p]) };
            if thread_idx_x() == 0 {
                // SAFETY: the block's slot of pairs values.
                unsafe { stg(partial.add((block_idx_x() * pairs + p as u32) as usize), s) };
            }
        }
    });
}

/// [`MulArgs`]: `Y[i][b] = Σ_a X[i][a] · C[a + b · c] (+ Y[i][b] when accumulate)`, a thread per row
/// (grid-stride); nothing when `*skip == 0` (`skip` non-null). A thread reads its whole row of
/// `X` before writing its row of `Y`, so `x` may equal `y` when `c = k`.
///
/// # Safety
/// `x` holds `rows · c` values and `y` `rows · k` (leading dimension `rows`), either disjoint or
/// the same block with `c = k`; `coef` holds `c · k` (on the device); `1 ≤ c, k ≤ MAX_COLS`;
/// `skip` null or one value; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn svd_mul_f64(args: MulArgs) {
    let MulArgs { rows, c, k, x, coef, accumulate, y, skip } = args;
    // SAFETY: the caller's pointer; the flag is the same for the whole grid.
    if unsafe { skipped(skip) } {
        return;
    }
    let mut i = index_1d_u64();
    while i < rows {
        let mut xr = [0.0f64; 16];
        // SAFETY: i < rows; columns below c and k; coef below c · k.
        unsafe {
            gpu_device::unroll!(a in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                if (a as u32) < c {
                    xr[a] = ld_global(x.add((i + a as u64 * rows) as usize));
                }
            });
            let mut b = 0;
            while b < k {
                let mut s = 0.0;
                gpu_device::unroll!(a in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                    if (a as u32) < c {
                        s += xr[a] * ldg(coef.add((a as u32 + b * c) as usize));
                    }
                });
                let yp = y.add((i + b as u64 * rows) as usize);
                stg(yp, if accumulate != 0 { ld_global(yp) + s } else { s });
                b += 1;
            }
        }
        i += grid_size_1d();
    }
}

gpu_device::static_shared!(SVD_GRAM: [f64; crate::MAX_PAIRS as usize]);

/// [`QrStepArgs`]: one pass of a CholeskyQR step on the device ([`crate::qr::qr_step`]): the `b × b` Gram matrix
/// summed from `blocks` partial sums of `svd_gram_f64` (one thread per entry, in block order:
/// the same bits every run), then the step's small algebra on thread 0 into `slot`. Pass 2 does
/// nothing unless pass 1 set the slot's `NEED2`.
///
/// # Safety
/// `partial` holds `blocks · b · b` values; `slot` holds `qr::slot::SLOT` values (for pass 2,
/// those pass 1 wrote); `1 ≤ b`, `b · b ≤ MAX_PAIRS`; one block of at least `b · b` threads.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn svd_qr_step_f64(args: QrStepArgs) {
    let QrStepArgs { blocks, b, partial, abs, pass, one_pass, slot } = args;
    use crate::qr::{qr_step, slot as s};
    // SAFETY: slot holds SLOT values.
    if pass == 2 && unsafe { ld_global(slot.add(s::NEED2)) } == 0.0 {
        return;
    }
    let g = SVD_GRAM::ptr() as *mut f64;
    let (t, pairs) = (thread_idx_x(), b * b);
    if t < pairs {
        let mut sum = 0.0;
        let mut blk = 0;
        while blk < blocks {
            // SAFETY: blk · pairs + t below blocks · pairs.
            sum += unsafe { ldg(partial.add((blk * pairs + t) as usize)) };
            blk += 1;
        }
        // SAFETY: t < pairs ≤ MAX_PAIRS.
        unsafe { *g.add(t as usize) = sum };
    }
    gpu_device::thread::sync_threads();
    if t == 0 {
        // SAFETY: the shared Gram matrix of pairs values and the caller's slot of SLOT values.
        let (gs, sl) = unsafe { (core::slice::from_raw_parts(g, pairs as usize), core::slice::from_raw_parts_mut(slot, s::SLOT)) };
        qr_step(gs, b as usize, abs, pass, one_pass != 0, sl, gpu_device::intrinsics::sqrt_f64);
    }
}

/// `dst[i] = src[i]` widened from `f32` to `f64` (exact), for `i < n`: an `f32` matrix's values
/// for the `f64` SVD.
///
/// # Safety
/// `src` and `dst` hold `n` values each; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn svd_widen_f32(a: WidenArgs) {
    let WidenArgs { src, dst, n } = a;
    let mut i = index_1d_u64();
    while i < n {
        // SAFETY: i < n.
        unsafe { stg(dst.add(i as usize), ld_global(src.add(i as usize)) as f64) };
        i += grid_size_1d();
    }
}
