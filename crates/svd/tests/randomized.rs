//! The randomized SVD ([`Method::Randomized`]) against a dense SVD (faer): exact when the sketch
//! spans the smaller dimension (every small case, rank-deficient and zero ones included), to
//! `1e-8 · σ₁` on a decaying spectrum, and on a flat one each reported residual equal to the one
//! computed on the host from the returned vectors, with a dense singular value within it; the
//! CPU fallback and the GPU against the twin.
use gpu_svd::{serial, svd, Config, Method, Svd};
use gpu_testkit::{gpu_test, rng};
use rand::Rng;
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{generate, Csr};

mod common;
use common::{check_against_dense, dense_sigma, from_dense, small_cases};

fn cfg(rank: usize, method: Method) -> Config {
    Config { rank, tol: 1e-10, vectors: true, method, ..Config::default() }
}

/// A sketch as wide as the smaller dimension spans it: the answer is the exact SVD.
#[test]
fn a_sketch_spanning_the_space_is_exact() {
    let (mut r, _seed) = rng();
    let whole = Method::Randomized { oversample: 1000, power_iters: 1 };
    for (name, a, rank) in small_cases(&mut r) {
        for block in [None, Some(3)] {
            let s = serial::svd(&a, &Config { block, ..cfg(rank, whole) }).unwrap_or_else(|e| panic!("{name}: {e}"));
            check_against_dense(&format!("randomized {name} block {block:?}"), &a, &s, rank);
        }
        let s = gpu_svd::cpu::svd(&a, &cfg(rank, whole)).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_against_dense(&format!("randomized cpu {name}"), &a, &s, rank);
    }
}

/// `m × n` with singular values `decay^i` and random singular vectors (dense, as CSR).
fn spectrum(m: usize, n: usize, decay: f64, r: &mut impl Rng) -> Csr<u32, f64> {
    let k = m.min(n);
    let orth = |rows: usize, r: &mut dyn rand::RngCore| {
        let g = faer::Mat::<f64>::from_fn(rows, k, |_, _| r.random_range(-1.0..1.0));
        g.qr().compute_thin_Q()
    };
    let (u, v) = (orth(m, r), orth(n, r));
    let mut d = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            d[i * n + j] = (0..k).map(|t| u[(i, t)] * decay.powi(t as i32) * v[(j, t)]).sum();
        }
    }
    from_dense(m, n, &d)
}

/// Residuals computed on the host from the answer's vectors: `sqrt(‖A v − σ u‖² + ‖Aᵀ u − σ v‖²)`.
fn host_residuals(a: &Csr<u32, f64>, s: &Svd) -> Vec<f64> {
    let (m, n) = (a.rows() as usize, a.cols() as usize);
    let at = a.transpose();
    (0..s.sigma.len())
        .map(|i| {
            let (u, v) = (&s.u[i * m..(i + 1) * m], &s.v[i * n..(i + 1) * n]);
            let (mut av, mut atu) = (vec![0.0; m], vec![0.0; n]);
            gpu_spmv::serial::spmv(a, 1.0, v, 0.0, &mut av);
            gpu_spmv::serial::spmv(&at, 1.0, u, 0.0, &mut atu);
            let r1: f64 = av.iter().zip(u).map(|(x, y)| (x - s.sigma[i] * y).powi(2)).sum();
            let r2: f64 = atu.iter().zip(v).map(|(x, y)| (x - s.sigma[i] * y).powi(2)).sum();
            (r1 + r2).sqrt()
        })
        .collect()
}

/// A decaying spectrum (`0.7^i`, tall and wide): 8 triplets from a sketch of 18 columns and
/// four power iterations, to `1e-8 · σ₁`.
#[test]
fn a_decaying_spectrum_is_found_to_the_tolerance() {
    let (mut r, _seed) = rng();
    for (m, n) in [(300, 120), (90, 260)] {
        let a = spectrum(m, n, 0.7, &mut r);
        let want = dense_sigma(&a);
        let s = serial::svd(&a, &Config { tol: 1e-8, ..cfg(8, Method::RANDOMIZED) }).unwrap();
        assert!(s.converged, "{m}x{n}: residuals {:?}", s.residual);
        for i in 0..8 {
            assert!((s.sigma[i] - want[i]).abs() <= 1e-8 * want[0], "{m}x{n}: σ{} = {:e}, dense {:e}", i + 1, s.sigma[i], want[i]);
        }
        assert_eq!(s.restarts, 0);
        assert_eq!(s.products, 2 * (2 * 4 + 2) + 2, "2 products (16 + 2 columns) a sweep, 10 sweeps, then the finish's 2 (one chunk of 8)");
    }
}

/// A flat spectrum (uniform random sparse): the answer is not converged at `1e-10`, says so, and
/// reports the residuals it reached: each equals the host's, and a dense singular value lies
/// within it of each `σ`.
#[test]
fn the_residuals_reached_are_reported() {
    let (mut r, _seed) = rng();
    let seed: u64 = r.random();
    let a = generate::uniform::<f64>(600, 200, 6000, seed).unwrap();
    let want = dense_sigma(&a);
    for q in [0, 2] {
        let s = serial::svd(&a, &cfg(6, Method::Randomized { oversample: 4, power_iters: q })).unwrap();
        assert!(!s.converged, "q = {q}: a flat spectrum at 1e-10 in one sketch");
        let host = host_residuals(&a, &s);
        for (i, ((&h, &res), &sg)) in host.iter().zip(&s.residual).zip(&s.sigma).enumerate() {
            assert!((h - res).abs() <= 1e-9 * want[0], "q = {q}: residual {res:e} reported, {h:e} on the host");
            let near = want.iter().map(|w| (w - sg).abs()).fold(f64::INFINITY, f64::min);
            assert!(near <= res + 1e-12 * want[0], "q = {q}: σ{} = {sg:e} is {near:e} from the dense σ, residual {res:e}", i + 1);
        }
    }
}

gpu_test!(fn gpu_randomized_matches_the_twin(gpu) {
    let (mut r, _seed) = rng();
    let s: u64 = r.random();
    let cases = [
        ("tall-skinny 20000x300", generate::tall_skinny::<f64>(20_000, 300, 6, s).unwrap()),
        ("uniform wide 800x6000", generate::uniform::<f64>(800, 6000, 40_000, s ^ 5).unwrap()),
    ];
    for ((name, a), layout) in cases.iter().flat_map(|c| [gpu_svd::Layout::Csrc, gpu_svd::Layout::Auto].map(move |l| (c, l))) {
        let c = Config { rank: 6, tol: 1e-10, method: Method::RANDOMIZED, layout, ..Config::default() };
        let g = svd(gpu, &DeviceCsr::upload(gpu, a).unwrap(), &c).unwrap();
        let t = serial::svd(a, &c).unwrap();
        for i in 0..6 {
            assert!((g.sigma[i] - t.sigma[i]).abs() <= 1e-8 * t.sigma[0], "{name} {layout:?}: σ{} GPU {:e} twin {:e}", i + 1, g.sigma[i], t.sigma[i]);
            assert!((g.residual[i] - t.residual[i]).abs() <= 1e-8 * t.sigma[0], "{name} {layout:?}: residual GPU {:e} twin {:e}", g.residual[i], t.residual[i]);
        }
    }
    let a = spectrum(400, 150, 0.7, &mut r);
    let g = svd(gpu, &DeviceCsr::upload(gpu, &a).unwrap(), &Config { rank: 8, tol: 1e-8, vectors: true, method: Method::RANDOMIZED, ..Config::default() }).unwrap();
    assert!(g.converged);
    check_against_dense("gpu decaying 400x150", &a, &g, 8);
});
