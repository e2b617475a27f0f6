//! Randomized SVD (Halko, Martinsson & Tropp 2011, Algorithms 4.4 and 5.1), written once over the
//! same [`Backend`] as the Lanczos method: for `r` wanted triplets and `L = r + oversample`
//! columns (at most `n`),
//!
//! ```text
//! Q = orth(A Ω)                   Ω random n × L
//! q times:  P = orth(Aᵀ Q),  Q = orth(A P)          (power iterations)
//! W = Aᵀ Q,  P = orth(W),  B = Qᵀ A P = Wᵀ P        (L × L)
//! B = U Σ Vᵀ;  u_i = Q U e_i,  v_i = P V e_i,  σ_i = Σ_ii
//! ```
//!
//! A fixed amount of work (`2 q + 2` sweeps of `L` columns through the products, and the
//! finish's two products a chunk): no stopping test. Its accuracy is whatever the spectrum's
//! decay allows; the answer reports the residuals `sqrt(‖A v − σ u‖² + ‖Aᵀ u − σ v‖²)` computed
//! with the products, and `converged` says whether they all met `tol · σ₁`. Each block of `b`
//! columns is orthogonalized against the ones before it (classical Gram–Schmidt twice) and by
//! CholeskyQR2, as the Lanczos bases are.
use gpu_csrc::Op;

use crate::dense::{self, SplitMix};
use crate::lanczos::{cgs2, finish, qr, Backend};
use crate::{Config, Event, Result, Svd};

/// Columns of the sketch for `r <= n` wanted triplets, `oversample` more, at most `n`.
pub(crate) fn sketch_cols(r: usize, oversample: usize, n: usize) -> usize {
    r.saturating_add(oversample).min(n)
}

/// Orthonormalizes the `l` columns of `blk` (of `rows` rows) block by block (`b` at a time).
#[allow(clippy::too_many_arguments)]
fn orth<B: Backend>(be: &mut B, blk: &mut B::Block, tmp: &mut B::Block, rows: usize, l: usize, b: usize, abs: f64, rng: &mut SplitMix) -> Result<()> {
    for c0 in (0..l).step_by(b) {
        let k = b.min(l - c0);
        cgs2(be, blk, c0, c0, k)?;
        qr(be, blk, tmp, rows, c0, k, c0, abs, rng)?;
    }
    Ok(())
}

/// `out[:, 0 .. l] = op(A) · x[:, 0 .. l]`, `b` columns a product.
fn apply<B: Backend>(be: &mut B, op: Op, x: &B::Block, out: &mut B::Block, l: usize, b: usize, products: &mut usize) -> Result<()> {
    for c0 in (0..l).step_by(b) {
        be.product(op, x, c0, out, c0, b.min(l - c0))?;
        *products += 1;
    }
    Ok(())
}

/// The randomized SVD with `oversample` extra columns and `power_iters` power iterations.
pub(crate) fn run<B: Backend>(
    be: &mut B,
    cfg: &Config,
    a_norm: f64,
    oversample: usize,
    power_iters: usize,
    obs: &mut dyn FnMut(Event<'_>),
) -> Result<Svd> {
    let (m, n) = be.shape();
    let r = cfg.rank;
    let l = sketch_cols(r, oversample, n);
    // (`Config::check` bounded the block to 1 ..= MAX_K on every entry path.)
    let b = cfg.block.unwrap_or(gpu_csrc::MAX_K as usize).min(l);
    let abs = 1e-13 * a_norm.max(f64::MIN_POSITIVE.sqrt());
    let mut rng = SplitMix(cfg.seed);
    let mut pb = be.alloc_side(n, l, false)?;
    let mut qb = be.alloc_side(m, l, true)?;
    let tw = be.temp_cols(l, b).max(l).max(2);
    let mut tn = be.alloc_side(n, tw, false)?;
    let mut tm = be.alloc_side(m, tw, true)?;
    // The last QR's temporary (the first one holds W then).
    let mut tq = be.alloc_side(n, b, false)?;
    let mut products = 0usize;
    let omega = rng.vec(n * l);
    be.set(&mut pb, 0, l, &omega)?;
    apply(be, Op::NoTranspose, &pb, &mut qb, l, b, &mut products)?;
    orth(be, &mut qb, &mut tm, m, l, b, abs, &mut rng)?;
    for _ in 0..power_iters {
        apply(be, Op::Transpose, &qb, &mut pb, l, b, &mut products)?;
        orth(be, &mut pb, &mut tn, n, l, b, abs, &mut rng)?;
        apply(be, Op::NoTranspose, &pb, &mut qb, l, b, &mut products)?;
        orth(be, &mut qb, &mut tm, m, l, b, abs, &mut rng)?;
    }
    // W = Aᵀ Q kept in the temporary, P = orth(W), B = Wᵀ P (= Qᵀ A P).
    apply(be, Op::Transpose, &qb, &mut pb, l, b, &mut products)?;
    be.copy(&pb, 0, &mut tn, 0, l)?;
    orth(be, &mut pb, &mut tq, n, l, b, abs, &mut rng)?;
    let bm = be.dot(&tn, 0, l, &pb, 0, l)?;
    let t_svd = std::time::Instant::now();
    let (u, sig, v) = dense::svd(&bm, l).map_err(crate::Error::Internal)?;
    if cfg.profile {
        obs(Event::Phase { what: "small SVD", seconds: t_svd.elapsed().as_secs_f64() });
    }
    let mut out = finish(be, cfg, &pb, &qb, &mut tn, &mut tm, tw, l, &u, &sig, &v, Vec::new(), false, 0, products, b, 0)?;
    let s1 = out.sigma.first().copied().unwrap_or(0.0);
    out.estimate = out.residual.clone();
    out.converged = s1 == 0.0 || out.residual.iter().all(|&x| x <= cfg.tol * s1);
    let worst = out.residual.iter().cloned().fold(0.0, f64::max);
    obs(Event::Cycle { restart: 0, residual: if s1 > 0.0 { worst / s1 } else { 0.0 } });
    Ok(out)
}
