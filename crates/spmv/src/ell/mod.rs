//! ELL: rows padded to the longest row's length, column-major; a thread per row reads
//! consecutive slots across the warp. Best on rows of nearly equal length (Laplacians, banded);
//! worst when one long row pads every other (refused past [`ELL_MAX_FILL`]). Deterministic, the
//! same bits as CSR-scalar.
mod serial;

use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{arg_ptr, arg_ptr_mut, DeviceView, DeviceViewMut, Gpu};
use spmv_kernels::EllArgs;
use sptrans_matrix::{AsDeviceCsrView, DeviceCsrView};

pub(crate) use serial::check_padding;
pub use serial::{Ell, ELL_MAX_FILL};

use crate::launch::{grid, Kernels};
use crate::{convert, Result, SpmvValue};

/// An ELL matrix on the GPU (see [`Ell`]); fields private, built only by conversion from a valid
/// [`DeviceCsr`](sptrans_matrix::device::DeviceCsr).
pub struct DeviceEll<T: SpmvValue> {
    rows: u64,
    cols: u64,
    width: u64,
    col: CudaSlice<u32>,
    val: CudaSlice<T>,
}

impl<T: SpmvValue> DeviceEll<T> {
    /// Converts on the GPU: row lengths and their maximum (the width), then one thread per slot.
    ///
    /// # Errors
    /// [`crate::Error::TooMuchPadding`] past [`ELL_MAX_FILL`]; [`crate::Error::NoValues`]; out
    /// of memory, launch errors.
    pub fn from_csr(gpu: &Gpu, a: &impl AsDeviceCsrView<T>) -> Result<Self> {
        Self::convert(gpu, &Kernels::<T>::load(gpu)?, &a.csr_view())
    }

    pub(crate) fn convert(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>) -> Result<Self> {
        let (_, max) = convert::row_lengths(gpu, k, a, false)?;
        check_padding(a.rows(), max as u64, a.nnz())?;
        Self::fill(gpu, k, a, max as u64)
    }

    /// The first `width` entries of every row (HYB's ELL part).
    pub(crate) fn fill(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>, width: u64) -> Result<Self> {
        let vals = a.vals().ok_or(crate::Error::NoValues)?;
        let (rows, slots) = (a.rows(), a.rows() * width);
        let mut col = gpu.alloc::<u32>(slots.max(1) as usize)?;
        let mut val = gpu.alloc::<T>(slots.max(1) as usize)?;
        if slots > 0 {
            let stream = gpu.stream();
            let ((ptr, _p), (idx, _i), (vals, _v)) = (arg_ptr(a.ptr(), stream), arg_ptr(a.idx(), stream), arg_ptr(vals, stream));
            let ((col, _c), (val, _w)) = (arg_ptr_mut(&mut col, stream), arg_ptr_mut(&mut val, stream));
            let args = EllArgs {
                ptr,
                idx,
                vals,
                col,
                val,
                x: std::ptr::null(),
                y: std::ptr::null_mut(),
                rows,
                width,
                alpha: T::from_bits64(0),
                beta: T::from_bits64(0),
            };
            // SAFETY: spmv_ell_fill_T(EllArgs): a valid CSR whose rows are at most `width` long
            // or cut at it (the kernel reads k < min(len, width)); col and val hold rows · width
            // slots.
            unsafe { k.ell_fill.launch(stream, grid(gpu, slots), args)? };
        }
        Ok(Self { rows, cols: a.cols(), width, col, val })
    }

    /// Slots per row.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// Bytes, padding included (as [`Ell::footprint_bytes`]).
    pub fn footprint_bytes(&self) -> u64 {
        self.rows * self.width * (4 + T::BYTES as u64)
    }

    /// Copies to the host type (validated).
    ///
    /// # Errors
    /// Driver errors; [`crate::Error::Invalid`] would mean a conversion bug.
    pub fn download(&self, gpu: &Gpu) -> Result<Ell<T>> {
        let slots = (self.rows * self.width) as usize;
        Ell::try_new(
            self.rows,
            self.cols,
            self.width,
            convert::download_prefix(gpu, &self.col, slots)?,
            convert::download_prefix(gpu, &self.val, slots)?,
        )
    }

    /// `y = alpha · A · x + beta · y`.
    ///
    /// # Safety
    /// `x` holds `cols` values and `y` `rows` (device addresses on `gpu`'s stream).
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
        let ((col, _c), (val, _v)) = (arg_ptr(&self.col, stream), arg_ptr(&self.val, stream));
        let ((x, _x), (y, _y)) = (arg_ptr(x, stream), arg_ptr_mut(y, stream));
        // The product only reads the slots (the struct's fields are the fill's, writable).
        let (ptr, idx, vals) = (std::ptr::null(), std::ptr::null(), std::ptr::null());
        let args = EllArgs { ptr, idx, vals, col: col.cast_mut(), val: val.cast_mut(), x, y, rows: self.rows, width: self.width, alpha, beta };
        // SAFETY: spmv_ell_T(EllArgs): a valid ELL (built by conversion from a valid CSR); x and
        // y as the caller guarantees.
        unsafe { k.ell.launch(stream, cfg, args)? };
        Ok(())
    }
}
