//! Scratch memory in CUB's model: a plan says how many bytes a problem needs
//! (`workspace_bytes`), the caller hands it a region at least that large ([`Scratch`]), and the
//! plan carves its temporaries from it in a fixed order, handing sub-regions to the plans it is
//! built from instead of letting each allocate.
//!
//! ```
//! use gpu_runtime::scratch::{aligned, Layout, ALIGN};
//! // A plan needing 10 words and 3 bytes asks for both, each aligned:
//! let bytes = Layout::new().add(40).add(3).bytes();
//! assert_eq!(bytes, aligned(40) + aligned(3));
//! assert_eq!(bytes, 2 * ALIGN);
//! ```
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceSlice, SyncOnDrop};

use crate::{AnyBits, DeviceView, DeviceViewMut, Error, Gpu, Result};

/// Alignment of every region carved from a [`Scratch`] (bytes): enough for 16-byte vector loads
/// and for cuSPARSE's buffers.
pub const ALIGN: u64 = 256;

/// `bytes` rounded up to [`ALIGN`].
pub const fn aligned(bytes: u64) -> u64 {
    bytes.div_ceil(ALIGN) * ALIGN
}

/// Sums the sizes of the regions a plan will carve, each rounded up to [`ALIGN`]: the plan's
/// `workspace_bytes` and its carving use the same sequence, so what is reported is what is used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    bytes: u64,
}

impl Layout {
    /// An empty layout.
    pub const fn new() -> Self {
        Self { bytes: 0 }
    }

    /// Adds a region of `bytes` (rounded up to [`ALIGN`]; 0 adds nothing).
    #[must_use]
    pub const fn add(self, bytes: u64) -> Self {
        Self { bytes: self.bytes + aligned(bytes) }
    }

    /// Total bytes.
    pub const fn bytes(self) -> u64 {
        self.bytes
    }
}

/// Where a plan's one description of its scratch runs: measuring it ([`Measure`]: the bytes a
/// call needs, for the plan's `workspace_bytes`) or carving a lent [`Scratch`] (the regions
/// themselves). A plan writes its regions once, as a function generic over `Carver` returning a
/// struct of `C::Slice<T>` and `C::Sub` fields, and calls it with both, so what it reports is
/// what it carves (faer's `StackReq`/`MemStack` split, kept in one place).
///
/// ```
/// use gpu_runtime::scratch::{aligned, Carver, Measure};
/// /// A plan's regions: `n` keys, then a nested plan's scratch.
/// struct Regions<C: Carver> { keys: C::Slice<u32>, nested: C::Sub }
/// fn regions<C: Carver>(c: &mut C, n: usize) -> gpu_runtime::Result<Regions<C>> {
///     Ok(Regions { keys: c.slice::<u32>(n)?, nested: c.sub(1000)? })
/// }
/// let bytes = Measure::bytes_of(|m| regions(m, 100)).unwrap();
/// assert_eq!(bytes, aligned(400) + aligned(1000));
/// ```
pub trait Carver {
    /// A typed region of items ([`ScratchSlice`] when carving, nothing when measuring).
    type Slice<T: AnyBits>;
    /// A nested plan's scratch ([`Scratch`] when carving, nothing when measuring).
    type Sub;
    /// The next `len` items of `T` (rounded up to [`ALIGN`] bytes).
    ///
    /// # Errors
    /// [`Error::ScratchTooSmall`] when carving past the end; [`Error::TooLarge`] on overflow.
    fn slice<T: AnyBits>(&mut self, len: usize) -> Result<Self::Slice<T>>;
    /// The next `len` items of `T` where the description knows the items only by their size
    /// (`item_bytes`: a query by value size, before the value type is chosen). Carving checks
    /// that `item_bytes` is `T`'s size.
    ///
    /// # Errors
    /// As [`Carver::slice`]; `Internal` when carving items of another size than `T`'s.
    fn items<T: AnyBits>(&mut self, len: usize, item_bytes: u64) -> Result<Self::Slice<T>>;
    /// The next `bytes` (rounded up to [`ALIGN`]) as a nested plan's scratch.
    ///
    /// # Errors
    /// [`Error::ScratchTooSmall`] when carving past the end.
    fn sub(&mut self, bytes: u64) -> Result<Self::Sub>;
}

/// The measuring [`Carver`]: sums the regions a description asks for, as [`Layout`] does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Measure {
    layout: Layout,
}

impl Measure {
    /// The bytes measured so far.
    pub fn bytes(&self) -> u64 {
        self.layout.bytes()
    }

    /// The bytes of the regions `describe` asks for (what it returns, the measured regions, is
    /// dropped).
    ///
    /// # Errors
    /// What `describe` returns (sizes overflowing `usize`, a nested plan's refusal).
    pub fn bytes_of<R, E>(describe: impl FnOnce(&mut Measure) -> std::result::Result<R, E>) -> std::result::Result<u64, E> {
        let mut m = Measure::default();
        describe(&mut m)?;
        Ok(m.bytes())
    }
}

impl Carver for Measure {
    type Slice<T: AnyBits> = ();
    type Sub = ();

    fn slice<T: AnyBits>(&mut self, len: usize) -> Result<()> {
        self.layout = self.layout.add(crate::bytes_of::<T>(len)?);
        Ok(())
    }

    fn items<T: AnyBits>(&mut self, len: usize, item_bytes: u64) -> Result<()> {
        let bytes = (len as u64).checked_mul(item_bytes).ok_or(Error::TooLarge {
            what: "scratch region",
            len: len as u64,
            max: u64::MAX / item_bytes.max(1),
        })?;
        self.layout = self.layout.add(bytes);
        Ok(())
    }

    fn sub(&mut self, bytes: u64) -> Result<()> {
        self.layout = self.layout.add(bytes);
        Ok(())
    }
}

impl<'a> Carver for Scratch<'a> {
    type Slice<T: AnyBits> = ScratchSlice<'a, T>;
    type Sub = Scratch<'a>;

    fn slice<T: AnyBits>(&mut self, len: usize) -> Result<ScratchSlice<'a, T>> {
        Scratch::slice(self, len)
    }

    fn items<T: AnyBits>(&mut self, len: usize, item_bytes: u64) -> Result<ScratchSlice<'a, T>> {
        if item_bytes != std::mem::size_of::<T>() as u64 {
            return Err(Error::Internal("a scratch description carving items of another size than measured"));
        }
        Scratch::slice(self, len)
    }

    fn sub(&mut self, bytes: u64) -> Result<Scratch<'a>> {
        Scratch::sub(self, bytes)
    }
}

/// A region of device memory lent to a plan for one call. Regions are carved from the front in
/// order ([`Scratch::take`] for a plan's own temporaries, [`Scratch::sub`] for a nested plan's
/// scratch); asking for more than is left is an error ([`Error::ScratchTooSmall`]), never an
/// access past the end. The borrow keeps the memory alive and unshared for the call.
///
/// Scratch contents are unspecified at the start of every call; plans initialize what they read.
///
/// Regions carved from one `Scratch<'a>` are disjoint and live as long as the lent memory
/// (`'a`), so several may be in use at once, as `split_at_mut` allows for slices.
pub struct Scratch<'a> {
    carve: Carve,
    stream: Arc<CudaStream>,
    /// The lent buffer itself, touched again when the scratch is dropped (after every launch
    /// that used it was enqueued) so cudarc's tracking records that use; `None` for sub-regions.
    lent: Option<Box<dyn Touch + 'a>>,
    _borrow: PhantomData<&'a mut [u8]>,
}

/// Base alignment lent memory must have (bytes): the kernels' widest loads and stores.
pub const LENT_ALIGN: u64 = 16;

/// A lent buffer whose use can be recorded on a stream (cudarc's tracking, for a `CudaSlice` or
/// a tracked view; nothing for raw memory).
trait Touch {
    fn touch(&mut self, stream: &CudaStream);
}

struct Lent<'a, T, D: DevicePtrMut<T>>(&'a mut D, PhantomData<fn() -> T>);

impl<T, D: DevicePtrMut<T>> Touch for Lent<'_, T, D> {
    fn touch(&mut self, stream: &CudaStream) {
        // The guard waits (for the buffer's earlier uses, on `stream`) when made and records a
        // write on `stream` when dropped, here: after the launches of the call.
        drop(self.0.device_ptr_mut(stream));
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        if let Some(l) = self.lent.as_mut() {
            l.touch(&self.stream);
        }
    }
}

/// The host arithmetic of carving: front-to-back, aligned regions of `len` bytes at `base`.
#[derive(Debug, Clone, Copy)]
struct Carve {
    base: u64,
    len: u64,
    used: u64,
}

impl Carve {
    /// Lent memory must start at a multiple of [`LENT_ALIGN`] (every region carved from it is
    /// as aligned as its start): checked at each carve, so a misaligned lender fails its first.
    fn aligned(&self) -> Result<()> {
        if self.len > 0 && self.base % LENT_ALIGN != 0 {
            return Err(Error::ScratchMisaligned { addr: self.base, align: LENT_ALIGN });
        }
        Ok(())
    }

    fn remaining(&self) -> u64 {
        self.len - self.used
    }

    fn take(&mut self, bytes: u64) -> Result<u64> {
        if bytes == 0 {
            return Ok(0);
        }
        self.aligned()?;
        let need = aligned(bytes);
        if need > self.remaining() {
            return Err(Error::ScratchTooSmall { needed: self.used + need, available: self.len });
        }
        let at = self.base + self.used;
        self.used += need;
        Ok(at)
    }

    fn require(&self, bytes: u64) -> Result<()> {
        if bytes > 0 {
            self.aligned()?;
        }
        if bytes > self.remaining() {
            return Err(Error::ScratchTooSmall { needed: self.used + bytes, available: self.len });
        }
        Ok(())
    }
}

impl std::fmt::Debug for Scratch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch").field("len", &self.carve.len).field("used", &self.carve.used).finish()
    }
}

impl<'a> Scratch<'a> {
    /// Lends `buf` (bytes) as scratch to plans enqueuing on `stream`. A `CudaSlice` (or a
    /// tracked view) takes part in cudarc's tracking: the plans' work waits for the buffer's
    /// earlier uses, and its use is recorded on `stream` when the scratch is dropped, so its owner
    /// frees it only afterwards. Memory not aligned to [`LENT_ALIGN`] is refused at the first
    /// carve ([`Error::ScratchMisaligned`]).
    pub fn new<D: DevicePtrMut<u8>>(buf: &'a mut D, stream: &Arc<CudaStream>) -> Self {
        Self::of::<u8, D>(buf, stream)
    }

    /// Lends the bytes of `buf`, a buffer of any plain-bits type, as scratch: memory that is
    /// free during a call (an output written only at its end, say) lent to a plan. Its contents
    /// are unspecified afterwards.
    /// Tracked and checked as [`Scratch::new`].
    pub fn of<T: AnyBits + 'a, D: DevicePtrMut<T>>(buf: &'a mut D, stream: &Arc<CudaStream>) -> Self {
        let len = (buf.len() * std::mem::size_of::<T>()) as u64;
        let base = if len == 0 { 0 } else { buf.device_ptr_mut(stream).0 };
        let lent: Option<Box<dyn Touch + 'a>> = (len > 0).then(|| Box::new(Lent(buf, PhantomData)) as Box<dyn Touch + 'a>);
        Self { carve: Carve { base, len, used: 0 }, stream: stream.clone(), lent, _borrow: PhantomData }
    }

    /// The stream the lent memory is used on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// No memory: for plans whose problem needs none.
    pub fn empty(stream: &Arc<CudaStream>) -> Self {
        Self { carve: Carve { base: 0, len: 0, used: 0 }, stream: stream.clone(), lent: None, _borrow: PhantomData }
    }

    /// Bytes lent.
    pub fn len(&self) -> u64 {
        self.carve.len
    }

    /// `true` when no bytes are lent.
    pub fn is_empty(&self) -> bool {
        self.carve.len == 0
    }

    /// Bytes not carved yet.
    pub fn remaining(&self) -> u64 {
        self.carve.remaining()
    }

    /// The device address of the next `bytes` bytes (0 for `bytes == 0`: kernels of this
    /// workspace read a null address as "absent"); the region is aligned to [`ALIGN`] and
    /// consumes `aligned(bytes)`. Its contents are unspecified.
    ///
    /// # Errors
    /// [`Error::ScratchTooSmall`] when fewer bytes are left.
    pub fn take(&mut self, bytes: u64) -> Result<u64> {
        self.carve.take(bytes)
    }

    /// Carves the next `bytes` bytes (rounded up to [`ALIGN`]) as scratch for a nested plan.
    ///
    /// # Errors
    /// [`Error::ScratchTooSmall`] when fewer bytes are left.
    pub fn sub(&mut self, bytes: u64) -> Result<Scratch<'a>> {
        let len = aligned(bytes);
        let base = self.take(bytes)?;
        Ok(Scratch { carve: Carve { base, len, used: 0 }, stream: self.stream.clone(), lent: None, _borrow: PhantomData })
    }

    /// Carves a typed buffer of `len` items (unspecified contents, hence [`AnyBits`]), usable
    /// wherever a cudarc device buffer is (`DevicePtr` / `DevicePtrMut`).
    ///
    /// # Errors
    /// [`Error::ScratchTooSmall`] when fewer bytes are left; [`Error::TooLarge`] on overflow.
    pub fn slice<T: AnyBits>(&mut self, len: usize) -> Result<ScratchSlice<'a, T>> {
        let bytes = crate::bytes_of::<T>(len)?;
        let ptr = self.take(bytes)?;
        Ok(ScratchSlice { ptr, len, stream: self.stream.clone(), _borrow: PhantomData })
    }

    /// The not-yet-carved rest as a scratch of its own, without consuming it: for lending the same
    /// region to a nested plan on each of several sequential calls (work on one stream runs in
    /// order, so the regions may be reused call after call).
    pub fn reborrow(&mut self) -> Scratch<'_> {
        let c = self.carve;
        Scratch { carve: Carve { base: c.base + c.used, len: c.remaining(), used: 0 }, stream: self.stream.clone(), lent: None, _borrow: PhantomData }
    }

    /// Requires at least `bytes` (a plan's `workspace_bytes` for the call) before any work is
    /// enqueued, so a short region fails before the call starts rather than half way.
    ///
    /// # Errors
    /// [`Error::ScratchTooSmall`] when fewer bytes are left.
    pub fn require(&self, bytes: u64) -> Result<()> {
        self.carve.require(bytes)
    }
}

/// A typed buffer carved from a [`Scratch`]: `len` items of `T` at a device address, borrowed
/// for `'a`. Implements cudarc's `DevicePtr`/`DevicePtrMut` (without event tracking: ordered by
/// the plan's stream).
pub struct ScratchSlice<'a, T> {
    ptr: u64,
    len: usize,
    stream: Arc<CudaStream>,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> std::fmt::Debug for ScratchSlice<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScratchSlice").field("len", &self.len).finish()
    }
}

impl<'a, T> ScratchSlice<'a, T> {
    fn bounds(&self, range: impl RangeBounds<usize>) -> (usize, usize) {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s + 1,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e + 1,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        assert!(start <= end && end <= self.len, "scratch slice range {start}..{end} out of 0..{}", self.len);
        (start, end)
    }

    /// A read-only sub-range (panics when out of bounds, as slice indexing does).
    pub fn range(&self, range: impl RangeBounds<usize>) -> ScratchView<'_, T> {
        let (s, e) = self.bounds(range);
        ScratchView { ptr: self.ptr + (s * std::mem::size_of::<T>()) as u64, len: e - s, stream: self.stream.clone(), _borrow: PhantomData }
    }

    /// The same items as a writable [`DeviceViewMut`] borrowed for `'a`.
    pub fn into_view(self) -> DeviceViewMut<'a, T> {
        // SAFETY: the slice was carved from scratch borrowed mutably for 'a and holds len items.
        unsafe { DeviceViewMut::from_raw(self.ptr, self.len, &self.stream) }
    }

    /// The same items as a writable [`DeviceViewMut`], borrowing this slice.
    pub fn view_mut(&mut self) -> DeviceViewMut<'_, T> {
        // SAFETY: as into_view, borrowed mutably for as long as the view lives.
        unsafe { DeviceViewMut::from_raw(self.ptr, self.len, &self.stream) }
    }

    /// The same items as a read-only [`DeviceView`], borrowing this slice.
    pub fn view(&self) -> DeviceView<'_, T> {
        // SAFETY: as into_view, read only while this slice is borrowed.
        unsafe { DeviceView::from_raw(self.ptr, self.len, &self.stream) }
    }

    /// A writable sub-range (panics when out of bounds, as slice indexing does).
    pub fn range_mut(&mut self, range: impl RangeBounds<usize>) -> ScratchSlice<'_, T> {
        let (s, e) = self.bounds(range);
        ScratchSlice { ptr: self.ptr + (s * std::mem::size_of::<T>()) as u64, len: e - s, stream: self.stream.clone(), _borrow: PhantomData }
    }
}

/// A read-only sub-range of a [`ScratchSlice`].
pub struct ScratchView<'a, T> {
    ptr: u64,
    len: usize,
    stream: Arc<CudaStream>,
    _borrow: PhantomData<&'a [T]>,
}

impl<T> DeviceSlice<T> for ScratchSlice<'_, T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl<T> DevicePtr<T> for ScratchSlice<'_, T> {
    fn device_ptr<'b>(&'b self, _stream: &'b CudaStream) -> (u64, SyncOnDrop<'b>) {
        (self.ptr, SyncOnDrop::Record(None))
    }
}

impl<T> DevicePtrMut<T> for ScratchSlice<'_, T> {
    fn device_ptr_mut<'b>(&'b mut self, _stream: &'b CudaStream) -> (u64, SyncOnDrop<'b>) {
        (self.ptr, SyncOnDrop::Record(None))
    }
}

impl<T> DeviceSlice<T> for ScratchView<'_, T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl<T> DevicePtr<T> for ScratchView<'_, T> {
    fn device_ptr<'b>(&'b self, _stream: &'b CudaStream) -> (u64, SyncOnDrop<'b>) {
        (self.ptr, SyncOnDrop::Record(None))
    }
}

/// The scratch a plan owns for the calls made without caller-provided scratch: one byte buffer,
/// replaced by one of exactly the size asked when it is missing or too short (the old one is
/// freed first, so peak memory is the larger buffer alone).
#[derive(Default)]
pub struct ScratchBuf {
    buf: Option<CudaSlice<u8>>,
}

impl std::fmt::Debug for ScratchBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScratchBuf").field("bytes", &self.bytes()).finish()
    }
}

impl ScratchBuf {
    /// Bytes held now.
    pub fn bytes(&self) -> u64 {
        self.buf.as_ref().map_or(0, |b| b.len() as u64)
    }

    /// Ensures at least `bytes` are held (allocating on `gpu` if needed).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] with the size.
    pub fn reserve(&mut self, gpu: &Gpu, bytes: u64) -> Result<()> {
        if self.bytes() < bytes {
            self.buf = None;
            let len = usize::try_from(bytes).map_err(|_| Error::TooLarge { what: "scratch", len: bytes, max: usize::MAX as u64 })?;
            self.buf = Some(gpu.alloc::<u8>(len)?);
        }
        Ok(())
    }

    /// At least `bytes` of scratch for one call on `gpu`'s stream.
    ///
    /// # Errors
    /// As [`ScratchBuf::reserve`].
    pub fn scratch(&mut self, gpu: &Gpu, bytes: u64) -> Result<Scratch<'_>> {
        self.reserve(gpu, bytes)?;
        Ok(match self.buf.as_mut() {
            Some(b) => Scratch::new(b, gpu.stream()),
            None => Scratch::empty(gpu.stream()),
        })
    }

    /// Frees the buffer.
    pub fn release(&mut self) {
        self.buf = None;
    }

    /// Runs `f` on at least `bytes` of the plan's own scratch: the buffer is taken out of the plan
    /// (`slot`) for the call, so `f` may borrow the plan mutably, and put back afterwards (kept
    /// for the next call, whatever `f` returns).
    ///
    /// # Errors
    /// Out of memory growing the buffer, or `f`'s error.
    pub fn lend<P: ?Sized, R, E: From<Error>>(
        plan: &mut P,
        slot: fn(&mut P) -> &mut ScratchBuf,
        gpu: &Gpu,
        bytes: u64,
        f: impl FnOnce(&mut P, &mut Scratch<'_>) -> std::result::Result<R, E>,
    ) -> std::result::Result<R, E> {
        let mut own = std::mem::take(slot(plan));
        let r = match own.scratch(gpu, bytes) {
            Ok(mut s) => f(plan, &mut s),
            Err(e) => Err(E::from(e)),
        };
        *slot(plan) = own;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(len: u64) -> Carve {
        Carve { base: 1 << 20, len, used: 0 }
    }

    #[test]
    fn carving_matches_layout_and_refuses_overflow() {
        let sizes = [40u64, 0, 3, 1000, 256];
        let total = sizes.iter().fold(Layout::new(), |l, &s| l.add(s)).bytes();
        let mut s = fake(total);
        let mut last = 0;
        for &b in &sizes {
            let a = s.take(b).unwrap();
            if b > 0 {
                assert_eq!(a % ALIGN, 0);
                assert!(a >= last);
                last = a + b;
            } else {
                assert_eq!(a, 0);
            }
        }
        assert_eq!(s.remaining(), 0);
        assert!(matches!(s.take(1), Err(Error::ScratchTooSmall { .. })));
        let s = fake(ALIGN);
        assert!(s.require(ALIGN + 1).is_err());
        assert!(s.require(ALIGN).is_ok());
    }

    #[test]
    fn measure_sums_what_a_carve_of_the_same_regions_takes() {
        // A description: 10 u64, 3 items of 8 bytes known by size, a nested 1000 bytes, 0 u32.
        fn describe<C: Carver>(c: &mut C) -> Result<()> {
            c.slice::<u64>(10)?;
            c.items::<u8>(3, 8)?;
            c.sub(1000)?;
            c.slice::<u32>(0)?;
            Ok(())
        }
        let bytes = Measure::bytes_of(describe).unwrap();
        assert_eq!(bytes, Layout::new().add(80).add(24).add(1000).add(0).bytes());
        // The carve arithmetic consumes exactly that for the same sizes.
        let mut c = fake(bytes);
        for b in [80, 24, 1000, 0] {
            c.take(b).unwrap();
        }
        assert_eq!(c.remaining(), 0);
        // Sizes past usize are errors, not wrapped sums.
        assert!(Measure::bytes_of(|m| m.items::<u8>(usize::MAX, 16)).is_err());
    }
}
