//! The distributed transpose against the serial twin, bit for bit, on 1, 2 and 4 GPUs (skipped by
//! name with fewer GPUs or without NCCL).
use gpu_runtime::Comms;
use gpu_testkit::run_multi_gpu_test;
use gpu_transpose::dist::DistTransposer;
use gpu_transpose::Algorithm;
use rand::Rng;
use sptrans_matrix::dist::DistCsr;
use sptrans_matrix::{generate, Csr, Value};

/// Transposes `a` over `comms` and checks the result against the twin, and the cuts.
fn check<T: Value + gpu_runtime::Payload>(comms: &Comms, dt: &mut DistTransposer, algo: Algorithm, a: &Csr<u32, T>, what: &str) {
    let d = DistCsr::scatter(comms.gpus(), a).unwrap();
    assert_eq!(d.nnz(), a.nnz(), "{what}");
    let (t, ex) = dt.transpose(comms, algo, &d).unwrap();
    let got = t.gather(comms.gpus()).unwrap();
    let want = a.transpose();
    assert!(got.same_bits(&want), "{what}: {} GPUs, {algo:?}: the distributed transpose differs from the twin", comms.len());
    assert_eq!(ex.cuts.len(), comms.len() + 1);
    assert!(ex.cuts.windows(2).all(|w| w[0] <= w[1]) && ex.cuts[comms.len()] == a.cols(), "{what}: cuts {:?}", ex.cuts);
    assert_eq!(t.row_starts(), &ex.cuts[..], "{what}");
}

/// Matrices of awkward shapes: empty, one entry, fewer rows than GPUs, a dense row and a dense
/// column, sizes around a warp and a tile, and random ones.
fn suite(rng: &mut rand::rngs::StdRng) -> Vec<(String, Csr<u32, f64>)> {
    let mut out = vec![
        ("0x0".to_string(), Csr::try_new(0, 0, vec![0], vec![], vec![]).unwrap()),
        ("3x5 empty".to_string(), Csr::try_new(3, 5, vec![0; 4], vec![], vec![]).unwrap()),
        ("1x1".to_string(), Csr::try_new(1, 1, vec![0, 1], vec![0], vec![2.5]).unwrap()),
    ];
    for (m, n, nnz) in [(2u64, 7u64, 5u64), (31, 33, 200), (33, 31, 1000), (1025, 4095, 30_000), (4097, 1023, 100_000)] {
        let seed = rng.random();
        out.push((format!("uniform {m}x{n} {nnz}"), generate::uniform(m, n, nnz, seed).unwrap()));
    }
    // A dense row (row 5 of 100 holds every column) and a dense column.
    let mut ptr = vec![0u32];
    let (mut idx, mut vals) = (Vec::new(), Vec::new());
    for i in 0..100u32 {
        let cols: Vec<u32> = if i == 5 { (0..3000).collect() } else { vec![7, 100 + i * 17 % 2900] };
        for c in cols {
            idx.push(c);
            vals.push(rng.random::<f64>());
        }
        ptr.push(idx.len() as u32);
    }
    let a = Csr::try_new(100, 3000, ptr, idx, vals).unwrap();
    out.push(("dense row and column".to_string(), a));
    out
}

fn run(count: usize, name: &str) {
    run_multi_gpu_test(name, count, |comms| {
        let (mut rng, _seed) = gpu_testkit::rng();
        let mut dt = DistTransposer::new(comms).unwrap();
        for (what, a) in suite(&mut rng) {
            for algo in [Algorithm::Auto, Algorithm::RadixTrans, Algorithm::ScanTrans] {
                check(comms, &mut dt, algo, &a, &what);
            }
            let a32 = a.clone().map_values(|v| v as f32);
            check(comms, &mut dt, Algorithm::Auto, &a32, &format!("{what} (f32)"));
        }
        let big = generate::uniform::<f64>(200_003, 150_001, 3_000_000, rng.random()).unwrap();
        check(comms, &mut dt, Algorithm::Auto, &big, "uniform 200003x150001 3M");
        // Another communicator over the same GPUs (other streams) is refused.
        let other = Comms::local(comms.len()).unwrap();
        let d = DistCsr::scatter(other.gpus(), &big).unwrap();
        assert!(matches!(dt.transpose(&other, Algorithm::Auto, &d), Err(gpu_transpose::Error::Runtime(gpu_runtime::Error::ForeignStream))));
    });
}

#[test]
fn dist_transpose_one_gpu() {
    run(1, "dist::dist_transpose_one_gpu");
}

#[test]
fn dist_transpose_two_gpus() {
    run(2, "dist::dist_transpose_two_gpus");
}

#[test]
fn dist_transpose_four_gpus() {
    run(4, "dist::dist_transpose_four_gpus");
}
