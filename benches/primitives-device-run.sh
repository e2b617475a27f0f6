#!/usr/bin/env bash
# The primitives table of RESULTS.md: stage the bench executables (`cargo bench -p gpu-scan -p gpu-histogram -p gpu-ptr2idx -p gpu-segsort -p gpu-segmerge -p gpu-radix --no-run`, executables copied to .gpu/benches/ by target name), carry .gpu, run `bash benches/primitives-device-run.sh` on the GPU host (outputs in $OUT).
set -u
O=${OUT:-.gpu/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
for b in scan histogram ptr2idx segmerge segsort sort_pairs radix; do
  timeout 100 .gpu/benches/$b --bench --noplot --warm-up-time 0.5 --measurement-time 1.5 > $O/$b.txt 2>&1; echo "$b rc=$?"
done
cd benches/peers
for p in scan_cub.py sort_cub.py histogram_cupy.py; do timeout 90 python3 $p > $O/peer-$p.txt 2>&1; echo "$p rc=$?"; done
