//! gpu-runtime's self-test kernels, PTX module `runtime`: the smallest kernels that exercise the
//! whole Rust→PTX pipeline and every kind of device helper (grid-stride loops, shared memory,
//! warp shuffles, votes, atomics, read-only loads), and the validation kernels of
//! `gpu_runtime::check` (`runtime_first_decrease_{u32,u64}`, `runtime_first_at_least_u32`,
//! `runtime_offsets_*`, `runtime_indices_*`). The self-tests' serial twins live in
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
