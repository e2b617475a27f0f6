//! The host backends: the same algorithm on the host. The twin's products are the CSRC twin's
//! (`gpu_csrc::serial::Csrc::multiply`) and its dense operations faer's sequential matmul; the
//! CPU fallback ([`crate::cpu`]) gathers and scatters over `A`'s CSR rows ([`crate::rows`]) and runs
//! its dense operations as the one-pass loops of [`crate::skinny`], both on rayon's threads.
use gpu_csrc::serial::Csrc;
use gpu_csrc::Op;

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

use crate::lanczos::Backend;
use crate::Result;

/// Where a host backend's sparse products come from.
pub(crate) enum Products<'a> {
    /// The CSRC twin: the specification, sequential.
    Twin(&'a Csrc<f64>),
    /// Row gathers and scatters over `A`, on threads ([`crate::rows::RowProducts`]).
    Rows(crate::rows::RowProducts<'a>),
}

impl Products<'_> {
    fn dims(&self) -> (usize, usize) {
        match self {
            Products::Twin(c) => (c.rows() as usize, c.cols() as usize),
            Products::Rows(r) => r.dims(),
        }
    }

    /// `out = op(A) · x` for `k` column-major vectors.
    fn multiply(&mut self, op: Op, x: &[f64], k: usize, out: &mut [f64]) {
        match self {
            Products::Twin(c) => c.multiply(op, 1.0, x, k, 0.0, out),
            Products::Rows(r) => r.multiply(op, x, k, out),
        }
    }
}

/// Columns `c0 .. c0 + k` of a block as a matrix (dense products run through faer's matmul:
/// blocked and vectorized; sequential for the twin, so that it gives the same bits every run).
fn cols(b: &HostBlock, c0: usize, k: usize) -> MatRef<'_, f64> {
    MatRef::from_column_major_slice(&b.data[c0 * b.rows..(c0 + k) * b.rows], b.rows, k)
}

/// A column-major host block.
pub(crate) struct HostBlock {
    rows: usize,
    data: Vec<f64>,
}

pub(crate) struct HostBackend<'a> {
    pub c: Products<'a>,
    /// The operator is the stored matrix's transpose (a wide matrix).
    pub transposed: bool,
    /// The QR slots (`svd_kernels::qr::slot::SLOT` values each).
    pub slots: Vec<Vec<f64>>,
    /// [`crate::Config::center`]: the column means `μ` of `A`.
    pub mu: Option<Vec<f64>>,
}

impl HostBackend<'_> {
    /// The CPU fallback's backend (row products): its dense operations run as the threaded
    /// tall-skinny loops of [`crate::skinny`]; the twin's through faer, sequential.
    fn threaded(&self) -> bool {
        matches!(self.c, Products::Rows(_))
    }

    /// Centers every later product (`A − 1 μᵀ`); returns `μ = Aᵀ 1 / m`.
    pub(crate) fn center(&mut self) -> Vec<f64> {
        let (m, n) = self.c.dims();
        let mut mu = vec![0.0; n];
        if m > 0 {
            self.c.multiply(Op::Transpose, &vec![1.0; m], 1, &mut mu);
            let inv = 1.0 / m as f64;
            mu.iter_mut().for_each(|v| *v *= inv);
        }
        self.mu = Some(mu.clone());
        mu
    }
}

impl HostBlock {
    fn cols(&self, c0: usize, k: usize) -> &[f64] {
        &self.data[c0 * self.rows..(c0 + k) * self.rows]
    }
}

impl Backend for HostBackend<'_> {
    type Block = HostBlock;

    fn shape(&self) -> (usize, usize) {
        let (r, c) = self.c.dims();
        if self.transposed {
            (c, r)
        } else {
            (r, c)
        }
    }

    fn alloc(&mut self, rows: usize, cols: usize) -> Result<HostBlock> {
        Ok(HostBlock { rows, data: vec![0.0; rows * cols] })
    }

    fn set(&mut self, blk: &mut HostBlock, c0: usize, k: usize, data: &[f64]) -> Result<()> {
        let rows = blk.rows;
        blk.data[c0 * rows..(c0 + k) * rows].copy_from_slice(data);
        Ok(())
    }

    fn get(&mut self, blk: &HostBlock, c0: usize, k: usize) -> Result<Vec<f64>> {
        Ok(blk.cols(c0, k).to_vec())
    }

    fn product(&mut self, op: Op, x: &HostBlock, x0: usize, out: &mut HostBlock, o0: usize, k: usize) -> Result<()> {
        let stored = if self.transposed { op.flip() } else { op };
        let rows = out.rows;
        self.c.multiply(stored, x.cols(x0, k), k, &mut out.data[o0 * rows..(o0 + k) * rows]);
        if let Some(mu) = &self.mu {
            // out −= left · (rightᵀ x) in A's orientation: left = 1, right = μ for A·x; left = μ,
            // right = 1 for Aᵀ·x.
            for j in 0..k {
                let xc = &x.data[(x0 + j) * x.rows..(x0 + j + 1) * x.rows];
                let oc = &mut out.data[(o0 + j) * rows..(o0 + j + 1) * rows];
                match stored {
                    Op::NoTranspose => {
                        let t: f64 = mu.iter().zip(xc).map(|(a, b)| a * b).sum();
                        oc.iter_mut().for_each(|o| *o -= t);
                    }
                    Op::Transpose => {
                        let t: f64 = xc.iter().sum();
                        oc.iter_mut().zip(mu).for_each(|(o, m)| *o -= m * t);
                    }
                }
            }
        }
        Ok(())
    }

    fn dot(&mut self, x: &HostBlock, x0: usize, c: usize, y: &HostBlock, y0: usize, k: usize) -> Result<Vec<f64>> {
        if self.threaded() {
            return Ok(crate::skinny::dot(x.cols(x0, c), c, y.cols(y0, k), k, x.rows));
        }
        let mut out = vec![0.0; c * k];
        if c * k > 0 {
            let (xm, ym) = (cols(x, x0, c), cols(y, y0, k));
            matmul(MatMut::from_column_major_slice_mut(&mut out, c, k), Accum::Replace, xm.transpose(), ym, 1.0, Par::Seq);
        }
        Ok(out)
    }

    fn update_within(&mut self, blk: &mut HostBlock, y0: usize, k: usize, x0: usize, c: usize, coef: &[f64]) -> Result<()> {
        if c == 0 || k == 0 {
            return Ok(());
        }
        let rows = blk.rows;
        // Disjoint column ranges of one block: split the storage between them.
        let (x, y) = if x0 < y0 {
            let (a, b) = blk.data.split_at_mut(y0 * rows);
            (&a[x0 * rows..(x0 + c) * rows], &mut b[..k * rows])
        } else {
            let (a, b) = blk.data.split_at_mut(x0 * rows);
            (&b[..c * rows], &mut a[y0 * rows..(y0 + k) * rows])
        };
        if self.threaded() {
            crate::skinny::combine(y, k, x, c, coef, rows, true);
            return Ok(());
        }
        let (xm, cm) = (MatRef::from_column_major_slice(x, rows, c), MatRef::from_column_major_slice(coef, c, k));
        matmul(MatMut::from_column_major_slice_mut(y, rows, k), Accum::Add, xm, cm, 1.0, Par::Seq);
        Ok(())
    }

    fn combine(&mut self, out: &mut HostBlock, o0: usize, k: usize, x: &HostBlock, x0: usize, c: usize, coef: &[f64]) -> Result<()> {
        let rows = out.rows;
        let o = &mut out.data[o0 * rows..(o0 + k) * rows];
        if c == 0 {
            o.iter_mut().for_each(|v| *v = 0.0);
            return Ok(());
        }
        if self.threaded() {
            crate::skinny::combine(o, k, x.cols(x0, c), c, coef, rows, false);
            return Ok(());
        }
        let cm = MatRef::from_column_major_slice(coef, c, k);
        matmul(MatMut::from_column_major_slice_mut(o, rows, k), Accum::Replace, cols(x, x0, c), cm, 1.0, Par::Seq);
        Ok(())
    }

    fn mul_in_place(&mut self, blk: &mut HostBlock, c0: usize, b: usize, coef: &[f64]) -> Result<()> {
        let rows = blk.rows;
        if self.threaded() {
            crate::skinny::combine_in_place(&mut blk.data[c0 * rows..(c0 + b) * rows], rows, b, b, coef);
            return Ok(());
        }
        let mut row = vec![0.0; b];
        for t in 0..rows {
            for (a, v) in row.iter_mut().enumerate() {
                *v = blk.data[t + (c0 + a) * rows];
            }
            for j in 0..b {
                blk.data[t + (c0 + j) * rows] = (0..b).map(|a| row[a] * coef[a + j * b]).sum();
            }
        }
        Ok(())
    }

    fn shrink(&mut self, blk: &mut HostBlock, c: usize, k: usize, coef: &[f64], tmp: &mut HostBlock) -> Result<()> {
        if !self.threaded() {
            return crate::lanczos::shrink_through(self, blk, c, k, coef, tmp);
        }
        let rows = blk.rows;
        crate::skinny::combine_in_place(&mut blk.data, rows, c, k, coef);
        Ok(())
    }

    /// The CPU fallback shrinks in place and keeps its temporaries narrow (memory is the host's
    /// limit); the twin keeps the default.
    fn temp_cols(&self, kk: usize, b: usize) -> usize {
        if self.threaded() {
            b.max(2)
        } else {
            crate::lanczos::wide_temps(kk, b)
        }
    }

    /// The CPU fallback: the coefficients are on the host anyway.
    fn selective_reorth(&self) -> bool {
        self.threaded()
    }

    fn reserve_slots(&mut self, n: usize) -> Result<()> {
        self.slots = vec![vec![0.0; svd_kernels::qr::slot::SLOT]; n];
        Ok(())
    }

    fn qr_fast(&mut self, blk: &mut HostBlock, _rows: usize, c0: usize, b: usize, s: usize, one_pass: bool, abs: f64) -> Result<()> {
        use svd_kernels::qr::{qr_step, slot};
        if b * b > svd_kernels::MAX_PAIRS as usize || s >= self.slots.len() {
            return Err(crate::Error::Internal(format!("qr_fast: block of {b} columns, slot {s}")));
        }
        for pass in 1..=2u32 {
            if pass == 2 && self.slots[s][slot::NEED2] == 0.0 {
                break;
            }
            let g = self.dot(blk, c0, b, blk, c0, b)?;
            qr_step(&g, b, abs, pass, one_pass, &mut self.slots[s], f64::sqrt);
            let off = if pass == 1 { slot::INV1 } else { slot::INV2 };
            let inv = self.slots[s][off..off + b * b].to_vec();
            self.mul_in_place(blk, c0, b, &inv)?;
        }
        Ok(())
    }

    fn update_neg_rt(&mut self, blk: &mut HostBlock, y0: usize, x0: usize, b: usize, s: usize) -> Result<()> {
        let off = svd_kernels::qr::slot::NEG_RT;
        let coef = self.slots[s][off..off + b * b].to_vec();
        self.update_within(blk, y0, b, x0, b, &coef)
    }

    fn fetch_slots(&mut self, n: usize, b: usize) -> Result<Vec<(Vec<f64>, bool)>> {
        use svd_kernels::qr::slot;
        Ok(self.slots[..n].iter().map(|v| (v[slot::R..slot::R + b * b].to_vec(), v[slot::BAD] != 0.0)).collect())
    }

    fn copy_within(&mut self, blk: &mut HostBlock, s0: usize, d0: usize, k: usize) -> Result<()> {
        let rows = blk.rows;
        blk.data.copy_within(s0 * rows..(s0 + k) * rows, d0 * rows);
        Ok(())
    }

    fn copy(&mut self, src: &HostBlock, s0: usize, dst: &mut HostBlock, d0: usize, k: usize) -> Result<()> {
        let rows = src.rows;
        dst.data[d0 * rows..(d0 + k) * rows].copy_from_slice(src.cols(s0, k));
        Ok(())
    }
}
