//! The shared launches of the spmv kernels, with their grid sizing, and the only raw device
//! addresses of the crate: [`with_vectors`] turns a product's caller buffers into views; every
//! launch here and in the format modules passes views and owned slices to the launch builder.
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig};
use gpu_runtime::{arg_ptr, arg_ptr_mut, grid_1d, DeviceView, DeviceViewMut, Gpu, KernelOf};
use spmv_kernels::{
    AdaptiveArgs, AdaptiveBuildArgs, Coo16PackArgs, CooArgs, CsrArgs, DictArgs, EllArgs, HybArgs, JdsArgs, JdsBuildArgs, LengthsArgs, MergePathArgs,
    ScaleArgs, ScooArgs, SellArgs, SellChunksArgs, SellFillArgs,
};
use spmv_kernels::{COO_CHUNK, MERGE_VT, NT, VECTOR_ROWS_PER_BLOCK};
use sptrans_matrix::DeviceCsrView;

use crate::{Result, SpmvValue};

/// The kernels of the `spmv` module for one value type, each with its argument struct (checked
/// against the PTX at load).
#[derive(Clone)]
pub(crate) struct Kernels<T: SpmvValue> {
    pub csr_scalar: KernelOf<CsrArgs<T>>,
    pub csr_vector: KernelOf<CsrArgs<T>>,
    pub scale: KernelOf<ScaleArgs<T>>,
    pub coo: KernelOf<CooArgs<T>>,
    pub coo16: KernelOf<CooArgs<T>>,
    pub coo16_pack: KernelOf<Coo16PackArgs>,
    pub dict_insert: KernelOf<DictArgs<T>>,
    pub dict_index: KernelOf<DictArgs<T>>,
    pub merge_partition: KernelOf<MergePathArgs<T>>,
    pub merge_split: KernelOf<MergePathArgs<T>>,
    pub merge: KernelOf<MergePathArgs<T>>,
    pub row_lengths: KernelOf<LengthsArgs>,
    pub iota: KernelOf<LengthsArgs>,
    pub ell_fill: KernelOf<EllArgs<T>>,
    pub ell: KernelOf<EllArgs<T>>,
    pub hyb_overflow: KernelOf<HybArgs<u8>>,
    pub hyb_fill_coo: KernelOf<HybArgs<T>>,
    pub jds_keys: KernelOf<JdsBuildArgs<u8>>,
    pub jds_counts: KernelOf<JdsBuildArgs<u8>>,
    pub jds_invert: KernelOf<JdsBuildArgs<u8>>,
    pub jds_fill: KernelOf<JdsBuildArgs<T>>,
    pub jds: KernelOf<JdsArgs<T>>,
    pub sell_chunks: KernelOf<SellChunksArgs>,
    pub sell_fill: KernelOf<SellFillArgs<T>>,
    pub sell: KernelOf<SellArgs<T>>,
    pub sell_fill_u8: KernelOf<SellFillArgs<u8>>,
    pub sell_vi: KernelOf<SellArgs<T>>,
    pub scoo_slice_ptr: KernelOf<ScooArgs<u8>>,
    pub scoo_gather: KernelOf<ScooArgs<T>>,
    pub scoo: KernelOf<ScooArgs<T>>,
    pub adaptive_counts: KernelOf<AdaptiveBuildArgs>,
    pub adaptive_write: KernelOf<AdaptiveBuildArgs>,
    pub adaptive_split: KernelOf<AdaptiveArgs<T>>,
    pub adaptive: KernelOf<AdaptiveArgs<T>>,
}

impl<T: SpmvValue> Kernels<T> {
    pub fn load(gpu: &Gpu) -> Result<Self> {
        let name = |phase: &str| format!("spmv_{phase}_{}", T::NAME);
        Ok(Self {
            csr_scalar: gpu.kernel_of(&crate::MODULE, &name("csr_scalar"))?,
            csr_vector: gpu.kernel_of(&crate::MODULE, &name("csr_vector"))?,
            scale: gpu.kernel_of(&crate::MODULE, &name("scale"))?,
            coo: gpu.kernel_of(&crate::MODULE, &name("coo"))?,
            coo16: gpu.kernel_of(&crate::MODULE, &name("coo16"))?,
            coo16_pack: gpu.kernel_of(&crate::MODULE, "spmv_coo16_pack")?,
            dict_insert: gpu.kernel_of(&crate::MODULE, &name("dict_insert"))?,
            dict_index: gpu.kernel_of(&crate::MODULE, &name("dict_index"))?,
            merge_partition: gpu.kernel_of(&crate::MODULE, &name("merge_partition"))?,
            merge_split: gpu.kernel_of(&crate::MODULE, &name("merge_split"))?,
            merge: gpu.kernel_of(&crate::MODULE, &name("merge"))?,
            row_lengths: gpu.kernel_of(&crate::MODULE, "spmv_row_lengths")?,
            iota: gpu.kernel_of(&crate::MODULE, "spmv_iota")?,
            ell_fill: gpu.kernel_of(&crate::MODULE, &name("ell_fill"))?,
            ell: gpu.kernel_of(&crate::MODULE, &name("ell"))?,
            hyb_overflow: gpu.kernel_of(&crate::MODULE, "spmv_hyb_overflow")?,
            hyb_fill_coo: gpu.kernel_of(&crate::MODULE, &name("hyb_fill_coo"))?,
            jds_keys: gpu.kernel_of(&crate::MODULE, "spmv_jds_keys")?,
            jds_counts: gpu.kernel_of(&crate::MODULE, "spmv_jds_counts")?,
            jds_invert: gpu.kernel_of(&crate::MODULE, "spmv_jds_invert")?,
            jds_fill: gpu.kernel_of(&crate::MODULE, &name("jds_fill"))?,
            jds: gpu.kernel_of(&crate::MODULE, &name("jds"))?,
            sell_chunks: gpu.kernel_of(&crate::MODULE, "spmv_sell_chunks")?,
            sell_fill: gpu.kernel_of(&crate::MODULE, &name("sell_fill"))?,
            sell: gpu.kernel_of(&crate::MODULE, &name("sell"))?,
            sell_fill_u8: gpu.kernel_of(&crate::MODULE, "spmv_sell_fill_u8")?,
            sell_vi: gpu.kernel_of(&crate::MODULE, &name("sell_vi"))?,
            scoo_slice_ptr: gpu.kernel_of(&crate::MODULE, "spmv_scoo_slice_ptr")?,
            scoo_gather: gpu.kernel_of(&crate::MODULE, &name("scoo_gather"))?,
            scoo: gpu.kernel_of(&crate::MODULE, &name("scoo"))?,
            adaptive_counts: gpu.kernel_of(&crate::MODULE, "spmv_adaptive_counts")?,
            adaptive_write: gpu.kernel_of(&crate::MODULE, "spmv_adaptive_write")?,
            adaptive_split: gpu.kernel_of(&crate::MODULE, &name("adaptive_split"))?,
            adaptive: gpu.kernel_of(&crate::MODULE, &name("adaptive"))?,
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

/// Runs `f` with the product's vectors `x` and `y` as views, their guards held for the call:
/// the one place a caller's buffers become addresses.
pub(crate) fn with_vectors<T, R>(
    gpu: &Gpu,
    x: &impl DevicePtr<T>,
    y: &mut impl DevicePtrMut<T>,
    f: impl FnOnce(&DeviceView<'_, T>, &mut DeviceViewMut<'_, T>) -> R,
) -> R {
    with_input(gpu, x, |xv| {
        let stream = gpu.stream();
        let yn = y.len();
        let (ya, _y) = y.device_ptr_mut(stream);
        // SAFETY: the address and length of the borrowed buffer (apart from `x`: it is borrowed
        // mutably), alive with its guard until `f` returns; the view does not outlive the call.
        let mut yv = unsafe { DeviceViewMut::from_raw(ya, yn, stream) };
        f(xv, &mut yv)
    })
}

/// Runs `f` with `x` as a view, its guard held for the call.
pub(crate) fn with_input<T, R>(gpu: &Gpu, x: &impl DevicePtr<T>, f: impl FnOnce(&DeviceView<'_, T>) -> R) -> R {
    let stream = gpu.stream();
    let n = x.len();
    let (xa, _x) = x.device_ptr(stream);
    // SAFETY: the address and length of the borrowed buffer, alive with its guard until `f`
    // returns; the view does not outlive the call.
    let xv = unsafe { DeviceView::from_raw(xa, n, stream) };
    f(&xv)
}

/// The values of a CSR the products read.
pub(crate) fn values<'v, T>(a: &'v DeviceCsrView<'_, T>) -> Result<&'v DeviceView<'v, T>> {
    a.vals().ok_or(crate::Error::NoValues)
}

/// CSR-scalar (`vector == false`) or CSR-vector.
///
/// # Safety
/// `x` as long as `a`'s column count, `y` `a.rows()` values (`a` keeps its view's invariants).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn csr<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels<T>,
    vector: bool,
    a: &DeviceCsrView<'_, T>,
    x: &DeviceView<'_, T>,
    alpha: T,
    beta: T,
    y: &mut DeviceViewMut<'_, T>,
) -> Result<()> {
    let rows = a.rows();
    let vals = values(a)?;
    if rows == 0 {
        return Ok(());
    }
    let (kernel, cfg) = if vector {
        (&k.csr_vector, grid_1d(rows, NT, VECTOR_ROWS_PER_BLOCK as u64, max_blocks(gpu) * 4))
    } else {
        (&k.csr_scalar, grid_1d(rows, NT, NT as u64, max_blocks(gpu) * 4))
    };
    let stream = gpu.stream();
    let ((ptr, _p), (idx, _i), (vals, _v)) = (arg_ptr(a.ptr(), stream), arg_ptr(a.idx(), stream), arg_ptr(vals, stream));
    let ((x, _x), (y, _y)) = (arg_ptr(x, stream), arg_ptr_mut(y, stream));
    let args = CsrArgs { ptr, idx, vals, x, y, rows, alpha, beta };
    // SAFETY: spmv_csr_{scalar,vector}_T(CsrArgs) as the caller guarantees; blocks of NT
    // threads (a multiple of 32).
    unsafe { kernel.launch(stream, cfg, args)? };
    Ok(())
}

/// COO: `y = beta * y`, then the atomic adds; the columns and values are `a`'s.
///
/// # Safety
/// `row` holds `a.nnz()` rows `< a.rows()` (`a`'s, sorted); `x` and `y` as for [`csr`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn coo<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels<T>,
    a: &DeviceCsrView<'_, T>,
    row: &CudaSlice<u32>,
    x: &DeviceView<'_, T>,
    alpha: T,
    beta: T,
    y: &mut DeviceViewMut<'_, T>,
) -> Result<()> {
    scale(gpu, k, beta, y)?;
    // SAFETY: as the caller guarantees.
    unsafe { coo_add(gpu, k, a.nnz(), row, a.idx(), values(a)?, x, alpha, y) }
}

/// `y = beta * y` over every value of `y` (zeros when `beta == 0`), before COO's atomic adds.
pub(crate) fn scale<T: SpmvValue>(gpu: &Gpu, k: &Kernels<T>, beta: T, y: &mut DeviceViewMut<'_, T>) -> Result<()> {
    let rows = y.len() as u64;
    if rows > 0 {
        let stream = gpu.stream();
        let (y, _y) = arg_ptr_mut(y, stream);
        // SAFETY: spmv_scale_T(ScaleArgs): y holds rows values (its view's length).
        unsafe { k.scale.launch(stream, grid_1d(rows, NT, NT as u64, max_blocks(gpu)), ScaleArgs { y, rows, beta })? };
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
/// `nnz.div_ceil(COO_CHUNK)` values, `off` `nnz` ([`coo16_pack`] of `a`'s rows).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn coo16<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels<T>,
    a: &DeviceCsrView<'_, T>,
    (base, off): (&CudaSlice<u32>, &CudaSlice<u16>),
    x: &DeviceView<'_, T>,
    alpha: T,
    beta: T,
    y: &mut DeviceViewMut<'_, T>,
) -> Result<()> {
    scale(gpu, k, beta, y)?;
    let (nnz, col, vals) = (a.nnz(), a.idx(), values(a)?);
    if nnz > 0 {
        let stream = gpu.stream();
        let ((base, _b), (off, _o), (col, _c)) = (arg_ptr(base, stream), arg_ptr(off, stream), arg_ptr(col, stream));
        let ((vals, _v), (x, _x), (y, _y)) = (arg_ptr(vals, stream), arg_ptr(x, stream), arg_ptr_mut(y, stream));
        let args = CooArgs { row: std::ptr::null(), base, off, col, vals, x, y, nnz, alpha };
        // SAFETY: spmv_coo16_T(CooArgs: base, off, col, vals, x, alpha, y) as the caller
        // guarantees.
        unsafe { k.coo16.launch(stream, coo_grid(gpu, nnz), args)? };
    }
    Ok(())
}

/// The values' set for [`crate::vi`]: every value's bits into `slots` (`VI_SLOTS` words, all
/// `VI_EMPTY`), `full` (one word, zeroed) set to 1 when a value finds no slot.
pub(crate) fn dict_insert<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels<T>,
    vals: &DeviceView<'_, T>,
    slots: &mut DeviceViewMut<'_, u64>,
    full: &mut DeviceViewMut<'_, u32>,
) -> Result<()> {
    let nnz = vals.len() as u64;
    if slots.len() != spmv_kernels::VI_SLOTS as usize || full.len() != 1 {
        return Err(crate::Error::Runtime(gpu_runtime::Error::Internal("the value set's lengths")));
    }
    if nnz > 0 {
        let stream = gpu.stream();
        let ((vals, _v), (slots, _s), (full, _f)) = (arg_ptr(vals, stream), arg_ptr_mut(slots, stream), arg_ptr_mut(full, stream));
        let args = DictArgs { vals, slots, full, map: std::ptr::null(), out: std::ptr::null_mut(), nnz };
        // SAFETY: spmv_dict_insert_T(DictArgs: vals, slots, full, nnz): nnz values (the view's),
        // VI_SLOTS slots and one flag word (checked above).
        unsafe { k.dict_insert.launch(stream, grid(gpu, nnz), args)? };
    }
    Ok(())
}

/// Each value's index byte into `out`: its slot in `slots` mapped through `map`.
pub(crate) fn dict_index<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels<T>,
    vals: &DeviceView<'_, T>,
    slots: &DeviceView<'_, u64>,
    map: &DeviceView<'_, u8>,
    out: &mut DeviceViewMut<'_, u8>,
) -> Result<()> {
    let nnz = vals.len() as u64;
    let n = spmv_kernels::VI_SLOTS as usize;
    if slots.len() != n || map.len() != n || out.len() as u64 != nnz {
        return Err(crate::Error::Runtime(gpu_runtime::Error::Internal("the value index's lengths")));
    }
    if nnz > 0 {
        let stream = gpu.stream();
        let ((vals, _v), (slots, _s), (map, _m), (out, _o)) =
            (arg_ptr(vals, stream), arg_ptr(slots, stream), arg_ptr(map, stream), arg_ptr_mut(out, stream));
        // The index only reads the set (the struct's field is the insert's, writable).
        let args = DictArgs { vals, slots: slots.cast_mut(), full: std::ptr::null_mut(), map, out, nnz };
        // SAFETY: spmv_dict_index_T(DictArgs: vals, slots, map, out, nnz): nnz values and bytes,
        // VI_SLOTS slots and map bytes (checked above).
        unsafe { k.dict_index.launch(stream, grid(gpu, nnz), args)? };
    }
    Ok(())
}

/// COO's 16-bit rows from its 32-bit ones into `base`/`off`, and the largest row difference
/// within a chunk (the 16-bit rows are right when it is below 2^16); synchronizes the stream.
///
/// # Errors
/// [`crate::Error::Runtime`] when `base` or `off` is not sized for `row`.
pub(crate) fn coo16_pack<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels<T>,
    row: &CudaSlice<u32>,
    base: &mut CudaSlice<u32>,
    off: &mut CudaSlice<u16>,
) -> Result<u32> {
    let nnz = row.len() as u64;
    if nnz == 0 || base.len() as u64 != nnz.div_ceil(COO_CHUNK) || off.len() as u64 != nnz {
        return Err(crate::Error::Runtime(gpu_runtime::Error::Internal("COO 16-bit rows' lengths")));
    }
    let mut span = gpu.alloc_zeros::<u32>(1)?;
    {
        let stream = gpu.stream();
        let ((row, _r), (base, _b), (off, _o), (span, _s)) =
            (arg_ptr(row, stream), arg_ptr_mut(base, stream), arg_ptr_mut(off, stream), arg_ptr_mut(&mut span, stream));
        // SAFETY: spmv_coo16_pack(Coo16PackArgs): the lengths checked above (any row values: the
        // kernel only writes base[k / COO_CHUNK] and off[k]); span is one zeroed u32.
        unsafe { k.coo16_pack.launch(stream, grid(gpu, nnz), Coo16PackArgs { row, base, off, span, nnz })? };
    }
    Ok(gpu.download(&span)?[0])
}

/// COO without scaling `y`: `y[row] += alpha · a · x[col]` by atomic adds (HYB's overflow).
///
/// # Safety
/// `row`, `col` and `vals` hold `nnz` entries with rows below `y`'s length and columns below
/// `x`'s.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn coo_add<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels<T>,
    nnz: u64,
    row: &CudaSlice<u32>,
    col: &DeviceView<'_, u32>,
    vals: &DeviceView<'_, T>,
    x: &DeviceView<'_, T>,
    alpha: T,
    y: &mut DeviceViewMut<'_, T>,
) -> Result<()> {
    if nnz > 0 {
        let stream = gpu.stream();
        let ((row, _r), (col, _c), (vals, _v)) = (arg_ptr(row, stream), arg_ptr(col, stream), arg_ptr(vals, stream));
        let ((x, _x), (y, _y)) = (arg_ptr(x, stream), arg_ptr_mut(y, stream));
        let args = CooArgs { row, base: std::ptr::null(), off: std::ptr::null(), col, vals, x, y, nnz, alpha };
        // SAFETY: spmv_coo_T(CooArgs: row, col, vals, x, alpha, y) as the caller guarantees.
        unsafe { k.coo.launch(stream, coo_grid(gpu, nnz), args)? };
    }
    Ok(())
}

/// Threads of merge-path CSR for `rows` rows and `nnz` nonzeros: one per `MERGE_VT` steps.
pub(crate) fn merge_threads(rows: u64, nnz: u64) -> u64 {
    (rows + nnz).div_ceil(MERGE_VT as u64)
}

/// Merge-path CSR, once per matrix: the start row of every thread's stretch into `start_row`.
///
/// # Errors
/// [`crate::Error::Runtime`] when `start_row` is shorter than [`merge_threads`].
pub(crate) fn merge_partition<T: SpmvValue>(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>, start_row: &mut CudaSlice<u32>) -> Result<()> {
    let (rows, nnz) = (a.rows(), a.nnz());
    let threads = merge_threads(rows, nnz);
    if threads == 0 {
        return Ok(());
    }
    if (start_row.len() as u64) < threads {
        return Err(crate::Error::Runtime(gpu_runtime::Error::Internal("merge-path start rows' length")));
    }
    let cfg = grid_1d(threads, NT, NT as u64, u32::MAX);
    let stream = gpu.stream();
    let ((ptr, _p), (start_row, _s)) = (arg_ptr(a.ptr(), stream), arg_ptr_mut(start_row, stream));
    let zero = T::from_bits64(0);
    let (idx, vals, x, y) = (std::ptr::null(), std::ptr::null(), std::ptr::null(), std::ptr::null_mut());
    let args = MergePathArgs { ptr, idx, vals, x, y, start_row, rows, nnz, threads, alpha: zero, beta: zero };
    // SAFETY: spmv_merge_partition_T(MergePathArgs: ptr, start_row, rows, nnz, threads): a valid
    // CSR pointer (the view's invariants), start_row of `threads` entries (checked).
    unsafe { k.merge_partition.launch(stream, cfg, args)? };
    Ok(())
}

/// Merge-path CSR: `beta·y` of split rows, then the walk.
///
/// # Safety
/// As [`csr`]; `start_row` filled by [`merge_partition`] for this matrix.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn merge<T: SpmvValue>(
    gpu: &Gpu,
    k: &Kernels<T>,
    a: &DeviceCsrView<'_, T>,
    x: &DeviceView<'_, T>,
    alpha: T,
    beta: T,
    y: &mut DeviceViewMut<'_, T>,
    start_row: &CudaSlice<u32>,
) -> Result<()> {
    let (rows, nnz, ptr, idx, vals) = (a.rows(), a.nnz(), a.ptr(), a.idx(), values(a)?);
    let threads = merge_threads(rows, nnz);
    if threads == 0 {
        return Ok(());
    }
    let stream = gpu.stream();
    let cfg = grid_1d(threads, NT, NT as u64, u32::MAX);
    let ((ptr, _p), (idx, _i), (vals, _v)) = (arg_ptr(ptr, stream), arg_ptr(idx, stream), arg_ptr(vals, stream));
    let ((x, _x), (y, _y), (start_row, _s)) = (arg_ptr(x, stream), arg_ptr_mut(y, stream), arg_ptr(start_row, stream));
    // The split pass and the walk only read the start rows (the struct's field is the
    // partition's, writable).
    let args = MergePathArgs { ptr, idx, vals, x, y, start_row: start_row.cast_mut(), rows, nnz, threads, alpha, beta };
    // SAFETY: spmv_merge_split_T(MergePathArgs), then spmv_merge_T after it on the same stream
    // with the same `threads`: the partition of this matrix, y of rows values, blocks of NT
    // threads.
    unsafe {
        k.merge_split.launch(stream, cfg, args)?;
        k.merge.launch(stream, cfg, args)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    use gpu_runtime::check_signature;
    use spmv_kernels::{
        AdaptiveArgs, AdaptiveBuildArgs, Coo16PackArgs, CooArgs, CsrArgs, DictArgs, EllArgs, HaloArgs, HybArgs, JdsArgs, JdsBuildArgs, LengthsArgs,
        MergePathArgs, ScaleArgs, ScooArgs, SellArgs, SellChunksArgs, SellFillArgs,
    };

    /// The kernels checked so far (every struct-taking entry of the module must be among them).
    static CHECKED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

    fn check<A>(name: &str) {
        check_signature::<A>(&crate::MODULE, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        CHECKED.lock().unwrap().insert(name.to_string());
    }

    /// Every kernel loaded with an argument struct takes exactly that struct in the committed
    /// PTX (what `Gpu::kernel_of` checks at load, here without a GPU), and every entry of the
    /// module that takes a struct is one of them (a kernel converted on the device side but
    /// still loaded for positional arguments would be refused at load by `Gpu::kernel`).
    #[test]
    fn argument_structs_match_the_ptx() {
        fn of<T>(t: &str) {
            let name = |phase: &str| format!("spmv_{phase}_{t}");
            for phase in ["csr_scalar", "csr_vector"] {
                check::<CsrArgs<T>>(&name(phase));
            }
            check::<ScaleArgs<T>>(&name("scale"));
            for phase in ["coo", "coo16"] {
                check::<CooArgs<T>>(&name(phase));
            }
            for phase in ["ell_fill", "ell"] {
                check::<EllArgs<T>>(&name(phase));
            }
            check::<HybArgs<T>>(&name("hyb_fill_coo"));
            check::<JdsBuildArgs<T>>(&name("jds_fill"));
            check::<JdsArgs<T>>(&name("jds"));
            check::<SellFillArgs<T>>(&name("sell_fill"));
            for phase in ["sell", "sell_vi"] {
                check::<SellArgs<T>>(&name(phase));
            }
            for phase in ["merge_partition", "merge_split", "merge"] {
                check::<MergePathArgs<T>>(&name(phase));
            }
            for phase in ["dict_insert", "dict_index"] {
                check::<DictArgs<T>>(&name(phase));
            }
            for phase in ["adaptive_split", "adaptive"] {
                check::<AdaptiveArgs<T>>(&name(phase));
            }
            for phase in ["scoo_gather", "scoo"] {
                check::<ScooArgs<T>>(&name(phase));
            }
            for phase in ["halo_pack", "halo_unpack"] {
                check::<HaloArgs<T>>(&name(phase));
            }
        }
        of::<f32>("f32");
        of::<f64>("f64");
        check::<Coo16PackArgs>("spmv_coo16_pack");
        check::<HybArgs<u8>>("spmv_hyb_overflow");
        check::<SellChunksArgs>("spmv_sell_chunks");
        check::<LengthsArgs>("spmv_row_lengths");
        check::<LengthsArgs>("spmv_iota");
        check::<AdaptiveBuildArgs>("spmv_adaptive_counts");
        check::<AdaptiveBuildArgs>("spmv_adaptive_write");
        check::<ScooArgs<u8>>("spmv_scoo_slice_ptr");
        check::<SellFillArgs<u8>>("spmv_sell_fill_u8");
        for name in ["spmv_jds_keys", "spmv_jds_counts", "spmv_jds_invert"] {
            check::<JdsBuildArgs<u8>>(name);
        }
        assert!(check_signature::<ScaleArgs<f64>>(&crate::MODULE, "spmv_csr_scalar_f64").is_err());
        let checked = CHECKED.lock().unwrap();
        let unchecked: Vec<_> = crate::MODULE.kernels().into_iter().filter(|k| crate::MODULE.takes_struct(k) && !checked.contains(*k)).collect();
        assert!(unchecked.is_empty(), "struct-taking kernels without a check (and a kernel_of load): {unchecked:?}");
    }
}
