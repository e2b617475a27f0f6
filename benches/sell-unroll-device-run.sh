#!/usr/bin/env bash
# Branch wip/sell-unroll (session 21, not yet run on a GPU): SELL-C-σ and SELL-VI loading four
# slots a turn. Here: `bash benches/stage-device-bundle.sh one` on this branch. There: `tar xzf
# .gpu/bundle.tgz -C .gpu`, then this script: the spmv tests (every format against the twin,
# SELL-VI's own test), memcheck of them, then the realistic and default suites in f64 and f32
# with SELL-C-σ, SELL-VI, JDS and cuSPARSE (compare with main's session-21 tables in
# benches/results/2026-11-27-h100-s21-sell-vi/: SELL-VI 0.088 ms on the 27-point stencil in both
# precisions, latency-bound). Output in $OUT/unroll.
set -u
O=${OUT:-.gpu/out}/unroll; mkdir -p "$O"
for p in f64 f32; do
  OUT=$O/$p PRECISION=$p TESTS=$([ $p = f64 ] && echo 1 || echo 0) bash benches/sell-vi-device-run.sh > "$O/$p.txt" 2>&1
  grep -E "^\| (auto|jds|sell|sell-vi|cusparse-csr-alg1) \|" "$O/$p/sell-vi/"*.md
done
