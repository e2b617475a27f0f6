//! Distributed truncated SVD scaling over the GPUs present (1, 2, 4, ... ranks of one process):
//! the 16 largest singular triplets (`Config::default()`: tolerance 1e-8, block 2, Krylov 96) of
//! a bag-of-words matrix, wall time of the whole SVD including each rank's CSRC build (the
//! matrix already on the GPUs, `f32` values widened there), against the one-GPU SVD
//! ([`gpu_svd::svd`], which is what one rank runs) timed in the same run. Each row says the
//! cycles and products, the largest residual (recomputed with the products: `‖A v − σ u‖` and
//! `‖Aᵀ u − σ v‖`) over σ₁, and the largest difference of σ from the one-GPU answer over σ₁.
//! Without a GPU or NCCL it says so and stops.
//!
//! The matrix: `SPTRANS_SVD_DOCS` rows (default 2^22) by `SPTRANS_SVD_TERMS` columns (default
//! 2^20), each row `SPTRANS_SVD_PER_DOC` (default 32) distinct columns drawn from a Zipf law
//! (exponent 1.1), values 1 to 5: `generate::text_hashed` (seed 7; made on every core from
//! hashes, the same matrix for given sizes; the transpose's dist bench makes it too,
//! `SPTRANS_DIST_KIND=text`). `SPTRANS_SVD_KIND=rmat`: a power-law graph instead
//! (`generate::rmat`, Graph500's probabilities, `SPTRANS_SVD_SCALE` (default 22) and
//! `SPTRANS_SVD_EDGES` drawn (default 16 · 2^22), duplicates removed). `SPTRANS_SVD_KRYLOV` sets the Krylov dimension,
//! `SPTRANS_SVD_PROFILE=1` adds a run with every operation timed (synchronized) per count,
//! `SPTRANS_DIST_MIN_GPUS` skips smaller counts (a matrix that only fits on several GPUs; the
//! one-GPU columns are then NaN), `SPTRANS_DIST_CSV` writes the table as CSV. One run each
//! after a small warm-up SVD per communicator (module loading, cuBLAS handles).
use gpu_svd::{dist, Config, Event, Observer};
use sptrans_matrix::dist::DistCsr;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let present = gpu_runtime::device_count().unwrap_or(0);
    if present == 0 {
        eprintln!("SKIPPED: no GPU");
        return;
    }
    let (docs, terms, per_doc) = (env("SPTRANS_SVD_DOCS", 1 << 22), env("SPTRANS_SVD_TERMS", 1 << 20), env("SPTRANS_SVD_PER_DOC", 32));
    let min_gpus = env("SPTRANS_DIST_MIN_GPUS", 1) as usize;
    let t = std::time::Instant::now();
    let (a, name) = if std::env::var("SPTRANS_SVD_KIND").as_deref() == Ok("rmat") {
        // A power-law graph: R-MAT (Graph500's 0.57, 0.19, 0.19), duplicates removed.
        let (scale, edges) = (env("SPTRANS_SVD_SCALE", 22) as u32, env("SPTRANS_SVD_EDGES", 16 << 22));
        let a = sptrans_matrix::generate::rmat::<f32>(scale, edges, 0.57, 0.19, 0.19, 7).expect("generating the matrix");
        (a, format!("R-MAT graph 2^{scale}, {edges} edges drawn"))
    } else {
        let a = sptrans_matrix::generate::text_hashed::<f32>(docs, terms, per_doc, 7).expect("generating the matrix");
        (a, format!("bag of words {docs} x {terms}, {per_doc} a row (Zipf 1.1)"))
    };
    eprintln!("matrix {name}: {} nonzeros (f32), made in {:.1} s", a.nnz(), t.elapsed().as_secs_f64());
    let mut cfg = Config { rank: 16, ..Config::default() };
    if let Ok(k) = std::env::var("SPTRANS_SVD_KRYLOV") {
        cfg.krylov = k.parse().ok();
    }
    println!("matrix {name}: {} nonzeros; rank {}, tol {:e}, block {:?}, Krylov {:?}", a.nnz(), cfg.rank, cfg.tol, cfg.block, cfg.krylov);
    println!(
        "{:>4} {:>10} {:>10} {:>8} {:>9} {:>7} {:>9} {:>14} {:>14} {:>12}",
        "gpus", "1 GPU s", "dist s", "speedup", "setup s", "cycles", "products", "max res/σ1", "max dσ/σ1", "σ1"
    );
    let mut rows = vec!["matrix,nnz,gpus,one_gpu_s,dist_s,speedup,setup_s,restarts,products,converged,max_residual_over_sigma1,max_sigma_diff_over_sigma1,sigma1,sigma16".to_string()];
    let (mut one_s, mut one_sigma) = (f64::NAN, Vec::new());
    gpu_testkit::for_each_gpu_count(|comms| {
        let count = comms.len();
        if count < min_gpus {
            eprintln!("SKIPPED {count} GPUs: SPTRANS_DIST_MIN_GPUS={min_gpus}");
            return;
        }
        let d = match DistCsr::scatter(comms.gpus(), &a) {
            Ok(d) => d,
            Err(e) => return eprintln!("SKIPPED {count} GPUs: scattering the matrix: {e}"),
        };
        // Warm-up: module loading and cuBLAS handles on every rank.
        let small = sptrans_matrix::generate::tall_skinny::<f32>(4096, 64, 4, 1).expect("warm-up matrix");
        let ds = DistCsr::scatter(comms.gpus(), &small).expect("warm-up scatter");
        let _ = dist::svd(comms, &ds, &Config { rank: 2, max_restarts: 0, ..Config::default() });
        drop(ds);
        comms.synchronize().expect("sync");
        let setup_s = std::sync::Arc::new(std::sync::Mutex::new(f64::NAN));
        let seen = setup_s.clone();
        let observer = Observer::new(move |e| {
            if let Event::Phase { what: "setup", seconds } = e {
                *seen.lock().expect("setup time") = seconds;
            }
        });
        let t = std::time::Instant::now();
        let s = dist::svd(comms, &d, &Config { observer, ..cfg.clone() });
        let setup = *setup_s.lock().expect("setup time");
        let secs = t.elapsed().as_secs_f64();
        let s = match s {
            Ok(s) => s,
            Err(e) => return eprintln!("SKIPPED {count} GPUs: {e}"),
        };
        if count == 1 {
            (one_s, one_sigma) = (secs, s.sigma.clone());
        }
        let s1 = s.sigma[0];
        let res = s.residual.iter().fold(0.0f64, |m, &x| m.max(x)) / s1;
        let dsig = if one_sigma.is_empty() { f64::NAN } else { s.sigma.iter().zip(&one_sigma).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / s1 };
        println!(
            "{count:>4} {one_s:>10.3} {secs:>10.3} {:>7.2}x {setup:>9.3} {:>7} {:>9} {res:>14.2e} {dsig:>14.2e} {s1:>12.6e}{}",
            one_s / secs,
            s.restarts + 1,
            s.products,
            if s.converged { "" } else { "  NOT CONVERGED" }
        );
        rows.push(format!(
            "\"{name}\",{},{count},{one_s:.4},{secs:.4},{:.3},{setup:.4},{},{},{},{res:.3e},{dsig:.3e},{s1:.10e},{:.10e}",
            a.nnz(),
            one_s / secs,
            s.restarts,
            s.products,
            s.converged,
            s.sigma[s.sigma.len() - 1]
        ));
        println!("     σ: {}", s.sigma.iter().map(|x| format!("{x:.9e}")).collect::<Vec<_>>().join(" "));
        // Where the time goes: one more run with every operation timed (synchronized).
        if std::env::var("SPTRANS_SVD_PROFILE").is_ok_and(|v| v == "1") {
            let ops = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let seen = ops.clone();
            let observer = Observer::new(move |e| {
                if let Event::Operation { what, seconds, calls } = e {
                    seen.lock().expect("operations").push(format!("{what} {seconds:.3} s / {calls}"));
                }
            });
            let t = std::time::Instant::now();
            let run = dist::svd(comms, &d, &Config { profile: true, observer, ..cfg.clone() });
            if run.is_ok() {
                println!("     profiled ({:.3} s): {}", t.elapsed().as_secs_f64(), ops.lock().expect("operations").join("; "));
            }
        }
    });
    if let Ok(path) = std::env::var("SPTRANS_DIST_CSV") {
        std::fs::write(&path, rows.join("\n") + "\n").expect("writing the CSV");
        eprintln!("wrote {path}");
    }
}
