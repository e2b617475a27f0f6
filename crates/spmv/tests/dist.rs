//! The distributed SpMV on 1, 2 and 4 GPUs (skipped by name with fewer GPUs or without NCCL):
//! against the one-GPU plan of the same format on the same GPU, bit for bit for the
//! deterministic formats, and against the serial twin within `serial::error_bound` for all;
//! `y` poisoned when `β = 0`; square and rectangular matrices of awkward shapes; bad part
//! counts and lengths refused, and another communicator.
use gpu_dist::Comms;
use gpu_spmv::dist::{DistSpmv, XGather};
use gpu_spmv::{serial, Error, Format, Spmv, SpmvValue};
use gpu_testkit::{run_multi_gpu_test, POISON_BYTE};
use rand::rngs::StdRng;
use rand::Rng;
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::dist::{DistCsr, DistCsrView};
use sptrans_matrix::{generate, Csr};

fn random_vec<T: SpmvValue>(r: &mut StdRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect()
}

fn suite(rng: &mut StdRng) -> Vec<(String, Csr<u32, f64>)> {
    let mut out = vec![
        ("0x0".to_string(), Csr::try_new(0, 0, vec![0], vec![], vec![]).unwrap()),
        ("3x5 empty".to_string(), Csr::try_new(3, 5, vec![0; 4], vec![], vec![]).unwrap()),
        ("1x1".to_string(), Csr::try_new(1, 1, vec![0, 1], vec![0], vec![2.5]).unwrap()),
    ];
    for (m, n, nnz) in
        [(2u64, 7u64, 5u64), (31, 31, 200), (32, 32, 600), (33, 31, 1000), (1025, 4095, 30_000), (4097, 4097, 100_000), (100_003, 100_003, 1_500_001)]
    {
        let seed = rng.random();
        out.push((format!("uniform {m}x{n} {nnz}"), generate::uniform(m, n, nnz, seed).unwrap()));
    }
    out.push(("laplacian 2d 300".to_string(), generate::laplacian_2d(300).unwrap()));
    out.push(("27-point stencil 40^3".to_string(), generate::stencil_3d(40, 27, generate::Order::Natural, 1).unwrap()));
    let seed = rng.random();
    out.push(("dense row".to_string(), generate::dense_row(100, 3000, 300, seed).unwrap()));
    out.push(("dense column".to_string(), generate::dense_col(3000, 100, 300, seed ^ 1).unwrap()));
    out
}

/// One distributed product against the one-GPU plan on rank 0 and the twin.
fn check<T: SpmvValue>(comms: &Comms, a: &Csr<u32, T>, format: Format, gather: XGather, beta: T, rng: &mut StdRng, what: &str) {
    let gpus = comms.gpus();
    let d = DistCsr::scatter(gpus, a).unwrap();
    let mut plan = DistSpmv::with_gather(comms, &d, format, gather).unwrap_or_else(|e| panic!("{what} {format}: {e}"));
    let what = &format!("{what} ({gather:?} -> {:?})", plan.gather());
    if gather != XGather::Auto && comms.len() > 1 {
        assert_eq!(plan.gather(), gather, "{what}");
    }
    let (xs, rs) = (plan.x_starts().to_vec(), plan.row_starts().to_vec());
    assert_eq!((xs.len(), rs.len()), (comms.len() + 1, comms.len() + 1));
    assert_eq!((xs[comms.len()], rs[comms.len()]), (a.cols(), a.rows()), "{what}");
    let x: Vec<T> = random_vec(rng, a.cols() as usize);
    let y0: Vec<T> = random_vec(rng, a.rows() as usize);
    let alpha = T::from_f64(1.25);
    let dx = plan.scatter_x(comms, &x).unwrap();
    let mut dy = plan.scatter_y(comms, &y0).unwrap();
    assert!(matches!(plan.scatter_x(comms, &y0[..0]), Err(Error::LengthMismatch { .. })) || a.cols() == 0, "{what}");
    if beta == T::default() {
        for (r, y) in dy.iter_mut().enumerate() {
            gpus[r].memset_bytes(y, POISON_BYTE).unwrap();
        }
    }
    // Twice: the second product reuses the gathered buffers (y restored in between).
    for round in 0..2 {
        if round == 1 {
            dy = plan.scatter_y(comms, &y0).unwrap();
        }
        plan.apply(comms, alpha, &dx, beta, &mut dy).unwrap_or_else(|e| panic!("{what} {format}: {e}"));
    }
    comms.synchronize().unwrap();
    let got: Vec<T> = plan.gather_y(comms, &dy).unwrap();
    assert!(matches!(plan.gather_y(comms, &dx[..0]), Err(Error::LengthMismatch { .. })), "{what}");
    let mut want = y0.clone();
    serial::spmv(a, alpha, &x, beta, &mut want);
    let bound = serial::error_bound(a, alpha, &x, beta, &y0);
    serial::within(&got, &want, &bound).unwrap_or_else(|e| panic!("{what} {format} {} on {} GPUs: {e}", T::NAME, comms.len()));
    // The one-GPU plan of the same format on rank 0: the same bits for deterministic formats.
    let formats = plan.formats();
    if formats.iter().all(|f| f.is_deterministic()) && formats.iter().all(|&f| f == formats[0]) {
        let whole = DeviceCsr::upload(&gpus[0], a).unwrap();
        let mut one = Spmv::new(&gpus[0], whole.view(), formats[0]).unwrap();
        let (ox, mut oy) = (gpus[0].upload(&x).unwrap(), gpus[0].upload(&y0).unwrap());
        one.apply(alpha, &ox, beta, &mut oy).unwrap();
        let single = gpus[0].download(&oy).unwrap();
        assert!(
            single.iter().zip(&got).all(|(&s, &g)| Into::<f64>::into(s).to_bits() == Into::<f64>::into(g).to_bits()),
            "{what} {} {}: {} GPUs differ from one GPU",
            formats[0],
            T::NAME,
            comms.len()
        );
    }
}

fn run(count: usize, name: &str) {
    run_multi_gpu_test(name, count, |comms| {
        let (mut rng, _seed) = gpu_testkit::rng();
        for (what, a) in suite(&mut rng) {
            for format in [Format::Auto, Format::CsrVector, Format::MergePath, Format::Coo] {
                for gather in [XGather::AllGather, XGather::Halo] {
                    check(comms, &a, format, gather, 0.0, &mut rng, &what);
                }
                check(comms, &a, format, XGather::Auto, -0.5, &mut rng, &what);
            }
            let a32 = a.clone().map_values(|v| v as f32);
            for gather in [XGather::AllGather, XGather::Halo] {
                check(comms, &a32, Format::Auto, gather, 0.0f32, &mut rng, &format!("{what} (f32)"));
            }
        }
        // The halo moves fewer entries than the all-gather on a mesh in natural order, and Auto
        // takes it there (and the all-gather on a uniform matrix).
        if comms.len() > 1 {
            let mesh = generate::stencil_3d::<f64>(40, 27, generate::Order::Natural, 1).unwrap();
            let d = DistCsr::scatter(comms.gpus(), &mesh).unwrap();
            let auto = DistSpmv::new(comms, &d, Format::Auto).unwrap();
            let all = DistSpmv::with_gather(comms, &d, Format::Auto, XGather::AllGather).unwrap();
            assert_eq!(auto.gather(), XGather::Halo);
            assert!(auto.received().iter().zip(all.received()).all(|(h, a)| 4 * h < *a), "{:?} {:?}", auto.received(), all.received());
            let u = generate::uniform::<f64>(3000, 3000, 60_000, rng.random()).unwrap();
            let d = DistCsr::scatter(comms.gpus(), &u).unwrap();
            assert_eq!(DistSpmv::new(comms, &d, Format::Auto).unwrap().gather(), XGather::AllGather);
        }
        // The same matrix as views of the caller's own blocks (DistCsrView::from_views): the same
        // bits as through the DistCsr (deterministic format, the same gather).
        {
            let a = generate::laplacian_3d::<f64>(25).unwrap();
            let d = DistCsr::scatter(comms.gpus(), &a).unwrap();
            let mine: Vec<DeviceCsr<f64>> = d
                .blocks()
                .iter()
                .enumerate()
                .map(|(r, b)| DeviceCsr::upload(&comms.gpus()[r], &b.download(&comms.gpus()[r]).unwrap()).unwrap())
                .collect();
            let v = DistCsrView::from_views(a.rows(), a.cols(), d.row_starts().to_vec(), 0, mine.iter().map(DeviceCsr::view).collect()).unwrap();
            let x: Vec<f64> = random_vec(&mut rng, a.cols() as usize);
            let run = |plan: &mut DistSpmv<f64>| {
                let dx = plan.scatter_x(comms, &x).unwrap();
                let mut dy = plan.alloc_y(comms).unwrap();
                plan.apply(comms, 1.0, &dx, 0.0, &mut dy).unwrap();
                plan.gather_y(comms, &dy).unwrap()
            };
            let via_dist = run(&mut DistSpmv::with_gather(comms, &d, Format::Jds, XGather::AllGather).unwrap());
            let via_view = run(&mut DistSpmv::with_gather(comms, &v, Format::Jds, XGather::AllGather).unwrap());
            assert!(via_dist.iter().zip(&via_view).all(|(p, q)| p.to_bits() == q.to_bits()), "views differ from the DistCsr");
            // A view cut for another number of ranks is refused.
            let short = DistCsrView::from_views(a.rows(), a.cols(), vec![0, a.rows()], 0, vec![mine[0].view()]);
            if comms.len() > 1 {
                assert!(short.is_err() || DistSpmv::new(comms, &short.unwrap(), Format::Auto).is_err());
            }
        }
        // Wrong part counts and lengths are errors, not out-of-bounds reads.
        let a = generate::uniform::<f64>(50, 40, 300, rng.random()).unwrap();
        let d = DistCsr::scatter(comms.gpus(), &a).unwrap();
        let mut plan = DistSpmv::new(comms, &d, Format::Auto).unwrap();
        let g = comms.gpus();
        let xs = plan.x_starts().to_vec();
        let rs = plan.row_starts().to_vec();
        let x: Vec<_> = (0..comms.len()).map(|r| g[r].alloc_zeros::<f64>((xs[r + 1] - xs[r]) as usize).unwrap()).collect();
        let mut y: Vec<_> = (0..comms.len()).map(|r| g[r].alloc_zeros::<f64>((rs[r + 1] - rs[r]) as usize).unwrap()).collect();
        assert!(matches!(plan.apply(comms, 1.0, &x[..comms.len() - 1], 0.0, &mut y), Err(Error::LengthMismatch { .. })));
        let mut short: Vec<_> = (0..comms.len()).map(|r| g[r].alloc_zeros::<f64>((rs[r + 1] - rs[r]) as usize + 1).unwrap()).collect();
        assert!(matches!(plan.apply(comms, 1.0, &x, 0.0, &mut short), Err(Error::LengthMismatch { .. })));
        plan.apply(comms, 1.0, &x, 0.0, &mut y).unwrap();
        // Another communicator over the same GPUs (other streams) is refused.
        let other = Comms::local(comms.len()).unwrap();
        assert!(matches!(plan.apply(&other, 1.0, &x, 0.0, &mut y), Err(Error::Runtime(gpu_runtime::Error::ForeignStream))));
    });
}

#[test]
fn dist_spmv_one_gpu() {
    run(1, "dist::dist_spmv_one_gpu");
}

#[test]
fn dist_spmv_two_gpus() {
    run(2, "dist::dist_spmv_two_gpus");
}

#[test]
fn dist_spmv_four_gpus() {
    run(4, "dist::dist_spmv_four_gpus");
}
