#![doc = include_str!("../README.md")]
use std::io::Write;
use std::sync::OnceLock;

pub use gpu_runtime::Gpu;
use rand::{rngs::StdRng, Rng, SeedableRng};

/// Byte written over outputs before a kernel runs, so unwritten elements show up as
/// `0xABABABAB`-style values instead of plausible zeros.
pub const POISON_BYTE: u8 = 0xAB;

/// The shared device of this test binary, or why there is none.
pub fn shared_gpu() -> Result<&'static Gpu, &'static str> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| Gpu::first().map_err(|e| e.to_string())).as_ref().map_err(|s| s.as_str())
}

fn record(outcome: &str, name: &str, reason: &str) {
    if let Ok(path) = std::env::var("SPTRANS_GPU_TEST_LOG") {
        let line = format!("{outcome}\t{name}\t{reason}\n");
        // One write per line on an append-mode file: lines from parallel tests do not interleave.
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

struct Outcome<'a> {
    name: &'a str,
}

impl Drop for Outcome<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            record("fail", self.name, "");
        } else {
            record("pass", self.name, "");
        }
    }
}

/// Runs GPU test `name` with the shared device, or records it as skipped when there is none
/// (failing instead under `SPTRANS_REQUIRE_GPU=1`). Use through [`gpu_test!`].
pub fn run_gpu_test(name: &str, body: impl FnOnce(&Gpu)) {
    match shared_gpu() {
        Ok(gpu) => {
            let _outcome = Outcome { name };
            body(gpu);
        }
        Err(reason) => {
            let required = std::env::var("SPTRANS_REQUIRE_GPU").is_ok_and(|v| v == "1");
            skip_or_fail(name, reason, "no GPU: ", required.then(|| format!("SPTRANS_REQUIRE_GPU=1 but no GPU: {reason}")));
        }
    }
}

/// Records test `name` as skipped for `reason` (and says so, the reason after `label`), or —
/// when `required` holds the message of the variable that demands it — as failed, panicking
/// with that message.
fn skip_or_fail(name: &str, reason: &str, label: &str, required: Option<String>) {
    if let Some(msg) = required {
        record("fail", name, reason);
        panic!("{msg}");
    }
    record("skip", name, reason);
    eprintln!("SKIPPED ({label}{reason}): {name}");
}

/// Runs multi-GPU test `name` on NCCL communicators over the first `count` GPUs, or records it
/// as skipped when there are fewer GPUs or no NCCL (failing instead under
/// `SPTRANS_REQUIRE_GPUS=<count or more>`). Multi-GPU tests of one binary run one at a time.
pub fn run_multi_gpu_test(name: &str, count: usize, body: impl FnOnce(&gpu_dist::Comms)) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let present = gpu_runtime::device_count().unwrap_or(0);
    let comms = if present < count {
        Err(format!("{count} GPUs wanted, {present} present"))
    } else {
        gpu_dist::Comms::local(count).map_err(|e| e.to_string())
    };
    match comms {
        Ok(c) => {
            let _outcome = Outcome { name };
            body(&c);
        }
        Err(reason) => {
            let required = std::env::var("SPTRANS_REQUIRE_GPUS").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
            skip_or_fail(name, &reason, "", (required >= count).then(|| format!("SPTRANS_REQUIRE_GPUS={required} but {reason}")));
        }
    }
}

/// For a multi-process test: starts this test binary again `world` times as ranks `0 .. world`
/// of a launch (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, NCCL's id through the file `dir/nccl.id`),
/// each running only the test `test` with `env` added and `SPTRANS_TEST_MP_RANK_OUT` set to
/// `dir/out.<rank>` (a file the rank may write for the parent to read), and waits for them,
/// panicking when one fails or when they take more than `timeout`. A rank knows it is one by
/// `SPTRANS_TEST_MP_RANK_OUT` (and should return after its part).
pub fn launch_ranks(test: &str, world: usize, dir: &std::path::Path, env: &[(&str, String)], timeout: std::time::Duration) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut children: Vec<_> = (0..world)
        .map(|rank| {
            let mut cmd = std::process::Command::new(&exe);
            cmd.args([test, "--exact", "--test-threads", "1", "--nocapture"])
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", world.to_string())
                .env("LOCAL_RANK", rank.to_string())
                .env("SPTRANS_NCCL_ID_FILE", dir.join("nccl.id"))
                .env("SPTRANS_TEST_MP_RANK_OUT", dir.join(format!("out.{rank}")))
                .env_remove("SPTRANS_GPU_TEST_LOG");
            for (k, v) in env {
                cmd.env(k, v);
            }
            cmd.spawn().expect("starting a rank of the launch")
        })
        .collect();
    let deadline = std::time::Instant::now() + timeout;
    for (rank, ch) in children.iter_mut().enumerate() {
        loop {
            if let Some(st) = ch.try_wait().expect("waiting for a rank") {
                assert!(st.success(), "rank {rank} of the launch failed: {st}");
                break;
            }
            if std::time::Instant::now() > deadline {
                let _ = ch.kill();
                panic!("rank {rank} of the launch did not finish in {timeout:?}");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    assert!(!dir.join("nccl.id").exists(), "rank 0 leaves the id file behind");
}

/// For scaling benchmarks: runs `f` on NCCL communicators over 1, 2, 4, … GPUs while that many
/// are present, stopping (with a `SKIPPED` line naming the count and the reason) when none can
/// be made (no NCCL, a failing GPU).
pub fn for_each_gpu_count(mut f: impl FnMut(&gpu_dist::Comms)) {
    let present = gpu_runtime::device_count().unwrap_or(0);
    let mut count = 1;
    while count <= present {
        match gpu_dist::Comms::local(count) {
            Ok(c) => f(&c),
            Err(e) => {
                eprintln!("SKIPPED {count} GPUs: {e}");
                return;
            }
        }
        count *= 2;
    }
}

/// The shared test-data folder `sub` (`../shared/<sub>` beside the workspace), or the folder in
/// the environment variable `env` when set; `None` when it is absent, after recording the
/// running test (`label` and the thread's test name) as skipped with the reason, which
/// `cargo xtask test` lists by name. Under `SPTRANS_REQUIRE_DATA=1` absent data panics (fails).
pub fn test_data(label: &str, sub: &str, env: &str) -> Option<std::path::PathBuf> {
    // crates/testkit -> the workspace root -> the folder beside it.
    let beside = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(3).map(|p| p.join("shared").join(sub));
    let dir = std::env::var_os(env).map(std::path::PathBuf::from).or(beside).unwrap_or_default();
    if dir.is_dir() {
        return Some(dir);
    }
    let thread = std::thread::current();
    let name = match thread.name() {
        Some(t) if t != "main" => format!("{label}::{t}"),
        _ => label.to_string(),
    };
    let reason = format!("no test data: {} not found (a clone without ../shared; set {env} to point elsewhere)", dir.display());
    let required = std::env::var("SPTRANS_REQUIRE_DATA").is_ok_and(|v| v == "1");
    skip_or_fail(&name, &reason, "", required.then(|| format!("SPTRANS_REQUIRE_DATA=1 but {reason}")));
    None
}

/// Declares GPU tests: `gpu_test!(fn name(gpu) { ... })`, where `gpu: &Gpu`. Each becomes a
/// `#[test]` that is recorded as skipped without a device.
#[macro_export]
macro_rules! gpu_test {
    ($(#[$m:meta])* fn $name:ident($gpu:ident) $body:block) => {
        $(#[$m])*
        #[test]
        fn $name() {
            $crate::run_gpu_test(concat!(module_path!(), "::", stringify!($name)), |$gpu: &$crate::Gpu| $body);
        }
    };
}

/// Prints the seed if the test panics, so the run can be replayed with `SPTRANS_TEST_SEED`.
pub struct SeedGuard(pub u64);

impl Drop for SeedGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("replay with SPTRANS_TEST_SEED={}", self.0);
        }
    }
}

/// A seeded RNG and a guard that prints the seed on failure. Fresh seed per run unless
/// `SPTRANS_TEST_SEED` is set.
pub fn rng() -> (StdRng, SeedGuard) {
    let seed = std::env::var("SPTRANS_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| rand::rng().random());
    (StdRng::seed_from_u64(seed), SeedGuard(seed))
}

/// Sizes that break tiled code: 0, 1, 31, 32, 33, `tile - 1`, `tile`, `tile + 1`, `2^k ± 1` for
/// k in 10..=max_log2, and two random sizes below `2^max_log2`. Sorted, deduplicated.
pub fn awkward_sizes(tile: usize, max_log2: u32, rng: &mut StdRng) -> Vec<usize> {
    let mut v = vec![0, 1, 31, 32, 33, tile.saturating_sub(1), tile, tile + 1, 2 * tile + 1];
    for k in 10..=max_log2 {
        v.extend([(1usize << k) - 1, 1 << k, (1 << k) + 1]);
    }
    v.push(rng.random_range(1..1usize << max_log2));
    v.push(rng.random_range(1..1usize << max_log2));
    v.sort_unstable();
    v.dedup();
    v
}

/// Largest input a randomized test should use: `SPTRANS_TEST_MAX_LEN` when set (e.g. to keep
/// compute-sanitizer runs short), unlimited otherwise. Tests skip larger cases.
pub fn max_len() -> usize {
    std::env::var("SPTRANS_TEST_MAX_LEN").ok().and_then(|s| s.parse().ok()).unwrap_or(usize::MAX)
}

/// Key distributions for sort and merge tests: `random` (full 32-bit), `24-bit`,
/// `few-distinct` (4 values: stability shows in the payload), `sorted`, `reverse`, `all-equal`.
pub const SORT_KEY_DISTS: [&str; 6] = ["random", "24-bit", "few-distinct", "sorted", "reverse", "all-equal"];

/// `n` keys drawn under one of [`SORT_KEY_DISTS`] (`sorted` / `reverse` sort values below 1000).
pub fn sort_keys(dist: &str, n: usize, r: &mut StdRng) -> Vec<u32> {
    let mut k: Vec<u32> = match dist {
        "random" => (0..n).map(|_| r.random()).collect(),
        "24-bit" => (0..n).map(|_| r.random_range(0..1 << 24)).collect(),
        "few-distinct" => (0..n).map(|_| r.random_range(0..4)).collect(),
        "all-equal" => vec![r.random(); n],
        _ => (0..n).map(|_| r.random_range(0..1000)).collect(),
    };
    match dist {
        "sorted" => k.sort_unstable(),
        "reverse" => k.sort_unstable_by(|a, b| b.cmp(a)),
        _ => {}
    }
    k
}
