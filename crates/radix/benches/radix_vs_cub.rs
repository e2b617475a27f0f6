//! `cargo bench -p gpu-radix --bench radix_vs_cub`: the cases of the CUB peer
//! (`benches/peers/cub_sort.cu`, `cub::DeviceRadixSort` built with nvcc on the device), timed the
//! same way in the same device run (`benches/radix-device-run.sh` joins the two): u32 keys alone
//! and with a u32 payload, keys of 24 and 32 random bits sorting only those bits, 2^20, 2^24 and
//! 2^26 items, read from an input left as it is into double buffers (CUB's `SortKeys` /
//! `SortPairs` out of place: no restoring copy on either side). Prints CSV on standard output:
//! `what,keys_bits,n,ours_ms,passes` (median of 20 after 3 warm-ups), checked against a host sort,
//! and the device's copy bandwidth on standard error. `RADIX_CASE=pairs,32,26` runs one case and
//! `RADIX_REPS=1` times it once after one warm-up (for ncu).
use gpu_radix::{DoubleBuffer, RadixSort, Sort};
use gpu_runtime::{DeviceView, DeviceViewMut, Gpu, GpuTimer};
use rand::{rngs::StdRng, Rng, SeedableRng};

fn main() {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("radix_vs_cub skipped: {e}"),
    };
    // Criterion's own flags (`--bench`) are passed by `cargo bench`: nothing to parse.
    eprintln!("device: {}", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut sort = RadixSort::new(&gpu).expect("kernels");
    let mut r = StdRng::seed_from_u64(9);
    let case: Option<(String, u32, u32)> = std::env::var("RADIX_CASE").ok().and_then(|c| {
        let f: Vec<&str> = c.split(',').collect();
        Some((f.first()?.to_string(), f.get(1)?.parse().ok()?, f.get(2)?.parse().ok()?))
    });
    let reps: usize = std::env::var("RADIX_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let warmup = if reps < 20 { 1 } else { 3 };
    if let Ok(gbs) = gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 28, 10) {
        eprintln!("copy: {gbs:.0} GB/s (device-to-device, 256 MiB)");
    }
    println!("what,keys_bits,n,ours_ms,passes");
    let bit_cases: Vec<u32> = case.as_ref().map_or(vec![24, 32], |c| vec![c.1]);
    let n_cases: Vec<u32> = case.as_ref().map_or(vec![20, 24, 26], |c| vec![c.2]);
    for &bits in &bit_cases {
        for &log_n in &n_cases {
            let n = 1usize << log_n;
            let keys: Vec<u32> = (0..n).map(|_| if bits == 32 { r.random() } else { r.random_range(0..1u32 << bits) }).collect();
            let ki = gpu.upload(&keys).expect("upload");
            let vi = gpu.upload(&(0..n as u32).collect::<Vec<_>>()).expect("upload");
            let (mut k0, mut k1, mut v0, mut v1) =
                (gpu.alloc::<u32>(n).unwrap(), gpu.alloc::<u32>(n).unwrap(), gpu.alloc::<u32>(n).unwrap(), gpu.alloc::<u32>(n).unwrap());
            let mut want = keys.clone();
            want.sort_unstable();
            for what in ["keys", "pairs"] {
                if case.as_ref().is_some_and(|c| c.0 != what) {
                    continue;
                }
                let mut kb = DoubleBuffer::new(DeviceViewMut::of(&mut k0), DeviceViewMut::of(&mut k1)).unwrap();
                let mut vb = DoubleBuffer::new(DeviceViewMut::of(&mut v0), DeviceViewMut::of(&mut v1)).unwrap();
                let ms = timer
                    .median_ms(warmup, reps, || {
                        let job = Sort::keys_from(DeviceView::of(&ki), &mut kb).bits(0..bits);
                        if what == "pairs" {
                            sort.sort(job.first_from(DeviceView::of(&vi), &mut vb))
                        } else {
                            sort.sort(job)
                        }
                    })
                    .expect("timed");
                let got = gpu.download(&kb.current()).expect("download");
                assert!(got == want, "{what} {bits}-bit 2^{log_n}: not sorted");
                if what == "pairs" {
                    let v = gpu.download(&vb.current()).expect("download");
                    assert!(v.iter().zip(&got).all(|(&i, &k)| keys[i as usize] == k), "{what}: payload does not follow the keys");
                }
                println!("{what},{bits},{n},{ms:.4},{}", sort.passes(0..bits).0);
            }
        }
    }
}
