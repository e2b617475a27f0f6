//! Times `sort_pairs` (u32 keys, u32 values, in place) of 2^24 and 2^26 random pairs with 24- and
//! 32-bit keys, copy of the input subtracted, and checks the 2^24 results against a host stable
//! sort. `cargo run --release -p gpu-radix --example radix_time [BITS LOG2_N]` (one case, e.g.
//! under ncu).
use gpu_radix::RadixSort;
use gpu_runtime::{Gpu, GpuTimer};
use rand::{rngs::StdRng, Rng, SeedableRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Gpu::first()?;
    let timer = GpuTimer::new(&gpu)?;
    let mut sort = RadixSort::new(&gpu)?;
    let mut r = StdRng::seed_from_u64(5);
    // `radix_time BITS LOG2_N`: one case (e.g. under ncu).
    let args: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (bit_cases, n_cases) = if let [b, l] = args[..] { (vec![b], vec![l]) } else { (vec![24u32, 32], vec![24u32, 26]) };
    for &bits in &bit_cases {
        for &log_n in &n_cases {
            let n = 1usize << log_n;
            let keys: Vec<u32> = (0..n).map(|_| if bits == 32 { r.random() } else { r.random_range(0..1u32 << bits) }).collect();
            let vals: Vec<u32> = (0..n as u32).collect();
            let (dk, dv) = (gpu.upload(&keys)?, gpu.upload(&vals)?);
            let (mut k, mut v) = (gpu.alloc::<u32>(n)?, gpu.alloc::<u32>(n)?);
            let restore = |k: &mut _, v: &mut _| -> gpu_radix::Result<()> {
                gpu.stream().memcpy_dtod(&dk, k).map_err(gpu_runtime::Error::driver("copy"))?;
                gpu.stream().memcpy_dtod(&dv, v).map_err(gpu_runtime::Error::driver("copy"))?;
                Ok(())
            };
            restore(&mut k, &mut v)?;
            sort.sort_pairs(&mut k, &mut v, bits)?;
            if log_n == 24 {
                let (gk, gv) = (gpu.download(&k)?, gpu.download(&v)?);
                let mut want: Vec<(u32, u32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
                want.sort_by_key(|p| p.0);
                let ok = want.iter().zip(gk.iter().zip(gv.iter())).all(|(a, (b, c))| a.0 == *b && a.1 == *c);
                if !ok {
                    return Err(format!("2^{log_n} {bits}-bit pairs differ from the host stable sort").into());
                }
            }
            let reps = 10;
            let mut best_both = f64::MAX;
            let mut best_copy = f64::MAX;
            for _ in 0..reps {
                timer.start()?;
                restore(&mut k, &mut v)?;
                sort.sort_pairs(&mut k, &mut v, bits)?;
                best_both = best_both.min(timer.stop_ms()?);
                timer.start()?;
                restore(&mut k, &mut v)?;
                best_copy = best_copy.min(timer.stop_ms()?);
            }
            println!("radix {bits}-bit n=2^{log_n}: {:.3} ms (copy subtracted; {:.3} with it)", best_both - best_copy, best_both);
        }
    }
    Ok(())
}
