//! SymTrans: for a square matrix whose pattern is symmetric (`(r, c)` a nonzero exactly when
//! `(c, r)` is) with rows sorted, the transpose's pointer and row indices are the matrix's own
//! pointer and column indices; only the values move, each to its mirror's place, found by a
//! binary search of the mirror's row (`transpose_symmetric_v{4,8}`, after ptr2idx gives each
//! nonzero's row). One pass, about 20 bytes a nonzero with 4-byte values, where RadixTrans takes
//! 3–4 passes of 12 each way.
//!
//! First a probe (`transpose_symmetric_probe`) looks for the mirrors of the first nonzeros of
//! rows spread over the matrix, on the plan's second stream while ptr2idx runs on the main one;
//! the host waits for its verdict alone (copied to page-locked memory). A refused pattern goes to
//! RadixTrans. Otherwise the pass checks every nonzero as it goes: a nonzero without a mirror,
//! or a row not strictly sorted, raises a flag, which the host reads back; then RadixTrans
//! transposes the matrix into the same outputs. Both read-backs synchronize the stream, unlike
//! the other GPU algorithms. A rectangular matrix goes to RadixTrans at once.
//!
//! When RadixTrans's sort takes an odd number of passes (every suite matrix), its ptr2idx writes
//! the rows into the sort's temporary copy, which the pass does not write: SymTrans shares them,
//! so neither refusal wastes ptr2idx, and its workspace is RadixTrans's plus the flag. With an
//! even number the rows would go into the output's row indices, which the pass writes: SymTrans
//! then keeps rows of its own, after the probe's verdict, and its workspace is the larger of the
//! two.
use gpu_ptr2idx::Ptr2Idx;
use std::sync::Arc;

use gpu_runtime::cudarc::driver::{CudaStream, DevicePtr};
use gpu_runtime::scratch::{Carver, Measure};
use gpu_runtime::{DeviceView, DeviceViewMut, Payload, Scratch};
use sptrans_matrix::{DeviceCsrPartsMut, DeviceCsrView};
use transpose_kernels::{sym_flag_raised, SYM_FLAG_WORDS};

use crate::{launch, radix_trans, Dims, Result, Transposer};

/// The symmetric attempt's scratch when it keeps rows of its own (RadixTrans's sort takes an
/// even number of passes, so its rows would go into the output's row indices, which the pass
/// writes), in carving order: the rows, the flag's copies, ptr2idx's scratch. RadixTrans's
/// scratch overlaps it from the same start: one runs or the other.
struct OwnRegions<C: Carver> {
    rows: C::Slice<u32>,
    bad: C::Slice<u32>,
    expand: C::Sub,
}

/// The one description of [`OwnRegions`], measured or carved.
fn own_regions<C: Carver>(c: &mut C, d: Dims) -> Result<OwnRegions<C>> {
    Ok(OwnRegions { rows: c.slice(d.nnz as usize)?, bad: c.slice(SYM_FLAG_WORDS)?, expand: c.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))? })
}

/// The scratch with an odd number of passes: RadixTrans's, then the flag's copies (the rows are
/// RadixTrans's, in its sort's temporary copy, shared).
struct SharedRegions<C: Carver> {
    radix: C::Sub,
    bad: C::Slice<u32>,
}

/// The one description of [`SharedRegions`] (`vb` bytes a value), measured or carved.
fn shared_regions<C: Carver>(c: &mut C, t: &Transposer, d: Dims, vb: u64) -> Result<SharedRegions<C>> {
    Ok(SharedRegions { radix: c.sub(radix_trans::workspace_bytes(&t.radix, d, vb))?, bad: c.slice(SYM_FLAG_WORDS)? })
}

/// Square matrices: with an odd number of passes, [`SharedRegions`]; with an even number, the
/// larger of [`OwnRegions`] and RadixTrans's (one or the other runs, from the same start).
/// Other matrices: RadixTrans's alone.
pub(crate) fn workspace_bytes(t: &Transposer, d: Dims, vb: u64) -> u64 {
    let radix = radix_trans::workspace_bytes(&t.radix, d, vb);
    let measured = if d.m != d.n {
        Ok(radix)
    } else if radix_trans::rows_in_scratch(t, d) {
        Measure::bytes_of(|m| shared_regions(m, t, d, vb))
    } else {
        Measure::bytes_of(|m| own_regions(m, d)).map(|own| own.max(radix))
    };
    measured.unwrap_or(u64::MAX)
}

/// Launches SymTrans's probe of `a` (square, non-empty; [`transpose_kernels::sym_probe_row`]) on
/// the zeroed flag words `bad` ([`SYM_FLAG_WORDS`]): they stay zero unless a probed nonzero has
/// no mirror (the pattern is not symmetric, or a row is not sorted).
pub(crate) fn launch_probe<T: Payload>(
    t: &Transposer,
    stream: &Arc<CudaStream>,
    a: &DeviceCsrView<'_, T>,
    bad: &mut DeviceViewMut<'_, u32>,
    d: Dims,
) -> Result<()> {
    if bad.len() < SYM_FLAG_WORDS {
        return Err(crate::Error::LengthMismatch { what: "SymTrans's flag", expected: SYM_FLAG_WORDS as u64, got: bad.len() as u64 });
    }
    // SAFETY: a valid square CSR (the view's invariants: pointer from 0 to nnz, columns < n = m),
    // n > 0 (callers), SYM_FLAG_WORDS words of flag (checked).
    unsafe { launch::probe(stream, &t.k, d.n, a.ptr(), a.idx(), bad) }
}

/// The full pass: `out` gets `a`'s indices (and its pointer when `with_ptr`) and each value at
/// its mirror's place; the flag `bad` (zeroed) is raised when the pattern is not symmetric.
/// `rows`: each nonzero's row.
pub(crate) fn launch_pass<T: Payload>(
    t: &Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    rows: &DeviceView<'_, u32>,
    bad: &mut DeviceViewMut<'_, u32>,
    d: Dims,
    with_ptr: bool,
) -> Result<()> {
    if rows.len() as u64 != d.nnz || bad.len() < SYM_FLAG_WORDS {
        return Err(crate::Error::LengthMismatch { what: "SymTrans's rows", expected: d.nnz, got: rows.len() as u64 });
    }
    // SAFETY: a square matrix's pointer of n + 1 >= 2 words and nnz indices (any contents: the
    // kernel clamps its searches), its rows from ptr2idx (nnz words, not an output), outputs of
    // n + 1 and nnz words (values when present: `check_call`), the zeroed flag's words.
    let out_ptr = if with_ptr { Some(&mut out.ptr) } else { None };
    unsafe { launch::symmetric(&t.gpu, &t.k, d.n, (a.ptr(), a.idx(), rows), a.vals().zip(out.vals.as_mut()), out_ptr, &mut out.idx, bad) }
}

/// Whether the flag is still down ([`sym_flag_raised`]). Synchronizes.
fn passed(t: &Transposer, bad: &impl DevicePtr<u32>) -> Result<bool> {
    Ok(!sym_flag_raised(&t.gpu.download(bad)?))
}

/// The probe on the main stream, its flag `bad` zeroed first, and its verdict read back
/// ([`passed`]; synchronizes).
pub(crate) fn probe<T: Payload>(t: &Transposer, a: &DeviceCsrView<'_, T>, bad: &mut DeviceViewMut<'_, u32>, d: Dims) -> Result<bool> {
    t.gpu.memset_bytes(bad, 0)?;
    launch_probe(t, t.gpu.stream(), a, bad, d)?;
    passed(t, bad)
}

pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    if d.m != d.n {
        return radix_trans::run(t, a, out, d, scratch);
    }
    let vb = if a.vals().is_some() { T::BYTES as u64 } else { 0 };
    if radix_trans::rows_in_scratch(t, d) {
        // RadixTrans's rows serve both: ptr2idx runs while the host reads the probe's verdict,
        // and is not wasted when either check fails.
        let SharedRegions { mut radix, mut bad } = shared_regions(scratch, t, d, vb)?;
        let main = t.gpu.stream().clone();
        t.gpu.memset_bytes(&mut bad, 0)?;
        // The probe on the side stream, beside ptr2idx on the main one (it is latency-bound,
        // ptr2idx bandwidth-bound); its verdict copied to page-locked memory there.
        let side = t.side_stream()?;
        let err = || gpu_runtime::Error::driver("SymTrans's probe on the side stream");
        side.join(&main).map_err(err())?;
        launch_probe(t, &side, a, &mut bad.view_mut(), d)?;
        side.memcpy_dtoh(&bad, t.verdict()?).map_err(err())?;
        let probed = side.record_event(None).map_err(err())?;
        radix_trans::expand_rows(t, a, out, d, &mut radix.reborrow())?;
        // Waits for the verdict's copy only; ptr2idx goes on.
        let probe_passed = !sym_flag_raised(t.verdict()?.as_slice().map_err(err())?);
        // What follows on the main stream comes after the probe (its flag, its reads).
        main.wait(&probed).map_err(err())?;
        if probe_passed {
            radix_trans::with_odd_rows(t, d, &mut radix.reborrow(), |rows, _| launch_pass(t, a, out, &rows.view(), &mut bad.view_mut(), d, true))?;
            if passed(t, &bad)? {
                return Ok(());
            }
        }
        // The rows are still where the sort's first pass reads them.
        return radix_trans::sort(t, a, out, d, &mut radix, None);
    }
    // An even number of passes: rows of its own, read after the probe's verdict.
    let mut own = scratch.reborrow();
    let OwnRegions { mut rows, mut bad, mut expand } = own_regions(&mut own, d)?;
    if probe(t, a, &mut bad.view_mut(), d)? {
        t.ptr2idx.run_with(a.ptr(), &mut rows, &mut expand)?;
        launch_pass(t, a, out, &rows.view(), &mut bad.view_mut(), d, true)?;
        if passed(t, &bad)? {
            return Ok(());
        }
    }
    drop((rows, bad, expand, own));
    radix_trans::run(t, a, out, d, scratch)
}
