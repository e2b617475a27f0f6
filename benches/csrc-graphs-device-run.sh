#!/usr/bin/env bash
# CSRC on power-law and realistic matrices (issue 37), one device call: the csrc tests (every
# product by row blocks and by pieces against the twin, the R-MAT going by pieces), memcheck of
# the pieces test, the graphs suite of the csrc bench (row blocks against pieces, cuSPARSE
# beside), and the SVD of an R-MAT 2^18 with its per-operation profile.
# Here (release builds, stripped; tar + gzip as .gpu/bundle.tgz when near 64 MiB):
#   .gpu/csrc-test    cargo test --release -p gpu-csrc --test csrc --no-run (its executable)
#   .gpu/csrc-bench   cargo bench -p gpu-csrc --bench csrc --no-run (its executable)
#   .gpu/sptrans      cargo build --release -p sptrans-cli
# There: `bash benches/csrc-graphs-device-run.sh` (output in $OUT).
set -u
O=${OUT:-.gpu/out}; mkdir -p "$O"
SPTRANS_REQUIRE_GPU=1 .gpu/csrc-test --test-threads=1 > "$O/csrc-test.txt" 2>&1; tail -3 "$O/csrc-test.txt"
SPTRANS_TEST_MAX_LEN=70000 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 .gpu/csrc-test power_law --test-threads=1 > "$O/csrc-memcheck.txt" 2>&1; tail -2 "$O/csrc-memcheck.txt"
SPTRANS_CSRC_SUITE=graphs SPTRANS_CSRC_CSV="$O/csrc-graphs.csv" .gpu/csrc-bench > "$O/csrc-graphs.md" 2> "$O/csrc-graphs.err"; cat "$O/csrc-graphs.md"
.gpu/sptrans gen rmat 18 3000000 --seed 6 -o /tmp/rmat18.mtx 2>&1 | tail -1
.gpu/sptrans svd /tmp/rmat18.mtx -k 16 --profile -o "$O/rmat18-sigma.txt" 2>&1 | tail -14
