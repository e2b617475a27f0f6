//! NVIDIA cuSPARSE's plumbing in one place (feature `cusparse`): the library check, a handle on a
//! GPU's stream, status codes as errors, and descriptors destroyed on drop. The baselines built on
//! it — `gpu-transpose`'s `csr2cscEx2`, `gpu-spmv`'s `cusparseSpMV`, `gpu-csrc`'s SpMV and SpMM —
//! keep only their calls; each crate turns [`Error`] into its own error type.
//!
//! The library is found at run time by [`crate::vendor::cusparse_library`]: a missing one is
//! [`Error::Unavailable`], never a panic.
//!
//! ```no_run
//! use gpu_runtime::cusparse::Handle;
//! let gpu = gpu_runtime::Gpu::first()?;
//! // A handle whose calls run on the GPU's stream.
//! let h = Handle::new(&gpu)?;
//! println!("cuSPARSE {}", h.version()?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
use std::ffi::c_void;

pub use cudarc::cusparse::sys;

use crate::Gpu;

/// What a cuSPARSE call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The library could not be loaded (the names and paths tried).
    #[error("cuSPARSE is not available: {0}")]
    Unavailable(String),
    /// `CUSPARSE_STATUS_ALLOC_FAILED`: cuSPARSE ran out of device memory in `call`.
    #[error("{call}: cuSPARSE could not allocate device memory")]
    OutOfMemory {
        /// The call.
        call: &'static str,
    },
    /// Any other status but success.
    #[error("{call} failed: {status}")]
    Status {
        /// The call.
        call: &'static str,
        /// cuSPARSE's status, by name.
        status: String,
    },
    /// The driver (binding the context to the thread).
    #[error(transparent)]
    Runtime(#[from] crate::Error),
}

/// `impl From<gpu_runtime::cusparse::Error> for Error` in a crate whose error type has the
/// variants `CuSparseUnavailable(String)`, `CuSparse { call, status }` and
/// `Runtime(gpu_runtime::Error)`: out of memory keeps the workspace's one shape
/// (`Error::Runtime(OutOfMemory)`, which `is_out_of_memory` recognizes).
#[macro_export]
macro_rules! lift_cusparse_errors {
    () => {
        impl From<$crate::cusparse::Error> for Error {
            fn from(e: $crate::cusparse::Error) -> Self {
                match e {
                    $crate::cusparse::Error::Unavailable(why) => Error::CuSparseUnavailable(why),
                    $crate::cusparse::Error::OutOfMemory { call } => Error::Runtime($crate::Error::OutOfMemory { bytes: 0, what: call }),
                    $crate::cusparse::Error::Status { call, status } => Error::CuSparse { call, status },
                    $crate::cusparse::Error::Runtime(r) => Error::Runtime(r),
                }
            }
        }
    };
}

/// `Ok` for `CUSPARSE_STATUS_SUCCESS`, else the status as an [`Error`] naming `call`.
///
/// # Errors
/// [`Error::OutOfMemory`] for `CUSPARSE_STATUS_ALLOC_FAILED`, [`Error::Status`] otherwise.
pub fn check(call: &'static str, status: sys::cusparseStatus_t) -> Result<(), Error> {
    if status == sys::cusparseStatus_t::CUSPARSE_STATUS_ALLOC_FAILED {
        return Err(Error::OutOfMemory { call });
    }
    status.result().map_err(|e| Error::Status { call, status: format!("{:?}", e.0) })
}

/// The cuSPARSE data type of values of `bytes` bytes: 1 `CUDA_R_8I`, 2 `CUDA_R_16F`, 8
/// `CUDA_R_64F`, 16 `CUDA_C_64F`, anything else `CUDA_R_32F`. For `f32` and `f64` the real types;
/// for a transposition, which only moves value bits, a type of the width.
pub fn data_type(bytes: usize) -> sys::cudaDataType {
    match bytes {
        1 => sys::cudaDataType::CUDA_R_8I,
        2 => sys::cudaDataType::CUDA_R_16F,
        8 => sys::cudaDataType::CUDA_R_64F,
        16 => sys::cudaDataType::CUDA_C_64F,
        _ => sys::cudaDataType::CUDA_R_32F,
    }
}

/// A cuSPARSE handle whose calls run on a GPU's stream, destroyed on drop.
#[derive(Debug)]
pub struct Handle {
    raw: sys::cusparseHandle_t,
}

// SAFETY: a cuSPARSE handle may be used from any host thread, one call at a time (the cuSPARSE
// guide: handles are not thread-safe for concurrent use, not tied to the creating thread).
// `Handle` hands out its raw handle only through `&self`, and every owner in this workspace
// makes its calls through `&mut self`, so moving one between threads never makes two calls
// concurrent. It is not `Sync`.
unsafe impl Send for Handle {}

impl Handle {
    /// A handle on `gpu`'s stream (the library loaded, `gpu`'s context bound to this thread).
    ///
    /// # Errors
    /// [`Error::Unavailable`], the driver's error binding the context, cuSPARSE's status.
    pub fn new(gpu: &Gpu) -> Result<Self, Error> {
        crate::vendor::cusparse_library().map_err(|e| Error::Unavailable(e.to_string()))?;
        gpu.context().bind_to_thread().map_err(crate::Error::driver("binding the context for cuSPARSE"))?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the library is loaded; cusparseCreate writes one handle.
        check("cusparseCreate", unsafe { sys::cusparseCreate(&mut raw) })?;
        let h = Self { raw };
        h.set_stream(gpu)?;
        Ok(h)
    }

    /// Binds the handle to `gpu`'s stream (and the context to this thread): later calls run
    /// there.
    ///
    /// # Errors
    /// The driver's error binding the context; cuSPARSE's status.
    pub fn set_stream(&self, gpu: &Gpu) -> Result<(), Error> {
        gpu.context().bind_to_thread().map_err(crate::Error::driver("binding the context for cuSPARSE"))?;
        // SAFETY: a live handle and the GPU's live stream.
        check("cusparseSetStream", unsafe { sys::cusparseSetStream(self.raw, gpu.stream().cu_stream() as sys::cudaStream_t) })
    }

    /// The raw handle, for cuSPARSE's calls (valid while `self` lives).
    pub fn raw(&self) -> sys::cusparseHandle_t {
        self.raw
    }

    /// `cusparseGetVersion`.
    ///
    /// # Errors
    /// cuSPARSE's status.
    pub fn version(&self) -> Result<i32, Error> {
        let mut v = 0;
        // SAFETY: a live handle.
        check("cusparseGetVersion", unsafe { sys::cusparseGetVersion(self.raw, &mut v) })?;
        Ok(v)
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle is live and destroyed once.
        let _ = unsafe { sys::cusparseDestroy(self.raw) };
    }
}

/// A sparse-matrix descriptor (CSR or COO, 32-bit indices, base 0), destroyed on drop. It
/// points into device arrays it does not own: its owner keeps them alive and unchanged.
#[derive(Debug)]
pub struct SpMat(sys::cusparseSpMatDescr_t);

// SAFETY: a descriptor is plain data cuSPARSE reads during calls; owners use it one call at a
// time (as `Handle`).
unsafe impl Send for SpMat {}

impl SpMat {
    /// A CSR descriptor of `rows × cols` with `nnz` entries: row pointer `ptr`, columns `idx`,
    /// values `vals` of cuSPARSE type `ty`.
    ///
    /// # Safety
    /// `ptr`, `idx` and `vals` are device arrays of `rows + 1`, `nnz` and `nnz` items of a valid
    /// CSR with 32-bit indices, alive and unchanged while the descriptor is used.
    ///
    /// # Errors
    /// cuSPARSE's status.
    pub unsafe fn csr(rows: i64, cols: i64, nnz: i64, ptr: u64, idx: u64, vals: u64, ty: sys::cudaDataType) -> Result<Self, Error> {
        let mut d = std::ptr::null_mut();
        let (i32i, base) = (sys::cusparseIndexType_t::CUSPARSE_INDEX_32I, sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO);
        // SAFETY: the caller's arrays.
        check("cusparseCreateCsr", unsafe {
            sys::cusparseCreateCsr(&mut d, rows, cols, nnz, ptr as *mut c_void, idx as *mut c_void, vals as *mut c_void, i32i, i32i, base, ty)
        })?;
        Ok(Self(d))
    }

    /// A COO descriptor: rows `r`, columns `c`, values `vals` of `nnz` entries each.
    ///
    /// # Safety
    /// As [`SpMat::csr`], with three arrays of `nnz` items of the same entries.
    ///
    /// # Errors
    /// cuSPARSE's status.
    pub unsafe fn coo(rows: i64, cols: i64, nnz: i64, r: u64, c: u64, vals: u64, ty: sys::cudaDataType) -> Result<Self, Error> {
        let mut d = std::ptr::null_mut();
        let (i32i, base) = (sys::cusparseIndexType_t::CUSPARSE_INDEX_32I, sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO);
        // SAFETY: the caller's arrays.
        check("cusparseCreateCoo", unsafe {
            sys::cusparseCreateCoo(&mut d, rows, cols, nnz, r as *mut c_void, c as *mut c_void, vals as *mut c_void, i32i, base, ty)
        })?;
        Ok(Self(d))
    }

    /// The raw descriptor (valid while `self` lives).
    pub fn raw(&self) -> sys::cusparseSpMatDescr_t {
        self.0
    }
}

impl Drop for SpMat {
    fn drop(&mut self) {
        // SAFETY: a live descriptor, destroyed once.
        let _ = unsafe { sys::cusparseDestroySpMat(self.0) };
    }
}

/// A dense-vector descriptor, destroyed on drop.
#[derive(Debug)]
pub struct DnVec(sys::cusparseDnVecDescr_t);

// SAFETY: as `SpMat`.
unsafe impl Send for DnVec {}

impl DnVec {
    /// A descriptor of the device vector at `ptr` of `len` values of type `ty`.
    ///
    /// # Safety
    /// `ptr` holds `len` values, alive and unchanged (but for the calls' writes) while the
    /// descriptor is used.
    ///
    /// # Errors
    /// cuSPARSE's status.
    pub unsafe fn new(len: i64, ptr: u64, ty: sys::cudaDataType) -> Result<Self, Error> {
        let mut d = std::ptr::null_mut();
        // SAFETY: the caller's vector.
        check("cusparseCreateDnVec", unsafe { sys::cusparseCreateDnVec(&mut d, len, ptr as *mut c_void, ty) })?;
        Ok(Self(d))
    }

    /// Points the descriptor at another vector of the same length and type.
    ///
    /// # Safety
    /// As [`DnVec::new`] for `ptr`.
    ///
    /// # Errors
    /// cuSPARSE's status.
    pub unsafe fn set_values(&mut self, ptr: u64) -> Result<(), Error> {
        // SAFETY: a live descriptor; the caller's vector.
        check("cusparseDnVecSetValues", unsafe { sys::cusparseDnVecSetValues(self.0, ptr as *mut c_void) })
    }

    /// The raw descriptor (valid while `self` lives).
    pub fn raw(&self) -> sys::cusparseDnVecDescr_t {
        self.0
    }
}

impl Drop for DnVec {
    fn drop(&mut self) {
        // SAFETY: a live descriptor, destroyed once.
        let _ = unsafe { sys::cusparseDestroyDnVec(self.0) };
    }
}

/// A dense-matrix descriptor (column-major), destroyed on drop.
#[derive(Debug)]
pub struct DnMat(sys::cusparseDnMatDescr_t);

// SAFETY: as `SpMat`.
unsafe impl Send for DnMat {}

impl DnMat {
    /// A descriptor of the column-major `rows × cols` block at `ptr` with leading dimension `ld`
    /// (raised to 1 for an empty block, as cuSPARSE asks), values of type `ty`.
    ///
    /// # Safety
    /// `ptr` spans `ld · (cols − 1) + rows` values, alive and unchanged (but for the calls'
    /// writes) while the descriptor is used; `ld ≥ rows`.
    ///
    /// # Errors
    /// cuSPARSE's status.
    pub unsafe fn col_major(rows: i64, cols: i64, ld: i64, ptr: u64, ty: sys::cudaDataType) -> Result<Self, Error> {
        let mut d = std::ptr::null_mut();
        let order = sys::cusparseOrder_t::CUSPARSE_ORDER_COL;
        // SAFETY: the caller's block.
        check("cusparseCreateDnMat", unsafe { sys::cusparseCreateDnMat(&mut d, rows, cols, ld.max(1), ptr as *mut c_void, ty, order) })?;
        Ok(Self(d))
    }

    /// The raw descriptor (valid while `self` lives).
    pub fn raw(&self) -> sys::cusparseDnMatDescr_t {
        self.0
    }
}

impl Drop for DnMat {
    fn drop(&mut self) {
        // SAFETY: a live descriptor, destroyed once.
        let _ = unsafe { sys::cusparseDestroyDnMat(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_become_errors_naming_the_call() {
        assert!(check("x", sys::cusparseStatus_t::CUSPARSE_STATUS_SUCCESS).is_ok());
        assert!(matches!(
            check("cusparseSpMM", sys::cusparseStatus_t::CUSPARSE_STATUS_ALLOC_FAILED),
            Err(Error::OutOfMemory { call: "cusparseSpMM" })
        ));
        match check("cusparseCreate", sys::cusparseStatus_t::CUSPARSE_STATUS_INVALID_VALUE) {
            Err(e @ Error::Status { call: "cusparseCreate", .. }) => assert!(e.to_string().contains("INVALID_VALUE"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn value_widths_map_to_types() {
        assert_eq!(data_type(4), sys::cudaDataType::CUDA_R_32F);
        assert_eq!(data_type(8), sys::cudaDataType::CUDA_R_64F);
        assert_eq!(data_type(16), sys::cudaDataType::CUDA_C_64F);
        assert_eq!(data_type(1), sys::cudaDataType::CUDA_R_8I);
        assert_eq!(data_type(2), sys::cudaDataType::CUDA_R_16F);
    }
}
