//! The scratch layout, the only `unsafe` launches (one histogram launch per [`HIST_PASSES`]
//! passes, then one onesweep launch per pass) and the only raw device addresses of the crate:
//! the chains of a sort's double buffers and the in-place sorts' buffers.
use gpu_runtime::cudarc::driver::LaunchConfig;
use gpu_runtime::scratch::Layout;
use gpu_runtime::{Gpu, KernelOf, Scratch};

use std::ops::Range;

use gpu_runtime::cudarc::driver::DevicePtrMut;
use gpu_runtime::Payload;

use crate::buffers::Array;
use crate::{pass_digit, same_len, Carry, Error, RadixSort, Result, HIST_PASSES, MAX_BITS, NT, NV};
use radix_kernels::{stage_bytes_for, HistogramArgs, OnesweepArgs, HIST_NT, VT, VT_KEYS8};

pub(crate) struct Kernels {
    pub histogram: KernelOf<HistogramArgs>,
    /// By the second payload's width: `radix_onesweep_v{1,2,4 (or none),8,16}` (64-bit status
    /// words).
    pub onesweep: [KernelOf<OnesweepArgs>; 5],
    /// The same with 32-bit status words: `radix_onesweep_s32_v*`.
    pub onesweep32: [KernelOf<OnesweepArgs>; 5],
    /// For passes of exactly 8 bits, the width fixed at compile time (fewer registers):
    /// `radix_onesweep8_v*`.
    pub onesweep8: [KernelOf<OnesweepArgs>; 5],
    /// The same with 32-bit status words: `radix_onesweep8_s32_v*`.
    pub onesweep8_32: [KernelOf<OnesweepArgs>; 5],
    /// 8-bit passes of keys alone, [`VT_KEYS8`] keys a thread: `radix_onesweep8_keys` (64-bit
    /// status words), `radix_onesweep8_s32_keys`.
    pub keys8: [KernelOf<OnesweepArgs>; 2],
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

/// Tiles of `n` keys at `vt` keys a thread (the look-back status is sized at [`VT`], the
/// smallest tile of any kernel, so it serves the larger ones too).
fn tiles(n: u64, vt: u32) -> u64 {
    n.div_ceil(u64::from(NT * vt))
}

/// Every pass's tile counter and digit counts (one region, so that one fill zeroes what a sort
/// uses): the sweep state before the look-back status.
const COUNTERS_BYTES: u64 = 4 * MAX_PASSES * (1 + RADIX);

/// The look-back status of a sort of `n` keys with digits of up to `per` bits ([`MAX_BITS`] when
/// unknown): one word ([`status_word_bytes`]) per digit and tile, reused by every pass (a pass's
/// tag tells its words from earlier passes'), zeroed once per sort; the last region of the sweep
/// state, or lent by the caller.
pub(crate) fn status_bytes(n: u64, per: u32) -> u64 {
    status_word_bytes(n, per) * (1u64 << per) * tiles(n, VT)
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
    /// The device word every launch reads first, doing nothing when it is 0 (0: no such word).
    run_if: u64,
}

impl Sweep {
    /// Carves the sweep state for `n` keys from `scratch` (the look-back status from `status`
    /// when lent) and zeroes what `passes` passes of `per` bits use.
    /// `run_if`: the address of a word the launches read first (0: none).
    pub(crate) fn new(gpu: &Gpu, scratch: &mut Scratch<'_>, status: Option<Scratch<'_>>, n: u64, passes: u32, per: u32, run_if: u64) -> Result<Self> {
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
        Ok(Self { counters, hist, status, wide: status_word_bytes(n, per) == 8, run_if })
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
    let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (HIST_NT, 1, 1), shared_mem_bytes: 0 };
    for p0 in (0..passes).step_by(HIST_PASSES as usize) {
        let group = (passes - p0).min(HIST_PASSES);
        let args = HistogramArgs {
            keys: keys as *const u32,
            hist: (sweep.hist + 4 * RADIX * p0 as u64) as *mut u32,
            n,
            chunk,
            shift0: shift0 + p0 * per,
            per,
            passes: group,
            end,
            run_if: sweep.run_if as *const u32,
        };
        // SAFETY: radix_histogram(HistogramArgs): `blocks` blocks of HIST_NT cover n keys in
        // chunks (a multiple of 4); hist holds group * RADIX words from pass p0 on; group <=
        // HIST_PASSES; per <= MAX_BITS; run_if null or a word the sweep's maker keeps alive.
        unsafe { k.histogram.launch(stream, cfg, args)? };
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
    let variant = match carry.second_bytes {
        1 => 0,
        2 => 1,
        8 => 3,
        16 => 4,
        _ => 2,
    };
    let narrow = usize::from(!sweep.wide);
    // The kernel and its keys a thread: 8-bit passes of keys alone have their own (larger
    // tiles), the rest take the generic tile.
    let (kernel, vt) = match (bits == 8, carry.first, carry.second_bytes) {
        (true, false, 0) => (&k.keys8[narrow], VT_KEYS8),
        (true, ..) if sweep.wide => (&k.onesweep8[variant], VT),
        (true, ..) => (&k.onesweep8_32[variant], VT),
        (false, ..) if sweep.wide => (&k.onesweep[variant], VT),
        (false, ..) => (&k.onesweep32[variant], VT),
    };
    let t = tiles(n, vt);
    let cfg = LaunchConfig { grid_dim: (t as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: stage_bytes_for(vt, carry.second_bytes as u32) };
    let (fi, fo) = if carry.first { (src.first, dst.first) } else { (0, 0) };
    let (si, so) = if carry.second_bytes > 0 { (src.second, dst.second) } else { (0, 0) };
    let args = OnesweepArgs {
        keys_in: src.keys as *const u32,
        first_in: fi as *const u32,
        second_in: si as *const u8,
        keys_out: dst.keys as *mut u32,
        first_out: fo as *mut u32,
        second_out: so as *mut u8,
        counts: (sweep.hist + 4 * RADIX * pass as u64) as *const u32,
        status: sweep.status as *mut u8,
        counter: (sweep.counters + 4 * pass as u64) as *mut u32,
        n,
        shift,
        bits,
        pass,
        run_if: sweep.run_if as *const u32,
    };
    // SAFETY: radix_onesweep{,8}{,_s32}_v{1,2,4,8,16}(OnesweepArgs) (the 8-bit ones only for
    // `bits == 8`; `_keys` only without payloads): `t`
    // blocks of NT over n items each, `vt` keys a thread as the kernel's (payloads null
    // together), counts of this pass's digits, status of 2^bits * t words at least (sized for
    // the smallest tile) of the kernel's width (the sweep's: 32-bit only for n < 2^27 and at
    // most 11 passes) with no tag of this pass yet, a zeroed counter; the kernel's width matches
    // the second payload and the dynamic shared memory its staging of `vt` keys a thread; run_if
    // null or a word the sweep's maker keeps alive.
    unsafe { kernel.launch(stream, cfg, args)? };
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

/// Where one array's passes read and write (device addresses): pass 0 reads `input`, pass `p`
/// writes `temps[p % 2]`, the last pass `output`; `flip` when the result ends in the buffer's
/// other half.
#[derive(Clone, Copy, Default)]
pub(crate) struct Chain {
    input: u64,
    temps: [u64; 2],
    output: u64,
    flip: bool,
}

/// The chain of one array over `passes` passes, its lengths checked against `n` keys. In place
/// (input in the current half `c`, alternate `a`): pass 0 writes `a`, then `c`, ...; the result
/// lands in `a` after an odd count (`flip`). From a source: the first pass writes the half that
/// makes the last one write `c`.
pub(crate) fn chain<T>(array: &Array<'_, '_, T>, n: u64, passes: u32, what: &'static str) -> Result<Chain> {
    let b = &array.buffers;
    same_len(n, b.len(), what)?;
    let (c, a) = (b.half(0).addr(), b.half(1).addr());
    let alternate_needed = array.source.is_none() || passes > 1;
    if alternate_needed && b.is_single() && n > 0 {
        return Err(Error::NoAlternate { what, passes });
    }
    Ok(match &array.source {
        None => Chain { input: c, temps: [a, c], output: if passes % 2 == 1 { a } else { c }, flip: passes % 2 == 1 },
        Some(src) => {
            same_len(n, src.len(), what)?;
            let first = if passes % 2 == 1 { c } else { a };
            Chain { input: src.addr(), temps: [first, if first == c { a } else { c }], output: c, flip: false }
        }
    })
}

impl Chain {
    /// Whether the result ends in the buffer's other half (its selector flips).
    pub(crate) fn flips(&self) -> bool {
        self.flip
    }
}

impl RadixSort {
    /// Sorts `keys` (and `values`) in place on the plan's own scratch: the addresses formed
    /// here from the typed buffers (lengths checked by the caller).
    pub(crate) fn in_place<V: Payload>(
        &mut self,
        keys: &mut impl DevicePtrMut<u32>,
        values: Option<&mut dyn DevicePtrMut<V>>,
        end_bit: u32,
    ) -> Result<()> {
        let n = keys.len() as u64;
        let stream = self.gpu.stream().clone();
        let (k, _k) = keys.device_ptr_mut(&stream);
        if let Some(v) = &values {
            same_len(n, v.len(), "values")?;
        }
        let carry = Carry { first: false, second_bytes: if values.is_some() { V::BYTES } else { 0 } };
        let (v, _v) = gpu_runtime::ptr_mut_or_null(values, &stream);
        // SAFETY: `k` (and `v`) hold n items of their types (checked).
        unsafe { self.run_in_place(n, end_bit, Bufs { keys: k, first: 0, second: v }, carry) }
    }

    /// The passes of the chains of the keys and the payloads present (`[keys, first, second]`).
    ///
    /// # Safety
    /// Each chain was made by [`chain`] for `n` keys and this sort's pass count, from arrays
    /// still borrowed; `carry` names the payloads present; `run_if` is 0 or the address of a
    /// word alive until the launches complete.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn run_chains(
        &mut self,
        n: u64,
        bits: Range<u32>,
        chains: [Option<Chain>; 3],
        carry: Carry,
        scratch: &mut Scratch<'_>,
        status: Option<Scratch<'_>>,
        run_if: u64,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let [k, f, s] = chains.map(Option::unwrap_or_default);
        let bufs = |pick: fn(&Chain) -> u64| Bufs { keys: pick(&k), first: pick(&f), second: pick(&s) };
        let (input, output) = (bufs(|c| c.input), bufs(|c| c.output));
        let temps = [bufs(|c| c.temps[0]), bufs(|c| c.temps[1])];
        // SAFETY: every address holds n items of its type (the chains' lengths were checked by
        // `chain`; an absent payload is 0 everywhere, as `carry` says); pass p reads the input
        // (p = 0) or temps[(p - 1) % 2] and writes temps[p % 2] or the output (last), which
        // `chain` put in the other half from the one read; sources are shared borrows apart
        // from the buffers' mutable ones.
        unsafe { self.run(n, bits, input, output, temps, carry, scratch, status, run_if) }
    }

    /// In place: pass 0 reads the caller's buffers, the last pass writes them (one pass: through
    /// a temporary and a copy back), on the plan's own scratch (two temporary copies).
    ///
    /// # Safety
    /// `io` holds `n` items of each type `carry` names (0 for absent ones).
    unsafe fn run_in_place(&mut self, n: u64, end_bit: u32, io: Bufs, carry: Carry) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let bits = 0..end_bit.min(32);
        let bytes = with_sweep(copies_layout(n, carry, 2), n, self.passes(bits.clone()).1).bytes();
        self.owned(bytes, |s, scratch| {
            let (t0, t1) = (take_copy(scratch, n, carry)?, take_copy(scratch, n, carry)?);
            if s.passes(bits.clone()).0 == 1 {
                // SAFETY: forwarded; t0 is a distinct region of n items of each kind.
                unsafe { s.run(n, bits, io, t0, [t0, t1], carry, scratch, None, 0)? };
                return copy_back(&s.gpu, t0, io, n, carry);
            }
            // SAFETY: forwarded; the chain reads `io` in pass 0 and writes it in the last pass
            // only.
            unsafe { s.run(n, bits, io, io, [t0, t1], carry, scratch, None, 0) }
        })
    }

    /// The passes: pass `p` reads the input (p = 0) or temporary `(p - 1) % 2`, and writes the
    /// output (last pass) or temporary `p % 2`.
    ///
    /// # Safety
    /// Every address of `input`, `output` and `temps` holds `n` items of its type (0 for an
    /// absent payload, the same in all); no pass writes what it reads; `run_if` is 0 or the
    /// address of a word alive until the launches complete.
    #[allow(clippy::too_many_arguments)]
    unsafe fn run(
        &mut self,
        n: u64,
        bits: Range<u32>,
        input: Bufs,
        output: Bufs,
        temps: [Bufs; 2],
        carry: Carry,
        scratch: &mut Scratch<'_>,
        status: Option<Scratch<'_>>,
        run_if: u64,
    ) -> Result<()> {
        let (passes, per) = self.passes(bits.clone());
        let (begin, end) = (bits.start, bits.end.min(32));
        let sweep = Sweep::new(&self.gpu, scratch, status, n, passes, per, run_if)?;
        // SAFETY: the input holds n keys (caller); the sweep is fresh, for n keys and `passes`.
        unsafe { histogram(&self.gpu, &self.k, input.keys, n, begin, per, passes, end, &sweep)? };
        for p in 0..passes {
            let (shift, bits) = pass_digit(begin, per, p, end);
            let src = if p == 0 { input } else { temps[((p - 1) % 2) as usize] };
            let dst = if p + 1 == passes { output } else { temps[(p % 2) as usize] };
            // SAFETY: forwarded from the caller; the sweep counted every pass's digits of the
            // input (a permutation of every pass's keys) and pass p runs on it once, in order.
            unsafe { pass(&self.gpu, &self.k, n, shift, bits, p, src, dst, carry, &sweep)? };
        }
        Ok(())
    }
}
