//! Workspace layout, the only `unsafe` launches of the scan kernels and the only raw device
//! addresses of the crate: [`scan_into`] and [`scan_in_place`] take typed buffers and lent
//! scratch; the launches below them are `unsafe` on addresses.
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu_runtime::{Error as RtError, Gpu, Kernel, Scratch};

use crate::{Algorithm, Result, ScanItem, ScanKind, NT};

pub(crate) struct Kernels {
    pub reduce: Kernel,
    pub downsweep: Kernel,
    pub lookback: Kernel,
}

const fn round16(b: u64) -> u64 {
    b.div_ceil(16) * 16
}

use scan_kernels::tile_count as tiles;

/// Where each piece of scratch lives inside the workspace (byte offsets).
pub(crate) struct Layout {
    pub algorithm: Algorithm,
    pub bytes: u64,
    /// Look-back: bytes to zero before the launch (counter + status words).
    zero_bytes: u64,
    status: u64,
    agg: u64,
    incl: u64,
    /// Reduce-then-scan: offset of each level's tile totals.
    levels: Vec<u64>,
}

impl Layout {
    pub fn new<T: ScanItem>(algorithm: Algorithm, n: u64) -> Self {
        let size = std::mem::size_of::<T>() as u64;
        let mut l = Layout { algorithm, bytes: 0, zero_bytes: 0, status: 0, agg: 0, incl: 0, levels: vec![] };
        let t = tiles(n);
        if t <= 1 {
            return l; // single-tile path: one downsweep launch, no scratch
        }
        match algorithm {
            Algorithm::Lookback | Algorithm::Auto => {
                l.status = 16;
                l.zero_bytes = 16 + round16(4 * t);
                l.agg = l.zero_bytes;
                l.incl = l.agg + round16(size * t);
                l.bytes = l.incl + round16(size * t);
            }
            Algorithm::ReduceThenScan => {
                let mut count = t;
                loop {
                    l.levels.push(l.bytes);
                    l.bytes += round16(size * count);
                    if tiles(count) <= 1 {
                        break;
                    }
                    count = tiles(count);
                }
            }
        }
        l
    }
}

fn grid(n: u64) -> LaunchConfig {
    LaunchConfig { grid_dim: (tiles(n) as u32, 1, 1), block_dim: (NT, 1, 1), shared_mem_bytes: 0 }
}

/// # Safety
/// `src` and `dst` hold `n` items of `T` (the same address for in place), `carries` is 0 or
/// one `T` per tile.
unsafe fn downsweep(gpu: &Gpu, k: &Kernels, src: u64, dst: u64, n: u64, carries: u64, inclusive: u32) -> Result<()> {
    let vec_ok = (src % 16 == 0 && dst % 16 == 0) as u32;
    // SAFETY: scan_downsweep_T(input, output, n, carries, inclusive, vec_ok): src/dst hold n
    // items of T, carries is 0 or one T per tile, grid = tile_count(n) blocks of NT threads.
    unsafe { k.downsweep.args(gpu.stream()).arg(&src).arg(&dst).arg(&n).arg(&carries).arg(&inclusive).arg(&vec_ok).launch(grid(n))? };
    Ok(())
}

/// Reduce-then-scan of `n` items at `src` into `dst`, with tile totals of level `level` onwards.
///
/// # Safety
/// As [`downsweep`]; `ws` holds `layout.bytes` bytes.
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_then_scan(gpu: &Gpu, k: &Kernels, layout: &Layout, ws: u64, level: usize, src: u64, dst: u64, n: u64, inclusive: u32) -> Result<()> {
    if tiles(n) <= 1 {
        // SAFETY: forwarded.
        return unsafe { downsweep(gpu, k, src, dst, n, 0, inclusive) };
    }
    let partials = ws + *layout.levels.get(level).ok_or(RtError::TooLarge { what: "scan level", len: n, max: 0 })?;
    let vec_ok = (src % 16 == 0) as u32;
    // SAFETY: scan_reduce_T(input, n, partials, vec_ok): partials holds tiles(n) items of T.
    unsafe { k.reduce.args(gpu.stream()).arg(&src).arg(&n).arg(&partials).arg(&vec_ok).launch(grid(n))? };
    // SAFETY: the partials hold tiles(n) items, scanned in place by the next level; then the
    // caller's buffers with one carry per tile.
    unsafe {
        reduce_then_scan(gpu, k, layout, ws, level + 1, partials, partials, tiles(n), 0)?;
        downsweep(gpu, k, src, dst, n, partials, inclusive)
    }
}

/// Scan of `input` into `output` (at least as long) on `scratch` (the layout's bytes for
/// `algorithm`, resolved, and `n = input.len()`).
pub(crate) fn scan_into<T: ScanItem>(
    gpu: &Gpu,
    k: &Kernels,
    algorithm: Algorithm,
    input: &impl DevicePtr<T>,
    output: &mut impl DevicePtrMut<T>,
    kind: ScanKind,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let n = input.len() as u64;
    if (output.len() as u64) < n {
        return Err(crate::Error::LengthMismatch { what: "output", expected: n, got: output.len() as u64 });
    }
    if n == 0 {
        return Ok(());
    }
    let layout = Layout::new::<T>(algorithm, n);
    let ws = scratch.take(layout.bytes)?;
    let stream = gpu.stream();
    let (src, _r) = input.device_ptr(stream);
    let (dst, _w) = output.device_ptr_mut(stream);
    // SAFETY: src and dst hold n items of T (checked), ws the layout's bytes (carved).
    unsafe { scan(gpu, k, &layout, ws, src, dst, n, kind) }
}

/// Scan of `data` in place on `scratch` (as [`scan_into`]).
pub(crate) fn scan_in_place<T: ScanItem>(
    gpu: &Gpu,
    k: &Kernels,
    algorithm: Algorithm,
    data: &mut impl DevicePtrMut<T>,
    kind: ScanKind,
    scratch: &mut Scratch<'_>,
) -> Result<()> {
    let n = data.len() as u64;
    if n == 0 {
        return Ok(());
    }
    let layout = Layout::new::<T>(algorithm, n);
    let ws = scratch.take(layout.bytes)?;
    let (p, _w) = data.device_ptr_mut(gpu.stream());
    // SAFETY: p holds n items of T, read and written in place (each kernel reads an item before
    // writing it back), ws the layout's bytes (carved).
    unsafe { scan(gpu, k, &layout, ws, p, p, n, kind) }
}

/// Enqueues the scan of `n >= 1` items.
///
/// # Safety
/// `src` and `dst` hold `n` items of `T` (the same address for in place); `ws` holds
/// `layout.bytes` bytes.
#[allow(clippy::too_many_arguments)]
unsafe fn scan(gpu: &Gpu, k: &Kernels, layout: &Layout, ws: u64, src: u64, dst: u64, n: u64, kind: ScanKind) -> Result<()> {
    let inclusive = (kind == ScanKind::Inclusive) as u32;
    if tiles(n) <= 1 {
        // SAFETY: forwarded.
        return unsafe { downsweep(gpu, k, src, dst, n, 0, inclusive) };
    }
    match layout.algorithm {
        // SAFETY: forwarded.
        Algorithm::ReduceThenScan => unsafe { reduce_then_scan(gpu, k, layout, ws, 0, src, dst, n, inclusive) },
        Algorithm::Lookback | Algorithm::Auto => {
            gpu.bind()?;
            // SAFETY: the first zero_bytes of the workspace (counter + status) are ours.
            unsafe { gpu_runtime::cudarc::driver::result::memset_d8_async(ws, 0, layout.zero_bytes as usize, gpu.stream().cu_stream()) }
                .map_err(RtError::driver("zeroing the scan workspace"))?;
            let (counter, status, agg, incl) = (ws, ws + layout.status, ws + layout.agg, ws + layout.incl);
            let vec_ok = (src % 16 == 0 && dst % 16 == 0) as u32;
            // SAFETY: scan_lookback_T(input, output, n, inclusive, vec_ok, counter, status, agg,
            // incl): counter and status zeroed just above, agg/incl one T per tile.
            unsafe {
                k.lookback
                    .args(gpu.stream())
                    .arg(&src)
                    .arg(&dst)
                    .arg(&n)
                    .arg(&inclusive)
                    .arg(&vec_ok)
                    .arg(&counter)
                    .arg(&status)
                    .arg(&agg)
                    .arg(&incl)
                    .launch(grid(n))?
            };
            Ok(())
        }
    }
}
