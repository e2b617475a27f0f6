//! Fuzzes the Matrix Market reader: any bytes (plain or gzip) into every value type must give a
//! matrix that passes validation or an error, never a panic, hang or allocation beyond the
//! input's size (the parser reserves at most what the bytes can hold).
#![no_main]
use libfuzzer_sys::fuzz_target;
use sptrans_matrix::num_complex::Complex64;
use sptrans_matrix::{mm, Csr};

fn check<T: sptrans_matrix::Value>(data: &[u8]) {
    if let Ok(coo) = mm::parse::<u32, T>(data) {
        // Parsing is bounded by the input's size; compressing is O(rows + cols + nnz) by nature,
        // so a few bytes can declare a 4e9-row matrix: convert only modest shapes.
        if coo.rows() + coo.cols() > 1 << 22 {
            return;
        }
        let a = coo.to_csr();
        let (r, c, p, i, v) = a.clone().into_parts();
        assert!(Csr::try_new_sorted(r, c, p, i, v).is_ok());
        // Bit patterns, not `==`: the reader accepts `nan`, and NaN != NaN.
        assert!(a.transpose().transpose().same_bits(&a));
    }
}

fuzz_target!(|data: &[u8]| {
    let bytes = match mm::read_bytes(data) {
        Ok(b) => b,
        Err(_) => return,
    };
    check::<f64>(&bytes);
    check::<f32>(&bytes);
    check::<i32>(&bytes);
    check::<Complex64>(&bytes);
    check::<()>(&bytes);
});
