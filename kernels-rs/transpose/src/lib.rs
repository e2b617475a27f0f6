//! Sparse transposition kernels (PTX module `transpose`, host side: crate `gpu-transpose`).
//!
//! The transposers compose the primitive crates (ptr2idx, histogram, scan, segsort, segmerge);
//! what is left is moving the nonzeros:
//!
//! - `transpose_scatter_v{4,8}` (ScanTrans): nonzero `j` of partition `p = j / chunk` goes to
//!   `colptr[c] + inter[p][c] + intra[j]` with `c = col[j]` ([`scatter_slot`]).
//! - `transpose_gather_v{4,8}` (MergeTrans, COO chain): `out[k] = in[perm[k]]` for the row
//!   indices and the values, after a stable sort of `(col, j)` pairs.
//! - `transpose_sorted_ptr`: the column pointer from the sorted column indices by boundary
//!   detection ([`sorted_ptr_range`]): no atomics, one write per pointer.
//! - `transpose_iota`: `perm[j] = j`.
//! - `transpose_permute_v{1,2,16}`: `out[j] = vals[perm[j]]`, for values of the widths the sorts
//!   do not carry (every algorithm moves each nonzero's position instead, then this).
//!
//! - `transpose_symmetric_v{4,8}` (SymTrans): for a square matrix whose pattern is symmetric,
//!   the transpose's pointer and row indices are copies of the matrix's own, and each value
//!   moves to its mirror's place ([`symmetric_slot`]); any nonzero without a mirror, or a row not
//!   strictly sorted, raises a flag instead (the host then transposes another way).
//!
//! RadixTrans's passes are the radix sort primitive's (`kernels-rs/radix`, host `gpu-radix`).
//!
//! `v4` kernels move 4-byte values, `v8` 8-byte values; a null value pointer moves none
//! (pattern matrices).
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx))]
#![deny(missing_docs)]

/// Threads per block of every kernel here.
pub const NT: u32 = 256;

/// Where ScanTrans puts nonzero `j` (column `c`, partition `p`): the column's start, plus the
/// nonzeros of column `c` in partitions before `p` (`inter_pc`, the vertically scanned table),
/// plus its rank among the column's nonzeros of its own partition (`intra_j`).
///
/// ```
/// // column 3 starts at 10; 2 of its nonzeros are in earlier partitions; this one is the
/// // second of its partition.
/// assert_eq!(transpose_kernels::scatter_slot(10, 2, 1), 13);
/// ```
#[inline(always)]
pub const fn scatter_slot(colptr_c: u32, inter_pc: u32, intra_j: u32) -> u32 {
    colptr_c.wrapping_add(inter_pc).wrapping_add(intra_j)
}

/// The pointer entries that position `i` of the sorted keys `keys` (`nnz` of them, each `< n`)
/// writes, as a half-open range of pointer indices, all set to `i`: the columns after the
/// previous key up to its own key. The last position also writes the tail up to `n` with `nnz`
/// (returned as the second range, empty elsewhere). With `nnz = 0` position 0 is virtual and
/// writes `0..=n` with 0.
///
/// ```
/// // keys [1, 1, 3] of n = 5: ptr = [0, 0, 2, 2, 3, 3]
/// use transpose_kernels::sorted_ptr_range as r;
/// let keys = [1u32, 1, 3];
/// assert_eq!(r(&|i| keys[i as usize], 3, 5, 0), (0..2, 0..0));
/// assert_eq!(r(&|i| keys[i as usize], 3, 5, 1), (2..2, 0..0));
/// assert_eq!(r(&|i| keys[i as usize], 3, 5, 2), (2..4, 4..6));
/// ```
#[inline(always)]
pub fn sorted_ptr_range(keys: &impl Fn(u64) -> u32, nnz: u64, n: u64, i: u64) -> (core::ops::Range<u64>, core::ops::Range<u64>) {
    if nnz == 0 {
        return (0..0, 0..n + 1);
    }
    let lo = if i == 0 { 0 } else { (keys(i - 1) as u64 + 1).min(n) };
    let hi = (keys(i) as u64 + 1).min(n + 1).max(lo);
    let tail = if i + 1 == nnz { hi..n + 1 } else { 0..0 };
    (lo..hi, tail)
}

/// The 64-bit-pointer transposer's index math (`gpu_transpose::index64`): a matrix with a
/// `u64` row pointer is transposed in chunks of at most `chunk` nonzeros by the 32-bit
/// machinery; chunk `c` covers nonzeros `c·chunk .. min((c + 1)·chunk, nnz)`, which may start
/// and end inside a row.
pub mod index64 {
    /// How many of `ptr[0..len]` (nondecreasing) are `<= key`.
    pub fn upper_bound(ptr: &impl Fn(u64) -> u64, len: u64, key: u64) -> u64 {
        let (mut lo, mut hi) = (0u64, len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if ptr(mid) <= key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The rows `r0..r1` that hold nonzeros `k0..k1` (`k0 < k1 <= nnz = ptr(m)`) of a row
    /// pointer of `m + 1` entries: `r0` the row of nonzero `k0`, `r1 - 1` that of `k1 - 1`.
    pub fn chunk_rows(ptr: &impl Fn(u64) -> u64, m: u64, k0: u64, k1: u64) -> (u64, u64) {
        (upper_bound(ptr, m + 1, k0) - 1, upper_bound(ptr, m + 1, k1 - 1))
    }

    /// Entry `i` of a chunk's 32-bit row pointer: `ptr(r0 + i)` clamped to `k0..=k1`, less
    /// `k0` (rows cut by the chunk's ends keep only their part inside it).
    pub const fn chunk_ptr(p: u64, k0: u64, k1: u64) -> u32 {
        let c = if p < k0 {
            k0
        } else if p > k1 {
            k1
        } else {
            p
        };
        (c - k0) as u32
    }

    /// Row `r` of the generated test matrix with `m` rows and `nnz` nonzeros starts at this
    /// nonzero: rows of `nnz / m` entries, the first `nnz % m` one longer.
    pub const fn gen_ptr(r: u64, m: u64, nnz: u64) -> u64 {
        let (q, rem) = (nnz / m, nnz % m);
        r * q + if r < rem { r } else { rem }
    }

    /// SplitMix64's finalizer.
    pub const fn mix_a(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// MurmurHash3's 64-bit finalizer, on the key offset by a constant (independent of
    /// [`mix_a`]).
    pub const fn mix_b(z: u64) -> u64 {
        let mut z = z ^ 0x9e37_79b9_7f4a_7c15;
        z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        z ^ (z >> 33)
    }

    /// Column `k` of the generated test matrix with `n` columns.
    pub const fn gen_col(k: u64, n: u64, seed: u64) -> u32 {
        (mix_a(k ^ mix_b(seed)) % n) as u32
    }

    /// The two hashes one entry `(row, col)` adds to a matrix's fingerprint (sums mod 2⁶⁴ over
    /// the entries: equal for equal multisets of entries, whatever the order).
    pub const fn entry_hashes(row: u64, col: u64) -> (u64, u64) {
        let key = (row << 32) | col;
        (mix_a(key), mix_b(key))
    }
}

/// Copies of SymTrans's "not symmetric" flag, each polled by a share of the warps (one word
/// polled by every warp made its reads take turns at one L2 slice: 77 µs for 10M nonzeros).
pub const SYM_FLAG_COPIES: usize = 32;
/// Words between two copies of the flag (128 bytes: different L2 lines).
pub const SYM_FLAG_STRIDE: usize = 32;
/// Words of SymTrans's flag, zeroed before its kernel; nonzero after it when the pattern is not
/// symmetric (the first word says).
pub const SYM_FLAG_WORDS: usize = SYM_FLAG_COPIES * SYM_FLAG_STRIDE;

/// Word of SymTrans's flag area (between copies 0 and 1, read by no flag check) where the probe
/// adds how many distinct mirror regions each probed row's nonzeros reach ([`SYM_REGION_BITS`]).
pub const SYM_REGIONS_WORD: usize = 1;
/// Word where the probe adds how many nonzeros it probed.
pub const SYM_PROBED_WORD: usize = 2;
/// A mirror region: `2^SYM_REGION_BITS` consecutive rows. A symmetric matrix whose probed rows
/// reach more distinct regions than half their nonzeros is in no local order (a random
/// numbering): SymTrans's mirror searches then miss the caches and `Auto` leaves it to RadixTrans
/// ([`sym_scattered`]).
pub const SYM_REGION_BITS: u32 = 12;

/// Whether the probe's counts (`regions` distinct mirror regions over `probed` nonzeros) say the
/// pattern is scattered: more regions than half the nonzeros.
///
/// ```
/// // 27-point stencil rows, natural order: 27 nonzeros in about 5 regions; randomly numbered:
/// // about 26.
/// assert!(!transpose_kernels::sym_scattered(5 * 1024, 27 * 1024));
/// assert!(transpose_kernels::sym_scattered(26 * 1024, 27 * 1024));
/// assert!(!transpose_kernels::sym_scattered(0, 0));
/// ```
#[inline(always)]
pub const fn sym_scattered(regions: u32, probed: u32) -> bool {
    2 * regions as u64 > probed as u64
}

/// Most rows of a square matrix that SymTrans's probe looks at before the full pass
/// ([`sym_probe_row`]): enough that a pattern far from symmetric is told in one small launch.
pub const SYM_PROBE_ROWS: u64 = 1024;
/// Nonzeros of each probed row whose mirrors the probe looks for: the row's first 32 (a warp).
pub const SYM_PROBE_ENTRIES: u64 = 32;

/// The rows SymTrans's probe looks at in an `n × n` matrix: `min(n, SYM_PROBE_ROWS)`.
///
/// ```
/// assert_eq!(transpose_kernels::sym_probe_rows(10), 10);
/// assert_eq!(transpose_kernels::sym_probe_rows(1 << 20), transpose_kernels::SYM_PROBE_ROWS);
/// ```
#[inline(always)]
pub const fn sym_probe_rows(n: u64) -> u64 {
    if n < SYM_PROBE_ROWS {
        n
    } else {
        SYM_PROBE_ROWS
    }
}

/// The probe's `s`-th row (`s < sym_probe_rows(n)`, `n < 2^32`): `s · n / sym_probe_rows(n)`,
/// spread evenly over the matrix (every row when `n <= SYM_PROBE_ROWS`). The probe is a filter:
/// a nonzero `(r, c)` of a probed row among its first [`SYM_PROBE_ENTRIES`] whose mirror `(c, r)`
/// is not found ([`symmetric_slot`]) proves the pattern is not symmetric (or a row is not sorted),
/// and SymTrans hands the matrix to RadixTrans at once; a pattern that passes gets the full pass,
/// which checks every nonzero.
///
/// ```
/// use transpose_kernels::sym_probe_row;
/// assert_eq!(sym_probe_row(3, 10), 3);
/// assert_eq!(sym_probe_row(1, 8192), 8);
/// assert_eq!(sym_probe_row(1023, 1 << 20), 1_047_552);
/// ```
#[inline(always)]
pub const fn sym_probe_row(s: u64, n: u64) -> u64 {
    s * n / sym_probe_rows(n)
}

/// Whether SymTrans's flag (its [`SYM_FLAG_WORDS`] words read back) is raised: any copy nonzero
/// (the probe raises one copy a failing warp, the full pass every copy).
///
/// ```
/// use transpose_kernels::{sym_flag_raised, SYM_FLAG_STRIDE, SYM_FLAG_WORDS};
/// let mut w = vec![0u32; SYM_FLAG_WORDS];
/// assert!(!sym_flag_raised(&w));
/// w[3 * SYM_FLAG_STRIDE] = 1;
/// assert!(sym_flag_raised(&w));
/// ```
pub fn sym_flag_raised(words: &[u32]) -> bool {
    words.iter().step_by(SYM_FLAG_STRIDE).take(SYM_FLAG_COPIES).any(|&w| w != 0)
}

/// Where nonzero `(r, c)` of a matrix with a symmetric pattern goes in its transpose: the
/// position of `r` among row `c`'s columns `idx[b..e)` (sorted, `b = ptr[c]`, `e = ptr[c + 1]`),
/// found by binary search, or `None` when row `c` has no column `r` (the pattern is not
/// symmetric). With a symmetric pattern and rows sorted without repeats, the transpose's
/// pointer and row indices are the matrix's own pointer and column indices, and only the values
/// move: value `k` of `(r, c)` to `symmetric_slot(…, r)` (SymTrans; its kernel calls this).
///
/// ```
/// // row 4's columns at positions 10..13 are [1, 4, 7]: (4, 1)'s mirror (1, 4) is position 11.
/// let idx = |k: u64| [1u32, 4, 7][(k - 10) as usize];
/// assert_eq!(transpose_kernels::symmetric_slot(&idx, 10, 13, 4), Some(11));
/// assert_eq!(transpose_kernels::symmetric_slot(&idx, 10, 13, 5), None);
/// assert_eq!(transpose_kernels::symmetric_slot(&idx, 10, 10, 5), None);
/// ```
#[inline(always)]
pub fn symmetric_slot(idx: &impl Fn(u64) -> u32, b: u64, e: u64, r: u32) -> Option<u64> {
    let (mut lo, mut hi) = (b, e);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if idx(mid) < r {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    (lo < e && idx(lo) == r).then_some(lo)
}

/// The arguments of `transpose_iota`: `perm[j] = j` for `j < nnz`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct IotaArgs {
    /// `nnz` words.
    pub perm: *mut u32,
    /// Entries.
    pub nnz: u64,
}

/// The arguments of the column-pointer kernels: `transpose_sorted_ptr` (the pointer of `n + 1`
/// words from the `nnz` sorted keys; `verdict` and `in_ptr` unused) and `transpose_auto_ptr`
/// (the same when `verdict[0] != 0`, else a copy of `in_ptr`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ColPtrArgs {
    /// `nnz` sorted column indices below `n`.
    pub keys: *const u32,
    /// SymTrans's verdict (one word; `transpose_auto_ptr`).
    pub verdict: *const u32,
    /// The input's pointer (`n + 1` words; `transpose_auto_ptr`).
    pub in_ptr: *const u32,
    /// The column pointer written (`n + 1` words).
    pub ptr: *mut u32,
    /// Keys.
    pub nnz: u64,
    /// Columns.
    pub n: u64,
}

/// The arguments of `transpose_scatter_v{4,8}` (ScanTrans's scatter): nonzero `j` (row
/// `rows[j]`, column `cols[j]`, partition `p = j / chunk`) to [`scatter_slot`]`(colptr[c],
/// inter[p · n + c], intra[j])` of `out_rows` and `out_vals` (values skipped when `vals` is
/// null).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ScatterArgs<T> {
    /// Each nonzero's column.
    pub cols: *const u32,
    /// Each nonzero's row.
    pub rows: *const u32,
    /// The values, or null.
    pub vals: *const T,
    /// The transpose's column pointer (`n + 1` words).
    pub colptr: *const u32,
    /// Each partition's offsets into each column (`(ceil(nnz / chunk) + 1) · n` words).
    pub inter: *const u32,
    /// Each nonzero's rank among its partition's nonzeros of its column.
    pub intra: *const u32,
    /// The transpose's row indices.
    pub out_rows: *mut u32,
    /// The transpose's values (unused when `vals` is null).
    pub out_vals: *mut T,
    /// Nonzeros.
    pub nnz: u64,
    /// Columns.
    pub n: u64,
    /// Nonzeros a partition.
    pub chunk: u64,
}

/// The arguments of `transpose_gather_v{4,8}`: `out_rows[k] = rows[perm[k]]`, `out_vals[k] =
/// vals[perm[k]]` (values skipped when `vals` is null).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatherArgs<T> {
    /// A permutation of `0..nnz`.
    pub perm: *const u32,
    /// The row indices.
    pub rows: *const u32,
    /// The values, or null.
    pub vals: *const T,
    /// The gathered rows.
    pub out_rows: *mut u32,
    /// The gathered values (unused when `vals` is null).
    pub out_vals: *mut T,
    /// Nonzeros.
    pub nnz: u64,
}

/// The arguments of `transpose_symmetric_v{4,8}` (SymTrans's pass over an `n × n` CSR): the
/// pointer and indices copied, each value to its mirror's place, the flag `bad` raised on a
/// nonzero without a mirror ([`SYM_FLAG_WORDS`] words).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SymArgs<T> {
    /// The pointer (`n + 1 ≥ 2` words).
    pub ptr: *const u32,
    /// The column indices (`nnz`).
    pub idx: *const u32,
    /// Each nonzero's row (`nnz`).
    pub rows: *const u32,
    /// The values, or null.
    pub vals: *const T,
    /// The transpose's pointer (`n + 1` words), or null.
    pub out_ptr: *mut u32,
    /// The transpose's indices (`nnz`).
    pub out_idx: *mut u32,
    /// The transpose's values (unused when `vals` is null).
    pub out_vals: *mut T,
    /// The flag, zeroed.
    pub bad: *mut u32,
    /// Rows and columns.
    pub n: u64,
    /// Nonzeros.
    pub nnz: u64,
}

/// The arguments of SymTrans's flag kernels: `transpose_symmetric_probe` (`ptr`, `idx`, `bad`,
/// `n`, `nnz`), `transpose_sym_gate` (`bad`) and `transpose_sym_verdict` (`bad`, `verdict`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SymFlagArgs {
    /// The pointer (`n + 1 ≥ 2` words; the probe).
    pub ptr: *const u32,
    /// The column indices (`nnz`; the probe).
    pub idx: *const u32,
    /// The flag ([`SYM_FLAG_WORDS`] words).
    pub bad: *mut u32,
    /// One word: 1 when the flag is raised, else 0 (the verdict).
    pub verdict: *mut u32,
    /// Rows and columns (the probe).
    pub n: u64,
    /// Nonzeros (the probe).
    pub nnz: u64,
}

/// The arguments of `transpose_permute_v{1,2,16}`: `out[j] = vals[perm[j]]` for `j < nnz`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PermuteArgs<T> {
    /// A permutation of `0..nnz`.
    pub perm: *const u32,
    /// The values.
    pub vals: *const T,
    /// The permuted values.
    pub out: *mut T,
    /// Values.
    pub nnz: u64,
}

/// The arguments of `transpose_index64_chunk_rows`: `rows[2c], rows[2c + 1]` = the rows of chunk
/// `c` (nonzeros `c · chunk .. min((c + 1) · chunk, nnz)`) of the 64-bit pointer `ptr` (`m + 1`
/// words).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ChunkRowsArgs {
    /// The 64-bit row pointer.
    pub ptr: *const u64,
    /// `2 · chunks` words.
    pub rows: *mut u64,
    /// Rows.
    pub m: u64,
    /// Nonzeros.
    pub nnz: u64,
    /// Nonzeros a chunk.
    pub chunk: u64,
    /// Chunks.
    pub chunks: u64,
}

/// The arguments of `transpose_index64_chunk_ptr` (`W = u64`) and `transpose_dist_rel_ptr` (`W =
/// u32`): `out[i] =` [`index64::chunk_ptr`]`(ptr[r0 + i], k0, k1)` for `i < len`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ChunkPtrArgs<W> {
    /// The pointer (`r0 + len` words at least).
    pub ptr: *const W,
    /// `len` words.
    pub out: *mut u32,
    /// The first row.
    pub r0: u64,
    /// Words.
    pub len: u64,
    /// The chunk's first nonzero.
    pub k0: u64,
    /// Its end.
    pub k1: u64,
}

/// The arguments of the 64-bit pointer updates: `transpose_index64_add_ptr` (`acc[j] +=
/// part[j]` for `j < len`) and `transpose_index64_advance` (`acc[j] += part[j + 1] − part[j]`
/// for `j < len`, `part` then holding `len + 1` words: a chunk's column pointer advancing the
/// cursor).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AccumulateArgs {
    /// The 64-bit words updated (`len`).
    pub acc: *mut u64,
    /// The 32-bit words added.
    pub part: *const u32,
    /// Words.
    pub len: u64,
}

/// The arguments of `transpose_index64_place_v{1,2,4,8,16}`: a chunk's CSC (column `col[k]`,
/// local row `rows[k]`) put in place: entry `k` to `cursor[col[k]] + (k − cp[col[k]])`, its row
/// `rows[k] + r0` (values skipped when `vals` is null).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PlaceArgs<T> {
    /// Each entry's column.
    pub col: *const u32,
    /// The chunk's column pointer.
    pub cp: *const u32,
    /// Each column's next free slot in the output.
    pub cursor: *const u64,
    /// Each entry's local row.
    pub rows: *const u32,
    /// The values, or null.
    pub vals: *const T,
    /// The output's rows.
    pub out_rows: *mut u32,
    /// The output's values.
    pub out_vals: *mut T,
    /// Entries.
    pub nnz: u64,
    /// The chunk's first row.
    pub r0: u32,
}

/// The arguments of `transpose_dist_gather_v{1,2,4,8,16}`: entries `base .. base + nnz` of one
/// rank's share gathered from `np` pieces described by `table` (`GATHER_PIECE_WORDS` words a
/// piece: its column pointer's, rows' and values' addresses, its first row, its length).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DistGatherArgs<T> {
    /// Each entry's column.
    pub col: *const u32,
    /// The share's column pointer.
    pub out_ptr: *const u32,
    /// The pieces' table.
    pub table: *const u64,
    /// The share's rows.
    pub out_rows: *mut u32,
    /// The share's values, or null.
    pub out_vals: *mut T,
    /// Entries.
    pub nnz: u64,
    /// The first entry's place in the share.
    pub base: u64,
    /// Pieces.
    pub np: u32,
}

/// The arguments of `transpose_dist_sample_ptr`: `out[i] = ptr[min(start + i · stride, n)]` for
/// `i < len`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SamplePtrArgs {
    /// The pointer (`n + 1` words).
    pub ptr: *const u32,
    /// `len` words.
    pub out: *mut u64,
    /// Rows.
    pub n: u64,
    /// The first row sampled.
    pub start: u64,
    /// Rows between samples.
    pub stride: u64,
    /// Samples.
    pub len: u64,
}

/// The arguments of `transpose_dist_sum_ptr`: `out[j] = Σ_s piece s's column pointer [j]` over
/// the `np` pieces of `table`, for `j < len`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SumPtrArgs {
    /// The pieces' table.
    pub table: *const u64,
    /// `len` words.
    pub out: *mut u32,
    /// Words.
    pub len: u64,
    /// Pieces.
    pub np: u32,
}

/// The arguments of `transpose_index64_generate`: the test matrix of `m` rows, `n` columns and
/// `nnz` nonzeros ([`index64::gen_ptr`], [`index64::gen_col`]) made on the device.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GenerateArgs {
    /// The 64-bit row pointer (`m + 1` words).
    pub ptr: *mut u64,
    /// The column indices (`nnz`).
    pub idx: *mut u32,
    /// Rows.
    pub m: u64,
    /// Nonzeros.
    pub nnz: u64,
    /// Columns.
    pub n: u64,
    /// The seed.
    pub seed: u64,
}

/// The arguments of `transpose_index64_fingerprint`: the order-independent hashes of a
/// compressed matrix's entries and its count of unsorted minors, added to `out[0..3]`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FingerprintArgs {
    /// The 64-bit major pointer (`majors + 1` words).
    pub ptr: *const u64,
    /// The minor indices.
    pub idx: *const u32,
    /// Three words.
    pub out: *mut u64,
    /// Rows (CSR) or columns (CSC).
    pub majors: u64,
    /// Nonzero for a CSR (majors are rows).
    pub rows_major: u32,
}

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
