//! The command line as people drive it (issue 15): pipes and standard streams, memory limits
//! before allocation, gzip output, atomic writes, honest fallbacks, skipped files in `bench`,
//! and the reader's messages for binary data, byte-order marks, corrupt gzip and huge tokens.
//! The binary is `SPTRANS_BIN` when set.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use assert_cmd::Command;
use predicates::prelude::*;
use sptrans::matrix::{mm, Csr};

fn bin() -> PathBuf {
    std::env::var_os("SPTRANS_BIN").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sptrans")))
}

fn sptrans() -> Command {
    Command::new(bin())
}

fn no_panic() -> impl Predicate<str> {
    predicate::str::contains("panicked").not()
}

fn gen(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let p = dir.join(name);
    sptrans().arg("gen").args(args).arg("-o").arg(&p).assert().success();
    p
}

fn twin(input: &Path) -> Csr<u32, f64> {
    mm::read_csr::<f64>(input).unwrap().transpose()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn pipes_fifos_and_standard_streams_read_the_input_once() {
    let dir = tempfile::tempdir().unwrap();
    let a = gen(dir.path(), "a.mtx", &["uniform", "300", "200", "4000"]);
    let want = twin(&a);
    let text = std::fs::read(&a).unwrap();
    // `-` and /dev/stdin, plain and gzip, through a pipe.
    for (input, data) in [("-", text.clone()), ("/dev/stdin", text.clone()), ("-", gzip(&text))] {
        let out = dir.path().join("t.mtx");
        sptrans().args(["transpose", "--algo", "auto", input, "-o"]).arg(&out).write_stdin(data).assert().success().stderr(no_panic());
        assert!(mm::read_csr::<f64>(&out).unwrap().same_bits(&want), "{input}");
    }
    // `-o -`: the matrix on standard output.
    let out = sptrans().args(["transpose", "-", "-o", "-"]).write_stdin(text.clone()).assert().success().get_output().stdout.clone();
    assert!(mm::parse::<u32, f64>(&out).unwrap().to_csr().same_bits(&want));
    // A FIFO, written by another process.
    let fifo = dir.path().join("fifo");
    if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        let (f2, gz) = (fifo.clone(), gzip(&text));
        let writer = std::thread::spawn(move || std::fs::write(&f2, gz).unwrap());
        let out = dir.path().join("fifo-t.mtx");
        sptrans().args(["transpose"]).arg(&fifo).arg("-o").arg(&out).assert().success();
        writer.join().unwrap();
        assert!(mm::read_csr::<f64>(&out).unwrap().same_bits(&want));
    }
    // gen to standard output, read back.
    let out = sptrans().args(["gen", "laplacian2d", "4", "-o", "-"]).assert().success().get_output().stdout.clone();
    assert_eq!(mm::parse::<u32, f64>(&out).unwrap().to_csr().nnz(), 64);
}

#[test]
fn a_matrix_beyond_memory_is_refused_before_allocation() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.mtx");
    std::fs::write(&huge, "%%MatrixMarket matrix coordinate real general\n4294967295 4294967295 1\n1 1 1.0\n").unwrap();
    sptrans().args(["transpose", "--max-memory", "8G"]).arg(&huge).arg("-o").arg(dir.path().join("o.mtx")).assert().failure().code(1).stderr(
        predicate::str::contains("4294967295 x 4294967295 with 1 entries needs about")
            .and(predicate::str::contains("more than the 8.6 GB allowed"))
            .and(no_panic()),
    );
    // A modest matrix under a tiny limit, and the same under a fitting one.
    let a = gen(dir.path(), "a.mtx", &["uniform", "3000", "2000", "100000"]);
    sptrans()
        .args(["transpose", "--max-memory", "1M"])
        .arg(&a)
        .arg("-o")
        .arg(dir.path().join("o.mtx"))
        .assert()
        .failure()
        .code(1)
        .stderr(predicate::str::contains("needs about"));
    sptrans().args(["transpose", "--max-memory", "1G"]).arg(&a).arg("-o").arg(dir.path().join("o.mtx")).assert().success();
    sptrans()
        .args(["transpose", "--max-memory", "lots"])
        .arg(&a)
        .arg("-o")
        .arg(dir.path().join("o.mtx"))
        .assert()
        .failure()
        .code(2)
        .stderr(predicate::str::contains("not a size"));
}

#[test]
fn gzip_output_by_name_and_atomic_replacement() {
    let dir = tempfile::tempdir().unwrap();
    let a = gen(dir.path(), "a.mtx", &["rmat", "10", "5000"]);
    let gz = dir.path().join("t.mtx.gz");
    sptrans().arg("transpose").arg(&a).arg("-o").arg(&gz).assert().success();
    let bytes = std::fs::read(&gz).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "a .gz output is gzip");
    assert!(mm::read_csr::<f64>(&gz).unwrap().same_bits(&twin(&a)));
    let g2 = gen(dir.path(), "g.mtx.gz", &["laplacian2d", "5"]);
    assert_eq!(&std::fs::read(&g2).unwrap()[..2], &[0x1f, 0x8b]);

    // A run killed while writing leaves the earlier file untouched (it writes a temporary file
    // beside it and renames it into place only when complete).
    let out = dir.path().join("big.mtx");
    std::fs::write(&out, "earlier contents\n").unwrap();
    let mut child = std::process::Command::new(bin())
        .args(["gen", "uniform", "2000000", "2000000", "6000000", "-o"])
        .arg(&out)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let part = loop {
        let found = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(".part") && std::fs::metadata(p).is_ok_and(|m| m.len() > 0));
        if found.is_some() || start.elapsed().as_secs() > 60 || child.try_wait().unwrap().is_some() {
            break found;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().ok();
    child.wait().unwrap();
    assert!(part.is_some(), "the writer never started a temporary file");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier contents\n", "the interrupted run touched the final name");
}

#[test]
fn zstd_xz_and_bzip2_written_by_name_and_read_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let a = gen(dir.path(), "a.mtx", &["rmat", "9", "3000"]);
    for (ext, magic) in [("zst", &[0x28u8, 0xb5, 0x2f, 0xfd][..]), ("xz", &[0xfd, b'7', b'z', b'X', b'Z', 0][..]), ("bz2", &b"BZh"[..])] {
        // Written compressed by its name, and compressed smaller than the text.
        let t = dir.path().join(format!("t.mtx.{ext}"));
        sptrans().arg("transpose").arg(&a).arg("-o").arg(&t).assert().success();
        let bytes = std::fs::read(&t).unwrap();
        assert!(bytes.starts_with(magic), ".{ext} output starts with its magic bytes");
        assert!((bytes.len() as u64) < std::fs::metadata(&a).unwrap().len(), ".{ext} output is compressed");
        assert!(mm::read_csr::<f64>(&t).unwrap().same_bits(&twin(&a)), ".{ext} read back");
        // Read by content: under a name that does not say so, and through a pipe.
        let hidden = dir.path().join(format!("hidden-{ext}.mtx"));
        std::fs::copy(&t, &hidden).unwrap();
        let back = dir.path().join(format!("back-{ext}.mtx"));
        sptrans().arg("transpose").arg(&hidden).arg("-o").arg(&back).assert().success();
        assert!(mm::read_csr::<f64>(&back).unwrap().same_bits(&mm::read_csr::<f64>(&a).unwrap()), ".{ext} by content");
        let piped = dir.path().join(format!("piped-{ext}.mtx"));
        sptrans().arg("transpose").arg("-").arg("-o").arg(&piped).write_stdin(bytes.clone()).assert().success();
        assert!(mm::read_csr::<f64>(&piped).unwrap().same_bits(&mm::read_csr::<f64>(&a).unwrap()), ".{ext} through a pipe");
        // A truncated stream is named as that compression, without a panic.
        let cut = dir.path().join(format!("cut-{ext}.mtx"));
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let name = match ext {
            "zst" => "zstd",
            "bz2" => "bzip2",
            e => e,
        };
        sptrans()
            .arg("transpose")
            .arg(&cut)
            .arg("-o")
            .arg(dir.path().join("never.mtx"))
            .assert()
            .failure()
            .stderr(predicate::str::contains(format!("{name}-compressed")).and(no_panic()));
    }
}

#[test]
fn explicit_gpu_algorithms_without_a_gpu_are_errors_and_auto_says_it_falls_back() {
    if gpu_testkit::shared_gpu().is_ok() {
        eprintln!("SKIPPED: explicit_gpu_algorithms_without_a_gpu... (a GPU is present)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = gen(dir.path(), "a.mtx", &["uniform", "30", "20", "100"]);
    for algo in ["scan", "merge", "radix", "coo"] {
        let out = dir.path().join(format!("{algo}.mtx"));
        sptrans()
            .args(["transpose", "--check", "--algo", algo])
            .arg(&a)
            .arg("-o")
            .arg(&out)
            .assert()
            .failure()
            .code(1)
            .stderr(predicate::str::contains("needs a GPU").and(predicate::str::contains("--algo auto")));
        assert!(!out.exists());
    }
    sptrans().args(["transpose", "--check"]).arg(&a).arg("-o").arg(dir.path().join("o.mtx")).assert().success().stderr(
        predicate::str::contains("auto uses the serial twin")
            .and(predicate::str::contains("check: the result of serial twin (no GPU) equals an independent COO sort transpose")),
    );
}

#[test]
fn bench_reports_every_skipped_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join("x.mtx"), "not a matrix\n").unwrap();
    std::fs::write(bad.join("y.mtx.gz"), [0x1f, 0x8b, 8, 0, 1, 2]).unwrap();
    let csv = dir.path().join("r.csv");
    // Only unreadable files: an error, each one named on stderr (with --quiet, not a terminal).
    sptrans()
        .args(["bench", "--quiet", "--reps", "1", "--algos", "serial", "--suite"])
        .arg(&bad)
        .arg("--csv")
        .arg(&csv)
        .assert()
        .failure()
        .code(1)
        .stderr(
            predicate::str::contains("x.mtx: skipped")
                .and(predicate::str::contains("y.mtx.gz: skipped"))
                .and(predicate::str::contains(bad.display().to_string()))
                .and(predicate::str::contains("small suite").not()),
        );
    // One good file beside them: success, the table, and the skipped ones under it and in the CSV.
    gen(&bad, "ok.mtx", &["laplacian2d", "6"]);
    let out = sptrans()
        .args(["bench", "--quiet", "--reps", "1", "--algos", "serial", "--suite"])
        .arg(&bad)
        .arg("--csv")
        .arg(&csv)
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ok.mtx") && stdout.contains("Skipped (2 of 3 matrices)") && stdout.contains("- x.mtx:"), "{stdout}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().filter(|l| l.contains("skipped:")).count(), 2, "{text}");
    assert!(text.lines().all(|l| l.split(',').count() >= 16), "CSV rows keep the columns:\n{text}");
}

#[test]
fn the_reader_names_binary_data_bom_and_corrupt_gzip_and_cuts_long_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("o.mtx");
    let bin_file = dir.path().join("b.mtx");
    std::fs::write(&bin_file, b"\x7fELF\x02\x01\x01\0\0\0\r\x03\x00>\x00\n").unwrap();
    sptrans()
        .arg("transpose")
        .arg(&bin_file)
        .arg("-o")
        .arg(&o)
        .assert()
        .failure()
        .code(1)
        .stderr(predicate::str::contains("not a Matrix Market file (binary data)").and(no_panic()));
    let bom = dir.path().join("bom.mtx");
    std::fs::write(&bom, b"\xEF\xBB\xBF%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3.5\n").unwrap();
    sptrans().arg("transpose").arg(&bom).arg("-o").arg(&o).assert().success();
    assert_eq!(mm::read_csr::<f64>(&o).unwrap().get(1, 0), Some(3.5));
    // Gzip whose deflate data is garbage: the message says the input was gzip.
    let mut corrupt = gzip(b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3.5\n");
    for b in corrupt.iter_mut().skip(10).take(12) {
        *b ^= 0x5a;
    }
    let cz = dir.path().join("c.mtx.gz");
    std::fs::write(&cz, corrupt).unwrap();
    sptrans().arg("transpose").arg(&cz).arg("-o").arg(&o).assert().failure().code(1).stderr(predicate::str::contains("gzip").and(no_panic()));
    // A 2 MB number: the message quotes its start, not all of it.
    let long = dir.path().join("long.mtx");
    std::fs::write(&long, format!("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 {}x\n", "9".repeat(2_000_000))).unwrap();
    let err = sptrans().arg("transpose").arg(&long).arg("-o").arg(&o).assert().failure().code(1).get_output().stderr.clone();
    let err = String::from_utf8_lossy(&err);
    assert!(err.len() < 400 && err.contains('…') && err.contains("line 3"), "{err}");
    // A missing file is named once.
    let err = sptrans().arg("transpose").arg("nonexist.mtx").arg("-o").arg(&o).assert().failure().code(1).get_output().stderr.clone();
    assert_eq!(String::from_utf8_lossy(&err).matches("nonexist.mtx").count(), 1, "{}", String::from_utf8_lossy(&err));
}

#[test]
fn values_are_written_short_and_exact() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tiny.mtx");
    std::fs::write(&p, "%%MatrixMarket matrix coordinate real general\n1 3 3\n1 1 5e-324\n1 2 1.234e-300\n1 3 nan\n").unwrap();
    let o = dir.path().join("t.mtx");
    sptrans().arg("transpose").arg(&p).arg("-o").arg(&o).assert().success();
    let text = std::fs::read_to_string(&o).unwrap();
    assert!(text.contains("1 1 5e-324") && text.contains("2 1 1.234e-300") && text.contains("3 1 nan"), "{text}");
    assert!(text.len() < 150, "{text}");
    assert!(mm::read_csr::<f64>(&o).unwrap().same_bits(&mm::read_csr::<f64>(&p).unwrap().transpose()));
}

#[test]
fn generator_parameters_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("o.mtx");
    for (args, want) in [
        (&["rmat", "6", "3000", "--a", "1.5"][..], "probability 1.5 is outside [0, 1]"),
        (&["rmat", "6", "3000", "--a", "0.6", "--b", "0.3", "--c", "0.3"][..], "exceeds 1"),
        (&["rmat", "64", "10"][..], "scale: 64 is too large"),
        (&["tall-skinny", "100", "4", "9"][..], "9 distinct columns per row cannot fit in 4 columns"),
    ] {
        sptrans()
            .arg("gen")
            .args(args)
            .arg("-o")
            .arg(&o)
            .assert()
            .failure()
            .code(1)
            .stderr(predicate::str::contains(want).and(predicate::str::contains("9223372036854775808").not()).and(no_panic()));
    }
}

#[test]
fn gen_index_64_writes_what_32_does_and_goes_past_32_bits() {
    let dir = tempfile::tempdir().unwrap();
    for kind in [
        &["uniform", "300", "200", "5000"][..],
        &["rmat", "9", "4000"],
        &["laplacian3d", "7"],
        &["dense-col", "80", "90", "600"],
        &["stencil", "6", "--order", "rcm"],
        &["stencil", "5", "--points", "7", "--order", "random"],
        &["graph", "2000", "8", "100"],
        &["circuit", "3000", "2"],
        &["text", "300", "2000", "10"],
        &["lp", "500", "600", "4", "5"],
    ] {
        let (a, b) = (dir.path().join("a.mtx"), dir.path().join("b.mtx"));
        sptrans().arg("gen").args(kind).arg("-o").arg(&a).assert().success();
        sptrans().arg("gen").args(kind).args(["--index", "64", "-o"]).arg(&b).assert().success();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap(), "{kind:?}");
    }
    // A row of 6e9 columns: past 32-bit indices, refused with 32 and written with 64.
    let wide = dir.path().join("wide.mtx");
    let args = ["gen", "uniform", "2", "6000000000", "7"];
    sptrans().args(args).arg("-o").arg(&wide).assert().failure().code(1).stderr(predicate::str::contains("dimension").and(no_panic()));
    sptrans().args(args).args(["--index", "64", "-o"]).arg(&wide).assert().success();
    let input = mm::Input::open(&wide).unwrap();
    let a = input.read_csr_checked_as::<u64, f64>(&mut |_, _, _| Ok(())).unwrap();
    assert_eq!((a.rows(), a.cols(), a.nnz()), (2, 6_000_000_000, 7));
    assert!(a.idx().iter().any(|&j| j > u64::from(u32::MAX)), "columns past 2^32 drawn");
}

#[test]
fn info_finds_ptxas_as_build_ptx_does() {
    // PTXAS names the tool for both `cargo xtask build-ptx` and `sptrans info`
    // (sptrans_devtools::find_ptxas): point it at any file and info reports that path.
    let fake = bin();
    sptrans().args(["info", "--no-bandwidth"]).env("PTXAS", &fake).assert().success().stdout(predicate::str::contains(fake.display().to_string()));
}

#[test]
fn gpus_is_checked_and_fails_clearly_without_the_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let a = gen(dir.path(), "a.mtx", &["uniform", "300", "200", "4000"]);
    let out = dir.path().join("t.mtx");
    sptrans().args(["transpose", "--gpus", "0"]).arg(&a).arg("-o").arg(&out).assert().failure().stderr(predicate::str::contains("--gpus"));
    sptrans()
        .args(["transpose", "--gpus", "2", "--index", "64"])
        .arg(&a)
        .arg("-o")
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicate::str::contains("32-bit indices").and(no_panic()));
    // Two GPUs with NCCL: the one-GPU result; otherwise an error naming what is missing.
    let run = sptrans().args(["transpose", "--gpus", "2", "--check"]).arg(&a).arg("-o").arg(&out).assert();
    let o = run.get_output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    if o.status.success() {
        assert!(mm::read_csr::<f64>(&out).unwrap().same_bits(&twin(&a)));
    } else {
        assert!(["driver", "device", "NCCL"].iter().any(|w| err.contains(w)), "{err}");
    }
    // The distributed product: checked against the twin with the GPUs, a clear error without.
    sptrans().args(["spmv", "--gpus", "0"]).arg(&a).assert().failure().stderr(predicate::str::contains("--gpus"));
    let y = dir.path().join("y.mtx");
    let run = sptrans().args(["spmv", "--gpus", "2", "--check"]).arg(&a).arg("-o").arg(&y).assert();
    let o = run.get_output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    if o.status.success() {
        assert!(err.contains("agrees with the serial twin") && err.contains("distributed over 2 GPUs"), "{err}");
    } else {
        assert!(["driver", "device", "NCCL"].iter().any(|w| err.contains(w)), "{err}");
        assert!(!y.exists(), "no output on failure");
    }
    // The distributed SVD: the one-GPU σ with the GPUs, a clear error without.
    sptrans().args(["svd", "--gpus", "0", "-k", "2"]).arg(&a).assert().failure().stderr(predicate::str::contains("--gpus"));
    let run = sptrans().args(["svd", "--gpus", "2", "-k", "3", "-o", "-"]).arg(&a).assert();
    let o = run.get_output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    if o.status.success() {
        let one = sptrans().args(["svd", "-k", "3", "-o", "-"]).arg(&a).assert().success();
        let parse = |b: &[u8]| -> Vec<f64> { String::from_utf8_lossy(b).split_whitespace().map(|w| w.parse().unwrap()).collect() };
        let (d, s) = (parse(&o.stdout), parse(&one.get_output().stdout));
        assert!(d.iter().zip(&s).all(|(x, y)| (x - y).abs() <= 1e-8 * s[0]), "{d:?} against {s:?}");
    } else {
        assert!(["driver", "device", "NCCL"].iter().any(|w| err.contains(w)), "{err}");
    }
    // The bench's dist column: checked against the twin with the GPUs, a clear error without.
    sptrans().args(["bench", "--gpus", "0", "--suite"]).arg(&a).assert().failure().stderr(predicate::str::contains("--gpus"));
    sptrans()
        .args(["bench", "--gpus", "2", "--index", "64", "--suite"])
        .arg(&a)
        .assert()
        .failure()
        .stderr(predicate::str::contains("32-bit").and(no_panic()));
    let csv = dir.path().join("b.csv");
    let run = sptrans().args(["bench", "--gpus", "2", "--reps", "2", "--quiet", "--csv"]).arg(&csv).arg("--suite").arg(&a).assert();
    let o = run.get_output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    if o.status.success() {
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.lines().any(|l| l.contains(",dist,") && l.ends_with("true,")), "{text}");
    } else {
        assert!(["driver", "device", "NCCL"].iter().any(|w| err.contains(w)), "{err}");
    }
    // Under a launcher: malformed variables, --gpus, the vectors and centering are refused.
    let launched = |rank: &str, world: &str| {
        let mut c = sptrans();
        c.env("RANK", rank).env("WORLD_SIZE", world).env_remove("SPTRANS_NCCL_ID_FILE").env_remove("SPTRANS_NCCL_ID_ADDR").env_remove("MASTER_ADDR");
        c
    };
    launched("x", "2").args(["svd", "-k", "2"]).arg(&a).assert().code(1).stderr(predicate::str::contains("RANK").and(no_panic()));
    launched("2", "2").args(["svd", "-k", "2"]).arg(&a).assert().code(1).stderr(predicate::str::contains("below the world size").and(no_panic()));
    launched("0", "2")
        .args(["svd", "-k", "2", "--gpus", "2"])
        .arg(&a)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("each process drives one GPU").and(no_panic()));
    launched("0", "2")
        .args(["svd", "-k", "2", "--center"])
        .arg(&a)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("need one process").and(no_panic()));
}
