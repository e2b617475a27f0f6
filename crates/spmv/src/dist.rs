//! `y = α A x + β y` with `A` spread over several GPUs by row blocks ([`DistCsr`]), over NCCL
//! ([`Comms`]): [`DistSpmv`].
//!
//! `x` and `y` are distributed too: rank `r` holds the rows `row_starts[r] .. row_starts[r + 1]`
//! of `y` and the entries [`DistSpmv::x_starts`]`[r] .. [r + 1]` of `x` (the row starts again for
//! a square matrix, equal parts of the columns otherwise). Each product first brings every rank
//! the entries of `x` its block reads into a full-length copy, in one of two ways ([`XGather`]):
//!
//! - **all-gather**: every rank's whole part to every other rank (one NCCL broadcast per rank's
//!   part, all in one group: an all-gather of unequal parts);
//! - **halo**: only the entries a rank's block reads outside its own part: the owners pack them
//!   (one gather kernel), grouped NCCL sends and receives move them, the readers unpack them into
//!   their full `x` (one scatter kernel), and each rank copies its own part beside them. The plan
//!   finds the entries by reading each block's column indices back once.
//!
//! [`XGather::Auto`] takes the halo when the busiest rank would receive at most half as many
//! entries as by the all-gather (the halo pays two more passes over what it moves and a message
//! per pair); the 27-point stencil in natural order is the case it is for, uniform and randomly
//! numbered matrices touch nearly every column and keep the all-gather. Then each rank
//! multiplies its block by its full `x` with a one-GPU [`Spmv`] plan of the chosen format.
//!
//! Each rank's rows of `y` are computed by the same kernel from the same values as on one GPU,
//! so for the deterministic formats ([`Format::is_deterministic`]) the result equals the
//! one-GPU product bit for bit.
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::{Comms, Kernel};
use sptrans_matrix::dist::{even_starts, DistCsr};

use crate::{Error, Format, Result, Spmv, SpmvValue};

/// How a distributed product brings each rank the entries of `x` it reads (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XGather {
    /// Every rank's whole part of `x` to every rank.
    AllGather,
    /// Only the entries each block reads outside its own part.
    Halo,
    /// The halo when the busiest rank receives at most half the all-gather's entries, else the
    /// all-gather (the plan reads the column indices back to decide).
    Auto,
}

/// The halo exchange's lists, per rank.
struct Halo<T> {
    pack: Vec<Kernel>,
    unpack: Vec<Kernel>,
    /// On rank `s`: offsets into its part of `x` of the entries it sends, rank by rank.
    send_at: Vec<CudaSlice<u32>>,
    send_buf: Vec<CudaSlice<T>>,
    /// `send_off[s][r]`: where rank `s`'s entries for rank `r` start in its send buffer
    /// (`ranks + 1` entries).
    send_off: Vec<Vec<u64>>,
    /// On rank `r`: the global columns of the entries it receives, rank by rank.
    recv_at: Vec<CudaSlice<u32>>,
    recv_buf: Vec<CudaSlice<T>>,
    /// `recv_off[r][s]`: where rank `r`'s entries from rank `s` start (`ranks + 1` entries).
    recv_off: Vec<Vec<u64>>,
}

/// A distributed SpMV plan: one [`Spmv`] per rank over its block, a full-length `x` buffer per
/// rank (unused with one rank) and, for the halo, the exchange's lists (see the module docs).
/// Converts once; each [`DistSpmv::apply`] allocates nothing.
pub struct DistSpmv<'a, T: SpmvValue> {
    plans: Vec<Spmv<'a, T>>,
    full: Vec<CudaSlice<T>>,
    row_starts: Vec<u64>,
    x_starts: Vec<u64>,
    halo: Option<Halo<T>>,
    received: Vec<u64>,
    /// Each rank's stream at planning: `apply` takes only the same communicator.
    streams: Vec<usize>,
}

impl<'a, T: SpmvValue> DistSpmv<'a, T> {
    /// [`DistSpmv::with_gather`] with [`XGather::Auto`].
    ///
    /// # Errors
    /// As [`DistSpmv::with_gather`].
    pub fn new(comms: &Comms, a: &'a DistCsr<T>, format: Format) -> Result<Self> {
        Self::with_gather(comms, a, format, XGather::Auto)
    }

    /// Plans the product for `a` over `comms` (block `r` on rank `r`): converts each block to
    /// `format` ([`Spmv::new`]; [`Format::Auto`] chooses per block), allocates each rank's full
    /// `x` (`cols` values), and for the halo (or [`XGather::Auto`]) reads every block's column
    /// indices back to list the entries each rank needs from the others (synchronizes; host
    /// memory of one block's indices at a time), uploading the lists.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `a` has another number of blocks than `comms` has ranks (or
    /// this process holds only some); `gpu_runtime::Error::MultiProcess` for a communicator of
    /// one process per GPU; as [`Spmv::new`] (a pattern matrix, ELL on uneven rows, out of memory).
    pub fn with_gather(comms: &Comms, a: &'a DistCsr<T>, format: Format, gather: XGather) -> Result<Self> {
        comms.require_single_process("the distributed SpMV")?;
        let g = comms.len();
        if a.blocks().len() != g || !a.is_whole() {
            return Err(Error::LengthMismatch { what: "blocks of the distributed matrix", expected: g as u64, got: a.row_starts().len() as u64 - 1 });
        }
        let gpus = comms.gpus();
        let plans = a.blocks().iter().zip(gpus).map(|(b, gpu)| Spmv::new(gpu, b.view(), format)).collect::<Result<Vec<_>>>()?;
        let x_starts = if a.rows() == a.cols() { a.row_starts().to_vec() } else { even_starts(a.cols(), g) };
        let streams = gpus.iter().map(|gpu| gpu.stream().cu_stream() as usize).collect();
        let mut out = Self { plans, full: Vec::new(), row_starts: a.row_starts().to_vec(), x_starts, halo: None, received: vec![0; g], streams };
        if g == 1 {
            return Ok(out);
        }
        // Every entry a product reads is written by its exchange first.
        out.full = gpus.iter().map(|gpu| gpu.alloc::<T>(a.cols() as usize)).collect::<gpu_runtime::Result<Vec<_>>>()?;
        let n = a.cols();
        let gathered: Vec<u64> = (0..g).map(|r| n - (out.x_starts[r + 1] - out.x_starts[r])).collect();
        out.received = gathered.clone();
        if gather == XGather::AllGather {
            return Ok(out);
        }
        // needed[r]: the global columns block r reads outside its own part, ascending.
        let mut needed = Vec::with_capacity(g);
        for (r, b) in a.blocks().iter().enumerate() {
            let idx = gpus[r].download(b.idx())?;
            let cols = outside_columns(&idx, out.x_starts[r], out.x_starts[r + 1], n);
            drop(idx);
            needed.push(cols);
        }
        let halo_max = needed.iter().map(|c| c.len() as u64).max().unwrap_or(0);
        let gather_max = gathered.iter().copied().max().unwrap_or(0);
        if gather == XGather::Auto && 2 * halo_max > gather_max {
            return Ok(out);
        }
        out.received = needed.iter().map(|c| c.len() as u64).collect();
        let lists = HaloLists::new(&out.x_starts, &needed);
        let name = |what: &str| format!("spmv_halo_{what}_{}", T::NAME);
        let halo = Halo {
            pack: gpus.iter().map(|gpu| gpu.kernel(&crate::MODULE, &name("pack"))).collect::<gpu_runtime::Result<_>>()?,
            unpack: gpus.iter().map(|gpu| gpu.kernel(&crate::MODULE, &name("unpack"))).collect::<gpu_runtime::Result<_>>()?,
            send_at: (0..g).map(|s| gpus[s].upload(&lists.send[s])).collect::<gpu_runtime::Result<_>>()?,
            // Written whole by the pack kernel before each send.
            send_buf: (0..g).map(|s| gpus[s].alloc::<T>(lists.send[s].len())).collect::<gpu_runtime::Result<_>>()?,
            send_off: lists.send_off,
            recv_at: (0..g).map(|r| gpus[r].upload(&needed[r])).collect::<gpu_runtime::Result<_>>()?,
            // Written whole by the receives before the unpack kernel reads it.
            recv_buf: (0..g).map(|r| gpus[r].alloc::<T>(needed[r].len())).collect::<gpu_runtime::Result<_>>()?,
            recv_off: lists.recv_off,
        };
        out.halo = Some(halo);
        Ok(out)
    }

    /// Where each rank's rows of `y` start (`ranks + 1` entries): the matrix's row starts.
    pub fn row_starts(&self) -> &[u64] {
        &self.row_starts
    }

    /// Where each rank's part of `x` starts (`ranks + 1` entries, ending at the column count).
    pub fn x_starts(&self) -> &[u64] {
        &self.x_starts
    }

    /// The way chosen: [`XGather::AllGather`] or [`XGather::Halo`] (one rank: `AllGather`, which
    /// then moves nothing).
    pub fn gather(&self) -> XGather {
        if self.halo.is_some() {
            XGather::Halo
        } else {
            XGather::AllGather
        }
    }

    /// `x` (all `cols` entries, on the host) cut into this plan's parts, part `r` uploaded to
    /// rank `r`'s GPU: the `x` of [`DistSpmv::apply`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for an `x` of another length or a communicator of another
    /// number of ranks; device errors.
    pub fn scatter_x(&self, comms: &Comms, x: &[T]) -> Result<Vec<CudaSlice<T>>> {
        self.parts(comms, &self.x_starts, "entries of x", |gpu, r| gpu.upload(&x[r]), x.len())
    }

    /// `y` (all `rows` entries, on the host) cut into its parts, part `r` uploaded to rank `r`'s
    /// GPU: the `y` of [`DistSpmv::apply`] with `β ≠ 0`.
    ///
    /// # Errors
    /// As [`DistSpmv::scatter_x`].
    pub fn scatter_y(&self, comms: &Comms, y: &[T]) -> Result<Vec<CudaSlice<T>>> {
        self.parts(comms, &self.row_starts, "rows of y", |gpu, r| gpu.upload(&y[r]), y.len())
    }

    /// `y`'s parts, zeroed, part `r` (rows `row_starts[r] .. row_starts[r + 1]`) on rank `r`'s
    /// GPU: the `y` of [`DistSpmv::apply`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for a communicator of another number of ranks; device errors.
    pub fn alloc_y(&self, comms: &Comms) -> Result<Vec<CudaSlice<T>>> {
        let rows = *self.row_starts.last().unwrap_or(&0) as usize;
        self.parts(comms, &self.row_starts, "rows of y", |gpu, r| gpu.alloc_zeros::<T>(r.len()), rows)
    }

    /// The parts of `y` downloaded (each rank's GPU synchronized) and joined: all `rows` entries
    /// on the host.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for another number of parts than ranks, or a part of another
    /// length than its rows; device errors.
    pub fn gather_y<Y: DevicePtr<T>>(&self, comms: &Comms, y: &[Y]) -> Result<Vec<T>> {
        let g = self.plans.len();
        if y.len() != g || comms.len() != g {
            return Err(Error::LengthMismatch { what: "parts of y", expected: g as u64, got: y.len().min(comms.len()) as u64 });
        }
        let mut out = Vec::with_capacity(*self.row_starts.last().unwrap_or(&0) as usize);
        for (r, part) in y.iter().enumerate() {
            let want = self.row_starts[r + 1] - self.row_starts[r];
            if part.len() as u64 != want {
                return Err(Error::LengthMismatch { what: "rows of a part of y", expected: want, got: part.len() as u64 });
            }
            out.extend(comms.gpus()[r].download(part)?);
        }
        Ok(out)
    }

    /// One buffer per rank made by `make(gpu, range)` over `starts`' ranges of a vector of
    /// `len` entries.
    fn parts(
        &self,
        comms: &Comms,
        starts: &[u64],
        what: &'static str,
        make: impl Fn(&gpu_runtime::Gpu, std::ops::Range<usize>) -> gpu_runtime::Result<CudaSlice<T>>,
        len: usize,
    ) -> Result<Vec<CudaSlice<T>>> {
        let g = self.plans.len();
        if comms.len() != g {
            return Err(Error::LengthMismatch { what: "ranks of the communicator", expected: g as u64, got: comms.len() as u64 });
        }
        let total = *starts.last().unwrap_or(&0);
        if len as u64 != total {
            return Err(Error::LengthMismatch { what, expected: total, got: len as u64 });
        }
        Ok((0..g).map(|r| make(&comms.gpus()[r], starts[r] as usize..starts[r + 1] as usize)).collect::<gpu_runtime::Result<Vec<_>>>()?)
    }

    /// Entries of `x` each rank receives from the others per product.
    pub fn received(&self) -> &[u64] {
        &self.received
    }

    /// The format of each rank's plan (for [`Format::Auto`], the one chosen for its block).
    pub fn formats(&self) -> Vec<Format> {
        self.plans.iter().map(Spmv::format).collect()
    }

    /// Device bytes held per rank: the block in its format ([`Spmv::footprint_bytes`]), the
    /// full `x`, and the halo's lists and buffers.
    pub fn footprint_bytes(&self) -> Vec<u64> {
        let tb = T::BYTES as u64;
        (0..self.plans.len())
            .map(|r| {
                let halo = self
                    .halo
                    .as_ref()
                    .map_or(0, |h| 4 * (h.send_at[r].len() + h.recv_at[r].len()) as u64 + tb * (h.send_buf[r].len() + h.recv_buf[r].len()) as u64);
                self.plans[r].footprint_bytes() + self.full.get(r).map_or(0, |f| tb * f.len() as u64) + halo
            })
            .collect()
    }

    /// `y = α A x + β y`: `x[r]` is rank `r`'s part of `x` ([`DistSpmv::x_starts`]), `y[r]` its
    /// rows of `y` ([`DistSpmv::row_starts`]), each on rank `r`'s GPU; with `β == 0`, `y` is not
    /// read. Enqueued on every rank's stream without synchronizing; allocates nothing.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `comms`, `x` or `y` has another number of ranks or parts
    /// than the plan, or a part another length than its range; `gpu_runtime::Error::ForeignStream`
    /// when `comms` is not the communicator the plan was made with; NCCL and launch errors.
    pub fn apply<X: DevicePtr<T>, Y: DevicePtrMut<T>>(&mut self, comms: &Comms, alpha: T, x: &[X], beta: T, y: &mut [Y]) -> Result<()> {
        let g = self.plans.len();
        if comms.len() != g {
            return Err(Error::LengthMismatch { what: "ranks of the communicator", expected: g as u64, got: comms.len() as u64 });
        }
        if comms.gpus().iter().zip(&self.streams).any(|(gpu, &s)| gpu.stream().cu_stream() as usize != s) {
            return Err(Error::Runtime(gpu_runtime::Error::ForeignStream));
        }
        if x.len() != g {
            return Err(Error::LengthMismatch { what: "parts of x", expected: g as u64, got: x.len() as u64 });
        }
        if y.len() != g {
            return Err(Error::LengthMismatch { what: "parts of y", expected: g as u64, got: y.len() as u64 });
        }
        for r in 0..g {
            let want = self.x_starts[r + 1] - self.x_starts[r];
            if x[r].len() as u64 != want {
                return Err(Error::LengthMismatch { what: "a rank's part of x", expected: want, got: x[r].len() as u64 });
            }
            let want = self.row_starts[r + 1] - self.row_starts[r];
            if y[r].len() as u64 != want {
                return Err(Error::LengthMismatch { what: "a rank's rows of y", expected: want, got: y[r].len() as u64 });
            }
        }
        if g == 1 {
            // One rank: its part is the whole x.
            return self.plans[0].apply(alpha, &x[0], beta, &mut y[0]);
        }
        match self.halo.as_mut() {
            None => all_gather(comms, &self.x_starts, x, &mut self.full)?,
            Some(h) => halo_exchange(comms, &self.x_starts, h, x, &mut self.full)?,
        }
        for ((p, f), yr) in self.plans.iter_mut().zip(&self.full).zip(y.iter_mut()) {
            p.apply(alpha, f, beta, yr)?;
        }
        Ok(())
    }
}

/// Every rank's part of `x` into every rank's full `x`: one broadcast per nonempty part, in one
/// group.
fn all_gather<T: SpmvValue, X: DevicePtr<T>>(comms: &Comms, starts: &[u64], x: &[X], full: &mut [CudaSlice<T>]) -> Result<()> {
    let (g, gpus, tb) = (comms.len(), comms.gpus(), T::BYTES as u64);
    comms.group(|c| {
        for root in 0..g {
            let len = starts[root + 1] - starts[root];
            if len == 0 {
                continue;
            }
            let (send, _gs) = x[root].device_ptr(gpus[root].stream());
            for (r, f) in full.iter_mut().enumerate() {
                let (fa, _gf) = f.device_ptr_mut(gpus[r].stream());
                // SAFETY: the root's part holds len values (checked by the caller); each rank's
                // full x holds cols >= starts[root] + len values; nothing else uses them until the
                // stream passes the broadcast.
                unsafe { c.broadcast_bytes(r, send, fa + tb * starts[root], (tb * len) as usize, root)? };
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// The halo exchange (module docs): pack, own part copied, send/receive, unpack.
fn halo_exchange<T: SpmvValue, X: DevicePtr<T>>(comms: &Comms, starts: &[u64], h: &mut Halo<T>, x: &[X], full: &mut [CudaSlice<T>]) -> Result<()> {
    let (g, gpus, tb) = (comms.len(), comms.gpus(), T::BYTES as u64);
    for s in 0..g {
        let stream = gpus[s].stream();
        let n = h.send_at[s].len() as u64;
        if n > 0 {
            let (xa, _gx) = x[s].device_ptr(stream);
            // SAFETY: spmv_halo_pack(n, at, x, out): at and out hold n entries; every offset is
            // below rank s's part's length (built from its columns minus its first one).
            unsafe {
                h.pack[s].args(stream).arg(&n).arg(&h.send_at[s]).arg(&xa).arg(&mut h.send_buf[s]).launch(crate::launch::grid(&gpus[s], n))?;
            }
        }
        let (x0, x1) = (starts[s] as usize, starts[s + 1] as usize);
        if x1 > x0 {
            let mut own = full[s].slice_mut(x0..x1);
            stream.memcpy_dtod(&x[s], &mut own).map_err(gpu_runtime::Error::driver("copying a rank's own part of x"))?;
        }
    }
    comms.group(|c| {
        for (s, gpu) in gpus.iter().enumerate() {
            let (sa, _g0) = h.send_buf[s].device_ptr(gpu.stream());
            for r in (0..g).filter(|&r| r != s) {
                let (k0, k1) = (h.send_off[s][r], h.send_off[s][r + 1]);
                if k1 > k0 {
                    // SAFETY: entries k0 .. k1 of rank s's send buffer, left alone until the
                    // stream passes the send.
                    unsafe { c.send_bytes(s, sa + tb * k0, (tb * (k1 - k0)) as usize, r)? };
                }
            }
        }
        for (r, gpu) in gpus.iter().enumerate() {
            let (ra, _g1) = h.recv_buf[r].device_ptr_mut(gpu.stream());
            for s in (0..g).filter(|&s| s != r) {
                let (k0, k1) = (h.recv_off[r][s], h.recv_off[r][s + 1]);
                if k1 > k0 {
                    // SAFETY: entries k0 .. k1 of rank r's receive buffer (as many as rank s
                    // sends it: both lists come from needed[r]).
                    unsafe { c.recv_bytes(r, ra + tb * k0, (tb * (k1 - k0)) as usize, s)? };
                }
            }
        }
        Ok(())
    })?;
    for r in 0..g {
        let n = h.recv_at[r].len() as u64;
        if n > 0 {
            // SAFETY: spmv_halo_unpack(n, at, vals, x): at and vals hold n entries; the columns
            // are distinct and below cols, the full x's length.
            unsafe {
                h.unpack[r]
                    .args(gpus[r].stream())
                    .arg(&n)
                    .arg(&h.recv_at[r])
                    .arg(&h.recv_buf[r])
                    .arg(&mut full[r])
                    .launch(crate::launch::grid(&gpus[r], n))?;
            }
        }
    }
    Ok(())
}

/// The distinct columns of `idx` outside `lo .. hi`, ascending (a bitmap of `n` bits).
fn outside_columns(idx: &[u32], lo: u64, hi: u64, n: u64) -> Vec<u32> {
    let mut seen = vec![0u64; (n as usize).div_ceil(64)];
    for &c in idx {
        let c = c as u64;
        if c < lo || c >= hi {
            seen[(c / 64) as usize] |= 1 << (c % 64);
        }
    }
    let mut cols = Vec::new();
    for (w, &bits) in seen.iter().enumerate() {
        let mut b = bits;
        while b != 0 {
            cols.push((w * 64) as u32 + b.trailing_zeros());
            b &= b - 1;
        }
    }
    cols
}

/// The halo's lists on the host, from `needed[r]` (the columns rank `r` reads outside its part,
/// ascending) and the parts' starts: what each rank sends (offsets into its part, rank by rank)
/// and where each rank's entries from each owner start.
struct HaloLists {
    send: Vec<Vec<u32>>,
    send_off: Vec<Vec<u64>>,
    recv_off: Vec<Vec<u64>>,
}

impl HaloLists {
    fn new(x_starts: &[u64], needed: &[Vec<u32>]) -> Self {
        let g = needed.len();
        // recv_off[r][s]: needed[r] is ascending, so the columns of owner s are one run.
        let recv_off: Vec<Vec<u64>> =
            needed.iter().map(|c| x_starts.iter().map(|&x0| c.partition_point(|&v| (v as u64) < x0) as u64).collect()).collect();
        let mut send_off = vec![vec![0u64; g + 1]; g];
        let mut send = vec![Vec::new(); g];
        for s in 0..g {
            for r in 0..g {
                send_off[s][r] = send[s].len() as u64;
                if r != s {
                    let (k0, k1) = (recv_off[r][s] as usize, recv_off[r][s + 1] as usize);
                    send[s].extend(needed[r][k0..k1].iter().map(|&c| (c as u64 - x_starts[s]) as u32));
                }
            }
            send_off[s][g] = send[s].len() as u64;
        }
        Self { send, send_off, recv_off }
    }
}

#[cfg(test)]
mod tests {
    /// The halo's lists against a direct reading: each rank receives, from each owner, exactly
    /// the columns it reads in that owner's part, and the owner sends those entries in order.
    #[test]
    fn halo_lists_match_what_each_rank_reads() {
        let x_starts = [0u64, 4, 4, 9, 12];
        // Rank r's block reads these columns (repeats and its own columns included).
        let reads: [&[u32]; 4] = [&[0, 11, 5, 5, 3, 8], &[1, 2, 3], &[4, 8, 0, 11, 2], &[11, 10, 9, 4]];
        let needed: Vec<Vec<u32>> = (0..4).map(|r| super::outside_columns(reads[r], x_starts[r], x_starts[r + 1], 12)).collect();
        assert_eq!(needed, vec![vec![5, 8, 11], vec![1, 2, 3], vec![0, 2, 11], vec![4]]);
        let l = super::HaloLists::new(&x_starts, &needed);
        for r in 0..4 {
            for s in 0..4 {
                let got = &needed[r][l.recv_off[r][s] as usize..l.recv_off[r][s + 1] as usize];
                let want: Vec<u32> = needed[r].iter().copied().filter(|&c| (c as u64) >= x_starts[s] && (c as u64) < x_starts[s + 1]).collect();
                assert_eq!(got, &want[..], "rank {r} from {s}");
                let sent: Vec<u32> =
                    l.send[s][l.send_off[s][r] as usize..l.send_off[s][r + 1] as usize].iter().map(|&o| o + x_starts[s] as u32).collect();
                assert_eq!(sent, if r == s { vec![] } else { want }, "rank {s} to {r}");
            }
        }
    }
}
