//! CSRC (compressed sparse row/column; Aliaga, Anzt, Quintana-Ortí & Tomás, CCPE 2023) on the
//! GPU (host side: crate `gpu-csrc`). Rows are cut into row blocks of [`BLOCK_ROWS`]; `p[g]` is
//! the first nonzero of row block `g`, `r` each nonzero's row inside its block (a `u8`), `j`
//! and `v` its column and value; inside a row block the nonzeros are sorted by column (stable).
//!
//! Dense blocks are column-major and packed: `X` is `cols × k` (`X[c][i]` at `i + c · cols`),
//! `Y` is `rows × k`, `U` is `rows × k`, `V` is `cols × k`, with `k ≤` [`MAX_K`].
//!
//! - `csrc_block_ptr` and `csrc_gather_{f32,f64}`: the build from CSR (between them, the host
//!   sorts each row block's (column, position) pairs by column with `gpu-segsort`).
//! - `csrc_ax_{f32,f64}`: `Y = alpha · A · X + beta · Y`, one block per row block, partial rows
//!   in shared memory by shared atomic adds, `Y` written once and coalesced (paper, Figure 3).
//!   Shared atomics: **not bit-reproducible**.
//! - `csrc_scale_{f32,f64}` then `csrc_ax_pieces_{f32,f64}`: the same by pieces of row blocks
//!   (a row block of hub rows shared by several blocks of threads), each adding its partial
//!   rows to `Y` by global atomics after `Y = beta · Y`. The global transposed products
//!   (`csrc_atu`, `csrc_atu_group`) take pieces too (`bounds` and `block_of`; a null
//!   `block_of` makes each row block one piece).
//! - `csrc_scale_{f32,f64}` then `csrc_atu_{f32,f64}`: `V = beta · V`, then `V += alpha · Aᵀ ·
//!   U`, one block per row block; consecutive lanes with the same column combined by a warp
//!   segmented sum (`gpu_device::reduce::Segments`), one global atomic add per run (paper,
//!   Figure 4 and Listing 1). Global atomics: **not bit-reproducible**.
//! - `csrc_atu_group_shared_{f32,f64}`, and `csrc_atu_group_{f32,f64}` then
//!   `csrc_atu_finish_{f32,f64}`: the transposed product by groups of [`group_width`]`(k)`
//!   lanes, one lane per vector, each group walking a contiguous chunk of its row block and
//!   summing each run of equal columns in a register: no shuffles; with `V` in shared memory no
//!   atomics for runs inside a chunk; in global memory, atomics into a row-major scratch (a
//!   group's adds on one cache line), then `V = alpha · W + beta · V`.
//! - `csrc_csr_thread_{f32,f64}`, `csrc_csr_warp_{f32,f64}` and `csrc_csr_block_{f32,f64}`:
//!   `Y = alpha · A · X + beta · Y` on a plain CSR, a thread, a warp or a block per row summing in
//!   a fixed order: **deterministic**. Run on
//!   A and on a stored transpose of A, they are the deterministic products.
//! - `csrc_to_rows_{f32,f64}` then `csrc_rows{4,8,16}_{f32,f64}` ([`ToRowsArgs`],
//!   [`CsrArgs`]): the same CSR product for wide blocks, `X` first copied row-major (a row's
//!   `k` values contiguous: one line a nonzero instead of `k`), then a group of `G` lanes a row,
//!   one lane a vector, the row's nonzeros loaded `G` at a time and broadcast by shuffles, each
//!   sum in a register in a fixed order (**deterministic**), `Y` written column-major.
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

/// Threads per block of every kernel here.
pub const NT: u32 = 256;

/// Rows per row block (the paper's `b`): 256, so a row inside its block fits in a `u8`.
pub const BLOCK_ROWS: u32 = 256;

/// The most vectors (columns of `X` or `U`) one product takes.
pub const MAX_K: u32 = 16;

/// Lanes per group in the grouped transposed products (`csrc_atu_group*`): `k` rounded up to a
/// power of two, one lane per vector.
///
/// ```
/// assert_eq!(csrc_kernels::group_width(1), 1);
/// assert_eq!(csrc_kernels::group_width(3), 4);
/// assert_eq!(csrc_kernels::group_width(16), 16);
/// ```
#[inline(always)]
pub const fn group_width(k: u32) -> u32 {
    k.next_power_of_two()
}

/// Row blocks of a matrix with `rows` rows.
///
/// ```
/// assert_eq!(csrc_kernels::row_blocks(0), 0);
/// assert_eq!(csrc_kernels::row_blocks(256), 1);
/// assert_eq!(csrc_kernels::row_blocks(257), 2);
/// ```
#[inline(always)]
pub const fn row_blocks(rows: u64) -> u64 {
    rows.div_ceil(BLOCK_ROWS as u64)
}

/// The arguments of the CSRC products (`csrc_ax`, `csrc_ax_pieces`, `csrc_atu`,
/// `csrc_atu_shared`, `csrc_atu_group`, `csrc_atu_group_shared`; `_f32`/`_f64`): a stored CSRC
/// of `rows × cols` cut into `pieces` pieces, piece `i` the nonzeros `bounds[i] .. bounds[i +
/// 1]` of row block `block_of[i]` (a null `block_of`: row block `i`, `bounds` the block pointer
/// `p`, `pieces` the row-block count; the kernels that take a row block at a time read only
/// that form). The direct products compute `Y = alpha · A · X + beta · Y` (`x` the `X`, `out`
/// the `Y`; `beta` read by `csrc_ax` alone, the others adding to an `out` scaled first); the
/// transposed ones `V += alpha · Aᵀ · U` (`x` the `U`, `out` the `V`), `csrc_atu_group` `W +=
/// Aᵀ · U` into a row-major scratch (`out` the `W`; `alpha` and `beta` unused).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CsrcArgs<T> {
    /// The pieces' bounds (`pieces + 1` nondecreasing entries), or the block pointer.
    pub bounds: *const u32,
    /// Each piece's row block (`pieces` entries), or null (a piece per row block).
    pub block_of: *const u32,
    /// Each nonzero's row inside its row block.
    pub r: *const u8,
    /// Each nonzero's column (below `cols`).
    pub j: *const u32,
    /// The values.
    pub v: *const T,
    /// The block multiplied: `X` (`cols · k` values) or `U` (`rows · k`), column-major packed.
    pub x: *const T,
    /// The block written: `Y` (`rows · k`), `V` or `W` (`cols · k`).
    pub out: *mut T,
    /// Rows of the matrix.
    pub rows: u64,
    /// Columns of the matrix.
    pub cols: u64,
    /// Pieces (or row blocks).
    pub pieces: u64,
    /// Vectors (`1 ≤ k ≤ MAX_K`).
    pub k: u32,
    /// The product's scale.
    pub alpha: T,
    /// `Y`'s scale (`csrc_ax`).
    pub beta: T,
}

/// The arguments of `csrc_scale_{f32,f64}`: `out = beta · out` over `n` values (`out = 0`
/// when `beta == 0`, not read).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ScaleArgs<T> {
    /// The values.
    pub out: *mut T,
    /// How many.
    pub n: u64,
    /// The scale.
    pub beta: T,
}

/// The arguments of `csrc_atu_finish_{f32,f64}`: `V = alpha · W + beta · V` (`V` not read when
/// `beta == 0`) for the row-major scratch `W` (`W[col][c]` at `col · k + c`) and the
/// column-major `V`, both `cols · k` values.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FinishArgs<T> {
    /// `W`.
    pub w: *const T,
    /// `V`.
    pub out: *mut T,
    /// Columns (rows of `W` and of `V`).
    pub cols: u64,
    /// Vectors.
    pub k: u32,
    /// `W`'s scale.
    pub alpha: T,
    /// `V`'s scale.
    pub beta: T,
}

/// The arguments of `csrc_block_ptr`: `p[g] = ptr[min(g · BLOCK_ROWS, rows)]` for `g ≤
/// blocks`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct BlockPtrArgs {
    /// The CSR row pointer (`rows + 1` entries).
    pub ptr: *const u32,
    /// The block pointer (`blocks + 1` entries).
    pub p: *mut u32,
    /// Rows.
    pub rows: u64,
    /// Row blocks ([`row_blocks`]`(rows)`).
    pub blocks: u64,
}

/// The arguments of `csrc_gather_{f32,f64}`: after the stable sort by column inside each row
/// block, `r[h] = row_of[perm[h]] mod BLOCK_ROWS` and `v[h] = vals[perm[h]]` for `h < nnz`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatherArgs<T> {
    /// The CSR position of each sorted entry (a permutation of `0..nnz`).
    pub perm: *const u32,
    /// Each CSR nonzero's row.
    pub row_of: *const u32,
    /// The CSR values.
    pub vals: *const T,
    /// Each sorted entry's row inside its row block.
    pub r: *mut u8,
    /// Each sorted entry's value.
    pub v: *mut T,
    /// Nonzeros.
    pub nnz: u64,
}

/// The arguments of the deterministic CSR products: `Y = alpha · A · X + beta · Y` (`Y` not read
/// when `beta == 0`) for a CSR `A` of `rows` rows, summed in a fixed order.
///
/// - `csrc_csr_{thread,warp,block}_{f32,f64}`: `X` column-major (`X[i][c]` at `i + c · ldx`,
///   `ldx` at least `A`'s columns), a thread, a warp or a block a row.
/// - `csrc_rows{G}_{f32,f64}`: `X` row-major (`X[i][c]` at `i · ldx + c`, `ldx ≥ k`), by groups of
///   `G` lanes (`k ≤ G`, [`rows_group`]); the CSR and `X` read through the non-coherent path, so
///   they must not be written during the launch.
///
/// `Y` is column-major (`Y[i][c]` at `i + c · ldy`, `ldy ≥ rows`) and must not overlap the
/// inputs.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CsrArgs<T> {
    /// The row pointer (`rows + 1` entries from 0, nondecreasing).
    pub ptr: *const u32,
    /// The column indices (below `X`'s rows).
    pub idx: *const u32,
    /// The values.
    pub vals: *const T,
    /// `X`.
    pub x: *const T,
    /// `Y`.
    pub y: *mut T,
    /// Rows of `A` and `Y`.
    pub rows: u64,
    /// `X`'s leading dimension (between vectors, or between rows for the row-major kernels).
    pub ldx: u64,
    /// `Y`'s leading dimension (at least `rows`).
    pub ldy: u64,
    /// Vectors (`1 ≤ k ≤ MAX_K`).
    pub k: u32,
    /// The product's scale.
    pub alpha: T,
    /// `Y`'s scale.
    pub beta: T,
}

/// The arguments of `csrc_to_rows_{f32,f64}`: `out[i · k + c] = x[i + c · ld]` for `i < rows`,
/// `c < k` (a column-major block copied row-major).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ToRowsArgs<T> {
    /// The column-major block (`k` columns of `ld ≥ rows` values).
    pub x: *const T,
    /// The row-major copy (`rows · k` values).
    pub out: *mut T,
    /// Rows.
    pub rows: u64,
    /// `x`'s leading dimension.
    pub ld: u64,
    /// Columns.
    pub k: u32,
}

/// The group width of the row-major products for `k` vectors: 4, 8 or 16 lanes.
///
/// ```
/// assert_eq!(csrc_kernels::rows_group(3), 4);
/// assert_eq!(csrc_kernels::rows_group(8), 8);
/// assert_eq!(csrc_kernels::rows_group(9), 16);
/// ```
#[inline(always)]
pub const fn rows_group(k: u32) -> u32 {
    if k <= 4 {
        4
    } else if k <= 8 {
        8
    } else {
        16
    }
}

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod rows;
