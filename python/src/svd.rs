//! `sptrans.linalg.svds` on device arrays: the library's block Lanczos SVD of the caller's CSR.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use sptrans::svd::{Config, Svd};
use sptrans::{DenseViewMut, DeviceViewMut, ScratchBuf};

use crate::device::{CsrIn, gpu_on};
use crate::{bad_width, py_err};

/// What `svds` returns to Python: `(sigma, u, v, converged, restarts, products)`, `sigma` as
/// `k` f64 (nonincreasing), `u` (`rows × k`) and `v` (`cols × k`) column-major f64 (empty
/// without vectors), all as bytes.
pub(crate) type SvdOut<'py> = (Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, bool, usize, usize, Bound<'py, PyBytes>);

pub(crate) fn answer(py: Python<'_>, s: Svd) -> SvdOut<'_> {
    // One copy into the bytes object (native byte order: NumPy's frombuffer with float64).
    let bytes = |v: &[f64]| {
        // SAFETY: an f64 slice viewed as its bytes (any bit pattern is a byte; alignment 1).
        let raw = unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) };
        PyBytes::new(py, raw)
    };
    (bytes(&s.sigma), bytes(&s.u), bytes(&s.v), s.converged, s.restarts, s.products, bytes(&s.residual))
}

/// The SVD settings as the Python layer passes them, one tuple: `(k, tol, block, seed,
/// max_restarts, vectors, center, randomized, layout)`, `randomized` `None` (Lanczos) or
/// `(oversample, power_iters)`, `layout` the index in `sptrans.linalg.LAYOUTS` (auto, csrc,
/// pair).
#[derive(FromPyObject, Clone, Copy, Debug)]
pub(crate) struct SvdSettings(usize, f64, Option<usize>, u64, usize, bool, bool, Option<(usize, usize)>, u8);

impl SvdSettings {
    /// The library's settings (its defaults for the rest).
    pub fn config(&self) -> Config {
        let SvdSettings(rank, tol, block, seed, max_restarts, vectors, center, randomized, layout) = *self;
        let layout = match layout {
            1 => sptrans::svd::Layout::Csrc,
            2 => sptrans::svd::Layout::CsrPair,
            _ => sptrans::svd::Layout::Auto,
        };
        let method = match randomized {
            Some((oversample, power_iters)) => sptrans::svd::Method::Randomized { oversample, power_iters },
            None => sptrans::svd::Method::Lanczos,
        };
        Config { rank, tol, block, seed, max_restarts, vectors, center, method, layout, ..Config::default() }
    }
}

/// The `k` largest singular triplets of the caller's CSR (float32 or float64), computed on
/// `stream` (synchronizes: the small SVD runs on the host); `center`: of `A − 1 μᵀ`. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (device, stream, a, settings, dest = None))]
pub fn svds_gpu(py: Python<'_>, device: usize, stream: u64, a: CsrIn, settings: SvdSettings, dest: Option<(u64, u64)>) -> PyResult<SvdOut<'_>> {
    let gpu = gpu_on(device, stream)?;
    let (args, val_bytes) = (a.args(), a.val_bytes());
    let cfg = settings.config();
    let k = cfg.rank;
    let s = py.detach(|| -> PyResult<Svd> {
        let mut own = ScratchBuf::default();
        let mut sc = own.scratch(&gpu, args.view_bytes::<u32>()).map_err(py_err)?;
        // SAFETY: the Python layer's arrays of the stated lengths on this device, alive for the
        // call (it holds their owners); `dest`, when given, two float64 device blocks it
        // allocated: rows × k and cols × k, column-major and packed.
        unsafe {
            let st = gpu.stream();
            let into = dest.map(|(u, v)| {
                let k64 = k as u64;
                (
                    DenseViewMut::new(DeviceViewMut::<f64>::from_raw(u, args.rows as usize * k, st), args.rows, k64, args.rows.max(1)),
                    DenseViewMut::new(DeviceViewMut::<f64>::from_raw(v, args.cols as usize * k, st), args.cols, k64, args.cols.max(1)),
                )
            });
            let into = match into {
                Some((u, v)) => Some((u.map_err(py_err)?, v.map_err(py_err)?)),
                None => None,
            };
            macro_rules! go {
                ($t:ty) => {{
                    let view = args.view::<$t, u32>(&gpu, &mut sc, false)?;
                    match into {
                        Some((mut u, mut v)) => sptrans::svd::svd_into(&gpu, &view, &cfg, &mut u, &mut v),
                        None => sptrans::svd::svd(&gpu, &view, &cfg),
                    }
                    .map_err(py_err)
                }};
            }
            match val_bytes {
                4 => go!(f32),
                8 => go!(f64),
                b => Err(bad_width("svds (float32 or float64)", b)),
            }
        }
    })?;
    Ok(answer(py, s))
}
