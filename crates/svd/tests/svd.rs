//! The truncated SVD against a dense SVD (faer) on small matrices — tall, wide, square, rank
//! deficient, zero, 1 × 1 — to `1e-10 · σ₁`, the GPU against the twin on larger ones, residuals
//! checked, the errors and a run that hits the restart cap (an answer that says so, no hang).
use gpu_svd::{serial, svd, Config, Error, Layout, Svd};
use gpu_testkit::{gpu_test, rng, Gpu};
use rand::rngs::StdRng;
use rand::Rng;
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{generate, Csr};

mod common;
use common::{check_against_dense, from_dense, small_cases};

fn cfg(rank: usize) -> Config {
    Config { rank, tol: 1e-12, vectors: true, ..Config::default() }
}

/// The twin at its default block and single-vector (the CPU fallback's default), rank-deficient
/// and zero matrices among the cases: the left side's breakdown guard at work.
#[test]
fn twin_matches_a_dense_svd() {
    let (mut r, _seed) = rng();
    for (name, a, rank) in small_cases(&mut r) {
        for block in [None, Some(1)] {
            let s = serial::svd(&a, &Config { block, ..cfg(rank) }).unwrap_or_else(|e| panic!("{name}: {e}"));
            check_against_dense(&format!("{name} block {block:?}"), &a, &s, rank);
        }
    }
}

/// The CPU fallback (threads, row gathers): the same dense reference, centered too, and the twin's
/// σ on matrices of many row chunks (tall and wide).
#[test]
fn cpu_fallback_matches_a_dense_svd_and_the_twin() {
    let (mut r, _seed) = rng();
    for (name, a, rank) in small_cases(&mut r) {
        let s = gpu_svd::cpu::svd(&a, &cfg(rank)).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_against_dense(&format!("cpu {name}"), &a, &s, rank);
    }
    for (name, a, rank) in centered_cases(&mut r) {
        let s = gpu_svd::cpu::svd(&a, &Config { center: true, ..cfg(rank) }).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_against_dense(&format!("cpu centered {name}"), &centered_dense(&a), &s, rank);
    }
    let seed: u64 = r.random();
    for a in [generate::uniform::<f64>(12_000, 300, 48_000, seed).unwrap(), generate::uniform::<f64>(250, 10_000, 40_000, seed ^ 5).unwrap()] {
        let c = Config { rank: 6, tol: 1e-10, ..Config::default() };
        let (t, f) = (serial::svd(&a, &c).unwrap(), gpu_svd::cpu::svd(&a, &c).unwrap());
        assert!(t.converged && f.converged);
        for (x, y) in t.sigma.iter().zip(&f.sigma) {
            assert!((x - y).abs() <= 1e-12 * t.sigma[0], "{}x{}: twin σ {x:e}, CPU {y:e}", a.rows(), a.cols());
        }
    }
}

#[test]
fn bad_settings_are_errors() {
    let a = generate::uniform::<f64>(30, 20, 100, 1).unwrap();
    assert!(matches!(serial::svd(&a, &cfg(21)), Err(Error::RankTooLarge { rank: 21, rows: 30, cols: 20 })));
    assert!(matches!(serial::svd(&a, &cfg(0)), Err(Error::RankTooLarge { .. })));
    assert!(matches!(serial::svd(&a, &Config { block: Some(17), ..cfg(2) }), Err(Error::Config(_))));
    assert!(matches!(serial::svd(&a, &Config { tol: 0.0, ..cfg(2) }), Err(Error::Config(_))));
    assert!(matches!(serial::svd(&a, &Config { tol: f64::NAN, ..cfg(2) }), Err(Error::Config(_))));
    let empty = Csr::<u32, f64>::try_new(0, 5, vec![0], vec![], vec![]).unwrap();
    assert!(matches!(serial::svd(&empty, &cfg(1)), Err(Error::RankTooLarge { .. })));
}

/// A run stopped by the restart cap says so, with its estimates, instead of hanging.
#[test]
fn the_restart_cap_is_reported() {
    let a = generate::uniform::<f64>(3000, 400, 20_000, 9).unwrap();
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = calls.clone();
    let observer = gpu_svd::Observer::new(move |e| {
        seen.fetch_add(matches!(e, gpu_svd::Event::Cycle { .. }) as usize, std::sync::atomic::Ordering::Relaxed);
    });
    let c = Config { rank: 10, block: Some(2), krylov: Some(12), max_restarts: 2, tol: 1e-14, observer, ..Config::default() };
    let s = serial::svd(&a, &c).unwrap();
    assert!(!s.converged);
    assert_eq!(s.restarts, 2);
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 3);
    assert!(s.estimate.iter().any(|&e| e > 1e-14 * s.sigma[0]));
}

fn gpu_run(gpu: &Gpu, a: &Csr<u32, f64>, c: &Config) -> Svd {
    svd(gpu, &DeviceCsr::upload(gpu, a).unwrap(), c).unwrap()
}

gpu_test!(fn gpu_matches_a_dense_svd(gpu) {
    let (mut r, _seed) = rng();
    for (name, a, rank) in small_cases(&mut r) {
        let s = gpu_run(gpu, &a, &cfg(rank));
        check_against_dense(&name, &a, &s, rank);
        // The CSR pair's row-major products (blocks of 4).
        let s = gpu_run(gpu, &a, &Config { layout: Layout::CsrPair, block: Some(4), ..cfg(rank) });
        check_against_dense(&format!("{name} (CSR pair, block 4)"), &a, &s, rank);
    }
});

gpu_test!(fn gpu_matches_the_twin(gpu) {
    let (mut r, _seed) = rng();
    let s: u64 = r.random();
    let cases = [
        ("tall-skinny 20000x300", generate::tall_skinny::<f64>(20_000, 300, 6, s).unwrap()),
        ("uniform wide 800x6000", generate::uniform::<f64>(800, 6000, 40_000, s ^ 5).unwrap()),
        // Past 2^16 rows: the chunked dot products, with leftover rows.
        ("tall-skinny 70001x150", generate::tall_skinny::<f64>(70_001, 150, 5, s ^ 7).unwrap()),
    ];
    // Both layouts: CSRC at blocks of 2 and 3, the pair's row-major kernels at blocks of 3 (groups
    // of 4 lanes; `Auto` takes the pair from 3 vectors where it fits), 8 and 16.
    let runs = [(Layout::Auto, 2), (Layout::Csrc, 3), (Layout::Auto, 3), (Layout::CsrPair, 8), (Layout::CsrPair, 16)];
    for ((name, a), (layout, block)) in cases.iter().flat_map(|c| runs.iter().map(move |r| (c, *r))) {
        let c = Config { rank: 6, block: Some(block), tol: 1e-10, layout, ..Config::default() };
        let g = gpu_run(gpu, a, &c);
        let t = serial::svd(a, &c).unwrap();
        assert!(g.converged && t.converged, "{name} {layout:?} block {block}");
        for i in 0..6 {
            assert!((g.sigma[i] - t.sigma[i]).abs() <= 1e-8 * t.sigma[0], "{name} {layout:?} block {block}: σ{} GPU {:e} twin {:e}", i + 1, g.sigma[i], t.sigma[i]);
            assert!(g.residual[i] <= 1e-8 * g.sigma[0], "{name} {layout:?} block {block}: residual {:e}", g.residual[i]);
        }
    }
    let e = svd(gpu, &DeviceCsr::upload(gpu, &cases[0].1).unwrap(), &cfg(301));
    assert!(matches!(e, Err(Error::RankTooLarge { .. })));
});

/// f32 matrices: their values widened to f64 give the f64 SVD of the same values (the twin bit for
/// bit; the GPU, whose transposed products use atomics, within 1e-8 of σ₁ as for f64).
#[test]
fn f32_values_are_widened_on_the_twin() {
    let a = generate::tall_skinny::<f64>(3000, 120, 6, 11).unwrap();
    let a32 = a.clone().map_values(|v| v as f32);
    let a64 = a32.clone().map_values(f64::from);
    let c = Config { rank: 5, tol: 1e-10, ..Config::default() };
    let (s32, s64) = (serial::svd(&a32, &c).unwrap(), serial::svd(&a64, &c).unwrap());
    assert!(s32.sigma.iter().zip(&s64.sigma).all(|(x, y)| x.to_bits() == y.to_bits()), "{:?} vs {:?}", s32.sigma, s64.sigma);
}

gpu_test!(fn gpu_takes_f32_values(gpu) {
    let (mut r, _seed) = rng();
    for a in [generate::tall_skinny::<f64>(20_000, 300, 6, r.random()).unwrap(), generate::uniform::<f64>(800, 6000, 40_000, r.random()).unwrap()] {
        let a32 = a.clone().map_values(|v| v as f32);
        let a64 = a32.clone().map_values(f64::from);
        let c = Config { rank: 6, block: Some(2), tol: 1e-10, ..Config::default() };
        let g32 = svd(gpu, &DeviceCsr::upload(gpu, &a32).unwrap(), &c).unwrap();
        let t64 = serial::svd(&a64, &c).unwrap();
        assert!(g32.converged);
        for i in 0..6 {
            assert!((g32.sigma[i] - t64.sigma[i]).abs() <= 1e-8 * t64.sigma[0], "σ{}: f32 on the GPU {:e}, f64 twin {:e}", i + 1, g32.sigma[i], t64.sigma[i]);
        }
    }
});

/// `a − 1 μᵀ` (μ the column means) as a dense-built CSR: the reference of the centered SVD.
fn centered_dense(a: &Csr<u32, f64>) -> Csr<u32, f64> {
    let (m, n) = (a.rows() as usize, a.cols() as usize);
    let mut d = vec![0.0; m * n];
    for i in 0..m {
        for k in a.ptr()[i] as usize..a.ptr()[i + 1] as usize {
            d[i * n + a.idx()[k] as usize] += a.vals()[k];
        }
    }
    let mu: Vec<f64> = (0..n).map(|j| (0..m).map(|i| d[i * n + j]).sum::<f64>() / m as f64).collect();
    for i in 0..m {
        for j in 0..n {
            d[i * n + j] -= mu[j];
        }
    }
    from_dense(m, n, &d)
}

fn centered_cases(r: &mut StdRng) -> Vec<(String, Csr<u32, f64>, usize)> {
    small_cases(r).into_iter().filter(|(name, _, _)| !name.starts_with("zero") && name != "1x1").collect()
}

/// Sparse PCA: `Config::center` gives the SVD of the column-centered matrix (dense reference),
/// tall and wide (the operator transposed), vectors checked against the centered operator.
#[test]
fn twin_centers_columns() {
    let (mut r, _seed) = rng();
    for (name, a, rank) in centered_cases(&mut r) {
        let s = serial::svd(&a, &Config { center: true, ..cfg(rank) }).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_against_dense(&format!("centered {name}"), &centered_dense(&a), &s, rank);
    }
}

gpu_test!(fn gpu_centers_columns(gpu) {
    let (mut r, _seed) = rng();
    for (name, a, rank) in centered_cases(&mut r) {
        let s = gpu_run(gpu, &a, &Config { center: true, ..cfg(rank) });
        check_against_dense(&format!("centered {name}"), &centered_dense(&a), &s, rank);
    }
});

// `svd_into`: the vectors written into caller-lent device blocks (with a leading dimension past
// the rows) equal the host vectors of `svd`, tall and wide (the operator transposed).
gpu_test!(fn vectors_into_device_blocks(gpu) {
    let (mut r, _seed) = rng();
    for a in [generate::tall_skinny::<f64>(20_000, 300, 6, r.random()).unwrap(), generate::uniform::<f64>(800, 6000, 40_000, r.random()).unwrap()] {
        let (m, n, k) = (a.rows() as usize, a.cols() as usize, 6usize);
        let c = Config { rank: k, block: Some(2), tol: 1e-10, vectors: true, ..Config::default() };
        let d = DeviceCsr::upload(gpu, &a).unwrap();
        let host = svd(gpu, &d, &c).unwrap();
        let (lu, lv) = (m + 3, n + 5);
        let mut ub = gpu.alloc_zeros::<f64>(lu * k).unwrap();
        let mut vb = gpu.alloc_zeros::<f64>(lv * k).unwrap();
        let dev = {
            let mut uv = gpu_runtime::DenseViewMut::new(gpu_runtime::DeviceViewMut::of(&mut ub), m as u64, k as u64, lu as u64).unwrap();
            let mut vv = gpu_runtime::DenseViewMut::new(gpu_runtime::DeviceViewMut::of(&mut vb), n as u64, k as u64, lv as u64).unwrap();
            gpu_svd::svd_into(gpu, &d, &c, &mut uv, &mut vv).unwrap()
        };
        assert!(dev.u.is_empty() && dev.v.is_empty());
        // Two runs: the transposed products add by atomics, so the answers agree to rounding, and
        // each vector up to its sign (the triplet's: the same sign for u and v).
        for (g, h) in dev.sigma.iter().zip(&host.sigma) {
            assert!((g - h).abs() <= 1e-12 * host.sigma[0], "σ {g} vs {h}");
        }
        let (uh, vh) = (gpu.download(&ub).unwrap(), gpu.download(&vb).unwrap());
        for i in 0..k {
            let dot: f64 = (0..n).map(|t| vh[i * lv + t] * host.v[i * n + t]).sum();
            let sign = dot.signum();
            assert!(dot.abs() > 0.5, "v{i}: not the same vector");
            for t in 0..m {
                assert!((sign * uh[i * lu + t] - host.u[i * m + t]).abs() <= 1e-9, "u[{t}, {i}]");
            }
            for t in 0..n {
                assert!((sign * vh[i * lv + t] - host.v[i * n + t]).abs() <= 1e-9, "v[{t}, {i}]");
            }
            // The padding past the rows stays as it was (zeros).
            assert!(uh[i * lu + m..(i + 1) * lu].iter().all(|&x| x == 0.0), "u's padding");
        }
        let mut small = gpu.alloc_zeros::<f64>(m * (k - 1)).unwrap();
        let mut uv = gpu_runtime::DenseViewMut::packed(gpu_runtime::DeviceViewMut::of(&mut small), m as u64).unwrap();
        let mut vv = gpu_runtime::DenseViewMut::new(gpu_runtime::DeviceViewMut::of(&mut vb), n as u64, k as u64, lv as u64).unwrap();
        assert!(matches!(gpu_svd::svd_into(gpu, &d, &c, &mut uv, &mut vv), Err(Error::Config(_))));
    }
});
