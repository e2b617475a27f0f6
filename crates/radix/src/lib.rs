#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough.
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

mod launch;
pub mod serial;

use gpu_runtime::cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};
use gpu_runtime::{Kernel, Payload, PtxModule, Scratch, ScratchBuf};

pub use radix_kernels::{bits_below, digit, pass_digit, passes, stage_bytes, HIST_PASSES, MAX_BITS, NT, NV, VT};

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
    /// A first payload sorted in place needs an even number of passes.
    #[error("radix: the first payload can be sorted in place only in an even number of passes ({passes} here)")]
    OddPasses {
        /// Passes the sort takes.
        passes: u32,
    },
    /// A first payload started in the scratch needs an odd number of passes.
    #[error("radix: the first payload can start in the scratch only in an odd number of passes ({passes} here)")]
    EvenPasses {
        /// Passes the sort takes.
        passes: u32,
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
pub struct Carry {
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
        let k = |name: &str| -> Result<Kernel> { Ok(gpu.kernel(&MODULE, name)?) };
        let set = |prefix: &str| -> Result<[Kernel; 5]> {
            let kernels = [
                k(&format!("{prefix}_v1"))?,
                k(&format!("{prefix}_v2"))?,
                k(&format!("{prefix}_v4"))?,
                k(&format!("{prefix}_v8"))?,
                k(&format!("{prefix}_v16"))?,
            ];
            for (kernel, bytes) in kernels.iter().zip([1, 2, 4, 8, 16]) {
                kernel.set_max_dynamic_shared(stage_bytes(bytes))?;
            }
            Ok(kernels)
        };
        let (onesweep, onesweep32) = (set("radix_onesweep")?, set("radix_onesweep_s32")?);
        Ok(Self {
            gpu: gpu.clone(),
            k: launch::Kernels { histogram: k("radix_histogram")?, onesweep, onesweep32 },
            max_bits: DEFAULT_MAX_BITS,
            own: ScratchBuf::default(),
        })
    }

    /// The largest digit (1 to [`MAX_BITS`]; `None`: [`DEFAULT_MAX_BITS`]).
    pub fn set_max_digit_bits(&mut self, bits: Option<u32>) {
        self.max_bits = bits.unwrap_or(DEFAULT_MAX_BITS).clamp(1, MAX_BITS);
    }

    /// `(passes, bits per pass)` for sorting the low `end_bit` bits.
    pub fn passes(&self, end_bit: u32) -> (u32, u32) {
        passes(end_bit, self.max_bits)
    }

    /// Device bytes the plan's own workspace holds now.
    pub fn allocated_bytes(&self) -> u64 {
        self.own.bytes()
    }

    /// Scratch bytes of an in-place sort ([`RadixSort::sort_keys_with`],
    /// [`RadixSort::sort_pairs_with`]) of `n` keys carrying `carry`: two ping-pong copies of the
    /// keys and of each payload, then the sweep state (every pass's digit counts and one
    /// look-back status word per digit and tile of [`NV`] keys: 0.5 byte per key with 32-bit
    /// words, `n < 2^27`; 1 byte with 64-bit ones).
    pub fn workspace_bytes(n: u64, carry: Carry) -> u64 {
        launch::layout(n, carry, 2, 2, MAX_BITS).bytes()
    }

    /// Scratch bytes of [`RadixSort::sort_into_with`], whose first payload's input serves as one
    /// of its two ping-pong copies (so one copy less than [`RadixSort::workspace_bytes`]).
    pub fn into_workspace_bytes(n: u64, carry: Carry) -> u64 {
        launch::layout(n, carry, 2, 1, MAX_BITS).bytes()
    }

    /// Sorts `keys` in place, stably, by their low `end_bit` bits (32: the whole key; bits above
    /// `end_bit` travel with the key and do not count).
    ///
    /// # Errors
    /// [`Error::TooLarge`] past [`MAX_LEN`], runtime errors.
    pub fn sort_keys(&mut self, keys: &mut impl DevicePtrMut<u32>, end_bit: u32) -> Result<()> {
        let bytes = Self::workspace_bytes(keys.len() as u64, Carry::default());
        self.owned(bytes, |s, sc| s.sort_keys_with(keys, end_bit, sc))
    }

    /// Sorts `keys` in place with `values` (1-, 2-, 4-, 8- or 16-byte items) moved along, stably by the keys'
    /// low `end_bit` bits.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::UnsupportedPayload`], [`Error::TooLarge`], runtime
    /// errors.
    pub fn sort_pairs<V: Payload>(&mut self, keys: &mut impl DevicePtrMut<u32>, values: &mut impl DevicePtrMut<V>, end_bit: u32) -> Result<()> {
        let bytes = Self::workspace_bytes(keys.len() as u64, Carry { first: false, second_bytes: V::BYTES });
        self.owned(bytes, |s, sc| s.sort_pairs_with(keys, values, end_bit, sc))
    }

    /// [`RadixSort::sort_keys`] on caller-lent scratch of [`RadixSort::workspace_bytes`].
    ///
    /// # Errors
    /// As [`RadixSort::sort_keys`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn sort_keys_with(&mut self, keys: &mut impl DevicePtrMut<u32>, end_bit: u32, scratch: &mut Scratch<'_>) -> Result<()> {
        let n = check_len(keys.len())?;
        let stream = self.gpu.stream().clone();
        let (k, _k) = keys.device_ptr_mut(&stream);
        let io = launch::Bufs { keys: k, first: 0, second: 0 };
        // SAFETY: `k` holds n keys; no payloads.
        unsafe { self.run_in_place(n, end_bit, io, Carry::default(), scratch) }
    }

    /// [`RadixSort::sort_pairs`] on caller-lent scratch of [`RadixSort::workspace_bytes`].
    ///
    /// # Errors
    /// As [`RadixSort::sort_pairs`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn sort_pairs_with<V: Payload>(
        &mut self,
        keys: &mut impl DevicePtrMut<u32>,
        values: &mut impl DevicePtrMut<V>,
        end_bit: u32,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let n = check_len(keys.len())?;
        same_len(n, values.len(), "values")?;
        let carry = Carry { first: false, second_bytes: payload_bytes::<V>()? };
        let stream = self.gpu.stream().clone();
        let (k, _k) = keys.device_ptr_mut(&stream);
        let (v, _v) = values.device_ptr_mut(&stream);
        let io = launch::Bufs { keys: k, first: 0, second: v };
        // SAFETY: `k` and `v` hold n items of their types.
        unsafe { self.run_in_place(n, end_bit, io, carry, scratch) }
    }

    /// Out of place, with up to two payloads: the keys of `keys_in` stably sorted by their low
    /// `end_bit` bits into `keys_out`; `first = (input, output)` moves a `u32` payload, and its
    /// input is **consumed** (used as a ping-pong buffer: its contents are unspecified after the
    /// call); `second = (input, output)` moves a payload of 1, 2, 4, 8 or 16 bytes. Inputs other than
    /// `first`'s are left as they are. Scratch: [`RadixSort::into_workspace_bytes`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::UnsupportedPayload`], [`Error::TooLarge`],
    /// [`gpu_runtime::Error::ScratchTooSmall`], runtime errors.
    #[allow(clippy::type_complexity)]
    pub fn sort_into_with<V: Payload>(
        &mut self,
        keys_in: &impl DevicePtr<u32>,
        keys_out: &mut impl DevicePtrMut<u32>,
        first: Option<(&mut impl DevicePtrMut<u32>, &mut impl DevicePtrMut<u32>)>,
        second: Option<(&impl DevicePtr<V>, &mut impl DevicePtrMut<V>)>,
        end_bit: u32,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let n = check_len(keys_in.len())?;
        same_len(n, keys_out.len(), "keys_out")?;
        let stream = self.gpu.stream().clone();
        let (ki, _a) = keys_in.device_ptr(&stream);
        let (ko, _b) = keys_out.device_ptr_mut(&stream);
        let (mut fi, mut fo) = (0, 0);
        let (mut _g1, mut _g2) = (None, None);
        let first_present = first.is_some();
        if let Some((i, o)) = first {
            same_len(n, i.len(), "first input")?;
            same_len(n, o.len(), "first output")?;
            let (p, g) = i.device_ptr_mut(&stream);
            fi = p;
            _g1 = Some(g);
            let (p, g) = o.device_ptr_mut(&stream);
            fo = p;
            _g2 = Some(g);
        }
        let second_present = second.is_some();
        let (si, so, _g34) = pair_ptrs(n, second, ["second input", "second output"], &stream)?;
        let second_bytes = if second_present { payload_bytes::<V>()? } else { 0 };
        let carry = Carry { first: first_present, second_bytes };
        scratch.require(Self::into_workspace_bytes(n, carry))?;
        if n == 0 {
            return Ok(());
        }
        let input = launch::Bufs { keys: ki, first: fi, second: si };
        let output = launch::Bufs { keys: ko, first: fo, second: so };
        let t0 = launch::take_copy(scratch, n, carry, true, false)?;
        // The first payload's input is the second ping-pong copy: pass 0 reads it whole before
        // pass 1 writes it.
        let t1 = launch::Bufs { first: fi, ..launch::take_copy(scratch, n, carry, false, false)? };
        // SAFETY: every address holds n items of its type (checked above or carved for n);
        // outputs do not alias inputs or temporaries (distinct borrows and carved regions).
        unsafe { self.run(n, end_bit, input, output, [t0, t1], carry, scratch, None) }
    }

    /// Scratch bytes of [`RadixSort::sort_into_outputs_with`] and
    /// [`RadixSort::sort_into_outputs_first_in_place_with`]: one temporary copy of the keys and of
    /// each payload (the outputs serve as the other ping-pong copy), then the sweep state; enough
    /// for any key width ([`RadixSort::outputs_workspace_bytes_for`] is exact for one, and is
    /// what these sorts require).
    pub fn outputs_workspace_bytes(n: u64, carry: Carry) -> u64 {
        launch::layout(n, carry, 1, 1, MAX_BITS).bytes()
    }

    /// [`RadixSort::outputs_workspace_bytes`] for keys of `end_bit` bits with this plan's digit
    /// width: the look-back status holds `2^bits` words a tile for the digits the passes use,
    /// not `2^MAX_BITS` (with 32-bit words, below 2^27 keys: 0.5 byte per key at 9 bits, 0.0625
    /// at 6; twice that with 64-bit words).
    /// A one-pass sort (at most the plan's digit width of key bits) needs no temporary copy of
    /// the keys or the second payload: only the first payload's (where
    /// [`RadixSort::outputs_first_slice`] puts it).
    pub fn outputs_workspace_bytes_for(&self, n: u64, carry: Carry, end_bit: u32) -> u64 {
        self.outputs_workspace_bytes_lent_status(n, carry, end_bit) + self.status_bytes_for(n, end_bit)
    }

    /// Bytes of the look-back status of a sort of `n` keys of `end_bit` bits with this plan's
    /// digit width: one word (32-bit below 2^27 keys, else 64-bit) per digit and tile, rounded
    /// up to [`gpu_runtime::scratch::ALIGN`] as a [`Scratch`] carves it. A caller
    /// with that much device memory free during the sort (RadixTrans: its output's column
    /// pointer, written after the sort) lends it as `status` to
    /// [`RadixSort::sort_into_outputs_first_in_place_with`] or
    /// [`RadixSort::sort_into_outputs_first_in_scratch_with`], whose scratch then needs
    /// [`RadixSort::outputs_workspace_bytes_lent_status`] bytes only.
    pub fn status_bytes_for(&self, n: u64, end_bit: u32) -> u64 {
        if n == 0 {
            return 0;
        }
        let (_, per) = self.passes(end_bit);
        // Rounded up as the scratch carves it.
        gpu_runtime::scratch::aligned(launch::status_bytes(n, per.min(MAX_BITS)))
    }

    /// [`RadixSort::outputs_workspace_bytes_for`] less the look-back status
    /// ([`RadixSort::status_bytes_for`]), for a sort whose status is lent.
    pub fn outputs_workspace_bytes_lent_status(&self, n: u64, carry: Carry, end_bit: u32) -> u64 {
        if self.passes(end_bit).0 <= 1 {
            return launch::one_pass_layout_lent_status(n, carry).bytes();
        }
        launch::layout_lent_status(n, carry, 1, 1).bytes()
    }

    /// Checks the scratch of a sort into the outputs: the status's bytes in `status` when lent
    /// (and `scratch` without them), else all of it in `scratch`.
    fn outputs_required(&self, n: u64, carry: Carry, end_bit: u32, scratch: &Scratch<'_>, status: &Option<&mut Scratch<'_>>) -> Result<()> {
        match status {
            Some(lent) => {
                lent.require(self.status_bytes_for(n, end_bit))?;
                Ok(scratch.require(self.outputs_workspace_bytes_lent_status(n, carry, end_bit))?)
            }
            None => Ok(scratch.require(self.outputs_workspace_bytes_for(n, carry, end_bit))?),
        }
    }

    /// Out of place with up to two payloads, as [`RadixSort::sort_into_with`], but with the
    /// outputs as one of the two ping-pong copies, so that the scratch holds one copy instead of
    /// two ([`RadixSort::outputs_workspace_bytes`]). Every input is left as it is.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::UnsupportedPayload`], [`Error::TooLarge`],
    /// [`gpu_runtime::Error::ScratchTooSmall`], runtime errors.
    #[allow(clippy::type_complexity)]
    pub fn sort_into_outputs_with<V: Payload>(
        &mut self,
        keys_in: &impl DevicePtr<u32>,
        keys_out: &mut impl DevicePtrMut<u32>,
        first: Option<(&impl DevicePtr<u32>, &mut impl DevicePtrMut<u32>)>,
        second: Option<(&impl DevicePtr<V>, &mut impl DevicePtrMut<V>)>,
        end_bit: u32,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let io = out_of_place(&stream, keys_in, keys_out, first, second)?;
        // SAFETY: every address holds n items of its type (checked by out_of_place); outputs are
        // distinct mutable borrows, so no output aliases an input.
        unsafe { self.run_via_outputs(io.n, end_bit, io.input, io.output, io.carry, scratch, None) }
    }

    /// As [`RadixSort::sort_into_outputs_with`], with the first payload sorted in place in
    /// `first` (its values are read from it and the sorted ones written back): possible only
    /// when the sort takes an even number of passes ([`RadixSort::passes`]), where the first pass
    /// writes the temporaries. RadixTrans uses it to expand the rows straight into its output.
    /// `status`, when given, holds the look-back status ([`RadixSort::status_bytes_for`]; its
    /// contents are clobbered) and `scratch` needs only
    /// [`RadixSort::outputs_workspace_bytes_lent_status`].
    ///
    /// # Errors
    /// [`Error::OddPasses`], and as [`RadixSort::sort_into_outputs_with`].
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    pub fn sort_into_outputs_first_in_place_with<V: Payload>(
        &mut self,
        keys_in: &impl DevicePtr<u32>,
        keys_out: &mut impl DevicePtrMut<u32>,
        first: &mut impl DevicePtrMut<u32>,
        second: Option<(&impl DevicePtr<V>, &mut impl DevicePtrMut<V>)>,
        end_bit: u32,
        scratch: &mut Scratch<'_>,
        status: Option<&mut Scratch<'_>>,
    ) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let mut io = self.placed_first(&stream, keys_in, keys_out, first.len(), second, end_bit, false)?;
        let (f, _c) = first.device_ptr_mut(&stream);
        (io.input.first, io.output.first, io.carry.first) = (f, f, true);
        // SAFETY: every address holds n items of its type (checked above); the first payload's
        // input is its output, which an even pass count reads in pass 0 (writing the
        // temporaries) and writes from pass 1 on; no other output aliases an input.
        unsafe { self.run_via_outputs(io.n, end_bit, io.input, io.output, io.carry, scratch, status) }
    }

    /// The region of `scratch` where [`RadixSort::sort_into_outputs_first_in_scratch_with`] reads
    /// its first payload: its first `n` words (the temporary copy starts with the first
    /// payload), carved from a reborrow (the scratch itself is not consumed). Write the payload
    /// there, then pass the same scratch to the sort.
    ///
    /// # Errors
    /// [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn outputs_first_slice<'s>(scratch: &'s mut Scratch<'_>, n: usize) -> Result<gpu_runtime::scratch::ScratchSlice<'s, u32>> {
        let mut view = scratch.reborrow();
        Ok(view.slice::<u32>(n)?)
    }

    /// As [`RadixSort::sort_into_outputs_with`], with the first payload's input already in the
    /// scratch, in [`RadixSort::outputs_first_slice`] (its contents are consumed): possible only
    /// when the sort takes an odd number of passes, where pass 0 reads the temporaries and writes
    /// the outputs. RadixTrans uses it to expand the rows straight into the scratch (no separate
    /// rows buffer). `status` as in [`RadixSort::sort_into_outputs_first_in_place_with`].
    ///
    /// # Errors
    /// [`Error::EvenPasses`], and as [`RadixSort::sort_into_outputs_with`].
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    pub fn sort_into_outputs_first_in_scratch_with<V: Payload>(
        &mut self,
        keys_in: &impl DevicePtr<u32>,
        keys_out: &mut impl DevicePtrMut<u32>,
        first_out: &mut impl DevicePtrMut<u32>,
        second: Option<(&impl DevicePtr<V>, &mut impl DevicePtrMut<V>)>,
        end_bit: u32,
        scratch: &mut Scratch<'_>,
        status: Option<&mut Scratch<'_>>,
    ) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let mut io = self.placed_first(&stream, keys_in, keys_out, first_out.len(), second, end_bit, true)?;
        let (f, _c) = first_out.device_ptr_mut(&stream);
        (io.output.first, io.carry.first) = (f, true);
        self.outputs_required(io.n, io.carry, end_bit, scratch, &status)?;
        if io.n == 0 {
            return Ok(());
        }
        // The temporary copy, carved as `outputs_first_slice` carves it: its first payload is
        // the input.
        let temp = launch::take_copy(scratch, io.n, io.carry, true, self.passes(end_bit).0 <= 1)?;
        io.input.first = temp.first;
        // SAFETY: every address holds n items of its type (checked above); with an odd pass
        // count pass 0 reads the input (the temporaries' first payload) and writes the outputs,
        // pass p > 0 reads temps[(p - 1) % 2] and writes temps[p % 2] or the outputs, never the
        // buffer it reads.
        unsafe { self.run(io.n, end_bit, io.input, io.output, [io.output, temp], io.carry, scratch, status) }
    }

    /// The checks the two sorts with a placed first payload share: keys and second payload out of
    /// place, the first payload's length, and the pass count's parity (odd when `odd`), refused
    /// with [`Error::EvenPasses`] or [`Error::OddPasses`] otherwise.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn placed_first<'a, V: Payload>(
        &self,
        stream: &'a CudaStream,
        keys_in: &'a impl DevicePtr<u32>,
        keys_out: &'a mut impl DevicePtrMut<u32>,
        first_len: usize,
        second: Option<(&'a impl DevicePtr<V>, &'a mut impl DevicePtrMut<V>)>,
        end_bit: u32,
        odd: bool,
    ) -> Result<OutOfPlace<'a>> {
        let io = out_of_place(stream, keys_in, keys_out, None::<(&CudaSlice<u32>, &mut CudaSlice<u32>)>, second)?;
        same_len(io.n, first_len, "first")?;
        let (passes, _) = self.passes(end_bit);
        if io.n > 0 && (passes % 2 == 1) != odd {
            return Err(if odd { Error::EvenPasses { passes } } else { Error::OddPasses { passes } });
        }
        Ok(io)
    }

    /// The passes with the outputs as one ping-pong copy and one scratch temporary as the other,
    /// ordered so that the last pass writes the outputs: an even pass count starts in the
    /// temporary, an odd one in the outputs.
    ///
    /// # Safety
    /// Every address of `input` and `output` holds `n` items of its type (0 for an absent
    /// payload, the same in both); no output aliases an input, except a first payload's (read
    /// only by pass 0, which writes the temporary, when the pass count is even).
    #[allow(clippy::too_many_arguments)]
    unsafe fn run_via_outputs(
        &mut self,
        n: u64,
        end_bit: u32,
        input: launch::Bufs,
        output: launch::Bufs,
        carry: Carry,
        scratch: &mut Scratch<'_>,
        status: Option<&mut Scratch<'_>>,
    ) -> Result<()> {
        self.outputs_required(n, carry, end_bit, scratch, &status)?;
        if n == 0 {
            return Ok(());
        }
        let temp = launch::take_copy(scratch, n, carry, true, self.passes(end_bit).0 <= 1)?;
        let (passes, _) = self.passes(end_bit);
        let temps = if passes % 2 == 0 { [temp, output] } else { [output, temp] };
        // SAFETY: forwarded; pass p writes temps[p % 2] or the output (last) and reads the input
        // (p = 0) or temps[(p - 1) % 2], never the buffer it writes.
        unsafe { self.run(n, end_bit, input, output, temps, carry, scratch, status) }
    }

    /// Scratch bytes of [`RadixSort::partition_into_with`] for `n` keys: the sweep state (no
    /// ping-pong copies: one pass goes straight to the outputs).
    pub fn partition_workspace_bytes(n: u64) -> u64 {
        launch::pass_layout(n).bytes()
    }

    /// One stable pass by the digit `(key >> shift) & (2^bits - 1)` (`bits <= MAX_BITS`), out of
    /// place: the keys of `keys_in` into `keys_out` grouped by digit in digit order, each group
    /// in input order (an MSD partition, or one LSD pass); `first` and `second` move a `u32` and
    /// a payload of 1, 2, 4, 8 or 16 bytes along. Inputs are left as they are. Scratch:
    /// [`RadixSort::partition_workspace_bytes`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::UnsupportedPayload`], [`Error::TooLarge`] (also for
    /// `bits > MAX_BITS` or `shift + bits > 32`), [`gpu_runtime::Error::ScratchTooSmall`],
    /// runtime errors.
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    pub fn partition_into_with<V: Payload>(
        &mut self,
        keys_in: &impl DevicePtr<u32>,
        keys_out: &mut impl DevicePtrMut<u32>,
        first: Option<(&impl DevicePtr<u32>, &mut impl DevicePtrMut<u32>)>,
        second: Option<(&impl DevicePtr<V>, &mut impl DevicePtrMut<V>)>,
        shift: u32,
        bits: u32,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        if bits > MAX_BITS || shift + bits > 32 {
            return Err(Error::TooLarge { what: "digit end bit (shift + bits)", len: u64::from(shift + bits), max: 32 });
        }
        let stream = self.gpu.stream().clone();
        let io = out_of_place(&stream, keys_in, keys_out, first, second)?;
        let n = io.n;
        scratch.require(Self::partition_workspace_bytes(n))?;
        if n == 0 {
            return Ok(());
        }
        let sweep = launch::Sweep::new(&self.gpu, scratch, None, n, 1, bits)?;
        // SAFETY: every address holds n items of its type (checked by out_of_place); outputs are
        // distinct mutable borrows, so they alias no input; the sweep is fresh, for n keys and one
        // pass, and counts the input's digits before the pass.
        unsafe {
            launch::histogram(&self.gpu, &self.k, io.input.keys, n, shift, bits, 1, shift + bits, &sweep)?;
            launch::pass(&self.gpu, &self.k, n, shift, bits, 0, io.input, io.output, io.carry, &sweep)
        }
    }

    /// In place: pass 0 reads the caller's buffers, the last pass writes them (one pass: through
    /// a temporary and a copy back).
    ///
    /// # Safety
    /// `io` holds `n` items of each type `carry` names (0 for absent ones).
    unsafe fn run_in_place(&mut self, n: u64, end_bit: u32, io: launch::Bufs, carry: Carry, scratch: &mut Scratch<'_>) -> Result<()> {
        scratch.require(Self::workspace_bytes(n, carry))?;
        if n == 0 {
            return Ok(());
        }
        let (t0, t1) = (launch::take_copy(scratch, n, carry, true, false)?, launch::take_copy(scratch, n, carry, true, false)?);
        let (passes, _) = self.passes(end_bit);
        if passes == 1 {
            // SAFETY: forwarded; t0 is a distinct region of n items of each kind.
            unsafe { self.run(n, end_bit, io, t0, [t0, t1], carry, scratch, None)? };
            return launch::copy_back(&self.gpu, t0, io, n, carry);
        }
        // SAFETY: forwarded; the chain reads `io` in pass 0 and writes it in the last pass only.
        unsafe { self.run(n, end_bit, io, io, [t0, t1], carry, scratch, None) }
    }

    /// The passes: pass `p` reads the input (p = 0) or temporary `(p - 1) % 2`, and writes the
    /// output (last pass) or temporary `p % 2`.
    ///
    /// # Safety
    /// Every address of `input`, `output` and `temps` holds `n` items of its type (0 for an
    /// absent payload, the same in all); an output is never read in the same pass (one pass:
    /// `output` differs from `input`).
    #[allow(clippy::too_many_arguments)]
    unsafe fn run(
        &mut self,
        n: u64,
        end_bit: u32,
        input: launch::Bufs,
        output: launch::Bufs,
        temps: [launch::Bufs; 2],
        carry: Carry,
        scratch: &mut Scratch<'_>,
        status: Option<&mut Scratch<'_>>,
    ) -> Result<()> {
        let (passes, per) = self.passes(end_bit);
        let end = end_bit.min(32);
        let sweep = launch::Sweep::new(&self.gpu, scratch, status, n, passes, per)?;
        // SAFETY: the input holds n keys (caller); the sweep is fresh, for n keys and `passes`.
        unsafe { launch::histogram(&self.gpu, &self.k, input.keys, n, 0, per, passes, end, &sweep)? };
        for p in 0..passes {
            let (shift, bits) = pass_digit(0, per, p, end);
            let src = if p == 0 { input } else { temps[((p - 1) % 2) as usize] };
            let dst = if p + 1 == passes { output } else { temps[(p % 2) as usize] };
            // SAFETY: forwarded from the caller; the sweep counted every pass's digits of the
            // input (a permutation of every pass's keys) and pass p runs on it once, in order.
            unsafe { launch::pass(&self.gpu, &self.k, n, shift, bits, p, src, dst, carry, &sweep)? };
        }
        Ok(())
    }

    /// Runs `f` on the plan's own scratch, grown to `bytes`.
    fn owned(&mut self, bytes: u64, f: impl FnOnce(&mut Self, &mut Scratch<'_>) -> Result<()>) -> Result<()> {
        let gpu = self.gpu.clone();
        ScratchBuf::lend(self, |p| &mut p.own, &gpu, bytes, f)
    }
}

/// The device addresses of an out-of-place call with up to two `(input, output)` payload pairs
/// (checked to hold `n` items each), its carry, and the guards that keep the buffers ordered on
/// the stream while the kernels use them.
struct OutOfPlace<'a> {
    n: u64,
    input: launch::Bufs,
    output: launch::Bufs,
    carry: Carry,
    _guards: (SyncOnDrop<'a>, SyncOnDrop<'a>, PairGuards<'a>, PairGuards<'a>),
}

#[allow(clippy::type_complexity)]
fn out_of_place<'a, V: Payload>(
    stream: &'a CudaStream,
    keys_in: &'a impl DevicePtr<u32>,
    keys_out: &'a mut impl DevicePtrMut<u32>,
    first: Option<(&'a impl DevicePtr<u32>, &'a mut impl DevicePtrMut<u32>)>,
    second: Option<(&'a impl DevicePtr<V>, &'a mut impl DevicePtrMut<V>)>,
) -> Result<OutOfPlace<'a>> {
    let n = check_len(keys_in.len())?;
    same_len(n, keys_out.len(), "keys_out")?;
    let (ki, ga) = keys_in.device_ptr(stream);
    let (ko, gb) = keys_out.device_ptr_mut(stream);
    let first_present = first.is_some();
    let (fi, fo, g12) = pair_ptrs(n, first, ["first input", "first output"], stream)?;
    let second_present = second.is_some();
    let (si, so, g34) = pair_ptrs(n, second, ["second input", "second output"], stream)?;
    let second_bytes = if second_present { payload_bytes::<V>()? } else { 0 };
    Ok(OutOfPlace {
        n,
        input: launch::Bufs { keys: ki, first: fi, second: si },
        output: launch::Bufs { keys: ko, first: fo, second: so },
        carry: Carry { first: first_present, second_bytes },
        _guards: (ga, gb, g12, g34),
    })
}

/// The guards that keep a payload pair's buffers ordered on the stream while the kernels use them.
type PairGuards<'a> = Option<(SyncOnDrop<'a>, SyncOnDrop<'a>)>;

/// The addresses of an optional `(input, output)` payload pair of `n` items each (0 and 0 when
/// absent; `what` names input and output in length errors), with their guards.
fn pair_ptrs<'a, T>(
    n: u64,
    pair: Option<(&'a impl DevicePtr<T>, &'a mut impl DevicePtrMut<T>)>,
    what: [&'static str; 2],
    stream: &'a CudaStream,
) -> Result<(u64, u64, PairGuards<'a>)> {
    let Some((i, o)) = pair else { return Ok((0, 0, None)) };
    same_len(n, i.len(), what[0])?;
    same_len(n, o.len(), what[1])?;
    let (p, gi) = i.device_ptr(stream);
    let (q, go) = o.device_ptr_mut(stream);
    Ok((p, q, Some((gi, go))))
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
