//! Every algorithm against the serial twin, bit for bit: the generators at many shapes (the
//! adversaries too), empty shapes, the real matrices of `../shared/matrices`, f32 / f64 / i64 /
//! pattern payloads, poisoned outputs, one plan reused across sizes, and errors. CPU tests check
//! the pipelines' models (built from the primitives' twins) on any machine.
use std::path::PathBuf;

mod common;

use common::generated;
use gpu_testkit::{gpu_test, rng, POISON_BYTE};
use gpu_transpose::{serial, Algorithm, Error, PatternHint, Payload, Transposer, SYM_PROBE_ENTRIES, SYM_PROBE_ROWS};
use rand::rngs::StdRng;
use rand::Rng;
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use sptrans_matrix::{generate, mm, Csr, Value};

const GPU_ALGOS: [Algorithm; 7] = [
    Algorithm::ScanTrans,
    Algorithm::MergeTrans,
    Algorithm::RadixTrans,
    Algorithm::SymTrans,
    Algorithm::CooChain,
    Algorithm::Auto,
    Algorithm::Serial,
];

fn mtx_files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            mtx_files(&p, out);
        } else if p.to_string_lossy().ends_with(".mtx") || p.to_string_lossy().ends_with(".mtx.gz") {
            out.push(p);
        }
    }
}

/// The real matrices (`real/`, `graphs/`) and the conformance corpus's accepted files.
fn real_matrices() -> Vec<(String, Csr<u32, f64>)> {
    let mut files = Vec::new();
    if let Some(dir) = gpu_testkit::test_data("transpose", "matrices", "SPTRANS_MATRICES") {
        mtx_files(&dir.join("real"), &mut files);
        mtx_files(&dir.join("graphs"), &mut files);
    }
    if let Some(conf) = gpu_testkit::test_data("transpose", "conformance", "SPTRANS_CONFORMANCE") {
        mtx_files(&conf, &mut files);
    }
    files.sort();
    // Files the reader refuses (the corpus's invalid ones, Ragusa16.mtx) are the reader's tests'
    // business; complex files are read as their real parts' type only when they parse as f64.
    files.into_iter().filter_map(|f| mm::read_csr::<f64>(&f).ok().map(|a| (f.display().to_string(), a))).collect()
}

// ---------------------------------------------------------------- CPU: the pipelines' models

fn check_moves<T: Value>(name: &str, a: &Csr<u32, T>, mv: &serial::Moves) {
    let t = serial::transpose(a);
    assert_eq!(mv.ptr, t.ptr(), "{name}: pointer");
    assert_eq!(mv.rows, t.idx(), "{name}: rows");
    let moved: Vec<T> = mv.source.iter().map(|&j| a.vals()[j as usize]).collect();
    assert_eq!(moved, t.vals(), "{name}: values");
}

#[test]
fn pipeline_models_equal_the_serial_transpose() {
    let (mut r, _g) = rng();
    let mut cases = 0;
    for scale in [3u64, 10, 40, 200, 1000] {
        for _ in 0..6 {
            for (name, a) in generated::<f32>(&mut r, scale) {
                let nnz = a.nnz() as usize;
                for parts in [1, 2, 7, 33, nnz.max(1), nnz + 5] {
                    if (parts + 1) * a.cols() as usize > 1 << 18 {
                        continue;
                    }
                    check_moves(&format!("{name} scan parts {parts}"), &a, &serial::scan_trans(&a, parts));
                }
                check_moves(&format!("{name} merge"), &a, &serial::merge_trans(&a));
                check_moves(&format!("{name} coo"), &a, &serial::coo_chain(&a));
                check_moves(&format!("{name} radix"), &a, &serial::radix_trans(&a));
                if let Some(mv) = serial::sym_trans(&a) {
                    check_moves(&format!("{name} sym"), &a, &mv);
                }
                cases += 1;
            }
        }
    }
    assert!(cases > 300, "{cases} matrices");
}

#[test]
fn serial_transpose_parts_refuses_bad_input() {
    let ok = serial::transpose_parts::<f32>(2, 3, &[0, 1, 2], &[2, 0], Some(&[1.0, 2.0])).unwrap();
    assert_eq!(ok, (vec![0, 1, 1, 2], vec![1, 0], Some(vec![2.0, 1.0])));
    assert!(matches!(serial::transpose_parts::<f32>(2, 3, &[0, 1], &[2], None), Err(Error::LengthMismatch { .. })));
    assert!(matches!(serial::transpose_parts::<f32>(2, 3, &[0, 2, 1], &[2, 0], None), Err(Error::Ptr2Idx(_))));
    assert!(matches!(
        serial::transpose_parts::<f32>(2, 3, &[0, 1, 2], &[2, 3], None),
        Err(Error::Histogram(gpu_histogram::Error::KeyOutOfRange { index: 1, bins: 3 }))
    ));
    assert!(matches!(serial::transpose_parts::<f32>(2, 3, &[0, 1, 2], &[2, 0], Some(&[1.0])), Err(Error::LengthMismatch { .. })));
}

#[test]
fn scan_parts_keeps_the_table_within_budget_and_the_gpu_busy() {
    for nnz in [0u64, 1, 1000, 1 << 20, 10_000_000, 100_000_000] {
        for n in [1u64, 7, 1000, 100_000, 10_000_000] {
            let p = gpu_transpose::scan_parts(nnz, n, 132);
            assert!(p >= 1);
            assert!((p + 1) * n <= (16 * nnz).max(1 << 22) || p == 1, "nnz {nnz} n {n}: parts {p}");
            assert!(p <= (132 * 32).min(nnz.div_ceil(32)).max(1));
        }
    }
    // The cost model's optimum where nothing caps it: sqrt(5800 * 10M / 100k) = 762.
    assert_eq!(gpu_transpose::scan_parts(10_000_000, 100_000, 132), 762);
    // Few columns, many nonzeros: one partition per warp the GPU holds.
    assert_eq!(gpu_transpose::scan_parts(100_000_000, 10, 132), 132 * 32);
    // Many columns: the table budget decides (16 * 100M / 10M - 1).
    assert_eq!(gpu_transpose::scan_parts(100_000_000, 10_000_000, 132), 159);
}

/// `a`'s pattern made symmetric (`a`'s entries and their mirrors, rows sorted, no repeats) on an
/// `n × n` matrix, `n` the larger side, with random values (not symmetric ones).
fn symmetrized<T: Value>(r: &mut StdRng, a: &Csr<u32, T>) -> Csr<u32, T> {
    let n = a.rows().max(a.cols());
    let rows = gpu_ptr2idx::serial::ptr2idx(a.ptr());
    let mut entries: Vec<(u32, u32)> = rows.iter().zip(a.idx()).flat_map(|(&i, &j)| [(i, j), (j, i)]).collect();
    entries.sort_unstable();
    entries.dedup();
    let mut ptr = vec![0u32; n as usize + 1];
    for &(i, _) in &entries {
        ptr[i as usize + 1] += 1;
    }
    for i in 0..n as usize {
        ptr[i + 1] += ptr[i];
    }
    let idx = entries.iter().map(|e| e.1).collect();
    let vals = (0..entries.len()).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect();
    Csr::try_new(n, n, ptr, idx, vals).unwrap()
}

/// The matrices SymTrans's tests use, with whether its symmetric path applies: symmetric
/// patterns with random values (and without values' symmetry), and the near misses it must
/// refuse (one mirror missing, a row out of order, a repeated entry, a rectangle).
fn sym_cases<T: Value>(r: &mut StdRng, scale: u64) -> Vec<(String, Csr<u32, T>, bool)> {
    let mut out = Vec::new();
    for (name, a) in generated::<T>(r, scale) {
        let s = symmetrized(r, &a);
        if s.nnz() > 0 {
            // One mirror dropped: the entry after the middle one's (its row's last), if unmirrored then.
            let (ptr, idx, vals) = (s.ptr().to_vec(), s.idx().to_vec(), s.vals().to_vec());
            let rows = gpu_ptr2idx::serial::ptr2idx(&ptr);
            let k = idx.len() / 2;
            if rows[k] != idx[k] {
                let (mut p2, mut i2, mut v2) = (ptr.clone(), idx.clone(), vals.clone());
                i2.remove(k);
                v2.remove(k);
                for p in p2.iter_mut().skip(rows[k] as usize + 1) {
                    *p -= 1;
                }
                out.push((format!("{name}, symmetrized less one"), Csr::try_new(s.rows(), s.cols(), p2, i2, v2).unwrap(), false));
            }
            // A row with two entries swapped (still a symmetric pattern).
            if let Some(row) = (0..s.rows() as usize).find(|&i| ptr[i + 1] - ptr[i] >= 2) {
                let mut i2 = idx.clone();
                i2.swap(ptr[row] as usize, ptr[row] as usize + 1);
                out.push((
                    format!("{name}, symmetrized, a row unsorted"),
                    Csr::try_new(s.rows(), s.cols(), ptr.clone(), i2, vals.clone()).unwrap(),
                    false,
                ));
            }
        }
        out.push((format!("{name}, symmetrized"), s, true));
        let symmetric = serial::sym_trans(&a).is_some();
        out.push((name, a, symmetric));
    }
    out
}

#[test]
fn sym_trans_model_takes_symmetric_patterns_only() {
    let (mut r, _g) = rng();
    let mut taken = 0;
    for scale in [3u64, 10, 40, 200, 1000] {
        for (name, a, symmetric) in sym_cases::<f32>(&mut r, scale) {
            let mv = serial::sym_trans(&a);
            assert_eq!(mv.is_some(), symmetric, "{name}");
            if let Some(mv) = mv {
                check_moves(&format!("{name} sym"), &a, &mv);
                taken += 1;
            }
        }
    }
    let dup = Csr::try_new(2, 2, vec![0u32, 2, 3], vec![1, 1, 0], vec![1.0f32, 2.0, 3.0]).unwrap();
    assert!(serial::sym_trans(&dup).is_none(), "a repeated entry");
    assert!(taken >= 30, "symmetric cases taken: {taken}");
}

#[test]
fn sym_probe_passes_symmetric_patterns_and_catches_missing_mirrors() {
    let (mut r, _g) = rng();
    let (mut passed, mut caught) = (0, 0);
    for scale in [3u64, 10, 40, 200, 1000] {
        for (name, a, symmetric) in sym_cases::<f32>(&mut r, scale) {
            let probe = serial::sym_probe(&a);
            if symmetric {
                assert!(probe, "{name}: the probe refused a symmetric pattern");
                passed += 1;
            }
            // Every row probed whole: the missing mirror cannot escape.
            let whole = a.rows() <= SYM_PROBE_ROWS && a.ptr().windows(2).all(|w| (w[1] - w[0]) as u64 <= SYM_PROBE_ENTRIES);
            if name.ends_with("less one") && whole {
                assert!(!probe, "{name}: the probe missed the missing mirror");
                caught += 1;
            }
        }
    }
    assert!(!serial::sym_probe(&Csr::try_new(2, 3, vec![0u32, 1, 1], vec![2], vec![1.0f32]).unwrap()), "a rectangle");
    assert!(passed >= 30 && caught >= 5, "symmetric passed {passed}, missing mirrors caught {caught}");
}

#[test]
fn a_plan_can_move_to_another_thread() {
    fn assert_send<T: Send>() {}
    assert_send::<Transposer>();
}

#[test]
fn algorithm_names_round_trip_and_auto_resolves() {
    for a in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
        assert_eq!(a.name().parse::<Algorithm>().unwrap(), a);
        assert_ne!(a.resolve(10, 10, 10), Algorithm::Auto);
    }
    assert!(matches!("fast".parse::<Algorithm>(), Err(Error::UnknownAlgorithm(_))));
    // Auto never synchronizes unless told the pattern is symmetric.
    for nnz in [0, 1, 100_000, 200_000, 1 << 22, 1 << 32] {
        assert_eq!(Algorithm::Auto.resolve(1, 100_000, nnz), Algorithm::RadixTrans, "nnz {nnz}");
        assert_eq!(Algorithm::Auto.resolve(100_000, 100_000, nnz), Algorithm::RadixTrans, "square, nnz {nnz}");
        for vb in [0, 1, 2, 4, 8, 16] {
            let hinted = |m| Algorithm::Auto.resolve_hinted(m, 100_000, nnz, vb, PatternHint::Symmetric);
            let want = if matches!(vb, 0 | 4 | 8) { Algorithm::SymTrans } else { Algorithm::RadixTrans };
            assert_eq!(hinted(100_000), want, "square, nnz {nnz}, {vb}-byte values");
            assert_eq!(hinted(99_999), Algorithm::RadixTrans, "not square");
        }
        assert_eq!(Algorithm::RadixTrans.resolve_hinted(10, 10, nnz, 4, PatternHint::Symmetric), Algorithm::RadixTrans);
    }
}

// ---------------------------------------------------------------- GPU

/// Transposes `a` with `algo` into a poisoned output and compares with the twin bit for bit.
fn check_gpu<T: Value + Payload, B: PartialEq>(t: &mut Transposer, algo: Algorithm, name: &str, a: &Csr<u32, T>, bits: impl Fn(&T) -> B) {
    let gpu = t.gpu().clone();
    let da = DeviceCsr::upload(&gpu, a).unwrap();
    let mut out = DeviceCsrParts::<T>::alloc(&gpu, a.cols(), a.nnz(), true).unwrap();
    gpu.memset_bytes(&mut out.ptr, POISON_BYTE).unwrap();
    gpu.memset_bytes(&mut out.idx, POISON_BYTE).unwrap();
    gpu.memset_bytes(out.vals.as_mut().unwrap(), POISON_BYTE).unwrap();
    let out = t.transpose_into(algo, &da, out).unwrap_or_else(|e| panic!("{name} {algo}: {e}"));
    assert_eq!((out.rows(), out.cols()), (a.cols(), a.rows()), "{name} {algo}: shape");
    let want = serial::transpose(a);
    let (ptr, idx, vals) = (gpu.download(out.ptr()).unwrap(), gpu.download(out.idx()).unwrap(), gpu.download(out.vals().unwrap()).unwrap());
    assert_eq!(ptr, want.ptr(), "{name} {algo}: pointer");
    assert_eq!(idx, want.idx(), "{name} {algo}: indices");
    assert!(vals.iter().map(&bits).eq(want.vals().iter().map(&bits)), "{name} {algo}: value bits");
}

fn check_pattern(t: &mut Transposer, algo: Algorithm, name: &str, a: &Csr<u32, ()>) {
    let gpu = t.gpu().clone();
    let da = DeviceCsr::upload_pattern(&gpu, a).unwrap();
    let mut parts = t.alloc_output(&da).unwrap();
    gpu.memset_bytes(&mut parts.ptr, POISON_BYTE).unwrap();
    gpu.memset_bytes(&mut parts.idx, POISON_BYTE).unwrap();
    let out = t.transpose_into(algo, &da, parts).unwrap_or_else(|e| panic!("{name} {algo}: {e}"));
    assert!(out.vals().is_none());
    let want = serial::transpose(a);
    assert_eq!(gpu.download(out.ptr()).unwrap(), want.ptr(), "{name} {algo}: pointer");
    assert_eq!(gpu.download(out.idx()).unwrap(), want.idx(), "{name} {algo}: indices");
}

/// `algo` against the twin on the symmetric cases and their unsymmetric variants at each scale
/// the size cap allows: f32 values (then `also` on each), f64 values (scales capped at
/// `f64_cap`) and the f64 cases' patterns. Returns the f32 cases run.
fn on_sym_cases(
    t: &mut Transposer,
    algo: Algorithm,
    scales: &[u64],
    f64_cap: u64,
    mut also: impl FnMut(&mut Transposer, &str, &Csr<u32, f32>),
) -> usize {
    let (mut r, _g) = rng();
    let max = gpu_testkit::max_len() as u64;
    let mut cases = 0;
    for &scale in scales {
        if scale * 8 > max.max(64) {
            continue;
        }
        for (name, a, _) in sym_cases::<f32>(&mut r, scale) {
            check_gpu(t, algo, &name, &a, |v| v.to_bits() as u64);
            also(t, &name, &a);
            cases += 1;
        }
        for (name, a, _) in sym_cases::<f64>(&mut r, scale.min(f64_cap)) {
            check_gpu(t, algo, &name, &a, |v| v.to_bits());
            let pattern = Csr::try_new(a.rows(), a.cols(), a.ptr().to_vec(), a.idx().to_vec(), vec![(); a.nnz() as usize]).unwrap();
            check_pattern(t, algo, &format!("{name} pattern"), &pattern);
        }
    }
    cases
}

gpu_test!(fn sym_trans_matches_the_twin_symmetric_or_not(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let cases = on_sym_cases(&mut t, Algorithm::SymTrans, &[3, 33, 1000, 20_000, 300_000], 20_000, |t, name, a| {
        let da = DeviceCsr::upload(t.gpu(), a).unwrap();
        assert_eq!(t.probe_symmetric(&da).unwrap(), serial::sym_probe(a), "{name}: the probe's verdict");
    });
    assert!(cases > 0);
});

gpu_test!(fn auto_decides_symtrans_on_the_device_symmetric_or_not(gpu) {
    // `Auto` on square matrices whose sort takes an odd number of passes (at most 256 columns:
    // one; 2^16 + 1 to 2^24: three) tries SymTrans and runs RadixTrans only if the verdict, read
    // on the device, says the pattern is not symmetric: bit for bit the twin's either way.
    let mut t = Transposer::new(gpu).unwrap();
    // The path is taken exactly there: its workspace is RadixTrans's plus the flag and verdict.
    for (n, takes) in [(200u64, true), (1000, false), (65_536, false), (70_000, true)] {
        let (auto, radix) = (t.workspace_bytes(Algorithm::Auto, n, n, 10 * n, 4).unwrap(), t.workspace_bytes(Algorithm::RadixTrans, n, n, 10 * n, 4).unwrap());
        assert_eq!(auto > radix, takes, "{n} columns: Auto {auto} B, RadixTrans {radix} B");
    }
    let cases = on_sym_cases(&mut t, Algorithm::Auto, &[3, 33, 200, 70_000, 150_000], 70_000, |_, _, _| {});
    assert!(cases > 0);
});

gpu_test!(fn every_algorithm_matches_the_twin_on_generated_matrices(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let (mut r, _g) = rng();
    let max = gpu_testkit::max_len() as u64;
    let mut cases = 0;
    for scale in [3u64, 31, 33, 100, 1000, 20_000, 300_000] {
        if scale * 4 > max.max(64) {
            continue;
        }
        let reps = if scale < 1000 { 6 } else { 1 };
        for _ in 0..reps {
            for (name, a) in generated::<f32>(&mut r, scale) {
                for algo in GPU_ALGOS {
                    check_gpu(&mut t, algo, &name, &a, |v| v.to_bits() as u64);
                }
                cases += 1;
            }
        }
    }
    assert!(cases >= 150, "{cases} matrices");
});

gpu_test!(fn payloads_f64_i64_and_pattern(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let (mut r, _g) = rng();
    for scale in [5u64, 64, 2000] {
        for (name, a) in generated::<f64>(&mut r, scale) {
            for algo in GPU_ALGOS {
                check_gpu(&mut t, algo, &name, &a, |v| v.to_bits());
            }
        }
        for (name, a) in generated::<i64>(&mut r, scale) {
            for algo in GPU_ALGOS {
                check_gpu(&mut t, algo, &name, &a, |v| *v as u64);
            }
        }
        for (name, a) in generated::<()>(&mut r, scale) {
            for algo in GPU_ALGOS {
                check_pattern(&mut t, algo, &name, &a);
            }
        }
    }
});

/// A matrix of `T` with random bit patterns as values (NaNs and infinities among the halves).
fn random_bits<T: Value>(r: &mut StdRng, a: &Csr<u32, ()>, f: impl Fn(u128) -> T) -> Csr<u32, T> {
    let vals = (0..a.nnz()).map(|_| f(r.random::<u128>())).collect();
    Csr::try_new(a.rows(), a.cols(), a.ptr().to_vec(), a.idx().to_vec(), vals).unwrap()
}

gpu_test!(fn payloads_of_1_2_and_16_bytes(gpu) {
    // The widths the kernels do not carry go by a permutation and one gather: every algorithm
    // (cuSPARSE with its 8-bit, half and complex-double types), bit for bit.
    let mut t = Transposer::new(gpu).unwrap();
    let (mut r, _g) = rng();
    let max = gpu_testkit::max_len() as u64;
    for scale in [1u64, 31, 33, 1000, 40_000] {
        if scale * 4 > max.max(64) {
            continue;
        }
        for (name, p) in generated::<()>(&mut r, scale) {
            let a8 = random_bits(&mut r, &p, |b| b as u8);
            let a16 = random_bits(&mut r, &p, |b| half::f16::from_bits(b as u16));
            let b16 = random_bits(&mut r, &p, |b| half::bf16::from_bits(b as u16));
            let i16s = random_bits(&mut r, &p, |b| b as i16);
            let w = random_bits(&mut r, &p, |b| b);
            // Complex<f64> through upload_complex / download_complex.
            let z = random_bits(&mut r, &p, sptrans_matrix::device::complex_from_bits);
            let dz = DeviceCsr::upload_complex(gpu, &z).unwrap();
            for algo in [Algorithm::RadixTrans, Algorithm::ScanTrans] {
                let back = t.transpose_new(algo, &dz).unwrap().download_complex(gpu).unwrap();
                assert!(back.same_bits(&serial::transpose(&z)), "{name} {algo}: complex");
            }
            for algo in GPU_ALGOS {
                check_gpu(&mut t, algo, &name, &a8, |v| *v);
                check_gpu(&mut t, algo, &name, &a16, |v| v.to_bits());
                check_gpu(&mut t, algo, &name, &b16, |v| v.to_bits());
                check_gpu(&mut t, algo, &name, &i16s, |v| *v);
                check_gpu(&mut t, algo, &name, &w, |v| *v);
            }
        }
    }
});

gpu_test!(fn scan_trans_at_every_partition_count(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let (mut r, _g) = rng();
    for (name, a) in generated::<f32>(&mut r, 3000) {
        let nnz = a.nnz();
        for parts in [1, 2, 7, 31, 32, 33, 1000, nnz.max(1), nnz + 5] {
            if (parts + 1) * a.cols() > 1 << 27 {
                continue;
            }
            t.set_scan_parts(Some(parts));
            check_gpu(&mut t, Algorithm::ScanTrans, &format!("{name} parts {parts}"), &a, |v| v.to_bits() as u64);
        }
    }
    t.set_scan_parts(None);
});

gpu_test!(fn large_matrices_and_one_plan_across_sizes(gpu) {
    let max = gpu_testkit::max_len() as u64;
    let mut t = Transposer::new(gpu).unwrap();
    let sizes: Vec<(u64, u64, u64)> = [(100_000u64, 100_000u64, 2_000_000u64), (1000, 3_000_000, 1_000_000), (2_000_000, 100, 4_000_000), (300, 200, 50_000)].into_iter().filter(|s| s.2 <= max).collect();
    for algo in [Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::RadixTrans, Algorithm::CooChain] {
        for &(m, n, nnz) in &sizes {
            let a = generate::uniform::<f32>(m, n, nnz, m ^ nnz).unwrap();
            check_gpu(&mut t, algo, &format!("uniform {m}x{n} {nnz}"), &a, |v| v.to_bits() as u64);
        }
        let a = generate::rmat::<f32>(20, 3_000_000.min(max), 0.57, 0.19, 0.19, 5).unwrap();
        check_gpu(&mut t, algo, "rmat 2^20", &a, |v| v.to_bits() as u64);
        let d = generate::dense_row::<f32>(5000, 1_000_000.min(max), 1_000_000.min(max), 9).unwrap();
        check_gpu(&mut t, algo, "dense row", &d, |v| v.to_bits() as u64);
        let reserved = t.allocated_bytes();
        let small = generate::uniform::<f32>(1000, 1000, 10_000, 3).unwrap();
        check_gpu(&mut t, algo, "small after large", &small, |v| v.to_bits() as u64);
        assert_eq!(t.allocated_bytes(), reserved, "{algo}: the plan reallocated for a smaller matrix");
    }
});

gpu_test!(fn real_matrices_match_the_twin(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let all = real_matrices();
    for (name, a) in &all {
        for algo in GPU_ALGOS {
            check_gpu(&mut t, algo, name, a, |v| v.to_bits());
        }
    }
    eprintln!("{} real matrices checked", all.len());
});

gpu_test!(fn shape_errors(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let a = generate::uniform::<f32>(30, 20, 100, 1).unwrap();
    let da = DeviceCsr::upload(gpu, &a).unwrap();
    let bad = DeviceCsrParts::<f32>::alloc(gpu, 30, 100, true).unwrap();
    assert!(matches!(t.transpose_into(Algorithm::ScanTrans, &da, bad), Err(Error::LengthMismatch { what: "output pointer length", .. })));
    let short = DeviceCsrParts::<f32> { ptr: gpu.alloc(21).unwrap(), idx: gpu.alloc(99).unwrap(), vals: Some(gpu.alloc(100).unwrap()) };
    assert!(matches!(t.transpose_into(Algorithm::MergeTrans, &da, short), Err(Error::LengthMismatch { what: "output indices length", .. })));
    let novals = DeviceCsrParts::<f32>::alloc(gpu, 20, 100, false).unwrap();
    assert!(matches!(t.transpose_into(Algorithm::CooChain, &da, novals), Err(Error::LengthMismatch { what: "output values present", .. })));
    // A partition count past memory is an error, not a crash.
    t.set_scan_parts(Some(1 << 40));
    assert!(t.transpose_new(Algorithm::ScanTrans, &da).is_err());
    t.set_scan_parts(None);
    // Still works afterwards.
    for algo in GPU_ALGOS {
        check_gpu(&mut t, algo, "after errors", &a, |v| v.to_bits() as u64);
    }
    assert!(t.workspace_bytes(Algorithm::ScanTrans, 30, 20, 100, 4).unwrap() > 0);
});

gpu_test!(fn a_plan_works_after_moving_to_another_thread(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let a = generate::rmat::<f64>(12, 40_000, 0.57, 0.19, 0.19, 8).unwrap();
    check_gpu(&mut t, Algorithm::RadixTrans, "before the move", &a, |v| v.to_bits());
    std::thread::spawn(move || {
        for algo in [Algorithm::RadixTrans, Algorithm::ScanTrans] {
            check_gpu(&mut t, algo, "on another thread", &a, |v| v.to_bits());
        }
    })
    .join()
    .unwrap();
});
