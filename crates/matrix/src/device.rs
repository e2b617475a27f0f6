//! Device counterparts: a CSR matrix in device memory that keeps the invariants of [`Csr`], so
//! kernels may index with its pointers and column indices without bounds checks. One type for
//! both pointer widths: `DeviceCsr<T>` (`u32`, the default) and `DeviceCsr<T, u64>`
//! ([`crate::device64::DeviceCsr64`]: more than `u32::MAX` nonzeros, or a caller's `int64` CSR
//! taken as it is). Column indices are `u32` either way, the narrowest type that holds the
//! column count (at most [`MAX_DIM`]).
use std::borrow::Cow;

use gpu_runtime::check::{OffsetWord, SignedIndex};
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr};
use gpu_runtime::{AnyBits, Gpu, Scratch};

use crate::formats::Csr;
use crate::{Error, Result, Value};
use num_complex::Complex64;

/// Largest row or column count of a [`DeviceCsr`] (32-bit indices; the row pointer has
/// `rows + 1` entries): `u32::MAX - 1`.
pub const MAX_DIM: u64 = u32::MAX as u64 - 1;

/// Most nonzeros of a [`DeviceCsr`] with a `u32` pointer: `u32::MAX - 1` (with a `u64` pointer:
/// `u64::MAX`; [`PointerWord::MAX_NNZ`]).
pub const MAX_NNZ: u64 = u32::MAX as u64 - 1;

/// The word of a device CSR's row pointer, `u32` or `u64`: a host index type ([`crate::Index`])
/// and a word the GPU checks take ([`OffsetWord`]), with how a host matrix's column indices of
/// that type become the device's `u32` ones and back.
pub trait PointerWord: OffsetWord + crate::Index {
    /// Most nonzeros a pointer of this word addresses.
    const MAX_NNZ: u64;
    /// A validated host matrix's column indices (each below `cols <= MAX_DIM`) as `u32`.
    fn narrow_indices(idx: &[Self]) -> Cow<'_, [u32]>;
    /// Device column indices as this word.
    fn widen_indices(idx: Vec<u32>) -> Vec<Self>;
}

impl PointerWord for u32 {
    const MAX_NNZ: u64 = MAX_NNZ;
    fn narrow_indices(idx: &[u32]) -> Cow<'_, [u32]> {
        Cow::Borrowed(idx)
    }
    fn widen_indices(idx: Vec<u32>) -> Vec<u32> {
        idx
    }
}

impl PointerWord for u64 {
    const MAX_NNZ: u64 = u64::MAX;
    fn narrow_indices(idx: &[u64]) -> Cow<'_, [u32]> {
        // Every index is below cols <= MAX_DIM (a validated Csr), so it fits u32.
        Cow::Owned(idx.iter().map(|&j| j as u32).collect())
    }
    fn widen_indices(idx: Vec<u32>) -> Vec<u64> {
        idx.into_iter().map(u64::from).collect()
    }
}

/// A CSR matrix in device memory with a row pointer of `O` (`u32` by default, or `u64`) and
/// `u32` column indices; `vals` is absent for pattern matrices.
///
/// Invariants, kept by every safe constructor: `rows, cols <= MAX_DIM`, `nnz <=
/// O::MAX_NNZ` ([`PointerWord`]); the row
/// pointer has `rows + 1` entries, starts at 0, never decreases and ends at `nnz`; every column
/// index is below `cols`; the values, when present, number `nnz`. Column indices inside a row
/// need not be sorted or unique. The fields are private: [`DeviceCsr::upload`] (from a validated
/// host matrix), [`DeviceCsr::from_parts`] (the caller's device buffers, validated on the GPU)
/// and the `unsafe` [`DeviceCsr::from_parts_unchecked`] build one; the accessors lend the
/// buffers read-only, and [`DeviceCsr::into_parts`] gives them back.
pub struct DeviceCsr<T: DeviceRepr, O: DeviceRepr = u32> {
    rows: u64,
    cols: u64,
    ptr: CudaSlice<O>,
    idx: CudaSlice<u32>,
    vals: Option<CudaSlice<T>>,
}

/// The buffers of a device CSR with no promise about their contents: what
/// [`DeviceCsr::into_parts`] returns, and what a producer (a transposer) fills and hands to
/// [`DeviceCsr::from_parts`] or, having written a valid matrix itself,
/// [`DeviceCsr::from_parts_unchecked`].
pub struct DeviceCsrParts<T: DeviceRepr, O: DeviceRepr = u32> {
    /// Row pointer (`rows + 1` words).
    pub ptr: CudaSlice<O>,
    /// Column indices (`nnz` words).
    pub idx: CudaSlice<u32>,
    /// Values (`nnz`), absent for pattern matrices.
    pub vals: Option<CudaSlice<T>>,
}

impl<T: AnyBits, O: PointerWord> DeviceCsrParts<T, O> {
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

impl<T: DeviceRepr, O: PointerWord> DeviceCsr<T, O> {
    /// Rows.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Columns.
    pub fn cols(&self) -> u64 {
        self.cols
    }

    /// Nonzeros.
    pub fn nnz(&self) -> u64 {
        self.idx.len() as u64
    }

    /// The row pointer (`rows + 1` words, from 0 to `nnz`, nondecreasing).
    pub fn ptr(&self) -> &CudaSlice<O> {
        &self.ptr
    }

    /// The column indices (`nnz` words, each `< cols`).
    pub fn idx(&self) -> &CudaSlice<u32> {
        &self.idx
    }

    /// The values (`nnz`), `None` for a pattern matrix.
    pub fn vals(&self) -> Option<&CudaSlice<T>> {
        self.vals.as_ref()
    }

    /// Gives the buffers back.
    pub fn into_parts(self) -> DeviceCsrParts<T, O> {
        DeviceCsrParts { ptr: self.ptr, idx: self.idx, vals: self.vals }
    }

    /// A `rows × cols` matrix of the caller's device buffers, validated on the GPU on `gpu`'s
    /// stream (synchronizes once): lengths, sizes, the row pointer (starts at 0, never
    /// decreases, ends at `nnz`) and every column index (below `cols`). Errors name the first
    /// bad position. Buffers written on another stream must be complete before this call (see
    /// [`Gpu`]'s synchronization rule).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLarge`], [`Error::BadPointers`] (position and
    /// what is wrong), [`Error::IndexOutOfRange`] (position, index, bound), device errors.
    pub fn from_parts(gpu: &Gpu, rows: u64, cols: u64, parts: DeviceCsrParts<T, O>) -> Result<Self> {
        check_shape(rows, cols, &parts)?;
        check_structure(gpu, cols, &parts.ptr, &parts.idx)?;
        // SAFETY: every invariant was checked above.
        Ok(unsafe { Self::from_parts_unchecked(rows, cols, parts) })
    }

    /// A `rows × cols` matrix from the caller's device index arrays of `i32` or `i64` (PyTorch's
    /// `int32`/`int64` CSR tensors, SciPy's index arrays once on the device): the pointer
    /// becomes `O`, the indices `u32`, on the GPU (new buffers; the inputs are left as they
    /// are), each entry checked as it is converted with what [`DeviceCsr::from_parts`] checks
    /// (one read of each array, one synchronization: `gpu_runtime::check::signed_csr`). A
    /// negative entry, or one above the target type's largest value, is an error naming the
    /// array and its position; pointer faults are reported before index faults.
    ///
    /// # Errors
    /// [`Error::BadIndexValue`], then as [`DeviceCsr::from_parts`]; out of memory.
    pub fn from_signed_parts<P: SignedIndex, S: SignedIndex>(
        gpu: &Gpu,
        rows: u64,
        cols: u64,
        ptr: &CudaSlice<P>,
        idx: &CudaSlice<S>,
        vals: Option<CudaSlice<T>>,
    ) -> Result<Self> {
        let (ptr, idx, vals) = signed_parts::<P, S, O, T>(gpu, rows, cols, ptr, idx, vals)?;
        let parts = DeviceCsrParts { ptr, idx, vals };
        check_shape(rows, cols, &parts)?;
        // SAFETY: signed_parts checked every invariant on the GPU (pointer from 0 to nnz, never
        // decreasing; indices below cols); sizes checked just above.
        Ok(unsafe { Self::from_parts_unchecked(rows, cols, parts) })
    }

    /// A `rows × cols` matrix of the caller's device buffers, without validation.
    ///
    /// # Safety
    /// The buffers must satisfy [`DeviceCsr`]'s invariants (sizes within [`MAX_DIM`] and
    /// `O::MAX_NNZ`, `ptr` of `rows + 1` nondecreasing words from 0 to `idx.len()`, every index
    /// below `cols`, `vals` of `idx.len()` items when present) once the work already enqueued on
    /// the stream that wrote them completes. Kernels index with them unchecked: a violation can
    /// make them read or write outside their buffers.
    pub unsafe fn from_parts_unchecked(rows: u64, cols: u64, parts: DeviceCsrParts<T, O>) -> Self {
        Self { rows, cols, ptr: parts.ptr, idx: parts.idx, vals: parts.vals }
    }
}

/// A caller's signed CSR structure converted on the GPU into a pointer of `O` and `u32`
/// indices, each entry checked as it is converted ([`gpu_runtime::check::signed_csr`]: one read
/// of each array, one synchronization); the first fault becomes the error.
pub(crate) fn signed_parts<P: SignedIndex, S: SignedIndex, O: gpu_runtime::check::OffsetWord, T: DeviceRepr>(
    gpu: &Gpu,
    rows: u64,
    cols: u64,
    ptr: &CudaSlice<P>,
    idx: &CudaSlice<S>,
    vals: Option<CudaSlice<T>>,
) -> Result<GenericParts<O, T>> {
    check_lengths(rows, cols, ptr.len(), 0, None, 0)?;
    let mut flags = check_flags(gpu)?;
    let (mut p, mut x) = (gpu.alloc::<O>(ptr.len())?, gpu.alloc::<u32>(idx.len())?);
    let f = gpu_runtime::check::signed_csr(gpu, ptr, idx, cols, &mut p, &mut x, &mut Scratch::new(&mut flags, gpu.stream()))?;
    if let Some(v) = f.pointer_value {
        return Err(Error::BadIndexValue { what: "pointer", position: v.position, value: v.value.into(), max: O::MAX });
    }
    if let Some(pf) = f.pointer {
        return Err(Error::BadPointers { index: pf.position(), reason: pf.to_string() });
    }
    if let Some(v) = f.index {
        return Err(if v.value < 0 || v.value > u32::MAX as i64 {
            Error::BadIndexValue { what: "index", position: v.position, value: v.value.into(), max: u32::MAX as u64 }
        } else {
            Error::IndexOutOfRange { position: v.position, index: v.value as u64, bound: cols }
        });
    }
    Ok((p, x, vals))
}

/// Pointer, indices and values of some pointer type.
pub(crate) type GenericParts<O, T> = (CudaSlice<O>, CudaSlice<u32>, Option<CudaSlice<T>>);

/// The device words the GPU checks report through (`gpu_runtime::check`).
pub(crate) fn check_flags(gpu: &Gpu) -> Result<CudaSlice<u8>> {
    Ok(gpu.alloc::<u8>(gpu_runtime::check::WORKSPACE_BYTES as usize)?)
}

/// The size checks every device CSR constructor makes first, for either pointer width: rows and
/// columns within [`MAX_DIM`], `nnz` within `max_nnz`, a pointer of `rows + 1` entries, values
/// (when present) as many as the indices.
pub(crate) fn check_lengths(rows: u64, cols: u64, ptr_len: usize, nnz: usize, vals_len: Option<usize>, max_nnz: u64) -> Result<()> {
    for (what, value, max) in [("rows", rows, MAX_DIM), ("cols", cols, MAX_DIM), ("nnz", nnz as u64, max_nnz)] {
        if value > max {
            return Err(Error::TooLarge { what, len: value, max });
        }
    }
    if ptr_len as u64 != rows + 1 {
        return Err(Error::LengthMismatch { what: "row pointer", expected: rows + 1, got: ptr_len as u64 });
    }
    match vals_len {
        Some(v) if v != nnz => Err(Error::LengthMismatch { what: "values", expected: nnz as u64, got: v as u64 }),
        _ => Ok(()),
    }
}

/// The structure checked on the GPU (synchronizes once), for either pointer width: the pointer
/// starts at 0, never decreases and ends at the index count; every index is below `cols`.
/// Errors name the first bad position.
pub(crate) fn check_structure<O: gpu_runtime::check::OffsetWord>(
    gpu: &Gpu,
    cols: u64,
    ptr: &impl DevicePtr<O>,
    idx: &impl DevicePtr<u32>,
) -> Result<()> {
    let mut flags = check_flags(gpu)?;
    let mut scratch = Scratch::new(&mut flags, gpu.stream());
    let (pf, xf) = gpu_runtime::check::offsets_and_indices(gpu, ptr, idx.len() as u64, idx, cols, &mut scratch)?;
    structure_faults(pf, xf)
}

/// The first fault of a structure check as this crate's error.
pub(crate) fn structure_faults(pf: Option<gpu_runtime::check::OffsetFault>, xf: Option<gpu_runtime::check::IndexFault>) -> Result<()> {
    if let Some(f) = pf {
        return Err(Error::BadPointers { index: f.position(), reason: f.to_string() });
    }
    if let Some(f) = xf {
        return Err(Error::IndexOutOfRange { position: f.position, index: f.value, bound: f.bound });
    }
    Ok(())
}

fn check_shape<T: DeviceRepr, O: PointerWord>(rows: u64, cols: u64, p: &DeviceCsrParts<T, O>) -> Result<()> {
    check_lengths(rows, cols, p.ptr.len(), p.idx.len(), p.vals.as_ref().map(|v| v.len()), O::MAX_NNZ)
}

impl<T: AnyBits, O: PointerWord> DeviceCsr<T, O> {
    /// Uploads `a`'s structure and, when given, values (a validated host matrix: no device
    /// check); its column indices become `u32` ([`PointerWord::narrow_indices`]).
    fn upload_parts<U: Value>(gpu: &Gpu, a: &Csr<O, U>, vals: Option<&[T]>) -> Result<Self> {
        check_lengths(a.rows(), a.cols(), a.ptr().len(), a.nnz() as usize, None, O::MAX_NNZ)?;
        let parts = DeviceCsrParts {
            ptr: gpu.upload(a.ptr())?,
            idx: gpu.upload(&O::narrow_indices(a.idx()))?,
            vals: vals.map(|v| gpu.upload(v)).transpose()?,
        };
        check_shape(a.rows(), a.cols(), &parts)?;
        // SAFETY: `a` is a validated `Csr`, copied as is (indices narrowed without loss: each is
        // below cols <= MAX_DIM); sizes checked just above.
        Ok(unsafe { Self::from_parts_unchecked(a.rows(), a.cols(), parts) })
    }
}

impl<T: Value + AnyBits, O: PointerWord> DeviceCsr<T, O> {
    /// Uploads `a` (already valid: no device check); the pointer word is `a`'s index type.
    ///
    /// # Errors
    /// [`Error::TooLarge`] past the sizes of the pointer word or [`MAX_DIM`], device errors
    /// (out of memory).
    pub fn upload(gpu: &Gpu, a: &Csr<O, T>) -> Result<Self> {
        Self::upload_parts(gpu, a, Some(a.vals()))
    }

    /// Downloads back into a validated [`Csr`] with indices of the pointer word (values of one
    /// for a pattern matrix).
    ///
    /// # Errors
    /// Device errors.
    pub fn download(&self, gpu: &Gpu) -> Result<Csr<O, T>> {
        let vals = match &self.vals {
            Some(v) => gpu.download(v)?,
            None => vec![T::one(); self.idx.len()],
        };
        Csr::try_new(self.rows, self.cols, gpu.download(&self.ptr)?, O::widen_indices(gpu.download(&self.idx)?), vals)
    }
}

/// A complex value's 16 bytes as a `u128` (real part in the low half), the form a
/// `Complex<f64>` takes on the device (cudarc has no `DeviceRepr` for `num_complex` types; the
/// GPU only moves the bits).
///
/// ```
/// use sptrans_matrix::device::{complex_bits, complex_from_bits};
/// let z = sptrans_matrix::num_complex::Complex64::new(1.5, -0.0);
/// assert_eq!(complex_from_bits(complex_bits(z)).im.to_bits(), (-0.0f64).to_bits());
/// ```
pub fn complex_bits(z: Complex64) -> u128 {
    (u128::from(z.im.to_bits()) << 64) | u128::from(z.re.to_bits())
}

/// The inverse of [`complex_bits`].
pub fn complex_from_bits(b: u128) -> Complex64 {
    Complex64::new(f64::from_bits(b as u64), f64::from_bits((b >> 64) as u64))
}

impl DeviceCsr<u128> {
    /// Uploads a `Complex<f64>` matrix as its values' bits ([`complex_bits`]); every transposer
    /// moves 16-byte values.
    ///
    /// # Errors
    /// As [`DeviceCsr::upload`].
    pub fn upload_complex(gpu: &Gpu, a: &Csr<u32, Complex64>) -> Result<Self> {
        let bits: Vec<u128> = a.vals().iter().map(|&z| complex_bits(z)).collect();
        let parts = DeviceCsrParts { ptr: gpu.upload(a.ptr())?, idx: gpu.upload(a.idx())?, vals: Some(gpu.upload(&bits)?) };
        check_shape(a.rows(), a.cols(), &parts)?;
        // SAFETY: `a` is a validated `Csr`, copied as is (values as their bits); sizes checked.
        Ok(unsafe { Self::from_parts_unchecked(a.rows(), a.cols(), parts) })
    }

    /// Downloads a matrix of complex bits back as `Complex<f64>` values.
    ///
    /// # Errors
    /// Device errors.
    pub fn download_complex(&self, gpu: &Gpu) -> Result<Csr<u32, Complex64>> {
        Ok(self.download(gpu)?.map_values(complex_from_bits))
    }
}

impl<O: PointerWord> DeviceCsr<u8, O> {
    /// Uploads the structure of a pattern matrix.
    ///
    /// # Errors
    /// As [`DeviceCsr::upload`].
    pub fn upload_pattern(gpu: &Gpu, a: &Csr<O, ()>) -> Result<Self> {
        Self::upload_parts(gpu, a, None)
    }
}
