//! `sptrans.Operator`: a CSRC plan of the caller's matrix with `A·X` and `Aᵀ·Y` products on
//! the caller's current stream.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sptrans::csrc::{DeviceCsrc, Op};
use sptrans::spmv::{Format, Spmv};
use sptrans::{DenseView, DenseViewMut, DeviceView, DeviceViewMut, Gpu, Scratch};

use crate::device::{CsrIn, gpu_on};
use crate::{bad_width, py_err};

enum Plan {
    F32(DeviceCsrc<f32>),
    F64(DeviceCsrc<f64>),
    /// An SpMV format over the caller's int32 arrays (borrowed: the Python object keeps their
    /// owners alive and the plan's lifetime is that object's).
    Spmv32(Spmv<'static, f32>),
    Spmv64(Spmv<'static, f64>),
}

/// The CSRC plan of one matrix (a private copy of its structure and values in CSRC order),
/// built on the GPU; products run on whichever stream the call names.
#[pyclass(unsendable, module = "sptrans._native")]
pub struct Operator {
    plan: Plan,
    device: usize,
    rows: u64,
    cols: u64,
    nnz: u64,
}

fn op(name: &str) -> PyResult<Op> {
    match name {
        "N" => Ok(Op::NoTranspose),
        "T" => Ok(Op::Transpose),
        _ => Err(PyValueError::new_err(format!("op {name:?}: 'N' or 'T'"))),
    }
}

#[pymethods]
impl Operator {
    /// Scratch bytes the constructor needs to check (and for int64 arrays narrow) the structure.
    #[staticmethod]
    fn build_workspace(a: CsrIn) -> u64 {
        a.args().view_bytes::<u32>()
    }

    /// Builds the plan of the caller's CSR (float32 or float64 values, `val_bytes` 4 or 8) on
    /// `stream`, validating it first: `format` "csrc" (a private CSRC copy: both products, 1–16
    /// columns) or an SpMV format of `sptrans.spmv` ("auto", "csr-vector", "merge-path", ...:
    /// `A·x` only, borrowing the caller's int32 arrays, which must outlive the plan; "auto"
    /// picks for `products` products, `Spmv::with_products`).
    #[new]
    #[pyo3(signature = (device, stream, a, scratch, format = "csrc", products = sptrans::spmv::DEFAULT_PRODUCTS))]
    fn new(device: usize, stream: u64, a: CsrIn, scratch: (u64, u64), format: &str, products: u64) -> PyResult<Self> {
        let gpu = gpu_on(device, stream)?;
        let (args, val_bytes) = (a.args(), a.val_bytes());
        let (rows, cols, nnz) = (args.rows, args.cols, args.nnz);
        let s = gpu.stream();
        // SAFETY: the Python layer's arrays of the stated lengths on this device, alive for the
        // call; the scratch (scratch_bytes) allocated by the caller's framework.
        let plan = unsafe {
            let mut buf = DeviceViewMut::<u8>::from_raw(scratch.0, scratch.1 as usize, s);
            let mut sc = Scratch::new(&mut buf, s);
            if format == "csrc" {
                match val_bytes {
                    4 => Plan::F32(DeviceCsrc::from_csr(&gpu, &args.view::<f32, u32>(&gpu, &mut sc, false)?).map_err(py_err)?),
                    8 => Plan::F64(DeviceCsrc::from_csr(&gpu, &args.view::<f64, u32>(&gpu, &mut sc, false)?).map_err(py_err)?),
                    b => return Err(bad_width("Operator (float32 or float64)", b)),
                }
            } else {
                let f = format.parse::<Format>().map_err(py_err)?;
                match val_bytes {
                    4 => Plan::Spmv32(Spmv::with_products(&gpu, args.view32::<f32>(&gpu, &mut sc, false)?, f, products).map_err(py_err)?),
                    8 => Plan::Spmv64(Spmv::with_products(&gpu, args.view32::<f64>(&gpu, &mut sc, false)?, f, products).map_err(py_err)?),
                    b => return Err(bad_width("Operator (float32 or float64)", b)),
                }
            }
        };
        Ok(Self { plan, device, rows, cols, nnz })
    }

    /// Rows of the matrix.
    #[getter]
    fn rows(&self) -> u64 {
        self.rows
    }

    /// Columns of the matrix.
    #[getter]
    fn cols(&self) -> u64 {
        self.cols
    }

    /// Nonzeros.
    #[getter]
    fn nnz(&self) -> u64 {
        self.nnz
    }

    /// The device the plan lives on.
    #[getter]
    fn device(&self) -> usize {
        self.device
    }

    /// Scratch bytes one product `op` ('N' or 'T') of `k` packed columns needs.
    fn workspace(&self, op: &str, k: usize) -> PyResult<u64> {
        let op = self::op(op)?;
        Ok(match &self.plan {
            Plan::F32(p) => p.workspace_bytes(op, k, true),
            Plan::F64(p) => p.workspace_bytes(op, k, true),
            Plan::Spmv32(_) | Plan::Spmv64(_) => 0,
        } + sptrans::runtime::scratch::ALIGN)
    }

    /// `out = op(A) · x` for a column-major block `x` of `k` columns (packed), enqueued on
    /// `stream`.
    /// `scratch`: (address, bytes) of at least [`Operator::workspace`].
    fn multiply(&mut self, stream: u64, op: &str, x: u64, k: usize, out: u64, scratch: (u64, u64)) -> PyResult<()> {
        let op = self::op(op)?;
        let gpu = gpu_on(self.device, stream)?;
        let (xr, yr) = match op {
            Op::NoTranspose => (self.cols, self.rows),
            Op::Transpose => (self.rows, self.cols),
        };
        match &mut self.plan {
            Plan::F32(p) => product(p, &gpu, op, (x, xr), (out, yr), k, scratch),
            Plan::F64(p) => product(p, &gpu, op, (x, xr), (out, yr), k, scratch),
            Plan::Spmv32(p) => spmv(p, &gpu, op, (x, xr), (out, yr), k),
            Plan::Spmv64(p) => spmv(p, &gpu, op, (x, xr), (out, yr), k),
        }
    }

    /// "auto"'s trial: each format it timed with its median milliseconds a product (empty for a
    /// named format, for "csrc", or when the products expected left one candidate).
    #[getter]
    fn trials(&self) -> Vec<(&'static str, f64)> {
        let of = |t: &[(sptrans::spmv::Format, f64)]| t.iter().map(|(f, ms)| (f.name(), *ms)).collect();
        match &self.plan {
            Plan::F32(_) | Plan::F64(_) => Vec::new(),
            Plan::Spmv32(p) => of(p.trials()),
            Plan::Spmv64(p) => of(p.trials()),
        }
    }

    /// The plan's format name ("csrc", or the SpMV format chosen: "auto" resolves).
    #[getter]
    fn format(&self) -> &'static str {
        match &self.plan {
            Plan::F32(_) | Plan::F64(_) => "csrc",
            Plan::Spmv32(p) => p.format().name(),
            Plan::Spmv64(p) => p.format().name(),
        }
    }
}

/// One product on the caller's packed blocks.
fn product<T: sptrans::csrc::SpmvValue + num_one::One>(
    p: &mut DeviceCsrc<T>,
    gpu: &Gpu,
    op: Op,
    (x, xr): (u64, u64),
    (y, yr): (u64, u64),
    k: usize,
    (scratch, scratch_bytes): (u64, u64),
) -> PyResult<()> {
    p.set_gpu(gpu).map_err(py_err)?;
    let s = gpu.stream();
    // SAFETY: the Python layer's F-ordered blocks of xr × k and yr × k items on this device and
    // the scratch it allocated, alive for the call.
    unsafe {
        let xv = DenseView::packed(DeviceView::<T>::from_raw(x, xr as usize * k, s), xr).map_err(py_err)?;
        let mut yv = DenseViewMut::packed(DeviceViewMut::<T>::from_raw(y, yr as usize * k, s), yr).map_err(py_err)?;
        let mut buf = DeviceViewMut::<u8>::from_raw(scratch, scratch_bytes as usize, s);
        let mut sc = Scratch::new(&mut buf, s);
        p.multiply_with(op, T::ONE, &xv, T::ZERO, &mut yv, &mut sc).map_err(py_err)
    }
}

/// `out = A · x` column by column with an SpMV plan (no transposed product).
fn spmv<T: sptrans::spmv::SpmvValue + num_one::One>(
    p: &mut Spmv<'static, T>,
    gpu: &Gpu,
    op: Op,
    (x, xr): (u64, u64),
    (y, yr): (u64, u64),
    k: usize,
) -> PyResult<()> {
    if op == Op::Transpose {
        return Err(PyValueError::new_err(format!("the {} SpMV plan has no transposed product: use format='csrc' for A.T @ y", p.format().name())));
    }
    p.set_gpu(gpu).map_err(py_err)?;
    let s = gpu.stream();
    let size = std::mem::size_of::<T>() as u64;
    for j in 0..k as u64 {
        // SAFETY: column j of the Python layer's F-ordered blocks (xr × k and yr × k items on
        // this device), alive for the call.
        let (xv, mut yv) = unsafe {
            (DeviceView::<T>::from_raw(x + j * xr * size, xr as usize, s), DeviceViewMut::<T>::from_raw(y + j * yr * size, yr as usize, s))
        };
        p.apply(T::ONE, &xv, T::ZERO, &mut yv).map_err(py_err)?;
    }
    Ok(())
}

/// Narrows the caller's int64 (or mixed) CSR structure `a` into the caller's int32 arrays
/// `out` = (pointer of `rows + 1`, indices of `nnz`) on `stream`, checking every entry as it is
/// converted (one synchronization; `scratch` (address, bytes) of `check::WORKSPACE_BYTES`).
#[pyfunction]
pub fn narrow_csr(device: usize, stream: u64, a: CsrIn, out: (u64, u64), scratch: (u64, u64)) -> PyResult<()> {
    let gpu = gpu_on(device, stream)?;
    let s = gpu.stream();
    // SAFETY: the Python layer's arrays of the stated lengths on this device (outputs freshly
    // allocated int32 arrays), and its scratch, alive for the call.
    unsafe {
        let mut buf = DeviceViewMut::<u8>::from_raw(scratch.0, scratch.1 as usize, s);
        let mut sc = Scratch::new(&mut buf, s);
        a.args().narrow_into(&gpu, out.0, out.1, &mut sc)
    }
}

/// One and zero of the value types.
mod num_one {
    pub trait One {
        const ONE: Self;
        const ZERO: Self;
    }
    impl One for f32 {
        const ONE: f32 = 1.0;
        const ZERO: f32 = 0.0;
    }
    impl One for f64 {
        const ONE: f64 = 1.0;
        const ZERO: f64 = 0.0;
    }
}
