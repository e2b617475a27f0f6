//! What a caller with PyTorch-style `int64` CSR arrays pays (issue 18's "64-bit pointers and
//! indices" target): per suite matrix, RadixTrans on the 32-bit `DeviceCsr`, against
//! `DeviceCsr64::from_signed_parts` (an `i64` pointer and `i64` column indices narrowed to `u32`
//! and validated on the GPU: one synchronization) followed by the 64-bit transpose. Median of
//! `REPS` runs each, wall clock after a synchronization (the validation reads its verdict
//! back, so GPU events cannot time it alone); every result checked against the twin once.
//!
//! ```text
//! cargo run --release -p gpu-transpose --example index64_signed -- [REPS]
//! ```
use std::time::Instant;

use gpu_transpose::{serial, Algorithm, Gpu, Transposer};
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::device64::DeviceCsr64;
use sptrans_matrix::Csr;
use sptrans_report::measure::{paper_suite, Stats};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let reps: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let gpu = Gpu::first()?;
    let mut t = Transposer::new(&gpu)?;
    println!("| matrix | 32-bit, ms | i64 arrays → DeviceCsr64, ms | 64-bit transpose, ms | (convert + 64) / 32 |");
    println!("|---|---|---|---|---|");
    let mut ratios = Vec::new();
    for sm in paper_suite() {
        let a = (sm.build)()?;
        let da = DeviceCsr::upload(&gpu, &a)?;
        let (p64, i64s): (Vec<i64>, Vec<i64>) = (a.ptr().iter().map(|&x| x as i64).collect(), a.idx().iter().map(|&x| x as i64).collect());
        let (dp, di) = (gpu.upload(&p64)?, gpu.upload(&i64s)?);
        let want = serial::transpose64(&Csr::try_from_indices(a.rows(), a.cols(), a.ptr(), a.idx(), a.vals().to_vec())?);
        let mut out = t.alloc_output(&da)?;
        let mut out64 = None;
        let mut vals = Some(gpu.upload(a.vals())?);
        let (mut t32, mut tconv, mut t64) = (Vec::new(), Vec::new(), Vec::new());
        for rep in 0..=reps {
            gpu.synchronize()?;
            let s = Instant::now();
            out = t.transpose_into(Algorithm::RadixTrans, &da, out)?.into_parts();
            gpu.synchronize()?;
            let e32 = s.elapsed().as_secs_f64() * 1e3;
            let s = Instant::now();
            let d64 = DeviceCsr64::from_signed_parts(&gpu, a.rows(), a.cols(), &dp, &di, vals.take())?;
            let econv = s.elapsed().as_secs_f64() * 1e3;
            let o = match out64.take() {
                Some(o) => o,
                None => t.alloc_output64(&d64)?,
            };
            gpu.synchronize()?;
            let s = Instant::now();
            let r = t.transpose64_into(Algorithm::RadixTrans, &d64, o)?;
            gpu.synchronize()?;
            let e64 = s.elapsed().as_secs_f64() * 1e3;
            if rep == 0 {
                if !r.download(&gpu)?.same_bits(&want) {
                    return Err(format!("{}: the 64-bit transpose differs from the twin", sm.name).into());
                }
            } else {
                t32.push(e32);
                tconv.push(econv);
                t64.push(e64);
            }
            out64 = Some(r.into_parts());
            vals = d64.into_parts().vals;
        }
        let [m32, mc, m64] = [t32, tconv, t64].map(|t| Stats::from_times(t).median_ms);
        ratios.push((mc + m64) / m32);
        println!("| {} | {m32:.3} | {mc:.3} | {m64:.3} | {:.2} |", sm.name, (mc + m64) / m32);
    }
    let g = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
    println!("geomean (convert + 64-bit) / 32-bit: {g:.2}");
    Ok(())
}
