//! Borrowed CSR views over device memory someone else owns — a [`DeviceCsr`], a caller's
//! `CudaSlice`s, CuPy or PyTorch arrays, a plan's scratch — with the invariants of
//! [`DeviceCsr`]: what every algorithm takes, so that none ever forges an owner of memory it
//! borrows. [`DeviceCsrPartsMut`] is the writable counterpart for outputs (buffers of the right
//! lengths, no promise about their contents).
//!
//! The pointer type `O` is `u32` ([`DeviceCsrView`]) or `u64` ([`DeviceCsr64View`]).
use gpu_runtime::check::OffsetWord;
use gpu_runtime::{DeviceView, DeviceViewMut, Gpu};

use crate::device::{check_lengths, check_structure, structure_faults, DeviceCsr, DeviceCsrParts, PointerWord, MAX_NNZ};
use crate::{Error, Result};

/// The alignment, in bytes, every array of a [`DeviceCsrView`] and of a [`DeviceCsrPartsMut`]
/// given to an algorithm must start at: the kernels load and store up to 16 bytes at a time.
/// Whole allocations (cudarc, CuPy, PyTorch) start at 256 bytes; a sub-range of one is aligned
/// when its offset in bytes is a multiple of 16.
pub const VIEW_ALIGN: u64 = 16;

/// [`Error::Misaligned`] unless `addr` is a multiple of [`VIEW_ALIGN`] (empty arrays pass).
///
/// # Errors
/// [`Error::Misaligned`] naming `what`.
pub fn check_aligned(what: &'static str, addr: u64, len: usize) -> Result<()> {
    if len > 0 && addr % VIEW_ALIGN != 0 {
        return Err(Error::Misaligned { what, addr, align: VIEW_ALIGN });
    }
    Ok(())
}

/// A read-only CSR matrix in borrowed device memory with pointer words `O` (`u32` or `u64`)
/// and `u32` column indices; `vals` is absent for pattern matrices.
///
/// Invariants (those of [`DeviceCsr`]), kept by every safe constructor: every array starts at
/// a multiple of [`VIEW_ALIGN`] bytes; `rows, cols <= MAX_DIM`, `nnz` within the pointer type
/// (`MAX_NNZ` for `u32`); the row pointer has
/// `rows + 1` entries, starts at 0, never decreases and ends at `nnz`; every column index is
/// below `cols`; the values, when present, number `nnz`. Built by [`DeviceCsr::view`] (either
/// pointer word), [`DeviceCsrView::new`] (validated on the GPU) or the `unsafe`
/// [`DeviceCsrView::new_unchecked`].
pub struct DeviceCsrView<'a, T, O = u32> {
    rows: u64,
    cols: u64,
    ptr: DeviceView<'a, O>,
    idx: DeviceView<'a, u32>,
    vals: Option<DeviceView<'a, T>>,
}

/// A [`DeviceCsrView`] whose structure check is enqueued on the GPU but not yet read
/// ([`DeviceCsrView::new_pending`]): lengths, sizes and alignment hold; the pointer's order and
/// the indices' bounds are known only after [`PendingCsrView::wait`].
#[derive(Debug)]
pub struct PendingCsrView<'a, 's, T, O = u32> {
    view: DeviceCsrView<'a, T, O>,
    check: gpu_runtime::check::PendingCheck<'s>,
}

impl<'a, T, O> PendingCsrView<'a, '_, T, O> {
    /// Reads the check's verdict (**synchronizes** the stream it was enqueued on): the view
    /// when the structure is valid.
    ///
    /// # Errors
    /// `BadPointers`, `IndexOutOfRange` naming the first bad position; device errors.
    pub fn wait(self, gpu: &Gpu) -> Result<DeviceCsrView<'a, T, O>> {
        let (pf, xf) = self.check.wait(gpu)?;
        structure_faults(pf, xf)?;
        Ok(self.view)
    }

    /// The view before its structure is known to be valid: lengths, sizes and alignment hold
    /// (any kernel may rely on them), the pointer's order and the indices' bounds may not.
    ///
    /// # Safety
    /// Whatever reads the view before [`PendingCsrView::wait`] must stay inside its buffers (and
    /// those it writes) for *any* contents of the row pointer and column indices: an algorithm
    /// that indexes with them unchecked may read or write out of bounds on a malformed structure.
    pub unsafe fn unvalidated(&self) -> &DeviceCsrView<'a, T, O> {
        &self.view
    }
}

/// A borrowed CSR view with a 64-bit row pointer.
pub type DeviceCsr64View<'a, T> = DeviceCsrView<'a, T, u64>;

impl<T, O> Clone for DeviceCsrView<'_, T, O> {
    fn clone(&self) -> Self {
        Self { rows: self.rows, cols: self.cols, ptr: self.ptr.clone(), idx: self.idx.clone(), vals: self.vals.clone() }
    }
}

impl<T, O> std::fmt::Debug for DeviceCsrView<'_, T, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceCsrView")
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .field("nnz", &self.idx.len())
            .field("values", &self.vals.is_some())
            .finish()
    }
}

impl<'a, T, O: OffsetWord> DeviceCsrView<'a, T, O> {
    /// A `rows × cols` view of the caller's device buffers, validated on the GPU on `gpu`'s
    /// stream (synchronizes once): lengths, sizes, the row pointer (starts at 0, never
    /// decreases, ends at `nnz`) and every column index (below `cols`). Errors name the first bad
    /// position. Buffers written on another stream must be complete first ([`Gpu`]'s rule).
    ///
    /// # Errors
    /// `Misaligned`, `LengthMismatch`, `TooLarge`, `BadPointers`, `IndexOutOfRange`, device
    /// errors.
    pub fn new(gpu: &Gpu, rows: u64, cols: u64, ptr: DeviceView<'a, O>, idx: DeviceView<'a, u32>, vals: Option<DeviceView<'a, T>>) -> Result<Self> {
        check_aligned("row pointer", ptr.addr(), ptr.len())?;
        check_aligned("column indices", idx.addr(), idx.len())?;
        if let Some(v) = &vals {
            check_aligned("values", v.addr(), v.len())?;
        }
        check_lengths(rows, cols, ptr.len(), idx.len(), vals.as_ref().map(|v| v.len()), max_nnz::<O>())?;
        check_structure(gpu, cols, &ptr, &idx)?;
        // SAFETY: every invariant was checked above.
        Ok(unsafe { Self::new_unchecked(rows, cols, ptr, idx, vals) })
    }

    /// [`DeviceCsrView::new`] without waiting for the structure check: lengths, sizes and
    /// alignment are checked now, the row pointer and the column indices by kernels enqueued on
    /// `gpu`'s stream, whose verdict [`PendingCsrView::wait`] reads (one synchronization). Work an
    /// algorithm enqueues in between overlaps the check; only algorithms that stay inside their
    /// buffers whatever the structure may read the view before the verdict
    /// ([`PendingCsrView::unvalidated`]). `flags`: [`gpu_runtime::check::WORKSPACE_BYTES`] of
    /// scratch, held until the wait.
    ///
    /// # Errors
    /// `Misaligned`, `LengthMismatch`, `TooLarge`, device errors.
    pub fn new_pending<'s>(
        gpu: &Gpu,
        rows: u64,
        cols: u64,
        ptr: DeviceView<'a, O>,
        idx: DeviceView<'a, u32>,
        vals: Option<DeviceView<'a, T>>,
        flags: &'s mut gpu_runtime::Scratch<'_>,
    ) -> Result<PendingCsrView<'a, 's, T, O>>
    where
        'a: 's,
    {
        check_aligned("row pointer", ptr.addr(), ptr.len())?;
        check_aligned("column indices", idx.addr(), idx.len())?;
        if let Some(v) = &vals {
            check_aligned("values", v.addr(), v.len())?;
        }
        check_lengths(rows, cols, ptr.len(), idx.len(), vals.as_ref().map(|v| v.len()), max_nnz::<O>())?;
        let check = gpu_runtime::check::enqueue_offsets_and_indices(gpu, &ptr, idx.len() as u64, &idx, cols, flags)?;
        // SAFETY: lengths, sizes and alignment checked above; the structure is checked by
        // `check`, and the view leaves `PendingCsrView` only through `wait` (valid) or the
        // `unsafe` `unvalidated`.
        Ok(PendingCsrView { view: unsafe { Self::new_unchecked(rows, cols, ptr, idx, vals) }, check })
    }

    /// A `rows × cols` view without validation.
    ///
    /// # Safety
    /// The buffers must satisfy [`DeviceCsrView`]'s invariants once the work already enqueued on
    /// the stream that wrote them completes. Kernels index with them unchecked: a violation can
    /// make them read or write outside their buffers.
    pub unsafe fn new_unchecked(rows: u64, cols: u64, ptr: DeviceView<'a, O>, idx: DeviceView<'a, u32>, vals: Option<DeviceView<'a, T>>) -> Self {
        Self { rows, cols, ptr, idx, vals }
    }

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
    pub fn ptr(&self) -> &DeviceView<'a, O> {
        &self.ptr
    }

    /// The column indices (`nnz` words, each `< cols`).
    pub fn idx(&self) -> &DeviceView<'a, u32> {
        &self.idx
    }

    /// The values (`nnz`), `None` for a pattern matrix.
    pub fn vals(&self) -> Option<&DeviceView<'a, T>> {
        self.vals.as_ref()
    }

    /// The same structure as a pattern matrix (values dropped from the view).
    pub fn pattern<U>(&self) -> DeviceCsrView<'a, U, O> {
        DeviceCsrView { rows: self.rows, cols: self.cols, ptr: self.ptr.clone(), idx: self.idx.clone(), vals: None }
    }

    /// The same structure with other values: `vals` must hold `nnz` items.
    ///
    /// # Errors
    /// `LengthMismatch` when `vals` does not hold `nnz` items.
    pub fn with_values<U>(&self, vals: DeviceView<'a, U>) -> Result<DeviceCsrView<'a, U, O>> {
        if vals.len() != self.idx.len() {
            return Err(crate::Error::LengthMismatch { what: "values", expected: self.nnz(), got: vals.len() as u64 });
        }
        Ok(DeviceCsrView { rows: self.rows, cols: self.cols, ptr: self.ptr.clone(), idx: self.idx.clone(), vals: Some(vals) })
    }
}

fn max_nnz<O: OffsetWord>() -> u64 {
    if O::MAX == u32::MAX as u64 {
        MAX_NNZ
    } else {
        O::MAX
    }
}

/// Writable buffers for a CSR result, borrowed: a pointer of `rows + 1` words of `O`, column
/// indices and (optionally) values, with no promise about their contents. Producers (the
/// transposers) check the lengths and write a valid matrix.
pub struct DeviceCsrPartsMut<'a, T, O = u32> {
    /// Row pointer (`rows + 1` words).
    pub ptr: DeviceViewMut<'a, O>,
    /// Column indices (`nnz` words).
    pub idx: DeviceViewMut<'a, u32>,
    /// Values (`nnz`), absent for pattern matrices.
    pub vals: Option<DeviceViewMut<'a, T>>,
}

impl<T, O> std::fmt::Debug for DeviceCsrPartsMut<'_, T, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceCsrPartsMut").field("ptr", &self.ptr.len()).field("idx", &self.idx.len()).field("values", &self.vals.is_some()).finish()
    }
}

impl<T, O> DeviceCsrPartsMut<'_, T, O> {
    /// [`Error::Misaligned`] unless every buffer starts at a multiple of [`VIEW_ALIGN`] bytes
    /// (what producers check before writing).
    ///
    /// # Errors
    /// [`Error::Misaligned`] naming the output array.
    pub fn check_aligned(&self) -> Result<()> {
        check_aligned("output pointer", self.ptr.addr(), self.ptr.len())?;
        check_aligned("output indices", self.idx.addr(), self.idx.len())?;
        match &self.vals {
            Some(v) => check_aligned("output values", v.addr(), v.len()),
            None => Ok(()),
        }
    }

    /// A shorter-lived borrow of the same buffers.
    pub fn reborrow(&mut self) -> DeviceCsrPartsMut<'_, T, O> {
        DeviceCsrPartsMut { ptr: self.ptr.reborrow(), idx: self.idx.reborrow(), vals: self.vals.as_mut().map(|v| v.reborrow()) }
    }
}

impl<T: gpu_runtime::cudarc::driver::DeviceRepr, O: PointerWord> DeviceCsr<T, O> {
    /// A borrowed view of the matrix (what the algorithms take).
    pub fn view(&self) -> DeviceCsrView<'_, T, O> {
        // SAFETY: a DeviceCsr keeps every invariant of the view.
        unsafe { DeviceCsrView::new_unchecked(self.rows(), self.cols(), self.ptr().into(), self.idx().into(), self.vals().map(DeviceView::of)) }
    }
}

impl<T: gpu_runtime::cudarc::driver::DeviceRepr, O: PointerWord> DeviceCsrParts<T, O> {
    /// The buffers as writable views.
    pub fn view_mut(&mut self) -> DeviceCsrPartsMut<'_, T, O> {
        DeviceCsrPartsMut { ptr: (&mut self.ptr).into(), idx: (&mut self.idx).into(), vals: self.vals.as_mut().map(DeviceViewMut::of) }
    }
}

/// Anything that lends a [`DeviceCsrView`]: owned matrices ([`DeviceCsr`] of either pointer word)
/// and views themselves. The algorithms take `&impl AsDeviceCsrView<T, O>`, so they borrow
/// whichever the caller holds.
pub trait AsDeviceCsrView<T, O = u32> {
    /// The borrowed view.
    fn csr_view(&self) -> DeviceCsrView<'_, T, O>;
}

impl<T, O: OffsetWord> AsDeviceCsrView<T, O> for DeviceCsrView<'_, T, O> {
    fn csr_view(&self) -> DeviceCsrView<'_, T, O> {
        self.clone()
    }
}

impl<T: gpu_runtime::cudarc::driver::DeviceRepr, O: PointerWord> AsDeviceCsrView<T, O> for DeviceCsr<T, O> {
    fn csr_view(&self) -> DeviceCsrView<'_, T, O> {
        self.view()
    }
}
