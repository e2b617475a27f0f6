//! RadixTrans: the column indices sorted by the radix sort primitive (`gpu-radix`: an LSD sort
//! by the bits that columns below `n` use), carrying each nonzero's row (from ptr2idx) and value
//! straight into the output; the column pointer from the sorted columns by boundary detection.
//! Each pass is ScanTrans on one digit with the tiles as partitions. The output arrays serve as
//! one of the sort's two ping-pong copies (`RadixSort::sort_into_outputs_with`); ptr2idx writes
//! the rows where the first pass reads them: into the output's row indices with an even number
//! of passes, into the sort's temporary copy with an odd number (no rows buffer). The sort's
//! look-back status lives in the output's column pointer when it fits there (the pointer is
//! written after the sort): with it, the workspace is at most cuSPARSE's on the suite (f32).
use gpu_ptr2idx::Ptr2Idx;
use gpu_radix::{bits_below, Carry, RadixSort};
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use gpu_runtime::scratch::{Layout, ScratchSlice};
use gpu_runtime::{DeviceView, DeviceViewMut};
use gpu_runtime::{Payload, Scratch};
use sptrans_matrix::{DeviceCsrPartsMut, DeviceCsrView};

use crate::{grid, Dims, Result, Transposer};

fn carry(vb: u64) -> Carry {
    Carry { first: true, second_bytes: vb as usize }
}

/// Whether the sort of `n` columns takes an even number of passes (then the rows go straight
/// into the output).
fn even_passes(radix: &RadixSort, n: u64) -> bool {
    radix.passes(bits_below(n)).0 % 2 == 0
}

/// The scratch of one call, in carving order: the sorted columns, then ptr2idx's and the sort's
/// scratch (one temporary copy: the output is the other). The rows need no buffer of their own:
/// with an even number of passes ptr2idx writes them into the output's row indices, with an odd
/// number into the sort's temporary copy.
pub(crate) fn workspace_bytes(radix: &RadixSort, d: Dims, vb: u64) -> u64 {
    Layout::new().add(4 * d.nnz).add(Ptr2Idx::workspace_bytes(d.m, d.nnz)).add(sort_bytes(radix, d, vb)).bytes()
}

/// Whether the sort's look-back status fits in the output's column pointer (`n + 1` words,
/// written only after the sort), which then holds it instead of the scratch.
fn status_in_ptr(radix: &RadixSort, d: Dims) -> bool {
    radix.status_bytes_for(d.nnz, bits_below(d.n)) <= 4 * (d.n + 1)
}

/// The sort's scratch: one temporary copy and the sweep state; its look-back status (`2^bits`
/// words a tile for the digits of `n` columns, 32-bit words below 2^27 nonzeros: 0.0625–0.25
/// B/nnz on the suite) lives in the output's column pointer when it fits there.
pub(crate) fn sort_bytes(radix: &RadixSort, d: Dims, vb: u64) -> u64 {
    if status_in_ptr(radix, d) {
        radix.outputs_workspace_bytes_lent_status(d.nnz, carry(vb), bits_below(d.n))
    } else {
        radix.outputs_workspace_bytes_for(d.nnz, carry(vb), bits_below(d.n))
    }
}

/// Whether ptr2idx writes the rows into the sort's temporary copy (an odd number of passes)
/// rather than into the output's row indices: there SymTrans can share them ([`with_odd_rows`]).
pub(crate) fn rows_in_scratch(t: &Transposer, d: Dims) -> bool {
    !even_passes(&t.radix, d.n)
}

/// With an odd number of passes: calls `f` with the place in this call's scratch where ptr2idx
/// writes the rows and the first pass reads them (the sort's temporary copy), and ptr2idx's
/// scratch; `sort_ws` is [`sort_bytes`] for this call.
pub(crate) fn with_odd_rows<R>(
    d: Dims,
    sort_ws: u64,
    scratch: &mut Scratch<'_>,
    f: impl FnOnce(&mut ScratchSlice<'_, u32>, &mut Scratch<'_>) -> Result<R>,
) -> Result<R> {
    let _sorted = scratch.slice::<u32>(d.nnz as usize)?;
    let mut expand = scratch.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?;
    let mut sub = scratch.sub(sort_ws)?;
    f(&mut RadixSort::outputs_first_slice(&mut sub, d.nnz as usize)?, &mut expand)
}

/// Each nonzero's row by ptr2idx, where the sort's first pass reads it.
pub(crate) fn expand_rows<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let vb = if a.vals().is_some() { T::BYTES as u64 } else { 0 };
    if even_passes(&t.radix, d.n) {
        // The rows straight into the output's row indices; the first pass sorts from there.
        let _sorted = scratch.slice::<u32>(d.nnz as usize)?;
        t.ptr2idx.run_with(a.ptr(), &mut out.idx, &mut scratch.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?)?;
    } else {
        // The rows straight into the sort's temporary copy, where its first pass reads them.
        let ws = sort_bytes(&t.radix, d, vb);
        with_odd_rows(d, ws, scratch, |rows, expand| Ok(t.ptr2idx.run_with(a.ptr(), rows, expand)?))?;
    }
    Ok(())
}

/// The sort and the column pointer, once [`expand_rows`] has run on the same scratch.
pub(crate) fn sort<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let vb = if a.vals().is_some() { T::BYTES as u64 } else { 0 };
    let mut sorted = scratch.slice::<u32>(d.nnz as usize)?;
    let end = bits_below(d.n);
    // The values (none for a pattern matrix) travel as the second payload.
    let second: Option<(&DeviceView<'_, T>, &mut DeviceViewMut<'_, T>)> = match (a.vals(), out.vals.as_mut()) {
        (Some(v), Some(o)) => Some((v, o)),
        _ => None,
    };
    // The look-back status in the column pointer when it fits (written after the sort).
    let stream = t.gpu.stream().clone();
    let mut lent = status_in_ptr(&t.radix, d).then(|| Scratch::of(&mut out.ptr, &stream));
    let _expand = scratch.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?;
    let mut sub = scratch.sub(sort_bytes(&t.radix, d, vb))?;
    if even_passes(&t.radix, d.n) {
        t.radix.sort_into_outputs_first_in_place_with(a.idx(), &mut sorted, &mut out.idx, second, end, &mut sub, lent.as_mut())?;
    } else {
        t.radix.sort_into_outputs_first_in_scratch_with(a.idx(), &mut sorted, &mut out.idx, second, end, &mut sub, lent.as_mut())?;
    }
    drop(lent);
    let (s, _s) = sorted.device_ptr(&stream);
    let (pp, _p) = out.ptr.device_ptr_mut(&stream);
    // SAFETY: transpose_sorted_ptr(keys, nnz, n, ptr): the sorted column indices (< n, as the
    // input's), ptr of n + 1 words.
    unsafe { t.k.sorted_ptr.args(&stream).arg(&s).arg(&d.nnz).arg(&d.n).arg(&pp).launch(grid(t.gpu.props().sm_count, d.nnz))? };
    Ok(())
}

pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    expand_rows(t, a, out, d, &mut scratch.reborrow())?;
    sort(t, a, out, d, scratch)
}
