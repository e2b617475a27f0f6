//! The baseline: NVIDIA cuSPARSE's generic products on CSR through cudarc's bindings, on the
//! plan's matrix and stream: `cusparseSpMV` for one vector and `cusparseSpMM` (column-major
//! dense blocks) for more, with `CUSPARSE_OPERATION_NON_TRANSPOSE` or `_TRANSPOSE` on `A`, the
//! default algorithms. The library is found by `gpu_runtime::vendor::cusparse_library`; a missing
//! one is [`Error::CuSparseUnavailable`].
use std::ffi::c_void;

use cudarc::cusparse::sys;
use gpu_runtime::cudarc::driver::DevicePtr;
use gpu_runtime::{DenseView, DenseViewMut, Gpu, Scratch, ScratchBuf};
use sptrans_matrix::device::DeviceCsr;

use crate::{dense, launch, Error, Op, Products, Result, SpmvValue};

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

/// cuSPARSE's products on a CSR matrix it holds (the baseline of the benchmark and a third
/// implementation for the tests). `Aᵀ` products use cuSPARSE's transposed operation (atomic:
/// not bit-reproducible).
pub struct CuSparseProducts<T: SpmvValue> {
    gpu: Gpu,
    handle: sys::cusparseHandle_t,
    mat: sys::cusparseSpMatDescr_t,
    buffer: ScratchBuf,
    k: launch::Kernels<T>,
    /// Always `Some` until `into_matrix` takes it.
    a: Option<DeviceCsr<T>>,
    rows: u64,
    cols: u64,
}

impl<T: SpmvValue> CuSparseProducts<T> {
    /// A handle on `gpu`'s stream and a descriptor of `a`, which the plan keeps.
    ///
    /// # Errors
    /// [`Error::CuSparseUnavailable`], [`Error::NoValues`], cuSPARSE errors; a matrix with more
    /// than `i32::MAX` rows, columns or nonzeros (cuSPARSE's 32-bit indices) is
    /// [`Error::CuSparse`] naming the size.
    pub fn new(gpu: &Gpu, a: DeviceCsr<T>) -> Result<Self> {
        gpu_runtime::vendor::cusparse_library().map_err(|e| Error::CuSparseUnavailable(e.to_string()))?;
        for (what, n) in [("rows", a.rows()), ("columns", a.cols()), ("nonzeros", a.nnz())] {
            if n > i32::MAX as u64 {
                return Err(Error::CuSparse { call: "cusparseCreateCsr", status: format!("{n} {what}: more than its 32-bit indices hold") });
            }
        }
        gpu.context().bind_to_thread().map_err(gpu_runtime::Error::driver("binding the context for cuSPARSE"))?;
        let stream = gpu.stream();
        let (rows, cols, nnz) = (a.rows() as i64, a.cols() as i64, a.nnz() as i64);
        let p = a.ptr().device_ptr(stream).0 as *mut c_void;
        let i = a.idx().device_ptr(stream).0 as *mut c_void;
        let v = match a.vals() {
            Some(v) => v.device_ptr(stream).0 as *mut c_void,
            None => return Err(Error::NoValues),
        };
        let mut handle = std::ptr::null_mut();
        // SAFETY: the library is loaded; cusparseCreate writes one handle.
        check("cusparseCreate", unsafe { sys::cusparseCreate(&mut handle) })?;
        let k = launch::Kernels::<T>::load(gpu)?;
        let mut s =
            Self { gpu: gpu.clone(), handle, mat: std::ptr::null_mut(), buffer: ScratchBuf::default(), k, rows: a.rows(), cols: a.cols(), a: None };
        // SAFETY: a live handle and the GPU's live stream.
        check("cusparseSetStream", unsafe { sys::cusparseSetStream(s.handle, gpu.stream().cu_stream() as sys::cudaStream_t) })?;
        let (i32i, base) = (sys::cusparseIndexType_t::CUSPARSE_INDEX_32I, sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO);
        // SAFETY: device arrays of a valid CSR (rows + 1, nnz, nnz), 32-bit indices, owned by s.
        check("cusparseCreateCsr", unsafe { sys::cusparseCreateCsr(&mut s.mat, rows, cols, nnz, p, i, v, i32i, i32i, base, value_type::<T>()) })?;
        s.a = Some(a);
        Ok(s)
    }

    /// Gives the matrix back.
    pub fn into_matrix(mut self) -> DeviceCsr<T> {
        // The descriptor points into the matrix: release it first.
        self.release();
        match self.a.take() {
            Some(a) => a,
            None => unreachable!("the matrix is taken only here"),
        }
    }

    fn release(&mut self) {
        // SAFETY: live descriptor and handle, each destroyed once (nulled after).
        unsafe {
            if !self.mat.is_null() {
                let _ = sys::cusparseDestroySpMat(self.mat);
                self.mat = std::ptr::null_mut();
            }
            if !self.handle.is_null() {
                let _ = sys::cusparseDestroy(self.handle);
                self.handle = std::ptr::null_mut();
            }
        }
    }

    /// A dense-block descriptor of `rows × k`, column-major with leading dimension `ld`.
    ///
    /// # Safety
    /// `ptr` spans `ld · (k − 1) + rows` values of `T`.
    unsafe fn dn_mat(rows: u64, k: usize, ld: u64, ptr: u64) -> Result<DnMat> {
        let mut d = std::ptr::null_mut();
        let order = sys::cusparseOrder_t::CUSPARSE_ORDER_COL;
        // SAFETY: the caller's block; ld ≥ max(rows, 1) as cuSPARSE asks (DenseView's rule).
        check("cusparseCreateDnMat", unsafe {
            sys::cusparseCreateDnMat(&mut d, rows as i64, k as i64, ld.max(1) as i64, ptr as *mut c_void, value_type::<T>(), order)
        })?;
        Ok(DnMat(d))
    }
}

/// A dense-matrix descriptor, destroyed on drop.
struct DnMat(sys::cusparseDnMatDescr_t);

impl Drop for DnMat {
    fn drop(&mut self) {
        // SAFETY: a live descriptor, destroyed once.
        unsafe { sys::cusparseDestroyDnMat(self.0) };
    }
}

/// A dense-vector descriptor, destroyed on drop.
struct DnVec(sys::cusparseDnVecDescr_t);

impl Drop for DnVec {
    fn drop(&mut self) {
        // SAFETY: a live descriptor, destroyed once.
        unsafe { sys::cusparseDestroyDnVec(self.0) };
    }
}

crate::inherent_products!(CuSparseProducts);

impl<T: SpmvValue> Products<T> for CuSparseProducts<T> {
    fn rows(&self) -> u64 {
        self.rows
    }

    fn cols(&self) -> u64 {
        self.cols
    }

    /// 0: cuSPARSE takes any leading dimension itself and keeps its own buffer.
    fn workspace_bytes(&self, _op: Op, _k: usize, _packed: bool) -> u64 {
        0
    }

    fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// cuSPARSE's buffer (sized at the first product of a shape; nothing to reserve).
    fn own_scratch(&mut self) -> &mut ScratchBuf {
        &mut self.buffer
    }

    fn reserve(&mut self, _op: Op, _k: usize, _packed: bool) -> Result<()> {
        Ok(())
    }

    fn multiply_with(
        &mut self,
        op: Op,
        alpha: T,
        x: &DenseView<'_, T>,
        beta: T,
        out: &mut DenseViewMut<'_, T>,
        _scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        Products::multiply(self, op, alpha, x, beta, out)
    }

    fn multiply(&mut self, op: Op, alpha: T, x: &DenseView<'_, T>, beta: T, out: &mut DenseViewMut<'_, T>) -> Result<()> {
        let (rows, cols) = (self.rows, self.cols);
        let k = dense::check(rows, cols, op, x, out)?;
        if rows == 0 || cols == 0 {
            // cuSPARSE refuses empty dimensions: out = beta · out (our scale kernel), a column
            // at a time when out is strided.
            return launch::scale_dense(&self.gpu, &self.k, beta, out);
        }
        self.gpu.context().bind_to_thread().map_err(gpu_runtime::Error::driver("binding the context for cuSPARSE"))?;
        let (xp, yp) = (x.data().addr(), out.data_mut().addr());
        let (xld, yld) = (x.ld(), out.ld());
        let (xn, on) = if op == Op::NoTranspose { (cols, rows) } else { (rows, cols) };
        let sop = match op {
            Op::NoTranspose => sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
            Op::Transpose => sys::cusparseOperation_t::CUSPARSE_OPERATION_TRANSPOSE,
        };
        let (a, b) = (&alpha as *const T as *const c_void, &beta as *const T as *const c_void);
        let mut bytes = 0usize;
        if k == 1 {
            let (mut vx, mut vy) = (std::ptr::null_mut(), std::ptr::null_mut());
            // SAFETY: device vectors of xn and on values (checked).
            unsafe {
                check("cusparseCreateDnVec", sys::cusparseCreateDnVec(&mut vx, xn as i64, xp as *mut c_void, value_type::<T>()))?;
                check("cusparseCreateDnVec", sys::cusparseCreateDnVec(&mut vy, on as i64, yp as *mut c_void, value_type::<T>()))?;
            }
            let (vx, vy) = (DnVec(vx), DnVec(vy));
            let alg = sys::cusparseSpMVAlg_t::CUSPARSE_SPMV_ALG_DEFAULT;
            // SAFETY: live handle and descriptors; host scalars of the compute type.
            check("cusparseSpMV_bufferSize", unsafe {
                sys::cusparseSpMV_bufferSize(self.handle, sop, a, self.mat, vx.0, b, vy.0, value_type::<T>(), alg, &mut bytes)
            })?;
            let mut buf = self.buffer.scratch(&self.gpu, gpu_runtime::scratch::aligned(bytes as u64))?;
            let ptr = buf.take(bytes as u64)? as *mut c_void;
            // SAFETY: as above, with a buffer of the size cuSPARSE asked for.
            check("cusparseSpMV", unsafe { sys::cusparseSpMV(self.handle, sop, a, self.mat, vx.0, b, vy.0, value_type::<T>(), alg, ptr) })
        } else {
            // SAFETY: x and out span k vectors of xn and on values at their leading dimensions
            // (checked).
            let (mx, my) = unsafe { (Self::dn_mat(xn, k, xld, xp)?, Self::dn_mat(on, k, yld, yp)?) };
            let nt = sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;
            let alg = sys::cusparseSpMMAlg_t::CUSPARSE_SPMM_ALG_DEFAULT;
            // SAFETY: live handle and descriptors; host scalars of the compute type.
            check("cusparseSpMM_bufferSize", unsafe {
                sys::cusparseSpMM_bufferSize(self.handle, sop, nt, a, self.mat, mx.0, b, my.0, value_type::<T>(), alg, &mut bytes)
            })?;
            let mut buf = self.buffer.scratch(&self.gpu, gpu_runtime::scratch::aligned(bytes as u64))?;
            let ptr = buf.take(bytes as u64)? as *mut c_void;
            // SAFETY: as above, with a buffer of the size cuSPARSE asked for.
            check("cusparseSpMM", unsafe { sys::cusparseSpMM(self.handle, sop, nt, a, self.mat, mx.0, b, my.0, value_type::<T>(), alg, ptr) })
        }
    }
}

impl<T: SpmvValue> Drop for CuSparseProducts<T> {
    fn drop(&mut self) {
        self.release();
    }
}
