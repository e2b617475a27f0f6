//! SymTrans: for a square matrix whose pattern is symmetric (`(r, c)` a nonzero exactly when
//! `(c, r)` is) with rows sorted, the transpose's pointer and row indices are the matrix's own
//! pointer and column indices; only the values move, each to its mirror's place, found by a
//! binary search of the mirror's row (`transpose_symmetric_v{4,8}`, after ptr2idx gives each
//! nonzero's row). One pass, about 20 bytes a nonzero with 4-byte values, where RadixTrans takes
//! 3–4 passes of 12 each way.
//!
//! The kernel checks the pattern as it goes: a nonzero without a mirror, or a row not strictly
//! sorted, raises a flag, which the host reads back (this synchronizes the stream, unlike the
//! other GPU algorithms); then RadixTrans transposes the matrix into the same outputs. A
//! rectangular matrix goes to RadixTrans at once. The workspace is the larger of the two
//! algorithms' (they run one after the other on the same region).
use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use gpu_runtime::scratch::Layout;
use gpu_runtime::{Payload, Scratch};
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use transpose_kernels::SYM_FLAG_WORDS;

use crate::{grid, payload, radix_trans, Dims, Result, Transposer};

/// The symmetric attempt's scratch, in carving order: the rows, the flag's copies, ptr2idx's
/// scratch.
fn own_bytes(d: Dims) -> u64 {
    Layout::new().add(4 * d.nnz).add(4 * SYM_FLAG_WORDS as u64).add(Ptr2Idx::workspace_bytes(d.m, d.nnz)).bytes()
}

/// The larger of the symmetric attempt's scratch and RadixTrans's (square matrices; RadixTrans's
/// alone for the others).
pub(crate) fn workspace_bytes(t: &Transposer, d: Dims, vb: u64) -> u64 {
    let radix = radix_trans::workspace_bytes(&t.radix, d, vb);
    if d.m == d.n {
        radix.max(own_bytes(d))
    } else {
        radix
    }
}

/// Whether `a` (square, non-empty) has a symmetric pattern and sorted rows; if so its transpose
/// is in `out`, else `out` holds nothing of use.
fn try_symmetric<T: Payload>(t: &mut Transposer, a: &DeviceCsr<T>, out: &mut DeviceCsrParts<T>, d: Dims, scratch: &mut Scratch<'_>) -> Result<bool> {
    let mut rows = scratch.slice::<u32>(d.nnz as usize)?;
    let mut bad = scratch.slice::<u32>(SYM_FLAG_WORDS)?;
    t.ptr2idx.run_with(a.ptr(), &mut rows, &mut scratch.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?)?;
    t.gpu.memset_bytes(&mut bad, 0)?;
    let stream = t.gpu.stream().clone();
    let (v, vals, out_vals) = payload(&stream, a, out);
    let (p, _p) = a.ptr().device_ptr(&stream);
    let (i, _i) = a.idx().device_ptr(&stream);
    let (r, _r) = rows.device_ptr(&stream);
    let (op, _op) = out.ptr.device_ptr_mut(&stream);
    let (oi, _oi) = out.idx.device_ptr_mut(&stream);
    let (b, _b) = bad.device_ptr_mut(&stream);
    // SAFETY: transpose_symmetric_v{4,8}(n, nnz, ptr, idx, rows, vals, out_ptr, out_idx,
    // out_vals, bad): a valid square CSR (pointer from 0 to nnz, columns < n = m), its rows from
    // ptr2idx, outputs of n + 1 and nnz words (values when present), the zeroed flag's words.
    unsafe { t.k.symmetric[v].args(&stream).arg(&d.n).arg(&d.nnz).arg(&p).arg(&i).arg(&r).arg(&vals).arg(&op).arg(&oi).arg(&out_vals).arg(&b).launch(grid(t.gpu.props().sm_count, d.nnz.max(d.n + 1)))? };
    drop((_p, _i, _r, _op, _oi, _b));
    // Every copy is raised together: the first says.
    Ok(t.gpu.download(&bad.range(0..1))?[0] == 0)
}

pub(crate) fn run<T: Payload>(t: &mut Transposer, a: &DeviceCsr<T>, out: &mut DeviceCsrParts<T>, d: Dims, scratch: &mut Scratch<'_>) -> Result<()> {
    if d.m == d.n && try_symmetric(t, a, out, d, &mut scratch.reborrow())? {
        return Ok(());
    }
    radix_trans::run(t, a, out, d, scratch)
}
