//! Sliced COO (SCOO) on the host.
use spmv_kernels::SCOO_MAX_SLICE_ROWS;
use sptrans_matrix::Csr;

use crate::{invalid, Result, SpmvValue};

/// The slice height the GPU conversion picks: the largest power of two ≤
/// [`SCOO_MAX_SLICE_ROWS`] that still gives at least `4 · sms` slices (every SM busy), at least
/// 32.
///
/// ```
/// assert_eq!(gpu_spmv::scoo::slice_rows(1_000_000, 132), 1024);
/// assert_eq!(gpu_spmv::scoo::slice_rows(100_000, 132), 128);
/// assert_eq!(gpu_spmv::scoo::slice_rows(10, 132), 32);
/// ```
pub fn slice_rows(rows: u64, sms: u32) -> u32 {
    let mut s = SCOO_MAX_SLICE_ROWS;
    while s > 32 && rows.div_ceil(s as u64) < 4 * sms as u64 {
        s /= 2;
    }
    s
}

/// A slice height that is a power of two ≤ [`SCOO_MAX_SLICE_ROWS`], else [`crate::Error::Invalid`].
pub(crate) fn check_slice_rows(slice_rows: u32) -> Result<()> {
    if !slice_rows.is_power_of_two() || slice_rows > SCOO_MAX_SLICE_ROWS {
        return Err(invalid("scoo", format!("slice height {slice_rows} is not a power of two ≤ {SCOO_MAX_SLICE_ROWS}")));
    }
    Ok(())
}

/// A sliced COO matrix: rows in slices of `slice_rows`; slice `s`'s entries
/// (`slice_ptr[s] .. slice_ptr[s + 1]`) sorted by column, stably (equal columns by row), each
/// with its row inside the slice.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoo<T> {
    rows: u64,
    cols: u64,
    slice_rows: u32,
    slice_ptr: Vec<u32>,
    row: Vec<u16>,
    col: Vec<u32>,
    val: Vec<T>,
}

impl<T: SpmvValue> Scoo<T> {
    /// Checks the layout: `slice_rows` a power of two ≤ [`SCOO_MAX_SLICE_ROWS`], one pointer
    /// per slice plus one from 0 to the entry count, rows inside their slice and the matrix,
    /// columns below `cols`.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] naming what is wrong.
    pub fn try_new(rows: u64, cols: u64, slice_rows: u32, slice_ptr: Vec<u32>, row: Vec<u16>, col: Vec<u32>, val: Vec<T>) -> Result<Self> {
        check_slice_rows(slice_rows)?;
        let slices = rows.div_ceil(slice_rows as u64);
        if slice_ptr.len() as u64 != slices + 1
            || slice_ptr[0] != 0
            || *slice_ptr.last().unwrap_or(&0) as usize != col.len()
            || row.len() != col.len()
            || val.len() != col.len()
        {
            return Err(invalid(
                "scoo",
                format!("{} slice pointers for {slices} slices, {} rows / {} columns / {} values", slice_ptr.len(), row.len(), col.len(), val.len()),
            ));
        }
        for (s, w) in slice_ptr.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(invalid("scoo", format!("slice pointer {} decreases", s + 1)));
            }
            for k in w[0] as usize..w[1] as usize {
                let r = s as u64 * slice_rows as u64 + row[k] as u64;
                if row[k] as u32 >= slice_rows || r >= rows || col[k] as u64 >= cols {
                    return Err(invalid("scoo", format!("entry {k} (row {r}, column {}) out of range", col[k])));
                }
            }
        }
        Ok(Self { rows, cols, slice_rows, slice_ptr, row, col, val })
    }

    /// The twin conversion with slices of `slice_rows` (a power of two ≤
    /// [`SCOO_MAX_SLICE_ROWS`]).
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] for a bad slice height.
    pub fn from_csr(a: &Csr<u32, T>, slice_rows: u32) -> Result<Self> {
        check_slice_rows(slice_rows)?;
        let s = slice_rows as u64;
        let slices = a.rows().div_ceil(s);
        let mut slice_ptr = Vec::with_capacity(slices as usize + 1);
        let (mut row, mut col, mut val) = (vec![], vec![], vec![]);
        for sl in 0..slices {
            slice_ptr.push(col.len() as u32);
            let (r0, r1) = (sl * s, ((sl + 1) * s).min(a.rows()));
            let mut entries: Vec<(u32, u16, T)> = vec![];
            for r in r0..r1 {
                for p in a.ptr()[r as usize] as usize..a.ptr()[r as usize + 1] as usize {
                    entries.push((a.idx()[p], (r - r0) as u16, a.vals()[p]));
                }
            }
            entries.sort_by_key(|e| e.0);
            for (c, r, v) in entries {
                row.push(r);
                col.push(c);
                val.push(v);
            }
        }
        slice_ptr.push(col.len() as u32);
        Ok(Self { rows: a.rows(), cols: a.cols(), slice_rows, slice_ptr, row, col, val })
    }

    /// The twin product: each slice's entries added in order to their rows, then `y = alpha ·
    /// sum + beta · y`.
    ///
    /// # Panics
    /// When `x` or `y` has the wrong length.
    pub fn spmv(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        assert_eq!(x.len() as u64, self.cols, "x length");
        assert_eq!(y.len() as u64, self.rows, "y length");
        let mut sum = vec![T::default(); self.rows as usize];
        for (s, w) in self.slice_ptr.windows(2).enumerate() {
            for k in w[0] as usize..w[1] as usize {
                let r = s * self.slice_rows as usize + self.row[k] as usize;
                sum[r] = sum[r] + self.val[k] * x[self.col[k] as usize];
            }
        }
        for (yr, s) in y.iter_mut().zip(sum) {
            *yr = spmv_kernels::combine(alpha, s, beta, *yr);
        }
    }

    /// Rows per slice.
    pub fn slice_rows(&self) -> u32 {
        self.slice_rows
    }
    /// Slice pointers.
    pub fn slice_ptr(&self) -> &[u32] {
        &self.slice_ptr
    }
    /// Row of each entry inside its slice.
    pub fn row(&self) -> &[u16] {
        &self.row
    }
    /// Columns.
    pub fn col(&self) -> &[u32] {
        &self.col
    }
    /// Values.
    pub fn val(&self) -> &[T] {
        &self.val
    }
    /// Bytes: `4 · (slices + 1)` + `(2 + 4 + size of T) · nnz`.
    pub fn footprint_bytes(&self) -> u64 {
        4 * self.slice_ptr.len() as u64 + self.col.len() as u64 * (6 + T::BYTES as u64)
    }
}
