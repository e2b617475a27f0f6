//! Kernels of PTX module `transpose`.
use gpu_device::mem::ldg_u32;
use gpu_device::thread::{grid_size_1d, index_1d_u64};

use crate::{scatter_slot, sorted_ptr_range};

/// `perm[j] = j` for `j < nnz`.
///
/// # Safety
/// `perm` holds `nnz` words; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_iota(perm: *mut u32, nnz: u64) {
    let mut j = index_1d_u64();
    while j < nnz {
        // SAFETY: j < nnz.
        unsafe { *perm.add(j as usize) = j as u32 };
        j += grid_size_1d();
    }
}

/// The column pointer (`n + 1` words) from the `nnz` sorted column indices ([`sorted_ptr_range`]).
///
/// # Safety
/// `keys` holds `nnz` sorted words `< n`, `ptr` holds `n + 1`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_sorted_ptr(keys: *const u32, nnz: u64, n: u64, ptr: *mut u32) {
    let mut i = index_1d_u64();
    let last = nnz.max(1);
    while i < last {
        // SAFETY: sorted_ptr_range reads keys below nnz and returns ranges within 0..=n.
        unsafe {
            let (head, tail) = sorted_ptr_range(&|k| ldg_u32(keys.add(k as usize)), nnz, n, i);
            for c in head {
                *ptr.add(c as usize) = i as u32;
            }
            for c in tail {
                *ptr.add(c as usize) = nnz as u32;
            }
        }
        i += grid_size_1d();
    }
}

macro_rules! move_kernels {
    ($scatter:ident, $gather:ident, $t:ty) => {
        /// ScanTrans's scatter: nonzero `j` (row `rows[j]`, column `cols[j]`, partition
        /// `p = j / chunk`) lands at [`scatter_slot`]`(colptr[c], inter[p * n + c], intra[j])`
        /// of `out_rows` and `out_vals` (values are skipped when `vals` is null).
        ///
        /// # Safety
        /// `cols`, `rows`, `intra` (and `vals`, `out_rows`, `out_vals` when used) hold `nnz`
        /// items; `colptr` holds `n + 1`, `inter` `(ceil(nnz / chunk) + 1) * n`; the inputs are
        /// ScanTrans's, so every slot is `< nnz` and distinct. Any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $scatter(
            nnz: u64,
            n: u64,
            chunk: u64,
            cols: *const u32,
            rows: *const u32,
            vals: *const $t,
            colptr: *const u32,
            inter: *const u32,
            intra: *const u32,
            out_rows: *mut u32,
            out_vals: *mut $t,
        ) {
            let mut j = index_1d_u64();
            while j < nnz {
                // SAFETY: j < nnz; c < n; p * n + c is inside inter; the slot is < nnz.
                unsafe {
                    let c = ldg_u32(cols.add(j as usize)) as u64;
                    let p = j / chunk;
                    let at = scatter_slot(ldg_u32(colptr.add(c as usize)), ldg_u32(inter.add((p * n + c) as usize)), ldg_u32(intra.add(j as usize))) as usize;
                    *out_rows.add(at) = ldg_u32(rows.add(j as usize));
                    if !vals.is_null() {
                        *out_vals.add(at) = *vals.add(j as usize);
                    }
                }
                j += grid_size_1d();
            }
        }

        /// The gather after the sort: `out_rows[k] = rows[perm[k]]` and `out_vals[k] =
        /// vals[perm[k]]` (values skipped when `vals` is null).
        ///
        /// # Safety
        /// `perm`, `rows`, `out_rows` (and `vals`, `out_vals` when used) hold `nnz` items;
        /// `perm` is a permutation of `0..nnz`. Any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $gather(nnz: u64, perm: *const u32, rows: *const u32, vals: *const $t, out_rows: *mut u32, out_vals: *mut $t) {
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: k < nnz and perm[k] < nnz.
                unsafe {
                    let j = ldg_u32(perm.add(k as usize)) as usize;
                    *out_rows.add(k as usize) = ldg_u32(rows.add(j));
                    if !vals.is_null() {
                        *out_vals.add(k as usize) = *vals.add(j);
                    }
                }
                k += grid_size_1d();
            }
        }
    };
}

move_kernels!(transpose_scatter_v4, transpose_gather_v4, u32);
move_kernels!(transpose_scatter_v8, transpose_gather_v8, u64);

// ------------------------------------------------------------------------------- RadixTrans

use gpu_device::atomic::red_add_u32;
use gpu_device::intrinsics::popc;
use gpu_device::static_shared;
use gpu_device::thread::{block_idx_x, sync_threads, thread_idx_x};
use gpu_device::warp::{lane_id, shfl_up_sync, sync_warp, FULL_MASK};
use histogram_kernels::warp::match_rank;

use crate::{radix_digit, RADIX_ITEMS, RADIX_NT, RADIX_TILE};

const WARPS: usize = (RADIX_NT / 32) as usize;

/// Repeats `$body` with `$i` bound to each listed index (the per-thread item loops, unrolled so
/// their arrays stay in registers: LLVM keeps loops with warp intrinsics rolled).
macro_rules! unroll {
    ($i:ident in [$($n:literal),*] $body:block) => {
        $({
            #[allow(non_upper_case_globals)]
            const $i: usize = $n;
            $body
        })*
    };
}
const RADIX: usize = 1 << crate::RADIX_MAX_BITS;
const _: () = assert!(RADIX_ITEMS == 8, "the unrolled item loops list 8 indices");

static_shared!(RX_HIST: [u32; RADIX]);
// Per-warp digit counts: at most 32 * RADIX_ITEMS = 256 per warp, so u16.
static_shared!(RX_WARP: [u16; WARPS * RADIX]);
static_shared!(RX_START: [u32; RADIX]);
static_shared!(RX_BASE: [u32; RADIX]);
static_shared!(RX_KEYS: [u32; RADIX_TILE as usize]);
static_shared!(RX_ROWS: [u32; RADIX_TILE as usize]);
static_shared!(RX_VALS4: [u32; RADIX_TILE as usize]);
static_shared!(RX_VALS8: [u64; RADIX_TILE as usize]);

/// Digit counts of tile `blockIdx.x`: `counts[d * tiles + t]` for `d < 2^bits`.
///
/// # Safety
/// `tiles = ceil(n / RADIX_TILE)` blocks of `RADIX_NT` threads; `keys` holds `n` words;
/// `counts` holds `2^bits * tiles` words; `bits <= RADIX_MAX_BITS`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_radix_upsweep(keys: *const u32, n: u64, shift: u32, bits: u32, tiles: u64, counts: *mut u32) {
    let (t, tid) = (block_idx_x() as u64, thread_idx_x());
    let radix = 1u32 << bits;
    let hist = RX_HIST::ptr();
    // SAFETY: shared indices < radix <= RADIX; key indices < n; count indices < radix * tiles.
    unsafe {
        let mut d = tid;
        while d < radix {
            *hist.add(d as usize) = 0;
            d += RADIX_NT;
        }
        sync_threads();
        let base = t * RADIX_TILE as u64;
        for i in 0..RADIX_ITEMS as u64 {
            let k = base + i * RADIX_NT as u64 + tid as u64;
            // Plain shared atomics: warp-aggregating them (histogram_kernels::warp) measured
            // slower here, the digits of a warp being mostly distinct.
            if k < n {
                red_add_u32(hist.add(radix_digit(ldg_u32(keys.add(k as usize)), shift, bits) as usize), 1);
            }
        }
        sync_threads();
        let mut d = tid;
        while d < radix {
            *counts.add((d as u64 * tiles + t) as usize) = *hist.add(d as usize);
            d += RADIX_NT;
        }
    }
}

/// One stable pass by digit: tile `blockIdx.x` of `(keys_in, rows_in, vals_in)` goes to
/// `offsets[d * tiles + t]` (the exclusive scan of the upsweep's counts) plus its rank among the
/// tile's keys of digit `d`. `keys_out` and `vals_in`/`vals_out` may be null.
///
/// # Safety
/// `tiles` blocks of `RADIX_NT` threads; inputs and outputs hold `n` items, `offsets`
/// `2^bits * tiles` words scanned from the same keys' upsweep; `bits <= RADIX_MAX_BITS`;
/// `svals` is a shared array of `RADIX_TILE` values.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn radix_downsweep<V: Copy>(keys_in: *const u32, rows_in: *const u32, vals_in: *const V, n: u64, shift: u32, bits: u32, tiles: u64, offsets: *const u32, keys_out: *mut u32, rows_out: *mut u32, vals_out: *mut V, svals: *mut V) {
    let (t, tid, lane) = (block_idx_x() as u64, thread_idx_x(), lane_id());
    let warp = (tid / 32) as usize;
    let radix = 1u32 << bits;
    let (wh, start, base) = (RX_WARP::ptr(), RX_START::ptr(), RX_BASE::ptr());
    let (skeys, srows) = (RX_KEYS::ptr(), RX_ROWS::ptr());
    // SAFETY: shared indices stay below their arrays' lengths (digits < radix <= RADIX, tile
    // positions < RADIX_TILE); global indices are checked against n.
    unsafe {
        let mut i = tid as usize;
        while i < WARPS * RADIX {
            *wh.add(i) = 0;
            i += RADIX_NT as usize;
        }
        let mut d = tid;
        while d < radix {
            *base.add(d as usize) = ldg_u32(offsets.add((d as u64 * tiles + t) as usize));
            d += RADIX_NT;
        }
        sync_threads();
        // Warp-striped: warp w holds positions seg + i * 32 + lane, in index order.
        let seg = t * RADIX_TILE as u64 + warp as u64 * 32 * RADIX_ITEMS as u64;
        let mut keys = [0u32; RADIX_ITEMS as usize];
        let mut ranks = [0u32; RADIX_ITEMS as usize];
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
            let d = if valid { radix_digit(key, shift, bits) } else { RADIX as u32 + lane };
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
            d += RADIX_NT as usize;
        }
        sync_threads();
        // Exclusive scan of the tile's digit counts: one warp, RADIX / 32 digits a lane, one
        // barrier. (gpu-scan's Blelloch block scan, with a barrier per level, made the whole
        // pass 15% slower.)
        if warp == 0 {
            let first = lane as usize * (RADIX / 32);
            let last = first + RADIX / 32;
            let mut sum = 0u32;
            for d in first..last {
                sum += *start.add(d);
            }
            let mut inc = sum;
            let mut off = 1;
            while off < 32 {
                let y = shfl_up_sync(FULL_MASK, inc, off);
                if lane >= off {
                    inc += y;
                }
                off *= 2;
            }
            let mut run = inc - sum;
            for d in first..last {
                let c = *start.add(d);
                *start.add(d) = run;
                run += c;
            }
        }
        sync_threads();
        // Stage the tile in digit order.
        unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
            let k = seg + (i as u64) * 32 + lane as u64;
            if k < n {
                let d = radix_digit(keys[i], shift, bits) as usize;
                let pos = (*start.add(d) + *wh.add(warp * RADIX + d) as u32 + ranks[i]) as usize;
                *skeys.add(pos) = keys[i];
                *srows.add(pos) = ldg_u32(rows_in.add(k as usize));
                if !vals_in.is_null() {
                    *svals.add(pos) = *vals_in.add(k as usize);
                }
            }
        });
        sync_threads();
        // Write out in runs of equal digits.
        let count = (n - t * RADIX_TILE as u64).min(RADIX_TILE as u64) as u32;
        let mut k = tid;
        while k < count {
            let key = *skeys.add(k as usize);
            let d = radix_digit(key, shift, bits) as usize;
            let pos = (*base.add(d) + (k - *start.add(d))) as usize;
            if !keys_out.is_null() {
                *keys_out.add(pos) = key;
            }
            *rows_out.add(pos) = *srows.add(k as usize);
            if !vals_out.is_null() {
                *vals_out.add(pos) = *svals.add(k as usize);
            }
            k += RADIX_NT;
        }
    }
}

macro_rules! radix_kernels {
    ($name:ident, $t:ty, $stage:ident) => {
        /// [`radix_downsweep`] for values of this size.
        ///
        /// # Safety
        /// As [`radix_downsweep`].
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(keys_in: *const u32, rows_in: *const u32, vals_in: *const $t, n: u64, shift: u32, bits: u32, tiles: u64, offsets: *const u32, keys_out: *mut u32, rows_out: *mut u32, vals_out: *mut $t) {
            // SAFETY: the caller's contract.
            unsafe { radix_downsweep(keys_in, rows_in, vals_in, n, shift, bits, tiles, offsets, keys_out, rows_out, vals_out, $stage::ptr()) }
        }
    };
}

radix_kernels!(transpose_radix_downsweep_v4, u32, RX_VALS4);
radix_kernels!(transpose_radix_downsweep_v8, u64, RX_VALS8);
