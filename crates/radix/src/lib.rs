#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough.
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

mod buffers;
mod launch;
pub mod serial;

pub use buffers::{DoubleBuffer, Sort};

use std::ops::Range;

use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut};
use gpu_runtime::scratch::Layout;
use gpu_runtime::{KernelOf, Payload, PtxModule, Scratch, ScratchBuf};
use radix_kernels::OnesweepArgs;

pub use radix_kernels::{bits_below, digit, pass_digit, passes, stage_bytes, stage_bytes_for, HIST_PASSES, MAX_BITS, NT, NV, VT, VT_KEYS8};

/// The embedded `radix` PTX module (built from `kernels-rs/radix`).
pub static MODULE: PtxModule = gpu_runtime::embed_module!("radix");

/// Most keys one call sorts (offsets are 32-bit).
pub const MAX_LEN: u64 = u32::MAX as u64;

/// Default largest digit (bits per pass): fewest passes of at most 8 bits, balanced. A 9-bit pass
/// ranks 512 digits per tile (a thread each, summing 16 warps' counters), which made it 1.27×
/// the time of an 8-bit pass on an H100 (238 against 188 µs on 10M keys under ncu); RadixTrans on
/// 17- and 18-bit columns took 0.480 and 0.287 ms as 3 passes of 6 bits against 0.505 and 0.327
/// as 2 of 9 (uniform 100k² and 150k × 200k; `sptrans bench --radix-bits 8` and `9`, same run,
/// 2026-11-24), and the same on wider columns, where both give the same passes. 24- and 32-bit
/// keys take 3 and 4 passes of 8 either way.
pub const DEFAULT_MAX_BITS: u32 = 8;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A driver, memory or launch error.
    #[error(transparent)]
    Runtime(#[from] gpu_runtime::Error),
    /// Buffers of different lengths.
    #[error("radix: {what} has {got} items, expected {expected}")]
    LengthMismatch {
        /// Which buffer.
        what: &'static str,
        /// Length required.
        expected: u64,
        /// Length given.
        got: u64,
    },
    /// More keys than 32-bit offsets address.
    #[error("radix: {what}: {len} exceeds the maximum of {max}")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Keys given.
        len: u64,
        /// Largest supported.
        max: u64,
    },
    /// A sort that writes both halves of a buffer given without an alternate
    /// ([`DoubleBuffer::single`]).
    #[error("radix: {what} has no alternate half, and this sort ({passes} passes) writes both")]
    NoAlternate {
        /// Which buffer.
        what: &'static str,
        /// Passes the sort takes.
        passes: u32,
    },
    /// Key bits `begin..end` with `begin > end`.
    #[error("radix: key bits {begin}..{end} are not a range")]
    InvalidBits {
        /// First bit.
        begin: u32,
        /// One past the last bit.
        end: u32,
    },
    /// Payloads of a size the kernels do not move.
    #[error("radix: payloads of {bytes} bytes are not supported (1, 2, 4, 8 or 16)")]
    UnsupportedPayload {
        /// Size of one payload item.
        bytes: usize,
    },
}

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

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What a sort moves besides the keys: whether there is a `u32` first payload and how many bytes
/// a second payload item has (0: none, 1, 2, 4, 8 or 16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Carry {
    /// A `u32` payload travels with the keys.
    pub first: bool,
    /// Bytes of the second payload (0: none).
    pub second_bytes: usize,
}

/// A reusable radix sort: loaded kernels and scratch kept for reuse
/// (or caller-lent [`Scratch`] through the `*_with` calls). Enqueues on its [`Gpu`]'s stream.
pub struct RadixSort {
    gpu: Gpu,
    k: launch::Kernels,
    max_bits: u32,
    own: ScratchBuf,
}

impl RadixSort {
    /// Loads the kernels (the modules are loaded once per context).
    ///
    /// # Errors
    /// [`Error::Runtime`] when a module cannot be loaded.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let k = |name: &str| -> Result<KernelOf<OnesweepArgs>> { Ok(gpu.kernel_of(&MODULE, name)?) };
        let set = |prefix: &str| -> Result<[KernelOf<OnesweepArgs>; 5]> {
            let kernels = [
                k(&format!("{prefix}_v1"))?,
                k(&format!("{prefix}_v2"))?,
                k(&format!("{prefix}_v4"))?,
                k(&format!("{prefix}_v8"))?,
                k(&format!("{prefix}_v16"))?,
            ];
            for (kernel, bytes) in kernels.iter().zip([1, 2, 4, 8, 16]) {
                kernel.kernel().set_max_dynamic_shared(stage_bytes(bytes))?;
            }
            Ok(kernels)
        };
        let (onesweep, onesweep32) = (set("radix_onesweep")?, set("radix_onesweep_s32")?);
        let (onesweep8, onesweep8_32) = (set("radix_onesweep8")?, set("radix_onesweep8_s32")?);
        let keys8 = [k("radix_onesweep8_keys")?, k("radix_onesweep8_s32_keys")?];
        for kernel in &keys8 {
            kernel.kernel().set_max_dynamic_shared(stage_bytes_for(VT_KEYS8, 0))?;
        }
        Ok(Self {
            gpu: gpu.clone(),
            k: launch::Kernels { histogram: gpu.kernel_of(&MODULE, "radix_histogram")?, onesweep, onesweep32, onesweep8, onesweep8_32, keys8 },
            max_bits: DEFAULT_MAX_BITS,
            own: ScratchBuf::default(),
        })
    }

    /// The largest digit (1 to [`MAX_BITS`]; `None`: [`DEFAULT_MAX_BITS`]).
    pub fn set_max_digit_bits(&mut self, bits: Option<u32>) {
        self.max_bits = bits.unwrap_or(DEFAULT_MAX_BITS).clamp(1, MAX_BITS);
    }

    /// `(passes, bits per pass)` for sorting by the key bits `bits` (`begin..end`, `end`
    /// clamped to 32): the fewest passes of at most the plan's digit width, balanced; at least
    /// one.
    pub fn passes(&self, bits: Range<u32>) -> (u32, u32) {
        passes(bits.end.min(32).saturating_sub(bits.start), self.max_bits)
    }

    /// Device bytes the plan's own workspace holds now.
    pub fn allocated_bytes(&self) -> u64 {
        self.own.bytes()
    }

    /// Scratch bytes of [`RadixSort::sort_with`] for `n` keys sorted by `bits` with this plan's
    /// digit width: the sweep state (every pass's digit counts, then the look-back status:
    /// [`RadixSort::status_bytes`]). The ping-pong copies are the caller's [`DoubleBuffer`]s. A
    /// sort whose status is lent ([`Sort::lent_status`]) needs this less
    /// [`RadixSort::status_bytes`].
    pub fn workspace_bytes(&self, n: u64, bits: Range<u32>) -> u64 {
        if n == 0 {
            return 0;
        }
        launch::with_sweep(Layout::new(), n, self.passes(bits).1).bytes()
    }

    /// Bytes of the look-back status of a sort of `n` keys by `bits` with this plan's digit
    /// width: one word (32-bit below 2^27 keys, else 64-bit) per digit and tile of [`NV`] keys
    /// (with 32-bit words: 0.5 byte per key at 8 bits, 0.0625 at 5), rounded up to
    /// [`gpu_runtime::scratch::ALIGN`] as a [`Scratch`] carves it; the part of
    /// [`RadixSort::workspace_bytes`] a caller may lend ([`Sort::lent_status`]).
    pub fn status_bytes(&self, n: u64, bits: Range<u32>) -> u64 {
        if n == 0 {
            return 0;
        }
        gpu_runtime::scratch::aligned(launch::status_bytes(n, self.passes(bits).1))
    }

    /// Sorts `keys` in place, stably, by their low `end_bit` bits (32: the whole key; bits above
    /// `end_bit` travel with the key and do not count), on the plan's own scratch (two
    /// temporary copies of the keys and the sweep state; grown when needed, then reused).
    ///
    /// # Errors
    /// [`Error::TooLarge`] past [`MAX_LEN`], runtime errors.
    pub fn sort_keys(&mut self, keys: &mut impl DevicePtrMut<u32>, end_bit: u32) -> Result<()> {
        check_len(keys.len())?;
        self.in_place::<u32>(keys, None, end_bit)
    }

    /// Sorts `keys` in place with `values` (1-, 2-, 4-, 8- or 16-byte items) moved along,
    /// stably by the keys' low `end_bit` bits, on the plan's own scratch (as
    /// [`RadixSort::sort_keys`], with two copies of the values).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::UnsupportedPayload`], [`Error::TooLarge`], runtime
    /// errors.
    pub fn sort_pairs<V: Payload>(&mut self, keys: &mut impl DevicePtrMut<u32>, values: &mut impl DevicePtrMut<V>, end_bit: u32) -> Result<()> {
        let n = check_len(keys.len())?;
        same_len(n, values.len(), "values")?;
        payload_bytes::<V>()?;
        self.in_place(keys, Some(values), end_bit)
    }

    /// The general sort ([`Sort`]: keys and up to two payloads in [`DoubleBuffer`]s, each in
    /// place or from a source; the bits; a lent status) on the plan's own scratch of
    /// [`RadixSort::workspace_bytes`] (grown when needed, then reused).
    ///
    /// # Errors
    /// As [`RadixSort::sort_with`].
    pub fn sort<V: Payload>(&mut self, sort: Sort<'_, '_, V>) -> Result<()> {
        let n = sort.keys.buffers.len() as u64;
        let bytes = self.scratch_bytes(n, sort.bits.clone(), sort.status.is_some());
        self.owned(bytes, |s, scratch| s.sort_with(sort, scratch))
    }

    /// [`RadixSort::sort`] on caller-lent scratch of [`RadixSort::workspace_bytes`] (less
    /// [`RadixSort::status_bytes`] when the status is lent). Afterwards every buffer's current
    /// half holds its sorted array: an array sorted in place in an odd number of passes ends in
    /// its other half and its selector flips; one read from a source ends in its current half.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] (a buffer or source not of the keys' length),
    /// [`Error::NoAlternate`] (a [`DoubleBuffer::single`] where both halves are written),
    /// [`Error::InvalidBits`], [`Error::UnsupportedPayload`], [`Error::TooLarge`],
    /// [`gpu_runtime::Error::ScratchTooSmall`] (of the scratch or of the lent status), runtime
    /// errors.
    pub fn sort_with<V: Payload>(&mut self, sort: Sort<'_, '_, V>, scratch: &mut Scratch<'_>) -> Result<()> {
        let Sort { keys, first, second, bits, status, run_if } = sort;
        if let Some(w) = &run_if {
            if w.is_empty() {
                return Err(Error::Runtime(gpu_runtime::Error::LengthMismatch { what: "run_if word", expected: 1, got: 0 }));
            }
        }
        if bits.start > bits.end {
            return Err(Error::InvalidBits { begin: bits.start, end: bits.end });
        }
        if bits.end > 32 {
            return Err(Error::TooLarge { what: "end bit", len: u64::from(bits.end), max: 32 });
        }
        let n = check_len(keys.buffers.len())?;
        let (passes, _) = self.passes(bits.clone());
        let kc = launch::chain(&keys, n, passes, "keys")?;
        let fc = first.as_ref().map(|f| launch::chain(f, n, passes, "first payload")).transpose()?;
        let sc = second.as_ref().map(|s| launch::chain(s, n, passes, "second payload")).transpose()?;
        let carry = Carry { first: first.is_some(), second_bytes: if second.is_some() { payload_bytes::<V>()? } else { 0 } };
        let mut status = status;
        if let Some(lent) = status.as_mut() {
            lent.require(self.status_bytes(n, bits.clone()))?;
        }
        scratch.require(self.scratch_bytes(n, bits.clone(), status.is_some()))?;
        // SAFETY: the chains were just made by `launch::chain` from the borrowed arrays, which
        // outlive this call, for n keys and this pass count.
        let stream = self.gpu.stream().clone();
        let (word, _word) = match &run_if {
            Some(w) => {
                let (a, g) = w.device_ptr(&stream);
                (a, Some(g))
            }
            None => (0, None),
        };
        // SAFETY: as above; `word` is 0 or the first of the view's words, borrowed (and its
        // read recorded by the guard `_word`) past the launches.
        unsafe { self.run_chains(n, bits, [Some(kc), fc, sc], carry, scratch, status, word)? };
        settle(Some(keys), Some(kc));
        settle(first, fc);
        settle(second, sc);
        Ok(())
    }

    /// The scratch a sort by `bits` of `n` keys needs: [`RadixSort::workspace_bytes`], less
    /// [`RadixSort::status_bytes`] when the status is lent.
    fn scratch_bytes(&self, n: u64, bits: Range<u32>, status_lent: bool) -> u64 {
        let all = self.workspace_bytes(n, bits.clone());
        if status_lent {
            all - self.status_bytes(n, bits)
        } else {
            all
        }
    }

    /// Runs `f` on the plan's own scratch, grown to `bytes`.
    fn owned(&mut self, bytes: u64, f: impl FnOnce(&mut Self, &mut Scratch<'_>) -> Result<()>) -> Result<()> {
        let gpu = self.gpu.clone();
        ScratchBuf::lend(self, |p| &mut p.own, &gpu, bytes, f)
    }
}

/// Flips `array`'s selector when its chain ended in the other half.
fn settle<T>(array: Option<buffers::Array<'_, '_, T>>, chain: Option<launch::Chain>) {
    if let (Some(a), Some(c)) = (array, chain) {
        if c.flips() {
            a.buffers.flip();
        }
    }
}

fn payload_bytes<V: Payload>() -> Result<usize> {
    match V::BYTES {
        1 | 2 | 4 | 8 | 16 => Ok(V::BYTES),
        bytes => Err(Error::UnsupportedPayload { bytes }),
    }
}

fn check_len(n: usize) -> Result<u64> {
    if n as u64 > MAX_LEN {
        return Err(Error::TooLarge { what: "keys", len: n as u64, max: MAX_LEN });
    }
    Ok(n as u64)
}

fn same_len(n: u64, other: usize, what: &'static str) -> Result<()> {
    if other as u64 != n {
        return Err(Error::LengthMismatch { what, expected: n, got: other as u64 });
    }
    Ok(())
}

#[cfg(test)]
mod signature_tests {
    /// Every kernel loaded with an argument struct takes exactly that struct in the committed
    /// PTX (what `Gpu::kernel_of` checks at load, here without a GPU).
    #[test]
    fn argument_structs_match_the_ptx() {
        use gpu_runtime::check_signature;
        use radix_kernels::{HistogramArgs, OnesweepArgs};
        check_signature::<HistogramArgs>(&crate::MODULE, "radix_histogram").unwrap();
        for prefix in ["radix_onesweep", "radix_onesweep_s32", "radix_onesweep8", "radix_onesweep8_s32"] {
            for v in [1, 2, 4, 8, 16] {
                check_signature::<OnesweepArgs>(&crate::MODULE, &format!("{prefix}_v{v}")).unwrap();
            }
        }
        for name in ["radix_onesweep8_keys", "radix_onesweep8_s32_keys"] {
            check_signature::<OnesweepArgs>(&crate::MODULE, name).unwrap();
        }
        assert!(check_signature::<OnesweepArgs>(&crate::MODULE, "radix_histogram").is_err());
    }
}
