#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

/// The runtime this crate is built on, re-exported so that one dependency is enough: the GPU
/// handle [`Gpu`], scratch ([`gpu_runtime::Scratch`]), and cudarc (`gpu_runtime::cudarc`).
pub use gpu_runtime;
pub use gpu_runtime::Gpu;

mod algorithm;
mod auto_sym;
pub mod baselines;
mod coo_chain;
mod cusparse;
pub mod dist;
mod error;
pub mod index64;
mod launch;
mod merge_trans;
mod radix_trans;
mod scan_trans;
pub mod serial;
mod sym_trans;
mod wide;

use gpu_histogram::Histogram;
use gpu_ptr2idx::Ptr2Idx;
use gpu_radix::RadixSort;
use gpu_runtime::{PtxModule, Scratch, ScratchBuf};
use gpu_scan::{Algorithm as ScanAlgorithm, Scanner};
use gpu_segsort::Segsort;
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
pub use sptrans_matrix::{AsDeviceCsrView, DeviceCsr64View, DeviceCsrPartsMut, DeviceCsrView, PendingCsrView};

pub use algorithm::{Algorithm, PatternHint};
pub use error::{Error, Result};
/// RadixTrans's default largest digit (the radix primitive's default).
pub use gpu_radix::DEFAULT_MAX_BITS as RADIX_DEFAULT_BITS;
pub use gpu_runtime::vendor::{cusparse_library, CUSPARSE_LIB_ENV};
/// The value payload the transposers move: 4 and 8 bytes beside the keys; 1, 2 and 16 bytes
/// beside the keys in RadixTrans (16 when its sort is one pass) and otherwise by a permutation
/// gathered at the end (`u8` also stands for pattern matrices, whose values are absent). It
/// lives in `gpu-runtime` so that every crate can use it.
pub use gpu_runtime::Payload;
pub use scan_trans::{scan_parts, SCAN_PARTS_A_OVER_B};
pub use transpose_kernels::{scatter_slot, sorted_ptr_range, sym_probe_row, sym_probe_rows, symmetric_slot, NT, SYM_PROBE_ENTRIES, SYM_PROBE_ROWS};

/// The embedded `transpose` PTX module (built from `kernels-rs/transpose`).
pub static MODULE: PtxModule = gpu_runtime::embed_module!("transpose");

/// A reusable transposition plan: loaded kernels, the primitives' plans, and one workspace
/// kept between calls (grown to the largest problem seen), or caller-lent [`Scratch`] through
/// [`Transposer::transpose_into_with`]. The primitives run on slices of that one workspace:
/// [`Transposer::workspace_bytes`] is everything a call needs beyond its input and output, and
/// [`Transposer::allocated_bytes`] everything the plan holds. All work is enqueued on the
/// [`Gpu`]'s stream.
pub struct Transposer {
    gpu: Gpu,
    k: launch::Kernels,
    ptr2idx: Ptr2Idx,
    hist: Histogram,
    scanner: Scanner<u32>,
    sort: Segsort,
    radix: RadixSort,
    parts: Option<u64>,
    own: ScratchBuf,
    chunk: u64,
    /// SymTrans's probe verdict (the flag's words) in page-locked host memory (allocated on
    /// first use): read while the GPU goes on with ptr2idx.
    verdict: Option<gpu_runtime::cudarc::driver::PinnedHostSlice<u32>>,
    /// A second stream for SymTrans's probe, beside ptr2idx (created on first use).
    side: Option<std::sync::Arc<gpu_runtime::cudarc::driver::CudaStream>>,
    /// What the caller said of the pattern ([`Transposer::set_pattern_hint`]).
    hint: PatternHint,
}

/// Sizes of one transposition.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    m: u64,
    n: u64,
    nnz: u64,
}

impl Transposer {
    /// Loads the kernels of this crate and of the primitives.
    ///
    /// # Errors
    /// [`Error::Runtime`] when a module cannot be loaded.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Ok(Self {
            gpu: gpu.clone(),
            k: launch::Kernels::load(gpu)?,
            ptr2idx: Ptr2Idx::new(gpu)?,
            hist: Histogram::new(gpu)?,
            scanner: Scanner::new(gpu, ScanAlgorithm::Auto)?,
            sort: Segsort::new(gpu)?,
            parts: None,
            radix: RadixSort::new(gpu)?,
            own: ScratchBuf::default(),
            chunk: index64::DEFAULT_CHUNK_NNZ,
            verdict: None,
            hint: PatternHint::Unknown,
            side: None,
        })
    }

    /// The GPU handle (and so the stream) it runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Tells the plan what is known of the pattern of the matrices it will transpose: with
    /// [`PatternHint::Symmetric`], `Auto` takes SymTrans for square matrices (one pass instead of
    /// three or four, about 2× RadixTrans), which **synchronizes the stream** (a pattern that is
    /// not symmetric after all goes to RadixTrans: correct, slower). The default,
    /// [`PatternHint::Unknown`], keeps every `Auto` call free of host synchronization.
    pub fn set_pattern_hint(&mut self, hint: PatternHint) {
        self.hint = hint;
    }

    /// The plan's pattern hint ([`Transposer::set_pattern_hint`]).
    pub fn pattern_hint(&self) -> PatternHint {
        self.hint
    }

    /// The algorithm `algo` runs as on this plan for an `m × n` matrix with `nnz` nonzeros of
    /// `value_bytes` bytes: `Auto` resolved with the plan's pattern hint
    /// ([`Algorithm::resolve_hinted`]), the others unchanged.
    pub fn resolve(&self, algo: Algorithm, m: u64, n: u64, nnz: u64, value_bytes: usize) -> Algorithm {
        algo.resolve_hinted(m, n, nnz, value_bytes, self.hint)
    }

    /// Overrides ScanTrans's partition count (`None`: [`scan_parts`]).
    pub fn set_scan_parts(&mut self, parts: Option<u64>) {
        self.parts = parts.map(|p| p.max(1));
    }

    /// RadixTrans's largest digit (1 to [`gpu_radix::MAX_BITS`]; `None`: [`RADIX_DEFAULT_BITS`]).
    pub fn set_radix_bits(&mut self, bits: Option<u32>) {
        self.radix.set_max_digit_bits(bits);
    }

    /// SymTrans's page-locked verdict (the flag's words), allocated on first use.
    fn verdict(&mut self) -> Result<&mut gpu_runtime::cudarc::driver::PinnedHostSlice<u32>> {
        if self.verdict.is_none() {
            // SAFETY: page-locked host memory for the flag's words; it is only read after a copy into it
            // (its event orders the read after the copy).
            let v = unsafe { self.gpu.context().alloc_pinned_with_flags::<u32>(transpose_kernels::SYM_FLAG_WORDS, 0) }
                .map_err(gpu_runtime::Error::driver("allocating SymTrans's page-locked verdict"))?;
            self.verdict = Some(v);
        }
        self.verdict.as_mut().ok_or(Error::Runtime(gpu_runtime::Error::Internal("SymTrans's verdict missing after allocation")))
    }

    /// SymTrans's side stream, created on first use.
    fn side_stream(&mut self) -> Result<std::sync::Arc<gpu_runtime::cudarc::driver::CudaStream>> {
        if self.side.is_none() {
            self.side = Some(self.gpu.stream().fork().map_err(gpu_runtime::Error::driver("creating SymTrans's side stream"))?);
        }
        self.side.clone().ok_or(Error::Runtime(gpu_runtime::Error::Internal("SymTrans's side stream missing after creation")))
    }

    /// The partition count ScanTrans uses for this shape.
    pub fn scan_parts_for(&self, nnz: u64, n: u64) -> u64 {
        self.parts.unwrap_or_else(|| scan_parts(nnz, n, self.gpu.props().sm_count))
    }

    /// Device bytes `algo` needs beyond the input and output for an `m × n` matrix with `nnz`
    /// nonzeros of `value_bytes` bytes (0 for pattern): this crate's temporaries and the
    /// primitives' scratch, all carved from one workspace.
    ///
    /// # Errors
    /// [`Error::TooLarge`] past 32-bit sizes.
    pub fn workspace_bytes(&mut self, algo: Algorithm, m: u64, n: u64, nnz: u64, value_bytes: usize) -> Result<u64> {
        let d = Dims { m, n, nnz };
        check_dims(d)?;
        if nnz == 0 {
            return Ok(0);
        }
        if self.device_sym(algo, d, value_bytes) {
            return Ok(auto_sym::workspace_bytes(self, d, value_bytes as u64));
        }
        let algo = self.resolve(algo, m, n, nnz, value_bytes);
        if wide::by_positions(&self.radix, algo, value_bytes, n) {
            // Positions (4 bytes) move instead, then one gather ([`wide`]).
            let inner = self.workspace_bytes(algo, m, n, nnz, 4)?;
            return Ok(wide::workspace_bytes(nnz, inner));
        }
        Ok(match algo {
            Algorithm::Serial | Algorithm::Auto => 0,
            Algorithm::ScanTrans => scan_trans::workspace_bytes(self, d)?,
            Algorithm::MergeTrans => merge_trans::workspace_bytes(self, d),
            Algorithm::CooChain => coo_chain::workspace_bytes(self, d),
            Algorithm::RadixTrans => radix_trans::workspace_bytes(&self.radix, d, value_bytes as u64),
            Algorithm::SymTrans => sym_trans::workspace_bytes(self, d, value_bytes as u64),
        })
    }

    /// Allocates the plan's workspace for `algo` on matrices up to this size now, so that later
    /// calls allocate nothing.
    ///
    /// # Errors
    /// As [`Transposer::workspace_bytes`], and out of memory.
    pub fn reserve(&mut self, algo: Algorithm, m: u64, n: u64, nnz: u64, value_bytes: usize) -> Result<()> {
        let bytes = self.workspace_bytes(algo, m, n, nnz, value_bytes)?;
        Ok(self.own.reserve(&self.gpu, bytes)?)
    }

    /// Device bytes the plan holds now: its one workspace (the primitives it uses hold none).
    pub fn allocated_bytes(&self) -> u64 {
        self.own.bytes()
            + self.ptr2idx.allocated_bytes()
            + self.hist.allocated_bytes()
            + self.scanner.allocated_bytes()
            + self.sort.allocated_bytes()
            + self.radix.allocated_bytes()
    }

    /// SymTrans's probe: `Ok(false)` proves that `a` is not a square matrix whose pattern is
    /// symmetric with rows sorted (it is not square, or a probed nonzero `(r, c)` has no mirror
    /// `(c, r)` found by [`symmetric_slot`]); `Ok(true)` says only that the probe found no such
    /// nonzero. It looks at the first [`SYM_PROBE_ENTRIES`] nonzeros of up to
    /// [`SYM_PROBE_ROWS`] rows spread over the matrix ([`sym_probe_row`]): one small launch,
    /// whatever the matrix's size. [`serial::sym_probe`] is its CPU model. `SymTrans` (and so
    /// `Auto` on square matrices under [`PatternHint::Symmetric`]) runs it first, and hands a
    /// matrix it refuses to RadixTrans without the full pass. Reads the verdict back:
    /// **synchronizes the stream**.
    ///
    /// # Errors
    /// [`Error::TooLarge`], runtime errors (out of memory for its 4 KiB flag).
    pub fn probe_symmetric<T: Payload>(&mut self, a: &impl AsDeviceCsrView<T>) -> Result<bool> {
        let a = a.csr_view();
        let d = dims(&a)?;
        if d.m != d.n {
            return Ok(false);
        }
        if d.nnz == 0 {
            return Ok(true);
        }
        let mut bad = self.gpu.alloc::<u32>(transpose_kernels::SYM_FLAG_WORDS)?;
        sym_trans::probe(self, &a, &mut gpu_runtime::DeviceViewMut::of(&mut bad), d)
    }

    /// Output buffers of the transposed shape for `a` (contents unspecified).
    ///
    /// # Errors
    /// Out of memory.
    pub fn alloc_output<T: Payload>(&self, a: &impl AsDeviceCsrView<T>) -> Result<DeviceCsrParts<T>> {
        let a = a.csr_view();
        Ok(DeviceCsrParts::alloc(&self.gpu, a.cols(), a.nnz(), a.vals().is_some())?)
    }

    /// Allocates the output for `a` and transposes into it.
    ///
    /// # Errors
    /// As [`Transposer::transpose_into`].
    pub fn transpose_new<T: Payload>(&mut self, algo: Algorithm, a: &impl AsDeviceCsrView<T>) -> Result<DeviceCsr<T>> {
        let out = self.alloc_output(a)?;
        self.transpose_into(algo, a, out)
    }

    /// Transposes `a` (`m × n`: a [`DeviceCsr`] or a borrowed [`DeviceCsrView`]) into the owned
    /// buffers `out` (pointer of `n + 1`, `nnz` indices, values present exactly when `a` has
    /// them; e.g. [`Transposer::alloc_output`], or a previous result's
    /// [`DeviceCsr::into_parts`]) and returns them as the `n × m` result, on the plan's own
    /// workspace. On error the buffers are dropped: no invalid matrix escapes. To write into
    /// borrowed buffers, see [`Transposer::transpose_view`].
    ///
    /// # Errors
    /// As [`Transposer::transpose_view`].
    pub fn transpose_into<T: Payload>(&mut self, algo: Algorithm, a: &impl AsDeviceCsrView<T>, mut out: DeviceCsrParts<T>) -> Result<DeviceCsr<T>> {
        let a = a.csr_view();
        self.transpose_view(algo, &a, &mut out.view_mut())?;
        // SAFETY: transpose_view wrote the CSR of the transpose of a valid `a` into `out`.
        Ok(unsafe { DeviceCsr::from_parts_unchecked(a.cols(), a.rows(), out) })
    }

    /// [`Transposer::transpose_into`] on caller-lent scratch of at least
    /// [`Transposer::workspace_bytes`] for this matrix and algorithm.
    ///
    /// # Errors
    /// As [`Transposer::transpose_into`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn transpose_into_with<T: Payload>(
        &mut self,
        algo: Algorithm,
        a: &impl AsDeviceCsrView<T>,
        mut out: DeviceCsrParts<T>,
        scratch: &mut Scratch<'_>,
    ) -> Result<DeviceCsr<T>> {
        let a = a.csr_view();
        self.transpose_view_with(algo, &a, &mut out.view_mut(), scratch)?;
        // SAFETY: transpose_view_with wrote the CSR of the transpose of a valid `a` into `out`.
        Ok(unsafe { DeviceCsr::from_parts_unchecked(a.cols(), a.rows(), out) })
    }

    /// Transposes the borrowed `a` (`m × n`) into the borrowed buffers `out` (pointer of `n + 1`,
    /// `nnz` indices, values present exactly when `a` has them), on the plan's own workspace:
    /// when it returns `Ok`, `out` holds the `n × m` CSR of `aᵀ` (the CSC of `a`), rows sorted
    /// inside every column, once the stream gets there. Enqueued on the GPU's stream without
    /// synchronizing, except `Serial` and `SymTrans` (so `Auto` on
    /// square matrices on a plan given [`PatternHint::Symmetric`]), which read back. On error
    /// `out`'s contents are unspecified.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for output buffers of the wrong size, [`Error::TooLarge`],
    /// [`Error::UnsupportedValue`], runtime errors ([`Error::is_out_of_memory`]).
    pub fn transpose_view<T: Payload>(&mut self, algo: Algorithm, a: &DeviceCsrView<'_, T>, out: &mut DeviceCsrPartsMut<'_, T>) -> Result<()> {
        let d = dims(a)?;
        let vb = if a.vals().is_some() { T::BYTES } else { 0 };
        let bytes = self.workspace_bytes(algo, d.m, d.n, d.nnz, vb)?;
        let gpu = self.gpu.clone();
        ScratchBuf::lend(self, |p| &mut p.own, &gpu, bytes, |t, s| t.transpose_view_with(algo, a, out, s))
    }

    /// [`Transposer::transpose_view`] on caller-lent scratch of at least
    /// [`Transposer::workspace_bytes`] for this matrix and algorithm.
    ///
    /// # Errors
    /// As [`Transposer::transpose_view`], and [`gpu_runtime::Error::ScratchTooSmall`].
    pub fn transpose_view_with<T: Payload>(
        &mut self,
        algo: Algorithm,
        a: &DeviceCsrView<'_, T>,
        out: &mut DeviceCsrPartsMut<'_, T>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        let d = check_call(a, out)?;
        let vb = if a.vals().is_some() { T::BYTES } else { 0 };
        if d.nnz > 0 && self.device_sym(algo, d, vb) {
            scratch.require(self.workspace_bytes(algo, d.m, d.n, d.nnz, vb)?)?;
            return auto_sym::run(self, a, out, d, scratch);
        }
        let algo = self.resolve(algo, d.m, d.n, d.nnz, vb);
        scratch.require(self.workspace_bytes(algo, d.m, d.n, d.nnz, vb)?)?;
        if algo == Algorithm::Serial {
            serial::run(self, a, out)
        } else if d.nnz == 0 {
            // Every algorithm's answer, without launching anything.
            Ok(self.gpu.memset_bytes(&mut out.ptr, 0)?)
        } else if wide::by_positions(&self.radix, algo, vb, d.n) {
            wide::run(self, algo, a, out, d, scratch)
        } else {
            self.run_algorithm(algo, a, out, d, scratch)
        }
    }
}

impl Transposer {
    /// Transposes a view whose structure check is still running on the GPU
    /// ([`DeviceCsrView::new_pending`]) into `out`, on lent scratch as
    /// [`Transposer::transpose_view_with`], then reads the check's verdict: **synchronizes the
    /// stream once**, at the end. RadixTrans and `Auto` without a symmetric hint stay inside
    /// their buffers whatever the row pointer and column indices hold, so they run while the
    /// check does and the check costs its kernels and one read-back, not a synchronization before
    /// the work; every other algorithm waits for the verdict first. On a malformed structure the
    /// error names its first bad position and `out`'s contents are unspecified.
    ///
    /// # Errors
    /// `Error::Matrix` with `BadPointers` or `IndexOutOfRange` for a malformed structure (before
    /// any other error of the same call); otherwise as [`Transposer::transpose_view_with`].
    pub fn transpose_pending_with<T: Payload>(
        &mut self,
        algo: Algorithm,
        a: PendingCsrView<'_, '_, T>,
        out: &mut DeviceCsrPartsMut<'_, T>,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        // SAFETY: only the sizes are read here, which `new_pending` checked.
        let (m, n, nnz, vb) = {
            let v = unsafe { a.unvalidated() };
            (v.rows(), v.cols(), v.nnz(), if v.vals().is_some() { T::BYTES } else { 0 })
        };
        if self.resolve(algo, m, n, nnz, vb) != Algorithm::RadixTrans {
            let v = a.wait(&self.gpu)?;
            return self.transpose_view_with(algo, &v, out, scratch);
        }
        // SAFETY: RadixTrans (and `Auto`'s device-decided SymTrans before it, `auto_sym`) stays
        // in bounds on any structure: ptr2idx clamps each tile's rows to the tile's positions
        // below nnz (a malformed pointer gives wrong rows, never a write past them); SymTrans's
        // probe and pass clamp every row range they search into 0..nnz and every column to
        // n - 1; the sort indexes by each key's digits, masked to the pass's bits; the column
        // pointer's kernels clamp every column they write to n (`sorted_ptr_range`) or copy n + 1
        // words; by positions (1-, 2- and 16-byte values) the gather reads the sorted
        // positions, a permutation of 0..nnz whatever the keys. The answer is then meaningless,
        // and the verdict below says so.
        let ran = self.transpose_view_with(algo, unsafe { a.unvalidated() }, out, scratch);
        a.wait(&self.gpu)?;
        ran
    }

    /// Whether `algo` on this matrix takes `Auto`'s device-decided SymTrans ([`auto_sym`]):
    /// `Auto` with no pattern hint on a square matrix whose values SymTrans moves and whose sort
    /// takes an odd number of passes.
    fn device_sym(&self, algo: Algorithm, d: Dims, value_bytes: usize) -> bool {
        algo == Algorithm::Auto && self.hint == PatternHint::Unknown && auto_sym::applies(self, d, value_bytes as u64)
    }

    /// Runs one resolved GPU algorithm on a non-empty matrix: values of 4 or 8 bytes or none;
    /// also 1, 2 and 16 bytes in RadixTrans ([`wide::by_positions`] says when); cuSPARSE takes
    /// every width itself.
    fn run_algorithm<T: Payload>(
        &mut self,
        algo: Algorithm,
        a: &DeviceCsrView<'_, T>,
        out: &mut DeviceCsrPartsMut<'_, T>,
        d: Dims,
        scratch: &mut Scratch<'_>,
    ) -> Result<()> {
        match algo {
            Algorithm::ScanTrans => scan_trans::run(self, a, out, d, scratch),
            Algorithm::MergeTrans => merge_trans::run(self, a, out, d, scratch),
            Algorithm::CooChain => coo_chain::run(self, a, out, d, scratch),
            Algorithm::RadixTrans => radix_trans::run(self, a, out, d, scratch),
            Algorithm::SymTrans => sym_trans::run(self, a, out, d, scratch),
            Algorithm::Serial | Algorithm::Auto => Err(Error::Runtime(gpu_runtime::Error::Internal("unresolved transposition algorithm"))),
        }
    }
}

/// The input's sizes (the lengths agree: `DeviceCsr` keeps them).
pub(crate) fn dims<T>(a: &DeviceCsrView<'_, T>) -> Result<Dims> {
    let d = Dims { m: a.rows(), n: a.cols(), nnz: a.nnz() };
    check_dims(d)?;
    Ok(d)
}

fn check_dims(d: Dims) -> Result<()> {
    let max = u32::MAX as u64 - 1;
    for (what, v) in [("rows", d.m), ("cols", d.n), ("nnz", d.nnz)] {
        if v > max {
            return Err(Error::TooLarge { what, len: v, max });
        }
    }
    Ok(())
}

/// The checks every transposition makes first: sizes, the output's shape and alignment, and a
/// value width the transposers move (1, 2, 4, 8 or 16 bytes).
pub(crate) fn check_call<T>(a: &DeviceCsrView<'_, T>, out: &DeviceCsrPartsMut<'_, T>) -> Result<Dims> {
    let d = dims(a)?;
    check_output(a, out, d)?;
    let bytes = std::mem::size_of::<T>();
    if a.vals().is_some() && !matches!(bytes, 1 | 2 | 4 | 8 | 16) {
        return Err(Error::UnsupportedValue { bytes });
    }
    Ok(d)
}

pub(crate) fn check_output<T>(a: &DeviceCsrView<'_, T>, out: &DeviceCsrPartsMut<'_, T>, d: Dims) -> Result<()> {
    out.check_aligned()?;
    let checks = [
        ("output pointer length", d.n + 1, out.ptr.len() as u64),
        ("output indices length", d.nnz, out.idx.len() as u64),
        ("output values present", a.vals().is_some() as u64, out.vals.is_some() as u64),
    ];
    for (what, expected, actual) in checks {
        if expected != actual {
            return Err(Error::LengthMismatch { what, expected, got: actual });
        }
    }
    if let Some(v) = &out.vals {
        if v.len() as u64 != d.nnz {
            return Err(Error::LengthMismatch { what: "output values length", expected: d.nnz, got: v.len() as u64 });
        }
    }
    Ok(())
}
