//! CSR, CSC and COO with validating constructors and the serial conversions.
use crate::{Error, Result, Value};

/// Index types: `u32` now, `u64` designed in. Counts of nonzeros are `u64` everywhere.
pub trait Index: Copy + Ord + std::fmt::Debug + Default + Send + Sync + 'static {
    /// Largest value the type holds.
    const MAX: u64;
    /// Converts, or `None` when `v` does not fit.
    fn from_u64(v: u64) -> Option<Self>;
    /// As `u64`.
    fn to_u64(self) -> u64;
    /// As `usize` (for indexing).
    fn to_usize(self) -> usize {
        self.to_u64() as usize
    }
}

impl Index for u32 {
    const MAX: u64 = u32::MAX as u64;
    fn from_u64(v: u64) -> Option<Self> {
        u32::try_from(v).ok()
    }
    fn to_u64(self) -> u64 {
        self as u64
    }
}

impl Index for u64 {
    const MAX: u64 = u64::MAX;
    fn from_u64(v: u64) -> Option<Self> {
        Some(v)
    }
    fn to_u64(self) -> u64 {
        self
    }
}

/// Checks that `rows` / `cols` / `nnz` fit index type `I` (dimensions up to `I::MAX`, counts
/// too, so pointers never overflow).
pub fn check_fits<I: Index>(rows: u64, cols: u64, nnz: u64) -> Result<()> {
    for (what, v) in [("rows", rows), ("columns", cols), ("nonzeros", nnz)] {
        if v > I::MAX {
            return Err(Error::TooLarge { what, value: v, max: I::MAX });
        }
    }
    Ok(())
}

/// Compressed sparse rows: row `i` holds `idx[ptr[i]..ptr[i + 1]]` (column indices) and the
/// values alongside.
#[derive(Debug, Clone, PartialEq)]
pub struct Csr<I, T> {
    rows: u64,
    cols: u64,
    ptr: Vec<I>,
    idx: Vec<I>,
    vals: Vec<T>,
}

/// Compressed sparse columns: column `j` holds `idx[ptr[j]..ptr[j + 1]]` (row indices). The CSC
/// of `A` is the CSR of `Aᵀ`.
#[derive(Debug, Clone, PartialEq)]
pub struct Csc<I, T> {
    rows: u64,
    cols: u64,
    ptr: Vec<I>,
    idx: Vec<I>,
    vals: Vec<T>,
}

/// Coordinate form: entry `k` is `(row[k], col[k], vals[k])`; duplicates allowed (summed when
/// compressed).
#[derive(Debug, Clone, PartialEq)]
pub struct Coo<I, T> {
    rows: u64,
    cols: u64,
    row: Vec<I>,
    col: Vec<I>,
    vals: Vec<T>,
}

/// Validates a compressed structure: `ptr` of `major + 1` entries from 0, nondecreasing, ending
/// at `idx.len()`; indices below `minor`; values as many as indices; with `sorted`, indices
/// strictly increasing inside each major slice.
fn validate<I: Index>(major: u64, minor: u64, ptr: &[I], idx: &[I], vals_len: usize, sorted: bool) -> Result<()> {
    check_fits::<I>(major, minor, idx.len() as u64)?;
    if ptr.len() as u64 != major + 1 {
        return Err(Error::LengthMismatch { what: "pointer array", expected: major + 1, actual: ptr.len() as u64 });
    }
    if vals_len != idx.len() {
        return Err(Error::LengthMismatch { what: "values", expected: idx.len() as u64, actual: vals_len as u64 });
    }
    if ptr[0].to_u64() != 0 {
        return Err(Error::BadPointers { index: 0, reason: "the first pointer must be 0" });
    }
    for (i, w) in ptr.windows(2).enumerate() {
        if w[1] < w[0] {
            return Err(Error::BadPointers { index: i as u64 + 1, reason: "pointers decrease here" });
        }
    }
    if ptr[major as usize].to_u64() != idx.len() as u64 {
        return Err(Error::BadPointers { index: major, reason: "the last pointer must equal the number of nonzeros" });
    }
    for (k, &j) in idx.iter().enumerate() {
        if j.to_u64() >= minor {
            return Err(Error::IndexOutOfRange { position: k as u64, index: j.to_u64(), bound: minor });
        }
    }
    if sorted {
        for i in 0..major as usize {
            let s = &idx[ptr[i].to_usize()..ptr[i + 1].to_usize()];
            if let Some(p) = s.windows(2).position(|w| w[1] <= w[0]) {
                return Err(Error::NotSorted { slice: i as u64, position: (ptr[i].to_usize() + p + 1) as u64 });
            }
        }
    }
    Ok(())
}

macro_rules! compressed {
    ($ty:ident, $major:ident, $minor:ident, $what:literal) => {
        impl<I: Index, T: Value> $ty<I, T> {
            #[doc = concat!("A validated ", $what, " matrix (see the crate docs for the checks); indices within a slice may be in any order and repeat.")]
            pub fn try_new(rows: u64, cols: u64, ptr: Vec<I>, idx: Vec<I>, vals: Vec<T>) -> Result<Self> {
                validate($major(rows, cols), $minor(rows, cols), &ptr, &idx, vals.len(), false)?;
                Ok(Self { rows, cols, ptr, idx, vals })
            }

            #[doc = concat!("As `try_new`, also requiring indices strictly increasing inside each slice (sorted, no duplicates).")]
            pub fn try_new_sorted(rows: u64, cols: u64, ptr: Vec<I>, idx: Vec<I>, vals: Vec<T>) -> Result<Self> {
                validate($major(rows, cols), $minor(rows, cols), &ptr, &idx, vals.len(), true)?;
                Ok(Self { rows, cols, ptr, idx, vals })
            }

            /// Number of rows.
            pub fn rows(&self) -> u64 { self.rows }
            /// Number of columns.
            pub fn cols(&self) -> u64 { self.cols }
            /// Number of stored entries.
            pub fn nnz(&self) -> u64 { self.idx.len() as u64 }
            /// The pointer array.
            pub fn ptr(&self) -> &[I] { &self.ptr }
            /// The index array.
            pub fn idx(&self) -> &[I] { &self.idx }
            /// The values.
            pub fn vals(&self) -> &[T] { &self.vals }
            /// Whether indices increase strictly inside every slice.
            pub fn is_sorted_unique(&self) -> bool {
                validate($major(self.rows, self.cols), $minor(self.rows, self.cols), &self.ptr, &self.idx, self.vals.len(), true).is_ok()
            }
            /// The parts `(rows, cols, ptr, idx, vals)`.
            pub fn into_parts(self) -> (u64, u64, Vec<I>, Vec<I>, Vec<T>) {
                (self.rows, self.cols, self.ptr, self.idx, self.vals)
            }
        }
    };
}

fn first(rows: u64, _: u64) -> u64 {
    rows
}
fn second(_: u64, cols: u64) -> u64 {
    cols
}

compressed!(Csr, first, second, "CSR");
compressed!(Csc, second, first, "CSC");

/// The counting-sort offsets of `keys` in `[0, nkeys)`: the pointer array (`nkeys + 1` entries,
/// `ptr[k]` = number of keys below `k`) and the same offsets as `u64` write cursors.
fn offsets_by_key<I: Index>(nkeys: u64, keys: &[I]) -> (Vec<I>, Vec<u64>) {
    let mut count = vec![0u64; nkeys as usize + 1];
    for &k in keys {
        count[k.to_usize() + 1] += 1;
    }
    for k in 0..nkeys as usize {
        count[k + 1] += count[k];
    }
    (count.iter().map(|&c| I::from_u64(c).unwrap_or_default()).collect(), count)
}

/// Transposes a compressed structure (`major × minor` → `minor × major`) by a stable counting
/// sort: inside each output slice the indices come out in increasing order. The inputs are
/// trusted (a validated structure: `ptr` of `major + 1`, indices below `minor`); this is the
/// serial transpose behind [`Csr::transpose`], open to callers with raw arrays of any payload.
///
/// ```
/// // [[1, 2], [0, 3]] -> [[1, 0], [2, 3]]
/// let (p, i, v) = sptrans_matrix::transpose_parts(2, 2, &[0u32, 2, 3], &[0u32, 1, 1], &[1, 2, 3]);
/// assert_eq!((p, i, v), (vec![0, 1, 3], vec![0, 0, 1], vec![1, 2, 3]));
/// ```
pub fn transpose_parts<I: Index, T: Copy + Default>(major: u64, minor: u64, ptr: &[I], idx: &[I], vals: &[T]) -> (Vec<I>, Vec<I>, Vec<T>) {
    let nnz = idx.len();
    let (out_ptr, mut next) = offsets_by_key(minor, idx);
    let mut out_idx = vec![I::default(); nnz];
    let mut out_vals = vec![T::default(); nnz];
    for i in 0..major as usize {
        for k in ptr[i].to_usize()..ptr[i + 1].to_usize() {
            let j = idx[k].to_usize();
            let dst = next[j] as usize;
            next[j] += 1;
            out_idx[dst] = I::from_u64(i as u64).unwrap_or_default();
            out_vals[dst] = vals[k];
        }
    }
    (out_ptr, out_idx, out_vals)
}

impl<I: Index, T: Value> Csr<I, T> {
    /// The serial transpose: the CSR of `Aᵀ`, with indices sorted in each row (the specification
    /// every GPU transposer is checked against).
    pub fn transpose(&self) -> Csr<I, T> {
        let (ptr, idx, vals) = transpose_parts(self.rows, self.cols, &self.ptr, &self.idx, &self.vals);
        Csr { rows: self.cols, cols: self.rows, ptr, idx, vals }
    }

    /// The same matrix in CSC form (row indices sorted in each column).
    pub fn to_csc(&self) -> Csc<I, T> {
        let t = self.transpose();
        Csc { rows: self.rows, cols: self.cols, ptr: t.ptr, idx: t.idx, vals: t.vals }
    }

    /// The entries in row order.
    pub fn to_coo(&self) -> Coo<I, T> {
        let mut row = Vec::with_capacity(self.idx.len());
        for i in 0..self.rows as usize {
            let len = self.ptr[i + 1].to_usize() - self.ptr[i].to_usize();
            row.extend(std::iter::repeat_n(I::from_u64(i as u64).unwrap_or_default(), len));
        }
        Coo { rows: self.rows, cols: self.cols, row, col: self.idx.clone(), vals: self.vals.clone() }
    }

    /// Entry `(i, j)` if stored (the first one when repeated).
    pub fn get(&self, i: u64, j: u64) -> Option<T> {
        if i >= self.rows {
            return None;
        }
        let r = self.ptr[i as usize].to_usize()..self.ptr[i as usize + 1].to_usize();
        self.idx[r.clone()].iter().position(|x| x.to_u64() == j).map(|p| self.vals[r.start + p])
    }
}

impl<I: Index, T: Value> Csc<I, T> {
    /// The same matrix in CSR form (column indices sorted in each row).
    pub fn to_csr(&self) -> Csr<I, T> {
        let (ptr, idx, vals) = transpose_parts(self.cols, self.rows, &self.ptr, &self.idx, &self.vals);
        Csr { rows: self.rows, cols: self.cols, ptr, idx, vals }
    }
}

impl<I: Index, T: Value> Coo<I, T> {
    /// Validated coordinates: equal lengths, indices inside the dimensions, sizes fitting `I`.
    pub fn try_new(rows: u64, cols: u64, row: Vec<I>, col: Vec<I>, vals: Vec<T>) -> Result<Self> {
        check_fits::<I>(rows, cols, row.len() as u64)?;
        if col.len() != row.len() {
            return Err(Error::LengthMismatch { what: "column indices", expected: row.len() as u64, actual: col.len() as u64 });
        }
        if vals.len() != row.len() {
            return Err(Error::LengthMismatch { what: "values", expected: row.len() as u64, actual: vals.len() as u64 });
        }
        for (k, (&i, &j)) in row.iter().zip(&col).enumerate() {
            if i.to_u64() >= rows {
                return Err(Error::IndexOutOfRange { position: k as u64, index: i.to_u64(), bound: rows });
            }
            if j.to_u64() >= cols {
                return Err(Error::IndexOutOfRange { position: k as u64, index: j.to_u64(), bound: cols });
            }
        }
        Ok(Self { rows, cols, row, col, vals })
    }

    /// Number of rows.
    pub fn rows(&self) -> u64 { self.rows }
    /// Number of columns.
    pub fn cols(&self) -> u64 { self.cols }
    /// Number of stored entries (duplicates counted).
    pub fn nnz(&self) -> u64 { self.row.len() as u64 }
    /// Row indices.
    pub fn row(&self) -> &[I] { &self.row }
    /// Column indices.
    pub fn col(&self) -> &[I] { &self.col }
    /// Values.
    pub fn vals(&self) -> &[T] { &self.vals }

    /// Compresses to CSR with duplicates summed and columns sorted in each row (as scipy's
    /// `tocsr().sum_duplicates()`).
    pub fn to_csr(&self) -> Csr<I, T> {
        // Bucket by column (stable), then transpose (stable): rows in order, columns sorted,
        // equal (row, col) entries adjacent in file order.
        let t = bucket(self.cols, self.rows, &self.col, &self.row, &self.vals); // CSR of Aᵀ (unsummed)
        let a = bucket_csr_transpose(&t, self.rows);
        sum_duplicates(a)
    }
}

/// Groups coordinates by `key` (stable counting sort) into a compressed structure over `other`.
fn bucket<I: Index, T: Value>(nkeys: u64, nother: u64, key: &[I], other: &[I], vals: &[T]) -> Csr<I, T> {
    let (ptr, mut next) = offsets_by_key(nkeys, key);
    let mut idx = vec![I::default(); key.len()];
    let mut v = vec![T::default(); key.len()];
    for (e, &k) in key.iter().enumerate() {
        let d = next[k.to_usize()] as usize;
        next[k.to_usize()] += 1;
        idx[d] = other[e];
        v[d] = vals[e];
    }
    Csr { rows: nkeys, cols: nother, ptr, idx, vals: v }
}

fn bucket_csr_transpose<I: Index, T: Value>(t: &Csr<I, T>, rows: u64) -> Csr<I, T> {
    let (ptr, idx, vals) = transpose_parts(t.rows, rows, &t.ptr, &t.idx, &t.vals);
    Csr { rows, cols: t.rows, ptr, idx, vals }
}

/// Sums repeated indices inside each (sorted) row.
fn sum_duplicates<I: Index, T: Value>(a: Csr<I, T>) -> Csr<I, T> {
    let mut ptr = Vec::with_capacity(a.ptr.len());
    let mut idx: Vec<I> = Vec::with_capacity(a.idx.len());
    let mut vals: Vec<T> = Vec::with_capacity(a.vals.len());
    ptr.push(I::default());
    for i in 0..a.rows as usize {
        let start = idx.len();
        for k in a.ptr[i].to_usize()..a.ptr[i + 1].to_usize() {
            if idx.len() > start && idx[idx.len() - 1] == a.idx[k] {
                let last = vals.len() - 1;
                vals[last] = vals[last].add(a.vals[k]);
            } else {
                idx.push(a.idx[k]);
                vals.push(a.vals[k]);
            }
        }
        ptr.push(I::from_u64(idx.len() as u64).unwrap_or_default());
    }
    Csr { rows: a.rows, cols: a.cols, ptr, idx, vals }
}

/// Builds without validation (crate-internal: callers guarantee the invariants).
pub(crate) fn coo_unchecked<I: Index, T: Value>(rows: u64, cols: u64, row: Vec<I>, col: Vec<I>, vals: Vec<T>) -> Coo<I, T> {
    Coo { rows, cols, row, col, vals }
}

/// Builds without validation (crate-internal: callers guarantee the invariants).
pub(crate) fn csr_unchecked<I: Index, T: Value>(rows: u64, cols: u64, ptr: Vec<I>, idx: Vec<I>, vals: Vec<T>) -> Csr<I, T> {
    Csr { rows, cols, ptr, idx, vals }
}
