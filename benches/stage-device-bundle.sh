#!/usr/bin/env bash
# Builds here (release, stripped) the executables the device scripts expect in .gpu/ and packs
# them into .gpu/bundle.tgz, small enough to `carry` (64 MiB with the tracked tree): carry
# [".gpu/bundle.tgz"] alone, not ".gpu" (the loose executables beside it would pass the limit).
# On the GPU host: `tar xzf .gpu/bundle.tgz -C .gpu`, then the device script.
#   bash benches/stage-device-bundle.sh one    # one GPU: sell-device-run.sh, csrc-graphs-device-run.sh, two_pass_floor
#   bash benches/stage-device-bundle.sh dist   # several GPUs: dist-device-run.sh
#   bash benches/stage-device-bundle.sh radix  # gpu-radix against CUB: radix-device-run.sh
#   bash benches/stage-device-bundle.sh svd    # the Rust SVD bench: svd-device-run.sh PART=rust
#   bash benches/stage-device-bundle.sh svd radix  # several parts: one bundle with all of them
#   BASE_REV=81c1cc3 bash benches/stage-device-bundle.sh ab  # the criterion benches of the
#                                              # refactored crates, now and at BASE_REV, in
#                                              # .gpu/ab.txz: ab-device-run.sh (AB_BENCHES=pkg:bench ...)
#   bash benches/stage-device-bundle.sh tests  # every test executable, the CLI and the wheel in
#                                              # .gpu/tests.txz (xz: the executables share their
#                                              # embedded PTX): gpu-tests-device-run.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
mkdir -p .gpu
names=()
# exe NAME TARGET cargo-args...: the executable of target TARGET that the cargo command builds.
exe() {
  local name=$1 target=$2; shift 2
  local path
  path=$(cargo "$@" --message-format=json 2>/dev/null | TARGET=$target python3 -c '
import json, os, sys
want = os.environ["TARGET"]
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == want:
        print(m["executable"])' | tail -n 1)
  [ -n "$path" ] || { echo "no executable for $name ($*)" >&2; exit 1; }
  cp "$path" ".gpu/$name" && strip ".gpu/$name" 2>/dev/null || true
  names+=("$name")
}
if [ "${1:-one}" = ab ]; then
  # The criterion benches of every crate whose kernels a refactor touched, this tree's in
  # .gpu/ab/new/ and (BASE_REV=<git revision>) that revision's in .gpu/ab/base/, packed into
  # .gpu/ab.txz for benches/ab-device-run.sh (the 2% rule of issue 57: same run, alternated).
  benches="${AB_BENCHES:-gpu-scan:scan gpu-histogram:histogram gpu-ptr2idx:ptr2idx gpu-segmerge:segmerge gpu-segsort:segsort gpu-segsort:sort_pairs gpu-radix:radix gpu-transpose:transpose gpu-csrc:csrc gpu-spmv:spmv gpu-svd:svd}"
  build_benches() { # $1: source tree, $2: destination, $3: target dir
    for pb in $benches; do
      local pkg=${pb%%:*} bench=${pb##*:} path
      path=$(cd "$1" && CARGO_TARGET_DIR=$3 cargo bench -p "$pkg" --bench "$bench" --no-run --message-format=json 2>/dev/null | BENCH=$bench python3 -c '
import json, os, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == os.environ["BENCH"] and "bench" in m["target"]["kind"]:
        print(m["executable"])' | tail -n 1)
      [ -n "$path" ] || { echo "no bench $bench of $pkg in $1" >&2; exit 1; }
      cp "$path" "$2/$bench" && strip "$2/$bench" 2>/dev/null || true
    done
  }
  rm -rf .gpu/ab && mkdir -p .gpu/ab/new
  build_benches "$PWD" "$PWD/.gpu/ab/new" "$PWD/target"
  if [ -n "${BASE_REV:-}" ]; then
    rm -rf /tmp/sptrans-ab-base && git worktree add -f /tmp/sptrans-ab-base "$BASE_REV" >/dev/null
    mkdir -p .gpu/ab/base
    build_benches /tmp/sptrans-ab-base "$PWD/.gpu/ab/base" "$PWD/target/ab-base"
    git worktree remove --force /tmp/sptrans-ab-base
    echo "$BASE_REV $(git rev-parse --short "$BASE_REV")" > .gpu/ab/base/REV
  fi
  git rev-parse --short HEAD > .gpu/ab/new/REV
  tar cf - -C .gpu ab | xz -9 -T2 > .gpu/ab.txz
  rm -rf .gpu/ab
  ls -l .gpu/ab.txz
  exit 0
fi
if [ "${1:-one}" = tests ]; then
  ls .whl/sptrans_gpu-*.whl >/dev/null 2>&1 || { echo "build the wheel first: (cd python && maturin build --release -o ../.whl)" >&2; exit 1; }
  ../shared/tools/gpu-stage >/dev/null 2>&1 || { echo "gpu-stage failed" >&2; exit 1; }
  cargo build --release -p sptrans-cli
  rm -rf .gpu/t && mkdir -p .gpu/t && mv .gpu/tests .gpu/t/tests
  cp target/release/sptrans .gpu/t/sptrans && strip .gpu/t/sptrans
  cp "$(ls -t .whl/sptrans_gpu-*.whl | head -1)" .gpu/t/
  tar cf - -C .gpu/t . | xz -9 -T2 > .gpu/tests.txz
  rm -rf .gpu/t .gpu/benches
  ls -l .gpu/tests.txz
  exit 0
fi
for part in "${@:-one}"; do
case "$part" in
  radix)
    exe radix_vs_cub radix_vs_cub bench -p gpu-radix --bench radix_vs_cub --no-run
    ;;
  svd)
    exe svd svd bench -p gpu-svd --bench svd --no-run
    ;;
  one)
    exe sptrans sptrans build --release -p sptrans-cli
    exe spmv-test spmv test --release -p gpu-spmv --test spmv --no-run
    exe sell_variants sell_variants build --release -p gpu-spmv --example sell_variants
    exe csrc-test csrc test --release -p gpu-csrc --test csrc --no-run
    exe csrc-bench csrc bench -p gpu-csrc --bench csrc --no-run
    exe two_pass_floor two_pass_floor bench -p gpu-transpose --bench two_pass_floor --no-run
    ;;
  dist)
    exe sptrans sptrans build --release -p sptrans-cli
    exe dist-test dist test --release -p gpu-transpose --test dist --no-run
    exe dist-bench dist bench -p gpu-transpose --bench dist --no-run
    exe spmv-dist-test dist test --release -p gpu-spmv --test dist --no-run
    exe spmv-dist-bench dist bench -p gpu-spmv --bench dist --no-run
    exe svd-dist-test dist test --release -p gpu-svd --test dist --no-run
    exe svd-dist-bench dist bench -p gpu-svd --bench dist --no-run
    ;;
  *) echo "usage: $0 one|dist|radix|svd ... (several: one bundle) | tests" >&2; exit 2 ;;
esac
done
tar czf .gpu/bundle.tgz -C .gpu "${names[@]}"
ls -l .gpu/bundle.tgz
