//! The scratch layout and the only `unsafe` launches: one histogram launch per
//! [`HIST_PASSES`] passes, then one onesweep launch per pass.
use gpu_runtime::cudarc::driver::LaunchConfig;
use gpu_runtime::scratch::Layout;
use gpu_runtime::{Gpu, Kernel, Scratch};

use crate::{stage_bytes, Carry, Result, HIST_PASSES, MAX_BITS, NT, NV};

pub(crate) struct Kernels {
    pub histogram: Kernel,
    /// By the second payload's width: `radix_onesweep_v{1,2,4 (or none),8,16}` (64-bit status
    /// words).
    pub onesweep: [Kernel; 5],
    /// The same with 32-bit status words: `radix_onesweep_s32_v*`.
    pub onesweep32: [Kernel; 5],
}

/// Bytes of a look-back status word of a sort of `n` keys with digits of up to `per` bits: 4
/// (`u32` words, [`radix_kernels::status32`]) when `n < 2^STATUS32_COUNT_BITS` and `per >= 3` (at
/// most 11 passes), else 8. Layouts and the carved sweep state both use it, so the workspace
/// reported is the one used.
pub(crate) fn status_word_bytes(n: u64, per: u32) -> u64 {
    if radix_kernels::status32(n, 32u32.div_ceil(per.max(1))) {
        4
    } else {
        8
    }
}

/// Device addresses of keys and payloads (0: absent).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bufs {
    pub keys: u64,
    pub first: u64,
    pub second: u64,
}

/// Most passes of one sort (32 bits, 1 bit a pass).
const MAX_PASSES: u64 = 32;
/// Counts of a pass's digits (the widest digit's).
const RADIX: u64 = 1 << MAX_BITS;

/// Tiles of `n` keys.
fn tiles(n: u64) -> u64 {
    n.div_ceil(NV as u64)
}

/// Every pass's tile counter and digit counts (one region, so that one fill zeroes what a sort
/// uses): the sweep state before the look-back status.
const COUNTERS_BYTES: u64 = 4 * MAX_PASSES * (1 + RADIX);

/// The look-back status of a sort of `n` keys with digits of up to `per` bits ([`MAX_BITS`] when
/// unknown): one word ([`status_word_bytes`]) per digit and tile, reused by every pass (a pass's
/// tag tells its words from earlier passes'), zeroed once per sort; the last region of the sweep
/// state, or lent by the caller.
pub(crate) fn status_bytes(n: u64, per: u32) -> u64 {
    status_word_bytes(n, per) * (1u64 << per) * tiles(n)
}

/// `copies` temporary copies of `n` keys carrying `carry` after `l`, as [`take_copy`] carves
/// each: the first payload, the keys, the second payload.
pub(crate) fn copies_layout(n: u64, carry: Carry, copies: u64) -> Layout {
    let mut l = Layout::new();
    for _ in 0..copies {
        if carry.first {
            l = l.add(4 * n);
        }
        l = l.add(4 * n).add(n * carry.second_bytes as u64);
    }
    l
}

/// `l` then the sweep state of a sort of `n` keys with digits of up to `per` bits, as
/// [`Sweep::new`] carves it: the counters, then the look-back status.
pub(crate) fn with_sweep(l: Layout, n: u64, per: u32) -> Layout {
    l.add(COUNTERS_BYTES).add(status_bytes(n, per))
}

/// Carves one temporary copy in [`copies_layout`]'s order: the first payload (0 when `carry`
/// has none), the keys, the second payload (0 bytes when absent).
pub(crate) fn take_copy(scratch: &mut Scratch<'_>, n: u64, carry: Carry) -> Result<Bufs> {
    let first = if carry.first { scratch.take(4 * n)? } else { 0 };
    let keys = scratch.take(4 * n)?;
    Ok(Bufs { keys, first, second: scratch.take(n * carry.second_bytes as u64)? })
}

/// The carved sweep state.
pub(crate) struct Sweep {
    /// `MAX_PASSES` tile counters, then `MAX_PASSES * RADIX` digit counts.
    counters: u64,
    hist: u64,
    status: u64,
    /// 64-bit status words (else 32-bit: the `radix_onesweep_s32_*` kernels).
    wide: bool,
}

impl Sweep {
    /// Carves the sweep state for `n` keys from `scratch` (the look-back status from `status`
    /// when lent) and zeroes what `passes` passes of `per` bits use.
    pub(crate) fn new(gpu: &Gpu, scratch: &mut Scratch<'_>, status: Option<Scratch<'_>>, n: u64, passes: u32, per: u32) -> Result<Self> {
        let counters = scratch.take(COUNTERS_BYTES)?;
        let hist = counters + 4 * MAX_PASSES;
        let bytes = status_bytes(n, per);
        let status = match status {
            Some(mut lent) => lent.take(bytes)?,
            None => scratch.take(bytes)?,
        };
        // SAFETY: both regions were just carved for these sizes and nothing else uses them; the
        // counters and the first `passes` passes' counts are the region's first bytes.
        unsafe {
            gpu.fill_raw(counters, 0, 4 * MAX_PASSES + 4 * RADIX * passes as u64)?;
            gpu.fill_raw(status, 0, bytes)?;
        }
        Ok(Self { counters, hist, status, wide: status_word_bytes(n, per) == 8 })
    }
}

/// Counts the digits of `passes` passes of `per` bits from bit `shift0` (the last cut at `end`)
/// into the sweep's counts.
///
/// # Safety
/// `keys` holds `n` words; `sweep` was made for `n` keys and at least `passes` passes.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn histogram(gpu: &Gpu, k: &Kernels, keys: u64, n: u64, shift0: u32, per: u32, passes: u32, end: u32, sweep: &Sweep) -> Result<()> {
    let stream = gpu.stream();
    let target = (gpu.props().sm_count.max(1) as u64) * 8;
    let chunk = n.div_ceil(target).next_multiple_of(4).max(NV as u64);
    let blocks = n.div_ceil(chunk);
    let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 };
    for p0 in (0..passes).step_by(HIST_PASSES as usize) {
        let group = (passes - p0).min(HIST_PASSES);
        let shift = shift0 + p0 * per;
        let hist = sweep.hist + 4 * RADIX * p0 as u64;
        // SAFETY: radix_histogram(keys, n, chunk, shift0, per, passes, end, hist): `blocks`
        // blocks of NT cover n keys in chunks (a multiple of 4); hist holds group * RADIX words
        // from pass p0 on; group <= HIST_PASSES; per <= MAX_BITS.
        unsafe { k.histogram.args(stream).arg(&keys).arg(&n).arg(&chunk).arg(&shift).arg(&per).arg(&group).arg(&end).arg(&hist).launch(cfg)? };
    }
    Ok(())
}

/// Pass `pass` by the digit `(key >> shift) & (2^bits - 1)` from `src` into `dst`.
///
/// # Safety
/// `src` and `dst` hold `n` items of each kind `carry` names, do not overlap, and are 0 for
/// absent payloads; `sweep` was made for `n` keys, holds this pass's digit counts of `src`'s keys,
/// and no pass `pass` or later has run on it.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn pass(
    gpu: &Gpu,
    k: &Kernels,
    n: u64,
    shift: u32,
    bits: u32,
    pass: u32,
    src: Bufs,
    dst: Bufs,
    carry: Carry,
    sweep: &Sweep,
) -> Result<()> {
    let stream = gpu.stream();
    let t = tiles(n);
    let variant = match carry.second_bytes {
        1 => 0,
        2 => 1,
        8 => 3,
        16 => 4,
        _ => 2,
    };
    let cfg = LaunchConfig { grid_dim: (t as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: stage_bytes(carry.second_bytes as u32) };
    let (fi, fo) = if carry.first { (src.first, dst.first) } else { (0, 0) };
    let (si, so) = if carry.second_bytes > 0 { (src.second, dst.second) } else { (0, 0) };
    let counts = sweep.hist + 4 * RADIX * pass as u64;
    let counter = sweep.counters + 4 * pass as u64;
    let kernels = if sweep.wide { &k.onesweep } else { &k.onesweep32 };
    // SAFETY: radix_onesweep{,_s32}_v{1,2,4,8,16}(keys_in, first_in, second_in, n, shift, bits,
    // pass, counts, status, counter, keys_out, first_out, second_out): `t` blocks of NT over n
    // items each (payloads null together), counts of this pass's digits, status of 2^bits * t
    // words of the kernel's width (the sweep's: 32-bit only for n < 2^27 and at most 11 passes)
    // with no tag of this pass yet, a zeroed counter; the kernel's width matches the second
    // payload and the dynamic shared memory its staging.
    unsafe {
        kernels[variant]
            .args(stream)
            .arg(&src.keys)
            .arg(&fi)
            .arg(&si)
            .arg(&n)
            .arg(&shift)
            .arg(&bits)
            .arg(&pass)
            .arg(&counts)
            .arg(&sweep.status)
            .arg(&counter)
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
        gpu.bind()?;
        // SAFETY: both regions hold `bytes` bytes (n items of the kind) and do not overlap.
        unsafe { gpu_runtime::cudarc::driver::result::memcpy_dtod_async(dst, src, bytes as usize, gpu.stream().cu_stream()) }
            .map_err(gpu_runtime::Error::driver("copying the sorted keys back"))?;
        Ok(())
    };
    copy(from.keys, to.keys, 4 * n)?;
    if carry.first {
        copy(from.first, to.first, 4 * n)?;
    }
    copy(from.second, to.second, n * carry.second_bytes as u64)
}
