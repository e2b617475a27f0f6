//! The CPU fallback: `y = alpha * A * x + beta * y` on every thread of rayon's pool
//! (`RAYON_NUM_THREADS` sets their number), for machines without a GPU. Each task runs the
//! serial twin's own row loop ([`crate::serial::spmv`]) on its chunk of rows, so the result equals
//! the twin's bit for bit; the twin stays the sequential specification the tests use.
use rayon::prelude::*;
use sptrans_matrix::Csr;

use crate::{Result, SpmvValue};

/// Rows one task takes (rayon splits further by stealing; a long row only lengthens its task).
const ROWS_PER_TASK: usize = 2048;

/// `y = alpha * A * x + beta * y` on the host's threads; with `beta == 0`, `y` is not read.
///
/// # Errors
/// [`crate::Error::LengthMismatch`] when `x` is not `cols` long or `y` not `rows` long.
pub fn spmv<T: SpmvValue + Send + Sync>(a: &Csr<u32, T>, alpha: T, x: &[T], beta: T, y: &mut [T]) -> Result<()> {
    crate::check_vectors(a.rows(), a.cols(), x.len(), y.len())?;
    y.par_chunks_mut(ROWS_PER_TASK).enumerate().for_each(|(c, ys)| crate::serial::rows(a, alpha, x, beta, c * ROWS_PER_TASK, ys));
    Ok(())
}

#[cfg(test)]
mod tests {
    use sptrans_matrix::generate;

    /// Bit for bit the twin, on rows of awkward counts around the task size, with and without
    /// `beta`, and wrong lengths refused.
    #[test]
    fn equals_the_twin_bit_for_bit() {
        for (m, n, nnz) in [(0u64, 0u64, 0u64), (1, 1, 1), (2047, 300, 20_000), (2049, 5000, 40_000), (10_000, 10_000, 300_000)] {
            let a = if nnz == 0 {
                sptrans_matrix::Csr::try_new(m, n, vec![0; m as usize + 1], vec![], vec![]).unwrap()
            } else {
                generate::uniform::<f64>(m, n, nnz, m ^ 7).unwrap()
            };
            let x: Vec<f64> = (0..n).map(|j| (j as f64 * 0.37).sin()).collect();
            let y0: Vec<f64> = (0..m).map(|i| (i as f64 * 0.11).cos()).collect();
            for beta in [0.0, -0.75] {
                let (mut want, mut got) = (y0.clone(), y0.clone());
                crate::serial::spmv(&a, 1.5, &x, beta, &mut want);
                super::spmv(&a, 1.5, &x, beta, &mut got).unwrap();
                assert!(want.iter().zip(&got).all(|(w, g)| w.to_bits() == g.to_bits()), "{m}x{n} beta {beta}");
            }
        }
        let a = generate::uniform::<f32>(10, 8, 30, 1).unwrap();
        assert!(matches!(super::spmv(&a, 1.0, &[0.0; 7], 0.0, &mut [0.0; 10]), Err(crate::Error::LengthMismatch { .. })));
        assert!(matches!(super::spmv(&a, 1.0, &[0.0; 8], 0.0, &mut [0.0; 11]), Err(crate::Error::LengthMismatch { .. })));
    }
}
