//! ScanTrans (Wang, Liu & Hou, ICS'16): ptr2idx, partitioned column histograms (`inter`,
//! `(P + 1) × n`) with per-nonzero ranks (`intra`), vertical scan, exclusive scan of the totals
//! (the column pointer), then one scatter of every nonzero to its slot.
use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::scratch::{Carver, Measure};
use gpu_runtime::{Payload, Scratch};
use gpu_scan::{Algorithm as ScanAlgorithm, ScanKind, Scanner};
use sptrans_matrix::{DeviceCsrPartsMut, DeviceCsrView};

use crate::{launch, Dims, Error, Result, Transposer};

/// Partitions ScanTrans uses for `nnz` nonzeros and `n` columns on a GPU of `sms`
/// multiprocessors. Its time is about `a * nnz / P` (each partition is walked by one warp, 32
/// nonzeros a step, a latency-bound chain) plus `b * P * n` (the `(P + 1) × n` table is zeroed,
/// scanned and read). The optimum `P = sqrt(a * nnz / (b * n))` uses `a / b ≈ 5800`, fitted to a
/// partition sweep on an H100 (BENCHMARKS.md). `P` is then capped at `32 * sms` (past that the
/// vertical scan down `P + 1` rows costs more than the walks save: a 2M × 64 matrix ran fastest
/// near 4096 partitions), by `nnz / 32` (a partition is worth a warp step), and by a table budget
/// of `max(16 * nnz, 2^22)` words.
pub fn scan_parts(nnz: u64, n: u64, sms: u32) -> u64 {
    let ideal = (SCAN_PARTS_A_OVER_B * nnz as f64 / n.max(1) as f64).sqrt().round() as u64;
    let busy = (sms.max(1) as u64 * 32).min(nnz.div_ceil(32));
    let fit = ((16 * nnz).max(1 << 22) / n.max(1)).saturating_sub(1);
    ideal.min(busy).min(fit).max(1)
}

/// The ratio `a / b` of [`scan_parts`]'s cost model (per-nonzero walk cost over per-table-entry
/// cost), measured on an H100.
pub const SCAN_PARTS_A_OVER_B: f64 = 5800.0;

/// Words of the `(parts + 1) × n` table, or [`Error::TooLarge`].
fn table_len(parts: u64, n: u64) -> Result<u64> {
    (parts + 1).checked_mul(n).filter(|&l| l <= isize::MAX as u64 / 4).ok_or(Error::TooLarge {
        what: "ScanTrans table (parts + 1) * n",
        len: parts,
        max: isize::MAX as u64 / 4 / n.max(1),
    })
}

/// The scratch of one call, in carving order: the row of every nonzero (`rows`), its rank in its
/// partition (`intra`), the table, then the primitives' scratch.
struct Regions<C: Carver> {
    rows: C::Slice<u32>,
    intra: C::Slice<u32>,
    table: C::Slice<u32>,
    expand: C::Sub,
    partition: C::Sub,
    scan: C::Sub,
}

/// The one description of [`Regions`] (`parts` partitions), measured or carved.
fn regions<C: Carver>(c: &mut C, t: &Transposer, d: Dims, parts: u64) -> Result<Regions<C>> {
    Ok(Regions {
        rows: c.slice(d.nnz as usize)?,
        intra: c.slice(d.nnz as usize)?,
        table: c.slice(table_len(parts, d.n)? as usize)?,
        expand: c.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?,
        partition: c.sub(t.hist.partitioned_workspace_bytes(parts, d.n))?,
        scan: c.sub(Scanner::<u32>::workspace_bytes(ScanAlgorithm::Auto, d.n))?,
    })
}

pub(crate) fn workspace_bytes(t: &Transposer, d: Dims) -> Result<u64> {
    let parts = t.scan_parts_for(d.nnz, d.n);
    Measure::bytes_of(|m| regions(m, t, d, parts))
}

pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    a: &DeviceCsrView<'_, T>,
    out: &mut DeviceCsrPartsMut<'_, T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let parts = t.scan_parts_for(d.nnz, d.n);
    let stream = t.gpu.stream().clone();
    let Regions { mut rows, mut intra, mut table, mut expand, mut partition, mut scan } = regions(scratch, t, d, parts)?;
    t.ptr2idx.run_with(a.ptr(), &mut rows, &mut expand)?;
    t.hist.partitioned_with(a.idx(), parts, &mut table, &mut intra, false, &mut partition)?;
    // Column pointer: exclusive scan of the totals (row `parts` of the table), then nnz.
    {
        let totals = table.range((parts * d.n) as usize..);
        let mut head = out.ptr.slice_mut(0..d.n as usize);
        t.scanner.scan_with(ScanKind::Exclusive, &totals, &mut head, &mut scan)?;
    }
    let mut tail = out.ptr.slice_mut(d.n as usize..);
    stream.memcpy_htod(&[d.nnz as u32], &mut tail).map_err(|e| gpu_runtime::Error::driver("column pointer tail")(e))?;
    let chunk = d.nnz.div_ceil(parts);
    let input = launch::ScatterIn { cols: a.idx(), rows: rows.view(), colptr: out.ptr.as_view(), table: table.view(), intra: intra.view() };
    // SAFETY: nnz-long inputs and outputs, colptr n + 1 words, the table (parts + 1) * n words
    // scanned by `partitioned` over these columns with this chunk; `a` keeps the view's
    // invariants (columns < n), so every slot is < nnz and distinct.
    unsafe { launch::scatter(&t.gpu, &t.k, d.n, chunk, input, a.vals().zip(out.vals.as_mut()), &mut out.idx)? };
    Ok(())
}
