//! Stable LSD radix sort of `u32` keys on the GPU, one digit per pass, carrying up to two
//! payloads (a `u32` one and a 4- or 8-byte one). Host side: crate `gpu-radix`.
//!
//! A pass is ScanTrans on one digit with the tiles as partitions:
//! - **upsweep** ([`tile::upsweep`]): each tile of [`NV`] keys counts its digits in shared memory
//!   and writes them digit-major (`counts[d * tiles + t]`);
//! - **spine**: one exclusive scan of those counts (`gpu-scan`) gives every (digit, tile) its
//!   output offset;
//! - **downsweep** ([`tile::downsweep`]): each tile ranks its keys among equal digits in input
//!   order (warp match-rank, then per-warp counters: stable), stages the tile in shared memory in
//!   digit order and writes it out in runs of equal digits, with the payloads.
//!
//! The building blocks are public for other kernels: [`warp::match_rank`] (from
//! `histogram-kernels`), [`tile::exclusive_scan_digit_counts`] (one warp scans a tile's digit
//! counts), [`tile::upsweep`] and [`tile::downsweep`].
//!
//! Kernels (feature `kernels`): `radix_upsweep`, `radix_downsweep_v4`, `radix_downsweep_v8`
//! (the second payload's width; null pointers skip a payload or the keys' output).
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

/// Threads per block of the radix kernels.
pub const NT: u32 = 256;
/// Keys per thread.
pub const VT: u32 = 8;
/// Keys per tile (one block): `NT * VT`.
pub const NV: u32 = NT * VT;
/// Most digit bits of one pass (512 buckets).
pub const MAX_BITS: u32 = 9;

/// Digit `(key >> shift) & (2^bits - 1)` of one pass.
///
/// ```
/// assert_eq!(radix_kernels::digit(0x1234, 4, 8), 0x23);
/// assert_eq!(radix_kernels::digit(0x1234, 0, 0), 0);
/// ```
#[inline(always)]
pub const fn digit(key: u32, shift: u32, bits: u32) -> u32 {
    (key >> shift) & ((1u32 << bits) - 1)
}

/// The passes sorting the low `end_bit` bits: `(passes, bits per pass)`, the fewest passes of at
/// most `max_bits` (1 to [`MAX_BITS`]) bits, balanced; at least one pass (of 0 bits when
/// `end_bit == 0`).
///
/// ```
/// use radix_kernels::passes;
/// assert_eq!(passes(0, 9), (1, 0));
/// assert_eq!(passes(8, 9), (1, 8));
/// assert_eq!(passes(17, 9), (2, 9));
/// assert_eq!(passes(20, 7), (3, 7));
/// assert_eq!(passes(32, 8), (4, 8));
/// ```
pub const fn passes(end_bit: u32, max_bits: u32) -> (u32, u32) {
    let max_bits = if max_bits == 0 { 1 } else if max_bits > MAX_BITS { MAX_BITS } else { max_bits };
    let bits = if end_bit > 32 { 32 } else { end_bit };
    let passes = if bits == 0 { 1 } else { bits.div_ceil(max_bits) };
    (passes, bits.div_ceil(passes))
}

/// Bits needed to sort keys below `n` (`ceil(log2 n)`; 0 for `n <= 1`).
///
/// ```
/// assert_eq!(radix_kernels::bits_below(1), 0);
/// assert_eq!(radix_kernels::bits_below(100_000), 17);
/// assert_eq!(radix_kernels::bits_below(1 << 20), 20);
/// ```
pub const fn bits_below(n: u64) -> u32 {
    if n <= 1 { 0 } else { 64 - (n - 1).leading_zeros() }
}

/// Warp-level building blocks (re-exported from `histogram-kernels`).
#[cfg(target_arch = "nvptx64")]
pub mod warp {
    pub use histogram_kernels::warp::match_rank;
}

#[cfg(target_arch = "nvptx64")]
pub mod tile;

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
