//! Issue 34: transposing borrowed views. The input lies inside larger buffers at odd offsets and
//! the output is written into the middle of larger poisoned buffers; every value width (1, 2, 4,
//! 8, 16 bytes and pattern), both pointer widths (the 64-bit one in several chunks), every GPU
//! algorithm, awkward sizes. The result must equal the twin bit for bit and nothing outside the
//! output views may change. The validated constructor refuses bad views with the error naming
//! what is wrong.
use gpu_runtime::{DeviceView, DeviceViewMut, Gpu, Payload};
use gpu_testkit::{gpu_test, rng, POISON_BYTE};
use gpu_transpose::{serial, Algorithm, DeviceCsr64View, DeviceCsrPartsMut, DeviceCsrView, Transposer};
use rand::Rng;
use sptrans_matrix::{generate, Csr, Value};

const ALGOS: [Algorithm; 6] =
    [Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::RadixTrans, Algorithm::CooChain, Algorithm::Auto, Algorithm::Serial];

/// Padding (items) before and after each sub-range: 16 items keep every width's sub-range at a
/// multiple of 16 bytes (`VIEW_ALIGN`), as the transposers require.
const PAD: usize = 16;

/// `data` inside a buffer of `PAD + data + PAD` items, the padding poisoned.
fn embed<T: Payload + Default>(g: &Gpu, data: &[T], before: usize) -> gpu_runtime::cudarc::driver::CudaSlice<T> {
    let mut buf = g.alloc::<T>(before + data.len() + PAD).unwrap();
    g.memset_bytes(&mut buf, POISON_BYTE).unwrap();
    let host = g.download(&buf).unwrap();
    let mut host = host;
    host[before..before + data.len()].copy_from_slice(data);
    g.upload(&host).unwrap()
}

fn poisoned<T: Payload + Default>(g: &Gpu, len: usize) -> (gpu_runtime::cudarc::driver::CudaSlice<T>, Vec<T>) {
    let mut buf = g.alloc::<T>(PAD + len + PAD).unwrap();
    g.memset_bytes(&mut buf, POISON_BYTE).unwrap();
    let host = g.download(&buf).unwrap();
    (buf, host)
}

/// Checks that `got` (the whole buffer) holds `want` at `PAD..` and the poison elsewhere.
fn check_sub<T: Payload + Default + PartialEq>(what: &str, got: &[T], poison: &[T], want: &[T]) {
    assert!(got[PAD..PAD + want.len()] == *want, "{what}: result differs from the twin");
    assert!(got[..PAD] == poison[..PAD] && got[PAD + want.len()..] == poison[PAD + want.len()..], "{what}: written outside the output view");
}

fn one<T: Value + Payload + Default + PartialEq>(t: &mut Transposer, algo: Algorithm, a: &Csr<u32, T>, pattern: bool) {
    let g = t.gpu().clone();
    let (m, n, nnz) = (a.rows(), a.cols(), a.nnz() as usize);
    let (bp, bi, bv) = (embed(&g, a.ptr(), 16), embed(&g, a.idx(), 32), embed(&g, a.vals(), 48));
    let vals = (!pattern).then(|| DeviceView::of(&bv).slice(48..48 + nnz));
    let av = DeviceCsrView::new(&g, m, n, DeviceView::of(&bp).slice(16..16 + m as usize + 1), DeviceView::of(&bi).slice(32..32 + nnz), vals).unwrap();
    let ((mut op, p0), (mut oi, i0), (mut ov, v0)) = (poisoned::<u32>(&g, n as usize + 1), poisoned::<u32>(&g, nnz), poisoned::<T>(&g, nnz));
    {
        let mut out = DeviceCsrPartsMut {
            ptr: DeviceViewMut::of(&mut op).into_slice(PAD..PAD + n as usize + 1),
            idx: DeviceViewMut::of(&mut oi).into_slice(PAD..PAD + nnz),
            vals: (!pattern).then(|| DeviceViewMut::of(&mut ov).into_slice(PAD..PAD + nnz)),
        };
        t.transpose_view(algo, &av, &mut out).unwrap_or_else(|e| panic!("{algo} {m}x{n} nnz {nnz} {}-byte: {e}", T::BYTES));
    }
    let want = serial::transpose(a);
    let what = format!("{algo} {m}x{n} nnz {nnz} {}-byte{}", T::BYTES, if pattern { " pattern" } else { "" });
    check_sub(&format!("{what} pointer"), &g.download(&op).unwrap(), &p0, want.ptr());
    check_sub(&format!("{what} indices"), &g.download(&oi).unwrap(), &i0, want.idx());
    let got_v = g.download(&ov).unwrap();
    if pattern {
        assert!(got_v == v0, "{what}: pattern transpose wrote values");
    } else {
        check_sub(&format!("{what} values"), &got_v, &v0, want.vals());
    }
}

fn one64<T: Value + Payload + Default + PartialEq>(t: &mut Transposer, algo: Algorithm, a: &Csr<u32, T>) {
    let g = t.gpu().clone();
    let (m, n, nnz) = (a.rows(), a.cols(), a.nnz() as usize);
    let ptr64: Vec<u64> = a.ptr().iter().map(|&p| p as u64).collect();
    let (bp, bi, bv) = (embed(&g, &ptr64, 32), embed(&g, a.idx(), 16), embed(&g, a.vals(), 64));
    let av: DeviceCsr64View<'_, T> = DeviceCsr64View::new(
        &g,
        m,
        n,
        DeviceView::of(&bp).slice(32..32 + m as usize + 1),
        DeviceView::of(&bi).slice(16..16 + nnz),
        Some(DeviceView::of(&bv).slice(64..64 + nnz)),
    )
    .unwrap();
    let ((mut op, p0), (mut oi, i0), (mut ov, v0)) = (poisoned::<u64>(&g, n as usize + 1), poisoned::<u32>(&g, nnz), poisoned::<T>(&g, nnz));
    {
        let mut out = DeviceCsrPartsMut {
            ptr: DeviceViewMut::of(&mut op).into_slice(PAD..PAD + n as usize + 1),
            idx: DeviceViewMut::of(&mut oi).into_slice(PAD..PAD + nnz),
            vals: Some(DeviceViewMut::of(&mut ov).into_slice(PAD..PAD + nnz)),
        };
        t.transpose64_view(algo, &av, &mut out).unwrap_or_else(|e| panic!("64-bit {algo} {m}x{n} nnz {nnz}: {e}"));
    }
    let want = serial::transpose(a);
    let want_ptr: Vec<u64> = want.ptr().iter().map(|&p| p as u64).collect();
    let what = format!("64-bit {algo} {m}x{n} nnz {nnz} {}-byte", T::BYTES);
    check_sub(&format!("{what} pointer"), &g.download(&op).unwrap(), &p0, &want_ptr);
    check_sub(&format!("{what} indices"), &g.download(&oi).unwrap(), &i0, want.idx());
    check_sub(&format!("{what} values"), &g.download(&ov).unwrap(), &v0, want.vals());
}

/// Awkward shapes: empty, one, warp and tile edges, rectangular both ways.
fn shapes(r: &mut impl Rng) -> Vec<(u64, u64, u64)> {
    let mut s = vec![(0, 0, 0), (1, 1, 1), (1, 5, 0), (31, 33, 200), (32, 32, 1024), (33, 31, 700), (257, 1023, 4097), (1025, 65, 3000)];
    s.push((r.random_range(2000..5000), r.random_range(2000..5000), r.random_range(20_000..60_000)));
    s
}

gpu_test!(fn views_inside_larger_buffers_every_width_and_algorithm(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let (mut r, _seed) = rng();
    for (m, n, nnz) in shapes(&mut r) {
        let a = generate::uniform::<f64>(m, n, nnz, r.random()).unwrap();
        let a8 = a.clone().map_values(|v| (v * 250.0) as u8);
        let a16 = a.clone().map_values(|v| (v * 60000.0) as u16);
        let a32 = a.clone().map_values(|v| v as f32);
        let a128 = a.clone().map_values(|v| (v.to_bits() as u128) << 64 | (v * 7.0).to_bits() as u128);
        for algo in ALGOS {
            one(&mut t, algo, &a8, false);
            one(&mut t, algo, &a16, false);
            one(&mut t, algo, &a32, false);
            one(&mut t, algo, &a, false);
            one(&mut t, algo, &a128, false);
            one(&mut t, algo, &a32, true);
        }
        t.set_chunk_nnz(Some((nnz / 3).max(1)));
        for algo in [Algorithm::RadixTrans, Algorithm::ScanTrans, Algorithm::Serial] {
            one64(&mut t, algo, &a);
            one64(&mut t, algo, &a16);
        }
        t.set_chunk_nnz(None);
        one64(&mut t, Algorithm::Auto, &a128);
    }
});

gpu_test!(fn a_view_is_validated_on_construction(gpu) {
    let g = gpu;
    let ptr = g.upload(&[0u32, 2, 1, 3]).unwrap(); // decreases at position 2
    let idx = g.upload(&[0u32, 1, 9]).unwrap(); // 9 is past 4 columns
    let good_ptr = g.upload(&[0u32, 1, 2, 3]).unwrap();
    let vals = g.upload(&[1.0f64, 2.0]).unwrap();
    let e = DeviceCsrView::<f64>::new(g, 3, 4, DeviceView::of(&ptr), DeviceView::of(&idx), None).unwrap_err();
    assert!(matches!(e, sptrans_matrix::Error::BadPointers { index: 2, .. }), "{e}");
    let e = DeviceCsrView::<f64>::new(g, 3, 4, DeviceView::of(&good_ptr), DeviceView::of(&idx), None).unwrap_err();
    assert!(matches!(e, sptrans_matrix::Error::IndexOutOfRange { position: 2, index: 9, bound: 4 }), "{e}");
    let e = DeviceCsrView::new(g, 3, 10, DeviceView::of(&good_ptr), DeviceView::of(&idx), Some(DeviceView::of(&vals))).unwrap_err();
    assert!(matches!(e, sptrans_matrix::Error::LengthMismatch { what: "values", expected: 3, got: 2 }), "{e}");
    let e = DeviceCsrView::<f64>::new(g, 2, 10, DeviceView::of(&good_ptr), DeviceView::of(&idx), None).unwrap_err();
    assert!(matches!(e, sptrans_matrix::Error::LengthMismatch { what: "row pointer", .. }), "{e}");
    assert!(DeviceView::of(&idx).try_slice(2..4).is_none());
    let v = DeviceCsrView::<f64>::new(g, 3, 10, DeviceView::of(&good_ptr), DeviceView::of(&idx), None).unwrap();
    let mut t = Transposer::new(g).unwrap();
    let mut small = g.alloc::<u32>(3).unwrap();
    let mut oi = g.alloc::<u32>(3).unwrap();
    let mut out = DeviceCsrPartsMut::<f64> { ptr: DeviceViewMut::of(&mut small), idx: DeviceViewMut::of(&mut oi), vals: None };
    let e = t.transpose_view(Algorithm::Auto, &v, &mut out).unwrap_err();
    assert!(matches!(e, gpu_transpose::Error::LengthMismatch { what: "output pointer length", expected: 11, got: 3 }), "{e}");
    // Sub-ranges that do not start at a multiple of 16 bytes are refused, naming the array.
    let big = g.upload(&[0u32, 0, 1, 2, 3]).unwrap();
    let e = DeviceCsrView::<f64>::new(g, 3, 10, DeviceView::of(&big).slice(1..), DeviceView::of(&idx), None).unwrap_err();
    assert!(matches!(e, sptrans_matrix::Error::Misaligned { what: "row pointer", align: 16, .. }), "{e}");
    let mut op = g.alloc::<u32>(12).unwrap();
    let mut out = DeviceCsrPartsMut::<f64> { ptr: DeviceViewMut::of(&mut op).into_slice(1..), idx: DeviceViewMut::of(&mut oi), vals: None };
    let e = t.transpose_view(Algorithm::Auto, &v, &mut out).unwrap_err();
    assert!(matches!(e, gpu_transpose::Error::Matrix(sptrans_matrix::Error::Misaligned { what: "output pointer", .. })), "{e}");
});
