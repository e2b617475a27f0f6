//! BucketTrans: an MSD partition of the nonzeros by the high bits of their column (one stable
//! radix pass of `hi` bits: a bucket is a run of consecutive columns, whose nonzeros land
//! together in input order), then one block per bucket (`transpose_bucket_v{4,8}`) counts its
//! columns (writing their part of the column pointer), ranks each nonzero in its column round by
//! round, stages the round in column order in shared memory and writes it out in runs. Columns
//! too wide for the two (more than `PARTITION_MAX_BITS + BUCKET_MAX_LOW` bits) get their lowest
//! `pre` bits sorted first by an LSD radix sort, and their pointer by index-to-pointers; so do
//! matrices of at most `2^hi` columns, which the partition alone transposes. The split is
//! [`transpose_kernels::bucket_plan`].
//!
//! Traffic per nonzero with 4-byte values and `pre = 0`: ptr2idx writes the row (4 B); the
//! partition reads the column twice (upsweep, downsweep) with the row and value and writes all
//! three (24 B); the bucket pass reads the column twice (the count, mostly from L2), the row and
//! the value, and writes the row and value (20–24 B).
use gpu_histogram::Histogram;
use gpu_ptr2idx::Ptr2Idx;
use gpu_radix::{bits_below, Carry, RadixSort};
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig};
use gpu_runtime::scratch::Layout;
use gpu_runtime::{Payload, Scratch};
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use transpose_kernels::{bucket_count, bucket_plan, bucket_stage_bytes, NT};

use crate::{Dims, Result, Transposer};

/// The partition's default digit width (bits): the most buckets one radix pass makes, so that
/// the bucket pass has enough blocks.
pub const BUCKET_DEFAULT_HI: u32 = 9;

/// `(pre, hi, low)` for `n` columns and the partition width `hi`.
pub(crate) fn plan(n: u64, hi: u32) -> (u32, u32, u32) {
    bucket_plan(bits_below(n), hi)
}

fn carry(vb: u64) -> Carry {
    Carry { first: true, second_bytes: vb as usize }
}

/// The primitives' scratch, one region reused by each in turn (they run in stream order).
fn primitives_bytes(d: Dims, vb: u64, pre: u32) -> u64 {
    let mut b = Ptr2Idx::workspace_bytes(d.m, d.nnz).max(RadixSort::partition_workspace_bytes(d.nnz)).max(Histogram::pointers_workspace_bytes(d.n));
    if pre > 0 {
        b = b.max(RadixSort::into_workspace_bytes(d.nnz, carry(vb)));
    }
    b
}

/// The scratch of one call, in carving order: the partitioned columns, rows and values (the
/// columns alone when the partition writes the output itself, `low = 0`), the LSD-sorted ones
/// when `pre > 0`, then one region for the primitives.
pub(crate) fn workspace_bytes(d: Dims, vb: u64, hi: u32) -> u64 {
    let (pre, _, low) = plan(d.n, hi);
    let vals = if low == 0 { 0 } else { vb * d.nnz };
    let mut l = Layout::new().add(4 * d.nnz).add(4 * d.nnz).add(vals);
    if pre > 0 {
        l = l.add(4 * d.nnz).add(4 * d.nnz).add(vb * d.nnz);
    }
    l.add(primitives_bytes(d, vb, pre)).bytes()
}

pub(crate) fn run<T: Payload>(t: &mut Transposer, a: &DeviceCsr<T>, out: &mut DeviceCsrParts<T>, d: Dims, scratch: &mut Scratch<'_>) -> Result<()> {
    let vb = if a.vals().is_some() { T::BYTES as u64 } else { 0 };
    let (pre, hi, low) = plan(d.n, t.bucket_hi);
    let nnz = d.nnz as usize;
    let vlen = if vb > 0 { nnz } else { 0 };
    let mut keys = scratch.slice::<u32>(nnz)?;
    let mut rows = scratch.slice::<u32>(nnz)?;
    let mut vals = scratch.slice::<T>(if low == 0 { 0 } else { vlen })?;
    let mut sorted = if pre > 0 { Some((scratch.slice::<u32>(nnz)?, scratch.slice::<u32>(nnz)?, scratch.slice::<T>(vlen)?)) } else { None };
    let mut prim = scratch.sub(primitives_bytes(d, vb, pre))?;
    if low == 0 || pre > 0 {
        // Otherwise the bucket pass writes the pointer.
        t.hist.pointers_with(a.idx(), &mut out.ptr, false, &mut prim.reborrow())?;
    }
    if low == 0 {
        // One pass: the partition by the whole column is the transpose.
        t.ptr2idx.run_with(a.ptr(), &mut rows, &mut prim.reborrow())?;
        match (a.vals(), out.vals.as_mut()) {
            (Some(v), Some(o)) => {
                t.radix.partition_into_with(a.idx(), &mut keys, Some((&rows, &mut out.idx)), Some((v, o)), 0, hi, &mut prim.reborrow())?
            }
            _ => t.radix.partition_into_with(
                a.idx(),
                &mut keys,
                Some((&rows, &mut out.idx)),
                None::<(&CudaSlice<T>, &mut CudaSlice<T>)>,
                0,
                hi,
                &mut prim.reborrow(),
            )?,
        }
        return Ok(());
    }
    // The output's indices hold the rows until the bucket pass writes them.
    t.ptr2idx.run_with(a.ptr(), &mut out.idx, &mut prim.reborrow())?;
    let shift = pre + low;
    match &mut sorted {
        None => match a.vals() {
            Some(v) => {
                t.radix.partition_into_with(a.idx(), &mut keys, Some((&out.idx, &mut rows)), Some((v, &mut vals)), shift, hi, &mut prim.reborrow())?
            }
            None => t.radix.partition_into_with(
                a.idx(),
                &mut keys,
                Some((&out.idx, &mut rows)),
                None::<(&CudaSlice<T>, &mut CudaSlice<T>)>,
                shift,
                hi,
                &mut prim.reborrow(),
            )?,
        },
        Some((k1, r1, v1)) => {
            // LSD by the low `pre` bits first (consuming the rows in `out.idx`), then the
            // partition of that order.
            match a.vals() {
                Some(v) => {
                    t.radix.sort_into_with(a.idx(), &mut *k1, Some((&mut out.idx, &mut *r1)), Some((v, &mut *v1)), pre, &mut prim.reborrow())?
                }
                None => t.radix.sort_into_with(
                    a.idx(),
                    &mut *k1,
                    Some((&mut out.idx, &mut *r1)),
                    None::<(&CudaSlice<T>, &mut CudaSlice<T>)>,
                    pre,
                    &mut prim.reborrow(),
                )?,
            }
            if vb > 0 {
                t.radix.partition_into_with(&*k1, &mut keys, Some((&*r1, &mut rows)), Some((&*v1, &mut vals)), shift, hi, &mut prim.reborrow())?;
            } else {
                t.radix.partition_into_with(
                    &*k1,
                    &mut keys,
                    Some((&*r1, &mut rows)),
                    None::<(&CudaSlice<T>, &mut CudaSlice<T>)>,
                    shift,
                    hi,
                    &mut prim.reborrow(),
                )?;
            }
        }
    }
    let stream = t.gpu.stream().clone();
    let (k, _k) = keys.device_ptr(&stream);
    let (r, _r) = rows.device_ptr(&stream);
    let (v, _v) = vals.device_ptr(&stream);
    let v = if vb > 0 { v } else { 0 };
    let (p, _p) = out.ptr.device_ptr_mut(&stream);
    let (orow, _or) = out.idx.device_ptr_mut(&stream);
    let ov = match out.vals.as_mut() {
        Some(o) if vb > 0 => o.device_ptr_mut(&stream).0,
        _ => 0,
    };
    let blocks = bucket_count(d.n, pre, low);
    let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: bucket_stage_bytes(vb as u32) };
    let kernel = &t.k.bucket[usize::from(vb == 8)];
    // SAFETY: transpose_bucket_v{4,8}(keys, rows, vals, nnz, n, pre, low, colptr, out_rows,
    // out_vals): one block per bucket of (pre, low) = bucket_plan (low <= BUCKET_MAX_LOW) with
    // its staging bytes (allowed at load); keys are the input's columns (< n) partitioned
    // stably by the bits from pre + low up, rows/vals with them, nnz items each, outputs nnz
    // items; colptr has n + 1 words and, with pre > 0, the pointer of these columns
    // (index-to-pointers above); the kernel's width matches the values (null when absent).
    unsafe { kernel.args(&stream).arg(&k).arg(&r).arg(&v).arg(&d.nnz).arg(&d.n).arg(&pre).arg(&low).arg(&p).arg(&orow).arg(&ov).launch(cfg)? };
    Ok(())
}
