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
gen() { local name=$1; shift; [ -f "$M/$name.mtx" ] || $S gen "$@" -o "$M/$name.mtx" 2>&1 | tail -1; }
gen stencil27_100_natural stencil 100 --order natural &
gen stencil27_100_random stencil 100 --order random --seed 2 &
gen stencil27_100_rcm stencil 100 --order rcm &
gen stencil7_150_natural stencil 150 --points 7 &
gen graph_2M_deg8 graph 2000000 8 1000 --seed 3 &
gen circuit_3M circuit 3000000 4 --seed 4 &
gen text_1M_200k text 1000000 200000 20 --seed 5 &
gen lp_1M_1p2M lp 1000000 1200000 100 12 --seed 6 &
gen mesh_100_natural mesh 100 --order natural --seed 7 &
gen mesh_100_rcm mesh 100 --order rcm --seed 7 &
gen kkt_1M_500k kkt 1000000 500000 8 --seed 8 &
gen skyline_1M_10 skyline 1000000 10 --seed 9 &
wait
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
