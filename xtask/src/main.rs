//! `cargo xtask`: the project's automation.
//!
//! - `setup-ptx-toolchain`: installs the Rust→PTX toolchain on Debian bookworm; elsewhere prints
//!   what to install.
//! - `build-ptx [--arch sm_80] [--check]`: builds every kernel crate of `kernels-rs/` to PTX and
//!   writes it inside the host crate that embeds it, with a cubin per architecture assembled by
//!   the pinned ptxas (or, with `--check`, fails when a committed PTX or cubin differs from a
//!   fresh build).
//! - `ptx-ops [--base REV] [MODULE...]`: each kernel's memory instructions in the committed PTX;
//!   with `--base`, the kernels whose counts differ from `REV`'s (the check of a conversion to
//!   argument structs).
//! - `test [cargo test args]`: the README's test command.
#[cfg_attr(not(test), allow(dead_code))]
mod arch;
mod ptx;
mod ptxops;
mod test;
mod toolchain;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>
  setup-ptx-toolchain            install the Rust->PTX device toolchain (Debian bookworm) or say what to install
  build-ptx [--arch sm_XX] [--check]
                                 build kernels-rs/ to PTX into each host crate's ptx/ (default --arch sm_80)
                                 and assemble the cubins (ptxas 12.9.86: pip install nvidia-cuda-nvcc-cu12==12.9.86);
                                 --check: fail if a committed PTX or cubin differs from a fresh build
  ptx-ops [--base REV] [MODULE...]
                                 each kernel's memory instructions (loads, stores, atomics) in the committed PTX;
                                 --base: only the kernels whose counts differ from the PTX at git revision REV
  test [ARGS...]                 run the workspace tests (ARGS go to cargo test), report skipped GPU tests,
                                 and run build-ptx --check when the device toolchain is installed";

/// An error message for the user; xtask prints it and exits 1.
pub type Res<T = ()> = Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup-ptx-toolchain") => toolchain::setup(),
        Some("build-ptx") => parse_build_ptx(&args[1..]).and_then(|(arch, check)| ptx::build_ptx(&arch, check)),
        Some("ptx-ops") => ptxops::run(&args[1..]),
        Some("test") => test::run(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("xtask: {msg}");
            ExitCode::FAILURE
        }
    }
}

fn parse_build_ptx(args: &[String]) -> Res<(String, bool)> {
    let (mut arch, mut check) = ("sm_80".to_string(), false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => check = true,
            "--arch" => arch = it.next().ok_or("--arch needs a value, e.g. sm_80")?.clone(),
            s if s.starts_with("--arch=") => arch = s["--arch=".len()..].to_string(),
            other => return Err(format!("build-ptx: unknown argument `{other}`\n{USAGE}")),
        }
    }
    let digits = arch.strip_prefix("sm_").unwrap_or("");
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("--arch must look like sm_80, got `{arch}`"));
    }
    Ok((arch, check))
}

/// The host workspace's root (parent of `xtask/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}
