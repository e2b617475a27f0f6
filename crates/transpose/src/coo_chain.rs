//! The COO chain: CSR → COO (ptr2idx) → swap → stable sort by column ([`crate::merge_trans`]'s
//! sort) → CSR, with the column pointer by index-to-pointers (histogram + scan of the column
//! indices) instead of boundary detection, then the gather.
use gpu_histogram::Histogram;
use gpu_runtime::scratch::{Carver, Measure};
use gpu_runtime::{Payload, Scratch};
use sptrans_matrix::{DeviceCsrPartsMut, DeviceCsrView};

use crate::merge_trans::{by_column, by_column_regions, gather, ByColumnRegions};
use crate::{Dims, Result, Transposer};

/// A call's scratch: MergeTrans's sort by column, then the column pointer's histogram and scan.
struct Regions<C: Carver> {
    by_column: ByColumnRegions<C>,
    pointers: C::Sub,
}

/// The one description of [`Regions`], measured or carved.
fn regions<C: Carver>(c: &mut C, t: &Transposer, d: Dims) -> Result<Regions<C>> {
    Ok(Regions { by_column: by_column_regions(c, t, d)?, pointers: c.sub(Histogram::pointers_workspace_bytes(d.n))? })
}

pub(crate) fn workspace_bytes(t: &Transposer, d: Dims) -> u64 {
    Measure::bytes_of(|m| regions(m, t, d)).unwrap_or(u64::MAX)
}

pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let Regions { by_column: r, mut pointers } = regions(scratch, t, d)?;
    let sorted = by_column(t, a, r)?;
    t.hist.pointers_with(a.idx(), &mut out.ptr, false, &mut pointers)?;
    gather(t, a, out, &sorted)
}
