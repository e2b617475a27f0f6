//! The small algebra of one CholeskyQR step, pure and shared: the device's `svd_qr_step_f64`
//! runs it on one thread, the host (gpu-svd's `dense` module and the twin) runs the same code, so
//! both take the same decisions. Matrices are `b × b`, column-major with leading dimension `b`,
//! `b ≤ MAX_COLS` ([`qr_step`]: `b · b ≤ MAX_PAIRS`). `core` has no square root: the caller passes
//! one.

/// Where a QR step leaves its results in a slot of `SLOT` values (offsets): four matrices of at
/// most `MAX_PAIRS` values, then two flags.
pub mod slot {
    use crate::MAX_PAIRS;
    const M: usize = MAX_PAIRS as usize;
    /// `R` (upper triangular; of both passes, `R₂ R₁`).
    pub const R: usize = 0;
    /// `−Rᵀ`, the coefficients of the next update (`W −= P Rᵀ`, `Q −= Q S` with `S = Lᵀ`).
    pub const NEG_RT: usize = M;
    /// `R₁⁻¹`, the first pass's right factor.
    pub const INV1: usize = 2 * M;
    /// `R₂⁻¹`, the second pass's right factor.
    pub const INV2: usize = 3 * M;
    /// 1.0 when a Cholesky factorization found dependent columns (the block is then unusable).
    pub const BAD: usize = 4 * M;
    /// 1.0 when the second pass runs.
    pub const NEED2: usize = 4 * M + 1;
    /// Values per slot.
    pub const SLOT: usize = 4 * M + 2;
}

/// Frobenius-norm condition number of `R₁` below which a one-pass QR keeps its first pass:
/// one CholeskyQR pass leaves the columns orthogonal to about `cond² · ε` (1e-10 here).
pub const ONE_PASS_COND: f64 = 1e3;

/// Cholesky `G = RᵀR` of a symmetric `b × b` Gram matrix into `r` (upper triangular). Returns the
/// bit mask of the columns whose vectors are (numerically) dependent on the earlier ones: a
/// diagonal entry `G_jj ≤ abs²`, or a pivot below `1e-14 · G_jj` (Cholesky of a Gram matrix
/// squares the condition number); NaN counts as dependent. A dependent column gets a unit pivot,
/// so that one pass finds every one. `r` holds `b · b` values.
pub fn cholesky(g: &[f64], b: usize, abs: f64, r: &mut [f64], sqrt: impl Fn(f64) -> f64) -> u32 {
    let mut bad = 0u32;
    for v in r[..b * b].iter_mut() {
        *v = 0.0;
    }
    for j in 0..b {
        for i in 0..=j {
            let mut s = g[i + j * b];
            for l in 0..i {
                s -= r[l + i * b] * r[l + j * b];
            }
            if i == j {
                let gjj = g[j + j * b];
                let independent = gjj > abs * abs && s > 1e-14 * gjj;
                if independent {
                    r[j + j * b] = sqrt(s);
                } else {
                    bad |= 1 << j;
                    r[j + j * b] = 1.0;
                }
            } else {
                r[i + j * b] = s / r[i + i * b];
            }
        }
    }
    bad
}

/// The inverse of an upper-triangular `b × b` matrix with a nonzero diagonal, into `x`.
pub fn inv_upper(r: &[f64], b: usize, x: &mut [f64]) {
    for v in x[..b * b].iter_mut() {
        *v = 0.0;
    }
    for j in 0..b {
        x[j + j * b] = 1.0 / r[j + j * b];
        for i in (0..j).rev() {
            let mut s = 0.0;
            for l in i + 1..=j {
                s += r[i + l * b] * x[l + j * b];
            }
            x[i + j * b] = -s / r[i + i * b];
        }
    }
}

/// The product `z = x y` of two upper-triangular `b × b` matrices.
pub fn mul_upper(x: &[f64], y: &[f64], b: usize, z: &mut [f64]) {
    for j in 0..b {
        for i in 0..b {
            let mut s = 0.0;
            if i <= j {
                for l in i..=j {
                    s += x[i + l * b] * y[l + j * b];
                }
            }
            z[i + j * b] = s;
        }
    }
}

/// `Σ v²` over the first `n` values.
fn sum_sq(v: &[f64], n: usize) -> f64 {
    v[..n].iter().map(|x| x * x).sum()
}

/// One pass of a CholeskyQR step from its Gram matrix `g` (`b × b`), filling `slot` (`SLOT`
/// values; see [`slot`]). Pass 1: `R₁`, `R₁⁻¹`, and whether a second pass runs (always, unless
/// `one_pass` and `R₁`'s Frobenius condition number is below [`ONE_PASS_COND`]); pass 2 (only
/// when it runs): `R₂` (its dependence test at `min(abs, 1e-8)`), `R₂⁻¹` and `R = R₂ R₁`. Both
/// write `−Rᵀ` and raise the `BAD` flag on dependent columns (then with unit pivots: the block
/// is unusable, the caller must start over). `b · b ≤ MAX_PAIRS`.
pub fn qr_step(g: &[f64], b: usize, abs: f64, pass: u32, one_pass: bool, slot: &mut [f64], sqrt: impl Fn(f64) -> f64 + Copy) {
    const M: usize = crate::MAX_PAIRS as usize;
    let mut r = [0.0f64; M];
    let mut inv = [0.0f64; M];
    let bad = if pass == 1 {
        let bad = cholesky(g, b, abs, &mut r, sqrt);
        inv_upper(&r, b, &mut inv);
        let well = sqrt(sum_sq(&r, b * b)) * sqrt(sum_sq(&inv, b * b)) < ONE_PASS_COND;
        slot[slot::R..slot::R + b * b].copy_from_slice(&r[..b * b]);
        slot[slot::INV1..slot::INV1 + b * b].copy_from_slice(&inv[..b * b]);
        slot[slot::NEED2] = if one_pass && well && bad == 0 { 0.0 } else { 1.0 };
        slot[slot::BAD] = 0.0;
        bad
    } else {
        let bad = cholesky(g, b, if abs < 1e-8 { abs } else { 1e-8 }, &mut r, sqrt);
        inv_upper(&r, b, &mut inv);
        slot[slot::INV2..slot::INV2 + b * b].copy_from_slice(&inv[..b * b]);
        let mut rr = [0.0f64; M];
        mul_upper(&r, &slot[slot::R..slot::R + b * b], b, &mut rr);
        slot[slot::R..slot::R + b * b].copy_from_slice(&rr[..b * b]);
        bad
    };
    if bad != 0 {
        slot[slot::BAD] = 1.0;
    }
    for j in 0..b {
        for i in 0..b {
            slot[slot::NEG_RT + i + j * b] = -slot[slot::R + j + i * b];
        }
    }
}
