#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough: the GPU
/// handle [`Gpu`], scratch ([`gpu_runtime::Scratch`]), and cudarc (`gpu_runtime::cudarc`).
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

pub mod raw;
pub mod serial;

use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use gpu_runtime::scratch::{Carver, Measure};
use gpu_runtime::{PtxModule, Scratch, ScratchBuf};

use raw::{merge_pass, tile_count, MergeKernels};

pub use segmerge_kernels::{NT, NV, VT};

/// The embedded `segmerge` PTX module (built from `kernels-rs/segmerge`).
pub static MODULE: PtxModule = gpu_runtime::embed_module!("segmerge");

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error from the runtime.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// Buffers of different lengths.
    #[error("segmerge: {what} has {got} items, expected {expected}")]
    LengthMismatch {
        /// Which buffer.
        what: &'static str,
        /// Length required.
        expected: u64,
        /// Length given.
        got: u64,
    },
    /// More items than 32-bit positions address.
    #[error("segmerge: {what}: {len} exceeds the maximum of {max}")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Items given.
        len: u64,
        /// Largest supported.
        max: u64,
    },
    /// Runs must hold at least one item.
    #[error("segmerge: run length must be at least 1")]
    ZeroRun,
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

/// Most items one call handles (positions are 32-bit).
pub const MAX_LEN: u64 = u32::MAX as u64;

/// Loaded merge kernels and scratch kept for reuse (or caller-lent [`Scratch`] through the
/// `*_with` calls). Enqueues on its [`Gpu`]'s stream. The whole sort (block sorts, then merge
/// passes) is `gpu_segsort::Segsort::sort_pairs`, built on [`Segmerge::merge_pass_raw`].
pub struct Segmerge {
    gpu: Gpu,
    pairs: MergeKernels,
    keys: MergeKernels,
    own: ScratchBuf,
}

impl Segmerge {
    /// Loads the kernels (the module is loaded once per context).
    ///
    /// # Errors
    /// [`Error::Runtime`] when the module cannot be loaded.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let partition = gpu.kernel_of(&MODULE, "segmerge_partition_u32")?;
        Ok(Self {
            gpu: gpu.clone(),
            pairs: MergeKernels { partition: partition.clone(), merge: gpu.kernel_of(&MODULE, "segmerge_pairs_u32")?, key_bytes: 4 },
            keys: MergeKernels { partition, merge: gpu.kernel_of(&MODULE, "segmerge_keys_u32")?, key_bytes: 4 },
            own: ScratchBuf::default(),
        })
    }

    /// One merge pass on raw device addresses (`vals == 0`: keys only), for plans that carve
    /// their own ping-pong buffers (`gpu_segsort::Segsort::sort_pairs`).
    ///
    /// # Safety
    /// As [`raw::merge_pass`]: `keys`/`keys_out` (and `vals`/`vals_out` unless 0) hold `n` `u32`
    /// items and do not overlap; `splits` holds `tile_count(n, s) + 1` words.
    ///
    /// # Errors
    /// Launch errors.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn merge_pass_raw(&self, keys: u64, vals: u64, n: u64, s: u64, splits: u64, keys_out: u64, vals_out: u64) -> Result<()> {
        let k = if vals != 0 { &self.pairs } else { &self.keys };
        // SAFETY: forwarded to the caller; the kernel matches `vals`.
        unsafe { merge_pass(&self.gpu, k, keys, vals, n, s, splits, keys_out, vals_out)? };
        Ok(())
    }

    /// Scratch bytes of [`Segmerge::merge_pass_with`] for `n` items in runs of `s`.
    pub fn merge_pass_workspace_bytes(n: u64, s: u64) -> u64 {
        // A zero run length is refused by the pass itself; its size is that of runs of 1.
        Measure::bytes_of(|m| splits(m, n, s.max(1))).unwrap_or(u64::MAX)
    }

    /// Device bytes the plan's own workspace holds now.
    pub fn allocated_bytes(&self) -> u64 {
        self.own.bytes()
    }

    /// One merge pass with runs of `s` from `keys`/`values` into `keys_out`/`values_out`. Runs
    /// that are not sorted give an unspecified output (never an access outside the buffers).
    ///
    /// # Errors
    /// [`Error::ZeroRun`], [`Error::LengthMismatch`], [`Error::TooLarge`], runtime errors.
    pub fn merge_pass(
        &mut self,
        s: u64,
        keys: &impl DevicePtr<u32>,
        values: &impl DevicePtr<u32>,
        keys_out: &mut impl DevicePtrMut<u32>,
        values_out: &mut impl DevicePtrMut<u32>,
    ) -> Result<()> {
        self.owned(Self::merge_pass_workspace_bytes(keys.len() as u64, s), |m, sc| m.merge_pass_with(s, keys, values, keys_out, values_out, sc))
    }

    /// [`Segmerge::merge_pass`] on caller-lent scratch of [`Segmerge::merge_pass_workspace_bytes`].
    ///
    /// # Errors
    /// As [`Segmerge::merge_pass`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn merge_pass_with(
        &mut self,
        s: u64,
        keys: &impl DevicePtr<u32>,
        values: &impl DevicePtr<u32>,
        keys_out: &mut impl DevicePtrMut<u32>,
        values_out: &mut impl DevicePtrMut<u32>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let n = lengths(keys.len(), &[("values", values.len()), ("keys_out", keys_out.len()), ("values_out", values_out.len())])?;
        let mut splits = splits_for(n, s, scratch)?;
        Ok(raw::pass_pairs(&self.gpu, &self.pairs, s, (keys, values), keys_out, values_out, &mut splits)?)
    }

    /// Keys-only [`Segmerge::merge_pass`].
    ///
    /// # Errors
    /// As [`Segmerge::merge_pass`].
    pub fn merge_pass_keys(&mut self, s: u64, keys: &impl DevicePtr<u32>, keys_out: &mut impl DevicePtrMut<u32>) -> Result<()> {
        self.owned(Self::merge_pass_workspace_bytes(keys.len() as u64, s), |m, sc| m.merge_pass_keys_with(s, keys, keys_out, sc))
    }

    /// Keys-only [`Segmerge::merge_pass_with`].
    ///
    /// # Errors
    /// As [`Segmerge::merge_pass_with`].
    pub fn merge_pass_keys_with(
        &mut self,
        s: u64,
        keys: &impl DevicePtr<u32>,
        keys_out: &mut impl DevicePtrMut<u32>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let n = lengths(keys.len(), &[("keys_out", keys_out.len())])?;
        let mut splits = splits_for(n, s, scratch)?;
        Ok(raw::pass_keys(&self.gpu, &self.keys, s, keys, keys_out, &mut splits)?)
    }

    /// Runs `f` on the plan's own scratch, grown to `bytes`.
    fn owned(&mut self, bytes: u64, f: impl FnOnce(&mut Self, &mut Scratch<'_>) -> Result<()>) -> Result<()> {
        let gpu = self.gpu.clone();
        ScratchBuf::lend(self, |p| &mut p.own, &gpu, bytes, f)
    }
}

/// The scratch of one merge pass of runs of `s >= 1` over `n` items: one split per tile
/// boundary. The one description, measured ([`Segmerge::merge_pass_workspace_bytes`]) or
/// carved ([`splits_for`]).
fn splits<C: Carver>(c: &mut C, n: u64, s: u64) -> gpu_runtime::Result<C::Slice<u32>> {
    c.slice((tile_count(n, s) + 1) as usize)
}

/// The splits region of one merge pass of runs of `s` over `n` items.
fn splits_for<'s>(n: u64, s: u64, scratch: &mut Scratch<'s>) -> Result<gpu_runtime::scratch::ScratchSlice<'s, u32>> {
    if s == 0 {
        return Err(Error::ZeroRun);
    }
    Ok(splits(scratch, n, s)?)
}

fn lengths(n: usize, others: &[(&'static str, usize)]) -> Result<u64> {
    for &(what, len) in others {
        if len != n {
            return Err(Error::LengthMismatch { what, expected: n as u64, got: len as u64 });
        }
    }
    if n as u64 > MAX_LEN {
        return Err(Error::TooLarge { what: "items", len: n as u64, max: MAX_LEN });
    }
    Ok(n as u64)
}
