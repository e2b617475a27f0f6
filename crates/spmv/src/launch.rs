//! The only `unsafe` launches of the spmv kernels, with their grid sizing.
use gpu_runtime::cudarc::driver::LaunchConfig;
use gpu_runtime::{grid_1d, Gpu, Kernel};
use spmv_kernels::{COO_CHUNK, MERGE_VT, NT, VECTOR_ROWS_PER_BLOCK};

use crate::{Result, SpmvValue};

#[derive(Clone)]
pub(crate) struct Kernels {
    pub csr_scalar: Kernel,
    pub csr_vector: Kernel,
    pub scale: Kernel,
    pub coo: Kernel,
    pub coo16: Kernel,
    pub coo16_pack: Kernel,
    pub merge_partition: Kernel,
    pub merge_split: Kernel,
    pub merge: Kernel,
    pub row_lengths: Kernel,
    pub iota: Kernel,
    pub ell_fill: Kernel,
    pub ell: Kernel,
    pub hyb_overflow: Kernel,
    pub hyb_fill_coo: Kernel,
    pub jds_keys: Kernel,
    pub jds_counts: Kernel,
    pub jds_invert: Kernel,
    pub jds_fill: Kernel,
    pub jds: Kernel,
    pub sell_chunks: Kernel,
    pub sell_fill: Kernel,
    pub sell: Kernel,
    pub scoo_slice_ptr: Kernel,
    pub scoo_gather: Kernel,
    pub scoo: Kernel,
    pub adaptive_counts: Kernel,
    pub adaptive_write: Kernel,
    pub adaptive_split: Kernel,
    pub adaptive: Kernel,
}

impl Kernels {
    pub fn load<T: SpmvValue>(gpu: &Gpu) -> Result<Self> {
        let k = |phase: &str| gpu.kernel(&crate::MODULE, &format!("spmv_{phase}_{}", T::NAME));
        let u = |phase: &str| gpu.kernel(&crate::MODULE, &format!("spmv_{phase}"));
        Ok(Self {
            csr_scalar: k("csr_scalar")?,
            csr_vector: k("csr_vector")?,
            scale: k("scale")?,
            coo: k("coo")?,
            coo16: k("coo16")?,
            coo16_pack: u("coo16_pack")?,
            merge_partition: k("merge_partition")?,
            merge_split: k("merge_split")?,
            merge: k("merge")?,
            row_lengths: u("row_lengths")?,
            iota: u("iota")?,
            ell_fill: k("ell_fill")?,
            ell: k("ell")?,
            hyb_overflow: u("hyb_overflow")?,
            hyb_fill_coo: k("hyb_fill_coo")?,
            jds_keys: u("jds_keys")?,
            jds_counts: u("jds_counts")?,
            jds_invert: u("jds_invert")?,
            jds_fill: k("jds_fill")?,
            jds: k("jds")?,
            sell_chunks: u("sell_chunks")?,
            sell_fill: k("sell_fill")?,
            sell: k("sell")?,
            scoo_slice_ptr: u("scoo_slice_ptr")?,
            scoo_gather: k("scoo_gather")?,
            scoo: k("scoo")?,
            adaptive_counts: u("adaptive_counts")?,
            adaptive_write: u("adaptive_write")?,
            adaptive_split: k("adaptive_split")?,
            adaptive: k("adaptive")?,
        })
    }
}

/// A grid-stride launch over `n` items, a few per thread.
pub(crate) fn grid(gpu: &Gpu, n: u64) -> LaunchConfig {
    grid_1d(n, NT, NT as u64 * 4, max_blocks(gpu) * 4)
}

pub(crate) fn max_blocks(gpu: &Gpu) -> u32 {
    gpu.props().sm_count.max(1) * 16
}

/// CSR-scalar (`vector == false`) or CSR-vector.
///
/// # Safety
/// A valid CSR of `rows` rows at `ptr`/`idx`/`vals`, `x` as long as its column count, `y`
/// `rows` values.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn csr<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels,
    vector: bool,
    rows: u64,
    ptr: u64,
    idx: u64,
    vals: u64,
    x: u64,
    alpha: T,
    beta: T,
    y: u64,
) -> Result<()> {
    if rows == 0 {
        return Ok(());
    }
    let (kernel, cfg) = if vector {
        (&k.csr_vector, grid_1d(rows, NT, VECTOR_ROWS_PER_BLOCK as u64, max_blocks(gpu) * 4))
    } else {
        (&k.csr_scalar, grid_1d(rows, NT, NT as u64, max_blocks(gpu) * 4))
    };
    // SAFETY: spmv_csr_{scalar,vector}_T(rows, ptr, idx, vals, x, alpha, beta, y) as the caller
    // guarantees; blocks of NT threads (a multiple of 32).
    unsafe { kernel.args(gpu.stream()).arg(&rows).arg(&ptr).arg(&idx).arg(&vals).arg(&x).arg(&alpha).arg(&beta).arg(&y).launch(cfg)? };
    Ok(())
}

/// COO: `y = beta * y`, then the atomic adds.
///
/// # Safety
/// `row`/`col`/`vals` hold `nnz` entries with rows `< rows` and columns below `x`'s length; `y`
/// holds `rows` values.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn coo<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels,
    rows: u64,
    nnz: u64,
    row: u64,
    col: u64,
    vals: u64,
    x: u64,
    alpha: T,
    beta: T,
    y: u64,
) -> Result<()> {
    // SAFETY: y holds rows values, as the caller guarantees.
    unsafe { scale(gpu, k, rows, beta, y)? };
    // SAFETY: as the caller guarantees.
    unsafe { coo_add(gpu, k, nnz, row, col, vals, x, alpha, y) }
}

/// `y = beta * y` (zeros when `beta == 0`), before COO's atomic adds.
///
/// # Safety
/// `y` holds `rows` values.
pub(crate) unsafe fn scale<T: SpmvValue>(gpu: &Gpu, k: &Kernels, rows: u64, beta: T, y: u64) -> Result<()> {
    if rows > 0 {
        // SAFETY: spmv_scale_T(rows, beta, y): y holds rows values.
        unsafe { k.scale.args(gpu.stream()).arg(&rows).arg(&beta).arg(&y).launch(grid_1d(rows, NT, NT as u64, max_blocks(gpu)))? };
    }
    Ok(())
}

/// The COO kernels' grid: a chunk of `COO_CHUNK` nonzeros per warp (NT / 32 chunks a block),
/// grid-stride past max_blocks · 4 blocks.
fn coo_grid(gpu: &Gpu, nnz: u64) -> LaunchConfig {
    grid_1d(nnz, NT, NT as u64 / 32 * COO_CHUNK, max_blocks(gpu) * 4)
}

/// COO with 16-bit rows (`base` per chunk + `off` per nonzero): `y = beta * y`, then the
/// atomic adds.
///
/// # Safety
/// As [`coo`] for the rows `base[k / COO_CHUNK] + off[k]`; `base` holds
/// `nnz.div_ceil(COO_CHUNK)` values, `off` `nnz`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn coo16<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels,
    rows: u64,
    nnz: u64,
    base: u64,
    off: u64,
    col: u64,
    vals: u64,
    x: u64,
    alpha: T,
    beta: T,
    y: u64,
) -> Result<()> {
    // SAFETY: y holds rows values, as the caller guarantees.
    unsafe { scale(gpu, k, rows, beta, y)? };
    if nnz > 0 {
        // SAFETY: spmv_coo16_T(nnz, base, off, col, vals, x, alpha, y) as the caller guarantees.
        unsafe {
            k.coo16.args(gpu.stream()).arg(&nnz).arg(&base).arg(&off).arg(&col).arg(&vals).arg(&x).arg(&alpha).arg(&y).launch(coo_grid(gpu, nnz))?
        };
    }
    Ok(())
}

/// COO's 16-bit rows from its 32-bit ones into `base`/`off`, and the largest row difference
/// within a chunk (the 16-bit rows are right when it is below 2^16); synchronizes the stream.
///
/// # Safety
/// `row` holds `nnz > 0` nondecreasing rows; `base` `nnz.div_ceil(COO_CHUNK)` values, `off` `nnz`.
pub(crate) unsafe fn coo16_pack(gpu: &Gpu, k: &Kernels, nnz: u64, row: u64, base: u64, off: u64) -> Result<u32> {
    let mut span = gpu.alloc_zeros::<u32>(1)?;
    // SAFETY: spmv_coo16_pack(nnz, row, base, off, span) as the caller guarantees; span is one
    // zeroed u32.
    unsafe { k.coo16_pack.args(gpu.stream()).arg(&nnz).arg(&row).arg(&base).arg(&off).arg(&mut span).launch(grid(gpu, nnz))? };
    Ok(gpu.download(&span)?[0])
}

/// COO without scaling `y`: `y[row] += alpha · a · x[col]` by atomic adds (HYB's overflow).
///
/// # Safety
/// As [`coo`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn coo_add<T: SpmvValue>(gpu: &Gpu, k: &Kernels, nnz: u64, row: u64, col: u64, vals: u64, x: u64, alpha: T, y: u64) -> Result<()> {
    if nnz > 0 {
        // SAFETY: spmv_coo_T(nnz, row, col, vals, x, alpha, y) as the caller guarantees.
        unsafe { k.coo.args(gpu.stream()).arg(&nnz).arg(&row).arg(&col).arg(&vals).arg(&x).arg(&alpha).arg(&y).launch(coo_grid(gpu, nnz))? };
    }
    Ok(())
}

/// Threads of merge-path CSR for `rows` rows and `nnz` nonzeros: one per `MERGE_VT` steps.
pub(crate) fn merge_threads(rows: u64, nnz: u64) -> u64 {
    (rows + nnz).div_ceil(MERGE_VT as u64)
}

/// Merge-path CSR, once per matrix: the start row of every thread's stretch into `start_row`.
///
/// # Safety
/// A valid CSR pointer array of `rows + 1` entries at `ptr` ending at `nnz`; `start_row` holds
/// [`merge_threads`]`(rows, nnz)` entries.
pub(crate) unsafe fn merge_partition(gpu: &Gpu, k: &Kernels, rows: u64, nnz: u64, ptr: u64, start_row: u64) -> Result<()> {
    let threads = merge_threads(rows, nnz);
    if threads == 0 {
        return Ok(());
    }
    let cfg = grid_1d(threads, NT, NT as u64, u32::MAX);
    // SAFETY: spmv_merge_partition_T(rows, nnz, ptr, threads, start_row) as the caller
    // guarantees.
    unsafe { k.merge_partition.args(gpu.stream()).arg(&rows).arg(&nnz).arg(&ptr).arg(&threads).arg(&start_row).launch(cfg)? };
    Ok(())
}

/// Merge-path CSR: `beta·y` of split rows, then the walk.
///
/// # Safety
/// As [`csr`]; `start_row` filled by [`merge_partition`] for this matrix.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn merge<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels,
    rows: u64,
    nnz: u64,
    ptr: u64,
    idx: u64,
    vals: u64,
    x: u64,
    alpha: T,
    beta: T,
    y: u64,
    start_row: u64,
) -> Result<()> {
    let threads = merge_threads(rows, nnz);
    if threads == 0 {
        return Ok(());
    }
    let stream = gpu.stream();
    let cfg = grid_1d(threads, NT, NT as u64, u32::MAX);
    // SAFETY: spmv_merge_split_T(rows, nnz, ptr, threads, beta, y, start_row): the partition
    // of this matrix, y of rows values.
    unsafe { k.merge_split.args(stream).arg(&rows).arg(&nnz).arg(&ptr).arg(&threads).arg(&beta).arg(&y).arg(&start_row).launch(cfg)? };
    // SAFETY: spmv_merge_T after the split pass on the same stream, same `threads`, blocks of
    // NT threads.
    unsafe {
        k.merge
            .args(stream)
            .arg(&rows)
            .arg(&nnz)
            .arg(&ptr)
            .arg(&idx)
            .arg(&vals)
            .arg(&x)
            .arg(&alpha)
            .arg(&beta)
            .arg(&y)
            .arg(&threads)
            .arg(&start_row)
            .launch(cfg)?
    };
    Ok(())
}
