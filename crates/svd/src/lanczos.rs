//! The algorithm, written once over a [`Backend`] (the GPU's, or the host's for the twin): block
//! Golub–Kahan–Lanczos bidiagonalization with one-sided full reorthogonalization and basic
//! restart (Aliaga, Anzt, Quintana-Ortí & Tomás 2023, Figure 6; Golub & Kahan 1965; one-sided
//! reorthogonalization after Simon & Zha 2000).
//!
//! With `A` of `m × n` (`m ≥ n`; a wide matrix is handled as its transpose by the backend), block
//! size `b` and `p` steps, `K = p b`:
//!
//! ```text
//! P₁ = orthonormal random n × b
//! Q₁ R₁ = A P₁                                    (QR)
//! for j = 1 … p:
//!     W = Aᵀ Q_j − P_j R_jᵀ,  reorthogonalized against P₁ … P_j (classical Gram–Schmidt, twice)
//!     j = p: stop (W gives the residuals)
//!     P_{j+1} L = W,  S_j = Lᵀ                    (QR)
//!     Q_{j+1} R_{j+1} = A P_{j+1} − Q_j S_j       (QR; Q is not reorthogonalized)
//! B = upper block bidiagonal (R_j on the diagonal, S_j above);  B = U Σ Vᵀ
//! σ_i ≈ Σ_ii,  v_i = P V e_i,  u_i = Q U e_i;  A v_i = σ_i u_i,  Aᵀ u_i − σ_i v_i = W U_p e_i
//! converged when ‖W U_p e_i‖ ≤ tol · σ₁ for i < r; else restart
//! ```
//!
//! The restart keeps the `l` leading Ritz triplets (the wanted ones and a quarter of the others) and
//! goes on from the residual block, as the thick restart of Baglama & Reichel (2005) and Wu &
//! Simon (2000): `P = [V_l, P₁ …]`, `Q = [U_l, Q₁ …]`, `B` starting with `diag(σ_l)` coupled to the
//! first new block by `C = U_lᵀ A P₁`. (A restart from only `b` Ritz vectors, the paper's basic
//! restart, lost the triplets past the `b`-th at each restart in our tests.)
//!
//! QR is CholeskyQR2 (two passes of Gram matrix, Cholesky, `W R⁻¹`) on the backend, with `R =
//! Qᵀ W` computed at the end; columns found dependent (a zero vector: `A` rank-deficient, or an
//! invariant subspace reached) are replaced by random vectors orthogonalized against the basis.
use gpu_csrc::Op;

use crate::dense::{self, SplitMix};
use crate::{Config, Error, Event, Result, Svd};

/// What the algorithm needs from a machine: column-major dense blocks (`rows × cols`, columns
/// addressed by index), products with the sparse matrix, and three dense operations.
pub(crate) trait Backend {
    /// A dense column-major block store.
    type Block;
    /// `(m, n)` of the operator (`m ≥ n`).
    fn shape(&self) -> (usize, usize);
    /// A block of `rows × cols` (contents unspecified).
    fn alloc(&mut self, rows: usize, cols: usize) -> Result<Self::Block>;
    /// [`Backend::alloc`] of a block of the left side (`left`: the operator's rows, `m`) or the
    /// right side (`n`), for backends that lay the two out differently even when `m = n`. By
    /// default [`Backend::alloc`].
    fn alloc_side(&mut self, rows: usize, cols: usize, _left: bool) -> Result<Self::Block> {
        self.alloc(rows, cols)
    }
    /// Writes `data` (`rows × k`) into columns `c0 .. c0 + k`.
    fn set(&mut self, blk: &mut Self::Block, c0: usize, k: usize, data: &[f64]) -> Result<()>;
    /// Reads columns `c0 .. c0 + k`.
    fn get(&mut self, blk: &Self::Block, c0: usize, k: usize) -> Result<Vec<f64>>;
    /// `out[:, o0 .. o0 + k] = op(A) · x[:, x0 .. x0 + k]` (`k ≤ 16`).
    fn product(&mut self, op: Op, x: &Self::Block, x0: usize, out: &mut Self::Block, o0: usize, k: usize) -> Result<()>;
    /// `x[:, x0 .. x0 + c]ᵀ · y[:, y0 .. y0 + k]` (`c × k`, on the host).
    fn dot(&mut self, x: &Self::Block, x0: usize, c: usize, y: &Self::Block, y0: usize, k: usize) -> Result<Vec<f64>>;
    /// `y[:, y0 .. y0 + k] += x[:, x0 .. x0 + c] · coef` with `x` columns of the same block,
    /// disjoint from the updated ones.
    fn update_within(&mut self, blk: &mut Self::Block, y0: usize, k: usize, x0: usize, c: usize, coef: &[f64]) -> Result<()>;
    /// `out[:, o0 .. o0 + k] = x[:, x0 .. x0 + c] · coef` (`coef` `c × k`), another block.
    #[allow(clippy::too_many_arguments)]
    fn combine(&mut self, out: &mut Self::Block, o0: usize, k: usize, x: &Self::Block, x0: usize, c: usize, coef: &[f64]) -> Result<()>;
    /// Columns `s0 .. s0 + k` of `blk` copied to `d0 .. d0 + k` (`d0 + k ≤ s0`).
    fn copy_within(&mut self, blk: &mut Self::Block, s0: usize, d0: usize, k: usize) -> Result<()>;
    /// One classical Gram–Schmidt pass: `y -= X (Xᵀ y)` for `y` = columns `c0 .. c0 + k` and
    /// `X` = columns `0 .. prior` of the same block (the coefficients may stay on the device).
    fn project_out(&mut self, blk: &mut Self::Block, prior: usize, c0: usize, k: usize) -> Result<()> {
        let c = self.dot(blk, 0, prior, blk, c0, k)?;
        let neg: Vec<f64> = c.iter().map(|x| -x).collect();
        self.update_within(blk, c0, k, 0, prior, &neg)
    }
    /// `blk[:, c0 .. c0 + b] = blk[:, c0 .. c0 + b] · coef` (`coef` `b × b`, `b ≤ MAX_K`).
    fn mul_in_place(&mut self, blk: &mut Self::Block, c0: usize, b: usize, coef: &[f64]) -> Result<()>;
    /// Room for `n` QR slots ([`Backend::qr_fast`]); earlier contents may be lost.
    fn reserve_slots(&mut self, n: usize) -> Result<()>;
    /// CholeskyQR of columns `c0 .. c0 + b` (of `rows` rows) in place with no host round trip:
    /// [`svd_kernels::qr::qr_step`] for each pass (the second skipped when `one_pass` and the first
    /// is well conditioned), `R` and `−Rᵀ` left in slot `s`. Dependent columns only raise the
    /// slot's flag ([`Backend::fetch_slots`]): the block is then unusable.
    #[allow(clippy::too_many_arguments)]
    fn qr_fast(&mut self, blk: &mut Self::Block, rows: usize, c0: usize, b: usize, s: usize, one_pass: bool, abs: f64) -> Result<()>;
    /// `blk[:, y0 .. y0 + b] += blk[:, x0 .. x0 + b] · (−R_sᵀ)` with slot `s`'s `R`.
    fn update_neg_rt(&mut self, blk: &mut Self::Block, y0: usize, x0: usize, b: usize, s: usize) -> Result<()>;
    /// Slots `0 .. n`: each one's `R` (`b × b`) and whether it found dependent columns.
    fn fetch_slots(&mut self, n: usize, b: usize) -> Result<Vec<(Vec<f64>, bool)>>;
    /// Whether the answer's vectors go to destinations the backend holds (device blocks lent
    /// by the caller: [`crate::svd_into`]) through [`Backend::export`] instead of to the host.
    fn exports(&self) -> bool {
        false
    }
    /// Writes columns `c0 .. c0 + k` of `blk`, column `i` scaled by `scale[i]`, as columns
    /// `at .. at + k` of the answer's left (`left`: the operator's rows) or right vectors.
    fn export(&mut self, _blk: &Self::Block, _c0: usize, _k: usize, _scale: &[f64], _left: bool, _at: usize) -> Result<()> {
        Err(Error::Internal("this backend keeps no destinations for vectors".into()))
    }
    /// `dst[:, d0 .. d0 + k] = src[:, s0 .. s0 + k]`.
    fn copy(&mut self, src: &Self::Block, s0: usize, dst: &mut Self::Block, d0: usize, k: usize) -> Result<()>;
    /// The restart's `blk[:, 0 .. k] = blk[:, 0 .. c] · coef` (`coef` `c × k`, `k ≤ c`); `tmp` has
    /// [`Backend::temp_cols`] columns. By default through `tmp` (which then needs `k` columns).
    fn shrink(&mut self, blk: &mut Self::Block, c: usize, k: usize, coef: &[f64], tmp: &mut Self::Block) -> Result<()>
    where
        Self: Sized,
    {
        shrink_through(self, blk, c, k, coef, tmp)
    }
    /// Columns of the two temporaries (`n ×` and `m ×`) for a Krylov dimension `kk` and block
    /// `b`: at least `max(b, 2)` (a QR's copy; the finish's vectors and products, in chunks of
    /// half of them). By default [`wide_temps`], which the default [`Backend::shrink`] needs.
    fn temp_cols(&self, kk: usize, b: usize) -> usize {
        wide_temps(kk, b)
    }
    /// Whether the reorthogonalization may skip its second Gram–Schmidt pass where the first
    /// kept most of each vector's norm (the DGKS criterion, as ARPACK does): it then reads the
    /// Gram coefficients on the host before deciding, a synchronization the GPU avoids. By
    /// default no: two passes always.
    fn selective_reorth(&self) -> bool {
        false
    }
    /// Whether the cycles may take [`Backend::qr_fast`] (by default yes); without it every QR
    /// takes the host's decisions ([`QrWay::Host`]).
    fn fast_qr(&self) -> bool {
        true
    }
}

/// [`Backend::shrink`] through the temporary: `tmp[:, 0 .. k] = blk[:, 0 .. c] · coef`, copied
/// back (`tmp` holds `k` columns).
pub(crate) fn shrink_through<B: Backend>(be: &mut B, blk: &mut B::Block, c: usize, k: usize, coef: &[f64], tmp: &mut B::Block) -> Result<()> {
    be.combine(tmp, 0, k, blk, 0, c, coef)?;
    be.copy(tmp, 0, blk, 0, k)
}

/// Temporaries wide enough for [`shrink_through`]: `max(kk, 2 b)` columns.
pub(crate) fn wide_temps(kk: usize, b: usize) -> usize {
    kk.max(2 * b)
}

/// The Krylov sizes for `r` wanted triplets: `(b, p)` with `K = p b ≤ n`, `K ≥ r`. When the
/// wanted dimension reaches `n`, the whole space is spanned (`K = n`, with the largest block
/// size up to `b` that divides `n`): one cycle is then exact.
pub(crate) fn sizes(cfg: &Config, n: usize) -> (usize, usize) {
    let r = cfg.rank;
    let b = cfg.block.unwrap_or(crate::DEFAULT_BLOCK).min(n).max(1);
    let want = cfg.krylov.unwrap_or((6 * r).max(96)).max(r + b);
    if want >= n {
        let b = (1..=b).rev().find(|d| n % d == 0).unwrap_or(1);
        return (b, n / b);
    }
    let k = want.div_ceil(b) * b;
    if k > n {
        return (1, n);
    }
    (b, k / b)
}

/// Two passes of classical Gram–Schmidt of columns `c0 .. c0 + k` against `0 .. prior`; with
/// [`Backend::selective_reorth`] (and the columns right after the basis, `c0 == prior`), the
/// second only where the first removed more than half of a column's squared norm (Daniel,
/// Gragg, Kaufman & Stewart 1976: otherwise one pass already leaves the column orthogonal to
/// working precision). The first pass's Gram matrix then includes the columns themselves, so
/// their norms come in the same read of the basis.
pub(crate) fn cgs2<B: Backend>(be: &mut B, blk: &mut B::Block, prior: usize, c0: usize, k: usize) -> Result<()> {
    if prior == 0 {
        return Ok(());
    }
    if be.selective_reorth() && c0 == prior {
        let w = prior + k;
        let g = be.dot(blk, 0, w, blk, c0, k)?;
        let mut neg = vec![0.0; prior * k];
        let mut again = false;
        for j in 0..k {
            let mut removed = 0.0;
            for i in 0..prior {
                let c = g[i + j * w];
                neg[i + j * prior] = -c;
                removed += c * c;
            }
            let before = g[prior + j + j * w];
            // NaN norms also take the second pass.
            again |= (before - removed).partial_cmp(&(0.5 * before)).is_none_or(|o| o.is_lt());
        }
        be.update_within(blk, c0, k, 0, prior, &neg)?;
        if again {
            be.project_out(blk, prior, c0, k)?;
        }
        return Ok(());
    }
    for _ in 0..2 {
        be.project_out(blk, prior, c0, k)?;
    }
    Ok(())
}

/// Orthonormalizes columns `c0 .. c0 + b` of `blk` (of `rows` rows), returning `R` (`b × b`) with
/// `W₀ ≈ Q R` for the columns `W₀` on entry; `tmp` holds at least `b` columns of `rows`.
///
/// The usual path is CholeskyQR2 ping-ponging between `blk` and `tmp` (`R = R₂ R₁`, two Gram
/// matrices and two products, no copies). When a Gram matrix shows dependent columns, `blk`
/// still holds `W₀`: it is kept in `tmp`, the dependent columns are replaced by random ones
/// orthogonalized against `0 .. prior`, CholeskyQR2 is repeated, and `R = Qᵀ W₀`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn qr<B: Backend>(
    be: &mut B,
    blk: &mut B::Block,
    tmp: &mut B::Block,
    rows: usize,
    c0: usize,
    b: usize,
    prior: usize,
    abs: f64,
    rng: &mut SplitMix,
) -> Result<Vec<f64>> {
    qr_passes(be, blk, tmp, rows, c0, b, prior, abs, None, rng, false)
}

use svd_kernels::qr::ONE_PASS_COND;

/// [`qr`]; with `one_pass`, a first pass whose `R₁` has a Frobenius condition number below
/// [`ONE_PASS_COND`] is kept as it is (the left side `Q`, which the one-sided
/// reorthogonalization leaves alone anyway: half its QR cost). With `reorth_below`, columns
/// whose Cholesky pivot falls below it are first orthogonalized against `0 .. prior` (the left
/// side near a breakdown: see [`LEFT_BREAKDOWN`]).
#[allow(clippy::too_many_arguments)]
fn qr_passes<B: Backend>(
    be: &mut B,
    blk: &mut B::Block,
    tmp: &mut B::Block,
    rows: usize,
    c0: usize,
    b: usize,
    prior: usize,
    abs: f64,
    reorth_below: Option<f64>,
    rng: &mut SplitMix,
    one_pass: bool,
) -> Result<Vec<f64>> {
    let mut g = be.dot(blk, c0, b, blk, c0, b)?;
    if let Some(soft) = reorth_below {
        if prior > 0 && dense::cholesky(&g, b, soft).is_err() {
            cgs2(be, blk, prior, c0, b)?;
            g = be.dot(blk, c0, b, blk, c0, b)?;
        }
    }
    if let Ok(r1) = dense::cholesky(&g, b, abs) {
        let inv1 = dense::inv_upper(&r1, b);
        if one_pass {
            let fro = |x: &[f64]| x.iter().map(|v| v * v).sum::<f64>().sqrt();
            if fro(&r1) * fro(&inv1) < ONE_PASS_COND {
                be.mul_in_place(blk, c0, b, &inv1)?;
                return Ok(r1);
            }
        }
        be.combine(tmp, 0, b, blk, c0, b, &inv1)?;
        let g2 = be.dot(tmp, 0, b, tmp, 0, b)?;
        if let Ok(r2) = dense::cholesky(&g2, b, abs.min(1e-8)) {
            be.combine(blk, c0, b, tmp, 0, b, &dense::inv_upper(&r2, b))?;
            return Ok(dense::mul_upper(&r2, &r1, b));
        }
    }
    // Dependent columns: blk still holds W₀.
    be.copy(blk, c0, tmp, 0, b)?;
    let mut attempts = 0;
    'outer: loop {
        for _pass in 0..2 {
            let g = be.dot(blk, c0, b, blk, c0, b)?;
            match dense::cholesky(&g, b, abs) {
                Ok(r) => {
                    be.mul_in_place(blk, c0, b, &dense::inv_upper(&r, b))?;
                }
                Err(bad) => {
                    attempts += 1;
                    if attempts > 8 || rows <= prior {
                        return Err(Error::Internal(format!("could not extend an orthonormal basis of {prior} vectors in dimension {rows}")));
                    }
                    for j in bad {
                        let v = rng.vec(rows);
                        be.set(blk, c0 + j, 1, &v)?;
                    }
                    cgs2(be, blk, prior, c0, b)?;
                    continue 'outer;
                }
            }
        }
        break;
    }
    // R = Qᵀ W₀.
    be.dot(blk, c0, b, tmp, 0, b)
}

/// A new left block `Q_{j+1} R = A P_{j+1} − Q_j S_j` whose pivot is below `LEFT_BREAKDOWN ·
/// abs` (`1e-6 ‖A‖_F`) is first reorthogonalized against the whole left basis. The one-sided
/// scheme keeps `Q` orthogonal only through the recurrence: the rounding of `A P − Q S` (about
/// `ε ‖A‖`) divided by a small `R` is the new block's loss of orthogonality. Near a breakdown
/// (`A` rank-deficient, an invariant subspace) `R` is rounding itself, the block is noise, and
/// the Ritz triplets built on it are wrong (single-vector Lanczos on a centered rank-3 matrix
/// reported `σ ≈ 0` converged with a residual of 0.46). At `1e-6 ‖A‖_F` the loss stays below
/// about `1e-10`; a block flagged on the backend's fast path sends the cycle to the host's QR
/// decisions.
const LEFT_BREAKDOWN: f64 = 1e7;

/// The sizes of one cycle: the operator's `m × n`, `l` kept Ritz triplets, `steps` block steps of
/// `b`, and the dependence scale `abs`.
struct Cycle {
    m: usize,
    n: usize,
    l: usize,
    steps: usize,
    b: usize,
    abs: f64,
}

impl Cycle {
    /// The order of the cycle's bidiagonal matrix.
    fn kt(&self) -> usize {
        self.l + self.steps * self.b
    }

    /// The cycle's `kt × kt` block-bidiagonal matrix before its blocks: the kept `σ` on the
    /// diagonal and the coupling `C` (`l × b`) beside them.
    fn start_matrix(&self, kept_sigma: &[f64], coupling: &[f64]) -> Vec<f64> {
        let kt = self.kt();
        let mut bm = vec![0.0; kt * kt];
        for (i, &s) in kept_sigma.iter().enumerate() {
            bm[i + i * kt] = s;
        }
        if self.l > 0 {
            place(&mut bm, kt, 0, self.l, self.l, self.b, coupling);
        }
        bm
    }
}

/// Writes the `rows × cols` block `blk` into the `kt × kt` matrix `bm` at `(r0, c0)`.
fn place(bm: &mut [f64], kt: usize, r0: usize, c0: usize, rows: usize, cols: usize, blk: &[f64]) {
    for j in 0..cols {
        for i in 0..rows {
            bm[(r0 + i) + (c0 + j) * kt] = blk[i + j * rows];
        }
    }
}

/// How a cycle's QR factorizations run, and where their `R` factors go. Both number them as
/// the backend's slots: `2 j` is `R_j` (the `Q` side), `2 j + 1` is `L_j` (the `P` side, with
/// `S_j = L_jᵀ`).
enum QrWay<'a, B: Backend> {
    /// On the backend with no host round trip ([`Backend::qr_fast`]); dependent columns only
    /// flag their slot, read at the cycle's end.
    Backend,
    /// With the host taking every decision ([`qr_passes`]: dependent columns replaced by random
    /// vectors); the factors kept here.
    Host { tn: &'a mut B::Block, tm: &'a mut B::Block, rng: &'a mut SplitMix, r: Vec<Vec<f64>> },
}

impl<B: Backend> QrWay<'_, B> {
    /// QR of columns `c0 .. c0 + b` of `blk` (`rows` rows; `q_side` for the left basis, which
    /// may keep a well-conditioned first pass with `one_pass`), `R` into slot `s`; `abs` the
    /// dependence scale (the left side's breakdown scale is [`LEFT_BREAKDOWN`] times it).
    #[allow(clippy::too_many_arguments)]
    fn qr(
        &mut self,
        be: &mut B,
        blk: &mut B::Block,
        q_side: bool,
        rows: usize,
        c0: usize,
        b: usize,
        s: usize,
        one_pass: bool,
        abs: f64,
    ) -> Result<()> {
        let soft = LEFT_BREAKDOWN * abs;
        match self {
            QrWay::Backend => be.qr_fast(blk, rows, c0, b, s, one_pass, if q_side { soft } else { abs }),
            QrWay::Host { tn, tm, rng, r } => {
                let tmp = if q_side { tm } else { tn };
                let f = qr_passes(be, blk, tmp, rows, c0, b, c0, abs, q_side.then_some(soft), rng, one_pass)?;
                if r.len() <= s {
                    r.resize(s + 1, Vec::new());
                }
                r[s] = f;
                Ok(())
            }
        }
    }

    /// `blk[:, y0 .. y0 + b] += blk[:, x0 .. x0 + b] · (−R_sᵀ)`.
    fn sub_rt(&mut self, be: &mut B, blk: &mut B::Block, y0: usize, x0: usize, b: usize, s: usize) -> Result<()> {
        match self {
            QrWay::Backend => be.update_neg_rt(blk, y0, x0, b, s),
            QrWay::Host { r, .. } => {
                let neg: Vec<f64> = dense::transpose(&r[s], b, b).iter().map(|x| -x).collect();
                be.update_within(blk, y0, b, x0, b, &neg)
            }
        }
    }

    /// The `R` factors of slots `0 .. n`, or `None` when one of them found dependent columns.
    fn factors(&mut self, be: &mut B, n: usize, b: usize) -> Result<Option<Vec<Vec<f64>>>> {
        match self {
            QrWay::Backend => {
                let slots = be.fetch_slots(n, b)?;
                Ok((!slots.iter().any(|(_, bad)| *bad)).then(|| slots.into_iter().map(|(f, _)| f).collect()))
            }
            QrWay::Host { r, .. } => Ok(Some(std::mem::take(r))),
        }
    }
}

/// One cycle of the bidiagonalization, its QR factorizations the `way` says. With
/// [`QrWay::Backend`], `None` when a QR found dependent columns: the caller runs the cycle again
/// with [`QrWay::Host`] from the same start (a cycle writes only columns past its first block of
/// `P`, and of `Q` from `l` on). Returns the bidiagonal matrix and the last residual block's Gram
/// matrix.
#[allow(clippy::too_many_arguments)]
fn cycle<B: Backend>(
    be: &mut B,
    cy: &Cycle,
    pb: &mut B::Block,
    qb: &mut B::Block,
    kept_sigma: &[f64],
    coupling: &[f64],
    products: &mut usize,
    mut way: QrWay<'_, B>,
) -> Result<Option<(Vec<f64>, Vec<f64>)>> {
    let Cycle { m, n, l, steps, b, abs } = *cy;
    // Q_1 R_1 = A P_1 − U_l C.
    be.product(Op::NoTranspose, pb, l, qb, l, b)?;
    *products += 1;
    if l > 0 {
        let neg: Vec<f64> = coupling.iter().map(|x| -x).collect();
        be.update_within(qb, l, b, 0, l, &neg)?;
    }
    way.qr(be, qb, true, m, l, b, 0, false, abs)?;
    let mut wgram = vec![0.0; b * b];
    for j in 0..steps {
        let (pj, pn) = (l + j * b, l + (j + 1) * b);
        // W = Aᵀ Q_j − P_j R_jᵀ, reorthogonalized against every P column so far.
        be.product(Op::Transpose, qb, pj, pb, pn, b)?;
        *products += 1;
        way.sub_rt(be, pb, pn, pj, b, 2 * j)?;
        cgs2(be, pb, pn, pn, b)?;
        if j + 1 == steps {
            wgram = be.dot(pb, pn, b, pb, pn, b)?;
            break;
        }
        way.qr(be, pb, false, n, pn, b, 2 * j + 1, false, abs)?;
        // Q_{j+1} R_{j+1} = A P_{j+1} − Q_j S_j.
        be.product(Op::NoTranspose, pb, pn, qb, pn, b)?;
        *products += 1;
        way.sub_rt(be, qb, pn, pj, b, 2 * j + 1)?;
        way.qr(be, qb, true, m, pn, b, 2 * j + 2, true, abs)?;
    }
    let Some(r) = way.factors(be, (2 * steps).saturating_sub(1), b)? else {
        return Ok(None);
    };
    let kt = cy.kt();
    let mut bm = cy.start_matrix(kept_sigma, coupling);
    place(&mut bm, kt, l, l, b, b, &r[0]);
    for j in 0..steps.saturating_sub(1) {
        let (pj, pn) = (l + j * b, l + (j + 1) * b);
        place(&mut bm, kt, pj, pn, b, b, &dense::transpose(&r[2 * j + 1], b, b));
        place(&mut bm, kt, pn, pn, b, b, &r[2 * j + 2]);
    }
    Ok(Some((bm, wgram)))
}

/// Runs the algorithm; the backend's operator is `m × n` with `m ≥ n`. `a_norm` is `‖A‖_F` (the
/// scale of the dependence test).
pub(crate) fn run<B: Backend>(be: &mut B, cfg: &Config, a_norm: f64, obs: &mut dyn FnMut(Event<'_>)) -> Result<Svd> {
    let (m, n) = be.shape();
    let r = cfg.rank;
    let (b, p) = sizes(cfg, n);
    let kk = p * b;
    // Ritz triplets kept at a restart: the wanted ones and a quarter of the rest, leaving room
    // for at least one block. On the H100 (k = 16, Krylov 96, block 2) keeping a fifth to a third
    // of the rest was fastest (0.112–0.123 s on 1M × 4284), a half 0.131 s, four fifths 0.182 s.
    let keep = (r + (kk - r.min(kk)) / 4).min(kk.saturating_sub(b)).max(r.min(kk.saturating_sub(b)));
    let abs = 1e-13 * a_norm.max(f64::MIN_POSITIVE.sqrt());
    let profile = cfg.profile;
    let t_alloc = std::time::Instant::now();
    let mut rng = SplitMix(cfg.seed);
    let mut pb = be.alloc_side(n, kk + b, false)?;
    let mut qb = be.alloc_side(m, kk, true)?;
    let tw = be.temp_cols(kk, b).max(b).max(2);
    let mut tn = be.alloc_side(n, tw, false)?;
    let mut tm = be.alloc_side(m, tw, true)?;
    // The fast cycles' QR slots: two per step.
    be.reserve_slots(2 * p + 1)?;
    if profile {
        obs(Event::Phase { what: "bases allocated", seconds: t_alloc.elapsed().as_secs_f64() });
    }
    let start = rng.vec(n * b);
    be.set(&mut pb, 0, b, &start)?;
    qr(be, &mut pb, &mut tn, n, 0, b, 0, abs, &mut rng)?;
    let mut products = 0usize;
    let mut restarts = 0usize;
    // Kept Ritz triplets: l of them (σ, and the coupling C of the next block, l × b).
    let mut l = 0usize;
    let mut kept_sigma: Vec<f64> = Vec::new();
    let mut coupling: Vec<f64> = Vec::new();
    loop {
        let steps = (kk - l) / b;
        let kt = l + steps * b;
        let cyc = Cycle { m, n, l, steps, b, abs };
        // Every QR on the backend when its fast path takes the block (b² ≤ 16); again with the
        // host's decisions when a QR found dependent columns.
        let fast = if be.fast_qr() && b * b <= svd_kernels::MAX_PAIRS as usize && steps > 0 {
            cycle(be, &cyc, &mut pb, &mut qb, &kept_sigma, &coupling, &mut products, QrWay::Backend)?
        } else {
            None
        };
        let (bm, wgram) = match fast {
            Some(done) => done,
            None => {
                if be.fast_qr() {
                    obs(Event::HostQr { restart: restarts });
                }
                let host = QrWay::Host { tn: &mut tn, tm: &mut tm, rng: &mut rng, r: Vec::new() };
                cycle(be, &cyc, &mut pb, &mut qb, &kept_sigma, &coupling, &mut products, host)?
                    .ok_or_else(|| Error::Internal("a cycle with host QR decisions reported dependent columns".into()))?
            }
        };
        let t_svd = std::time::Instant::now();
        let (u, sig, v) = dense::svd(&bm, kt).map_err(Error::Internal)?;
        if profile {
            obs(Event::Phase { what: "small SVD", seconds: t_svd.elapsed().as_secs_f64() });
        }
        // Residual estimates ‖W y_i‖ = sqrt(y_iᵀ (WᵀW) y_i), y_i the last b entries of U e_i.
        let y = |i: usize| -> Vec<f64> { (0..b).map(|t| u[(kt - b + t) + i * kt]).collect() };
        let est: Vec<f64> = (0..r)
            .map(|i| {
                let yi = y(i);
                let mut s = 0.0;
                for x in 0..b {
                    for z in 0..b {
                        s += yi[x] * wgram[x + z * b] * yi[z];
                    }
                }
                s.max(0.0).sqrt()
            })
            .collect();
        let worst = est.iter().cloned().fold(0.0, f64::max);
        let converged = worst <= cfg.tol * sig[0] || sig[0] == 0.0 || kt >= n;
        obs(Event::Cycle { restart: restarts, residual: if sig[0] > 0.0 { worst / sig[0] } else { 0.0 } });
        if converged || restarts >= cfg.max_restarts {
            let t_fin = std::time::Instant::now();
            let out = finish(be, cfg, &pb, &qb, &mut tn, &mut tm, tw, kt, &u, &sig, &v, est, converged, restarts, products, b, p);
            if profile {
                obs(Event::Phase { what: "finish", seconds: t_fin.elapsed().as_secs_f64() });
            }
            return out;
        }
        // Thick restart: keep `keep` Ritz triplets, continue from the residual block W.
        let wl = qr(be, &mut pb, &mut tn, n, kt, b, kt, abs, &mut rng)?;
        be.shrink(&mut pb, kt, keep, &v[..kt * keep], &mut tn)?;
        be.shrink(&mut qb, kt, keep, &u[..kt * keep], &mut tm)?;
        be.copy_within(&mut pb, kt, keep, b)?;
        // Aᵀ U_l = V_l Σ_l + P_next Cᵀ with Cᵀ = L [y_1 … y_l].
        coupling = vec![0.0; keep * b];
        for i in 0..keep {
            let yi = y(i);
            for t in 0..b {
                coupling[i + t * keep] = (0..b).map(|s| wl[t + s * b] * yi[s]).sum();
            }
        }
        kept_sigma = sig[..keep].to_vec();
        l = keep;
        restarts += 1;
    }
}

/// The answer: `σ₁ … σ_r`, the Ritz vectors, and their residuals computed anew with the
/// products (`sqrt(‖A v − σ u‖² + ‖Aᵀ u − σ v‖²)`, `u` normalized).
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish<B: Backend>(
    be: &mut B,
    cfg: &Config,
    pb: &B::Block,
    qb: &B::Block,
    tn: &mut B::Block,
    tm: &mut B::Block,
    tw: usize,
    kk: usize,
    u: &[f64],
    sig: &[f64],
    v: &[f64],
    est: Vec<f64>,
    converged: bool,
    restarts: usize,
    mut products: usize,
    b: usize,
    p: usize,
) -> Result<Svd> {
    let (m, _) = be.shape();
    let r = cfg.rank;
    let mut residual = Vec::with_capacity(r);
    let (mut uall, mut vall) = (Vec::new(), Vec::new());
    let mut c0 = 0;
    // In chunks of b, or 4 when b is smaller, or half the temporaries' columns when they are
    // narrower (a chunk's vectors, then their products; 4 × 4 Gram matrices still take the
    // tall-skinny kernel, 16 × 16 ones made the finish slower, 8.2 against 6.0 ms), each chunk
    // needing two products; the residual vectors are formed and measured on the backend.
    let ch = b.max(4).min(tw / 2).max(1);
    while c0 < r {
        let k = ch.min(r - c0);
        be.combine(tn, 0, k, pb, 0, kk, &v[c0 * kk..(c0 + k) * kk])?; // v_i = P V e_i
        be.combine(tm, 0, k, qb, 0, kk, &u[c0 * kk..(c0 + k) * kk])?; // Q U e_i = ‖u_i‖ u_i
        let gu = be.dot(tm, 0, k, tm, 0, k)?;
        let nu: Vec<f64> = (0..k).map(|i| gu[i * (k + 1)].max(0.0).sqrt()).collect();
        be.product(Op::NoTranspose, tn, 0, tm, k, k)?; // A v_i
        be.product(Op::Transpose, tm, 0, tn, k, k)?; // ‖u_i‖ Aᵀ u_i
        products += 2;
        let diag = |f: &dyn Fn(usize) -> f64| -> Vec<f64> { (0..k * k).map(|x| if x % (k + 1) == 0 { f(x / (k + 1)) } else { 0.0 }).collect() };
        let inv = |i: usize| if nu[i] > 0.0 { 1.0 / nu[i] } else { 0.0 };
        be.update_within(tm, k, k, 0, k, &diag(&|i| -sig[c0 + i] * inv(i)))?; // A v − σ u
        be.update_within(tn, k, k, 0, k, &diag(&|i| -sig[c0 + i] * nu[i]))?; // ‖u‖ (Aᵀ u − σ v)
        let (d1, d2) = (be.dot(tm, k, k, tm, k, k)?, be.dot(tn, k, k, tn, k, k)?);
        for i in 0..k {
            let (e1, e2) = (d1[i * (k + 1)].max(0.0), d2[i * (k + 1)].max(0.0) * inv(i) * inv(i));
            residual.push((e1 + e2).sqrt());
        }
        if be.exports() {
            let inv_u: Vec<f64> = (0..k).map(inv).collect();
            be.export(tm, 0, k, &inv_u, true, c0)?;
            be.export(tn, 0, k, &vec![1.0; k], false, c0)?;
        } else if cfg.vectors {
            let (uu, vv) = (be.get(tm, 0, k)?, be.get(tn, 0, k)?);
            for i in 0..k {
                uall.extend(uu[i * m..(i + 1) * m].iter().map(|x| x * inv(i)));
            }
            vall.extend_from_slice(&vv);
        }
        c0 += k;
    }
    Ok(Svd { sigma: sig[..r].to_vec(), residual, estimate: est, u: uall, v: vall, converged, restarts, products, block: b, steps: p })
}

#[cfg(test)]
mod tests {
    use super::sizes;
    use crate::Config;

    #[test]
    fn krylov_sizes() {
        let c = |rank, block, krylov| Config { rank, block: Some(block), krylov, ..Config::default() };
        assert_eq!(sizes(&c(16, 4, None), 4284), (4, 24));
        assert_eq!(sizes(&c(16, 4, Some(250)), 4284), (4, 63));
        // The whole space: 30 = 3 · 10; 31 is prime.
        assert_eq!(sizes(&c(16, 4, None), 30), (3, 10));
        assert_eq!(sizes(&c(16, 4, Some(64)), 4284), (4, 16));
        assert_eq!(sizes(&c(5, 4, None), 31), (1, 31));
        assert_eq!(sizes(&c(1, 1, None), 1), (1, 1));
        // 62 wanted of 64 at b = 4: 64 is reachable exactly.
        assert_eq!(sizes(&c(2, 4, Some(62)), 64), (4, 16));
    }
}
