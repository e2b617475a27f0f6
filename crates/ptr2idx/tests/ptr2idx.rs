//! gpu-ptr2idx against its serial twin: random and adversarial offsets (uniform rows, one huge
//! row, almost all rows empty, m = 0, nnz = 0), awkward sizes, poisoned outputs; the checked
//! variant's errors; and a CPU model of the tiled merge-path expansion.
use gpu_ptr2idx::{merge_path, serial, Error, Ptr2Idx, NT, NV};
use gpu_testkit::{awkward_sizes, gpu_test, rng, Gpu, POISON_BYTE};
use rand::rngs::StdRng;
use rand::Rng;

/// Offsets for `m` rows and `nnz` positions under a named distribution.
fn offsets(kind: &str, m: usize, nnz: usize, r: &mut StdRng) -> Vec<u32> {
    let mut counts = vec![0u32; m];
    if m > 0 {
        match kind {
            "uniform" => (0..nnz).for_each(|_| counts[r.random_range(0..m)] += 1),
            "one-long-row" => counts[r.random_range(0..m)] = nnz as u32,
            "mostly-empty" => {
                // 90% of rows empty; the rest take the nonzeros uniformly.
                let full: Vec<usize> = (0..m).filter(|_| r.random_bool(0.1)).collect();
                let full = if full.is_empty() { vec![m - 1] } else { full };
                (0..nnz).for_each(|_| counts[full[r.random_range(0..full.len())]] += 1)
            }
            "power-law" => (0..nnz).for_each(|_| {
                let u: f64 = r.random_range(0.0..1.0);
                counts[((u * u * u * m as f64) as usize).min(m - 1)] += 1
            }),
            _ => unreachable!(),
        }
    }
    let mut o = Vec::with_capacity(m + 1);
    o.push(0u32);
    for c in counts {
        o.push(o.last().copied().unwrap_or(0) + c);
    }
    o
}

const KINDS: [&str; 4] = ["uniform", "one-long-row", "mostly-empty", "power-law"];

fn cases(r: &mut StdRng) -> Vec<(usize, usize)> {
    let mut v = vec![(0, 0), (1, 0), (5, 0), (1, 1), (1, 100_000)];
    for n in awkward_sizes(NV as usize, 20, r) {
        v.push((n / 3, n));
        v.push((n, n / 7));
    }
    v.push((1_000_000, 10_000_000));
    v.push((3_000_000, 1_000));
    v
}

/// CPU model of ptr2idx_partition + ptr2idx_expand (same merge_path, same tile/thread split).
fn cpu_model(o: &[u32]) -> Vec<u32> {
    let m = (o.len() - 1) as u64;
    let nnz = o[m as usize] as u64;
    let mut out = vec![u32::MAX; nnz as usize];
    let tiles = (m + nnz).div_ceil(NV as u64);
    let split = |d: u64| merge_path(|i| o[i as usize + 1] as u64, m, nnz, d);
    for t in 0..tiles {
        let (d0, d1) = ((t * NV as u64).min(m + nnz), ((t + 1) * NV as u64).min(m + nnz));
        let (i0, i1) = (split(d0), split(d1));
        let (a_count, j0) = (i1 - i0, d0 - i0);
        let b_count = (d1 - d0) - a_count;
        let ends = |i: u64| (o[(i0 + i) as usize + 1] as u64).wrapping_sub(j0);
        for tid in 0..NT as u64 {
            let diag = (tid * (NV / NT) as u64).min(a_count + b_count);
            let mut ai = merge_path(ends, a_count, b_count, diag);
            let mut bi = diag - ai;
            for _ in 0..NV / NT {
                if ai >= a_count && bi >= b_count {
                    break;
                }
                if ai < a_count && (bi >= b_count || ends(ai) <= bi) {
                    ai += 1;
                } else {
                    out[(j0 + bi) as usize] = (i0 + ai) as u32;
                    bi += 1;
                }
            }
        }
    }
    out
}

#[test]
fn cpu_model_of_tiling_matches_twin() {
    let (mut r, _seed) = rng();
    for kind in KINDS {
        for (m, nnz) in [(0, 0), (1, 5000), (4096, 3), (2047, 2049), (20_000, 50_000), (100_000, 1000)] {
            let o = offsets(kind, m, nnz, &mut r);
            assert_eq!(cpu_model(&o), serial::ptr2idx(&o), "{kind} m={m} nnz={nnz}");
        }
    }
}

#[test]
fn serial_validate_catches_bad_offsets() {
    assert!(matches!(serial::validate::<u32>(&[], 0), Err(Error::EmptyOffsets)));
    assert!(matches!(serial::validate(&[0u64, 3, 2], 2), Err(Error::InvalidOffsets { index: 2, .. })));
    assert!(matches!(serial::validate(&[1u32, 2], 2), Err(Error::InvalidOffsets { index: 0, .. })));
    assert!(matches!(serial::validate(&[0u32, 2], 3), Err(Error::InvalidOffsets { index: 1, .. })));
    assert!(serial::validate(&[0u32], 0).is_ok());
}

gpu_test!(fn ptr2idx_matches_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut p = Ptr2Idx::new(gpu).unwrap();
    for kind in KINDS {
        for &(m, nnz) in &cases(&mut r) {
            if m == 0 && nnz > 0 {
                continue;
            }
            let o = offsets(kind, m, nnz, &mut r);
            let d_o = gpu.upload(&o).unwrap();
            let mut out = gpu.alloc::<u32>(nnz).unwrap();
            gpu.memset_bytes(&mut out, POISON_BYTE).unwrap();
            p.run_checked(&d_o, &mut out).unwrap();
            let want = serial::ptr2idx(&o);
            assert!(gpu.download(&out).unwrap() == want, "{kind} m={m} nnz={nnz}");
            // The same offsets as u64 (a row pointer past u32::MAX positions takes this path).
            let o64: Vec<u64> = o.iter().map(|&x| x as u64).collect();
            assert_eq!(serial::ptr2idx(&o64), want, "twin u64 {kind} m={m} nnz={nnz}");
            gpu.memset_bytes(&mut out, POISON_BYTE).unwrap();
            p.run_checked(&gpu.upload(&o64).unwrap(), &mut out).unwrap();
            assert!(gpu.download(&out).unwrap() == want, "u64 {kind} m={m} nnz={nnz}");
        }
    }
});

gpu_test!(fn ptr2idx_checked_rejects_bad_offsets(gpu) {
    let mut p = Ptr2Idx::new(gpu).unwrap();
    let cases: [(&[u32], usize, u64); 5] = [(&[0, 5, 3, 6], 6, 2), (&[1, 2, 3], 3, 0), (&[0, 2, 4], 5, 2), (&[0, 2, 4], 3, 2), (&[0, 7, 1, 0], 0, 2)];
    for (o, nnz, index) in cases {
        assert!(matches!(serial::validate(o, nnz as u64), Err(Error::InvalidOffsets { index: i, .. }) if i == index), "twin {o:?}");
    }
    for (o, nnz, index) in cases {
        let d_o = gpu.upload(o).unwrap();
        let mut out = gpu.alloc::<u32>(nnz).unwrap();
        let e = p.run_checked(&d_o, &mut out).unwrap_err();
        assert!(matches!(e, Error::InvalidOffsets { index: i, .. } if i == index), "{o:?} nnz={nnz}: {e}");
    }
    for (o, nnz, index) in cases {
        let o64: Vec<u64> = o.iter().map(|&x| x as u64).collect();
        let e = p.run_checked(&gpu.upload(&o64).unwrap(), &mut gpu.alloc::<u32>(nnz).unwrap()).unwrap_err();
        assert!(matches!(e, Error::InvalidOffsets { index: i, .. } if i == index), "u64 {o:?} nnz={nnz}: {e}");
    }
    let empty = gpu.alloc::<u32>(0).unwrap();
    let mut out = gpu.alloc::<u32>(0).unwrap();
    assert!(matches!(p.run(&empty, &mut out), Err(Error::EmptyOffsets)));
    // Unchecked on garbage offsets: unspecified rows, but no fault (memcheck watches this one).
    let junk: Vec<u32> = (0..10_000).map(|_| rand::random::<u32>() % 50_000).collect();
    let d_o = gpu.upload(&junk).unwrap();
    let mut out = gpu.alloc::<u32>(50_000).unwrap();
    p.run(&d_o, &mut out).unwrap();
    gpu.synchronize().unwrap();
});

fn _assert_gpu(_: &Gpu) {}
