//! Stable LSD radix sort of `u32` keys on the GPU, onesweep (Adinets & Merrill 2022), carrying
//! up to two payloads (a `u32` one and one of 1, 2, 4, 8 or 16 bytes). Host side: crate `gpu-radix`.
//!
//! - **histogram** ([`tile::histogram`]): one read of the keys counts the digits of up to
//!   [`HIST_PASSES`] passes at once (shared-memory counts, then global atomics);
//! - **one kernel per pass** ([`tile::onesweep`]): each tile of [`NV`] keys ranks its keys among
//!   equal digits in input order (digits matched by warp ballots, per-warp counters: stable),
//!   publishes its digit counts and adds up those of the tiles before it by decoupled look-back
//!   (no upsweep, no spine; one thread per digit, two for 9-bit digits; the digits' offsets by
//!   block-wide warp scans), stages the tile in shared memory in digit order and writes it out in
//!   runs of equal digits, with the payloads. Shared memory is addressed in the shared window
//!   (`gpu_device::shared::Smem`: `LDS`/`STS`/`ATOMS`), global stores are `st.global`.
//!
//! The building blocks are public for other kernels: [`warp::match_rank`] (from
//! `gpu-device`), [`tile::histogram`] and [`tile::onesweep`]; the kernels take one
//! `#[repr(C)]` argument struct each ([`HistogramArgs`], [`OnesweepArgs`]), the host builds the
//! same struct.
//!
//! Kernels (feature `kernels`): `radix_histogram`, `radix_onesweep_v{1,2,4,8,16}` (the second
//! payload's width in bytes; 16-byte items move as two 8-byte halves; null pointers skip a
//! payload or the keys' output; dynamic shared memory of [`stage_bytes`]) and the same with
//! 32-bit look-back status words, `radix_onesweep_s32_v*`; `radix_onesweep8_*` are the same for
//! passes of exactly 8 bits, the width fixed at compile time (fewer registers), and
//! `radix_onesweep8{,_s32}_keys` those passes for keys alone ([`VT_KEYS8`] keys a thread): the
//! payload shape fixed too, so the registers freed hold a larger tile.
#![no_std]
#![cfg_attr(all(target_arch = "nvptx64", feature = "kernels"), feature(abi_ptx, asm_experimental_arch))]
#![deny(missing_docs)]

/// Threads per block of the pass kernels (CUB's sm_90 tuning for 4-byte keys: 384 threads, two
/// blocks a multiprocessor at up to 80 registers).
pub const NT: u32 = 384;
/// Keys per thread of a pass (the kernels of any payloads and digit width; the smallest tile:
/// look-back status sized for `NV`-key tiles serves every pass).
pub const VT: u32 = 12;
/// Keys per tile (one block of a pass): `NT * VT`.
pub const NV: u32 = NT * VT;
/// Keys per thread of the 8-bit passes of keys alone (`radix_onesweep8{,_s32}_keys`).
pub const VT_KEYS8: u32 = 16;
/// Threads per block of the histogram kernel.
pub const HIST_NT: u32 = 512;
/// Most digit bits of one pass (512 buckets).
pub const MAX_BITS: u32 = 9;
/// Most digits one thread of a pass looks after (`ceil(2^MAX_BITS / NT)`).
pub const DIGITS_PER_THREAD: u32 = (1u32 << MAX_BITS).div_ceil(NT);
/// Warps of a pass's block.
pub const WARPS: u32 = NT / 32;

const _: () = assert!(NV * 8 >= WARPS * (1 << MAX_BITS) * 4, "the per-warp counters share the stage");

/// The arguments of `radix_histogram` ([`tile::histogram`]): pass `p < passes` counts digit
/// `(key >> (shift0 + p * per)) & (2^bits - 1)` (its bits cut at `end`) of the `n` keys into
/// `hist[p * 2^MAX_BITS + d]`; block `b` counts keys `[b * chunk, (b + 1) * chunk)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HistogramArgs {
    /// The keys (`n` words).
    pub keys: *const u32,
    /// The counts (`passes * 2^MAX_BITS` words, zeroed before).
    pub hist: *mut u32,
    /// Keys.
    pub n: u64,
    /// Keys a block counts (a multiple of 4).
    pub chunk: u64,
    /// The first pass's lowest bit.
    pub shift0: u32,
    /// Bits a pass (at most [`MAX_BITS`]).
    pub per: u32,
    /// Passes counted (at most [`HIST_PASSES`]).
    pub passes: u32,
    /// The bit past the key's last sorted one.
    pub end: u32,
    /// Null, or a word read at the launch: the kernel does nothing when it is 0 (a sort decided
    /// on the device, e.g. RadixTrans after SymTrans's verdict).
    pub run_if: *const u32,
}

/// The arguments of a `radix_onesweep_*` kernel ([`tile::onesweep`]): one stable pass by digit
/// `(key >> shift) & (2^bits - 1)` from the inputs into the outputs. A null payload pointer (both
/// of a pair) skips that payload; a null `keys_out` skips writing the keys.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct OnesweepArgs {
    /// The keys read (`n` words).
    pub keys_in: *const u32,
    /// The first payload read (`n` words) or null.
    pub first_in: *const u32,
    /// The second payload read (`n` items of the kernel's width) or null.
    pub second_in: *const u8,
    /// The keys written, or null.
    pub keys_out: *mut u32,
    /// The first payload written, or null.
    pub first_out: *mut u32,
    /// The second payload written, or null.
    pub second_out: *mut u8,
    /// This pass's digit counts over all keys (`2^bits` words).
    pub counts: *const u32,
    /// The look-back status: `2^bits * ceil(n / NV)` words of the kernel's width with no tag of
    /// `pass` or later.
    pub status: *mut u8,
    /// This pass's tile counter (0 before the launch).
    pub counter: *mut u32,
    /// Keys.
    pub n: u64,
    /// The digit's lowest bit.
    pub shift: u32,
    /// The digit's bits (at most [`MAX_BITS`]).
    pub bits: u32,
    /// The pass's number in its sort (the status words' tag).
    pub pass: u32,
    /// Null, or a word read at the launch: the kernel does nothing when it is 0 (as
    /// [`HistogramArgs::run_if`]).
    pub run_if: *const u32,
}

/// Bits of the count of a 32-bit look-back status word (a 5-bit tag above).
pub const STATUS32_COUNT_BITS: u32 = 27;
/// The most passes of a sort with 32-bit status words (the tag `2 * pass + 2` fits 5 bits).
pub const STATUS32_MAX_PASSES: u32 = 15;

/// Whether a sort of `n` keys in `passes` passes uses 32-bit look-back status words (half the
/// status memory of 64-bit ones): `n < 2^STATUS32_COUNT_BITS` and at most
/// [`STATUS32_MAX_PASSES`] passes.
///
/// ```
/// assert!(radix_kernels::status32(100_000_000, 3));
/// assert!(!radix_kernels::status32(200_000_000, 3));
/// assert!(!radix_kernels::status32(1000, 16));
/// ```
pub const fn status32(n: u64, passes: u32) -> bool {
    n < (1 << STATUS32_COUNT_BITS) && passes <= STATUS32_MAX_PASSES
}

/// Most passes one histogram launch counts.
pub const HIST_PASSES: u32 = 4;

/// Bytes of dynamic shared memory of a `radix_onesweep_*` launch with a second payload of
/// `second_bytes` bytes (0, 1, 2, 4, 8 or 16): one area for the payloads, staged one after the
/// other (the widest of them, at least the first payload's 4 bytes; 16-byte items in two 8-byte
/// halves; the per-warp digit counters of the ranking before that), then the tile's keys.
///
/// ```
/// assert_eq!(radix_kernels::stage_bytes(8), radix_kernels::NV * 12);
/// assert_eq!(radix_kernels::stage_bytes(16), radix_kernels::NV * 12);
/// assert_eq!(radix_kernels::stage_bytes(0), radix_kernels::NV * 8);
/// assert_eq!(radix_kernels::stage_bytes(2), radix_kernels::NV * 8);
/// ```
pub const fn stage_bytes(second_bytes: u32) -> u32 {
    stage_bytes_for(VT, second_bytes)
}

/// [`stage_bytes`] for tiles of `vt` keys a thread.
///
/// ```
/// assert_eq!(radix_kernels::stage_bytes_for(16, 0), radix_kernels::NT * 16 * 8);
/// ```
pub const fn stage_bytes_for(vt: u32, second_bytes: u32) -> u32 {
    let area = if second_bytes > 4 { 8 } else { 4 };
    NT * vt * (4 + area)
}

/// Digit `(key >> shift) & (2^bits - 1)` of one pass.
///
/// ```
/// assert_eq!(radix_kernels::digit(0x1234, 4, 8), 0x23);
/// assert_eq!(radix_kernels::digit(0x1234, 0, 0), 0);
/// ```
#[inline(always)]
pub const fn digit(key: u32, shift: u32, bits: u32) -> u32 {
    (key >> shift) & ((1u32 << bits) - 1)
}

/// Pass `p`'s digit when passes of `per` bits start at bit `shift0` and the key ends at bit
/// `end`: `(shift, bits)`, the last pass cut short (0 bits past the end).
///
/// ```
/// assert_eq!(radix_kernels::pass_digit(0, 9, 1, 17), (9, 8));
/// assert_eq!(radix_kernels::pass_digit(4, 6, 2, 32), (16, 6));
/// assert_eq!(radix_kernels::pass_digit(0, 8, 3, 20), (24, 0));
/// ```
#[inline(always)]
pub const fn pass_digit(shift0: u32, per: u32, p: u32, end: u32) -> (u32, u32) {
    let shift = shift0 + p * per;
    let left = end.saturating_sub(shift);
    (shift, if per < left { per } else { left })
}

/// The passes sorting the low `end_bit` bits: `(passes, bits per pass)`, the fewest passes of at
/// most `max_bits` (1 to [`MAX_BITS`]) bits, balanced; at least one pass (of 0 bits when
/// `end_bit == 0`).
///
/// ```
/// use radix_kernels::passes;
/// assert_eq!(passes(0, 9), (1, 0));
/// assert_eq!(passes(8, 9), (1, 8));
/// assert_eq!(passes(17, 9), (2, 9));
/// assert_eq!(passes(20, 7), (3, 7));
/// assert_eq!(passes(32, 8), (4, 8));
/// ```
pub const fn passes(end_bit: u32, max_bits: u32) -> (u32, u32) {
    let max_bits = if max_bits == 0 {
        1
    } else if max_bits > MAX_BITS {
        MAX_BITS
    } else {
        max_bits
    };
    let bits = if end_bit > 32 { 32 } else { end_bit };
    let passes = if bits == 0 { 1 } else { bits.div_ceil(max_bits) };
    (passes, bits.div_ceil(passes))
}

/// Bits needed to sort keys below `n` (`ceil(log2 n)`; 0 for `n <= 1`).
///
/// ```
/// assert_eq!(radix_kernels::bits_below(1), 0);
/// assert_eq!(radix_kernels::bits_below(100_000), 17);
/// assert_eq!(radix_kernels::bits_below(1 << 20), 20);
/// ```
pub const fn bits_below(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

/// Warp-level building blocks (re-exported from `gpu-device`).
#[cfg(target_arch = "nvptx64")]
pub mod warp {
    pub use gpu_device::warp::{leader, match_rank};
}

#[cfg(target_arch = "nvptx64")]
pub mod tile;

#[cfg(all(target_arch = "nvptx64", feature = "kernels"))]
mod kernels;
