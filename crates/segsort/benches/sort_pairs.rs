//! `cargo bench -p gpu-segsort --bench sort_pairs`: `Segsort::sort_pairs` of 2^20..2^26 (key, value) pairs with 24-bit and
//! 32-bit random keys, in pairs per second; the CUB radix-sort peer is
//! `python3 benches/peers/sort_cub.py` (torch.sort(stable=True) + gathering the payload).
//! Each timed call first restores the unsorted input with a device-to-device copy, which is
//! timed too and reported separately (`copy-only`) so it can be subtracted.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_runtime::{Gpu, GpuTimer};
use gpu_segsort::Segsort;
use rand::{rngs::StdRng, Rng, SeedableRng};

fn bench(c: &mut Criterion) {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("gpu-segsort sort_pairs bench skipped: {e}"),
    };
    println!("device: {}", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut m = Segsort::new(&gpu).expect("kernels");
    let mut r = StdRng::seed_from_u64(9);
    let mut group = c.benchmark_group("cuda/sort_pairs");
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    for bits in [24u32, 32] {
        for log_n in [20u32, 22, 24, 26] {
            let n = 1usize << log_n;
            let keys: Vec<u32> = (0..n).map(|_| if bits == 32 { r.random() } else { r.random_range(0..1u32 << bits) }).collect();
            let src_k = gpu.upload(&keys).expect("upload");
            let src_v = gpu.upload(&(0..n as u32).collect::<Vec<_>>()).expect("upload");
            let mut k = gpu.alloc::<u32>(n).expect("alloc");
            let mut v = gpu.alloc::<u32>(n).expect("alloc");
            let stream = gpu.stream().clone();
            let restore = |k: &mut _, v: &mut _| -> gpu_segsort::Result<()> {
                stream.memcpy_dtod(&src_k, k).map_err(gpu_runtime::Error::driver("copy"))?;
                stream.memcpy_dtod(&src_v, v).map_err(gpu_runtime::Error::driver("copy"))?;
                Ok(())
            };
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new(format!("{bits}-bit"), format!("n=2^{log_n}")), |b| {
                b.iter_custom(|iters| {
                    timer
                        .time_iters(iters, || {
                            restore(&mut k, &mut v)?;
                            m.sort_pairs(&mut k, &mut v)
                        })
                        .expect("timed")
                })
            });
            if bits == 24 {
                group.bench_function(BenchmarkId::new("copy-only", format!("n=2^{log_n}")), |b| {
                    b.iter_custom(|iters| timer.time_iters(iters, || restore(&mut k, &mut v)).expect("timed"))
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
