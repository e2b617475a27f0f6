//! Host side of the conversions' shared steps: row lengths and their maximum, the row of every
//! nonzero (ptr2idx), exclusive scans with their totals, the identity permutation.
use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{arg_ptr, arg_ptr_mut, Gpu};
use sptrans_matrix::DeviceCsrView;

use crate::launch::{grid, Kernels};
use crate::{Result, SpmvValue};
use spmv_kernels::LengthsArgs;

/// The longest row, and each row's length when `with_lengths`.
pub(crate) fn row_lengths<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels<T>,
    a: &DeviceCsrView<'_, T>,
    with_lengths: bool,
) -> Result<(Option<CudaSlice<u32>>, u32)> {
    let rows = a.rows();
    let mut max = gpu.alloc_zeros::<u32>(1)?;
    let mut len = if with_lengths { Some(gpu.alloc::<u32>(rows.max(1) as usize)?) } else { None };
    if rows > 0 {
        let stream = gpu.stream();
        let ((ptr, _p), (lens, _l), (mx, _m)) =
            (arg_ptr(a.ptr(), stream), gpu_runtime::arg_ptr_mut_or_null(len.as_mut(), stream), arg_ptr_mut(&mut max, stream));
        // SAFETY: spmv_row_lengths(LengthsArgs): the CSR's pointer array, len null or of rows
        // entries, max one u32; blocks of NT (whole warps).
        unsafe { k.row_lengths.launch(stream, grid(gpu, rows), LengthsArgs { ptr, len: lens, max: mx, rows })? };
    }
    let max = gpu.download(&max)?[0];
    Ok((len, max))
}

/// The keys of a sort of the rows by decreasing length, `max_len − len` (ascending = longest
/// first; a stable sort keeps rows of equal length in order), beside the identity permutation,
/// and the longest row: what JDS sorts whole and SELL-C-σ inside windows. Both buffers hold
/// `rows` entries (one for a matrix without rows).
pub(crate) fn length_keys<T: SpmvValue>(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>) -> Result<(CudaSlice<u32>, CudaSlice<u32>, u32)> {
    let rows = a.rows();
    let (_, max) = row_lengths(gpu, k, a, false)?;
    let m = rows.max(1) as usize;
    let (mut keys, mut order) = (gpu.alloc::<u32>(m)?, gpu.alloc::<u32>(m)?);
    if rows > 0 {
        let stream = gpu.stream();
        let ((ptr, _p), (kp, _k), (perm, _o)) = (arg_ptr(a.ptr(), stream), arg_ptr_mut(&mut keys, stream), arg_ptr_mut(&mut order, stream));
        let args = spmv_kernels::JdsBuildArgs { ptr, keys: kp, perm, ..crate::jds::build_args::<u8>(rows, 0, max) };
        // SAFETY: spmv_jds_keys(JdsBuildArgs: ptr, keys, perm, rows, max_len): lengths ≤ max;
        // both hold rows.
        unsafe { k.jds_keys.launch(stream, grid(gpu, rows), args)? };
    }
    Ok((keys, order, max))
}

/// The row-length histogram: `counts[l]` = rows of length `l`, for `l ≤` the longest row (empty
/// for a matrix without rows), counted by `gpu-histogram` and downloaded.
pub(crate) fn length_histogram<T: SpmvValue>(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>) -> Result<Vec<u32>> {
    let (len, max) = row_lengths(gpu, k, a, true)?;
    match len {
        Some(len) if a.rows() > 0 => {
            let mut counts = gpu.alloc_zeros::<u32>(max as usize + 1)?;
            gpu_histogram::Histogram::new(gpu)?.counts(&len.slice(0..a.rows() as usize), &mut counts)?;
            Ok(gpu.download(&counts)?)
        }
        _ => Ok(vec![]),
    }
}

/// The first `n` entries of `buf` (device buffers are allocated with at least one entry, so an
/// empty array is a buffer of one).
pub(crate) fn download_prefix<T: gpu_runtime::AnyBits + Default>(gpu: &Gpu, buf: &CudaSlice<T>, n: usize) -> Result<Vec<T>> {
    let mut v = gpu.download(buf)?;
    v.truncate(n);
    Ok(v)
}

/// The row of every nonzero.
pub(crate) fn rows_of<T: SpmvValue>(gpu: &Gpu, a: &DeviceCsrView<'_, T>) -> Result<CudaSlice<u32>> {
    let mut rows = gpu.alloc::<u32>(a.nnz().max(1) as usize)?;
    if a.nnz() > 0 {
        let mut view = rows.slice_mut(0..a.nnz() as usize);
        gpu_ptr2idx::Ptr2Idx::new(gpu)?.run(a.ptr(), &mut view)?;
    }
    Ok(rows)
}

/// The exclusive scan of `counts` (whose last entry is 0, so that the scan's last entry is the
/// total), and the total.
pub(crate) fn exclusive_scan(gpu: &Gpu, counts: &CudaSlice<u32>) -> Result<(CudaSlice<u32>, u32)> {
    let mut out = gpu.alloc::<u32>(counts.len())?;
    gpu_scan::exclusive_sum(gpu, counts, &mut out)?;
    let total = gpu.download(&out.slice(counts.len() - 1..))?[0];
    Ok((out, total))
}

/// `0, 1, …, n − 1`.
pub(crate) fn iota<T: SpmvValue>(gpu: &Gpu, k: &Kernels<T>, n: u64) -> Result<CudaSlice<u32>> {
    let mut out = gpu.alloc::<u32>(n.max(1) as usize)?;
    if n > 0 {
        let stream = gpu.stream();
        let (len, _o) = arg_ptr_mut(&mut out, stream);
        let args = LengthsArgs { ptr: std::ptr::null(), len, max: std::ptr::null_mut(), rows: n };
        // SAFETY: spmv_iota(LengthsArgs: len, rows): out holds n entries.
        unsafe { k.iota.launch(stream, grid(gpu, n), args)? };
    }
    Ok(out)
}
