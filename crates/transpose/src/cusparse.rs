//! The baseline: NVIDIA cuSPARSE `cusparseCsr2cscEx2` (default algorithm, ALG1), through cudarc's
//! cuSPARSE bindings. The library is found by `gpu_runtime::vendor::cusparse_library` (the
//! loader's usual search, or `SPTRANS_CUSPARSE_LIB`); a missing library is an error value
//! ([`Error::CuSparseUnavailable`]), never a panic.
use std::ffi::c_void;

use cudarc::cusparse::sys;
use gpu_runtime::Gpu;

use crate::{Error, Result};

fn check(call: &'static str, status: sys::cusparseStatus_t) -> Result<()> {
    if status == sys::cusparseStatus_t::CUSPARSE_STATUS_ALLOC_FAILED {
        // Out of memory has one shape in this workspace (`Error::is_out_of_memory`).
        return Err(Error::Runtime(gpu_runtime::Error::OutOfMemory { bytes: 0, what: call }));
    }
    status.result().map_err(|e| Error::CuSparse { call, status: format!("{:?}", e.0) })
}

/// A cuSPARSE handle bound to the GPU's stream.
pub(crate) struct CuSparse {
    handle: sys::cusparseHandle_t,
}

// SAFETY: a cuSPARSE handle may be used from any host thread, one call at a time (the cuSPARSE
// guide: handles are not thread-safe for concurrent use, not tied to the creating thread). This
// one is owned by one `CuSparseTranspose`, whose calls take `&mut self`, so moving it between
// threads never makes two calls concurrent. It is not `Sync`.
unsafe impl Send for CuSparse {}

/// The raw arguments of one `csr2cscEx2` call.
pub(crate) struct Call {
    pub m: u64,
    pub n: u64,
    pub nnz: u64,
    pub vals: u64,
    pub ptr: u64,
    pub idx: u64,
    pub out_vals: u64,
    pub out_ptr: u64,
    pub out_idx: u64,
    /// 0 (pattern), 4 or 8.
    pub value_bytes: usize,
}

impl Call {
    /// The addresses of a transpose of `a` into `out` (values null for a pattern matrix): the
    /// only place this crate turns its views into raw cuSPARSE arguments.
    pub(crate) fn of<T: gpu_runtime::Payload>(a: &sptrans_matrix::DeviceCsrView<'_, T>, out: &sptrans_matrix::DeviceCsrPartsMut<'_, T>) -> Self {
        let (vals, out_vals, value_bytes) = match (a.vals(), out.vals.as_ref()) {
            (Some(v), Some(o)) => (v.addr(), o.addr(), T::BYTES),
            _ => (0, 0, 0),
        };
        Self {
            m: a.rows(),
            n: a.cols(),
            nnz: a.nnz(),
            vals,
            ptr: a.ptr().addr(),
            idx: a.idx().addr(),
            out_vals,
            out_ptr: out.ptr.addr(),
            out_idx: out.idx.addr(),
            value_bytes,
        }
    }

    fn ints(&self) -> Result<(i32, i32, i32)> {
        let fit = |what, v: u64| i32::try_from(v).map_err(|_| Error::TooLarge { what, len: v, max: i32::MAX as u64 });
        Ok((fit("m (cuSPARSE)", self.m)?, fit("n (cuSPARSE)", self.n)?, fit("nnz (cuSPARSE)", self.nnz)?))
    }

    fn kind(&self) -> (sys::cudaDataType, sys::cusparseAction_t) {
        // csr2cscEx2 moves value bits; 4-byte integers travel as f32, 8-byte ones as f64.
        // Only the width matters (values are moved, not computed on).
        let ty = match self.value_bytes {
            1 => sys::cudaDataType::CUDA_R_8I,
            2 => sys::cudaDataType::CUDA_R_16F,
            8 => sys::cudaDataType::CUDA_R_64F,
            16 => sys::cudaDataType::CUDA_C_64F,
            _ => sys::cudaDataType::CUDA_R_32F,
        };
        let action =
            if self.value_bytes == 0 { sys::cusparseAction_t::CUSPARSE_ACTION_SYMBOLIC } else { sys::cusparseAction_t::CUSPARSE_ACTION_NUMERIC };
        (ty, action)
    }
}

impl CuSparse {
    pub(crate) fn new(gpu: &Gpu) -> Result<Self> {
        gpu_runtime::vendor::cusparse_library().map_err(|e| Error::CuSparseUnavailable(e.to_string()))?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: the library is loaded; cusparseCreate writes one handle.
        check("cusparseCreate", unsafe { sys::cusparseCreate(&mut handle) })?;
        let cs = Self { handle };
        let stream = gpu.stream().cu_stream() as sys::cudaStream_t;
        // SAFETY: a live handle and the GPU's live stream (the Gpu outlives every call).
        check("cusparseSetStream", unsafe { sys::cusparseSetStream(cs.handle, stream) })?;
        Ok(cs)
    }

    /// `cusparseGetVersion`.
    pub(crate) fn version(&self) -> Result<i32> {
        let mut v = 0;
        // SAFETY: a live handle.
        check("cusparseGetVersion", unsafe { sys::cusparseGetVersion(self.handle, &mut v) })?;
        Ok(v)
    }

    /// Workspace bytes `csr2cscEx2` asks for.
    pub(crate) fn buffer_size(&self, c: &Call) -> Result<u64> {
        let (m, n, nnz) = c.ints()?;
        let (ty, action) = c.kind();
        let mut bytes = 0usize;
        // SAFETY: the query reads only the sizes and types (pointers may be anything).
        check("cusparseCsr2cscEx2_bufferSize", unsafe {
            sys::cusparseCsr2cscEx2_bufferSize(
                self.handle,
                m,
                n,
                nnz,
                c.vals as *const c_void,
                c.ptr as *const i32,
                c.idx as *const i32,
                c.out_vals as *mut c_void,
                c.out_ptr as *mut i32,
                c.out_idx as *mut i32,
                ty,
                action,
                sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                sys::cusparseCsr2CscAlg_t::CUSPARSE_CSR2CSC_ALG_DEFAULT,
                &mut bytes,
            )
        })?;
        Ok(bytes as u64)
    }

    /// Enqueues the transposition.
    ///
    /// # Safety
    /// The pointers are device buffers of a valid CSR (`m + 1`, `nnz`, `nnz` values of
    /// `value_bytes`) and of its output (`n + 1`, `nnz`, `nnz`), `buffer` holds
    /// [`CuSparse::buffer_size`] bytes.
    pub(crate) unsafe fn run(&self, c: &Call, buffer: u64) -> Result<()> {
        let (m, n, nnz) = c.ints()?;
        let (ty, action) = c.kind();
        // SAFETY: the caller's contract.
        check("cusparseCsr2cscEx2", unsafe {
            sys::cusparseCsr2cscEx2(
                self.handle,
                m,
                n,
                nnz,
                c.vals as *const c_void,
                c.ptr as *const i32,
                c.idx as *const i32,
                c.out_vals as *mut c_void,
                c.out_ptr as *mut i32,
                c.out_idx as *mut i32,
                ty,
                action,
                sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                sys::cusparseCsr2CscAlg_t::CUSPARSE_CSR2CSC_ALG_DEFAULT,
                buffer as *mut c_void,
            )
        })
    }
}

impl Drop for CuSparse {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped once.
        let _ = unsafe { sys::cusparseDestroy(self.handle) };
    }
}
