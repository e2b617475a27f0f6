//! Conversion helpers of PTX module `spmv`, shared by the formats built from a CSR.
use gpu_device::atomic::atomic_max_u32;
use gpu_device::mem::{ld_global, stg};
use gpu_device::thread::{grid_size_1d, index_1d_u64};
use gpu_device::warp::{lane_id, shfl_xor_sync, FULL_MASK};

use crate::LengthsArgs;

/// Row lengths from the pointer differences into `len` (when not null), and their maximum into
/// `*max` by atomic max (the caller zeroes it first).
///
/// # Safety
/// `ptr` holds `rows + 1` nondecreasing entries; `len` is null or holds `rows` entries; `max`
/// points to one `u32`; any 1-D grid of whole warps.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_row_lengths(a: LengthsArgs) {
    let LengthsArgs { ptr, len, max, rows } = a;
    let stride = grid_size_1d();
    // Warp-uniform trip count, so that the shuffles see every lane.
    let mut base = index_1d_u64() - lane_id() as u64;
    while base < rows {
        let r = base + lane_id() as u64;
        let mut l = 0u32;
        if r < rows {
            // SAFETY: r < rows.
            unsafe {
                l = ld_global(ptr.add(r as usize + 1)) - ld_global(ptr.add(r as usize));
                if !len.is_null() {
                    stg(len.add(r as usize), l);
                }
            }
        }
        let mut d = 16;
        while d > 0 {
            l = l.max(shfl_xor_sync(FULL_MASK, l, d));
            d /= 2;
        }
        if lane_id() == 0 && l > 0 {
            // SAFETY: the caller's max.
            unsafe { atomic_max_u32(max, l) };
        }
        base += stride;
    }
}

/// `out[i] = i` for `i < n`.
///
/// # Safety
/// `out` holds `n` entries; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_iota(a: LengthsArgs) {
    let (out, n) = (a.len, a.rows);
    let mut i = index_1d_u64();
    while i < n {
        // SAFETY: i < n.
        unsafe { stg(out.add(i as usize), i as u32) };
        i += grid_size_1d();
    }
}
