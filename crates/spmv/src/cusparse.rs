//! The raw binding behind [`crate::baselines::CuSparseSpmv`]: NVIDIA cuSPARSE's generic `cusparseSpMV` (CSR ALG1 and ALG2, COO ALG1) through
//! cudarc's cuSPARSE bindings, on the plan's matrix and stream. The library is found by
//! `gpu_runtime::vendor::cusparse_library`; a missing one is [`Error::CuSparseUnavailable`].
use std::ffi::c_void;

use cudarc::cusparse::sys;
use gpu_runtime::cudarc::driver::result::memcpy_dtod_async;
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::{Gpu, ScratchBuf};
use sptrans_matrix::DeviceCsrView;

use crate::{Error, Result, SpmvValue};

fn check(call: &'static str, status: sys::cusparseStatus_t) -> Result<()> {
    if status == sys::cusparseStatus_t::CUSPARSE_STATUS_ALLOC_FAILED {
        return Err(Error::Runtime(gpu_runtime::Error::OutOfMemory { bytes: 0, what: call }));
    }
    status.result().map_err(|e| Error::CuSparse { call, status: format!("{:?}", e.0) })
}

fn value_type<T: SpmvValue>() -> sys::cudaDataType {
    if T::BYTES == 8 {
        sys::cudaDataType::CUDA_R_64F
    } else {
        sys::cudaDataType::CUDA_R_32F
    }
}

/// Which cuSPARSE algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alg {
    CsrAlg1,
    CsrAlg2,
    CooAlg1,
}

/// Values past `y`'s end in the padded `y` of a small matrix ([`crate::baselines::CUSPARSE_SMALL_ROWS`]):
/// cuSPARSE's stray write lands one value past the end.
const PAD_VALUES: u64 = 64;

/// A handle bound to the plan's stream and the matrix's descriptor; the vectors' descriptors
/// and the buffer are made at the first product and reused.
pub(crate) struct CuSparseHandle {
    handle: sys::cusparseHandle_t,
    mat: sys::cusparseSpMatDescr_t,
    vecs: Option<(sys::cusparseDnVecDescr_t, sys::cusparseDnVecDescr_t)>,
    alg: Alg,
    buffer: ScratchBuf,
    /// For a matrix of fewer than [`crate::baselines::CUSPARSE_SMALL_ROWS`] rows, the `y`
    /// cuSPARSE writes: `rows + PAD_VALUES` values, copied from and to the caller's `y` around
    /// each product, so that cuSPARSE's write past `y` under concurrent use stays in memory of
    /// ours (`benches/experiments/2026-11-27-cusparse-spmv-memcheck.md`).
    pad: Option<CudaSlice<u8>>,
}

impl CuSparseHandle {
    /// A handle on `gpu`'s stream and a descriptor of `a` (CSR, or COO with `coo_rows`).
    ///
    /// The descriptor points into `a` and `coo_rows`, which the plan keeps for as long as this
    /// lives.
    pub fn new<T: SpmvValue>(gpu: &Gpu, a: &DeviceCsrView<'_, T>, coo_rows: Option<&CudaSlice<u32>>, alg: Alg) -> Result<Self> {
        gpu_runtime::vendor::cusparse_library().map_err(|e| Error::CuSparseUnavailable(e.to_string()))?;
        gpu.context().bind_to_thread().map_err(gpu_runtime::Error::driver("binding the context for cuSPARSE"))?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: the library is loaded; cusparseCreate writes one handle.
        check("cusparseCreate", unsafe { sys::cusparseCreate(&mut handle) })?;
        let mut s = Self { handle, mat: std::ptr::null_mut(), vecs: None, alg, buffer: ScratchBuf::default(), pad: None };
        s.set_stream(gpu)?;
        if a.rows() < crate::baselines::CUSPARSE_SMALL_ROWS {
            // Contents unspecified: the product writes (or, with beta != 0, first copies) the
            // first rows values; the pad is never read back.
            s.pad = Some(gpu.alloc::<u8>(((a.rows() + PAD_VALUES) * T::BYTES as u64) as usize)?);
        }
        let stream = gpu.stream();
        let (rows, cols, nnz) = (a.rows() as i64, a.cols() as i64, a.nnz() as i64);
        let p = a.ptr().device_ptr(stream).0 as *mut c_void;
        let i = a.idx().device_ptr(stream).0 as *mut c_void;
        let v = match a.vals() {
            Some(v) => v.device_ptr(stream).0 as *mut c_void,
            None => return Err(Error::NoValues),
        };
        let (i32i, base) = (sys::cusparseIndexType_t::CUSPARSE_INDEX_32I, sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO);
        match (alg, coo_rows) {
            // SAFETY: device arrays of a valid CSR (rows + 1, nnz, nnz), 32-bit indices.
            (Alg::CsrAlg1 | Alg::CsrAlg2, _) => check("cusparseCreateCsr", unsafe {
                sys::cusparseCreateCsr(&mut s.mat, rows, cols, nnz, p, i, v, i32i, i32i, base, value_type::<T>())
            })?,
            (Alg::CooAlg1, Some(r)) => {
                let r = r.device_ptr(stream).0 as *mut c_void;
                // SAFETY: the rows, columns and values of the same nonzeros, nnz each.
                check("cusparseCreateCoo", unsafe { sys::cusparseCreateCoo(&mut s.mat, rows, cols, nnz, r, i, v, i32i, base, value_type::<T>()) })?;
            }
            (Alg::CooAlg1, None) => return Err(Error::Runtime(gpu_runtime::Error::Internal("cuSPARSE COO without its row array"))),
        }
        Ok(s)
    }

    /// Binds the handle to `gpu`'s stream: later products run there.
    pub fn set_stream(&mut self, gpu: &Gpu) -> Result<()> {
        gpu.context().bind_to_thread().map_err(gpu_runtime::Error::driver("binding the context for cuSPARSE"))?;
        // SAFETY: a live handle and the GPU's live stream.
        check("cusparseSetStream", unsafe { sys::cusparseSetStream(self.handle, gpu.stream().cu_stream() as sys::cudaStream_t) })
    }

    /// [`CuSparseHandle::apply`] on views of the vectors (`x` of `cols` values, `y` of `rows`).
    ///
    /// # Safety
    /// As [`CuSparseHandle::apply`]: the matrix the handle was made for is alive and unchanged.
    pub(crate) unsafe fn apply_views<T: SpmvValue>(
        &mut self,
        gpu: &Gpu,
        alpha: T,
        x: &gpu_runtime::DeviceView<'_, T>,
        beta: T,
        y: &mut gpu_runtime::DeviceViewMut<'_, T>,
    ) -> Result<()> {
        let (rows, cols) = (y.len() as u64, x.len() as u64);
        // SAFETY: forwarded; the views' addresses and lengths.
        unsafe { self.apply(gpu, rows, cols, alpha, x.addr(), beta, y.addr()) }
    }

    /// `y = alpha * A * x + beta * y` through `cusparseSpMV`.
    ///
    /// # Safety
    /// `x` and `y` are device vectors of `cols` and `rows` values of `T` (the descriptor's
    /// matrix's), live until the work completes.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn apply<T: SpmvValue>(&mut self, gpu: &Gpu, rows: u64, cols: u64, alpha: T, x: u64, beta: T, y: u64) -> Result<()> {
        gpu.context().bind_to_thread().map_err(gpu_runtime::Error::driver("binding the context for cuSPARSE"))?;
        let stream = gpu.stream();
        let y_bytes = rows as usize * T::BYTES;
        let user_y = y;
        let (y, _pad_guard) = match self.pad.as_mut() {
            Some(pad) => {
                let (addr, guard) = pad.device_ptr_mut(stream);
                if beta != T::default() {
                    // SAFETY: y holds rows values (the caller's contract); the pad rows + PAD_VALUES.
                    unsafe { memcpy_dtod_async(addr, user_y, y_bytes, stream.cu_stream()) }
                        .map_err(gpu_runtime::Error::driver("copying y into cuSPARSE's padded y"))?;
                }
                (addr, Some(guard))
            }
            None => (y, None),
        };
        let (vx, vy) = match self.vecs {
            Some((vx, vy)) => {
                // SAFETY: live descriptors; the new values have the descriptors' sizes.
                unsafe {
                    check("cusparseDnVecSetValues", sys::cusparseDnVecSetValues(vx, x as *mut c_void))?;
                    check("cusparseDnVecSetValues", sys::cusparseDnVecSetValues(vy, y as *mut c_void))?;
                }
                (vx, vy)
            }
            None => {
                let (mut vx, mut vy) = (std::ptr::null_mut(), std::ptr::null_mut());
                // SAFETY: device vectors of cols and rows values.
                unsafe {
                    check("cusparseCreateDnVec", sys::cusparseCreateDnVec(&mut vx, cols as i64, x as *mut c_void, value_type::<T>()))?;
                    check("cusparseCreateDnVec", sys::cusparseCreateDnVec(&mut vy, rows as i64, y as *mut c_void, value_type::<T>()))?;
                }
                self.vecs = Some((vx, vy));
                (vx, vy)
            }
        };
        let alg = match self.alg {
            Alg::CsrAlg1 => sys::cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG1,
            Alg::CsrAlg2 => sys::cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG2,
            Alg::CooAlg1 => sys::cusparseSpMVAlg_t::CUSPARSE_SPMV_COO_ALG1,
        };
        let op = sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;
        let (a, b) = (&alpha as *const T as *const c_void, &beta as *const T as *const c_void);
        let mut bytes = 0usize;
        // SAFETY: live handle and descriptors; host scalars of the compute type.
        check("cusparseSpMV_bufferSize", unsafe {
            sys::cusparseSpMV_bufferSize(self.handle, op, a, self.mat, vx, b, vy, value_type::<T>(), alg, &mut bytes)
        })?;
        // Carved regions are aligned: reserve the aligned size.
        let mut buf = self.buffer.scratch(gpu, gpu_runtime::scratch::aligned(bytes as u64))?;
        let ptr = buf.take(bytes as u64)? as *mut c_void;
        // SAFETY: as above, with a buffer of the size cuSPARSE asked for.
        check("cusparseSpMV", unsafe { sys::cusparseSpMV(self.handle, op, a, self.mat, vx, b, vy, value_type::<T>(), alg, ptr) })?;
        if y != user_y {
            // SAFETY: the pad's first rows values into the caller's y (rows values).
            unsafe { memcpy_dtod_async(user_y, y, y_bytes, stream.cu_stream()) }
                .map_err(gpu_runtime::Error::driver("copying cuSPARSE's padded y out"))?;
        }
        Ok(())
    }
}

impl Drop for CuSparseHandle {
    fn drop(&mut self) {
        // SAFETY: live descriptors and handle, each destroyed once.
        unsafe {
            if let Some((vx, vy)) = self.vecs.take() {
                let _ = sys::cusparseDestroyDnVec(vx);
                let _ = sys::cusparseDestroyDnVec(vy);
            }
            if !self.mat.is_null() {
                let _ = sys::cusparseDestroySpMat(self.mat);
            }
            let _ = sys::cusparseDestroy(self.handle);
        }
    }
}
