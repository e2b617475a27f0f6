//! `sptrans spmv-bench`: every SpMV format (and `auto`) on every matrix, f64 and f32, each
//! checked once against the serial twin within its error bound, then timed (GPU events, median
//! of `--reps` products; the formats of a matrix in turn, in rounds of five products after an
//! untimed one);
//! cuSPARSE CSR (`cusparseSpMV` ALG1) measured in the same run as the reference for speedups.
//! A table, CSV and an SVG chart of the speedups.
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use sptrans::matrix::device::DeviceCsr;
use sptrans::matrix::{generate, mm, Csr};
use sptrans::runtime::{Gpu, GpuTimer};
use sptrans::spmv::baselines::{CuSparseAlg, CuSparseSpmv};
use sptrans::spmv::{serial, Format, Spmv, SpmvValue};

use crate::cli::{Precision, SpmvBenchArgs};
use crate::{Error, Result};

/// What `spmv-bench` runs: one of our formats, or a cuSPARSE peer
/// ([`sptrans::spmv::baselines::CuSparseSpmv`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpmvTarget {
    /// One of this project's formats (or `auto`).
    Ours(Format),
    /// A cuSPARSE algorithm.
    CuSparse(CuSparseAlg),
}

/// The peer every ratio is against: cuSPARSE CSR ALG1.
pub const REFERENCE: SpmvTarget = SpmvTarget::CuSparse(CuSparseAlg::CsrAlg1);

impl SpmvTarget {
    /// The short name (`csr-vector`, `auto`, `cusparse-csr-alg1`, …).
    pub fn name(self) -> &'static str {
        match self {
            SpmvTarget::Ours(f) => f.name(),
            SpmvTarget::CuSparse(a) => a.name(),
        }
    }

    /// Every concrete format, then `auto`, then the cuSPARSE peers.
    pub fn all() -> Vec<SpmvTarget> {
        Format::ALL.into_iter().chain([Format::Auto]).map(SpmvTarget::Ours).chain(CuSparseAlg::ALL.into_iter().map(SpmvTarget::CuSparse)).collect()
    }
}

impl std::fmt::Display for SpmvTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SpmvTarget {
    type Err = sptrans::spmv::Error;
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match CuSparseAlg::from_name(s) {
            Some(a) => Ok(SpmvTarget::CuSparse(a)),
            None => s.parse().map(SpmvTarget::Ours),
        }
    }
}

/// A plan of either kind.
enum Plan<'a, T: SpmvValue> {
    Ours(Box<Spmv<'a, T>>),
    Peer(Box<CuSparseSpmv<'a, T>>),
}

impl<T: SpmvValue> Plan<'_, T> {
    fn apply(
        &mut self,
        alpha: T,
        x: &impl sptrans::runtime::cudarc::driver::DevicePtr<T>,
        beta: T,
        y: &mut impl sptrans::runtime::cudarc::driver::DevicePtrMut<T>,
    ) -> sptrans::spmv::Result<()> {
        match self {
            Plan::Ours(p) => p.apply(alpha, x, beta, y),
            Plan::Peer(p) => p.apply(alpha, x, beta, y),
        }
    }
}

/// One measurement.
#[derive(Debug, Clone)]
pub struct SpmvRecord {
    /// Matrix name.
    pub matrix: String,
    /// `f64` or `f32`.
    pub precision: &'static str,
    /// Rows, columns, nonzeros.
    pub shape: (u64, u64, u64),
    /// The format (or peer) asked for.
    pub format: SpmvTarget,
    /// The one run (`auto`'s choice).
    pub chosen: SpmvTarget,
    /// Median product time (ms), or why there is none.
    pub result: std::result::Result<f64, String>,
    /// Effective bandwidth (GB/s) by the byte model.
    pub gbs: f64,
    /// Conversion time (ms, wall clock, synchronized).
    pub convert_ms: f64,
    /// Footprint of the format (bytes).
    pub footprint: u64,
}

type Builder = Box<dyn Fn() -> Result<Csr<u32, f64>>>;

fn default_suite(small: bool) -> Vec<(String, Builder)> {
    let g = |r: sptrans::matrix::Result<Csr<u32, f64>>| r.map_err(Error::Gen);
    if small {
        vec![
            ("uniform 10k² 200k".into(), Box::new(move || g(generate::uniform(10_000, 10_000, 200_000, 1))) as Builder),
            ("rmat 2^14 200k".into(), Box::new(move || g(generate::rmat(14, 200_000, 0.57, 0.19, 0.19, 4)))),
            ("laplacian3d 20³".into(), Box::new(move || g(generate::laplacian_3d(20)))),
            ("dense row 10k² 200k".into(), Box::new(move || g(generate::dense_row(10_000, 10_000, 200_000, 2)))),
        ]
    } else {
        vec![
            ("uniform 100k² 10M".into(), Box::new(move || g(generate::uniform(100_000, 100_000, 10_000_000, 1))) as Builder),
            ("rmat 2^20 8M".into(), Box::new(move || g(generate::rmat(20, 8_000_000, 0.57, 0.19, 0.19, 4)))),
            ("rmat 2^22 16M".into(), Box::new(move || g(generate::rmat(22, 16_000_000, 0.57, 0.19, 0.19, 5)))),
            ("laplacian3d 100³".into(), Box::new(move || g(generate::laplacian_3d(100)))),
            ("dense row 1M² 10M".into(), Box::new(move || g(generate::dense_row(1_000_000, 1_000_000, 10_000_000, 2)))),
        ]
    }
}

fn sources(args: &SpmvBenchArgs) -> Result<Vec<(String, Builder)>> {
    let named = |s: &str| args.suite.len() == 1 && args.suite[0].as_os_str() == s;
    let mut out = if named("default") || named("small") { default_suite(named("small")) } else { vec![] };
    let file = |p: PathBuf| -> (String, Builder) {
        let name = p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string());
        (name, Box::new(move || mm::read_csr::<f64>(&p).map_err(|source| Error::Matrix { path: p.clone(), source })))
    };
    let dir = crate::bench::mtx_files;
    if out.is_empty() {
        for p in &args.suite {
            if p.is_dir() {
                out.extend(dir(p)?.into_iter().map(file));
            } else if p.is_file() {
                out.push(file(p.clone()));
            } else {
                return Err(Error::Usage(format!("--suite: {} is not default, small, a directory or a file", p.display())));
            }
        }
    }
    if let Some(d) = &args.matrices {
        out.extend(dir(d)?.into_iter().map(file));
    }
    if let Some(list) = &args.list {
        out.extend(crate::bench::list_files(list)?.into_iter().map(file));
    }
    if out.is_empty() {
        return Err(Error::Usage("the suite holds no matrices".into()));
    }
    Ok(out)
}

/// Runs the benchmark.
///
/// # Errors
/// No GPU, unreadable suite, output files; a format whose result is outside the bound makes the
/// run fail after the tables are printed.
pub fn bench(args: &SpmvBenchArgs) -> Result<()> {
    let gpu = crate::open_gpu()
        .map_err(|why| Error::Usage(format!("spmv-bench needs a GPU and none is usable: {why} (`sptrans spmv` runs the serial twin)")))?;
    if args.reps == 0 {
        return Err(Error::Usage("--reps must be at least 1".into()));
    }
    let mut formats = args.formats.clone().unwrap_or_else(SpmvTarget::all);
    if !formats.contains(&REFERENCE) {
        formats.push(REFERENCE);
    }
    let srcs = sources(args)?;
    let copy = sptrans::runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20)?;
    say!("device: {}; device-to-device copy {copy:.0} GB/s", gpu.props().name);
    let pb = if args.quiet { ProgressBar::hidden() } else { ProgressBar::new((srcs.len() * formats.len() * args.precision.len()) as u64) };
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .map_err(|e| Error::Usage(e.to_string()))?
            .progress_chars("=> "),
    );
    let mut records = Vec::new();
    for (name, build) in &srcs {
        pb.set_message(format!("{name}: loading"));
        let a = match build() {
            Ok(a) => a,
            Err(e) => {
                pb.suspend(|| say!("{name}: skipped: {e}"));
                pb.inc((formats.len() * args.precision.len()) as u64);
                continue;
            }
        };
        for &p in &args.precision {
            match p {
                Precision::F64 => records.extend(run_matrix(&gpu, name, &a, &formats, args, &pb)?),
                Precision::F32 => {
                    let a32 = Csr::try_new(a.rows(), a.cols(), a.ptr().to_vec(), a.idx().to_vec(), a.vals().iter().map(|&v| v as f32).collect())
                        .map_err(Error::Gen)?;
                    records.extend(run_matrix(&gpu, name, &a32, &formats, args, &pb)?);
                }
            }
        }
    }
    pb.finish_and_clear();
    out_inline!("{}", table(&records, copy));
    out_inline!("\n{}", summary(&records, copy));
    if let Some(path) = &args.csv {
        let text = csv(&records, copy);
        crate::files::write_with(path, |w| w.write_all(text.as_bytes()).map_err(|e| e.to_string()))?;
        say!("wrote {}", path.display());
    }
    if let Some(path) = &args.json {
        crate::write_json(path, &csv(&records, copy), crate::json_meta(Some(&gpu), Some(copy), serde_json::json!({})))?;
    }
    if let Some(path) = &args.plot {
        plot(path, &records)?;
        say!("wrote {}", path.display());
    }
    let failed: Vec<String> = records
        .iter()
        .filter_map(|r| r.result.as_ref().err().filter(|e| e.starts_with("wrong")).map(|e| format!("{} {} {}: {e}", r.matrix, r.precision, r.format)))
        .collect();
    if !failed.is_empty() {
        return Err(Error::CheckFailed(failed.join("; ")));
    }
    Ok(())
}

/// A pseudo-random `x` in [-1, 1) (fixed, so runs compare).
fn test_vector<T: SpmvValue>(n: u64) -> Vec<T> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            T::from_f64((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0)
        })
        .collect()
}

fn run_matrix<T: SpmvValue>(
    gpu: &Gpu,
    name: &str,
    a: &Csr<u32, T>,
    formats: &[SpmvTarget],
    args: &SpmvBenchArgs,
    pb: &ProgressBar,
) -> Result<Vec<SpmvRecord>> {
    let x = test_vector::<T>(a.cols());
    let mut want = vec![T::default(); a.rows() as usize];
    serial::spmv(a, T::from_f64(1.0), &x, T::default(), &mut want);
    let bound = serial::error_bound(a, T::from_f64(1.0), &x, T::default(), &want);
    let dx = gpu.upload(&x)?;
    let mut dy = gpu.alloc::<T>(a.rows().max(1) as usize)?;
    let mut dy = dy.slice_mut(0..a.rows() as usize);
    let timer = GpuTimer::new(gpu)?;
    let bytes = sptrans::spmv::byte_model(a.rows(), a.cols(), a.nnz(), T::BYTES as u64);
    let m = DeviceCsr::upload(gpu, a)?;
    let mut out = vec![];
    // (index into out, plan, times) of each plan that gave the right product.
    let mut live = vec![];
    for &format in formats {
        pb.set_message(format!("{name} {}: {format}", T::NAME));
        let mut rec = SpmvRecord {
            matrix: name.to_string(),
            precision: T::NAME,
            shape: (a.rows(), a.cols(), a.nnz()),
            format,
            chosen: format,
            result: Err(String::new()),
            gbs: 0.0,
            convert_ms: 0.0,
            footprint: 0,
        };
        let t0 = std::time::Instant::now();
        let made = match format {
            SpmvTarget::Ours(f) => Spmv::new(gpu, m.view(), f).map(|p| Plan::Ours(Box::new(p))),
            SpmvTarget::CuSparse(alg) => CuSparseSpmv::new(gpu, m.view(), alg).map(|p| Plan::Peer(Box::new(p))),
        };
        gpu.synchronize()?;
        rec.convert_ms = t0.elapsed().as_secs_f64() * 1e3;
        let mut plan = match made {
            Ok(p) => p,
            Err(e) => {
                rec.result = Err(format!("refused: {e}"));
                pb.suspend(|| say!("{name} {} {format}: {e}", T::NAME));
                out.push(rec);
                pb.inc(1);
                continue;
            }
        };
        if let Plan::Ours(p) = &plan {
            if !p.trials().is_empty() {
                let t: Vec<String> = p.trials().iter().map(|(f, ms)| format!("{f} {ms:.4} ms")).collect();
                pb.suspend(|| say!("{name} {} auto's trial: {}; kept {}", T::NAME, t.join(", "), p.format()));
            }
        }
        (rec.chosen, rec.footprint) = match &plan {
            Plan::Ours(p) => (SpmvTarget::Ours(p.format()), p.footprint_bytes()),
            Plan::Peer(p) => (format, p.footprint_bytes()),
        };
        plan.apply(T::from_f64(1.0), &dx, T::default(), &mut dy)?;
        let got = gpu.download(&dy)?;
        match serial::within(&got, &want, &bound) {
            Err(e) => rec.result = Err(format!("wrong result: {e}")),
            Ok(()) => live.push((out.len(), plan, Vec::with_capacity(args.reps))),
        }
        out.push(rec);
        pb.inc(1);
    }
    // The checked plans timed in turn, in rounds: each plan one untimed product (the cache as its
    // own product leaves it, as for products back to back), then up to ROUND timed ones. Drift
    // of the clocks through the run falls on every format alike: timed one format after
    // another, cuSPARSE's plan inside Auto measured 2-3% slower than the same plan as the peer
    // (timed last) on the realistic suite's graph and circuit; timed a product each in turn,
    // each format after another's, cuSPARSE's time depended on its predecessor (up to 1.5x).
    const ROUND: usize = 5;
    for round in 0..args.reps.div_ceil(ROUND) {
        let n = ROUND.min(args.reps - round * ROUND);
        for (_, plan, ms) in live.iter_mut() {
            plan.apply(T::from_f64(1.0), &dx, T::default(), &mut dy)?;
            for _ in 0..n {
                timer.start()?;
                plan.apply(T::from_f64(1.0), &dx, T::default(), &mut dy)?;
                ms.push(timer.stop_ms()?);
            }
        }
    }
    for (i, _, mut ms) in live {
        ms.sort_by(f64::total_cmp);
        let t = ms[ms.len() / 2];
        out[i].gbs = bytes as f64 / (t * 1e-3) / 1e9;
        out[i].result = Ok(t);
    }
    Ok(out)
}

/// The cuSPARSE CSR ALG1 time of the same matrix and precision.
fn reference(records: &[SpmvRecord], r: &SpmvRecord) -> Option<f64> {
    records.iter().find(|q| q.matrix == r.matrix && q.precision == r.precision && q.format == REFERENCE).and_then(|q| q.result.as_ref().ok().copied())
}

fn shown(r: &SpmvRecord) -> String {
    if r.format == SpmvTarget::Ours(Format::Auto) {
        format!("auto → {}", r.chosen)
    } else {
        r.format.to_string()
    }
}

/// The Markdown table: one row per measurement.
pub fn table(records: &[SpmvRecord], copy: f64) -> String {
    let mut s = String::from("| matrix | prec | nnz | format | ms | GB/s | % of copy | × cuSPARSE CSR | conversion ms | footprint MB |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for r in records {
        let fmt = shown(r);
        match &r.result {
            Ok(t) => {
                let speed = reference(records, r).map_or("—".into(), |b| format!("{:.2}", b / t));
                s.push_str(&format!(
                    "| {} | {} | {} | {fmt} | {t:.4} | {:.0} | {:.0}% | {speed} | {:.2} | {:.1} |\n",
                    r.matrix,
                    r.precision,
                    r.shape.2,
                    r.gbs,
                    100.0 * r.gbs / copy,
                    r.convert_ms,
                    r.footprint as f64 / 1e6
                ));
            }
            Err(e) => s.push_str(&format!("| {} | {} | {} | {fmt} | {e} | | | | | |\n", r.matrix, r.precision, r.shape.2)),
        }
    }
    s
}

/// The summary under the table: for each format and precision with a time on every matrix
/// that cuSPARSE CSR ALG1 ran, the geomean and the lowest of its ratios to cuSPARSE, and the
/// median share of copy bandwidth (formats refused or wrong on some matrix are summed over the
/// others and say how many).
pub fn summary(records: &[SpmvRecord], copy: f64) -> String {
    let mut keys: Vec<(SpmvTarget, &'static str)> = Vec::new();
    for r in records {
        if !keys.contains(&(r.format, r.precision)) {
            keys.push((r.format, r.precision));
        }
    }
    let mut s =
        String::from("| format | prec | matrices | geomean × cuSPARSE CSR | lowest (matrix) | median % of copy |\n|---|---|---|---|---|---|\n");
    for (format, precision) in keys {
        let runs: Vec<&SpmvRecord> = records.iter().filter(|r| r.format == format && r.precision == precision).collect();
        let mut ratios: Vec<(f64, &str)> = Vec::new();
        let mut pcts = Vec::new();
        for r in &runs {
            if let (Ok(t), Some(b)) = (&r.result, reference(records, r)) {
                ratios.push((b / t, r.matrix.as_str()));
                pcts.push(100.0 * r.gbs / copy);
            }
        }
        if ratios.is_empty() {
            continue;
        }
        let geomean = sptrans_report::geomean(&ratios.iter().map(|q| q.0).collect::<Vec<_>>());
        let lowest = ratios.iter().min_by(|p, q| p.0.total_cmp(&q.0)).map(|q| format!("{:.2} ({})", q.0, q.1)).unwrap_or_default();
        // The benchmarks' median (the mean of the middle two for an even count).
        let median = sptrans_report::measure::Stats::from_times(pcts).median_ms;
        let of = if ratios.len() == runs.len() { format!("{}", runs.len()) } else { format!("{} of {}", ratios.len(), runs.len()) };
        s.push_str(&format!("| {format} | {precision} | {of} | {geomean:.2} | {lowest} | {median:.0}% |\n"));
    }
    s
}

/// CSV of every measurement (empty time, and the reason, when there is none).
pub fn csv(records: &[SpmvRecord], copy: f64) -> String {
    let mut s = String::from(
        "matrix,precision,rows,cols,nnz,format,chosen,median_ms,gbs,gflops,pct_copy,speedup_vs_cusparse_csr,conversion_ms,footprint_bytes,note\n",
    );
    for r in records {
        let q = |t: &str| format!("\"{}\"", t.replace('"', "'"));
        let (ms, gbs, gflops, pct, sp, note) = match &r.result {
            Ok(t) => (
                format!("{t}"),
                format!("{:.1}", r.gbs),
                format!("{:.2}", 2.0 * r.shape.2 as f64 / (t * 1e6)),
                format!("{:.1}", 100.0 * r.gbs / copy),
                reference(records, r).map_or(String::new(), |b| format!("{:.4}", b / t)),
                String::new(),
            ),
            Err(e) => (String::new(), String::new(), String::new(), String::new(), String::new(), e.clone()),
        };
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{ms},{gbs},{gflops},{pct},{sp},{:.3},{},{}\n",
            q(&r.matrix),
            r.precision,
            r.shape.0,
            r.shape.1,
            r.shape.2,
            r.format,
            r.chosen,
            r.convert_ms,
            r.footprint,
            q(&note)
        ));
    }
    s
}

/// Grouped bars of the speedup over cuSPARSE CSR ALG1 (log scale), one group per matrix and
/// precision, a line at 1.
pub fn plot(path: &Path, records: &[SpmvRecord]) -> Result<()> {
    use plotters::prelude::*;
    let err = |e: String| Error::Output { path: path.to_path_buf(), msg: e };
    let mut groups: Vec<(String, &'static str)> = vec![];
    let mut formats: Vec<SpmvTarget> = vec![];
    for r in records {
        if !groups.iter().any(|g| g.0 == r.matrix && g.1 == r.precision) {
            groups.push((r.matrix.clone(), r.precision));
        }
        if r.format != REFERENCE && !formats.contains(&r.format) {
            formats.push(r.format);
        }
    }
    let speed = |g: &(String, &str), f: SpmvTarget| {
        records
            .iter()
            .find(|r| r.matrix == g.0 && r.precision == g.1 && r.format == f)
            .and_then(|r| Some(reference(records, r)? / *r.result.as_ref().ok()?))
    };
    let all: Vec<f64> = groups.iter().flat_map(|g| formats.iter().filter_map(move |&f| speed(g, f))).filter(|s| *s > 0.0).collect();
    let (lo, hi) = all.iter().fold((0.5f64, 2.0f64), |(l, h), &s| (l.min(s / 1.5), h.max(s * 1.5)));
    let k = formats.len().max(1) as u32;
    let n = groups.len().max(1) as u32;
    let width = (240 + 14 * n * (k + 1)).clamp(800, 3000);
    let root = SVGBackend::new(path, (width, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("sptrans spmv-bench: speedup over cuSPARSE CSR SpMV (ALG1), same run (log scale)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(60)
        .y_label_area_size(60)
        .build_cartesian_2d(0u32..n * (k + 1), (lo..hi).log_scale())
        .map_err(|e| err(e.to_string()))?;
    let names: Vec<String> = groups.iter().map(|g| format!("{} {}", g.0, g.1)).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels((n * (k + 1)) as usize)
        .x_label_formatter(&|x| if x % (k + 1) == k / 2 { names.get((x / (k + 1)) as usize).cloned().unwrap_or_default() } else { String::new() })
        .y_desc("× cuSPARSE CSR")
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (fi, &f) in formats.iter().enumerate() {
        let color = Palette99::pick(fi).to_rgba();
        let bars: Vec<Rectangle<(u32, f64)>> = groups
            .iter()
            .enumerate()
            .filter_map(|(gi, g)| speed(g, f).map(|s| (gi, s)))
            .map(|(gi, s)| {
                let x = gi as u32 * (k + 1) + fi as u32;
                Rectangle::new([(x, lo), (x + 1, s)], color.filled())
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| err(e.to_string()))?
            .label(f.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart.draw_series(LineSeries::new([(0, 1.0), (n * (k + 1), 1.0)], BLACK.stroke_width(1))).map_err(|e| err(e.to_string()))?;
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(matrix: &str, format: SpmvTarget, result: std::result::Result<f64, String>, gbs: f64) -> SpmvRecord {
        SpmvRecord { matrix: matrix.into(), precision: "f64", shape: (1, 1, 1), format, chosen: format, result, gbs, convert_ms: 0.0, footprint: 0 }
    }

    #[test]
    fn summary_takes_geomeans_lowest_and_median_against_cusparse() {
        let jds = SpmvTarget::Ours(Format::Jds);
        let records = vec![
            rec("a", REFERENCE, Ok(1.0), 500.0),
            rec("a", jds, Ok(0.5), 1000.0),
            rec("b", REFERENCE, Ok(2.0), 500.0),
            rec("b", jds, Ok(4.0), 250.0),
            rec("c", REFERENCE, Ok(1.0), 500.0),
            rec("c", jds, Err("refused: too uneven".into()), 0.0),
        ];
        let s = summary(&records, 1000.0);
        // JDS: ratios 2 and 0.5 (geomean 1), lowest 0.5 on b, shares of copy 100% and 25%.
        assert!(s.contains("| jds | f64 | 2 of 3 | 1.00 | 0.50 (b) | 62% |"), "{s}");
        assert!(s.contains("| cusparse-csr-alg1 | f64 | 3 | 1.00 | 1.00 (a) | 50% |"), "{s}");
    }
}
