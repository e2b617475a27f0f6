//! `cargo bench -p gpu-segsort`: block sorts of 2^24 (key, value) pairs for every block size, and
//! the sort by offsets of 10M pairs in 1M segments of uniform random lengths. Throughput in
//! pairs per second.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_runtime::{Gpu, GpuTimer};
use gpu_segsort::{Segsort, TileSize};
use rand::{rngs::StdRng, Rng, SeedableRng};

fn bench(c: &mut Criterion) {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("gpu-segsort bench skipped: {e}"),
    };
    println!("device: {}", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut s = Segsort::new(&gpu).expect("kernels");
    let mut r = StdRng::seed_from_u64(5);
    let mut group = c.benchmark_group("cuda/segsort");
    group.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));

    let n = 1usize << 24;
    let keys: Vec<u32> = (0..n).map(|_| r.random()).collect();
    let d_keys = gpu.upload(&keys).expect("upload");
    let d_vals = gpu.upload(&(0..n as u32).collect::<Vec<_>>()).expect("upload");
    let mut ko = gpu.alloc::<u32>(n).expect("alloc");
    let mut vo = gpu.alloc::<u32>(n).expect("alloc");
    group.throughput(Throughput::Elements(n as u64));
    for block in TileSize::ALL {
        group.bench_function(BenchmarkId::new("blocks", format!("n=2^24/block={}", block.len())), |b| {
            b.iter_custom(|iters| timer.time_iters(iters, || s.sort_tiles_into(block, &d_keys, &d_vals, &mut ko, &mut vo)).expect("timed"))
        });
    }

    let (n, m) = (10_000_000usize, 1_000_000usize);
    let mut cuts: Vec<u32> = (0..m - 1).map(|_| r.random_range(0..=n as u32)).collect();
    cuts.sort_unstable();
    let offsets: Vec<u32> = std::iter::once(0).chain(cuts).chain(std::iter::once(n as u32)).collect();
    let d_off = gpu.upload(&offsets).expect("upload");
    let keys: Vec<u32> = (0..n).map(|_| r.random()).collect();
    let mut d_keys = gpu.upload(&keys).expect("upload");
    let mut d_vals = gpu.upload(&(0..n as u32).collect::<Vec<_>>()).expect("upload");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new("segments", "n=10M/m=1M"), |b| {
        b.iter_custom(|iters| timer.time_iters(iters, || s.sort_segments(&d_off, &mut d_keys, &mut d_vals)).expect("timed"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
