//! The serial twin: the CSRC layout on the host ([`Csrc`]: validating constructor, conversion
//! from CSR, footprint, products in CSRC order) and the specification of the products on a plain
//! CSR ([`multiply`]), with the bound within which a GPU result must agree ([`error_bound`]).
//!
//! Dense blocks are column-major and packed: for `Y = A·X` with `A` of `m × n`, `X` is `n × k`
//! (`X[i][c]` at `i + c·n`) and `Y` is `m × k`; for `V = Aᵀ·U`, `U` is `m × k` and `V` `n × k`.
//!
//! ```
//! use gpu_csrc::{serial, Op};
//! use sptrans_matrix::Csr;
//! // A = [[1, 2], [0, 3]]; two vectors: X = [[1, 0], [1, 1]] (columns (1, 1) and (0, 1)).
//! let a = Csr::try_new(2, 2, vec![0u32, 2, 3], vec![0, 1, 1], vec![1.0f64, 2.0, 3.0]).unwrap();
//! let x = [1.0, 1.0, 0.0, 1.0];
//! let mut y = [0.0; 4];
//! serial::multiply(&a, Op::NoTranspose, 1.0, &x, 2, 0.0, &mut y);
//! assert_eq!(y, [3.0, 3.0, 2.0, 3.0]);
//! let mut v = [0.0; 4];
//! serial::multiply(&a, Op::Transpose, 1.0, &x, 2, 0.0, &mut v);
//! assert_eq!(v, [1.0, 5.0, 0.0, 3.0]);
//! // The same products in CSRC order.
//! let c = serial::Csrc::from_csr(&a);
//! let mut w = [0.0; 4];
//! c.multiply(Op::Transpose, 1.0, &x, 2, 0.0, &mut w);
//! assert_eq!(w, v);
//! ```
use csrc_kernels::{row_blocks, BLOCK_ROWS};
use gpu_spmv::SpmvValue;
use sptrans_matrix::Csr;

use crate::{invalid, Op, Result};

/// A matrix in CSRC: rows in blocks of [`BLOCK_ROWS`]; `p[g]` is the first nonzero of row block
/// `g` (`⌈rows / BLOCK_ROWS⌉ + 1` entries from 0 to the nonzero count); for each nonzero `r`
/// its row inside its block, `j` its column and `v` its value; inside a row block the nonzeros
/// are sorted by column, stably (equal columns in row order).
#[derive(Debug, Clone, PartialEq)]
pub struct Csrc<T> {
    rows: u64,
    cols: u64,
    p: Vec<u32>,
    r: Vec<u8>,
    j: Vec<u32>,
    v: Vec<T>,
}

impl<T: SpmvValue> Csrc<T> {
    /// Checks the layout: one pointer per row block plus one, from 0 to the nonzero count,
    /// nondecreasing; rows inside their block and the matrix; columns below `cols` and
    /// nondecreasing inside each block; equal lengths.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] naming what is wrong and where.
    pub fn try_new(rows: u64, cols: u64, p: Vec<u32>, r: Vec<u8>, j: Vec<u32>, v: Vec<T>) -> Result<Self> {
        let blocks = row_blocks(rows);
        if p.len() as u64 != blocks + 1 || p[0] != 0 || *p.last().unwrap_or(&0) as usize != j.len() || r.len() != j.len() || v.len() != j.len() {
            return Err(invalid(format!(
                "{} block pointers for {blocks} row blocks, {} rows / {} columns / {} values",
                p.len(),
                r.len(),
                j.len(),
                v.len()
            )));
        }
        for (g, w) in p.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(invalid(format!("block pointer {} decreases ({} after {})", g + 1, w[1], w[0])));
            }
            let r0 = g as u64 * BLOCK_ROWS as u64;
            for h in w[0] as usize..w[1] as usize {
                if r0 + r[h] as u64 >= rows {
                    return Err(invalid(format!("nonzero {h}: row {} of block {g} is past the last row {}", r[h], rows.saturating_sub(1))));
                }
                if j[h] as u64 >= cols {
                    return Err(invalid(format!("nonzero {h}: column {} ≥ cols = {cols}", j[h])));
                }
                if h > w[0] as usize && j[h] < j[h - 1] {
                    return Err(invalid(format!("nonzero {h}: column {} after {} in block {g} (not sorted by column)", j[h], j[h - 1])));
                }
            }
        }
        Ok(Self { rows, cols, p, r, j, v })
    }

    /// The twin conversion: each row block's nonzeros in CSR order, stably sorted by column.
    pub fn from_csr(a: &Csr<u32, T>) -> Self {
        let rows = a.rows();
        let blocks = row_blocks(rows);
        let p: Vec<u32> = (0..=blocks).map(|g| a.ptr()[(g * BLOCK_ROWS as u64).min(rows) as usize]).collect();
        let (mut r, mut j, mut v) = (Vec::with_capacity(a.idx().len()), Vec::with_capacity(a.idx().len()), Vec::with_capacity(a.idx().len()));
        for g in 0..blocks as usize {
            let mut order: Vec<usize> = (p[g] as usize..p[g + 1] as usize).collect();
            order.sort_by_key(|&h| a.idx()[h]);
            let row_start = a.ptr()[g * BLOCK_ROWS as usize..((g + 1) * BLOCK_ROWS as usize).min(rows as usize) + 1].to_vec();
            for h in order {
                let local = row_start.partition_point(|&s| s as usize <= h) - 1;
                r.push(local as u8);
                j.push(a.idx()[h]);
                v.push(a.vals()[h]);
            }
        }
        Self { rows, cols: a.cols(), p, r, j, v }
    }

    /// Rows.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Columns.
    pub fn cols(&self) -> u64 {
        self.cols
    }

    /// Nonzeros.
    pub fn nnz(&self) -> u64 {
        self.j.len() as u64
    }

    /// The arrays `(p, r, j, v)`.
    pub fn parts(&self) -> (&[u32], &[u8], &[u32], &[T]) {
        (&self.p, &self.r, &self.j, &self.v)
    }

    /// Bytes of the four arrays: `4 (⌈rows / 256⌉ + 1) + nnz (1 + 4 + value bytes)` (CSR:
    /// `4 (rows + 1) + nnz (4 + value bytes)`).
    pub fn footprint_bytes(&self) -> u64 {
        csrc_bytes(self.rows, self.nnz(), T::BYTES as u64)
    }

    /// `out = alpha · op(A) · x + beta · out` in CSRC order (block by block, nonzeros in stored
    /// order, in `T`), `k` vectors; `out` is not read when `beta == 0`.
    ///
    /// # Panics
    /// When `x` or `out` do not hold `k` vectors of the right length.
    pub fn multiply(&self, op: Op, alpha: T, x: &[T], k: usize, beta: T, out: &mut [T]) {
        let (m, n) = (self.rows as usize, self.cols as usize);
        let (xn, on) = if op == Op::NoTranspose { (n, m) } else { (m, n) };
        assert_eq!(x.len(), xn * k, "x holds {k} vectors of {xn}");
        assert_eq!(out.len(), on * k, "out holds {k} vectors of {on}");
        let mut acc = vec![T::default(); on * k];
        for g in 0..self.p.len().saturating_sub(1) {
            let r0 = g * BLOCK_ROWS as usize;
            for h in self.p[g] as usize..self.p[g + 1] as usize {
                let (row, col, a) = (r0 + self.r[h] as usize, self.j[h] as usize, self.v[h]);
                for c in 0..k {
                    if op == Op::NoTranspose {
                        acc[row + c * m] = acc[row + c * m] + a * x[col + c * n];
                    } else {
                        acc[col + c * n] = acc[col + c * n] + a * x[row + c * m];
                    }
                }
            }
        }
        for (o, s) in out.iter_mut().zip(acc) {
            *o = spmv_combine(alpha, s, beta, *o);
        }
    }
}

fn spmv_combine<T: SpmvValue>(alpha: T, sum: T, beta: T, old: T) -> T {
    if beta == T::default() {
        alpha * sum
    } else {
        alpha * sum + beta * old
    }
}

/// Bytes of a CSRC matrix with `rows` rows, `nnz` nonzeros and values of `value_bytes`.
///
/// ```
/// // 1000 rows: 4 row blocks, so 5 pointers; 9 bytes per f32 nonzero.
/// assert_eq!(gpu_csrc::serial::csrc_bytes(1000, 10, 4), 4 * 5 + 10 * 9);
/// ```
pub fn csrc_bytes(rows: u64, nnz: u64, value_bytes: u64) -> u64 {
    4 * (row_blocks(rows) + 1) + nnz * (1 + 4 + value_bytes)
}

/// `op(A)` as a CSR: `A` itself, or its transpose made by the host (`Csr::transpose`).
fn op_matrix<T: SpmvValue>(a: &Csr<u32, T>, op: Op) -> std::borrow::Cow<'_, Csr<u32, T>> {
    match op {
        Op::NoTranspose => std::borrow::Cow::Borrowed(a),
        Op::Transpose => std::borrow::Cow::Owned(a.transpose()),
    }
}

/// The specification: `out = alpha · op(A) · x + beta · out` for `k` vectors, each column the
/// serial SpMV of `gpu_spmv::serial::spmv` on `A` or on its transpose (rows summed in CSR order);
/// `out` is not read when `beta == 0`.
///
/// # Panics
/// When `x` or `out` do not hold `k` vectors of the right length.
pub fn multiply<T: SpmvValue>(a: &Csr<u32, T>, op: Op, alpha: T, x: &[T], k: usize, beta: T, out: &mut [T]) {
    let b = op_matrix(a, op);
    let (xn, on) = (b.cols() as usize, b.rows() as usize);
    assert_eq!(x.len(), xn * k, "x holds {k} vectors of {xn}");
    assert_eq!(out.len(), on * k, "out holds {k} vectors of {on}");
    for c in 0..k {
        gpu_spmv::serial::spmv(&b, alpha, &x[c * xn..(c + 1) * xn], beta, &mut out[c * on..(c + 1) * on]);
    }
}

/// The largest difference allowed between a GPU product and [`multiply`], entry by entry: the
/// bound of `gpu_spmv::serial::error_bound` for each column (`2 γ_{l+2}` times the row's
/// magnitude `|alpha| Σ |a x| + |beta y_old|`, `l` the row's length in `op(A)`), since both sum
/// each entry's products in some order in `T`.
pub fn error_bound<T: SpmvValue>(a: &Csr<u32, T>, op: Op, alpha: T, x: &[T], k: usize, beta: T, out_old: &[T]) -> Vec<f64> {
    let b = op_matrix(a, op);
    let (xn, on) = (b.cols() as usize, b.rows() as usize);
    (0..k).flat_map(|c| gpu_spmv::serial::error_bound(&b, alpha, &x[c * xn..(c + 1) * xn], beta, &out_old[c * on..(c + 1) * on])).collect()
}
