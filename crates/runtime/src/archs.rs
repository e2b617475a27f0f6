//! Which cubins are built and with which assembler. One source for the runtime and for
//! `cargo xtask build-ptx`, which includes this file (`#[path]`), so the two cannot disagree.
//! `gpu_runtime::embed_module!` names the same architectures; a test checks it.

/// The architectures `cargo xtask build-ptx` builds a cubin for (`sm_80`, `sm_86`, ...), as
/// `10 * major + minor`. With NVIDIA's binary compatibility rule (a cubin for `sm_XY` runs on
/// compute capability `X.Z`, `Z ≥ Y`) they cover every 8.x, 9.0, 10.x and 12.x device; others
/// (e.g. 11.0) load the PTX.
pub const CUBIN_ARCHS: [u32; 6] = [80, 86, 89, 90, 100, 120];

/// The `ptxas` release the committed cubins are built with (PyPI `nvidia-cuda-nvcc-cu12` of this
/// version): a CUDA 12 assembler, so its cubins load on CUDA 12 and 13 drivers alike.
pub const PTXAS_RELEASE: &str = "12.9.86";
