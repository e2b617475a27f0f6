//! RadixTrans: ScanTrans one digit of the column index at a time (an LSD radix sort of the
//! columns carrying rows and values). Per pass, tiles of [`RADIX_TILE`] nonzeros are the
//! partitions: the upsweep writes each tile's digit counts digit-major, one exclusive scan of them
//! gives `colptr + inter`, and the downsweep ranks each nonzero in its tile (`intra`) and writes
//! the tile out in runs. The column pointer follows from the sorted keys.
use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu_runtime::scratch::Layout;
use gpu_runtime::{Payload, Scratch};
use gpu_scan::{Algorithm as ScanAlgorithm, ScanKind, Scanner};
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use transpose_kernels::{radix_passes_max, RADIX_MAX_BITS, RADIX_TILE};

use crate::{grid, payload, Dims, Result, Transposer};

/// RadixTrans's default largest digit in bits (fewest passes of at most this many bits). A pass
/// costs more the more buckets it has (shorter runs to write): on an H100, 17-bit columns ran
/// in 0.77 ms as 3 passes of 6 bits and 0.82 ms as 2 of 9; 24-bit columns in 8.6 ms as 4 passes
/// of 6 and 9.0 ms as 3 of 8 (BENCHMARKS.md).
pub const RADIX_DEFAULT_BITS: u32 = 7;

/// Words of the digit counts for `nnz` nonzeros: the widest digit's buckets per tile.
fn counts_len(nnz: u64) -> u64 {
    (1 << RADIX_MAX_BITS) * nnz.div_ceil(RADIX_TILE as u64)
}

/// The scratch of one call, in carving order: the ptr2idx rows, the second rows buffer, the two
/// key buffers, the two value buffers (`vb` bytes a nonzero, none for patterns), the digit
/// counts, then the primitives' scratch.
pub(crate) fn workspace_bytes(d: Dims, vb: u64) -> u64 {
    Layout::new()
        .add(4 * d.nnz)
        .add(4 * d.nnz)
        .add(4 * d.nnz)
        .add(4 * d.nnz)
        .add(d.nnz * vb)
        .add(d.nnz * vb)
        .add(4 * counts_len(d.nnz))
        .add(Ptr2Idx::workspace_bytes(d.m, d.nnz))
        .add(Scanner::<u32>::workspace_bytes(ScanAlgorithm::Auto, counts_len(d.nnz)))
        .bytes()
}

pub(crate) fn run<T: Payload>(t: &mut Transposer, a: &DeviceCsr<T>, out: &mut DeviceCsrParts<T>, d: Dims, scratch: &mut Scratch<'_>) -> Result<()> {
    let stream = t.gpu.stream().clone();
    let vb = if a.vals().is_some() { T::BYTES as u64 } else { 0 };
    let tiles = d.nnz.div_ceil(RADIX_TILE as u64);
    let (passes, per) = radix_passes_max(d.n, t.radix_bits);
    let mut rows_buf = scratch.slice::<u32>(d.nnz as usize)?;
    let rows0 = scratch.take(4 * d.nnz)?;
    let keys = [scratch.take(4 * d.nnz)?, scratch.take(4 * d.nnz)?];
    let vals = [scratch.take(d.nnz * vb)?, scratch.take(d.nnz * vb)?];
    let mut counts = scratch.slice::<u32>(counts_len(d.nnz) as usize)?;
    t.ptr2idx.run_with(a.ptr(), &mut rows_buf, &mut scratch.sub(Ptr2Idx::workspace_bytes(d.m, d.nnz))?)?;
    let mut scan_scratch = scratch.sub(Scanner::<u32>::workspace_bytes(ScanAlgorithm::Auto, counts_len(d.nnz)))?;
    let rows = rows_buf.device_ptr(&stream).0;
    let total_bits = if d.n <= 1 { 0 } else { 64 - (d.n - 1).leading_zeros() };
    let (k, a_vals, o_vals) = payload(&stream, a, out);
    let (a_idx, out_idx) = (a.idx().device_ptr(&stream).0, out.idx.device_ptr_mut(&stream).0);
    let counts_ptr = counts.device_ptr(&stream).0;
    // Temporaries: T0 = (keys[0], rows0, vals[0]), T1 = (keys[1], rows, vals[1]); the
    // ptr2idx rows are dead after pass 0, so T1 reuses them.
    let temp = |x: usize| (keys[x], if x == 0 { rows0 } else { rows }, if vb == 0 { 0 } else { vals[x] });
    let cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (transpose_kernels::RADIX_NT, 1, 1), shared_mem_bytes: 0 };
    for p in 0..passes {
        let shift = p * per;
        let bits = per.min(total_bits.saturating_sub(shift));
        let (kin, rin, vin) = if p == 0 { (a_idx, rows, a_vals) } else { temp(((p - 1) % 2) as usize) };
        let last = p + 1 == passes;
        let (kout, rout, vout) = if last { (keys[(p % 2) as usize], out_idx, o_vals) } else { temp((p % 2) as usize) };
        // SAFETY: transpose_radix_upsweep(keys, n, shift, bits, tiles, counts): `tiles`
        // blocks, keys of nnz words, counts of 2^MAX_BITS * tiles >= 2^bits * tiles words.
        unsafe { t.k.upsweep.args(&stream).arg(&kin).arg(&d.nnz).arg(&shift).arg(&bits).arg(&tiles).arg(&counts_ptr).launch(cfg)? };
        {
            let mut c = counts.range_mut(0..((1u64 << bits) * tiles) as usize);
            // Each pass reuses the same region (stream order).
            t.scanner.scan_in_place_with(ScanKind::Exclusive, &mut c, &mut scan_scratch.reborrow())?;
        }
        // SAFETY: transpose_radix_downsweep(keys_in, rows_in, vals_in, n, shift, bits, tiles,
        // offsets, keys_out, rows_out, vals_out): inputs and outputs of nnz items (values of
        // the kernel's width or null), distinct; offsets scanned from this pass's upsweep.
        unsafe {
            t.k.downsweep[k]
                .args(&stream)
                .arg(&kin)
                .arg(&rin)
                .arg(&vin)
                .arg(&d.nnz)
                .arg(&shift)
                .arg(&bits)
                .arg(&tiles)
                .arg(&counts_ptr)
                .arg(&kout)
                .arg(&rout)
                .arg(&vout)
                .launch(cfg)?
        };
    }
    let sorted = keys[((passes - 1) % 2) as usize];
    let (pp, _p) = out.ptr.device_ptr_mut(&stream);
    // SAFETY: transpose_sorted_ptr(keys, nnz, n, ptr): the sorted column indices (< n), ptr
    // of n + 1 words.
    unsafe { t.k.sorted_ptr.args(&stream).arg(&sorted).arg(&d.nnz).arg(&d.n).arg(&pp).launch(grid(t.gpu.props().sm_count, d.nnz))? };
    Ok(())
}
