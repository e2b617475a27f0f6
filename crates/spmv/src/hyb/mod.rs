//! ELL-COO (HYB, Bell & Garland): ELL of the width [`width`] picks from the row-length histogram
//! for the regular part, COO with atomic adds for the overflow of long rows. Bounded padding
//! whatever the rows; the COO part makes it **not bit-reproducible** when nonempty.
mod serial;

use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{arg_ptr, arg_ptr_mut, DeviceView, DeviceViewMut, Gpu};
use spmv_kernels::HybArgs;
use sptrans_matrix::{AsDeviceCsrView, DeviceCsrView};

pub use serial::{width, Hyb};

use crate::ell::DeviceEll;
use crate::launch::{self, grid, Kernels};
use crate::{convert, Result, SpmvValue};

/// An ELL-COO matrix on the GPU (see [`Hyb`]).
pub struct DeviceHyb<T: SpmvValue> {
    ell: DeviceEll<T>,
    coo_len: u64,
    coo_row: CudaSlice<u32>,
    coo_col: CudaSlice<u32>,
    coo_val: CudaSlice<T>,
}

impl<T: SpmvValue> DeviceHyb<T> {
    /// Converts on the GPU: row lengths, their histogram (`gpu-histogram`), the width on the
    /// host from it, the ELL part, overflow counts scanned (`gpu-scan`) and the COO part by
    /// nonzero (rows from `gpu-ptr2idx`).
    ///
    /// # Errors
    /// [`crate::Error::NoValues`]; out of memory, launch errors.
    pub fn from_csr(gpu: &Gpu, a: &impl AsDeviceCsrView<T>) -> Result<Self> {
        Self::convert(gpu, &Kernels::<T>::load(gpu)?, &a.csr_view())
    }

    pub(crate) fn convert(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>) -> Result<Self> {
        let vals = a.vals().ok_or(crate::Error::NoValues)?;
        let rows = a.rows();
        let w = width(&convert::length_histogram(gpu, k, a)?, rows);
        let ell = DeviceEll::fill(gpu, k, a, w)?;
        let mut count = gpu.alloc::<u32>(rows as usize + 1)?;
        {
            let stream = gpu.stream();
            let ((ptr, _p), (count, _c)) = (arg_ptr(a.ptr(), stream), arg_ptr_mut(&mut count, stream));
            let (row_of, offset, idx, vals) = (std::ptr::null(), std::ptr::null(), std::ptr::null(), std::ptr::null());
            let (coo_row, coo_col, coo_val) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
            let args = HybArgs::<u8> { ptr, row_of, offset, idx, vals, count, coo_row, coo_col, coo_val, nnz: 0, rows, width: w as u32 };
            // SAFETY: spmv_hyb_overflow(HybArgs: ptr, count, rows, width): count holds rows + 1.
            unsafe { k.hyb_overflow.launch(stream, grid(gpu, rows + 1), args)? };
        }
        let (offset, total) = convert::exclusive_scan(gpu, &count)?;
        drop(count);
        let n = (total as usize).max(1);
        let (mut coo_row, mut coo_col, mut coo_val) = (gpu.alloc::<u32>(n)?, gpu.alloc::<u32>(n)?, gpu.alloc::<T>(n)?);
        if total > 0 {
            let row_of = convert::rows_of(gpu, a)?;
            let nnz = a.nnz();
            let stream = gpu.stream();
            let ((ptr, _p), (row_of, _r), (offset, _o)) = (arg_ptr(a.ptr(), stream), arg_ptr(&row_of, stream), arg_ptr(&offset, stream));
            let ((idx, _i), (vals, _v)) = (arg_ptr(a.idx(), stream), arg_ptr(vals, stream));
            let ((coo_row, _cr), (coo_col, _cc), (coo_val, _cv)) =
                (arg_ptr_mut(&mut coo_row, stream), arg_ptr_mut(&mut coo_col, stream), arg_ptr_mut(&mut coo_val, stream));
            let args = HybArgs { ptr, row_of, offset, idx, vals, count: std::ptr::null_mut(), coo_row, coo_col, coo_val, nnz, rows, width: w as u32 };
            // SAFETY: spmv_hyb_fill_coo_T(HybArgs): the CSR's rows and the scan of its overflow
            // counts; the COO arrays hold the total.
            unsafe { k.hyb_fill_coo.launch(stream, grid(gpu, nnz), args)? };
        }
        Ok(Self { ell, coo_len: total as u64, coo_row, coo_col, coo_val })
    }

    /// The ELL width.
    pub fn width(&self) -> u64 {
        self.ell.width()
    }

    /// Entries in the COO part.
    pub fn coo_len(&self) -> u64 {
        self.coo_len
    }

    /// Bytes (as [`Hyb::footprint_bytes`]).
    pub fn footprint_bytes(&self) -> u64 {
        self.ell.footprint_bytes() + self.coo_len * (8 + T::BYTES as u64)
    }

    /// Copies to the host type (validated).
    ///
    /// # Errors
    /// Driver errors.
    pub fn download(&self, gpu: &Gpu) -> Result<Hyb<T>> {
        let n = self.coo_len as usize;
        Hyb::try_new(
            self.ell.download(gpu)?,
            convert::download_prefix(gpu, &self.coo_row, n)?,
            convert::download_prefix(gpu, &self.coo_col, n)?,
            convert::download_prefix(gpu, &self.coo_val, n)?,
        )
    }

    /// `y = alpha · A · x + beta · y`.
    ///
    /// # Safety
    /// As [`DeviceEll`]'s.
    pub(crate) unsafe fn apply(
        &self,
        gpu: &Gpu,
        k: &Kernels<T>,
        alpha: T,
        x: &DeviceView<'_, T>,
        beta: T,
        y: &mut DeviceViewMut<'_, T>,
    ) -> Result<()> {
        // SAFETY: the caller's x and y.
        unsafe { self.ell.apply(gpu, k, alpha, x, beta, y)? };
        let (c, v) = (DeviceView::of(&self.coo_col), DeviceView::of(&self.coo_val));
        // SAFETY: coo_len entries with rows and columns of the CSR converted.
        unsafe { launch::coo_add(gpu, k, self.coo_len, &self.coo_row, &c, &v, x, alpha, y) }
    }
}
