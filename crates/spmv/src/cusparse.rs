//! The raw binding behind [`crate::baselines::CuSparseSpmv`]: NVIDIA cuSPARSE's generic `cusparseSpMV` (CSR ALG1 and ALG2, COO ALG1) through
//! cudarc's cuSPARSE bindings, on the plan's matrix and stream. The library is found by
//! `gpu_runtime::vendor::cusparse_library`; a missing one is [`Error::CuSparseUnavailable`].
use std::ffi::c_void;

use gpu_runtime::cudarc::driver::result::memcpy_dtod_async;
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::cusparse::{check, data_type, sys, DnVec, Handle, SpMat};
use gpu_runtime::{Gpu, ScratchBuf};
use sptrans_matrix::DeviceCsrView;

use crate::{Error, Result, SpmvValue};

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
    // Dropped in this order: the descriptors, then the handle.
    vecs: Option<(DnVec, DnVec)>,
    mat: SpMat,
    handle: Handle,
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
        let handle = Handle::new(gpu)?;
        let pad = if a.rows() < crate::baselines::CUSPARSE_SMALL_ROWS {
            // Contents unspecified: the product writes (or, with beta != 0, first copies) the
            // first rows values; the pad is never read back.
            Some(gpu.alloc::<u8>(((a.rows() + PAD_VALUES) * T::BYTES as u64) as usize)?)
        } else {
            None
        };
        let stream = gpu.stream();
        let (rows, cols, nnz) = (a.rows() as i64, a.cols() as i64, a.nnz() as i64);
        let p = a.ptr().device_ptr(stream).0;
        let i = a.idx().device_ptr(stream).0;
        let v = match a.vals() {
            Some(v) => v.device_ptr(stream).0,
            None => return Err(Error::NoValues),
        };
        let ty = data_type(T::BYTES);
        let mat = match (alg, coo_rows) {
            // SAFETY: device arrays of a valid CSR (rows + 1, nnz, nnz), 32-bit indices, which
            // the plan keeps for as long as the descriptor lives.
            (Alg::CsrAlg1 | Alg::CsrAlg2, _) => unsafe { SpMat::csr(rows, cols, nnz, p, i, v, ty)? },
            // SAFETY: the rows, columns and values of the same nonzeros, nnz each, kept as above.
            (Alg::CooAlg1, Some(r)) => unsafe { SpMat::coo(rows, cols, nnz, r.device_ptr(stream).0, i, v, ty)? },
            (Alg::CooAlg1, None) => return Err(Error::Runtime(gpu_runtime::Error::Internal("cuSPARSE COO without its row array"))),
        };
        Ok(Self { vecs: None, mat, handle, alg, buffer: ScratchBuf::default(), pad })
    }

    /// Binds the handle to `gpu`'s stream: later products run there.
    pub fn set_stream(&mut self, gpu: &Gpu) -> Result<()> {
        Ok(self.handle.set_stream(gpu)?)
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
        let (handle, mat) = (self.handle.raw(), self.mat.raw());
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
        let ty = data_type(T::BYTES);
        let (vx, vy) = match self.vecs.as_mut() {
            Some((vx, vy)) => {
                // SAFETY: the new vectors have the descriptors' lengths (the caller's contract).
                unsafe {
                    vx.set_values(x)?;
                    vy.set_values(y)?;
                }
                (vx.raw(), vy.raw())
            }
            None => {
                // SAFETY: device vectors of cols and rows values.
                let made = unsafe { (DnVec::new(cols as i64, x, ty)?, DnVec::new(rows as i64, y, ty)?) };
                let raw = (made.0.raw(), made.1.raw());
                self.vecs = Some(made);
                raw
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
        check("cusparseSpMV_bufferSize", unsafe { sys::cusparseSpMV_bufferSize(handle, op, a, mat, vx, b, vy, ty, alg, &mut bytes) })?;
        // Carved regions are aligned: reserve the aligned size.
        let mut buf = self.buffer.scratch(gpu, gpu_runtime::scratch::aligned(bytes as u64))?;
        let ptr = buf.take(bytes as u64)? as *mut c_void;
        // SAFETY: as above, with a buffer of the size cuSPARSE asked for.
        check("cusparseSpMV", unsafe { sys::cusparseSpMV(handle, op, a, mat, vx, b, vy, ty, alg, ptr) })?;
        if y != user_y {
            // SAFETY: the pad's first rows values into the caller's y (rows values).
            unsafe { memcpy_dtod_async(user_y, y, y_bytes, stream.cu_stream()) }
                .map_err(gpu_runtime::Error::driver("copying cuSPARSE's padded y out"))?;
        }
        Ok(())
    }
}
