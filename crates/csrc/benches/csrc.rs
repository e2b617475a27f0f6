//! `cargo bench -p gpu-csrc`: `A·X` and `Aᵀ·U` for k = 1, 2, 4, 8, 16 vectors (f64) on the tall
//! suite, every implementation in the same run, median of `SPTRANS_CSRC_REPS` (default 20)
//! GPU-event timed products after a warm-up:
//!
//! - `csrc`: [`DeviceCsrc`] (shared atomics for `A·X`; for `Aᵀ·U`, `V` in shared memory when a
//!   column fits, else global atomics, walked by warp segments for one vector and by lane groups
//!   when 4 vectors fit in shared memory, [`Walk::Auto`]); beside it, `Aᵀ·U` by each walk with
//!   the shared-memory budget and with global atomics only (for A·X, one kernel: the same time repeated);
//! - `cusparse`: `cusparseSpMV` / `cusparseSpMM` on CSR, `NON_TRANSPOSE` and `TRANSPOSE`;
//! - `explicit`: `Aᵀ` made once by our transposer (`Algorithm::Auto`), then cuSPARSE's
//!   non-transposed product on it; the transpose's time and the number of products after which
//!   it pays off against cuSPARSE's transposed product are printed beside it;
//! - `pair`: the deterministic [`CsrPair`] (fixed-order CSR products on `A` and a stored `Aᵀ`);
//!   `pair rows` the same with the row-major group kernels (3 or more vectors), `pair panels`
//!   with them over column panels sized to the L2 (`CsrPair::with_panels`, as the SVD builds it);
//! - `spmv-auto` (k = 1, `A·x` only): gpu-spmv's `Format::Auto`.
//!
//! GB/s use one byte model for all (CSR read once, `x` and `y` once: `nnz (4 + 8) + 4 (m + 1) +
//! 8 k (m + n)`). The table goes to stdout; `SPTRANS_CSRC_CSV=path` writes the rows as CSV,
//! `SPTRANS_CSRC_PLOT=path.svg` a chart of each product's speedup over cuSPARSE by k;
//! `SPTRANS_CSRC_QUICK=1` runs a small suite (for a smoke test); `SPTRANS_CSRC_SUITE=graphs` a
//! suite of power-law and realistic matrices instead of the tall one (R-MAT 2^18 and 2^22, a
//! community graph, bag of words, an unstructured mesh in random numbering), where both products
//! are also timed by row blocks and by pieces ([`Split`]: `csrc-rowblocks`, `csrc-pieces`).
use gpu_csrc::{CsrPair, CuSparseProducts, DeviceCsrc, Op, Split, Walk};
use gpu_runtime::{DenseView, DenseViewMut, DeviceView, DeviceViewMut};
use gpu_runtime::{Gpu, GpuTimer};
use gpu_spmv::{Format, Spmv};
use gpu_transpose::{Algorithm, Transposer};
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{generate, Csr};

const KS: [usize; 5] = [1, 2, 4, 8, 16];

/// A named generator of a suite matrix.
type Maker = (&'static str, Box<dyn Fn() -> Csr<u32, f64>>);

fn suite(quick: bool, graphs: bool) -> Vec<Maker> {
    if graphs {
        return vec![
            ("rmat 2^18, 2.85M", Box::new(|| generate::rmat(18, 3_000_000, 0.57, 0.19, 0.19, 6).expect("gen"))),
            ("rmat 2^22, 16M", Box::new(|| generate::rmat(22, 16_000_000, 0.57, 0.19, 0.19, 5).expect("gen"))),
            ("graph 2M deg 8", Box::new(|| generate::community_graph(2_000_000, 8, 1000, 3).expect("gen"))),
            ("text 1M x 200k", Box::new(|| generate::text(1_000_000, 200_000, 20, 5).expect("gen"))),
            ("mesh 80^3 random", Box::new(|| generate::mesh(80, generate::Order::Random, 7).expect("gen"))),
        ];
    }
    if quick {
        return vec![
            ("tall 20k x 64, 10/row", Box::new(|| generate::tall_skinny(20_000, 64, 10, 1).expect("gen"))),
            ("wide 3k x 50k", Box::new(|| generate::uniform(3_000, 50_000, 200_000, 2).expect("gen"))),
        ];
    }
    vec![
        ("tall 1M x 64, 10/row", Box::new(|| generate::tall_skinny(1_000_000, 64, 10, 1).expect("gen"))),
        ("tall 1M x 4284, 11/row", Box::new(|| generate::tall_skinny(1_000_000, 4284, 11, 2).expect("gen"))),
        ("tall 2M x 100k, 4/row", Box::new(|| generate::tall_skinny(2_000_000, 100_000, 4, 3).expect("gen"))),
        ("rail4284-like 1.09M x 4284, 11.3M", Box::new(|| generate::uniform(1_092_610, 4284, 11_279_748, 4).expect("gen"))),
        ("12month1-like 873k x 12471, 22.6M", Box::new(|| generate::uniform(872_622, 12_471, 22_624_727, 5).expect("gen"))),
    ]
}

fn median_ms(timer: &GpuTimer, reps: usize, mut f: impl FnMut()) -> f64 {
    timer
        .median_ms(3, reps, || -> gpu_runtime::Result<()> {
            f();
            Ok(())
        })
        .expect("timer")
}

struct Row {
    matrix: String,
    k: usize,
    op: &'static str,
    imp: &'static str,
    ms: f64,
    gbs: f64,
}

fn main() {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("gpu-csrc bench skipped: {e}"),
    };
    let reps: usize = std::env::var("SPTRANS_CSRC_REPS").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let quick = std::env::var("SPTRANS_CSRC_QUICK").is_ok_and(|v| v == "1");
    let graphs = std::env::var("SPTRANS_CSRC_SUITE").is_ok_and(|v| v == "graphs");
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20).unwrap_or(f64::NAN);
    println!("device: {}; device-to-device copy {copy:.0} GB/s; f64; median of {reps}", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut rows: Vec<Row> = Vec::new();
    println!("\n| matrix | nnz | CSRC MB (CSR MB) | build CSRC ms | pair build ms | transpose ms |");
    println!("|---|---|---|---|---|---|");
    let mut detail = String::new();
    detail.push_str("| matrix | k | op | csrc ms | segments ms | groups ms | segments global ms | groups global ms | cuSPARSE ms | explicit ms | pair ms | pair rows ms | pair panels ms | spmv-auto ms | csrc GB/s (% copy) | csrc ÷ cuSPARSE | explicit pays off after |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (name, make) in suite(quick, graphs) {
        let a = make();
        let (m, n, nnz) = (a.rows(), a.cols(), a.nnz());
        let da = DeviceCsr::upload(&gpu, &a).expect("upload");
        gpu.synchronize().expect("sync");
        let t0 = std::time::Instant::now();
        let mut c = DeviceCsrc::from_csr(&gpu, &da).expect("csrc");
        gpu.synchronize().expect("sync");
        let build_ms = t0.elapsed().as_secs_f64() * 1e3;
        let t0 = std::time::Instant::now();
        let mut pair = CsrPair::new(&gpu, DeviceCsr::upload(&gpu, &a).expect("upload")).expect("pair");
        gpu.synchronize().expect("sync");
        let pair_ms = t0.elapsed().as_secs_f64() * 1e3;
        // The pair with the row-major group kernels, whole and cut into column panels sized to
        // the L2 (what the SVD's `Layout::CsrPair` builds).
        let mut pair_rows = CsrPair::from_view(&gpu, &da).expect("pair");
        pair_rows.set_row_major(true);
        let mut pair_panels = CsrPair::with_panels(&gpu, &da, CsrPair::<f64>::l2_panel_rows(&gpu)).expect("pair panels");
        pair_panels.set_row_major(true);
        let mut tr = Transposer::new(&gpu).expect("transposer");
        let parts = tr.alloc_output(&da).expect("output");
        let at = tr.transpose_into(Algorithm::Auto, &da, parts).expect("transpose");
        let transpose_ms = median_ms(&timer, 5, || {
            let parts = tr.alloc_output(&da).expect("output");
            let _ = tr.transpose_into(Algorithm::Auto, &da, parts).expect("transpose");
        });
        let mut explicit = CuSparseProducts::new(&gpu, at).expect("cusparse on the transpose");
        let mut cs = CuSparseProducts::new(&gpu, da).expect("cusparse");
        let csr_mb = (4 * (m + 1) + 12 * nnz) as f64 / 1e6;
        println!("| {name} | {nnz} | {:.1} ({csr_mb:.1}) | {build_ms:.1} | {pair_ms:.1} | {transpose_ms:.2} |", c.footprint_bytes() as f64 / 1e6);
        let da_spmv = DeviceCsr::upload(&gpu, &a).expect("upload");
        let mut spmv = Spmv::new(&gpu, da_spmv.view(), Format::Auto).expect("spmv");
        for k in KS {
            let bytes = (12 * nnz + 4 * (m + 1) + 8 * k as u64 * (m + n)) as f64;
            for op in [Op::NoTranspose, Op::Transpose] {
                let (xn, on) = if op == Op::NoTranspose { (n, m) } else { (m, n) };
                let x = gpu.upload(&(0..xn as usize * k).map(|i| ((i % 17) as f64 - 8.0) / 8.0).collect::<Vec<_>>()).expect("x");
                let mut out_buf = gpu.alloc::<f64>(on as usize * k).expect("out");
                let x = DenseView::packed(DeviceView::of(&x), xn).expect("x");
                let mut out = DenseViewMut::packed(DeviceViewMut::of(&mut out_buf), on).expect("out");
                let t_csrc = median_ms(&timer, reps, || c.multiply(op, 1.0, &x, 0.0, &mut out).expect("csrc"));
                // Each walk with the default shared budget and with global atomics only (the
                // paper's kernel is warp segments with global atomics).
                let budget = c.transposed_shared_bytes();
                let mut walk_ms = |walk: Walk, bytes: u32| {
                    c.set_transposed_walk(walk);
                    c.set_transposed_shared_bytes(bytes);
                    let t = median_ms(&timer, reps, || c.multiply(op, 1.0, &x, 0.0, &mut out).expect("csrc"));
                    c.set_transposed_walk(Walk::Auto);
                    c.set_transposed_shared_bytes(budget);
                    t
                };
                let (t_seg, t_grp, t_seg_global, t_grp_global) = if op == Op::NoTranspose {
                    (t_csrc, t_csrc, t_csrc, t_csrc)
                } else {
                    (
                        walk_ms(Walk::WarpSegments, budget),
                        walk_ms(Walk::LaneGroups, budget),
                        walk_ms(Walk::WarpSegments, 0),
                        walk_ms(Walk::LaneGroups, 0),
                    )
                };
                // Both products by row blocks and by pieces (graphs suite).
                let mut split_ms = |split: Split| {
                    c.set_split(split);
                    let t = median_ms(&timer, reps, || c.multiply(op, 1.0, &x, 0.0, &mut out).expect("csrc"));
                    c.set_split(Split::Auto);
                    t
                };
                let (t_rowblocks, t_pieces) = if graphs { (Some(split_ms(Split::Never)), Some(split_ms(Split::Always))) } else { (None, None) };
                let t_cs = median_ms(&timer, reps, || cs.multiply(op, 1.0, &x, 0.0, &mut out).expect("cusparse"));
                let t_ex = median_ms(&timer, reps, || explicit.multiply(op.flip(), 1.0, &x, 0.0, &mut out).expect("explicit"));
                let t_pair = median_ms(&timer, reps, || pair.multiply(op, 1.0, &x, 0.0, &mut out).expect("pair"));
                let t_rows = median_ms(&timer, reps, || pair_rows.multiply(op, 1.0, &x, 0.0, &mut out).expect("pair rows"));
                let t_panels = median_ms(&timer, reps, || pair_panels.multiply(op, 1.0, &x, 0.0, &mut out).expect("pair panels"));
                let t_spmv = if k == 1 && op == Op::NoTranspose {
                    Some(median_ms(&timer, reps, || spmv.apply(1.0, x.data(), 0.0, out.data_mut()).expect("spmv")))
                } else {
                    None
                };
                let opname = if op == Op::NoTranspose { "A·X" } else { "Aᵀ·U" };
                let gbs = |t: f64| bytes / (t * 1e-3) / 1e9;
                let pays = if op == Op::Transpose && t_cs > t_ex { format!("{:.0}", (transpose_ms / (t_cs - t_ex)).ceil()) } else { "—".into() };
                detail.push_str(&format!(
                    "| {name} | {k} | {opname} | {t_csrc:.4} | {t_seg:.4} | {t_grp:.4} | {t_seg_global:.4} | {t_grp_global:.4} | {t_cs:.4} | {t_ex:.4} | {t_pair:.4} | {t_rows:.4} | {t_panels:.4} | {} | {:.0} ({:.0}%) | {:.2}× | {pays} |\n",
                    t_spmv.map(|t| format!("{t:.4}")).unwrap_or_default(),
                    gbs(t_csrc),
                    100.0 * gbs(t_csrc) / copy,
                    t_cs / t_csrc
                ));
                for (imp, t) in [
                    ("csrc", Some(t_csrc)),
                    ("csrc-segments", Some(t_seg)),
                    ("csrc-groups", Some(t_grp)),
                    ("csrc-segments-global", Some(t_seg_global)),
                    ("csrc-groups-global", Some(t_grp_global)),
                    ("cusparse", Some(t_cs)),
                    ("explicit", Some(t_ex)),
                    ("pair", Some(t_pair)),
                    ("pair-rows", Some(t_rows)),
                    ("pair-panels", Some(t_panels)),
                    ("spmv-auto", t_spmv),
                    ("csrc-rowblocks", t_rowblocks),
                    ("csrc-pieces", t_pieces),
                ] {
                    if let Some(t) = t {
                        rows.push(Row { matrix: name.to_string(), k, op: opname, imp, ms: t, gbs: gbs(t) });
                    }
                }
            }
        }
        eprintln!("done: {name}");
    }
    println!("\n{detail}");
    // Geomeans the targets name.
    let geo = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp();
    let find =
        |mat: &str, k: usize, op: &str, imp: &str| rows.iter().find(|r| r.matrix == mat && r.k == k && r.op == op && r.imp == imp).map(|r| r.ms);
    let mats: Vec<String> = rows.iter().map(|r| r.matrix.clone()).fold(Vec::new(), |mut v, m| {
        if !v.contains(&m) {
            v.push(m);
        }
        v
    });
    println!("| k | Aᵀ·U: cuSPARSE ÷ csrc (geomean) | csrc Aᵀ·U ÷ csrc A·X (geomean) | csrc A·X: cuSPARSE ÷ csrc (geomean) |\n|---|---|---|---|");
    for k in KS {
        let (mut t1, mut t2, mut t3) = (vec![], vec![], vec![]);
        for mat in &mats {
            if let (Some(ct), Some(st), Some(cf), Some(sf)) =
                (find(mat, k, "Aᵀ·U", "csrc"), find(mat, k, "Aᵀ·U", "cusparse"), find(mat, k, "A·X", "csrc"), find(mat, k, "A·X", "cusparse"))
            {
                t1.push(st / ct);
                t2.push(ct / cf);
                t3.push(sf / cf);
            }
        }
        println!("| {k} | {:.2}× | {:.2} | {:.2}× |", geo(&t1), geo(&t2), geo(&t3));
    }
    if let Ok(path) = std::env::var("SPTRANS_CSRC_PLOT") {
        plot(&path, &rows, &mats).expect("plot");
    }
    if let Ok(path) = std::env::var("SPTRANS_CSRC_CSV") {
        let mut s = String::from("matrix,k,op,implementation,ms,gbs\n");
        for r in &rows {
            s.push_str(&format!("\"{}\",{},{},{},{:.6},{:.1}\n", r.matrix, r.k, r.op, r.imp, r.ms, r.gbs));
        }
        std::fs::write(&path, s).expect("csv");
    }
}

/// Speedup of CSRC over cuSPARSE (same run) for each matrix and product, by k: one line per
/// matrix and product, log scale.
fn plot(path: &str, rows: &[Row], mats: &[String]) -> Result<(), String> {
    use plotters::prelude::*;
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let find =
        |mat: &str, k: usize, op: &str, imp: &str| rows.iter().find(|r| r.matrix == mat && r.k == k && r.op == op && r.imp == imp).map(|r| r.ms);
    let root = SVGBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("gpu-csrc: speedup over cuSPARSE SpMV/SpMM on CSR, same run (f64, H100; log scale)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((0.8f64..20.0).log_scale(), (0.3f64..50.0).log_scale())
        .map_err(|x| e(&x))?;
    chart.configure_mesh().x_desc("vectors k").y_desc("× cuSPARSE").draw().map_err(|x| e(&x))?;
    let mut i = 0;
    for mat in mats {
        for (op, dash) in [("Aᵀ·U", false), ("A·X", true)] {
            let pts: Vec<(f64, f64)> =
                KS.iter().filter_map(|&k| Some((k as f64, find(mat, k, op, "cusparse")? / find(mat, k, op, "csrc")?))).collect();
            let color = Palette99::pick(i / 2).to_rgba();
            let style = if dash { color.stroke_width(1) } else { color.stroke_width(3) };
            chart
                .draw_series(LineSeries::new(pts.clone(), style))
                .map_err(|x| e(&x))?
                .label(format!("{mat} {op}"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|x| e(&x))?;
            i += 1;
        }
    }
    chart.draw_series(LineSeries::new([(0.8, 1.0), (20.0, 1.0)], BLACK.stroke_width(1))).map_err(|x| e(&x))?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))
}
