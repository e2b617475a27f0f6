#!/usr/bin/env bash
# On the GPU host: the C++ reproducer (cusparse_spmv_memcheck.cu) with several host threads, a
# cuSPARSE handle per matrix, one shared stream or one each (SHARED), under memcheck (`t`) or
# with guard values after y and no memcheck (`n`). One mode per group of runs in
# benches/experiments/2026-11-27-cusparse-spmv-memcheck.md:
#   threads  4 threads under memcheck, shared stream and a stream each; one thread
#   locks    a lock around bufferSize and SpMV (LOCK=1) under memcheck, shared and own streams
#   guard    guard values without memcheck; memcheck without the pool, with 32 rows only
#   glocks   guard values by lock: none, LOCK=1, 2 (the handle's whole life), 3, 5 (every call);
#            PyTorch's wheel's libcusparse (LD_LIBRARY_PATH)
#   sizes    guard values by the sizes mixed (ROWS=a,b)
#   algs     CSR ALG2 against ALG1
# Usage there: bash benches/repro/cusparse-threads-device-run.sh MODE... (RUNS sets repeats).
# Results under $OUT/repro (summary.txt; logs kept where memcheck found something).
set -u
R=$OUT/repro; mkdir -p "$R"
nvcc -O2 -std=c++17 -o /tmp/repro benches/repro/cusparse_spmv_memcheck.cu -lcusparse -lpthread > "$R/nvcc.log" 2>&1 || echo "nvcc failed" >> "$R/summary.txt"
ldd /tmp/repro | grep -i cusparse >> "$R/summary.txt"
t() { local n=$1; shift; env "$@" timeout 200 compute-sanitizer --tool memcheck /tmp/repro > "$R/$n.log" 2>&1; echo "$n ($*): rc $? $(grep -cE 'Invalid' $R/$n.log) invalid; $(grep -E 'ERROR SUMMARY|threads' $R/$n.log | tr '\n' ' ')" >> "$R/summary.txt"; grep -q Invalid "$R/$n.log" || rm -f "$R/$n.log"; }
n() { local n=$1; shift; env "$@" timeout 200 /tmp/repro > "$R/$n.log" 2>&1; echo "$n ($*): rc $? $(grep -E 'threads|past y|wrong rows' $R/$n.log | sed 's/byte [0-9]* past/past/' | sort | uniq -c | head -6 | tr '\n' ' ')" >> "$R/summary.txt"; }
G="THREADS=8 ITERS=3000 GUARD=1"
wheel=$(python3 -c "import nvidia.cusparse, os; print(os.path.join(list(nvidia.cusparse.__path__)[0], 'lib'))" 2>/dev/null || true)
[ -n "$wheel" ] || wheel=$(dirname "$(find /usr /opt /root /home -name 'libcusparse.so.12*' -path '*-packages*' 2>/dev/null | head -1)" 2>/dev/null)
for mode in "$@"; do
  case $mode in
    threads)
      for i in 1 2 3; do t shared4-$i THREADS=4 ITERS=150 SHARED=1; done
      for i in 1 2; do t own4-$i THREADS=4 ITERS=150 SHARED=0; done
      t single-1 THREADS=1 ITERS=600 SHARED=1 ;;
    locks)
      for i in $(seq 1 ${RUNS:-5}); do t shared4-$i THREADS=4 ITERS=150 SHARED=1 LOCK=0; done
      for i in $(seq 1 ${RUNS:-10}); do t locked4-$i THREADS=4 ITERS=150 SHARED=1 LOCK=1; done
      for i in $(seq 1 ${RUNS:-4}); do t locked4own-$i THREADS=4 ITERS=150 SHARED=0 LOCK=1; done ;;
    guard)
      n guard-own $G SHARED=0; n guard-shared $G SHARED=1; n guard-own-32 $G SHARED=0 MIX=0
      for i in $(seq 1 ${RUNS:-6}); do t nopool-$i THREADS=4 ITERS=150 SHARED=0 POOL=0; done
      for i in $(seq 1 ${RUNS:-6}); do t only32-$i THREADS=4 ITERS=150 SHARED=0 MIX=0; done
      for i in $(seq 1 ${RUNS:-6}); do t pool-$i THREADS=4 ITERS=150 SHARED=0; done ;;
    glocks)
      for k in 1 2; do
        for lock in 0 1 2 3 5; do n own-lock$lock-$k $G SHARED=0 LOCK=$lock; n shared-lock$lock-$k $G SHARED=1 LOCK=$lock; done
        [ -n "$wheel" ] && [ "$wheel" != . ] && n wheel-own-$k $G SHARED=0 LD_LIBRARY_PATH=$wheel
      done ;;
    sizes)
      for rows in 32,300 64,300 100,300 128,1000 300,3000 300,32 32,4096; do n r$rows $G SHARED=0 ROWS=$rows; done
      n r1024-65536 THREADS=8 ITERS=400 GUARD=1 SHARED=0 ROWS=1024,65536
      n r4096-200000 THREADS=8 ITERS=150 GUARD=1 SHARED=0 ROWS=4096,200000 ;;
    algs)
      for k in 1 2; do for alg in 1 2; do n alg$alg-r32-300-$k $G SHARED=0 ROWS=32,300 ALG=$alg; n alg$alg-r64-300-$k $G SHARED=0 ROWS=64,300 ALG=$alg; done; done ;;
    *) echo "unknown mode $mode (threads, locks, guard, glocks, sizes, algs)" >> "$R/summary.txt" ;;
  esac
done
cat "$R/summary.txt"
tar czf "$OUT/repro.tgz" -C "$OUT" repro
