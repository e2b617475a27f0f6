#!/usr/bin/env bash
# Branch wip/sell-vi (session 21): SELL-VI (SELL-C-σ with values by index) on one
# GPU. Here: `bash benches/stage-device-bundle.sh one` on this branch (.gpu/bundle.tgz: sptrans,
# spmv-test, ...). There: `tar xzf .gpu/bundle.tgz -C .gpu`, then this script. It runs the spmv
# tests (SELL-VI among every format; its own test of 1..257 values), memcheck of them, then
# `sptrans spmv-bench` over the realistic suite and the default suite with SELL-VI beside the
# formats Auto weighs, f64. Tables
# and CSV in $OUT.
set -u
S=.gpu/sptrans; T=.gpu/spmv-test; O=${OUT:-.gpu/out}/sell-vi; mkdir -p "$O"
M=${REALISTIC_MATRICES:-/tmp/realistic}; mkdir -p "$M"
. benches/realistic-suite-gen.sh
# TESTS=0 skips the tests and memcheck; RUNS=N times the realistic suite N times; PRECISION=f32
# times f32 values (f64 by default).
[ "${TESTS:-1}" = 1 ] && { SPTRANS_REQUIRE_GPU=1 $T --test-threads=2 > "$O/spmv-test.txt" 2>&1; tail -3 "$O/spmv-test.txt"; }
F=auto,jds,sell,sell-vi,csr-adaptive,cusparse-csr-alg1
for i in $(seq 1 "${RUNS:-1}"); do
  s=$([ "$i" = 1 ] && echo "" || echo "-$i")
  $S spmv-bench --suite "$M" --formats $F --precision ${PRECISION:-f64} --reps ${REPS:-20} --quiet --csv "$O/realistic-spmv$s.csv" > "$O/realistic-spmv$s.md" 2> "$O/realistic-spmv$s.err"
done
$S spmv-bench --formats $F --precision ${PRECISION:-f64} --reps ${REPS:-20} --quiet --csv "$O/default-spmv.csv" > "$O/default-spmv.md" 2> "$O/default-spmv.err"
cat "$O/realistic-spmv.md" "$O/default-spmv.md"
[ "${TESTS:-1}" = 1 ] && SPTRANS_TEST_MAX_LEN=70000 timeout ${SAN_LIMIT:-240} compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $T --test-threads=1 > "$O/memcheck.txt" 2>&1; tail -3 "$O/memcheck.txt"
tar czf "${OUT:-.gpu/out}/sell-vi.tgz" -C "$(dirname "$O")" sell-vi
