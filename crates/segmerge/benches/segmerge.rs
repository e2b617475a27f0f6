//! `cargo bench -p gpu-segmerge`: one merge pass over 2^24 (key, value) pairs in runs of 2^11 to
//! 2^23 (sorted runs of random 32-bit keys), in pairs per second: the bandwidth-bound step that
//! the whole sort (`gpu-segsort`'s `sort_pairs`) repeats.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_runtime::{Gpu, GpuTimer};
use gpu_segmerge::Segmerge;
use rand::{rngs::StdRng, Rng, SeedableRng};

fn bench(c: &mut Criterion) {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("gpu-segmerge bench skipped: {e}"),
    };
    println!("device: {}", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut m = Segmerge::new(&gpu).expect("kernels");
    let mut r = StdRng::seed_from_u64(9);
    let n = 1usize << 24;
    let mut group = c.benchmark_group("cuda/merge_pass");
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    group.throughput(Throughput::Elements(n as u64));
    for log_s in [11u32, 15, 19, 23] {
        let s = 1usize << log_s;
        let mut keys: Vec<u32> = (0..n).map(|_| r.random()).collect();
        keys.chunks_mut(s).for_each(|c| c.sort_unstable());
        let (k, v) = (gpu.upload(&keys).expect("upload"), gpu.upload(&(0..n as u32).collect::<Vec<_>>()).expect("upload"));
        let (mut ko, mut vo) = (gpu.alloc::<u32>(n).expect("alloc"), gpu.alloc::<u32>(n).expect("alloc"));
        group.bench_function(BenchmarkId::new("u32+u32", format!("s=2^{log_s}")), |b| {
            b.iter_custom(|iters| timer.time_iters(iters, || m.merge_pass(s as u64, &k, &v, &mut ko, &mut vo)).expect("timed"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
