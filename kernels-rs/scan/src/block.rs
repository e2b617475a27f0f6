//! Block-level Blelloch scan and reduce over `NT` threads. Callers pass the shared `temp` storage
//! (as CUB's `TempStorage`) and every thread of the block must call (they contain barriers).
use gpu_device::thread::{sync_threads, thread_idx_x};
use gpu_device::warp::{lane_id, Shuffle};
use gpu_device::WARP_SIZE;

use crate::{padded, warp, ScanItem, NT};

/// Entries of `temp` that [`exclusive_sum2`] needs: `2 * NT` padded values plus one slot for
/// the total.
pub const TEMP_LEN: usize = padded(2 * NT) as usize + 1;
/// Entries of `temp` that [`reduce_sum`] needs.
pub const REDUCE_TEMP_LEN: usize = (NT / WARP_SIZE) as usize;

/// Blelloch's work-efficient exclusive scan of the `2 * NT` values `x[i]`, where thread `t`
/// holds `a = x[t]` and `b = x[t + NT]`. Returns `(exclusive prefix of a, exclusive prefix of b,
/// total of all 2 * NT values)` to thread `t`.
///
/// Up-sweep builds partial sums in a balanced tree in place; the root is cleared; the down-sweep
/// swaps and adds back down the tree. `log2(2 * NT)` levels each way, a barrier per level.
///
/// # Safety
/// `temp` points to [`TEMP_LEN`] items of shared memory not used by other threads meanwhile.
#[inline(always)]
pub unsafe fn exclusive_sum2<T: ScanItem>(temp: *mut T, a: T, b: T) -> (T, T, T) {
    let n = 2 * NT;
    let tid = thread_idx_x();
    // SAFETY (whole function): every index is < padded(2 * NT) + 1 = TEMP_LEN.
    unsafe {
        *temp.add(padded(tid) as usize) = a;
        *temp.add(padded(tid + NT) as usize) = b;
        // Up-sweep (reduce) phase.
        let mut offset = 1;
        let mut d = n >> 1;
        while d > 0 {
            sync_threads();
            if tid < d {
                let ai = padded(offset * (2 * tid + 1) - 1) as usize;
                let bi = padded(offset * (2 * tid + 2) - 1) as usize;
                *temp.add(bi) = (*temp.add(bi)).add(*temp.add(ai));
            }
            offset *= 2;
            d >>= 1;
        }
        sync_threads();
        let last = padded(n - 1) as usize;
        let total_slot = padded(n) as usize;
        if tid == 0 {
            *temp.add(total_slot) = *temp.add(last);
            *temp.add(last) = T::ZERO;
        }
        // Down-sweep phase.
        let mut d = 1;
        while d < n {
            offset >>= 1;
            sync_threads();
            if tid < d {
                let ai = padded(offset * (2 * tid + 1) - 1) as usize;
                let bi = padded(offset * (2 * tid + 2) - 1) as usize;
                let t = *temp.add(ai);
                *temp.add(ai) = *temp.add(bi);
                *temp.add(bi) = (*temp.add(bi)).add(t);
            }
            d *= 2;
        }
        sync_threads();
        let r = (*temp.add(padded(tid) as usize), *temp.add(padded(tid + NT) as usize), *temp.add(total_slot));
        sync_threads(); // `temp` may be reused by the caller after this
        r
    }
}

/// Sum of `x` over the block, returned to every thread.
///
/// # Safety
/// `temp` points to [`REDUCE_TEMP_LEN`] items of shared memory not used by other threads meanwhile.
#[inline(always)]
pub unsafe fn reduce_sum<T: ScanItem + Shuffle>(temp: *mut T, x: T) -> T {
    let tid = thread_idx_x();
    let s = warp::reduce_sum(x);
    // SAFETY: tid / 32 < NT / 32 = REDUCE_TEMP_LEN.
    unsafe {
        if lane_id() == 0 {
            *temp.add((tid / WARP_SIZE) as usize) = s;
        }
        sync_threads();
        let lane = lane_id();
        let w = if lane < NT / WARP_SIZE { *temp.add(lane as usize) } else { T::ZERO };
        let total = warp::reduce_sum(w);
        sync_threads();
        total
    }
}
