#!/usr/bin/env bash
# Session 20 on four GPUs (issue 39). PART=a: the transpose's tests on 1, 2, 4 GPUs, the CLI's
# --check on 2-4, the 2^30 transpose bench (1, 2, 4), the R-MAT 2^24 SVD bench (1, 2, 4).
# PART=b: past one H100 — 4.0e9 nonzeros transposed on 4 GPUs (checked by fingerprints) and the
# 16 largest singular triplets of a 4.0e9-nonzero bag of words. Binaries from .gpu/s20x4.tgz
# (dist-test, dist-bench, svd-dist-bench, sptrans); output tarred into $OUT.
set -u
O=$OUT/x4; mkdir -p "$O"
. benches/nccl-env.sh
nvidia-smi -L | tee "$O/gpus.txt"
G=$(nvidia-smi -L | wc -l)
mem() { while true; do nvidia-smi --query-gpu=index,memory.used --format=csv,noheader >> "$O/mem-$1.txt"; sleep 1; done; }
if [ "${PART:-a}" = a ]; then
  SPTRANS_GPU_TEST_LOG="$O/dist-tests.log" SPTRANS_REQUIRE_GPUS=$G .gpu/dist-test --test-threads 1 > "$O/dist-tests.out" 2>&1; echo "dist tests rc $?"; cat "$O/dist-tests.log"
  .gpu/sptrans gen uniform 2000000 1500000 20000000 -o /tmp/u20.mtx 2>&1 | tail -1
  for n in $(seq 2 "$G"); do .gpu/sptrans transpose /tmp/u20.mtx -o /tmp/t$n.mtx --gpus "$n" --check 2>&1 | head -1; done
  SPTRANS_DIST_NNZ=1073741824 SPTRANS_DIST_CSV="$O/dist.csv" .gpu/dist-bench > "$O/dist.txt" 2>&1; tail -8 "$O/dist.txt"
  SPTRANS_SVD_KIND=rmat SPTRANS_SVD_SCALE=24 SPTRANS_SVD_EDGES=268435456 SPTRANS_DIST_CSV="$O/svd-rmat.csv" .gpu/svd-dist-bench > "$O/svd-rmat.txt" 2>&1; tail -8 "$O/svd-rmat.txt"
else
  mem tr & M=$!
  SPTRANS_DIST_CHECK=1 SPTRANS_DIST_MIN_GPUS=4 SPTRANS_DIST_NNZ=4000000000 SPTRANS_DIST_RUNS=3 SPTRANS_DIST_CSV="$O/dist-4e9.csv" .gpu/dist-bench > "$O/dist-4e9.txt" 2>&1; tail -8 "$O/dist-4e9.txt"
  kill $M
  mem svd & M=$!
  SPTRANS_SVD_DOCS=125000000 SPTRANS_DIST_MIN_GPUS=4 SPTRANS_DIST_CSV="$O/svd-4e9.csv" .gpu/svd-dist-bench > "$O/svd-4e9.txt" 2>&1; tail -8 "$O/svd-4e9.txt"
  kill $M
  for f in tr svd; do sort -t, -k2 -n "$O/mem-$f.txt" 2>/dev/null | awk -F, '{gsub(/ MiB/,"",$2); if ($2+0 > m[$1]) m[$1] = $2+0} END {for (g in m) print "'$f' GPU " g ": at most " m[g] " MiB"}'; done | tee "$O/mem-max.txt"
fi
tar czf "$OUT/x4.tgz" -C "$OUT" x4
