//! ELL on the host: the type, its validating constructor, the twin conversion from CSR, the
//! twin product and the footprint.
use spmv_kernels::ELL_PAD;
use sptrans_matrix::Csr;

use crate::{invalid, Error, Result, SpmvValue};

/// The most ELL slots (`rows · width`, padding included) allowed per nonzero (and at least
/// `ELL_MAX_FILL` slots in all): beyond it [`Ell::from_csr`] and the GPU conversion refuse with
/// [`Error::TooMuchPadding`] (use HYB, which bounds the padding, or a CSR format).
pub const ELL_MAX_FILL: u64 = 16;

/// An ELL matrix: every row padded to `width` slots, stored column-major (slot `(r, k)` at `k ·
/// rows + r`); padding has column [`ELL_PAD`] and value 0 and follows a row's entries, which
/// keep their CSR order.
#[derive(Debug, Clone, PartialEq)]
pub struct Ell<T> {
    rows: u64,
    cols: u64,
    width: u64,
    col: Vec<u32>,
    val: Vec<T>,
}

/// Whether an ELL of `rows · width` slots for `nnz` nonzeros is within [`ELL_MAX_FILL`].
pub(crate) fn check_padding(rows: u64, width: u64, nnz: u64) -> Result<()> {
    let slots = rows.saturating_mul(width);
    if slots > ELL_MAX_FILL * nnz.max(1) {
        return Err(Error::TooMuchPadding { format: "ell", slots, nnz });
    }
    Ok(())
}

impl<T: SpmvValue> Ell<T> {
    /// Checks the layout: `rows · width` slots, columns below `cols` or padding, padding only
    /// after a row's entries and with value 0.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the first bad slot.
    pub fn try_new(rows: u64, cols: u64, width: u64, col: Vec<u32>, val: Vec<T>) -> Result<Self> {
        let slots = rows.checked_mul(width).ok_or_else(|| invalid("ell", format!("{rows} rows × width {width} overflows")))?;
        if col.len() as u64 != slots || val.len() as u64 != slots {
            return Err(invalid("ell", format!("{} columns and {} values for {slots} slots", col.len(), val.len())));
        }
        for r in 0..rows {
            let mut padded = false;
            for k in 0..width {
                let s = (k * rows + r) as usize;
                match col[s] {
                    ELL_PAD => {
                        if val[s] != T::default() {
                            return Err(invalid("ell", format!("padding slot ({r}, {k}) has a nonzero value")));
                        }
                        padded = true;
                    }
                    c if padded => return Err(invalid("ell", format!("slot ({r}, {k}) has column {c} after padding"))),
                    c if c as u64 >= cols => return Err(invalid("ell", format!("slot ({r}, {k}) has column {c} ≥ {cols}"))),
                    _ => {}
                }
            }
        }
        Ok(Self { rows, cols, width, col, val })
    }

    /// The twin conversion: width = the longest row.
    ///
    /// # Errors
    /// [`Error::TooMuchPadding`] past [`ELL_MAX_FILL`].
    pub fn from_csr(a: &Csr<u32, T>) -> Result<Self> {
        let width = a.ptr().windows(2).map(|w| (w[1] - w[0]) as u64).max().unwrap_or(0);
        check_padding(a.rows(), width, a.nnz())?;
        Ok(Self::from_csr_width(a, width))
    }

    /// A row's first `width` entries (HYB's ELL part; the rest is dropped).
    pub(crate) fn from_csr_width(a: &Csr<u32, T>, width: u64) -> Self {
        let rows = a.rows();
        let slots = (rows * width) as usize;
        let (mut col, mut val) = (vec![ELL_PAD; slots], vec![T::default(); slots]);
        for r in 0..rows as usize {
            let (b, e) = (a.ptr()[r] as usize, a.ptr()[r + 1] as usize);
            for (k, p) in (b..e).take(width as usize).enumerate() {
                col[k * rows as usize + r] = a.idx()[p];
                val[k * rows as usize + r] = a.vals()[p];
            }
        }
        Self { rows, cols: a.cols(), width, col, val }
    }

    /// The twin product, each row in order (the same sums as [`crate::serial::spmv`]). `y`'s
    /// old values are taken as given (HYB adds its COO part after).
    ///
    /// # Panics
    /// When `x` or `y` has the wrong length.
    pub fn spmv(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        assert_eq!(x.len() as u64, self.cols, "x length");
        assert_eq!(y.len() as u64, self.rows, "y length");
        for (r, yr) in y.iter_mut().enumerate() {
            let mut sum = T::default();
            for k in 0..self.width as usize {
                let s = k * self.rows as usize + r;
                if self.col[s] == ELL_PAD {
                    break;
                }
                sum = sum + self.val[s] * x[self.col[s] as usize];
            }
            *yr = spmv_kernels::combine(alpha, sum, beta, *yr);
        }
    }

    /// Rows.
    pub fn rows(&self) -> u64 {
        self.rows
    }
    /// Columns.
    pub fn cols(&self) -> u64 {
        self.cols
    }
    /// Slots per row.
    pub fn width(&self) -> u64 {
        self.width
    }
    /// Column of every slot (column-major), [`ELL_PAD`] for padding.
    pub fn col(&self) -> &[u32] {
        &self.col
    }
    /// Value of every slot (column-major), 0 for padding.
    pub fn val(&self) -> &[T] {
        &self.val
    }
    /// Bytes: `rows · width · (4 + size of T)`, padding included.
    pub fn footprint_bytes(&self) -> u64 {
        self.rows * self.width * (4 + T::BYTES as u64)
    }
}
