//! Finding NVIDIA's vendor libraries at run time, for the baselines the crates compare against
//! (cuSPARSE: `gpu-transpose`'s `csr2cscEx2`, `gpu-spmv`'s `cusparseSpMV`, `gpu-csrc`'s SpMM)
//! and the dense algebra built on (cuBLAS: `gpu-svd`). The loader's usual
//! search (sonames, `LD_LIBRARY_PATH`, the system's directories) and an environment variable to
//! point elsewhere; a missing library is an error value, never cudarc's panic.
use std::path::PathBuf;
use std::sync::OnceLock;

/// Environment variable naming the cuSPARSE shared library to load (a full path), tried first.
pub const CUSPARSE_LIB_ENV: &str = "SPTRANS_CUSPARSE_LIB";

/// Environment variable naming the cuBLAS shared library to load (a full path), tried first.
pub const CUBLAS_LIB_ENV: &str = "SPTRANS_CUBLAS_LIB";

/// Environment variable naming the NCCL shared library to load (a full path), tried first. NCCL's
/// soname is `libnccl.so.2`, which cudarc's loader does not ask for: the library must also be
/// reachable as `libnccl.so` (a link beside it, on `LD_LIBRARY_PATH`, as
/// `benches/dist-device-run.sh` makes for PyTorch's copy).
pub const NCCL_LIB_ENV: &str = "SPTRANS_NCCL_LIB";

/// Loads cuSPARSE so that cudarc's loader finds it; `Ok(description)` or why not.
fn load() -> &'static std::result::Result<String, String> {
    static LIB: OnceLock<std::result::Result<String, String>> = OnceLock::new();
    LIB.get_or_init(|| load_library("cusparse", CUSPARSE_LIB_ENV))
}

/// Loads cuBLAS so that cudarc's loader finds it; `Ok(description)` or why not.
fn load_cublas() -> &'static std::result::Result<String, String> {
    static LIB: OnceLock<std::result::Result<String, String>> = OnceLock::new();
    LIB.get_or_init(|| load_library("cublas", CUBLAS_LIB_ENV))
}

/// Loads NCCL so that cudarc's loader finds it; `Ok(description)` or why not.
fn load_nccl() -> &'static std::result::Result<String, String> {
    static LIB: OnceLock<std::result::Result<String, String>> = OnceLock::new();
    LIB.get_or_init(|| load_library("nccl", NCCL_LIB_ENV))
}

/// Loads library `lib` (cudarc's name: `cusparse`, `cublas`) by the path in `env` or by the
/// loader's search, keeping it loaded; `Ok(description)` (naming the path in `env` when it did
/// not load and the search found the library) or why not.
fn load_library(lib: &str, env: &str) -> std::result::Result<String, String> {
    let names = cudarc::get_lib_name_candidates(lib);
    // cudarc dlopens these names; if one already loads, cudarc will find it.
    let by_name = |names: &[String]| {
        names.iter().find_map(|n| {
            // SAFETY: loading an NVIDIA library runs its initializers, which have no
            // preconditions.
            unsafe { libloading::Library::new(n) }.ok().map(|l| {
                std::mem::forget(l);
                n.clone()
            })
        })
    };
    let mut tried = Vec::new();
    // The user's path first, loaded and kept loaded, so that cudarc's dlopen by soname
    // (libcusparse.so.12) finds it; then the loader's usual search.
    if let Some(path) = std::env::var_os(env).map(PathBuf::from) {
        // SAFETY: loading an NVIDIA library runs its initializers, which have no
        // preconditions.
        match unsafe { libloading::Library::new(&path) } {
            Ok(l) => {
                std::mem::forget(l);
                if let Some(n) = by_name(&names) {
                    return Ok(format!("{} (as {n})", path.display()));
                }
                tried.push(format!("{}: loaded, but its soname is none of cudarc's names", path.display()));
            }
            Err(e) => tried.push(format!("{}: {e}", path.display())),
        }
    }
    if let Some(n) = by_name(&names) {
        // A path the user set that did not load is named beside the library taken instead.
        return Ok(if tried.is_empty() { n } else { format!("{n} ({env} not usable: {})", tried.join("; ")) });
    }
    Err(format!(
        "lib{lib} not found on the loader path (tried {} names){}; set {env} to its full path",
        names.len(),
        if tried.is_empty() { String::new() } else { format!(" nor usable at: {}", tried.join("; ")) }
    ))
}

/// Whether cuSPARSE can be loaded, and from where.
///
/// # Errors
/// Why the library cannot be loaded (the names and paths tried).
pub fn cusparse_library() -> std::result::Result<&'static str, &'static str> {
    as_strs(load())
}

/// Whether cuBLAS can be loaded, and from where (as [`cusparse_library`], with
/// [`CUBLAS_LIB_ENV`]).
///
/// # Errors
/// Why the library cannot be loaded (the names and paths tried).
pub fn cublas_library() -> std::result::Result<&'static str, &'static str> {
    as_strs(load_cublas())
}

/// Whether NCCL can be loaded, and from where (as [`cusparse_library`], with [`NCCL_LIB_ENV`]).
///
/// # Errors
/// Why the library cannot be loaded (the names and paths tried).
pub fn nccl_library() -> std::result::Result<&'static str, &'static str> {
    as_strs(load_nccl())
}

fn as_strs(r: &'static std::result::Result<String, String>) -> std::result::Result<&'static str, &'static str> {
    match r {
        Ok(s) => Ok(s.as_str()),
        Err(e) => Err(e.as_str()),
    }
}
