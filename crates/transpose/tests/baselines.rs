//! The cuSPARSE peer (`baselines::CuSparseTranspose`) against the serial twin: the generators at
//! several scales with values of 1, 2, 4, 8 and 16 bytes and patterns, empty shapes, output shape
//! errors, lent scratch, and the plan moved to another thread (cuSPARSE binds the calling
//! thread's context). cuSPARSE's known intermittent defect (benches/experiments/
//! 2026-11-26-cusparse-baseline-anomaly.md) shows on R-MAT 2^20 at a few calls in a thousand;
//! these matrices are smaller.
mod common;

use common::generated;
use gpu_testkit::{gpu_test, rng, POISON_BYTE};
use gpu_transpose::baselines::CuSparseTranspose;
use gpu_transpose::{serial, Error, Payload};
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use sptrans_matrix::{generate, Csr, Value};

fn check<T: Value + Payload + PartialEq>(c: &mut CuSparseTranspose, name: &str, a: &Csr<u32, T>) {
    let g = c.gpu().clone();
    let da = DeviceCsr::upload(&g, a).unwrap();
    let mut out = DeviceCsrParts::<T>::alloc(&g, a.cols(), a.nnz(), true).unwrap();
    g.memset_bytes(&mut out.ptr, POISON_BYTE).unwrap();
    g.memset_bytes(&mut out.idx, POISON_BYTE).unwrap();
    let got = c.transpose_into(&da, out).unwrap_or_else(|e| panic!("{name}: {e}")).download(&g).unwrap();
    assert!(got == serial::transpose(a), "{name} ({}-byte values): cuSPARSE differs from the twin", T::BYTES);
}

gpu_test!(fn cusparse_peer_matches_the_twin(gpu) {
    let mut c = CuSparseTranspose::new(gpu).unwrap();
    eprintln!("cuSPARSE {}: {}", c.version().unwrap(), gpu_transpose::cusparse_library().unwrap());
    let (mut r, _seed) = rng();
    for scale in [1u64, 33, 1000, 20_000] {
        for (name, a) in generated::<f64>(&mut r, scale) {
            check(&mut c, &name, &a);
            check(&mut c, &name, &a.clone().map_values(|v| v as f32));
            check(&mut c, &name, &a.clone().map_values(|v| (v * 200.0) as u8));
            check(&mut c, &name, &a.clone().map_values(|v| (v * 6e4) as u16));
            check(&mut c, &name, &a.clone().map_values(|v| (v.to_bits() as u128) << 64 | 7));
            let g = c.gpu().clone();
            let p = DeviceCsr::upload_pattern(&g, &a.clone().map_values(|_| ())).unwrap();
            let got = c.transpose_new(&p).unwrap();
            assert!(got.vals().is_none());
            let want = serial::transpose(&a);
            assert_eq!(g.download(got.ptr()).unwrap(), want.ptr(), "{name}: pattern pointer");
            assert_eq!(g.download(got.idx()).unwrap(), want.idx(), "{name}: pattern rows");
        }
    }
    for (m, n) in [(0u64, 0u64), (0, 5), (5, 0), (7, 3)] {
        let e = Csr::<u32, f32>::try_new(m, n, vec![0; m as usize + 1], vec![], vec![]).unwrap();
        check(&mut c, &format!("empty {m}x{n}"), &e);
    }
    // Lent scratch of exactly the size asked; too little is an error.
    let a = generate::uniform::<f32>(3000, 2000, 40_000, 5).unwrap();
    let da = DeviceCsr::upload(gpu, &a).unwrap();
    let need = c.workspace_bytes(3000, 2000, 40_000, 4).unwrap();
    let mut buf = gpu.alloc::<u8>(need as usize).unwrap();
    let mut out = DeviceCsrParts::<f32>::alloc(gpu, 2000, 40_000, true).unwrap();
    c.transpose_view_with(&da.view(), &mut out.view_mut(), &mut gpu_runtime::Scratch::new(&mut buf, gpu.stream())).unwrap();
    assert!(unsafe { DeviceCsr::from_parts_unchecked(2000, 3000, out) }.download(gpu).unwrap() == serial::transpose(&a));
    if need > 256 {
        let mut small = gpu.alloc::<u8>(16).unwrap();
        let mut out = DeviceCsrParts::<f32>::alloc(gpu, 2000, 40_000, true).unwrap();
        let e = c.transpose_view_with(&da.view(), &mut out.view_mut(), &mut gpu_runtime::Scratch::new(&mut small, gpu.stream())).unwrap_err();
        assert!(matches!(e, Error::Runtime(gpu_runtime::Error::ScratchTooSmall { .. })), "{e}");
    }
    // Output of the wrong shape.
    let bad = DeviceCsrParts::<f32>::alloc(gpu, 3000, 40_000, true).unwrap();
    assert!(matches!(c.transpose_into(&da, bad), Err(Error::LengthMismatch { what: "output pointer length", .. })));
});

gpu_test!(fn cusparse_peer_works_after_moving_to_another_thread(gpu) {
    let mut c = CuSparseTranspose::new(gpu).unwrap();
    let a = generate::rmat::<f64>(12, 40_000, 0.57, 0.19, 0.19, 8).unwrap();
    check(&mut c, "before the move", &a);
    std::thread::spawn(move || check(&mut c, "on another thread", &a)).join().unwrap();
});
