//! The serial twins on host (NumPy) arrays: what `sptrans` runs for SciPy inputs, and where no
//! GPU is present. The Python layer passes contiguous arrays of the stated dtypes and lengths;
//! the structure is validated here before anything indexes with it.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sptrans::Csr;
use sptrans::csrc::Op;

use crate::device::CsrIn;
use crate::svd::{SvdOut, SvdSettings, answer};
use crate::{bad_width, by_width, py_err};

/// The caller's host CSR: shape, and addresses of its arrays (pointer and indices of one width).
#[derive(Clone, Copy)]
struct Host {
    rows: u64,
    cols: u64,
    nnz: u64,
    ptr: u64,
    idx: u64,
    idx_bytes: usize,
}

impl Host {
    /// The host arrays of `a` (pointer and indices of one width, as the Python layer makes them).
    fn of(a: &CsrIn) -> PyResult<Self> {
        let x = a.args();
        if x.ptr_bytes != x.idx_bytes {
            return Err(PyValueError::new_err("indptr and indices must have the same dtype here"));
        }
        Ok(Host { rows: x.rows, cols: x.cols, nnz: x.nnz, ptr: x.ptr, idx: x.idx, idx_bytes: x.idx_bytes })
    }

    /// # Safety
    /// `addr` holds `len` readable items of `T` for `'a` (or `len == 0`).
    unsafe fn slice<'a, T>(addr: u64, len: u64) -> &'a [T] {
        if len == 0 {
            return &[];
        }
        // SAFETY: the caller's guarantee.
        unsafe { std::slice::from_raw_parts(addr as *const T, len as usize) }
    }

    /// Pointer and indices as `u32` (negative entries and entries past `u32::MAX` are errors
    /// naming their position), for the twins that take `u32`.
    ///
    /// # Safety
    /// The arrays hold `rows + 1` and `nnz` entries of `idx_bytes` bytes.
    unsafe fn narrow(&self) -> PyResult<(Vec<u32>, Vec<u32>)> {
        fn conv<S: Copy + Into<i64>>(what: &str, s: &[S]) -> PyResult<Vec<u32>> {
            s.iter()
                .enumerate()
                .map(|(i, &v)| {
                    let v: i64 = v.into();
                    u32::try_from(v).map_err(|_| PyValueError::new_err(format!("{what}: entry {v} at position {i} is outside 0..2^32")))
                })
                .collect()
        }
        // SAFETY (slices): the caller's guarantee.
        unsafe {
            match self.idx_bytes {
                4 => Ok((conv("indptr", Self::slice::<i32>(self.ptr, self.rows + 1))?, conv("indices", Self::slice::<i32>(self.idx, self.nnz))?)),
                8 => Ok((conv("indptr", Self::slice::<i64>(self.ptr, self.rows + 1))?, conv("indices", Self::slice::<i64>(self.idx, self.nnz))?)),
                b => Err(PyValueError::new_err(format!("index arrays must be int32 or int64 (got {b}-byte items)"))),
            }
        }
    }

    /// A validated `Csr<u32, T>` (copies).
    ///
    /// # Safety
    /// As [`Host::narrow`], and `vals` holds `nnz` items of `T`.
    unsafe fn csr<T: sptrans::Value>(&self, vals: u64) -> PyResult<Csr<u32, T>> {
        // SAFETY: the caller's guarantee.
        let (p, i) = unsafe { self.narrow()? };
        let v = unsafe { Self::slice::<T>(vals, self.nnz) }.to_vec();
        Csr::try_new(self.rows, self.cols, p, i, v).map_err(py_err)
    }
}

/// Checks a host pointer/index pair of type `I` the way `Csr::try_new` does, without copying.
fn check<I: sptrans::matrix::Index>(rows: u64, cols: u64, ptr: &[I], idx: &[I]) -> PyResult<()> {
    let e = |m: String| Err(PyValueError::new_err(m));
    if ptr.len() as u64 != rows + 1 {
        return e(format!("indptr has {} entries, expected {}", ptr.len(), rows + 1));
    }
    let nnz = idx.len() as u64;
    let first: u64 = ptr[0].to_u64();
    if first != 0 {
        return e(format!("indptr: the first entry is {}, not 0", ptr[0].to_u64() as i64));
    }
    for r in 1..ptr.len() {
        let (a, b) = (ptr[r - 1].to_u64() as i64, ptr[r].to_u64() as i64);
        if b < a {
            return e(format!("indptr: entry {b} at position {r} is below the one before ({a})"));
        }
    }
    let last = ptr[rows as usize].to_u64();
    if last != nnz {
        return e(format!("indptr: the last entry is {}, not the {nnz} indices", last as i64));
    }
    if let Some((pos, v)) = idx.iter().enumerate().find(|(_, v)| v.to_u64() >= cols) {
        return e(format!("indices: entry {} at position {pos} is outside 0..{cols}", v.to_u64() as i64));
    }
    Ok(())
}

/// The serial transpose of the host CSR `a` into the caller's host arrays `out` (`cols + 1`,
/// `nnz`, `nnz` items; pointer and indices of `a`'s index width, which both arrays share;
/// values of `a`'s value width). The GIL is released.
#[pyfunction]
pub fn transpose_cpu(py: Python<'_>, a: CsrIn, out: (u64, u64, u64)) -> PyResult<()> {
    let (h, vals, val_bytes) = (Host::of(&a)?, a.args().vals, a.val_bytes());
    let (rows, cols, nnz, idx_bytes) = (h.rows, h.cols, h.nnz, h.idx_bytes);
    let (a, out) = ([h.ptr, h.idx, vals], [out.0, out.1, out.2]);
    fn go<I: sptrans::matrix::Index, V: Copy + Default>(rows: u64, cols: u64, nnz: u64, a: [u64; 3], out: [u64; 3]) -> PyResult<()> {
        // SAFETY: the Python layer's contiguous host arrays of these lengths and types, alive for
        // the call (outputs freshly allocated, not aliasing the inputs).
        unsafe {
            let (p, i, v) = (Host::slice::<I>(a[0], rows + 1), Host::slice::<I>(a[1], nnz), Host::slice::<V>(a[2], nnz));
            check(rows, cols, p, i)?;
            let (tp, ti, tv) = sptrans::matrix::try_transpose_parts(rows, cols, p, i, v).map_err(py_err)?;
            for (src, dst) in [(&tp, out[0]), (&ti, out[1])] {
                std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut I, src.len());
            }
            std::ptr::copy_nonoverlapping(tv.as_ptr(), out[2] as *mut V, tv.len());
        }
        Ok(())
    }
    py.detach(|| {
        by_width!(val_bytes, V => match idx_bytes {
            4 => go::<u32, V>(rows, cols, nnz, a, out),
            8 => go::<u64, V>(rows, cols, nnz, a, out),
            b => Err(PyValueError::new_err(format!("index arrays must be int32 or int64 (got {b}-byte items)"))),
        })
    })
}

/// `out = op(A) · x` on the host (the CSRC products' twin) for column-major blocks of `k`
/// columns, float32 or float64.
#[pyfunction]
pub fn multiply_cpu(py: Python<'_>, op: &str, a: CsrIn, x: u64, k: usize, out: u64) -> PyResult<()> {
    let (h, vals, val_bytes) = (Host::of(&a)?, a.args().vals, a.val_bytes());
    let (rows, cols) = (h.rows, h.cols);
    let op = match op {
        "N" => Op::NoTranspose,
        "T" => Op::Transpose,
        _ => return Err(PyValueError::new_err(format!("op {op:?}: 'N' or 'T'"))),
    };
    let (xr, yr) = if op == Op::NoTranspose { (cols, rows) } else { (rows, cols) };
    fn go<T: sptrans::csrc::SpmvValue + Default>(
        h: &Host,
        vals: u64,
        op: Op,
        (x, xr): (u64, u64),
        k: usize,
        (out, yr): (u64, u64),
        one: T,
    ) -> PyResult<()> {
        // SAFETY: the Python layer's contiguous host arrays of these lengths, alive for the call.
        unsafe {
            let a = h.csr::<T>(vals)?;
            let xs = Host::slice::<T>(x, xr * k as u64);
            let ys = if yr * k as u64 == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(out as *mut T, (yr * k as u64) as usize) };
            sptrans::csrc::serial::multiply(&a, op, one, xs, k, T::default(), ys);
        }
        Ok(())
    }
    py.detach(|| match val_bytes {
        4 => go::<f32>(&h, vals, op, (x, xr), k, (out, yr), 1.0),
        8 => go::<f64>(&h, vals, op, (x, xr), k, (out, yr), 1.0),
        b => Err(bad_width("multiply (float32 or float64)", b)),
    })
}

/// The CPU fallback of the truncated SVD (the same algorithm as on the GPU, on the host's
/// threads: `gpu_svd::cpu`).
#[pyfunction]
pub fn svds_cpu(py: Python<'_>, a: CsrIn, settings: SvdSettings) -> PyResult<SvdOut<'_>> {
    let (h, vals, val_bytes) = (Host::of(&a)?, a.args().vals, a.val_bytes());
    let cfg = settings.config();
    // SAFETY (csr): the Python layer's contiguous host arrays of these lengths, alive for the call.
    let s = py.detach(|| match val_bytes {
        4 => sptrans::svd::cpu::svd(&unsafe { h.csr::<f32>(vals) }?, &cfg).map_err(py_err),
        8 => sptrans::svd::cpu::svd(&unsafe { h.csr::<f64>(vals) }?, &cfg).map_err(py_err),
        b => Err(bad_width("svds (float32 or float64)", b)),
    })?;
    Ok(answer(py, s))
}
