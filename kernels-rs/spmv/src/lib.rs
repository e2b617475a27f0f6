//! Sparse matrix-vector products `y = alpha * A * x + beta * y` on the GPU, one module per
//! format (host side: crate `gpu-spmv`). With `beta == 0`, `y` is not read (as BLAS: NaN in the
//! old `y` does not propagate).
//!
//! - `spmv_csr_scalar_{f32,f64}`: one thread per row, the row's products summed in order.
//! - `spmv_csr_vector_{f32,f64}`: one warp per row, lanes striding the row, a shuffle reduction.
//! - `spmv_scale_{f32,f64}` then `spmv_coo_{f32,f64}`: `y = beta * y`, then one thread per
//!   nonzero adding `alpha * a * x` with an atomic add (not bit-reproducible run to run).
//!
//! CSR kernels use no atomics: the same bits every run.
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx))]
#![deny(missing_docs)]

/// Threads per block of every kernel here.
pub const NT: u32 = 256;

/// Rows one block of `spmv_csr_vector` handles (a warp each).
pub const VECTOR_ROWS_PER_BLOCK: u32 = NT / 32;

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
