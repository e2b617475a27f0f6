//! The building blocks of a onesweep radix sort (Adinets & Merrill 2022): one read of the keys
//! counts the digits of every pass ([`histogram`]); then each pass is one kernel
//! ([`onesweep`]) whose tiles rank their keys, find their digits' offsets by decoupled look-back
//! over the tiles before them, and write their keys in runs. They use this module's static shared
//! arrays, so a kernel calls at most one of them.
use gpu_device::atomic::{atomic_add_u32, ld_relaxed_u64, red_add_u32, st_relaxed_u64};
use gpu_device::intrinsics::popc;
use gpu_device::mem::{ldg_u32, ldg_u32x4};
use gpu_device::thread::{block_idx_x, sync_threads, thread_idx_x};
use gpu_device::warp::{inclusive_sum_u32, lane_id, shfl_idx_sync, FULL_MASK};
use gpu_device::{static_shared, unroll};

use crate::warp::{leader, match_rank};
use crate::{digit, pass_digit, HIST_PASSES, MAX_BITS, NT, NV, VT};

const WARPS: usize = (NT / 32) as usize;
const RADIX: usize = 1 << MAX_BITS;
const _: () = assert!(VT == 8, "each_item! lists 8 indices");

/// The per-thread item loop, unrolled ([`unroll!`]) over the `VT` item indices.
macro_rules! each_item {
    ($i:ident $body:block) => {
        unroll!($i in [0, 1, 2, 3, 4, 5, 6, 7] $body)
    };
}

static_shared!(RX_HIST: [u32; HIST_PASSES as usize * RADIX]);
// Per-warp digit counts (32-bit for the shared-memory atomics).
static_shared!(RX_WARP: [u32; WARPS * RADIX]);
static_shared!(RX_START: [u32; RADIX]);
static_shared!(RX_BASE: [u32; RADIX]);
static_shared!(RX_TILE: [u32; 4]);

/// Digit counts of up to [`HIST_PASSES`] passes in one read of the keys: pass `p < passes`
/// counts digit `(key >> (shift0 + p * per)) & mask` (its bits cut at `end`) into
/// `hist[p * 2^MAX_BITS + d]`, with global atomics (`hist` zeroed before). Block `b` counts keys
/// `[b * chunk, (b + 1) * chunk)`.
///
/// # Safety
/// `keys` holds `n` words; `hist` holds `passes * 2^MAX_BITS` words; `passes <= HIST_PASSES`;
/// `per <= MAX_BITS`; `chunk` a multiple of 4.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn histogram(keys: *const u32, n: u64, chunk: u64, shift0: u32, per: u32, passes: u32, end: u32, hist: *mut u32) {
    let tid = thread_idx_x();
    let h = RX_HIST::ptr();
    let slots = passes as usize * RADIX;
    // SAFETY: shared indices < slots <= HIST_PASSES * RADIX; key indices < n; global counts
    // indices < passes * RADIX.
    unsafe {
        let mut i = tid as usize;
        while i < slots {
            *h.add(i) = 0;
            i += NT as usize;
        }
        sync_threads();
        let count = |key: u32| {
            for p in 0..passes {
                let (shift, bits) = pass_digit(shift0, per, p, end);
                red_add_u32(h.add(p as usize * RADIX + digit(key, shift, bits) as usize), 1);
            }
        };
        let begin = block_idx_x() as u64 * chunk;
        let stop = (begin + chunk).min(n);
        if (keys as usize) % 16 == 0 {
            // Four keys a load while whole quads remain.
            let quads = stop.saturating_sub(begin) / 4;
            let mut q = tid as u64;
            while q < quads {
                let [a, b, c, d] = ldg_u32x4(keys.add((begin + 4 * q) as usize));
                count(a);
                count(b);
                count(c);
                count(d);
                q += NT as u64;
            }
            let mut k = begin + 4 * quads + tid as u64;
            while k < stop {
                count(ldg_u32(keys.add(k as usize)));
                k += NT as u64;
            }
        } else {
            let mut k = begin + tid as u64;
            while k < stop {
                count(ldg_u32(keys.add(k as usize)));
                k += NT as u64;
            }
        }
        sync_threads();
        let mut i = tid as usize;
        while i < slots {
            let c = *h.add(i);
            if c != 0 {
                red_add_u32(hist.add(i), c);
            }
            i += NT as usize;
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

/// Look-back status word of pass `pass`: the tag (`2 * pass + 1`: a tile's own count of a
/// digit; `2 * pass + 2`: the inclusive count through that tile) in the high half, the count in
/// the low half. Words of earlier passes carry smaller tags, so one zeroing serves a whole sort.
#[inline(always)]
const fn status_word(pass: u32, inclusive: bool, count: u32) -> u64 {
    let tag = 2 * pass + 1 + inclusive as u32;
    ((tag as u64) << 32) | count as u64
}

/// Items of a tile each look-back step reads per digit.
const LOOK_BACK: usize = 4;

/// Moves one payload of a tile: each thread loads its items (warp-striped from `seg`, all loads
/// in flight), stores them at `pos` in `area`, and after a barrier writes slots
/// `tid + j * NT` below `count` to their place (`place(k).1`).
///
/// # Safety
/// As [`onesweep`]'s: `input` and `output` hold `n` items; `pos` and `place` as there;
/// `area` is shared memory of `NV` items; every thread of the block calls it.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn stage_payload<V: Copy>(input: *const V, output: *mut V, n: u64, seg: u64, lane: u32, tid: u32, count: u32, pos: &[u32; VT as usize], place: impl Fn(u32) -> (u32, usize), area: *mut V) {
    // SAFETY: global indices checked against n and count (<= n - tile start); shared indices
    // < NV.
    unsafe {
        let mut vals: [core::mem::MaybeUninit<V>; VT as usize] = [core::mem::MaybeUninit::uninit(); VT as usize];
        each_item!(i {
            let k = seg + (i as u64) * 32 + lane as u64;
            if k < n {
                vals[i] = core::mem::MaybeUninit::new(*input.add(k as usize));
            }
        });
        each_item!(i {
            let k = seg + (i as u64) * 32 + lane as u64;
            if k < n {
                *area.add(pos[i] as usize) = vals[i].assume_init();
            }
        });
        sync_threads();
        let mut k = tid;
        while k < count {
            *output.add(place(k).1) = *area.add(k as usize);
            k += NT;
        }
        sync_threads();
    }
}

/// One stable pass by digit `(key >> shift) & (2^bits - 1)`, onesweep: each block takes the next
/// tile from `counter`, ranks its keys among equal digits in input order (warp match-rank, then
/// per-warp counters), publishes its digit counts in `status` and adds up the counts of the tiles
/// before it (decoupled look-back, one thread per digit), stages the tile in digit order in
/// `stage` and writes it out in runs of equal digits, to the digit's start (the exclusive scan of
/// `counts`, this pass's digit counts over all keys) plus the tiles before it. Any of `keys_out`,
/// `first_in`/`first_out` (a `u32` payload) and `second_in`/`second_out` (a `V` payload) may be
/// null: that part is not moved.
///
/// # Safety
/// `ceil(n / NV)` blocks of `NT` threads; inputs and outputs hold `n` items, no output overlaps
/// an input; `counts` holds `2^bits` words counting this pass's digits of the `n` keys;
/// `status` holds `2^bits * ceil(n / NV)` words holding no tag of `pass` or later, `counter`
/// is 0; `bits <= MAX_BITS`; a payload's input and output are both null or both valid; `stage`
/// is shared memory of [`crate::stage_bytes`]`(size_of::<V>())` bytes, 16-byte aligned.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn onesweep<V: Copy>(
    keys_in: *const u32,
    first_in: *const u32,
    second_in: *const V,
    n: u64,
    shift: u32,
    bits: u32,
    pass: u32,
    counts: *const u32,
    status: *mut u64,
    counter: *mut u32,
    keys_out: *mut u32,
    first_out: *mut u32,
    second_out: *mut V,
    stage: *mut u8,
) {
    let (tid, lane) = (thread_idx_x(), lane_id());
    let warp = (tid / 32) as usize;
    let radix = 1u32 << bits;
    let (wh, start, base, slot) = (RX_WARP::ptr(), RX_START::ptr(), RX_BASE::ptr(), RX_TILE::ptr());
    // The keys after the payload area (which takes the widest payload).
    let skeys = stage.wrapping_add(NV as usize * core::mem::size_of::<V>().max(4)) as *mut u32;
    // SAFETY: shared indices stay below their arrays' lengths (digits < RADIX, tile positions
    // < NV); global indices are checked against n; status indices < radix * tiles (the tile
    // comes from the counter, one per block).
    unsafe {
        if tid == 0 {
            *slot = atomic_add_u32(counter, 1);
        }
        let mut i = tid as usize;
        while i < WARPS * RADIX {
            *wh.add(i) = 0;
            i += NT as usize;
        }
        let mut d = tid;
        while d < RADIX as u32 {
            *base.add(d as usize) = if d < radix { ldg_u32(counts.add(d as usize)) } else { 0 };
            d += NT;
        }
        sync_threads();
        let t = *slot as u64;
        if warp == 0 {
            // The digits' starts over all keys.
            exclusive_scan_digit_counts(base);
        }
        // Warp-striped: warp w holds positions seg + i * 32 + lane, in index order.
        let seg = t * NV as u64 + warp as u64 * 32 * VT as u64;
        let mut keys = [0u32; VT as usize];
        let mut ranks = [0u32; VT as usize];
        // All loads first, so they are in flight together (the ranking below is a chain of
        // warp-synchronous steps).
        each_item!(i {
            let k = seg + (i as u64) * 32 + lane as u64;
            if k < n {
                keys[i] = ldg_u32(keys_in.add(k as usize));
            }
        });
        each_item!(i {
            let k = seg + (i as u64) * 32 + lane as u64;
            let valid = k < n;
            // Past the end each lane is a group of its own.
            let d = if valid { digit(keys[i], shift, bits) } else { RADIX as u32 + lane };
            let (peers, r) = match_rank(d);
            let at = wh.add(warp * RADIX + (d as usize & (RADIX - 1)));
            // The group's leader adds the group to the warp's count of its digit; the old count,
            // broadcast, is where the group starts. (A warp's shared-memory atomics run in
            // instruction order, so earlier items rank first: stable.)
            let old = if valid && r == 0 { atomic_add_u32(at, popc(peers)) } else { 0 };
            ranks[i] = shfl_idx_sync(FULL_MASK, old, leader(peers)) + r;
        });
        sync_threads();
        // Per digit: exclusive offsets over the warps and the tile's count, published at once.
        let row = status.add((t * radix as u64) as usize);
        let mut d = tid as usize;
        while d < RADIX {
            let mut run = 0u32;
            for w in 0..WARPS {
                let c = *wh.add(w * RADIX + d);
                *wh.add(w * RADIX + d) = run;
                run += c;
            }
            *start.add(d) = run;
            if d < radix as usize {
                st_relaxed_u64(row.add(d), status_word(pass, t == 0, run));
            }
            d += NT as usize;
        }
        // Look back: the counts of each digit in the tiles before this one, from the nearest
        // inclusive count, LOOK_BACK tiles a step (independent loads in flight: a walk of one
        // tile a step was bound by the memory latency chain). Tiles come from the counter in
        // order, so every tile looked at is running or done and publishes (forward progress).
        if t > 0 {
            let (own, through) = (status_word(pass, false, 0) >> 32, status_word(pass, true, 0) >> 32);
            let mut d = tid as usize;
            while d < radix as usize {
                let mut before = 0u32;
                // Tiles below `j` are still to add.
                let mut j = t;
                loop {
                    let mut words = [0u64; LOOK_BACK];
                    unroll!(q in [0, 1, 2, 3] {
                        if j > q as u64 {
                            words[q] = ld_relaxed_u64(status.add(((j - 1 - q as u64) * radix as u64) as usize + d));
                        }
                    });
                    // Add the ready words in order, up to the first inclusive one or the first
                    // not yet published (tile 0's word is inclusive, so the walk ends there).
                    let (mut used, mut done, mut stalled) = (0u64, false, false);
                    unroll!(q in [0, 1, 2, 3] {
                        if !done && !stalled {
                            let tag = words[q] >> 32;
                            if tag < own {
                                stalled = true;
                            } else {
                                before += words[q] as u32;
                                used += 1;
                                done = tag == through;
                            }
                        }
                    });
                    // (`stalled` only stops the adding; the next step re-reads from there.)
                    let _ = stalled;
                    if done {
                        break;
                    }
                    j -= used;
                }
                st_relaxed_u64(row.add(d), status_word(pass, true, before + *start.add(d)));
                *base.add(d) += before;
                d += NT as usize;
            }
        }
        sync_threads();
        if warp == 0 {
            exclusive_scan_digit_counts(start);
        }
        sync_threads();
        // Each item's place in the tile in digit order; then the keys staged there.
        let mut pos = [0u32; VT as usize];
        each_item!(i {
            let k = seg + (i as u64) * 32 + lane as u64;
            if k < n {
                let d = digit(keys[i], shift, bits) as usize;
                pos[i] = *start.add(d) + *wh.add(warp * RADIX + d) + ranks[i];
                *skeys.add(pos[i] as usize) = keys[i];
            }
        });
        sync_threads();
        // Keys out in runs of equal digits: slot k goes to its digit's base plus its offset in
        // the digit's run.
        let count = (n - t * NV as u64).min(NV as u64) as u32;
        let place = |k: u32| -> (u32, usize) {
            let key = *skeys.add(k as usize);
            let d = digit(key, shift, bits) as usize;
            (key, (*base.add(d) + (k - *start.add(d))) as usize)
        };
        if !keys_out.is_null() {
            let mut k = tid;
            while k < count {
                let (key, at) = place(k);
                *keys_out.add(at) = key;
                k += NT;
            }
        }
        // Each payload: all loads in flight, staged through one shared area, written in runs.
        if !first_in.is_null() {
            stage_payload(first_in, first_out, n, seg, lane, tid, count, &pos, place, stage as *mut u32);
        }
        if !second_in.is_null() {
            stage_payload(second_in, second_out, n, seg, lane, tid, count, &pos, place, stage as *mut V);
        }
    }
}
