//! For ncu: `csrc_profile MATRIX K` builds one tall-suite matrix (`64`, `4284` or `100k`: 1M × 64,
//! 1M × 4284, 2M × 100k) and runs each product (A·X, then Aᵀ·U) three times with K vectors (f64).
//! `ncu --kernel-name regex:csrc_ --launch-skip 4 --launch-count 4 target/release/examples/csrc_profile 4284 16`
use gpu_csrc::{DenseView, DenseViewMut, DeviceCsrc, Op};
use gpu_runtime::{DeviceView, DeviceViewMut};
use sptrans_matrix::device::DeviceCsr;
use sptrans_matrix::generate;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let k: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(4);
    let a = match args.get(1).map(String::as_str).unwrap_or("4284") {
        "64" => generate::tall_skinny::<f64>(1_000_000, 64, 10, 1)?,
        "100k" => generate::tall_skinny::<f64>(2_000_000, 100_000, 4, 3)?,
        _ => generate::tall_skinny::<f64>(1_000_000, 4284, 11, 2)?,
    };
    let gpu = gpu_csrc::Gpu::first()?;
    let mut c = DeviceCsrc::from_csr(&gpu, &DeviceCsr::upload(&gpu, &a)?)?;
    for op in [Op::NoTranspose, Op::Transpose] {
        let (xn, on) = if op == Op::NoTranspose { (a.cols(), a.rows()) } else { (a.rows(), a.cols()) };
        let x = gpu.upload(&vec![1.0f64; xn as usize * k])?;
        let mut out = gpu.alloc::<f64>(on as usize * k)?;
        let x = DenseView::packed(DeviceView::of(&x), xn)?;
        let mut out = DenseViewMut::packed(DeviceViewMut::of(&mut out), on)?;
        for _ in 0..3 {
            c.multiply(op, 1.0, &x, 0.0, &mut out)?;
        }
    }
    gpu.synchronize()?;
    Ok(())
}
