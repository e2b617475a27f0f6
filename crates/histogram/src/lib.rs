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
use gpu_scan::{ScanKind, Scanner};

pub use histogram_kernels::{partition_range, NT, VT, WARPS};

/// The embedded `histogram` PTX module (built from `kernels-rs/histogram`).
pub static MODULE: PtxModule = gpu_runtime::embed_module!("histogram");

/// Most bins a histogram may have: 2^31 (keys are `u32`; `u32::MAX` is never a valid key).
pub const MAX_BINS: u64 = 1 << 31;

/// Largest `bins` for which [`Strategy::Auto`] counts in shared memory (in slices of
/// [`SLICE_BINS`]; above, warp-aggregated global atomics win on an H100, see BENCHMARKS.md).
pub const AUTO_SHARED_MAX_BINS: u32 = 1 << 16;

/// Bins one block counts in shared memory at a time (64 KiB); more bins are counted in slices,
/// each reading all keys.
pub const SLICE_BINS: u32 = 1 << 14;

/// Shared memory a block spends on privatized copies when several fit (bytes).
const COPY_BUDGET: u32 = 32 << 10;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error from the runtime.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// An error of the scan used by index-to-pointers.
    #[error(transparent)]
    Scan(gpu_scan::Error),
    /// `bins` must be in `1..=2^31`.
    #[error("histogram: {bins} bins; bins must be in 1..=2^31")]
    InvalidBins {
        /// Bins asked for.
        bins: u64,
    },
    /// A buffer has the wrong length.
    #[error("histogram: {what} has {got} entries, expected {expected}")]
    LengthMismatch {
        /// Which buffer.
        what: &'static str,
        /// Length required.
        expected: u64,
        /// Length given.
        got: u64,
    },
    /// Too many keys for 32-bit counts and indices.
    #[error("histogram: {what} = {len} does not fit 32-bit counts (max {max})")]
    TooLarge {
        /// Which size.
        what: &'static str,
        /// Its value.
        len: u64,
        /// Largest supported value.
        max: u64,
    },
    /// A key is not below `bins` (checked calls only).
    #[error("histogram: key at index {index} is out of range (bins = {bins})")]
    KeyOutOfRange {
        /// Smallest index of an out-of-range key.
        index: u64,
        /// The number of bins.
        bins: u64,
    },
    /// The partitioned form needs at least one partition.
    #[error("histogram: parts must be at least 1")]
    ZeroParts,
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

gpu_runtime::lift_errors!(gpu_scan => Scan);

/// How [`Histogram::counts`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// [`Strategy::Shared`] up to [`AUTO_SHARED_MAX_BINS`] bins, [`Strategy::Global`] above.
    #[default]
    Auto,
    /// Privatized counts in shared memory, in slices of [`SLICE_BINS`] bins (falls back to
    /// global above `65535 * SLICE_BINS` bins).
    Shared,
    /// Warp-aggregated global atomics.
    Global,
}

/// A reusable histogram: loaded kernels, a scanner for index-to-pointers, and scratch kept for
/// reuse (the chunked vertical scan's sums, the checked calls' flag). Every call has a `*_with`
/// form that runs on caller-lent [`Scratch`] of the size its `*_workspace_bytes` gives; the
/// `checked` argument of those selects the `_checked` behaviour.
pub struct Histogram {
    gpu: Gpu,
    strategy: Strategy,
    k: launch::Kernels,
    scanner: Scanner<u32>,
    own: ScratchBuf,
    max_shared: u32,
}

/// Scratch of the checked calls' "first bad index" word.
const FLAG_BYTES: u64 = 4;

impl Histogram {
    /// Loads the kernels (the module is loaded once per context) with [`Strategy::Auto`].
    ///
    /// # Errors
    /// [`Error::Runtime`] when the module cannot be loaded.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Self::with_strategy(gpu, Strategy::Auto)
    }

    /// Loads the kernels with the given counting strategy.
    ///
    /// # Errors
    /// As [`Histogram::new`].
    pub fn with_strategy(gpu: &Gpu, strategy: Strategy) -> Result<Self> {
        let shared: gpu_runtime::KernelOf<histogram_kernels::CountArgs> = gpu.kernel_of(&MODULE, "histogram_shared")?;
        let max_shared = gpu.props().shared_per_block_optin.max(gpu.props().shared_per_block);
        shared.kernel().set_max_dynamic_shared(max_shared)?;
        Ok(Self {
            gpu: gpu.clone(),
            strategy,
            k: launch::Kernels {
                shared,
                global: gpu.kernel_of(&MODULE, "histogram_global")?,
                partition: gpu.kernel_of(&MODULE, "histogram_partition")?,
                vscan_reduce: gpu.kernel_of(&MODULE, "histogram_vscan_reduce")?,
                vscan: gpu.kernel_of(&MODULE, "histogram_vscan")?,
            },
            scanner: Scanner::new(gpu, gpu_scan::Algorithm::Auto)?,
            own: ScratchBuf::default(),
            max_shared,
        })
    }

    /// The counting strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Device bytes the plan's own workspace holds now.
    pub fn allocated_bytes(&self) -> u64 {
        self.own.bytes()
    }

    /// Scratch bytes of [`Histogram::counts_with`] (the checked form's flag).
    pub fn counts_workspace_bytes() -> u64 {
        measure(0)
    }

    /// Scratch bytes of [`Histogram::pointers_with`] for `bins` bins.
    pub fn pointers_workspace_bytes(bins: u64) -> u64 {
        measure(pointers_scan_bytes(bins))
    }

    /// Scratch bytes of [`Histogram::partitioned_with`] for `parts` partitions of `bins` bins.
    pub fn partitioned_workspace_bytes(&self, parts: u64, bins: u64) -> u64 {
        measure(self.vertical_scan_workspace_bytes(parts.saturating_add(1), bins))
    }

    /// Scratch bytes of [`Histogram::vertical_scan_with`] for a `rows × bins` table.
    pub fn vertical_scan_workspace_bytes(&self, rows: u64, bins: u64) -> u64 {
        if rows <= 1 || bins == 0 {
            return 0;
        }
        let chunks = vscan_chunks(rows, bins, self.gpu.props().sm_count);
        Measure::bytes_of(|m| vscan_sums(m, chunks, bins)).unwrap_or(u64::MAX)
    }

    /// Writes into `counts` (`bins = counts.len()`) how many keys equal each bin; keys `>= bins`
    /// are ignored.
    ///
    /// # Errors
    /// [`Error::InvalidBins`], [`Error::TooLarge`] past 2^32 keys, runtime errors.
    pub fn counts(&mut self, keys: &impl DevicePtr<u32>, counts: &mut impl DevicePtrMut<u32>) -> Result<()> {
        self.owned(Self::counts_workspace_bytes(), |h, s| h.counts_with(keys, counts, false, s))
    }

    /// [`Histogram::counts`], then [`Error::KeyOutOfRange`] if a key is `>= bins` (synchronizes).
    ///
    /// # Errors
    /// As [`Histogram::counts`], and [`Error::KeyOutOfRange`].
    pub fn counts_checked(&mut self, keys: &impl DevicePtr<u32>, counts: &mut impl DevicePtrMut<u32>) -> Result<()> {
        self.owned(Self::counts_workspace_bytes(), |h, s| h.counts_with(keys, counts, true, s))
    }

    /// [`Histogram::counts`] (or, with `checked`, [`Histogram::counts_checked`]) on caller-lent
    /// scratch of [`Histogram::counts_workspace_bytes`].
    ///
    /// # Errors
    /// As [`Histogram::counts_checked`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn counts_with(
        &mut self,
        keys: &impl DevicePtr<u32>,
        counts: &mut impl DevicePtrMut<u32>,
        checked: bool,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let bins = check_bins(counts.len() as u64)?;
        check_keys(keys.len())?;
        let Regions { flag, .. } = regions(scratch, 0)?;
        let mut flag = self.flag(checked, flag)?;
        self.gpu.memset_bytes(counts, 0)?;
        launch::count(&self.gpu, &self.k, self.strategy, self.max_shared, keys, bins, counts, flag.as_mut())?;
        self.verdict(flag, bins as u64)
    }

    /// Index-to-pointers: `ptr` (`bins + 1` entries) becomes the exclusive scan of the counts,
    /// with `ptr[bins]` = number of keys in range. Keys `>= bins` are ignored.
    ///
    /// # Errors
    /// As [`Histogram::counts`].
    pub fn pointers(&mut self, keys: &impl DevicePtr<u32>, ptr: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let bytes = Self::pointers_workspace_bytes((ptr.len() as u64).saturating_sub(1));
        self.owned(bytes, |h, s| h.pointers_with(keys, ptr, false, s))
    }

    /// [`Histogram::pointers`], then [`Error::KeyOutOfRange`] if a key is `>= bins`.
    ///
    /// # Errors
    /// As [`Histogram::counts_checked`].
    pub fn pointers_checked(&mut self, keys: &impl DevicePtr<u32>, ptr: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let bytes = Self::pointers_workspace_bytes((ptr.len() as u64).saturating_sub(1));
        self.owned(bytes, |h, s| h.pointers_with(keys, ptr, true, s))
    }

    /// [`Histogram::pointers`] (checked or not) on caller-lent scratch of
    /// [`Histogram::pointers_workspace_bytes`].
    ///
    /// # Errors
    /// As [`Histogram::pointers_checked`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn pointers_with(
        &mut self,
        keys: &impl DevicePtr<u32>,
        ptr: &mut impl DevicePtrMut<u32>,
        checked: bool,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let bins = check_bins((ptr.len() as u64).saturating_sub(1))?;
        check_keys(keys.len())?;
        scratch.require(Self::pointers_workspace_bytes(bins as u64))?;
        let Regions { flag, mut nested } = regions(scratch, pointers_scan_bytes(bins as u64))?;
        let mut flag = self.flag(checked, flag)?;
        self.gpu.memset_bytes(ptr, 0)?;
        launch::count(&self.gpu, &self.k, self.strategy, self.max_shared, keys, bins, ptr, flag.as_mut())?;
        // ptr[bins] is still zero, so the exclusive scan leaves the total there.
        self.scanner.scan_in_place_with(ScanKind::Exclusive, ptr, &mut nested)?;
        self.verdict(flag, bins as u64)
    }

    /// The partitioned form: splits the keys into `parts` contiguous partitions
    /// ([`partition_range`]); `table` (`(parts + 1) × bins`, row-major, `bins = table.len() /
    /// (parts + 1)`) gets the vertically scanned per-partition counts (row `p`: keys equal to
    /// each bin in partitions `< p`; row `parts`: the totals) and `intra[i]` the rank of key `i`
    /// among equal keys of its partition (`u32::MAX` for keys `>= bins`). As
    /// [`serial::partitioned`].
    ///
    /// One warp walks each partition, so `parts` of a few thousand or more keeps the GPU busy;
    /// the table costs `4 * (parts + 1) * bins` bytes.
    ///
    /// # Errors
    /// [`Error::ZeroParts`], [`Error::LengthMismatch`], [`Error::InvalidBins`],
    /// [`Error::TooLarge`], runtime errors.
    pub fn partitioned(
        &mut self,
        keys: &impl DevicePtr<u32>,
        parts: u64,
        table: &mut impl DevicePtrMut<u32>,
        intra: &mut impl DevicePtrMut<u32>,
    ) -> Result<()> {
        let bytes = self.partitioned_workspace_bytes(parts, table.len() as u64 / parts.saturating_add(1).max(2));
        self.owned(bytes, |h, s| h.partitioned_with(keys, parts, table, intra, false, s))
    }

    /// [`Histogram::partitioned`], then [`Error::KeyOutOfRange`] if a key is `>= bins`.
    ///
    /// # Errors
    /// As [`Histogram::partitioned`], and [`Error::KeyOutOfRange`].
    pub fn partitioned_checked(
        &mut self,
        keys: &impl DevicePtr<u32>,
        parts: u64,
        table: &mut impl DevicePtrMut<u32>,
        intra: &mut impl DevicePtrMut<u32>,
    ) -> Result<()> {
        let bytes = self.partitioned_workspace_bytes(parts, table.len() as u64 / parts.saturating_add(1).max(2));
        self.owned(bytes, |h, s| h.partitioned_with(keys, parts, table, intra, true, s))
    }

    /// [`Histogram::partitioned`] (checked or not) on caller-lent scratch of
    /// [`Histogram::partitioned_workspace_bytes`].
    ///
    /// # Errors
    /// As [`Histogram::partitioned_checked`], and [`gpu_runtime::Error::ScratchTooSmall`].
    #[allow(clippy::too_many_arguments)]
    pub fn partitioned_with(
        &mut self,
        keys: &impl DevicePtr<u32>,
        parts: u64,
        table: &mut impl DevicePtrMut<u32>,
        intra: &mut impl DevicePtrMut<u32>,
        checked: bool,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        if parts == 0 {
            return Err(Error::ZeroParts);
        }
        let n = check_keys(keys.len())?;
        let rows = parts.checked_add(1).ok_or(Error::TooLarge { what: "parts", len: parts, max: u32::MAX as u64 })?;
        let bins = check_bins(table.len() as u64 / rows)?;
        if table.len() as u64 != rows * bins as u64 {
            return Err(Error::LengthMismatch { what: "table", expected: rows * bins as u64, got: table.len() as u64 });
        }
        if intra.len() as u64 != n {
            return Err(Error::LengthMismatch { what: "intra", expected: n, got: intra.len() as u64 });
        }
        let blocks = (parts * 32).div_ceil(NT as u64);
        if blocks > i32::MAX as u64 {
            return Err(Error::TooLarge { what: "parts", len: parts, max: (i32::MAX as u64) * WARPS as u64 });
        }
        scratch.require(self.partitioned_workspace_bytes(parts, bins as u64))?;
        let Regions { flag, mut nested } = regions(scratch, self.vertical_scan_workspace_bytes(rows, bins as u64))?;
        let mut flag = self.flag(checked, flag)?;
        self.gpu.memset_bytes(table, 0)?;
        launch::partition(&self.gpu, &self.k, keys, bins, parts, table, intra, flag.as_mut())?;
        self.vertical_scan_with(table, rows, bins as u64, &mut nested)?;
        self.verdict(flag, bins as u64)
    }

    /// Inclusive scan down every column of a row-major `rows × bins` table (row 0 is the start
    /// and stays as is), as [`serial::vertical_scan`]. With few columns the rows are split into
    /// chunks so the whole GPU works (scratch of `(chunks + 1) × bins` words, kept).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLarge`], runtime errors.
    pub fn vertical_scan(&mut self, table: &mut impl DevicePtrMut<u32>, rows: u64, bins: u64) -> Result<()> {
        let bytes = self.vertical_scan_workspace_bytes(rows, bins);
        self.owned(bytes, |h, s| h.vertical_scan_with(table, rows, bins, s))
    }

    /// [`Histogram::vertical_scan`] on caller-lent scratch of
    /// [`Histogram::vertical_scan_workspace_bytes`].
    ///
    /// # Errors
    /// As [`Histogram::vertical_scan`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn vertical_scan_with(&mut self, table: &mut impl DevicePtrMut<u32>, rows: u64, bins: u64, scratch: &mut Scratch<'_>) -> Result<()> {
        let len = rows.checked_mul(bins).ok_or(Error::TooLarge { what: "rows * bins", len: rows, max: u64::MAX / bins.max(1) })?;
        if table.len() as u64 != len {
            return Err(Error::LengthMismatch { what: "table", expected: len, got: table.len() as u64 });
        }
        if rows <= 1 || bins == 0 {
            return Ok(());
        }
        let col_blocks = bins.div_ceil(NT as u64);
        if col_blocks > i32::MAX as u64 {
            return Err(Error::TooLarge { what: "bins", len: bins, max: MAX_BINS });
        }
        let chunks = vscan_chunks(rows, bins, self.gpu.props().sm_count);
        let mut sums = vscan_sums(scratch, chunks, bins)?;
        launch::vertical_scan(&self.gpu, &self.k, table, rows, bins, chunks, sums.as_mut())
    }

    /// Runs `f` on the plan's own scratch, grown to `bytes`.
    fn owned(&mut self, bytes: u64, f: impl FnOnce(&mut Self, &mut Scratch<'_>) -> Result<()>) -> Result<()> {
        let gpu = self.gpu.clone();
        ScratchBuf::lend(self, |p| &mut p.own, &gpu, bytes, f)
    }

    /// The "first bad index" word of a checked call (carved from the scratch, set to
    /// `u32::MAX`), or none (the word is carved either way: the layouts count it).
    fn flag<'s>(&self, checked: bool, mut flag: ScratchSlice<'s, u32>) -> Result<Option<ScratchSlice<'s, u32>>> {
        if !checked {
            return Ok(None);
        }
        self.gpu.memset_bytes(&mut flag, 0xFF)?;
        Ok(Some(flag))
    }

    /// Reads a checked call's flag (synchronizes) and reports the first bad key.
    fn verdict(&self, flag: Option<ScratchSlice<'_, u32>>, bins: u64) -> Result<()> {
        let Some(flag) = flag else { return Ok(()) };
        let bad = self.gpu.download(&flag)?;
        match bad.first() {
            Some(&i) if i != u32::MAX => Err(Error::KeyOutOfRange { index: i as u64, bins }),
            _ => Ok(()),
        }
    }
}

/// Row chunks for a vertical scan of `rows × bins`: enough columns × chunks to fill the GPU
/// (2048 threads per SM), at least 8 rows per chunk, at most 65535 chunks.
fn vscan_chunks(rows: u64, bins: u64, sms: u32) -> u64 {
    let want = (sms.max(1) as u64 * 2048).div_ceil(bins.max(1));
    want.min(rows / 8).clamp(1, 65_535)
}

fn check_bins(bins: u64) -> Result<u32> {
    if bins == 0 || bins > MAX_BINS {
        return Err(Error::InvalidBins { bins });
    }
    Ok(bins as u32)
}

fn check_keys(n: usize) -> Result<u64> {
    if n as u64 > u32::MAX as u64 {
        return Err(Error::TooLarge { what: "keys", len: n as u64, max: u32::MAX as u64 });
    }
    Ok(n as u64)
}

/// [`Histogram::counts`] with fresh kernels.
///
/// # Errors
/// As [`Histogram::counts`].
pub fn histogram(gpu: &Gpu, keys: &impl DevicePtr<u32>, counts: &mut impl DevicePtrMut<u32>) -> Result<()> {
    Histogram::new(gpu)?.counts(keys, counts)
}

/// [`Histogram::pointers`] with fresh kernels.
///
/// # Errors
/// As [`Histogram::pointers`].
pub fn index_to_pointers(gpu: &Gpu, keys: &impl DevicePtr<u32>, ptr: &mut impl DevicePtrMut<u32>) -> Result<()> {
    Histogram::new(gpu)?.pointers(keys, ptr)
}

/// The scratch of a counting call, in carving order: the "first bad index" flag (carved whether
/// or not the call is checked: the layouts count it), then a nested plan's scratch of `nested`
/// bytes (the pointers' scan, the partitioned table's vertical scan; none for the counts).
struct Regions<C: Carver> {
    flag: C::Slice<u32>,
    nested: C::Sub,
}

/// The one description of [`Regions`], measured or carved.
fn regions<C: Carver>(c: &mut C, nested: u64) -> gpu_runtime::Result<Regions<C>> {
    Ok(Regions { flag: c.slice((FLAG_BYTES / 4) as usize)?, nested: c.sub(nested)? })
}

/// [`Regions`] with a nested scratch of `nested` bytes, measured.
fn measure(nested: u64) -> u64 {
    Measure::bytes_of(|m| regions(m, nested)).unwrap_or(u64::MAX)
}

/// The scan's scratch of index-to-pointers over `bins` bins (`bins + 1` words scanned).
fn pointers_scan_bytes(bins: u64) -> u64 {
    Scanner::<u32>::workspace_bytes(gpu_scan::Algorithm::Auto, bins + 1)
}

/// The vertical scan's chunk sums: `(chunks + 1) × bins` words, none for one chunk.
fn vscan_sums<C: Carver>(c: &mut C, chunks: u64, bins: u64) -> gpu_runtime::Result<Option<C::Slice<u32>>> {
    if chunks <= 1 {
        return Ok(None);
    }
    Ok(Some(c.slice(((chunks + 1) * bins) as usize)?))
}
