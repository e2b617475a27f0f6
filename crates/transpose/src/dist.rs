//! The transpose of a matrix spread over several GPUs ([`DistCsr`], row blocks), over NCCL
//! ([`Comms`]): the result is the transpose as a `DistCsr` (its row blocks are column ranges of
//! the input, balanced by nonzeros), equal bit for bit to the one-GPU transpose.
//!
//! 1. Each rank transposes its row block locally (the algorithm asked; `Auto` by default): a
//!    CSC over all `n` columns of its own rows.
//! 2. The column ranges cut the transpose into parts of nearly equal nonzeros: rank `r`'s
//!    columns start at the first column where the sum of the local column pointers reaches
//!    `r / world` of the nonzeros. Every rank's pointer sampled every `stride` columns (at most
//!    2^16 + 1 words) and summed over the ranks (one small NCCL all-reduce) brackets each cut
//!    within `stride` columns; every rank's pointer words in those brackets, shared with every
//!    rank, give the exact cuts and each rank's offsets at them. (Summing whole pointers, 256 MiB
//!    at 2^26 columns, took 2.1 ms of the 2^30 transpose on two H200s.)
//! 3. Each rank sends every other rank the contiguous part of its local CSC that falls in that
//!    rank's columns (the part's relative column pointer first, then its row indices and
//!    values; grouped NCCL sends and receives).
//! 4. Each rank gathers the pieces, in rank order, one after another in each column (one pass
//!    over its share, `transpose_dist_gather_*`: each output entry finds its column from the
//!    share's pointer, then its piece; rows offset by the sender's first row). Pieces from lower
//!    ranks hold lower rows, so each column's rows stay sorted and equal entries keep their
//!    order: the one-GPU result. The share's pointer (the sum of its pieces') and each output
//!    entry's column are made on a second stream while the rows and values travel; from
//!    [`CHUNKED_FROM_RANKS`] ranks and [`CHUNKED_FROM`] nonzeros a share, the rows and values
//!    travel in [`CHUNKS`] column ranges, each gathered while the next travels.
use gpu_dist::Comms;
use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::{DeviceView, DeviceViewMut, Gpu, Payload};
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use sptrans_matrix::dist::{AsDistCsrView, DistCsr};

use crate::{Algorithm, Error, Result, Transposer};

/// One [`Transposer`] per rank, for distributed transposes over a [`Comms`].
pub struct DistTransposer {
    tps: Vec<Transposer>,
    /// Each rank's second stream (forked from its GPU's) and a ptr2idx plan on it: the place
    /// phase's work that overlaps the exchange.
    sides: Vec<(Gpu, Ptr2Idx)>,
    /// Chunks of the exchange ([`DistTransposer::set_chunks`]); `None`: [`CHUNKS`] from
    /// [`CHUNKED_FROM_RANKS`] ranks and [`CHUNKED_FROM`] nonzeros a share, else 1.
    chunks: Option<usize>,
    profile: bool,
    /// Each rank's stream at construction: `transpose` takes only the same communicator.
    streams: Vec<usize>,
}

/// What the last [`DistTransposer::transpose`] moved.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exchange {
    /// The column ranges' first columns, and the column count last.
    pub cuts: Vec<u64>,
    /// Bytes each rank sent to the others (pointers, row indices and values).
    pub sent_bytes: Vec<u64>,
    /// With [`DistTransposer::set_profile`]: seconds of each phase, every rank synchronized
    /// around each: `local`, `cuts`, `parts` (the parts' relative pointers), `place: columns`
    /// (the parts' pointers exchanged, the shares' pointers and each output entry's column),
    /// `exchange` (the rows and values, chunk by chunk, with the gathers of all but the last
    /// chunk beside them) and `place` (the rest of the gathers).
    pub phases: Vec<(&'static str, f64)>,
}

impl DistTransposer {
    /// A transposer for each rank of `comms` (on its GPU and stream).
    ///
    /// # Errors
    /// As [`Transposer::new`].
    pub fn new(comms: &Comms) -> Result<Self> {
        let streams = comms.gpus().iter().map(|gpu| gpu.stream().cu_stream() as usize).collect();
        let sides = comms
            .gpus()
            .iter()
            .map(|gpu| {
                let side = gpu.fork()?;
                let p2i = Ptr2Idx::new(&side)?;
                Ok((side, p2i))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { tps: comms.gpus().iter().map(Transposer::new).collect::<Result<Vec<_>>>()?, sides, chunks: None, profile: false, streams })
    }

    /// Sends the rows and values in `chunks` column ranges of each rank's share, each gathered
    /// while the next one travels (`None`: [`CHUNKS`] from [`CHUNKED_FROM_RANKS`] ranks when a
    /// share reaches [`CHUNKED_FROM`] nonzeros, else 1; 0 counts as 1). For studies; the result
    /// is the same. Every process of a launch must set the same.
    pub fn set_chunks(&mut self, chunks: Option<usize>) {
        self.chunks = chunks;
    }

    /// Times each phase ([`Exchange::phases`]), synchronizing every rank around each (slower; for
    /// studies).
    pub fn set_profile(&mut self, on: bool) {
        self.profile = on;
    }

    /// The transposer of rank `r` (for one-GPU work on that rank's GPU).
    pub fn rank(&mut self, r: usize) -> Option<&mut Transposer> {
        self.tps.get_mut(r)
    }

    /// The transpose of `a` (block `g` on rank `g`'s GPU), `algo` for the local transposes, as a
    /// [`DistCsr`] of `cols × rows` whose block `g` (on rank `g`) holds the columns
    /// `cuts[g] .. cuts[g + 1]` of `a` (returned beside it). With one process per GPU
    /// ([`Comms::from_env`]) `a` holds this process's blocks ([`DistCsr::read_ranks`]) and so
    /// does the result; every rank of every process must call it. Synchronizes every rank (the
    /// cut points and the pieces' sizes are read back and shared); allocates its buffers per
    /// call.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `a` is cut for another number of ranks than `comms` spans, the
    /// blocks held here are not this process's ranks', or another process's matrix has another
    /// column count or value type; [`Error::TooLarge`] when a rank's share of the transpose
    /// passes 32-bit offsets; `gpu_runtime::Error::ForeignStream` when `comms` is not the
    /// communicator this transposer was made with; [`Error::UnsupportedValue`]; NCCL and driver
    /// errors (out of memory among them).
    pub fn transpose<T: Payload>(&mut self, comms: &Comms, algo: Algorithm, a: &impl AsDistCsrView<T>) -> Result<(DistCsr<T>, Exchange)> {
        let a = a.dist_view();
        let (g, world, first) = (comms.len(), comms.world(), comms.first_rank());
        if a.row_starts().len() != world + 1 {
            return Err(Error::LengthMismatch {
                what: "blocks of the distributed matrix",
                expected: world as u64,
                got: a.row_starts().len() as u64 - 1,
            });
        }
        if a.blocks().len() != g || a.first_block() != first || self.tps.len() != g {
            return Err(Error::LengthMismatch {
                what: "blocks of the distributed matrix held by this process",
                expected: g as u64,
                got: a.blocks().len() as u64,
            });
        }
        if comms.gpus().iter().zip(&self.streams).any(|(gpu, &s)| gpu.stream().cu_stream() as usize != s) {
            return Err(gpu_runtime::Error::ForeignStream.into());
        }
        let (m, n) = (a.rows(), a.cols());
        let with_vals = a.blocks().iter().any(|b| b.vals().is_some());
        let vb = if with_vals { T::BYTES as u64 } else { 0 };
        crate::launch::place_variant(vb as usize)?;
        let gpus = comms.gpus();
        let mut phases = Vec::new();
        let profile = self.profile;
        if profile {
            comms.synchronize()?;
        }
        let mut clock = std::time::Instant::now();
        let mut lap = |what: &'static str| -> Result<()> {
            if profile {
                comms.synchronize()?;
                phases.push((what, clock.elapsed().as_secs_f64()));
                clock = std::time::Instant::now();
            }
            Ok(())
        };
        // 1. Local transposes (local rank l is global rank first + l).
        let mut local = Vec::with_capacity(g);
        for (l, tp) in self.tps.iter_mut().enumerate() {
            local.push(tp.transpose_new(algo, &a.blocks()[l])?);
        }
        lap("local")?;
        if world == 1 {
            // One rank: its local transpose is the answer.
            comms.synchronize()?;
            let out = DistCsr::from_blocks(n, m, vec![0, n], local)?;
            return Ok((out, Exchange { cuts: vec![0, n], sent_bytes: vec![0], phases }));
        }
        // 2. The cut points: rank r's columns start at the first column whose global pointer
        // (the sum of the local ones) reaches min(r · ceil(total / world), total). Found in two
        // steps, without summing whole pointers: every rank's pointer sampled every `stride`
        // columns and all-reduced (at most SAMPLES + 1 words) brackets each cut within `stride`
        // columns; then each rank's words of those brackets, shared with every rank, give the
        // exact cuts and every rank's offsets at them.
        // Other processes' blocks may disagree (one process's blocks are one matrix's).
        if comms.len() < world {
            let mine = vec![vec![with_vals as u64, n]; g];
            if let Some(other) = comms.share_rows(&mine, 2)?.iter().find(|r| r[1] != n || r[0] != with_vals as u64) {
                return Err(Error::LengthMismatch { what: "columns (or values) of another process's blocks", expected: n, got: other[1] });
            }
        }
        let stride = n.div_ceil(SAMPLES).max(1);
        let samples = (n.div_ceil(stride) + 1) as usize;
        let mut sums = Vec::with_capacity(g);
        for (l, tp) in self.tps.iter().enumerate() {
            let mut s = gpus[l].alloc::<u64>(samples)?; // written whole by the sampling
            crate::launch::sample_ptr(&tp.gpu, &tp.k, &DeviceView::of(local[l].ptr()), (0, stride), &mut DeviceViewMut::of(&mut s))?;
            sums.push(s);
        }
        comms.group(|c| {
            for (l, s) in sums.iter_mut().enumerate() {
                // SAFETY: `samples` words on rank l's GPU, used next by this stream only.
                unsafe { c.all_reduce_sum_u64(l, s.device_ptr_mut(gpus[l].stream()).0, samples)? };
            }
            Ok(())
        })?;
        // Synchronizes (the same words on every rank of every process).
        let sum = gpus[0].download(&sums[0])?;
        let total = sum[samples - 1];
        let starts = brackets(&sum, stride, world);
        let width = (world - 1) * stride as usize;
        let mut rows = Vec::with_capacity(g);
        for (l, tp) in self.tps.iter().enumerate() {
            // Without nonzeros the cuts need no words (zeros).
            let mut words = vec![0u64; width];
            if total > 0 {
                let mut b = gpus[l].alloc::<u64>(width.max(1))?; // its first `width` words written below
                for (i, &start) in starts.iter().enumerate() {
                    let at = i * stride as usize;
                    let mut seg = DeviceViewMut::of(&mut b)
                        .try_into_slice(at..at + stride as usize)
                        .ok_or(gpu_runtime::Error::Internal("a bracket past its buffer"))?;
                    crate::launch::sample_ptr(&tp.gpu, &tp.k, &DeviceView::of(local[l].ptr()), (start, 1), &mut seg)?;
                }
                words = gpus[l].download(&b)?; // synchronizes
                words.truncate(width);
            }
            words.push(local[l].nnz());
            rows.push(words);
        }
        let shared = comms.share_rows(&rows, width + 1)?;
        let Cuts { cuts, off, glob } = cuts_from_brackets(&shared, &starts, stride, n, total)?;
        for r in 0..world {
            let share = glob[r + 1] - glob[r];
            if share > sptrans_matrix::device::MAX_NNZ {
                return Err(Error::TooLarge {
                    what: "nonzeros of one rank's share of the transpose",
                    len: share,
                    max: sptrans_matrix::device::MAX_NNZ,
                });
            }
        }
        lap("cuts")?;
        // 3. Each rank's part of every rank's columns: its pointer relative to its first entry.
        let range = |r: usize| cuts[r + 1] - cuts[r];
        // Relative pointers of rank s's part for rank r, at rel_at[r] words of its buffer.
        let rel_at: Vec<u64> = (0..=world).map(|r| (0..r).map(|q| range(q) + 1).sum()).collect();
        let mut rel = Vec::with_capacity(g);
        for l in 0..g {
            let (gpu, s) = (&gpus[l], first + l);
            // Every word is written below (the parts' pointers tile the buffer).
            let mut buf = gpu.alloc::<u32>(rel_at[world] as usize)?;
            let mut bv = DeviceViewMut::of(&mut buf);
            for r in 0..world {
                // The part's relative pointer: range(r) + 1 words of the buffer at rel_at[r].
                let (at, len) = (rel_at[r] as usize, range(r) as usize + 1);
                let mut part = bv.try_slice_mut(at..at + len).ok_or(gpu_runtime::Error::Internal("a relative pointer past its buffer"))?;
                crate::launch::chunk_ptr(
                    &self.tps[l].gpu,
                    &self.tps[l].k,
                    &DeviceView::of(local[l].ptr()),
                    cuts[r],
                    (off[s][r], off[s][r + 1]),
                    &mut part,
                )?;
            }
            rel.push(buf);
        }
        lap("parts")?;
        // 4. The exchange: rank s's part for rank r, into r's receive buffers.
        struct Piece<T: Payload> {
            rel: CudaSlice<u32>,
            rows: CudaSlice<u32>,
            vals: Option<CudaSlice<T>>,
        }
        let mut recv: Vec<Vec<Option<Piece<T>>>> = Vec::with_capacity(g);
        for (l, gpu) in gpus.iter().enumerate() {
            let r = first + l;
            let mut row = Vec::with_capacity(world);
            for (s, o) in off.iter().enumerate() {
                if s == r {
                    row.push(None);
                    continue;
                }
                // Filled by the receives below (contents unspecified until then).
                let cnt = (o[r + 1] - o[r]) as usize;
                row.push(Some(Piece {
                    rel: gpu.alloc::<u32>(range(r) as usize + 1)?,
                    rows: gpu.alloc::<u32>(cnt.max(1))?,
                    vals: if with_vals { Some(gpu.alloc::<T>(cnt.max(1))?) } else { None },
                }));
            }
            recv.push(row);
        }
        let sent_bytes: Vec<u64> =
            (0..world).map(|s| (0..world).filter(|&r| r != s).map(|r| 4 * (range(r) + 1) + (4 + vb) * (off[s][r + 1] - off[s][r])).sum()).collect();
        // The chunks: each rank's columns cut at sampled columns into `chunks` ranges of nearly
        // equal nonzeros (co[s][r]: where rank s's entries of each chunk of rank r's columns
        // start in its local CSC, and end last). The rows and values travel chunk by chunk, and
        // each chunk is gathered on a second stream while the next one travels.
        let max_share = (0..world).map(|r| glob[r + 1] - glob[r]).max().unwrap_or(0);
        let chunks = self.chunks.unwrap_or(if world >= CHUNKED_FROM_RANKS && max_share >= CHUNKED_FROM { CHUNKS } else { 1 }).max(1);
        let bnd = chunk_columns(&sum, stride, n, &cuts, &glob, chunks);
        let co = chunk_offsets(comms, &self.tps, &local, &bnd, &off)?;
        // 4. The exchange of the parts' pointers, then the receiving rank's tables (each piece's
        // pointer, rows and values) and its share's buffers; its pointer (the sum of the pieces')
        // and each output entry's column follow on the second stream while the rows and values
        // travel.
        comms.group(|c| {
            for l in 0..g {
                let (stream, s) = (gpus[l].stream(), first + l);
                let (ra, _g0) = rel[l].device_ptr(stream);
                for r in (0..world).filter(|&r| r != s) {
                    // SAFETY: rel_at[r] + range(r) + 1 words of rel[l], not written again.
                    unsafe { c.send_bytes(l, ra + 4 * rel_at[r], 4 * (range(r) as usize + 1), r)? };
                }
            }
            for l in 0..g {
                let (stream, r) = (gpus[l].stream(), first + l);
                for s in (0..world).filter(|&s| s != r) {
                    let p = recv[l][s].as_mut().ok_or(gpu_runtime::Error::Internal("a receive buffer is missing"))?;
                    let (ra, _g0) = p.rel.device_ptr_mut(stream);
                    // SAFETY: range(r) + 1 words, allocated above.
                    unsafe { c.recv_bytes(l, ra, 4 * (range(r) as usize + 1), s)? };
                }
            }
            Ok(())
        })?;
        let bad = || gpu_runtime::Error::Internal("a piece past its buffers");
        let (mut tables, mut outs, mut cols) = (Vec::with_capacity(g), Vec::with_capacity(g), Vec::with_capacity(g));
        for l in 0..g {
            let (gpu, r) = (&gpus[l], first + l);
            let (len, share) = (range(r) as usize, glob[r + 1] - glob[r]);
            let mut pieces = Vec::with_capacity(world);
            for (s, o) in off.iter().enumerate() {
                let cnt = (o[r + 1] - o[r]) as usize;
                // The piece: its relative pointer, row indices and values (rank r's own part
                // read in place).
                let (cp, rows, vals) = match &recv[l][s] {
                    Some(p) => {
                        let rows = DeviceView::of(&p.rows).try_slice(..cnt).ok_or_else(bad)?;
                        let vals = p.vals.as_ref().map(|v| DeviceView::of(v).try_slice(..cnt).ok_or_else(bad)).transpose()?;
                        (DeviceView::of(&p.rel), rows, vals)
                    }
                    None => {
                        let k0 = off[r][r] as usize;
                        let rows = DeviceView::of(local[l].idx()).try_slice(k0..k0 + cnt).ok_or_else(bad)?;
                        let vals = local[l].vals().map(|v| DeviceView::of(v).try_slice(k0..k0 + cnt).ok_or_else(bad)).transpose()?;
                        let at = rel_at[r] as usize;
                        (DeviceView::of(&rel[l]).try_slice(at..at + len + 1).ok_or_else(bad)?, rows, vals)
                    }
                };
                pieces.push(crate::launch::GatherPiece { cp, rows, r0: a.row_starts()[s] as u32, vals });
            }
            tables.push(gpu.upload(&crate::launch::gather_table(&pieces, len + 1, with_vals)?)?);
            outs.push(DeviceCsrParts::<T>::alloc(gpu, len as u64, share, with_vals)?);
            cols.push(gpu.alloc::<u32>(share.max(1) as usize)?); // its first share words written by ptr2idx
        }
        for l in 0..g {
            let share = (glob[first + l + 1] - glob[first + l]) as usize;
            let (side, p2i) = &mut self.sides[l];
            side.follow(&gpus[l])?;
            // SAFETY: the table's pieces (the receive buffers and the local CSC) live until the
            // synchronization below, with pointers of len + 1 words (gather_table checked); no
            // word wraps (share <= MAX_NNZ).
            unsafe { crate::launch::sum_ptr(side, &self.tps[l].k, &DeviceView::of(&tables[l]), &mut DeviceViewMut::of(&mut outs[l].ptr))? };
            if share > 0 {
                let mut cv = DeviceViewMut::of(&mut cols[l]).try_into_slice(..share).ok_or_else(bad)?;
                p2i.run(&DeviceView::of(&outs[l].ptr), &mut cv)?;
            }
            if profile {
                side.synchronize()?;
            }
        }
        lap("place: columns")?;
        // 5. Chunk by chunk: the rows and values of every rank's part of chunk k for rank r into
        // r's receive buffers, then (on the second stream, after them) the gather of r's output
        // entries of chunk k: in rank order in each column, each output word written once (the
        // pieces from lower ranks hold lower rows, so rows stay sorted).
        for k in 0..chunks {
            comms.group(|c| {
                for l in 0..g {
                    let (stream, s) = (gpus[l].stream(), first + l);
                    let (ia, _g1) = local[l].idx().device_ptr(stream);
                    let va = local[l].vals().map(|v| v.device_ptr(stream).0).unwrap_or(0);
                    for r in (0..world).filter(|&r| r != s) {
                        let (k0, cnt) = (co[s][r][k], co[s][r][k + 1] - co[s][r][k]);
                        // SAFETY: entries k0 .. k0 + cnt of rank s's local CSC (inside its part
                        // for rank r), not written again.
                        unsafe {
                            c.send_bytes(l, ia + 4 * k0, 4 * cnt as usize, r)?;
                            if with_vals {
                                c.send_bytes(l, va + vb * k0, (vb * cnt) as usize, r)?;
                            }
                        }
                    }
                }
                for l in 0..g {
                    let (stream, r) = (gpus[l].stream(), first + l);
                    for s in (0..world).filter(|&s| s != r) {
                        let (at, cnt) = (co[s][r][k] - co[s][r][0], co[s][r][k + 1] - co[s][r][k]);
                        let p = recv[l][s].as_mut().ok_or(gpu_runtime::Error::Internal("a receive buffer is missing"))?;
                        let (ia, _g1) = p.rows.device_ptr_mut(stream);
                        // SAFETY: entries at .. at + cnt of the piece (its count is the sum of
                        // its chunks' counts), allocated above.
                        unsafe {
                            c.recv_bytes(l, ia + 4 * at, 4 * cnt as usize, s)?;
                            if let Some(v) = p.vals.as_mut() {
                                let (vaddr, _g2) = v.device_ptr_mut(stream);
                                c.recv_bytes(l, vaddr + vb * at, (vb * cnt) as usize, s)?;
                            }
                        }
                    }
                }
                Ok(())
            })?;
            for l in 0..g {
                let r = first + l;
                // Output entries p0 .. p1: chunk k of rank r's share.
                let at = |k: usize| (0..world).map(|s| co[s][r][k] - co[s][r][0]).sum::<u64>() as usize;
                let (p0, p1) = (at(k), at(k + 1));
                if p1 == p0 {
                    continue;
                }
                let side = &self.sides[l].0;
                side.follow(&gpus[l])?;
                let parts = &mut outs[l];
                let cv = DeviceView::of(&cols[l]).try_slice(p0..p1).ok_or_else(bad)?;
                let mut out_rows = DeviceViewMut::of(&mut parts.idx).try_into_slice(p0..p1).ok_or_else(bad)?;
                let mut out_vals = parts.vals.as_mut().map(|v| DeviceViewMut::of(v).try_into_slice(p0..p1).ok_or_else(bad)).transpose()?;
                // SAFETY: the table's pieces (the receive buffers and the local CSC) live until
                // the synchronization below, made for len + 1 words and values as the output;
                // cols is the expansion of the share's pointer (ptr2idx, on this stream before),
                // so every word is below len; entries p0 .. p1 are the chunk's, whose pieces'
                // entries arrived before the stream's event.
                unsafe {
                    crate::launch::gather_pieces(
                        side,
                        &self.tps[l].k,
                        (p0 as u64, &cv),
                        &DeviceView::of(&parts.ptr),
                        &DeviceView::of(&tables[l]),
                        &mut out_rows,
                        out_vals.as_mut(),
                    )?
                };
            }
        }
        lap("exchange")?;
        for (l, gpu) in gpus.iter().enumerate() {
            gpu.follow(&self.sides[l].0)?;
        }
        comms.synchronize()?;
        lap("place")?;
        let mut blocks = Vec::with_capacity(g);
        for (l, parts) in outs.into_iter().enumerate() {
            // SAFETY: the pieces, gathered in rank order in each column, are the CSR of columns
            // cuts[r] .. cuts[r + 1] of the transpose: pointer from 0 to share, row indices < m,
            // values beside them.
            blocks.push(unsafe { DeviceCsr::from_parts_unchecked(range(first + l), m, parts) });
        }
        let out = DistCsr::from_local_blocks(n, m, cuts.clone(), first, blocks)?;
        Ok((out, Exchange { cuts, sent_bytes, phases }))
    }
}

/// At most this many samples (plus the last column) of each rank's column pointer are summed
/// to bracket the cut points: 0.5 MiB, where the whole pointer of 2^26 columns was 256 MiB.
const SAMPLES: u64 = 1 << 16;

/// The first column of each bracket `r = 1 .. world` (the cut of rank `r` lies in columns
/// `start ..= start + stride − 1`), from the sum `sum` of the ranks' pointers sampled every
/// `stride` columns (`sum[i]` at column `min(i · stride, n)`, the last at `n`): one past the
/// last sample below the target `min(r · ceil(total / world), total)`, where the first sample
/// reaching it lies at most `stride` columns on. Sample 0 is 0, below every target when
/// `total > 0`.
fn brackets(sum: &[u64], stride: u64, world: usize) -> Vec<u64> {
    let total = sum.last().copied().unwrap_or(0);
    (1..world).map(|r| (sum.partition_point(|&p| p < target(r, world, total)).max(1) as u64 - 1) * stride + 1).collect()
}

/// Where rank `r`'s share of `total` nonzeros ends: `min(r · ceil(total / world), total)`.
fn target(r: usize, world: usize, total: u64) -> u64 {
    (r as u64 * total.div_ceil(world as u64)).min(total)
}

/// The cut points and offsets of a distributed transpose.
#[derive(Debug, PartialEq)]
struct Cuts {
    /// Rank `r`'s columns: `cuts[r] .. cuts[r + 1]`.
    cuts: Vec<u64>,
    /// `off[s][r]`: where rank `s`'s entries of rank `r`'s columns start in its local CSC.
    off: Vec<Vec<u64>>,
    /// `glob[r]`: where rank `r`'s share starts in the transpose.
    glob: Vec<u64>,
}

/// The exact cuts from every rank's words of the brackets ([`brackets`]): `shared[s]` holds
/// rank `s`'s pointer at the `stride` columns of each bracket in turn, then its nonzero count.
/// Rank `r`'s columns start at the bracket's first column whose summed word reaches its target.
fn cuts_from_brackets(shared: &[Vec<u64>], starts: &[u64], stride: u64, n: u64, total: u64) -> Result<Cuts> {
    let (world, width) = (starts.len() + 1, starts.len() * stride as usize);
    let mut cuts = vec![0u64; world + 1];
    cuts[world] = n;
    let mut off: Vec<Vec<u64>> = shared.iter().map(|row| (0..=world).map(|r| if r == world { row[width] } else { 0 }).collect()).collect();
    let mut glob = vec![0u64; world + 1];
    glob[world] = total;
    if total > 0 {
        for r in 1..world {
            let at = (r - 1) * stride as usize;
            let global = |j: usize| shared.iter().map(|row| row[at + j]).sum::<u64>();
            let j = (0..stride as usize)
                .find(|&j| global(j) >= target(r, world, total))
                .ok_or(gpu_runtime::Error::Internal("a cut outside its bracket"))?;
            cuts[r] = starts[r - 1] + j as u64;
            glob[r] = global(j);
            for (s, row) in shared.iter().enumerate() {
                off[s][r] = row[at + j];
            }
        }
    }
    Ok(Cuts { cuts, off, glob })
}

/// Chunks of the exchange from [`CHUNKED_FROM_RANKS`] ranks when a share reaches
/// [`CHUNKED_FROM`] nonzeros: each gathered while the next travels. At 2^30 nonzeros on four
/// H200s: 30.5–30.9 ms against 32.7–35.0 in one chunk (2 chunks 34.3, 8 chunks 32.0).
pub const CHUNKS: usize = 4;

/// The fewest ranks whose exchange goes in [`CHUNKS`] chunks. On two H200s the gathers beside
/// the exchange slowed it from 7.2 to 15–17 ms: 47.9–49.7 ms against 45.1–45.3 in one chunk at
/// 2^30 (with the gathers on 4 or 8 blocks a multiprocessor, to leave room for NCCL, no better);
/// three ranks not measured.
pub const CHUNKED_FROM_RANKS: usize = 4;

/// Shares of at least this many nonzeros go in [`CHUNKS`] chunks (below it the chunks' fixed
/// costs would outweigh the overlap).
pub const CHUNKED_FROM: u64 = 1 << 26;

/// The columns cutting each rank's range into `chunks` ranges of nearly equal nonzeros, at sampled
/// columns (`sum[i]`: the global pointer at column `min(i · stride, n)`): `bnd[r]` runs from
/// `cuts[r]` to `cuts[r + 1]`, nondecreasing (`glob[r]`: the global pointer at `cuts[r]`).
fn chunk_columns(sum: &[u64], stride: u64, n: u64, cuts: &[u64], glob: &[u64], chunks: usize) -> Vec<Vec<u64>> {
    let world = cuts.len() - 1;
    (0..world)
        .map(|r| {
            let mut b = Vec::with_capacity(chunks + 1);
            let mut prev = cuts[r];
            b.push(prev);
            for k in 1..chunks {
                let t = glob[r] + (glob[r + 1] - glob[r]) * k as u64 / chunks as u64;
                let c = (sum.partition_point(|&p| p < t) as u64).saturating_mul(stride).min(n);
                prev = c.clamp(prev, cuts[r + 1]);
                b.push(prev);
            }
            b.push(cuts[r + 1]);
            b
        })
        .collect()
}

/// `co[s][r][k]`: where rank `s`'s entries of chunk `k` of rank `r`'s columns (`bnd[r][k] ..
/// bnd[r][k + 1]`) start in its local CSC, and where they end last (`off[s][r]` and `off[s][r +
/// 1]`): each rank's pointer at the chunks' inner columns, shared with every rank of every
/// process. [`gpu_runtime::Error::Internal`] when the shared words are not nondecreasing within
/// each part (the receives would not fit their buffers).
fn chunk_offsets<T: Payload>(
    comms: &Comms,
    tps: &[Transposer],
    local: &[DeviceCsr<T>],
    bnd: &[Vec<u64>],
    off: &[Vec<u64>],
) -> Result<Vec<Vec<Vec<u64>>>> {
    let world = bnd.len();
    let inside = bnd.first().map_or(0, |b| b.len().saturating_sub(2));
    let inner: Vec<u64> = bnd.iter().flat_map(|b| b[1..=inside].iter().copied()).collect();
    let shared = if inner.is_empty() {
        vec![Vec::new(); world]
    } else {
        let mut rows = Vec::with_capacity(tps.len());
        for (tp, c) in tps.iter().zip(local) {
            let mut b = tp.gpu.alloc::<u64>(inner.len())?; // every word written below
            for (i, &col) in inner.iter().enumerate() {
                let mut one =
                    DeviceViewMut::of(&mut b).try_into_slice(i..i + 1).ok_or(gpu_runtime::Error::Internal("a chunk word past its buffer"))?;
                crate::launch::sample_ptr(&tp.gpu, &tp.k, &DeviceView::of(c.ptr()), (col, 1), &mut one)?;
            }
            rows.push(tp.gpu.download(&b)?); // synchronizes
        }
        comms.share_rows(&rows, inner.len())?
    };
    let mut co = Vec::with_capacity(world);
    for (s, words) in shared.iter().enumerate() {
        let mut per = Vec::with_capacity(world);
        for r in 0..world {
            let mut v = Vec::with_capacity(inside + 2);
            v.push(off[s][r]);
            v.extend_from_slice(&words[r * inside..(r + 1) * inside]);
            v.push(off[s][r + 1]);
            if v.windows(2).any(|w| w[0] > w[1]) {
                return Err(gpu_runtime::Error::Internal("chunk offsets out of order").into());
            }
            per.push(v);
        }
        co.push(per);
    }
    Ok(co)
}

#[cfg(test)]
mod tests {
    use super::{brackets, cuts_from_brackets, target, Cuts};

    /// The cuts found from sampled pointers and brackets (the kernels' words computed on the
    /// host) against their definition: rank r starts at the first column whose global pointer
    /// reaches min(r · ceil(total / g), total), with every rank's offsets there; strides 1 to 7
    /// (1: every column sampled), empty columns, one heavy column, fewer nonzeros than ranks,
    /// no nonzeros.
    #[test]
    fn sampled_cuts_are_the_first_columns_reaching_each_share() {
        let counts: [&[&[u64]]; 6] = [
            &[&[3, 0, 0, 5, 1, 1, 0, 9, 2], &[1, 1, 1, 1, 1, 1, 1, 1, 1], &[0, 0, 7, 0, 0, 0, 0, 0, 2]],
            &[&[0, 0, 0, 1], &[0, 0, 0, 0]],
            &[&[100, 1, 1, 1], &[5, 0, 0, 3]],
            &[&[1, 1]],
            &[&[0, 4, 0, 0, 4, 0], &[2, 0, 0, 0, 0, 9], &[0, 0, 0, 0, 0, 0]],
            &[&[0, 0, 0], &[0, 0, 0]],
        ];
        for ranks in counts {
            let ptrs: Vec<Vec<u64>> = ranks
                .iter()
                .map(|c| {
                    let mut p = vec![0u64];
                    for &k in c.iter() {
                        p.push(p.last().unwrap() + k);
                    }
                    p
                })
                .collect();
            let n = ranks[0].len() as u64;
            let global: Vec<u64> = (0..=n as usize).map(|j| ptrs.iter().map(|p| p[j]).sum()).collect();
            let total = global[n as usize];
            for stride in 1..=7u64 {
                let at = |p: &[u64], c: u64| p[c.min(n) as usize];
                let samples = n.div_ceil(stride) + 1;
                let sum: Vec<u64> = (0..samples).map(|i| at(&global, i * stride)).collect();
                for world in 2..=5usize {
                    let starts = brackets(&sum, stride, world);
                    let shared: Vec<Vec<u64>> = ptrs
                        .iter()
                        .map(|p| {
                            let mut row: Vec<u64> = starts.iter().flat_map(|&s| (0..stride).map(move |j| at(p, s + j))).collect();
                            if total == 0 {
                                row.iter_mut().for_each(|w| *w = 0);
                            }
                            row.push(p[n as usize]);
                            row
                        })
                        .collect();
                    let Cuts { cuts, off, glob } = cuts_from_brackets(&shared, &starts, stride, n, total).unwrap();
                    let what = format!("{ranks:?}, stride {stride}, {world} ranks");
                    assert_eq!((cuts[0], cuts[world]), (0, n), "{what}");
                    for r in 0..=world {
                        let want = match r {
                            0 => 0,
                            _ if r == world => n,
                            _ if total == 0 => 0,
                            _ => global.iter().position(|&p| p >= target(r, world, total)).unwrap() as u64,
                        };
                        assert_eq!(cuts[r], want, "{what}, rank {r}");
                        assert_eq!(glob[r], global[want as usize], "{what}, rank {r}");
                        for (s, p) in ptrs.iter().enumerate() {
                            assert_eq!(off[s][r], p[want as usize], "{what}, rank {r}, sender {s}");
                        }
                    }
                }
            }
        }
    }
}
