//! gpu-radix against its serial twin: keys alone, with 1-, 2-, 4-, 8- and 16-byte values, out of place with two
//! payloads; end bits 0, 1, 7, 9, 17, 24, 31, 32 (one pass and several, even and odd counts);
//! every digit width; awkward sizes (tile ± 1, 2^k ± 1, ...) up to 10^7; key distributions that
//! show stability (few distinct, all equal) and high bits that must not count; poisoned outputs;
//! lent scratch, reported = allocated, and the errors.
use gpu_radix::{serial, Carry, Error, RadixSort, NV};
use gpu_runtime::Scratch;
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

gpu_test!(fn every_digit_width_and_out_of_place_with_two_payloads(gpu) {
    let (mut r, _seed) = rng();
    let mut sort = RadixSort::new(gpu).unwrap();
    for bits in 1..=gpu_radix::MAX_BITS {
        sort.set_max_digit_bits(Some(bits));
        for &(n, end) in &[(1usize, 5u32), (NV as usize - 1, 20), (NV as usize + 1, 13), (100_003, 32), (300_000, 17)] {
            if n > max_len() {
                continue;
            }
            let k: Vec<u32> = (0..n).map(|_| r.random::<u32>() & serial::mask(end)).collect();
            let first: Vec<u32> = (0..n).map(|_| r.random()).collect();
            let second: Vec<f64> = (0..n).map(|_| r.random()).collect();
            let keys_in = gpu.upload(&k).unwrap();
            let mut first_in = gpu.upload(&first).unwrap();
            let second_in = gpu.upload(&second).unwrap();
            let mut keys_out = gpu.alloc::<u32>(n).unwrap();
            let mut first_out = gpu.alloc::<u32>(n).unwrap();
            let mut second_out = gpu.alloc::<f64>(n).unwrap();
            for b in [&mut keys_out, &mut first_out] {
                gpu.memset_bytes(b, POISON_BYTE).unwrap();
            }
            gpu.memset_bytes(&mut second_out, POISON_BYTE).unwrap();
            let bytes = RadixSort::into_workspace_bytes(n as u64, Carry { first: true, second_bytes: 8 });
            let mut mine = gpu.alloc::<u8>(bytes as usize).unwrap();
            let mut s = Scratch::new(&mut mine, gpu.stream());
            sort.sort_into_with(&keys_in, &mut keys_out, Some((&mut first_in, &mut first_out)), Some((&second_in, &mut second_out)), end, &mut s).unwrap();
            let (ek, ef, es) = serial::sort_triples(&k, &first, &second, end);
            assert!(gpu.download(&keys_out).unwrap() == ek, "keys bits={bits} n={n} end={end}");
            assert!(gpu.download(&first_out).unwrap() == ef, "first bits={bits} n={n} end={end}");
            assert!(gpu.download(&second_out).unwrap().iter().map(|x| x.to_bits()).eq(es.iter().map(|x| x.to_bits())), "second bits={bits} n={n} end={end}");
            assert_eq!(gpu.download(&keys_in).unwrap(), k, "the keys' input is left as it was");
        }
    }
    assert_eq!(sort.allocated_bytes(), 0, "lent scratch only");
});

gpu_test!(fn outputs_as_ping_pong_match_the_twin(gpu) {
    let (mut r, _seed) = rng();
    let mut sort = RadixSort::new(gpu).unwrap();
    // 1 to 6 passes (even and odd), sizes around a tile, first payload separate, in place (even
    // counts) and starting in the scratch (odd counts).
    for (c, &(n, end, bits)) in [(1usize, 5u32, 8u32), (NV as usize - 1, 17, 8), (NV as usize + 1, 17, 9), (100_003, 24, 8), (70_001, 32, 8), (50_000, 30, 5), (3, 0, 8)].iter().enumerate() {
        if n > max_len() {
            continue;
        }
        sort.set_max_digit_bits(Some(bits));
        let passes = sort.passes(end).0;
        let k: Vec<u32> = (0..n).map(|_| r.random::<u32>() & serial::mask(end)).collect();
        let first: Vec<u32> = (0..n).map(|_| r.random()).collect();
        let second: Vec<f32> = (0..n).map(|_| r.random()).collect();
        let (ek, ef, es) = serial::sort_triples(&k, &first, &second, end);
        let (keys_in, first_in, second_in) = (gpu.upload(&k).unwrap(), gpu.upload(&first).unwrap(), gpu.upload(&second).unwrap());
        let (mut keys_out, mut first_out, mut second_out) = (gpu.alloc::<u32>(n).unwrap(), gpu.alloc::<u32>(n).unwrap(), gpu.alloc::<f32>(n).unwrap());
        for b in [&mut keys_out, &mut first_out] {
            gpu.memset_bytes(b, POISON_BYTE).unwrap();
        }
        gpu.memset_bytes(&mut second_out, POISON_BYTE).unwrap();
        // Exactly the scratch sized for this key width (status words for its digits only).
        let bytes = sort.outputs_workspace_bytes_for(n as u64, Carry { first: true, second_bytes: 4 }, end);
        assert!(bytes <= RadixSort::outputs_workspace_bytes(n as u64, Carry { first: true, second_bytes: 4 }));
        assert!(bytes < RadixSort::into_workspace_bytes(n as u64, Carry { first: true, second_bytes: 4 }), "one copy fewer");
        let mut mine = gpu.alloc::<u8>(bytes as usize).unwrap();
        let what = format!("case {c}: n={n} end={end} bits={bits} passes={passes}");
        sort.sort_into_outputs_with(&keys_in, &mut keys_out, Some((&first_in, &mut first_out)), Some((&second_in, &mut second_out)), end, &mut Scratch::new(&mut mine, gpu.stream())).unwrap();
        assert!(gpu.download(&keys_out).unwrap() == ek, "keys {what}");
        assert!(gpu.download(&first_out).unwrap() == ef, "first {what}");
        assert!(gpu.download(&second_out).unwrap().iter().map(|x| x.to_bits()).eq(es.iter().map(|x| x.to_bits())), "second {what}");
        assert_eq!(gpu.download(&first_in).unwrap(), first, "inputs are kept {what}");
        // The first payload in place: an even pass count only.
        let mut in_place = gpu.upload(&first).unwrap();
        gpu.memset_bytes(&mut keys_out, POISON_BYTE).unwrap();
        let res = sort.sort_into_outputs_first_in_place_with(&keys_in, &mut keys_out, &mut in_place, Some((&second_in, &mut second_out)), end, &mut Scratch::new(&mut mine, gpu.stream()), None);
        if passes % 2 == 0 {
            res.unwrap();
            assert!(gpu.download(&in_place).unwrap() == ef, "first in place {what}");
            assert!(gpu.download(&keys_out).unwrap() == ek, "keys, first in place {what}");
        } else {
            assert!(matches!(res, Err(Error::OddPasses { .. })), "{what}: {res:?}");
        }
        // The first payload starting in the scratch: an odd pass count only.
        let mut s = Scratch::new(&mut mine, gpu.stream());
        gpu.stream().memcpy_htod(&first, &mut RadixSort::outputs_first_slice(&mut s, n).unwrap()).unwrap();
        gpu.memset_bytes(&mut keys_out, POISON_BYTE).unwrap();
        gpu.memset_bytes(&mut first_out, POISON_BYTE).unwrap();
        let res = sort.sort_into_outputs_first_in_scratch_with(&keys_in, &mut keys_out, &mut first_out, Some((&second_in, &mut second_out)), end, &mut s, None);
        if passes % 2 == 1 {
            res.unwrap();
            assert!(gpu.download(&first_out).unwrap() == ef, "first from the scratch {what}");
            assert!(gpu.download(&keys_out).unwrap() == ek, "keys, first from the scratch {what}");
        } else {
            assert!(matches!(res, Err(Error::EvenPasses { .. })), "{what}: {res:?}");
        }
        // The look-back status lent apart (RadixTrans lends its column pointer): the scratch
        // without it, the status region exactly its size (a byte less is refused).
        let carry = Carry { first: true, second_bytes: 4 };
        let (lean, st) = (sort.outputs_workspace_bytes_lent_status(n as u64, carry, end), sort.status_bytes_for(n as u64, end));
        assert_eq!(lean + gpu_runtime::scratch::aligned(st), bytes, "{what}: lean + status = full");
        let mut lean_buf = gpu.alloc::<u8>(lean.max(1) as usize).unwrap();
        let mut status_buf = gpu.alloc::<u32>((st as usize).div_ceil(4).max(1)).unwrap();
        let mut s = Scratch::new(&mut lean_buf, gpu.stream());
        gpu.memset_bytes(&mut keys_out, POISON_BYTE).unwrap();
        gpu.memset_bytes(&mut first_out, POISON_BYTE).unwrap();
        let mut in_place = gpu.upload(&first).unwrap();
        let res = if passes % 2 == 1 {
            gpu.stream().memcpy_htod(&first, &mut RadixSort::outputs_first_slice(&mut s, n).unwrap()).unwrap();
            sort.sort_into_outputs_first_in_scratch_with(&keys_in, &mut keys_out, &mut first_out, Some((&second_in, &mut second_out)), end, &mut s, Some(&mut Scratch::of(&mut status_buf, gpu.stream())))
        } else {
            sort.sort_into_outputs_first_in_place_with(&keys_in, &mut keys_out, &mut in_place, Some((&second_in, &mut second_out)), end, &mut s, Some(&mut Scratch::of(&mut status_buf, gpu.stream())))
        };
        res.unwrap();
        let got_first = if passes % 2 == 1 { gpu.download(&first_out).unwrap() } else { gpu.download(&in_place).unwrap() };
        assert!(got_first == ef && gpu.download(&keys_out).unwrap() == ek, "lent status {what}");
        if st > 4 {
            let mut short = gpu.alloc::<u32>((st as usize - 1) / 4).unwrap();
            let mut s = Scratch::new(&mut lean_buf, gpu.stream());
            let mut short = Scratch::of(&mut short, gpu.stream());
            let res = if passes % 2 == 1 {
                sort.sort_into_outputs_first_in_scratch_with(&keys_in, &mut keys_out, &mut first_out, Some((&second_in, &mut second_out)), end, &mut s, Some(&mut short))
            } else {
                sort.sort_into_outputs_first_in_place_with(&keys_in, &mut keys_out, &mut in_place, Some((&second_in, &mut second_out)), end, &mut s, Some(&mut short))
            };
            assert!(matches!(res, Err(Error::Runtime(gpu_runtime::Error::ScratchTooSmall { .. }))), "{what}: short status {res:?}");
        }
    }
    assert_eq!(sort.allocated_bytes(), 0, "lent scratch only");
});

gpu_test!(fn one_pass_partitions_by_any_digit(gpu) {
    let (mut r, _seed) = rng();
    let mut sort = RadixSort::new(gpu).unwrap();
    for &(n, shift, bits) in &[(0usize, 0u32, 3u32), (1, 5, 9), (NV as usize - 1, 11, 9), (NV as usize, 0, 1), (NV as usize + 1, 20, 6), (100_003, 23, 9), (300_000, 8, 0), (1_000_001, 14, 7)] {
        if n > max_len() {
            continue;
        }
        let k: Vec<u32> = (0..n).map(|_| r.random::<u32>()).collect();
        let first: Vec<u32> = (0..n).map(|_| r.random()).collect();
        let second: Vec<f32> = (0..n).map(|_| r.random()).collect();
        let (keys_in, first_in, second_in) = (gpu.upload(&k).unwrap(), gpu.upload(&first).unwrap(), gpu.upload(&second).unwrap());
        let (mut keys_out, mut first_out, mut second_out) = (gpu.alloc::<u32>(n).unwrap(), gpu.alloc::<u32>(n).unwrap(), gpu.alloc::<f32>(n).unwrap());
        for b in [&mut keys_out, &mut first_out] {
            gpu.memset_bytes(b, POISON_BYTE).unwrap();
        }
        gpu.memset_bytes(&mut second_out, POISON_BYTE).unwrap();
        let mut mine = gpu.alloc::<u8>(RadixSort::partition_workspace_bytes(n as u64).max(1) as usize).unwrap();
        let mut s = Scratch::new(&mut mine, gpu.stream());
        sort.partition_into_with(&keys_in, &mut keys_out, Some((&first_in, &mut first_out)), Some((&second_in, &mut second_out)), shift, bits, &mut s).unwrap();
        let (ek, ef, es) = serial::partition_triples(&k, &first, &second, shift, bits);
        assert!(gpu.download(&keys_out).unwrap() == ek, "keys n={n} shift={shift} bits={bits}");
        assert!(gpu.download(&first_out).unwrap() == ef, "first n={n} shift={shift} bits={bits}");
        assert!(gpu.download(&second_out).unwrap().iter().map(|x| x.to_bits()).eq(es.iter().map(|x| x.to_bits())), "second n={n}");
        assert!(gpu.download(&first_in).unwrap() == first, "inputs are left as they were");
    }
    let (k, mut o) = (gpu.upload(&iota(10)).unwrap(), gpu.alloc::<u32>(10).unwrap());
    let mut mine = gpu.alloc::<u8>(1 << 16).unwrap();
    let mut s = Scratch::new(&mut mine, gpu.stream());
    let none = None::<(&gpu_runtime::cudarc::driver::CudaSlice<u32>, &mut gpu_runtime::cudarc::driver::CudaSlice<u32>)>;
    assert!(matches!(sort.partition_into_with(&k, &mut o, none, None::<(&gpu_runtime::cudarc::driver::CudaSlice<u32>, &mut gpu_runtime::cudarc::driver::CudaSlice<u32>)>, 0, 10, &mut s), Err(Error::TooLarge { .. })));
    assert_eq!(sort.allocated_bytes(), 0, "lent scratch only");
});

gpu_test!(fn reported_workspace_is_allocated_and_errors_are_values(gpu) {
    let mut sort = RadixSort::new(gpu).unwrap();
    let n = 123_457usize;
    let (mut k, mut v) = (gpu.upload(&iota(n)).unwrap(), gpu.upload(&iota(n)).unwrap());
    sort.sort_pairs(&mut k, &mut v, 17).unwrap();
    assert_eq!(sort.allocated_bytes(), RadixSort::workspace_bytes(n as u64, Carry { first: false, second_bytes: 4 }));
    let mut short = gpu.alloc::<u32>(n - 1).unwrap();
    assert!(matches!(sort.sort_pairs(&mut k, &mut short, 17), Err(Error::LengthMismatch { what: "values", .. })));
    // Every payload width is supported now (1, 2, 4, 8, 16 bytes: each `Payload` type).
    let mut bytes = gpu.alloc::<u8>(n).unwrap();
    sort.sort_pairs(&mut k, &mut bytes, 17).unwrap();
    let mut tiny = gpu.alloc::<u8>(64).unwrap();
    let mut s = Scratch::new(&mut tiny, gpu.stream());
    assert!(matches!(sort.sort_keys_with(&mut k, 32, &mut s), Err(Error::Runtime(gpu_runtime::Error::ScratchTooSmall { .. }))));
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
