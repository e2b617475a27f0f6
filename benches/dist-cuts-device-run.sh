#!/usr/bin/env bash
# Session 22's distributed transpose (issue 39: cut points from sampled pointers, the exchange in
# chunks gathered while the next travels) against an earlier build, on a multi-GPU machine,
# after `bash benches/stage-device-bundle.sh dist` and the earlier commit's `dist` bench copied
# to .gpu/dist-bench-old (both in .gpu/bundle.tgz):
#   PART=tests  the transpose's dist tests on 1, 2, 4 GPUs, memcheck of the 2-GPU test, the CLI's
#               `transpose --gpus N --check`, then the 2^30 bench twice in turn: new (chunks as
#               the rule says), c1 (new, one chunk), old; the realistic stencil and graph new /
#               old, and (RMAT=1) the SVD on R-MAT 2^24;
#   PART=overlap the dist tests (no memcheck), then the 2^30 bench with the exchange in 1 chunk, and
#               in 4 and 2 chunks with the gathers beside it on 16, 8 and 4 blocks a
#               multiprocessor; the realistic stencil and graph;
#   PART=big    the 4 × 10^9-nonzero transpose and SVD on four GPUs (fingerprint check).
set -u
O=${OUT:-.gpu/out}; mkdir -p "$O"
. benches/nccl-env.sh
nvidia-smi -L | tee "$O/gpus.txt"
G=$(nvidia-smi -L | wc -l)
if [ "${PART:-tests}" = tests ]; then
  SPTRANS_GPU_TEST_LOG="$O/dist-tests.log" SPTRANS_REQUIRE_GPUS=$G .gpu/dist-test --test-threads 1 2>&1 | tail -4
  cat "$O/dist-tests.log"
  compute-sanitizer --tool memcheck --report-api-errors no .gpu/dist-test dist_transpose_two_gpus --test-threads 1 2>&1 | tail -3
  .gpu/sptrans gen uniform 2000000 1500000 20000000 -o /tmp/u20.mtx 2>&1 | tail -1
  for n in $(seq 2 "$G"); do .gpu/sptrans transpose /tmp/u20.mtx -o /tmp/t$n.mtx --gpus "$n" --check 2>&1 | tail -1; done
  for i in 1 2; do
    for b in new c1 old; do
      exe=.gpu/dist-bench; [ $b = old ] && exe=.gpu/dist-bench-old
      c=; [ $b = c1 ] && c=1
      echo "== 2^30 $b run $i"
      SPTRANS_DIST_CHUNKS=$c SPTRANS_DIST_MIN_GPUS=2 SPTRANS_DIST_NNZ=1073741824 SPTRANS_DIST_CSV="$O/u30-$b-$i.csv" $exe 2>&1 | tee "$O/u30-$b-$i.txt" | grep -v "^matrix"
    done
  done
  .gpu/sptrans gen stencil 100 --order random --seed 2 -o /tmp/stencil.mtx 2>&1 | tail -1 &
  .gpu/sptrans gen graph 2000000 8 1000 --seed 3 -o /tmp/graph.mtx 2>&1 | tail -1 &
  wait
  for m in stencil graph; do
    for n in $(seq 2 "$G"); do .gpu/sptrans transpose /tmp/$m.mtx -o /tmp/t.mtx --gpus "$n" --check 2>&1 | head -1; done
    for b in new old; do
      exe=.gpu/dist-bench; [ $b = old ] && exe=.gpu/dist-bench-old
      echo "== $m $b"
      SPTRANS_DIST_MTX=/tmp/$m.mtx SPTRANS_DIST_RUNS=10 SPTRANS_DIST_CSV="$O/$m-$b.csv" $exe 2>&1 | tee "$O/$m-$b.txt" | grep -v "^matrix"
    done
  done
  if [ -x .gpu/svd-dist-bench ] && [ "${RMAT:-0}" = 1 ]; then
    SPTRANS_SVD_KIND=rmat SPTRANS_SVD_SCALE=24 SPTRANS_SVD_EDGES=268435456 SPTRANS_DIST_CSV="$O/svd-rmat.csv" .gpu/svd-dist-bench 2>&1 | tee "$O/svd-rmat.txt" | tail -8
  fi
elif [ "${PART}" = overlap ]; then
  SPTRANS_GPU_TEST_LOG="$O/dist-tests.log" SPTRANS_REQUIRE_GPUS=$G .gpu/dist-test --test-threads 1 2>&1 | tail -3
  cat "$O/dist-tests.log"
  for v in 1:16 4:16 4:8 4:4 2:4 8:4; do
    echo "== 2^30 chunks:blocks-per-SM $v"
    SPTRANS_DIST_CHUNKS=${v%:*} SPTRANS_DIST_OVERLAP_PER_SM=${v#*:} SPTRANS_DIST_MIN_GPUS=2 SPTRANS_DIST_NNZ=1073741824 .gpu/dist-bench 2>&1 | grep -v "^matrix\|^wrote\|^copy\|^gpus"
  done
  .gpu/sptrans gen stencil 100 --order random --seed 2 -o /tmp/stencil.mtx 2>&1 | tail -1 &
  .gpu/sptrans gen graph 2000000 8 1000 --seed 3 -o /tmp/graph.mtx 2>&1 | tail -1 &
  wait
  for m in stencil graph; do
    echo "== $m"
    SPTRANS_DIST_MTX=/tmp/$m.mtx SPTRANS_DIST_RUNS=10 .gpu/dist-bench 2>&1 | grep -v "^matrix\|^wrote\|^copy"
  done
else
  ( while sleep 2; do nvidia-smi --query-gpu=index,memory.used --format=csv,noheader >> "$O/mem.log"; done ) &
  mon=$!
  SPTRANS_DIST_CHECK=1 SPTRANS_DIST_MIN_GPUS=4 SPTRANS_DIST_NNZ=4000000000 SPTRANS_DIST_RUNS=3 SPTRANS_DIST_CSV="$O/t4b.csv" .gpu/dist-bench 2>&1 | tee "$O/t4b.txt" | tail -6
  if [ -x .gpu/svd-dist-bench ]; then
    SPTRANS_SVD_DOCS=125000000 SPTRANS_DIST_MIN_GPUS=4 SPTRANS_DIST_CSV="$O/svd4b.csv" .gpu/svd-dist-bench 2>&1 | tee "$O/svd4b.txt" | tail -6
  fi
  kill $mon
  sort -t, -k2 -n "$O/mem.log" | tail -4
fi
