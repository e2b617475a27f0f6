//! Distributed transpose scaling over the GPUs present (1, 2, 4, ... ranks of one process), f32
//! values, against the one-GPU transpose (`Auto`) of the same matrix and NCCL's own all-to-all
//! of the same bytes, timed in the same run. Without a GPU or NCCL it says so and stops.
//!
//! `SPTRANS_DIST_CHECK=1` checks each distributed result on the host by fingerprints (no twin:
//! for matrices past host-twin sizes); `SPTRANS_DIST_MIN_GPUS` skips smaller GPU counts (a matrix
//! that only fits on several); the one-GPU column is NaN when the matrix does not fit one GPU.
//!
//! `SPTRANS_DIST_NNZ` (default 2^28) nonzeros, `SPTRANS_DIST_ROWS` rows and columns (default
//! nnz / 16), uniform columns (hashed, sorted within each row); or the Matrix Market file
//! `SPTRANS_DIST_MTX` (values read as f32); or, with `SPTRANS_DIST_KIND=text`, the bag of words
//! of the SVD's dist bench (`generate::text_hashed`, seed 7: `SPTRANS_DIST_DOCS` ×
//! `SPTRANS_DIST_TERMS`, `SPTRANS_DIST_PER_DOC` a row); `SPTRANS_DIST_CSV` writes the
//! table as CSV. Median of `SPTRANS_DIST_RUNS` (default 5) runs after one warm-up.
//! `SPTRANS_DIST_CHUNKS` sets the exchange's chunks (`DistTransposer::set_chunks`).
use gpu_dist::Comms;
use gpu_runtime::cudarc::driver::DevicePtr;
use gpu_transpose::dist::DistTransposer;
use gpu_transpose::Algorithm;
use sptrans_matrix::dist::DistCsr;
use sptrans_matrix::Csr;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// `m × m` with `nnz` nonzeros, rows of equal length (±1, the 64-bit test matrix's `gen_ptr`),
/// columns hashed by SplitMix's finalizer (`mix_a`) and sorted in each row.
fn matrix(m: u64, nnz: u64) -> Csr<u32, f32> {
    let mix = gpu_transpose::index64::mix_a;
    let ptr: Vec<u32> = (0..=m).map(|r| gpu_transpose::index64::gen_ptr(r, m, nnz) as u32).collect();
    let mut idx = vec![0u32; nnz as usize];
    let vals: Vec<f32> = (0..nnz).map(|k| (mix(k ^ 0x5555) % 1000) as f32 / 7.0).collect();
    let mut rest: &mut [u32] = &mut idx;
    for r in 0..m as usize {
        let (row, tail) = rest.split_at_mut((ptr[r + 1] - ptr[r]) as usize);
        for (t, c) in row.iter_mut().enumerate() {
            *c = (mix(((r as u64) << 20) ^ t as u64 ^ 0x9e37) % m) as u32;
        }
        row.sort_unstable();
        rest = tail;
    }
    Csr::try_new(m, m, ptr, idx, vals).expect("a valid generated matrix")
}

/// [`gpu_transpose::index64::Fingerprint`] of a host CSR's entries with their values
/// (`rows_major`: `(row, column)`, else `(column, row)`, read as the transpose's CSC), on every
/// core: the check of a transpose too large for the host twin.
fn fingerprint(a: &Csr<u32, f32>, rows_major: bool) -> gpu_transpose::index64::Fingerprint {
    gpu_transpose::index64::Fingerprint::of_parts(a.ptr(), a.idx(), |k| (a.vals()[k].to_bits() as u64) << 32, rows_major)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// NCCL all-to-all of `per_peer` bytes between every pair of ranks (grouped sends and receives):
/// seconds, median of `runs`.
fn all_to_all(comms: &Comms, per_peer: usize, runs: usize) -> f64 {
    let g = comms.len();
    let bufs: Vec<_> = match comms
        .gpus()
        .iter()
        .map(|gpu| Ok((gpu.alloc_zeros::<u8>(per_peer * g)?, gpu.alloc_zeros::<u8>(per_peer * g)?)))
        .collect::<gpu_runtime::Result<Vec<_>>>()
    {
        Ok(b) => b,
        Err(e) => {
            eprintln!("NCCL all-to-all reference not run: {e}");
            return f64::NAN;
        }
    };
    let mut times = Vec::new();
    for run in 0..=runs {
        comms.synchronize().unwrap();
        let t = std::time::Instant::now();
        comms
            .group(|c| {
                for (s, (send, recv)) in bufs.iter().enumerate() {
                    let stream = comms.gpus()[s].stream();
                    let (sa, _g0) = send.device_ptr(stream);
                    let (ra, _g1) = recv.device_ptr(stream);
                    for p in (0..g).filter(|&p| p != s) {
                        // SAFETY: per_peer bytes at offset p · per_peer of buffers of g · per_peer.
                        unsafe {
                            c.send_bytes(s, sa + (p * per_peer) as u64, per_peer, p)?;
                            c.recv_bytes(s, ra + (p * per_peer) as u64, per_peer, p)?;
                        }
                    }
                }
                Ok(())
            })
            .unwrap();
        comms.synchronize().unwrap();
        if run > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
    }
    median(times)
}

fn main() {
    let present = gpu_runtime::device_count().unwrap_or(0);
    if present == 0 {
        eprintln!("SKIPPED: no GPU");
        return;
    }
    let nnz = env("SPTRANS_DIST_NNZ", 1 << 28);
    let m = env("SPTRANS_DIST_ROWS", (nnz / 16).max(1));
    let runs = env("SPTRANS_DIST_RUNS", 5) as usize;
    let t = std::time::Instant::now();
    let a = match std::env::var_os("SPTRANS_DIST_MTX") {
        Some(path) => {
            let a = sptrans_matrix::mm::read_csr::<f32>(&path).expect("reading SPTRANS_DIST_MTX");
            eprintln!(
                "matrix {}: {} x {}, {} nonzeros (f32), read in {:.1} s",
                path.to_string_lossy(),
                a.rows(),
                a.cols(),
                a.nnz(),
                t.elapsed().as_secs_f64()
            );
            a
        }
        None if std::env::var("SPTRANS_DIST_KIND").as_deref() == Ok("text") => {
            let (docs, terms, per_doc) = (env("SPTRANS_DIST_DOCS", 1 << 22), env("SPTRANS_DIST_TERMS", 1 << 20), env("SPTRANS_DIST_PER_DOC", 32));
            let a = sptrans_matrix::generate::text_hashed::<f32>(docs, terms, per_doc, 7).expect("generating the matrix");
            eprintln!(
                "matrix bag of words {docs} x {terms}, {per_doc} a row: {} nonzeros (f32), generated in {:.1} s",
                a.nnz(),
                t.elapsed().as_secs_f64()
            );
            a
        }
        None => {
            let a = matrix(m, nnz);
            eprintln!("matrix {m} x {m}, {nnz} nonzeros (f32), generated in {:.1} s", t.elapsed().as_secs_f64());
            a
        }
    };
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu_runtime::Gpu::new(0).unwrap(), 1 << 30, 10).unwrap_or(f64::NAN);
    let mut rows = vec![
        "gpus,one_gpu_ms,dist_ms,speedup,block0_alone_ms,local_ms,cuts_ms,parts_ms,exchange_ms,place_ms,sent_gb_per_rank,exchange_gbs,nccl_a2a_gbs,exchange_share"
            .to_string(),
    ];
    println!("copy bandwidth of GPU 0: {copy:.0} GB/s");
    println!(
        "{:>4} {:>10} {:>10} {:>7}  phases (ms, profiled run)                      {:>9} {:>9} {:>9} {:>6}",
        "gpus", "1 GPU ms", "dist ms", "speedup", "sent GB", "xchg GB/s", "a2a GB/s", "share"
    );
    let min_gpus = env("SPTRANS_DIST_MIN_GPUS", 1) as usize;
    gpu_testkit::for_each_gpu_count(|comms| {
        let count = comms.len();
        if count < min_gpus {
            return;
        }
        let mut dt = DistTransposer::new(comms).unwrap();
        if let Ok(c) = std::env::var("SPTRANS_DIST_CHUNKS") {
            dt.set_chunks(c.parse().ok());
        }
        let d = DistCsr::scatter(comms.gpus(), &a).unwrap();
        // The one-GPU transpose of the whole matrix, on rank 0 (uploaded once).
        // Timed as the distributed one: no synchronization between one call's output being
        // dropped and the next call (the pool's memory is reused either way).
        // NaN (said so) when it does not fit one GPU.
        let mut time_one = |m: &sptrans_matrix::device::DeviceCsr<f32>| -> f64 {
            let tp = dt.rank(0).unwrap();
            let mut times = Vec::new();
            for run in 0..=runs {
                let t = std::time::Instant::now();
                let out = match tp.transpose_new(Algorithm::Auto, m) {
                    Ok(out) => out,
                    Err(e) => {
                        eprintln!("one GPU: {e}");
                        return f64::NAN;
                    }
                };
                comms.gpus()[0].synchronize().unwrap();
                if run > 0 {
                    times.push(t.elapsed().as_secs_f64());
                }
                drop(out);
            }
            median(times)
        };
        let one = match sptrans_matrix::device::DeviceCsr::upload(&comms.gpus()[0], &a) {
            Ok(whole) => time_one(&whole),
            Err(e) => {
                eprintln!("one GPU: the whole matrix does not fit ({e})");
                f64::NAN
            }
        };
        // Rank 0's block alone on its GPU: the floor of the local phase.
        let block0 = time_one(&d.blocks()[0]);
        let mut times = Vec::new();
        for run in 0..=runs {
            let t = std::time::Instant::now();
            let (out, _) = dt.transpose(comms, Algorithm::Auto, &d).unwrap();
            if run > 0 {
                times.push(t.elapsed().as_secs_f64());
            }
            drop(out);
        }
        let dist = median(times);
        dt.set_profile(true);
        let (t, ex) = dt.transpose(comms, Algorithm::Auto, &d).unwrap();
        dt.set_profile(false);
        if std::env::var("SPTRANS_DIST_CHECK").as_deref() == Ok("1") {
            // Too large for a host twin: the input's fingerprint by rows must equal the
            // output's by columns, every column's rows ascending.
            let at = t.gather(comms.gpus()).unwrap();
            let (fa, fo) = (fingerprint(&a, true), fingerprint(&at, false));
            let ok = fa.a == fo.a && fa.b == fo.b && fo.unsorted == 0 && at.nnz() == a.nnz() && (at.rows(), at.cols()) == (a.cols(), a.rows());
            println!(
                "check on {count} GPUs: {} ({} nonzeros; fingerprint of the input by rows {:016x}{:016x}, of the output by columns {:016x}{:016x}; {} rows out of order)",
                if ok { "the transpose is correct" } else { "WRONG" },
                at.nnz(),
                fa.a,
                fa.b,
                fo.a,
                fo.b,
                fo.unsorted
            );
            assert!(ok, "the distributed transpose is wrong");
        }
        drop(t);
        // A phase's seconds; "place" sums its parts ("place: ...").
        let ph = |w: &str| {
            ex.phases.iter().filter(|p| p.0 == w || p.0.strip_prefix(w).is_some_and(|r| r.starts_with(':'))).map(|p| p.1).sum::<f64>() + 0.0
        };
        let sent = ex.sent_bytes.iter().copied().max().unwrap_or(0) as f64;
        let (xchg, a2a) = if count > 1 {
            let per_peer = (sent / (count - 1) as f64) as usize;
            let secs = all_to_all(comms, per_peer.max(1), runs);
            (sent / ph("exchange") / 1e9, (per_peer * (count - 1)) as f64 / secs / 1e9)
        } else {
            (f64::NAN, f64::NAN)
        };
        // gpus, 1-GPU ms, dist ms, speedup, the phases' ms, GB sent per rank, exchange and NCCL
        // all-to-all GB/s, and the exchange's share of NCCL's rate.
        let ms = |w: &str| ph(w) * 1e3;
        let v = [
            one * 1e3,
            dist * 1e3,
            one / dist,
            block0 * 1e3,
            ms("local"),
            ms("cuts"),
            ms("parts"),
            ms("exchange"),
            ms("place"),
            sent / 1e9,
            xchg,
            a2a,
            xchg / a2a,
        ];
        println!(
            "{count:>4} {:>10.2} {:>10.2} {:>6.2}x  block 0 alone {:.2}; local {:.2} cuts {:.2} parts {:.2} xchg {:.2} place {:.2}  {:>9.3} {:>9.1} {:>9.1} {:>5.0}%",
            v[0],
            v[1],
            v[2],
            v[3],
            v[4],
            v[5],
            v[6],
            v[7],
            v[8],
            v[9],
            v[10],
            v[11],
            100.0 * v[12]
        );
        let parts: Vec<String> = ex.phases.iter().filter(|p| p.0.starts_with("place:")).map(|p| format!("{} {:.2}", &p.0[7..], p.1 * 1e3)).collect();
        if !parts.is_empty() {
            println!("      place phase (ms): {}", parts.join(", "));
        }
        rows.push(std::iter::once(count.to_string()).chain(v.iter().map(|x| format!("{x:.4}"))).collect::<Vec<_>>().join(","));
        drop(d);
    });
    if let Ok(path) = std::env::var("SPTRANS_DIST_CSV") {
        std::fs::write(&path, rows.join("\n") + "\n").expect("writing the CSV");
        eprintln!("wrote {path}");
    }
}
