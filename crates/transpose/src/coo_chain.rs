//! The COO chain: CSR → COO (ptr2idx) → swap → stable sort by column ([`crate::merge_trans`]'s
//! sort) → CSR, with the column pointer by index-to-pointers (histogram + scan of the column
//! indices) instead of boundary detection, then the gather.
use gpu_histogram::Histogram;
use gpu_runtime::{Payload, Scratch};
use sptrans_matrix::{DeviceCsrPartsMut, DeviceCsrView};

use crate::merge_trans::{by_column, by_column_bytes, gather};
use crate::{Dims, Result, Transposer};

pub(crate) fn workspace_bytes(t: &Transposer, d: Dims) -> u64 {
    by_column_bytes(t, d).add(Histogram::pointers_workspace_bytes(d.n)).bytes()
}

pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let sorted = by_column(t, a, d, scratch)?;
    let mut sub = scratch.sub(Histogram::pointers_workspace_bytes(d.n))?;
    t.hist.pointers_with(a.idx(), &mut out.ptr, false, &mut sub)?;
    gather(t, a, out, &sorted)
}
