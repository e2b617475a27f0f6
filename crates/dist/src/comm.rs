//! NCCL communicators over the GPUs one process drives: [`Comms`]. NCCL is loaded at run time
//! like the driver and cuSPARSE ([`gpu_runtime::vendor::nccl_library`], `SPTRANS_NCCL_LIB`); without
//! it, [`Error::NoNccl`] names what was tried. NVLink multicast (NVLS) is turned off
//! (`NCCL_NVLS_ENABLE=0`) unless the environment already says otherwise.
//!
//! Two ways to make one: [`Comms::local`], one process driving GPUs `0 .. N` (ranks `0 .. N`),
//! and [`Comms::from_env`], one process per GPU under a launcher (`torchrun`, `mpirun`, `srun`:
//! [`crate::bootstrap`]), this process holding one rank of many. Methods take a *local* rank,
//! an index into [`Comms::gpus`] (the global rank is [`Comms::first_rank`] plus it); peers and
//! roots are global ranks.
//!
//! One thread drives every GPU of its process, so each collective is issued for all of its
//! ranks inside one NCCL group ([`Comms::group`]); the operations run on each GPU's own stream
//! ([`Gpu::stream`]) and are ordered with that GPU's kernels like any other work on it.
use cudarc::nccl::{result as nccl, sys};

use gpu_runtime::{Error, Gpu, Result};

/// NCCL's status as this crate's error.
fn nccl_err(during: &'static str) -> impl FnOnce(nccl::NcclError) -> Error {
    move |e| Error::Nccl { during, code: format!("{:?}", e.0) }
}

/// One NCCL communicator per GPU of this process, each with its [`Gpu`] handle (context and
/// stream): global ranks `first_rank() .. first_rank() + len()` of `world()`.
pub struct Comms {
    gpus: Vec<Gpu>,
    raw: Vec<sys::ncclComm_t>,
    first: usize,
    world: usize,
}

impl std::fmt::Debug for Comms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comms").field("ranks", &self.gpus.len()).field("first", &self.first).field("world", &self.world).finish()
    }
}

impl Comms {
    /// Communicators over GPUs `0 .. count` (`ncclCommInitAll`), one [`Gpu`] with its own
    /// stream each. Each GPU's default memory pool keeps the memory freed into it
    /// ([`Gpu::set_pool_release_threshold`] to `u64::MAX`, as PyTorch's and CuPy's allocators
    /// do); set a lower threshold afterwards to give memory back at synchronizations.
    ///
    /// # Errors
    /// [`Error::NoDriver`], [`Error::NoDevice`] when fewer than `count` GPUs are present (or
    /// `count` is 0), [`Error::NoNccl`] when NCCL cannot be loaded, [`Error::Nccl`].
    pub fn local(count: usize) -> Result<Self> {
        let present = gpu_runtime::device_count()?;
        if count == 0 || count > present {
            return Err(Error::NoDevice { ordinal: count.saturating_sub(1).max(present), count: present });
        }
        let gpus = Self::prepare((0..count).collect())?;
        let ordinals: Vec<i32> = (0..count as i32).collect();
        let mut raw = vec![std::ptr::null_mut(); count];
        // SAFETY: `raw` holds `count` communicator slots and `ordinals` `count` valid device
        // ordinals (checked against the driver's count above).
        unsafe { nccl::comm_init_all(raw.as_mut_ptr(), count as i32, ordinals.as_ptr()) }.map_err(nccl_err("ncclCommInitAll"))?;
        Ok(Self { gpus, raw, first: 0, world: count })
    }

    /// NCCL loaded, NVLink multicast off, and the handles of GPUs `ordinals` with their memory
    /// pools keeping freed memory.
    fn prepare(ordinals: Vec<usize>) -> Result<Vec<Gpu>> {
        gpu_runtime::vendor::nccl_library().map_err(|why| Error::NoNccl(why.to_string()))?;
        // NVLink multicast off unless the caller chose: the lent machines' fabric manager does
        // not serve it (KINDS.md). NCCL reads it at initialization only, so it is set once per
        // process, on the first communicator (the one environment write this crate makes).
        static NVLS: std::sync::Once = std::sync::Once::new();
        NVLS.call_once(|| {
            if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
                std::env::set_var("NCCL_NVLS_ENABLE", "0");
            }
        });
        let gpus = ordinals.into_iter().map(Gpu::new).collect::<Result<Vec<_>>>()?;
        // Distributed operations allocate their exchange buffers per call, across the
        // synchronizations that read sizes back: with the driver's default release threshold (0)
        // each call mapped them afresh (2^30 nonzeros on 2 H200s: 105 ms a transpose, 50.7 ms
        // with the memory kept).
        for gpu in &gpus {
            gpu.set_pool_release_threshold(u64::MAX)?;
        }
        Ok(gpus)
    }

    /// This process's rank of a multi-process launch ([`crate::bootstrap`]: the launcher's
    /// `RANK`, `WORLD_SIZE` and `LOCAL_RANK` or their Open MPI and Slurm names), on GPU
    /// `LOCAL_RANK`, NCCL's id shared through `SPTRANS_NCCL_ID_FILE` or a TCP socket
    /// (`SPTRANS_NCCL_ID_ADDR`, or `MASTER_ADDR` and `MASTER_PORT + 1`). Every rank calls it;
    /// it returns once all have joined (`ncclCommInitRank`). Without launcher variables, one
    /// rank of one.
    ///
    /// # Errors
    /// [`Error::Bootstrap`] (malformed variables, no id channel, the id not shared in time);
    /// [`Error::NoDevice`] when `LOCAL_RANK` names no GPU; [`Error::NoNccl`], [`Error::Nccl`].
    pub fn from_env() -> Result<Self> {
        let env = crate::bootstrap::RankEnv::from_env()?.unwrap_or(crate::bootstrap::RankEnv { rank: 0, world: 1, local_rank: 0 });
        let channel = crate::bootstrap::IdChannel::from_vars(|k| std::env::var(k).ok())?;
        Self::from_rank(&env, channel.as_ref())
    }

    /// [`Comms::from_env`] with the place and the id channel given.
    ///
    /// # Errors
    /// As [`Comms::from_env`].
    pub fn from_rank(env: &crate::bootstrap::RankEnv, channel: Option<&crate::bootstrap::IdChannel>) -> Result<Self> {
        let present = gpu_runtime::device_count()?;
        if env.local_rank >= present {
            return Err(Error::NoDevice { ordinal: env.local_rank, count: present });
        }
        let gpus = Self::prepare(vec![env.local_rank])?;
        let id = crate::bootstrap::exchange_id(env, channel, || {
            let id = nccl::get_uniqueid().map_err(nccl_err("ncclGetUniqueId"))?;
            Ok(id.internal.map(|c| c as u8))
        })?;
        let id = sys::ncclUniqueId { internal: id.map(|b| b as std::ffi::c_char) };
        gpus[0].bind()?;
        let mut comm = std::ptr::null_mut();
        // SAFETY: one communicator slot; the id is rank 0's, shared with every rank; the rank is
        // below the world size (RankEnv's check) and this GPU's context is current.
        unsafe { nccl::comm_init_rank(&mut comm, env.world as i32, id, env.rank as i32) }.map_err(nccl_err("ncclCommInitRank"))?;
        // Every rank has joined: the id file is no longer needed.
        if let (0, Some(crate::bootstrap::IdChannel::File(path))) = (env.rank, channel) {
            let _ = std::fs::remove_file(path);
        }
        Ok(Self { gpus, raw: vec![comm], first: env.rank, world: env.world })
    }

    /// The number of ranks this process drives (its GPUs).
    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    /// The number of ranks in all processes ([`Comms::len`] for [`Comms::local`]).
    pub fn world(&self) -> usize {
        self.world
    }

    /// The global rank of this process's first GPU (0 for [`Comms::local`]).
    pub fn first_rank(&self) -> usize {
        self.first
    }

    /// Whether this process drives every rank ([`Comms::local`], or a launch of one process).
    pub fn single_process(&self) -> bool {
        self.gpus.len() == self.world
    }

    /// [`Error::MultiProcess`] naming `what` unless this process drives every rank.
    ///
    /// # Errors
    /// As said.
    pub fn require_single_process(&self, what: &'static str) -> Result<()> {
        if self.single_process() {
            Ok(())
        } else {
            Err(Error::MultiProcess(what))
        }
    }

    /// Whether there are no ranks (never, for a constructed value).
    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// Each rank's GPU handle, by rank.
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// Runs `f`, which issues one NCCL call per rank (or several), inside one NCCL group
    /// (`ncclGroupStart` / `ncclGroupEnd`), as NCCL requires when one thread drives several
    /// GPUs. The group is closed whatever `f` returns.
    ///
    /// # Errors
    /// `f`'s error, or [`Error::Nccl`] from the group calls.
    pub fn group<R>(&self, f: impl FnOnce(&Self) -> Result<R>) -> Result<R> {
        nccl::group_start().map_err(nccl_err("ncclGroupStart"))?;
        let r = f(self);
        let end = nccl::group_end().map_err(nccl_err("ncclGroupEnd"));
        let r = r?;
        end?;
        Ok(r)
    }

    /// Waits for every rank's stream.
    ///
    /// # Errors
    /// Driver errors (an earlier asynchronous failure among them).
    pub fn synchronize(&self) -> Result<()> {
        self.gpus.iter().try_for_each(Gpu::synchronize)
    }

    /// Small host values of every rank on every rank of every process: `rows[l]` is this
    /// process's rank `l`'s row (every row `width` words); returns the `world` rows by global
    /// rank. Each rank uploads a zero table with its own row filled, one NCCL all-reduce sums
    /// the tables, and the first rank's is read back (synchronizes every rank). Every rank of
    /// every process must call it with rows of the same width.
    ///
    /// # Errors
    /// [`Error::Internal`] for another number of rows than ranks here, or rows of unequal width;
    /// NCCL and driver errors.
    pub fn share_rows(&self, rows: &[Vec<u64>], width: usize) -> Result<Vec<Vec<u64>>> {
        use cudarc::driver::DevicePtrMut;
        if rows.len() != self.len() || rows.iter().any(|r| r.len() != width) {
            return Err(Error::Internal("Comms::share_rows: one row of the given width per rank of this process"));
        }
        let (world, cells) = (self.world, self.world * width);
        let mut tables = Vec::with_capacity(rows.len());
        for (l, row) in rows.iter().enumerate() {
            let mut t = vec![0u64; cells.max(1)];
            t[(self.first + l) * width..(self.first + l + 1) * width].copy_from_slice(row);
            tables.push(self.gpus[l].upload(&t)?);
        }
        if cells > 0 {
            self.group(|c| {
                for (l, t) in tables.iter_mut().enumerate() {
                    let (ta, _g) = t.device_ptr_mut(self.gpus[l].stream());
                    // SAFETY: `cells` words on rank l's GPU, not used until synchronized.
                    unsafe { c.all_reduce_sum_u64(l, ta, cells)? };
                }
                Ok(())
            })?;
        }
        self.synchronize()?;
        let flat = self.gpus[0].download(&tables[0])?;
        Ok((0..world).map(|r| flat[r * width..(r + 1) * width].to_vec()).collect())
    }

    /// Enqueues on `rank`'s stream the sum, over every rank, of `count` `u64` words at `addr`
    /// (each rank's own address), in place (`ncclAllReduce`). Call it for every rank inside one
    /// [`Comms::group`].
    ///
    /// # Safety
    /// `addr` is a device address on `rank`'s GPU holding `count` words, not used by other work
    /// until the stream passes this operation.
    ///
    /// # Errors
    /// [`Error::Nccl`]; [`Error::Internal`] for a rank out of range.
    pub unsafe fn all_reduce_sum_u64(&self, rank: usize, addr: u64, count: usize) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { self.all_reduce_sum(rank, addr, count, sys::ncclDataType_t::ncclUint64) }
    }

    /// [`Comms::all_reduce_sum_u64`] of `f64` values. NCCL's sums are the same on every rank and
    /// from run to run on one machine, but their order (and so their rounding) depends on its
    /// algorithm and the number of ranks.
    ///
    /// # Safety
    /// As [`Comms::all_reduce_sum_u64`], with `count` 8-byte values.
    ///
    /// # Errors
    /// As [`Comms::all_reduce_sum_u64`].
    pub unsafe fn all_reduce_sum_f64(&self, rank: usize, addr: u64, count: usize) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { self.all_reduce_sum(rank, addr, count, sys::ncclDataType_t::ncclFloat64) }
    }

    /// Enqueues on `rank`'s stream its part of the sum over every rank of `count` `f64` values at
    /// each rank's `send`, delivered to `recv` on rank `root` only (`ncclReduce`; `recv` is
    /// ignored on the other ranks). Call it for every rank inside one [`Comms::group`] (one per
    /// root makes a reduce-scatter of unequal parts).
    ///
    /// # Safety
    /// `send` holds `count` values left unchanged until the stream passes this operation; on the
    /// root, `recv` has room for `count` values not used by other work until then (it may equal
    /// `send`).
    ///
    /// # Errors
    /// [`Error::Nccl`]; [`Error::Internal`] for a rank or root out of range.
    pub unsafe fn reduce_sum_f64(&self, rank: usize, send: u64, recv: u64, count: usize, root: usize) -> Result<()> {
        let (comm, stream) = self.raw(rank)?;
        self.peer(root)?;
        let recv = if self.first + rank == root { recv } else { send };
        // SAFETY: the caller's contract; the communicator and stream are this rank's.
        unsafe {
            nccl::reduce(
                send as *const std::ffi::c_void,
                recv as *mut std::ffi::c_void,
                count,
                sys::ncclDataType_t::ncclFloat64,
                sys::ncclRedOp_t::ncclSum,
                root as i32,
                comm,
                stream,
            )
        }
        .map_err(nccl_err("ncclReduce"))?;
        Ok(())
    }

    /// In-place sum over the ranks of `count` words of type `dtype`.
    unsafe fn all_reduce_sum(&self, rank: usize, addr: u64, count: usize, dtype: sys::ncclDataType_t) -> Result<()> {
        let (comm, stream) = self.raw(rank)?;
        let p = addr as *mut std::ffi::c_void;
        // SAFETY: the caller's contract; the communicator and stream are this rank's.
        unsafe { nccl::all_reduce(p, p, count, dtype, sys::ncclRedOp_t::ncclSum, comm, stream) }.map_err(nccl_err("ncclAllReduce"))?;
        Ok(())
    }

    /// Enqueues on `rank`'s stream the sending of `bytes` bytes at `addr` to rank `peer`
    /// (`ncclSend`); the peer posts the matching [`Comms::recv_bytes`] in the same group.
    ///
    /// # Safety
    /// `addr` is a device address on `rank`'s GPU holding `bytes` bytes, left unchanged until the
    /// stream passes this operation.
    ///
    /// # Errors
    /// [`Error::Nccl`]; [`Error::Internal`] for a rank or peer out of range.
    pub unsafe fn send_bytes(&self, rank: usize, addr: u64, bytes: usize, peer: usize) -> Result<()> {
        let (comm, stream) = self.raw(rank)?;
        self.peer(peer)?;
        // SAFETY: the caller's contract; the communicator and stream are this rank's.
        unsafe { nccl::send(addr as *const std::ffi::c_void, bytes, sys::ncclDataType_t::ncclUint8, peer as i32, comm, stream) }
            .map_err(nccl_err("ncclSend"))?;
        Ok(())
    }

    /// Enqueues on `rank`'s stream the receiving of `bytes` bytes from rank `peer` into `addr`
    /// (`ncclRecv`).
    ///
    /// # Safety
    /// `addr` is a device address on `rank`'s GPU with room for `bytes` bytes, not used by other
    /// work until the stream passes this operation.
    ///
    /// # Errors
    /// [`Error::Nccl`]; [`Error::Internal`] for a rank or peer out of range.
    pub unsafe fn recv_bytes(&self, rank: usize, addr: u64, bytes: usize, peer: usize) -> Result<()> {
        let (comm, stream) = self.raw(rank)?;
        self.peer(peer)?;
        // SAFETY: the caller's contract; the communicator and stream are this rank's.
        unsafe { nccl::recv(addr as *mut std::ffi::c_void, bytes, sys::ncclDataType_t::ncclUint8, peer as i32, comm, stream) }
            .map_err(nccl_err("ncclRecv"))?;
        Ok(())
    }

    /// Enqueues on `rank`'s stream its part of a broadcast of `bytes` bytes from rank `root`
    /// (`ncclBroadcast`): the root sends from `send` (ignored on the other ranks), and every rank,
    /// the root too, receives into its own `recv`. Call it for every rank inside one
    /// [`Comms::group`] (several broadcasts with different roots make an all-gather of unequal
    /// parts).
    ///
    /// # Safety
    /// On the root, `send` holds `bytes` bytes left unchanged until the stream passes this
    /// operation; on every rank, `recv` has room for `bytes` bytes not used by other work until
    /// then (it may equal `send` on the root).
    ///
    /// # Errors
    /// [`Error::Nccl`]; [`Error::Internal`] for a rank or root out of range.
    pub unsafe fn broadcast_bytes(&self, rank: usize, send: u64, recv: u64, bytes: usize, root: usize) -> Result<()> {
        let (comm, stream) = self.raw(rank)?;
        self.peer(root)?;
        let send = if self.first + rank == root { send } else { recv };
        // SAFETY: the caller's contract; the communicator and stream are this rank's.
        unsafe {
            nccl::broadcast(
                send as *const std::ffi::c_void,
                recv as *mut std::ffi::c_void,
                bytes,
                sys::ncclDataType_t::ncclUint8,
                root as i32,
                comm,
                stream,
            )
        }
        .map_err(nccl_err("ncclBroadcast"))?;
        Ok(())
    }

    /// Checks that `peer` is a global rank.
    fn peer(&self, peer: usize) -> Result<()> {
        if peer < self.world {
            Ok(())
        } else {
            Err(Error::Internal("NCCL peer out of range"))
        }
    }

    /// Local `rank`'s communicator and stream.
    fn raw(&self, rank: usize) -> Result<(sys::ncclComm_t, sys::cudaStream_t)> {
        let comm = *self.raw.get(rank).ok_or(Error::Internal("NCCL rank out of range"))?;
        Ok((comm, self.gpus[rank].stream().cu_stream() as sys::cudaStream_t))
    }
}

impl Drop for Comms {
    fn drop(&mut self) {
        for &c in &self.raw {
            // SAFETY: each communicator was created by ncclCommInitAll and is destroyed once;
            // a failure here has no one to report to.
            let _ = unsafe { nccl::comm_destroy(c) };
        }
    }
}
