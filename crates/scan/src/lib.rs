#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough: the GPU
/// handle [`Gpu`], scratch ([`gpu_runtime::Scratch`]), and cudarc (`gpu_runtime::cudarc`).
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

mod launch;
pub mod serial;

use std::marker::PhantomData;

use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, ValidAsZeroBits};
use gpu_runtime::scratch::Layout as ScratchLayout;
use gpu_runtime::{AnyBits, KernelOf, PtxModule, Scratch, ScratchBuf};
use scan_kernels::ScanArgs;

/// The embedded `scan` PTX module (built from `kernels-rs/scan`).
pub static MODULE: PtxModule = gpu_runtime::embed_module!("scan");

pub use scan_kernels::NT;

/// Items per tile (`NT` threads × 2 chunks × 4 items), from `kernels-rs/scan`.
pub const TILE: u64 = scan_kernels::NV as u64;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error from the runtime.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// Input and output lengths differ.
    #[error("scan: {what} has {got} items, expected {expected}")]
    LengthMismatch {
        /// What was measured (`output`).
        what: &'static str,
        /// The required length (the input's).
        expected: u64,
        /// The length given.
        got: u64,
    },
    /// More items than one launch can cover.
    #[error("scan: {what}: {len} exceeds the supported maximum of {max}")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Items asked for.
        len: u64,
        /// Largest supported length.
        max: u64,
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

/// Largest supported length: `(2^31 - 1)` tiles.
pub const MAX_LEN: u64 = (i32::MAX as u64) * TILE;

/// Item types the scan kernels are built for.
pub trait ScanItem: AnyBits + ValidAsZeroBits + Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The type's name in kernel symbols (`scan_lookback_u32`).
    const NAME: &'static str;
    /// The additive identity.
    const ZERO: Self;
    /// Wrapping addition.
    fn wrapping_add(self, other: Self) -> Self;
}

macro_rules! scan_item {
    ($($t:ty => $name:literal),*) => {$(
        impl ScanItem for $t {
            const NAME: &'static str = $name;
            const ZERO: Self = 0;
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
        }
    )*};
}
scan_item!(u32 => "u32", i32 => "i32", u64 => "u64", i64 => "i64");

/// How tiles get their carry-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// [`Algorithm::Lookback`] up to [`AUTO_LOOKBACK_MAX_LEN`] items (one launch beats three),
    /// [`Algorithm::ReduceThenScan`] above (measured 2.2x faster at 2^28 on an H100; see
    /// BENCHMARKS.md).
    #[default]
    Auto,
    /// Single pass with decoupled look-back: reads the input once, writes the output once, but
    /// each tile waits on its predecessors' published prefixes.
    Lookback,
    /// Multi-level: reduce tiles, scan tile totals recursively, scan tiles with carries (reads
    /// the input twice; no waiting between blocks).
    ReduceThenScan,
}

/// Largest length for which [`Algorithm::Auto`] picks the look-back scan (2^18: 11.3 us vs
/// 12.6 us for reduce-then-scan on an H100; at 2^20 reduce-then-scan wins, 12.4 us vs 18.3 us).
pub const AUTO_LOOKBACK_MAX_LEN: u64 = 1 << 18;

impl Algorithm {
    /// The concrete algorithm used for `n` items (resolves [`Algorithm::Auto`]).
    pub fn resolve(self, n: u64) -> Algorithm {
        match self {
            Algorithm::Auto if n <= AUTO_LOOKBACK_MAX_LEN => Algorithm::Lookback,
            Algorithm::Auto => Algorithm::ReduceThenScan,
            a => a,
        }
    }
}

/// Exclusive or inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanKind {
    /// `out[i] = x[0] + ... + x[i-1]`.
    Exclusive,
    /// `out[i] = x[0] + ... + x[i]`.
    Inclusive,
}

/// A reusable scan: the loaded kernels and a workspace that grows to the largest length seen.
/// All work is enqueued on the [`Gpu`]'s stream without synchronizing. The `*_with` calls run on
/// caller-lent [`Scratch`] of [`Scanner::workspace_bytes`] instead of the plan's own.
pub struct Scanner<T: ScanItem> {
    gpu: Gpu,
    algorithm: Algorithm,
    kernels: launch::Kernels,
    own: ScratchBuf,
    _t: PhantomData<T>,
}

impl<T: ScanItem> Scanner<T> {
    /// Loads the kernels for `T` (the module is loaded once per context).
    ///
    /// # Errors
    /// [`Error::Runtime`] when the module cannot be loaded.
    pub fn new(gpu: &Gpu, algorithm: Algorithm) -> Result<Self> {
        let k = |phase: &str| -> Result<KernelOf<ScanArgs<u8>>> { Ok(gpu.kernel_of(&MODULE, &format!("scan_{phase}_{}", T::NAME))?) };
        Ok(Self {
            gpu: gpu.clone(),
            algorithm,
            kernels: launch::Kernels { reduce: k("reduce")?, downsweep: k("downsweep")?, lookback: k("lookback")? },
            own: ScratchBuf::default(),
            _t: PhantomData,
        })
    }

    /// The algorithm in use.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Scratch bytes a scan of `n` items of `T` needs with `algorithm` (what the `*_with` calls
    /// take from their [`Scratch`], and what the plan's own workspace grows to).
    pub fn workspace_bytes(algorithm: Algorithm, n: u64) -> u64 {
        ScratchLayout::new().add(launch::Layout::new::<T>(algorithm.resolve(n), n).bytes).bytes()
    }

    /// Device bytes the plan's own workspace holds now.
    pub fn allocated_bytes(&self) -> u64 {
        self.own.bytes()
    }

    /// The handle (and so the stream) the plan enqueues on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Exclusive scan of `input` into `output` (same length).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLarge`] past [`MAX_LEN`], and runtime errors
    /// (out of memory for the workspace, launch failures).
    pub fn exclusive(&mut self, input: &impl DevicePtr<T>, output: &mut impl DevicePtrMut<T>) -> Result<()> {
        self.owned(input.len() as u64, |s, scratch| s.scan_with(ScanKind::Exclusive, input, output, scratch))
    }

    /// Inclusive scan of `input` into `output` (same length).
    ///
    /// # Errors
    /// As [`Scanner::exclusive`].
    pub fn inclusive(&mut self, input: &impl DevicePtr<T>, output: &mut impl DevicePtrMut<T>) -> Result<()> {
        self.owned(input.len() as u64, |s, scratch| s.scan_with(ScanKind::Inclusive, input, output, scratch))
    }

    /// Exclusive scan of `data` in place.
    ///
    /// # Errors
    /// As [`Scanner::exclusive`].
    pub fn exclusive_in_place(&mut self, data: &mut impl DevicePtrMut<T>) -> Result<()> {
        self.owned(data.len() as u64, |s, scratch| s.scan_in_place_with(ScanKind::Exclusive, data, scratch))
    }

    /// Inclusive scan of `data` in place.
    ///
    /// # Errors
    /// As [`Scanner::exclusive`].
    pub fn inclusive_in_place(&mut self, data: &mut impl DevicePtrMut<T>) -> Result<()> {
        self.owned(data.len() as u64, |s, scratch| s.scan_in_place_with(ScanKind::Inclusive, data, scratch))
    }

    /// Scan of `input` into `output` (same length) on caller-lent scratch of at least
    /// [`Scanner::workspace_bytes`]`(algorithm, n)` bytes.
    ///
    /// # Errors
    /// As [`Scanner::exclusive`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn scan_with(
        &mut self,
        kind: ScanKind,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let n = input.len() as u64;
        if output.len() as u64 != n {
            return Err(Error::LengthMismatch { what: "output", expected: n, got: output.len() as u64 });
        }
        self.check_len(n)?;
        launch::scan_into(&self.gpu, &self.kernels, self.algorithm.resolve(n), input, output, kind, scratch)
    }

    /// Scan of `data` in place on caller-lent scratch (see [`Scanner::scan_with`]).
    ///
    /// # Errors
    /// As [`Scanner::scan_with`].
    pub fn scan_in_place_with(&mut self, kind: ScanKind, data: &mut impl DevicePtrMut<T>, scratch: &mut Scratch<'_>) -> Result<()> {
        let n = data.len() as u64;
        self.check_len(n)?;
        launch::scan_in_place(&self.gpu, &self.kernels, self.algorithm.resolve(n), data, kind, scratch)
    }

    /// Runs `f` on the plan's own scratch, grown to what `n` items need.
    fn owned(&mut self, n: u64, f: impl FnOnce(&mut Self, &mut Scratch<'_>) -> Result<()>) -> Result<()> {
        let bytes = Self::workspace_bytes(self.algorithm, n.min(MAX_LEN));
        let gpu = self.gpu.clone();
        ScratchBuf::lend(self, |p| &mut p.own, &gpu, bytes, f)
    }

    fn check_len(&self, n: u64) -> Result<()> {
        if n > MAX_LEN {
            return Err(Error::TooLarge { what: "items", len: n, max: MAX_LEN });
        }
        Ok(())
    }
}

/// Exclusive scan of `input` into `output` with the default algorithm (allocates a workspace).
///
/// # Errors
/// As [`Scanner::exclusive`].
pub fn exclusive_sum<T: ScanItem>(gpu: &Gpu, input: &impl DevicePtr<T>, output: &mut impl DevicePtrMut<T>) -> Result<()> {
    Scanner::<T>::new(gpu, Algorithm::default())?.exclusive(input, output)
}

/// Inclusive scan of `input` into `output` with the default algorithm (allocates a workspace).
///
/// # Errors
/// As [`Scanner::exclusive`].
pub fn inclusive_sum<T: ScanItem>(gpu: &Gpu, input: &impl DevicePtr<T>, output: &mut impl DevicePtrMut<T>) -> Result<()> {
    Scanner::<T>::new(gpu, Algorithm::default())?.inclusive(input, output)
}

/// Exclusive scan in place with the default algorithm (allocates a workspace).
///
/// # Errors
/// As [`Scanner::exclusive`].
pub fn exclusive_sum_in_place<T: ScanItem>(gpu: &Gpu, data: &mut impl DevicePtrMut<T>) -> Result<()> {
    Scanner::<T>::new(gpu, Algorithm::default())?.exclusive_in_place(data)
}

/// Inclusive scan in place with the default algorithm (allocates a workspace).
///
/// # Errors
/// As [`Scanner::exclusive`].
pub fn inclusive_sum_in_place<T: ScanItem>(gpu: &Gpu, data: &mut impl DevicePtrMut<T>) -> Result<()> {
    Scanner::<T>::new(gpu, Algorithm::default())?.inclusive_in_place(data)
}
