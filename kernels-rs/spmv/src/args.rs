//! The kernels' argument structs (`#[repr(C)]`, one per kernel family), shared by the device
//! code and the host crate `gpu-spmv`, which loads each kernel as `KernelOf<…Args>` and fills
//! the struct from the views it borrows.

/// The arguments of the CSR products `spmv_csr_{scalar,vector}_{f32,f64}`: `y = alpha · A · x +
/// beta · y` (`y` not read when `beta == 0`) for a valid CSR `A` of `rows` rows.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CsrArgs<T> {
    /// The row pointer (`rows + 1` entries from 0, nondecreasing).
    pub ptr: *const u32,
    /// The column indices (below `x`'s length).
    pub idx: *const u32,
    /// The values.
    pub vals: *const T,
    /// `x`.
    pub x: *const T,
    /// `y` (`rows` values).
    pub y: *mut T,
    /// Rows.
    pub rows: u64,
    /// The product's scale.
    pub alpha: T,
    /// `y`'s scale.
    pub beta: T,
}

/// The arguments of `spmv_scale_{f32,f64}`: `y = beta · y` over `rows` values (`y = 0` when
/// `beta == 0`, not read).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ScaleArgs<T> {
    /// `y`.
    pub y: *mut T,
    /// Values.
    pub rows: u64,
    /// The scale.
    pub beta: T,
}

/// The arguments of the COO products `spmv_coo_{f32,f64}` (nonzero `k`'s row `row[k]`) and
/// `spmv_coo16_{f32,f64}` (its row `base[k / COO_CHUNK] + off[k]`): `y += alpha · A · x` by
/// atomic adds.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CooArgs<T> {
    /// Each nonzero's row (`spmv_coo`).
    pub row: *const u32,
    /// Each chunk's first row (`spmv_coo16`).
    pub base: *const u32,
    /// Each nonzero's row less its chunk's first (`spmv_coo16`).
    pub off: *const u16,
    /// Each nonzero's column (below `x`'s length).
    pub col: *const u32,
    /// The values.
    pub vals: *const T,
    /// `x`.
    pub x: *const T,
    /// `y` (every row below its length).
    pub y: *mut T,
    /// Nonzeros.
    pub nnz: u64,
    /// The product's scale.
    pub alpha: T,
}

/// The arguments of `spmv_coo16_pack`: COO's 16-bit rows from its 32-bit ones (`base`, `off`)
/// and the largest in-chunk difference into `span` (one word, zeroed).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Coo16PackArgs {
    /// The nondecreasing rows (`nnz`).
    pub row: *const u32,
    /// Each chunk's first row.
    pub base: *mut u32,
    /// Each nonzero's row less its chunk's first, truncated to 16 bits.
    pub off: *mut u16,
    /// One word.
    pub span: *mut u32,
    /// Nonzeros.
    pub nnz: u64,
}

/// The arguments of the ELL kernels: `spmv_ell_fill_{f32,f64}` (a CSR's first `width` entries of
/// every row into the column-major slots `col`, `val`, padding after) and `spmv_ell_{f32,f64}`
/// (`y = alpha · A · x + beta · y` on those slots; `ptr`, `idx`, `vals` unused).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EllArgs<T> {
    /// The CSR's row pointer (the fill).
    pub ptr: *const u32,
    /// The CSR's column indices (the fill).
    pub idx: *const u32,
    /// The CSR's values (the fill).
    pub vals: *const T,
    /// The slots' columns (`rows · width`): written by the fill, read by the product.
    pub col: *mut u32,
    /// The slots' values (`rows · width`).
    pub val: *mut T,
    /// `x` (the product).
    pub x: *const T,
    /// `y` (`rows` values; the product).
    pub y: *mut T,
    /// Rows.
    pub rows: u64,
    /// Slots a row.
    pub width: u64,
    /// The product's scale.
    pub alpha: T,
    /// `y`'s scale.
    pub beta: T,
}

/// The arguments of the HYB conversion: `spmv_hyb_overflow` (each row's entries past `width`
/// into `count`, `rows + 1` words, the last 0) and `spmv_hyb_fill_coo_{f32,f64}` (those entries
/// into the COO arrays at `offset[row]`, the exclusive scan of the counts).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HybArgs<T> {
    /// The CSR's row pointer.
    pub ptr: *const u32,
    /// Each nonzero's row (the fill).
    pub row_of: *const u32,
    /// Each row's first place in the COO arrays (the fill).
    pub offset: *const u32,
    /// The CSR's column indices (the fill).
    pub idx: *const u32,
    /// The CSR's values (the fill).
    pub vals: *const T,
    /// Each row's overflow (`rows + 1` words; the overflow count).
    pub count: *mut u32,
    /// The COO rows (the fill).
    pub coo_row: *mut u32,
    /// The COO columns (the fill).
    pub coo_col: *mut u32,
    /// The COO values (the fill).
    pub coo_val: *mut T,
    /// Nonzeros (the fill).
    pub nnz: u64,
    /// Rows (the overflow count).
    pub rows: u64,
    /// The ELL width.
    pub width: u32,
}

/// The arguments of the JDS conversion: `spmv_jds_keys` (each row's key `max_len − len` into
/// `keys`, its index into `perm`), `spmv_jds_counts` (each diagonal's width from the sorted
/// `keys` into `count`, `max_len + 1` words), `spmv_jds_invert` (`inv[perm[i]] = i`) and
/// `spmv_jds_fill_{f32,f64}` (each nonzero into its diagonal's slot of `col` and `val`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct JdsBuildArgs<T> {
    /// The CSR's row pointer.
    pub ptr: *const u32,
    /// Each nonzero's row (the fill).
    pub row_of: *const u32,
    /// The CSR's column indices (the fill).
    pub idx: *const u32,
    /// The CSR's values (the fill).
    pub vals: *const T,
    /// The diagonals' pointer (`max_len + 1` words; the fill).
    pub jd_ptr: *const u32,
    /// The rows' keys (`rows`): written by `keys`, read sorted by `counts`.
    pub keys: *mut u32,
    /// The sorted position's row (`rows`): written by `keys` (the identity), read by `invert`.
    pub perm: *mut u32,
    /// Each row's sorted position (`rows`): written by `invert`, read by the fill.
    pub inv: *mut u32,
    /// Each diagonal's width (`max_len + 1` words; `counts`).
    pub count: *mut u32,
    /// The diagonals' columns (`nnz`; the fill).
    pub col: *mut u32,
    /// The diagonals' values (`nnz`; the fill).
    pub val: *mut T,
    /// Rows.
    pub rows: u64,
    /// Nonzeros.
    pub nnz: u64,
    /// The longest row's length.
    pub max_len: u32,
}

/// The arguments of the JDS product `spmv_jds_{f32,f64}`: `y = alpha · A · x + beta · y` by
/// sorted rows over the `diags` diagonals.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct JdsArgs<T> {
    /// The sorted position's row (`rows`).
    pub perm: *const u32,
    /// The diagonals' pointer (`diags + 1` words).
    pub jd_ptr: *const u32,
    /// The diagonals' columns.
    pub col: *const u32,
    /// The diagonals' values.
    pub val: *const T,
    /// `x`.
    pub x: *const T,
    /// `y` (`rows` values).
    pub y: *mut T,
    /// Rows.
    pub rows: u64,
    /// Diagonals.
    pub diags: u64,
    /// The product's scale.
    pub alpha: T,
    /// `y`'s scale.
    pub beta: T,
}

/// The arguments of `spmv_sell_chunks`: each chunk's width, index units and base column into
/// `wcount`, `icount` and `base` (`⌈rows / 32⌉` entries each) for the rows in the order of
/// `perm` (null: in order); 16-bit columns where they fit and `narrow != 0`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SellChunksArgs {
    /// The CSR's row pointer.
    pub ptr: *const u32,
    /// The CSR's column indices.
    pub idx: *const u32,
    /// The sorted position's row, or null.
    pub perm: *const u32,
    /// Each chunk's width.
    pub wcount: *mut u32,
    /// Each chunk's index units.
    pub icount: *mut u32,
    /// Each chunk's base column.
    pub base: *mut u32,
    /// Rows.
    pub rows: u64,
    /// Nonzero: 16-bit columns allowed.
    pub narrow: u32,
}

/// The arguments of `spmv_sell_fill_{f32,f64,u8}`: a CSR's entries (values of `V`: the
/// matrix's, or the value index's bytes) into the SELL-C-σ slots `sidx` (columns) and `sval`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SellFillArgs<V> {
    /// The CSR's row pointer.
    pub ptr: *const u32,
    /// The CSR's column indices.
    pub idx: *const u32,
    /// The values moved (one a nonzero).
    pub vals: *const V,
    /// The sorted position's row, or null.
    pub perm: *const u32,
    /// The chunks' slot-row pointer (`chunks + 1`).
    pub wptr: *const u32,
    /// The chunks' index-unit pointer (`chunks + 1`).
    pub iptr: *const u32,
    /// The chunks' base columns.
    pub base: *const u32,
    /// The slots' columns (`16 · iptr[chunks]` words).
    pub sidx: *mut u32,
    /// The slots' values (`32 · wptr[chunks]`).
    pub sval: *mut V,
    /// Rows.
    pub rows: u64,
}

/// The arguments of the SELL-C-σ products: `spmv_sell_{f32,f64}` (the slots' values `val`) and
/// `spmv_sell_vi_{f32,f64}` (slot `s`'s value `tab[vi[s]]`, or `tab[0]` when `vi` is null):
/// `y = alpha · A · x + beta · y`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SellArgs<T> {
    /// The chunks' slot-row pointer.
    pub wptr: *const u32,
    /// The chunks' index-unit pointer.
    pub iptr: *const u32,
    /// The chunks' base columns.
    pub base: *const u32,
    /// The sorted position's row, or null.
    pub perm: *const u32,
    /// The slots' columns.
    pub idx: *const u32,
    /// The slots' values (`spmv_sell`).
    pub val: *const T,
    /// The slots' value bytes, or null (`spmv_sell_vi`).
    pub vi: *const u8,
    /// The value table (256 values; `spmv_sell_vi`).
    pub tab: *const T,
    /// `x`.
    pub x: *const T,
    /// `y` (`rows` values).
    pub y: *mut T,
    /// Rows.
    pub rows: u64,
    /// The product's scale.
    pub alpha: T,
    /// `y`'s scale.
    pub beta: T,
}

/// The arguments of merge-path CSR (`spmv_merge_{partition,split,}_{f32,f64}`): the partition
/// writes each walking thread's start row into `start_row` (`threads` entries); the split pass
/// scales the rows the stretches split (`y = beta · y` there); the walk adds `alpha · A · x`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MergePathArgs<T> {
    /// The row pointer (`rows + 1` entries ending at `nnz`).
    pub ptr: *const u32,
    /// The column indices (the walk).
    pub idx: *const u32,
    /// The values (the walk).
    pub vals: *const T,
    /// `x` (the walk).
    pub x: *const T,
    /// `y` (`rows` values; the split pass and the walk).
    pub y: *mut T,
    /// Each thread's start row: written by the partition, read by the others.
    pub start_row: *mut u32,
    /// Rows.
    pub rows: u64,
    /// Nonzeros.
    pub nnz: u64,
    /// Walking threads (`threads · MERGE_VT ≥ rows + nnz`).
    pub threads: u64,
    /// The product's scale.
    pub alpha: T,
    /// `y`'s scale.
    pub beta: T,
}

/// The arguments of the value dictionary of SELL-VI: `spmv_dict_insert_{f32,f64}` (every value's
/// bits into the set `slots`, `full` raised when one finds no slot) and
/// `spmv_dict_index_{f32,f64}` (each value's byte `map[slot]` into `out`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DictArgs<T> {
    /// The values (`nnz`).
    pub vals: *const T,
    /// The set (`VI_SLOTS` words): written by the insert, read by the index.
    pub slots: *mut u64,
    /// One word (the insert).
    pub full: *mut u32,
    /// Each slot's byte (`VI_SLOTS`; the index).
    pub map: *const u8,
    /// Each value's byte (`nnz`; the index).
    pub out: *mut u8,
    /// Values.
    pub nnz: u64,
}

/// The arguments of `spmv_row_lengths` (each row's length into `len` unless null, the longest
/// into `max` by an atomic max) and `spmv_iota` (`len[i] = i` for `i < rows`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LengthsArgs {
    /// The row pointer (`rows + 1`; the lengths).
    pub ptr: *const u32,
    /// The lengths (`rows`), or null; the identity (`spmv_iota`).
    pub len: *mut u32,
    /// One word, zeroed (the lengths).
    pub max: *mut u32,
    /// Rows (or entries of the identity).
    pub rows: u64,
}

/// The arguments of the adaptive CSR's row blocks: `spmv_adaptive_counts` (each row's entries
/// into `count`, `rows + 2` words) and `spmv_adaptive_write` (the entries at `offset[row]`, the
/// scan of the counts, into `block_row` and `block_nz`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AdaptiveBuildArgs {
    /// The row pointer (`rows + 1`).
    pub ptr: *const u32,
    /// Each row's first entry (the write).
    pub offset: *const u32,
    /// Each row's entries (the counts).
    pub count: *mut u32,
    /// Each entry's first row (the write).
    pub block_row: *mut u32,
    /// Each entry's first nonzero (the write).
    pub block_nz: *mut u32,
    /// Rows.
    pub rows: u64,
}

/// The arguments of the adaptive CSR product: `spmv_adaptive_split_{f32,f64}` (`y = beta · y` on
/// the rows cut in pieces) then `spmv_adaptive_{f32,f64}` (a block per row block).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct AdaptiveArgs<T> {
    /// The row pointer.
    pub ptr: *const u32,
    /// The column indices.
    pub idx: *const u32,
    /// The values.
    pub vals: *const T,
    /// `x`.
    pub x: *const T,
    /// `y` (`rows` values).
    pub y: *mut T,
    /// Each row block's first row (`blocks + 1`).
    pub block_row: *const u32,
    /// Each row block's first nonzero (`blocks + 1`).
    pub block_nz: *const u32,
    /// Row blocks.
    pub blocks: u64,
    /// The product's scale.
    pub alpha: T,
    /// `y`'s scale.
    pub beta: T,
}

/// The arguments of sliced COO (SCOO): `spmv_scoo_slice_ptr` (each slice's first nonzero into
/// `slice_ptr`, `slices + 1` words), `spmv_scoo_gather_{f32,f64}` (after the sort by column
/// inside each slice, each entry's row in its slice and value by `perm`) and `spmv_scoo_{f32,f64}`
/// (the product, a block a slice).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ScooArgs<T> {
    /// The CSR's row pointer (`slice_ptr`).
    pub ptr: *const u32,
    /// The CSR position of each sorted entry (the gather).
    pub perm: *const u32,
    /// Each CSR nonzero's row (the gather).
    pub row_of: *const u32,
    /// The CSR's values (the gather).
    pub vals: *const T,
    /// Each slice's first nonzero: written by `slice_ptr`, read by the product.
    pub slice_ptr: *mut u32,
    /// Each entry's row inside its slice: written by the gather, read by the product.
    pub row16: *mut u16,
    /// Each entry's column (the product).
    pub col: *const u32,
    /// Each entry's value: written by the gather, read by the product.
    pub val: *mut T,
    /// `x` (the product).
    pub x: *const T,
    /// `y` (`rows` values; the product).
    pub y: *mut T,
    /// Rows.
    pub rows: u64,
    /// Nonzeros (the gather).
    pub nnz: u64,
    /// Slices.
    pub slices: u64,
    /// Rows a slice.
    pub slice_rows: u32,
    /// The product's scale.
    pub alpha: T,
    /// `y`'s scale.
    pub beta: T,
}

/// The arguments of the distributed SpMV's halo exchange: `spmv_halo_pack_{f32,f64}`
/// (`dst[i] = src[at[i]]`: a rank's entries others read into its send buffer) and
/// `spmv_halo_unpack_{f32,f64}` (`dst[at[i]] = src[i]`: the received entries into the full `x`),
/// for `i < n`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HaloArgs<T> {
    /// The offsets (`n`).
    pub at: *const u32,
    /// Read: the rank's part of `x` (pack), the received entries (unpack).
    pub src: *const T,
    /// Written: the send buffer (pack), the full `x` (unpack).
    pub dst: *mut T,
    /// Entries.
    pub n: u64,
}
