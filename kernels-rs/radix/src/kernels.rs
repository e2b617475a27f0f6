//! Kernels of PTX module `radix`: thin entry points over [`crate::tile`], each taking its
//! `#[repr(C)]` argument struct by value.
use gpu_device::dynamic_shared;
use gpu_device::mem::ldg;

use crate::tile::{histogram, onesweep};
use crate::{HistogramArgs, OnesweepArgs, VT, VT_KEYS8};

dynamic_shared!(RX_STAGE: u8);

/// Whether a launch whose `run_if` is this runs: null, or a word that is not 0.
///
/// # Safety
/// `run_if` is null or points to a readable word.
#[inline(always)]
unsafe fn runs(run_if: *const u32) -> bool {
    // SAFETY: the caller's contract.
    run_if.is_null() || unsafe { ldg(run_if) } != 0
}

/// [`histogram`]: digit counts of up to `HIST_PASSES` passes in one read of the keys.
///
/// # Safety
/// As [`histogram`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn radix_histogram(a: HistogramArgs) {
    // SAFETY: the caller's contract.
    unsafe {
        if runs(a.run_if) {
            histogram(&a)
        }
    }
}

macro_rules! onesweep_kernel {
    ($name:ident, $t:ty, $h:literal, $bytes:literal, $s:ty) => {
        onesweep_kernel!($name, $t, $h, $bytes, $s, 0);
    };
    ($name:ident, $t:ty, $h:literal, $bytes:literal, $s:ty, $bits:literal) => {
        onesweep_kernel!($name, $t, $h, $bytes, $s, $bits, VT, false);
    };
    ($name:ident, $t:ty, $h:literal, $bytes:literal, $s:ty, $bits:literal, $vt:ident, $keys_only:literal) => {
        #[doc = concat!("[`onesweep`] with a second payload of ", $bytes, " bytes and `", stringify!($s), "` look-back status words (digits of ", $bits, " bits; 0: any width), `", stringify!($vt), "` keys a thread, keys alone: ", stringify!($keys_only), "; dynamic shared memory of `stage_bytes_for(", stringify!($vt), ", ", $bytes, ")`.")]
        ///
        /// # Safety
        /// As [`onesweep`] (the second payload's arrays hold `n` items of this width).
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(a: OnesweepArgs) {
            // SAFETY: the caller's contract (the launch sizes the dynamic shared memory).
            unsafe {
                if runs(a.run_if) {
                    onesweep::<$t, $s, $h, $bits, { $vt as usize }, $keys_only>(&a, RX_STAGE::smem())
                }
            }
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
// 8-bit digits (the default passes) with the width fixed at compile time.
onesweep_kernel!(radix_onesweep8_v1, u8, 1, 1, u64, 8);
onesweep_kernel!(radix_onesweep8_v2, u16, 1, 2, u64, 8);
onesweep_kernel!(radix_onesweep8_v4, u32, 1, 4, u64, 8);
onesweep_kernel!(radix_onesweep8_v8, u64, 1, 8, u64, 8);
onesweep_kernel!(radix_onesweep8_v16, u64, 2, 16, u64, 8);
onesweep_kernel!(radix_onesweep8_s32_v1, u8, 1, 1, u32, 8);
onesweep_kernel!(radix_onesweep8_s32_v2, u16, 1, 2, u32, 8);
onesweep_kernel!(radix_onesweep8_s32_v4, u32, 1, 4, u32, 8);
onesweep_kernel!(radix_onesweep8_s32_v8, u64, 1, 8, u32, 8);
onesweep_kernel!(radix_onesweep8_s32_v16, u64, 2, 16, u32, 8);
// 8-bit passes of keys alone, larger tiles (the registers of the payloads hold more keys).
onesweep_kernel!(radix_onesweep8_keys, u32, 1, 0, u64, 8, VT_KEYS8, true);
onesweep_kernel!(radix_onesweep8_s32_keys, u32, 1, 0, u32, 8, VT_KEYS8, true);
