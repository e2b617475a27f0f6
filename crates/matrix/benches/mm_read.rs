//! `cargo bench -p sptrans-matrix`: single-threaded Matrix Market reading of a generated ~100 MB
//! file (1M x 1M, 4M real entries), ours against the `sprs` crate's reader in one criterion
//! group. Throughput in bytes of file per second.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sptrans_matrix::{generate, mm};

fn bench(c: &mut Criterion) {
    let path = std::env::temp_dir().join("sptrans-bench-100mb.mtx");
    if !path.exists() {
        let a = generate::uniform::<f64>(1_000_000, 1_000_000, 4_000_000, 42).expect("generate");
        let f = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
        mm::write_csr(f, &a).expect("write");
    }
    let bytes = std::fs::metadata(&path).expect("stat").len();
    println!("file: {} ({:.1} MB)", path.display(), bytes as f64 / 1e6);
    let mut g = c.benchmark_group("mm-read-100MB");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("sptrans-matrix", |b| b.iter(|| mm::read_coo::<f64>(&path).expect("read").nnz()));
    g.bench_function("sprs", |b| b.iter(|| sprs::io::read_matrix_market::<f64, usize, _>(&path).expect("read").nnz()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
