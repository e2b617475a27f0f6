#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough: the GPU
/// handle [`Gpu`], scratch ([`gpu_runtime::Scratch`]), and cudarc (`gpu_runtime::cudarc`).
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

mod launch;
pub mod serial;

use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use gpu_runtime::scratch::{Carver, Measure};
use gpu_runtime::{KernelOf, PtxModule, Scratch, ScratchBuf};
use gpu_segmerge::raw::MergeKernels;
use gpu_segmerge::Segmerge;
use segsort_kernels::{PackArgs, SortArgs};

pub use segsort_kernels::VT;

/// The embedded `segsort` PTX module (built from `kernels-rs/segsort`).
pub static MODULE: PtxModule = gpu_runtime::embed_module!("segsort");

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error from the runtime.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// Invalid offsets for [`Segsort::sort_segments`], or another pointers-to-index error.
    #[error(transparent)]
    Offsets(gpu_ptr2idx::Error),
    /// An error of the merge passes.
    #[error(transparent)]
    Merge(gpu_segmerge::Error),
    /// Buffers of different lengths.
    #[error("segsort: {what} has {got} items, expected {expected}")]
    LengthMismatch {
        /// Which buffer.
        what: &'static str,
        /// Length required.
        expected: u64,
        /// Length given.
        got: u64,
    },
    /// More items than 32-bit positions address.
    #[error("segsort: {what}: {len} exceeds the maximum of {max}")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Items given.
        len: u64,
        /// Largest supported.
        max: u64,
    },
    /// Not a supported segment size.
    #[error("segsort: no kernel for segments of {0} items (use 128, 256, 512, 1024 or 2048)")]
    BadBlockSize(u32),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

gpu_runtime::lift_errors!(gpu_segmerge => Merge, gpu_ptr2idx => Offsets);

/// Most items one call sorts (positions are 32-bit).
pub const MAX_LEN: u64 = u32::MAX as u64;

/// Tile sizes with a kernel: the whole tile (a run of items sorted by one thread block) sits in that block's shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TileSize {
    /// 128 items, 16 threads.
    T128,
    /// 256 items, 32 threads.
    T256,
    /// 512 items, 64 threads.
    T512,
    /// 1024 items, 128 threads.
    T1024,
    /// 2048 items, 256 threads (the default).
    #[default]
    T2048,
}

impl TileSize {
    /// Every size, smallest first.
    pub const ALL: [TileSize; 5] = [TileSize::T128, TileSize::T256, TileSize::T512, TileSize::T1024, TileSize::T2048];

    /// Items per segment.
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(self) -> u32 {
        128 << self as u32
    }

    /// Threads per block (`len / VT`).
    pub const fn threads(self) -> u32 {
        self.len() / VT
    }

    /// The size for `len` items, if there is a kernel for it.
    ///
    /// # Errors
    /// [`Error::BadBlockSize`] for a size without a kernel.
    pub fn from_len(len: u32) -> Result<Self> {
        Self::ALL.into_iter().find(|b| b.len() == len).ok_or(Error::BadBlockSize(len))
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Loaded segment-sort kernels and the scratch of [`Segsort::sort_segments`], kept for reuse.
pub struct Segsort {
    gpu: Gpu,
    pairs: Vec<KernelOf<SortArgs<u32>>>,
    keys: Vec<KernelOf<SortArgs<u32>>>,
    pairs64: KernelOf<SortArgs<u64>>,
    keys64: KernelOf<SortArgs<u64>>,
    merge_pairs64: MergeKernels,
    merge_keys64: MergeKernels,
    pack: KernelOf<PackArgs>,
    unpack: KernelOf<PackArgs>,
    p2i: Ptr2Idx,
    segmerge: Segmerge,
    tile: TileSize,
    own: ScratchBuf,
}

impl Segsort {
    /// Loads the kernels (the module is loaded once per context).
    ///
    /// # Errors
    /// [`Error::Runtime`] when the module cannot be loaded.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        fn k<A: Copy>(gpu: &Gpu, name: &str) -> Result<KernelOf<A>> {
            Ok(gpu.kernel_of(&MODULE, name)?)
        }
        let sized = |kind: &str| -> Result<Vec<KernelOf<SortArgs<u32>>>> {
            TileSize::ALL.iter().map(|b| k(gpu, &format!("segsort_{kind}_{}", b.len()))).collect()
        };
        Ok(Self {
            gpu: gpu.clone(),
            pairs: sized("pairs")?,
            keys: sized("keys")?,
            pairs64: k(gpu, "segsort_pairs64_2048")?,
            keys64: k(gpu, "segsort_keys64_2048")?,
            merge_pairs64: MergeKernels { partition: k(gpu, "segsort_merge_partition64")?, merge: k(gpu, "segsort_merge_pairs64")?, key_bytes: 8 },
            merge_keys64: MergeKernels { partition: k(gpu, "segsort_merge_partition64")?, merge: k(gpu, "segsort_merge_keys64")?, key_bytes: 8 },
            pack: k(gpu, "segsort_pack")?,
            unpack: k(gpu, "segsort_unpack")?,
            p2i: Ptr2Idx::new(gpu)?,
            segmerge: Segmerge::new(gpu)?,
            tile: TileSize::T2048,
            own: ScratchBuf::default(),
        })
    }

    /// [`Segsort::new`] whose whole sorts ([`Segsort::sort_pairs`]) start from segments of
    /// `tile` items.
    ///
    /// # Errors
    /// As [`Segsort::new`].
    pub fn with_tile(gpu: &Gpu, tile: TileSize) -> Result<Self> {
        Ok(Self { tile, ..Self::new(gpu)? })
    }

    /// Scratch bytes of [`Segsort::sort_pairs_with`] (`with_values`) or
    /// [`Segsort::sort_keys_with`] for `n` items: the keys' (and values') ping-pong copies and
    /// the merge passes' tile splits.
    pub fn sort_workspace_bytes(&self, n: u64, with_values: bool) -> u64 {
        Measure::bytes_of(|m| launch::sort_regions(m, n, self.tile.len() as u64, with_values)).unwrap_or(u64::MAX)
    }

    /// Stable sort of the pairs by key, in place, any length: block sorts of [`TileSize`]
    /// items, then merge passes (`gpu-segmerge`), ping-ponging with scratch so that the result
    /// lands in the caller's buffers whatever the number of passes.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLarge`], runtime errors.
    pub fn sort_pairs(&mut self, keys: &mut impl DevicePtrMut<u32>, values: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let bytes = self.sort_workspace_bytes(keys.len() as u64, true);
        self.owned(bytes, |s, sc| s.sort_pairs_with(keys, values, sc))
    }

    /// Stable sort of keys, in place.
    ///
    /// # Errors
    /// As [`Segsort::sort_pairs`].
    pub fn sort_keys(&mut self, keys: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let bytes = self.sort_workspace_bytes(keys.len() as u64, false);
        self.owned(bytes, |s, sc| s.sort_keys_with(keys, sc))
    }

    /// [`Segsort::sort_pairs`] on caller-lent scratch of [`Segsort::sort_workspace_bytes`].
    ///
    /// # Errors
    /// As [`Segsort::sort_pairs`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn sort_pairs_with(
        &mut self,
        keys: &mut impl DevicePtrMut<u32>,
        values: &mut impl DevicePtrMut<u32>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        same_len(keys.len(), values.len(), "values")?;
        self.sort_in_place(keys, Some(values), scratch)
    }

    /// [`Segsort::sort_keys`] on caller-lent scratch of [`Segsort::sort_workspace_bytes`].
    ///
    /// # Errors
    /// As [`Segsort::sort_pairs_with`].
    pub fn sort_keys_with(&mut self, keys: &mut impl DevicePtrMut<u32>, scratch: &mut Scratch<'_>) -> Result<()> {
        check_len(keys.len())?;
        self.sort_in_place(keys, None, scratch)
    }

    /// Scratch bytes of [`Segsort::sort_segments_with`] for `m` segments over `n` items (the
    /// block sorts need none): segment indices, two 64-bit key buffers, merge splits and
    /// pointers-to-index's scratch, about 24 bytes per item.
    pub fn segments_workspace_bytes(m: u64, n: u64) -> u64 {
        Measure::bytes_of(|c| segments_regions(c, m, n)).unwrap_or(u64::MAX)
    }

    /// Device bytes the plan's own workspace holds now.
    pub fn allocated_bytes(&self) -> u64 {
        self.own.bytes()
    }

    /// Sorts every tile of `tile` (key, value) pairs in place, stably by key.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLarge`] past [`MAX_LEN`], launch errors.
    pub fn sort_tiles(&mut self, tile: TileSize, keys: &mut impl DevicePtrMut<u32>, values: &mut impl DevicePtrMut<u32>) -> Result<()> {
        same_len(keys.len(), values.len(), "values")?;
        self.tiles_in_place(tile, keys, Some(values))
    }

    /// Sorts every tile of `tile` keys in place.
    ///
    /// # Errors
    /// [`Error::TooLarge`] past [`MAX_LEN`], launch errors.
    pub fn sort_tiles_keys(&mut self, tile: TileSize, keys: &mut impl DevicePtrMut<u32>) -> Result<()> {
        check_len(keys.len())?;
        self.tiles_in_place(tile, keys, None)
    }

    /// Out-of-place [`Segsort::sort_tiles`]: the inputs are left as they are.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLarge`] past [`MAX_LEN`], launch errors.
    pub fn sort_tiles_into(
        &mut self,
        tile: TileSize,
        keys: &impl DevicePtr<u32>,
        values: &impl DevicePtr<u32>,
        keys_out: &mut impl DevicePtrMut<u32>,
        values_out: &mut impl DevicePtrMut<u32>,
    ) -> Result<()> {
        same_len(keys.len(), values.len(), "values")?;
        same_len(keys.len(), keys_out.len(), "keys_out")?;
        same_len(keys.len(), values_out.len(), "values_out")?;
        self.tiles_into(tile, keys, keys_out, Some((values, values_out)))
    }

    /// Out-of-place [`Segsort::sort_tiles_keys`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::TooLarge`] past [`MAX_LEN`], launch errors.
    pub fn sort_tiles_keys_into(&mut self, tile: TileSize, keys: &impl DevicePtr<u32>, keys_out: &mut impl DevicePtrMut<u32>) -> Result<()> {
        same_len(keys.len(), keys_out.len(), "keys_out")?;
        self.tiles_into(tile, keys, keys_out, None)
    }

    /// Sorts every segment `offsets[i]..offsets[i + 1]` of the pairs in place, stably by key;
    /// segments may have any length. The offsets are validated first (starting at 0,
    /// nondecreasing, ending at `keys.len()`; one synchronization), else
    /// [`Error::Offsets`]. Scratch: [`Segsort::segments_workspace_bytes`], kept for reuse.
    ///
    /// # Errors
    /// [`Error::Offsets`], [`Error::LengthMismatch`], [`Error::TooLarge`], runtime errors.
    pub fn sort_segments(
        &mut self,
        offsets: &impl DevicePtr<u32>,
        keys: &mut impl DevicePtrMut<u32>,
        values: &mut impl DevicePtrMut<u32>,
    ) -> Result<()> {
        let bytes = Self::segments_workspace_bytes((offsets.len() as u64).saturating_sub(1), keys.len() as u64);
        self.owned(bytes, |s, scratch| s.sort_segments_with(offsets, keys, values, scratch))
    }

    /// Keys-only [`Segsort::sort_segments`].
    ///
    /// # Errors
    /// As [`Segsort::sort_segments`].
    pub fn sort_segments_keys(&mut self, offsets: &impl DevicePtr<u32>, keys: &mut impl DevicePtrMut<u32>) -> Result<()> {
        let bytes = Self::segments_workspace_bytes((offsets.len() as u64).saturating_sub(1), keys.len() as u64);
        self.owned(bytes, |s, scratch| s.sort_segments_keys_with(offsets, keys, scratch))
    }

    /// [`Segsort::sort_segments`] on caller-lent scratch of
    /// [`Segsort::segments_workspace_bytes`].
    ///
    /// # Errors
    /// As [`Segsort::sort_segments`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn sort_segments_with(
        &mut self,
        offsets: &impl DevicePtr<u32>,
        keys: &mut impl DevicePtrMut<u32>,
        values: &mut impl DevicePtrMut<u32>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        same_len(keys.len(), values.len(), "values")?;
        self.segments(offsets, keys, Some(values), scratch)
    }

    /// Keys-only [`Segsort::sort_segments_with`].
    ///
    /// # Errors
    /// As [`Segsort::sort_segments_with`].
    pub fn sort_segments_keys_with(
        &mut self,
        offsets: &impl DevicePtr<u32>,
        keys: &mut impl DevicePtrMut<u32>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        check_len(keys.len())?;
        self.segments(offsets, keys, None, scratch)
    }

    /// Runs `f` on the plan's own scratch, grown to `bytes`.
    fn owned(&mut self, bytes: u64, f: impl FnOnce(&mut Self, &mut Scratch<'_>) -> Result<()>) -> Result<()> {
        let gpu = self.gpu.clone();
        ScratchBuf::lend(self, |p| &mut p.own, &gpu, bytes, f)
    }

    fn segments(
        &mut self,
        offsets: &impl DevicePtr<u32>,
        keys: &mut impl DevicePtrMut<u32>,
        vals: launch::ValuesMut<'_>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let n = keys.len() as u64;
        let m = (offsets.len() as u64).saturating_sub(1);
        scratch.require(Self::segments_workspace_bytes(m, n))?;
        let SegmentsRegions { mut expand, mut seg, sort } = segments_regions(scratch, m, n)?;
        self.p2i.run_checked_with(offsets, &mut seg, &mut expand)?;
        self.segments64(&mut seg, keys, vals, sort)
    }

    /// [`Segsort::sort_tiles_into`] on raw device addresses (`vals == 0`: keys only), for
    /// crates that manage their own buffers (`gpu-segmerge`'s ping-pong). Outputs may equal the
    /// inputs.
    ///
    /// # Safety
    /// `keys`/`keys_out` (and `vals`/`vals_out` unless 0) are live device buffers of `n` `u32`
    /// items, `n <= MAX_LEN`.
    ///
    /// # Errors
    /// Launch errors.
    pub unsafe fn sort_tiles_raw(&mut self, tile: TileSize, keys: u64, vals: u64, n: u64, keys_out: u64, vals_out: u64) -> Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe { self.block_sort_raw(tile, keys, vals, n, keys_out, vals_out) }
    }

    /// [`Segsort::sort_tiles_raw`]'s launch (the kernel matching `vals`).
    ///
    /// # Safety
    /// As [`Segsort::sort_tiles_raw`].
    unsafe fn block_sort_raw(&mut self, tile: TileSize, keys: u64, vals: u64, n: u64, keys_out: u64, vals_out: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let kernel = if vals != 0 { &self.pairs[tile.index()] } else { &self.keys[tile.index()] };
        // SAFETY: forwarded to the caller; the kernel matches `vals`.
        unsafe { launch::block_sort(&self.gpu, kernel, tile, keys, vals, n, keys_out, vals_out) }
    }
}

fn check_len(n: usize) -> Result<u64> {
    if n as u64 > MAX_LEN {
        return Err(Error::TooLarge { what: "items", len: n as u64, max: MAX_LEN });
    }
    Ok(n as u64)
}

fn same_len(n: usize, other: usize, what: &'static str) -> Result<u64> {
    if n != other {
        return Err(Error::LengthMismatch { what, expected: n as u64, got: other as u64 });
    }
    check_len(n)
}

/// The scratch of a sort by segments, in carving order: pointers-to-index's, each item's
/// segment, then the 64-bit sort's ([`launch::Segments64Regions`]).
struct SegmentsRegions<C: Carver> {
    expand: C::Sub,
    seg: C::Slice<u32>,
    sort: launch::Segments64Regions<C>,
}

/// The one description of [`SegmentsRegions`] for `m` segments over `n` items, measured
/// ([`Segsort::segments_workspace_bytes`]) or carved.
fn segments_regions<C: Carver>(c: &mut C, m: u64, n: u64) -> Result<SegmentsRegions<C>> {
    Ok(SegmentsRegions { expand: c.sub(Ptr2Idx::workspace_bytes(m, n))?, seg: c.slice(n as usize)?, sort: launch::segments64_regions(c, n)? })
}
