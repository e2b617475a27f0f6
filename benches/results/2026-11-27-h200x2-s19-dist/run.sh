#!/usr/bin/env bash
# Session 19: the dist paths after the typed launches, on 2 GPUs: tests (transpose, SpMV, SVD),
# memcheck of the 2-GPU tests, CLI checks, and the 2^30 transpose scaling bench.
cd "$(dirname "$0")/.."
tar xJf .gpu/d2.txz -C .gpu && cp .gpu/d2/* .gpu/
O=${OUT:-.gpu/out}; mkdir -p "$O"
SANITIZE=1 BIG=1 SPMV_BIG=0 SVD_BIG=0 bash benches/dist-device-run.sh 2>&1 | tee "$O/d2.txt" | tail -60
