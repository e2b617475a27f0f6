//! Floating-point sums across a warp and a block, for kernels of any crate (as CUB's
//! `WarpReduce` / `BlockReduce`). Summation order is fixed by the lane and warp numbers, so the
//! result has the same bits on every run. [`Segments`] sums runs of equal keys across a warp
//! (a segmented reduction, as CUB's `WarpReduce::HeadSegmentedSum`).
use core::ops::Add;

use crate::thread::{block_dim_x, sync_threads, thread_idx_x};
use crate::warp::{lane_id, shfl_down_sync, Shuffle, FULL_MASK};

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
        let total = crate::warp::shfl_idx_sync(FULL_MASK, total, 0);
        sync_threads();
        total
    }
}

/// A warp's segments for [`Segments::sum`]: runs of consecutive lanes holding the same key (as
/// CUB's `WarpReduce::HeadSegmentedSum`, with the heads found from the keys). Made once per set
/// of keys and reused for any number of values (CSRC's transposed product sums `k` values per
/// nonzero over the same columns).
///
/// Equal keys must sit in consecutive lanes (column-sorted data does): a key split into two runs
/// gets two heads, each with its run's sum.
#[derive(Clone, Copy)]
pub struct Segments {
    /// Bit `s` set when the lane `2^s` below-right (`lane + 2^s`) is in the warp and has this
    /// lane's key.
    same: u32,
    head: bool,
}

impl Segments {
    /// The segments of `key` across the full warp; every lane must call it.
    #[inline(always)]
    pub fn new(key: u32) -> Self {
        let lane = lane_id();
        let mut same = 0u32;
        let mut d = 1u32;
        let mut bit = 0u32;
        while d < 32 {
            let other = shfl_down_sync(FULL_MASK, key, d);
            if lane + d < 32 && other == key {
                same |= 1 << bit;
            }
            d *= 2;
            bit += 1;
        }
        let prev = crate::warp::shfl_up_sync(FULL_MASK, key, 1);
        Self { same, head: lane == 0 || prev != key }
    }

    /// Whether this lane starts its segment (lane 0, or a key unlike the lane before).
    #[inline(always)]
    pub fn head(&self) -> bool {
        self.head
    }

    /// The sum of `x` over this lane and the lanes after it in its segment, by five shuffle-down
    /// steps that add only across equal keys (Aliaga et al. 2023, Listing 1): a segment's head
    /// gets the segment's sum. The order is fixed by the lanes, so it is the same on every run.
    /// Every lane must call it.
    #[inline(always)]
    pub fn sum<T: Shuffle + Add<Output = T>>(&self, x: T) -> T {
        let mut s = x;
        let mut d = 1u32;
        let mut bit = 0u32;
        while d < 32 {
            let t = shfl_down_sync(FULL_MASK, s, d);
            if self.same & (1 << bit) != 0 {
                s = s + t;
            }
            d *= 2;
            bit += 1;
        }
        s
    }
}
