//! Device-wide scan kernels (`#[no_mangle]` entry points), stamped per item type by
//! `scan_kernels!` from one generic body each: `scan_{phase}_{type}`.
//!
//! Two cross-tile schemes share the tile code:
//! - **reduce-then-scan** (multi-level): `scan_reduce_*` writes each tile's total; the host scans
//!   those totals recursively (the spine, same kernels); `scan_downsweep_*` scans each tile in
//!   shared memory (Blelloch) starting from its tile's carry. 3 passes over the data (read, read,
//!   write). With no carries (`carries == null`) the downsweep alone is the single-block path.
//! - **decoupled look-back** (single pass): `scan_lookback_*` takes tiles in order from an atomic
//!   counter, publishes its tile's total, lets one warp look back over predecessors' published
//!   totals / inclusive prefixes, then publishes its own inclusive prefix. 2 passes (read, write).
use gpu_device::atomic::atomic_add_u32;
use gpu_device::mem::{ld_global, ld_volatile_global, st_volatile_global, stg, GlobalWord};
use gpu_device::static_shared;
use gpu_device::thread::{block_idx_x, sync_threads, thread_idx_x};
use gpu_device::warp::{self, lane_id, Shuffle, FULL_MASK};
use gpu_device::WARP_SIZE;

use crate::block::{self, TEMP_LEN};
use crate::tile::{chunk_scan, chunk_start, chunk_sum, load_chunk, store_chunk};
use crate::{ScanArgs, ScanItem, NT};

// One shared region sized for the widest item type; each kernel casts it to its own.
static_shared!(SCAN_TEMP: [u64; TEMP_LEN]);
static_shared!(SCAN_SLOTS: [u64; 2]);

/// Look-back status of a tile: nothing published yet.
const STATUS_NONE: u32 = 0;
/// The tile's own total is in `agg[tile]`.
const STATUS_AGGREGATE: u32 = 1;
/// The inclusive prefix through this tile is in `incl[tile]`.
const STATUS_INCLUSIVE: u32 = 2;

#[inline(always)]
unsafe fn reduce<T: ScanItem + Shuffle + GlobalWord>(input: *const T, n: u64, partials: *mut T, vec_ok: bool) {
    let tile = block_idx_x() as u64;
    // SAFETY: launched with tile_count(n) blocks of NT threads; partials holds one per tile.
    unsafe {
        let a = load_chunk(input, chunk_start(tile, 0), n, vec_ok);
        let b = load_chunk(input, chunk_start(tile, 1), n, vec_ok);
        let total = block::reduce_sum(SCAN_TEMP::ptr() as *mut T, chunk_sum(&a).add(chunk_sum(&b)));
        if thread_idx_x() == 0 {
            stg(partials.add(tile as usize), total);
        }
    }
}

/// Scans one tile from `carry` and stores it.
#[inline(always)]
unsafe fn scan_tile<T: ScanItem + GlobalWord>(
    input: *const T,
    output: *mut T,
    n: u64,
    tile: u64,
    inclusive: bool,
    vec_ok: bool,
    carry: impl FnOnce(T) -> T,
) {
    // SAFETY: in-range accesses only (load/store_chunk check against n); SCAN_TEMP holds TEMP_LEN.
    unsafe {
        let (i0, i1) = (chunk_start(tile, 0), chunk_start(tile, 1));
        let mut a = load_chunk(input, i0, n, vec_ok);
        let mut b = load_chunk(input, i1, n, vec_ok);
        let (pa, pb, total) = block::exclusive_sum2(SCAN_TEMP::ptr() as *mut T, chunk_sum(&a), chunk_sum(&b));
        let c = carry(total);
        chunk_scan(&mut a, c.add(pa), inclusive);
        chunk_scan(&mut b, c.add(pb), inclusive);
        store_chunk(output, i0, n, vec_ok, a);
        store_chunk(output, i1, n, vec_ok, b);
    }
}

#[inline(always)]
unsafe fn downsweep<T: ScanItem + GlobalWord>(input: *const T, output: *mut T, n: u64, carries: *const T, inclusive: bool, vec_ok: bool) {
    let tile = block_idx_x() as u64;
    // SAFETY: carries is null or holds one item per tile.
    unsafe {
        let carry = if carries.is_null() { T::ZERO } else { ld_global(carries.add(tile as usize)) };
        scan_tile(input, output, n, tile, inclusive, vec_ok, |_| carry);
    }
}

#[inline(always)]
unsafe fn ld_acquire(p: *const u32) -> u32 {
    let r: u32;
    // SAFETY: p is a valid global address (caller). CC 7.0+.
    unsafe { core::arch::asm!("ld.acquire.gpu.u32 {r}, [{p}];", r = out(reg32) r, p = in(reg64) p) };
    r
}

#[inline(always)]
unsafe fn st_release(p: *mut u32, v: u32) {
    // SAFETY: p is a valid global address (caller). CC 7.0+.
    unsafe { core::arch::asm!("st.release.gpu.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v) };
}

/// Publishes `value` for `tile` under `status` (value first, then the status with release order).
#[inline(always)]
unsafe fn publish<T: ScanItem + GlobalWord>(status: *mut u32, values: *mut T, tile: u64, value: T, s: u32) {
    // SAFETY: tile < tile_count; the arrays hold one entry per tile.
    unsafe {
        st_volatile_global(values.add(tile as usize), value);
        st_release(status.add(tile as usize), s);
    }
}

/// Warp 0's look-back: the sum of all tiles before `tile`, read from predecessors' published
/// aggregates until the nearest inclusive prefix. 32 predecessors per step.
#[inline(always)]
unsafe fn look_back<T: ScanItem + Shuffle + GlobalWord>(tile: u64, status: *const u32, agg: *const T, incl: *const T) -> T {
    let lane = lane_id() as i64;
    let mut prefix = T::ZERO;
    let mut end = tile as i64;
    loop {
        let idx = end - 1 - lane;
        let (s, v) = if idx < 0 {
            (STATUS_INCLUSIVE, T::ZERO)
        } else {
            // SAFETY: 0 <= idx < tile; predecessors were given out earlier by the counter, so
            // they are running or done and will publish (forward progress).
            unsafe {
                let mut s = ld_acquire(status.add(idx as usize));
                while s == STATUS_NONE {
                    s = ld_acquire(status.add(idx as usize));
                }
                let src = if s == STATUS_INCLUSIVE { incl } else { agg };
                (s, ld_volatile_global(src.add(idx as usize)))
            }
        };
        let inclusive = warp::ballot_sync(FULL_MASK, s == STATUS_INCLUSIVE);
        // Lanes up to the nearest inclusive predecessor contribute; farther ones are covered by it.
        let nearest = if inclusive == 0 { WARP_SIZE as i64 } else { inclusive.trailing_zeros() as i64 };
        let contrib = if lane <= nearest { v } else { T::ZERO };
        prefix = prefix.add(crate::warp::reduce_sum(contrib));
        if inclusive != 0 {
            return prefix;
        }
        end -= WARP_SIZE as i64;
    }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn lookback<T: ScanItem + Shuffle + GlobalWord>(
    input: *const T,
    output: *mut T,
    n: u64,
    inclusive: bool,
    vec_ok: bool,
    counter: *mut u32,
    status: *mut u32,
    agg: *mut T,
    incl: *mut T,
) {
    let tid = thread_idx_x();
    let slots = SCAN_SLOTS::ptr();
    // SAFETY: counter/status/agg/incl are the zeroed workspace of tile_count(n) tiles, launched
    // with tile_count(n) blocks; slots are this block's shared words.
    unsafe {
        if tid == 0 {
            *slots = atomic_add_u32(counter, 1) as u64;
        }
        sync_threads();
        let tile = *slots;
        let prefix_slot = slots.add(1) as *mut T;
        scan_tile(input, output, n, tile, inclusive, vec_ok, |total| {
            if tid < WARP_SIZE {
                let prefix = if tile == 0 {
                    if tid == 0 {
                        publish(status, incl, 0, total, STATUS_INCLUSIVE);
                    }
                    T::ZERO
                } else {
                    if tid == 0 {
                        publish(status, agg, tile, total, STATUS_AGGREGATE);
                    }
                    let p = look_back(tile, status, agg, incl);
                    if tid == 0 {
                        publish(status, incl, tile, p.add(total), STATUS_INCLUSIVE);
                    }
                    p
                };
                if tid == 0 {
                    *prefix_slot = prefix;
                }
            }
            sync_threads();
            *prefix_slot
        });
    }
}

macro_rules! scan_kernels {
    ($($t:ty => $reduce:ident, $down:ident, $look:ident;)*) => {$(
        /// Upsweep: `partials[b]` = sum of tile `b` of `input[..n]`.
        ///
        /// # Safety
        /// `tile_count(n)` blocks of `NT` threads; `partials` holds one item per tile;
        /// `vec_ok != 0` only when `input` is 16-byte aligned.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $reduce(a: ScanArgs<$t>) {
            unsafe { reduce(a.input, a.n, a.output, a.vec_ok != 0) }
        }

        /// Downsweep: scans each tile of `input[..n]` into `output` (exclusive, or inclusive
        /// when `inclusive != 0`), starting tile `b` from `carries[b]` (zero when `carries` is
        /// null). `output` may equal `input`.
        ///
        /// # Safety
        /// `tile_count(n)` blocks of `NT` threads; `carries` null or one item per tile;
        /// `vec_ok != 0` only when both buffers are 16-byte aligned.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $down(a: ScanArgs<$t>) {
            unsafe { downsweep(a.input, a.output, a.n, a.carries, a.inclusive != 0, a.vec_ok != 0) }
        }

        /// Single-pass scan with decoupled look-back. `output` may equal `input`.
        ///
        /// # Safety
        /// `tile_count(n)` blocks of `NT` threads; `counter` (one word) and `status` (one word
        /// per tile) zeroed before the launch; `agg` and `incl` one item per tile; `vec_ok != 0`
        /// only when both buffers are 16-byte aligned.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $look(a: ScanArgs<$t>) {
            unsafe { lookback(a.input, a.output, a.n, a.inclusive != 0, a.vec_ok != 0, a.counter, a.status, a.agg, a.incl) }
        }
    )*};
}

scan_kernels! {
    u32 => scan_reduce_u32, scan_downsweep_u32, scan_lookback_u32;
    i32 => scan_reduce_i32, scan_downsweep_i32, scan_lookback_i32;
    u64 => scan_reduce_u64, scan_downsweep_u64, scan_lookback_u64;
    i64 => scan_reduce_i64, scan_downsweep_i64, scan_lookback_i64;
}

const _: () = assert!(NT % WARP_SIZE == 0);
