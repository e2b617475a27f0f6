#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub mod archive;
pub mod compress;
pub mod device;
pub mod device64;
pub mod dist;
mod formats;
pub mod generate;
pub mod mm;
pub mod npz;
mod value;
pub mod view;

pub use formats::{check_fits, transpose_parts, try_transpose_parts, Coo, Csc, Csr, Index};
pub use num_complex;
pub use value::{Field, Raw, Value};
pub use view::{AsDeviceCsrView, DeviceCsr64View, DeviceCsrPartsMut, DeviceCsrView, PendingCsrView};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A SciPy `.npz` archive (`scipy.sparse.save_npz`) was malformed or of an unread format.
    #[error("npz: {0}")]
    Npz(String),
    /// A tar archive (SuiteSparse's `NAME.tar.gz`) was malformed or held no `NAME/NAME.mtx`.
    #[error("tar archive: {0}")]
    Archive(String),
    /// A Matrix Market input was refused.
    #[error("line {line}: {msg}")]
    Parse {
        /// 1-based line number.
        line: u64,
        /// What was wrong.
        msg: String,
    },
    /// An array has the wrong length.
    #[error("{what} has {got} entries, expected {expected}")]
    LengthMismatch {
        /// Which array.
        what: &'static str,
        /// Length required.
        expected: u64,
        /// Length given.
        got: u64,
    },
    /// The pointer array is not valid.
    #[error("invalid pointers at index {index}: {reason}")]
    BadPointers {
        /// First offending index.
        index: u64,
        /// What is wrong.
        reason: String,
    },
    /// An index is not inside the dimension.
    #[error("index {index} at position {position} is out of range (dimension {bound})")]
    IndexOutOfRange {
        /// Position in the index array.
        position: u64,
        /// The index.
        index: u64,
        /// The dimension it must be below.
        bound: u64,
    },
    /// Indices are not strictly increasing inside a row (or column).
    #[error("indices of slice {slice} are not sorted and unique (at position {position})")]
    NotSorted {
        /// The row (CSR) or column (CSC).
        slice: u64,
        /// Position in the index array.
        position: u64,
    },
    /// An entry of a caller's pointer or index array (e.g. PyTorch's or SciPy's `int64`) is
    /// negative or does not fit the index type.
    #[error("{what} at position {position} is {value}: {}", if *value < 0 { "negative".to_string() } else { format!("above the index type's maximum {max}") })]
    BadIndexValue {
        /// Which array (`pointer` or `index`).
        what: &'static str,
        /// Position in that array.
        position: u64,
        /// The entry.
        value: i128,
        /// The index type's largest value.
        max: u64,
    },
    /// A device array does not start at an address aligned as the kernels need
    /// ([`view::VIEW_ALIGN`] bytes).
    #[error("{what} starts at device address {addr:#x}, which is not a multiple of {align} bytes")]
    Misaligned {
        /// Which array.
        what: &'static str,
        /// Its address.
        addr: u64,
        /// The alignment required.
        align: u64,
    },
    /// A size does not fit the index type.
    #[error("{what} = {len} is too large for the index type (max {max})")]
    TooLarge {
        /// Which size.
        what: &'static str,
        /// Its value.
        len: u64,
        /// The largest allowed.
        max: u64,
    },
    /// A file could not be opened.
    #[error("{}: {source}", path.display())]
    Open {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Host memory ran out (a reservation failed; nothing was aborted).
    #[error("out of host memory: could not reserve {bytes} bytes for the {what}")]
    HostMemory {
        /// Bytes asked for.
        bytes: u64,
        /// What they were for.
        what: &'static str,
    },
    /// The matrix would need more host memory than allowed (the memory available, or a limit the
    /// caller set), found from its size line before anything was allocated.
    #[error("{rows} x {cols} with {entries} entries needs about {} of host memory, more than the {} allowed (the memory available, or the limit set)", human_bytes(*.need), human_bytes(*.limit))]
    MemoryLimit {
        /// Rows.
        rows: u64,
        /// Columns.
        cols: u64,
        /// Entries (after symmetric expansion).
        entries: u64,
        /// Bytes the estimate says reading needs.
        need: u64,
        /// The limit.
        limit: u64,
    },
    /// A generator parameter is out of its domain.
    #[error("{what}: {msg}")]
    InvalidParameter {
        /// The parameter.
        what: &'static str,
        /// What is wrong.
        msg: String,
    },
    /// A caller refused the matrix from its sizes (e.g. not enough device memory), with why.
    #[error("{0}")]
    Refused(String),
    /// A device error.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// `true` when the device ran out of memory.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Error::Runtime(e) if e.is_out_of_memory())
    }

    /// `true` when the machine has no usable GPU (no driver, or no such device).
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, Error::Runtime(e) if e.is_no_gpu())
    }
}

/// `bytes` as a short human-readable size (`1.5 GB`, powers of 10).
pub fn human_bytes(bytes: u64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}
