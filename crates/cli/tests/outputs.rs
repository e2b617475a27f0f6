//! Issue 38: outputs that never harm. A symlink is written through; a character device and a FIFO
//! are written, not replaced; new files get `0666 & !umask` and existing ones keep their mode; a
//! missing or unwritable directory fails before any work; an interrupted write leaves no
//! temporary file; a closed pipe ends quietly with status 141. No GPU needed.
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;

fn bin() -> PathBuf {
    std::env::var_os("SPTRANS_BIN").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sptrans")))
}

fn sptrans() -> Command {
    Command::new(bin())
}

fn parts(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.ends_with(".part")).collect()
}

fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Umask:").and_then(|v| u32::from_str_radix(v.trim(), 8).ok())))
        .unwrap_or(0o022)
}

#[test]
fn a_symlink_is_written_through_and_modes_follow_the_umask_or_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.mtx");
    let link = dir.path().join("link.mtx");
    std::os::unix::fs::symlink("target.mtx", &link).unwrap();
    sptrans().args(["gen", "uniform", "30", "20", "100", "-o"]).arg(&link).assert().success();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert!(std::fs::read_to_string(&target).unwrap().starts_with("%%MatrixMarket"));
    // A new file: 0666 & !umask (the test's umask is the child's).
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !umask(), "new file mode {mode:o}");
    // An existing file keeps its mode.
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    sptrans().args(["gen", "uniform", "30", "20", "100", "-o"]).arg(&target).assert().success();
    assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o640);
    assert!(parts(dir.path()).is_empty());
}

#[test]
fn a_character_device_and_a_fifo_are_written_not_replaced() {
    sptrans().args(["gen", "uniform", "30", "20", "100", "-o", "/dev/null"]).assert().success();
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device(), "/dev/null was replaced");
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    if !std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: a_character_device_and_a_fifo... FIFO part (mkfifo failed)");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    sptrans().args(["gen", "uniform", "30", "20", "100", "-o"]).arg(&fifo).timeout(Duration::from_secs(30)).assert().success();
    let text = reader.join().unwrap();
    assert!(text.starts_with("%%MatrixMarket") && text.lines().count() > 100, "the reader got {} bytes", text.len());
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
}

#[test]
fn bad_output_paths_fail_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    // Standard input is never closed: a command that read before checking would hang.
    for args in [
        vec!["transpose", "-", "-o", "nodir/x.mtx"],
        vec!["spmv", "-", "-o", "nodir/y.mtx"],
        vec!["svd", "-", "-o", "nodir/s.txt"],
        vec!["bench", "--suite", "small", "--csv", "nodir/b.csv"],
    ] {
        let start = Instant::now();
        let mut child =
            std::process::Command::new(bin()).args(&args).current_dir(dir.path()).stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "{args:?}: still running: the output was not checked first");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert!(!status.success(), "{args:?}");
        assert!(err.contains("nodir"), "{args:?}: {err}");
    }
    // A compression we do not write is refused, not written as plain text under its name.
    sptrans()
        .args(["gen", "uniform", "3", "2", "1", "-o"])
        .arg(dir.path().join("t.mtx.lz4"))
        .assert()
        .failure()
        .stderr(predicate::str::contains(".lz4 compression"));
    assert!(!dir.path().join("t.mtx.lz4").exists());
    // Without a GPU, asking for GPU algorithms is an error naming the fallback.
    if gpu_testkit::shared_gpu().is_err() {
        sptrans()
            .args(["bench", "--suite", "small", "--algos", "radix", "--quiet"])
            .assert()
            .failure()
            .stderr(predicate::str::contains("needs a GPU").and(predicate::str::contains("--algos serial")));
    }
    // A directory as the output.
    sptrans().args(["gen", "uniform", "3", "2", "1", "-o"]).arg(dir.path()).assert().failure().stderr(predicate::str::contains("is a directory"));
}

#[test]
fn an_interrupted_write_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.mtx");
    // Large enough that the write takes a while; interrupted as soon as its temporary file shows.
    let mut child = std::process::Command::new(bin()).args(["gen", "uniform", "1000000", "1000000", "8000000", "-o"]).arg(&out).spawn().unwrap();
    let start = Instant::now();
    let mut seen = false;
    while start.elapsed() < Duration::from_secs(120) {
        if !parts(dir.path()).is_empty() {
            seen = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if !seen {
        let _ = child.kill();
        let _ = child.wait();
        eprintln!("SKIPPED: an_interrupted_write... (the write finished before it could be interrupted)");
        return;
    }
    std::thread::sleep(Duration::from_millis(200));
    let _ = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(parts(dir.path()).is_empty(), "left behind: {:?}", parts(dir.path()));
    assert!(!out.exists(), "an incomplete output was moved into place");
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let mut child = std::process::Command::new(bin())
        .args(["gen", "uniform", "200000", "200000", "2000000", "-o", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut r = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        assert!(line.starts_with("%%MatrixMarket"));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{err}");
    assert!(!err.contains("error") && !err.contains("panicked"), "{err}");
}

/// The effective user id of this process (the owner of `/proc/self`).
fn euid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid()
}

#[test]
fn an_output_that_is_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.mtx");
    sptrans().args(["gen", "uniform", "30", "20", "100", "-o"]).arg(&a).assert().success();
    let before = std::fs::read(&a).unwrap();
    let link = dir.path().join("link.mtx");
    std::os::unix::fs::symlink("a.mtx", &link).unwrap();
    for out in [&a, &link] {
        sptrans().arg("transpose").arg(&a).arg("-o").arg(out).assert().failure().stderr(predicate::str::contains("is also the input"));
        sptrans().arg("svd").arg(&a).args(["-k", "2", "-o"]).arg(out).assert().failure().stderr(predicate::str::contains("is also the input"));
        sptrans().arg("spmv").arg(&a).arg("-o").arg(out).assert().failure().stderr(predicate::str::contains("is also the input"));
    }
    assert_eq!(std::fs::read(&a).unwrap(), before, "the input was changed");
}

#[test]
fn files_keep_their_permissions_and_owner() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.mtx");
    sptrans().args(["gen", "uniform", "30", "20", "100", "-o"]).arg(&a).assert().success();
    let out = dir.path().join("ro.mtx");
    std::fs::write(&out, "keep me\n").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o444)).unwrap();
    if euid() != 0 {
        // As the shell's `>` would: a read-only file is not replaced.
        sptrans().arg("transpose").arg(&a).arg("-o").arg(&out).assert().failure().stderr(predicate::str::contains("not writable"));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me\n");
        eprintln!("files_keep_their_permissions_and_owner: not root, so the owner-keeping half is skipped");
    } else {
        // Root may write it (as `>` may), and the file keeps its owner, group and mode.
        std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
        sptrans().arg("transpose").arg(&a).arg("-o").arg(&out).assert().success();
        let m = std::fs::metadata(&out).unwrap();
        assert_eq!((m.uid(), m.gid(), m.permissions().mode() & 0o777), (65534, 65534, 0o444));
        assert!(std::fs::read_to_string(&out).unwrap().starts_with("%%MatrixMarket"));
    }
    assert!(parts(dir.path()).is_empty());
}

#[test]
fn a_closed_standard_error_loses_messages_not_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g.mtx");
    let mut child =
        std::process::Command::new(bin()).args(["gen", "uniform", "3000", "2000", "10000", "-o"]).arg(&out).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("%%MatrixMarket"));
}

#[test]
fn gen_refuses_what_does_not_fit_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.mtx");
    sptrans()
        .args(["gen", "uniform", "5000000000", "3", "10", "--index", "64", "--max-memory", "1G", "-o"])
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains("host memory").and(predicate::str::contains("panicked").not()));
    assert!(!out.exists());
}
