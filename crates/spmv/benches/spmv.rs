//! `cargo bench -p gpu-spmv [-- FILES...]`: every format on f64 matrices, median of 30 GPU-event
//! timed products `y = A x` (`alpha = 1`, `beta = 0`), with the effective bandwidth of the byte
//! model (values and column indices once, the row pointer once, `x` once, `y` written:
//! `12 nnz + 4 (rows + 1) + 8 cols + 8 rows` bytes) and its share of the measured copy
//! bandwidth. Without files it generates the matrices (uniform 100k², 10M; R-MAT 2^20,
//! 8M edges; 3D Laplacian 100³); with `SPTRANS_SPMV_FILES=a.mtx,b.mtx` it reads those (so the
//! cuSPARSE peer `benches/peers/spmv_cupy.py` can read the same files).
use gpu_runtime::{Gpu, GpuTimer};
use gpu_spmv::{Format, Spmv};
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{generate, mm, Csr};

fn main() {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("gpu-spmv bench skipped: {e}"),
    };
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20).unwrap_or(f64::NAN);
    println!("device: {}; device-to-device copy {copy:.0} GB/s", gpu.props().name);
    let mats: Vec<(String, Csr<u32, f64>)> = match std::env::var("SPTRANS_SPMV_FILES") {
        Ok(list) => list.split(',').map(|p| (p.rsplit('/').next().unwrap_or(p).to_string(), mm::read_csr::<f64>(p).expect("read"))).collect(),
        Err(_) => vec![
            ("uniform 100k x 100k, 10M".into(), generate::uniform(100_000, 100_000, 10_000_000, 1).expect("gen")),
            ("rmat 2^20, 8M edges".into(), generate::rmat(20, 8_000_000, 0.57, 0.19, 0.19, 4).expect("gen")),
            ("laplacian3d 100^3".into(), generate::laplacian_3d(100).expect("gen")),
        ],
    };
    let timer = GpuTimer::new(&gpu).expect("events");
    println!("| matrix | nnz | format | ms (median of 30) | GB/s | % of copy | footprint MB | conversion ms |");
    println!("|---|---|---|---|---|---|---|---|");
    for (name, a) in mats {
        let bytes = gpu_spmv::byte_model(a.rows(), a.cols(), a.nnz(), 8);
        let x = gpu.upload(&vec![1.0f64; a.cols() as usize]).expect("x");
        let mut y = gpu.alloc::<f64>(a.rows() as usize).expect("y");
        let m = DeviceCsr::upload(&gpu, &a).expect("upload");
        for format in Format::ALL.into_iter().chain([Format::Auto]) {
            let t0 = std::time::Instant::now();
            let made = Spmv::new(&gpu, m.view(), format);
            gpu.synchronize().expect("sync");
            let convert_ms = t0.elapsed().as_secs_f64() * 1e3;
            let mut plan = match made {
                Ok(p) => p,
                Err(e) => {
                    println!("| {name} | {} | {format} | refused: {e} | | | | |", a.nnz());
                    continue;
                }
            };
            for _ in 0..3 {
                plan.apply(1.0, &x, 0.0, &mut y).expect("warm-up");
            }
            let mut ms: Vec<f64> = (0..30)
                .map(|_| {
                    timer.start().expect("timer");
                    plan.apply(1.0, &x, 0.0, &mut y).expect("spmv");
                    timer.stop_ms().expect("timer")
                })
                .collect();
            ms.sort_by(f64::total_cmp);
            let t = ms[15];
            let gbs = bytes as f64 / (t * 1e-3) / 1e9;
            let shown = if format == Format::Auto { format!("auto → {}", plan.format()) } else { format.to_string() };
            println!(
                "| {name} | {} | {shown} | {t:.4} | {gbs:.0} | {:.0}% | {:.0} | {convert_ms:.2} |",
                a.nnz(),
                100.0 * gbs / copy,
                plan.footprint_bytes() as f64 / 1e6
            );
        }
        // The cuSPARSE peers, timed the same way.
        for alg in gpu_spmv::baselines::CuSparseAlg::ALL {
            let mut peer = match gpu_spmv::baselines::CuSparseSpmv::new(&gpu, m.view(), alg) {
                Ok(p) => p,
                Err(e) => {
                    println!("| {name} | {} | {alg} | unavailable: {e} | | | | |", a.nnz());
                    continue;
                }
            };
            for _ in 0..3 {
                peer.apply(1.0, &x, 0.0, &mut y).expect("warm-up");
            }
            let mut ms: Vec<f64> = (0..30)
                .map(|_| {
                    timer.start().expect("timer");
                    peer.apply(1.0, &x, 0.0, &mut y).expect("spmv");
                    timer.stop_ms().expect("timer")
                })
                .collect();
            ms.sort_by(f64::total_cmp);
            let t = ms[15];
            let gbs = bytes as f64 / (t * 1e-3) / 1e9;
            println!(
                "| {name} | {} | {alg} | {t:.4} | {gbs:.0} | {:.0}% | {:.0} | |",
                a.nnz(),
                100.0 * gbs / copy,
                peer.footprint_bytes() as f64 / 1e6
            );
        }
    }
}
