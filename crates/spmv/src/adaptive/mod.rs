//! CSR-adaptive (Greathouse & Daga, SC'14): the CSR plus row blocks, so that a block of threads
//! gets either a run of short rows (CSR-stream: coalesced loads into shared memory, then a group
//! of lanes per row), one row (CSR-vector with the whole block) or a piece of a very long row
//! (CSR-vectorL, atomics). Deterministic except for rows longer than
//! [`spmv_kernels::ADAPTIVE_LONG`].
mod serial;

use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{arg_ptr, arg_ptr_mut, DeviceView, DeviceViewMut, Gpu};
use spmv_kernels::{AdaptiveArgs, AdaptiveBuildArgs, NT};
use sptrans_matrix::{AsDeviceCsrView, DeviceCsrView};

pub use serial::RowBlocks;

use crate::launch::{grid, Kernels};
use crate::{convert, Result, SpmvValue};

/// CSR-adaptive's row blocks on the GPU (see [`RowBlocks`]), for the CSR they were built from.
pub struct DeviceRowBlocks {
    entries: u64,
    block_row: CudaSlice<u32>,
    block_nz: CudaSlice<u32>,
}

impl DeviceRowBlocks {
    /// Builds the row blocks on the GPU: entry counts per row, their scan (`gpu-scan`), then
    /// each row writes its entries.
    ///
    /// # Errors
    /// Out of memory, launch errors.
    pub fn from_csr<T: SpmvValue>(gpu: &Gpu, a: &impl AsDeviceCsrView<T>) -> Result<Self> {
        Self::convert(gpu, &Kernels::<T>::load(gpu)?, &a.csr_view())
    }

    pub(crate) fn convert<T: SpmvValue>(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>) -> Result<Self> {
        let rows = a.rows();
        let mut count = gpu.alloc::<u32>(rows as usize + 2)?;
        {
            let stream = gpu.stream();
            let ((ptr, _p), (count, _c)) = (arg_ptr(a.ptr(), stream), arg_ptr_mut(&mut count, stream));
            let (offset, block_row, block_nz) = (std::ptr::null(), std::ptr::null_mut(), std::ptr::null_mut());
            let args = AdaptiveBuildArgs { ptr, offset, count, block_row, block_nz, rows };
            // SAFETY: spmv_adaptive_counts(AdaptiveBuildArgs: ptr, count, rows): count holds
            // rows + 2.
            unsafe { k.adaptive_counts.launch(stream, grid(gpu, rows + 2), args)? };
        }
        let (offset, entries) = convert::exclusive_scan(gpu, &count)?;
        drop(count);
        let (mut block_row, mut block_nz) = (gpu.alloc::<u32>(entries as usize)?, gpu.alloc::<u32>(entries as usize)?);
        {
            let stream = gpu.stream();
            let ((ptr, _p), (offset, _o)) = (arg_ptr(a.ptr(), stream), arg_ptr(&offset, stream));
            let ((block_row, _r), (block_nz, _z)) = (arg_ptr_mut(&mut block_row, stream), arg_ptr_mut(&mut block_nz, stream));
            let args = AdaptiveBuildArgs { ptr, offset, count: std::ptr::null_mut(), block_row, block_nz, rows };
            // SAFETY: spmv_adaptive_write(AdaptiveBuildArgs): the scan of the counts; both outputs
            // hold its total.
            unsafe { k.adaptive_write.launch(stream, grid(gpu, rows + 1), args)? };
        }
        Ok(Self { entries: entries as u64, block_row, block_nz })
    }

    /// Row blocks (entries − 1).
    pub fn blocks(&self) -> u64 {
        self.entries - 1
    }

    /// Bytes beyond the CSR (as [`RowBlocks::footprint_bytes`]).
    pub fn footprint_bytes(&self) -> u64 {
        8 * self.entries
    }

    /// Copies to the host type.
    ///
    /// # Errors
    /// Driver errors.
    pub fn download(&self, gpu: &Gpu) -> Result<RowBlocks> {
        Ok(RowBlocks::from_parts(gpu.download(&self.block_row)?, gpu.download(&self.block_nz)?))
    }

    /// `y = alpha · A · x + beta · y` for the CSR these blocks were built from.
    ///
    /// # Safety
    /// `ptr`/`idx`/`vals` that CSR; `x` holds `cols` values and `y` `rows`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn apply<T: SpmvValue>(
        &self,
        gpu: &Gpu,
        k: &Kernels<T>,
        a: &DeviceCsrView<'_, T>,
        alpha: T,
        x: &DeviceView<'_, T>,
        beta: T,
        y: &mut DeviceViewMut<'_, T>,
    ) -> Result<()> {
        let (ptr, idx, vals) = (a.ptr(), a.idx(), crate::launch::values(a)?);
        let blocks = self.blocks();
        if blocks == 0 {
            return Ok(());
        }
        let stream = gpu.stream();
        let ((ptr, _p), (idx, _i), (vals, _v)) = (arg_ptr(ptr, stream), arg_ptr(idx, stream), arg_ptr(vals, stream));
        let ((x, _x), (y, _y)) = (arg_ptr(x, stream), arg_ptr_mut(y, stream));
        let ((block_row, _r), (block_nz, _z)) = (arg_ptr(&self.block_row, stream), arg_ptr(&self.block_nz, stream));
        let args = AdaptiveArgs { ptr, idx, vals, x, y, block_row, block_nz, blocks, alpha, beta };
        let cfg = gpu_runtime::grid_1d(blocks, NT, 1, u32::MAX);
        // SAFETY: spmv_adaptive_split_T(AdaptiveArgs) (this CSR's blocks; y holds rows), then
        // spmv_adaptive_T after it on the same stream; blocks of NT threads.
        unsafe {
            k.adaptive_split.launch(stream, grid(gpu, blocks), args)?;
            k.adaptive.launch(stream, cfg, args)?;
        }
        Ok(())
    }
}
