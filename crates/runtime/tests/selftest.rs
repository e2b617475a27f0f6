//! The pipeline kernels against their serial twins on fresh random inputs of awkward sizes with
//! poisoned outputs, plus the runtime's error paths.
use gpu_runtime::check;
use gpu_runtime::selftest::{self, serial};
use gpu_runtime::{Error, Gpu, Image, ImagePolicy, PtxModule};
use gpu_testkit::{awkward_sizes, gpu_test, rng, POISON_BYTE};
use rand::Rng;

#[test]
fn discovery_never_panics() {
    // On a machine without CUDA this is Err(NoDriver); with one, Ok or NoDevice. Never a panic.
    match Gpu::first() {
        Ok(gpu) => assert!(gpu.props().sm_count > 0),
        Err(e) => assert!(e.is_no_gpu(), "unexpected error without a GPU: {e}"),
    }
    match gpu_runtime::device_count() {
        Ok(_) => assert!(gpu_runtime::driver_present()),
        Err(e) => assert!(matches!(e, Error::NoDriver)),
    }
}

#[test]
fn embedded_module_is_described() {
    let m = &selftest::MODULE;
    assert_eq!(m.name(), "runtime");
    assert_eq!(m.target(), Some("sm_80"));
    assert!(m.isa_version().is_some());
    let mut k = m.kernels();
    k.sort();
    assert_eq!(
        k,
        [
            "runtime_block_sum_u32",
            "runtime_csr_check_u32",
            "runtime_csr_check_u64",
            "runtime_fill_u32",
            "runtime_indices_i32_u32",
            "runtime_indices_i64_u32",
            "runtime_iota_u32",
            "runtime_offsets_i32_u32",
            "runtime_offsets_i32_u64",
            "runtime_offsets_i64_u32",
            "runtime_offsets_i64_u64",
            "runtime_warp_scan_u32"
        ]
    );
}

#[test]
fn embedded_cubins_are_elf_files_of_their_architectures() {
    let m = &selftest::MODULE;
    // embed_module! names the architectures literally; they must be the ones xtask builds.
    let archs: Vec<u32> = m.cubins().iter().map(|c| c.sm()).collect();
    assert_eq!(archs, gpu_runtime::CUBIN_ARCHS);
    assert_eq!(m.check_cubins(), Ok(gpu_runtime::CUBIN_ARCHS.len()));
    // The rule that picks them: same major version, newest minor not above the device's.
    let pick = |cc| m.cubin_for(cc).map(|c| c.sm());
    assert_eq!(pick((8, 0)), Some(80));
    assert_eq!(pick((8, 7)), Some(86));
    assert_eq!(pick((8, 9)), Some(89));
    assert_eq!(pick((9, 0)), Some(90));
    assert_eq!(pick((10, 3)), Some(100));
    assert_eq!(pick((12, 1)), Some(120));
    assert_eq!(pick((7, 5)), None);
    assert_eq!(pick((11, 0)), None);
    // A cubin filed under the wrong architecture, or garbage, is caught.
    let elf = m.cubins()[3].decompress().unwrap();
    assert_eq!(gpu_runtime::cubin_arch(&elf), Some(90));
    assert_eq!(gpu_runtime::cubin_arch(&elf[..40]), None);
    let mut other = elf.clone();
    other[18] = 62; // EM_X86_64
    assert_eq!(gpu_runtime::cubin_arch(&other), None);
}

#[test]
fn serial_twins_agree_with_definitions() {
    let x: Vec<u32> = (1..=70).collect();
    let s = serial::warp_scan_u32(&x);
    assert_eq!(s[31], (1..=32).sum::<u32>());
    assert_eq!(s[32], 33);
    let b = serial::block_sum_u32(&vec![1; 300]);
    assert_eq!(b.block_sums, vec![256, 44]);
    assert_eq!((b.total, b.nonzero), (300, 300));
}

gpu_test!(fn modules_load_from_the_cubin_or_the_ptx_with_the_same_results(gpu) {
    let cc = gpu.props().compute_capability;
    let load = gpu.load_module(&selftest::MODULE).unwrap();
    match selftest::MODULE.cubin_for(cc) {
        Some(c) if gpu.image_policy() == ImagePolicy::Auto => assert_eq!(load.image, Image::Cubin { sm: c.sm() }, "{load:?}"),
        _ => assert_eq!(load.image, Image::Ptx, "{load:?}"),
    }
    assert!(gpu.loaded_modules().iter().any(|l| l.module == "runtime"));
    // A second handle family on the same device with the PTX only: its own load, same results.
    let ptx = Gpu::first().unwrap();
    ptx.set_image_policy(ImagePolicy::PtxOnly);
    let l = ptx.load_module(&selftest::MODULE).unwrap();
    assert_eq!(l.image, Image::Ptx);
    assert!(l.why_ptx.as_deref().is_some_and(|w| w.contains("policy")), "{l:?}");
    let (mut r, _seed) = rng();
    for n in [0usize, 1, 31, 32, 33, 255, 257, 100_003] {
        let input: Vec<u32> = (0..n).map(|_| r.random_range(0..4)).collect();
        let a = gpu.upload(&input).unwrap();
        let b = ptx.upload(&input).unwrap();
        let (sa, sb) = (selftest::block_sum_u32(gpu, &a.as_view()).unwrap(), selftest::block_sum_u32(&ptx, &b.as_view()).unwrap());
        assert_eq!(sa, sb, "n={n}");
        assert_eq!(sa, serial::block_sum_u32(&input), "n={n}");
        let (mut wa, mut wb) = (gpu.alloc::<u32>(n).unwrap(), ptx.alloc::<u32>(n).unwrap());
        gpu.memset_bytes(&mut wa, POISON_BYTE).unwrap();
        ptx.memset_bytes(&mut wb, POISON_BYTE).unwrap();
        selftest::warp_scan_u32(gpu, &a.as_view(), &mut wa).unwrap();
        selftest::warp_scan_u32(&ptx, &b.as_view(), &mut wb).unwrap();
        let wa = gpu.download(&wa).unwrap();
        assert_eq!(wa, ptx.download(&wb).unwrap(), "n={n}");
        assert_eq!(wa, serial::warp_scan_u32(&input), "n={n}");
    }
});

gpu_test!(fn fill_and_iota_match_twin(gpu) {
    let (mut r, _seed) = rng();
    for n in awkward_sizes(256, 20, &mut r) {
        let v: u32 = r.random();
        let mut buf = gpu.alloc::<u32>(n).unwrap();
        gpu.memset_bytes(&mut buf, POISON_BYTE).unwrap();
        selftest::fill_u32(gpu, &mut buf, v).unwrap();
        assert_eq!(gpu.download(&buf).unwrap(), serial::fill_u32(n, v), "fill n={n}");
        gpu.memset_bytes(&mut buf, POISON_BYTE).unwrap();
        selftest::iota_u32(gpu, &mut buf, v).unwrap();
        assert_eq!(gpu.download(&buf).unwrap(), serial::iota_u32(n, v), "iota n={n}");
    }
});

gpu_test!(fn block_sum_matches_twin(gpu) {
    let (mut r, _seed) = rng();
    for n in awkward_sizes(256, 22, &mut r) {
        // Mix zeros in, so the ballot count is exercised.
        let x: Vec<u32> = (0..n).map(|_| if r.random_bool(0.2) { 0 } else { r.random() }).collect();
        let d = gpu.upload(&x).unwrap();
        let got = selftest::block_sum_u32(gpu, &d.as_view()).unwrap();
        assert_eq!(got, serial::block_sum_u32(&x), "n={n}");
    }
});

gpu_test!(fn warp_scan_matches_twin(gpu) {
    let (mut r, _seed) = rng();
    for n in awkward_sizes(256, 22, &mut r) {
        let x: Vec<u32> = (0..n).map(|_| r.random()).collect();
        let d = gpu.upload(&x).unwrap();
        let mut out = gpu.alloc::<u32>(n).unwrap();
        gpu.memset_bytes(&mut out, POISON_BYTE).unwrap();
        selftest::warp_scan_u32(gpu, &d.as_view(), &mut out).unwrap();
        assert_eq!(gpu.download(&out).unwrap(), serial::warp_scan_u32(&x), "n={n}");
    }
});

gpu_test!(fn errors_are_values_not_panics(gpu) {
    // Length mismatch.
    let d = gpu.upload(&[1u32, 2, 3]).unwrap();
    let mut out = gpu.alloc::<u32>(2).unwrap();
    let e = selftest::warp_scan_u32(gpu, &d.as_view(), &mut out).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { expected: 3, got: 2, .. }), "{e}");
    // Out of memory names the size.
    let huge = 1usize << 50;
    match gpu.alloc::<u8>(huge) {
        Err(Error::OutOfMemory { bytes, .. }) => assert_eq!(bytes, huge as u64),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    // Missing kernel and bad PTX name the module and kernel.
    let e = gpu.kernel(&selftest::MODULE, "no_such_kernel").unwrap_err();
    assert!(e.to_string().contains("no_such_kernel") && e.to_string().contains("runtime"), "{e}");
    static BAD: PtxModule = PtxModule::new("garbage", ".version 7.0\n.target sm_80\nthis is not ptx\n");
    let e = gpu.kernel(&BAD, "x").unwrap_err();
    assert!(matches!(e, Error::PtxLoad { module: "garbage", .. }), "{e}");
    // The runtime still works afterwards.
    let mut b = gpu.alloc::<u32>(5).unwrap();
    selftest::iota_u32(gpu, &mut b, 1).unwrap();
    assert_eq!(gpu.download(&b).unwrap(), vec![1, 2, 3, 4, 5]);
});

gpu_test!(fn timer_and_bandwidth_are_plausible(gpu) {
    let gbs = gpu_runtime::copy_bandwidth_gbs(gpu, 64 << 20, 5).unwrap();
    assert!(gbs > 10.0 && gbs < 100_000.0, "copy bandwidth {gbs} GB/s");
});

gpu_test!(fn dense_column_ranges_are_the_columns(gpu) {
    // A 5 × 4 block with ld 8 in 29 items: columns 1..3 read back as those columns, and a write
    // through columns 2..4 of a writable block lands in them only.
    use gpu_runtime::{DenseView, DenseViewMut, DeviceView, DeviceViewMut};
    let host: Vec<f64> = (0..29).map(|i| i as f64).collect();
    let buf = gpu.upload(&host).unwrap();
    let block = DenseView::new(DeviceView::of(&buf), 5, 4, 8).unwrap();
    let mid = block.columns(1..3).unwrap();
    assert_eq!((mid.rows(), mid.cols(), mid.ld()), (5, 2, 8));
    let got = gpu.download(mid.data()).unwrap();
    assert_eq!(got, host[8..21].to_vec());
    assert!(block.columns(3..5).is_err());
    assert_eq!(block.columns(4..4).unwrap().cols(), 0);
    let mut out = gpu.upload(&vec![-1.0f64; 29]).unwrap();
    let mut dst = DenseViewMut::new(DeviceViewMut::of(&mut out), 5, 4, 8).unwrap();
    let src = DenseView::new(DeviceView::of(&buf), 5, 2, 8).unwrap();
    gpu.copy_dense(&src, &mut dst.columns_mut(2..4).unwrap()).unwrap();
    let all = gpu.download(&out).unwrap();
    for (i, v) in all.iter().enumerate() {
        let (c, r) = (i / 8, i % 8);
        let want = if c >= 2 && r < 5 { host[(c - 2) * 8 + r] } else { -1.0 };
        assert_eq!(*v, want, "item {i}");
    }
});

/// The serial twin of `check::offsets_and_indices`: the first fault of each array, as the GPU
/// reports them.
fn check_twin(offsets: &[u32], items: u64, indices: &[u32], bound: u64) -> (Option<check::OffsetFault>, Option<check::IndexFault>) {
    let m = offsets.len() as u64 - 1;
    let off = if offsets[0] != 0 {
        Some(check::OffsetFault::Start { value: offsets[0] as u64 })
    } else if let Some(i) = offsets.windows(2).position(|w| w[0] > w[1]) {
        Some(check::OffsetFault::Decrease { position: i as u64 + 1 })
    } else if offsets[m as usize] as u64 != items {
        Some(check::OffsetFault::End { position: m, value: offsets[m as usize] as u64, expected: items })
    } else {
        None
    };
    let idx = indices.iter().position(|&v| v as u64 >= bound).map(|p| check::IndexFault { position: p as u64, value: indices[p] as u64, bound });
    (off, idx)
}

gpu_test!(fn structure_check_finds_the_first_fault_of_each_array(gpu) {
    let (mut r, _seed) = rng();
    let mut buf = gpu_runtime::ScratchBuf::default();
    for m in awkward_sizes(1024, 20, &mut r) {
        for case in 0..4 {
            // A valid pointer over random row lengths, and indices below `bound`; then a fault
            // or two planted at random places (case 0 stays valid).
            let bound = r.random_range(1..1u64 << 20);
            let mut offsets = vec![0u32; m + 1];
            for i in 0..m {
                offsets[i + 1] = offsets[i] + r.random_range(0..4);
            }
            let n = offsets[m] as usize;
            let mut indices: Vec<u32> = (0..n).map(|_| r.random_range(0..bound) as u32).collect();
            let mut items = n as u64;
            match case {
                1 if m > 1 => {
                    let at = r.random_range(1..m);
                    offsets[at] = offsets[at + 1] + 1 + r.random_range(0..3);
                }
                2 if n > 0 => {
                    for _ in 0..2 {
                        let at = r.random_range(0..n);
                        indices[at] = (bound + r.random_range(0..5)).min(u32::MAX as u64) as u32;
                    }
                }
                3 => {
                    offsets[0] = r.random_range(1..3);
                    items += 1;
                }
                _ => {}
            }
            let (d_off, d_idx) = (gpu.upload(&offsets).unwrap(), gpu.upload(&indices).unwrap());
            // The flag words are the same scratch bytes every time, so each check starts from the
            // last one's verdict: it must fill or write all four words itself.
            let got = check::offsets_and_indices(gpu, &d_off, items, &d_idx, bound, &mut buf.scratch(gpu, check::WORKSPACE_BYTES).unwrap()).unwrap();
            assert_eq!(got, check_twin(&offsets, items, &indices, bound), "m={m} case {case}");
            let got = check::offsets(gpu, &d_off, items, &mut buf.scratch(gpu, check::WORKSPACE_BYTES).unwrap()).unwrap();
            assert_eq!(got, check_twin(&offsets, items, &indices, bound).0, "offsets alone, m={m} case {case}");
        }
    }
});
