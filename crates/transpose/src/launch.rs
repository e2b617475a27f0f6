//! The kernels of the `transpose` module and the only `unsafe` launches of them, with their grid
//! sizing. Arguments arrive as views (typed, their lengths known) and fill each kernel's argument
//! struct (`transpose_kernels`) through `gpu_runtime::arg_ptr`, whose guards are held until the
//! launch is enqueued; null value pointers stand for pattern matrices.
use std::sync::Arc;

use gpu_runtime::cudarc::driver::{CudaStream, LaunchConfig, SyncOnDrop};
use gpu_runtime::{arg_ptr, arg_ptr_mut, arg_ptr_mut_or_null, arg_ptr_or_null, grid_1d, DeviceView, DeviceViewMut, Gpu, KernelOf, Payload};
use transpose_kernels::{
    AccumulateArgs, ChunkPtrArgs, ChunkRowsArgs, ColPtrArgs, DistGatherArgs, FingerprintArgs, GatherArgs, GenerateArgs, IotaArgs, PermuteArgs,
    PlaceArgs, SamplePtrArgs, ScatterArgs, SumPtrArgs, SymArgs, SymFlagArgs,
};

use crate::{Error, Result, MODULE, NT};

/// Values as the kernels of one width see them: the argument structs' value pointers are typed
/// by this stand-in of the width (the structs' layout does not depend on it).
type V = u8;

/// The kernels of the `transpose` module, loaded once per plan, each with its argument struct
/// (checked against the PTX at load).
pub(crate) struct Kernels {
    iota: KernelOf<IotaArgs>,
    sorted_ptr: KernelOf<ColPtrArgs>,
    scatter: [KernelOf<ScatterArgs<V>>; 2],
    gather: [KernelOf<GatherArgs<V>>; 2],
    /// `transpose_symmetric_v{4,8}` (SymTrans).
    symmetric: [KernelOf<SymArgs<V>>; 2],
    /// `transpose_symmetric_probe` (SymTrans's probe).
    probe: KernelOf<SymFlagArgs>,
    /// `transpose_sym_gate`, `transpose_sym_verdict` and `transpose_auto_ptr` (`Auto`'s
    /// device-decided SymTrans).
    gate: KernelOf<SymFlagArgs>,
    verdict: KernelOf<SymFlagArgs>,
    auto_ptr: KernelOf<ColPtrArgs>,
    /// `transpose_permute_v{1,2,16}` (values of other widths, `wide`).
    permute: [KernelOf<PermuteArgs<V>>; 3],
    chunk_rows: KernelOf<ChunkRowsArgs>,
    /// `transpose_dist_rel_ptr` and `transpose_index64_chunk_ptr` (32- and 64-bit pointers).
    chunk_ptr: [KernelOf<ChunkPtrArgs<V>>; 2],
    add_ptr: KernelOf<AccumulateArgs>,
    advance: KernelOf<AccumulateArgs>,
    /// `transpose_index64_place_v{1,2,4,8,16}`.
    place: [KernelOf<PlaceArgs<V>>; 5],
    /// `transpose_dist_gather_v{1,2,4,8,16}`.
    dist_gather: [KernelOf<DistGatherArgs<V>>; 5],
    dist_sample_ptr: KernelOf<SamplePtrArgs>,
    dist_sum_ptr: KernelOf<SumPtrArgs>,
}

impl Kernels {
    pub(crate) fn load(gpu: &Gpu) -> Result<Self> {
        fn k<A: Copy>(gpu: &Gpu, name: &str) -> Result<KernelOf<A>> {
            Ok(gpu.kernel_of(&MODULE, name)?)
        }
        fn widths<A: Copy>(gpu: &Gpu, base: &str) -> Result<[KernelOf<A>; 5]> {
            let w = |v: u32| k(gpu, &format!("{base}_v{v}"));
            Ok([w(1)?, w(2)?, w(4)?, w(8)?, w(16)?])
        }
        Ok(Self {
            iota: k(gpu, "transpose_iota")?,
            sorted_ptr: k(gpu, "transpose_sorted_ptr")?,
            scatter: [k(gpu, "transpose_scatter_v4")?, k(gpu, "transpose_scatter_v8")?],
            gather: [k(gpu, "transpose_gather_v4")?, k(gpu, "transpose_gather_v8")?],
            symmetric: [k(gpu, "transpose_symmetric_v4")?, k(gpu, "transpose_symmetric_v8")?],
            probe: k(gpu, "transpose_symmetric_probe")?,
            gate: k(gpu, "transpose_sym_gate")?,
            verdict: k(gpu, "transpose_sym_verdict")?,
            auto_ptr: k(gpu, "transpose_auto_ptr")?,
            permute: [k(gpu, "transpose_permute_v1")?, k(gpu, "transpose_permute_v2")?, k(gpu, "transpose_permute_v16")?],
            chunk_rows: k(gpu, "transpose_index64_chunk_rows")?,
            chunk_ptr: [k(gpu, "transpose_dist_rel_ptr")?, k(gpu, "transpose_index64_chunk_ptr")?],
            add_ptr: k(gpu, "transpose_index64_add_ptr")?,
            advance: k(gpu, "transpose_index64_advance")?,
            place: widths(gpu, "transpose_index64_place")?,
            dist_gather: widths(gpu, "transpose_dist_gather")?,
            dist_sample_ptr: k(gpu, "transpose_dist_sample_ptr")?,
            dist_sum_ptr: k(gpu, "transpose_dist_sum_ptr")?,
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

/// The guards of a launch's input and output values (none for a pattern matrix).
type ValueGuards<'b> = Option<(SyncOnDrop<'b>, SyncOnDrop<'b>)>;

/// Input and output values of a launch: the kernel variant (0: 4-byte values or none, 1: 8-byte),
/// the two addresses, null for a pattern matrix (no values on either side), and their guards.
fn values<'b, T: Payload>(
    vals: Option<(&'b DeviceView<'_, T>, &'b mut DeviceViewMut<'_, T>)>,
    stream: &'b CudaStream,
) -> (usize, *const V, *mut V, ValueGuards<'b>) {
    match vals {
        Some((v, o)) => {
            let ((a, ga), (b, gb)) = (arg_ptr(v, stream), arg_ptr_mut(o, stream));
            (usize::from(T::BYTES == 8), a.cast(), b.cast(), Some((ga, gb)))
        }
        None => (0, std::ptr::null(), std::ptr::null_mut(), None),
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
    let nnz = perm.len() as u64;
    let stream = gpu.stream();
    let (perm, _p) = arg_ptr_mut(perm, stream);
    // SAFETY: transpose_iota(IotaArgs): writes perm[0..nnz], the view's words.
    unsafe { k.iota.launch(stream, grid_of(gpu, nnz), IotaArgs { perm, nnz })? };
    Ok(())
}

/// The column pointer (`n + 1` words into `ptr`) of the sorted column indices `keys`, by
/// boundary detection (`transpose_sorted_ptr`).
///
/// # Safety
/// `keys` is sorted with every key `< n`; `ptr` holds `n + 1` words.
pub(crate) unsafe fn sorted_ptr(gpu: &Gpu, k: &Kernels, keys: &DeviceView<'_, u32>, n: u64, ptr: &mut DeviceViewMut<'_, u32>) -> Result<()> {
    let nnz = keys.len() as u64;
    let stream = gpu.stream();
    let ((keys, _k), (ptr, _p)) = (arg_ptr(keys, stream), arg_ptr_mut(ptr, stream));
    let args = ColPtrArgs { keys, verdict: std::ptr::null(), in_ptr: std::ptr::null(), ptr, nnz, n };
    // SAFETY: transpose_sorted_ptr(ColPtrArgs): the caller's contract.
    unsafe { k.sorted_ptr.launch(stream, grid_of(gpu, nnz), args)? };
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
    let stream = gpu.stream();
    let (v, vals, out_vals, _v) = values(vals, stream);
    let ((cols, _c), (rows, _r), (colptr, _cp)) = (arg_ptr(input.cols, stream), arg_ptr(&input.rows, stream), arg_ptr(&input.colptr, stream));
    let ((inter, _t), (intra, _i), (out_rows, _o)) = (arg_ptr(&input.table, stream), arg_ptr(&input.intra, stream), arg_ptr_mut(out_rows, stream));
    let args = ScatterArgs { cols, rows, vals, colptr, inter, intra, out_rows, out_vals, nnz, n, chunk };
    // SAFETY: transpose_scatter_v{4,8}(ScatterArgs): the caller's contract.
    unsafe { k.scatter[v].launch(stream, grid_of(gpu, nnz), args)? };
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
    let stream = gpu.stream();
    let (v, vals, out_vals, _v) = values(vals, stream);
    let ((perm, _p), (rows, _r), (out_rows, _o)) = (arg_ptr(perm, stream), arg_ptr(rows, stream), arg_ptr_mut(out_rows, stream));
    let args = GatherArgs { perm, rows, vals, out_rows, out_vals, nnz };
    // SAFETY: transpose_gather_v{4,8}(GatherArgs): the caller's contract.
    unsafe { k.gather[v].launch(stream, grid_of(gpu, nnz), args)? };
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
    let ((ptr, _p), (idx, _i), (bad, _b)) = (arg_ptr(ptr, stream), arg_ptr(idx, stream), arg_ptr_mut(bad, stream));
    let args = SymFlagArgs { ptr, idx, bad, verdict: std::ptr::null_mut(), n, nnz };
    // SAFETY: transpose_symmetric_probe(SymFlagArgs): the caller's contract; blocks of NT
    // threads (whole warps).
    unsafe { k.probe.launch(stream, grid_1d(threads, NT, NT as u64, u32::MAX), args)? };
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
    let stream = gpu.stream();
    let (v, vals, out_vals, _v) = values(vals, stream);
    let ((ptr, _p), (idx, _i), (rows, _r)) = (arg_ptr(ptr, stream), arg_ptr(idx, stream), arg_ptr(rows, stream));
    let ((out_ptr, _op), (out_idx, _oi), (bad, _b)) = (arg_ptr_mut_or_null(out_ptr, stream), arg_ptr_mut(out_idx, stream), arg_ptr_mut(bad, stream));
    let args = SymArgs { ptr, idx, rows, vals, out_ptr, out_idx, out_vals, bad, n, nnz };
    // SAFETY: transpose_symmetric_v{4,8}(SymArgs): the caller's contract.
    unsafe { k.symmetric[v].launch(stream, grid_of(gpu, nnz.max(n + 1)), args)? };
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
    let stream = gpu.stream();
    let (bad, _b) = arg_ptr_mut(bad, stream);
    let args = SymFlagArgs { ptr: std::ptr::null(), idx: std::ptr::null(), bad, verdict: std::ptr::null_mut(), n: 0, nnz: 0 };
    // SAFETY: transpose_sym_gate(SymFlagArgs: bad): the caller's contract; one warp.
    unsafe { k.gate.launch(stream, ONE_WARP, args)? };
    Ok(())
}

/// SymTrans's verdict as one word (`transpose_sym_verdict`): `verdict[0]` = 1 when the flag
/// `bad` is raised, else 0.
///
/// # Safety
/// `bad` holds [`transpose_kernels::SYM_FLAG_WORDS`] words; `verdict` at least one.
pub(crate) unsafe fn verdict(gpu: &Gpu, k: &Kernels, bad: &DeviceView<'_, u32>, verdict: &mut DeviceViewMut<'_, u32>) -> Result<()> {
    let stream = gpu.stream();
    let ((bad, _b), (verdict, _v)) = (arg_ptr(bad, stream), arg_ptr_mut(verdict, stream));
    // The verdict kernel only reads the flag through its `bad` field.
    let args = SymFlagArgs { ptr: std::ptr::null(), idx: std::ptr::null(), bad: bad.cast_mut(), verdict, n: 0, nnz: 0 };
    // SAFETY: transpose_sym_verdict(SymFlagArgs: bad, verdict): the caller's contract; one warp.
    unsafe { k.verdict.launch(stream, ONE_WARP, args)? };
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
    let stream = gpu.stream();
    let ((verdict, _v), (keys, _k), (in_ptr, _i), (ptr, _p)) =
        (arg_ptr(verdict, stream), arg_ptr(keys, stream), arg_ptr(in_ptr, stream), arg_ptr_mut(ptr, stream));
    let args = ColPtrArgs { keys, verdict, in_ptr, ptr, nnz, n };
    // SAFETY: transpose_auto_ptr(ColPtrArgs): the caller's contract.
    unsafe { k.auto_ptr.launch(stream, grid_of(gpu, nnz.max(n + 1)), args)? };
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
    let stream = gpu.stream();
    let ((perm, _p), (vals, _v), (out, _o)) = (arg_ptr(perm, stream), arg_ptr(vals, stream), arg_ptr_mut(out, stream));
    let args = PermuteArgs { perm, vals: vals.cast::<V>(), out: out.cast::<V>(), nnz };
    // SAFETY: transpose_permute_v*(PermuteArgs): the caller's contract; the variant is the
    // values' width.
    unsafe { k.permute[v].launch(stream, grid_of(gpu, nnz), args)? };
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
    let stream = gpu.stream();
    let ((ptr, _p), (out, _o)) = (arg_ptr(ptr, stream), arg_ptr_mut(out, stream));
    let args = ChunkPtrArgs { ptr: ptr.cast::<V>(), out, r0, len, k0, k1 };
    // SAFETY: transpose_{index64_chunk,dist_rel}_ptr(ChunkPtrArgs), the kernel of W's width:
    // reads ptr[r0..r0 + len] (checked above), writes out's len words; k0 <= k1 and k1 − k0 <
    // 2^32 (checked).
    unsafe { k.chunk_ptr[W::KERNEL].launch(stream, grid_of(gpu, len), args)? };
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
    let stream = gpu.stream();
    let ((acc, _a), (part, _p)) = (arg_ptr_mut(acc, stream), arg_ptr(part, stream));
    // SAFETY: transpose_index64_add_ptr(AccumulateArgs): both hold at least len words of the
    // kernel's types (u64 and u32).
    unsafe { k.add_ptr.launch(stream, grid_of(gpu, len), AccumulateArgs { acc, part, len })? };
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
    let lengths = [
        ("placed piece's rows", nc, piece.rows.len() as u64),
        ("placed piece's pointer", n + 1, piece.cp.len() as u64),
        ("placed piece's values", nc, piece.vals.as_ref().map_or(nc, |v| v.len() as u64)),
    ];
    if let Some(&(what, expected, got)) = lengths.iter().find(|(_, e, g)| e != g) {
        return Err(Error::LengthMismatch { what, expected, got });
    }
    let stream = gpu.stream();
    let ((col, _c), (cp, _cp), (rows, _r)) = (arg_ptr(&piece.cols, stream), arg_ptr(&piece.cp, stream), arg_ptr(&piece.rows, stream));
    let ((vals, _v), (out_vals, _ov)) = (arg_ptr_or_null(piece.vals.as_ref(), stream), arg_ptr_mut_or_null(out_vals, stream));
    let ((cursor, _cu), (out_rows, _or)) = (arg_ptr_mut(cursor, stream), arg_ptr_mut(out_rows, stream));
    let place = PlaceArgs { col, cp, cursor, rows, vals: vals.cast::<V>(), out_rows, out_vals: out_vals.cast::<V>(), nnz: nc, r0: piece.r0 };
    // SAFETY: transpose_index64_place_v*(PlaceArgs) and transpose_index64_advance(AccumulateArgs:
    // cursor, cp, n): the lengths checked above and the caller's contract; the variant is the
    // values' width (null values with no values).
    unsafe {
        k.place[kv].launch(stream, grid_of(gpu, nc), place)?;
        k.advance.launch(stream, grid_of(gpu, n), AccumulateArgs { acc: cursor, part: cp, len: n })?
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
    let np = (table.len() / PIECE_WORDS) as u32;
    let stream = gpu.stream();
    let ((col, _c), (out_ptr, _p), (table, _t)) = (arg_ptr(cols, stream), arg_ptr(out_ptr, stream), arg_ptr(table, stream));
    let ((out_rows, _r), (out_vals, _v)) = (arg_ptr_mut(out_rows, stream), arg_ptr_mut_or_null(out_vals, stream));
    let args = DistGatherArgs { col, out_ptr, table, out_rows, out_vals: out_vals.cast::<V>(), nnz, base, np };
    // SAFETY: transpose_dist_gather_v*(DistGatherArgs): the outputs' lengths checked above
    // (nnz), the table's pieces checked by gather_table against out_ptr's length and the
    // values' presence (the caller's contract), cols below out_ptr's length − 1 (the caller's
    // contract); the variant is the values' width (null values with none).
    unsafe { k.dist_gather[kv].launch(stream, grid_of(gpu, nnz.div_ceil(4)), args)? };
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
    let stream = gpu.stream();
    let ((ptr, _p), (out, _o)) = (arg_ptr(ptr, stream), arg_ptr_mut(out, stream));
    // SAFETY: transpose_dist_sample_ptr(SamplePtrArgs): reads ptr[..=n] (the view's words;
    // positions clamped to n), writes out's len words.
    unsafe { k.dist_sample_ptr.launch(stream, grid_of(gpu, len), SamplePtrArgs { ptr, out, n, start, stride, len })? };
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
    let stream = gpu.stream();
    let ((table, _t), (out, _o)) = (arg_ptr(table, stream), arg_ptr_mut(out, stream));
    // SAFETY: transpose_dist_sum_ptr(SumPtrArgs): the caller's contract (each piece's pointer at
    // least len words), out's len words.
    unsafe { k.dist_sum_ptr.launch(stream, grid_of(gpu, len), SumPtrArgs { table, out, len, np })? };
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
    let stream = gpu.stream();
    let ((ptr, _p), (rows, _r)) = (arg_ptr(ptr, stream), arg_ptr_mut(rows, stream));
    // SAFETY: transpose_index64_chunk_rows(ChunkRowsArgs): the caller's contract.
    unsafe { k.chunk_rows.launch(stream, grid_of(gpu, chunks), ChunkRowsArgs { ptr, rows, m, nnz, chunk, chunks })? };
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
    let kernel: KernelOf<FingerprintArgs> = gpu.kernel_of(&MODULE, "transpose_index64_fingerprint")?;
    let (majors, rows_major) = (ptr.len() as u64 - 1, u32::from(rows_major));
    let cfg = grid_1d(32 * majors.max(1), NT, NT as u64, gpu.props().sm_count.max(1) * 16);
    let stream = gpu.stream();
    let ((ptr, _p), (idx, _i), (out, _o)) = (arg_ptr(ptr, stream), arg_ptr(idx, stream), arg_ptr_mut(out, stream));
    // SAFETY: transpose_index64_fingerprint(FingerprintArgs): the caller's contract; blocks of
    // NT threads (whole warps).
    unsafe { kernel.launch(stream, cfg, FingerprintArgs { ptr, idx, out, majors, rows_major })? };
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
    let kernel: KernelOf<GenerateArgs> = gpu.kernel_of(&MODULE, "transpose_index64_generate")?;
    let (m, nnz) = (ptr.len() as u64 - 1, idx.len() as u64);
    let stream = gpu.stream();
    let ((ptr, _p), (idx, _i)) = (arg_ptr_mut(ptr, stream), arg_ptr_mut(idx, stream));
    // SAFETY: transpose_index64_generate(GenerateArgs) writes ptr[0..=m] and idx[0..nnz], the
    // views' words; m, n > 0.
    unsafe { kernel.launch(stream, grid_of(gpu, nnz.max(m + 1)), GenerateArgs { ptr, idx, m, nnz, n, seed })? };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_runtime::check_signature;

    /// Every kernel takes exactly its argument struct in the committed PTX (what
    /// `Gpu::kernel_of` checks at load, here without a GPU).
    #[test]
    fn argument_structs_match_the_ptx() {
        fn check<A: Copy>(names: &[&str]) {
            for name in names {
                check_signature::<A>(&MODULE, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        check::<IotaArgs>(&["transpose_iota"]);
        check::<ColPtrArgs>(&["transpose_sorted_ptr", "transpose_auto_ptr"]);
        check::<ScatterArgs<V>>(&["transpose_scatter_v4", "transpose_scatter_v8"]);
        check::<GatherArgs<V>>(&["transpose_gather_v4", "transpose_gather_v8"]);
        check::<SymArgs<V>>(&["transpose_symmetric_v4", "transpose_symmetric_v8"]);
        check::<SymFlagArgs>(&["transpose_symmetric_probe", "transpose_sym_gate", "transpose_sym_verdict"]);
        check::<PermuteArgs<V>>(&["transpose_permute_v1", "transpose_permute_v2", "transpose_permute_v16"]);
        check::<ChunkRowsArgs>(&["transpose_index64_chunk_rows"]);
        check::<ChunkPtrArgs<V>>(&["transpose_dist_rel_ptr", "transpose_index64_chunk_ptr"]);
        check::<AccumulateArgs>(&["transpose_index64_add_ptr", "transpose_index64_advance"]);
        let widths = ["v1", "v2", "v4", "v8", "v16"];
        check::<PlaceArgs<V>>(&widths.map(|w| format!("transpose_index64_place_{w}")).iter().map(String::as_str).collect::<Vec<_>>());
        check::<DistGatherArgs<V>>(&widths.map(|w| format!("transpose_dist_gather_{w}")).iter().map(String::as_str).collect::<Vec<_>>());
        check::<SamplePtrArgs>(&["transpose_dist_sample_ptr"]);
        check::<SumPtrArgs>(&["transpose_dist_sum_ptr"]);
        check::<GenerateArgs>(&["transpose_index64_generate"]);
        check::<FingerprintArgs>(&["transpose_index64_fingerprint"]);
        // A struct of another size is refused.
        assert!(check_signature::<IotaArgs>(&MODULE, "transpose_scatter_v4").is_err());
    }
}
