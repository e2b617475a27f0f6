//! Warp-wide reductions by butterfly shuffle (CC 3.0+).
use gpu_device::warp::{self, Shuffle};
use gpu_device::WARP_SIZE;

use crate::ScanItem;

/// Sum of `x` over the 32 lanes, returned to every lane. All lanes must call it.
#[inline(always)]
pub fn reduce_sum<T: ScanItem + Shuffle>(x: T) -> T {
    let mut s = x;
    let mut d = WARP_SIZE / 2;
    while d > 0 {
        s = s.add(warp::shfl_xor_sync(warp::FULL_MASK, s, d));
        d /= 2;
    }
    s
}
