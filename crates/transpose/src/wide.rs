//! Values of the widths the kernels do not carry (1 and 2 bytes: `u8`, `i8`, `u16`, `i16`, `f16`,
//! `bf16`; 16 bytes, `u128`, `i128`), except in RadixTrans, whose sort carries 1 and 2 bytes, and
//! 16 when it is one pass: the algorithm transposes the matrix with each nonzero's
//! position (`0..nnz`, a `u32`) as its value, so that the output's "values" are the permutation;
//! one gather kernel (`transpose_permute_v{1,2,16}`) then moves the real values by it. Every
//! GPU algorithm gets these widths this way, at the price of `8·nnz` bytes of workspace and one
//! gather.
use gpu_radix::{bits_below, RadixSort};
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr};
use gpu_runtime::scratch::Layout;
use gpu_runtime::{Gpu, Payload, Scratch};
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};

use crate::{grid, Algorithm, Dims, Error, Result, Transposer};

/// Whether values of `bytes` bytes take this path with `algo` (resolved) on `n` columns: 4 and 8
/// bytes move with the keys everywhere; RadixTrans's sort also carries 1 and 2 bytes, and 16
/// bytes (two 8-byte halves a pass) when it is one pass, since each pass moves them twice (on
/// the H100 the 64-column matrix took 0.43 ms against 0.68 by positions, the 3-pass uniform
/// 100k² 1.06 against 0.79); the serial twin and cuSPARSE take every width themselves; 0 is a
/// pattern.
pub(crate) fn by_positions(radix: &RadixSort, algo: Algorithm, bytes: usize, n: u64) -> bool {
    match bytes {
        0 | 4 | 8 => false,
        1 | 2 if algo == Algorithm::RadixTrans => false,
        16 if algo == Algorithm::RadixTrans && radix.passes(bits_below(n)).0 == 1 => false,
        _ => !matches!(algo, Algorithm::Serial | Algorithm::CuSparse),
    }
}

/// The kernel of a width: 0, 1, 2 for 1, 2 and 16 bytes.
fn variant(bytes: usize) -> Result<usize> {
    match bytes {
        1 => Ok(0),
        2 => Ok(1),
        16 => Ok(2),
        _ => Err(Error::UnsupportedValue { bytes }),
    }
}

/// The scratch of one call, in carving order: the positions, the permutation, then the
/// algorithm's own for 4-byte values (`inner`).
pub(crate) fn workspace_bytes(nnz: u64, inner: u64) -> u64 {
    Layout::new().add(4 * nnz).add(4 * nnz).add(inner).bytes()
}

/// A `CudaSlice` over `len` items of someone else's device memory, to be wrapped at once in
/// [`Forged`]. When the context tracks events (a caller's context under `Gpu::from_stream`),
/// cudarc creates two events for it (and panics if it cannot); [`Forged`] destroys them.
///
/// # Safety
/// `ptr` holds `len` items of `T` and outlives every use of the view; the view must never be
/// dropped as a `CudaSlice` (it would free the memory): wrap it in a [`Forged`] value, whose drop
/// gives the address back without freeing it.
pub(crate) unsafe fn view<T>(gpu: &Gpu, ptr: u64, len: usize) -> CudaSlice<T> {
    // SAFETY: the caller's contract.
    unsafe { gpu.stream().upgrade_device_ptr::<T>(ptr, len) }
}

/// Owners forged over borrowed memory ([`view`]) that give it back when dropped: each slice is
/// `leak`ed (cudarc destroys its events and frees nothing), on every path out of the scope,
/// errors included. Until the algorithms take borrowed views (issue 34), this is how the wide
/// and 64-bit paths hand the 32-bit machinery a `DeviceCsr` over other buffers.
pub(crate) struct Forged<X: Release>(Option<X>);

/// What [`Forged`] can hold: slices, CSR parts and CSRs made of [`view`]s.
pub(crate) trait Release {
    /// Gives every slice's address back without freeing it.
    fn release(self);
}

impl<T> Release for CudaSlice<T> {
    fn release(self) {
        let _ = self.leak();
    }
}

impl<T: DeviceRepr> Release for DeviceCsrParts<T> {
    fn release(self) {
        self.ptr.release();
        self.idx.release();
        if let Some(v) = self.vals {
            v.release();
        }
    }
}

impl<T: DeviceRepr> Release for DeviceCsr<T> {
    fn release(self) {
        self.into_parts().release();
    }
}

impl<X: Release> Forged<X> {
    /// Wraps `x`, made of [`view`]s.
    pub(crate) fn new(x: X) -> Self {
        Self(Some(x))
    }
}

impl<X: Release> std::ops::Deref for Forged<X> {
    type Target = X;
    fn deref(&self) -> &X {
        // Some until dropped.
        self.0.as_ref().unwrap_or_else(|| unreachable!("Forged holds its value until dropped"))
    }
}

impl<X: Release> std::ops::DerefMut for Forged<X> {
    fn deref_mut(&mut self) -> &mut X {
        self.0.as_mut().unwrap_or_else(|| unreachable!("Forged holds its value until dropped"))
    }
}

impl<X: Release> Drop for Forged<X> {
    fn drop(&mut self) {
        if let Some(x) = self.0.take() {
            x.release();
        }
    }
}

/// Transposes `a`, whose values are `T::BYTES` = 1, 2 or 16 bytes wide, with `algo` (a GPU
/// algorithm, resolved) into `out`.
pub(crate) fn run<T: Payload>(
    t: &mut Transposer,
    algo: Algorithm,
    a: &DeviceCsr<T>,
    out: &mut DeviceCsrParts<T>,
    d: Dims,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let k = variant(T::BYTES)?;
    let (Some(vals), Some(out_vals)) = (a.vals(), out.vals.as_mut()) else {
        return Err(Error::Runtime(gpu_runtime::Error::Internal("wide values path without values")));
    };
    let nnz = d.nnz as usize;
    let stream = t.gpu.stream().clone();
    let pos = scratch.take(4 * d.nnz)?;
    let perm = scratch.take(4 * d.nnz)?;
    // SAFETY: transpose_iota(perm, nnz): `pos` holds nnz words.
    unsafe { t.k.iota.args(&stream).arg(&pos).arg(&d.nnz).launch(grid(t.gpu.props().sm_count, d.nnz))? };
    let (ptr_in, _g1) = a.ptr().device_ptr(&stream);
    let (idx_in, _g2) = a.idx().device_ptr(&stream);
    let (ptr_out, _g3) = out.ptr.device_ptr_mut(&stream);
    let (idx_out, _g4) = out.idx.device_ptr_mut(&stream);
    // SAFETY: the views cover `a`'s pointer and indices (read only: `a` is borrowed for the whole
    // call), `out`'s (borrowed mutably for the whole call) and the two scratch arrays of nnz
    // words; none is freed (Forged gives them back) and none outlives this function. The input view keeps
    // `a`'s invariants (same pointer and indices; the values are nnz positions).
    let g = &t.gpu;
    let (a32, mut o32) = unsafe {
        let parts = DeviceCsrParts { ptr: view(g, ptr_in, d.m as usize + 1), idx: view(g, idx_in, nnz), vals: Some(view::<u32>(g, pos, nnz)) };
        let outs = DeviceCsrParts { ptr: view(g, ptr_out, d.n as usize + 1), idx: view(g, idx_out, nnz), vals: Some(view::<u32>(g, perm, nnz)) };
        (Forged::new(DeviceCsr::from_parts_unchecked(d.m, d.n, parts)), Forged::new(outs))
    };
    t.run_algorithm(algo, &a32, &mut o32, d, scratch)?;
    let (v, _g5) = vals.device_ptr(&stream);
    let (o, _g6) = out_vals.device_ptr_mut(&stream);
    // SAFETY: transpose_permute_v*(nnz, perm, vals, out): perm holds a permutation of 0..nnz
    // (the positions, transposed); vals and out hold nnz items of this width and do not overlap.
    unsafe { t.k.permute[k].args(&stream).arg(&d.nnz).arg(&perm).arg(&v).arg(&o).launch(grid(t.gpu.props().sm_count, d.nnz))? };
    Ok(())
}
