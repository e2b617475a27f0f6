//! One tile of [`NV`](crate::NV) items: thread `t` owns chunks `t` and `t + NT`, each of
//! [`VT`](crate::VT) consecutive items, loaded and stored with 16-byte vector accesses when the
//! whole chunk is in range and the buffers are aligned, item by item otherwise.
use gpu_device::mem::{ld_global, ld_global_u64x2, stg, stg_u64x2, GlobalWord};
use gpu_device::thread::thread_idx_x;

use crate::{ScanItem, NT, NV, VT};

/// `VT` items, 16-byte aligned so a full chunk moves in one (32-bit items) or two (64-bit
/// items) vector instructions.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Chunk<T>(pub [T; VT as usize]);

/// First item index of chunk `c` (0 or 1) of this thread in tile `tile`.
#[inline(always)]
pub fn chunk_start(tile: u64, c: u32) -> u64 {
    tile * NV as u64 + ((thread_idx_x() + c * NT) * VT) as u64
}

/// Loads the chunk starting at item `i0`; items at or past `n` read as zero.
///
/// # Safety
/// `input` holds `n` items; when `vec_ok`, it is 16-byte aligned.
#[inline(always)]
pub unsafe fn load_chunk<T: ScanItem + GlobalWord>(input: *const T, i0: u64, n: u64, vec_ok: bool) -> Chunk<T> {
    let mut c = Chunk([T::ZERO; VT as usize]);
    // SAFETY: full chunks are in range (and aligned when vec_ok: a chunk is whole 16-byte
    // pieces); partial ones check each index.
    unsafe {
        if vec_ok && i0 + VT as u64 <= n {
            let (src, dst) = (input.add(i0 as usize) as *const u64, &mut c as *mut Chunk<T> as *mut u64);
            for q in 0..core::mem::size_of::<Chunk<T>>() / 16 {
                let [a, b] = ld_global_u64x2(src.add(2 * q));
                *dst.add(2 * q) = a;
                *dst.add(2 * q + 1) = b;
            }
        } else {
            for k in 0..VT as usize {
                if i0 + (k as u64) < n {
                    c.0[k] = ld_global(input.add(i0 as usize + k));
                }
            }
        }
    }
    c
}

/// Stores the chunk starting at item `i0`, skipping items at or past `n`.
///
/// # Safety
/// `output` holds `n` items; when `vec_ok`, it is 16-byte aligned.
#[inline(always)]
pub unsafe fn store_chunk<T: ScanItem + GlobalWord>(output: *mut T, i0: u64, n: u64, vec_ok: bool, c: Chunk<T>) {
    // SAFETY: as in `load_chunk`.
    unsafe {
        if vec_ok && i0 + VT as u64 <= n {
            let (src, dst) = (&c as *const Chunk<T> as *const u64, output.add(i0 as usize) as *mut u64);
            for q in 0..core::mem::size_of::<Chunk<T>>() / 16 {
                stg_u64x2(dst.add(2 * q), [*src.add(2 * q), *src.add(2 * q + 1)]);
            }
        } else {
            for k in 0..VT as usize {
                if i0 + (k as u64) < n {
                    stg(output.add(i0 as usize + k), c.0[k]);
                }
            }
        }
    }
}

/// Sum of a chunk's items.
#[inline(always)]
pub fn chunk_sum<T: ScanItem>(c: &Chunk<T>) -> T {
    let mut s = T::ZERO;
    for k in 0..VT as usize {
        s = s.add(c.0[k]);
    }
    s
}

/// Rewrites a chunk into its prefix sums starting from `carry`: exclusive (`carry`, `carry + x0`,
/// ...) or inclusive (`carry + x0`, ...).
#[inline(always)]
pub fn chunk_scan<T: ScanItem>(c: &mut Chunk<T>, carry: T, inclusive: bool) {
    let mut acc = carry;
    for k in 0..VT as usize {
        let x = c.0[k];
        let next = acc.add(x);
        c.0[k] = if inclusive { next } else { acc };
        acc = next;
    }
}
