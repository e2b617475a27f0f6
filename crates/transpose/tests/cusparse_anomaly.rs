//! Issue 34, item 9: the cuSPARSE `csr2cscEx2` baseline differed from the twin in two bench runs
//! (and again on 2026-11-26, R-MAT 2^20). This diagnostic repeats the bench's check many times on
//! that matrix and classifies each difference: the pointer, the order of rows inside a column
//! only (the same entries), or wrong entries. Modes: as the bench does it (poison on the plan's
//! non-blocking stream, then cuSPARSE), with the stream synchronized between the two, and on the
//! legacy default stream; each wrong result is described (columns, entries left poisoned).
//! `cargo test -p gpu-transpose --test cusparse_anomaly -- --ignored --nocapture`.
use gpu_runtime::Gpu;
use gpu_transpose::{serial, Algorithm, Transposer};
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{generate, Csr};

/// For a wrong result: how many columns differ, how many row indices and values still hold the
/// poison (never written), and the first difference (column, position in it, the entries
/// around it) — to tell an early read or a missing write (poison left) from rows of another
/// column or another order.
fn describe(got: &Csr<u32, f32>, want: &Csr<u32, f32>) -> String {
    let p = want.ptr();
    let (gi, wi, gv, wv) = (got.idx(), want.idx(), got.vals(), want.vals());
    let poison_idx = gi.iter().filter(|&&i| i == 0xABAB_ABAB).count();
    let poison_val = gv.iter().filter(|v| v.to_bits() == 0xABAB_ABAB).count();
    let mut cols = Vec::new();
    let mut first = None;
    for c in 0..want.rows() as usize {
        let (a, b) = (p[c] as usize, p[c + 1] as usize);
        if let Some(k) = (a..b).find(|&k| gi[k] != wi[k] || gv[k].to_bits() != wv[k].to_bits()) {
            cols.push(c);
            first.get_or_insert((c, a, b, k));
        }
    }
    let sample = first.map(|(c, a, b, k)| {
        let (lo, hi) = (k.saturating_sub(2).max(a), (k + 4).min(b));
        let differing = (a..b).filter(|&j| gi[j] != wi[j] || gv[j].to_bits() != wv[j].to_bits()).count();
        format!(
            "column {c} ({} rows, {differing} differ) at offset {}: rows got {:?} want {:?}; values got {:?} want {:?}",
            b - a,
            k - a,
            &gi[lo..hi],
            &wi[lo..hi],
            &gv[lo..hi],
            &wv[lo..hi]
        )
    });
    format!(
        "{} columns differ ({:?}), {poison_idx} row indices and {poison_val} values still poison; first: {}",
        cols.len(),
        &cols[..cols.len().min(8)],
        sample.unwrap_or_default()
    )
}

/// Writes `a`'s arrays (little-endian `u32` pointer and indices, `f32` values) into `dir`, for
/// the CuPy control on the very same matrix (`benches/peers/cusparse_csr2csc_repeat.py --from`).
fn dump(a: &Csr<u32, f32>, dir: &str) {
    let bytes = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let _ = std::fs::create_dir_all(dir);
    let shape = format!("{} {} {}\n", a.rows(), a.cols(), a.nnz());
    for (name, data) in [
        ("shape.txt", shape.into_bytes()),
        ("ptr.u32", bytes(a.ptr())),
        ("idx.u32", bytes(a.idx())),
        ("vals.f32", bytes(&a.vals().iter().map(|v| v.to_bits()).collect::<Vec<_>>())),
    ] {
        if let Err(e) = std::fs::write(format!("{dir}/{name}"), data) {
            eprintln!("could not write {dir}/{name}: {e}");
        }
    }
}

fn classify(got: &Csr<u32, f32>, want: &Csr<u32, f32>) -> &'static str {
    if got.same_bits(want) {
        return "equal";
    }
    eprintln!("  {}", if got.ptr() == want.ptr() { describe(got, want) } else { "pointer differs".to_string() });
    if got.ptr() != want.ptr() {
        return "pointer differs";
    }
    let (p, gi, wi, gv, wv) = (want.ptr(), got.idx(), want.idx(), got.vals(), want.vals());
    let mut order_only = true;
    for c in 0..want.rows() as usize {
        let (a, b) = (p[c] as usize, p[c + 1] as usize);
        let mut g: Vec<(u32, u32)> = (a..b).map(|k| (gi[k], gv[k].to_bits())).collect();
        let mut w: Vec<(u32, u32)> = (a..b).map(|k| (wi[k], wv[k].to_bits())).collect();
        g.sort();
        w.sort();
        if g != w {
            order_only = false;
            break;
        }
    }
    if order_only {
        "rows unsorted in some column (same entries)"
    } else {
        "wrong entries"
    }
}

#[test]
#[ignore = "diagnostic: run with --ignored on a GPU"]
fn cusparse_baseline_repeated_against_the_twin() {
    let Ok(gpu) = Gpu::first() else {
        eprintln!("SKIPPED: no GPU");
        return;
    };
    let trials: usize = std::env::var("SPTRANS_ANOMALY_TRIALS").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let a = generate::rmat::<f32>(20, 8_000_000, 0.57, 0.19, 0.19, 4).unwrap();
    let want = serial::transpose(&a);
    if let Ok(dir) = std::env::var("SPTRANS_ANOMALY_DUMP") {
        dump(&a, &dir);
    }
    let legacy = Gpu::from_stream(gpu.context().default_stream()).unwrap();
    for (mode, g, sync) in
        [("bench (non-blocking stream)", &gpu, false), ("synchronized before the call", &gpu, true), ("legacy default stream", &legacy, false)]
    {
        let mut t = Transposer::new(g).unwrap();
        let mut cs = gpu_transpose::baselines::CuSparseTranspose::new(g).unwrap();
        let da = DeviceCsr::upload(g, &a).unwrap();
        let mut parts = t.alloc_output(&da).unwrap();
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..trials {
            g.memset_bytes(&mut parts.idx, 0xAB).unwrap();
            if let Some(v) = parts.vals.as_mut() {
                g.memset_bytes(v, 0xAB).unwrap();
            }
            if sync {
                g.synchronize().unwrap();
            }
            let res = cs.transpose_into(&da, parts).unwrap();
            *counts.entry(classify(&res.download(g).unwrap(), &want)).or_insert(0) += 1;
            // RadixTrans between two cuSPARSE calls, as the bench runs algorithms in turn.
            let r = t.transpose_new(Algorithm::RadixTrans, &da).unwrap();
            drop(r);
            parts = res.into_parts();
        }
        eprintln!("{mode}: {counts:?}");
    }
}
