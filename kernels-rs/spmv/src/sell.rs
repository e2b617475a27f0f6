//! SELL-C-σ kernels of PTX module `spmv` (Kreutzer, Hager, Wellein, Fehske & Bishop, SIAM J.
//! Sci. Comput. 2014). Sorted position `t` holds row `perm[t]` (row `t` when `perm` is null: σ =
//! 1); chunk `i` holds positions `32 i .. 32 i + 32` ([`SELL_C`]), one warp, a lane each.
//!
//! - Slots: chunk `i` has `width = wptr[i + 1] − wptr[i]` slots a row; slot `j` of lane `l` is
//!   `32 (wptr[i] + j) + l` of `val`. A row's entries come first, in CSR order, then padding
//!   (value 0).
//! - Columns: chunk `i`'s start at word `16 iptr[i]` of `idx`. When `iptr[i + 1] − iptr[i]` is
//!   `width` the chunk is *narrow*: 16-bit offsets above `base[i]`, slot `j` of lane `l` at 16-bit
//!   element `32 (iptr[i] + j) + l`, padding [`SELL_PAD16`]. Otherwise (`2 · width` units) 32-bit
//!   columns at word `16 iptr[i] + 32 j + l`, padding [`ELL_PAD`].
//!
//! Every loop runs over whole warps (`t` from `32 · chunk`), so the shuffles see all 32 lanes;
//! lanes past the last row hold padding only.
use gpu_device::mem::{ld_global, ldg, stg};
use gpu_device::thread::{grid_size_1d, index_1d_u64};
use gpu_device::warp::{lane_id, max_u32, min_u32};

use crate::term::Hints;
use crate::{combine, sell_index_units, sell_narrow, SellArgs, SellChunksArgs, SellFillArgs, ELL_PAD, SELL_C, SELL_PAD16};

/// The row at sorted position `t` (`t` itself without a permutation).
///
/// # Safety
/// `t < rows`; `perm` null or holding `rows` entries.
#[inline(always)]
unsafe fn row_at(perm: *const u32, t: u64) -> usize {
    if perm.is_null() {
        t as usize
    } else {
        // SAFETY: the caller's t < rows.
        unsafe { ld_global(perm.add(t as usize)) as usize }
    }
}

/// Where chunk `i`'s slots and columns are: its first slot row `w0`, its `width`, its first
/// index unit `i0`, and whether its columns are 16-bit (`narrow`).
struct Chunk {
    w0: u64,
    width: u64,
    i0: u64,
    narrow: bool,
}

impl Chunk {
    /// Chunk `i` of the pointers.
    ///
    /// # Safety
    /// `wptr` and `iptr` hold more than `i + 1` entries.
    #[inline(always)]
    unsafe fn at(wptr: *const u32, iptr: *const u32, i: usize) -> Self {
        // SAFETY: the caller's i + 1 inside both.
        unsafe {
            let w0 = ld_global(wptr.add(i)) as u64;
            let width = ld_global(wptr.add(i + 1)) as u64 - w0;
            let i0 = ld_global(iptr.add(i)) as u64;
            Self { w0, width, i0, narrow: ld_global(iptr.add(i + 1)) as u64 - i0 == width }
        }
    }
}

/// Per chunk: its width (the longest of its rows) into `wcount[i]`, its index units
/// ([`sell_index_units`]) into `icount[i]`, and its base column (the smallest; 0 for a chunk
/// stored in 32 bits) into `base[i]`. Columns go to 16 bits where [`sell_narrow`] allows and
/// `narrow` is nonzero. Each lane walks its row (rows need not be sorted).
///
/// # Safety
/// A valid CSR of `rows` rows (`ptr`, `idx`); `perm` null or a permutation of `0..rows`;
/// `wcount`, `icount` and `base` hold `chunks = ⌈rows / 32⌉` entries; blocks of whole warps.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn spmv_sell_chunks(a: SellChunksArgs) {
    let SellChunksArgs { ptr, idx, perm, wcount, icount, base, rows, narrow } = a;
    let end = rows.div_ceil(SELL_C) * SELL_C;
    // Warp-uniform trip count: t − lane is a multiple of 32 and so is the stride.
    let mut t = index_1d_u64();
    while t - (lane_id() as u64) < end {
        let (mut len, mut lo, mut hi) = (0u32, u32::MAX, 0u32);
        if t < rows {
            // SAFETY: t < rows; the row's entries lie inside idx.
            unsafe {
                let r = row_at(perm, t);
                let (b, e) = (ld_global(ptr.add(r)), ld_global(ptr.add(r + 1)));
                len = e - b;
                let mut k = b;
                while k < e {
                    let c = ld_global(idx.add(k as usize));
                    lo = lo.min(c);
                    hi = hi.max(c);
                    k += 1;
                }
            }
        }
        let (width, lo, hi) = (max_u32(len), min_u32(lo), max_u32(hi));
        if lane_id() == 0 {
            let small = narrow != 0 && sell_narrow(width, lo, hi);
            let chunk = (t / SELL_C) as usize;
            // SAFETY: chunk < chunks.
            unsafe {
                stg(wcount.add(chunk), width);
                stg(icount.add(chunk), sell_index_units(width, small));
                stg(base.add(chunk), if small { lo } else { 0 });
            }
        }
        t += grid_size_1d();
    }
}

macro_rules! sell_fill {
    ($t:ty, $fill:ident, $zero:expr) => {
        /// SELL-C-σ from CSR: lane `l` of chunk `i` writes its row's entries, then padding, into
        /// its slots (writes coalesced across the warp). The `u8` instance moves the value
        /// index's bytes (SELL-VI) the way the others move values.
        ///
        /// # Safety
        /// A valid CSR of `rows` rows (`ptr`, `idx`, `vals`); `perm` null or a permutation of
        /// `0..rows`; `wptr`, `iptr` (`chunks + 1` each) and `base` (`chunks`) from
        /// `spmv_sell_chunks` over the same permutation and their exclusive scans; `sidx` holds
        /// `16 · iptr[chunks]` words and `sval` `32 · wptr[chunks]` values; blocks of whole
        /// warps.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $fill(a: SellFillArgs<$t>) {
            let SellFillArgs { ptr, idx, vals, perm, wptr, iptr, base, sidx, sval, rows } = a;
            let end = rows.div_ceil(SELL_C) * SELL_C;
            let mut t = index_1d_u64();
            while t < end {
                let (chunk, lane) = ((t / SELL_C) as usize, t % SELL_C);
                // SAFETY: chunk < chunks; rows no longer than the chunk's width; slots and index
                // words inside the chunk's ranges of sval and sidx.
                unsafe {
                    let Chunk { w0, width, i0, narrow: small } = Chunk::at(wptr, iptr, chunk);
                    let lo = ld_global(base.add(chunk));
                    let (b, len) = if t < rows {
                        let r = row_at(perm, t);
                        let b = ld_global(ptr.add(r));
                        (b as u64, (ld_global(ptr.add(r + 1)) - b) as u64)
                    } else {
                        (0, 0)
                    };
                    let mut j = 0u64;
                    while j < width {
                        let s = (SELL_C * (w0 + j) + lane) as usize;
                        let (c, v) =
                            if j < len { (ld_global(idx.add((b + j) as usize)), ld_global(vals.add((b + j) as usize))) } else { (ELL_PAD, $zero) };
                        stg(sval.add(s), v);
                        if small {
                            let e = (SELL_C * (i0 + j) + lane) as usize;
                            stg((sidx as *mut u16).add(e), if j < len { (c - lo) as u16 } else { SELL_PAD16 });
                        } else {
                            stg(sidx.add((16 * i0 + SELL_C * j + lane) as usize), c);
                        }
                        j += 1;
                    }
                }
                t += grid_size_1d();
            }
        }
    };
}

/// Slots each lane of the SELL-C-σ products loads a turn (independent loads in flight). Against
/// one slot a turn (H100, f64, realistic suite, session 22): SELL-C-σ 0.76× the time in geomean
/// (0.87–0.91× on meshes, stencils, KKT and skyline, 0.60× on the bag of words), SELL-VI 0.93×
/// on the 27-point stencils and 1.05× on the 7-point one.
const SELL_U: usize = 4;

macro_rules! sell_products {
    ($t:ty, $body:ident, $sell:ident, $sell_vi:ident) => {
        /// The product's walk, the value of slot `s` being `val_at(s)`: a warp per chunk and a
        /// lane per sorted row, the row's slots in order up to its first padding, then `y[row] =
        /// alpha · sum + beta · y[row]`.
        ///
        /// # Safety
        /// As `spmv_sell_*`; `val_at` valid on every slot before the padding.
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $body(
            h: Hints,
            rows: u64,
            wptr: *const u32,
            iptr: *const u32,
            base: *const u32,
            perm: *const u32,
            idx: *const u32,
            val_at: impl Fn(u64) -> $t,
            x: *const $t,
            alpha: $t,
            beta: $t,
            y: *mut $t,
        ) {
            let end = rows.div_ceil(SELL_C) * SELL_C;
            let mut t = index_1d_u64();
            while t < end {
                let (chunk, lane) = ((t / SELL_C) as usize, t % SELL_C);
                // SAFETY: slots and index words inside the chunk's ranges; columns (base plus
                // 16-bit offset, or 32-bit) below x's length until the padding.
                unsafe {
                    let Chunk { w0, width, i0, narrow } = Chunk::at(wptr, iptr, chunk);
                    let v0 = SELL_C * w0 + lane;
                    // Slot j's column, ELL_PAD for padding (no column reaches it).
                    let lo = if narrow { ld_global(base.add(chunk)) } else { 0 };
                    let p16 = (idx as *const u16).add((SELL_C * i0 + lane) as usize);
                    let p32 = idx.add((16 * i0 + lane) as usize);
                    let col_at = |j: u64| -> u32 {
                        if narrow {
                            let d = h.matrix(p16.add((SELL_C * j) as usize));
                            if d == SELL_PAD16 {
                                ELL_PAD
                            } else {
                                lo + d as u32
                            }
                        } else {
                            h.matrix(p32.add((SELL_C * j) as usize))
                        }
                    };
                    // SELL_U slots a turn: their columns and values loaded together, then their
                    // x entries (none for padding), then summed in slot order up to the first
                    // padding: the loads of a turn in flight at once, the sum CSR-scalar's.
                    let mut sum: $t = 0.0;
                    let mut j = 0u64;
                    while j < width {
                        let mut c = [ELL_PAD; SELL_U];
                        let mut v: [$t; SELL_U] = [0.0; SELL_U];
                        for u in 0..SELL_U {
                            if j + (u as u64) < width {
                                c[u] = col_at(j + u as u64);
                                v[u] = val_at(v0 + SELL_C * (j + u as u64));
                            }
                        }
                        let mut xv: [$t; SELL_U] = [0.0; SELL_U];
                        for u in 0..SELL_U {
                            if c[u] != ELL_PAD {
                                xv[u] = h.x(x, c[u]);
                            }
                        }
                        let mut end = false;
                        for u in 0..SELL_U {
                            if c[u] == ELL_PAD {
                                end = true;
                            } else if !end {
                                sum += v[u] * xv[u];
                            }
                        }
                        if end {
                            break;
                        }
                        j += SELL_U as u64;
                    }
                    if t < rows {
                        let r = row_at(perm, t);
                        let old = if beta == 0.0 { 0.0 } else { ld_global(y.add(r)) };
                        stg(y.add(r), combine(alpha, sum, beta, old));
                    }
                }
                t += grid_size_1d();
            }
        }

        /// SELL-C-σ product, a warp per chunk and a lane per sorted row: the row's slots in
        /// order up to its first padding, then `y[row] = alpha · sum + beta · y[row]`.
        /// Deterministic; the same sums as CSR-scalar.
        ///
        /// # Safety
        /// A valid SELL-C-σ of `rows` rows (as `spmv_sell_fill` makes from a valid CSR), columns
        /// below `x`'s length; `y` holds `rows` values; any 1-D grid of whole warps.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $sell(a: SellArgs<$t>) {
            let SellArgs { wptr, iptr, base, perm, idx, val, x, y, rows, alpha, beta, .. } = a;
            // L2 hints: the matrix read once, x again and again.
            let h = Hints::new();
            // SAFETY: the caller's valid SELL-C-σ: every slot before the padding inside val.
            unsafe { $body(h, rows, wptr, iptr, base, perm, idx, |s| h.matrix(val.add(s as usize)), x, alpha, beta, y) }
        }

        /// SELL-VI product: `spmv_sell_*` with the value of slot `s` being `tab[vi[s]]` (a byte
        /// a slot instead of 4 or 8; the table of at most [`crate::VI_MAX`] values stays in
        /// L1), or `tab[0]` everywhere when `vi` is null (a matrix of one value). The same sums
        /// as `spmv_sell_*`.
        ///
        /// # Safety
        /// As `spmv_sell_*`; `vi` null or holding the slots' bytes (`spmv_sell_fill_u8`), `tab`
        /// 256 values.
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $sell_vi(a: SellArgs<$t>) {
            let SellArgs { wptr, iptr, base, perm, idx, vi, tab, x, y, rows, alpha, beta, .. } = a;
            let h = Hints::new();
            // SAFETY: the caller's valid SELL-VI: every slot before the padding inside vi (when
            // not null); a byte indexes the 256 values of tab.
            unsafe {
                if vi.is_null() {
                    let v = ldg(tab);
                    $body(h, rows, wptr, iptr, base, perm, idx, |_| v, x, alpha, beta, y)
                } else {
                    $body(h, rows, wptr, iptr, base, perm, idx, |s| ldg(tab.add(h.matrix(vi.add(s as usize)) as usize)), x, alpha, beta, y)
                }
            }
        }
    };
}

sell_fill!(f32, spmv_sell_fill_f32, 0.0);
sell_fill!(f64, spmv_sell_fill_f64, 0.0);
sell_fill!(u8, spmv_sell_fill_u8, 0);
sell_products!(f32, sell_body_f32, spmv_sell_f32, spmv_sell_vi_f32);
sell_products!(f64, sell_body_f64, spmv_sell_f64, spmv_sell_vi_f64);
