#!/usr/bin/env bash
# SELL-C-σ (issue 37) on the GPU host, one call: the spmv tests (every format against the twin,
# SELL's GPU conversion equal to the twin's, the 16-bit boundary), memcheck, racecheck and
# synccheck of them, then the σ / 16-bit experiment (`sell_variants`) and `sptrans spmv-bench`
# over the realistic suite and the default suite's regular matrices.
# Here (release builds, stripped, tar + gzip as .gpu/bundle.tgz when near 64 MiB):
#   .gpu/spmv-test      cargo test --release -p gpu-spmv --test spmv --no-run (its executable)
#   .gpu/sell_variants  cargo build --release -p gpu-spmv --example sell_variants
#   .gpu/sptrans        cargo build --release -p sptrans-cli
# There: `bash benches/sell-device-run.sh` (tables and CSV in $OUT).
set -u
S=.gpu/sptrans; T=.gpu/spmv-test; O=${OUT:-.gpu/out}; mkdir -p "$O"
M=${REALISTIC_MATRICES:-/tmp/realistic}; D=${SPMV_MATRICES:-/tmp/spmv-matrices}; mkdir -p "$M" "$D"
gen() { local dir=$1 name=$2; shift 2; [ -f "$dir/$name.mtx" ] || $S gen "$@" -o "$dir/$name.mtx" 2>&1 | tail -1; }
. benches/realistic-suite-gen.sh
gen "$D" laplacian3d_100 laplacian3d 100 &
gen "$D" uniform_100k_10M uniform 100000 100000 10000000 --seed 1 &
wait
SPTRANS_REQUIRE_GPU=1 $T --test-threads=2 > "$O/spmv-test.txt" 2>&1; tail -3 "$O/spmv-test.txt"
.gpu/sell_variants "$M"/*.mtx "$D"/laplacian3d_100.mtx "$D"/uniform_100k_10M.mtx > "$O/sell-variants.csv" 2> "$O/sell-variants.err"
cat "$O/sell-variants.csv"; tail -5 "$O/sell-variants.err"
F=auto,jds,ell,sell,coo,csr-adaptive,cusparse-csr-alg1
$S spmv-bench --suite "$M" --formats $F --precision f64 --reps ${REPS:-20} --quiet --csv "$O/realistic-spmv.csv" > "$O/realistic-spmv.md" 2> "$O/realistic-spmv.err"
$S spmv-bench --formats $F --precision f64 --reps ${REPS:-20} --quiet --csv "$O/default-spmv.csv" > "$O/default-spmv.md" 2> "$O/default-spmv.err"
cat "$O/realistic-spmv.md" "$O/default-spmv.md"
# The sanitizers last, so a slow memcheck cannot starve the timings.
SPTRANS_TEST_MAX_LEN=70000 timeout ${SAN_LIMIT:-240} compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $T --test-threads=1 > "$O/memcheck.txt" 2>&1; tail -3 "$O/memcheck.txt"
for tool in racecheck synccheck; do
  SPTRANS_TEST_MAX_LEN=5000 compute-sanitizer --tool $tool --kernel-name kns=spmv_sell --error-exitcode 9 $T sell --test-threads=1 > "$O/$tool.txt" 2>&1; tail -2 "$O/$tool.txt"
done
