//! `cargo bench -p gpu-transpose`: every GPU algorithm on the seed papers' suite
//! ([`gpu_transpose::measure::paper_suite`]), criterion timing with GPU events; then a summary
//! table (median of 20 timed runs each, same process): time per algorithm, effective bandwidth
//! (16 B per nonzero for u32 + f32, plus the pointers: [`gpu_transpose::measure::bytes_moved`])
//! and its fraction of the measured copy bandwidth, speedup over the serial twin and over
//! cuSPARSE, workspace bytes. `SPTRANS_BENCH_SUITE=small` runs the small suite;
//! `SPTRANS_BENCH_PARTS=1` adds a sweep of ScanTrans's partition count.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_runtime::{Gpu, GpuTimer};
use gpu_transpose::measure::{bytes_moved, paper_suite, small_suite, time_gpu, time_serial};
use gpu_transpose::{Algorithm, Transposer};
use sptrans_matrix::device::DeviceCsr;

const GPU_ALGOS: [Algorithm; 5] = [Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::RadixTrans, Algorithm::CooChain, Algorithm::CuSparse];

fn bench(c: &mut Criterion) {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("gpu-transpose bench skipped: {e}"),
    };
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20).unwrap_or(f64::NAN);
    println!("device: {}; device-to-device copy: {copy:.0} GB/s (read + write)", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut t = Transposer::new(&gpu).expect("kernels");
    match t.cusparse_version() {
        Ok(v) => println!("cuSPARSE {v} from {}", gpu_transpose::cusparse_library().unwrap_or("?")),
        Err(e) => println!("{e}"),
    }
    let suite = if std::env::var("SPTRANS_BENCH_SUITE").as_deref() == Ok("small") { small_suite() } else { paper_suite() };
    let sweep = std::env::var("SPTRANS_BENCH_PARTS").is_ok();
    let mut rows = Vec::new();
    for sm in suite {
        let a = (sm.build)().expect("generate");
        let (m, n, nnz) = (a.rows(), a.cols(), a.nnz());
        let bytes = bytes_moved(m, n, nnz, 4);
        let da = DeviceCsr::upload(&gpu, &a).expect("upload");
        let mut out = t.transpose_new(Algorithm::MergeTrans, &da).expect("first transpose");
        let want = a.transpose();
        let mut group = c.benchmark_group(format!("cuda/transpose/{}", sm.name));
        group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
        group.throughput(Throughput::Bytes(bytes));
        let mut cells = Vec::new();
        for algo in GPU_ALGOS {
            if let Err(e) = t.transpose(algo, &da, &mut out) {
                println!("{}: {algo}: {e}", sm.name);
                cells.push(None);
                continue;
            }
            assert_eq!(out.download(&gpu).expect("download"), want, "{}: {algo} differs from the twin", sm.name);
            group.bench_function(BenchmarkId::from_parameter(algo.name()), |b| {
                b.iter_custom(|iters| timer.time_iters(iters, || t.transpose(algo, &da, &mut out)).expect("timed transpose"))
            });
            let st = time_gpu(&mut t, algo, &da, &mut out, 2, 20).expect("timed");
            let ws = t.workspace_bytes(algo, m, n, nnz, 4).unwrap_or(0);
            cells.push(Some((st, ws)));
        }
        group.finish();
        if sweep {
            for parts in [64u64, 256, 1024, 4096, 16384, 33792, 65536] {
                if (parts + 1) * n > 1 << 30 || parts > nnz {
                    continue;
                }
                t.set_scan_parts(Some(parts));
                let st = time_gpu(&mut t, Algorithm::ScanTrans, &da, &mut out, 1, 10).expect("timed");
                println!("parts sweep: {} parts {parts}: {:.3} ms", sm.name, st.median_ms);
            }
            t.set_scan_parts(None);
            println!("parts sweep: {} default parts {}", sm.name, t.scan_parts_for(nnz, n));
        }
        if std::env::var("SPTRANS_BENCH_RADIX").is_ok() {
            for bits in 4..=gpu_transpose::RADIX_MAX_BITS {
                t.set_radix_bits(Some(bits));
                let st = time_gpu(&mut t, Algorithm::RadixTrans, &da, &mut out, 1, 10).expect("timed");
                println!("radix sweep: {} max bits {bits} ({:?} passes/bits): {:.3} ms", sm.name, gpu_transpose::radix_passes_max(n, bits), st.median_ms);
            }
            t.set_radix_bits(None);
        }
        let serial = time_serial(&a, if nnz > 20_000_000 { 1 } else { 3 });
        rows.push((sm.name.clone(), m, n, nnz, bytes, serial, cells));
    }
    println!("\n| matrix | nnz | serial ms | {} |", GPU_ALGOS.iter().map(|a| format!("{a} ms (GB/s, % copy)")).collect::<Vec<_>>().join(" | "));
    println!("|---|---|---|{}", "---|".repeat(GPU_ALGOS.len()));
    for (name, _m, _n, nnz, bytes, serial, cells) in &rows {
        let cols: Vec<String> = cells
            .iter()
            .map(|c| match c {
                Some((st, _)) => {
                    let gbs = *bytes as f64 / (st.median_ms * 1e-3) / 1e9;
                    format!("{:.3} [{:.3}–{:.3}] ({gbs:.0}, {:.0}%)", st.median_ms, st.min_ms, st.max_ms, 100.0 * gbs / copy)
                }
                None => "n/a".into(),
            })
            .collect();
        println!("| {name} | {nnz} | {:.1} | {} |", serial.median_ms, cols.join(" | "));
    }
    println!("\n| matrix | {} | workspace MB ({}) |", GPU_ALGOS.iter().map(|a| format!("{a} vs serial, vs cuSPARSE")).collect::<Vec<_>>().join(" | "), GPU_ALGOS.iter().map(|a| a.name()).collect::<Vec<_>>().join(" / "));
    println!("|---|{}---|", "---|".repeat(GPU_ALGOS.len()));
    for (name, _m, _n, _nnz, _bytes, serial, cells) in &rows {
        let cus = cells[4].as_ref().map(|c| c.0.median_ms).unwrap_or(f64::NAN);
        let cols: Vec<String> = cells.iter().map(|c| c.as_ref().map_or("n/a".into(), |(st, _)| format!("{:.1}×, {:.2}×", serial.median_ms / st.median_ms, cus / st.median_ms))).collect();
        let ws: Vec<String> = cells.iter().map(|c| c.as_ref().map_or("n/a".into(), |(_, w)| format!("{:.0}", *w as f64 / 1e6))).collect();
        println!("| {name} | {} | {} |", cols.join(" | "), ws.join(" / "));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
