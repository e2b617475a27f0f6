//! SELL-C-σ (Kreutzer, Hager, Wellein, Fehske & Bishop, SIAM J. Sci. Comput. 2014): chunks of
//! 32 rows (one warp, a lane a row), each chunk padded to its longest row and stored
//! column-major, rows sorted by decreasing length inside windows of σ rows so that a chunk's rows
//! are alike. ELL's coalesced reads without ELL's global padding, and without JDS's one thread
//! per row over the whole diagonal list. A chunk whose columns span fewer than 2^16 stores them
//! in 16 bits above its smallest (2 bytes a slot less to read; exact). Deterministic, the same
//! bits as CSR-scalar. Refused past [`SELL_MAX_FILL`] slots per nonzero (one very long row among
//! short ones).
mod serial;

use gpu_runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use gpu_runtime::{arg_ptr, arg_ptr_mut, arg_ptr_or_null, DeviceView, DeviceViewMut, Gpu, KernelOf};
use spmv_kernels::{SellArgs, SellChunksArgs, SellFillArgs, SELL_C};
use sptrans_matrix::{AsDeviceCsrView, DeviceCsrView};

pub use serial::{Sell, SellOptions, SELL_MAX_FILL, SELL_SIGMA, SELL_SORT_ABOVE};

use crate::launch::{grid, Kernels};
use crate::{convert, Result, SpmvValue};

/// A SELL-C-σ matrix on the GPU (see [`Sell`] for the layout); fields private, built only by
/// conversion from a valid CSR.
pub struct DeviceSell<T: SpmvValue> {
    rows: u64,
    cols: u64,
    sigma: u32,
    perm: Option<CudaSlice<u32>>,
    wptr: CudaSlice<u32>,
    iptr: CudaSlice<u32>,
    base: CudaSlice<u32>,
    idx: CudaSlice<u32>,
    val: CudaSlice<T>,
    /// SELL-VI ([`crate::Format::SellVi`]): each slot's value index (`val` then empty) and the
    /// table; no bytes for a matrix of one value.
    vi: Option<(CudaSlice<u8>, CudaSlice<T>)>,
    words: u64,
    slots: u64,
    product: KernelOf<SellArgs<T>>,
}

impl<T: SpmvValue> DeviceSell<T> {
    /// Converts on the GPU: each chunk's width and column range (a warp per chunk), their scans
    /// (`gpu-scan`); when σ > 1 the rows first sorted by decreasing length inside their windows
    /// (`gpu-segsort`, stable); then a warp per chunk writes its slots. Reads a few totals back
    /// (synchronizes).
    ///
    /// # Errors
    /// [`crate::Error::Invalid`] for a σ that is neither 1 nor a multiple of 32;
    /// [`crate::Error::TooMuchPadding`] past [`SELL_MAX_FILL`]; [`crate::Error::NoValues`]; out
    /// of memory, launch errors.
    pub fn from_csr(gpu: &Gpu, a: &impl AsDeviceCsrView<T>, options: SellOptions) -> Result<Self> {
        Self::convert(gpu, &Kernels::<T>::load(gpu)?, &a.csr_view(), options)
    }

    pub(crate) fn convert(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>, options: SellOptions) -> Result<Self> {
        Self::build(gpu, k, a, options, None)
    }

    /// SELL-VI: the values by index ([`crate::vi`]) first (a matrix of too many values is
    /// refused before its layout is made), then SELL-C-σ's layout with each slot's byte.
    pub(crate) fn convert_vi(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>, options: SellOptions) -> Result<Self> {
        let v = crate::vi::ValueIndex::convert(gpu, k, a)?;
        Self::build(gpu, k, a, options, Some(v))
    }

    fn build(gpu: &Gpu, k: &Kernels<T>, a: &DeviceCsrView<'_, T>, options: SellOptions, vi: Option<crate::vi::ValueIndex<T>>) -> Result<Self> {
        options.check()?;
        let vals = a.vals().ok_or(crate::Error::NoValues)?;
        let (rows, nnz) = (a.rows(), a.nnz());
        let chunks = rows.div_ceil(SELL_C);
        let mut wcount = gpu.alloc_zeros::<u32>(chunks as usize + 1)?;
        let mut icount = gpu.alloc_zeros::<u32>(chunks as usize + 1)?;
        let mut base = gpu.alloc_zeros::<u32>(chunks.max(1) as usize)?;
        let stream = gpu.stream().clone();
        let shapes =
            |perm: Option<&CudaSlice<u32>>, wcount: &mut CudaSlice<u32>, icount: &mut CudaSlice<u32>, base: &mut CudaSlice<u32>| -> Result<()> {
                if chunks > 0 {
                    let ((ptr, _p), (idx, _i), (perm, _o)) = (arg_ptr(a.ptr(), &stream), arg_ptr(a.idx(), &stream), arg_ptr_or_null(perm, &stream));
                    let ((wcount, _w), (icount, _c), (base, _b)) =
                        (arg_ptr_mut(wcount, &stream), arg_ptr_mut(icount, &stream), arg_ptr_mut(base, &stream));
                    let args = SellChunksArgs { ptr, idx, perm, wcount, icount, base, rows, narrow: options.compress as u32 };
                    // SAFETY: spmv_sell_chunks(SellChunksArgs): a valid CSR; perm null or a
                    // permutation of its rows; the outputs hold chunks entries; blocks of NT
                    // (whole warps).
                    unsafe { k.sell_chunks.launch(&stream, grid(gpu, chunks * SELL_C), args)? };
                }
                Ok(())
            };
        // The chunks of the rows in order: σ = 1's layout (and an empty matrix's), and what a
        // chosen σ is decided on; not measured for a σ > 1 given.
        let mut in_order = None;
        if rows == 0 || options.sigma.is_none_or(|s| s == 1) {
            shapes(None, &mut wcount, &mut icount, &mut base)?;
            in_order = Some(convert::exclusive_scan(gpu, &wcount)?);
        }
        let sigma = options.sigma.unwrap_or_else(|| SellOptions::chosen_sigma(SELL_C * in_order.as_ref().map_or(0, |s| s.1 as u64), nnz));
        let mut perm = None;
        let (wptr, widths) = match in_order {
            Some(scan) if sigma == 1 || rows == 0 => scan,
            _ => {
                // rows > 0: both buffers hold exactly the rows.
                let (mut keys, mut order, max) = convert::length_keys(gpu, k, a)?;
                if max > 0 {
                    let mut windows: Vec<u32> = (0..rows).step_by(sigma as usize).map(|r| r as u32).collect();
                    windows.push(rows as u32);
                    let windows = gpu.upload(&windows)?;
                    gpu_segsort::Segsort::new(gpu)?.sort_segments(&windows, &mut keys, &mut order)?;
                }
                shapes(Some(&order), &mut wcount, &mut icount, &mut base)?;
                perm = Some(order);
                convert::exclusive_scan(gpu, &wcount)?
            }
        };
        let slots = SELL_C * widths as u64;
        serial::check_slots(rows, slots, 2 * widths as u64, nnz)?;
        let (iptr, units) = convert::exclusive_scan(gpu, &icount)?;
        drop((wcount, icount));
        let words = 16 * units as u64;
        let mut idx = gpu.alloc::<u32>(words.max(1) as usize)?;
        // fill!(kernel, values, slots): spmv_sell_fill_V(SellFillArgs) writing `idx` and `slots`.
        macro_rules! fill {
            ($kernel:expr, $values:expr, $out:expr) => {
                if slots > 0 {
                    let ((ptr, _p), (cols, _c), (vals, _v)) = (arg_ptr(a.ptr(), &stream), arg_ptr(a.idx(), &stream), arg_ptr($values, &stream));
                    let ((perm, _o), (wptr, _w), (iptr, _i)) =
                        (arg_ptr_or_null(perm.as_ref(), &stream), arg_ptr(&wptr, &stream), arg_ptr(&iptr, &stream));
                    let ((base, _b), (sidx, _s), (sval, _t)) = (arg_ptr(&base, &stream), arg_ptr_mut(&mut idx, &stream), arg_ptr_mut($out, &stream));
                    let args = SellFillArgs { ptr, idx: cols, vals, perm, wptr, iptr, base, sidx, sval, rows };
                    // SAFETY: the CSR, the permutation the shapes were measured over, their
                    // scans; idx holds 16 · units words and the output 32 · widths slots of the
                    // values' type (allocated below); blocks of NT (whole warps).
                    unsafe { $kernel.launch(&stream, grid(gpu, chunks * SELL_C), args)? };
                }
            };
        }
        let (val, vi, product) = match vi {
            None => {
                let mut val = gpu.alloc::<T>(slots.max(1) as usize)?;
                fill!(k.sell_fill, vals, &mut val);
                (val, None, k.sell.clone())
            }
            Some(v) => {
                let mut bytes = gpu.alloc::<u8>(slots.max(1) as usize)?;
                if v.idx.is_empty() {
                    // One value: no bytes kept, but the fill writes the columns.
                    let zeros = gpu.alloc_zeros::<u8>(nnz.max(1) as usize)?;
                    fill!(k.sell_fill_u8, &zeros, &mut bytes);
                    bytes = gpu.alloc::<u8>(0)?;
                } else {
                    fill!(k.sell_fill_u8, &v.idx, &mut bytes);
                }
                (gpu.alloc::<T>(0)?, Some((bytes, v.table)), k.sell_vi.clone())
            }
        };
        Ok(Self { rows, cols: a.cols(), sigma, perm, wptr, iptr, base, idx, val, vi, words, slots, product })
    }

    /// σ (1: rows in order, no permutation).
    pub fn sigma(&self) -> u32 {
        self.sigma
    }

    /// Slots, padding included (`32 ·` the chunks' widths).
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// Bytes of the column storage (2 a slot in 16-bit chunks, 4 in the others).
    pub fn index_bytes(&self) -> u64 {
        4 * self.words
    }

    /// Bytes (as [`Sell::footprint_bytes`]).
    pub fn footprint_bytes(&self) -> u64 {
        let perm = if self.sigma > 1 { self.rows } else { 0 };
        match &self.vi {
            None => serial::footprint::<T>(perm, self.rows.div_ceil(SELL_C), self.words, self.slots),
            // SELL-VI: a byte a slot (none for one value) and the table instead of the values.
            Some((bytes, table)) => {
                serial::footprint::<T>(perm, self.rows.div_ceil(SELL_C), self.words, 0) + bytes.len() as u64 + (table.len() * T::BYTES) as u64
            }
        }
    }

    /// Copies to the host type (validated).
    ///
    /// # Errors
    /// Driver errors; [`crate::Error::Invalid`] would mean a conversion bug.
    pub fn download(&self, gpu: &Gpu) -> Result<Sell<T>> {
        let chunks = self.rows.div_ceil(SELL_C) as usize;
        let perm = match &self.perm {
            Some(p) => convert::download_prefix(gpu, p, self.rows as usize)?,
            None => vec![],
        };
        let val = match &self.vi {
            None => convert::download_prefix(gpu, &self.val, self.slots as usize)?,
            // SELL-VI: each slot's value through the table (padding zeroed below).
            Some((bytes, table)) => {
                let table = gpu.download(table)?;
                let bytes = if bytes.is_empty() { vec![0; self.slots as usize] } else { convert::download_prefix(gpu, bytes, self.slots as usize)? };
                bytes.iter().map(|&b| table[b as usize]).collect()
            }
        };
        let mut s = Sell::try_new(
            self.rows,
            self.cols,
            self.sigma,
            perm,
            gpu.download(&self.wptr)?,
            gpu.download(&self.iptr)?,
            convert::download_prefix(gpu, &self.base, chunks)?,
            convert::download_prefix(gpu, &self.idx, self.words as usize)?,
            val,
        )?;
        if self.vi.is_some() {
            s.zero_padding();
        }
        Ok(s)
    }

    /// `y = alpha · A · x + beta · y` on `gpu`'s stream (a handle on the context it was
    /// converted on), without synchronizing: for products of a variant built with its own
    /// [`SellOptions`] ([`crate::Spmv`] with [`crate::Format::Sell`] builds the default one).
    ///
    /// # Errors
    /// [`crate::Error::LengthMismatch`] when `x` is not `cols` long or `y` not `rows` long;
    /// launch errors.
    pub fn multiply(&self, gpu: &Gpu, alpha: T, x: &impl DevicePtr<T>, beta: T, y: &mut impl DevicePtrMut<T>) -> Result<()> {
        crate::check_vectors(self.rows, self.cols, x.len(), y.len())?;
        // SAFETY: x holds cols values and y rows (checked).
        crate::launch::with_vectors(gpu, x, y, |x, y| unsafe { self.apply(gpu, alpha, x, beta, y) })
    }

    /// `y = alpha · A · x + beta · y` by the product kernel loaded at conversion.
    ///
    /// # Safety
    /// `x` holds `cols` values and `y` `rows` (device addresses on `gpu`'s stream).
    pub(crate) unsafe fn apply(&self, gpu: &Gpu, alpha: T, x: &DeviceView<'_, T>, beta: T, y: &mut DeviceViewMut<'_, T>) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let stream = gpu.stream();
        let positions = self.rows.div_ceil(SELL_C) * SELL_C;
        let cfg = gpu_runtime::grid_1d(positions, spmv_kernels::NT, spmv_kernels::NT as u64, u32::MAX);
        let ((wptr, _w), (iptr, _i), (base, _b)) = (arg_ptr(&self.wptr, stream), arg_ptr(&self.iptr, stream), arg_ptr(&self.base, stream));
        let ((perm, _p), (idx, _c), (val, _v)) =
            (arg_ptr_or_null(self.perm.as_ref(), stream), arg_ptr(&self.idx, stream), arg_ptr(&self.val, stream));
        // SELL-VI's bytes (none for one value: null for the kernel, which reads table[0]) and
        // its table.
        let bytes = self.vi.as_ref().and_then(|(b, _)| (!b.is_empty()).then_some(b));
        let ((vi, _vi), (tab, _t)) = (arg_ptr_or_null(bytes, stream), arg_ptr_or_null(self.vi.as_ref().map(|(_, t)| t), stream));
        let ((x, _x), (y, _y)) = (arg_ptr(x, stream), arg_ptr_mut(y, stream));
        let args = SellArgs { wptr, iptr, base, perm, idx, val, vi, tab, x, y, rows: self.rows, alpha, beta };
        // SAFETY: spmv_sell_T or spmv_sell_vi_T(SellArgs) (the kernel loaded with the layout): a
        // valid SELL-C-σ converted from a valid CSR, its values or a byte a slot (or none)
        // indexing the 256-value table; x and y as the caller guarantees; blocks of NT.
        unsafe { self.product.launch(stream, cfg, args)? };
        Ok(())
    }
}
