#!/usr/bin/env bash
# The gpu-spmv device run behind BENCHMARKS.md: on the GPU host, after `../shared/tools/gpu-stage`
# (the spmv test and bench executables kept) and `cp target/release/sptrans .gpu/`, run
#   bash benches/spmv-device-run.sh
# It generates the matrices, runs the spmv tests, memcheck, racecheck and synccheck, then the bench (output in $OUT).
# The table of BENCHMARKS.md (every format, f64 and f32) comes from `sptrans spmv-bench`, run at the end.
set -u
S=.gpu/sptrans; M=${SPMV_MATRICES:-/tmp/spmv-matrices}; mkdir -p "$M"
$S gen uniform 100000 100000 10000000 --seed 1 -o $M/uniform_100k_10M.mtx
$S gen rmat 20 8000000 --seed 4 -o $M/rmat_2e20_8M.mtx
$S gen rmat 22 16000000 --seed 5 -o $M/rmat_2e22_16M.mtx
$S gen laplacian3d 100 -o $M/laplacian3d_100.mtx
$S gen dense-row 1000000 1000000 10000000 --seed 2 -o $M/dense_row_1M_10M.mtx
T=$(ls .gpu/tests/spmv-*)
for i in 1 2; do SPTRANS_REQUIRE_GPU=1 $T --test-threads=2 2>&1 | tail -3; done
SPTRANS_TEST_MAX_LEN=70000 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $T --test-threads=1 2>&1 | tail -3
for tool in racecheck synccheck; do
  SPTRANS_TEST_MAX_LEN=5000 compute-sanitizer --tool $tool --kernel-name kns=spmv_ --error-exitcode 9 $T --test-threads=1 2>&1 | tail -2
done
B=$(ls .gpu/benches/spmv-*)
SPTRANS_SPMV_FILES=$M/uniform_100k_10M.mtx,$M/rmat_2e20_8M.mtx,$M/rmat_2e22_16M.mtx,$M/laplacian3d_100.mtx,$M/dense_row_1M_10M.mtx \
  $B --bench 2>&1 | tee "${OUT:-.gpu/out}/spmv-bench.txt"
$S spmv-bench --quiet --csv "${OUT:-.gpu/out}/spmv-bench.csv" --plot "${OUT:-.gpu/out}/spmv-bench.svg" > "${OUT:-.gpu/out}/spmv-bench.md"
