//! Tall-skinny dense block operations of the truncated SVD (host side: crate `gpu-svd`). Blocks
//! are column-major with a leading dimension of `rows` (`X[i][a]` at `i + a · rows`), at most
//! [`MAX_COLS`] columns; cuBLAS's general kernels read such blocks at a fraction of the memory
//! bandwidth (a strided-batched `dgemm` for a 2 × 2 Gram matrix over a million rows took 70 µs
//! for 32 MB on the H100).
//!
//! - `svd_gram_f64`: partial Gram matrices `Xᵀ Y` (`c · k ≤` [`MAX_PAIRS`] entries) of each
//!   block's rows, in block order: the host adds them up in a fixed order (deterministic).
//! - `svd_mul_f64`: `Y = X · C` or `Y = X · C + Y` (`C` of `c × k`, on the device); each thread
//!   reads its row of `X` before writing its row of `Y`, so `X` may be `Y` (with `c = k`: an
//!   in-place right product, `W R⁻¹` of a QR).
//! - `svd_qr_step_f64`: one CholeskyQR pass's small algebra on the device ([`qr::qr_step`] on
//!   the Gram matrix summed from the partial sums in block order), so that a QR needs no host
//!   round trip: its `R`, `−Rᵀ` and right factors stay in a device slot, read by `svd_mul_f64`,
//!   and the second pass's kernels skip themselves when the slot says it does not run.
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

/// Threads per block of both kernels.
pub const NT: u32 = 256;

/// The most columns of a block.
pub const MAX_COLS: u32 = 16;

/// The most entries of one Gram matrix (`c · k`).
pub const MAX_PAIRS: u32 = 16;

pub mod qr;

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
