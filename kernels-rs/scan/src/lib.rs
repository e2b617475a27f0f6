//! Prefix sums on the GPU: the building blocks other kernels reuse, and the device-wide kernels
//! of PTX module `scan` (host side: crate `gpu-scan`).
//!
//! Layers, as CUB's:
//! - [`warp`]: warp-wide reductions by shuffle.
//! - [`block`]: Blelloch's work-efficient exclusive scan of `2 * NT` values held two per thread
//!   (up-sweep / down-sweep in shared memory, padded against bank conflicts), and a block reduce.
//!   They never declare shared memory: the caller passes `temp` of [`block::TEMP_LEN`] items.
//! - [`tile`]: one tile of `NV = NT * 2 * VT` items (two 16-byte-aligned chunks of `VT` items
//!   per thread, so global loads and stores are coalesced and vectorized).
//! - `kernels` (feature `kernels`): `scan_reduce_{t}` (upsweep), `scan_downsweep_{t}`,
//!   `scan_lookback_{t}` (single pass, decoupled look-back), for `t` in `u32 i32 u64 i64`.
//!
//! All arithmetic wraps, so results are bit-identical to the serial twin for every input.
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

/// Threads per block of every scan kernel.
pub const NT: u32 = 256;
/// Items per chunk: one chunk is loaded per 16-byte-aligned access (two for 64-bit items).
pub const VT: u32 = 4;
/// Items per tile: each thread owns two chunks, `tid` and `tid + NT`.
pub const NV: u32 = NT * 2 * VT;

/// Items a scan can add: plain integers with wrapping addition (so results are exact and
/// order-independent, hence deterministic).
pub trait ScanItem: Copy {
    /// The additive identity.
    const ZERO: Self;
    /// Wrapping addition.
    fn add(self, other: Self) -> Self;
}

macro_rules! scan_item {
    ($($t:ty),*) => {$(
        impl ScanItem for $t {
            const ZERO: Self = 0;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
        }
    )*};
}
scan_item!(u32, i32, u64, i64);

/// Index into the padded shared array: one pad slot per 32 entries, so the strided accesses of
/// the Blelloch tree fall in different banks (GPU Gems 3, ch. 39).
#[inline(always)]
pub const fn padded(i: u32) -> u32 {
    i + (i >> 5)
}

/// Number of tiles covering `n` items.
#[inline(always)]
pub const fn tile_count(n: u64) -> u64 {
    n.div_ceil(NV as u64)
}

#[cfg(target_arch = "nvptx64")]
pub mod block;
#[cfg(target_arch = "nvptx64")]
pub mod tile;
#[cfg(target_arch = "nvptx64")]
pub mod warp;

/// The arguments of the scan kernels (`scan_{reduce,downsweep,lookback}_{u32,i32,u64,i64}`):
///
/// - `scan_reduce`: each tile's total of `input[..n]` into `output` (one item a tile);
/// - `scan_downsweep`: each tile of `input[..n]` scanned into `output` (exclusive, or inclusive
///   when `inclusive != 0`) from its tile's carry in `carries` (null: zero);
/// - `scan_lookback`: the single-pass scan with decoupled look-back, on the zeroed `counter`
///   and `status` and the per-tile `agg` and `incl`.
///
/// `output` may equal `input`; `vec_ok != 0` only when both are 16-byte aligned.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ScanArgs<T> {
    /// The items (`n`).
    pub input: *const T,
    /// The scanned items (`n`), or the tile totals (`scan_reduce`).
    pub output: *mut T,
    /// One carry a tile, or null (`scan_downsweep`).
    pub carries: *const T,
    /// The tile counter: one word, zeroed (`scan_lookback`).
    pub counter: *mut u32,
    /// One status word a tile, zeroed (`scan_lookback`).
    pub status: *mut u32,
    /// Each tile's total (`scan_lookback`).
    pub agg: *mut T,
    /// Each tile's inclusive prefix (`scan_lookback`).
    pub incl: *mut T,
    /// Items.
    pub n: u64,
    /// Nonzero: an inclusive scan.
    pub inclusive: u32,
    /// Nonzero: 16-byte vector accesses allowed.
    pub vec_ok: u32,
}

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
