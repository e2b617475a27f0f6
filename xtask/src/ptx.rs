//! `cargo xtask build-ptx`: kernel crates → committed PTX modules, validated with ptxas.
//!
//! A kernel crate under `kernels-rs/` names its PTX module and the host crate that embeds it:
//!
//! ```toml
//! [package.metadata.ptx]
//! module = "scan"          # written to <host>/ptx/scan.ptx
//! host = "crates/scan"     # relative to the repository root
//! # optional: CUDA's __launch_bounds__(threads, min blocks per SM) for named kernels, written
//! # into the PTX as `.maxntid` / `.minnctapersm` (ptxas then caps the registers to fit)
//! launch_bounds = "kernel_a:512:2, kernel_b:256:4"
//! ```
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::toolchain::{self, Toolchain};
use crate::{root, Res};

/// One kernel crate and where its PTX goes.
pub struct KernelCrate {
    /// Cargo package name (`scan-kernels`).
    pub package: String,
    /// PTX module name (`scan`).
    pub module: String,
    /// The committed PTX file.
    pub dest: PathBuf,
    /// `(kernel, threads, min blocks per SM)` from `launch_bounds`.
    pub bounds: Vec<(String, u32, u32)>,
    /// The PTX ISA version when a module needs a newer one than the target's default (7.0 for
    /// sm_80), from `ptx_isa` (e.g. `"74"`: `-C target-feature=+ptx74`, for `L2::cache_hint`).
    pub ptx_isa: Option<String>,
}

/// Parses `launch_bounds = "name:threads:blocks, ..."`.
fn parse_bounds(spec: &str) -> Res<Vec<(String, u32, u32)>> {
    spec.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| {
            let parts: Vec<&str> = e.split(':').collect();
            let bad = || format!("launch_bounds entry `{e}`: expected kernel:threads:blocks");
            let [name, nt, blocks] = parts[..] else { return Err(bad()) };
            Ok((name.to_string(), nt.parse().map_err(|_| bad())?, blocks.parse().map_err(|_| bad())?))
        })
        .collect()
}

/// Writes `.maxntid threads, 1, 1` and `.minnctapersm blocks` after each named entry's parameter
/// list (where nvcc puts `__launch_bounds__`); an entry not in the PTX is an error.
pub fn apply_launch_bounds(ptx: &str, bounds: &[(String, u32, u32)]) -> Res<String> {
    let mut lines: Vec<String> = ptx.lines().map(str::to_string).collect();
    for (name, nt, blocks) in bounds {
        let head = format!(".entry {name}(");
        let at = lines.iter().position(|l| l.contains(&head)).ok_or(format!("launch_bounds: no kernel `{name}` in the PTX"))?;
        let close = (at..lines.len()).find(|&i| lines[i].trim_start().starts_with(')')).ok_or(format!("launch_bounds: `{name}`'s parameter list does not end"))?;
        lines.insert(close + 1, format!(".maxntid {nt}, 1, 1\n.minnctapersm {blocks}"));
    }
    let mut out = lines.join("\n");
    if ptx.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

fn metadata_value(section: &str, key: &str) -> Option<String> {
    section.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
    })
}

/// Every kernel crate with a `[package.metadata.ptx]` table, sorted by module name.
pub fn kernel_crates() -> Res<Vec<KernelCrate>> {
    let kdir = root().join("kernels-rs");
    let mut out = vec![];
    for entry in std::fs::read_dir(&kdir).map_err(|e| format!("{}: {e}", kdir.display()))? {
        let manifest = entry.map_err(|e| e.to_string())?.path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else { continue };
        let Some(start) = text.find("[package.metadata.ptx]") else { continue };
        let section = text[start..].lines().skip(1).take_while(|l| !l.starts_with('[')).collect::<Vec<_>>().join("\n");
        let package = text
            .lines()
            .find_map(|l| l.strip_prefix("name").and_then(|r| r.trim().strip_prefix('=')).map(|v| v.trim().trim_matches('"').to_string()))
            .ok_or(format!("{}: no package name", manifest.display()))?;
        let (Some(module), Some(host)) = (metadata_value(&section, "module"), metadata_value(&section, "host")) else {
            return Err(format!("{}: [package.metadata.ptx] needs `module` and `host`", manifest.display()));
        };
        let dest = root().join(host).join("ptx").join(format!("{module}.ptx"));
        let bounds = parse_bounds(&metadata_value(&section, "launch_bounds").unwrap_or_default()).map_err(|e| format!("{}: {e}", manifest.display()))?;
        let ptx_isa = metadata_value(&section, "ptx_isa");
        if let Some(v) = &ptx_isa {
            if v.len() != 2 || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("{}: ptx_isa = \"{v}\": two digits expected, e.g. \"74\"", manifest.display()));
            }
        }
        out.push(KernelCrate { package, module, dest, bounds, ptx_isa });
    }
    out.sort_by(|a, b| a.module.cmp(&b.module));
    Ok(out)
}

/// Builds one kernel crate and returns the PTX text.
fn build_one(tc: &Toolchain, k: &KernelCrate, arch: &str) -> Res<String> {
    let kdir = root().join("kernels-rs");
    let target_dir = kdir.join("target");
    let mut c = tc.cargo();
    c.current_dir(&kdir)
                // Kernel crates are plain rlibs (so host crates can depend on their partition math);
        // the PTX comes from building this one as a cdylib.
        .args(["rustc", "--quiet", "--release", "-Zbuild-std=core", "--target", "nvptx64-nvidia-cuda", "-p", &k.package])
        .args(["--lib", "--crate-type", "cdylib"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("RUSTFLAGS", match &k.ptx_isa {
            Some(v) => format!("-C target-cpu={arch} -C target-feature=+ptx{v}"),
            None => format!("-C target-cpu={arch}"),
        });
    let st = c.status().map_err(|e| format!("could not run cargo for `{}`: {e}", k.package))?;
    if !st.success() {
        return Err(format!("building kernel crate `{}` (module `{}`) failed", k.package, k.module));
    }
    let built = target_dir.join("nvptx64-nvidia-cuda/release").join(format!("{}.ptx", k.package.replace('-', "_")));
    let ptx = std::fs::read_to_string(&built).map_err(|e| format!("{}: {e}", built.display()))?;
    apply_launch_bounds(&ptx, &k.bounds).map_err(|e| format!("module `{}`: {e}", k.module))
}

/// `ptxas`, found as `sptrans info` finds it ([`sptrans_devtools::find_ptxas`]).
pub fn find_ptxas() -> Option<PathBuf> {
    sptrans_devtools::find_ptxas()
}

/// Validates `ptx` for sm_90 and prints registers, shared memory, stack and spills per kernel.
fn validate(ptxas: &Path, module: &str, ptx_file: &Path) -> Res {
    let out = Command::new(ptxas)
        .args(["-arch=sm_90", "-v", "-o", "/dev/null"])
        .arg(ptx_file)
        .output()
        .map_err(|e| format!("could not run {}: {e}", ptxas.display()))?;
    let log = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("ptxas -arch=sm_90 rejected module `{module}`:\n{log}"));
    }
    let mut kernel = String::new();
    let mut frame = String::new();
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            kernel = rest.split('\'').next().unwrap_or("").to_string();
        } else if line.contains("bytes stack frame") {
            frame = line.trim().to_string();
        } else if let Some(rest) = line.split("Used ").nth(1) {
            println!("    {module}::{kernel}: {rest}; {frame}");
        }
    }
    Ok(())
}

/// `cargo xtask build-ptx [--arch A] [--check]`.
pub fn build_ptx(arch: &str, check: bool) -> Res {
    let tc = toolchain::find()?;
    let crates = kernel_crates()?;
    println!("build-ptx: {} module(s) for {arch} with {}", crates.len(), tc.describe);
    let ptxas = find_ptxas();
    let tmp = std::env::temp_dir().join(format!("sptrans-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let mut stale = vec![];
    for k in &crates {
        let ptx = build_one(&tc, k, arch)?;
        let fresh = tmp.join(format!("{}.ptx", k.module));
        std::fs::write(&fresh, &ptx).map_err(|e| e.to_string())?;
        let rel = k.dest.strip_prefix(root()).unwrap_or(&k.dest).display().to_string();
        if check {
            match std::fs::read_to_string(&k.dest) {
                Ok(committed) if committed == ptx => println!("  {rel}: up to date"),
                Ok(_) => stale.push(format!("{rel} (module `{}`) differs from a fresh build", k.module)),
                Err(_) => stale.push(format!("{rel} (module `{}`) is missing", k.module)),
            }
        } else {
            if let Some(dir) = k.dest.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            let unchanged = std::fs::read_to_string(&k.dest).is_ok_and(|c| c == ptx);
            if !unchanged {
                std::fs::write(&k.dest, &ptx).map_err(|e| format!("{rel}: {e}"))?;
            }
            println!("  {rel}: {} ({} lines)", if unchanged { "unchanged" } else { "written" }, ptx.lines().count());
        }
        if let Some(p) = &ptxas {
            validate(p, &k.module, &fresh)?;
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    match &ptxas {
        Some(p) => println!("build-ptx: every module passed {} -arch=sm_90", p.display()),
        None if std::env::var("SPTRANS_REQUIRE_PTXAS").is_ok_and(|v| v == "1") => {
            return Err("SPTRANS_REQUIRE_PTXAS=1 but ptxas was not found (python3 -m pip install nvidia-cuda-nvcc)".into())
        }
        None => println!("build-ptx: ptxas not found, PTX not validated (python3 -m pip install nvidia-cuda-nvcc)"),
    }
    if !stale.is_empty() {
        return Err(format!("committed PTX is stale; run `cargo xtask build-ptx` and commit:\n  {}", stale.join("\n  ")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_bounds_go_after_the_parameter_list() {
        let ptx = ".visible .entry a(\n\t.param .u64 a_param_0\n)\n{\n\tret;\n}\n.visible .entry b(\n)\n{\n}\n";
        let bounds = parse_bounds("b:512:2").unwrap();
        let out = apply_launch_bounds(ptx, &bounds).unwrap();
        assert_eq!(out, ".visible .entry a(\n\t.param .u64 a_param_0\n)\n{\n\tret;\n}\n.visible .entry b(\n)\n.maxntid 512, 1, 1\n.minnctapersm 2\n{\n}\n");
        assert!(apply_launch_bounds(ptx, &parse_bounds("c:1:1").unwrap()).is_err());
        assert!(parse_bounds("a:512").is_err());
        assert!(parse_bounds("").unwrap().is_empty());
    }
}
