//! The truncated SVD of a matrix spread over several GPUs by row blocks ([`DistCsr`](sptrans_matrix::dist::DistCsr)), over
//! NCCL ([`Comms`]): [`svd`].
//!
//! The algorithm is the one-GPU one (module `lanczos`) on a backend whose dense blocks are
//! distributed too: a vector of `A`'s row space (length `rows`) is cut like the matrix
//! (`row_starts`), one of its column space (length `cols`) in equal parts
//! ([`sptrans_matrix::dist::even_starts`], square matrices too). Each rank
//! keeps the CSRC of its row block `A_r` (all columns) and, for the products, one buffer of
//! `cols × k` values:
//!
//! - `A X`: the `k` columns of `X` are all-gathered into that buffer (one NCCL broadcast per
//!   column and rank's part, in one group), then each rank multiplies its block locally;
//! - `Aᵀ U`: each rank multiplies `A_rᵀ U_r` into the buffer (a full-length partial sum), then
//!   the partial sums are reduced to the owner of each column part (one NCCL reduce per column
//!   and part, in one group: a reduce-scatter of unequal parts);
//! - Gram matrices (the dot products of the reorthogonalization and the QR) are summed by an
//!   NCCL all-reduce of each rank's local `Xᵀ Y`, so every rank applies the same coefficients;
//!   the other block operations (`X C`, copies) are local.
//!
//! The QR factorizations take the host's decisions (the one-GPU fast path keeps its Cholesky
//! on the device, which would need an all-reduce inside it). Sums are added in another order
//! than on one GPU, so σ agree with the one-GPU answer within the tolerance, not bit for bit.
//! Per rank the bases take `(rows_r + cols_r) · (K + b)` values of 8 bytes (`K` the Krylov
//! dimension), the product buffer `cols · max(b, 4)`.
use gpu_csrc::{DeviceCsrc, Op};
use gpu_dist::Comms;
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr};
use gpu_runtime::{DenseView, DenseViewMut, DeviceView, DeviceViewMut};
use sptrans_matrix::dist::{even_starts, AsDistCsrView};

use crate::gpu::{GpuBackend, GpuBlock};
use crate::lanczos::Backend;
use crate::{Config, Error, Event, Result, Svd, SvdValue};

/// A dense block cut by rows over the ranks.
pub(crate) struct DistBlock {
    parts: Vec<GpuBlock>,
    /// Where each global rank's rows start (`world + 1` entries).
    starts: Vec<usize>,
}

/// The distributed backend: one [`GpuBackend`] per rank for the local block operations.
struct DistBackend<'c, 'a> {
    comms: &'c Comms,
    ranks: Vec<GpuBackend<'a>>,
    /// The operator is `Aᵀ` (a wide matrix).
    transposed: bool,
    a_cols: usize,
    /// Starts of each rank's rows of `A`'s row space and column space.
    row_starts: Vec<usize>,
    col_starts: Vec<usize>,
    /// Per rank, `a_cols × kcap` values: the gathered `X` of `A X`, the partial sums of `Aᵀ U`.
    full: Vec<CudaSlice<f64>>,
    kcap: usize,
    /// The global rank of `ranks[0]` (0 unless one process drives each GPU).
    first: usize,
    /// [`Config::profile`]: seconds and calls per operation, every rank synchronized around each.
    profile: Profile,
}

/// Per-operation wall times of the distributed backend (with [`Config::profile`]).
#[derive(Default)]
struct Profile {
    on: bool,
    ops: std::collections::BTreeMap<&'static str, (f64, usize)>,
}

impl Profile {
    /// Synchronizes every rank and starts a timing, when profiling.
    fn mark(&self, comms: &Comms) -> Result<Option<std::time::Instant>> {
        if !self.on {
            return Ok(None);
        }
        comms.synchronize()?;
        Ok(Some(std::time::Instant::now()))
    }

    /// Ends the timing `t` (every rank synchronized) under `name`.
    fn add(&mut self, comms: &Comms, name: &'static str, t: Option<std::time::Instant>) -> Result<()> {
        if let Some(t0) = t {
            comms.synchronize()?;
            let e = self.ops.entry(name).or_insert((0.0, 0));
            e.0 += t0.elapsed().as_secs_f64();
            e.1 += 1;
        }
        Ok(())
    }
}

impl DistBackend<'_, '_> {
    /// The starts of the operator's left side (`m`: `A`'s rows, or its columns when the operator
    /// is `Aᵀ`) or right side.
    fn side_starts(&self, left: bool) -> &[usize] {
        if left != self.transposed {
            &self.row_starts
        } else {
            &self.col_starts
        }
    }

    /// Room for `k` columns in every rank's product buffer.
    fn reserve_full(&mut self, k: usize) -> Result<()> {
        if k > self.kcap {
            self.full = self.ranks.iter().map(|be| be.gpu.alloc::<f64>((self.a_cols * k).max(1))).collect::<gpu_runtime::Result<_>>()?;
            self.kcap = k;
        }
        Ok(())
    }

    /// Issues `f(comms, rank, j, s, len, at)` in one NCCL group for every local rank, column
    /// `j < k` and non-empty column part `s` of every global rank (of `len` values): `at` is the
    /// device address of that part of column `j` in the local rank's product buffer (`j · cols +
    /// col_starts[s]`, inside it when `k ≤ kcap`).
    fn per_part(&self, k: usize, mut f: impl FnMut(&Comms, usize, usize, usize, usize, u64) -> gpu_runtime::Result<()>) -> Result<()> {
        let (n, cs) = (self.a_cols, &self.col_starts);
        Ok(self.comms.group(|cm| {
            for (r, be) in self.ranks.iter().enumerate() {
                let base = self.full[r].device_ptr(be.gpu.stream()).0;
                for j in 0..k.min(self.kcap) {
                    for s in 0..cs.len() - 1 {
                        let len = cs[s + 1] - cs[s];
                        if len > 0 {
                            f(cm, r, j, s, len, base + ((j * n + cs[s]) * 8) as u64)?;
                        }
                    }
                }
            }
            Ok(())
        })?)
    }

    /// The global sum of the ranks' `Xᵀ Y` (`c × k`) left in each rank's `small` (identical on
    /// every rank: NCCL's all-reduce). Past 16 results (the reorthogonalization against tens of
    /// basis columns) each rank's product is one `dgemm`, as [`GpuBackend::project_out`] does on
    /// one GPU; against the row-chunked form of [`GpuBackend::dot_to_small`] it measured the same
    /// on the R-MAT SVD (0.88 against 0.93 s on two H200s, within noise), whose slow
    /// reorthogonalization came from uneven row parts instead (RESULTS.md).
    fn dot_all(&mut self, x: &DistBlock, x0: usize, c: usize, y: &DistBlock, y0: usize, k: usize) -> Result<()> {
        let wide = c * k > svd_kernels::MAX_PAIRS as usize;
        for (r, be) in self.ranks.iter_mut().enumerate() {
            be.gpu.bind()?;
            let (xp, yp) = (&x.parts[r], &y.parts[r]);
            let (xa, ya, rows) = (be.addr(xp, x0), be.addr(yp, y0), xp.rows);
            if wide {
                be.small(c * k)?;
                let s = be.small_addr();
                // SAFETY: columns x0 .. x0 + c and y0 .. y0 + k inside the rank's parts (the
                // Backend contract), both of `rows` rows; small holds c · k.
                unsafe { be.gemm(true, c, k, rows, 1.0, xa, rows, ya, rows, 0.0, s, c)? };
                continue;
            }
            // SAFETY: columns x0 .. x0 + c and y0 .. y0 + k inside the rank's parts (the Backend
            // contract), both of the rank's row count.
            unsafe { be.dot_to_small(rows, xa, c, ya, k)? };
        }
        let ranks = &self.ranks;
        self.comms.group(|cm| {
            for (r, be) in ranks.iter().enumerate() {
                // SAFETY: `small` holds c · k values (dot_to_small), used by nothing else until
                // the stream passes the all-reduce.
                unsafe { cm.all_reduce_sum_f64(r, be.small_addr(), c * k)? };
            }
            Ok(())
        })?;
        Ok(())
    }
}

impl Backend for DistBackend<'_, '_> {
    type Block = DistBlock;

    fn shape(&self) -> (usize, usize) {
        let (r, c) = (*self.row_starts.last().unwrap_or(&0), self.a_cols);
        if self.transposed {
            (c, r)
        } else {
            (r, c)
        }
    }

    fn alloc(&mut self, rows: usize, cols: usize) -> Result<DistBlock> {
        let (m, n) = self.shape();
        if m == n || (rows != m && rows != n) {
            return Err(Error::Internal(format!("a distributed block of {rows} rows for an {m} × {n} operator: say its side (alloc_side)")));
        }
        self.alloc_side(rows, cols, rows == m)
    }

    fn alloc_side(&mut self, rows: usize, cols: usize, left: bool) -> Result<DistBlock> {
        let (st, f) = (self.side_starts(left).to_vec(), self.first);
        if *st.last().unwrap_or(&0) != rows {
            return Err(Error::Internal(format!("a distributed block of {rows} rows on a side of {}", st.last().unwrap_or(&0))));
        }
        let parts = self.ranks.iter_mut().enumerate().map(|(r, be)| be.alloc(st[f + r + 1] - st[f + r], cols)).collect::<Result<_>>()?;
        Ok(DistBlock { parts, starts: st })
    }

    fn set(&mut self, blk: &mut DistBlock, c0: usize, k: usize, data: &[f64]) -> Result<()> {
        if k == 0 {
            return Ok(());
        }
        let (st, f) = (blk.starts.clone(), self.first);
        let rows = *st.last().unwrap_or(&0);
        if data.len() != rows * k {
            return Err(Error::Internal(format!("{} values for {k} columns of {rows} rows", data.len())));
        }
        for (r, be) in self.ranks.iter_mut().enumerate() {
            let (r0, r1) = (st[f + r], st[f + r + 1]);
            let local: Vec<f64> = (0..k).flat_map(|j| data[j * rows + r0..j * rows + r1].iter().copied()).collect();
            be.set(&mut blk.parts[r], c0, k, &local)?;
        }
        Ok(())
    }

    fn get(&mut self, blk: &DistBlock, c0: usize, k: usize) -> Result<Vec<f64>> {
        if self.ranks.len() + 1 != self.row_starts.len() {
            return Err(Error::Internal("reading a distributed block back needs every rank in this process".into()));
        }
        let rows: usize = blk.parts.iter().map(|p| p.rows).sum();
        let mut out = vec![0.0; rows * k];
        let mut at = 0;
        for (r, be) in self.ranks.iter_mut().enumerate() {
            let n = blk.parts[r].rows;
            let local = be.get(&blk.parts[r], c0, k)?;
            for j in 0..k {
                out[j * rows + at..j * rows + at + n].copy_from_slice(&local[j * n..(j + 1) * n]);
            }
            at += n;
        }
        Ok(out)
    }

    fn product(&mut self, op: Op, x: &DistBlock, x0: usize, out: &mut DistBlock, o0: usize, k: usize) -> Result<()> {
        let op_a = if self.transposed { op.flip() } else { op };
        self.reserve_full(k)?;
        let n = self.a_cols;
        let t = self.profile.mark(self.comms)?;
        match op_a {
            Op::NoTranspose => {
                // Gather: column j's part s from rank s into every rank's buffer at j · n + cs[s].
                let f = self.first;
                self.per_part(k, |cm, r, j, s, len, at| {
                    let send = if f + r == s { self.ranks[r].addr(&x.parts[r], x0 + j) } else { 0 };
                    // SAFETY: on the root, column x0 + j of its part (len values); `at` inside
                    // every rank's buffer (per_part); nothing else uses them until the streams
                    // pass the group.
                    unsafe { cm.broadcast_bytes(r, send, at, len * 8, s) }
                })?;
                self.profile.add(self.comms, "gather X", t)?;
                let t = self.profile.mark(self.comms)?;
                for (r, be) in self.ranks.iter_mut().enumerate() {
                    let rows = out.parts[r].rows;
                    if rows == 0 {
                        continue;
                    }
                    be.gpu.bind()?;
                    let xv = DenseView::packed(DeviceView::of(&self.full[r]).slice(0..n * k), n as u64)?;
                    let data = &mut out.parts[r].data;
                    let mut ov = DenseViewMut::packed(DeviceViewMut::of(data).into_slice(o0 * rows..(o0 + k) * rows), rows as u64)?;
                    be.c.multiply(Op::NoTranspose, 1.0, &xv, 0.0, &mut ov)?;
                }
                self.profile.add(self.comms, "A X (local)", t)?;
            }
            Op::Transpose => {
                for (r, be) in self.ranks.iter_mut().enumerate() {
                    be.gpu.bind()?;
                    let rows = x.parts[r].rows;
                    if rows == 0 {
                        // No rows here: this rank's partial sums are zero.
                        be.gpu.memset_bytes(&mut self.full[r], 0)?;
                        continue;
                    }
                    let xv = DenseView::packed(DeviceView::of(&x.parts[r].data).slice(x0 * rows..(x0 + k) * rows), rows as u64)?;
                    let mut ov = DenseViewMut::packed(DeviceViewMut::of(&mut self.full[r]).into_slice(0..n * k), n as u64)?;
                    be.c.multiply(Op::Transpose, 1.0, &xv, 0.0, &mut ov)?;
                }
                self.profile.add(self.comms, "At U (local)", t)?;
                let t = self.profile.mark(self.comms)?;
                // Reduce: column j's part s summed over the ranks into rank s's column o0 + j.
                let f = self.first;
                self.per_part(k, |cm, r, j, s, len, at| {
                    let recv = if f + r == s { self.ranks[r].addr(&out.parts[r], o0 + j) } else { 0 };
                    // SAFETY: every rank's partial sums of the part at `at` (per_part); on the
                    // root, column o0 + j of its part (len values); nothing else uses them until
                    // the streams pass the group.
                    unsafe { cm.reduce_sum_f64(r, at, recv, len, s) }
                })?;
                self.profile.add(self.comms, "reduce At U", t)?;
            }
        }
        Ok(())
    }

    fn dot(&mut self, x: &DistBlock, x0: usize, c: usize, y: &DistBlock, y0: usize, k: usize) -> Result<Vec<f64>> {
        if c == 0 || k == 0 {
            return Ok(vec![0.0; c * k]);
        }
        let t = self.profile.mark(self.comms)?;
        self.dot_all(x, x0, c, y, y0, k)?;
        let out = self.ranks[0].small_download(c * k)?;
        self.profile.add(self.comms, "dot (all-reduce, read back)", t)?;
        Ok(out)
    }

    fn project_out(&mut self, blk: &mut DistBlock, prior: usize, c0: usize, k: usize) -> Result<()> {
        if prior == 0 || k == 0 {
            return Ok(());
        }
        // C = Xᵀ y summed over the ranks (left in each rank's `small`), then y −= X C locally.
        let t = self.profile.mark(self.comms)?;
        self.dot_all(blk, 0, prior, blk, c0, k)?;
        for (r, be) in self.ranks.iter_mut().enumerate() {
            be.gpu.bind()?;
            let p = &blk.parts[r];
            let (xa, ya, s, rows) = (be.addr(p, 0), be.addr(p, c0), be.small_addr(), p.rows);
            // SAFETY: columns 0 .. prior and c0 .. c0 + k (disjoint) of the rank's part of `rows`
            // rows; small holds prior · k coefficients, in stream order after the all-reduce.
            unsafe { be.gemm(false, rows, k, prior, -1.0, xa, rows, s, prior, 1.0, ya, rows)? };
        }
        self.profile.add(self.comms, "project_out", t)
    }

    fn update_within(&mut self, blk: &mut DistBlock, y0: usize, k: usize, x0: usize, c: usize, coef: &[f64]) -> Result<()> {
        let t = self.profile.mark(self.comms)?;
        for (r, be) in self.ranks.iter_mut().enumerate() {
            be.gpu.bind()?;
            be.update_within(&mut blk.parts[r], y0, k, x0, c, coef)?;
        }
        self.profile.add(self.comms, "block ops", t)
    }

    fn combine(&mut self, out: &mut DistBlock, o0: usize, k: usize, x: &DistBlock, x0: usize, c: usize, coef: &[f64]) -> Result<()> {
        let t = self.profile.mark(self.comms)?;
        for (r, be) in self.ranks.iter_mut().enumerate() {
            be.gpu.bind()?;
            be.combine(&mut out.parts[r], o0, k, &x.parts[r], x0, c, coef)?;
        }
        self.profile.add(self.comms, "block ops", t)
    }

    fn copy_within(&mut self, blk: &mut DistBlock, s0: usize, d0: usize, k: usize) -> Result<()> {
        for (r, be) in self.ranks.iter_mut().enumerate() {
            be.copy_within(&mut blk.parts[r], s0, d0, k)?;
        }
        Ok(())
    }

    fn mul_in_place(&mut self, blk: &mut DistBlock, c0: usize, b: usize, coef: &[f64]) -> Result<()> {
        let t = self.profile.mark(self.comms)?;
        for (r, be) in self.ranks.iter_mut().enumerate() {
            be.gpu.bind()?;
            be.mul_in_place(&mut blk.parts[r], c0, b, coef)?;
        }
        self.profile.add(self.comms, "block ops", t)
    }

    fn reserve_slots(&mut self, _n: usize) -> Result<()> {
        Ok(())
    }

    fn qr_fast(&mut self, _: &mut DistBlock, _: usize, _: usize, _: usize, _: usize, _: bool, _: f64) -> Result<()> {
        Err(Error::Internal("the distributed backend has no device QR".into()))
    }

    fn update_neg_rt(&mut self, _: &mut DistBlock, _: usize, _: usize, _: usize, _: usize) -> Result<()> {
        Err(Error::Internal("the distributed backend has no device QR".into()))
    }

    fn fetch_slots(&mut self, _: usize, _: usize) -> Result<Vec<(Vec<f64>, bool)>> {
        Err(Error::Internal("the distributed backend has no device QR".into()))
    }

    fn fast_qr(&self) -> bool {
        false
    }

    fn copy(&mut self, src: &DistBlock, s0: usize, dst: &mut DistBlock, d0: usize, k: usize) -> Result<()> {
        for (r, be) in self.ranks.iter_mut().enumerate() {
            be.copy(&src.parts[r], s0, &mut dst.parts[r], d0, k)?;
        }
        Ok(())
    }
}

/// The truncated SVD of `a`, spread over the ranks of `comms` (block `r` on rank `r`; see the
/// module docs): the same algorithm, start block and answer as [`crate::svd`] on the whole
/// matrix, σ equal within rounding (the sums run in another order). With one rank it is
/// [`crate::svd`] itself. The singular vectors, with [`Config::vectors`], are gathered to the
/// host.
///
/// With one process per GPU ([`Comms::from_env`]) every process calls it with its own blocks
/// ([`DistCsr::scatter_ranks`](sptrans_matrix::dist::DistCsr::scatter_ranks)) and the same settings, and every process gets the same answer
/// (each decision on the host is made from all-reduced values, identical on every rank).
///
/// [`Config::observer`] receives the events as from [`crate::svd`]; on several ranks also the
/// `setup` phase (each rank's CSRC built, norms summed) whether or not [`Config::profile`] is
/// set, and with [`Config::profile`] the wall time of each distributed operation (`gather X`,
/// `A X (local)`, `At U (local)`, `reduce At U`, `dot`, `project_out`, `block ops`), every rank
/// synchronized around each.
///
/// # Errors
/// [`Error::Config`] when `a` is cut into another number of blocks than `comms` has ranks (or
/// this process holds other blocks than its ranks'), with [`Config::center`] on several ranks
/// (not distributed yet), or [`Config::vectors`] with one process per GPU; as [`crate::svd`] (settings,
/// non-finite values, cuBLAS, out of memory); NCCL errors.
pub fn svd<T: SvdValue>(comms: &Comms, a: &impl AsDistCsrView<T>, cfg: &Config) -> Result<Svd> {
    let mut observer = |e: Event<'_>| cfg.observer.emit(e);
    let a = a.dist_view();
    let (g, world) = (comms.len(), comms.world());
    if a.blocks().len() != g || a.first_block() != comms.first_rank() || a.row_starts().len() != world + 1 {
        return Err(Error::Config(format!(
            "a matrix in {} blocks ({} held here, from block {}) on ranks {} .. {} of {world}",
            a.row_starts().len() - 1,
            a.blocks().len(),
            a.first_block(),
            comms.first_rank(),
            comms.first_rank() + g
        )));
    }
    cfg.check(a.rows(), a.cols())?;
    let gpus = comms.gpus();
    if world == 1 {
        return crate::run_gpu(&gpus[0], &a.blocks()[0], cfg, None, &mut observer);
    }
    if cfg.center {
        return Err(Error::Config("centering (Config::center) is not available on several GPUs yet".into()));
    }
    if cfg.vectors && !comms.single_process() {
        return Err(Error::Config("the singular vectors (Config::vectors) need every rank in one process (Comms::local)".into()));
    }
    let t0 = std::time::Instant::now();
    let usize_of = |v: &[u64]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
    let row_starts = usize_of(a.row_starts());
    // The column space in equal parts even for a square matrix: its row blocks are balanced by
    // nonzeros, and on a power-law graph their row counts differ severalfold, which the right
    // basis's reorthogonalization (the dense work, per row) would inherit.
    let col_starts = usize_of(&even_starts(a.cols(), world));
    // Each rank's CSRC (in A's orientation: `transposed` is the operator's) and ‖A_r‖_F², built
    // on a thread per rank so that the builds (which synchronize) overlap.
    let built: Vec<Result<(DeviceCsrc<f64>, f64)>> = std::thread::scope(|sc| {
        let jobs: Vec<_> = a
            .blocks()
            .iter()
            .zip(gpus)
            .map(|(block, gpu)| {
                sc.spawn(move || -> Result<(DeviceCsrc<f64>, f64)> {
                    gpu.bind()?;
                    let mut wide = None;
                    let view = block.clone();
                    let b = T::as_f64(gpu, &view, &mut wide)?;
                    let c = DeviceCsrc::from_csr(gpu, &b)?;
                    let vals = b.vals().ok_or(Error::Csrc(gpu_csrc::Error::NoValues))?;
                    let n2 = crate::gpu::norm2(gpu, vals)?;
                    gpu.synchronize()?;
                    Ok((c, n2))
                })
            })
            .collect();
        jobs.into_iter().map(|j| j.join().unwrap_or_else(|_| Err(Error::Internal("a rank's CSRC build panicked".into())))).collect()
    });
    let mut csrc = Vec::with_capacity(g);
    let mut norm2 = Vec::with_capacity(g);
    for b in built {
        let (c, n2) = b?;
        csrc.push(c);
        norm2.push(n2);
    }
    let norm = sum_over_ranks(comms, &norm2)?.sqrt();
    if !norm.is_finite() {
        return Err(Error::NonFinite { norm });
    }
    let transposed = a.cols() > a.rows();
    let ranks = csrc.iter_mut().zip(gpus).map(|(c, gpu)| GpuBackend::new(gpu, c, false, false)).collect::<Result<Vec<_>>>()?;
    let first = comms.first_rank();
    let profile = Profile { on: cfg.profile, ..Profile::default() };
    let mut be =
        DistBackend { comms, ranks, transposed, a_cols: a.cols() as usize, row_starts, col_starts, full: Vec::new(), kcap: 0, first, profile };
    comms.synchronize()?;
    observer(Event::Phase { what: "setup", seconds: t0.elapsed().as_secs_f64() });
    let s = crate::solve(&mut be, cfg, norm, &mut observer)?;
    for (what, (seconds, calls)) in &be.profile.ops {
        observer(Event::Operation { what, seconds: *seconds, calls: *calls });
    }
    Ok(crate::untranspose(s, transposed))
}

/// The sum over every rank (of every process) of one value per local rank: an NCCL all-reduce.
fn sum_over_ranks(comms: &Comms, local: &[f64]) -> Result<f64> {
    let bufs = comms.gpus().iter().zip(local).map(|(gpu, &v)| gpu.upload(&[v])).collect::<gpu_runtime::Result<Vec<_>>>()?;
    comms.group(|cm| {
        for (r, b) in bufs.iter().enumerate() {
            // SAFETY: one value on rank r's GPU, used by nothing else until the stream passes.
            unsafe { cm.all_reduce_sum_f64(r, b.device_ptr(comms.gpus()[r].stream()).0, 1)? };
        }
        Ok(())
    })?;
    Ok(comms.gpus()[0].download(&bufs[0])?[0])
}
