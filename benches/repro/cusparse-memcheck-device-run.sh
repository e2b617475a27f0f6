#!/usr/bin/env bash
# On the GPU host: the C reproducer (benches/repro/cusparse_spmv_memcheck.cu) on fuzzed small
# matrices under memcheck, then the whole spmv test binary (.gpu/spmv-test) under memcheck,
# PAR runs with the tests in parallel threads (the default: one shared GPU stream) and SER runs
# one test at a time. With SEED=..., first the f32 format test alone with that seed, three times
# (session 19's failing seed: 3735529225258995216). Logs of runs with errors kept whole. Results
# under $OUT/repro.
set -u
R=$OUT/repro; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$R/gpu.txt"
nvcc -O2 -std=c++17 -o /tmp/repro benches/repro/cusparse_spmv_memcheck.cu -lcusparse -lpthread > "$R/nvcc.log" 2>&1 || echo "nvcc failed" >> "$R/summary.txt"
FUZZ=3000 FUZZ_ROWS=32 compute-sanitizer --tool memcheck /tmp/repro > "$R/repro-fuzz32.log" 2>&1; echo "repro fuzz32: rc $? $(grep -E 'ERROR SUMMARY|cuSPARSE [0-9]' $R/repro-fuzz32.log | tr '\n' ' ')" >> "$R/summary.txt"
FUZZ=500 FUZZ_ROWS=64 compute-sanitizer --tool memcheck /tmp/repro > "$R/repro-fuzz64.log" 2>&1; echo "repro fuzz64: rc $? $(grep -E 'ERROR SUMMARY|cuSPARSE [0-9]' $R/repro-fuzz64.log | tr '\n' ' ')" >> "$R/summary.txt"
one() { # name, extra args
  local n=$1; shift
  SPTRANS_REQUIRE_GPU=1 SPTRANS_TEST_MAX_LEN=100000 timeout 300 compute-sanitizer --tool memcheck --report-api-errors no .gpu/spmv-test "$@" > "$R/$n.log" 2>&1
  echo "$n: rc $? $(grep -E 'ERROR SUMMARY' $R/$n.log) $(grep -E '^test result' $R/$n.log)" >> "$R/summary.txt"
  grep -q "ERROR SUMMARY: 0 errors" "$R/$n.log" && rm "$R/$n.log"
}
if [ -n "${SEED:-}" ]; then
  for i in 1 2 3; do SPTRANS_TEST_SEED=$SEED one seed-$i every_format_matches_the_twin_f32 --test-threads 1; done
fi
for i in $(seq 1 ${PAR:-4}); do one par-$i; done
for i in $(seq 1 ${SER:-3}); do one ser-$i --test-threads 1; done
cat "$R/summary.txt"
tar czf "$OUT/repro.tgz" -C "$OUT" repro
