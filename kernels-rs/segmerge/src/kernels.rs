//! Kernels of PTX module `segmerge`.
use gpu_device::dynamic_shared;

use crate::pass::{merge, partition};

dynamic_shared!(SEGMERGE_SMEM: u8);

/// `segmerge_partition_u32(keys, n, s, tiles_per_pair, tiles, splits)`.
///
/// # Safety
/// See [`crate::pass::partition`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segmerge_partition_u32(keys: *const u32, n: u64, s: u64, tpp: u64, tiles: u64, splits: *mut u32) {
    // SAFETY: forwarded.
    unsafe { partition(keys, n, s, tpp, tiles, splits) }
}

/// `segmerge_pairs_u32(keys, vals, n, s, tiles_per_pair, splits, keys_out, vals_out)`.
///
/// # Safety
/// See [`crate::pass::merge`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segmerge_pairs_u32(
    keys: *const u32,
    vals: *const u32,
    n: u64,
    s: u64,
    tpp: u64,
    splits: *const u32,
    keys_out: *mut u32,
    vals_out: *mut u32,
) {
    // SAFETY: forwarded.
    unsafe { merge::<u32, true>(SEGMERGE_SMEM::ptr(), keys, vals, n, s, tpp, splits, keys_out, vals_out) }
}

/// `segmerge_keys_u32(keys, n, s, tiles_per_pair, splits, keys_out)`.
///
/// # Safety
/// See [`crate::pass::merge`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segmerge_keys_u32(keys: *const u32, n: u64, s: u64, tpp: u64, splits: *const u32, keys_out: *mut u32) {
    // SAFETY: forwarded.
    unsafe { merge::<u32, false>(SEGMERGE_SMEM::ptr(), keys, core::ptr::null(), n, s, tpp, splits, keys_out, core::ptr::null_mut()) }
}
