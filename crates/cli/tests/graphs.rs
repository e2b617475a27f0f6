//! Issue 34 (no hidden synchronization): `Auto` transposes and SpMV products enqueue work only,
//! so they can be captured into a CUDA graph on a caller's stream and replayed, on new inputs,
//! with results equal to the twins'. Capture needs cudarc's event tracking off (an `unsafe` act of
//! the caller, taken below).
use gpu_testkit::{gpu_test, rng, POISON_BYTE};
use rand::Rng;
use sptrans::matrix::device::DeviceCsr;
use sptrans::matrix::{generate, Csr};
use sptrans::runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use sptrans::runtime::Gpu;
use sptrans::spmv::{serial as spmv_serial, Format, Spmv};
use sptrans::transpose::{Algorithm, Transposer};

gpu_test!(fn auto_transpose_and_spmv_replay_from_a_cuda_graph_on_a_callers_stream(gpu) {
    // The caller's own stream, wrapped.
    let stream = gpu.context().new_stream().unwrap();
    // CUDA forbids a capturing stream to wait on an event recorded outside the capture, which
    // cudarc's event tracking does at each use of a tracked buffer: a caller who captures graphs
    // turns tracking off first, cudarc's `unsafe` act (the Gpu docs, "CUDA graphs").
    // SAFETY: every buffer of this test is used on `stream` alone (the graph replays there too),
    // and the binary's one test is this one, so stream order is all the ordering they need.
    unsafe { gpu.context().disable_event_tracking() };
    let g = Gpu::from_stream(stream.clone()).unwrap();
    let (mut r, _seed) = rng();
    for a in [
        generate::rmat::<f64>(15, 300_000, 0.57, 0.19, 0.19, r.random()).unwrap(),
        generate::laplacian_3d::<f64>(30).unwrap(),
        // 17-bit columns, square: `Auto` decides SymTrans on the device (symmetric) or RadixTrans
        // after it (not), inside the same graph.
        generate::laplacian_3d::<f64>(50).unwrap(),
        generate::rmat::<f64>(17, 400_000, 0.57, 0.19, 0.19, r.random()).unwrap(),
        generate::uniform::<f64>(3000, 70_000, 250_000, r.random()).unwrap(),
    ] {
        let mut t = Transposer::new(&g).unwrap();
        let da = DeviceCsr::upload(&g, &a).unwrap();
        // One call outside the capture sizes the plan's workspace.
        let out = t.transpose_into(Algorithm::Auto, &da, t.alloc_output(&da).unwrap()).unwrap().into_parts();
        let mut spmv = Spmv::new(&g, da.view(), Format::Auto).unwrap();
        let reads_csr = !spmv.format().copies_values();
        let mut dx = g.upload(&vec![1.0f64; a.cols() as usize]).unwrap();
        let mut dy = g.alloc::<f64>(a.rows() as usize).unwrap();
        spmv.apply(1.0, &dx, 0.0, &mut dy).unwrap();
        g.synchronize().unwrap();

        stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).unwrap();
        let at = t.transpose_into(Algorithm::Auto, &da, out);
        let y = spmv.apply(1.0, &dx, 0.0, &mut dy);
        let graph = stream.end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
        let (at, graph) = (at.expect("Auto transpose under capture"), graph.expect("end of capture").expect("a graph"));
        y.expect("SpMV under capture");
        let mut out = at.into_parts();
        let mut da = Some(da.into_parts());

        for replay in 0..2 {
            // New values and a new x, written into the captured buffers; outputs poisoned.
            let vals: Vec<f64> = (0..a.nnz()).map(|_| r.random_range(-1.0..1.0)).collect();
            let x: Vec<f64> = (0..a.cols()).map(|_| r.random_range(-1.0..1.0)).collect();
            let b = Csr::try_new(a.rows(), a.cols(), a.ptr().to_vec(), a.idx().to_vec(), vals.clone()).unwrap();
            let mut parts = da.take().unwrap();
            if let Some(v) = parts.vals.as_mut() {
                g.stream().memcpy_htod(&vals, v).unwrap();
            }
            g.stream().memcpy_htod(&x, &mut dx).unwrap();
            g.memset_bytes(&mut out.ptr, POISON_BYTE).unwrap();
            g.memset_bytes(&mut out.idx, POISON_BYTE).unwrap();
            if let Some(v) = out.vals.as_mut() {
                g.memset_bytes(v, POISON_BYTE).unwrap();
            }
            g.memset_bytes(&mut dy, POISON_BYTE).unwrap();
            graph.launch().unwrap();
            g.synchronize().unwrap();
            let got = DeviceCsr::from_parts(&g, a.cols(), a.rows(), out).unwrap();
            assert!(got.download(&g).unwrap().same_bits(&b.transpose()), "replay {replay}: transpose of {} x {}", a.rows(), a.cols());
            out = got.into_parts();
            // The SpMV plan borrows A: its product is B·x with the new values, unless its format
            // keeps a converted copy of the first ones (Format::copies_values).
            let src = if reads_csr { &b } else { &a };
            let mut want = vec![0.0; a.rows() as usize];
            spmv_serial::spmv(src, 1.0, &x, 0.0, &mut want);
            let bound = spmv_serial::error_bound(src, 1.0, &x, 0.0, &want);
            spmv_serial::within(&g.download(&dy).unwrap(), &want, &bound).unwrap();
            da = Some(parts);
        }
    }
});
