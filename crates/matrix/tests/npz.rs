//! SciPy `.npz` archives (`scipy.sparse.save_npz`, made by SciPy 1.17: CSR, CSC, COO with int64
//! indices, complex values; compressed and not) read through `mm::Input` equal the same matrices
//! written by `scipy.io.mmwrite` (the float32 one as float64: SciPy 1.17's mmwrite pads float32
//! values with NUL bytes at precision 17); malformed archives are errors, never panics.
use std::path::PathBuf;

use sptrans_matrix::mm::Input;
use sptrans_matrix::num_complex::Complex64;
use sptrans_matrix::{Csr, Value};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn both<T: Value>(name: &str) -> (Csr<u32, T>, Csr<u32, T>) {
    let npz = Input::open(data(&format!("{name}.npz"))).unwrap().read_csr::<T>(None).unwrap();
    let mtx = Input::open(data(&format!("{name}.mtx"))).unwrap().read_csr::<T>(None).unwrap();
    (npz, mtx)
}

#[test]
fn npz_equals_matrix_market() {
    for name in ["scipy-csr-f64", "scipy-csc-f32", "scipy-coo-i64"] {
        let (a, b) = both::<f64>(name);
        assert_eq!((a.rows(), a.cols(), a.ptr(), a.idx()), (b.rows(), b.cols(), b.ptr(), b.idx()), "{name}");
        assert!(a.vals().iter().zip(b.vals()).all(|(x, y)| x.to_bits() == y.to_bits()), "{name}");
    }
    let (a, b) = both::<Complex64>("scipy-csr-c128");
    assert_eq!((a.ptr(), a.idx(), a.vals()), (b.ptr(), b.idx(), b.vals()));
    let (a, b) = both::<i64>("scipy-coo-i64");
    assert_eq!(a.vals(), b.vals());
    // 64-bit indices, and standard input (a reader, not a file).
    let f = std::fs::File::open(data("scipy-csr-f64.npz")).unwrap();
    let a = Input::from_reader(Box::new(f), None).unwrap().read_csr_checked_as::<u64, f64>(&mut |_, _, _| Ok(())).unwrap();
    assert_eq!(a.nnz(), both::<f64>("scipy-csr-f64").1.nnz());
}

#[test]
fn fields_follow_the_data_dtype() {
    use sptrans_matrix::Field;
    let field = |n: &str| Input::open(data(n)).unwrap().header().field;
    assert_eq!(field("scipy-csr-f64.npz"), Field::Real);
    assert_eq!(field("scipy-coo-i64.npz"), Field::Integer);
    assert_eq!(field("scipy-csr-c128.npz"), Field::Complex);
    // Complex values into a real type: refused, as for Matrix Market files.
    let e = Input::open(data("scipy-csr-c128.npz")).unwrap().read_csr::<f64>(None).unwrap_err().to_string();
    assert!(e.contains("complex"), "{e}");
}

#[test]
fn malformed_archives_are_errors() {
    let bytes = std::fs::read(data("scipy-csr-f64.npz")).unwrap();
    for cut in [10, 100, bytes.len() / 2, bytes.len() - 30] {
        let r = Input::from_reader(Box::new(std::io::Cursor::new(bytes[..cut].to_vec())), None).and_then(|i| i.read_csr::<f64>(None));
        assert!(r.is_err(), "cut at {cut}");
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.npz");
    let mut z = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
    z.start_file("data.npy", zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored)).unwrap();
    std::io::Write::write_all(&mut z, b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f8'}").unwrap();
    z.finish().unwrap();
    let e = Input::open(&p).unwrap_err().to_string();
    assert!(e.contains("format") || e.contains("shape"), "{e}");
}

/// What `npz::write_csr` writes reads back equal (every value type NumPy has; pattern matrices
/// as booleans), and types NumPy lacks are refused.
#[test]
fn written_archives_read_back() {
    fn round<T: Value>(a: &Csr<u32, T>) -> Csr<u32, T> {
        let mut buf = Vec::new();
        sptrans_matrix::npz::write_csr(&mut buf, a).unwrap();
        Input::from_reader(Box::new(std::io::Cursor::new(buf)), None).unwrap().read_csr::<T>(None).unwrap()
    }
    let (a, _) = both::<f64>("scipy-csr-f64");
    let b = round(&a);
    assert_eq!((a.rows(), a.cols(), a.ptr(), a.idx()), (b.rows(), b.cols(), b.ptr(), b.idx()));
    assert!(a.vals().iter().zip(b.vals()).all(|(x, y)| x.to_bits() == y.to_bits()));
    let f = a.clone().map_values(|v| v as f32);
    assert_eq!(round(&f).vals(), f.vals());
    let i = a.clone().map_values(|v| (v * 100.0) as i32);
    assert_eq!(round(&i).vals(), i.vals());
    let c = a.clone().map_values(|v| Complex64::new(v, -v));
    assert_eq!(round(&c).vals(), c.vals());
    let mut buf = Vec::new();
    assert!(sptrans_matrix::npz::write_csr(&mut buf, &a.clone().map_values(half::bf16::from_f64)).is_err());
}
