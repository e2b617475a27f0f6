//! Pointers-to-index on the GPU: for offsets `o` of length `m + 1` (a CSR row pointer), write
//! for every position `j < nnz` the segment `i` with `o[i] <= j < o[i + 1]`. Host side: crate
//! `gpu-ptr2idx`.
//!
//! Load balanced as moderngpu's load-balancing search: the work is the merge of the `m` segment
//! ends `a[i] = o[i + 1]` with the `nnz` positions `b[j] = j` (a segment end goes first on ties);
//! while merging, the number of ends consumed before position `j` is its segment. Every tile
//! takes [`NV`] items of that merge, whatever mix of empty segments and long ones it holds, so one
//! huge row, millions of empty rows, `m = 0` or `nnz = 0` all cost the same per item.
//!
//! - [`merge_path`]: the partition search (pure, also built and tested on the host).
//! - kernels (feature `kernels`): `ptr2idx_partition` (one split per tile boundary),
//!   `ptr2idx_expand` (one tile per block), `ptr2idx_validate` (checked variant).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

/// Threads per block.
pub const NT: u32 = 256;
/// Merge items per thread. 16 against 8: RadixTrans 0.5–3% faster on every suite matrix on an
/// H100 (the 100M-nonzero one 5.21–5.23 against 5.28–5.29 ms), in two alternating runs.
pub const VT: u32 = 16;
/// Merge items per tile.
pub const NV: u32 = NT * VT;

/// Merge-path search on diagonal `diag` of the merge of `a_len` segment ends (`a(i)`,
/// nondecreasing) with positions `0..b_len`: how many segment ends are among the first `diag`
/// merged items (an end `a(i) <= j` goes before position `j`). Clamped to the diagonal's valid
/// range even for malformed (non-monotone) `a`.
///
/// ```
/// // offsets [0, 2, 2, 5]: ends a = [2, 2, 5], positions 0..5.
/// // merged order: b0 b1 a0 a1 b2 b3 b4 a2
/// let a = [2u32, 2, 5];
/// let split = |d| ptr2idx_kernels::merge_path(|i| a[i as usize] as u64, 3, 5, d);
/// assert_eq!([split(0), split(2), split(3), split(4), split(8)], [0, 0, 1, 2, 3]);
/// ```
#[inline(always)]
pub fn merge_path(a: impl Fn(u64) -> u64, a_len: u64, b_len: u64, diag: u64) -> u64 {
    let mut begin = diag.saturating_sub(b_len);
    let mut end = diag.min(a_len);
    while begin < end {
        let mid = begin + (end - begin) / 2;
        // Is end `mid` consumed before position `diag - 1 - mid`?
        if a(mid) <= diag - 1 - mid {
            begin = mid + 1;
        } else {
            end = mid;
        }
    }
    begin
}

/// The arguments of the ptr2idx kernels (`ptr2idx_partition`, `ptr2idx_expand`; `_u64` for
/// 64-bit offsets `O`): the merge-path partition of the `m + 1` offsets against the `nnz`
/// positions into `splits` (`tiles + 1` words), then each position's segment into `out`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Ptr2IdxArgs<O> {
    /// The offsets (`m + 1` words).
    pub offsets: *const O,
    /// The partition (`tiles + 1` words): written by the partition, read by the expansion.
    pub splits: *mut u64,
    /// Each position's segment (`nnz` words; the expansion).
    pub out: *mut u32,
    /// Segments (`< 2^32` for the expansion).
    pub m: u64,
    /// Positions.
    pub nnz: u64,
    /// Tiles of `NV` merged items (the partition).
    pub tiles: u64,
}

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
