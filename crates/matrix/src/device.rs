//! Device counterparts: CSR uploaded through gpu-runtime, with the same invariants.
use gpu_runtime::cudarc::driver::{CudaSlice, DeviceRepr};
use gpu_runtime::Gpu;

use crate::formats::Csr;
use crate::{Result, Value};

/// A CSR matrix in device memory (32-bit indices). Built only from a validated [`Csr`], so it
/// keeps its invariants; `vals` is `None` for pattern matrices.
pub struct DeviceCsr<T: DeviceRepr> {
    /// Rows.
    pub rows: u64,
    /// Columns.
    pub cols: u64,
    /// Row pointer (`rows + 1`).
    pub ptr: CudaSlice<u32>,
    /// Column indices.
    pub idx: CudaSlice<u32>,
    /// Values, absent for pattern matrices.
    pub vals: Option<CudaSlice<T>>,
}

impl<T: Value + DeviceRepr> DeviceCsr<T> {
    /// Uploads `a`.
    pub fn upload(gpu: &Gpu, a: &Csr<u32, T>) -> Result<Self> {
        Ok(Self { rows: a.rows(), cols: a.cols(), ptr: gpu.upload(a.ptr())?, idx: gpu.upload(a.idx())?, vals: Some(gpu.upload(a.vals())?) })
    }

    /// Downloads back into a validated [`Csr`].
    pub fn download(&self, gpu: &Gpu) -> Result<Csr<u32, T>> {
        let vals = match &self.vals {
            Some(v) => gpu.download(v)?,
            None => vec![T::one(); self.idx.len()],
        };
        Csr::try_new(self.rows, self.cols, gpu.download(&self.ptr)?, gpu.download(&self.idx)?, vals)
    }
}

impl DeviceCsr<u8> {
    /// Uploads the structure of a pattern matrix.
    pub fn upload_pattern(gpu: &Gpu, a: &Csr<u32, ()>) -> Result<Self> {
        Ok(Self { rows: a.rows(), cols: a.cols(), ptr: gpu.upload(a.ptr())?, idx: gpu.upload(a.idx())?, vals: None })
    }
}
