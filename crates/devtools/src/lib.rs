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
/// `nvidia-cuda-nvcc` (found through `python3`'s `nvidia` namespace package).
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS").map(PathBuf::from).filter(|p| p.is_file()) {
        return Some(p);
    }
    if let Some(p) = which("ptxas") {
        return Some(p);
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(p) = std::env::var_os(var).map(|d| PathBuf::from(d).join("bin/ptxas")).filter(|p| p.is_file()) {
            return Some(p);
        }
    }
    if Path::new("/usr/local/cuda/bin/ptxas").is_file() {
        return Some("/usr/local/cuda/bin/ptxas".into());
    }
    let out = Command::new("python3").args(["-c", "import nvidia, sys; print('\\n'.join(nvidia.__path__))"]).output().ok()?;
    let dirs = String::from_utf8_lossy(&out.stdout).to_string();
    dirs.lines().find_map(|d| {
        let entries = std::fs::read_dir(d).ok()?;
        entries.filter_map(|e| e.ok()).map(|e| e.path().join("bin/ptxas")).find(|p| p.is_file())
    })
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
