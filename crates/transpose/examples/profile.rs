//! Runs each GPU algorithm a few times on one suite matrix, for a profiler (`ncu`) to attribute
//! the time to kernels: `cargo run --release -p gpu-transpose --example profile [INDEX [ALGOS]]`
//! (INDEX into `measure::paper_suite`, default 0; ALGOS comma-separated, default every GPU
//! algorithm).
use gpu_transpose::{Algorithm, Transposer};
use sptrans_matrix::device::DeviceCsr;
use sptrans_report::measure::paper_suite;

fn main() -> Result<(), gpu_transpose::Error> {
    let i: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let suite = paper_suite();
    let sm = &suite[i.min(suite.len() - 1)];
    let gpu = gpu_runtime::Gpu::first()?;
    let a = (sm.build)()?;
    let da = DeviceCsr::upload(&gpu, &a)?;
    let mut t = Transposer::new(&gpu)?;
    let mut out = t.alloc_output(&da)?;
    let algos: Vec<Algorithm> = match std::env::args().nth(2) {
        Some(list) => list.split(',').map(str::parse).collect::<Result<_, _>>()?,
        None => Algorithm::ALL.into_iter().filter(|a| a.is_gpu()).collect(),
    };
    for algo in algos {
        for _ in 0..2 {
            out = t.transpose_into(algo, &da, out)?.into_parts();
        }
        gpu.synchronize()?;
        println!("{}: {algo} ran", sm.name);
    }
    Ok(())
}
