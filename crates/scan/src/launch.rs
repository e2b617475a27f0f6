//! Workspace layout and the only `unsafe` launches of the scan kernels.
use gpu_runtime::cudarc::driver::LaunchConfig;
use gpu_runtime::{Error as RtError, Gpu, Kernel};

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

fn downsweep(gpu: &Gpu, k: &Kernels, src: u64, dst: u64, n: u64, carries: u64, inclusive: u32) -> Result<()> {
    let vec_ok = (src % 16 == 0 && dst % 16 == 0) as u32;
    // SAFETY: scan_downsweep_T(input, output, n, carries, inclusive, vec_ok): src/dst hold n
    // items of T, carries is 0 or one T per tile, grid = tile_count(n) blocks of NT threads.
    unsafe { k.downsweep.args(gpu.stream()).arg(&src).arg(&dst).arg(&n).arg(&carries).arg(&inclusive).arg(&vec_ok).launch(grid(n))? };
    Ok(())
}

/// Reduce-then-scan of `n` items at `src` into `dst`, with tile totals of level `level` onwards.
#[allow(clippy::too_many_arguments)]
fn reduce_then_scan(gpu: &Gpu, k: &Kernels, layout: &Layout, ws: u64, level: usize, src: u64, dst: u64, n: u64, inclusive: u32) -> Result<()> {
    if tiles(n) <= 1 {
        return downsweep(gpu, k, src, dst, n, 0, inclusive);
    }
    let partials = ws + *layout.levels.get(level).ok_or(RtError::TooLarge { what: "scan level", len: n, max: 0 })?;
    let vec_ok = (src % 16 == 0) as u32;
    // SAFETY: scan_reduce_T(input, n, partials, vec_ok): partials holds tiles(n) items of T.
    unsafe { k.reduce.args(gpu.stream()).arg(&src).arg(&n).arg(&partials).arg(&vec_ok).launch(grid(n))? };
    reduce_then_scan(gpu, k, layout, ws, level + 1, partials, partials, tiles(n), 0)?;
    downsweep(gpu, k, src, dst, n, partials, inclusive)
}

/// Enqueues the scan of `n >= 1` items.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan(gpu: &Gpu, k: &Kernels, layout: &Layout, ws: u64, src: u64, dst: u64, n: u64, kind: ScanKind) -> Result<()> {
    let inclusive = (kind == ScanKind::Inclusive) as u32;
    if tiles(n) <= 1 {
        return downsweep(gpu, k, src, dst, n, 0, inclusive);
    }
    match layout.algorithm {
        Algorithm::ReduceThenScan => reduce_then_scan(gpu, k, layout, ws, 0, src, dst, n, inclusive),
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
