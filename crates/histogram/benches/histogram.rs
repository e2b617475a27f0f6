//! `cargo bench -p gpu-histogram`: counts of 2^26 keys over 2^8..2^24 bins, uniform and
//! power-law (`bins * u^3`) keys; index-to-pointers and the partitioned form at transposition
//! sizes (10M keys, 100k bins). Throughput counts the keys read (4 bytes each), as the CuPy
//! `bincount` peer (`python3 benches/peers/histogram_cupy.py`) does; the device-to-device copy
//! bandwidth is printed first.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_histogram::Histogram;
use gpu_runtime::{Gpu, GpuTimer};
use rand::{rngs::StdRng, Rng, SeedableRng};

fn keys(kind: &str, n: usize, bins: u32) -> Vec<u32> {
    let mut r = StdRng::seed_from_u64(11);
    (0..n)
        .map(|_| match kind {
            "uniform" => r.random_range(0..bins),
            _ => ((r.random_range(0.0..1.0f64).powi(3) * bins as f64) as u32).min(bins - 1),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("gpu-histogram bench skipped: {e}"),
    };
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20).unwrap_or(f64::NAN);
    println!("device: {}; device-to-device copy: {copy:.0} GB/s (read + write)", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut h = Histogram::new(&gpu).expect("kernels");

    let mut group = c.benchmark_group("cuda/histogram");
    group.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    let n = 1usize << 26;
    for kind in ["uniform", "power-law"] {
        for log_bins in [8u32, 12, 16, 20, 24] {
            let bins = 1u32 << log_bins;
            let d_keys = gpu.upload(&keys(kind, n, bins)).expect("upload");
            let mut counts = gpu.alloc::<u32>(bins as usize).expect("alloc");
            h.counts(&d_keys, &mut counts).expect("warm-up");
            group.throughput(Throughput::Bytes(4 * n as u64));
            group.bench_with_input(BenchmarkId::new(kind, format!("n=2^26/bins=2^{log_bins}")), &bins, |b, _| {
                b.iter_custom(|iters| timer.time_iters(iters, || h.counts(&d_keys, &mut counts)).expect("timed counts"))
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("cuda/histogram-transpose-sizes");
    group.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    let (n, bins) = (10_000_000usize, 100_000u32);
    let d_keys = gpu.upload(&keys("uniform", n, bins)).expect("upload");
    let mut ptr = gpu.alloc::<u32>(bins as usize + 1).expect("alloc");
    group.throughput(Throughput::Bytes(4 * n as u64));
    group.bench_function(BenchmarkId::new("pointers", "n=10M/bins=100k"), |b| {
        b.iter_custom(|iters| timer.time_iters(iters, || h.pointers(&d_keys, &mut ptr)).expect("timed pointers"))
    });
    let mut intra = gpu.alloc::<u32>(n).expect("alloc");
    for parts in [1024u64, 4096, 16384] {
        let mut table = gpu.alloc::<u32>((parts as usize + 1) * bins as usize).expect("alloc");
        group.throughput(Throughput::Bytes(8 * n as u64));
        group.bench_function(BenchmarkId::new("partitioned", format!("n=10M/bins=100k/parts={parts}")), |b| {
            b.iter_custom(|iters| timer.time_iters(iters, || h.partitioned(&d_keys, parts, &mut table, &mut intra)).expect("timed partitioned"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
