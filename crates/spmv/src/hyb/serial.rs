//! ELL-COO (HYB) on the host: ELL of a width chosen from the row-length histogram for the
//! regular part, COO for the overflow of longer rows.
use sptrans_matrix::Csr;

use crate::ell::Ell;
use crate::{invalid, Result, SpmvValue};

/// The ELL width of HYB from the row-length histogram (`counts[l]` = rows of length `l`), after
/// Bell & Garland (SC'09): the largest `w` such that at least a third of the rows (and at least
/// one) have `w` or more nonzeros. ELL slots cost about a third of a COO entry's time, so a
/// column of slots pays while a third of it is filled. Rows not counted in `counts` are taken as
/// longer than its last bin.
///
/// ```
/// // 6 rows: lengths 1, 1, 2, 2, 3 and one of 40 (beyond the bins).
/// let counts = [0u32, 2, 2, 1];
/// assert_eq!(gpu_spmv::hyb::width(&counts, 6), 3);
/// // Rows 1, 1, 1, 1, 1, 1000: width 1, the long row to COO.
/// assert_eq!(gpu_spmv::hyb::width(&[0, 5], 6), 1);
/// ```
pub fn width(counts: &[u32], rows: u64) -> u64 {
    let need = rows.div_ceil(3).max(1);
    let mut at_least = rows.saturating_sub(counts.iter().map(|&c| c as u64).sum());
    for l in (1..counts.len()).rev() {
        at_least += counts[l] as u64;
        if at_least >= need {
            return l as u64;
        }
    }
    0
}

/// An ELL-COO matrix: the first `width` entries of each row in ELL, the rest in COO (rows
/// ascending, each row's order kept).
#[derive(Debug, Clone, PartialEq)]
pub struct Hyb<T> {
    ell: Ell<T>,
    coo_row: Vec<u32>,
    coo_col: Vec<u32>,
    coo_val: Vec<T>,
}

impl<T: SpmvValue> Hyb<T> {
    /// Checks the parts: a valid ELL, COO arrays of one length with rows and columns in range,
    /// rows nondecreasing.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] naming the first bad entry.
    pub fn try_new(ell: Ell<T>, coo_row: Vec<u32>, coo_col: Vec<u32>, coo_val: Vec<T>) -> Result<Self> {
        if coo_row.len() != coo_col.len() || coo_row.len() != coo_val.len() {
            return Err(invalid("hyb", format!("COO part: {} rows, {} columns, {} values", coo_row.len(), coo_col.len(), coo_val.len())));
        }
        for (i, (&r, &c)) in coo_row.iter().zip(&coo_col).enumerate() {
            if r as u64 >= ell.rows() || c as u64 >= ell.cols() || (i > 0 && r < coo_row[i - 1]) {
                return Err(invalid("hyb", format!("COO entry {i} ({r}, {c}) out of range or out of row order")));
            }
        }
        Ok(Self { ell, coo_row, coo_col, coo_val })
    }

    /// The twin conversion, the width from [`width`].
    pub fn from_csr(a: &Csr<u32, T>) -> Self {
        let lens: Vec<u32> = a.ptr().windows(2).map(|w| w[1] - w[0]).collect();
        let max = lens.iter().copied().max().unwrap_or(0);
        let mut counts = vec![0u32; max as usize + 1];
        for &l in &lens {
            counts[l as usize] += 1;
        }
        let w = width(&counts, a.rows());
        let ell = Ell::from_csr_width(a, w);
        let (mut coo_row, mut coo_col, mut coo_val) = (vec![], vec![], vec![]);
        for r in 0..a.rows() as usize {
            for p in a.ptr()[r] as usize + w as usize..a.ptr()[r + 1] as usize {
                coo_row.push(r as u32);
                coo_col.push(a.idx()[p]);
                coo_val.push(a.vals()[p]);
            }
        }
        Self { ell, coo_row, coo_col, coo_val }
    }

    /// The twin product: the ELL part (with `beta`), then the COO entries added in order.
    ///
    /// # Panics
    /// When `x` or `y` has the wrong length.
    pub fn spmv(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        self.ell.spmv(alpha, x, beta, y);
        for ((&r, &c), &v) in self.coo_row.iter().zip(&self.coo_col).zip(&self.coo_val) {
            y[r as usize] = y[r as usize] + alpha * v * x[c as usize];
        }
    }

    /// The ELL part.
    pub fn ell(&self) -> &Ell<T> {
        &self.ell
    }
    /// The COO part: rows, columns, values.
    pub fn coo(&self) -> (&[u32], &[u32], &[T]) {
        (&self.coo_row, &self.coo_col, &self.coo_val)
    }
    /// Bytes: the ELL part's plus `8 + size of T` per COO entry.
    pub fn footprint_bytes(&self) -> u64 {
        self.ell.footprint_bytes() + self.coo_row.len() as u64 * (8 + T::BYTES as u64)
    }
}
