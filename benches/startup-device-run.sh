#!/usr/bin/env bash
# The device run behind RESULTS.md's "Startup" table (issue 35). On the GPU host, after
#   ../shared/tools/gpu-stage -p gpu-runtime -p sptrans; cp target/release/sptrans .gpu/
#   cp <the sptrans binary of the commit to compare with> .gpu/sptrans-head
# run: bash benches/startup-device-run.sh   (output in $OUT or .gpu/out)
# 1. the image tests (every module from its cubin, and from the PTX, same results) and the CLI tests;
# 2. each command's first call in fresh processes, JIT cache disabled and warm, both binaries;
# 3. kernel speed from the cubins against the driver's JIT of the PTX: sptrans bench and
#    spmv-bench of both binaries, alternating, twice.
set -u
# Everything goes to one folder, packed into $OUT/startup-results.tgz at the end (a device call
# brings back at most 8 files).
O=/tmp/startup-out; mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/device.txt"
for t in .gpu/tests/selftest-* .gpu/tests/images-* .gpu/tests/cli-* .gpu/tests/driving-*; do
  SPTRANS_REQUIRE_GPU=1 SPTRANS_BIN=$PWD/.gpu/sptrans $t --test-threads=4 > "$O/tests-$(basename "$t").txt" 2>&1
  echo "$(basename "$t"): $(grep 'test result' "$O/tests-$(basename "$t").txt" | tail -1)"
done
python3 benches/startup.py --bin before=.gpu/sptrans-head --bin after=.gpu/sptrans --reps 3 --work /tmp/startup --csv "$O/startup.csv" > "$O/startup.md" 2> "$O/startup.log"
.gpu/sptrans info > "$O/info.txt" 2>&1
for i in 1 2; do
  for b in sptrans-head sptrans; do
    timeout 200 .gpu/$b bench --algos radix,cusparse --reps 10 --quiet --csv "$O/bench-$b-$i.csv" > "$O/bench-$b-$i.md" 2>&1
    timeout 120 .gpu/$b spmv-bench --formats auto,csr-vector,coo,cusparse-csr-alg1 --precision f64 --quiet --csv "$O/spmv-$b-$i.csv" > "$O/spmv-$b-$i.md" 2>&1
  done
done
cat "$O/startup.md"
mkdir -p "${OUT:-.gpu/out}"; tar czf "${OUT:-.gpu/out}/startup-results.tgz" -C "$O" .
