//! Floating-point sums across a warp and a block, for kernels of any crate (as CUB's
//! `WarpReduce` / `BlockReduce`). Summation order is fixed by the lane and warp numbers, so the
//! result has the same bits on every run.
use core::ops::Add;

use gpu_device::thread::{block_dim_x, sync_threads, thread_idx_x};
use gpu_device::warp::{lane_id, shfl_down_sync, Shuffle, FULL_MASK};

/// Sum of `x` over groups of `width` consecutive lanes (`width` a power of two ≤ 32), returned
/// to the group's first lane (the others hold partial sums). Every lane of the warp must call
/// it.
#[inline(always)]
pub fn group_sum<T: Shuffle + Add<Output = T>>(x: T, width: u32) -> T {
    let mut s = x;
    let mut d = width / 2;
    while d > 0 {
        s = s + shfl_down_sync(FULL_MASK, s, d);
        d /= 2;
    }
    s
}

/// Sum of `x` over the block (at most 1024 threads, a multiple of 32), returned to every thread.
///
/// # Safety
/// `temp` points to 32 values of shared memory that no other code uses meanwhile; every thread
/// of the block calls it (it synchronizes the block twice).
#[inline(always)]
pub unsafe fn block_sum<T: Shuffle + Add<Output = T> + Default>(temp: *mut T, x: T) -> T {
    let warps = block_dim_x() / 32;
    let s = group_sum(x, 32);
    // SAFETY: warp numbers are below 32; the caller's temp holds 32 values.
    unsafe {
        if lane_id() == 0 {
            *temp.add((thread_idx_x() / 32) as usize) = s;
        }
        sync_threads();
        let lane = lane_id();
        let w = if lane < warps { *temp.add(lane as usize) } else { T::default() };
        let total = group_sum(w, 32);
        let total = gpu_device::warp::shfl_idx_sync(FULL_MASK, total, 0);
        sync_threads();
        total
    }
}
