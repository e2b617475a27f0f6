//! Every format against the serial twin within `serial::error_bound`: every generator at several
//! scales (uniform, R-MAT power-law rows, 2D/3D Laplacians, banded, tall-skinny, a dense row, a
//! dense column), empty shapes (0 × 0, 0 × n, m × 0, empty rows), f32 and f64, `beta = 0` into a
//! poisoned `y` and `beta ≠ 0` on a random one, NaN and infinity in `x`; CSR formats
//! bit-identical across runs; every GPU conversion equal to its twin's; the errors. The twins of
//! the formats are checked against the CSR twin on any machine.
use gpu_spmv::adaptive::{DeviceRowBlocks, RowBlocks};
use gpu_spmv::baselines::{CuSparseAlg, CuSparseSpmv};
use gpu_spmv::ell::{DeviceEll, Ell};
use gpu_spmv::hyb::{DeviceHyb, Hyb};
use gpu_spmv::jds::{DeviceJds, Jds};
use gpu_spmv::scoo::{DeviceScoo, Scoo};
use gpu_spmv::sell::{DeviceSell, Sell, SellOptions, SELL_MAX_FILL, SELL_SIGMA};
use gpu_spmv::{serial, Error, Format, RowStats, Spmv, SpmvValue};
use gpu_testkit::{gpu_test, max_len, rng, Gpu, POISON_BYTE};
use rand::rngs::StdRng;
use rand::Rng;
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{generate, Csr};

fn matrices<T: SpmvValue>(r: &mut StdRng, scale: u64) -> Vec<(String, Csr<u32, T>)> {
    let s: u64 = r.random();
    let (m, n) = (r.random_range(1..=scale), r.random_range(1..=scale));
    let nnz = r.random_range(0..=(m * n).min(8 * scale));
    let k = (scale as f64).sqrt() as u64 + 1;
    let mut out: Vec<(String, Csr<u32, T>)> = vec![
        (format!("uniform {m}x{n} {nnz}"), generate::uniform(m, n, nnz, s)),
        (format!("rmat {}", k.ilog2() + 4), generate::rmat(k.ilog2() + 4, 4 * scale, 0.57, 0.19, 0.19, s)),
        (format!("laplacian2d {k}"), generate::laplacian_2d(k)),
        (format!("laplacian3d {}", k.min(30)), generate::laplacian_3d(k.min(30))),
        (format!("banded {m}"), generate::banded(m, 3.min(m - 1), 2.min(m - 1), s)),
        (format!("tall-skinny {m}x{}", n.min(40)), generate::tall_skinny(m, n.min(40), n.min(40).min(6), s)),
        (format!("dense row {m}x{n}"), generate::dense_row(m, n, nnz.max(n), s)),
        (format!("dense col {m}x{n}"), generate::dense_col(m, n, nnz.max(m), s)),
    ]
    .into_iter()
    .filter_map(|(name, a)| a.ok().map(|a| (name, a)))
    .collect();
    for (m, n) in [(0u64, 0u64), (0, 7), (7, 0), (5, 9)] {
        out.push((format!("empty {m}x{n}"), Csr::try_new(m, n, vec![0; m as usize + 1], vec![], vec![]).unwrap()));
    }
    out
}

/// Held by every test that runs cuSPARSE products (by name or in `Auto`'s trial): cuSPARSE 12
/// can write past `y` and leave rows wrong on small matrices while other threads run its
/// products (`gpu_spmv::baselines::CUSPARSE_SMALL_ROWS`), and the tests of a binary run in
/// threads.
static CUSPARSE_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cusparse_tests() -> std::sync::MutexGuard<'static, ()> {
    CUSPARSE_TESTS.lock().unwrap_or_else(|e| e.into_inner())
}

fn random_vec<T: SpmvValue>(r: &mut StdRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect()
}

/// One product on the GPU against the twin; returns the GPU's `y`.
#[allow(clippy::too_many_arguments)]
fn check<T: SpmvValue>(gpu: &Gpu, plan: &mut Spmv<T>, a: &Csr<u32, T>, alpha: T, x: &[T], beta: T, y0: &[T], name: &str) -> Vec<T> {
    let dx = gpu.upload(x).unwrap();
    let mut dy = gpu.upload(y0).unwrap();
    if beta == T::default() {
        gpu.memset_bytes(&mut dy, POISON_BYTE).unwrap();
    }
    plan.apply(alpha, &dx, beta, &mut dy).unwrap_or_else(|e| panic!("{name} {}: {e}", plan.format()));
    let got = gpu.download(&dy).unwrap();
    let mut want = y0.to_vec();
    serial::spmv(a, alpha, x, beta, &mut want);
    let bound = serial::error_bound(a, alpha, x, beta, y0);
    if let Err(e) = serial::within(&got, &want, &bound) {
        panic!("{name} {} {}: {e}", plan.format(), T::NAME);
    }
    got
}

/// The plan, or `None` when ELL, SELL-C-σ or SELL-VI refuses a matrix whose padding is indeed
/// past the limit (the twin refusing it too, for the same count of slots), or SELL-VI one of more
/// values than it indexes (the twin refusing them too).
fn plan_or_refusal<'a, T: SpmvValue>(gpu: &Gpu, da: &'a DeviceCsr<T>, a: &Csr<u32, T>, format: Format, name: &str) -> Option<Spmv<'a, T>> {
    match Spmv::new(gpu, da.view(), format) {
        Ok(plan) => Some(plan),
        Err(Error::TooMuchPadding { format: "ell", slots, nnz }) if format == Format::Ell => {
            let width = a.ptr().windows(2).map(|w| (w[1] - w[0]) as u64).max().unwrap_or(0);
            assert_eq!(slots, a.rows() * width, "{name}");
            assert!(slots > gpu_spmv::ell::ELL_MAX_FILL * nnz.max(1), "{name}: refused within the limit");
            assert!(Ell::from_csr(a).is_err());
            None
        }
        // (SELL-VI: refused for SELL-C-σ's padding once its values are found few enough)
        Err(Error::TooMuchPadding { format: "sell", slots, nnz }) if matches!(format, Format::Sell | Format::SellVi) => {
            assert!(format == Format::Sell || gpu_spmv::vi::value_index(a.vals()).is_some(), "{name}: SELL-VI refused for padding before its values");
            assert!(slots > SELL_MAX_FILL * nnz.max(a.rows().div_ceil(32) * 32), "{name}: refused within the limit");
            match Sell::from_csr(a, SellOptions::default()) {
                Err(Error::TooMuchPadding { slots: s, .. }) => assert_eq!(s, slots, "{name}: the twin's slots"),
                other => panic!("{name}: the GPU refused SELL-C-σ, the twin gave {:?}", other.map(|s| s.footprint_bytes())),
            }
            None
        }
        Err(Error::TooManyValues { at_least, max }) if format == Format::SellVi => {
            assert!(at_least > max && max == gpu_spmv::vi::VI_MAX, "{name}: refused at {at_least} values");
            assert!(gpu_spmv::vi::value_index(a.vals()).is_none(), "{name}: the GPU refused SELL-VI, the twin did not");
            None
        }
        Err(e) => panic!("{name} {format}: {e}"),
    }
}

/// SELL-C-σ built four ways: σ chosen, rows in order, sorted in windows of 32 and 1024, and σ
/// chosen without 16-bit columns.
const SELL_WAYS: [SellOptions; 5] = [
    SellOptions { sigma: None, compress: true },
    SellOptions { sigma: Some(1), compress: true },
    SellOptions { sigma: Some(32), compress: true },
    SellOptions { sigma: Some(1024), compress: true },
    SellOptions { sigma: None, compress: false },
];

/// With `SPTRANS_TEST_DUMP=DIR`, writes `a` as Matrix Market to `DIR/<what>.mtx` (spaces as
/// `_`): the inputs of a failing seed, for a reproducer outside the test.
fn dump<T: SpmvValue>(a: &Csr<u32, T>, what: &str) {
    if let Some(dir) = std::env::var_os("SPTRANS_TEST_DUMP") {
        let path = std::path::Path::new(&dir).join(format!("{}.mtx", what.replace(' ', "_")));
        let file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        sptrans_matrix::mm::write_csr(std::io::BufWriter::new(file), a).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

fn every_format<T: SpmvValue>(gpu: &Gpu, r: &mut StdRng) -> usize {
    let mut cases = 0;
    for scale in [1u64, 5, 33, 300, 5000, 100_000] {
        if scale * 8 > max_len() as u64 {
            continue;
        }
        for (name, a) in matrices::<T>(r, scale) {
            dump(&a, &format!("{} {scale} {name}", T::NAME));
            let da = DeviceCsr::upload(gpu, &a).unwrap();
            for format in Format::ALL.into_iter().chain([Format::Auto]) {
                let Some(mut plan) = plan_or_refusal(gpu, &da, &a, format, &name) else { continue };
                let x = random_vec::<T>(r, a.cols() as usize);
                let y0 = random_vec::<T>(r, a.rows() as usize);
                let first = check(gpu, &mut plan, &a, T::from_f64(1.0), &x, T::default(), &y0, &name);
                check(gpu, &mut plan, &a, T::from_f64(-0.75), &x, T::from_f64(0.5), &y0, &name);
                if format.is_deterministic() {
                    let again = check(gpu, &mut plan, &a, T::from_f64(1.0), &x, T::default(), &y0, &name);
                    assert!(first.iter().zip(&again).all(|(p, q)| p.bit_pattern() == q.bit_pattern()), "{name} {format}: not the same bits twice");
                }
                cases += 1;
            }
        }
    }
    cases
}

gpu_test!(fn every_format_matches_the_twin_f64(gpu) {
    let _cusparse = cusparse_tests();
    let (mut r, _seed) = rng();
    assert!(every_format::<f64>(gpu, &mut r) >= 100);
});

gpu_test!(fn every_format_matches_the_twin_f32(gpu) {
    let _cusparse = cusparse_tests();
    let (mut r, _seed) = rng();
    assert!(every_format::<f32>(gpu, &mut r) >= 100);
});

gpu_test!(fn one_dense_row_nan_and_infinity(gpu) {
    let (mut r, _seed) = rng();
    let n = 1_000_000.min(max_len() as u64).max(1000);
    let a = generate::dense_row::<f64>(300, n, n + 500, 3).unwrap();
    let mut x = random_vec::<f64>(&mut r, n as usize);
    x[17] = f64::NAN;
    x[n as usize - 1] = f64::INFINITY;
    let y0 = random_vec::<f64>(&mut r, 300);
    let da = DeviceCsr::upload(gpu, &a).unwrap();
    for format in Format::ALL {
        let Some(mut plan) = plan_or_refusal(gpu, &da, &a, format, "dense row") else { continue };
        check(gpu, &mut plan, &a, 2.0, &x, 0.0, &y0, "dense row with NaN / inf");
    }
});

gpu_test!(fn errors_are_values(gpu) {
    let a = generate::uniform::<f64>(30, 20, 100, 1).unwrap();
    let da = DeviceCsr::upload(gpu, &a).unwrap();
    let mut plan = Spmv::new(gpu, da.view(), Format::CsrVector).unwrap();
    let (x, mut y) = (gpu.alloc::<f64>(21).unwrap(), gpu.alloc::<f64>(30).unwrap());
    assert!(matches!(plan.apply(1.0, &x, 0.0, &mut y), Err(Error::LengthMismatch { what: "x", expected: 20, got: 21 })));
    let (x, mut y) = (gpu.alloc::<f64>(20).unwrap(), gpu.alloc::<f64>(29).unwrap());
    assert!(matches!(plan.apply(1.0, &x, 0.0, &mut y), Err(Error::LengthMismatch { what: "y", .. })));
    // A matrix without values (built from parts, as a pattern matrix is) is refused.
    let parts = sptrans_matrix::device::DeviceCsrParts::<f64> { ptr: gpu.upload(&[0u32, 1, 2]).unwrap(), idx: gpu.upload(&[0u32, 1]).unwrap(), vals: None };
    let pattern = DeviceCsr::from_parts(gpu, 2, 2, parts).unwrap();
    assert!(matches!(Spmv::new(gpu, pattern.view(), Format::Coo), Err(Error::NoValues)));
    assert_eq!(plan.footprint_bytes(), 4 * 31 + 12 * 100);
    let coo = Spmv::new(gpu, da.view(), Format::Coo).unwrap();
    // Columns and values, 16-bit rows, one chunk's 32-bit base row.
    assert_eq!(coo.footprint_bytes(), 12 * 100 + 2 * 100 + 4);
});

/// SELL-VI on matrices of 1, 2, 255, 256 and 257 distinct values (among them -0.0 beside 0.0,
/// infinities and a NaN, each its own value by bits): up to 256 the product is the twin's within
/// the bound and SELL-C-σ's bits, the footprint a byte a slot (none for one value); 257 is
/// refused, as the twin refuses it; random values are refused early.
fn sell_vi_values<T: SpmvValue>(gpu: &Gpu, r: &mut StdRng) {
    let base = generate::uniform::<T>(3000, 2000, 40_000, r.random()).unwrap();
    for distinct in [1usize, 2, 255, 256, 257] {
        let mut pool: Vec<T> = (0..distinct).map(|i| T::from_f64(i as f64 * 0.25 + 1000.0)).collect();
        if distinct >= 255 {
            for (i, v) in [-0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN].into_iter().enumerate() {
                pool[i] = T::from_f64(v);
            }
        }
        let vals: Vec<T> = (0..base.nnz()).map(|k| pool[if (k as usize) < distinct { k as usize } else { r.random_range(0..distinct) }]).collect();
        let a = Csr::try_new(base.rows(), base.cols(), base.ptr().to_vec(), base.idx().to_vec(), vals).unwrap();
        let da = DeviceCsr::upload(gpu, &a).unwrap();
        let name = format!("{distinct} values");
        match Spmv::new(gpu, da.view(), Format::SellVi) {
            Ok(mut plan) => {
                assert!(distinct <= 256, "{name}: accepted");
                let (table, _) = gpu_spmv::vi::value_index(a.vals()).expect("the twin's value index");
                assert_eq!(table.len(), distinct, "{name}");
                let sell = Spmv::new(gpu, da.view(), Format::Sell).unwrap();
                // SELL-C-σ's values (T::BYTES a slot) against SELL-VI's byte a slot (none for one
                // value) and its 256-value table.
                let s = sell.footprint_bytes() as i64 - plan.footprint_bytes() as i64 + 256 * T::BYTES as i64;
                let per_slot = if distinct == 1 { T::BYTES as i64 } else { T::BYTES as i64 - 1 };
                assert!(s > 0 && s % per_slot == 0, "{name}: footprints {} and {}", sell.footprint_bytes(), plan.footprint_bytes());
                // Finite x only: a NaN value times anything is NaN in both.
                let x = random_vec::<T>(r, a.cols() as usize);
                let y0 = random_vec::<T>(r, a.rows() as usize);
                if distinct < 255 {
                    check(gpu, &mut plan, &a, T::from_f64(1.0), &x, T::default(), &y0, &name);
                    check(gpu, &mut plan, &a, T::from_f64(-0.75), &x, T::from_f64(0.5), &y0, &name);
                } else {
                    // With infinities and a NaN among the values: the same bits as SELL-C-σ's (the
                    // same sums in the same order).
                    let mut coo = Spmv::new(gpu, da.view(), Format::Sell).unwrap();
                    let dx = gpu.upload(&x).unwrap();
                    let (mut y1, mut y2) = (gpu.upload(&y0).unwrap(), gpu.upload(&y0).unwrap());
                    plan.apply(T::from_f64(1.0), &dx, T::default(), &mut y1).unwrap();
                    coo.apply(T::from_f64(1.0), &dx, T::default(), &mut y2).unwrap();
                    let (g1, g2) = (gpu.download(&y1).unwrap(), gpu.download(&y2).unwrap());
                    for (i, (p, q)) in g1.iter().zip(&g2).enumerate() {
                        let (p, q): (f64, f64) = ((*p).into(), (*q).into());
                        assert!(p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()), "{name}: row {i}: {p} against SELL-C-σ's {q}");
                    }
                }
            }
            Err(Error::TooManyValues { at_least, max }) => {
                assert!(distinct > 256 && at_least > max, "{name}: refused at {at_least}");
                assert!(gpu_spmv::vi::value_index(a.vals()).is_none(), "{name}: the twin");
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    let random = generate::uniform::<T>(3000, 2000, 40_000, r.random()).unwrap();
    let da = DeviceCsr::upload(gpu, &random).unwrap();
    assert!(matches!(Spmv::new(gpu, da.view(), Format::SellVi), Err(Error::TooManyValues { .. })), "random values");
}

gpu_test!(fn sell_vi_values_by_index(gpu) {
    let (mut r, _seed) = rng();
    sell_vi_values::<f64>(gpu, &mut r);
    sell_vi_values::<f32>(gpu, &mut r);
});

/// The value index's twin: the table sorted by bits, every value its entry, refused past 256.
#[test]
fn value_index_twin() {
    let (mut r, _seed) = rng();
    for distinct in [1usize, 7, 256, 257] {
        let pool: Vec<f64> = (0..distinct).map(|i| (i as f64).sqrt() - 5.0).collect();
        let vals: Vec<f64> = (0..5000).map(|k| pool[if k < distinct { k } else { r.random_range(0..distinct) }]).collect();
        match gpu_spmv::vi::value_index(&vals) {
            Some((table, idx)) => {
                assert!(distinct <= 256);
                assert_eq!(table.len(), distinct);
                assert!(table.windows(2).all(|w| w[0].to_bits() < w[1].to_bits()));
                assert!(vals.iter().zip(&idx).all(|(v, &i)| table[i as usize].to_bits() == v.to_bits()));
            }
            None => assert!(distinct > 256),
        }
    }
}

/// COO keeps 16-bit rows while no chunk spans 2^16 rows or more, and 32-bit rows past that: a
/// chunk holding rows 0 and `span` (at 2^16 − 1 and 2^16) gives the twin's product either way.
fn coo_rows_16_or_32<T: SpmvValue>(gpu: &Gpu, r: &mut StdRng) {
    for (span, bytes_per_row) in [(65_535u64, 2u64), (65_536, 4), (300_000, 4), (1000, 2)] {
        let rows = span + 3;
        let mut ptr = vec![0u32; rows as usize + 1];
        for (i, p) in ptr.iter_mut().enumerate() {
            *p = 10 * (i > 0) as u32 + 10 * (i as u64 > span) as u32;
        }
        // Row 0: columns 0–9; row `span`: columns 20–29.
        let idx: Vec<u32> = (0..10).chain(20..30).collect();
        let vals = random_vec::<T>(r, 20);
        let a = Csr::try_new(rows, 40, ptr, idx, vals).unwrap();
        let da = DeviceCsr::upload(gpu, &a).unwrap();
        let mut plan = Spmv::new(gpu, da.view(), Format::Coo).unwrap();
        assert_eq!(plan.footprint_bytes(), 20 * (4 + T::BYTES as u64) + 20 * bytes_per_row + if bytes_per_row == 2 { 4 } else { 0 }, "span {span}");
        let x = random_vec::<T>(r, 40);
        let y0 = random_vec::<T>(r, rows as usize);
        check(gpu, &mut plan, &a, T::from_f64(1.5), &x, T::default(), &y0, &format!("coo span {span}"));
        check(gpu, &mut plan, &a, T::from_f64(-0.5), &x, T::from_f64(2.0), &y0, &format!("coo span {span}, beta 2"));
    }
}

gpu_test!(fn coo_rows_in_16_or_32_bits(gpu) {
    let (mut r, _seed) = rng();
    coo_rows_16_or_32::<f32>(gpu, &mut r);
    coo_rows_16_or_32::<f64>(gpu, &mut r);
});

/// Every GPU conversion gives exactly its twin's arrays.
fn conversions<T: SpmvValue>(gpu: &Gpu, r: &mut StdRng) -> usize {
    let mut cases = 0;
    for scale in [1u64, 33, 300, 5000, 100_000] {
        if scale * 8 > max_len() as u64 {
            continue;
        }
        for (name, a) in matrices::<T>(r, scale) {
            let da = DeviceCsr::upload(gpu, &a).unwrap();
            match (DeviceEll::from_csr(gpu, &da), Ell::from_csr(&a)) {
                (Ok(d), Ok(h)) => {
                    assert_eq!(d.download(gpu).unwrap(), h, "{name}: ell");
                    assert_eq!(d.footprint_bytes(), h.footprint_bytes());
                }
                (Err(Error::TooMuchPadding { .. }), Err(Error::TooMuchPadding { .. })) => {}
                (d, h) => panic!("{name}: ell GPU {:?} vs twin {:?}", d.err(), h.err()),
            }
            let h = DeviceHyb::from_csr(gpu, &da).unwrap();
            let twin = Hyb::from_csr(&a);
            assert_eq!(h.download(gpu).unwrap(), twin, "{name}: hyb");
            assert_eq!(h.footprint_bytes(), twin.footprint_bytes());
            let j = DeviceJds::from_csr(gpu, &da).unwrap();
            let twin = Jds::from_csr(&a);
            assert_eq!(j.download(gpu).unwrap(), twin, "{name}: jds");
            assert_eq!(j.footprint_bytes(), twin.footprint_bytes());
            for s in [None, Some(32), Some(1024)] {
                let d = DeviceScoo::from_csr(gpu, &da, s).unwrap();
                let twin = Scoo::from_csr(&a, d.slice_rows()).unwrap();
                assert_eq!(d.download(gpu).unwrap(), twin, "{name}: scoo {s:?}");
                assert_eq!(d.footprint_bytes(), twin.footprint_bytes());
            }
            let b = DeviceRowBlocks::from_csr(gpu, &da).unwrap();
            assert_eq!(b.download(gpu).unwrap(), RowBlocks::from_csr(&a), "{name}: row blocks");
            for o in SELL_WAYS {
                match (DeviceSell::from_csr(gpu, &da, o), Sell::from_csr(&a, o)) {
                    (Ok(d), Ok(h)) => {
                        assert_eq!(d.download(gpu).unwrap(), h, "{name}: sell {o:?}");
                        assert_eq!(d.footprint_bytes(), h.footprint_bytes());
                        assert_eq!(d.sigma(), h.sigma());
                        assert_eq!(d.slots(), h.val().len() as u64);
                        assert_eq!(d.index_bytes(), 4 * h.idx().len() as u64);
                    }
                    (Err(Error::TooMuchPadding { slots: p, .. }), Err(Error::TooMuchPadding { slots: q, .. })) => {
                        assert_eq!(p, q, "{name}: sell {o:?}")
                    }
                    (d, h) => panic!("{name}: sell {o:?}: GPU {:?} vs twin {:?}", d.err(), h.err()),
                }
            }
            cases += 1;
        }
    }
    cases
}

gpu_test!(fn conversions_equal_their_twins_f64(gpu) {
    let (mut r, _seed) = rng();
    assert!(conversions::<f64>(gpu, &mut r) >= 20);
});

gpu_test!(fn conversions_equal_their_twins_f32(gpu) {
    let (mut r, _seed) = rng();
    assert!(conversions::<f32>(gpu, &mut r) >= 20);
});

gpu_test!(fn long_rows_cut_in_pieces(gpu) {
    // Rows longer than ADAPTIVE_LONG (pieces with atomics), beside short ones and empty ones.
    let (mut r, _seed) = rng();
    let n = (3 * spmv_kernels::ADAPTIVE_LONG + 17).min(max_len() as u64).max(2000);
    let mut ptr = vec![0u32];
    let mut idx = vec![];
    for row in 0..40u64 {
        let len = match row % 4 { 0 => n, 1 => 0, 2 => 3, _ => 1500 };
        idx.extend((0..len).map(|c| (c * 7919 % n) as u32));
        let last = ptr.len() - 1;
        idx[ptr[last] as usize..].sort_unstable();
        ptr.push(idx.len() as u32);
    }
    let vals = random_vec::<f64>(&mut r, idx.len());
    let a = Csr::try_new(40, n, ptr, idx, vals).unwrap();
    let x = random_vec::<f64>(&mut r, n as usize);
    let y0 = random_vec::<f64>(&mut r, 40);
    let da = DeviceCsr::upload(gpu, &a).unwrap();
    for format in Format::ALL {
        let Some(mut plan) = plan_or_refusal(gpu, &da, &a, format, "long rows") else { continue };
        check(gpu, &mut plan, &a, 1.5, &x, -0.5, &y0, "long rows");
    }
});

/// The twins of the formats against the CSR twin (ELL and JDS bit for bit), on any machine.
#[test]
fn format_twins_match_the_csr_twin() {
    let (mut r, _seed) = rng();
    for scale in [1u64, 33, 300, 3000] {
        for (name, a) in matrices::<f64>(&mut r, scale) {
            let x = random_vec::<f64>(&mut r, a.cols() as usize);
            let y0 = random_vec::<f64>(&mut r, a.rows() as usize);
            let (alpha, beta) = (1.25, -0.5);
            let mut want = y0.clone();
            serial::spmv(&a, alpha, &x, beta, &mut want);
            let bound = serial::error_bound(&a, alpha, &x, beta, &y0);
            let run = |f: &dyn Fn(&mut [f64])| {
                let mut y = y0.clone();
                f(&mut y);
                y
            };
            if let Ok(e) = Ell::from_csr(&a) {
                assert_eq!(run(&|y| e.spmv(alpha, &x, beta, y)), want, "{name}: ell");
            }
            assert_eq!(run(&|y| Jds::from_csr(&a).spmv(alpha, &x, beta, y)), want, "{name}: jds");
            for o in SELL_WAYS {
                match Sell::from_csr(&a, o) {
                    Ok(sell) => assert_eq!(run(&|y| sell.spmv(alpha, &x, beta, y)), want, "{name}: sell {o:?}"),
                    Err(Error::TooMuchPadding { slots, nnz, .. }) => assert!(slots > SELL_MAX_FILL * nnz.max(a.rows().div_ceil(32) * 32), "{name}"),
                    Err(e) => panic!("{name}: sell {o:?}: {e}"),
                }
            }
            let hyb = Hyb::from_csr(&a);
            serial::within(&run(&|y| hyb.spmv(alpha, &x, beta, y)), &want, &bound).unwrap_or_else(|e| panic!("{name}: hyb {e}"));
            for s in [32, 1024] {
                let scoo = Scoo::from_csr(&a, s).unwrap();
                serial::within(&run(&|y| scoo.spmv(alpha, &x, beta, y)), &want, &bound).unwrap_or_else(|e| panic!("{name}: scoo {e}"));
            }
            // Row blocks cover every row once, in order, each under the limits.
            let b = RowBlocks::from_csr(&a);
            assert_eq!(*b.block_row().last().unwrap() as u64, a.rows(), "{name}");
            for w in b.block_row().windows(2).zip(b.block_nz().windows(2)) {
                let ((r0, r1), (z0, z1)) = ((w.0[0], w.0[1]), (w.1[0], w.1[1]));
                assert!(r1 >= r0 && z1 >= z0 && (r1 - r0) as u64 <= spmv_kernels::ADAPTIVE_ROWS, "{name}");
                if r1 - r0 > 1 {
                    assert!(((z1 - z0) as usize) < spmv_kernels::ADAPTIVE_NV, "{name}: {} nonzeros in a stream block", z1 - z0);
                }
            }
        }
    }
}

#[test]
fn host_types_refuse_bad_layouts() {
    let pad = spmv_kernels::ELL_PAD;
    assert!(Ell::<f64>::try_new(2, 3, 2, vec![0, 1, 2, pad], vec![1.0, 1.0, 1.0, 0.0]).is_ok());
    assert!(matches!(Ell::<f64>::try_new(2, 3, 2, vec![0, 1, 3, pad], vec![1.0; 4]), Err(Error::Invalid { format: "ell", .. })));
    assert!(matches!(Ell::<f64>::try_new(2, 3, 2, vec![pad, 1, 2, pad], vec![0.0, 1.0, 1.0, 0.0]), Err(Error::Invalid { .. })));
    assert!(matches!(Ell::<f64>::try_new(2, 3, 2, vec![0, 1, 2], vec![1.0; 3]), Err(Error::Invalid { .. })));
    assert!(Jds::<f64>::try_new(2, 2, vec![1, 0], vec![0, 2, 3], vec![0, 1, 1], vec![1.0; 3]).is_ok());
    assert!(matches!(Jds::<f64>::try_new(2, 2, vec![1, 1], vec![0, 2, 3], vec![0, 1, 1], vec![1.0; 3]), Err(Error::Invalid { format: "jds", .. })));
    assert!(matches!(Jds::<f64>::try_new(2, 2, vec![1, 0], vec![0, 1, 3], vec![0, 1, 1], vec![1.0; 3]), Err(Error::Invalid { .. })));
    assert!(Scoo::<f64>::try_new(3, 2, 2, vec![0, 2, 3], vec![0, 1, 0], vec![0, 1, 1], vec![1.0; 3]).is_ok());
    assert!(matches!(
        Scoo::<f64>::try_new(3, 2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![0, 1, 1], vec![1.0; 3]),
        Err(Error::Invalid { format: "scoo", .. })
    ));
    assert!(matches!(Scoo::<f64>::try_new(3, 2, 3, vec![0, 3], vec![0; 3], vec![0; 3], vec![1.0; 3]), Err(Error::Invalid { .. })));
    let e = Ell::<f64>::try_new(1, 2, 1, vec![0], vec![1.0]).unwrap();
    assert!(matches!(Hyb::try_new(e, vec![1], vec![0], vec![1.0]), Err(Error::Invalid { format: "hyb", .. })));
    // ELL and SELL-C-σ refuse a dense row over many short ones.
    let a = generate::dense_row::<f64>(1000, 5000, 6000, 1).unwrap();
    assert!(matches!(Ell::from_csr(&a), Err(Error::TooMuchPadding { format: "ell", .. })));
    assert!(matches!(Sell::from_csr(&a, SellOptions::default()), Err(Error::TooMuchPadding { format: "sell", .. })));
    // SELL-C-σ: one chunk of two rows (columns 5, 7 | 6), width 2, 16-bit above base 5.
    let pad16 = spmv_kernels::SELL_PAD16 as u32;
    let mut words = vec![0u32; 32];
    let narrow = |w: &mut Vec<u32>, e: usize, h: u32| w[e / 2] |= h << (16 * (e % 2));
    for (e, h) in [(0, 0), (1, 1), (32, 2), (33, pad16)].into_iter().chain((2..32).flat_map(|l| [(l, pad16), (32 + l, pad16)])) {
        narrow(&mut words, e, h);
    }
    let (vals, wptr, iptr, base) = (vec![1.0f64; 64], vec![0u32, 2], vec![0u32, 2], vec![5u32]);
    assert!(Sell::try_new(2, 8, 1, vec![], wptr.clone(), iptr.clone(), base.clone(), words.clone(), vals.clone()).is_ok());
    let bad = |r: Result<Sell<f64>, Error>| assert!(matches!(r, Err(Error::Invalid { format: "sell", .. })));
    // Column 5 + 2 = 7 is not below 7 columns.
    bad(Sell::try_new(2, 7, 1, vec![], wptr.clone(), iptr.clone(), base.clone(), words.clone(), vals.clone()));
    // σ = 1 with a permutation; σ = 48; a permutation outside its window of 32.
    bad(Sell::try_new(2, 8, 1, vec![1, 0], wptr.clone(), iptr.clone(), base.clone(), words.clone(), vals.clone()));
    bad(Sell::try_new(2, 8, 48, vec![1, 0], wptr.clone(), iptr.clone(), base.clone(), words.clone(), vals.clone()));
    assert!(Sell::try_new(2, 8, 32, vec![1, 0], wptr.clone(), iptr.clone(), base.clone(), words.clone(), vals.clone()).is_ok());
    // Index units neither the width nor twice it; too few values.
    bad(Sell::try_new(2, 8, 1, vec![], wptr.clone(), vec![0, 3], base.clone(), vec![0; 48], vals.clone()));
    bad(Sell::try_new(2, 8, 1, vec![], wptr.clone(), iptr.clone(), base.clone(), words.clone(), vec![1.0; 63]));
    // An entry after padding (lane 1: padding, then column 5 + 1).
    let mut after = words.clone();
    narrow(&mut after, 1, 0);
    after[0] = (pad16 << 16) | after[0] & 0xffff;
    after[16] = (1 << 16) | after[16] & 0xffff;
    bad(Sell::try_new(2, 8, 1, vec![], wptr.clone(), iptr.clone(), base.clone(), after, vals.clone()));
    // A slot past the last row (lane 2) that is not padding.
    let mut past = words.clone();
    past[1] &= 0xffff_0000;
    bad(Sell::try_new(2, 8, 1, vec![], wptr, iptr, base, past, vals));
    assert!(matches!(Sell::<f64>::from_csr(&a, SellOptions { sigma: Some(0), compress: true }), Err(Error::Invalid { format: "sell", .. })));
    assert!(matches!(Sell::<f64>::from_csr(&a, SellOptions { sigma: Some(100), compress: true }), Err(Error::Invalid { format: "sell", .. })));
}

/// SELL-C-σ's choices on known structures: a 3D Laplacian keeps its rows in order (every chunk
/// equally wide) and stores every chunk's columns in 16 bits, so a nonzero costs its value and 2
/// bytes plus the chunks' few words; R-MAT rows are uneven, so σ = [`SELL_SIGMA`] sorts them and
/// they fit under the limit, where in order they pad past the limit; a chunk spanning 2^16 − 1 columns stays narrow, 2^16 does not.
#[test]
fn sell_sorts_and_compresses_where_it_pays() {
    let lap = generate::laplacian_3d::<f64>(40).unwrap();
    let s = Sell::from_csr(&lap, SellOptions::default()).unwrap();
    assert_eq!(s.sigma(), 1);
    assert!(s.perm().is_empty());
    assert_eq!(s.narrow_chunks(), s.base().len());
    let per_nz = s.footprint_bytes() as f64 / lap.nnz() as f64;
    assert!(per_nz < 10.0 * 1.1, "{per_nz} bytes a nonzero");
    let wide = Sell::from_csr(&lap, SellOptions { sigma: None, compress: false }).unwrap();
    assert_eq!(wide.narrow_chunks(), 0);
    assert_eq!(wide.idx().len(), 2 * s.idx().len());
    let rmat = generate::rmat::<f64>(14, 100_000, 0.57, 0.19, 0.19, 1).unwrap();
    let sorted = Sell::from_csr(&rmat, SellOptions::default()).unwrap();
    assert_eq!(sorted.sigma(), SELL_SIGMA);
    let fill = sorted.val().len() as f64 / rmat.nnz() as f64;
    assert!(fill < SELL_MAX_FILL as f64, "{fill} slots a nonzero sorted");
    // In order, the same rows pad past the limit.
    match Sell::from_csr(&rmat, SellOptions { sigma: Some(1), compress: true }) {
        Err(Error::TooMuchPadding { format: "sell", slots, .. }) => assert!(slots > SELL_MAX_FILL * rmat.nnz()),
        other => panic!("{:?}", other.map(|s| s.val().len())),
    }
    for (span, narrow) in [(65_534u32, 1), (65_535, 0), (10, 1)] {
        let a = Csr::try_new(2, span as u64 + 1, vec![0u32, 1, 2], vec![0, span], vec![1.0f64, 2.0]).unwrap();
        assert_eq!(Sell::from_csr(&a, SellOptions::default()).unwrap().narrow_chunks(), narrow, "span {span}");
    }
}

// The 16-bit boundary on the GPU: chunks spanning 2^16 − 2, 2^16 − 1 and 2^16 columns give the
// twin's arrays and product.
gpu_test!(fn sell_columns_in_16_or_32_bits(gpu) {
    let (mut r, _seed) = rng();
    for span in [65_534u32, 65_535, 65_536, 3] {
        let rows = 70u64;
        let ptr: Vec<u32> = (0..=rows as u32).map(|i| 2 * i).collect();
        let idx: Vec<u32> = (0..rows as u32).flat_map(|i| [i % 2, span - (i % 3)]).collect();
        let vals = random_vec::<f64>(&mut r, idx.len());
        let a = Csr::try_new(rows, span as u64 + 1, ptr, idx, vals).unwrap();
        let da = DeviceCsr::upload(gpu, &a).unwrap();
        let d = DeviceSell::from_csr(gpu, &da, SellOptions::default()).unwrap();
        assert_eq!(d.download(gpu).unwrap(), Sell::from_csr(&a, SellOptions::default()).unwrap(), "span {span}");
        let mut plan = Spmv::new(gpu, da.view(), Format::Sell).unwrap();
        let x = random_vec::<f64>(&mut r, a.cols() as usize);
        let y0 = random_vec::<f64>(&mut r, rows as usize);
        check(gpu, &mut plan, &a, 1.5, &x, 0.0, &y0, &format!("sell span {span}"));
        // The device type's own product, rows in order and sorted, and its length checks.
        for sigma in [1, 32] {
            let d = DeviceSell::from_csr(gpu, &da, SellOptions { sigma: Some(sigma), compress: true }).unwrap();
            let (dx, mut dy) = (gpu.upload(&x).unwrap(), gpu.upload(&y0).unwrap());
            d.multiply(gpu, -0.5, &dx, 2.0, &mut dy).unwrap();
            let mut want = y0.clone();
            serial::spmv(&a, -0.5, &x, 2.0, &mut want);
            assert_eq!(gpu.download(&dy).unwrap(), want, "span {span}, σ {sigma}: not the CSR twin's bits");
            let short = gpu.alloc::<f64>(x.len() - 1).unwrap();
            assert!(matches!(d.multiply(gpu, 1.0, &short, 0.0, &mut dy), Err(Error::LengthMismatch { what: "x", .. })));
        }
    }
});

#[test]
fn auto_picks_by_row_statistics() {
    let pick = |a: &Csr<u32, f64>| Format::choose(&RowStats::from_lengths(a.ptr().windows(2).map(|w| (w[1] - w[0]) as u64)));
    assert_eq!(pick(&generate::laplacian_3d(20).unwrap()), Format::Jds);
    assert_eq!(pick(&generate::uniform(2000, 2000, 200_000, 1).unwrap()), Format::Scoo);
    // A 27-point stencil (26 a row on average): JDS, not SCOO (the realistic suite's refit).
    assert_eq!(pick(&generate::stencil_3d(12, 27, generate::Order::Rcm, 1).unwrap()), Format::Jds);
    assert_eq!(pick(&generate::uniform(2000, 2000, 50_000, 1).unwrap()), Format::Jds);
    assert_eq!(pick(&generate::dense_row(2000, 100_000, 110_000, 1).unwrap()), Format::CsrAdaptive);
    assert_eq!(pick(&generate::rmat(14, 200_000, 0.57, 0.19, 0.19, 1).unwrap()), Format::Coo);
    assert_eq!(pick(&Csr::try_new(3, 3, vec![0u32; 4], vec![], vec![]).unwrap()), Format::CsrScalar);
    // With few products expected, the sorting conversions (JDS, SCOO) give way to formats that
    // need none, at each one's break-even count; the default count keeps the picks above.
    let stats = |a: &Csr<u32, f64>| RowStats::from_lengths(a.ptr().windows(2).map(|w| (w[1] - w[0]) as u64));
    let (lap, uni) = (stats(&generate::laplacian_3d(20).unwrap()), stats(&generate::uniform(2000, 2000, 200_000, 1).unwrap()));
    let even = Format::Jds.break_even_products();
    assert_eq!((Format::choose_for(&lap, even - 1), Format::choose_for(&lap, even)), (Format::CsrAdaptive, Format::Jds));
    let long = Format::Scoo.break_even_products();
    assert_eq!((Format::choose_for(&uni, long - 1), Format::choose_for(&uni, long)), (Format::Coo, Format::Scoo));
    for a in [generate::rmat(14, 200_000, 0.57, 0.19, 0.19, 1).unwrap(), generate::dense_row(2000, 100_000, 110_000, 1).unwrap()] {
        assert_eq!(Format::choose_for(&stats(&a), 1), Format::choose(&stats(&a)));
    }
    for s in [lap, uni] {
        assert_eq!(Format::choose_for(&s, gpu_spmv::DEFAULT_PRODUCTS), Format::choose(&s));
    }
    // Auto's trial: from TRIAL_MIN_PRODUCTS on, the rule's pick first and its class's rivals;
    // below, the pick alone (with few products, the one that needs no sort).
    let t = gpu_spmv::TRIAL_MIN_PRODUCTS;
    let (rmat, dense) =
        (stats(&generate::rmat(14, 200_000, 0.57, 0.19, 0.19, 1).unwrap()), stats(&generate::dense_row(2000, 100_000, 110_000, 1).unwrap()));
    assert_eq!(Format::candidates(&lap, t), [Format::Jds, Format::Sell, Format::SellVi, Format::CuSparse]);
    assert_eq!(Format::candidates(&rmat, t), [Format::Coo, Format::CsrAdaptive, Format::CuSparse]);
    assert_eq!(Format::candidates(&dense, t), [Format::CsrAdaptive, Format::CuSparse]);
    assert_eq!(Format::candidates(&uni, t), [Format::Scoo, Format::CuSparse]);
    // Below CUSPARSE_SMALL_ROWS rows (a 9³ Laplacian: 729), no cuSPARSE in the trial.
    let small = stats(&generate::laplacian_3d(9).unwrap());
    assert!(small.rows < gpu_spmv::baselines::CUSPARSE_SMALL_ROWS);
    assert_eq!(Format::candidates(&small, t), [Format::Jds, Format::Sell, Format::SellVi]);
    assert_eq!(Format::candidates(&lap, t - 1), [Format::choose_for(&lap, t - 1)]);
    assert_eq!(Format::candidates(&rmat, 1), [Format::Coo]);
    let empty = RowStats::from_lengths([0u64; 5]);
    assert_eq!(Format::candidates(&empty, gpu_spmv::DEFAULT_PRODUCTS), [Format::CsrScalar]);
    // The break-even counts sit below the trial's threshold: a trial never weighs a sort that
    // the products would not repay.
    assert!(Format::ALL.iter().all(|f| f.break_even_products() < t));
}

// A plan for a few products on a Laplacian takes CSR-adaptive (no sort), and its product is the
// twin's.
gpu_test!(fn auto_for_few_products(gpu) {
    let _cusparse = cusparse_tests();
    let (mut r, _seed) = rng();
    let a = generate::laplacian_3d::<f64>(30).unwrap();
    let da = DeviceCsr::upload(gpu, &a).unwrap();
    let mut few = Spmv::with_products(gpu, da.view(), Format::Auto, 3).unwrap();
    assert_eq!(few.format(), Format::CsrAdaptive);
    assert!(few.trials().is_empty());
    let x = random_vec::<f64>(&mut r, a.cols() as usize);
    let y0 = random_vec::<f64>(&mut r, a.rows() as usize);
    check(gpu, &mut few, &a, 1.0, &x, 0.0, &y0, "laplacian, 3 products");
    // Many products: the trial times JDS, SELL-C-σ, SELL-VI (the Laplacian holds two values) and
    // cuSPARSE (when it loads), keeps the fastest, and the kept plan's product is the twin's
    // within the bound.
    let mut many = Spmv::new(gpu, da.view(), Format::Auto).unwrap();
    let timed: Vec<Format> = many.trials().iter().map(|t| t.0).collect();
    assert!(gpu_spmv::vi::value_index(a.vals()).is_some());
    assert_eq!(timed[..3], [Format::Jds, Format::Sell, Format::SellVi], "trials {:?}", many.trials());
    assert!(timed.len() == 4 || gpu_spmv::gpu_runtime::vendor::cusparse_library().is_err(), "trials {:?}", many.trials());
    // The fastest of ours, unless cuSPARSE is within TRIAL_MARGIN of it: then cuSPARSE.
    let ours = many.trials().iter().filter(|t| t.0 != Format::CuSparse).min_by(|p, q| p.1.total_cmp(&q.1)).unwrap();
    let peer = many.trials().iter().find(|t| t.0 == Format::CuSparse);
    let want = match peer {
        Some(p) if p.1 * (1.0 - gpu_spmv::TRIAL_MARGIN) < ours.1 => Format::CuSparse,
        _ => ours.0,
    };
    assert_eq!(many.format(), want, "trials {:?}", many.trials());
    assert!(many.trials().iter().all(|t| t.1 > 0.0 && t.1.is_finite()));
    check(gpu, &mut many, &a, 1.0, &x, 0.5, &y0, "laplacian, auto after its trial");
    // cuSPARSE by name, on another stream after set_gpu, when it loads.
    if gpu_spmv::gpu_runtime::vendor::cusparse_library().is_ok() {
        let mut cs = Spmv::new(gpu, da.view(), Format::CuSparse).unwrap();
        let other = gpu.fork().unwrap();
        cs.set_gpu(&other).unwrap();
        check(&other, &mut cs, &a, -1.0, &x, 2.0, &y0, "laplacian, cusparse on a second stream");
    }
});

#[test]
fn formats_and_bounds() {
    assert_eq!("AUTO".parse::<Format>().unwrap(), Format::Auto);
    for f in Format::ALL.into_iter().chain([Format::CuSparse]) {
        assert_eq!(f.name().parse::<Format>().unwrap(), f);
    }
    assert!(matches!("ellpack".parse::<Format>(), Err(Error::UnknownFormat(_))));
    let a = Csr::try_new(1, 3, vec![0u32, 3], vec![0, 1, 2], vec![1.0f32, -1.0, 1e-8]).unwrap();
    let b = serial::error_bound(&a, 1.0, &[1.0, 1.0, 1.0], 0.0, &[0.0]);
    let g = 5.0 * (f32::EPSILON as f64 / 2.0);
    assert!((b[0] - 2.0 * g / (1.0 - g) * (2.0 + 1e-8)).abs() < 1e-12);
    assert!(serial::within(&[1.0f32], &[1.0 + 1e-3], &[1e-4]).is_err());
    assert!(serial::within(&[f32::NAN], &[f32::NAN], &[0.0]).is_ok());
}

/// The cuSPARSE peers (`baselines::CuSparseSpmv`) against the twin within its bound, on the same
/// matrices as the formats (empty shapes included), f64 and f32, `beta` zero and not; wrong
/// vector lengths are errors.
fn cusparse_peers<T: SpmvValue>(gpu: &Gpu, r: &mut StdRng) {
    for scale in [1u64, 33, 5000] {
        for (name, a) in matrices::<T>(r, scale) {
            let da = DeviceCsr::upload(gpu, &a).unwrap();
            for alg in CuSparseAlg::ALL {
                let mut plan = CuSparseSpmv::new(gpu, da.view(), alg).unwrap_or_else(|e| panic!("{name} {alg}: {e}"));
                for (alpha, beta) in [(1.0, 0.0), (-0.75, 0.5)] {
                    let (alpha, beta) = (T::from_f64(alpha), T::from_f64(beta));
                    let x = random_vec::<T>(r, a.cols() as usize);
                    let y0 = random_vec::<T>(r, a.rows() as usize);
                    let dx = gpu.upload(&x).unwrap();
                    let mut dy = gpu.upload(&y0).unwrap();
                    if beta == T::default() {
                        gpu.memset_bytes(&mut dy, POISON_BYTE).unwrap();
                    }
                    plan.apply(alpha, &dx, beta, &mut dy).unwrap_or_else(|e| panic!("{name} {alg}: {e}"));
                    let mut want = y0.clone();
                    serial::spmv(&a, alpha, &x, beta, &mut want);
                    let bound = serial::error_bound(&a, alpha, &x, beta, &y0);
                    if let Err(e) = serial::within(&gpu.download(&dy).unwrap(), &want, &bound) {
                        panic!("{name} {alg} {}: {e}", T::NAME);
                    }
                }
                let (x, mut y) = (gpu.alloc::<T>(a.cols() as usize + 1).unwrap(), gpu.alloc::<T>(a.rows() as usize).unwrap());
                assert!(matches!(plan.apply(T::from_f64(1.0), &x, T::default(), &mut y), Err(Error::LengthMismatch { what: "x", .. })));
            }
        }
    }
}

gpu_test!(fn cusparse_peers_match_the_twin(gpu) {
    let _cusparse = cusparse_tests();
    let (mut r, _seed) = rng();
    cusparse_peers::<f64>(gpu, &mut r);
    cusparse_peers::<f32>(gpu, &mut r);
});

#[test]
fn cusparse_peer_names() {
    for a in CuSparseAlg::ALL {
        assert_eq!(CuSparseAlg::from_name(a.name()), Some(a));
        assert!(a.name().parse::<Format>().is_err(), "{a} is not a format");
    }
    assert!(CuSparseAlg::CsrAlg2.is_deterministic() && !CuSparseAlg::CsrAlg1.is_deterministic());
}
