//! RadixTrans: the column indices sorted by the radix sort primitive (`gpu-radix`: an LSD sort
//! by the bits that columns below `n` use), carrying each nonzero's row (from ptr2idx) and value
//! straight into the output; the column pointer from the sorted columns by boundary detection.
//! Each pass is ScanTrans on one digit with the tiles as partitions. The output arrays are one
//! half of the sort's double buffers (`gpu_radix::DoubleBuffer`; the columns and values read
//! from the input, the rows in place); ptr2idx writes the rows where the first pass reads them:
//! into the output's row indices with an even number of passes, into their other half with an
//! odd number (no rows buffer). The sort's
//! look-back status lives in the output's column pointer when it fits there (the pointer is
//! written after the sort): with it, the workspace is at most cuSPARSE's on the suite (f32).
use gpu_ptr2idx::Ptr2Idx;
use gpu_radix::{bits_below, DoubleBuffer, RadixSort, Sort};
use gpu_runtime::scratch::{Carver, Measure, ScratchSlice};
use gpu_runtime::{AnyBits, DeviceView, DeviceViewMut, Payload, Scratch};
use sptrans_matrix::{DeviceCsrPartsMut, DeviceCsrView};

use crate::{launch, Dims, Result, Transposer};

/// Whether the sort of `n` columns takes an even number of passes (then the rows go straight
/// into the output).
fn even_passes(radix: &RadixSort, n: u64) -> bool {
    radix.passes(0..bits_below(n)).0 % 2 == 0
}

/// The scratch of one call (`vb` bytes a value): what [`carve`] describes, measured.
pub(crate) fn workspace_bytes(radix: &RadixSort, d: Dims, vb: u64) -> u64 {
    // The one description measured with stand-in value items of `vb` bytes; sizes beyond `usize`
    // cannot be carved anyway, so they report as unsatisfiable.
    Measure::bytes_of(|m| carve::<_, u8>(m, radix, d, Some(vb))).unwrap_or(u64::MAX)
}

/// Whether the sort's look-back status fits in the output's column pointer (`n + 1` words,
/// written only after the sort), which then holds it instead of the scratch.
fn status_in_ptr(radix: &RadixSort, d: Dims) -> bool {
    radix.status_bytes(d.nnz, 0..bits_below(d.n)) <= 4 * (d.n + 1)
}

/// The sort's scratch: its sweep state; the look-back status (`2^bits` words a tile for the
/// digits of `n` columns, 32-bit words below 2^27 nonzeros: 0.0625–0.25 B/nnz on the suite)
/// lives in the output's column pointer when it fits there.
fn sweep_bytes(radix: &RadixSort, d: Dims) -> u64 {
    let bits = 0..bits_below(d.n);
    let all = radix.workspace_bytes(d.nnz, bits.clone());
    if status_in_ptr(radix, d) {
        all - radix.status_bytes(d.nnz, bits)
    } else {
        all
    }
}

/// Whether ptr2idx writes the rows into this call's scratch (an odd number of passes) rather
/// than into the output's row indices: there SymTrans can share them ([`with_odd_rows`]).
pub(crate) fn rows_in_scratch(t: &Transposer, d: Dims) -> bool {
    !even_passes(&t.radix, d.n)
}

/// The scratch of one call, in carving order: the sorted columns; ptr2idx's scratch; the rows'
/// other half (the output's row indices are one); with more than one pass the columns' and (with
/// values) the values' other halves (one pass reads the input and writes the current halves
/// only); the sort's sweep state, without its look-back status when that lives in the output's
/// column pointer. With an even number of passes ptr2idx writes the rows into the output's row
/// indices, with an odd number into their other half here: no rows buffer.
struct Carved<C: Carver, T: AnyBits> {
    sorted: C::Slice<u32>,
    expand: C::Sub,
    rows: C::Slice<u32>,
    /// The columns' and values' other halves (more than one pass).
    alternates: Option<Alternates<C, T>>,
    sweep: C::Sub,
}

/// The columns' other half and, with values, the values'.
type Alternates<C, T> = (<C as Carver>::Slice<u32>, Option<<C as Carver>::Slice<T>>);

/// The one description of a call's scratch ([`Carved`]), measured ([`workspace_bytes`]) or
/// carved from a lent scratch; `values`: the values' item bytes, `None` for a pattern.
fn carve<C: Carver, T: Payload>(c: &mut C, radix: &RadixSort, d: Dims, values: Option<u64>) -> Result<Carved<C, T>> {
    let n = d.nnz as usize;
    let sorted = c.slice::<u32>(n)?;
    let expand = c.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?;
    let rows = c.slice::<u32>(n)?;
    let alternates = if radix.passes(0..bits_below(d.n)).0 > 1 {
        let keys = c.slice::<u32>(n)?;
        Some((keys, values.map(|vb| c.items::<T>(n, vb)).transpose()?))
    } else {
        None
    };
    let sweep = c.sub(sweep_bytes(radix, d))?;
    Ok(Carved { sorted, expand, rows, alternates, sweep })
}

/// With an odd number of passes: calls `f` with the place in this call's scratch where ptr2idx
/// writes the rows and the first pass reads them (their pair's current half), and ptr2idx's
/// scratch.
pub(crate) fn with_odd_rows<R>(
    t: &Transposer,
    d: Dims,
    scratch: &mut Scratch<'_>,
    f: impl FnOnce(&mut ScratchSlice<'_, u32>, &mut Scratch<'_>) -> Result<R>,
) -> Result<R> {
    let mut c = carve::<_, u32>(&mut scratch.reborrow(), &t.radix, d, None)?;
    f(&mut c.rows, &mut c.expand)
}

/// Each nonzero's row by ptr2idx, where the sort's first pass reads it.
pub(crate) fn expand_rows<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let mut c = carve::<_, T>(&mut scratch.reborrow(), &t.radix, d, None)?;
    if even_passes(&t.radix, d.n) {
        // The rows straight into the output's row indices; the first pass sorts from there.
        t.ptr2idx.run_with(a.ptr(), &mut out.idx, &mut c.expand)?;
    } else {
        // The rows straight into their other half in the scratch, where the first pass reads
        // them.
        t.ptr2idx.run_with(a.ptr(), &mut c.rows, &mut c.expand)?;
    }
    Ok(())
}

/// The sort and the column pointer, once [`expand_rows`] has run on the same scratch. With
/// `run_if` (`Auto`'s verdict word, [`crate::auto_sym`]) the sort runs only when the word is not
/// 0, and the pointer is then the sorted columns' or else a copy of the input's.
pub(crate) fn sort<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
    run_if: Option<&DeviceView<'_, u32>>,
) -> Result<()> {
    let stream = t.gpu.stream().clone();
    let values = a.vals().is_some() && out.vals.is_some();
    let mut c = carve::<_, T>(&mut scratch.reborrow(), &t.radix, d, values.then_some(std::mem::size_of::<T>() as u64))?;
    let (mut keys_alt, mut vals_alt) = match c.alternates.take() {
        Some((k, v)) => (Some(k), v),
        None => (None, None),
    };
    let mut keys = pair(c.sorted.view_mut(), keys_alt.as_mut())?;
    // The rows in place: in the output's row indices (even passes) or in their other half here
    // (odd), ending in the output's row indices either way.
    let mut rows = if even_passes(&t.radix, d.n) {
        DoubleBuffer::new(out.idx.reborrow(), c.rows.view_mut())?
    } else {
        DoubleBuffer::new(c.rows.view_mut(), out.idx.reborrow())?
    };
    let end = bits_below(d.n);
    // The look-back status in the column pointer when it fits (written after the sort).
    let lent = status_in_ptr(&t.radix, d).then(|| Scratch::of(&mut out.ptr, &stream));
    let mut job = Sort::keys_from(a.idx().clone(), &mut keys).first(&mut rows).bits(0..end);
    if let Some(w) = run_if {
        job = job.run_if(w.clone());
    }
    match (a.vals(), out.vals.as_mut()) {
        // The values (none for a pattern matrix) travel as the second payload.
        (Some(v), Some(o)) => {
            let mut vals = pair(o.reborrow(), vals_alt.as_mut())?;
            run_sort(&mut t.radix, job.second_from(v.clone(), &mut vals), lent, &mut c.sweep)?;
        }
        _ => run_sort(&mut t.radix, job, lent, &mut c.sweep)?,
    }
    drop((keys, rows));
    match run_if {
        // SAFETY: the verdict word, the sorted column indices (nnz words; the kernel clamps
        // them to n), the input's and the output's pointers of n + 1 words.
        Some(w) => unsafe { launch::auto_ptr(&t.gpu, &t.k, w, &c.sorted.view(), a.ptr(), &mut out.ptr)? },
        // SAFETY: the sorted column indices (nnz words; the kernel clamps them to n), the output
        // pointer of n + 1 words.
        None => unsafe { launch::sorted_ptr(&t.gpu, &t.k, &c.sorted.view(), d.n, &mut out.ptr)? },
    }
    Ok(())
}

/// `current` and, when given, `alternate` as a double buffer (a single one without).
fn pair<'a, T>(current: DeviceViewMut<'a, T>, alternate: Option<&'a mut ScratchSlice<'_, T>>) -> Result<DoubleBuffer<'a, T>> {
    Ok(match alternate {
        Some(alt) => DoubleBuffer::new(current, alt.view_mut())?,
        None => DoubleBuffer::single(current),
    })
}

/// Runs `job` on the sweep state `sweep`, with the look-back status in `lent` when given.
fn run_sort<V: Payload>(radix: &mut RadixSort, job: Sort<'_, '_, V>, lent: Option<Scratch<'_>>, sweep: &mut Scratch<'_>) -> Result<()> {
    let job = match lent {
        Some(l) => job.lent_status(l),
        None => job,
    };
    Ok(radix.sort_with(job, sweep)?)
}

pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    expand_rows(t, a, out, d, &mut scratch.reborrow())?;
    sort(t, a, out, d, scratch, None)
}
