//! # gpu-histogram
//!
//! Histograms of `u32` keys on the GPU, index-to-pointers, and the partitioned counts and ranks
//! that ScanTrans (Wang, Liu & Hou, ICS'16) is built on. The twin is [`serial`].
//!
//! - [`Histogram::counts`]: counts of keys in `[0, bins)` for any `bins` from 1 to 2^31.
//!   [`Strategy::Shared`]: per-block privatized copies in shared memory (several per block for
//!   few bins, against contention; slices of [`SLICE_BINS`] bins, each reading all keys, for more
//!   bins), flushed with one global atomic per nonzero bin;
//!   [`Strategy::Global`]: warp-aggregated global atomics (`match.any`: one atomic per distinct
//!   key of a warp) for bins that do not fit. [`Strategy::Auto`] picks by `bins`.
//! - [`Histogram::pointers`]: index-to-pointers, `bins + 1` offsets (counts, then an exclusive
//!   scan with `gpu-scan`): the CSR row pointer from row indices, the CSC column pointer from
//!   column indices.
//! - [`Histogram::partitioned`]: `parts` contiguous partitions of the keys; a `(parts + 1) ×
//!   bins` table (`inter`: after the vertical scan, row `p` counts each key in partitions
//!   `< p`) and every key's rank among equal keys of its partition (`intra`).
//!   [`Histogram::vertical_scan`] is public for tables built elsewhere.
//!
//! Keys `>= bins` are not counted; the `_checked` calls report the first one as
//! [`Error::KeyOutOfRange`] (they synchronize once to read the verdict; the others enqueue on the
//! [`Gpu`]'s stream without synchronizing).
//!
//! ```no_run
//! use gpu_histogram::{serial, Histogram};
//! let gpu = gpu_runtime::Gpu::first()?;
//! let keys = gpu.upload(&[2u32, 0, 2, 1, 2])?;
//! let mut h = Histogram::new(&gpu)?;
//! let mut counts = gpu.alloc::<u32>(3)?;
//! h.counts_checked(&keys, &mut counts)?;
//! assert_eq!(gpu.download(&counts)?, vec![1, 1, 3]);
//! let mut ptr = gpu.alloc::<u32>(4)?; // bins + 1
//! h.pointers(&keys, &mut ptr)?;
//! assert_eq!(gpu.download(&ptr)?, vec![0, 1, 2, 5]);
//! assert_eq!(gpu.download(&ptr)?, serial::index_to_pointers(&[2, 0, 2, 1, 2], 3));
//! # Ok::<(), gpu_histogram::Error>(())
//! ```
#![deny(missing_docs)]

pub mod serial;

use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig};
use gpu_runtime::{Gpu, Kernel, PtxModule};
use gpu_scan::Scanner;

pub use histogram_kernels::{partition_range, NT, VT, WARPS};

/// The embedded `histogram` PTX module (built from `kernels-rs/histogram`).
pub static MODULE: PtxModule = PtxModule::new("histogram", include_str!("../ptx/histogram.ptx"));

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
    Scan(#[from] gpu_scan::Error),
    /// `bins` must be in `1..=2^31`.
    #[error("histogram: {bins} bins; bins must be in 1..=2^31")]
    InvalidBins {
        /// Bins asked for.
        bins: u64,
    },
    /// A buffer has the wrong length.
    #[error("histogram: {what} has {actual} entries, expected {expected}")]
    LengthMismatch {
        /// Which buffer.
        what: &'static str,
        /// Length required.
        expected: u64,
        /// Length given.
        actual: u64,
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

/// A reusable histogram: loaded kernels, a scanner for index-to-pointers and the scratch of the
/// chunked vertical scan, kept for reuse.
pub struct Histogram {
    gpu: Gpu,
    strategy: Strategy,
    shared: Kernel,
    global: Kernel,
    partition: Kernel,
    vscan_reduce: Kernel,
    vscan: Kernel,
    scanner: Scanner<u32>,
    sums: Option<CudaSlice<u32>>,
    max_shared: u32,
}

/// A null device pointer (kernels treat it as "absent").
const NULL: u64 = 0;

impl Histogram {
    /// Loads the kernels (the module is loaded once per context) with [`Strategy::Auto`].
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Self::with_strategy(gpu, Strategy::Auto)
    }

    /// Loads the kernels with the given counting strategy.
    pub fn with_strategy(gpu: &Gpu, strategy: Strategy) -> Result<Self> {
        let shared = gpu.kernel(&MODULE, "histogram_shared")?;
        let max_shared = gpu.props().shared_per_block_optin.max(gpu.props().shared_per_block);
        shared.set_max_dynamic_shared(max_shared)?;
        Ok(Self {
            gpu: gpu.clone(),
            strategy,
            shared,
            global: gpu.kernel(&MODULE, "histogram_global")?,
            partition: gpu.kernel(&MODULE, "histogram_partition")?,
            vscan_reduce: gpu.kernel(&MODULE, "histogram_vscan_reduce")?,
            vscan: gpu.kernel(&MODULE, "histogram_vscan")?,
            scanner: Scanner::new(gpu, gpu_scan::Algorithm::Auto)?,
            sums: None,
            max_shared,
        })
    }

    /// The counting strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Writes into `counts` (`bins = counts.len()`) how many keys equal each bin; keys `>= bins`
    /// are ignored.
    pub fn counts(&mut self, keys: &impl DevicePtr<u32>, counts: &mut impl DevicePtrMut<u32>) -> Result<()> {
        self.counts_flag(keys, counts, NULL)
    }

    /// [`Histogram::counts`], then [`Error::KeyOutOfRange`] if a key is `>= bins`.
    pub fn counts_checked(&mut self, keys: &impl DevicePtr<u32>, counts: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let bins = counts.len() as u64;
        self.checked(bins, |h, flag| h.counts_flag(keys, counts, flag))
    }

    fn counts_flag(&mut self, keys: &impl DevicePtr<u32>, counts: &mut impl DevicePtrMut<u32>, flag: u64) -> Result<()> {
        let bins = check_bins(counts.len() as u64)?;
        let n = check_keys(keys.len())?;
        self.gpu.memset_bytes(counts, 0)?;
        let stream = self.gpu.stream().clone();
        let (k, _r) = keys.device_ptr(&stream);
        let (c, _w) = counts.device_ptr_mut(&stream);
        self.count_raw(k, n, bins, c, flag)
    }

    /// Index-to-pointers: `ptr` (`bins + 1` entries) becomes the exclusive scan of the counts,
    /// with `ptr[bins]` = number of keys in range. Keys `>= bins` are ignored.
    pub fn pointers(&mut self, keys: &impl DevicePtr<u32>, ptr: &mut impl DevicePtrMut<u32>) -> Result<()> {
        self.pointers_flag(keys, ptr, NULL)
    }

    /// [`Histogram::pointers`], then [`Error::KeyOutOfRange`] if a key is `>= bins`.
    pub fn pointers_checked(&mut self, keys: &impl DevicePtr<u32>, ptr: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let bins = (ptr.len() as u64).saturating_sub(1);
        self.checked(bins, |h, flag| h.pointers_flag(keys, ptr, flag))
    }

    fn pointers_flag(&mut self, keys: &impl DevicePtr<u32>, ptr: &mut impl DevicePtrMut<u32>, flag: u64) -> Result<()> {
        let bins = check_bins((ptr.len() as u64).saturating_sub(1))?;
        let n = check_keys(keys.len())?;
        self.gpu.memset_bytes(ptr, 0)?;
        {
            let stream = self.gpu.stream().clone();
            let (k, _r) = keys.device_ptr(&stream);
            let (c, _w) = ptr.device_ptr_mut(&stream);
            self.count_raw(k, n, bins, c, flag)?;
        }
        // ptr[bins] is still zero, so the exclusive scan leaves the total there.
        self.scanner.exclusive_in_place(ptr)?;
        Ok(())
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
    pub fn partitioned(&mut self, keys: &impl DevicePtr<u32>, parts: u64, table: &mut impl DevicePtrMut<u32>, intra: &mut impl DevicePtrMut<u32>) -> Result<()> {
        self.partitioned_flag(keys, parts, table, intra, NULL)
    }

    /// [`Histogram::partitioned`], then [`Error::KeyOutOfRange`] if a key is `>= bins`.
    pub fn partitioned_checked(&mut self, keys: &impl DevicePtr<u32>, parts: u64, table: &mut impl DevicePtrMut<u32>, intra: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let bins = (table.len() as u64) / (parts.max(1) + 1);
        self.checked(bins, |h, flag| h.partitioned_flag(keys, parts, table, intra, flag))
    }

    fn partitioned_flag(&mut self, keys: &impl DevicePtr<u32>, parts: u64, table: &mut impl DevicePtrMut<u32>, intra: &mut impl DevicePtrMut<u32>, flag: u64) -> Result<()> {
        if parts == 0 {
            return Err(Error::ZeroParts);
        }
        let n = check_keys(keys.len())?;
        let rows = parts.checked_add(1).ok_or(Error::TooLarge { what: "parts", len: parts, max: u32::MAX as u64 })?;
        let bins = check_bins(table.len() as u64 / rows)?;
        if table.len() as u64 != rows * bins as u64 {
            return Err(Error::LengthMismatch { what: "table", expected: rows * bins as u64, actual: table.len() as u64 });
        }
        if intra.len() as u64 != n {
            return Err(Error::LengthMismatch { what: "intra", expected: n, actual: intra.len() as u64 });
        }
        let blocks = (parts * 32).div_ceil(NT as u64);
        if blocks > i32::MAX as u64 {
            return Err(Error::TooLarge { what: "parts", len: parts, max: (i32::MAX as u64) * WARPS as u64 });
        }
        self.gpu.memset_bytes(table, 0)?;
        {
            let stream = self.gpu.stream().clone();
            let (k, _r) = keys.device_ptr(&stream);
            let (t, _w) = table.device_ptr_mut(&stream);
            let (i, _w2) = intra.device_ptr_mut(&stream);
            let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
            if n > 0 {
                // SAFETY: histogram_partition(keys, n, bins, parts, table, intra, first_bad):
                // keys/intra hold n words, table (parts + 1) * bins zeroed words, flag null or
                // one word; parts warps in blocks of NT.
                unsafe { self.partition.args(&stream).arg(&k).arg(&n).arg(&bins).arg(&parts).arg(&t).arg(&i).arg(&flag).launch(cfg)? };
            }
        }
        self.vertical_scan(table, rows, bins as u64)
    }

    /// Inclusive scan down every column of a row-major `rows × bins` table (row 0 is the start
    /// and stays as is), as [`serial::vertical_scan`]. With few columns the rows are split into
    /// chunks so the whole GPU works (scratch of `(chunks + 1) × bins` words, kept).
    pub fn vertical_scan(&mut self, table: &mut impl DevicePtrMut<u32>, rows: u64, bins: u64) -> Result<()> {
        let len = rows.checked_mul(bins).ok_or(Error::TooLarge { what: "rows * bins", len: rows, max: u64::MAX / bins.max(1) })?;
        if table.len() as u64 != len {
            return Err(Error::LengthMismatch { what: "table", expected: len, actual: table.len() as u64 });
        }
        if rows <= 1 || bins == 0 {
            return Ok(());
        }
        let col_blocks = bins.div_ceil(NT as u64);
        if col_blocks > i32::MAX as u64 {
            return Err(Error::TooLarge { what: "bins", len: bins, max: MAX_BINS });
        }
        let chunks = vscan_chunks(rows, bins, self.gpu.props().sm_count);
        let rpc = rows.div_ceil(chunks);
        let stream = self.gpu.stream().clone();
        let (t, _w) = table.device_ptr_mut(&stream);
        let grid = |c: u64| LaunchConfig { grid_dim: (col_blocks as u32, c as u32, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
        if chunks == 1 {
            // SAFETY: histogram_vscan(table, bins, rows, rows_per_chunk, carries): table holds
            // rows * bins words, carries null; grid (col_blocks, 1).
            unsafe { self.vscan.args(&stream).arg(&t).arg(&bins).arg(&rows).arg(&rpc).arg(&NULL).launch(grid(1))? };
            return Ok(());
        }
        let sums_len = ((chunks + 1) * bins) as usize;
        let s = self.gpu.grow(&mut self.sums, sums_len)?.device_ptr(&stream).0;
        // Row c of the scanned sums = total of chunks < c: chunk c's carry.
        let (sum_rows, sum_rpc) = (chunks + 1, chunks + 1);
        // SAFETY: sums holds (chunks + 1) * bins words; grids as each kernel documents.
        unsafe {
            self.vscan_reduce.args(&stream).arg(&t).arg(&bins).arg(&rows).arg(&rpc).arg(&s).launch(grid(chunks))?;
            self.vscan.args(&stream).arg(&s).arg(&bins).arg(&sum_rows).arg(&sum_rpc).arg(&NULL).launch(grid(1))?;
            self.vscan.args(&stream).arg(&t).arg(&bins).arg(&rows).arg(&rpc).arg(&s).launch(grid(chunks))?;
        }
        Ok(())
    }

    /// Enqueues the counting kernel for `n` keys at `keys` into `bins` zeroed counts at `counts`.
    fn count_raw(&mut self, keys: u64, n: u64, bins: u32, counts: u64, flag: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let props = self.gpu.props();
        let sms = props.sm_count.max(1) as u64;
        let vec_ok = (keys % 16 == 0) as u32;
        let by_n = n.div_ceil((NT * VT) as u64);
        let stream = self.gpu.stream().clone();
        let slice = bins.min(SLICE_BINS);
        let slices = bins.div_ceil(slice);
        let use_shared = match self.strategy {
            Strategy::Auto => bins <= AUTO_SHARED_MAX_BINS,
            Strategy::Shared => true,
            Strategy::Global => false,
        } && slices <= 65_535
            && slice * 4 <= self.max_shared;
        if use_shared {
            let copies = (COPY_BUDGET / (slice * 4)).clamp(1, WARPS);
            let smem = copies * slice * 4;
            let per_sm = (props.shared_per_sm / (smem + 1024)).clamp(1, 8) as u64;
            // Each block flushes `slice` counts: keep that well below the keys it counts.
            let flush_cap = (n / (8 * slice as u64)).max(sms);
            let blocks = by_n.min(sms * per_sm).min(flush_cap).max(1);
            let cfg = LaunchConfig { grid_dim: (blocks as u32, slices, 1), block_dim: (NT, 1, 1), shared_mem_bytes: smem };
            // SAFETY: histogram_shared(keys, n, bins, slice, copies, counts, first_bad, vec_ok):
            // keys holds n words (aligned when vec_ok), counts bins words, flag null or one
            // word, grid.y = ceil(bins / slice), copies * slice words of dynamic shared memory
            // (at most 64 KiB; limit raised in `with_strategy`).
            unsafe { self.shared.args(&stream).arg(&keys).arg(&n).arg(&bins).arg(&slice).arg(&copies).arg(&counts).arg(&flag).arg(&vec_ok).launch(cfg)? };
        } else {
            let blocks = by_n.min(sms * 8);
            let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
            // SAFETY: histogram_global(keys, n, bins, counts, first_bad, vec_ok): as above,
            // without shared memory.
            unsafe { self.global.args(&stream).arg(&keys).arg(&n).arg(&bins).arg(&counts).arg(&flag).arg(&vec_ok).launch(cfg)? };
        }
        Ok(())
    }

    /// Runs `body` with a fresh "first bad index" word, then reports it.
    fn checked(&mut self, bins: u64, body: impl FnOnce(&mut Self, u64) -> Result<()>) -> Result<()> {
        let flag = self.gpu.upload(&[u32::MAX])?;
        let f = flag.device_ptr(self.gpu.stream()).0;
        body(self, f)?;
        let bad = self.gpu.download(&flag)?[0];
        if bad != u32::MAX {
            return Err(Error::KeyOutOfRange { index: bad as u64, bins });
        }
        Ok(())
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
pub fn histogram(gpu: &Gpu, keys: &impl DevicePtr<u32>, counts: &mut impl DevicePtrMut<u32>) -> Result<()> {
    Histogram::new(gpu)?.counts(keys, counts)
}

/// [`Histogram::pointers`] with fresh kernels.
pub fn index_to_pointers(gpu: &Gpu, keys: &impl DevicePtr<u32>, ptr: &mut impl DevicePtrMut<u32>) -> Result<()> {
    Histogram::new(gpu)?.pointers(keys, ptr)
}
