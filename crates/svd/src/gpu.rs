//! The GPU's backend: products on CSRC (`gpu-csrc`), dense blocks in device memory, the block
//! operations on the GPU's stream by the tall-skinny kernels of PTX module `svd` (Gram matrices
//! and right products of blocks of up to 16 columns) or cuBLAS `dgemm` (wider ones); only
//! coefficient blocks and per-block partial sums cross to the host.
use std::ffi::c_int;

use cudarc::cublas::{result as blas, safe::CudaBlas, sys as blas_sys};
use gpu_csrc::{Op, Products};
use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::{grid_1d, DenseView, DenseViewMut, DeviceView, DeviceViewMut, Gpu, KernelOf};
use svd_kernels::qr::slot::{self, SLOT};
use svd_kernels::{GramArgs, MulArgs, QrStepArgs, MAX_COLS, MAX_PAIRS, NT};

use crate::lanczos::Backend;
use crate::{Error, Result};

/// A caller's device block the vectors are written to ([`crate::svd_into`]): its address and
/// leading dimension, taken here from its view (the borrow is held by `svd_into` for the run).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dest {
    addr: u64,
    ld: usize,
}

impl Dest {
    pub(crate) fn of(block: &mut DenseViewMut<'_, f64>) -> Self {
        Self { addr: block.data_mut().addr(), ld: block.ld() as usize }
    }
}

/// A column-major device block.
pub(crate) struct GpuBlock {
    pub(crate) rows: usize,
    pub(crate) data: CudaSlice<f64>,
}

pub(crate) struct GpuBackend<'a> {
    pub(crate) gpu: Gpu,
    /// The matrix's products: CSRC ([`gpu_csrc::DeviceCsrc`], one copy of `A`) or the CSR pair
    /// ([`gpu_csrc::CsrPair`], `A` and `Aᵀ`; row-major group kernels on wide blocks).
    pub(crate) c: &'a mut dyn Products<f64>,
    /// The operator is `Aᵀ` (a wide matrix).
    transposed: bool,
    blas: CudaBlas,
    /// Coefficients and dot products (`K × b` at most), grown on demand.
    small: CudaSlice<f64>,
    /// Per-chunk partial dot products of tall blocks, and ones to add them up.
    partial: CudaSlice<f64>,
    ones: CudaSlice<f64>,
    /// The tall-skinny kernels (`svd_gram_f64`, `svd_mul_f64`) and the most blocks a Gram launch
    /// takes (its partial sums fit `partial`).
    gram: KernelOf<GramArgs>,
    mul: KernelOf<MulArgs>,
    qr_step: KernelOf<QrStepArgs>,
    gram_blocks: u32,
    /// The QR slots (`svd_kernels::qr::slot::SLOT` values each).
    slots: CudaSlice<f64>,
    /// [`crate::svd_into`]: the caller's device blocks for the left and right vectors in the
    /// operator's orientation, when lent.
    pub(crate) dest: Option<[Dest; 2]>,
    /// [`crate::Config::center`]: ones (`m`), the column means `μ` (`n`) and room for the
    /// `1 × k` row of a correction, in `A`'s orientation.
    center: Option<Centering>,
    /// [`crate::Config::profile`]: seconds and calls per operation (each synchronized),
    /// reported as [`crate::Event::Operation`] at the end ([`GpuBackend::report`]).
    profile: Option<std::collections::BTreeMap<&'static str, (f64, usize)>>,
}

/// What the centered products need on the device.
struct Centering {
    ones: CudaSlice<f64>,
    mu: CudaSlice<f64>,
    row: CudaSlice<f64>,
}

impl GpuBackend<'_> {
    /// Centers every later product (`A − 1 μᵀ` for `A`): computes `μ = Aᵀ 1 / m` with the plan's
    /// transposed product and returns it (downloaded, for the norm).
    pub(crate) fn center(&mut self) -> Result<Vec<f64>> {
        let (m, n) = (self.c.rows() as usize, self.c.cols() as usize);
        let ones = self.gpu.upload(&vec![1.0f64; m.max(1)])?;
        let mut mu = self.gpu.alloc_zeros::<f64>(n.max(1))?;
        if m > 0 && n > 0 {
            let x = DenseView::packed(DeviceView::of(&ones).slice(0..m), m as u64)?;
            let mut o = DenseViewMut::packed(DeviceViewMut::of(&mut mu).into_slice(0..n), n as u64)?;
            self.c.multiply(Op::Transpose, 1.0 / m as f64, &x, 0.0, &mut o)?;
        }
        let means = self.gpu.download(&mu.slice(0..n))?;
        let row = self.gpu.alloc_zeros::<f64>(MAX_COLS as usize)?;
        self.center = Some(Centering { ones, mu, row });
        Ok(means)
    }

    /// `out[:, o0 .. o0 + k] −= left · (rightᵀ · x[:, x0 .. x0 + k])`: the centering correction
    /// of the product `op_a` (in `A`'s orientation) just made.
    fn correct(&mut self, op_a: Op, x: &GpuBlock, x0: usize, out: &mut GpuBlock, o0: usize, k: usize) -> Result<()> {
        let Some(cn) = &self.center else { return Ok(()) };
        let (m, n) = (self.c.rows() as usize, self.c.cols() as usize);
        if m == 0 || n == 0 || k == 0 {
            return Ok(());
        }
        let stream = self.gpu.stream();
        let (ones, mu, row) = (cn.ones.device_ptr(stream).0, cn.mu.device_ptr(stream).0, cn.row.device_ptr(stream).0);
        let (right, rl, left, ll) = match op_a {
            Op::NoTranspose => (mu, n, ones, m),
            Op::Transpose => (ones, m, mu, n),
        };
        let (xa, oa) = (self.addr(x, x0), self.addr(out, o0));
        // SAFETY: `right` holds rl = x.rows values and `left` ll = out.rows (the product's
        // operand and result lengths); `row` holds MAX_COLS ≥ k; the columns are inside their
        // blocks (the Backend contract).
        unsafe {
            self.gemm(true, 1, k, rl, 1.0, right, rl, xa, x.rows, 0.0, row, 1)?;
            self.gemm(false, ll, k, 1, -1.0, left, ll, row, 1, 1.0, oa, out.rows)
        }
    }

    /// Reports the profile's totals per operation (nothing unless profiling).
    pub(crate) fn report(&self, obs: &mut dyn FnMut(crate::Event<'_>)) {
        for (op, (secs, calls)) in self.profile.iter().flatten() {
            obs(crate::Event::Operation { what: op, seconds: *secs, calls: *calls });
        }
    }
}

/// Times `$body` under the profile (synchronizing before and after).
macro_rules! timed {
    ($self:ident, $name:literal, $body:expr) => {{
        if $self.profile.is_some() {
            $self.gpu.synchronize()?;
        }
        let t0 = std::time::Instant::now();
        let out = $body;
        if let Some(p) = $self.profile.as_mut() {
            $self.gpu.synchronize()?;
            let e = p.entry($name).or_insert((0.0, 0));
            e.0 += t0.elapsed().as_secs_f64();
            e.1 += 1;
        }
        out
    }};
}

/// A dot product `Xᵀ Y` of blocks of at least `DOT_SPLIT` rows and at most 256 results is cut into
/// up to `DOT_CHUNKS` row chunks: one strided-batched `dgemm` for the chunks' partial products,
/// one `dgemv` adding them up (and one `dgemm` for the leftover rows). A single `dgemm` of such a
/// shape (4 × 4 results over a million rows) keeps few SMs busy.
const DOT_SPLIT: usize = 1 << 16;
const DOT_CHUNKS: usize = 256;

fn blas_err(call: &'static str) -> impl FnOnce(cudarc::cublas::result::CublasError) -> Error {
    move |e| Error::Cublas { call, status: format!("{:?}", e.0) }
}

/// `‖x‖₂` of a device vector on `stream` by cuBLAS `dnrm2` through `blas` (bound to that
/// stream); waits for the result.
fn nrm2(blas: &CudaBlas, stream: &std::sync::Arc<gpu_runtime::cudarc::driver::CudaStream>, x: &impl DevicePtr<f64>) -> Result<f64> {
    let n = x.len();
    if n == 0 {
        return Ok(0.0);
    }
    let (p, _p) = x.device_ptr(stream);
    let mut out = 0.0f64;
    // SAFETY: a device vector of n values; the result is written to a host scalar (host
    // pointer mode) when the call returns.
    let st = unsafe { blas_sys::cublasDnrm2_v2(*blas.handle(), n as c_int, p as *const f64, 1, &mut out) };
    st.result().map_err(blas_err("cublasDnrm2"))?;
    Ok(out)
}

/// `‖x‖₂²` of a device vector on `gpu` (a cuBLAS handle made for the call).
///
/// # Errors
/// cuBLAS unavailable or failing, driver errors.
pub(crate) fn norm2(gpu: &Gpu, x: &impl DevicePtr<f64>) -> Result<f64> {
    gpu_runtime::vendor::cublas_library().map_err(|e| Error::CublasUnavailable(e.to_string()))?;
    gpu.bind()?;
    let blas = CudaBlas::new(gpu.stream().clone()).map_err(blas_err("cublasCreate"))?;
    Ok(nrm2(&blas, gpu.stream(), x)?.powi(2))
}

impl<'a> GpuBackend<'a> {
    pub fn new(gpu: &Gpu, c: &'a mut dyn Products<f64>, transposed: bool, profile: bool) -> Result<Self> {
        gpu_runtime::vendor::cublas_library().map_err(|e| Error::CublasUnavailable(e.to_string()))?;
        gpu.context().bind_to_thread().map_err(gpu_runtime::Error::driver("binding the context for cuBLAS"))?;
        let blas = CudaBlas::new(gpu.stream().clone()).map_err(blas_err("cublasCreate"))?;
        let small = gpu.alloc::<f64>(1024)?;
        let partial = gpu.alloc::<f64>(DOT_CHUNKS * 256)?;
        let ones = gpu.upload(&[1.0f64; DOT_CHUNKS])?;
        let profile = profile.then(Default::default);
        let (gram, mul) = (gpu.kernel_of(&crate::MODULE, "svd_gram_f64")?, gpu.kernel_of(&crate::MODULE, "svd_mul_f64")?);
        let qr_step = gpu.kernel_of(&crate::MODULE, "svd_qr_step_f64")?;
        let slots = gpu.alloc::<f64>(SLOT)?;
        // Two blocks per SM; their partial sums (MAX_PAIRS each) fit `partial`.
        let gram_blocks = (2 * gpu.props().sm_count.max(1)).min((DOT_CHUNKS * 256 / MAX_PAIRS as usize) as u32);
        Ok(Self {
            gpu: gpu.clone(),
            c,
            transposed,
            blas,
            small,
            partial,
            ones,
            gram,
            mul,
            qr_step,
            gram_blocks,
            slots,
            dest: None,
            center: None,
            profile,
        })
    }

    /// The device address of the coefficient buffer `small` (what [`GpuBackend::dot_to_small`]
    /// writes).
    pub(crate) fn small_addr(&self) -> u64 {
        self.small.device_ptr(self.gpu.stream()).0
    }

    /// The first `len` values of `small`, read back (synchronizes the stream).
    pub(crate) fn small_download(&self, len: usize) -> Result<Vec<f64>> {
        Ok(self.gpu.download(&self.small.slice(0..len))?)
    }

    pub(crate) fn small(&mut self, len: usize) -> Result<()> {
        if self.small.len() < len {
            self.small = self.gpu.alloc::<f64>(len.next_power_of_two())?;
        }
        Ok(())
    }

    /// `C = op(X) · Y` on raw addresses (column-major, leading dimensions given).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn gemm(
        &self,
        tx: bool,
        m: usize,
        n: usize,
        k: usize,
        alpha: f64,
        x: u64,
        ldx: usize,
        y: u64,
        ldy: usize,
        beta: f64,
        c: u64,
        ldc: usize,
    ) -> Result<()> {
        if m == 0 || n == 0 {
            return Ok(());
        }
        let t = if tx { blas_sys::cublasOperation_t::CUBLAS_OP_T } else { blas_sys::cublasOperation_t::CUBLAS_OP_N };
        let nn = blas_sys::cublasOperation_t::CUBLAS_OP_N;
        // SAFETY: the caller's blocks hold the addressed columns; host scalars.
        unsafe {
            blas::dgemm(
                *self.blas.handle(),
                t,
                nn,
                m as c_int,
                n as c_int,
                k as c_int,
                &alpha,
                x as *const f64,
                ldx.max(1) as c_int,
                y as *const f64,
                ldy.max(1) as c_int,
                &beta,
                c as *mut f64,
                ldc.max(1) as c_int,
            )
        }
        .map_err(blas_err("cublasDgemm"))
    }

    /// The 2-norm of a device vector (cuBLAS `dnrm2`).
    pub fn norm(&self, x: &impl DevicePtr<f64>) -> Result<f64> {
        nrm2(&self.blas, self.gpu.stream(), x)
    }

    pub(crate) fn addr(&self, b: &GpuBlock, c0: usize) -> u64 {
        b.data.device_ptr(self.gpu.stream()).0 + (c0 * b.rows * 8) as u64
    }

    fn upload_small(&mut self, coef: &[f64]) -> Result<u64> {
        self.small(coef.len())?;
        let mut v = self.small.slice_mut(0..coef.len());
        self.gpu.stream().memcpy_htod(coef, &mut v).map_err(gpu_runtime::Error::driver("uploading coefficients"))?;
        Ok(self.small.device_ptr(self.gpu.stream()).0)
    }
}

impl GpuBackend<'_> {
    /// `Xᵀ Y` (`c × k`, `c · k ≤ MAX_PAIRS`) of two blocks of `rows` rows by `svd_gram_f64`: per-block
    /// partial sums, added on the host in block order (the same bits every run).
    ///
    /// # Safety
    /// `xa` and `ya` are the device addresses of `c` and `k` columns of `rows` values each
    /// (leading dimension `rows`) inside live blocks; `c · k ≤ MAX_PAIRS`.
    unsafe fn gram_small(&mut self, rows: usize, xa: u64, c: usize, ya: u64, k: usize) -> Result<Vec<f64>> {
        let pairs = c * k;
        let cfg = self.gram_cfg(rows);
        let blocks = cfg.grid_dim.0 as usize;
        let part = self.partial.device_ptr_mut(self.gpu.stream()).0;
        let (rows64, c32, k32) = (rows as u64, c as u32, k as u32);
        // SAFETY: as in `gram_launch`.
        unsafe { self.gram_launch(cfg, rows64, c32, k32, xa, ya, part, 0)? };
        let sums = self.gpu.download(&self.partial.slice(0..blocks * pairs))?;
        Ok((0..pairs).map(|p| (0..blocks).map(|b| sums[b * pairs + p]).sum()).collect())
    }

    /// The grid of `svd_gram_f64` over `rows` rows: at most `gram_blocks` blocks, whose partial
    /// sums fit `partial`.
    fn gram_cfg(&self, rows: usize) -> gpu_runtime::cudarc::driver::LaunchConfig {
        grid_1d(rows as u64, NT, NT as u64 * 4, self.gram_blocks)
    }

    /// Launches `svd_gram_f64(rows, c, k, x, y, partial, skip)`.
    ///
    /// # Safety
    /// Columns of two blocks of `rows` rows (leading dimension rows) at `xa` and `ya`; `c · k ≤
    /// MAX_PAIRS`; `part` holds `cfg`'s blocks · c · k values; `skip` 0 or a device value.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gram_launch(
        &self,
        cfg: gpu_runtime::cudarc::driver::LaunchConfig,
        rows: u64,
        c: u32,
        k: u32,
        xa: u64,
        ya: u64,
        part: u64,
        skip: u64,
    ) -> Result<()> {
        let args = GramArgs { x: xa as *const f64, y: ya as *const f64, partial: part as *mut f64, skip: skip as *const f64, rows, c, k };
        // SAFETY: svd_gram_f64(GramArgs): the caller's contract; blocks of NT threads.
        unsafe { self.gram.launch(self.gpu.stream(), cfg, args)? };
        Ok(())
    }

    /// Launches `svd_mul_f64`: `Y = X · C` (or `+=` with `accumulate`), `X` of `c` and `Y` of `k
    /// ≤ MAX_COLS` columns of `rows` rows, `C` at device address `coef`; skipped when `*skip == 0`.
    ///
    /// # Safety
    /// The columns lie inside their blocks, disjoint or the same with `c = k`; `coef` holds `c ·
    /// k` values; `skip` 0 or a device value.
    #[allow(clippy::too_many_arguments)]
    unsafe fn mul_launch(&self, rows: usize, xa: u64, c: usize, coef: u64, accumulate: bool, ya: u64, k: usize, skip: u64) -> Result<()> {
        let args = MulArgs {
            x: xa as *const f64,
            coef: coef as *const f64,
            y: ya as *mut f64,
            skip: skip as *const f64,
            rows: rows as u64,
            c: c as u32,
            k: k as u32,
            accumulate: accumulate as u32,
        };
        let cfg = grid_1d(rows as u64, NT, NT as u64 * 4, 4 * self.gpu.props().sm_count.max(1));
        // SAFETY: svd_mul_f64(MulArgs): the caller's contract.
        unsafe { self.mul.launch(self.gpu.stream(), cfg, args)? };
        Ok(())
    }

    /// `Y = X · coef` (or `+= ` with `accumulate`) with `coef` from the host.
    ///
    /// # Safety
    /// `xa` and `ya` are the device addresses of `c` and `k ≤ MAX_COLS` columns of `rows` values
    /// (leading dimension `rows`) inside live blocks, disjoint or the same with `c = k`; `coef`
    /// holds `c · k` values.
    #[allow(clippy::too_many_arguments)]
    unsafe fn mul_small(&mut self, rows: usize, xa: u64, c: usize, coef: &[f64], accumulate: bool, ya: u64, k: usize) -> Result<()> {
        let s = self.upload_small(coef)?;
        // SAFETY: the caller's contract; small holds c · k values.
        unsafe { self.mul_launch(rows, xa, c, s, accumulate, ya, k, 0) }
    }

    /// `Xᵀ Y` (`c × k`) of two blocks of `rows` rows into the first `c · k` values of `small`,
    /// on the device (nothing read back): one `dgemm`, or for tall blocks and at most 256 results
    /// a strided-batched `dgemm` over row chunks and a `dgemv` adding them up.
    ///
    /// # Safety
    /// `xa` and `ya` are the device addresses of `c` and `k` columns of `rows` values each
    /// (leading dimension `rows`) inside live blocks.
    pub(crate) unsafe fn dot_to_small(&mut self, rows: usize, xa: u64, c: usize, ya: u64, k: usize) -> Result<()> {
        self.small(c * k)?;
        let s = self.small.device_ptr_mut(self.gpu.stream()).0;
        if rows >= DOT_SPLIT && c * k <= 256 {
            let nb = (rows / 4096).min(DOT_CHUNKS);
            let ch = rows / nb;
            let part = self.partial.device_ptr_mut(self.gpu.stream()).0;
            let ones = self.ones.device_ptr(self.gpu.stream()).0;
            let (t, nn) = (blas_sys::cublasOperation_t::CUBLAS_OP_T, blas_sys::cublasOperation_t::CUBLAS_OP_N);
            let h = *self.blas.handle();
            let (one, zero) = (1.0f64, 0.0f64);
            // SAFETY: chunk i is rows i·ch .. (i + 1)·ch of both blocks (lda = rows); partial
            // holds nb · c · k ≤ 256 · 256 results; ones holds nb ones; small holds c · k.
            unsafe {
                blas_sys::cublasDgemmStridedBatched(
                    h,
                    t,
                    nn,
                    c as c_int,
                    k as c_int,
                    ch as c_int,
                    &one,
                    xa as *const f64,
                    rows as c_int,
                    ch as i64,
                    ya as *const f64,
                    rows as c_int,
                    ch as i64,
                    &zero,
                    part as *mut f64,
                    c as c_int,
                    (c * k) as i64,
                    nb as c_int,
                )
                .result()
                .map_err(blas_err("cublasDgemmStridedBatched"))?;
                blas_sys::cublasDgemv_v2(
                    h,
                    nn,
                    (c * k) as c_int,
                    nb as c_int,
                    &one,
                    part as *const f64,
                    (c * k) as c_int,
                    ones as *const f64,
                    1,
                    &zero,
                    s as *mut f64,
                    1,
                )
                .result()
                .map_err(blas_err("cublasDgemv"))?;
                let done = nb * ch;
                if done < rows {
                    self.gemm(true, c, k, rows - done, 1.0, xa + (done * 8) as u64, rows, ya + (done * 8) as u64, rows, 1.0, s, c)?;
                }
            }
        } else {
            // SAFETY: the caller's columns; small holds c · k.
            unsafe { self.gemm(true, c, k, rows, 1.0, xa, rows, ya, rows, 0.0, s, c)? };
        }
        Ok(())
    }

    /// Device address of slot `s`'s value at `off`.
    fn slot_addr(&self, s: usize, off: usize) -> u64 {
        self.slots.device_ptr(self.gpu.stream()).0 + ((s * SLOT + off) * 8) as u64
    }
}

impl Backend for GpuBackend<'_> {
    type Block = GpuBlock;

    fn shape(&self) -> (usize, usize) {
        let (r, c) = (self.c.rows() as usize, self.c.cols() as usize);
        if self.transposed {
            (c, r)
        } else {
            (r, c)
        }
    }

    fn alloc(&mut self, rows: usize, cols: usize) -> Result<GpuBlock> {
        Ok(GpuBlock { rows, data: self.gpu.alloc_zeros::<f64>((rows * cols).max(1))? })
    }

    fn set(&mut self, blk: &mut GpuBlock, c0: usize, k: usize, data: &[f64]) -> Result<()> {
        timed!(
            self,
            "set",
            (|| -> Result<_> {
                let rows = blk.rows;
                let mut v = blk.data.slice_mut(c0 * rows..(c0 + k) * rows);
                self.gpu.stream().memcpy_htod(data, &mut v).map_err(gpu_runtime::Error::driver("uploading a block"))?;
                Ok(())
            })()
        )
    }

    fn get(&mut self, blk: &GpuBlock, c0: usize, k: usize) -> Result<Vec<f64>> {
        timed!(
            self,
            "get",
            (|| -> Result<_> {
                let rows = blk.rows;
                Ok(self.gpu.download(&blk.data.slice(c0 * rows..(c0 + k) * rows))?)
            })()
        )
    }

    fn product(&mut self, op: Op, x: &GpuBlock, x0: usize, out: &mut GpuBlock, o0: usize, k: usize) -> Result<()> {
        timed!(
            self,
            "product",
            (|| -> Result<_> {
                let op = if self.transposed { op.flip() } else { op };
                let xv = DenseView::packed(DeviceView::of(&x.data).slice(x0 * x.rows..(x0 + k) * x.rows), x.rows as u64)?;
                let rows = out.rows;
                let mut ov = DenseViewMut::packed(DeviceViewMut::of(&mut out.data).into_slice(o0 * rows..(o0 + k) * rows), rows as u64)?;
                self.c.multiply(op, 1.0, &xv, 0.0, &mut ov)?;
                self.correct(op, x, x0, out, o0, k)
            })()
        )
    }

    fn dot(&mut self, x: &GpuBlock, x0: usize, c: usize, y: &GpuBlock, y0: usize, k: usize) -> Result<Vec<f64>> {
        timed!(
            self,
            "dot",
            (|| -> Result<_> {
                if c == 0 || k == 0 {
                    return Ok(vec![0.0; c * k]);
                }
                let (xa, ya) = (self.addr(x, x0), self.addr(y, y0));
                let rows = x.rows;
                if c * k <= MAX_PAIRS as usize && y.rows == rows && rows > 0 {
                    // SAFETY: columns x0..x0 + c of x and y0..y0 + k of y (the Backend contract:
                    // inside their blocks), both of `rows` rows; c · k ≤ MAX_PAIRS.
                    return unsafe { self.gram_small(rows, xa, c, ya, k) };
                }
                // SAFETY: columns x0 .. x0 + c of x and y0 .. y0 + k of y (the Backend contract),
                // both of `rows` rows.
                unsafe { self.dot_to_small(rows, xa, c, ya, k)? };
                Ok(self.gpu.download(&self.small.slice(0..c * k))?)
            })()
        )
    }

    fn update_within(&mut self, blk: &mut GpuBlock, y0: usize, k: usize, x0: usize, c: usize, coef: &[f64]) -> Result<()> {
        timed!(
            self,
            "update_within",
            (|| -> Result<_> {
                if c == 0 || k == 0 {
                    return Ok(());
                }
                let (xa, ya) = (self.addr(blk, x0), self.addr(blk, y0));
                if c <= MAX_COLS as usize && k <= MAX_COLS as usize {
                    // SAFETY: disjoint column ranges of one block (the Backend contract), c, k ≤
                    // MAX_COLS; coef holds c · k values.
                    return unsafe { self.mul_small(blk.rows, xa, c, coef, true, ya, k) };
                }
                let s = self.upload_small(coef)?;
                // SAFETY: disjoint column ranges of one block of blk.rows rows; coef c × k.
                unsafe { self.gemm(false, blk.rows, k, c, 1.0, xa, blk.rows, s, c, 1.0, ya, blk.rows) }
            })()
        )
    }

    fn combine(&mut self, out: &mut GpuBlock, o0: usize, k: usize, x: &GpuBlock, x0: usize, c: usize, coef: &[f64]) -> Result<()> {
        timed!(
            self,
            "combine",
            (|| -> Result<_> {
                if k == 0 {
                    return Ok(());
                }
                let (xa, oa) = (self.addr(x, x0), self.addr(out, o0));
                if c <= MAX_COLS as usize && k <= MAX_COLS as usize && c > 0 {
                    // SAFETY: columns of two different blocks of the same row count (the Backend
                    // contract), c, k ≤ MAX_COLS; coef holds c · k values.
                    return unsafe { self.mul_small(out.rows, xa, c, coef, false, oa, k) };
                }
                let s = self.upload_small(coef)?;
                // SAFETY: columns of two blocks of the same row count; coef c × k.
                unsafe { self.gemm(false, out.rows, k, c, 1.0, xa, x.rows, s, c, 0.0, oa, out.rows) }
            })()
        )
    }

    fn project_out(&mut self, blk: &mut GpuBlock, prior: usize, c0: usize, k: usize) -> Result<()> {
        timed!(
            self,
            "project_out",
            (|| -> Result<_> {
                if prior == 0 || k == 0 {
                    return Ok(());
                }
                self.small(prior * k)?;
                let s = self.small.device_ptr_mut(self.gpu.stream()).0;
                let (xa, ya, rows) = (self.addr(blk, 0), self.addr(blk, c0), blk.rows);
                // SAFETY: columns 0 .. prior and c0 .. c0 + k (disjoint) of one block of `rows` rows;
                // small holds prior · k: C = Xᵀ y, then y −= X C, in stream order.
                unsafe {
                    self.gemm(true, prior, k, rows, 1.0, xa, rows, ya, rows, 0.0, s, prior)?;
                    self.gemm(false, rows, k, prior, -1.0, xa, rows, s, prior, 1.0, ya, rows)
                }
            })()
        )
    }

    fn mul_in_place(&mut self, blk: &mut GpuBlock, c0: usize, b: usize, coef: &[f64]) -> Result<()> {
        if b == 0 {
            return Ok(());
        }
        // A block has at most MAX_K ≤ MAX_COLS columns (`Config::check`).
        const _: () = assert!(MAX_COLS >= gpu_csrc::MAX_K);
        let a = self.addr(blk, c0);
        // SAFETY: the same b ≤ MAX_COLS columns in and out (the kernel reads a row's c values before
        // writing them); coef holds b · b values.
        timed!(self, "mul_in_place", unsafe { self.mul_small(blk.rows, a, b, coef, false, a, b) })
    }

    fn reserve_slots(&mut self, n: usize) -> Result<()> {
        if self.slots.len() < n * SLOT {
            self.slots = self.gpu.alloc::<f64>(n.max(1) * SLOT)?;
        }
        Ok(())
    }

    fn qr_fast(&mut self, blk: &mut GpuBlock, rows: usize, c0: usize, b: usize, s: usize, one_pass: bool, abs: f64) -> Result<()> {
        if b * b > MAX_PAIRS as usize || rows == 0 || (s + 1) * SLOT > self.slots.len() {
            return Err(crate::Error::Internal(format!("qr_fast: block of {b} columns, {rows} rows, slot {s}")));
        }
        timed!(
            self,
            "qr_fast",
            (|| -> Result<_> {
                let a = self.addr(blk, c0);
                let cfg = self.gram_cfg(rows);
                let blocks = cfg.grid_dim.0;
                let part = self.partial.device_ptr_mut(self.gpu.stream()).0;
                let (slot0, need2) = (self.slot_addr(s, 0), self.slot_addr(s, slot::NEED2));
                let (b32, one) = (b as u32, one_pass as u32);
                let step = gpu_runtime::cudarc::driver::LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
                for pass in 1..=2u32 {
                    let skip = if pass == 2 { need2 } else { 0 };
                    let inv = self.slot_addr(s, if pass == 1 { slot::INV1 } else { slot::INV2 });
                    // SAFETY: columns c0 .. c0 + b of blk (rows rows); b · b ≤ MAX_PAIRS; partial holds
                    // gram_blocks · MAX_PAIRS values; the slot (checked above) holds SLOT values, its
                    // NEED2 at `need2`. svd_qr_step_f64(QrStepArgs):
                    // one block of 32 ≥ MAX_PAIRS ≥ b · b threads. Then the in-place right product by the pass's
                    // inverse in the slot (c = k = b).
                    unsafe {
                        self.gram_launch(cfg, rows as u64, b32, b32, a, a, part, skip)?;
                        let args = QrStepArgs { partial: part as *const f64, slot: slot0 as *mut f64, abs, blocks, b: b32, pass, one_pass: one };
                        self.qr_step.launch(self.gpu.stream(), step, args)?;
                        self.mul_launch(rows, a, b, inv, false, a, b, skip)?;
                    }
                }
                Ok(())
            })()
        )
    }

    fn update_neg_rt(&mut self, blk: &mut GpuBlock, y0: usize, x0: usize, b: usize, s: usize) -> Result<()> {
        if b > MAX_COLS as usize || (s + 1) * SLOT > self.slots.len() {
            return Err(crate::Error::Internal(format!("update_neg_rt: block of {b} columns, slot {s}")));
        }
        let (xa, ya, coef) = (self.addr(blk, x0), self.addr(blk, y0), self.slot_addr(s, slot::NEG_RT));
        // SAFETY: disjoint column ranges of one block; the slot's −Rᵀ of b · b values.
        timed!(self, "update_neg_rt", unsafe { self.mul_launch(blk.rows, xa, b, coef, true, ya, b, 0) })
    }

    fn fetch_slots(&mut self, n: usize, b: usize) -> Result<Vec<(Vec<f64>, bool)>> {
        timed!(
            self,
            "fetch_slots",
            (|| -> Result<_> {
                let all = self.gpu.download(&self.slots.slice(0..(n * SLOT).min(self.slots.len())))?;
                Ok(all.chunks(SLOT).map(|v| (v[slot::R..slot::R + b * b].to_vec(), v[slot::BAD] != 0.0)).collect())
            })()
        )
    }

    fn copy_within(&mut self, blk: &mut GpuBlock, s0: usize, d0: usize, k: usize) -> Result<()> {
        timed!(
            self,
            "copy_within",
            (|| -> Result<_> {
                let rows = blk.rows;
                let (mut lo, hi) = blk.data.split_at_mut(s0 * rows);
                let sv = hi.slice(0..k * rows);
                let mut dv = lo.slice_mut(d0 * rows..(d0 + k) * rows);
                self.gpu.stream().memcpy_dtod(&sv, &mut dv).map_err(gpu_runtime::Error::driver("copying columns"))?;
                Ok(())
            })()
        )
    }

    fn exports(&self) -> bool {
        self.dest.is_some()
    }

    fn export(&mut self, blk: &GpuBlock, c0: usize, k: usize, scale: &[f64], left: bool, at: usize) -> Result<()> {
        let Some(dest) = self.dest else { return Err(Error::Internal("no destinations for vectors".into())) };
        let Dest { addr, ld } = dest[if left { 0 } else { 1 }];
        if k == 0 || blk.rows == 0 {
            return Ok(());
        }
        // dst[:, at .. at + k] = blk[:, c0 .. c0 + k] · diag(scale), one small GEMM.
        let diag: Vec<f64> = (0..k * k).map(|x| if x % (k + 1) == 0 { scale[x / (k + 1)] } else { 0.0 }).collect();
        let s = self.upload_small(&diag)?;
        let x = self.addr(blk, c0);
        // SAFETY: columns c0 .. c0 + k of the block (rows each); the destination was checked by
        // svd_into to hold `rank` columns of `blk.rows` rows at leading dimension `ld`, and
        // at + k ≤ rank; the k × k coefficients just uploaded.
        unsafe { self.gemm(false, blk.rows, k, k, 1.0, x, blk.rows, s, k, 0.0, addr + (at * ld * 8) as u64, ld) }
    }

    fn copy(&mut self, src: &GpuBlock, s0: usize, dst: &mut GpuBlock, d0: usize, k: usize) -> Result<()> {
        timed!(
            self,
            "copy",
            (|| -> Result<_> {
                let rows = src.rows;
                let sv = src.data.slice(s0 * rows..(s0 + k) * rows);
                let mut dv = dst.data.slice_mut(d0 * rows..(d0 + k) * rows);
                self.gpu.stream().memcpy_dtod(&sv, &mut dv).map_err(gpu_runtime::Error::driver("copying a block"))?;
                Ok(())
            })()
        )
    }
}

#[cfg(test)]
mod tests {
    //! The GPU backend's block operations (the tall-skinny kernels and the device QR) against the
    //! twin's (`HostBackend`), on fresh random blocks of awkward row counts, outputs poisoned
    //! with NaN where they are written without being read.
    use super::*;
    use crate::host::HostBackend;
    use gpu_testkit::{gpu_test, max_len, rng};
    use rand::Rng;
    use sptrans_matrix::{device::DeviceCsr, generate};

    /// `|g − h| ≤ bound(i)` for every entry, with NaN failing.
    fn close(what: &str, g: &[f64], h: &[f64], bound: impl Fn(usize) -> f64) {
        assert_eq!(g.len(), h.len(), "{what}");
        for (i, (x, y)) in g.iter().zip(h).enumerate() {
            assert!((x - y).abs() <= bound(i), "{what}: entry {i}: GPU {x:e}, twin {y:e}, bound {:e}", bound(i));
        }
    }

    gpu_test!(fn block_operations_match_the_twin(gpu) {
        let (mut r, _seed) = rng();
        let a = generate::uniform::<f64>(64, 8, 100, r.random()).unwrap();
        let twin = gpu_csrc::serial::Csrc::from_csr(&a);
        let mut dc = gpu_csrc::DeviceCsrc::from_csr(gpu, &DeviceCsr::upload(gpu, &a).unwrap()).unwrap();
        let mut gb = GpuBackend::new(gpu, &mut dc, false, false).unwrap();
        let mut hb = HostBackend { c: crate::host::Products::Twin(&twin), transposed: false, slots: Vec::new(), mu: None };
        gb.reserve_slots(1).unwrap();
        hb.reserve_slots(1).unwrap();
        let eps = f64::EPSILON;
        for rows in [1usize, 2, 31, 32, 33, 255, 257, 1023, 4097, 70_001] {
            if rows > max_len() {
                continue;
            }
            for b in 1..=4usize {
                // Columns 0 .. b: X; b .. 2b: Y; 2b .. 3b: Z.
                let data: Vec<f64> = (0..rows * 3 * b).map(|_| r.random_range(-1.0..1.0)).collect();
                let coef: Vec<f64> = (0..b * b).map(|_| r.random_range(-1.0..1.0)).collect();
                let (mut gx, mut hx) = (gb.alloc(rows, 3 * b).unwrap(), hb.alloc(rows, 3 * b).unwrap());
                gb.set(&mut gx, 0, 3 * b, &data).unwrap();
                hb.set(&mut hx, 0, 3 * b, &data).unwrap();
                let col = |c: usize, i: usize| data[i + c * rows];
                let what = |op: &str| format!("{op}, {rows} rows, b = {b}");
                // Xᵀ Y (the Gram kernel: b² ≤ 16): 2γ_rows · Σ|x||y| ≤ rows · ε · Σ|x||y|.
                let (g, h) = (gb.dot(&gx, 0, b, &gx, b, b).unwrap(), hb.dot(&hx, 0, b, &hx, b, b).unwrap());
                close(&what("dot"), &g, &h, |p| rows as f64 * eps * (0..rows).map(|i| (col(p % b, i) * col(b + p / b, i)).abs()).sum::<f64>());
                // A fresh block poisoned with NaN: Y = X · coef, every entry written.
                let (mut go, mut ho) = (gb.alloc(rows, b).unwrap(), hb.alloc(rows, b).unwrap());
                gb.set(&mut go, 0, b, &vec![f64::NAN; rows * b]).unwrap();
                gb.combine(&mut go, 0, b, &gx, 0, b, &coef).unwrap();
                hb.combine(&mut ho, 0, b, &hx, 0, b, &coef).unwrap();
                let mul_bound = |i: usize, j: usize, old: f64| (b + 1) as f64 * eps * ((0..b).map(|a| (col(a, i) * coef[a + j * b]).abs()).sum::<f64>() + old.abs());
                close(&what("combine"), &gb.get(&go, 0, b).unwrap(), &hb.get(&ho, 0, b).unwrap(), |e| mul_bound(e % rows, e / rows, 0.0));
                // Z += X · coef, then Y = Y · coef in place.
                gb.update_within(&mut gx, 2 * b, b, 0, b, &coef).unwrap();
                hb.update_within(&mut hx, 2 * b, b, 0, b, &coef).unwrap();
                close(&what("update_within"), &gb.get(&gx, 2 * b, b).unwrap(), &hb.get(&hx, 2 * b, b).unwrap(), |e| mul_bound(e % rows, e / rows, col(2 * b + e / rows, e % rows)));
                gb.mul_in_place(&mut gx, b, b, &coef).unwrap();
                hb.mul_in_place(&mut hx, b, b, &coef).unwrap();
                let in_place = |i: usize, j: usize| (b + 1) as f64 * eps * (0..b).map(|a| (col(b + a, i) * coef[a + j * b]).abs()).sum::<f64>();
                close(&what("mul_in_place"), &gb.get(&gx, b, b).unwrap(), &hb.get(&hx, b, b).unwrap(), |e| in_place(e % rows, e / rows));
                // The device QR of X (two passes) against the twin's: fewer rows than columns must
                // flag dependence on both; from 31 rows on (random columns, well conditioned) Q
                // and R agree to 1e-10 (the Gram sums differ in order, and CholeskyQR squares the
                // condition number).
                gb.qr_fast(&mut gx, rows, 0, b, 0, false, 1e-13).unwrap();
                hb.qr_fast(&mut hx, rows, 0, b, 0, false, 1e-13).unwrap();
                let (gs, hs) = (gb.fetch_slots(1, b).unwrap(), hb.fetch_slots(1, b).unwrap());
                if rows < b {
                    assert!(gs[0].1 && hs[0].1, "{}: dependence not flagged", what("qr_fast"));
                } else if rows >= 31 {
                    assert!(!gs[0].1 && !hs[0].1, "{}: dependence flagged", what("qr_fast"));
                    let rmax = hs[0].0.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                    close(&what("qr_fast R"), &gs[0].0, &hs[0].0, |_| 1e-10 * rmax);
                    close(&what("qr_fast Q"), &gb.get(&gx, 0, b).unwrap(), &hb.get(&hx, 0, b).unwrap(), |_| 1e-10);
                }
            }
        }
    });
}
