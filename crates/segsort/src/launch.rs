//! The only `unsafe` launches of the segsort kernels and the only raw device addresses of the
//! crate, with their grid sizing: the typed entry points at the end (`impl Segsort`) form the
//! addresses, after the lengths are checked, for the `unsafe` launches above them.
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, DeviceSlice, LaunchConfig};
use gpu_runtime::scratch::{Carver, ScratchSlice};
use gpu_runtime::{grid_1d, ptr_mut_or_null, Gpu, KernelOf, Scratch};
use gpu_segmerge::raw::{self, MergeKernels};
use segsort_kernels::{PackArgs, SortArgs};

use crate::{Error, Result, Segsort, TileSize};

/// The kernels of the 64-bit segment sort: pack, block sort (pairs or keys), merge, unpack.
pub(crate) struct Kernels64<'a> {
    pub pack: &'a KernelOf<PackArgs>,
    pub unpack: &'a KernelOf<PackArgs>,
    pub pairs: &'a KernelOf<SortArgs<u64>>,
    pub keys: &'a KernelOf<SortArgs<u64>>,
    pub merge: &'a MergeKernels,
}

/// Every tile of `tile` items sorted by one block in shared memory.
///
/// # Safety
/// `kernel` is the pairs kernel of `tile` exactly when `vals != 0`; `keys`/`keys_out` (and
/// `vals`/`vals_out` unless 0) hold `n` `u32` items.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn block_sort(
    gpu: &Gpu,
    kernel: &KernelOf<SortArgs<u32>>,
    tile: TileSize,
    keys: u64,
    vals: u64,
    n: u64,
    keys_out: u64,
    vals_out: u64,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let blocks = n.div_ceil(tile.len() as u64);
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (tile.threads(), 1, 1),
        shared_mem_bytes: tile.len() * if vals != 0 { 8 } else { 4 },
    };
    let args =
        SortArgs::<u32> { keys: keys as *const u32, vals: vals as *const u32, keys_out: keys_out as *mut u32, vals_out: vals_out as *mut u32, n };
    // SAFETY: segsort_pairs_B / segsort_keys_B(SortArgs) with ceil(n / B) blocks of B / VT
    // threads and B * (4 + 4) bytes of shared memory; buffers as the caller guarantees.
    unsafe { kernel.launch(gpu.stream(), cfg, args)? };
    Ok(())
}

/// The sort by segments: `(segment << 32 | key)` packed into `a`, block-sorted, merged
/// (ping-pong between `a` and `b`, the values between the caller's and `seg`'s memory), unpacked
/// into `keys`.
///
/// # Safety
/// `seg` holds each item's segment (`n` words; reused as value scratch after packing), `keys`
/// (and `vals` unless 0) `n` words; `a`, `b` `8 n` bytes; `splits`
/// `max_tiles(n, 2048) + 1` words; `n >= 1`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sort_segments64(
    gpu: &Gpu,
    k: &Kernels64<'_>,
    seg: u64,
    keys: u64,
    vals: u64,
    n: u64,
    a: u64,
    b: u64,
    splits: u64,
) -> Result<()> {
    let stream = gpu.stream();
    let cfg = grid_1d(n, 256, 256 * 8, gpu.props().sm_count * 16);
    let pack = PackArgs { seg: seg as *const u32, keys: keys as *mut u32, packed: a as *mut u64, n };
    // SAFETY: segsort_pack(PackArgs): all hold n items.
    unsafe { k.pack.launch(stream, cfg, pack)? };
    // Ping-pong so the last pass lands in (a, caller's values): the block sort writes to the pair
    // of index `passes % 2` (0 = a / values, 1 = b / seg scratch).
    let passes = raw::merge_passes(n, 2048);
    let (kbuf, vbuf) = ([a, b], [vals, if vals == 0 { 0 } else { seg }]);
    let mut x = (passes % 2) as usize;
    let block_cfg = LaunchConfig { grid_dim: (n.div_ceil(2048) as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 2048 * 12 };
    let sort = SortArgs::<u64> { keys: a as *const u64, vals: vals as *const u32, keys_out: kbuf[x] as *mut u64, vals_out: vbuf[x] as *mut u32, n };
    // SAFETY: segsort_{pairs,keys}64_2048(SortArgs): buffers of n items (no values for the keys
    // kernel: vals is 0 then), ceil(n / 2048) blocks of 256 threads, 24 KiB of shared memory.
    unsafe { (if vals != 0 { k.pairs } else { k.keys }).launch(stream, block_cfg, sort)? };
    let mut s = 2048u64;
    while s < n {
        // SAFETY: buffers of n items, splits of max_tiles(n, 2048) + 1 >= what the pass needs.
        unsafe { raw::merge_pass(gpu, k.merge, kbuf[x], vbuf[x], n, s, splits, kbuf[1 - x], vbuf[1 - x])? };
        x = 1 - x;
        s *= 2;
    }
    // SAFETY: segsort_unpack(PackArgs: packed, keys, n): n items each.
    unsafe { k.unpack.launch(stream, cfg, pack)? };
    Ok(())
}

/// Values moved with the keys of an in-place call: none, or a buffer of the keys' length.
pub(crate) type ValuesMut<'b> = Option<&'b mut dyn DevicePtrMut<u32>>;

/// `len == n`, else [`Error::LengthMismatch`] naming `what`.
fn same(what: &'static str, n: u64, len: usize) -> Result<()> {
    if len as u64 != n {
        return Err(Error::LengthMismatch { what, expected: n, got: len as u64 });
    }
    Ok(())
}

impl Segsort {
    /// The block sort of every `tile` of the keys (and values), in place.
    pub(crate) fn tiles_in_place(&mut self, tile: TileSize, keys: &mut impl DevicePtrMut<u32>, vals: ValuesMut<'_>) -> Result<()> {
        let n = keys.len() as u64;
        let stream = self.gpu.stream().clone();
        let (k, _k) = keys.device_ptr_mut(&stream);
        if let Some(v) = &vals {
            same("values", n, v.len())?;
        }
        let (v, _v) = ptr_mut_or_null(vals, &stream);
        // SAFETY: keys (and values) hold n items (checked), read and written in place by the
        // same block.
        unsafe { self.block_sort_raw(tile, k, v, n, k, v) }
    }

    /// The block sort of every `tile` of `keys` (and values) into the outputs; inputs kept.
    pub(crate) fn tiles_into(
        &mut self,
        tile: TileSize,
        keys: &impl DevicePtr<u32>,
        keys_out: &mut impl DevicePtrMut<u32>,
        vals: Option<(&dyn DevicePtr<u32>, &mut dyn DevicePtrMut<u32>)>,
    ) -> Result<()> {
        let n = keys.len() as u64;
        same("keys_out", n, keys_out.len())?;
        let stream = self.gpu.stream().clone();
        let (k, _k) = keys.device_ptr(&stream);
        let (ko, _ko) = keys_out.device_ptr_mut(&stream);
        let (v, vo, _g) = match vals {
            Some((v, o)) => {
                same("values", n, v.len())?;
                same("values_out", n, o.len())?;
                let (p, g) = v.device_ptr(&stream);
                let (q, h) = o.device_ptr_mut(&stream);
                (p, q, Some((g, h)))
            }
            None => (0, 0, None),
        };
        // SAFETY: every buffer holds n items (checked); the outputs are mutable borrows, apart
        // from the inputs.
        unsafe { self.block_sort_raw(tile, k, v, n, ko, vo) }
    }

    /// The whole sort in place (block sorts, then merge passes ping-ponging with temporaries
    /// carved from `scratch`, which holds `sort_workspace_bytes`).
    pub(crate) fn sort_in_place(&mut self, keys: &mut impl DevicePtrMut<u32>, vals: ValuesMut<'_>, scratch: &mut Scratch<'_>) -> Result<()> {
        let n = keys.len() as u64;
        if n == 0 {
            return Ok(());
        }
        scratch.require(self.sort_workspace_bytes(n, vals.is_some()))?;
        let b = self.tile.len() as u64;
        let passes = raw::merge_passes(n, b);
        let SortRegions { mut splits, keys: mut tk, vals: mut tv } = sort_regions(scratch, n, b, vals.is_some())?;
        let stream = self.gpu.stream().clone();
        let (k, _k) = keys.device_ptr_mut(&stream);
        if let Some(v) = &vals {
            same("values", n, v.len())?;
        }
        let (v, _v) = ptr_mut_or_null(vals, &stream);
        let (tk, _tk) = tk.device_ptr_mut(&stream);
        let (tv, _tv) = ptr_mut_or_null(tv.as_mut(), &stream);
        let (sp, _sp) = splits.device_ptr_mut(&stream);
        let (kb, vb) = ([k, tk], [v, tv]);
        // The block sort writes to index passes % 2, so the last pass lands in index 0.
        let mut x = (passes % 2) as usize;
        // SAFETY: kb/vb hold n items each (the caller's buffers, checked, or scratch of n items).
        unsafe { self.block_sort_raw(self.tile, k, v, n, kb[x], vb[x])? };
        let mut s = b;
        while s < n {
            // SAFETY: kb/vb hold n items each, x and 1 - x distinct; splits hold
            // max_tiles(n, b) + 1 >= tile_count(n, s) + 1 words.
            unsafe { self.segmerge.merge_pass_raw(kb[x], vb[x], n, s, sp, kb[1 - x], vb[1 - x])? };
            x = 1 - x;
            s *= 2;
        }
        Ok(())
    }

    /// The 64-bit sort by segments once `seg` holds each item's segment, on its carved regions
    /// ([`Segments64Regions`], [`sort_segments64`]).
    pub(crate) fn segments64(
        &mut self,
        seg: &mut ScratchSlice<'_, u32>,
        keys: &mut impl DevicePtrMut<u32>,
        vals: ValuesMut<'_>,
        regions: Segments64Regions<Scratch<'_>>,
    ) -> Result<()> {
        let n = keys.len() as u64;
        same("segments", n, seg.len())?;
        if n == 0 {
            return Ok(());
        }
        let Segments64Regions { mut a, mut b, mut splits } = regions;
        if a.len() as u64 != n {
            return Err(Error::Runtime(gpu_runtime::Error::Internal("segment sort regions carved for another length")));
        }
        let stream = self.gpu.stream().clone();
        let (sg, _s) = seg.device_ptr_mut(&stream);
        let (k, _k) = keys.device_ptr_mut(&stream);
        if let Some(v) = &vals {
            same("values", n, v.len())?;
        }
        let (v, _v) = ptr_mut_or_null(vals, &stream);
        let (a, _a) = a.device_ptr_mut(&stream);
        let (b, _b) = b.device_ptr_mut(&stream);
        let (sp, _sp) = splits.device_ptr_mut(&stream);
        let merge = if v != 0 { &self.merge_pairs64 } else { &self.merge_keys64 };
        let k64 = Kernels64 { pack: &self.pack, unpack: &self.unpack, pairs: &self.pairs64, keys: &self.keys64, merge };
        // SAFETY: keys (and values) hold n items (checked); seg n words with each item's
        // segment (the caller's ptr2idx); a, b 8 n bytes each; splits max_tiles(n, 2048) + 1
        // words; n >= 1.
        unsafe { sort_segments64(&self.gpu, &k64, sg, k, v, n, a, b, sp) }
    }
}

/// The scratch of a whole sort of `n` items in carving order: the merge passes' tile splits,
/// then the keys' (and values') ping-pong copies; nothing for `n = 0`.
pub(crate) struct SortRegions<C: Carver> {
    pub splits: C::Slice<u32>,
    pub keys: C::Slice<u32>,
    pub vals: Option<C::Slice<u32>>,
}

/// The one description of [`SortRegions`] (tiles of `tile` items), measured
/// ([`Segsort::sort_workspace_bytes`]) or carved.
pub(crate) fn sort_regions<C: Carver>(c: &mut C, n: u64, tile: u64, with_values: bool) -> Result<SortRegions<C>> {
    let (splits, items) = if n == 0 { (0, 0) } else { ((raw::max_tiles(n, tile) + 1) as usize, n as usize) };
    Ok(SortRegions { splits: c.slice(splits)?, keys: c.slice(items)?, vals: if with_values { Some(c.slice(items)?) } else { None } })
}

/// The 64-bit sort by segments' scratch in carving order: two 64-bit temporaries of `n` items,
/// then the merge splits (tiles of 2048).
pub(crate) struct Segments64Regions<C: Carver> {
    pub a: C::Slice<u64>,
    pub b: C::Slice<u64>,
    pub splits: C::Slice<u32>,
}

/// The one description of [`Segments64Regions`], measured or carved.
pub(crate) fn segments64_regions<C: Carver>(c: &mut C, n: u64) -> Result<Segments64Regions<C>> {
    Ok(Segments64Regions { a: c.slice(n as usize)?, b: c.slice(n as usize)?, splits: c.slice((raw::max_tiles(n, 2048) + 1) as usize)? })
}

#[cfg(test)]
mod tests {
    /// Every kernel takes exactly its argument struct in the committed PTX (what
    /// `Gpu::kernel_of` checks at load, here without a GPU).
    #[test]
    fn argument_structs_match_the_ptx() {
        use super::{PackArgs, SortArgs};
        use gpu_runtime::check_signature;
        use segmerge_kernels::MergeArgs;
        let m = &crate::MODULE;
        for b in crate::TileSize::ALL {
            for kind in ["pairs", "keys"] {
                let name = format!("segsort_{kind}_{}", b.len());
                check_signature::<SortArgs<u32>>(m, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        for name in ["segsort_pairs64_2048", "segsort_keys64_2048"] {
            check_signature::<SortArgs<u64>>(m, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        for name in ["segsort_pack", "segsort_unpack"] {
            check_signature::<PackArgs>(m, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        for name in ["segsort_merge_partition64", "segsort_merge_pairs64", "segsort_merge_keys64"] {
            check_signature::<MergeArgs<u64>>(m, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(check_signature::<PackArgs>(m, "segsort_pairs_128").is_err());
    }
}
