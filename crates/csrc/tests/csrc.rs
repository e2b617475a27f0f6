//! CSRC against its twins: the GPU build equal to `serial::Csrc::from_csr` exactly (of `A`, or of
//! `Aᵀ` for a transpose view), footprints equal; every product (`DeviceCsrc`, the deterministic
//! `CsrPair`, cuSPARSE) against `serial::multiply` within `serial::error_bound`, for `A·X` and
//! `Aᵀ·U`, k from 1 to 16, f32 and f64, `beta = 0` into a poisoned output and `beta ≠ 0`, on
//! every generator, tall, wide and square, row counts around the row block (0, 1, 255, 256, 257,
//! 2^k ± 1), a dense column and a dense row, empty shapes; `CsrPair` bit-identical across runs;
//! NaN and infinity propagated; the errors. The twin's own CSRC-order product is checked against
//! the specification on any machine.
use gpu_csrc::{serial, CsrPair, CuSparseProducts, DenseView, DenseViewMut, DeviceCsrc, Error, Op, Products, Split, SpmvValue, Walk, BLOCK_ROWS};
use gpu_runtime::{DeviceView, DeviceViewMut};
use gpu_testkit::{gpu_test, max_len, rng, Gpu};
use rand::rngs::StdRng;
use rand::Rng;
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{generate, Csr};

fn matrices<T: SpmvValue>(r: &mut StdRng, scale: u64) -> Vec<(String, Csr<u32, T>)> {
    let s: u64 = r.random();
    let b = BLOCK_ROWS as u64;
    let m = [1, b - 1, b, b + 1, 2 * b + 1, scale, scale + 1][r.random_range(0..7)].max(1);
    let n = r.random_range(1..=scale.max(2));
    let nnz = r.random_range(0..=(m * n).min(8 * scale));
    let mut out: Vec<(String, Csr<u32, T>)> = vec![
        (format!("uniform {m}x{n} {nnz}"), generate::uniform(m, n, nnz, s)),
        (format!("uniform wide {n}x{m}"), generate::uniform(n.min(m), m.max(n) + 3, nnz, s ^ 1)),
        (format!("tall-skinny {}x{}", 4 * scale, n.min(64)), generate::tall_skinny(4 * scale, n.min(64), n.min(64).min(10), s)),
        (
            format!("rmat {}", (scale as f64).sqrt() as u64 + 4),
            generate::rmat(((scale as f64).sqrt() as u64 + 1).ilog2() + 4, 4 * scale, 0.57, 0.19, 0.19, s),
        ),
        (format!("laplacian2d {}", (scale as f64).sqrt() as u64 + 1), generate::laplacian_2d((scale as f64).sqrt() as u64 + 1)),
        (format!("dense col {m}x{n}"), generate::dense_col(m, n, nnz.max(m), s)),
        (format!("dense row {m}x{n}"), generate::dense_row(m, n, nnz.max(n), s)),
    ]
    .into_iter()
    .filter_map(|(name, a)| a.ok().map(|a| (name, a)))
    .collect();
    for (m, n) in [(0u64, 0u64), (0, 7), (7, 0), (5, 9), (300, 2)] {
        out.push((format!("empty {m}x{n}"), Csr::try_new(m, n, vec![0; m as usize + 1], vec![], vec![]).unwrap()));
    }
    out
}

fn random_vec<T: SpmvValue>(r: &mut StdRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect()
}

/// The twin's output and its error bound.
type Answer<T> = (Vec<T>, Vec<f64>);

/// One product's inputs and the twin's answers to it, computed once per `(alpha, beta)`: the
/// many plan settings a test checks on the same inputs share them (the twin runs on one host
/// thread, and was most of this binary's time).
struct Twin<'a, T: SpmvValue> {
    a: &'a Csr<u32, T>,
    op: Op,
    x: &'a [T],
    k: usize,
    out0: &'a [T],
    /// `(alpha, beta)` bits → (the twin's output, its error bound).
    answers: Vec<((u128, u128), Answer<T>)>,
}

impl<'a, T: SpmvValue> Twin<'a, T> {
    fn new(a: &'a Csr<u32, T>, op: Op, x: &'a [T], k: usize, out0: &'a [T]) -> Self {
        Self { a, op, x, k, out0, answers: Vec::new() }
    }

    /// The twin's output and bound for `alpha`, `beta`.
    fn answer(&mut self, alpha: T, beta: T) -> Answer<T> {
        let key = (alpha.bit_pattern(), beta.bit_pattern());
        if let Some((_, got)) = self.answers.iter().find(|(k, _)| *k == key) {
            return got.clone();
        }
        let mut want = self.out0.to_vec();
        serial::multiply(self.a, self.op, alpha, self.x, self.k, beta, &mut want);
        let bound = serial::error_bound(self.a, self.op, alpha, self.x, self.k, beta, self.out0);
        self.answers.push((key, (want.clone(), bound.clone())));
        (want, bound)
    }
}

/// One product on the GPU against the twin, with packed blocks and, for 3 and 16 vectors, again
/// with strided ones (leading dimension `rows + 3`, the gaps poisoned and checked untouched);
/// returns the GPU's output of the packed run.
fn check<T: SpmvValue, P: Products<T>>(gpu: &Gpu, plan: &mut P, twin: &mut Twin<'_, T>, alpha: T, beta: T, what: &str) -> Vec<T> {
    let (want, bound) = twin.answer(alpha, beta);
    let (op, x, k, out0) = (twin.op, twin.x, twin.k, twin.out0);
    let (xn, on) = (x.len() / k, out0.len() / k);
    let mut first = None;
    // Strided blocks for two vector counts only (each run is a full product).
    for strided in [false, true].into_iter().filter(|&s| !s || k == 3 || k == 16) {
        let (xld, old) = if strided { (xn + 3, on + 3) } else { (xn.max(1), on.max(1)) };
        let poison = T::from_f64(-1.5e30); // a sentinel no product here computes
        let spread = |v: &[T], n: usize, ld: usize| -> Vec<T> {
            let mut s = vec![poison; ld * k];
            for c in 0..k {
                s[c * ld..c * ld + n].copy_from_slice(&v[c * n..(c + 1) * n]);
            }
            s
        };
        let dx = gpu.upload(&spread(x, xn, xld)).unwrap();
        let out_init = if beta == T::default() { vec![poison; on * k] } else { out0.to_vec() };
        let mut dout = gpu.upload(&spread(&out_init, on, old)).unwrap();
        {
            let xv = DenseView::new(DeviceView::of(&dx), xn as u64, k as u64, xld as u64).unwrap();
            let mut ov = DenseViewMut::new(DeviceViewMut::of(&mut dout), on as u64, k as u64, old as u64).unwrap();
            plan.multiply(op, alpha, &xv, beta, &mut ov).unwrap_or_else(|e| panic!("{what} {op:?} k={k} strided={strided}: {e}"));
        }
        let all = gpu.download(&dout).unwrap();
        let mut got = Vec::with_capacity(on * k);
        for c in 0..k {
            got.extend_from_slice(&all[c * old..c * old + on]);
            assert!(
                all[c * old + on..(c + 1) * old].iter().all(|v| v.bit_pattern() == poison.bit_pattern()),
                "{what} {op:?} k={k}: wrote into the gaps"
            );
        }
        if let Err(e) = gpu_spmv::serial::within(&got, &want, &bound) {
            panic!("{what} {op:?} k={k} strided={strided} {}: {e}", T::NAME);
        }
        first.get_or_insert(got);
    }
    first.unwrap_or_default()
}

/// The pair's product against the twin with `beta = 0` twice (the same bits both times: the
/// deterministic products) and with `beta ≠ 0`.
fn check_pair<T: SpmvValue>(gpu: &Gpu, pair: &mut CsrPair<T>, twin: &mut Twin<'_, T>, name: &str) {
    let (one, half, m34) = (T::from_f64(1.0), T::from_f64(0.5), T::from_f64(-0.75));
    let what = format!("pair {name}");
    let first = check(gpu, pair, twin, one, T::default(), &what);
    let again = check(gpu, pair, twin, one, T::default(), &what);
    assert!(
        first.iter().zip(&again).all(|(p, q)| p.bit_pattern() == q.bit_pattern()),
        "{name} {:?} k={}: the pair gave other bits the second time",
        twin.op,
        twin.k
    );
    check(gpu, pair, twin, m34, half, &what);
}

fn lens<T: SpmvValue>(a: &Csr<u32, T>, op: Op) -> (usize, usize) {
    match op {
        Op::NoTranspose => (a.cols() as usize, a.rows() as usize),
        Op::Transpose => (a.rows() as usize, a.cols() as usize),
    }
}

fn every_product<T: SpmvValue>(gpu: &Gpu, r: &mut StdRng) -> usize {
    let mut cases = 0;
    for scale in [1u64, 33, 300, 5000, 100_000] {
        if scale * 8 > max_len() as u64 {
            continue;
        }
        for (name, a) in matrices::<T>(r, scale) {
            let da = DeviceCsr::upload(gpu, &a).unwrap();
            let mut c = DeviceCsrc::from_csr(gpu, &da).unwrap();
            let twin = if a.cols() > a.rows() { serial::Csrc::from_csr(&a.transpose()) } else { serial::Csrc::from_csr(&a) };
            assert_eq!(c.download().unwrap(), twin, "{name}: the build");
            assert_eq!(c.footprint_bytes(), twin.footprint_bytes(), "{name}");
            assert_eq!(c.is_transpose_view(), a.cols() > a.rows());
            let default_budget = c.transposed_shared_bytes();
            assert!(default_budget >= 48 * 1024);
            let mut pair = CsrPair::new(gpu, da).unwrap();
            let mut cs = CuSparseProducts::new(gpu, DeviceCsr::upload(gpu, &a).unwrap()).unwrap();
            for k in [1usize, 2, 3, 4, 7, 16] {
                for op in [Op::NoTranspose, Op::Transpose] {
                    let (xn, on) = lens(&a, op);
                    let x = random_vec::<T>(r, xn * k);
                    let out0 = random_vec::<T>(r, on * k);
                    let (one, half, m34) = (T::from_f64(1.0), T::from_f64(0.5), T::from_f64(-0.75));
                    let mut twin = Twin::new(&a, op, &x, k, &out0);
                    // The transposed product's ways: shared memory with the default cap, with the
                    // largest (one block per SM), in passes of 3 vectors, and global atomics only;
                    // each by warp segments and by lane groups.
                    let stored_cols = if c.is_transpose_view() { a.rows() } else { a.cols() };
                    let budgets =
                        [default_budget, u32::MAX, ((stored_cols + BLOCK_ROWS as u64) * 3 * T::BYTES as u64).min(u32::MAX as u64) as u32, 0];
                    for walk in [Walk::Auto, Walk::WarpSegments, Walk::LaneGroups] {
                        c.set_transposed_walk(walk);
                        for budget in budgets {
                            c.set_transposed_shared_bytes(budget);
                            check(gpu, &mut c, &mut twin, one, T::default(), &format!("csrc {name} budget {budget} {walk:?}"));
                            check(gpu, &mut c, &mut twin, m34, half, &format!("csrc {name} budget {budget} {walk:?}"));
                        }
                    }
                    c.set_transposed_walk(Walk::Auto);
                    c.set_transposed_shared_bytes(default_budget);
                    // The products (the direct one, and the transposed one's global ways) by one
                    // block a row block and by pieces of row blocks.
                    for split in [Split::Never, Split::Always] {
                        c.set_split(split);
                        for budget in [default_budget, 0] {
                            c.set_transposed_shared_bytes(budget);
                            check(gpu, &mut c, &mut twin, one, T::default(), &format!("csrc {name} {split:?} budget {budget}"));
                            check(gpu, &mut c, &mut twin, m34, half, &format!("csrc {name} {split:?} budget {budget}"));
                        }
                    }
                    c.set_split(Split::Auto);
                    c.set_transposed_shared_bytes(default_budget);
                    check_pair(gpu, &mut pair, &mut twin, &name);
                    if k <= 4 {
                        check(gpu, &mut cs, &mut twin, m34, half, &format!("cusparse {name}"));
                    }
                    cases += 1;
                }
            }
        }
    }
    cases
}

gpu_test!(fn every_product_matches_the_twin_f64(gpu) {
    let (mut r, _seed) = rng();
    assert!(every_product::<f64>(gpu, &mut r) >= 100);
});

gpu_test!(fn every_product_matches_the_twin_f32(gpu) {
    let (mut r, _seed) = rng();
    assert!(every_product::<f32>(gpu, &mut r) >= 100);
});

/// The pair's row-major group kernels (3 to 16 vectors: groups of 4, 8 and 16 lanes) on
/// awkward row counts (0, 1, 31, 32, 33, 2^10 ± 1, a few thousand), rows longer than a group's
/// load of nonzeros and empty ones, both products, the pair made from a borrowed view as the SVD
/// makes it; every k of 3 to 16, `beta = 0` into poison and `beta ≠ 0`, bit-identical reruns.
/// The same with the sides cut into column panels (`CsrPair::with_panels`) of 1 (or a 64th),
/// a few and a third of the rows, for every k of 1 to 16 (k < 3 by the column-major kernels).
fn pair_wide<T: SpmvValue>(gpu: &Gpu, r: &mut StdRng) -> usize {
    let mut cases = 0;
    for m in [0u64, 1, 31, 32, 33, 1023, 1025, 4099] {
        let n = r.random_range(1..=300u64);
        let s: u64 = r.random();
        let mats = [
            (format!("uniform {m}x{n}"), generate::uniform::<T>(m, n, r.random_range(0..=(m * n).min(40 * m + 5)), s)),
            (format!("dense row {m}x{n}"), generate::dense_row::<T>(m, n, (m + n).min(m * n), s)),
        ];
        for (name, a) in mats.into_iter().filter_map(|(name, a)| a.ok().map(|a| (name, a))) {
            let da = DeviceCsr::upload(gpu, &a).unwrap();
            let mut pair = CsrPair::from_view(gpu, &da).unwrap();
            assert!(!pair.row_major());
            pair.set_row_major(true);
            // Column panels of 1 row (a 64th of the longer side past 64), a few, and about a
            // third of it (both sides cut where they are taller), by both kernels: k = 1, 2
            // column-major, 3 ..= 16 row-major.
            let panel_rows = [(m.max(n) / 64).max(1), r.random_range(2..=7u64), m.max(n) / 3 + 1];
            let mut panelled: Vec<_> = panel_rows.iter().map(|&p| (p, CsrPair::with_panels(gpu, &da, p).unwrap())).collect();
            for (p, q) in &mut panelled {
                let want = (n.div_ceil(*p).max(1) as usize, m.div_ceil(*p).max(1) as usize);
                assert_eq!(q.panels(), want, "{name}: panels of {p} rows");
                q.set_row_major(true);
            }
            for k in 1..=16usize {
                for op in [Op::NoTranspose, Op::Transpose] {
                    let (xn, on) = lens(&a, op);
                    let x = random_vec::<T>(r, xn * k);
                    let out0 = random_vec::<T>(r, on * k);
                    let mut twin = Twin::new(&a, op, &x, k, &out0);
                    if k >= 3 {
                        check_pair(gpu, &mut pair, &mut twin, &name);
                        cases += 1;
                    }
                    for (p, q) in &mut panelled {
                        check_pair(gpu, q, &mut twin, &format!("{name}, panels of {p}"));
                        cases += 1;
                    }
                }
            }
        }
    }
    cases
}

gpu_test!(fn pair_wide_blocks_match_the_twin(gpu) {
    let (mut r, _seed) = rng();
    assert!(pair_wide::<f64>(gpu, &mut r) >= 300);
    assert!(pair_wide::<f32>(gpu, &mut r) >= 300);
});

gpu_test!(fn nan_and_infinity_propagate(gpu) {
    let (mut r, _seed) = rng();
    let a = generate::tall_skinny::<f64>(3000, 50, 8, 5).unwrap();
    let mut c = DeviceCsrc::from_csr(gpu, &DeviceCsr::upload(gpu, &a).unwrap()).unwrap();
    for op in [Op::NoTranspose, Op::Transpose] {
        let (xn, on) = lens(&a, op);
        let mut x = random_vec::<f64>(&mut r, xn * 3);
        x[7] = f64::NAN;
        x[xn + 3] = f64::INFINITY;
        let out0 = vec![0.0; on * 3];
        check(gpu, &mut c, &mut Twin::new(&a, op, &x, 3, &out0), 2.0, 0.0, "nan/inf");
    }
});

gpu_test!(fn errors_are_values(gpu) {
    let a = generate::uniform::<f64>(300, 20, 1000, 1).unwrap();
    let mut c = DeviceCsrc::from_csr(gpu, &DeviceCsr::upload(gpu, &a).unwrap()).unwrap();
    let (x, mut y) = (gpu.alloc::<f64>(20 * 17).unwrap(), gpu.alloc::<f64>(300 * 17).unwrap());
    let block = |k: u64| DenseView::new(DeviceView::of(&x), 20, k, 20).unwrap();
    assert!(matches!(c.multiply(Op::NoTranspose, 1.0, &block(0), 0.0, &mut DenseViewMut::new(DeviceViewMut::of(&mut y), 300, 0, 300).unwrap()), Err(Error::BadVectorCount { k: 0 })));
    assert!(matches!(c.multiply(Op::NoTranspose, 1.0, &block(17), 0.0, &mut DenseViewMut::new(DeviceViewMut::of(&mut y), 300, 17, 300).unwrap()), Err(Error::BadVectorCount { k: 17 })));
    assert!(matches!(c.multiply(Op::Transpose, 1.0, &block(1), 0.0, &mut DenseViewMut::new(DeviceViewMut::of(&mut y), 20, 1, 20).unwrap()), Err(Error::LengthMismatch { what: "x rows", expected: 300, got: 20 })));
    assert!(matches!(c.multiply(Op::NoTranspose, 1.0, &block(2), 0.0, &mut DenseViewMut::new(DeviceViewMut::of(&mut y), 299, 2, 299).unwrap()), Err(Error::LengthMismatch { what: "out rows", expected: 300, .. })));
    assert!(matches!(c.multiply(Op::NoTranspose, 1.0, &block(2), 0.0, &mut DenseViewMut::new(DeviceViewMut::of(&mut y), 300, 3, 300).unwrap()), Err(Error::LengthMismatch { what: "out vectors", expected: 2, got: 3 })));
    // A leading dimension below the rows, or a view too short for its shape, is refused when the
    // block is made.
    assert!(matches!(DenseView::new(DeviceView::of(&x), 20, 2, 19), Err(gpu_runtime::Error::LeadingDimension { rows: 20, ld: 19 })));
    assert!(matches!(DenseView::new(DeviceView::of(&x), 20, 18, 20), Err(gpu_runtime::Error::LengthMismatch { .. })));
    let parts = sptrans_matrix::device::DeviceCsrParts::<f64> { ptr: gpu.upload(&[0u32, 1, 2]).unwrap(), idx: gpu.upload(&[0u32, 1]).unwrap(), vals: None };
    let pattern = DeviceCsr::from_parts(gpu, 2, 2, parts).unwrap();
    assert!(matches!(DeviceCsrc::from_csr(gpu, &pattern), Err(Error::NoValues)));
    assert!(matches!(CsrPair::new(gpu, pattern), Err(Error::NoValues)));
    // 300 rows: 2 row blocks, 3 pointers; 13 bytes per f64 nonzero.
    assert_eq!(c.footprint_bytes(), 4 * 3 + 13 * 1000);
});

/// The twin's CSRC-order product agrees with the specification, and the constructor refuses
/// broken layouts (no GPU needed).
#[test]
fn twin_products_and_validation() {
    let (mut r, _seed) = rng();
    for scale in [1u64, 33, 300, 3000] {
        for (name, a) in matrices::<f64>(&mut r, scale) {
            let c = serial::Csrc::from_csr(&a);
            let (p, rr, j, v) = c.parts();
            assert_eq!(serial::Csrc::try_new(a.rows(), a.cols(), p.to_vec(), rr.to_vec(), j.to_vec(), v.to_vec()).unwrap(), c, "{name}");
            for k in [1usize, 3, 16] {
                for op in [Op::NoTranspose, Op::Transpose] {
                    let (xn, on) = lens(&a, op);
                    let x = random_vec::<f64>(&mut r, xn * k);
                    let out0 = random_vec::<f64>(&mut r, on * k);
                    let (mut got, mut want) = (out0.clone(), out0.clone());
                    c.multiply(op, -0.5, &x, k, 2.0, &mut got);
                    serial::multiply(&a, op, -0.5, &x, k, 2.0, &mut want);
                    let bound = serial::error_bound(&a, op, -0.5, &x, k, 2.0, &out0);
                    gpu_spmv::serial::within(&got, &want, &bound).unwrap_or_else(|e| panic!("{name} {op:?} k={k}: {e}"));
                }
            }
            if a.nnz() >= 2 && a.cols() >= 2 {
                // A column past the end; a block not sorted by column; a row past the matrix.
                let mut jj = j.to_vec();
                jj[0] = a.cols() as u32;
                assert!(serial::Csrc::try_new(a.rows(), a.cols(), p.to_vec(), rr.to_vec(), jj, v.to_vec()).is_err(), "{name}");
                let g = p.windows(2).position(|w| w[1] - w[0] >= 2 && j[w[0] as usize] != j[w[1] as usize - 1]);
                if let Some(g) = g {
                    let mut jj = j.to_vec();
                    jj.swap(p[g] as usize, p[g + 1] as usize - 1);
                    assert!(
                        matches!(serial::Csrc::try_new(a.rows(), a.cols(), p.to_vec(), rr.to_vec(), jj, v.to_vec()), Err(Error::Invalid(_))),
                        "{name}"
                    );
                }
            }
        }
    }
    assert!(serial::Csrc::<f64>::try_new(10, 10, vec![0, 1], vec![10], vec![0], vec![1.0]).is_err());
    assert!(serial::Csrc::<f64>::try_new(10, 10, vec![0], vec![], vec![], vec![]).is_err());
}

// `set_gpu`: products after moving the plan to another stream of the same context (a caller's
// current stream, as the Python package does) equal the twin's, tall and wide (transpose view).
gpu_test!(fn products_follow_the_stream_set_later(gpu) {
    let (mut r, _seed) = rng();
    for a in [generate::uniform::<f64>(5000, 3000, 60_000, r.random()).unwrap(), generate::uniform::<f64>(700, 9000, 50_000, r.random()).unwrap()] {
        let d = DeviceCsr::upload(gpu, &a).unwrap();
        let mut c = DeviceCsrc::from_csr(gpu, &d).unwrap();
        let other = gpu.fork().unwrap();
        c.set_gpu(&other).unwrap();
        let k = 3;
        let x: Vec<f64> = (0..a.cols() as usize * k).map(|_| r.random_range(-1.0..1.0)).collect();
        let y: Vec<f64> = (0..a.rows() as usize * k).map(|_| r.random_range(-1.0..1.0)).collect();
        for (op, input, n_out) in [(Op::NoTranspose, &x, a.rows() as usize), (Op::Transpose, &y, a.cols() as usize)] {
            let n_in = input.len() / k;
            let xd = other.upload(input).unwrap();
            let mut od = other.alloc_zeros::<f64>(n_out * k).unwrap();
            let xv = DenseView::packed(DeviceView::of(&xd), n_in as u64).unwrap();
            let mut ov = DenseViewMut::packed(DeviceViewMut::of(&mut od), n_out as u64).unwrap();
            c.multiply(op, 1.0, &xv, 0.0, &mut ov).unwrap();
            let got = other.download(&od).unwrap();
            let mut want = vec![0.0; n_out * k];
            serial::multiply(&a, op, 1.0, input, k, 0.0, &mut want);
            let scale = a.vals().iter().map(|v| v.abs()).sum::<f64>().max(1.0);
            assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 1e-12 * scale), "{op:?}");
        }
    }
});

/// The direct product's pieces tile the nonzeros in order, each inside its row block and at most
/// a piece's size, every nonempty row block covered; a heavy row block (power-law rows) is
/// what `Split::Auto` splits for, even ones are not.
#[test]
fn pieces_tile_the_row_blocks() {
    let (mut r, _seed) = rng();
    for _ in 0..200 {
        let blocks = r.random_range(0..300usize);
        let mut p = vec![0u32];
        for _ in 0..blocks {
            let n = match r.random_range(0..10) {
                0 => 0,
                1 => r.random_range(20_000..300_000),
                _ => r.random_range(0..5000),
            };
            p.push(p.last().unwrap() + n);
        }
        let (bounds, block_of, heavy) = gpu_csrc::pieces(&p);
        let size = gpu_csrc::PIECE_NNZ.max((*p.last().unwrap() as u64).div_ceil(blocks.max(1) as u64));
        assert_eq!(bounds.len(), block_of.len() + 1);
        assert_eq!((bounds[0], *bounds.last().unwrap()), (0, *p.last().unwrap()));
        for (i, &g) in block_of.iter().enumerate() {
            let (h0, h1) = (bounds[i], bounds[i + 1]);
            assert!(h0 < h1 && h0 >= p[g as usize] && h1 <= p[g as usize + 1], "piece {i} of block {g}");
            assert!((h1 - h0) as u64 <= size);
        }
        for g in 0..blocks {
            let covered: u32 = block_of.iter().enumerate().filter(|&(_, &b)| b as usize == g).map(|(i, _)| bounds[i + 1] - bounds[i]).sum();
            assert_eq!(covered, p[g + 1] - p[g], "row block {g}");
        }
        let heaviest = p.windows(2).map(|w| (w[1] - w[0]) as u64).max().unwrap_or(0);
        assert_eq!(heavy, heaviest > 4 * size);
    }
    let even: Vec<u32> = (0..=1000).map(|g| 3000 * g).collect();
    assert!(!gpu_csrc::pieces(&even).2);
}

// A power-law graph's CSRC runs its products by pieces (Split::Auto), an even matrix's by row
// blocks; the pieces' products (both directions, the transposed one in global memory) are the
// twin's.
gpu_test!(fn power_law_rows_go_by_pieces(gpu) {
    let (mut r, _seed) = rng();
    let g = generate::rmat::<f64>(16, 2_000_000, 0.57, 0.19, 0.19, r.random()).unwrap();
    let mut c = DeviceCsrc::from_csr(gpu, &DeviceCsr::upload(gpu, &g).unwrap()).unwrap();
    assert!(c.by_pieces(), "R-MAT 2^16: no heavy row block?");
    c.set_transposed_shared_bytes(0);
    for op in [Op::NoTranspose, Op::Transpose] {
        for k in [1, 3] {
            let (xn, on) = lens(&g, op);
            let x = random_vec::<f64>(&mut r, xn * k);
            let out0 = random_vec::<f64>(&mut r, on * k);
            check(gpu, &mut c, &mut Twin::new(&g, op, &x, k, &out0), 1.0, 0.0, &format!("rmat by pieces {op:?} k={k}"));
        }
    }
    let u = generate::uniform::<f64>(20_000, 3_000, 200_000, r.random()).unwrap();
    assert!(!DeviceCsrc::from_csr(gpu, &DeviceCsr::upload(gpu, &u).unwrap()).unwrap().by_pieces());
});
