//! gpu-radix against its serial twin: keys alone, with 1-, 2-, 4-, 8- and 16-byte values, in
//! double buffers with two payloads (in place, from sources, mixed, single buffers, a lent
//! status); end bits 0, 1, 7, 9, 17, 24, 31, 32 (one pass and several, even and odd counts);
//! every digit width; awkward sizes (tile ± 1, 2^k ± 1, ...) up to 10^7; key distributions that
//! show stability (few distinct, all equal) and high bits that must not count; poisoned outputs;
//! lent scratch, reported = allocated, and the errors.
use gpu_radix::{serial, DoubleBuffer, Error, RadixSort, Sort, NT, NV, VT, VT_KEYS8};
use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{DeviceView, DeviceViewMut, Scratch};
use gpu_testkit::{awkward_sizes, gpu_test, max_len, rng, sort_keys, Gpu, POISON_BYTE, SORT_KEY_DISTS};
use rand::Rng;

fn iota(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

gpu_test!(fn keys_and_pairs_match_the_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut sort = RadixSort::new(gpu).unwrap();
    let mut sizes = awkward_sizes(NV as usize, 22, &mut r);
    sizes.push(10_000_000);
    let ends = [0u32, 1, 7, 9, 17, 24, 31, 32];
    for (i, &n) in sizes.iter().enumerate().filter(|(_, &n)| n <= max_len()) {
        let dist = SORT_KEY_DISTS[i % SORT_KEY_DISTS.len()];
        let end = ends[i % ends.len()];
        // High bits above `end` set at random: they travel with the key and must not count.
        let k: Vec<u32> = sort_keys(dist, n, &mut r).into_iter().map(|x| x ^ (r.random::<u32>() & !serial::mask(end))).collect();
        let mut dk = gpu.upload(&k).unwrap();
        sort.sort_keys(&mut dk, end).unwrap();
        assert!(gpu.download(&dk).unwrap() == serial::sort_keys(&k, end), "keys n={n} {dist} end={end}");
        let v32 = iota(n);
        let (mut dk, mut dv) = (gpu.upload(&k).unwrap(), gpu.upload(&v32).unwrap());
        sort.sort_pairs(&mut dk, &mut dv, end).unwrap();
        let (ek, ev) = serial::sort_pairs(&k, &v32, end);
        assert!(gpu.download(&dk).unwrap() == ek && gpu.download(&dv).unwrap() == ev, "pairs u32 n={n} {dist} end={end}");
        let v64: Vec<u64> = (0..n as u64).map(|x| x.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        let (mut dk, mut dv) = (gpu.upload(&k).unwrap(), gpu.upload(&v64).unwrap());
        sort.sort_pairs(&mut dk, &mut dv, end).unwrap();
        let (ek, ev) = serial::sort_pairs(&k, &v64, end);
        assert!(gpu.download(&dk).unwrap() == ek && gpu.download(&dv).unwrap() == ev, "pairs u64 n={n} {dist} end={end}");
        // 1- and 2-byte values.
        let v8: Vec<u8> = (0..n).map(|x| (x * 37 % 251) as u8).collect();
        let (mut dk, mut dv) = (gpu.upload(&k).unwrap(), gpu.upload(&v8).unwrap());
        sort.sort_pairs(&mut dk, &mut dv, end).unwrap();
        let (ek, ev) = serial::sort_pairs(&k, &v8, end);
        assert!(gpu.download(&dk).unwrap() == ek && gpu.download(&dv).unwrap() == ev, "pairs u8 n={n} {dist} end={end}");
        let v16: Vec<u16> = (0..n).map(|x| (x * 40503 % 65521) as u16).collect();
        let (mut dk, mut dv) = (gpu.upload(&k).unwrap(), gpu.upload(&v16).unwrap());
        sort.sort_pairs(&mut dk, &mut dv, end).unwrap();
        let (ek, ev) = serial::sort_pairs(&k, &v16, end);
        assert!(gpu.download(&dk).unwrap() == ek && gpu.download(&dv).unwrap() == ev, "pairs u16 n={n} {dist} end={end}");
        // 16-byte values (two 8-byte halves through the stage), distinct in both halves.
        let v128: Vec<u128> = (0..n as u128).map(|x| (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) << 64) | (x ^ 0xA5A5)).collect();
        let (mut dk, mut dv) = (gpu.upload(&k).unwrap(), gpu.upload(&v128).unwrap());
        sort.sort_pairs(&mut dk, &mut dv, end).unwrap();
        let (ek, ev) = serial::sort_pairs(&k, &v128, end);
        assert!(gpu.download(&dk).unwrap() == ek && gpu.download(&dv).unwrap() == ev, "pairs u128 n={n} {dist} end={end}");
    }
});

// The 8-bit passes of keys alone run their own tile shape (`VT_KEYS8` keys a thread), u32 pairs
// the generic one (`VT`): sizes around each tile, 24- and 32-bit keys, every distribution,
// into poisoned outputs.
gpu_test!(fn eight_bit_tiles_of_keys_and_pairs_match_the_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut sort = RadixSort::new(gpu).unwrap();
    let (tk, tp) = ((NT * VT_KEYS8) as usize, (NT * VT) as usize);
    let mut sizes = vec![1, 33, tk - 1, tk, tk + 1, 2 * tk + 1, tp - 1, tp, tp + 1, 3 * tp - 1, 1 << 20, (1 << 20) + 1];
    sizes.push(r.random_range(1..1usize << 22));
    for (i, &n) in sizes.iter().enumerate().filter(|(_, &n)| n <= max_len()) {
        let dist = SORT_KEY_DISTS[i % SORT_KEY_DISTS.len()];
        for end in [24u32, 32] {
            let k: Vec<u32> = sort_keys(dist, n, &mut r).into_iter().map(|x| x ^ (r.random::<u32>() & !serial::mask(end))).collect();
            let v = iota(n);
            let (ki, vi) = (gpu.upload(&k).unwrap(), gpu.upload(&v).unwrap());
            let (mut k0, mut k1) = (poisoned::<u32>(gpu, n), poisoned::<u32>(gpu, n));
            let (mut v0, mut v1) = (poisoned::<u32>(gpu, n), poisoned::<u32>(gpu, n));
            let mut kb = DoubleBuffer::new(DeviceViewMut::of(&mut k0), DeviceViewMut::of(&mut k1)).unwrap();
            sort.sort(Sort::<u32>::keys_from(DeviceView::of(&ki), &mut kb).bits(0..end)).unwrap();
            assert!(gpu.download(&kb.current()).unwrap() == serial::sort_keys(&k, end), "keys n={n} {dist} end={end}");
            let mut vb = DoubleBuffer::new(DeviceViewMut::of(&mut v0), DeviceViewMut::of(&mut v1)).unwrap();
            sort.sort(Sort::keys_from(DeviceView::of(&ki), &mut kb).bits(0..end).first_from(DeviceView::of(&vi), &mut vb)).unwrap();
            let (ek, ev) = serial::sort_pairs(&k, &v, end);
            assert!(gpu.download(&kb.current()).unwrap() == ek && gpu.download(&vb.current()).unwrap() == ev, "pairs n={n} {dist} end={end}");
        }
    }
});

/// `n` poisoned items on the device.
fn poisoned<T: gpu_runtime::AnyBits>(gpu: &Gpu, n: usize) -> CudaSlice<T> {
    let mut b = gpu.alloc::<T>(n).unwrap();
    gpu.memset_bytes(&mut b, POISON_BYTE).unwrap();
    b
}

fn bits_eq(a: &[f64], b: &[f64]) -> bool {
    a.iter().map(|x| x.to_bits()).eq(b.iter().map(|x| x.to_bits()))
}

gpu_test!(fn every_digit_width_from_sources_and_in_place(gpu) {
    let (mut r, _seed) = rng();
    let mut sort = RadixSort::new(gpu).unwrap();
    for bits in 1..=gpu_radix::MAX_BITS {
        sort.set_max_digit_bits(Some(bits));
        for &(n, end) in &[(1usize, 5u32), (NV as usize - 1, 20), (NV as usize + 1, 13), (100_003, 32), (300_000, 17), (5_000, 0)] {
            if n > max_len() {
                continue;
            }
            let (passes, _) = sort.passes(0..end);
            let what = format!("digit bits={bits} n={n} end={end} passes={passes}");
            let k: Vec<u32> = (0..n).map(|_| r.random::<u32>() & serial::mask(end)).collect();
            let first: Vec<u32> = (0..n).map(|_| r.random()).collect();
            let second: Vec<f64> = (0..n).map(|_| r.random()).collect();
            let (ek, ef, es) = serial::sort_triples(&k, &first, &second, end);
            // Every array from a source (left as it is) into poisoned buffers: the result lands
            // in the current halves, the selectors stay.
            let (keys_in, first_in, second_in) = (gpu.upload(&k).unwrap(), gpu.upload(&first).unwrap(), gpu.upload(&second).unwrap());
            let (mut k0, mut k1) = (poisoned::<u32>(gpu, n), poisoned::<u32>(gpu, n));
            let (mut f0, mut f1) = (poisoned::<u32>(gpu, n), poisoned::<u32>(gpu, n));
            let (mut s0, mut s1) = (poisoned::<f64>(gpu, n), poisoned::<f64>(gpu, n));
            let mut kb = DoubleBuffer::new(DeviceViewMut::of(&mut k0), DeviceViewMut::of(&mut k1)).unwrap();
            let mut fb = DoubleBuffer::new(DeviceViewMut::of(&mut f0), DeviceViewMut::of(&mut f1)).unwrap();
            let mut sb = DoubleBuffer::new(DeviceViewMut::of(&mut s0), DeviceViewMut::of(&mut s1)).unwrap();
            let bytes = sort.workspace_bytes(n as u64, 0..end);
            let mut mine = gpu.alloc::<u8>(bytes.max(1) as usize).unwrap();
            let job = Sort::keys_from(DeviceView::of(&keys_in), &mut kb)
                .first_from(DeviceView::of(&first_in), &mut fb)
                .second_from(DeviceView::of(&second_in), &mut sb)
                .bits(0..end);
            sort.sort_with(job, &mut Scratch::new(&mut mine, gpu.stream())).unwrap();
            assert_eq!((kb.selector(), fb.selector(), sb.selector()), (0, 0, 0), "{what}");
            assert!(gpu.download(&kb.current()).unwrap() == ek, "keys from sources {what}");
            assert!(gpu.download(&fb.current()).unwrap() == ef, "first from sources {what}");
            assert!(bits_eq(&gpu.download(&sb.current()).unwrap(), &es), "second from sources {what}");
            assert!(gpu.download(&keys_in).unwrap() == k && gpu.download(&first_in).unwrap() == first, "sources kept {what}");
            drop((kb, fb, sb));
            // Every array in place: the result in the current halves, which are the other ones
            // after an odd pass count.
            let (mut k0, mut f0, mut s0) = (gpu.upload(&k).unwrap(), gpu.upload(&first).unwrap(), gpu.upload(&second).unwrap());
            let mut kb = DoubleBuffer::new(DeviceViewMut::of(&mut k0), DeviceViewMut::of(&mut k1)).unwrap();
            let mut fb = DoubleBuffer::new(DeviceViewMut::of(&mut f0), DeviceViewMut::of(&mut f1)).unwrap();
            let mut sb = DoubleBuffer::new(DeviceViewMut::of(&mut s0), DeviceViewMut::of(&mut s1)).unwrap();
            let job = Sort::keys(&mut kb).first(&mut fb).second(&mut sb).bits(0..end);
            sort.sort_with(job, &mut Scratch::new(&mut mine, gpu.stream())).unwrap();
            let flipped = (passes % 2) as usize;
            assert_eq!((kb.selector(), fb.selector(), sb.selector()), (flipped, flipped, flipped), "{what}");
            assert!(gpu.download(&kb.current()).unwrap() == ek, "keys in place {what}");
            assert!(gpu.download(&fb.current()).unwrap() == ef, "first in place {what}");
            assert!(bits_eq(&gpu.download(&sb.current()).unwrap(), &es), "second in place {what}");
        }
    }
    assert_eq!(sort.allocated_bytes(), 0, "lent scratch only");
});

gpu_test!(fn mixed_arrays_single_buffers_and_lent_status(gpu) {
    let (mut r, _seed) = rng();
    let mut sort = RadixSort::new(gpu).unwrap();
    // RadixTrans's shape: keys and values from sources, the rows in place, starting in either
    // half; 1 to 6 passes (even and odd), sizes around a tile.
    for (c, &(n, end, bits)) in [(1usize, 5u32, 8u32), (NV as usize - 1, 17, 8), (NV as usize + 1, 17, 9), (100_003, 24, 8), (70_001, 32, 8), (50_000, 30, 5), (3, 0, 8), (NV as usize * 3 + 1, 8, 8)].iter().enumerate() {
        if n > max_len() {
            continue;
        }
        sort.set_max_digit_bits(Some(bits));
        let passes = sort.passes(0..end).0;
        let what = format!("case {c}: n={n} end={end} bits={bits} passes={passes}");
        let k: Vec<u32> = (0..n).map(|_| r.random::<u32>() & serial::mask(end)).collect();
        let first: Vec<u32> = (0..n).map(|_| r.random()).collect();
        let second: Vec<f32> = (0..n).map(|_| r.random()).collect();
        let (ek, ef, es) = serial::sort_triples(&k, &first, &second, end);
        let (keys_in, second_in) = (gpu.upload(&k).unwrap(), gpu.upload(&second).unwrap());
        let (mut k0, mut k1, mut s0, mut s1) = (poisoned::<u32>(gpu, n), poisoned::<u32>(gpu, n), poisoned::<f32>(gpu, n), poisoned::<f32>(gpu, n));
        let (bytes, st) = (sort.workspace_bytes(n as u64, 0..end), sort.status_bytes(n as u64, 0..end));
        let mut mine = gpu.alloc::<u8>(bytes.max(1) as usize).unwrap();
        let mut status_buf = gpu.alloc::<u32>((st as usize).div_ceil(4).max(1)).unwrap();
        for start in [0usize, 1] {
            for lend in [false, true] {
                // The rows in half `start` of their pair (the other poisoned).
                let (mut f0, mut f1) = (poisoned::<u32>(gpu, n), poisoned::<u32>(gpu, n));
                gpu.stream().memcpy_htod(&first, if start == 0 { &mut f0 } else { &mut f1 }).unwrap();
                let (a, b) = if start == 0 { (&mut f0, &mut f1) } else { (&mut f1, &mut f0) };
                let mut fb = DoubleBuffer::new(DeviceViewMut::of(a), DeviceViewMut::of(b)).unwrap();
                let mut kb = DoubleBuffer::new(DeviceViewMut::of(&mut k0), DeviceViewMut::of(&mut k1)).unwrap();
                let mut sb = DoubleBuffer::new(DeviceViewMut::of(&mut s0), DeviceViewMut::of(&mut s1)).unwrap();
                let mut job = Sort::keys_from(DeviceView::of(&keys_in), &mut kb).first(&mut fb).second_from(DeviceView::of(&second_in), &mut sb).bits(0..end);
                let scratch_bytes = if lend {
                    job = job.lent_status(Scratch::of(&mut status_buf, gpu.stream()));
                    bytes - st
                } else {
                    bytes
                };
                let mut s = Scratch::new(&mut mine, gpu.stream());
                let mut lean = s.sub(scratch_bytes).unwrap();
                sort.sort_with(job, &mut lean).unwrap();
                let w = format!("{what} rows in half {start} lent status {lend}");
                assert_eq!(fb.selector(), (passes % 2) as usize, "{w}");
                assert!(gpu.download(&kb.current()).unwrap() == ek, "keys {w}");
                assert!(gpu.download(&fb.current()).unwrap() == ef, "rows {w}");
                assert!(gpu.download(&sb.current()).unwrap().iter().map(|x| x.to_bits()).eq(es.iter().map(|x| x.to_bits())), "values {w}");
            }
        }
        // One pass from sources writes only the current halves: single buffers serve; more
        // passes (or an array in place) are refused.
        let mut kb = DoubleBuffer::single(DeviceViewMut::of(&mut k0));
        let mut sb = DoubleBuffer::single(DeviceViewMut::of(&mut s0));
        let job = Sort::keys_from(DeviceView::of(&keys_in), &mut kb).second_from(DeviceView::of(&second_in), &mut sb).bits(0..end);
        let res = sort.sort_with(job, &mut Scratch::new(&mut mine, gpu.stream()));
        if passes == 1 {
            res.unwrap();
            assert!(gpu.download(&kb.current()).unwrap() == ek, "keys, single {what}");
        } else {
            assert!(matches!(res, Err(Error::NoAlternate { what: "keys", .. })), "{what}: {res:?}");
        }
        if n > 0 {
            let mut kb = DoubleBuffer::single(DeviceViewMut::of(&mut k0));
            let res = sort.sort_with(Sort::keys(&mut kb).bits(0..end), &mut Scratch::new(&mut mine, gpu.stream()));
            assert!(matches!(res, Err(Error::NoAlternate { .. })), "{what}: in place, single: {res:?}");
        }
        // A status a word short, and a scratch a byte short, are refused.
        if st > 4 {
            let mut short = gpu.alloc::<u32>((st as usize - 1) / 4).unwrap();
            let mut kb = DoubleBuffer::new(DeviceViewMut::of(&mut k0), DeviceViewMut::of(&mut k1)).unwrap();
            let job = Sort::keys_from(DeviceView::of(&keys_in), &mut kb).bits(0..end).lent_status(Scratch::of(&mut short, gpu.stream()));
            let res = sort.sort_with(job, &mut Scratch::new(&mut mine, gpu.stream()));
            assert!(matches!(res, Err(Error::Runtime(gpu_runtime::Error::ScratchTooSmall { .. }))), "{what}: short status {res:?}");
        }
        if bytes > 0 {
            let mut kb = DoubleBuffer::new(DeviceViewMut::of(&mut k0), DeviceViewMut::of(&mut k1)).unwrap();
            // A buffer a byte short (a sub-scratch would round up to the carving alignment).
            let mut short = gpu.alloc::<u8>(bytes as usize - 1).unwrap();
            let res = sort.sort_with(Sort::keys(&mut kb).bits(0..end), &mut Scratch::new(&mut short, gpu.stream()));
            assert!(matches!(res, Err(Error::Runtime(gpu_runtime::Error::ScratchTooSmall { .. }))), "{what}: short scratch {res:?}");
        }
    }
    assert_eq!(sort.allocated_bytes(), 0, "lent scratch only");
});

gpu_test!(fn one_pass_partitions_by_any_digit(gpu) {
    let (mut r, _seed) = rng();
    let mut sort = RadixSort::new(gpu).unwrap();
    sort.set_max_digit_bits(Some(gpu_radix::MAX_BITS));
    for &(n, shift, bits) in &[(0usize, 0u32, 3u32), (1, 5, 9), (NV as usize - 1, 11, 9), (NV as usize, 0, 1), (NV as usize + 1, 20, 6), (100_003, 23, 9), (300_000, 8, 0), (1_000_001, 14, 7)] {
        if n > max_len() {
            continue;
        }
        assert_eq!(sort.passes(shift..shift + bits).0, 1);
        let k: Vec<u32> = (0..n).map(|_| r.random::<u32>()).collect();
        let first: Vec<u32> = (0..n).map(|_| r.random()).collect();
        let second: Vec<f32> = (0..n).map(|_| r.random()).collect();
        let (keys_in, first_in, second_in) = (gpu.upload(&k).unwrap(), gpu.upload(&first).unwrap(), gpu.upload(&second).unwrap());
        let (mut keys_out, mut first_out, mut second_out) = (poisoned::<u32>(gpu, n), poisoned::<u32>(gpu, n), poisoned::<f32>(gpu, n));
        let (mut kb, mut fb, mut sb) =
            (DoubleBuffer::single(DeviceViewMut::of(&mut keys_out)), DoubleBuffer::single(DeviceViewMut::of(&mut first_out)), DoubleBuffer::single(DeviceViewMut::of(&mut second_out)));
        let job = Sort::keys_from(DeviceView::of(&keys_in), &mut kb)
            .first_from(DeviceView::of(&first_in), &mut fb)
            .second_from(DeviceView::of(&second_in), &mut sb)
            .bits(shift..shift + bits);
        sort.sort(job).unwrap();
        let (ek, ef, es) = serial::partition_triples(&k, &first, &second, shift, bits);
        assert!(gpu.download(&keys_out).unwrap() == ek, "keys n={n} shift={shift} bits={bits}");
        assert!(gpu.download(&first_out).unwrap() == ef, "first n={n} shift={shift} bits={bits}");
        assert!(gpu.download(&second_out).unwrap().iter().map(|x| x.to_bits()).eq(es.iter().map(|x| x.to_bits())), "second n={n}");
        assert!(gpu.download(&first_in).unwrap() == first, "inputs are left as they were");
        // The plan's own scratch (grown, never shrunk) holds what it reports for this sort.
        assert!(sort.allocated_bytes() >= sort.workspace_bytes(n as u64, shift..shift + bits));
    }
    let mut o = gpu.alloc::<u32>(10).unwrap();
    let mut kb = DoubleBuffer::single(DeviceViewMut::of(&mut o));
    let reversed = std::ops::Range { start: 5, end: 3 };
    assert!(matches!(sort.sort(Sort::keys(&mut kb).bits(reversed)), Err(Error::InvalidBits { begin: 5, end: 3 })));
    assert!(matches!(sort.sort(Sort::keys(&mut kb).bits(0..33)), Err(Error::TooLarge { .. })));
});

gpu_test!(fn reported_workspace_is_allocated_and_errors_are_values(gpu) {
    let mut sort = RadixSort::new(gpu).unwrap();
    let n = 123_457usize;
    let (mut k, mut v) = (gpu.upload(&iota(n)).unwrap(), gpu.upload(&iota(n)).unwrap());
    let mut alt = gpu.alloc::<u32>(n).unwrap();
    let mut kb = DoubleBuffer::new(DeviceViewMut::of(&mut k), DeviceViewMut::of(&mut alt)).unwrap();
    sort.sort(Sort::keys(&mut kb).bits(0..17)).unwrap();
    assert_eq!(sort.allocated_bytes(), sort.workspace_bytes(n as u64, 0..17), "the own scratch is what the plan reports");
    drop(kb);
    let mut short = gpu.alloc::<u32>(n - 1).unwrap();
    assert!(matches!(sort.sort_pairs(&mut k, &mut short, 17), Err(Error::LengthMismatch { what: "values", .. })));
    assert!(matches!(DoubleBuffer::new(DeviceViewMut::of(&mut k), DeviceViewMut::of(&mut short)), Err(Error::LengthMismatch { .. })));
    let mut kb = DoubleBuffer::new(DeviceViewMut::of(&mut k), DeviceViewMut::of(&mut alt)).unwrap();
    let (mut s0, mut s1) = (gpu.alloc::<u32>(n - 1).unwrap(), gpu.alloc::<u32>(n - 1).unwrap());
    let mut sb = DoubleBuffer::new(DeviceViewMut::of(&mut s0), DeviceViewMut::of(&mut s1)).unwrap();
    assert!(matches!(sort.sort(Sort::keys(&mut kb).second(&mut sb)), Err(Error::LengthMismatch { what: "second payload", .. })));
    let src = gpu.alloc::<u32>(n + 1).unwrap();
    assert!(matches!(sort.sort(Sort::keys_from(DeviceView::of(&src), &mut kb)), Err(Error::LengthMismatch { what: "keys", .. })));
    // Every payload width is supported (1, 2, 4, 8, 16 bytes: each `Payload` type).
    let mut bytes = gpu.alloc::<u8>(n).unwrap();
    sort.sort_pairs(&mut v, &mut bytes, 17).unwrap();
    let mut tiny = gpu.alloc::<u8>(64).unwrap();
    let mut s = Scratch::new(&mut tiny, gpu.stream());
    assert!(matches!(sort.sort_with(Sort::keys(&mut kb), &mut s), Err(Error::Runtime(gpu_runtime::Error::ScratchTooSmall { .. }))));
    let mut empty = gpu.alloc::<u32>(0).unwrap();
    sort.sort_keys(&mut empty, 32).unwrap();
    gpu.synchronize().unwrap();
});

#[test]
fn passes_and_twin() {
    assert_eq!(gpu_radix::passes(32, 7), (5, 7));
    assert_eq!(gpu_radix::passes(24, 7), (4, 6));
    let (k, v) = serial::sort_pairs(&[5u32, 0x105, 1], &[0u32, 1, 2], 8);
    assert_eq!((k, v), (vec![1, 5, 0x105], vec![2, 0, 1]));
    assert_eq!(serial::sort_keys(&[3, 1, 2], 0), vec![3, 1, 2], "0 bits: stable, unchanged");
}

fn _use(_: &Gpu) {}
