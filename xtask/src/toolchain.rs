//! Finding and installing the Rust→PTX toolchain.
//!
//! Two flavours, tried in this order:
//! - **Debian bookworm**: `rustc-web`/`cargo-web` 1.96 (`/usr/bin/rustc`, `/usr/bin/cargo`),
//!   `rust-web-src` (the `core` source for `-Zbuild-std`), `llvm-22` (`llvm-link`, `opt`, `llc`),
//!   and `llvm-bitcode-linker` built from `/usr/src/rustc-<ver>/src/tools/llvm-bitcode-linker`.
//!   The committed PTX is built with this one.
//! - **rustup**: a nightly toolchain with `rust-src`, `llvm-tools` and `llvm-bitcode-linker`.
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Res;

const DEBIAN_PACKAGES: [&str; 4] = ["rustc-web", "cargo-web", "rust-web-src", "llvm-22"];
const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";
const RUST_SRC: &str = "/usr/lib/rustlib/src/rust/library/core";

/// A usable device toolchain: how to run cargo for the nvptx64 build.
pub struct Toolchain {
    /// Human-readable description for messages.
    pub describe: String,
    cargo: Vec<String>,
    env: Vec<(String, String)>,
}

impl Toolchain {
    /// A `cargo` command for this toolchain, with the environment of the outer (rustup) cargo
    /// removed so it cannot leak into the device build.
    pub fn cargo(&self) -> Command {
        let mut c = Command::new(&self.cargo[0]);
        c.args(&self.cargo[1..]);
        for (k, _) in std::env::vars() {
            if k.starts_with("CARGO") || k.starts_with("RUSTUP") || k == "RUSTC" || k == "RUSTFLAGS" || k == "RUSTC_WRAPPER" {
                c.env_remove(&k);
            }
        }
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from("/root/.cargo"))
}

fn bitcode_linker() -> Option<PathBuf> {
    let p = cargo_home().join("bin/llvm-bitcode-linker");
    if p.is_file() {
        return Some(p);
    }
    which("llvm-bitcode-linker")
}

/// First `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    sptrans_devtools::which(name)
}

fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn debian_missing_pieces() -> Vec<String> {
    let mut missing = vec![];
    if output(Command::new("/usr/bin/rustc").arg("--version")).is_none() {
        missing.push("/usr/bin/rustc (rustc-web)".into());
    }
    if !Path::new("/usr/bin/cargo").is_file() {
        missing.push("/usr/bin/cargo (cargo-web)".into());
    }
    if !Path::new(RUST_SRC).is_dir() {
        missing.push(format!("{RUST_SRC} (rust-web-src)"));
    }
    for tool in ["llvm-link", "opt", "llc"] {
        if !Path::new(LLVM_BIN).join(tool).is_file() {
            missing.push(format!("{LLVM_BIN}/{tool} (llvm-22)"));
        }
    }
    if bitcode_linker().is_none() {
        missing.push("llvm-bitcode-linker (cargo xtask setup-ptx-toolchain builds it)".into());
    }
    missing
}

/// The installed device toolchain, or a message saying what is missing and how to install it.
pub fn find() -> Res<Toolchain> {
    let debian = debian_missing_pieces();
    if debian.is_empty() {
        let linker = bitcode_linker().ok_or("llvm-bitcode-linker vanished")?;
        let linker_dir = linker.parent().map(Path::to_path_buf).unwrap_or_default();
        let path = std::env::join_paths(
            [PathBuf::from(LLVM_BIN), linker_dir].into_iter().chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
        )
        .map_err(|e| e.to_string())?;
        let version = output(Command::new("/usr/bin/rustc").arg("--version")).unwrap_or_default();
        return Ok(Toolchain {
            describe: format!("Debian {version}, LLVM 22, {}", linker.display()),
            cargo: vec!["/usr/bin/cargo".into()],
            env: vec![
                ("RUSTC".into(), "/usr/bin/rustc".into()),
                ("RUSTC_BOOTSTRAP".into(), "1".into()),
                ("PATH".into(), path.to_string_lossy().into_owned()),
            ],
        });
    }
    if let Some(v) = output(Command::new("rustup").args(["run", "nightly", "rustc", "--version"])) {
        let comps = output(Command::new("rustup").args(["component", "list", "--installed", "--toolchain", "nightly"])).unwrap_or_default();
        let need = ["rust-src", "llvm-tools", "llvm-bitcode-linker"];
        let absent: Vec<_> = need.iter().filter(|c| !comps.lines().any(|l| l.starts_with(*c))).collect();
        if absent.is_empty() {
            return Ok(Toolchain {
                describe: format!("rustup {v}"),
                cargo: vec!["rustup".into(), "run".into(), "nightly".into(), "cargo".into()],
                env: vec![],
            });
        }
    }
    Err(format!("the Rust->PTX device toolchain is not installed (missing: {}).\n{}", debian.join(", "), install_hint()))
}

fn install_hint() -> String {
    format!(
        "  Debian bookworm: cargo xtask setup-ptx-toolchain   (apt-get install {}; builds llvm-bitcode-linker)\n  \
         rustup elsewhere: rustup toolchain install nightly --profile minimal --component rust-src,llvm-tools,llvm-bitcode-linker",
        DEBIAN_PACKAGES.join(" ")
    )
}

fn is_bookworm() -> bool {
    std::fs::read_to_string("/etc/os-release").is_ok_and(|s| s.lines().any(|l| l == "VERSION_CODENAME=bookworm"))
}

fn run(cmd: &mut Command) -> Res {
    let shown = format!("{cmd:?}");
    let st = cmd.status().map_err(|e| format!("could not run {shown}: {e}"))?;
    st.success().then_some(()).ok_or(format!("{shown} failed ({st})"))
}

/// `cargo xtask setup-ptx-toolchain`.
pub fn setup() -> Res {
    if !is_bookworm() {
        println!("Not Debian bookworm: install the device toolchain with rustup instead:\n{}", install_hint());
        println!("ptxas (optional, validates the PTX): python3 -m pip install nvidia-cuda-nvcc, or a CUDA toolkit");
        return find().map(|t| println!("found: {}", t.describe));
    }
    let missing: Vec<&str> = DEBIAN_PACKAGES
        .into_iter()
        .filter(|p| output(Command::new("dpkg-query").args(["-W", "-f=${Status}", p])).is_none_or(|s| !s.contains("ok installed")))
        .collect();
    if missing.is_empty() {
        println!("apt: {} already installed", DEBIAN_PACKAGES.join(", "));
    } else {
        let sudo: &[&str] = if output(Command::new("id").arg("-u")).as_deref() == Some("0") { &[] } else { &["sudo"] };
        let apt = |args: &[&str]| {
            let mut all: Vec<&str> = sudo.to_vec();
            all.push("apt-get");
            all.extend_from_slice(args);
            let mut c = Command::new(all[0]);
            c.args(&all[1..]).env("DEBIAN_FRONTEND", "noninteractive");
            c
        };
        println!("apt: installing {}", missing.join(" "));
        let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
        install.extend(&missing);
        if run(&mut apt(&install)).is_err() {
            run(&mut apt(&["update", "-qq"]))?;
            run(&mut apt(&install))?;
        }
        println!("apt: installed {}", missing.join(" "));
    }
    if let Some(p) = bitcode_linker() {
        println!("llvm-bitcode-linker: already at {}", p.display());
    } else {
        build_linker()?;
    }
    let t = find()?;
    println!("device toolchain ready: {}", t.describe);
    if crate::ptx::find_ptxas().is_none() {
        println!("note: ptxas not found; `python3 -m pip install nvidia-cuda-nvcc` lets build-ptx validate the PTX for sm_90");
    }
    Ok(())
}

fn build_linker() -> Res {
    let src = std::fs::read_dir("/usr/src")
        .map_err(|e| format!("/usr/src: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path().join("src/tools/llvm-bitcode-linker")))
        .find(|p| p.join("Cargo.toml").is_file())
        .ok_or("no /usr/src/rustc-*/src/tools/llvm-bitcode-linker (package rust-web-src)")?;
    let tmp = std::env::temp_dir().join(format!("sptrans-llvm-bitcode-linker-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    run(Command::new("cp").arg("-r").arg(&src).arg(&tmp))?;
    let manifest = tmp.join("Cargo.toml");
    let mut toml = std::fs::read_to_string(&manifest).map_err(|e| e.to_string())?;
    toml.push_str("\n[workspace]\n");
    std::fs::write(&manifest, toml).map_err(|e| e.to_string())?;
    let root = cargo_home();
    println!("llvm-bitcode-linker: building from {} into {}/bin", src.display(), root.display());
    let mut c = Command::new("/usr/bin/cargo");
    for (k, _) in std::env::vars() {
        if k.starts_with("CARGO") && k != "CARGO_HOME" || k.starts_with("RUSTUP") || k == "RUSTC" {
            c.env_remove(&k);
        }
    }
    c.env("RUSTC", "/usr/bin/rustc").args(["install", "--quiet", "--path"]).arg(&tmp).arg("--root").arg(&root);
    let r = run(&mut c);
    let _ = std::fs::remove_dir_all(&tmp);
    r?;
    println!("llvm-bitcode-linker: installed {}/bin/llvm-bitcode-linker", root.display());
    Ok(())
}
