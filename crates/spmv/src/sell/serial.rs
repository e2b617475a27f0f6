//! SELL-C-σ on the host: the layout's specification, its twin conversion and product.
use spmv_kernels::{sell_index_units, sell_narrow, ELL_PAD, SELL_C, SELL_PAD16};
use sptrans_matrix::Csr;

use crate::{invalid, Error, Result, SpmvValue};

/// σ when [`SellOptions::sigma`] is `None` and the rows in their own order would pad more than
/// [`SELL_SORT_ABOVE`]: rows are sorted by decreasing length inside windows of this many. A
/// starting value, not yet fitted to measured times.
pub const SELL_SIGMA: u32 = 1024;

/// Slots per nonzero (as tenths) above which [`SellOptions::sigma`] `None` sorts: 11 = 1.1 slots
/// a nonzero, 10% padding.
pub const SELL_SORT_ABOVE: u64 = 11;

/// The most slots per nonzero SELL-C-σ accepts (beyond it: [`Error::TooMuchPadding`]; per row
/// position instead, 32 a chunk, when there are more of those than nonzeros): a chunk pads its
/// 32 rows to its longest, so one very long row among short ones would multiply the matrix's
/// memory.
pub const SELL_MAX_FILL: u64 = 4;

/// How a SELL-C-σ matrix is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SellOptions {
    /// σ: rows sorted by decreasing length (stably) inside windows of σ rows; 1 keeps them in
    /// order (no permutation is stored), otherwise a multiple of 32. `None` chooses: 1 when the
    /// rows in order pad to at most [`SELL_SORT_ABOVE`] tenths of a slot a nonzero, else
    /// [`SELL_SIGMA`].
    pub sigma: Option<u32>,
    /// Store each chunk's columns in 16 bits above its smallest column where they all fit
    /// ([`spmv_kernels::sell_narrow`]): 2 bytes a slot instead of 4.
    pub compress: bool,
}

impl Default for SellOptions {
    /// σ chosen, columns compressed.
    fn default() -> Self {
        Self { sigma: None, compress: true }
    }
}

impl SellOptions {
    /// [`Error::Invalid`] unless σ is 1 or a nonzero multiple of 32.
    pub(crate) fn check(&self) -> Result<()> {
        match self.sigma {
            Some(s) if s != 1 && (s == 0 || s as u64 % SELL_C != 0) => {
                Err(invalid("sell", format!("σ = {s}: it must be 1 or a multiple of {SELL_C}")))
            }
            _ => Ok(()),
        }
    }

    /// The σ chosen for `sigma: None`, for a matrix whose rows in order fill `slots` slots for
    /// `nnz` nonzeros.
    pub(crate) fn chosen_sigma(slots: u64, nnz: u64) -> u32 {
        if 10 * slots > SELL_SORT_ABOVE * nnz {
            SELL_SIGMA
        } else {
            1
        }
    }
}

/// [`Error::TooMuchPadding`] past [`SELL_MAX_FILL`], [`Error::Invalid`] when the index storage
/// could pass 2^32 units (`units`: its bound, 2 a slot row, from more than 2^31 slot rows).
pub(crate) fn check_slots(rows: u64, slots: u64, units: u64, nnz: u64) -> Result<()> {
    if slots > SELL_MAX_FILL * nnz.max(rows.div_ceil(SELL_C) * SELL_C) {
        return Err(Error::TooMuchPadding { format: "sell", slots, nnz });
    }
    if units > u32::MAX as u64 {
        return Err(invalid("sell", format!("{units} units of 64 index bytes do not fit 32-bit pointers; use csr-adaptive, coo or jds")));
    }
    Ok(())
}

/// A SELL-C-σ matrix (Kreutzer, Hager, Wellein, Fehske & Bishop 2014). Sorted position `t` holds
/// row `perm[t]` (row `t` when σ = 1 and `perm` is empty); the rows are sorted by decreasing
/// length, stably, inside windows of σ positions. Chunk `i` holds positions `32 i .. 32 i + 32`
/// and pads them to its longest row: `width = wptr[i + 1] − wptr[i]` slots a row, slot `j` of
/// lane `l` at `32 (wptr[i] + j) + l` of `val`, the row's entries first in CSR order, then
/// padding (value 0). Columns: when `iptr[i + 1] − iptr[i] = width` the chunk is narrow, its
/// columns `base[i]` plus the 16-bit offset at 16-bit element `32 (iptr[i] + j) + l` of `idx`
/// (little-endian halves of the words), padding [`SELL_PAD16`]; otherwise (`2 · width`) the
/// 32-bit column at word `16 iptr[i] + 32 j + l`, padding [`ELL_PAD`].
#[derive(Debug, Clone, PartialEq)]
pub struct Sell<T> {
    rows: u64,
    cols: u64,
    sigma: u32,
    perm: Vec<u32>,
    wptr: Vec<u32>,
    iptr: Vec<u32>,
    base: Vec<u32>,
    idx: Vec<u32>,
    val: Vec<T>,
}

/// The 16-bit element `e` of `words` (little-endian halves).
fn half(words: &[u32], e: usize) -> u16 {
    (words[e / 2] >> (16 * (e % 2))) as u16
}

impl<T: SpmvValue> Sell<T> {
    /// Checks the layout: σ, the permutation (inside its windows), the pointers (from 0,
    /// nondecreasing, index units `width` or `2 · width` a chunk), the array lengths, every
    /// column below `cols`, padding only after a row's entries, and only padding past the last
    /// row.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming what is wrong.
    #[allow(clippy::too_many_arguments)]
    pub fn try_new(
        rows: u64,
        cols: u64,
        sigma: u32,
        perm: Vec<u32>,
        wptr: Vec<u32>,
        iptr: Vec<u32>,
        base: Vec<u32>,
        idx: Vec<u32>,
        val: Vec<T>,
    ) -> Result<Self> {
        SellOptions { sigma: Some(sigma), compress: true }.check()?;
        let bad = |reason: String| Err(invalid("sell", reason));
        if sigma == 1 && !perm.is_empty() {
            return bad(format!("σ = 1 keeps the rows in order, but perm has {} entries", perm.len()));
        }
        if sigma > 1 {
            if perm.len() as u64 != rows {
                return bad(format!("perm has {} entries for {rows} rows", perm.len()));
            }
            let mut seen = vec![false; rows as usize];
            for (t, &p) in perm.iter().enumerate() {
                if p as u64 >= rows || std::mem::replace(&mut seen[p as usize], true) || p / sigma != t as u32 / sigma {
                    return bad(format!("perm[{t}] = {p} is out of range, repeated or outside its window of {sigma}"));
                }
            }
        }
        let chunks = rows.div_ceil(SELL_C) as usize;
        if wptr.len() != chunks + 1 || iptr.len() != chunks + 1 || base.len() != chunks {
            return bad(format!(
                "{chunks} chunks need {} pointers and {chunks} bases: wptr {}, iptr {}, base {}",
                chunks + 1,
                wptr.len(),
                iptr.len(),
                base.len()
            ));
        }
        if wptr[0] != 0 || iptr[0] != 0 {
            return bad("wptr and iptr must start at 0".into());
        }
        for i in 0..chunks {
            let width = wptr[i + 1].checked_sub(wptr[i]);
            let units = iptr[i + 1].checked_sub(iptr[i]);
            match (width, units) {
                (Some(w), Some(u)) if u == w || Some(u) == w.checked_mul(2) => {}
                _ => {
                    return bad(format!(
                        "chunk {i}: wptr {}..{} and iptr {}..{} are not a width and its index units",
                        wptr[i],
                        wptr[i + 1],
                        iptr[i],
                        iptr[i + 1]
                    ))
                }
            }
        }
        if val.len() as u64 != SELL_C * wptr[chunks] as u64 || idx.len() as u64 != 16 * iptr[chunks] as u64 {
            return bad(format!(
                "{} values and {} index words for {} slots and {} units",
                val.len(),
                idx.len(),
                SELL_C * wptr[chunks] as u64,
                iptr[chunks]
            ));
        }
        let s = Self { rows, cols, sigma, perm, wptr, iptr, base, idx, val };
        for i in 0..chunks {
            for lane in 0..SELL_C as usize {
                let mut ended = (i * SELL_C as usize + lane) as u64 >= rows;
                for j in 0..s.width(i) {
                    match s.column(i, j, lane) {
                        None => ended = true,
                        Some(c) if !ended && (c as u64) < cols => {}
                        Some(c) => return bad(format!("chunk {i}, lane {lane}, slot {j}: column {c} (of {cols}) after padding or out of range")),
                    }
                }
            }
        }
        Ok(s)
    }

    /// The twin conversion.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a σ that is neither 1 nor a multiple of 32;
    /// [`Error::TooMuchPadding`] past [`SELL_MAX_FILL`].
    pub fn from_csr(a: &Csr<u32, T>, options: SellOptions) -> Result<Self> {
        options.check()?;
        let len = |r: u32| a.ptr()[r as usize + 1] - a.ptr()[r as usize];
        let rows = a.rows();
        let chunks = rows.div_ceil(SELL_C) as usize;
        let order: Vec<u32> = (0..rows as u32).collect();
        // The rows in order are measured only when σ is to be chosen.
        let sigma = options.sigma.unwrap_or_else(|| {
            let widths: u64 = order.chunks(SELL_C as usize).map(|c| c.iter().map(|&r| len(r)).max().unwrap_or(0) as u64).sum();
            SellOptions::chosen_sigma(SELL_C * widths, a.nnz())
        });
        let mut perm = vec![];
        if sigma > 1 {
            perm = order.clone();
            for w in perm.chunks_mut(sigma as usize) {
                w.sort_by_key(|&r| std::cmp::Reverse(len(r)));
            }
        }
        let sorted = if sigma > 1 { &perm } else { &order };
        // Per chunk: width, smallest and largest column.
        let shape: Vec<(u32, u32, u32)> = sorted
            .chunks(SELL_C as usize)
            .map(|c| {
                let width = c.iter().map(|&r| len(r)).max().unwrap_or(0);
                let cols_of = c.iter().flat_map(|&r| &a.idx()[a.ptr()[r as usize] as usize..a.ptr()[r as usize + 1] as usize]);
                let (lo, hi) = cols_of.fold((u32::MAX, 0), |(lo, hi), &c| (lo.min(c), hi.max(c)));
                (width, lo, hi)
            })
            .collect();
        let narrow = |&(w, lo, hi): &(u32, u32, u32)| options.compress && sell_narrow(w, lo, hi);
        let widths: u64 = shape.iter().map(|s| s.0 as u64).sum();
        check_slots(rows, SELL_C * widths, 2 * widths, a.nnz())?;
        let (mut wptr, mut iptr, mut base) = (vec![0u32], vec![0u32], Vec::with_capacity(chunks));
        for s in &shape {
            base.push(if narrow(s) { s.1 } else { 0 });
            wptr.push(wptr[wptr.len() - 1] + s.0);
            iptr.push(iptr[iptr.len() - 1] + sell_index_units(s.0, narrow(s)));
        }
        let total = SELL_C as usize * *wptr.last().unwrap_or(&0) as usize;
        let mut val = vec![T::default(); total];
        let mut idx = vec![0u32; 16 * *iptr.last().unwrap_or(&0) as usize];
        for (i, c) in sorted.chunks(SELL_C as usize).enumerate() {
            let width = (wptr[i + 1] - wptr[i]) as usize;
            let narrow = iptr[i + 1] - iptr[i] == width as u32;
            for lane in 0..SELL_C as usize {
                let entries = c.get(lane).map_or(0..0, |&r| a.ptr()[r as usize] as usize..a.ptr()[r as usize + 1] as usize);
                for j in 0..width {
                    let k = entries.start + j;
                    let real = k < entries.end;
                    if real {
                        val[SELL_C as usize * (wptr[i] as usize + j) + lane] = a.vals()[k];
                    }
                    if narrow {
                        let e = SELL_C as usize * (iptr[i] as usize + j) + lane;
                        let h = if real { (a.idx()[k] - base[i]) as u16 } else { SELL_PAD16 };
                        idx[e / 2] |= (h as u32) << (16 * (e % 2));
                    } else {
                        idx[16 * iptr[i] as usize + SELL_C as usize * j + lane] = if real { a.idx()[k] } else { ELL_PAD };
                    }
                }
            }
        }
        Ok(Self { rows, cols: a.cols(), sigma, perm, wptr, iptr, base, idx, val })
    }

    /// Every padding slot's value set to 0 (SELL-VI's download: its padding bytes index the
    /// table's first value, SELL-C-σ's padding holds 0).
    pub(super) fn zero_padding(&mut self) {
        for i in 0..self.base.len() {
            let w0 = self.wptr[i] as usize;
            for j in 0..self.width(i) {
                for lane in 0..SELL_C as usize {
                    if self.column(i, j, lane).is_none() {
                        self.val[SELL_C as usize * (w0 + j) + lane] = T::default();
                    }
                }
            }
        }
    }

    /// Slots a row of chunk `i`.
    fn width(&self, i: usize) -> usize {
        (self.wptr[i + 1] - self.wptr[i]) as usize
    }

    /// The column of slot `j` of lane `lane` in chunk `i`, `None` for padding.
    fn column(&self, i: usize, j: usize, lane: usize) -> Option<u32> {
        let w = self.width(i);
        if self.iptr[i + 1] - self.iptr[i] == w as u32 {
            let d = half(&self.idx, SELL_C as usize * (self.iptr[i] as usize + j) + lane);
            (d != SELL_PAD16).then(|| self.base[i].saturating_add(d as u32))
        } else {
            let c = self.idx[16 * self.iptr[i] as usize + SELL_C as usize * j + lane];
            (c != ELL_PAD).then_some(c)
        }
    }

    /// The twin product: each sorted row along its slots (the same sums as
    /// [`crate::serial::spmv`]).
    ///
    /// # Panics
    /// When `x` or `y` has the wrong length.
    pub fn spmv(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        assert_eq!(x.len() as u64, self.cols, "x length");
        assert_eq!(y.len() as u64, self.rows, "y length");
        for t in 0..self.rows as usize {
            let (i, lane) = (t / SELL_C as usize, t % SELL_C as usize);
            let mut sum = T::default();
            for j in 0..self.width(i) {
                let Some(c) = self.column(i, j, lane) else { break };
                sum = sum + self.val[SELL_C as usize * (self.wptr[i] as usize + j) + lane] * x[c as usize];
            }
            let r = if self.sigma > 1 { self.perm[t] as usize } else { t };
            y[r] = spmv_kernels::combine(alpha, sum, beta, y[r]);
        }
    }

    /// σ (1: rows in order).
    pub fn sigma(&self) -> u32 {
        self.sigma
    }
    /// The row at each sorted position (empty when σ = 1).
    pub fn perm(&self) -> &[u32] {
        &self.perm
    }
    /// Chunk slot pointers, in rows of 32 slots (`chunks + 1`).
    pub fn wptr(&self) -> &[u32] {
        &self.wptr
    }
    /// Chunk index pointers, in units of 16 words (`chunks + 1`).
    pub fn iptr(&self) -> &[u32] {
        &self.iptr
    }
    /// Base columns of the narrow chunks (0 for the others).
    pub fn base(&self) -> &[u32] {
        &self.base
    }
    /// Column storage words.
    pub fn idx(&self) -> &[u32] {
        &self.idx
    }
    /// Values, padding included.
    pub fn val(&self) -> &[T] {
        &self.val
    }
    /// Chunks whose columns are stored in 16 bits.
    pub fn narrow_chunks(&self) -> usize {
        (0..self.base.len()).filter(|&i| self.width(i) > 0 && self.iptr[i + 1] - self.iptr[i] == self.width(i) as u32).count()
    }
    /// Bytes: `4 · perm` + `4 · (2 (chunks + 1) + chunks)` pointers and bases + `4 ·` index words
    /// + values (padding included).
    pub fn footprint_bytes(&self) -> u64 {
        footprint::<T>(self.perm.len() as u64, self.base.len() as u64, self.idx.len() as u64, self.val.len() as u64)
    }
}

/// [`Sell::footprint_bytes`] from the array lengths.
pub(crate) fn footprint<T: SpmvValue>(perm: u64, chunks: u64, words: u64, slots: u64) -> u64 {
    4 * perm + 4 * (3 * chunks + 2) + 4 * words + T::BYTES as u64 * slots
}
