//! Sliced COO (SCOO, Dang & Schmidt): row slices that fit shared memory, each slice's entries
//! sorted by column (neighbouring threads read neighbouring `x`), added by a block into
//! [`spmv_kernels::SCOO_LANES`] shared copies of the slice's rows and written once. Even work
//! per thread whatever the row lengths, no global atomics; shared atomics make it **not
//! bit-reproducible**.
mod serial;

use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{arg_ptr, arg_ptr_mut, DeviceView, DeviceViewMut, Gpu};
use spmv_kernels::{ScooArgs, NT, SCOO_LANES};
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
        {
            let stream = gpu.stream();
            let ((ptr, _p), (sp, _s)) = (arg_ptr(a.ptr(), stream), arg_ptr_mut(&mut slice_ptr, stream));
            let args = ScooArgs::<u8> { ptr, slice_ptr: sp, rows, slices, slice_rows: s, ..null_args() };
            // SAFETY: spmv_scoo_slice_ptr(ScooArgs: ptr, slice_ptr, rows, slices, slice_rows):
            // slice_ptr holds slices + 1.
            unsafe { k.scoo_slice_ptr.launch(stream, grid(gpu, slices + 1), args)? };
        }
        let n = nnz.max(1) as usize;
        let mut col = gpu.alloc::<u32>(n)?;
        let (mut row, mut val) = (gpu.alloc::<u16>(n)?, gpu.alloc::<T>(n)?);
        if nnz > 0 {
            gpu.stream().memcpy_dtod(a.idx(), &mut col).map_err(gpu_runtime::Error::driver("copying the column indices"))?;
            let mut perm = convert::iota(gpu, k, nnz)?;
            gpu_segsort::Segsort::new(gpu)?.sort_segments(&slice_ptr, &mut col, &mut perm)?;
            let row_of = convert::rows_of(gpu, a)?;
            let stream = gpu.stream();
            let ((perm, _p), (row_of, _r), (vals, _v)) = (arg_ptr(&perm, stream), arg_ptr(&row_of, stream), arg_ptr(vals, stream));
            let ((row16, _w), (val, _u)) = (arg_ptr_mut(&mut row, stream), arg_ptr_mut(&mut val, stream));
            let args = ScooArgs { perm, row_of, vals, row16, val, nnz, slice_rows: s, ..null_args() };
            // SAFETY: spmv_scoo_gather_T(ScooArgs: perm, row_of, vals, row16, val, nnz,
            // slice_rows): perm a permutation of 0..nnz (sorted with the columns); every array
            // holds nnz.
            unsafe { k.scoo_gather.launch(stream, grid(gpu, nnz), args)? };
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
        let stream = gpu.stream();
        let ((slice_ptr, _s), (row16, _r), (col, _c)) = (arg_ptr(&self.slice_ptr, stream), arg_ptr(&self.row, stream), arg_ptr(&self.col, stream));
        let ((val, _v), (x, _x), (y, _y)) = (arg_ptr(&self.val, stream), arg_ptr(x, stream), arg_ptr_mut(y, stream));
        // The product only reads the slices, rows and values (the struct's fields are the
        // conversion's, writable).
        let args = ScooArgs {
            slice_ptr: slice_ptr.cast_mut(),
            row16: row16.cast_mut(),
            col,
            val: val.cast_mut(),
            x,
            y,
            rows: self.rows,
            slices,
            slice_rows: self.slice_rows,
            alpha,
            beta,
            ..null_args()
        };
        // SAFETY: spmv_scoo_T(ScooArgs): a valid SCOO built from a valid CSR; dynamic shared
        // memory of SCOO_LANES · slice_rows values (at most 32 KiB); x and y as the caller
        // guarantees.
        unsafe { k.scoo.launch(stream, cfg, args)? };
        Ok(())
    }
}

/// SCOO's arguments with every pointer null and every count 0: each launch fills the fields its
/// kernel reads.
fn null_args<V: Default + Copy>() -> ScooArgs<V> {
    let zero = V::default();
    ScooArgs {
        ptr: std::ptr::null(),
        perm: std::ptr::null(),
        row_of: std::ptr::null(),
        vals: std::ptr::null(),
        slice_ptr: std::ptr::null_mut(),
        row16: std::ptr::null_mut(),
        col: std::ptr::null(),
        val: std::ptr::null_mut(),
        x: std::ptr::null(),
        y: std::ptr::null_mut(),
        rows: 0,
        nnz: 0,
        slices: 0,
        slice_rows: 0,
        alpha: zero,
        beta: zero,
    }
}
