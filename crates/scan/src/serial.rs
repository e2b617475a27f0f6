//! The serial twin: the specification of every scan in this crate, in plain loops.
//! Addition wraps, as on the GPU.

use crate::ScanItem;

/// Exclusive prefix sums: `out[i] = x[0] + ... + x[i-1]`, `out[0] = 0`.
///
/// ```
/// assert_eq!(gpu_scan::serial::exclusive_scan(&[3u32, 1, 4, 1, 5]), vec![0, 3, 4, 8, 9]);
/// ```
pub fn exclusive_scan<T: ScanItem>(x: &[T]) -> Vec<T> {
    let mut acc = T::ZERO;
    let mut out = Vec::with_capacity(x.len());
    for &v in x {
        out.push(acc);
        acc = acc.wrapping_add(v);
    }
    out
}

/// Inclusive prefix sums: `out[i] = x[0] + ... + x[i]`.
///
/// ```
/// assert_eq!(gpu_scan::serial::inclusive_scan(&[3u32, 1, 4, 1, 5]), vec![3, 4, 8, 9, 14]);
/// assert_eq!(gpu_scan::serial::inclusive_scan(&[u32::MAX, 2]), vec![u32::MAX, 1]); // wraps
/// ```
pub fn inclusive_scan<T: ScanItem>(x: &[T]) -> Vec<T> {
    let mut acc = T::ZERO;
    let mut out = Vec::with_capacity(x.len());
    for &v in x {
        acc = acc.wrapping_add(v);
        out.push(acc);
    }
    out
}
