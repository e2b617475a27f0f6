//! A CSR matrix in device memory with a 64-bit row pointer: more than `u32::MAX` nonzeros (a
//! graph of billions of edges), or a caller's `int64` CSR (PyTorch's default, SciPy's past
//! 2³¹) taken as it is. The same type as the 32-bit matrix with another pointer word
//! ([`DeviceCsr<T, u64>`]); column indices stay `u32`, the narrowest type that holds the
//! column count (at most [`crate::device::MAX_DIM`]): a caller's `i64` or `i32` column indices
//! are narrowed on the GPU by [`DeviceCsr::from_signed_parts`].
use crate::device::{DeviceCsr, DeviceCsrParts};

/// A CSR matrix in device memory with a `u64` row pointer and `u32` column indices: every
/// constructor and accessor of [`DeviceCsr`], with `u64` pointers and host matrices of `u64`
/// indices ([`DeviceCsr::upload`] of a `Csr<u64, T>`).
pub type DeviceCsr64<T> = DeviceCsr<T, u64>;

/// The buffers of a [`DeviceCsr64`] with no promise about their contents (as
/// [`DeviceCsrParts`] for the 32-bit matrix).
pub type DeviceCsr64Parts<T> = DeviceCsrParts<T, u64>;
