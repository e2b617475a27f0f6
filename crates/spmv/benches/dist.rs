//! Distributed SpMV scaling over the GPUs present (1, 2, 4, ... ranks of one process), f64,
//! `Format::Auto` per block: the distributed product (in the way `XGather::Auto` takes; both the
//! all-gather and the halo timed) against the one-GPU product of the whole matrix, timed in the
//! same run; beside them the ranks' local products alone (each rank's block with a full `x`
//! already in place, all ranks at once) and NCCL's all-gather of `x` alone, so the exchange's
//! cost shows, and the most entries of `x` a rank receives each way. Without a GPU or
//! NCCL it says so and stops.
//!
//! The matrix: `SPTRANS_DIST_KIND=uniform` (default: `SPTRANS_DIST_NNZ` nonzeros, default
//! 2^28, in rows of 16 uniform columns, square), `stencil` (a 27-point stencil on a `k³` grid
//! with `k = SPTRANS_DIST_K`, default 200, in natural order; `SPTRANS_DIST_ORDER=random`
//! numbers the points randomly), or the Matrix Market file `SPTRANS_DIST_MTX`.
//! `SPTRANS_DIST_CSV` writes the table as CSV; median of `SPTRANS_DIST_RUNS` (default 20) runs
//! after one warm-up.
use gpu_spmv::dist::{DistSpmv, XGather};
use gpu_spmv::{byte_model, Format, Spmv};
use sptrans_matrix::dist::DistCsr;
use sptrans_matrix::generate::{self, Order};
use sptrans_matrix::Csr;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seconds of `f` (which enqueues work), then `sync`: the median of `runs` after a warm-up.
fn time(runs: usize, mut f: impl FnMut(), sync: impl Fn()) -> f64 {
    let mut times = Vec::new();
    for run in 0..=runs {
        sync();
        let t = std::time::Instant::now();
        f();
        sync();
        if run > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
    }
    median(times)
}

fn matrix() -> (String, Csr<u32, f64>) {
    let t = std::time::Instant::now();
    let (name, a) = if let Some(path) = std::env::var_os("SPTRANS_DIST_MTX") {
        (path.to_string_lossy().into_owned(), sptrans_matrix::mm::read_csr::<f64>(&path).expect("reading SPTRANS_DIST_MTX"))
    } else if std::env::var("SPTRANS_DIST_KIND").as_deref() == Ok("stencil") {
        let k = env("SPTRANS_DIST_K", 200);
        let random = std::env::var("SPTRANS_DIST_ORDER").as_deref() == Ok("random");
        let order = if random { Order::Random } else { Order::Natural };
        (format!("27-point stencil {k}^3 ({order:?} order)"), generate::stencil_3d(k, 27, order, 7).expect("generating the stencil"))
    } else {
        let nnz = env("SPTRANS_DIST_NNZ", 1 << 28);
        let m = (nnz / 16).max(1);
        (format!("uniform {m}^2, 16 a row"), generate::tall_skinny(m, m, 16.min(m), 7).expect("generating the matrix"))
    };
    eprintln!("matrix {name}: {} x {}, {} nonzeros (f64), made in {:.1} s", a.rows(), a.cols(), a.nnz(), t.elapsed().as_secs_f64());
    (name, a)
}

fn main() {
    let present = gpu_runtime::device_count().unwrap_or(0);
    if present == 0 {
        eprintln!("SKIPPED: no GPU");
        return;
    }
    let runs = env("SPTRANS_DIST_RUNS", 20) as usize;
    let (name, a) = matrix();
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu_runtime::Gpu::new(0).unwrap(), 1 << 30, 10).unwrap_or(f64::NAN);
    let bytes = byte_model(a.rows(), a.cols(), a.nnz(), 8) as f64;
    println!("matrix {name}; copy bandwidth of GPU 0: {copy:.0} GB/s; byte model {:.2} GB", bytes / 1e9);
    println!(
        "{:>4} {:>10} {:>10} {:>8} {:>9} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>9}  formats",
        "gpus", "1 GPU ms", "dist ms", "speedup", "auto", "allgath ms", "halo ms", "local ms", "nccl ag ms", "recv allgath", "recv halo", "GB/s/GPU"
    );
    let mut rows = vec![
        "matrix,gpus,one_gpu_ms,dist_ms,speedup,auto_takes,allgather_ms,halo_ms,local_only_ms,nccl_allgather_ms,max_received_allgather,max_received_halo,model_gbs_per_gpu,copy_gbs,formats"
            .to_string(),
    ];
    let mut one = f64::NAN;
    let x: Vec<f64> = (0..a.cols()).map(|j| (j % 17) as f64 / 16.0 - 0.5).collect();
    gpu_testkit::for_each_gpu_count(|comms| {
        let count = comms.len();
        let gpus = comms.gpus();
        let sync = || comms.synchronize().unwrap();
        let d = DistCsr::scatter(gpus, &a).unwrap();
        // Auto's choice, then each way timed on its own plan.
        let chosen = DistSpmv::new(comms, &d, Format::Auto).unwrap().gather();
        let mut ways = Vec::new();
        let mut xs = Vec::new();
        for way in [XGather::AllGather, XGather::Halo] {
            let mut plan = DistSpmv::with_gather(comms, &d, Format::Auto, way).unwrap();
            xs = plan.x_starts().to_vec();
            let dx = plan.scatter_x(comms, &x).unwrap();
            let mut dy = plan.alloc_y(comms).unwrap();
            let t = time(runs, || plan.apply(comms, 1.0, &dx, 0.0, &mut dy).unwrap(), sync);
            ways.push((t, plan.received().iter().copied().max().unwrap_or(0), plan.formats()));
            if count == 1 {
                break;
            }
        }
        let (t_all, t_halo) = (ways[0].0, ways.get(1).map_or(f64::NAN, |w| w.0));
        let dist = if chosen == XGather::Halo { t_halo } else { t_all };
        if count == 1 {
            one = dist;
        }
        let rs = d.row_starts().to_vec();
        let mut dy: Vec<_> = (0..count).map(|r| gpus[r].alloc_zeros::<f64>((rs[r + 1] - rs[r]) as usize).unwrap()).collect();
        // Each rank's block with the whole x already on its GPU: the products alone.
        let full: Vec<_> = gpus.iter().map(|g| g.upload(&x).unwrap()).collect();
        let mut locals: Vec<_> = d.blocks().iter().zip(gpus).map(|(b, g)| Spmv::new(g, b.view(), Format::Auto).unwrap()).collect();
        let local = time(
            runs,
            || {
                for ((p, f), y) in locals.iter_mut().zip(&full).zip(dy.iter_mut()) {
                    p.apply(1.0, f, 0.0, y).unwrap();
                }
            },
            sync,
        );
        drop(locals);
        // NCCL's all-gather of x alone (equal parts, padded: what the broadcasts move).
        let gather = if count > 1 {
            let part = xs.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0) as usize;
            let bufs: Vec<_> = gpus.iter().map(|g| g.alloc_zeros::<f64>(part * count).unwrap()).collect();
            time(
                runs,
                || {
                    comms
                        .group(|c| {
                            for (r, b) in bufs.iter().enumerate() {
                                let (p, _g) = gpu_runtime::cudarc::driver::DevicePtr::device_ptr(b, gpus[r].stream());
                                for root in 0..count {
                                    // SAFETY: part · count words in each buffer; the root's part
                                    // sent from its own slot.
                                    unsafe { c.broadcast_bytes(r, p + (8 * part * root) as u64, p + (8 * part * root) as u64, 8 * part, root)? };
                                }
                            }
                            Ok(())
                        })
                        .unwrap()
                },
                sync,
            )
        } else {
            0.0
        };
        let formats: Vec<String> = ways[0].2.iter().map(|f| f.to_string()).collect();
        let per_gpu = bytes / count as f64 / dist / 1e9;
        let (recv_all, recv_halo) = (ways[0].1, ways.get(1).map_or(0, |w| w.1));
        println!(
            "{count:>4} {:>10.3} {:>10.3} {:>7.2}x {:>9?} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>12} {:>12} {:>9.0}  {}",
            one * 1e3,
            dist * 1e3,
            one / dist,
            chosen,
            t_all * 1e3,
            t_halo * 1e3,
            local * 1e3,
            gather * 1e3,
            recv_all,
            recv_halo,
            per_gpu,
            formats.join(" ")
        );
        rows.push(format!(
            "\"{name}\",{count},{:.4},{:.4},{:.3},{chosen:?},{:.4},{:.4},{:.4},{:.4},{recv_all},{recv_halo},{per_gpu:.1},{copy:.0},{}",
            one * 1e3,
            dist * 1e3,
            one / dist,
            t_all * 1e3,
            t_halo * 1e3,
            local * 1e3,
            gather * 1e3,
            formats.join(" ")
        ));
        drop(d);
    });
    if let Ok(path) = std::env::var("SPTRANS_DIST_CSV") {
        std::fs::write(&path, rows.join("\n") + "\n").expect("writing the CSV");
        eprintln!("wrote {path}");
    }
}
