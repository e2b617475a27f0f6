//! The conformance corpus in `../shared/conformance`: every file of MANIFEST.md accepted with the
//! stated result or refused as stated, POLICY.md's decisions pinned, and conversion_vectors.json.
//! Reported skipped by name (`gpu_testkit::test_data`) when the folder is absent (a user's clone).
use std::path::PathBuf;

use sptrans_matrix::num_complex::Complex64;
use sptrans_matrix::{mm, Coo, Csr, Error, Value};

/// The corpus, or `None` after recording the running test as skipped (by name).
fn corpus() -> Option<PathBuf> {
    gpu_testkit::test_data("conformance", "conformance", "SPTRANS_CONFORMANCE")
}

fn read<T: Value>(f: &str) -> Result<Coo<u32, T>, Error> {
    let Some(dir) = corpus() else { return Err(Error::Parse { line: 0, msg: "no corpus".into() }) };
    mm::read_coo::<T>(dir.join(f))
}

/// Dense form, duplicates summed.
fn dense<T: Value>(a: &Coo<u32, T>) -> Vec<Vec<T>> {
    let mut d = vec![vec![T::default(); a.cols() as usize]; a.rows() as usize];
    for k in 0..a.nnz() as usize {
        let (i, j) = (a.row()[k] as usize, a.col()[k] as usize);
        d[i][j] = d[i][j].add(a.vals()[k]);
    }
    d
}

fn f(rows: &[&[f64]]) -> Vec<Vec<f64>> {
    rows.iter().map(|r| r.to_vec()).collect()
}

fn c(re: f64, im: f64) -> Complex64 {
    Complex64::new(re, im)
}

fn refused<T: Value>(file: &str) {
    match read::<T>(file) {
        Err(Error::Parse { line, msg }) => assert!(line > 0 || msg == "no corpus", "{file}: line 0: {msg}"),
        Err(Error::TooLarge { .. }) => {}
        Err(e) => panic!("{file}: unexpected error kind {e}"),
        Ok(_) => panic!("{file}: accepted, should be refused"),
    }
}

#[test]
fn fmm_invalid_files_are_refused_with_a_line_number() {
    let Some(dir) = corpus() else { return };
    let mut n = 0;
    for e in std::fs::read_dir(dir.join("fmm/invalid")).unwrap() {
        let name = format!("fmm/invalid/{}", e.unwrap().file_name().to_string_lossy());
        refused::<f64>(&name);
        refused::<()>(&name);
        refused::<Complex64>(&name);
        n += 1;
    }
    assert!(n >= 25, "only {n} invalid files");
}

#[test]
fn identity_files_and_permissive_banners() {
    if corpus().is_none() {
        return;
    }
    let eye = f(&[&[1., 0., 0.], &[0., 1., 0.], &[0., 0., 1.]]);
    for file in [
        "fmm/eye3.mtx",
        "fmm/eye3_str.mtx",
        "fmm/eye3_pattern.mtx",
        "fmm/eye3_array.mtx",
        "fmm_python/eye3.mtx",
        "fmm/permissive/permissive_banner_leading_spaces_eye3.mtx",
        "fmm/permissive/permissive_banner_one_percent_eye3.mtx",
        "fmm_python/matrix_coordinate_real_general.mtx",
        "fmm_python/matrix_coordinate_pattern_general.mtx",
    ] {
        let a = read::<f64>(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(dense(&a), eye, "{file}");
        assert_eq!(a.nnz(), 3, "{file}: zeros of an array are not entries");
    }
    let z = read::<Complex64>("fmm/eye3_complex.mtx").unwrap();
    assert_eq!(z.vals(), &[c(1., 0.); 3]);
    refused::<f64>("fmm/eye3_complex.mtx"); // complex into real
    assert_eq!(dense(&read::<i64>("fmm_python/matrix_coordinate_integer_general.mtx").unwrap()), vec![vec![1, 0, 0], vec![0, 1, 0], vec![0, 0, 1]]);
    assert_eq!(dense(&read::<f64>("fmm/permissive/permissive_lines_indented.mtx").unwrap()), f(&[&[1.]]));
}

#[test]
fn nist_example_in_every_spelling() {
    if corpus().is_none() {
        return;
    }
    let want = f(&[&[1., 0., 0., 6., 0.], &[0., 10.5, 0., 0., 0.], &[0., 0., 0.015, 0., 0.], &[0., 250.5, 0., -280., 33.32], &[0., 0., 0., 0., 12.]]);
    for file in [
        "fmm/nist_ex1.mtx",
        "fmm/nist_ex1_freeformat.mtx",
        "fmm/nist_ex1_more_freeformat.mtx",
        "fmm/permissive/windows_lineendings_nist_ex1_more_freeformat.mtx",
        "sprs/simple.mm",
    ] {
        assert_eq!(dense(&read::<f64>(file).unwrap_or_else(|e| panic!("{file}: {e}"))), want, "{file}");
    }
    let s = read::<f64>("sprs/simple.mm").unwrap();
    assert_eq!(s.row(), &[0, 1, 2, 0, 3, 3, 3, 4], "file order kept in COO");
    assert_eq!(s.col(), &[0, 1, 2, 3, 1, 3, 4, 4]);
    assert_eq!(read::<i64>("sprs/simple_int.mm").unwrap().vals(), &[1, 1, 1, 6, 2, -2, 3, 1]);
}

#[test]
fn arrays_rows_and_graphblas_duplicates() {
    if corpus().is_none() {
        return;
    }
    assert_eq!(dense(&read::<f64>("fmm/2col_array.mtx").unwrap()), f(&[&[10., 20.], &[11., 21.], &[12., 22.]]));
    for file in ["fmm_python/matrix_array_real_general.mtx", "fmm_python/matrix_array_integer_general.mtx"] {
        assert_eq!(dense(&read::<f64>(file).unwrap()), f(&[&[1., 11.], &[2., 22.], &[3., 33.]]), "{file}");
    }
    assert_eq!(dense(&read::<Complex64>("fmm_python/matrix_array_complex_general.mtx").unwrap())[2][1], c(33., 0.));
    assert_eq!(dense(&read::<i64>("fmm/row_3by4.mtx").unwrap()), vec![vec![1, 2, 3, 4], vec![0; 4], vec![0; 4]]);
    let Some(dir) = corpus() else { return };
    for e in std::fs::read_dir(dir.join("fmm/graphblas")).unwrap() {
        let name = format!("fmm/graphblas/{}", e.unwrap().file_name().to_string_lossy());
        let d: Vec<f64> = if name.contains("complex") {
            let a = read::<Complex64>(&name).unwrap();
            assert_eq!(a.nnz(), 4);
            dense(&a).iter().map(|r| r[0].re).collect()
        } else {
            // Every non-complex GraphBLAS file declares `real`, whatever its GraphBLAS type line says.
            let a = read::<f64>(&name).unwrap();
            assert_eq!(a.nnz(), 4);
            dense(&a).iter().map(|r| r[0]).collect()
        };
        assert_eq!(d, vec![1., 1., 2.], "{name}: duplicates summed when compressed");
    }
}

fn same_as_general<T: Value>(base: &str) {
    let a = read::<T>(&format!("{base}.mtx")).unwrap_or_else(|e| panic!("{base}: {e}"));
    let g = read::<T>(&format!("{base}_general.mtx")).unwrap();
    assert_eq!(a.to_csr(), g.to_csr(), "{base}");
    assert_eq!(a.nnz(), g.nnz(), "{base}: diagonal must not be duplicated");
}

#[test]
fn symmetry_expansion_matches_the_general_files() {
    if corpus().is_none() {
        return;
    }
    same_as_general::<f64>("fmm/symmetry/coordinate_symmetric_row");
    same_as_general::<f64>("fmm/symmetry/coordinate_skew_symmetric_row");
    same_as_general::<()>("fmm/symmetry/coordinate_pattern_symmetric_row");
    same_as_general::<Complex64>("fmm/symmetry/coordinate_hermitian_row");
    same_as_general::<f64>("fmm/symmetry_array/array_symmetric");
    same_as_general::<Complex64>("fmm/symmetry_array/array_hermitian");
    // The skew array's general file stores its zero diagonal explicitly: compare values only.
    let a = read::<f64>("fmm/symmetry_array/array_skew-symmetric.mtx").unwrap();
    assert_eq!(dense(&a), f(&[&[0., -22., -33.], &[22., 0., -44.], &[33., 44., 0.]]));
    assert_eq!(read::<f64>("fmm/symmetry/coordinate_symmetric_row.mtx").unwrap().nnz(), 5);
    // The `_dup` variant, read as general, doubles the diagonal when summed: why expansion must not mirror it.
    assert_eq!(read::<f64>("fmm/symmetry/coordinate_symmetric_row_general_dup.mtx").unwrap().to_csr().get(2, 2), Some(60.0));
    assert_eq!(
        dense(&read::<f64>("fmm_python/matrix_coordinate_real_symmetric.mtx").unwrap()),
        f(&[&[0., 0., 10.], &[0., 0., 20.], &[10., 20., 30.]])
    );
    assert_eq!(read::<()>("fmm_python/matrix_coordinate_pattern_symmetric.mtx").unwrap().nnz(), 5);
    let h = dense(&read::<Complex64>("fmm/symmetry/coordinate_hermitian_row.mtx").unwrap());
    assert_eq!((h[0][2], h[2][0]), (c(10., -1.), c(10., 1.)));
    assert_eq!(dense(&read::<Complex64>("sprs/complex/skew-symmetric.mtx").unwrap()), vec![vec![c(0., 0.), c(3., 4.)], vec![c(-3., -4.), c(0., 0.)]]);
    assert_eq!(dense(&read::<Complex64>("sprs/complex/symmetric.mtx").unwrap()), vec![vec![c(1., 2.), c(3., 4.)], vec![c(3., 4.), c(0., 0.)]]);
    assert_eq!(dense(&read::<Complex64>("sprs/complex/simple.mtx").unwrap()), vec![vec![c(1., 2.), c(3., 4.)], vec![c(5., 6.), c(0., 0.)]]);
    let s = read::<f64>("sprs/symmetric.mm").unwrap().to_csr().to_csc();
    let (_, _, p, i, v) = (s.rows(), s.cols(), s.ptr().to_vec(), s.idx().to_vec(), s.vals().to_vec());
    assert_eq!((p, i, v), (vec![0, 1, 3, 4, 6, 8], vec![0, 1, 3, 2, 1, 4, 3, 4], vec![1., 10.5, 250.5, 0.015, 250.5, 33.32, 33.32, 12.]));
}

#[test]
fn policy_refusals() {
    if corpus().is_none() {
        return;
    }
    for file in [
        "fmm/symmetry/coordinate_hermitian_real_row.mtx",       // hermitian with a real field
        "sprs/complex/hermitian-int.mtx",                       // hermitian with an integer field
        "sprs/complex/hermitian.mtx",                           // non-real hermitian diagonal
        "fmm_python/matrix_coordinate_complex_hermitian.mtx",   // non-real hermitian diagonal
        "fmm_python/matrix_coordinate_real_skew-symmetric.mtx", // nonzero skew diagonal
        "fmm_python/misc/windows_newlines.mtx",                 // bare CR
        "sprs/bad_files/not_enough_entries.mm",
        "sprs/bad_files/too_many_elems_in_entry.mm", // extra token
        "fmm/overflow/overflow_dim_gt_int64.mtx",
        "fmm/overflow/overflow_index_gt_int64.mtx",
        "fmm/overflow/overflow_value_gt_float64.mtx", // 1E310: never a silent inf
        "fmm/overflow/overflow_value_gt_float128.mtx",
        "fmm/overflow/overflow_value_gt_int64.mtx",
        "fmm/vector_array.mtx",
        "fmm/vector_coordinate.mtx",
        "fmm/vector_coordinate_complex.mtx",
        "fmm/vector_coordinate_dupes.mtx",
        "fmm/vector_coordinate_complex_dupes.mtx",
        "fmm_python/scipy_crashes/vector_array_real_general.mtx",
        "fmm_python/scipy_crashes/vector_coordinate_real_general.mtx",
        "fmm_python/long_double/longdouble_array.mtx",
        "fmm_python/long_double/longdouble_coordinate.mtx",
        "fmm_python/scipy_crashes/dim_over_32_bit.mtx", // 2^40 dims into 32-bit indices
    ] {
        refused::<f64>(file);
    }
    refused::<Complex64>("fmm/overflow/overflow_value_gt_complex128.mtx");
    refused::<Complex64>("fmm_python/long_double/longcomplex_array.mtx");
    refused::<Complex64>("fmm_python/long_double/longcomplex_coordinate.mtx");
    // 2^33 fits i64 but not i32.
    assert_eq!(read::<i64>("fmm/overflow/overflow_value_gt_int32.mtx").unwrap().vals()[0], 8_589_934_592);
    refused::<i32>("fmm/overflow/overflow_value_gt_int32.mtx");
    let a = read::<f64>("fmm/overflow/overflow_index_gt_int8.mtx").unwrap();
    assert_eq!((a.nnz(), a.row()[0], a.col()[0], a.vals()[0]), (1, 299, 0, 1.0));
    // The same 2^40 file is fine with 64-bit indices.
    let Some(dir) = corpus() else { return };
    let bytes = std::fs::read(dir.join("fmm_python/scipy_crashes/dim_over_32_bit.mtx")).unwrap();
    let big = mm::parse::<u64, f64>(&bytes).unwrap();
    assert_eq!((big.rows(), big.nnz(), *big.row().last().unwrap()), (1 << 40, 3, (1 << 40) - 2));
    // 1-based 2^40 - 1
}

#[test]
fn sprs_pattern_and_julia_files() {
    if corpus().is_none() {
        return;
    }
    assert_eq!(read::<()>("sprs/pattern.mm").unwrap().nnz(), 4);
    let j = read::<i64>("julia_matrixmarket/test.mtx").unwrap();
    assert_eq!((j.rows(), j.cols(), j.nnz()), (11, 12, 5));
    let mut e: Vec<(u32, u32)> = j.row().iter().copied().zip(j.col().iter().copied()).collect();
    e.sort();
    assert_eq!(e, vec![(0, 0), (1, 3), (3, 4), (4, 0), (5, 6)]);
}

#[test]
fn conversion_vectors() {
    let Some(dir) = corpus() else { return };
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("conversion_vectors.json")).unwrap()).unwrap();
    let u = |x: &serde_json::Value| -> Vec<u32> { x.as_array().unwrap().iter().map(|y| y.as_u64().unwrap() as u32).collect() };
    let fl = |x: &serde_json::Value| -> Vec<f64> { x.as_array().unwrap().iter().map(|y| y.as_f64().unwrap()).collect() };
    let shape = |x: &serde_json::Value| (x["shape"][0].as_u64().unwrap(), x["shape"][1].as_u64().unwrap());
    let mut checked = 0;
    for vec in v["vectors"].as_array().unwrap() {
        let id = vec["id"].as_str().unwrap();
        let expect_csc = |a: &Csr<u32, f64>, e: &serde_json::Value| {
            let csc = a.to_csc();
            assert_eq!((csc.ptr().to_vec(), csc.idx().to_vec(), csc.vals().to_vec()), (u(&e["indptr"]), u(&e["indices"]), fl(&e["data"])), "{id}");
        };
        if let Some(inp) = vec.get("input_csr") {
            let (m, n) = shape(inp);
            let a = Csr::<u32, f64>::try_new(m, n, u(&inp["indptr"]), u(&inp["indices"]), fl(&inp["data"])).unwrap();
            expect_csc(&a, &vec["expected_csc"]);
            checked += 1;
        }
        if let Some(inp) = vec.get("input_coo") {
            let (m, n) = shape(inp);
            let a = Coo::<u32, f64>::try_new(m, n, u(&inp["rows"]), u(&inp["cols"]), fl(&inp["data"])).unwrap().to_csr();
            let e = &vec["expected_csr"];
            assert_eq!((a.ptr().to_vec(), a.idx().to_vec(), a.vals().to_vec()), (u(&e["indptr"]), u(&e["indices"]), fl(&e["data"])), "{id}");
            expect_csc(&a, &vec["expected_csc"]);
            checked += 1;
        }
        if id == "scipy_size_zero_and_empty" {
            for case in vec["cases"].as_array().unwrap() {
                let (m, n) = shape(case);
                let a = Csr::<u32, f64>::try_new(m, n, vec![0; m as usize + 1], vec![], vec![]).unwrap();
                let t = a.transpose();
                assert_eq!((t.rows(), t.cols(), t.ptr().len()), (n, m, n as usize + 1), "{id} {m}x{n}");
                assert!(t.ptr().iter().all(|&p| p == 0));
                checked += 1;
            }
        }
        if id == "nalgebra_invalid_csr_data" {
            for case in vec["cases"].as_array().unwrap() {
                let name = case["name"].as_str().unwrap();
                let (m, n) = shape(case);
                let (p, i, vals) = (u(&case["offsets"]), u(&case["indices"]), fl(&case["values"]));
                let sorted = Csr::<u32, f64>::try_new_sorted(m, n, p.clone(), i.clone(), vals.clone());
                let any = Csr::<u32, f64>::try_new(m, n, p, i, vals);
                let unsorted_expect = case["expected_try_from_unsorted_csr_data"].as_str().unwrap();
                // Every case is refused by the sorted constructor; the general one accepts
                // unsorted and duplicate indices (our policy: duplicates are summed on compression).
                assert!(sorted.is_err(), "{name}");
                let accepted_by_policy = unsorted_expect.starts_with("(accepted") || unsorted_expect == "DuplicateEntry";
                assert_eq!(any.is_ok(), accepted_by_policy, "{name}: {:?}", any.err());
                checked += 1;
            }
            let ok = &vec["valid_unsorted"];
            let (m, n) = shape(ok);
            let a = Csr::<u32, f64>::try_new(m, n, u(&ok["offsets"]), u(&ok["indices"]), fl(&ok["values"])).unwrap();
            let s = a.transpose().transpose();
            let e = &ok["expected_sorted"];
            assert_eq!((s.ptr().to_vec(), s.idx().to_vec(), s.vals().to_vec()), (u(&e["offsets"]), u(&e["indices"]), fl(&e["values"])));
        }
        if id == "ginkgo_transpose_square_and_nonsquare" {
            for case in vec["cases"].as_array().unwrap() {
                let Some(d) = case.get("input_dense") else { continue };
                let d: Vec<Vec<f64>> = d.as_array().unwrap().iter().map(&fl).collect();
                let (mut row, mut col, mut val) = (vec![], vec![], vec![]);
                for (i, r) in d.iter().enumerate() {
                    for (j, &x) in r.iter().enumerate() {
                        if x != 0.0 {
                            row.push(i as u32);
                            col.push(j as u32);
                            val.push(x);
                        }
                    }
                }
                let a = Coo::try_new(d.len() as u64, d[0].len() as u64, row, col, val).unwrap().to_csr();
                let want: Vec<Vec<f64>> = case["transpose_dense"].as_array().unwrap().iter().map(&fl).collect();
                assert_eq!(dense(&a.transpose().to_coo()), want);
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "only {checked} vectors checked");
}
