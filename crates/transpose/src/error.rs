//! The one error type of `gpu-transpose`; the primitives' runtime errors are lifted into
//! [`Error::Runtime`], so out of memory has one shape.
/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error, wherever it arose (the primitives' runtime errors are
    /// lifted here, so out of memory always has this one shape).
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// From pointers-to-index.
    #[error(transparent)]
    Ptr2Idx(gpu_ptr2idx::Error),
    /// From the histogram.
    #[error(transparent)]
    Histogram(gpu_histogram::Error),
    /// From the scan.
    #[error(transparent)]
    Scan(gpu_scan::Error),
    /// From the radix sort.
    #[error(transparent)]
    Radix(gpu_radix::Error),
    /// From the sort.
    #[error(transparent)]
    Sort(gpu_segsort::Error),
    /// From the matrix crate (the serial path's download and upload, output allocation).
    #[error(transparent)]
    Matrix(sptrans_matrix::Error),
    /// A length that must agree does not (the output's buffers against the transposed shape,
    /// a pointer against its rows, ...): the same shape as every crate's `LengthMismatch`.
    #[error("transpose: {what} is {got}, expected {expected}")]
    LengthMismatch {
        /// Which size.
        what: &'static str,
        /// Required.
        expected: u64,
        /// Given.
        got: u64,
    },
    /// A size past what the indices (or cuSPARSE's `int`) hold.
    #[error("{what} = {len} is too large (at most {max})")]
    TooLarge {
        /// Which size.
        what: &'static str,
        /// Its value.
        len: u64,
        /// The largest allowed.
        max: u64,
    },
    /// Values of this size are unsupported (1, 2, 4, 8 and 16 bytes are; pattern matrices have
    /// none), or cuSPARSE cannot take them.
    #[error("values of {bytes} bytes are unsupported here (1, 2, 4, 8 or 16 bytes, or a pattern matrix; cuSPARSE may refuse some)")]
    UnsupportedValue {
        /// Size of one value.
        bytes: usize,
    },
    /// cuSPARSE could not be loaded.
    #[error("cuSPARSE is not available: {0}")]
    CuSparseUnavailable(String),
    /// A cuSPARSE call failed.
    #[error("{call} failed: {status}")]
    CuSparse {
        /// The call.
        call: &'static str,
        /// Its status.
        status: String,
    },
    /// An algorithm name that [`crate::Algorithm`]`::from_str` does not know.
    #[error("unknown algorithm `{0}` (auto, serial, scan, merge, radix, sym, cusparse, coo)")]
    UnknownAlgorithm(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

gpu_runtime::lift_cusparse_errors!();
gpu_runtime::lift_errors!(gpu_ptr2idx => Ptr2Idx, gpu_histogram => Histogram, gpu_scan => Scan, gpu_segsort => Sort, gpu_radix => Radix, sptrans_matrix => Matrix);
