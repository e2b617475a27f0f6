//! `Auto` on square matrices: SymTrans tried and RadixTrans run only if it fails, decided on the
//! device, with no synchronization (issue 55, item 4). One launch sequence whatever the pattern,
//! so a call can be captured into a CUDA graph:
//!
//! 1. ptr2idx writes each nonzero's row where the sort's first pass reads them (RadixTrans's
//!    scratch: an odd number of passes, which this path requires);
//! 2. SymTrans's probe looks for the mirrors of a sample of nonzeros and counts how scattered
//!    they are; a one-warp gate raises the flag when they are (more distinct regions of 2^12 rows
//!    than half the probed nonzeros: a random numbering, where the mirror searches miss the
//!    caches — on a randomly numbered 27-point stencil of 26.5M nonzeros SymTrans ran at 0.66×
//!    cuSPARSE's speed, RadixTrans at 1.99×, H100); the full pass (which every warp leaves
//!    at once when the flag is up) writes the indices and each value at its mirror's place,
//!    raising the flag at any nonzero without a mirror;
//! 3. one warp turns the flag into one verdict word;
//! 4. RadixTrans's sort, every kernel of which does nothing unless the verdict is raised
//!    ([`gpu_radix::Sort::run_if`]);
//! 5. the column pointer from the sorted columns when the verdict is raised, else a copy of the
//!    input's (`transpose_auto_ptr`).
//!
//! On a symmetric pattern that is one pass over the nonzeros instead of three; on any other, the
//! probe, two launches that return at once and a one-warp launch (a few microseconds) on top of
//! RadixTrans. Every kernel stays inside its buffers whatever the structure holds (the searches
//! are clamped), so a view whose check is still running may be transposed this way
//! ([`crate::Transposer::transpose_pending_with`]).
use gpu_runtime::scratch::{Carver, Measure};
use gpu_runtime::{Payload, Scratch};
use sptrans_matrix::{DeviceCsrPartsMut, DeviceCsrView};
use transpose_kernels::SYM_FLAG_WORDS;

use crate::{launch, radix_trans, sym_trans, Dims, Result, Transposer};

/// Whether `Auto` takes this path for an `m × n` matrix of `vb`-byte values: square, values of 0,
/// 4 or 8 bytes (SymTrans's), and a sort of an odd number of passes, whose rows live in the
/// scratch where the pass does not write (1–8- and 17–24-bit column indices).
pub(crate) fn applies(t: &Transposer, d: Dims, vb: u64) -> bool {
    d.m == d.n && matches!(vb, 0 | 4 | 8) && radix_trans::rows_in_scratch(t, d)
}

/// A call's scratch: RadixTrans's, then the flag's words and the verdict word.
struct Regions<C: Carver> {
    radix: C::Sub,
    bad: C::Slice<u32>,
    verdict: C::Slice<u32>,
}

/// The one description of [`Regions`] (`vb` bytes a value), measured or carved.
fn regions<C: Carver>(c: &mut C, t: &Transposer, d: Dims, vb: u64) -> Result<Regions<C>> {
    Ok(Regions { radix: c.sub(radix_trans::workspace_bytes(&t.radix, d, vb))?, bad: c.slice(SYM_FLAG_WORDS)?, verdict: c.slice(1)? })
}

/// [`Regions`], measured.
pub(crate) fn workspace_bytes(t: &Transposer, d: Dims, vb: u64) -> u64 {
    Measure::bytes_of(|m| regions(m, t, d, vb)).unwrap_or(u64::MAX)
}

pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let vb = if a.vals().is_some() { T::BYTES as u64 } else { 0 };
    let Regions { mut radix, mut bad, mut verdict } = regions(scratch, t, d, vb)?;
    t.gpu.memset_bytes(&mut bad, 0)?;
    radix_trans::expand_rows(t, a, out, d, &mut radix.reborrow())?;
    let stream = t.gpu.stream().clone();
    sym_trans::launch_probe(t, &stream, a, &mut bad.view_mut(), d)?;
    // SAFETY: the probe's flag words.
    unsafe { launch::gate(&t.gpu, &t.k, &mut bad.view_mut())? };
    radix_trans::with_odd_rows(t, d, &mut radix.reborrow(), |rows, _| {
        sym_trans::launch_pass(t, a, out, &rows.view(), &mut bad.view_mut(), d, false)
    })?;
    // SAFETY: the flag's SYM_FLAG_WORDS words and one verdict word, carved above.
    unsafe { launch::verdict(&t.gpu, &t.k, &bad.view(), &mut verdict.view_mut())? };
    radix_trans::sort(t, a, out, d, &mut radix, Some(&verdict.view()))
}
