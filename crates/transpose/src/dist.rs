//! The transpose of a matrix spread over several GPUs ([`DistCsr`], row blocks), over NCCL
//! ([`Comms`]): the result is the transpose as a `DistCsr` (its row blocks are column ranges of
//! the input, balanced by nonzeros), equal bit for bit to the one-GPU transpose.
//!
//! 1. Each rank transposes its row block locally (the algorithm asked; `Auto` by default): a
//!    CSC over all `n` columns of its own rows.
//! 2. The global column pointer is the sum of the local ones (widened to 64 bits, one NCCL
//!    all-reduce); the column ranges cut it into parts of nearly equal nonzeros (the cut points
//!    found on rank 0's GPU by one binary search per boundary, read back at once).
//! 3. Each rank sends every other rank the contiguous part of its local CSC that falls in that
//!    rank's columns (the part's relative column pointer, row indices and values; grouped NCCL
//!    sends and receives).
//! 4. Each rank gathers the pieces, in rank order, one after another in each column (one pass
//!    over its share, `transpose_dist_gather_*`: each output entry finds its column from the
//!    share's pointer, then its piece; rows offset by the sender's first row). Pieces from lower
//!    ranks hold lower rows, so each column's rows stay sorted and equal entries keep their
//!    order: the one-GPU result.
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::{Comms, DeviceView, DeviceViewMut, Payload};
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use sptrans_matrix::dist::{AsDistCsrView, DistCsr};

use crate::{Algorithm, Error, Result, Transposer};

/// One [`Transposer`] per rank, for distributed transposes over a [`Comms`].
pub struct DistTransposer {
    tps: Vec<Transposer>,
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
    /// With [`DistTransposer::set_profile`]: seconds of each phase (`local`, `pointer`, `cuts`,
    /// `exchange`, and the place phase's `place: tables`, `place: pointer`, `place: columns`,
    /// `place: gather`), every rank synchronized around each.
    pub phases: Vec<(&'static str, f64)>,
}

impl DistTransposer {
    /// A transposer for each rank of `comms` (on its GPU and stream).
    ///
    /// # Errors
    /// As [`Transposer::new`].
    pub fn new(comms: &Comms) -> Result<Self> {
        let streams = comms.gpus().iter().map(|gpu| gpu.stream().cu_stream() as usize).collect();
        Ok(Self { tps: comms.gpus().iter().map(Transposer::new).collect::<Result<Vec<_>>>()?, profile: false, streams })
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
    /// [`Error::Shape`] when `a` is cut for another number of ranks than `comms` spans, the
    /// blocks held here are not this process's ranks', or another process's matrix has another
    /// column count or value type; [`Error::TooLarge`] when a rank's share of the transpose
    /// passes 32-bit offsets; `gpu_runtime::Error::ForeignStream` when `comms` is not the
    /// communicator this transposer was made with; [`Error::UnsupportedValue`]; NCCL and driver
    /// errors (out of memory among them).
    pub fn transpose<T: Payload>(&mut self, comms: &Comms, algo: Algorithm, a: &impl AsDistCsrView<T>) -> Result<(DistCsr<T>, Exchange)> {
        let a = a.dist_view();
        let (g, world, first) = (comms.len(), comms.world(), comms.first_rank());
        if a.row_starts().len() != world + 1 {
            return Err(Error::Shape { what: "blocks of the distributed matrix", expected: world as u64, got: a.row_starts().len() as u64 - 1 });
        }
        if a.blocks().len() != g || a.first_block() != first || self.tps.len() != g {
            return Err(Error::Shape {
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
        // 2. Each rank's column pointer widened (w), and the global one (gl: the all-reduced sum,
        // of the 32-bit pointers when the total fits them: half the bytes; known only when this
        // process holds every block).
        let narrow = a.is_whole() && a.nnz() <= u32::MAX as u64;
        let (mut w, mut gl, mut sum32) = (Vec::new(), Vec::new(), Vec::new());
        for l in 0..g {
            let gpu = &gpus[l];
            let stream = gpu.stream();
            let (mut ws, mut gs) = (gpu.alloc_zeros::<u64>(n as usize + 1)?, gpu.alloc_zeros::<u64>(n as usize + 1)?);
            let lp = DeviceView::of(local[l].ptr());
            self.tps[l].add_ptr(&mut DeviceViewMut::of(&mut ws), &lp)?;
            if !narrow {
                self.tps[l].add_ptr(&mut DeviceViewMut::of(&mut gs), &lp)?;
            }
            if narrow {
                let mut p32 = gpu.alloc::<u32>(n as usize + 1)?; // overwritten by the copy
                stream.memcpy_dtod(local[l].ptr(), &mut p32).map_err(gpu_runtime::Error::driver("copying a column pointer"))?;
                sum32.push(p32);
            }
            w.push(ws);
            gl.push(gs);
        }
        comms.group(|c| {
            for l in 0..g {
                let stream = gpus[l].stream();
                // SAFETY: n + 1 words on rank l's GPU, used next by this stream only.
                unsafe {
                    match sum32.get_mut(l) {
                        Some(p32) => c.all_reduce_sum_u32(l, p32.device_ptr_mut(stream).0, n as usize + 1)?,
                        None => c.all_reduce_sum_u64(l, gl[l].device_ptr_mut(stream).0, n as usize + 1)?,
                    }
                }
            }
            Ok(())
        })?;
        for (l, p32) in sum32.iter().enumerate() {
            self.tps[l].add_ptr(&mut DeviceViewMut::of(&mut gl[l]), &DeviceView::of(p32))?;
        }
        lap("pointer")?;
        // 3. The cut points (columns), found in the first local rank's global pointer: the same
        // on every rank of every process (the same words, the same search).
        let read = |l: usize, buf: &CudaSlice<u64>, i: u64| -> Result<u64> {
            let word =
                DeviceView::of(buf).try_slice(i as usize..i as usize + 1).ok_or(gpu_runtime::Error::Internal("a pointer word past its end"))?;
            // Synchronizes.
            Ok(gpus[l].download(&word)?[0])
        };
        let total = read(0, &gl[0], n)?;
        let mut cuts = vec![0u64; world + 1];
        cuts[world] = n;
        if total > 0 {
            // Rank r's range starts at the first column whose global pointer reaches
            // min(r · ceil(total / world), total): index64's chunk search, one launch and one
            // read-back (a bisection by single-word reads took 0.3–1.0 ms).
            let chunk = total.div_ceil(world as u64);
            let chunks = total.div_ceil(chunk);
            // Written whole below, from the global pointer: n + 1 nondecreasing words from 0 to
            // total > 0 (a sum of valid pointers). Synchronizes.
            let mut found = gpus[0].alloc::<u64>(2 * chunks as usize)?;
            let rows = self.tps[0].chunk_rows_of(&DeviceView::of(&gl[0]), total, chunk, &mut DeviceViewMut::of(&mut found))?;
            cuts = cuts_from_chunk_rows(&rows, world, n);
        }
        let glob: Vec<u64> = cuts.iter().map(|&c| read(0, &gl[0], c)).collect::<Result<_>>()?;
        // off[s][r]: where rank s's entries of rank r's columns start in its local CSC, for
        // every rank s (each rank reads its own row; the rows are shared).
        let own: Vec<Vec<u64>> = (0..g).map(|l| cuts.iter().map(|&c| read(l, &w[l], c)).collect::<Result<Vec<_>>>()).collect::<Result<_>>()?;
        let off = share_offsets(comms, &own, with_vals, n)?;
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
                self.tps[l].chunk_ptr_of(&DeviceView::of(&w[l]), cuts[r], (off[s][r], off[s][r + 1]), &mut part)?;
            }
            rel.push(buf);
        }
        lap("cuts")?;
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
        comms.group(|c| {
            for l in 0..g {
                let (stream, s) = (gpus[l].stream(), first + l);
                let (ra, _g0) = rel[l].device_ptr(stream);
                let (ia, _g1) = local[l].idx().device_ptr(stream);
                let va = local[l].vals().map(|v| v.device_ptr(stream).0).unwrap_or(0);
                for r in (0..world).filter(|&r| r != s) {
                    let (k0, cnt) = (off[s][r], off[s][r + 1] - off[s][r]);
                    let pb = 4 * (range(r) + 1);
                    // SAFETY: the part lies inside rank s's buffers: rel_at[r] + range(r) + 1
                    // words of rel[l]; entries k0 .. k0 + cnt of its local CSC. Nothing writes
                    // them until the stream passes the sends.
                    unsafe {
                        c.send_bytes(l, ra + 4 * rel_at[r], pb as usize, r)?;
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
                    let cnt = off[s][r + 1] - off[s][r];
                    let p = recv[l][s].as_mut().ok_or(gpu_runtime::Error::Internal("a receive buffer is missing"))?;
                    let (ra, _g0) = p.rel.device_ptr_mut(stream);
                    let (ia, _g1) = p.rows.device_ptr_mut(stream);
                    // SAFETY: each buffer was allocated above with room for what it receives.
                    unsafe {
                        c.recv_bytes(l, ra, 4 * (range(r) as usize + 1), s)?;
                        c.recv_bytes(l, ia, 4 * cnt as usize, s)?;
                        if let Some(v) = p.vals.as_mut() {
                            let (vaddr, _g2) = v.device_ptr_mut(stream);
                            c.recv_bytes(l, vaddr, (vb * cnt) as usize, s)?;
                        }
                    }
                }
            }
            Ok(())
        })?;
        lap("exchange")?;
        // 5. Each rank gathers the pieces, in rank order, column by column: one pass over its
        // share that writes each output word once (placing piece after piece scattered each
        // column's runs into partly written sectors: 10.5–11.5 ms of the 2^30 transpose on two
        // H200s). The pieces' tables first, for every rank (their copies from the host wait for
        // the exchange), then the passes, enqueued without waiting.
        let bad = || gpu_runtime::Error::Internal("a piece past its buffers");
        let mut tables = Vec::with_capacity(g);
        for l in 0..g {
            let r = first + l;
            let len = range(r) as usize;
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
            tables.push(gpus[l].upload(&crate::launch::gather_table(&pieces, len + 1, with_vals)?)?);
        }
        lap("place: tables")?;
        // The shares' pointers: the global one's words cuts[r] ..= cuts[r + 1], less glob[r]
        // (share <= MAX_NNZ).
        let mut outs = Vec::with_capacity(g);
        for l in 0..g {
            let (gpu, r) = (&gpus[l], first + l);
            let (len, share) = (range(r), glob[r + 1] - glob[r]);
            let mut parts = DeviceCsrParts::<T>::alloc(gpu, len, share, with_vals)?;
            self.tps[l].chunk_ptr_of(&DeviceView::of(&gl[l]), cuts[r], (glob[r], glob[r + 1]), &mut DeviceViewMut::of(&mut parts.ptr))?;
            outs.push(parts);
        }
        lap("place: pointer")?;
        // Each output entry's column.
        let mut cols = Vec::with_capacity(g);
        for l in 0..g {
            let share = (glob[first + l + 1] - glob[first + l]) as usize;
            let mut c = gpus[l].alloc::<u32>(share.max(1))?; // its first share words written by ptr2idx
            if share > 0 {
                let mut cv = DeviceViewMut::of(&mut c).try_into_slice(..share).ok_or_else(bad)?;
                self.tps[l].ptr2idx.run(&DeviceView::of(&outs[l].ptr), &mut cv)?;
            }
            cols.push(c);
        }
        lap("place: columns")?;
        let mut blocks = Vec::with_capacity(g);
        for (l, mut parts) in outs.into_iter().enumerate() {
            let r = first + l;
            let (len, share) = (range(r), glob[r + 1] - glob[r]);
            if share > 0 {
                let cv = DeviceView::of(&cols[l]).try_slice(..share as usize).ok_or_else(bad)?;
                let mut out_vals = parts.vals.as_mut().map(DeviceViewMut::of);
                let tp = &self.tps[l];
                // SAFETY: the table's pieces (the receive buffers and the local CSC) live until
                // the synchronization below, made for len + 1 words and values as the output;
                // cols is the expansion of the share's pointer (ptr2idx), so every word is
                // below len. The pieces' pointers sum, column by column, to the share's counts
                // (each rank's local CSC restricted to rank r's columns).
                unsafe {
                    crate::launch::gather_pieces(
                        &tp.gpu,
                        &tp.k,
                        &cv,
                        &DeviceView::of(&parts.ptr),
                        &DeviceView::of(&tables[l]),
                        &mut DeviceViewMut::of(&mut parts.idx),
                        out_vals.as_mut(),
                    )?
                };
            }
            // SAFETY: the pieces, gathered in rank order in each column, are the CSR of columns
            // cuts[r] .. cuts[r + 1] of the transpose: pointer from 0 to share, row indices < m,
            // values beside them.
            blocks.push(unsafe { DeviceCsr::from_parts_unchecked(len, m, parts) });
        }
        comms.synchronize()?;
        lap("place: gather")?;
        let out = DistCsr::from_local_blocks(n, m, cuts.clone(), first, blocks)?;
        Ok((out, Exchange { cuts, sent_bytes, phases }))
    }
}

/// Every rank's offsets `off[s][0 ..= world]` (where its entries of each rank's columns start in
/// its local CSC) on every rank of every process ([`Comms::share_rows`], with each rank's value
/// flag and column count beside them). [`Error::Shape`] when another process's matrix has
/// another column count or holds values where this one does not (the pieces' sizes would
/// disagree).
fn share_offsets(comms: &Comms, own: &[Vec<u64>], with_vals: bool, n: u64) -> Result<Vec<Vec<u64>>> {
    let world = comms.world();
    let rows: Vec<Vec<u64>> = own.iter().map(|o| o.iter().copied().chain([with_vals as u64, n]).collect()).collect();
    let all = comms.share_rows(&rows, world + 3)?;
    if let Some(other) = all.iter().find(|r| r[world + 2] != n || r[world + 1] != with_vals as u64) {
        return Err(Error::Shape { what: "columns (or values) of another process's blocks", expected: n, got: other[world + 2] });
    }
    Ok(all
        .into_iter()
        .map(|mut r| {
            r.truncate(world + 1);
            r
        })
        .collect())
}

/// The `g + 1` cut points from `transpose_index64_chunk_rows` over the global column pointer
/// with chunks of `ceil(total / g)` nonzeros (`rows[2c + 1]`: the first column whose pointer
/// reaches the end of chunk `c`): rank `r > 0` starts where chunk `r − 1` ends (the last chunk's
/// end for ranks past the chunks), rank 0 at 0, and the last range ends at `n`.
fn cuts_from_chunk_rows(rows: &[u64], g: usize, n: u64) -> Vec<u64> {
    let chunks = rows.len() / 2;
    let mut cuts = vec![0u64; g + 1];
    cuts[g] = n;
    for (r, cut) in cuts.iter_mut().enumerate().take(g).skip(1) {
        let c = (r - 1).min(chunks - 1);
        *cut = rows[2 * c + 1];
    }
    cuts
}

#[cfg(test)]
mod tests {
    use crate::index64::chunk_rows;

    /// The cuts from the device search's formula (evaluated on the host with the kernel's own
    /// `chunk_rows`) against their definition: rank r starts at the first column whose global
    /// pointer reaches min(r · ceil(total / g), total); nondecreasing; empty columns, one heavy
    /// column, fewer nonzeros than ranks.
    #[test]
    fn cuts_are_the_first_columns_reaching_each_share() {
        let counts: [&[u64]; 5] = [&[3, 0, 0, 5, 1, 1, 0, 9, 2], &[0, 0, 0, 1], &[100, 1, 1, 1], &[1, 1], &[0, 4, 0, 0, 4, 0]];
        for c in counts {
            let mut ptr = vec![0u64];
            for &k in c {
                ptr.push(ptr.last().unwrap() + k);
            }
            let (n, total) = (c.len() as u64, *ptr.last().unwrap());
            for g in 1..=5usize {
                let chunk = total.div_ceil(g as u64);
                let chunks = total.div_ceil(chunk);
                let mut rows = Vec::new();
                for k in 0..chunks {
                    let (k0, k1) = (k * chunk, ((k + 1) * chunk).min(total));
                    let (r0, r1) = chunk_rows(&|i| ptr[i as usize], n, k0, k1);
                    rows.extend([r0, r1]);
                }
                let cuts = super::cuts_from_chunk_rows(&rows, g, n);
                assert_eq!((cuts[0], cuts[g]), (0, n));
                for r in 1..g {
                    let target = (r as u64 * chunk).min(total);
                    let want = ptr.iter().position(|&p| p >= target).unwrap() as u64;
                    assert_eq!(cuts[r], want, "counts {c:?}, {g} ranks, rank {r}");
                    assert!(cuts[r] >= cuts[r - 1]);
                }
            }
        }
    }
}
