//! The baseline: NVIDIA cuSPARSE `cusparseCsr2cscEx2` (default algorithm, ALG1), through cudarc's
//! cuSPARSE bindings. The library is found by `gpu_runtime::vendor::cusparse_library` (the
//! loader's usual search, or `SPTRANS_CUSPARSE_LIB`); a missing library is an error value
//! ([`Error::CuSparseUnavailable`]), never a panic.
use std::ffi::c_void;

use gpu_runtime::cusparse::{check, data_type, sys, Handle};
use gpu_runtime::Gpu;

use crate::Result;

/// A cuSPARSE handle bound to the GPU's stream (owned by one `CuSparseTranspose`, whose calls
/// take `&mut self`).
pub(crate) struct CuSparse {
    handle: Handle,
}

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
        let fit = |what, v: u64| i32::try_from(v).map_err(|_| crate::Error::TooLarge { what, len: v, max: i32::MAX as u64 });
        Ok((fit("m (cuSPARSE)", self.m)?, fit("n (cuSPARSE)", self.n)?, fit("nnz (cuSPARSE)", self.nnz)?))
    }

    fn kind(&self) -> (sys::cudaDataType, sys::cusparseAction_t) {
        // csr2cscEx2 moves value bits: only the width matters (4-byte integers travel as f32,
        // 8-byte ones as f64).
        let action =
            if self.value_bytes == 0 { sys::cusparseAction_t::CUSPARSE_ACTION_SYMBOLIC } else { sys::cusparseAction_t::CUSPARSE_ACTION_NUMERIC };
        (data_type(self.value_bytes), action)
    }
}

impl CuSparse {
    pub(crate) fn new(gpu: &Gpu) -> Result<Self> {
        Ok(Self { handle: Handle::new(gpu)? })
    }

    /// `cusparseGetVersion`.
    pub(crate) fn version(&self) -> Result<i32> {
        Ok(self.handle.version()?)
    }

    /// Workspace bytes `csr2cscEx2` asks for.
    pub(crate) fn buffer_size(&self, c: &Call) -> Result<u64> {
        let (m, n, nnz) = c.ints()?;
        let (ty, action) = c.kind();
        let mut bytes = 0usize;
        // SAFETY: the query reads only the sizes and types (pointers may be anything).
        check("cusparseCsr2cscEx2_bufferSize", unsafe {
            sys::cusparseCsr2cscEx2_bufferSize(
                self.handle.raw(),
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
                self.handle.raw(),
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
        })?;
        Ok(())
    }
}
