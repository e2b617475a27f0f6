//! Thread, block and grid indices and block-wide barriers (all compute capability 1.0+).
use core::arch::nvptx;

macro_rules! sreg {
    ($(#[$doc:meta] $name:ident => $intr:ident;)*) => {$(
        #[$doc]
        #[inline(always)]
        pub fn $name() -> u32 {
            // SAFETY: reading a special register has no preconditions.
            unsafe { nvptx::$intr() as u32 }
        }
    )*};
}

sreg! {
    /// `threadIdx.x`. CC 1.0+.
    thread_idx_x => _thread_idx_x;
    /// `threadIdx.y`. CC 1.0+.
    thread_idx_y => _thread_idx_y;
    /// `threadIdx.z`. CC 1.0+.
    thread_idx_z => _thread_idx_z;
    /// `blockIdx.x`. CC 1.0+.
    block_idx_x => _block_idx_x;
    /// `blockIdx.y`. CC 1.0+.
    block_idx_y => _block_idx_y;
    /// `blockIdx.z`. CC 1.0+.
    block_idx_z => _block_idx_z;
    /// `blockDim.x`. CC 1.0+.
    block_dim_x => _block_dim_x;
    /// `blockDim.y`. CC 1.0+.
    block_dim_y => _block_dim_y;
    /// `blockDim.z`. CC 1.0+.
    block_dim_z => _block_dim_z;
    /// `gridDim.x`. CC 1.0+.
    grid_dim_x => _grid_dim_x;
    /// `gridDim.y`. CC 1.0+.
    grid_dim_y => _grid_dim_y;
    /// `gridDim.z`. CC 1.0+.
    grid_dim_z => _grid_dim_z;
}

/// Global 1-D thread index, `blockIdx.x * blockDim.x + threadIdx.x`, as `u32` (as `cuda_std`).
/// Wraps past 2^32 threads: use [`index_1d_u64`] for grids that large. CC 1.0+.
#[inline(always)]
pub fn index_1d() -> u32 {
    block_idx_x().wrapping_mul(block_dim_x()).wrapping_add(thread_idx_x())
}

/// Global 1-D thread index as `u64`, exact for any grid. CC 1.0+.
#[inline(always)]
pub fn index_1d_u64() -> u64 {
    block_idx_x() as u64 * block_dim_x() as u64 + thread_idx_x() as u64
}

/// Total threads in a 1-D grid, `gridDim.x * blockDim.x`, as `u64` (the grid-stride step). CC 1.0+.
#[inline(always)]
pub fn grid_size_1d() -> u64 {
    grid_dim_x() as u64 * block_dim_x() as u64
}

/// `__syncthreads()`: block-wide barrier; also orders shared and global memory accesses of the
/// block. Every thread of the block must reach it. CC 1.0+.
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: a barrier has no memory-safety preconditions (a divergent call deadlocks, not UB
    // in the Rust sense); callers keep it in uniform control flow.
    unsafe { nvptx::_syncthreads() }
}

/// `__syncthreads_count(pred)`: barrier that returns how many threads of the block passed
/// `true`. CC 2.0+.
#[inline(always)]
pub fn sync_threads_count(pred: bool) -> u32 {
    let r: u32;
    // SAFETY: `bar.red.popc` is a barrier with a reduction; all threads must reach it.
    unsafe {
        core::arch::asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {v}, 0; bar.red.popc.u32 {r}, 0, p; }}",
            v = in(reg32) pred as u32, r = out(reg32) r,
        );
    }
    r
}

/// `__threadfence()`: orders this thread's prior memory writes before later ones as seen by
/// every thread of the device. CC 2.0+.
#[inline(always)]
pub fn thread_fence() {
    // SAFETY: a fence has no preconditions.
    unsafe { core::arch::asm!("membar.gl;") }
}

/// `__threadfence_block()`: as [`thread_fence`], for threads of this block. CC 2.0+.
#[inline(always)]
pub fn thread_fence_block() {
    // SAFETY: a fence has no preconditions.
    unsafe { core::arch::asm!("membar.cta;") }
}

/// `__nanosleep(ns)`: suspends the thread for about `ns` nanoseconds (at most 1 ms; the hardware
/// picks a duration in `[0, 2 · ns]`). For backoff in spin loops, so that waiting warps leave the
/// issue slots to working ones. CC 7.0+.
#[inline(always)]
pub fn nanosleep(ns: u32) {
    // SAFETY: `nanosleep` has no memory effects and no preconditions.
    unsafe {
        core::arch::asm!("nanosleep.u32 {n};", n = in(reg32) ns, options(nomem, nostack, preserves_flags));
    }
}
