//! Kernels of PTX module `transpose`.
use gpu_device::mem::{ld_global, ldg, ldg_u32, ldg_u32x4, stg};
use gpu_device::thread::{grid_size_1d, index_1d_u64};
use gpu_device::{atomic, warp};

use crate::index64::{chunk_ptr, chunk_rows, entry_hashes, gen_col, gen_ptr};
use crate::{
    scatter_slot, sorted_ptr_range, AccumulateArgs, ChunkPtrArgs, ChunkRowsArgs, ColPtrArgs, DistGatherArgs, FingerprintArgs, GatherArgs,
    GenerateArgs, IotaArgs, PermuteArgs, PlaceArgs, SamplePtrArgs, ScatterArgs, SumPtrArgs, SymArgs, SymFlagArgs,
};

/// `perm[j] = j` for `j < nnz`.
///
/// # Safety
/// `perm` holds `nnz` words; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_iota(a: IotaArgs) {
    let mut j = index_1d_u64();
    while j < a.nnz {
        // SAFETY: j < nnz.
        unsafe { stg(a.perm.add(j as usize), j as u32) };
        j += grid_size_1d();
    }
}

/// The column pointer (`n + 1` words) from the `nnz` sorted column indices ([`sorted_ptr_range`]).
/// Each thread takes 4 consecutive keys a step with one 16-byte load (and the key before them),
/// so that a warp has 512 bytes in flight: one key a thread a step was bound by the load
/// latency at about 1 TB/s on an H100.
///
/// # Safety
/// `keys` holds `nnz` sorted words `< n`, `ptr` holds `n + 1`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_sorted_ptr(a: ColPtrArgs) {
    // SAFETY: the caller's contract.
    unsafe { sorted_ptr(a.keys, a.nnz, a.n, a.ptr) }
}

/// `Auto`'s column pointer after SymTrans's attempt and the sort it guards: from the sorted
/// keys ([`transpose_sorted_ptr`]) when `verdict[0]` is not 0 (the pattern was not symmetric:
/// the sort ran), else a copy of the input's pointer `in_ptr` (SymTrans's answer).
///
/// # Safety
/// `verdict` one word; `keys` holds `nnz` words, `in_ptr` and `ptr` `n + 1`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_auto_ptr(a: ColPtrArgs) {
    let ColPtrArgs { keys, verdict, in_ptr, ptr, nnz, n } = a;
    // SAFETY: the caller's contract; the copy's indices are <= n.
    unsafe {
        if ldg_u32(verdict) != 0 {
            sorted_ptr(keys, nnz, n, ptr);
        } else {
            let mut k = index_1d_u64();
            while k <= n {
                stg(ptr.add(k as usize), ldg_u32(in_ptr.add(k as usize)));
                k += grid_size_1d();
            }
        }
    }
}

/// [`transpose_sorted_ptr`]'s body.
///
/// # Safety
/// As [`transpose_sorted_ptr`].
#[inline(always)]
unsafe fn sorted_ptr(keys: *const u32, nnz: u64, n: u64, ptr: *mut u32) {
    let quads = nnz.div_ceil(4).max(1);
    let aligned = (keys as usize) % 16 == 0;
    let mut q = index_1d_u64();
    while q < quads {
        let i0 = 4 * q;
        // w[0] = keys[i0 - 1], w[1 + j] = keys[i0 + j] (those below nnz).
        let mut w = [0u32; 5];
        // SAFETY: every index read is below nnz; sorted_ptr_range returns ranges within
        // 0..=n and reads keys i - 1 (for i > 0) and i only, that is w[0..=4].
        unsafe {
            if i0 > 0 && i0 <= nnz {
                w[0] = ldg_u32(keys.add(i0 as usize - 1));
            }
            if aligned && i0 + 4 <= nnz {
                let [a, b, c, d] = ldg_u32x4(keys.add(i0 as usize));
                w[1..].copy_from_slice(&[a, b, c, d]);
            } else {
                for j in 0..4 {
                    if i0 + j < nnz {
                        w[1 + j as usize] = ldg_u32(keys.add((i0 + j) as usize));
                    }
                }
            }
            for j in 0..4u64 {
                let i = i0 + j;
                if i < nnz.max(1) {
                    let (head, tail) = sorted_ptr_range(&|k| w[(k + 1 - i0) as usize], nnz, n, i);
                    for c in head {
                        stg(ptr.add(c as usize), i as u32);
                    }
                    for c in tail {
                        stg(ptr.add(c as usize), nnz as u32);
                    }
                }
            }
        }
        q += grid_size_1d();
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
        pub unsafe extern "ptx-kernel" fn $scatter(a: ScatterArgs<$t>) {
            let ScatterArgs { cols, rows, vals, colptr, inter, intra, out_rows, out_vals, nnz, n, chunk } = a;
            let mut j = index_1d_u64();
            while j < nnz {
                // SAFETY: j < nnz; c < n; p * n + c is inside inter; the slot is < nnz.
                unsafe {
                    let c = ldg_u32(cols.add(j as usize)) as u64;
                    let p = j / chunk;
                    let at = scatter_slot(ldg_u32(colptr.add(c as usize)), ldg_u32(inter.add((p * n + c) as usize)), ldg_u32(intra.add(j as usize)))
                        as usize;
                    stg(out_rows.add(at), ldg_u32(rows.add(j as usize)));
                    if !vals.is_null() {
                        stg(out_vals.add(at), ld_global(vals.add(j as usize)));
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
        pub unsafe extern "ptx-kernel" fn $gather(a: GatherArgs<$t>) {
            let GatherArgs { perm, rows, vals, out_rows, out_vals, nnz } = a;
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: k < nnz and perm[k] < nnz.
                unsafe {
                    let j = ldg_u32(perm.add(k as usize)) as usize;
                    stg(out_rows.add(k as usize), ldg_u32(rows.add(j)));
                    if !vals.is_null() {
                        stg(out_vals.add(k as usize), ld_global(vals.add(j)));
                    }
                }
                k += grid_size_1d();
            }
        }
    };
}

macro_rules! symmetric_kernel {
    ($name:ident, $t:ty) => {
        /// SymTrans for an `n × n` matrix: `out_ptr = ptr` (unless null), `out_idx = idx`, and value `k` of
        /// nonzero `(rows[k], idx[k])` to its mirror's place ([`symmetric_slot`]; values
        /// skipped when `vals` is null). A nonzero without a mirror, or a column not above the
        /// one before it in its row, makes every copy of the flag `bad` nonzero (the outputs are
        /// then not a transpose), and every warp stops once it sees its copy so.
        ///
        /// # Safety
        /// A pointer of `n + 1 >= 2` words and `nnz` column indices (a malformed structure only
        /// gives a meaningless answer: every row range searched is clamped into `0..nnz`, every
        /// column to `n - 1`); `rows` holds `nnz` words; `out_ptr` (unless null) holds `n + 1`
        /// words, `out_idx` (and `out_vals`, `vals` when used) `nnz`; `bad` [`SYM_FLAG_WORDS`]
        /// words, zeroed. Any 1-D grid of whole warps.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(a: SymArgs<$t>) {
            let SymArgs { ptr, idx, rows, vals, out_ptr, out_idx, out_vals, bad, n, nnz } = a;
            let end = nnz.max(n + 1);
            let lane = warp::lane_id() as usize;
            // Warps poll different copies of the flag (one word polled by every warp cost 77 µs,
            // its reads taking turns at one L2 slice).
            let copy = ((index_1d_u64() / 32) % SYM_FLAG_COPIES as u64) as usize * SYM_FLAG_STRIDE;
            let mut k = index_1d_u64();
            // Warp-uniform loop (the vote below): the warp's first lane's k decides.
            while warp::shfl_idx_sync(warp::FULL_MASK, k, 0) < end {
                // SAFETY: copy is below SYM_FLAG_WORDS. Lane 0's reading decides for the warp.
                if warp::shfl_idx_sync(warp::FULL_MASK, unsafe { atomic::ld_relaxed_u32(bad.add(copy)) }, 0) != 0 {
                    // Another warp found the pattern not symmetric: the outputs are abandoned.
                    return;
                }
                let mut fail = false;
                // SAFETY: k < nnz for the nonzeros, k <= n for the pointer; the search stays
                // inside row c's range of a valid pointer (c < n); a found slot is below nnz.
                unsafe {
                    if k <= n && !out_ptr.is_null() {
                        stg(out_ptr.add(k as usize), ldg_u32(ptr.add(k as usize)));
                    }
                    if k < nnz {
                        let (r, c) = (ldg_u32(rows.add(k as usize)), ldg_u32(idx.add(k as usize)));
                        stg(out_idx.add(k as usize), c);
                        // Strictly sorted rows: the next nonzero of the same row has a larger
                        // column.
                        let unsorted = k + 1 < nnz && ldg_u32(rows.add(k as usize + 1)) == r && ldg_u32(idx.add(k as usize + 1)) <= c;
                        let (b, e) = mirror_row(ptr, n, nnz, c);
                        match symmetric_slot(&|j| ldg_u32(idx.add(j as usize)), b, e, r) {
                            Some(p) if !unsorted => {
                                if !vals.is_null() {
                                    stg(out_vals.add(p as usize), ldg(vals.add(k as usize)));
                                }
                            }
                            _ => fail = true,
                        }
                    }
                }
                // A warp that failed raises every copy, a lane each, by an L2 add (plain stores
                // of every thread to one word took 1.3 ms on 10M nonzeros).
                if warp::ballot_sync(warp::FULL_MASK, fail) != 0 && lane < SYM_FLAG_COPIES {
                    // SAFETY: lane < SYM_FLAG_COPIES: a word of bad.
                    unsafe { atomic::red_add_u32(bad.add(lane * SYM_FLAG_STRIDE), 1) };
                }
                k += grid_size_1d();
            }
        }
    };
}

/// SymTrans's probe of an `n × n` matrix ([`sym_probe_row`]): warp `s` takes probed row `r`, each
/// lane one of its first [`SYM_PROBE_ENTRIES`] nonzeros `(r, c)`, and looks for the mirror
/// `(c, r)` in row `c` ([`symmetric_slot`]); a warp that misses one raises copy `s` mod
/// [`SYM_FLAG_COPIES`] of the flag `bad` (the full pass's words: a probe that passes leaves them
/// zero for it; [`crate::sym_flag_raised`] reads them).
///
/// # Safety
/// A pointer of `n + 1 >= 2` words and `nnz` column indices (any contents: ranges and columns
/// are clamped as in the full pass); `bad` holds [`SYM_FLAG_WORDS`] words. Any 1-D grid of
/// whole warps.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_symmetric_probe(a: SymFlagArgs) {
    let SymFlagArgs { ptr, idx, bad, n, nnz, .. } = a;
    let lane = warp::lane_id();
    let rows = sym_probe_rows(n);
    // Warp-uniform: the lanes of a warp share s (blocks are whole warps).
    let mut s = index_1d_u64() / 32;
    while s < rows {
        let r = sym_probe_row(s, n);
        let mut fail = false;
        // This lane's nonzero's mirror region (u32::MAX: no nonzero).
        let mut region = u32::MAX;
        // SAFETY: r < n, so ptr[r + 1] is in the pointer; j < e <= nnz; c < n (a valid CSR), and
        // the search stays inside row c's range.
        unsafe {
            let (b, e) = mirror_row(ptr, n, nnz, r as u32);
            let j = b + lane as u64;
            if j < e {
                let c = ldg_u32(idx.add(j as usize));
                region = c >> SYM_REGION_BITS;
                let (cb, ce) = mirror_row(ptr, n, nnz, c);
                fail = symmetric_slot(&|k| ldg_u32(idx.add(k as usize)), cb, ce, r as u32).is_none();
            }
        }
        // How scattered the mirrors are: distinct regions of the probed nonzeros' columns.
        let valid = warp::ballot_sync(warp::FULL_MASK, region != u32::MAX);
        let peers = warp::match_any_sync(warp::FULL_MASK, region);
        let leads = warp::ballot_sync(warp::FULL_MASK, region != u32::MAX && warp::leader(peers) == lane);
        if lane == 0 && valid != 0 {
            // SAFETY: words of the flag area below SYM_FLAG_WORDS.
            unsafe {
                atomic::red_add_u32(bad.add(SYM_REGIONS_WORD), leads.count_ones());
                atomic::red_add_u32(bad.add(SYM_PROBED_WORD), valid.count_ones());
            }
        }
        // One store a failing warp, to copy s % SYM_FLAG_COPIES: every warp adding to every
        // copy, as the full pass does, took 23 µs on an H100 (each copy's adds take turns).
        if warp::ballot_sync(warp::FULL_MASK, fail) != 0 && lane == 0 {
            // SAFETY: (s % SYM_FLAG_COPIES) * SYM_FLAG_STRIDE < SYM_FLAG_WORDS.
            unsafe { atomic::st_relaxed_u32(bad.add((s % SYM_FLAG_COPIES as u64) as usize * SYM_FLAG_STRIDE), 1) };
        }
        s += grid_size_1d() / 32;
    }
}

/// Row `c`'s range `ptr[c]..ptr[c + 1]` clamped into `0..nnz` (and `c` to `n - 1`), so that a
/// search stays inside the indices whatever the structure holds (a valid one is unchanged).
///
/// # Safety
/// `ptr` holds `n + 1 >= 2` words.
#[inline(always)]
unsafe fn mirror_row(ptr: *const u32, n: u64, nnz: u64, c: u32) -> (u64, u64) {
    let c = (c as u64).min(n - 1) as usize;
    // SAFETY: c + 1 <= n.
    let (b, e) = unsafe { (ldg_u32(ptr.add(c)) as u64, ldg_u32(ptr.add(c + 1)) as u64) };
    let e = e.min(nnz);
    (b.min(e), e)
}

/// `Auto`'s gate between SymTrans's probe and its pass: raises every copy of the flag `bad` when
/// the probe found the mirrors scattered ([`sym_scattered`] of its counts), so that the pass
/// returns at once and RadixTrans runs.
///
/// # Safety
/// `bad` holds [`SYM_FLAG_WORDS`] words, the probe's. One warp (more threads do nothing more).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_sym_gate(a: SymFlagArgs) {
    let bad = a.bad;
    let lane = warp::lane_id() as usize;
    if index_1d_u64() >= 32 {
        return;
    }
    // SAFETY: words below SYM_FLAG_WORDS.
    unsafe {
        let (regions, probed) = (atomic::ld_relaxed_u32(bad.add(SYM_REGIONS_WORD)), atomic::ld_relaxed_u32(bad.add(SYM_PROBED_WORD)));
        if sym_scattered(regions, probed) && lane < SYM_FLAG_COPIES {
            atomic::st_relaxed_u32(bad.add(lane * SYM_FLAG_STRIDE), 1);
        }
    }
}

/// SymTrans's verdict as one word: `verdict[0]` = 1 when any copy of the flag `bad` is raised
/// (the pattern is not symmetric: RadixTrans runs), else 0 ([`crate::sym_flag_raised`]).
///
/// # Safety
/// `bad` holds [`SYM_FLAG_WORDS`] words, `verdict` one. One warp (more threads do nothing more).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_sym_verdict(a: SymFlagArgs) {
    let (bad, verdict) = (a.bad as *const u32, a.verdict);
    let lane = warp::lane_id() as usize;
    if index_1d_u64() >= 32 {
        return;
    }
    // SAFETY: lane * SYM_FLAG_STRIDE < SYM_FLAG_WORDS for lane < SYM_FLAG_COPIES.
    let raised = lane < SYM_FLAG_COPIES && unsafe { atomic::ld_relaxed_u32(bad.add(lane * SYM_FLAG_STRIDE)) } != 0;
    let any = warp::ballot_sync(warp::FULL_MASK, raised) != 0;
    if lane == 0 {
        // SAFETY: one word.
        unsafe { stg(verdict, any as u32) };
    }
}

// One nonzero a thread a turn: 2 and 4, their searches interleaved, were slower (32 and 45
// registers against 22; H100, f32, the whole SymTrans call, two runs each): the 3D Laplacian
// 0.188–0.190 and 0.198–0.202 ms against 0.176; the failed attempt before RadixTrans on uniform
// 100k² 0.602–0.608 and 0.604–0.606 against 0.582–0.584
// (benches/results/2026-11-24-h100-symtrans-variants.txt).
use crate::{
    sym_probe_row, sym_probe_rows, sym_scattered, symmetric_slot, SYM_FLAG_COPIES, SYM_FLAG_STRIDE, SYM_PROBED_WORD, SYM_REGIONS_WORD,
    SYM_REGION_BITS,
};

symmetric_kernel!(transpose_symmetric_v4, u32);
symmetric_kernel!(transpose_symmetric_v8, u64);

move_kernels!(transpose_scatter_v4, transpose_gather_v4, u32);
move_kernels!(transpose_scatter_v8, transpose_gather_v8, u64);

/// Sixteen bytes moved as one (a `Complex<f64>`, a `u128`): `ld`/`st.v2.u64`.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Bytes16([u64; 2]);

/// A value of a width the sorts do not carry, copied from `src` to `dst` with one load and one
/// store (a plain `*dst = *src` of [`Bytes16`] compiled to two 8-byte load-store pairs, the
/// second load waiting for the first store: two dependent trips to memory).
trait Move: Copy {
    /// `*dst = *src`: one load, one store.
    ///
    /// # Safety
    /// Valid, aligned global addresses; `src` not written during the kernel.
    #[inline(always)]
    unsafe fn copy(src: *const Self, dst: *mut Self) {
        // SAFETY: forwarded.
        unsafe { Self::store(dst, Self::load(src)) }
    }

    /// `*src`, through the read-only path.
    ///
    /// # Safety
    /// A valid, aligned global address not written during the kernel.
    unsafe fn load(src: *const Self) -> Self;

    /// `*dst = v`.
    ///
    /// # Safety
    /// A valid, aligned global address.
    unsafe fn store(dst: *mut Self, v: Self);

    /// A value to fill registers with before they are loaded.
    fn zero() -> Self;
}

impl Move for Bytes16 {
    #[inline(always)]
    unsafe fn load(src: *const Self) -> Self {
        // SAFETY: forwarded; Bytes16 is 16-byte aligned.
        Bytes16(unsafe { gpu_device::mem::ldg_u64x2(src.cast()) })
    }

    #[inline(always)]
    unsafe fn store(dst: *mut Self, v: Self) {
        // SAFETY: forwarded; Bytes16 is 16-byte aligned.
        unsafe { gpu_device::mem::stg_u64x2(dst.cast(), v.0) }
    }

    #[inline(always)]
    fn zero() -> Self {
        Bytes16([0; 2])
    }
}

macro_rules! plain_move {
    ($($t:ty),*) => {$(
        impl Move for $t {
            #[inline(always)]
            unsafe fn load(src: *const Self) -> Self {
                // SAFETY: forwarded.
                unsafe { ldg(src) }
            }

            #[inline(always)]
            unsafe fn store(dst: *mut Self, v: Self) {
                // SAFETY: forwarded.
                unsafe { stg(dst, v) }
            }

            #[inline(always)]
            fn zero() -> Self {
                0
            }
        }
    )*};
}
plain_move!(u8, u16, u32, u64);

macro_rules! permute_kernel {
    ($name:ident, $t:ty, $what:literal) => {
        #[doc = concat!("`out[j] = vals[perm[j]]` for `j < nnz`, ", $what, ": values of a width the sorts do not carry, moved by the permutation that the algorithm carried instead (each nonzero's position).")]
        ///
        /// # Safety
        /// `perm` holds `nnz` indices below `nnz`; `vals` and `out` hold `nnz` items and do not
        /// overlap; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(a: PermuteArgs<$t>) {
            let PermuteArgs { perm, vals, out, nnz } = a;
            let mut j = index_1d_u64();
            while j < nnz {
                // SAFETY: j < nnz and perm[j] < nnz.
                unsafe { Move::copy(vals.add(ldg_u32(perm.add(j as usize)) as usize), out.add(j as usize)) };
                j += grid_size_1d();
            }
        }
    };
}

permute_kernel!(transpose_permute_v1, u8, "1-byte values");
permute_kernel!(transpose_permute_v2, u16, "2-byte values");
permute_kernel!(transpose_permute_v16, Bytes16, "16-byte values");

/// The rows of each chunk of the 64-bit-pointer transposer: `rows[2c], rows[2c + 1]` =
/// [`chunk_rows`] of chunk `c` (nonzeros `c·chunk .. min((c + 1)·chunk, nnz)`), for
/// `c < chunks`.
///
/// # Safety
/// `ptr` holds `m + 1` nondecreasing words from 0 to `nnz`; `chunks = ceil(nnz / chunk)`,
/// `nnz > 0`; `rows` holds `2·chunks`. Any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_index64_chunk_rows(a: ChunkRowsArgs) {
    let ChunkRowsArgs { ptr, rows, m, nnz, chunk, chunks } = a;
    let mut c = index_1d_u64();
    while c < chunks {
        let k0 = c * chunk;
        let k1 = if nnz - k0 < chunk { nnz } else { k0 + chunk };
        // SAFETY: chunk_rows reads entries below m + 1; 2c + 1 < 2·chunks.
        unsafe {
            let (r0, r1) = chunk_rows(&|i| ldg(ptr.add(i as usize)), m, k0, k1);
            stg(rows.add(2 * c as usize), r0);
            stg(rows.add(2 * c as usize + 1), r1);
        }
        c += grid_size_1d();
    }
}

macro_rules! chunk_ptr_kernel {
    ($name:ident, $w:ty) => {
        /// Part of a pointer as a 32-bit one from 0: `out[i] =` [`chunk_ptr`]`(ptr[r0 + i], k0,
        /// k1)` for `i < len` (a 64-bit chunk's row pointer; a rank's part of its 32-bit local
        /// transpose for another rank's columns).
        ///
        /// # Safety
        /// `ptr` holds at least `r0 + len` words, `out` `len`; `k0 <= k1`, `k1 - k0 < 2^32`. Any
        /// 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(a: ChunkPtrArgs<$w>) {
            let ChunkPtrArgs { ptr, out, r0, len, k0, k1 } = a;
            let mut i = index_1d_u64();
            while i < len {
                // SAFETY: r0 + i < r0 + len, i < len.
                unsafe { stg(out.add(i as usize), chunk_ptr(u64::from(ldg(ptr.add((r0 + i) as usize))), k0, k1)) };
                i += grid_size_1d();
            }
        }
    };
}

chunk_ptr_kernel!(transpose_index64_chunk_ptr, u64);
chunk_ptr_kernel!(transpose_dist_rel_ptr, u32);

/// `acc[j] += part[j]` for `j < len` (the 64-bit column pointer as the sum of the chunks'
/// 32-bit ones).
///
/// # Safety
/// `acc` and `part` hold `len` words. Any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_index64_add_ptr(a: AccumulateArgs) {
    let AccumulateArgs { acc, part, len } = a;
    let mut j = index_1d_u64();
    while j < len {
        // SAFETY: j < len.
        unsafe {
            let w = acc.add(j as usize);
            stg(w, ld_global(w) + ldg_u32(part.add(j as usize)) as u64)
        };
        j += grid_size_1d();
    }
}

/// `cursor[j] += cp[j + 1] - cp[j]` for `j < n`: past a chunk's entries of each column.
///
/// # Safety
/// `cursor` holds `n` words, `cp` `n + 1` nondecreasing. Any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_index64_advance(a: AccumulateArgs) {
    let AccumulateArgs { acc: cursor, part: cp, len: n } = a;
    let mut j = index_1d_u64();
    while j < n {
        // SAFETY: j < n, j + 1 <= n.
        unsafe {
            let w = cursor.add(j as usize);
            stg(w, ld_global(w) + (ldg_u32(cp.add(j as usize + 1)) - ldg_u32(cp.add(j as usize))) as u64)
        };
        j += grid_size_1d();
    }
}

macro_rules! place_kernel {
    ($name:ident, $t:ty) => {
        /// A chunk's transpose put in place: entry `k < nnz` of the chunk's CSC (column
        /// `col[k]`, local row `rows[k]`) goes to `cursor[col[k]] + (k - cp[col[k]])` of the
        /// output, its row offset by `r0`; values move likewise unless `vals` is null.
        ///
        /// # Safety
        /// `col`, `rows` (and `vals` unless null) hold `nnz` items; `col[k] < n`, `cp` holds
        /// `n + 1` words with `cp[col[k]] <= k`; every destination is below the length of
        /// `out_rows` (and `out_vals`), and distinct. Any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(a: PlaceArgs<$t>) {
            let PlaceArgs { col, cp, cursor, rows, vals, out_rows, out_vals, nnz, r0 } = a;
            let mut k = index_1d_u64();
            while k < nnz {
                // SAFETY: the contract: k < nnz, col[k] < n, each destination in bounds.
                unsafe {
                    let j = ldg_u32(col.add(k as usize)) as usize;
                    let dst = (ldg(cursor.add(j)) + (k - ldg_u32(cp.add(j)) as u64)) as usize;
                    stg(out_rows.add(dst), ldg_u32(rows.add(k as usize)) + r0);
                    if !vals.is_null() {
                        Move::copy(vals.add(k as usize), out_vals.add(dst));
                    }
                }
                k += grid_size_1d();
            }
        }
    };
}

place_kernel!(transpose_index64_place_v1, u8);
place_kernel!(transpose_index64_place_v2, u16);
place_kernel!(transpose_index64_place_v4, u32);
place_kernel!(transpose_index64_place_v8, u64);
place_kernel!(transpose_index64_place_v16, Bytes16);

/// Words of one piece's entry in [`transpose_dist_gather_v4`]'s table: its column pointer's
/// address, its rows' address, its values' address (0 for none), its first row, its length.
pub const GATHER_PIECE_WORDS: usize = 5;

/// Output entries each thread of [`transpose_dist_gather_v4`] takes a turn (one grid stride
/// apart): their loads are independent, so each stage has this many in flight. With one entry a
/// turn the chain column → pointers → row → store left the kernel bound by load latency.
pub const GATHER_VT: usize = 4;

macro_rules! gather_kernel {
    ($name:ident, $t:ty) => {
        /// The pieces of one rank's columns gathered into its share of the distributed
        /// transpose, or into its entries `base .. base + nnz` (`col`, `out_rows` and `out_vals`
        /// then point at entry `base`): output entry `base + p` (`p < nnz`) lies in column
        /// `j = col[p]` at `q = base + p − out_ptr[j]`;
        /// it is entry `q − (counts of the pieces before s in column j)` of column `j` of the
        /// first piece `s` (in table order, so the rows stay sorted) whose column `j` reaches
        /// it, its row offset by the piece's first row. Each output word is written once, by
        /// one thread, in order: whole-sector writes, where placing piece after piece
        /// scattered runs of a column's entries into partly written sectors. Each thread takes
        /// [`GATHER_VT`] entries a turn, stage by stage.
        ///
        /// A piece's entry past its length is skipped (nothing read, nothing written), so an
        /// inconsistent table cannot make the kernel read outside a piece.
        ///
        /// # Safety
        /// `col` holds `nnz` words `< len`; `out_ptr` `len + 1`; `table` `np` entries of
        /// [`GATHER_PIECE_WORDS`] words: a column pointer of `len + 1` words, rows (and values,
        /// unless 0) of the stated length; `out_rows` (and `out_vals`, unless null) `nnz`
        /// items. Any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name(a: DistGatherArgs<$t>) {
            let DistGatherArgs { col, out_ptr, table, out_rows, out_vals, nnz, base, np } = a;
            let stride = grid_size_1d();
            let mut at = index_1d_u64();
            while at < nnz {
                // SAFETY (every load and store below): the contract: p < nnz, j < len, each
                // piece's pointer len + 1 words, src below the piece's length.
                unsafe {
                    let mut j = [0usize; GATHER_VT];
                    let mut q = [0u64; GATHER_VT];
                    let mut live = [false; GATHER_VT];
                    for i in 0..GATHER_VT {
                        let p = at + i as u64 * stride;
                        if p < nnz {
                            live[i] = true;
                            j[i] = ldg_u32(col.add(p as usize)) as usize;
                        }
                    }
                    for i in 0..GATHER_VT {
                        if live[i] {
                            q[i] = (at + i as u64 * stride).wrapping_add(base).wrapping_sub(ldg_u32(out_ptr.add(j[i])) as u64);
                        }
                    }
                    // The piece of each entry, and its place there.
                    let mut piece = [u32::MAX; GATHER_VT];
                    let mut src = [0u64; GATHER_VT];
                    let mut s = 0;
                    while s < np {
                        let cp = ldg(table.add(GATHER_PIECE_WORDS * s as usize)) as *const u32;
                        for i in 0..GATHER_VT {
                            if live[i] && piece[i] == u32::MAX {
                                let c0 = ldg_u32(cp.add(j[i])) as u64;
                                let c = (ldg_u32(cp.add(j[i] + 1)) as u64).wrapping_sub(c0);
                                if q[i] < c {
                                    piece[i] = s;
                                    src[i] = c0 + q[i];
                                } else {
                                    q[i] -= c;
                                }
                            }
                        }
                        s += 1;
                    }
                    let mut row = [0u32; GATHER_VT];
                    let mut val = [<$t as Move>::zero(); GATHER_VT];
                    let mut out = [false; GATHER_VT];
                    let mut with_val = [false; GATHER_VT];
                    for i in 0..GATHER_VT {
                        if piece[i] != u32::MAX {
                            let e = table.add(GATHER_PIECE_WORDS * piece[i] as usize);
                            if src[i] < ldg(e.add(4)) {
                                out[i] = true;
                                let rows = ldg(e.add(1)) as *const u32;
                                row[i] = ldg_u32(rows.add(src[i] as usize)).wrapping_add(ldg(e.add(3)) as u32);
                                let vals = ldg(e.add(2)) as *const $t;
                                if !vals.is_null() && !out_vals.is_null() {
                                    with_val[i] = true;
                                    val[i] = <$t as Move>::load(vals.add(src[i] as usize));
                                }
                            }
                        }
                    }
                    for i in 0..GATHER_VT {
                        let p = (at + i as u64 * stride) as usize;
                        if out[i] {
                            stg(out_rows.add(p), row[i]);
                        }
                        if with_val[i] {
                            <$t as Move>::store(out_vals.add(p), val[i]);
                        }
                    }
                }
                at += GATHER_VT as u64 * stride;
            }
        }
    };
}

gather_kernel!(transpose_dist_gather_v1, u8);
gather_kernel!(transpose_dist_gather_v2, u16);
gather_kernel!(transpose_dist_gather_v4, u32);
gather_kernel!(transpose_dist_gather_v8, u64);
gather_kernel!(transpose_dist_gather_v16, Bytes16);

/// Every `stride`-th word of a 32-bit column pointer of `n + 1` words from word `start`,
/// widened: `out[i] = ptr[min(start + i · stride, n)]` for `i < len` (the distributed
/// transpose's sampled pointers, summed over the ranks to find the cut points).
///
/// # Safety
/// `ptr` holds `n + 1` words, `out` `len`. Any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_dist_sample_ptr(a: SamplePtrArgs) {
    let SamplePtrArgs { ptr, out, n, start, stride, len } = a;
    let mut i = index_1d_u64();
    while i < len {
        let at = i.saturating_mul(stride).saturating_add(start).min(n);
        // SAFETY: at <= n, i < len.
        unsafe { stg(out.add(i as usize), ldg_u32(ptr.add(at as usize)) as u64) };
        i += grid_size_1d();
    }
}

/// A rank's share of the transpose's column pointer as the sum of its pieces' pointers:
/// `out[j] = Σ cp_p[j]` (wrapping) over the `np` pieces of a gather table
/// ([`GATHER_PIECE_WORDS`] words a piece, its pointer's address first), for `j < len`.
///
/// # Safety
/// `table` holds `np` pieces whose pointers hold at least `len` words; `out` holds `len`. Any
/// 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_dist_sum_ptr(a: SumPtrArgs) {
    let SumPtrArgs { table, out, len, np } = a;
    let mut j = index_1d_u64();
    while j < len {
        let mut sum = 0u32;
        let mut s = 0;
        while s < np {
            // SAFETY: piece s < np of the table; j < len words of its pointer.
            unsafe {
                let cp = ldg(table.add(GATHER_PIECE_WORDS * s as usize)) as *const u32;
                sum = sum.wrapping_add(ldg_u32(cp.add(j as usize)));
            }
            s += 1;
        }
        // SAFETY: j < len.
        unsafe { stg(out.add(j as usize), sum) };
        j += grid_size_1d();
    }
}

/// The test matrix of the 64-bit transposer, generated on the GPU: the row pointer
/// (`ptr[r] =` [`gen_ptr`]`(r, m, nnz)`, `r <= m`) and the column indices
/// (`idx[k] =` [`gen_col`]`(k, n, seed)`, `k < nnz`).
///
/// # Safety
/// `ptr` holds `m + 1` words, `idx` `nnz`; `m, n > 0`. Any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_index64_generate(a: GenerateArgs) {
    let GenerateArgs { ptr, idx, m, nnz, n, seed } = a;
    let mut k = index_1d_u64();
    while k < nnz.max(m + 1) {
        // SAFETY: each store is checked against its array's length.
        unsafe {
            if k <= m {
                stg(ptr.add(k as usize), gen_ptr(k, m, nnz));
            }
            if k < nnz {
                stg(idx.add(k as usize), gen_col(k, n, seed));
            }
        }
        k += grid_size_1d();
    }
}

/// A CSR (or CSC) matrix's fingerprint, one warp per row (column), grid-stride over the
/// `majors`: `out[0]`, `out[1]` += the sums mod 2⁶⁴ of [`entry_hashes`]`(row, col)` over its
/// entries (the row is the major index when `rows_major != 0`, else the minor one); `out[2]`
/// += the entries below their predecessor in the same major (0 when every row, or column, is
/// sorted).
///
/// # Safety
/// `ptr` holds `majors + 1` nondecreasing words, `idx` `ptr[majors]`; `out` three words.
/// Blocks of whole warps, any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn transpose_index64_fingerprint(a: FingerprintArgs) {
    let FingerprintArgs { ptr, idx, out, majors, rows_major } = a;
    let lane = warp::lane_id() as u64;
    let warps = grid_size_1d() / 32;
    let mut i = index_1d_u64() / 32;
    let (mut a, mut b, mut bad) = (0u64, 0u64, 0u64);
    while i < majors {
        // SAFETY: i < majors; every k read is in ptr[i]..ptr[i + 1] <= nnz.
        unsafe {
            let (start, end) = (ldg(ptr.add(i as usize)), ldg(ptr.add(i as usize + 1)));
            let mut k = start + lane;
            while k < end {
                let minor = ldg_u32(idx.add(k as usize)) as u64;
                let (r, c) = if rows_major != 0 { (i, minor) } else { (minor, i) };
                let (ha, hb) = entry_hashes(r, c);
                a = a.wrapping_add(ha);
                b = b.wrapping_add(hb);
                if k > start && (ldg_u32(idx.add(k as usize - 1)) as u64) > minor {
                    bad += 1;
                }
                k += 32;
            }
        }
        i += warps;
    }
    let mut off = 16;
    while off > 0 {
        a = a.wrapping_add(warp::shfl_down_sync(u32::MAX, a, off));
        b = b.wrapping_add(warp::shfl_down_sync(u32::MAX, b, off));
        bad += warp::shfl_down_sync(u32::MAX, bad, off);
        off /= 2;
    }
    if lane == 0 {
        // SAFETY: out holds three words.
        unsafe {
            atomic::atomic_add_u64(out, a);
            atomic::atomic_add_u64(out.add(1), b);
            atomic::atomic_add_u64(out.add(2), bad);
        }
    }
}
