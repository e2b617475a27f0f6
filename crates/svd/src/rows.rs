//! The CPU fallback's sparse products: `A · X` and `Aᵀ · U` both as row gathers (`Aᵀ` kept as
//! its own CSR, so no product scatters), over the rows on rayon's threads, with the `k` vectors
//! packed row by row first so that one nonzero reads one run of `k` values instead of `k`
//! scattered ones — or one vector at a time, where the vectors' footprint would leave the cache
//! (the first product of each kind with `k > 1` times both ways and keeps the faster). Each
//! output row is summed in stored order either way: the result does not depend on the thread
//! count or the way chosen.
use gpu_csrc::Op;
use rayon::prelude::*;
use sptrans_matrix::Csr;

/// Rows per rayon task.
const ROWS_PER_TASK: usize = 2048;

/// `A` and `Aᵀ` as CSR, and the packing buffers.
pub(crate) struct RowProducts<'a> {
    a: &'a Csr<u32, f64>,
    at: Csr<u32, f64>,
    /// `x` packed row-major (`xn × k`).
    packed: Vec<f64>,
    /// The product row-major (`on × k`), before it is laid out column-major.
    result: Vec<f64>,
    /// Per op (`A`, `Aᵀ`): whether packed gathers beat one vector at a time (`None`: not timed yet).
    packed_wins: [Option<bool>; 2],
}

impl<'a> RowProducts<'a> {
    /// Builds `Aᵀ` (on the host, `Csr::transpose`).
    pub(crate) fn new(a: &'a Csr<u32, f64>) -> Self {
        Self { a, at: a.transpose(), packed: Vec::new(), result: Vec::new(), packed_wins: [None; 2] }
    }

    /// `(rows, cols)` of `A`.
    pub(crate) fn dims(&self) -> (usize, usize) {
        (self.a.rows() as usize, self.a.cols() as usize)
    }

    /// `out = op(A) · x` for `k` column-major vectors (`1 ≤ k ≤ 16`, or any `k`).
    pub(crate) fn multiply(&mut self, op: Op, x: &[f64], k: usize, out: &mut [f64]) {
        let m = match op {
            Op::NoTranspose => self.a,
            Op::Transpose => &self.at,
        };
        let (on, xn) = (m.rows() as usize, m.cols() as usize);
        debug_assert_eq!(x.len(), xn * k);
        debug_assert_eq!(out.len(), on * k);
        if k == 0 || on == 0 {
            return;
        }
        if k == 1 {
            gather::<1>(m, x, out);
            return;
        }
        let which = usize::from(op == Op::Transpose);
        match self.packed_wins[which] {
            Some(true) => self.packed(op, x, k, out),
            Some(false) => by_vector(m, x, k, out),
            None => {
                let t = std::time::Instant::now();
                by_vector(m, x, k, out);
                let one = t.elapsed();
                let t = std::time::Instant::now();
                self.packed(op, x, k, out);
                self.packed_wins[which] = Some(t.elapsed() < one);
            }
        }
    }

    /// [`RowProducts::multiply`] with the vectors packed row by row.
    fn packed(&mut self, op: Op, x: &[f64], k: usize, out: &mut [f64]) {
        let m = match op {
            Op::NoTranspose => self.a,
            Op::Transpose => &self.at,
        };
        let (on, xn) = (m.rows() as usize, m.cols() as usize);
        if on == 0 || k == 0 {
            return;
        }
        self.packed.resize(xn * k, 0.0);
        self.result.resize(on * k, 0.0);
        self.packed.par_chunks_mut(ROWS_PER_TASK * k).enumerate().for_each(|(t, chunk)| {
            let j0 = t * ROWS_PER_TASK;
            for (dj, row) in chunk.chunks_mut(k).enumerate() {
                for (c, v) in row.iter_mut().enumerate() {
                    *v = x[j0 + dj + c * xn];
                }
            }
        });
        let result = &mut self.result[..on * k];
        match k {
            2 => gather::<2>(m, &self.packed, result),
            4 => gather::<4>(m, &self.packed, result),
            8 => gather::<8>(m, &self.packed, result),
            _ => gather_any(m, &self.packed, k, result),
        }
        let result = &self.result;
        out.par_chunks_mut(on).enumerate().for_each(|(c, col)| {
            for (i, o) in col.iter_mut().enumerate() {
                *o = result[i * k + c];
            }
        });
    }
}

/// One column-major vector at a time.
fn by_vector(m: &Csr<u32, f64>, x: &[f64], k: usize, out: &mut [f64]) {
    let (on, xn) = (m.rows() as usize, m.cols() as usize);
    for c in 0..k {
        gather::<1>(m, &x[c * xn..(c + 1) * xn], &mut out[c * on..(c + 1) * on]);
    }
}

/// `out[i·K + c] = Σ a_ij x[j·K + c]` over the rows of `m` (row-major `K` vectors).
fn gather<const K: usize>(m: &Csr<u32, f64>, x: &[f64], out: &mut [f64]) {
    let (ptr, idx, val) = (m.ptr(), m.idx(), m.vals());
    out.par_chunks_mut(ROWS_PER_TASK * K).enumerate().for_each(|(t, chunk)| {
        let i0 = t * ROWS_PER_TASK;
        gather_rows::<K>(ptr, idx, val, x, i0, chunk);
    });
}

/// Rows `i0 ..` of [`gather`] into `chunk`.
#[inline(never)]
fn gather_rows<const K: usize>(ptr: &[u32], idx: &[u32], val: &[f64], x: &[f64], i0: usize, chunk: &mut [f64]) {
    for (di, row) in chunk.chunks_exact_mut(K).enumerate() {
        let i = i0 + di;
        let mut acc = [0.0f64; K];
        for h in ptr[i] as usize..ptr[i + 1] as usize {
            let (j, a) = (idx[h] as usize, val[h]);
            let xs = &x[j * K..j * K + K];
            for c in 0..K {
                acc[c] += a * xs[c];
            }
        }
        row.copy_from_slice(&acc);
    }
}

/// [`gather`] for a `k` known at run time.
fn gather_any(m: &Csr<u32, f64>, x: &[f64], k: usize, out: &mut [f64]) {
    let (ptr, idx, val) = (m.ptr(), m.idx(), m.vals());
    out.par_chunks_mut(ROWS_PER_TASK * k).enumerate().for_each(|(t, chunk)| {
        let i0 = t * ROWS_PER_TASK;
        for (di, row) in chunk.chunks_exact_mut(k).enumerate() {
            let i = i0 + di;
            row.iter_mut().for_each(|v| *v = 0.0);
            for h in ptr[i] as usize..ptr[i + 1] as usize {
                let (j, a) = (idx[h] as usize, val[h]);
                for (o, xv) in row.iter_mut().zip(&x[j * k..j * k + k]) {
                    *o += a * xv;
                }
            }
        }
    });
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
                    // Both ways give the same bits.
                    let mut other = vec![f64::NAN; on * k];
                    if k > 1 {
                        let packed = rows.packed_wins[usize::from(op == Op::Transpose)] == Some(true);
                        if packed {
                            by_vector(if op == Op::NoTranspose { &a } else { &rows.at }, &x, k, &mut other);
                        } else {
                            rows.packed(op, &x, k, &mut other);
                        }
                        assert!(other.iter().zip(&got).all(|(p, q)| p.to_bits() == q.to_bits()), "{m}x{n} k={k} {op:?}");
                    }
                    // Both sum the same products in different orders: within 1e-12 of each
                    // row's magnitude (rows of at most a few thousand terms of |a x| ≤ 1).
                    let bound = gpu_csrc::serial::error_bound(&a, op, 1.0, &x, k, 0.0, &vec![0.0; on * k]);
                    for (i, ((w, g), b)) in want.iter().zip(&got).zip(&bound).enumerate() {
                        assert!((w - g).abs() <= 2.0 * b, "{m}x{n} k={k} {op:?} entry {i}: {w} vs {g} (bound {b})");
                    }
                }
            }
        }
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
                r.packed_wins = [None; 2];
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
