//! The kernels of the `transpose` module and the only `unsafe` launches of them, with their grid
//! sizing. Arguments arrive as views (typed, their lengths known) and pass to the launch builder
//! as views; the only raw addresses formed here are the null value pointers of pattern matrices.
use std::sync::Arc;

use gpu_runtime::cudarc::driver::{CudaStream, LaunchConfig};
use gpu_runtime::{grid_1d, DeviceView, DeviceViewMut, Gpu, Kernel, Payload};

use crate::{Error, Result, MODULE, NT};

/// The kernels of the `transpose` module, loaded once per plan.
pub(crate) struct Kernels {
    iota: Kernel,
    sorted_ptr: Kernel,
    scatter: [Kernel; 2],
    gather: [Kernel; 2],
    /// `transpose_symmetric_v{4,8}` (SymTrans).
    symmetric: [Kernel; 2],
    /// `transpose_symmetric_probe` (SymTrans's probe).
    probe: Kernel,
    /// `transpose_sym_gate`, `transpose_sym_verdict` and `transpose_auto_ptr` (`Auto`'s
    /// device-decided SymTrans).
    gate: Kernel,
    verdict: Kernel,
    auto_ptr: Kernel,
    /// `transpose_permute_v{1,2,16}` (values of other widths, `wide`).
    permute: [Kernel; 3],
    chunk_rows: Kernel,
    /// `transpose_dist_rel_ptr` and `transpose_index64_chunk_ptr` (32- and 64-bit pointers).
    chunk_ptr: [Kernel; 2],
    add_ptr: Kernel,
    advance: Kernel,
    /// `transpose_index64_place_v{1,2,4,8,16}`.
    place: [Kernel; 5],
    /// `transpose_dist_gather_v{1,2,4,8,16}`.
    dist_gather: [Kernel; 5],
    dist_sample_ptr: Kernel,
    dist_sum_ptr: Kernel,
}

impl Kernels {
    pub(crate) fn load(gpu: &Gpu) -> Result<Self> {
        let k = |name| gpu.kernel(&MODULE, name);
        Ok(Self {
            iota: k("transpose_iota")?,
            sorted_ptr: k("transpose_sorted_ptr")?,
            scatter: [k("transpose_scatter_v4")?, k("transpose_scatter_v8")?],
            gather: [k("transpose_gather_v4")?, k("transpose_gather_v8")?],
            symmetric: [k("transpose_symmetric_v4")?, k("transpose_symmetric_v8")?],
            probe: k("transpose_symmetric_probe")?,
            gate: k("transpose_sym_gate")?,
            verdict: k("transpose_sym_verdict")?,
            auto_ptr: k("transpose_auto_ptr")?,
            permute: [k("transpose_permute_v1")?, k("transpose_permute_v2")?, k("transpose_permute_v16")?],
            chunk_rows: k("transpose_index64_chunk_rows")?,
            chunk_ptr: [k("transpose_dist_rel_ptr")?, k("transpose_index64_chunk_ptr")?],
            add_ptr: k("transpose_index64_add_ptr")?,
            advance: k("transpose_index64_advance")?,
            place: [
                k("transpose_index64_place_v1")?,
                k("transpose_index64_place_v2")?,
                k("transpose_index64_place_v4")?,
                k("transpose_index64_place_v8")?,
                k("transpose_index64_place_v16")?,
            ],
            dist_gather: [
                k("transpose_dist_gather_v1")?,
                k("transpose_dist_gather_v2")?,
                k("transpose_dist_gather_v4")?,
                k("transpose_dist_gather_v8")?,
                k("transpose_dist_gather_v16")?,
            ],
            dist_sample_ptr: k("transpose_dist_sample_ptr")?,
            dist_sum_ptr: k("transpose_dist_sum_ptr")?,
        })
    }
}

/// A 1-D grid for `items` with up to 16 blocks per multiprocessor.
pub(crate) fn grid(sms: u32, items: u64) -> LaunchConfig {
    grid_1d(items, NT, NT as u64 * 4, sms.max(1) * 16)
}

fn grid_of(gpu: &Gpu, items: u64) -> LaunchConfig {
    grid(gpu.props().sm_count, items)
}

/// Input and output values of a launch: the kernel variant (0: 4-byte values or none, 1: 8-byte)
/// and the two addresses, null for a pattern matrix (no values on either side).
fn values<T: Payload>(vals: Option<(&DeviceView<'_, T>, &mut DeviceViewMut<'_, T>)>) -> (usize, u64, u64) {
    match vals {
        Some((v, o)) => (usize::from(T::BYTES == 8), v.addr(), o.addr()),
        None => (0, 0, 0),
    }
}

/// The place kernel of a value width (pattern matrices use the 4-byte one without values).
pub(crate) fn place_variant(bytes: usize) -> Result<usize> {
    match bytes {
        0 | 4 => Ok(2),
        1 => Ok(0),
        2 => Ok(1),
        8 => Ok(3),
        16 => Ok(4),
        _ => Err(Error::UnsupportedValue { bytes }),
    }
}

/// `perm[i] = i` for every word of `perm`.
pub(crate) fn iota(gpu: &Gpu, k: &Kernels, perm: &mut DeviceViewMut<'_, u32>) -> Result<()> {
    let n = perm.len() as u64;
    // SAFETY: transpose_iota(perm, nnz): writes perm[0..nnz], the view's words.
    unsafe { k.iota.args(gpu.stream()).arg(&mut *perm).arg(&n).launch(grid_of(gpu, n))? };
    Ok(())
}

/// The column pointer (`n + 1` words into `ptr`) of the sorted column indices `keys`, by
/// boundary detection (`transpose_sorted_ptr`).
///
/// # Safety
/// `keys` is sorted with every key `< n`; `ptr` holds `n + 1` words.
pub(crate) unsafe fn sorted_ptr(gpu: &Gpu, k: &Kernels, keys: &DeviceView<'_, u32>, n: u64, ptr: &mut DeviceViewMut<'_, u32>) -> Result<()> {
    let nnz = keys.len() as u64;
    // SAFETY: transpose_sorted_ptr(keys, nnz, n, ptr): the caller's contract.
    unsafe { k.sorted_ptr.args(gpu.stream()).arg(keys).arg(&nnz).arg(&n).arg(&mut *ptr).launch(grid_of(gpu, nnz))? };
    Ok(())
}

/// ScanTrans's inputs to its scatter: each nonzero's column and row, the column pointer, the
/// partitioned histogram (scanned) and each nonzero's rank within its partition and column.
pub(crate) struct ScatterIn<'v> {
    pub cols: &'v DeviceView<'v, u32>,
    pub rows: DeviceView<'v, u32>,
    pub colptr: DeviceView<'v, u32>,
    pub table: DeviceView<'v, u32>,
    pub intra: DeviceView<'v, u32>,
}

/// ScanTrans's scatter (`transpose_scatter_v{4,8}`): each of the `cols.len()` nonzeros to its
/// slot `colptr[c] + table[part][c] + intra` of `out_rows` (and the values alike), `chunk`
/// nonzeros a partition, `n` columns.
///
/// # Safety
/// Every input holds `nnz = cols.len()` items except `colptr` (`n + 1` words) and `table`
/// (`(parts + 1) · n` words, scanned by the partitioned histogram of these columns with this
/// `chunk`); columns `< n`; so every slot is `< nnz` and distinct. The outputs hold `nnz` items.
pub(crate) unsafe fn scatter<T: Payload>(
    gpu: &Gpu,
    k: &Kernels,
    n: u64,
    chunk: u64,
    input: ScatterIn<'_>,
    vals: Option<(&DeviceView<'_, T>, &mut DeviceViewMut<'_, T>)>,
    out_rows: &mut DeviceViewMut<'_, u32>,
) -> Result<()> {
    let nnz = input.cols.len() as u64;
    let (v, vals, out_vals) = values(vals);
    // SAFETY: transpose_scatter(nnz, n, chunk, cols, rows, vals, colptr, inter, intra, out_rows,
    // out_vals): the caller's contract.
    unsafe {
        k.scatter[v]
            .args(gpu.stream())
            .arg(&nnz)
            .arg(&n)
            .arg(&chunk)
            .arg(input.cols)
            .arg(&input.rows)
            .arg(&vals)
            .arg(&input.colptr)
            .arg(&input.table)
            .arg(&input.intra)
            .arg(&mut *out_rows)
            .arg(&out_vals)
            .launch(grid_of(gpu, nnz))?
    };
    Ok(())
}

/// `out_rows[k] = rows[perm[k]]` and the values alike (`transpose_gather_v{4,8}`).
///
/// # Safety
/// `perm` is a permutation of `0..nnz` (`nnz = perm.len()`); `rows`, the values and the outputs
/// hold `nnz` items.
pub(crate) unsafe fn gather<T: Payload>(
    gpu: &Gpu,
    k: &Kernels,
    perm: &DeviceView<'_, u32>,
    rows: &DeviceView<'_, u32>,
    vals: Option<(&DeviceView<'_, T>, &mut DeviceViewMut<'_, T>)>,
    out_rows: &mut DeviceViewMut<'_, u32>,
) -> Result<()> {
    let nnz = perm.len() as u64;
    let (v, vals, out_vals) = values(vals);
    // SAFETY: transpose_gather(nnz, perm, rows, vals, out_rows, out_vals): the caller's contract.
    unsafe { k.gather[v].args(gpu.stream()).arg(&nnz).arg(perm).arg(rows).arg(&vals).arg(&mut *out_rows).arg(&out_vals).launch(grid_of(gpu, nnz))? };
    Ok(())
}

/// SymTrans's probe (`transpose_symmetric_probe`) of the square matrix `(ptr, idx)` of `n` rows
/// on `stream`: raises the flag words `bad` when a probed nonzero has no mirror.
///
/// # Safety
/// A valid square CSR (pointer of `n + 1` words from 0 to `nnz`, columns `< n`), `n > 0`; `bad`
/// holds [`transpose_kernels::SYM_FLAG_WORDS`] words.
pub(crate) unsafe fn probe(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    n: u64,
    ptr: &DeviceView<'_, u32>,
    idx: &DeviceView<'_, u32>,
    bad: &mut DeviceViewMut<'_, u32>,
) -> Result<()> {
    let threads = transpose_kernels::SYM_PROBE_ENTRIES * transpose_kernels::sym_probe_rows(n);
    let nnz = idx.len() as u64;
    // SAFETY: transpose_symmetric_probe(n, nnz, ptr, idx, bad): the caller's contract; blocks of
    // NT threads (whole warps).
    unsafe { k.probe.args(stream).arg(&n).arg(&nnz).arg(ptr).arg(idx).arg(&mut *bad).launch(grid_1d(threads, NT, NT as u64, u32::MAX))? };
    Ok(())
}

/// SymTrans's pass (`transpose_symmetric_v{4,8}`): `out` gets the pointer and indices of the
/// square matrix `(ptr, idx)` and each value at its mirror's place; `rows` holds each nonzero's
/// row; the flag words `bad` are raised when the pattern is not symmetric.
///
/// # Safety
/// A square matrix's pointer of `n + 1 >= 2` words and `nnz = idx.len()` indices (any contents:
/// the kernel clamps what it searches); `rows` `nnz` words; outputs of `n + 1` (unless `None`)
/// and `nnz` words (values when present, `nnz` items); `bad` the zeroed flag's words.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn symmetric<T: Payload>(
    gpu: &Gpu,
    k: &Kernels,
    n: u64,
    input: (&DeviceView<'_, u32>, &DeviceView<'_, u32>, &DeviceView<'_, u32>),
    vals: Option<(&DeviceView<'_, T>, &mut DeviceViewMut<'_, T>)>,
    out_ptr: Option<&mut DeviceViewMut<'_, u32>>,
    out_idx: &mut DeviceViewMut<'_, u32>,
    bad: &mut DeviceViewMut<'_, u32>,
) -> Result<()> {
    let (ptr, idx, rows) = input;
    let nnz = idx.len() as u64;
    let (v, vals, out_vals) = values(vals);
    let stream = gpu.stream().clone();
    let (op, _op) = gpu_runtime::ptr_mut_or_null(out_ptr, &stream);
    // SAFETY: transpose_symmetric_v{4,8}(n, nnz, ptr, idx, rows, vals, out_ptr, out_idx,
    // out_vals, bad): the caller's contract.
    unsafe {
        k.symmetric[v]
            .args(gpu.stream())
            .arg(&n)
            .arg(&nnz)
            .arg(ptr)
            .arg(idx)
            .arg(rows)
            .arg(&vals)
            .arg(&op)
            .arg(&mut *out_idx)
            .arg(&out_vals)
            .arg(&mut *bad)
            .launch(grid_of(gpu, nnz.max(n + 1)))?
    };
    Ok(())
}

/// One block of one warp (SymTrans's gate and verdict).
const ONE_WARP: LaunchConfig = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };

/// `Auto`'s gate after SymTrans's probe (`transpose_sym_gate`): raises the flag `bad` when the
/// probe found the mirrors scattered.
///
/// # Safety
/// `bad` holds [`transpose_kernels::SYM_FLAG_WORDS`] words, the probe's.
pub(crate) unsafe fn gate(gpu: &Gpu, k: &Kernels, bad: &mut DeviceViewMut<'_, u32>) -> Result<()> {
    // SAFETY: transpose_sym_gate(bad): the caller's contract; one warp.
    unsafe { k.gate.args(gpu.stream()).arg(&mut *bad).launch(ONE_WARP)? };
    Ok(())
}

/// SymTrans's verdict as one word (`transpose_sym_verdict`): `verdict[0]` = 1 when the flag
/// `bad` is raised, else 0.
///
/// # Safety
/// `bad` holds [`transpose_kernels::SYM_FLAG_WORDS`] words; `verdict` at least one.
pub(crate) unsafe fn verdict(gpu: &Gpu, k: &Kernels, bad: &DeviceView<'_, u32>, verdict: &mut DeviceViewMut<'_, u32>) -> Result<()> {
    // SAFETY: transpose_sym_verdict(bad, verdict): the caller's contract; one warp.
    unsafe { k.verdict.args(gpu.stream()).arg(bad).arg(&mut *verdict).launch(ONE_WARP)? };
    Ok(())
}

/// `Auto`'s column pointer (`transpose_auto_ptr`): from the sorted `keys` when `verdict[0]` is
/// not 0, else a copy of `in_ptr`.
///
/// # Safety
/// `verdict` holds at least one word; `in_ptr` and `ptr` `n + 1`.
pub(crate) unsafe fn auto_ptr(
    gpu: &Gpu,
    k: &Kernels,
    verdict: &DeviceView<'_, u32>,
    keys: &DeviceView<'_, u32>,
    in_ptr: &DeviceView<'_, u32>,
    ptr: &mut DeviceViewMut<'_, u32>,
) -> Result<()> {
    let (nnz, n) = (keys.len() as u64, (ptr.len() as u64).saturating_sub(1));
    // SAFETY: transpose_auto_ptr(verdict, keys, nnz, n, in_ptr, ptr): the caller's contract.
    unsafe {
        k.auto_ptr.args(gpu.stream()).arg(verdict).arg(keys).arg(&nnz).arg(&n).arg(in_ptr).arg(&mut *ptr).launch(grid_of(gpu, nnz.max(n + 1)))?
    };
    Ok(())
}

/// `out[k] = vals[perm[k]]` for values of 1, 2 or 16 bytes (`transpose_permute_v{1,2,16}`).
///
/// # Safety
/// `perm` is a permutation of `0..nnz` (`nnz = perm.len()`); `vals` and `out` hold `nnz` items.
pub(crate) unsafe fn permute<T: Payload>(
    gpu: &Gpu,
    k: &Kernels,
    perm: &DeviceView<'_, u32>,
    vals: &DeviceView<'_, T>,
    out: &mut DeviceViewMut<'_, T>,
) -> Result<()> {
    let v = match T::BYTES {
        1 => 0,
        2 => 1,
        16 => 2,
        bytes => return Err(Error::UnsupportedValue { bytes }),
    };
    let nnz = perm.len() as u64;
    // SAFETY: transpose_permute_v*(nnz, perm, vals, out): the caller's contract; the variant is
    // the values' width.
    unsafe { k.permute[v].args(gpu.stream()).arg(&nnz).arg(perm).arg(vals).arg(&mut *out).launch(grid_of(gpu, nnz))? };
    Ok(())
}

/// A column or row pointer's word type that [`chunk_ptr`] reads: its kernel.
pub(crate) trait PtrWord: gpu_runtime::cudarc::driver::DeviceRepr {
    /// The kernel's index in `Kernels::chunk_ptr`.
    const KERNEL: usize;
    /// The pointer's name in errors.
    const WHAT: &'static str;
}

impl PtrWord for u32 {
    const KERNEL: usize = 0;
    const WHAT: &'static str = "32-bit pointer of a part";
}

impl PtrWord for u64 {
    const KERNEL: usize = 1;
    const WHAT: &'static str = "64-bit pointer of a chunk";
}

/// `out[i] = clamp(ptr[r0 + i], k0, k1) − k0` for every word of `out`
/// (`transpose_dist_rel_ptr` for a 32-bit pointer, `transpose_index64_chunk_ptr` for a 64-bit
/// one): part of a pointer as a 32-bit one from 0.
///
/// # Errors
/// [`Error::LengthMismatch`] when `ptr` has fewer than `r0 + out.len()` words or `k0 > k1`;
/// `k1 − k0 ≥ 2^32` is [`Error::TooLarge`].
pub(crate) fn chunk_ptr<W: PtrWord>(
    gpu: &Gpu,
    k: &Kernels,
    ptr: &DeviceView<'_, W>,
    r0: u64,
    (k0, k1): (u64, u64),
    out: &mut DeviceViewMut<'_, u32>,
) -> Result<()> {
    let len = out.len() as u64;
    if (ptr.len() as u64) < r0 + len {
        return Err(Error::LengthMismatch { what: W::WHAT, expected: r0 + len, got: ptr.len() as u64 });
    }
    if k0 > k1 {
        return Err(Error::LengthMismatch { what: "end of a pointer part's nonzeros", expected: k0, got: k1 });
    }
    if k1 - k0 > u32::MAX as u64 {
        return Err(Error::TooLarge { what: "nonzeros of a chunk", len: k1 - k0, max: u32::MAX as u64 });
    }
    // SAFETY: transpose_{index64_chunk,dist_rel}_ptr(ptr, r0, len, k0, k1, out), the kernel of
    // W's width: reads ptr[r0..r0 + len] (checked above), writes out's len words; k0 <= k1 and
    // k1 − k0 < 2^32 (checked).
    unsafe { k.chunk_ptr[W::KERNEL].args(gpu.stream()).arg(ptr).arg(&r0).arg(&len).arg(&k0).arg(&k1).arg(&mut *out).launch(grid_of(gpu, len))? };
    Ok(())
}

/// `acc[i] += part[i]` for `i < acc.len()` (`transpose_index64_add_ptr`).
///
/// # Errors
/// [`Error::LengthMismatch`] when `part` is shorter than `acc`.
pub(crate) fn add_ptr(gpu: &Gpu, k: &Kernels, acc: &mut DeviceViewMut<'_, u64>, part: &DeviceView<'_, u32>) -> Result<()> {
    let len = acc.len() as u64;
    if (part.len() as u64) < len {
        return Err(Error::LengthMismatch { what: "pointer added", expected: len, got: part.len() as u64 });
    }
    // SAFETY: transpose_index64_add_ptr(acc, part, len): both hold at least len words of the
    // kernel's types (u64 and u32).
    unsafe { k.add_ptr.args(gpu.stream()).arg(&mut *acc).arg(part).arg(&len).launch(grid_of(gpu, len))? };
    Ok(())
}

/// Enqueues the placing of one piece after the earlier ones in each output column: entry
/// `k < nc` (column `cols[k]`, row `rows[k] + r0`, value `vals[k]` when given) to
/// `cursor[cols[k]] + k − cp[cols[k]]` of `out_rows` / `out_vals`
/// (`transpose_index64_place_v*`, by the values' width), then `cursor[j] += cp[j + 1] − cp[j]`
/// for every column `j` of the cursor (`transpose_index64_advance`).
pub(crate) struct Piece<'v, T> {
    /// Each entry's column (`nc` words).
    pub cols: DeviceView<'v, u32>,
    /// The piece's column pointer (`n + 1` words from 0 to `nc`).
    pub cp: DeviceView<'v, u32>,
    /// Each entry's row less `r0` (`nc` words).
    pub rows: DeviceView<'v, u32>,
    /// The row of the piece's first row.
    pub r0: u32,
    /// The entries' values (`nc` items), absent for a pattern.
    pub vals: Option<DeviceView<'v, T>>,
}

/// Places `piece` ([`Piece`]) into `out_rows` / `out_vals` at the cursor (`n` words) and
/// advances the cursor.
///
/// # Safety
/// `cols[k] < n` and `cp[cols[k]] <= k` (the piece's pointer, nondecreasing); the cursor's
/// destinations lie inside the outputs and are distinct from every other piece's.
pub(crate) unsafe fn place_piece<T: Payload>(
    gpu: &Gpu,
    k: &Kernels,
    piece: &Piece<'_, T>,
    cursor: &mut DeviceViewMut<'_, u64>,
    out_rows: &mut DeviceViewMut<'_, u32>,
    out_vals: Option<&mut DeviceViewMut<'_, T>>,
) -> Result<()> {
    let (nc, n) = (piece.cols.len() as u64, cursor.len() as u64);
    let kv = place_variant(if piece.vals.is_some() { T::BYTES } else { 0 })?;
    let vals = piece.vals.as_ref().map_or(0, |v| v.addr());
    let out_vals = out_vals.map_or(0, |v| v.addr());
    let lengths = [
        ("placed piece's rows", nc, piece.rows.len() as u64),
        ("placed piece's pointer", n + 1, piece.cp.len() as u64),
        ("placed piece's values", nc, piece.vals.as_ref().map_or(nc, |v| v.len() as u64)),
    ];
    if let Some(&(what, expected, got)) = lengths.iter().find(|(_, e, g)| e != g) {
        return Err(Error::LengthMismatch { what, expected, got });
    }
    // SAFETY: transpose_index64_place_v*(nc, cols, cp, cursor, rows, r0, vals, out_rows,
    // out_vals) and transpose_index64_advance(cursor, cp, n): the lengths checked above and the
    // caller's contract; the variant is the values' width (null values with no values).
    unsafe {
        k.place[kv]
            .args(gpu.stream())
            .arg(&nc)
            .arg(&piece.cols)
            .arg(&piece.cp)
            .arg(&mut *cursor)
            .arg(&piece.rows)
            .arg(&piece.r0)
            .arg(&vals)
            .arg(&mut *out_rows)
            .arg(&out_vals)
            .launch(grid_of(gpu, nc))?;
        k.advance.args(gpu.stream()).arg(&mut *cursor).arg(&piece.cp).arg(&n).launch(grid_of(gpu, n))?
    };
    Ok(())
}

/// One rank's piece of another rank's columns for [`gather_pieces`]: its relative column
/// pointer over the receiver's columns, its rows (less `r0`) and values.
pub(crate) struct GatherPiece<'v, T> {
    /// The piece's column pointer (`len + 1` words, nondecreasing from 0 to the rows' length).
    pub cp: DeviceView<'v, u32>,
    /// Each entry's row less `r0`.
    pub rows: DeviceView<'v, u32>,
    /// The row of the piece's first row.
    pub r0: u32,
    /// The entries' values (as many as rows), absent for a pattern.
    pub vals: Option<DeviceView<'v, T>>,
}

/// Words a piece takes in a gather table (`GATHER_PIECE_WORDS` of the kernels).
const PIECE_WORDS: usize = 5;

/// The table [`gather_pieces`] reads: [`PIECE_WORDS`] (5) words a piece (its pointer's, rows' and values'
/// addresses, its first row, its length), after checking each piece's lengths: a pointer of
/// `ptr_len` words, as many values as rows, values present exactly when `with_vals`.
pub(crate) fn gather_table<T: Payload>(pieces: &[GatherPiece<'_, T>], ptr_len: usize, with_vals: bool) -> Result<Vec<u64>> {
    let mut words = Vec::with_capacity(PIECE_WORDS * pieces.len());
    for p in pieces {
        let lengths = [
            ("gathered piece's pointer", ptr_len as u64, p.cp.len() as u64),
            ("gathered piece's values", p.rows.len() as u64, p.vals.as_ref().map_or(p.rows.len(), |v| v.len()) as u64),
            ("gathered piece's values (present on one side only)", with_vals as u64, p.vals.is_some() as u64),
        ];
        if let Some(&(what, expected, got)) = lengths.iter().find(|(_, e, g)| e != g) {
            return Err(Error::LengthMismatch { what, expected, got });
        }
        words.extend([p.cp.addr(), p.rows.addr(), p.vals.as_ref().map_or(0, |v| v.addr()), p.r0 as u64, p.rows.len() as u64]);
    }
    Ok(words)
}

/// Gathers the pieces of `table` ([`gather_table`], on the device: `np` pieces) into a rank's
/// share of the transpose, in table order within each column, or into its entries from `base`
/// (`cols`, `out_rows` and `out_vals` then start at entry `base`): output entry `base + p` of
/// column `cols[p]` at `base + p − out_ptr[cols[p]]` (`transpose_dist_gather_v*`, by the values'
/// width).
///
/// # Safety
/// `table` holds [`gather_table`]'s words for pieces that live until the work completes, made
/// with `ptr_len = out_ptr.len()` and values exactly when `out_vals` is given; `cols` is
/// `out_ptr`'s expansion from entry `base` (each word the column of its output entry, below
/// `out_ptr.len() − 1`).
/// The outputs' lengths are checked; a piece entry past its rows is never read.
pub(crate) unsafe fn gather_pieces<T: Payload>(
    gpu: &Gpu,
    k: &Kernels,
    (base, cols): (u64, &DeviceView<'_, u32>),
    out_ptr: &DeviceView<'_, u32>,
    table: &DeviceView<'_, u64>,
    out_rows: &mut DeviceViewMut<'_, u32>,
    out_vals: Option<&mut DeviceViewMut<'_, T>>,
) -> Result<()> {
    let nnz = cols.len() as u64;
    let kv = place_variant(if out_vals.is_some() { T::BYTES } else { 0 })?;
    let outs = [
        ("gather table (5 words a piece)", 0, (table.len() % PIECE_WORDS) as u64),
        ("gathered rows", nnz, out_rows.len() as u64),
        ("gathered values", nnz, out_vals.as_ref().map_or(nnz, |v| v.len() as u64)),
    ];
    if let Some(&(what, expected, got)) = outs.iter().find(|(_, e, g)| e != g) {
        return Err(Error::LengthMismatch { what, expected, got });
    }
    if nnz == 0 {
        return Ok(());
    }
    let out_vals = out_vals.map_or(0, |v| v.addr());
    let np = (table.len() / PIECE_WORDS) as u32;
    // SAFETY: transpose_dist_gather_v*(nnz, base, cols, out_ptr, np, table, out_rows, out_vals): the
    // outputs' lengths checked above (nnz), the table's pieces checked by gather_table against
    // out_ptr's length and the values' presence (the caller's contract), cols below out_ptr's
    // length − 1 (the caller's contract); the variant is the values' width (null values with
    // none).
    unsafe {
        k.dist_gather[kv]
            .args(gpu.stream())
            .arg(&nnz)
            .arg(&base)
            .arg(cols)
            .arg(out_ptr)
            .arg(&np)
            .arg(table)
            .arg(&mut *out_rows)
            .arg(&out_vals)
            .launch(grid_of(gpu, nnz.div_ceil(4)))?
    };
    Ok(())
}

/// `out[i] = ptr[min(start + i · stride, n)]` widened, for every word of `out`, where `n + 1 =
/// ptr.len()` (`transpose_dist_sample_ptr`): a column pointer sampled every `stride` columns
/// from column `start`.
///
/// # Errors
/// [`Error::LengthMismatch`] when `ptr` is empty.
pub(crate) fn sample_ptr(
    gpu: &Gpu,
    k: &Kernels,
    ptr: &DeviceView<'_, u32>,
    (start, stride): (u64, u64),
    out: &mut DeviceViewMut<'_, u64>,
) -> Result<()> {
    if ptr.is_empty() {
        return Err(Error::LengthMismatch { what: "sampled pointer", expected: 1, got: 0 });
    }
    let (n, len) = (ptr.len() as u64 - 1, out.len() as u64);
    // SAFETY: transpose_dist_sample_ptr(ptr, n, start, stride, len, out): reads ptr[..=n] (the
    // view's words; positions clamped to n), writes out's len words.
    unsafe { k.dist_sample_ptr.args(gpu.stream()).arg(ptr).arg(&n).arg(&start).arg(&stride).arg(&len).arg(&mut *out).launch(grid_of(gpu, len))? };
    Ok(())
}

/// The pieces' pointers of a gather table summed word by word into `out` (wrapping;
/// `transpose_dist_sum_ptr`): a rank's share of the transposed column pointer.
///
/// # Safety
/// `table` holds [`gather_table`]'s words for pieces that live until the work completes, made
/// with `ptr_len` at least `out.len()`.
pub(crate) unsafe fn sum_ptr(gpu: &Gpu, k: &Kernels, table: &DeviceView<'_, u64>, out: &mut DeviceViewMut<'_, u32>) -> Result<()> {
    if table.len() % PIECE_WORDS != 0 {
        return Err(Error::LengthMismatch { what: "gather table (5 words a piece)", expected: 0, got: (table.len() % PIECE_WORDS) as u64 });
    }
    let (np, len) = ((table.len() / PIECE_WORDS) as u32, out.len() as u64);
    // SAFETY: transpose_dist_sum_ptr(np, table, len, out): the caller's contract (each piece's
    // pointer at least len words), out's len words.
    unsafe { k.dist_sum_ptr.args(gpu.stream()).arg(&np).arg(table).arg(&len).arg(&mut *out).launch(grid_of(gpu, len))? };
    Ok(())
}

/// `transpose_index64_chunk_rows`: for each chunk of `chunk` nonzeros (the last one shorter) of
/// the `nnz` the 64-bit pointer `ptr` covers, the rows `r0..r1` holding its nonzeros into
/// `rows[2c]` and `rows[2c + 1]`.
///
/// # Safety
/// `ptr` is nondecreasing from 0 to `nnz > 0`; `rows` holds `2 · ceil(nnz / chunk)` words.
pub(crate) unsafe fn chunk_rows(
    gpu: &Gpu,
    k: &Kernels,
    ptr: &DeviceView<'_, u64>,
    nnz: u64,
    chunk: u64,
    rows: &mut DeviceViewMut<'_, u64>,
) -> Result<()> {
    let m = ptr.len() as u64 - 1;
    let chunks = nnz.div_ceil(chunk);
    // SAFETY: transpose_index64_chunk_rows(ptr, m, nnz, chunk, chunks, rows): the caller's
    // contract.
    unsafe { k.chunk_rows.args(gpu.stream()).arg(ptr).arg(&m).arg(&nnz).arg(&chunk).arg(&chunks).arg(&mut *rows).launch(grid_of(gpu, chunks))? };
    Ok(())
}

/// `transpose_index64_fingerprint(ptr, majors, idx, rows_major, out)`, one warp per major.
///
/// # Safety
/// A valid matrix: `ptr` of `majors + 1` words from 0 to `idx.len()`; `out` of three words.
pub(crate) unsafe fn fingerprint(
    gpu: &Gpu,
    ptr: &DeviceView<'_, u64>,
    idx: &DeviceView<'_, u32>,
    rows_major: bool,
    out: &mut DeviceViewMut<'_, u64>,
) -> Result<()> {
    let kernel = gpu.kernel(&MODULE, "transpose_index64_fingerprint")?;
    let (majors, rm) = (ptr.len() as u64 - 1, u32::from(rows_major));
    let cfg = grid_1d(32 * majors.max(1), NT, NT as u64, gpu.props().sm_count.max(1) * 16);
    // SAFETY: the caller's contract; blocks of NT threads (whole warps).
    unsafe { kernel.args(gpu.stream()).arg(ptr).arg(&majors).arg(idx).arg(&rm).arg(&mut *out).launch(cfg)? };
    Ok(())
}

/// `transpose_index64_generate(ptr, m, idx, nnz, n, seed)`: an `m × n` pattern of
/// `nnz = idx.len()` entries into `ptr` (`m + 1` words) and `idx`.
///
/// # Errors
/// [`Error::LengthMismatch`] when `ptr` is empty; `m` and `n` must be positive ([`Error::TooLarge`]).
pub(crate) fn generate(gpu: &Gpu, ptr: &mut DeviceViewMut<'_, u64>, idx: &mut DeviceViewMut<'_, u32>, n: u64, seed: u64) -> Result<()> {
    if ptr.len() < 2 || n == 0 {
        return Err(Error::LengthMismatch { what: "generated matrix's pointer", expected: 2, got: ptr.len() as u64 });
    }
    let kernel = gpu.kernel(&MODULE, "transpose_index64_generate")?;
    let (m, nnz) = (ptr.len() as u64 - 1, idx.len() as u64);
    // SAFETY: transpose_index64_generate writes ptr[0..=m] and idx[0..nnz], the views' words;
    // m, n > 0.
    unsafe { kernel.args(gpu.stream()).arg(&mut *ptr).arg(&m).arg(&mut *idx).arg(&nnz).arg(&n).arg(&seed).launch(grid_of(gpu, nnz.max(m + 1)))? };
    Ok(())
}
