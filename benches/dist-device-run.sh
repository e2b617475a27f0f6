#!/usr/bin/env bash
# The distributed transpose (issue 39) on a multi-GPU machine: its tests (against the serial
# twin, bit for bit, on 1, 2 and 4 GPUs as present), compute-sanitizer memcheck of the 2-GPU
# test, then the scaling bench (1, 2, 4 GPUs against the one-GPU transpose and NCCL's own
# all-to-all). NCCL comes from PyTorch's wheel (libnccl.so.2), linked as libnccl.so, the name
# cudarc's loader asks for.
# Here: cargo test --release -p gpu-transpose --test dist --no-run and cargo bench -p
# gpu-transpose --bench dist --no-run, their binaries copied to .gpu/dist-test and .gpu/dist-bench;
# (and the CLI, `.gpu/sptrans`, for `transpose --gpus N --check`; the SpMV binaries: last section);
# there: `bash benches/dist-device-run.sh` (NNZ=... sets the bench's nonzeros; output in $OUT).
set -u
O=${OUT:-.gpu/out}; mkdir -p "$O"
. benches/nccl-env.sh
echo "NCCL: $lib/libnccl.so.2"; nvidia-smi -L
G=$(nvidia-smi -L | wc -l)
SPTRANS_GPU_TEST_LOG="$O/dist-tests.log" SPTRANS_REQUIRE_GPUS=$G .gpu/dist-test --test-threads 1 2>&1 | tail -15
cat "$O/dist-tests.log"
if [ "${SANITIZE:-1}" = 1 ]; then
  compute-sanitizer --tool memcheck --report-api-errors no .gpu/dist-test dist_transpose_two_gpus --test-threads 1 2>&1 | tail -4
fi
if [ -x .gpu/sptrans ]; then
  .gpu/sptrans gen uniform 2000000 1500000 20000000 -o /tmp/u20.mtx 2>&1 | tail -1
  for n in $(seq 2 "$G"); do .gpu/sptrans transpose /tmp/u20.mtx -o /tmp/t$n.mtx --gpus "$n" --check 2>&1 | tail -2; done
fi
if [ "${BIG:-1}" = 1 ]; then
  SPTRANS_DIST_NNZ=${NNZ:-1073741824} SPTRANS_DIST_CSV="$O/dist.csv" .gpu/dist-bench 2>&1 | tee "$O/dist.txt"
fi
# REALISTIC=1: a 27-point stencil in random numbering and a community graph (the realistic
# suite's generators), checked through the CLI and timed by the bench.
if [ "${REALISTIC:-0}" = 1 ] && [ -x .gpu/sptrans ]; then
  .gpu/sptrans gen stencil 100 --order random --seed 2 -o /tmp/stencil.mtx 2>&1 | tail -1 &
  .gpu/sptrans gen graph 2000000 8 1000 --seed 3 -o /tmp/graph.mtx 2>&1 | tail -1 &
  wait
  for m in stencil graph; do
    for n in $(seq 2 "$G"); do .gpu/sptrans transpose /tmp/$m.mtx -o /tmp/t.mtx --gpus "$n" --check 2>&1 | head -1; done
    SPTRANS_DIST_MTX=/tmp/$m.mtx SPTRANS_DIST_RUNS=10 SPTRANS_DIST_CSV="$O/dist-$m.csv" .gpu/dist-bench 2>&1 | tee "$O/dist-$m.txt"
  done
fi
# The distributed SpMV (when staged: `cargo test --release -p gpu-spmv --test dist --no-run` and
# `cargo bench -p gpu-spmv --bench dist --no-run` copied to .gpu/spmv-dist-test and
# .gpu/spmv-dist-bench): its tests, memcheck of the 2-GPU test, and the scaling tables of
# RESULTS.md (SPMV_BIG=0 skips the billion-nonzero matrices).
if [ -x .gpu/spmv-dist-test ]; then
  SPTRANS_GPU_TEST_LOG="$O/spmv-dist-tests.log" SPTRANS_REQUIRE_GPUS=$G .gpu/spmv-dist-test --test-threads 1 2>&1 | tail -3
  cat "$O/spmv-dist-tests.log"
  if [ "${SANITIZE:-1}" = 1 ]; then
    compute-sanitizer --tool memcheck --report-api-errors no .gpu/spmv-dist-test dist_spmv_two_gpus --test-threads 1 2>&1 | tail -2
  fi
fi
if [ -x .gpu/spmv-dist-bench ] && [ "${SPMV_BIG:-1}" = 1 ]; then
  SPTRANS_DIST_KIND=stencil SPTRANS_DIST_K=350 SPTRANS_DIST_RUNS=10 SPTRANS_DIST_CSV="$O/spmv-st350.csv" .gpu/spmv-dist-bench 2>&1 | tee "$O/spmv-st350.txt"
  SPTRANS_DIST_NNZ=1073741824 SPTRANS_DIST_RUNS=10 SPTRANS_DIST_CSV="$O/spmv-u30.csv" .gpu/spmv-dist-bench 2>&1 | tee "$O/spmv-u30.txt"
fi
# The distributed SVD (when staged: `cargo test --release -p gpu-svd --test dist --no-run` and
# `cargo bench -p gpu-svd --bench dist --no-run` copied to .gpu/svd-dist-test and
# .gpu/svd-dist-bench): its tests, memcheck of the 2-GPU test on small cases, the CLI's
# `svd --gpus`, and the scaling table (SVD_DOCS rows of the bag-of-words matrix; SVD_BIG=0 skips).
if [ -x .gpu/svd-dist-test ]; then
  SPTRANS_GPU_TEST_LOG="$O/svd-dist-tests.log" SPTRANS_REQUIRE_GPUS=$G .gpu/svd-dist-test --test-threads 1 2>&1 | tail -3
  cat "$O/svd-dist-tests.log"
  if [ "${SANITIZE:-1}" = 1 ]; then
    SPTRANS_TEST_MAX_LEN=600 compute-sanitizer --tool memcheck --report-api-errors no .gpu/svd-dist-test dist_svd_two_gpus --test-threads 1 2>&1 | tail -2
  fi
  if [ -x .gpu/sptrans ]; then
    .gpu/sptrans gen text 200000 20000 30 --seed 4 -o /tmp/text.mtx 2>&1 | tail -1
    for n in 1 "$G"; do .gpu/sptrans svd /tmp/text.mtx -k 8 --gpus "$n" -o /tmp/sv$n.txt 2>&1 | tail -1; done
    paste /tmp/sv1.txt "/tmp/sv$G.txt" | awk '{d=$1-$2; if (d<0) d=-d; if (d>m) m=d} END {print "CLI svd: largest |σ(1 GPU) - σ('"$G"' GPUs)| =", m}'
    # One process per GPU under torchrun (the NCCL id over TCP at MASTER_PORT + 1).
    python3 -m torch.distributed.run --nproc-per-node "$G" --no-python .gpu/sptrans svd /tmp/text.mtx -k 8 -o /tmp/svmp.txt 2>&1 | tail -2
    paste /tmp/sv1.txt /tmp/svmp.txt | awk '{d=$1-$2; if (d<0) d=-d; if (d>m) m=d} END {print "CLI svd under torchrun: largest |σ(1 GPU) - σ('"$G"' processes)| =", m}'
  fi
fi
if [ -x .gpu/svd-dist-bench ] && [ "${SVD_BIG:-1}" = 1 ]; then
  SPTRANS_SVD_DOCS=${SVD_DOCS:-33554432} SPTRANS_DIST_CSV="$O/svd-dist.csv" .gpu/svd-dist-bench 2>&1 | tee "$O/svd-dist.txt"
fi
