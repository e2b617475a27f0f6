//! Kernels of PTX module `csrc`.
use gpu_device::atomic::{red_add_f32, red_add_f64, red_shared_add_f32, red_shared_add_f64};
use gpu_device::mem::{ld_global, ldg_u32, stg};
use gpu_device::num::combine;
use gpu_device::reduce::{block_sum, group_sum, Segments};
use gpu_device::shared::{ld_shared_f32, ld_shared_f64, st_shared_f32, st_shared_f64};
use gpu_device::thread::{block_dim_x, block_idx_x, grid_dim_x, grid_size_1d, index_1d_u64, sync_threads, thread_idx_x};
use gpu_device::warp::lane_id;

use crate::{group_width, BlockPtrArgs, CsrArgs, CsrcArgs, FinishArgs, GatherArgs, ScaleArgs, BLOCK_ROWS};

gpu_device::dynamic_shared!(CSRC_DYNAMIC: u8);
gpu_device::static_shared!(CSRC_SUM: [f64; 32]);

/// `p[g] = ptr[min(g · BLOCK_ROWS, rows)]` for `g ≤ blocks`: the first nonzero of each row block
/// ([`BlockPtrArgs`]).
///
/// # Safety
/// `ptr` holds `rows + 1` entries; `p` holds `blocks + 1`; any 1-D grid.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn csrc_block_ptr(a: BlockPtrArgs) {
    let mut g = index_1d_u64();
    while g <= a.blocks {
        // SAFETY: g <= blocks; the row index is clamped to rows.
        unsafe { stg(a.p.add(g as usize), ld_global(a.ptr.add((g * BLOCK_ROWS as u64).min(a.rows) as usize))) };
        g += grid_size_1d();
    }
}

/// Piece `i`: its row block and nonzeros `bounds[i] .. bounds[i + 1]` (with a null `block_of`,
/// row block `i`: `bounds` is then the block pointer).
///
/// # Safety
/// `bounds` holds more than `i + 1` entries; `block_of` is null or holds more than `i`.
#[inline(always)]
unsafe fn piece_at(i: u64, bounds: *const u32, block_of: *const u32) -> (u64, u32, u32) {
    // SAFETY: the caller's sizes.
    unsafe {
        let g = if block_of.is_null() { i } else { ld_global(block_of.add(i as usize)) as u64 };
        (g, ld_global(bounds.add(i as usize)), ld_global(bounds.add(i as usize + 1)))
    }
}

macro_rules! csrc_kernels {
    ($t:ty, $red:ident, $red_shared:ident, $ld_sh:ident, $st_sh:ident, $gather:ident, $partial:ident, $ax:ident, $ax_pieces:ident, $scale:ident, $walk:ident, $atu:ident, $atu_shared:ident, $v_start:ident, $gwalk:ident, $atu_group:ident, $atu_finish:ident, $atu_group_shared:ident, $row_sums:ident, $thread:ident, $warp:ident, $block:ident) => {
        /// After the stable sort by column inside each row block (`perm[h]` = the CSR position
        /// of sorted entry `h`): `r[h] = row_of[perm[h]] mod BLOCK_ROWS`, `v[h] = vals[perm[h]]`.
        ///
        /// # Safety
        /// `perm` a permutation of `0..nnz`; `row_of`, `vals`, `r`, `v` hold `nnz`; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $gather(a: GatherArgs<$t>) {
            let mut h = index_1d_u64();
            while h < a.nnz {
                // SAFETY: h < nnz, perm[h] < nnz.
                unsafe {
                    let q = ld_global(a.perm.add(h as usize)) as usize;
                    stg(a.r.add(h as usize), (ld_global(a.row_of.add(q)) % BLOCK_ROWS) as u8);
                    stg(a.v.add(h as usize), ld_global(a.vals.add(q)));
                }
                h += grid_size_1d();
            }
        }

        /// The partial rows of the nonzeros `h0 .. h1` of one row block times `X`, summed in the
        /// block's shared memory `sh` (`k · BLOCK_ROWS` values, zeroed first; shared atomics);
        /// the block synchronized before and after.
        ///
        /// # Safety
        /// `h0 .. h1` inside one row block of a valid CSRC; `x` holds `cols · k` values; `sh`
        /// the block's dynamic shared memory of `k · BLOCK_ROWS` values; every thread of the
        /// block calls it.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $partial(sh: *mut $t, k: u32, cols: u64, h0: u32, h1: u32, r: *const u8, j: *const u32, v: *const $t, x: *const $t) {
            let (tid, nt) = (thread_idx_x(), block_dim_x());
            // SAFETY: shared indices below k · BLOCK_ROWS; h inside the caller's range, rows and
            // columns in range by its valid CSRC.
            unsafe {
                let mut i = tid;
                while i < k * BLOCK_ROWS {
                    *sh.add(i as usize) = 0.0;
                    i += nt;
                }
                sync_threads();
                let mut h = h0 + tid;
                while h < h1 {
                    let (rr, a) = (ld_global(r.add(h as usize)) as u32, ld_global(v.add(h as usize)));
                    let xs = x.add(ld_global(j.add(h as usize)) as usize);
                    let mut c = 0;
                    while c < k {
                        $red_shared(sh.add((c * BLOCK_ROWS + rr) as usize), a * ld_global(xs.add(c as usize * cols as usize)));
                        c += 1;
                    }
                    h += nt;
                }
                sync_threads();
            }
        }

        /// `Y = alpha · A · X + beta · Y` (`Y` not read when `beta == 0`): one block per row block
        /// (grid-stride), its `BLOCK_ROWS × k` partial rows in shared memory, added by shared
        /// atomics, then written to `Y` once, coalesced ([`CsrcArgs`]: `bounds` the block
        /// pointer, `pieces` the row blocks, `block_of` unused).
        ///
        /// # Safety
        /// A valid CSRC (`bounds` of `pieces + 1` nondecreasing entries, rows inside the matrix,
        /// columns below `cols`); `x` holds `cols · k` values, `out` `rows · k`; `1 ≤ k ≤ MAX_K`;
        /// dynamic shared memory of `k · BLOCK_ROWS` values; a 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $ax(a: CsrcArgs<$t>) {
            let sh = CSRC_DYNAMIC::ptr() as *mut $t;
            let (tid, nt) = (thread_idx_x(), block_dim_x());
            let (rows, k) = (a.rows, a.k);
            let n_sh = k * BLOCK_ROWS;
            let mut g = block_idx_x() as u64;
            while g < a.pieces {
                // SAFETY: shared indices below n_sh; g < blocks; h inside the row block; rows
                // and columns in range by the caller's valid CSRC.
                unsafe {
                    let (h0, h1) = (ld_global(a.bounds.add(g as usize)), ld_global(a.bounds.add(g as usize + 1)));
                    $partial(sh, k, a.cols, h0, h1, a.r, a.j, a.v, a.x);
                    let r0 = g * BLOCK_ROWS as u64;
                    let mut i = tid;
                    while i < n_sh {
                        let row = r0 + (i % BLOCK_ROWS) as u64;
                        if row < rows {
                            let yp = a.out.add((row + (i / BLOCK_ROWS) as u64 * rows) as usize);
                            let old = if a.beta == 0.0 { 0.0 } else { ld_global(yp) };
                            stg(yp, combine(a.alpha, *sh.add(i as usize), a.beta, old));
                        }
                        i += nt;
                    }
                    sync_threads();
                }
                g += grid_dim_x() as u64;
            }
        }

        /// `Y += alpha · A · X` by pieces of row blocks (after `Y = beta · Y`): piece `i` covers
        /// the nonzeros `bounds[i] .. bounds[i + 1]` of row block `block_of[i]`, so a row block
        /// of a hub row is shared by several blocks of threads. Each piece sums its partial rows
        /// in shared memory (shared atomics) and adds the nonzero ones to `Y` by global atomics.
        /// Not bit-reproducible.
        ///
        /// # Safety
        /// A valid CSRC (rows inside the matrix, columns below `cols`); `bounds` holds `pieces +
        /// 1` nondecreasing entries tiling the nonzeros, each piece inside its row block
        /// `block_of[i]`; `x` holds `cols · k` values, `y` `rows · k`; `1 ≤ k ≤ MAX_K`; dynamic
        /// shared memory of `k · BLOCK_ROWS` values; a 1-D grid. [`CsrcArgs`] with `beta` unused
        /// (`out` is `Y`).
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $ax_pieces(a: CsrcArgs<$t>) {
            let sh = CSRC_DYNAMIC::ptr() as *mut $t;
            let (tid, nt) = (thread_idx_x(), block_dim_x());
            let (rows, k) = (a.rows, a.k);
            let n_sh = k * BLOCK_ROWS;
            let mut piece = block_idx_x() as u64;
            while piece < a.pieces {
                // SAFETY: shared indices below n_sh; piece < pieces; h inside the piece, rows and
                // columns in range by the caller's valid CSRC.
                unsafe {
                    let (g, h0, h1) = piece_at(piece, a.bounds, a.block_of);
                    $partial(sh, k, a.cols, h0, h1, a.r, a.j, a.v, a.x);
                    let r0 = g * BLOCK_ROWS as u64;
                    let mut i = tid;
                    while i < n_sh {
                        let (row, part) = (r0 + (i % BLOCK_ROWS) as u64, *sh.add(i as usize));
                        if row < rows && part != 0.0 {
                            $red(a.out.add((row + (i / BLOCK_ROWS) as u64 * rows) as usize), a.alpha * part);
                        }
                        i += nt;
                    }
                    sync_threads();
                }
                piece += grid_dim_x() as u64;
            }
        }

        /// `out = beta · out` over `n` values (`out = 0` when `beta == 0`, not reading it), before
        /// the transposed product ([`ScaleArgs`]).
        ///
        /// # Safety
        /// `out` holds `n` values; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $scale(a: ScaleArgs<$t>) {
            let mut i = index_1d_u64();
            while i < a.n {
                // SAFETY: i < n.
                unsafe {
                    let o = a.out.add(i as usize);
                    stg(o, if a.beta == 0.0 { 0.0 } else { a.beta * ld_global(o) })
                };
                i += grid_size_1d();
            }
        }

        /// One row block `g` of `Aᵀ · U`: the block stages the block's rows of `U` in shared
        /// memory (`ush`, `BLOCK_ROWS · k` values, coalesced), then each warp takes 32
        /// consecutive nonzeros at a time, lane `l` forms `U[row][c] · v` for its nonzero, lanes
        /// with the same column are summed by the warp's segmented sum and the first lane of
        /// each run calls `add(col, c, sum)`. Synchronizes the block twice.
        ///
        /// # Safety
        /// A valid CSRC; `g` below its row-block count and `h0 .. h1` inside row block `g`
        /// (block-uniform: the whole row block, or a piece of it); `u` holds `rows · k` values;
        /// `ush` points to `BLOCK_ROWS · k` values of shared memory; every thread of the block
        /// calls it; blocks of whole warps.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $walk(g: u64, h0: u32, h1: u32, rows: u64, k: u32, r: *const u8, j: *const u32, v: *const $t, u: *const $t, ush: *mut $t, add: impl Fn(u32, u32, $t)) {
            let (tid, nt) = (thread_idx_x(), block_dim_x());
            let lane = lane_id();
            let (warp, warps) = (tid / 32, nt / 32);
            let r0 = g * BLOCK_ROWS as u64;
            // SAFETY: staged rows below rows, shared indices below BLOCK_ROWS · k; h inside the
            // row block when valid; invalid lanes read nothing.
            unsafe {
                let mut i = tid;
                while i < BLOCK_ROWS * k {
                    let row = r0 + (i % BLOCK_ROWS) as u64;
                    *ush.add(i as usize) = if row < rows { ld_global(u.add((row + (i / BLOCK_ROWS) as u64 * rows) as usize)) } else { 0.0 };
                    i += nt;
                }
                sync_threads();
                // Warp-uniform trip count, so that the shuffles see every lane.
                let mut base = h0 + warp * 32;
                while base < h1 {
                    let h = base + lane;
                    let valid = h < h1;
                    let (col, rr, a) = if valid { (ld_global(j.add(h as usize)), ld_global(r.add(h as usize)) as u32, ld_global(v.add(h as usize))) } else { (u32::MAX, 0, 0.0) };
                    let seg = Segments::new(col);
                    let lead = valid && seg.head();
                    let mut c = 0;
                    while c < k {
                        let t = if valid { a * *ush.add((c * BLOCK_ROWS + rr) as usize) } else { 0.0 };
                        let s = seg.sum(t);
                        if lead {
                            add(col, c, s);
                        }
                        c += 1;
                    }
                    base += warps * 32;
                }
                sync_threads();
            }
        }

        /// `V += alpha · Aᵀ · U` with global atomics: one block per piece (grid-stride), each
        /// run of equal columns in a warp added by one `red.add` (paper, Figure 4). A piece is
        /// the nonzeros `bounds[i] .. bounds[i + 1]` of row block `block_of[i]`, or with a null
        /// `block_of` row block `i` itself (`bounds` the block pointer).
        ///
        /// # Safety
        /// A valid CSRC as for the direct product; `bounds` holds `pieces + 1` nondecreasing
        /// entries, each piece inside its row block (`block_of` null: `bounds` is the block
        /// pointer and `pieces` the row-block count); `u` holds `rows · k` values, `out` `cols ·
        /// k`; `1 ≤ k ≤ MAX_K`; dynamic shared memory of `BLOCK_ROWS · k` values; blocks of whole
        /// warps; a 1-D grid. [`CsrcArgs`] with `x` the `U`, `out` the `V`, `beta` unused.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $atu(a: CsrcArgs<$t>) {
            let ush = CSRC_DYNAMIC::ptr() as *mut $t;
            let mut i = block_idx_x() as u64;
            while i < a.pieces {
                // SAFETY: the caller's valid CSRC, pieces and sizes; out indices col + c · cols
                // with col < cols, c < k.
                unsafe {
                    let (g, h0, h1) = piece_at(i, a.bounds, a.block_of);
                    $walk(g, h0, h1, a.rows, a.k, a.r, a.j, a.v, a.x, ush, |col, c, s| $red(a.out.add((col as u64 + c as u64 * a.cols) as usize), a.alpha * s))
                };
                i += grid_dim_x() as u64;
            }
        }

        /// The start of the shared-memory transposed products: `(vsh, ush, cols · k)`, the
        /// `cols · k` accumulators at the start of the dynamic shared memory, zeroed, and the
        /// staging area of `BLOCK_ROWS · k` values after them. Synchronizes the block.
        ///
        /// # Safety
        /// Dynamic shared memory of `(cols + BLOCK_ROWS) · k` values; every thread of the block
        /// calls it.
        #[inline(always)]
        unsafe fn $v_start(cols: u64, k: u32) -> (*mut $t, *mut $t, u64) {
            let vsh = CSRC_DYNAMIC::ptr() as *mut $t;
            let n_v = cols * k as u64;
            // SAFETY: shared indices below cols · k; the staging area follows them.
            unsafe {
                let mut i = thread_idx_x() as u64;
                while i < n_v {
                    $st_sh(vsh.add(i as usize), 0.0);
                    i += block_dim_x() as u64;
                }
                sync_threads();
                (vsh, vsh.add(n_v as usize), n_v)
            }
        }

        /// `V += alpha · Aᵀ · U` through shared memory, for `cols · k` values that fit there:
        /// each block accumulates `V` in shared memory over the row blocks it takes
        /// (grid-stride; runs of equal columns added by one shared `red.add`), then adds its
        /// nonzero entries to `out` by global `red.add`: global atomics fall from one per run to
        /// `cols · k` per block. The host runs it once per group of vectors that fits.
        ///
        /// # Safety
        /// As the global kernel, with dynamic shared memory of `(cols + BLOCK_ROWS) · k` values,
        /// `bounds` the block pointer and `pieces` the row blocks (`block_of` unused).
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $atu_shared(a: CsrcArgs<$t>) {
            let (cols, k) = (a.cols, a.k);
            // SAFETY: the caller's dynamic shared memory of (cols + BLOCK_ROWS) · k values.
            let (vsh, ush, n_v) = unsafe { $v_start(cols, k) };
            let (tid, nt) = (thread_idx_x() as u64, block_dim_x() as u64);
            let mut g = block_idx_x() as u64;
            while g < a.pieces {
                // SAFETY: the caller's valid CSRC and sizes; shared indices col + c · cols below
                // cols · k.
                unsafe {
                    let (h0, h1) = (ld_global(a.bounds.add(g as usize)), ld_global(a.bounds.add(g as usize + 1)));
                    $walk(g, h0, h1, a.rows, k, a.r, a.j, a.v, a.x, ush, |col, c, s| $red_shared(vsh.add((col as u64 + c as u64 * cols) as usize), s))
                };
                g += grid_dim_x() as u64;
            }
            // $walk ended with a barrier: every accumulator is final.
            // SAFETY: i below cols · k, the size of out and of the accumulators.
            unsafe {
                let mut i = tid;
                while i < n_v {
                    let s = *vsh.add(i as usize);
                    if s != 0.0 || s != s {
                        $red(a.out.add(i as usize), a.alpha * s);
                    }
                    i += nt;
                }
            }
        }

        /// One row block `g` of `Aᵀ · U` by groups of lanes, one lane per vector: the block
        /// stages the row block's rows of `U` in shared memory (`ush[row · k + c]`), then cuts the
        /// row block's nonzeros into one contiguous chunk per group of [`group_width`]`(k)` lanes.
        /// Each group walks its chunk in column order, lane `c` summing `U[row][c] · v` in a
        /// register while the column stays the same, and hands each run's sum to
        /// `flush(col, c, sum, shared)`; `shared` is true when a neighbouring chunk holds the same
        /// column (only a chunk's first and last runs can be), false when no other group of the
        /// block adds to that column in this row block. No shuffles, and no atomics inside a
        /// chunk. Synchronizes the block twice.
        ///
        /// # Safety
        /// A valid CSRC; `g` below its row-block count and `h0 .. h1` inside row block `g`
        /// (block-uniform: the whole row block, or a piece of it, whose first and last runs the
        /// neighbouring pieces may share: the global kernel adds every run atomically); `u`
        /// holds `rows · k` values; `ush` points to `BLOCK_ROWS · k` values of shared memory;
        /// `1 ≤ k ≤ MAX_K`; every thread of the block calls it; blocks of a multiple of 16
        /// threads.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $gwalk(g: u64, h0: u32, h1: u32, rows: u64, k: u32, r: *const u8, j: *const u32, v: *const $t, u: *const $t, ush: *mut $t, flush: impl Fn(u32, u32, $t, bool)) {
            let (tid, nt) = (thread_idx_x(), block_dim_x());
            let gw = group_width(k);
            let (c, group, groups) = (tid % gw, (tid / gw) as u64, (nt / gw) as u64);
            let r0 = g * BLOCK_ROWS as u64;
            // SAFETY: staged rows below rows, shared indices below BLOCK_ROWS · k (lanes c ≥ k
            // walk nothing); h inside the row block; the caller's valid CSRC.
            unsafe {
                let mut i = tid;
                while i < BLOCK_ROWS * k {
                    let (rr, cc) = (i % BLOCK_ROWS, i / BLOCK_ROWS);
                    let row = r0 + rr as u64;
                    $st_sh(ush.add((rr * k + cc) as usize), if row < rows { ld_global(u.add((row + cc as u64 * rows) as usize)) } else { 0.0 });
                    i += nt;
                }
                sync_threads();
                let (h0, h1) = (h0 as u64, h1 as u64);
                let chunk = (h1 - h0).div_ceil(groups);
                let s = (h0 + group * chunk).min(h1);
                let e = (s + chunk).min(h1);
                if c < k && s < e {
                    let mut col = ldg_u32(j.add(s as usize));
                    // The first run is shared when the chunk before ends in the same column.
                    let mut shared = s > h0 && ldg_u32(j.add(s as usize - 1)) == col;
                    let mut acc: $t = 0.0;
                    let mut h = s;
                    while h < e {
                        let jh = ldg_u32(j.add(h as usize));
                        if jh != col {
                            flush(col, c, acc, shared);
                            (acc, col, shared) = (0.0, jh, false);
                        }
                        acc += ld_global(v.add(h as usize)) * $ld_sh(ush.add((ld_global(r.add(h as usize)) as u32 * k + c) as usize));
                        h += 1;
                    }
                    // The last run is shared when the chunk after starts in the same column.
                    flush(col, c, acc, shared || (e < h1 && ldg_u32(j.add(e as usize)) == col));
                }
                sync_threads();
            }
        }

        /// `W += Aᵀ · U` into a **row-major** scratch `w` (`W[col][c]` at `col · k + c`) with
        /// global atomics, by groups of lanes ([`group_width`]`(k)` lanes, one per vector, each
        /// group walking a contiguous chunk of the row block): one `red.add` per run of equal
        /// columns in a chunk and vector, a group's lanes on consecutive addresses (one cache
        /// line for up to 16 vectors of f64). One block per row block (grid-stride); the
        /// finishing kernel turns `W` into `V`.
        ///
        /// # Safety
        /// As the global kernel `csrc_atu` (pieces included), with `out` the scratch `W` holding
        /// `cols · k` values and blocks of a multiple of 16 threads ([`CsrcArgs`]' `alpha` and
        /// `beta` unused).
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $atu_group(a: CsrcArgs<$t>) {
            let ush = CSRC_DYNAMIC::ptr() as *mut $t;
            let k = a.k;
            let mut i = block_idx_x() as u64;
            while i < a.pieces {
                // SAFETY: the caller's valid CSRC, pieces and sizes; w indices col · k + c with
                // col < cols, c < k.
                unsafe {
                    let (g, h0, h1) = piece_at(i, a.bounds, a.block_of);
                    $gwalk(g, h0, h1, a.rows, k, a.r, a.j, a.v, a.x, ush, |col, c, s, _| $red(a.out.add((col as u64 * k as u64 + c as u64) as usize), s))
                };
                i += grid_dim_x() as u64;
            }
        }

        /// `V = alpha · W + beta · V` (`V` not read when `beta == 0`) for the row-major `W`
        /// (`cols × k`, `W[col][c]` at `col · k + c`) and the column-major `V`, in the order of
        /// `V`.
        ///
        /// # Safety
        /// `w` and `out` hold `cols · k` values; any 1-D grid ([`FinishArgs`]).
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $atu_finish(a: FinishArgs<$t>) {
            let (cols, k) = (a.cols, a.k as u64);
            let n = cols * k;
            let mut i = index_1d_u64();
            while i < n {
                let (c, col) = (i / cols, i % cols);
                // SAFETY: i and col · k + c below cols · k.
                unsafe {
                    let o = a.out.add(i as usize);
                    let old = if a.beta == 0.0 { 0.0 } else { ld_global(o) };
                    stg(o, combine(a.alpha, ld_global(a.w.add((col * k + c) as usize)), a.beta, old));
                }
                i += grid_size_1d();
            }
        }

        /// `V += alpha · Aᵀ · U` through shared memory by groups of lanes, for `cols · k` values
        /// that fit: each block accumulates `V` in shared memory (`vsh[col · k + c]`, a group's
        /// lanes on consecutive banks) over the row blocks it takes (grid-stride); a run that no
        /// other group touches in its row block is added with a plain load and store, a run shared
        /// with a neighbouring chunk with a shared atomic; then the block adds its nonzero
        /// entries to `out` by global `red.add`. The host runs it once per group of vectors
        /// that fits.
        ///
        /// # Safety
        /// As the shared kernel `csrc_atu_shared` ([`CsrcArgs`] by row blocks), with blocks of a
        /// multiple of 16 threads.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $atu_group_shared(a: CsrcArgs<$t>) {
            let (cols, k) = (a.cols, a.k);
            // SAFETY: the caller's dynamic shared memory of (cols + BLOCK_ROWS) · k values.
            let (vsh, ush, n_v) = unsafe { $v_start(cols, k) };
            let (tid, nt) = (thread_idx_x() as u64, block_dim_x() as u64);
            let mut g = block_idx_x() as u64;
            while g < a.pieces {
                // SAFETY: the caller's valid CSRC and sizes; shared indices col · k + c below
                // cols · k. A run not shared with another chunk is this group's alone until the
                // walk's closing barrier, so its plain read-modify-write cannot race.
                unsafe {
                    let (h0, h1) = (ld_global(a.bounds.add(g as usize)), ld_global(a.bounds.add(g as usize + 1)));
                    $gwalk(g, h0, h1, a.rows, k, a.r, a.j, a.v, a.x, ush, |col, c, s, shared| {
                        let a = vsh.add((col as u64 * k as u64 + c as u64) as usize);
                        if shared {
                            $red_shared(a, s);
                        } else {
                            $st_sh(a, $ld_sh(a) + s);
                        }
                    })
                };
                g += grid_dim_x() as u64;
            }
            // $gwalk ended with a barrier: every accumulator is final. In the order of out
            // (coalesced atomics), reading the accumulators at a stride of k.
            // SAFETY: i below cols · k, the size of out and of the accumulators.
            unsafe {
                let mut i = tid;
                while i < n_v {
                    let (c, col) = (i / cols, i % cols);
                    let s = $ld_sh(vsh.add((col * k as u64 + c) as usize));
                    if s != 0.0 || s != s {
                        $red(a.out.add(i as usize), a.alpha * s);
                    }
                    i += nt;
                }
            }
        }

        /// This thread's share of row `row`'s `k` sums (nonzeros `first`, `first + stride`, … of
        /// the row, in order; entries past `k` stay 0).
        ///
        /// # Safety
        /// A valid CSR with `row` below its row count; `x` holds `k` columns of `ld` values (every
        /// column index below `ld`); `k ≤ 16`.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $row_sums(row: u64, first: u32, stride: u32, ld: u64, k: u32, ptr: *const u32, idx: *const u32, vals: *const $t, x: *const $t) -> [$t; 16] {
            let mut acc = [0.0 as $t; 16];
            // SAFETY: h inside the row; columns below ld, so x entries below ld · k.
            unsafe {
                // Positions in 64 bits: a row ending near 2^32 nonzeros must not wrap.
                let (b, e) = (ld_global(ptr.add(row as usize)) as u64, ld_global(ptr.add(row as usize + 1)) as u64);
                let mut h = b + first as u64;
                while h < e {
                    let a = ld_global(vals.add(h as usize));
                    let xs = x.add(ld_global(idx.add(h as usize)) as usize);
                    gpu_device::unroll!(c in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                        if (c as u32) < k {
                            acc[c] += a * ld_global(xs.add(c * ld as usize));
                        }
                    });
                    h += stride as u64;
                }
            }
            acc
        }

        /// Deterministic `Y = alpha · A · X + beta · Y` on a CSR: one warp per row
        /// (grid-stride), lanes striding the row with `k` sums each, then a shuffle reduction per
        /// vector in lane order: the same bits every run.
        ///
        /// # Safety
        /// [`CsrArgs`]' contract with `X` column-major: a valid CSR (`ptr` of `rows + 1` from 0,
        /// nondecreasing; `idx` < `ldx`); `x` holds `k` columns of `ldx` values, `y` `k` of `ldy ≥
        /// rows`; `1 ≤ k ≤ MAX_K`; blocks of whole warps.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $warp(a: CsrArgs<$t>) {
            let CsrArgs { ptr, idx, vals, x, y, rows, ldx, ldy, k, alpha, beta } = a;
            let lane = lane_id();
            let mut row = index_1d_u64() / 32;
            let warps = grid_size_1d() / 32;
            while row < rows {
                // SAFETY: row < rows (warp-uniform); the caller's valid CSR and sizes.
                unsafe {
                    let acc = $row_sums(row, lane, 32, ldx, k, ptr, idx, vals, x);
                    gpu_device::unroll!(c in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                        if (c as u32) < k {
                            let s = group_sum(acc[c], 32);
                            if lane == 0 {
                                let yp = y.add((row + c as u64 * ldy) as usize);
                                let old = if beta == 0.0 { 0.0 } else { ld_global(yp) };
                                stg(yp, combine(alpha, s, beta, old));
                            }
                        }
                    });
                }
                row += warps;
            }
        }

        /// As the warp kernel with one thread per row (grid-stride), for short rows: the row's
        /// products summed in order (deterministic).
        ///
        /// # Safety
        /// As the warp kernel; any 1-D grid.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $thread(a: CsrArgs<$t>) {
            let CsrArgs { ptr, idx, vals, x, y, rows, ldx, ldy, k, alpha, beta } = a;
            let mut row = index_1d_u64();
            while row < rows {
                // SAFETY: row < rows; the caller's valid CSR and sizes.
                unsafe {
                    let acc = $row_sums(row, 0, 1, ldx, k, ptr, idx, vals, x);
                    gpu_device::unroll!(c in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                        if (c as u32) < k {
                            let yp = y.add((row + c as u64 * ldy) as usize);
                            let old = if beta == 0.0 { 0.0 } else { ld_global(yp) };
                            stg(yp, combine(alpha, acc[c], beta, old));
                        }
                    });
                }
                row += grid_size_1d();
            }
        }

        /// As the warp kernel with one block per row (grid-stride), for long rows: the block's
        /// threads stride the row, then a block sum per vector in thread order (deterministic).
        ///
        /// # Safety
        /// As the warp kernel; blocks of whole warps, at most 1024 threads.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $block(a: CsrArgs<$t>) {
            let CsrArgs { ptr, idx, vals, x, y, rows, ldx, ldy, k, alpha, beta } = a;
            let temp = CSRC_SUM::ptr() as *mut $t;
            let (tid, nt) = (thread_idx_x(), block_dim_x());
            let mut row = block_idx_x() as u64;
            while row < rows {
                // SAFETY: row < rows (block-uniform); the caller's valid CSR and sizes; temp
                // holds 32 values of either type.
                unsafe {
                    let acc = $row_sums(row, tid, nt, ldx, k, ptr, idx, vals, x);
                    gpu_device::unroll!(c in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                        if (c as u32) < k {
                            let s = block_sum(temp, acc[c]);
                            if tid == 0 {
                                let yp = y.add((row + c as u64 * ldy) as usize);
                                let old = if beta == 0.0 { 0.0 } else { ld_global(yp) };
                                stg(yp, combine(alpha, s, beta, old));
                            }
                        }
                    });
                }
                row += grid_dim_x() as u64;
            }
        }
    };
}

csrc_kernels!(
    f32,
    red_add_f32,
    red_shared_add_f32,
    ld_shared_f32,
    st_shared_f32,
    csrc_gather_f32,
    partial_rows_f32,
    csrc_ax_f32,
    csrc_ax_pieces_f32,
    csrc_scale_f32,
    atu_walk_f32,
    csrc_atu_f32,
    csrc_atu_shared_f32,
    v_start_f32,
    group_walk_f32,
    csrc_atu_group_f32,
    csrc_atu_finish_f32,
    csrc_atu_group_shared_f32,
    row_sums_f32,
    csrc_csr_thread_f32,
    csrc_csr_warp_f32,
    csrc_csr_block_f32
);
csrc_kernels!(
    f64,
    red_add_f64,
    red_shared_add_f64,
    ld_shared_f64,
    st_shared_f64,
    csrc_gather_f64,
    partial_rows_f64,
    csrc_ax_f64,
    csrc_ax_pieces_f64,
    csrc_scale_f64,
    atu_walk_f64,
    csrc_atu_f64,
    csrc_atu_shared_f64,
    v_start_f64,
    group_walk_f64,
    csrc_atu_group_f64,
    csrc_atu_finish_f64,
    csrc_atu_group_shared_f64,
    row_sums_f64,
    csrc_csr_thread_f64,
    csrc_csr_warp_f64,
    csrc_csr_block_f64
);
