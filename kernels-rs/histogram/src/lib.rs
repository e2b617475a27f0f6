//! Histograms on the GPU: the building blocks other kernels reuse, and the kernels of PTX module
//! `histogram` (host side: crate `gpu-histogram`).
//!
//! Layers, as CUB's:
//! - [`warp`]: [`warp::match_rank`], the rank of a lane's key among the lanes holding the same
//!   key (warp-aggregated atomics and stable per-key ranks are built on it).
//! - [`block`]: privatized counting into shared memory and its flush to global counts.
//! - kernels (feature `kernels`):
//!   - `histogram_shared`: `copies` privatized copies of the counts per block in dynamic shared
//!     memory, flushed with one global atomic per nonzero bin;
//!   - `histogram_global`: warp-aggregated global atomics, for bins that do not fit;
//!   - `histogram_partition`: the partitioned form (ScanTrans's `inter` and `intra`): warp `p`
//!     counts partition `p` of the keys into row `p + 1` of a `(parts + 1) × bins` table and
//!     gives every key its rank among equal keys of its partition;
//!   - `histogram_vscan_reduce` / `histogram_vscan`: the inclusive scan down every column of
//!     such a table, split into row chunks when there are few columns.
//!
//! Keys `>= bins` are never counted; when the host passes a `first_bad` word, the smallest index
//! of such a key is recorded there (`atomicMin`), which the checked host calls report.
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

/// Threads per block of every histogram kernel.
pub const NT: u32 = 256;
/// Warps per block.
pub const WARPS: u32 = NT / 32;
/// Keys a thread of `histogram_shared` / `histogram_global` handles per grid-stride step (one
/// 16-byte vector load when aligned).
pub const VT: u32 = 4;
/// A key value that is never counted (every `bins <= 2^31`): lanes past the end use it.
pub const NO_KEY: u32 = u32::MAX;

/// Partition `p` of `parts` contiguous partitions of `n` keys: `[p * chunk, min((p + 1) *
/// chunk, n))` with `chunk = ceil(n / parts)`. Returns `(begin, end)`; empty past the end.
///
/// ```
/// use histogram_kernels::partition_range;
/// assert_eq!(partition_range(10, 3, 0), (0, 4));
/// assert_eq!(partition_range(10, 3, 2), (8, 10));
/// assert_eq!(partition_range(2, 4, 3), (2, 2)); // more partitions than keys: empty ones
/// ```
#[inline(always)]
pub const fn partition_range(n: u64, parts: u64, p: u64) -> (u64, u64) {
    let chunk = if parts == 0 { 0 } else { n.div_ceil(parts) };
    let b = if p * chunk < n { p * chunk } else { n };
    let e = if (p + 1) * chunk < n { (p + 1) * chunk } else { n };
    (b, e)
}

#[cfg(target_arch = "nvptx64")]
pub mod block;
#[cfg(target_arch = "nvptx64")]
pub mod warp;

/// The arguments of the counting kernels `histogram_shared` and `histogram_global` (the latter
/// reads neither `slice` nor `copies`): the counts of `keys[..n]` in `[0, bins)` added to
/// `counts`; the first key out of range reported in `first_bad` (unless null).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CountArgs {
    /// The keys (`n ≤ u32::MAX` words; 16-byte aligned when `vec_ok`).
    pub keys: *const u32,
    /// The counts (`bins` words).
    pub counts: *mut u32,
    /// One word, or null.
    pub first_bad: *mut u32,
    /// Keys.
    pub n: u64,
    /// Bins.
    pub bins: u32,
    /// Bins a block row counts (`histogram_shared`).
    pub slice: u32,
    /// Privatized copies a block (`histogram_shared`).
    pub copies: u32,
    /// Nonzero: the keys may be loaded 4 at a time.
    pub vec_ok: u32,
}

/// The arguments of `histogram_partition`: one warp a partition of `keys[..n]` (`parts`
/// partitions), row `p + 1` of `table` its counts, `intra` each key's rank among its
/// partition's equal keys.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PartitionArgs {
    /// The keys (`n` words).
    pub keys: *const u32,
    /// The table (`(parts + 1) · bins` zeroed words).
    pub table: *mut u32,
    /// Each key's rank (`n` words).
    pub intra: *mut u32,
    /// One word, or null.
    pub first_bad: *mut u32,
    /// Keys.
    pub n: u64,
    /// Partitions.
    pub parts: u64,
    /// Bins.
    pub bins: u32,
}

/// The arguments of the vertical scan of a `rows × bins` table by row chunks of `rows_per_chunk`:
/// `histogram_vscan_reduce` writes each chunk's column sums into `sums` (`(chunks + 1) · bins`
/// words, row 0 zero); `histogram_vscan` scans each chunk's columns in place from the carries
/// `sums` (null: none).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct VscanArgs {
    /// The table.
    pub table: *mut u32,
    /// The chunk sums (written by the reduce, read as carries by the scan), or null.
    pub sums: *mut u32,
    /// Columns.
    pub bins: u64,
    /// Rows.
    pub rows: u64,
    /// Rows a chunk.
    pub rows_per_chunk: u64,
}

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
