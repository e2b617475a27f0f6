//! `cargo bench -p gpu-ptr2idx`: 10M positions with uniform rows (1M rows), power-law rows and
//! 90%-empty rows (10M rows). Throughput counts the output written (4 bytes per position) plus
//! the offsets read, to set against the device-to-device copy bandwidth printed first.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::{Gpu, GpuTimer};
use rand::{rngs::StdRng, Rng, SeedableRng};

fn offsets(kind: &str, m: usize, nnz: usize) -> Vec<u32> {
    let mut r = StdRng::seed_from_u64(7);
    let mut counts = vec![0u32; m];
    for _ in 0..nnz {
        let row = match kind {
            "uniform" => r.random_range(0..m),
            "power-law" => ((r.random_range(0.0..1.0f64).powi(3) * m as f64) as usize).min(m - 1),
            _ => (r.random_range(0..m / 10)) * 10, // 90% of rows empty
        };
        counts[row] += 1;
    }
    std::iter::once(0)
        .chain(counts.iter().scan(0u32, |a, &c| {
            *a += c;
            Some(*a)
        }))
        .collect()
}

fn bench(c: &mut Criterion) {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("gpu-ptr2idx bench skipped: {e}"),
    };
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20).unwrap_or(f64::NAN);
    println!("device: {}; device-to-device copy: {copy:.0} GB/s (read + write)", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut group = c.benchmark_group("cuda/ptr2idx");
    group.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    let nnz = 10_000_000;
    for (kind, m) in [("uniform", 1_000_000), ("power-law", 1_000_000), ("90pct-empty", 10_000_000)] {
        let o = offsets(kind, m, nnz);
        let d_o = gpu.upload(&o).expect("upload");
        let mut out = gpu.alloc::<u32>(nnz).expect("alloc");
        let mut p = Ptr2Idx::new(&gpu).expect("kernels");
        p.run(&d_o, &mut out).expect("warm-up");
        group.throughput(Throughput::Bytes(4 * (nnz + m + 1) as u64));
        group.bench_with_input(BenchmarkId::new(kind, format!("m={m}/nnz={nnz}")), &m, |b, _| {
            b.iter_custom(|iters| timer.time_iters(iters, || p.run(&d_o, &mut out)).expect("timed ptr2idx"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
