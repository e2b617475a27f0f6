//! Measuring transposers: GPU-event timings with median and spread, the byte accounting for
//! effective bandwidth, and the benchmark suites (the seed papers' sizes). Used by the criterion
//! bench and by the `sptrans bench` command, beside this crate's tables and CSV; no library
//! depends on it.
use std::time::Instant;

use gpu_transpose::gpu_runtime::GpuTimer;
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use sptrans_matrix::device64::{DeviceCsr64, DeviceCsr64Parts};
use sptrans_matrix::{generate, Csr, Value};

use gpu_transpose::{Algorithm, Payload, Result, Transposer};

/// Timings of repeated runs, in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Median.
    pub median_ms: f64,
    /// Fastest.
    pub min_ms: f64,
    /// Slowest.
    pub max_ms: f64,
    /// Timed runs.
    pub reps: usize,
}

impl Stats {
    /// From raw times (empty: NaN everywhere).
    pub fn from_times(mut ms: Vec<f64>) -> Stats {
        ms.sort_by(f64::total_cmp);
        let reps = ms.len();
        if reps == 0 {
            return Stats { median_ms: f64::NAN, min_ms: f64::NAN, max_ms: f64::NAN, reps };
        }
        let median_ms = if reps % 2 == 1 { ms[reps / 2] } else { 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]) };
        Stats { median_ms, min_ms: ms[0], max_ms: ms[reps - 1], reps }
    }
}

/// Bytes a transposition must move at least: read the column indices and values, write the row
/// indices and values (`2 * (4 + value_bytes)` per nonzero: 16 B for u32 + f32), plus both
/// pointers (`4 * (m + 1 + n + 1)`).
pub fn bytes_moved(m: u64, n: u64, nnz: u64, value_bytes: usize) -> u64 {
    2 * (4 + value_bytes as u64) * nnz + 4 * (m + n + 2)
}

/// Times `algo` on `a` with GPU events: `warmup` untimed runs, then `reps` timed ones, each
/// measured alone (`Serial` is timed by wall clock, including its transfers), all into the
/// buffers `out`, which are handed back.
///
/// # Errors
/// As [`Transposer::transpose_into`], and timer errors.
pub fn time_gpu<T: Payload>(
    t: &mut Transposer,
    algo: Algorithm,
    a: &DeviceCsr<T>,
    out: DeviceCsrParts<T>,
    warmup: usize,
    reps: usize,
) -> Result<(Stats, DeviceCsrParts<T>)> {
    let gpu = t.gpu().clone();
    timed(&gpu, t, algo == Algorithm::Serial, out, warmup, reps, |t, out| Ok(t.transpose_into(algo, a, out)?.into_parts()))
}

/// [`time_gpu`] for the cuSPARSE baseline ([`gpu_transpose::baselines::CuSparseTranspose`]).
///
/// # Errors
/// As [`gpu_transpose::baselines::CuSparseTranspose::transpose_view`], and timer errors.
pub fn time_cusparse<T: Payload>(
    c: &mut gpu_transpose::baselines::CuSparseTranspose,
    a: &DeviceCsr<T>,
    out: DeviceCsrParts<T>,
    warmup: usize,
    reps: usize,
) -> Result<(Stats, DeviceCsrParts<T>)> {
    let gpu = c.gpu().clone();
    timed(&gpu, c, false, out, warmup, reps, |c, mut out| {
        c.transpose_view(&a.view(), &mut out.view_mut())?;
        Ok(out)
    })
}

/// [`time_gpu`] for a matrix with a 64-bit row pointer ([`Transposer::transpose64_into`]).
///
/// # Errors
/// As [`Transposer::transpose64_into`], and timer errors.
pub fn time_gpu64<T: Payload>(
    t: &mut Transposer,
    algo: Algorithm,
    a: &DeviceCsr64<T>,
    out: DeviceCsr64Parts<T>,
    warmup: usize,
    reps: usize,
) -> Result<(Stats, DeviceCsr64Parts<T>)> {
    let gpu = t.gpu().clone();
    timed(&gpu, t, algo == Algorithm::Serial, out, warmup, reps, |t, out| Ok(t.transpose64_into(algo, a, out)?.into_parts()))
}

/// `warmup` untimed runs of `run`, then `reps` timed ones: by wall clock when `wall` (the
/// serial twin, transfers included), else by GPU events on `gpu`'s stream.
fn timed<X, P>(
    gpu: &gpu_transpose::Gpu,
    t: &mut X,
    wall: bool,
    mut out: P,
    warmup: usize,
    reps: usize,
    mut run: impl FnMut(&mut X, P) -> Result<P>,
) -> Result<(Stats, P)> {
    let timer = GpuTimer::new(gpu)?;
    for _ in 0..warmup {
        out = run(t, out)?;
    }
    let mut ms = Vec::with_capacity(reps);
    for _ in 0..reps {
        if wall {
            let start = Instant::now();
            out = run(t, out)?;
            ms.push(start.elapsed().as_secs_f64() * 1e3);
        } else {
            timer.start()?;
            out = run(t, out)?;
            ms.push(timer.stop_ms()?);
        }
    }
    Ok((Stats::from_times(ms), out))
}

/// Times the serial twin on the host (no transfers): `reps` runs by wall clock.
pub fn time_serial<T: Value>(a: &Csr<u32, T>, reps: usize) -> Stats {
    let ms = (0..reps.max(1))
        .map(|_| {
            let start = Instant::now();
            let t = gpu_transpose::serial::transpose(a);
            let e = start.elapsed().as_secs_f64() * 1e3;
            std::hint::black_box(t);
            e
        })
        .collect();
    Stats::from_times(ms)
}

/// A matrix of a benchmark suite: its name and how to generate it (f32 values, deterministic).
pub struct SuiteMatrix {
    /// Short name with the shape.
    pub name: String,
    /// Builds it.
    pub build: Box<dyn Fn() -> sptrans_matrix::Result<Csr<u32, f32>> + Send + Sync>,
}

fn entry(name: &str, build: impl Fn() -> sptrans_matrix::Result<Csr<u32, f32>> + Send + Sync + 'static) -> SuiteMatrix {
    SuiteMatrix { name: name.to_string(), build: Box::new(build) }
}

/// The seed papers' sizes: uniform 100k × 100k with 10M nonzeros, 500k × 500k with 10M,
/// 150k × 200k with 5M, R-MAT 2^20 × 2^20 with 8M edges (about 7.5M after duplicates), the 3D
/// Laplacian of 100³, uniform 10M × 10M with 100M; plus a tall-and-skinny 2M × 64 with 10M and
/// the adversaries (one dense row, one dense column) at 10M.
pub fn paper_suite() -> Vec<SuiteMatrix> {
    vec![
        entry("uniform 100k x 100k, 10M", || generate::uniform(100_000, 100_000, 10_000_000, 1)),
        entry("uniform 500k x 500k, 10M", || generate::uniform(500_000, 500_000, 10_000_000, 2)),
        entry("uniform 150k x 200k, 5M", || generate::uniform(150_000, 200_000, 5_000_000, 3)),
        entry("rmat 2^20, 8M edges", || generate::rmat(20, 8_000_000, 0.57, 0.19, 0.19, 4)),
        entry("laplacian3d 100^3", || generate::laplacian_3d(100)),
        entry("tall-skinny 2M x 64, 10M", || generate::tall_skinny(2_000_000, 64, 5, 8)),
        entry("dense row 1M x 1M, 10M", || generate::dense_row(1_000_000, 1_000_000, 10_000_000, 5)),
        entry("dense col 1M x 1M, 10M", || generate::dense_col(1_000_000, 1_000_000, 10_000_000, 6)),
        entry("uniform 10M x 10M, 100M", || generate::uniform(10_000_000, 10_000_000, 100_000_000, 7)),
    ]
}

/// A suite small enough for the serial twin alone (machines without a GPU, quick runs).
pub fn small_suite() -> Vec<SuiteMatrix> {
    vec![
        entry("uniform 10k x 10k, 1M", || generate::uniform(10_000, 10_000, 1_000_000, 1)),
        entry("uniform 50k x 50k, 1M", || generate::uniform(50_000, 50_000, 1_000_000, 2)),
        entry("rmat 2^16, 1M edges", || generate::rmat(16, 1_000_000, 0.57, 0.19, 0.19, 4)),
        entry("laplacian3d 50^3", || generate::laplacian_3d(50)),
        entry("dense row 100k x 100k, 1M", || generate::dense_row(100_000, 100_000, 1_000_000, 5)),
    ]
}
