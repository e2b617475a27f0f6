//! Kernels of PTX module `radix`: thin entry points over [`crate::tile`].
use gpu_device::dynamic_shared;

use crate::tile::{histogram, onesweep};

dynamic_shared!(RX_STAGE: u8);

/// [`histogram`]: digit counts of up to `HIST_PASSES` passes in one read of the keys.
///
/// # Safety
/// As [`histogram`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn radix_histogram(
    keys: *const u32,
    n: u64,
    chunk: u64,
    shift0: u32,
    per: u32,
    passes: u32,
    end: u32,
    hist: *mut u32,
) {
    // SAFETY: the caller's contract.
    unsafe { histogram(keys, n, chunk, shift0, per, passes, end, hist) }
}

macro_rules! onesweep_kernel {
    ($name:ident, $t:ty, $h:literal, $bytes:literal, $s:ty) => {
        #[doc = concat!("[`onesweep`] with a second payload of ", $bytes, " bytes and `", stringify!($s), "` look-back status words; dynamic shared memory of `stage_bytes(", $bytes, ")`.")]
        ///
        /// # Safety
        /// As [`onesweep`] (the second payload's arrays hold `n` items of this width).
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(keys_in: *const u32, first_in: *const u32, second_in: *const $t, n: u64, shift: u32, bits: u32, pass: u32, counts: *const u32, status: *mut $s, counter: *mut u32, keys_out: *mut u32, first_out: *mut u32, second_out: *mut $t) {
            // SAFETY: the caller's contract (the launch sizes the dynamic shared memory).
            unsafe { onesweep::<$t, $s, $h>(keys_in, first_in, second_in, n, shift, bits, pass, counts, status, counter, keys_out, first_out, second_out, RX_STAGE::smem()) }
        }
    };
}

onesweep_kernel!(radix_onesweep_v1, u8, 1, 1, u64);
onesweep_kernel!(radix_onesweep_v2, u16, 1, 2, u64);
onesweep_kernel!(radix_onesweep_v4, u32, 1, 4, u64);
onesweep_kernel!(radix_onesweep_v8, u64, 1, 8, u64);
// 16-byte items as two 8-byte halves, staged one after the other.
onesweep_kernel!(radix_onesweep_v16, u64, 2, 16, u64);
// The same with 32-bit status words (n < 2^STATUS32_COUNT_BITS, at most STATUS32_MAX_PASSES passes).
onesweep_kernel!(radix_onesweep_s32_v1, u8, 1, 1, u32);
onesweep_kernel!(radix_onesweep_s32_v2, u16, 1, 2, u32);
onesweep_kernel!(radix_onesweep_s32_v4, u32, 1, 4, u32);
onesweep_kernel!(radix_onesweep_s32_v8, u64, 1, 8, u32);
onesweep_kernel!(radix_onesweep_s32_v16, u64, 2, 16, u32);
