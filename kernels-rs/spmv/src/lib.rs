//! Sparse matrix-vector products `y = alpha * A * x + beta * y` on the GPU, one module per
//! format (host side: crate `gpu-spmv`). With `beta == 0`, `y` is not read (as BLAS: NaN in the
//! old `y` does not propagate).
//!
//! - `spmv_csr_scalar_{f32,f64}`: one thread per row, the row's products summed in order.
//! - `spmv_csr_vector_{f32,f64}`: one warp per row, lanes striding the row, a shuffle reduction.
//! - `spmv_scale_{f32,f64}` then `spmv_coo_{f32,f64}`: `y = beta * y`, then one thread per
//!   nonzero adding `alpha * a * x` with an atomic add (not bit-reproducible run to run).
//!
//! - `spmv_merge_partition_{f32,f64}` then `spmv_merge_{f32,f64}`: merge-path CSR (Merrill &
//!   Garland, SC'16): each thread takes `MERGE_VT` steps of the merge of the row ends with the
//!   nonzeros, so rows of any length cost the same per step; a block first stages its tile's
//!   products and row ends in shared memory (coalesced); pieces of rows split between threads
//!   are summed across the warp by row, then completed by atomic adds (those rows are not
//!   bit-reproducible).
//!
//! CSR-scalar and CSR-vector use no atomics: the same bits every run.
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

/// Threads per block of every kernel here.
pub const NT: u32 = 256;

/// Rows one block of `spmv_csr_vector` handles (a warp each).
pub const VECTOR_ROWS_PER_BLOCK: u32 = NT / 32;

/// Merge-path steps (row ends + nonzeros) per thread of `spmv_merge`.
pub const MERGE_VT: u32 = 8;

/// The row where diagonal `diag` of the merge path crosses: the number of row ends consumed
/// before `diag` steps, when row ends (`row_end(r)` = `ptr[r + 1]`, nondecreasing, the last
/// `nnz`) are merged with the nonzeros `0..nnz`, a nonzero `k` going before row end `e` when
/// `k < e`. The nonzeros consumed are `diag − row`.
///
/// ```
/// // Rows of 2, 0 and 3 nonzeros: ptr = [0, 2, 2, 5].
/// let ptr = [0u64, 2, 2, 5];
/// let row = |d| spmv_kernels::merge_path_search_by(d, 3, 5, |r| ptr[r as usize + 1]);
/// assert_eq!([0, 1, 2, 3, 4, 5, 6, 7, 8].map(row), [0, 0, 0, 1, 2, 2, 2, 2, 3]);
/// ```
#[inline(always)]
pub fn merge_path_search_by(diag: u64, rows: u64, nnz: u64, row_end: impl Fn(u64) -> u64) -> u64 {
    let mut lo = diag.saturating_sub(nnz);
    let mut hi = diag.min(rows);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // Row end `mid` goes before nonzero `diag - mid - 1` when row_end(mid) <= diag - mid - 1.
        if row_end(mid) < diag - mid {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// [`merge_path_search_by`] over a CSR pointer array.
///
/// # Safety
/// `ptr` holds `rows + 1` entries.
#[inline(always)]
pub unsafe fn merge_path_search(diag: u64, rows: u64, nnz: u64, ptr: *const u32) -> u64 {
    // SAFETY: the search asks for row ends r < rows only: ptr[r + 1] exists.
    merge_path_search_by(diag, rows, nnz, |r| unsafe { *ptr.add(r as usize + 1) } as u64)
}

/// `alpha * sum + beta * y_old`, with `y_old` not read when `beta == 0` (the caller passes any
/// value then).
///
/// ```
/// assert_eq!(spmv_kernels::combine(2.0f64, 3.0, 0.0, f64::NAN), 6.0);
/// assert_eq!(spmv_kernels::combine(2.0f64, 3.0, 0.5, 4.0), 8.0);
/// ```
#[inline(always)]
pub fn combine<T: Copy + PartialEq + core::ops::Mul<Output = T> + core::ops::Add<Output = T> + Default>(alpha: T, sum: T, beta: T, y_old: T) -> T {
    if beta == T::default() {
        alpha * sum
    } else {
        alpha * sum + beta * y_old
    }
}

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
