//! Small dense algebra on the host, column-major `Vec<f64>`: the block Cholesky with its
//! deficiency test, the inverse of an upper-triangular block, and the SVD of the block
//! bidiagonal matrix (faer). Blocks are at most `MAX_K × MAX_K`; the bidiagonal matrix is at most
//! a few hundred square.

/// Cholesky `G = RᵀR` of a symmetric `b × b` Gram matrix, `R` upper triangular; `Err(columns)`
/// lists the columns whose vectors are (numerically) dependent on the earlier ones
/// ([`svd_kernels::qr::cholesky`], the code the device runs too).
pub(crate) fn cholesky(g: &[f64], b: usize, abs: f64) -> Result<Vec<f64>, Vec<usize>> {
    let mut r = vec![0.0; b * b];
    let bad = svd_kernels::qr::cholesky(g, b, abs, &mut r, f64::sqrt);
    if bad == 0 {
        Ok(r)
    } else {
        Err((0..b).filter(|j| bad >> j & 1 == 1).collect())
    }
}

/// The inverse of an upper-triangular `b × b` matrix with a nonzero diagonal.
pub(crate) fn inv_upper(r: &[f64], b: usize) -> Vec<f64> {
    let mut x = vec![0.0; b * b];
    svd_kernels::qr::inv_upper(r, b, &mut x);
    x
}

/// The product of two upper-triangular `b × b` matrices.
pub(crate) fn mul_upper(x: &[f64], y: &[f64], b: usize) -> Vec<f64> {
    let mut z = vec![0.0; b * b];
    svd_kernels::qr::mul_upper(x, y, b, &mut z);
    z
}

/// `Xᵀ` of a column-major `rows × cols` matrix.
pub(crate) fn transpose(x: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut t = vec![0.0; rows * cols];
    for j in 0..cols {
        for i in 0..rows {
            t[j + i * cols] = x[i + j * rows];
        }
    }
    t
}

/// `(U, σ, V)`, column-major.
pub(crate) type SvdParts = (Vec<f64>, Vec<f64>, Vec<f64>);

/// The SVD of a square `k × k` matrix: `(U, σ, V)` with `σ` nonincreasing, `U` and `V` column-major.
///
/// # Errors
/// When faer's iteration does not converge (a message).
pub(crate) fn svd(a: &[f64], k: usize) -> Result<SvdParts, String> {
    if k == 0 {
        return Ok((vec![], vec![], vec![]));
    }
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::svd::{self as fsvd, ComputeSvdVectors};
    let m = faer::Mat::<f64>::from_fn(k, k, |i, j| a[i + j * k]);
    let (mut u, mut v, mut s) = (faer::Mat::<f64>::zeros(k, k), faer::Mat::<f64>::zeros(k, k), faer::diag::Diag::<f64>::zeros(k));
    // Sequential: at a few hundred square, threads cost more than they save (faer's default
    // parallel run took 6 ms at 128 × 128 on the H100 host).
    let par = faer::Par::Seq;
    let full = ComputeSvdVectors::Full;
    let mut mem = MemBuffer::new(fsvd::svd_scratch::<f64>(k, k, full, full, par, Default::default()));
    fsvd::svd(m.as_ref(), s.as_mut(), Some(u.as_mut()), Some(v.as_mut()), par, MemStack::new(&mut mem), Default::default())
        .map_err(|e| format!("the SVD of the {k} × {k} bidiagonal matrix did not converge: {e:?}"))?;
    let sig: Vec<f64> = (0..k).map(|i| s.column_vector()[i]).collect();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|&x, &y| sig[y].total_cmp(&sig[x]));
    let mut uo = vec![0.0; k * k];
    let mut vo = vec![0.0; k * k];
    for (c, &o) in order.iter().enumerate() {
        for i in 0..k {
            uo[i + c * k] = u[(i, o)];
            vo[i + c * k] = v[(i, o)];
        }
    }
    Ok((uo, order.iter().map(|&o| sig[o]).collect(), vo))
}

/// A deterministic pseudo-random generator (SplitMix64) for start blocks and replacement
/// vectors, so that the GPU run and its twin start from the same vectors.
pub(crate) struct SplitMix(pub u64);

impl SplitMix {
    /// Uniform in `[-1, 1)`.
    pub fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// `n` values.
    pub fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_inverse_and_svd() {
        // G = RᵀR for R = [[2, 1], [0, 3]].
        let g = [4.0, 2.0, 2.0, 10.0];
        let r = cholesky(&g, 2, 1e-300).unwrap();
        assert!((r[0] - 2.0).abs() < 1e-15 && (r[2] - 1.0).abs() < 1e-15 && (r[3] - 3.0).abs() < 1e-15 && r[1] == 0.0);
        let x = inv_upper(&r, 2);
        let id = mul_upper(&r, &x, 2);
        assert!((id[0] - 1.0).abs() < 1e-15 && id[2].abs() < 1e-15 && (id[3] - 1.0).abs() < 1e-15);
        assert!((x[0] - 0.5).abs() < 1e-15 && (x[2] + 1.0 / 6.0).abs() < 1e-15 && (x[3] - 1.0 / 3.0).abs() < 1e-15);
        // Dependent second column; a zero first column.
        assert_eq!(cholesky(&[1.0, 2.0, 2.0, 4.0], 2, 1e-300), Err(vec![1]));
        assert_eq!(cholesky(&[0.0, 0.0, 0.0, 1.0], 2, 1e-10), Err(vec![0]));
        let (u, s, v) = svd(&[3.0, 0.0, 0.0, 5.0], 2).unwrap();
        assert!((s[0] - 5.0).abs() < 1e-14 && (s[1] - 3.0).abs() < 1e-14);
        assert!((u[1].abs() - 1.0).abs() < 1e-14 && (v[1].abs() - 1.0).abs() < 1e-14);
        let mut r = SplitMix(1);
        assert!(r.vec(1000).iter().all(|x| (-1.0..1.0).contains(x)));
    }
}
