//! Tile-level building blocks of one radix pass (one block of [`NT`] threads per tile of [`NV`]
//! keys). They use this module's static shared arrays, so a kernel calls at most one of them.
use gpu_device::atomic::red_add_u32;
use gpu_device::intrinsics::popc;
use gpu_device::mem::ldg_u32;
use gpu_device::{static_shared, unroll};
use gpu_device::thread::{block_idx_x, sync_threads, thread_idx_x};
use gpu_device::warp::{inclusive_sum_u32, lane_id, sync_warp, FULL_MASK};

use crate::warp::match_rank;
use crate::{digit, MAX_BITS, NT, NV, VT};

const WARPS: usize = (NT / 32) as usize;
const RADIX: usize = 1 << MAX_BITS;
const _: () = assert!(VT == 8, "the unrolled item loops list 8 indices");

static_shared!(RX_HIST: [u32; RADIX]);
// Per-warp digit counts: at most 32 * VT = 256 per warp, so u16.
static_shared!(RX_WARP: [u16; WARPS * RADIX]);
static_shared!(RX_START: [u32; RADIX]);
static_shared!(RX_BASE: [u32; RADIX]);
static_shared!(RX_KEYS: [u32; NV as usize]);
static_shared!(RX_FIRST: [u32; NV as usize]);

/// Digit counts of tile `blockIdx.x`: `counts[d * tiles + t]` for `d < 2^bits`.
///
/// # Safety
/// `tiles = ceil(n / NV)` blocks of `NT` threads; `keys` holds `n` words; `counts` holds
/// `2^bits * tiles` words; `bits <= MAX_BITS`.
#[inline(always)]
pub unsafe fn upsweep(keys: *const u32, n: u64, shift: u32, bits: u32, tiles: u64, counts: *mut u32) {
    let (t, tid) = (block_idx_x() as u64, thread_idx_x());
    let radix = 1u32 << bits;
    let hist = RX_HIST::ptr();
    // SAFETY: shared indices < radix <= RADIX; key indices < n; count indices < radix * tiles.
    unsafe {
        let mut d = tid;
        while d < radix {
            *hist.add(d as usize) = 0;
            d += NT;
        }
        sync_threads();
        let base = t * NV as u64;
        for i in 0..VT as u64 {
            let k = base + i * NT as u64 + tid as u64;
            // Plain shared atomics: warp-aggregating them (histogram_kernels::warp) measured
            // slower here, the digits of a warp being mostly distinct.
            if k < n {
                red_add_u32(hist.add(digit(ldg_u32(keys.add(k as usize)), shift, bits) as usize), 1);
            }
        }
        sync_threads();
        let mut d = tid;
        while d < radix {
            *counts.add((d as u64 * tiles + t) as usize) = *hist.add(d as usize);
            d += NT;
        }
    }
}

/// The exclusive scan of a tile's `RADIX` digit counts in `start` (shared), by one warp:
/// `RADIX / 32` digits a lane, a warp `shfl_up` scan of the lanes' sums. (gpu-scan's Blelloch
/// block scan, with a barrier per level, made the whole pass 15% slower.)
///
/// # Safety
/// Called by warp 0 only (all 32 lanes); `start` holds `RADIX` shared words.
#[inline(always)]
pub unsafe fn exclusive_scan_digit_counts(start: *mut u32) {
    let lane = lane_id();
    let first = lane as usize * (RADIX / 32);
    let last = first + RADIX / 32;
    // SAFETY: indices < RADIX.
    unsafe {
        let mut sum = 0u32;
        for d in first..last {
            sum += *start.add(d);
        }
        let inc = inclusive_sum_u32(sum);
        let mut run = inc - sum;
        for d in first..last {
            let c = *start.add(d);
            *start.add(d) = run;
            run += c;
        }
    }
}

/// One stable pass by digit: tile `blockIdx.x` of `(keys_in, first_in, second_in)` goes to
/// `offsets[d * tiles + t]` (the exclusive scan of the upsweep's counts) plus its rank among the
/// tile's keys of digit `d`. Any of `keys_out`, `first_in`/`first_out` (a `u32` payload) and
/// `second_in`/`second_out` (a `V` payload) may be null: that part is not moved.
///
/// # Safety
/// `tiles` blocks of `NT` threads; inputs and outputs hold `n` items, `offsets`
/// `2^bits * tiles` words scanned from the same keys' upsweep; `bits <= MAX_BITS`; a payload's
/// input and output are both null or both valid; `ssecond` is a shared array of `NV` values.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn downsweep<V: Copy>(
    keys_in: *const u32,
    first_in: *const u32,
    second_in: *const V,
    n: u64,
    shift: u32,
    bits: u32,
    tiles: u64,
    offsets: *const u32,
    keys_out: *mut u32,
    first_out: *mut u32,
    second_out: *mut V,
    ssecond: *mut V,
) {
    let (t, tid, lane) = (block_idx_x() as u64, thread_idx_x(), lane_id());
    let warp = (tid / 32) as usize;
    let radix = 1u32 << bits;
    let (wh, start, base) = (RX_WARP::ptr(), RX_START::ptr(), RX_BASE::ptr());
    let (skeys, sfirst) = (RX_KEYS::ptr(), RX_FIRST::ptr());
    // SAFETY: shared indices stay below their arrays' lengths (digits < radix <= RADIX, tile
    // positions < NV); global indices are checked against n.
    unsafe {
        let mut i = tid as usize;
        while i < WARPS * RADIX {
            *wh.add(i) = 0;
            i += NT as usize;
        }
        let mut d = tid;
        while d < radix {
            *base.add(d as usize) = ldg_u32(offsets.add((d as u64 * tiles + t) as usize));
            d += NT;
        }
        sync_threads();
        // Warp-striped: warp w holds positions seg + i * 32 + lane, in index order.
        let seg = t * NV as u64 + warp as u64 * 32 * VT as u64;
        let mut keys = [0u32; VT as usize];
        let mut ranks = [0u32; VT as usize];
        // All loads first, so they are in flight together (the ranking below is a chain of
        // warp-synchronous steps).
        unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
            let k = seg + (i as u64) * 32 + lane as u64;
            if k < n {
                keys[i] = ldg_u32(keys_in.add(k as usize));
            }
        });
        unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
            let k = seg + (i as u64) * 32 + lane as u64;
            let valid = k < n;
            let key = keys[i];
            // Past the end each lane is a group of its own.
            let d = if valid { digit(key, shift, bits) } else { RADIX as u32 + lane };
            let (peers, r) = match_rank(d);
            let slot = wh.add(warp * RADIX + (d as usize & (RADIX - 1)));
            let old = if valid { *slot as u32 } else { 0 };
            sync_warp(FULL_MASK);
            if valid && r == 0 {
                *slot = (old + popc(peers)) as u16;
            }
            sync_warp(FULL_MASK);
            ranks[i] = old + r;
        });
        sync_threads();
        // Per digit: exclusive offsets over the warps, and the tile's count.
        let mut d = tid as usize;
        while d < RADIX {
            let mut run = 0u32;
            for w in 0..WARPS {
                let c = *wh.add(w * RADIX + d) as u32;
                *wh.add(w * RADIX + d) = run as u16;
                run += c;
            }
            *start.add(d) = run;
            d += NT as usize;
        }
        sync_threads();
        if warp == 0 {
            exclusive_scan_digit_counts(start);
        }
        sync_threads();
        // Stage the tile in digit order.
        unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
            let k = seg + (i as u64) * 32 + lane as u64;
            if k < n {
                let d = digit(keys[i], shift, bits) as usize;
                let pos = (*start.add(d) + *wh.add(warp * RADIX + d) as u32 + ranks[i]) as usize;
                *skeys.add(pos) = keys[i];
                if !first_in.is_null() {
                    *sfirst.add(pos) = ldg_u32(first_in.add(k as usize));
                }
                if !second_in.is_null() {
                    *ssecond.add(pos) = *second_in.add(k as usize);
                }
            }
        });
        sync_threads();
        // Write out in runs of equal digits.
        let count = (n - t * NV as u64).min(NV as u64) as u32;
        let mut k = tid;
        while k < count {
            let key = *skeys.add(k as usize);
            let d = digit(key, shift, bits) as usize;
            let pos = (*base.add(d) + (k - *start.add(d))) as usize;
            if !keys_out.is_null() {
                *keys_out.add(pos) = key;
            }
            if !first_out.is_null() {
                *first_out.add(pos) = *sfirst.add(k as usize);
            }
            if !second_out.is_null() {
                *second_out.add(pos) = *ssecond.add(k as usize);
            }
            k += NT;
        }
    }
}
