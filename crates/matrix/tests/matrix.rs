//! Constructors (every error), conversions, Matrix Market round trips and error lines, the
//! generators (shape, nnz, determinism, distributions), and the real matrices of `../shared`.

use sptrans_matrix::num_complex::{Complex32, Complex64};
use sptrans_matrix::{generate, mm, Coo, Csr, Error, Value};

#[test]
fn constructor_errors() {
    let e = |r: Result<Csr<u32, f64>, Error>| r.unwrap_err();
    assert!(matches!(e(Csr::try_new(2, 2, vec![0, 1], vec![0], vec![1.0])), Error::LengthMismatch { what: "pointer array", expected: 3, got: 2 }));
    assert!(matches!(e(Csr::try_new(1, 2, vec![1, 1], vec![0], vec![1.0])), Error::BadPointers { index: 0, .. }));
    assert!(matches!(e(Csr::try_new(2, 2, vec![0, 2, 1], vec![0, 1], vec![1.0, 2.0])), Error::BadPointers { index: 2, .. }));
    assert!(matches!(e(Csr::try_new(1, 2, vec![0, 1], vec![0, 1], vec![1.0, 2.0])), Error::BadPointers { index: 1, .. }));
    assert!(matches!(e(Csr::try_new(1, 2, vec![0, 1], vec![2], vec![1.0])), Error::IndexOutOfRange { position: 0, index: 2, bound: 2 }));
    assert!(matches!(e(Csr::try_new(1, 2, vec![0, 1], vec![0], vec![])), Error::LengthMismatch { what: "values", .. }));
    assert!(matches!(e(Csr::try_new_sorted(1, 3, vec![0, 2], vec![2, 1], vec![1.0, 2.0])), Error::NotSorted { slice: 0, position: 1 }));
    assert!(matches!(e(Csr::try_new_sorted(1, 3, vec![0, 2], vec![1, 1], vec![1.0, 2.0])), Error::NotSorted { .. }));
    assert!(matches!(e(Csr::try_new(1u64 << 33, 1, vec![], vec![], vec![])), Error::TooLarge { what: "rows", .. }));
    assert!(Csr::<u64, f64>::try_new(3, 1 << 40, vec![0, 0, 0, 0], vec![], vec![]).is_ok(), "u64 indices hold 2^40");
    assert!(matches!(Coo::<u32, f64>::try_new(2, 2, vec![0], vec![0, 1], vec![1.0]), Err(Error::LengthMismatch { .. })));
    assert!(matches!(Coo::<u32, f64>::try_new(2, 2, vec![2], vec![0], vec![1.0]), Err(Error::IndexOutOfRange { .. })));
    // Signed and wide index arrays (PyTorch's and SciPy's int32/int64): converted, or an error
    // naming the array and the position.
    let a = Csr::<u32, f64>::try_from_indices(2, 3, &[0i64, 1, 3], &[2i64, 0, 1], vec![1.0, 2.0, 3.0]).unwrap();
    assert_eq!((a.ptr(), a.idx()), (&[0u32, 1, 3][..], &[2u32, 0, 1][..]));
    assert_eq!(Csr::<u32, f64>::try_from_indices(2, 3, &[0i32, 1, 3], &[2i32, 0, 1], vec![1.0, 2.0, 3.0]).unwrap(), a);
    let err = e(Csr::try_from_indices(2, 3, &[0i64, 1, 3], &[2i64, -4, 1], vec![1.0, 2.0, 3.0]));
    assert!(matches!(err, Error::BadIndexValue { what: "index", position: 1, value: -4, .. }), "{err}");
    assert!(err.to_string().contains("index at position 1 is -4: negative"), "{err}");
    assert!(matches!(e(Csr::try_from_indices(1, 3, &[0i64, -1], &[], vec![])), Error::BadIndexValue { what: "pointer", position: 1, value: -1, .. }));
    let err = e(Csr::try_from_indices(1, 3, &[0u64, 1], &[1u64 << 32], vec![1.0]));
    assert!(matches!(err, Error::BadIndexValue { what: "index", position: 0, .. }) && err.to_string().contains("maximum 4294967295"), "{err}");
    assert!(matches!(e(Csr::try_from_indices(1, 3, &[0i64, 1], &[3i64], vec![1.0])), Error::IndexOutOfRange { position: 0, index: 3, bound: 3 }));
    // Empty shapes are valid.
    for (m, n) in [(0, 0), (0, 5), (5, 0)] {
        let a = Csr::<u32, f32>::try_new(m, n, vec![0; m as usize + 1], vec![], vec![]).unwrap();
        let t = a.transpose();
        assert_eq!((t.rows(), t.cols(), t.ptr().len()), (n, m, n as usize + 1));
    }
}

#[test]
fn coo_to_csr_sums_duplicates_and_transpose_round_trips() {
    let a = Coo::<u32, i64>::try_new(2, 3, vec![1, 0, 1, 1], vec![2, 1, 0, 2], vec![5, 7, 1, 2]).unwrap().to_csr();
    assert_eq!((a.ptr(), a.idx(), a.vals()), (&[0u32, 1, 3][..], &[1u32, 0, 2][..], &[7i64, 1, 7][..]));
    assert!(a.is_sorted_unique());
    assert_eq!(a.transpose().transpose(), a);
    assert_eq!(a.to_csc().to_csr(), a);
    assert_eq!(a.to_coo().to_csr(), a);
}

fn round_trip<T: Value>(a: &Csr<u32, T>) {
    let mut out = Vec::new();
    mm::write_csr(&mut out, a).unwrap();
    let b = mm::parse::<u32, T>(&out).unwrap().to_csr();
    assert_eq!(&b, a);
    // Values come back bit-identical (PartialEq on floats would accept -0.0 == 0.0).
    assert_eq!(format!("{:?}", b.vals()), format!("{:?}", a.vals()));
}

#[test]
fn write_read_round_trips_bit_identical() {
    round_trip(&generate::uniform::<f64>(50, 70, 600, 1).unwrap());
    round_trip(&generate::uniform::<f32>(70, 50, 600, 2).unwrap());
    round_trip(&generate::uniform::<i64>(10, 10, 30, 3).unwrap());
    round_trip(&generate::uniform::<i32>(10, 10, 30, 3).unwrap());
    round_trip(&generate::uniform::<()>(40, 10, 100, 4).unwrap());
    let c = generate::uniform::<f64>(9, 9, 20, 5).unwrap();
    let (m, n, p, i, v) = c.into_parts();
    round_trip(&Csr::try_new(m, n, p.clone(), i.clone(), v.iter().map(|&x| Complex64::new(x, -x / 3.0)).collect()).unwrap());
    round_trip(&Csr::try_new(m, n, p, i, v.iter().map(|&x| Complex32::new(x as f32, 1e-30)).collect()).unwrap());
    // Awkward floats: subnormals, extremes, negative zero.
    let vals = vec![f64::MIN_POSITIVE / 3.0, f64::MAX, -0.0, 1.0 / 3.0, 5e-324];
    round_trip(&Csr::try_new(1, 5, vec![0, 5], vec![0, 1, 2, 3, 4], vals).unwrap());
    round_trip(&Csr::<u32, f32>::try_new(1, 3, vec![0, 3], vec![0, 1, 2], vec![f32::MAX, -f32::MIN_POSITIVE, 0.1]).unwrap());
    round_trip(&Csr::<u32, f64>::try_new(0, 4, vec![0], vec![], vec![]).unwrap());
    // The narrow and wide integers at their extremes (past 2^53 exactly), every f16 and bf16 bit
    // pattern that is not a NaN (their shortest f32 spelling reads back to the same bits).
    round_trip(&Csr::<u32, i8>::try_new(1, 3, vec![0, 3], vec![0, 1, 2], vec![i8::MIN, -1, i8::MAX]).unwrap());
    round_trip(&Csr::<u32, u16>::try_new(1, 2, vec![0, 2], vec![0, 1], vec![0, u16::MAX]).unwrap());
    round_trip(&Csr::<u32, i128>::try_new(1, 3, vec![0, 3], vec![0, 1, 2], vec![i128::MIN, (1 << 53) + 1, i128::MAX]).unwrap());
    round_trip(&Csr::<u32, u128>::try_new(1, 2, vec![0, 2], vec![0, 1], vec![u128::MAX, 1]).unwrap());
    let row = |n: usize| (vec![0, n as u32], (0..n as u32).collect::<Vec<u32>>());
    let f16s: Vec<half::f16> = (0..=u16::MAX).map(half::f16::from_bits).filter(|v| !v.is_nan()).collect();
    let (p, i) = row(f16s.len());
    round_trip(&Csr::try_new(1, f16s.len() as u64, p, i, f16s).unwrap());
    let bf16s: Vec<half::bf16> = (0..=u16::MAX).map(half::bf16::from_bits).filter(|v| !v.is_nan()).collect();
    let (p, i) = row(bf16s.len());
    round_trip(&Csr::try_new(1, bf16s.len() as u64, p, i, bf16s).unwrap());
    // Out of range for the type: an error naming it, not a wrapped or infinite value.
    assert!(mm::parse::<u32, i8>(b"%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 128\n").unwrap_err().to_string().contains("i8"));
    assert!(mm::parse::<u32, half::f16>(b"%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e6\n").unwrap_err().to_string().contains("f16"));
}

#[test]
fn errors_name_the_line() {
    let cases: [(&str, u64, &str); 8] = [
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", 3, "row index 3"),
        ("%%MatrixMarket matrix coordinate real general\n% c\n\n2 2 2\n1 1 1\n", 6, "premature end"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1 7\n", 3, "extra token"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1e999\n", 3, "out of range"),
        ("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 x\n", 3, "invalid integer"),
        ("\n%%MatrixMarket matrix coordinate real general\n1 1 0\n", 1, "banner"),
        ("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", 2, "square"),
        ("%%MatrixMarket matrix coordinate real general\r2 2 0\r", 1, "bare CR"),
    ];
    for (text, line, what) in cases {
        match mm::parse::<u32, f64>(text.as_bytes()) {
            Err(Error::Parse { line: l, msg }) => assert!(l == line && msg.contains(what), "{text:?}: line {l}: {msg}"),
            other => panic!("{text:?}: {other:?}"),
        }
    }
    // Gzip by magic bytes, whatever the name.
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1\n").unwrap();
    let bytes = mm::read_bytes(&gz.finish().unwrap()[..]).unwrap();
    assert_eq!(mm::parse::<u32, f64>(&bytes).unwrap().vals(), &[1.0]);
}

#[test]
fn generators_are_deterministic_with_the_stated_shapes() {
    let a = generate::uniform::<f64>(1000, 700, 50_000, 9).unwrap();
    assert_eq!((a.rows(), a.cols(), a.nnz()), (1000, 700, 50_000));
    assert!(a.is_sorted_unique());
    assert_eq!(a, generate::uniform::<f64>(1000, 700, 50_000, 9).unwrap());
    assert_ne!(a, generate::uniform::<f64>(1000, 700, 50_000, 10).unwrap());
    let dense = generate::uniform::<f32>(30, 20, 590, 1).unwrap(); // complement sampling path
    assert_eq!(dense.nnz(), 590);
    assert_eq!(generate::uniform::<f32>(3, 3, 100, 1).unwrap().nnz(), 9);
    let r = generate::rmat::<f32>(12, 40_000, 0.57, 0.19, 0.19, 3).unwrap();
    assert!(r.rows() == 4096 && r.nnz() > 20_000 && r.nnz() <= 40_000 && r.is_sorted_unique());
    let row0 = r.ptr()[1] - r.ptr()[0];
    assert!(row0 as u64 > r.nnz() / 100, "R-MAT concentrates edges on low vertices ({row0})");
    let l2 = generate::laplacian_2d::<f64>(10).unwrap();
    assert_eq!((l2.rows(), l2.nnz()), (100, 100 + 4 * 90));
    assert_eq!(l2.transpose(), l2, "symmetric");
    let l3 = generate::laplacian_3d::<f64>(10).unwrap();
    assert_eq!((l3.rows(), l3.nnz()), (1000, 1000 + 6 * 900));
    assert_eq!(l3.get(0, 0), Some(6.0));
    let b = generate::banded::<f64>(100, 2, 3, 1).unwrap();
    assert_eq!(b.nnz(), 100 * 6 - (1 + 2) - (1 + 2 + 3));
    let t = generate::tall_skinny::<f64>(10_000, 16, 4, 1).unwrap();
    assert_eq!((t.rows(), t.cols(), t.nnz()), (10_000, 16, 40_000));
    let dr = generate::dense_row::<f64>(1000, 2000, 5000, 1).unwrap();
    assert_eq!(dr.ptr()[501] - dr.ptr()[500], 2000);
    let dc = generate::dense_col::<f64>(1000, 2000, 5000, 1).unwrap().transpose();
    assert_eq!(dc.ptr()[1001] - dc.ptr()[1000], 1000);
}

/// The realistic suite's generators (issue 37): shapes, symmetry where promised, the structure
/// each claims (bandwidth by numbering, hubs, rails, Zipf columns, a staircase), determinism, and
/// the same matrix with `u64` indices.
#[test]
fn realistic_generators_have_their_structure() {
    use generate::{Order, Spec};
    let bandwidth = |a: &sptrans_matrix::Csr<u32, f64>| {
        (0..a.rows() as usize)
            .flat_map(|i| a.idx()[a.ptr()[i] as usize..a.ptr()[i + 1] as usize].iter().map(move |&j| (j as i64 - i as i64).unsigned_abs()))
            .max()
            .unwrap_or(0)
    };
    let k = 12u64;
    let mut bands = Vec::new();
    for order in [Order::Natural, Order::Random, Order::Rcm] {
        let s7 = generate::stencil_3d::<f64>(k, 7, order, 5).unwrap();
        assert_eq!((s7.rows(), s7.nnz()), (k * k * k, k * k * k + 6 * (k * k * (k - 1))), "{order:?}");
        let s27 = generate::stencil_3d::<f64>(k, 27, order, 5).unwrap();
        let inner = |d: u64| 3 * d - 2; // neighbours along one axis, self included, summed over the line
        assert_eq!(s27.nnz(), inner(k).pow(3), "{order:?}");
        assert!(s27.is_sorted_unique());
        assert_eq!(s27.transpose(), s27, "{order:?}: symmetric");
        let diag: f64 = (0..s27.rows() as usize).map(|i| s27.get(i as u64, i as u64).unwrap()).sum();
        assert_eq!(diag, 26.0 * (k * k * k) as f64);
        bands.push(bandwidth(&s27));
    }
    let n = k * k * k;
    assert!(bands[0] == k * k + k + 1, "natural: {bands:?}");
    assert!(bands[1] > n / 2, "random numbering scatters: {bands:?}");
    assert!(bands[2] < n / 4 && bands[2] * 3 < bands[1], "RCM keeps a band (level sets of the corner BFS): {bands:?}");
    assert!(generate::stencil_3d::<f64>(4, 9, Order::Natural, 1).unwrap_err().to_string().contains("7 or 27"));

    let g = generate::community_graph::<f64>(20_000, 12, 500, 3).unwrap();
    let local = (0..20_000usize)
        .map(|i| g.idx()[g.ptr()[i] as usize..g.ptr()[i + 1] as usize].iter().filter(|&&j| j as usize / 500 == i / 500).count())
        .sum::<usize>();
    assert!(local as f64 > 0.7 * g.nnz() as f64, "communities: {local} of {}", g.nnz());
    let max_row = (0..20_000usize).map(|i| g.ptr()[i + 1] - g.ptr()[i]).max().unwrap();
    assert!(max_row as u64 > 10 * g.nnz() / 20_000, "power-law degrees: max {max_row}");
    let cols = g.transpose();
    let max_col = (0..20_000usize).map(|j| cols.ptr()[j + 1] - cols.ptr()[j]).max().unwrap();
    assert!(max_col as u64 > 20 * g.nnz() / 20_000, "hubs: max column {max_col}");

    let c = generate::circuit::<f64>(40_000, 3, 4).unwrap();
    let dense_rows = (0..40_000usize).filter(|&i| c.ptr()[i + 1] - c.ptr()[i] > 1000).count();
    assert!((1..=3).contains(&dense_rows), "rails: {dense_rows}");
    assert_eq!(c.transpose().ptr(), c.ptr(), "circuit pattern symmetric (row counts)");

    let t = generate::text::<f64>(5000, 30_000, 40, 6).unwrap();
    assert_eq!((t.rows(), t.cols()), (5000, 30_000));
    let df = t.transpose();
    let (first, tail) = (df.ptr()[1] - df.ptr()[0], df.ptr()[30_000] - df.ptr()[15_000]);
    assert!(first > 1000 && (tail as u64) < t.nnz() / 5, "Zipf: term 0 in {first} documents, second half {tail}");
    assert!(generate::text::<f64>(10, 5, 6, 1).is_err());

    let l = generate::lp::<f64>(10_000, 12_000, 20, 8, 7).unwrap();
    assert_eq!((l.rows(), l.cols()), (10_000, 12_000));
    let body = 12_000 - 120;
    for i in [0usize, 4_999, 9_999] {
        let b = (i * 20 / 10_000) as u32;
        for &j in &l.idx()[l.ptr()[i] as usize..l.ptr()[i + 1] as usize] {
            let w = body / 20;
            assert!(j >= body || (j >= b * w && j < (b + 2) * w), "row {i}: column {j} off the staircase");
        }
    }

    // The mesh: symmetric with its values, about 13 neighbours a point (5 to 26), diagonally
    // dominant; its three numberings are permutations of one matrix (the same degrees), natural
    // order within a band of k² + k + 1, RCM well inside random numbering's spread.
    let mut degrees = Vec::new();
    let mut mesh_bands = Vec::new();
    for order in [Order::Natural, Order::Random, Order::Rcm] {
        let m = generate::mesh::<f64>(k, order, 9).unwrap();
        assert!(m.is_sorted_unique());
        assert!(m.transpose().same_bits(&m), "{order:?}: symmetric, values too");
        let mut d: Vec<u32> = m.ptr().windows(2).map(|w| w[1] - w[0] - 1).collect();
        let mean = d.iter().map(|&x| x as f64).sum::<f64>() / d.len() as f64;
        assert!((10.0..16.0).contains(&mean) && *d.iter().min().unwrap() >= 3 && *d.iter().max().unwrap() <= 26, "{order:?}: mean degree {mean}");
        for i in 0..m.rows() {
            let row = m.ptr()[i as usize] as usize..m.ptr()[i as usize + 1] as usize;
            let off: f64 = row.clone().filter(|&p| m.idx()[p] as u64 != i).map(|p| m.vals()[p].abs()).sum();
            assert!(m.get(i, i).unwrap() > off, "{order:?}: row {i} not diagonally dominant");
        }
        d.sort_unstable();
        degrees.push(d);
        mesh_bands.push(bandwidth(&m));
    }
    assert!(degrees[0] == degrees[1] && degrees[1] == degrees[2], "one mesh, three numberings");
    assert!(mesh_bands[0] <= k * k + k + 1 && mesh_bands[2] * 3 < mesh_bands[1], "mesh bands {mesh_bands:?}");

    // The skyline: each row a contiguous run around the diagonal, of half-widths from 0.2 to 1.8
    // times the mean, which vary along the rows.
    let sky = generate::skyline::<f64>(20_000, 12, 3).unwrap();
    let mut halves = Vec::new();
    for i in 0..20_000usize {
        let row = &sky.idx()[sky.ptr()[i] as usize..sky.ptr()[i + 1] as usize];
        let (lo, hi) = (row[0] as usize, row[row.len() - 1] as usize);
        assert_eq!(hi - lo + 1, row.len(), "row {i}: a contiguous band");
        assert!(lo <= i && i <= hi);
        halves.push((i - lo).max(hi - i));
    }
    let (min, max) = (*halves.iter().min().unwrap(), *halves.iter().max().unwrap());
    let mean = halves.iter().sum::<usize>() as f64 / halves.len() as f64;
    assert!(min >= 2 && max <= 22 && max >= 2 * min && (8.0..16.0).contains(&mean), "half-widths {min}..{max}, mean {mean}");
    assert!(generate::skyline::<f64>(10, 0, 1).is_err());

    // The KKT matrix: symmetric with its values, an empty bottom-right block, every constraint
    // row with its entries near its diagonal position plus the linking one.
    let (n, m) = (5000u64, 2000u64);
    let kk = generate::kkt::<f64>(n, m, 6, 4).unwrap();
    assert_eq!((kk.rows(), kk.cols()), (n + m, n + m));
    assert!(kk.transpose().same_bits(&kk), "KKT symmetric");
    for c in 0..m {
        let i = (n + c) as usize;
        let row = &kk.idx()[kk.ptr()[i] as usize..kk.ptr()[i + 1] as usize];
        assert!(row.iter().all(|&j| (j as u64) < n), "constraint {c}: an entry in the zero block");
        let centre = (c * n / m) as i64;
        let near = row.iter().filter(|&&j| (j as i64 - centre).abs() <= 24).count();
        assert!(near + 1 >= row.len() && (2..=7).contains(&row.len()), "constraint {c}: {row:?}");
    }
    assert!(generate::kkt::<f64>(0, 3, 2, 1).is_err());

    for spec in [
        Spec::Mesh { k: 5, order: Order::Rcm },
        Spec::Skyline { n: 3000, width: 5 },
        Spec::Kkt { n: 2000, m: 700, per_row: 4 },
        Spec::Stencil { k: 6, points: 27, order: Order::Rcm },
        Spec::Graph { n: 3000, degree: 8, community: 100 },
        Spec::Circuit { n: 3000, rails: 2 },
        Spec::Text { docs: 500, terms: 4000, per_doc: 20 },
        Spec::Lp { m: 900, n: 1000, blocks: 5, per_row: 6 },
    ] {
        let (a, b) = (spec.build::<u32, f64>(11).unwrap(), spec.build::<u32, f64>(11).unwrap());
        assert_eq!(a, b, "{spec:?}: deterministic");
        let w = spec.build::<u64, f64>(11).unwrap();
        assert!(
            w.ptr().iter().map(|&p| p as u32).eq(a.ptr().iter().copied()) && w.idx().iter().map(|&j| j as u32).eq(a.idx().iter().copied()),
            "{spec:?}: u64"
        );
        assert_eq!(w.vals(), a.vals());
    }
}

#[test]
fn real_matrices_read_with_the_promised_nnz() {
    let Some(dir) = gpu_testkit::test_data("matrix", "matrices", "SPTRANS_MATRICES") else { return };
    let mut n = 0;
    for sub in ["real", "graphs"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = e.unwrap().path();
            let bytes = mm::read_bytes(std::fs::File::open(&path).unwrap()).unwrap();
            // The size line's entry count, and whether the file is symmetric.
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(1 << 16)]).to_string();
            let sym = !text.lines().next().unwrap().to_ascii_lowercase().contains("general");
            let size = text.lines().find(|l| !l.trim_start().starts_with('%') && !l.trim().is_empty()).unwrap();
            let declared: u64 = size.split_whitespace().nth(2).map(|t| t.parse().unwrap()).unwrap_or(0);
            let a = if text.to_ascii_lowercase().contains(" complex ") {
                mm::parse::<u32, Complex64>(&bytes).map(|c| c.nnz())
            } else {
                mm::parse::<u32, ()>(&bytes).map(|c| c.nnz())
            };
            if path.ends_with("Ragusa16.mtx") {
                // Declares `pattern` but carries a value on every entry line (Ragusa16_pattern.mtx
                // is the clean file): POLICY.md refuses extra tokens, naming the first such line.
                assert!(matches!(a, Err(Error::Parse { line: 23, .. })), "{a:?}");
                n += 1;
                continue;
            }
            let stored = a.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if !text.contains(" array ") {
                if sym {
                    assert!(stored >= declared && stored <= 2 * declared, "{}", path.display());
                } else {
                    assert_eq!(stored, declared, "{}", path.display());
                }
            }
            n += 1;
        }
    }
    assert!(n >= 60, "{n} matrices");
}

/// A reader that hands out a few bytes at a time: lines straddle every chunk boundary.
struct Trickle<'a>(&'a [u8], usize);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.1.min(buf.len()).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn streaming_reads_equal_whole_buffer_reads() {
    let a = generate::rmat::<f64>(10, 20_000, 0.57, 0.19, 0.19, 3).unwrap();
    let mut text = Vec::new();
    mm::write_csr(&mut text, &a).unwrap();
    text.extend_from_slice(b"% trailing comment without newline");
    let whole = mm::parse::<u32, f64>(&text).unwrap();
    for (step, hint) in [(1usize, None), (3, Some(5u64)), (4096, Some(300)), (1 << 20, None)] {
        let s = mm::parse_reader::<u32, f64>(Trickle(&text, step), hint).unwrap();
        assert_eq!(s.to_csr(), whole.to_csr(), "step {step} hint {hint:?}");
    }
    // Errors keep their line numbers across chunk boundaries.
    let bad = b"%%MatrixMarket matrix coordinate real general\r\n% c\r\n3 3 2\r\n1 1 1\r\n4 1 1\r\n";
    for step in [1usize, 2, 7, 100] {
        match mm::parse_reader::<u32, f64>(Trickle(bad, step), Some(3)) {
            Err(sptrans_matrix::Error::Parse { line: 5, msg }) => assert!(msg.contains("row index 4"), "{msg}"),
            other => panic!("step {step}: {other:?}"),
        }
    }
}

/// `generate::text_hashed`: the same matrix for the same arguments and the same first rows for a
/// taller one; rows of distinct sorted terms, at most `per_doc` of them (nearly always exactly),
/// values 1 to 5; the Zipf law's head: term 0 the most frequent; bad arguments refused.
#[test]
fn hashed_text_is_deterministic_and_zipf_like() {
    use sptrans_matrix::generate::text_hashed;
    let seed: u64 = rand::random();
    let a = text_hashed::<f32>(3000, 5000, 20, seed).unwrap();
    assert!(a.same_bits(&text_hashed::<f32>(3000, 5000, 20, seed).unwrap()), "seed {seed}");
    let tall = text_hashed::<f32>(5000, 5000, 20, seed).unwrap();
    assert_eq!(&tall.ptr()[..3001], a.ptr(), "seed {seed}");
    assert_eq!(&tall.idx()[..a.nnz() as usize], a.idx(), "seed {seed}");
    assert_eq!(&tall.vals()[..a.nnz() as usize], a.vals(), "seed {seed}");
    let mut full = 0;
    let mut freq = vec![0u32; 5000];
    for r in 0..3000 {
        let row = &a.idx()[a.ptr()[r] as usize..a.ptr()[r + 1] as usize];
        assert!(row.len() <= 20 && row.windows(2).all(|w| w[0] < w[1]), "row {r}, seed {seed}");
        full += usize::from(row.len() == 20);
        for &c in row {
            freq[c as usize] += 1;
        }
    }
    assert!(full >= 2900, "{full} of 3000 rows full, seed {seed}");
    assert!(a.vals().iter().all(|&v| (1.0..=5.0).contains(&v) && v.fract() == 0.0), "seed {seed}");
    assert_eq!(freq.iter().enumerate().max_by_key(|(_, &f)| f).map(|(i, _)| i), Some(0), "seed {seed}");
    // Rows that cannot find `per_doc` distinct terms in their draws (every term asked for, the
    // rare ones seldom drawn) still come out sorted and distinct.
    let tight = text_hashed::<f32>(200, 50, 50, seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    for r in 0..200 {
        let row = &tight.idx()[tight.ptr()[r] as usize..tight.ptr()[r + 1] as usize];
        assert!(!row.is_empty() && row.windows(2).all(|w| w[0] < w[1]), "row {r}: {row:?}, seed {seed}");
    }
    assert!(text_hashed::<f32>(10, 5, 6, 1).is_err());
    assert!(text_hashed::<f32>(10, 5, 0, 1).is_err());
}
