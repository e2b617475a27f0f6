#!/usr/bin/env bash
# The realistic suite (issue 37; also issue 40's realistic transposes): generated on the GPU host
# by `sptrans gen` (stencils in three numberings, an unstructured mesh in two, a community graph,
# a circuit, text, an LP staircase, a KKT system, a variable band; 8–27M nonzeros each), then
# `sptrans spmv-bench` (every format against cuSPARSE, f64) and `sptrans bench` (transposers
# against cuSPARSE csr2cscEx2, f32) over them.
# Here: `cargo build --release -p sptrans-cli && mkdir -p .gpu && cp target/release/sptrans .gpu/`;
# there: `bash benches/realistic-device-run.sh` (tables and CSV in $OUT). Knobs: S (the CLI,
# default .gpu/sptrans), PARTS (spmv,transpose), ALGOS (the transposers, default
# radix,auto,cusparse), FORMATS (the SpMV formats, default spmv-bench's), PRECISION (SpMV values,
# default f64), RUNS (SpMV suite runs, files -2, -3, ... after the first), REPS,
# REALISTIC_EXT=npz (binary files: faster to write and read).
set -u
S=${S:-.gpu/sptrans}; M=${REALISTIC_MATRICES:-/tmp/realistic}; O=${OUT:-.gpu/out}; mkdir -p "$M" "$O"
PARTS=${PARTS:-spmv,transpose}
. benches/realistic-suite-gen.sh
ls "$M" > "$M/list.txt"; sed -i '/list.txt/d' "$M/list.txt"
if [[ ,$PARTS, == *,spmv,* ]]; then
  for i in $(seq 1 "${RUNS:-1}"); do
    s=$([ "$i" = 1 ] && echo "" || echo "-$i")
    $S spmv-bench --suite "$M" ${FORMATS:+--formats $FORMATS} --precision ${PRECISION:-f64} --reps ${REPS:-20} --quiet --csv "$O/realistic-spmv$s.csv" > "$O/realistic-spmv$s.md" 2> "$O/realistic-spmv$s.err"
    tail -5 "$O/realistic-spmv$s.err"; cat "$O/realistic-spmv$s.md"
  done
fi
if [[ ,$PARTS, == *,transpose,* ]]; then
  $S bench --suite "$M" --algos ${ALGOS:-radix,auto,cusparse} --reps ${REPS:-10} --quiet --csv "$O/realistic-transpose.csv" > "$O/realistic-transpose.md" 2> "$O/realistic-transpose.err"
  tail -5 "$O/realistic-transpose.err"; cat "$O/realistic-transpose.md"
fi
