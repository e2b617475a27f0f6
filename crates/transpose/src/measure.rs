//! Measuring transposers: GPU-event timings with median and spread, the byte accounting for
//! effective bandwidth, the benchmark suites (the seed papers' sizes), and the result tables and
//! CSV. Used by the criterion bench and by the `sptrans bench` command.
use std::fmt::Write as _;
use std::time::Instant;

use gpu_runtime::GpuTimer;
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use sptrans_matrix::{gen, Csr, Value};

use crate::{Algorithm, Payload, Result, Transposer};

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
pub fn time_gpu<T: Payload>(t: &mut Transposer, algo: Algorithm, a: &DeviceCsr<T>, mut out: DeviceCsrParts<T>, warmup: usize, reps: usize) -> Result<(Stats, DeviceCsrParts<T>)> {
    let timer = GpuTimer::new(t.gpu())?;
    for _ in 0..warmup {
        out = t.transpose_into(algo, a, out)?.into_parts();
    }
    let mut ms = Vec::with_capacity(reps);
    for _ in 0..reps {
        if algo == Algorithm::Serial {
            let start = Instant::now();
            out = t.transpose_into(algo, a, out)?.into_parts();
            ms.push(start.elapsed().as_secs_f64() * 1e3);
        } else {
            timer.start()?;
            out = t.transpose_into(algo, a, out)?.into_parts();
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
            let t = crate::serial::transpose(a);
            let e = start.elapsed().as_secs_f64() * 1e3;
            std::hint::black_box(t);
            e
        })
        .collect();
    Stats::from_times(ms)
}

/// One measurement: a matrix, an algorithm, its timings or why there are none.
#[derive(Clone, Debug)]
pub struct Record {
    /// Matrix name.
    pub matrix: String,
    /// Rows, columns, nonzeros.
    pub shape: (u64, u64, u64),
    /// The algorithm.
    pub algo: Algorithm,
    /// Timings, or the error that stopped it.
    pub result: std::result::Result<Stats, String>,
    /// Workspace bytes (device), when known.
    pub workspace: Option<u64>,
    /// Whether its output equalled the serial twin's (always for the twin itself).
    pub checked: bool,
}

/// The record of `matrix` and `algo`, if any.
pub fn find<'a>(records: &'a [Record], matrix: &str, algo: Algorithm) -> Option<&'a Record> {
    records.iter().find(|r| r.matrix == matrix && r.algo == algo)
}

/// The matrices of `records`, in first-seen order, with their shapes.
pub fn matrices(records: &[Record]) -> Vec<(String, (u64, u64, u64))> {
    let mut out: Vec<(String, (u64, u64, u64))> = Vec::new();
    for r in records {
        if !out.iter().any(|(m, _)| *m == r.matrix) {
            out.push((r.matrix.clone(), r.shape));
        }
    }
    out
}

/// The median time of a record that has timings.
pub fn median(r: Option<&Record>) -> Option<f64> {
    r.and_then(|r| r.result.as_ref().ok()).map(|s| s.median_ms)
}

/// The text tables: times, speedups, bandwidth and workspace.
pub fn tables(records: &[Record], algos: &[Algorithm], copy: Option<f64>) -> String {
    let mut s = String::new();
    let mats = matrices(records);
    let head = |s: &mut String, first: &str, cols: &[String]| {
        let _ = writeln!(s, "| {first} | {} |", cols.join(" | "));
        let _ = writeln!(s, "|---|{}", "---|".repeat(cols.len()));
    };
    let _ = writeln!(s, "\nTime, ms: median [min–max]");
    let mut cols = vec!["nnz".to_string()];
    cols.extend(algos.iter().map(|a| a.name().to_string()));
    head(&mut s, "matrix", &cols);
    for (m, shape) in &mats {
        let cells: Vec<String> = algos
            .iter()
            .map(|&a| match find(records, m, a).map(|r| &r.result) {
                Some(Ok(st)) => format!("{:.3} [{:.3}–{:.3}]", st.median_ms, st.min_ms, st.max_ms),
                Some(Err(_)) => "failed".into(),
                None => "—".into(),
            })
            .collect();
        let _ = writeln!(s, "| {m} | {} | {} |", shape.2, cells.join(" | "));
    }
    let gpu_algos: Vec<Algorithm> = algos.iter().copied().filter(|a| a.is_gpu()).collect();
    if !gpu_algos.is_empty() {
        let _ = writeln!(s, "\nSpeedup over the serial twin / over cuSPARSE (time of the other ÷ this one's)");
        head(&mut s, "matrix", &gpu_algos.iter().map(|a| a.name().to_string()).collect::<Vec<_>>());
        for (m, _) in &mats {
            let ser = median(find(records, m, Algorithm::Serial));
            let cus = median(find(records, m, Algorithm::CuSparse));
            let cells: Vec<String> = gpu_algos
                .iter()
                .map(|&a| match median(find(records, m, a)) {
                    Some(t) => format!("{} / {}", ser.map_or("—".into(), |x| format!("{:.1}×", x / t)), cus.map_or("—".into(), |x| format!("{:.2}×", x / t))),
                    None => "—".into(),
                })
                .collect();
            let _ = writeln!(s, "| {m} | {} |", cells.join(" | "));
        }
        let _ = writeln!(s, "\nEffective bandwidth GB/s (16 B per nonzero + pointers), % of copy ({}), workspace MB", copy.map_or("not measured".into(), |c| format!("{c:.0} GB/s")));
        head(&mut s, "matrix", &gpu_algos.iter().map(|a| a.name().to_string()).collect::<Vec<_>>());
        for (m, shape) in &mats {
            let bytes = bytes_moved(shape.0, shape.1, shape.2, 4) as f64;
            let cells: Vec<String> = gpu_algos
                .iter()
                .map(|&a| match find(records, m, a) {
                    Some(r) => {
                        let ws = r.workspace.map_or("—".into(), |w| format!("{:.0}", w as f64 / 1e6));
                        match &r.result {
                            Ok(st) => {
                                let gbs = bytes / (st.median_ms * 1e-3) / 1e9;
                                format!("{gbs:.0} ({}) {ws} MB", copy.map_or("—".into(), |c| format!("{:.0}%", 100.0 * gbs / c)))
                            }
                            Err(_) => "failed".into(),
                        }
                    }
                    None => "—".into(),
                })
                .collect();
            let _ = writeln!(s, "| {m} | {} |", cells.join(" | "));
        }
    }
    s
}

/// Every record as a CSV line (with a header).
pub fn csv(records: &[Record], copy: Option<f64>) -> String {
    let mut s = String::from("matrix,rows,cols,nnz,algorithm,median_ms,min_ms,max_ms,reps,gb_per_s,copy_fraction,speedup_vs_serial,speedup_vs_cusparse,workspace_bytes,checked,error\n");
    for r in records {
        let (m, n, nnz) = r.shape;
        let ser = median(find(records, &r.matrix, Algorithm::Serial));
        let cus = median(find(records, &r.matrix, Algorithm::CuSparse));
        let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.6}"));
        let name = r.matrix.replace('"', "'");
        match &r.result {
            Ok(st) => {
                let gbs = bytes_moved(m, n, nnz, 4) as f64 / (st.median_ms * 1e-3) / 1e9;
                let _ = writeln!(
                    s,
                    "\"{name}\",{m},{n},{nnz},{},{:.6},{:.6},{:.6},{},{gbs:.3},{},{},{},{},{},",
                    r.algo,
                    st.median_ms,
                    st.min_ms,
                    st.max_ms,
                    st.reps,
                    opt(copy.filter(|_| r.algo.is_gpu()).map(|c| gbs / c)),
                    opt(ser.map(|x| x / st.median_ms)),
                    opt(cus.map(|x| x / st.median_ms)),
                    r.workspace.map_or(String::new(), |w| w.to_string()),
                    r.checked
                );
            }
            Err(e) => {
                let _ = writeln!(s, "\"{name}\",{m},{n},{nnz},{},,,,,,,,,{},false,\"{}\"", r.algo, r.workspace.map_or(String::new(), |w| w.to_string()), e.replace('"', "'"));
            }
        }
    }
    s
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
        entry("uniform 100k x 100k, 10M", || gen::uniform(100_000, 100_000, 10_000_000, 1)),
        entry("uniform 500k x 500k, 10M", || gen::uniform(500_000, 500_000, 10_000_000, 2)),
        entry("uniform 150k x 200k, 5M", || gen::uniform(150_000, 200_000, 5_000_000, 3)),
        entry("rmat 2^20, 8M edges", || gen::rmat(20, 8_000_000, 0.57, 0.19, 0.19, 4)),
        entry("laplacian3d 100^3", || gen::laplacian_3d(100)),
        entry("tall-skinny 2M x 64, 10M", || gen::tall_skinny(2_000_000, 64, 5, 8)),
        entry("dense row 1M x 1M, 10M", || gen::dense_row(1_000_000, 1_000_000, 10_000_000, 5)),
        entry("dense col 1M x 1M, 10M", || gen::dense_col(1_000_000, 1_000_000, 10_000_000, 6)),
        entry("uniform 10M x 10M, 100M", || gen::uniform(10_000_000, 10_000_000, 100_000_000, 7)),
    ]
}

/// A suite small enough for the serial twin alone (machines without a GPU, quick runs).
pub fn small_suite() -> Vec<SuiteMatrix> {
    vec![
        entry("uniform 10k x 10k, 1M", || gen::uniform(10_000, 10_000, 1_000_000, 1)),
        entry("uniform 50k x 50k, 1M", || gen::uniform(50_000, 50_000, 1_000_000, 2)),
        entry("rmat 2^16, 1M edges", || gen::rmat(16, 1_000_000, 0.57, 0.19, 0.19, 4)),
        entry("laplacian3d 50^3", || gen::laplacian_3d(50)),
        entry("dense row 100k x 100k, 1M", || gen::dense_row(100_000, 100_000, 1_000_000, 5)),
    ]
}
