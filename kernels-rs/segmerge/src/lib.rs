//! Stable merging on the GPU: the building blocks other kernels reuse, and the kernels of PTX
//! module `segmerge` (host side: crate `gpu-segmerge`).
//!
//! A merge pass merges each adjacent pair of sorted runs of length `s` (runs `2p` and `2p + 1`)
//! into one run of `2s`, stably: on equal keys the left run's elements come first. Every pair
//! is cut into tiles of [`NV`] merged items by merge-path searches ([`merge_path`]), so each
//! block merges a bounded slice whatever `s` is:
//! - `segmerge_partition_*`: the split of every tile (binary search in global memory);
//! - `segmerge_{pairs,keys}_u32`: one tile per block: load both slices to shared memory, each
//!   thread finds its `VT` items by merge path, merges them serially, stores coalesced.
//!
//! Building blocks: [`merge_path`], [`tile_range`] (pure, also on the host), [`SortKey`];
//! `block::{serial_merge, merge_from, store_items}`; `pass::{partition, merge}` (one merge
//! pass, instantiated by `segsort-kernels` for its 64-bit keys too).
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

/// Threads per block of the merge kernels.
pub const NT: u32 = 256;
/// Merged items per thread.
pub const VT: u32 = 8;
/// Merged items per tile.
pub const NV: u32 = NT * VT;

/// Keys the sorts and merges order: unsigned integers, compared with `<` only (stability comes
/// from never moving an element past an equal one).
pub trait SortKey: Copy + PartialOrd {
    /// The largest key (padding that sorts last; stable order keeps real `MAX` keys first).
    const MAX: Self;
}
impl SortKey for u32 {
    const MAX: Self = u32::MAX;
}
impl SortKey for u64 {
    const MAX: Self = u64::MAX;
}

/// Merge-path search: of the first `diag` items of the stable merge of sorted `a` (length
/// `a_len`) and sorted `b` (length `b_len`), how many come from `a`. On ties `a` goes first.
///
/// ```
/// use segmerge_kernels::merge_path;
/// let (a, b) = ([1u32, 3, 3, 5], [3u32, 4]);
/// // merged: a0=1 a1=3 a2=3 b0=3 b1=4 a3=5
/// let split = |d| merge_path(|i| a[i as usize], 4, |j| b[j as usize], 2, d);
/// assert_eq!([split(0), split(1), split(3), split(4), split(5), split(6)], [0, 1, 3, 3, 3, 4]);
/// ```
#[inline(always)]
pub fn merge_path<K: SortKey>(a: impl Fn(u64) -> K, a_len: u64, b: impl Fn(u64) -> K, b_len: u64, diag: u64) -> u64 {
    let mut begin = diag.saturating_sub(b_len);
    let mut end = if diag < a_len { diag } else { a_len };
    while begin < end {
        let mid = begin + (end - begin) / 2;
        // a[mid] is taken before b[diag - 1 - mid] unless b's is strictly smaller.
        if b(diag - 1 - mid) < a(mid) {
            end = mid;
        } else {
            begin = mid + 1;
        }
    }
    begin
}

/// Where tile `t` of a merge pass over `n` items with runs of `s` falls: `(pair_begin, a_len,
/// b_len, d0, d1)`: the pair's first item, its two run lengths, and the tile's merged range
/// `[d0, d1)` inside the pair. `tiles_per_pair = ceil(2s / NV)`.
///
/// ```
/// // n = 5000, s = 2048: pair 0 = runs [0, 2048) + [2048, 4096), pair 1 = [4096, 5000) alone.
/// let tpp = segmerge_kernels::tiles_per_pair(2048);
/// assert_eq!(tpp, 2);
/// assert_eq!(segmerge_kernels::tile_range(5000, 2048, tpp, 1), (0, 2048, 2048, 2048, 4096));
/// assert_eq!(segmerge_kernels::tile_range(5000, 2048, tpp, 2), (4096, 904, 0, 0, 904));
/// ```
#[inline(always)]
pub fn tile_range(n: u64, s: u64, tiles_per_pair: u64, t: u64) -> (u64, u64, u64, u64, u64) {
    let pair = t / tiles_per_pair;
    let local = t % tiles_per_pair;
    let pb = pair * 2 * s;
    let a_end = if pb + s < n { pb + s } else { n };
    let b_end = if pb + 2 * s < n { pb + 2 * s } else { n };
    let (a_len, b_len) = (a_end - pb, b_end - a_end);
    let total = a_len + b_len;
    let nv = NV as u64;
    let d0 = if local * nv < total { local * nv } else { total };
    let d1 = if d0 + nv < total { d0 + nv } else { total };
    (pb, a_len, b_len, d0, d1)
}

/// Tiles of one pair of runs of length `s`: `ceil(2s / NV)`.
#[inline(always)]
pub const fn tiles_per_pair(s: u64) -> u64 {
    (2 * s).div_ceil(NV as u64)
}

/// Tiles of a merge pass over `n` items with runs of `s`.
#[inline(always)]
pub const fn tile_count(n: u64, s: u64) -> u64 {
    n.div_ceil(2 * s) * tiles_per_pair(s)
}

/// The arguments of one merge pass's kernels, for every module that instantiates [`pass`]
/// (`segmerge_{partition,pairs,keys}_u32`, `segsort_merge_{partition,pairs,keys}64`): `n` items
/// in runs of `s`, each pair of runs merged over `tpp` tiles ([`tiles_per_pair`]); the
/// partition writes `splits` (`tiles` words), the merges read it. The keys-only merges read no
/// values (`vals` and `vals_out` null).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MergeArgs<K> {
    /// The keys (`n`).
    pub keys: *const K,
    /// The values (`n`), or null.
    pub vals: *const u32,
    /// Each tile's split (`tiles` words).
    pub splits: *mut u32,
    /// The merged keys (`n`, not overlapping `keys`).
    pub keys_out: *mut K,
    /// The merged values (`n`), or null.
    pub vals_out: *mut u32,
    /// Items.
    pub n: u64,
    /// Items a run.
    pub s: u64,
    /// Tiles a pair of runs.
    pub tpp: u64,
    /// Tiles.
    pub tiles: u64,
}

#[cfg(target_arch = "nvptx64")]
pub mod block;
#[cfg(target_arch = "nvptx64")]
pub mod pass;

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
