//! Stable sorts of consecutive segments of `BLOCK` items, one block per segment, the whole
//! segment in shared memory: the building block other kernels reuse and the kernels of PTX
//! module `segsort` (host side: crate `gpu-segsort`).
//!
//! [`block::block_sort`] (as moderngpu's blocksort): each of `NT = BLOCK / VT` threads sorts
//! its `VT` items in registers by odd-even transposition (swapping only strictly smaller keys,
//! so equal keys keep their order), then `log2(NT)` merge passes in shared memory double the
//! sorted runs, each thread finding its `VT` outputs by a merge-path search
//! (`segmerge_kernels::block::merge_from`, stable: left run first on ties). Padding past the
//! end of the last segment is `K::MAX` placed after every real item, so it never overtakes one.
//!
//! Kernels (feature `kernels`): `segsort_{pairs,keys}_{128,256,512,1024,2048}` for `u32` keys;
//! for the sort by arbitrary offsets, `(segment << 32 | key)` 64-bit keys:
//! `segsort_pack`, `segsort_unpack`, `segsort_{pairs,keys}64_2048` and one merge pass
//! `segsort_merge_partition64` / `segsort_merge_{pairs,keys}64` (instantiated from
//! `segmerge_kernels::pass`).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

pub use segmerge_kernels::{SortKey, VT};

/// Threads per block for a segment of `block` items (`block / VT`).
pub const fn threads_for(block: u32) -> u32 {
    block / VT
}

/// Segment sizes there are kernels for.
pub const BLOCKS: [u32; 5] = [128, 256, 512, 1024, 2048];

/// The arguments of the block sorts (`segsort_{pairs,keys}_{128..2048}`, `K = u32`;
/// `segsort_{pairs,keys}64_2048`, `K = u64`): every segment of one block's `NT · VT` items sorted
/// stably (in place allowed; the keys-only kernels read no values: `vals`, `vals_out` null).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SortArgs<K> {
    /// The keys (`n`).
    pub keys: *const K,
    /// The values (`n`), or null.
    pub vals: *const u32,
    /// The sorted keys (`n`).
    pub keys_out: *mut K,
    /// The sorted values (`n`), or null.
    pub vals_out: *mut u32,
    /// Items.
    pub n: u64,
}

/// The arguments of `segsort_pack` (`packed[i] = seg[i] << 32 | keys[i]`) and `segsort_unpack`
/// (`keys[i] = packed[i] as u32`; `seg` unused), for `i < n`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PackArgs {
    /// Each item's segment (the pack).
    pub seg: *const u32,
    /// The keys: read by the pack, written by the unpack.
    pub keys: *mut u32,
    /// The packed 64-bit keys: written by the pack, read by the unpack.
    pub packed: *mut u64,
    /// Items.
    pub n: u64,
}

#[cfg(target_arch = "nvptx64")]
pub mod block;

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
