#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub use gpu_runtime::{
    AnyBits, DenseView, DenseViewMut, DeviceProps, DeviceView, DeviceViewMut, Gpu, GpuTimer, Payload, Scratch, ScratchBuf, copy_bandwidth_gbs,
    device_count, driver_present,
};
pub use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
pub use sptrans_matrix::device64::{DeviceCsr64, DeviceCsr64Parts};
pub use sptrans_matrix::{AsDeviceCsrView, DeviceCsr64View, DeviceCsrPartsMut, DeviceCsrView, PendingCsrView};
pub use sptrans_matrix::{Coo, Csc, Csr, Value, generate, mm};

/// The CSRC layout: one copy of a matrix with fast `A·X` and `Aᵀ·U` (`gpu-csrc`).
pub use gpu_csrc as csrc;
/// The driver layer: [`Gpu`], module loading and images, scratch, timing, validation
/// (`gpu-runtime`).
pub use gpu_runtime as runtime;
/// Sparse matrix-vector products in every classic format: [`spmv::Spmv`] (`gpu-spmv`).
pub use gpu_spmv as spmv;
/// Truncated SVD by block Golub–Kahan–Lanczos on CSRC products (`gpu-svd`).
pub use gpu_svd as svd;
/// CSR → CSC transposition: [`transpose::Transposer`] with every algorithm, the serial twin and
/// the cuSPARSE baseline (`gpu-transpose`).
pub use gpu_transpose as transpose;
/// Host and device matrices, Matrix Market, generators (`sptrans-matrix`).
pub use sptrans_matrix as matrix;

/// More than one GPU over NCCL (loaded at run time; `SPTRANS_NCCL_LIB` points at it): the
/// communicators of one process's GPUs or of one process per GPU ([`dist::Comms`]), matrices in
/// row blocks over them ([`dist::DistCsr`]), their transpose ([`dist::DistTransposer`]) and
/// products ([`dist::DistSpmv`]), bit for bit the one-GPU results, and the truncated SVD
/// ([`dist::svd`]), the one-GPU σ within rounding.
pub mod dist {
    pub use gpu_dist::bootstrap::{self, RankEnv};
    pub use gpu_dist::comm::Comms;
    pub use gpu_spmv::dist::{DistSpmv, XGather};
    pub use gpu_svd::dist::svd;
    pub use gpu_transpose::dist::{DistTransposer, Exchange};
    pub use sptrans_matrix::dist::{AsDistCsrView, DistCsr, DistCsrView, balanced_starts, even_starts};
}

/// The GPU primitives the algorithms are built from, each usable alone on its own stream and
/// scratch.
pub mod primitives {
    /// Histograms and index-to-pointers (`gpu-histogram`).
    pub use gpu_histogram as histogram;
    /// Pointers to indices, merge-path balanced (`gpu-ptr2idx`).
    pub use gpu_ptr2idx as ptr2idx;
    /// Stable LSD radix sort of keys with payloads (`gpu-radix`).
    pub use gpu_radix as radix;
    /// Prefix sums (`gpu-scan`).
    pub use gpu_scan as scan;
    /// Stable merge-path merge passes (`gpu-segmerge`).
    pub use gpu_segmerge as segmerge;
    /// Stable segmented and whole sorts (`gpu-segsort`).
    pub use gpu_segsort as segsort;
}

/// Every error of the toolkit. Each part's errors keep their own type inside (`Error::Transpose`
/// holds a [`transpose::Error`], ...), while driver errors, out of memory among them, always
/// arrive as [`Error::Runtime`], however deep they arose.
#[derive(thiserror::Error)]
pub enum Error {
    /// The driver, a device allocation (out of memory), a launch.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// Host or device matrices, Matrix Market files, generators.
    #[error(transparent)]
    Matrix(sptrans_matrix::Error),
    /// A transposer.
    #[error(transparent)]
    Transpose(gpu_transpose::Error),
    /// An SpMV plan or product.
    #[error(transparent)]
    Spmv(gpu_spmv::Error),
    /// A CSRC conversion or product.
    #[error(transparent)]
    Csrc(gpu_csrc::Error),
    /// The truncated SVD.
    #[error(transparent)]
    Svd(gpu_svd::Error),
    /// A prefix sum.
    #[error(transparent)]
    Scan(gpu_scan::Error),
    /// A histogram.
    #[error(transparent)]
    Histogram(gpu_histogram::Error),
    /// Pointers to indices.
    #[error(transparent)]
    Ptr2Idx(gpu_ptr2idx::Error),
    /// A segmented sort.
    #[error(transparent)]
    Segsort(gpu_segsort::Error),
    /// A merge pass.
    #[error(transparent)]
    Segmerge(gpu_segmerge::Error),
    /// A radix sort.
    #[error(transparent)]
    Radix(gpu_radix::Error),
}

gpu_runtime::lift_errors!(
    sptrans_matrix => Matrix,
    gpu_transpose => Transpose,
    gpu_spmv => Spmv,
    gpu_csrc => Csrc,
    gpu_svd => Svd,
    gpu_scan => Scan,
    gpu_histogram => Histogram,
    gpu_ptr2idx => Ptr2Idx,
    gpu_segsort => Segsort,
    gpu_segmerge => Segmerge,
    gpu_radix => Radix,
);

/// The message first, then the variant: `fn main() -> sptrans::Result<()>` returning an error
/// prints what went wrong, not only `Runtime(NoDriver)`.
impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (variant, inner): (&str, &dyn std::fmt::Debug) = match self {
            Error::Runtime(e) => ("Runtime", e),
            Error::Matrix(e) => ("Matrix", e),
            Error::Transpose(e) => ("Transpose", e),
            Error::Spmv(e) => ("Spmv", e),
            Error::Csrc(e) => ("Csrc", e),
            Error::Svd(e) => ("Svd", e),
            Error::Scan(e) => ("Scan", e),
            Error::Histogram(e) => ("Histogram", e),
            Error::Ptr2Idx(e) => ("Ptr2Idx", e),
            Error::Segsort(e) => ("Segsort", e),
            Error::Segmerge(e) => ("Segmerge", e),
            Error::Radix(e) => ("Radix", e),
        };
        write!(f, "{self}\n  ({variant}({inner:?}))")
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_keep_one_shape_and_print_their_message() {
        let e: Error = gpu_runtime::Error::NoDriver.into();
        assert!(e.is_no_gpu() && !e.is_out_of_memory());
        let debug = format!("{e:?}");
        assert!(debug.starts_with("no CUDA driver found") && debug.contains("Runtime(NoDriver)"), "{debug}");
        // A part's runtime error is lifted to Error::Runtime.
        let oom = gpu_runtime::Error::OutOfMemory { bytes: 1 << 40, what: "test" };
        let e: Error = gpu_transpose::Error::Runtime(oom).into();
        assert!(matches!(e, Error::Runtime(_)) && e.is_out_of_memory() && !e.is_no_gpu());
        let e: Error = gpu_spmv::Error::Runtime(gpu_runtime::Error::NoDevice { ordinal: 3, count: 1 }).into();
        assert!(e.is_no_gpu());
        // Other errors keep their part's type.
        let e: Error = "fast".parse::<transpose::Algorithm>().unwrap_err().into();
        assert!(matches!(e, Error::Transpose(_)) && e.to_string().contains("fast"));
    }
}
