//! Kernels of PTX module `segmerge`.
use gpu_device::dynamic_shared;

use crate::pass::{merge, partition};
use crate::MergeArgs;

dynamic_shared!(SEGMERGE_SMEM: u8);

/// The partition of one pass ([`MergeArgs`]).
///
/// # Safety
/// See [`crate::pass::partition`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segmerge_partition_u32(a: MergeArgs<u32>) {
    // SAFETY: forwarded.
    unsafe { partition(&a) }
}

/// The merge of one pass, keys and values ([`MergeArgs`]).
///
/// # Safety
/// See [`crate::pass::merge`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segmerge_pairs_u32(a: MergeArgs<u32>) {
    // SAFETY: forwarded.
    unsafe { merge::<u32, true>(SEGMERGE_SMEM::ptr(), &a) }
}

/// The merge of one pass, keys only ([`MergeArgs`] without values).
///
/// # Safety
/// See [`crate::pass::merge`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segmerge_keys_u32(a: MergeArgs<u32>) {
    // SAFETY: forwarded.
    unsafe { merge::<u32, false>(SEGMERGE_SMEM::ptr(), &a) }
}
