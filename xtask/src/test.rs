//! `cargo xtask test`: the README's test command.
//!
//! Runs `cargo test --workspace`, checks that the library crates build beside a user's own cudarc
//! with another CUDA-version feature (default features off), with `SPTRANS_GPU_TEST_LOG` pointing at a file where every GPU
//! test records `pass`, `fail` or `skip` (see `gpu-testkit`), then prints the skipped GPU tests by
//! name and a summary line; then runs `build-ptx --check` when the device toolchain is installed
//! (required when `SPTRANS_REQUIRE_PTX_CHECK=1`, as in CI). With `SPTRANS_REQUIRE_GPU=1` a missing
//! GPU fails the GPU tests instead of skipping them.
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::{ptx, root, toolchain, Res};

/// Totals parsed from libtest's `test result:` lines.
#[derive(Default, Debug, PartialEq)]
struct Totals {
    passed: u64,
    failed: u64,
    ignored: u64,
}

fn parse_result_line(line: &str, t: &mut Totals) {
    let Some(rest) = line.trim().strip_prefix("test result: ") else { return };
    for part in rest.split(';') {
        let words: Vec<&str> = part.split_whitespace().collect();
        let n = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok()).unwrap_or(0);
        match words.as_slice() {
            [_, _, "passed"] => t.passed += n(1),
            [_, "passed"] => t.passed += n(0),
            [_, "failed"] => t.failed += n(0),
            [_, "ignored"] => t.ignored += n(0),
            _ => {}
        }
    }
}

/// Counts parsed from pytest's closing line (`235 passed, 56 skipped in 9.1s`).
#[derive(Default, Debug, PartialEq)]
struct PyTotals {
    passed: u64,
    failed: u64,
    skipped: u64,
}

fn parse_pytest_line(line: &str, t: &mut PyTotals) {
    let l = line.trim().trim_matches('=').trim();
    if !(l.contains(" in ") && (l.contains("passed") || l.contains("failed") || l.contains("skipped") || l.contains("error"))) {
        return;
    }
    let mut got = PyTotals::default();
    for part in l.split(" in ").next().unwrap_or("").split(',') {
        let words: Vec<&str> = part.split_whitespace().collect();
        if let [n, what] = words.as_slice() {
            let Ok(n) = n.parse::<u64>() else { continue };
            match *what {
                "passed" | "xpassed" => got.passed += n,
                "failed" | "error" | "errors" => got.failed += n,
                "skipped" | "xfailed" | "deselected" => got.skipped += n,
                _ => {}
            }
        }
    }
    if got != PyTotals::default() {
        *t = got;
    }
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

/// Runs `cmd`, echoing its stdout and adding its libtest summaries to `totals`; `Ok(success)`.
fn run_counting(mut cmd: Command, totals: &mut Totals) -> Res<bool> {
    let mut child = cmd.stdout(Stdio::piped()).spawn().map_err(|e| format!("could not run {cmd:?}: {e}"))?;
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            parse_result_line(&line, totals);
        }
    }
    Ok(child.wait().map_err(|e| e.to_string())?.success())
}

pub fn run(args: &[String]) -> Res {
    let log = std::env::temp_dir().join(format!("sptrans-gpu-tests-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut totals = Totals::default();
    let mut cmd = cargo();
    cmd.args(["test", "--workspace"]).args(args).env("SPTRANS_GPU_TEST_LOG", &log);
    let host_ok = run_counting(cmd, &mut totals)?;
    // The device crates' pure code (partition math, doc examples) on the host.
    println!("\n== host tests of kernels-rs");
    let mut cmd = cargo();
    cmd.args(["test", "--manifest-path", "kernels-rs/Cargo.toml", "--target-dir", "target/kernels-host"]);
    let kernels_ok = run_counting(cmd, &mut totals)?;

    // A user's own cudarc with another CUDA-version feature must build beside the library crates
    // when they turn default features off (README: "Bringing your own cudarc").
    println!("\n== bring your own cudarc: gpu-transpose without default features, cudarc/cuda-12060");
    let mut cmd = cargo();
    cmd.args([
        "check",
        "-p",
        "gpu-transpose",
        "--lib",
        "--no-default-features",
        "--features",
        "cudarc/cuda-12060",
        "--target-dir",
        "target/byo-cudarc",
    ]);
    let byo_ok = cmd.status().map_err(|e| e.to_string())?.success();

    let python = python_package();

    let records = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    let (mut gpu_pass, mut gpu_fail) = (0u64, 0u64);
    // Skips by reason; a test is counted once however many skips it recorded.
    let mut skipped: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    let mut skipped_names = std::collections::BTreeSet::new();
    for line in records.lines() {
        let mut f = line.splitn(3, '\t');
        match (f.next(), f.next(), f.next()) {
            (Some("pass"), Some(_), _) => gpu_pass += 1,
            (Some("fail"), Some(_), _) => gpu_fail += 1,
            (Some("skip"), Some(name), reason) => {
                skipped.entry(reason.unwrap_or("").to_string()).or_default().insert(name.to_string());
                skipped_names.insert(name.to_string());
            }
            _ => {}
        }
    }
    let n_skipped = skipped_names.len() as u64;
    let is_data = |reason: &str| reason.starts_with("no test data");
    let count = |data: bool| skipped.iter().filter(|(r, _)| is_data(r) == data).flat_map(|(_, n)| n).collect::<std::collections::BTreeSet<_>>().len();
    println!();
    for (reason, names) in &skipped {
        println!("SKIPPED {} ({reason}):", if is_data(reason) { "data tests" } else { "GPU tests" });
        for n in names {
            println!("  skipped: {n}");
        }
    }
    let why = skipped.keys().find(|r| !is_data(r)).map(|r| format!(" ({r})")).unwrap_or_default();
    println!("gpu tests: {} run ({gpu_pass} passed, {gpu_fail} failed), {} skipped{why}", gpu_pass + gpu_fail, count(false));
    println!("data tests: {} skipped{}", count(true), if count(true) > 0 { " (their data, ../shared, is absent)" } else { "" });

    let mut problems = vec![];
    if !host_ok || !kernels_ok {
        problems.push("cargo test failed".to_string());
    }
    let py = match python {
        Ok((ok, t)) => {
            if !ok {
                problems.push("the Python package's tests failed (see above)".to_string());
            }
            println!("python tests: {} passed, {} failed, {} skipped", t.passed, t.failed, t.skipped);
            Some(t)
        }
        Err(e) if std::env::var("SPTRANS_REQUIRE_PYTHON").is_ok_and(|v| v == "1") => {
            problems.push(e);
            None
        }
        Err(e) => {
            println!("python package: skipped ({e})");
            None
        }
    };
    if !byo_ok {
        problems.push("the library crates do not build beside a user's cudarc/cuda-12060 (see above)".to_string());
    }
    if n_skipped > 0 && std::env::var("SPTRANS_REQUIRE_GPU").is_ok_and(|v| v == "1") {
        problems.push(format!("SPTRANS_REQUIRE_GPU=1 but {n_skipped} GPU tests were skipped"));
    }
    match toolchain::find() {
        Ok(_) => {
            println!("\n== build-ptx --check");
            if let Err(e) = ptx::build_ptx("sm_80", true) {
                problems.push(e);
            }
        }
        Err(e) if std::env::var("SPTRANS_REQUIRE_PTX_CHECK").is_ok_and(|v| v == "1") => problems.push(e),
        Err(_) => println!("build-ptx --check: skipped, device toolchain not installed (cargo xtask setup-ptx-toolchain)"),
    }
    // Plain tests passed = libtest passes minus GPU tests that only recorded a skip; the Python
    // suite's counts added (it is named when it did not run).
    let (rp, rf, rs) = (totals.passed.saturating_sub(n_skipped), totals.failed, n_skipped + totals.ignored);
    let p = py.unwrap_or_default();
    println!(
        "\nall tests: {} passed, {} failed, {} skipped (Rust {rp} / {rf} / {rs}; Python {}){}",
        rp + p.passed,
        rf + p.failed,
        rs + p.skipped,
        format_args!("{} / {} / {}", p.passed, p.failed, p.skipped),
        if p == PyTotals::default() { " — the Python suite did not run" } else { "" }
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The Python package (`python/`): a venv in `target/pyvenv` with maturin, NumPy, SciPy,
/// pytest and scikit-learn (the estimators' checks), `pip install ./python` (a dev-profile build, reusing the workspace's artifacts), then
/// pytest on `python/tests` (GPU tests there report themselves skipped without a GPU). `Err` when
/// the venv or the install cannot be made (no `python3 -m venv`, no network for pip).
fn python_package() -> Res<(bool, PyTotals)> {
    println!("\n== python package: pip install ./python, pytest python/tests");
    let venv = std::path::Path::new("target/pyvenv");
    let py = venv.join("bin/python");
    let run = |c: &mut Command, what: &str| -> Res {
        let s = c.status().map_err(|e| format!("{what}: {e}"))?;
        if s.success() {
            Ok(())
        } else {
            Err(format!("{what} failed ({s})"))
        }
    };
    if !py.exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(venv), "python3 -m venv target/pyvenv")?;
    }
    run(
        Command::new(&py).args([
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "maturin>=1.5,<2",
            "numpy",
            "scipy",
            "pytest",
            "scikit-learn>=1.6",
        ]),
        "pip install maturin numpy scipy pytest scikit-learn",
    )?;
    // maturin's build backend runs the `maturin` executable by name: the venv's bin on PATH (a
    // venv's python started directly does not put it there).
    let bin_dir = std::env::current_dir().map_err(|e| e.to_string())?.join(venv).join("bin");
    let path = match std::env::var_os("PATH") {
        Some(p) => std::env::join_paths(std::iter::once(bin_dir.clone()).chain(std::env::split_paths(&p))).map_err(|e| e.to_string())?,
        None => bin_dir.into_os_string(),
    };
    run(
        Command::new(&py)
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-build-isolation", "--force-reinstall", "--no-deps", "./python"])
            .env("MATURIN_PEP517_ARGS", "--profile dev")
            .env("PATH", path),
        "pip install ./python",
    )?;
    // Run from python/tests against the installed package (not the source folder); the CLI's
    // file tests use the binary `cargo test` built.
    let bin = std::env::current_dir().map_err(|e| e.to_string())?.join("target/debug/sptrans");
    let mut cmd = Command::new(std::path::Path::new("../../").join(&py));
    if bin.exists() && std::env::var_os("SPTRANS_BIN").is_none() {
        cmd.env("SPTRANS_BIN", &bin);
    }
    // Echoed as it runs; its closing line gives the counts for the summary.
    let mut child = cmd
        .args(["-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "."])
        .current_dir("python/tests")
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("pytest: {e}"))?;
    let mut totals = PyTotals::default();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            parse_pytest_line(&line, &mut totals);
        }
    }
    let status = child.wait().map_err(|e| format!("pytest: {e}"))?;
    Ok((status.success(), totals))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_libtest_summaries() {
        let mut t = Totals::default();
        parse_result_line("test result: ok. 8 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s", &mut t);
        parse_result_line("test result: FAILED. 3 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out", &mut t);
        parse_result_line("running 3 tests", &mut t);
        assert_eq!(t, Totals { passed: 11, failed: 2, ignored: 1 });
    }

    #[test]
    fn parses_pytest_summaries() {
        let mut t = PyTotals::default();
        parse_pytest_line("235 passed, 56 skipped in 9.12s", &mut t);
        assert_eq!(t, PyTotals { passed: 235, failed: 0, skipped: 56 });
        parse_pytest_line("tests/test_gpu.py ..... in progress", &mut t);
        assert_eq!(t, PyTotals { passed: 235, failed: 0, skipped: 56 }, "a line that is not the summary changes nothing");
        parse_pytest_line("===== 3 failed, 10 passed, 1 error, 2 xfailed in 1.0s =====", &mut t);
        assert_eq!(t, PyTotals { passed: 10, failed: 4, skipped: 2 });
    }
}
