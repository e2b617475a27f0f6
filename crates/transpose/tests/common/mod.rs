//! What the transpose test binaries share: the generated matrices.
use rand::rngs::StdRng;
use rand::Rng;
use sptrans_matrix::{generate, Csr, Value};

/// A random matrix of every generator kind, at sizes drawn around `scale` nonzeros.
pub fn generated<T: Value>(r: &mut StdRng, scale: u64) -> Vec<(String, Csr<u32, T>)> {
    let s = r.random_range(0..u64::MAX);
    let (m, n) = (r.random_range(1..=scale), r.random_range(1..=scale));
    let nnz = r.random_range(0..=(m * n).min(4 * scale));
    let k = r.random_range(1..=(scale as f64).sqrt() as u64 + 1);
    let mut out = vec![
        (format!("uniform {m}x{n} {nnz}"), generate::uniform::<T>(m, n, nnz, s)),
        (format!("rmat scale {}", k.ilog2() + 4), generate::rmat::<T>(k.ilog2() + 4, 3 * scale, 0.57, 0.19, 0.19, s)),
        (format!("laplacian2d {k}"), generate::laplacian_2d::<T>(k)),
        (format!("laplacian3d {}", k.min(40)), generate::laplacian_3d::<T>(k.min(40))),
        (format!("banded {m}"), generate::banded::<T>(m, k.min(m - 1).min(5), k.min(m - 1).min(3), s)),
        (format!("tall-skinny {m}x{}", n.min(33)), generate::tall_skinny::<T>(m, n.min(33), n.min(33).min(5), s)),
        (format!("dense row {m}x{n} {nnz}"), generate::dense_row::<T>(m, n, nnz.max(n), s)),
        (format!("dense col {m}x{n} {nnz}"), generate::dense_col::<T>(m, n, nnz.max(m), s)),
    ]
    .into_iter()
    .filter_map(|(name, a)| a.ok().map(|a| (name, a)))
    .collect::<Vec<_>>();
    for (m, n) in [(0u64, 0u64), (0, 5), (5, 0), (1, 1), (3, 4)] {
        out.push((format!("empty {m}x{n}"), Csr::try_new(m, n, vec![0; m as usize + 1], vec![], vec![]).unwrap()));
    }
    out
}
