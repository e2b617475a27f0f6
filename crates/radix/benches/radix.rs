//! `cargo bench -p gpu-radix`: `sort_pairs` (u32 keys, u32 values, in place) of 2^20..2^26 pairs
//! with 24-bit and 32-bit random keys, and `sort_keys` at 2^26, in pairs per second. The CUB peer,
//! run in the same device session: `python3 benches/peers/sort_cub.py` (torch.sort(stable=True)
//! and a gather of the payload). Each timed call first restores the unsorted input with a
//! device-to-device copy, timed alone too (`copy-only`) so it can be subtracted. Then a sweep of
//! the largest digit (6 to 9 bits) at 2^26 pairs, printed as `radix digit sweep` lines (copy
//! subtracted), which sets `DEFAULT_MAX_BITS`.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_radix::RadixSort;
use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{Gpu, GpuTimer};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// Random keys of `bits` bits with the payload 0..n, kept on the device to restore the sorted
/// buffers before each timed call.
struct Input {
    keys: CudaSlice<u32>,
    vals: CudaSlice<u32>,
}

impl Input {
    fn new(gpu: &Gpu, n: usize, bits: u32, r: &mut StdRng) -> Self {
        let keys: Vec<u32> = (0..n).map(|_| if bits == 32 { r.random() } else { r.random_range(0..1u32 << bits) }).collect();
        Self { keys: gpu.upload(&keys).expect("upload"), vals: gpu.upload(&(0..n as u32).collect::<Vec<_>>()).expect("upload") }
    }

    /// Buffers for the sort, of the input's length.
    fn buffers(&self, gpu: &Gpu) -> (CudaSlice<u32>, CudaSlice<u32>) {
        (gpu.alloc::<u32>(self.keys.len()).expect("alloc"), gpu.alloc::<u32>(self.keys.len()).expect("alloc"))
    }

    fn restore(&self, gpu: &Gpu, k: &mut CudaSlice<u32>, v: &mut CudaSlice<u32>) -> gpu_radix::Result<()> {
        gpu.stream().memcpy_dtod(&self.keys, k).map_err(gpu_runtime::Error::driver("copy"))?;
        gpu.stream().memcpy_dtod(&self.vals, v).map_err(gpu_runtime::Error::driver("copy"))?;
        Ok(())
    }
}

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
            let input = Input::new(&gpu, n, bits, &mut r);
            let (mut k, mut v) = input.buffers(&gpu);
            let restore = |k: &mut _, v: &mut _| input.restore(&gpu, k, v);
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new(format!("u32+u32/{bits}-bit"), format!("n=2^{log_n}")), |b| {
                b.iter_custom(|iters| {
                    timer
                        .time_iters(iters, || {
                            restore(&mut k, &mut v)?;
                            sort.sort_pairs(&mut k, &mut v, bits)
                        })
                        .expect("timed")
                })
            });
            if bits == 24 {
                group.bench_function(BenchmarkId::new("copy-only", format!("n=2^{log_n}")), |b| {
                    b.iter_custom(|iters| timer.time_iters(iters, || restore(&mut k, &mut v)).expect("timed"))
                });
            }
            if log_n == 26 {
                group.bench_function(BenchmarkId::new(format!("keys-only/{bits}-bit"), format!("n=2^{log_n}")), |b| {
                    b.iter_custom(|iters| {
                        timer
                            .time_iters(iters, || {
                                restore(&mut k, &mut v)?;
                                sort.sort_keys(&mut k, bits)
                            })
                            .expect("timed")
                    })
                });
            }
        }
    }
    group.finish();
    let n = 1usize << 26;
    for bits in [24u32, 32] {
        let input = Input::new(&gpu, n, bits, &mut r);
        let (mut k, mut v) = input.buffers(&gpu);
        let restore = |k: &mut _, v: &mut _| input.restore(&gpu, k, v);
        let reps = 10;
        let copy = timer.time_iters(reps, || restore(&mut k, &mut v)).expect("timed");
        for max_bits in 6..=gpu_radix::MAX_BITS {
            sort.set_max_digit_bits(Some(max_bits));
            sort.sort_pairs(&mut k, &mut v, bits).expect("warm-up");
            let t = timer
                .time_iters(reps, || {
                    restore(&mut k, &mut v)?;
                    sort.sort_pairs(&mut k, &mut v, bits)
                })
                .expect("timed");
            let ms = (t.as_secs_f64() - copy.as_secs_f64()) * 1e3 / reps as f64;
            println!("radix digit sweep: {bits}-bit keys, n=2^26, max {max_bits} bits ({:?} passes/bits): {ms:.3} ms", sort.passes(0..bits));
        }
        sort.set_max_digit_bits(None);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
