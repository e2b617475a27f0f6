//! `sptrans info`: what this machine has.
use std::path::PathBuf;

use gpu_runtime::PtxModule;

use crate::cli::InfoArgs;
use crate::Result;

/// The PTX modules this binary embeds, one per primitive crate.
pub fn modules() -> [&'static PtxModule; 10] {
    [&gpu_runtime::selftest::MODULE, &gpu_scan::MODULE, &gpu_ptr2idx::MODULE, &gpu_histogram::MODULE, &gpu_radix::MODULE, &gpu_segsort::MODULE, &gpu_segmerge::MODULE, &gpu_spmv::MODULE, &gpu_csrc::MODULE, &gpu_transpose::MODULE]
}

/// Where the device toolchain's parts are (`cargo xtask setup-ptx-toolchain` installs them).
fn toolchain() -> Vec<(&'static str, Option<PathBuf>)> {
    let which = sptrans_devtools::which;
    let home = std::env::var_os("CARGO_HOME").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let linker = home.map(|h| h.join("bin/llvm-bitcode-linker")).filter(|p| p.is_file()).or_else(|| which("llvm-bitcode-linker"));
    let llc = ["/usr/lib/llvm-22/bin/llc"].iter().map(PathBuf::from).find(|p| p.is_file()).or_else(|| which("llc"));
    vec![("llvm-bitcode-linker", linker), ("llc (LLVM 22)", llc), ("rustc", which("rustc")), ("ptxas", sptrans_devtools::find_ptxas())]
}

/// `sptrans info`.
pub fn info(args: &InfoArgs) -> Result<()> {
    println!("sptrans {}", env!("CARGO_PKG_VERSION"));
    if !gpu_runtime::driver_present() {
        println!("CUDA driver: not found (GPU commands fall back to the serial twin)");
    } else {
        match gpu_runtime::driver_version() {
            Ok((maj, min)) => println!("CUDA driver: API {maj}.{min}"),
            Err(e) => println!("CUDA driver: {e}"),
        }
        match gpu_runtime::device_count() {
            Ok(n) => println!("devices: {n}"),
            Err(e) => println!("devices: {e}"),
        }
        match crate::open_gpu() {
            Ok(gpu) => {
                let p = gpu.props();
                println!("device 0: {} (compute capability {}.{}), {} SMs, {:.1} GiB, L2 {} MiB", p.name, p.compute_capability.0, p.compute_capability.1, p.sm_count, p.total_memory as f64 / (1u64 << 30) as f64, p.l2_bytes >> 20);
                if let Ok((free, total)) = gpu.memory_info() {
                    println!("memory: {:.1} GiB free of {:.1} GiB", free as f64 / (1u64 << 30) as f64, total as f64 / (1u64 << 30) as f64);
                }
                if !args.no_bandwidth {
                    match gpu_runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20) {
                        Ok(bw) => println!("device-to-device copy: {bw:.0} GB/s (read + write)"),
                        Err(e) => println!("device-to-device copy: {e}"),
                    }
                }
                let mut t = gpu_transpose::Transposer::new(&gpu)?;
                match t.cusparse_version() {
                    Ok(v) => println!("cuSPARSE: {v} ({})", gpu_transpose::cusparse_library().unwrap_or("?")),
                    Err(e) => println!("cuSPARSE: {e}"),
                }
            }
            Err(e) => println!("device 0: {e}"),
        }
    }
    println!("embedded PTX modules:");
    for m in modules() {
        println!("  {:<10} target {:<6} ISA {:<5} {} kernels", m.name(), m.target().unwrap_or("?"), m.isa_version().unwrap_or("?"), m.kernels().len());
    }
    println!("device toolchain (only needed to change kernels; cargo xtask setup-ptx-toolchain):");
    for (what, at) in toolchain() {
        println!("  {what:<20} {}", at.map_or("not installed".into(), |p| p.display().to_string()));
    }
    Ok(())
}
