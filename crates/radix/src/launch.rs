//! The scratch layout and the only `unsafe` launches: one pass = upsweep, scan of the digit
//! counts (the spine), downsweep.
use gpu_runtime::cudarc::driver::LaunchConfig;
use gpu_runtime::scratch::{Layout, ScratchSlice};
use gpu_runtime::{Gpu, Kernel, Scratch};
use gpu_scan::{Algorithm as ScanAlgorithm, ScanKind, Scanner};

use crate::{Carry, Result, MAX_BITS, NT, NV};

pub(crate) struct Kernels {
    pub upsweep: Kernel,
    /// By the second payload's width: `[4 bytes (or none), 8 bytes]`.
    pub downsweep: [Kernel; 2],
}

/// Device addresses of keys and payloads (0: absent).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bufs {
    pub keys: u64,
    pub first: u64,
    pub second: u64,
}

/// Tiles of `n` keys.
fn tiles(n: u64) -> u64 {
    n.div_ceil(NV as u64)
}

/// Words of the digit counts: the widest digit's buckets per tile.
pub(crate) fn counts_len(n: u64) -> u64 {
    (1 << MAX_BITS) * tiles(n)
}

/// The scratch of a sort of `n` keys carrying `carry`, in carving order: `copies` ping-pong
/// temporaries (keys, first payload, second payload; the out-of-place sort gets its second first
/// payload copy from the caller), then the digit counts, then the scan's scratch.
pub(crate) fn layout(n: u64, carry: Carry, first_copies: u64) -> Layout {
    if n == 0 {
        return Layout::new();
    }
    let mut l = Layout::new();
    for copy in 0..2 {
        l = l.add(4 * n);
        if carry.first && copy < first_copies {
            l = l.add(4 * n);
        }
        l = l.add(n * carry.second_bytes as u64);
    }
    pass_layout_after(l, n)
}

/// The scratch of one pass, after `l`: the digit counts, then the scan's scratch.
fn pass_layout_after(l: Layout, n: u64) -> Layout {
    l.add(4 * counts_len(n)).add(Scanner::<u32>::workspace_bytes(ScanAlgorithm::Auto, counts_len(n)))
}

/// The scratch of a single pass out of place ([`crate::RadixSort::partition_into_with`]).
pub(crate) fn pass_layout(n: u64) -> Layout {
    if n == 0 {
        return Layout::new();
    }
    pass_layout_after(Layout::new(), n)
}

/// One pass by the digit `(key >> shift) & (2^bits - 1)` from `src` into `dst`.
///
/// # Safety
/// `src` and `dst` hold `n` items of each kind `carry` names, do not overlap, and are 0 for
/// absent payloads; `counts` holds [`counts_len`]`(n)` words.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn pass(gpu: &Gpu, k: &Kernels, scanner: &mut Scanner<u32>, n: u64, shift: u32, bits: u32, src: Bufs, dst: Bufs, carry: Carry, counts: &mut ScratchSlice<'_, u32>, scan_scratch: &mut Scratch<'_>) -> Result<()> {
    use gpu_runtime::cudarc::driver::DevicePtr;
    let stream = gpu.stream();
    let t = tiles(n);
    let cfg = LaunchConfig { grid_dim: (t as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    let c = counts.device_ptr(stream).0;
    // SAFETY: radix_upsweep(keys, n, shift, bits, tiles, counts): `tiles` blocks of NT, keys of
    // n words, counts of 2^MAX_BITS * tiles >= 2^bits * tiles words.
    unsafe { k.upsweep.args(stream).arg(&src.keys).arg(&n).arg(&shift).arg(&bits).arg(&t).arg(&c).launch(cfg)? };
    {
        let mut spine = counts.range_mut(0..((1u64 << bits) * t) as usize);
        // The same scratch region every pass (stream order).
        scanner.scan_in_place_with(ScanKind::Exclusive, &mut spine, &mut scan_scratch.reborrow())?;
    }
    let variant = usize::from(carry.second_bytes == 8);
    let (fi, fo) = if carry.first { (src.first, dst.first) } else { (0, 0) };
    let (si, so) = if carry.second_bytes > 0 { (src.second, dst.second) } else { (0, 0) };
    // SAFETY: radix_downsweep_v{4,8}(keys_in, first_in, second_in, n, shift, bits, tiles,
    // offsets, keys_out, first_out, second_out): n items each (payloads null together), offsets
    // scanned from this pass's upsweep, the kernel's width matching the second payload.
    unsafe {
        k.downsweep[variant]
            .args(stream)
            .arg(&src.keys)
            .arg(&fi)
            .arg(&si)
            .arg(&n)
            .arg(&shift)
            .arg(&bits)
            .arg(&t)
            .arg(&c)
            .arg(&dst.keys)
            .arg(&fo)
            .arg(&so)
            .launch(cfg)?
    };
    Ok(())
}

/// Copies the sorted temporaries back into the caller's buffers (a one-pass in-place sort).
pub(crate) fn copy_back(gpu: &Gpu, from: Bufs, to: Bufs, n: u64, carry: Carry) -> Result<()> {
    let copy = |src: u64, dst: u64, bytes: u64| -> Result<()> {
        if bytes == 0 || src == 0 {
            return Ok(());
        }
        // SAFETY: both regions hold `bytes` bytes (n items of the kind) and do not overlap.
        unsafe { gpu_runtime::cudarc::driver::result::memcpy_dtod_async(dst, src, bytes as usize, gpu.stream().cu_stream()) }.map_err(gpu_runtime::Error::driver("copying the sorted keys back"))?;
        Ok(())
    };
    copy(from.keys, to.keys, 4 * n)?;
    if carry.first {
        copy(from.first, to.first, 4 * n)?;
    }
    copy(from.second, to.second, n * carry.second_bytes as u64)
}
