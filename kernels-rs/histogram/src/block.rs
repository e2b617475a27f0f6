//! Block-level building blocks: privatized counts in shared memory. Every thread of the block
//! must call each function (they contain barriers); the caller owns the shared memory.
use gpu_device::atomic::red_add_u32;
use gpu_device::thread::{sync_threads, thread_idx_x};

use crate::NT;

/// Zeroes `len` words of shared memory at `smem`, then synchronizes the block.
///
/// # Safety
/// `smem` points to `len` words of shared memory owned by this block.
#[inline(always)]
pub unsafe fn zero_counts(smem: *mut u32, len: u32) {
    let mut i = thread_idx_x();
    while i < len {
        // SAFETY: i < len.
        unsafe { *smem.add(i as usize) = 0 };
        i += NT;
    }
    sync_threads();
}

/// Synchronizes the block, then adds the `copies` privatized copies of `bins` counts at `smem`
/// (copy `c` at `smem + c * bins`) into the global `counts`, one atomic per nonzero bin.
///
/// # Safety
/// `smem` points to `copies * bins` shared words; `counts` to `bins` global words.
#[inline(always)]
pub unsafe fn flush_counts(smem: *const u32, copies: u32, bins: u32, counts: *mut u32) {
    sync_threads();
    let mut b = thread_idx_x();
    while b < bins {
        let mut s = 0u32;
        for c in 0..copies {
            // SAFETY: c * bins + b < copies * bins.
            s = s.wrapping_add(unsafe { *smem.add((c * bins + b) as usize) });
        }
        if s != 0 {
            // SAFETY: b < bins.
            unsafe { red_add_u32(counts.add(b as usize), s) };
        }
        b += NT;
    }
}
