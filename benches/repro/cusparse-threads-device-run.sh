#!/usr/bin/env bash
# On the GPU host: the C reproducer with several host threads (a cuSPARSE handle per matrix, one
# shared stream or one each) under memcheck. Results under $OUT/repro.
set -u
R=$OUT/repro; mkdir -p "$R"
nvcc -O2 -std=c++17 -o /tmp/repro benches/repro/cusparse_spmv_memcheck.cu -lcusparse -lpthread > "$R/nvcc.log" 2>&1 || echo "nvcc failed" >> "$R/summary.txt"
t() { local n=$1; shift; env "$@" timeout 200 compute-sanitizer --tool memcheck /tmp/repro > "$R/$n.log" 2>&1; echo "$n ($*): rc $? $(grep -cE 'Invalid' $R/$n.log) invalid; $(grep -E 'ERROR SUMMARY|threads' $R/$n.log | tr '\n' ' ')" >> "$R/summary.txt"; }
# Without memcheck: does cuSPARSE write past y? (guard values after it)
n() { local n=$1; shift; env "$@" timeout 200 /tmp/repro > "$R/$n.log" 2>&1; echo "$n ($*): rc $? $(grep -E 'threads|past y' $R/$n.log | sort | uniq -c | head -5 | tr '\n' ' ')" >> "$R/summary.txt"; }
n guard-own THREADS=8 ITERS=3000 SHARED=0 GUARD=1
n guard-shared THREADS=8 ITERS=3000 SHARED=1 GUARD=1
n guard-own-32 THREADS=8 ITERS=3000 SHARED=0 GUARD=1 MIX=0
# Under memcheck: without the pool (cudaMalloc), and with 32-row matrices only.
for i in $(seq 1 ${RUNS:-5}); do t nopool-$i THREADS=4 ITERS=150 SHARED=0 POOL=0; done
for i in $(seq 1 ${RUNS:-5}); do t only32-$i THREADS=4 ITERS=150 SHARED=0 MIX=0; done
for i in $(seq 1 ${RUNS:-5}); do t pool-$i THREADS=4 ITERS=150 SHARED=0; done
cat "$R/summary.txt"
for f in "$R"/*.log; do grep -q Invalid "$f" || rm -f "$f"; done
tar czf "$OUT/repro.tgz" -C "$OUT" repro
