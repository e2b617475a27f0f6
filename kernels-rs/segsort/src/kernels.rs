//! Kernels of PTX module `segsort`.
use gpu_device::dynamic_shared;
use gpu_device::mem::{ld_global, stg, GlobalWord};
use gpu_device::thread::{block_idx_x, grid_size_1d, index_1d_u64};
use segmerge_kernels::{pass, MergeArgs};

use crate::block::block_sort;
use crate::{PackArgs, SortArgs};

dynamic_shared!(SEGSORT_SMEM: u8);

/// Block `b` sorts segment `[b * NV, min(n, (b + 1) * NV))`.
///
/// # Safety
/// As [`block_sort`], with `ceil(n / (NT * VT))` blocks of `NT` threads.
#[inline(always)]
unsafe fn segments<K: segmerge_kernels::SortKey + GlobalWord, const VALUES: bool, const NT: u32>(a: &SortArgs<K>) {
    let SortArgs { keys, vals, keys_out, vals_out, n } = *a;
    let nv = (NT * crate::VT) as u64;
    let b0 = block_idx_x() as u64 * nv;
    let count = (n - b0).min(nv) as u32;
    let off = b0 as usize;
    // SAFETY: the segment lies inside the n items; values are only touched with VALUES.
    unsafe {
        let (v, vo) = if VALUES { (vals.add(off), vals_out.add(off)) } else { (vals, vals_out) };
        block_sort::<K, VALUES, NT>(SEGSORT_SMEM::ptr(), keys.add(off), v, count, keys_out.add(off), vo)
    }
}

macro_rules! segsort_kernels {
    ($($pairs:ident, $keys:ident, $nt:literal;)*) => {$(
        /// Stable sort of every segment of `NT * VT` (key, value) pairs ([`SortArgs`]; in place
        /// allowed).
        ///
        /// # Safety
        /// `ceil(n / (NT * VT))` blocks of `NT` threads; `shared_bytes::<u32>(NT)` bytes of
        /// dynamic shared memory; buffers of `n` items.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $pairs(a: SortArgs<u32>) {
            // SAFETY: forwarded.
            unsafe { segments::<u32, true, $nt>(&a) }
        }

        /// Keys-only variant ([`SortArgs`] without values).
        ///
        /// # Safety
        /// As the pairs kernel.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $keys(a: SortArgs<u32>) {
            // SAFETY: forwarded.
            unsafe { segments::<u32, false, $nt>(&a) }
        }
    )*};
}

segsort_kernels! {
    segsort_pairs_128, segsort_keys_128, 16;
    segsort_pairs_256, segsort_keys_256, 32;
    segsort_pairs_512, segsort_keys_512, 64;
    segsort_pairs_1024, segsort_keys_1024, 128;
    segsort_pairs_2048, segsort_keys_2048, 256;
}

/// 64-bit `(segment << 32 | key)` keys, segments of 2048 pairs.
///
/// # Safety
/// As `segsort_pairs_2048` with `shared_bytes::<u64>(256)` bytes of shared memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segsort_pairs64_2048(a: SortArgs<u64>) {
    // SAFETY: forwarded.
    unsafe { segments::<u64, true, 256>(&a) }
}

/// Keys-only 64-bit variant.
///
/// # Safety
/// As `segsort_pairs64_2048`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segsort_keys64_2048(a: SortArgs<u64>) {
    // SAFETY: forwarded.
    unsafe { segments::<u64, false, 256>(&a) }
}

/// `packed[i] = seg[i] << 32 | keys[i]` ([`PackArgs`]).
///
/// # Safety
/// Buffers of `n` items; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segsort_pack(a: PackArgs) {
    let PackArgs { seg, keys, packed, n } = a;
    let mut i = index_1d_u64();
    while i < n {
        // SAFETY: i < n.
        unsafe { stg(packed.add(i as usize), ((ld_global(seg.add(i as usize)) as u64) << 32) | ld_global(keys.add(i as usize)) as u64) };
        i += grid_size_1d();
    }
}

/// `keys[i] = packed[i] as u32` (the low half; [`PackArgs`]).
///
/// # Safety
/// Buffers of `n` items; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segsort_unpack(a: PackArgs) {
    let PackArgs { keys, packed, n, .. } = a;
    let mut i = index_1d_u64();
    while i < n {
        // SAFETY: i < n.
        unsafe { stg(keys.add(i as usize), ld_global(packed.add(i as usize)) as u32) };
        i += grid_size_1d();
    }
}

/// Merge-pass partition over 64-bit keys (see `segmerge_kernels::pass::partition`).
///
/// # Safety
/// As `pass::partition`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segsort_merge_partition64(a: MergeArgs<u64>) {
    // SAFETY: forwarded.
    unsafe { pass::partition(&a) }
}

/// Merge pass over 64-bit keys with values (see `segmerge_kernels::pass::merge`).
///
/// # Safety
/// As `pass::merge` with `NV * 12` bytes of dynamic shared memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segsort_merge_pairs64(a: MergeArgs<u64>) {
    // SAFETY: forwarded.
    unsafe { pass::merge::<u64, true>(SEGSORT_SMEM::ptr(), &a) }
}

/// Keys-only merge pass over 64-bit keys.
///
/// # Safety
/// As `pass::merge` with `NV * 12` bytes of dynamic shared memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn segsort_merge_keys64(a: MergeArgs<u64>) {
    // SAFETY: forwarded.
    unsafe { pass::merge::<u64, false>(SEGSORT_SMEM::ptr(), &a) }
}
