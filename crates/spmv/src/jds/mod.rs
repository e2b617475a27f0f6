//! JDS (jagged diagonals): rows sorted by length, the `d`-th entries of all rows stored
//! together, a thread per sorted row. No padding, and neighbouring threads have similar
//! lengths; one very long row is still one thread's serial walk. Deterministic, the same bits as
//! CSR-scalar.
mod serial;

use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{arg_ptr, arg_ptr_mut, DeviceView, DeviceViewMut, Gpu};
use spmv_kernels::{JdsArgs, JdsBuildArgs};
use sptrans_matrix::{AsDeviceCsrView, DeviceCsrView};

pub use serial::Jds;

use crate::launch::{grid, Kernels};
use crate::{convert, Result, SpmvValue};

/// A JDS matrix on the GPU (see [`Jds`]).
pub struct DeviceJds<T: SpmvValue> {
    rows: u64,
    cols: u64,
    diags: u64,
    nnz: u64,
    perm: CudaSlice<u32>,
    jd_ptr: CudaSlice<u32>,
    col: CudaSlice<u32>,
    val: CudaSlice<T>,
}

impl<T: SpmvValue> DeviceJds<T> {
    /// Converts on the GPU: keys `max − length` sorted with the rows by `gpu-radix` (stable, so
    /// ties keep row order), diagonal widths by binary search, their scan (`gpu-scan`), the
    /// inverse permutation, then one thread per nonzero (rows from `gpu-ptr2idx`).
    ///
    /// # Errors
    /// [`crate::Error::NoValues`]; out of memory, launch errors.
    pub fn from_csr(gpu: &Gpu, a: &impl AsDeviceCsrView<T>) -> Result<Self> {
        Self::convert(gpu, &Kernels::<T>::load(gpu)?, &a.csr_view())
    }

    pub(crate) fn convert(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>) -> Result<Self> {
        let vals = a.vals().ok_or(crate::Error::NoValues)?;
        let (rows, nnz) = (a.rows(), a.nnz());
        let (mut keys, mut perm, max) = convert::length_keys(gpu, k, a)?;
        let m = rows.max(1) as usize;
        if rows > 0 && max > 0 {
            let bits = 32 - max.leading_zeros();
            let (mut kv, mut pv) = (keys.slice_mut(0..rows as usize), perm.slice_mut(0..rows as usize));
            gpu_radix::RadixSort::new(gpu)?.sort_pairs(&mut kv, &mut pv, bits)?;
        }
        let mut count = gpu.alloc::<u32>(max as usize + 1)?;
        {
            let stream = gpu.stream();
            let ((keys, _k), (count, _c)) = (arg_ptr_mut(&mut keys, stream), arg_ptr_mut(&mut count, stream));
            let args = JdsBuildArgs { keys, count, ..build_args::<u8>(rows, nnz, max) };
            // SAFETY: spmv_jds_counts(JdsBuildArgs: keys, count, rows, max_len): rows sorted keys;
            // count holds max + 1.
            unsafe { k.jds_counts.launch(stream, grid(gpu, max as u64 + 1), args)? };
        }
        let (jd_ptr, _) = convert::exclusive_scan(gpu, &count)?;
        drop((count, keys));
        let n = nnz.max(1) as usize;
        let (mut col, mut val) = (gpu.alloc::<u32>(n)?, gpu.alloc::<T>(n)?);
        if nnz > 0 {
            let mut inv = gpu.alloc::<u32>(m)?;
            {
                let stream = gpu.stream();
                let ((perm, _p), (inv, _i)) = (arg_ptr_mut(&mut perm, stream), arg_ptr_mut(&mut inv, stream));
                let args = JdsBuildArgs { perm, inv, ..build_args::<u8>(rows, nnz, max) };
                // SAFETY: spmv_jds_invert(JdsBuildArgs: perm, inv, rows): perm a permutation of
                // 0..rows (sorted with its keys); inv holds rows.
                unsafe { k.jds_invert.launch(stream, grid(gpu, rows), args)? };
            }
            let row_of = convert::rows_of(gpu, a)?;
            let stream = gpu.stream();
            let ((ptr, _p), (row_of, _r), (inv, _i)) = (arg_ptr(a.ptr(), stream), arg_ptr(&row_of, stream), arg_ptr_mut(&mut inv, stream));
            let ((jd_ptr, _j), (idx, _x), (vals, _v)) = (arg_ptr(&jd_ptr, stream), arg_ptr(a.idx(), stream), arg_ptr(vals, stream));
            let ((col, _c), (val, _w)) = (arg_ptr_mut(&mut col, stream), arg_ptr_mut(&mut val, stream));
            let args = JdsBuildArgs { ptr, row_of, inv, jd_ptr, idx, vals, col, val, ..build_args(rows, nnz, max) };
            // SAFETY: spmv_jds_fill_T(JdsBuildArgs): the CSR, its rows, the inverse sort and the
            // diagonal pointers; col and val hold nnz.
            unsafe { k.jds_fill.launch(stream, grid(gpu, nnz), args)? };
        }
        Ok(Self { rows, cols: a.cols(), diags: max as u64, nnz, perm, jd_ptr, col, val })
    }

    /// Jagged diagonals (the longest row's length).
    pub fn diagonals(&self) -> u64 {
        self.diags
    }

    /// Bytes (as [`Jds::footprint_bytes`]).
    pub fn footprint_bytes(&self) -> u64 {
        4 * self.rows + 4 * (self.diags + 1) + self.nnz * (4 + T::BYTES as u64)
    }

    /// Copies to the host type (validated).
    ///
    /// # Errors
    /// Driver errors.
    pub fn download(&self, gpu: &Gpu) -> Result<Jds<T>> {
        let n = self.nnz as usize;
        let perm = convert::download_prefix(gpu, &self.perm, self.rows as usize)?;
        Jds::try_new(
            self.rows,
            self.cols,
            perm,
            gpu.download(&self.jd_ptr)?,
            convert::download_prefix(gpu, &self.col, n)?,
            convert::download_prefix(gpu, &self.val, n)?,
        )
    }

    /// `y = alpha · A · x + beta · y`.
    ///
    /// # Safety
    /// `x` holds `cols` values and `y` `rows`.
    pub(crate) unsafe fn apply(
        &self,
        gpu: &Gpu,
        k: &Kernels<T>,
        alpha: T,
        x: &DeviceView<'_, T>,
        beta: T,
        y: &mut DeviceViewMut<'_, T>,
    ) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let cfg = gpu_runtime::grid_1d(self.rows, spmv_kernels::NT, spmv_kernels::NT as u64, u32::MAX);
        let stream = gpu.stream();
        let ((perm, _p), (jd_ptr, _j), (col, _c)) = (arg_ptr(&self.perm, stream), arg_ptr(&self.jd_ptr, stream), arg_ptr(&self.col, stream));
        let ((val, _v), (x, _x), (y, _y)) = (arg_ptr(&self.val, stream), arg_ptr(x, stream), arg_ptr_mut(y, stream));
        let args = JdsArgs { perm, jd_ptr, col, val, x, y, rows: self.rows, diags: self.diags, alpha, beta };
        // SAFETY: spmv_jds_T(JdsArgs): a valid JDS built from a valid CSR; x and y as the caller
        // guarantees.
        unsafe { k.jds.launch(stream, cfg, args)? };
        Ok(())
    }
}

/// The JDS conversion's arguments with every pointer null: each launch fills the ones its kernel
/// reads and writes.
pub(crate) fn build_args<V>(rows: u64, nnz: u64, max_len: u32) -> JdsBuildArgs<V> {
    let (c, m) = (std::ptr::null::<u32>(), std::ptr::null_mut::<u32>());
    JdsBuildArgs {
        ptr: c,
        row_of: c,
        idx: c,
        vals: std::ptr::null(),
        jd_ptr: c,
        keys: m,
        perm: m,
        inv: m,
        count: m,
        col: m,
        val: std::ptr::null_mut(),
        rows,
        nnz,
        max_len,
    }
}
