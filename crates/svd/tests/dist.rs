//! The distributed truncated SVD on 1, 2 and 4 GPUs (skipped by name with fewer GPUs or without
//! NCCL): the small cases against a dense SVD (faer) to `1e-10 · σ₁` with their vectors checked
//! on the host (tall, wide, square, rank deficient, zero, 1 × 1: blocks with no rows on four
//! GPUs), larger ones against the one-GPU SVD on rank 0 (σ to `1e-8 · σ₁`, residuals below
//! `1e-8 · σ₁`), `f32` values, and the errors. Cases past `SPTRANS_TEST_MAX_LEN` rows are left
//! out (sanitizer runs).
mod common;

use common::{check_against_dense, small_cases};
use gpu_dist::Comms;
use gpu_svd::{dist, svd, Config, Error};
use gpu_testkit::run_multi_gpu_test;
use rand::Rng;
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::dist::DistCsr;
use sptrans_matrix::generate;

fn suite(name: &str, count: usize) {
    run_multi_gpu_test(name, count, |comms| {
        let (mut r, _seed) = gpu_testkit::rng();
        let gpus = comms.gpus();
        for (what, a, rank) in small_cases(&mut r) {
            let d = DistCsr::scatter(gpus, &a).unwrap();
            let c = Config { rank, tol: 1e-12, vectors: true, ..Config::default() };
            let s = dist::svd(comms, &d, &c).unwrap_or_else(|e| panic!("{what} on {count} GPUs: {e}"));
            check_against_dense(&format!("{what} on {count} GPUs"), &a, &s, rank);
        }
        let s: u64 = r.random();
        let cases = [
            ("tall-skinny 20000x300", generate::tall_skinny::<f64>(20_000, 300, 6, s).unwrap()),
            ("uniform wide 800x6000", generate::uniform::<f64>(800, 6000, 40_000, s ^ 5).unwrap()),
            ("uniform square 5000x5000", generate::uniform::<f64>(5000, 5000, 60_000, s ^ 6).unwrap()),
            // Past 2^16 rows per rank on two GPUs: the chunked dot products, with leftover rows.
            ("tall-skinny 140001x150", generate::tall_skinny::<f64>(140_001, 150, 5, s ^ 7).unwrap()),
        ];
        for (what, a) in &cases {
            if a.rows() as usize > gpu_testkit::max_len() {
                continue;
            }
            for block in [1, 3] {
                let c = Config { rank: 6, block: Some(block), tol: 1e-10, ..Config::default() };
                let one = svd(&gpus[0], &DeviceCsr::upload(&gpus[0], a).unwrap(), &c).unwrap();
                let d = DistCsr::scatter(gpus, a).unwrap();
                let g = dist::svd(comms, &d, &c).unwrap();
                let what = format!("{what}, block {block}, {count} GPUs");
                assert!(g.converged && one.converged, "{what}");
                for i in 0..6 {
                    assert!(
                        (g.sigma[i] - one.sigma[i]).abs() <= 1e-8 * one.sigma[0],
                        "{what}: σ{} {:e}, one GPU {:e}",
                        i + 1,
                        g.sigma[i],
                        one.sigma[i]
                    );
                    assert!(g.residual[i] <= 1e-8 * g.sigma[0], "{what}: residual {:e}", g.residual[i]);
                }
            }
        }
        // f32 values: widened on each rank, the same σ as the f64 matrix of the same values.
        if 30_000 > gpu_testkit::max_len() {
            return;
        }
        let a32 = generate::tall_skinny::<f32>(30_000, 200, 5, s ^ 9).unwrap();
        let a64 = sptrans_matrix::Csr::try_new(
            a32.rows(),
            a32.cols(),
            a32.ptr().to_vec(),
            a32.idx().to_vec(),
            a32.vals().iter().map(|&x| x as f64).collect(),
        )
        .unwrap();
        let c = Config { rank: 4, tol: 1e-10, ..Config::default() };
        let g32 = dist::svd(comms, &DistCsr::scatter(gpus, &a32).unwrap(), &c).unwrap();
        let g64 = dist::svd(comms, &DistCsr::scatter(gpus, &a64).unwrap(), &c).unwrap();
        for i in 0..4 {
            assert!((g32.sigma[i] - g64.sigma[i]).abs() <= 1e-9 * g64.sigma[0], "f32 on {count} GPUs: σ{}", i + 1);
        }
    });
}

#[test]
fn dist_svd_one_gpu() {
    suite("dist_svd_one_gpu", 1);
}

#[test]
fn dist_svd_two_gpus() {
    suite("dist_svd_two_gpus", 2);
}

#[test]
fn dist_svd_four_gpus() {
    suite("dist_svd_four_gpus", 4);
}

/// A matrix cut for another number of ranks, centering on several ranks, and a rank past the
/// matrix: errors, not panics.
#[test]
fn dist_svd_refuses_bad_input() {
    run_multi_gpu_test("dist_svd_refuses_bad_input", 2, |comms: &Comms| {
        let a = generate::uniform::<f64>(300, 60, 2000, 3).unwrap();
        let one = Comms::local(1).unwrap();
        let d1 = DistCsr::scatter(one.gpus(), &a).unwrap();
        assert!(matches!(dist::svd(comms, &d1, &Config { rank: 4, ..Config::default() }), Err(Error::Config(_))));
        let d2 = DistCsr::scatter(comms.gpus(), &a).unwrap();
        assert!(matches!(dist::svd(comms, &d2, &Config { rank: 4, center: true, ..Config::default() }), Err(Error::Config(_))));
        assert!(matches!(dist::svd(comms, &d2, &Config { rank: 61, ..Config::default() }), Err(Error::RankTooLarge { .. })));
    });
}

/// One process per GPU: this test binary starts itself twice as ranks 0 and 1 of a launch
/// (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, the NCCL id through a file), each rank reads its rows of
/// the matrix from a Matrix Market file ([`DistCsr::read_ranks`]: the block
/// [`DistCsr::scatter_ranks`] cuts from the whole matrix, bit for bit), multiplies its rows by
/// a vector across the two processes (the distributed SpMV, both ways of gathering `x`, against
/// the twin) and writes its σ; both answers must agree with
/// each other bit for bit and with the one-process answer on two GPUs to `1e-10 · σ₁`. The
/// children are given 120 s.
#[test]
fn dist_svd_multi_process() {
    if let Ok(out) = std::env::var("SPTRANS_TEST_MP_RANK_OUT") {
        return multi_process_rank(&out);
    }
    run_multi_gpu_test("dist_svd_multi_process", 2, |comms| {
        let seed: u64 = gpu_testkit::rng().0.random();
        let a = generate::tall_skinny::<f64>(30_000, 400, 6, seed).unwrap();
        let c = Config { rank: 8, tol: 1e-10, ..Config::default() };
        let want = dist::svd(comms, &DistCsr::scatter(comms.gpus(), &a).unwrap(), &c).unwrap();
        let dir = std::env::temp_dir().join(format!("sptrans-mp-{}-{seed:x}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // The ranks read their shares of it from a file (DistCsr::read_ranks).
        sptrans_matrix::mm::write_csr(std::fs::File::create(dir.join("a.mtx")).unwrap(), &a).unwrap();
        let env = [("SPTRANS_TEST_MP_SEED", seed.to_string()), ("SPTRANS_TEST_MP_MTX", dir.join("a.mtx").display().to_string())];
        gpu_testkit::launch_ranks("dist_svd_multi_process", 2, &dir, &env, std::time::Duration::from_secs(120));
        let read = |rank: usize| -> Vec<u64> {
            let t = std::fs::read_to_string(dir.join(format!("out.{rank}"))).unwrap();
            t.split_whitespace().map(|w| w.parse().unwrap()).collect()
        };
        let (s0, s1) = (read(0), read(1));
        assert_eq!(s0, s1, "the ranks' answers differ");
        assert_eq!(s0.len(), 8);
        for (i, &bits) in s0.iter().enumerate() {
            let g = f64::from_bits(bits);
            assert!((g - want.sigma[i]).abs() <= 1e-10 * want.sigma[0], "σ{}: {g:e} from two processes, {:e} from one", i + 1, want.sigma[i]);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

/// A rank of [`dist_svd_multi_process`]'s launch: its σ's bits, one a line, to `out`.
fn multi_process_rank(out: &str) {
    let seed: u64 = std::env::var("SPTRANS_TEST_MP_SEED").unwrap().parse().unwrap();
    let comms = Comms::from_env().unwrap();
    assert_eq!((comms.world(), comms.len()), (2, 1));
    let a = generate::tall_skinny::<f64>(30_000, 400, 6, seed).unwrap();
    let path = std::path::PathBuf::from(std::env::var("SPTRANS_TEST_MP_MTX").unwrap());
    let d = DistCsr::<f64>::read_ranks(&path, comms.gpus(), comms.first_rank(), comms.world(), None).unwrap();
    // The share read from the file is the block cut from the whole matrix.
    let whole = DistCsr::scatter_ranks(comms.gpus(), comms.first_rank(), comms.world(), &a).unwrap();
    assert_eq!((d.first_block(), d.row_starts()), (comms.first_rank(), whole.row_starts()));
    let (got, want) = (d.blocks()[0].download(&comms.gpus()[0]).unwrap(), whole.blocks()[0].download(&comms.gpus()[0]).unwrap());
    assert!(got.same_bits(&want), "rank {}: the share read differs from the block cut", comms.first_rank());
    let c = Config { rank: 8, tol: 1e-10, ..Config::default() };
    // The vectors need every rank in one process.
    assert!(matches!(dist::svd(&comms, &d, &Config { vectors: true, ..c.clone() }), Err(Error::Config(_))));
    // What needs every rank in one process (the distributed transpose) says so.
    assert!(matches!(comms.require_single_process("the distributed transpose"), Err(gpu_runtime::Error::MultiProcess(_))));
    // The distributed SpMV across the two processes, both ways of gathering x: this rank's rows
    // of A·x against the twin's.
    let x: Vec<f64> = (0..a.cols()).map(|i| ((i * 7919) % 13) as f64 - 6.0).collect();
    let mut want = vec![0.0; a.rows() as usize];
    gpu_spmv::serial::spmv(&a, 1.0, &x, 0.0, &mut want);
    let bound = gpu_spmv::serial::error_bound(&a, 1.0, &x, 0.0, &want);
    for gather in [gpu_spmv::dist::XGather::AllGather, gpu_spmv::dist::XGather::Halo] {
        let mut p = gpu_spmv::dist::DistSpmv::with_gather(&comms, &d, gpu_spmv::Format::Auto, gather).unwrap();
        assert_eq!(p.gather(), gather);
        let dx = p.scatter_x(&comms, &x).unwrap();
        let mut dy = p.alloc_y(&comms).unwrap();
        p.apply(&comms, 1.0, &dx, 0.0, &mut dy).unwrap();
        let got = p.gather_y(&comms, &dy).unwrap();
        let held = p.held_rows().start as usize..p.held_rows().end as usize;
        assert_eq!(held.start, d.row_starts()[comms.first_rank()] as usize);
        gpu_spmv::serial::within(&got, &want[held.clone()], &bound[held]).unwrap_or_else(|e| panic!("rank {}: {gather:?}: {e}", comms.first_rank()));
    }
    let s = dist::svd(&comms, &d, &c).unwrap();
    assert!(s.converged);
    let text: Vec<String> = s.sigma.iter().map(|x| x.to_bits().to_string()).collect();
    std::fs::write(out, text.join("\n")).unwrap();
}
