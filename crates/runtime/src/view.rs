//! Borrowed views of device memory: `len` items of `T` at a device address, borrowed for `'a`,
//! owned by someone else (a `CudaSlice`, a plan's scratch, a CuPy or PyTorch array). They
//! implement cudarc's `DevicePtr` (and [`DeviceViewMut`] `DevicePtrMut`), so every primitive
//! and algorithm that takes `impl DevicePtr<T>` takes them, and they never free what they
//! point at: no owner is ever forged over borrowed memory.
//!
//! Views of a cudarc `CudaSlice` keep cudarc's view of it and take part in cudarc's event
//! tracking (on by default in every context, [`crate::Gpu::new`]'s included): a kernel on a
//! forked stream that uses a slice is waited for before the slice is freed or rewritten on its
//! own stream. Views of raw addresses (`unsafe from_raw`) are ordered as their maker promised.
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceSlice, LaunchArgs, PushKernelArg, SyncOnDrop};

/// A read-only view of `len` items of `T` in device memory, borrowed for `'a`.
///
/// A view of a cudarc `CudaSlice` ([`DeviceView::of`]) keeps cudarc's own view of it, so its
/// uses take part in cudarc's event tracking wherever the context tracks: a launch or a guard
/// ([`DevicePtr::device_ptr`]) on any stream waits for the slice's last write and records the
/// read on that stream, and the slice's owner frees it only after those reads. Views of raw
/// addresses ([`DeviceView::from_raw`]) are ordered by the streams their `unsafe` maker names.
pub struct DeviceView<'a, T> {
    ptr: u64,
    len: usize,
    stream: Arc<CudaStream>,
    track: Option<CudaView<'a, T>>,
    _borrow: PhantomData<&'a [T]>,
}

/// A writable view of `len` items of `T` in device memory, borrowed exclusively for `'a`
/// (tracked as [`DeviceView`] is when made from a `CudaSlice`).
pub struct DeviceViewMut<'a, T> {
    ptr: u64,
    len: usize,
    stream: Arc<CudaStream>,
    track: Option<CudaViewMut<'a, T>>,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> Clone for DeviceView<'_, T> {
    fn clone(&self) -> Self {
        Self { ptr: self.ptr, len: self.len, stream: self.stream.clone(), track: self.track.as_ref().map(|t| t.slice(..)), _borrow: PhantomData }
    }
}

impl<T> std::fmt::Debug for DeviceView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceView")
            .field("addr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("tracked", &self.track.is_some())
            .finish()
    }
}

impl<T> std::fmt::Debug for DeviceViewMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceViewMut")
            .field("addr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("tracked", &self.track.is_some())
            .finish()
    }
}

/// The accessors every view of one kind shares.
macro_rules! view_accessors {
    (flat $($t:ident),*) => {$(
        impl<T> $t<'_, T> {
            /// Items.
            pub fn len(&self) -> usize {
                self.len
            }

            /// Whether it holds no item.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }

            /// The device address of the first item.
            pub fn addr(&self) -> u64 {
                self.ptr
            }

            /// Whether its uses take part in cudarc's event tracking (a view of a `CudaSlice`).
            pub fn is_tracked(&self) -> bool {
                self.track.is_some()
            }
        }
    )*};
    (dense $($t:ident),*) => {$(
        impl<T> $t<'_, T> {
            /// Rows (items per vector).
            pub fn rows(&self) -> u64 {
                self.rows
            }

            /// Columns (vectors).
            pub fn cols(&self) -> u64 {
                self.cols
            }

            /// Leading dimension: items from one column's start to the next's.
            pub fn ld(&self) -> u64 {
                self.ld
            }

            /// Whether the columns follow one another without gaps (`ld == rows`, one column, or
            /// none of the rows).
            pub fn is_packed(&self) -> bool {
                self.ld == self.rows || self.cols <= 1 || self.rows == 0
            }
        }
    )*};
}

view_accessors!(flat DeviceView, DeviceViewMut);
view_accessors!(dense DenseView, DenseViewMut);

/// `start..end` of a range over `len` items, `None` when it does not fit.
fn bounds(range: &impl RangeBounds<usize>, len: usize) -> Option<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1)?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1)?,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    (start <= end && end <= len).then_some((start, end))
}

fn offset<T>(ptr: u64, start: usize) -> u64 {
    ptr + (start * std::mem::size_of::<T>()) as u64
}

/// `slice`'s device address, without recording a use: the guard cudarc returns is forgotten, so
/// the slice's read event keeps marking its last real use (a kernel's, recorded by the launch).
fn address<T>(slice: &CudaSlice<T>) -> u64 {
    let (ptr, guard) = slice.device_ptr(slice.stream());
    std::mem::forget(guard);
    ptr
}

/// cudarc's writable view of `s..e` of `t` for `'a`, consuming `t`.
fn sub_mut<'a, T>(mut t: CudaViewMut<'a, T>, s: usize, e: usize) -> CudaViewMut<'a, T> {
    let sub = t.slice_mut(s..e);
    // SAFETY: `sub` differs from `CudaViewMut<'a, T>` only in its lifetime. It borrows the
    // slice's events and stream, which live for 'a (they are what `t` borrowed), and `t`, the
    // only other view of those items, is consumed here, so the exclusive borrow passes to `sub`.
    unsafe { std::mem::transmute::<CudaViewMut<'_, T>, CudaViewMut<'a, T>>(sub) }
}

/// cudarc's writable views of `0..mid` and `mid..` of `t` for `'a`, consuming `t`.
fn split_mut<'a, T>(mut t: CudaViewMut<'a, T>, mid: usize) -> (CudaViewMut<'a, T>, CudaViewMut<'a, T>) {
    let (a, b) = t.split_at_mut(mid);
    // SAFETY: as `sub_mut`: the two disjoint halves take over `t`'s exclusive borrow for 'a.
    unsafe { (std::mem::transmute::<CudaViewMut<'_, T>, CudaViewMut<'a, T>>(a), std::mem::transmute::<CudaViewMut<'_, T>, CudaViewMut<'a, T>>(b)) }
}

impl<'a, T> DeviceView<'a, T> {
    /// A view of all of `slice`, tracked: launches and guards on any stream wait for the slice's
    /// last write and record their reads, so its owner frees it only after them.
    pub fn of(slice: &'a CudaSlice<T>) -> Self {
        let ptr = address(slice);
        Self { ptr, len: slice.len(), stream: slice.stream().clone(), track: Some(slice.slice(..)), _borrow: PhantomData }
    }

    /// The empty view: no items, a null address. Passed to a kernel, it is the null pointer
    /// kernels read as "absent" (an optional array).
    pub fn empty(stream: &Arc<CudaStream>) -> Self {
        Self { ptr: 0, len: 0, stream: stream.clone(), track: None, _borrow: PhantomData }
    }

    /// `slice`'s view when given, else [`DeviceView::empty`]: an optional kernel argument.
    pub fn of_option(slice: Option<&'a CudaSlice<T>>, stream: &Arc<CudaStream>) -> Self {
        slice.map_or_else(|| Self::empty(stream), Self::of)
    }

    /// A view of `len` items at the device address `ptr` (`stream` is the one the memory is
    /// used on; it is only reported through `DeviceSlice::stream`). Untracked.
    ///
    /// # Safety
    /// `ptr` must hold `len` initialized items of `T` in device memory of `stream`'s context,
    /// aligned for `T`, and stay allocated and unwritten for `'a` **and until every use of the
    /// view enqueued during `'a` has run**: the owner frees or rewrites the memory only in an
    /// order after the streams those uses went to (the same stream, or an event).
    pub unsafe fn from_raw(ptr: u64, len: usize, stream: &Arc<CudaStream>) -> Self {
        Self { ptr, len, stream: stream.clone(), track: None, _borrow: PhantomData }
    }

    /// The sub-range `range`, `None` when it is out of bounds.
    pub fn try_slice(&self, range: impl RangeBounds<usize>) -> Option<DeviceView<'a, T>> {
        let (s, e) = bounds(&range, self.len)?;
        Some(DeviceView {
            ptr: offset::<T>(self.ptr, s),
            len: e - s,
            stream: self.stream.clone(),
            track: self.track.as_ref().map(|t| t.slice(s..e)),
            _borrow: PhantomData,
        })
    }

    /// The sub-range `range`.
    ///
    /// # Panics
    /// When `range` is out of bounds, as slice indexing and cudarc's `CudaSlice::slice` do
    /// ([`DeviceView::try_slice`] does not).
    pub fn slice(&self, range: impl RangeBounds<usize> + std::fmt::Debug) -> DeviceView<'a, T> {
        match self.try_slice((range.start_bound().cloned(), range.end_bound().cloned())) {
            Some(v) => v,
            None => panic!("device view range {range:?} out of 0..{}", self.len),
        }
    }
}

impl<'a, T> DeviceViewMut<'a, T> {
    /// The empty writable view: no items, a null address (an absent optional output).
    pub fn empty(stream: &Arc<CudaStream>) -> Self {
        Self { ptr: 0, len: 0, stream: stream.clone(), track: None, _borrow: PhantomData }
    }

    /// `slice`'s writable view when given, else [`DeviceViewMut::empty`].
    pub fn of_option(slice: Option<&'a mut CudaSlice<T>>, stream: &Arc<CudaStream>) -> Self {
        match slice {
            Some(s) => Self::of(s),
            None => Self::empty(stream),
        }
    }

    /// A writable view of all of `slice`, tracked: launches and guards on any stream wait for
    /// the slice's last reads and writes and record their writes.
    pub fn of(slice: &'a mut CudaSlice<T>) -> Self {
        let stream = slice.stream().clone();
        let len = slice.len();
        let ptr = address(slice);
        Self { ptr, len, stream, track: Some(slice.slice_mut(..)), _borrow: PhantomData }
    }

    /// A writable view of `len` items at the device address `ptr`. Untracked.
    ///
    /// # Safety
    /// As [`DeviceView::from_raw`] (the items may be uninitialized when only written), and no
    /// other view or owner reads or writes them during `'a` except in the order of the streams
    /// the caller enqueues on.
    pub unsafe fn from_raw(ptr: u64, len: usize, stream: &Arc<CudaStream>) -> Self {
        Self { ptr, len, stream: stream.clone(), track: None, _borrow: PhantomData }
    }

    /// A read-only view of the same items, borrowing this one.
    pub fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView {
            ptr: self.ptr,
            len: self.len,
            stream: self.stream.clone(),
            track: self.track.as_ref().map(|t| t.slice(..)),
            _borrow: PhantomData,
        }
    }

    /// A shorter-lived writable view of the same items.
    pub fn reborrow(&mut self) -> DeviceViewMut<'_, T> {
        DeviceViewMut {
            ptr: self.ptr,
            len: self.len,
            stream: self.stream.clone(),
            track: self.track.as_mut().map(|t| t.slice_mut(..)),
            _borrow: PhantomData,
        }
    }

    /// The writable sub-range `range`, borrowing this view; `None` when it is out of bounds.
    pub fn try_slice_mut(&mut self, range: impl RangeBounds<usize>) -> Option<DeviceViewMut<'_, T>> {
        let (s, e) = bounds(&range, self.len)?;
        Some(DeviceViewMut {
            ptr: offset::<T>(self.ptr, s),
            len: e - s,
            stream: self.stream.clone(),
            track: self.track.as_mut().map(|t| t.slice_mut(s..e)),
            _borrow: PhantomData,
        })
    }

    /// The writable sub-range `range`, borrowing this view.
    ///
    /// # Panics
    /// When `range` is out of bounds, as slice indexing and cudarc's `CudaSlice::slice_mut` do
    /// ([`DeviceViewMut::try_slice_mut`] does not).
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize> + std::fmt::Debug) -> DeviceViewMut<'_, T> {
        let len = self.len;
        match self.try_slice_mut((range.start_bound().cloned(), range.end_bound().cloned())) {
            Some(v) => v,
            None => panic!("device view range {range:?} out of 0..{len}"),
        }
    }

    /// The writable sub-range `range` for all of `'a`, consuming this view; `None` when it is
    /// out of bounds.
    pub fn try_into_slice(self, range: impl RangeBounds<usize>) -> Option<DeviceViewMut<'a, T>> {
        let (s, e) = bounds(&range, self.len)?;
        Some(self.into_checked(s, e))
    }

    /// The writable sub-range `range` for all of `'a`, consuming this view.
    ///
    /// # Panics
    /// When `range` is out of bounds ([`DeviceViewMut::try_into_slice`] does not panic).
    pub fn into_slice(self, range: impl RangeBounds<usize> + std::fmt::Debug) -> DeviceViewMut<'a, T> {
        match bounds(&range, self.len) {
            Some((s, e)) => self.into_checked(s, e),
            None => panic!("device view range {range:?} out of 0..{}", self.len),
        }
    }

    /// Items `s..e` (checked by the caller: `s <= e <= len`) for all of `'a`.
    fn into_checked(self, s: usize, e: usize) -> DeviceViewMut<'a, T> {
        DeviceViewMut {
            ptr: offset::<T>(self.ptr, s),
            len: e - s,
            stream: self.stream,
            track: self.track.map(|t| sub_mut(t, s, e)),
            _borrow: PhantomData,
        }
    }

    /// Splits into `[0, mid)` and `[mid, len)`, `None` when `mid > len`.
    pub fn split_at(self, mid: usize) -> Option<(DeviceViewMut<'a, T>, DeviceViewMut<'a, T>)> {
        if mid > self.len {
            return None;
        }
        let (head, tail) = match self.track {
            Some(t) => {
                let (a, b) = split_mut(t, mid);
                (Some(a), Some(b))
            }
            None => (None, None),
        };
        let tail =
            DeviceViewMut { ptr: offset::<T>(self.ptr, mid), len: self.len - mid, stream: self.stream.clone(), track: tail, _borrow: PhantomData };
        Some((DeviceViewMut { ptr: self.ptr, len: mid, stream: self.stream, track: head, _borrow: PhantomData }, tail))
    }
}

impl<'a, T> From<DeviceViewMut<'a, T>> for DeviceView<'a, T> {
    fn from(v: DeviceViewMut<'a, T>) -> Self {
        let track = v.track.map(|t| {
            let r = t.slice(..);
            // SAFETY: `r` differs from `CudaView<'a, T>` only in its lifetime: it borrows the
            // slice's events and stream for 'a, and the exclusive view it came from is consumed,
            // so a shared borrow for 'a remains.
            unsafe { std::mem::transmute::<CudaView<'_, T>, CudaView<'a, T>>(r) }
        });
        DeviceView { ptr: v.ptr, len: v.len, stream: v.stream, track, _borrow: PhantomData }
    }
}

impl<'a, T> From<&'a CudaSlice<T>> for DeviceView<'a, T> {
    fn from(s: &'a CudaSlice<T>) -> Self {
        Self::of(s)
    }
}

impl<'a, T> From<&'a mut CudaSlice<T>> for DeviceViewMut<'a, T> {
    fn from(s: &'a mut CudaSlice<T>) -> Self {
        Self::of(s)
    }
}

impl<T> DeviceSlice<T> for DeviceView<'_, T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl<T> DevicePtr<T> for DeviceView<'_, T> {
    fn device_ptr<'b>(&'b self, stream: &'b CudaStream) -> (u64, SyncOnDrop<'b>) {
        match &self.track {
            Some(t) => t.device_ptr(stream),
            None => (self.ptr, SyncOnDrop::Record(None)),
        }
    }
}

impl<T> DeviceSlice<T> for DeviceViewMut<'_, T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl<T> DevicePtr<T> for DeviceViewMut<'_, T> {
    fn device_ptr<'b>(&'b self, stream: &'b CudaStream) -> (u64, SyncOnDrop<'b>) {
        match &self.track {
            Some(t) => t.device_ptr(stream),
            None => (self.ptr, SyncOnDrop::Record(None)),
        }
    }
}

impl<T> DevicePtrMut<T> for DeviceViewMut<'_, T> {
    fn device_ptr_mut<'b>(&'b mut self, stream: &'b CudaStream) -> (u64, SyncOnDrop<'b>) {
        match &mut self.track {
            Some(t) => t.device_ptr_mut(stream),
            None => (self.ptr, SyncOnDrop::Record(None)),
        }
    }
}

// Views pass straight to a kernel launch as their device address (typed arguments instead of
// raw `u64`s): a read-only view by shared reference, a writable one by mutable reference. A
// tracked view passes as cudarc's own view, so the launch waits for the slice's earlier uses on
// the launch's stream and records this one there.
// SAFETY: the pushed argument is the address of a `u64` field that lives as long as the borrow
// of the view, which outlives the launch builder ('b: 'a).
unsafe impl<'a, 'b: 'a, 'c: 'b, T> PushKernelArg<&'b DeviceView<'c, T>> for LaunchArgs<'a> {
    fn arg(&mut self, arg: &'b DeviceView<'c, T>) -> &mut Self {
        match &arg.track {
            Some(t) => self.arg(t),
            None => self.arg(&arg.ptr),
        }
    }
}

// SAFETY: as for DeviceView.
unsafe impl<'a, 'b: 'a, 'c: 'b, T> PushKernelArg<&'b mut DeviceViewMut<'c, T>> for LaunchArgs<'a> {
    fn arg(&mut self, arg: &'b mut DeviceViewMut<'c, T>) -> &mut Self {
        match &mut arg.track {
            Some(t) => self.arg(t),
            None => self.arg(&arg.ptr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::bounds;

    #[test]
    fn column_spans_stay_inside_the_block() {
        use super::column_span;
        // 5 rows, 4 columns, ld 8: column c starts at 8 c; the block spans 8 · 3 + 5 = 29 items.
        assert_eq!(column_span(5, 4, 8, &(0..4)).unwrap(), (0, 29));
        assert_eq!(column_span(5, 4, 8, &(1..3)).unwrap(), (8, 13));
        assert_eq!(column_span(5, 4, 8, &(3..4)).unwrap(), (24, 5));
        // Empty ranges span nothing, at the block's start, even past the last column.
        assert_eq!(column_span(5, 4, 8, &(4..4)).unwrap(), (0, 0));
        assert_eq!(column_span(0, 4, 1, &(1..3)).unwrap(), (0, 0));
        assert!(column_span(5, 4, 8, &(2..5)).is_err());
        let (s, e) = (3, 2);
        assert!(column_span(5, 4, 8, &(s..e)).is_err());
    }

    #[test]
    fn ranges_are_checked_not_panicking() {
        assert_eq!(bounds(&(..), 5), Some((0, 5)));
        assert_eq!(bounds(&(1..3), 5), Some((1, 3)));
        assert_eq!(bounds(&(2..=4), 5), Some((2, 5)));
        let (s, e) = (3, 2);
        assert_eq!(bounds(&(s..e), 5), None);
        assert_eq!(bounds(&(0..6), 5), None);
        assert_eq!(bounds(&(..=usize::MAX), 5), None);
        assert_eq!(bounds(&(5..), 5), Some((5, 5)));
    }
}

/// The items a column-major `rows × cols` block with leading dimension `ld` spans: `ld · (cols −
/// 1) + rows` (0 when empty), `None` on overflow.
fn dense_span(rows: u64, cols: u64, ld: u64) -> Option<u64> {
    if rows == 0 || cols == 0 {
        return Some(0);
    }
    ld.checked_mul(cols - 1)?.checked_add(rows)
}

/// Checks a dense block's shape against the items its view holds.
fn check_dense(rows: u64, cols: u64, ld: u64, len: usize) -> crate::Result<()> {
    if ld < rows.max(1) {
        return Err(crate::Error::LeadingDimension { rows, ld });
    }
    let span = dense_span(rows, cols, ld).ok_or(crate::Error::TooLarge { what: "dense block", len: u64::MAX, max: usize::MAX as u64 })?;
    if span > len as u64 {
        return Err(crate::Error::LengthMismatch { what: "dense block items", expected: span, got: len as u64 });
    }
    Ok(())
}

/// The items of columns `range` of a block (`ld` apart, `rows` each) within its data: the
/// first item's position and the span, or the error naming a range outside `0 .. cols`.
fn column_span(rows: u64, cols: u64, ld: u64, range: &std::ops::Range<u64>) -> crate::Result<(usize, usize)> {
    if range.start > range.end || range.end > cols {
        return Err(crate::Error::LengthMismatch { what: "dense block columns (range end)", expected: cols, got: range.end.max(range.start) });
    }
    let span =
        dense_span(rows, range.end - range.start, ld).ok_or(crate::Error::TooLarge { what: "dense block", len: u64::MAX, max: usize::MAX as u64 })?;
    // An empty range spans nothing (at the block's start, which always lies inside its data).
    let start = if span == 0 { 0 } else { range.start * ld };
    Ok((start as usize, span as usize))
}

/// The columns of a packed block of `len` items of `rows` each.
fn packed_cols(len: u64, rows: u64) -> crate::Result<u64> {
    let cols = len.checked_div(rows).unwrap_or(0);
    if cols * rows != len {
        return Err(crate::Error::LengthMismatch { what: "packed dense block items", expected: cols.max(1) * rows, got: len });
    }
    Ok(cols)
}

/// A read-only column-major `rows × cols` block of device memory with leading dimension `ld`
/// (column `c` starts `c · ld` items after the first): a block of `cols` vectors of `rows`
/// items, as BLAS, cuBLAS and cuSPARSE take them. Packed when `ld == rows`.
#[derive(Clone, Debug)]
pub struct DenseView<'a, T> {
    rows: u64,
    cols: u64,
    ld: u64,
    data: DeviceView<'a, T>,
}

/// A writable column-major `rows × cols` block with leading dimension `ld` ([`DenseView`]).
#[derive(Debug)]
pub struct DenseViewMut<'a, T> {
    rows: u64,
    cols: u64,
    ld: u64,
    data: DeviceViewMut<'a, T>,
}

impl<'a, T> DenseView<'a, T> {
    /// A `rows × cols` block with leading dimension `ld` over `data`.
    ///
    /// # Errors
    /// [`crate::Error::LeadingDimension`] when `ld < max(rows, 1)`;
    /// [`crate::Error::LengthMismatch`] when `data` holds fewer than `ld · (cols − 1) + rows`
    /// items.
    pub fn new(data: DeviceView<'a, T>, rows: u64, cols: u64, ld: u64) -> crate::Result<Self> {
        check_dense(rows, cols, ld, data.len())?;
        Ok(Self { rows, cols, ld, data })
    }

    /// All of `data` as packed columns of `rows` items (`ld = rows`, `cols = len / rows`).
    ///
    /// # Errors
    /// [`crate::Error::LengthMismatch`] when the length is not a multiple of `rows`, or
    /// `rows == 0` with a non-empty `data`.
    pub fn packed(data: DeviceView<'a, T>, rows: u64) -> crate::Result<Self> {
        let cols = packed_cols(data.len() as u64, rows)?;
        Ok(Self { rows, cols, ld: rows.max(1), data })
    }

    /// The items it spans.
    pub fn data(&self) -> &DeviceView<'a, T> {
        &self.data
    }

    /// Columns `range` of the block: the same rows and leading dimension, `range.len()`
    /// columns (packed only when this block is, or for one column).
    ///
    /// # Errors
    /// [`crate::Error::LengthMismatch`] when `range` is not inside `0 .. cols`.
    pub fn columns(&self, range: std::ops::Range<u64>) -> crate::Result<DenseView<'a, T>> {
        let (start, span) = column_span(self.rows, self.cols, self.ld, &range)?;
        let data = self.data.try_slice(start..start + span).ok_or(crate::Error::Internal("a dense block's columns outside its data"))?;
        Ok(DenseView { rows: self.rows, cols: range.end - range.start, ld: self.ld, data })
    }
}

impl<'a, T> DenseViewMut<'a, T> {
    /// A writable `rows × cols` block with leading dimension `ld` over `data`.
    ///
    /// # Errors
    /// As [`DenseView::new`].
    pub fn new(data: DeviceViewMut<'a, T>, rows: u64, cols: u64, ld: u64) -> crate::Result<Self> {
        check_dense(rows, cols, ld, data.len())?;
        Ok(Self { rows, cols, ld, data })
    }

    /// All of `data` as packed columns of `rows` items.
    ///
    /// # Errors
    /// As [`DenseView::packed`].
    pub fn packed(data: DeviceViewMut<'a, T>, rows: u64) -> crate::Result<Self> {
        let cols = packed_cols(data.len() as u64, rows)?;
        Ok(Self { rows, cols, ld: rows.max(1), data })
    }

    /// The items it spans, writable.
    pub fn data_mut(&mut self) -> &mut DeviceViewMut<'a, T> {
        &mut self.data
    }

    /// Columns `range` of the block, writable, borrowing this one ([`DenseView::columns`]).
    ///
    /// # Errors
    /// [`crate::Error::LengthMismatch`] when `range` is not inside `0 .. cols`.
    pub fn columns_mut(&mut self, range: std::ops::Range<u64>) -> crate::Result<DenseViewMut<'_, T>> {
        let (start, span) = column_span(self.rows, self.cols, self.ld, &range)?;
        let data = self.data.try_slice_mut(start..start + span).ok_or(crate::Error::Internal("a dense block's columns outside its data"))?;
        Ok(DenseViewMut { rows: self.rows, cols: range.end - range.start, ld: self.ld, data })
    }

    /// The same block read-only, borrowing this one.
    pub fn as_view(&self) -> DenseView<'_, T> {
        DenseView { rows: self.rows, cols: self.cols, ld: self.ld, data: self.data.as_view() }
    }

    /// A shorter-lived writable borrow of the same block.
    pub fn reborrow(&mut self) -> DenseViewMut<'_, T> {
        DenseViewMut { rows: self.rows, cols: self.cols, ld: self.ld, data: self.data.reborrow() }
    }
}

impl crate::Gpu {
    /// Copies the block `src` into `dst` (same rows and columns; any leading dimensions) on this
    /// handle's stream, without synchronizing: one 2-D copy (`cuMemcpy2DAsync`).
    ///
    /// # Errors
    /// [`crate::Error::LengthMismatch`] for blocks of different shapes; driver errors.
    pub fn copy_dense<T>(&self, src: &DenseView<'_, T>, dst: &mut DenseViewMut<'_, T>) -> crate::Result<()> {
        if (src.rows, src.cols) != (dst.rows, dst.cols) {
            let what = "dense copy shape (rows · cols)";
            return Err(crate::Error::LengthMismatch { what, expected: src.rows * src.cols, got: dst.rows * dst.cols });
        }
        if src.rows == 0 || src.cols == 0 {
            return Ok(());
        }
        let size = std::mem::size_of::<T>();
        use cudarc::driver::sys;
        let p = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: src.data.addr(),
            srcArray: std::ptr::null_mut(),
            srcPitch: src.ld as usize * size,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: dst.data.addr(),
            dstArray: std::ptr::null_mut(),
            dstPitch: dst.ld as usize * size,
            WidthInBytes: src.rows as usize * size,
            Height: src.cols as usize,
        };
        // SAFETY: both views span ld · (cols − 1) + rows items (checked at construction), which
        // is what a copy of `cols` rows of `rows · size` bytes at these pitches touches; the
        // stream is this handle's.
        unsafe { sys::cuMemcpy2DAsync_v2(&p, self.stream().cu_stream()) }.result().map_err(crate::Error::driver("a 2-D copy of a dense block"))
    }
}
