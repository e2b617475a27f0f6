//! gpu-segmerge against its serial twin: merge passes for run lengths from 1 to 2^20 (pairs
//! inside one tile and pairs spanning hundreds), stability through the payload, sorted / reverse
//! / few-distinct / all-equal keys, poisoned outputs; a CPU model of the tiling; the errors. (The
//! whole sort built on these passes is tested in gpu-segsort.)
use gpu_segmerge::{serial, Error, Segmerge, NT, NV, VT};
use gpu_testkit::{gpu_test, max_len, rng, sort_keys, Gpu, POISON_BYTE, SORT_KEY_DISTS};
use rand::rngs::StdRng;
use rand::Rng;
use segmerge_kernels::{merge_path, tile_count, tile_range, tiles_per_pair};

fn iota(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

/// Keys with every run of `s` sorted (the precondition of a merge pass).
fn runs(n: usize, s: usize, dist: &str, r: &mut StdRng) -> Vec<u32> {
    let mut k = sort_keys(dist, n, r);
    k.chunks_mut(s.max(1)).for_each(|c| c.sort());
    k
}

/// CPU model of the partition + merge kernels: same tile_range, merge_path and thread split.
fn cpu_model(k: &[u32], v: &[u32], s: u64) -> (Vec<u32>, Vec<u32>) {
    let n = k.len() as u64;
    let (mut ko, mut vo) = (vec![u32::MAX; k.len()], vec![u32::MAX; k.len()]);
    let tpp = tiles_per_pair(s);
    let split = |t: u64| {
        let (pb, a_len, b_len, d0, _) = tile_range(n, s, tpp, t);
        merge_path(|i| k[(pb + i) as usize], a_len, |j| k[(pb + a_len + j) as usize], b_len, d0)
    };
    for t in 0..tile_count(n, s) {
        let (pb, a_len, b_len, d0, d1) = tile_range(n, s, tpp, t);
        let a0 = split(t);
        let a1 = if d1 == a_len + b_len || (t + 1) % tpp == 0 { a_len } else { split(t + 1) };
        let (b0, b1) = (d0 - a0, d1 - a1);
        let sk: Vec<u32> = (a0..a1).map(|i| k[(pb + i) as usize]).chain((b0..b1).map(|j| k[(pb + a_len + j) as usize])).collect();
        let sv: Vec<u32> = (a0..a1).map(|i| v[(pb + i) as usize]).chain((b0..b1).map(|j| v[(pb + a_len + j) as usize])).collect();
        let (ac, bc) = (a1 - a0, b1 - b0);
        for tid in 0..NT as u64 {
            let diag = (tid * VT as u64).min(ac + bc);
            let sp = merge_path(|i| sk[i as usize], ac, |j| sk[(ac + j) as usize], bc, diag);
            let (mut ai, mut bi) = (sp, ac + diag - sp);
            for x in 0..VT as u64 {
                let o = diag + x;
                if o >= ac + bc {
                    break;
                }
                let take_a = ai < ac && (bi >= ac + bc || sk[bi as usize] >= sk[ai as usize]);
                let src = if take_a {
                    ai += 1;
                    ai - 1
                } else {
                    bi += 1;
                    bi - 1
                };
                ko[(pb + d0 + o) as usize] = sk[src as usize];
                vo[(pb + d0 + o) as usize] = sv[src as usize];
            }
        }
    }
    (ko, vo)
}

#[test]
fn cpu_model_of_tiling_matches_twin() {
    let (mut r, _seed) = rng();
    for s in [1usize, 2, 7, 64, 1000, 1024, 2048, 3000, 5000, 1 << 14] {
        for n in [0usize, 1, s, 2 * s, 2 * s + 1, 3 * s + 5, NV as usize * 3 + 17, 40_000] {
            for dist in SORT_KEY_DISTS {
                let k = runs(n, s, dist, &mut r);
                let v = iota(n);
                assert_eq!(cpu_model(&k, &v, s as u64), serial::merge_pass(&k, &v, s), "s={s} n={n} {dist}");
            }
        }
    }
}

gpu_test!(fn merge_pass_matches_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut m = Segmerge::new(gpu).unwrap();
    for s in [1usize, 2, 31, 32, 33, 100, 1023, 1024, 2047, 2048, 2049, 5000, 1 << 16, 1 << 20] {
        for (i, n) in [0usize, 1, s, s + 1, 2 * s, 2 * s + 1, 5 * s + 3, r.random_range(1..3_000_000)].into_iter().enumerate() {
            if n > 5_000_000 || n > max_len() {
                continue;
            }
            let dist = SORT_KEY_DISTS[i % SORT_KEY_DISTS.len()];
            let k = runs(n, s, dist, &mut r);
            let (ek, ev) = serial::merge_pass(&k, &iota(n), s);
            let (dk, dv) = (gpu.upload(&k).unwrap(), gpu.upload(&iota(n)).unwrap());
            let mut ko = gpu.alloc::<u32>(n).unwrap();
            let mut vo = gpu.alloc::<u32>(n).unwrap();
            gpu.memset_bytes(&mut ko, POISON_BYTE).unwrap();
            gpu.memset_bytes(&mut vo, POISON_BYTE).unwrap();
            m.merge_pass(s as u64, &dk, &dv, &mut ko, &mut vo).unwrap();
            assert!(gpu.download(&ko).unwrap() == ek && gpu.download(&vo).unwrap() == ev, "pairs s={s} n={n} {dist}");
            gpu.memset_bytes(&mut ko, POISON_BYTE).unwrap();
            m.merge_pass_keys(s as u64, &dk, &mut ko).unwrap();
            assert!(gpu.download(&ko).unwrap() == ek, "keys s={s} n={n} {dist}");
        }
    }
});

gpu_test!(fn errors_are_values(gpu) {
    let mut m = Segmerge::new(gpu).unwrap();
    let (dk, dv) = (gpu.upload(&[1u32, 2, 3]).unwrap(), gpu.upload(&[0u32, 1, 2]).unwrap());
    let mut ko = gpu.alloc::<u32>(3).unwrap();
    let mut vo = gpu.alloc::<u32>(2).unwrap();
    assert!(matches!(m.merge_pass(1, &dk, &dv, &mut ko, &mut vo), Err(Error::LengthMismatch { what: "values_out", .. })));
    let mut vo = gpu.alloc::<u32>(3).unwrap();
    assert!(matches!(m.merge_pass(0, &dk, &dv, &mut ko, &mut vo), Err(Error::ZeroRun)));
    m.merge_pass(1, &dk, &dv, &mut ko, &mut vo).unwrap();
    assert_eq!(gpu.download(&ko).unwrap(), vec![1, 2, 3]);
});

fn _use(_: &Gpu) {}

#[test]
fn splits_cover_every_pass() {
    use gpu_segmerge::raw::max_tiles;
    for n in [1u64, 7, 2048, 2049, 5000, 100_000, 1 << 22, 10_000_000] {
        for b in [128u64, 2048] {
            let mut s = b;
            while s < n {
                assert!(tile_count(n, s) <= max_tiles(n, b), "n={n} b={b} s={s}");
                s *= 2;
            }
        }
    }
}
