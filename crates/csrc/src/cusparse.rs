//! The baseline: NVIDIA cuSPARSE's generic products on CSR through cudarc's bindings, on the
//! plan's matrix and stream: `cusparseSpMV` for one vector and `cusparseSpMM` (column-major
//! dense blocks) for more, with `CUSPARSE_OPERATION_NON_TRANSPOSE` or `_TRANSPOSE` on `A`, the
//! default algorithms. The library is found by `gpu_runtime::vendor::cusparse_library`; a missing
//! one is [`Error::CuSparseUnavailable`].
use std::ffi::c_void;

use gpu_runtime::cudarc::driver::DevicePtr;
use gpu_runtime::cusparse::{check, data_type, sys, DnMat, DnVec, Handle, SpMat};
use gpu_runtime::{DenseView, DenseViewMut, Gpu, Scratch, ScratchBuf};
use sptrans_matrix::device::DeviceCsr;

use crate::{dense, launch, Error, Op, Products, Result, SpmvValue};

/// cuSPARSE's products on a CSR matrix it holds (the baseline of the benchmark and a third
/// implementation for the tests). `Aᵀ` products use cuSPARSE's transposed operation (atomic:
/// not bit-reproducible).
pub struct CuSparseProducts<T: SpmvValue> {
    gpu: Gpu,
    /// The descriptor points into `a`: both `Some` until `into_matrix` drops it first.
    mat: Option<SpMat>,
    handle: Handle,
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
        let handle = Handle::new(gpu)?;
        let stream = gpu.stream();
        let (rows, cols, nnz) = (a.rows() as i64, a.cols() as i64, a.nnz() as i64);
        let p = a.ptr().device_ptr(stream).0;
        let i = a.idx().device_ptr(stream).0;
        let v = match a.vals() {
            Some(v) => v.device_ptr(stream).0,
            None => return Err(Error::NoValues),
        };
        let k = launch::Kernels::<T>::load(gpu)?;
        // SAFETY: device arrays of a valid CSR (rows + 1, nnz, nnz), 32-bit indices, owned by the
        // plan for as long as the descriptor lives.
        let mat = unsafe { SpMat::csr(rows, cols, nnz, p, i, v, data_type(T::BYTES))? };
        Ok(Self { gpu: gpu.clone(), mat: Some(mat), handle, buffer: ScratchBuf::default(), k, rows: a.rows(), cols: a.cols(), a: Some(a) })
    }

    /// Gives the matrix back.
    pub fn into_matrix(mut self) -> DeviceCsr<T> {
        // The descriptor points into the matrix: release it first.
        self.mat = None;
        match self.a.take() {
            Some(a) => a,
            None => unreachable!("the matrix is taken only here"),
        }
    }

    /// A dense-block descriptor of `rows × k`, column-major with leading dimension `ld`.
    ///
    /// # Safety
    /// `ptr` spans `ld · (k − 1) + rows` values of `T`.
    unsafe fn dn_mat(rows: u64, k: usize, ld: u64, ptr: u64) -> Result<DnMat> {
        // SAFETY: the caller's block; ld ≥ max(rows, 1) as cuSPARSE asks (DenseView's rule).
        Ok(unsafe { DnMat::col_major(rows as i64, k as i64, ld as i64, ptr, data_type(T::BYTES))? })
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
        let handle = self.handle.raw();
        let Some(mat) = self.mat.as_ref().map(SpMat::raw) else {
            return Err(Error::Runtime(gpu_runtime::Error::Internal("cuSPARSE products after the matrix was taken")));
        };
        let ty = data_type(T::BYTES);
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
            // SAFETY: device vectors of xn and on values (checked).
            let (vx, vy) = unsafe { (DnVec::new(xn as i64, xp, ty)?, DnVec::new(on as i64, yp, ty)?) };
            let alg = sys::cusparseSpMVAlg_t::CUSPARSE_SPMV_ALG_DEFAULT;
            // SAFETY: live handle and descriptors; host scalars of the compute type.
            check("cusparseSpMV_bufferSize", unsafe {
                sys::cusparseSpMV_bufferSize(handle, sop, a, mat, vx.raw(), b, vy.raw(), ty, alg, &mut bytes)
            })?;
            let mut buf = self.buffer.scratch(&self.gpu, gpu_runtime::scratch::aligned(bytes as u64))?;
            let ptr = buf.take(bytes as u64)? as *mut c_void;
            // SAFETY: as above, with a buffer of the size cuSPARSE asked for.
            Ok(check("cusparseSpMV", unsafe { sys::cusparseSpMV(handle, sop, a, mat, vx.raw(), b, vy.raw(), ty, alg, ptr) })?)
        } else {
            // SAFETY: x and out span k vectors of xn and on values at their leading dimensions
            // (checked).
            let (mx, my) = unsafe { (Self::dn_mat(xn, k, xld, xp)?, Self::dn_mat(on, k, yld, yp)?) };
            let nt = sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;
            let alg = sys::cusparseSpMMAlg_t::CUSPARSE_SPMM_ALG_DEFAULT;
            // SAFETY: live handle and descriptors; host scalars of the compute type.
            check("cusparseSpMM_bufferSize", unsafe {
                sys::cusparseSpMM_bufferSize(handle, sop, nt, a, mat, mx.raw(), b, my.raw(), ty, alg, &mut bytes)
            })?;
            let mut buf = self.buffer.scratch(&self.gpu, gpu_runtime::scratch::aligned(bytes as u64))?;
            let ptr = buf.take(bytes as u64)? as *mut c_void;
            // SAFETY: as above, with a buffer of the size cuSPARSE asked for.
            Ok(check("cusparseSpMM", unsafe { sys::cusparseSpMM(handle, sop, nt, a, mat, mx.raw(), b, my.raw(), ty, alg, ptr) })?)
        }
    }
}
