//! Deterministic matrix generators (same seed, same matrix, on every machine: `StdRng`, ChaCha12).
//! Every generator returns CSR with column indices sorted and unique in each row; values are
//! drawn uniformly from `[-1, 1)` (stencils use their fixed coefficients).
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::formats::{csr_unchecked, Csr, Index};
use crate::{Error, Result, Value};

fn too_large<I: Index>(what: &'static str, value: u64) -> Error {
    Error::TooLarge { what, len: value, max: I::MAX }
}

/// A generator and its sizes, for building with either index type ([`Spec::build`]); each
/// variant is the function of this module of the same name (`uniform`, `rmat`, `laplacian_2d`,
/// `laplacian_3d`, `banded`, `tall_skinny`, `dense_row`, `dense_col`, `stencil_3d`,
/// `community_graph`, `circuit`, `text`, `lp`, `mesh`, `skyline`, `kkt`), which is
/// [`Spec::build`] with `u32` indices.
/// With the `clap` feature it is a `clap::Subcommand` (the `sptrans gen` kinds).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Subcommand))]
pub enum Spec {
    /// Uniform random: NNZ distinct positions of an M × N matrix.
    Uniform {
        /// Rows.
        m: u64,
        /// Columns.
        n: u64,
        /// Nonzeros.
        nnz: u64,
    },
    /// R-MAT power-law graph of 2^SCALE vertices and EDGES edges (duplicates merged).
    Rmat {
        /// log2 of the vertex count.
        scale: u32,
        /// Edges drawn.
        edges: u64,
        /// Probability of the top-left quadrant.
        #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.57))]
        a: f64,
        /// Top-right.
        #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.19))]
        b: f64,
        /// Bottom-left (d = 1 - a - b - c).
        #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.19))]
        c: f64,
    },
    /// 5-point Laplacian of a K × K grid.
    Laplacian2d {
        /// Grid side.
        k: u64,
    },
    /// 7-point Laplacian of a K × K × K grid.
    Laplacian3d {
        /// Grid side.
        k: u64,
    },
    /// N × N band with LOWER subdiagonals and UPPER superdiagonals.
    Banded {
        /// Size.
        n: u64,
        /// Subdiagonals.
        lower: u64,
        /// Superdiagonals.
        upper: u64,
    },
    /// Tall and skinny M × N, PER_ROW distinct columns in each row.
    TallSkinny {
        /// Rows.
        m: u64,
        /// Columns.
        n: u64,
        /// Entries per row.
        per_row: u64,
    },
    /// Adversary: uniform M × N with NNZ entries plus one full row.
    DenseRow {
        /// Rows.
        m: u64,
        /// Columns.
        n: u64,
        /// Nonzeros.
        nnz: u64,
    },
    /// Adversary: uniform M × N with NNZ entries plus one full column.
    DenseCol {
        /// Rows.
        m: u64,
        /// Columns.
        n: u64,
        /// Nonzeros.
        nnz: u64,
    },
    /// Mesh-like: the 7- or 27-point stencil of a K × K × K grid, numbered naturally, randomly or by RCM.
    Stencil {
        /// Grid side.
        k: u64,
        /// Stencil points: 7 or 27.
        #[cfg_attr(feature = "clap", arg(long, default_value_t = 27))]
        points: u32,
        /// Numbering of the unknowns.
        #[cfg_attr(feature = "clap", arg(long, value_enum, default_value = "natural"))]
        order: Order,
    },
    /// Graph with communities of C vertices and power-law degrees of mean D.
    Graph {
        /// Vertices.
        n: u64,
        /// Mean degree.
        degree: u64,
        /// Vertices per community.
        community: u64,
    },
    /// Circuit-like: short rows near the diagonal plus RAILS dense rows and columns.
    Circuit {
        /// Order.
        n: u64,
        /// Supply rails.
        rails: u64,
    },
    /// Bag of words: DOCS × TERMS, Zipf-distributed terms, PER_DOC a document on average.
    Text {
        /// Documents (rows).
        docs: u64,
        /// Terms (columns).
        terms: u64,
        /// Mean distinct terms a document.
        per_doc: u64,
    },
    /// Unstructured tetrahedral-mesh-like: the K × K × K points of a jittered grid, each joined
    /// to the nearby ones (about 13 a point, 5 to 27), numbered naturally, randomly or by RCM.
    Mesh {
        /// Grid side.
        k: u64,
        /// Numbering of the unknowns.
        #[cfg_attr(feature = "clap", arg(long, value_enum, default_value = "natural"))]
        order: Order,
    },
    /// Banded with variable width (a skyline profile): row i holds the columns within w(i) of the
    /// diagonal, w varying smoothly around WIDTH (0.2 to 1.8 times it).
    Skyline {
        /// Order.
        n: u64,
        /// Mean half-width of the band.
        width: u64,
    },
    /// KKT / saddle point of order N + M: [[H, Bᵀ], [B, 0]], H a banded N × N Hessian (5 a row),
    /// B an M × N constraint matrix of PER_ROW entries a row near its diagonal plus one linking
    /// column; symmetric.
    Kkt {
        /// Primal unknowns (H's order).
        n: u64,
        /// Constraints (B's rows).
        m: u64,
        /// Entries a constraint row.
        per_row: u64,
    },
    /// LP / KKT-like: M × N staircase of BLOCKS blocks, PER_ROW entries a row, plus linking columns.
    Lp {
        /// Rows.
        m: u64,
        /// Columns.
        n: u64,
        /// Diagonal blocks.
        blocks: u64,
        /// Entries a row.
        per_row: u64,
    },
}

impl Spec {
    /// `(rows, cols, nonzeros)` the generator will produce at most (an upper bound, saturating:
    /// the sizes asked for, before duplicates merge), without generating anything: what a caller
    /// checks against the memory it has before [`Spec::build`]. `None` for parameters outside
    /// the generator's domain (an R-MAT scale past 32), which [`Spec::build`] refuses by name.
    pub fn estimate(&self) -> Option<(u64, u64, u64)> {
        let mul = |a: u64, b: u64| a.saturating_mul(b);
        let cube = |k: u64| mul(mul(k, k), k);
        Some(match *self {
            Spec::Uniform { m, n, nnz } => (m, n, nnz.min(mul(m, n))),
            Spec::Rmat { scale, edges, .. } => {
                if scale > 32 {
                    return None;
                }
                (1u64 << scale, 1u64 << scale, edges)
            }
            Spec::Laplacian2d { k } => (mul(k, k), mul(k, k), mul(mul(k, k), 5)),
            Spec::Laplacian3d { k } => (cube(k), cube(k), mul(cube(k), 7)),
            Spec::Banded { n, lower, upper } => (n, n, mul(n, lower.saturating_add(upper).saturating_add(1))),
            Spec::TallSkinny { m, n, per_row } => (m, n, mul(m, per_row)),
            Spec::DenseRow { m, n, nnz } | Spec::DenseCol { m, n, nnz } => (m, n, nnz.saturating_add(m.max(n))),
            Spec::Stencil { k, points, .. } => (cube(k), cube(k), mul(cube(k), points as u64)),
            Spec::Graph { n, degree, .. } => (n, n, mul(n, degree.saturating_add(1))),
            Spec::Circuit { n, rails } => (n, n, mul(n, 8).saturating_add(mul(mul(rails, n), 2))),
            Spec::Text { docs, terms, per_doc } => (docs, terms, mul(docs, per_doc.saturating_mul(2))),
            Spec::Lp { m, n, per_row, .. } => (m, n, mul(m, per_row.saturating_add(2))),
            Spec::Mesh { k, .. } => (cube(k), cube(k), mul(cube(k), 27)),
            Spec::Skyline { n, width } => (n, n, mul(n, mul(width, 4).saturating_add(1))),
            Spec::Kkt { n, m, per_row } => {
                (n.saturating_add(m), n.saturating_add(m), mul(n, 5).saturating_add(mul(m, per_row.saturating_add(1)).saturating_mul(2)))
            }
        })
    }

    /// The matrix, with index type `I` (`u64`: more than `u32::MAX` nonzeros or a dimension past
    /// it, as long as `rows × cols` fits `u64`); the same matrix with either index type.
    ///
    /// # Errors
    /// As the generator's function; [`Error::TooLarge`] naming the size past `I`.
    pub fn build<I: Index, T: Value>(&self, seed: u64) -> Result<Csr<I, T>> {
        match *self {
            Spec::Uniform { m, n, nnz } => uniform_as(m, n, nnz, seed),
            Spec::Rmat { scale, edges, a, b, c } => rmat_as(scale, edges, a, b, c, seed),
            Spec::Laplacian2d { k } => stencil(&[k, k, 1]),
            Spec::Laplacian3d { k } => stencil(&[k, k, k]),
            Spec::Banded { n, lower, upper } => banded_as(n, lower, upper, seed),
            Spec::TallSkinny { m, n, per_row } => tall_skinny_as(m, n, per_row, seed),
            Spec::DenseRow { m, n, nnz } => adversary(m, n, nnz, seed, true),
            Spec::DenseCol { m, n, nnz } => adversary(m, n, nnz, seed, false),
            Spec::Stencil { k, points, order } => stencil_ordered(k, points, order, seed),
            Spec::Graph { n, degree, community } => graph_as(n, degree, community, seed),
            Spec::Circuit { n, rails } => circuit_as(n, rails, seed),
            Spec::Text { docs, terms, per_doc } => text_as(docs, terms, per_doc, seed),
            Spec::Lp { m, n, blocks, per_row } => lp_as(m, n, blocks, per_row, seed),
            Spec::Mesh { k, order } => mesh_as(k, order, seed),
            Spec::Skyline { n, width } => skyline_as(n, width, seed),
            Spec::Kkt { n, m, per_row } => kkt_as(n, m, per_row, seed),
        }
    }
}

/// CSR from sorted, unique row-major positions `key = i * n + j`.
fn from_keys<I: Index, T: Value>(m: u64, n: u64, keys: &[u64], mut val: impl FnMut(u64, u64) -> T) -> Result<Csr<I, T>> {
    if m > I::MAX || n > I::MAX {
        return Err(too_large::<I>("dimension", m.max(n)));
    }
    if keys.len() as u64 > I::MAX {
        return Err(too_large::<I>("nonzeros", keys.len() as u64));
    }
    let to = |v: u64| I::from_u64(v).expect("checked against I::MAX above");
    let mut counts = vec![0u64; m as usize + 1];
    let mut idx = Vec::with_capacity(keys.len());
    let mut vals = Vec::with_capacity(keys.len());
    for &k in keys {
        let (i, j) = (k / n, k % n);
        counts[i as usize + 1] += 1;
        idx.push(to(j));
        vals.push(val(i, j));
    }
    for i in 0..m as usize {
        counts[i + 1] += counts[i];
    }
    Ok(csr_unchecked(m, n, counts.into_iter().map(to).collect(), idx, vals))
}

fn rand_val<T: Value>(r: &mut StdRng) -> T {
    T::from_f64(r.random_range(-1.0..1.0))
}

/// Uniform random `m × n` with exactly `min(nnz, m * n)` nonzeros, every set of positions of that
/// size equally likely (as the seed tool's `m n nnz` mode: positions drawn uniformly, duplicates
/// removed and redrawn, sorted).
///
/// # Errors
/// [`Error::TooLarge`] when a size does not fit 32-bit indices (or more nonzeros are asked than the shape holds).
pub fn uniform<T: Value>(m: u64, n: u64, nnz: u64, seed: u64) -> Result<Csr<u32, T>> {
    uniform_as(m, n, nnz, seed)
}

fn uniform_as<I: Index, T: Value>(m: u64, n: u64, nnz: u64, seed: u64) -> Result<Csr<I, T>> {
    let total = m.checked_mul(n).ok_or(Error::TooLarge { what: "m * n", len: u64::MAX, max: u64::MAX })?;
    let nnz = nnz.min(total);
    let mut r = StdRng::seed_from_u64(seed);
    // Draw the smaller of the kept and the excluded sets.
    let want = nnz.min(total - nnz);
    let mut keys: Vec<u64> = Vec::with_capacity(want as usize);
    while (keys.len() as u64) < want {
        let missing = want - keys.len() as u64;
        keys.extend((0..missing).map(|_| r.random_range(0..total)));
        keys.sort_unstable();
        keys.dedup();
    }
    if want != nnz {
        let excluded = keys;
        let mut e = excluded.iter().peekable();
        keys = (0..total)
            .filter(|k| {
                if e.peek() == Some(&k) {
                    e.next();
                    false
                } else {
                    true
                }
            })
            .collect();
    }
    from_keys(m, n, &keys, |_, _| rand_val(&mut r))
}

/// R-MAT power-law graph (Chakrabarti et al.) on `2^scale` vertices: each of `edges` draws picks
/// one quadrant per bit with probabilities `(a, b, c, d)` (`d = 1 - a - b - c`); duplicates are
/// removed, so the result has at most `edges` nonzeros.
///
/// # Errors
/// [`Error::InvalidParameter`] for a scale above 32, a probability outside `[0, 1]` or
/// `a + b + c > 1`; [`Error::TooLarge`] past 32-bit nonzeros.
pub fn rmat<T: Value>(scale: u32, edges: u64, a: f64, b: f64, c: f64, seed: u64) -> Result<Csr<u32, T>> {
    rmat_as(scale, edges, a, b, c, seed)
}

fn rmat_as<I: Index, T: Value>(scale: u32, edges: u64, a: f64, b: f64, c: f64, seed: u64) -> Result<Csr<I, T>> {
    if scale > 32 {
        return Err(Error::InvalidParameter {
            what: "scale",
            msg: format!("{scale} is too large: the 2^(2 scale) positions must fit 64 bits (scale at most 32)"),
        });
    }
    for (what, p) in [("a", a), ("b", b), ("c", c)] {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::InvalidParameter { what, msg: format!("probability {p} is outside [0, 1]") });
        }
    }
    if a + b + c > 1.0 + 1e-12 {
        return Err(Error::InvalidParameter {
            what: "a + b + c",
            msg: format!("{a} + {b} + {c} = {} exceeds 1 (d = 1 - a - b - c must be a probability)", a + b + c),
        });
    }
    let n = 1u64 << scale;
    let mut r = StdRng::seed_from_u64(seed);
    let mut keys: Vec<u64> = (0..edges)
        .map(|_| {
            let (mut i, mut j) = (0u64, 0u64);
            for _ in 0..scale {
                let u: f64 = r.random_range(0.0..1.0);
                let (bi, bj) = if u < a {
                    (0, 0)
                } else if u < a + b {
                    (0, 1)
                } else if u < a + b + c {
                    (1, 0)
                } else {
                    (1, 1)
                };
                i = 2 * i + bi;
                j = 2 * j + bj;
            }
            i * n + j
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    from_keys(n, n, &keys, |_, _| rand_val(&mut r))
}

/// 5-point Laplacian of a `k × k` grid (`n = k²`): 4 on the diagonal, -1 for grid neighbours.
///
/// # Errors
/// [`Error::TooLarge`] when a size does not fit 32-bit indices (or more nonzeros are asked than the shape holds).
pub fn laplacian_2d<T: Value>(k: u64) -> Result<Csr<u32, T>> {
    stencil(&[k, k, 1])
}

/// 7-point Laplacian of a `k × k × k` grid (`n = k³`): 6 on the diagonal, -1 for neighbours.
///
/// # Errors
/// [`Error::TooLarge`] when a size does not fit 32-bit indices (or more nonzeros are asked than the shape holds).
pub fn laplacian_3d<T: Value>(k: u64) -> Result<Csr<u32, T>> {
    stencil(&[k, k, k])
}

fn stencil<I: Index, T: Value>(dims: &[u64; 3]) -> Result<Csr<I, T>> {
    let n = dims[0].checked_mul(dims[1]).and_then(|x| x.checked_mul(dims[2])).ok_or(too_large::<I>("grid points", u64::MAX))?;
    n.checked_mul(n).ok_or(Error::TooLarge { what: "n * n (grid points squared)", len: u64::MAX, max: u64::MAX })?;
    let ndim = dims.iter().filter(|&&d| d > 1).count().max(1) as f64;
    let strides = [1, dims[0], dims[0] * dims[1]];
    let mut keys = Vec::new();
    for p in 0..n {
        let c = [p % dims[0], (p / dims[0]) % dims[1], p / (dims[0] * dims[1])];
        let mut row = vec![p * n + p];
        for d in 0..3 {
            if c[d] > 0 {
                row.push(p * n + p - strides[d]);
            }
            if c[d] + 1 < dims[d] {
                row.push(p * n + p + strides[d]);
            }
        }
        row.sort_unstable();
        keys.extend(row);
    }
    from_keys(n, n, &keys, |i, j| T::from_f64(if i == j { 2.0 * ndim } else { -1.0 }))
}

/// Banded `n × n`: every position with `-lower <= j - i <= upper`.
///
/// # Errors
/// [`Error::TooLarge`] when a size does not fit 32-bit indices (or more nonzeros are asked than the shape holds).
pub fn banded<T: Value>(n: u64, lower: u64, upper: u64, seed: u64) -> Result<Csr<u32, T>> {
    banded_as(n, lower, upper, seed)
}

fn banded_as<I: Index, T: Value>(n: u64, lower: u64, upper: u64, seed: u64) -> Result<Csr<I, T>> {
    n.checked_mul(n).ok_or(Error::TooLarge { what: "n * n", len: u64::MAX, max: u64::MAX })?;
    let mut r = StdRng::seed_from_u64(seed);
    let mut keys = Vec::new();
    for i in 0..n {
        for j in i.saturating_sub(lower)..(i + upper + 1).min(n) {
            keys.push(i * n + j);
        }
    }
    from_keys(n, n, &keys, |_, _| rand_val(&mut r))
}

/// Tall and skinny `m × n` (m ≫ n): each row has `per_row` distinct uniform columns.
///
/// # Errors
/// [`Error::InvalidParameter`] when `per_row > n`; [`Error::TooLarge`] when a size does not fit
/// 32-bit indices.
pub fn tall_skinny<T: Value>(m: u64, n: u64, per_row: u64, seed: u64) -> Result<Csr<u32, T>> {
    tall_skinny_as(m, n, per_row, seed)
}

fn tall_skinny_as<I: Index, T: Value>(m: u64, n: u64, per_row: u64, seed: u64) -> Result<Csr<I, T>> {
    m.checked_mul(n).ok_or(Error::TooLarge { what: "m * n", len: u64::MAX, max: u64::MAX })?;
    if per_row > n {
        return Err(Error::InvalidParameter { what: "per_row", msg: format!("{per_row} distinct columns per row cannot fit in {n} columns") });
    }
    let mut r = StdRng::seed_from_u64(seed);
    let k = per_row;
    let mut keys = Vec::new();
    let mut row: Vec<u64> = Vec::new();
    for i in 0..m {
        row.clear();
        while (row.len() as u64) < k {
            row.push(r.random_range(0..n));
            row.sort_unstable();
            row.dedup();
        }
        keys.extend(row.iter().map(|&j| i * n + j));
    }
    from_keys(m, n, &keys, |_, _| rand_val(&mut r))
}

/// Adversary: [`uniform`] with `nnz` nonzeros plus row `m / 2` completely dense.
///
/// # Errors
/// [`Error::TooLarge`] when a size does not fit 32-bit indices (or more nonzeros are asked than the shape holds).
pub fn dense_row<T: Value>(m: u64, n: u64, nnz: u64, seed: u64) -> Result<Csr<u32, T>> {
    adversary(m, n, nnz, seed, true)
}

/// Adversary: [`uniform`] with `nnz` nonzeros plus column `n / 2` completely dense.
///
/// # Errors
/// [`Error::TooLarge`] when a size does not fit 32-bit indices (or more nonzeros are asked than the shape holds).
pub fn dense_col<T: Value>(m: u64, n: u64, nnz: u64, seed: u64) -> Result<Csr<u32, T>> {
    adversary(m, n, nnz, seed, false)
}

fn adversary<I: Index, T: Value>(m: u64, n: u64, nnz: u64, seed: u64, row: bool) -> Result<Csr<I, T>> {
    let base = uniform_as::<I, T>(m, n, nnz, seed)?;
    let mut keys: Vec<u64> = (0..m as usize)
        .flat_map(|i| base.idx()[base.ptr()[i].to_usize()..base.ptr()[i + 1].to_usize()].iter().map(move |&j| i as u64 * n + j.to_u64()))
        .collect();
    if m > 0 && n > 0 {
        if row {
            keys.extend((0..n).map(|j| (m / 2) * n + j));
        } else {
            keys.extend((0..m).map(|i| i * n + n / 2));
        }
    }
    keys.sort_unstable();
    keys.dedup();
    let mut r = StdRng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    from_keys(m, n, &keys, |_, _| rand_val(&mut r))
}

/// How the unknowns of a mesh are numbered ([`Spec::Stencil`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Order {
    /// Lexicographic grid order (x fastest): bands at distance 1, k and k².
    Natural,
    /// A random permutation (seeded): what an unordered mesh generator produces.
    Random,
    /// Reverse Cuthill–McKee from a corner (breadth-first levels, neighbours by degree, reversed):
    /// what a bandwidth-reducing reordering produces.
    Rcm,
}

/// A 3-D mesh-like matrix: the 7- or 27-point stencil of a `k × k × k` grid, numbered as `order`
/// says (the permutation applied to rows and columns alike, so the pattern stays symmetric).
/// Values: `points − 1` on the diagonal, −1 off it.
///
/// # Errors
/// [`Error::InvalidParameter`] for `points` other than 7 or 27; [`Error::TooLarge`] past `u32`.
pub fn stencil_3d<T: Value>(k: u64, points: u32, order: Order, seed: u64) -> Result<Csr<u32, T>> {
    Spec::Stencil { k, points, order }.build(seed)
}

fn stencil_ordered<I: Index, T: Value>(k: u64, points: u32, order: Order, seed: u64) -> Result<Csr<I, T>> {
    if points != 7 && points != 27 {
        return Err(Error::InvalidParameter { what: "points", msg: format!("{points}: the stencils have 7 or 27 points") });
    }
    let n = grid_points::<I>(k)?;
    let neighbours = |p: u64, out: &mut Vec<u64>| {
        out.clear();
        grid_around(k, p, |far, q| {
            if points == 27 || far <= 1 {
                out.push(q);
            }
        });
    };
    let perm = numbering(n, order, seed, &neighbours);
    let mut keys = Vec::with_capacity((n as usize).saturating_mul(points as usize));
    let mut nb = Vec::new();
    for p in 0..n {
        neighbours(p, &mut nb);
        keys.extend(nb.iter().map(|&q| perm[p as usize] * n + perm[q as usize]));
    }
    keys.sort_unstable();
    let diag = f64::from(points - 1);
    from_keys(n, n, &keys, |i, j| T::from_f64(if i == j { diag } else { -1.0 }))
}

/// The points of a `k × k × k` grid (`k³`), checked against `I` (and `k⁶` against `u64`, the
/// positions' keys).
fn grid_points<I: Index>(k: u64) -> Result<u64> {
    let n = k.checked_pow(3).filter(|n| n.checked_mul(*n).is_some()).ok_or(too_large::<I>("grid points", u64::MAX))?;
    if n > I::MAX {
        return Err(too_large::<I>("dimension", n));
    }
    Ok(n)
}

/// Calls `visit(|dx| + |dy| + |dz|, q)` for each point `q` of the 27 around grid point `p`
/// (itself included, distance 0) that lies inside the `k × k × k` grid, in lexicographic order.
fn grid_around(k: u64, p: u64, mut visit: impl FnMut(i64, u64)) {
    let c = [p % k, (p / k) % k, p / (k * k)];
    for dz in -1i64..=1 {
        for dy in -1i64..=1 {
            for dx in -1i64..=1 {
                let q = [c[0] as i64 + dx, c[1] as i64 + dy, c[2] as i64 + dz];
                if q.iter().all(|&v| v >= 0 && (v as u64) < k) {
                    visit(dx.abs() + dy.abs() + dz.abs(), q[0] as u64 + k * (q[1] as u64 + k * q[2] as u64));
                }
            }
        }
    }
}

/// The numbering `perm[old] = new` of `n` unknowns joined as `neighbours` says: the identity, a
/// seeded random permutation, or reverse Cuthill–McKee from unknown 0 (breadth-first levels,
/// unvisited neighbours by degree then index, reversed).
fn numbering(n: u64, order: Order, seed: u64, neighbours: &dyn Fn(u64, &mut Vec<u64>)) -> Vec<u64> {
    match order {
        Order::Natural => (0..n).collect(),
        Order::Random => {
            let mut r = StdRng::seed_from_u64(seed);
            let mut p: Vec<u64> = (0..n).collect();
            rand::seq::SliceRandom::shuffle(&mut p[..], &mut r);
            p
        }
        Order::Rcm => {
            // Breadth-first from corner 0, unvisited neighbours by degree (then index); reversed.
            let mut seen = vec![false; n as usize];
            let mut visit = Vec::with_capacity(n as usize);
            let (mut nb, mut around, mut cand) = (Vec::new(), Vec::new(), Vec::new());
            for start in 0..n {
                if seen[start as usize] {
                    continue;
                }
                seen[start as usize] = true;
                visit.push(start);
                let mut head = visit.len() - 1;
                while head < visit.len() {
                    let p = visit[head];
                    head += 1;
                    neighbours(p, &mut nb);
                    cand.clear();
                    for &q in nb.iter().filter(|&&q| !seen[q as usize]) {
                        neighbours(q, &mut around);
                        cand.push((around.len(), q));
                    }
                    cand.sort_unstable();
                    for &(_, q) in &cand {
                        seen[q as usize] = true;
                        visit.push(q);
                    }
                }
            }
            let mut p = vec![0u64; n as usize];
            for (pos, &old) in visit.iter().rev().enumerate() {
                p[old as usize] = pos as u64;
            }
            p
        }
    }
}

/// A graph with communities and power-law degrees: `n` vertices in communities of `community`
/// consecutive vertices; vertex degrees from a Pareto law (exponent 2.1, mean about `degree`,
/// capped at `n / 4`); each edge stays in its community with probability 0.85, else lands on a
/// vertex drawn with power-law popularity (a few hubs take most). Duplicates removed.
///
/// # Errors
/// [`Error::InvalidParameter`] for `community` 0 or `degree` 0; [`Error::TooLarge`] past `u32`.
pub fn community_graph<T: Value>(n: u64, degree: u64, community: u64, seed: u64) -> Result<Csr<u32, T>> {
    Spec::Graph { n, degree, community }.build(seed)
}

fn graph_as<I: Index, T: Value>(n: u64, degree: u64, community: u64, seed: u64) -> Result<Csr<I, T>> {
    if community == 0 || degree == 0 {
        return Err(Error::InvalidParameter { what: "community, degree", msg: "both must be at least 1".into() });
    }
    n.checked_mul(n).ok_or(Error::TooLarge { what: "n * n", len: u64::MAX, max: u64::MAX })?;
    let mut r = StdRng::seed_from_u64(seed);
    let alpha = 2.1f64;
    // Pareto with minimum x_m has mean x_m α / (α − 1).
    let xm = degree as f64 * (alpha - 1.0) / alpha;
    let cap = (n / 4).max(1) as f64;
    let mut keys = Vec::new();
    for i in 0..n {
        let u: f64 = r.random_range(f64::EPSILON..1.0);
        let d = (xm / u.powf(1.0 / alpha)).min(cap).round().max(1.0) as u64;
        let c0 = (i / community) * community;
        let size = community.min(n - c0);
        for _ in 0..d {
            let j = if r.random_range(0.0..1.0) < 0.85 {
                c0 + r.random_range(0..size)
            } else {
                // Popularity ∝ rank^-1.2: hubs at the low indices of a random stride.
                let v: f64 = r.random_range(0.0..1.0);
                ((n as f64) * v.powf(4.0)) as u64 % n
            };
            keys.push(i * n + j);
        }
    }
    keys.sort_unstable();
    keys.dedup();
    from_keys(n, n, &keys, |_, _| rand_val(&mut r))
}

/// A circuit-like matrix of order `n`: the diagonal, 1 to 5 entries a row within ±`reach` of it
/// (device stamps of nearby nodes), and `rails` supply rails (rows and columns at random
/// indices) touching each node with probability 1/8 — a few dense rows and columns.
///
/// # Errors
/// [`Error::TooLarge`] past `u32`.
pub fn circuit<T: Value>(n: u64, rails: u64, seed: u64) -> Result<Csr<u32, T>> {
    Spec::Circuit { n, rails }.build(seed)
}

fn circuit_as<I: Index, T: Value>(n: u64, rails: u64, seed: u64) -> Result<Csr<I, T>> {
    n.checked_mul(n).ok_or(Error::TooLarge { what: "n * n", len: u64::MAX, max: u64::MAX })?;
    let mut r = StdRng::seed_from_u64(seed);
    let reach = 64u64;
    let rail: Vec<u64> = (0..rails.min(n)).map(|_| r.random_range(0..n.max(1))).collect();
    let mut keys = Vec::new();
    for i in 0..n {
        keys.push(i * n + i);
        for _ in 0..r.random_range(1..=5u32) {
            let lo = i.saturating_sub(reach);
            let hi = (i + reach).min(n - 1);
            let j = r.random_range(lo..=hi);
            keys.push(i * n + j);
            keys.push(j * n + i);
        }
        for &g in &rail {
            if r.random_range(0..8u32) == 0 {
                keys.push(i * n + g);
                keys.push(g * n + i);
            }
        }
    }
    keys.sort_unstable();
    keys.dedup();
    from_keys(n, n, &keys, |i, j| if i == j { T::from_f64(4.0) } else { rand_val(&mut r) })
}

/// Bag of words: `docs × terms`, each document with a length drawn around `per_doc` (geometric)
/// of distinct terms drawn from a Zipf law (exponent 1.1: a few terms in most documents, most
/// terms in few).
///
/// # Errors
/// [`Error::InvalidParameter`] when `per_doc` is 0 or more than `terms`; [`Error::TooLarge`].
pub fn text<T: Value>(docs: u64, terms: u64, per_doc: u64, seed: u64) -> Result<Csr<u32, T>> {
    Spec::Text { docs, terms, per_doc }.build(seed)
}

/// The bags of words' term law: Zipf with exponent 1.1 over `terms` terms, drawn by inverse
/// transform of the continuous law on `[1, terms + 1)` (`P(x) ∝ x^-1.1`).
struct Zipf {
    terms: u64,
    /// `(terms + 1)^(1 − s)`.
    eb: f64,
}

impl Zipf {
    const S: f64 = 1.1;

    /// The law for documents of `per_doc` distinct terms of `terms`.
    fn new(terms: u64, per_doc: u64) -> Result<Self> {
        if per_doc == 0 || per_doc > terms {
            return Err(Error::InvalidParameter { what: "per_doc", msg: format!("{per_doc} terms per document of {terms} terms") });
        }
        Ok(Self { terms, eb: ((terms + 1) as f64).powf(1.0 - Self::S) })
    }

    /// The term (0-based) of a uniform draw `v` in `[0, 1)`.
    fn term(&self, v: f64) -> u64 {
        // 1^(1 − s) = 1 is the lower end.
        let x = (1.0 + v * (self.eb - 1.0)).powf(1.0 / (1.0 - Self::S));
        (x as u64).saturating_sub(1).min(self.terms - 1)
    }
}

fn text_as<I: Index, T: Value>(docs: u64, terms: u64, per_doc: u64, seed: u64) -> Result<Csr<I, T>> {
    let zipf = Zipf::new(terms, per_doc)?;
    docs.checked_mul(terms).ok_or(Error::TooLarge { what: "docs * terms", len: u64::MAX, max: u64::MAX })?;
    let mut r = StdRng::seed_from_u64(seed);
    let mut keys = Vec::new();
    let mut row = Vec::new();
    for d in 0..docs {
        let u: f64 = r.random_range(f64::EPSILON..1.0);
        let len = ((-(per_doc as f64) * u.ln()).round() as u64).clamp(1, terms.min(8 * per_doc));
        row.clear();
        let mut tries = 0;
        while (row.len() as u64) < len && tries < 20 * len {
            let v: f64 = r.random_range(0.0..1.0);
            row.push(zipf.term(v));
            row.sort_unstable();
            row.dedup();
            tries += 1;
        }
        keys.extend(row.iter().map(|&t| d * terms + t));
    }
    from_keys(docs, terms, &keys, |_, _| T::from_f64(r.random_range(1..=5u32) as f64))
}

/// A bag of words for billions of entries: `docs × terms`, each row `per_doc` distinct terms
/// (fewer only where 20 · `per_doc` draws found fewer) from the Zipf law of [`text`] (exponent
/// 1.1), values 1 to 5; every draw a hash of `(seed, row, draw)` (SplitMix64), the rows made on
/// every core, so the matrix depends only on its arguments (the first rows of a taller one are
/// the same). `u32` offsets: at most `u32::MAX` entries.
///
/// # Errors
/// [`Error::InvalidParameter`] when `per_doc` is 0 or more than `terms`; [`Error::TooLarge`]
/// past 32-bit sizes.
pub fn text_hashed<T: Value>(docs: u64, terms: u64, per_doc: u64, seed: u64) -> Result<Csr<u32, T>> {
    let zipf = Zipf::new(terms, per_doc)?;
    crate::formats::check_fits::<u32>(docs, terms, docs.saturating_mul(per_doc))?;
    let mix = mix64;
    let zipf = &zipf;
    // Sorts the terms from `start` on and drops repeats.
    let distinct = |out: &mut Vec<u32>, start: usize| {
        out[start..].sort_unstable();
        let mut w = start;
        for k in start..out.len() {
            if k == start || out[k] != out[w - 1] {
                out[w] = out[k];
                w += 1;
            }
        }
        out.truncate(w);
    };
    let row = |d: u64, out: &mut Vec<u32>, vals: &mut Vec<T>| {
        let start = out.len();
        let mut t = 0u64;
        while ((out.len() - start) as u64) < per_doc && t < 20 * per_doc {
            let v = (mix(seed ^ mix(d.wrapping_mul(0x1_0000_0001) ^ t)) >> 11) as f64 / (1u64 << 53) as f64;
            out.push(zipf.term(v) as u32);
            t += 1;
            if (out.len() - start) as u64 == per_doc {
                distinct(out, start);
            }
        }
        // The draws may run out with repeats drawn since the last pass.
        distinct(out, start);
        vals.extend(out[start..].iter().map(|&c| T::from_f64((1 + mix(seed ^ mix(d ^ 0x5eed) ^ c as u64) % 5) as f64)));
    };
    let threads = std::thread::available_parallelism().map_or(1, |p| p.get()) as u64;
    let chunk = docs.div_ceil(4 * threads).max(1);
    type Part<T> = (Vec<u32>, Vec<u32>, Vec<T>);
    let parts: Vec<Part<T>> = std::thread::scope(|sc| {
        let jobs: Vec<_> = (0..docs.div_ceil(chunk))
            .map(|c| {
                sc.spawn(move || {
                    let (mut lens, mut idx, mut vals) = (Vec::new(), Vec::new(), Vec::new());
                    for d in c * chunk..((c + 1) * chunk).min(docs) {
                        let before = idx.len();
                        row(d, &mut idx, &mut vals);
                        lens.push((idx.len() - before) as u32);
                    }
                    (lens, idx, vals)
                })
            })
            .collect();
        // A generating thread panicking is a bug here: raised again.
        jobs.into_iter().map(|j| j.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    let nnz: usize = parts.iter().map(|p| p.1.len()).sum();
    let mut ptr = Vec::with_capacity(docs as usize + 1);
    ptr.push(0u32);
    let (mut idx, mut vals) = (Vec::with_capacity(nnz), Vec::with_capacity(nnz));
    for (lens, part, v) in parts {
        for l in lens {
            ptr.push(ptr[ptr.len() - 1] + l);
        }
        idx.extend_from_slice(&part);
        vals.extend_from_slice(&v);
    }
    Csr::try_new(docs, terms, ptr, idx, vals)
}

/// An LP / KKT-like rectangular matrix: `m × n` constraints by variables in `blocks` diagonal
/// blocks (a staircase: block `b`'s rows touch its own columns and the next block's), `per_row`
/// entries a row, plus `per_row / 4` linking columns (the last `n / 100`) in every row.
///
/// # Errors
/// [`Error::InvalidParameter`] for zero sizes; [`Error::TooLarge`].
pub fn lp<T: Value>(m: u64, n: u64, blocks: u64, per_row: u64, seed: u64) -> Result<Csr<u32, T>> {
    Spec::Lp { m, n, blocks, per_row }.build(seed)
}

fn lp_as<I: Index, T: Value>(m: u64, n: u64, blocks: u64, per_row: u64, seed: u64) -> Result<Csr<I, T>> {
    if blocks == 0 || per_row == 0 || n < 2 * blocks {
        return Err(Error::InvalidParameter { what: "blocks, per_row", msg: format!("{blocks} blocks of {n} columns, {per_row} a row") });
    }
    m.checked_mul(n).ok_or(Error::TooLarge { what: "m * n", len: u64::MAX, max: u64::MAX })?;
    let mut r = StdRng::seed_from_u64(seed);
    let link = (n / 100).max(1);
    let body = n - link;
    let width = body / blocks;
    let mut keys = Vec::new();
    let mut row = Vec::new();
    for i in 0..m {
        let b = (i * blocks / m.max(1)).min(blocks - 1);
        let (c0, c1) = (b * width, ((b + 2) * width).min(body));
        row.clear();
        for _ in 0..per_row {
            row.push(r.random_range(c0..c1));
        }
        for _ in 0..(per_row / 4).max(1) {
            row.push(body + r.random_range(0..link));
        }
        row.sort_unstable();
        row.dedup();
        keys.extend(row.iter().map(|&j| i * n + j));
    }
    from_keys(m, n, &keys, |_, _| rand_val(&mut r))
}

/// SplitMix64's finalizer: the generators' hash of a position.
fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A value in `[0, 1)` from a hash.
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// An unstructured tetrahedral-mesh-like matrix ([`Spec::Mesh`]): the points of a `k × k × k`
/// grid, each moved by up to 0.35 of a cell in each direction (seeded), joined to the points of
/// the 26 around it closer than 1.5 cells: about 13 neighbours a point, from 5 to 26, like the
/// vertex degrees of a tetrahedral mesh. Symmetric: off the diagonal −1/distance, on it the
/// row's absolute sum plus 1 (diagonally dominant). Numbered as `order` says.
///
/// # Errors
/// [`Error::TooLarge`] past `u32`.
pub fn mesh<T: Value>(k: u64, order: Order, seed: u64) -> Result<Csr<u32, T>> {
    Spec::Mesh { k, order }.build(seed)
}

fn mesh_as<I: Index, T: Value>(k: u64, order: Order, seed: u64) -> Result<Csr<I, T>> {
    let n = grid_points::<I>(k)?;
    // Each point's position, computed once (the numbering and the values ask for distances
    // again and again).
    let pos: Vec<[f64; 3]> = (0..n)
        .map(|p| {
            let c = [p % k, (p / k) % k, p / (k * k)];
            let h = mix64(seed ^ mix64(p));
            [0, 1, 2].map(|d| c[d] as f64 + 0.7 * unit(mix64(h ^ d as u64)) - 0.35)
        })
        .collect();
    let dist = |p: u64, q: u64| -> f64 {
        let (a, b) = (pos[p as usize], pos[q as usize]);
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    };
    let neighbours = |p: u64, out: &mut Vec<u64>| {
        out.clear();
        grid_around(k, p, |far, q| {
            if far > 0 && dist(p, q) < 1.5 {
                out.push(q);
            }
        });
    };
    let perm = numbering(n, order, seed, &neighbours);
    let mut inv = vec![0u64; n as usize];
    for (old, &new) in perm.iter().enumerate() {
        inv[new as usize] = old as u64;
    }
    let mut keys = Vec::with_capacity((n as usize).saturating_mul(14));
    let mut nb = Vec::new();
    for p in 0..n {
        neighbours(p, &mut nb);
        keys.push(perm[p as usize] * n + perm[p as usize]);
        keys.extend(nb.iter().map(|&q| perm[p as usize] * n + perm[q as usize]));
    }
    keys.sort_unstable();
    let mut row_sum = vec![1.0f64; n as usize];
    for &key in &keys {
        let (i, j) = (key / n, key % n);
        if i != j {
            row_sum[i as usize] += 1.0 / dist(inv[i as usize], inv[j as usize]);
        }
    }
    from_keys(n, n, &keys, |i, j| T::from_f64(if i == j { row_sum[i as usize] } else { -1.0 / dist(inv[i as usize], inv[j as usize]) }))
}

/// Banded with variable width ([`Spec::Skyline`]): row `i` holds every column within `w(i)` of
/// the diagonal, `w` a smooth profile between 0.2 and 1.8 times `width` (three seeded waves
/// along the rows, 10% noise a row), as the profile of a skyline solver's matrix. Values from
/// `[-1, 1)`, the diagonal 2w + 1.
///
/// # Errors
/// [`Error::InvalidParameter`] for `width` 0; [`Error::TooLarge`].
pub fn skyline<T: Value>(n: u64, width: u64, seed: u64) -> Result<Csr<u32, T>> {
    Spec::Skyline { n, width }.build(seed)
}

fn skyline_as<I: Index, T: Value>(n: u64, width: u64, seed: u64) -> Result<Csr<I, T>> {
    if width == 0 {
        return Err(Error::InvalidParameter { what: "width", msg: "the band's mean half-width must be at least 1".into() });
    }
    n.checked_mul(n).ok_or(Error::TooLarge { what: "n * n", len: u64::MAX, max: u64::MAX })?;
    let mut r = StdRng::seed_from_u64(seed);
    let waves: Vec<(f64, f64)> = (1..=3).map(|f| (f as f64 * 2.0 + r.random_range(0.0..1.0), r.random_range(0.0..std::f64::consts::TAU))).collect();
    let half = |i: u64| -> u64 {
        let x = i as f64 / n.max(1) as f64;
        let wave: f64 = waves.iter().map(|&(f, ph)| (std::f64::consts::TAU * f * x + ph).sin()).sum::<f64>() / 3.0;
        let noise = 0.1 * (2.0 * unit(mix64(seed ^ mix64(i))) - 1.0);
        (width as f64 * (1.0 + 0.8 * wave + noise).clamp(0.2, 1.8)).round().max(1.0) as u64
    };
    let mut keys = Vec::new();
    let mut diag = Vec::with_capacity(n as usize);
    for i in 0..n {
        let w = half(i);
        diag.push((2 * w + 1) as f64);
        keys.extend((i.saturating_sub(w)..=(i + w).min(n - 1)).map(|j| i * n + j));
    }
    from_keys(n, n, &keys, |i, j| if i == j { T::from_f64(diag[i as usize]) } else { rand_val(&mut r) })
}

/// A KKT (saddle-point) matrix ([`Spec::Kkt`]) of order `n + m`: `[[H, Bᵀ], [B, 0]]`, `H` the
/// `n × n` Hessian of a 2-D grid (diagonal and ±1, ±⌈√n⌉), `B` `m × n` with `per_row` entries a
/// row within `4 · per_row` columns of its diagonal position (`i · n / m`) plus one linking
/// column drawn from all. Symmetric, values included (`H`'s diagonal 4, the rest from a hash of
/// the position in `[-1, 1)`).
///
/// # Errors
/// [`Error::InvalidParameter`] for `n` 0 or `per_row` 0; [`Error::TooLarge`].
pub fn kkt<T: Value>(n: u64, m: u64, per_row: u64, seed: u64) -> Result<Csr<u32, T>> {
    Spec::Kkt { n, m, per_row }.build(seed)
}

fn kkt_as<I: Index, T: Value>(n: u64, m: u64, per_row: u64, seed: u64) -> Result<Csr<I, T>> {
    if n == 0 || per_row == 0 {
        return Err(Error::InvalidParameter { what: "n, per_row", msg: "H's order and the entries a constraint row must be at least 1".into() });
    }
    let size = n.checked_add(m).filter(|s| s.checked_mul(*s).is_some()).ok_or(Error::TooLarge { what: "(n + m)²", len: u64::MAX, max: u64::MAX })?;
    let mut r = StdRng::seed_from_u64(seed);
    let side = (n as f64).sqrt().ceil() as u64;
    let mut keys = Vec::new();
    for i in 0..n {
        for j in [i.checked_sub(side), i.checked_sub(1), Some(i), Some(i + 1), Some(i + side)].into_iter().flatten() {
            if j < n {
                keys.push(i * size + j);
            }
        }
    }
    let window = (4 * per_row).min(n);
    let mut row = Vec::new();
    for c in 0..m {
        let centre = c * n / m.max(1);
        let lo = centre.saturating_sub(window / 2).min(n - window);
        row.clear();
        for _ in 0..per_row {
            row.push(lo + r.random_range(0..window));
        }
        row.push(r.random_range(0..n));
        row.sort_unstable();
        row.dedup();
        for &j in &row {
            keys.push((n + c) * size + j);
            keys.push(j * size + n + c);
        }
    }
    keys.sort_unstable();
    keys.dedup();
    from_keys(size, size, &keys, |i, j| {
        if i == j {
            T::from_f64(4.0)
        } else {
            let (a, b) = (i.min(j), i.max(j));
            T::from_f64(2.0 * unit(mix64(seed ^ mix64(a.wrapping_mul(0x1_0000_0001) ^ b))) - 1.0)
        }
    })
}
