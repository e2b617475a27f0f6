#!/usr/bin/env bash
# Session 20 on the GPU host: memcheck of the spmv tests in parallel threads (the cuSPARSE
# mitigation; GPU 0), then the distributed transpose (benches/dist-device-run.sh: tests,
# memcheck of the 2-GPU test, the CLI's --check, the 2^30 bench). Output tarred into $OUT.
set -u
O=$OUT/s20; mkdir -p "$O"
if [ "${SPMV:-1}" = 1 ] && [ -x .gpu/spmv-test ]; then
  for i in $(seq 1 ${PAR:-4}); do
    SPTRANS_REQUIRE_GPU=1 SPTRANS_TEST_MAX_LEN=100000 timeout 300 compute-sanitizer --tool memcheck --report-api-errors no .gpu/spmv-test > "$O/spmv-par-$i.log" 2>&1
    echo "spmv memcheck par-$i: rc $? $(grep -E 'ERROR SUMMARY' $O/spmv-par-$i.log) $(grep -E '^test result' $O/spmv-par-$i.log)" | tee -a "$O/summary.txt"
  done
fi
OUT=$O bash benches/dist-device-run.sh > "$O/dist-run.txt" 2>&1
tail -40 "$O/dist-run.txt"
tar czf "$OUT/s20.tgz" -C "$OUT" s20
