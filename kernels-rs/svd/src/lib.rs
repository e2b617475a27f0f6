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

/// The arguments of `svd_gram_f64`: `partial[blk · c · k + a + b · c] = Σ_i X[i][a] · Y[i][b]`
/// over the rows block `blk` takes, skipped when `*skip == 0` (`skip` non-null).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GramArgs {
    /// `X`: `c` columns of `rows` values (leading dimension `rows`).
    pub x: *const f64,
    /// `Y`: `k` columns of `rows` values.
    pub y: *const f64,
    /// The per-block partial sums: `grid · c · k` values.
    pub partial: *mut f64,
    /// Null, or one value: the launch does nothing when it is 0.
    pub skip: *const f64,
    /// Rows.
    pub rows: u64,
    /// `X`'s columns (`c · k ≤ MAX_PAIRS`).
    pub c: u32,
    /// `Y`'s columns.
    pub k: u32,
}

/// The arguments of `svd_mul_f64`: `Y[i][b] = Σ_a X[i][a] · C[a + b · c]` (`+ Y[i][b]` when
/// `accumulate != 0`), skipped when `*skip == 0` (`skip` non-null).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MulArgs {
    /// `X`: `c` columns of `rows` values (leading dimension `rows`).
    pub x: *const f64,
    /// `C`: `c · k` values on the device.
    pub coef: *const f64,
    /// `Y`: `k` columns of `rows` values, disjoint from `X` or `X` itself with `c = k`.
    pub y: *mut f64,
    /// Null, or one value: the launch does nothing when it is 0.
    pub skip: *const f64,
    /// Rows.
    pub rows: u64,
    /// `X`'s columns (`1 ≤ c ≤ MAX_COLS`).
    pub c: u32,
    /// `Y`'s columns (`1 ≤ k ≤ MAX_COLS`).
    pub k: u32,
    /// Nonzero: add to `Y`.
    pub accumulate: u32,
}

/// The arguments of `svd_qr_step_f64`: one pass of a CholeskyQR step ([`qr::qr_step`]) from
/// `blocks` partial Gram sums into a slot.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct QrStepArgs {
    /// `blocks · b · b` partial sums of `svd_gram_f64`.
    pub partial: *const f64,
    /// The slot: `qr::slot::SLOT` values.
    pub slot: *mut f64,
    /// The dependence test's absolute threshold.
    pub abs: f64,
    /// Partial sums to add.
    pub blocks: u32,
    /// Columns (`b · b ≤ MAX_PAIRS`).
    pub b: u32,
    /// 1 or 2 (pass 2 does nothing unless pass 1 set the slot's `NEED2`).
    pub pass: u32,
    /// Nonzero: skip the second pass when the first is well conditioned.
    pub one_pass: u32,
}

/// The arguments of `svd_widen_f32`: `dst[i] = src[i]` widened to `f64`, for `i < n`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct WidenArgs {
    /// `n` values.
    pub src: *const f32,
    /// `n` values.
    pub dst: *mut f64,
    /// Values.
    pub n: u64,
}

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
