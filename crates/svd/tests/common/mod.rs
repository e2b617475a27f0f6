//! Helpers of the SVD tests: matrices from dense arrays, σ of a dense SVD (faer), the small
//! cases every backend is checked on, and the check of an answer against the dense SVD.
#![allow(dead_code)]
use gpu_svd::Svd;
use rand::rngs::StdRng;
use rand::Rng;
use sptrans_matrix::{generate, Csr};

pub fn from_dense(m: usize, n: usize, d: &[f64]) -> Csr<u32, f64> {
    let (mut ptr, mut idx, mut vals) = (vec![0u32], vec![], vec![]);
    for i in 0..m {
        for j in 0..n {
            if d[i * n + j] != 0.0 {
                idx.push(j as u32);
                vals.push(d[i * n + j]);
            }
        }
        ptr.push(idx.len() as u32);
    }
    Csr::try_new(m as u64, n as u64, ptr, idx, vals).unwrap()
}

pub fn dense_sigma(a: &Csr<u32, f64>) -> Vec<f64> {
    let (m, n) = (a.rows() as usize, a.cols() as usize);
    let mut d = faer::Mat::<f64>::zeros(m, n);
    for i in 0..m {
        for k in a.ptr()[i] as usize..a.ptr()[i + 1] as usize {
            d[(i, a.idx()[k] as usize)] = a.vals()[k];
        }
    }
    let s = d.svd().unwrap();
    let mut v: Vec<f64> = (0..m.min(n)).map(|i| s.S().column_vector()[i]).collect();
    v.sort_by(|x, y| y.total_cmp(x));
    v
}

pub fn small_cases(r: &mut StdRng) -> Vec<(String, Csr<u32, f64>, usize)> {
    let s: u64 = r.random();
    let mut out = vec![
        ("uniform 300x60".to_string(), generate::uniform(300, 60, 2000, s).unwrap(), 10),
        ("uniform wide 40x250".to_string(), generate::uniform(40, 250, 1500, s ^ 1).unwrap(), 8),
        ("tall-skinny 500x30".to_string(), generate::tall_skinny(500, 30, 4, s ^ 2).unwrap(), 16),
        ("laplacian2d 9".to_string(), generate::laplacian_2d(9).unwrap(), 5),
        ("square 7x7 all".to_string(), generate::uniform(7, 7, 30, s ^ 3).unwrap(), 7),
        ("1x1".to_string(), Csr::try_new(1, 1, vec![0, 1], vec![0], vec![-2.5]).unwrap(), 1),
        ("zero 50x20".to_string(), Csr::try_new(50, 20, vec![0; 51], vec![], vec![]).unwrap(), 4),
    ];
    // Rank 3: a sum of three outer products; ask for 6.
    let (m, n) = (120, 40);
    let mut d = vec![0.0; m * n];
    for _ in 0..3 {
        let (x, y): (Vec<f64>, Vec<f64>) = ((0..m).map(|_| r.random_range(-1.0..1.0)).collect(), (0..n).map(|_| r.random_range(-1.0..1.0)).collect());
        for i in 0..m {
            for j in 0..n {
                d[i * n + j] += x[i] * y[j];
            }
        }
    }
    out.push(("rank 3 120x40".to_string(), from_dense(m, n, &d), 6));
    out
}

pub fn check_against_dense(name: &str, a: &Csr<u32, f64>, s: &Svd, rank: usize) {
    let want = dense_sigma(a);
    let s1 = want.first().copied().unwrap_or(0.0);
    assert!(s.converged, "{name}: not converged");
    assert_eq!(s.sigma.len(), rank);
    for (i, (&g, &w)) in s.sigma.iter().zip(&want).enumerate() {
        assert!((g - w).abs() <= 1e-10 * s1.max(f64::MIN_POSITIVE), "{name}: σ{} = {g:e}, dense {w:e}", i + 1);
        assert!(s.residual[i] <= 1e-7 * s1.max(1e-300) + 1e-300, "{name}: residual {} of σ{}", s.residual[i], i + 1);
    }
    // The vectors, checked on the host: unit length, and A v = σ u, Aᵀ u = σ v.
    let (m, n) = (a.rows() as usize, a.cols() as usize);
    assert_eq!(s.u.len(), m * rank);
    assert_eq!(s.v.len(), n * rank);
    let at = a.transpose();
    for i in 0..rank {
        let (u, v) = (&s.u[i * m..(i + 1) * m], &s.v[i * n..(i + 1) * n]);
        let mut av = vec![0.0; m];
        gpu_spmv::serial::spmv(a, 1.0, v, 0.0, &mut av);
        let mut atu = vec![0.0; n];
        gpu_spmv::serial::spmv(&at, 1.0, u, 0.0, &mut atu);
        let nv = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((nv - 1.0).abs() < 1e-10, "{name}: ‖v{}‖ = {nv}", i + 1);
        let r1: f64 = av.iter().zip(u).map(|(x, y)| (x - s.sigma[i] * y).powi(2)).sum();
        let r2: f64 = atu.iter().zip(v).map(|(x, y)| (x - s.sigma[i] * y).powi(2)).sum();
        let host = (r1 + r2).sqrt();
        assert!(host <= 1e-7 * s1.max(1e-300) + 1e-300, "{name}: host residual {host:e} of σ{}", i + 1);
        assert!(
            (host - s.residual[i]).abs() <= 1e-9 * s1.max(1e-300) + 1e-300,
            "{name}: residual {:e} reported, {host:e} on the host",
            s.residual[i]
        );
    }
}
