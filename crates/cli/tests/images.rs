//! Issue 35: the modules load from the cubin for the device (or from the PTX when the cubin is
//! withheld), and the kernels give the same results either way.
use gpu_testkit::{gpu_test, rng};
use rand::Rng;
use sptrans::matrix::{device::DeviceCsr, generate, Csr};
use sptrans::runtime::{Gpu, Image, ImagePolicy};
use sptrans::spmv::{serial as spmv_serial, Format, Spmv};
use sptrans::transpose::{Algorithm, Transposer};
use sptrans_cli::info::modules;

#[test]
fn every_embedded_cubin_is_an_elf_file_of_its_architecture_defining_every_kernel() {
    for m in modules() {
        assert_eq!(m.check_cubins(), Ok(sptrans::runtime::CUBIN_ARCHS.len()), "module {}", m.name());
    }
}

/// Every transposer's output and deterministic SpMV formats' products of `a` on `gpu`.
fn run_all(gpu: &Gpu, a: &Csr<u32, f64>, x: &[f64]) -> (Vec<Csr<u32, f64>>, Vec<Vec<f64>>) {
    let mut t = Transposer::new(gpu).unwrap();
    let da = DeviceCsr::upload(gpu, a).unwrap();
    let algos = [Algorithm::RadixTrans, Algorithm::ScanTrans, Algorithm::MergeTrans, Algorithm::CooChain, Algorithm::SymTrans, Algorithm::Auto];
    let outs = algos.iter().map(|&algo| t.transpose_new(algo, &da).unwrap().download(gpu).unwrap()).collect();
    let dx = gpu.upload(x).unwrap();
    let mut ys = vec![];
    for format in [Format::CsrScalar, Format::CsrVector, Format::Ell, Format::Jds] {
        let mut plan = match Spmv::new(gpu, da.view(), format) {
            Ok(p) => p,
            Err(_) => continue, // ELL refuses uneven rows; the other handle refuses alike
        };
        let mut dy = gpu.alloc::<f64>(a.rows() as usize).unwrap();
        gpu.memset_bytes(&mut dy, gpu_testkit::POISON_BYTE).unwrap();
        plan.apply(1.0, &dx, 0.0, &mut dy).unwrap();
        ys.push(gpu.download(&dy).unwrap());
    }
    (outs, ys)
}

gpu_test!(fn modules_load_from_the_cubin_and_from_the_ptx_with_identical_results(gpu) {
    let cc = gpu.props().compute_capability;
    for m in modules() {
        let l = gpu.load_module(m).unwrap();
        match m.cubin_for(cc) {
            Some(c) if gpu.image_policy() == ImagePolicy::Auto => assert_eq!(l.image, Image::Cubin { sm: c.sm() }, "{l:?}"),
            _ => assert_eq!(l.image, Image::Ptx, "{l:?}"),
        }
        eprintln!("{}: {} in {:?}", m.name(), l.image, l.time);
    }
    // The cubins withheld: a second handle family loads every module from the PTX.
    let ptx = Gpu::first().unwrap();
    ptx.set_image_policy(ImagePolicy::PtxOnly);
    for m in modules() {
        assert_eq!(ptx.load_module(m).unwrap().image, Image::Ptx, "module {}", m.name());
    }
    let (mut r, _seed) = rng();
    let matrices = [
        generate::uniform::<f64>(1, 1, 1, r.random()).unwrap(),
        generate::uniform::<f64>(33, 31, 200, r.random()).unwrap(),
        generate::uniform::<f64>(4097, 1025, 60_001, r.random()).unwrap(),
        generate::rmat::<f64>(14, 150_000, 0.57, 0.19, 0.19, r.random()).unwrap(),
        generate::dense_row::<f64>(3000, 70_000, 90_000, r.random()).unwrap(),
        generate::laplacian_2d::<f64>(97).unwrap(),
    ];
    for a in &matrices {
        let x: Vec<f64> = (0..a.cols()).map(|_| r.random_range(-1.0..1.0)).collect();
        let (ta, ya) = run_all(gpu, a, &x);
        let (tb, yb) = run_all(&ptx, a, &x);
        let want = a.transpose();
        for (i, (p, q)) in ta.iter().zip(&tb).enumerate() {
            assert!(p.same_bits(q), "transposer {i}: cubin and PTX differ ({} x {}, {} nnz)", a.rows(), a.cols(), a.nnz());
            assert!(p.same_bits(&want), "transposer {i} differs from the twin");
        }
        assert_eq!(ya.len(), yb.len());
        let mut y = vec![0.0; a.rows() as usize];
        spmv_serial::spmv(a, 1.0, &x, 0.0, &mut y);
        let bound = spmv_serial::error_bound(a, 1.0, &x, 0.0, &y);
        for (p, q) in ya.iter().zip(&yb) {
            assert!(p.iter().zip(q).all(|(u, v)| u.to_bits() == v.to_bits()), "SpMV: cubin and PTX differ");
            spmv_serial::within(p, &y, &bound).unwrap();
        }
    }
});
