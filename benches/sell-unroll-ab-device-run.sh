#!/usr/bin/env bash
# Session 22, one GPU: main's spmv tests (SELL-VI's one-launch apply and padding by the twin,
# ab03160, first run on a GPU) and branch wip/sell-unroll's (four SELL slots a turn), then the
# realistic suite in f64 with SELL-C-σ, SELL-VI and cuSPARSE, main / branch / main / branch.
# Here: the `spmv` test binary and CLI of main before the merge (05ebbc0) and of the branch
# (16e71bc, now merged) in .gpu/{spmv-test,sptrans}-{main,unroll}.
set -u
O=${OUT:-.gpu/out}; mkdir -p "$O"
nvidia-smi -L
for b in main unroll; do
  echo "== tests $b"; SPTRANS_REQUIRE_GPU=1 .gpu/spmv-test-$b --test-threads=2 > "$O/spmv-test-$b.txt" 2>&1; tail -3 "$O/spmv-test-$b.txt"
done
S=.gpu/sptrans-main; M=/tmp/realistic; mkdir -p "$M"
. benches/realistic-suite-gen.sh
for i in 1 2; do
  for b in main unroll; do
    echo "== suite $b run $i"
    .gpu/sptrans-$b spmv-bench --suite "$M" --formats sell,sell-vi,cusparse-csr-alg1 --precision f64 --reps 20 --quiet --csv "$O/suite-$b-$i.csv" 2>/dev/null
  done
done
