#!/usr/bin/env bash
# Session 19, second round: every test of the crates whose launches moved, memcheck, benches.
set -u
cd "$(dirname "$0")/.."
[ -d .gpu/sel ] || tar xJf .gpu/sel.txz -C .gpu
mode=${1:-tests}
O=/tmp/s19b-$mode; mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/device.txt"
export SPTRANS_REQUIRE_GPU=1 SPTRANS_BIN=$PWD/.gpu/sel/sptrans
if [ "$mode" = tests ]; then
  for t in .gpu/sel/*--*; do
    n=$(basename "$t")
    case $n in csrc--csrc) lim=SPTRANS_TEST_MAX_LEN=200000 ;; *) lim=X=1 ;; esac
    env $lim timeout 200 "$t" > "$O/test-$n.log" 2>&1; rc=$?
    echo "$n rc=$rc $(grep -E '^test result' "$O/test-$n.log" | tail -1)" | tee -a "$O/summary.txt"
  done
fi
if [ "$mode" = sanitize ]; then
  export SPTRANS_TEST_MAX_LEN=100000
  for n in histogram--histogram ptr2idx--ptr2idx scan--scan segmerge--segmerge segsort--segsort radix--radix csrc--csrc spmv--spmv svd--svd transpose--transpose transpose--index64 transpose--dist; do
    timeout 120 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 .gpu/sel/$n > "$O/memcheck-$n.log" 2>&1; rc=$?
    echo "memcheck $n rc=$rc $(grep -E 'ERROR SUMMARY' "$O/memcheck-$n.log" | tail -1) $(grep -E '^test result' "$O/memcheck-$n.log" | tail -1)" | tee -a "$O/summary.txt"
  done
fi
if [ "$mode" = bench ]; then
  for i in 1 2; do
    for b in sptrans-old sptrans; do
      timeout 100 .gpu/sel/$b bench --algos radix,scan,merge,coo,auto,cusparse --reps 10 --quiet --csv "$O/bench-$b-$i.csv" > "$O/bench-$b-$i.md" 2> "$O/bench-$b-$i.err"
      echo "bench $b round $i: rc $?" | tee -a "$O/summary.txt"
      timeout 130 .gpu/sel/$b spmv-bench --precision f64 --reps 30 --quiet --csv "$O/spmv-$b-$i.csv" > "$O/spmv-$b-$i.md" 2> "$O/spmv-$b-$i.err"
      echo "spmv-bench $b round $i: rc $?" | tee -a "$O/summary.txt"
    done
  done
fi
mkdir -p "${OUT:-.gpu/out}"; tar czf "${OUT:-.gpu/out}/s19b-$mode.tgz" -C "$O" .
cat "$O/summary.txt"
