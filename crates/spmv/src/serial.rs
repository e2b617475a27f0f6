//! The serial twin: `y = alpha * A * x + beta * y`, each row's products summed in order in the
//! value type (as CSR-scalar does), and the bound within which a GPU result must agree with it.
//!
//! ```
//! use sptrans_matrix::Csr;
//! // [[1, 2], [0, 3]] * [1, 1] = [3, 3]
//! let a = Csr::try_new(2, 2, vec![0u32, 2, 3], vec![0, 1, 1], vec![1.0f64, 2.0, 3.0]).unwrap();
//! let mut y = vec![10.0, 20.0];
//! gpu_spmv::serial::spmv(&a, 2.0, &[1.0, 1.0], 0.5, &mut y);
//! assert_eq!(y, vec![11.0, 16.0]);
//! ```
use sptrans_matrix::Csr;

use crate::SpmvValue;

/// `y = alpha * A * x + beta * y` (`y` not read when `beta == 0`).
///
/// # Panics
/// When `x.len() != a.cols()` or `y.len() != a.rows()` (the GPU plan returns errors instead).
pub fn spmv<T: SpmvValue>(a: &Csr<u32, T>, alpha: T, x: &[T], beta: T, y: &mut [T]) {
    assert_eq!(x.len() as u64, a.cols(), "x length");
    assert_eq!(y.len() as u64, a.rows(), "y length");
    rows(a, alpha, x, beta, 0, y);
}

/// Rows `r0 .. r0 + y.len()` of [`spmv`] into `y` (the CPU fallback's tasks run it on their
/// chunks of rows: the same sums in the same order).
pub(crate) fn rows<T: SpmvValue>(a: &Csr<u32, T>, alpha: T, x: &[T], beta: T, r0: usize, y: &mut [T]) {
    for (i, yr) in y.iter_mut().enumerate() {
        let (b, e) = (a.ptr()[r0 + i] as usize, a.ptr()[r0 + i + 1] as usize);
        let mut sum = T::default();
        for k in b..e {
            sum = sum + a.vals()[k] * x[a.idx()[k] as usize];
        }
        *yr = spmv_kernels::combine(alpha, sum, beta, *yr);
    }
}

/// The largest difference allowed between two computations of row `r` of `alpha * A * x + beta *
/// y_old` that each sum the row in some order in `T`: `2 γ_{k+2} (|alpha| Σ|a_rj x_j| + |beta
/// y_old_r|)`, with `k` the row's length and `γ_n = n u / (1 − n u)` (`u` the unit roundoff of
/// `T`; Higham, Accuracy and Stability of Numerical Algorithms, §3.1). Computed in `f64`.
pub fn error_bound<T: SpmvValue>(a: &Csr<u32, T>, alpha: T, x: &[T], beta: T, y_old: &[T]) -> Vec<f64> {
    let u = T::UNIT_ROUNDOFF;
    (0..a.rows() as usize)
        .map(|r| {
            let (b, e) = (a.ptr()[r] as usize, a.ptr()[r + 1] as usize);
            let mag: f64 = (b..e).map(|k| (a.vals()[k].into() * x[a.idx()[k] as usize].into()).abs()).sum();
            let n = (e - b + 2) as f64;
            let gamma = n * u / (1.0 - n * u);
            let old = if beta == T::default() { 0.0 } else { (beta.into() * y_old[r].into()).abs() };
            2.0 * gamma * (alpha.into().abs() * mag + old)
        })
        .collect()
}

/// Whether `got` agrees with `want` within `bound` entry by entry (NaN with NaN, an infinity with
/// the same infinity).
pub fn within<T: SpmvValue>(got: &[T], want: &[T], bound: &[f64]) -> Result<(), String> {
    for (i, ((&g, &w), &b)) in got.iter().zip(want).zip(bound).enumerate() {
        let (g, w): (f64, f64) = (g.into(), w.into());
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= b;
        if !ok {
            return Err(format!("y[{i}] = {g:e}, twin {w:e}, difference {:e} > bound {b:e}", (g - w).abs()));
        }
    }
    if got.len() != want.len() {
        return Err(format!("length {} vs {}", got.len(), want.len()));
    }
    Ok(())
}
