//! gpu-histogram against its serial twin: counts with both strategies over bins from 1 to 2^31,
//! index-to-pointers, the partitioned form and the vertical scan, on fresh random keys of awkward
//! sizes and adversarial distributions (all equal, one hot bin, power law), aligned and
//! unaligned, with poisoned outputs; and every error.
use gpu_histogram::{partition_range, serial, Error, Histogram, Strategy, NT, VT};
use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_testkit::{awkward_sizes, gpu_test, rng, Gpu, POISON_BYTE};
use rand::rngs::StdRng;
use rand::Rng;

const DISTS: [&str; 5] = ["uniform", "all-equal", "one-hot", "power-law", "some-out-of-range"];

fn keys(dist: &str, n: usize, bins: u32, r: &mut StdRng) -> Vec<u32> {
    let hot = r.random_range(0..bins);
    (0..n)
        .map(|_| match dist {
            "uniform" => r.random_range(0..bins),
            "all-equal" => hot,
            "one-hot" if r.random_bool(0.5) => hot,
            "one-hot" => r.random_range(0..bins),
            "power-law" => ((r.random_range(0.0..1.0f64).powi(3) * bins as f64) as u32).min(bins - 1),
            _ if r.random_bool(0.01) => r.random_range(bins..=u32::MAX),
            _ => r.random_range(0..bins),
        })
        .collect()
}

fn poisoned(gpu: &Gpu, len: usize) -> CudaSlice<u32> {
    let mut b = gpu.alloc::<u32>(len).unwrap();
    gpu.memset_bytes(&mut b, POISON_BYTE).unwrap();
    b
}

/// Uploads `k` one word past a 16-byte boundary when `unaligned` (the scalar-load path).
fn upload_keys(gpu: &Gpu, k: &[u32], unaligned: bool) -> (CudaSlice<u32>, usize) {
    if unaligned {
        let mut v = vec![7u32];
        v.extend_from_slice(k);
        (gpu.upload(&v).unwrap(), 1)
    } else {
        (gpu.upload(k).unwrap(), 0)
    }
}

#[test]
fn partition_ranges_cover_keys_in_order() {
    for (n, parts) in [(0, 1), (1, 1), (10, 3), (2, 4), (1000, 7), (33, 33), (5, 100)] {
        let mut next = 0;
        for p in 0..parts {
            let (b, e) = partition_range(n, parts, p);
            assert_eq!(b, next, "n={n} parts={parts} p={p}");
            assert!(e >= b);
            next = e;
        }
        assert_eq!(next, n);
    }
}

#[test]
fn serial_partitioned_places_keys_as_a_stable_counting_sort() {
    let (mut r, _seed) = rng();
    let bins = 50;
    let k: Vec<u32> = (0..5000).map(|_| r.random_range(0..bins)).collect();
    let (table, intra) = serial::partitioned(&k, bins, 13);
    let ptr = serial::index_to_pointers(&k, bins);
    let mut out = vec![u32::MAX; k.len()];
    for p in 0..13 {
        for i in serial::partition_range(k.len(), 13, p) {
            let key = k[i] as usize;
            out[(ptr[key] + table[p * bins as usize + key] + intra[i]) as usize] = i as u32;
        }
    }
    let mut expect: Vec<u32> = (0..k.len() as u32).collect();
    expect.sort_by_key(|&i| k[i as usize]);
    assert_eq!(out, expect);
}

gpu_test!(fn counts_match_twin(gpu) {
    let (mut r, _seed) = rng();
    for strategy in [Strategy::Shared, Strategy::Global, Strategy::Auto] {
        let mut h = Histogram::with_strategy(gpu, strategy).unwrap();
        for bins in [1u32, 2, 31, 32, 33, 256, 4097, 12_289, 1 << 14, (1 << 14) + 1, 65_537, 1 << 20, 1 << 24] {
            let sizes = if bins <= 65_537 { awkward_sizes((NT * VT) as usize, 16, &mut r) } else { vec![0, 1, 33, 1025, (1 << 20) + 1] };
            for (s, &n) in sizes.iter().enumerate() {
                let dist = DISTS[s % DISTS.len()];
                let k = keys(dist, n, bins, &mut r);
                let (d, off) = upload_keys(gpu, &k, s % 3 == 1);
                let mut counts = poisoned(gpu, bins as usize);
                h.counts(&d.slice(off..), &mut counts).unwrap();
                assert!(gpu.download(&counts).unwrap() == serial::histogram(&k, bins), "{strategy:?} bins={bins} n={n} {dist}");
            }
        }
    }
});

gpu_test!(fn counts_of_ten_million_keys_match_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut h = Histogram::new(gpu).unwrap();
    for (bins, dist) in [(256u32, "power-law"), (100_000, "uniform"), (1 << 22, "one-hot")] {
        let k = keys(dist, 10_000_000, bins, &mut r);
        let d = gpu.upload(&k).unwrap();
        let mut counts = poisoned(gpu, bins as usize);
        h.counts(&d, &mut counts).unwrap();
        assert!(gpu.download(&counts).unwrap() == serial::histogram(&k, bins), "bins={bins} {dist}");
    }
});

gpu_test!(fn counts_with_two_to_the_31_bins(gpu) {
    let (mut r, _seed) = rng();
    let bins = 1u32 << 31;
    // Keys at both ends of the range; only those ends are downloaded.
    let w = 1u32 << 16;
    let k: Vec<u32> = (0..100_000).map(|i| if i % 2 == 0 { r.random_range(0..w) } else { r.random_range(bins - w..bins) }).collect();
    let d = gpu.upload(&k).unwrap();
    let mut counts = poisoned(gpu, bins as usize);
    Histogram::new(gpu).unwrap().counts_checked(&d, &mut counts).unwrap();
    let low = gpu.download(&counts.slice(..w as usize)).unwrap();
    let high = gpu.download(&counts.slice((bins - w) as usize..)).unwrap();
    let mut el = vec![0u32; w as usize];
    let mut eh = vec![0u32; w as usize];
    for &x in &k {
        if x < w { el[x as usize] += 1 } else { eh[(x - (bins - w)) as usize] += 1 }
    }
    assert!(low == el && high == eh);
    let mid = gpu.download(&counts.slice(1 << 30..(1 << 30) + 1000)).unwrap();
    assert!(mid.iter().all(|&c| c == 0));
});

gpu_test!(fn pointers_match_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut h = Histogram::new(gpu).unwrap();
    for bins in [1u32, 7, 1000, 1 << 14, 100_000, 3_000_000] {
        for (s, &n) in awkward_sizes((NT * VT) as usize, 20, &mut r).iter().enumerate() {
            let dist = DISTS[s % DISTS.len()];
            let mut k = keys(dist, n, bins, &mut r);
            if s % 2 == 0 {
                k.sort_unstable(); // COO row indices of a CSR matrix
            }
            let (d, off) = upload_keys(gpu, &k, s % 3 == 2);
            let mut ptr = poisoned(gpu, bins as usize + 1);
            h.pointers(&d.slice(off..), &mut ptr).unwrap();
            assert!(gpu.download(&ptr).unwrap() == serial::index_to_pointers(&k, bins), "bins={bins} n={n} {dist}");
        }
    }
});

gpu_test!(fn partitioned_matches_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut h = Histogram::new(gpu).unwrap();
    for bins in [1u32, 3, 100, 5000, 100_000] {
        for (s, &n) in awkward_sizes(32, 17, &mut r).iter().enumerate() {
            for parts in [1usize, 2, 7, 33, 1000, n.max(1), n + 5] {
                if (parts + 1) * bins as usize > 1 << 26 {
                    continue;
                }
                let dist = DISTS[(s + parts) % DISTS.len()];
                let k = keys(dist, n, bins, &mut r);
                let d = gpu.upload(&k).unwrap();
                let mut table = poisoned(gpu, (parts + 1) * bins as usize);
                let mut intra = poisoned(gpu, n);
                h.partitioned(&d, parts as u64, &mut table, &mut intra).unwrap();
                let (et, ei) = serial::partitioned(&k, bins, parts);
                assert!(gpu.download(&table).unwrap() == et, "table: bins={bins} n={n} parts={parts} {dist}");
                assert!(gpu.download(&intra).unwrap() == ei, "intra: bins={bins} n={n} parts={parts} {dist}");
            }
        }
    }
    // Transposition size: 10M keys, 100k bins, 4096 partitions.
    let k = keys("power-law", 10_000_000, 100_000, &mut r);
    let d = gpu.upload(&k).unwrap();
    let mut table = poisoned(gpu, 4097 * 100_000);
    let mut intra = poisoned(gpu, k.len());
    h.partitioned(&d, 4096, &mut table, &mut intra).unwrap();
    let (et, ei) = serial::partitioned(&k, 100_000, 4096);
    assert!(gpu.download(&table).unwrap() == et && gpu.download(&intra).unwrap() == ei);
});

gpu_test!(fn vertical_scan_matches_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut h = Histogram::new(gpu).unwrap();
    for rows in [1usize, 2, 9, 100, 5000, 70_000] {
        for bins in [1usize, 5, 256, 10_000] {
            if rows * bins > 1 << 25 {
                continue;
            }
            let t: Vec<u32> = (0..rows * bins).map(|_| r.random()).collect();
            let mut d = gpu.upload(&t).unwrap();
            h.vertical_scan(&mut d, rows as u64, bins as u64).unwrap();
            let mut e = t.clone();
            serial::vertical_scan(&mut e, bins);
            assert!(gpu.download(&d).unwrap() == e, "rows={rows} bins={bins}");
        }
    }
});

gpu_test!(fn checked_calls_report_the_first_bad_key(gpu) {
    let (mut r, _seed) = rng();
    let mut h = Histogram::new(gpu).unwrap();
    for strategy in [Strategy::Shared, Strategy::Global] {
        let mut h = Histogram::with_strategy(gpu, strategy).unwrap();
        for n in [1usize, 33, 5000, 1_000_001] {
            let bins = 1000;
            let mut k = keys("uniform", n, bins, &mut r);
            let bad = r.random_range(0..n);
            k[bad] = bins + r.random_range(0..5);
            if bad + 1 < n {
                k[n - 1] = u32::MAX; // a later bad key must not win
            }
            let d = gpu.upload(&k).unwrap();
            let mut counts = gpu.alloc::<u32>(bins as usize).unwrap();
            let e = h.counts_checked(&d, &mut counts).unwrap_err();
            assert!(matches!(e, Error::KeyOutOfRange { index, bins: 1000 } if index == bad as u64), "{strategy:?} n={n}: {e}");
            let mut ptr = gpu.alloc::<u32>(bins as usize + 1).unwrap();
            assert!(matches!(h.pointers_checked(&d, &mut ptr), Err(Error::KeyOutOfRange { index, .. }) if index == bad as u64));
            let mut table = gpu.alloc::<u32>(5 * bins as usize).unwrap();
            let mut intra = gpu.alloc::<u32>(n).unwrap();
            assert!(matches!(h.partitioned_checked(&d, 4, &mut table, &mut intra), Err(Error::KeyOutOfRange { index, .. }) if index == bad as u64));
            // Unchecked: the bad keys are skipped, as the twin does.
            h.counts(&d, &mut counts).unwrap();
            assert!(gpu.download(&counts).unwrap() == serial::histogram(&k, bins));
        }
    }
    let d = gpu.upload(&[1u32, 2, 3]).unwrap();
    let mut empty = gpu.alloc::<u32>(0).unwrap();
    assert!(matches!(h.counts(&d, &mut empty), Err(Error::InvalidBins { bins: 0 })));
    let mut one = gpu.alloc::<u32>(1).unwrap();
    assert!(matches!(h.pointers(&d, &mut one), Err(Error::InvalidBins { bins: 0 })));
    let mut table = gpu.alloc::<u32>(10).unwrap();
    let mut intra = gpu.alloc::<u32>(3).unwrap();
    assert!(matches!(h.partitioned(&d, 0, &mut table, &mut intra), Err(Error::ZeroParts)));
    assert!(matches!(h.partitioned(&d, 3, &mut table, &mut intra), Err(Error::LengthMismatch { what: "table", .. })), "10 is not 4 * bins");
    let mut intra2 = gpu.alloc::<u32>(2).unwrap();
    assert!(matches!(h.partitioned(&d, 4, &mut table, &mut intra2), Err(Error::LengthMismatch { what: "intra", .. })));
    assert!(matches!(h.vertical_scan(&mut table, 3, 3), Err(Error::LengthMismatch { what: "table", .. })));
    // The stream is still healthy after all the refusals.
    h.counts_checked(&d, &mut table).unwrap();
    assert_eq!(gpu.download(&table).unwrap(), serial::histogram(&[1, 2, 3], 10));
});
