//! The serial twin — the specification every GPU algorithm is checked against bit for bit — and
//! CPU models of the GPU pipelines, built from the primitives' own twins, so that each pipeline's
//! logic is tested on any machine.
//!
//! ```
//! use gpu_transpose::serial;
//! let a = sptrans_matrix::generate::uniform::<f64>(50, 40, 300, 1)?;
//! let t = serial::transpose(&a);
//! let lap = sptrans_matrix::generate::laplacian_2d::<f64>(6)?;
//! assert!(serial::sym_trans(&a).is_none());
//! assert_eq!(serial::sym_trans(&lap).map(|m| m.rows), Some(serial::transpose(&lap).idx().to_vec()));
//! for model in [serial::scan_trans(&a, 7), serial::merge_trans(&a), serial::radix_trans(&a), serial::coo_chain(&a)] {
//!     assert_eq!((model.ptr.as_slice(), model.rows.as_slice()), (t.ptr(), t.idx()));
//! }
//! # Ok::<(), sptrans_matrix::Error>(())
//! ```
use gpu_histogram::serial as hist;
use sptrans_matrix::{Csr, DeviceCsrPartsMut, DeviceCsrView, Value};

use gpu_radix::{digit as radix_digit, NV as RADIX_TILE};

use crate::{scatter_slot, sorted_ptr_range, Error, Result};

/// The CSR of `Aᵀ` (rows sorted in each output row): a stable counting sort by column.
pub fn transpose<T: Value>(a: &Csr<u32, T>) -> Csr<u32, T> {
    a.transpose()
}

/// The output of [`transpose_parts`]: pointer, indices, values (absent for pattern matrices).
pub type Parts<T> = (Vec<u32>, Vec<u32>, Option<Vec<T>>);

/// [`transpose`] on raw arrays (`m × n`, `ptr` of `m + 1`, `vals` absent for pattern matrices),
/// validating them first: invalid pointers or a column index `>= n` are errors, not panics.
///
/// # Errors
/// [`Error::LengthMismatch`] for a pointer or values of the wrong length, [`Error::Ptr2Idx`] for invalid pointers, [`Error::Histogram`] for a column index `>= n`, [`Error::TooLarge`] past 32-bit columns.
pub fn transpose_parts<T: Copy + Default>(m: u64, n: u64, ptr: &[u32], idx: &[u32], vals: Option<&[T]>) -> Result<Parts<T>> {
    if ptr.len() as u64 != m + 1 {
        return Err(Error::LengthMismatch { what: "row pointer length", expected: m + 1, got: ptr.len() as u64 });
    }
    gpu_ptr2idx::serial::validate(ptr, idx.len() as u64)?;
    let bins = u32::try_from(n).map_err(|_| Error::TooLarge { what: "cols", len: n, max: u32::MAX as u64 })?;
    if let Some(index) = hist::first_out_of_range(idx, bins) {
        return Err(gpu_histogram::Error::KeyOutOfRange { index: index as u64, bins: n }.into());
    }
    Ok(match vals {
        Some(v) => {
            if v.len() != idx.len() {
                return Err(Error::LengthMismatch { what: "values length", expected: idx.len() as u64, got: v.len() as u64 });
            }
            let (p, i, v) = sptrans_matrix::transpose_parts(m, n, ptr, idx, v);
            (p, i, Some(v))
        }
        None => {
            let (p, i, _) = sptrans_matrix::transpose_parts(m, n, ptr, idx, &vec![(); idx.len()]);
            (p, i, None)
        }
    })
}

/// Where a model of a GPU pipeline puts the nonzeros: the output pointer, the output row
/// indices, and for each output slot the input position it came from (values follow it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Moves {
    /// Output pointer (`n + 1`).
    pub ptr: Vec<u32>,
    /// Output indices (the rows of `A`).
    pub rows: Vec<u32>,
    /// `source[k]`: the input position of output slot `k`.
    pub source: Vec<u32>,
}

/// ScanTrans with `parts` partitions, step by step: ptr2idx, partitioned histogram with vertical
/// scan, exclusive scan of the totals, scatter to [`scatter_slot`].
pub fn scan_trans<T: Value>(a: &Csr<u32, T>, parts: usize) -> Moves {
    let (n, nnz) = (a.cols() as usize, a.nnz() as usize);
    let rows = gpu_ptr2idx::serial::ptr2idx(a.ptr());
    let parts = parts.max(1);
    let (inter, intra) = hist::partitioned(a.idx(), n as u32, parts);
    let mut ptr = gpu_scan::serial::exclusive_scan(&inter[parts * n..]);
    ptr.push(nnz as u32);
    let chunk = nnz.div_ceil(parts).max(1);
    let (mut out_rows, mut source) = (vec![u32::MAX; nnz], vec![u32::MAX; nnz]);
    for (j, &c) in a.idx().iter().enumerate() {
        let c = c as usize;
        let at = scatter_slot(ptr[c], inter[(j / chunk) * n + c], intra[j]) as usize;
        out_rows[at] = rows[j];
        source[at] = j as u32;
    }
    Moves { ptr, rows: out_rows, source }
}

/// RadixTrans, pass by pass: each pass is ScanTrans on one digit of the column index
/// ([`gpu_radix::passes`], [`gpu_radix::digit`]) with the tiles as partitions, moving the rows and the
/// positions along; the pointer comes from the sorted columns as in [`merge_trans`].
pub fn radix_trans<T: Value>(a: &Csr<u32, T>) -> Moves {
    let (n, nnz) = (a.cols(), a.nnz() as usize);
    let mut keys = a.idx().to_vec();
    let mut rows = gpu_ptr2idx::serial::ptr2idx(a.ptr());
    let mut source: Vec<u32> = (0..nnz as u32).collect();
    let (passes, per) = gpu_radix::passes(gpu_radix::bits_below(n), gpu_radix::MAX_BITS);
    let total = if n <= 1 { 0 } else { 64 - (n - 1).leading_zeros() };
    let tiles = nnz.div_ceil(RADIX_TILE as usize).max(1);
    for p in 0..passes {
        let (shift, bits) = gpu_radix::pass_digit(0, per, p, total);
        let digits: Vec<u32> = keys.iter().map(|&k| radix_digit(k, shift, bits)).collect();
        let radix = 1usize << bits;
        let (inter, intra) = hist::partitioned(&digits, radix as u32, tiles);
        let start = gpu_scan::serial::exclusive_scan(&inter[tiles * radix..]);
        let chunk = nnz.div_ceil(tiles).max(1);
        let (mut k2, mut r2, mut s2) = (vec![0; nnz], vec![0; nnz], vec![0; nnz]);
        for (j, &dg) in digits.iter().enumerate() {
            let at = scatter_slot(start[dg as usize], inter[(j / chunk) * radix + dg as usize], intra[j]) as usize;
            (k2[at], r2[at], s2[at]) = (keys[j], rows[j], source[j]);
        }
        (keys, rows, source) = (k2, r2, s2);
    }
    Moves { ptr: ptr_from_sorted(&keys, n), rows, source }
}

/// The CPU model of SymTrans's probe ([`crate::Transposer::probe_symmetric`]): `false` when `a` is
/// not square, or when a nonzero `(r, c)` among the first [`crate::SYM_PROBE_ENTRIES`] of a probed
/// row `r` ([`crate::sym_probe_row`]) has no mirror found by [`crate::symmetric_slot`] in row `c`.
/// A pattern that [`sym_trans`] takes always passes.
pub fn sym_probe<T: Value>(a: &Csr<u32, T>) -> bool {
    if a.rows() != a.cols() {
        return false;
    }
    let (ptr, idx, n) = (a.ptr(), a.idx(), a.rows());
    (0..crate::sym_probe_rows(n)).all(|s| {
        let r = crate::sym_probe_row(s, n) as usize;
        let (b, e) = (ptr[r] as u64, ptr[r + 1] as u64);
        (b..e.min(b + crate::SYM_PROBE_ENTRIES)).all(|j| {
            let c = idx[j as usize] as usize;
            crate::symmetric_slot(&|k| idx[k as usize], ptr[c] as u64, ptr[c + 1] as u64, r as u32).is_some()
        })
    })
}

/// SymTrans's model: `None` when `a` is not square, a row is not strictly increasing, or a
/// nonzero `(r, c)` has no mirror `(c, r)` (the GPU then runs RadixTrans); else the pointer and
/// rows are `a`'s own pointer and columns, and each nonzero's value goes to its mirror's slot
/// ([`crate::symmetric_slot`]), one nonzero at a time as the kernel's threads do.
pub fn sym_trans<T: Value>(a: &Csr<u32, T>) -> Option<Moves> {
    if a.rows() != a.cols() {
        return None;
    }
    let (ptr, idx) = (a.ptr(), a.idx());
    let rows = gpu_ptr2idx::serial::ptr2idx(ptr);
    let mut source = vec![u32::MAX; idx.len()];
    for (k, (&r, &c)) in rows.iter().zip(idx).enumerate() {
        if k + 1 < idx.len() && rows[k + 1] == r && idx[k + 1] <= c {
            return None;
        }
        let p = crate::symmetric_slot(&|j| idx[j as usize], ptr[c as usize] as u64, ptr[c as usize + 1] as u64, r)?;
        source[p as usize] = k as u32;
    }
    Some(Moves { ptr: ptr.to_vec(), rows: idx.to_vec(), source })
}

/// The pointer of `n` columns from the sorted column indices, one position at a time as the
/// `transpose_sorted_ptr` kernel does ([`sorted_ptr_range`]).
fn ptr_from_sorted(keys: &[u32], n: u64) -> Vec<u32> {
    let nnz = keys.len() as u64;
    let mut ptr = vec![u32::MAX; n as usize + 1];
    for i in 0..nnz.max(1) {
        let (head, tail) = sorted_ptr_range(&|k| keys[k as usize], nnz, n, i);
        head.for_each(|c| ptr[c as usize] = i as u32);
        tail.for_each(|c| ptr[c as usize] = nnz as u32);
    }
    ptr
}

/// The sort-based pipelines' common part: ptr2idx, stable sort of `(column, position)` pairs,
/// gather; returns the moves (pointer left empty) and the sorted columns.
fn sorted<T: Value>(a: &Csr<u32, T>) -> (Moves, Vec<u32>) {
    let rows = gpu_ptr2idx::serial::ptr2idx(a.ptr());
    let iota: Vec<u32> = (0..a.nnz() as u32).collect();
    let (keys, source) = gpu_segsort::serial::sorted_pairs(a.idx(), &iota);
    let out_rows = source.iter().map(|&j| rows[j as usize]).collect();
    (Moves { ptr: Vec::new(), rows: out_rows, source }, keys)
}

/// MergeTrans: `sorted`, then the pointer from the sorted columns by boundary detection
/// ([`sorted_ptr_range`], one position per thread on the GPU).
pub fn merge_trans<T: Value>(a: &Csr<u32, T>) -> Moves {
    let (mut mv, keys) = sorted(a);
    mv.ptr = ptr_from_sorted(&keys, a.cols());
    mv
}

/// The COO chain: `sorted`, then the pointer by index-to-pointers (histogram and scan) of the
/// column indices.
pub fn coo_chain<T: Value>(a: &Csr<u32, T>) -> Moves {
    let (mut mv, _) = sorted(a);
    mv.ptr = hist::index_to_pointers(a.idx(), a.cols() as u32);
    mv
}

/// The 64-bit twin: the CSR of `Aᵀ` for a matrix with `u64` indices.
pub fn transpose64<T: Value>(a: &Csr<u64, T>) -> Csr<u64, T> {
    a.transpose()
}

/// The 64-bit transposer's chunked path ([`crate::index64`]), step by step: chunks of `chunk`
/// nonzeros cut where they fall ([`crate::index64::chunk_rows`], [`crate::index64::chunk_ptr`]), the output
/// pointer as the sum of the chunks' 32-bit ones (index-to-pointers), each chunk transposed by
/// the 32-bit twin and its entries put after the previous chunks' in each column. Equals
/// [`transpose64`] for every `chunk >= 1` (tested on any machine).
///
/// # Panics
/// When `a` has `2^32` or more columns or rows, or `chunk` is 0 or above `u32::MAX` (a model:
/// the GPU path refuses those sizes with errors).
pub fn chunked64<T: Value>(a: &Csr<u64, T>, chunk: u64) -> Csr<u64, T> {
    use transpose_kernels::index64;
    let (m, n, nnz) = (a.rows(), a.cols(), a.nnz());
    let ptr = a.ptr();
    let get = |i: u64| ptr[i as usize];
    let idx32: Vec<u32> = a.idx().iter().map(|&j| u32::try_from(j).expect("column fits u32")).collect();
    let spans: Vec<(u64, u64, u64, u64)> = (0..nnz.div_ceil(chunk))
        .map(|c| {
            let (k0, k1) = (c * chunk, ((c + 1) * chunk).min(nnz));
            let (r0, r1) = index64::chunk_rows(&get, m, k0, k1);
            (r0, r1, k0, k1)
        })
        .collect();
    let (mut optr, mut cursor) = (vec![0u64; n as usize + 1], vec![0u64; n as usize]);
    for &(_, _, k0, k1) in &spans {
        let cp = hist::index_to_pointers(&idx32[k0 as usize..k1 as usize], n as u32);
        for (j, &c) in cp.iter().enumerate() {
            optr[j] += c as u64;
            if j < n as usize {
                cursor[j] += c as u64;
            }
        }
    }
    let (mut rows, mut vals) = (vec![0u64; nnz as usize], vec![T::default(); nnz as usize]);
    for &(r0, r1, k0, k1) in &spans {
        let cptr: Vec<u32> = (r0..=r1).map(|r| index64::chunk_ptr(ptr[r as usize], k0, k1)).collect();
        let (k0, k1) = (k0 as usize, k1 as usize);
        let chunk_csr =
            Csr::try_new(r1 - r0, n, cptr, idx32[k0..k1].to_vec(), a.vals()[k0..k1].to_vec()).expect("a chunk of a valid matrix is valid");
        let t = chunk_csr.transpose();
        for (c, w) in cursor.iter_mut().zip(t.ptr().windows(2)) {
            let (s, e) = (w[0] as usize, w[1] as usize);
            for k in s..e {
                let dst = (*c + (k - s) as u64) as usize;
                rows[dst] = t.idx()[k] as u64 + r0;
                vals[dst] = t.vals()[k];
            }
            *c += (e - s) as u64;
        }
    }
    Csr::try_new(n, m, optr, rows, vals).expect("the chunked transpose is a valid matrix")
}

/// The `Serial` algorithm on a 64-bit device matrix: download, transpose, upload (synchronizes).
pub(crate) fn run64<T: gpu_runtime::Payload>(
    t: &mut crate::Transposer,
    a: &sptrans_matrix::DeviceCsr64View<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T, u64>,
) -> Result<()> {
    let gpu = t.gpu.clone();
    let ptr = gpu.download(a.ptr())?;
    let idx: Vec<u64> = gpu.download(a.idx())?.into_iter().map(u64::from).collect();
    let pos: Vec<u64> = (0..idx.len() as u64).collect();
    let (tp, ti, tpos) = sptrans_matrix::try_transpose_parts(a.rows(), a.cols(), &ptr, &idx, &pos)?;
    let rows: Vec<u32> = ti.iter().map(|&r| r as u32).collect();
    let stream = gpu.stream().clone();
    let copy = |e| Error::Runtime(gpu_runtime::Error::driver("upload")(e));
    stream.memcpy_htod(&tp, &mut out.ptr).map_err(copy)?;
    stream.memcpy_htod(&rows, &mut out.idx).map_err(copy)?;
    if let (Some(v), Some(ov)) = (a.vals(), out.vals.as_mut()) {
        let v = gpu.download(v)?;
        let moved: Vec<T> = tpos.iter().map(|&k| v[k as usize]).collect();
        stream.memcpy_htod(&moved, ov).map_err(copy)?;
    }
    Ok(gpu.synchronize()?)
}

/// The `Serial` algorithm on the device: download, [`transpose_parts`], upload (synchronizes).
pub(crate) fn run<T: gpu_runtime::Payload>(t: &mut crate::Transposer, a: &DeviceCsrView<'_, T>, out: &mut DeviceCsrPartsMut<'_, T>) -> Result<()> {
    let gpu = t.gpu.clone();
    let ptr = gpu.download(a.ptr())?;
    let idx = gpu.download(a.idx())?;
    let vals = match a.vals() {
        Some(v) => Some(gpu.download(v)?),
        None => None,
    };
    let (tp, ti, tv) = transpose_parts(a.rows(), a.cols(), &ptr, &idx, vals.as_deref())?;
    let stream = gpu.stream().clone();
    let copy = |e| Error::Runtime(gpu_runtime::Error::driver("upload")(e));
    stream.memcpy_htod(&tp, &mut out.ptr).map_err(copy)?;
    stream.memcpy_htod(&ti, &mut out.idx).map_err(copy)?;
    if let (Some(tv), Some(ov)) = (tv, out.vals.as_mut()) {
        stream.memcpy_htod(&tv, ov).map_err(copy)?;
    }
    Ok(gpu.synchronize()?)
}
