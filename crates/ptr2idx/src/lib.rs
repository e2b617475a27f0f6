//! # gpu-ptr2idx
//!
//! Pointers-to-index on the GPU: from offsets of length `m + 1` (a CSR row pointer) to the segment
//! index of each of the `nnz` positions (the COO row index of each nonzero).
//!
//! Load balanced as moderngpu's load-balancing search: the work is the merge of the `m` segment
//! ends with the `nnz` positions, cut into tiles of [`ptr2idx_kernels::NV`]-equal size by
//! merge-path searches, so one very long row, millions of empty rows, `m = 0` and `nnz = 0` all
//! run at the same cost per item. The twin is [`serial::ptr2idx`].
//!
//! ```no_run
//! let gpu = gpu_runtime::Gpu::first()?;
//! let offsets = gpu.upload(&[0u32, 2, 2, 5])?;
//! let mut rows = gpu.alloc::<u32>(5)?;
//! gpu_ptr2idx::ptr2idx_checked(&gpu, &offsets, &mut rows)?;
//! assert_eq!(gpu.download(&rows)?, vec![0, 0, 2, 2, 2]);
//! # Ok::<(), gpu_ptr2idx::Error>(())
//! ```
#![deny(missing_docs)]

pub mod serial;

use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig};
use gpu_runtime::{grid_1d, Gpu, Kernel, PtxModule};

pub use ptr2idx_kernels::{merge_path, NT, NV};

/// The embedded `ptr2idx` PTX module (built from `kernels-rs/ptr2idx`).
pub static MODULE: PtxModule = PtxModule::new("ptr2idx", include_str!("../ptx/ptr2idx.ptx"));

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
        reason: &'static str,
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

/// A reusable pointers-to-index: loaded kernels and a partition workspace that grows as needed.
pub struct Ptr2Idx {
    gpu: Gpu,
    partition: Kernel,
    expand: Kernel,
    validate: Kernel,
    splits: Option<CudaSlice<u64>>,
}

impl Ptr2Idx {
    /// Loads the kernels (the module is loaded once per context).
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Ok(Self {
            gpu: gpu.clone(),
            partition: gpu.kernel(&MODULE, "ptr2idx_partition")?,
            expand: gpu.kernel(&MODULE, "ptr2idx_expand")?,
            validate: gpu.kernel(&MODULE, "ptr2idx_validate")?,
            splits: None,
        })
    }

    /// Workspace bytes for `m` segments and `nnz` positions (one split per tile boundary).
    pub fn workspace_bytes(m: u64, nnz: u64) -> u64 {
        8 * ((m + nnz).div_ceil(NV as u64) + 1)
    }

    /// Writes the segment of every position into `out` (`nnz = out.len()`); `m = offsets.len() - 1`.
    /// Enqueued without synchronizing. The offsets are trusted: if they are not valid (see
    /// [`serial::validate`]) the output is unspecified, and threads of a block may write the same
    /// shared-memory slot (compute-sanitizer's racecheck reports it), but nothing outside the
    /// buffers is read or written. Use [`Ptr2Idx::run_checked`] for untrusted offsets.
    pub fn run(&mut self, offsets: &impl DevicePtr<u32>, out: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let (m, nnz) = sizes(offsets.len(), out.len())?;
        if nnz == 0 {
            return Ok(());
        }
        let tiles = (m + nnz).div_ceil(NV as u64);
        let stream = self.gpu.stream().clone();
        let splits = self.gpu.grow(&mut self.splits, tiles as usize + 1)?.device_ptr(&stream).0;
        let (o, _r) = offsets.device_ptr(&stream);
        let (dst, _w) = out.device_ptr_mut(&stream);
        let max_blocks = self.gpu.props().sm_count.max(1) * 8;
        // SAFETY: ptr2idx_partition(offsets, m, nnz, tiles, splits): offsets holds m + 1 words,
        // splits tiles + 1.
        unsafe {
            self.partition.args(&stream).arg(&o).arg(&m).arg(&nnz).arg(&tiles).arg(&splits).launch(grid_1d(tiles + 1, NT, NT as u64, max_blocks))?
        };
        let cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: ptr2idx_expand(offsets, m, nnz, splits, out) with `tiles` blocks of NT threads;
        // out holds nnz words.
        unsafe { self.expand.args(&stream).arg(&o).arg(&m).arg(&nnz).arg(&splits).arg(&dst).launch(cfg)? };
        Ok(())
    }

    /// Validates the offsets on the GPU (starts at 0, never decreases, ends at `nnz`), then runs.
    /// Synchronizes once to read the verdict.
    pub fn run_checked(&mut self, offsets: &impl DevicePtr<u32>, out: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let (m, nnz) = sizes(offsets.len(), out.len())?;
        let mut flag = self.gpu.upload(&[u32::MAX])?;
        let stream = self.gpu.stream().clone();
        {
            let (o, _r) = offsets.device_ptr(&stream);
            let max_blocks = self.gpu.props().sm_count.max(1) * 8;
            // SAFETY: ptr2idx_validate(offsets, m, nnz, first_bad): offsets holds m + 1 words,
            // flag one word set to u32::MAX.
            unsafe { self.validate.args(&stream).arg(&o).arg(&m).arg(&nnz).arg(&mut flag).launch(grid_1d(m, NT, NT as u64, max_blocks))? };
        }
        let bad = self.gpu.download(&flag)?[0];
        if bad != u32::MAX {
            let reason = if (bad as u64) < m { "offsets decrease after this index" } else { "offsets must start at 0 and end at nnz" };
            return Err(Error::InvalidOffsets { index: bad as u64, reason });
        }
        self.run(offsets, out)
    }
}

fn sizes(offsets_len: usize, nnz: usize) -> Result<(u64, u64)> {
    let m = (offsets_len as u64).checked_sub(1).ok_or(Error::EmptyOffsets)?;
    if m >= u32::MAX as u64 {
        return Err(Error::TooLarge { what: "m", len: m });
    }
    if nnz as u64 > u32::MAX as u64 {
        return Err(Error::TooLarge { what: "nnz", len: nnz as u64 });
    }
    Ok((m, nnz as u64))
}

/// [`Ptr2Idx::run`] with a fresh workspace.
pub fn ptr2idx(gpu: &Gpu, offsets: &impl DevicePtr<u32>, out: &mut impl DevicePtrMut<u32>) -> Result<()> {
    Ptr2Idx::new(gpu)?.run(offsets, out)
}

/// [`Ptr2Idx::run_checked`] with a fresh workspace.
pub fn ptr2idx_checked(gpu: &Gpu, offsets: &impl DevicePtr<u32>, out: &mut impl DevicePtrMut<u32>) -> Result<()> {
    Ptr2Idx::new(gpu)?.run_checked(offsets, out)
}
