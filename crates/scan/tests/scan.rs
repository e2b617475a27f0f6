//! Every scan variant against the serial twin on fresh random inputs of awkward sizes, poisoned
//! outputs, both algorithms, all item types, in place and out of place, aligned and unaligned.
use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_scan::{serial, Algorithm, Error, ScanItem, Scanner, TILE};
use gpu_testkit::{awkward_sizes, gpu_test, rng, Gpu, POISON_BYTE};
use rand::distr::{Distribution, StandardUniform};
use rand::Rng;

const ALGOS: [Algorithm; 3] = [Algorithm::Lookback, Algorithm::ReduceThenScan, Algorithm::Auto];

fn sizes(r: &mut rand::rngs::StdRng) -> Vec<usize> {
    let mut v = awkward_sizes(TILE as usize, 22, r);
    v.extend([(TILE * TILE) as usize - 1, (TILE * TILE) as usize + 1, 10_000_000]);
    v
}

fn check_type<T: ScanItem + TryFrom<u8>>(gpu: &Gpu, small_values: bool)
where
    StandardUniform: Distribution<T>,
{
    let (mut r, _seed) = rng();
    for n in sizes(&mut r) {
        let x: Vec<T> = (0..n).map(|_| if small_values { T::try_from(r.random::<u8>()).unwrap_or(T::ZERO) } else { r.random() }).collect();
        let want_ex = serial::exclusive_scan(&x);
        let want_in = serial::inclusive_scan(&x);
        let input = gpu.upload(&x).unwrap();
        for algo in ALGOS {
            let mut s = Scanner::<T>::new(gpu, algo).unwrap();
            let mut out: CudaSlice<T> = gpu.alloc(n).unwrap();
            gpu.memset_bytes(&mut out, POISON_BYTE).unwrap();
            s.exclusive(&input, &mut out).unwrap();
            assert!(gpu.download(&out).unwrap() == want_ex, "exclusive {algo:?} {} n={n}", T::NAME);
            gpu.memset_bytes(&mut out, POISON_BYTE).unwrap();
            s.inclusive(&input, &mut out).unwrap();
            assert!(gpu.download(&out).unwrap() == want_in, "inclusive {algo:?} {} n={n}", T::NAME);
            // In place.
            let mut data = gpu.upload(&x).unwrap();
            s.exclusive_in_place(&mut data).unwrap();
            assert!(gpu.download(&data).unwrap() == want_ex, "exclusive in place {algo:?} {} n={n}", T::NAME);
            let mut data = gpu.upload(&x).unwrap();
            s.inclusive_in_place(&mut data).unwrap();
            assert!(gpu.download(&data).unwrap() == want_in, "inclusive in place {algo:?} {} n={n}", T::NAME);
        }
    }
}

gpu_test!(fn scan_u32_matches_twin(gpu) { check_type::<u32>(gpu, false) });
gpu_test!(fn scan_u32_small_values_matches_twin(gpu) { check_type::<u32>(gpu, true) });
gpu_test!(fn scan_i32_matches_twin(gpu) { check_type::<i32>(gpu, false) });
gpu_test!(fn scan_u64_matches_twin(gpu) { check_type::<u64>(gpu, false) });
gpu_test!(fn scan_i64_matches_twin(gpu) { check_type::<i64>(gpu, false) });

gpu_test!(fn scan_unaligned_views_match_twin(gpu) {
    // Views starting 1..3 items into a buffer are not 16-byte aligned: the scalar path runs.
    let (mut r, _seed) = rng();
    for n in [1usize, 33, 2047, 2049, 100_003] {
        let x: Vec<u32> = (0..n + 3).map(|_| r.random()).collect();
        let input = gpu.upload(&x).unwrap();
        for off in 1..=3 {
            let m = n + 3 - off;
            for algo in ALGOS {
                let mut out = gpu.alloc::<u32>(n + 3).unwrap();
                gpu.memset_bytes(&mut out, POISON_BYTE).unwrap();
                let mut s = Scanner::<u32>::new(gpu, algo).unwrap();
                s.inclusive(&input.slice(off..), &mut out.slice_mut(..m)).unwrap();
                let got = gpu.download(&out).unwrap();
                assert_eq!(got[..m], serial::inclusive_scan(&x[off..]), "{algo:?} n={n} off={off}");
                assert!(got[m..].iter().all(|&v| v == 0xABAB_ABAB), "wrote past the view");
            }
        }
    }
});

gpu_test!(fn scan_constant_and_extreme_inputs(gpu) {
    for (name, x) in [
        ("all max", vec![u32::MAX; 1 << 20]),
        ("all zero", vec![0u32; 123_457]),
        ("one hot", (0..300_001u32).map(|i| (i == 150_000) as u32 * 7).collect()),
    ] {
        for algo in ALGOS {
            let input = gpu.upload(&x).unwrap();
            let mut out = gpu.alloc::<u32>(x.len()).unwrap();
            gpu.memset_bytes(&mut out, POISON_BYTE).unwrap();
            Scanner::<u32>::new(gpu, algo).unwrap().exclusive(&input, &mut out).unwrap();
            assert_eq!(gpu.download(&out).unwrap(), serial::exclusive_scan(&x), "{name} {algo:?}");
        }
    }
});

gpu_test!(fn scan_reuses_workspace_across_sizes(gpu) {
    let (mut r, _seed) = rng();
    let mut s = Scanner::<u64>::new(gpu, Algorithm::Lookback).unwrap();
    for n in [5_000_000usize, 3, 70_000, 5_000_001] {
        let x: Vec<u64> = (0..n).map(|_| r.random()).collect();
        let mut d = gpu.upload(&x).unwrap();
        s.exclusive_in_place(&mut d).unwrap();
        assert!(gpu.download(&d).unwrap() == serial::exclusive_scan(&x), "n={n}");
    }
});

gpu_test!(fn scan_length_2p31_minus_1(gpu) {
    // The largest length the issue asks for, u32, in place (8 GiB).
    let n = (1usize << 31) - 1;
    let (free, _) = gpu.memory_info().unwrap();
    if free < 3 * (n as u64) * 4 {
        eprintln!("scan_length_2p31_minus_1: not enough device memory ({free} bytes free), not run");
        return;
    }
    let (mut r, _seed) = rng();
    let mut state: u64 = r.random::<u64>() | 1;
    let x: Vec<u32> = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u32
        })
        .collect();
    let mut d = gpu.upload(&x).unwrap();
    for algo in ALGOS {
        Scanner::<u32>::new(gpu, algo).unwrap().inclusive_in_place(&mut d).unwrap();
        let got = gpu.download(&d).unwrap();
        let mut acc = 0u32;
        let bad = x.iter().zip(&got).position(|(&v, &g)| {
            acc = acc.wrapping_add(v);
            g != acc
        });
        assert_eq!(bad, None, "{algo:?}: first wrong index");
        gpu.stream().memcpy_htod(&x, &mut d).unwrap();
    }
});

gpu_test!(fn scan_rejects_length_mismatch(gpu) {
    let input = gpu.upload(&[1u32, 2, 3]).unwrap();
    let mut out = gpu.alloc::<u32>(4).unwrap();
    let e = gpu_scan::exclusive_sum(gpu, &input, &mut out).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { what: "output", expected: 3, got: 4 }), "{e}");
});

#[test]
fn workspace_sizes() {
    use gpu_runtime::scratch::aligned;
    assert_eq!(Scanner::<u32>::workspace_bytes(Algorithm::Lookback, TILE), 0, "single tile needs none");
    assert_eq!(Scanner::<u32>::workspace_bytes(Algorithm::ReduceThenScan, TILE), 0);
    // 2 tiles: counter 16 + status 16 + agg 16 + incl 16, as one region of scratch (aligned).
    assert_eq!(Scanner::<u32>::workspace_bytes(Algorithm::Lookback, TILE + 1), aligned(64));
    // TILE^2 + 1 items: level 0 has TILE + 1 totals, level 1 has 2.
    let l0 = ((TILE + 1) * 4).div_ceil(16) * 16;
    assert_eq!(Scanner::<u32>::workspace_bytes(Algorithm::ReduceThenScan, TILE * TILE + 1), aligned(l0 + 16));
}

#[test]
fn auto_resolves_by_length() {
    assert_eq!(Algorithm::Auto.resolve(1 << 18), Algorithm::Lookback);
    assert_eq!(Algorithm::Auto.resolve((1 << 18) + 1), Algorithm::ReduceThenScan);
    assert_eq!(Algorithm::Lookback.resolve(1 << 30), Algorithm::Lookback);
}

#[test]
fn serial_twin_definitions() {
    let x = [5u64, u64::MAX, 3];
    assert_eq!(serial::exclusive_scan(&x), vec![0, 5, 4]);
    assert_eq!(serial::inclusive_scan(&x), vec![5, 4, 7]);
    assert!(serial::exclusive_scan::<u32>(&[]).is_empty());
}
