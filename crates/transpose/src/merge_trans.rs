//! MergeTrans (Wang, Liu & Hou, ICS'16): ptr2idx, a stable sort of `(column, position)` pairs
//! (block sorts, then merge passes), the column pointer from the sorted columns by boundary
//! detection, then a gather of the rows and values. The COO chain ([`crate::coo_chain`]) shares
//! the sort and the gather.
use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use gpu_runtime::scratch::{Layout, ScratchSlice};
use gpu_runtime::{Payload, Scratch};
use sptrans_matrix::{DeviceCsrPartsMut, DeviceCsrView};

use crate::{grid, payload, Dims, Result, Transposer};

/// The nonzeros sorted by column (stable): each one's row (`rows`, in CSR order), the sorted
/// columns (`keys`) and the CSR position each sorted slot came from (`perm`).
pub(crate) struct ByColumn<'a> {
    pub rows: ScratchSlice<'a, u32>,
    pub keys: ScratchSlice<'a, u32>,
    pub perm: ScratchSlice<'a, u32>,
}

/// Scratch of [`by_column`]: `rows`, `keys`, `perm`, then the primitives' scratch.
pub(crate) fn by_column_bytes(t: &Transposer, d: Dims) -> Layout {
    Layout::new().add(4 * d.nnz).add(4 * d.nnz).add(4 * d.nnz).add(Ptr2Idx::workspace_bytes(d.m, d.nnz)).add(t.sort.sort_workspace_bytes(d.nnz, true))
}

pub(crate) fn workspace_bytes(t: &Transposer, d: Dims) -> u64 {
    by_column_bytes(t, d).bytes()
}

/// ptr2idx, then the stable sort of `(column, position)`: equal columns keep their CSR order, so
/// rows come out sorted in each column.
pub(crate) fn by_column<'a, T: Payload>(t: &mut Transposer, a: &DeviceCsrView<'_, T>, d: Dims, scratch: &mut Scratch<'a>) -> Result<ByColumn<'a>> {
    let stream = t.gpu.stream().clone();
    let n = d.nnz as usize;
    let mut rows = scratch.slice::<u32>(n)?;
    let mut keys = scratch.slice::<u32>(n)?;
    let mut perm = scratch.slice::<u32>(n)?;
    t.ptr2idx.run_with(a.ptr(), &mut rows, &mut scratch.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?)?;
    stream.memcpy_dtod(a.idx(), &mut keys).map_err(|e| gpu_runtime::Error::driver("copy column indices")(e))?;
    {
        let (p, _p) = perm.device_ptr_mut(&stream);
        // SAFETY: transpose_iota(perm, nnz): perm holds nnz words.
        unsafe { t.k.iota.args(&stream).arg(&p).arg(&d.nnz).launch(grid(t.gpu.props().sm_count, d.nnz))? };
    }
    let mut sub = scratch.sub(t.sort.sort_workspace_bytes(d.nnz, true))?;
    t.sort.sort_pairs_with(&mut keys, &mut perm, &mut sub)?;
    Ok(ByColumn { rows, keys, perm })
}

/// `out_rows[k] = rows[perm[k]]` and the values alike.
pub(crate) fn gather<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    sorted: &ByColumn<'_>,
) -> Result<()> {
    let stream = t.gpu.stream().clone();
    let (k, vals, out_vals) = payload(&stream, a, out);
    let (pm, _pm) = sorted.perm.device_ptr(&stream);
    let (r, _r) = sorted.rows.device_ptr(&stream);
    let (orow, _o) = out.idx.device_ptr_mut(&stream);
    // SAFETY: transpose_gather(nnz, perm, rows, vals, out_rows, out_vals): perm is a
    // permutation of 0..nnz (sorted iota), every other buffer holds nnz items.
    unsafe {
        t.k.gather[k].args(&stream).arg(&d.nnz).arg(&pm).arg(&r).arg(&vals).arg(&orow).arg(&out_vals).launch(grid(t.gpu.props().sm_count, d.nnz))?
    };
    Ok(())
}

pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let sorted = by_column(t, a, d, scratch)?;
    let stream = t.gpu.stream().clone();
    {
        let (kp, _k) = sorted.keys.device_ptr(&stream);
        let (pp, _p) = out.ptr.device_ptr_mut(&stream);
        // SAFETY: transpose_sorted_ptr(keys, nnz, n, ptr): nnz sorted keys < n (the input's
        // column indices, DeviceCsr's invariant), ptr n + 1 words.
        unsafe { t.k.sorted_ptr.args(&stream).arg(&kp).arg(&d.nnz).arg(&d.n).arg(&pp).launch(grid(t.gpu.props().sm_count, d.nnz))? };
    }
    gather(t, a, out, d, &sorted)
}
