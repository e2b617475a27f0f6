//! Sliced COO (SCOO, Dang & Schmidt): row slices that fit shared memory, each slice's entries
//! sorted by column (neighbouring threads read neighbouring `x`), added by a block into
//! [`spmv_kernels::SCOO_LANES`] shared copies of the slice's rows and written once. Even work
//! per thread whatever the row lengths, no global atomics; shared atomics make it **not
//! bit-reproducible**.
mod serial;

use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{DeviceView, DeviceViewMut, Gpu};
use spmv_kernels::{NT, SCOO_LANES};
use sptrans_matrix::{AsDeviceCsrView, DeviceCsrView};

use serial::check_slice_rows;
pub use serial::{slice_rows, Scoo};

use crate::launch::{grid, Kernels};
use crate::{convert, Result, SpmvValue};

/// A sliced COO matrix on the GPU (see [`Scoo`]).
pub struct DeviceScoo<T: SpmvValue> {
    rows: u64,
    cols: u64,
    nnz: u64,
    slice_rows: u32,
    slice_ptr: CudaSlice<u32>,
    row: CudaSlice<u16>,
    col: CudaSlice<u32>,
    val: CudaSlice<T>,
}

impl<T: SpmvValue> DeviceScoo<T> {
    /// Converts on the GPU with slices of [`slice_rows`] for this device (or `slice_rows` given:
    /// a power of two ≤ [`spmv_kernels::SCOO_MAX_SLICE_ROWS`]): slice pointers gathered from the
    /// row pointers, a stable segmented sort of (column, position) by slice (`gpu-segsort`), then
    /// a gather of rows (`gpu-ptr2idx`) and values.
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] for a bad slice height; [`crate::Error::NoValues`]; out of
    /// memory, launch errors.
    pub fn from_csr(gpu: &Gpu, a: &impl AsDeviceCsrView<T>, slice_rows: Option<u32>) -> Result<Self> {
        Self::convert(gpu, &Kernels::<T>::load(gpu)?, &a.csr_view(), slice_rows)
    }

    pub(crate) fn convert(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>, s: Option<u32>) -> Result<Self> {
        let vals = a.vals().ok_or(crate::Error::NoValues)?;
        let s = s.unwrap_or_else(|| slice_rows(a.rows(), gpu.props().sm_count));
        check_slice_rows(s)?;
        let (rows, nnz) = (a.rows(), a.nnz());
        let slices = rows.div_ceil(s as u64);
        let mut slice_ptr = gpu.alloc::<u32>(slices as usize + 1)?;
        // SAFETY: spmv_scoo_slice_ptr(rows, s, slices, ptr, slice_ptr): slice_ptr holds slices + 1.
        unsafe {
            k.scoo_slice_ptr
                .args(gpu.stream())
                .arg(&rows)
                .arg(&(s as u64))
                .arg(&slices)
                .arg(a.ptr())
                .arg(&mut slice_ptr)
                .launch(grid(gpu, slices + 1))?
        };
        let n = nnz.max(1) as usize;
        let mut col = gpu.alloc::<u32>(n)?;
        let (mut row, mut val) = (gpu.alloc::<u16>(n)?, gpu.alloc::<T>(n)?);
        if nnz > 0 {
            gpu.stream().memcpy_dtod(a.idx(), &mut col).map_err(gpu_runtime::Error::driver("copying the column indices"))?;
            let mut perm = convert::iota(gpu, k, nnz)?;
            gpu_segsort::Segsort::new(gpu)?.sort_segments(&slice_ptr, &mut col, &mut perm)?;
            let row_of = convert::rows_of(gpu, a)?;
            // SAFETY: spmv_scoo_gather_T(nnz, s, perm, row_of, vals, row, val): perm a
            // permutation of 0..nnz (sorted with the columns); every array holds nnz.
            unsafe {
                k.scoo_gather
                    .args(gpu.stream())
                    .arg(&nnz)
                    .arg(&s)
                    .arg(&perm)
                    .arg(&row_of)
                    .arg(vals)
                    .arg(&mut row)
                    .arg(&mut val)
                    .launch(grid(gpu, nnz))?
            };
        }
        Ok(Self { rows, cols: a.cols(), nnz, slice_rows: s, slice_ptr, row, col, val })
    }

    /// Rows per slice.
    pub fn slice_rows(&self) -> u32 {
        self.slice_rows
    }

    /// Bytes (as [`Scoo::footprint_bytes`]).
    pub fn footprint_bytes(&self) -> u64 {
        4 * self.slice_ptr.len() as u64 + self.nnz * (6 + T::BYTES as u64)
    }

    /// Copies to the host type (validated).
    ///
    /// # Errors
    /// Driver errors.
    pub fn download(&self, gpu: &Gpu) -> Result<Scoo<T>> {
        let n = self.nnz as usize;
        let (row, col, val) = (
            convert::download_prefix(gpu, &self.row, n)?,
            convert::download_prefix(gpu, &self.col, n)?,
            convert::download_prefix(gpu, &self.val, n)?,
        );
        Scoo::try_new(self.rows, self.cols, self.slice_rows, gpu.download(&self.slice_ptr)?, row, col, val)
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
        let slices = self.rows.div_ceil(self.slice_rows as u64);
        if slices == 0 {
            return Ok(());
        }
        let mut cfg = gpu_runtime::grid_1d(slices, NT, 1, u32::MAX);
        cfg.shared_mem_bytes = SCOO_LANES * self.slice_rows * T::BYTES as u32;
        // SAFETY: spmv_scoo_T(rows, slice_rows, slices, slice_ptr, row, col, val, x, alpha, beta,
        // y): a valid SCOO built from a valid CSR; dynamic shared memory of SCOO_LANES ·
        // slice_rows values (at most 32 KiB); x and y as the caller guarantees.
        unsafe {
            k.scoo
                .args(gpu.stream())
                .arg(&self.rows)
                .arg(&self.slice_rows)
                .arg(&slices)
                .arg(&self.slice_ptr)
                .arg(&self.row)
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
