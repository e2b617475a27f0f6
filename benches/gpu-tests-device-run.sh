#!/usr/bin/env bash
# Every GPU test of the workspace and the Python GPU suite, in one device call: the gate an issue
# that touches kernels, formats or the GPU paths of the CLI or Python passes before it closes
# (ARCHITECTURE.md, "Before an issue closes"). Stage here:
#   bash benches/stage-device-bundle.sh tests     # .gpu/tests.txz: every test executable,
#                                                 # the CLI, the wheel (build it first:
#                                                 # (cd python && maturin build --release -o ../.whl))
# then on the device: run with carry [".gpu/tests.txz"]:
#   bash benches/gpu-tests-device-run.sh          # PART=rust|python|memcheck|all (default all);
#                                                 # ONLY=<regex> runs the Rust binaries it matches,
#                                                 # SKIP=<regex> leaves them out. csrc's binary
#                                                 # took ~260 s on an H100 (its single-threaded
#                                                 # twin, now computed once per input: not yet
#                                                 # re-timed), so the gate was two calls,
#                                                 # SKIP='^csrc-' (~380 s) then PART=rust
#                                                 # ONLY='^csrc-' PER_BINARY_S=450;
#                                                 # MEMCHECK / RACECHECK="<binary regex>[:<filter>] ..."
#                                                 # add sanitizer runs of chosen binaries
# Each Rust test binary runs with SPTRANS_REQUIRE_GPU=1 (a skipped GPU test fails); multi-GPU
# tests run on the GPUs present (SPTRANS_REQUIRE_GPUS=<count> on several). Data tests report
# themselves skipped without ../shared. Logs and the summary go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
PART=${PART:-all}
cd "$(dirname "$0")/.."
[ -d .gpu/t/tests ] || { mkdir -p .gpu/t && tar xJf .gpu/tests.txz -C .gpu/t; } || exit 1
. benches/nccl-env.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
export SPTRANS_REQUIRE_GPU=1 SPTRANS_BIN=$PWD/.gpu/t/sptrans SPTRANS_GPU_TEST_LOG=$OUT/gpu-tests.records
fail=0
if [ "$PART" = all ] || [ "$PART" = rust ]; then
  : > "$OUT/rust.txt"
  for t in .gpu/t/tests/*; do
    name=$(basename "$t")
    # xtask's tests are host tooling (they run cargo, which this machine does not have).
    case "$name" in xtask-*) echo "$name: host tooling, not run here" >> "$OUT/rust.txt"; continue ;; esac
    [ -n "${ONLY:-}" ] && ! echo "$name" | grep -qE "$ONLY" && continue
    [ -n "${SKIP:-}" ] && echo "$name" | grep -qE "$SKIP" && continue
    start=$(date +%s%N)
    timeout "${PER_BINARY_S:-300}" "$t" --test-threads="${THREADS:-1}" > "$OUT/rust-$name.log" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    summary=$(grep -h "^test result:" "$OUT/rust-$name.log" | tail -1)
    printf '%-40s rc=%-3s %7s ms %s\n' "$name" "$rc" "$ms" "$summary" | tee -a "$OUT/rust.txt"
    [ "$rc" = 0 ] || { fail=1; grep -E "^test .* FAILED|panicked|^---- " "$OUT/rust-$name.log" | head -20; }
  done
  echo "GPU test records: $(grep -c '^pass' "$SPTRANS_GPU_TEST_LOG" 2>/dev/null) pass, $(grep -c '^fail' "$SPTRANS_GPU_TEST_LOG" 2>/dev/null) fail, $(grep -c '^skip' "$SPTRANS_GPU_TEST_LOG" 2>/dev/null) skip" | tee -a "$OUT/rust.txt"
  grep '^skip' "$SPTRANS_GPU_TEST_LOG" 2>/dev/null | cut -f2,3 | sort -u | head -40 | tee -a "$OUT/rust.txt"
fi
if [ "$PART" = all ] || [ "$PART" = python ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/t/*.whl > "$OUT/pip.log" 2>&1 || { echo "wheel install failed"; cat "$OUT/pip.log"; fail=1; }
  rm -rf /tmp/pytests && cp -r python/tests /tmp/pytests
  (cd /tmp/pytests && PYTHONPATH=/tmp/site timeout "${PYTHON_S:-400}" python3 -m pytest -q -rs -p no:cacheprovider . > "$OUT/pytest.log" 2>&1)
  rc=$?
  echo "python suite: rc=$rc $(tail -1 "$OUT/pytest.log")" | tee "$OUT/python.txt"
  [ "$rc" = 0 ] || { fail=1; grep -E "FAILED|Error" "$OUT/pytest.log" | head -30; }
fi
if [ -n "${MEMCHECK:-}" ]; then
  # MEMCHECK="<binary regex>[:<test filter>] ..." : memcheck (1M-item inputs) of the binaries
  # named, each with its test-name filter; RACECHECK alike (64k-item inputs).
  for spec in $MEMCHECK; do
    re=${spec%%:*}; filt=""; [ "$spec" != "$re" ] && filt=${spec#*:}
    for b in $(ls .gpu/t/tests/* | grep -E "/($re)-[0-9a-f]+$"); do
      SPTRANS_TEST_MAX_LEN=1048576 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 "$b" $filt --test-threads=1 > "$OUT/memcheck-$(basename "$b").log" 2>&1
      echo "memcheck $(basename "$b") $filt: rc=$? $(grep -h 'ERROR SUMMARY' "$OUT/memcheck-$(basename "$b").log" | tail -1)" | tee -a "$OUT/memcheck.txt"
    done
  done
  for spec in ${RACECHECK:-}; do
    re=${spec%%:*}; filt=""; [ "$spec" != "$re" ] && filt=${spec#*:}
    for b in $(ls .gpu/t/tests/* | grep -E "/($re)-[0-9a-f]+$"); do
      SPTRANS_TEST_MAX_LEN=65536 compute-sanitizer --tool racecheck --error-exitcode 9 "$b" $filt --test-threads=1 > "$OUT/racecheck-$(basename "$b").log" 2>&1
      echo "racecheck $(basename "$b") $filt: rc=$? $(grep -h 'RACECHECK SUMMARY\|ERROR SUMMARY' "$OUT/racecheck-$(basename "$b").log" | tail -1)" | tee -a "$OUT/memcheck.txt"
    done
  done
fi
if [ "$PART" = all ] || [ "$PART" = memcheck ]; then
  # Memcheck of the cross-stream tests (forked streams, lent scratch) and of a Python operator
  # whose caller rewrites its index arrays after the build.
  s=$(ls .gpu/t/tests/streams-* | head -1)
  SPTRANS_TEST_MAX_LEN=1048576 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 "$s" --test-threads=1 > "$OUT/memcheck-streams.log" 2>&1
  echo "memcheck streams: rc=$? $(grep -h 'ERROR SUMMARY' "$OUT/memcheck-streams.log" | tail -1)" | tee "$OUT/memcheck.txt"
  cat > /tmp/mutate.py <<'PY'
import numpy as np, cupy as cp, cupyx.scipy.sparse as csp, scipy.sparse as sp, sptrans
a = sp.random(4099, 3001, density=0.003, random_state=1, format="csr")
x = np.random.default_rng(2).standard_normal(3001)
for fmt in ["csr-vector", "merge-path", "auto"]:
    d = csp.csr_matrix(a)
    op = sptrans.Operator(d, format=fmt)
    d.indices[5] = 2_000_000_000
    d.indptr[7] = 2_000_000_000
    y = cp.asnumpy(op @ cp.asarray(x))
    assert np.abs(y - a @ x).max() < 1e-10, fmt
cp.cuda.Device().synchronize()
print("ok")
PY
  PYTHONPATH=/tmp/site compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 python3 /tmp/mutate.py > "$OUT/memcheck-python.log" 2>&1
  echo "memcheck python (arrays rewritten after the build): rc=$? $(grep -h 'ERROR SUMMARY' "$OUT/memcheck-python.log" | tail -1)" | tee -a "$OUT/memcheck.txt"
  s=$(ls .gpu/t/tests/streams-* | head -1)
  SPTRANS_TEST_MAX_LEN=65536 compute-sanitizer --tool racecheck --error-exitcode 9 "$s" buffer_freed --test-threads=1 > "$OUT/racecheck-streams.log" 2>&1
  echo "racecheck (small): rc=$? $(grep -h 'RACECHECK SUMMARY\|ERROR SUMMARY' "$OUT/racecheck-streams.log" | tail -1)" | tee -a "$OUT/memcheck.txt"
fi
echo "gpu tests: $([ $fail = 0 ] && echo ALL GREEN || echo SOME FAILED)" | tee "$OUT/summary.txt"
# One archive of the logs (the device tool returns a limited number of files).
tar czf "$OUT/logs.tgz" -C "$OUT" --exclude logs.tgz . 2>/dev/null && find "$OUT" -maxdepth 1 -name 'rust-*.log' -delete
exit $fail
