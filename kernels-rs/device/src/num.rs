//! Scalar helpers every product shares (host-compilable: pure arithmetic).

/// `alpha * sum + beta * y_old`, with `y_old` not read when `beta == 0` (the caller passes any
/// value then): the output update of the BLAS-style products (`Y = alpha · A · X + beta · Y`).
///
/// ```
/// assert_eq!(gpu_device::num::combine(2.0f64, 3.0, 0.0, f64::NAN), 6.0);
/// assert_eq!(gpu_device::num::combine(2.0f64, 3.0, 0.5, 4.0), 8.0);
/// ```
#[inline(always)]
pub fn combine<T: Copy + PartialEq + core::ops::Mul<Output = T> + core::ops::Add<Output = T> + Default>(alpha: T, sum: T, beta: T, y_old: T) -> T {
    if beta == T::default() {
        alpha * sum
    } else {
        alpha * sum + beta * y_old
    }
}
