//! Issue 34: the paths that hand the 32-bit machinery a matrix over other buffers (values of 1,
//! 2 or 16 bytes, moved by positions; the 64-bit row pointer, in chunks) on a caller's context
//! with cudarc's event tracking on: results equal to the twin's, and many calls leak neither
//! host memory (the events cudarc creates for every buffer it wraps) nor device memory.
use gpu_runtime::cudarc::driver::CudaContext;
use gpu_runtime::{Gpu, Payload};
use gpu_testkit::{gpu_test, rng};
use gpu_transpose::{serial, Algorithm, Transposer};
use rand::Rng;
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::device64::DeviceCsr64;
use sptrans_matrix::{generate, Csr, Value};

/// Resident host memory of this process, in bytes.
fn resident() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()).unwrap_or(0) * 4096
}

fn one<T: Value + Payload + PartialEq>(t: &mut Transposer, algo: Algorithm, a: &Csr<u32, T>) {
    let g = t.gpu().clone();
    let da = DeviceCsr::upload(&g, a).unwrap();
    let at = t.transpose_new(algo, &da).unwrap().download(&g).unwrap();
    assert!(at == serial::transpose(a), "{algo} with {}-byte values", T::BYTES);
}

gpu_test!(fn wide_values_and_64_bit_pointers_on_a_tracking_callers_context_leak_nothing(gpu) {
    // A context handle of the caller's own (cudarc's default: event tracking on) and its stream.
    let ctx = CudaContext::new(gpu.props().ordinal).unwrap();
    assert!(ctx.is_event_tracking());
    let g = Gpu::from_stream(ctx.new_stream().unwrap()).unwrap();
    let mut t = Transposer::new(&g).unwrap();
    t.set_chunk_nnz(Some(1500)); // the 64-bit path in several chunks
    let (mut r, _seed) = rng();
    let a = generate::uniform::<f64>(300, 257, 5000, r.random()).unwrap();
    let a8 = a.clone().map_values(|v| (v * 250.0) as u8);
    let a16 = a.clone().map_values(|v| (v * 60000.0) as u16);
    let a128 = a.clone().map_values(|v| (v.to_bits() as u128) << 64 | (v * 7.0).to_bits() as u128);
    let a64 = Csr::<u64, f64>::try_from_indices(a.rows(), a.cols(), a.ptr(), a.idx(), a.vals().to_vec()).unwrap();
    let want64 = serial::transpose64(&a64);
    let round = |t: &mut Transposer| {
        one(t, Algorithm::ScanTrans, &a8);
        one(t, Algorithm::MergeTrans, &a16);
        one(t, Algorithm::RadixTrans, &a128);
        one(t, Algorithm::CooChain, &a128);
        let d64 = DeviceCsr64::upload(&g, &a64).unwrap();
        for algo in [Algorithm::RadixTrans, Algorithm::ScanTrans] {
            assert!(t.transpose64_new(algo, &d64).unwrap().download(&g).unwrap() == want64, "64-bit {algo}");
        }
    };
    for _ in 0..5 {
        round(&mut t);
    }
    g.synchronize().unwrap();
    let (rss0, (free0, _)) = (resident(), g.memory_info().unwrap());
    let rounds = 400;
    for _ in 0..rounds {
        round(&mut t);
    }
    g.synchronize().unwrap();
    let (rss1, (free1, _)) = (resident(), g.memory_info().unwrap());
    let grew = rss1.saturating_sub(rss0);
    eprintln!("{rounds} rounds (about {} wrapped buffers): host memory {rss0} -> {rss1} bytes, device free {free0} -> {free1}", rounds * 60);
    // Two events a wrapped buffer, never destroyed, were what leaked before.
    assert!(grew < 2 << 20, "host memory grew by {grew} bytes over {rounds} rounds");
    assert!(free1 + (2 << 20) >= free0, "device memory shrank from {free0} to {free1}");
});
