//! DeviceCsr: upload and download keep the matrix (and its invariants) exactly, for every
//! device value type and for pattern matrices, including empty shapes; signed (i32, i64) index
//! arrays narrowed on the GPU or refused with the position.
use gpu_testkit::gpu_test;
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::{generate, Csr};

gpu_test!(fn device_csr_round_trips(gpu) {
    let a = generate::uniform::<f64>(3000, 2000, 100_000, 1).unwrap();
    assert_eq!(DeviceCsr::upload(gpu, &a).unwrap().download(gpu).unwrap(), a);
    let b = generate::rmat::<f32>(14, 200_000, 0.57, 0.19, 0.19, 2).unwrap();
    assert_eq!(DeviceCsr::upload(gpu, &b).unwrap().download(gpu).unwrap(), b);
    let c = generate::laplacian_3d::<i64>(20).unwrap();
    assert_eq!(DeviceCsr::upload(gpu, &c).unwrap().download(gpu).unwrap(), c);
    for (m, n) in [(0u64, 0u64), (0, 7), (7, 0)] {
        let e = Csr::<u32, i32>::try_new(m, n, vec![0; m as usize + 1], vec![], vec![]).unwrap();
        assert_eq!(DeviceCsr::upload(gpu, &e).unwrap().download(gpu).unwrap(), e);
    }
    let p = generate::uniform::<()>(500, 500, 5000, 3).unwrap();
    let d = DeviceCsr::upload_pattern(gpu, &p).unwrap();
    assert!(d.vals().is_none());
    assert_eq!(gpu.download(d.ptr()).unwrap(), p.ptr());
    assert_eq!(gpu.download(d.idx()).unwrap(), p.idx());
});

gpu_test!(fn signed_index_arrays_narrow_on_the_gpu_or_name_the_bad_position(gpu) {
    // PyTorch-style int64 / int32 device arrays: narrowed to u32 exactly, or refused with the
    // array and the first bad position (a negative entry; one above u32::MAX; one >= cols,
    // caught by the validation after narrowing).
    use rand::Rng;
    use sptrans_matrix::Error;
    let (mut r, _g) = gpu_testkit::rng();
    for scale in [1u64, 33, 1000, 100_000] {
        let a = generate::uniform::<f32>(scale, scale + 3, 3 * scale, r.random()).unwrap();
        let (p64, i64s): (Vec<i64>, Vec<i64>) = (a.ptr().iter().map(|&x| x as i64).collect(), a.idx().iter().map(|&x| x as i64).collect());
        let vals = || Some(gpu.upload(a.vals()).unwrap());
        let d = DeviceCsr::from_signed_parts(gpu, a.rows(), a.cols(), &gpu.upload(&p64).unwrap(), &gpu.upload(&i64s).unwrap(), vals()).unwrap();
        assert_eq!(d.download(gpu).unwrap(), a, "i64 scale {scale}");
        let (p32, i32s): (Vec<i32>, Vec<i32>) = (p64.iter().map(|&x| x as i32).collect(), i64s.iter().map(|&x| x as i32).collect());
        let d = DeviceCsr::from_signed_parts(gpu, a.rows(), a.cols(), &gpu.upload(&p32).unwrap(), &gpu.upload(&i32s).unwrap(), vals()).unwrap();
        assert_eq!(d.download(gpu).unwrap(), a, "i32 scale {scale}");
        let at = r.random_range(0..i64s.len());
        for (bad, what) in [(-1 - r.random_range(0..1_000i64), "negative"), (u32::MAX as i64 + 1 + r.random_range(0..1_000i64), "too large")] {
            let mut idx = i64s.clone();
            idx[at] = bad;
            let e = DeviceCsr::<f32>::from_signed_parts(gpu, a.rows(), a.cols(), &gpu.upload(&p64).unwrap(), &gpu.upload(&idx).unwrap(), vals()).err().expect("refused");
            assert!(matches!(e, Error::BadIndexValue { what: "index", position, value, .. } if position == at as u64 && value == bad as i128), "{what} at {at}: {e}");
        }
        let mut ptr = p64.clone();
        let last = ptr.len() - 1;
        ptr[last] = -5;
        let e = DeviceCsr::<f32>::from_signed_parts(gpu, a.rows(), a.cols(), &gpu.upload(&ptr).unwrap(), &gpu.upload(&i64s).unwrap(), vals()).err().expect("refused");
        assert!(matches!(e, Error::BadIndexValue { what: "pointer", value: -5, .. }), "{e}");
        let mut idx = i64s.clone();
        idx[at] = a.cols() as i64;
        let e = DeviceCsr::<f32>::from_signed_parts(gpu, a.rows(), a.cols(), &gpu.upload(&p64).unwrap(), &gpu.upload(&idx).unwrap(), vals()).err().expect("refused");
        assert!(matches!(e, Error::IndexOutOfRange { position, .. } if position == at as u64), "{e}");
    }
});

gpu_test!(fn device_csr64_round_trips_and_validates_int64_arrays(gpu) {
    // The 64-bit-pointer matrix: upload / download exact; PyTorch-style int64 pointer with
    // int64 or int32 indices taken as they are or refused with the array and position (negative
    // pointer or index, index above u32::MAX, index >= cols, a decreasing pointer, a pointer
    // that does not end at nnz).
    use rand::Rng;
    use sptrans_matrix::device64::{DeviceCsr64, DeviceCsr64Parts};
    use sptrans_matrix::Error;
    let (mut r, _g) = gpu_testkit::rng();
    for scale in [1u64, 33, 1000, 100_000] {
        let a32 = generate::uniform::<f32>(scale, scale + 3, 3 * scale, r.random()).unwrap();
        let a = Csr::<u64, f32>::try_from_indices(a32.rows(), a32.cols(), a32.ptr(), a32.idx(), a32.vals().to_vec()).unwrap();
        assert_eq!(DeviceCsr64::upload(gpu, &a).unwrap().download(gpu).unwrap(), a, "upload scale {scale}");
        let p64: Vec<i64> = a.ptr().iter().map(|&x| x as i64).collect();
        let i64s: Vec<i64> = a.idx().iter().map(|&x| x as i64).collect();
        let i32s: Vec<i32> = a.idx().iter().map(|&x| x as i32).collect();
        let vals = || Some(gpu.upload(a.vals()).unwrap());
        let dp = gpu.upload(&p64).unwrap();
        let d = DeviceCsr64::from_signed_parts(gpu, a.rows(), a.cols(), &dp, &gpu.upload(&i64s).unwrap(), vals()).unwrap();
        assert_eq!(d.download(gpu).unwrap(), a, "i64 scale {scale}");
        let d = DeviceCsr64::from_signed_parts(gpu, a.rows(), a.cols(), &dp, &gpu.upload(&i32s).unwrap(), vals()).unwrap();
        assert_eq!(d.download(gpu).unwrap(), a, "i32 scale {scale}");
        let at = r.random_range(0..i64s.len());
        for bad in [-1 - r.random_range(0..1_000i64), u32::MAX as i64 + 1 + r.random_range(0..1_000i64)] {
            let mut idx = i64s.clone();
            idx[at] = bad;
            let e = DeviceCsr64::from_signed_parts(gpu, a.rows(), a.cols(), &dp, &gpu.upload(&idx).unwrap(), vals()).err().expect("refused");
            assert!(matches!(e, Error::BadIndexValue { what: "index", position, value, .. } if position == at as u64 && value == bad as i128), "{bad} at {at}: {e}");
        }
        let mut idx = i64s.clone();
        idx[at] = a.cols() as i64;
        let e = DeviceCsr64::from_signed_parts(gpu, a.rows(), a.cols(), &dp, &gpu.upload(&idx).unwrap(), vals()).err().expect("refused");
        assert!(matches!(e, Error::IndexOutOfRange { position, .. } if position == at as u64), "{e}");
        let pat = r.random_range(0..p64.len());
        let mut ptr = p64.clone();
        ptr[pat] = -7;
        let e = DeviceCsr64::from_signed_parts(gpu, a.rows(), a.cols(), &gpu.upload(&ptr).unwrap(), &gpu.upload(&i64s).unwrap(), vals()).err().expect("refused");
        assert!(matches!(e, Error::BadIndexValue { what: "pointer", position, value: -7, .. } if position == pat as u64), "{e}");
        // A signed pointer that decreases, and one that ends short: BadPointers at the place.
        if a.rows() >= 2 && a.nnz() > 0 {
            let mut ptr = p64.clone();
            let i = (1..ptr.len() - 1).find(|&i| ptr[i] > 0).unwrap_or(1);
            ptr[i] = a.nnz() as i64 + 1;
            let e = DeviceCsr64::from_signed_parts(gpu, a.rows(), a.cols(), &gpu.upload(&ptr).unwrap(), &gpu.upload(&i64s).unwrap(), vals()).err().expect("refused");
            assert!(matches!(e, Error::BadPointers { index, .. } if index == i as u64 + 1), "{e}");
            let mut ptr = p64.clone();
            *ptr.last_mut().unwrap() -= 1;
            let e = DeviceCsr64::from_signed_parts(gpu, a.rows(), a.cols(), &gpu.upload(&ptr).unwrap(), &gpu.upload(&i64s).unwrap(), vals()).err().expect("refused");
            assert!(matches!(e, Error::BadPointers { index, .. } if index == a.rows()), "{e}");
        }
        // Unsigned parts: a pointer that decreases, one that ends short.
        if a.rows() >= 2 && a.nnz() > 0 {
            let mut ptr: Vec<u64> = a.ptr().to_vec();
            let i = (1..ptr.len() - 1).find(|&i| ptr[i] > 0).unwrap_or(1);
            ptr[i] = a.nnz() + 1;
            let parts = DeviceCsr64Parts { ptr: gpu.upload(&ptr).unwrap(), idx: gpu.upload(&i32s.iter().map(|&x| x as u32).collect::<Vec<_>>()).unwrap(), vals: vals() };
            let e = DeviceCsr64::from_parts(gpu, a.rows(), a.cols(), parts).err().expect("refused");
            assert!(matches!(e, Error::BadPointers { index, .. } if index == i as u64 + 1), "{e}");
        }
    }
});
