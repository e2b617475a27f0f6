//! gpu-runtime's self-test kernels, PTX module `runtime`: the smallest kernels that exercise the
//! whole Rust→PTX pipeline and every kind of device helper (grid-stride loops, shared memory,
//! warp shuffles, votes, atomics, read-only loads), and the validation kernels of
//! `gpu_runtime::check` (`runtime_csr_check_{u32,u64}`, `runtime_offsets_*`,
//! `runtime_indices_*`). The self-tests' serial twins live in
//! `gpu_runtime::selftest::serial`.
//!
//! Symbols follow `{module}_{kernel}_{type}`; the host names them the same way.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

#[cfg(target_arch = "nvptx64")]
mod kernels;
#[cfg(target_arch = "nvptx64")]
pub use kernels::*;

/// Threads per block of `runtime_block_sum_u32`; the host launches with exactly this many.
pub const BLOCK_SUM_NT: u32 = 256;

/// The arguments of `runtime_fill_u32` (`out[i] = value`) and `runtime_iota_u32` (`out[i] =
/// value + i`, wrapping), for `i < n`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FillArgs {
    /// `n` words.
    pub out: *mut u32,
    /// Words.
    pub n: u64,
    /// The value, or the first one.
    pub value: u32,
}

/// The arguments of `runtime_block_sum_u32` (each block's sum into `block_sums`, their total
/// added to `total`, the nonzeros counted into `nonzero`) and `runtime_warp_scan_u32` (each
/// aligned run of 32 scanned into `out`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SelfTestArgs {
    /// `n` words.
    pub input: *const u32,
    /// The scan (`n` words) or the block sums (one a block).
    pub out: *mut u32,
    /// One word (the block sums).
    pub total: *mut u64,
    /// One word (the block sums).
    pub nonzero: *mut u32,
    /// Words.
    pub n: u64,
}

/// The arguments of `runtime_csr_check_{u32,u64}`: a CSR's structure checked in one launch (the
/// first decrease of the `m + 1` offsets into `flags[0]`, the first of the `n` indices at or past
/// `bound` into `flags[1]`, by atomic min; the first and last offsets into `flags[2]`,
/// `flags[3]`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CsrCheckArgs<T> {
    /// The offsets (`m + 1` words).
    pub offsets: *const T,
    /// The indices (`n` words), or null when `n = 0`.
    pub indices: *const u32,
    /// Four words.
    pub flags: *mut u64,
    /// Rows: offsets less one.
    pub m: u64,
    /// Indices.
    pub n: u64,
    /// The indices' bound.
    pub bound: u64,
}

/// The arguments of the signed-input validation kernels of `gpu_runtime::check`, `T` the input's
/// words and `O` the output's: `runtime_offsets_*` (the `n + 1` signed offsets narrowed into
/// `out`, the first negative or too large into `flags[0]`, the first decrease into `flags[1]`,
/// the first and last into `flags[3]`, `flags[4]`) and `runtime_indices_*` (the `n` signed
/// indices narrowed into `out`, the first out of `0..bound` into `flags[0]`). First positions by
/// atomic min.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CheckArgs<T, O> {
    /// The words checked.
    pub input: *const T,
    /// The narrowed copy, or null.
    pub out: *mut O,
    /// The flag words.
    pub flags: *mut u64,
    /// Words (offsets: `n + 1`).
    pub n: u64,
    /// The bound.
    pub bound: u64,
}
