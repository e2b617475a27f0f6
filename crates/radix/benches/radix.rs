//! `cargo bench -p gpu-radix`: `sort_pairs` (u32 keys, u32 values, in place) of 2^20..2^26 pairs
//! with 24-bit and 32-bit random keys, and `sort_keys` at 2^26, in pairs per second. The CUB peer,
//! run in the same device session: `python3 benches/peers/sort_cub.py` (torch.sort(stable=True)
//! and a gather of the payload). Each timed call first restores the unsorted input with a
//! device-to-device copy, timed alone too (`copy-only`) so it can be subtracted.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_radix::RadixSort;
use gpu_runtime::{Gpu, GpuTimer};
use rand::{rngs::StdRng, Rng, SeedableRng};

fn bench(c: &mut Criterion) {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("gpu-radix bench skipped: {e}"),
    };
    println!("device: {}", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut sort = RadixSort::new(&gpu).expect("kernels");
    let mut r = StdRng::seed_from_u64(9);
    let mut group = c.benchmark_group("cuda/radix/sort_pairs");
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
            let restore = |k: &mut _, v: &mut _| -> gpu_radix::Result<()> {
                stream.memcpy_dtod(&src_k, k).map_err(gpu_runtime::Error::driver("copy"))?;
                stream.memcpy_dtod(&src_v, v).map_err(gpu_runtime::Error::driver("copy"))?;
                Ok(())
            };
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new(format!("u32+u32/{bits}-bit"), format!("n=2^{log_n}")), |b| {
                b.iter_custom(|iters| timer.time_iters(iters, || { restore(&mut k, &mut v)?; sort.sort_pairs(&mut k, &mut v, bits) }).expect("timed"))
            });
            if bits == 24 {
                group.bench_function(BenchmarkId::new("copy-only", format!("n=2^{log_n}")), |b| {
                    b.iter_custom(|iters| timer.time_iters(iters, || restore(&mut k, &mut v)).expect("timed"))
                });
            }
            if log_n == 26 {
                group.bench_function(BenchmarkId::new(format!("keys-only/{bits}-bit"), format!("n=2^{log_n}")), |b| {
                    b.iter_custom(|iters| timer.time_iters(iters, || { restore(&mut k, &mut v)?; sort.sort_keys(&mut k, bits) }).expect("timed"))
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
