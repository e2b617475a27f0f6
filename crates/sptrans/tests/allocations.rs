//! Issue 34: once a plan is built (and reserved), its hot calls allocate nothing. Counted with
//! `Gpu::allocations` (every device buffer of the workspace's plans comes through the handle)
//! around many calls of each: transposes on lent and on own scratch, SpMV products in every
//! format, CSRC and pair products with packed and strided blocks, and the SVD's cycles after
//! the first.
use gpu_testkit::{gpu_test, rng};
use rand::Rng;
use sptrans::csrc::{CsrPair, DeviceCsrc, Op};
use sptrans::spmv::{Format, Spmv};
use sptrans::svd::{Config, Event, Observer, svd};
use sptrans::transpose::{Algorithm, Transposer};
use sptrans::{DenseView, DenseViewMut, DeviceCsr, DeviceView, DeviceViewMut, Gpu, generate};

/// Runs `f` 20 times after two warm-up calls and asserts the allocation count did not move.
fn steady(gpu: &Gpu, what: &str, mut f: impl FnMut()) {
    f();
    f();
    let before = gpu.allocations();
    for _ in 0..20 {
        f();
    }
    gpu.synchronize().unwrap();
    assert_eq!(gpu.allocations(), before, "{what}: allocated during hot calls");
}

gpu_test!(fn hot_calls_allocate_nothing_after_the_plan(gpu) {
    let (mut r, _seed) = rng();
    let a = generate::rmat::<f64>(14, 120_000, 0.57, 0.19, 0.19, r.random()).unwrap();
    let da = DeviceCsr::upload(gpu, &a).unwrap();

    let mut t = Transposer::new(gpu).unwrap();
    for algo in [Algorithm::Auto, Algorithm::RadixTrans, Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::CooChain] {
        t.reserve(algo, a.rows(), a.cols(), a.nnz(), 8).unwrap();
        let mut out = t.alloc_output(&da).unwrap();
        steady(gpu, &format!("transpose {algo}"), || t.transpose_view(algo, &da.view(), &mut out.view_mut()).unwrap());
    }

    let x = gpu.upload(&vec![1.0f64; a.cols() as usize]).unwrap();
    let mut y = gpu.alloc::<f64>(a.rows() as usize).unwrap();
    for format in [Format::Auto, Format::CsrScalar, Format::CsrVector, Format::CsrAdaptive, Format::Coo, Format::Hyb, Format::Scoo, Format::Jds, Format::Sell, Format::MergePath] {
        let mut plan = Spmv::new(gpu, da.view(), format).unwrap();
        steady(gpu, &format!("spmv {format}"), || plan.apply(1.0, &x, 0.5, &mut y).unwrap());
    }

    let mut c = DeviceCsrc::from_csr(gpu, &da).unwrap();
    let mut pair = CsrPair::new(gpu, DeviceCsr::upload(gpu, &a).unwrap()).unwrap();
    let k = 4;
    for op in [Op::NoTranspose, Op::Transpose] {
        let (xn, on) = if op == Op::NoTranspose { (a.cols(), a.rows()) } else { (a.rows(), a.cols()) };
        for strided in [false, true] {
            let (xld, old) = if strided { (xn + 5, on + 3) } else { (xn, on) };
            let xb = gpu.upload(&vec![0.5f64; (xld * k) as usize]).unwrap();
            let mut ob = gpu.alloc_zeros::<f64>((old * k) as usize).unwrap();
            let xv = DenseView::new(DeviceView::of(&xb), xn, k, xld).unwrap();
            let mut ov = DenseViewMut::new(DeviceViewMut::of(&mut ob), on, k, old).unwrap();
            c.reserve(op, k as usize, !strided).unwrap();
            steady(gpu, &format!("csrc {op:?} strided={strided}"), || c.multiply(op, 1.0, &xv, 0.5, &mut ov).unwrap());
            pair.reserve(op, k as usize, !strided).unwrap();
            steady(gpu, &format!("pair {op:?} strided={strided}"), || pair.multiply(op, 1.0, &xv, 0.5, &mut ov).unwrap());
        }
    }

    // The SVD: the allocation count at each cycle's end stays that of the first cycle.
    let counts = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (seen, g) = (counts.clone(), gpu.clone());
    let observer = Observer::new(move |e| {
        if let Event::Cycle { .. } = e {
            seen.lock().unwrap().push(g.allocations());
        }
    });
    let cfg = Config { rank: 8, block: Some(2), krylov: Some(24), tol: 1e-13, max_restarts: 12, observer, ..Config::default() };
    let s = svd(gpu, &da, &cfg).unwrap();
    let counts = counts.lock().unwrap().clone();
    assert!(counts.len() >= 3, "the SVD needs several cycles for this test ({} made)", counts.len());
    assert!(counts.windows(2).all(|w| w[0] == w[1]), "allocations at the end of each SVD cycle: {counts:?}");
    assert!(s.sigma[0] > 0.0);
});
