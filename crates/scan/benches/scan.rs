//! `cargo bench -p gpu-scan`: exclusive sums of u32, 2^16..2^28 items, both algorithms.
//! Throughput counts bytes read + written (8 bytes per item), so criterion reports GB/s that can
//! be set against the device-to-device copy bandwidth printed first.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_runtime::{Gpu, GpuTimer};
use gpu_scan::{Algorithm, Scanner};

fn bench(c: &mut Criterion) {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("gpu-scan bench skipped: {e}");
            return;
        }
    };
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20).unwrap_or(f64::NAN);
    println!("device: {}; device-to-device copy: {copy:.0} GB/s (read + write)", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut group = c.benchmark_group("cuda/scan/exclusive_sum/u32");
    group.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for log2 in (16..=28).step_by(2) {
        let n = 1usize << log2;
        let mut seed = gpu.alloc::<u32>(n).expect("alloc");
        gpu_runtime::selftest::iota_u32(&gpu, &mut seed, 12345).expect("iota");
        let mut out = gpu.alloc::<u32>(n).expect("alloc");
        group.throughput(Throughput::Bytes(8 * n as u64));
        for algo in [Algorithm::Lookback, Algorithm::ReduceThenScan] {
            let mut s = Scanner::<u32>::new(&gpu, algo).expect("scanner");
            s.exclusive(&seed, &mut out).expect("warm-up");
            group.bench_with_input(BenchmarkId::new(format!("{algo:?}"), format!("2^{log2}")), &n, |b, _| {
                b.iter_custom(|iters| timer.time_iters(iters, || s.exclusive(&seed, &mut out)).expect("timed scan"))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
