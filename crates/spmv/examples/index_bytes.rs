//! Bytes a nonzero on the realistic SpMV suite (issue 37's "compressed column indices"), on the
//! host, no GPU: the suite's generators with the arguments of `benches/sell-device-run.sh`, f64,
//! and for each matrix how much of it the candidate compressions reach:
//!
//! - CSR as cuSPARSE reads it: 8 + 4 bytes a nonzero and 4 a row.
//! - **near**: the nonzeros whose column lies within ±32,767 of the row's diagonal (the row
//!   scaled to the column count for rectangular matrices): a signed 16-bit offset each.
//! - **low**: the nonzeros of columns below 65,536: a 16-bit column each.
//! - **row span**: rows whose columns span less than 65,536 (a 32-bit base a row, 16-bit offsets).
//! - **chunk span**: runs of 32 consecutive nonzeros (a warp's load, CSR order) spanning less
//!   than 65,536 columns (a base a chunk).
//! - **values**: distinct values (a dictionary of at most 256 or 65,536 makes each value a 1- or
//!   2-byte index).
//!
//! "Split" is the byte count of a two-part product: the near (or the low, whichever is larger)
//! part with 16-bit columns, the rest with 32-bit ones, values by index where a dictionary fits
//! (else 8 bytes), each part's pointer and `y` counted. The table is Markdown on standard output.
//!
//! ```text
//! cargo run --release -p gpu-spmv --example index_bytes            # the whole suite
//! cargo run --release -p gpu-spmv --example index_bytes -- graph   # names containing "graph"
//! cargo run --release -p gpu-spmv --example index_bytes -- ../shared/matrices/real/*.mtx
//! ```
//!
//! Arguments that are files are read as Matrix Market (values as f64; a pattern's as 1) and
//! reported instead of the suite; a file that cannot be read as real values (complex) is named
//! on standard error and skipped.
use std::collections::HashSet;

use sptrans_matrix::generate::{Order, Spec};
use sptrans_matrix::Csr;

struct Counts {
    near: u64,
    low: u64,
    row_span_nnz: u64,
    chunk_span_nnz: u64,
    distinct: usize,
}

fn counts(a: &Csr<u32, f64>) -> Counts {
    let (m, n) = (a.rows(), a.cols());
    let (ptr, idx, vals) = (a.ptr(), a.idx(), a.vals());
    let (mut near, mut low, mut row_span_nnz) = (0u64, 0u64, 0u64);
    for i in 0..m as usize {
        let (b, e) = (ptr[i] as usize, ptr[i + 1] as usize);
        // The row's diagonal, scaled for rectangular matrices.
        let diag = (i as u128 * n as u128 / m.max(1) as u128) as i64;
        for &c in &idx[b..e] {
            near += u64::from((c as i64 - diag).abs() <= 32_767);
            low += u64::from(c < 65_536);
        }
        if e > b {
            let (lo, hi) = idx[b..e].iter().fold((u32::MAX, 0), |(lo, hi), &c| (lo.min(c), hi.max(c)));
            if hi - lo < 65_536 {
                row_span_nnz += (e - b) as u64;
            }
        }
    }
    let chunk_span_nnz = idx
        .chunks(32)
        .filter(|c| {
            let (lo, hi) = c.iter().fold((u32::MAX, 0), |(lo, hi), &x| (lo.min(x), hi.max(x)));
            hi - lo < 65_536
        })
        .map(|c| c.len() as u64)
        .sum();
    let mut seen = HashSet::new();
    for v in vals {
        seen.insert(v.to_bits());
        if seen.len() > 65_536 {
            break;
        }
    }
    Counts { near, low, row_span_nnz, chunk_span_nnz, distinct: seen.len() }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let files: Vec<&String> = args.iter().filter(|a| std::path::Path::new(a).is_file()).collect();
    if !files.is_empty() {
        println!("| matrix | nnz | a row | CSR B/nnz | near | low | row span | chunk span | distinct values | split B/nnz | split ÷ CSR |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|");
        for f in files {
            let name = std::path::Path::new(f).file_name().map_or(f.clone(), |n| n.to_string_lossy().into_owned());
            match sptrans_matrix::mm::read_csr::<f64>(f) {
                Ok(a) => row(&name, &a),
                Err(e) => eprintln!("{name}: {e}"),
            }
        }
        return;
    }
    let filter: Option<&String> = args.first();
    let suite: Vec<(&str, Spec, u64)> = vec![
        ("stencil27_100_natural", Spec::Stencil { k: 100, points: 27, order: Order::Natural }, 1),
        ("stencil27_100_random", Spec::Stencil { k: 100, points: 27, order: Order::Random }, 2),
        ("stencil27_100_rcm", Spec::Stencil { k: 100, points: 27, order: Order::Rcm }, 1),
        ("stencil7_150_natural", Spec::Stencil { k: 150, points: 7, order: Order::Natural }, 1),
        ("graph_2M_deg8", Spec::Graph { n: 2_000_000, degree: 8, community: 1000 }, 3),
        ("circuit_3M", Spec::Circuit { n: 3_000_000, rails: 4 }, 4),
        ("text_1M_200k", Spec::Text { docs: 1_000_000, terms: 200_000, per_doc: 20 }, 5),
        ("lp_1M_1p2M", Spec::Lp { m: 1_000_000, n: 1_200_000, blocks: 100, per_row: 12 }, 6),
        ("mesh_100_natural", Spec::Mesh { k: 100, order: Order::Natural }, 7),
        ("mesh_100_rcm", Spec::Mesh { k: 100, order: Order::Rcm }, 7),
        ("kkt_1M_500k", Spec::Kkt { n: 1_000_000, m: 500_000, per_row: 8 }, 8),
        ("skyline_1M_10", Spec::Skyline { n: 1_000_000, width: 10 }, 9),
    ];
    println!("| matrix | nnz | a row | CSR B/nnz | near | low | row span | chunk span | distinct values | split B/nnz | split ÷ CSR |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, spec, seed) in suite {
        if filter.is_some_and(|f| !name.contains(f.as_str())) {
            continue;
        }
        let a: Csr<u32, f64> = match spec.build(seed) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("{name}: {e}");
                continue;
            }
        };
        row(name, &a);
    }
}

/// The table's row of `a`.
fn row(name: &str, a: &Csr<u32, f64>) {
    let (m, nnz) = (a.rows() as f64, (a.nnz() as f64).max(1.0));
    let c = counts(a);
    let csr = 12.0 + 4.0 * (m + 1.0) / nnz;
    // Values: 1 or 2 bytes by a dictionary when the distinct ones fit, else 8.
    let vb = if c.distinct <= 256 {
        1.0
    } else if c.distinct <= 65_536 {
        2.0
    } else {
        8.0
    };
    // Two parts, each with its pointer (4 a row) and its y traffic (8 read + 8 written a
    // row for the second part, which accumulates); the 16-bit part by the better rule, near
    // the diagonal or low columns.
    let part = |fit: u64| {
        let (fit, rest) = (fit as f64, nnz - fit as f64);
        (fit * (2.0 + vb) + rest * (4.0 + vb) + 4.0 * (m + 1.0) + if rest > 0.0 { 4.0 * (m + 1.0) + 16.0 * m } else { 0.0 }) / nnz
    };
    let split = part(c.near).min(part(c.low));
    let pct = |k: u64| format!("{:.1}%", 100.0 * k as f64 / nnz);
    println!(
        "| {name} | {} | {:.1} | {csr:.2} | {} | {} | {} | {} | {} | {split:.2} | {:.2} |",
        if nnz >= 1e6 { format!("{:.1}M", nnz / 1e6) } else { format!("{:.1}k", nnz / 1e3) },
        nnz / m,
        pct(c.near),
        pct(c.low),
        pct(c.row_span_nnz),
        pct(c.chunk_span_nnz),
        if c.distinct > 65_536 { "> 65,536".to_string() } else { c.distinct.to_string() },
        split / csr
    );
}
