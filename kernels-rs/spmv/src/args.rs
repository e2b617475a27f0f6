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
