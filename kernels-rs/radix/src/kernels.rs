//! Kernels of PTX module `radix`: thin entry points over [`crate::tile`].
use gpu_device::static_shared;

use crate::tile::{downsweep, upsweep};
use crate::NV;

static_shared!(RX_SECOND4: [u32; NV as usize]);
static_shared!(RX_SECOND8: [u64; NV as usize]);

/// [`upsweep`]: digit counts of tile `blockIdx.x`, digit-major.
///
/// # Safety
/// As [`upsweep`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn radix_upsweep(keys: *const u32, n: u64, shift: u32, bits: u32, tiles: u64, counts: *mut u32) {
    // SAFETY: the caller's contract.
    unsafe { upsweep(keys, n, shift, bits, tiles, counts) }
}

macro_rules! downsweep_kernel {
    ($name:ident, $t:ty, $stage:ident) => {
        /// [`downsweep`] with a second payload of this width.
        ///
        /// # Safety
        /// As [`downsweep`].
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(keys_in: *const u32, first_in: *const u32, second_in: *const $t, n: u64, shift: u32, bits: u32, tiles: u64, offsets: *const u32, keys_out: *mut u32, first_out: *mut u32, second_out: *mut $t) {
            // SAFETY: the caller's contract.
            unsafe { downsweep(keys_in, first_in, second_in, n, shift, bits, tiles, offsets, keys_out, first_out, second_out, $stage::ptr()) }
        }
    };
}

downsweep_kernel!(radix_downsweep_v4, u32, RX_SECOND4);
downsweep_kernel!(radix_downsweep_v8, u64, RX_SECOND8);
