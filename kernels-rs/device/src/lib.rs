//! Device-side support for sptrans kernels, built for `nvptx64-nvidia-cuda` by the stock rustc
//! NVPTX backend.
//!
//! The module and function names follow rust-cuda's `cuda_std` where the two overlap
//! (`thread::thread_idx_x`, `thread::index_1d`, `thread::sync_threads`, `warp::lane_id`, ...),
//! so that a later move to `cuda_std` stays mechanical. Every item states the minimum compute
//! capability it needs; the PTX is built for `sm_80` by default, so anything up to 8.0 is safe.
//!
//! | module | what |
//! |---|---|
//! | [`thread`] | thread/block/grid indices, `sync_threads` |
//! | [`warp`] | lane id, shuffles (up/down/idx/xor), ballot, vote, match-any; keys matched and ranked across a warp (`match_rank`, `match_low_bits`, `aggregated_increment`) |
//! | [`reduce`] | floating-point sums across a warp and a block, and the warp's segmented sum (CUB's `WarpReduce` / `BlockReduce`) |
//! | [`shared`] | static and dynamic shared memory declarations ([`static_shared!`], [`dynamic_shared!`]), `ld.shared`/`st.shared` through their pointers |
//! | [`atomic`] | global and shared atomics |
//! | [`mem`] | read-only (non-coherent) global loads |
//! | [`intrinsics`] | popc, clz, ffs, brev, `sqrt_f64` |
//! | [`num`] | scalar helpers every product shares (`combine`: BLAS's `alpha · sum + beta · y`) |
//!
//! Off the GPU (host builds, used for unit tests of pure helpers) the intrinsics are absent; the
//! pure partition math in kernel crates still compiles and runs.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch, link_llvm_intrinsics, stdarch_nvptx))]
#![deny(missing_docs)]
#![allow(internal_features)]

#[cfg(target_arch = "nvptx64")]
pub mod atomic;
#[cfg(target_arch = "nvptx64")]
pub mod intrinsics;
#[cfg(target_arch = "nvptx64")]
pub mod mem;
pub mod num;
#[cfg(target_arch = "nvptx64")]
pub mod reduce;
#[cfg(target_arch = "nvptx64")]
pub mod shared;
#[cfg(target_arch = "nvptx64")]
pub mod thread;
#[cfg(target_arch = "nvptx64")]
pub mod warp;

/// Repeats `$body` with `$i` bound (as a `usize` constant) to each listed index: per-thread item
/// loops unrolled by hand, so that their arrays stay in registers (LLVM keeps loops that contain
/// warp intrinsics rolled, and a rolled loop indexes its arrays in local memory).
///
/// ```
/// let mut sum = 0;
/// gpu_device::unroll!(i in [0, 1, 2] { sum += i * 10; });
/// assert_eq!(sum, 30);
/// ```
#[macro_export]
macro_rules! unroll {
    ($i:ident in [$($n:literal),*] $body:block) => {
        $({
            #[allow(non_upper_case_globals)]
            const $i: usize = $n;
            $body
        })*
    };
}

/// Threads in a warp on every NVIDIA GPU so far.
pub const WARP_SIZE: u32 = 32;

/// Ceiling division for tile counts: `div_ceil(10, 4) == 3`. Works on host and device.
#[inline(always)]
pub const fn div_ceil(a: u32, b: u32) -> u32 {
    a / b + (a % b != 0) as u32
}

/// Traps the kernel on panic: the launch fails with `CUDA_ERROR_LAUNCH_FAILED` (an illegal
/// instruction), which the host reports as a launch failure naming the kernel.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; it has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}
