#!/usr/bin/env bash
# On the GPU host: the C reproducer's guard mode (no memcheck): 8 host threads, 3000 matrices
# each, f32 and f64, values past y checked after each product; by lock mode and stream sharing,
# with the system's libcusparse and with PyTorch's wheel's. Results under $OUT/repro.
set -u
R=$OUT/repro; mkdir -p "$R"
nvcc -O2 -std=c++17 -o /tmp/repro benches/repro/cusparse_spmv_memcheck.cu -lcusparse -lpthread > "$R/nvcc.log" 2>&1 || echo "nvcc failed" >> "$R/summary.txt"
n() { local n=$1; shift; env "$@" timeout 200 /tmp/repro > "$R/$n.log" 2>&1; echo "$n ($*): rc $? $(grep -E 'threads|past y|wrong rows' $R/$n.log | sed 's/byte [0-9]* past/past/' | sort | uniq -c | head -6 | tr '\n' ' ')" >> "$R/summary.txt"; }
ldd /tmp/repro | grep -i cusparse >> "$R/summary.txt"
for k in 1 2; do
  n alg2-r32-300-$k THREADS=8 ITERS=3000 SHARED=0 GUARD=1 ROWS=32,300 ALG=2
  n alg2-r64-300-$k THREADS=8 ITERS=3000 SHARED=0 GUARD=1 ROWS=64,300 ALG=2
  n alg1-r32-300-$k THREADS=8 ITERS=3000 SHARED=0 GUARD=1 ROWS=32,300 ALG=1
done
n alg1-r32-4096 THREADS=8 ITERS=2000 SHARED=0 GUARD=1 ROWS=32,4096 ALG=1
n alg1-r100-300 THREADS=8 ITERS=3000 SHARED=0 GUARD=1 ROWS=100,300 ALG=1
W=$(python3 -c "import nvidia.cusparse, os; print(os.path.join(list(nvidia.cusparse.__path__)[0], 'lib'))" 2>/dev/null || true); [ -n "$W" ] || W=$(dirname "$(find /usr /opt /root /home -name 'libcusparse.so.12*' -path '*-packages*' 2>/dev/null | head -1)" 2>/dev/null); [ "$W" = . ] && W=
echo "wheel cusparse: $W $(ls $W 2>/dev/null | tr '\n' ' ') $(pip list 2>/dev/null | grep -i cusparse | tr '\n' ' ')" >> "$R/summary.txt"
if [ -n "$W" ] && [ "${WHEEL:-0}" = 1 ]; then
  for k in 1 2; do n wheel-own-$k THREADS=8 ITERS=3000 SHARED=0 GUARD=1 LD_LIBRARY_PATH=$W; done
  LD_LIBRARY_PATH=$W ldd /tmp/repro | grep -i cusparse >> "$R/summary.txt"
fi
cat "$R/summary.txt"
tar czf "$OUT/repro.tgz" -C "$OUT" repro
