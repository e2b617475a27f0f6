#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough: the GPU
/// handle [`Gpu`], scratch ([`gpu_runtime::Scratch`]), and cudarc (`gpu_runtime::cudarc`).
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

mod launch;
pub mod serial;

use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use gpu_runtime::scratch::{Carver, Measure, ScratchSlice};
use gpu_runtime::{PtxModule, Scratch, ScratchBuf};

pub use ptr2idx_kernels::{merge_path, NT, NV};

/// The embedded `ptr2idx` PTX module (built from `kernels-rs/ptr2idx`).
pub static MODULE: PtxModule = gpu_runtime::embed_module!("ptr2idx");

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error from the runtime.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// Offsets need at least one entry (`m + 1` with `m >= 0`).
    #[error("ptr2idx: offsets are empty; they need m + 1 >= 1 entries")]
    EmptyOffsets,
    /// The offsets are not a valid pointer array for `nnz` positions.
    #[error("ptr2idx: invalid offsets at index {index}: {reason}")]
    InvalidOffsets {
        /// First offending index.
        index: u64,
        /// What is wrong.
        reason: String,
    },
    /// Sizes past what 32-bit indices hold.
    #[error("ptr2idx: {what} = {len} does not fit 32-bit indices")]
    TooLarge {
        /// Which size.
        what: &'static str,
        /// Its value.
        len: u64,
    },
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

/// A reusable pointers-to-index: loaded kernels and a partition workspace that grows as needed
/// (or caller-lent [`Scratch`] through the `*_with` calls). Enqueues on its [`Gpu`]'s stream.
pub struct Ptr2Idx {
    gpu: Gpu,
    k: launch::ByWidth,
    own: ScratchBuf,
}

/// Offset types [`Ptr2Idx`] takes: `u32`, and `u64` for more than `u32::MAX` positions (the
/// segment indices it writes stay `u32`: at most `u32::MAX - 1` segments).
pub use gpu_runtime::check::OffsetWord as Offset;

impl Ptr2Idx {
    /// Loads the kernels (the module is loaded once per context).
    ///
    /// # Errors
    /// [`Error::Runtime`] when the module cannot be loaded.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let k =
            |p, e| -> Result<launch::Kernels> { Ok(launch::Kernels { partition: gpu.kernel_of(&MODULE, p)?, expand: gpu.kernel_of(&MODULE, e)? }) };
        let k = launch::ByWidth { w32: k("ptr2idx_partition", "ptr2idx_expand")?, w64: k("ptr2idx_partition_u64", "ptr2idx_expand_u64")? };
        Ok(Self { gpu: gpu.clone(), k, own: ScratchBuf::default() })
    }

    /// Scratch bytes for `m` segments and `nnz` positions, for [`Ptr2Idx::run`] and
    /// [`Ptr2Idx::run_checked`] alike: one split per tile boundary, and the validation flags.
    pub fn workspace_bytes(m: u64, nnz: u64) -> u64 {
        Measure::bytes_of(|c| regions(c, m, nnz)).unwrap_or(u64::MAX)
    }

    /// Device bytes the plan's own workspace holds now.
    pub fn allocated_bytes(&self) -> u64 {
        self.own.bytes()
    }

    /// Writes the segment of every position into `out` (`nnz = out.len()`); `m = offsets.len() - 1`.
    /// Enqueued without synchronizing. The offsets are trusted: if they are not valid (see
    /// [`serial::validate`]) the output is unspecified, and threads of a block may write the same
    /// shared-memory slot (compute-sanitizer's racecheck reports it), but nothing outside the
    /// buffers is read or written. Use [`Ptr2Idx::run_checked`] for untrusted offsets.
    ///
    /// # Errors
    /// [`Error::EmptyOffsets`], [`Error::TooLarge`] for `u32::MAX` segments or more, or more
    /// positions than the offset type holds; runtime errors.
    pub fn run<O: Offset>(&mut self, offsets: &impl DevicePtr<O>, out: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let (m, nnz) = sizes::<O>(offsets.len(), out.len())?;
        self.owned(m, nnz, |p, s| p.run_with(offsets, out, s))
    }

    /// Validates the offsets on the GPU (starts at 0, never decreases, ends at `nnz`), then runs.
    /// Synchronizes to read the verdict.
    ///
    /// # Errors
    /// [`Error::InvalidOffsets`] naming the first bad position, and as [`Ptr2Idx::run`].
    pub fn run_checked<O: Offset>(&mut self, offsets: &impl DevicePtr<O>, out: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let (m, nnz) = sizes::<O>(offsets.len(), out.len())?;
        self.owned(m, nnz, |p, s| p.run_checked_with(offsets, out, s))
    }

    /// [`Ptr2Idx::run`] on caller-lent scratch of at least [`Ptr2Idx::workspace_bytes`].
    ///
    /// # Errors
    /// As [`Ptr2Idx::run`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn run_with<O: Offset>(&mut self, offsets: &impl DevicePtr<O>, out: &mut impl DevicePtrMut<u32>, scratch: &mut Scratch<'_>) -> Result<()> {
        let (m, nnz) = sizes::<O>(offsets.len(), out.len())?;
        scratch.require(Self::workspace_bytes(m, nnz))?;
        let Regions { mut splits, .. } = regions(scratch, m, nnz)?;
        self.expand_with(offsets, out, nnz, &mut splits)
    }

    /// The partition and expansion launches, on the carved splits (one per tile boundary).
    fn expand_with<O: Offset>(
        &mut self,
        offsets: &impl DevicePtr<O>,
        out: &mut impl DevicePtrMut<u32>,
        nnz: u64,
        splits: &mut ScratchSlice<'_, u64>,
    ) -> Result<()> {
        if nnz == 0 {
            return Ok(());
        }
        // The kernels of the offsets' width (u32 or u64, the two `Offset` types).
        let k = if std::mem::size_of::<O>() == 8 { &self.k.w64 } else { &self.k.w32 };
        launch::expand(&self.gpu, k, offsets, out, splits)
    }

    /// [`Ptr2Idx::run_checked`] on caller-lent scratch of at least [`Ptr2Idx::workspace_bytes`].
    ///
    /// # Errors
    /// As [`Ptr2Idx::run_checked`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn run_checked_with<O: Offset>(
        &mut self,
        offsets: &impl DevicePtr<O>,
        out: &mut impl DevicePtrMut<u32>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let (m, nnz) = sizes::<O>(offsets.len(), out.len())?;
        scratch.require(Self::workspace_bytes(m, nnz))?;
        let Regions { mut splits, mut check } = regions(scratch, m, nnz)?;
        let fault = gpu_runtime::check::offsets(&self.gpu, offsets, nnz, &mut check)?;
        if let Some(f) = fault {
            return Err(Error::InvalidOffsets { index: f.position(), reason: f.to_string() });
        }
        self.expand_with(offsets, out, nnz, &mut splits)
    }

    /// Runs `f` on the plan's own scratch, grown to what `(m, nnz)` needs.
    fn owned(&mut self, m: u64, nnz: u64, f: impl FnOnce(&mut Self, &mut Scratch<'_>) -> Result<()>) -> Result<()> {
        let gpu = self.gpu.clone();
        ScratchBuf::lend(self, |p| &mut p.own, &gpu, Self::workspace_bytes(m, nnz), f)
    }
}

/// The scratch of a call, in carving order: the tile splits (one per tile boundary, none
/// without positions), then the offsets check's flags (used by the checked form).
struct Regions<C: Carver> {
    splits: C::Slice<u64>,
    check: C::Sub,
}

/// The one description of [`Regions`] for `m` segments over `nnz` positions, measured
/// ([`Ptr2Idx::workspace_bytes`]) or carved.
fn regions<C: Carver>(c: &mut C, m: u64, nnz: u64) -> gpu_runtime::Result<Regions<C>> {
    let tiles = if nnz == 0 { 0 } else { (m + nnz).div_ceil(NV as u64) + 1 };
    Ok(Regions { splits: c.slice(tiles as usize)?, check: c.sub(gpu_runtime::check::WORKSPACE_BYTES)? })
}
/// `m` and `nnz`: at most `u32::MAX - 1` segments (the output is `u32`), and positions up to
/// what the offset type holds.
fn sizes<O: Offset>(offsets_len: usize, nnz: usize) -> Result<(u64, u64)> {
    let m = (offsets_len as u64).checked_sub(1).ok_or(Error::EmptyOffsets)?;
    if m >= u32::MAX as u64 {
        return Err(Error::TooLarge { what: "m", len: m });
    }
    if nnz as u64 > O::MAX {
        return Err(Error::TooLarge { what: "nnz", len: nnz as u64 });
    }
    Ok((m, nnz as u64))
}

/// [`Ptr2Idx::run`] with a fresh workspace.
///
/// # Errors
/// As [`Ptr2Idx::run`].
pub fn ptr2idx<O: Offset>(gpu: &Gpu, offsets: &impl DevicePtr<O>, out: &mut impl DevicePtrMut<u32>) -> Result<()> {
    Ptr2Idx::new(gpu)?.run(offsets, out)
}

/// [`Ptr2Idx::run_checked`] with a fresh workspace.
///
/// # Errors
/// As [`Ptr2Idx::run_checked`].
pub fn ptr2idx_checked<O: Offset>(gpu: &Gpu, offsets: &impl DevicePtr<O>, out: &mut impl DevicePtrMut<u32>) -> Result<()> {
    Ptr2Idx::new(gpu)?.run_checked(offsets, out)
}
