//! JDS (jagged diagonals): rows sorted by length, the `d`-th entries of all rows stored
//! together, a thread per sorted row. No padding, and neighbouring threads have similar
//! lengths; one very long row is still one thread's serial walk. Deterministic, the same bits as
//! CSR-scalar.
mod serial;

use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{DeviceView, DeviceViewMut, Gpu};
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
        // SAFETY: spmv_jds_counts(rows, keys, max, count): rows sorted keys; count holds max + 1.
        unsafe { k.jds_counts.args(gpu.stream()).arg(&rows).arg(&keys).arg(&max).arg(&mut count).launch(grid(gpu, max as u64 + 1))? };
        let (jd_ptr, _) = convert::exclusive_scan(gpu, &count)?;
        drop((count, keys));
        let n = nnz.max(1) as usize;
        let (mut col, mut val) = (gpu.alloc::<u32>(n)?, gpu.alloc::<T>(n)?);
        if nnz > 0 {
            let mut inv = gpu.alloc::<u32>(m)?;
            // SAFETY: spmv_jds_invert(rows, perm, inv): perm a permutation of 0..rows (sorted
            // with its keys); inv holds rows.
            unsafe { k.jds_invert.args(gpu.stream()).arg(&rows).arg(&perm).arg(&mut inv).launch(grid(gpu, rows))? };
            let row_of = convert::rows_of(gpu, a)?;
            // SAFETY: spmv_jds_fill_T(nnz, ptr, row_of, inv, jd_ptr, idx, vals, col, val): the
            // CSR, its rows, the inverse sort and the diagonal pointers; col and val hold nnz.
            unsafe {
                k.jds_fill
                    .args(gpu.stream())
                    .arg(&nnz)
                    .arg(a.ptr())
                    .arg(&row_of)
                    .arg(&inv)
                    .arg(&jd_ptr)
                    .arg(a.idx())
                    .arg(vals)
                    .arg(&mut col)
                    .arg(&mut val)
                    .launch(grid(gpu, nnz))?
            };
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
        // SAFETY: spmv_jds_T(rows, diags, perm, jd_ptr, col, val, x, alpha, beta, y): a valid JDS
        // built from a valid CSR; x and y as the caller guarantees.
        unsafe {
            k.jds
                .args(gpu.stream())
                .arg(&self.rows)
                .arg(&self.diags)
                .arg(&self.perm)
                .arg(&self.jd_ptr)
                .arg(&self.col)
                .arg(&self.val)
                .arg(x)
                .arg(&alpha)
                .arg(&beta)
                .arg(&mut *y)
                .launch(cfg)?
        };
        Ok(())
    }
}
