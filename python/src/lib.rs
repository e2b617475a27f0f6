//! `sptrans._native`: the sptrans library behind the Python package (`python/sptrans`).
//!
//! This module is private to the package. Its functions take the addresses of arrays that the
//! Python layer owns or borrows (CuPy, PyTorch or NumPy buffers, checked there for dtype,
//! contiguity, device and length) and hand them to the library as borrowed views: nothing here
//! copies an input unless a conversion is named (64-bit index arrays are narrowed into the
//! scratch the caller's framework lent). Device work runs on the caller's stream, given as its
//! `CUstream` handle; outputs and scratch are allocated by the caller's framework.
//!
//! Every function validates the matrix structure (on the GPU for device arrays) before any
//! kernel indexes with it, so a malformed input is a `ValueError` naming the position, never an
//! out-of-bounds access.

use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

mod cpu;
mod device;
mod operator;
mod svd;
mod transpose;

/// The Python exception for a library error: `MemoryError` for device out of memory,
/// `ValueError` for bad input (shapes, lengths, indices, settings), `RuntimeError` otherwise
/// (no GPU, driver and launch failures).
pub(crate) fn py_err(e: impl Into<sptrans::Error>) -> PyErr {
    use sptrans::Error as E;
    use sptrans::runtime::Error as R;
    let e: sptrans::Error = e.into();
    let msg = e.to_string();
    if e.is_out_of_memory() {
        return PyMemoryError::new_err(format!("GPU out of memory: {msg}"));
    }
    let input = match &e {
        E::Runtime(r) => matches!(
            r,
            R::LengthMismatch { .. } | R::TooLarge { .. } | R::LeadingDimension { .. } | R::ScratchTooSmall { .. } | R::ScratchMisaligned { .. }
        ),
        E::Matrix(_) => true,
        E::Transpose(t) => {
            use sptrans::transpose::Error as T;
            matches!(t, T::Matrix(_) | T::LengthMismatch { .. } | T::TooLarge { .. } | T::UnsupportedValue { .. } | T::UnknownAlgorithm(_))
        }
        E::Spmv(s) => {
            use sptrans::spmv::Error as S;
            matches!(
                s,
                S::Invalid { .. } | S::LengthMismatch { .. } | S::NoValues | S::UnknownFormat(_) | S::TooMuchPadding { .. } | S::TooManyValues { .. }
            )
        }
        E::Csrc(c) => {
            use sptrans::csrc::Error as C;
            matches!(c, C::Invalid(_) | C::BadVectorCount { .. } | C::LengthMismatch { .. } | C::NoValues)
        }
        E::Svd(s) => {
            use sptrans::svd::Error as S;
            matches!(s, S::RankTooLarge { .. } | S::Config(_) | S::NonFinite { .. })
        }
        _ => false,
    };
    if input { PyValueError::new_err(msg) } else { PyRuntimeError::new_err(msg) }
}

/// A `TypeError` for a value width the call does not take.
pub(crate) fn bad_width(what: &str, bytes: usize) -> PyErr {
    PyTypeError::new_err(format!("{what}: values of {bytes} bytes are not supported"))
}

/// Runs `$body` with `$t` the unsigned integer type of `$bytes` bytes (values move as raw
/// bits: a transpose never looks at them); `0` (a pattern matrix) uses `u8`.
macro_rules! by_width {
    ($bytes:expr, $t:ident => $body:expr) => {
        match $bytes {
            0 | 1 => {
                type $t = u8;
                $body
            }
            2 => {
                type $t = u16;
                $body
            }
            4 => {
                type $t = u32;
                $body
            }
            8 => {
                type $t = u64;
                $body
            }
            16 => {
                type $t = u128;
                $body
            }
            b => Err($crate::bad_width("transpose", b)),
        }
    };
}
pub(crate) use by_width;

/// Whether a CUDA driver and at least one device are present.
#[pyfunction]
fn gpu_available() -> bool {
    sptrans::driver_present() && sptrans::device_count().map(|n| n > 0).unwrap_or(false)
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(transpose::transpose_workspace, m)?)?;
    m.add_function(wrap_pyfunction!(transpose::transpose_gpu, m)?)?;
    m.add_function(wrap_pyfunction!(cpu::transpose_cpu, m)?)?;
    m.add_function(wrap_pyfunction!(cpu::multiply_cpu, m)?)?;
    m.add_function(wrap_pyfunction!(cpu::svds_cpu, m)?)?;
    m.add_function(wrap_pyfunction!(svd::svds_gpu, m)?)?;
    m.add_function(wrap_pyfunction!(operator::narrow_csr, m)?)?;
    m.add_class::<operator::Operator>()?;
    Ok(())
}
