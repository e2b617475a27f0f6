//! SELL-C-σ's variants against JDS, ELL and cuSPARSE CSR ALG1 on Matrix Market files (f64), the
//! experiment behind `SellOptions`'s defaults (issue 37): σ chosen / 1 / 32 / 1024 and 16-bit
//! columns on or off. Each product is checked against the twin within its bound, then timed
//! (median of `SPTRANS_REPS`, default 30, GPU events). CSV on standard output.
//!
//! ```text
//! cargo run --release -p gpu-spmv --example sell_variants -- a.mtx b.mtx ...
//! ```
use std::error::Error;

use gpu_runtime::{Gpu, GpuTimer};
use gpu_spmv::baselines::{CuSparseAlg, CuSparseSpmv};
use gpu_spmv::sell::{DeviceSell, SellOptions};
use gpu_spmv::{serial, Format, Spmv};
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{mm, Csr};

fn main() {
    if let Err(e) = run() {
        eprintln!("sell_variants: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        return Err("usage: sell_variants FILE.mtx ...".into());
    }
    let reps: usize = std::env::var("SPTRANS_REPS").ok().and_then(|s| s.parse().ok()).unwrap_or(30).max(1);
    let gpu = Gpu::new(0)?;
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 10)?;
    println!("# {}, copy {copy:.0} GB/s", gpu.props().name);
    println!("matrix,nnz,variant,sigma,slots_per_nnz,index_bytes_per_nnz,convert_ms,median_ms,pct_copy,vs_cusparse");
    for f in &files {
        let a: Csr<u32, f64> = mm::read_csr(f)?;
        let name = std::path::Path::new(f).file_stem().map_or(f.clone(), |s| s.to_string_lossy().into_owned());
        let x: Vec<f64> = (0..a.cols()).map(|i| 1.0 + (i % 7) as f64 * 0.25).collect();
        let mut want = vec![0.0; a.rows() as usize];
        serial::spmv(&a, 1.0, &x, 0.0, &mut want);
        let bound = serial::error_bound(&a, 1.0, &x, 0.0, &want);
        let da = DeviceCsr::upload(&gpu, &a)?;
        let dx = gpu.upload(&x)?;
        let mut dy = gpu.alloc::<f64>(a.rows().max(1) as usize)?;
        let mut dy = dy.slice_mut(0..a.rows() as usize);
        let timer = GpuTimer::new(&gpu)?;
        let bytes = gpu_spmv::byte_model(a.rows(), a.cols(), a.nnz(), 8) as f64;
        // A variant 20 times slower than cuSPARSE on its first timed product (one lane walking a
        // dense rail) is timed once, not `reps` times, so that one matrix cannot use up a run.
        let slow = std::cell::Cell::new(f64::INFINITY);
        let mut time =
            |apply: &mut dyn FnMut(&mut gpu_runtime::cudarc::driver::CudaViewMut<f64>) -> gpu_spmv::Result<()>| -> Result<f64, Box<dyn Error>> {
                apply(&mut dy)?;
                serial::within(&gpu.download(&dy)?, &want, &bound).map_err(|e| format!("{name}: wrong result: {e}"))?;
                // The checked call above warmed up.
                let once = timer.median_ms(0, 1, || apply(&mut dy))?;
                if once > slow.get() {
                    eprintln!("{name}: {once:.3} ms a product, past 20 × cuSPARSE's: timed once");
                    return Ok(once);
                }
                Ok(timer.median_ms(0, reps, || apply(&mut dy))?)
            };
        let mut peer = CuSparseSpmv::new(&gpu, da.view(), CuSparseAlg::CsrAlg1)?;
        let base = time(&mut |y| peer.apply(1.0, &dx, 0.0, y))?;
        slow.set(20.0 * base);
        let nnz = a.nnz().max(1) as f64;
        let row = |variant: &str, sigma: String, slots: f64, index: f64, conv: f64, ms: f64| {
            println!(
                "{name},{},{variant},{sigma},{slots:.3},{index:.3},{conv:.2},{ms:.4},{:.1},{:.3}",
                a.nnz(),
                100.0 * bytes / (ms * 1e6) / copy,
                base / ms
            );
        };
        row("cusparse-csr-alg1", String::new(), 0.0, 4.0, 0.0, base);
        for format in [Format::Jds, Format::Ell, Format::CsrAdaptive] {
            let t0 = std::time::Instant::now();
            match Spmv::new(&gpu, da.view(), format) {
                Ok(mut plan) => {
                    gpu.synchronize()?;
                    let conv = t0.elapsed().as_secs_f64() * 1e3;
                    let ms = time(&mut |y| plan.apply(1.0, &dx, 0.0, y))?;
                    row(format.name(), String::new(), 0.0, 4.0, conv, ms);
                }
                Err(e) => eprintln!("{name} {format}: {e}"),
            }
        }
        for (variant, sigma, compress) in [
            ("sell", None, true),
            ("sell-u32", None, false),
            ("sell-s1", Some(1), true),
            ("sell-s32", Some(32), true),
            ("sell-s1024", Some(1024), true),
            ("sell-s16384", Some(16384), true),
        ] {
            let t0 = std::time::Instant::now();
            let s = match DeviceSell::from_csr(&gpu, &da, SellOptions { sigma, compress }) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{name} {variant}: {e}");
                    continue;
                }
            };
            gpu.synchronize()?;
            let conv = t0.elapsed().as_secs_f64() * 1e3;
            let (slots, index) = (s.slots() as f64 / nnz, s.index_bytes() as f64 / nnz);
            let ms = time(&mut |y| s.multiply(&gpu, 1.0, &dx, 0.0, y))?;
            row(variant, s.sigma().to_string(), slots, index, conv, ms);
        }
    }
    Ok(())
}
