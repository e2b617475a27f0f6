//! Peers the benches and tests compare with, kept out of [`crate::Algorithm`] (which lists the
//! transposers of this crate): NVIDIA cuSPARSE's `cusparseCsr2cscEx2` ([`CuSparseTranspose`]),
//! the baseline of every ratio this project prints.
//!
//! cuSPARSE's `csr2cscEx2` returns wrong entries in a few calls in a thousand on some matrices
//! (reproduced through CuPy alone: `benches/experiments/2026-11-26-cusparse-baseline-anomaly.md`);
//! benches check its output like ours.
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr};
use gpu_runtime::{Gpu, Payload, Scratch, ScratchBuf};
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use sptrans_matrix::{AsDeviceCsrView, DeviceCsrPartsMut, DeviceCsrView};

use crate::cusparse::{Call, CuSparse};
use crate::{check_call, Result};

/// cuSPARSE's CSR → CSC (`csr2cscEx2`, default algorithm) as a plan on a [`Gpu`]'s stream, with
/// the transposers' contract: borrowed views, `workspace_bytes`, own or lent scratch. Values of
/// 1, 2, 4, 8 and 16 bytes or none; 32-bit indices (at most `i32::MAX` rows, columns and
/// nonzeros: cuSPARSE's).
pub struct CuSparseTranspose {
    gpu: Gpu,
    cs: CuSparse,
    /// Two words the size query points at (it reads no data but refuses null pointers).
    dummy: CudaSlice<u64>,
    own: ScratchBuf,
}

impl CuSparseTranspose {
    /// Loads cuSPARSE and makes a handle on `gpu`'s stream.
    ///
    /// # Errors
    /// [`crate::Error::CuSparseUnavailable`] when the library cannot be loaded; cuSPARSE errors.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        // cuSPARSE works on the calling thread's current context: make it this GPU's.
        gpu.context().bind_to_thread().map_err(gpu_runtime::Error::driver("binding the context for cuSPARSE"))?;
        let cs = CuSparse::new(gpu)?;
        Ok(Self { gpu: gpu.clone(), cs, dummy: gpu.alloc::<u64>(2)?, own: ScratchBuf::default() })
    }

    /// The GPU handle (and so the stream) it runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The cuSPARSE version (`major * 1000 + minor * 100 + patch`).
    ///
    /// # Errors
    /// cuSPARSE errors.
    pub fn version(&self) -> Result<i32> {
        self.cs.version()
    }

    /// Device bytes the plan holds: its workspace.
    pub fn allocated_bytes(&self) -> u64 {
        self.own.bytes()
    }

    /// Device bytes one call needs beyond its input and output for an `m × n` matrix with `nnz`
    /// nonzeros of `value_bytes` bytes (0 for pattern): the buffer cuSPARSE asks for.
    ///
    /// # Errors
    /// [`crate::Error::TooLarge`] past cuSPARSE's 32-bit sizes; cuSPARSE errors.
    pub fn workspace_bytes(&self, m: u64, n: u64, nnz: u64, value_bytes: usize) -> Result<u64> {
        if nnz == 0 {
            return Ok(0);
        }
        let p = self.dummy.device_ptr(self.gpu.stream()).0;
        let call = Call { m, n, nnz, vals: p, ptr: p, idx: p, out_vals: p, out_ptr: p, out_idx: p, value_bytes };
        Ok(gpu_runtime::scratch::Layout::new().add(self.cs.buffer_size(&call)?).bytes())
    }

    /// Allocates the output for `a` and transposes into it.
    ///
    /// # Errors
    /// As [`CuSparseTranspose::transpose_view`].
    pub fn transpose_new<T: Payload>(&mut self, a: &impl AsDeviceCsrView<T>) -> Result<DeviceCsr<T>> {
        let view = a.csr_view();
        let out = DeviceCsrParts::alloc(&self.gpu, view.cols(), view.nnz(), view.vals().is_some())?;
        self.transpose_into(a, out)
    }

    /// Transposes `a` into the owned buffers `out` and returns them as the result.
    ///
    /// # Errors
    /// As [`CuSparseTranspose::transpose_view`].
    pub fn transpose_into<T: Payload>(&mut self, a: &impl AsDeviceCsrView<T>, mut out: DeviceCsrParts<T>) -> Result<DeviceCsr<T>> {
        let a = a.csr_view();
        self.transpose_view(&a, &mut out.view_mut())?;
        // SAFETY: transpose_view wrote the CSR of the transpose of a valid `a` (cuSPARSE's result;
        // its defect above gives wrong entries, never an invalid structure: pointer and row
        // indices within bounds, checked by the tests' twin comparisons).
        Ok(unsafe { DeviceCsr::from_parts_unchecked(a.cols(), a.rows(), out) })
    }

    /// Transposes the borrowed `a` into the borrowed `out` (as
    /// [`crate::Transposer::transpose_view`]) on the plan's own workspace. Enqueued on the
    /// stream; the first call of a shape may allocate the workspace.
    ///
    /// # Errors
    /// [`crate::Error::LengthMismatch`], [`crate::Error::TooLarge`], cuSPARSE errors, runtime errors.
    pub fn transpose_view<T: Payload>(&mut self, a: &DeviceCsrView<'_, T>, out: &mut DeviceCsrPartsMut<'_, T>) -> Result<()> {
        let vb = if a.vals().is_some() { T::BYTES } else { 0 };
        let bytes = self.workspace_bytes(a.rows(), a.cols(), a.nnz(), vb)?;
        let gpu = self.gpu.clone();
        ScratchBuf::lend(self, |p| &mut p.own, &gpu, bytes, |c, s| c.transpose_view_with(a, out, s))
    }

    /// [`CuSparseTranspose::transpose_view`] on lent scratch of at least
    /// [`CuSparseTranspose::workspace_bytes`].
    ///
    /// # Errors
    /// As [`CuSparseTranspose::transpose_view`], and `ScratchTooSmall`.
    pub fn transpose_view_with<T: Payload>(
        &mut self,
        a: &DeviceCsrView<'_, T>,
        out: &mut DeviceCsrPartsMut<'_, T>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let d = check_call(a, out)?;
        if d.nnz == 0 {
            // cuSPARSE would leave the pointer of n = 0 unwritten.
            return Ok(self.gpu.memset_bytes(&mut out.ptr, 0)?);
        }
        self.gpu.context().bind_to_thread().map_err(gpu_runtime::Error::driver("binding the context for cuSPARSE"))?;
        let call = Call::of(a, out);
        let bytes = self.cs.buffer_size(&call)?;
        scratch.require(gpu_runtime::scratch::Layout::new().add(bytes).bytes())?;
        let buf = scratch.take(bytes)?;
        // SAFETY: a valid CSR view and its transposed-shape output (checked), a buffer of the size
        // cuSPARSE asked for.
        unsafe { self.cs.run(&call, buf) }
    }
}
