//! The distributed transpose against the serial twin, bit for bit, on 1, 2 and 4 GPUs (skipped by
//! name with fewer GPUs or without NCCL).
use gpu_dist::Comms;
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
    // The same blocks lent as a view (DistCsr::view, what DistCsrView::from_views makes of a
    // caller's blocks): the same result.
    let (tv, _) = dt.transpose(comms, algo, &d.view()).unwrap();
    assert!(tv.gather(comms.gpus()).unwrap().same_bits(&want), "{what}: through a DistCsrView");
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
            // The exchange in chunks (each gathered while the next travels), more chunks than
            // some ranks' columns; the same bits.
            for chunks in [3, 7] {
                dt.set_chunks(Some(chunks));
                check(comms, &mut dt, Algorithm::Auto, &a32, &format!("{what} (f32), {chunks} chunks"));
            }
            dt.set_chunks(None);
        }
        let big = generate::uniform::<f64>(200_003, 150_001, 3_000_000, rng.random()).unwrap();
        check(comms, &mut dt, Algorithm::Auto, &big, "uniform 200003x150001 3M");
        dt.set_chunks(Some(4));
        dt.set_profile(true);
        check(comms, &mut dt, Algorithm::Auto, &big, "uniform 200003x150001 3M, 4 chunks, profiled");
        dt.set_chunks(None);
        dt.set_profile(false);
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

/// Rows `r0 .. r1` of `a`.
fn row_block(a: &Csr<u32, f64>, r0: u64, r1: u64) -> Csr<u32, f64> {
    let (p0, p1) = (a.ptr()[r0 as usize] as usize, a.ptr()[r1 as usize] as usize);
    let ptr = a.ptr()[r0 as usize..=r1 as usize].iter().map(|&p| p - p0 as u32).collect();
    Csr::try_new(r1 - r0, a.cols(), ptr, a.idx()[p0..p1].to_vec(), a.vals()[p0..p1].to_vec()).unwrap()
}

/// The launch's matrix: a power-law one (uneven rows and columns), of the seed.
fn launch_matrix(seed: u64) -> Csr<u32, f64> {
    generate::rmat(15, 400_000, 0.57, 0.19, 0.19, seed).unwrap()
}

/// One process per GPU: this test binary starts itself twice as ranks 0 and 1 of a launch
/// (`gpu_testkit::launch_ranks`); each rank reads its rows of a power-law matrix from a Matrix
/// Market file ([`DistCsr::read_ranks`]), the two transpose it together, and each checks its
/// block of the result (columns `cuts[r] .. cuts[r + 1]` of the input) against the same rows of
/// the twin's transpose bit for bit; both ranks' cuts must equal one process's on two GPUs.
#[test]
fn dist_transpose_multi_process() {
    if let Ok(out) = std::env::var("SPTRANS_TEST_MP_RANK_OUT") {
        return transpose_rank(&out);
    }
    run_multi_gpu_test("dist_transpose_multi_process", 2, |comms| {
        let seed: u64 = gpu_testkit::rng().0.random();
        let a = launch_matrix(seed);
        let (_, one) = DistTransposer::new(comms).unwrap().transpose(comms, Algorithm::Auto, &DistCsr::scatter(comms.gpus(), &a).unwrap()).unwrap();
        let dir = std::env::temp_dir().join(format!("sptrans-mpt-{}-{seed:x}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        sptrans_matrix::mm::write_csr(std::fs::File::create(dir.join("a.mtx")).unwrap(), &a).unwrap();
        let env = [("SPTRANS_TEST_MP_SEED", seed.to_string()), ("SPTRANS_TEST_MP_MTX", dir.join("a.mtx").display().to_string())];
        gpu_testkit::launch_ranks("dist_transpose_multi_process", 2, &dir, &env, std::time::Duration::from_secs(120));
        for rank in 0..2 {
            let t = std::fs::read_to_string(dir.join(format!("out.{rank}"))).unwrap();
            let cuts: Vec<u64> = t.split_whitespace().map(|w| w.parse().unwrap()).collect();
            assert_eq!(cuts, one.cuts, "rank {rank}'s cuts");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

/// A rank of [`dist_transpose_multi_process`]'s launch: checks its block, writes the cuts.
fn transpose_rank(out: &str) {
    let seed: u64 = std::env::var("SPTRANS_TEST_MP_SEED").unwrap().parse().unwrap();
    let comms = Comms::from_env().unwrap();
    assert_eq!((comms.world(), comms.len()), (2, 1));
    let a = launch_matrix(seed);
    let path = std::path::PathBuf::from(std::env::var("SPTRANS_TEST_MP_MTX").unwrap());
    let d = DistCsr::<f64>::read_ranks(&path, comms.gpus(), comms.first_rank(), comms.world(), None).unwrap();
    let mut dt = DistTransposer::new(&comms).unwrap();
    let (t, ex) = dt.transpose(&comms, Algorithm::Auto, &d).unwrap();
    let r = comms.first_rank();
    assert_eq!((t.first_block(), t.blocks().len(), t.row_starts()), (r, 1, &ex.cuts[..]));
    let got = t.blocks()[0].download(&comms.gpus()[0]).unwrap();
    let want = row_block(&a.transpose(), ex.cuts[r], ex.cuts[r + 1]);
    assert!(got.same_bits(&want), "rank {r}: its block of the transpose differs from the twin's");
    // Twice on the same transposer, the exchange in 3 chunks: the same result.
    dt.set_chunks(Some(3));
    let (t2, _) = dt.transpose(&comms, Algorithm::RadixTrans, &d).unwrap();
    assert!(t2.blocks()[0].download(&comms.gpus()[0]).unwrap().same_bits(&want), "rank {r}: RadixTrans");
    let text: Vec<String> = ex.cuts.iter().map(u64::to_string).collect();
    std::fs::write(out, text.join("\n")).unwrap();
}
