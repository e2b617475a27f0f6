//! MergeTrans (Wang, Liu & Hou, ICS'16): ptr2idx, a stable sort of `(column, position)` pairs
//! (block sorts, then merge passes), the column pointer from the sorted columns by boundary
//! detection, then a gather of the rows and values. The COO chain ([`crate::coo_chain`]) shares
//! the sort and the gather.
use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::scratch::{Carver, Measure, ScratchSlice};
use gpu_runtime::{Payload, Scratch};
use sptrans_matrix::{DeviceCsrPartsMut, DeviceCsrView};

use crate::{launch, Dims, Result, Transposer};

/// The nonzeros sorted by column (stable): each one's row (`rows`, in CSR order), the sorted
/// columns (`keys`) and the CSR position each sorted slot came from (`perm`).
pub(crate) struct ByColumn<'a> {
    pub rows: ScratchSlice<'a, u32>,
    pub keys: ScratchSlice<'a, u32>,
    pub perm: ScratchSlice<'a, u32>,
}

/// The scratch of [`by_column`]: `rows`, `keys`, `perm`, then ptr2idx's and the sort's.
pub(crate) struct ByColumnRegions<C: Carver> {
    rows: C::Slice<u32>,
    keys: C::Slice<u32>,
    perm: C::Slice<u32>,
    expand: C::Sub,
    sort: C::Sub,
}

/// The one description of [`ByColumnRegions`], measured or carved.
pub(crate) fn by_column_regions<C: Carver>(c: &mut C, t: &Transposer, d: Dims) -> Result<ByColumnRegions<C>> {
    let n = d.nnz as usize;
    Ok(ByColumnRegions {
        rows: c.slice(n)?,
        keys: c.slice(n)?,
        perm: c.slice(n)?,
        expand: c.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?,
        sort: c.sub(t.sort.sort_workspace_bytes(d.nnz, true))?,
    })
}

pub(crate) fn workspace_bytes(t: &Transposer, d: Dims) -> u64 {
    Measure::bytes_of(|m| by_column_regions(m, t, d)).unwrap_or(u64::MAX)
}

/// ptr2idx, then the stable sort of `(column, position)`: equal columns keep their CSR order, so
/// rows come out sorted in each column.
pub(crate) fn by_column<'a, T: Payload>(t: &mut Transposer, a: &DeviceCsrView<'_, T>, r: ByColumnRegions<Scratch<'a>>) -> Result<ByColumn<'a>> {
    let stream = t.gpu.stream().clone();
    let ByColumnRegions { mut rows, mut keys, mut perm, mut expand, mut sort } = r;
    t.ptr2idx.run_with(a.ptr(), &mut rows, &mut expand)?;
    stream.memcpy_dtod(a.idx(), &mut keys).map_err(|e| gpu_runtime::Error::driver("copy column indices")(e))?;
    launch::iota(&t.gpu, &t.k, &mut perm.view_mut())?;
    t.sort.sort_pairs_with(&mut keys, &mut perm, &mut sort)?;
    Ok(ByColumn { rows, keys, perm })
}

/// `out_rows[k] = rows[perm[k]]` and the values alike.
pub(crate) fn gather<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    sorted: &ByColumn<'_>,
) -> Result<()> {
    // SAFETY: perm is a permutation of 0..nnz (a sorted iota), every other buffer holds nnz
    // items (the view's and the output's invariants).
    unsafe { launch::gather(&t.gpu, &t.k, &sorted.perm.view(), &sorted.rows.view(), a.vals().zip(out.vals.as_mut()), &mut out.idx)? };
    Ok(())
}

pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let regions = by_column_regions(scratch, t, d)?;
    let sorted = by_column(t, a, regions)?;
    // SAFETY: nnz sorted keys < n (the input's column indices, the view's invariant), the
    // output pointer of n + 1 words.
    unsafe { launch::sorted_ptr(&t.gpu, &t.k, &sorted.keys.view(), d.n, &mut out.ptr)? };
    gather(t, a, out, &sorted)
}
