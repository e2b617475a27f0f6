//! The CPU fallback's sparse products over `A`'s CSR rows on rayon's threads, holding nothing of
//! the matrix's size beside `A` itself (ARPACK-sized memory: no stored `Aᵀ`):
//! - `A · X` gathers each output row; the `k` vectors are packed row by row first so that one
//!   nonzero reads one run of `k` values instead of `k` scattered ones — or it gathers one vector
//!   at a time, where the vectors' footprint would leave the cache (the first product with
//!   `k > 1` times both ways and keeps the faster). Each output row is summed in stored order
//!   either way: the result does not depend on the thread count or the way chosen.
//! - `Aᵀ · U` scatters: `A`'s rows are cut into parts of equal nonzeros, each part adds its rows'
//!   contributions into its own row-major accumulator (`cols × k`), and the accumulators are
//!   summed into the column-major result. There are as many parts as threads, but never more
//!   accumulator memory than a stored `Aᵀ` would take; the rounding depends on the parts'
//!   number (so on the thread count), not on scheduling.
use gpu_csrc::Op;
use rayon::prelude::*;
use sptrans_matrix::Csr;

use crate::skinny::row_tasks;

/// Rows per rayon task.
const ROWS_PER_TASK: usize = 2048;

/// `A`, and one scratch buffer: the packed vectors of `A · X`, or the accumulators of `Aᵀ · U`.
pub(crate) struct RowProducts<'a> {
    a: &'a Csr<u32, f64>,
    scratch: Vec<f64>,
    /// Whether packed gathers beat one vector at a time for `A · X` (`None`: not timed yet).
    packed_wins: Option<bool>,
}

impl<'a> RowProducts<'a> {
    /// Borrows `A` (nothing is copied or transposed).
    pub(crate) fn new(a: &'a Csr<u32, f64>) -> Self {
        Self { a, scratch: Vec::new(), packed_wins: None }
    }

    /// `(rows, cols)` of `A`.
    pub(crate) fn dims(&self) -> (usize, usize) {
        (self.a.rows() as usize, self.a.cols() as usize)
    }

    /// The parts `Aᵀ · U` scatters in: one per thread, at most as many as keep the
    /// accumulators (`parts · cols · k` values) within the size of a stored `Aᵀ`, at least one.
    pub(crate) fn parts(&self, k: usize) -> usize {
        let (n, nnz) = (self.a.cols() as usize, self.a.nnz() as usize);
        let transpose_bytes = nnz * 12 + (n + 1) * 4;
        let per_part = (n * k * 8).max(1);
        rayon::current_num_threads().min(1 + transpose_bytes / per_part).min(self.a.rows() as usize).max(1)
    }

    /// `out = op(A) · x` for `k` column-major vectors (`1 ≤ k ≤ 16`, or any `k`).
    pub(crate) fn multiply(&mut self, op: Op, x: &[f64], k: usize, out: &mut [f64]) {
        let (m, n) = self.dims();
        let (xn, on) = if op == Op::NoTranspose { (n, m) } else { (m, n) };
        debug_assert_eq!(x.len(), xn * k);
        debug_assert_eq!(out.len(), on * k);
        if k == 0 || on == 0 {
            return;
        }
        if op == Op::Transpose {
            self.scatter(x, k, out);
            return;
        }
        if k == 1 {
            gather_columns::<1>(self.a, x, &mut out[..]);
            return;
        }
        match self.packed_wins {
            Some(true) => self.packed(x, k, out),
            Some(false) => by_vector(self.a, x, k, out),
            None => {
                let t = std::time::Instant::now();
                by_vector(self.a, x, k, out);
                let one = t.elapsed();
                let t = std::time::Instant::now();
                self.packed(x, k, out);
                self.packed_wins = Some(t.elapsed() < one);
            }
        }
    }

    /// `A · X` with the vectors packed row by row, the result written column-major.
    fn packed(&mut self, x: &[f64], k: usize, out: &mut [f64]) {
        let xn = self.a.cols() as usize;
        grow(&mut self.scratch, xn * k);
        let packed = &mut self.scratch[..xn * k];
        packed.par_chunks_mut(ROWS_PER_TASK * k).enumerate().for_each(|(t, chunk)| {
            let j0 = t * ROWS_PER_TASK;
            for (dj, row) in chunk.chunks_mut(k).enumerate() {
                for (c, v) in row.iter_mut().enumerate() {
                    *v = x[j0 + dj + c * xn];
                }
            }
        });
        let packed = &self.scratch[..xn * k];
        match k {
            2 => gather_columns::<2>(self.a, packed, out),
            4 => gather_columns::<4>(self.a, packed, out),
            8 => gather_columns::<8>(self.a, packed, out),
            _ => gather_any(self.a, packed, k, out),
        }
    }

    /// `out = Aᵀ · x` by scattering `A`'s rows into per-part accumulators, then summing them.
    fn scatter(&mut self, x: &[f64], k: usize, out: &mut [f64]) {
        let (m, n) = self.dims();
        let parts = self.parts(k);
        let (ptr, idx, val) = (self.a.ptr(), self.a.idx(), self.a.vals());
        // Part p takes the rows from the first whose offset reaches p · nnz / parts.
        let bounds: Vec<usize> = sptrans_matrix::dist::balanced_starts(ptr, parts).into_iter().map(|b| b as usize).collect();
        grow(&mut self.scratch, parts * n * k);
        self.scratch[..parts * n * k].par_chunks_mut((n * k).max(1)).enumerate().for_each(|(p, acc)| {
            acc.iter_mut().for_each(|v| *v = 0.0);
            let rows = bounds[p]..bounds[p + 1].max(bounds[p]);
            match k {
                1 => scatter_rows::<1>(ptr, idx, val, x, m, rows, acc),
                2 => scatter_rows::<2>(ptr, idx, val, x, m, rows, acc),
                4 => scatter_rows::<4>(ptr, idx, val, x, m, rows, acc),
                8 => scatter_rows::<8>(ptr, idx, val, x, m, rows, acc),
                _ => scatter_any(ptr, idx, val, x, m, k, rows, acc),
            }
        });
        let acc = &self.scratch[..parts * n * k];
        row_tasks(out, n, k, ROWS_PER_TASK).into_par_iter().enumerate().for_each(|(t, mut cols)| {
            let r0 = t * ROWS_PER_TASK;
            for (c, col) in cols.iter_mut().enumerate() {
                for (dr, o) in col.iter_mut().enumerate() {
                    let r = r0 + dr;
                    *o = (0..parts).map(|p| acc[p * n * k + r * k + c]).sum();
                }
            }
        });
    }
}

/// `buf` grown to at least `len` values (never shrunk: one allocation for the whole run).
fn grow(buf: &mut Vec<f64>, len: usize) {
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
}

/// One column-major vector at a time.
fn by_vector(m: &Csr<u32, f64>, x: &[f64], k: usize, out: &mut [f64]) {
    let (on, xn) = (m.rows() as usize, m.cols() as usize);
    for c in 0..k {
        gather_columns::<1>(m, &x[c * xn..(c + 1) * xn], &mut out[c * on..(c + 1) * on]);
    }
}

/// `out[i + c·rows] = Σ a_ij x[j·K + c]` over the rows of `m` (`K` vectors packed row-major,
/// the result column-major).
fn gather_columns<const K: usize>(m: &Csr<u32, f64>, x: &[f64], out: &mut [f64]) {
    let (ptr, idx, val) = (m.ptr(), m.idx(), m.vals());
    row_tasks(out, m.rows() as usize, K, ROWS_PER_TASK).into_par_iter().enumerate().for_each(|(t, mut cols)| {
        gather_rows::<K>(ptr, idx, val, x, t * ROWS_PER_TASK, &mut cols);
    });
}

/// Rows `i0 ..` of [`gather_columns`] into `cols` (each column's slice of those rows).
#[inline(never)]
fn gather_rows<const K: usize>(ptr: &[u32], idx: &[u32], val: &[f64], x: &[f64], i0: usize, cols: &mut [&mut [f64]]) {
    let len = cols.first().map_or(0, |c| c.len());
    #[allow(clippy::needless_range_loop)] // di indexes K columns' slices.
    for di in 0..len {
        let i = i0 + di;
        let mut acc = [0.0f64; K];
        for h in ptr[i] as usize..ptr[i + 1] as usize {
            let (j, a) = (idx[h] as usize, val[h]);
            let xs = &x[j * K..j * K + K];
            for c in 0..K {
                acc[c] += a * xs[c];
            }
        }
        for c in 0..K {
            cols[c][di] = acc[c];
        }
    }
}

/// [`gather_columns`] for a `k` known at run time.
fn gather_any(m: &Csr<u32, f64>, x: &[f64], k: usize, out: &mut [f64]) {
    let (ptr, idx, val) = (m.ptr(), m.idx(), m.vals());
    row_tasks(out, m.rows() as usize, k, ROWS_PER_TASK).into_par_iter().enumerate().for_each(|(t, mut cols)| {
        let i0 = t * ROWS_PER_TASK;
        let mut acc = vec![0.0; k];
        let len = cols.first().map_or(0, |c| c.len());
        for di in 0..len {
            let i = i0 + di;
            acc.iter_mut().for_each(|v| *v = 0.0);
            for h in ptr[i] as usize..ptr[i + 1] as usize {
                let (j, a) = (idx[h] as usize, val[h]);
                for (o, xv) in acc.iter_mut().zip(&x[j * k..j * k + k]) {
                    *o += a * xv;
                }
            }
            for (c, col) in cols.iter_mut().enumerate() {
                col[di] = acc[c];
            }
        }
    });
}

/// Rows `rows` of `A` scattered: `acc[j·K + c] += a_ij x[i + c·m]` (`x` column-major `m × K`,
/// `acc` row-major).
#[inline(never)]
fn scatter_rows<const K: usize>(ptr: &[u32], idx: &[u32], val: &[f64], x: &[f64], m: usize, rows: std::ops::Range<usize>, acc: &mut [f64]) {
    for i in rows {
        let mut u = [0.0f64; K];
        for c in 0..K {
            u[c] = x[i + c * m];
        }
        for h in ptr[i] as usize..ptr[i + 1] as usize {
            let (j, a) = (idx[h] as usize, val[h]);
            let o = &mut acc[j * K..j * K + K];
            for c in 0..K {
                o[c] += a * u[c];
            }
        }
    }
}

/// [`scatter_rows`] for a `k` known at run time.
#[allow(clippy::too_many_arguments)]
fn scatter_any(ptr: &[u32], idx: &[u32], val: &[f64], x: &[f64], m: usize, k: usize, rows: std::ops::Range<usize>, acc: &mut [f64]) {
    let mut u = vec![0.0; k];
    for i in rows {
        for (c, v) in u.iter_mut().enumerate() {
            *v = x[i + c * m];
        }
        for h in ptr[i] as usize..ptr[i + 1] as usize {
            let (j, a) = (idx[h] as usize, val[h]);
            for (o, uc) in acc[j * k..j * k + k].iter_mut().zip(&u) {
                *o += a * uc;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_csrc_twin_for_every_k_and_both_ops() {
        for (m, n) in [(0usize, 5usize), (1, 1), (37, 5000), (5000, 37), (1500, 1400)] {
            let a = sptrans_matrix::generate::uniform::<f64>(m as u64, n as u64, (m * n / 7) as u64, 3).unwrap();
            let twin = gpu_csrc::serial::Csrc::from_csr(&a);
            let mut rows = RowProducts::new(&a);
            for k in [1usize, 2, 3, 4, 8, 16] {
                for op in [Op::NoTranspose, Op::Transpose] {
                    let (xn, on) = if op == Op::NoTranspose { (n, m) } else { (m, n) };
                    let x: Vec<f64> = (0..xn * k).map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0).collect();
                    let (mut want, mut got) = (vec![0.0; on * k], vec![f64::NAN; on * k]);
                    twin.multiply(op, 1.0, &x, k, 0.0, &mut want);
                    rows.multiply(op, &x, k, &mut got);
                    // A · X: both ways give the same bits.
                    if k > 1 && op == Op::NoTranspose {
                        let mut other = vec![f64::NAN; on * k];
                        if rows.packed_wins == Some(true) {
                            by_vector(&a, &x, k, &mut other);
                        } else {
                            rows.packed(&x, k, &mut other);
                        }
                        assert!(other.iter().zip(&got).all(|(p, q)| p.to_bits() == q.to_bits()), "{m}x{n} k={k} {op:?}");
                    }
                    // Both sum the same products in different orders: within twice the twin's
                    // stated rounding bound of each entry.
                    let bound = gpu_csrc::serial::error_bound(&a, op, 1.0, &x, k, 0.0, &vec![0.0; on * k]);
                    for (i, ((w, g), b)) in want.iter().zip(&got).zip(&bound).enumerate() {
                        assert!((w - g).abs() <= 2.0 * b, "{m}x{n} k={k} {op:?} entry {i}: {w} vs {g} (bound {b})");
                    }
                }
            }
        }
    }

    #[test]
    fn scatter_agrees_across_thread_counts() {
        // 1 to 5 threads: 1 to 5 parts (the accumulators' cap is far above on this matrix).
        let a = sptrans_matrix::generate::uniform::<f64>(3001, 2999, 60_000, 9).unwrap();
        let twin = gpu_csrc::serial::Csrc::from_csr(&a);
        for k in [1usize, 2, 5] {
            let x: Vec<f64> = (0..3001 * k).map(|i| ((i * 104_729) % 997) as f64 / 498.0 - 1.0).collect();
            let mut want = vec![0.0; 2999 * k];
            twin.multiply(Op::Transpose, 1.0, &x, k, 0.0, &mut want);
            let bound = gpu_csrc::serial::error_bound(&a, Op::Transpose, 1.0, &x, k, 0.0, &vec![0.0; 2999 * k]);
            for threads in 1..=5 {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let (parts, got) = pool.install(|| {
                    let mut rows = RowProducts::new(&a);
                    let mut got = vec![f64::NAN; 2999 * k];
                    rows.multiply(Op::Transpose, &x, k, &mut got);
                    (rows.parts(k), got)
                });
                assert_eq!(parts, threads);
                for (i, ((w, g), b)) in want.iter().zip(&got).zip(&bound).enumerate() {
                    assert!((w - g).abs() <= 2.0 * b, "k={k} {threads} threads, entry {i}: {w} vs {g} (bound {b})");
                }
            }
        }
    }

    #[test]
    fn accumulators_never_outgrow_a_stored_transpose() {
        // 10 nonzeros over a million columns: one part whatever the thread count.
        let a = sptrans_matrix::generate::uniform::<f64>(10, 1_000_000, 10, 1).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        assert_eq!(pool.install(|| RowProducts::new(&a).parts(2)), 1);
    }
}

#[cfg(test)]
mod timing {
    use super::*;

    #[test]
    #[ignore = "timing study: cargo test --release -p gpu-svd --lib timing -- --ignored --nocapture"]
    fn product_times() {
        let a = sptrans_matrix::generate::uniform::<f64>(500_000, 500_000, 5_000_000, 1).unwrap();
        let mut r = RowProducts::new(&a);
        for k in [1usize, 2, 4] {
            let x = vec![1.0; 500_000 * k];
            let mut out = vec![0.0; 500_000 * k];
            for op in [Op::NoTranspose, Op::Transpose] {
                r.packed_wins = None;
                r.multiply(op, &x, k, &mut out);
                eprintln!("packed wins: {:?}", r.packed_wins);
                let t = std::time::Instant::now();
                for _ in 0..10 {
                    r.multiply(op, &x, k, &mut out);
                }
                eprintln!("k {k} {op:?}: {:.2} ms", t.elapsed().as_secs_f64() * 100.0);
            }
        }
    }
}
