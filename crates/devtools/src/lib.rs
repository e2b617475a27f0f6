#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
use std::path::{Path, PathBuf};
use std::process::Command;

/// `name` on `PATH`, if there.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// `ptxas` from `PTXAS`, `PATH`, `CUDA_PATH` / `CUDA_HOME`, `/usr/local/cuda`, or the pip package
/// `nvidia-cuda-nvcc` (found through `python3`'s `nvidia` namespace package, asked only when
/// no other place has one).
pub fn find_ptxas() -> Option<PathBuf> {
    ptxas_candidates().next()
}

/// Every `ptxas` found, lazily, in [`find_ptxas`]'s order of preference (duplicates removed):
/// the pip packages are looked up (a `python3` run) only when the earlier places are exhausted.
pub fn ptxas_candidates() -> impl Iterator<Item = PathBuf> {
    let fixed = {
        let mut v: Vec<PathBuf> = vec![];
        if let Some(p) = std::env::var_os("PTXAS") {
            v.push(PathBuf::from(p));
        }
        v.extend(which("ptxas"));
        for var in ["CUDA_PATH", "CUDA_HOME"] {
            if let Some(d) = std::env::var_os(var) {
                v.push(PathBuf::from(d).join("bin/ptxas"));
            }
        }
        v.push(PathBuf::from("/usr/local/cuda/bin/ptxas"));
        v
    };
    let pip = std::iter::once(()).flat_map(|()| {
        let out = Command::new("python3").args(["-c", "import nvidia, sys; print('\\n'.join(nvidia.__path__))"]).output().ok();
        let dirs = out.map(|o| String::from_utf8_lossy(&o.stdout).to_string()).unwrap_or_default();
        let mut bins: Vec<PathBuf> = vec![];
        for d in dirs.lines() {
            let Ok(entries) = std::fs::read_dir(d) else { continue };
            let mut found: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path().join("bin/ptxas")).collect();
            found.sort();
            bins.extend(found);
        }
        bins
    });
    let mut seen: Vec<PathBuf> = vec![];
    fixed.into_iter().chain(pip).filter(move |p| {
        let new = p.is_file() && !seen.contains(p);
        if new {
            seen.push(p.clone());
        }
        new
    })
}

/// The release a `ptxas` reports (`12.9.86` from its `V12.9.86` line), or `None` when it does
/// not run or says no version.
pub fn ptxas_release(ptxas: &Path) -> Option<String> {
    let out = Command::new(ptxas).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().find_map(|w| w.strip_prefix('V').filter(|v| v.starts_with(|c: char| c.is_ascii_digit())).map(str::to_string))
}

/// The first `ptxas` of [`ptxas_candidates`] whose release is `release` (e.g. `12.9.86`).
pub fn find_ptxas_release(release: &str) -> Option<PathBuf> {
    ptxas_candidates().find(|p| ptxas_release(p).as_deref() == Some(release))
}

#[cfg(test)]
mod tests {
    #[test]
    fn ptxas_from_the_environment_variable_wins() {
        let exe = std::env::current_exe().unwrap();
        // SAFETY of the test: one test in this binary touches PTXAS.
        unsafe { std::env::set_var("PTXAS", &exe) };
        assert_eq!(super::find_ptxas(), Some(exe));
        unsafe { std::env::remove_var("PTXAS") };
        assert!(super::which("definitely-not-a-program-sptrans").is_none());
    }
}
