//! `cargo bench -p gpu-transpose`: every GPU algorithm on the seed papers' suite
//! ([`sptrans_report::measure::paper_suite`]), criterion timing with GPU events; then the summary
//! tables of `sptrans bench` ([`sptrans_report::measure::tables`]; median of 20 timed runs each,
//! same process): time per algorithm, speedup over the serial twin and over cuSPARSE, effective
//! bandwidth (16 B per nonzero for u32 + f32, plus the pointers:
//! [`sptrans_report::measure::bytes_moved`]) with its fraction of the measured copy bandwidth,
//! workspace bytes; then the overlap of two plans on two streams. `SPTRANS_BENCH_SUITE=small`
//! runs the small suite, `SPTRANS_BENCH_SUITE=streams` the two-stream measurement alone;
//! `SPTRANS_BENCH_PARTS=1` adds a sweep of ScanTrans's partition count, `SPTRANS_BENCH_RADIX=1` one of
//! RadixTrans's digit width.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gpu_runtime::{Gpu, GpuTimer};
use gpu_transpose::{Algorithm, Transposer};
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use sptrans_report::measure::{bytes_moved, paper_suite, small_suite, time_cusparse, time_gpu, time_serial};
use sptrans_report::{tables, Record, Target};

const GPU_ALGOS: [Algorithm; 5] = [Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::RadixTrans, Algorithm::SymTrans, Algorithm::CooChain];

fn bench(c: &mut Criterion) {
    let gpu = match Gpu::first() {
        Ok(g) => g,
        Err(e) => return eprintln!("gpu-transpose bench skipped: {e}"),
    };
    let copy = gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20).unwrap_or(f64::NAN);
    println!("device: {}; device-to-device copy: {copy:.0} GB/s (read + write)", gpu.props().name);
    let timer = GpuTimer::new(&gpu).expect("events");
    let mut t = Transposer::new(&gpu).expect("kernels");
    let mut peer = gpu_transpose::baselines::CuSparseTranspose::new(&gpu);
    match peer.as_ref().map(|c| c.version()) {
        Ok(Ok(v)) => println!("cuSPARSE {v} from {}", gpu_transpose::cusparse_library().unwrap_or("?")),
        Ok(Err(e)) => println!("{e}"),
        Err(e) => println!("{e}"),
    }
    if std::env::var("SPTRANS_BENCH_SUITE").as_deref() == Ok("streams") {
        return streams_overlap(&gpu);
    }
    let suite = if std::env::var("SPTRANS_BENCH_SUITE").as_deref() == Ok("small") { small_suite() } else { paper_suite() };
    let sweep = std::env::var("SPTRANS_BENCH_PARTS").is_ok();
    let mut records = Vec::new();
    for sm in suite {
        let a = (sm.build)().expect("generate");
        let (m, n, nnz) = (a.rows(), a.cols(), a.nnz());
        let bytes = bytes_moved(m, n, nnz, 4);
        let da = DeviceCsr::upload(&gpu, &a).expect("upload");
        let mut out = Some(t.alloc_output(&da).expect("output buffers"));
        let want = a.transpose();
        let mut group = c.benchmark_group(format!("cuda/transpose/{}", sm.name));
        group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
        group.throughput(Throughput::Bytes(bytes));
        let record = |algo, result, workspace| Record { matrix: sm.name.clone(), shape: (m, n, nnz), algo, result, workspace, checked: true };
        for algo in GPU_ALGOS {
            let parts = out.take().unwrap_or_else(|| t.alloc_output(&da).expect("output buffers"));
            let res = match t.transpose_into(algo, &da, parts) {
                Ok(r) => r,
                Err(e) => {
                    println!("{}: {algo}: {e}", sm.name);
                    records.push(Record { checked: false, ..record(Target::Ours(algo), Err(e.to_string()), None) });
                    continue;
                }
            };
            assert_eq!(res.download(&gpu).expect("download"), want, "{}: {algo} differs from the twin", sm.name);
            out = Some(res.into_parts());
            group.bench_function(BenchmarkId::from_parameter(algo.name()), |b| {
                b.iter_custom(|iters| timer.time_iters(iters, || rerun(&mut t, algo, &da, &mut out)).expect("timed transpose"))
            });
            let (st, back) = time_gpu(&mut t, algo, &da, out.take().expect("output buffers"), 2, 20).expect("timed");
            out = Some(back);
            records.push(record(Target::Ours(algo), Ok(st), t.workspace_bytes(algo, m, n, nnz, 4).ok()));
        }
        if let Ok(cs) = peer.as_mut() {
            // The peer, checked then timed the same way.
            let parts = out.take().unwrap_or_else(|| t.alloc_output(&da).expect("output buffers"));
            match cs.transpose_into(&da, parts) {
                Ok(res) if res.download(&gpu).expect("download") == want => {
                    let (st, back) = time_cusparse(cs, &da, res.into_parts(), 2, 20).expect("timed");
                    out = Some(back);
                    records.push(record(Target::CuSparse, Ok(st), cs.workspace_bytes(m, n, nnz, 4).ok()));
                }
                Ok(res) => {
                    out = Some(res.into_parts());
                    records.push(Record { checked: false, ..record(Target::CuSparse, Err("cuSPARSE differs from the twin".into()), None) });
                }
                Err(e) => records.push(Record { checked: false, ..record(Target::CuSparse, Err(e.to_string()), None) }),
            }
        }
        group.finish();
        if sweep {
            for parts in [64u64, 256, 1024, 4096, 16384, 33792, 65536] {
                if (parts + 1) * n > 1 << 30 || parts > nnz {
                    continue;
                }
                t.set_scan_parts(Some(parts));
                let (st, back) = time_gpu(&mut t, Algorithm::ScanTrans, &da, out.take().expect("output buffers"), 1, 10).expect("timed");
                out = Some(back);
                println!("parts sweep: {} parts {parts}: {:.3} ms", sm.name, st.median_ms);
            }
            t.set_scan_parts(None);
            println!("parts sweep: {} default parts {}", sm.name, t.scan_parts_for(nnz, n));
        }
        if std::env::var("SPTRANS_BENCH_RADIX").is_ok() {
            for bits in 4..=gpu_radix::MAX_BITS {
                t.set_radix_bits(Some(bits));
                let (st, back) = time_gpu(&mut t, Algorithm::RadixTrans, &da, out.take().expect("output buffers"), 1, 10).expect("timed");
                out = Some(back);
                println!(
                    "radix sweep: {} max bits {bits} ({:?} passes/bits): {:.3} ms",
                    sm.name,
                    gpu_radix::passes(gpu_radix::bits_below(n), bits),
                    st.median_ms
                );
            }
            t.set_radix_bits(None);
        }
        records.push(record(Target::Ours(Algorithm::Serial), Ok(time_serial(&a, if nnz > 20_000_000 { 1 } else { 3 })), Some(0)));
    }
    let algos: Vec<Target> = std::iter::once(Algorithm::Serial).chain(GPU_ALGOS).map(Target::Ours).chain([Target::CuSparse]).collect();
    print!("{}", tables(&records, &algos, Some(copy), 4));
    streams_overlap(&gpu);
}

/// Two plans on two streams of one device: the same pair of transpositions enqueued on one
/// stream (one after the other) and on two (each on its own), timed by the host around
/// "enqueue both, wait for both" (median of 30); the overlap is the time saved over the smaller
/// of the two jobs alone.
fn streams_overlap(gpu: &Gpu) {
    let Ok(g2) = gpu.fork() else { return println!("streams: no second stream") };
    println!("\nTwo streams (median of 30, host clock around enqueue-both + wait-both):");
    println!("| algorithm | nnz per job | one job | both on one stream | both on two streams | overlap |");
    println!("|---|---|---|---|---|---|");
    for &nnz in &[20_000u64, 200_000, 2_000_000] {
        let a = sptrans_matrix::generate::uniform::<f32>(nnz / 10, nnz / 10, nnz, 1).expect("generate");
        for algo in [Algorithm::RadixTrans, Algorithm::ScanTrans] {
            let da = DeviceCsr::upload(gpu, &a).expect("upload");
            let db = DeviceCsr::upload(&g2, &a).expect("upload");
            let (mut t1, mut t1b, mut t2) =
                (Transposer::new(gpu).expect("plan"), Transposer::new(gpu).expect("plan"), Transposer::new(&g2).expect("plan"));
            let mut o1 = Some(t1.alloc_output(&da).expect("out"));
            let mut o1b = Some(t1b.alloc_output(&da).expect("out"));
            let mut o2 = Some(t2.alloc_output(&db).expect("out"));
            let time = |f: &mut dyn FnMut()| {
                f();
                let mut ms: Vec<f64> = (0..30)
                    .map(|_| {
                        let s = std::time::Instant::now();
                        f();
                        s.elapsed().as_secs_f64() * 1e3
                    })
                    .collect();
                ms.sort_by(f64::total_cmp);
                ms[15]
            };
            let one = time(&mut || {
                rerun(&mut t1, algo, &da, &mut o1).expect("run");
                gpu.synchronize().expect("sync")
            });
            let same = time(&mut || {
                rerun(&mut t1, algo, &da, &mut o1).expect("run");
                rerun(&mut t1b, algo, &da, &mut o1b).expect("run");
                gpu.synchronize().expect("sync")
            });
            let two = time(&mut || {
                rerun(&mut t1, algo, &da, &mut o1).expect("run");
                rerun(&mut t2, algo, &db, &mut o2).expect("run");
                gpu.synchronize().expect("sync");
                g2.synchronize().expect("sync")
            });
            println!("| {algo} | {nnz} | {one:.3} ms | {same:.3} ms | {two:.3} ms | {:.0}% |", 100.0 * (same - two) / one);
        }
    }
}

/// One more transposition into the kept output buffers.
fn rerun(t: &mut Transposer, algo: Algorithm, a: &DeviceCsr<f32>, out: &mut Option<DeviceCsrParts<f32>>) -> Result<(), gpu_transpose::Error> {
    let parts = match out.take() {
        Some(p) => p,
        None => t.alloc_output(a)?,
    };
    *out = Some(t.transpose_into(algo, a, parts)?.into_parts());
    Ok(())
}

criterion_group!(benches, bench);
criterion_main!(benches);
