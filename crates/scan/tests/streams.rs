//! Buffers crossing streams in safe code: a buffer owned by one stream, read by a scan on a
//! forked stream, is dropped (freed on its own stream) while that scan may still run, and its
//! memory handed at once to a new buffer filled with poison. cudarc's event tracking (kept on by
//! `Gpu::new`) and views that carry it must make the free wait for the scan: the result equals
//! the twin's, every round, and memcheck finds no access to freed memory.
use gpu_runtime::cudarc::driver::CudaSlice;
use gpu_runtime::{DeviceView, Scratch};
use gpu_scan::{serial, Algorithm, ScanKind, Scanner};
use gpu_testkit::{gpu_test, max_len, rng, POISON_BYTE};
use rand::Rng;

/// Long enough (tens of MiB) that a scan is still running when the host frees its input.
fn len() -> usize {
    (1usize << 24).min(max_len().max(1 << 16))
}

gpu_test!(fn buffer_freed_on_its_stream_while_a_forked_stream_reads_it(gpu) {
    assert!(gpu.context().is_event_tracking(), "Gpu::new must leave cudarc's event tracking on");
    let (mut r, _seed) = rng();
    let n = len();
    let x: Vec<u32> = (0..n).map(|_| r.random_range(0..16)).collect();
    let want = serial::inclusive_scan(&x);
    let other = gpu.fork().unwrap();
    let mut scan = Scanner::<u32>::new(&other, Algorithm::Auto).unwrap();
    for round in 0..3 {
        for as_view in [false, true] {
            let mut out: CudaSlice<u32> = other.alloc(n).unwrap();
            other.memset_bytes(&mut out, POISON_BYTE).unwrap();
            let input = gpu.upload(&x).unwrap();
            gpu.synchronize().unwrap();
            // Several passes keep the forked stream busy after the host has moved on.
            for _ in 0..4 {
                if as_view {
                    scan.inclusive(&DeviceView::of(&input), &mut out).unwrap();
                } else {
                    scan.inclusive(&input, &mut out).unwrap();
                }
            }
            drop(input);
            let mut reuse: CudaSlice<u32> = gpu.alloc(n).unwrap();
            gpu.memset_bytes(&mut reuse, 0xFF).unwrap();
            let got = other.download(&out).unwrap();
            assert!(got == want, "round {round} (view: {as_view}): the scan on the forked stream read freed memory");
            drop(reuse);
        }
    }
});

gpu_test!(fn lent_scratch_freed_while_a_forked_stream_uses_it(gpu) {
    let (mut r, _seed) = rng();
    let n = len();
    let x: Vec<u32> = (0..n).map(|_| r.random_range(0..16)).collect();
    let want = serial::exclusive_scan(&x);
    let other = gpu.fork().unwrap();
    let mut scan = Scanner::<u32>::new(&other, Algorithm::ReduceThenScan).unwrap();
    let bytes = Scanner::<u32>::workspace_bytes(Algorithm::ReduceThenScan, n as u64);
    let input = other.upload(&x).unwrap();
    for round in 0..3 {
        let mut out: CudaSlice<u32> = other.alloc(n).unwrap();
        other.memset_bytes(&mut out, POISON_BYTE).unwrap();
        // Scratch owned by the first stream, lent to the plan on the forked one.
        let mut lent: CudaSlice<u8> = gpu.alloc(bytes.max(1) as usize).unwrap();
        gpu.synchronize().unwrap();
        for _ in 0..4 {
            scan.scan_with(ScanKind::Exclusive, &input, &mut out, &mut Scratch::new(&mut lent, other.stream())).unwrap();
        }
        drop(lent);
        let mut reuse: CudaSlice<u8> = gpu.alloc(bytes.max(1) as usize).unwrap();
        gpu.memset_bytes(&mut reuse, 0xFF).unwrap();
        assert!(other.download(&out).unwrap() == want, "round {round}: the scan's lent scratch was freed under it");
    }
});

gpu_test!(fn misaligned_lent_scratch_is_refused(gpu) {
    let n = 100_000usize;
    let x = vec![1u32; n];
    let mut scan = Scanner::<u32>::new(gpu, Algorithm::ReduceThenScan).unwrap();
    let bytes = Scanner::<u32>::workspace_bytes(Algorithm::ReduceThenScan, n as u64) as usize;
    let input = gpu.upload(&x).unwrap();
    let mut out: CudaSlice<u32> = gpu.alloc(n).unwrap();
    let mut buf: CudaSlice<u8> = gpu.alloc(bytes + 64).unwrap();
    let mut view = gpu_runtime::DeviceViewMut::of(&mut buf).into_slice(1..bytes + 1);
    let e = scan.scan_with(ScanKind::Exclusive, &input, &mut out, &mut Scratch::new(&mut view, gpu.stream())).unwrap_err();
    assert!(e.to_string().contains("misaligned"), "{e}");
});
