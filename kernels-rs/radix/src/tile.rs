//! The building blocks of a onesweep radix sort (Adinets & Merrill 2022): one read of the keys
//! counts the digits of every pass ([`histogram`]); then each pass is one kernel
//! ([`onesweep`]) whose tiles rank their keys, find their digits' offsets by decoupled look-back
//! over the tiles before them, and write their keys in runs. They use this module's static shared
//! arrays, so a kernel calls at most one of them.
use core::mem::MaybeUninit;
use gpu_device::atomic::{atomic_add_u32, ld_relaxed_u32, ld_relaxed_u64, red_add_u32, st_relaxed_u32, st_relaxed_u64};
use gpu_device::intrinsics::popc;
use gpu_device::mem::{ldg, ldg_u32, ldg_u32x4, stg, GlobalWord};
use gpu_device::shared::{Smem, SmemWord};
use gpu_device::thread::{block_idx_x, nanosleep, sync_threads, thread_idx_x};
use gpu_device::warp::sum_u32 as warp_sum_u32;
use gpu_device::warp::{inclusive_sum_u32, lane_id, lanemask_lt, match_low_bits, shfl_idx_sync, FULL_MASK};

use gpu_device::{static_shared, unroll};

use crate::warp::leader;
use crate::{digit, pass_digit, HistogramArgs, OnesweepArgs, DIGITS_PER_THREAD, HIST_NT, HIST_PASSES, MAX_BITS, NT, VT};

const WARPS: usize = crate::WARPS as usize;
const RADIX: usize = 1 << MAX_BITS;
/// Most digits a thread of a pass looks after.
const DPT: usize = DIGITS_PER_THREAD as usize;
/// Most items per thread (the unrolled item loop lists this many indices).
const MAX_VT: usize = 16;
const _: () = assert!(VT as usize <= MAX_VT && DPT <= 2, "onesweep: the unrolled loops list 16 items and 2 digits");

/// The per-thread item loop over `$vt` items, unrolled ([`unroll!`]; indices past `$vt` are
/// compiled out). Listing only 8 indices for `VT = 8` gave different code that was 1% slower
/// at 2^26 keys on an H100 (2.63–2.64 against 2.61–2.62 ms, same run, twice), so the list stays.
macro_rules! each_item {
    ($vt:ident, $i:ident $body:block) => {
        unroll!($i in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
            if $i < $vt $body
        })
    };
}

static_shared!(RX_HIST: [u32; HIST_PASSES as usize * RADIX]);
static_shared!(RX_START: [u32; RADIX]);
static_shared!(RX_BASE: [u32; RADIX]);
static_shared!(RX_TILE: [u32; 4]);
// The warps' totals of the two digit scans (global counts, the tile's counts).
static_shared!(RX_TOTALS: [u32; 2 * WARPS]);

/// Digit counts of up to [`HIST_PASSES`] passes in one read of the keys: pass `p < passes`
/// counts digit `(key >> (shift0 + p * per)) & mask` (its bits cut at `end`) into
/// `hist[p * 2^MAX_BITS + d]`, with global atomics (`hist` zeroed before). Block `b` counts keys
/// `[b * chunk, (b + 1) * chunk)`; blocks of [`HIST_NT`] threads.
///
/// # Safety
/// `keys` holds `n` words; `hist` holds `passes * 2^MAX_BITS` words; `passes <= HIST_PASSES`;
/// `per <= MAX_BITS`; `chunk` a multiple of 4.
#[inline(always)]
pub unsafe fn histogram(a: &HistogramArgs) {
    let HistogramArgs { keys, hist, n, chunk, shift0, per, passes, end, run_if: _ } = *a;
    let tid = thread_idx_x();
    let h = RX_HIST::smem();
    let slots = passes as usize * RADIX;
    // SAFETY: shared indices < slots <= HIST_PASSES * RADIX; key indices < n; global counts
    // indices < passes * RADIX.
    unsafe {
        let mut i = tid as usize;
        while i < slots {
            h.add(i).st(0);
            i += HIST_NT as usize;
        }
        sync_threads();
        let count = |key: u32| {
            for p in 0..passes {
                let (shift, bits) = pass_digit(shift0, per, p, end);
                h.add(p as usize * RADIX + digit(key, shift, bits) as usize).red_add(1);
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
                q += HIST_NT as u64;
            }
            let mut k = begin + 4 * quads + tid as u64;
            while k < stop {
                count(ldg_u32(keys.add(k as usize)));
                k += HIST_NT as u64;
            }
        } else {
            let mut k = begin + tid as u64;
            while k < stop {
                count(ldg_u32(keys.add(k as usize)));
                k += HIST_NT as u64;
            }
        }
        sync_threads();
        let mut i = tid as usize;
        while i < slots {
            let c = h.add(i).ld();
            if c != 0 {
                red_add_u32(hist.add(i), c);
            }
            i += HIST_NT as usize;
        }
    }
}

/// A look-back status word: a tag (`2 * pass + 1`: a tile's own count of a digit;
/// `2 * pass + 2`: the inclusive count through that tile) above a count. Words of earlier passes
/// carry smaller tags, so one zeroing serves a whole sort. `u64`: 32-bit counts (any `n`); `u32`:
/// 27-bit counts under a 5-bit tag (`n < 2^27` and at most 15 passes; half the status memory).
pub trait Status: Copy {
    /// Bits of the count (the tag is above them).
    const COUNT_BITS: u32;
    /// The word of `count` in pass `pass`, own or inclusive.
    fn word(pass: u32, inclusive: bool, count: u32) -> Self;
    /// The word's tag.
    fn tag(self) -> u32;
    /// The word's count.
    fn count(self) -> u32;
    /// A relaxed GPU-scope load.
    ///
    /// # Safety
    /// `p` is a valid, aligned global address.
    unsafe fn ld(p: *const Self) -> Self;
    /// A relaxed GPU-scope store.
    ///
    /// # Safety
    /// `p` is a valid, aligned global address.
    unsafe fn st(p: *mut Self, v: Self);
}

impl Status for u64 {
    const COUNT_BITS: u32 = 32;
    #[inline(always)]
    fn word(pass: u32, inclusive: bool, count: u32) -> Self {
        (((2 * pass + 1 + inclusive as u32) as u64) << 32) | count as u64
    }
    #[inline(always)]
    fn tag(self) -> u32 {
        (self >> 32) as u32
    }
    #[inline(always)]
    fn count(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    unsafe fn ld(p: *const Self) -> Self {
        // SAFETY: forwarded.
        unsafe { ld_relaxed_u64(p) }
    }
    #[inline(always)]
    unsafe fn st(p: *mut Self, v: Self) {
        // SAFETY: forwarded.
        unsafe { st_relaxed_u64(p, v) }
    }
}

impl Status for u32 {
    const COUNT_BITS: u32 = crate::STATUS32_COUNT_BITS;
    #[inline(always)]
    fn word(pass: u32, inclusive: bool, count: u32) -> Self {
        ((2 * pass + 1 + inclusive as u32) << Self::COUNT_BITS) | count
    }
    #[inline(always)]
    fn tag(self) -> u32 {
        self >> Self::COUNT_BITS
    }
    #[inline(always)]
    fn count(self) -> u32 {
        self & ((1 << Self::COUNT_BITS) - 1)
    }
    #[inline(always)]
    unsafe fn ld(p: *const Self) -> Self {
        // SAFETY: forwarded.
        unsafe { ld_relaxed_u32(p) }
    }
    #[inline(always)]
    unsafe fn st(p: *mut Self, v: Self) {
        // SAFETY: forwarded.
        unsafe { st_relaxed_u32(p, v) }
    }
}

/// Items whose ranking atomics are in flight together (at most 4: the broadcast loop lists 4).
const RANK_GROUP: usize = 4;

/// The look-back's backoff when no predecessor word is ready.
const LOOK_BACK_SLEEP_NS: u32 = 64;

/// Items of a tile each look-back step reads per digit.
const LOOK_BACK: usize = 4;

/// Loads one payload's items of this thread (warp-striped from `seg`, all in flight; items from
/// `left` on, past the end, stay uninitialized). Item `k` is `input[k * H + half]`: `H = 2`
/// reads one 8-byte half of 16-byte items.
///
/// # Safety
/// `input` holds `(seg + left) * H` words at least; `half < H`.
#[inline(always)]
unsafe fn load_items<V: GlobalWord, const IT: usize, const H: usize>(
    input: *const V,
    seg: u64,
    left: u32,
    lane: u32,
    half: usize,
) -> [MaybeUninit<V>; IT] {
    let mut vals = [MaybeUninit::uninit(); IT];
    let at = input.wrapping_add(seg as usize * H + half);
    each_item!(IT, i {
        let j = i as u32 * 32 + lane;
        if j < left {
            // SAFETY: (seg + j) * H + half < n * H.
            vals[i] = MaybeUninit::new(unsafe { ldg(at.add(j as usize * H)) });
        }
    });
    vals
}

/// Stages this thread's loaded items `vals` of one payload at their places `pos` in the tile's
/// digit order in `area`.
///
/// # Safety
/// `vals` from [`load_items`] with the same `left`; `pos` below the tile's items; `area` is
/// shared memory of a tile's items.
#[inline(always)]
unsafe fn stage_items<V: SmemWord, const IT: usize>(vals: &[MaybeUninit<V>; IT], left: u32, lane: u32, pos: &[u32; IT], area: Smem<V>) {
    each_item!(IT, i {
        if i as u32 * 32 + lane < left {
            // SAFETY: the item was loaded (it is before `left`); pos < the tile's items.
            unsafe { area.add(pos[i] as usize).st(vals[i].assume_init()) };
        }
    });
}

/// Writes this thread's staged slots `tid + j * NT` below `count` of `area` to
/// `output[at[j] * H + half]` (one half of 16-byte items when `H = 2`).
///
/// # Safety
/// `at[j] * H + half` is below `output`'s length for each slot below `count`; `area` holds the
/// staged tile.
#[inline(always)]
unsafe fn write_slots<V: SmemWord + GlobalWord, const IT: usize, const H: usize>(
    output: *mut V,
    at: &[u32; IT],
    tid: u32,
    count: u32,
    area: Smem<V>,
    half: usize,
) {
    each_item!(IT, j {
        let k = tid + j as u32 * NT;
        if k < count {
            // SAFETY: the caller's contract.
            unsafe { stg(output.add(at[j] as usize * H + half), area.add(k as usize).ld()) };
        }
    });
}

/// One stable pass by digit `(key >> shift) & (2^bits - 1)`, onesweep, in tiles of `NT * IT` keys
/// ([`NT`] threads of `IT` items, at most 16; each thread looks after one digit, two for 9-bit
/// digits):
/// each block takes the next tile from `counter`, ranks its keys among equal digits in input
/// order (digits matched by warp ballots, [`match_low_bits`]; each group's leader bumps its
/// warp's counter of the digit), publishes its digit counts in `status` and adds up the counts of
/// the tiles before it (decoupled look-back), stages the tile in digit order in `stage` and
/// writes it out in runs of equal digits, to the digit's start (the exclusive scan of `counts`,
/// this pass's digit counts over all keys) plus the tiles before it. Any of `keys_out`,
/// `first_in`/`first_out` (a `u32` payload) and `second_in`/`second_out` (items of `H` words of
/// `V`: `H = 1`, or 2 for 16-byte items moved as two 8-byte halves through the same staging) may
/// be null: that part is not moved. Past the end a tile is padded with keys of all ones (the
/// last digit): ranked last, they fill the slots past the tile's keys and are never written.
/// (Loading the payloads with the keys, in flight during the ranking, spilled registers and
/// was 12% slower on an H100.)
///
/// # Safety
/// `ceil(n / (NT * IT))` blocks of `NT` threads; inputs and outputs hold `n` items (`n * H` words of
/// `V` for the second payload; `H` is 1 or 2), no output overlaps an input; `counts` holds
/// `2^bits` words counting this pass's digits of the `n` keys; `status` holds
/// `2^bits * ceil(n / (NT * IT))` words of `S` holding no tag of `pass` or later, `counter` is 0;
/// `bits <= MAX_BITS`; a payload's input and output are both null or both valid; `stage` is
/// shared memory of [`crate::stage_bytes_for`]`(IT, size_of::<V>() * H)` bytes, 16-byte aligned;
/// `BITS` is 0 or `a.bits`; both payloads null when `KEYS_ONLY`.
#[inline(always)]
pub unsafe fn onesweep<V: SmemWord + GlobalWord, S: Status, const H: usize, const BITS: u32, const IT: usize, const KEYS_ONLY: bool>(
    a: &OnesweepArgs,
    stage: Smem<u8>,
) {
    const { assert!(IT <= MAX_VT && IT >= 8, "onesweep: the unrolled loops list 16 items; the counters need 8") };
    let nv = NT as usize * IT;
    let OnesweepArgs { keys_in, keys_out, first_out, counts, counter, n, shift, pass, .. } = *a;
    // Keys alone fixed at compile time drops the payloads' null tests (and their registers).
    let first_in = if KEYS_ONLY { core::ptr::null() } else { a.first_in };
    // A digit width fixed at compile time (`BITS > 0`, the caller's promise that `a.bits ==
    // BITS`) lets the compiler drop the ballot match's width tests (26 registers fewer at 16 keys
    // a thread).
    let bits = if BITS > 0 { BITS } else { a.bits };
    let second_in = if KEYS_ONLY { core::ptr::null() } else { a.second_in.cast::<V>() };
    let (second_out, status) = (a.second_out.cast::<V>(), a.status.cast::<S>());
    let (tid, lane) = (thread_idx_x(), lane_id());
    let warp = (tid / 32) as usize;
    let radix = 1u32 << bits;
    let r = radix as usize;
    // This thread's digits: d0 and, for 9-bit digits, d0 + 1.
    let dpt = if r > NT as usize { DPT } else { 1 };
    let d0 = tid as usize * dpt;
    let (start, base, tot, slot) = (RX_START::smem(), RX_BASE::smem(), RX_TOTALS::smem(), RX_TILE::smem());
    // The payload area (and the keys' after it, where needed) holds the per-warp digit counters
    // until the tile is staged; the keys come after it (the area takes the widest payload).
    let wh = stage.cast::<u32>();
    let pay_bytes = nv * core::mem::size_of::<V>().max(4);
    let skeys = stage.byte_add(pay_bytes).cast::<u32>();
    // SAFETY: shared indices stay below their arrays' lengths (digits < r <= RADIX, per-warp
    // counters < WARPS * r <= 2 * nv words of the stage, tile positions < nv, totals <
    // 2 * WARPS); global indices are checked against n; status indices < radix * tiles (the tile
    // comes from the counter, one per block).
    unsafe {
        if tid == 0 {
            slot.st(atomic_add_u32(counter, 1));
        }
        let mut i = tid as usize;
        while i < WARPS * r {
            wh.add(i).st(0);
            i += NT as usize;
        }
        // This pass's counts of this thread's digits over all keys.
        let mut total = [0u32; DPT];
        unroll!(u in [0, 1] {
            if u < dpt && d0 + u < r {
                total[u] = ldg_u32(counts.add(d0 + u));
            }
        });
        sync_threads();
        let t = slot.ld() as u64;
        let row = status.add((t * radix as u64) as usize);
        // Warp-striped: warp w holds positions seg + i * 32 + lane, in index order.
        let seg = t * nv as u64 + warp as u64 * 32 * IT as u64;
        // This warp's items from `left` on are past the end.
        let left = n.saturating_sub(seg).min(32 * IT as u64) as u32;
        let mut keys = [u32::MAX; IT];
        let mut ranks = [0u32; IT];
        // All loads first, so they are in flight together (the ranking below is a chain of
        // warp-synchronous steps).
        let kin = keys_in.wrapping_add(seg as usize);
        each_item!(IT, i {
            let j = i as u32 * 32 + lane;
            if j < left {
                keys[i] = ldg_u32(kin.add(j as usize));
            }
        });
        // Ranking, in groups of RANK_GROUP items: each item's ballot match and its group
        // leader's atomic, so that a group's atomics are in flight together (a warp's
        // shared-memory atomics run in instruction order, so earlier items rank first: stable);
        // then the broadcasts of their old counts.
        let mut old = [0u32; RANK_GROUP];
        let mut lead = [0u32; RANK_GROUP];
        let lt = lanemask_lt();
        each_item!(IT, i {
            let dg = digit(keys[i], shift, bits);
            let peers = match_low_bits(dg, bits);
            let rank = popc(peers & lt);
            let g = i % RANK_GROUP;
            old[g] = 0;
            if rank == 0 {
                old[g] = wh.add(warp * r + dg as usize).atomic_add(popc(peers));
            }
            lead[g] = leader(peers) | (rank << 8);
            if g == RANK_GROUP - 1 || i == IT - 1 {
                unroll!(j in [0, 1, 2, 3] {
                    if j <= g {
                        ranks[i - g + j] = shfl_idx_sync(FULL_MASK, old[j], lead[j] & 31) + (lead[j] >> 8);
                    }
                });
            }
        });
        sync_threads();
        // Each digit: exclusive offsets over the warps and the tile's count, published at once.
        let mut run = [0u32; DPT];
        unroll!(u in [0, 1] {
            let d = d0 + u;
            if u < dpt && d < r {
                let mut acc = 0u32;
                for w in 0..WARPS {
                    let c = wh.add(w * r + d).ld();
                    wh.add(w * r + d).st(acc);
                    acc += c;
                }
                run[u] = acc;
                S::st(row.add(d), S::word(pass, t == 0, acc));
            }
        });
        // Block-wide exclusive scans over the digits (in thread order) of the global counts and
        // of the tile's: warp scans of each thread's sums, then the warps' totals.
        let (total_sum, run_sum) = (total[0] + total[DPT - 1] * (dpt > 1) as u32, run[0] + run[DPT - 1] * (dpt > 1) as u32);
        let (total_inc, run_inc) = (inclusive_sum_u32(total_sum), inclusive_sum_u32(run_sum));
        if lane == 31 {
            tot.add(warp).st(total_inc);
            tot.add(WARPS + warp).st(run_inc);
        }
        sync_threads();
        // The warps before this one: lane w < warp holds warp w's totals, summed across the warp.
        let mine = (lane as usize) < warp;
        let (tw, rw) = if mine { (tot.add(lane as usize).ld(), tot.add(WARPS + lane as usize).ld()) } else { (0, 0) };
        let (total_pre, run_pre) = (warp_sum_u32(tw), warp_sum_u32(rw));
        // Each digit's start in the tile and over all keys (the second digit after the first).
        let (tile_start, global_start) = (run_pre + run_inc - run_sum, total_pre + total_inc - total_sum);
        let ts = [tile_start, tile_start + run[0]];
        let gs = [global_start, global_start + total[0]];
        unroll!(u in [0, 1] {
            if u < dpt && d0 + u < r {
                start.add(d0 + u).st(ts[u]);
            }
        });
        sync_threads();
        // Each item's place in the tile in digit order; then the keys staged there (pads too:
        // they land past the tile's keys), before the look-back, so that the keys' registers
        // are free during it.
        let mut pos = ranks;
        each_item!(IT, i {
            let dg = digit(keys[i], shift, bits) as usize;
            pos[i] += start.add(dg).ld() + wh.add(warp * r + dg).ld();
        });
        // Counters reaching into the keys' area (9-bit digits in small tiles) are read by every
        // thread before any key is staged.
        if WARPS * r * 4 > pay_bytes {
            sync_threads();
        }
        each_item!(IT, i {
            skeys.add(pos[i] as usize).st(keys[i]);
        });
        // Look back: the counts of each digit in the tiles before this one, from the nearest
        // inclusive count, LOOK_BACK tiles a step (independent loads in flight: a walk of one
        // tile a step was bound by the memory latency chain). Tiles come from the counter in
        // order, so every tile looked at is running or done and publishes (forward progress).
        // Each digit's global start less its tile start follows (a staged slot's place is one
        // add).
        unroll!(u in [0, 1] {
            let d = d0 + u;
            if u < dpt && d < r {
                let mut before = 0;
                if t > 0 {
                    before = look_back::<S>(status, t, radix, d, pass);
                    S::st(row.add(d), S::word(pass, true, before + run[u]));
                }
                base.add(d).st(gs[u].wrapping_add(before).wrapping_sub(ts[u]));
            }
        });
        // (Every thread has read its counters before this barrier: the payload area is free; the
        // bases are written.)
        sync_threads();
        // Keys out in runs of equal digits: slot k goes to its digit's base plus k. Each thread's
        // slots' places are kept for the payloads; the first payload's loads are in flight
        // meanwhile (on an H100 this and the next loads' placement made RadixTrans 4-8% faster).
        let count = (n - t * nv as u64).min(nv as u64) as u32;
        let firsts = if first_in.is_null() { [MaybeUninit::uninit(); IT] } else { load_items::<u32, IT, 1>(first_in, seg, left, lane, 0) };
        // Without a first payload the second one's loads go in flight here.
        let early = first_in.is_null() && !second_in.is_null();
        let mut seconds = if early { load_items::<V, IT, H>(second_in, seg, left, lane, 0) } else { [MaybeUninit::uninit(); IT] };
        // (Reading the staged key and its digit's base again for each payload instead, two
        // shared loads a slot, freed IT registers but was 2-10% slower at VT = 12 on an H100.)
        let mut at = [0u32; IT];
        each_item!(IT, j {
            let k = tid + j as u32 * NT;
            if k < count {
                let key = skeys.add(k as usize).ld();
                at[j] = base.add(digit(key, shift, bits) as usize).ld().wrapping_add(k);
                if !keys_out.is_null() {
                    stg(keys_out.add(at[j] as usize), key);
                }
            }
        });
        // Each payload staged through one shared area and written in runs; the second payload's
        // loads are in flight while the first is written.
        let (pay32, pay) = (stage.cast::<u32>(), stage.cast::<V>());
        if !first_in.is_null() {
            stage_items(&firsts, left, lane, &pos, pay32);
        }
        if !early && !second_in.is_null() {
            seconds = load_items::<V, IT, H>(second_in, seg, left, lane, 0);
        }
        if !first_in.is_null() {
            sync_threads();
            write_slots::<u32, IT, 1>(first_out, &at, tid, count, pay32, 0);
            sync_threads();
        }
        if !second_in.is_null() {
            stage_items(&seconds, left, lane, &pos, pay);
            sync_threads();
            write_slots::<V, IT, H>(second_out, &at, tid, count, pay, 0);
            // 16-byte items: the other half through the same area.
            if H == 2 {
                seconds = load_items::<V, IT, H>(second_in, seg, left, lane, 1);
                sync_threads();
                stage_items(&seconds, left, lane, &pos, pay);
                sync_threads();
                write_slots::<V, IT, H>(second_out, &at, tid, count, pay, 1);
            }
        }
    }
}

/// The count of digit `d` in the tiles before tile `t > 0` (decoupled look-back), from the
/// nearest inclusive count, [`LOOK_BACK`] tiles a step.
///
/// # Safety
/// `status` holds `radix * t` words at least; every tile below `t` runs or ran and publishes its
/// word of `d` for `pass`.
#[inline(always)]
unsafe fn look_back<S: Status>(status: *mut S, t: u64, radix: u32, d: usize, pass: u32) -> u32 {
    let (own, through) = (S::word(pass, false, 0).tag(), S::word(pass, true, 0).tag());
    let mut before = 0u32;
    // Tiles below `j` are still to add.
    let mut j = t;
    loop {
        let mut words = [S::word(0, false, 0); LOOK_BACK];
        unroll!(q in [0, 1, 2, 3] {
            if j > q as u64 {
                // SAFETY: the tile index j - 1 - q < t.
                words[q] = unsafe { S::ld(status.add(((j - 1 - q as u64) * radix as u64) as usize + d)) };
            }
        });
        // Add the ready words in order, up to the first inclusive one or the first not yet
        // published (tile 0's word is inclusive, so the walk ends there).
        let (mut used, mut done, mut stalled) = (0u64, false, false);
        unroll!(q in [0, 1, 2, 3] {
            if !done && !stalled {
                let tag = words[q].tag();
                if tag < own {
                    stalled = true;
                } else {
                    before += words[q].count();
                    used += 1;
                    done = tag == through;
                }
            }
        });
        if done {
            return before;
        }
        // A predecessor has not published yet: back off before re-reading, so that the
        // spinning warps leave the issue slots to the working ones.
        if stalled && used == 0 {
            nanosleep(LOOK_BACK_SLEEP_NS);
        }
        j -= used;
    }
}
