//! The one error type of `gpu-runtime`.
use cudarc::driver::DriverError;

/// Everything that can go wrong between the host and the GPU.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The CUDA driver library (`libcuda.so` / `nvcuda.dll`) could not be loaded.
    #[error("no CUDA driver found (libcuda could not be loaded); install the NVIDIA driver to use the GPU")]
    NoDriver,
    /// The driver is there but reports no usable device (or not the one asked for).
    #[error("no CUDA device {ordinal}: the driver reports {count} device(s)")]
    NoDevice {
        /// The device ordinal asked for.
        ordinal: usize,
        /// How many devices the driver reports.
        count: usize,
    },
    /// A device allocation failed for lack of memory.
    #[error("out of GPU memory: could not allocate {bytes} bytes ({what})")]
    OutOfMemory {
        /// Bytes asked for.
        bytes: u64,
        /// What the allocation was for.
        what: &'static str,
    },
    /// A buffer of this many elements does not fit in the address space or in a kernel's index type.
    #[error("{what}: {len} elements do not fit (at most {max})")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Elements asked for.
        len: u64,
        /// The largest supported count.
        max: u64,
    },
    /// Two lengths that must agree do not.
    #[error("length mismatch for {what}: expected {expected}, got {got}")]
    LengthMismatch {
        /// What was measured.
        what: &'static str,
        /// The required length.
        expected: u64,
        /// The length given.
        got: u64,
    },
    /// The driver refused a PTX module (bad PTX, or an architecture the driver cannot JIT for).
    #[error("could not load PTX module `{module}`: {source}")]
    PtxLoad {
        /// The module's name.
        module: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// A kernel symbol is missing from its module.
    #[error("kernel `{kernel}` not found in PTX module `{module}`: {source}")]
    KernelNotFound {
        /// The module's name.
        module: &'static str,
        /// The kernel's symbol.
        kernel: String,
        /// The driver's error.
        source: DriverError,
    },
    /// A kernel's PTX parameters differ from the argument struct the host loads it with
    /// ([`crate::Gpu::kernel_of`]): the host and kernel crates disagree.
    #[error("kernel `{kernel}`: {detail}")]
    KernelSignature {
        /// The kernel's symbol.
        kernel: String,
        /// The module, what its PTX declares and what the host passes.
        detail: String,
    },
    /// A kernel launch was refused, or an earlier asynchronous kernel fault surfaced at it.
    #[error("launch of kernel `{kernel}` failed: {source}")]
    Launch {
        /// The kernel's symbol.
        kernel: String,
        /// The driver's error.
        source: DriverError,
    },
    /// Caller-provided scratch memory does not start at an address aligned to `align` bytes
    /// (the kernels' widest loads and stores).
    #[error("scratch misaligned: lent memory at {addr:#x} is not aligned to {align} bytes")]
    ScratchMisaligned {
        /// The lent memory's address.
        addr: u64,
        /// The alignment required.
        align: u64,
    },
    /// A caller-provided scratch region is smaller than the plan needs for the call.
    #[error("scratch too small: {needed} bytes needed, {available} lent")]
    ScratchTooSmall {
        /// Bytes needed (the plan's `workspace_bytes` for the call).
        needed: u64,
        /// Bytes lent.
        available: u64,
    },
    /// A dense block's leading dimension below its row count.
    #[error("dense block of {rows} rows with leading dimension {ld}: the leading dimension must be at least the rows (and at least 1)")]
    LeadingDimension {
        /// Rows of the block.
        rows: u64,
        /// The leading dimension given.
        ld: u64,
    },
    /// A stream of another context was given to a handle ([`crate::Gpu::with_stream`]).
    #[error("the stream belongs to another CUDA context than this handle's")]
    ForeignStream,
    /// NCCL (the library for collectives over several GPUs) could not be loaded.
    #[error("NCCL not found: {0}")]
    NoNccl(String),
    /// A multi-process launch that cannot start: the launcher's variables malformed, or NCCL's
    /// id not shared (no channel, a file or socket failing or timing out); the message names
    /// the variable, path or address (`gpu_dist::bootstrap`).
    #[error("multi-process launch: {0}")]
    Bootstrap(String),
    /// An operation that needs every rank of its communicator in this process was given one
    /// that spans several processes (`gpu_dist::Comms::from_env`); names the operation.
    #[error("{0} is not available with one process per GPU yet: drive every GPU from one process (Comms::local)")]
    MultiProcess(&'static str),
    /// An NCCL call failed.
    #[error("NCCL error during {during}: {code}")]
    Nccl {
        /// The NCCL call.
        during: &'static str,
        /// NCCL's result code.
        code: String,
    },
    /// A step that the code's own logic guarantees failed: a bug in this workspace, reported
    /// rather than ignored.
    #[error("internal error (a bug in sptrans, please report it): {0}")]
    Internal(&'static str),
    /// Any other driver call failed.
    #[error("CUDA driver error during {during}: {source}")]
    Driver {
        /// What was being done.
        during: &'static str,
        /// The driver's error.
        source: DriverError,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps a driver error from the step `during`.
    pub fn driver(during: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |source| Error::Driver { during, source }
    }

    /// Wraps an allocation error: out-of-memory becomes [`Error::OutOfMemory`] with the size.
    pub fn alloc(bytes: u64, what: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |source| {
            if source.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                Error::OutOfMemory { bytes, what }
            } else {
                Error::Driver { during: what, source }
            }
        }
    }

    /// `true` for [`Error::NoDriver`] and [`Error::NoDevice`]: the machine has no usable GPU.
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, Error::NoDriver | Error::NoDevice { .. })
    }

    /// `true` when the device ran out of memory: [`Error::OutOfMemory`], or a driver call that
    /// failed with `CUDA_ERROR_OUT_OF_MEMORY`.
    pub fn is_out_of_memory(&self) -> bool {
        use cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY;
        match self {
            Error::OutOfMemory { .. } => true,
            Error::Driver { source, .. } | Error::Launch { source, .. } | Error::PtxLoad { source, .. } => source.0 == CUDA_ERROR_OUT_OF_MEMORY,
            _ => false,
        }
    }
}

/// Implements `From<$krate::Error>` for a crate's `Error`, lifting the other crate's
/// `Error::Runtime(e)` to this crate's `Error::Runtime(e)` (so out of memory and every driver
/// error keep one shape however deep they arose) and wrapping its other errors in `$variant`;
/// and `Error::is_out_of_memory`, asking `Error::Runtime` and every `$variant` (each lifted
/// crate's `Error` has its own `is_out_of_memory`), and `Error::is_no_gpu`. Invoke it once per
/// crate, listing every lifted crate.
///
/// ```
/// mod scan {
///     #[derive(Debug)]
///     pub enum Error { Runtime(gpu_runtime::Error), TooLong }
///     impl Error {
///         pub fn is_out_of_memory(&self) -> bool {
///             matches!(self, Error::Runtime(e) if e.is_out_of_memory())
///         }
///     }
/// }
/// #[derive(Debug)]
/// enum Error { Runtime(gpu_runtime::Error), Scan(scan::Error) }
/// gpu_runtime::lift_errors!(scan => Scan);
///
/// let e: Error = scan::Error::Runtime(gpu_runtime::Error::NoDriver).into();
/// assert!(matches!(e, Error::Runtime(gpu_runtime::Error::NoDriver)));
/// let e: Error = scan::Error::TooLong.into();
/// assert!(matches!(e, Error::Scan(scan::Error::TooLong)));
/// assert!(!e.is_out_of_memory());
/// let oom = Error::Runtime(gpu_runtime::Error::OutOfMemory { bytes: 1 << 40, what: "x" });
/// assert!(oom.is_out_of_memory());
/// ```
#[macro_export]
macro_rules! lift_errors {
    ($($krate:ident => $variant:ident),* $(,)?) => {
        $(
            impl From<$krate::Error> for Error {
                /// Runtime errors (out of memory among them) keep one shape: `Error::Runtime`.
                fn from(e: $krate::Error) -> Self {
                    match e {
                        $krate::Error::Runtime(r) => Error::Runtime(r),
                        e => Error::$variant(e),
                    }
                }
            }
        )*

        impl Error {
            /// `true` when the machine has no usable GPU (no driver, or no such device); lifted
            /// errors carry it as `Error::Runtime`.
            pub fn is_no_gpu(&self) -> bool {
                matches!(self, Error::Runtime(e) if e.is_no_gpu())
            }

            /// `true` when the device ran out of memory.
            pub fn is_out_of_memory(&self) -> bool {
                match self {
                    Error::Runtime(e) => e.is_out_of_memory(),
                    $(Error::$variant(e) => e.is_out_of_memory(),)*
                    #[allow(unreachable_patterns)]
                    _ => false,
                }
            }
        }
    };
}
