//! gpu-segsort against its serial twin: every block size, pairs and keys only, on random, few-
//! distinct (stability, checked through the payload carrying the original position), 24-bit, sorted,
//! reverse-sorted and all-equal keys at awkward sizes, poisoned outputs; the sort by offsets with
//! empty segments, one huge segment and segments straddling tiles; and the errors.
use gpu_segsort::{serial, Error, Segsort, TileSize};
use gpu_testkit::{awkward_sizes, gpu_test, max_len, rng, sort_keys, Gpu, POISON_BYTE, SORT_KEY_DISTS};
use rand::rngs::StdRng;
use rand::Rng;

fn iota(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

#[test]
fn block_sizes_round_trip() {
    for b in TileSize::ALL {
        assert_eq!(TileSize::from_len(b.len()).unwrap(), b);
        assert_eq!(b.threads() * gpu_segsort::VT, b.len());
    }
    assert!(matches!(TileSize::from_len(300), Err(Error::BadBlockSize(300))));
}

gpu_test!(fn sort_tiles_matches_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut s = Segsort::new(gpu).unwrap();
    for block in TileSize::ALL {
        let mut sizes = awkward_sizes(block.len() as usize, 20, &mut r);
        if block == TileSize::T2048 {
            sizes.push(10_000_000);
        }
        for (i, &n) in sizes.iter().enumerate().filter(|(_, &n)| n <= max_len()) {
            let dist = SORT_KEY_DISTS[i % SORT_KEY_DISTS.len()];
            let k = sort_keys(dist, n, &mut r);
            let (mut ek, mut ev) = (k.clone(), iota(n));
            serial::sort_tiles(block, &mut ek, Some(&mut ev));
            // Out of place into poisoned outputs.
            let (dk, dv) = (gpu.upload(&k).unwrap(), gpu.upload(&iota(n)).unwrap());
            let mut ko = gpu.alloc::<u32>(n).unwrap();
            let mut vo = gpu.alloc::<u32>(n).unwrap();
            gpu.memset_bytes(&mut ko, POISON_BYTE).unwrap();
            gpu.memset_bytes(&mut vo, POISON_BYTE).unwrap();
            s.sort_tiles_into(block, &dk, &dv, &mut ko, &mut vo).unwrap();
            assert!(gpu.download(&ko).unwrap() == ek && gpu.download(&vo).unwrap() == ev, "pairs {block:?} n={n} {dist}");
            // In place, keys only.
            let mut dk = gpu.upload(&k).unwrap();
            s.sort_tiles_keys(block, &mut dk).unwrap();
            assert!(gpu.download(&dk).unwrap() == ek, "keys {block:?} n={n} {dist}");
            // In place, pairs.
            let (mut dk, mut dv) = (gpu.upload(&k).unwrap(), gpu.upload(&iota(n)).unwrap());
            s.sort_tiles(block, &mut dk, &mut dv).unwrap();
            assert!(gpu.download(&dk).unwrap() == ek && gpu.download(&dv).unwrap() == ev, "in place {block:?} n={n} {dist}");
        }
    }
});

/// Offsets for `n` items in `m` segments under a named layout.
fn offsets(layout: &str, n: usize, m: usize, r: &mut StdRng) -> Vec<u32> {
    let mut cuts: Vec<u32> = match layout {
        "uniform" => (0..m.saturating_sub(1)).map(|_| r.random_range(0..=n as u32)).collect(),
        "one-huge" => {
            let c = r.random_range(0..=n as u32);
            vec![c; m.saturating_sub(1)]
        }
        _ => (0..m.saturating_sub(1)).map(|i| ((i + 1) * 2048).min(n) as u32 - (i % 3 == 0) as u32 * (n > 0) as u32).collect(),
    };
    cuts.sort_unstable();
    std::iter::once(0).chain(cuts).chain(std::iter::once(n as u32)).collect()
}

gpu_test!(fn sort_segments_matches_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut s = Segsort::new(gpu).unwrap();
    let mut cases = vec![(0usize, 0usize), (0, 5), (1, 1), (5, 1), (33, 40)];
    for n in awkward_sizes(2048, 21, &mut r) {
        cases.push((n, 1));
        cases.push((n, n / 100 + 1));
        cases.push((n, n / 3 + 1));
    }
    cases.push((3_000_000, 2));
    cases.push((10_000_000, 1_000_000));
    for (i, &(n, m)) in cases.iter().enumerate().filter(|(_, &(n, _))| n <= max_len()) {
        for layout in ["uniform", "one-huge", "tile-straddling"] {
            let o = offsets(layout, n, m, &mut r);
            let dist = SORT_KEY_DISTS[i % SORT_KEY_DISTS.len()];
            let k = sort_keys(dist, n, &mut r);
            let (mut ek, mut ev) = (k.clone(), iota(n));
            serial::sort_segments(&o, &mut ek, Some(&mut ev));
            let d_o = gpu.upload(&o).unwrap();
            let (mut dk, mut dv) = (gpu.upload(&k).unwrap(), gpu.upload(&iota(n)).unwrap());
            s.sort_segments(&d_o, &mut dk, &mut dv).unwrap();
            assert!(gpu.download(&dk).unwrap() == ek && gpu.download(&dv).unwrap() == ev, "pairs n={n} m={m} {layout} {dist}");
            let mut dk = gpu.upload(&k).unwrap();
            s.sort_segments_keys(&d_o, &mut dk).unwrap();
            assert!(gpu.download(&dk).unwrap() == ek, "keys n={n} m={m} {layout} {dist}");
        }
    }
});

gpu_test!(fn errors_are_values(gpu) {
    let mut s = Segsort::new(gpu).unwrap();
    let mut k = gpu.upload(&[3u32, 2, 1]).unwrap();
    let mut v2 = gpu.upload(&[0u32, 1]).unwrap();
    assert!(matches!(s.sort_tiles(TileSize::T128, &mut k, &mut v2), Err(Error::LengthMismatch { what: "values", expected: 3, got: 2 })));
    for bad in [&[0u32, 2][..], &[0, 4, 3], &[1, 3], &[0, 2, 1, 3]] {
        let d_o = gpu.upload(bad).unwrap();
        assert!(matches!(s.sort_segments_keys(&d_o, &mut k), Err(Error::Offsets(_))), "{bad:?}");
    }
    // Still usable afterwards.
    s.sort_segments_keys(&gpu.upload(&[0u32, 3]).unwrap(), &mut k).unwrap();
    assert_eq!(gpu.download(&k).unwrap(), vec![1, 2, 3]);
});

fn _use(_: &Gpu) {}

// The whole sort: block sorts, then gpu-segmerge's merge passes.
gpu_test!(fn sort_pairs_matches_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut m = Segsort::new(gpu).unwrap();
    let mut sizes = awkward_sizes(2048, 22, &mut r);
    sizes.push(10_000_000);
    for (i, &n) in sizes.iter().enumerate().filter(|(_, &n)| n <= max_len()) {
        let dist = SORT_KEY_DISTS[i % SORT_KEY_DISTS.len()];
        let k = sort_keys(dist, n, &mut r);
        let (ek, ev) = serial::sorted_pairs(&k, &iota(n));
        let (mut dk, mut dv) = (gpu.upload(&k).unwrap(), gpu.upload(&iota(n)).unwrap());
        m.sort_pairs(&mut dk, &mut dv).unwrap();
        assert!(gpu.download(&dk).unwrap() == ek && gpu.download(&dv).unwrap() == ev, "pairs n={n} {dist}");
        let mut dk = gpu.upload(&k).unwrap();
        m.sort_keys(&mut dk).unwrap();
        assert!(gpu.download(&dk).unwrap() == ek, "keys n={n} {dist}");
    }
    // Every starting block size, odd and even numbers of passes.
    for block in TileSize::ALL {
        let mut m = Segsort::with_tile(gpu, block).unwrap();
        for n in [block.len() as usize * 4 + 1, block.len() as usize * 8 - 1, 300_001].into_iter().filter(|&n| n <= max_len()) {
            let k = sort_keys("few-distinct", n, &mut r);
            let (ek, ev) = serial::sorted_pairs(&k, &iota(n));
            let (mut dk, mut dv) = (gpu.upload(&k).unwrap(), gpu.upload(&iota(n)).unwrap());
            m.sort_pairs(&mut dk, &mut dv).unwrap();
            assert!(gpu.download(&dk).unwrap() == ek && gpu.download(&dv).unwrap() == ev, "{block:?} n={n}");
        }
    }
});
