//! The 64-bit-pointer transposer (`gpu_transpose::index64`) against the 64-bit twin, bit for bit:
//! every generator and adversary, one chunk and many (chunks cut rows, the dense row too),
//! f32 / f64 / pattern / 1-, 2- and 16-byte values, several algorithms per chunk, poisoned
//! outputs; the GPU generator and fingerprint against their host specifications; and errors.
//! The chunked path's CPU model is checked on any machine.
mod common;

use common::generated;
use gpu_testkit::{gpu_test, rng, POISON_BYTE};
use gpu_transpose::index64::{self, Fingerprint};
use gpu_transpose::{serial, Algorithm, Error, Payload, Transposer};
use index64 as math;
use rand::rngs::StdRng;
use rand::Rng;
use sptrans_matrix::device64::{DeviceCsr64, DeviceCsr64Parts};
use sptrans_matrix::{Csr, Value};

fn wide<T: Value>(a: &Csr<u32, T>) -> Csr<u64, T> {
    Csr::try_from_indices(a.rows(), a.cols(), a.ptr(), a.idx(), a.vals().to_vec()).unwrap()
}

/// Chunk sizes for `nnz` nonzeros: one chunk, and several (down to 1 on small matrices), at most
/// about 60 chunks so the test stays fast.
fn chunk_sizes(r: &mut StdRng, nnz: u64) -> Vec<Option<u64>> {
    let mut out = vec![None, Some(nnz.max(1)), Some(nnz / 2 + 1)];
    out.push(Some((nnz / r.random_range(2..60)).max(1)));
    if nnz <= 64 {
        out.push(Some(1));
    }
    out
}

#[test]
fn chunked_model_equals_the_twin() {
    let (mut r, _g) = rng();
    let mut cases = 0;
    for scale in [1u64, 7, 33, 500] {
        for (name, a) in generated::<f64>(&mut r, scale) {
            let a = wide(&a);
            let want = serial::transpose64(&a);
            // At most 300 chunks: the model walks every column once a chunk.
            for chunk in [1u64, 2, 3, 31, 32, 33, 1000].into_iter().chain([a.nnz(), a.nnz() + 1]).filter(|&c| c > 0 && a.nnz().div_ceil(c) <= 300) {
                let got = serial::chunked64(&a, chunk);
                assert!(got.same_bits(&want), "{name} chunk {chunk}");
                cases += 1;
            }
        }
    }
    assert!(cases > 250, "{cases} cases");
}

#[test]
fn chunk_rows_cut_rows_where_the_chunks_fall() {
    // Rows: 0 has 3, 1 is empty, 2 has 2, 3 is empty, 4 has 4 (nnz 9).
    let ptr = [0u64, 3, 3, 5, 5, 9];
    let get = |i: u64| ptr[i as usize];
    assert_eq!(math::chunk_rows(&get, 5, 0, 4), (0, 3));
    assert_eq!(math::chunk_rows(&get, 5, 3, 5), (2, 3));
    assert_eq!(math::chunk_rows(&get, 5, 4, 9), (2, 5));
    assert_eq!(math::chunk_rows(&get, 5, 8, 9), (4, 5));
    let cut: Vec<u32> = (2..=5).map(|r| math::chunk_ptr(ptr[r], 4, 9)).collect();
    assert_eq!(cut, [0, 1, 1, 5]);
    assert_eq!((0..=8).map(|r| math::gen_ptr(r, 8, 21)).collect::<Vec<_>>(), (0..=8).map(compute).collect::<Vec<_>>());
    fn compute(r: u64) -> u64 {
        // 21 = 8·2 + 5: the first five rows have 3 entries, the rest 2.
        3 * r.min(5) + 2 * r.saturating_sub(5)
    }
}

#[test]
fn fingerprints_see_a_changed_entry_and_an_unsorted_column() {
    let (mut r, _g) = rng();
    let a = wide(&sptrans_matrix::generate::uniform::<f32>(300, 200, 3000, r.random()).unwrap());
    let t = serial::transpose64(&a);
    let (fa, ft) = (Fingerprint::of_host(&a, true), Fingerprint::of_host(&t, false));
    assert_eq!((fa.a, fa.b), (ft.a, ft.b));
    assert_eq!(ft.unsorted, 0);
    // One entry moved to another row changes both sums.
    let (m, n, ptr, mut idx, vals) = t.clone().into_parts();
    let k = (0..idx.len()).find(|&k| idx[k] + 1 < m && (k + 1 == idx.len() || idx[k + 1] != idx[k] + 1)).unwrap();
    idx[k] += 1;
    let moved = Csr::try_new(m, n, ptr.clone(), idx.clone(), vals.clone()).unwrap();
    let fm = Fingerprint::of_host(&moved, false);
    assert!(fm.a != ft.a && fm.b != ft.b);
    // Two entries of one column swapped: the same sums, one entry out of order.
    idx[k] -= 1;
    let c = (0..n as usize).find(|&c| ptr[c + 1] - ptr[c] >= 2).unwrap();
    idx.swap(ptr[c] as usize, ptr[c] as usize + 1);
    let swapped = Fingerprint::of_host(&Csr::try_new(m, n, ptr, idx, vals).unwrap(), false);
    assert_eq!((swapped.a, swapped.b), (ft.a, ft.b));
    assert!(swapped.unsorted >= 1);
}

// ---------------------------------------------------------------- GPU

const ALGOS: [Algorithm; 5] = [Algorithm::RadixTrans, Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::Auto, Algorithm::Serial];

fn poisoned<T: Payload>(t: &Transposer, a: &DeviceCsr64<T>) -> DeviceCsr64Parts<T> {
    let gpu = t.gpu();
    let mut out = t.alloc_output64(a).unwrap();
    gpu.memset_bytes(&mut out.ptr, POISON_BYTE).unwrap();
    gpu.memset_bytes(&mut out.idx, POISON_BYTE).unwrap();
    if let Some(v) = out.vals.as_mut() {
        gpu.memset_bytes(v, POISON_BYTE).unwrap();
    }
    out
}

fn check<T: Value + Payload, B: PartialEq>(t: &mut Transposer, algo: Algorithm, name: &str, a: &Csr<u64, T>, bits: impl Fn(&T) -> B) {
    let gpu = t.gpu().clone();
    let da = DeviceCsr64::upload(&gpu, a).unwrap();
    let out = poisoned(t, &da);
    let chunk = t.chunk_nnz();
    let out = t.transpose64_into(algo, &da, out).unwrap_or_else(|e| panic!("{name} {algo} chunk {chunk}: {e}"));
    let want = serial::transpose64(a);
    let got = out.download(&gpu).unwrap();
    assert_eq!((got.rows(), got.cols()), (want.rows(), want.cols()), "{name} {algo} chunk {chunk}: shape");
    assert_eq!(got.ptr(), want.ptr(), "{name} {algo} chunk {chunk}: pointer");
    assert_eq!(got.idx(), want.idx(), "{name} {algo} chunk {chunk}: indices");
    assert!(got.vals().iter().map(&bits).eq(want.vals().iter().map(&bits)), "{name} {algo} chunk {chunk}: value bits");
}

fn check_pattern(t: &mut Transposer, algo: Algorithm, name: &str, a: &Csr<u64, ()>) {
    let gpu = t.gpu().clone();
    let da = DeviceCsr64::upload_pattern(&gpu, a).unwrap();
    let out = poisoned(t, &da);
    let chunk = t.chunk_nnz();
    let out = t.transpose64_into(algo, &da, out).unwrap_or_else(|e| panic!("{name} {algo} chunk {chunk}: {e}"));
    assert!(out.vals().is_none());
    let want = serial::transpose64(a);
    assert_eq!(gpu.download(out.ptr()).unwrap(), want.ptr(), "{name} {algo} chunk {chunk}: pointer");
    let idx: Vec<u64> = gpu.download(out.idx()).unwrap().into_iter().map(u64::from).collect();
    assert_eq!(idx, want.idx(), "{name} {algo} chunk {chunk}: indices");
}

gpu_test!(fn index64_matches_the_twin_in_one_chunk_and_many(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let (mut r, _g) = rng();
    let max = gpu_testkit::max_len() as u64;
    let mut cases = 0;
    for scale in [1u64, 31, 33, 1000, 40_000] {
        if scale * 4 > max.max(64) {
            continue;
        }
        for (name, a) in generated::<f32>(&mut r, scale) {
            let a = wide(&a);
            for chunk in chunk_sizes(&mut r, a.nnz()) {
                t.set_chunk_nnz(chunk);
                for algo in ALGOS {
                    check(&mut t, algo, &name, &a, |v| v.to_bits());
                }
                cases += 1;
            }
        }
    }
    t.set_chunk_nnz(None);
    assert!(cases >= 100, "{cases} cases");
});

gpu_test!(fn index64_f64_pattern_and_narrow_and_wide_values(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let (mut r, _g) = rng();
    for scale in [5u64, 64, 3000] {
        for (name, a) in generated::<f64>(&mut r, scale) {
            let a = wide(&a);
            for chunk in chunk_sizes(&mut r, a.nnz()) {
                t.set_chunk_nnz(chunk);
                for algo in [Algorithm::RadixTrans, Algorithm::ScanTrans] {
                    check(&mut t, algo, &name, &a, |v| v.to_bits());
                    check_pattern(&mut t, algo, &name, &a.clone().map_values(|_| ()));
                    let bits = |v: f64| v.to_bits() as u128 * 0x9e37_79b9_7f4a_7c15;
                    check(&mut t, algo, &name, &a.clone().map_values(|v| bits(v) as u8), |v| *v);
                    check(&mut t, algo, &name, &a.clone().map_values(|v| half::f16::from_bits(bits(v) as u16)), |v| v.to_bits());
                    check(&mut t, algo, &name, &a.clone().map_values(|v| bits(v) | (bits(v) << 64)), |v| *v);
                }
            }
        }
    }
});

gpu_test!(fn generator_and_fingerprint_match_their_host_specifications(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let (mut r, _g) = rng();
    for (m, n, nnz) in [(1u64, 1u64, 0u64), (1, 1, 1), (7, 3, 33), (1000, 777, 31_337), (33, 100_000, 200_001)] {
        let seed = r.random();
        let a = index64::generate(gpu, m, n, nnz, seed).unwrap();
        let host = a.download(gpu).unwrap();
        assert!(host.ptr().iter().enumerate().all(|(i, &p)| p == math::gen_ptr(i as u64, m, nnz)), "{m}x{n} {nnz}: pointer");
        assert!(host.idx().iter().enumerate().all(|(k, &j)| j == math::gen_col(k as u64, n, seed) as u64), "{m}x{n} {nnz}: indices");
        let fa = index64::fingerprint(gpu, &a, true).unwrap();
        assert_eq!(fa, Fingerprint::of_host(&host, true), "{m}x{n} {nnz}: input fingerprint");
        t.set_chunk_nnz(Some((nnz / 3).max(1)));
        let out = t.transpose64_new(Algorithm::RadixTrans, &a).unwrap();
        let ft = index64::fingerprint(gpu, &out, false).unwrap();
        assert_eq!(ft, Fingerprint::of_host(&out.download(gpu).unwrap(), false), "{m}x{n} {nnz}: output fingerprint");
        assert_eq!((ft.a, ft.b, ft.unsorted), (fa.a, fa.b, 0), "{m}x{n} {nnz}: input against output");
    }
    assert!(index64::generate(gpu, 0, 5, 5, 1).is_err());
});

gpu_test!(fn index64_errors(gpu) {
    let mut t = Transposer::new(gpu).unwrap();
    let a = wide(&sptrans_matrix::generate::uniform::<f32>(40, 30, 200, 3).unwrap());
    let da = DeviceCsr64::upload(gpu, &a).unwrap();
    let short = DeviceCsr64Parts::<f32>::alloc(gpu, 29, 200, true).unwrap();
    assert!(matches!(t.transpose64_into(Algorithm::RadixTrans, &da, short), Err(Error::LengthMismatch { what: "output pointer length", .. })));
    let no_vals = DeviceCsr64Parts::<f32>::alloc(gpu, 30, 200, false).unwrap();
    assert!(matches!(t.transpose64_into(Algorithm::RadixTrans, &da, no_vals), Err(Error::LengthMismatch { .. })));
    assert!(matches!(t.workspace64_bytes(Algorithm::RadixTrans, 1 << 33, 5, 5, 4), Err(Error::TooLarge { what: "rows", .. })));
});

gpu_test!(fn index64_workspace_is_what_is_allocated_and_lent_scratch_suffices(gpu) {
    // The plan's own workspace after a call equals workspace64_bytes (one chunk and several),
    // and a caller's scratch of exactly that size is enough (carving order = layout order).
    let (mut r, _g) = rng();
    for (chunk, algo) in [(None, Algorithm::RadixTrans), (Some(777), Algorithm::RadixTrans), (Some(5000), Algorithm::ScanTrans), (Some(3), Algorithm::MergeTrans)] {
        let a = wide(&sptrans_matrix::generate::rmat::<f64>(11, 20_000, 0.57, 0.19, 0.19, r.random()).unwrap());
        let a = if chunk == Some(3) { wide(&sptrans_matrix::generate::uniform::<f64>(30, 20, 100, r.random()).unwrap()) } else { a };
        let da = DeviceCsr64::upload(gpu, &a).unwrap();
        let mut t = Transposer::new(gpu).unwrap();
        t.set_chunk_nnz(chunk);
        let need = t.workspace64_bytes(algo, a.rows(), a.cols(), a.nnz(), 8).unwrap();
        let out = t.transpose64_new(algo, &da).unwrap();
        assert_eq!(t.allocated_bytes(), need, "{chunk:?} {algo}: allocated");
        assert!(out.download(gpu).unwrap().same_bits(&serial::transpose64(&a)));
        let mut mine = gpu.alloc::<u8>(need as usize).unwrap();
        let mut scratch = gpu_transpose::gpu_runtime::Scratch::new(&mut mine, gpu.stream());
        let out = t.transpose64_into_with(algo, &da, poisoned(&t, &da), &mut scratch).unwrap();
        assert!(out.download(gpu).unwrap().same_bits(&serial::transpose64(&a)), "{chunk:?} {algo}: on lent scratch");
        if need > 0 {
            let mut short = gpu.alloc::<u8>(need as usize - 1).unwrap();
            let mut scratch = gpu_transpose::gpu_runtime::Scratch::new(&mut short, gpu.stream());
            assert!(t.transpose64_into_with(algo, &da, poisoned(&t, &da), &mut scratch).is_err(), "{chunk:?} {algo}: short scratch refused");
        }
    }
});
