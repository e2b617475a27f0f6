//! JDS (jagged diagonal storage) on the host.
use sptrans_matrix::Csr;

use crate::{invalid, Result, SpmvValue};

/// A JDS matrix: rows sorted by length (longest first, ties by row), `perm[i]` the row at sorted
/// position `i`; jagged diagonal `d` (`jd_ptr[d] .. jd_ptr[d + 1]`) holds the `d`-th entry of
/// every sorted row longer than `d`, in sorted order; each row's entries keep their CSR order.
#[derive(Debug, Clone, PartialEq)]
pub struct Jds<T> {
    rows: u64,
    cols: u64,
    perm: Vec<u32>,
    jd_ptr: Vec<u32>,
    col: Vec<u32>,
    val: Vec<T>,
}

impl<T: SpmvValue> Jds<T> {
    /// Checks the layout: `perm` a permutation of the rows, `jd_ptr` from 0 to the entry count
    /// with nonincreasing widths (none above `rows`, none zero), columns below `cols`.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] naming what is wrong.
    pub fn try_new(rows: u64, cols: u64, perm: Vec<u32>, jd_ptr: Vec<u32>, col: Vec<u32>, val: Vec<T>) -> Result<Self> {
        if perm.len() as u64 != rows {
            return Err(invalid("jds", format!("perm has {} entries for {rows} rows", perm.len())));
        }
        let mut seen = vec![false; rows as usize];
        for (i, &p) in perm.iter().enumerate() {
            if p as u64 >= rows || std::mem::replace(&mut seen[p as usize], true) {
                return Err(invalid("jds", format!("perm[{i}] = {p} is out of range or repeated")));
            }
        }
        if jd_ptr.first() != Some(&0) || *jd_ptr.last().unwrap_or(&0) as usize != col.len() || col.len() != val.len() {
            return Err(invalid("jds", format!("jd_ptr must run from 0 to the {} entries ({} values)", col.len(), val.len())));
        }
        let mut prev = rows;
        for (d, w) in jd_ptr.windows(2).enumerate() {
            let width = w[1].checked_sub(w[0]).map(u64::from).unwrap_or(u64::MAX);
            if width == 0 || width > prev {
                return Err(invalid("jds", format!("diagonal {d} has width {width} (after {prev})")));
            }
            prev = width;
        }
        if let Some(k) = col.iter().position(|&c| c as u64 >= cols) {
            return Err(invalid("jds", format!("entry {k} has column {} ≥ {cols}", col[k])));
        }
        Ok(Self { rows, cols, perm, jd_ptr, col, val })
    }

    /// The twin conversion (a stable sort of the rows by decreasing length).
    pub fn from_csr(a: &Csr<u32, T>) -> Self {
        let len = |r: u32| a.ptr()[r as usize + 1] - a.ptr()[r as usize];
        let mut perm: Vec<u32> = (0..a.rows() as u32).collect();
        perm.sort_by_key(|&r| std::cmp::Reverse(len(r)));
        let max = perm.first().map_or(0, |&r| len(r));
        let mut jd_ptr = vec![0u32];
        let (mut col, mut val) = (Vec::with_capacity(a.nnz() as usize), Vec::with_capacity(a.nnz() as usize));
        for d in 0..max {
            for &r in perm.iter().take_while(|&&r| len(r) > d) {
                let p = (a.ptr()[r as usize] + d) as usize;
                col.push(a.idx()[p]);
                val.push(a.vals()[p]);
            }
            jd_ptr.push(col.len() as u32);
        }
        Self { rows: a.rows(), cols: a.cols(), perm, jd_ptr, col, val }
    }

    /// The twin product: each sorted row along its diagonals (the same sums as
    /// [`crate::serial::spmv`]).
    ///
    /// # Panics
    /// When `x` or `y` has the wrong length.
    pub fn spmv(&self, alpha: T, x: &[T], beta: T, y: &mut [T]) {
        assert_eq!(x.len() as u64, self.cols, "x length");
        assert_eq!(y.len() as u64, self.rows, "y length");
        for (i, &r) in self.perm.iter().enumerate() {
            let mut sum = T::default();
            for w in self.jd_ptr.windows(2) {
                if (w[1] - w[0]) as usize <= i {
                    break;
                }
                let s = w[0] as usize + i;
                sum = sum + self.val[s] * x[self.col[s] as usize];
            }
            y[r as usize] = spmv_kernels::combine(alpha, sum, beta, y[r as usize]);
        }
    }

    /// The row at each sorted position.
    pub fn perm(&self) -> &[u32] {
        &self.perm
    }
    /// Diagonal pointers (`diagonals + 1` entries).
    pub fn jd_ptr(&self) -> &[u32] {
        &self.jd_ptr
    }
    /// Columns, diagonal by diagonal.
    pub fn col(&self) -> &[u32] {
        &self.col
    }
    /// Values, diagonal by diagonal.
    pub fn val(&self) -> &[T] {
        &self.val
    }
    /// Bytes: `4 · rows` (perm) + `4 · (diagonals + 1)` + `(4 + size of T) · nnz`.
    pub fn footprint_bytes(&self) -> u64 {
        4 * self.rows + 4 * self.jd_ptr.len() as u64 + self.col.len() as u64 * (4 + T::BYTES as u64)
    }
}
