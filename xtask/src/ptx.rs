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
//!
//! Beside each `NAME.ptx` it writes `NAME.sm_XY.cubin.gz`: the PTX assembled by the pinned
//! `ptxas` ([`archs::PTXAS_RELEASE`]) for each of [`archs::CUBIN_ARCHS`], gzip-compressed, so the
//! runtime loads machine code instead of JIT-compiling the PTX in every new process.
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::toolchain::{self, Toolchain};
use crate::{root, Res};

/// The cubin architectures and the pinned ptxas release: the runtime's own file.
#[path = "../../crates/runtime/src/archs.rs"]
#[allow(dead_code)]
pub mod archs;

/// The pip requirement that installs the pinned ptxas.
pub fn ptxas_requirement() -> String {
    format!("nvidia-cuda-nvcc-cu12=={}", archs::PTXAS_RELEASE)
}

/// The committed cubin of `module` for `sm` beside `ptx` (`NAME.sm_XY.cubin.gz`).
pub fn cubin_path(ptx: &Path, module: &str, sm: u32) -> PathBuf {
    ptx.with_file_name(format!("{module}.sm_{sm}.cubin.gz"))
}

/// `bytes` gzip-compressed with a fixed header (no name, time 0): the same input gives the same file.
fn gzip(bytes: &[u8]) -> Res<Vec<u8>> {
    let mut enc = flate2::GzBuilder::new().mtime(0).write(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes).map_err(|e| e.to_string())?;
    enc.finish().map_err(|e| e.to_string())
}

/// The contents of a committed `.cubin.gz`, or `None` when missing or not gzip.
fn gunzip_file(path: &Path) -> Option<Vec<u8>> {
    let gz = std::fs::read(path).ok()?;
    let mut out = vec![];
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut out).ok()?;
    Some(out)
}

/// Assembles `ptx_file` for `sm_{sm}` into `out`; with `verbose`, returns ptxas's resource report.
fn assemble(ptxas: &Path, module: &str, ptx_file: &Path, sm: u32, out: &Path, verbose: bool) -> Res<String> {
    let mut c = Command::new(ptxas);
    c.arg(format!("-arch=sm_{sm}")).arg("-o").arg(out).arg(ptx_file);
    if verbose {
        c.arg("-v");
    }
    let run = c.output().map_err(|e| format!("could not run {}: {e}", ptxas.display()))?;
    let log = String::from_utf8_lossy(&run.stderr).to_string() + &String::from_utf8_lossy(&run.stdout);
    if !run.status.success() {
        return Err(format!("ptxas -arch=sm_{sm} rejected module `{module}`:\n{log}"));
    }
    Ok(log)
}

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
        let close = (at..lines.len())
            .find(|&i| lines[i].trim_start().starts_with(')'))
            .ok_or(format!("launch_bounds: `{name}`'s parameter list does not end"))?;
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
        let bounds =
            parse_bounds(&metadata_value(&section, "launch_bounds").unwrap_or_default()).map_err(|e| format!("{}: {e}", manifest.display()))?;
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
        .env(
            "RUSTFLAGS",
            match &k.ptx_isa {
                Some(v) => format!("-C target-cpu={arch} -C target-feature=+ptx{v}"),
                None => format!("-C target-cpu={arch}"),
            },
        );
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

/// Prints registers, shared memory, stack and spills per kernel from ptxas's `-v` report.
fn print_report(module: &str, log: &str) {
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
}

/// Assembles every module for every cubin architecture (in parallel), prints the sm_90 resource
/// report, and writes the cubins (or, with `check`, compares them with the committed ones,
/// adding the stale ones to `stale`).
fn cubins(ptxas: &Path, built: &[(&KernelCrate, PathBuf)], tmp: &Path, check: bool, stale: &mut Vec<String>) -> Res {
    let jobs: Vec<(&KernelCrate, &PathBuf, u32)> = built.iter().flat_map(|(k, f)| archs::CUBIN_ARCHS.iter().map(move |&sm| (*k, f, sm))).collect();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(jobs.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    /// A job's index, and its cubin with ptxas's log.
    type Assembled = (usize, Res<(Vec<u8>, String)>);
    let results: Vec<Assembled> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = vec![];
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&(k, ptx_file, sm)) = jobs.get(i) else { break };
                        let out = tmp.join(format!("{}.sm_{sm}.cubin", k.module));
                        let r = assemble(ptxas, &k.module, ptx_file, sm, &out, sm == 90)
                            .and_then(|log| std::fs::read(&out).map(|b| (b, log)).map_err(|e| format!("{}: {e}", out.display())));
                        done.push((i, r));
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    let mut results = results;
    results.sort_by_key(|(i, _)| *i);
    if results.len() != jobs.len() {
        return Err("a ptxas worker thread panicked".into());
    }
    for (i, r) in results {
        let (k, _, sm) = jobs[i];
        let (cubin, log) = r?;
        if sm == 90 {
            print_report(&k.module, &log);
        }
        let dest = cubin_path(&k.dest, &k.module, sm);
        let rel = dest.strip_prefix(root()).unwrap_or(&dest).display().to_string();
        let committed = gunzip_file(&dest);
        if check {
            match committed {
                Some(c) if c == cubin => {}
                Some(_) => stale.push(format!("{rel} differs from a fresh ptxas {} build", archs::PTXAS_RELEASE)),
                None => stale.push(format!("{rel} is missing")),
            }
        } else if committed.as_deref() != Some(&cubin[..]) {
            std::fs::write(&dest, gzip(&cubin)?).map_err(|e| format!("{rel}: {e}"))?;
            println!("  {rel}: written");
        }
    }
    // Cubins of architectures no longer built would be embedded by nobody but still shipped.
    for (k, _) in built {
        let Some(dir) = k.dest.parent() else { continue };
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        for e in entries.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(sm) = name.strip_prefix(&format!("{}.sm_", k.module)).and_then(|r| r.strip_suffix(".cubin.gz")) else { continue };
            if !sm.parse::<u32>().is_ok_and(|sm| archs::CUBIN_ARCHS.contains(&sm)) {
                if check {
                    stale.push(format!("{} is not an architecture of CUBIN_ARCHS", e.path().display()));
                } else {
                    std::fs::remove_file(e.path()).map_err(|err| format!("{}: {err}", e.path().display()))?;
                    println!("  {name}: removed (not in CUBIN_ARCHS)");
                }
            }
        }
    }
    Ok(())
}

/// `cargo xtask build-ptx [--arch A] [--check]`.
pub fn build_ptx(arch: &str, check: bool) -> Res {
    let tc = toolchain::find()?;
    let crates = kernel_crates()?;
    println!("build-ptx: {} module(s) for {arch} with {}", crates.len(), tc.describe);
    let require = std::env::var("SPTRANS_REQUIRE_PTXAS").is_ok_and(|v| v == "1");
    let ptxas = sptrans_devtools::find_ptxas_release(archs::PTXAS_RELEASE);
    let install = format!("python3 -m pip install {}", ptxas_requirement());
    if ptxas.is_none() && (require || !check) {
        let other = find_ptxas()
            .map(|p| format!(" (found {} of release {})", p.display(), sptrans_devtools::ptxas_release(&p).unwrap_or("?".into())))
            .unwrap_or_default();
        return Err(format!("the cubins are built with ptxas {} and none was found{other}: {install}", archs::PTXAS_RELEASE));
    }
    let tmp = std::env::temp_dir().join(format!("sptrans-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    let mut stale = vec![];
    let mut built = vec![];
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
        built.push((k, fresh));
    }
    match &ptxas {
        Some(p) => {
            println!(
                "build-ptx: assembling {} architectures (sm_{}) with {}; sm_90 resources:",
                archs::CUBIN_ARCHS.len(),
                archs::CUBIN_ARCHS.map(|a| a.to_string()).join(", sm_"),
                p.display()
            );
            cubins(p, &built, &tmp, check, &mut stale)?;
            println!("build-ptx: every module assembled for every architecture; cubins {}", if check { "compared" } else { "up to date" });
        }
        None => println!("build-ptx: ptxas {} not found, cubins not checked ({install})", archs::PTXAS_RELEASE),
    }
    let _ = std::fs::remove_dir_all(&tmp);
    if !stale.is_empty() {
        return Err(format!("committed PTX or cubins are stale; run `cargo xtask build-ptx` and commit:\n  {}", stale.join("\n  ")));
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
        assert_eq!(
            out,
            ".visible .entry a(\n\t.param .u64 a_param_0\n)\n{\n\tret;\n}\n.visible .entry b(\n)\n.maxntid 512, 1, 1\n.minnctapersm 2\n{\n}\n"
        );
        assert!(apply_launch_bounds(ptx, &parse_bounds("c:1:1").unwrap()).is_err());
        assert!(parse_bounds("a:512").is_err());
        assert!(parse_bounds("").unwrap().is_empty());
    }

    #[test]
    fn ci_installs_the_pinned_ptxas_and_the_macro_names_every_architecture() {
        let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
        assert!(ci.contains(&ptxas_requirement()), ".ci/run must install {}", ptxas_requirement());
        let module = std::fs::read_to_string(root().join("crates/runtime/src/module.rs")).unwrap();
        for sm in archs::CUBIN_ARCHS {
            assert!(module.contains(&format!("embed_module!(@cubin $name, {sm})")), "embed_module! lacks sm_{sm}");
        }
        assert_eq!(cubin_path(Path::new("/a/ptx/scan.ptx"), "scan", 90), Path::new("/a/ptx/scan.sm_90.cubin.gz"));
        let gz = gzip(b"abc").unwrap();
        assert_eq!(gz, gzip(b"abc").unwrap(), "gzip output must not depend on the time");
    }
}
