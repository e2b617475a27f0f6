//! A CSR matrix spread over several GPUs by blocks of rows: [`DistCsr`].
//!
//! Block `g` (rows `row_starts[g] .. row_starts[g + 1]`, global column indices) lives on GPU
//! `g` as a [`DeviceCsr`] of its own rows. [`DistCsr::scatter`] cuts a host matrix into blocks of
//! nearly equal nonzeros; [`DistCsr::gather`] stacks the blocks back. With one process per GPU
//! (`gpu_dist::Comms::from_env`, crate `gpu-dist`) a process holds only its own blocks
//! ([`DistCsr::scatter_ranks`], [`DistCsr::from_local_blocks`]): [`DistCsr::first_block`] says
//! which, and the row starts still cover every rank. The distributed
//! transpose (`gpu_transpose::dist`) returns the transpose as a `DistCsr` too: its row blocks are
//! the transpose's, cut by nonzeros likewise. [`DistCsrView`] is the same over borrowed blocks
//! (the caller's device memory, [`DistCsrView::from_views`]); the algorithms take either
//! ([`AsDistCsrView`]).
use gpu_runtime::{AnyBits, Gpu};

use crate::device::DeviceCsr;
use crate::view::DeviceCsrView;
use crate::{Csr, Error, Index, Result, Value};

/// The accessors [`DistCsr`] and [`DistCsrView`] share (fields `rows`, `cols`, `row_starts`,
/// `first`, `blocks`).
macro_rules! shape_accessors {
    () => {
        /// The index of the first block held here (0 when this process holds every block).
        pub fn first_block(&self) -> usize {
            self.first
        }

        /// Whether every block is held here.
        pub fn is_whole(&self) -> bool {
            self.first == 0 && self.blocks.len() + 1 == self.row_starts.len()
        }

        /// Rows of the whole matrix.
        pub fn rows(&self) -> u64 {
            self.rows
        }

        /// Columns of the whole matrix.
        pub fn cols(&self) -> u64 {
            self.cols
        }

        /// The first row of each block, and the row count last.
        pub fn row_starts(&self) -> &[u64] {
            &self.row_starts
        }
    };
}

/// A `rows × cols` CSR matrix in row blocks, block `g` on GPU `g` (see the module docs).
///
/// Invariants, kept by the constructors: `row_starts` has one more entry than there are blocks
/// in all (held here or not), starts at 0, never decreases and ends at `rows`; the blocks held
/// are `first .. first + blocks.len()`, block `g` a valid [`DeviceCsr`] of `row_starts[g + 1] −
/// row_starts[g]` rows and `cols` columns; all blocks held have values or none.
pub struct DistCsr<T: AnyBits> {
    rows: u64,
    cols: u64,
    row_starts: Vec<u64>,
    first: usize,
    blocks: Vec<DeviceCsr<T>>,
}

/// The checks of a matrix cut at `row_starts` whose blocks `first ..` have the shapes `blocks`
/// (rows, columns, whether they hold values): what [`DistCsr::from_local_blocks`] and
/// [`DistCsrView::from_views`] promise.
fn check_blocks(rows: u64, cols: u64, row_starts: &[u64], first: usize, blocks: impl ExactSizeIterator<Item = (u64, u64, bool)>) -> Result<()> {
    if row_starts.len() < first + blocks.len() + 1 {
        return Err(Error::LengthMismatch { what: "row starts", expected: (first + blocks.len()) as u64 + 1, got: row_starts.len() as u64 });
    }
    if row_starts[0] != 0 || row_starts[row_starts.len() - 1] != rows {
        return Err(Error::BadPointers { index: 0, reason: format!("row starts must run from 0 to {rows}") });
    }
    if let Some(g) = row_starts.windows(2).position(|w| w[1] < w[0]) {
        return Err(Error::BadPointers { index: g as u64 + 1, reason: "row starts decrease".into() });
    }
    let mut values = None;
    for (l, (b_rows, b_cols, b_vals)) in blocks.enumerate() {
        let g = first + l;
        let (r0, r1) = (row_starts[g], row_starts[g + 1]);
        if b_rows != r1 - r0 {
            return Err(Error::LengthMismatch { what: "block rows", expected: r1 - r0, got: b_rows });
        }
        if b_cols != cols {
            return Err(Error::LengthMismatch { what: "block columns", expected: cols, got: b_cols });
        }
        if *values.get_or_insert(b_vals) != b_vals {
            return Err(Error::InvalidParameter { what: "blocks", msg: "some have values and others not".into() });
        }
    }
    Ok(())
}

/// A distributed CSR over borrowed blocks ([`DeviceCsrView`]s of the caller's memory, one per
/// rank held here), with the same layout and promises as [`DistCsr`], which lends one
/// ([`DistCsr::view`]). The distributed algorithms take either ([`AsDistCsrView`]).
pub struct DistCsrView<'a, T> {
    rows: u64,
    cols: u64,
    row_starts: Vec<u64>,
    first: usize,
    blocks: Vec<DeviceCsrView<'a, T>>,
}

impl<T> Clone for DistCsrView<'_, T> {
    fn clone(&self) -> Self {
        Self { rows: self.rows, cols: self.cols, row_starts: self.row_starts.clone(), first: self.first, blocks: self.blocks.clone() }
    }
}

impl<'a, T> DistCsrView<'a, T> {
    /// The blocks `first .. first + blocks.len()` of a `rows × cols` matrix cut at `row_starts`,
    /// each a view of its rows on its rank's GPU (global column indices): the caller's own
    /// device memory, not copied.
    ///
    /// # Errors
    /// As [`DistCsr::from_local_blocks`].
    pub fn from_views(rows: u64, cols: u64, row_starts: Vec<u64>, first: usize, blocks: Vec<DeviceCsrView<'a, T>>) -> Result<Self> {
        check_blocks(rows, cols, &row_starts, first, blocks.iter().map(|b| (b.rows(), b.cols(), b.vals().is_some())))?;
        Ok(Self { rows, cols, row_starts, first, blocks })
    }

    shape_accessors!();

    /// Nonzeros of the blocks held here.
    pub fn nnz(&self) -> u64 {
        self.blocks.iter().map(DeviceCsrView::nnz).sum()
    }

    /// The blocks held here, from [`DistCsrView::first_block`] on.
    pub fn blocks(&self) -> &[DeviceCsrView<'a, T>] {
        &self.blocks
    }
}

/// A distributed matrix the distributed algorithms can read: a [`DistCsr`] or a
/// [`DistCsrView`].
pub trait AsDistCsrView<T> {
    /// The borrowed view.
    fn dist_view(&self) -> DistCsrView<'_, T>;
}

impl<T> AsDistCsrView<T> for DistCsrView<'_, T> {
    fn dist_view(&self) -> DistCsrView<'_, T> {
        self.clone()
    }
}

impl<T: AnyBits + gpu_runtime::cudarc::driver::DeviceRepr> AsDistCsrView<T> for DistCsr<T> {
    fn dist_view(&self) -> DistCsrView<'_, T> {
        self.view()
    }
}

/// The row starts of `parts` blocks of `ptr`'s rows with nearly equal nonzeros: block `g` starts
/// at the first row whose offset reaches `g · nnz / parts` (`parts + 1` entries, from 0 to the
/// row count). Rows are never split, so a very long row makes its block heavier.
///
/// ```
/// // Four rows of 4 nonzeros in two blocks: rows 0..2 and 2..4.
/// assert_eq!(sptrans_matrix::dist::balanced_starts(&[0u64, 4, 8, 12, 16], 2), vec![0, 2, 4]);
/// // Rows of 4, 0, 4, 4: block 1 starts at the first row at or past 6 nonzeros, row 3.
/// assert_eq!(sptrans_matrix::dist::balanced_starts(&[0u64, 4, 4, 8, 12], 2), vec![0, 3, 4]);
/// ```
pub fn balanced_starts<I: Index>(ptr: &[I], parts: usize) -> Vec<u64> {
    let rows = ptr.len().saturating_sub(1);
    let nnz = ptr.last().map_or(0, |p| p.to_u64()) as u128;
    let parts128 = parts.max(1) as u128;
    // `offset < g · nnz / parts`, compared exactly (no rounding of the target).
    let mut starts: Vec<u64> = (0..parts).map(|g| ptr[..rows].partition_point(|o| o.to_u64() as u128 * parts128 < nnz * g as u128) as u64).collect();
    starts.push(rows as u64);
    starts
}

/// `parts + 1` starts of `parts` nearly equal ranges of `len` (the first ones one longer): how
/// the distributed products split a non-square matrix's columns (`x` of `y = A x`).
///
/// ```
/// assert_eq!(sptrans_matrix::dist::even_starts(10, 4), vec![0, 3, 6, 8, 10]);
/// assert_eq!(sptrans_matrix::dist::even_starts(2, 4), vec![0, 1, 2, 2, 2]);
/// assert_eq!(sptrans_matrix::dist::even_starts(0, 1), vec![0, 0]);
/// ```
pub fn even_starts(len: u64, parts: usize) -> Vec<u64> {
    let parts = parts.max(1);
    let (q, rem) = (len / parts as u64, len % parts as u64);
    (0..=parts as u64).map(|r| r * q + r.min(rem)).collect()
}

impl<T: AnyBits> DistCsr<T> {
    /// Assembles blocks already on their GPUs (every block: [`DistCsr::from_local_blocks`] from
    /// block 0).
    ///
    /// # Errors
    /// As [`DistCsr::from_local_blocks`].
    pub fn from_blocks(rows: u64, cols: u64, row_starts: Vec<u64>, blocks: Vec<DeviceCsr<T>>) -> Result<Self> {
        if row_starts.len() != blocks.len() + 1 {
            return Err(Error::LengthMismatch { what: "row starts", expected: blocks.len() as u64 + 1, got: row_starts.len() as u64 });
        }
        Self::from_local_blocks(rows, cols, row_starts, 0, blocks)
    }

    /// Assembles the blocks `first .. first + blocks.len()` of a matrix cut at `row_starts` (one
    /// more entry than there are blocks in all), already on their GPUs: this process's share
    /// when each process drives its own GPUs.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the blocks run past the row starts, or a block's rows or
    /// columns disagree with them; [`Error::BadPointers`] for row starts that do not run from 0
    /// to `rows` without decreasing; [`Error::InvalidParameter`] when some blocks have values and
    /// others not.
    pub fn from_local_blocks(rows: u64, cols: u64, row_starts: Vec<u64>, first: usize, blocks: Vec<DeviceCsr<T>>) -> Result<Self> {
        check_blocks(rows, cols, &row_starts, first, blocks.iter().map(|b| (b.rows(), b.cols(), b.vals().is_some())))?;
        Ok(Self { rows, cols, row_starts, first, blocks })
    }

    shape_accessors!();

    /// Nonzeros of the blocks held here (of the whole matrix when [`DistCsr::is_whole`]).
    pub fn nnz(&self) -> u64 {
        self.blocks.iter().map(DeviceCsr::nnz).sum()
    }

    /// The blocks held here, from [`DistCsr::first_block`] on (block `g` on the GPU of rank `g`).
    pub fn blocks(&self) -> &[DeviceCsr<T>] {
        &self.blocks
    }

    /// Gives the blocks back.
    pub fn into_blocks(self) -> Vec<DeviceCsr<T>> {
        self.blocks
    }

    /// The matrix as a [`DistCsrView`] of its blocks.
    pub fn view(&self) -> DistCsrView<'_, T>
    where
        T: gpu_runtime::cudarc::driver::DeviceRepr,
    {
        DistCsrView {
            rows: self.rows,
            cols: self.cols,
            row_starts: self.row_starts.clone(),
            first: self.first,
            blocks: self.blocks.iter().map(DeviceCsr::view).collect(),
        }
    }
}

impl<T: Value + AnyBits> DistCsr<T> {
    /// Cuts `a` into `gpus.len()` row blocks of nearly equal nonzeros ([`balanced_starts`]) and
    /// uploads block `g` to `gpus[g]`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for no GPUs; device errors (out of memory).
    pub fn scatter(gpus: &[Gpu], a: &Csr<u32, T>) -> Result<Self> {
        Self::scatter_ranks(gpus, 0, gpus.len(), a)
    }

    /// This process's share of `a` cut into `world` row blocks of nearly equal nonzeros: blocks
    /// `first .. first + gpus.len()`, block `first + l` uploaded to `gpus[l]` (every process of
    /// a launch reads the same `a` and keeps its own rows; `Comms::first_rank` and
    /// `Comms::world` give `first` and `world`).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for no GPUs or blocks past `world`; device errors (out of
    /// memory).
    pub fn scatter_ranks(gpus: &[Gpu], first: usize, world: usize, a: &Csr<u32, T>) -> Result<Self> {
        check_ranks(gpus, first, world)?;
        let starts = balanced_starts(a.ptr(), world);
        let blocks = upload_blocks(gpus, &starts, first, a, 0)?;
        Self::from_local_blocks(a.rows(), a.cols(), starts, first, blocks)
    }

    /// This process's share of the matrix in the file at `path` (Matrix Market, compressed or
    /// not, or SciPy `.npz`), cut into `world` row blocks of nearly equal entries: blocks `first
    /// .. first + gpus.len()`, block `first + l` on `gpus[l]`. The file is read twice, streaming:
    /// once counting each row's entries (`mm::Input::row_counts`, `8 · rows` bytes), once keeping
    /// the share's rows (`mm::Input::read_csr_rows`), so a host holds only its share, and the
    /// whole matrix may pass `u32::MAX` entries (each block may not). `limit` bounds the host
    /// memory of the share.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for standard input (`-`: it cannot be read twice), no GPUs or
    /// blocks past `world`; the reader's errors (with their line numbers); [`Error::TooLarge`]
    /// for a block past 32-bit sizes; device errors.
    pub fn read_ranks(path: &std::path::Path, gpus: &[Gpu], first: usize, world: usize, limit: Option<u64>) -> Result<Self> {
        if path.as_os_str() == "-" {
            return Err(Error::InvalidParameter {
                what: "input",
                msg: "a distributed read takes a file (it is read twice), not standard input".into(),
            });
        }
        check_ranks(gpus, first, world)?;
        let (rows, cols, counts) = crate::mm::Input::open(path)?.row_counts()?;
        let mut ptr = Vec::with_capacity(counts.len() + 1);
        ptr.push(0u64);
        for c in &counts {
            ptr.push(ptr[ptr.len() - 1] + c);
        }
        drop(counts);
        let starts = balanced_starts(&ptr, world);
        drop(ptr);
        let (r0, r1) = (starts[first], starts[first + gpus.len()]);
        let share: Csr<u32, T> = crate::mm::Input::open(path)?.read_csr_rows(r0, r1, limit)?;
        let blocks = upload_blocks(gpus, &starts, first, &share, r0)?;
        Self::from_local_blocks(rows, cols, starts, first, blocks)
    }

    /// Downloads every block (from `gpus[g]`) and stacks them into one host matrix.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when this process holds only some of the blocks;
    /// [`Error::LengthMismatch`] for a GPU list of another length; device errors;
    /// [`Error::TooLarge`] past 32-bit sizes.
    pub fn gather(&self, gpus: &[Gpu]) -> Result<Csr<u32, T>> {
        if !self.is_whole() {
            return Err(Error::InvalidParameter { what: "distributed matrix", msg: "this process holds only some of its blocks".into() });
        }
        if gpus.len() != self.blocks.len() {
            return Err(Error::LengthMismatch { what: "GPUs", expected: self.blocks.len() as u64, got: gpus.len() as u64 });
        }
        let nnz = self.nnz();
        if nnz > u32::MAX as u64 {
            return Err(Error::TooLarge { what: "nonzeros of a gathered matrix", len: nnz, max: u32::MAX as u64 });
        }
        let (mut ptr, mut idx, mut vals) = (vec![0u32], Vec::with_capacity(nnz as usize), Vec::with_capacity(nnz as usize));
        for (b, gpu) in self.blocks.iter().zip(gpus) {
            let h = b.download(gpu)?;
            let base = idx.len() as u32;
            ptr.extend(h.ptr()[1..].iter().map(|&p| p + base));
            idx.extend_from_slice(h.idx());
            vals.extend_from_slice(h.vals());
        }
        Csr::try_new(self.rows, self.cols, ptr, idx, vals)
    }
}

/// Blocks `first .. first + gpus.len()` of a matrix cut at `starts`, uploaded to `gpus`, from
/// `share`: the matrix's rows from `r0` on (the whole matrix with `r0 = 0`).
fn upload_blocks<T: Value + AnyBits>(gpus: &[Gpu], starts: &[u64], first: usize, share: &Csr<u32, T>, r0: u64) -> Result<Vec<DeviceCsr<T>>> {
    let mut blocks = Vec::with_capacity(gpus.len());
    for (l, gpu) in gpus.iter().enumerate() {
        let (b0, b1) = ((starts[first + l] - r0) as usize, (starts[first + l + 1] - r0) as usize);
        let (k0, k1) = (share.ptr()[b0] as usize, share.ptr()[b1] as usize);
        let ptr: Vec<u32> = share.ptr()[b0..=b1].iter().map(|&p| p - k0 as u32).collect();
        let block = Csr::try_new((b1 - b0) as u64, share.cols(), ptr, share.idx()[k0..k1].to_vec(), share.vals()[k0..k1].to_vec())?;
        blocks.push(DeviceCsr::upload(gpu, &block)?);
    }
    Ok(blocks)
}

/// [`Error::InvalidParameter`] unless blocks `first .. first + gpus.len()` are at least one and
/// within `world`.
fn check_ranks(gpus: &[Gpu], first: usize, world: usize) -> Result<()> {
    if gpus.is_empty() || first + gpus.len() > world {
        return Err(Error::InvalidParameter {
            what: "GPUs",
            msg: format!("blocks {first} .. {} of {world}: at least one, within the world", first + gpus.len()),
        });
    }
    Ok(())
}
