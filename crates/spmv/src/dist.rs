//! `y = α A x + β y` with `A` spread over several GPUs by row blocks ([`DistCsr`](sptrans_matrix::dist::DistCsr)), over NCCL
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
//! With one process per GPU ([`Comms::from_env`], a [`DistCsr`](sptrans_matrix::dist::DistCsr) of this process's blocks) every
//! process plans and applies its own ranks and makes the same calls; planning the halo then
//! shares each rank's counts (an NCCL all-reduce of a `world × world` table) and sends every
//! owner the offsets it is asked for, checked against its part before any kernel reads by them.
//!
//! Each rank's rows of `y` are computed by the same kernel from the same values as on one GPU,
//! so for the deterministic formats ([`Format::is_deterministic`]) the result equals the
//! one-GPU product bit for bit.
use gpu_dist::Comms;
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::{arg_ptr, arg_ptr_mut, KernelOf};
use spmv_kernels::HaloArgs;
use sptrans_matrix::dist::{even_starts, AsDistCsrView};

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

/// The halo exchange's lists, per local rank (global peers).
struct Halo<T> {
    pack: Vec<KernelOf<HaloArgs<T>>>,
    unpack: Vec<KernelOf<HaloArgs<T>>>,
    /// On local rank `l` (global `s`): offsets into its part of `x` of the entries it sends,
    /// peer by peer.
    send_at: Vec<CudaSlice<u32>>,
    send_buf: Vec<CudaSlice<T>>,
    /// `send_off[l][r]`: where the entries for global rank `r` start in local rank `l`'s send
    /// buffer (`world + 1` entries).
    send_off: Vec<Vec<u64>>,
    /// On local rank `l`: the global columns of the entries it receives, owner by owner.
    recv_at: Vec<CudaSlice<u32>>,
    recv_buf: Vec<CudaSlice<T>>,
    /// `recv_off[l][s]`: where local rank `l`'s entries from global rank `s` start (`world + 1`
    /// entries).
    recv_off: Vec<Vec<u64>>,
}

/// A distributed SpMV plan: one [`Spmv`] per rank of this process over its block, a full-length
/// `x` buffer per rank (unused with one rank) and, for the halo, the exchange's lists (see the
/// module docs). Converts once; each [`DistSpmv::apply`] allocates nothing. With one process
/// per GPU ([`Comms::from_env`]) each process plans and applies its own ranks; every process
/// makes the same calls.
pub struct DistSpmv<'a, T: SpmvValue> {
    plans: Vec<Spmv<'a, T>>,
    full: Vec<CudaSlice<T>>,
    row_starts: Vec<u64>,
    x_starts: Vec<u64>,
    /// The global rank of this process's first rank.
    first: usize,
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
    pub fn new(comms: &Comms, a: &'a impl AsDistCsrView<T>, format: Format) -> Result<Self> {
        Self::with_gather(comms, a, format, XGather::Auto)
    }

    /// Plans the product for `a` over `comms` (block `r` on rank `r`; with one process per GPU,
    /// this process's blocks on its ranks, [`DistCsr::read_ranks`](sptrans_matrix::dist::DistCsr::read_ranks) or
    /// [`DistCsr::scatter_ranks`](sptrans_matrix::dist::DistCsr::scatter_ranks)): converts each block held here to `format` ([`Spmv::new`];
    /// [`Format::Auto`] chooses per block), allocates each rank's full `x` (`cols` values), and
    /// for the halo (or [`XGather::Auto`]) reads the blocks' column indices back to list the
    /// entries each rank needs from the others, then tells every owner what to send (an NCCL
    /// all-reduce of the counts, grouped sends of the lists; synchronizes; host memory of one
    /// block's indices at a time). Every rank of every process must call it.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `a` is cut for another number of ranks than `comms` spans,
    /// or the blocks held here are not this process's ranks'; as [`Spmv::new`] (a pattern
    /// matrix, ELL or SELL-C-σ on uneven rows, out of memory); NCCL errors.
    pub fn with_gather(comms: &Comms, a: &'a impl AsDistCsrView<T>, format: Format, gather: XGather) -> Result<Self> {
        let a = a.dist_view();
        let (g, world, first) = (comms.len(), comms.world(), comms.first_rank());
        if a.row_starts().len() != world + 1 {
            return Err(Error::LengthMismatch {
                what: "blocks of the distributed matrix",
                expected: world as u64,
                got: a.row_starts().len() as u64 - 1,
            });
        }
        if a.blocks().len() != g || a.first_block() != first {
            return Err(Error::LengthMismatch {
                what: "blocks of the distributed matrix held by this process",
                expected: g as u64,
                got: a.blocks().len() as u64,
            });
        }
        let gpus = comms.gpus();
        let plans = a.blocks().iter().zip(gpus).map(|(b, gpu)| Spmv::new(gpu, b.clone(), format)).collect::<Result<Vec<_>>>()?;
        let x_starts = if a.rows() == a.cols() { a.row_starts().to_vec() } else { even_starts(a.cols(), world) };
        let streams = gpus.iter().map(|gpu| gpu.stream().cu_stream() as usize).collect();
        let mut out =
            Self { plans, full: Vec::new(), row_starts: a.row_starts().to_vec(), x_starts, first, halo: None, received: vec![0; world], streams };
        if world == 1 {
            return Ok(out);
        }
        // Every entry a product reads is written by its exchange first.
        out.full = gpus.iter().map(|gpu| gpu.alloc::<T>(a.cols() as usize)).collect::<gpu_runtime::Result<Vec<_>>>()?;
        let n = a.cols();
        let gathered: Vec<u64> = (0..world).map(|r| n - (out.x_starts[r + 1] - out.x_starts[r])).collect();
        out.received = gathered.clone();
        if gather == XGather::AllGather {
            return Ok(out);
        }
        // needed[l]: the global columns local block l reads outside its own part, ascending.
        let mut needed = Vec::with_capacity(g);
        for (l, b) in a.blocks().iter().enumerate() {
            let idx = gpus[l].download(b.idx())?;
            let cols = outside_columns(&idx, out.x_starts[first + l], out.x_starts[first + l + 1], n);
            drop(idx);
            needed.push(cols);
        }
        let recv_off: Vec<Vec<u64>> = needed.iter().map(|c| runs_by_owner(c, &out.x_starts)).collect();
        // counts[r][s]: entries global rank r receives from rank s, shared by every rank.
        let own: Vec<Vec<u64>> = recv_off.iter().map(|o| o.windows(2).map(|w| w[1] - w[0]).collect()).collect();
        let counts = comms.share_rows(&own, world)?;
        let received: Vec<u64> = counts.iter().map(|row| row.iter().sum()).collect();
        let halo_max = received.iter().copied().max().unwrap_or(0);
        let gather_max = gathered.iter().copied().max().unwrap_or(0);
        if gather == XGather::Auto && 2 * halo_max > gather_max {
            return Ok(out);
        }
        out.received = received;
        let send_off: Vec<Vec<u64>> = (0..g).map(|l| send_offsets(&counts, first + l)).collect();
        let name = |what: &str| format!("spmv_halo_{what}_{}", T::NAME);
        let mut halo = Halo {
            pack: gpus.iter().map(|gpu| gpu.kernel_of(&crate::MODULE, &name("pack"))).collect::<gpu_runtime::Result<_>>()?,
            unpack: gpus.iter().map(|gpu| gpu.kernel_of(&crate::MODULE, &name("unpack"))).collect::<gpu_runtime::Result<_>>()?,
            // Written whole by the owners' requests below.
            send_at: (0..g).map(|l| gpus[l].alloc::<u32>(send_off[l][world] as usize)).collect::<gpu_runtime::Result<_>>()?,
            // Written whole by the pack kernel before each send.
            send_buf: (0..g).map(|l| gpus[l].alloc::<T>(send_off[l][world] as usize)).collect::<gpu_runtime::Result<_>>()?,
            send_off,
            recv_at: (0..g).map(|l| gpus[l].upload(&needed[l])).collect::<gpu_runtime::Result<_>>()?,
            // Written whole by the receives before the unpack kernel reads it.
            recv_buf: (0..g).map(|l| gpus[l].alloc::<T>(needed[l].len())).collect::<gpu_runtime::Result<_>>()?,
            recv_off,
        };
        // Each reader sends each owner the offsets (into the owner's part) of what it needs.
        let requests: Vec<Vec<u32>> = (0..g).map(|l| owner_offsets(&needed[l], &halo.recv_off[l], &out.x_starts)).collect();
        let requests = (0..g).map(|l| gpus[l].upload(&requests[l])).collect::<gpu_runtime::Result<Vec<_>>>()?;
        comms.group(|c| {
            for l in 0..g {
                let me = first + l;
                let stream = gpus[l].stream();
                let (at, _ga) = halo.send_at[l].device_ptr_mut(stream);
                let (rq, _gr) = requests[l].device_ptr(stream);
                for r in (0..world).filter(|&r| r != me) {
                    let (k0, k1) = (halo.send_off[l][r], halo.send_off[l][r + 1]);
                    if k1 > k0 {
                        // SAFETY: entries k0 .. k1 of the send list (rank r's count of this owner).
                        unsafe { c.recv_bytes(l, at + 4 * k0, (4 * (k1 - k0)) as usize, r)? };
                    }
                    let (k0, k1) = (halo.recv_off[l][r], halo.recv_off[l][r + 1]);
                    if k1 > k0 {
                        // SAFETY: entries k0 .. k1 of the requests, left alone until synchronized.
                        unsafe { c.send_bytes(l, rq + 4 * k0, (4 * (k1 - k0)) as usize, r)? };
                    }
                }
            }
            Ok(())
        })?;
        comms.synchronize()?;
        drop(requests);
        // Another process's requests are checked before a kernel gathers by them: each offset
        // inside this rank's part (processes holding different matrices would break this).
        for (l, gpu) in gpus.iter().enumerate() {
            let len = out.x_starts[first + l + 1] - out.x_starts[first + l];
            if let Some(&bad) = gpu.download(&halo.send_at[l])?.iter().find(|&&o| o as u64 >= len) {
                return Err(Error::Invalid {
                    format: "distributed halo",
                    reason: format!("rank {} was asked for entry {bad} of its {len} of x", first + l),
                });
            }
        }
        out.halo = Some(halo);
        Ok(out)
    }

    /// Where each rank's rows of `y` start (`world + 1` entries): the matrix's row starts.
    pub fn row_starts(&self) -> &[u64] {
        &self.row_starts
    }

    /// Where each rank's part of `x` starts (`world + 1` entries, ending at the column count).
    pub fn x_starts(&self) -> &[u64] {
        &self.x_starts
    }

    /// The way chosen: [`XGather::AllGather`] or [`XGather::Halo`] (one rank: `AllGather`, which
    /// then moves nothing). The same on every rank of every process.
    pub fn gather(&self) -> XGather {
        if self.halo.is_some() {
            XGather::Halo
        } else {
            XGather::AllGather
        }
    }

    /// `x` (all `cols` entries, on the host) cut into this plan's parts, the part of each rank of
    /// this process uploaded to its GPU: the `x` of [`DistSpmv::apply`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for an `x` of another length or a communicator of another
    /// number of ranks; device errors.
    pub fn scatter_x(&self, comms: &Comms, x: &[T]) -> Result<Vec<CudaSlice<T>>> {
        self.parts(comms, &self.x_starts, "entries of x", |gpu, r| gpu.upload(&x[r]), x.len())
    }

    /// `y` (all `rows` entries, on the host) cut into its parts, the part of each rank of this
    /// process uploaded to its GPU: the `y` of [`DistSpmv::apply`] with `β ≠ 0`.
    ///
    /// # Errors
    /// As [`DistSpmv::scatter_x`].
    pub fn scatter_y(&self, comms: &Comms, y: &[T]) -> Result<Vec<CudaSlice<T>>> {
        self.parts(comms, &self.row_starts, "rows of y", |gpu, r| gpu.upload(&y[r]), y.len())
    }

    /// `y`'s parts of this process's ranks, zeroed, part `l` (rows `row_starts[r] ..
    /// row_starts[r + 1]` of its global rank `r`) on its GPU: the `y` of [`DistSpmv::apply`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for a communicator of another number of ranks; device errors.
    pub fn alloc_y(&self, comms: &Comms) -> Result<Vec<CudaSlice<T>>> {
        let rows = *self.row_starts.last().unwrap_or(&0) as usize;
        self.parts(comms, &self.row_starts, "rows of y", |gpu, r| gpu.alloc_zeros::<T>(r.len()), rows)
    }

    /// The rows of `y` this process holds ([`DistSpmv::held_rows`]; all of them in one process),
    /// downloaded (each rank's GPU synchronized) and joined.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for another number of parts than ranks, or a part of another
    /// length than its rows; device errors.
    pub fn gather_y<Y: DevicePtr<T>>(&self, comms: &Comms, y: &[Y]) -> Result<Vec<T>> {
        let g = self.plans.len();
        if y.len() != g || comms.len() != g {
            return Err(Error::LengthMismatch { what: "parts of y", expected: g as u64, got: y.len().min(comms.len()) as u64 });
        }
        let held = self.held_rows();
        let mut out = Vec::with_capacity((held.end - held.start) as usize);
        for (l, part) in y.iter().enumerate() {
            let r = self.first + l;
            let want = self.row_starts[r + 1] - self.row_starts[r];
            if part.len() as u64 != want {
                return Err(Error::LengthMismatch { what: "rows of a part of y", expected: want, got: part.len() as u64 });
            }
            out.extend(comms.gpus()[l].download(part)?);
        }
        Ok(out)
    }

    /// The rows of `y` this process's ranks compute (every row in one process).
    pub fn held_rows(&self) -> std::ops::Range<u64> {
        self.row_starts[self.first]..self.row_starts[self.first + self.plans.len()]
    }

    /// One buffer per rank of this process made by `make(gpu, range)` over `starts`' ranges of
    /// a vector of `len` entries.
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
        let f = self.first;
        Ok((0..g).map(|l| make(&comms.gpus()[l], starts[f + l] as usize..starts[f + l + 1] as usize)).collect::<gpu_runtime::Result<Vec<_>>>()?)
    }

    /// Entries of `x` each rank (of every process, by global rank) receives from the others per
    /// product.
    pub fn received(&self) -> &[u64] {
        &self.received
    }

    /// The format of each of this process's plans (for [`Format::Auto`], the one chosen for its
    /// block).
    pub fn formats(&self) -> Vec<Format> {
        self.plans.iter().map(Spmv::format).collect()
    }

    /// Device bytes held per rank of this process: the block in its format
    /// ([`Spmv::footprint_bytes`]), the full `x`, and the halo's lists and buffers.
    pub fn footprint_bytes(&self) -> Vec<u64> {
        let tb = T::BYTES as u64;
        (0..self.plans.len())
            .map(|l| {
                let halo = self
                    .halo
                    .as_ref()
                    .map_or(0, |h| 4 * (h.send_at[l].len() + h.recv_at[l].len()) as u64 + tb * (h.send_buf[l].len() + h.recv_buf[l].len()) as u64);
                self.plans[l].footprint_bytes() + self.full.get(l).map_or(0, |f| tb * f.len() as u64) + halo
            })
            .collect()
    }

    /// `y = α A x + β y`: `x[l]` is the part of `x` ([`DistSpmv::x_starts`]) of this process's
    /// rank `l`, `y[l]` its rows of `y` ([`DistSpmv::row_starts`]), each on its GPU; with
    /// `β == 0`, `y` is not read. Enqueued on every rank's stream without synchronizing;
    /// allocates nothing. Every rank of every process must call it.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `comms`, `x` or `y` has another number of ranks or parts
    /// than the plan, or a part another length than its range; `gpu_runtime::Error::ForeignStream`
    /// when `comms` is not the communicator the plan was made with; NCCL and launch errors.
    pub fn apply<X: DevicePtr<T>, Y: DevicePtrMut<T>>(&mut self, comms: &Comms, alpha: T, x: &[X], beta: T, y: &mut [Y]) -> Result<()> {
        let (g, f) = (self.plans.len(), self.first);
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
        for l in 0..g {
            let want = self.x_starts[f + l + 1] - self.x_starts[f + l];
            if x[l].len() as u64 != want {
                return Err(Error::LengthMismatch { what: "a rank's part of x", expected: want, got: x[l].len() as u64 });
            }
            let want = self.row_starts[f + l + 1] - self.row_starts[f + l];
            if y[l].len() as u64 != want {
                return Err(Error::LengthMismatch { what: "a rank's rows of y", expected: want, got: y[l].len() as u64 });
            }
        }
        if self.x_starts.len() == 2 {
            // One rank: its part is the whole x.
            return self.plans[0].apply(alpha, &x[0], beta, &mut y[0]);
        }
        match self.halo.as_mut() {
            None => all_gather(comms, &self.x_starts, x, &mut self.full)?,
            Some(h) => halo_exchange(comms, &self.x_starts, h, x, &mut self.full)?,
        }
        for ((p, full), yr) in self.plans.iter_mut().zip(&self.full).zip(y.iter_mut()) {
            p.apply(alpha, full, beta, yr)?;
        }
        Ok(())
    }
}

/// Every rank's part of `x` into every rank's full `x`: one broadcast per nonempty part, in one
/// group (each process posts its ranks' share of every broadcast).
fn all_gather<T: SpmvValue, X: DevicePtr<T>>(comms: &Comms, starts: &[u64], x: &[X], full: &mut [CudaSlice<T>]) -> Result<()> {
    let (gpus, tb, first) = (comms.gpus(), T::BYTES as u64, comms.first_rank());
    comms.group(|c| {
        for root in 0..starts.len() - 1 {
            let len = starts[root + 1] - starts[root];
            if len == 0 {
                continue;
            }
            for (l, f) in full.iter_mut().enumerate() {
                let (fa, _gf) = f.device_ptr_mut(gpus[l].stream());
                // The root's own part (the other ranks' send address is not read).
                let (xa, _gx) = x[l].device_ptr(gpus[l].stream());
                let send = if first + l == root { xa } else { fa };
                // SAFETY: on the root its part holds len values (checked by the caller); each
                // rank's full x holds cols >= starts[root] + len values; nothing else uses them
                // until the stream passes the broadcast.
                unsafe { c.broadcast_bytes(l, send, fa + tb * starts[root], (tb * len) as usize, root)? };
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// The halo exchange (module docs): pack, own part copied, send/receive, unpack.
fn halo_exchange<T: SpmvValue, X: DevicePtr<T>>(comms: &Comms, starts: &[u64], h: &mut Halo<T>, x: &[X], full: &mut [CudaSlice<T>]) -> Result<()> {
    let (g, gpus, tb, first, world) = (comms.len(), comms.gpus(), T::BYTES as u64, comms.first_rank(), starts.len() - 1);
    for l in 0..g {
        let stream = gpus[l].stream();
        let n = h.send_at[l].len() as u64;
        if n > 0 {
            let (pack, at, buf) = (&h.pack[l], &h.send_at[l], &mut h.send_buf[l]);
            crate::launch::with_input(&gpus[l], &x[l], |xv| -> Result<()> {
                let ((at, _a), (src, _x), (dst, _b)) = (arg_ptr(at, stream), arg_ptr(xv, stream), arg_ptr_mut(buf, stream));
                // SAFETY: spmv_halo_pack(HaloArgs): at and the send buffer hold n entries; every
                // offset is below this rank's part's length (checked when the plan was made).
                unsafe { pack.launch(stream, crate::launch::grid(&gpus[l], n), HaloArgs { at, src, dst, n })? };
                Ok(())
            })?;
        }
        let (x0, x1) = (starts[first + l] as usize, starts[first + l + 1] as usize);
        if x1 > x0 {
            let mut own = full[l].slice_mut(x0..x1);
            stream.memcpy_dtod(&x[l], &mut own).map_err(gpu_runtime::Error::driver("copying a rank's own part of x"))?;
        }
    }
    comms.group(|c| {
        for (l, gpu) in gpus.iter().enumerate() {
            let me = first + l;
            let (sa, _g0) = h.send_buf[l].device_ptr(gpu.stream());
            let (ra, _g1) = h.recv_buf[l].device_ptr_mut(gpu.stream());
            for peer in (0..world).filter(|&p| p != me) {
                let (k0, k1) = (h.send_off[l][peer], h.send_off[l][peer + 1]);
                if k1 > k0 {
                    // SAFETY: entries k0 .. k1 of this rank's send buffer, left alone until the
                    // stream passes the send.
                    unsafe { c.send_bytes(l, sa + tb * k0, (tb * (k1 - k0)) as usize, peer)? };
                }
                let (k0, k1) = (h.recv_off[l][peer], h.recv_off[l][peer + 1]);
                if k1 > k0 {
                    // SAFETY: entries k0 .. k1 of this rank's receive buffer (as many as the
                    // owner sends it: its list is this rank's request).
                    unsafe { c.recv_bytes(l, ra + tb * k0, (tb * (k1 - k0)) as usize, peer)? };
                }
            }
        }
        Ok(())
    })?;
    for l in 0..g {
        let n = h.recv_at[l].len() as u64;
        if n > 0 {
            let stream = gpus[l].stream();
            let ((at, _a), (src, _v), (dst, _x)) =
                (arg_ptr(&h.recv_at[l], stream), arg_ptr(&h.recv_buf[l], stream), arg_ptr_mut(&mut full[l], stream));
            // SAFETY: spmv_halo_unpack(HaloArgs): at and the received entries hold n each; the
            // columns are distinct and below cols, the full x's length.
            unsafe { h.unpack[l].launch(stream, crate::launch::grid(&gpus[l], n), HaloArgs { at, src, dst, n })? };
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

/// Where the columns of each owner start in `needed` (ascending): `world + 1` offsets, the
/// parts' starts found by binary search (the columns of one owner are one run).
fn runs_by_owner(needed: &[u32], x_starts: &[u64]) -> Vec<u64> {
    x_starts.iter().map(|&x0| needed.partition_point(|&v| (v as u64) < x0) as u64).collect()
}

/// `needed`'s columns as offsets into their owners' parts (`recv_off` from [`runs_by_owner`]):
/// what the reader asks each owner for.
fn owner_offsets(needed: &[u32], recv_off: &[u64], x_starts: &[u64]) -> Vec<u32> {
    let mut out = Vec::with_capacity(needed.len());
    for s in 0..recv_off.len() - 1 {
        out.extend(needed[recv_off[s] as usize..recv_off[s + 1] as usize].iter().map(|&c| (c as u64 - x_starts[s]) as u32));
    }
    out
}

/// Where an owner's entries for each reader start in its send buffer: `counts[r][owner]` in
/// reader order (`world + 1` offsets).
fn send_offsets(counts: &[Vec<u64>], owner: usize) -> Vec<u64> {
    let mut off = Vec::with_capacity(counts.len() + 1);
    let mut at = 0;
    for row in counts {
        off.push(at);
        at += row[owner];
    }
    off.push(at);
    off
}

#[cfg(test)]
mod tests {
    /// The halo's host lists against a direct reading: each rank asks each owner for exactly
    /// the columns it reads in that owner's part (as offsets into it), and each owner's send
    /// buffer has room for every reader's request in reader order.
    #[test]
    fn halo_lists_match_what_each_rank_reads() {
        let x_starts = [0u64, 4, 4, 9, 12];
        // Rank r's block reads these columns (repeats and its own columns included).
        let reads: [&[u32]; 4] = [&[0, 11, 5, 5, 3, 8], &[1, 2, 3], &[4, 8, 0, 11, 2], &[11, 10, 9, 4]];
        let needed: Vec<Vec<u32>> = (0..4).map(|r| super::outside_columns(reads[r], x_starts[r], x_starts[r + 1], 12)).collect();
        assert_eq!(needed, vec![vec![5, 8, 11], vec![1, 2, 3], vec![0, 2, 11], vec![4]]);
        let recv_off: Vec<Vec<u64>> = needed.iter().map(|c| super::runs_by_owner(c, &x_starts)).collect();
        let counts: Vec<Vec<u64>> = recv_off.iter().map(|o| o.windows(2).map(|w| w[1] - w[0]).collect()).collect();
        for r in 0..4 {
            let asks = super::owner_offsets(&needed[r], &recv_off[r], &x_starts);
            for s in 0..4 {
                let got = &needed[r][recv_off[r][s] as usize..recv_off[r][s + 1] as usize];
                let want: Vec<u32> = needed[r].iter().copied().filter(|&c| (c as u64) >= x_starts[s] && (c as u64) < x_starts[s + 1]).collect();
                assert_eq!(got, &want[..], "rank {r} from {s}");
                assert_eq!(counts[r][s], want.len() as u64);
                let asked: Vec<u32> = asks[recv_off[r][s] as usize..recv_off[r][s + 1] as usize].iter().map(|&o| o + x_starts[s] as u32).collect();
                assert_eq!(asked, want, "rank {r} asks {s}");
                assert!(asks[recv_off[r][s] as usize..recv_off[r][s + 1] as usize].iter().all(|&o| (o as u64) < x_starts[s + 1] - x_starts[s]));
            }
        }
        for s in 0..4 {
            let off = super::send_offsets(&counts, s);
            assert_eq!(off.len(), 5);
            for r in 0..4 {
                assert_eq!(off[r + 1] - off[r], counts[r][s], "owner {s} for reader {r}");
            }
        }
        assert_eq!(super::send_offsets(&counts, 2), vec![0, 2, 2, 2, 3]);
    }
}
