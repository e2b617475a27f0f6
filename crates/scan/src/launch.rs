//! Workspace layout, the only `unsafe` launches of the scan kernels and the only raw device
//! addresses of the crate: [`scan_into`] and [`scan_in_place`] take typed buffers and lent
//! scratch; the launches below them are `unsafe` on addresses.
use gpu_runtime::cudarc::driver::{DevicePtr, DevicePtrMut, LaunchConfig};
use gpu_runtime::{Error as RtError, Gpu, KernelOf, Scratch};
use scan_kernels::ScanArgs;

use crate::{Algorithm, Result, ScanItem, ScanKind, NT};

/// The kernels of one item type, each taking [`ScanArgs`] (checked against the PTX at load; the
/// item pointers typed `u8` here: the struct's layout does not depend on the item type).
pub(crate) struct Kernels {
    pub reduce: KernelOf<ScanArgs<u8>>,
    pub downsweep: KernelOf<ScanArgs<u8>>,
    pub lookback: KernelOf<ScanArgs<u8>>,
}

/// The arguments of a launch on raw addresses: `input`, `output` and `n`, the rest null or 0.
fn args(input: u64, output: u64, n: u64) -> ScanArgs<u8> {
    let null = std::ptr::null_mut();
    ScanArgs {
        input: input as *const u8,
        output: output as *mut u8,
        carries: null,
        counter: null.cast(),
        status: null.cast(),
        agg: null,
        incl: null,
        n,
        inclusive: 0,
        vec_ok: 0,
    }
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
    let a = ScanArgs { carries: carries as *const u8, inclusive, vec_ok, ..args(src, dst, n) };
    // SAFETY: scan_downsweep_T(ScanArgs): src/dst hold n items of T, carries is 0 or one T per
    // tile, grid = tile_count(n) blocks of NT threads.
    unsafe { k.downsweep.launch(gpu.stream(), grid(n), a)? };
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
    // SAFETY: scan_reduce_T(ScanArgs: input, n, the partials as output, vec_ok): partials holds
    // tiles(n) items of T.
    unsafe { k.reduce.launch(gpu.stream(), grid(n), ScanArgs { vec_ok, ..args(src, partials, n) })? };
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
            let a = ScanArgs {
                counter: counter as *mut u32,
                status: status as *mut u32,
                agg: agg as *mut u8,
                incl: incl as *mut u8,
                inclusive,
                vec_ok,
                ..args(src, dst, n)
            };
            // SAFETY: scan_lookback_T(ScanArgs): counter and status zeroed just above, agg/incl
            // one T per tile.
            unsafe { k.lookback.launch(gpu.stream(), grid(n), a)? };
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every kernel takes exactly [`ScanArgs`] in the committed PTX (what `Gpu::kernel_of`
    /// checks at load, here without a GPU).
    #[test]
    fn argument_structs_match_the_ptx() {
        for t in ["u32", "i32", "u64", "i64"] {
            for phase in ["reduce", "downsweep", "lookback"] {
                let name = format!("scan_{phase}_{t}");
                gpu_runtime::check_signature::<super::ScanArgs<u8>>(&crate::MODULE, &name).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        assert!(gpu_runtime::check_signature::<u64>(&crate::MODULE, "scan_reduce_u32").is_err());
    }
}
