//! Matrices with a 64-bit row pointer ([`DeviceCsr64`]): more than `u32::MAX` nonzeros, or a
//! caller's `int64` CSR. The 32-bit machinery does the work, in chunks of at most
//! [`Transposer::chunk_nnz`] nonzeros ([`transpose_kernels::index64`]):
//!
//! - **One chunk** (every matrix below [`DEFAULT_CHUNK_NNZ`] nonzeros by default): the row
//!   pointer is narrowed to a 32-bit copy, the chosen algorithm transposes straight into the
//!   output's row indices and values, and its 32-bit column pointer is widened into the
//!   output's. The extra work is `12·(m + 1) + 20·(n + 1)` bytes of traffic.
//! - **Several chunks** (nonzeros `c·chunk .. (c + 1)·chunk`, cutting rows where they fall):
//!   a first sweep sums the chunks' 32-bit column pointers (the histogram primitive) into the
//!   64-bit output pointer; a second transposes each chunk into a 32-bit CSC and puts its
//!   entries after the previous chunks' in each column (`transpose_index64_place_v*`). Chunks
//!   cover increasing rows, so each column's rows stay sorted, and equal entries keep their
//!   input order: the result is the serial twin's, bit for bit.
//!
//! Column and row indices stay `u32` (a [`DeviceCsr64`] has at most `MAX_DIM` rows and
//! columns): the narrowest type that holds them.

use gpu_histogram::Histogram;
use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::scratch::Layout;
use gpu_runtime::scratch::ScratchSlice;
use gpu_runtime::{DeviceView, DeviceViewMut, Gpu, Payload, Scratch, ScratchBuf};
use sptrans_matrix::device::MAX_NNZ;
use sptrans_matrix::device64::{DeviceCsr64, DeviceCsr64Parts};
use sptrans_matrix::{AsDeviceCsrView, DeviceCsr64View, DeviceCsrPartsMut, DeviceCsrView};

/// The index math of this path, shared with its kernels and the CPU model.
pub use transpose_kernels::index64::{chunk_ptr, chunk_rows, entry_hashes, gen_col, gen_ptr, mix_a, upper_bound};

use crate::{launch, wide, Algorithm, Dims, Error, Result, Transposer};

/// Nonzeros a chunk holds at most by default: 2³⁰. A chunk's workspace is about
/// `(4 + 4 + value bytes)·chunk` plus the algorithm's own for `chunk` nonzeros, so that the
/// transpose of 2³² nonzeros fits an 80 GB GPU beside its input and output.
pub const DEFAULT_CHUNK_NNZ: u64 = 1 << 30;

/// The sizes of one 64-bit transposition: the matrix's, and its chunks'.
#[derive(Clone, Copy, Debug)]
struct Plan {
    m: u64,
    n: u64,
    nnz: u64,
    chunk: u64,
    chunks: u64,
}

impl Plan {
    fn new(m: u64, n: u64, nnz: u64, chunk: u64) -> Self {
        Self { m, n, nnz, chunk, chunks: nnz.div_ceil(chunk) }
    }

    /// The largest chunk.
    fn c(&self) -> u64 {
        self.nnz.min(self.chunk)
    }
}

impl Transposer {
    /// The most nonzeros one chunk of a 64-bit transposition holds ([`DEFAULT_CHUNK_NNZ`]
    /// unless set).
    pub fn chunk_nnz(&self) -> u64 {
        self.chunk
    }

    /// Sets the chunk size of 64-bit transpositions (`None`: [`DEFAULT_CHUNK_NNZ`]), clamped
    /// to `1..=MAX_NNZ`. Smaller chunks need less workspace; tests use tiny ones to cut rows.
    pub fn set_chunk_nnz(&mut self, chunk: Option<u64>) {
        self.chunk = chunk.unwrap_or(DEFAULT_CHUNK_NNZ).clamp(1, MAX_NNZ);
    }

    /// Device bytes a 64-bit transposition ([`Transposer::transpose64_into`]) with `algo` needs
    /// beyond its input and output, for an `m × n` matrix with `nnz` nonzeros of `value_bytes`
    /// bytes (0 for pattern), at the current chunk size.
    ///
    /// # Errors
    /// [`Error::TooLarge`] past `MAX_DIM` rows or columns; as [`Transposer::workspace_bytes`].
    pub fn workspace64_bytes(&mut self, algo: Algorithm, m: u64, n: u64, nnz: u64, value_bytes: usize) -> Result<u64> {
        let p = self.plan(m, n, nnz)?;
        let algo = self.resolve(algo, m, n, p.c(), value_bytes);
        if nnz == 0 || algo == Algorithm::Serial {
            return Ok(0);
        }
        let inner = self.workspace_bytes(algo, m, n, p.c(), value_bytes)?;
        let mut l = Layout::new().add(4 * (m + 1)).add(4 * (n + 1));
        if p.chunks == 1 {
            return Ok(l.add(inner).bytes());
        }
        l = l.add(16 * p.chunks).add(8 * n).add(4 * p.c()).add(value_bytes as u64 * p.c());
        let tail =
            inner.max(Layout::new().add(4 * p.c()).add(Ptr2Idx::workspace_bytes(n, p.c())).bytes()).max(Histogram::pointers_workspace_bytes(n));
        Ok(l.add(tail).bytes())
    }

    fn plan(&self, m: u64, n: u64, nnz: u64) -> Result<Plan> {
        let max = sptrans_matrix::device::MAX_DIM;
        for (what, v) in [("rows", m), ("cols", n)] {
            if v > max {
                return Err(Error::TooLarge { what, len: v, max });
            }
        }
        Ok(Plan::new(m, n, nnz, self.chunk))
    }

    /// Output buffers of the transposed shape for `a` (contents unspecified).
    ///
    /// # Errors
    /// Out of memory.
    pub fn alloc_output64<T: Payload>(&self, a: &impl AsDeviceCsrView<T, u64>) -> Result<DeviceCsr64Parts<T>> {
        let a = a.csr_view();
        Ok(DeviceCsr64Parts::alloc(&self.gpu, a.cols(), a.nnz(), a.vals().is_some())?)
    }

    /// Allocates the output for `a` and transposes into it ([`Transposer::transpose64_into`]).
    ///
    /// # Errors
    /// As [`Transposer::transpose64_into`].
    pub fn transpose64_new<T: Payload>(&mut self, algo: Algorithm, a: &impl AsDeviceCsrView<T, u64>) -> Result<DeviceCsr64<T>> {
        let out = self.alloc_output64(a)?;
        self.transpose64_into(algo, a, out)
    }

    /// Transposes `a` (64-bit row pointer: a [`DeviceCsr64`] or a borrowed
    /// [`DeviceCsr64View`]) into the owned buffers `out` (pointer of `n + 1`, `nnz` indices,
    /// values exactly when `a` has them) and returns them as the result
    /// ([`Transposer::transpose64_view`] writes into borrowed ones).
    ///
    /// # Errors
    /// As [`Transposer::transpose64_view`].
    pub fn transpose64_into<T: Payload>(
        &mut self,
        algo: Algorithm,
        a: &impl AsDeviceCsrView<T, u64>,
        mut out: DeviceCsr64Parts<T>,
    ) -> Result<DeviceCsr64<T>> {
        let a = a.csr_view();
        self.transpose64_view(algo, &a, &mut out.view_mut())?;
        // SAFETY: transpose64_view wrote the CSR of the transpose of a valid `a` into `out`.
        Ok(unsafe { DeviceCsr64::from_parts_unchecked(a.cols(), a.rows(), out) })
    }

    /// [`Transposer::transpose64_into`] on caller-lent scratch of at least
    /// [`Transposer::workspace64_bytes`].
    ///
    /// # Errors
    /// As [`Transposer::transpose64_into`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn transpose64_into_with<T: Payload>(
        &mut self,
        algo: Algorithm,
        a: &impl AsDeviceCsrView<T, u64>,
        mut out: DeviceCsr64Parts<T>,
        scratch: &mut Scratch<'_>,
    ) -> Result<DeviceCsr64<T>> {
        let a = a.csr_view();
        self.transpose64_view_with(algo, &a, &mut out.view_mut(), scratch)?;
        // SAFETY: transpose64_view_with wrote the CSR of the transpose of a valid `a`.
        Ok(unsafe { DeviceCsr64::from_parts_unchecked(a.cols(), a.rows(), out) })
    }

    /// Transposes the borrowed `a` (64-bit row pointer) into the borrowed buffers `out` with
    /// `algo` on each chunk, on the plan's own workspace. The result equals
    /// [`Transposer::transpose_view`]'s (and the serial twin's) bit for bit. Synchronizes once
    /// when there is more than one chunk (to read the chunks' rows). On error `out`'s contents
    /// are unspecified.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for output buffers of the wrong size, [`Error::TooLarge`],
    /// [`Error::UnsupportedValue`], runtime errors ([`Error::is_out_of_memory`]).
    pub fn transpose64_view<T: Payload>(
        &mut self,
        algo: Algorithm,
        a: &DeviceCsr64View<'_, T>,
        out: &mut DeviceCsrPartsMut<'_, T, u64>,
    ) -> Result<()> {
        let vb = if a.vals().is_some() { T::BYTES } else { 0 };
        let bytes = self.workspace64_bytes(algo, a.rows(), a.cols(), a.nnz(), vb)?;
        let gpu = self.gpu.clone();
        ScratchBuf::lend(self, |p| &mut p.own, &gpu, bytes, |t, s| t.transpose64_view_with(algo, a, out, s))
    }

    /// [`Transposer::transpose64_view`] on caller-lent scratch of at least
    /// [`Transposer::workspace64_bytes`].
    ///
    /// # Errors
    /// As [`Transposer::transpose64_view`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn transpose64_view_with<T: Payload>(
        &mut self,
        algo: Algorithm,
        a: &DeviceCsr64View<'_, T>,
        out: &mut DeviceCsrPartsMut<'_, T, u64>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let p = self.plan(a.rows(), a.cols(), a.nnz())?;
        out.check_aligned()?;
        let checks = [
            ("output pointer length", p.n + 1, out.ptr.len() as u64),
            ("output indices length", p.nnz, out.idx.len() as u64),
            ("output values present", a.vals().is_some() as u64, out.vals.is_some() as u64),
            ("output values length", out.vals.as_ref().map_or(0, |_| p.nnz), out.vals.as_ref().map_or(0, |v| v.len() as u64)),
        ];
        for (what, expected, actual) in checks {
            if expected != actual {
                return Err(Error::LengthMismatch { what, expected, got: actual });
            }
        }
        let vb = if a.vals().is_some() { T::BYTES } else { 0 };
        launch::place_variant(vb)?;
        let algo = self.resolve(algo, p.m, p.n, p.c(), vb);
        scratch.require(self.workspace64_bytes(algo, p.m, p.n, p.nnz, vb)?)?;
        if algo == Algorithm::Serial {
            crate::serial::run64(self, a, out)
        } else if p.nnz == 0 {
            Ok(self.gpu.memset_bytes(&mut out.ptr, 0)?)
        } else if p.chunks == 1 {
            self.one_chunk(algo, a, out, p, scratch)
        } else {
            self.chunked(algo, a, out, p, scratch)
        }
    }

    /// Runs one chunk (a valid 32-bit matrix) through `algo` into `o32`.
    fn run_chunk<T: Payload>(
        &mut self,
        algo: Algorithm,
        a32: &DeviceCsrView<'_, T>,
        o32: &mut DeviceCsrPartsMut<'_, T>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let d = Dims { m: a32.rows(), n: a32.cols(), nnz: a32.nnz() };
        let vb = if a32.vals().is_some() { T::BYTES } else { 0 };
        if wide::by_positions(&self.radix, algo, vb, d.n) {
            wide::run(self, algo, a32, o32, d, scratch)
        } else {
            self.run_algorithm(algo, a32, o32, d, scratch)
        }
    }

    /// Enqueues a chunk's 32-bit row pointer (rows `r0..r1`, nonzeros `k0..k1`) into the first
    /// `r1 - r0 + 1` words of `cptr`.
    fn chunk_ptr<T: Payload>(
        &self,
        a: &DeviceCsr64View<'_, T>,
        (r0, r1, k0, k1): (u64, u64, u64, u64),
        cptr: &mut ScratchSlice<'_, u32>,
    ) -> Result<()> {
        let mut head = cptr.range_mut(..(r1 - r0 + 1) as usize);
        launch::chunk_ptr(&self.gpu, &self.k, a.ptr(), r0, (k0, k1), &mut head.view_mut())
    }

    /// `acc += part` over `acc`'s words (`part` at least as long).
    pub(crate) fn add_ptr(&self, acc: &mut DeviceViewMut<'_, u64>, part: &DeviceView<'_, u32>) -> Result<()> {
        launch::add_ptr(&self.gpu, &self.k, acc, part)
    }

    /// Places `piece` after the earlier pieces in each output column ([`launch::place_piece`]).
    ///
    /// # Safety
    /// As [`launch::place_piece`]: columns below the cursor's length, the piece's own pointer,
    /// destinations inside the outputs and distinct from every other piece's.
    pub(crate) unsafe fn place_piece<T: Payload>(
        &self,
        piece: &launch::Piece<'_, T>,
        cursor: &mut DeviceViewMut<'_, u64>,
        out_rows: &mut DeviceViewMut<'_, u32>,
        out_vals: Option<&mut DeviceViewMut<'_, T>>,
    ) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { launch::place_piece(&self.gpu, &self.k, piece, cursor, out_rows, out_vals) }
    }

    /// The rows `r0..r1` of each chunk of `chunk` nonzeros of the 64-bit pointer `ptr` (from 0
    /// to `nnz > 0`), two words a chunk, read back. Synchronizes.
    pub(crate) fn chunk_rows_of(&self, ptr: &DeviceView<'_, u64>, nnz: u64, chunk: u64, rows: &mut DeviceViewMut<'_, u64>) -> Result<Vec<u64>> {
        let chunks = nnz.div_ceil(chunk);
        if (rows.len() as u64) < 2 * chunks || ptr.is_empty() {
            return Err(Error::LengthMismatch { what: "chunk rows", expected: 2 * chunks, got: rows.len() as u64 });
        }
        // SAFETY: `ptr` is a valid pointer (its caller passes a validated view's) from 0 to nnz;
        // rows holds 2 · chunks words (checked).
        unsafe { launch::chunk_rows(&self.gpu, &self.k, ptr, nnz, chunk, rows)? };
        let mut got = self.gpu.download(&*rows)?;
        got.truncate(2 * chunks as usize);
        Ok(got)
    }

    fn one_chunk<T: Payload>(
        &mut self,
        algo: Algorithm,
        a: &DeviceCsr64View<'_, T>,
        out: &mut DeviceCsrPartsMut<'_, T, u64>,
        p: Plan,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let mut cptr = scratch.slice::<u32>(p.m as usize + 1)?;
        let mut cp = scratch.slice::<u32>(p.n as usize + 1)?;
        self.chunk_ptr(a, (0, p.m, 0, p.nnz), &mut cptr)?;
        {
            // SAFETY: the 32-bit matrix is a's with its pointer narrowed (nnz <= chunk <= MAX_NNZ
            // words from 0 to nnz, written by chunk_ptr above): it keeps the view's invariants.
            let a32 = unsafe { DeviceCsrView::new_unchecked(p.m, p.n, cptr.view(), a.idx().clone(), a.vals().cloned()) };
            // Straight into out's indices and values; the 32-bit column pointer into cp.
            let mut o32 = DeviceCsrPartsMut { ptr: cp.view_mut(), idx: out.idx.reborrow(), vals: out.vals.as_mut().map(|v| v.reborrow()) };
            self.run_chunk(algo, &a32, &mut o32, scratch)?;
        }
        self.gpu.memset_bytes(&mut out.ptr, 0)?;
        self.add_ptr(&mut out.ptr, &cp.view())
    }

    fn chunked<T: Payload>(
        &mut self,
        algo: Algorithm,
        a: &DeviceCsr64View<'_, T>,
        out: &mut DeviceCsrPartsMut<'_, T, u64>,
        p: Plan,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let vb = if a.vals().is_some() { T::BYTES as u64 } else { 0 };
        let mut cptr = scratch.slice::<u32>(p.m as usize + 1)?;
        let mut cp = scratch.slice::<u32>(p.n as usize + 1)?;
        let mut rows_at = scratch.slice::<u64>(2 * p.chunks as usize)?;
        let mut cursor = scratch.slice::<u64>(p.n as usize)?;
        let mut cidx = scratch.slice::<u32>(p.c() as usize)?;
        let mut cvals = scratch.slice::<T>(if vb > 0 { p.c() as usize } else { 0 })?;
        let rows = self.chunk_rows_of(a.ptr(), p.nnz, p.chunk, &mut rows_at.view_mut())?;
        let span = |c: u64| -> (u64, u64, u64, u64) {
            let k0 = c * p.chunk;
            (rows[2 * c as usize], rows[2 * c as usize + 1], k0, (k0 + p.chunk).min(p.nnz))
        };
        // Sweep 1: the output's column pointer (and the cursor, its first n words) as the sum
        // of the chunks' 32-bit ones.
        self.gpu.memset_bytes(&mut out.ptr, 0)?;
        self.gpu.memset_bytes(&mut cursor, 0)?;
        for c in 0..p.chunks {
            let (_, _, k0, k1) = span(c);
            let keys = a.idx().slice(k0 as usize..k1 as usize);
            let mut sub = scratch.reborrow();
            self.hist.pointers_with(&keys, &mut cp, false, &mut sub)?;
            self.add_ptr(&mut out.ptr, &cp.view())?;
            self.add_ptr(&mut cursor.view_mut(), &cp.view())?;
        }
        // Sweep 2: each chunk transposed, then put after the previous chunks' entries.
        for c in 0..p.chunks {
            let (r0, r1, k0, k1) = span(c);
            let (rc, nc) = (r1 - r0, (k1 - k0) as usize);
            self.chunk_ptr(a, (r0, r1, k0, k1), &mut cptr)?;
            let (k0u, k1u) = (k0 as usize, k1 as usize);
            {
                // SAFETY: the chunk is a valid 32-bit matrix: its pointer (rc + 1 words written by
                // chunk_ptr) runs from 0 to nc <= chunk <= MAX_NNZ over rc <= m rows, its indices
                // and values are a's from k0 (nc items).
                let a32 = unsafe {
                    DeviceCsrView::new_unchecked(
                        rc,
                        p.n,
                        cptr.view().slice(..rc as usize + 1),
                        a.idx().slice(k0u..k1u),
                        a.vals().map(|v| v.slice(k0u..k1u)),
                    )
                };
                // The chunk's CSC: cp, cidx and cvals of the workspace.
                let mut o32 = DeviceCsrPartsMut {
                    ptr: cp.view_mut(),
                    idx: cidx.range_mut(..nc).into_view(),
                    vals: (vb > 0).then(|| cvals.range_mut(..nc).into_view()),
                };
                let mut inner = scratch.reborrow();
                self.run_chunk(algo, &a32, &mut o32, &mut inner)?;
            }
            // The chunk's transpose is enqueued; its workspace now holds each entry's column.
            let mut sub = scratch.reborrow();
            let mut cols = sub.slice::<u32>(nc)?;
            let mut expand = sub.sub(Ptr2Idx::workspace_bytes(p.n, nc as u64))?;
            self.ptr2idx.run_with(&cp, &mut cols, &mut expand)?;
            let piece = launch::Piece {
                cols: cols.view(),
                cp: cp.view(),
                rows: cidx.view().slice(..nc),
                r0: r0 as u32,
                vals: (vb > 0).then(|| cvals.view().slice(..nc)),
            };
            // SAFETY: the chunk's CSC (nc entries, columns < n from ptr2idx of its pointer cp
            // of n + 1 words), the cursor (n words: the output pointer plus the previous
            // chunks' counts, so each column's destinations lie in its output range, distinct);
            // out's row indices and values (nnz items).
            unsafe { self.place_piece(&piece, &mut cursor.view_mut(), &mut out.idx, out.vals.as_mut())? };
        }
        Ok(())
    }
}

/// A matrix's fingerprint: two sums mod 2⁶⁴ of independent 64-bit hashes of its entries
/// `(row, col)` ([`transpose_kernels::index64::entry_hashes`]), equal for matrices with the same
/// multiset of entries whatever their order, and the count of entries below their predecessor
/// in the same row (or column). Checks a transpose too large for a host twin: the input's
/// fingerprint by rows must equal the output's by columns, with no entry out of order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fingerprint {
    /// Sum of the first hash.
    pub a: u64,
    /// Sum of the second hash.
    pub b: u64,
    /// Entries below their predecessor in the same row (CSR) or column (CSC).
    pub unsorted: u64,
}

impl Fingerprint {
    /// The fingerprint of a host matrix's entries, with `rows_major` as in [`fingerprint`]
    /// (CPU; the specification of the GPU kernel).
    pub fn of_host<T: sptrans_matrix::Value>(a: &sptrans_matrix::Csr<u64, T>, rows_major: bool) -> Self {
        Self::of_parts(a.ptr(), a.idx(), |_| 0, rows_major)
    }

    /// The fingerprint of a host matrix given by its pointer and indices, each entry's minor
    /// index or-ed with `tag(k)` for entry `k` (0: the pattern, as [`Fingerprint::of_host`]; a
    /// value's bits shifted past the indices: the values too), on every core.
    pub fn of_parts<I: sptrans_matrix::Index>(ptr: &[I], idx: &[I], tag: impl Fn(usize) -> u64 + Sync, rows_major: bool) -> Self {
        let rows = ptr.len().saturating_sub(1);
        let parts = std::thread::available_parallelism().map_or(1, |p| p.get()) * 4;
        let chunk = rows.div_ceil(parts).max(1);
        let tag = &tag;
        let one = |r0: usize| {
            let mut f = Fingerprint::default();
            for i in r0..(r0 + chunk).min(rows) {
                let (s, e) = (ptr[i].to_usize(), ptr[i + 1].to_usize());
                for k in s..e {
                    let minor = idx[k].to_u64();
                    let (r, c) = if rows_major { (i as u64, minor) } else { (minor, i as u64) };
                    let (ha, hb) = transpose_kernels::index64::entry_hashes(r, c | tag(k));
                    f.a = f.a.wrapping_add(ha);
                    f.b = f.b.wrapping_add(hb);
                    f.unsorted += u64::from(k > s && idx[k - 1].to_u64() > minor);
                }
            }
            f
        };
        let sums: Vec<Fingerprint> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..rows).step_by(chunk).map(|r0| sc.spawn(move || one(r0))).collect();
            // A hashing thread panicking is a bug here: raised again.
            hs.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        });
        sums.into_iter().fold(Fingerprint::default(), |f, p| Fingerprint {
            a: f.a.wrapping_add(p.a),
            b: f.b.wrapping_add(p.b),
            unsorted: f.unsorted + p.unsorted,
        })
    }
}

/// The fingerprint of `a` on the GPU, one warp per row: with `rows_major` its entries are
/// `(i, idx)` (a CSR matrix), without, `(idx, i)` (a transpose's output read as the CSC of its
/// input). Synchronizes.
///
/// # Errors
/// Runtime errors.
pub fn fingerprint<T: Payload>(gpu: &Gpu, a: &DeviceCsr64<T>, rows_major: bool) -> Result<Fingerprint> {
    let mut out = gpu.alloc_zeros::<u64>(3)?;
    // SAFETY: a valid matrix (the owner's invariants: rows + 1 pointer words, nnz indices), out
    // of three words.
    unsafe { launch::fingerprint(gpu, &DeviceView::of(a.ptr()), &DeviceView::of(a.idx()), rows_major, &mut DeviceViewMut::of(&mut out))? };
    let got = gpu.download(&out)?;
    Ok(Fingerprint { a: got[0], b: got[1], unsorted: got[2] })
}

/// An `m × n` pattern matrix with `nnz` nonzeros generated on the GPU (as large as memory
/// allows: the test of transposes past 2³² nonzeros): rows of `nnz / m` entries (the first
/// `nnz % m` one longer), columns hashed from each entry's position and `seed`
/// ([`transpose_kernels::index64::gen_col`]; duplicates in a row may occur).
///
/// # Errors
/// [`Error::TooLarge`] for `m` or `n` outside `1..=MAX_DIM`; out of memory.
pub fn generate(gpu: &Gpu, m: u64, n: u64, nnz: u64, seed: u64) -> Result<DeviceCsr64<u8>> {
    let max = sptrans_matrix::device::MAX_DIM;
    for (what, v) in [("rows", m), ("cols", n)] {
        if v == 0 || v > max {
            return Err(Error::TooLarge { what, len: v, max });
        }
    }
    let mut parts = DeviceCsr64Parts::<u8>::alloc(gpu, m, nnz, false)?;
    launch::generate(gpu, &mut DeviceViewMut::of(&mut parts.ptr), &mut DeviceViewMut::of(&mut parts.idx), n, seed)?;
    // SAFETY: gen_ptr runs from 0 (r = 0) to nnz (r = m), nondecreasing; gen_col < n.
    Ok(unsafe { DeviceCsr64::from_parts_unchecked(m, n, parts) })
}
