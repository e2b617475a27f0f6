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

/// The row where diagonal `diag` of the merge path crosses: how many row ends come among the
/// first `diag` items when the row ends (`ptr[1..=rows]`) are merged with the nonzeros `0..nnz`,
/// a row end going first on ties (`segmerge_kernels::merge_path` with `b` the counting
/// sequence). The nonzeros consumed are `diag − row`.
///
/// ```
/// // Rows of 2, 0 and 3 nonzeros.
/// let ptr = [0u32, 2, 2, 5];
/// // SAFETY: ptr holds rows + 1 = 4 entries.
/// let row = |d| unsafe { spmv_kernels::merge_path_search(d, 3, 5, ptr.as_ptr()) };
/// assert_eq!([0, 1, 2, 3, 4, 5, 6, 7, 8].map(row), [0, 0, 0, 1, 2, 2, 2, 2, 3]);
/// ```
///
/// # Safety
/// `ptr` holds `rows + 1` entries.
#[inline(always)]
pub unsafe fn merge_path_search(diag: u64, rows: u64, nnz: u64, ptr: *const u32) -> u64 {
    // SAFETY: the search asks for row ends r < rows only: ptr[r + 1] exists.
    segmerge_kernels::merge_path(|r| unsafe { *ptr.add(r as usize + 1) } as u64, rows, |k| k, nnz, diag)
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

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod merge_path;
