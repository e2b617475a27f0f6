//! DeviceCsr: upload and download keep the matrix (and its invariants) exactly, for every
//! device value type and for pattern matrices, including empty shapes.
use gpu_testkit::gpu_test;
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{gen, Csr};

gpu_test!(fn device_csr_round_trips(gpu) {
    let a = gen::uniform::<f64>(3000, 2000, 100_000, 1).unwrap();
    assert_eq!(DeviceCsr::upload(gpu, &a).unwrap().download(gpu).unwrap(), a);
    let b = gen::rmat::<f32>(14, 200_000, 0.57, 0.19, 0.19, 2).unwrap();
    assert_eq!(DeviceCsr::upload(gpu, &b).unwrap().download(gpu).unwrap(), b);
    let c = gen::laplacian_3d::<i64>(20).unwrap();
    assert_eq!(DeviceCsr::upload(gpu, &c).unwrap().download(gpu).unwrap(), c);
    for (m, n) in [(0u64, 0u64), (0, 7), (7, 0)] {
        let e = Csr::<u32, i32>::try_new(m, n, vec![0; m as usize + 1], vec![], vec![]).unwrap();
        assert_eq!(DeviceCsr::upload(gpu, &e).unwrap().download(gpu).unwrap(), e);
    }
    let p = gen::uniform::<()>(500, 500, 5000, 3).unwrap();
    let d = DeviceCsr::upload_pattern(gpu, &p).unwrap();
    assert!(d.vals().is_none());
    assert_eq!(gpu.download(d.ptr()).unwrap(), p.ptr());
    assert_eq!(gpu.download(d.idx()).unwrap(), p.idx());
});
