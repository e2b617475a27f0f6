//! Machine code beside the PTX: per-architecture cubins (built by `cargo xtask build-ptx` with a
//! pinned `ptxas`, committed gzip-compressed under each host crate's `ptx/`), how the runtime
//! picks one for a device, and what it reports about each module it loaded.
//!
//! A cubin built for `sm_XY` runs on devices of compute capability `X.Z` with `Z ≥ Y` (NVIDIA's
//! binary compatibility rule), so the runtime takes the newest embedded cubin of the device's
//! major version whose minor version is not above the device's; a device with none (a newer
//! architecture) loads the PTX, which the driver compiles for it (and caches, unless
//! `CUDA_CACHE_DISABLE=1`).
use std::io::Read;
use std::time::Duration;

pub use crate::archs::{CUBIN_ARCHS, PTXAS_RELEASE};

/// One architecture's machine code of a module: a gzip-compressed cubin.
#[derive(Debug)]
pub struct Cubin {
    sm: u32,
    gz: &'static [u8],
}

impl Cubin {
    /// The cubin for `sm` (`90` for `sm_90`) held gzip-compressed in `gz`.
    pub const fn new(sm: u32, gz: &'static [u8]) -> Self {
        Self { sm, gz }
    }

    /// The architecture, as `10 * major + minor` (`90` for `sm_90`).
    pub fn sm(&self) -> u32 {
        self.sm
    }

    /// The compressed bytes as embedded.
    pub fn compressed(&self) -> &'static [u8] {
        self.gz
    }

    /// The cubin itself (an ELF file).
    ///
    /// # Errors
    /// The decompressor's error when the embedded bytes are not a gzip stream.
    pub fn decompress(&self) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.gz.len() * 4);
        flate2::read::GzDecoder::new(self.gz).read_to_end(&mut out)?;
        Ok(out)
    }

    /// Whether this cubin runs on a device of compute capability `cc` (same major version,
    /// minor version not above the device's).
    pub fn runs_on(&self, cc: (u32, u32)) -> bool {
        self.sm / 10 == cc.0 && self.sm % 10 <= cc.1
    }
}

/// The architecture a cubin was built for (`90` for `sm_90`), read from its ELF header, or `None`
/// when `elf` is not a 64-bit little-endian CUDA ELF (`e_machine` 190). Both header layouts are
/// read: the older ABI (OS/ABI 0x33) keeps the architecture in the low byte of `e_flags`, the
/// newer one (OS/ABI 0x41, used from sm_100 on) in the second byte.
///
/// ```
/// assert_eq!(gpu_runtime::cubin_arch(b"not an ELF file"), None);
/// ```
pub fn cubin_arch(elf: &[u8]) -> Option<u32> {
    if elf.len() < 64 || &elf[..4] != b"\x7fELF" || elf[4] != 2 || elf[5] != 1 {
        return None;
    }
    let machine = u16::from_le_bytes([elf[18], elf[19]]);
    if machine != 190 {
        return None;
    }
    let flags = u32::from_le_bytes([elf[48], elf[49], elf[50], elf[51]]);
    match elf[7] {
        0x33 => Some(flags & 0xff),
        0x41 => Some((flags >> 8) & 0xff),
        _ => None,
    }
}

/// Which image a module was loaded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Image {
    /// The embedded cubin for this architecture (`90`: `sm_90`): no compilation at load.
    Cubin {
        /// The cubin's architecture, `10 * major + minor`.
        sm: u32,
    },
    /// The PTX, compiled by the driver for the device at load (or taken from its JIT cache).
    Ptx,
}

impl std::fmt::Display for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Image::Cubin { sm } => write!(f, "sm_{sm} cubin"),
            Image::Ptx => f.write_str("PTX (driver JIT)"),
        }
    }
}

/// Which images the runtime may load ([`crate::Gpu::set_image_policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImagePolicy {
    /// The cubin matching the device when one is embedded, else the PTX (the default).
    #[default]
    Auto,
    /// Always the PTX (what `CUDA_FORCE_PTX_JIT=1` selects, as it does for NVIDIA's own
    /// libraries): for testing the fallback, or to take a newer driver's code generation. Note
    /// that the environment variable reaches the driver too: under it, on driver 580, cuBLAS and
    /// cuSPARSE failed to create their handles (measured on an H200); to take the PTX for this
    /// workspace's modules alone, call [`crate::Gpu::set_image_policy`] instead.
    PtxOnly,
}

impl ImagePolicy {
    /// [`ImagePolicy::PtxOnly`] when the environment sets `CUDA_FORCE_PTX_JIT=1` (the driver's
    /// documented switch for the same choice), else [`ImagePolicy::Auto`].
    pub fn from_env() -> Self {
        match std::env::var("CUDA_FORCE_PTX_JIT") {
            Ok(v) if v.trim() == "1" => ImagePolicy::PtxOnly,
            _ => ImagePolicy::Auto,
        }
    }
}

/// What loading one module did: the image taken and how long the driver took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleLoad {
    /// The module's name.
    pub module: &'static str,
    /// The image loaded.
    pub image: Image,
    /// Wall time of the load: decompression and the driver's load (its JIT compilation too,
    /// for the PTX).
    pub time: Duration,
    /// Why the PTX was loaded although the module embeds cubins (no cubin for this
    /// architecture, the policy, or the driver refusing the cubin); `None` for a cubin.
    pub why_ptx: Option<String>,
}
