//! The API contract of every plan, on the GPU: invalid device data is refused with an error that
//! names the position (never a fault: compute-sanitizer memcheck runs this file), scratch lent by
//! the caller is used and a short one refused, the workspace a plan reports equals what it
//! allocates, and plans on two streams of one device run concurrently with correct results.
use gpu_histogram::Histogram;
use gpu_ptr2idx::Ptr2Idx;
use gpu_runtime::{Gpu, Scratch};
use gpu_scan::{Algorithm as ScanAlgorithm, ScanKind, Scanner};
use gpu_segmerge::Segmerge;
use gpu_segsort::Segsort;
use gpu_testkit::{gpu_test, rng, POISON_BYTE};
use gpu_transpose::{serial, Algorithm, Error, Transposer};
use rand::Rng;
use sptrans_matrix::device::{DeviceCsr, DeviceCsrParts};
use sptrans_matrix::{generate, Csr};

const GPU_ALGOS: [Algorithm; 6] =
    [Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::RadixTrans, Algorithm::SymTrans, Algorithm::CooChain, Algorithm::Serial];

/// Device parts of `a` with `edit` applied to host copies of its pointer and indices.
fn parts(gpu: &Gpu, a: &Csr<u32, f32>, edit: impl FnOnce(&mut Vec<u32>, &mut Vec<u32>)) -> DeviceCsrParts<f32> {
    let (mut p, mut i) = (a.ptr().to_vec(), a.idx().to_vec());
    edit(&mut p, &mut i);
    DeviceCsrParts { ptr: gpu.upload(&p).unwrap(), idx: gpu.upload(&i).unwrap(), vals: Some(gpu.upload(a.vals()).unwrap()) }
}

gpu_test!(fn invalid_device_data_is_refused_by_every_entry_point(gpu) {
    let (mut r, _seed) = rng();
    let (m, n, nnz) = (300u64, 200u64, 5000u64);
    let a = generate::uniform::<f32>(m, n, nnz, r.random()).unwrap();
    let bad_at = r.random_range(1..nnz as usize - 1);
    let bad_row = r.random_range(1..m as usize);
    // DeviceCsr's checked constructor: each fault, with its position.
    let e = DeviceCsr::from_parts(gpu, m, n, parts(gpu, &a, |_, i| i[bad_at] = 3_000_000_000)).err().unwrap();
    assert!(matches!(e, sptrans_matrix::Error::IndexOutOfRange { position, index: 3_000_000_000, bound: 200 } if position == bad_at as u64), "{e}");
    let e = DeviceCsr::from_parts(gpu, m, n, parts(gpu, &a, |_, i| { i[bad_at] = 200; i[bad_at + 1] = 201; })).err().unwrap();
    assert!(matches!(e, sptrans_matrix::Error::IndexOutOfRange { position, index: 200, .. } if position == bad_at as u64), "{e}");
    let e = DeviceCsr::from_parts(gpu, m, n, parts(gpu, &a, |p, _| p[0] = 1)).err().unwrap();
    assert!(matches!(e, sptrans_matrix::Error::BadPointers { index: 0, .. }), "{e}");
    let e = DeviceCsr::from_parts(gpu, m, n, parts(gpu, &a, |p, _| p[bad_row] = p[bad_row + 1] + 1)).err().unwrap();
    assert!(matches!(e, sptrans_matrix::Error::BadPointers { index, .. } if index == bad_row as u64 + 1), "{e}");
    let e = DeviceCsr::from_parts(gpu, m, n, parts(gpu, &a, |p, _| p[m as usize] = 4_000_000_000)).err().unwrap();
    assert!(matches!(e, sptrans_matrix::Error::BadPointers { index, .. } if index == m), "{e}");
    let e = DeviceCsr::from_parts(gpu, m, n, parts(gpu, &a, |p, _| { p.pop(); })).err().unwrap();
    assert!(matches!(e, sptrans_matrix::Error::LengthMismatch { what: "row pointer", .. }), "{e}");
    let mut short_vals = parts(gpu, &a, |_, _| {});
    short_vals.vals = Some(gpu.alloc(nnz as usize - 1).unwrap());
    assert!(matches!(DeviceCsr::from_parts(gpu, m, n, short_vals), Err(sptrans_matrix::Error::LengthMismatch { what: "values", .. })));
    assert!(matches!(DeviceCsr::from_parts(gpu, 1 << 33, n, parts(gpu, &a, |_, _| {})), Err(sptrans_matrix::Error::TooLarge { what: "rows", .. })));
    // The valid parts are accepted and every algorithm transposes them.
    let ok = DeviceCsr::from_parts(gpu, m, n, parts(gpu, &a, |_, _| {})).unwrap();
    let mut t = Transposer::new(gpu).unwrap();
    for algo in GPU_ALGOS {
        assert_eq!(t.transpose_new(algo, &ok).unwrap().download(gpu).unwrap(), serial::transpose(&a), "{algo}");
    }
    // Transposer output buffers of the wrong shape.
    let wrong = DeviceCsrParts::<f32>::alloc(gpu, m, nnz, true).unwrap();
    assert!(matches!(t.transpose_into(Algorithm::RadixTrans, &ok, wrong), Err(Error::LengthMismatch { .. })));

    // Primitives on caller buffers.
    let mut p2i = Ptr2Idx::new(gpu).unwrap();
    let mut out = gpu.alloc::<u32>(nnz as usize).unwrap();
    let mut bad_ptr = a.ptr().to_vec();
    bad_ptr[bad_row] = u32::MAX;
    let d_bad = gpu.upload(&bad_ptr).unwrap();
    let e = p2i.run_checked(&d_bad, &mut out).unwrap_err();
    assert!(matches!(e, gpu_ptr2idx::Error::InvalidOffsets { index, .. } if index == bad_row as u64 + 1), "{e}");
    p2i.run(&d_bad, &mut out).unwrap(); // trusted: unspecified rows, no access outside the buffers
    let mut hist = Histogram::new(gpu).unwrap();
    let mut keys = a.idx().to_vec();
    keys[bad_at] = n as u32;
    let d_keys = gpu.upload(&keys).unwrap();
    let mut counts = gpu.alloc::<u32>(n as usize).unwrap();
    assert!(matches!(hist.counts_checked(&d_keys, &mut counts), Err(gpu_histogram::Error::KeyOutOfRange { index, bins: 200 }) if index == bad_at as u64));
    let mut ptr = gpu.alloc::<u32>(n as usize + 1).unwrap();
    assert!(matches!(hist.pointers_checked(&d_keys, &mut ptr), Err(gpu_histogram::Error::KeyOutOfRange { .. })));
    let parts_n = 7u64;
    let mut table = gpu.alloc::<u32>(((parts_n + 1) * n) as usize).unwrap();
    let mut intra = gpu.alloc::<u32>(nnz as usize).unwrap();
    assert!(matches!(hist.partitioned_checked(&d_keys, parts_n, &mut table, &mut intra), Err(gpu_histogram::Error::KeyOutOfRange { .. })));
    let mut seg = Segsort::new(gpu).unwrap();
    let mut skeys = gpu.upload(a.idx()).unwrap();
    let mut svals = gpu.upload(a.idx()).unwrap();
    assert!(matches!(seg.sort_segments(&d_bad, &mut skeys, &mut svals), Err(gpu_segsort::Error::Offsets(_))));
    let mut scan = Scanner::<u32>::new(gpu, ScanAlgorithm::Auto).unwrap();
    assert!(matches!(scan.exclusive(&d_keys, &mut ptr), Err(gpu_scan::Error::LengthMismatch { .. })));
    // Merge passes over runs that are not sorted: unspecified output, no access outside the
    // buffers (memcheck watches this; the merge clamps its tile slices).
    let mut mer = Segmerge::new(gpu).unwrap();
    for len in [5000usize, 70_000] {
        let junk: Vec<u32> = (0..len).map(|_| r.random()).collect();
        let (dk, dv) = (gpu.upload(&junk).unwrap(), gpu.upload(&junk).unwrap());
        let (mut ko, mut vo) = (gpu.alloc::<u32>(len).unwrap(), gpu.alloc::<u32>(len).unwrap());
        for s in [1u64, 7, 1000, 2048, 40_000] {
            mer.merge_pass(s, &dk, &dv, &mut ko, &mut vo).unwrap();
            mer.merge_pass_keys(s, &dk, &mut ko).unwrap();
        }
    }
    // Scratch too small: refused before anything is enqueued.
    let mut tiny = gpu.alloc::<u8>(16).unwrap();
    let mut s = Scratch::new(&mut tiny, gpu.stream());
    let big = gpu.upload(&vec![1u32; 1 << 20]).unwrap();
    let mut big_out = gpu.alloc::<u32>(1 << 20).unwrap();
    let tse = |e: &gpu_runtime::Error| matches!(e, gpu_runtime::Error::ScratchTooSmall { .. });
    assert!(matches!(scan.scan_with(ScanKind::Exclusive, &big, &mut big_out, &mut s), Err(gpu_scan::Error::Runtime(ref e)) if tse(e)));
    assert!(matches!(p2i.run_with(ok.ptr(), &mut out, &mut s), Err(gpu_ptr2idx::Error::Runtime(ref e)) if tse(e)));
    let o = t.alloc_output(&ok).unwrap();
    assert!(matches!(t.transpose_into_with(Algorithm::RadixTrans, &ok, o, &mut s), Err(Error::Runtime(ref e)) if tse(e)));
    // The context is alive and the plans still work.
    gpu.synchronize().unwrap();
    assert_eq!(t.transpose_new(Algorithm::ScanTrans, &ok).unwrap().download(gpu).unwrap(), serial::transpose(&a));
});

/// One `transpose_pending_with` of the device parts `p` (`m × n`) on scratch lent for it.
fn pending<T: gpu_runtime::Payload + sptrans_matrix::Value>(
    gpu: &Gpu,
    t: &mut Transposer,
    algo: Algorithm,
    m: u64,
    n: u64,
    p: &DeviceCsrParts<T>,
) -> gpu_transpose::Result<Csr<u32, T>> {
    use gpu_runtime::{DeviceView, DeviceViewMut};
    let nnz = p.idx.len() as u64;
    let vb = if p.vals.is_some() { T::BYTES } else { 0 };
    let bytes = t.workspace_bytes(algo, m, n, nnz, vb)? + gpu_runtime::check::WORKSPACE_BYTES + gpu_runtime::scratch::ALIGN;
    let mut buf = gpu.alloc::<u8>(bytes as usize)?;
    let mut scratch = Scratch::new(&mut buf, gpu.stream());
    let mut flags = scratch.sub(gpu_runtime::check::WORKSPACE_BYTES)?;
    let view = sptrans_matrix::DeviceCsrView::new_pending(
        gpu,
        m,
        n,
        DeviceView::of(&p.ptr),
        DeviceView::of(&p.idx),
        p.vals.as_ref().map(DeviceView::of),
        &mut flags,
    )?;
    let mut out = DeviceCsrParts::<T>::alloc(gpu, n, nnz, p.vals.is_some())?;
    gpu.memset_bytes(&mut out.ptr, POISON_BYTE)?;
    gpu.memset_bytes(&mut out.idx, POISON_BYTE)?;
    {
        let mut o = gpu_transpose::DeviceCsrPartsMut {
            ptr: DeviceViewMut::of(&mut out.ptr),
            idx: DeviceViewMut::of(&mut out.idx),
            vals: out.vals.as_mut().map(DeviceViewMut::of),
        };
        t.transpose_pending_with(algo, view, &mut o, &mut scratch)?;
    }
    Ok(DeviceCsr::from_parts(gpu, n, m, out)?.download(gpu)?)
}

gpu_test!(fn pending_checks_refuse_malformed_structures_after_radix_runs_beside_them(gpu) {
    // RadixTrans runs while the check does, on any structure (memcheck watches this file): each
    // malformed structure must come back as the check's error, never a fault, and a valid one as
    // the twin's answer; other algorithms wait for the verdict first.
    let (mut r, _seed) = rng();
    let mut t = Transposer::new(gpu).unwrap();
    // 200 columns: one pass; 100 000: three; 1 column: no sort bits.
    // Square ones of 200 and 70 000 columns and symmetric meshes of 216 and 74 088: `Auto` tries
    // SymTrans on the device first (its probe and pass on the malformed structure too).
    let mut mats = Vec::new();
    for (m, n, nnz) in [(300u64, 200u64, 5000u64), (3000, 100_000, 40_000), (64, 1, 40), (200, 200, 3000), (70_000, 70_000, 300_000)] {
        mats.push(generate::uniform::<f32>(m, n, nnz, r.random()).unwrap());
    }
    mats.push(generate::laplacian_3d::<f32>(6).unwrap());
    mats.push(generate::laplacian_3d::<f32>(42).unwrap());
    for a in mats {
        let (m, n, nnz) = (a.rows(), a.cols(), a.nnz());
        let bad_at = r.random_range(1..nnz as usize - 1);
        let bad_row = r.random_range(1..m as usize - 1);
        type Edit = Box<dyn Fn(&mut Vec<u32>, &mut Vec<u32>)>;
        let edits: Vec<(&str, Edit)> = vec![
            ("index u32::MAX", Box::new(move |_, i| i[bad_at] = u32::MAX)),
            ("index n", Box::new(move |_, i| i[bad_at] = n as u32)),
            ("first offset 1", Box::new(|p, _| p[0] = 1)),
            ("offset decreases", Box::new(move |p, _| p[bad_row] = p[bad_row + 1] + 1)),
            ("offset past nnz", Box::new(move |p, _| p[bad_row] = u32::MAX - 5)),
            ("last offset short", Box::new(move |p, _| p[m as usize] = nnz as u32 - 1)),
            ("offsets reversed", Box::new(|p, _| p.reverse())),
        ];
        for algo in [Algorithm::Auto, Algorithm::RadixTrans, Algorithm::ScanTrans, Algorithm::SymTrans] {
            for (what, edit) in &edits {
                let p = parts(gpu, &a, edit);
                let e = pending(gpu, &mut t, algo, m, n, &p).err().unwrap_or_else(|| panic!("{what} ({algo}, {m} × {n}): accepted"));
                let ok = match &e {
                    Error::Matrix(sptrans_matrix::Error::IndexOutOfRange { position, .. }) => what.starts_with("index") && *position == bad_at as u64,
                    Error::Matrix(sptrans_matrix::Error::BadPointers { .. }) => what.contains("offset"),
                    _ => false,
                };
                assert!(ok, "{what} ({algo}, {m} × {n}): {e}");
                // u8 values (carried by the sort) and u128 (by positions past one pass).
                let p8 = DeviceCsrParts { ptr: p.ptr.clone(), idx: p.idx.clone(), vals: Some(gpu.upload(&vec![7u8; nnz as usize]).unwrap()) };
                assert!(pending(gpu, &mut t, algo, m, n, &p8).is_err(), "{what} ({algo}), u8 values");
                let p16 = DeviceCsrParts { ptr: p.ptr.clone(), idx: p.idx.clone(), vals: Some(gpu.upload(&vec![9u128; nnz as usize]).unwrap()) };
                assert!(pending(gpu, &mut t, algo, m, n, &p16).is_err(), "{what} ({algo}), u128 values");
            }
            let got = pending(gpu, &mut t, algo, m, n, &parts(gpu, &a, |_, _| {})).unwrap();
            assert_eq!(got, serial::transpose(&a), "valid, {algo}, {m} × {n}");
        }
    }
    // The context is alive after every malformed run.
    gpu.synchronize().unwrap();
});

gpu_test!(fn reported_workspace_equals_what_is_allocated(gpu) {
    let (mut r, _seed) = rng();
    let max = gpu_testkit::max_len() as u64;
    for &(m, n, nnz) in [(1000u64, 800u64, 20_000u64), (50_000, 64, 400_000), (3, 5, 0), (1, 1, 1)].iter().filter(|c| c.2 <= max) {
        let a = generate::uniform::<f32>(m, n, nnz, r.random()).unwrap();
        let da = DeviceCsr::upload(gpu, &a).unwrap();
        for algo in GPU_ALGOS {
            let mut t = Transposer::new(gpu).unwrap();
            let out = t.transpose_new(algo, &da).unwrap();
            assert_eq!(out.download(gpu).unwrap(), serial::transpose(&a), "{algo}");
            let want = t.workspace_bytes(algo, m, n, nnz, 4).unwrap();
            assert_eq!(t.allocated_bytes(), want, "{algo} {m}x{n} {nnz}: allocated vs reported");
            // Caller-lent scratch of exactly that size works, and the plan allocates nothing.
            let mut t2 = Transposer::new(gpu).unwrap();
            let mut mine = gpu.alloc::<u8>(want as usize).unwrap();
            let mut s = Scratch::new(&mut mine, gpu.stream());
            let mut parts = t2.alloc_output(&da).unwrap();
            gpu.memset_bytes(&mut parts.idx, POISON_BYTE).unwrap();
            let out = t2.transpose_into_with(algo, &da, parts, &mut s).unwrap();
            assert_eq!(out.download(gpu).unwrap(), serial::transpose(&a), "{algo} on lent scratch");
            assert_eq!(t2.allocated_bytes(), 0, "{algo}: allocated beside lent scratch");
        }
        // The primitives alone.
        let mut p2i = Ptr2Idx::new(gpu).unwrap();
        let mut rows = gpu.alloc::<u32>(nnz as usize).unwrap();
        p2i.run_checked(da.ptr(), &mut rows).unwrap();
        assert_eq!(p2i.allocated_bytes(), Ptr2Idx::workspace_bytes(m, nnz));
        let mut scan = Scanner::<u32>::new(gpu, ScanAlgorithm::Auto).unwrap();
        let mut sc = gpu.alloc::<u32>(nnz as usize).unwrap();
        scan.exclusive(da.idx(), &mut sc).unwrap();
        assert_eq!(scan.allocated_bytes(), Scanner::<u32>::workspace_bytes(ScanAlgorithm::Auto, nnz));
        let mut hist = Histogram::new(gpu).unwrap();
        let mut ptr = gpu.alloc::<u32>(n as usize + 1).unwrap();
        hist.pointers(da.idx(), &mut ptr).unwrap();
        assert_eq!(hist.allocated_bytes(), Histogram::pointers_workspace_bytes(n));
        let mut seg = Segsort::new(gpu).unwrap();
        let (mut k, mut v) = (gpu.upload(a.idx()).unwrap(), gpu.upload(a.idx()).unwrap());
        seg.sort_segments(da.ptr(), &mut k, &mut v).unwrap();
        assert_eq!(seg.allocated_bytes(), Segsort::segments_workspace_bytes(m, nnz));
        let mut srt = Segsort::new(gpu).unwrap();
        srt.sort_pairs(&mut k, &mut v).unwrap();
        assert_eq!(srt.allocated_bytes(), srt.sort_workspace_bytes(nnz, true));
        let mut mer = Segmerge::new(gpu).unwrap();
        let (mut ko, mut vo) = (gpu.alloc::<u32>(nnz as usize).unwrap(), gpu.alloc::<u32>(nnz as usize).unwrap());
        mer.merge_pass(1000, &k, &v, &mut ko, &mut vo).unwrap();
        assert_eq!(mer.allocated_bytes(), Segmerge::merge_pass_workspace_bytes(nnz, 1000));
    }
});

gpu_test!(fn plans_on_two_streams_run_concurrently_and_correctly(gpu) {
    let (mut r, _seed) = rng();
    let g2 = gpu.fork().unwrap();
    assert_ne!(gpu.stream().cu_stream(), g2.stream().cu_stream());
    let size = (gpu_testkit::max_len() as u64).clamp(1000, 600_000);
    let a = generate::uniform::<f32>(size / 15, size / 20, size, r.random()).unwrap();
    let b = generate::rmat::<f32>(15, size, 0.57, 0.19, 0.19, r.random()).unwrap();
    // Each input uploaded on the stream of the plan that reads it.
    let da = DeviceCsr::upload(gpu, &a).unwrap();
    let db = DeviceCsr::upload(&g2, &b).unwrap();
    let (mut ta, mut tb) = (Transposer::new(gpu).unwrap(), Transposer::new(&g2).unwrap());
    for algo in [Algorithm::RadixTrans, Algorithm::ScanTrans, Algorithm::MergeTrans] {
        // Enqueue both, then wait for both: the two streams' work may overlap.
        let mut outs = Vec::new();
        for _ in 0..3 {
            outs.push((ta.transpose_new(algo, &da).unwrap(), tb.transpose_new(algo, &db).unwrap()));
        }
        gpu.synchronize().unwrap();
        g2.synchronize().unwrap();
        for (oa, ob) in outs {
            assert_eq!(oa.download(gpu).unwrap(), serial::transpose(&a), "{algo} on stream 1");
            assert_eq!(ob.download(&g2).unwrap(), serial::transpose(&b), "{algo} on stream 2");
        }
    }
    // A plan on the caller's own cudarc stream.
    let theirs = gpu.context().new_stream().unwrap();
    let g3 = Gpu::from_stream(theirs.clone()).unwrap();
    assert_eq!(g3.stream().cu_stream(), theirs.cu_stream());
    let mut t3 = Transposer::new(&g3).unwrap();
    let d3 = DeviceCsr::upload(&g3, &a).unwrap();
    assert_eq!(t3.transpose_new(Algorithm::RadixTrans, &d3).unwrap().download(&g3).unwrap(), serial::transpose(&a));
    assert!(gpu.with_stream(theirs).is_ok());
});
