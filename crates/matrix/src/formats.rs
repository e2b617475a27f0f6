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
///
/// # Errors
/// [`Error::TooLarge`] when a size does not fit the index type.
pub fn check_fits<I: Index>(rows: u64, cols: u64, nnz: u64) -> Result<()> {
    for (what, v) in [("rows", rows), ("columns", cols), ("nonzeros", nnz)] {
        if v > I::MAX {
            return Err(Error::TooLarge { what, len: v, max: I::MAX });
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
        return Err(Error::LengthMismatch { what: "pointer array", expected: major + 1, got: ptr.len() as u64 });
    }
    if vals_len != idx.len() {
        return Err(Error::LengthMismatch { what: "values", expected: idx.len() as u64, got: vals_len as u64 });
    }
    if ptr[0].to_u64() != 0 {
        return Err(Error::BadPointers { index: 0, reason: "the first pointer must be 0".into() });
    }
    for (i, w) in ptr.windows(2).enumerate() {
        if w[1] < w[0] {
            return Err(Error::BadPointers { index: i as u64 + 1, reason: "pointers decrease here".into() });
        }
    }
    if ptr[major as usize].to_u64() != idx.len() as u64 {
        return Err(Error::BadPointers { index: major, reason: "the last pointer must equal the number of nonzeros".into() });
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
            ///
            /// # Errors
            /// [`Error::LengthMismatch`], [`Error::BadPointers`], [`Error::IndexOutOfRange`] or [`Error::TooLarge`] naming what is wrong and where.
            #[doc = concat!("A validated ", $what, " matrix (see the crate docs for the checks); indices within a slice may be in any order and repeat.")]
            pub fn try_new(rows: u64, cols: u64, ptr: Vec<I>, idx: Vec<I>, vals: Vec<T>) -> Result<Self> {
                validate($major(rows, cols), $minor(rows, cols), &ptr, &idx, vals.len(), false)?;
                Ok(Self { rows, cols, ptr, idx, vals })
            }

            ///
            /// # Errors
            /// [`Error::LengthMismatch`], [`Error::BadPointers`], [`Error::IndexOutOfRange`] or [`Error::TooLarge`] naming what is wrong and where, and [`Error::NotSorted`].
            #[doc = concat!("As `try_new`, also requiring indices strictly increasing inside each slice (sorted, no duplicates).")]
            pub fn try_new_sorted(rows: u64, cols: u64, ptr: Vec<I>, idx: Vec<I>, vals: Vec<T>) -> Result<Self> {
                validate($major(rows, cols), $minor(rows, cols), &ptr, &idx, vals.len(), true)?;
                Ok(Self { rows, cols, ptr, idx, vals })
            }

            /// As `try_new`, from pointer and index arrays of another integer type (`i32` and
            /// `i64` as PyTorch and SciPy hold them, `u64`, `u32`): each entry is converted, and
            /// a negative one, or one above the index type, is an error naming the array and the
            /// position.
            ///
            /// # Errors
            /// [`Error::BadIndexValue`], then as `try_new`.
            pub fn try_from_indices<J: Copy + Into<i128>>(rows: u64, cols: u64, ptr: &[J], idx: &[J], vals: Vec<T>) -> Result<Self> {
                let narrow = |what: &'static str, a: &[J]| -> Result<Vec<I>> {
                    let mut out = try_filled(a.len(), I::default(), "converted indices")?;
                    for (k, (o, &v)) in out.iter_mut().zip(a).enumerate() {
                        let v: i128 = v.into();
                        *o = u64::try_from(v).ok().and_then(I::from_u64).ok_or(Error::BadIndexValue { what, position: k as u64, value: v, max: I::MAX })?;
                    }
                    Ok(out)
                };
                Self::try_new(rows, cols, narrow("pointer", ptr)?, narrow("index", idx)?, vals)
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
            /// The same pattern with every value mapped by `f` (in storage order).
            pub fn map_values<U: Value>(self, f: impl FnMut(T) -> U) -> $ty<I, U> {
                $ty { rows: self.rows, cols: self.cols, ptr: self.ptr, idx: self.idx, vals: self.vals.into_iter().map(f).collect() }
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
fn offsets_by_key<I: Index>(nkeys: u64, keys: &[I]) -> Result<(Vec<I>, Vec<u64>)> {
    let len = usize::try_from(nkeys).ok().and_then(|n| n.checked_add(1)).ok_or(Error::TooLarge {
        what: "pointer length",
        len: nkeys,
        max: usize::MAX as u64 - 1,
    })?;
    let mut count = try_filled(len, 0u64, "counting-sort offsets")?;
    for &k in keys {
        count[k.to_usize() + 1] += 1;
    }
    for k in 0..nkeys as usize {
        count[k + 1] += count[k];
    }
    let mut ptr = try_filled(len, I::default(), "pointer array")?;
    for (p, &c) in ptr.iter_mut().zip(&count) {
        *p = I::from_u64(c).unwrap_or_default();
    }
    Ok((ptr, count))
}

/// `len` copies of `value`, or [`Error::HostMemory`] (never an abort) when memory runs out.
pub(crate) fn try_filled<T: Clone>(len: usize, value: T, what: &'static str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::HostMemory { bytes: (len as u64).saturating_mul(std::mem::size_of::<T>() as u64), what })?;
    v.resize(len, value);
    Ok(v)
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
///
/// # Panics
/// When host memory runs out (as `Vec` does); [`try_transpose_parts`] returns the error.
pub fn transpose_parts<I: Index, T: Copy + Default>(major: u64, minor: u64, ptr: &[I], idx: &[I], vals: &[T]) -> (Vec<I>, Vec<I>, Vec<T>) {
    match try_transpose_parts(major, minor, ptr, idx, vals) {
        Ok(parts) => parts,
        Err(e) => panic!("transpose_parts: {e} (use try_transpose_parts to get the error)"),
    }
}

/// [`transpose_parts`] that reports running out of host memory as [`Error::HostMemory`]
/// instead of aborting.
///
/// # Errors
/// [`Error::HostMemory`], [`Error::TooLarge`] for a `minor` past the address space.
pub fn try_transpose_parts<I: Index, T: Copy + Default>(
    major: u64,
    minor: u64,
    ptr: &[I],
    idx: &[I],
    vals: &[T],
) -> Result<(Vec<I>, Vec<I>, Vec<T>)> {
    let nnz = idx.len();
    let (out_ptr, mut next) = offsets_by_key(minor, idx)?;
    let mut out_idx = try_filled(nnz, I::default(), "transposed indices")?;
    let mut out_vals = try_filled(nnz, T::default(), "transposed values")?;
    for i in 0..major as usize {
        for k in ptr[i].to_usize()..ptr[i + 1].to_usize() {
            let j = idx[k].to_usize();
            let dst = next[j] as usize;
            next[j] += 1;
            out_idx[dst] = I::from_u64(i as u64).unwrap_or_default();
            out_vals[dst] = vals[k];
        }
    }
    Ok((out_ptr, out_idx, out_vals))
}

impl<I: Index, T: Value> Csr<I, T> {
    /// The serial transpose: the CSR of `Aᵀ`, with indices sorted in each row (the specification
    /// every GPU transposer is checked against).
    ///
    /// # Panics
    /// When host memory runs out (as `Vec` does); [`Csr::try_transpose`] returns the error.
    pub fn transpose(&self) -> Csr<I, T> {
        let (ptr, idx, vals) = transpose_parts(self.rows, self.cols, &self.ptr, &self.idx, &self.vals);
        Csr { rows: self.cols, cols: self.rows, ptr, idx, vals }
    }

    /// [`Csr::transpose`] that reports running out of host memory instead of aborting.
    ///
    /// # Errors
    /// [`Error::HostMemory`] naming the size that could not be reserved.
    pub fn try_transpose(&self) -> Result<Csr<I, T>> {
        let (ptr, idx, vals) = try_transpose_parts(self.rows, self.cols, &self.ptr, &self.idx, &self.vals)?;
        Ok(Csr { rows: self.cols, cols: self.rows, ptr, idx, vals })
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

    /// Equal shape, structure and value bits ([`Value::bit_pattern`]): unlike `==`, a NaN
    /// equals a NaN of the same bits.
    pub fn same_bits(&self, other: &Self) -> bool {
        self.rows == other.rows
            && self.cols == other.cols
            && self.ptr == other.ptr
            && self.idx == other.idx
            && self.vals.iter().map(|v| v.bit_pattern()).eq(other.vals.iter().map(|v| v.bit_pattern()))
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
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::BadPointers`], [`Error::IndexOutOfRange`] or [`Error::TooLarge`] naming what is wrong and where.
    pub fn try_new(rows: u64, cols: u64, row: Vec<I>, col: Vec<I>, vals: Vec<T>) -> Result<Self> {
        check_fits::<I>(rows, cols, row.len() as u64)?;
        if col.len() != row.len() {
            return Err(Error::LengthMismatch { what: "column indices", expected: row.len() as u64, got: col.len() as u64 });
        }
        if vals.len() != row.len() {
            return Err(Error::LengthMismatch { what: "values", expected: row.len() as u64, got: vals.len() as u64 });
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
    pub fn rows(&self) -> u64 {
        self.rows
    }
    /// Number of columns.
    pub fn cols(&self) -> u64 {
        self.cols
    }
    /// Number of stored entries (duplicates counted).
    pub fn nnz(&self) -> u64 {
        self.row.len() as u64
    }
    /// Row indices.
    pub fn row(&self) -> &[I] {
        &self.row
    }
    /// Column indices.
    pub fn col(&self) -> &[I] {
        &self.col
    }
    /// Values.
    pub fn vals(&self) -> &[T] {
        &self.vals
    }

    /// Compresses to CSR with duplicates summed (in file order) and columns sorted in each row
    /// (as scipy's `tocsr().sum_duplicates()`). Copies; [`Coo::into_csr`] works in place.
    pub fn to_csr(&self) -> Csr<I, T> {
        self.clone().into_csr()
    }

    /// [`Coo::to_csr`] in place: the row array becomes each entry's destination (a stable
    /// counting sort by row), the column and value arrays are permuted along its cycles, then
    /// each row is sorted by column (stable) and its duplicates summed. Besides the coordinates
    /// it needs only the row pointer and the longest row's scratch.
    ///
    /// # Panics
    /// When host memory runs out (as `Vec` does); [`Coo::try_into_csr`] returns the error.
    pub fn into_csr(self) -> Csr<I, T> {
        match self.try_into_csr() {
            Ok(a) => a,
            Err(e) => panic!("into_csr: {e} (use try_into_csr to get the error)"),
        }
    }

    /// [`Coo::into_csr`] that reports running out of host memory as [`Error::HostMemory`]
    /// instead of aborting.
    ///
    /// # Errors
    /// [`Error::HostMemory`] naming the size that could not be reserved.
    pub fn try_into_csr(self) -> Result<Csr<I, T>> {
        let Coo { rows, cols, row: mut dst, mut col, mut vals } = self;
        let (ptr, mut next) = offsets_by_key(rows, &dst)?;
        // Destinations fit I: there are nnz < I::MAX entries (check_fits), and I::MAX marks done.
        let done = I::from_u64(I::MAX).unwrap_or_default();
        for d in dst.iter_mut() {
            let r = d.to_usize();
            *d = I::from_u64(next[r]).unwrap_or_default();
            next[r] += 1;
        }
        drop(next);
        for s in 0..dst.len() {
            if dst[s] == done {
                continue;
            }
            let (mut c, mut v, mut d) = (col[s], vals[s], dst[s].to_usize());
            dst[s] = done;
            while d != s {
                std::mem::swap(&mut c, &mut col[d]);
                std::mem::swap(&mut v, &mut vals[d]);
                let nd = dst[d].to_usize();
                dst[d] = done;
                d = nd;
            }
            col[s] = c;
            vals[s] = v;
        }
        drop(dst);
        // Sort each row by column (stable: duplicates stay in file order), then sum them.
        let mut out_ptr = Vec::new();
        out_ptr
            .try_reserve_exact(ptr.len())
            .map_err(|_| Error::HostMemory { bytes: (ptr.len() * std::mem::size_of::<I>()) as u64, what: "CSR pointer" })?;
        out_ptr.push(I::default());
        let mut w = 0usize;
        let mut scratch: Vec<(I, T)> = Vec::new();
        for i in 0..rows as usize {
            let (b, e) = (ptr[i].to_usize(), ptr[i + 1].to_usize());
            if !col[b..e].windows(2).all(|p| p[0] <= p[1]) {
                scratch.clear();
                scratch.extend(col[b..e].iter().copied().zip(vals[b..e].iter().copied()));
                scratch.sort_by_key(|&(c, _)| c);
                for (k, &(c, v)) in scratch.iter().enumerate() {
                    col[b + k] = c;
                    vals[b + k] = v;
                }
            }
            let start = w;
            for k in b..e {
                if w > start && col[w - 1] == col[k] {
                    vals[w - 1] = vals[w - 1].add(vals[k]);
                } else {
                    col[w] = col[k];
                    vals[w] = vals[k];
                    w += 1;
                }
            }
            out_ptr.push(I::from_u64(w as u64).unwrap_or_default());
        }
        col.truncate(w);
        vals.truncate(w);
        Ok(Csr { rows, cols, ptr: out_ptr, idx: col, vals })
    }
}

/// Builds without validation (crate-internal: callers guarantee the invariants).
pub(crate) fn coo_unchecked<I: Index, T: Value>(rows: u64, cols: u64, row: Vec<I>, col: Vec<I>, vals: Vec<T>) -> Coo<I, T> {
    Coo { rows, cols, row, col, vals }
}

/// Builds without validation (crate-internal: callers guarantee the invariants).
pub(crate) fn csr_unchecked<I: Index, T: Value>(rows: u64, cols: u64, ptr: Vec<I>, idx: Vec<I>, vals: Vec<T>) -> Csr<I, T> {
    Csr { rows, cols, ptr, idx, vals }
}
