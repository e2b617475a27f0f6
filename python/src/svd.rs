//! `sptrans.linalg.svds` on device arrays: the library's block Lanczos SVD of the caller's CSR.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use sptrans::ScratchBuf;
use sptrans::svd::{Config, Svd};

use crate::device::{CsrIn, gpu_on};
use crate::{bad_width, py_err};

/// What `svds` returns to Python: `(sigma, u, v, converged, restarts, products)`, `sigma` as
/// `k` f64 (nonincreasing), `u` (`rows × k`) and `v` (`cols × k`) column-major f64 (empty
/// without vectors), all as bytes.
pub(crate) type SvdOut<'py> = (Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, bool, usize, usize);

pub(crate) fn answer(py: Python<'_>, s: Svd) -> SvdOut<'_> {
    // One copy into the bytes object (native byte order: NumPy's frombuffer with float64).
    let bytes = |v: &[f64]| {
        // SAFETY: an f64 slice viewed as its bytes (any bit pattern is a byte; alignment 1).
        let raw = unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) };
        PyBytes::new(py, raw)
    };
    (bytes(&s.sigma), bytes(&s.u), bytes(&s.v), s.converged, s.restarts, s.products)
}

/// The settings from Python's arguments (the library's defaults for the rest).
pub(crate) fn config(k: usize, tol: f64, block: usize, seed: u64, max_restarts: usize, vectors: bool, center: bool) -> Config {
    Config { rank: k, tol, block, seed, max_restarts, vectors, center, ..Config::default() }
}

/// The `k` largest singular triplets of the caller's CSR (float32 or float64), computed on
/// `stream` (synchronizes: the small SVD runs on the host); `center`: of `A − 1 μᵀ`. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (device, stream, a, k, tol, block, seed, max_restarts, vectors, center = false))]
#[allow(clippy::too_many_arguments)]
pub fn svds_gpu(
    py: Python<'_>,
    device: usize,
    stream: u64,
    a: CsrIn,
    k: usize,
    tol: f64,
    block: usize,
    seed: u64,
    max_restarts: usize,
    vectors: bool,
    center: bool,
) -> PyResult<SvdOut<'_>> {
    let gpu = gpu_on(device, stream)?;
    let (args, val_bytes) = (a.args(), a.val_bytes());
    let cfg = config(k, tol, block, seed, max_restarts, vectors, center);
    let s = py.detach(|| -> PyResult<Svd> {
        let mut own = ScratchBuf::default();
        own.reserve(&gpu, args.view_bytes::<u32>()).map_err(py_err)?;
        let mut sc = own.scratch(&gpu, args.view_bytes::<u32>()).map_err(py_err)?;
        // SAFETY: the Python layer's arrays of the stated lengths on this device, alive for the
        // call (it holds their owners).
        unsafe {
            match val_bytes {
                4 => sptrans::svd::svd(&gpu, &args.view::<f32, u32>(&gpu, &mut sc, false)?, &cfg).map_err(py_err),
                8 => sptrans::svd::svd(&gpu, &args.view::<f64, u32>(&gpu, &mut sc, false)?, &cfg).map_err(py_err),
                b => Err(bad_width("svds (float32 or float64)", b)),
            }
        }
    })?;
    Ok(answer(py, s))
}
