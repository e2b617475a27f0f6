//! Validation of caller-provided device data on the GPU: a pointer array (starts at 0, never
//! decreases, ends at the item count), indices below a bound, and a signed CSR structure (`i32`,
//! `i64` arrays) converted and checked in one pass ([`signed_csr`]). Device types with invariants
//! (`sptrans_matrix::device::DeviceCsr`, ...) run these in their checked constructors, so safe
//! code cannot hand a kernel an index that reaches outside a buffer.
use cudarc::driver::DevicePtr;

use crate::module::{grid_1d, KernelOf};
use crate::scratch::{Scratch, ALIGN};
use crate::selftest::MODULE;
use crate::{Error, Gpu, Result};
use runtime_kernels::{CheckArgs, CsrCheckArgs};

const NT: u32 = 256;

/// Scratch bytes [`offsets_and_indices`] takes (two flag words, aligned).
pub const WORKSPACE_BYTES: u64 = ALIGN;

/// The first fault found in a pointer array, by position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetFault {
    /// `offsets[0]` is not 0.
    Start {
        /// The value found.
        value: u64,
    },
    /// `offsets[position] < offsets[position - 1]`.
    Decrease {
        /// The first position whose value is below its predecessor's.
        position: u64,
    },
    /// The last offset is not the item count.
    End {
        /// Position of the last offset (`m`).
        position: u64,
        /// The value found.
        value: u64,
        /// The item count it must equal.
        expected: u64,
    },
}

impl OffsetFault {
    /// The position of the offending entry.
    pub fn position(&self) -> u64 {
        match *self {
            OffsetFault::Start { .. } => 0,
            OffsetFault::Decrease { position } | OffsetFault::End { position, .. } => position,
        }
    }
}

impl std::fmt::Display for OffsetFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            OffsetFault::Start { value } => write!(f, "the first offset is {value}, not 0"),
            OffsetFault::Decrease { position } => write!(f, "offset {position} is below offset {}", position - 1),
            OffsetFault::End { position, value, expected } => {
                write!(f, "the last offset (position {position}) is {value}, not the item count {expected}")
            }
        }
    }
}

/// An index not below its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexFault {
    /// The first position holding an index `>= bound`.
    pub position: u64,
    /// The index found there.
    pub value: u64,
    /// The bound.
    pub bound: u64,
}

/// A pointer array's word: `u32` or `u64` (the row pointer of a matrix past `u32::MAX`
/// nonzeros).
pub trait OffsetWord: crate::AnyBits + Default + Into<u64> {
    /// The kernel checking a CSR structure with this pointer word.
    const CHECK: &'static str;
    /// The type's name in kernel names (`u32`, `u64`).
    const NAME: &'static str;
    /// Its largest value.
    const MAX: u64;
}

impl OffsetWord for u32 {
    const CHECK: &'static str = "runtime_csr_check_u32";
    const NAME: &'static str = "u32";
    const MAX: u64 = u32::MAX as u64;
}

impl OffsetWord for u64 {
    const CHECK: &'static str = "runtime_csr_check_u64";
    const NAME: &'static str = "u64";
    const MAX: u64 = u64::MAX;
}

/// Checks on the GPU that `offsets` (`m + 1 >= 1` words of `u32` or `u64`) is a pointer array
/// over `items` items and that every one of `indices` is below `bound`; returns the first fault
/// of each (`None` when valid). Pass an empty `indices` to check the offsets alone. Enqueued on
/// `gpu`'s stream, then synchronizes; takes [`WORKSPACE_BYTES`] of `scratch`.
///
/// # Errors
/// [`Error::LengthMismatch`] for empty offsets, [`Error::ScratchTooSmall`], and driver errors.
pub fn offsets_and_indices<O: OffsetWord>(
    gpu: &Gpu,
    offsets: &impl DevicePtr<O>,
    items: u64,
    indices: &impl DevicePtr<u32>,
    bound: u64,
    scratch: &mut Scratch<'_>,
) -> Result<(Option<OffsetFault>, Option<IndexFault>)> {
    let (ix, _i) = indices.device_ptr(gpu.stream());
    enqueue(gpu, offsets, items, ix, indices.len() as u64, bound, scratch)?.wait(gpu)
}

/// [`offsets_and_indices`] for a pointer array alone.
///
/// # Errors
/// As [`offsets_and_indices`].
pub fn offsets<O: OffsetWord>(gpu: &Gpu, offsets: &impl DevicePtr<O>, items: u64, scratch: &mut Scratch<'_>) -> Result<Option<OffsetFault>> {
    Ok(enqueue(gpu, offsets, items, 0, 0, 0, scratch)?.wait(gpu)?.0)
}

/// A check enqueued by [`enqueue_offsets_and_indices`] whose verdict is not read yet: it holds
/// the flag words in the scratch and the indices' lifetime (a fault's value is read from them).
#[must_use = "a pending check says nothing until it is waited for"]
#[derive(Debug)]
pub struct PendingCheck<'s> {
    flags: u64,
    m: u64,
    items: u64,
    ix: u64,
    bound: u64,
    _borrows: std::marker::PhantomData<&'s ()>,
}

/// [`offsets_and_indices`] without waiting: the check is enqueued on `gpu`'s stream (no
/// synchronization) and its verdict read by [`PendingCheck::wait`] (one synchronization), so work
/// enqueued in between overlaps it — work that must be safe on *any* contents of the arrays,
/// since it runs before the verdict is known.
///
/// # Errors
/// As [`offsets_and_indices`].
pub fn enqueue_offsets_and_indices<'s, O: OffsetWord>(
    gpu: &Gpu,
    offsets: &impl DevicePtr<O>,
    items: u64,
    indices: &crate::DeviceView<'s, u32>,
    bound: u64,
    scratch: &'s mut Scratch<'_>,
) -> Result<PendingCheck<'s>> {
    let (ix, _i) = indices.device_ptr(gpu.stream());
    enqueue(gpu, offsets, items, ix, indices.len() as u64, bound, scratch)
}

/// Enqueues the check of `offsets` and of the `n` indices at `ix` (0 and 0: none) into flag
/// words carved from `scratch`; the caller keeps both alive for the [`PendingCheck`]'s `'s`.
#[allow(clippy::too_many_arguments)]
fn enqueue<'s, O: OffsetWord>(
    gpu: &Gpu,
    offsets: &impl DevicePtr<O>,
    items: u64,
    ix: u64,
    n: u64,
    bound: u64,
    scratch: &mut Scratch<'_>,
) -> Result<PendingCheck<'s>> {
    let m = (offsets.len() as u64).checked_sub(1).ok_or(Error::LengthMismatch { what: "offsets (at least 1 entry)", expected: 1, got: 0 })?;
    // Four words: the two first-fault flags (all ones: none yet), then the first and last
    // offsets (written by the kernel), so that one read, one synchronization, brings all four
    // back. One fill and one launch (six operations before: two fills, two copies, a kernel for
    // each array).
    let fl = scratch.take(32)?;
    // SAFETY: the first two of the four words just carved from the scratch.
    unsafe { gpu.fill_raw(fl, 0xFF, 16)? };
    let stream = gpu.stream();
    let max_blocks = gpu.props().sm_count.max(1) * 8;
    let (o, _o) = offsets.device_ptr(stream);
    gpu.bind()?;
    let k: KernelOf<CsrCheckArgs<O>> = gpu.kernel_of(&MODULE, O::CHECK)?;
    let args = CsrCheckArgs { offsets: o as *const O, indices: ix as *const u32, flags: fl as *mut u64, m, n, bound };
    // SAFETY: runtime_csr_check_*(CsrCheckArgs): the offsets hold m + 1 words of their type, the
    // indices n words (null only when n = 0), flags the four words above.
    unsafe { k.launch(stream, grid_1d(m.max(n).max(1), NT, NT as u64 * 4, max_blocks), args)? };
    Ok(PendingCheck { flags: fl, m, items, ix, bound, _borrows: std::marker::PhantomData })
}

impl PendingCheck<'_> {
    /// Waits for the check (**synchronizes** `gpu`'s stream, the one it was enqueued on) and
    /// returns the first fault of the offsets and of the indices (`None` when valid).
    ///
    /// # Errors
    /// Driver errors.
    pub fn wait(self, gpu: &Gpu) -> Result<(Option<OffsetFault>, Option<IndexFault>)> {
        let (fl, m, items, ix, bound) = (self.flags, self.m, self.items, self.ix, self.bound);
        let mut got = [0u64; 4];
        // SAFETY: the four flag words the scratch still lends (borrowed for 's).
        unsafe { gpu.read_raw(fl, &mut got)? };
        let ends = [got[2], got[3]];
        let offset_fault = if ends[0] != 0 {
            Some(OffsetFault::Start { value: ends[0] })
        } else if got[0] != u64::MAX {
            Some(OffsetFault::Decrease { position: got[0] + 1 })
        } else if ends[1] != items {
            Some(OffsetFault::End { position: m, value: ends[1], expected: items })
        } else {
            None
        };
        let index_fault = match got[1] {
            u64::MAX => None,
            p => {
                let mut w = [0u32];
                // SAFETY: p < n, the length of the indices at `ix` (borrowed for 's).
                unsafe { gpu.read_raw(ix + 4 * p, &mut w)? };
                Some(IndexFault { position: p, value: w[0] as u64, bound })
            }
        };
        Ok((offset_fault, index_fault))
    }
}

/// A caller's index type that [`signed_csr`] takes: `i32` and `i64`, as PyTorch and SciPy
/// hold indices.
pub trait SignedIndex: crate::AnyBits + Default + Into<i64> {
    /// The type's name in kernel names (`i32`, `i64`).
    const NAME: &'static str;
}

impl SignedIndex for i64 {
    const NAME: &'static str = "i64";
}

impl SignedIndex for i32 {
    const NAME: &'static str = "i32";
}

/// An entry that does not fit the unsigned type (negative, or above its maximum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NarrowFault {
    /// The first position holding one.
    pub position: u64,
    /// The entry found there.
    pub value: i64,
}

/// What [`signed_csr`] found: the first fault of each kind, by position (all `None`: the
/// converted arrays are a valid CSR structure).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SignedCsrFaults {
    /// The first pointer entry outside the output type (negative, or too large).
    pub pointer_value: Option<NarrowFault>,
    /// The pointer array's first fault (start, decrease, end), looked for when every entry fits.
    pub pointer: Option<OffsetFault>,
    /// The first index that is negative or not below the bound, as the caller gave it.
    pub index: Option<NarrowFault>,
}

/// A caller's signed CSR structure (`i32`/`i64` pointer and indices, as PyTorch and SciPy hold
/// them) converted and validated in one pass over each array, with one synchronization: the
/// pointer into `out_offsets` (`u32` or `u64`), the indices into `out_indices` (`u32`), each
/// entry checked as it is converted (pointer entries non-negative and fitting, never
/// decreasing, from 0 to the index count; indices in `0..bound`, `bound <= 2^32`). Takes
/// [`WORKSPACE_BYTES`] of `scratch`; the outputs are unspecified where a fault is reported.
///
/// # Errors
/// [`Error::LengthMismatch`] for outputs of other lengths or an empty pointer array,
/// [`Error::ScratchTooSmall`], and driver errors.
#[allow(clippy::too_many_arguments)]
pub fn signed_csr<P: SignedIndex, S: SignedIndex, O: OffsetWord>(
    gpu: &Gpu,
    offsets: &impl DevicePtr<P>,
    indices: &impl DevicePtr<S>,
    bound: u64,
    out_offsets: &mut impl cudarc::driver::DevicePtrMut<O>,
    out_indices: &mut impl cudarc::driver::DevicePtrMut<u32>,
    scratch: &mut Scratch<'_>,
) -> Result<SignedCsrFaults> {
    let m = (offsets.len() as u64).checked_sub(1).ok_or(Error::LengthMismatch { what: "offsets (at least 1 entry)", expected: 1, got: 0 })?;
    let n = indices.len() as u64;
    for (what, expected, got) in [("converted offsets", m + 1, out_offsets.len() as u64), ("converted indices", n, out_indices.len() as u64)] {
        if expected != got {
            return Err(Error::LengthMismatch { what, expected, got });
        }
    }
    let fl = scratch.take(40)?;
    // SAFETY: the five flag words just carved from the scratch.
    unsafe { gpu.fill_raw(fl, 0xFF, 40)? };
    let stream = gpu.stream();
    let cfg = |len: u64| grid_1d(len, NT, NT as u64 * 4, gpu.props().sm_count.max(1) * 8);
    let (o, _o) = offsets.device_ptr(stream);
    let (oo, _oo) = out_offsets.device_ptr_mut(stream);
    let k: KernelOf<CheckArgs<P, O>> = gpu.kernel_of(&MODULE, &format!("runtime_offsets_{}_{}", P::NAME, O::NAME))?;
    let args = CheckArgs { input: o as *const P, out: oo as *mut O, flags: fl as *mut u64, n: m, bound: 0 };
    // SAFETY: runtime_offsets_*(CheckArgs: input, out, flags, n = m): input and out hold m + 1
    // items of the kernel's types (named from P and O), flags the five words (the third is left
    // alone).
    unsafe { k.launch(stream, cfg(m + 1), args)? };
    let (ix, _i) = indices.device_ptr(stream);
    if n > 0 {
        let (oi, _oi) = out_indices.device_ptr_mut(stream);
        let k: KernelOf<CheckArgs<S, u32>> = gpu.kernel_of(&MODULE, &format!("runtime_indices_{}_u32", S::NAME))?;
        let args = CheckArgs { input: ix as *const S, out: oi as *mut u32, flags: (fl + 16) as *mut u64, n, bound };
        // SAFETY: runtime_indices_*_u32(CheckArgs): input and out hold n items, first_bad the
        // third flag word.
        unsafe { k.launch(stream, cfg(n), args)? };
    }
    let mut got = [0u64; 5];
    // SAFETY: the flag words written above (read_raw synchronizes first).
    unsafe { gpu.read_raw(fl, &mut got)? };
    let entry = |base: u64, size: u64, at: u64| -> Result<i64> {
        let mut w = [0u8; 8];
        // SAFETY: at < the array's length (a position the kernels reported).
        unsafe { gpu.read_raw(base + size * at, &mut w[..size as usize])? };
        Ok(if size == 8 { i64::from_le_bytes(w) } else { i32::from_le_bytes([w[0], w[1], w[2], w[3]]) as i64 })
    };
    let (ps, is) = (std::mem::size_of::<P>() as u64, std::mem::size_of::<S>() as u64);
    let mut f = SignedCsrFaults::default();
    if got[0] != u64::MAX {
        f.pointer_value = Some(NarrowFault { position: got[0], value: entry(o, ps, got[0])? });
    } else {
        let (first, last) = (got[3] as i64, got[4] as i64);
        f.pointer = if first != 0 {
            Some(OffsetFault::Start { value: first as u64 })
        } else if got[1] != u64::MAX {
            Some(OffsetFault::Decrease { position: got[1] + 1 })
        } else if last as u64 != n {
            Some(OffsetFault::End { position: m, value: last as u64, expected: n })
        } else {
            None
        };
    }
    if got[2] != u64::MAX {
        f.index = Some(NarrowFault { position: got[2], value: entry(ix, is, got[2])? });
    }
    Ok(f)
}

#[cfg(test)]
mod argument_tests {
    use runtime_kernels::{CheckArgs, CsrCheckArgs, FillArgs, SelfTestArgs};

    use crate::check_signature;
    use crate::selftest::MODULE;

    /// Every kernel of the `runtime` module takes exactly its argument struct in the committed
    /// PTX (what `Gpu::kernel_of` checks at load, here without a GPU), and every entry is
    /// checked.
    #[test]
    fn argument_structs_match_the_ptx() {
        let mut checked = vec![];
        let mut check = |name: String, ok: crate::Result<()>| {
            ok.unwrap_or_else(|e| panic!("{name}: {e}"));
            checked.push(name);
        };
        for name in ["runtime_fill_u32", "runtime_iota_u32"] {
            check(name.into(), check_signature::<FillArgs>(&MODULE, name));
        }
        for name in ["runtime_block_sum_u32", "runtime_warp_scan_u32"] {
            check(name.into(), check_signature::<SelfTestArgs>(&MODULE, name));
        }
        check("runtime_csr_check_u32".into(), check_signature::<CsrCheckArgs<u32>>(&MODULE, "runtime_csr_check_u32"));
        check("runtime_csr_check_u64".into(), check_signature::<CsrCheckArgs<u64>>(&MODULE, "runtime_csr_check_u64"));
        for (p, o) in [("i64", "u64"), ("i64", "u32"), ("i32", "u64"), ("i32", "u32")] {
            let name = format!("runtime_offsets_{p}_{o}");
            let ok = check_signature::<CheckArgs<i64, u64>>(&MODULE, &name);
            check(name, ok);
        }
        for s in ["i64", "i32"] {
            let name = format!("runtime_indices_{s}_u32");
            let ok = check_signature::<CheckArgs<i64, u32>>(&MODULE, &name);
            check(name, ok);
        }
        let unchecked: Vec<_> = MODULE.kernels().into_iter().filter(|k| !checked.iter().any(|c| c == k)).collect();
        assert!(unchecked.is_empty(), "kernels without a check: {unchecked:?}");
    }
}
