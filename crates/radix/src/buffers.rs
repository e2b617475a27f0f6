//! What one sort works on: [`DoubleBuffer`]s (the two halves a sort ping-pongs between, as in
//! CUB's `DoubleBuffer`) and the [`Sort`] request naming the keys, up to two payloads, the bits
//! and an optionally lent look-back status.
use std::ops::Range;

use gpu_runtime::{DeviceView, DeviceViewMut, Scratch};

use crate::{Error, Result};

/// Two equal-length device buffers a sort ping-pongs between. [`DoubleBuffer::current`] holds
/// the input of an in-place sort and, after every sort, its result: a sort that takes an odd
/// number of passes from its own buffers ends in the other half and flips the selector (CUB's
/// convention). A sort that reads an array from a separate source always ends in the current
/// half and leaves the selector as it is; when it takes one pass it writes only the current
/// half, so a [`DoubleBuffer::single`] (no alternate) serves.
pub struct DoubleBuffer<'a, T> {
    halves: [DeviceViewMut<'a, T>; 2],
    selector: usize,
}

impl<T> std::fmt::Debug for DoubleBuffer<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DoubleBuffer").field("len", &self.len()).field("selector", &self.selector).field("single", &self.is_single()).finish()
    }
}

impl<'a, T> DoubleBuffer<'a, T> {
    /// `current` (the input of an in-place sort) and `alternate`, of the same length.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the lengths differ.
    pub fn new(current: DeviceViewMut<'a, T>, alternate: DeviceViewMut<'a, T>) -> Result<Self> {
        if current.len() != alternate.len() {
            return Err(Error::LengthMismatch { what: "alternate buffer", expected: current.len() as u64, got: alternate.len() as u64 });
        }
        Ok(Self { halves: [current, alternate], selector: 0 })
    }

    /// One buffer and no alternate: enough for an array a one-pass sort reads from a separate
    /// source (it writes only the current half); any other use is refused with
    /// [`Error::NoAlternate`].
    pub fn single(only: DeviceViewMut<'a, T>) -> Self {
        let len = only.len();
        match only.split_at(len) {
            Some((all, none)) => Self { halves: [all, none], selector: 0 },
            // Unreachable: `split_at(len)` of a view of `len` items always splits.
            None => unreachable!("a view splits at its length"),
        }
    }

    /// Items in each half.
    pub fn len(&self) -> usize {
        self.halves[self.selector].len()
    }

    /// `true` when the halves hold no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Which half is current: 0 (the one given first) or 1.
    pub fn selector(&self) -> usize {
        self.selector
    }

    /// `true` for a [`DoubleBuffer::single`] (no alternate half).
    pub fn is_single(&self) -> bool {
        self.halves[1 - self.selector].len() != self.len()
    }

    /// The current half: the input of an in-place sort, the result after one.
    pub fn current(&self) -> DeviceView<'_, T> {
        self.halves[self.selector].as_view()
    }

    /// The current half, writable.
    pub fn current_mut(&mut self) -> DeviceViewMut<'_, T> {
        self.halves[self.selector].reborrow()
    }

    /// The other half (empty for a [`DoubleBuffer::single`]).
    pub fn alternate_mut(&mut self) -> DeviceViewMut<'_, T> {
        self.halves[1 - self.selector].reborrow()
    }

    /// The current half, consuming the pair.
    pub fn into_current(self) -> DeviceViewMut<'a, T> {
        let [a, b] = self.halves;
        if self.selector == 0 {
            a
        } else {
            b
        }
    }

    /// Half `i` (0 = current, 1 = alternate) as a view.
    pub(crate) fn half(&self, i: usize) -> DeviceView<'_, T> {
        self.halves[self.selector ^ i].as_view()
    }

    pub(crate) fn flip(&mut self) {
        self.selector ^= 1;
    }
}

/// One array of a sort: its buffers and, when it is not sorted in place, the read-only source
/// that the first pass reads instead of the current half.
pub(crate) struct Array<'s, 'a, T> {
    pub buffers: &'s mut DoubleBuffer<'a, T>,
    pub source: Option<DeviceView<'s, T>>,
}

/// One sort for [`crate::RadixSort::sort`] and [`crate::RadixSort::sort_with`]: the `u32` keys,
/// an optional `u32` first payload and an optional second payload of 1, 2, 4, 8 or 16 bytes
/// (`V`), each either **in place** (read from its buffer's current half: [`Sort::keys`],
/// [`Sort::first`], [`Sort::second`]) or **from a source** left as it is (`*_from`); the bits
/// ([`Sort::bits`], default `0..32`); and optionally the look-back status in caller memory
/// ([`Sort::lent_status`]).
///
/// ```no_run
/// # fn main() -> Result<(), gpu_radix::Error> {
/// use gpu_radix::{DoubleBuffer, RadixSort, Sort};
/// use gpu_runtime::DeviceViewMut;
/// let gpu = gpu_radix::Gpu::first()?;
/// let (mut keys, mut alt) = (gpu.upload(&[5u32, 1, 4])?, gpu.alloc::<u32>(3)?);
/// let mut k = DoubleBuffer::new(DeviceViewMut::of(&mut keys), DeviceViewMut::of(&mut alt))?;
/// RadixSort::new(&gpu)?.sort(Sort::keys(&mut k).bits(0..3))?;
/// assert_eq!(gpu.download(&k.current())?, vec![1, 4, 5]);
/// # Ok(()) }
/// ```
pub struct Sort<'s, 'a, V = u32> {
    pub(crate) keys: Array<'s, 'a, u32>,
    pub(crate) first: Option<Array<'s, 'a, u32>>,
    pub(crate) second: Option<Array<'s, 'a, V>>,
    pub(crate) bits: Range<u32>,
    pub(crate) status: Option<Scratch<'s>>,
    pub(crate) run_if: Option<DeviceView<'s, u32>>,
}

impl<'s, 'a> Sort<'s, 'a, u32> {
    /// Sorts the keys of `keys`' current half.
    pub fn keys(keys: &'s mut DoubleBuffer<'a, u32>) -> Self {
        Self::with_keys(Array { buffers: keys, source: None })
    }

    /// Sorts the keys of `source` (left as it is) into `keys` (the result in its current half).
    pub fn keys_from(source: DeviceView<'s, u32>, keys: &'s mut DoubleBuffer<'a, u32>) -> Self {
        Self::with_keys(Array { buffers: keys, source: Some(source) })
    }

    fn with_keys(keys: Array<'s, 'a, u32>) -> Self {
        Self { keys, first: None, second: None, bits: 0..32, status: None, run_if: None }
    }
}

impl<'s, 'a, V> Sort<'s, 'a, V> {
    /// A `u32` first payload in `first`'s current half, moved with the keys.
    pub fn first(mut self, first: &'s mut DoubleBuffer<'a, u32>) -> Self {
        self.first = Some(Array { buffers: first, source: None });
        self
    }

    /// A `u32` first payload read from `source` (left as it is) into `first`.
    pub fn first_from(mut self, source: DeviceView<'s, u32>, first: &'s mut DoubleBuffer<'a, u32>) -> Self {
        self.first = Some(Array { buffers: first, source: Some(source) });
        self
    }

    /// A second payload (1, 2, 4, 8 or 16 bytes an item) in `second`'s current half.
    pub fn second<W>(self, second: &'s mut DoubleBuffer<'a, W>) -> Sort<'s, 'a, W> {
        self.with_second(Array { buffers: second, source: None })
    }

    /// A second payload read from `source` (left as it is) into `second`.
    pub fn second_from<W>(self, source: DeviceView<'s, W>, second: &'s mut DoubleBuffer<'a, W>) -> Sort<'s, 'a, W> {
        self.with_second(Array { buffers: second, source: Some(source) })
    }

    fn with_second<W>(self, second: Array<'s, 'a, W>) -> Sort<'s, 'a, W> {
        Sort { keys: self.keys, first: self.first, second: Some(second), bits: self.bits, status: self.status, run_if: self.run_if }
    }

    /// The key bits that count, `begin..end` (`end <= 32`); the others travel with the key.
    /// One pass by a digit of at most the plan's digit width is an MSD partition.
    pub fn bits(mut self, bits: Range<u32>) -> Self {
        self.bits = bits;
        self
    }

    /// The look-back status in `status`, at least [`crate::RadixSort::status_bytes`] (memory
    /// the caller has free during the sort: RadixTrans lends its output's column pointer, written
    /// after the sort); the scratch then needs [`crate::RadixSort::workspace_bytes`] less those.
    pub fn lent_status(mut self, status: Scratch<'s>) -> Self {
        self.status = Some(status);
        self
    }

    /// A sort decided on the device: every kernel of the sort first reads `word[0]` (a one-word
    /// view, written earlier in stream order) and does nothing when it is 0 — a sort enqueued
    /// now that runs only if earlier work says so, with no synchronization (RadixTrans after
    /// SymTrans's verdict). When it does not run, the double buffers' contents stay as they
    /// were (the sweep state's zeroing still happens, in the scratch and the lent status), while
    /// their selectors flip as after a sort.
    pub fn run_if(mut self, word: DeviceView<'s, u32>) -> Self {
        self.run_if = Some(word);
        self
    }
}
