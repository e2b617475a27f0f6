//! The transpose past 2³² nonzeros (issue 18's test): a pattern matrix generated on the GPU,
//! transposed by the 64-bit path in chunks, checked two independent ways:
//!
//! 1. every entry: the input's fingerprint by rows equals the output's by columns (two sums of
//!    independent 64-bit hashes of `(row, col)` over all entries), with no column out of order;
//! 2. exactly, on sampled columns: the host scans the whole input (downloaded) for the entries
//!    of `SAMPLES` random columns and compares their rows with the output's, entry by entry.
//!
//! Reports times and device memory: the input, the output, the plan's workspace and the
//! driver's peak use.
//!
//! ```text
//! cargo run --release -p gpu-transpose --example index64_huge -- [NNZ] [ROWS] [COLS] [CHUNK] [SEED]
//! ```
//! Defaults: `NNZ = 2^32 + 4097`, `ROWS = COLS = 2^27`, `CHUNK = 2^30`.
use std::time::Instant;

use gpu_transpose::index64::{self, Fingerprint};
use gpu_transpose::{Algorithm, Gpu, Transposer};

const SAMPLES: usize = 64;

fn arg(i: usize, default: u64) -> u64 {
    std::env::args().nth(i).map_or(default, |s| s.parse().unwrap_or_else(|_| panic!("argument {i} ({s}) is not a number")))
}

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (nnz, m, n, chunk, seed) = (arg(1, (1 << 32) + 4097), arg(2, 1 << 27), arg(3, 1 << 27), arg(4, index64::DEFAULT_CHUNK_NNZ), arg(5, 18));
    let gpu = Gpu::first()?;
    let (free0, total) = gpu.memory_info()?;
    let base = total - free0;
    let mut peak = 0u64;
    let mut used = |gpu: &Gpu| -> Result<(), Box<dyn std::error::Error>> {
        gpu.synchronize()?;
        let (free, _) = gpu.memory_info()?;
        peak = peak.max(total - free - base);
        Ok(())
    };
    println!(
        "{} x {} pattern matrix, nnz = {nnz} (2^32 + {}), chunks of {chunk}; GPU {} with {} ({} in use before)",
        m,
        n,
        nnz as i128 - (1i128 << 32),
        gpu.props().name,
        gib(total),
        gib(base)
    );
    let t0 = Instant::now();
    let a = index64::generate(&gpu, m, n, nnz, seed)?;
    used(&gpu)?;
    println!("generated in {:.3} s: input {}", t0.elapsed().as_secs_f64(), gib(8 * (m + 1) + 4 * nnz));
    let t0 = Instant::now();
    let fa = index64::fingerprint(&gpu, &a, true)?;
    println!("input fingerprint {:016x} {:016x} in {:.3} s", fa.a, fa.b, t0.elapsed().as_secs_f64());
    let mut t = Transposer::new(&gpu)?;
    t.set_chunk_nnz(Some(chunk));
    let ws = t.workspace64_bytes(Algorithm::RadixTrans, m, n, nnz, 0)?;
    let out = t.alloc_output64(&a)?;
    used(&gpu)?;
    let t0 = Instant::now();
    let out = t.transpose64_into(Algorithm::RadixTrans, &a, out)?;
    gpu.synchronize()?;
    let secs = t0.elapsed().as_secs_f64();
    used(&gpu)?;
    println!(
        "transposed in {secs:.3} s (RadixTrans chunks); output {}, workspace {} ({:.2} B/nnz), plan holds {}",
        gib(8 * (n + 1) + 4 * nnz),
        gib(ws),
        ws as f64 / nnz as f64,
        gib(t.allocated_bytes())
    );
    println!("peak device memory of this run: {} (driver: total - free, less the {} in use before)", gib(peak), gib(base));
    let t0 = Instant::now();
    let ft = index64::fingerprint(&gpu, &out, false)?;
    println!("output fingerprint {:016x} {:016x}, {} entries out of order, in {:.3} s", ft.a, ft.b, ft.unsorted, t0.elapsed().as_secs_f64());
    let fp_ok = (ft.a, ft.b, ft.unsorted) == (fa.a, fa.b, 0) && ft != Fingerprint::default();
    // Exact check of sampled columns against a host scan of the whole input.
    let t0 = Instant::now();
    let ptr = gpu.download(a.ptr())?;
    let idx = gpu.download(a.idx())?;
    let mut cols: Vec<u32> = (0..SAMPLES as u64).map(|i| index64::gen_col(i, n, seed ^ 0x5eed)).collect();
    cols.extend([0, (n - 1) as u32]);
    cols.sort_unstable();
    cols.dedup();
    let mut want: Vec<Vec<u32>> = vec![Vec::new(); cols.len()];
    let mut sampled = vec![false; n as usize];
    cols.iter().for_each(|&j| sampled[j as usize] = true);
    for r in 0..m as usize {
        for &j in &idx[ptr[r] as usize..ptr[r + 1] as usize] {
            if !sampled[j as usize] {
                continue;
            }
            if let Ok(s) = cols.binary_search(&j) {
                want[s].push(r as u32);
            }
        }
    }
    drop(idx);
    let optr = gpu.download(out.ptr())?;
    let mut exact_ok = optr[n as usize] == nnz && optr[0] == 0;
    let mut entries = 0usize;
    for (s, &j) in cols.iter().enumerate() {
        let (lo, hi) = (optr[j as usize] as usize, optr[j as usize + 1] as usize);
        let got = gpu.download(&out.idx().slice(lo..hi))?;
        exact_ok &= got == want[s];
        entries += got.len();
    }
    println!(
        "exact check of {} columns ({entries} entries) against a host scan of the input: {} in {:.1} s",
        cols.len(),
        if exact_ok { "equal" } else { "DIFFERENT" },
        t0.elapsed().as_secs_f64()
    );
    println!("result: {}", if fp_ok && exact_ok { "PASS" } else { "FAIL" });
    if fp_ok && exact_ok {
        Ok(())
    } else {
        Err("the 64-bit transpose failed its checks".into())
    }
}
