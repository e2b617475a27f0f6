//! Sparse matrix-vector products `y = alpha * A * x + beta * y` on the GPU, one module per
//! format (host side: crate `gpu-spmv`). With `beta == 0`, `y` is not read (as BLAS: NaN in the
//! old `y` does not propagate).
//!
//! - `spmv_csr_scalar_{f32,f64}`: one thread per row, the row's products summed in order.
//! - `spmv_csr_vector_{f32,f64}`: one warp per row, lanes striding the row, a shuffle reduction.
//! - `spmv_scale_{f32,f64}` then `spmv_coo_{f32,f64}`: `y = beta * y`, then a warp per chunk of
//!   [`COO_CHUNK`] nonzeros sums equal rows across the warp (segmented sums) and adds
//!   `alpha · sum` with one atomic add per row and chunk (not bit-reproducible run to run).
//!   `spmv_coo16_{f32,f64}` is the same with each row stored in 16 bits above its chunk's base
//!   row (`spmv_coo16_pack` makes them from 32-bit rows).
//!
//! - `spmv_merge_partition_{f32,f64}` then `spmv_merge_{f32,f64}`: merge-path CSR (Merrill &
//!   Garland, SC'16): each thread takes `MERGE_VT` steps of the merge of the row ends with the
//!   nonzeros, so rows of any length cost the same per step; a block first stages its tile's
//!   products and row ends in shared memory (coalesced); pieces of rows split between threads
//!   are summed across the warp by row, then completed by atomic adds (those rows are not
//!   bit-reproducible).
//!
//! - `ell.rs`: ELL (rows padded to one width, column-major; thread per row) and its fill.
//! - `hyb.rs`: ELL-COO / HYB (ELL of a chosen width, COO for the overflow; the COO part is
//!   added atomically by `spmv_coo`).
//! - `jds.rs`: JDS (rows sorted by length, jagged diagonals column-major; thread per sorted row).
//! - `sell.rs`: SELL-C-σ (chunks of [`SELL_C`] rows, each padded to its longest and stored
//!   column-major, rows sorted by length inside windows of σ; a chunk's columns in 16 bits above
//!   a base column where they fit; a warp per chunk, a lane per row) and its conversion.
//! - `scoo.rs`: sliced COO (slices of rows accumulated in shared memory, several lanes per row).
//! - `adaptive.rs`: CSR-adaptive (row blocks: CSR-stream for runs of short rows, a block for one
//!   row, pieces with atomics for very long rows).
//! - `halo.rs`: the distributed SpMV's halo exchange (pack the entries of `x` other ranks read,
//!   unpack the received ones into a full `x`).
//! - `convert.rs`: conversion helpers (row lengths with their maximum, the identity
//!   permutation).
//!
//! CSR-scalar, CSR-vector, ELL, JDS and SELL-C-σ use no atomics: the same bits every run (ELL, JDS and SELL-C-σ sum
//! each row in CSR order, so they match CSR-scalar bit for bit). CSR-adaptive is deterministic
//! except for rows longer than [`ADAPTIVE_LONG`]; COO, HYB (its COO part), SCOO and merge-path
//! are not.
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

/// Threads per block of every kernel here.
pub const NT: u32 = 256;

/// Rows one block of `spmv_csr_vector` handles (a warp each).
pub const VECTOR_ROWS_PER_BLOCK: u32 = NT / 32;

/// Merge-path steps (row ends + nonzeros) per thread of `spmv_merge`.
pub const MERGE_VT: u32 = 8;

/// COO: runs of 32 nonzeros one warp of `spmv_coo` loads before its gathers (`32 · COO_VT`
/// nonzeros per warp and turn). 2 against 4 and 8 (40, 48 and 62 registers; H100, f64): R-MAT
/// 2^20 0.076 against 0.078–0.081 and 0.079–0.080 ms, R-MAT 2^22 0.165–0.166 against 0.166–0.168
/// and 0.170–0.171, the Laplacian 0.058–0.060 against 0.064–0.066 and 0.072–0.073
/// (BENCHMARKS.md).
pub const COO_VT: usize = 2;
/// COO: consecutive nonzeros one warp of `spmv_coo` takes at a time (a multiple of
/// `32 · COO_VT`); a row spanning several chunks gets one atomic add per chunk. 256 against
/// 1024 and one run of 128 without the carry (with `COO_VT` = 4; H100, f64): R-MAT 2^20 0.075 against 0.084 and
/// 0.076 ms, R-MAT 2^22 0.165 against 0.170 and 0.173, a dense row of 1M 0.118 against 0.120
/// and 0.159 (BENCHMARKS.md). It is also the unit of COO's 16-bit rows (`spmv_coo16`): a base row
/// per chunk, and the rows above it in 16 bits when they span fewer than 2^16 rows. Those take
/// 2 bytes a nonzero off the 16 (f64) COO reads, but hardly any time (H100, f64, two runs each):
/// R-MAT 2^22 0.1623–0.1624 against 0.1637 ms, uniform 100k² 0.102–0.104 against 0.104–0.108,
/// the Laplacian 0.0563–0.0568 against 0.058: COO there is bound by L2 traffic (`x`'s gathers),
/// not by its stream. The footprint is 12% smaller.
pub const COO_CHUNK: u64 = 256;
const _: () = assert!(COO_CHUNK % (32 * COO_VT as u64) == 0, "COO_CHUNK is a multiple of 32 · COO_VT");

/// The column index of ELL padding (never a real column: columns are below `cols ≤ u32::MAX`).
pub const ELL_PAD: u32 = u32::MAX;

/// SELL-C-σ: rows per chunk (`C`), one warp: a chunk's rows are padded to its longest and stored
/// column-major, so lane `l` of a warp reads slot `j` of the chunk's row `l` beside its
/// neighbours'.
pub const SELL_C: u64 = 32;
/// SELL-C-σ: the 16-bit column offset of padding in a chunk whose columns are stored in 16 bits
/// above its base column (32-bit chunks pad with [`ELL_PAD`]).
pub const SELL_PAD16: u16 = u16::MAX;

/// SELL-C-σ: whether a chunk of `width` slots a row whose columns run from `lo` to `hi` stores
/// them in 16 bits above `lo` (every offset below [`SELL_PAD16`]); a chunk without entries does
/// not.
///
/// ```
/// assert!(spmv_kernels::sell_narrow(3, 100, 100 + 65_534));
/// assert!(!spmv_kernels::sell_narrow(3, 100, 100 + 65_535));
/// assert!(!spmv_kernels::sell_narrow(0, u32::MAX, 0));
/// ```
#[inline(always)]
pub fn sell_narrow(width: u32, lo: u32, hi: u32) -> bool {
    width > 0 && hi >= lo && hi - lo < SELL_PAD16 as u32
}

/// SELL-C-σ: a chunk's index storage in units of 16 words (64 bytes): `width` for 16-bit
/// columns (32 · 2 bytes a slot row), `2 · width` for 32-bit ones.
#[inline(always)]
pub fn sell_index_units(width: u32, narrow: bool) -> u32 {
    if narrow {
        width
    } else {
        2 * width
    }
}

/// Values by index (CSR-VI, Kourtis, Goumas & Koziris 2008; `spmv_sell_vi`): the most distinct
/// values a matrix may hold for its values to be stored as 1-byte indices into a table.
pub const VI_MAX: u32 = 256;
/// Values by index: slots of the open-addressing set `spmv_dict_insert` fills (a power of two,
/// four times [`VI_MAX`]: a set of at most [`VI_MAX`] values is at most a quarter full).
pub const VI_SLOTS: u32 = 1024;
/// Values by index: slots a value probes (linearly, from [`vi_hash`]) before the set counts as
/// full (too many values).
pub const VI_PROBES: u32 = 32;
/// Values by index: a free slot of the set (the bits of no `f32`, and of one `f64` NaN, which
/// makes the set count as full).
pub const VI_EMPTY: u64 = u64::MAX;

/// Values by index: a value's first slot, from its bits (SplitMix64's finalizer).
///
/// ```
/// assert!(spmv_kernels::vi_hash(1.5f64.to_bits()) < spmv_kernels::VI_SLOTS);
/// ```
#[inline(always)]
pub fn vi_hash(bits: u64) -> u32 {
    let mut z = bits.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) as u32) & (VI_SLOTS - 1)
}

/// CSR-adaptive: rows starting in one chunk of this many nonzeros (and each at most this long)
/// form a row block.
pub const ADAPTIVE_CHUNK: u64 = 1024;
/// CSR-adaptive: products one block stages in shared memory (a row block holds fewer than
/// `2 · ADAPTIVE_CHUNK` nonzeros).
pub const ADAPTIVE_NV: usize = 2 * ADAPTIVE_CHUNK as usize;
/// CSR-adaptive: rows longer than this are cut into pieces of this many nonzeros, one block
/// each, completed by atomic adds.
pub const ADAPTIVE_LONG: u64 = 16 * ADAPTIVE_CHUNK;
/// CSR-adaptive: the most rows of a row block (a multiple of [`NT`]; a block starts at every
/// multiple of it; a block of more than `NT` rows gives each thread several). 1024 against 256
/// (one row a thread): CSR-adaptive on R-MAT 2^22 0.200 → 0.186 ms, R-MAT 2^20 0.095 → 0.090 ms
/// (f64, H100; 512, 2048 and 4096 measured worse on one of the two; BENCHMARKS.md).
pub const ADAPTIVE_ROWS: u64 = 4 * NT as u64;
const _: () = assert!(ADAPTIVE_ROWS % NT as u64 == 0, "ADAPTIVE_ROWS is a multiple of NT");

/// CSR-adaptive: how many row-block entries start at row `r` (`0 ..= rows`; `ptr(i)` reads the
/// row pointer). A block starts at row 0, at every multiple of [`ADAPTIVE_ROWS`] (so a block has
/// at most that many rows), where a row starts in a new chunk of [`ADAPTIVE_CHUNK`] nonzeros, and beside any row
/// longer than the chunk (such a row is alone). A row longer than [`ADAPTIVE_LONG`] gets one
/// entry per piece; `r == rows` gets the closing entry.
///
/// ```
/// use spmv_kernels::adaptive_entries;
/// let ptr = [0u64, 3, 3, 5000, 40000, 40001];
/// let e: Vec<u64> = (0..=5).map(|r| adaptive_entries(r, 5, |i| ptr[i as usize])).collect();
/// // Rows 0 and 1 together; row 2 (4995) alone; row 3 (35000) in 3 pieces; row 4 alone.
/// assert_eq!(e, [1, 0, 1, 3, 1, 1]);
/// ```
#[inline(always)]
pub fn adaptive_entries(r: u64, rows: u64, ptr: impl Fn(u64) -> u64) -> u64 {
    if r >= rows {
        return 1;
    }
    let start = ptr(r);
    let len = ptr(r + 1) - start;
    if len > ADAPTIVE_LONG {
        return len.div_ceil(ADAPTIVE_LONG);
    }
    if r == 0 || r % ADAPTIVE_ROWS == 0 || len > ADAPTIVE_CHUNK {
        return 1;
    }
    let prev = ptr(r - 1);
    (start - prev > ADAPTIVE_CHUNK || start / ADAPTIVE_CHUNK != prev / ADAPTIVE_CHUNK) as u64
}

/// SCOO: shared-memory lanes per row (consecutive threads add into different lanes).
pub const SCOO_LANES: u32 = 4;
/// SCOO: the most rows of a slice (a power of two; the shared memory of a block is
/// `SCOO_LANES · slice_rows` values).
pub const SCOO_MAX_SLICE_ROWS: u32 = 1024;

/// JDS: how many of the rows sorted by length (their keys `max_len − len` ascending, `key(i)`
/// for `i < rows`) are longer than `d`: the first key `≥ max_len − d` (binary search; `key` is
/// asked for indices below `rows` only).
///
/// ```
/// // Lengths 5, 3, 3, 0 (max 5): keys 0, 2, 2, 5.
/// let keys = [0u32, 2, 2, 5];
/// let longer = |d| spmv_kernels::jds_rows_longer(d, 5, |i| keys[i as usize], 4);
/// assert_eq!([0, 1, 2, 3, 4].map(longer), [3, 3, 3, 1, 1]);
/// ```
#[inline(always)]
pub fn jds_rows_longer(d: u32, max_len: u32, key: impl Fn(u64) -> u32, rows: u64) -> u64 {
    let bound = max_len - d.min(max_len);
    let (mut lo, mut hi) = (0u64, rows);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if key(mid) < bound {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The row where diagonal `diag` of the merge path crosses: how many row ends come among the
/// first `diag` items when the row ends (`ptr[1..=rows]`) are merged with the nonzeros `0..nnz`,
/// a row end going first on ties (`segmerge_kernels::merge_path` with `b` the counting
/// sequence). The nonzeros consumed are `diag − row`.
///
/// ```
/// // Rows of 2, 0 and 3 nonzeros.
/// let ptr = [0u32, 2, 2, 5];
/// let row = |d| spmv_kernels::merge_path_search(d, 3, 5, |r| ptr[r as usize + 1] as u64);
/// assert_eq!([0, 1, 2, 3, 4, 5, 6, 7, 8].map(row), [0, 0, 0, 1, 2, 2, 2, 2, 3]);
/// ```
///
/// `row_end(r)` is `ptr[r + 1]`, asked for rows `r < rows` only.
#[inline(always)]
pub fn merge_path_search(diag: u64, rows: u64, nnz: u64, row_end: impl Fn(u64) -> u64) -> u64 {
    segmerge_kernels::merge_path(row_end, rows, |k| k, nnz, diag)
}

/// `alpha * sum + beta * y_old` (`gpu_device::num::combine`, re-exported for the products here).
///
/// ```
/// assert_eq!(spmv_kernels::combine(2.0f64, 3.0, 0.0, f64::NAN), 6.0);
/// ```
pub use gpu_device::num::combine;

pub mod args;
pub use args::{
    AdaptiveArgs, AdaptiveBuildArgs, Coo16PackArgs, CooArgs, CsrArgs, DictArgs, EllArgs, HaloArgs, HybArgs, JdsArgs, JdsBuildArgs, LengthsArgs,
    MergePathArgs, ScaleArgs, ScooArgs, SellArgs, SellChunksArgs, SellFillArgs,
};

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod merge_path;

#[cfg(target_arch = "nvptx64")]
pub mod reduce;

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod adaptive;
#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod convert;
#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod dict;
#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod ell;
#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod halo;
#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod hyb;
#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod jds;
#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod scoo;
#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod sell;
#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod term;
