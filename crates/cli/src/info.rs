//! `sptrans info`: what this machine has.
use std::path::PathBuf;

use sptrans::runtime::PtxModule;

use crate::cli::InfoArgs;
use crate::Result;

/// The device-code modules this binary embeds, one per crate with kernels.
pub fn modules() -> [&'static PtxModule; 11] {
    [
        &sptrans::runtime::selftest::MODULE,
        &sptrans::primitives::scan::MODULE,
        &sptrans::primitives::ptr2idx::MODULE,
        &sptrans::primitives::histogram::MODULE,
        &sptrans::primitives::radix::MODULE,
        &sptrans::primitives::segsort::MODULE,
        &sptrans::primitives::segmerge::MODULE,
        &sptrans::spmv::MODULE,
        &sptrans::csrc::MODULE,
        &sptrans::svd::MODULE,
        &sptrans::transpose::MODULE,
    ]
}

fn ms(d: std::time::Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
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
    out!("sptrans {}", env!("CARGO_PKG_VERSION"));
    if !sptrans::runtime::driver_present() {
        out!("CUDA driver: not found (GPU commands fall back to the CPU: transpose and bench to the serial twin, spmv and svd to the threaded CPU fallback)");
    } else {
        match sptrans::runtime::driver_version() {
            Ok((maj, min)) => out!("CUDA driver: API {maj}.{min}"),
            Err(e) => out!("CUDA driver: {e}"),
        }
        match sptrans::runtime::device_count() {
            Ok(n) => out!("devices: {n}"),
            Err(e) => out!("devices: {e}"),
        }
        let start = std::time::Instant::now();
        match crate::open_gpu() {
            Ok(gpu) => {
                let p = gpu.props();
                out!(
                    "device 0: {} (compute capability {}.{}), {} SMs, {:.1} GiB, L2 {} MiB; context and stream in {}",
                    p.name,
                    p.compute_capability.0,
                    p.compute_capability.1,
                    p.sm_count,
                    p.total_memory as f64 / (1u64 << 30) as f64,
                    p.l2_bytes >> 20,
                    ms(start.elapsed())
                );
                if let Ok((free, total)) = gpu.memory_info() {
                    out!("memory: {:.1} GiB free of {:.1} GiB", free as f64 / (1u64 << 30) as f64, total as f64 / (1u64 << 30) as f64);
                }
                if !args.no_bandwidth {
                    match sptrans::runtime::copy_bandwidth_gbs(&gpu, 1 << 30, 20) {
                        Ok(bw) => out!("device-to-device copy: {bw:.0} GB/s (read + write)"),
                        Err(e) => out!("device-to-device copy: {e}"),
                    }
                }
                // Every module, as the commands would load it: which image, and how long.
                out!(
                    "modules (loaded now; {}):",
                    match gpu.image_policy() {
                        sptrans::runtime::ImagePolicy::Auto => "the cubin for this device where embedded",
                        sptrans::runtime::ImagePolicy::PtxOnly => "PTX only: CUDA_FORCE_PTX_JIT=1",
                    }
                );
                let mut total = std::time::Duration::ZERO;
                for m in modules() {
                    match gpu.load_module(m) {
                        Ok(l) => {
                            total += l.time;
                            let why = l.why_ptx.map(|w| format!(" ({w})")).unwrap_or_default();
                            out!("  {:<10} {:<17} {:>9}  {} kernels{why}", m.name(), l.image.to_string(), ms(l.time), m.kernels().len());
                        }
                        Err(e) => out!("  {:<10} {e}", m.name()),
                    }
                }
                out!("  all modules loaded in {}", ms(total));
                let start = std::time::Instant::now();
                match sptrans::transpose::baselines::CuSparseTranspose::new(&gpu).and_then(|c| c.version()) {
                    Ok(v) => out!("cuSPARSE: {v} ({}), loaded in {}", sptrans::transpose::cusparse_library().unwrap_or("?"), ms(start.elapsed())),
                    Err(e) => out!("cuSPARSE: {e}"),
                }
            }
            Err(e) => out!("device 0: {e}"),
        }
    }
    // More than one GPU (`--gpus N`): NCCL, loaded at run time like the driver.
    match sptrans::runtime::vendor::nccl_library() {
        Ok(lib) => out!("NCCL (for --gpus N): {lib}"),
        Err(why) => out!("NCCL (for --gpus N): not found ({why})"),
    }
    out!("embedded modules:");
    for m in modules() {
        let archs: Vec<String> = m.cubins().iter().map(|c| format!("sm_{}", c.sm())).collect();
        out!(
            "  {:<10} PTX target {:<6} ISA {:<5} {:>3} kernels; cubins {}",
            m.name(),
            m.target().unwrap_or("?"),
            m.isa_version().unwrap_or("?"),
            m.kernels().len(),
            if archs.is_empty() { "none".into() } else { archs.join(" ") }
        );
    }
    out!("device toolchain (only needed to change kernels; cargo xtask setup-ptx-toolchain):");
    for (what, at) in toolchain() {
        out!("  {what:<20} {}", at.map_or("not installed".into(), |p| p.display().to_string()));
    }
    Ok(())
}
