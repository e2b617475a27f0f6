//! The CPU fallback's dense operations on tall blocks of few columns, over row chunks on rayon's
//! threads: each reads its tall operand once (a general matmul packs it first, which doubles
//! the traffic of these memory-bound shapes).
use rayon::prelude::*;

/// Rows per task: a chunk of a few columns stays in L2 while it is used.
const CHUNK: usize = 4096;

/// `Xᵀ Y` (`c × k`, column-major) for column-major `X` (`rows × c`) and `Y` (`rows × k`).
pub(crate) fn dot(x: &[f64], c: usize, y: &[f64], k: usize, rows: usize) -> Vec<f64> {
    let chunks = rows.div_ceil(CHUNK);
    (0..chunks)
        .into_par_iter()
        .fold(
            || vec![0.0; c * k],
            |mut acc, t| {
                let (r0, r1) = (t * CHUNK, ((t + 1) * CHUNK).min(rows));
                // X's chunk read once; Y's (k columns) stays in cache.
                for i in 0..c {
                    let xi = &x[i * rows + r0..i * rows + r1];
                    for j in 0..k {
                        acc[i + j * c] += dot1(xi, &y[j * rows + r0..j * rows + r1]);
                    }
                }
                acc
            },
        )
        .reduce(
            || vec![0.0; c * k],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(s, t)| *s += t);
                a
            },
        )
}

/// `Y = X · coef` (`add`: `Y += X · coef`) for column-major `X` (`rows × c`), `coef` (`c × k`) and
/// `Y` (`rows × k`).
pub(crate) fn combine(y: &mut [f64], k: usize, x: &[f64], c: usize, coef: &[f64], rows: usize, add: bool) {
    row_tasks(y, rows, k, CHUNK).into_par_iter().enumerate().for_each(|(t, mut ys)| {
        let r0 = t * CHUNK;
        if !add {
            ys.iter_mut().for_each(|yj| yj.iter_mut().for_each(|v| *v = 0.0));
        }
        // X's chunk read once; Y's (k columns) stays in cache.
        for i in 0..c {
            for (j, yj) in ys.iter_mut().enumerate() {
                let a = coef[i + j * c];
                axpy(a, &x[i * rows + r0..i * rows + r0 + yj.len()], yj);
            }
        }
    });
}

/// `B[:, 0 .. k] = B[:, 0 .. c] · coef` in place (`k ≤ c`) for a column-major block `B` of `rows`
/// rows whose first `c` columns are `blk`: each task copies its rows of the `c` columns into a
/// buffer of one chunk, then writes the `k` results over them. No temporary of the block's size.
pub(crate) fn combine_in_place(blk: &mut [f64], rows: usize, c: usize, k: usize, coef: &[f64]) {
    debug_assert!(k <= c && blk.len() >= rows * c && coef.len() >= c * k);
    row_tasks(&mut blk[..rows * c], rows, c, CHUNK).into_par_iter().for_each(|mut cols| {
        let len = cols.first().map_or(0, |col| col.len());
        let mut old = Vec::with_capacity(len * c);
        cols.iter().for_each(|col| old.extend_from_slice(col));
        for (j, yj) in cols.iter_mut().take(k).enumerate() {
            yj.iter_mut().for_each(|v| *v = 0.0);
            for i in 0..c {
                axpy(coef[i + j * c], &old[i * len..(i + 1) * len], yj);
            }
        }
    });
}

/// The first `k` columns of the column-major `y` (`rows` rows each) cut into tasks of `chunk`
/// rows: task `t` holds rows `t · chunk ..` of every column, so tasks write disjoint memory.
pub(crate) fn row_tasks(y: &mut [f64], rows: usize, k: usize, chunk: usize) -> Vec<Vec<&mut [f64]>> {
    let mut tasks: Vec<Vec<&mut [f64]>> = (0..rows.div_ceil(chunk)).map(|_| Vec::with_capacity(k)).collect();
    for col in y.chunks_mut(rows.max(1)).take(k) {
        let mut rest: &mut [f64] = col;
        for task in tasks.iter_mut() {
            let (head, tail) = rest.split_at_mut(chunk.min(rest.len()));
            task.push(head);
            rest = tail;
        }
    }
    tasks
}

/// `y += a x`.
#[inline(never)]
fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    y.iter_mut().zip(x).for_each(|(v, xv)| *v += a * xv);
}

/// A dot product in four independent sums (vectorizes without reassociation flags).
#[inline(never)]
fn dot1(a: &[f64], b: &[f64]) -> f64 {
    let mut s = [0.0f64; 4];
    let (ac, bc) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ac.remainder().iter().zip(bc.remainder()).map(|(p, q)| p * q).sum();
    for (p, q) in ac.zip(bc) {
        for l in 0..4 {
            s[l] += p[l] * q[l];
        }
    }
    (s[0] + s[1]) + (s[2] + s[3]) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_and_combine_agree_with_plain_loops() {
        for rows in [0usize, 1, 31, CHUNK - 1, CHUNK + 1, 3 * CHUNK + 17] {
            for (c, k) in [(1usize, 1usize), (5, 2), (48, 2), (3, 16)] {
                let x: Vec<f64> = (0..rows * c).map(|i| ((i * 37) % 101) as f64 / 50.0 - 1.0).collect();
                let y: Vec<f64> = (0..rows * k).map(|i| ((i * 53) % 97) as f64 / 48.0 - 1.0).collect();
                let coef: Vec<f64> = (0..c * k).map(|i| (i % 7) as f64 - 3.0).collect();
                let d = dot(&x, c, &y, k, rows);
                for i in 0..c {
                    for j in 0..k {
                        let want: f64 = (0..rows).map(|r| x[r + i * rows] * y[r + j * rows]).sum();
                        // Sums of `rows` products of magnitude ≤ 1, in another order.
                        assert!((d[i + j * c] - want).abs() <= 1e-13 * (rows as f64 + 1.0), "rows {rows} c {c} k {k}");
                    }
                }
                for kk in [1, k.min(c), c] {
                    let mut blk = x.clone();
                    let coef: Vec<f64> = (0..c * kk).map(|i| (i % 5) as f64 - 2.0).collect();
                    combine_in_place(&mut blk, rows, c, kk, &coef);
                    for r in 0..rows {
                        for j in 0..c {
                            let want = if j < kk { (0..c).map(|i| x[r + i * rows] * coef[i + j * c]).sum() } else { x[r + j * rows] };
                            assert!((blk[r + j * rows] - want).abs() <= 1e-12 * (c as f64 + 1.0), "in place: rows {rows} c {c} k {kk}");
                        }
                    }
                }
                for add in [false, true] {
                    let mut out = y.clone();
                    combine(&mut out, k, &x, c, &coef, rows, add);
                    for r in 0..rows {
                        for j in 0..k {
                            let s: f64 = (0..c).map(|i| x[r + i * rows] * coef[i + j * c]).sum();
                            let want = if add { y[r + j * rows] + s } else { s };
                            assert!((out[r + j * rows] - want).abs() <= 1e-12 * (c as f64 + 1.0), "rows {rows} c {c} k {k} add {add}");
                        }
                    }
                }
            }
        }
    }
}
