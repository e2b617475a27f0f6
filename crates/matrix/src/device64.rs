//! A CSR matrix in device memory with a 64-bit row pointer: more than `u32::MAX` nonzeros (a
//! graph of billions of edges), or a caller's `int64` CSR (PyTorch's default, SciPy's past
//! 2³¹) taken as it is. Column indices stay `u32`, the narrowest type that holds the column
//! count (at most [`crate::device::MAX_DIM`]): a caller's `i64` or `i32` column
//! indices are narrowed on the GPU by [`DeviceCsr64::from_signed_parts`].
use gpu_runtime::check::SignedIndex;
use gpu_runtime::cudarc::driver::{CudaSlice, DeviceRepr};
use gpu_runtime::{AnyBits, Gpu};

use crate::formats::Csr;
use crate::{Error, Result, Value};

/// A CSR matrix in device memory with a `u64` row pointer and `u32` column indices; `vals` is
/// absent for pattern matrices.
///
/// Invariants, kept by every safe constructor: `rows, cols <= MAX_DIM`; the row pointer has
/// `rows + 1` entries, starts at 0, never decreases and ends at `nnz`; every column index is
/// below `cols`; the values, when present, number `nnz`. Column indices inside a row need not
/// be sorted or unique. Built by [`DeviceCsr64::upload`], [`DeviceCsr64::from_parts`] (validated
/// on the GPU), [`DeviceCsr64::from_signed_parts`] and the `unsafe`
/// [`DeviceCsr64::from_parts_unchecked`].
pub struct DeviceCsr64<T: DeviceRepr> {
    rows: u64,
    cols: u64,
    ptr: CudaSlice<u64>,
    idx: CudaSlice<u32>,
    vals: Option<CudaSlice<T>>,
}

/// The buffers of a [`DeviceCsr64`] with no promise about their contents (as
/// [`DeviceCsrParts`](crate::device::DeviceCsrParts) for the 32-bit matrix).
pub struct DeviceCsr64Parts<T: DeviceRepr> {
    /// Row pointer (`rows + 1` words).
    pub ptr: CudaSlice<u64>,
    /// Column indices (`nnz` words).
    pub idx: CudaSlice<u32>,
    /// Values (`nnz`), absent for pattern matrices.
    pub vals: Option<CudaSlice<T>>,
}

impl<T: AnyBits> DeviceCsr64Parts<T> {
    /// Buffers for a `rows × _` matrix with `nnz` nonzeros (contents unspecified), with values
    /// when `with_values`.
    ///
    /// # Errors
    /// Out of memory ([`Error::is_out_of_memory`]).
    pub fn alloc(gpu: &Gpu, rows: u64, nnz: u64, with_values: bool) -> Result<Self> {
        let len = |n: u64| usize::try_from(n).map_err(|_| Error::TooLarge { what: "device CSR length", len: n, max: usize::MAX as u64 });
        Ok(Self { ptr: gpu.alloc(len(rows + 1)?)?, idx: gpu.alloc(len(nnz)?)?, vals: if with_values { Some(gpu.alloc(len(nnz)?)?) } else { None } })
    }
}

impl<T: DeviceRepr> DeviceCsr64<T> {
    /// Number of rows.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> u64 {
        self.cols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> u64 {
        self.idx.len() as u64
    }

    /// The row pointer (`rows + 1` words).
    pub fn ptr(&self) -> &CudaSlice<u64> {
        &self.ptr
    }

    /// The column indices (`nnz` words).
    pub fn idx(&self) -> &CudaSlice<u32> {
        &self.idx
    }

    /// The values, `None` for a pattern matrix.
    pub fn vals(&self) -> Option<&CudaSlice<T>> {
        self.vals.as_ref()
    }

    /// Gives the buffers back.
    pub fn into_parts(self) -> DeviceCsr64Parts<T> {
        DeviceCsr64Parts { ptr: self.ptr, idx: self.idx, vals: self.vals }
    }

    /// A `rows × cols` matrix of the caller's device buffers, validated on the GPU (synchronizes
    /// once): lengths, sizes, the row pointer (starts at 0, never decreases, ends at `nnz`) and
    /// every column index (below `cols`). Errors name the first bad position.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLarge`], [`Error::BadPointers`],
    /// [`Error::IndexOutOfRange`], device errors.
    pub fn from_parts(gpu: &Gpu, rows: u64, cols: u64, parts: DeviceCsr64Parts<T>) -> Result<Self> {
        check_shape(rows, cols, &parts)?;
        crate::device::check_structure(gpu, cols, &parts.ptr, &parts.idx)?;
        // SAFETY: every invariant was checked above.
        Ok(unsafe { Self::from_parts_unchecked(rows, cols, parts) })
    }

    /// A `rows × cols` matrix from a caller's `i64` row pointer and `i32` or `i64` column
    /// indices (PyTorch's `int64` CSR tensors): the pointer is taken as `u64`, the indices
    /// narrowed to `u32`, on the GPU (new buffers; the inputs are left as they are), each entry
    /// checked as it is converted with what [`DeviceCsr64::from_parts`] checks (one read of each
    /// array, one synchronization: `gpu_runtime::check::signed_csr`). A negative entry, or an
    /// index above `u32::MAX`, is an error naming the array and its position; pointer faults
    /// are reported before index faults.
    ///
    /// # Errors
    /// [`Error::BadIndexValue`], then as [`DeviceCsr64::from_parts`]; out of memory.
    pub fn from_signed_parts<S: SignedIndex>(
        gpu: &Gpu,
        rows: u64,
        cols: u64,
        ptr: &CudaSlice<i64>,
        idx: &CudaSlice<S>,
        vals: Option<CudaSlice<T>>,
    ) -> Result<Self> {
        let (ptr, idx, vals) = crate::device::signed_parts::<i64, S, u64, T>(gpu, rows, cols, ptr, idx, vals)?;
        let parts = DeviceCsr64Parts { ptr, idx, vals };
        check_shape(rows, cols, &parts)?;
        // SAFETY: signed_parts checked every invariant on the GPU (pointer from 0 to nnz, never
        // decreasing; indices below cols); sizes checked just above.
        Ok(unsafe { Self::from_parts_unchecked(rows, cols, parts) })
    }

    /// A `rows × cols` matrix of the caller's device buffers, without validation.
    ///
    /// # Safety
    /// The buffers must satisfy [`DeviceCsr64`]'s invariants (`rows, cols <= MAX_DIM`, `ptr` of
    /// `rows + 1` nondecreasing words from 0 to `idx.len()`, every index below `cols`, `vals`
    /// of `idx.len()` items when present) once the work already enqueued on the stream that
    /// wrote them completes. Kernels index with them unchecked.
    pub unsafe fn from_parts_unchecked(rows: u64, cols: u64, parts: DeviceCsr64Parts<T>) -> Self {
        Self { rows, cols, ptr: parts.ptr, idx: parts.idx, vals: parts.vals }
    }
}

impl<T: Value + AnyBits> DeviceCsr64<T> {
    /// Uploads `a` (already valid: no device check); its `u64` column indices are narrowed to
    /// `u32` on the host.
    ///
    /// # Errors
    /// [`Error::TooLarge`] for more than [`crate::device::MAX_DIM`] rows or columns, device errors (out of
    /// memory).
    pub fn upload(gpu: &Gpu, a: &Csr<u64, T>) -> Result<Self> {
        Self::upload_parts(gpu, a, Some(a.vals()))
    }

    fn upload_parts<U: Value>(gpu: &Gpu, a: &Csr<u64, U>, vals: Option<&[T]>) -> Result<Self> {
        crate::device::check_lengths(a.rows(), a.cols(), a.ptr().len(), a.nnz() as usize, None, u64::MAX)?;
        // Every index is below cols <= MAX_DIM (a validated Csr), so it fits u32.
        let idx: Vec<u32> = a.idx().iter().map(|&j| j as u32).collect();
        let parts = DeviceCsr64Parts { ptr: gpu.upload(a.ptr())?, idx: gpu.upload(&idx)?, vals: vals.map(|v| gpu.upload(v)).transpose()? };
        check_shape(a.rows(), a.cols(), &parts)?;
        // SAFETY: `a` is a validated `Csr`, copied as is (indices narrowed without loss); sizes
        // checked.
        Ok(unsafe { Self::from_parts_unchecked(a.rows(), a.cols(), parts) })
    }

    /// Downloads back into a validated [`Csr`] with `u64` indices (values of one for a pattern
    /// matrix).
    ///
    /// # Errors
    /// Device errors.
    pub fn download(&self, gpu: &Gpu) -> Result<Csr<u64, T>> {
        let vals = match &self.vals {
            Some(v) => gpu.download(v)?,
            None => vec![T::one(); self.idx.len()],
        };
        let idx: Vec<u64> = gpu.download(&self.idx)?.into_iter().map(u64::from).collect();
        Csr::try_new(self.rows, self.cols, gpu.download(&self.ptr)?, idx, vals)
    }
}

impl DeviceCsr64<u8> {
    /// Uploads the structure of a pattern matrix.
    ///
    /// # Errors
    /// As [`DeviceCsr64::upload`].
    pub fn upload_pattern(gpu: &Gpu, a: &Csr<u64, ()>) -> Result<Self> {
        Self::upload_parts(gpu, a, None)
    }
}

fn check_shape<T: DeviceRepr>(rows: u64, cols: u64, p: &DeviceCsr64Parts<T>) -> Result<()> {
    crate::device::check_lengths(rows, cols, p.ptr.len(), p.idx.len(), p.vals.as_ref().map(|v| v.len()), u64::MAX)
}
