//! The command line, run as a user runs it: every command on small files, malformed files (error
//! text with the line, exit code, no panic), `--check`, gzip input, every field, the CSV and SVG
//! outputs of `bench`. The binary is `SPTRANS_BIN` when set (a staged copy on a GPU host).
use std::io::Write;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use gpu_testkit::gpu_test;
use predicates::prelude::*;
use sptrans::matrix::num_complex::Complex64;
use sptrans::matrix::{mm, Csr, Value};

fn sptrans() -> Command {
    let mut c = match std::env::var_os("SPTRANS_BIN") {
        Some(p) => Command::new(p),
        None => Command::new(env!("CARGO_BIN_EXE_sptrans")),
    };
    // A test harness started by a launcher must not make every command a rank of it (the
    // tests that want a launcher set these themselves).
    for v in sptrans::dist::bootstrap::LAUNCHER_VARS.iter().flatten() {
        c.env_remove(v);
    }
    c
}

fn no_panic() -> impl Predicate<str> {
    predicate::str::contains("panicked").not()
}

fn gen_file(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let p = dir.join(name);
    sptrans().arg("gen").args(args).arg("-o").arg(&p).assert().success().stderr(predicate::str::contains("wrote"));
    p
}

fn transposed_equals_twin<T: Value>(input: &Path, output: &Path) {
    let a = mm::read_csr::<T>(input).unwrap();
    let at = mm::read_csr::<T>(output).unwrap();
    assert!(at.same_bits(&a.transpose()), "{} -> {}: {at:?}", input.display(), output.display());
}

#[test]
fn help_for_every_command() {
    sptrans().arg("--help").assert().success().stdout(predicate::str::contains("transpose").and(predicate::str::contains("bench")));
    for (cmd, word) in [("transpose", "--check"), ("gen", "uniform"), ("bench", "--suite"), ("info", "bandwidth")] {
        sptrans().args([cmd, "--help"]).assert().success().stdout(predicate::str::contains(word));
    }
    sptrans().args(["gen", "rmat", "--help"]).assert().success().stdout(predicate::str::contains("SCALE"));
    sptrans().arg("frobnicate").assert().failure().code(2);
}

#[test]
fn gen_writes_every_kind_deterministically() {
    let dir = tempfile::tempdir().unwrap();
    let kinds: [(&str, &[&str], (u64, u64)); 8] = [
        ("uniform", &["uniform", "30", "20", "100"], (30, 20)),
        ("rmat", &["rmat", "6", "200"], (64, 64)),
        ("laplacian2d", &["laplacian2d", "5"], (25, 25)),
        ("laplacian3d", &["laplacian3d", "3"], (27, 27)),
        ("banded", &["banded", "40", "2", "1"], (40, 40)),
        ("tall-skinny", &["tall-skinny", "500", "8", "3"], (500, 8)),
        ("dense-row", &["dense-row", "50", "60", "100"], (50, 60)),
        ("dense-col", &["dense-col", "50", "60", "100"], (50, 60)),
    ];
    for (name, args, (m, n)) in kinds {
        let p = gen_file(dir.path(), &format!("{name}.mtx"), args);
        let a = mm::read_csr::<f64>(&p).unwrap();
        assert_eq!((a.rows(), a.cols()), (m, n), "{name}");
        assert!(a.nnz() > 0, "{name}");
        let again = gen_file(dir.path(), &format!("{name}-2.mtx"), args);
        assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&again).unwrap(), "{name}: same seed, same file");
    }
    let p = gen_file(dir.path(), "pattern.mtx", &["uniform", "10", "10", "20", "--field", "pattern", "--seed", "9"]);
    assert!(std::fs::read_to_string(&p).unwrap().starts_with("%%MatrixMarket matrix coordinate pattern general"));
    let p = gen_file(dir.path(), "int.mtx", &["banded", "10", "1", "1", "--field", "integer"]);
    assert!(std::fs::read_to_string(&p).unwrap().starts_with("%%MatrixMarket matrix coordinate integer general"));
    // Complex: the real generator's pattern and values, imaginary parts not all zero.
    let p = gen_file(dir.path(), "cplx.mtx", &["rmat", "6", "200", "--field", "complex", "--seed", "4"]);
    let (c, r) = (
        mm::read_csr::<Complex64>(&p).unwrap(),
        mm::read_csr::<f64>(&gen_file(dir.path(), "cplx-re.mtx", &["rmat", "6", "200", "--seed", "4"])).unwrap(),
    );
    assert_eq!((c.ptr(), c.idx()), (r.ptr(), r.idx()));
    assert!(c.vals().iter().zip(r.vals()).all(|(z, &x)| z.re == x) && c.vals().iter().any(|z| z.im != 0.0));
    sptrans().args(["gen", "uniform", "3", "3", "3"]).assert().failure().code(1).stderr(predicate::str::contains("-o OUT.mtx"));
    sptrans()
        .args(["gen", "uniform", "3", "3", "100", "-o"])
        .arg(dir.path().join("x.mtx"))
        .assert()
        .failure()
        .code(1)
        .stderr(predicate::str::contains("generating").and(no_panic()));
}

#[test]
fn transpose_with_check_for_every_field_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let real = gen_file(dir.path(), "real.mtx", &["rmat", "8", "2000"]);
    let int = gen_file(dir.path(), "int.mtx", &["uniform", "70", "40", "500", "--field", "integer"]);
    let pat = gen_file(dir.path(), "pat.mtx", &["dense-col", "80", "30", "200", "--field", "pattern"]);
    // With a GPU, GPU results are checked against the serial twin; the twin's own result (serial,
    // or auto without a GPU) against an independent sort-based transpose. Without a GPU an
    // explicit GPU algorithm is an error and writes nothing.
    let gpu = gpu_testkit::shared_gpu().is_ok();
    // cuSPARSE is the benchmarks' peer, not a transposer: refused with a pointer to `bench`.
    let cus = dir.path().join("real-cusparse.mtx");
    sptrans()
        .args(["transpose", "--algo", "cusparse"])
        .arg(&real)
        .arg("-o")
        .arg(&cus)
        .assert()
        .failure()
        .stderr(predicate::str::contains("sptrans bench").and(no_panic()));
    assert!(!cus.exists());
    for algo in ["auto", "serial", "scan", "merge", "radix", "coo"] {
        let out = dir.path().join(format!("real-{algo}.mtx"));
        let run = sptrans().args(["transpose", "--check", "--algo", algo]).arg(&real).arg("-o").arg(&out).assert();
        if algo == "serial" || (algo == "auto" && !gpu) {
            run.success().stderr(predicate::str::contains("equals an independent COO sort transpose"));
        } else if gpu {
            run.success().stderr(predicate::str::contains("equals the serial twin"));
        } else {
            run.failure().code(1).stderr(predicate::str::contains(format!("--algo {algo} needs a GPU")).and(no_panic()));
            assert!(!out.exists(), "{algo}: wrote an output without a GPU");
            continue;
        }
        transposed_equals_twin::<f64>(&real, &out);
    }
    let out = dir.path().join("int-t.mtx");
    sptrans().args(["transpose", "--check"]).arg(&int).arg("-o").arg(&out).assert().success();
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("%%MatrixMarket matrix coordinate integer general"));
    transposed_equals_twin::<i64>(&int, &out);
    let out = dir.path().join("pat-t.mtx");
    sptrans().args(["transpose", "--check", "--algo", if gpu { "merge" } else { "auto" }]).arg(&pat).arg("-o").arg(&out).assert().success();
    transposed_equals_twin::<()>(&pat, &out);
    // Complex: 16-byte values, on the GPU as their bits (every algorithm), else by the serial
    // twin; checked against the twin either way.
    let cplx = dir.path().join("c.mtx");
    std::fs::write(&cplx, "%%MatrixMarket matrix coordinate complex general\n2 3 3\n1 3 1.5 -2\n2 1 0 1\n2 3 -0 nan\n").unwrap();
    let out = dir.path().join("c-t.mtx");
    for algo in if gpu { vec!["radix", "scan", "merge", "coo"] } else { vec!["auto"] } {
        let said = if gpu { "complex values as 16-byte bits" } else { "serial twin" };
        sptrans()
            .args(["transpose", "--check", "--algo", algo])
            .arg(&cplx)
            .arg("-o")
            .arg(&out)
            .assert()
            .success()
            .stderr(predicate::str::contains(said).and(no_panic()));
        transposed_equals_twin::<Complex64>(&cplx, &out);
    }
    // Gzip, detected by content whatever the name; symmetric expanded.
    let gz = dir.path().join("sym.mtx.gz");
    let mut enc = flate2::write::GzEncoder::new(std::fs::File::create(&gz).unwrap(), flate2::Compression::default());
    enc.write_all(b"%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2\n3 1 -1\n3 2 4\n").unwrap();
    enc.finish().unwrap();
    let out = dir.path().join("sym-t.mtx");
    // `auto` takes SymTrans for a file stored as symmetric.
    let said = if gpu { "transposed by sym on" } else { "serial twin" };
    sptrans().args(["transpose", "--check"]).arg(&gz).arg("-o").arg(&out).assert().success().stderr(predicate::str::contains(said).and(no_panic()));
    let at = mm::read_csr::<f64>(&out).unwrap();
    assert_eq!(at.nnz(), 5);
    assert_eq!(at, Csr::try_new(3, 3, vec![0, 2, 3, 5], vec![0, 2, 2, 0, 1], vec![2.0, -1.0, 4.0, -1.0, 4.0]).unwrap());
}

#[test]
fn malformed_files_fail_with_the_line_and_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", "line 3"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n", "line"),
        ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 abc\n", "line 3"),
        ("%%MatrixMarket matrix frobnicate real general\n2 2 0\n", "line 1"),
        ("not a matrix\n", "line 1"),
        ("", "line"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("bad{i}.mtx"));
        std::fs::write(&p, text).unwrap();
        for algo in ["auto", "serial"] {
            sptrans()
                .args(["transpose", "--algo", algo])
                .arg(&p)
                .arg("-o")
                .arg(dir.path().join("o.mtx"))
                .assert()
                .failure()
                .code(1)
                .stderr(predicate::str::contains(*want).and(predicate::str::contains("error:")).and(no_panic()));
        }
    }
    sptrans()
        .arg("transpose")
        .arg(dir.path().join("missing.mtx"))
        .arg("-o")
        .arg(dir.path().join("o.mtx"))
        .assert()
        .failure()
        .code(1)
        .stderr(predicate::str::contains("missing.mtx").and(no_panic()));
    sptrans()
        .args(["transpose", "--algo", "fastest"])
        .arg(dir.path().join("bad0.mtx"))
        .arg("-o")
        .arg("o.mtx")
        .assert()
        .failure()
        .code(2)
        .stderr(predicate::str::contains("unknown algorithm"));
    // A truncated gzip stream.
    let p = dir.path().join("cut.mtx.gz");
    std::fs::write(&p, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2]).unwrap();
    sptrans().arg("transpose").arg(&p).arg("-o").arg(dir.path().join("o.mtx")).assert().failure().code(1).stderr(no_panic());
}

#[test]
fn bench_writes_tables_csv_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let mats = dir.path().join("mats");
    std::fs::create_dir(&mats).unwrap();
    gen_file(&mats, "a.mtx", &["uniform", "300", "200", "3000"]);
    gen_file(&mats, "b.mtx", &["laplacian2d", "20"]);
    std::fs::write(mats.join("notes.txt"), "not a matrix").unwrap();
    let (csv, svg, json) = (dir.path().join("r.csv"), dir.path().join("r.svg"), dir.path().join("r.json"));
    let out = sptrans()
        .args(["bench", "--quiet", "--reps", "3", "--warmup", "1", "--suite"])
        .arg(&mats)
        .arg("--csv")
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .arg("--plot")
        .arg(&svg)
        .assert()
        .success()
        .stderr(no_panic())
        .get_output()
        .clone();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("| a.mtx | 3000 |") && stdout.contains("| b.mtx | 1920 |"), "{stdout}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("matrix,rows,cols,nnz,algorithm,median_ms"));
    let gpu = gpu_testkit::shared_gpu().is_ok();
    assert_eq!(lines.len() - 1, if gpu { 2 * sptrans_cli::bench::DEFAULT_ALGOS.len() } else { 2 }, "{text}");
    assert!(lines[1..].iter().all(|l| l.contains(",true,")), "every run checked against the twin:\n{text}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    // The JSON holds the CSV's records, typed, and what ran them.
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let recs = j["records"].as_array().unwrap();
    assert_eq!(recs.len(), lines.len() - 1);
    assert!(recs.iter().all(|r| r["checked"] == true && r["median_ms"].is_number() && r["nnz"].is_u64()), "{j}");
    assert!(j["meta"]["command"].as_str().unwrap().contains("--json") && j["meta"]["device"].is_string(), "{j}");
    // --list: matrices named in a file (relative to it), comments skipped; a missing one named.
    std::fs::write(dir.path().join("list.txt"), "# two of them\nmats/a.mtx\n\nmats/b.mtx\n").unwrap();
    let out = sptrans()
        .args(["bench", "--quiet", "--reps", "1", "--algos", "serial", "--suite"])
        .arg(mats.join("a.mtx"))
        .arg("--list")
        .arg(dir.path().join("list.txt"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8_lossy(&out);
    assert!(table.contains("| a.mtx |") && table.contains("| b.mtx |"), "b.mtx comes from the list alone: {table}");
    std::fs::write(dir.path().join("bad.txt"), "mats/a.mtx\nmats/none.mtx\n").unwrap();
    sptrans()
        .args(["bench", "--suite", "small", "--list"])
        .arg(dir.path().join("bad.txt"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("line 2").and(no_panic()));
    // f64 values: every run checked against the twin of the widened matrix; 24 B per nonzero.
    let out = sptrans()
        .args(["bench", "--quiet", "--reps", "2", "--warmup", "1", "--values", "f64", "--suite"])
        .arg(&mats)
        .arg("--csv")
        .arg(&csv)
        .assert()
        .success()
        .stderr(predicate::str::contains("values: f64").and(no_panic()))
        .get_output()
        .clone();
    if gpu {
        assert!(String::from_utf8_lossy(&out.stdout).contains("(24 B per nonzero"), "{}", String::from_utf8_lossy(&out.stdout));
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count() - 1, if gpu { 2 * sptrans_cli::bench::DEFAULT_ALGOS.len() } else { 2 }, "{text}");
    assert!(text.lines().skip(1).all(|l| l.contains(",true,")), "every f64 run checked against the twin:\n{text}");
    // Complex<f64> (16 bytes, moved by a permutation) and 1-byte values: checked against the
    // twin too; 40 and 10 B per nonzero.
    for (v, bytes) in [("c64", 40), ("i8", 10)] {
        let out = sptrans()
            .args(["bench", "--quiet", "--reps", "2", "--warmup", "1", "--values", v, "--suite"])
            .arg(&mats)
            .arg("--csv")
            .arg(&csv)
            .assert()
            .success()
            .stderr(predicate::str::contains("values: ").and(no_panic()))
            .get_output()
            .clone();
        if gpu {
            assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("({bytes} B per nonzero")), "{}", String::from_utf8_lossy(&out.stdout));
        }
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.lines().skip(1).all(|l| l.contains(",true,")), "every {v} run checked against the twin:\n{text}");
    }
    sptrans().args(["bench", "--values", "f128", "--suite", "small"]).assert().failure().stderr(predicate::str::contains("f128").and(no_panic()));
    // Files as the suite, a bad suite entry.
    sptrans()
        .args(["bench", "--quiet", "--reps", "1", "--algos", "serial", "--suite"])
        .arg(mats.join("b.mtx"))
        .assert()
        .success()
        .stdout(predicate::str::contains("b.mtx"));
    sptrans()
        .args(["bench", "--suite", "/nonexistent/dir"])
        .assert()
        .failure()
        .code(1)
        .stderr(predicate::str::contains("not default, small").and(no_panic()));
    sptrans().args(["bench", "--reps", "0", "--suite", "small"]).assert().failure().code(1).stderr(predicate::str::contains("--reps"));
}

#[test]
fn commands_other_than_svd_refuse_a_launcher() {
    let dir = tempfile::tempdir().unwrap();
    let (a, t) = (dir.path().join("a.mtx"), dir.path().join("t.mtx"));
    sptrans().args(["gen", "uniform", "40", "30", "100", "-o"]).arg(&a).env("RANK", "1").env("WORLD_SIZE", "2").assert().success();
    for (cmd, extra) in [("transpose", vec!["-o", t.to_str().unwrap()]), ("spmv", vec![])] {
        sptrans()
            .arg(cmd)
            .arg(&a)
            .args(extra)
            .env("RANK", "1")
            .env("WORLD_SIZE", "2")
            .assert()
            .failure()
            .stderr(predicate::str::contains(format!("{cmd} under a launcher of 2 processes (rank 1)")).and(no_panic()));
    }
    assert!(!t.exists(), "no output under a refused launch");
    sptrans()
        .args(["transpose"])
        .arg(&a)
        .arg("-o")
        .arg(&t)
        .env("WORLD_SIZE", "2")
        .env("RANK", "x")
        .assert()
        .failure()
        .stderr(predicate::str::contains("RANK"));
}

#[test]
fn info_reports_modules_and_toolchain() {
    sptrans()
        .args(["info", "--no-bandwidth"])
        .assert()
        .success()
        .stdout(predicate::str::contains("transpose").and(predicate::str::contains("segsort")).and(predicate::str::contains("device toolchain")));
    // NCCL, found or not: a path that does not load is named (beside the library the loader
    // found instead, where it finds one).
    sptrans().args(["info", "--no-bandwidth"]).env("SPTRANS_NCCL_LIB", "/nonexistent/libnccl.so.2").assert().success().stdout(
        predicate::str::contains("NCCL (for --gpus N): not found")
            .or(predicate::str::contains("SPTRANS_NCCL_LIB not usable"))
            .and(predicate::str::contains("/nonexistent/libnccl.so.2")),
    );
}

gpu_test!(fn transpose_and_bench_run_on_the_gpu(gpu) {
    let dir = tempfile::tempdir().unwrap();
    let real = gen_file(dir.path(), "big.mtx", &["uniform", "3000", "2000", "200000"]);
    for algo in ["scan", "merge", "radix", "coo", "auto"] {
        let out = dir.path().join(format!("{algo}.mtx"));
        sptrans().args(["transpose", "--check", "--algo", algo]).arg(&real).arg("-o").arg(&out).assert().success().stderr(predicate::str::contains(gpu.props().name.as_str()));
        transposed_equals_twin::<f64>(&real, &out);
    }
    sptrans().args(["info"]).assert().success().stdout(predicate::str::contains("cuSPARSE: ").and(predicate::str::contains("GB/s")));
});

#[test]
fn bench_without_a_gpu_says_so_and_runs_the_small_suite() {
    if gpu_testkit::shared_gpu().is_ok() {
        eprintln!("SKIPPED: bench_without_a_gpu_says_so_and_runs_the_small_suite (a GPU is present; the default suite would run)");
        return;
    }
    sptrans()
        .args(["bench", "--quiet", "--reps", "1"])
        .assert()
        .success()
        .stderr(predicate::str::contains("no GPU found").and(predicate::str::contains("serial twin only")))
        .stdout(
            predicate::str::contains("uniform 10k x 10k, 1M")
                .and(predicate::str::contains("laplacian3d 50^3"))
                .and(predicate::str::contains("| serial |")),
        );
}

/// `sptrans spmv` on the GPU or, without one, by the serial twin: y read back equals the twin's
/// within the bound; x from an array file; bad vectors refused with their reason.
#[test]
fn spmv_writes_y_and_refuses_bad_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let a_path = gen_file(dir.path(), "a.mtx", &["rmat", "8", "2000", "--seed", "3"]);
    let a = mm::read_csr::<f64>(&a_path).unwrap();
    let n = a.cols() as usize;
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    let x_path = dir.path().join("x.mtx");
    let mut text = format!("%%MatrixMarket matrix array real general\n{n} 1\n");
    for v in &x {
        text.push_str(&format!("{v}\n"));
    }
    std::fs::write(&x_path, text).unwrap();
    // Without a GPU an explicit format is an error naming the fallback; auto runs the threaded
    // CPU fallback, which --check compares with the serial twin.
    let gpu = gpu_testkit::shared_gpu().is_ok();
    for format in ["auto", "csr-adaptive", "jds", "scoo", "sell"] {
        let y_path = dir.path().join(format!("y-{format}.mtx"));
        let run = sptrans().args(["spmv", "--check", "--format", format]).arg(&a_path).arg("--x").arg(&x_path).arg("-o").arg(&y_path).assert();
        if !gpu && format != "auto" {
            run.code(1).stderr(predicate::str::contains("needs a GPU").and(predicate::str::contains("--format auto")).and(no_panic()));
            continue;
        }
        let said = if gpu { "check: y agrees" } else { "by the CPU fallback" };
        run.success().stderr(predicate::str::contains(said).and(predicate::str::contains("check: y agrees")).and(no_panic()));
        let y = mm::read_csr::<f64>(&y_path).unwrap();
        assert_eq!((y.rows(), y.cols()), (a.rows(), 1));
        let mut got = vec![0.0; a.rows() as usize];
        for (r, g) in got.iter_mut().enumerate() {
            for p in y.ptr()[r] as usize..y.ptr()[r + 1] as usize {
                *g = y.vals()[p];
            }
        }
        let mut want = vec![0.0; a.rows() as usize];
        sptrans::spmv::serial::spmv(&a, 1.0, &x, 0.0, &mut want);
        let bound = sptrans::spmv::serial::error_bound(&a, 1.0, &x, 0.0, &want);
        sptrans::spmv::serial::within(&got, &want, &bound).unwrap();
    }
    // x of the wrong length, x not an array, an unknown format: clear errors, exit code 1 or 2.
    let short = dir.path().join("short.mtx");
    std::fs::write(&short, "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n").unwrap();
    sptrans().arg("spmv").arg(&a_path).arg("--x").arg(&short).assert().code(1).stderr(predicate::str::contains("x must be").and(no_panic()));
    sptrans()
        .arg("spmv")
        .arg(&a_path)
        .arg("--x")
        .arg(&a_path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("must be a Matrix Market `array`").and(no_panic()));
    sptrans().arg("spmv").arg(&a_path).args(["--format", "ellpack"]).assert().code(2).stderr(predicate::str::contains("unknown SpMV format"));
    // Empty shapes: 0 × n gives an empty y; m × 0 gives zeros.
    for (m, nn) in [(0u64, 5u64), (4, 0)] {
        let p = dir.path().join(format!("e{m}x{nn}.mtx"));
        std::fs::write(&p, format!("%%MatrixMarket matrix coordinate real general\n{m} {nn} 0\n")).unwrap();
        let out = sptrans().arg("spmv").arg(&p).arg("--check").assert().success().get_output().stdout.clone();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(&format!("{m} 1")), "{text}");
        assert_eq!(text.lines().skip(3).filter(|l| l.trim() == "0").count() as u64, m);
    }
}

gpu_test!(fn spmv_bench_writes_table_csv_and_chart(_gpu) {
    let dir = tempfile::tempdir().unwrap();
    let (csv, svg) = (dir.path().join("spmv.csv"), dir.path().join("spmv.svg"));
    let json = dir.path().join("s.json");
    let out = sptrans()
        .args(["spmv-bench", "--suite", "small", "--reps", "3", "--quiet", "--csv"])
        .arg(&csv)
        .arg("--plot")
        .arg(&svg)
        .arg("--json")
        .arg(&json)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let recs = j["records"].as_array().unwrap();
    // 4 matrices × 2 precisions × every target (our formats, auto and cuSPARSE's algorithms),
    // counted from the tool's own list so a new format is counted too.
    let targets = sptrans_cli::spmv_bench::SpmvTarget::all().len();
    assert!(sptrans_cli::spmv_bench::SpmvTarget::all().contains(&sptrans_cli::spmv_bench::REFERENCE));
    assert_eq!(recs.len(), 4 * 2 * targets);
    assert!(recs.iter().filter(|r| r["note"].is_null()).all(|r| r["gflops"].as_f64().is_some_and(|g| g > 0.0)), "{j}");
    assert!(j["meta"]["copy_gb_per_s"].as_f64().is_some_and(|c| c > 100.0));
    let table = String::from_utf8(out).unwrap();
    assert!(table.contains("| × cuSPARSE CSR |") && table.contains("auto →"), "{table}");
    let text = std::fs::read_to_string(&csv).unwrap();
    // The same rows, plus the header.
    assert_eq!(text.lines().count(), 1 + 4 * 2 * targets, "{text}");
    assert!(text.lines().skip(1).all(|l| !l.contains("wrong result")));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
});

/// `sptrans svd` on a matrix whose singular values are known (a scaled permutation padded with
/// zero rows and columns: σ = 7, 5, 3, 2, 1, 0), its errors, and the restart cap.
#[test]
fn svd_finds_known_singular_values() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("perm.mtx");
    let entries = [(1, 4, 3.0), (3, 1, -7.0), (4, 6, 2.0), (6, 2, 5.0), (8, 3, -1.0)];
    let mut text = String::from("%%MatrixMarket matrix coordinate real general\n9 6 5\n");
    for (i, j, v) in entries {
        text.push_str(&format!("{i} {j} {v}\n"));
    }
    std::fs::write(&p, text).unwrap();
    let out = dir.path().join("sigma.txt");
    sptrans()
        .args(["svd", "-k", "6", "--block", "2", "-o"])
        .arg(&out)
        .arg(&p)
        .assert()
        .success()
        .stdout(predicate::str::contains("residual"))
        .stderr(no_panic());
    let sigma: Vec<f64> = std::fs::read_to_string(&out).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    let want = [7.0, 5.0, 3.0, 2.0, 1.0, 0.0];
    assert_eq!(sigma.len(), 6);
    for (s, w) in sigma.iter().zip(want) {
        assert!((s - w).abs() <= 1e-12 * 7.0, "σ {s} vs {w}");
    }
    sptrans().args(["svd", "-k", "7"]).arg(&p).assert().code(1).stderr(predicate::str::contains("at most min(rows, cols) = 6").and(no_panic()));
    sptrans().args(["svd", "-k", "2", "--block", "17"]).arg(&p).assert().code(1).stderr(predicate::str::contains("--block 17").and(no_panic()));
    // Settings no matrix can make valid are refused before the file is read (it does not exist).
    sptrans().args(["svd", "-k", "0", "no-such.mtx"]).assert().code(1).stderr(predicate::str::contains("-k 0").and(no_panic()));
    // A matrix holding NaN is named as such, not as a convergence failure.
    let nan = dir.path().join("nan.mtx");
    std::fs::write(&nan, "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 nan\n3 3 2\n").unwrap();
    sptrans().args(["svd", "-k", "1"]).arg(&nan).assert().code(1).stderr(predicate::str::contains("NaN or infinite").and(no_panic()));
    let big = gen_file(dir.path(), "u.mtx", &["uniform", "2000", "300", "12000"]);
    sptrans()
        .args(["svd", "-k", "8", "--tol", "1e-15", "--max-iter", "1", "--krylov", "16"])
        .arg(&big)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("did not converge in 1 cycles").and(no_panic()));
    // Randomized: the sketch spans the 6 columns, so the known σ come out exactly; on the flat
    // spectrum of the uniform matrix a missed --tol is reported, not an error.
    sptrans().args(["svd", "-k", "6", "--method", "randomized", "--power-iters", "1", "-o"]).arg(&out).arg(&p).assert().success().stderr(no_panic());
    let sigma: Vec<f64> = std::fs::read_to_string(&out).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    for (s, w) in sigma.iter().zip(want) {
        assert!((s - w).abs() <= 1e-12 * 7.0, "randomized σ {s} vs {w}");
    }
    sptrans()
        .args(["svd", "-k", "8", "--method", "randomized", "--oversample", "2", "--power-iters", "0", "--tol", "1e-12"])
        .arg(&big)
        .assert()
        .success()
        .stdout(predicate::str::contains("residual"))
        .stderr(predicate::str::contains("randomized: the largest residual is").and(no_panic()));
}

/// `sptrans svd --center` (sparse PCA) on a matrix whose centered singular triplets are known:
/// columns `c + d` with `c` constant and `d` of zero mean, so `A − 1μᵀ = [d₁ d₂]` with σ = √50,
/// √18 and V = the swapped identity; `-o -` puts σ alone on standard output (the table goes to
/// standard error) and `--left/--right` write U and V as Matrix Market arrays.
#[test]
fn svd_center_writes_principal_axes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.mtx");
    std::fs::write(&p, "%%MatrixMarket matrix coordinate real general\n4 2 8\n1 1 4\n2 1 -2\n3 1 1\n4 1 1\n1 2 2\n2 2 2\n3 2 7\n4 2 -3\n").unwrap();
    let (u, v) = (dir.path().join("u.mtx"), dir.path().join("v.mtx.gz"));
    let out = sptrans()
        .args(["svd", "-k", "2", "--center", "--tol", "1e-12", "-o", "-", "--left"])
        .arg(&u)
        .arg("--right")
        .arg(&v)
        .arg(&p)
        .assert()
        .success()
        .stderr(predicate::str::contains("residual/σ₁").and(no_panic()))
        .get_output()
        .stdout
        .clone();
    let sigma: Vec<f64> = String::from_utf8(out).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(sigma.len(), 2, "standard output holds σ alone: {sigma:?}");
    for (s, w) in sigma.iter().zip([50f64.sqrt(), 18f64.sqrt()]) {
        assert!((s - w).abs() <= 1e-12 * w, "σ {s} vs {w}");
    }
    let read = |path: &std::path::Path| -> (String, Vec<f64>) {
        let mut text = String::new();
        let f = std::fs::File::open(path).unwrap();
        if path.to_string_lossy().ends_with(".gz") {
            std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(f), &mut text).unwrap();
        } else {
            std::io::Read::read_to_string(&mut std::io::BufReader::new(f), &mut text).unwrap();
        }
        let mut lines = text.lines().filter(|l| !l.starts_with('%'));
        let dims = lines.next().unwrap().to_string();
        (dims, lines.map(|l| l.parse().unwrap()).collect())
    };
    let (vd, vv) = read(&v);
    assert_eq!(vd, "2 2");
    // Column-major V: the first axis is column 2 (σ = √50), the second column 1.
    let want = [0.0, 1.0, 1.0, 0.0];
    assert!(vv.iter().zip(want).all(|(g, w)| (g.abs() - w).abs() < 1e-10), "V = {vv:?}");
    let (ud, uu) = read(&u);
    assert_eq!(ud, "4 2");
    let s2 = 0.5f64.sqrt();
    let want = [0.0, 0.0, s2, s2, s2, s2, 0.0, 0.0];
    assert!(uu.iter().zip(want).all(|(g, w)| (g.abs() - w).abs() < 1e-10), "U = {uu:?}");
    // `--vectors PREFIX`: the same U and V as 2-D `.npy` arrays in Fortran order.
    let prefix = dir.path().join("pca");
    sptrans().args(["svd", "-k", "2", "--center", "--tol", "1e-12", "--vectors"]).arg(&prefix).arg(&p).assert().success();
    for (suffix, shape, want) in [(".U.npy", "(4, 2)", uu.clone()), (".V.npy", "(2, 2)", vv.clone())] {
        let bytes = std::fs::read(format!("{}{suffix}", prefix.display())).unwrap();
        assert_eq!(&bytes[..6], b"\x93NUMPY");
        let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        let header = String::from_utf8_lossy(&bytes[10..10 + hlen]).to_string();
        assert!(header.contains("'<f8'") && header.contains("'fortran_order': True") && header.contains(shape), "{suffix}: {header}");
        let got: Vec<f64> = bytes[10 + hlen..].chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got.len(), want.len(), "{suffix}");
        assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 1e-15 * w.abs().max(1.0)), "{suffix}: {got:?} vs {want:?}");
    }
    sptrans()
        .args(["svd", "-k", "1", "--vectors", "x", "--left", "u.mtx"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with").and(no_panic()));
    sptrans()
        .args(["svd", "-k", "1", "-o", "-", "--left", "-"])
        .arg(&p)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("only one of").and(no_panic()));
}

/// SuiteSparse archives (`NAME.tar.gz` holding `NAME/NAME.mtx` beside other members) are read
/// as their matrix, from a file and from standard input; one without `NAME/NAME.mtx` is an error
/// naming what it holds. Built with the system `tar`.
#[test]
fn suitesparse_archives_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("M");
    std::fs::create_dir(&m).unwrap();
    let a = gen_file(&m, "M.mtx", &["uniform", "300", "200", "2000"]);
    std::fs::write(m.join("M_b.mtx"), "%%MatrixMarket matrix array real general\n1 1\n1\n").unwrap();
    let tgz = dir.path().join("M.tar.gz");
    let ok = std::process::Command::new("tar").arg("czf").arg(&tgz).arg("-C").arg(dir.path()).args(["M/M_b.mtx", "M/M.mtx"]).status().unwrap();
    assert!(ok.success(), "tar czf");
    let (want, got) = (dir.path().join("want.mtx"), dir.path().join("got.mtx"));
    sptrans().args(["transpose", "--algo", "serial", "-o"]).arg(&want).arg(&a).assert().success();
    sptrans().args(["transpose", "--algo", "serial", "-o"]).arg(&got).arg(&tgz).assert().success().stderr(no_panic());
    assert_eq!(std::fs::read(&want).unwrap(), std::fs::read(&got).unwrap());
    let piped =
        sptrans().args(["transpose", "--algo", "serial", "-o", "-", "-"]).pipe_stdin(&tgz).unwrap().assert().success().get_output().stdout.clone();
    assert_eq!(piped, std::fs::read(&want).unwrap());
    let bad = dir.path().join("b.tar.gz");
    let ok = std::process::Command::new("tar").arg("czf").arg(&bad).arg("-C").arg(dir.path()).arg("M/M_b.mtx").status().unwrap();
    assert!(ok.success());
    sptrans()
        .args(["transpose", "-o"])
        .arg(dir.path().join("x.mtx"))
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no NAME/NAME.mtx").and(predicate::str::contains("M/M_b.mtx")).and(no_panic()));
}

/// SciPy `.npz` archives (`scipy.sparse.save_npz`; fixtures of the matrix crate, made by SciPy)
/// are read as their matrix: transposing one equals transposing the same matrix's `.mtx`.
#[test]
fn scipy_npz_archives_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../matrix/tests/data");
    for name in ["scipy-csr-f64", "scipy-csc-f32", "scipy-coo-i64"] {
        let (want, got) = (dir.path().join(format!("{name}-want.mtx")), dir.path().join(format!("{name}-got.mtx")));
        sptrans().args(["transpose", "--algo", "serial", "-o"]).arg(&want).arg(data.join(format!("{name}.mtx"))).assert().success();
        sptrans().args(["transpose", "--algo", "serial", "-o"]).arg(&got).arg(data.join(format!("{name}.npz"))).assert().success().stderr(no_panic());
        assert_eq!(std::fs::read(&want).unwrap(), std::fs::read(&got).unwrap(), "{name}");
    }
}

gpu_test!(fn index64_transpose_and_bench_on_the_gpu(_gpu) {
    // `--index 64`: every field through the 64-bit row pointer, checked against the twin by the
    // command and here; the bench's 64-bit runs checked against the twin too.
    let dir = tempfile::tempdir().unwrap();
    let real = gen_file(dir.path(), "real.mtx", &["rmat", "9", "5000"]);
    let int = gen_file(dir.path(), "int.mtx", &["uniform", "70", "40", "500", "--field", "integer"]);
    let pat = gen_file(dir.path(), "pat.mtx", &["dense-col", "80", "30", "200", "--field", "pattern"]);
    let cplx = gen_file(dir.path(), "cplx.mtx", &["rmat", "6", "200", "--field", "complex"]);
    for algo in ["radix", "scan", "auto"] {
        let out = dir.path().join(format!("{algo}.mtx"));
        sptrans().args(["transpose", "--check", "--index", "64", "--algo", algo]).arg(&real).arg("-o").arg(&out).assert().success().stderr(predicate::str::contains("64-bit row pointer").and(no_panic()));
        transposed_equals_twin::<f64>(&real, &out);
    }
    let out = dir.path().join("t.mtx");
    sptrans().args(["transpose", "--check", "--index", "64"]).arg(&int).arg("-o").arg(&out).assert().success();
    transposed_equals_twin::<i64>(&int, &out);
    sptrans().args(["transpose", "--check", "--index", "64"]).arg(&pat).arg("-o").arg(&out).assert().success();
    transposed_equals_twin::<()>(&pat, &out);
    sptrans().args(["transpose", "--check", "--index", "64"]).arg(&cplx).arg("-o").arg(&out).assert().success();
    transposed_equals_twin::<Complex64>(&cplx, &out);
    sptrans().args(["transpose", "--index", "16"]).arg(&real).arg("-o").arg(&out).assert().failure().code(2).stderr(predicate::str::contains("16"));
    let csv = dir.path().join("r.csv");
    let mats = dir.path().join("mats");
    std::fs::create_dir(&mats).unwrap();
    std::fs::copy(&real, mats.join("real.mtx")).unwrap();
    let out = sptrans().args(["bench", "--quiet", "--reps", "2", "--warmup", "1", "--index", "64", "--algos", "radix,scan,cusparse", "--suite"]).arg(&mats).arg("--csv").arg(&csv).assert().success().stderr(predicate::str::contains("64-bit row pointer").and(no_panic())).get_output().clone();
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count() - 1, 3, "{text}\n{}", String::from_utf8_lossy(&out.stdout));
    assert!(text.lines().skip(1).all(|l| l.contains(",true,")), "every 64-bit run checked against the twin:\n{text}");
});

#[test]
fn index64_reads_with_64_bit_indices_on_any_machine() {
    // `--index 64` reads the file into u64 indices (files of more than u32::MAX entries are read
    // that way); the serial twin and --check work on them without a GPU, with the same output.
    let dir = tempfile::tempdir().unwrap();
    let real = gen_file(dir.path(), "real.mtx", &["rmat", "8", "2000"]);
    let pat = gen_file(dir.path(), "pat.mtx", &["dense-row", "60", "50", "300", "--field", "pattern"]);
    let cplx = gen_file(dir.path(), "cplx.mtx", &["uniform", "40", "30", "200", "--field", "complex"]);
    let (o32, o64) = (dir.path().join("o32.mtx"), dir.path().join("o64.mtx"));
    for f in [&real, &pat, &cplx] {
        sptrans()
            .args(["transpose", "--check", "--algo", "serial", "--index", "64"])
            .arg(f)
            .arg("-o")
            .arg(&o64)
            .assert()
            .success()
            .stderr(predicate::str::contains("equals an independent COO sort transpose").and(no_panic()));
        sptrans().args(["transpose", "--algo", "serial"]).arg(f).arg("-o").arg(&o32).assert().success();
        assert_eq!(std::fs::read(&o32).unwrap(), std::fs::read(&o64).unwrap(), "{}", f.display());
    }
    // A file that declares more than u32::MAX entries: too large for 32-bit indices; with
    // --index 64 it is taken, and here refused only for the memory it would need.
    let big = dir.path().join("big.mtx");
    std::fs::write(&big, "%%MatrixMarket matrix coordinate pattern general\n100000 100000 5000000000\n1 1\n").unwrap();
    sptrans().args(["transpose", "--algo", "serial"]).arg(&big).arg("-o").arg(&o32).assert().failure().code(1).stderr(
        predicate::str::contains("5000000000").and(predicate::str::contains("too large")).and(predicate::str::contains("--index 64")).and(no_panic()),
    );
    sptrans()
        .args(["transpose", "--algo", "serial", "--index", "64", "--max-memory", "1G"])
        .arg(&big)
        .arg("-o")
        .arg(&o64)
        .assert()
        .failure()
        .code(1)
        .stderr(predicate::str::contains("5000000000").and(predicate::str::contains("too large").not()).and(no_panic()));
}
