//! Every format against the serial twin within `serial::error_bound`: every generator at several
//! scales (uniform, R-MAT power-law rows, 2D/3D Laplacians, banded, tall-skinny, a dense row, a
//! dense column), empty shapes (0 × 0, 0 × n, m × 0, empty rows), f32 and f64, `beta = 0` into a
//! poisoned `y` and `beta ≠ 0` on a random one, NaN and infinity in `x`; CSR formats
//! bit-identical across runs; the errors.
use gpu_spmv::{serial, Error, Format, Spmv, SpmvValue};
use gpu_testkit::{gpu_test, max_len, rng, Gpu, POISON_BYTE};
use rand::rngs::StdRng;
use rand::Rng;
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{gen, Csr};

fn matrices<T: SpmvValue>(r: &mut StdRng, scale: u64) -> Vec<(String, Csr<u32, T>)> {
    let s: u64 = r.random();
    let (m, n) = (r.random_range(1..=scale), r.random_range(1..=scale));
    let nnz = r.random_range(0..=(m * n).min(8 * scale));
    let k = (scale as f64).sqrt() as u64 + 1;
    let mut out: Vec<(String, Csr<u32, T>)> = vec![
        (format!("uniform {m}x{n} {nnz}"), gen::uniform(m, n, nnz, s)),
        (format!("rmat {}", k.ilog2() + 4), gen::rmat(k.ilog2() + 4, 4 * scale, 0.57, 0.19, 0.19, s)),
        (format!("laplacian2d {k}"), gen::laplacian_2d(k)),
        (format!("laplacian3d {}", k.min(30)), gen::laplacian_3d(k.min(30))),
        (format!("banded {m}"), gen::banded(m, 3.min(m - 1), 2.min(m - 1), s)),
        (format!("tall-skinny {m}x{}", n.min(40)), gen::tall_skinny(m, n.min(40), n.min(40).min(6), s)),
        (format!("dense row {m}x{n}"), gen::dense_row(m, n, nnz.max(n), s)),
        (format!("dense col {m}x{n}"), gen::dense_col(m, n, nnz.max(m), s)),
    ]
    .into_iter()
    .filter_map(|(name, a)| a.ok().map(|a| (name, a)))
    .collect();
    for (m, n) in [(0u64, 0u64), (0, 7), (7, 0), (5, 9)] {
        out.push((format!("empty {m}x{n}"), Csr::try_new(m, n, vec![0; m as usize + 1], vec![], vec![]).unwrap()));
    }
    out
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

fn every_format<T: SpmvValue>(gpu: &Gpu, r: &mut StdRng) -> usize {
    let mut cases = 0;
    for scale in [1u64, 5, 33, 300, 5000, 100_000] {
        if scale * 8 > max_len() as u64 {
            continue;
        }
        for (name, a) in matrices::<T>(r, scale) {
            let da = DeviceCsr::upload(gpu, &a).unwrap();
            let mut da = Some(da);
            for format in Format::ALL {
                let mut plan = Spmv::new(gpu, da.take().unwrap(), format).unwrap();
                let x = random_vec::<T>(r, a.cols() as usize);
                let y0 = random_vec::<T>(r, a.rows() as usize);
                let first = check(gpu, &mut plan, &a, T::from_f64(1.0), &x, T::default(), &y0, &name);
                check(gpu, &mut plan, &a, T::from_f64(-0.75), &x, T::from_f64(0.5), &y0, &name);
                if format.is_deterministic() {
                    let again = check(gpu, &mut plan, &a, T::from_f64(1.0), &x, T::default(), &y0, &name);
                    assert!(first.iter().zip(&again).all(|(p, q)| p.bit_pattern() == q.bit_pattern()), "{name} {format}: not the same bits twice");
                }
                da = Some(plan.into_matrix());
                cases += 1;
            }
        }
    }
    cases
}

gpu_test!(fn every_format_matches_the_twin_f64(gpu) {
    let (mut r, _seed) = rng();
    assert!(every_format::<f64>(gpu, &mut r) >= 100);
});

gpu_test!(fn every_format_matches_the_twin_f32(gpu) {
    let (mut r, _seed) = rng();
    assert!(every_format::<f32>(gpu, &mut r) >= 100);
});

gpu_test!(fn one_dense_row_nan_and_infinity(gpu) {
    let (mut r, _seed) = rng();
    let n = 1_000_000.min(max_len() as u64).max(1000);
    let a = gen::dense_row::<f64>(300, n, n + 500, 3).unwrap();
    let mut x = random_vec::<f64>(&mut r, n as usize);
    x[17] = f64::NAN;
    x[n as usize - 1] = f64::INFINITY;
    let y0 = random_vec::<f64>(&mut r, 300);
    let mut da = Some(DeviceCsr::upload(gpu, &a).unwrap());
    for format in Format::ALL {
        let mut plan = Spmv::new(gpu, da.take().unwrap(), format).unwrap();
        check(gpu, &mut plan, &a, 2.0, &x, 0.0, &y0, "dense row with NaN / inf");
        da = Some(plan.into_matrix());
    }
});

gpu_test!(fn errors_are_values(gpu) {
    let a = gen::uniform::<f64>(30, 20, 100, 1).unwrap();
    let mut plan = Spmv::new(gpu, DeviceCsr::upload(gpu, &a).unwrap(), Format::CsrVector).unwrap();
    let (x, mut y) = (gpu.alloc::<f64>(21).unwrap(), gpu.alloc::<f64>(30).unwrap());
    assert!(matches!(plan.apply(1.0, &x, 0.0, &mut y), Err(Error::LengthMismatch { what: "x", expected: 20, actual: 21 })));
    let (x, mut y) = (gpu.alloc::<f64>(20).unwrap(), gpu.alloc::<f64>(29).unwrap());
    assert!(matches!(plan.apply(1.0, &x, 0.0, &mut y), Err(Error::LengthMismatch { what: "y", .. })));
    // A matrix without values (built from parts, as a pattern matrix is) is refused.
    let parts = sptrans_matrix::device::DeviceCsrParts::<f64> { ptr: gpu.upload(&[0u32, 1, 2]).unwrap(), idx: gpu.upload(&[0u32, 1]).unwrap(), vals: None };
    let pattern = DeviceCsr::from_parts(gpu, 2, 2, parts).unwrap();
    assert!(matches!(Spmv::new(gpu, pattern, Format::Coo), Err(Error::NoValues)));
    assert_eq!(plan.footprint_bytes(), 4 * 31 + 12 * 100);
    let coo = Spmv::new(gpu, plan.into_matrix(), Format::Coo).unwrap();
    assert_eq!(coo.footprint_bytes(), 4 * 31 + 12 * 100 + 4 * 100);
});

#[test]
fn formats_and_bounds() {
    for f in Format::ALL {
        assert_eq!(f.name().parse::<Format>().unwrap(), f);
    }
    assert!(matches!("ell".parse::<Format>(), Err(Error::UnknownFormat(_))));
    let a = Csr::try_new(1, 3, vec![0u32, 3], vec![0, 1, 2], vec![1.0f32, -1.0, 1e-8]).unwrap();
    let b = serial::error_bound(&a, 1.0, &[1.0, 1.0, 1.0], 0.0, &[0.0]);
    let g = 5.0 * (f32::EPSILON as f64 / 2.0);
    assert!((b[0] - 2.0 * g / (1.0 - g) * (2.0 + 1e-8)).abs() < 1e-12);
    assert!(serial::within(&[1.0f32], &[1.0 + 1e-3], &[1e-4]).is_err());
    assert!(serial::within(&[f32::NAN], &[f32::NAN], &[0.0]).is_ok());
}
