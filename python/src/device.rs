//! The caller's device and stream, and the caller's CSR arrays as validated views.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sptrans::runtime::check::{self, OffsetWord};
use sptrans::runtime::cudarc::driver::CudaStream;
use sptrans::runtime::cudarc::driver::sys::CUstream;
use sptrans::{DeviceCsrView, DeviceView, DeviceViewMut, Gpu, PendingCsrView, Scratch};

use crate::py_err;

/// One handle per device, opened on first use; handles on callers' streams share its module
/// cache (kernels are loaded once per device and process).
static DEVICES: Mutex<Option<HashMap<usize, Gpu>>> = Mutex::new(None);

/// A handle on device `ordinal` running on the caller's stream `stream` (a `CUstream`; 0 is the
/// legacy default stream).
pub(crate) fn gpu_on(ordinal: usize, stream: u64) -> PyResult<Gpu> {
    let base = {
        let mut guard = DEVICES.lock().map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("sptrans: device table poisoned"))?;
        let table = guard.get_or_insert_with(HashMap::new);
        match table.get(&ordinal) {
            Some(g) => g.clone(),
            None => {
                let g = Gpu::new(ordinal).map_err(py_err)?;
                table.insert(ordinal, g.clone());
                g
            }
        }
    };
    // SAFETY: `stream` is the current stream of the caller's framework on this device (the
    // Python layer reads it from CuPy or PyTorch and holds the arrays' owners for the call); it
    // belongs to the device's primary context, which `Gpu::new` retained. The wrapper does not
    // destroy it, and work is ordered by that stream.
    let s: Arc<CudaStream> = unsafe { base.context().wrap_borrowed_stream(stream as CUstream) };
    base.with_stream(s).map_err(py_err)
}

/// The caller's CSR as the Python layer passes it, one tuple: `(rows, cols, nnz, ptr,
/// ptr_bytes, idx, idx_bytes, vals, val_bytes)` (addresses as integers, widths in bytes,
/// `val_bytes == 0` for no values).
#[derive(FromPyObject, Clone, Copy, Debug)]
pub(crate) struct CsrIn(u64, u64, u64, u64, usize, u64, usize, u64, usize);

impl CsrIn {
    /// The arrays as [`CsrArgs`].
    pub fn args(&self) -> CsrArgs {
        let CsrIn(rows, cols, nnz, ptr, ptr_bytes, idx, idx_bytes, vals, val_bytes) = *self;
        CsrArgs { rows, cols, nnz, ptr, ptr_bytes, idx, idx_bytes, vals, with_vals: val_bytes != 0 }
    }

    /// Bytes per value (0: none).
    pub fn val_bytes(&self) -> usize {
        self.8
    }
}

/// The caller's CSR arrays: addresses and widths as the Python layer checked them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CsrArgs {
    pub rows: u64,
    pub cols: u64,
    pub nnz: u64,
    /// Row pointer address (`rows + 1` entries of `ptr_bytes`: 4 for int32, 8 for int64).
    pub ptr: u64,
    pub ptr_bytes: usize,
    /// Column indices address (`nnz` entries of `idx_bytes`).
    pub idx: u64,
    pub idx_bytes: usize,
    /// Values address (`nnz` entries).
    pub vals: u64,
    /// Whether the matrix has values (`vals` may be 0 when `nnz == 0`).
    pub with_vals: bool,
}

impl CsrArgs {
    /// Whether the structure must be converted (64-bit arrays are narrowed to `u32` indices).
    pub fn converts(&self) -> bool {
        self.ptr_bytes != 4 || self.idx_bytes != 4
    }

    /// Scratch bytes [`CsrArgs::view`] takes with pointer words `O`.
    pub fn view_bytes<O>(&self) -> u64 {
        let align = sptrans::runtime::scratch::ALIGN;
        let mut b = check::WORKSPACE_BYTES + align;
        if self.converts() {
            b += (self.rows + 1) * std::mem::size_of::<O>() as u64 + align + self.nnz * 4 + align;
        }
        b
    }

    fn check_widths(&self) -> PyResult<()> {
        for (what, w) in [("row pointer", self.ptr_bytes), ("column indices", self.idx_bytes)] {
            if w != 4 && w != 8 {
                return Err(PyValueError::new_err(format!("{what}: index arrays must be int32 or int64 (got {w}-byte items)")));
            }
        }
        Ok(())
    }

    /// The caller's int32 arrays as a view of any lifetime, validated on the GPU with `flags`
    /// (`check::WORKSPACE_BYTES`; one synchronization) unless `trust`.
    ///
    /// # Safety
    /// As [`CsrArgs::view`], and the arrays must stay alive and unchanged for `'v` (the Python
    /// layer keeps their owners).
    pub unsafe fn view32<'v, T>(&self, gpu: &Gpu, flags: &mut Scratch<'_>, trust: bool) -> PyResult<DeviceCsrView<'v, T, u32>> {
        self.check_widths()?;
        if self.converts() {
            return Err(PyValueError::new_err("int32 index arrays expected here"));
        }
        let stream = gpu.stream();
        let (m, n, nnz) = (self.rows, self.cols, self.nnz);
        if nnz > sptrans::matrix::device::MAX_NNZ {
            return Err(PyValueError::new_err(format!("{nnz} nonzeros: more than the 32-bit path's {}", sptrans::matrix::device::MAX_NNZ)));
        }
        sizes(m, n)?;
        // SAFETY (from_raw): the caller's guarantee.
        let vals = self.with_vals.then(|| unsafe { DeviceView::<T>::from_raw(self.vals, nnz as usize, stream) });
        let ptr = unsafe { DeviceView::<u32>::from_raw(self.ptr, m as usize + 1, stream) };
        let idx = unsafe { DeviceView::<u32>::from_raw(self.idx, nnz as usize, stream) };
        if !trust {
            let (pf, xf) = check::offsets_and_indices(gpu, &ptr, nnz, &idx, n, flags).map_err(py_err)?;
            if let Some(f) = pf {
                return Err(indptr_error(f, f.position()));
            }
            if let Some(f) = xf {
                return Err(indices_error(f.value, f.position, n));
            }
        }
        // SAFETY: lengths from the shape, sizes checked; structure checked above or promised.
        Ok(unsafe { DeviceCsrView::new_unchecked(m, n, ptr, idx, vals) })
    }

    /// The caller's int32 arrays as a view whose structure check is enqueued on the GPU with
    /// `flags` (`check::WORKSPACE_BYTES`) but not waited for ([`DeviceCsrView::new_pending`]).
    ///
    /// # Safety
    /// As [`CsrArgs::view32`].
    pub unsafe fn pending32<'v, 's, T>(&self, gpu: &Gpu, flags: &'s mut Scratch<'_>) -> PyResult<PendingCsrView<'v, 's, T>>
    where
        'v: 's,
    {
        self.check_widths()?;
        if self.converts() {
            return Err(PyValueError::new_err("int32 index arrays expected here"));
        }
        let stream = gpu.stream();
        let (m, n, nnz) = (self.rows, self.cols, self.nnz);
        sizes(m, n)?;
        // SAFETY (from_raw): the caller's guarantee.
        let vals = self.with_vals.then(|| unsafe { DeviceView::<T>::from_raw(self.vals, nnz as usize, stream) });
        let ptr = unsafe { DeviceView::<u32>::from_raw(self.ptr, m as usize + 1, stream) };
        let idx = unsafe { DeviceView::<u32>::from_raw(self.idx, nnz as usize, stream) };
        DeviceCsrView::new_pending(gpu, m, n, ptr, idx, vals, flags).map_err(py_err)
    }

    /// Narrows the caller's int64 (or mixed) structure into the caller's int32 arrays `out_ptr`
    /// (`rows + 1`) and `out_idx` (`nnz`), checking every entry as it converts (one
    /// synchronization; `flags` of `check::WORKSPACE_BYTES`).
    ///
    /// # Safety
    /// As [`CsrArgs::view`]; `out_ptr` and `out_idx` hold `rows + 1` and `nnz` writable `u32`.
    pub unsafe fn narrow_into(&self, gpu: &Gpu, out_ptr: u64, out_idx: u64, flags: &mut Scratch<'_>) -> PyResult<()> {
        self.check_widths()?;
        let stream = gpu.stream();
        // SAFETY: the caller's guarantee.
        let (mut p, mut x) = unsafe {
            (
                DeviceViewMut::<u32>::from_raw(out_ptr, self.rows as usize + 1, stream),
                DeviceViewMut::<u32>::from_raw(out_idx, self.nnz as usize, stream),
            )
        };
        let f = match (self.ptr_bytes, self.idx_bytes) {
            (4, 4) => signed::<i32, i32, u32>(gpu, self, &mut p, &mut x, flags)?,
            (4, 8) => signed::<i32, i64, u32>(gpu, self, &mut p, &mut x, flags)?,
            (8, 4) => signed::<i64, i32, u32>(gpu, self, &mut p, &mut x, flags)?,
            _ => signed::<i64, i64, u32>(gpu, self, &mut p, &mut x, flags)?,
        };
        faults(&f, self.cols, u32::MAX as u64)
    }

    /// The arrays as a view with pointer words `O` and values `T`, validated on the GPU (one
    /// synchronization) with [`CsrArgs::view_bytes`] of `scratch`; int64 structure is narrowed
    /// into the scratch as it is checked. With `trust`, int32 structure is not checked (no
    /// synchronization): the caller promised a valid CSR.
    ///
    /// # Safety
    /// The addresses must hold the stated entries on `gpu`'s device, readable for `'a`, and be
    /// complete in `gpu`'s stream order; with `trust`, they must form a valid CSR structure
    /// (`DeviceCsrView`'s invariants), or kernels may read and write out of bounds.
    pub unsafe fn view<'a, T, O: OffsetWord + 'static>(
        &self,
        gpu: &Gpu,
        scratch: &mut Scratch<'a>,
        trust: bool,
    ) -> PyResult<DeviceCsrView<'a, T, O>> {
        self.check_widths()?;
        let stream = gpu.stream();
        let (m, n, nnz) = (self.rows, self.cols, self.nnz);
        let max_nnz = if std::mem::size_of::<O>() == 4 { sptrans::matrix::device::MAX_NNZ } else { u64::MAX };
        if nnz > max_nnz {
            return Err(PyValueError::new_err(format!("{nnz} nonzeros: more than this path's {max_nnz}")));
        }
        if !self.converts() {
            if std::any::TypeId::of::<O>() != std::any::TypeId::of::<u32>() {
                return Err(PyValueError::new_err("an int32 row pointer takes the 32-bit path"));
            }
            let mut flags = scratch.sub(check::WORKSPACE_BYTES).map_err(py_err)?;
            // SAFETY: the caller's guarantee, forwarded.
            let v = unsafe { self.view32::<T>(gpu, &mut flags, trust)? };
            // SAFETY: O is u32 (its TypeId checked above): the two are the same type.
            return Ok(unsafe { std::mem::transmute_copy::<DeviceCsrView<'a, T, u32>, DeviceCsrView<'a, T, O>>(&std::mem::ManuallyDrop::new(v)) });
        }
        // SAFETY: the caller's guarantee.
        let vals = self.with_vals.then(|| unsafe { DeviceView::<T>::from_raw(self.vals, nnz as usize, stream) });
        let mut p = scratch.slice::<O>(m as usize + 1).map_err(py_err)?;
        let mut x = scratch.slice::<u32>(nnz as usize).map_err(py_err)?;
        let mut flags = scratch.sub(check::WORKSPACE_BYTES).map_err(py_err)?;
        let f = match (self.ptr_bytes, self.idx_bytes) {
            (4, 8) => signed::<i32, i64, O>(gpu, self, &mut p, &mut x, &mut flags)?,
            (8, 4) => signed::<i64, i32, O>(gpu, self, &mut p, &mut x, &mut flags)?,
            _ => signed::<i64, i64, O>(gpu, self, &mut p, &mut x, &mut flags)?,
        };
        faults(&f, n, O::MAX)?;
        sizes(m, n)?;
        // SAFETY: signed_csr checked every entry as it converted it.
        Ok(unsafe { DeviceCsrView::new_unchecked(m, n, DeviceView::from(p.into_view()), DeviceView::from(x.into_view()), vals) })
    }
}

/// The first fault [`check::signed_csr`] found, as a `ValueError` naming the array and position.
fn faults(f: &check::SignedCsrFaults, n: u64, max: u64) -> PyResult<()> {
    if let Some(v) = f.pointer_value {
        return Err(PyValueError::new_err(format!("indptr: entry {} at position {} does not fit ({max} at most)", v.value, v.position)));
    }
    if let Some(pf) = f.pointer {
        return Err(PyValueError::new_err(format!("indptr: {pf} (position {})", pf.position())));
    }
    if let Some(v) = f.index {
        return Err(PyValueError::new_err(format!("indices: entry {} at position {} is outside 0..{n}", v.value, v.position)));
    }
    Ok(())
}

/// The `ValueError` of a malformed int32 row pointer: `reason` at `position`.
pub(crate) fn indptr_error(reason: impl std::fmt::Display, position: u64) -> PyErr {
    PyValueError::new_err(format!("indptr: {reason} (position {position})"))
}

/// The `ValueError` of an int32 column index `value` (as read back, shown signed, as the caller
/// holds it) at `position` outside `0..n`.
pub(crate) fn indices_error(value: u64, position: u64, n: u64) -> PyErr {
    PyValueError::new_err(format!("indices: entry {} at position {position} is outside 0..{n}", value as u32 as i32))
}

fn sizes(m: u64, n: u64) -> PyResult<()> {
    let max = sptrans::matrix::device::MAX_DIM;
    if m > max || n > max {
        return Err(PyValueError::new_err(format!("shape ({m}, {n}): each dimension at most {max}")));
    }
    Ok(())
}

/// [`check::signed_csr`] of the caller's arrays (types `P`, `S`) into `p`, `x`.
fn signed<P: check::SignedIndex, S: check::SignedIndex, O: OffsetWord>(
    gpu: &Gpu,
    a: &CsrArgs,
    p: &mut impl sptrans::runtime::cudarc::driver::DevicePtrMut<O>,
    x: &mut impl sptrans::runtime::cudarc::driver::DevicePtrMut<u32>,
    flags: &mut Scratch<'_>,
) -> PyResult<check::SignedCsrFaults> {
    let stream = gpu.stream();
    // SAFETY: the caller's guarantee (CsrArgs::view).
    let (ptr, idx) =
        unsafe { (DeviceView::<P>::from_raw(a.ptr, a.rows as usize + 1, stream), DeviceView::<S>::from_raw(a.idx, a.nnz as usize, stream)) };
    check::signed_csr(gpu, &ptr, &idx, a.cols, p, x, flags).map_err(py_err)
}
