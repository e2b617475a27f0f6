//! `sptrans.transpose` on device arrays: the caller's CSR as a view, the caller's output arrays
//! and scratch as mutable views, one transposer per device and stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use sptrans::runtime::check::{self, OffsetWord};
use sptrans::transpose::{Algorithm, Transposer};
use sptrans::{DeviceCsrPartsMut, DeviceCsrView, DeviceViewMut, Payload, Scratch};

use crate::device::{CsrArgs, CsrIn, gpu_on, indices_error, indptr_error};
use crate::{by_width, py_err};
use sptrans::runtime::cudarc::driver::CudaStream;

/// Transposers by (device, stream): kernels looked up once; they hold no memory (every call
/// runs on scratch the caller's framework lends). The table's lock is held only to find or add
/// a plan; each plan has its own, so calls on other devices or streams never wait on this one.
type Plan = Arc<Mutex<Transposer>>;
static PLANS: Mutex<Option<HashMap<(usize, u64), Plan>>> = Mutex::new(None);

fn with_plan<R>(device: usize, stream: u64, f: impl FnOnce(&mut Transposer) -> PyResult<R>) -> PyResult<R> {
    let poisoned = |_| PyRuntimeError::new_err("sptrans: transposer table poisoned");
    let plan: Plan = {
        let mut guard = PLANS.lock().map_err(poisoned)?;
        let table = guard.get_or_insert_with(HashMap::new);
        match table.entry((device, stream)) {
            std::collections::hash_map::Entry::Occupied(e) => e.get().clone(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Arc::new(Mutex::new(Transposer::new(&gpu_on(device, stream)?).map_err(py_err)?))).clone()
            }
        }
    };
    let mut t = plan.lock().map_err(|_| PyRuntimeError::new_err("sptrans: a transposer poisoned by an earlier panic"))?;
    f(&mut t)
}

fn algorithm(name: &str) -> PyResult<Algorithm> {
    name.parse::<Algorithm>().map_err(py_err)
}

/// Scratch bytes [`transpose_gpu`] needs for this matrix (`a`'s addresses unused): the
/// structure's check (and, for int64 arrays, their narrowed copies) plus the transposer's
/// workspace. `wide` selects the 64-bit pointer path (the Python layer takes it from 2^31
/// nonzeros, where int32 pointers end).
#[pyfunction]
pub fn transpose_workspace(device: usize, stream: u64, a: CsrIn, algorithm: &str, wide: bool) -> PyResult<u64> {
    let algo = self::algorithm(algorithm)?;
    let (args, vb) = (a.args(), a.val_bytes());
    with_plan(device, stream, |t| {
        let own = if wide {
            args.view_bytes::<u64>() + t.workspace64_bytes(algo, args.rows, args.cols, args.nnz, vb).map_err(py_err)?
        } else {
            args.view_bytes::<u32>() + t.workspace_bytes(algo, args.rows, args.cols, args.nnz, vb).map_err(py_err)?
        };
        Ok(own + sptrans::runtime::scratch::ALIGN)
    })
}

/// Transposes the caller's CSR `a` (int32/int64 structure, values of any width or none) into
/// the caller's output arrays: `out` = (pointer of `cols + 1` words — `u32`, or `u64` when
/// `wide` —, `nnz` `u32` indices, `nnz` values), on `scratch` (address, bytes); enqueued on
/// `stream` after validating the input (one synchronization; `check = false` skips that for
/// int32 structure, on the caller's promise that it is valid — the Python layer's
/// `check=False`).
#[pyfunction]
#[pyo3(signature = (device, stream, a, out, scratch, algorithm, wide, check = true))]
#[allow(clippy::too_many_arguments)]
pub fn transpose_gpu(
    device: usize,
    stream: u64,
    a: CsrIn,
    out: (u64, u64, u64),
    scratch: (u64, u64),
    algorithm: &str,
    wide: bool,
    check: bool,
) -> PyResult<()> {
    let algo = self::algorithm(algorithm)?;
    let args = a.args();
    let outs = Outs { ptr: out.0, idx: out.1, vals: out.2, scratch: scratch.0, scratch_bytes: scratch.1, trust: !check };
    with_plan(device, stream, |t| {
        by_width!(a.val_bytes(), V => {
            if check && !wide && !args.converts() {
                run_pending::<V>(t, algo, &args, &outs)
            } else if wide {
                run::<V, u64>(t, algo, &args, &outs, |t, algo, a, out, s| t.transpose64_view_with(algo, a, out, s))
            } else {
                run::<V, u32>(t, algo, &args, &outs, |t, algo, a, out, s| t.transpose_view_with(algo, a, out, s))
            }
        })
    })
}

/// One checked transpose of int32 structure: the check enqueued, the transpose beside it where
/// the algorithm is safe on any structure (RadixTrans, so `auto`), the verdict read at the end
/// (`Transposer::transpose_pending_with`: one synchronization, after the work rather than
/// before it).
fn run_pending<V: Payload>(t: &mut Transposer, algo: Algorithm, a: &CsrArgs, o: &Outs) -> PyResult<()> {
    let gpu = t.gpu().clone();
    let stream = gpu.stream();
    // SAFETY: as in `run`: the Python layer allocated the scratch and the outputs with the
    // caller's framework on this device and keeps them and the inputs alive for the call.
    unsafe {
        let mut buf = o.scratch(stream);
        let mut scratch = Scratch::new(&mut buf, stream);
        let mut flags = scratch.sub(check::WORKSPACE_BYTES).map_err(py_err)?;
        let view = a.pending32::<V>(&gpu, &mut flags)?;
        let mut out = o.parts(a, stream);
        t.transpose_pending_with(algo, view, &mut out, &mut scratch).map_err(|e| structure_err(e, a.cols))
    }
}

/// A malformed structure as the `ValueError` the check-first path raises (`indptr: …` /
/// `indices: …`, with the position); other errors as usual.
fn structure_err(e: sptrans::transpose::Error, n: u64) -> PyErr {
    use sptrans::matrix::Error as M;
    use sptrans::transpose::Error as T;
    match e {
        T::Matrix(M::BadPointers { index, reason }) => indptr_error(reason, index),
        T::Matrix(M::IndexOutOfRange { position, index, .. }) => indices_error(index, position, n),
        e => py_err(e),
    }
}

/// The caller's output and scratch addresses.
struct Outs {
    ptr: u64,
    idx: u64,
    vals: u64,
    scratch: u64,
    scratch_bytes: u64,
    /// Skip the structure check (the caller's promise).
    trust: bool,
}

impl Outs {
    /// The scratch as a view.
    ///
    /// # Safety
    /// The Python layer allocated `scratch_bytes` there on this device and keeps it alive for
    /// `'o`.
    unsafe fn scratch<'o>(&self, stream: &Arc<CudaStream>) -> DeviceViewMut<'o, u8> {
        // SAFETY: the caller's guarantee.
        unsafe { DeviceViewMut::from_raw(self.scratch, self.scratch_bytes as usize, stream) }
    }

    /// The output arrays for `a`'s transpose: `cols + 1` pointer words of `O`, `nnz` indices and
    /// values (when `a` has them).
    ///
    /// # Safety
    /// The Python layer allocated them so on this device and keeps them alive for `'o`.
    unsafe fn parts<'o, V, O>(&self, a: &CsrArgs, stream: &Arc<CudaStream>) -> DeviceCsrPartsMut<'o, V, O> {
        // SAFETY: the caller's guarantee.
        unsafe {
            DeviceCsrPartsMut {
                ptr: DeviceViewMut::from_raw(self.ptr, a.cols as usize + 1, stream),
                idx: DeviceViewMut::from_raw(self.idx, a.nnz as usize, stream),
                vals: a.with_vals.then(|| DeviceViewMut::from_raw(self.vals, a.nnz as usize, stream)),
            }
        }
    }
}

/// The transposer's entry point for pointer words `O`.
type Entry<V, O> =
    fn(&mut Transposer, Algorithm, &DeviceCsrView<'_, V, O>, &mut DeviceCsrPartsMut<'_, V, O>, &mut Scratch<'_>) -> sptrans::transpose::Result<()>;

/// One transpose with pointer words `O` through `entry`.
fn run<V: Payload, O: OffsetWord + Payload>(t: &mut Transposer, algo: Algorithm, a: &CsrArgs, o: &Outs, entry: Entry<V, O>) -> PyResult<()> {
    let gpu = t.gpu().clone();
    let stream = gpu.stream();
    // SAFETY: the Python layer allocated the scratch (scratch_bytes) and the outputs (cols + 1
    // pointer words of O, nnz indices and values) with the caller's framework on this device and
    // keeps them alive for the call; the inputs are the caller's arrays of the stated lengths.
    unsafe {
        let mut buf = o.scratch(stream);
        let mut scratch = Scratch::new(&mut buf, stream);
        let view = a.view::<V, O>(&gpu, &mut scratch, o.trust)?;
        let mut out = o.parts(a, stream);
        entry(t, algo, &view, &mut out, &mut scratch).map_err(py_err)
    }
}
